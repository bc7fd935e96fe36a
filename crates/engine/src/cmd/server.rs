//! Server commands. This subset: DBSIZE FLUSHDB FLUSHALL INFO SHUTDOWN and the
//! COMMAND family (generated from the command table).

use std::sync::atomic::Ordering;

use crate::command::{reply_flag_set, ArgDoc, ArgType, CommandSpec, ACL_CATEGORY_NAMES, KEY_FLAG_NAMES};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::reply::ReplySink;

use super::is;

/// DBSIZE — O(shards).
fn dbsize(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    out.integer(ctx.engine.keyspace.db_len(ctx.client.db) as i64);
    Ok(())
}

/// FLUSHDB/FLUSHALL's optional ASYNC or SYNC: whether to free the old data on the lazy-free
/// thread (without a mode, as `lazyfree-lazy-user-flush` says).
fn flush_async(ctx: &Ctx<'_>, args: &[&[u8]]) -> Result<bool, CmdError> {
    match args {
        [_] => Ok(ctx.engine.hot.lazy_user_flush.load(std::sync::atomic::Ordering::Relaxed)),
        [_, mode] if is(mode, "ASYNC") => Ok(true),
        [_, mode] if is(mode, "SYNC") => Ok(false),
        _ => Err(CmdError::Syntax),
    }
}

/// Empties one database, freeing its data here or on the lazy-free thread.
fn empty_db(engine: &crate::Engine, db: &mut crate::keyspace::Db, lazily: bool) {
    if lazily {
        let (keys, old) = db.clear_taking();
        if keys > 0 {
            engine.lazyfree.free_all(old, keys as u64);
        }
    } else {
        db.clear();
    }
}

/// FLUSHDB [ASYNC|SYNC] — O(N) in the number of keys. Atomic: all shards are locked at once.
fn flushdb(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let lazily = flush_async(ctx, args)?;
    ctx.force_propagation();
    let db = ctx.client.db;
    let mut ready = Vec::new();
    for mut shard in ctx.engine.keyspace.lock_all() {
        empty_db(ctx.engine, &mut shard.dbs[db], lazily);
        ready.extend(shard.dbs[db].take_ready().into_iter().map(|k| (db, k)));
    }
    // Clients blocked in XREADGROUP on a flushed stream get their error now.
    ctx.serve_after(ready);
    out.simple("OK");
    Ok(())
}

