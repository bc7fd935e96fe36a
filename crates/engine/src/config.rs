//! Server configuration: every parameter of Redis 7.0.15 (`static_configs[]` in config.c,
//! TLS ones included) with its aliases, type, bounds, default and flags, plus quince's own.
//!
//! - redis.conf lines and `--name value` arguments go through [`Config::set`] (config-file
//!   error wording, e.g. "wrong number of arguments");
//! - CONFIG SET goes through [`Config::set_many`] / [`Config::set_many_in`]: all or nothing,
//!   with Redis's error lines;
//! - CONFIG GET goes through [`Config::get_matching`].
//!
//! Values are validated exactly as Redis does (its number parsers and their quirks included)
//! and stored normalized, the way CONFIG GET prints them; integer-like values are also kept
//! parsed, so [`Config::get_int`] is a lookup.
//!
//! Differences from Redis, by design:
//! - `dir` is validated (it must name an existing directory) and stored as an absolute path,
//!   but the process does not `chdir` into it; CONFIG GET resolves a relative value against
//!   the current working directory, which is what Redis's `getcwd()` shows.
//! - `activedefrag yes` is refused like a Redis built without its bundled jemalloc (the
//!   redis-server 7.0.15 this was checked against), since quince does not defragment.
//! - Effects Redis performs when applying a change (listening on a new port, opening TLS
//!   files, raising the file-descriptor limit) are the server's business, not this module's.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::glob::glob_match;

// Parameter flags (Redis's *_CONFIG flags, plus quince's).
const IMMUTABLE: u16 = 1;
/// Settable only when `enable-protected-configs` allows it for the client.
const PROTECTED: u16 = 2;
/// Listed by CONFIG GET only when asked for by exact name.
const HIDDEN: u16 = 4;
/// Redacted from logs and MONITOR (CONFIG GET still shows it).
const SENSITIVE: u16 = 8;
/// Takes several words; CONFIG SET splits its value on spaces.
const MULTI_ARG: u16 = 16;
/// Written by CONFIG REWRITE only when changed (Redis's DEBUG_CONFIG).
const DEBUG: u16 = 32;
/// Refused with -LOADING while the dataset loads.
const DENY_LOADING: u16 = 64;
/// Re-applied even when set to its current value.
const VOLATILE: u16 = 128;
/// Binary-safe string (Redis's sds configs); other strings stop at a NUL byte.
const SDS: u16 = 256;
/// Quince's own parameter.
const QUINCE: u16 = 512;

// Numeric flags.
const MEM: u8 = 1;
const PCT: u8 = 2;
const OCT: u8 = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    /// A number within inclusive bounds. `unsigned` marks Redis's unsigned int, size_t and
    /// unsigned long long parameters, whose bounds are checked on the unsigned value.
    Num {
        min: i128,
        max: i128,
        unsigned: bool,
        flags: u8,
    },
    /// One word out of a list of (name, Redis's value).
    Enum(&'static [(&'static str, i64)]),
    /// Several words whose values are or-ed (shutdown-on-sigint/sigterm).
    Flags(&'static [(&'static str, i64)]),
    Text,
    Dir,
    Save,
    ClientOutputBufferLimit,
    OomScoreAdjValues,
    NotifyKeyspaceEvents,
    Bind,
    ReplicaOf,
    LatencyPercentiles,
}

/// Extra validation a parameter gets on top of its type's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    None,
    NoDefrag,
    ShutdownFlags,
    DbFilename,
    AofFilename,
    AofDirname,
    Hostname,
    ProcTitle,
    /// Out-of-range values are clamped to 1..=500 (Redis's updateHZ).
    Hz,
    /// CONFIG SET raises values below 16kb to 16kb (Redis's resizeReplicationBacklog); a
    /// config file's value is kept as given.
    BacklogSize,
}

struct Directive {
    name: &'static str,
    alias: Option<&'static str>,
    flags: u16,
    kind: Kind,
    /// The default, as CONFIG GET prints it.
    default: &'static str,
    check: Check,
}

const fn d(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u16,
    kind: Kind,
    default: &'static str,
    check: Check,
) -> Directive {
    Directive { name, alias, flags, kind, default, check }
}

const fn boolean(name: &'static str, alias: Option<&'static str>, flags: u16, default: &'static str) -> Directive {
    d(name, alias, flags, Kind::Bool, default, Check::None)
}

const fn text(name: &'static str, alias: Option<&'static str>, flags: u16, default: &'static str) -> Directive {
    d(name, alias, flags, Kind::Text, default, Check::None)
}

const fn int(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u16,
    min: i128,
    max: i128,
    default: &'static str,
) -> Directive {
    d(name, alias, flags, Kind::Num { min, max, unsigned: false, flags: 0 }, default, Check::None)
}

const fn uint(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u16,
    min: i128,
    max: i128,
    default: &'static str,
) -> Directive {
    d(name, alias, flags, Kind::Num { min, max, unsigned: true, flags: 0 }, default, Check::None)
}

/// A memory parameter; `unsigned` as for [`Kind::Num`].
const fn mem(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u16,
    min: i128,
    max: i128,
    unsigned: bool,
    default: &'static str,
) -> Directive {
    d(name, alias, flags, Kind::Num { min, max, unsigned, flags: MEM }, default, Check::None)
}

const fn enumeration(
    name: &'static str,
    flags: u16,
    options: &'static [(&'static str, i64)],
    default: &'static str,
) -> Directive {
    d(name, None, flags, Kind::Enum(options), default, Check::None)
}

const fn special(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u16,
    kind: Kind,
    default: &'static str,
) -> Directive {
    d(name, alias, flags, kind, default, Check::None)
}

const fn with_check(mut directive: Directive, check: Check) -> Directive {
    directive.check = check;
    directive
}

const INT_MAX: i128 = i32::MAX as i128;
const INT_MIN: i128 = i32::MIN as i128;
const UINT_MAX: i128 = u32::MAX as i128;
const LONG_MAX: i128 = i64::MAX as i128;
const ULLONG_MAX: i128 = u64::MAX as i128;

const SUPERVISED: &[(&str, i64)] = &[("upstart", 3), ("systemd", 2), ("auto", 1), ("no", 0)];
const SYSLOG_FACILITY: &[(&str, i64)] = &[
    ("user", 8),
    ("local0", 128),
    ("local1", 136),
    ("local2", 144),
    ("local3", 152),
    ("local4", 160),
    ("local5", 168),
    ("local6", 176),
    ("local7", 184),
];
const REPL_DISKLESS_LOAD: &[(&str, i64)] = &[("disabled", 0), ("on-empty-db", 1), ("swapdb", 2)];
const LOGLEVEL: &[(&str, i64)] = &[("debug", 0), ("verbose", 1), ("notice", 2), ("warning", 3)];
const MAXMEMORY_POLICY: &[(&str, i64)] = &[
    ("volatile-lru", 1),
    ("volatile-lfu", 258),
    ("volatile-random", 768),
    ("volatile-ttl", 512),
    ("allkeys-lru", 1029),
    ("allkeys-lfu", 1286),
    ("allkeys-random", 1540),
    ("noeviction", 1792),
];
const APPENDFSYNC: &[(&str, i64)] = &[("everysec", 2), ("always", 1), ("no", 0)];
/// How quince-server's workers do socket I/O (see docs/threading.md).
const IO_BACKEND: &[(&str, i64)] = &[("auto", 0), ("io_uring", 1), ("epoll", 2)];
/// "yes" and "relative" are the same value, so CONFIG GET shows "yes" for both.
const OOM_SCORE_ADJ: &[(&str, i64)] = &[("no", 0), ("yes", 1), ("relative", 1), ("absolute", 2)];
const ACL_PUBSUB_DEFAULT: &[(&str, i64)] = &[("allchannels", 8), ("resetchannels", 0)];
const SANITIZE_DUMP_PAYLOAD: &[(&str, i64)] = &[("no", 0), ("yes", 1), ("clients", 2)];
const PROTECTED_ACTION: &[(&str, i64)] = &[("no", 0), ("yes", 1), ("local", 2)];
const ENDPOINT_TYPE: &[(&str, i64)] = &[("ip", 0), ("hostname", 1), ("unknown-endpoint", 2)];
const PROPAGATION_ERROR_BEHAVIOR: &[(&str, i64)] = &[("ignore", 0), ("panic", 1), ("panic-on-replicas", 2)];
const SHUTDOWN_SAVE: i64 = 1;
const SHUTDOWN_NOSAVE: i64 = 2;
const SHUTDOWN_ON_SIGNAL: &[(&str, i64)] =
    &[("default", 0), ("save", SHUTDOWN_SAVE), ("nosave", SHUTDOWN_NOSAVE), ("now", 4), ("force", 8)];
const TLS_AUTH_CLIENTS: &[(&str, i64)] = &[("no", 0), ("yes", 1), ("optional", 2)];

