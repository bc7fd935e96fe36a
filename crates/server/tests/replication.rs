//! REPLICAOF: quince follows a master — a real redis-server 7.0.15 or another quince — by
//! SYNC: the snapshot replaces its dataset, the stream keeps it equal, clients' writes get
//! READONLY, and REPLICAOF NO ONE makes it a master again.

use std::time::{Duration, Instant};

use quince_test_util::{start_quince, start_redis, RawClient, ServerProcess};

fn text(reply: Vec<u8>) -> String {
    String::from_utf8_lossy(&reply).into_owned()
}

/// Waits until `check` holds on the replica (the link works in the background).
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn follow(master: &ServerProcess, replica: &ServerProcess) {
    let (mut m, mut r) = (master.client(), replica.client());
    m.call(&["FLUSHALL"]);
    m.call(&["SET", "before", "sync"]);
    m.call(&["RPUSH", "list", "a", "b"]);
    m.call(&["SELECT", "2"]);
    m.call(&["HSET", "h", "f", "v"]);
    m.call(&["SELECT", "0"]);
    r.call(&["SET", "replica-only", "gone after the sync"]);
    let port = master.port.to_string();
    assert_eq!(text(r.call(&["REPLICAOF", "127.0.0.1", &port])), "+OK\r\n");
    assert_eq!(text(r.call(&["REPLICAOF", "127.0.0.1", &port])), "+OK Already connected to specified master\r\n");
    eventually("the snapshot", || r.call(&["GET", "before"]) == b"$4\r\nsync\r\n");
    assert_eq!(text(r.call(&["EXISTS", "replica-only"])), ":0\r\n");
    assert_eq!(text(r.call(&["LRANGE", "list", "0", "-1"])), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    // The stream: writes, a transaction, a script, expiry as absolute time.
    m.call(&["SET", "after", "1", "EX", "1000"]);
    m.call(&["MULTI"]);
    m.call(&["INCR", "n"]);
    m.call(&["INCR", "n"]);
    m.call(&["EXEC"]);
    m.call(&["EVAL", "redis.call('rpush', KEYS[1], 'c'); return 1", "1", "list"]);
    eventually("the stream", || r.call(&["LLEN", "list"]) == b":3\r\n");
    assert_eq!(text(r.call(&["GET", "n"])), "$1\r\n2\r\n");
    let ttl: i64 = text(r.call(&["TTL", "after"]))[1..].trim().parse().unwrap();
    assert!((990..=1000).contains(&ttl), "TTL {ttl}");
    r.call(&["SELECT", "2"]);
    assert_eq!(text(r.call(&["HGET", "h", "f"])), "$1\r\nv\r\n");
    r.call(&["SELECT", "0"]);
    assert_eq!(text(r.call(&["SET", "x", "1"])), "-READONLY You can't write against a read only replica.\r\n");
    assert!(text(r.call(&["INFO", "replication"])).contains("role:slave\r\nmaster_host:127.0.0.1"));
    assert_eq!(text(r.call(&["REPLICAOF", "NO", "ONE"])), "+OK\r\n");
    assert_eq!(text(r.call(&["SET", "x", "1"])), "+OK\r\n");
    assert!(text(r.call(&["INFO", "replication"])).contains("role:master"));
    assert_eq!(text(r.call(&["REPLICAOF", "127.0.0.1", "70000"])), "-ERR Invalid master port\r\n");
}

#[test]
fn quince_follows_a_redis_master() {
    let Some(master) = start_redis(&[]) else { return };
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    follow(&master, &replica);
}

#[test]
fn quince_follows_a_quince_master() {
    let master = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    follow(&master, &replica);
}

#[test]
fn a_replica_with_its_link_down_refuses_stale_reads_when_asked() {
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    let mut r = RawClient::connect(replica.port);
    r.call(&["CONFIG", "SET", "replica-serve-stale-data", "no"]);
    // Port 1 on loopback: nothing listens, the link stays down.
    r.call(&["REPLICAOF", "127.0.0.1", "1"]);
    let masterdown = "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n";
    assert_eq!(text(r.call(&["GET", "k"])), masterdown);
    assert!(text(r.call(&["INFO", "replication"])).contains("master_link_status:down"));
    r.call(&["MULTI"]);
    assert_eq!(text(r.call(&["PING"])), masterdown);
    assert_eq!(text(r.call(&["EXEC"])), "-EXECABORT Transaction discarded because of previous errors.\r\n");
    r.call(&["CONFIG", "SET", "replica-serve-stale-data", "yes"]);
    assert_eq!(text(r.call(&["GET", "k"])), "$-1\r\n");
    r.call(&["REPLICAOF", "NO", "ONE"]);
}
