//! Differential tests for Pub/Sub and keyspace notifications: multi-connection scripts run
//! against quince and a real redis-server, every reply and every delivered message compared
//! byte for byte. Skipped without redis-server unless QUINCE_REQUIRE_REDIS=1.

use std::time::Duration;

use quince_test_util::script::Act::{self, *};
use quince_test_util::{Differential, ServerProcess};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn run_clients(name: &str, clients: usize, script: &[Act]) {
    quince_test_util::script::run_clients(QUINCE, name, clients, script);
}

#[test]
fn subscribe_publish_unsubscribe_resp2() {
    run_clients(
        "resp2 basics",
        2,
        &[
            Send(1, &["SUBSCRIBE", "a", "b", "a"]),
            Read(1),
            Read(1),
            Read(1),
            Call(0, &["PUBLISH", "a", "hello"]),
            Read(1),
            Call(0, &["PUBLISH", "c", "nobody"]),
            Call(1, &["PSUBSCRIBE", "a*"]),
            Call(0, &["PUBLISH", "a", "twice"]),
            Read(1),
            Read(1),
            Call(0, &["PUBLISH", "abc", "pattern only"]),
            Read(1),
            // Subscribed mode in RESP2: only a few commands are allowed.
            Call(1, &["GET", "k"]),
            Call(1, &["CONFIG", "GET", "maxmemory"]),
            Call(1, &["MULTI"]),
            Call(1, &["PING"]),
            Call(1, &["PING", "msg"]),
            Call(1, &["SUBSCRIBE"]),
            Call(1, &["NOSUCHCMD"]),
            Call(0, &["PUBSUB", "NUMSUB", "a", "b", "c"]),
            Call(0, &["PUBSUB", "NUMSUB"]),
            Call(0, &["PUBSUB", "NUMPAT"]),
            Unordered(0, &["PUBSUB", "CHANNELS"]),
            Unordered(0, &["PUBSUB", "CHANNELS", "a*"]),
            Call(0, &["PUBSUB", "CHANNELS", "x*"]),
            Call(0, &["PUBSUB", "CHANNELS", "a", "b"]),
            Call(0, &["PUBSUB", "NOSUCH"]),
            Call(0, &["PUBSUB", "HELP"]),
            Call(0, &["PUBSUB"]),
            Call(0, &["PUBSUB", "NUMPAT", "x"]),
            Call(0, &["PUBLISH", "a"]),
            Call(1, &["UNSUBSCRIBE", "a", "zzz"]),
            Read(1),
            Call(1, &["PUNSUBSCRIBE"]),
            Call(1, &["UNSUBSCRIBE"]),
            // Subscribed to nothing: a null channel and a zero count.
            Call(1, &["UNSUBSCRIBE"]),
            Call(1, &["PUNSUBSCRIBE"]),
            Call(1, &["SUNSUBSCRIBE"]),
            Call(1, &["PING"]),
            Call(1, &["GET", "k"]),
            Call(0, &["PUBLISH", "a", "gone"]),
        ],
    );
}

#[test]
fn subscribe_inside_transactions_and_quit() {
    run_clients(
        "multi and quit",
        3,
        &[
            Call(1, &["MULTI"]),
            Call(1, &["SUBSCRIBE", "a"]),
            Call(1, &["PING"]),
            Call(1, &["SET", "k", "v"]),
            Call(1, &["EXEC"]),
            Call(1, &["GET", "k"]),
            Call(1, &["MULTI"]),
            Call(0, &["PUBLISH", "a", "after exec"]),
            Read(1),
            Call(2, &["PSUBSCRIBE", "x*"]),
            Call(2, &["QUIT"]),
            Sleep(100),
            Call(0, &["PUBSUB", "NUMPAT"]),
            Call(0, &["MULTI"]),
            Call(0, &["PUBLISH", "a", "in multi"]),
            Call(0, &["EXEC"]),
            Read(1),
        ],
    );
}

