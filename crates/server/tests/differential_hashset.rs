//! Differential tests for the hash and set families: each script runs against quince and a
//! real redis-server in RESP2 and RESP3, replies compared byte for byte, or as a multiset
//! where a hash table's order shows (hashtable-encoded hashes and sets). Listpack hashes
//! and intsets have a defined order, so those replies are compared exactly. Skipped
//! without redis-server unless QUINCE_REQUIRE_REDIS=1.

use quince_test_util::{Compare, Differential, Step};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn cmd(args: &[&str]) -> Step {
    Step::cmd(args)
}

/// A step whose reply lists hash-table elements in table order.
fn unordered(args: &[&str]) -> Step {
    Step::cmd(args).compare(Compare::Unordered)
}

fn run(name: &str, steps: &[Step]) {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    diff.run(name, steps);
}

const HASH_COMMANDS: &[&str] = &[
    "hdel",
    "hexists",
    "hget",
    "hgetall",
    "hincrby",
    "hincrbyfloat",
    "hkeys",
    "hlen",
    "hmget",
    "hmset",
    "hrandfield",
    "hscan",
    "hset",
    "hsetnx",
    "hstrlen",
    "hvals",
];

const SET_COMMANDS: &[&str] = &[
    "sadd",
    "scard",
    "sdiff",
    "sdiffstore",
    "sinter",
    "sintercard",
    "sinterstore",
    "sismember",
    "smembers",
    "smismember",
    "smove",
    "spop",
    "srandmember",
    "srem",
    "sscan",
    "sunion",
    "sunionstore",
];

#[test]
fn command_info_and_docs() {
    let mut steps = Vec::new();
    for name in HASH_COMMANDS.iter().chain(SET_COMMANDS) {
        steps.push(cmd(&["COMMAND", "INFO", name]));
        steps.push(cmd(&["COMMAND", "DOCS", name]));
    }
    steps.extend([
        cmd(&["COMMAND", "GETKEYS", "sintercard", "2", "a", "b", "LIMIT", "1"]),
        cmd(&["COMMAND", "GETKEYS", "sintercard", "1", "a", "b"]),
        cmd(&["COMMAND", "GETKEYS", "sintercard", "0", "a"]),
        cmd(&["COMMAND", "GETKEYS", "sintercard", "x", "a"]),
        cmd(&["COMMAND", "GETKEYS", "sintercard", "-1", "a"]),
        cmd(&["COMMAND", "GETKEYS", "sintercard", "3", "a", "b"]),
        cmd(&["COMMAND", "GETKEYSANDFLAGS", "sintercard", "2", "a", "b"]),
        cmd(&["COMMAND", "GETKEYS", "smove", "a", "b", "m"]),
        cmd(&["COMMAND", "GETKEYSANDFLAGS", "sinterstore", "d", "a", "b"]),
        cmd(&["COMMAND", "GETKEYSANDFLAGS", "hset", "h", "f", "v"]),
    ]);
    run("hash/set introspection", &steps);
}

#[test]
fn hash_basics() {
    run(
        "hash basics",
        &[
            cmd(&["HSET", "h", "a", "1", "b", "2", "c", "3"]),
            cmd(&["HSET", "h", "a", "10", "d", "4"]),
            cmd(&["HGETALL", "h"]),
            cmd(&["HKEYS", "h"]),
            cmd(&["HVALS", "h"]),
            cmd(&["HLEN", "h"]),
            cmd(&["HGET", "h", "a"]),
            cmd(&["HGET", "h", "zz"]),
            cmd(&["HGET", "nokey", "a"]),
            cmd(&["HMGET", "h", "a", "zz", "c"]),
            cmd(&["HMGET", "nokey", "a", "b"]),
            cmd(&["HEXISTS", "h", "b"]),
            cmd(&["HEXISTS", "h", "zz"]),
            cmd(&["HEXISTS", "nokey", "zz"]),
            cmd(&["HSTRLEN", "h", "a"]),
            cmd(&["HSTRLEN", "h", "zz"]),
            cmd(&["HSTRLEN", "nokey", "zz"]),
            cmd(&["HSETNX", "h", "a", "x"]),
            cmd(&["HSETNX", "h", "e", "5"]),
            cmd(&["HSETNX", "new", "f", "v"]),
            cmd(&["HGETALL", "new"]),
            cmd(&["HMSET", "h", "f", "6", "g", "7"]),
            cmd(&["HGETALL", "h"]),
            cmd(&["HDEL", "h", "a", "zz", "c"]),
            cmd(&["HDEL", "h", "zz"]),
            cmd(&["HDEL", "nokey", "zz"]),
            cmd(&["HGETALL", "h"]),
            cmd(&["HDEL", "h", "b", "d", "e", "f", "g", "more"]),
            cmd(&["EXISTS", "h"]),
            cmd(&["HGETALL", "h"]),
            cmd(&["HKEYS", "h"]),
            cmd(&["HVALS", "h"]),
            cmd(&["HLEN", "h"]),
            cmd(&["TYPE", "new"]),
            cmd(&["OBJECT", "ENCODING", "new"]),
            // Binary-safe fields and values, empty ones too.
            Step::bytes(&[b"HSET", b"bin", b"\x00\xff", b"", b"", b"\r\n"]),
            Step::bytes(&[b"HGET", b"bin", b""]),
            Step::bytes(&[b"HGETALL", b"bin"]),
        ],
    );
}

