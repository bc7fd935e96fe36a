//! Differential tests for the sorted set family: each script runs against quince and a real
//! redis-server in RESP2 and RESP3, replies compared byte for byte (or as noted per step),
//! in both encodings (listpack, and skiplist through small `zset-max-listpack-*` limits).
//! Skipped without redis-server unless QUINCE_REQUIRE_REDIS=1.

use quince_test_util::{Compare, Differential, Step};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn cmd(args: &[&str]) -> Step {
    Step::cmd(args)
}

fn run(name: &str, steps: &[Step]) {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    diff.run(name, steps);
}

/// The steps of `body` once per encoding: default limits (listpack), then limits of 0 so
/// every set is a skiplist; the limits are restored at the end.
fn both_encodings(body: impl Fn() -> Vec<Step>) -> Vec<Step> {
    let mut steps = vec![cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "128"])];
    steps.extend(body());
    steps.push(cmd(&["FLUSHALL"]));
    steps.push(cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "0"]));
    steps.extend(body());
    steps.push(cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "128"]));
    steps
}

#[test]
fn zadd_options_and_errors() {
    run(
        "zadd",
        &both_encodings(|| {
            vec![
                cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c"]),
                cmd(&["OBJECT", "ENCODING", "z"]),
                cmd(&["ZADD", "z", "1", "a"]),
                cmd(&["ZADD", "z", "CH", "5", "a", "9", "new"]),
                cmd(&["ZADD", "z", "XX", "10", "a", "10", "nope"]),
                cmd(&["ZADD", "z", "NX", "11", "a", "11", "fresh"]),
                cmd(&["ZADD", "z", "GT", "CH", "1", "a", "100", "b"]),
                cmd(&["ZADD", "z", "LT", "CH", "1000", "b", "0", "c"]),
                cmd(&["ZADD", "z", "XX", "GT", "200", "b", "1", "zz"]),
                cmd(&["ZADD", "z", "INCR", "5", "a"]),
                cmd(&["ZADD", "z", "INCR", "XX", "5", "missing"]),
                cmd(&["ZADD", "z", "INCR", "GT", "-1", "a"]),
                cmd(&["ZADD", "z", "INCR", "LT", "-1", "a"]),
                cmd(&["ZADD", "z", "INCR", "NX", "1", "a"]),
                cmd(&["ZADD", "z", "NX", "XX", "1", "a"]),
                cmd(&["ZADD", "z", "NX", "GT", "1", "a"]),
                cmd(&["ZADD", "z", "LT", "GT", "1", "a"]),
                cmd(&["ZADD", "z", "NX", "LT", "1", "a"]),
                cmd(&["ZADD", "z", "INCR", "1", "a", "2", "b"]),
                cmd(&["ZADD", "z", "1"]),
                cmd(&["ZADD", "z", "NX"]),
                cmd(&["ZADD", "z", "1", "a", "2"]),
                cmd(&["ZADD", "z", "x", "a"]),
                cmd(&["ZADD", "z", "1", "a", "nan", "b"]),
                cmd(&["ZADD", "z", "", "a"]),
                cmd(&["ZADD", "z", " 1", "a"]),
                cmd(&["ZADD", "z", "1e400", "a"]),
                cmd(&["ZADD", "z", "0x10", "hex"]),
                cmd(&["ZADD", "z", "inf", "pinf", "-inf", "ninf", "-0", "negzero", "1.5e-300", "tiny"]),
                cmd(&["ZADD", "z", "INCR", "-inf", "pinf"]),
                cmd(&["ZINCRBY", "z", "+inf", "ninf"]),
                cmd(&["ZADD", "z", "0.1", "tenth", "3.0000000000000004", "ulp", "1e17", "big"]),
                cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]),
                cmd(&["ZSCORE", "z", "negzero"]),
                cmd(&["ZINCRBY", "z", "2.5", "a"]),
                cmd(&["ZINCRBY", "z", "1", "brand"]),
                cmd(&["ZINCRBY", "newkey", "-3", "m"]),
                cmd(&["ZINCRBY", "z", "x", "a"]),
                cmd(&["ZINCRBY", "z", "nx", "a"]),
                cmd(&["ZADD", "xxkey", "XX", "1", "a"]),
                cmd(&["ZADD", "xxkey", "XX", "INCR", "1", "a"]),
                cmd(&["EXISTS", "xxkey"]),
                cmd(&["ZCARD", "z"]),
                cmd(&["ZCARD", "missing"]),
                cmd(&["SET", "str", "v"]),
                cmd(&["ZADD", "str", "1", "a"]),
                cmd(&["ZINCRBY", "str", "1", "a"]),
                cmd(&["ZCARD", "str"]),
                cmd(&["ZADD", "str", "x", "a"]),
            ]
        }),
    );
}