#[test]
fn resp3_pushes_and_normal_commands() {
    run_clients(
        "resp3",
        2,
        &[
            Quiet(1, &["HELLO", "3"]),
            Send(1, &["SUBSCRIBE", "a", "b"]),
            Read(1),
            Read(1),
            Call(1, &["SET", "k", "v"]),
            Call(1, &["GET", "k"]),
            Call(1, &["PING"]),
            Call(0, &["PUBLISH", "a", "m1"]),
            Read(1),
            // A client's own message comes before its PUBLISH reply.
            Call(1, &["PUBLISH", "b", "self"]),
            Read(1),
            Call(1, &["PSUBSCRIBE", "*"]),
            Call(0, &["PUBLISH", "b", "m2"]),
            Read(1),
            Read(1),
            Call(1, &["UNSUBSCRIBE", "a"]),
            // Unsubscribing from all (order of several is unspecified in Redis).
            Call(1, &["UNSUBSCRIBE"]),
            Call(1, &["PUNSUBSCRIBE", "*"]),
            Call(1, &["UNSUBSCRIBE"]),
        ],
    );
}

#[test]
fn resp2_subscriber_of_resp3_publisher_and_back() {
    run_clients(
        "mixed protocols",
        3,
        &[
            Quiet(2, &["HELLO", "3"]),
            Call(1, &["SUBSCRIBE", "ch"]),
            Call(2, &["SUBSCRIBE", "ch"]),
            Call(0, &["PUBLISH", "ch", "to both"]),
            Read(1),
            Read(2),
            Call(2, &["PUBLISH", "ch", "from resp3"]),
            Read(2),
            Read(1),
            Call(0, &["PUBSUB", "NUMSUB", "ch"]),
        ],
    );
}

#[test]
fn client_reply_off_still_gets_confirmations_and_messages() {
    run_clients(
        "reply off",
        2,
        &[
            Quiet(1, &["HELLO", "3"]),
            Send(1, &["CLIENT", "REPLY", "OFF"]),
            Send(1, &["PING"]),
            Send(1, &["SUBSCRIBE", "channel"]),
            Read(1),
            Send(1, &["PSUBSCRIBE", "ch*"]),
            Read(1),
            Call(0, &["PUBLISH", "channel", "hello"]),
            Read(1),
            Read(1),
            Send(1, &["UNSUBSCRIBE", "channel"]),
            Read(1),
            Send(1, &["CLIENT", "REPLY", "ON"]),
            Read(1),
        ],
    );
}

#[test]
fn reset_and_disconnect_unsubscribe() {
    run_clients(
        "reset/disconnect",
        3,
        &[
            Call(1, &["SUBSCRIBE", "a"]),
            Call(1, &["PSUBSCRIBE", "p*"]),
            Call(1, &["RESET"]),
            Call(0, &["PUBLISH", "a", "x"]),
            Call(0, &["PUBLISH", "pq", "x"]),
            Call(1, &["GET", "k"]),
            Call(2, &["SUBSCRIBE", "b"]),
            Call(0, &["PUBSUB", "NUMSUB", "a", "b"]),
            Close(2),
            Sleep(200),
            Call(0, &["PUBSUB", "NUMSUB", "b"]),
            Call(0, &["PUBLISH", "b", "x"]),
            Call(0, &["PUBSUB", "NUMPAT"]),
        ],
    );
}

#[test]
fn shard_channels() {
    run_clients(
        "shard channels",
        3,
        &[
            Call(1, &["SSUBSCRIBE", "s1"]),
            Send(1, &["SSUBSCRIBE", "s2", "s3"]),
            Read(1),
            Read(1),
            Call(2, &["PSUBSCRIBE", "*"]),
            Call(0, &["SPUBLISH", "s1", "hello"]),
            Read(1),
            // PUBLISH does not reach shard subscribers, SPUBLISH no pattern subscribers.
            Call(0, &["PUBLISH", "s1", "plain"]),
            Read(2),
            Call(0, &["SPUBLISH", "nobody", "x"]),
            Call(0, &["PUBSUB", "SHARDNUMSUB", "s1", "s9"]),
            Unordered(0, &["PUBSUB", "SHARDCHANNELS"]),
            Call(0, &["PUBSUB", "SHARDCHANNELS", "s1"]),
            Call(0, &["PUBSUB", "CHANNELS"]),
            Call(1, &["GET", "k"]),
            Call(1, &["SUNSUBSCRIBE", "s1"]),
            Call(1, &["SUNSUBSCRIBE", "s2"]),
            Call(1, &["SUNSUBSCRIBE"]),
            Call(1, &["SUNSUBSCRIBE"]),
            Call(0, &["SPUBLISH", "s2", "gone"]),
        ],
    );
}