#[test]
fn hash_errors() {
    run(
        "hash errors",
        &[
            cmd(&["SET", "str", "x"]),
            cmd(&["HSET", "str", "a", "1"]),
            cmd(&["HMSET", "str", "a", "1"]),
            cmd(&["HSETNX", "str", "a", "1"]),
            cmd(&["HGET", "str", "a"]),
            cmd(&["HMGET", "str", "a"]),
            cmd(&["HDEL", "str", "a"]),
            cmd(&["HLEN", "str"]),
            cmd(&["HSTRLEN", "str", "a"]),
            cmd(&["HEXISTS", "str", "a"]),
            cmd(&["HKEYS", "str"]),
            cmd(&["HVALS", "str"]),
            cmd(&["HGETALL", "str"]),
            cmd(&["HINCRBY", "str", "a", "1"]),
            cmd(&["HINCRBYFLOAT", "str", "a", "1"]),
            cmd(&["HRANDFIELD", "str"]),
            cmd(&["HRANDFIELD", "str", "2"]),
            cmd(&["HSCAN", "str", "0"]),
            cmd(&["HSET", "h", "a", "1", "b"]),
            cmd(&["HMSET", "h", "a", "1", "b"]),
            cmd(&["HSET", "h", "a"]),
            cmd(&["HSET", "h"]),
            cmd(&["HGET", "h"]),
            cmd(&["HMGET", "h"]),
            cmd(&["HDEL", "h"]),
            cmd(&["HSETNX", "h", "a"]),
            cmd(&["HLEN", "h", "x"]),
            cmd(&["HINCRBY", "h", "a"]),
            cmd(&["HRANDFIELD"]),
            cmd(&["HSCAN", "h"]),
            cmd(&["EXISTS", "h"]),
        ],
    );
}

#[test]
fn hash_counters() {
    run(
        "hash counters",
        &[
            cmd(&["HINCRBY", "h", "n", "5"]),
            cmd(&["HINCRBY", "h", "n", "-7"]),
            cmd(&["HINCRBY", "h", "n", "x"]),
            cmd(&["HINCRBY", "h", "n", "1.5"]),
            cmd(&["HINCRBY", "h", "n", "99999999999999999999"]),
            cmd(&["HSET", "h", "big", "9223372036854775806"]),
            cmd(&["HINCRBY", "h", "big", "1"]),
            cmd(&["HINCRBY", "h", "big", "1"]),
            cmd(&["HSET", "h", "small", "-9223372036854775807"]),
            cmd(&["HINCRBY", "h", "small", "-1"]),
            cmd(&["HINCRBY", "h", "small", "-1"]),
            cmd(&["HSET", "h", "s", " 1", "t", "1 ", "u", "abc", "z", "007"]),
            cmd(&["HINCRBY", "h", "s", "1"]),
            cmd(&["HINCRBY", "h", "t", "1"]),
            cmd(&["HINCRBY", "h", "u", "1"]),
            cmd(&["HINCRBY", "h", "z", "1"]),
            cmd(&["HINCRBYFLOAT", "h", "f", "1.5"]),
            cmd(&["HINCRBYFLOAT", "h", "f", "0.1"]),
            cmd(&["HINCRBYFLOAT", "h", "f", "-1.6"]),
            cmd(&["HINCRBYFLOAT", "h", "f", "1e3"]),
            cmd(&["HINCRBYFLOAT", "h", "f", "abc"]),
            cmd(&["HINCRBYFLOAT", "h", "f", ""]),
            cmd(&["HINCRBYFLOAT", "h", "f", "+inf"]),
            cmd(&["HINCRBYFLOAT", "h", "f", "nan"]),
            cmd(&["HINCRBYFLOAT", "h", "s", "1"]),
            cmd(&["HINCRBYFLOAT", "h", "u", "1"]),
            cmd(&["HINCRBYFLOAT", "h", "n", "0.5"]),
            cmd(&["HSET", "h", "huge", "1e4932"]),
            cmd(&["HINCRBYFLOAT", "h", "huge", "1e4932"]),
            cmd(&["HINCRBYFLOAT", "fresh", "x", "inf"]),
            cmd(&["EXISTS", "fresh"]),
            cmd(&["HINCRBYFLOAT", "fresh", "x", "3.0"]),
            cmd(&["HINCRBYFLOAT", "fresh", "x", "1.23"]),
            cmd(&["HINCRBYFLOAT", "fresh", "x", "0.77"]),
            cmd(&["HGETALL", "h"]),
            Step::bytes(&[b"HSET", b"h", b"nul", b"1\x002"]),
            Step::bytes(&[b"HINCRBYFLOAT", b"h", b"nul", b"1"]),
        ],
    );
}

