//! The declarative command table: for each command its name, arity, flags, key positions,
//! ACL categories, documentation and handler, as in Redis's command table. COMMAND, COMMAND
//! INFO/DOCS/COUNT/LIST/GETKEYS are generated from it, and the dispatcher drives arity
//! checks and shard locking from it.

use hashbrown::HashMap;

use crate::error::CmdResult;
use crate::exec::Ctx;
use crate::reply::ReplySink;

pub type Handler = fn(&mut Ctx<'_>, &[&[u8]], &mut dyn ReplySink) -> CmdResult;
/// Computes a command's key flags from its arguments (see `variable_flags`).
pub type KeyFlagsFn = fn(&[&[u8]]) -> u32;
/// Finds a command's keys where its key specs can't (Redis's `getkeys_proc`, e.g. SORT's
/// STORE anywhere in the arguments): (argument position, index of the key spec whose
/// flags apply) pairs.
pub type GetKeysFn = fn(&[&[u8]]) -> smallvec::SmallVec<[(usize, usize); 4]>;

/// Command flags, in the order COMMAND INFO lists them.
pub const COMMAND_FLAG_NAMES: &[&str] = &[
    "write",
    "readonly",
    "denyoom",
    "module",
    "admin",
    "pubsub",
    "noscript",
    "blocking",
    "loading",
    "stale",
    "skip_monitor",
    "skip_slowlog",
    "asking",
    "fast",
    "no_auth",
    "no_mandatory_keys",
    "no_async_loading",
    "no_multi",
    "movablekeys",
    "allow_busy",
];

/// Command flag bits, one per name of `COMMAND_FLAG_NAMES` in its order (a test checks),
/// for `CommandSpec::has_flag` on the hot path without comparing names.
pub mod flags {
    pub const WRITE: u32 = 1 << 0;
    pub const READONLY: u32 = 1 << 1;
    pub const DENYOOM: u32 = 1 << 2;
    pub const MODULE: u32 = 1 << 3;
    pub const ADMIN: u32 = 1 << 4;
    pub const PUBSUB: u32 = 1 << 5;
    pub const NOSCRIPT: u32 = 1 << 6;
    pub const BLOCKING: u32 = 1 << 7;
    pub const LOADING: u32 = 1 << 8;
    pub const STALE: u32 = 1 << 9;
    pub const SKIP_MONITOR: u32 = 1 << 10;
    pub const SKIP_SLOWLOG: u32 = 1 << 11;
    pub const ASKING: u32 = 1 << 12;
    pub const FAST: u32 = 1 << 13;
    pub const NO_AUTH: u32 = 1 << 14;
    pub const NO_MANDATORY_KEYS: u32 = 1 << 15;
    pub const NO_ASYNC_LOADING: u32 = 1 << 16;
    pub const NO_MULTI: u32 = 1 << 17;
    pub const MOVABLEKEYS: u32 = 1 << 18;
    pub const ALLOW_BUSY: u32 = 1 << 19;
}

/// ACL categories, in Redis's order.
pub const ACL_CATEGORY_NAMES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// Key-spec flags, in the order COMMAND INFO lists them.
pub const KEY_FLAG_NAMES: &[&str] =
    &["RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key", "incomplete", "variable_flags"];

/// Key-spec flag bits, one per name of `KEY_FLAG_NAMES` in its order (a test checks), for
/// the per-request paths (looking a name up costs more than the command it serves).
pub mod key_flags {
    pub const RO: u32 = 1 << 0;
    pub const NOT_KEY: u32 = 1 << 8;
    pub const INCOMPLETE: u32 = 1 << 9;
    pub const VARIABLE_FLAGS: u32 = 1 << 10;
}

pub const GROUP_NAMES: &[&str] = &[
    "generic",
    "string",
    "list",
    "set",
    "sorted-set",
    "hash",
    "pubsub",
    "transactions",
    "connection",
    "server",
    "scripting",
    "hyperloglog",
    "cluster",
    "sentinel",
    "geo",
    "stream",
    "bitmap",
    "module",
];

fn bits(names: &'static [&'static str], words: &str, what: &str) -> u32 {
    words.split_whitespace().fold(0, |acc, w| {
        let i = names.iter().position(|n| *n == w).unwrap_or_else(|| panic!("unknown {what} {w:?}"));
        acc | (1 << i)
    })
}

fn flag(name: &str) -> u32 {
    bits(COMMAND_FLAG_NAMES, name, "command flag")
}

/// Where a command's keys are, as one of Redis 7's key specs (begin_search + find_keys).
#[derive(Debug, Clone)]
pub struct KeySpec {
    pub notes: Option<&'static str>,
    pub flags: u32,
    pub begin_index: i32,
    /// `find_keys` range: last key relative to the first (-1 = the last argument), step, limit.
    pub last_key: i32,
    pub key_step: i32,
    pub limit: i32,
    /// `begin_search` by keyword instead of index: the keyword and where to start looking
    /// (negative: from the end, searching backwards).
    pub keyword: Option<(&'static str, i32)>,
    /// `find_keys` by key count instead of range: (keynumidx, firstkey, keystep), relative
    /// to the begin position.
    pub keynum: Option<(i32, i32, i32)>,
    /// `begin_search` and `find_keys` both `unknown` (SORT's BY/GET patterns and STORE):
    /// the spec finds nothing and the command's `getkeys` function locates its keys.
    pub unknown: bool,
}

impl KeySpec {
    /// A plain index + range spec (the only kind the legacy key range can express).
    fn is_index_range(&self) -> bool {
        self.keyword.is_none() && self.keynum.is_none() && !self.unknown
    }

