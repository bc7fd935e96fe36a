//! ACL and the engine side of users: ACL's subcommands, authenticating a connection,
//! checking a command against its user's rules and logging refusals, loading the users
//! of the config file and the ACL file at start-up.

use std::sync::Arc;

use crate::acl::{self, rules, Denial, LogEntry, RuleError, Selector, User, UserRules};
use crate::command::{ArgDoc, ArgType, CommandSpec, CommandTable, Resolved, ACL_CATEGORY_NAMES};
use crate::config::Config;
use crate::error::{CmdError, CmdResult};
use crate::exec::{Client, Ctx};
use crate::reply::ReplySink;
use crate::Engine;

use super::{is, parse_i64};

/// Where a refusal happened, as ACL LOG's `context` names it.
pub mod context {
    pub const TOPLEVEL: &str = "toplevel";
    pub const MULTI: &str = "multi";
    pub const LUA: &str = "lua";
}

impl Engine {
    /// Whether `acl-pubsub-default` gives new users every channel.
    pub(crate) fn all_channels_by_default(&self) -> bool {
        self.config.read().get("acl-pubsub-default") == Some("allchannels")
    }

    /// Checks a command against the client's user. The caller knows the user is not
    /// unrestricted (the fast path). A deleted user's connection is closing: it runs
    /// nothing more (Redis frees it before its next command).
    pub(crate) fn acl_check(&self, client: &mut Client, spec: &CommandSpec, args: &[&[u8]]) -> Result<(), Denial> {
        if client.user.is_removed() {
            self.set_user(client, self.acl.default_user.clone(), false);
            client.close_after_reply = true;
            return Err(Denial::Command);
        }
        acl::check(&client.user.rules(), spec, args)
    }

    /// Records a refused command in the ACL log.
    pub(crate) fn acl_log_denial(
        &self,
        client: &Client,
        spec: &CommandSpec,
        args: &[&[u8]],
        denial: Denial,
        context: &'static str,
    ) {
        let object = match denial {
            Denial::Command => spec.name.as_bytes().to_vec(),
            Denial::Key(p) | Denial::Channel(p) => args[p].to_vec(),
        };
        self.acl_log(client, denial.reason(), context, object, client.user.name.clone());
    }

    pub(crate) fn acl_log(
        &self,
        client: &Client,
        reason: &'static str,
        context: &'static str,
        object: Vec<u8>,
        username: Vec<u8>,
    ) {
        let now = self.clock.now_ms();
        let client_info = super::client::client_info_line(self, now, &client.handle, None);
        let entry = LogEntry { count: 1, reason, context, object, username, ctime_ms: now, client_info };
        let max_len = self.config.read().get_int("acllog-max-len").max(0) as usize;
        self.acl.log(entry, max_len);
    }

    /// The connection runs as `user` from now on.
    pub(crate) fn set_user(&self, client: &mut Client, user: Arc<User>, authenticated: bool) {
        *client.handle.user.lock() = Some(user.clone());
        client.user = user;
        client.authenticated = authenticated;
    }

    /// AUTH and HELLO AUTH: authenticates the connection, or logs the failure.
    pub(crate) fn authenticate(&self, client: &mut Client, command: &[u8], name: &[u8], password: &[u8]) -> bool {
        match self.acl.authenticate(name, password) {
            Some(user) => {
                self.set_user(client, user, true);
                true
            }
            None => {
                let context = if client.multi.is_some() { context::MULTI } else { context::TOPLEVEL };
                self.acl_log(client, "auth", context, command.to_vec(), name.to_vec());
                false
            }
        }
    }

    /// Closes the connections of deleted users (the current one after its reply).
    fn close_connections_of(&self, me: &mut Client, users: &[Arc<User>]) {
        if users.is_empty() {
            return;
        }
        for handle in self.clients.all() {
            let belongs = handle.user.lock().as_ref().is_some_and(|u| users.iter().any(|d| Arc::ptr_eq(u, d)));
            if !belongs {
                continue;
            }
            if handle.id == me.id {
                me.close_after_reply = true;
            } else {
                handle.kill();
            }
        }
        if users.iter().any(|u| Arc::ptr_eq(u, &me.user)) {
            self.set_user(me, self.acl.default_user.clone(), false);
            me.close_after_reply = true;
        }
    }

