//! A user's rules as Redis 7.0's ACL keeps them (acl.c): flags, password hashes and
//! selectors (the root one plus those in parentheses), each selector a command bitmap
//! indexed by the command table's ids, key patterns with read/write permissions and
//! channel patterns. Parsing (`ACL SETUSER` words) and describing (`ACL LIST`) live here.

use std::collections::BTreeMap;

use crate::command::{flags, CommandSpec, CommandTable, ACL_CATEGORY_NAMES};
use crate::glob::glob_match;

/// User flags, in the order ACL LIST and GETUSER print them (Redis's ACLUserFlags).
pub const USER_FLAG_NAMES: &[&str] = &["on", "off", "nopass", "skip-sanitize-payload", "sanitize-payload"];
pub mod user_flags {
    pub const ENABLED: u8 = 1;
    pub const DISABLED: u8 = 2;
    pub const NOPASS: u8 = 4;
    pub const SANITIZE_SKIP: u8 = 8;
    pub const SANITIZE: u8 = 16;
}

/// Key pattern permissions.
pub const READ: u8 = 1;
pub const WRITE: u8 = 2;
pub const READ_WRITE: u8 = READ | WRITE;

/// Why a rule was refused, one per errno of Redis's ACLSetUser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleError {
    Syntax,
    UnknownCommand,
    KeyAfterAll,
    ChannelAfterAll,
    NoSuchPassword,
    BadHash,
    Duplicate,
    FirstArgOfSubcommand,
}

impl RuleError {
    /// Redis's ACLSetUserStringError text.
    pub fn message(self) -> &'static str {
        match self {
            Self::Syntax => "Syntax error",
            Self::UnknownCommand => "Unknown command or category name in ACL",
            Self::KeyAfterAll => {
                "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any \
                 effect. Try 'resetkeys' to start with an empty list of patterns"
            }
            Self::ChannelAfterAll => {
                "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have \
                 any effect. Try 'resetchannels' to start with an empty list of channels"
            }
            Self::NoSuchPassword => "The password you are trying to remove from the user does not exist",
            Self::BadHash => {
                "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
            }
            Self::Duplicate => "Duplicate user found. A user can only be defined once in config files",
            Self::FirstArgOfSubcommand => "Allowing first-arg of a subcommand is not supported",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPattern {
    pub perms: u8,
    pub pattern: Vec<u8>,
}

impl KeyPattern {
    fn describe(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(match self.perms {
            READ => b"%R~",
            WRITE => b"%W~",
            _ => b"~",
        });
        out.extend_from_slice(&self.pattern);
    }
}

/// One selector: what commands, keys and channels it allows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    pub root: bool,
    pub all_keys: bool,
    pub all_channels: bool,
    /// Every command, without looking at the bitmap (cleared by any `-` rule).
    pub all_commands: bool,
    /// Set by `+@all` only: the rules start from everything (Redis's reserved bit for
    /// commands added later). Decides whether ACL LIST starts with `+@all` or `-@all`.
    pub from_all: bool,
    /// One bit per command table id.
    allowed: Vec<u64>,
    /// First arguments allowed for an otherwise blocked command, by command id.
    first_args: BTreeMap<usize, Vec<Vec<u8>>>,
    pub patterns: Vec<KeyPattern>,
    pub channels: Vec<Vec<u8>>,
}

impl Selector {
    /// An empty selector: no commands, no keys, channels as `acl-pubsub-default` says.
    pub fn new(root: bool, all_channels_default: bool, table: &CommandTable) -> Self {
        Self {
            root,
            all_channels: all_channels_default,
            allowed: vec![0; table.id_count().div_ceil(64)],
            ..Self::default()
        }
    }