    /// Where the key search starts for this call (Redis's getKeysUsingKeySpecs), if the
    /// keyword is found at all.
    fn begin(&self, args: &[&[u8]]) -> Option<usize> {
        let Some((keyword, startfrom)) = self.keyword else { return Some(self.begin_index as usize) };
        let argc = args.len() as i64;
        let (start, end, step) =
            if startfrom >= 0 { (i64::from(startfrom), argc, 1) } else { (argc + i64::from(startfrom), 0, -1) };
        let mut i = start;
        while i != end && i >= 1 && i < argc {
            if args[i as usize].eq_ignore_ascii_case(keyword.as_bytes()) {
                return Some(i as usize + 1);
            }
            i += step;
        }
        None
    }

    /// Key positions this spec finds in `args`.
    // PERF: inline storage, so the common one-key command allocates nothing here.
    fn positions(&self, args: &[&[u8]]) -> smallvec::SmallVec<[usize; 4]> {
        if self.unknown {
            return smallvec::SmallVec::new();
        }
        let argc = args.len();
        let Some(begin) = self.begin(args) else { return smallvec::SmallVec::new() };
        if let Some((keynum_idx, first, step)) = self.keynum {
            let idx = begin + keynum_idx as usize;
            let Some(count) = args.get(idx).and_then(|a| quince_resp::parse_i64_strict(a)) else {
                return smallvec::SmallVec::new();
            };
            if count <= 0 {
                return smallvec::SmallVec::new();
            }
            let first = begin + first as usize;
            // As Redis: the last key is first + count - 1 whatever the step, and a range
            // past the arguments finds no keys (the handler reports the syntax error).
            let Some(last) = first.checked_add(count as usize - 1).filter(|&l| l < argc) else {
                return smallvec::SmallVec::new();
            };
            return (first..=last).step_by(step.max(1) as usize).collect();
        }
        let last = if self.last_key >= 0 {
            begin + self.last_key as usize
        } else if self.limit > 1 {
            // Redis: with a limit, the range covers 1/limit of the remaining arguments.
            let remaining = argc.saturating_sub(begin);
            (begin + remaining / self.limit as usize).saturating_sub(1)
        } else {
            (argc as i64 + i64::from(self.last_key)).max(0) as usize
        };
        if last < begin {
            return smallvec::SmallVec::new();
        }
        let last = last.min(argc.saturating_sub(1));
        (begin..=last).step_by(self.key_step.max(1) as usize).filter(|&p| p < argc).collect()
    }
}

/// The type of a documented argument (COMMAND DOCS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    String,
    Integer,
    Double,
    Key,
    Pattern,
    UnixTime,
    PureToken,
    OneOf,
    Block,
}

impl ArgType {
    fn name(self) -> &'static str {
        match self {
            ArgType::String => "string",
            ArgType::Integer => "integer",
            ArgType::Double => "double",
            ArgType::Key => "key",
            ArgType::Pattern => "pattern",
            ArgType::UnixTime => "unix-time",
            ArgType::PureToken => "pure-token",
            ArgType::OneOf => "oneof",
            ArgType::Block => "block",
        }
    }
}

/// One documented argument.
#[derive(Debug, Clone)]
pub struct ArgDoc {
    pub name: &'static str,
    pub kind: ArgType,
    pub key_spec_index: Option<i64>,
    pub token: Option<&'static str>,
    pub since: Option<&'static str>,
    pub optional: bool,
    pub multiple: bool,
    /// The token repeats with each value (`GET pattern [GET pattern ...]`).
    pub multiple_token: bool,
    pub children: Vec<ArgDoc>,
}

impl ArgDoc {
    pub fn new(name: &'static str, kind: ArgType) -> Self {
        Self {
            name,
            kind,
            key_spec_index: None,
            token: None,
            since: None,
            optional: false,
            multiple: false,
            multiple_token: false,
            children: Vec::new(),
        }
    }
    pub fn key(name: &'static str, spec: i64) -> Self {
        Self { key_spec_index: Some(spec), ..Self::new(name, ArgType::Key) }
    }
    /// A bare keyword such as `NX`.
    pub fn token(name: &'static str, token: &'static str) -> Self {
        Self { token: Some(token), ..Self::new(name, ArgType::PureToken) }
    }
    pub fn one_of(name: &'static str, children: Vec<ArgDoc>) -> Self {
        Self { children, ..Self::new(name, ArgType::OneOf) }
    }
    pub fn block(name: &'static str, children: Vec<ArgDoc>) -> Self {
        Self { children, ..Self::new(name, ArgType::Block) }
    }
    /// This argument introduced by a keyword, e.g. `EX seconds`.
    pub fn after(mut self, token: &'static str) -> Self {
        self.token = Some(token);
        self
    }
    pub fn optional(mut self) -> Self {
        self.optional = true;
        self
    }
    pub fn multiple(mut self) -> Self {
        self.multiple = true;
        self
    }
    pub fn multiple_token(mut self) -> Self {
        self.multiple_token = true;
        self
    }
    pub fn since(mut self, version: &'static str) -> Self {
        self.since = Some(version);
        self
    }
}