    /// Closes subscribers of `user` subscribed to a channel the new rules no longer allow
    /// (Redis's ACLKillPubsubClientsIfNeeded).
    fn close_subscribers_without_permission(&self, me: &mut Client, user: &Arc<User>, old: &UserRules) {
        let new = user.rules().clone();
        if !acl::channels_narrowed(old, &new) {
            return;
        }
        let allowed = acl::all_channel_patterns(&new);
        for handle in self.clients.all() {
            let mine = handle.user.lock().as_ref().is_some_and(|u| Arc::ptr_eq(u, user));
            if !mine || !handle.has_flag(crate::clients::flag::PUBSUB) {
                continue;
            }
            let lost = {
                let subs = handle.pubsub.lock();
                subs.patterns.iter().any(|p| !rules::channel_in_list(&allowed, p, true))
                    || subs
                        .channels
                        .iter()
                        .chain(subs.shard.iter())
                        .any(|c| !rules::channel_in_list(&allowed, c, false))
            };
            if lost {
                if handle.id == me.id {
                    me.close_after_reply = true;
                } else {
                    handle.kill();
                }
            }
        }
    }
}

fn blank_selector(table: &CommandTable, all_channels: bool) -> impl Fn() -> Selector + '_ {
    move || Selector::new(false, all_channels, table)
}

/// Users of the config file (`user` lines) and then the ACL file (`aclfile`), at start-up
/// (Redis's ACLLoadUsersAtStartup). Err: Redis's log line; the server must not start.
pub fn load_users_at_startup(acl: &acl::Acl, table: &CommandTable, config: &Config) -> Result<(), String> {
    let aclfile = config.get("aclfile").unwrap_or("");
    let all_channels = config.get("acl-pubsub-default") == Some("allchannels");
    if !aclfile.is_empty() && !config.users.is_empty() {
        return Err("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is \
                    invalid. This setup is very likely to lead to configuration errors and security holes, please \
                    define either an ACL file or declare users directly in your redis.conf, but not both."
            .into());
    }
    let blank = blank_selector(table, all_channels);
    for words in &config.users {
        let name = &words[0];
        if rules::has_spaces(name) {
            return Err("Spaces not allowed in ACL usernames".into());
        }
        let mut user = match acl.user(name) {
            Some(existing) => {
                let mut r = existing.rules().clone();
                r.apply(b"reset", all_channels, Some(table), &blank).expect("reset");
                r
            }
            None => UserRules::new(all_channels, table),
        };
        for op in &words[1..] {
            user.apply(op, all_channels, Some(table), &blank).map_err(|e| {
                format!(
                    "Error loading ACL rule '{}' for the user named '{}': {}",
                    String::from_utf8_lossy(op),
                    String::from_utf8_lossy(name),
                    e.message()
                )
            })?;
        }
        acl.store(name, user);
    }
    if !aclfile.is_empty() {
        load_acl_file(acl, table, config, aclfile, all_channels)
            .map_err(|e| format!("Aborting Redis startup because of ACL errors: {e}"))?;
    }
    Ok(())
}

/// Where the ACL file is: a relative `aclfile` is in `dir`, as for Redis (which changes
/// into `dir`; quince does not).
fn resolve_in_dir(config: &Config, path: &str) -> std::path::PathBuf {
    let path = std::path::Path::new(path);
    match config.get("dir") {
        Some(dir) if path.is_relative() => std::path::Path::new(dir).join(path),
        _ => path.to_path_buf(),
    }
}