/// Subscribes connection 1 to every notification (and the sentinel), enables `flags`, runs
/// `commands` on connection 0, and records the notifications connection 1 received.
fn notifications(name: &str, flags: &'static str, commands: &[Act]) {
    let mut script = vec![
        Call(1, &["PSUBSCRIBE", "__key*__:*"]),
        Call(1, &["SUBSCRIBE", "sentinel"]),
        Call(0, Box::leak(Box::new(["CONFIG", "SET", "notify-keyspace-events", flags]))),
    ];
    for act in commands {
        script.push(match act {
            Call(i, args) => Call(*i, args),
            Quiet(i, args) => Quiet(*i, args),
            Sleep(ms) => Sleep(*ms),
            _ => unreachable!("only calls in notification scripts"),
        });
    }
    script.push(Drain(1));
    run_clients(name, 2, &script);
}

#[test]
fn notifications_strings_and_generic() {
    notifications(
        "strings",
        "KEA",
        &[
            Call(0, &["SET", "s", "1"]),
            Call(0, &["SET", "s", "2", "EX", "100"]),
            Call(0, &["SET", "s", "3", "NX"]),
            Call(0, &["SETNX", "s2", "x"]),
            Call(0, &["SETEX", "s3", "100", "x"]),
            Call(0, &["PSETEX", "s4", "100000", "x"]),
            Call(0, &["GETSET", "s", "4"]),
            Call(0, &["INCR", "n"]),
            Call(0, &["DECRBY", "n", "5"]),
            Call(0, &["INCRBYFLOAT", "n", "1.5"]),
            Call(0, &["APPEND", "s", "tail"]),
            Call(0, &["SETRANGE", "s", "1", "xx"]),
            Call(0, &["SETRANGE", "s", "1", ""]),
            Call(0, &["SETRANGE", "new", "3", "abc"]),
            Call(0, &["MSET", "m1", "a", "m2", "b"]),
            Call(0, &["MSETNX", "m1", "a", "m3", "b"]),
            Call(0, &["MSETNX", "m4", "a", "m5", "b"]),
            Call(0, &["GETEX", "m4", "EX", "100"]),
            Call(0, &["GETEX", "m4", "PERSIST"]),
            Call(0, &["GETEX", "m4", "PERSIST"]),
            Call(0, &["GETEX", "m5", "PXAT", "1"]),
            Call(0, &["GETDEL", "m3"]),
            Call(0, &["GETDEL", "m3"]),
            Call(0, &["EXPIRE", "m1", "100"]),
            Call(0, &["EXPIRE", "m1", "100", "NX"]),
            Call(0, &["PEXPIREAT", "m1", "99999999999999"]),
            Call(0, &["PERSIST", "m1"]),
            Call(0, &["PERSIST", "m1"]),
            Call(0, &["EXPIRE", "m2", "-1"]),
            Call(0, &["RENAME", "m1", "r1"]),
            Call(0, &["RENAMENX", "r1", "s"]),
            Call(0, &["RENAME", "r1", "r1"]),
            Call(0, &["MOVE", "r1", "3"]),
            Call(0, &["COPY", "s", "c1"]),
            Call(0, &["COPY", "s", "c1", "DB", "2"]),
            Call(0, &["DEL", "s", "nosuch", "c1"]),
            Call(0, &["UNLINK", "s2"]),
            Call(0, &["SETBIT", "b", "7", "1"]),
            Call(0, &["SETBIT", "b", "7", "1"]),
            Call(0, &["BITFIELD", "b", "SET", "u8", "0", "255"]),
            Call(0, &["BITFIELD", "b", "GET", "u8", "0"]),
            Call(0, &["BITOP", "NOT", "b2", "b"]),
            Call(0, &["BITOP", "AND", "b2", "nosuch"]),
            Call(0, &["PFADD", "h", "a", "b"]),
            Call(0, &["PFADD", "h", "a"]),
            Call(0, &["PFMERGE", "h2", "h"]),
            Call(0, &["SELECT", "5"]),
            Call(0, &["SET", "in5", "x"]),
        ],
    );
}