/// One entry of the command table.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    /// Lower case; subcommands are `parent|sub`.
    pub name: String,
    pub arity: i32,
    pub flags: u32,
    pub acl: u32,
    pub key_specs: Vec<KeySpec>,
    pub tips: Vec<&'static str>,
    pub group: usize,
    pub since: &'static str,
    pub summary: &'static str,
    pub complexity: Option<&'static str>,
    pub history: Vec<(&'static str, &'static str)>,
    pub args: Vec<ArgDoc>,
    pub subcommands: Vec<CommandSpec>,
    pub handler: Option<Handler>,
    /// For key specs flagged `variable_flags`: the actual key flags for given arguments
    /// (SET is `OW update`, or `RW access update` with GET).
    pub variable_key_flags: Option<KeyFlagsFn>,
    /// Locates the keys instead of the key specs (which are then `unknown`).
    pub getkeys: Option<GetKeysFn>,
    /// Index into the engine's per-command statistics; assigned by `CommandTable::new`.
    pub id: usize,
    /// COMMAND DOCS `doc_flags`: `deprecated`, `syscmd`.
    pub doc_flags: u32,
    pub deprecated_since: Option<&'static str>,
    pub replaced_by: Option<&'static str>,
    /// Runs with the transaction gate held exclusively (set by the table, see
    /// `runs_exclusively`).
    pub exclusive: bool,
    /// Runs a script: EVAL, EVALSHA, FCALL and their _RO forms (set by the table).
    pub runs_script: bool,
    /// Touches only the keys it names, or none (set by the table, see
    /// `exec::touches_named_keys_only`).
    pub named_keys_only: bool,
    /// Keyless, and never touches the keyspace (PING, TIME, PUBLISH...).
    pub keyspace_free: bool,
}

/// Documentation flags, in the order COMMAND DOCS lists them.
pub const DOC_FLAG_NAMES: &[&str] = &["deprecated", "syscmd"];

impl CommandSpec {
    /// Starts a declaration. `flags` and `acl` are space-separated names; categories Redis
    /// derives from flags (@write, @read, @fast, @slow, @admin, ...) are added here too.
    pub fn new(name: &str, arity: i32, flags: &str, acl: &str, handler: Handler) -> Self {
        let flags_bits = bits(COMMAND_FLAG_NAMES, flags, "command flag");
        let mut acl_bits = bits(ACL_CATEGORY_NAMES, &acl.replace('@', ""), "ACL category");
        let cat = |n: &str| bits(ACL_CATEGORY_NAMES, n, "ACL category");
        let has = |f: &str| flags_bits & flag(f) != 0;
        // Implicit categories, as Redis's setImplicitACLCategories adds them.
        if has("write") {
            acl_bits |= cat("write");
        }
        if has("readonly") && acl_bits & cat("scripting") == 0 {
            acl_bits |= cat("read");
        }
        if has("admin") {
            acl_bits |= cat("admin dangerous");
        }
        if has("pubsub") {
            acl_bits |= cat("pubsub");
        }
        if has("fast") {
            acl_bits |= cat("fast");
        }
        if has("blocking") {
            acl_bits |= cat("blocking");
        }
        if acl_bits & cat("fast") == 0 {
            acl_bits |= cat("slow");
        }
        Self {
            name: name.to_ascii_lowercase(),
            arity,
            flags: flags_bits,
            acl: acl_bits,
            key_specs: Vec::new(),
            tips: Vec::new(),
            group: 0,
            since: "1.0.0",
            summary: "",
            complexity: None,
            history: Vec::new(),
            args: Vec::new(),
            subcommands: Vec::new(),
            handler: Some(handler),
            variable_key_flags: None,
            getkeys: None,
            id: 0,
            doc_flags: 0,
            deprecated_since: None,
            replaced_by: None,
            exclusive: false,
            runs_script: false,
            named_keys_only: false,
            keyspace_free: false,
        }
    }

    /// A container command (CONFIG, COMMAND, ...) dispatched to its subcommands.
    pub fn container(name: &str, flags: &str, acl: &str, subcommands: Vec<CommandSpec>) -> Self {
        let mut spec = Self::new(name, -2, flags, acl, |_, _, _| Ok(()));
        spec.handler = None;
        spec.subcommands = subcommands
            .into_iter()
            .map(|mut s| {
                s.name = format!("{}|{}", spec.name, s.name);
                s
            })
            .collect();
        spec
    }

    /// Documentation: group (see `GROUP_NAMES`), version it appeared in, summary, complexity.
    pub fn doc(mut self, group: &str, since: &'static str, summary: &'static str, complexity: &'static str) -> Self {
        self.group = GROUP_NAMES.iter().position(|g| *g == group).unwrap_or_else(|| panic!("unknown group {group}"));
        self.since = since;
        self.summary = summary;
        self.complexity = (!complexity.is_empty()).then_some(complexity);
        self
    }

    /// Adds a key spec: keys from argument `begin`, `last` relative to it (-1: to the end),
    /// every `step`. `flags` are key-spec flag names such as `RW access update`.
    pub fn keys(mut self, flags: &str, begin: i32, last: i32, step: i32) -> Self {
        self.key_specs.push(KeySpec {
            notes: None,
            flags: bits(KEY_FLAG_NAMES, flags, "key flag"),
            begin_index: begin,
            last_key: last,
            key_step: step,
            limit: 0,
            keyword: None,
            keynum: None,
            unknown: false,
        });
        self
    }

    /// Adds a key spec whose key count is an argument: begin at `begin`, the count at
    /// `begin + keynum_idx`, keys from `begin + first` every `step` (ZUNIONSTORE, LMPOP...).
    pub fn keys_keynum(mut self, flags: &str, begin: i32, keynum_idx: i32, first: i32, step: i32) -> Self {
        self = self.keys(flags, begin, 0, 1);
        if let Some(spec) = self.key_specs.last_mut() {
            spec.keynum = Some((keynum_idx, first, step));
        }
        self
    }