/// FLUSHALL [ASYNC|SYNC] — O(N) in the number of keys.
fn flushall(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let lazily = flush_async(ctx, args)?;
    ctx.force_propagation();
    let mut ready = Vec::new();
    for mut shard in ctx.engine.keyspace.lock_all() {
        for (index, db) in shard.dbs.iter_mut().enumerate() {
            empty_db(ctx.engine, db, lazily);
            ready.extend(db.take_ready().into_iter().map(|k| (index, k)));
        }
    }
    if let Some(layer) = ctx.engine.persistence() {
        layer.after_flushall(ctx.engine);
    }
    // Clients blocked in XREADGROUP on a flushed stream get their error now.
    ctx.serve_after(ready);
    out.simple("OK");
    Ok(())
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] — saves as configured (runs with the gate
/// held exclusively), then asks the host process to exit.
fn shutdown(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (mut save, mut nosave, mut abort) = (false, false, false);
    for opt in &args[1..] {
        if is(opt, "NOSAVE") {
            nosave = true;
        } else if is(opt, "SAVE") {
            save = true;
        } else if is(opt, "ABORT") {
            abort = true;
        } else if !(is(opt, "NOW") || is(opt, "FORCE")) {
            return Err(CmdError::Syntax);
        }
    }
    if (abort && args.len() != 2) || (save && nosave) {
        return Err(CmdError::Syntax);
    }
    if abort {
        // A shutdown a signal scheduled and the periodic work has not run yet (while DEBUG
        // PAUSE-CRON holds it, say) is cancelled, as Redis's abortShutdown.
        if !ctx.engine.abort_scheduled_shutdown() {
            return Err(CmdError::msg("ERR No shutdown in progress."));
        }
        if let Some(layer) = ctx.engine.persistence() {
            layer.log_warning("Shutdown manually aborted.");
        }
        out.simple("OK");
        return Ok(());
    }
    // What persistence must do first: SAVE / NOSAVE override the save points. A failed save
    // keeps the server running (unless FORCE), as in Redis.
    let force = args[1..].iter().any(|a| is(a, "FORCE"));
    let mode = if save {
        Some(true)
    } else if nosave {
        Some(false)
    } else {
        None
    };
    match ctx.engine.persistence() {
        Some(layer) => {
            if let Err(e) = layer.prepare_shutdown(ctx.engine, mode) {
                if !force {
                    let _ = e;
                    return Err(CmdError::msg("ERR Errors trying to SHUTDOWN. Check logs."));
                }
            }
        }
        None if save => return Err(CmdError::msg("ERR Errors trying to SHUTDOWN. Check logs.")),
        None => {}
    }
    // Like Redis, a successful SHUTDOWN sends no reply: the connection just closes.
    ctx.client.close_after_reply = true;
    ctx.engine.request_shutdown();
    Ok(())
}

/// COMMAND — O(N) in the number of commands.
fn command(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let all = ctx.engine.table.all();
    out.array(all.len());
    for spec in all {
        spec.reply_info(out);
    }
    Ok(())
}

/// COMMAND COUNT — O(1).
fn command_count(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    out.integer(ctx.engine.table.len() as i64);
    Ok(())
}

/// COMMAND INFO [command-name ...] — O(N) in the number of commands asked for.
fn command_info(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let table = &ctx.engine.table;
    if args.len() == 2 {
        return command(ctx, args, out);
    }
    out.array(args.len() - 2);
    for name in &args[2..] {
        match table.get_full(name) {
            Some(spec) => spec.reply_info(out),
            None => out.null(),
        }
    }
    Ok(())
}

/// COMMAND DOCS [command-name ...] — O(N); unknown names are left out.
fn command_docs(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let table = &ctx.engine.table;
    let specs: Vec<&CommandSpec> = if args.len() == 2 {
        table.all().iter().collect()
    } else {
        args[2..].iter().filter_map(|n| table.get_full(n)).collect()
    };
    out.map(specs.len());
    for spec in specs {
        out.bulk(spec.name.as_bytes());
        spec.reply_docs(out);
    }
    Ok(())
}

/// COMMAND LIST [FILTERBY MODULE name|ACLCAT category|PATTERN pattern] — O(N).
fn command_list(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let table = &ctx.engine.table;
    let names: Vec<&str> = table
        .all()
        .iter()
        .flat_map(|s| std::iter::once(s).chain(s.subcommands.iter()))
        .map(|s| s.name.as_str())
        .collect();
    let selected: Vec<&str> = match args.len() {
        2 => names,
        5 if is(args[2], "FILTERBY") => {
            let value = args[4];
            if is(args[3], "MODULE") {
                Vec::new()
            } else if is(args[3], "ACLCAT") {
                let Some(bit) = ACL_CATEGORY_NAMES.iter().position(|c| is(value, c)) else {
                    out.array(0);
                    return Ok(());
                };
                table
                    .all()
                    .iter()
                    .flat_map(|s| std::iter::once(s).chain(s.subcommands.iter()))
                    .filter(|s| s.acl & (1 << bit) != 0)
                    .map(|s| s.name.as_str())
                    .collect()
            } else if is(args[3], "PATTERN") {
                names.into_iter().filter(|n| glob_match_nocase(value, n.as_bytes())).collect()
            } else {
                return Err(CmdError::Syntax);
            }
        }
        _ => return Err(CmdError::Syntax),
    };
    out.array(selected.len());
    for name in selected {
        out.bulk(name.as_bytes());
    }
    Ok(())
}

/// COMMAND GETKEYS command [arg ...] — O(N) in the number of arguments.
fn command_getkeys(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    getkeys_generic(ctx, args, out, false)
}

/// COMMAND GETKEYSANDFLAGS command [arg ...] — O(N) in the number of arguments.
fn command_getkeysandflags(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    getkeys_generic(ctx, args, out, true)
}

fn getkeys_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, with_flags: bool) -> CmdResult {
    let target = &args[2..];
    let spec = match ctx.engine.table.resolve(target) {
        crate::command::Resolved::Found(spec) => spec,
        _ => return Err(CmdError::msg("ERR Invalid command specified")),
    };
    // Redis's doesCommandHaveKeys: a key spec not flagged `not_key` (SSUBSCRIBE has none).
    let not_key = crate::command::key_flags::NOT_KEY;
    if spec.getkeys.is_none() && spec.key_specs.iter().all(|ks| ks.flags & not_key != 0) {
        return Err(CmdError::msg("ERR The command has no key arguments"));
    }
    let argc = target.len() as i32;
    if (spec.arity > 0 && spec.arity != argc) || argc < -spec.arity {
        return Err(CmdError::msg("ERR Invalid number of arguments specified for command"));
    }
    let keys: Vec<_> = spec.keys_with_specs(target).collect();
    if keys.is_empty() && !spec.has_flag(crate::command::flags::NO_MANDATORY_KEYS) {
        return Err(CmdError::msg("ERR Invalid arguments specified for command"));
    }
    out.array(keys.len());
    for (pos, key_spec) in keys {
        if with_flags {
            out.array(2);
            out.bulk(target[pos]);
            reply_flag_set(out, KEY_FLAG_NAMES, spec.key_flags_for(key_spec, target), "");
        } else {
            out.bulk(target[pos]);
        }
    }
    Ok(())
}

