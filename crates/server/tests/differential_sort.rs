//! Differential tests for SORT and SORT_RO: the same scripts against quince and a real
//! redis-server, replies compared byte for byte in RESP2 and RESP3.
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

#[test]
fn numeric_and_alpha_orders() {
    run(
        "sort orders",
        &[
            cmd(&["RPUSH", "l", "3", "1", "2", "10", "-5", "1.5", "0x10", " 7", "1e2", "-0", "0"]),
            cmd(&["SORT", "l"]),
            cmd(&["SORT", "l", "DESC"]),
            cmd(&["SORT", "l", "ASC", "DESC", "ASC"]),
            cmd(&["SORT", "l", "ALPHA"]),
            cmd(&["SORT", "l", "ALPHA", "DESC"]),
            cmd(&["SORT", "l", "LIMIT", "1", "3"]),
            cmd(&["SORT", "l", "LIMIT", "1", "3", "DESC"]),
            cmd(&["SORT", "l", "LIMIT", "-1", "2"]),
            cmd(&["SORT", "l", "LIMIT", "2", "-1"]),
            cmd(&["SORT", "l", "LIMIT", "100", "2"]),
            cmd(&["SORT", "l", "LIMIT", "0", "0"]),
            cmd(&["SORT", "l", "LIMIT", "0", "1", "LIMIT", "2", "2"]),
            cmd(&["SORT", "l", "LIMIT", "2", "9223372036854775807"]),
            cmd(&["SORT", "l", "LIMIT", "-9223372036854775808", "3"]),
            cmd(&["RPUSH", "dup", "3", "3", "1", "1", "2", "b", "a"]),
            cmd(&["SORT", "dup", "ALPHA"]),
            cmd(&["SORT", "dup", "ALPHA", "DESC"]),
            cmd(&["RPUSH", "floats", "1.1", "1.01", "1.001", "-0.5", "1e-5", "-1e-5", "inf", "-inf", "+inf"]),
            cmd(&["SORT", "floats"]),
            cmd(&["SORT", "floats", "DESC"]),
            // Equal scores sort by the element's bytes.
            cmd(&["RPUSH", "ties", "1.0", "1", "01", "1e0", "0.1e1"]),
            cmd(&["SORT", "ties"]),
            cmd(&["SORT", "ties", "DESC"]),
            cmd(&["RPUSH", "empty", ""]),
            cmd(&["SORT", "empty"]),
            cmd(&["RPUSH", "sub", "1e-310", "1"]),
            cmd(&["SORT", "sub"]),
            cmd(&["SORT", "sub", "ALPHA"]),
            cmd(&["ZADD", "z", "1", "a", "5", "b", "2", "c", "10", "d", "3", "e"]),
            cmd(&["SORT", "z", "ALPHA"]),
            cmd(&["SORT", "z", "ALPHA", "DESC", "LIMIT", "1", "2"]),
            cmd(&["SORT_RO", "z", "ALPHA"]),
            cmd(&["OBJECT", "ENCODING", "z"]),
            cmd(&["ZADD", "zn", "0", "3", "0", "1", "0", "2"]),
            cmd(&["SORT", "zn"]),
            cmd(&["SORT", "zn", "DESC"]),
        ],
    );
}