/// Redis 7.0.15's parameters in config.c's order, then quince's own.
const DIRECTIVES: &[Directive] = &[
    // Bool configs.
    boolean("rdbchecksum", None, IMMUTABLE, "yes"),
    boolean("daemonize", None, IMMUTABLE, "no"),
    boolean("io-threads-do-reads", None, DEBUG | IMMUTABLE, "no"),
    boolean("always-show-logo", None, IMMUTABLE, "no"),
    boolean("protected-mode", None, 0, "yes"),
    boolean("rdbcompression", None, 0, "yes"),
    boolean("rdb-del-sync-files", None, 0, "no"),
    boolean("activerehashing", None, 0, "yes"),
    boolean("stop-writes-on-bgsave-error", None, 0, "yes"),
    boolean("set-proc-title", None, IMMUTABLE, "yes"),
    boolean("dynamic-hz", None, 0, "yes"),
    boolean("lazyfree-lazy-eviction", None, DEBUG, "no"),
    boolean("lazyfree-lazy-expire", None, DEBUG, "no"),
    boolean("lazyfree-lazy-server-del", None, DEBUG, "no"),
    boolean("lazyfree-lazy-user-del", None, DEBUG, "no"),
    boolean("lazyfree-lazy-user-flush", None, DEBUG, "no"),
    boolean("repl-disable-tcp-nodelay", None, 0, "no"),
    boolean("repl-diskless-sync", None, DEBUG, "yes"),
    boolean("aof-rewrite-incremental-fsync", None, 0, "yes"),
    boolean("no-appendfsync-on-rewrite", None, 0, "no"),
    boolean("cluster-require-full-coverage", None, 0, "yes"),
    boolean("rdb-save-incremental-fsync", None, 0, "yes"),
    boolean("aof-load-truncated", None, 0, "yes"),
    boolean("aof-use-rdb-preamble", None, 0, "yes"),
    boolean("aof-timestamp-enabled", None, 0, "no"),
    boolean("cluster-replica-no-failover", Some("cluster-slave-no-failover"), 0, "no"),
    boolean("replica-lazy-flush", Some("slave-lazy-flush"), 0, "no"),
    boolean("replica-serve-stale-data", Some("slave-serve-stale-data"), 0, "yes"),
    boolean("replica-read-only", Some("slave-read-only"), DEBUG, "yes"),
    boolean("replica-ignore-maxmemory", Some("slave-ignore-maxmemory"), 0, "yes"),
    boolean("jemalloc-bg-thread", None, 0, "yes"),
    with_check(boolean("activedefrag", None, DEBUG, "no"), Check::NoDefrag),
    boolean("syslog-enabled", None, IMMUTABLE, "no"),
    boolean("cluster-enabled", None, IMMUTABLE, "no"),
    boolean("appendonly", None, DENY_LOADING, "no"),
    boolean("cluster-allow-reads-when-down", None, 0, "no"),
    boolean("cluster-allow-pubsubshard-when-down", None, 0, "yes"),
    boolean("crash-log-enabled", None, 0, "yes"),
    boolean("crash-memcheck-enabled", None, 0, "yes"),
    boolean("use-exit-on-panic", None, HIDDEN, "no"),
    boolean("disable-thp", None, IMMUTABLE, "yes"),
    boolean("cluster-allow-replica-migration", None, 0, "yes"),
    boolean("replica-announced", None, 0, "yes"),
    boolean("latency-tracking", None, 0, "yes"),
    boolean("aof-disable-auto-gc", None, 0, "no"),
    boolean("replica-ignore-disk-write-errors", None, 0, "no"),
    // String configs.
    text("aclfile", None, IMMUTABLE, ""),
    text("unixsocket", None, IMMUTABLE, ""),
    text("pidfile", None, IMMUTABLE, ""),
    text("replica-announce-ip", Some("slave-announce-ip"), 0, ""),
    text("masteruser", None, SENSITIVE, ""),
    text("cluster-announce-ip", None, 0, ""),
    text("cluster-config-file", None, IMMUTABLE, "nodes.conf"),
    with_check(text("cluster-announce-hostname", None, 0, ""), Check::Hostname),
    text("syslog-ident", None, IMMUTABLE, "redis"),
    with_check(text("dbfilename", None, PROTECTED, "dump.rdb"), Check::DbFilename),
    with_check(text("appendfilename", None, IMMUTABLE, "appendonly.aof"), Check::AofFilename),
    with_check(text("appenddirname", None, IMMUTABLE, "appendonlydir"), Check::AofDirname),
    text("server_cpulist", None, IMMUTABLE, ""),
    text("bio_cpulist", None, IMMUTABLE, ""),
    text("aof_rewrite_cpulist", None, IMMUTABLE, ""),
    text("bgsave_cpulist", None, IMMUTABLE, ""),
    text("ignore-warnings", None, 0, ""),
    with_check(text("proc-title-template", None, 0, "{title} {listen-addr} {server-mode}"), Check::ProcTitle),
    text("bind-source-addr", None, 0, ""),
    text("logfile", None, IMMUTABLE, ""),
    // SDS configs.
    text("masterauth", None, SENSITIVE | SDS, ""),
    text("requirepass", None, SENSITIVE | SDS, ""),
    // Enum configs.
    enumeration("supervised", IMMUTABLE, SUPERVISED, "no"),
    enumeration("syslog-facility", IMMUTABLE, SYSLOG_FACILITY, "local0"),
    enumeration("repl-diskless-load", DEBUG | DENY_LOADING, REPL_DISKLESS_LOAD, "disabled"),
    enumeration("loglevel", 0, LOGLEVEL, "notice"),
    enumeration("maxmemory-policy", 0, MAXMEMORY_POLICY, "noeviction"),
    enumeration("appendfsync", 0, APPENDFSYNC, "everysec"),
    enumeration("oom-score-adj", 0, OOM_SCORE_ADJ, "no"),
    enumeration("acl-pubsub-default", 0, ACL_PUBSUB_DEFAULT, "resetchannels"),
    enumeration("sanitize-dump-payload", DEBUG, SANITIZE_DUMP_PAYLOAD, "no"),
    enumeration("enable-protected-configs", IMMUTABLE, PROTECTED_ACTION, "no"),
    enumeration("enable-debug-command", IMMUTABLE, PROTECTED_ACTION, "no"),
    enumeration("enable-module-command", IMMUTABLE, PROTECTED_ACTION, "no"),
    enumeration("cluster-preferred-endpoint-type", 0, ENDPOINT_TYPE, "ip"),
    enumeration("propagation-error-behavior", 0, PROPAGATION_ERROR_BEHAVIOR, "ignore"),
    d("shutdown-on-sigint", None, MULTI_ARG, Kind::Flags(SHUTDOWN_ON_SIGNAL), "default", Check::ShutdownFlags),
    d("shutdown-on-sigterm", None, MULTI_ARG, Kind::Flags(SHUTDOWN_ON_SIGNAL), "default", Check::ShutdownFlags),
    // Integer configs.
    int("databases", None, IMMUTABLE, 1, INT_MAX, "16"),
    int("port", None, 0, 0, 65535, "6379"),
    int("io-threads", None, DEBUG | IMMUTABLE, 1, 128, "1"),
    int("auto-aof-rewrite-percentage", None, 0, 0, INT_MAX, "100"),
    int("cluster-replica-validity-factor", Some("cluster-slave-validity-factor"), 0, 0, INT_MAX, "10"),
    int("list-max-listpack-size", Some("list-max-ziplist-size"), 0, INT_MIN, INT_MAX, "-2"),
    int("tcp-keepalive", None, 0, 0, INT_MAX, "300"),
    int("cluster-migration-barrier", None, 0, 0, INT_MAX, "1"),
    int("active-defrag-cycle-min", None, 0, 1, 99, "1"),
    int("active-defrag-cycle-max", None, 0, 1, 99, "25"),
    int("active-defrag-threshold-lower", None, 0, 0, 1000, "10"),
    int("active-defrag-threshold-upper", None, 0, 0, 1000, "100"),
    int("lfu-log-factor", None, 0, 0, INT_MAX, "10"),
    int("lfu-decay-time", None, 0, 0, INT_MAX, "1"),
    int("replica-priority", Some("slave-priority"), 0, 0, INT_MAX, "100"),
    int("repl-diskless-sync-delay", None, 0, 0, INT_MAX, "5"),
    int("maxmemory-samples", None, 0, 1, INT_MAX, "5"),
    int("maxmemory-eviction-tenacity", None, 0, 0, 100, "10"),
    int("timeout", None, 0, 0, INT_MAX, "0"),
    int("replica-announce-port", Some("slave-announce-port"), 0, 0, 65535, "0"),
    int("tcp-backlog", None, IMMUTABLE, 0, INT_MAX, "511"),
    int("cluster-port", None, IMMUTABLE, 0, 65535, "0"),
    int("cluster-announce-bus-port", None, 0, 0, 65535, "0"),
    int("cluster-announce-port", None, 0, 0, 65535, "0"),
    int("cluster-announce-tls-port", None, 0, 0, 65535, "0"),
    int("repl-timeout", None, 0, 1, INT_MAX, "60"),
    int("repl-ping-replica-period", Some("repl-ping-slave-period"), 0, 1, INT_MAX, "10"),
    int("list-compress-depth", None, DEBUG, 0, INT_MAX, "0"),
    int("rdb-key-save-delay", None, HIDDEN, INT_MIN, INT_MAX, "0"),
    int("key-load-delay", None, HIDDEN, INT_MIN, INT_MAX, "0"),
    int("active-expire-effort", None, 0, 1, 10, "1"),
    with_check(int("hz", None, 0, 0, INT_MAX, "10"), Check::Hz),
    int("min-replicas-to-write", Some("min-slaves-to-write"), 0, 0, INT_MAX, "0"),
    int("min-replicas-max-lag", Some("min-slaves-max-lag"), 0, 0, INT_MAX, "10"),
    int("watchdog-period", None, HIDDEN, 0, INT_MAX, "0"),
    int("shutdown-timeout", None, 0, 0, INT_MAX, "10"),
    int("repl-diskless-sync-max-replicas", None, 0, 0, INT_MAX, "0"),
    // Unsigned int configs.
    uint("maxclients", None, 0, 1, UINT_MAX, "10000"),
    d(
        "unixsocketperm",
        None,
        IMMUTABLE,
        Kind::Num { min: 0, max: 0o777, unsigned: true, flags: OCT },
        "0",
        Check::None,
    ),
    uint("socket-mark-id", None, IMMUTABLE, 0, UINT_MAX, "0"),
    // Unsigned long configs (bounds checked as signed in Redis).
    int("active-defrag-max-scan-fields", None, 0, 1, LONG_MAX, "1000"),
    int("slowlog-max-len", None, 0, 0, LONG_MAX, "128"),
    int("acllog-max-len", None, 0, 0, LONG_MAX, "128"),
    // Long long configs.
    int("busy-reply-threshold", Some("lua-time-limit"), 0, 0, LONG_MAX, "5000"),
    int("cluster-node-timeout", None, 0, 0, LONG_MAX, "15000"),
    int("slowlog-log-slower-than", None, 0, -1, LONG_MAX, "10000"),
    int("latency-monitor-threshold", None, 0, 0, LONG_MAX, "0"),
    mem("proto-max-bulk-len", None, DEBUG, 1024 * 1024, LONG_MAX, false, "536870912"),
    int("stream-node-max-entries", None, 0, 0, LONG_MAX, "100"),
    with_check(mem("repl-backlog-size", None, 0, 1, LONG_MAX, false, "1048576"), Check::BacklogSize),
    // Unsigned long long configs.
    mem("maxmemory", None, 0, 0, ULLONG_MAX, true, "0"),
    mem("cluster-link-sendbuf-limit", None, 0, 0, ULLONG_MAX, true, "0"),
    // size_t configs.
    uint("hash-max-listpack-entries", Some("hash-max-ziplist-entries"), 0, 0, LONG_MAX, "512"),
    uint("set-max-intset-entries", None, 0, 0, LONG_MAX, "512"),
    uint("zset-max-listpack-entries", Some("zset-max-ziplist-entries"), 0, 0, LONG_MAX, "128"),
    mem("active-defrag-ignore-bytes", None, 0, 1, LONG_MAX, true, "104857600"),
    mem("hash-max-listpack-value", Some("hash-max-ziplist-value"), 0, 0, LONG_MAX, true, "64"),
    mem("stream-node-max-bytes", None, 0, 0, LONG_MAX, true, "4096"),
    mem("zset-max-listpack-value", Some("zset-max-ziplist-value"), 0, 0, LONG_MAX, true, "64"),
    mem("hll-sparse-max-bytes", None, 0, 0, LONG_MAX, true, "3000"),
    uint("tracking-table-max-keys", None, 0, 0, LONG_MAX, "1000000"),
    mem("client-query-buffer-limit", None, DEBUG, 1024 * 1024, LONG_MAX, true, "1073741824"),
    d(
        "maxmemory-clients",
        None,
        0,
        Kind::Num { min: -100, max: LONG_MAX, unsigned: false, flags: MEM | PCT },
        "0",
        Check::None,
    ),
    // Other numeric configs.
    int("repl-backlog-ttl", None, 0, 0, LONG_MAX, "3600"),
    mem("auto-aof-rewrite-min-size", None, 0, 0, LONG_MAX, false, "67108864"),
    int("loading-process-events-interval-bytes", None, HIDDEN, 1024, INT_MAX, "2097152"),
    // TLS configs.
    int("tls-port", None, 0, 0, 65535, "0"),
    int("tls-session-cache-size", None, 0, 0, INT_MAX, "20480"),
    int("tls-session-cache-timeout", None, 0, 0, INT_MAX, "300"),
    boolean("tls-cluster", None, 0, "no"),
    boolean("tls-replication", None, 0, "no"),
    enumeration("tls-auth-clients", 0, TLS_AUTH_CLIENTS, "yes"),
    boolean("tls-prefer-server-ciphers", None, 0, "no"),
    boolean("tls-session-caching", None, 0, "yes"),
    text("tls-cert-file", None, VOLATILE, ""),
    text("tls-key-file", None, VOLATILE, ""),
    text("tls-key-file-pass", None, 0, ""),
    text("tls-client-cert-file", None, VOLATILE, ""),
    text("tls-client-key-file", None, VOLATILE, ""),
    text("tls-client-key-file-pass", None, 0, ""),
    text("tls-dh-params-file", None, VOLATILE, ""),
    text("tls-ca-cert-file", None, VOLATILE, ""),
    text("tls-ca-cert-dir", None, VOLATILE, ""),
    text("tls-protocols", None, 0, ""),
    text("tls-ciphers", None, 0, ""),
    text("tls-ciphersuites", None, 0, ""),
    // Special configs.
    special("dir", None, PROTECTED | DENY_LOADING, Kind::Dir, "./"),
    special("save", None, MULTI_ARG, Kind::Save, "3600 1 300 100 60 10000"),
    special(
        "client-output-buffer-limit",
        None,
        MULTI_ARG,
        Kind::ClientOutputBufferLimit,
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
    ),
    special("oom-score-adj-values", None, MULTI_ARG, Kind::OomScoreAdjValues, "0 200 800"),
    special("notify-keyspace-events", None, 0, Kind::NotifyKeyspaceEvents, ""),
    // Quince listens on loopback by default (redis.conf's shipped setting); Redis's
    // compiled-in default would be "* -::*", every interface behind protected mode.
    // Redis's compiled-in default (redis.conf ships "127.0.0.1 -::1"): every interface,
    // with protected mode refusing non-local clients while no password is set.
    special("bind", None, MULTI_ARG, Kind::Bind, "* -::*"),
    special("replicaof", Some("slaveof"), IMMUTABLE | MULTI_ARG, Kind::ReplicaOf, ""),
    special("latency-tracking-info-percentiles", None, MULTI_ARG, Kind::LatencyPercentiles, "50 99 99.9"),
    // Quince's own: worker threads (0 = one per core) and keyspace shards (0 = automatic).
    int("threads", None, IMMUTABLE | HIDDEN | QUINCE, 0, 1024, "0"),
    int("shards", None, IMMUTABLE | HIDDEN | QUINCE, 0, 16384, "0"),
    enumeration("io-backend", IMMUTABLE | HIDDEN | QUINCE, IO_BACKEND, "auto"),
];

// Flags kept for completeness of the table (CONFIG REWRITE and logging may use them).
const _: u16 = DEBUG | VOLATILE | QUINCE;

/// Directives config files still accept, and ignore, with exactly one argument.
const DEPRECATED: &[&str] = &["list-max-ziplist-entries", "list-max-ziplist-value", "lua-replicate-commands"];

/// One entry of Redis's `configs` dictionary: a parameter under its name or its alias.
struct Entry {
    name: &'static str,
    index: usize,
}

struct Tables {
    /// Lowercase name or alias -> entry number in `entries`.
    by_name: HashMap<&'static str, usize>,
    /// Names then aliases, in table order (each alias right after its parameter).
    entries: Vec<Entry>,
    /// Parameter numbers sorted by name (for `iter`).
    sorted: Vec<usize>,
    defaults: Vec<Slot>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut entries = Vec::new();
        for (index, directive) in DIRECTIVES.iter().enumerate() {
            entries.push(Entry { name: directive.name, index });
            if let Some(alias) = directive.alias {
                entries.push(Entry { name: alias, index });
            }
        }
        let by_name = entries.iter().enumerate().map(|(i, e)| (e.name, i)).collect();
        let mut sorted: Vec<usize> = (0..DIRECTIVES.len()).collect();
        sorted.sort_by_key(|&i| DIRECTIVES[i].name);
        let defaults = DIRECTIVES.iter().map(default_slot).collect();
        Tables { by_name, entries, sorted, defaults }
    })
}

/// The dictionary entry for a name or alias, compared ASCII-case-insensitively.
fn entry(name: &str) -> Option<usize> {
    let by_name = &tables().by_name;
    if let Some(&e) = by_name.get(name) {
        return Some(e);
    }
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        return by_name.get(name.to_ascii_lowercase().as_str()).copied();
    }
    None
}

