//! `Db::get` runs GET on the engine's fast path when nothing unusual is in force
//! (`quince_engine::fast_read`). Each test does the same on two Dbs, one reading through
//! `get` and one through `command(["GET", ..])` (always the general executor), and checks
//! they leave the same traces: replies, INFO counters, LATENCY HISTOGRAM, expiry, events.

use std::time::Duration;

use quince::{Db, Value};

/// A field of an INFO section.
fn info_field(db: &Db, section: &str, field: &str) -> String {
    let (Value::Verbatim(_, text) | Value::Bulk(text)) = db.command(&["INFO", section]).unwrap() else {
        panic!("INFO's reply is text")
    };
    let text = String::from_utf8(text).unwrap();
    let prefix = format!("{field}:");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix).map(str::to_string))
        .unwrap_or_else(|| panic!("no {field} in INFO {section}:\n{text}"))
}

/// `cmdstat_get`'s calls (0 when absent).
fn get_calls(db: &Db) -> u64 {
    let (Value::Verbatim(_, text) | Value::Bulk(text)) = db.command(&["INFO", "commandstats"]).unwrap() else {
        panic!("INFO's reply is text")
    };
    let text = String::from_utf8(text).unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix("cmdstat_get:calls="))
        .map_or(0, |rest| rest.split(',').next().unwrap().parse().unwrap())
}

/// The counters a GET leaves: commands processed (less the INFO calls reading them),
/// keyspace hits and misses, GET's calls.
fn traces(db: &Db) -> (u64, u64, u64, u64) {
    let hits = info_field(db, "stats", "keyspace_hits").parse().unwrap();
    let misses = info_field(db, "stats", "keyspace_misses").parse().unwrap();
    let processed: u64 = info_field(db, "stats", "total_commands_processed").parse().unwrap();
    (processed, hits, misses, get_calls(db))
}

/// Runs `work` with a GET that takes the fast path and with one that can't.
fn both(work: impl Fn(&Db, &dyn Fn(&Db, &str) -> Result<Option<Vec<u8>>, quince::Error>)) -> (Db, Db) {
    // (DEBUG allowed: a test turns active expiry off.)
    let config = || {
        let mut config = quince_engine::Config::default();
        config.set("enable-debug-command", &["yes".to_string()]).unwrap();
        config
    };
    let fast = Db::memory_with(config());
    let general = Db::memory_with(config());
    work(&fast, &|db, key| db.get(key));
    work(&general, &|db, key| match db.command(&["GET", key])? {
        Value::Null => Ok(None),
        Value::Bulk(b) => Ok(Some(b)),
        other => panic!("GET replied {other:?}"),
    });
    (fast, general)
}

#[test]
fn get_counts_as_the_executor_counts() {
    let (fast, general) = both(|db, get| {
        db.set("a", "1").unwrap();
        db.set("n", "12345").unwrap();
        assert_eq!(get(db, "a").unwrap(), Some(b"1".to_vec()));
        // An integer-encoded string reads back as its text.
        assert_eq!(get(db, "n").unwrap(), Some(b"12345".to_vec()));
        assert_eq!(get(db, "missing").unwrap(), None);
        // WRONGTYPE goes the general way (an error counted as failed).
        db.lpush("list", &["x"]).unwrap();
        assert_eq!(get(db, "list").unwrap_err().code(), "WRONGTYPE");
    });
    assert_eq!(traces(&fast), traces(&general));
    let (processed, hits, misses, calls) = traces(&fast);
    // (The WRONGTYPE read is a hit, as in Redis.)
    assert_eq!((hits, misses, calls), (3, 1, 4), "processed {processed}");
    assert_eq!(info_field(&fast, "errorstats", "errorstat_WRONGTYPE"), "count=1");
}