    pub fn allows_id(&self, id: usize) -> bool {
        self.allowed.get(id / 64).is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    fn set_bit(&mut self, id: usize, on: bool) {
        if let Some(w) = self.allowed.get_mut(id / 64) {
            if on {
                *w |= 1 << (id % 64);
            } else {
                *w &= !(1 << (id % 64));
                self.all_commands = false;
            }
        }
    }

    /// Redis's ACLChangeSelectorPerm: the command and all its subcommands.
    fn change_perm(&mut self, spec: &CommandSpec, allow: bool) {
        self.set_bit(spec.id, allow);
        self.first_args.remove(&spec.id);
        for sub in &spec.subcommands {
            self.set_bit(sub.id, allow);
        }
    }

    /// `+@cat` / `-@cat` (Redis's ACLSetSelectorCommandBitsForCategoryLogic): a parent in
    /// the category changes with all its subcommands; then each subcommand by its own.
    fn change_category(&mut self, table: &CommandTable, cat: u32, allow: bool) {
        for spec in table.all() {
            if spec.acl & cat != 0 {
                self.change_perm(spec, allow);
            }
            for sub in &spec.subcommands {
                if sub.acl & cat != 0 {
                    self.change_perm(sub, allow);
                }
            }
        }
    }

    fn set_all(&mut self, on: bool) {
        let fill = if on { u64::MAX } else { 0 };
        self.allowed.iter_mut().for_each(|w| *w = fill);
        self.all_commands = on;
        self.from_all = on;
        self.first_args.clear();
    }

    /// Whether `args` may run `spec`'s command bit-wise (the bitmap or an allowed first
    /// argument), Redis's first check in ACLSelectorCheckCmd.
    pub fn allows_command(&self, spec: &CommandSpec, args: &[&[u8]]) -> bool {
        if self.all_commands || spec.has_flag(flags::NO_AUTH) || self.allows_id(spec.id) {
            return true;
        }
        let Some(allowed) = self.first_args.get(&spec.id) else { return false };
        let idx = if spec.name.contains('|') { 2 } else { 1 };
        args.get(idx).is_some_and(|a| allowed.iter().any(|f| f.eq_ignore_ascii_case(a)))
    }

    /// Whether a key may be accessed with `perms` (READ and/or WRITE; 0: any pattern).
    pub fn allows_key(&self, key: &[u8], perms: u8) -> bool {
        self.all_keys || self.patterns.iter().any(|p| p.perms & perms == perms && glob_match(&p.pattern, key, false))
    }

    /// Whether `perms` are granted on every key (`~*`, `%R~*`...).
    pub fn allows_all_keys(&self, perms: u8) -> bool {
        self.all_keys || self.patterns.iter().any(|p| p.perms & perms == perms && p.pattern == b"*")
    }

    /// A channel (or, `is_pattern`, a PSUBSCRIBE pattern, compared literally).
    pub fn allows_channel(&self, channel: &[u8], is_pattern: bool) -> bool {
        self.all_channels || channel_in_list(&self.channels, channel, is_pattern)
    }

    /// Applies one selector rule (Redis's ACLSetSelector).
    pub fn apply(&mut self, op: &[u8], table: Option<&CommandTable>) -> Result<(), RuleError> {
        let is = |s: &str| op.eq_ignore_ascii_case(s.as_bytes());
        if is("allkeys") || is("~*") {
            self.all_keys = true;
            self.patterns.clear();
        } else if is("resetkeys") {
            self.all_keys = false;
            self.patterns.clear();
        } else if is("allchannels") || is("&*") {
            self.all_channels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.all_channels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.set_all(true);
        } else if is("nocommands") || is("-@all") {
            self.set_all(false);
        } else if op.first() == Some(&b'~') || op.first() == Some(&b'%') {
            if self.all_keys {
                return Err(RuleError::KeyAfterAll);
            }
            let (perms, pattern) = parse_key_rule(op)?;
            if has_spaces(pattern) {
                return Err(RuleError::Syntax);
            }
            match self.patterns.iter_mut().find(|p| p.pattern == pattern) {
                Some(p) => p.perms |= perms,
                None => self.patterns.push(KeyPattern { perms, pattern: pattern.to_vec() }),
            }
        } else if op.first() == Some(&b'&') {
            if self.all_channels {
                return Err(RuleError::ChannelAfterAll);
            }
            let pattern = &op[1..];
            if has_spaces(pattern) {
                return Err(RuleError::Syntax);
            }
            if !self.channels.iter().any(|c| c == pattern) {
                self.channels.push(pattern.to_vec());
            }
        } else if (op.first() == Some(&b'+') || op.first() == Some(&b'-')) && op.get(1) == Some(&b'@') {
            let Some(cat) = category_bit(&op[2..]) else { return Err(RuleError::UnknownCommand) };
            // Without a table (a config file's syntax check) command rules can't be
            // resolved; unknown names are reported when the users are loaded.
            if let Some(table) = table {
                self.change_category(table, cat, op[0] == b'+');
            }
        } else if op.first() == Some(&b'+') {
            let Some(table) = table else { return Ok(()) };
            let name = &op[1..];
            match name.iter().rposition(|&b| b == b'|') {
                None => {
                    let spec = lookup(table, name).ok_or(RuleError::UnknownCommand)?;
                    self.change_perm(spec, true);
                }
                Some(bar) => {
                    let spec = lookup(table, &name[..bar]).ok_or(RuleError::UnknownCommand)?;
                    if spec.name.contains('|') {
                        return Err(RuleError::FirstArgOfSubcommand);
                    }
                    let sub = &name[bar + 1..];
                    if sub.is_empty() {
                        return Err(RuleError::Syntax);
                    }
                    if !spec.subcommands.is_empty() {
                        let sub = lookup(table, name).ok_or(RuleError::UnknownCommand)?;
                        self.change_perm(sub, true);
                    } else {
                        let list = self.first_args.entry(spec.id).or_default();
                        if !list.iter().any(|f| f.eq_ignore_ascii_case(sub)) {
                            list.push(sub.to_vec());
                        }
                    }
                }
            }
        } else if op.first() == Some(&b'-') {
            let Some(table) = table else { return Ok(()) };
            let spec = lookup(table, &op[1..]).ok_or(RuleError::UnknownCommand)?;
            self.change_perm(spec, false);
        } else {
            return Err(RuleError::Syntax);
        }
        Ok(())
    }

    /// The command rules, as ACL LIST and GETUSER show them (Redis's
    /// ACLDescribeSelectorCommandRules): `+@all` or `-@all`, then the categories that best
    /// approximate the bitmap, then single commands to make it exact.
    pub fn describe_commands(&self, table: &CommandTable) -> Vec<u8> {
        let mut rules = Vec::new();
        let additive = !self.from_all;
        let mut fake = Selector { allowed: vec![0; self.allowed.len()], ..Selector::default() };
        fake.set_all(!additive);
        rules.extend_from_slice(if additive { b"-@all " } else { b"+@all " });
        // The categories not yet applied, checked against what remains to explain.
        let mut temp = Selector { allowed: self.allowed.clone(), ..Selector::default() };
        let mut applied = [false; 32];
        loop {
            let mut best = None;
            let (mut min_diff, mut max_same) = (u64::MAX, 0u64);
            for (j, _) in ACL_CATEGORY_NAMES.iter().enumerate() {
                if applied[j] {
                    continue;
                }
                let (on, off) = count_category(table, &temp, 1 << j);
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                if same > diff && (diff < min_diff || (diff == min_diff && same > max_same)) {
                    best = Some(j);
                    min_diff = diff;
                    max_same = same;
                }
            }
            let Some(best) = best else { break };
            fake.change_category(table, 1 << best, additive);
            temp.change_category(table, 1 << best, !additive);
            rules.push(if additive { b'+' } else { b'-' });
            rules.push(b'@');
            rules.extend_from_slice(ACL_CATEGORY_NAMES[best].as_bytes());
            rules.push(b' ');
            applied[best] = true;
        }
        // Single commands where the approximation differs.
        for spec in table.all() {
            self.describe_single(spec, &mut fake, &mut rules);
            for sub in &spec.subcommands {
                self.describe_single(sub, &mut fake, &mut rules);
            }
        }
        rules.pop();
        rules
    }

    fn describe_single(&self, spec: &CommandSpec, fake: &mut Selector, rules: &mut Vec<u8>) {
        let user_bit = self.allows_id(spec.id);
        if user_bit != fake.allows_id(spec.id) {
            rules.push(if user_bit { b'+' } else { b'-' });
            rules.extend_from_slice(spec.name.as_bytes());
            rules.push(b' ');
            fake.change_perm(spec, user_bit);
        }
        if !user_bit {
            for arg in self.first_args.get(&spec.id).into_iter().flatten() {
                rules.push(b'+');
                rules.extend_from_slice(spec.name.as_bytes());
                rules.push(b'|');
                rules.extend_from_slice(arg);
                rules.push(b' ');
            }
        }
    }

    /// Keys, channels and commands, as in ACL LIST (Redis's ACLDescribeSelector).
    pub fn describe(&self, table: &CommandTable) -> Vec<u8> {
        let mut out = Vec::new();
        if self.all_keys {
            out.extend_from_slice(b"~* ");
        } else {
            for p in &self.patterns {
                p.describe(&mut out);
                out.push(b' ');
            }
        }
        if self.all_channels {
            out.extend_from_slice(b"&* ");
        } else {
            out.extend_from_slice(b"resetchannels ");
            for c in &self.channels {
                out.push(b'&');
                out.extend_from_slice(c);
                out.push(b' ');
            }
        }
        out.extend_from_slice(&self.describe_commands(table));
        out
    }

    /// GETUSER's `keys` value.
    pub fn describe_keys(&self) -> Vec<u8> {
        if self.all_keys {
            return b"~*".to_vec();
        }
        let mut out = Vec::new();
        for (i, p) in self.patterns.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            p.describe(&mut out);
        }
        out
    }

