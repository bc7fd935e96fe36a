//! Differential tests for the stream family (XADD ... XINFO): each script runs against
//! quince and a real redis-server in RESP2 and RESP3, replies compared byte for byte.
//! Entry IDs are explicit so replies are deterministic; replies that embed the clock
//! (auto IDs, idle times, seen times) are run but not compared, and the state they leave
//! is compared by the steps that follow. Skipped without redis-server unless
//! QUINCE_REQUIRE_REDIS=1.

use quince_test_util::{Compare, Differential, Step};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn cmd(args: &[&str]) -> Step {
    Step::cmd(args)
}

fn ignore(args: &[&str]) -> Step {
    Step::cmd(args).compare(Compare::Ignore)
}

fn run(name: &str, steps: &[Step]) {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    diff.run(name, steps);
}

#[test]
fn xadd_ids_and_errors() {
    run(
        "xadd ids",
        &[
            cmd(&["XADD", "s", "1-1", "a", "1"]),
            cmd(&["XADD", "s", "1-1", "a", "1"]),
            cmd(&["XADD", "s", "1-0", "a", "1"]),
            cmd(&["XADD", "s", "1-*", "b", "2"]),
            cmd(&["XADD", "s", "5-*", "c", "3"]),
            cmd(&["XADD", "s", "5", "c", "3"]),
            cmd(&["XADD", "s", "6", "c", "3", "d", "4"]),
            cmd(&["XADD", "s", "0-0", "a", "1"]),
            cmd(&["XADD", "new", "0-0", "a", "1"]),
            cmd(&["EXISTS", "new"]),
            cmd(&["XADD", "new", "0-*", "a", "1"]),
            cmd(&["XADD", "s", "abc", "a", "1"]),
            cmd(&["XADD", "s", "1-abc", "a", "1"]),
            cmd(&["XADD", "s", "-", "a", "1"]),
            cmd(&["XADD", "s", "+", "a", "1"]),
            cmd(&["XADD", "s", "7", "a"]),
            cmd(&["XADD", "s", "7", "a", "1", "b"]),
            cmd(&["XADD", "s", "7"]),
            cmd(&["XADD", "s", "NOMKSTREAM"]),
            cmd(&["XADD", "s", "18446744073709551615-18446744073709551615", "a", "1"]),
            cmd(&["XADD", "s", "*", "a", "1"]),
            cmd(&["XADD", "s", "18446744073709551615-*", "a", "1"]),
            cmd(&["XADD", "t", "18446744073709551615-18446744073709551614", "a", "1"]),
            cmd(&["XADD", "t", "18446744073709551615-*", "a", "1"]),
            cmd(&["XADD", "t", "18446744073709551615-*", "a", "1"]),
            cmd(&["XADD", "missing", "NOMKSTREAM", "*", "a", "1"]),
            cmd(&["EXISTS", "missing"]),
            ignore(&["XADD", "auto", "*", "a", "1"]),
            ignore(&["XADD", "auto", "*", "a", "2"]),
            cmd(&["XLEN", "auto"]),
            cmd(&["SET", "str", "x"]),
            cmd(&["XADD", "str", "1", "a", "1"]),
            cmd(&["XLEN", "str"]),
            cmd(&["XLEN", "nokey"]),
            cmd(&["TYPE", "s"]),
            cmd(&["OBJECT", "ENCODING", "s"]),
            cmd(&["XRANGE", "s", "-", "+"]),
            cmd(&["XADD", "big", "1-0", "f", ""]),
            cmd(&["XRANGE", "big", "-", "+"]),
        ],
    );
}

