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
