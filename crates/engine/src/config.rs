//! Server configuration: every directive quince knows, with Redis's defaults and value
//! checks. redis.conf files, `--directive value` arguments and (later) CONFIG SET all go
//! through `Config::set`.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy)]
enum Kind {
    Bool,
    /// An integer within an inclusive range.
    Int(i64, i64),
    /// A byte size with an optional k/kb/m/mb/g/gb suffix.
    Memory,
    Enum(&'static [&'static str]),
    /// Free text; may hold several space-separated words (bind, save).
    Text,
}

struct Directive {
    name: &'static str,
    default: &'static str,
    kind: Kind,
}

const fn d(name: &'static str, default: &'static str, kind: Kind) -> Directive {
    Directive { name, default, kind }
}

const DIRECTIVES: &[Directive] = &[
    d("port", "6379", Kind::Int(0, 65535)),
    d("bind", "127.0.0.1 -::1", Kind::Text),
    d("databases", "16", Kind::Int(1, i32::MAX as i64)),
    d("timeout", "0", Kind::Int(0, i32::MAX as i64)),
    d("maxclients", "10000", Kind::Int(1, u32::MAX as i64)),
    d("protected-mode", "yes", Kind::Bool),
    d("tcp-backlog", "511", Kind::Int(0, i32::MAX as i64)),
    d("tcp-keepalive", "300", Kind::Int(0, i32::MAX as i64)),
    d("hz", "10", Kind::Int(1, 500)),
    d("proto-max-bulk-len", "536870912", Kind::Memory),
    d("client-query-buffer-limit", "1073741824", Kind::Memory),
    d("requirepass", "", Kind::Text),
    d("daemonize", "no", Kind::Bool),
    d("supervised", "no", Kind::Enum(&["upstart", "systemd", "auto", "no"])),
    d("pidfile", "", Kind::Text),
    d("loglevel", "notice", Kind::Enum(&["debug", "verbose", "notice", "warning"])),
    d("logfile", "", Kind::Text),
    d("dir", "./", Kind::Text),
    d("dbfilename", "dump.rdb", Kind::Text),
    d("save", "3600 1 300 100 60 10000", Kind::Text),
    d("appendonly", "no", Kind::Bool),
    d("appendfilename", "appendonly.aof", Kind::Text),
    d("appenddirname", "appendonlydir", Kind::Text),
    d("appendfsync", "everysec", Kind::Enum(&["always", "everysec", "no"])),
    d("enable-debug-command", "no", Kind::Enum(&["no", "yes", "local"])),
    d("io-threads", "1", Kind::Int(1, 128)),
    d("maxmemory", "0", Kind::Memory),
    d(
        "maxmemory-policy",
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
    ),
    d("unixsocket", "", Kind::Text),
    d("always-show-logo", "no", Kind::Bool),
    d("set-proc-title", "yes", Kind::Bool),
    d("lazyfree-lazy-eviction", "no", Kind::Bool),
    d("lazyfree-lazy-expire", "no", Kind::Bool),
    d("lazyfree-lazy-server-del", "no", Kind::Bool),
    d("lazyfree-lazy-user-del", "no", Kind::Bool),
    d("lazyfree-lazy-user-flush", "no", Kind::Bool),
    // Quince's own: worker threads (0 = one per core) and keyspace shards (0 = automatic).
    d("threads", "0", Kind::Int(0, 1024)),
    d("shards", "0", Kind::Int(0, 16384)),
];

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
    /// Sets a directive from its arguments (as split from a config line). Errors carry
    /// Redis's wording for config-file failures.
    pub fn set(&mut self, name: &str, args: &[String]) -> Result<(), String> {
        let lower = name.to_ascii_lowercase();
        let directive = DIRECTIVES
            .iter()
            .find(|d| d.name == lower)
            .ok_or_else(|| "Bad directive or wrong number of arguments".to_string())?;
        let value = match directive.kind {
            Kind::Text => args.join(" "),
            _ if args.len() != 1 => return Err("wrong number of arguments".into()),
            Kind::Bool => match args[0].to_ascii_lowercase().as_str() {
                v @ ("yes" | "no") => v.to_string(),
                _ => return Err("argument must be 'yes' or 'no'".into()),
            },
            Kind::Int(min, max) => {
                let n: i64 = args[0].parse().map_err(|_| "argument couldn't be parsed into an integer".to_string())?;
                if n < min || n > max {
                    return Err(format!("argument must be between {min} and {max} inclusive"));
                }
                n.to_string()
            }
            Kind::Memory => {
                parse_memory(&args[0]).ok_or_else(|| "argument must be a memory value".to_string())?.to_string()
            }
            Kind::Enum(options) => {
                let v = args[0].to_ascii_lowercase();
                if !options.contains(&v.as_str()) {
                    return Err(format!("argument(s) must be one of the following: {}", options.join(", ")));
                }
                v
            }
        };
        self.values.insert(directive.name, value);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    pub fn get_int(&self, name: &str) -> i64 {
        self.get(name).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("integer directive {name}"))
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
    }
}