#[test]
fn xadd_trimming_options() {
    let mut steps = vec![cmd(&["CONFIG", "SET", "stream-node-max-entries", "10"])];
    for i in 1..=55 {
        steps.push(cmd(&["XADD", "s", &i.to_string(), "f", &i.to_string()]));
    }
    steps.extend([
        cmd(&["XADD", "s", "MAXLEN", "~", "30", "56", "f", "v"]),
        cmd(&["XLEN", "s"]),
        cmd(&["XADD", "s", "MAXLEN", "=", "30", "57", "f", "v"]),
        cmd(&["XLEN", "s"]),
        cmd(&["XADD", "s", "MAXLEN", "28", "58", "f", "v"]),
        cmd(&["XRANGE", "s", "-", "+", "COUNT", "3"]),
        cmd(&["XADD", "s", "MINID", "~", "40", "59", "f", "v"]),
        cmd(&["XLEN", "s"]),
        cmd(&["XADD", "s", "MINID", "45", "60", "f", "v"]),
        cmd(&["XRANGE", "s", "-", "+", "COUNT", "2"]),
        cmd(&["XADD", "s", "MAXLEN", "~", "0", "LIMIT", "5", "61", "f", "v"]),
        cmd(&["XLEN", "s"]),
        cmd(&["XADD", "s", "MAXLEN", "0", "LIMIT", "5", "62", "f", "v"]),
        cmd(&["XADD", "s", "LIMIT", "5", "62", "f", "v"]),
        cmd(&["XADD", "s", "LIMIT", "0", "62", "f", "v"]),
        cmd(&["XADD", "s", "MAXLEN", "-1", "62", "f", "v"]),
        cmd(&["XADD", "s", "MAXLEN", "x", "62", "f", "v"]),
        cmd(&["XADD", "s", "MAXLEN", "1", "MINID", "5", "62", "f", "v"]),
        cmd(&["XADD", "s", "MINID", "-", "62", "f", "v"]),
        cmd(&["XADD", "s", "MAXLEN", "~", "10", "LIMIT", "-1", "62", "f", "v"]),
        cmd(&["XADD", "s", "NOMKSTREAM", "MAXLEN", "5", "63", "f", "v"]),
        cmd(&["XLEN", "s"]),
        cmd(&["XTRIM", "s"]),
        cmd(&["XTRIM", "s", "FOO", "1"]),
        cmd(&["XTRIM", "s", "LIMIT", "1"]),
        cmd(&["XTRIM", "s", "MAXLEN", "2", "LIMIT", "1"]),
        cmd(&["XTRIM", "s", "MAXLEN", "3"]),
        cmd(&["XTRIM", "s", "MINID", "63"]),
        cmd(&["XRANGE", "s", "-", "+"]),
        cmd(&["XTRIM", "nokey", "MAXLEN", "1"]),
        cmd(&["XTRIM", "s", "MAXLEN", "0"]),
        cmd(&["EXISTS", "s"]),
        cmd(&["XLEN", "s"]),
        cmd(&["XINFO", "STREAM", "s"]),
        cmd(&["CONFIG", "SET", "stream-node-max-entries", "100"]),
    ]);
    run("xadd trimming", &steps);
}

#[test]
fn xtrim_approximate_by_nodes() {
    let mut steps = vec![cmd(&["CONFIG", "SET", "stream-node-max-entries", "2"])];
    for i in 1..=11 {
        steps.push(cmd(&["XADD", "s", &i.to_string(), "f", "v"]));
    }
    steps.extend([
        cmd(&["XTRIM", "s", "MAXLEN", "~", "6"]),
        cmd(&["XTRIM", "s", "MAXLEN", "~", "2", "LIMIT", "3"]),
        cmd(&["XTRIM", "s", "MINID", "~", "9"]),
        cmd(&["XRANGE", "s", "-", "+"]),
        cmd(&["XTRIM", "s", "MINID", "=", "10"]),
        cmd(&["XRANGE", "s", "-", "+"]),
        cmd(&["CONFIG", "SET", "stream-node-max-entries", "100"]),
    ]);
    run("xtrim approx", &steps);
}