/// Loads the ACL file, replacing every user; returns the users replaced. Errors name the
/// file as configured.
fn load_acl_file(
    acl: &acl::Acl,
    table: &CommandTable,
    config: &Config,
    path: &str,
    all_channels: bool,
) -> Result<Vec<Arc<User>>, String> {
    let text = std::fs::read(resolve_in_dir(config, path))
        .map_err(|e| format!("Error loading ACLs, opening file '{path}': {}", crate::config::strerror(&e)))?;
    let mut users = acl::parse_acl_file(&text, path, table, all_channels)?;
    let default_rules = match users.remove(&b"default"[..]) {
        Some(rules) => rules,
        None => acl::Acl::new(table).default_user.rules().clone(),
    };
    Ok(acl.replace_all(users, default_rules))
}

/// The config file's `user <name> rules...` line (Redis's ACLAppendUserForLoading): the
/// rules' syntax is checked now, commands once the command table exists. Err: Redis's
/// "Error in user declaration" line.
pub fn check_user_directive(words: &[Vec<u8>], earlier: &[Vec<Vec<u8>>]) -> Result<Vec<Vec<u8>>, String> {
    // Redis reports the word at the failing rule's index counted from `user` itself.
    let argv = |j: usize| -> String {
        if j == 0 {
            "user".into()
        } else {
            String::from_utf8_lossy(&words[j - 1]).into_owned()
        }
    };
    let fail = |j: usize, e: RuleError| format!("Error in user declaration '{}': {}", argv(j), e.message());
    if earlier.iter().any(|u| u[0] == words[0]) {
        return Err(fail(1, RuleError::Duplicate));
    }
    let merged = rules::merge_selector_words(&words[1..]).map_err(|j| fail(j, RuleError::Syntax))?;
    let table = CommandTable::default();
    let mut user = UserRules::new(false, &table);
    let blank = || Selector::default();
    for (j, op) in merged.iter().enumerate() {
        match user.apply(op, false, None, &blank) {
            Ok(()) | Err(RuleError::UnknownCommand) => {}
            Err(e) => return Err(fail(j, e)),
        }
    }
    let mut line = vec![words[0].clone()];
    line.extend(merged);
    Ok(line)
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// ACL SETUSER username [rule ...]
fn acl_setuser(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let name = args[2];
    if rules::has_spaces(name) {
        return Err(CmdError::msg("ERR Usernames can't contain spaces or null characters"));
    }
    let engine = ctx.engine;
    let table = &engine.table;
    let all_channels = engine.all_channels_by_default();
    let words: Vec<Vec<u8>> = args[3..].iter().map(|a| a.to_vec()).collect();
    let merged = rules::merge_selector_words(&words).map_err(|j| {
        CmdError::msg(format!("ERR Unmatched parenthesis in acl selector starting at '{}'.", lossy(&words[j])))
    })?;
    let existing = engine.acl.user(name);
    let mut user = match &existing {
        Some(u) => u.rules().clone(),
        None => UserRules::new(all_channels, table),
    };
    let blank = blank_selector(table, all_channels);
    for op in &merged {
        user.apply(op, all_channels, Some(table), &blank).map_err(|e| {
            let text = format!("ERR Error in ACL SETUSER modifier '{}': {}", lossy(op), e.message());
            CmdError::msg(text.replace(['\r', '\n'], " "))
        })?;
    }
    let old = engine.acl.store(name, user);
    if let (Some(old), Some(u)) = (old, existing) {
        engine.close_subscribers_without_permission(ctx.client, &u, &old);
    }
    out.simple("OK");
    Ok(())
}

/// ACL DELUSER username [username ...]
fn acl_deluser(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args[2..].iter().any(|n| *n == b"default") {
        return Err(CmdError::msg("ERR The 'default' user cannot be removed"));
    }
    let removed = ctx.engine.acl.remove(&args[2..]);
    ctx.engine.close_connections_of(ctx.client, &removed);
    out.integer(removed.len() as i64);
    Ok(())
}

fn reply_selector(out: &mut dyn ReplySink, s: &Selector, table: &CommandTable) {
    out.bulk(b"commands");
    out.bulk(&s.describe_commands(table));
    out.bulk(b"keys");
    out.bulk(&s.describe_keys());
    out.bulk(b"channels");
    out.bulk(&s.describe_channels());
}

/// ACL GETUSER username
fn acl_getuser(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let Some(user) = ctx.engine.acl.user(args[2]) else {
        out.null();
        return Ok(());
    };
    let r = user.rules().clone();
    let table = &ctx.engine.table;
    out.map(6);
    out.bulk(b"flags");
    let names: Vec<&str> =
        rules::USER_FLAG_NAMES.iter().enumerate().filter(|(i, _)| r.flags & (1 << i) != 0).map(|(_, n)| *n).collect();
    out.set(names.len());
    names.iter().for_each(|n| out.bulk(n.as_bytes()));
    out.bulk(b"passwords");
    out.array(r.passwords.len());
    r.passwords.iter().for_each(|p| out.bulk(p.as_bytes()));
    reply_selector(out, r.root(), table);
    out.bulk(b"selectors");
    out.array(r.selectors.len() - 1);
    for s in &r.selectors[1..] {
        out.map(3);
        reply_selector(out, s, table);
    }
    Ok(())
}

/// ACL LIST
fn acl_list(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let users = ctx.engine.acl.users();
    out.array(users.len());
    for user in users {
        let mut line = b"user ".to_vec();
        line.extend_from_slice(&user.name);
        line.push(b' ');
        line.extend_from_slice(&user.rules().describe(&ctx.engine.table));
        out.bulk(&line);
    }
    Ok(())
}

/// ACL USERS
fn acl_users(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let users = ctx.engine.acl.users();
    out.array(users.len());
    users.iter().for_each(|u| out.bulk(&u.name));
    Ok(())
}

/// ACL WHOAMI
fn acl_whoami(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    out.bulk(&ctx.client.user.name);
    Ok(())
}

fn aclfile(ctx: &Ctx<'_>) -> Result<String, CmdError> {
    let path = ctx.engine.config.read().get("aclfile").unwrap_or("").to_string();
    if path.is_empty() {
        return Err(CmdError::msg(
            "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the \
             ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file \
             set) in order to store users in the Redis configuration.",
        ));
    }
    Ok(path)
}

/// ACL LOAD
fn acl_load(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let path = aclfile(ctx)?;
    let engine = ctx.engine;
    let config = engine.config.read().clone();
    let replaced = load_acl_file(&engine.acl, &engine.table, &config, &path, engine.all_channels_by_default())
        .map_err(|e| CmdError::msg(format!("ERR {}", e.replace(['\r', '\n'], " "))))?;
    engine.close_connections_of(ctx.client, &replaced);
    out.simple("OK");
    Ok(())
}

/// ACL SAVE: a temporary file renamed over the ACL file.
fn acl_save(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let path = aclfile(ctx)?;
    let text = acl::acl_file_text(&ctx.engine.acl, &ctx.engine.table);
    let path = resolve_in_dir(&ctx.engine.config.read(), &path).to_string_lossy().into_owned();
    let tmp = format!("{path}.tmp-{}-{}", std::process::id(), ctx.now_ms);
    let result = std::fs::write(&tmp, &text).and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        if let Some(layer) = ctx.engine.persistence() {
            layer.log_warning(&format!("Writing ACL file for ACL SAVE: {}", crate::config::strerror(&e)));
        }
        return Err(CmdError::msg(
            "ERR There was an error trying to save the ACLs. Please check the server logs for more information",
        ));
    }
    out.simple("OK");
    Ok(())
}

