//! RESTORE's side effects in-process: keyspace notifications (`restore`, and `del` when a
//! replaced key's new TTL is already past), the dirty counter, and WATCH.

mod common;

use common::{Local, Run};

fn payload(q: &mut Local) -> Vec<u8> {
    q.cmd(&["SET", "seed", "value"]);
    let reply = q.cmd(&["DUMP", "seed"]);
    let common::R::Bulk(Some(p)) = common::parse(&reply) else { panic!("DUMP") };
    p
}

#[test]
fn notifications_dirty_and_watch() {
    let mut q = Local::new();
    let p = payload(&mut q);
    q.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEg"]);
    let mut sub = q.engine.new_client();
    let mut out = Vec::new();
    let mut enc = quince_resp::Encoder::new(&mut out, quince_resp::Protocol::Resp2);
    q.engine.execute(&mut sub, &[b"PSUBSCRIBE", b"__key*__:*"], &mut enc);

    let dirty = q.engine.dirty();
    assert_eq!(q.run(&[b"RESTORE", b"k", b"0", &p]), b"+OK\r\n");
    assert_eq!(q.engine.dirty(), dirty + 1);
    let pushed = String::from_utf8_lossy(&sub.handle.take_pushed()).into_owned();
    assert!(pushed.contains("__keyspace@0__:k") && pushed.contains("restore"), "{pushed}");
    assert!(pushed.contains("__keyevent@0__:restore"), "{pushed}");

    // REPLACE counts one change; a TTL already past deletes the old key with a `del` event.
    let dirty = q.engine.dirty();
    assert_eq!(q.run(&[b"RESTORE", b"k", b"0", &p, b"REPLACE"]), b"+OK\r\n");
    assert_eq!(q.engine.dirty(), dirty + 1);
    sub.handle.take_pushed();
    assert_eq!(q.run(&[b"RESTORE", b"k", b"1", &p, b"REPLACE", b"ABSTTL"]), b"+OK\r\n");
    assert_eq!(q.cmd(&["EXISTS", "k"]), b":0\r\n");
    let pushed = String::from_utf8_lossy(&sub.handle.take_pushed()).into_owned();
    assert!(pushed.contains("__keyevent@0__:del") && !pushed.contains("restore"), "{pushed}");
    // A past TTL without a key to replace changes nothing.
    let dirty = q.engine.dirty();
    assert_eq!(q.run(&[b"RESTORE", b"gone", b"1", &p, b"ABSTTL"]), b"+OK\r\n");
    assert_eq!(q.engine.dirty(), dirty);

    // RESTORE touches WATCHed keys.
    let mut watcher = q.engine.new_client();
    let engine = q.engine.clone();
    let run = |c: &mut quince_engine::Client, args: &[&[u8]]| {
        let mut out = Vec::new();
        let mut enc = quince_resp::Encoder::new(&mut out, quince_resp::Protocol::Resp2);
        engine.execute(c, args, &mut enc);
        out
    };
    run(&mut watcher, &[b"WATCH", b"w"]);
    assert_eq!(q.run(&[b"RESTORE", b"w", b"0", &p]), b"+OK\r\n");
    run(&mut watcher, &[b"MULTI"]);
    run(&mut watcher, &[b"GET", b"w"]);
    assert_eq!(run(&mut watcher, &[b"EXEC"]), b"*-1\r\n");
}