/// Replies with the lines of a HELP subcommand, as status replies like Redis's addReplyHelp.
pub fn reply_help(out: &mut dyn ReplySink, lines: &[&str]) -> CmdResult {
    out.array(lines.len());
    for line in lines {
        out.simple(line);
    }
    Ok(())
}

/// A HELP reply the way Redis's addReplyHelp builds it: a header naming the command, the
/// given lines, and the HELP entry last.
pub fn reply_subcommand_help(out: &mut dyn ReplySink, command: &str, lines: &[&str]) -> CmdResult {
    out.array(lines.len() + 3);
    out.simple(&format!("{command} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
    for line in lines {
        out.simple(line);
    }
    out.simple("HELP");
    out.simple("    Prints this help.");
    Ok(())
}

/// COMMAND HELP — O(1).
fn command_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    const LINES: &[&str] = &[
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
        "HELP",
        "    Prints this help.",
    ];
    reply_help(out, LINES)
}

/// Case-insensitive Redis glob matching, for COMMAND LIST PATTERN.
fn glob_match_nocase(pattern: &[u8], s: &[u8]) -> bool {
    crate::glob::glob_match(pattern, s, true)
}

const FLUSH_HISTORY: &[(&str, &str)] =
    &[("4.0.0", "Added the `ASYNC` flushing mode modifier."), ("6.2.0", "Added the `SYNC` flushing mode modifier.")];

/// CONFIG GET parameter [parameter ...] — O(N) in the number of known parameters.
/// Patterns are Redis globs; each parameter is listed once however many patterns match it.
/// A plain name (no glob characters) is echoed back as the caller spelled it, as Redis does.
fn config_get(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let matches = ctx.engine.config.read().get_matching(&args[2..]);
    out.map(matches.len());
    for (name, value) in matches {
        out.bulk(name.as_bytes());
        out.bulk(value.as_bytes());
    }
    Ok(())
}

/// CONFIG HELP — O(1). Lists only what quince implements so far.
fn config_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    const LINES: &[&str] = &[
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "HELP",
        "    Prints this help.",
    ];
    reply_help(out, LINES)
}

