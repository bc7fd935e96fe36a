//! Users and permissions, as Redis 7.0's ACL (acl.c): the users table, the permission check
//! every command goes through, the ACL log, and loading and saving the ACL file.
//!
//! A client holds its user (`Client::user`). Rules change in place (ACL SETUSER applies to
//! connections already authenticated as that user, as in Redis). The check costs one
//! atomic load for a user allowed everything (the default user unless configured
//! otherwise); only restricted users look at their rules.

pub mod rules;

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use smallvec::SmallVec;

use crate::command::{CommandSpec, CommandTable};
pub use rules::{RuleError, Selector, UserRules};

/// One user. Its rules are replaced whole by ACL SETUSER (validated on a copy first).
#[derive(Debug)]
pub struct User {
    pub name: Vec<u8>,
    rules: RwLock<UserRules>,
    /// The user may run anything: all commands, keys and channels in one selector.
    unrestricted: AtomicBool,
    /// Deleted (ACL DELUSER, ACL LOAD): its connections are being closed.
    removed: AtomicBool,
}

impl User {
    fn new(name: &[u8], rules: UserRules) -> Arc<Self> {
        let user = Self {
            name: name.to_vec(),
            unrestricted: AtomicBool::new(false),
            rules: RwLock::new(rules),
            removed: AtomicBool::new(false),
        };
        user.refresh();
        Arc::new(user)
    }

    pub fn rules(&self) -> RwLockReadGuard<'_, UserRules> {
        self.rules.read()
    }

    fn set_rules(&self, rules: UserRules) {
        *self.rules.write() = rules;
        self.refresh();
    }

    fn refresh(&self) {
        let free = !self.is_removed()
            && self.rules.read().selectors.iter().any(|s| s.all_commands && s.all_keys && s.all_channels);
        self.unrestricted.store(free, Ordering::Release);
    }

    /// Whether every command may run without looking at the rules.
    #[inline]
    pub fn is_unrestricted(&self) -> bool {
        self.unrestricted.load(Ordering::Acquire)
    }

    pub fn is_removed(&self) -> bool {
        self.removed.load(Ordering::Acquire)
    }

    fn remove(&self) {
        self.removed.store(true, Ordering::Release);
        self.unrestricted.store(false, Ordering::Release);
    }

    pub fn name_lossy(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }
}

/// Why a command was refused, with the position of the key or channel at fault (Redis's
/// ACL_DENIED_* codes order them: command < key < channel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    Command,
    Key(usize),
    Channel(usize),
}

impl Denial {
    fn rank(self) -> (u8, usize) {
        match self {
            Self::Command => (1, 0),
            Self::Key(p) => (2, p),
            Self::Channel(p) => (4, p),
        }
    }

    /// The error a refused command gets (Redis's processCommand).
    pub fn error_line(self, spec: &CommandSpec) -> String {
        match self {
            Self::Command => format!("NOPERM this user has no permissions to run the '{}' command", spec.name),
            Self::Key(_) => "NOPERM this user has no permissions to access one of the keys used as arguments".into(),
            Self::Channel(_) => {
                "NOPERM this user has no permissions to access one of the channels used as arguments".into()
            }
        }
    }

    /// Redis's getAclErrorMessage (scripts).
    pub fn script_message(self) -> &'static str {
        match self {
            Self::Command => "can't run this command or subcommand",
            Self::Key(_) => "can't access at least one of the keys mentioned in the command arguments",
            Self::Channel(_) => "can't publish to the channel mentioned in the command",
        }
    }

    /// The reason EXEC gives for a queued command the rules no longer allow.
    pub fn exec_reason(self) -> &'static str {
        match self {
            Self::Command => "no permission to execute the command or subcommand",
            Self::Key(_) => "no permission to touch the specified keys",
            Self::Channel(_) => "no permission to access one of the channels used as arguments",
        }
    }

    pub fn reason(self) -> &'static str {
        match self {
            Self::Command => "command",
            Self::Key(_) => "key",
            Self::Channel(_) => "channel",
        }
    }
}

// Key-spec flag bits that decide read and write permission (KEY_FLAG_NAMES order).
const KEY_ACCESS: u32 = 1 << 4;
const KEY_UPDATE: u32 = 1 << 5;
const KEY_INSERT: u32 = 1 << 6;
const KEY_DELETE: u32 = 1 << 7;