    /// GETUSER's `channels` value.
    pub fn describe_channels(&self) -> Vec<u8> {
        if self.all_channels {
            return b"&*".to_vec();
        }
        let mut out = Vec::new();
        for (i, c) in self.channels.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.push(b'&');
            out.extend_from_slice(c);
        }
        out
    }
}

/// `~pattern`, `%R~pattern`, `%W~pattern`, `%RW~pattern`.
fn parse_key_rule(op: &[u8]) -> Result<(u8, &[u8]), RuleError> {
    if op[0] == b'~' {
        return Ok((READ_WRITE, &op[1..]));
    }
    let mut perms = 0;
    for (i, &b) in op.iter().enumerate().skip(1) {
        match b.to_ascii_uppercase() {
            b'R' if perms & READ == 0 => perms |= READ,
            b'W' if perms & WRITE == 0 => perms |= WRITE,
            b'~' if perms != 0 => return Ok((perms, &op[i + 1..])),
            // Deliberately stricter than Redis 7.0.15, which stored `%~x` (no permission)
            // and then crashed describing it; later Redis versions refuse it too.
            _ => return Err(RuleError::Syntax),
        }
    }
    Err(RuleError::Syntax)
}

/// Redis's ACLStringHasSpaces: blanks (C isspace) or NUL.
pub fn has_spaces(s: &[u8]) -> bool {
    s.iter().any(|&b| b == 0 || b == b' ' || (b'\t'..=b'\r').contains(&b))
}