    /// Adds a key spec found after a keyword (searched from `startfrom`; negative searches
    /// backwards from the end), then a range `last`/`step`/`limit` as in `keys`.
    pub fn keys_keyword(
        mut self,
        flags: &str,
        keyword: &'static str,
        startfrom: i32,
        last: i32,
        step: i32,
        limit: i32,
    ) -> Self {
        self = self.keys(flags, 0, last, step);
        if let Some(spec) = self.key_specs.last_mut() {
            spec.keyword = Some((keyword, startfrom));
            spec.limit = limit;
        }
        self
    }

    /// Adds a key spec whose keys no spec can describe (begin_search and find_keys
    /// `unknown`); the command needs a `getkeys` function.
    pub fn keys_unknown(mut self, flags: &str) -> Self {
        self = self.keys(flags, 0, 0, 0);
        if let Some(spec) = self.key_specs.last_mut() {
            spec.unknown = true;
        }
        self
    }

    pub fn getkeys(mut self, f: GetKeysFn) -> Self {
        self.getkeys = Some(f);
        self
    }

    pub fn key_notes(mut self, notes: &'static str) -> Self {
        if let Some(spec) = self.key_specs.last_mut() {
            spec.notes = Some(notes);
        }
        self
    }

    pub fn tips(mut self, tips: &[&'static str]) -> Self {
        self.tips = tips.to_vec();
        self
    }

    pub fn history(mut self, entries: &[(&'static str, &'static str)]) -> Self {
        self.history = entries.to_vec();
        self
    }

    pub fn args(mut self, args: Vec<ArgDoc>) -> Self {
        self.args = args;
        self
    }

    /// Marks the command deprecated in COMMAND DOCS.
    pub fn deprecated(mut self, since: &'static str, replaced_by: &'static str) -> Self {
        self.doc_flags |= 1;
        self.deprecated_since = Some(since);
        self.replaced_by = Some(replaced_by);
        self
    }

    /// Marks an internal/system command in COMMAND DOCS.
    pub fn syscmd(mut self) -> Self {
        self.doc_flags |= 2;
        self
    }

    pub fn variable_key_flags(mut self, f: KeyFlagsFn) -> Self {
        self.variable_key_flags = Some(f);
        self
    }

    /// Key-spec flag bits from names such as `RW access`.
    pub fn key_flags(names: &str) -> u32 {
        bits(KEY_FLAG_NAMES, names, "key flag")
    }

    /// `flag` is one of `flags::*` (or several or-ed: any of them).
    #[inline]
    pub fn has_flag(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// The legacy (first, last, step) triple of COMMAND INFO, merged from the key specs as
    /// Redis's populateCommandLegacyRangeSpec does: one spec is used as is; several
    /// consecutive step-1 ranges merge into one range.
    pub fn legacy_key_range(&self) -> (i32, i32, i32) {
        match self.key_specs.as_slice() {
            [] => (0, 0, 0),
            [ks] if ks.is_index_range() => {
                let last = if ks.last_key >= 0 { ks.begin_index + ks.last_key } else { ks.last_key };
                (ks.begin_index, last, ks.key_step)
            }
            specs => {
                let (mut first, mut last, mut prev_last) = (i32::MAX, 0i32, 0i32);
                for ks in specs {
                    if !ks.is_index_range() || ks.key_step != 1 || (prev_last != 0 && prev_last != ks.begin_index - 1) {
                        continue;
                    }
                    first = first.min(ks.begin_index);
                    let abs_last = if ks.last_key >= 0 { ks.last_key + ks.begin_index } else { ks.last_key };
                    // Unsigned comparison, as in Redis: a negative (relative-to-end) last wins.
                    last = (last as u32).max(abs_last as u32) as i32;
                    prev_last = last;
                }
                if first == i32::MAX {
                    return (0, 0, 0);
                }
                (first, last, 1)
            }
        }
    }

    /// Positions of key arguments in `args` (args[0] is the command name), per the key specs.
    pub fn key_positions<'s>(&'s self, args: &'s [&[u8]]) -> impl Iterator<Item = usize> + 's {
        self.keys_with_specs(args).map(|(pos, _)| pos)
    }

    /// Calls `f` with each key position, as `key_positions` finds them, without building
    /// its iterator chain: the per-request path, where a one-key command (the key spec
    /// "the argument at index n") takes a shortcut.
    #[inline]
    pub fn each_key_position(&self, args: &[&[u8]], mut f: impl FnMut(usize)) {
        if let (None, [ks]) = (self.getkeys, self.key_specs.as_slice()) {
            if ks.is_index_range() && ks.last_key == 0 && ks.flags & key_flags::NOT_KEY == 0 {
                let at = ks.begin_index as usize;
                if at < args.len() {
                    f(at);
                }
                return;
            }
        }
        self.key_positions(args).for_each(f);
    }

    /// Key positions, each with the key spec that found it (for its access flags). Specs
    /// flagged `not_key` (SSUBSCRIBE's shard channels) name no keys: skipped, as Redis's
    /// COMMAND GETKEYS does.
    pub fn keys_with_specs<'s>(&'s self, args: &'s [&[u8]]) -> impl Iterator<Item = (usize, &'s KeySpec)> + 's {
        let found = self.getkeys.map(|f| f(args)).unwrap_or_default();
        let not_key = key_flags::NOT_KEY;
        let from_specs = self
            .getkeys
            .is_none()
            .then_some(self.key_specs.iter())
            .into_iter()
            .flatten()
            .filter(move |ks| ks.flags & not_key == 0);
        found
            .into_iter()
            .map(move |(p, i)| (p, &self.key_specs[i]))
            .chain(from_specs.flat_map(move |ks| ks.positions(args).into_iter().map(move |p| (p, ks))))
    }