#[test]
fn conversion_errors() {
    run(
        "sort errors",
        &[
            cmd(&["RPUSH", "bad", "1", "x", "2"]),
            cmd(&["SORT", "bad"]),
            cmd(&["SORT", "bad", "ALPHA"]),
            cmd(&["SORT", "bad", "STORE", "dst"]),
            cmd(&["EXISTS", "dst"]),
            cmd(&["SORT", "bad", "BY", "nosort"]),
            cmd(&["RPUSH", "big", "1e400"]),
            cmd(&["SORT", "big"]),
            cmd(&["RPUSH", "tiny", "1e-400"]),
            cmd(&["SORT", "tiny"]),
            cmd(&["RPUSH", "nan", "nan"]),
            cmd(&["SORT", "nan"]),
            cmd(&["RPUSH", "trail", "1 "]),
            cmd(&["SORT", "trail"]),
            cmd(&["RPUSH", "l", "1", "2"]),
            cmd(&["SORT", "l", "LIMIT", "a", "1"]),
            cmd(&["SORT", "l", "LIMIT", "1", "b"]),
            cmd(&["SORT", "l", "LIMIT", "1"]),
            cmd(&["SORT", "l", "LIMIT"]),
            cmd(&["SORT", "l", "BY"]),
            cmd(&["SORT", "l", "GET"]),
            cmd(&["SORT", "l", "STORE"]),
            cmd(&["SORT", "l", "FOO"]),
            cmd(&["SORT", "l", "LIMIT", "x", "1", "FOO"]),
            cmd(&["SORT_RO", "l", "STORE", "x"]),
            cmd(&["SORT_RO", "l", "LIMIT", "0", "1", "STORE"]),
            cmd(&["SORT"]),
            cmd(&["SORT_RO"]),
            cmd(&["SET", "str", "v"]),
            cmd(&["SORT", "str"]),
            cmd(&["SORT", "str", "FOO"]),
            cmd(&["SORT_RO", "str", "BY", "nosort"]),
            cmd(&["SORT", "missing"]),
            cmd(&["SORT", "missing", "DESC", "LIMIT", "0", "10", "ALPHA"]),
            cmd(&["SORT_RO", "missing", "GET", "#"]),
        ],
    );
}