pub fn category_bit(name: &[u8]) -> Option<u32> {
    ACL_CATEGORY_NAMES.iter().position(|c| c.as_bytes().eq_ignore_ascii_case(name)).map(|i| 1 << i)
}

/// A command or `parent|sub` by its original name (rules don't follow rename-command, as
/// Redis's ACLLookupCommand uses the original table). Strict: `get|x` is no command.
pub fn lookup<'t>(table: &'t CommandTable, name: &[u8]) -> Option<&'t CommandSpec> {
    let mut parts = name.split(|&b| b == b'|');
    let base = parts.next()?;
    let sub = parts.next();
    if parts.next().is_some() {
        return None;
    }
    let spec = table.all().iter().find(|s| s.name.as_bytes().eq_ignore_ascii_case(base))?;
    match sub {
        None => Some(spec),
        Some(_) if spec.subcommands.is_empty() => None,
        Some(_) => spec.subcommands.iter().find(|s| s.name.as_bytes().eq_ignore_ascii_case(name)),
    }
}

/// How many commands (and subcommands) of a category the selector allows and denies.
fn count_category(table: &CommandTable, selector: &Selector, cat: u32) -> (u64, u64) {
    let (mut on, mut off) = (0, 0);
    for spec in table.all_flat() {
        if spec.acl & cat != 0 {
            if selector.allows_id(spec.id) {
                on += 1;
            } else {
                off += 1;
            }
        }
    }
    (on, off)
}