    /// The access flags of a key found by `ks` in `args`: the spec's, or for a spec flagged
    /// `variable_flags` what the command's arguments make them (SET ... GET).
    pub fn key_flags_for(&self, ks: &KeySpec, args: &[&[u8]]) -> u32 {
        match self.variable_key_flags {
            Some(f) if ks.flags & key_flags::VARIABLE_FLAGS != 0 => f(args),
            _ => ks.flags,
        }
    }

    /// Whether the keys can't be found from the legacy range alone (COMMAND's `movablekeys`).
    pub fn movable_keys(&self) -> bool {
        if let [ks] = self.key_specs.as_slice() {
            if ks.is_index_range() {
                return ks.flags & key_flags::INCOMPLETE != 0;
            }
        }
        let mut prev_last = 0;
        let mut movable = false;
        for ks in &self.key_specs {
            if !ks.is_index_range() || ks.key_step != 1 || (prev_last != 0 && prev_last != ks.begin_index - 1) {
                movable = true;
                continue;
            }
            if ks.flags & key_flags::INCOMPLETE != 0 {
                movable = true;
            }
            let abs_last = if ks.last_key >= 0 { ks.last_key + ks.begin_index } else { ks.last_key };
            prev_last = (prev_last as u32).max(abs_last as u32) as i32;
        }
        movable
    }

    pub fn reply_info(&self, out: &mut dyn ReplySink) {
        let (first, last, step) = self.legacy_key_range();
        out.array(10);
        out.bulk(self.name.as_bytes());
        out.integer(i64::from(self.arity));
        let movable = if self.movable_keys() { flag("movablekeys") } else { 0 };
        reply_flag_set(out, COMMAND_FLAG_NAMES, self.flags | movable, "");
        out.integer(i64::from(first));
        out.integer(i64::from(last));
        out.integer(i64::from(step));
        reply_flag_set(out, ACL_CATEGORY_NAMES, self.acl, "@");
        out.set(self.tips.len());
        for tip in &self.tips {
            out.bulk(tip.as_bytes());
        }
        out.set(self.key_specs.len());
        for ks in &self.key_specs {
            out.map(3 + usize::from(ks.notes.is_some()));
            if let Some(notes) = ks.notes {
                out.bulk(b"notes");
                out.bulk(notes.as_bytes());
            }
            out.bulk(b"flags");
            reply_flag_set(out, KEY_FLAG_NAMES, ks.flags, "");
            out.bulk(b"begin_search");
            out.map(2);
            out.bulk(b"type");
            if ks.unknown {
                out.bulk(b"unknown");
                out.bulk(b"spec");
                out.map(0);
            } else if let Some((keyword, startfrom)) = ks.keyword {
                out.bulk(b"keyword");
                out.bulk(b"spec");
                out.map(2);
                out.bulk(b"keyword");
                out.bulk(keyword.as_bytes());
                out.bulk(b"startfrom");
                out.integer(i64::from(startfrom));
            } else {
                out.bulk(b"index");
                out.bulk(b"spec");
                out.map(1);
                out.bulk(b"index");
                out.integer(i64::from(ks.begin_index));
            }
            out.bulk(b"find_keys");
            out.map(2);
            out.bulk(b"type");
            if ks.unknown {
                out.bulk(b"unknown");
                out.bulk(b"spec");
                out.map(0);
            } else if let Some((keynum_idx, first, step)) = ks.keynum {
                out.bulk(b"keynum");
                out.bulk(b"spec");
                out.map(3);
                out.bulk(b"keynumidx");
                out.integer(i64::from(keynum_idx));
                out.bulk(b"firstkey");
                out.integer(i64::from(first));
                out.bulk(b"keystep");
                out.integer(i64::from(step));
            } else {
                out.bulk(b"range");
                out.bulk(b"spec");
                out.map(3);
                out.bulk(b"lastkey");
                out.integer(i64::from(ks.last_key));
                out.bulk(b"keystep");
                out.integer(i64::from(ks.key_step));
                out.bulk(b"limit");
                out.integer(i64::from(ks.limit));
            }
        }
        if self.subcommands.is_empty() {
            out.set(0);
        } else {
            out.array(self.subcommands.len());
            for sub in &self.subcommands {
                sub.reply_info(out);
            }
        }
    }

    pub fn reply_docs(&self, out: &mut dyn ReplySink) {
        let len = 1
            + usize::from(!self.summary.is_empty())
            + 1
            + usize::from(self.complexity.is_some())
            + usize::from(self.doc_flags != 0)
            + usize::from(self.deprecated_since.is_some())
            + usize::from(self.replaced_by.is_some())
            + usize::from(!self.history.is_empty())
            + usize::from(!self.args.is_empty())
            + usize::from(!self.subcommands.is_empty());
        out.map(len);
        if !self.summary.is_empty() {
            out.bulk(b"summary");
            out.bulk(self.summary.as_bytes());
        }
        out.bulk(b"since");
        out.bulk(self.since.as_bytes());
        out.bulk(b"group");
        out.bulk(GROUP_NAMES[self.group].as_bytes());
        if let Some(c) = self.complexity {
            out.bulk(b"complexity");
            out.bulk(c.as_bytes());
        }
        if self.doc_flags != 0 {
            out.bulk(b"doc_flags");
            reply_flag_set(out, DOC_FLAG_NAMES, self.doc_flags, "");
        }
        if let Some(since) = self.deprecated_since {
            out.bulk(b"deprecated_since");
            out.bulk(since.as_bytes());
        }
        if let Some(by) = self.replaced_by {
            out.bulk(b"replaced_by");
            out.bulk(by.as_bytes());
        }
        if !self.history.is_empty() {
            out.bulk(b"history");
            out.set(self.history.len());
            for (version, change) in &self.history {
                out.array(2);
                out.bulk(version.as_bytes());
                out.bulk(change.as_bytes());
            }
        }
        if !self.args.is_empty() {
            out.bulk(b"arguments");
            reply_arg_docs(out, &self.args);
        }
        if !self.subcommands.is_empty() {
            out.bulk(b"subcommands");
            out.map(self.subcommands.len());
            for sub in &self.subcommands {
                out.bulk(sub.name.as_bytes());
                sub.reply_docs(out);
            }
        }
    }
}