#[test]
fn notifications_lists() {
    notifications(
        "lists",
        "KEA",
        &[
            Call(0, &["RPUSH", "l", "a", "b", "c", "d"]),
            Call(0, &["LPUSH", "l", "z"]),
            Call(0, &["LPUSHX", "nosuch", "x"]),
            Call(0, &["RPUSHX", "l", "e"]),
            Call(0, &["LINSERT", "l", "BEFORE", "a", "x"]),
            Call(0, &["LINSERT", "l", "BEFORE", "nosuch", "x"]),
            Call(0, &["LSET", "l", "0", "y"]),
            Call(0, &["LPOP", "l"]),
            Call(0, &["RPOP", "l", "2"]),
            Call(0, &["LPOP", "l", "0"]),
            Call(0, &["LREM", "l", "0", "x"]),
            Call(0, &["LREM", "l", "0", "nosuch"]),
            Call(0, &["LMOVE", "l", "l2", "LEFT", "RIGHT"]),
            Call(0, &["RPOPLPUSH", "l2", "l2"]),
            Call(0, &["LTRIM", "l", "0", "0"]),
            Call(0, &["LMPOP", "2", "nosuch", "l", "LEFT", "COUNT", "5"]),
            Call(0, &["RPUSH", "t", "1", "2", "3"]),
            Call(0, &["LTRIM", "t", "5", "10"]),
            Call(0, &["RPUSH", "s", "3", "1", "2"]),
            Call(0, &["SORT", "s", "STORE", "sorted"]),
            Call(0, &["SORT", "nosuch", "STORE", "sorted"]),
            Call(0, &["BLPOP", "l2", "0"]),
        ],
    );
}

#[test]
fn notifications_hashes_and_sets() {
    notifications(
        "hashes and sets",
        "KEA",
        &[
            Call(0, &["HSET", "h", "a", "1", "b", "2"]),
            Call(0, &["HSET", "h", "a", "1"]),
            Call(0, &["HMSET", "h", "c", "3"]),
            Call(0, &["HSETNX", "h", "a", "9"]),
            Call(0, &["HSETNX", "h", "d", "4"]),
            Call(0, &["HINCRBY", "h", "a", "5"]),
            Call(0, &["HINCRBYFLOAT", "h", "a", "0.5"]),
            Call(0, &["HDEL", "h", "nosuch"]),
            Call(0, &["HDEL", "h", "a", "b"]),
            Call(0, &["HDEL", "h", "c", "d"]),
            Call(0, &["SADD", "s", "1", "2", "3"]),
            Call(0, &["SADD", "s", "1"]),
            Call(0, &["SREM", "s", "nosuch"]),
            Call(0, &["SREM", "s", "1"]),
            Call(0, &["SMOVE", "s", "s2", "2"]),
            Call(0, &["SMOVE", "s", "s2", "nosuch"]),
            Call(0, &["SADD", "s2", "3"]),
            Call(0, &["SMOVE", "s", "s2", "3"]),
            Call(0, &["SADD", "p", "a"]),
            Call(0, &["SPOP", "p"]),
            Call(0, &["SADD", "p", "a", "b", "c"]),
            Call(0, &["SPOP", "p", "0"]),
            Quiet(0, &["SPOP", "p", "1"]),
            Quiet(0, &["SPOP", "p", "5"]),
            Call(0, &["SINTERSTORE", "d", "s2", "s2"]),
            Call(0, &["SUNIONSTORE", "d", "s2", "nosuch"]),
            Call(0, &["SDIFFSTORE", "d", "s2", "s2"]),
            Call(0, &["SDIFFSTORE", "d", "s2", "s2"]),
            Call(0, &["SINTERSTORE", "d", "nosuch", "s2"]),
        ],
    );
}

