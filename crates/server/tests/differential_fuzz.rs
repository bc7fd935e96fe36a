//! A differential fuzz: random commands (names from redis-server's COMMAND LIST, arguments
//! drawn from the command's own tokens in COMMAND DOCS, keys of every type, numbers of every
//! shape and odd strings) run on quince and redis-server from the same dataset, and each
//! reply's class compared: error or not (errors word for word), and which RESP type. Where several arguments are
//! wrong, Redis's order of checks decides which error comes first (or whether the command
//! succeeds), which is what this catches. Seeded: a failure names its seed and command, and
//! `QUINCE_FUZZ_SEEDS=a..b` runs other seeds by hand. Skipped without redis-server unless
//! QUINCE_REQUIRE_REDIS=1.

use std::collections::HashMap;

use quince_test_util::{start_quince, start_redis, RawClient};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

/// Commands left out, and why: they block or wait, change the connection or the server in
/// ways the run can't undo, answer with time or randomness, talk to other servers, or
/// belong to features not built yet (each named with its issue).
const LEFT_OUT: &[(&str, &str)] = &[
    ("blpop", "blocks"),
    ("brpop", "blocks"),
    ("brpoplpush", "blocks"),
    ("blmove", "blocks"),
    ("blmpop", "blocks"),
    ("bzpopmin", "blocks"),
    ("bzpopmax", "blocks"),
    ("bzmpop", "blocks"),
    ("xread", "blocks with BLOCK"),
    ("xreadgroup", "blocks with BLOCK"),
    ("wait", "waits for replicas"),
    ("client", "pauses, kills, changes the connection"),
    ("debug", "sleeps, crashes, reloads"),
    ("shutdown", "stops the server"),
    ("monitor", "changes the connection"),
    ("subscribe", "changes the connection"),
    ("psubscribe", "changes the connection"),
    ("ssubscribe", "changes the connection"),
    ("unsubscribe", "changes the connection"),
    ("punsubscribe", "changes the connection"),
    ("sunsubscribe", "changes the connection"),
    ("hello", "changes the protocol"),
    ("reset", "changes the connection"),
    ("quit", "closes the connection"),
    ("auth", "changes the connection"),
    ("multi", "changes the connection"),
    ("exec", "changes the connection"),
    ("discard", "changes the connection"),
    ("watch", "changes the connection"),
    ("unwatch", "changes the connection"),
    ("select", "changes the connection"),
    ("sync", "replication stream"),
    ("psync", "replication stream"),
    ("replconf", "ACK and GETACK have no reply"),
    ("replicaof", "turns the server into a replica"),
    ("slaveof", "turns the server into a replica"),
    ("migrate", "talks to another server"),
    ("acl", "ACL (issue 18)"),
    ("cluster", "cluster mode: tests/cluster.rs"),
    ("readonly", "cluster mode: tests/cluster.rs"),
    ("readwrite", "cluster mode: tests/cluster.rs"),
    ("asking", "cluster mode: tests/cluster.rs"),
    ("save", "slow, writes files"),
    ("bgsave", "forks"),
    ("bgrewriteaof", "forks"),
    ("config|set", "changes the server"),
    ("config|rewrite", "writes the config file"),
    ("script|debug", "SCRIPT DEBUG YES is refused by quince (a forked session)"),
    ("randomkey", "random"),
    ("srandmember", "random"),
    ("spop", "random"),
    ("hrandfield", "random"),
    ("zrandmember", "random"),
    ("restore", "needs a payload"),
    ("restore-asking", "needs a payload (and cluster mode: tests/cluster.rs)"),
    ("pfselftest", "slow"),
    ("pfdebug", "Redis's HyperLogLog internals"),
];

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &'a [String]) -> &'a str {
        &items[self.below(items.len())]
    }
}

/// The dataset every round starts from: a key of each type.
const DATASET: &[&[&str]] = &[
    &["SET", "str", "hello"],
    &["SET", "num", "42"],
    &["RPUSH", "list", "a", "b", "c", "1", "2"],
    &["HSET", "hash", "f1", "v1", "f2", "2"],
    &["SADD", "set", "a", "b", "1"],
    &["SADD", "intset", "1", "2", "3"],
    &["ZADD", "zset", "1", "a", "2", "b", "3.5", "c"],
    &["XADD", "stream", "1-1", "f", "v"],
    &["XGROUP", "CREATE", "stream", "g", "0"],
    &["PFADD", "hll", "a", "b"],
    &["GEOADD", "geo", "13.361389", "38.115556", "palermo"],
    &["SETBIT", "bits", "7", "1"],
];

const KEYS: &[&str] =
    &["str", "num", "list", "hash", "set", "intset", "zset", "stream", "hll", "geo", "bits", "missing"];

const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "10",
    "-100",
    "3.5",
    "-0.5",
    "1e3",
    "inf",
    "-inf",
    "+inf",
    "nan",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "0x10",
    "abc",
    "",
    " 1",
    "1 ",
    "*",
    "a*",
    "[",
    "$",
    "-",
    "+",
    "(1",
    "[a",
    "0-0",
    "1-1",
    "*",
    ">",
    "$",
    "field",
    "f1",
    "g",
    "c1",
    "palermo",
    "m",
    "km",
    "ASC",
    "DESC",
];