pub fn reply_flag_set(out: &mut dyn ReplySink, names: &[&str], set: u32, prefix: &str) {
    out.set(set.count_ones() as usize);
    for (i, name) in names.iter().enumerate() {
        if set & (1 << i) != 0 {
            out.simple(&format!("{prefix}{name}"));
        }
    }
}

fn reply_arg_docs(out: &mut dyn ReplySink, args: &[ArgDoc]) {
    out.array(args.len());
    for arg in args {
        let nested = matches!(arg.kind, ArgType::OneOf | ArgType::Block);
        let flags = usize::from(arg.optional) + usize::from(arg.multiple) + usize::from(arg.multiple_token);
        out.map(
            2 + usize::from(arg.key_spec_index.is_some())
                + usize::from(arg.token.is_some())
                + usize::from(arg.since.is_some())
                + usize::from(flags > 0)
                + usize::from(nested),
        );
        out.bulk(b"name");
        out.bulk(arg.name.as_bytes());
        out.bulk(b"type");
        out.bulk(arg.kind.name().as_bytes());
        if let Some(i) = arg.key_spec_index {
            out.bulk(b"key_spec_index");
            out.integer(i);
        }
        if let Some(t) = arg.token {
            out.bulk(b"token");
            out.bulk(t.as_bytes());
        }
        if let Some(s) = arg.since {
            out.bulk(b"since");
            out.bulk(s.as_bytes());
        }
        if flags > 0 {
            out.bulk(b"flags");
            out.set(flags);
            if arg.optional {
                out.simple("optional");
            }
            if arg.multiple {
                out.simple("multiple");
            }
            if arg.multiple_token {
                out.simple("multiple_token");
            }
        }
        if nested {
            out.bulk(b"arguments");
            reply_arg_docs(out, &arg.children);
        }
    }
}

/// Name -> spec lookup, case-insensitive, including `parent|sub` lookups.
#[derive(Debug, Default)]
pub struct CommandTable {
    specs: Vec<CommandSpec>,
    /// PERF: names keyed by `name_key` (the name's first 16 bytes, lower-cased, and its
    /// length in one integer), which hashes (`NameKeyHasher`) and compares in a few
    /// instructions where a byte-string key costs a few hundred. A key holds all of a name
    /// of up to 16 bytes; longer names are confirmed against the spec's.
    by_key: HashMap<u128, usize, std::hash::BuildHasherDefault<NameKeyHasher>>,
    id_count: usize,
    /// The names commands were renamed to (`rename-command`), by spec index: what a
    /// lookup of a long name is confirmed against.
    renamed: HashMap<usize, String>,
}

/// A lower-case command name's lookup key: its first 16 bytes and its length. No two
/// commands share one (`CommandTable::new` checks). `name` may be in any case: ASCII
/// letters are lower-cased eight bytes at a time.
fn name_key(name: &[u8]) -> u128 {
    let mut bytes = [0u8; 16];
    let n = name.len().min(16);
    bytes[..n].copy_from_slice(&name[..n]);
    let lower = |w: u64| {
        // Bytes 'A'..='Z' get 0x20 added: per byte, (b + 0x3f) has its high bit set from
        // 'A' on, (b + 0x25) from '[' on; bytes of 0x80 and above are left alone.
        let ascii = !w & 0x8080_8080_8080_8080;
        let from_a = (w & 0x7f7f_7f7f_7f7f_7f7f).wrapping_add(0x3f3f_3f3f_3f3f_3f3f);
        let past_z = (w & 0x7f7f_7f7f_7f7f_7f7f).wrapping_add(0x2525_2525_2525_2525);
        let upper = from_a & !past_z & ascii;
        w | (upper >> 2)
    };
    let lo = lower(u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")));
    let hi = lower(u64::from_le_bytes(bytes[8..].try_into().expect("8 bytes")));
    (u128::from(hi) << 64 | u128::from(lo)) ^ ((name.len() as u128) << 120)
}

/// The hasher of `name_key`s: the two halves folded by a multiplication (the keys are the
/// command table's own names; a lookup of any other name only misses).
#[derive(Debug, Default, Clone, Copy)]
pub struct NameKeyHasher(u64);

impl std::hash::Hasher for NameKeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u128(&mut self, key: u128) {
        let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        self.0 = (folded.wrapping_mul(0x9e37_79b9_7f4a_7c15)) ^ (folded >> 29);
    }
}

