//! `keymiss` keyspace events (class `m`) against redis-server 7.0.15: the same events, in the
//! same order, for reads of missing keys across every family, and none for writes.

use quince_test_util::{Differential, RawClient};

/// Runs `commands` on a fresh client and returns every message a `*` pattern subscriber
/// received, up to a sentinel PUBLISH.
fn events(port: u16, commands: &[&[&str]]) -> Vec<String> {
    let mut client = RawClient::connect(port);
    client.call(&["FLUSHALL"]);
    client.call(&["CONFIG", "SET", "notify-keyspace-events", "KEm"]);
    let mut sub = RawClient::connect(port);
    sub.call(&["PSUBSCRIBE", "*"]);
    for command in commands {
        client.call(command);
    }
    client.call(&["PUBLISH", "sentinel", "end"]);
    let mut seen = Vec::new();
    loop {
        let message = String::from_utf8_lossy(&sub.read_reply()).into_owned();
        if message.contains("sentinel") {
            break;
        }
        seen.push(message);
    }
    client.call(&["CONFIG", "SET", "notify-keyspace-events", ""]);
    seen
}

#[test]
fn keymiss_events_match_redis() {
    let Some(diff) = Differential::start(env!("CARGO_BIN_EXE_quince-server")) else { return };
    let commands: &[&[&str]] = &[
        &["GET", "s"],
        &["MGET", "a", "b"],
        &["SET", "present", "1"],
        &["GET", "present"],
        &["STRLEN", "s"],
        &["GETRANGE", "s", "0", "1"],
        &["HGET", "h", "f"],
        &["HGETALL", "h"],
        &["LRANGE", "l", "0", "-1"],
        &["LINDEX", "l", "0"],
        &["SMEMBERS", "set"],
        &["SISMEMBER", "set", "m"],
        &["ZSCORE", "z", "m"],
        &["ZRANGE", "z", "0", "-1"],
        &["XRANGE", "x", "-", "+"],
        &["XLEN", "x"],
        &["SORT", "l"],
        &["ZUNIONSTORE", "dest", "2", "z1", "z2"],
        &["GEOPOS", "g", "m"],
        &["SET", "new", "1"],
        &["LPUSH", "newlist", "a"],
        &["DEL", "gone"],
        &["INCR", "counter"],
    ];
    let quince = events(diff.quince.port, commands);
    let redis = events(diff.redis.port, commands);
    assert!(!redis.is_empty());
    assert_eq!(quince, redis);
}