fn entry_bytes(name: &[u8]) -> Option<usize> {
    std::str::from_utf8(name).ok().and_then(entry)
}

fn index_of(name: &str) -> Option<usize> {
    entry(name).map(|e| tables().entries[e].index)
}

/// A stored value: the text CONFIG GET shows, and the number behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Slot {
    text: String,
    int: i64,
}

impl Slot {
    fn new(text: String, int: i64) -> Self {
        Self { text, int }
    }
}

fn default_slot(directive: &Directive) -> Slot {
    if matches!(directive.kind, Kind::Dir | Kind::ReplicaOf) {
        return Slot::new(directive.default.to_string(), 0);
    }
    let words: Vec<&[u8]> = if directive.flags & MULTI_ARG != 0 {
        directive.default.split(' ').filter(|w| !w.is_empty()).map(str::as_bytes).collect()
    } else {
        vec![directive.default.as_bytes()]
    };
    // Defaults need no context: only proc-title-template and the merging parameters look at
    // other values, and their defaults are complete.
    let blank = Config { slots: Vec::new(), save_loaded: false, renamed_commands: Vec::new(), users: Vec::new() };
    blank.parse_with(directive, &words, false, None).unwrap_or_else(|_| Slot::new(directive.default.to_string(), 0))
}

// ---------------------------------------------------------------------------------------
// Redis's number and string parsers, quirks included.