#[test]
fn notifications_sorted_sets_and_geo() {
    notifications(
        "zsets",
        "KEA",
        &[
            Call(0, &["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"]),
            Call(0, &["ZADD", "z", "1", "a"]),
            Call(0, &["ZADD", "z", "INCR", "5", "a"]),
            Call(0, &["ZINCRBY", "z", "1", "b"]),
            Call(0, &["ZREM", "z", "nosuch"]),
            Call(0, &["ZREM", "z", "a"]),
            Call(0, &["ZREMRANGEBYSCORE", "z", "100", "200"]),
            Call(0, &["ZREMRANGEBYSCORE", "z", "3", "3"]),
            Call(0, &["ZADD", "z", "1", "x", "1", "y"]),
            Call(0, &["ZADD", "lx", "0", "x", "0", "y"]),
            Call(0, &["ZREMRANGEBYLEX", "lx", "[x", "[x"]),
            Call(0, &["ZREMRANGEBYLEX", "lx", "-", "+"]),
            Call(0, &["ZREMRANGEBYRANK", "z", "0", "0"]),
            Call(0, &["ZPOPMIN", "z"]),
            Call(0, &["ZPOPMAX", "z", "0"]),
            Call(0, &["ZADD", "z", "1", "a", "2", "b", "3", "c"]),
            Call(0, &["ZUNIONSTORE", "u", "1", "z"]),
            Call(0, &["ZINTERSTORE", "u", "2", "z", "nosuch"]),
            Call(0, &["ZDIFFSTORE", "u", "1", "z"]),
            Call(0, &["ZRANGESTORE", "r", "z", "0", "-1"]),
            Call(0, &["ZRANGESTORE", "r", "z", "5", "6"]),
            Call(0, &["ZMPOP", "1", "z", "MIN", "COUNT", "10"]),
            Call(0, &["BZPOPMIN", "u", "0"]),
            Call(0, &["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"]),
            Call(0, &["GEOADD", "g", "13.361389", "38.115556", "Palermo"]),
            Call(0, &["GEOSEARCHSTORE", "gs", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "500", "km", "ASC"]),
            Call(0, &["GEORADIUS", "g", "15", "37", "300", "km", "STORE", "gr"]),
            Call(0, &["GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"]),
            Call(0, &["GEOSEARCHSTORE", "gs", "nosuch", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"]),
        ],
    );
}

#[test]
fn notifications_streams() {
    notifications(
        "streams",
        "KEA",
        &[
            Call(0, &["XADD", "st", "1-1", "f", "v"]),
            Call(0, &["XADD", "st", "MAXLEN", "1", "2-1", "f", "v"]),
            Call(0, &["XADD", "st", "3-1", "f", "v"]),
            Call(0, &["XDEL", "st", "3-1", "9-9"]),
            Call(0, &["XDEL", "st", "9-9"]),
            Call(0, &["XADD", "st", "4-1", "f", "v"]),
            Call(0, &["XTRIM", "st", "MAXLEN", "0"]),
            Call(0, &["XTRIM", "st", "MAXLEN", "0"]),
            Call(0, &["XSETID", "st", "10-0"]),
            Call(0, &["XGROUP", "CREATE", "st", "g", "$"]),
            Call(0, &["XGROUP", "CREATE", "st2", "g", "$", "MKSTREAM"]),
            Call(0, &["XGROUP", "SETID", "st", "g", "0"]),
            Call(0, &["XGROUP", "CREATECONSUMER", "st", "g", "c"]),
            Call(0, &["XGROUP", "CREATECONSUMER", "st", "g", "c"]),
            Call(0, &["XGROUP", "DELCONSUMER", "st", "g", "c"]),
            Call(0, &["XGROUP", "DESTROY", "st", "g"]),
            Call(0, &["XGROUP", "DESTROY", "st", "g"]),
            Call(0, &["DEL", "st", "st2"]),
        ],
    );
}

/// Consumers created implicitly (XREADGROUP, XCLAIM, XAUTOCLAIM) are notified too.
#[test]
fn notifications_stream_consumers_created_implicitly() {
    notifications(
        "stream consumers",
        "KEA",
        &[
            Call(0, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]),
            Call(0, &["XGROUP", "CREATECONSUMER", "s", "g", "Bob"]),
            Call(0, &["XADD", "s", "1-1", "f", "A"]),
            Call(0, &["XREADGROUP", "GROUP", "g", "Alice", "STREAMS", "s", ">"]),
            Call(0, &["XREADGROUP", "GROUP", "g", "Alice", "STREAMS", "s", ">"]),
            Call(0, &["XREADGROUP", "GROUP", "g", "Carol", "STREAMS", "s", "0"]),
            Call(0, &["XCLAIM", "s", "g", "Mike", "0", "1-1", "FORCE"]),
            Call(0, &["XCLAIM", "s", "g", "Mike", "0", "1-1"]),
            Call(0, &["XGROUP", "DELCONSUMER", "s", "g", "Lee"]),
            Call(0, &["XAUTOCLAIM", "s", "g", "Bob", "0", "0"]),
            Call(0, &["XAUTOCLAIM", "s", "g", "Zed", "0", "0"]),
            Call(0, &["XAUTOCLAIM", "s", "g", "Yan", "999999999", "0"]),
            Call(0, &["XGROUP", "DELCONSUMER", "s", "g", "Bob"]),
        ],
    );
}

#[test]
fn notifications_masks() {
    let commands = [
        Call(0, &["SET", "s", "1"]),
        Call(0, &["EXPIRE", "s", "100"]),
        Call(0, &["RPUSH", "l", "a"]),
        Call(0, &["SADD", "st", "a"]),
        Call(0, &["HSET", "h", "f", "v"]),
        Call(0, &["ZADD", "z", "1", "a"]),
        Call(0, &["DEL", "s", "l", "st", "h", "z"]),
    ];
    for flags in ["Kl", "E$", "Kgz", "Esh", "KEn", "K", "E", "gl"] {
        let mut acts = Vec::new();
        for c in &commands {
            if let Call(i, args) = c {
                acts.push(Call(*i, args));
            }
        }
        notifications(flags, flags, &acts);
    }
}

#[test]
fn notifications_new_and_expired() {
    notifications(
        "new and expired",
        "KEA",
        &[
            Call(0, &["CONFIG", "SET", "notify-keyspace-events", "KEAn"]),
            Call(0, &["SET", "a", "1"]),
            Call(0, &["SET", "a", "2"]),
            Call(0, &["RPUSH", "l", "x"]),
            Call(0, &["RPUSH", "l", "y"]),
            Call(0, &["SADD", "s", "m"]),
            Call(0, &["COPY", "a", "c"]),
            Call(0, &["COPY", "a", "c", "REPLACE"]),
            Call(0, &["RENAME", "c", "l"]),
            Call(0, &["RENAME", "l", "fresh"]),
            Call(0, &["MOVE", "fresh", "1"]),
            Call(0, &["PSETEX", "e", "50", "v"]),
            Call(0, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]),
            Sleep(120),
            Call(0, &["GET", "e"]),
            Call(0, &["PSETEX", "e2", "50", "v"]),
            Sleep(120),
            // A write on an expired key: the expiry first, then the new key.
            Call(0, &["SET", "e2", "again"]),
            Call(0, &["DEBUG", "SET-ACTIVE-EXPIRE", "1"]),
            Call(0, &["PSETEX", "e3", "50", "v"]),
            Sleep(400),
        ],
    );
}

