//! Differential tests for DEBUG DIGEST and DEBUG DIGEST-VALUE: datasets of every type, in
//! small and large encodings, with TTLs and in several databases, must give the very digest
//! redis-server gives (Redis 7.0's SHA1 mixing in debug.c), RESP2 and RESP3. Skipped
//! without redis-server unless QUINCE_REQUIRE_REDIS=1.

use quince_test_util::{Differential, Step};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

/// A fixed time far in the future (2100-01-01), so both servers hold the same TTL.
const FAR_FUTURE_MS: &str = "4102444800000";

fn cmd(args: &[&str]) -> Step {
    Step::cmd(args)
}

/// A command whose trailing arguments are generated.
fn cmd_with(head: &[&str], tail: impl IntoIterator<Item = String>) -> Step {
    let tail: Vec<String> = tail.into_iter().collect();
    let mut all: Vec<&str> = head.to_vec();
    all.extend(tail.iter().map(String::as_str));
    Step::cmd(&all)
}

fn digest() -> Step {
    cmd(&["DEBUG", "DIGEST"])
}

fn digest_value(keys: &[&str]) -> Step {
    let mut all = vec!["DEBUG", "DIGEST-VALUE"];
    all.extend_from_slice(keys);
    Step::cmd(&all)
}

fn run(name: &str, steps: &[Step]) {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    diff.run(name, steps);
}

#[test]
fn empty_dataset_and_missing_keys() {
    run(
        "empty",
        &[
            digest(),
            digest_value(&[]),
            digest_value(&["missing"]),
            digest_value(&["missing", "other"]),
            cmd(&["SET", "k", "v"]),
            cmd(&["DEL", "k"]),
            digest(),
            cmd(&["SELECT", "3"]),
            digest(),
            cmd(&["SELECT", "0"]),
        ],
    );
}

#[test]
fn strings() {
    run(
        "strings",
        &[
            cmd(&["SET", "s", "hello"]),
            digest(),
            cmd(&["SET", "int", "12345"]),
            cmd(&["SET", "negint", "-9223372036854775808"]),
            cmd(&["SET", "zeros", "007"]),
            cmd(&["SET", "empty", ""]),
            cmd(&["SET", "raw", &"x".repeat(100)]),
            cmd(&["SET", "appended", "12"]),
            cmd(&["APPEND", "appended", "34"]),
            cmd(&["SET", "float", "1.5"]),
            cmd(&["INCRBYFLOAT", "float", "0.1"]),
            cmd(&["SET", "counter", "10"]),
            cmd(&["INCR", "counter"]),
            Step::bytes(&[b"SET", b"binary", b"\x00\xff\r\n\x01"]),
            digest(),
            digest_value(&["s", "int", "negint", "zeros", "empty", "raw", "appended", "float", "counter", "binary"]),
            digest_value(&["int", "missing", "s"]),
        ],
    );
}

#[test]
fn lists() {
    run(
        "lists",
        &[
            cmd(&["RPUSH", "small", "a", "1", "-2", "b", "", "3.5"]),
            cmd(&["LPUSH", "small", "head"]),
            cmd_with(
                &["RPUSH", "large"],
                (0..300).map(|i| if i % 3 == 0 { i.to_string() } else { format!("item:{i}") }),
            ),
            cmd(&["RPUSH", "large", &"y".repeat(200)]),
            cmd(&["RPUSH", "ab", "a", "b"]),
            cmd(&["RPUSH", "ba", "b", "a"]),
            digest(),
            digest_value(&["small", "large", "ab", "ba"]),
            cmd(&["LPOP", "large", "5"]),
            cmd(&["LSET", "small", "0", "new"]),
            digest(),
            digest_value(&["small", "large"]),
        ],
    );
}