/// ACL CAT [category]
fn acl_cat(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    match args.get(2) {
        None if args.len() == 2 => {
            out.array(ACL_CATEGORY_NAMES.len());
            ACL_CATEGORY_NAMES.iter().for_each(|c| out.bulk(c.as_bytes()));
        }
        Some(name) if args.len() == 3 => {
            let Some(bit) = rules::category_bit(name) else {
                let shown: Vec<u8> = name.iter().take(128).copied().collect();
                return Err(CmdError::msg(format!("ERR Unknown category '{}'", lossy(&shown))));
            };
            let names: Vec<&str> =
                ctx.engine.table.all_flat().filter(|s| s.acl & bit != 0).map(|s| s.name.as_str()).collect();
            out.array(names.len());
            names.iter().for_each(|n| out.bulk(n.as_bytes()));
        }
        _ => return Err(crate::error::subcommand_syntax(args)),
    }
    Ok(())
}

/// ACL GENPASS [bits]
fn acl_genpass(_ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len() > 3 {
        return Err(crate::error::subcommand_syntax(args));
    }
    let bits = match args.get(2) {
        Some(a) => parse_i64(a)?,
        None => 256,
    };
    if bits <= 0 || bits > 4096 {
        return Err(CmdError::msg(
            "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096",
        ));
    }
    let chars = ((bits + 3) / 4) as usize;
    let mut random = vec![0u8; chars.div_ceil(2)];
    // The kernel's generator; a password never comes from a weaker source.
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut random))
        .map_err(|e| CmdError::msg(format!("ERR can't read random bytes: {}", crate::config::strerror(&e))))?;
    let hex: Vec<u8> = random.iter().flat_map(|b| [b >> 4, b & 15]).map(|n| b"0123456789abcdef"[n as usize]).collect();
    out.bulk(&hex[..chars]);
    Ok(())
}