/// The bytes a C function sees: everything before the first NUL.
fn cstr(bytes: &[u8]) -> &[u8] {
    bytes.iter().position(|&b| b == 0).map_or(bytes, |n| &bytes[..n])
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// C's `strtoll` (on a string without NULs): the value (saturated on overflow), how many
/// bytes it consumed (0 when there are no digits), and whether it overflowed.
fn strtoll(s: &[u8], base: u32) -> (i64, usize, bool) {
    let mut i = 0;
    while i < s.len() && is_c_space(s[i]) {
        i += 1;
    }
    let negative = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut magnitude: u128 = 0;
    while let Some(digit) = s.get(i).and_then(|&b| (b as char).to_digit(base)) {
        magnitude = (magnitude * base as u128 + digit as u128).min(1 << 64);
        i += 1;
    }
    if i == start {
        return (0, 0, false);
    }
    let limit: u128 = if negative { 1 << 63 } else { (1 << 63) - 1 };
    if magnitude > limit {
        return (if negative { i64::MIN } else { i64::MAX }, i, true);
    }
    let value = if negative { (magnitude as i128).wrapping_neg() as i64 } else { magnitude as i64 };
    (value, i, false)
}

/// Redis's `string2ll`: an optional `-`, digits without leading zeros, nothing else.
fn string2ll(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() >= 21 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s.strip_prefix(b"-") {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    if !matches!(digits.first(), Some(b'1'..=b'9')) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &b in digits {
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
    }
    if negative {
        if v > 1 << 63 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// Redis's `memtoull` on a C string: digits and an optional b/k/kb/m/mb/g/gb unit. As in
/// Redis, missing digits count as 0, a too-large number saturates and the unit then wraps.
fn memtoull(s: &[u8]) -> Option<u64> {
    if s.first() == Some(&b'-') {
        return None;
    }
    let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
    let unit = &s[digits..];
    let multiplier: u64 = match unit.to_ascii_lowercase().as_slice() {
        b"" | b"b" => 1,
        b"k" => 1000,
        b"kb" => 1024,
        b"m" => 1000 * 1000,
        b"mb" => 1024 * 1024,
        b"g" => 1000 * 1000 * 1000,
        b"gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    if digits >= 128 {
        return None;
    }
    let value = s[..digits].iter().fold(0u64, |v, &b| v.saturating_mul(10).saturating_add((b - b'0') as u64));
    Some(value.wrapping_mul(multiplier))
}

/// Parses a memory size the way Redis does (`1gb`, `512mb`, `100k`, `42`; k = 1000,
/// kb = 1024, ...). Redis's quirks are kept: `""` and a bare unit are 0, a number too large
/// for 64 bits saturates before the unit multiplies (wrapping).
pub fn parse_memory(s: &str) -> Option<u64> {
    memtoull(cstr(s.as_bytes()))
}

/// C's `strtod` accepting the whole input, as Redis's `string2d` requires: no leading
/// space, no NaN, and neither overflow nor underflow to zero.
fn string2d(s: &[u8]) -> Option<f64> {
    if s.is_empty() || is_c_space(s[0]) || s.contains(&0) {
        return None;
    }
    let text = std::str::from_utf8(s).ok()?;
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let negative = text.starts_with('-');
    let lower = body.to_ascii_lowercase();
    let value = if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if let Some(hex) = lower.strip_prefix("0x") {
        parse_hex_float(hex)?
    } else {
        // Decimal: digits, optional fraction, optional exponent with digits.
        let bytes = body.as_bytes();
        let mut i = 0;
        let int_digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        i += int_digits;
        let mut frac_digits = 0;
        if bytes.get(i) == Some(&b'.') {
            frac_digits = bytes[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
            i += 1 + frac_digits;
        }
        if int_digits + frac_digits == 0 {
            return None;
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(bytes.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let exp_digits = bytes[j.min(bytes.len())..].iter().take_while(|b| b.is_ascii_digit()).count();
            if exp_digits == 0 {
                return None;
            }
            i = j + exp_digits;
        }
        if i != bytes.len() {
            return None;
        }
        let v: f64 = body.parse().ok()?;
        let mantissa_nonzero = bytes.iter().take_while(|b| !matches!(b, b'e' | b'E')).any(|b| matches!(b, b'1'..=b'9'));
        if v.is_infinite() || (v == 0.0 && mantissa_nonzero) {
            return None; // ERANGE
        }
        v
    };
    let value = if negative { -value } else { value };
    (!value.is_nan()).then_some(value)
}

/// The part of a C hexadecimal float after `0x` (lowercased).
fn parse_hex_float(s: &str) -> Option<f64> {
    let (mantissa, exponent) = match s.split_once('p') {
        Some((m, e)) => (m, Some(e)),
        None => (s, None),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.len() + frac_part.len() == 0
        || !int_part.bytes().chain(frac_part.bytes()).all(|b| b.is_ascii_hexdigit())
    {
        return None;
    }
    let mut value = 0f64;
    for b in int_part.bytes().chain(frac_part.bytes()) {
        value = value * 16.0 + (b as char).to_digit(16)? as f64;
    }
    let mut exp: i64 = -4 * frac_part.len() as i64;
    if let Some(e) = exponent {
        let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: i64 = digits.parse::<i64>().unwrap_or(i64::MAX / 2).min(100_000);
        exp += if e.starts_with('-') { -n } else { n };
    }
    let v = value * 2f64.powi(exp.clamp(-100_000, 100_000) as i32);
    if v.is_infinite() || (v == 0.0 && value != 0.0) {
        return None;
    }
    Some(v)
}

/// `%f` with trailing zeros (and a trailing dot) removed, as Redis prints percentiles.
fn format_percentile(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0');
    s.strip_suffix('.').unwrap_or(s).to_string()
}

/// Redis's `sdssplitargs`: words separated by blanks, with "double" quotes (and \n, \xHH, ...
/// escapes) and 'single' quotes. None for unbalanced quotes.
pub(crate) fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let line = cstr(line);
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let mut words = Vec::new();
    let mut i = 0;
    loop {
        while i < line.len() && is_c_space(line[i]) {
            i += 1;
        }
        if i >= line.len() {
            return Some(words);
        }
        let (mut in_double, mut in_single) = (false, false);
        let mut word = Vec::new();
        loop {
            let c = at(i);
            if in_double {
                if c == b'\\' && at(i + 1) == b'x' && at(i + 2).is_ascii_hexdigit() && at(i + 3).is_ascii_hexdigit() {
                    let hex = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
                    word.push(hex(at(i + 2)) * 16 + hex(at(i + 3)));
                    i += 3;
                } else if c == b'\\' && at(i + 1) != 0 {
                    i += 1;
                    word.push(match at(i) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        other => other,
                    });
                } else if c == b'"' {
                    if at(i + 1) != 0 && !is_c_space(at(i + 1)) {
                        return None;
                    }
                    i += 1;
                    break;
                } else if c == 0 {
                    return None;
                } else {
                    word.push(c);
                }
            } else if in_single {
                if c == b'\\' && at(i + 1) == b'\'' {
                    i += 1;
                    word.push(b'\'');
                } else if c == b'\'' {
                    if at(i + 1) != 0 && !is_c_space(at(i + 1)) {
                        return None;
                    }
                    i += 1;
                    break;
                } else if c == 0 {
                    return None;
                } else {
                    word.push(c);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => {
                        if c != 0 {
                            i += 1;
                        }
                        break;
                    }
                    b'"' => in_double = true,
                    b'\'' => in_single = true,
                    _ => word.push(c),
                }
            }
            i += 1;
        }
        words.push(word);
    }
}

/// Redis's `sdssplitlen(value, " ")`, used by CONFIG SET for multi-word parameters: empty
/// input gives no words, and every single space separates (so "a  b" has an empty word).
fn split_spaces(value: &[u8]) -> Vec<&[u8]> {
    if value.is_empty() {
        Vec::new()
    } else {
        value.split(|&b| b == b' ').collect()
    }
}

/// `strerror` text for an I/O error (Rust's message without its " (os error N)" suffix).
pub(crate) fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(n) => s[..n].to_string(),
        None => s,
    }
}

/// Error text as Redis's addReplyErrorFormat leaves it: CR and LF become spaces.
fn one_line(s: String) -> String {
    if s.contains(['\r', '\n']) {
        s.replace(['\r', '\n'], " ")
    } else {
        s
    }
}

// Keyspace notification classes (NOTIFY_* in Redis).
const NOTIFY_KEYSPACE: i64 = 1 << 0;
const NOTIFY_KEYEVENT: i64 = 1 << 1;
const NOTIFY_GENERIC: i64 = 1 << 2;
const NOTIFY_STRING: i64 = 1 << 3;
const NOTIFY_LIST: i64 = 1 << 4;
const NOTIFY_SET: i64 = 1 << 5;
const NOTIFY_HASH: i64 = 1 << 6;
const NOTIFY_ZSET: i64 = 1 << 7;
const NOTIFY_EXPIRED: i64 = 1 << 8;
const NOTIFY_EVICTED: i64 = 1 << 9;
const NOTIFY_STREAM: i64 = 1 << 10;
const NOTIFY_KEY_MISS: i64 = 1 << 11;
const NOTIFY_MODULE: i64 = 1 << 13;
const NOTIFY_NEW: i64 = 1 << 14;
const NOTIFY_ALL: i64 = NOTIFY_GENERIC
    | NOTIFY_STRING
    | NOTIFY_LIST
    | NOTIFY_SET
    | NOTIFY_HASH
    | NOTIFY_ZSET
    | NOTIFY_EXPIRED
    | NOTIFY_EVICTED
    | NOTIFY_STREAM
    | NOTIFY_MODULE;

fn keyspace_events_flags(classes: &[u8]) -> Option<i64> {
    let mut flags = 0;
    for &c in classes {
        flags |= match c {
            b'A' => NOTIFY_ALL,
            b'g' => NOTIFY_GENERIC,
            b'$' => NOTIFY_STRING,
            b'l' => NOTIFY_LIST,
            b's' => NOTIFY_SET,
            b'h' => NOTIFY_HASH,
            b'z' => NOTIFY_ZSET,
            b'x' => NOTIFY_EXPIRED,
            b'e' => NOTIFY_EVICTED,
            b'K' => NOTIFY_KEYSPACE,
            b'E' => NOTIFY_KEYEVENT,
            b't' => NOTIFY_STREAM,
            b'm' => NOTIFY_KEY_MISS,
            b'd' => NOTIFY_MODULE,
            b'n' => NOTIFY_NEW,
            _ => return None,
        };
    }
    Some(flags)
}

/// Redis's keyspaceEventsFlagsToString: "A" stands for all type classes (and then hides
/// `n`), followed by K, E, m.
fn keyspace_events_string(flags: i64) -> String {
    let mut out = String::new();
    if flags & NOTIFY_ALL == NOTIFY_ALL {
        out.push('A');
    } else {
        for (bit, c) in [
            (NOTIFY_GENERIC, 'g'),
            (NOTIFY_STRING, '$'),
            (NOTIFY_LIST, 'l'),
            (NOTIFY_SET, 's'),
            (NOTIFY_HASH, 'h'),
            (NOTIFY_ZSET, 'z'),
            (NOTIFY_EXPIRED, 'x'),
            (NOTIFY_EVICTED, 'e'),
            (NOTIFY_STREAM, 't'),
            (NOTIFY_MODULE, 'd'),
            (NOTIFY_NEW, 'n'),
        ] {
            if flags & bit != 0 {
                out.push(c);
            }
        }
    }
    for (bit, c) in [(NOTIFY_KEYSPACE, 'K'), (NOTIFY_KEYEVENT, 'E'), (NOTIFY_KEY_MISS, 'm')] {
        if flags & bit != 0 {
            out.push(c);
        }
    }
    out
}

/// Redis's configEnumGetValue: None when a word is unknown (or the count is wrong).
fn enum_value(options: &[(&str, i64)], words: &[&[u8]], bitflags: bool) -> Option<i64> {
    if words.is_empty() || (!bitflags && words.len() != 1) {
        return None;
    }
    let mut value = 0;
    for word in words {
        let word = cstr(word);
        let mut matched = false;
        for (name, v) in options {
            if word.eq_ignore_ascii_case(name.as_bytes()) {
                value |= v;
                matched = true;
            }
        }
        if !matched {
            return None;
        }
    }
    Some(value)
}

/// Redis's configEnumGetName.
fn enum_name(options: &[(&str, i64)], value: i64, bitflags: bool) -> String {
    let mut names: Option<String> = None;
    let mut unmatched = value;
    for &(name, v) in options {
        if value == v {
            return name.to_string();
        }
        if bitflags && v != 0 && v == unmatched & v {
            names = Some(match names {
                Some(n) => format!("{n} {name}"),
                None => name.to_string(),
            });
            unmatched &= !v;
        }
    }
    match names {
        Some(n) if unmatched == 0 => n,
        _ => "unknown".to_string(),
    }
}

fn enum_error(options: &[(&str, i64)]) -> String {
    let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
    let mut s = format!("argument(s) must be one of the following: {}", names.join(", "));
    s.truncate(255); // Redis's 256-byte buffer; the names are ASCII.
    s
}

const CLIENT_CLASSES: [&str; 3] = ["normal", "slave", "pubsub"];

/// Parses a client-output-buffer-limit value as stored (always well formed).
fn buffer_limits(stored: &str) -> [(u64, u64, i64); 3] {
    let mut limits = [(0, 0, 0), (268435456, 67108864, 60), (33554432, 8388608, 60)];
    let words: Vec<&str> = stored.split(' ').collect();
    for chunk in words.chunks_exact(4) {
        if let Some(class) = CLIENT_CLASSES.iter().position(|c| *c == chunk[0]) {
            limits[class] =
                (chunk[1].parse().unwrap_or(0), chunk[2].parse().unwrap_or(0), chunk[3].parse().unwrap_or(0));
        }
    }
    limits
}

// ---------------------------------------------------------------------------------------

/// Whether a parameter (name or alias, any case) is sensitive (`masterauth`, `masteruser`,
/// `requirepass`): Redis redacts the value following it in CONFIG SET from the slow log,
/// MONITOR and command logs, even when the command fails.
pub fn is_sensitive(name: &[u8]) -> bool {
    entry_bytes(name).is_some_and(|e| DIRECTIVES[tables().entries[e].index].flags & SENSITIVE != 0)
}

/// Who runs a CONFIG SET, for the checks that depend on it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SetContext {
    /// The client is on a unix socket or connected from 127.0.0.1 / ::1 (Redis's
    /// `islocalClient`): with `enable-protected-configs local`, only such clients may set
    /// protected parameters (`dir`, `dbfilename`).
    pub local_client: bool,
    /// The dataset is loading: parameters flagged deny-loading (`appendonly`, `dir`,
    /// `repl-diskless-load`) are refused with `-LOADING`.
    pub loading: bool,
}

#[derive(Debug, Clone)]
pub struct Config {
    /// One value per entry of `DIRECTIVES`.
    slots: Vec<Slot>,
    /// A `save` line was read from the config file or command line, so later ones append
    /// instead of replacing the default (Redis's `save_loaded`).
    save_loaded: bool,
    /// `rename-command OLD NEW` lines, in order (config file and command line only, as in
    /// Redis: applied to the command table when the engine starts; NEW empty removes OLD).
    pub renamed_commands: Vec<(String, String)>,
    /// `user <name> rules...` lines (config file and command line), syntax-checked: the
    /// name, then the rules with selectors merged. Loaded when the engine starts.
    pub users: Vec<Vec<Vec<u8>>>,
}

impl Default for Config {
    fn default() -> Self {
        Self { slots: tables().defaults.clone(), save_loaded: false, renamed_commands: Vec::new(), users: Vec::new() }
    }
}

/// The parameters that make the TLS configuration (`tls-port` aside): CONFIG SET of any
/// has the host build it anew (`Engine::reconfigure_tls`).
pub const TLS_PARAMETERS: &[&str] = &[
    "tls-cert-file",
    "tls-key-file",
    "tls-key-file-pass",
    "tls-client-cert-file",
    "tls-client-key-file",
    "tls-client-key-file-pass",
    "tls-dh-params-file",
    "tls-ca-cert-file",
    "tls-ca-cert-dir",
    "tls-auth-clients",
    "tls-protocols",
    "tls-ciphers",
    "tls-ciphersuites",
    "tls-prefer-server-ciphers",
    "tls-session-caching",
    "tls-session-cache-size",
    "tls-session-cache-timeout",
    "tls-replication",
    "tls-cluster",
];

impl Config {
    /// Sets a parameter from a config-file line or `--name value` arguments (the words after
    /// the name). Errors carry Redis's wording for config-file failures ("Bad directive or
    /// wrong number of arguments", "wrong number of arguments", "argument must be 'yes' or
    /// 'no'", ...). Immutable and protected parameters can be set this way. As in Redis, a
    /// multi-word parameter given one non-empty argument has it split like a config line
    /// (`--save "60 10 300 1"`), and each `save` line after the first appends to the list.
    pub fn set(&mut self, name: &str, args: &[String]) -> Result<(), String> {
        if name.eq_ignore_ascii_case("rename-command") {
            let [old, new] = args else { return Err("Bad directive or wrong number of arguments".into()) };
            self.renamed_commands.push((old.clone(), new.clone()));
            return Ok(());
        }
        if name.eq_ignore_ascii_case("user") {
            if args.is_empty() {
                return Err("Bad directive or wrong number of arguments".into());
            }
            let words: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
            let line = crate::cmd::acl::check_user_directive(&words, &self.users)?;
            self.users.push(line);
            return Ok(());
        }
        let Some(index) = index_of(name) else {
            if args.len() == 1 && DEPRECATED.iter().any(|d| d.eq_ignore_ascii_case(name)) {
                return Ok(());
            }
            return Err("Bad directive or wrong number of arguments".into());
        };
        let directive = &DIRECTIVES[index];
        let multi = directive.flags & MULTI_ARG != 0;
        if !multi && args.len() != 1 {
            return Err("wrong number of arguments".into());
        }
        let split: Vec<Vec<u8>>;
        let words: Vec<&[u8]> = if multi && args.len() == 1 && !args[0].is_empty() {
            // Unbalanced quotes give no words, as in Redis.
            split = split_args(args[0].as_bytes()).unwrap_or_default();
            split.iter().map(Vec::as_slice).collect()
        } else {
            args.iter().map(String::as_bytes).collect()
        };
        let slot = self.parse(index, &words, true)?;
        self.slots[index] = slot;
        if directive.kind == Kind::Save {
            self.save_loaded = true;
        }
        Ok(())
    }

    /// CONFIG SET with one or more (name, value) pairs, for a client that is not local and
    /// while not loading; see [`Config::set_many_in`].
    pub fn set_many(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<(), String> {
        self.set_many_in(pairs, SetContext::default())
    }

    /// CONFIG SET with Redis 7.0's semantics: every name is checked first (the first problem
    /// wins: unknown name, immutable or protected parameter, deny-loading, a name given
    /// twice), then the values are validated and applied in order; if any fails, nothing
    /// changes. Errors are Redis's reply lines without the leading `-`:
    ///
    /// - `ERR Unknown option or number of arguments for CONFIG SET - 'foo'`
    /// - `ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config`
    /// - `ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config`
    /// - `ERR CONFIG SET failed (possibly related to argument 'MAXMEMORY') - duplicate parameter`
    /// - `ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value`
    /// - `LOADING Redis is loading the dataset in memory`
    ///
    /// As in Redis, the name in the first four is the caller's spelling, and in validation
    /// errors the lowercase name or alias used. A parameter and its alias are distinct names
    /// for the duplicate check (Redis accepts `replica-read-only yes slave-read-only no`).
    pub fn set_many_in(&mut self, pairs: &[(&[u8], &[u8])], ctx: SetContext) -> Result<(), String> {
        let tables = tables();
        let mut chosen: Vec<usize> = Vec::with_capacity(pairs.len());
        for (name, _) in pairs {
            let shown = || lossy(cstr(name));
            let Some(e) = entry_bytes(name) else {
                return Err(one_line(format!(
                    "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
                    shown()
                )));
            };
            let directive = &DIRECTIVES[tables.entries[e].index];
            let failure = |why: &str| {
                Err(one_line(format!("ERR CONFIG SET failed (possibly related to argument '{}') - {why}", shown())))
            };
            if directive.flags & IMMUTABLE != 0 {
                return failure("can't set immutable config");
            }
            if directive.flags & PROTECTED != 0
                && !self.protected_action_allowed("enable-protected-configs", ctx.local_client)
            {
                return failure("can't set protected config");
            }
            if ctx.loading && directive.flags & DENY_LOADING != 0 {
                return Err("LOADING Redis is loading the dataset in memory".into());
            }
            if chosen.contains(&e) {
                return failure("duplicate parameter");
            }
            chosen.push(e);
        }
        let mut next = self.clone();
        for (&e, (_, value)) in chosen.iter().zip(pairs) {
            let Entry { name, index } = tables.entries[e];
            let words = if DIRECTIVES[index].flags & MULTI_ARG != 0 { split_spaces(value) } else { vec![*value] };
            match next.parse(index, &words, false) {
                Ok(slot) => next.slots[index] = slot,
                Err(why) => {
                    return Err(one_line(format!(
                        "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
                    )))
                }
            }
        }
        *self = next;
        Ok(())
    }

    /// CONFIG GET: (name, value) for every parameter matching one of the patterns, as Redis
    /// 7.0.15 builds its reply. A pattern with a glob character (`*`, `?`, `[`) is matched
    /// case-insensitively against every name and alias except hidden parameters, listing
    /// the lowercase name that matched (a parameter and its alias are listed separately when
    /// both match). A plain name matches a name or alias exactly (case-insensitively, hidden
    /// ones included) and is listed as the caller spelled it. A name already listed
    /// (case-insensitively) is not listed again.
    ///
    /// Order: Redis emits its reply in the iteration order of a hash table with a random
    /// per-process seed, so no order is reproducible; here plain names come in request
    /// order and pattern matches in config.c's table order (each alias after its parameter).
    pub fn get_matching(&self, patterns: &[&[u8]]) -> Vec<(String, String)> {
        let tables = tables();
        let mut listed: HashSet<String> = HashSet::new();
        let mut out: Vec<(String, usize)> = Vec::new();
        for pattern in patterns {
            let pattern_c = cstr(pattern);
            if !pattern_c.iter().any(|b| matches!(b, b'[' | b'*' | b'?')) {
                let Ok(name) = std::str::from_utf8(pattern) else { continue };
                let key = name.to_ascii_lowercase();
                if listed.contains(&key) {
                    continue;
                }
                if let Some(e) = entry(name) {
                    listed.insert(key);
                    out.push((name.to_string(), tables.entries[e].index));
                }
                continue;
            }
            for e in &tables.entries {
                if DIRECTIVES[e.index].flags & HIDDEN != 0 || listed.contains(e.name) {
                    continue;
                }
                if glob_match(pattern_c, e.name.as_bytes(), true) {
                    listed.insert(e.name.to_string());
                    out.push((e.name.to_string(), e.index));
                }
            }
        }
        out.into_iter().map(|(name, index)| (name, self.shown(index))).collect()
    }

    /// The value as CONFIG GET prints it.
    fn shown(&self, index: usize) -> String {
        let value = &self.slots[index].text;
        if DIRECTIVES[index].kind != Kind::Dir {
            return value.clone();
        }
        // Redis shows getcwd(); quince does not chdir, so resolve against the current one.
        let path = std::path::Path::new(value);
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            match std::env::current_dir() {
                Ok(cwd) => cwd.join(path),
                Err(_) => return String::new(),
            }
        };
        std::fs::canonicalize(&absolute).unwrap_or(absolute).to_string_lossy().into_owned()
    }

    /// Parameters whose value differs from the default (for CONFIG REWRITE), in table order.
    pub fn changed(&self) -> Vec<(&'static str, &str)> {
        let defaults = &tables().defaults;
        DIRECTIVES
            .iter()
            .zip(self.slots.iter().zip(defaults))
            .filter(|(_, (slot, default))| slot.text != default.text)
            .map(|(d, (slot, _))| (d.name, slot.text.as_str()))
            .collect()
    }

    /// The stored value of a parameter (by name or alias, any case), as CONFIG GET prints it
    /// — except `dir`, which is given as stored (`./` by default, else an absolute path).
    pub fn get(&self, name: &str) -> Option<&str> {
        index_of(name).map(|i| self.slots[i].text.as_str())
    }

    /// The value as CONFIG GET shows it (`dir` absolute).
    pub fn get_shown(&self, name: &str) -> Option<String> {
        index_of(name).map(|i| self.shown(i))
    }

    /// The number behind a parameter, without parsing: integers and memory sizes as set
    /// (memory above `i64::MAX`, possible for `maxmemory`, wraps negative: see
    /// [`Config::get_u64`]); a percentage (`maxmemory-clients 10%`) as Redis stores it,
    /// negated (-10); yes/no as 1/0; enums as Redis's constant (`loglevel` notice = 2,
    /// `maxmemory-policy` as its MAXMEMORY_* value, shutdown-on-* as SHUTDOWN_* bits);
    /// `notify-keyspace-events` as Redis's NOTIFY_* bits; 0 for strings and the other
    /// special parameters. Panics only for an unknown name (a programming error).
    pub fn get_int(&self, name: &str) -> i64 {
        match index_of(name) {
            Some(i) => self.slots[i].int,
            None => panic!("unknown config parameter {name}"),
        }
    }

    /// A memory or other non-negative numeric parameter as unsigned (`maxmemory` may exceed
    /// `i64::MAX`). Panics only for an unknown name.
    pub fn get_u64(&self, name: &str) -> u64 {
        self.get_int(name) as u64
    }

    /// Whether a yes/no parameter is yes.
    pub fn get_bool(&self, name: &str) -> bool {
        self.get(name) == Some("yes")
    }

    /// Redis's allowProtectedAction for `enable-protected-configs`, `enable-debug-command`
    /// or `enable-module-command`: `yes`, or `local` for a local client.
    pub fn protected_action_allowed(&self, setting: &str, local_client: bool) -> bool {
        match self.get(setting) {
            Some("yes") => true,
            Some("local") => local_client,
            _ => false,
        }
    }

    /// Every parameter (quince's and hidden ones included, aliases not) with its stored
    /// value, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        tables().sorted.iter().map(move |&i| (DIRECTIVES[i].name, self.slots[i].text.as_str()))
    }

    fn parse(&self, index: usize, words: &[&[u8]], from_file: bool) -> Result<Slot, String> {
        self.parse_with(&DIRECTIVES[index], words, from_file, Some(index))
    }

    /// Validates and normalizes a value (Redis's `set` functions, with their error texts).
    /// `index` is None only while building the defaults.
    fn parse_with(
        &self,
        directive: &Directive,
        words: &[&[u8]],
        from_file: bool,
        index: Option<usize>,
    ) -> Result<Slot, String> {
        let current = index.and_then(|i| self.slots.get(i)).map(|s| s.text.as_str()).unwrap_or(directive.default);
        let first = words.first().copied().unwrap_or(b"");
        match directive.kind {
            Kind::Bool => {
                let word = cstr(first);
                let yes = if word.eq_ignore_ascii_case(b"yes") {
                    true
                } else if word.eq_ignore_ascii_case(b"no") {
                    false
                } else {
                    return Err("argument must be 'yes' or 'no'".into());
                };
                if yes && directive.check == Check::NoDefrag {
                    return Err(
                        "Active defragmentation cannot be enabled: it requires a Redis server compiled with a \
                                modified Jemalloc like the one shipped by default with the Redis source distribution"
                            .into(),
                    );
                }
                Ok(Slot::new(if yes { "yes" } else { "no" }.into(), yes as i64))
            }
            Kind::Num { min, max, unsigned, flags } => {
                let mut value = parse_number(first, flags)?;
                check_bounds(value, min, max, unsigned, flags)?;
                if directive.check == Check::Hz {
                    value = value.clamp(1, 500);
                }
                if directive.check == Check::BacklogSize && !from_file {
                    value = value.max(16 * 1024);
                }
                let text = if flags & PCT != 0 && value < 0 {
                    format!("{}%", -(value as i128))
                } else if flags & MEM != 0 {
                    (value as u64).to_string()
                } else if flags & OCT != 0 {
                    format!("{:o}", value as u64)
                } else {
                    value.to_string()
                };
                Ok(Slot::new(text, value))
            }
            Kind::Enum(options) | Kind::Flags(options) => {
                let bitflags = matches!(directive.kind, Kind::Flags(_));
                let value = enum_value(options, words, bitflags).ok_or_else(|| enum_error(options))?;
                if directive.check == Check::ShutdownFlags && value & SHUTDOWN_SAVE != 0 && value & SHUTDOWN_NOSAVE != 0
                {
                    return Err("shutdown options SAVE and NOSAVE can't be used simultaneously".into());
                }
                Ok(Slot::new(enum_name(options, value, bitflags), value))
            }
            Kind::Text => {
                let value = if directive.flags & SDS != 0 { first } else { cstr(first) };
                self.check_text(directive.check, value)?;
                Ok(Slot::new(lossy(value), 0))
            }
            Kind::Dir => {
                if words.len() != 1 {
                    return Err("wrong number of arguments".into());
                }
                let path = std::path::PathBuf::from(lossy(cstr(first)));
                match std::fs::metadata(&path) {
                    Err(e) => Err(strerror(&e)),
                    Ok(meta) if !meta.is_dir() => Err("Not a directory".into()),
                    Ok(_) => {
                        let absolute = std::fs::canonicalize(&path).map_err(|e| strerror(&e))?;
                        Ok(Slot::new(absolute.to_string_lossy().into_owned(), 0))
                    }
                }
            }
            Kind::Save => self.parse_save(words, current, from_file),
            Kind::ClientOutputBufferLimit => {
                if !words.len().is_multiple_of(4) {
                    return Err("Wrong number of arguments in buffer limit configuration.".into());
                }
                let mut limits = buffer_limits(current);
                let mut updates = Vec::new();
                for chunk in words.chunks_exact(4) {
                    let class = cstr(chunk[0]);
                    let class = if class.eq_ignore_ascii_case(b"normal") {
                        0
                    } else if class.eq_ignore_ascii_case(b"slave") || class.eq_ignore_ascii_case(b"replica") {
                        1
                    } else if class.eq_ignore_ascii_case(b"pubsub") {
                        2
                    } else {
                        return Err("Invalid client class specified in buffer limit configuration.".into());
                    };
                    let hard = memtoull(cstr(chunk[1]));
                    let soft = memtoull(cstr(chunk[2]));
                    let seconds_text = cstr(chunk[3]);
                    let (seconds, end, _) = strtoll(seconds_text, 10);
                    // Redis keeps the seconds in an int.
                    let seconds = seconds as i32;
                    match (hard, soft) {
                        (Some(hard), Some(soft)) if seconds >= 0 && end == seconds_text.len() => {
                            updates.push((class, (hard, soft, seconds as i64)));
                        }
                        _ => {
                            return Err(
                                "Error in hard, soft or soft_seconds setting in buffer limit configuration.".into()
                            )
                        }
                    }
                }
                for (class, limit) in updates {
                    limits[class] = limit;
                }
                let text = CLIENT_CLASSES
                    .iter()
                    .zip(limits)
                    .map(|(class, (hard, soft, seconds))| format!("{class} {hard} {soft} {seconds}"))
                    .collect::<Vec<_>>()
                    .join(" ");
                Ok(Slot::new(text, 0))
            }
            Kind::OomScoreAdjValues => {
                if words.len() != 3 {
                    return Err("wrong number of arguments".into());
                }
                let mut values = Vec::with_capacity(3);
                for word in words {
                    let word = cstr(word);
                    let (value, end, _) = strtoll(word, 10);
                    if end != word.len() || !(-2000..=2000).contains(&value) {
                        return Err("Invalid oom-score-adj-values, elements must be between -2000 and 2000.".into());
                    }
                    values.push(value.to_string());
                }
                Ok(Slot::new(values.join(" "), 0))
            }
            Kind::NotifyKeyspaceEvents => {
                if words.len() != 1 {
                    return Err("wrong number of arguments".into());
                }
                let flags = keyspace_events_flags(cstr(first))
                    .ok_or_else(|| "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".to_string())?;
                Ok(Slot::new(keyspace_events_string(flags), flags))
            }
            Kind::Bind => {
                if words.len() > 16 {
                    return Err("Too many bind addresses specified.".into());
                }
                let words = if words.len() == 1 && first.is_empty() { &[][..] } else { words };
                Ok(Slot::new(words.iter().map(|w| lossy(cstr(w))).collect::<Vec<_>>().join(" "), 0))
            }
            Kind::ReplicaOf => {
                if words.len() != 2 {
                    return Err("wrong number of arguments".into());
                }
                let (host, port) = (cstr(words[0]), cstr(words[1]));
                if host.eq_ignore_ascii_case(b"no") && port.eq_ignore_ascii_case(b"one") {
                    return Ok(Slot::new(String::new(), 0));
                }
                let (value, end, _) = strtoll(port, 10);
                // Redis keeps the port in an int.
                let value = value as i32;
                if !(0..=65535).contains(&value) || end != port.len() {
                    return Err("Invalid master port".into());
                }
                // Redis formats into a 256-byte buffer.
                let mut shown = host.to_vec();
                shown.extend_from_slice(format!(" {value}").as_bytes());
                shown.truncate(255);
                Ok(Slot::new(lossy(&shown), 0))
            }
            Kind::LatencyPercentiles => {
                let words = if words.len() == 1 && first.is_empty() { &[][..] } else { words };
                let mut shown = Vec::with_capacity(words.len());
                for word in words {
                    let value = string2d(word)
                        .ok_or_else(|| "Invalid latency-tracking-info-percentiles parameters".to_string())?;
                    if !(0.0..=100.0).contains(&value) {
                        return Err(
                            "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]".into()
                        );
                    }
                    shown.push(format_percentile(value));
                }
                Ok(Slot::new(shown.join(" "), 0))
            }
        }
    }

    fn check_text(&self, check: Check, value: &[u8]) -> Result<(), String> {
        let is_path = value.contains(&b'/') || value.contains(&b'\\');
        match check {
            Check::DbFilename if is_path => Err("dbfilename can't be a path, just a filename".into()),
            Check::AofFilename if value.is_empty() => Err("appendfilename can't be empty".into()),
            Check::AofFilename if is_path => Err("appendfilename can't be a path, just a filename".into()),
            Check::AofDirname if value.is_empty() => Err("appenddirname can't be empty".into()),
            Check::AofDirname if is_path => Err("appenddirname can't be a path, just a dirname".into()),
            Check::Hostname if value.len() >= 256 => Err("Hostnames must be less than 256 characters".into()),
            Check::Hostname if !value.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') => {
                Err("Hostnames may only contain alphanumeric characters, hyphens or dots".into())
            }
            Check::ProcTitle if !self.proc_title_valid(value) => {
                Err("template format is invalid or contains unknown variables".into())
            }
            _ => Ok(()),
        }
    }

    /// Redis's validateProcTitleTemplate: the template must expand (known `{variables}`,
    /// `{{` for a brace) to something other than spaces, with an empty title and this
    /// configuration's port, bind and unixsocket.
    fn proc_title_valid(&self, template: &[u8]) -> bool {
        // A plain search: this also runs while the tables (defaults included) are being built.
        let value = |name: &str| {
            let i = DIRECTIVES.iter().position(|d| d.name == name)?;
            self.slots.get(i).map(|s| (s.text.as_str(), s.int))
        };
        let mut out: Vec<u8> = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            let Some(open) = rest.iter().position(|&b| b == b'{') else {
                out.extend_from_slice(rest);
                break;
            };
            out.extend_from_slice(&rest[..open]);
            let after = &rest[open + 1..];
            match after.first() {
                None => return false,
                Some(b'{') => {
                    out.push(b'{');
                    rest = &after[1..];
                    continue;
                }
                Some(_) => {}
            }
            let Some(close) = after.iter().position(|&b| b == b'}') else { return false };
            let port = value("port").map_or(6379, |v| v.1);
            let tls_port = value("tls-port").map_or(0, |v| v.1);
            let expansion = match &after[..close] {
                b"title" => String::new(),
                b"listen-addr" if port != 0 || tls_port != 0 => {
                    let bind = value("bind").map_or("* -::*", |v| v.0);
                    let first = bind.split(' ').next().filter(|a| !a.is_empty()).unwrap_or("*");
                    format!("{first}:{}", if port != 0 { port } else { tls_port })
                }
                b"listen-addr" => format!("unixsocket:{}", value("unixsocket").map_or("", |v| v.0)),
                b"server-mode" if value("cluster-enabled").is_some_and(|v| v.1 != 0) => "[cluster]".into(),
                b"server-mode" => String::new(),
                b"config-file" => "-".into(),
                b"port" => port.to_string(),
                b"tls-port" => tls_port.to_string(),
                b"unixsocket" => value("unixsocket").map_or("", |v| v.0).to_string(),
                _ => return false,
            };
            out.extend_from_slice(expansion.as_bytes());
            rest = &after[close + 1..];
        }
        out.iter().any(|&b| b != b' ')
    }

    /// Redis's setConfigSaveOption: pairs of seconds (>= 1) and changes (>= 0), as read by
    /// `strtoll` (so "+100" and "-0" pass). In a config file the first `save` line replaces
    /// the default and later ones append; `save ""` clears.
    fn parse_save(&self, words: &[&[u8]], current: &str, from_file: bool) -> Result<Slot, String> {
        let clear = words.len() == 1 && cstr(words[0]).is_empty();
        let words = if clear { &[][..] } else { words };
        if !words.len().is_multiple_of(2) {
            return Err("Invalid save parameters".into());
        }
        let mut pairs: Vec<(i64, i32)> = Vec::new();
        for (j, word) in words.iter().enumerate() {
            let word = cstr(word);
            let (value, end, _) = strtoll(word, 10);
            if end != word.len() || (j % 2 == 0 && value < 1) || (j % 2 == 1 && value < 0) {
                return Err("Invalid save parameters".into());
            }
            if j % 2 == 0 {
                pairs.push((value, 0));
            } else if let Some(last) = pairs.last_mut() {
                // Redis keeps the changes in an int.
                last.1 = value as i32;
            }
        }
        let mut text = if from_file && self.save_loaded && !clear { current.to_string() } else { String::new() };
        for (seconds, changes) in pairs {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&format!("{seconds} {changes}"));
        }
        Ok(Slot::new(text, 0))
    }
}

