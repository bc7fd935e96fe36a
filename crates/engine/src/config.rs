//! Server configuration: every parameter Redis 7.0 has (names, aliases, defaults, bounds
//! and flags as in Redis), plus quince's own. redis.conf files and `--name value` arguments
//! go through `Config::set`; CONFIG SET through `Config::set_many`; CONFIG GET through
//! `Config::get_matching`. Values are stored normalized, the way CONFIG GET prints them.

use std::collections::BTreeMap;

use crate::glob::glob_match;

#[derive(Debug, Clone, Copy)]
enum Kind {
    Bool,
    /// An integer within an inclusive range.
    Int(i128, i128),
    /// A byte size with an optional k/kb/m/mb/g/gb suffix, within a range.
    Memory(i128, i128),
    /// A byte size, or a percentage written `N%` (stored and shown as `N%`).
    MemoryOrPercent(i128, i128),
    /// An octal integer (unixsocketperm).
    Octal(i128, i128),
    Enum(&'static [&'static str]),
    /// Several enum words at once (shutdown-on-sigint).
    EnumFlags(&'static [&'static str]),
    /// Free text.
    Text,
    /// Parameters with their own syntax (save, bind, client-output-buffer-limit, ...).
    Special,
}

const IMMUTABLE: u8 = 1;
const PROTECTED: u8 = 2;
const HIDDEN: u8 = 4;
const SENSITIVE: u8 = 8;
const MULTI_ARG: u8 = 16;
const DEBUG: u8 = 32;
const DENY_LOADING: u8 = 64;
const VOLATILE: u8 = 128;

struct Directive {
    name: &'static str,
    alias: Option<&'static str>,
    default: &'static str,
    kind: Kind,
    flags: u8,
}

const fn d(name: &'static str, alias: Option<&'static str>, default: &'static str, kind: Kind, flags: u8) -> Directive {
    Directive { name, alias, default, kind, flags }
}