#[test]
fn notification_config_errors() {
    run_clients(
        "config",
        1,
        &[
            Call(0, &["CONFIG", "SET", "notify-keyspace-events", "KEw"]),
            Call(0, &["CONFIG", "SET", "notify-keyspace-events", "gKE"]),
            Call(0, &["CONFIG", "GET", "notify-keyspace-events"]),
            Call(0, &["CONFIG", "SET", "notify-keyspace-events", "$lshzxeKEtmdn"]),
            Call(0, &["CONFIG", "GET", "notify-keyspace-events"]),
            Call(0, &["CONFIG", "SET", "notify-keyspace-events", "KA"]),
            Call(0, &["CONFIG", "GET", "notify-keyspace-events"]),
            Call(0, &["CONFIG", "SET", "notify-keyspace-events", ""]),
            Call(0, &["CONFIG", "GET", "notify-keyspace-events"]),
        ],
    );
}

#[test]
fn notifications_inside_transactions() {
    notifications(
        "multi",
        "KEA",
        &[
            Call(0, &["MULTI"]),
            Call(0, &["SET", "a", "1"]),
            Call(0, &["LPUSH", "l", "x"]),
            Call(0, &["DEL", "a"]),
            Call(0, &["EXEC"]),
        ],
    );
}

/// A subscriber that stops reading is disconnected once its pending output passes the
/// `client-output-buffer-limit pubsub` hard limit, so memory stays bounded (quince only:
/// when exactly the kernel's socket buffers fill differs between servers).
#[test]
fn slow_subscriber_hits_the_output_buffer_limit() {
    let server = quince_test_util::start_quince(QUINCE, &[]);
    let mut publisher = server.client();
    let ok = publisher.call(&["CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 512kb 60"]);
    assert_eq!(ok, b"+OK\r\n");
    let mut slow = server.client();
    slow.call(&["SUBSCRIBE", "firehose"]);
    let mut reader = server.client();
    reader.call(&["SUBSCRIBE", "quiet"]);
    let payload = "x".repeat(100 * 1024);
    let mut gone = false;
    for _ in 0..400 {
        publisher.call(&["PUBLISH", "firehose", payload.as_str()]);
        if publisher.call(&["PUBSUB", "NUMSUB", "firehose"]).ends_with(b":0\r\n") {
            gone = true;
            break;
        }
    }
    assert!(gone, "the slow subscriber was never disconnected");
    assert!(slow.read_to_close().len() < 40 * 1024 * 1024);
    // Others are unaffected.
    assert_eq!(publisher.call(&["PUBLISH", "quiet", "hi"]), b":1\r\n");
    assert_eq!(reader.read_reply(), b"*3\r\n$7\r\nmessage\r\n$5\r\nquiet\r\n$2\r\nhi\r\n");
}