#[test]
fn sets() {
    run(
        "sets",
        &[
            cmd(&["SADD", "ints", "1", "2", "3", "-5", "1000000", "-9223372036854775808"]),
            cmd(&["SADD", "strs", "a", "b", "c", "007", ""]),
            cmd(&["SADD", "mixed", "1", "two", "3"]),
            cmd_with(&["SADD", "bigints"], (0..600).map(|i| (i * 7 - 1000).to_string())),
            cmd_with(&["SADD", "bigstrs"], (0..300).map(|i| format!("member:{i}"))),
            // The same members added in another order.
            cmd_with(&["SADD", "bigstrs2"], (0..300).rev().map(|i| format!("member:{i}"))),
            digest(),
            digest_value(&["ints", "strs", "mixed", "bigints", "bigstrs", "bigstrs2"]),
            cmd(&["SREM", "bigints", "-1000", "-993"]),
            cmd(&["SADD", "ints", "notanint"]),
            digest(),
            digest_value(&["ints", "bigints"]),
        ],
    );
}

#[test]
fn sorted_sets() {
    let scores = [
        "0",
        "-0",
        "1",
        "-1",
        "1.5",
        "0.1",
        "-2.25",
        "3.141592653589793",
        "1e20",
        "1e-5",
        "100000000000000000",
        "12345678901234.5625",
        "inf",
        "-inf",
        "0.3",
        "4503599627370497",
        "1.7976931348623157e308",
        "5e-324",
    ];
    let small: Vec<String> = scores
        .iter()
        .enumerate()
        .flat_map(|(i, s)| [s.to_string(), if i % 2 == 0 { format!("m{i}") } else { i.to_string() }])
        .collect();
    run(
        "sorted sets",
        &[
            cmd_with(&["ZADD", "small"], small.clone()),
            cmd_with(
                &["ZADD", "large"],
                (0..200).flat_map(|i| {
                    let score = match i % 5 {
                        0 => format!("{}", f64::from(i) * 0.1),
                        1 => format!("-{}", f64::from(i) / 3.0),
                        2 => i.to_string(),
                        3 => format!("{}e-7", i),
                        _ => format!("{}.{}", i, i),
                    };
                    [score, format!("member:{i}")]
                }),
            ),
            cmd(&["ZADD", "large", "inf", "top", "-inf", "bottom", "-0", "negzero"]),
            cmd(&["ZADD", "single", "2.5", "only"]),
            digest(),
            digest_value(&["small", "large", "single"]),
            cmd(&["ZINCRBY", "small", "0.2", "m0"]),
            cmd(&["ZINCRBY", "large", "1e-3", "member:7"]),
            cmd(&["ZREM", "large", "member:0"]),
            digest(),
            digest_value(&["small", "large"]),
        ],
    );
}

#[test]
fn hashes() {
    run(
        "hashes",
        &[
            cmd(&["HSET", "small", "f1", "v1", "n", "42", "empty", "", "neg", "-7"]),
            cmd_with(
                &["HSET", "large"],
                (0..200).flat_map(|i| {
                    [format!("field:{i}"), if i % 2 == 0 { i.to_string() } else { format!("value:{i}") }]
                }),
            ),
            cmd(&["HSET", "long", "f", &"z".repeat(100)]),
            // Fields and values swapped must not digest alike.
            cmd(&["HSET", "fv", "a", "b"]),
            cmd(&["HSET", "vf", "b", "a"]),
            digest(),
            digest_value(&["small", "large", "long", "fv", "vf"]),
            cmd(&["HDEL", "large", "field:3"]),
            cmd(&["HINCRBY", "small", "n", "1"]),
            cmd(&["HINCRBYFLOAT", "small", "float", "2.5"]),
            digest(),
            digest_value(&["small", "large"]),
        ],
    );
}