/// ACL LOG [count | RESET]
fn acl_log(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len() > 3 {
        return Err(crate::error::subcommand_syntax(args));
    }
    let mut count = 10;
    if let Some(arg) = args.get(2) {
        if is(arg, "RESET") {
            ctx.engine.acl.reset_log();
            out.simple("OK");
            return Ok(());
        }
        count = parse_i64(arg)?.max(0);
    }
    let entries = ctx.engine.acl.log_entries(count as usize);
    let now = ctx.engine.clock.now_ms();
    out.array(entries.len());
    for e in entries {
        out.map(7);
        out.bulk(b"count");
        out.integer(e.count as i64);
        out.bulk(b"reason");
        out.bulk(e.reason.as_bytes());
        out.bulk(b"context");
        out.bulk(e.context.as_bytes());
        out.bulk(b"object");
        out.bulk(&e.object);
        out.bulk(b"username");
        out.bulk(&e.username);
        out.bulk(b"age-seconds");
        out.double((now - e.ctime_ms) as f64 / 1000.0);
        out.bulk(b"client-info");
        out.bulk(e.client_info.as_bytes());
    }
    Ok(())
}

/// ACL DRYRUN username command [arg ...]
fn acl_dryrun(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let Some(user) = ctx.engine.acl.user(args[2]) else {
        return Err(CmdError::msg(format!("ERR User '{}' not found", lossy(args[2]))));
    };
    let cmd_args = &args[3..];
    let Resolved::Found(spec) = ctx.engine.table.resolve(cmd_args) else {
        return Err(CmdError::msg(format!("ERR Command '{}' not found", lossy(args[3]))));
    };
    let argc = cmd_args.len() as i32;
    if (spec.arity > 0 && spec.arity != argc) || argc < -spec.arity {
        return Err(CmdError::msg(format!("ERR wrong number of arguments for '{}' command", spec.name)));
    }
    let result = acl::check(&user.rules(), spec, cmd_args);
    match result {
        Ok(()) => out.simple("OK"),
        Err(Denial::Command) => {
            out.bulk(format!("This user has no permissions to run the '{}' command", spec.name).as_bytes())
        }
        Err(Denial::Key(p)) => {
            out.bulk(format!("This user has no permissions to access the '{}' key", lossy(cmd_args[p])).as_bytes())
        }
        Err(Denial::Channel(p)) => {
            out.bulk(format!("This user has no permissions to access the '{}' channel", lossy(cmd_args[p])).as_bytes())
        }
    }
    Ok(())
}

/// ACL HELP
fn acl_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "ACL",
        &[
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <attribute> [<attribute> ...]",
            "    Create or modify a user with the specified attributes.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
        ],
    )
}

/// The users as CONFIG REWRITE writes them (`user` lines), when there is no ACL file.
pub fn user_lines(engine: &Engine) -> Vec<String> {
    engine
        .acl
        .users()
        .iter()
        .map(|u| format!("user {} {}", u.name_lossy(), lossy(&u.rules().describe(&engine.table))))
        .collect()
}