#[test]
fn hash_encodings() {
    run(
        "hash encodings",
        &[
            cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "4"]),
            cmd(&["CONFIG", "SET", "hash-max-listpack-value", "8"]),
            cmd(&["HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"]),
            cmd(&["OBJECT", "ENCODING", "h"]),
            cmd(&["HSET", "h", "e", "5"]),
            cmd(&["OBJECT", "ENCODING", "h"]),
            unordered(&["HGETALL", "h"]),
            unordered(&["HKEYS", "h"]),
            unordered(&["HVALS", "h"]),
            cmd(&["HDEL", "h", "a", "b", "c", "d"]),
            cmd(&["OBJECT", "ENCODING", "h"]),
            cmd(&["HGETALL", "h"]),
            // Long values and fields, through every writing command.
            cmd(&["HSET", "v", "f", "12345678"]),
            cmd(&["OBJECT", "ENCODING", "v"]),
            cmd(&["HSET", "v", "f", "123456789"]),
            cmd(&["OBJECT", "ENCODING", "v"]),
            cmd(&["HSET", "w", "123456789", "x"]),
            cmd(&["OBJECT", "ENCODING", "w"]),
            cmd(&["HSETNX", "x", "f", "123456789"]),
            cmd(&["OBJECT", "ENCODING", "x"]),
            cmd(&["HSET", "y", "f", "1"]),
            cmd(&["HSETNX", "y", "f", "123456789"]),
            cmd(&["OBJECT", "ENCODING", "y"]),
            cmd(&["HINCRBYFLOAT", "z1", "tmp", "0.000005"]),
            cmd(&["OBJECT", "ENCODING", "z1"]),
            cmd(&["HINCRBYFLOAT", "z2", "tmp", "0.0000005"]),
            cmd(&["OBJECT", "ENCODING", "z2"]),
            cmd(&["HINCRBY", "z3", "abcdefghi", "1"]),
            cmd(&["OBJECT", "ENCODING", "z3"]),
            cmd(&["HINCRBY", "z4", "f", "123456789"]),
            cmd(&["OBJECT", "ENCODING", "z4"]),
            // One long value among short ones converts before anything is written.
            cmd(&["HMSET", "m", "a", "1", "b", "123456789"]),
            cmd(&["OBJECT", "ENCODING", "m"]),
            cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "0"]),
            cmd(&["HSET", "zero", "a", "1"]),
            cmd(&["OBJECT", "ENCODING", "zero"]),
            cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "512"]),
            cmd(&["CONFIG", "SET", "hash-max-listpack-value", "64"]),
        ],
    );
}

#[test]
fn hrandfield() {
    run(
        "hrandfield",
        &[
            cmd(&["HRANDFIELD", "nokey"]),
            cmd(&["HRANDFIELD", "nokey", "5"]),
            cmd(&["HRANDFIELD", "nokey", "-5", "WITHVALUES"]),
            cmd(&["HRANDFIELD", "nokey", "0"]),
            cmd(&["HSET", "one", "f", "v"]),
            cmd(&["HRANDFIELD", "one"]),
            cmd(&["HRANDFIELD", "one", "1"]),
            cmd(&["HRANDFIELD", "one", "1", "WITHVALUES"]),
            cmd(&["HRANDFIELD", "one", "-3"]),
            cmd(&["HRANDFIELD", "one", "-3", "withvalues"]),
            cmd(&["HRANDFIELD", "one", "0"]),
            cmd(&["HRANDFIELD", "one", "0", "WITHVALUES"]),
            cmd(&["HSET", "lp", "a", "1", "b", "2", "c", "3"]),
            // A count covering the whole listpack returns it in order.
            cmd(&["HRANDFIELD", "lp", "3"]),
            cmd(&["HRANDFIELD", "lp", "10", "WITHVALUES"]),
            cmd(&["HRANDFIELD", "lp", "x"]),
            cmd(&["HRANDFIELD", "lp", "1", "x"]),
            cmd(&["HRANDFIELD", "lp", "1", "WITHVALUES", "x"]),
            cmd(&["HRANDFIELD", "lp", "-9223372036854775808"]),
            cmd(&["HRANDFIELD", "lp", "-9223372036854770000", "WITHVALUES"]),
            cmd(&["HRANDFIELD", "lp", "4611686018427387904", "WITHVALUES"]),
            cmd(&["HRANDFIELD", "lp", "4611686018427387903", "WITHVALUES"]).compare(Compare::ErrorOrNot),
            cmd(&["HRANDFIELD", "lp", "99999999999999999999"]),
            cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "2"]),
            cmd(&["HSET", "ht", "a", "1", "b", "2", "c", "3"]),
            cmd(&["OBJECT", "ENCODING", "ht"]),
            unordered(&["HRANDFIELD", "ht", "3"]),
            unordered(&["HRANDFIELD", "ht", "30"]),
            cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "512"]),
        ],
    );
}

