//! The embedded Db: the typed API, `command`, errors, blocking pops across threads,
//! background expiry, transactions and concurrent use.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use quince::{Db, Error, Expiry, SetOptions, SetOutcome, Value};

#[test]
fn strings_and_their_errors() {
    let db = Db::memory();
    assert_eq!(db.get("missing").unwrap(), None);
    db.set("k", "v").unwrap();
    assert_eq!(db.get("k").unwrap(), Some(b"v".to_vec()));
    assert_eq!(db.incr("n").unwrap(), 1);
    assert_eq!(db.incr_by("n", 41).unwrap(), 42);
    assert_eq!(db.incr_by_float("f", 1.5).unwrap(), 1.5);
    assert_eq!(db.append("k", "w").unwrap(), 2);
    db.mset(&[("a", "1"), ("b", "2")]).unwrap();
    assert_eq!(db.mget(&["a", "nope", "b"]).unwrap(), vec![Some(b"1".to_vec()), None, Some(b"2".to_vec())]);

    // Redis's own error texts and codes.
    let e = db.incr("k").unwrap_err();
    assert_eq!(e.to_string(), "ERR value is not an integer or out of range");
    assert_eq!(e.code(), "ERR");
    db.lpush("list", &["x"]).unwrap();
    let e = db.get("list").unwrap_err();
    assert_eq!(e.to_string(), "WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(e.code(), "WRONGTYPE");
    let e = db.command(&["NOSUCHCOMMAND", "x"]).unwrap_err();
    assert!(e.to_string().starts_with("ERR unknown command 'NOSUCHCOMMAND'"), "{e}");
    let e = db.command(&["GET"]).unwrap_err();
    assert_eq!(e.to_string(), "ERR wrong number of arguments for 'get' command");
}

#[test]
fn set_options() {
    let db = Db::memory();
    let nx = SetOptions::new().only_if_absent();
    assert_eq!(db.set_with("k", "1", nx).unwrap(), SetOutcome::Set(None));
    assert_eq!(db.set_with("k", "2", nx).unwrap(), SetOutcome::NotSet(None));
    assert_eq!(db.set_with("k", "3", SetOptions::new().get_old()).unwrap(), SetOutcome::Set(Some(b"1".to_vec())));
    assert_eq!(db.set_with("other", "x", SetOptions::new().only_if_present()).unwrap(), SetOutcome::NotSet(None));
    db.set_with("t", "v", SetOptions::new().expire(Expiry::In(Duration::from_secs(100)))).unwrap();
    let ttl = db.ttl("t").unwrap().expect("a TTL");
    assert!(ttl > Duration::from_secs(99) && ttl <= Duration::from_secs(100), "{ttl:?}");
    db.set_with("t", "w", SetOptions::new().expire(Expiry::Keep)).unwrap();
    assert!(db.ttl("t").unwrap().is_some());
    db.set("t", "plain").unwrap();
    assert_eq!(db.ttl("t").unwrap(), None);
}

#[test]
fn keys_ttls_and_scan() {
    let db = Db::memory();
    for i in 0..250 {
        db.set(format!("user:{i}"), "x").unwrap();
    }
    db.set("other", "x").unwrap();
    let found: HashSet<Vec<u8>> = db.scan("user:*").map(|k| k.unwrap()).collect();
    assert_eq!(found.len(), 250);
    assert!(found.contains(&b"user:17"[..]));
    assert_eq!(db.dbsize().unwrap(), 251);
    assert!(db.exists("user:1").unwrap());
    assert_eq!(db.del(&["user:1", "user:2", "nope"]).unwrap(), 2);
    assert_eq!(db.key_type("other").unwrap(), "string");
    assert_eq!(db.key_type("nope").unwrap(), "none");
    assert!(db.expire("other", Duration::from_secs(10)).unwrap());
    assert!(!db.expire("nope", Duration::from_secs(10)).unwrap());
    assert!(db.persist("other").unwrap());
    db.rename("other", "renamed").unwrap();
    assert_eq!(db.rename("nope", "x").unwrap_err().to_string(), "ERR no such key");
    db.flushdb().unwrap();
    assert_eq!(db.dbsize().unwrap(), 0);
}

/// Keys with a TTL go away without being touched: the Db's own thread runs the active
/// expiry cycle (DBSIZE counts keys that expired but were not removed yet).
#[test]
fn keys_expire_in_the_background() {
    let db = Db::memory();
    for i in 0..100 {
        db.set_with(format!("k{i}"), "v", SetOptions::new().expire(Expiry::In(Duration::from_millis(20)))).unwrap();
    }
    db.set("kept", "v").unwrap();
    let start = Instant::now();
    while db.dbsize().unwrap() > 1 {
        assert!(start.elapsed() < Duration::from_secs(10), "keys were not expired in the background");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(db.get("kept").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn blocking_pops_wait_across_threads() {
    let db = Db::memory();
    let waiter = {
        let db = db.clone();
        std::thread::spawn(move || db.blpop(&["jobs"], Duration::from_secs(10)))
    };
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(db.rpush("jobs", &["job-1"]).unwrap(), 1, "the element goes to the waiter, after the push");
    let got = waiter.join().unwrap().unwrap();
    assert_eq!(got, Some((b"jobs".to_vec(), b"job-1".to_vec())));
    assert_eq!(db.llen("jobs").unwrap(), 0);

    // A timeout: nil after about that long.
    let start = Instant::now();
    assert_eq!(db.brpop(&["empty"], Duration::from_millis(200)).unwrap(), None);
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(190) && waited < Duration::from_secs(3), "{waited:?}");

    // Several waiters, served in the order they came, one element each.
    let waiters: Vec<_> = (0..3)
        .map(|i| {
            let db = db.clone();
            std::thread::sleep(Duration::from_millis(30));
            std::thread::spawn(move || (i, db.blpop(&["q"], Duration::from_secs(10)).unwrap()))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    db.rpush("q", &["a", "b", "c"]).unwrap();
    let mut got: Vec<_> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
    got.sort_by_key(|(i, _)| *i);
    let values: Vec<Vec<u8>> = got.into_iter().map(|(_, v)| v.unwrap().1).collect();
    assert_eq!(values, vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
}

#[test]
fn lists_hashes_sets_sorted_sets() {
    let db = Db::memory();
    assert_eq!(db.rpush("l", &["a", "b", "c"]).unwrap(), 3);
    assert_eq!(db.lpush("l", &["z"]).unwrap(), 4);
    assert_eq!(db.lrange("l", 0, -1).unwrap(), vec![b"z".to_vec(), b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    assert_eq!(db.lpop("l").unwrap(), Some(b"z".to_vec()));
    assert_eq!(db.rpop("l").unwrap(), Some(b"c".to_vec()));

    assert_eq!(db.hset("h", &[("f1", "1"), ("f2", "2")]).unwrap(), 2);
    assert_eq!(db.hget("h", "f1").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.hincr_by("h", "f1", 9).unwrap(), 10);
    let mut all = db.hgetall("h").unwrap();
    all.sort();
    assert_eq!(all, vec![(b"f1".to_vec(), b"10".to_vec()), (b"f2".to_vec(), b"2".to_vec())]);
    assert_eq!(db.hdel("h", &["f2", "nope"]).unwrap(), 1);
    assert_eq!(db.hlen("h").unwrap(), 1);

    assert_eq!(db.sadd("s", &["a", "b", "a"]).unwrap(), 2);
    assert!(db.sismember("s", "a").unwrap());
    assert!(!db.sismember("s", "c").unwrap());
    let mut members = db.smembers("s").unwrap();
    members.sort();
    assert_eq!(members, vec![b"a".to_vec(), b"b".to_vec()]);
    assert_eq!(db.srem("s", &["a"]).unwrap(), 1);
    assert_eq!(db.scard("s").unwrap(), 1);

    assert_eq!(db.zadd("z", &[(1.0, "one"), (2.5, "two"), (f64::INFINITY, "top")]).unwrap(), 3);
    assert_eq!(db.zscore("z", "two").unwrap(), Some(2.5));
    assert_eq!(db.zscore("z", "nope").unwrap(), None);
    assert_eq!(db.zincr_by("z", 1.0, "one").unwrap(), 2.0);
    assert_eq!(db.zrange_by_score("z", 2.0, 3.0).unwrap(), vec![(b"one".to_vec(), 2.0), (b"two".to_vec(), 2.5)]);
    assert_eq!(db.zrange("z", -1, -1).unwrap(), vec![(b"top".to_vec(), f64::INFINITY)]);
    assert_eq!(db.zrem("z", &["top"]).unwrap(), 1);
    assert_eq!(db.zcard("z").unwrap(), 2);
}

#[test]
fn scripts_functions_and_transactions() {
    let db = Db::memory();
    let reply = db.eval("return {KEYS[1], ARGV[1], 3}", &["k"], &["a"]).unwrap();
    assert_eq!(reply, Value::Array(vec![Value::Bulk(b"k".to_vec()), Value::Bulk(b"a".to_vec()), Value::Integer(3)]));
    let sha = db.script_load("return redis.call('INCR', KEYS[1])").unwrap();
    assert_eq!(db.evalsha(&sha, &["counter"], &[] as &[&str]).unwrap(), Value::Integer(1));
    let e = db.evalsha("0000000000000000000000000000000000000000", &[] as &[&str], &[] as &[&str]).unwrap_err();
    assert_eq!(e.code(), "NOSCRIPT");
    let library = "#!lua name=lib\nredis.register_function('double', function(keys, args) return args[1] * 2 end)";
    assert_eq!(db.function_load(library, false).unwrap(), "lib");
    assert_eq!(db.fcall("double", &[] as &[&str], &["21"]).unwrap(), Value::Integer(42));

    let results = db
        .transaction(|tx| {
            tx.cmd(&["INCR", "x"]).cmd(&["INCR", "x"]).cmd(&["GET", "x"]).cmd(&["LPUSH", "x", "oops"]);
        })
        .unwrap();
    assert_eq!(results[0], Value::Integer(1));
    assert_eq!(results[1], Value::Integer(2));
    assert_eq!(results[2], Value::Bulk(b"2".to_vec()));
    assert!(matches!(&results[3], Value::Error(e) if e.starts_with("WRONGTYPE")), "{:?}", results[3]);
    let e = db.transaction(|tx| {
        tx.cmd(&["INCR", "x"]).cmd(&["GET"]);
    });
    assert!(matches!(&e, Err(Error::Reply(text)) if text.starts_with("EXECABORT")), "{e:?}");
    assert_eq!(db.get("x").unwrap(), Some(b"2".to_vec()), "an aborted transaction wrote nothing");
}

#[test]
fn connection_commands_are_refused_and_databases_are_handles() {
    let db = Db::memory();
    for command in [&["SELECT", "1"][..], &["MULTI"], &["subscribe", "ch"], &["HELLO", "3"], &["SHUTDOWN"]] {
        let e = db.command(command).unwrap_err();
        assert!(e.to_string().contains("an embedded Db has none"), "{e}");
    }
    let other = db.select(1).unwrap();
    other.set("k", "in db 1").unwrap();
    assert_eq!(db.get("k").unwrap(), None);
    assert_eq!(other.get("k").unwrap(), Some(b"in db 1".to_vec()));
    assert_eq!(db.select(16).err().unwrap().to_string(), "ERR DB index is out of range");
    let e = db.command(&["client", "reply", "off"]).unwrap_err();
    assert!(e.to_string().starts_with("ERR CLIENT REPLY changes a connection's state"), "{e}");
    assert_eq!(db.get("k").unwrap(), None, "later calls still have their replies");
    // A Db is a handle: a clone sees the same data.
    let clone = other.clone();
    assert_eq!(clone.get("k").unwrap(), Some(b"in db 1".to_vec()));
}

#[test]
fn many_threads_at_once() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Db>();
    let db = Db::memory();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..1000 {
                    db.incr("shared").unwrap();
                    db.set(format!("t{t}:{i}"), i.to_string()).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(db.get("shared").unwrap(), Some(b"8000".to_vec()), "no lost increment");
    assert_eq!(db.dbsize().unwrap(), 8001);
}

/// Each thread keeps the client it used last; another Db's call on that thread, or the
/// thread's end, hands the client back to its Db. Nothing leaks between Dbs, and the clients
/// a Db lists don't grow with the number of calls or of threads come and gone.
#[test]
fn clients_follow_threads_and_dbs() {
    let clients = |db: &Db| {
        let (Value::Bulk(list) | Value::Verbatim(_, list)) = db.command(&["CLIENT", "LIST"]).unwrap() else {
            panic!("CLIENT LIST")
        };
        list.split(|&b| b == b'\n').filter(|line| !line.is_empty()).count()
    };
    let (a, b) = (Db::memory(), Db::memory());
    for i in 0..100 {
        a.set("k", format!("a{i}")).unwrap();
        b.set("k", format!("b{i}")).unwrap();
        assert_eq!(a.get("k").unwrap(), Some(format!("a{i}").into_bytes()));
    }
    assert_eq!(b.get("k").unwrap(), Some(b"b99".to_vec()));
    let before = clients(&a);
    for _ in 0..5 {
        let a = a.clone();
        std::thread::spawn(move || a.incr("n").unwrap()).join().unwrap();
    }
    assert_eq!(a.get("n").unwrap(), Some(b"5".to_vec()));
    // One thread at a time: the ended thread's client went back and served the next.
    assert!(clients(&a) <= before + 1, "{} clients after, {before} before", clients(&a));
    // A Db dropped while a thread keeps its client: the next Db on that thread works.
    drop(a);
    let c = Db::memory();
    assert_eq!(c.get("k").unwrap(), None);
    assert_eq!(b.get("k").unwrap(), Some(b"b99".to_vec()));
}

#[test]
fn dropping_the_last_handle_stops_the_background_thread() {
    let db = Db::memory();
    let clone = db.clone();
    drop(db);
    clone.set("still", "here").unwrap();
    let start = Instant::now();
    drop(clone);
    assert!(start.elapsed() < Duration::from_secs(2), "drop waited for the housekeeper too long");
}

#[test]
fn publish_and_subscribe_in_process() {
    let db = Db::memory();
    let mut news = db.subscribe(&["news"]).unwrap();
    let mut all = db.psubscribe(&["n*"]).unwrap();
    assert_eq!(db.publish("news", "first").unwrap(), 2, "one channel and one pattern subscriber");
    assert_eq!(db.publish("other", "ignored").unwrap(), 0);
    let m = news.next_message(Some(Duration::from_secs(5))).unwrap().unwrap();
    assert_eq!(m, quince::Message { pattern: None, channel: b"news".to_vec(), payload: b"first".to_vec() });
    let m = all.next_message(Some(Duration::from_secs(5))).unwrap().unwrap();
    assert_eq!(m.pattern.as_deref(), Some(&b"n*"[..]));
    assert_eq!(m.channel, b"news");

    // From another thread, in order; the subscriber waits for them.
    let publisher = {
        let db = db.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            for i in 0..100 {
                db.publish("news", i.to_string()).unwrap();
            }
        })
    };
    let got: Vec<Vec<u8>> = news.by_ref().take(100).map(|m| m.unwrap().payload).collect();
    publisher.join().unwrap();
    assert_eq!(got, (0..100).map(|i| i.to_string().into_bytes()).collect::<Vec<_>>());

    // A timeout with nothing published; unsubscribing; scripts publish too.
    assert_eq!(news.next_message(Some(Duration::from_millis(50))).unwrap(), None);
    news.unsubscribe(&["news"]).unwrap();
    db.eval("return redis.call('PUBLISH', 'news', 'from lua')", &[] as &[&str], &[] as &[&str]).unwrap();
    assert_eq!(news.next_message(Some(Duration::from_millis(50))).unwrap(), None);
    assert_eq!(all.by_ref().take(101).last().unwrap().unwrap().payload, b"from lua");
    // Dropped: no longer counted.
    drop(all);
    drop(news);
    assert_eq!(db.publish("news", "nobody").unwrap(), 0);
    assert!(db.command(&["SUBSCRIBE", "x"]).unwrap_err().to_string().contains("Db::subscribe"));
}

#[test]
fn streams_and_consumer_groups() {
    let db = Db::memory();
    let first = db.xadd("events", "1-1", &[("kind", "signup"), ("user", "ann")]).unwrap();
    assert_eq!(first, "1-1");
    let second = db.xadd("events", "*", &[("kind", "login")]).unwrap();
    assert_eq!(db.xlen("events").unwrap(), 2);
    let all = db.xrange("events", "-", "+", None).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].id, "1-1");
    assert_eq!(all[0].fields, Some(vec![(b"kind".to_vec(), b"signup".to_vec()), (b"user".to_vec(), b"ann".to_vec())]));
    assert_eq!(all[1].id, second);
    assert_eq!(db.xrange("events", "-", "+", Some(1)).unwrap().len(), 1);
    let read = db.xread(&[("events", "1-1")], None, None).unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].0, b"events");
    assert_eq!(read[0].1[0].id, second);

    // XREAD BLOCK waits across threads for a new entry; times out empty.
    let reader = {
        let db = db.clone();
        std::thread::spawn(move || db.xread(&[("events", "$")], None, Some(Duration::from_secs(10))).unwrap())
    };
    std::thread::sleep(Duration::from_millis(100));
    let third = db.xadd("events", "*", &[("kind", "logout")]).unwrap();
    let got = reader.join().unwrap();
    assert_eq!(got[0].1[0].id, third);
    assert!(db.xread(&[("events", "$")], None, Some(Duration::from_millis(50))).unwrap().is_empty());

    // A consumer group: each entry delivered once, pending until acknowledged.
    db.xgroup_create("events", "workers", "0", false).unwrap();
    assert_eq!(db.xgroup_create("events", "workers", "0", false).unwrap_err().code(), "BUSYGROUP");
    let batch = db.xreadgroup("workers", "w1", &[("events", ">")], Some(2), None).unwrap();
    assert_eq!(batch[0].1.len(), 2);
    let rest = db.xreadgroup("workers", "w2", &[("events", ">")], None, None).unwrap();
    assert_eq!(rest[0].1.len(), 1);
    assert_eq!(db.xack("events", "workers", &["1-1", &second]).unwrap(), 2);
    // w1's history: nothing pending any more.
    let history = db.xreadgroup("workers", "w1", &[("events", "0")], None, None).unwrap();
    assert!(history[0].1.is_empty());
    // An entry deleted while pending shows as (id, None) in its consumer's history.
    assert_eq!(db.xdel("events", &[&third]).unwrap(), 1);
    let history = db.xreadgroup("workers", "w2", &[("events", "0")], None, None).unwrap();
    assert_eq!(history[0].1, vec![quince::StreamEntry { id: third.clone(), fields: None }]);
}

/// `Db::serve`: a Redis client (here raw RESP) sees the application's data, and writes
/// made over the socket are the application's too; pipelining, blocking and pub/sub work.
#[test]
fn serve_over_resp() {
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn roundtrip(s: &mut TcpStream, request: &[u8], expect: &[u8]) {
        s.write_all(request).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while got.len() < expect.len() {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(expect));
    }

    let db = Db::memory();
    db.set("app", "data").unwrap();
    let server = db.serve("127.0.0.1:0").unwrap();
    let mut c = TcpStream::connect(server.local_addr()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    roundtrip(&mut c, b"*2\r\n$3\r\nGET\r\n$3\r\napp\r\n", b"$4\r\ndata\r\n");
    // Pipelined, and an inline command.
    roundtrip(&mut c, b"*3\r\n$3\r\nSET\r\n$4\r\nfrom\r\n$3\r\ncli\r\nINCR n\r\n", b"+OK\r\n:1\r\n");
    assert_eq!(db.get("from").unwrap(), Some(b"cli".to_vec()));
    // A blocking pop served by the application.
    c.write_all(b"*3\r\n$5\r\nBLPOP\r\n$4\r\njobs\r\n$1\r\n5\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    db.rpush("jobs", &["j1"]).unwrap();
    roundtrip(&mut c, b"", b"*2\r\n$4\r\njobs\r\n$2\r\nj1\r\n");
    // Pub/sub: the application publishes, the socket subscriber receives.
    let mut sub = TcpStream::connect(server.local_addr()).unwrap();
    sub.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    roundtrip(&mut sub, b"*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n", b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
    assert_eq!(db.publish("ch", "hi").unwrap(), 1);
    roundtrip(&mut sub, b"", b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n");
    // QUIT closes; errors are Redis's.
    roundtrip(&mut c, b"*1\r\n$4\r\nNOPE\r\n", b"-ERR unknown command 'NOPE', with args beginning with: \r\n");
    roundtrip(
        &mut c,
        b"*1\r\n$8\r\nSHUTDOWN\r\n",
        b"-ERR SHUTDOWN is not available on an embedded Db (the application stops it)\r\n",
    );
    roundtrip(&mut c, b"*1\r\n$4\r\nQUIT\r\n", b"+OK\r\n");
    assert_eq!(db.get("app").unwrap(), Some(b"data".to_vec()), "the Db still serves its application");
    drop(server);
}

#[test]
fn geo_hyperloglog_bitmaps() {
    use quince::GeoUnit;
    let db = Db::memory();
    assert_eq!(
        db.geoadd("cities", &[(13.361389, 38.115556, "Palermo"), (15.087269, 37.502669, "Catania")]).unwrap(),
        2
    );
    let (lon, lat) = db.geopos("cities", "Palermo").unwrap().unwrap();
    assert!((lon - 13.361389).abs() < 1e-5 && (lat - 38.115556).abs() < 1e-5, "{lon} {lat}");
    assert_eq!(db.geopos("cities", "Rome").unwrap(), None);
    let km = db.geodist("cities", "Palermo", "Catania", GeoUnit::Kilometers).unwrap().unwrap();
    assert!((km - 166.2742).abs() < 0.001, "{km}");
    assert_eq!(db.geodist("cities", "Palermo", "Rome", GeoUnit::Meters).unwrap(), None);
    let near = db.geosearch_radius("cities", 15.0, 37.0, 200.0, GeoUnit::Kilometers).unwrap();
    assert_eq!(near.iter().map(|(m, _)| m.clone()).collect::<Vec<_>>(), vec![b"Catania".to_vec(), b"Palermo".to_vec()]);
    assert!((near[0].1 - 56.4413).abs() < 0.001, "{:?}", near);

    assert!(db.pfadd("visitors", &["a", "b", "c"]).unwrap());
    assert!(!db.pfadd("visitors", &["a"]).unwrap());
    db.pfadd("other", &["c", "d"]).unwrap();
    assert_eq!(db.pfcount(&["visitors"]).unwrap(), 3);
    assert_eq!(db.pfcount(&["visitors", "other"]).unwrap(), 4);
    db.pfmerge("all", &["visitors", "other"]).unwrap();
    assert_eq!(db.pfcount(&["all"]).unwrap(), 4);

    assert!(!db.setbit("bits", 7, true).unwrap());
    assert!(db.setbit("bits", 7, true).unwrap());
    assert!(db.getbit("bits", 7).unwrap());
    assert!(!db.getbit("bits", 100).unwrap());
    db.setbit("bits", 20, true).unwrap();
    assert_eq!(db.bitcount("bits").unwrap(), 2);
    assert_eq!(db.bitpos("bits", true).unwrap(), Some(7));
    assert_eq!(db.bitpos("empty", true).unwrap(), None);
    assert_eq!(
        db.setbit("bits", 1 << 40, true).unwrap_err().to_string(),
        "ERR bit offset is not an integer or out of range"
    );
}