#[test]
fn native_order_with_nosort() {
    run(
        "sort nosort",
        &[
            cmd(&["RPUSH", "l", "c", "a", "b", "10", "2"]),
            cmd(&["SORT", "l", "BY", "nosort"]),
            cmd(&["SORT", "l", "BY", "nosort", "DESC"]),
            cmd(&["SORT", "l", "BY", "nosort", "LIMIT", "1", "2"]),
            cmd(&["SORT", "l", "BY", "nosort", "DESC", "LIMIT", "1", "2"]),
            cmd(&["SORT", "l", "BY", "nosort", "LIMIT", "5", "100"]),
            cmd(&["SORT", "l", "BY", "nosort", "LIMIT", "-10", "100", "DESC"]),
            cmd(&["SORT", "l", "BY", "nosort", "ALPHA"]),
            cmd(&["SORT", "l", "BY", "nosort", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            cmd(&["SORT", "l", "BY", "nosort", "DESC", "LIMIT", "0", "2", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            cmd(&["ZADD", "z", "1", "a", "5", "b", "2", "c", "10", "d", "3", "e"]),
            cmd(&["SORT", "z", "BY", "nosort"]),
            cmd(&["SORT", "z", "BY", "nosort", "DESC"]),
            cmd(&["SORT", "z", "BY", "nosort", "LIMIT", "1", "2"]),
            cmd(&["SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "2"]),
            cmd(&["SORT", "z", "BY", "nosort", "LIMIT", "5", "10"]),
            cmd(&["SORT", "z", "BY", "nosort", "LIMIT", "-10", "100"]),
            cmd(&["SORT", "z", "BY", "const", "GET", "#", "GET", "nope"]),
            cmd(&["ZADD", "zi", "-100", "a", "100", "b", "0", "c", "-inf", "d", "inf", "e"]),
            cmd(&["SORT", "zi", "BY", "nosort"]),
            cmd(&["SORT_RO", "zi", "BY", "nosort", "DESC"]),
            cmd(&["SORT", "zi", "BY", "nosort", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            cmd(&["OBJECT", "ENCODING", "zi"]),
        ],
    );
}

#[test]
fn by_and_get_patterns() {
    run(
        "sort patterns",
        &[
            cmd(&["RPUSH", "l", "3", "1", "2", "10"]),
            cmd(&["MSET", "w_3", "30", "w_1", "10", "w_2", "-20", "w_10", "5.5"]),
            cmd(&["MSET", "o_3", "three", "o_1", "one", "o_2", "two"]),
            cmd(&["SORT", "l", "BY", "w_*"]),
            cmd(&["SORT", "l", "BY", "w_*", "DESC"]),
            cmd(&["SORT", "l", "BY", "w_*", "ALPHA"]),
            cmd(&["SORT", "l", "BY", "w_*", "ALPHA", "DESC"]),
            cmd(&["SORT", "l", "BY", "w_*", "LIMIT", "1", "2"]),
            cmd(&["SORT", "l", "BY", "w_*", "LIMIT", "1", "2", "DESC"]),
            cmd(&["SORT", "l", "BY", "w_*", "GET", "#"]),
            cmd(&["SORT", "l", "BY", "w_*", "GET", "#", "GET", "o_*"]),
            cmd(&["SORT", "l", "BY", "w_*", "GET", "o_*", "GET", "nope", "GET", "#", "GET", "w_*"]),
            cmd(&["SORT", "l", "GET", "o_*", "LIMIT", "0", "2"]),
            cmd(&["SORT", "l", "GET", "o_*->f"]),
            cmd(&["SORT", "l", "GET", "o_*->"]),
            cmd(&["SORT", "l", "BY", "o_*->f"]),
            // A weight key missing, or of the wrong type, weighs 0 / sorts first in ALPHA.
            cmd(&["RPUSH", "w_1x", "list"]),
            cmd(&["RPUSH", "m", "1", "1x", "2", "3", "missing"]),
            cmd(&["SORT", "m", "BY", "w_*"]),
            cmd(&["SORT", "m", "BY", "w_*", "ALPHA"]),
            cmd(&["SORT", "m", "BY", "w_*", "GET", "w_*"]),
            cmd(&["SORT", "m", "BY", "w_*", "ALPHA", "DESC", "LIMIT", "0", "3"]),
            cmd(&["SET", "w_bad", "x"]),
            cmd(&["RPUSH", "b", "bad", "1"]),
            cmd(&["SORT", "b", "BY", "w_*"]),
            cmd(&["SORT", "b", "BY", "w_*", "ALPHA"]),
            // Only the first '*' is replaced; the rest of the pattern is literal.
            cmd(&["SET", "x_1_*", "first"]),
            cmd(&["SORT", "l", "BY", "x_*_*", "GET", "x_*_*"]),
            cmd(&["SORT", "l", "BY", "w_*", "GET", "#", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            cmd(&["SORT", "l", "BY", "w_*", "GET", "#", "GET", "nope", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            cmd(&["SORT", "l", "BY", "w_*", "LIMIT", "0", "2", "GET", "o_*", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            // Many elements with BY: the partial sort (LIMIT) and the full sort agree.
            cmd(&[
                "RPUSH", "many", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
                "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31", "32", "33",
                "34", "35", "36", "37", "38", "39", "40", "41", "42", "43", "44", "45",
            ]),
            cmd(&[
                "MSET", "k5", "1", "k10", "1", "k15", "1", "k20", "2", "k25", "2", "k30", "2", "k35", "0", "k40", "0",
            ]),
            cmd(&["SORT", "many", "BY", "k*"]),
            cmd(&["SORT", "many", "BY", "k*", "LIMIT", "3", "7"]),
            cmd(&["SORT", "many", "BY", "k*", "DESC", "LIMIT", "0", "5"]),
            cmd(&["SORT", "many", "BY", "k*", "ALPHA", "LIMIT", "40", "10"]),
            cmd(&["SORT", "many", "BY", "k*", "ALPHA", "DESC", "LIMIT", "2", "9"]),
            cmd(&["SORT_RO", "many", "BY", "k*", "GET", "k*", "LIMIT", "10", "5"]),
        ],
    );
}

#[test]
fn store_results() {
    run(
        "sort store",
        &[
            cmd(&["RPUSH", "l", "3", "1", "2"]),
            cmd(&["SORT", "l", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            cmd(&["TYPE", "dst"]),
            cmd(&["OBJECT", "ENCODING", "dst"]),
            cmd(&["SORT", "l", "DESC", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            // The last STORE wins; the sorted key itself can be the destination.
            cmd(&["SORT", "l", "STORE", "a", "STORE", "b"]),
            cmd(&["EXISTS", "a", "b"]),
            cmd(&["SORT", "l", "STORE", "l"]),
            cmd(&["LRANGE", "l", "0", "-1"]),
            // An empty result deletes the destination; a missing source too.
            cmd(&["SET", "dst", "v"]),
            cmd(&["SORT", "missing", "STORE", "dst"]),
            cmd(&["EXISTS", "dst"]),
            cmd(&["SORT", "missing", "STORE", "dst"]),
            cmd(&["SORT", "l", "LIMIT", "0", "0", "STORE", "dst"]),
            cmd(&["EXISTS", "dst"]),
            // The destination loses its TTL and any previous type.
            cmd(&["SET", "dst", "v", "EX", "100"]),
            cmd(&["SORT", "l", "STORE", "dst"]),
            cmd(&["TTL", "dst"]),
            cmd(&["TYPE", "dst"]),
            cmd(&["SORT", "l", "ALPHA", "LIMIT", "1", "5", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            cmd(&["ZADD", "z", "2", "b", "1", "a"]),
            cmd(&["SORT", "z", "BY", "nosort", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            cmd(&["SORT", "z", "STORE", "dst"]),
        ],
    );
}

#[test]
fn command_metadata() {
    run(
        "sort command metadata",
        &[
            cmd(&["COMMAND", "INFO", "sort", "sort_ro"]),
            cmd(&["COMMAND", "DOCS", "sort"]),
            cmd(&["COMMAND", "DOCS", "sort_ro"]),
            cmd(&["COMMAND", "GETKEYS", "SORT", "k"]),
            cmd(&["COMMAND", "GETKEYS", "SORT", "k", "STORE", "a", "STORE", "b"]),
            cmd(&["COMMAND", "GETKEYS", "SORT", "k", "GET", "store", "STORE", "x"]),
            cmd(&["COMMAND", "GETKEYS", "SORT", "k", "LIMIT", "store", "x", "BY", "store"]),
            cmd(&["COMMAND", "GETKEYSANDFLAGS", "SORT", "k", "STORE", "dst"]),
            cmd(&["COMMAND", "GETKEYS", "SORT_RO", "k", "BY", "w_*"]),
            cmd(&["COMMAND", "GETKEYSANDFLAGS", "SORT_RO", "k"]),
        ],
    );
}

/// NULs: C string functions stop at them in patterns and numbers, while keys, fields and
/// values keep every byte.
#[test]
fn binary_patterns_and_elements() {
    let b = |args: &[&[u8]]| Step::bytes(args);
    run(
        "sort binary",
        &[
            b(&[b"RPUSH", b"l", b"1\x00abc", b"2", b"", b"1.5\x00"]),
            b(&[b"SORT", b"l"]),
            b(&[b"SORT", b"l", b"ALPHA"]),
            b(&[b"SET", b"w_2", b"5\x00x"]),
            b(&[b"SET", b"w_1\x00abc", b"7"]),
            b(&[b"SORT", b"l", b"BY", b"w_*"]),
            b(&[b"SORT", b"l", b"BY", b"w_*\x00zz"]),
            b(&[b"SORT", b"l", b"BY", b"w_\x00*"]),
            b(&[b"SORT", b"l", b"BY", b"w_*", b"GET", b"w_*", b"GET", b"#\x00x", b"GET", b"\x00*"]),
            b(&[b"RPUSH", b"al", b"b\x00z", b"b\x00a", b"b"]),
            b(&[b"SORT", b"al", b"ALPHA"]),
            b(&[b"SORT", b"al", b"ALPHA", b"DESC"]),
            b(&[b"SORT", b"al", b"ALPHA", b"STORE", b"out"]),
            b(&[b"LRANGE", b"out", b"0", b"-1"]),
        ],
    );
}

/// Needs SADD and HSET (the hash and set families).
#[test]
fn sets_and_hash_fields() {
    run(
        "sort sets and hashes",
        &[
            cmd(&["SADD", "is", "5", "-1", "30", "2"]),
            cmd(&["SORT", "is"]),
            cmd(&["SORT", "is", "DESC", "LIMIT", "1", "2"]),
            cmd(&["SORT", "is", "BY", "nosort"]),
            cmd(&["SORT", "is", "BY", "nosort", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            cmd(&["SADD", "hs", "b", "a", "c", "10", "9"]),
            cmd(&["SORT", "hs", "ALPHA"]),
            cmd(&["SORT", "hs", "ALPHA", "DESC"]),
            cmd(&["SORT", "hs", "BY", "nosort", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            cmd(&["SORT", "hs", "BY", "nosort"]).compare(Compare::Unordered),
            cmd(&["SORT", "hs"]),
            cmd(&["HSET", "h_1", "w", "3", "name", "one"]),
            cmd(&["HSET", "h_2", "w", "1", "name", "two"]),
            cmd(&["HSET", "h_3", "w", "2"]),
            cmd(&["RPUSH", "l", "1", "2", "3", "4"]),
            cmd(&["SORT", "l", "BY", "h_*->w"]),
            cmd(&["SORT", "l", "BY", "h_*->w", "DESC", "GET", "#", "GET", "h_*->name", "GET", "h_*->nope"]),
            cmd(&["SORT", "l", "BY", "h_*->w", "GET", "h_*->name", "STORE", "dst"]),
            cmd(&["LRANGE", "dst", "0", "-1"]),
            cmd(&["SORT", "l", "BY", "h_*->name", "ALPHA"]),
            cmd(&["SORT", "l", "GET", "h_*->"]),
            cmd(&["SORT", "l", "GET", "h_*"]),
            cmd(&["SORT", "l", "BY", "h_*"]),
            Step::bytes(&[b"HSET", b"h_2", b"f\x00g", b"hv"]),
            Step::bytes(&[b"SORT", b"l", b"GET", b"h_*->f\x00g", b"GET", b"h_*->\x00g"]),
            cmd(&["SADD", "ints", "3", "1", "2"]),
            cmd(&["SORT", "ints", "BY", "h_*->w", "GET", "h_*->name"]),
        ],
    );
}

/// Runs `(connection, command)` pairs on two connections per server and compares the
/// transcripts (WATCH in one connection, writes in the other).
fn run_two_clients(name: &str, script: &[(usize, Vec<&str>)]) {
    let Some(diff) = Differential::start(QUINCE) else { return };
    let transcript = |server: &quince_test_util::ServerProcess| {
        let mut conns = [server.client(), server.client()];
        conns[0].call(&["FLUSHALL"]);
        script.iter().map(|(i, args)| conns[*i].call(args)).collect::<Vec<_>>()
    };
    let (q, r) = (transcript(&diff.quince), transcript(&diff.redis));
    for (i, (q, r)) in q.iter().zip(&r).enumerate() {
        assert_eq!(String::from_utf8_lossy(q), String::from_utf8_lossy(r), "{name}: step {i} {:?}", script[i].1);
    }
}

#[test]
fn watch_sees_only_the_store_destination() {
    let mut script =
        vec![(1, vec!["RPUSH", "l", "3", "1", "2"]), (1, vec!["MSET", "w_1", "3", "w_2", "2", "w_3", "1"])];
    for (watched, write) in [
        ("l", vec!["SORT", "l", "BY", "w_*"]),
        ("l", vec!["SORT", "l", "BY", "w_*", "STORE", "dst"]),
        ("w_1", vec!["SORT", "l", "BY", "w_*", "GET", "w_*", "STORE", "dst"]),
        ("dst", vec!["SORT", "l", "STORE", "dst"]),
        ("dst", vec!["SORT", "missing", "STORE", "dst"]),
        ("dst", vec!["SORT", "missing", "STORE", "dst"]),
        ("l", vec!["SORT_RO", "l", "BY", "w_*"]),
    ] {
        script.extend([
            (0, vec!["WATCH", watched]),
            (0, vec!["MULTI"]),
            (0, vec!["PING"]),
            (1, write),
            (0, vec!["EXEC"]),
        ]);
    }
    run_two_clients("sort and WATCH", &script);
}