#[test]
fn xrange_and_xrevrange() {
    run(
        "xrange",
        &[
            cmd(&["XADD", "s", "1-0", "a", "1"]),
            cmd(&["XADD", "s", "1-1", "b", "2"]),
            cmd(&["XADD", "s", "2-0", "c", "3", "d", "4"]),
            cmd(&["XADD", "s", "3-5", "e", "5"]),
            cmd(&["XRANGE", "s", "-", "+"]),
            cmd(&["XRANGE", "s", "1", "1"]),
            cmd(&["XRANGE", "s", "(1-0", "+"]),
            cmd(&["XRANGE", "s", "-", "(2-0"]),
            cmd(&["XRANGE", "s", "(1", "(3"]),
            cmd(&["XRANGE", "s", "-", "+", "COUNT", "2"]),
            cmd(&["XRANGE", "s", "-", "+", "COUNT", "0"]),
            cmd(&["XRANGE", "s", "-", "+", "COUNT", "-1"]),
            cmd(&["XRANGE", "s", "-", "+", "COUNT"]),
            cmd(&["XRANGE", "s", "-", "+", "COUNT", "x"]),
            cmd(&["XRANGE", "s", "-", "+", "FOO", "1"]),
            cmd(&["XRANGE", "s", "+", "-"]),
            cmd(&["XRANGE", "s", "(-", "+"]),
            cmd(&["XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"]),
            cmd(&["XRANGE", "s", "-", "(0-0"]),
            cmd(&["XRANGE", "s", "x", "+"]),
            cmd(&["XRANGE", "s", "-", "y"]),
            cmd(&["XRANGE", "nokey", "-", "+"]),
            cmd(&["XRANGE", "nokey", "-", "+", "COUNT", "0"]),
            cmd(&["XREVRANGE", "s", "+", "-"]),
            cmd(&["XREVRANGE", "s", "+", "-", "COUNT", "1"]),
            cmd(&["XREVRANGE", "s", "(3-5", "(1-0"]),
            cmd(&["XREVRANGE", "s", "-", "+"]),
            cmd(&["XREVRANGE", "s", "2", "2"]),
            cmd(&["SET", "str", "x"]),
            cmd(&["XRANGE", "str", "-", "+"]),
            cmd(&["XREVRANGE", "str", "+", "-"]),
        ],
    );
}

#[test]
fn xdel_and_metadata() {
    run(
        "xdel",
        &[
            cmd(&["XADD", "s", "1-0", "a", "1"]),
            cmd(&["XADD", "s", "2-0", "b", "2"]),
            cmd(&["XADD", "s", "3-0", "c", "3"]),
            cmd(&["XADD", "s", "4-0", "d", "4"]),
            cmd(&["XDEL", "s", "2-0", "2-0", "9-0"]),
            cmd(&["XDEL", "s", "1-0"]),
            cmd(&["XINFO", "STREAM", "s"]),
            cmd(&["XDEL", "s", "x"]),
            cmd(&["XDEL", "s", "3-0", "x"]),
            cmd(&["XLEN", "s"]),
            cmd(&["XDEL", "nokey", "x"]),
            cmd(&["XDEL", "s", "4-0", "3-0"]),
            cmd(&["XLEN", "s"]),
            cmd(&["EXISTS", "s"]),
            cmd(&["XINFO", "STREAM", "s"]),
            cmd(&["XADD", "s", "5-0", "e", "5"]),
            cmd(&["XINFO", "STREAM", "s"]),
            cmd(&["XINFO", "STREAM", "s", "FULL"]),
            cmd(&["SET", "str", "x"]),
            cmd(&["XDEL", "str", "1-0"]),
        ],
    );
}

#[test]
fn xsetid() {
    run(
        "xsetid",
        &[
            cmd(&["XSETID", "nokey", "1-1"]),
            cmd(&["XADD", "s", "5-0", "a", "1"]),
            cmd(&["XSETID", "s", "4-0"]),
            cmd(&["XSETID", "s", "5-0"]),
            cmd(&["XSETID", "s", "10-0"]),
            cmd(&["XADD", "s", "9-0", "a", "1"]),
            cmd(&["XSETID", "s", "11-0", "ENTRIESADDED", "0"]),
            cmd(&["XSETID", "s", "11-0", "ENTRIESADDED", "-1"]),
            cmd(&["XSETID", "s", "11-0", "ENTRIESADDED", "5", "MAXDELETEDID", "12-0"]),
            cmd(&["XSETID", "s", "11-0", "ENTRIESADDED", "5", "MAXDELETEDID", "3-0"]),
            cmd(&["XSETID", "s", "11-0", "0"]),
            cmd(&["XSETID", "s", "11-0", "FOO", "1"]),
            cmd(&["XSETID", "s", "x"]),
            cmd(&["XSETID", "s", "+"]),
            cmd(&["XINFO", "STREAM", "s"]),
            cmd(&["XADD", "s", "11-*", "b", "2"]),
            cmd(&["XADD", "e", "MAXLEN", "0", "1-0", "a", "1"]),
            cmd(&["XSETID", "e", "0-5"]),
            cmd(&["XINFO", "STREAM", "e"]),
            cmd(&["SET", "str", "x"]),
            cmd(&["XSETID", "str", "1-1"]),
        ],
    );
}