#[test]
fn command_info_and_docs() {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    let names = [
        "subscribe",
        "unsubscribe",
        "psubscribe",
        "punsubscribe",
        "ssubscribe",
        "sunsubscribe",
        "publish",
        "spublish",
        // Not the PUBSUB container itself: Redis lists its subcommands in a per-process
        // random (hash seed) order.
        "pubsub|channels",
        "pubsub|numsub",
        "pubsub|numpat",
        "pubsub|shardchannels",
        "pubsub|shardnumsub",
        "pubsub|help",
    ];
    let mut steps = Vec::new();
    for name in names {
        steps.push(quince_test_util::Step::cmd(&["COMMAND", "INFO", name]));
        steps.push(quince_test_util::Step::cmd(&["COMMAND", "DOCS", name]));
    }
    steps.push(quince_test_util::Step::cmd(&["COMMAND", "GETKEYS", "SSUBSCRIBE", "a", "b"]));
    steps.push(quince_test_util::Step::cmd(&["COMMAND", "GETKEYS", "SPUBLISH", "a", "m"]));
    steps.push(quince_test_util::Step::cmd(&["COMMAND", "GETKEYS", "PUBLISH", "a", "m"]));
    diff.run("command info", &steps);
}

/// CLIENT INFO's flags and subscription counts, and INFO's pubsub counters, as both servers
/// report them (only those fields: the rest names addresses and ids).
#[test]
fn client_info_and_info_stats() {
    fn fields(server: &ServerProcess) -> Vec<String> {
        let pick = |text: &[u8], names: &[&str]| -> String {
            let text = String::from_utf8_lossy(text).into_owned();
            let words = text.split([' ', '\r', '\n']);
            let wanted: Vec<&str> = words.filter(|w| names.iter().any(|n| w.starts_with(n))).collect();
            wanted.join(" ")
        };
        let client_fields = ["flags=", "sub=", "psub=", "ssub="];
        let info_fields = ["pubsub_channels:", "pubsub_patterns:", "pubsubshard_channels:"];
        let mut out = Vec::new();
        let mut other = server.client();
        let mut sub = server.client();
        sub.call(&["HELLO", "3"]);
        out.push(pick(&sub.call(&["CLIENT", "INFO"]), &client_fields));
        sub.call(&["SUBSCRIBE", "a"]);
        sub.call(&["SUBSCRIBE", "b"]);
        sub.call(&["PSUBSCRIBE", "p*"]);
        sub.call(&["SSUBSCRIBE", "s"]);
        other.call(&["PSUBSCRIBE", "p*", "q*"]);
        out.push(pick(&sub.call(&["CLIENT", "INFO"]), &client_fields));
        out.push(pick(&other.call(&["INFO", "stats"]), &info_fields));
        // A RESP2 subscriber may not run CLIENT; a fresh client kills both subscribers.
        out.push(String::from_utf8_lossy(&other.call(&["CLIENT", "LIST"])).into_owned());
        let mut fresh = server.client();
        out.push(String::from_utf8_lossy(&fresh.call(&["CLIENT", "KILL", "TYPE", "pubsub"])).into_owned());
        std::thread::sleep(Duration::from_millis(200));
        out.push(pick(&fresh.call(&["INFO", "stats"]), &info_fields));
        out
    }
    let Some(diff) = Differential::start(QUINCE) else { return };
    assert_eq!(fields(&diff.quince), fields(&diff.redis));
}