/// Redis 7.0.15's parameters, then quince's own.
const DIRECTIVES: &[Directive] = &[
    d("rdbchecksum", None, "yes", Kind::Bool, IMMUTABLE),
    d("daemonize", None, "no", Kind::Bool, IMMUTABLE),
    d("io-threads-do-reads", None, "no", Kind::Bool, IMMUTABLE | DEBUG),
    d("always-show-logo", None, "no", Kind::Bool, IMMUTABLE),
    d("protected-mode", None, "yes", Kind::Bool, 0),
    d("rdbcompression", None, "yes", Kind::Bool, 0),
    d("rdb-del-sync-files", None, "no", Kind::Bool, 0),
    d("activerehashing", None, "yes", Kind::Bool, 0),
    d("stop-writes-on-bgsave-error", None, "yes", Kind::Bool, 0),
    d("set-proc-title", None, "yes", Kind::Bool, IMMUTABLE),
    d("dynamic-hz", None, "yes", Kind::Bool, 0),
    d("lazyfree-lazy-eviction", None, "no", Kind::Bool, DEBUG),
    d("lazyfree-lazy-expire", None, "no", Kind::Bool, DEBUG),
    d("lazyfree-lazy-server-del", None, "no", Kind::Bool, DEBUG),
    d("lazyfree-lazy-user-del", None, "no", Kind::Bool, DEBUG),
    d("lazyfree-lazy-user-flush", None, "no", Kind::Bool, DEBUG),
    d("repl-disable-tcp-nodelay", None, "no", Kind::Bool, 0),
    d("repl-diskless-sync", None, "yes", Kind::Bool, DEBUG),
    d("aof-rewrite-incremental-fsync", None, "yes", Kind::Bool, 0),
    d("no-appendfsync-on-rewrite", None, "no", Kind::Bool, 0),
    d("cluster-require-full-coverage", None, "yes", Kind::Bool, 0),
    d("rdb-save-incremental-fsync", None, "yes", Kind::Bool, 0),
    d("aof-load-truncated", None, "yes", Kind::Bool, 0),
    d("aof-use-rdb-preamble", None, "yes", Kind::Bool, 0),
    d("aof-timestamp-enabled", None, "no", Kind::Bool, 0),
    d("cluster-replica-no-failover", Some("cluster-slave-no-failover"), "no", Kind::Bool, 0),
    d("replica-lazy-flush", Some("slave-lazy-flush"), "no", Kind::Bool, 0),
    d("replica-serve-stale-data", Some("slave-serve-stale-data"), "yes", Kind::Bool, 0),
    d("replica-read-only", Some("slave-read-only"), "yes", Kind::Bool, DEBUG),
    d("replica-ignore-maxmemory", Some("slave-ignore-maxmemory"), "yes", Kind::Bool, 0),
    d("jemalloc-bg-thread", None, "yes", Kind::Bool, 0),
    d("activedefrag", None, "no", Kind::Bool, DEBUG),
    d("syslog-enabled", None, "no", Kind::Bool, IMMUTABLE),
    d("cluster-enabled", None, "no", Kind::Bool, IMMUTABLE),
    d("appendonly", None, "no", Kind::Bool, DENY_LOADING),
    d("cluster-allow-reads-when-down", None, "no", Kind::Bool, 0),
    d("cluster-allow-pubsubshard-when-down", None, "yes", Kind::Bool, 0),
    d("crash-log-enabled", None, "yes", Kind::Bool, 0),
    d("crash-memcheck-enabled", None, "yes", Kind::Bool, 0),
    d("use-exit-on-panic", None, "no", Kind::Bool, HIDDEN),
    d("disable-thp", None, "yes", Kind::Bool, IMMUTABLE),
    d("cluster-allow-replica-migration", None, "yes", Kind::Bool, 0),
    d("replica-announced", None, "yes", Kind::Bool, 0),
    d("latency-tracking", None, "yes", Kind::Bool, 0),
    d("aof-disable-auto-gc", None, "no", Kind::Bool, 0),
    d("replica-ignore-disk-write-errors", None, "no", Kind::Bool, 0),
    d("aclfile", None, "", Kind::Text, IMMUTABLE),
    d("unixsocket", None, "", Kind::Text, IMMUTABLE),
    d("pidfile", None, "", Kind::Text, IMMUTABLE),
    d("replica-announce-ip", Some("slave-announce-ip"), "", Kind::Text, 0),
    d("masteruser", None, "", Kind::Text, SENSITIVE),
    d("cluster-announce-ip", None, "", Kind::Text, 0),
    d("cluster-config-file", None, "nodes.conf", Kind::Text, IMMUTABLE),
    d("cluster-announce-hostname", None, "", Kind::Text, 0),
    d("syslog-ident", None, "redis", Kind::Text, IMMUTABLE),
    d("dbfilename", None, "dump.rdb", Kind::Text, PROTECTED),
    d("appendfilename", None, "appendonly.aof", Kind::Text, IMMUTABLE),
    d("appenddirname", None, "appendonlydir", Kind::Text, IMMUTABLE),
    d("server_cpulist", None, "", Kind::Text, IMMUTABLE),
    d("bio_cpulist", None, "", Kind::Text, IMMUTABLE),
    d("aof_rewrite_cpulist", None, "", Kind::Text, IMMUTABLE),
    d("bgsave_cpulist", None, "", Kind::Text, IMMUTABLE),
    d("ignore-warnings", None, "", Kind::Text, 0),
    d("proc-title-template", None, "CONFIG_DEFAULT_PROC_TITLE_TEMPLATE", Kind::Text, 0),
    d("bind-source-addr", None, "", Kind::Text, 0),
    d("logfile", None, "", Kind::Text, IMMUTABLE),
    d("masterauth", None, "", Kind::Text, SENSITIVE),
    d("requirepass", None, "", Kind::Text, SENSITIVE),
    d("supervised", None, "no", Kind::Enum(&["upstart", "systemd", "auto", "no"]), IMMUTABLE),
    d(
        "syslog-facility",
        None,
        "local0",
        Kind::Enum(&["user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"]),
        IMMUTABLE,
    ),
    d("repl-diskless-load", None, "disabled", Kind::Enum(&["disabled", "on-empty-db", "swapdb"]), DEBUG | DENY_LOADING),
    d("loglevel", None, "notice", Kind::Enum(&["debug", "verbose", "notice", "warning"]), 0),
    d(
        "maxmemory-policy",
        None,
        "noeviction",
        Kind::Enum(&[
            "volatile-lru",
            "volatile-lfu",
            "volatile-random",
            "volatile-ttl",
            "allkeys-lru",
            "allkeys-lfu",
            "allkeys-random",
            "noeviction",
        ]),
        0,
    ),
    d("appendfsync", None, "everysec", Kind::Enum(&["everysec", "always", "no"]), 0),
    d("oom-score-adj", None, "no", Kind::Enum(&["no", "yes", "relative", "absolute"]), 0),
    d("acl-pubsub-default", None, "resetchannels", Kind::Enum(&["allchannels", "resetchannels"]), 0),
    d("sanitize-dump-payload", None, "no", Kind::Enum(&["no", "yes", "clients"]), DEBUG),
    d("enable-protected-configs", None, "no", Kind::Enum(&["no", "yes", "local"]), IMMUTABLE),
    d("enable-debug-command", None, "no", Kind::Enum(&["no", "yes", "local"]), IMMUTABLE),
    d("enable-module-command", None, "no", Kind::Enum(&["no", "yes", "local"]), IMMUTABLE),
    d("cluster-preferred-endpoint-type", None, "ip", Kind::Enum(&["ip", "hostname", "unknown-endpoint"]), 0),
    d("propagation-error-behavior", None, "ignore", Kind::Enum(&["ignore", "panic", "panic-on-replicas"]), 0),
    d(
        "shutdown-on-sigint",
        None,
        "default",
        Kind::EnumFlags(&["default", "save", "nosave", "now", "force"]),
        MULTI_ARG,
    ),
    d(
        "shutdown-on-sigterm",
        None,
        "default",
        Kind::EnumFlags(&["default", "save", "nosave", "now", "force"]),
        MULTI_ARG,
    ),
    d("databases", None, "16", Kind::Int(1, 2147483647), IMMUTABLE),
    d("port", None, "6379", Kind::Int(0, 65535), 0),
    d("io-threads", None, "1", Kind::Int(1, 128), IMMUTABLE | DEBUG),
    d("auto-aof-rewrite-percentage", None, "100", Kind::Int(0, 2147483647), 0),
    d("cluster-replica-validity-factor", Some("cluster-slave-validity-factor"), "10", Kind::Int(0, 2147483647), 0),
    d("list-max-listpack-size", Some("list-max-ziplist-size"), "-2", Kind::Int(-2147483648, 2147483647), 0),
    d("tcp-keepalive", None, "300", Kind::Int(0, 2147483647), 0),
    d("cluster-migration-barrier", None, "1", Kind::Int(0, 2147483647), 0),
    d("active-defrag-cycle-min", None, "1", Kind::Int(1, 99), 0),
    d("active-defrag-cycle-max", None, "25", Kind::Int(1, 99), 0),
    d("active-defrag-threshold-lower", None, "10", Kind::Int(0, 1000), 0),
    d("active-defrag-threshold-upper", None, "100", Kind::Int(0, 1000), 0),
    d("lfu-log-factor", None, "10", Kind::Int(0, 2147483647), 0),
    d("lfu-decay-time", None, "1", Kind::Int(0, 2147483647), 0),
    d("replica-priority", Some("slave-priority"), "100", Kind::Int(0, 2147483647), 0),
    d("repl-diskless-sync-delay", None, "5", Kind::Int(0, 2147483647), 0),
    d("maxmemory-samples", None, "5", Kind::Int(1, 2147483647), 0),
    d("maxmemory-eviction-tenacity", None, "10", Kind::Int(0, 100), 0),
    d("timeout", None, "0", Kind::Int(0, 2147483647), 0),
    d("replica-announce-port", Some("slave-announce-port"), "0", Kind::Int(0, 65535), 0),
    d("tcp-backlog", None, "511", Kind::Int(0, 2147483647), IMMUTABLE),
    d("cluster-port", None, "0", Kind::Int(0, 65535), IMMUTABLE),
    d("cluster-announce-bus-port", None, "0", Kind::Int(0, 65535), 0),
    d("cluster-announce-port", None, "0", Kind::Int(0, 65535), 0),
    d("cluster-announce-tls-port", None, "0", Kind::Int(0, 65535), 0),
    d("repl-timeout", None, "60", Kind::Int(1, 2147483647), 0),
    d("repl-ping-replica-period", Some("repl-ping-slave-period"), "10", Kind::Int(1, 2147483647), 0),
    d("list-compress-depth", None, "0", Kind::Int(0, 2147483647), DEBUG),
    d("rdb-key-save-delay", None, "0", Kind::Int(-2147483648, 2147483647), HIDDEN),
    d("key-load-delay", None, "0", Kind::Int(-2147483648, 2147483647), HIDDEN),
    d("active-expire-effort", None, "1", Kind::Int(1, 10), 0),
    d("hz", None, "10", Kind::Int(0, 2147483647), 0),
    d("min-replicas-to-write", Some("min-slaves-to-write"), "0", Kind::Int(0, 2147483647), 0),
    d("min-replicas-max-lag", Some("min-slaves-max-lag"), "10", Kind::Int(0, 2147483647), 0),
    d("watchdog-period", None, "0", Kind::Int(0, 2147483647), HIDDEN),
    d("shutdown-timeout", None, "10", Kind::Int(0, 2147483647), 0),
    d("repl-diskless-sync-max-replicas", None, "0", Kind::Int(0, 2147483647), 0),
    d("maxclients", None, "10000", Kind::Int(1, 4294967295), 0),
    d("unixsocketperm", None, "0", Kind::Octal(0, 511), IMMUTABLE),
    d("socket-mark-id", None, "0", Kind::Int(0, 4294967295), IMMUTABLE),
    d("active-defrag-max-scan-fields", None, "1000", Kind::Int(1, 9223372036854775807), 0),
    d("slowlog-max-len", None, "128", Kind::Int(0, 9223372036854775807), 0),
    d("acllog-max-len", None, "128", Kind::Int(0, 9223372036854775807), 0),
    d("busy-reply-threshold", Some("lua-time-limit"), "5000", Kind::Int(0, 9223372036854775807), 0),
    d("cluster-node-timeout", None, "15000", Kind::Int(0, 9223372036854775807), 0),
    d("slowlog-log-slower-than", None, "10000", Kind::Int(-1, 9223372036854775807), 0),
    d("latency-monitor-threshold", None, "0", Kind::Int(0, 9223372036854775807), 0),
    d("proto-max-bulk-len", None, "536870912", Kind::Memory(1048576, 9223372036854775807), DEBUG),
    d("stream-node-max-entries", None, "100", Kind::Int(0, 9223372036854775807), 0),
    d("repl-backlog-size", None, "1048576", Kind::Memory(1, 9223372036854775807), 0),
    d("maxmemory", None, "0", Kind::Memory(0, 18446744073709551615), 0),
    d("cluster-link-sendbuf-limit", None, "0", Kind::Memory(0, 18446744073709551615), 0),
    d("hash-max-listpack-entries", Some("hash-max-ziplist-entries"), "512", Kind::Int(0, 9223372036854775807), 0),
    d("set-max-intset-entries", None, "512", Kind::Int(0, 9223372036854775807), 0),
    d("zset-max-listpack-entries", Some("zset-max-ziplist-entries"), "128", Kind::Int(0, 9223372036854775807), 0),
    d("active-defrag-ignore-bytes", None, "104857600", Kind::Memory(1, 9223372036854775807), 0),
    d("hash-max-listpack-value", Some("hash-max-ziplist-value"), "64", Kind::Memory(0, 9223372036854775807), 0),
    d("stream-node-max-bytes", None, "4096", Kind::Memory(0, 9223372036854775807), 0),
    d("zset-max-listpack-value", Some("zset-max-ziplist-value"), "64", Kind::Memory(0, 9223372036854775807), 0),
    d("hll-sparse-max-bytes", None, "3000", Kind::Memory(0, 9223372036854775807), 0),
    d("tracking-table-max-keys", None, "1000000", Kind::Int(0, 9223372036854775807), 0),
    d("client-query-buffer-limit", None, "1073741824", Kind::Memory(1048576, 9223372036854775807), DEBUG),
    d("maxmemory-clients", None, "0", Kind::MemoryOrPercent(-100, 9223372036854775807), 0),
    d("repl-backlog-ttl", None, "3600", Kind::Int(0, 9223372036854775807), 0),
    d("auto-aof-rewrite-min-size", None, "67108864", Kind::Memory(0, 9223372036854775807), 0),
    d("loading-process-events-interval-bytes", None, "2097152", Kind::Int(1024, 2147483647), HIDDEN),
    d("tls-port", None, "0", Kind::Int(0, 65535), 0),
    d("tls-session-cache-size", None, "20480", Kind::Int(0, 2147483647), 0),
    d("tls-session-cache-timeout", None, "300", Kind::Int(0, 2147483647), 0),
    d("tls-cluster", None, "no", Kind::Bool, 0),
    d("tls-replication", None, "no", Kind::Bool, 0),
    d("tls-auth-clients", None, "yes", Kind::Enum(&["no", "yes", "optional"]), 0),
    d("tls-prefer-server-ciphers", None, "no", Kind::Bool, 0),
    d("tls-session-caching", None, "yes", Kind::Bool, 0),
    d("tls-cert-file", None, "", Kind::Text, VOLATILE),
    d("tls-key-file", None, "", Kind::Text, VOLATILE),
    d("tls-key-file-pass", None, "", Kind::Text, 0),
    d("tls-client-cert-file", None, "", Kind::Text, VOLATILE),
    d("tls-client-key-file", None, "", Kind::Text, VOLATILE),
    d("tls-client-key-file-pass", None, "", Kind::Text, 0),
    d("tls-dh-params-file", None, "", Kind::Text, VOLATILE),
    d("tls-ca-cert-file", None, "", Kind::Text, VOLATILE),
    d("tls-ca-cert-dir", None, "", Kind::Text, VOLATILE),
    d("tls-protocols", None, "", Kind::Text, 0),
    d("tls-ciphers", None, "", Kind::Text, 0),
    d("tls-ciphersuites", None, "", Kind::Text, 0),
    d("dir", None, "./", Kind::Special, PROTECTED | DENY_LOADING),
    d("save", None, "3600 1 300 100 60 10000", Kind::Special, MULTI_ARG),
    d(
        "client-output-buffer-limit",
        None,
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
        Kind::Special,
        MULTI_ARG,
    ),
    d("oom-score-adj-values", None, "0 200 800", Kind::Special, MULTI_ARG),
    d("notify-keyspace-events", None, "", Kind::Special, 0),
    d("bind", None, "127.0.0.1 -::1", Kind::Special, MULTI_ARG),
    d("replicaof", Some("slaveof"), "", Kind::Special, IMMUTABLE | MULTI_ARG),
    d("latency-tracking-info-percentiles", None, "50 99 99.9", Kind::Special, MULTI_ARG),
    // Quince's own: worker threads (0 = one per core) and keyspace shards (0 = automatic).
    d("threads", None, "0", Kind::Int(0, 1024), IMMUTABLE | HIDDEN),
    d("shards", None, "0", Kind::Int(0, 16384), IMMUTABLE | HIDDEN),
];