#[test]
fn encoding_conversions() {
    run(
        "encodings",
        &[
            cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "3"]),
            cmd(&["CONFIG", "SET", "zset-max-listpack-value", "5"]),
            cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c"]),
            cmd(&["OBJECT", "ENCODING", "z"]),
            cmd(&["ZADD", "z", "4", "d"]),
            cmd(&["OBJECT", "ENCODING", "z"]),
            cmd(&["ZREM", "z", "a", "b", "c"]),
            cmd(&["OBJECT", "ENCODING", "z"]),
            cmd(&["ZADD", "long", "1", "abcdef"]),
            cmd(&["OBJECT", "ENCODING", "long"]),
            cmd(&["ZADD", "short", "1", "a"]),
            cmd(&["ZADD", "short", "1", "abcdef"]),
            cmd(&["OBJECT", "ENCODING", "short"]),
            cmd(&["ZADD", "src", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"]),
            cmd(&["ZRANGESTORE", "dst", "src", "0", "2"]),
            cmd(&["OBJECT", "ENCODING", "dst"]),
            cmd(&["ZRANGESTORE", "dst", "src", "0", "3"]),
            cmd(&["OBJECT", "ENCODING", "dst"]),
            cmd(&["ZRANGESTORE", "dst", "src", "1", "3", "BYSCORE"]),
            cmd(&["OBJECT", "ENCODING", "dst"]),
            cmd(&["ZRANGESTORE", "dst", "src", "1", "4", "BYSCORE"]),
            cmd(&["OBJECT", "ENCODING", "dst"]),
            cmd(&["ZUNIONSTORE", "u", "1", "z"]),
            cmd(&["OBJECT", "ENCODING", "u"]),
            cmd(&["ZUNIONSTORE", "u", "1", "src"]),
            cmd(&["OBJECT", "ENCODING", "u"]),
            cmd(&["ZINTERSTORE", "i", "2", "src", "src"]),
            cmd(&["OBJECT", "ENCODING", "i"]),
            cmd(&["ZDIFFSTORE", "d", "2", "src", "z"]),
            cmd(&["OBJECT", "ENCODING", "d"]),
            cmd(&["ZUNIONSTORE", "u", "2", "long", "short"]),
            cmd(&["OBJECT", "ENCODING", "u"]),
            cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "0"]),
            cmd(&["ZADD", "zero", "1", "a"]),
            cmd(&["OBJECT", "ENCODING", "zero"]),
            cmd(&["ZRANGESTORE", "dst", "src", "0", "0"]),
            cmd(&["OBJECT", "ENCODING", "dst"]),
            cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "128"]),
            cmd(&["CONFIG", "SET", "zset-max-listpack-value", "64"]),
        ],
    );
}