impl CommandTable {
    pub fn new(mut specs: Vec<CommandSpec>) -> Self {
        let mut next_id = 0;
        for spec in &mut specs {
            spec.id = next_id;
            spec.exclusive = runs_exclusively(&spec.name);
            crate::exec::classify(spec);
            next_id += 1;
            for sub in &mut spec.subcommands {
                sub.id = next_id;
                sub.exclusive = runs_exclusively(&sub.name);
                crate::exec::classify(sub);
                next_id += 1;
            }
        }
        let mut by_key = HashMap::default();
        for (i, spec) in specs.iter().enumerate() {
            let earlier = by_key.insert(name_key(spec.name.as_bytes()), i);
            assert!(earlier.is_none(), "command {} shares its lookup key with another", spec.name);
        }
        Self { specs, by_key, id_count: next_id, renamed: HashMap::default() }
    }

    /// How many ids (commands plus subcommands) exist.
    pub fn id_count(&self) -> usize {
        self.id_count
    }

    /// Every command and subcommand, parents first.
    pub fn all_flat(&self) -> impl Iterator<Item = &CommandSpec> {
        self.specs.iter().flat_map(|s| std::iter::once(s).chain(s.subcommands.iter()))
    }

    /// The spec with a given id.
    pub fn by_id(&self, id: usize) -> Option<&CommandSpec> {
        self.all_flat().find(|s| s.id == id)
    }

    pub fn all(&self) -> &[CommandSpec] {
        &self.specs
    }

    pub fn len(&self) -> usize {
        self.specs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Looks up a top-level command by name, in any case.
    pub fn get(&self, name: &[u8]) -> Option<&CommandSpec> {
        // PERF: no copy of the name. The key of a name under 16 bytes is the whole name
        // (its 16th byte, where the length goes, is free); longer names are confirmed.
        let &i = self.by_key.get(&name_key(name))?;
        let spec = &self.specs[i];
        (name.len() < 16 || self.lookup_name(i).as_bytes().eq_ignore_ascii_case(name)).then_some(spec)
    }

    /// The index of the top-level command looked up by `name` (for `at`).
    pub fn index_of(&self, name: &[u8]) -> Option<usize> {
        self.get(name)?;
        Some(self.by_key[&name_key(name)])
    }

    /// The top-level command at `index` (from `index_of`).
    pub fn at(&self, index: usize) -> &CommandSpec {
        &self.specs[index]
    }

    /// The name a command is looked up by: its own, or the one `rename-command` gave it.
    fn lookup_name(&self, index: usize) -> &str {
        self.renamed.get(&index).map_or(&self.specs[index].name, |n| n)
    }

    /// `rename-command OLD NEW` (Redis's, at start-up): OLD is looked up by NEW from now on,
    /// or not at all when NEW is empty. Errors in Redis's words.
    pub fn rename(&mut self, old: &str, new: &str) -> Result<(), String> {
        let Some(index) = self.get(old.as_bytes()).map(|_| self.by_key[&name_key(old.as_bytes())]) else {
            return Err("No such command in rename-command".into());
        };
        self.by_key.remove(&name_key(old.as_bytes()));
        if new.is_empty() {
            return Ok(());
        }
        if self.get(new.as_bytes()).is_some() {
            return Err("Target command name already exists".into());
        }
        self.by_key.insert(name_key(new.as_bytes()), index);
        self.renamed.insert(index, new.to_ascii_lowercase());
        Ok(())
    }

    /// Looks up `name` or `parent|sub` (as COMMAND INFO/DOCS accept).
    pub fn get_full(&self, name: &[u8]) -> Option<&CommandSpec> {
        match name.iter().position(|&b| b == b'|') {
            None => self.get(name),
            Some(bar) => {
                let parent = self.get(&name[..bar])?;
                let sub = &name[bar + 1..];
                parent.subcommands.iter().find(|s| s.name.as_bytes()[bar + 1..].eq_ignore_ascii_case(sub))
            }
        }
    }

    /// The spec that handles `args`: the command, or its subcommand for containers.
    pub fn resolve<'t>(&'t self, args: &[&[u8]]) -> Resolved<'t> {
        let Some(spec) = self.get(args[0]) else { return Resolved::Unknown };
        if spec.subcommands.is_empty() {
            return Resolved::Found(spec);
        }
        if args.len() < 2 {
            // Redis checks the container's own arity (-2) and reports it.
            return Resolved::Found(spec);
        }
        let parent_len = spec.name.len();
        match spec.subcommands.iter().find(|s| s.name.as_bytes()[parent_len + 1..].eq_ignore_ascii_case(args[1])) {
            Some(sub) => Resolved::Found(sub),
            None => Resolved::UnknownSubcommand(spec),
        }
    }
}

/// Commands that run alone, like a transaction (the transaction gate held exclusively).
/// Scripts and functions: atomic across shards. FLUSHALL, FLUSHDB and SWAPDB: their effects
/// are logged in the order they happened relative to every other write. SAVE, BGSAVE,
/// BGREWRITEAOF and DEBUG: a snapshot, a reload or a fork needs a point where no command is
/// half done. SHUTDOWN: its final save. CONFIG SET: turning `appendonly` on forks the first
/// rewrite at once, as Redis does. SYNC: its snapshot and the stream that follows must meet
/// at one point. `name` is a command's or a subcommand's (`config|set`).
fn runs_exclusively(name: &str) -> bool {
    let command = name.split('|').next().unwrap_or(name);
    name == "config|set"
        || matches!(
            command,
            "eval"
                | "evalsha"
                | "eval_ro"
                | "evalsha_ro"
                | "fcall"
                | "fcall_ro"
                | "flushall"
                | "flushdb"
                | "swapdb"
                | "save"
                | "bgsave"
                | "bgrewriteaof"
                | "debug"
                | "shutdown"
                | "sync"
                | "psync"
                | "replicaof"
                | "slaveof"
                | "migrate"
        )
}

