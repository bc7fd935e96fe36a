//! The command form of an AOF base (`aof-use-rdb-preamble no`): a dataset of every type, in
//! small and large encodings, with TTLs, stream groups and function libraries, written as
//! commands and replayed into a fresh engine, comes back the same.

use std::sync::Arc;

use quince_engine::keyspace::Value;
use quince_engine::{Engine, EngineOptions, ManualClock, Reply, ReplyBuilder};
use quince_persist::aof::load::{load_command_file, FileOutcome};
use quince_persist::aof::rewrite::write_commands;

const NOW: i64 = 1_700_000_000_000;

fn engine() -> Engine {
    Engine::new(EngineOptions { clock: Arc::new(ManualClock::new(NOW)), shards: 4, ..EngineOptions::default() })
}

fn run(engine: &Engine, client: &mut quince_engine::Client, args: &[&str]) -> Reply {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let mut out = ReplyBuilder::new();
    engine.execute(client, &args, &mut out);
    out.take().remove(0)
}

fn populate(engine: &Engine) {
    let mut c = engine.new_client();
    let big = "x".repeat(100);
    run(engine, &mut c, &["SET", "str", "hello"]);
    run(engine, &mut c, &["SET", "int", "12345"]);
    run(engine, &mut c, &["SET", "ttl", "v", "PX", "100000"]);
    run(engine, &mut c, &["RPUSH", "list", "a", "b", "3"]);
    for i in 0..300 {
        run(engine, &mut c, &["RPUSH", "biglist", &format!("item-{i}")]);
        run(engine, &mut c, &["SADD", "bigset", &format!("m{i}")]);
        run(engine, &mut c, &["ZADD", "bigzset", &format!("{}.25", i), &format!("m{i}")]);
        run(engine, &mut c, &["HSET", "bighash", &format!("f{i}"), &format!("v{i}")]);
    }
    run(engine, &mut c, &["SADD", "intset", "1", "2", "-7"]);
    run(engine, &mut c, &["ZADD", "zset", "1.5", "a", "-inf", "b", "3e100", "c"]);
    run(engine, &mut c, &["HSET", "hash", "f", "v", "long", &big]);
    run(engine, &mut c, &["XADD", "stream", "1-1", "f", "v"]);
    run(engine, &mut c, &["XADD", "stream", "2-1", "f", "w", "g", "x"]);
    run(engine, &mut c, &["XADD", "stream", "3-1", "f", "y"]);
    run(engine, &mut c, &["XDEL", "stream", "3-1"]);
    run(engine, &mut c, &["XGROUP", "CREATE", "stream", "grp", "0"]);
    run(engine, &mut c, &["XREADGROUP", "GROUP", "grp", "alice", "COUNT", "1", "STREAMS", "stream", ">"]);
    run(engine, &mut c, &["XGROUP", "CREATECONSUMER", "stream", "grp", "bob"]);
    run(engine, &mut c, &["XADD", "empty", "5-5", "f", "v"]);
    run(engine, &mut c, &["XDEL", "empty", "5-5"]);
    run(engine, &mut c, &["XGROUP", "CREATE", "never-used", "g", "$", "MKSTREAM"]);
    run(engine, &mut c, &["SELECT", "5"]);
    run(engine, &mut c, &["SET", "in-db5", "five"]);
    let library = "#!lua name=mylib\nredis.register_function('f1', function() return 1 end)";
    assert_eq!(run(engine, &mut c, &["FUNCTION", "LOAD", library]), Reply::Bulk(b"mylib".to_vec()));
}

/// Every key of every database: type, encoding, TTL and contents in a comparable form.
fn dump(engine: &Engine) -> Vec<String> {
    let mut out = Vec::new();
    for db in 0..engine.keyspace.databases() {
        for shard in 0..engine.keyspace.shard_count() {
            let mut guard = engine.keyspace.lock(shard);
            for (key, entry) in guard.dbs[db].iter_live(NOW) {
                let contents = match &entry.value {
                    Value::Stream(s) => {
                        let entries: Vec<String> = s
                            .entries()
                            .iter()
                            .map(|(id, f)| format!("{id}:{:?}", f.iter().collect::<Vec<_>>()))
                            .collect();
                        let groups: Vec<String> = s
                            .groups
                            .iter()
                            .map(|(name, g)| {
                                let pel: Vec<String> = g
                                    .pel
                                    .iter()
                                    .map(|(id, n)| {
                                        format!("{id}@{:?}/{}/{}", n.consumer, n.delivery_time, n.delivery_count)
                                    })
                                    .collect();
                                let consumers: Vec<&Vec<u8>> = g.consumers.keys().collect();
                                format!(
                                    "{name:?} last={} read={} pel={pel:?} consumers={consumers:?}",
                                    g.last_id, g.entries_read
                                )
                            })
                            .collect();
                        format!(
                            "{entries:?} len={} last={} first={} maxdel={} added={} {groups:?}",
                            s.length, s.last_id, s.first_id, s.max_deleted_id, s.entries_added
                        )
                    }
                    Value::Str(v) => format!("{:?}", v.as_bytes()),
                    Value::List(l) => format!("{:?}", l.iter().collect::<Vec<_>>()),
                    Value::Hash(h) => {
                        let mut pairs: Vec<_> = h.iter().collect();
                        pairs.sort();
                        format!("{pairs:?}")
                    }
                    Value::Set(set) => {
                        let mut members: Vec<_> = set.iter().collect();
                        members.sort();
                        format!("{members:?}")
                    }
                    Value::ZSet(z) => format!("{:?}", z.iter().collect::<Vec<_>>()),
                };
                out.push(format!(
                    "{db} {:?} {} ttl={:?} {contents}",
                    String::from_utf8_lossy(key),
                    entry.value.encoding_name(),
                    entry.expire_at_ms()
                ));
            }
        }
    }
    out.sort();
    out.push(format!("functions={:?}", engine.scripting.library_codes()));
    out
}

#[test]
fn a_command_base_rebuilds_the_dataset() {
    let source = engine();
    populate(&source);
    let dir = std::env::temp_dir().join(format!("quince-aof-rewrite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("base.aof");
    let mut file = std::fs::File::create(&path).unwrap();
    let keys = write_commands(&source, &mut file).unwrap();
    assert_eq!(keys, 15);
    drop(file);

    let target = engine();
    let outcome = load_command_file(&target, &path, true, false, &mut |m| panic!("{m}"), &mut |_| {}).unwrap();
    assert_eq!(outcome, FileOutcome::Loaded);
    let (got, want) = (dump(&target), dump(&source));
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
    assert_eq!(got.len(), want.len());
    std::fs::remove_dir_all(&dir).unwrap();
}