#[test]
fn reads_and_ranks() {
    run(
        "reads",
        &both_encodings(|| {
            vec![
                cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "3", "d", "-1.5", "e"]),
                cmd(&["ZSCORE", "z", "e"]),
                cmd(&["ZSCORE", "z", "nope"]),
                cmd(&["ZSCORE", "missing", "a"]),
                cmd(&["ZMSCORE", "z", "a", "nope", "c"]),
                cmd(&["ZMSCORE", "missing", "a", "b"]),
                cmd(&["ZMSCORE", "z"]),
                cmd(&["ZRANK", "z", "a"]),
                cmd(&["ZRANK", "z", "d"]),
                cmd(&["ZRANK", "z", "nope"]),
                cmd(&["ZRANK", "missing", "a"]),
                cmd(&["ZREVRANK", "z", "a"]),
                cmd(&["ZREVRANK", "z", "e"]),
                cmd(&["ZCOUNT", "z", "-inf", "+inf"]),
                cmd(&["ZCOUNT", "z", "(1", "3"]),
                cmd(&["ZCOUNT", "z", "(1", "(3"]),
                cmd(&["ZCOUNT", "z", "3", "1"]),
                cmd(&["ZCOUNT", "z", "(3", "3"]),
                cmd(&["ZCOUNT", "z", "x", "3"]),
                cmd(&["ZCOUNT", "z", "nan", "3"]),
                cmd(&["ZCOUNT", "z", "", "("]),
                cmd(&["ZCOUNT", "z", " 1", "3"]),
                cmd(&["ZCOUNT", "missing", "0", "1"]),
                cmd(&["ZCOUNT", "missing", "x", "1"]),
                cmd(&["ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e", "0", "ab"]),
                cmd(&["ZLEXCOUNT", "lex", "-", "+"]),
                cmd(&["ZLEXCOUNT", "lex", "[a", "(c"]),
                cmd(&["ZLEXCOUNT", "lex", "(a", "[c"]),
                cmd(&["ZLEXCOUNT", "lex", "+", "-"]),
                cmd(&["ZLEXCOUNT", "lex", "[z", "[a"]),
                cmd(&["ZLEXCOUNT", "lex", "a", "[c"]),
                cmd(&["ZLEXCOUNT", "lex", "[a", "+x"]),
                cmd(&["ZLEXCOUNT", "missing", "-", "+"]),
                cmd(&["SET", "str", "v"]),
                cmd(&["ZSCORE", "str", "a"]),
                cmd(&["ZMSCORE", "str", "a"]),
                cmd(&["ZRANK", "str", "a"]),
                cmd(&["ZCOUNT", "str", "0", "1"]),
                cmd(&["ZLEXCOUNT", "str", "-", "+"]),
            ]
        }),
    );
}

