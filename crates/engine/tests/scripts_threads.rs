//! Scripts and functions from several threads at once, while another thread reloads,
//! deletes and flushes the function libraries and the script cache. The Lua VMs are built
//! without mlua's `send` feature and handed between threads whole (see `Vm` in
//! cmd/scripting): every reply must be one a serial run could give, and nothing may crash.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use quince_engine::{Engine, EngineOptions, Reply, ReplyBuilder};

fn run(engine: &Engine, client: &mut quince_engine::Client, args: &[&str]) -> Reply {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let mut out = ReplyBuilder::new();
    engine.execute(client, &args, &mut out);
    out.take().remove(0)
}

const LIBRARY: &str =
    "#!lua name=t\nredis.register_function('bump', function(k, a) return redis.call('incrby', k[1], a[1]) end)";
const SCRIPT: &str = "return redis.call('incrby', KEYS[1], ARGV[1])";

#[test]
fn scripts_on_many_threads_while_libraries_change() {
    let engine = Arc::new(Engine::new(EngineOptions { shards: 8, ..EngineOptions::default() }));
    let mut admin = engine.new_client();
    assert!(matches!(run(&engine, &mut admin, &["FUNCTION", "LOAD", LIBRARY]), Reply::Bulk(_)));
    let stop = Arc::new(AtomicBool::new(false));
    let changer = {
        let (engine, stop) = (engine.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut client = engine.new_client();
            let mut rounds = 0;
            while !stop.load(Ordering::Relaxed) || rounds < 50 {
                let reply = run(&engine, &mut client, &["FUNCTION", "LOAD", "REPLACE", LIBRARY]);
                assert!(matches!(reply, Reply::Bulk(_)), "{reply:?}");
                if rounds % 5 == 0 {
                    run(&engine, &mut client, &["FUNCTION", "DELETE", "t"]);
                    run(&engine, &mut client, &["FUNCTION", "LOAD", LIBRARY]);
                }
                if rounds % 7 == 0 {
                    run(&engine, &mut client, &["SCRIPT", "FLUSH"]);
                }
                rounds += 1;
            }
        })
    };
    let callers: Vec<_> = (0..4)
        .map(|t| {
            let engine = engine.clone();
            std::thread::spawn(move || {
                let mut client = engine.new_client();
                let key = format!("k{t}");
                let (mut expected, mut counted) = (0, 0);
                for i in 0..2000 {
                    let reply = if i % 2 == 0 {
                        run(&engine, &mut client, &["FCALL", "bump", "1", &key, "1"])
                    } else {
                        run(&engine, &mut client, &["EVAL", SCRIPT, "1", &key, "1"])
                    };
                    match reply {
                        Reply::Integer(n) => {
                            expected += 1;
                            assert_eq!(n, expected, "thread {t} call {i}");
                            counted += 1;
                        }
                        // Between a DELETE and the LOAD after it.
                        Reply::Error(e) => assert_eq!(e, "ERR Function not found", "thread {t} call {i}"),
                        other => panic!("thread {t} call {i}: {other:?}"),
                    }
                }
                counted
            })
        })
        .collect();
    let counted: i64 = callers.into_iter().map(|c| c.join().unwrap()).sum();
    stop.store(true, Ordering::Relaxed);
    changer.join().unwrap();
    assert!(counted >= 4 * 1000, "every EVAL counts: {counted}");
    let stats = run(&engine, &mut admin, &["FUNCTION", "STATS"]);
    assert!(matches!(stats, Reply::Array(_) | Reply::Map(_)), "{stats:?}");
}