#[test]
fn xread_non_blocking() {
    run(
        "xread",
        &[
            cmd(&["XADD", "a", "1-0", "f", "1"]),
            cmd(&["XADD", "a", "2-0", "f", "2"]),
            cmd(&["XADD", "b", "3-0", "g", "3"]),
            cmd(&["XREAD", "STREAMS", "a", "b", "0", "0"]),
            cmd(&["XREAD", "COUNT", "1", "STREAMS", "a", "b", "0", "0"]),
            cmd(&["XREAD", "STREAMS", "a", "b", "2", "0"]),
            cmd(&["XREAD", "STREAMS", "a", "b", "$", "$"]),
            cmd(&["XREAD", "STREAMS", "a", "nokey", "1-0", "0"]),
            cmd(&["XREAD", "STREAMS", "a", "a", "0", "1"]),
            cmd(&["XREAD", "COUNT", "0", "STREAMS", "a", "0"]),
            cmd(&["XREAD", "COUNT", "-3", "STREAMS", "a", "0"]),
            cmd(&["XREAD", "STREAMS", "a"]),
            cmd(&["XREAD", "STREAMS", "a", "b", "0"]),
            cmd(&["XREAD", "a", "0"]),
            cmd(&["XREAD", "COUNT", "x", "STREAMS", "a", "0"]),
            cmd(&["XREAD", "BLOCK", "x", "STREAMS", "a", "0"]),
            cmd(&["XREAD", "BLOCK", "-1", "STREAMS", "a", "0"]),
            cmd(&["XREAD", "BLOCK", "1.5", "STREAMS", "a", "0"]),
            cmd(&["XREAD", "BLOCK", "100", "STREAMS", "a", "0"]),
            cmd(&["XREAD", "BLOCK", "10", "STREAMS", "a", "$"]),
            cmd(&["XREAD", "GROUP", "g", "c", "STREAMS", "a", "0"]),
            cmd(&["XREAD", "NOACK", "STREAMS", "a", "0"]),
            cmd(&["XREAD", "STREAMS", "a", ">"]),
            cmd(&["XREAD", "STREAMS", "a", "x"]),
            cmd(&["XREAD", "STREAMS", "a", "+"]),
            cmd(&["XREAD", "STREAMS", "nokey", "0"]),
            cmd(&["XREAD", "FOO", "STREAMS", "a", "0"]),
            cmd(&["SET", "str", "x"]),
            cmd(&["XREAD", "STREAMS", "str", "0"]),
            cmd(&["XDEL", "a", "2-0"]),
            cmd(&["XREAD", "STREAMS", "a", "1-0"]),
            cmd(&["MULTI"]),
            cmd(&["XREAD", "BLOCK", "0", "STREAMS", "a", "$"]),
            cmd(&["EXEC"]),
        ],
    );
}

#[test]
fn consumer_groups() {
    run(
        "xgroup",
        &[
            cmd(&["XGROUP", "CREATE", "s", "g", "$"]),
            cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]),
            cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]),
            cmd(&["XGROUP", "CREATE", "s", "g2", "x"]),
            cmd(&["XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", "-2"]),
            cmd(&["XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", "x"]),
            cmd(&["XGROUP", "CREATE", "s", "g2", "0", "FOO"]),
            cmd(&["XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", "0"]),
            cmd(&["XGROUP", "SETID", "s", "g3", "0"]),
            cmd(&["XGROUP", "SETID", "s", "g2", "0", "MKSTREAM"]),
            cmd(&["XGROUP", "SETID", "s", "g2", "-", "ENTRIESREAD", "3"]),
            cmd(&["XGROUP", "SETID", "nokey", "g2", "0"]),
            cmd(&["XGROUP", "CREATECONSUMER", "s", "g", "alice"]),
            cmd(&["XGROUP", "CREATECONSUMER", "s", "g", "alice"]),
            cmd(&["XGROUP", "CREATECONSUMER", "s", "nog", "alice"]),
            cmd(&["XGROUP", "DELCONSUMER", "s", "g", "bob"]),
            cmd(&["XGROUP", "DELCONSUMER", "s", "g", "alice"]),
            cmd(&["XGROUP", "DELCONSUMER", "s", "nog", "alice"]),
            cmd(&["XGROUP", "DESTROY", "s", "g2"]),
            cmd(&["XGROUP", "DESTROY", "s", "g2"]),
            cmd(&["XGROUP", "DESTROY", "nokey", "g2"]),
            cmd(&["XGROUP", "DESTROY", "s"]),
            cmd(&["XGROUP", "FOO", "s", "g"]),
            cmd(&["XGROUP", "HELP"]),
            cmd(&["XGROUP", "HELP", "x"]),
            cmd(&["XGROUP"]),
            cmd(&["SET", "str", "x"]),
            cmd(&["XGROUP", "CREATE", "str", "g", "$"]),
            cmd(&["XGROUP", "CREATE", "str", "g", "$", "MKSTREAM"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XINFO", "GROUPS", "nokey"]),
            cmd(&["XINFO", "GROUPS", "str"]),
            cmd(&["XINFO", "CONSUMERS", "s", "nog"]),
            cmd(&["XINFO", "STREAM", "s", "FOO"]),
            cmd(&["XINFO", "STREAM", "s", "FULL", "COUNT"]),
            cmd(&["XINFO", "STREAM", "s", "FULL", "FOO", "1"]),
            cmd(&["XINFO", "STREAM", "s", "FULL", "COUNT", "x"]),
            cmd(&["XINFO", "HELP"]),
            cmd(&["XINFO", "FOO", "s"]),
            cmd(&["XINFO", "STREAM"]),
        ],
    );
}