/// Redis's ACLCheckChannelAgainstList: channels match patterns, patterns match literally.
pub fn channel_in_list(list: &[Vec<u8>], channel: &[u8], is_pattern: bool) -> bool {
    list.iter().any(|p| if is_pattern { p == channel } else { glob_match(p, channel, false) })
}

/// A user's flags, passwords and selectors (the root selector first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRules {
    pub flags: u8,
    /// SHA-256 hashes, lower-case hex, in the order added.
    pub passwords: Vec<String>,
    pub selectors: Vec<Selector>,
}

impl UserRules {
    /// A new user: disabled, no password, no permissions (Redis's ACLCreateUser).
    pub fn new(all_channels_default: bool, table: &CommandTable) -> Self {
        Self {
            flags: user_flags::DISABLED,
            passwords: Vec::new(),
            selectors: vec![Selector::new(true, all_channels_default, table)],
        }
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    pub fn root(&self) -> &Selector {
        &self.selectors[0]
    }

    /// Applies one rule (Redis's ACLSetUser). `table`: None checks syntax only.
    pub fn apply(
        &mut self,
        op: &[u8],
        all_channels_default: bool,
        table: Option<&CommandTable>,
        blank: &dyn Fn() -> Selector,
    ) -> Result<(), RuleError> {
        use user_flags::*;
        if op.is_empty() {
            return Ok(());
        }
        let is = |s: &str| op.eq_ignore_ascii_case(s.as_bytes());
        if is("on") {
            self.flags = (self.flags | ENABLED) & !DISABLED;
        } else if is("off") {
            self.flags = (self.flags | DISABLED) & !ENABLED;
        } else if is("skip-sanitize-payload") {
            self.flags = (self.flags | SANITIZE_SKIP) & !SANITIZE;
        } else if is("sanitize-payload") {
            self.flags = (self.flags | SANITIZE) & !SANITIZE_SKIP;
        } else if is("nopass") {
            self.flags |= NOPASS;
            self.passwords.clear();
        } else if is("resetpass") {
            self.flags &= !NOPASS;
            self.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let hash = if op[0] == b'>' { hash_password(&op[1..]) } else { checked_hash(&op[1..])? };
            if !self.passwords.contains(&hash) {
                self.passwords.push(hash);
            }
            self.flags &= !NOPASS;
        } else if op[0] == b'<' || op[0] == b'!' {
            let hash = if op[0] == b'<' { hash_password(&op[1..]) } else { checked_hash(&op[1..])? };
            let at = self.passwords.iter().position(|p| *p == hash).ok_or(RuleError::NoSuchPassword)?;
            self.passwords.remove(at);
        } else if op[0] == b'(' && op[op.len() - 1] == b')' {
            let mut selector = blank();
            let inner = &op[1..op.len() - 1];
            let words = crate::config::split_args(inner).unwrap_or_default();
            for word in &words {
                selector.apply(word, table)?;
            }
            self.selectors.push(selector);
        } else if is("clearselectors") {
            self.selectors.truncate(1);
        } else if is("reset") {
            self.flags &= !NOPASS;
            self.passwords.clear();
            let root = &mut self.selectors[0];
            root.all_keys = false;
            root.patterns.clear();
            root.all_channels = all_channels_default;
            root.channels.clear();
            self.flags = (self.flags | DISABLED) & !ENABLED;
            self.flags = (self.flags | SANITIZE) & !SANITIZE_SKIP;
            self.selectors.truncate(1);
            self.selectors[0].set_all(false);
        } else {
            self.selectors[0].apply(op, table)?;
        }
        Ok(())
    }

    /// The user's description (after `user <name> `), as ACL LIST and ACL SAVE write it.
    pub fn describe(&self, table: &CommandTable) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, name) in USER_FLAG_NAMES.iter().enumerate() {
            if self.flags & (1 << i) != 0 {
                out.extend_from_slice(name.as_bytes());
                out.push(b' ');
            }
        }
        for p in &self.passwords {
            out.push(b'#');
            out.extend_from_slice(p.as_bytes());
            out.push(b' ');
        }
        for s in &self.selectors {
            if s.root {
                out.extend_from_slice(&s.describe(table));
            } else {
                out.extend_from_slice(b" (");
                out.extend_from_slice(&s.describe(table));
                out.push(b')');
            }
        }
        out
    }

    /// Whether `password` is one of the user's (or the user takes any).
    pub fn password_matches(&self, password: &[u8]) -> bool {
        if self.has(user_flags::NOPASS) {
            return true;
        }
        let hashed = hash_password(password);
        // Compared without an early exit, as Redis's time_independent_strcmp.
        self.passwords
            .iter()
            .fold(false, |found, p| found | (p.bytes().zip(hashed.bytes()).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0))
    }
}