/// Redis's numericParseString, with its error texts.
fn parse_number(value: &[u8], flags: u8) -> Result<i64, String> {
    if flags & MEM != 0 {
        if let Some(v) = memtoull(cstr(value)) {
            return Ok(v as i64);
        }
    }
    if flags & PCT != 0 && value.len() > 1 && value.ends_with(b"%") {
        if let Some(v) = string2ll(&value[..value.len() - 1]).filter(|v| *v >= 0) {
            return Ok(-v);
        }
    }
    if flags & OCT != 0 {
        let c = cstr(value);
        let (v, end, overflow) = strtoll(c, 8);
        if !overflow && end == c.len() {
            return Ok(v);
        }
    }
    if flags == 0 {
        if let Some(v) = string2ll(value) {
            return Ok(v);
        }
    }
    Err(if flags & MEM != 0 && flags & PCT != 0 {
        "argument must be a memory or percent value"
    } else if flags & MEM != 0 {
        "argument must be a memory value"
    } else if flags & OCT != 0 {
        "argument couldn't be parsed as an octal number"
    } else {
        "argument couldn't be parsed into an integer"
    }
    .into())
}

/// Redis's numericBoundaryCheck, with its error texts.
fn check_bounds(value: i64, min: i128, max: i128, unsigned: bool, flags: u8) -> Result<(), String> {
    if unsigned {
        let v = value as u64 as i128;
        if v > max || v < min {
            return Err(if flags & OCT != 0 {
                format!("argument must be between {min:o} and {max:o} inclusive")
            } else {
                format!("argument must be between {min} and {max} inclusive")
            });
        }
    } else if flags & PCT != 0 && value < 0 {
        if (value as i128) < min {
            return Err(format!("percentage argument must be less or equal to {}", -min));
        }
    } else if (value as i128) > max || (value as i128) < min {
        return Err(format!("argument must be between {min} and {max} inclusive"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn set(c: &mut Config, pairs: &[(&str, &str)]) -> Result<(), String> {
        let pairs: Vec<(&[u8], &[u8])> = pairs.iter().map(|(a, b)| (a.as_bytes(), b.as_bytes())).collect();
        c.set_many(&pairs)
    }

    fn set_err(c: &mut Config, name: &str, value: &str) -> String {
        set(c, &[(name, value)]).expect_err(name)
    }

    fn get1(c: &Config, pattern: &str) -> String {
        let got = c.get_matching(&[pattern.as_bytes()]);
        assert_eq!(got.len(), 1, "{pattern}: {got:?}");
        got[0].1.clone()
    }

    fn failed(name: &str, why: &str) -> String {
        format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {why}")
    }

    #[test]
    fn defaults_and_validation() {
        let mut c = Config::default();
        assert_eq!(c.get_int("port"), 6379);
        // Redis's compiled-in default (redis.conf ships "127.0.0.1 -::1").
        assert_eq!(c.get("bind"), Some("* -::*"));
        assert_eq!(c.get_int("proto-max-bulk-len"), 512 * 1024 * 1024);
        c.set("PORT", &["7000".into()]).unwrap();
        assert_eq!(c.get_int("port"), 7000);
        assert!(c.set("port", &["70000".into()]).is_err());
        assert!(c.set("protected-mode", &["maybe".into()]).is_err());
        assert!(c.set("no-such-thing", &["1".into()]).is_err());
        c.set("proto-max-bulk-len", &["1mb".into()]).unwrap();
        assert_eq!(c.get_int("proto-max-bulk-len"), 1 << 20);
        c.set("save", &[]).unwrap();
        assert_eq!(c.get("save"), Some(""));
        c.set("hash-max-ziplist-entries", &["5".into()]).unwrap();
        assert_eq!(c.get("hash-max-listpack-entries"), Some("5"));
    }

    /// `redis-cli CONFIG GET '*'` from redis-server 7.0.15 (TLS build) started without a
    /// config file, sorted; only `dir` (the working directory) is left out.
    const REDIS_DEFAULTS: &str = "\
acl-pubsub-default=resetchannels|aclfile=|acllog-max-len=128|active-defrag-cycle-max=25|active-defrag-cycle-min=1|\
active-defrag-ignore-bytes=104857600|active-defrag-max-scan-fields=1000|active-defrag-threshold-lower=10|\
active-defrag-threshold-upper=100|active-expire-effort=1|activedefrag=no|activerehashing=yes|always-show-logo=no|\
aof-disable-auto-gc=no|aof-load-truncated=yes|aof-rewrite-incremental-fsync=yes|aof-timestamp-enabled=no|\
aof-use-rdb-preamble=yes|aof_rewrite_cpulist=|appenddirname=appendonlydir|appendfilename=appendonly.aof|\
appendfsync=everysec|appendonly=no|auto-aof-rewrite-min-size=67108864|auto-aof-rewrite-percentage=100|\
bgsave_cpulist=|bind=* -::*|bind-source-addr=|bio_cpulist=|busy-reply-threshold=5000|\
client-output-buffer-limit=normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60|\
client-query-buffer-limit=1073741824|cluster-allow-pubsubshard-when-down=yes|cluster-allow-reads-when-down=no|\
cluster-allow-replica-migration=yes|cluster-announce-bus-port=0|cluster-announce-hostname=|cluster-announce-ip=|\
cluster-announce-port=0|cluster-announce-tls-port=0|cluster-config-file=nodes.conf|cluster-enabled=no|\
cluster-link-sendbuf-limit=0|cluster-migration-barrier=1|cluster-node-timeout=15000|cluster-port=0|\
cluster-preferred-endpoint-type=ip|cluster-replica-no-failover=no|cluster-replica-validity-factor=10|\
cluster-require-full-coverage=yes|cluster-slave-no-failover=no|cluster-slave-validity-factor=10|\
crash-log-enabled=yes|crash-memcheck-enabled=yes|daemonize=no|databases=16|dbfilename=dump.rdb|disable-thp=yes|\
dynamic-hz=yes|enable-debug-command=no|enable-module-command=no|enable-protected-configs=no|\
hash-max-listpack-entries=512|hash-max-listpack-value=64|hash-max-ziplist-entries=512|hash-max-ziplist-value=64|\
hll-sparse-max-bytes=3000|hz=10|ignore-warnings=|io-threads=1|io-threads-do-reads=no|jemalloc-bg-thread=yes|\
latency-monitor-threshold=0|latency-tracking=yes|latency-tracking-info-percentiles=50 99 99.9|\
lazyfree-lazy-eviction=no|lazyfree-lazy-expire=no|lazyfree-lazy-server-del=no|lazyfree-lazy-user-del=no|\
lazyfree-lazy-user-flush=no|lfu-decay-time=1|lfu-log-factor=10|list-compress-depth=0|list-max-listpack-size=-2|\
list-max-ziplist-size=-2|logfile=|loglevel=notice|lua-time-limit=5000|masterauth=|masteruser=|maxclients=10000|\
maxmemory=0|maxmemory-clients=0|maxmemory-eviction-tenacity=10|maxmemory-policy=noeviction|maxmemory-samples=5|\
min-replicas-max-lag=10|min-replicas-to-write=0|min-slaves-max-lag=10|min-slaves-to-write=0|\
no-appendfsync-on-rewrite=no|notify-keyspace-events=|oom-score-adj=no|oom-score-adj-values=0 200 800|pidfile=|\
port=6379|proc-title-template={title} {listen-addr} {server-mode}|propagation-error-behavior=ignore|\
protected-mode=yes|proto-max-bulk-len=536870912|rdb-del-sync-files=no|rdb-save-incremental-fsync=yes|\
rdbchecksum=yes|rdbcompression=yes|repl-backlog-size=1048576|repl-backlog-ttl=3600|repl-disable-tcp-nodelay=no|\
repl-diskless-load=disabled|repl-diskless-sync=yes|repl-diskless-sync-delay=5|repl-diskless-sync-max-replicas=0|\
repl-ping-replica-period=10|repl-ping-slave-period=10|repl-timeout=60|replica-announce-ip=|replica-announce-port=0|\
replica-announced=yes|replica-ignore-disk-write-errors=no|replica-ignore-maxmemory=yes|replica-lazy-flush=no|\
replica-priority=100|replica-read-only=yes|replica-serve-stale-data=yes|replicaof=|requirepass=|\
sanitize-dump-payload=no|save=3600 1 300 100 60 10000|server_cpulist=|set-max-intset-entries=512|\
set-proc-title=yes|shutdown-on-sigint=default|shutdown-on-sigterm=default|shutdown-timeout=10|\
slave-announce-ip=|slave-announce-port=0|slave-ignore-maxmemory=yes|slave-lazy-flush=no|slave-priority=100|\
slave-read-only=yes|slave-serve-stale-data=yes|slaveof=|slowlog-log-slower-than=10000|slowlog-max-len=128|\
socket-mark-id=0|stop-writes-on-bgsave-error=yes|stream-node-max-bytes=4096|stream-node-max-entries=100|\
supervised=no|syslog-enabled=no|syslog-facility=local0|syslog-ident=redis|tcp-backlog=511|tcp-keepalive=300|\
timeout=0|tls-auth-clients=yes|tls-ca-cert-dir=|tls-ca-cert-file=|tls-cert-file=|tls-ciphers=|tls-ciphersuites=|\
tls-client-cert-file=|tls-client-key-file=|tls-client-key-file-pass=|tls-cluster=no|tls-dh-params-file=|\
tls-key-file=|tls-key-file-pass=|tls-port=0|tls-prefer-server-ciphers=no|tls-protocols=|tls-replication=no|\
tls-session-cache-size=20480|tls-session-cache-timeout=300|tls-session-caching=yes|tracking-table-max-keys=1000000|\
unixsocket=|unixsocketperm=0|zset-max-listpack-entries=128|zset-max-listpack-value=64|\
zset-max-ziplist-entries=128|zset-max-ziplist-value=64";

    #[test]
    fn config_get_star_matches_redis_defaults() {
        let c = Config::default();
        let mut got: Vec<String> = c
            .get_matching(&[b"*"])
            .into_iter()
            .filter(|(name, _)| name != "dir")
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        got.sort();
        let mut expected: Vec<&str> = REDIS_DEFAULTS.split('|').collect();
        expected.sort();
        assert_eq!(got, expected);
        let all = c.get_matching(&[b"*"]);
        assert_eq!(all.len(), expected.len() + 1);
        let dir = &all.iter().find(|(n, _)| n == "dir").expect("dir listed").1;
        assert!(dir.starts_with('/'), "{dir}");
    }

    #[test]
    fn defaults_round_trip_through_their_own_parser() {
        let c = Config::default();
        for (i, directive) in DIRECTIVES.iter().enumerate() {
            if directive.kind == Kind::Dir {
                continue;
            }
            let words: Vec<&[u8]> = if directive.kind == Kind::ReplicaOf {
                vec![b"no", b"one"]
            } else if directive.flags & MULTI_ARG != 0 {
                split_spaces(directive.default.as_bytes())
            } else {
                vec![directive.default.as_bytes()]
            };
            let slot = c.parse(i, &words, false).unwrap_or_else(|e| panic!("{}: {e}", directive.name));
            assert_eq!(slot.text, directive.default, "{}", directive.name);
            assert_eq!(slot, c.slots[i], "{}", directive.name);
        }
        let mut names = HashSet::new();
        for e in &tables().entries {
            assert!(names.insert(e.name), "{} twice", e.name);
            assert_eq!(e.name, e.name.to_ascii_lowercase());
        }
    }

    #[test]
    fn typed_accessors() {
        let mut c = Config::default();
        assert_eq!(c.get_int("maxclients"), 10000);
        assert_eq!(c.get_int("client-query-buffer-limit"), 1 << 30);
        assert_eq!(c.get_int("protected-mode"), 1);
        assert!(c.get_bool("protected-mode"));
        assert!(!c.get_bool("daemonize"));
        assert_eq!(c.get_int("loglevel"), 2);
        assert_eq!(c.get_int("threads"), 0);
        assert_eq!(c.get_int("shards"), 0);
        assert_eq!(c.get_int("SLAVE-PRIORITY"), 100);
        set(&mut c, &[("maxmemory", "99999999999999999999999"), ("maxmemory-clients", "10%")]).unwrap();
        assert_eq!(c.get_u64("maxmemory"), u64::MAX);
        assert_eq!(c.get_int("maxmemory-clients"), -10);
        set(&mut c, &[("notify-keyspace-events", "Ex")]).unwrap();
        assert_eq!(c.get_int("notify-keyspace-events"), NOTIFY_KEYEVENT | NOTIFY_EXPIRED);
        set(&mut c, &[("shutdown-on-sigterm", "nosave now")]).unwrap();
        assert_eq!(c.get_int("shutdown-on-sigterm"), 2 | 4);
        assert_eq!(c.get("no-such"), None);
        assert!(is_sensitive(b"RequirePass") && is_sensitive(b"masteruser") && !is_sensitive(b"port"));
        let names: Vec<&str> = c.iter().map(|(n, _)| n).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]));
        assert!(names.contains(&"threads") && !names.contains(&"slaveof"));
        assert!(c.changed().contains(&("maxmemory-clients", "10%")));
    }

    #[test]
    #[should_panic(expected = "unknown config parameter")]
    fn get_int_panics_on_unknown_names() {
        Config::default().get_int("no-such-parameter");
    }

    #[test]
    fn config_set_is_atomic_with_redis_errors() {
        let mut c = Config::default();
        assert_eq!(
            set(&mut c, &[("maxmemory", "10mb"), ("hz", "x")]),
            Err(failed("hz", "argument couldn't be parsed into an integer"))
        );
        assert_eq!(c.get("maxmemory"), Some("0"), "rolled back");
        assert_eq!(
            set(&mut c, &[("maxmemory", "1"), ("MAXMEMORY", "2")]),
            Err(failed("MAXMEMORY", "duplicate parameter"))
        );
        assert_eq!(set(&mut c, &[("daemonize", "yes")]), Err(failed("daemonize", "can't set immutable config")));
        assert_eq!(
            set(&mut c, &[("nope", "1")]),
            Err("ERR Unknown option or number of arguments for CONFIG SET - 'nope'".into())
        );
        // The first problem with the names wins.
        assert_eq!(
            set(&mut c, &[("foo", "bar"), ("daemonize", "yes")]),
            Err("ERR Unknown option or number of arguments for CONFIG SET - 'foo'".into())
        );
        assert_eq!(
            set(&mut c, &[("daemonize", "yes"), ("foo", "bar")]),
            Err(failed("daemonize", "can't set immutable config"))
        );
        // Validation runs in order after the names are all checked.
        assert_eq!(
            set(&mut c, &[("maxmemory", "1"), ("hz", "x"), ("port", "y")]),
            Err(failed("hz", "argument couldn't be parsed into an integer"))
        );
        // Redis's own rollback test (tests/unit/introspection.tcl).
        set(&mut c, &[("maxmemory", "10000002")]).unwrap();
        assert_eq!(
            set(
                &mut c,
                &[("maxmemory", "10000001"), ("maxmemory-clients", "200%"), ("client-query-buffer-limit", "x")]
            ),
            Err(failed("maxmemory-clients", "percentage argument must be less or equal to 100"))
        );
        assert_eq!(c.get("maxmemory"), Some("10000002"));
        set(&mut c, &[("maxmemory-clients", "10%"), ("notify-keyspace-events", "KEA"), ("save", "100 10 5 1")])
            .unwrap();
        assert_eq!(c.get("maxmemory-clients"), Some("10%"));
        assert_eq!(c.get("notify-keyspace-events"), Some("AKE"));
        assert_eq!(c.get("save"), Some("100 10 5 1"));
        set(&mut c, &[("client-output-buffer-limit", "pubsub 1mb 2mb 30")]).unwrap();
        assert_eq!(
            c.get("client-output-buffer-limit"),
            Some("normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 2097152 30")
        );
        assert_eq!(set(&mut c, &[]), Ok(()));
    }

    #[test]
    fn config_set_names_and_aliases() {
        let mut c = Config::default();
        // A parameter and its alias are different names for the duplicate check.
        set(&mut c, &[("replica-read-only", "yes"), ("slave-read-only", "no")]).unwrap();
        assert_eq!(c.get("replica-read-only"), Some("no"));
        // Validation errors name the (lowercase) name or alias used.
        assert_eq!(
            set_err(&mut c, "SLAVE-READ-ONLY", "maybe"),
            failed("slave-read-only", "argument must be 'yes' or 'no'")
        );
        assert_eq!(set_err(&mut c, "MaxMemory", "x"), failed("maxmemory", "argument must be a memory value"));
        assert_eq!(set(&mut c, &[("port", "1"), ("port", "1")]), Err(failed("port", "duplicate parameter")));
        // Names are shown up to a NUL, with CR/LF as spaces.
        assert_eq!(
            set_err(&mut c, "a\r\nb\0c", "1"),
            "ERR Unknown option or number of arguments for CONFIG SET - 'a  b'"
        );
        assert!(set(&mut c, &[("maxmemory\0", "1")]).is_err());
    }

    /// Error lines and stored values checked against redis-server 7.0.15.
    #[test]
    fn config_set_values_like_redis() {
        let mut c = Config::default();
        let ok = |c: &mut Config, name: &str, value: &str, shown: &str| {
            set(c, &[(name, value)]).unwrap_or_else(|e| panic!("{name} {value}: {e}"));
            assert_eq!(get1(c, name), shown, "{name} {value}");
        };
        // Memory.
        ok(&mut c, "maxmemory", "", "0");
        ok(&mut c, "maxmemory", "kb", "0");
        ok(&mut c, "maxmemory", "99999999999999999999999", "18446744073709551615");
        ok(&mut c, "maxmemory", "20000000000gb", "3028092406290448384");
        ok(&mut c, "maxmemory", "1GB", "1073741824");
        ok(&mut c, "maxmemory", "1B", "1");
        ok(&mut c, "maxmemory", "100k", "100000");
        assert_eq!(set_err(&mut c, "maxmemory", "-1"), failed("maxmemory", "argument must be a memory value"));
        assert_eq!(set_err(&mut c, "maxmemory", "1.5gb"), failed("maxmemory", "argument must be a memory value"));
        assert_eq!(
            set_err(&mut c, "proto-max-bulk-len", "9223372036854775808"),
            failed("proto-max-bulk-len", "argument must be between 1048576 and 9223372036854775807 inclusive")
        );
        assert_eq!(
            set_err(&mut c, "proto-max-bulk-len", "1k"),
            failed("proto-max-bulk-len", "argument must be between 1048576 and 9223372036854775807 inclusive")
        );
        assert_eq!(
            set_err(&mut c, "repl-backlog-size", "0"),
            failed("repl-backlog-size", "argument must be between 1 and 9223372036854775807 inclusive")
        );
        // Memory or percent.
        ok(&mut c, "maxmemory-clients", "0%", "0");
        ok(&mut c, "maxmemory-clients", "100%", "100%");
        ok(&mut c, "maxmemory-clients", "1mb", "1048576");
        assert_eq!(
            set_err(&mut c, "maxmemory-clients", "9223372036854775808"),
            failed("maxmemory-clients", "percentage argument must be less or equal to 100")
        );
        assert_eq!(
            set_err(&mut c, "maxmemory-clients", "-5%"),
            failed("maxmemory-clients", "argument must be a memory or percent value")
        );
        assert_eq!(
            set_err(&mut c, "maxmemory-clients", "1.5"),
            failed("maxmemory-clients", "argument must be a memory or percent value")
        );
        // Integers.
        ok(&mut c, "hz", "0", "1");
        ok(&mut c, "hz", "100000", "500");
        ok(&mut c, "repl-backlog-size", "1kb", "16384");
        ok(&mut c, "repl-backlog-size", "1mb", "1048576");
        c.set("repl-backlog-size", &["1kb".into()]).unwrap();
        assert_eq!(c.get("repl-backlog-size"), Some("1024"), "a config file's value is kept");
        ok(&mut c, "list-max-listpack-size", "-5", "-5");
        for bad in ["+1", "01", "-0", "", " 1", "1 ", "0x10"] {
            assert_eq!(set_err(&mut c, "port", bad), failed("port", "argument couldn't be parsed into an integer"));
        }
        assert_eq!(set_err(&mut c, "port", "70000"), failed("port", "argument must be between 0 and 65535 inclusive"));
        assert_eq!(
            set_err(&mut c, "maxclients", "-1"),
            failed("maxclients", "argument must be between 1 and 4294967295 inclusive")
        );
        assert_eq!(
            set_err(&mut c, "hash-max-listpack-entries", "-1"),
            failed("hash-max-listpack-entries", "argument must be between 0 and 9223372036854775807 inclusive")
        );
        assert_eq!(
            set_err(&mut c, "active-defrag-max-scan-fields", "-1"),
            failed("active-defrag-max-scan-fields", "argument must be between 1 and 9223372036854775807 inclusive")
        );
        assert_eq!(
            set_err(&mut c, "list-max-listpack-size", "-2147483649"),
            failed("list-max-listpack-size", "argument must be between -2147483648 and 2147483647 inclusive")
        );
        assert_eq!(
            set_err(&mut c, "slowlog-max-len", "9223372036854775808"),
            failed("slowlog-max-len", "argument couldn't be parsed into an integer")
        );
        assert_eq!(
            set_err(&mut c, "timeout", "2147483648"),
            failed("timeout", "argument must be between 0 and 2147483647 inclusive")
        );
        // Yes/no and enums.
        ok(&mut c, "appendonly", "YES", "yes");
        assert_eq!(set_err(&mut c, "appendonly", "maybe"), failed("appendonly", "argument must be 'yes' or 'no'"));
        assert!(set_err(&mut c, "activedefrag", "yes").starts_with(&failed(
            "activedefrag",
            "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc"
        )));
        ok(&mut c, "activedefrag", "no", "no");
        ok(&mut c, "loglevel", "WARNING", "warning");
        ok(&mut c, "appendfsync", "ALWAYS", "always");
        ok(&mut c, "oom-score-adj", "relative", "yes");
        assert_eq!(
            set_err(&mut c, "loglevel", "LOUD"),
            failed("loglevel", "argument(s) must be one of the following: debug, verbose, notice, warning")
        );
        ok(&mut c, "shutdown-on-sigint", "force now nosave", "nosave now force");
        ok(&mut c, "shutdown-on-sigint", "default save", "save");
        ok(&mut c, "shutdown-on-sigint", "now now", "now");
        ok(&mut c, "shutdown-on-sigint", "default", "default");
        assert_eq!(
            set_err(&mut c, "shutdown-on-sigint", "save nosave"),
            failed("shutdown-on-sigint", "shutdown options SAVE and NOSAVE can't be used simultaneously")
        );
        let one_of = "argument(s) must be one of the following: default, save, nosave, now, force";
        assert_eq!(set_err(&mut c, "shutdown-on-sigint", ""), failed("shutdown-on-sigint", one_of));
        assert_eq!(set_err(&mut c, "shutdown-on-sigint", "now  force"), failed("shutdown-on-sigint", one_of));
        // Strings.
        ok(&mut c, "cluster-announce-hostname", "ok.host-1", "ok.host-1");
        ok(&mut c, "cluster-announce-hostname", "", "");
        assert_eq!(
            set_err(&mut c, "cluster-announce-hostname", "a_b"),
            failed("cluster-announce-hostname", "Hostnames may only contain alphanumeric characters, hyphens or dots")
        );
        let invalid = "template format is invalid or contains unknown variables";
        for bad in ["{nope}", "", "{unixsocket}", "{title}", "  {server-mode} ", "{port", "x{"] {
            assert_eq!(set_err(&mut c, "proc-title-template", bad), failed("proc-title-template", invalid), "{bad}");
        }
        ok(&mut c, "proc-title-template", "{{", "{{");
        ok(&mut c, "proc-title-template", "{listen-addr}", "{listen-addr}");
        ok(&mut c, "proc-title-template", "{title} {port}", "{title} {port}");
        ok(&mut c, "requirepass", "secret\0binary", "secret\0binary");
        ok(&mut c, "masteruser", "cut\0here", "cut");
    }

    #[test]
    fn config_set_special_values_like_redis() {
        let mut c = Config::default();
        let ok = |c: &mut Config, name: &str, value: &str, shown: &str| {
            set(c, &[(name, value)]).unwrap_or_else(|e| panic!("{name} {value}: {e}"));
            assert_eq!(get1(c, name), shown, "{name} {value}");
        };
        // save
        let invalid_save = failed("save", "Invalid save parameters");
        for bad in ["100  10", " ", "0 1", "1 x", "1 2 3", "1 -1"] {
            assert_eq!(set_err(&mut c, "save", bad), invalid_save, "{bad}");
        }
        ok(&mut c, "save", "+100 -0", "100 0");
        ok(&mut c, "save", "100 4294967297 5 2147483648", "100 1 5 -2147483648");
        ok(&mut c, "save", "99999999999999999999 99999999999999999999", "9223372036854775807 -1");
        ok(&mut c, "save", "", "");
        // client-output-buffer-limit
        ok(
            &mut c,
            "client-output-buffer-limit",
            "normal  0 0",
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
        );
        ok(
            &mut c,
            "client-output-buffer-limit",
            "REPLICA 1kb 2k +3 NORMAL 1 1 4294967296",
            "normal 1 1 0 slave 1024 2000 3 pubsub 33554432 8388608 60",
        );
        ok(
            &mut c,
            "client-output-buffer-limit",
            "normal 0 0 0 normal 1 1 1",
            "normal 1 1 1 slave 1024 2000 3 pubsub 33554432 8388608 60",
        );
        ok(&mut c, "client-output-buffer-limit", "", "normal 1 1 1 slave 1024 2000 3 pubsub 33554432 8388608 60");
        let obuf = "client-output-buffer-limit";
        assert_eq!(
            set_err(&mut c, obuf, "master 0 0 0"),
            failed(obuf, "Invalid client class specified in buffer limit configuration.")
        );
        assert_eq!(
            set_err(&mut c, obuf, "normal 1 2"),
            failed(obuf, "Wrong number of arguments in buffer limit configuration.")
        );
        for bad in ["normal -1 0 0", "normal 0 0 x", "normal 0 0 2147483648", "normal 0 1.5 0"] {
            assert_eq!(
                set_err(&mut c, obuf, bad),
                failed(obuf, "Error in hard, soft or soft_seconds setting in buffer limit configuration.")
            );
        }
        // notify-keyspace-events
        ok(&mut c, "notify-keyspace-events", "AKEn", "AKE");
        ok(&mut c, "notify-keyspace-events", "gn$lshzxetdmKE", "AKEm");
        ok(&mut c, "notify-keyspace-events", "g$lshzxetd", "A");
        ok(&mut c, "notify-keyspace-events", "Ex", "xE");
        ok(&mut c, "notify-keyspace-events", "nEg", "gnE");
        ok(&mut c, "notify-keyspace-events", "", "");
        assert_eq!(
            set_err(&mut c, "notify-keyspace-events", "a"),
            failed("notify-keyspace-events", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
        );
        // oom-score-adj-values
        ok(&mut c, "oom-score-adj-values", "+1 -0 2000", "1 0 2000");
        assert_eq!(
            set_err(&mut c, "oom-score-adj-values", "1 2"),
            failed("oom-score-adj-values", "wrong number of arguments")
        );
        assert_eq!(
            set_err(&mut c, "oom-score-adj-values", ""),
            failed("oom-score-adj-values", "wrong number of arguments")
        );
        assert_eq!(
            set_err(&mut c, "oom-score-adj-values", "1 2 3000"),
            failed("oom-score-adj-values", "Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
        );
        // bind
        ok(&mut c, "bind", "127.0.0.1 ::1", "127.0.0.1 ::1");
        ok(&mut c, "bind", "", "");
        assert_eq!(
            set_err(&mut c, "bind", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17"),
            failed("bind", "Too many bind addresses specified.")
        );
        // latency-tracking-info-percentiles
        let pct = "latency-tracking-info-percentiles";
        ok(&mut c, pct, "50.0 99.9000 1e1 0x10 100", "50 99.9 10 16 100");
        ok(&mut c, pct, "0.0000001 33.3333333 -0", "0 33.333333 -0");
        ok(&mut c, pct, "99.99999999 0.0000005", "100 0");
        ok(&mut c, pct, "", "");
        for bad in ["abc", "50  99", "nan", "1e400", "1e-400", " 5", "5 ", "0x", "1e"] {
            assert_eq!(set_err(&mut c, pct, bad), failed(pct, "Invalid latency-tracking-info-percentiles parameters"));
        }
        for bad in ["101", "inf", "-1"] {
            assert_eq!(
                set_err(&mut c, pct, bad),
                failed(pct, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
            );
        }
        // replicaof is immutable at runtime.
        assert_eq!(set_err(&mut c, "slaveof", "no one"), failed("slaveof", "can't set immutable config"));
    }

    #[test]
    fn protected_and_loading() {
        let mut c = Config::default();
        assert_eq!(set_err(&mut c, "dir", "/tmp"), failed("dir", "can't set protected config"));
        assert_eq!(set_err(&mut c, "dbfilename", "a/b"), failed("dbfilename", "can't set protected config"));
        for name in ["enable-protected-configs", "enable-debug-command", "enable-module-command"] {
            assert_eq!(set_err(&mut c, name, "yes"), failed(name, "can't set immutable config"));
        }
        let local = SetContext { local_client: true, loading: false };
        c.set("enable-protected-configs", &strings(&["local"])).unwrap();
        assert_eq!(set_err(&mut c, "dbfilename", "x.rdb"), failed("dbfilename", "can't set protected config"));
        c.set_many_in(&[(b"dbfilename", b"x.rdb")], local).unwrap();
        assert_eq!(c.get("dbfilename"), Some("x.rdb"));
        c.set("enable-protected-configs", &strings(&["yes"])).unwrap();
        for bad in ["a/b", "a\\b"] {
            assert_eq!(
                set_err(&mut c, "dbfilename", bad),
                failed("dbfilename", "dbfilename can't be a path, just a filename")
            );
        }
        set(&mut c, &[("dbfilename", "")]).unwrap();
        assert_eq!(c.get("dbfilename"), Some(""));
        assert_eq!(set_err(&mut c, "dir", "/nonexistent-quince-dir"), failed("dir", "No such file or directory"));
        assert_eq!(set_err(&mut c, "dir", ""), failed("dir", "No such file or directory"));
        let file = std::env::temp_dir().join(format!("quince-config-test-{}", std::process::id()));
        std::fs::write(&file, "x").unwrap();
        assert_eq!(set_err(&mut c, "dir", file.to_str().unwrap()), failed("dir", "Not a directory"));
        std::fs::remove_file(&file).unwrap();
        let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
        set(&mut c, &[("dir", tmp.join(".").to_str().unwrap())]).unwrap();
        assert_eq!(get1(&c, "dir"), tmp.to_str().unwrap());
        let loading = SetContext { local_client: false, loading: true };
        assert_eq!(
            c.set_many_in(&[(b"loglevel", b"debug"), (b"appendonly", b"yes")], loading),
            Err("LOADING Redis is loading the dataset in memory".into())
        );
        c.set_many_in(&[(b"loglevel", b"debug")], loading).unwrap();
        assert!(c.protected_action_allowed("enable-protected-configs", false));
        assert!(!c.protected_action_allowed("enable-debug-command", true));
    }

    #[test]
    fn config_get_patterns_and_aliases() {
        let c = Config::default();
        let names =
            |patterns: &[&[u8]]| -> Vec<String> { c.get_matching(patterns).into_iter().map(|(n, _)| n).collect() };
        // A plain name is echoed as typed, once however it is spelled.
        assert_eq!(names(&[b"maxmemory", b"MAXMEMORY"]), ["maxmemory"]);
        assert_eq!(names(&[b"MAXMEMORY", b"maxmemory*"])[0], "MAXMEMORY");
        assert_eq!(names(&[b"MAXMEMORY", b"maxmemory*"]).len(), 5);
        assert_eq!(names(&[b"maxmemory", b"maxmemory"]), ["maxmemory"]);
        // Names and aliases are separate entries.
        let mut of = names(&[b"*of", b"slaveof"]);
        of.sort();
        assert_eq!(of, ["replicaof", "slaveof"]);
        let mut of = names(&[b"SLAVEOF", b"*of"]);
        of.sort();
        assert_eq!(of, ["SLAVEOF", "replicaof"]);
        let mut ro = names(&[b"*read-only*"]);
        ro.sort();
        assert_eq!(ro, ["replica-read-only", "slave-read-only"]);
        assert_eq!(names(&[b"replica-read-only", b"slave-read-only"]), ["replica-read-only", "slave-read-only"]);
        // Hidden parameters need their exact name.
        assert_eq!(names(&[b"key-load-delay", b"KEY-LOAD-DELAY", b"*load-delay*"]), ["key-load-delay"]);
        assert!(c.get_matching(&[b"*"]).iter().all(|(n, _)| n != "key-load-delay" && n != "threads"));
        assert_eq!(c.get_matching(&[b"threads"]), vec![("threads".to_string(), "0".to_string())]);
        assert!(names(&[b"nope"]).is_empty());
        // Patterns are case-insensitive globs; only the part before a NUL counts.
        let mut mm = names(&[b"MAXMEM*"]);
        mm.sort();
        assert_eq!(
            mm,
            ["maxmemory", "maxmemory-clients", "maxmemory-eviction-tenacity", "maxmemory-policy", "maxmemory-samples"]
        );
        assert_eq!(names(&[b"[m]axmemory"]), ["maxmemory"]);
        assert_eq!(names(&[b"*\0xyz"]).len(), c.get_matching(&[b"*"]).len());
        assert!(names(&[b"port\0*"]).is_empty());
        assert_eq!(
            c.get_matching(&[b"hash-max-ziplist-entries"]),
            vec![("hash-max-ziplist-entries".to_string(), "512".to_string())]
        );
        let mut entries = names(&[b"hash-max-*-entries"]);
        entries.sort();
        assert_eq!(entries, ["hash-max-listpack-entries", "hash-max-ziplist-entries"]);
    }

    #[test]
    fn config_file_semantics() {
        let mut c = Config::default();
        assert_eq!(c.set("port", &strings(&["1", "2"])), Err("wrong number of arguments".into()));
        assert_eq!(c.set("daemonize", &[]), Err("wrong number of arguments".into()));
        assert_eq!(c.set("foo", &strings(&["bar"])), Err("Bad directive or wrong number of arguments".into()));
        assert_eq!(c.set("maxmemory", &strings(&["x"])), Err("argument must be a memory value".into()));
        assert_eq!(c.set("oom-score-adj-values", &strings(&["1"])), Err("wrong number of arguments".into()));
        assert_eq!(
            c.set("unixsocketperm", &strings(&["800"])),
            Err("argument couldn't be parsed as an octal number".into())
        );
        assert_eq!(
            c.set("unixsocketperm", &strings(&["-1"])),
            Err("argument must be between 0 and 777 inclusive".into())
        );
        c.set("unixsocketperm", &strings(&["0770"])).unwrap();
        assert_eq!(c.get("unixsocketperm"), Some("770"));
        assert_eq!(c.get_int("unixsocketperm"), 0o770);
        assert_eq!(
            c.set("enable-debug-command", &strings(&["maybe"])),
            Err("argument(s) must be one of the following: no, yes, local".into())
        );
        assert_eq!(c.set("replicaof", &strings(&["a", "99999"])), Err("Invalid master port".into()));
        c.set("slaveof", &strings(&["10.0.0.1", "+6380"])).unwrap();
        assert_eq!(c.get("replicaof"), Some("10.0.0.1 6380"));
        c.set("replicaof", &strings(&["NO", "ONE"])).unwrap();
        assert_eq!(c.get("replicaof"), Some(""));
        assert_eq!(c.set("dir", &strings(&["/nonexistent-quince-dir"])), Err("No such file or directory".into()));
        // Deprecated directives are accepted and ignored with one argument.
        c.set("list-max-ziplist-entries", &strings(&["5"])).unwrap();
        c.set("LUA-REPLICATE-COMMANDS", &strings(&["yes"])).unwrap();
        assert!(c.set("list-max-ziplist-entries", &strings(&["5", "6"])).is_err());
        // Multi-word parameters given one argument split it like a config line.
        c.set("shutdown-on-sigint", &strings(&["nosave force now"])).unwrap();
        assert_eq!(c.get("shutdown-on-sigint"), Some("nosave now force"));
        c.set("shutdown-on-sigterm", &strings(&["nosave", "force"])).unwrap();
        assert_eq!(c.get("shutdown-on-sigterm"), Some("nosave force"));
        c.set("bind", &strings(&["\"127.0.0.1\" '::1'"])).unwrap();
        assert_eq!(c.get("bind"), Some("127.0.0.1 ::1"));
        c.set("bind", &[]).unwrap();
        assert_eq!(c.get("bind"), Some(""));
        assert_eq!(
            c.set("latency-tracking-info-percentiles", &strings(&["1 2", "3"])),
            Err("Invalid latency-tracking-info-percentiles parameters".into())
        );
        c.set("hz", &strings(&["0"])).unwrap();
        assert_eq!(c.get("hz"), Some("1"));
    }

    #[test]
    fn config_file_save_lines_append() {
        // Redis's "CONFIG save params special case handled properly" cases.
        let mut c = Config::default();
        assert_eq!(c.get("save"), Some("3600 1 300 100 60 10000"));
        c.set("save", &strings(&["900", "1"])).unwrap();
        assert_eq!(c.get("save"), Some("900 1"));
        c.set("save", &strings(&["100 100"])).unwrap();
        assert_eq!(c.get("save"), Some("900 1 100 100"));
        c.set("save", &strings(&[""])).unwrap();
        assert_eq!(c.get("save"), Some(""));
        c.set("save", &strings(&["60", "5"])).unwrap();
        assert_eq!(c.get("save"), Some("60 5"));
        assert_eq!(c.set("save", &strings(&["1"])), Err("Invalid save parameters".into()));
        let mut c = Config::default();
        c.set("save", &[]).unwrap();
        assert_eq!(c.get("save"), Some(""));
        // CONFIG SET always replaces.
        set(&mut c, &[("save", "10 1")]).unwrap();
        set(&mut c, &[("save", "20 2")]).unwrap();
        assert_eq!(c.get("save"), Some("20 2"));
    }

    #[test]
    fn number_parsers() {
        assert_eq!(parse_memory("1gb"), Some(1 << 30));
        assert_eq!(parse_memory("1G"), Some(1_000_000_000));
        assert_eq!(parse_memory("512Mb"), Some(512 << 20));
        assert_eq!(parse_memory("100k"), Some(100_000));
        assert_eq!(parse_memory("42"), Some(42));
        assert_eq!(parse_memory(""), Some(0));
        assert_eq!(parse_memory("-1"), None);
        assert_eq!(parse_memory("1 gb"), None);
        assert_eq!(parse_memory("1tb"), None);
        assert_eq!(string2ll(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(string2ll(b"9223372036854775808"), None);
        assert_eq!(string2ll(b"-0"), None);
        assert_eq!(strtoll(b"  -12x", 10), (-12, 5, false));
        assert_eq!(strtoll(b"+", 10), (0, 0, false));
        assert_eq!(strtoll(b"99999999999999999999", 10), (i64::MAX, 20, true));
        assert_eq!(strtoll(b"-99999999999999999999", 10), (i64::MIN, 21, true));
        assert_eq!(strtoll(b"0777", 8), (511, 4, false));
        assert_eq!(string2d(b"0x1.8p1"), Some(3.0));
        assert_eq!(string2d(b"1e-310").map(|v| v > 0.0), Some(true));
        assert_eq!(string2d(b"-INFINITY"), Some(f64::NEG_INFINITY));
        assert_eq!(string2d(b".5"), Some(0.5));
        assert_eq!(string2d(b"5."), Some(5.0));
        assert_eq!(string2d(b"."), None);
        assert_eq!(
            split_args(b"a \"b c\" 'd\\'e' \"\\x41\\n\""),
            Some(vec![b"a".to_vec(), b"b c".to_vec(), b"d'e".to_vec(), b"A\n".to_vec()])
        );
        assert_eq!(split_args(b"\"unbalanced"), None);
        assert_eq!(split_args(b"\"a\"b"), None);
        assert_eq!(split_spaces(b"a  b"), vec![&b"a"[..], b"", b"b"]);
        assert!(split_spaces(b"").is_empty());
    }
}