#[test]
fn hscan() {
    run(
        "hscan",
        &[
            cmd(&["HSCAN", "nokey", "0"]),
            cmd(&["HSCAN", "nokey", "0", "COUNT", "0"]),
            cmd(&["HSCAN", "nokey", "x"]),
            cmd(&["HSET", "h", "foo", "1", "fab", "2", "fiz", "3", "foobar", "10", "1", "a"]),
            cmd(&["HSCAN", "h", "0"]),
            cmd(&["HSCAN", "h", "0", "MATCH", "foo*"]),
            cmd(&["HSCAN", "h", "0", "MATCH", "*", "COUNT", "1"]),
            cmd(&["HSCAN", "h", "0", "match", "f?z", "count", "100"]),
            cmd(&["HSCAN", "h", "123"]),
            cmd(&["HSCAN", "h", ""]),
            cmd(&["HSCAN", "h", "-1"]),
            cmd(&["HSCAN", "h", "+1"]),
            cmd(&["HSCAN", "h", " 1"]),
            cmd(&["HSCAN", "h", "1 "]),
            cmd(&["HSCAN", "h", "18446744073709551616"]),
            cmd(&["HSCAN", "h", "0", "COUNT", "0"]),
            cmd(&["HSCAN", "h", "0", "COUNT", "-1"]),
            cmd(&["HSCAN", "h", "0", "COUNT", "x"]),
            cmd(&["HSCAN", "h", "0", "COUNT"]),
            cmd(&["HSCAN", "h", "0", "MATCH"]),
            cmd(&["HSCAN", "h", "0", "TYPE", "string"]),
            cmd(&["HSCAN", "h", "0", "BOGUS", "1"]),
            // A hashtable scanned with a large COUNT comes back whole.
            cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "2"]),
            cmd(&["HSET", "t", "a", "1", "b", "2", "c", "3", "abc", "4"]),
            unordered(&["HSCAN", "t", "0", "COUNT", "1000"]),
            unordered(&["HSCAN", "t", "0", "MATCH", "a*", "COUNT", "1000"]),
            cmd(&["HSCAN", "t", "0", "COUNT", "0"]),
            cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "512"]),
        ],
    );
}

#[test]
fn set_basics() {
    run(
        "set basics",
        &[
            cmd(&["SADD", "s", "3", "1", "2", "2"]),
            cmd(&["OBJECT", "ENCODING", "s"]),
            cmd(&["SMEMBERS", "s"]),
            cmd(&["SCARD", "s"]),
            cmd(&["SISMEMBER", "s", "2"]),
            cmd(&["SISMEMBER", "s", "02"]),
            cmd(&["SISMEMBER", "s", "x"]),
            cmd(&["SISMEMBER", "nokey", "x"]),
            cmd(&["SMISMEMBER", "s", "1", "x", "3", "+3"]),
            cmd(&["SMISMEMBER", "nokey", "1", "2"]),
            cmd(&["SADD", "s", "-5", "9223372036854775807", "-9223372036854775808"]),
            cmd(&["SMEMBERS", "s"]),
            cmd(&["OBJECT", "ENCODING", "s"]),
            cmd(&["SREM", "s", "1", "x", "-5"]),
            cmd(&["SMEMBERS", "s"]),
            cmd(&["SADD", "s", "a"]),
            cmd(&["OBJECT", "ENCODING", "s"]),
            unordered(&["SMEMBERS", "s"]),
            cmd(&["SISMEMBER", "s", "2"]),
            cmd(&["SREM", "s", "a"]),
            cmd(&["OBJECT", "ENCODING", "s"]),
            cmd(&["SREM", "s", "2", "3", "9223372036854775807", "-9223372036854775808", "x"]),
            cmd(&["EXISTS", "s"]),
            cmd(&["SMEMBERS", "s"]),
            cmd(&["SCARD", "s"]),
            cmd(&["SREM", "nokey", "a"]),
            cmd(&["SADD", "big", "9223372036854775808"]),
            cmd(&["OBJECT", "ENCODING", "big"]),
            cmd(&["SADD", "str", "a", "b", "a"]),
            cmd(&["OBJECT", "ENCODING", "str"]),
            cmd(&["SADD", "lead0", "1", "01"]),
            cmd(&["OBJECT", "ENCODING", "lead0"]),
            unordered(&["SMEMBERS", "lead0"]),
            Step::bytes(&[b"SADD", b"bin", b"\x00", b"", b"\xff"]),
            Step::bytes(&[b"SISMEMBER", b"bin", b""]),
            Step::bytes(&[b"SMISMEMBER", b"bin", b"\x00", b"\x01"]),
            cmd(&["CONFIG", "SET", "set-max-intset-entries", "3"]),
            cmd(&["SADD", "i", "1", "2", "3"]),
            cmd(&["OBJECT", "ENCODING", "i"]),
            cmd(&["SADD", "i", "4"]),
            cmd(&["OBJECT", "ENCODING", "i"]),
            cmd(&["SADD", "j", "1", "2", "3", "4"]),
            cmd(&["OBJECT", "ENCODING", "j"]),
            cmd(&["CONFIG", "SET", "set-max-intset-entries", "0"]),
            cmd(&["SADD", "k", "1"]),
            cmd(&["OBJECT", "ENCODING", "k"]),
            cmd(&["CONFIG", "SET", "set-max-intset-entries", "512"]),
        ],
    );
}