#[test]
fn streams() {
    let mut steps = vec![
        cmd(&["XADD", "s", "1-1", "name", "a", "n", "1"]),
        cmd(&["XADD", "s", "1-2", "name", "b", "n", "2"]),
        cmd(&["XADD", "s", "5-0", "other", "x"]),
        cmd(&["XADD", "s", "5-1", "name", "c", "n", "-3", "extra", ""]),
        digest(),
        digest_value(&["s"]),
        cmd(&["XDEL", "s", "1-2"]),
        digest_value(&["s"]),
        // Consumer groups and pending entries.
        cmd(&["XGROUP", "CREATE", "s", "g1", "0"]),
        cmd(&["XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", "s", ">"]),
        cmd(&["XGROUP", "CREATE", "s", "g2", "$"]),
        digest(),
        digest_value(&["s"]),
    ];
    // Many entries, some with other fields: Redis splits them into several radix-tree nodes.
    steps.extend((0..250).map(|i| {
        cmd(&[
            "XADD",
            "big",
            &format!("{}-{}", 100 + i / 3, i % 3),
            if i % 7 == 0 { "other" } else { "field" },
            &i.to_string(),
            "data",
            &format!("payload:{i}"),
        ])
    }));
    steps.extend([
        digest_value(&["big"]),
        cmd(&["XDEL", "big", "110-1", "150-0"]),
        cmd(&["XTRIM", "big", "MINID", "101"]),
        cmd(&["XADD", "empty", "MAXLEN", "0", "1-0", "f", "v"]),
        digest(),
        digest_value(&["s", "big", "empty"]),
    ]);
    run("streams", &steps);
}

#[test]
fn expires_and_databases() {
    run(
        "expires and databases",
        &[
            cmd(&["SET", "plain", "v"]),
            cmd(&["SET", "ttl", "v"]),
            digest_value(&["plain", "ttl"]),
            cmd(&["PEXPIREAT", "ttl", FAR_FUTURE_MS]),
            digest_value(&["plain", "ttl"]),
            digest(),
            cmd(&["RPUSH", "list", "a", "b"]),
            cmd(&["PEXPIREAT", "list", FAR_FUTURE_MS]),
            cmd(&["HSET", "hash", "f", "v"]),
            cmd(&["PEXPIREAT", "hash", "4102444800001"]),
            cmd(&["SET", "setex", "v", "PXAT", FAR_FUTURE_MS]),
            digest(),
            digest_value(&["ttl", "list", "hash", "setex"]),
            cmd(&["PERSIST", "ttl"]),
            digest_value(&["ttl"]),
            digest(),
            // The same keys in another database give another digest.
            cmd(&["SELECT", "1"]),
            cmd(&["SET", "plain", "v"]),
            digest(),
            cmd(&["SADD", "set", "1", "2"]),
            cmd(&["ZADD", "zset", "1.25", "a"]),
            cmd(&["PEXPIREAT", "zset", FAR_FUTURE_MS]),
            digest_value(&["plain", "set", "zset", "ttl"]),
            cmd(&["SELECT", "7"]),
            cmd(&["XADD", "stream", "1-0", "f", "v"]),
            cmd(&["SET", "plain", "v"]),
            digest(),
            cmd(&["SELECT", "15"]),
            cmd(&["SET", "last", "1"]),
            digest(),
            cmd(&["SELECT", "0"]),
            cmd(&["MOVE", "plain", "2"]),
            digest(),
            cmd(&["SWAPDB", "0", "1"]),
            digest(),
            digest_value(&["plain", "set", "ttl"]),
            cmd(&["FLUSHDB"]),
            digest(),
        ],
    );
}

#[test]
fn logically_expired_keys_still_count() {
    // Redis walks its dict without expiring: a key whose TTL passed but that no one touched
    // yet is still in both digests.
    run(
        "logically expired",
        &[
            cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]),
            cmd(&["SET", "gone", "v"]),
            cmd(&["SET", "kept", "v"]),
            cmd(&["PEXPIRE", "gone", "1"]),
            Step::SleepMs(20),
            digest_value(&["gone", "kept"]),
            digest(),
            cmd(&["GET", "gone"]),
            digest_value(&["gone"]),
            digest(),
            cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]),
        ],
    );
}