/// SHA-256 of a password, lower-case hex (Redis's ACLHashPassword).
pub fn hash_password(password: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(password);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn checked_hash(hash: &[u8]) -> Result<String, RuleError> {
    if hash.len() != 64 || !hash.iter().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b)) {
        return Err(RuleError::BadHash);
    }
    Ok(String::from_utf8_lossy(hash).into_owned())
}

/// Merges a selector spread over several words (`(~x`, `+get)`) into one, as Redis's
/// ACLMergeSelectorArguments. Err: the index of the word whose parenthesis is unmatched.
pub fn merge_selector_words(words: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, usize> {
    let mut merged = Vec::new();
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (j, word) in words.iter().enumerate() {
        if let Some((start, mut selector)) = open.take() {
            selector.push(b' ');
            selector.extend_from_slice(word);
            if word.last() == Some(&b')') {
                merged.push(selector);
            } else {
                open = Some((start, selector));
            }
            continue;
        }
        if word.first() == Some(&b'(') && word.last() != Some(&b')') {
            open = Some((j, word.clone()));
            continue;
        }
        merged.push(word.clone());
    }
    match open {
        Some((start, _)) => Err(start),
        None => Ok(merged),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> CommandTable {
        CommandTable::new(crate::cmd::all_commands())
    }

    fn user(table: &CommandTable, rules: &[&str]) -> Result<UserRules, RuleError> {
        let mut u = UserRules::new(false, table);
        let blank = || Selector::new(false, false, table);
        for r in rules {
            u.apply(r.as_bytes(), false, Some(table), &blank)?;
        }
        Ok(u)
    }

    fn describe(table: &CommandTable, rules: &[&str]) -> String {
        String::from_utf8(user(table, rules).unwrap().describe(table)).unwrap()
    }

    #[test]
    fn descriptions_round_trip_through_the_rules() {
        let t = table();
        assert_eq!(describe(&t, &[]), "off resetchannels -@all");
        assert_eq!(describe(&t, &["on", "nopass", "~*", "&*", "+@all"]), "on nopass ~* &* +@all");
        assert_eq!(describe(&t, &["+@all", "-get"]), "off resetchannels +@all -get");
        assert_eq!(describe(&t, &["+@set", "+get"]), "off resetchannels -@all +@set +get");
        assert_eq!(
            describe(&t, &["+select|0", "%R~r*", "%W~w*", "~x", "&ch"]),
            "off %R~r* %W~w* ~x resetchannels &ch -@all +select|0"
        );
        // Every description applies back to the same rules.
        for rules in [
            &["+@all", "-@dangerous", "+config|get", "-debug"][..],
            &["+@read", "-@hash", "+hset", "(~x +get)", "(%R~y -@all +@string)"],
            &["+@all", "-client", "+client|list", "+@admin"],
            &["+acl", "-acl|setuser", "+@pubsub", "-publish"],
        ] {
            let first = user(&t, rules).unwrap();
            let text = String::from_utf8(first.describe(&t)).unwrap();
            let words = crate::config::split_args(text.as_bytes()).unwrap();
            let merged = merge_selector_words(&words).unwrap();
            let mut again = UserRules::new(false, &t);
            let blank = || Selector::new(false, false, &t);
            for w in &merged {
                if let Some(hash) = w.strip_prefix(b"#") {
                    again.passwords.push(String::from_utf8(hash.to_vec()).unwrap());
                    continue;
                }
                again.apply(w, false, Some(&t), &blank).unwrap();
            }
            for (a, b) in first.selectors.iter().zip(&again.selectors) {
                assert_eq!(a.allowed, b.allowed, "{text}");
            }
            assert_eq!(again.describe(&t), first.describe(&t));
        }
    }

    #[test]
    fn rule_errors() {
        let t = table();
        assert_eq!(user(&t, &["+nosuch"]), Err(RuleError::UnknownCommand));
        assert_eq!(user(&t, &["-select|0"]), Err(RuleError::UnknownCommand));
        assert_eq!(user(&t, &["+config|get|x"]), Err(RuleError::FirstArgOfSubcommand));
        assert_eq!(user(&t, &["+config|nosuch"]), Err(RuleError::UnknownCommand));
        assert_eq!(user(&t, &["+debug|"]), Err(RuleError::Syntax));
        assert_eq!(user(&t, &["allkeys", "~x"]), Err(RuleError::KeyAfterAll));
        assert_eq!(user(&t, &["allchannels", "&x"]), Err(RuleError::ChannelAfterAll));
        assert_eq!(user(&t, &["<nope"]), Err(RuleError::NoSuchPassword));
        assert_eq!(user(&t, &["#abc"]), Err(RuleError::BadHash));
        assert_eq!(user(&t, &["%X~x"]), Err(RuleError::Syntax));
        assert_eq!(user(&t, &["%~x"]), Err(RuleError::Syntax));
        assert_eq!(user(&t, &["bogus"]), Err(RuleError::Syntax));
        assert_eq!(user(&t, &["(~x bogus)"]), Err(RuleError::Syntax));
    }

    #[test]
    fn passwords_are_sha256() {
        assert_eq!(hash_password(b"foo"), "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae");
        let t = table();
        let u = user(&t, &[">foo", ">bar", "<bar"]).unwrap();
        assert!(u.password_matches(b"foo") && !u.password_matches(b"bar"));
    }

    #[test]
    fn merging_selector_words() {
        let w = |s: &str| s.split(' ').map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>();
        assert_eq!(merge_selector_words(&w("on (~x +get) (~y")), Err(3));
        assert_eq!(
            merge_selector_words(&w("on (~x +get)")).unwrap(),
            w("on").into_iter().chain([b"(~x +get)".to_vec()]).collect::<Vec<_>>()
        );
    }
}