/// The keys of a command with the permissions each needs (Redis: access is read; insert,
/// delete and update are write).
fn key_permissions(spec: &CommandSpec, args: &[&[u8]]) -> SmallVec<[(usize, u8); 4]> {
    spec.keys_with_specs(args)
        .map(|(pos, ks)| {
            let flags = spec.key_flags_for(ks, args);
            let mut perms = 0;
            if flags & KEY_ACCESS != 0 {
                perms |= rules::READ;
            }
            if flags & (KEY_INSERT | KEY_DELETE | KEY_UPDATE) != 0 {
                perms |= rules::WRITE;
            }
            (pos, perms)
        })
        .collect()
}

/// The channels a command names that permissions apply to (publishing and subscribing;
/// not unsubscribing), as Redis's getChannelsFromCommand: (position, is a pattern).
fn channels(spec: &CommandSpec, args: &[&[u8]]) -> SmallVec<[(usize, bool); 4]> {
    match spec.name.as_str() {
        "subscribe" | "ssubscribe" => (1..args.len()).map(|p| (p, false)).collect(),
        "psubscribe" => (1..args.len()).map(|p| (p, true)).collect(),
        "publish" | "spublish" if args.len() > 1 => smallvec::smallvec![(1, false)],
        _ => SmallVec::new(),
    }
}

fn check_selector(
    selector: &Selector,
    spec: &CommandSpec,
    args: &[&[u8]],
    keys: &mut Option<SmallVec<[(usize, u8); 4]>>,
) -> Result<(), Denial> {
    if !selector.allows_command(spec, args) {
        return Err(Denial::Command);
    }
    if !selector.all_keys {
        for &(pos, perms) in keys.get_or_insert_with(|| key_permissions(spec, args)).iter() {
            if !selector.allows_key(args[pos], perms) {
                return Err(Denial::Key(pos));
            }
        }
    }
    if !selector.all_channels {
        for (pos, is_pattern) in channels(spec, args) {
            if !selector.allows_channel(args[pos], is_pattern) {
                return Err(Denial::Channel(pos));
            }
        }
    }
    Ok(())
}

/// Redis's ACLCheckAllUserCommandPerm: allowed if one selector allows it all; otherwise
/// the most telling refusal (a key or channel over the command, the later position).
pub fn check(rules: &UserRules, spec: &CommandSpec, args: &[&[u8]]) -> Result<(), Denial> {
    let mut worst = Denial::Command;
    let mut keys = None;
    for selector in &rules.selectors {
        match check_selector(selector, spec, args, &mut keys) {
            Ok(()) => return Ok(()),
            Err(d) if d.rank() > worst.rank() => worst = d,
            Err(_) => {}
        }
    }
    Err(worst)
}

/// Whether some selector allows the command and `perms` on every key (SORT's BY and GET).
pub fn allows_command_on_all_keys(rules: &UserRules, spec: &CommandSpec, args: &[&[u8]], perms: u8) -> bool {
    let mut keys = None;
    rules.selectors.iter().any(|s| check_selector(s, spec, args, &mut keys).is_ok() && s.allows_all_keys(perms))
}

/// One ACL LOG entry.
#[derive(Debug, Clone)]
pub struct LogEntry {
    pub count: u64,
    pub reason: &'static str,
    pub context: &'static str,
    pub object: Vec<u8>,
    pub username: Vec<u8>,
    pub ctime_ms: i64,
    pub client_info: String,
}

/// Entries this close in time (and alike) are counted in one (Redis's grouping delta).
const LOG_GROUPING_MS: i64 = 60_000;

/// The users, the default user and the ACL log.
#[derive(Debug)]
pub struct Acl {
    users: RwLock<BTreeMap<Vec<u8>, Arc<User>>>,
    pub default_user: Arc<User>,
    log: Mutex<VecDeque<LogEntry>>,
    /// The default user is `nopass` and enabled: new connections start authenticated.
    default_open: AtomicBool,
    /// The `requirepass` value applied last (see `Engine::config_changed`).
    pub(crate) applied_requirepass: Mutex<Option<String>>,
}

impl Acl {
    /// Only the default user: everything allowed, no password (Redis's ACLCreateDefaultUser).
    pub fn new(table: &CommandTable) -> Self {
        let mut rules = UserRules::new(true, table);
        let blank = || Selector::new(false, true, table);
        for op in ["+@all", "~*", "&*", "on", "nopass"] {
            rules.apply(op.as_bytes(), true, Some(table), &blank).expect("default rules");
        }
        let default_user = User::new(b"default", rules);
        let users = BTreeMap::from([(b"default".to_vec(), default_user.clone())]);
        let acl = Self {
            users: RwLock::new(users),
            default_user,
            log: Mutex::new(VecDeque::new()),
            default_open: AtomicBool::new(true),
            applied_requirepass: Mutex::new(None),
        };
        acl.refresh_default();
        acl
    }