/// Every token a command's arguments name in COMMAND DOCS (NX, WITHSCORES, LIMIT...).
fn tokens_of(docs: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(docs);
    let parts: Vec<&str> = text.split("\r\n").collect();
    let mut tokens = Vec::new();
    for window in parts.windows(3) {
        if window[0] == "token" && !window[2].is_empty() {
            tokens.push(window[2].to_string());
        }
    }
    // Subcommand names (`xgroup|create` gives CREATE).
    for part in &parts {
        if let Some((_, sub)) = part.split_once('|') {
            if !sub.is_empty() && !sub.contains(' ') {
                tokens.push(sub.to_uppercase());
            }
        }
    }
    tokens.sort();
    tokens.dedup();
    tokens
}

/// The names of an array of bulk strings (COMMAND LIST).
fn names_of(reply: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(reply);
    text.split("\r\n").skip(1).filter(|l| !l.starts_with('$') && !l.is_empty()).map(str::to_lowercase).collect()
}

/// A reply's class: its RESP type, nulls apart, errors apart.
fn class(reply: &[u8]) -> String {
    match reply {
        [b'$', b'-', b'1', ..] | [b'*', b'-', b'1', ..] | [b'_', ..] => "null".into(),
        [b'-', ..] => "error".into(),
        [first, ..] => (*first as char).to_string(),
        [] => "nothing".into(),
    }
}

fn show(reply: &[u8]) -> String {
    let text = String::from_utf8_lossy(reply);
    if text.len() > 200 {
        format!("{}...", &text[..200])
    } else {
        text.into_owned()
    }
}

fn reset(c: &mut RawClient) {
    c.call(&["FLUSHALL"]);
    for step in DATASET {
        c.call(step);
    }
}

fn run_seed(
    seed: u64,
    commands: &[(String, Vec<String>)],
    q: &mut RawClient,
    r: &mut RawClient,
    differences: &mut Vec<String>,
    classes: &mut HashMap<String, usize>,
) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let keys: Vec<String> = KEYS.iter().map(|s| s.to_string()).collect();
    let values: Vec<String> = VALUES.iter().map(|s| s.to_string()).collect();
    for round in 0..20 {
        reset(q);
        reset(r);
        for step in 0..25 {
            let (name, tokens) = &commands[rng.below(commands.len())];
            let mut args: Vec<String> = name.split('|').map(str::to_string).collect();
            let count = rng.below(7);
            for position in 0..count {
                let arg = match rng.below(10) {
                    // Keys come first more often, where most commands take them.
                    0..=3 if position == 0 => rng.pick(&keys).to_string(),
                    0..=1 => rng.pick(&keys).to_string(),
                    2..=4 if !tokens.is_empty() => rng.pick(tokens).to_string(),
                    _ => rng.pick(&values).to_string(),
                };
                args.push(arg);
            }
            // BLOCK, and a timeout of 0, would wait forever.
            if args.iter().any(|a| a.eq_ignore_ascii_case("block")) {
                continue;
            }
            let (qr, rr) = (q.call(&args), r.call(&args));
            *classes.entry(class(&rr)).or_insert(0) += 1;
            // Errors are compared word for word too.
            if class(&qr) != class(&rr) || (qr.starts_with(b"-") && qr != rr) {
                differences.push(format!(
                    "seed {seed}, round {round}, step {step}: {:?}\n  quince: {}\n  redis:  {}",
                    args,
                    show(&qr),
                    show(&rr)
                ));
                // The datasets may differ from here: next round.
                break;
            }
        }
    }
}

#[test]
fn random_commands_reply_as_redis_does() {
    let Some(redis) = start_redis(&[]) else { return };
    let quince = start_quince(QUINCE, &[]);
    let mut r = redis.client();
    let mut q = quince.client();
    let left_out: HashMap<&str, &str> = LEFT_OUT.iter().copied().collect();
    let quince_names = names_of(&q.call(&["COMMAND", "LIST"]));
    let mut commands = Vec::new();
    for name in names_of(&r.call(&["COMMAND", "LIST"])) {
        // (Subcommands are listed as `container|sub`: left out with their container.)
        let container = name.split('|').next().unwrap_or(&name);
        if left_out.contains_key(container) || left_out.contains_key(name.as_str()) {
            continue;
        }
        assert!(quince_names.contains(&name), "redis-server has {name}, quince has not (and it is not left out)");
        let tokens = tokens_of(&r.call(&["COMMAND", "DOCS", &name]));
        commands.push((name, tokens));
    }
    commands.sort();
    let seeds = match std::env::var("QUINCE_FUZZ_SEEDS") {
        Ok(range) => {
            let (a, b) = range.split_once("..").expect("QUINCE_FUZZ_SEEDS=a..b");
            a.parse().unwrap()..b.parse().unwrap()
        }
        Err(_) => 1..41,
    };
    let mut differences = Vec::new();
    let mut classes = HashMap::new();
    for seed in seeds {
        run_seed(seed, &commands, &mut q, &mut r, &mut differences, &mut classes);
    }
    eprintln!("{} commands, replies by class: {classes:?}", commands.len());
    assert!(differences.is_empty(), "{} differences:\n{}", differences.len(), differences.join("\n"));
}