#[derive(Clone, Copy)]
pub enum Resolved<'t> {
    Found(&'t CommandSpec),
    UnknownSubcommand(&'t CommandSpec),
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_commands() {
        for name in
            ["eval", "fcall_ro", "flushall", "swapdb", "debug", "debug|reload", "config|set", "sync", "shutdown"]
        {
            assert!(runs_exclusively(name), "{name}");
        }
        for name in ["get", "config", "config|get", "function|load", "script|load", "multi", "exec"] {
            assert!(!runs_exclusively(name), "{name}");
        }
    }

    #[test]
    fn rename_moves_a_command_to_its_new_name() {
        let mut table = CommandTable::new(crate::cmd::all_commands());
        table.rename("georadiusbymember_ro", "AVeryLongRenamedCommand").unwrap();
        assert!(table.get(b"georadiusbymember_ro").is_none());
        let spec = table.get(b"averylongrenamedcommand").expect("found by its new name");
        assert_eq!(spec.name, "georadiusbymember_ro");
        assert!(table.get(b"averylongrenamedcommanx").is_none(), "a long name is confirmed in full");
        table.rename("flushall", "").unwrap();
        assert!(table.get(b"flushall").is_none());
        assert_eq!(table.rename("flushall", "x"), Err("No such command in rename-command".to_string()));
        assert_eq!(table.rename("get", "set"), Err("Target command name already exists".to_string()));
    }

    #[test]
    fn name_keys_lower_case_ascii_letters_only() {
        for b in 0..=255u8 {
            for at in [0, 7, 8, 15] {
                let mut name = vec![b'x'; 16];
                name[at] = b;
                let mut lower = name.clone();
                lower[at] = b.to_ascii_lowercase();
                assert_eq!(name_key(&name), name_key(&lower), "byte {b:#x} at {at}");
                if !b.is_ascii_uppercase() && b != b'x' {
                    assert_ne!(name_key(&name), name_key(&[b'x'; 16]), "byte {b:#x} at {at}");
                }
            }
        }
    }

    #[test]
    fn every_command_is_found_by_its_name_in_any_case() {
        let table = CommandTable::new(crate::cmd::all_commands());
        for spec in &table.specs {
            assert_eq!(table.get(spec.name.as_bytes()).map(|s| s.id), Some(spec.id), "{}", spec.name);
            let upper = spec.name.to_ascii_uppercase();
            assert_eq!(table.get(upper.as_bytes()).map(|s| s.id), Some(spec.id), "{upper}");
        }
        for unknown in ["", "gett", "ge", "georadiusbymember_rx", "georadiusbymember_ro_", "x".repeat(40).as_str()] {
            assert!(table.get(unknown.as_bytes()).is_none(), "{unknown}");
        }
        // Sixteen bytes whose last one, xored with the length, reads as a shorter name's
        // length: not that name.
        let mut padded = b"get".to_vec();
        padded.resize(15, 0);
        padded.push(3 ^ 16);
        assert!(table.get(&padded).is_none());
        assert_eq!(table.get(b"GeT").map(|s| s.name.as_str()), Some("get"));
        assert!(table.get(b"G\xc5T").is_none());
    }

    #[test]
    fn each_key_position_finds_what_key_positions_finds() {
        let table = CommandTable::new(crate::cmd::all_commands());
        let arg_lists: [&[&[u8]]; 6] = [
            &[b"x"],
            &[b"x", b"k"],
            &[b"x", b"k", b"v"],
            &[b"x", b"k", b"1", b"2", b"3"],
            &[b"x", b"2", b"a", b"b", b"STORE", b"d"],
            &[b"x", b"STREAMS", b"s1", b"s2", b"0", b"0"],
        ];
        let mut checked = 0;
        for spec in table.specs.iter().flat_map(|s| std::iter::once(s).chain(s.subcommands.iter())) {
            for args in arg_lists {
                let mut fast = Vec::new();
                spec.each_key_position(args, |p| fast.push(p));
                let slow: Vec<usize> = spec.key_positions(args).collect();
                assert_eq!(fast, slow, "{} {:?}", spec.name, args);
                checked += 1;
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn flag_constants_follow_the_flag_names() {
        let constants = [
            flags::WRITE,
            flags::READONLY,
            flags::DENYOOM,
            flags::MODULE,
            flags::ADMIN,
            flags::PUBSUB,
            flags::NOSCRIPT,
            flags::BLOCKING,
            flags::LOADING,
            flags::STALE,
            flags::SKIP_MONITOR,
            flags::SKIP_SLOWLOG,
            flags::ASKING,
            flags::FAST,
            flags::NO_AUTH,
            flags::NO_MANDATORY_KEYS,
            flags::NO_ASYNC_LOADING,
            flags::NO_MULTI,
            flags::MOVABLEKEYS,
            flags::ALLOW_BUSY,
        ];
        assert_eq!(constants.len(), COMMAND_FLAG_NAMES.len());
        for (constant, name) in constants.iter().zip(COMMAND_FLAG_NAMES) {
            assert_eq!(*constant, flag(name), "{name}");
        }
        for (constant, name) in [
            (key_flags::RO, "RO"),
            (key_flags::NOT_KEY, "not_key"),
            (key_flags::INCOMPLETE, "incomplete"),
            (key_flags::VARIABLE_FLAGS, "variable_flags"),
        ] {
            assert_eq!(constant, CommandSpec::key_flags(name), "{name}");
        }
    }
}