#[test]
fn set_errors() {
    run(
        "set errors",
        &[
            cmd(&["SET", "str", "x"]),
            cmd(&["SADD", "str", "a"]),
            cmd(&["SREM", "str", "a"]),
            cmd(&["SISMEMBER", "str", "a"]),
            cmd(&["SMISMEMBER", "str", "a"]),
            cmd(&["SCARD", "str"]),
            cmd(&["SMEMBERS", "str"]),
            cmd(&["SPOP", "str"]),
            cmd(&["SPOP", "str", "2"]),
            cmd(&["SRANDMEMBER", "str"]),
            cmd(&["SRANDMEMBER", "str", "2"]),
            cmd(&["SSCAN", "str", "0"]),
            cmd(&["SINTER", "str"]),
            cmd(&["SINTER", "nokey", "str"]),
            cmd(&["SUNION", "str", "nokey"]),
            cmd(&["SDIFF", "nokey", "str"]),
            cmd(&["SINTERCARD", "2", "nokey", "str"]),
            cmd(&["SINTERSTORE", "dst", "nokey", "str"]),
            cmd(&["SUNIONSTORE", "dst", "str"]),
            cmd(&["SDIFFSTORE", "dst", "str"]),
            cmd(&["EXISTS", "dst"]),
            cmd(&["SADD", "s", "a"]),
            cmd(&["SADD", "s"]),
            cmd(&["SREM", "s"]),
            cmd(&["SMISMEMBER", "s"]),
            cmd(&["SISMEMBER", "s"]),
            cmd(&["SPOP"]),
            cmd(&["SPOP", "s", "1", "2"]),
            cmd(&["SPOP", "s", "-1"]),
            cmd(&["SPOP", "s", "x"]),
            cmd(&["SPOP", "nokey", "-1"]),
            cmd(&["SRANDMEMBER", "s", "1", "2"]),
            cmd(&["SRANDMEMBER", "s", "x"]),
            cmd(&["SRANDMEMBER", "s", "-9223372036854775808"]),
            cmd(&["SRANDMEMBER", "nokey", "x"]),
            cmd(&["SMOVE", "s", "d"]),
            cmd(&["SINTERCARD"]),
            cmd(&["SINTERCARD", "1"]),
            cmd(&["SINTERCARD", "0", "s"]),
            cmd(&["SINTERCARD", "a", "s"]),
            cmd(&["SINTERCARD", "-1", "s"]),
            cmd(&["SINTERCARD", "2", "s"]),
            cmd(&["SINTERCARD", "3", "s", "t"]),
            cmd(&["SINTERCARD", "1", "s", "t"]),
            cmd(&["SINTERCARD", "1", "s", "LIMIT"]),
            cmd(&["SINTERCARD", "1", "s", "LIMIT", "-1"]),
            cmd(&["SINTERCARD", "1", "s", "LIMIT", "a"]),
            cmd(&["SINTERCARD", "1", "s", "LIMIT", "1", "LIMIT", "2"]),
            cmd(&["SINTERCARD", "1", "str", "LIMIT", "x"]),
            cmd(&["SSCAN", "s"]),
            cmd(&["SSCAN", "s", "x"]),
            cmd(&["SSCAN", "s", "0", "COUNT", "0"]),
            cmd(&["SSCAN", "s", "0", "COUNT", "1", "MATCH"]),
        ],
    );
}

#[test]
fn smove() {
    run(
        "smove",
        &[
            cmd(&["SADD", "a", "1", "x", "y"]),
            cmd(&["SADD", "b", "2", "3", "4"]),
            cmd(&["SMOVE", "a", "b", "x"]),
            cmd(&["OBJECT", "ENCODING", "b"]),
            unordered(&["SMEMBERS", "a"]),
            unordered(&["SMEMBERS", "b"]),
            cmd(&["SADD", "c", "5", "6"]),
            cmd(&["SMOVE", "a", "c", "1"]),
            cmd(&["OBJECT", "ENCODING", "c"]),
            cmd(&["SMEMBERS", "c"]),
            cmd(&["SMOVE", "a", "c", "nope"]),
            cmd(&["SMOVE", "a", "a", "y"]),
            cmd(&["SMOVE", "a", "a", "nope"]),
            cmd(&["SMOVE", "nokey", "c", "5"]),
            cmd(&["SMOVE", "c", "new", "5"]),
            cmd(&["OBJECT", "ENCODING", "new"]),
            cmd(&["SMOVE", "a", "new2", "y"]),
            cmd(&["OBJECT", "ENCODING", "new2"]),
            cmd(&["EXISTS", "a"]),
            cmd(&["SADD", "d", "5"]),
            cmd(&["SMOVE", "c", "d", "6"]),
            cmd(&["EXISTS", "c"]),
            cmd(&["SMEMBERS", "d"]),
            cmd(&["SADD", "e", "5"]),
            cmd(&["SMOVE", "d", "e", "5"]),
            cmd(&["SMEMBERS", "e"]),
            cmd(&["SMEMBERS", "d"]),
            cmd(&["SET", "str", "v"]),
            cmd(&["SMOVE", "str", "e", "5"]),
            cmd(&["SMOVE", "e", "str", "5"]),
            cmd(&["SMOVE", "nokey", "str", "5"]),
            cmd(&["SMOVE", "e", "str", "nope"]),
            // WATCH: a destination that already held the member is not modified, so a
            // transaction watching it still runs; the source is, so one watching it aborts.
            cmd(&["SADD", "wsrc", "m", "n"]),
            cmd(&["SADD", "wdst", "m"]),
            cmd(&["WATCH", "wdst"]),
            cmd(&["SMOVE", "wsrc", "wdst", "m"]),
            cmd(&["MULTI"]),
            cmd(&["PING"]),
            cmd(&["EXEC"]),
            cmd(&["WATCH", "wsrc"]),
            cmd(&["SADD", "wdst", "n"]),
            cmd(&["SMOVE", "wsrc", "wdst", "n"]),
            cmd(&["MULTI"]),
            cmd(&["PING"]),
            cmd(&["EXEC"]),
        ],
    );
}

