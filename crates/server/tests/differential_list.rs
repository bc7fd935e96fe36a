//! Differential tests for lists, blocking pops and transactions around them: the same
//! commands against quince and a real redis-server, replies compared byte for byte.
//! Blocking scenarios drive several connections per server and compare the transcripts.
//! Skipped without redis-server unless QUINCE_REQUIRE_REDIS=1.

use quince_test_util::script::Act::{self, *};
use quince_test_util::{Differential, Step};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn cmd(args: &[&str]) -> Step {
    Step::cmd(args)
}

fn run(name: &str, steps: &[Step]) {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    diff.run(name, steps);
}

#[test]
fn push_pop_and_length() {
    run(
        "push/pop",
        &[
            cmd(&["LPUSH", "l", "a", "b", "c"]),
            cmd(&["RPUSH", "l", "d", "e"]),
            cmd(&["LRANGE", "l", "0", "-1"]),
            cmd(&["LLEN", "l"]),
            cmd(&["LLEN", "missing"]),
            cmd(&["LPUSHX", "missing", "x"]),
            cmd(&["RPUSHX", "missing", "x"]),
            cmd(&["EXISTS", "missing"]),
            cmd(&["LPUSHX", "l", "x", "y"]),
            cmd(&["RPUSHX", "l", "z"]),
            cmd(&["LPOP", "l"]),
            cmd(&["RPOP", "l"]),
            cmd(&["LPOP", "l", "2"]),
            cmd(&["RPOP", "l", "2"]),
            cmd(&["LPOP", "l", "0"]),
            cmd(&["LPOP", "l", "-1"]),
            cmd(&["LPOP", "l", "x"]),
            cmd(&["LPOP", "l", "1", "2"]),
            cmd(&["LPOP", "missing"]),
            cmd(&["LPOP", "missing", "3"]),
            cmd(&["RPOP", "missing", "0"]),
            cmd(&["LPOP", "l", "100"]),
            cmd(&["EXISTS", "l"]),
            cmd(&["SET", "s", "v"]),
            cmd(&["LPUSH", "s", "a"]),
            cmd(&["LPOP", "s"]),
            cmd(&["LLEN", "s"]),
            cmd(&["LPUSH", "l"]),
            cmd(&["RPUSH", "n", "1", "2", "-3", "99999999999999999999", "x"]),
            cmd(&["LRANGE", "n", "0", "-1"]),
            cmd(&["OBJECT", "ENCODING", "n"]),
            cmd(&["TYPE", "n"]),
        ],
    );
}

#[test]
fn ranges_indexes_and_edits() {
    run(
        "ranges",
        &[
            cmd(&["RPUSH", "l", "a", "b", "c", "d", "e", "f"]),
            cmd(&["LRANGE", "l", "1", "3"]),
            cmd(&["LRANGE", "l", "-3", "-1"]),
            cmd(&["LRANGE", "l", "-100", "100"]),
            cmd(&["LRANGE", "l", "4", "2"]),
            cmd(&["LRANGE", "l", "10", "20"]),
            cmd(&["LRANGE", "l", "a", "1"]),
            cmd(&["LRANGE", "missing", "0", "-1"]),
            cmd(&["LINDEX", "l", "0"]),
            cmd(&["LINDEX", "l", "-1"]),
            cmd(&["LINDEX", "l", "6"]),
            cmd(&["LINDEX", "l", "-7"]),
            cmd(&["LINDEX", "l", "x"]),
            cmd(&["LINDEX", "missing", "x"]),
            cmd(&["LSET", "l", "1", "B"]),
            cmd(&["LSET", "l", "-1", "F"]),
            cmd(&["LSET", "l", "10", "x"]),
            cmd(&["LSET", "missing", "0", "x"]),
            cmd(&["LSET", "l", "x", "x"]),
            cmd(&["LINSERT", "l", "BEFORE", "c", "c0"]),
            cmd(&["LINSERT", "l", "after", "c", "c1"]),
            cmd(&["LINSERT", "l", "AFTER", "zz", "x"]),
            cmd(&["LINSERT", "missing", "AFTER", "zz", "x"]),
            cmd(&["LINSERT", "l", "MIDDLE", "c", "x"]),
            cmd(&["LRANGE", "l", "0", "-1"]),
            cmd(&["RPUSH", "r", "x", "a", "x", "b", "x", "c", "x"]),
            cmd(&["LREM", "r", "2", "x"]),
            cmd(&["LRANGE", "r", "0", "-1"]),
            cmd(&["LREM", "r", "-1", "x"]),
            cmd(&["LRANGE", "r", "0", "-1"]),
            cmd(&["LREM", "r", "0", "x"]),
            cmd(&["LREM", "r", "0", "nothing"]),
            cmd(&["LREM", "missing", "0", "x"]),
            cmd(&["LREM", "r", "z", "x"]),
            cmd(&["LREM", "r", "0", "a"]),
            cmd(&["LREM", "r", "0", "b"]),
            cmd(&["LREM", "r", "0", "c"]),
            cmd(&["EXISTS", "r"]),
            cmd(&["RPUSH", "t", "1", "2", "3", "4", "5"]),
            cmd(&["LTRIM", "t", "1", "-2"]),
            cmd(&["LRANGE", "t", "0", "-1"]),
            cmd(&["LTRIM", "t", "-100", "100"]),
            cmd(&["LRANGE", "t", "0", "-1"]),
            cmd(&["LTRIM", "t", "2", "1"]),
            cmd(&["EXISTS", "t"]),
            cmd(&["LTRIM", "missing", "0", "1"]),
            cmd(&["LTRIM", "t", "x", "1"]),
        ],
    );
}