#[test]
fn latency_histogram_and_resetstat_see_the_fast_gets() {
    let (fast, general) = both(|db, get| {
        db.set("a", "1").unwrap();
        for _ in 0..10 {
            get(db, "a").unwrap();
        }
    });
    let calls_in_histogram = |db: &Db| match db.command(&["LATENCY", "HISTOGRAM", "get"]).unwrap() {
        Value::Map(entries) => match &entries[0].1 {
            Value::Map(fields) => fields[0].1.clone(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    assert_eq!(calls_in_histogram(&fast), Value::Integer(10));
    assert_eq!(calls_in_histogram(&fast), calls_in_histogram(&general));
    assert!(info_field(&fast, "latencystats", "latency_percentiles_usec_get").starts_with("p50="));

    fast.command(&["CONFIG", "RESETSTAT"]).unwrap();
    assert_eq!(get_calls(&fast), 0);
    assert_eq!(info_field(&fast, "stats", "keyspace_hits"), "0");
    fast.get("a").unwrap();
    fast.get("b").unwrap();
    assert_eq!(get_calls(&fast), 2);
    assert_eq!(info_field(&fast, "stats", "keyspace_hits"), "1");
    assert_eq!(info_field(&fast, "stats", "keyspace_misses"), "1");
}

#[test]
fn gets_on_other_threads_are_counted_after_they_end() {
    let db = Db::memory();
    db.set("a", "1").unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || {
                for _ in 0..1000 {
                    assert_eq!(db.get("a").unwrap(), Some(b"1".to_vec()));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(get_calls(&db), 4000);
    assert_eq!(info_field(&db, "stats", "keyspace_hits"), "4000");
    // And the clients those threads used, taken over by new threads, keep counting.
    let db2 = db.clone();
    std::thread::spawn(move || db2.get("a").unwrap()).join().unwrap();
    assert_eq!(get_calls(&db), 4001);
}

#[test]
fn an_expired_key_is_deleted_and_counted_as_by_the_executor() {
    let (fast, general) = both(|db, get| {
        db.command(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]).unwrap();
        db.command(&["SET", "t", "v", "PX", "20"]).unwrap();
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(get(db, "t").unwrap(), None);
    });
    for db in [&fast, &general] {
        assert_eq!(info_field(db, "stats", "expired_keys"), "1");
        assert_eq!(db.command(&["DBSIZE"]).unwrap(), Value::Integer(0));
    }
    assert_eq!(traces(&fast), traces(&general));
}

#[test]
fn keyspace_miss_events_are_published() {
    let db = Db::memory();
    db.command(&["CONFIG", "SET", "notify-keyspace-events", "Em"]).unwrap();
    let mut events = db.psubscribe(&["__keyevent@0__:*"]).unwrap();
    assert_eq!(db.get("nothing").unwrap(), None);
    let message = events.next_message(Some(Duration::from_secs(5))).unwrap().expect("a keymiss event");
    assert_eq!(message.channel, b"__keyevent@0__:keymiss");
    assert_eq!(message.payload, b"nothing");
}

#[test]
fn a_renamed_get_is_not_run_by_its_old_name() {
    let mut config = quince_engine::Config::default();
    config.set("rename-command", &["get".to_string(), "fetch".to_string()]).unwrap();
    let db = Db::memory_with(config);
    db.set("a", "1").unwrap();
    assert!(db.get("a").unwrap_err().to_string().starts_with("ERR unknown command 'GET'"));
    assert_eq!(db.command(&["FETCH", "a"]).unwrap(), Value::Bulk(b"1".to_vec()));
}

#[test]
fn a_get_waits_for_a_transaction_on_another_thread() {
    // A transaction's writes are seen all at once: GET never sees half of one.
    let db = Db::memory();
    db.set("x", "0").unwrap();
    db.set("y", "0").unwrap();
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            for i in 1..=2000 {
                let v = i.to_string();
                db.transaction(|tx| {
                    tx.cmd(&["SET", "x", &v]).cmd(&["SET", "y", &v]);
                })
                .unwrap();
            }
        })
    };
    let mut reads = 0;
    while !writer.is_finished() || reads == 0 {
        // x is written first: y read after x is never older.
        let x: u64 = String::from_utf8(db.get("x").unwrap().unwrap()).unwrap().parse().unwrap();
        let y: u64 = String::from_utf8(db.get("y").unwrap().unwrap()).unwrap().parse().unwrap();
        assert!(y >= x, "read x={x} then y={y}: a transaction was seen half done");
        reads += 1;
    }
    writer.join().unwrap();
}

#[test]
fn set_leaves_what_the_executor_leaves() {
    let (fast, general) = both(|db, _| {
        db.set("a", "1").unwrap();
        db.set("a", "22").unwrap();
        db.set("big", "x".repeat(100)).unwrap();
        db.set("n", "12345").unwrap();
        // A key with a TTL loses it; a key of another type is replaced.
        db.command(&["SET", "t", "v", "EX", "100"]).unwrap();
        db.set("t", "w").unwrap();
        db.lpush("list", &["x"]).unwrap();
        db.set("list", "now a string").unwrap();
    });
    for db in [&fast, &general] {
        assert_eq!(db.get("a").unwrap(), Some(b"22".to_vec()));
        assert_eq!(db.ttl("t").unwrap(), None);
        assert_eq!(db.get("list").unwrap(), Some(b"now a string".to_vec()));
        assert_eq!(db.command(&["OBJECT", "ENCODING", "n"]).unwrap(), Value::Bulk(b"int".to_vec()));
        assert_eq!(db.command(&["OBJECT", "ENCODING", "big"]).unwrap(), Value::Bulk(b"raw".to_vec()));
        assert_eq!(db.command(&["OBJECT", "ENCODING", "a"]).unwrap(), Value::Bulk(b"int".to_vec()));
    }
    let set_calls = |db: &Db| {
        let (Value::Verbatim(_, text) | Value::Bulk(text)) = db.command(&["INFO", "commandstats"]).unwrap() else {
            panic!("INFO's reply is text")
        };
        String::from_utf8(text)
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("cmdstat_set:calls=").map(|r| r.split(',').next().unwrap().to_string()))
    };
    let (fast_sets, general_sets) = (set_calls(&fast), set_calls(&general));
    assert_eq!(fast_sets, Some("7".to_string()));
    assert_eq!(fast_sets, general_sets);
    assert_eq!(
        info_field(&fast, "persistence", "rdb_changes_since_last_save"),
        info_field(&general, "persistence", "rdb_changes_since_last_save")
    );
    assert_eq!(traces(&fast), traces(&general));
}

#[test]
fn set_publishes_keyspace_events() {
    // Keyspace events make SET take the general path, which publishes them.
    let db = Db::memory();
    db.command(&["CONFIG", "SET", "notify-keyspace-events", "KA"]).unwrap();
    let mut events = db.psubscribe(&["__keyspace@0__:*"]).unwrap();
    db.set("k", "v").unwrap();
    let message = events.next_message(Some(Duration::from_secs(5))).unwrap().expect("a set event");
    assert_eq!((message.channel.as_slice(), message.payload.as_slice()), (&b"__keyspace@0__:k"[..], &b"set"[..]));
}