#[test]
fn spop_and_srandmember() {
    run(
        "spop and srandmember",
        &[
            cmd(&["SPOP", "nokey"]),
            cmd(&["SPOP", "nokey", "3"]),
            cmd(&["SPOP", "nokey", "0"]),
            cmd(&["SRANDMEMBER", "nokey"]),
            cmd(&["SRANDMEMBER", "nokey", "3"]),
            cmd(&["SRANDMEMBER", "nokey", "-3"]),
            cmd(&["SADD", "one", "m"]),
            cmd(&["SRANDMEMBER", "one"]),
            cmd(&["SRANDMEMBER", "one", "1"]),
            cmd(&["SRANDMEMBER", "one", "-3"]),
            cmd(&["SRANDMEMBER", "one", "5"]),
            cmd(&["SRANDMEMBER", "one", "0"]),
            cmd(&["SPOP", "one", "0"]),
            cmd(&["SPOP", "one"]),
            cmd(&["EXISTS", "one"]),
            cmd(&["SADD", "i", "5", "1", "3"]),
            // Counts covering the whole intset return it in order.
            cmd(&["SRANDMEMBER", "i", "3"]),
            cmd(&["SRANDMEMBER", "i", "100"]),
            cmd(&["SPOP", "i", "3"]),
            cmd(&["EXISTS", "i"]),
            cmd(&["SADD", "i", "5", "1", "3"]),
            cmd(&["SPOP", "i", "10"]),
            cmd(&["SADD", "t", "a", "b", "c"]),
            unordered(&["SRANDMEMBER", "t", "3"]),
            unordered(&["SPOP", "t", "5"]),
            cmd(&["EXISTS", "t"]),
            cmd(&["SADD", "one", "only"]),
            cmd(&["SPOP", "one", "1"]),
            cmd(&["SADD", "cnt", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]),
            cmd(&["SPOP", "cnt", "2"]).compare(Compare::Ignore),
            cmd(&["SCARD", "cnt"]),
            cmd(&["SPOP", "cnt", "7"]).compare(Compare::Ignore),
            cmd(&["SCARD", "cnt"]),
            cmd(&["SRANDMEMBER", "cnt", "-5"]).compare(Compare::Ignore),
            cmd(&["SPOP", "cnt"]).compare(Compare::Ignore),
            cmd(&["SCARD", "cnt"]),
            // Popping most of a hashtable set leaves an intset when only integers remain.
            cmd(&["SADD", "mix", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "1"]),
            cmd(&["SREM", "mix", "1"]),
            cmd(&["SADD", "mix", "1"]),
            cmd(&["SPOP", "mix", "12"]).compare(Compare::Ignore),
            cmd(&["SCARD", "mix"]),
        ],
    );
}