    fn refresh_default(&self) {
        let rules = self.default_user.rules();
        let open = rules.has(rules::user_flags::NOPASS) && !rules.has(rules::user_flags::DISABLED);
        self.default_open.store(open, Ordering::Release);
    }

    /// Whether a client that has not authenticated must (Redis's authRequired).
    #[inline]
    pub fn auth_required(&self, authenticated: bool) -> bool {
        !authenticated && !self.default_open.load(Ordering::Acquire)
    }

    /// Whether a new connection starts authenticated.
    pub fn new_connection_authenticated(&self) -> bool {
        self.default_open.load(Ordering::Acquire)
    }

    pub fn user(&self, name: &[u8]) -> Option<Arc<User>> {
        self.users.read().get(name).cloned()
    }

    /// Every user, by name.
    pub fn users(&self) -> Vec<Arc<User>> {
        self.users.read().values().cloned().collect()
    }

    /// The user if the password is right and the user enabled (Redis's
    /// ACLCheckUserCredentials).
    pub fn authenticate(&self, name: &[u8], password: &[u8]) -> Option<Arc<User>> {
        let user = self.user(name)?;
        let ok = {
            let rules = user.rules();
            !rules.has(rules::user_flags::DISABLED) && rules.password_matches(password)
        };
        ok.then_some(user)
    }

    /// Replaces a user's rules, or creates the user. Returns the old rules of an existing
    /// user (the caller checks whether subscribers lost channels).
    pub fn store(&self, name: &[u8], rules: UserRules) -> Option<UserRules> {
        let mut users = self.users.write();
        let old = match users.get(name) {
            Some(user) => {
                let old = user.rules().clone();
                user.set_rules(rules);
                Some(old)
            }
            None => {
                users.insert(name.to_vec(), User::new(name, rules));
                None
            }
        };
        drop(users);
        if name == b"default" {
            self.refresh_default();
        }
        old
    }

    /// Removes users (never the default one); returns those removed.
    pub fn remove(&self, names: &[&[u8]]) -> Vec<Arc<User>> {
        let mut users = self.users.write();
        let removed: Vec<Arc<User>> = names.iter().filter_map(|n| users.remove(*n)).collect();
        drop(users);
        removed.iter().for_each(|u| u.remove());
        removed
    }

    /// Replaces every user but the default one, whose rules change in place (ACL LOAD).
    /// Returns the users that were replaced.
    pub fn replace_all(&self, mut new_users: BTreeMap<Vec<u8>, UserRules>, default_rules: UserRules) -> Vec<Arc<User>> {
        new_users.remove(&b"default"[..]);
        let mut users = self.users.write();
        let old: Vec<Arc<User>> =
            std::mem::take(&mut *users).into_iter().filter(|(n, _)| n != b"default").map(|(_, u)| u).collect();
        self.default_user.set_rules(default_rules);
        users.insert(b"default".to_vec(), self.default_user.clone());
        for (name, rules) in new_users {
            users.insert(name.clone(), User::new(&name, rules));
        }
        drop(users);
        old.iter().for_each(|u| u.remove());
        self.refresh_default();
        old
    }

    /// `requirepass`: the default user's password, or `nopass` when empty (Redis's
    /// ACLUpdateDefaultUserPassword).
    pub fn set_default_password(&self, password: &str, table: &CommandTable) {
        let mut rules = self.default_user.rules().clone();
        let blank = || Selector::new(false, false, table);
        rules.apply(b"resetpass", false, Some(table), &blank).expect("resetpass");
        let op = if password.is_empty() { b"nopass".to_vec() } else { [b">", password.as_bytes()].concat() };
        rules.apply(&op, false, Some(table), &blank).expect("password rule");
        self.default_user.set_rules(rules);
        self.refresh_default();
    }

    /// Adds an entry, or counts it in a recent alike one among the last ten (Redis's
    /// addACLLogEntry), keeping at most `max_len`.
    pub fn log(&self, mut entry: LogEntry, max_len: usize) {
        let mut log = self.log.lock();
        let alike = log.iter().take(10).position(|e| {
            e.reason == entry.reason
                && e.context == entry.context
                && (e.ctime_ms - entry.ctime_ms).abs() <= LOG_GROUPING_MS
                && e.object == entry.object
                && e.username == entry.username
        });
        if let Some(i) = alike {
            let mut e = log.remove(i).expect("found");
            e.client_info = std::mem::take(&mut entry.client_info);
            e.ctime_ms = entry.ctime_ms;
            e.count += 1;
            log.push_front(e);
        } else {
            log.push_front(entry);
            log.truncate(max_len);
        }
    }