pub fn register() -> Vec<CommandSpec> {
    let flush_args = || {
        vec![ArgDoc::one_of(
            "async",
            vec![ArgDoc::token("async", "ASYNC").since("4.0.0"), ArgDoc::token("sync", "SYNC").since("6.2.0")],
        )
        .optional()]
    };
    let mut command_spec = CommandSpec::container(
        "command",
        "loading stale",
        "connection",
        vec![
            CommandSpec::new("count", 2, "loading stale", "connection", command_count).doc(
                "server",
                "2.8.13",
                "Get total number of Redis commands",
                "O(1)",
            ),
            CommandSpec::new("docs", -2, "loading stale", "connection", command_docs)
                .doc(
                    "server",
                    "7.0.0",
                    "Get array of specific Redis command documentation",
                    "O(N) where N is the number of commands to look up",
                )
                .tips(&["nondeterministic_output_order"])
                .args(vec![ArgDoc::new("command-name", ArgType::String).optional().multiple()]),
            CommandSpec::new("getkeys", -4, "loading stale", "connection", command_getkeys).doc(
                "server",
                "2.8.13",
                "Extract keys given a full Redis command",
                "O(N) where N is the number of arguments to the command",
            ),
            CommandSpec::new("getkeysandflags", -4, "loading stale", "connection", command_getkeysandflags).doc(
                "server",
                "7.0.0",
                "Extract keys and access flags given a full Redis command",
                "O(N) where N is the number of arguments to the command",
            ),
            CommandSpec::new("help", 2, "loading stale", "connection", command_help).doc(
                "server",
                "5.0.0",
                "Show helpful text about the different subcommands",
                "O(1)",
            ),
            CommandSpec::new("info", -2, "loading stale", "connection", command_info)
                .doc(
                    "server",
                    "2.8.13",
                    "Get array of specific Redis command details, or all when no argument is given.",
                    "O(N) where N is the number of commands to look up",
                )
                .history(&[("7.0.0", "Allowed to be called with no argument to get info on all commands.")])
                .tips(&["nondeterministic_output_order"])
                .args(vec![ArgDoc::new("command-name", ArgType::String).optional().multiple()]),
            CommandSpec::new("list", -2, "loading stale", "connection", command_list)
                .doc(
                    "server",
                    "7.0.0",
                    "Get an array of Redis command names",
                    "O(N) where N is the total number of Redis commands",
                )
                .args(vec![ArgDoc::one_of(
                    "filterby",
                    vec![
                        ArgDoc::new("module-name", ArgType::String).after("MODULE"),
                        ArgDoc::new("category", ArgType::String).after("ACLCAT"),
                        ArgDoc::new("pattern", ArgType::Pattern).after("PATTERN"),
                    ],
                )
                .after("FILTERBY")
                .optional()])
                .tips(&["nondeterministic_output_order"]),
        ],
    )
    .doc("server", "2.8.13", "Get array of Redis command details", "O(N) where N is the total number of Redis commands")
    .tips(&["nondeterministic_output_order"]);
    // Plain COMMAND (no subcommand) has its own handler and arity, as in Redis.
    command_spec.arity = -1;
    command_spec.handler = Some(command);
    vec![
        CommandSpec::new("dbsize", 1, "readonly fast", "keyspace", dbsize)
            .doc("server", "1.0.0", "Return the number of keys in the selected database", "O(1)")
            .tips(&["request_policy:all_shards", "response_policy:agg_sum"]),
        CommandSpec::new("flushdb", -1, "write", "keyspace dangerous", flushdb)
            .doc("server", "1.0.0", "Remove all keys from the current database", "O(N) where N is the number of keys in the selected database")
            .history(FLUSH_HISTORY)
            .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
            .args(flush_args()),
        CommandSpec::new("flushall", -1, "write", "keyspace dangerous", flushall)
            .doc("server", "1.0.0", "Remove all keys from all databases", "O(N) where N is the total number of keys in all databases")
            .history(FLUSH_HISTORY)
            .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
            .args(flush_args()),
        CommandSpec::new("shutdown", -1, "admin noscript loading stale no_multi allow_busy", "", shutdown)
            .doc("server", "1.0.0", "Synchronously save the dataset to disk and then shut down the server", "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)")
            .history(&[("7.0.0", "Added the `NOW`, `FORCE` and `ABORT` modifiers.")])
            .args(vec![
                ArgDoc::one_of("nosave_save", vec![ArgDoc::token("nosave", "NOSAVE"), ArgDoc::token("save", "SAVE")]).optional(),
                ArgDoc::token("now", "NOW").optional().since("7.0.0"),
                ArgDoc::token("force", "FORCE").optional().since("7.0.0"),
                ArgDoc::token("abort", "ABORT").optional().since("7.0.0"),
            ]),
        command_spec,
        CommandSpec::container(
            "config",
            "",
            "",
            vec![
                CommandSpec::new("get", -3, "admin noscript loading stale", "", config_get)
                    .doc("server", "2.0.0", "Get the values of configuration parameters", "O(N) when N is the number of configuration parameters provided")
                    .history(&[("7.0.0", "Added the ability to pass multiple pattern parameters in one call")])
                    .args(vec![ArgDoc::block("parameter", vec![ArgDoc::new("parameter", ArgType::String)]).multiple()]),
                CommandSpec::new("set", -4, "admin noscript loading stale", "", config_set)
                    .doc("server", "2.0.0", "Set configuration parameters to the given values", "O(N) when N is the number of configuration parameters provided")
                    .history(&[("7.0.0", "Added the ability to set multiple parameters in one call.")])
                    .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
                    .args(vec![ArgDoc::block(
                        "parameter_value",
                        vec![ArgDoc::new("parameter", ArgType::String), ArgDoc::new("value", ArgType::String)],
                    )
                    .multiple()]),
                CommandSpec::new("rewrite", 2, "admin noscript loading stale", "", config_rewrite)
                    .doc("server", "2.8.0", "Rewrite the configuration file with the in memory configuration", "O(1)"),
                CommandSpec::new("resetstat", 2, "admin noscript loading stale", "", config_resetstat)
                    .doc("server", "2.0.0", "Reset the stats returned by INFO", "O(1)"),
                CommandSpec::new("help", 2, "loading stale", "", config_help)
                    .doc("server", "5.0.0", "Show helpful text about the different subcommands", "O(1)"),
            ],
        )
        .doc("server", "2.0.0", "A container for server configuration commands", "Depends on subcommand."),
        CommandSpec::new("lolwut", -1, "readonly fast", "", super::lolwut::lolwut)
            .doc("server", "5.0.0", "Display some computer art and the Redis version", "")
            .args(vec![ArgDoc::new("version", ArgType::Integer).after("VERSION").optional()]),
        CommandSpec::new("time", 1, "loading stale fast", "", time)
            .doc("server", "2.6.0", "Return the current server time", "O(1)")
            .tips(&["nondeterministic_output"]),
        CommandSpec::new("lastsave", 1, "loading stale fast", "admin dangerous", lastsave)
            .doc("server", "1.0.0", "Get the UNIX time stamp of the last successful save to disk", "O(1)")
            .tips(&["nondeterministic_output"]),
    ]
}