#[test]
fn set_algebra() {
    run(
        "set algebra",
        &[
            cmd(&["SADD", "{s}1", "1", "2", "3", "4", "5"]),
            cmd(&["SADD", "{s}2", "3", "4", "5", "6"]),
            cmd(&["SADD", "{s}3", "4", "5", "a"]),
            cmd(&["SADD", "{s}4", "a", "b", "c"]),
            cmd(&["SINTER", "{s}1", "{s}2"]),
            unordered(&["SINTER", "{s}1", "{s}2", "{s}3"]),
            cmd(&["SINTER", "{s}1", "{s}2", "{s}nokey"]),
            cmd(&["SINTER", "{s}nokey"]),
            cmd(&["SINTER", "{s}1"]),
            cmd(&["SINTER", "{s}1", "{s}1"]),
            unordered(&["SINTER", "{s}3", "{s}4"]),
            cmd(&["SINTERCARD", "2", "{s}1", "{s}2"]),
            cmd(&["SINTERCARD", "2", "{s}1", "{s}2", "LIMIT", "2"]),
            cmd(&["SINTERCARD", "2", "{s}1", "{s}2", "LIMIT", "0"]),
            cmd(&["SINTERCARD", "2", "{s}1", "{s}2", "limit", "100"]),
            cmd(&["SINTERCARD", "1", "{s}nokey"]),
            cmd(&["SINTERCARD", "3", "{s}1", "{s}2", "{s}3"]),
            cmd(&["SUNION", "{s}1", "{s}2"]),
            cmd(&["SUNION", "{s}1", "{s}nokey"]),
            cmd(&["SUNION", "{s}nokey"]),
            unordered(&["SUNION", "{s}1", "{s}3", "{s}4"]),
            cmd(&["SDIFF", "{s}1", "{s}2"]),
            cmd(&["SDIFF", "{s}1", "{s}2", "{s}3"]),
            cmd(&["SDIFF", "{s}1", "{s}nokey"]),
            cmd(&["SDIFF", "{s}nokey", "{s}1"]),
            cmd(&["SDIFF", "{s}1", "{s}1"]),
            cmd(&["SDIFF", "{s}1"]),
            cmd(&["SDIFF", "{s}3", "{s}1"]),
            unordered(&["SDIFF", "{s}4", "{s}3"]),
            cmd(&["SINTERSTORE", "{s}d", "{s}1", "{s}2"]),
            cmd(&["OBJECT", "ENCODING", "{s}d"]),
            cmd(&["SMEMBERS", "{s}d"]),
            // Integers out of hashtable sets are stored as an intset.
            cmd(&["SINTERSTORE", "{s}d", "{s}3", "{s}1"]),
            cmd(&["OBJECT", "ENCODING", "{s}d"]),
            cmd(&["SMEMBERS", "{s}d"]),
            cmd(&["SUNIONSTORE", "{s}d", "{s}1", "{s}2"]),
            cmd(&["OBJECT", "ENCODING", "{s}d"]),
            cmd(&["SMEMBERS", "{s}d"]),
            cmd(&["SUNIONSTORE", "{s}d", "{s}3", "{s}4"]),
            cmd(&["OBJECT", "ENCODING", "{s}d"]),
            cmd(&["SDIFFSTORE", "{s}d", "{s}3", "{s}4"]),
            cmd(&["OBJECT", "ENCODING", "{s}d"]),
            cmd(&["SMEMBERS", "{s}d"]),
            cmd(&["SDIFFSTORE", "{s}d", "{s}1", "{s}1"]),
            cmd(&["EXISTS", "{s}d"]),
            // The destination loses its TTL and its old type.
            cmd(&["SET", "{s}d", "x", "EX", "100"]),
            cmd(&["SUNIONSTORE", "{s}d", "{s}1"]),
            cmd(&["TTL", "{s}d"]),
            cmd(&["TYPE", "{s}d"]),
            cmd(&["SET", "{s}d", "x"]),
            cmd(&["SINTERSTORE", "{s}d", "{s}1", "{s}nokey"]),
            cmd(&["EXISTS", "{s}d"]),
            cmd(&["SET", "{s}d", "x"]),
            cmd(&["SUNIONSTORE", "{s}d", "{s}nokey"]),
            cmd(&["EXISTS", "{s}d"]),
            cmd(&["SDIFFSTORE", "{s}d", "{s}nokey", "{s}1"]),
            // A destination that is also a source.
            cmd(&["SUNIONSTORE", "{s}1", "{s}1", "{s}2"]),
            cmd(&["SMEMBERS", "{s}1"]),
            cmd(&["SINTERSTORE", "{s}1", "{s}1", "{s}3"]),
            cmd(&["SMEMBERS", "{s}1"]),
        ],
    );
}

/// SDIFFSTORE picks one of two algorithms from the set sizes, and the result's encoding
/// shows which (adding everything, then removing, converts where filtering would not).
#[test]
fn sdiff_algorithms_and_encodings() {
    run(
        "sdiff algorithms",
        &[
            cmd(&["CONFIG", "SET", "set-max-intset-entries", "4"]),
            cmd(&["SADD", "{d}big", "1", "2", "3", "4", "5", "6"]),
            cmd(&["SADD", "{d}small", "1", "2", "3"]),
            // Algorithm 1 (filter): 3 integers survive, an intset.
            cmd(&["SDIFFSTORE", "{d}r", "{d}big", "{d}small"]),
            cmd(&["OBJECT", "ENCODING", "{d}r"]),
            cmd(&["SMEMBERS", "{d}r"]),
            cmd(&["SADD", "{d}m", "a", "1"]),
            cmd(&["SADD", "{d}n", "a", "b", "c", "d", "e", "f", "g", "h"]),
            cmd(&["SDIFFSTORE", "{d}r", "{d}m", "{d}n"]),
            cmd(&["OBJECT", "ENCODING", "{d}r"]),
            cmd(&["SMEMBERS", "{d}r"]),
            cmd(&["SADD", "{d}p", "a", "1", "2"]),
            cmd(&["SADD", "{d}q", "a"]),
            cmd(&["SDIFFSTORE", "{d}r", "{d}p", "{d}q", "{d}nokey"]),
            cmd(&["OBJECT", "ENCODING", "{d}r"]),
            cmd(&["SUNIONSTORE", "{d}r", "{d}big"]),
            cmd(&["OBJECT", "ENCODING", "{d}r"]),
            cmd(&["SINTERSTORE", "{d}r", "{d}big", "{d}big"]),
            cmd(&["OBJECT", "ENCODING", "{d}r"]),
            cmd(&["SINTERSTORE", "{d}r", "{d}big", "{d}small"]),
            cmd(&["OBJECT", "ENCODING", "{d}r"]),
            cmd(&["CONFIG", "SET", "set-max-intset-entries", "512"]),
            // Algorithm 2 (copy, then remove): the strings removed leave a hashtable.
            cmd(&["SADD", "{d}x", "1", "2", "3", "4", "5", "6", "a", "b"]),
            cmd(&["SADD", "{d}y", "a"]),
            cmd(&["SADD", "{d}z", "b"]),
            cmd(&["SDIFFSTORE", "{d}r", "{d}x", "{d}y", "{d}z"]),
            cmd(&["OBJECT", "ENCODING", "{d}r"]),
            unordered(&["SMEMBERS", "{d}r"]),
            // ...while algorithm 1 (filter) keeps an intset.
            cmd(&["SDIFFSTORE", "{d}r", "{d}x", "{d}y"]),
            cmd(&["SREM", "{d}r", "b"]),
            cmd(&["OBJECT", "ENCODING", "{d}r"]),
            cmd(&["SDIFFSTORE", "{d}r", "{d}x", "{d}y", "{d}z", "{d}nokey"]),
            cmd(&["OBJECT", "ENCODING", "{d}r"]),
        ],
    );
}

