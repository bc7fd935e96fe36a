//! Lazy freeing: UNLINK, FLUSHDB/FLUSHALL ASYNC and the lazyfree-lazy-user-* directives hand
//! big values (and whole databases) to the background thread; INFO counts them as Redis does
//! (`lazyfree_pending_objects`, `lazyfreed_objects`, reset by CONFIG RESETSTAT).

use std::time::{Duration, Instant};

use quince_test_util::{start_quince, RawClient};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn lazyfreed(c: &mut RawClient) -> u64 {
    // Wait for the background thread to finish what it was handed.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info = String::from_utf8_lossy(&c.call(&["INFO", "memory"])).into_owned();
        let field = |name: &str| -> u64 {
            info.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse().ok()).unwrap()
        };
        if field("lazyfree_pending_objects:") == 0 {
            return field("lazyfreed_objects:");
        }
        assert!(Instant::now() < deadline, "lazy freeing did not finish");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn big_values_and_whole_databases_are_freed_in_the_background() {
    let server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    // A big stream with a consumer group and pending entries (Redis's own test's shape).
    c.call(&["CONFIG", "SET", "stream-node-max-entries", "5"]);
    for i in 0..1000 {
        c.call(&["XADD", "stream", "*", "foo", &i.to_string()]);
    }
    c.call(&["XGROUP", "CREATE", "stream", "g", "0"]);
    c.call(&["XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "stream", ">"]);
    assert_eq!(c.call(&["UNLINK", "stream"]), b":1\r\n");
    assert_eq!(lazyfreed(&mut c), 1);

    // Small values are freed at once, uncounted; DEL frees at once unless told otherwise.
    c.call(&["SET", "small", "v"]);
    c.call(&["RPUSH", "short", "a", "b"]);
    assert_eq!(c.call(&["UNLINK", "small", "short", "missing"]), b":2\r\n");
    let big: Vec<String> = (0..200).map(|i| i.to_string()).collect();
    let mut sadd = vec!["SADD".to_string(), "bigset".to_string()];
    sadd.extend(big.iter().map(|m| format!("m{m}")));
    c.call(&sadd);
    assert_eq!(c.call(&["DEL", "bigset"]), b":1\r\n");
    assert_eq!(lazyfreed(&mut c), 1);
    c.call(&sadd);
    c.call(&["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"]);
    assert_eq!(c.call(&["DEL", "bigset"]), b":1\r\n");
    assert_eq!(lazyfreed(&mut c), 2);

    // FLUSHALL ASYNC counts every key; SYNC none; CONFIG RESETSTAT starts over.
    assert_eq!(c.call(&["CONFIG", "RESETSTAT"]), b"+OK\r\n");
    assert_eq!(lazyfreed(&mut c), 0);
    for i in 0..50 {
        c.call(&["SET", &format!("k{i}"), "v"]);
    }
    assert_eq!(c.call(&["FLUSHALL", "ASYNC"]), b"+OK\r\n");
    assert_eq!(c.call(&["DBSIZE"]), b":0\r\n");
    assert_eq!(lazyfreed(&mut c), 50);
    c.call(&["SET", "k", "v"]);
    assert_eq!(c.call(&["FLUSHDB", "SYNC"]), b"+OK\r\n");
    assert_eq!(lazyfreed(&mut c), 50);
    c.call(&["CONFIG", "SET", "lazyfree-lazy-user-flush", "yes"]);
    c.call(&["SET", "k", "v"]);
    assert_eq!(c.call(&["FLUSHDB"]), b"+OK\r\n");
    assert_eq!(lazyfreed(&mut c), 51);
}

/// `lazyfree-lazy-server-del`, `-expire` and `-eviction`: big values removed by an
/// overwrite (SET, RENAME), by expiry (on access, by the active cycle, by an EXPIRE in the
/// past) or by eviction go to the background thread when their switch is on, and are freed
/// at once (uncounted) when it is off.
#[test]
fn server_deletions_expiry_and_eviction_free_in_the_background_when_switched_on() {
    let server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    let members: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
    let big = |c: &mut RawClient, key: &str| {
        let mut sadd = vec!["SADD", key];
        sadd.extend(members.iter().map(String::as_str));
        assert_eq!(c.call(&sadd), b":200\r\n");
    };
    let wait_gone = |c: &mut RawClient, key: &str| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while c.call(&["DBSIZE"]) != b":0\r\n" {
            assert!(Instant::now() < deadline, "{key} never expired");
            std::thread::sleep(Duration::from_millis(10));
        }
    };

    // All off: freed at once.
    big(&mut c, "s");
    c.call(&["SET", "s", "x"]);
    big(&mut c, "t");
    c.call(&["PEXPIRE", "t", "1"]);
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(c.call(&["EXISTS", "t"]), b":0\r\n");
    assert_eq!(lazyfreed(&mut c), 0);

    c.call(&["CONFIG", "SET", "lazyfree-lazy-server-del", "yes"]);
    big(&mut c, "s2");
    assert_eq!(c.call(&["SET", "s2", "x"]), b"+OK\r\n");
    assert_eq!(lazyfreed(&mut c), 1, "an overwritten big value");
    big(&mut c, "s3");
    assert_eq!(c.call(&["RENAME", "s", "s3"]), b"+OK\r\n");
    assert_eq!(lazyfreed(&mut c), 2, "RENAME's old destination");
    assert_eq!(c.call(&["FLUSHALL"]), b"+OK\r\n");

    c.call(&["CONFIG", "SET", "lazyfree-lazy-expire", "yes"]);
    big(&mut c, "e1");
    c.call(&["PEXPIRE", "e1", "1"]);
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(c.call(&["EXISTS", "e1"]), b":0\r\n");
    assert_eq!(lazyfreed(&mut c), 3, "expired on access");
    big(&mut c, "e2");
    c.call(&["PEXPIRE", "e2", "1"]);
    wait_gone(&mut c, "e2");
    assert_eq!(lazyfreed(&mut c), 4, "expired by the active cycle");
    big(&mut c, "e3");
    assert_eq!(c.call(&["EXPIRE", "e3", "-1"]), b":1\r\n");
    assert_eq!(lazyfreed(&mut c), 5, "an EXPIRE in the past");

    // Eviction: the only key is the big set; a limit just below what is used evicts it.
    for lazy in ["no", "yes"] {
        c.call(&["CONFIG", "SET", "lazyfree-lazy-eviction", lazy]);
        big(&mut c, "v");
        let before = lazyfreed(&mut c);
        let info = String::from_utf8_lossy(&c.call(&["INFO", "memory"])).into_owned();
        let used: u64 = info.lines().find_map(|l| l.strip_prefix("used_memory:")).unwrap().trim().parse().unwrap();
        c.call(&["CONFIG", "SET", "maxmemory-policy", "allkeys-random"]);
        c.call(&["CONFIG", "SET", "maxmemory", &(used - 2_000).to_string()]);
        c.call(&["SET", "x", "y"]);
        c.call(&["CONFIG", "SET", "maxmemory", "0"]);
        assert_eq!(c.call(&["EXISTS", "v"]), b":0\r\n", "evicted (lazyfree-lazy-eviction {lazy})");
        assert_eq!(lazyfreed(&mut c), before + u64::from(lazy == "yes"), "lazyfree-lazy-eviction {lazy}");
        c.call(&["FLUSHALL"]);
    }
}