// Flags not consulted yet, kept for completeness of the table.
const _: u8 = SENSITIVE | DEBUG | DENY_LOADING | VOLATILE;

fn lookup(name: &str) -> Option<&'static Directive> {
    DIRECTIVES
        .iter()
        .find(|d| d.name.eq_ignore_ascii_case(name) || d.alias.is_some_and(|a| a.eq_ignore_ascii_case(name)))
}

/// Parses `1gb`, `512mb`, `100k`, `42`: Redis's memtoull (k=1000, kb=1024, ...).
pub fn parse_memory(s: &str) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let split = lower.find(|c: char| !c.is_ascii_digit()).unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let mul: u64 = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(mul)
}

/// Redis's string2ll: optional `-`, digits, no leading zeros, no `+`.
fn parse_int(s: &str) -> Option<i128> {
    quince_resp::parse_i64_strict(s.as_bytes()).map(i128::from).or_else(|| {
        // Unsigned 64-bit bounds (maxmemory) exceed i64.
        (s.len() <= 20 && !s.starts_with('0') && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    })
}

fn range_error(min: i128, max: i128) -> String {
    format!("argument must be between {min} and {max} inclusive")
}

const KEYSPACE_EVENT_CLASSES: &str = "g$lshzxetd";

/// notify-keyspace-events in Redis's canonical order (`A` for all the type classes).
fn normalize_keyspace_events(value: &str) -> Result<String, String> {
    let mut set = std::collections::BTreeSet::new();
    for c in value.chars() {
        match c {
            'A' => KEYSPACE_EVENT_CLASSES.chars().for_each(|c| {
                set.insert(c);
            }),
            'g' | '$' | 'l' | 's' | 'h' | 'z' | 'x' | 'e' | 't' | 'd' | 'n' | 'm' | 'K' | 'E' => {
                set.insert(c);
            }
            _ => return Err("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".into()),
        }
    }
    let mut out = String::new();
    if KEYSPACE_EVENT_CLASSES.chars().all(|c| set.contains(&c)) {
        out.push('A');
    } else {
        out.extend("g$lshzxetdn".chars().filter(|c| set.contains(c)));
    }
    if KEYSPACE_EVENT_CLASSES.chars().all(|c| set.contains(&c)) && set.contains(&'n') {
        out.push('n');
    }
    out.extend("KEm".chars().filter(|c| set.contains(c)));
    Ok(out)
}

/// Validates a special parameter against the current value (client-output-buffer-limit
/// merges classes) and returns the normalized value.
fn parse_special(name: &str, args: &[String], current: &str) -> Result<String, String> {
    let words: Vec<&str> = args.iter().flat_map(|a| a.split_whitespace()).collect();
    match name {
        "save" => {
            if !words.len().is_multiple_of(2) || words.iter().any(|w| parse_int(w).is_none_or(|n| n < 0)) {
                return Err("Invalid save parameters".into());
            }
            Ok(words.join(" "))
        }
        "client-output-buffer-limit" => {
            if !words.len().is_multiple_of(4) {
                return Err("Wrong number of arguments in buffer limit configuration.".into());
            }
            let mut classes: Vec<(String, [String; 3])> = current
                .split_whitespace()
                .collect::<Vec<_>>()
                .chunks(4)
                .filter(|c| c.len() == 4)
                .map(|c| (c[0].to_string(), [c[1].to_string(), c[2].to_string(), c[3].to_string()]))
                .collect();
            for chunk in words.chunks(4) {
                let class = match chunk[0].to_ascii_lowercase().as_str() {
                    "normal" => "normal",
                    "slave" | "replica" => "slave",
                    "pubsub" => "pubsub",
                    _ => return Err("Invalid client class specified in buffer limit configuration.".into()),
                };
                let hard = parse_memory(chunk[1]);
                let soft = parse_memory(chunk[2]);
                let secs = parse_int(chunk[3]).filter(|s| *s >= 0);
                let (Some(hard), Some(soft), Some(secs)) = (hard, soft, secs) else {
                    return Err("Error in hard, soft or soft_seconds setting in buffer limit configuration.".into());
                };
                if let Some(entry) = classes.iter_mut().find(|(c, _)| c == class) {
                    entry.1 = [hard.to_string(), soft.to_string(), secs.to_string()];
                }
            }
            Ok(classes.iter().map(|(c, v)| format!("{c} {} {} {}", v[0], v[1], v[2])).collect::<Vec<_>>().join(" "))
        }
        "oom-score-adj-values" => {
            if words.len() != 3 || words.iter().any(|w| parse_int(w).is_none_or(|n| !(-2000..=2000).contains(&n))) {
                return Err("Invalid oom-score-adj-values".into());
            }
            Ok(words.join(" "))
        }
        "notify-keyspace-events" => normalize_keyspace_events(&args.join("")),
        "bind" => {
            if words.len() > 16 {
                return Err("Too many bind addresses specified.".into());
            }
            Ok(words.join(" "))
        }
        "replicaof" => match words.as_slice() {
            [] => Ok(String::new()),
            [no, one] if no.eq_ignore_ascii_case("no") && one.eq_ignore_ascii_case("one") => Ok(String::new()),
            [host, port] if parse_int(port).is_some_and(|p| (0..=65535).contains(&p)) => Ok(format!("{host} {port}")),
            _ => Err("Invalid master port".into()),
        },
        "latency-tracking-info-percentiles" => {
            let mut out = Vec::new();
            for w in &words {
                match w.parse::<f64>() {
                    Ok(p) if (0.0..=100.0).contains(&p) => out.push(format!("{p}")),
                    _ => return Err("latency-tracking-info-percentiles: invalid percentile value".into()),
                }
            }
            Ok(out.join(" "))
        }
        // dir, and anything else special: kept as given.
        _ => Ok(args.join(" ")),
    }
}

/// Validates and normalizes a value for `d` (config-file wording for errors).
fn parse_value(d: &Directive, args: &[String], current: &str) -> Result<String, String> {
    match d.kind {
        Kind::Special => return parse_special(d.name, args, current),
        Kind::Text => return Ok(args.join(" ")),
        Kind::EnumFlags(options) => {
            let words: Vec<String> =
                args.iter().flat_map(|a| a.split_whitespace()).map(str::to_ascii_lowercase).collect();
            if words.is_empty() || words.iter().any(|w| !options.contains(&w.as_str())) {
                return Err(format!("argument(s) must be one of the following: {}", options.join(", ")));
            }
            return Ok(words.join(" "));
        }
        _ => {}
    }
    if args.len() != 1 {
        return Err("wrong number of arguments".into());
    }
    let arg = args[0].as_str();
    match d.kind {
        Kind::Bool => match arg.to_ascii_lowercase().as_str() {
            v @ ("yes" | "no") => Ok(v.to_string()),
            _ => Err("argument must be 'yes' or 'no'".into()),
        },
        Kind::Int(min, max) => {
            let n = parse_int(arg).ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
            if n < min || n > max {
                return Err(range_error(min, max));
            }
            Ok(n.to_string())
        }
        Kind::Octal(min, max) => {
            let n = i128::from_str_radix(arg, 8)
                .map_err(|_| "argument couldn't be parsed as an octal number".to_string())?;
            if n < min || n > max {
                return Err(format!("argument must be between {min:o} and {max:o} inclusive"));
            }
            Ok(format!("{n:o}"))
        }
        Kind::Memory(min, max) => {
            let n = parse_memory(arg).ok_or_else(|| "argument must be a memory value".to_string())? as i128;
            if n < min || n > max {
                return Err(range_error(min, max));
            }
            Ok(n.to_string())
        }
        Kind::MemoryOrPercent(min, max) => {
            if let Some(pct) = arg.strip_suffix('%') {
                let n = parse_int(pct).ok_or_else(|| "argument must be a memory or percent value".to_string())?;
                if -n < min {
                    return Err(format!("percentage argument must be less or equal to {}", -min));
                }
                if n < 0 {
                    return Err(range_error(min, max));
                }
                return Ok(format!("{n}%"));
            }
            let n = parse_memory(arg).ok_or_else(|| "argument must be a memory or percent value".to_string())? as i128;
            if n < min || n > max {
                return Err(range_error(min, max));
            }
            Ok(n.to_string())
        }
        Kind::Enum(options) => {
            let v = arg.to_ascii_lowercase();
            if !options.contains(&v.as_str()) {
                return Err(format!("argument(s) must be one of the following: {}", options.join(", ")));
            }
            Ok(v)
        }
        Kind::Text | Kind::Special | Kind::EnumFlags(_) => unreachable!("handled above"),
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    values: BTreeMap<&'static str, String>,
}

impl Default for Config {
    fn default() -> Self {
        Self { values: DIRECTIVES.iter().map(|d| (d.name, d.default.to_string())).collect() }
    }
}

impl Config {
    /// Sets a directive from its arguments (as split from a config line or `--name value`).
    /// Errors carry Redis's wording for config-file failures.
    pub fn set(&mut self, name: &str, args: &[String]) -> Result<(), String> {
        let directive = lookup(name).ok_or_else(|| "Bad directive or wrong number of arguments".to_string())?;
        let current = self.values.get(directive.name).cloned().unwrap_or_default();
        let value = parse_value(directive, args, &current)?;
        self.values.insert(directive.name, value);
        Ok(())
    }

    /// CONFIG SET with one or more (name, value) pairs: all or nothing, with Redis 7.0's
    /// checks and error lines (without the leading `-`).
    pub fn set_many(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<(), String> {
        let mut chosen: Vec<&'static Directive> = Vec::new();
        for (name, _) in pairs {
            let name_text = String::from_utf8_lossy(name);
            let Some(d) = lookup(&name_text) else {
                return Err(format!("ERR Unknown option or number of arguments for CONFIG SET - '{name_text}'"));
            };
            if d.flags & (IMMUTABLE | PROTECTED) != 0 {
                let why =
                    if d.flags & IMMUTABLE != 0 { "can't set immutable config" } else { "can't set protected config" };
                return Err(format!("ERR CONFIG SET failed (possibly related to argument '{name_text}') - {why}"));
            }
            if chosen.iter().any(|c| c.name == d.name) {
                return Err(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{name_text}') - duplicate parameter"
                ));
            }
            chosen.push(d);
        }
        let mut next = self.clone();
        for (d, (_, value)) in chosen.iter().zip(pairs) {
            let value = String::from_utf8_lossy(value).into_owned();
            let args: Vec<String> = if d.flags & MULTI_ARG != 0 {
                value.split_whitespace().map(str::to_string).collect()
            } else {
                vec![value]
            };
            let current = next.values.get(d.name).cloned().unwrap_or_default();
            let normalized = parse_value(d, &args, &current)
                .map_err(|e| format!("ERR CONFIG SET failed (possibly related to argument '{}') - {e}", d.name))?;
            next.values.insert(d.name, normalized);
        }
        *self = next;
        Ok(())
    }

    /// CONFIG GET: (name, value) for every parameter matching one of the patterns, each
    /// once. Plain names (no glob characters) match a name or alias exactly and are echoed
    /// as given; patterns skip hidden parameters and match names and aliases.
    pub fn get_matching(&self, patterns: &[&[u8]]) -> Vec<(String, String)> {
        let mut out: Vec<(String, String, &'static str)> = Vec::new();
        for pattern in patterns {
            let text = String::from_utf8_lossy(pattern);
            if !pattern.iter().any(|b| matches!(b, b'*' | b'?' | b'[')) {
                if out.iter().any(|(shown, _, _)| *shown == text) {
                    continue;
                }
                if let Some(d) = lookup(&text) {
                    out.push((text.into_owned(), self.shown_value(d), d.name));
                }
                continue;
            }
            for d in DIRECTIVES.iter().filter(|d| d.flags & HIDDEN == 0) {
                if out.iter().any(|(_, _, name)| *name == d.name) {
                    continue;
                }
                for candidate in std::iter::once(d.name).chain(d.alias) {
                    if glob_match(pattern, candidate.as_bytes(), true) {
                        out.push((candidate.to_string(), self.shown_value(d), d.name));
                        break;
                    }
                }
            }
            // An alias and its parameter are both listed when both match, as in Redis.
            for d in DIRECTIVES.iter().filter(|d| d.flags & HIDDEN == 0 && d.alias.is_some()) {
                let alias = d.alias.expect("filtered");
                let listed_as_name = out.iter().any(|(shown, _, _)| shown == d.name);
                let listed_as_alias = out.iter().any(|(shown, _, _)| shown == alias);
                if listed_as_name && !listed_as_alias && glob_match(pattern, alias.as_bytes(), true) {
                    out.push((alias.to_string(), self.shown_value(d), d.name));
                }
            }
        }
        out.into_iter().map(|(shown, value, _)| (shown, value)).collect()
    }

    fn shown_value(&self, d: &Directive) -> String {
        let value = self.values.get(d.name).cloned().unwrap_or_default();
        if d.name == "dir" {
            // Redis reports the working directory it changed into, as an absolute path.
            let path = std::path::Path::new(&value);
            let absolute = if path.is_absolute() {
                path.to_path_buf()
            } else {
                std::env::current_dir().map(|c| c.join(path)).unwrap_or_else(|_| path.to_path_buf())
            };
            return std::fs::canonicalize(&absolute).unwrap_or(absolute).to_string_lossy().into_owned();
        }
        value
    }

    /// Names whose current value differs from the default (for CONFIG REWRITE).
    pub fn changed(&self) -> Vec<(&'static str, &str)> {
        DIRECTIVES
            .iter()
            .filter_map(|d| {
                let v = self.values.get(d.name)?;
                (v != d.default).then_some((d.name, v.as_str()))
            })
            .collect()
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        match self.values.get(name) {
            Some(v) => Some(v.as_str()),
            None => lookup(name).and_then(|d| self.values.get(d.name)).map(String::as_str),
        }
    }

    /// An integer, memory or yes/no (1/0) parameter.
    pub fn get_int(&self, name: &str) -> i64 {
        let v = self.get(name).unwrap_or_else(|| panic!("unknown directive {name}"));
        match v {
            "yes" => 1,
            "no" => 0,
            v => v.parse().unwrap_or_else(|_| panic!("integer directive {name}")),
        }
    }

    pub fn get_bool(&self, name: &str) -> bool {
        self.get(name) == Some("yes")
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (*k, v.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_validation() {
        let mut c = Config::default();
        assert_eq!(c.get_int("port"), 6379);
        assert_eq!(c.get("bind"), Some("127.0.0.1 -::1"));
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

    fn set(c: &mut Config, pairs: &[(&str, &str)]) -> Result<(), String> {
        let pairs: Vec<(&[u8], &[u8])> = pairs.iter().map(|(a, b)| (a.as_bytes(), b.as_bytes())).collect();
        c.set_many(&pairs)
    }

    #[test]
    fn config_set_is_atomic_with_redis_errors() {
        let mut c = Config::default();
        assert_eq!(
            set(&mut c, &[("maxmemory", "10mb"), ("hz", "x")]),
            Err("ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"
                .into())
        );
        assert_eq!(c.get("maxmemory"), Some("0"), "rolled back");
        assert_eq!(
            set(&mut c, &[("maxmemory", "1"), ("maxmemory", "2")]),
            Err("ERR CONFIG SET failed (possibly related to argument 'maxmemory') - duplicate parameter".into())
        );
        assert_eq!(
            set(&mut c, &[("daemonize", "yes")]),
            Err("ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config".into())
        );
        assert_eq!(
            set(&mut c, &[("nope", "1")]),
            Err("ERR Unknown option or number of arguments for CONFIG SET - 'nope'".into())
        );
        assert_eq!(
            set(&mut c, &[("maxmemory-clients", "101%")]),
            Err("ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100".into())
        );
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
    }

    #[test]
    fn config_get_patterns_and_aliases() {
        let c = Config::default();
        let got = c.get_matching(&[b"maxmemory", b"MAXMEMORY", b"*of"]);
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"maxmemory") && names.contains(&"MAXMEMORY"));
        assert!(names.contains(&"replicaof") && names.contains(&"slaveof"));
        assert!(c.get_matching(&[b"*"]).iter().all(|(n, _)| n != "key-load-delay"), "hidden needs an exact name");
        assert_eq!(c.get_matching(&[b"key-load-delay"]).len(), 1);
        assert_eq!(
            c.get_matching(&[b"hash-max-ziplist-entries"]),
            vec![("hash-max-ziplist-entries".to_string(), "512".to_string())]
        );
    }
}