#[test]
fn sscan() {
    run(
        "sscan",
        &[
            cmd(&["SSCAN", "nokey", "0"]),
            cmd(&["SSCAN", "nokey", "0", "COUNT", "0"]),
            cmd(&["SADD", "i", "10", "2", "33", "1"]),
            cmd(&["SSCAN", "i", "0"]),
            cmd(&["SSCAN", "i", "77"]),
            cmd(&["SSCAN", "i", "0", "MATCH", "*3*"]),
            cmd(&["SSCAN", "i", "0", "MATCH", "1*", "COUNT", "1"]),
            cmd(&["SSCAN", "i", "0", "COUNT", "0"]),
            cmd(&["SSCAN", "i", "0", "TYPE", "set"]),
            cmd(&["SSCAN", "i", "-5"]),
            cmd(&["SSCAN", "i", "+0"]),
            cmd(&["SSCAN", "i", "-"]),
            cmd(&["SADD", "t", "foo", "fab", "fiz", "foobar", "1", "2"]),
            unordered(&["SSCAN", "t", "0", "COUNT", "1000"]),
            unordered(&["SSCAN", "t", "0", "MATCH", "foo*", "COUNT", "1000"]),
            unordered(&["SSCAN", "t", "0", "MATCH", "nothing", "COUNT", "1000"]),
        ],
    );
}

/// Replies and side effects that other families observe: keyspace hits and misses
/// (INFO), dirty counting, TYPE and OBJECT ENCODING, DEL of collections.
#[test]
fn keyspace_interplay() {
    run(
        "keyspace interplay",
        &[
            cmd(&["CONFIG", "RESETSTAT"]),
            cmd(&["HSET", "h", "a", "1"]),
            cmd(&["HGET", "h", "a"]),
            cmd(&["HGET", "nokey", "a"]),
            cmd(&["HMGET", "nokey", "a"]),
            cmd(&["SADD", "s", "1"]),
            cmd(&["SISMEMBER", "s", "1"]),
            cmd(&["SINTER", "s", "nokey", "s"]),
            cmd(&["SUNIONSTORE", "d", "s", "nokey"]),
            cmd(&["SMOVE", "nokey", "s", "1"]),
            cmd(&["SPOP", "s", "5"]),
            cmd(&["SET", "str", "x"]),
            cmd(&["HGET", "str", "a"]),
            cmd(&["TYPE", "h"]),
            cmd(&["TYPE", "d"]),
            // A key created by a write is looked up once: its LFU counter starts at 5.
            cmd(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]),
            cmd(&["SADD", "f1", "a"]),
            cmd(&["HSET", "f2", "a", "1"]),
            cmd(&["HSETNX", "f3", "a", "1"]),
            cmd(&["HINCRBY", "f4", "a", "1"]),
            cmd(&["HINCRBYFLOAT", "f5", "a", "1"]),
            cmd(&["SMOVE", "f1", "f6", "a"]),
            cmd(&["SADD", "f7", "1", "2"]),
            cmd(&["SINTERSTORE", "f8", "f7"]),
            cmd(&["OBJECT", "FREQ", "f2"]),
            cmd(&["OBJECT", "FREQ", "f3"]),
            cmd(&["OBJECT", "FREQ", "f4"]),
            cmd(&["OBJECT", "FREQ", "f5"]),
            cmd(&["OBJECT", "FREQ", "f6"]),
            cmd(&["OBJECT", "FREQ", "f8"]),
            cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]),
            cmd(&["DEL", "h", "d"]),
            cmd(&["EXISTS", "h", "d"]),
        ],
    );
}