#[test]
fn xreadgroup_xack_xpending() {
    run(
        "xreadgroup",
        &[
            cmd(&["XADD", "s", "1-0", "a", "1"]),
            cmd(&["XADD", "s", "2-0", "b", "2"]),
            cmd(&["XADD", "s", "3-0", "c", "3"]),
            cmd(&["XGROUP", "CREATE", "s", "g", "0"]),
            cmd(&["XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">"]),
            cmd(&["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"]),
            cmd(&["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"]),
            cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"]),
            cmd(&["XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", "s", "0"]),
            cmd(&["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "2-0"]),
            cmd(&["XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0"]),
            cmd(&["XPENDING", "s", "g"]),
            cmd(&["XPENDING", "s", "g", "IDLE", "100000000", "-", "+", "10"]),
            cmd(&["XPENDING", "s", "g", "-", "+", "0"]),
            cmd(&["XPENDING", "s", "g", "-", "+", "10", "nobody"]),
            cmd(&["XPENDING", "s", "g", "-", "+"]),
            cmd(&["XPENDING", "s", "g", "IDLE", "10", "-", "+"]),
            cmd(&["XPENDING", "s", "g", "IDLE", "x", "-", "+", "10"]),
            cmd(&["XPENDING", "s", "g", "-", "+", "x"]),
            cmd(&["XPENDING", "s", "g", "x", "+", "10"]),
            cmd(&["XPENDING", "s", "g", "(18446744073709551615-18446744073709551615", "+", "10"]),
            cmd(&["XPENDING", "s", "nog"]),
            cmd(&["XPENDING", "nokey", "g"]),
            cmd(&["XPENDING", "s", "g", "-", "+", "10", "alice", "extra"]).compare(Compare::ErrorOrNot),
            cmd(&["XPENDING", "s", "g", "IDLE", "100000000", "-", "+", "10", "alice"]),
            cmd(&["XACK", "s", "g", "1-0", "9-0"]),
            cmd(&["XACK", "s", "g", "1-0"]),
            cmd(&["XACK", "s", "g", "x"]),
            cmd(&["XACK", "s", "nog", "x"]),
            cmd(&["XACK", "nokey", "g", "1-0"]),
            cmd(&["XPENDING", "s", "g"]),
            cmd(&["XDEL", "s", "2-0"]),
            cmd(&["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XADD", "s", "4-0", "d", "4"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XREADGROUP", "GROUP", "g", "bob", "NOACK", "STREAMS", "s", ">"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XPENDING", "s", "g"]),
            cmd(&["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "$"]),
            cmd(&["XREADGROUP", "GROUP", "nog", "bob", "STREAMS", "s", ">"]),
            cmd(&["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "nokey", ">"]),
            cmd(&["XREADGROUP", "GROUP", "g", "STREAMS", "s", ">"]),
            cmd(&["XREADGROUP", "STREAMS", "s", ">"]),
            cmd(&["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "x"]),
            cmd(&["XREADGROUP", "GROUP", "g", "bob", "BLOCK", "10", "STREAMS", "s", ">"]),
            cmd(&["XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XREADGROUP", "GROUP", "g", "dave", "STREAMS", "s", ">"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XPENDING", "s", "g", "-", "+", "10", "dave"]).compare(Compare::Ignore),
            cmd(&["XPENDING", "s", "g"]),
            ignore(&["XINFO", "CONSUMERS", "s", "g"]),
            cmd(&["XGROUP", "DELCONSUMER", "s", "g", "dave"]),
            cmd(&["XPENDING", "s", "g"]),
            // A group named STREAMS: the key spec and the parser see different keys.
            cmd(&["XGROUP", "CREATE", "s", "STREAMS", "0"]),
            cmd(&["XREADGROUP", "COUNT", "1", "GROUP", "STREAMS", "x", "STREAMS", "s", ">"]),
            cmd(&["SET", "str", "x"]),
            cmd(&["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "str", ">"]),
            cmd(&["XACK", "str", "g", "1-0"]),
            cmd(&["XPENDING", "str", "g"]),
        ],
    );
}

#[test]
fn xclaim_and_xautoclaim() {
    run(
        "xclaim",
        &[
            cmd(&["XADD", "s", "1-0", "a", "1"]),
            cmd(&["XADD", "s", "2-0", "b", "2"]),
            cmd(&["XADD", "s", "3-0", "c", "3"]),
            cmd(&["XADD", "s", "4-0", "d", "4"]),
            cmd(&["XGROUP", "CREATE", "s", "g", "0"]),
            cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"]),
            cmd(&["XCLAIM", "s", "g", "bob", "100000000", "1-0"]),
            cmd(&["XCLAIM", "s", "g", "bob", "0", "1-0", "2-0", "TIME", "12345", "RETRYCOUNT", "7"]),
            cmd(&["XCLAIM", "s", "g", "bob", "0", "3-0", "JUSTID", "TIME", "54321"]),
            cmd(&["XCLAIM", "s", "g", "carol", "0", "9-0", "FORCE", "TIME", "1000"]),
            cmd(&["XCLAIM", "s", "g", "carol", "0", "4-0", "FORCE", "TIME", "1000", "LASTID", "10-0"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XINFO", "STREAM", "s", "FULL"]).compare(Compare::Ignore),
            cmd(&["XPENDING", "s", "g"]),
            cmd(&["XCLAIM", "s", "g", "bob", "x", "1-0"]),
            cmd(&["XCLAIM", "s", "g", "bob", "0", "1-0", "IDLE", "x"]),
            cmd(&["XCLAIM", "s", "g", "bob", "0", "1-0", "TIME", "x"]),
            cmd(&["XCLAIM", "s", "g", "bob", "0", "1-0", "RETRYCOUNT", "x"]),
            cmd(&["XCLAIM", "s", "g", "bob", "0", "1-0", "LASTID", "x"]),
            cmd(&["XCLAIM", "s", "g", "bob", "0", "1-0", "FOO"]),
            cmd(&["XCLAIM", "s", "g", "bob", "0", "1-0", "IDLE"]),
            cmd(&["XCLAIM", "s", "nog", "bob", "0", "1-0"]),
            cmd(&["XCLAIM", "nokey", "g", "bob", "0", "1-0"]),
            cmd(&["XDEL", "s", "2-0"]),
            cmd(&["XCLAIM", "s", "g", "alice", "0", "2-0", "JUSTID"]),
            cmd(&["XPENDING", "s", "g"]),
            cmd(&["XAUTOCLAIM", "s", "g", "dave", "100000000", "0"]),
            cmd(&["XAUTOCLAIM", "s", "g", "dave", "0", "0", "COUNT", "1", "JUSTID"]),
            cmd(&["XAUTOCLAIM", "s", "g", "dave", "0", "(1-0", "COUNT", "1"]),
            cmd(&["XDEL", "s", "4-0"]),
            cmd(&["XAUTOCLAIM", "s", "g", "erin", "0", "0"]),
            cmd(&["XPENDING", "s", "g"]),
            cmd(&["XAUTOCLAIM", "s", "g", "erin", "0", "0", "COUNT", "0"]),
            cmd(&["XAUTOCLAIM", "s", "g", "erin", "0", "0", "COUNT", "x"]),
            cmd(&["XAUTOCLAIM", "s", "g", "erin", "0", "0", "FOO"]),
            cmd(&["XAUTOCLAIM", "s", "g", "erin", "x", "0"]),
            cmd(&["XAUTOCLAIM", "s", "g", "erin", "0", "x"]),
            cmd(&["XAUTOCLAIM", "s", "nog", "erin", "0", "0"]),
            cmd(&["XAUTOCLAIM", "nokey", "g", "erin", "0", "0"]),
            cmd(&["SET", "str", "x"]),
            cmd(&["XCLAIM", "str", "g", "bob", "0", "1-0"]),
            cmd(&["XAUTOCLAIM", "str", "g", "bob", "0", "0"]),
        ],
    );
}

#[test]
fn xinfo_lag_and_entries_read() {
    run(
        "xinfo lag",
        &[
            cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XADD", "s", "1-0", "a", "1"]),
            cmd(&["XADD", "s", "2-0", "a", "2"]),
            cmd(&["XADD", "s", "3-0", "a", "3"]),
            cmd(&["XADD", "s", "4-0", "a", "4"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XDEL", "s", "3-0"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XGROUP", "CREATE", "s", "g2", "0"]),
            cmd(&["XGROUP", "CREATE", "s", "g3", "2-0"]),
            cmd(&["XGROUP", "CREATE", "s", "g4", "4-0"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XTRIM", "s", "MAXLEN", "1"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XINFO", "STREAM", "s"]),
            cmd(&["XGROUP", "SETID", "s", "g2", "$"]),
            cmd(&["XINFO", "GROUPS", "s"]),
            cmd(&["XINFO", "STREAM", "s", "FULL", "COUNT", "1"]).compare(Compare::Ignore),
            cmd(&["XGROUP", "CREATECONSUMER", "s", "g", "zed"]),
            cmd(&["XINFO", "CONSUMERS", "s", "g"]).compare(Compare::Ignore),
            cmd(&["XINFO", "CONSUMERS", "s", "g3"]),
        ],
    );
}

#[test]
fn command_docs_and_info() {
    let names = [
        "xadd",
        "xrange",
        "xrevrange",
        "xlen",
        "xdel",
        "xtrim",
        "xread",
        "xreadgroup",
        "xack",
        "xpending",
        "xclaim",
        "xautoclaim",
        "xsetid",
        "xgroup|create",
        "xgroup|setid",
        "xgroup|destroy",
        "xgroup|createconsumer",
        "xgroup|delconsumer",
        "xgroup|help",
        "xinfo|stream",
        "xinfo|groups",
        "xinfo|consumers",
        "xinfo|help",
    ];
    // The containers themselves list their subcommands in hash-table order in Redis (random
    // per process), so they are compared one subcommand at a time.
    let mut steps = Vec::new();
    for name in names {
        steps.push(cmd(&["COMMAND", "INFO", name]));
        steps.push(cmd(&["COMMAND", "DOCS", name]));
    }
    steps.push(cmd(&["COMMAND", "GETKEYS", "XREAD", "COUNT", "2", "STREAMS", "a", "b", "0", "0"]));
    steps.push(cmd(&["COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">"]));
    steps.push(cmd(&["COMMAND", "GETKEYS", "XGROUP", "CREATE", "k", "g", "$"]));
    steps.push(cmd(&["COMMAND", "GETKEYS", "XINFO", "STREAM", "k"]));
    run("command docs", &steps);
}

/// Runs `blocked` on one connection of each server, waits until it blocks, runs `then` on
/// another connection and compares every reply, the blocked client's included, in RESP2
/// and RESP3.
fn blocking_case(name: &str, setup: &[&[&str]], blocked: &[&str], then: &[&[&str]]) {
    let Some(diff) = Differential::start(QUINCE) else { return };
    for resp3 in [false, true] {
        let mut replies = Vec::new();
        for server in [&diff.quince, &diff.redis] {
            let mut waiter = server.client();
            let mut other = server.client();
            other.call(&["FLUSHALL"]);
            if resp3 {
                waiter.call(&["HELLO", "3"]);
            }
            let mut got = Vec::new();
            for args in setup {
                got.push(other.call(args));
            }
            waiter.send(blocked);
            // Wait until the server counts the client as blocked.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            loop {
                let info = other.call(&["INFO", "clients"]);
                if String::from_utf8_lossy(&info).contains("blocked_clients:1") {
                    break;
                }
                assert!(std::time::Instant::now() < deadline, "{name}: the client never blocked");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            for args in then {
                got.push(other.call(args));
            }
            got.push(waiter.read_reply());
            replies.push(got);
        }
        assert_eq!(
            replies[0].iter().map(|r| String::from_utf8_lossy(r).into_owned()).collect::<Vec<_>>(),
            replies[1].iter().map(|r| String::from_utf8_lossy(r).into_owned()).collect::<Vec<_>>(),
            "{name} (resp3: {resp3}): quince first, redis second"
        );
    }
}

#[test]
fn blocking_xread_served_by_xadd() {
    blocking_case(
        "xread $",
        &[&["XADD", "s", "5-0", "a", "1"]],
        &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
        &[&["XADD", "s", "6-0", "b", "2"]],
    );
    blocking_case(
        "xread missing key",
        &[&["XADD", "other", "1-0", "a", "1"]],
        &["XREAD", "BLOCK", "0", "STREAMS", "other", "s", "$", "$"],
        &[&["XADD", "s", "1-0", "b", "2"], &["XADD", "s", "2-0", "c", "3"]],
    );
    blocking_case(
        "xread count",
        &[&["XADD", "s", "5-0", "a", "1"]],
        &["XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "5-0"],
        &[&["MULTI"], &["XADD", "s", "6-0", "b", "2"], &["XADD", "s", "7-0", "c", "3"], &["EXEC"]],
    );
    blocking_case(
        "xread wrong type then stream",
        &[&["XADD", "s", "5-0", "a", "1"]],
        &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
        &[&["SET", "s", "x"], &["DEL", "s"], &["XADD", "s", "7-0", "c", "3"]],
    );
}

#[test]
fn blocking_xreadgroup() {
    let group = &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"][..];
    blocking_case(
        "xreadgroup served",
        &[group],
        &["XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"],
        &[&["XADD", "s", "1-0", "a", "1"], &["XPENDING", "s", "g"], &["XINFO", "GROUPS", "s"]],
    );
    blocking_case(
        "xreadgroup noack",
        &[group],
        &["XREADGROUP", "GROUP", "g", "alice", "NOACK", "BLOCK", "0", "STREAMS", "s", ">"],
        &[&["XADD", "s", "1-0", "a", "1"], &["XPENDING", "s", "g"]],
    );
    blocking_case(
        "xreadgroup group destroyed",
        &[group],
        &["XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"],
        &[&["XGROUP", "DESTROY", "s", "g"]],
    );
    blocking_case(
        "xreadgroup key deleted",
        &[group],
        &["XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"],
        &[&["DEL", "s"]],
    );
    blocking_case(
        "xreadgroup key overwritten",
        &[group],
        &["XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"],
        &[&["SET", "s", "x"]],
    );
    blocking_case(
        "xreadgroup flushall",
        &[group],
        &["XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"],
        &[&["FLUSHALL"]],
    );
    // SWAPDB takes the stream away (an error, Redis's scanDatabaseForDeletedKeys), puts
    // another type in its place, or brings in a stream with new entries.
    blocking_case(
        "xreadgroup swapdb key gone",
        &[group],
        &["XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"],
        &[&["SWAPDB", "0", "1"], &["DBSIZE"]],
    );
    blocking_case(
        "xreadgroup swapdb not a stream",
        &[&["LPUSH", "s", "e1"], &["SWAPDB", "0", "1"], group],
        &["XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"],
        &[&["SWAPDB", "0", "1"], &["TYPE", "s"]],
    );
    blocking_case(
        "xread swapdb brings entries",
        &[&["XADD", "s", "9-0", "a", "1"], &["SWAPDB", "0", "1"], &["XADD", "s", "5-0", "a", "1"]],
        &["XREAD", "BLOCK", "0", "STREAMS", "s", "5-0"],
        &[&["SWAPDB", "0", "1"]],
    );
    blocking_case(
        "xreadgroup timeout",
        &[group],
        &["XREADGROUP", "GROUP", "g", "alice", "BLOCK", "50", "STREAMS", "s", ">"],
        &[],
    );
    blocking_case("xread timeout", &[group], &["XREAD", "BLOCK", "50", "STREAMS", "s", "$"], &[]);
}
