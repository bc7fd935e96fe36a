//! Blocking pops under concurrency: pushers, blocked poppers on several worker threads and
//! clients that vanish while blocked. Every pushed element must end up delivered exactly
//! once or still in a list; only a client that disconnected can take an element with it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use quince_test_util::{start_quince, RawClient};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

/// The elements of a `*2 key value` BLPOP/BRPOP reply (None for a timeout).
fn popped_value(reply: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(reply);
    if text.starts_with("*-1") || text.starts_with("_") {
        return None;
    }
    let lines: Vec<&str> = text.split("\r\n").collect();
    assert!(lines[0] == "*2", "unexpected reply {text:?}");
    Some(lines[4].to_string())
}

#[test]
fn pushed_elements_are_delivered_exactly_once() {
    let server = start_quince(QUINCE, &["--threads", "2"]);
    let port = server.port;
    let keys = ["{s}a", "{s}b", "{x}c"];
    let pushed_total = 3000;
    let done = Arc::new(AtomicBool::new(false));
    let received = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut poppers = Vec::new();
    for p in 0..6 {
        let (done, received) = (done.clone(), received.clone());
        poppers.push(thread::spawn(move || {
            let mut c = RawClient::connect(port);
            let cmd = if p % 2 == 0 { "BLPOP" } else { "BRPOP" };
            while !done.load(Ordering::SeqCst) {
                let key = keys[p % keys.len()];
                let other = keys[(p + 1) % keys.len()];
                // Keys of both shards in one wait when they share a hash tag.
                let reply = if key.starts_with("{s}") && other.starts_with("{s}") {
                    c.call(&[cmd, key, other, "0.05"])
                } else {
                    c.call(&[cmd, key, "0.05"])
                };
                if let Some(v) = popped_value(&reply) {
                    received.lock().unwrap().push(v);
                }
            }
        }));
    }
    // Clients that block and then disconnect at once, racing the pushes.
    let quitters = thread::spawn(move || {
        for i in 0..200 {
            let mut c = RawClient::connect(port);
            c.send(&["BLPOP", keys[i % keys.len()], "0"]);
            thread::sleep(Duration::from_micros(200 * (i as u64 % 5)));
            drop(c);
        }
    });
    let mut pushers = Vec::new();
    for t in 0..3 {
        pushers.push(thread::spawn(move || {
            let mut c = RawClient::connect(port);
            for i in 0..pushed_total / 3 {
                let key = keys[(i + t) % keys.len()];
                let reply = c.call(&["RPUSH", key, &format!("{t}-{i}")]);
                assert!(reply.starts_with(b":"), "{:?}", String::from_utf8_lossy(&reply));
            }
        }));
    }
    for p in pushers {
        p.join().unwrap();
    }
    quitters.join().unwrap();
    thread::sleep(Duration::from_millis(300));
    done.store(true, Ordering::SeqCst);
    for p in poppers {
        p.join().unwrap();
    }
    let mut c = RawClient::connect(port);
    let mut remaining = Vec::new();
    for key in keys {
        loop {
            let reply = c.call(&["LPOP", key]);
            if reply.starts_with(b"$-1") {
                break;
            }
            let text = String::from_utf8_lossy(&reply).to_string();
            remaining.push(text.split("\r\n").nth(1).unwrap().to_string());
        }
    }
    let received = received.lock().unwrap().clone();
    let mut seen = HashSet::new();
    for v in received.iter().chain(&remaining) {
        assert!(seen.insert(v.clone()), "element {v} delivered twice");
    }
    // At most one element per vanished client may have gone with it.
    let missing = pushed_total - seen.len();
    eprintln!("received {}, remaining {}, taken by vanished clients {missing}", received.len(), remaining.len());
    assert!(missing <= 200, "{missing} elements lost");
    let info = c.call(&["INFO", "clients"]);
    assert!(info.windows(18).any(|w| w == b"blocked_clients:0\r"), "{}", String::from_utf8_lossy(&info));
}