#[test]
fn lpos_and_moves() {
    run(
        "lpos/lmove",
        &[
            cmd(&["RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"]),
            cmd(&["LPOS", "l", "c"]),
            cmd(&["LPOS", "l", "c", "RANK", "2"]),
            cmd(&["LPOS", "l", "c", "RANK", "-1"]),
            cmd(&["LPOS", "l", "c", "RANK", "-2", "COUNT", "0"]),
            cmd(&["LPOS", "l", "c", "COUNT", "0"]),
            cmd(&["LPOS", "l", "c", "COUNT", "2"]),
            cmd(&["LPOS", "l", "c", "COUNT", "0", "MAXLEN", "7"]),
            cmd(&["LPOS", "l", "c", "MAXLEN", "2"]),
            cmd(&["LPOS", "l", "zz"]),
            cmd(&["LPOS", "l", "zz", "COUNT", "1"]),
            cmd(&["LPOS", "missing", "x"]),
            cmd(&["LPOS", "missing", "x", "COUNT", "1"]),
            cmd(&["LPOS", "l", "c", "RANK", "0"]),
            cmd(&["LPOS", "l", "c", "COUNT", "-1"]),
            cmd(&["LPOS", "l", "c", "MAXLEN", "-1"]),
            cmd(&["LPOS", "l", "c", "RANK"]),
            cmd(&["LPOS", "l", "c", "FOO", "1"]),
            cmd(&["LPOS", "l", "c", "RANK", "x"]),
            cmd(&["RPUSH", "{t}src", "1", "2", "3"]),
            cmd(&["LMOVE", "{t}src", "{t}dst", "LEFT", "RIGHT"]),
            cmd(&["LMOVE", "{t}src", "{t}dst", "RIGHT", "LEFT"]),
            cmd(&["LMOVE", "{t}src", "{t}src", "LEFT", "RIGHT"]),
            cmd(&["LRANGE", "{t}src", "0", "-1"]),
            cmd(&["LRANGE", "{t}dst", "0", "-1"]),
            cmd(&["LMOVE", "{t}src", "{t}dst", "UP", "RIGHT"]),
            cmd(&["RPOPLPUSH", "{t}src", "{t}dst"]),
            cmd(&["RPOPLPUSH", "{t}src", "{t}dst"]),
            cmd(&["EXISTS", "{t}src"]),
            cmd(&["SET", "{t}str", "x"]),
            cmd(&["RPOPLPUSH", "{t}dst", "{t}str"]),
            cmd(&["RPOPLPUSH", "{t}str", "{t}dst"]),
            cmd(&["RPOPLPUSH", "{t}none", "{t}str"]),
            cmd(&["LRANGE", "{t}dst", "0", "-1"]),
            cmd(&["RPUSH", "{t}a", "1", "2", "3"]),
            cmd(&["LMPOP", "2", "{t}none", "{t}a", "LEFT"]),
            cmd(&["LMPOP", "2", "{t}none", "{t}a", "RIGHT", "COUNT", "10"]),
            cmd(&["LMPOP", "2", "{t}none", "{t}a", "RIGHT"]),
            cmd(&["LMPOP", "0", "{t}a", "LEFT"]),
            cmd(&["LMPOP", "x", "{t}a", "LEFT"]),
            cmd(&["LMPOP", "3", "{t}a", "LEFT"]),
            cmd(&["LMPOP", "1", "{t}a", "MIDDLE"]),
            cmd(&["LMPOP", "1", "{t}a", "LEFT", "COUNT", "0"]),
            cmd(&["LMPOP", "1", "{t}a", "LEFT", "COUNT", "1", "COUNT", "1"]),
            cmd(&["LMPOP", "2", "{t}str", "{t}a", "LEFT"]),
        ],
    );
}