/// TIME — O(1): seconds and microseconds as two bulk strings.
fn time(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let us = ctx.engine.clock.now_us();
    out.array(2);
    out.bulk((us / 1_000_000).to_string().as_bytes());
    out.bulk((us % 1_000_000).to_string().as_bytes());
    Ok(())
}

/// LASTSAVE — O(1). Before the first save (or without persistence) the last "save" is the
/// start of the process, as Redis reports it.
fn lastsave(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let at = match ctx.engine.persistence() {
        Some(layer) => layer.lastsave(),
        None => ctx.engine.server.read().start_time_ms / 1000,
    };
    out.integer(at);
    Ok(())
}

/// CONFIG SET parameter value [parameter value ...] — all or nothing, applied live.
fn config_set(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if !args.len().is_multiple_of(2) {
        return Err(CmdError::Syntax);
    }
    let pairs: Vec<(&[u8], &[u8])> = args[2..].chunks_exact(2).map(|p| (p[0], p[1])).collect();
    {
        let mut config = ctx.engine.config.write();
        let before = config.clone();
        let addr = &ctx.client.handle.conn.addr;
        let local = addr.is_empty() || addr.starts_with("127.0.0.1:") || addr.starts_with("[::1]:");
        let set_ctx = crate::config::SetContext {
            local_client: local,
            loading: ctx.engine.is_loading() || ctx.engine.is_async_loading(),
        };
        config.set_many_in(&pairs, set_ctx).map_err(CmdError::msg)?;
        // A `tls-*` parameter (or a TLS port where there was none): the host builds its TLS
        // configuration anew, certificates read again (Redis's applyTlsCfg), before it
        // listens on a new TLS port.
        let changed = |name: &str| config.get(name) != before.get(name);
        let tls_changed = crate::config::TLS_PARAMETERS.iter().find(|name| changed(name)).copied();
        let (bind_changed, port_changed, tls_port_changed) = (changed("bind"), changed("port"), changed("tls-port"));
        let tls_port = config.get_int("tls-port") as u16;
        if tls_changed.is_some() || (tls_port_changed && tls_port != 0) {
            if let Err(e) = ctx.engine.reconfigure_tls(&config) {
                *config = before;
                if let Some(layer) = ctx.engine.persistence() {
                    layer.log_warning(&format!("Failed to configure TLS: {e}"));
                }
                let name = tls_changed.unwrap_or("tls-port");
                return Err(CmdError::msg(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{name}') - Unable to update TLS \
                     configuration. Check server logs."
                )));
            }
        }
        // A new bind list or port: the host listens there first, and keeps its old sockets
        // if it can't (Redis's applyBind / applyPort, with their errors).
        if bind_changed || port_changed || tls_port_changed {
            let (bind, port) = (config.get("bind").unwrap_or("").to_string(), config.get_int("port") as u16);
            if let Err(e) = ctx.engine.rebind(&bind, port, tls_port) {
                *config = before;
                if let Some(layer) = ctx.engine.persistence() {
                    layer.log_warning(&format!("Failed to listen on the new address: {e}"));
                }
                let (name, why) = if bind_changed {
                    ("bind", "Failed to bind to specified addresses.")
                } else if port_changed {
                    ("port", "Unable to listen on this port. Check server logs.")
                } else {
                    ("tls-port", "Unable to listen on this port. Check server logs.")
                };
                return Err(CmdError::msg(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
                )));
            }
        }
        // Not built yet: refused rather than accepted with nothing done.
        for (name, missing) in [("watchdog-period", "software watchdog"), ("maxmemory-clients", "client eviction")] {
            if config.get_int(name) != 0 {
                *config = before;
                return Err(CmdError::msg(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{name}') - quince has no {missing} yet"
                )));
            }
        }
        if ctx.engine.cluster.enabled() && config.get_bool("tls-cluster") {
            *config = before;
            return Err(CmdError::msg(
                "ERR CONFIG SET failed (possibly related to argument 'tls-cluster') - quince has no TLS cluster bus yet",
            ));
        }
    }
    ctx.engine.config_changed_in(ctx.client.in_exec);
    out.simple("OK");
    Ok(())
}