pub fn register() -> Vec<CommandSpec> {
    const ADMIN: &str = "admin noscript loading stale";
    let sub =
        |name: &str, arity: i32, flags: &str, h: crate::command::Handler| CommandSpec::new(name, arity, flags, "", h);
    vec![CommandSpec::container(
        "acl",
        "",
        "",
        vec![
            sub("cat", -2, "noscript loading stale", acl_cat)
                .doc("server", "6.0.0", "List the ACL categories or the commands inside a category", "O(1) since the categories and commands are a fixed set.")
                .args(vec![ArgDoc::new("categoryname", ArgType::String).optional()]),
            sub("deluser", -3, ADMIN, acl_deluser)
                .doc("server", "6.0.0", "Remove the specified ACL users and the associated rules", "O(1) amortized time considering the typical user.")
                .args(vec![ArgDoc::new("username", ArgType::String).multiple()]),
            sub("dryrun", -4, ADMIN, acl_dryrun)
                .doc("server", "7.0.0", "Returns whether the user can execute the given command without executing the command.", "O(1).")
                .args(vec![
                    ArgDoc::new("username", ArgType::String),
                    ArgDoc::new("command", ArgType::String),
                    ArgDoc::new("arg", ArgType::String).optional().multiple(),
                ]),
            sub("genpass", -2, "noscript loading stale", acl_genpass)
                .doc("server", "6.0.0", "Generate a pseudorandom secure password to use for ACL users", "O(1)")
                .args(vec![ArgDoc::new("bits", ArgType::Integer).optional()]),
            sub("getuser", 3, ADMIN, acl_getuser)
                .doc("server", "6.0.0", "Get the rules for a specific ACL user", "O(N). Where N is the number of password, command and pattern rules that the user has.")
                .history(&[
                    ("6.2.0", "Added Pub/Sub channel patterns."),
                    ("7.0.0", "Added selectors and changed the format of key and channel patterns from a list to their rule representation."),
                ])
                .args(vec![ArgDoc::new("username", ArgType::String)]),
            sub("help", 2, "loading stale", acl_help)
                .doc("server", "6.0.0", "Show helpful text about the different subcommands", "O(1)"),
            sub("list", 2, ADMIN, acl_list)
                .doc("server", "6.0.0", "List the current ACL rules in ACL config file format", "O(N). Where N is the number of configured users."),
            sub("load", 2, ADMIN, acl_load)
                .doc("server", "6.0.0", "Reload the ACLs from the configured ACL file", "O(N). Where N is the number of configured users."),
            sub("log", -2, ADMIN, acl_log)
                .doc("server", "6.0.0", "List latest events denied because of ACLs in place", "O(N) with N being the number of entries shown.")
                .args(vec![ArgDoc::one_of(
                    "operation",
                    vec![ArgDoc::new("count", ArgType::Integer), ArgDoc::token("reset", "RESET")],
                )
                .optional()]),
            sub("save", 2, ADMIN, acl_save)
                .doc("server", "6.0.0", "Save the current ACL rules in the configured ACL file", "O(N). Where N is the number of configured users."),
            sub("setuser", -3, ADMIN, acl_setuser)
                .doc("server", "6.0.0", "Modify or create the rules for a specific ACL user", "O(N). Where N is the number of rules provided.")
                .history(&[("6.2.0", "Added Pub/Sub channel patterns."), ("7.0.0", "Added selectors and key based permissions.")])
                .args(vec![
                    ArgDoc::new("username", ArgType::String),
                    ArgDoc::new("rule", ArgType::String).optional().multiple(),
                ]),
            sub("users", 2, ADMIN, acl_users)
                .doc("server", "6.0.0", "List the username of all the configured ACL rules", "O(N). Where N is the number of configured users."),
            sub("whoami", 2, "noscript loading stale", acl_whoami)
                .doc("server", "6.0.0", "Return the name of the user associated to the current connection", "O(1)"),
        ],
    )
    .doc("server", "6.0.0", "A container for Access List Control commands ", "Depends on subcommand.")]
}