#[test]
fn blocking_pops_that_do_not_block() {
    run(
        "blocking without blocking",
        &[
            cmd(&["RPUSH", "{t}a", "1", "2", "3"]),
            cmd(&["BLPOP", "{t}none", "{t}a", "0"]),
            cmd(&["BRPOP", "{t}none", "{t}a", "0.5"]),
            cmd(&["BLMOVE", "{t}a", "{t}b", "LEFT", "LEFT", "0"]),
            cmd(&["BRPOPLPUSH", "{t}b", "{t}a", "0"]),
            cmd(&["BLMPOP", "0", "2", "{t}none", "{t}a", "LEFT", "COUNT", "5"]),
            cmd(&["BLPOP", "{t}none", "0.01"]),
            cmd(&["BLMPOP", "0.01", "1", "{t}none", "RIGHT"]),
            cmd(&["BLMOVE", "{t}none", "{t}b", "LEFT", "LEFT", "0.01"]),
            cmd(&["BLPOP", "{t}a", "-1"]),
            cmd(&["BLPOP", "{t}a", "abc"]),
            cmd(&["BLPOP", "{t}a", "0x1p-4"]),
            cmd(&["BLPOP", "{t}a", "inf"]),
            cmd(&["BLPOP", "{t}a", "-inf"]),
            cmd(&["BLPOP", "{t}a", "1e400"]),
            cmd(&["BLPOP", "{t}a", " 1"]),
            cmd(&["BLMPOP", "-1", "1", "{t}a", "LEFT"]),
            cmd(&["BLMOVE", "{t}a", "{t}b", "LEFT", "UP", "0"]),
            cmd(&["SET", "{t}s", "x"]),
            cmd(&["BLPOP", "{t}s", "0"]),
            cmd(&["BLPOP", "{t}none", "{t}s", "0"]),
            cmd(&["MULTI"]),
            cmd(&["BLPOP", "{t}none", "0"]),
            cmd(&["BLMOVE", "{t}none", "{t}b", "LEFT", "LEFT", "0"]),
            cmd(&["BLMPOP", "0", "1", "{t}none", "LEFT"]),
            cmd(&["EXEC"]),
        ],
    );
}

fn run_clients(name: &str, clients: usize, script: &[Act]) {
    quince_test_util::script::run_clients(QUINCE, name, clients, script);
}

#[test]
fn blocked_clients_are_served_in_arrival_order() {
    run_clients(
        "fifo",
        4,
        &[
            Send(0, &["BLPOP", "{t}q", "0"]),
            Blocked(1),
            Send(1, &["BRPOP", "{t}q", "{t}other", "0"]),
            Blocked(2),
            Send(2, &["BLMPOP", "0", "1", "{t}q", "LEFT", "COUNT", "2"]),
            Blocked(3),
            Call(3, &["RPUSH", "{t}q", "a", "b", "c", "d", "e"]),
            Read(0),
            Read(1),
            Read(2),
            Call(3, &["LRANGE", "{t}q", "0", "-1"]),
            Blocked(0),
        ],
    );
}