/// The marker after which CONFIG REWRITE appends settings the file did not mention.
const REWRITE_MARKER: &str = "# Generated by CONFIG REWRITE";

/// CONFIG REWRITE — rewrites the config file the server started with: lines naming a
/// directive get its current value (later duplicates are dropped), comments and unknown
/// lines stay, and non-default settings the file lacked are appended after a marker.
fn config_rewrite(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    rewrite_config_file(ctx.engine, false)?;
    out.simple("OK");
    Ok(())
}

/// Rewrites the config file with the configuration now: directives already in the file
/// keep their place, the others are appended after a marker, defaults left out unless
/// `force_all` (DEBUG CONFIG-REWRITE-FORCE-ALL).
pub(crate) fn rewrite_config_file(engine: &crate::Engine, force_all: bool) -> Result<(), CmdError> {
    let path = engine.server.read().config_file.clone();
    if path.is_empty() {
        return Err(CmdError::msg("ERR The server is running without a config file"));
    }
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let config = engine.config.read().clone();
    let defaults = crate::config::Config::default();
    let mut emitted: Vec<String> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    // Strings are quoted as Redis writes them (sdscatrepr) when they would not read back
    // as one argument; the directives that take several arguments are written as such.
    let render = |name: &str, value: &str| {
        let several = matches!(
            name,
            "save"
                | "bind"
                | "client-output-buffer-limit"
                | "oom-score-adj-values"
                | "latency-tracking-info-percentiles"
        );
        let plain =
            !value.is_empty() && value.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\'' && b != b'\\');
        if name == "dir" {
            // As CONFIG GET shows it: absolute.
            let dir = config.get_shown("dir").unwrap_or_else(|| value.to_string());
            return format!("{name} {}", crate::exec::quote_repr(dir.as_bytes()));
        }
        if (several && !value.is_empty()) || plain {
            format!("{name} {value}")
        } else {
            format!("{name} {}", crate::exec::quote_repr(value.as_bytes()))
        }
    };
    // Users go where the first `user` line was (or at the end), all of them, as Redis's
    // rewriteConfigUserOption; with an ACL file they live there and the lines go.
    let user_lines =
        if config.get("aclfile").unwrap_or("").is_empty() { super::acl::user_lines(engine) } else { Vec::new() };
    let mut users_written = false;
    for line in old.lines() {
        if line.trim() == REWRITE_MARKER {
            break;
        }
        let directive = line.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
        if directive == "user" {
            if !users_written {
                lines.extend(user_lines.iter().cloned());
                users_written = true;
            }
            continue;
        }
        match config.get(&directive) {
            Some(value) if !line.trim_start().starts_with('#') => {
                if !emitted.contains(&directive) {
                    lines.push(render(&directive, value));
                    emitted.push(directive);
                }
            }
            _ => lines.push(line.to_string()),
        }
    }
    let mut appended = false;
    for (name, value) in config.iter() {
        // No master: Redis writes no replicaof line at all.
        let nothing = matches!(name, "replicaof" | "slaveof") && value.is_empty();
        if nothing || emitted.iter().any(|e| e == name) || (!force_all && defaults.get(name) == Some(value)) {
            continue;
        }
        if !appended {
            lines.push(REWRITE_MARKER.to_string());
            appended = true;
        }
        lines.push(render(name, value));
    }
    if !users_written && !user_lines.is_empty() {
        if !appended {
            lines.push(REWRITE_MARKER.to_string());
        }
        lines.extend(user_lines);
    }
    let mut text = lines.join("\n");
    text.push('\n');
    let tmp = format!("{path}.rewrite-{}", std::process::id());
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| CmdError::msg(format!("ERR Rewriting config file: {e}")))?;
    Ok(())
}

/// CONFIG RESETSTAT — O(1): command, error and connection statistics back to zero.
fn config_resetstat(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let engine = ctx.engine;
    engine.observe.reset_stats();
    engine.lazyfree.reset_stats();
    if let Some(layer) = engine.persistence() {
        layer.reset_sync_counts();
    }
    let stats = &engine.stats;
    for counter in [
        &stats.total_connections_received,
        &stats.rejected_connections,
        &stats.total_commands_processed,
        &stats.keyspace_hits,
        &stats.keyspace_misses,
        &stats.total_net_input_bytes,
        &stats.total_net_output_bytes,
        &stats.total_reads_processed,
        &stats.total_writes_processed,
    ] {
        counter.store(0, Ordering::Relaxed);
    }
    engine.reset_expired_keys();
    out.simple("OK");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::glob_match_nocase as m;

    #[test]
    fn globs() {
        assert!(m(b"*", b"get"));
        assert!(m(b"g?t", b"GET"));
        assert!(m(b"*expire*", b"pexpireat"));
        assert!(m(b"[a-c]*", b"client"));
        assert!(!m(b"[^a-c]*", b"client"));
        assert!(!m(b"x*", b"get"));
        assert!(m(b"command|*", b"command|info"));
    }
}