#[test]
fn ranges() {
    run(
        "ranges",
        &both_encodings(|| {
            vec![
                cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "5", "f"]),
                cmd(&["ZRANGE", "z", "0", "-1"]),
                cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]),
                cmd(&["ZRANGE", "z", "1", "3", "withscores"]),
                cmd(&["ZRANGE", "z", "-2", "-1"]),
                cmd(&["ZRANGE", "z", "-100", "100"]),
                cmd(&["ZRANGE", "z", "3", "1"]),
                cmd(&["ZRANGE", "z", "10", "20"]),
                cmd(&["ZRANGE", "z", "0", "-1", "REV"]),
                cmd(&["ZRANGE", "z", "0", "1", "REV", "WITHSCORES"]),
                cmd(&["ZRANGE", "z", "(1", "4", "BYSCORE"]),
                cmd(&["ZRANGE", "z", "4", "(1", "BYSCORE", "REV", "WITHSCORES"]),
                cmd(&["ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "2"]),
                cmd(&["ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "2"]),
                cmd(&["ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "0", "-1"]),
                cmd(&["ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "-1", "2"]),
                cmd(&["ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "10", "2"]),
                cmd(&["ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "0"]),
                cmd(&["ZRANGE", "z", "0", "-1", "LIMIT", "0", "-1"]),
                cmd(&["ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"]),
                cmd(&["ZRANGE", "z", "0", "-1", "BYLEX", "WITHSCORES"]),
                cmd(&["ZRANGE", "z", "0", "-1", "BYSCORE", "BYLEX"]),
                cmd(&["ZRANGE", "z", "0", "-1", "LIMIT", "1"]),
                cmd(&["ZRANGE", "z", "0", "-1", "REV", "REV"]),
                cmd(&["ZRANGE", "z", "a", "-1"]),
                cmd(&["ZRANGE", "z", "x", "1", "BYSCORE"]),
                cmd(&["ZRANGE", "z", "-inf", "1", "BYSCORE", "LIMIT", "x", "1"]),
                cmd(&["ZRANGE", "missing", "0", "-1"]),
                cmd(&["ZRANGE", "missing", "x", "-1"]),
                cmd(&["ZREVRANGE", "z", "0", "2", "WITHSCORES"]),
                cmd(&["ZREVRANGE", "z", "0", "2", "BYSCORE"]),
                cmd(&["ZRANGEBYSCORE", "z", "2", "5"]),
                cmd(&["ZRANGEBYSCORE", "z", "(2", "(5", "WITHSCORES"]),
                cmd(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "2", "3", "WITHSCORES"]),
                cmd(&["ZRANGEBYSCORE", "z", "0", "-1", "REV"]),
                cmd(&["ZRANGEBYSCORE", "z", "5", "1"]),
                cmd(&["ZREVRANGEBYSCORE", "z", "5", "1"]),
                cmd(&["ZREVRANGEBYSCORE", "z", "(5", "1", "WITHSCORES", "LIMIT", "1", "10"]),
                cmd(&["ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e", "0", "ab"]),
                cmd(&["ZRANGEBYLEX", "lex", "-", "+"]),
                cmd(&["ZRANGEBYLEX", "lex", "[a", "(c"]),
                cmd(&["ZRANGEBYLEX", "lex", "(a", "+", "LIMIT", "1", "2"]),
                cmd(&["ZRANGEBYLEX", "lex", "-", "+", "LIMIT", "-1", "2"]),
                cmd(&["ZRANGEBYLEX", "lex", "-", "+", "WITHSCORES"]),
                cmd(&["ZRANGEBYLEX", "lex", "a", "+"]),
                cmd(&["ZREVRANGEBYLEX", "lex", "+", "-"]),
                cmd(&["ZREVRANGEBYLEX", "lex", "[d", "(a", "LIMIT", "1", "2"]),
                cmd(&["ZREVRANGEBYLEX", "lex", "-", "+"]),
                cmd(&["ZRANGE", "lex", "[b", "[d", "BYLEX"]),
                cmd(&["ZRANGE", "lex", "[d", "[b", "BYLEX", "REV", "LIMIT", "0", "2"]),
                cmd(&["SET", "str", "v"]),
                cmd(&["ZRANGE", "str", "0", "-1"]),
                cmd(&["ZRANGEBYSCORE", "str", "0", "1"]),
                cmd(&["ZRANGEBYLEX", "str", "-", "+"]),
            ]
        }),
    );
}

#[test]
fn rangestore() {
    run(
        "zrangestore",
        &both_encodings(|| {
            vec![
                cmd(&["ZADD", "{t}z", "1", "a", "2", "b", "3", "c", "4", "d"]),
                cmd(&["ZRANGESTORE", "{t}d", "{t}z", "0", "-1"]),
                cmd(&["ZRANGE", "{t}d", "0", "-1", "WITHSCORES"]),
                cmd(&["ZRANGESTORE", "{t}d", "{t}z", "1", "2", "REV"]),
                cmd(&["ZRANGE", "{t}d", "0", "-1", "WITHSCORES"]),
                cmd(&["ZRANGESTORE", "{t}d", "{t}z", "(1", "+inf", "BYSCORE", "LIMIT", "1", "5"]),
                cmd(&["ZRANGE", "{t}d", "0", "-1", "WITHSCORES"]),
                cmd(&["ZRANGESTORE", "{t}d", "{t}z", "[c", "-", "BYLEX", "REV"]),
                cmd(&["ZRANGE", "{t}d", "0", "-1", "WITHSCORES"]),
                cmd(&["ZRANGESTORE", "{t}d", "{t}z", "5", "6"]),
                cmd(&["EXISTS", "{t}d"]),
                cmd(&["SET", "{t}d", "str"]),
                cmd(&["ZRANGESTORE", "{t}d", "{t}missing", "0", "-1"]),
                cmd(&["EXISTS", "{t}d"]),
                cmd(&["ZRANGESTORE", "{t}d", "{t}z", "0", "-1", "WITHSCORES"]),
                cmd(&["ZRANGESTORE", "{t}d", "{t}z", "0", "-1", "LIMIT", "1", "2"]),
                cmd(&["SET", "{t}s", "str"]),
                cmd(&["ZRANGESTORE", "{t}d", "{t}s", "0", "-1"]),
                cmd(&["ZRANGESTORE", "{t}z", "{t}z", "1", "2"]),
                cmd(&["ZRANGE", "{t}z", "0", "-1", "WITHSCORES"]),
            ]
        }),
    );
}

#[test]
fn removals() {
    run(
        "removals",
        &both_encodings(|| {
            vec![
                cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"]),
                cmd(&["ZREM", "z", "a", "nope", "b"]),
                cmd(&["ZREM", "missing", "a"]),
                cmd(&["ZREMRANGEBYRANK", "z", "0", "0"]),
                cmd(&["ZREMRANGEBYRANK", "z", "-1", "-1"]),
                cmd(&["ZREMRANGEBYRANK", "z", "5", "10"]),
                cmd(&["ZREMRANGEBYRANK", "z", "x", "1"]),
                cmd(&["ZRANGE", "z", "0", "-1"]),
                cmd(&["ZREMRANGEBYSCORE", "z", "(4", "5"]),
                cmd(&["ZREMRANGEBYSCORE", "z", "x", "5"]),
                cmd(&["ZREMRANGEBYSCORE", "missing", "x", "5"]),
                cmd(&["ZRANGE", "z", "0", "-1"]),
                cmd(&["ZREMRANGEBYSCORE", "z", "-inf", "+inf"]),
                cmd(&["EXISTS", "z"]),
                cmd(&["ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d"]),
                cmd(&["ZREMRANGEBYLEX", "lex", "(a", "[c"]),
                cmd(&["ZREMRANGEBYLEX", "lex", "a", "[c"]),
                cmd(&["ZRANGE", "lex", "0", "-1"]),
                cmd(&["ZREMRANGEBYLEX", "lex", "-", "+"]),
                cmd(&["EXISTS", "lex"]),
                cmd(&["ZADD", "r", "1", "a", "2", "b"]),
                cmd(&["ZREM", "r", "a", "b", "c"]),
                cmd(&["EXISTS", "r"]),
                cmd(&["SET", "str", "v"]),
                cmd(&["ZREM", "str", "a"]),
                cmd(&["ZREMRANGEBYRANK", "str", "0", "1"]),
            ]
        }),
    );
}

#[test]
fn pops() {
    run(
        "pops",
        &both_encodings(|| {
            vec![
                cmd(&["ZADD", "{t}z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"]),
                cmd(&["ZPOPMIN", "{t}z"]),
                cmd(&["ZPOPMAX", "{t}z"]),
                cmd(&["ZPOPMIN", "{t}z", "2"]),
                cmd(&["ZPOPMAX", "{t}z", "0"]),
                cmd(&["ZPOPMAX", "{t}z", "-1"]),
                cmd(&["ZPOPMAX", "{t}z", "x"]),
                cmd(&["ZPOPMAX", "{t}z", "1", "2"]),
                cmd(&["ZPOPMAX", "{t}z", "10"]),
                cmd(&["EXISTS", "{t}z"]),
                cmd(&["ZPOPMIN", "{t}z"]),
                cmd(&["ZPOPMIN", "{t}z", "3"]),
                cmd(&["ZADD", "{t}z", "1", "a", "2", "b", "3", "c"]),
                cmd(&["ZADD", "{t}y", "10", "x"]),
                cmd(&["ZMPOP", "2", "{t}none", "{t}z", "MIN"]),
                cmd(&["ZMPOP", "2", "{t}none", "{t}z", "max", "COUNT", "10"]),
                cmd(&["ZMPOP", "2", "{t}none", "{t}z", "MIN"]),
                cmd(&["ZMPOP", "1", "{t}y", "MIN", "COUNT", "1"]),
                cmd(&["ZMPOP", "0", "{t}y", "MIN"]),
                cmd(&["ZMPOP", "x", "{t}y", "MIN"]),
                cmd(&["ZMPOP", "1", "{t}y", "MIDDLE"]),
                cmd(&["ZMPOP", "5", "{t}y", "MIN"]),
                cmd(&["ZMPOP", "1", "{t}y", "MIN", "COUNT", "0"]),
                cmd(&["ZMPOP", "1", "{t}y", "MIN", "COUNT", "1", "COUNT", "2"]),
                cmd(&["ZMPOP", "1", "{t}y", "MIN", "COUNT"]),
                cmd(&["SET", "{t}s", "v"]),
                cmd(&["ZPOPMIN", "{t}s"]),
                cmd(&["ZPOPMIN", "{t}s", "0"]),
                cmd(&["ZMPOP", "2", "{t}none", "{t}s", "MIN"]),
                cmd(&["ZADD", "{t}b", "1", "a", "2", "b"]),
                cmd(&["BZPOPMIN", "{t}none", "{t}b", "0"]),
                cmd(&["BZPOPMAX", "{t}b", "0.01"]),
                cmd(&["BZPOPMAX", "{t}b", "0.01"]),
                cmd(&["BZPOPMIN", "{t}b", "-1"]),
                cmd(&["BZPOPMIN", "{t}b", "x"]),
                cmd(&["BZPOPMIN", "{t}s", "0"]),
                cmd(&["ZADD", "{t}b", "1", "a", "2", "b", "3", "c"]),
                cmd(&["BZMPOP", "0", "2", "{t}none", "{t}b", "MAX", "COUNT", "2"]),
                cmd(&["BZMPOP", "0.01", "1", "{t}none", "MIN"]),
                cmd(&["BZMPOP", "x", "1", "{t}b", "MIN"]),
                cmd(&["BZMPOP", "0", "0", "{t}b", "MIN"]),
                cmd(&["BZMPOP", "-1", "1", "{t}b", "MIN"]),
                cmd(&["BZMPOP", "0", "1", "{t}b", "MIN", "COUNT", "-1"]),
                cmd(&["BZMPOP", "0", "1", "{t}s", "MIN"]),
            ]
        }),
    );
}

#[test]
fn set_operations() {
    run(
        "set operations",
        &both_encodings(|| {
            vec![
                cmd(&["ZADD", "{t}a", "1", "a", "2", "b", "3", "c"]),
                cmd(&["ZADD", "{t}b", "1", "b", "2", "c", "3", "d"]),
                cmd(&["ZADD", "{t}c", "10", "c", "inf", "d"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}b"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}b", "WITHSCORES"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}b", "WEIGHTS", "2", "3", "WITHSCORES"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}b", "AGGREGATE", "MIN", "WITHSCORES"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}b", "AGGREGATE", "max", "withscores"]),
                cmd(&["ZUNION", "3", "{t}a", "{t}b", "{t}c", "WEIGHTS", "1", "1", "-1", "WITHSCORES"]),
                cmd(&["ZUNION", "2", "{t}c", "{t}c", "WEIGHTS", "1", "-1", "WITHSCORES"]),
                cmd(&["ZUNION", "2", "{t}c", "{t}c", "WEIGHTS", "0", "0", "WITHSCORES"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}none", "WITHSCORES"]),
                cmd(&["ZINTER", "2", "{t}a", "{t}b", "WITHSCORES"]),
                cmd(&["ZINTER", "3", "{t}a", "{t}b", "{t}c", "WITHSCORES"]),
                cmd(&["ZINTER", "2", "{t}a", "{t}b", "WEIGHTS", "2", "0.5", "AGGREGATE", "MAX", "WITHSCORES"]),
                cmd(&["ZINTER", "2", "{t}a", "{t}none"]),
                cmd(&["ZINTERCARD", "2", "{t}a", "{t}b"]),
                cmd(&["ZINTERCARD", "2", "{t}a", "{t}b", "LIMIT", "1"]),
                cmd(&["ZINTERCARD", "2", "{t}a", "{t}b", "LIMIT", "0"]),
                cmd(&["ZINTERCARD", "2", "{t}a", "{t}b", "LIMIT", "-1"]),
                cmd(&["ZINTERCARD", "2", "{t}a", "{t}b", "LIMIT", "x"]),
                cmd(&["ZINTERCARD", "2", "{t}a", "{t}b", "WITHSCORES"]),
                cmd(&["ZINTERCARD", "0", "{t}a"]),
                cmd(&["ZDIFF", "2", "{t}a", "{t}b"]),
                cmd(&["ZDIFF", "2", "{t}a", "{t}b", "WITHSCORES"]),
                cmd(&["ZDIFF", "2", "{t}a", "{t}a"]),
                cmd(&["ZDIFF", "1", "{t}none"]),
                cmd(&["ZDIFF", "2", "{t}a", "{t}b", "WEIGHTS", "1", "2"]),
                cmd(&["ZDIFF", "2", "{t}a", "{t}b", "AGGREGATE", "SUM"]),
                cmd(&["ZUNIONSTORE", "{t}d", "2", "{t}a", "{t}b"]),
                cmd(&["ZRANGE", "{t}d", "0", "-1", "WITHSCORES"]),
                cmd(&["ZINTERSTORE", "{t}d", "2", "{t}a", "{t}b", "WEIGHTS", "1", "10"]),
                cmd(&["ZRANGE", "{t}d", "0", "-1", "WITHSCORES"]),
                cmd(&["ZDIFFSTORE", "{t}d", "2", "{t}b", "{t}a"]),
                cmd(&["ZRANGE", "{t}d", "0", "-1", "WITHSCORES"]),
                cmd(&["ZINTERSTORE", "{t}d", "2", "{t}a", "{t}none"]),
                cmd(&["EXISTS", "{t}d"]),
                cmd(&["ZUNIONSTORE", "{t}d", "2", "{t}a", "{t}b", "WITHSCORES"]),
                cmd(&["ZUNIONSTORE", "{t}d", "0", "{t}a"]),
                cmd(&["ZUNION", "0", "{t}a"]),
                cmd(&["ZUNION", "-1", "{t}a"]),
                cmd(&["ZUNION", "x", "{t}a"]),
                cmd(&["ZUNION", "3", "{t}a", "{t}b"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}b", "WEIGHTS", "1"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}b", "WEIGHTS", "1", "x"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}b", "WEIGHTS", "1", "nan"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}b", "AGGREGATE", "AVG"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}b", "AGGREGATE"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}b", "BOGUS"]),
                cmd(&["SET", "{t}s", "v"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}s"]),
                cmd(&["ZUNION", "2", "{t}a", "{t}s", "BOGUS"]),
                cmd(&["ZINTERSTORE", "{t}s2", "1", "{t}s"]),
                cmd(&["ZADD", "{t}inf", "inf", "x", "-inf", "y"]),
                cmd(&["ZUNION", "2", "{t}inf", "{t}inf", "WEIGHTS", "1", "-1", "WITHSCORES"]),
                cmd(&["ZINTER", "2", "{t}inf", "{t}inf", "WEIGHTS", "0", "1", "WITHSCORES"]),
                cmd(&["ZINTER", "2", "{t}inf", "{t}inf", "WEIGHTS", "1", "0", "AGGREGATE", "MIN", "WITHSCORES"]),
            ]
        }),
    );
}

#[test]
fn randmember_and_scan() {
    run(
        "zrandmember zscan",
        &both_encodings(|| {
            vec![
                cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c"]),
                cmd(&["ZRANDMEMBER", "z", "3"]).compare(Compare::Unordered),
                cmd(&["ZRANDMEMBER", "z", "10"]),
                cmd(&["ZRANDMEMBER", "z", "10", "WITHSCORES"]),
                cmd(&["ZRANDMEMBER", "z", "0"]),
                cmd(&["ZRANDMEMBER", "z", "0", "WITHSCORES"]),
                cmd(&["ZRANDMEMBER", "missing"]),
                cmd(&["ZRANDMEMBER", "missing", "5"]),
                cmd(&["ZRANDMEMBER", "missing", "5", "WITHSCORES"]),
                cmd(&["ZRANDMEMBER", "z", "x"]),
                cmd(&["ZRANDMEMBER", "z", "1", "BOGUS"]),
                cmd(&["ZRANDMEMBER", "z", "1", "WITHSCORES", "x"]),
                cmd(&["ZRANDMEMBER", "z", "-9223372036854775808"]),
                cmd(&["ZRANDMEMBER", "z", "-9223372036854775807", "WITHSCORES"]),
                cmd(&["ZRANDMEMBER", "z", "9223372036854775807", "WITHSCORES"]),
                cmd(&["ZRANDMEMBER", "z"]).compare(Compare::ErrorOrNot),
                cmd(&["ZRANDMEMBER", "z", "-5"]).compare(Compare::ErrorOrNot),
                cmd(&["ZRANDMEMBER", "z", "2", "WITHSCORES"]).compare(Compare::ErrorOrNot),
                cmd(&["ZADD", "one", "7", "only"]),
                cmd(&["ZRANDMEMBER", "one", "-3", "WITHSCORES"]),
                cmd(&["ZRANDMEMBER", "one", "1"]),
                cmd(&["ZRANDMEMBER", "one"]),
                cmd(&["SET", "str", "v"]),
                cmd(&["ZRANDMEMBER", "str"]),
                cmd(&["ZRANDMEMBER", "str", "1"]),
                cmd(&["ZSCAN", "missing", "0"]),
                cmd(&["ZSCAN", "str", "0"]),
                cmd(&["ZSCAN", "z", "x"]),
                cmd(&["ZSCAN", "z", "0", "COUNT", "0"]),
                cmd(&["ZSCAN", "z", "0", "COUNT", "x"]),
                cmd(&["ZSCAN", "z", "0", "TYPE", "zset"]),
                cmd(&["ZSCAN", "z", "0", "MATCH"]),
                cmd(&["ZSCAN", "missing", "0", "BOGUS"]),
            ]
        }),
    );
}

#[test]
fn zscan_listpack() {
    run(
        "zscan listpack",
        &[
            cmd(&["ZADD", "z", "1.5", "alpha", "2", "beta", "-0", "gamma", "inf", "delta"]),
            cmd(&["ZSCAN", "z", "0"]),
            cmd(&["ZSCAN", "z", "0", "MATCH", "*a", "COUNT", "1"]),
            cmd(&["ZSCAN", "z", "0", "MATCH", "b*"]),
        ],
    );
}

#[test]
fn double_formatting() {
    run(
        "doubles",
        &[
            cmd(&["ZADD", "z", "0.1", "a", "1e-5", "b", "123456789012345678", "c", "-2.5e300", "d", "1e15", "e"]),
            cmd(&[
                "ZADD",
                "z",
                "3.14159265358979323846",
                "f",
                "0x1.8p1",
                "g",
                "5e-324",
                "h",
                "1.7976931348623157e308",
                "i",
            ]),
            cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]),
            cmd(&["ZSCORE", "z", "h"]),
            cmd(&["ZINCRBY", "z", "0.2", "a"]),
            cmd(&["ZADD", "z", "INCR", "1e308", "i"]),
            cmd(&["ZSCORE", "z", "i"]),
            cmd(&["ZPOPMIN", "z"]),
            cmd(&["ZPOPMAX", "z", "2"]),
            cmd(&["ZMSCORE", "z", "a", "b", "c"]),
        ],
    );
}

/// Blocking pops that find nothing time out with a null array; a wrong type is reported.
#[test]
fn blocking_timeouts() {
    run(
        "blocking",
        &[
            cmd(&["BZPOPMIN", "{t}a", "{t}b", "0.05"]),
            cmd(&["BZPOPMAX", "{t}a", "0.05"]),
            cmd(&["BZMPOP", "0.05", "2", "{t}a", "{t}b", "MIN", "COUNT", "3"]),
            cmd(&["SET", "{t}a", "v"]),
            cmd(&["BZPOPMIN", "{t}a", "{t}b", "0.05"]),
            cmd(&["BZPOPMIN", "{t}b", "{t}a", "0.05"]),
        ],
    );
}

const ZSET_COMMANDS: &[&str] = &[
    "bzmpop",
    "bzpopmax",
    "bzpopmin",
    "zadd",
    "zcard",
    "zcount",
    "zdiff",
    "zdiffstore",
    "zincrby",
    "zinter",
    "zintercard",
    "zinterstore",
    "zlexcount",
    "zmpop",
    "zmscore",
    "zpopmax",
    "zpopmin",
    "zrandmember",
    "zrange",
    "zrangebylex",
    "zrangebyscore",
    "zrangestore",
    "zrank",
    "zrem",
    "zremrangebylex",
    "zremrangebyrank",
    "zremrangebyscore",
    "zrevrange",
    "zrevrangebylex",
    "zrevrangebyscore",
    "zrevrank",
    "zscan",
    "zscore",
    "zunion",
    "zunionstore",
];

/// COMMAND INFO and COMMAND DOCS of every sorted set command, and the keys COMMAND GETKEYS
/// finds in the variadic ones.
#[test]
fn command_info_docs_and_keys() {
    let mut steps: Vec<Step> = Vec::new();
    for name in ZSET_COMMANDS {
        steps.push(cmd(&["COMMAND", "INFO", name]));
        steps.push(cmd(&["COMMAND", "DOCS", name]));
    }
    steps.extend([
        cmd(&["COMMAND", "GETKEYS", "ZUNIONSTORE", "dst", "2", "a", "b", "WEIGHTS", "1", "2"]),
        cmd(&["COMMAND", "GETKEYS", "ZINTER", "3", "a", "b", "c", "WITHSCORES"]),
        cmd(&["COMMAND", "GETKEYS", "ZRANGESTORE", "dst", "src", "0", "-1"]),
        cmd(&["COMMAND", "GETKEYS", "BZMPOP", "0", "2", "a", "b", "MIN"]),
        cmd(&["COMMAND", "GETKEYS", "ZMPOP", "1", "a", "MAX", "COUNT", "2"]),
        cmd(&["COMMAND", "GETKEYS", "BZPOPMIN", "a", "b", "c", "0"]),
    ]);
    run("command info/docs", &steps);
}