#[test]
fn blmove_chains_and_wrong_destination() {
    run_clients(
        "blmove chain",
        3,
        &[
            Send(0, &["BLMOVE", "{t}a", "{t}b", "RIGHT", "LEFT", "0"]),
            Blocked(1),
            Send(1, &["BLPOP", "{t}b", "0"]),
            Blocked(2),
            Call(2, &["RPUSH", "{t}a", "x"]),
            Read(0),
            Read(1),
            Call(2, &["EXISTS", "{t}a", "{t}b"]),
            Call(2, &["SET", "{t}str", "v"]),
            Send(0, &["BRPOPLPUSH", "{t}src", "{t}str", "0"]),
            Blocked(1),
            Call(2, &["RPUSH", "{t}src", "foo"]),
            Read(0),
            Call(2, &["LRANGE", "{t}src", "0", "-1"]),
            Send(1, &["BRPOPLPUSH", "{t}self", "{t}self", "0"]),
            Blocked(1),
            Call(2, &["RPUSH", "{t}self", "me"]),
            Read(1),
            Call(2, &["LRANGE", "{t}self", "0", "-1"]),
        ],
    );
}

#[test]
fn transactions_and_type_changes_around_waiters() {
    run_clients(
        "multi and types",
        2,
        &[
            Send(0, &["BLPOP", "{t}l", "0"]),
            Blocked(1),
            Call(1, &["MULTI"]),
            Call(1, &["LPUSH", "{t}l", "a"]),
            Call(1, &["LPUSH", "{t}l", "b"]),
            Call(1, &["LPUSH", "{t}l", "c"]),
            Call(1, &["EXEC"]),
            Read(0),
            Call(1, &["LRANGE", "{t}l", "0", "-1"]),
            Call(1, &["DEL", "{t}l"]),
            Send(0, &["BLPOP", "{t}k", "0"]),
            Blocked(1),
            Call(1, &["MULTI"]),
            Call(1, &["LPUSH", "{t}k", "x"]),
            Call(1, &["DEL", "{t}k"]),
            Call(1, &["SET", "{t}k", "str"]),
            Call(1, &["EXEC"]),
            Call(1, &["DEL", "{t}k"]),
            Call(1, &["RPUSH", "{t}k", "y"]),
            Read(0),
            Send(0, &["BLMPOP", "0", "1", "{t}dst", "LEFT"]),
            Blocked(1),
            Call(1, &["RPUSH", "{t}src", "1", "2"]),
            Call(1, &["RENAME", "{t}src", "{t}dst"]),
            Read(0),
            Call(1, &["LRANGE", "{t}dst", "0", "-1"]),
        ],
    );
}

#[test]
fn timeouts_unblock_and_disconnects() {
    run_clients(
        "timeouts",
        3,
        &[
            Call(0, &["BLPOP", "{t}x", "0.05"]),
            Call(0, &["BLMOVE", "{t}x", "{t}y", "LEFT", "LEFT", "0.05"]),
            Call(0, &["BLMPOP", "0.05", "1", "{t}x", "LEFT"]),
            Quiet(1, &["HELLO", "3"]),
            Call(1, &["BLPOP", "{t}x", "0.05"]),
            Send(0, &["BLPOP", "{t}u", "0"]),
            Blocked(1),
            Unblock(2, 0, "TIMEOUT"),
            Read(0),
            Send(0, &["BRPOP", "{t}u", "0"]),
            Blocked(1),
            Unblock(2, 0, "ERROR"),
            Read(0),
            Unblock(2, 0, "TIMEOUT"),
            Call(2, &["CLIENT", "UNBLOCK", "x"]),
            Call(2, &["CLIENT", "UNBLOCK", "1", "MAYBE"]),
            Send(0, &["BLPOP", "{t}gone", "0"]),
            Blocked(1),
            Close(0),
            Blocked(0),
            Call(2, &["RPUSH", "{t}gone", "kept"]),
            Call(2, &["LRANGE", "{t}gone", "0", "-1"]),
        ],
    );
}