    pub fn log_entries(&self, count: usize) -> Vec<LogEntry> {
        self.log.lock().iter().take(count).cloned().collect()
    }

    pub fn reset_log(&self) {
        self.log.lock().clear();
    }

    pub fn trim_log(&self, max_len: usize) {
        self.log.lock().truncate(max_len);
    }
}

/// Parses the text of an ACL file (Redis's ACLLoadFromFile): every line `user <name>
/// rules...` or blank. All errors are collected in one line; any error loads nothing.
/// Returns the users (the default user's rules when it is listed).
pub fn parse_acl_file(
    text: &[u8],
    filename: &str,
    table: &CommandTable,
    all_channels_default: bool,
) -> Result<BTreeMap<Vec<u8>, UserRules>, String> {
    let mut users: BTreeMap<Vec<u8>, UserRules> = BTreeMap::new();
    let mut errors = String::new();
    let blank = || Selector::new(false, all_channels_default, table);
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let linenum = i + 1;
        let line = trim(line, b" \t\r\n");
        if line.is_empty() {
            continue;
        }
        let argv: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        if argv[0] != b"user" || argv.len() < 2 {
            errors.push_str(&format!("{filename}:{linenum} should start with user keyword followed by the username. "));
            continue;
        }
        let name = argv[1];
        if rules::has_spaces(name) {
            errors.push_str(&format!(
                "'{filename}:{linenum}: username '{}' contains invalid characters. ",
                String::from_utf8_lossy(name)
            ));
            continue;
        }
        if users.contains_key(name) {
            errors.push_str(&format!(
                "WARNING: Duplicate user '{}' found on line {linenum}. ",
                String::from_utf8_lossy(name)
            ));
            continue;
        }
        let mut user = UserRules::new(all_channels_default, table);
        let words: Vec<Vec<u8>> = argv[2..].iter().map(|w| w.to_vec()).collect();
        let merged = match rules::merge_selector_words(&words) {
            Ok(m) => m,
            Err(_) => {
                errors.push_str(&format!("{filename}:{linenum}: Unmatched parenthesis in selector definition."));
                Vec::new()
            }
        };
        let mut syntax_error = false;
        for op in merged {
            let op = trim(&op, b"\t\r\n").to_vec();
            if let Err(e) = user.apply(&op, all_channels_default, Some(table), &blank) {
                if e == RuleError::UnknownCommand {
                    errors.push_str(&format!(
                        "{filename}:{linenum}: Error in applying operation '{}': {}. ",
                        String::from_utf8_lossy(&op),
                        e.message()
                    ));
                } else if !syntax_error {
                    errors.push_str(&format!("{filename}:{linenum}: {}. ", e.message()));
                    syntax_error = true;
                }
            }
        }
        users.insert(name.to_vec(), user);
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        errors.push_str("WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
        Err(errors)
    }
}

fn trim<'a>(s: &'a [u8], set: &[u8]) -> &'a [u8] {
    let start = s.iter().position(|b| !set.contains(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !set.contains(b)).map_or(start, |e| e + 1);
    &s[start..end.max(start)]
}

/// The ACL file's text for the current users (ACL SAVE).
pub fn acl_file_text(acl: &Acl, table: &CommandTable) -> Vec<u8> {
    let mut out = Vec::new();
    for user in acl.users() {
        out.extend_from_slice(b"user ");
        out.extend_from_slice(&user.name);
        out.push(b' ');
        out.extend_from_slice(&user.rules().describe(table));
        out.push(b'\n');
    }
    out
}

/// Whether subscribers of a user whose rules go from `old` to `new` may have lost a
/// channel (Redis's ACLKillPubsubClientsIfNeeded's shortcut): false when the new rules
/// allow all channels somewhere or keep every old channel.
pub fn channels_narrowed(old: &UserRules, new: &UserRules) -> bool {
    if new.selectors.iter().any(|s| s.all_channels) {
        return false;
    }
    let upcoming: Vec<&Vec<u8>> = new.selectors.iter().flat_map(|s| &s.channels).collect();
    old.selectors.iter().any(|s| s.all_channels || s.channels.iter().any(|c| !upcoming.contains(&c)))
}

/// All channel patterns of the rules (what a subscriber is checked against).
pub fn all_channel_patterns(rules: &UserRules) -> Vec<Vec<u8>> {
    rules.selectors.iter().flat_map(|s| s.channels.iter().cloned()).collect()
}
