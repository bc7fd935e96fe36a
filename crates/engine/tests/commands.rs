//! In-process command tests: the engine with a manual clock, no socket.

use std::sync::Arc;

use quince_engine::{Client, Engine, EngineOptions, ManualClock, Reply, ReplyBuilder};

struct Harness {
    engine: Engine,
    clock: Arc<ManualClock>,
    client: Client,
}

impl Harness {
    fn new() -> Self {
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        let engine = Engine::new(EngineOptions { clock: clock.clone(), shards: 8, ..EngineOptions::default() });
        let client = engine.new_client();
        Self { engine, clock, client }
    }

    fn run(&mut self, args: &[&str]) -> Reply {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let mut out = ReplyBuilder::new();
        self.engine.execute(&mut self.client, &args, &mut out);
        let mut replies = out.take();
        assert_eq!(replies.len(), 1, "exactly one reply");
        replies.remove(0)
    }
}

fn ok() -> Reply {
    Reply::Simple("OK".into())
}

fn bulk(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}

#[test]
fn set_get_with_expiry_on_a_manual_clock() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["SET", "k", "v", "PX", "100"]), ok());
    assert_eq!(h.run(&["PTTL", "k"]), Reply::Integer(100));
    h.clock.advance_ms(99);
    assert_eq!(h.run(&["GET", "k"]), bulk("v"));
    h.clock.advance_ms(1);
    assert_eq!(h.run(&["GET", "k"]), Reply::Null);
    assert_eq!(h.run(&["TTL", "k"]), Reply::Integer(-2));
}

#[test]
fn ttl_rounds_like_redis() {
    let mut h = Harness::new();
    h.run(&["SET", "k", "v", "PX", "1499"]);
    assert_eq!(h.run(&["TTL", "k"]), Reply::Integer(1));
    h.run(&["PEXPIRE", "k", "1500"]);
    assert_eq!(h.run(&["TTL", "k"]), Reply::Integer(2));
}

#[test]
fn active_expiry_cycle_removes_unread_keys() {
    let mut h = Harness::new();
    for i in 0..1000 {
        h.run(&["SET", &format!("k{i}"), "v", "PX", if i % 2 == 0 { "10" } else { "100000" }]);
    }
    h.clock.advance_ms(20);
    let mut expired = 0;
    for _ in 0..50 {
        expired += h.engine.active_expire_cycle(u64::MAX).expired;
    }
    assert_eq!(expired, 500);
    assert_eq!(h.run(&["DBSIZE"]), Reply::Integer(500));
    assert_eq!(h.engine.expired_keys(), 500);
}

#[test]
fn multi_key_commands_span_shards() {
    let mut h = Harness::new();
    let keys: Vec<String> = (0..50).map(|i| format!("key:{i}")).collect();
    for k in &keys {
        h.run(&["SET", k, "v"]);
    }
    let mut args = vec!["EXISTS"];
    args.extend(keys.iter().map(String::as_str));
    assert_eq!(h.run(&args), Reply::Integer(50));
    args[0] = "DEL";
    assert_eq!(h.run(&args), Reply::Integer(50));
    assert_eq!(h.run(&["DBSIZE"]), Reply::Integer(0));
}

#[test]
fn databases_are_separate() {
    let mut h = Harness::new();
    h.run(&["SET", "k", "zero"]);
    assert_eq!(h.run(&["SELECT", "15"]), ok());
    assert_eq!(h.run(&["GET", "k"]), Reply::Null);
    h.run(&["SET", "k", "fifteen"]);
    assert_eq!(h.run(&["FLUSHDB"]), ok());
    assert_eq!(h.run(&["SELECT", "0"]), ok());
    assert_eq!(h.run(&["GET", "k"]), bulk("zero"));
    assert_eq!(h.run(&["FLUSHALL"]), ok());
    assert_eq!(h.run(&["DBSIZE"]), Reply::Integer(0));
}

#[test]
fn hello_switches_protocol_and_reports_a_map() {
    let mut h = Harness::new();
    let Reply::Map(pairs) = h.run(&["HELLO", "3"]) else { panic!("HELLO replies with a map") };
    assert_eq!(pairs[2], (bulk("proto"), Reply::Integer(3)));
    assert_eq!(h.client.protocol, quince_resp::Protocol::Resp3);
    assert_eq!(h.run(&["RESET"]), Reply::Simple("RESET".into()));
    assert_eq!(h.client.protocol, quince_resp::Protocol::Resp2);
}

#[test]
fn command_table_is_consistent() {
    let h = Harness::new();
    for spec in h.engine.table.all() {
        assert!(!spec.summary.is_empty(), "{} has a summary", spec.name);
        assert!(spec.arity != 0, "{} has an arity", spec.name);
        for sub in &spec.subcommands {
            assert!(sub.name.starts_with(&format!("{}|", spec.name)));
            assert!(sub.handler.is_some(), "{} has a handler", sub.name);
        }
        if spec.subcommands.is_empty() {
            assert!(spec.handler.is_some(), "{} has a handler", spec.name);
        }
        // A command with key specs has a legacy key range unless its keys move (keynum or
        // keyword specs, as for LMPOP or ZUNION), and none without key specs.
        let (first, _, _) = spec.legacy_key_range();
        if spec.key_specs.is_empty() {
            assert_eq!(first, 0, "{}", spec.name);
        } else {
            assert!(first != 0 || spec.movable_keys(), "{}", spec.name);
        }
    }
}

#[test]
fn shutdown_sets_the_flag_and_closes() {
    let mut h = Harness::new();
    let args: Vec<&[u8]> = vec![b"SHUTDOWN", b"NOSAVE"];
    let mut out = ReplyBuilder::new();
    h.engine.execute(&mut h.client, &args, &mut out);
    assert!(out.take().is_empty(), "a successful SHUTDOWN sends no reply");
    assert!(h.engine.shutdown_requested());
    assert!(h.client.close_after_reply);
}

/// Runs a full SCAN, calling `between` after every step (to mutate the keyspace mid-scan).
fn full_scan(h: &mut Harness, count: &str, mut between: impl FnMut(&mut Harness, usize)) -> Vec<String> {
    let mut cursor = "0".to_string();
    let mut seen = Vec::new();
    let mut step = 0;
    loop {
        let reply = h.run(&["SCAN", &cursor, "COUNT", count]);
        let Reply::Array(parts) = reply else { panic!("SCAN reply {reply:?}") };
        let (Reply::Bulk(next), Reply::Array(keys)) = (&parts[0], &parts[1]) else { panic!("SCAN parts") };
        for k in keys {
            let Reply::Bulk(k) = k else { panic!("key") };
            seen.push(String::from_utf8(k.clone()).unwrap());
        }
        cursor = String::from_utf8(next.clone()).unwrap();
        step += 1;
        between(h, step);
        if cursor == "0" {
            return seen;
        }
        assert!(step < 100_000, "SCAN does not terminate");
    }
}

#[test]
fn scan_returns_every_key_present_for_the_whole_scan_despite_writes() {
    let mut h = Harness::new();
    for i in 0..2000 {
        h.run(&["SET", &format!("stable:{i}"), "v"]);
    }
    // Keys added and removed while scanning; the table grows through several resizes.
    let seen = full_scan(&mut h, "7", |h, step| {
        for j in 0..20 {
            h.run(&["SET", &format!("added:{step}:{j}"), "v"]);
        }
        h.run(&["DEL", &format!("added:{}:0", step.saturating_sub(1))]);
    });
    let seen: std::collections::HashSet<String> = seen.into_iter().collect();
    for i in 0..2000 {
        assert!(seen.contains(&format!("stable:{i}")), "stable:{i} missed");
    }
}

#[test]
fn scan_with_tiny_count_terminates_and_covers_everything() {
    let mut h = Harness::new();
    for i in 0..300 {
        h.run(&["SET", &format!("k{i}"), "v"]);
    }
    let seen = full_scan(&mut h, "1", |_, _| {});
    let unique: std::collections::HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), 300);
}

#[test]
fn string_encodings_follow_redis() {
    let mut h = Harness::new();
    let enc = |h: &mut Harness, k: &str| h.run(&["OBJECT", "ENCODING", k]);
    h.run(&["SET", "i", "12345"]);
    assert_eq!(enc(&mut h, "i"), bulk("int"));
    h.run(&["SET", "z", "0123"]);
    assert_eq!(enc(&mut h, "z"), bulk("embstr"));
    h.run(&["SET", "l", &"x".repeat(45)]);
    assert_eq!(enc(&mut h, "l"), bulk("raw"));
    h.run(&["APPEND", "i", "6"]);
    assert_eq!(enc(&mut h, "i"), bulk("raw"));
    assert_eq!(h.run(&["INCR", "i"]), Reply::Integer(123457));
    assert_eq!(enc(&mut h, "i"), bulk("int"));
    h.run(&["SETRANGE", "s", "2", "ab"]);
    assert_eq!(enc(&mut h, "s"), bulk("raw"));
    assert_eq!(h.run(&["GET", "s"]), Reply::Bulk(b"\0\0ab".to_vec()));
}

#[test]
fn object_idletime_and_lfu_freq_follow_the_clock() {
    let mut h = Harness::new();
    h.run(&["SET", "k", "v"]);
    h.clock.advance_ms(5_000);
    assert_eq!(h.run(&["OBJECT", "IDLETIME", "k"]), Reply::Integer(5));
    h.run(&["TTL", "k"]);
    h.run(&["TYPE", "k"]);
    h.run(&["EXISTS", "k"]);
    assert_eq!(h.run(&["OBJECT", "IDLETIME", "k"]), Reply::Integer(5), "TTL/TYPE/EXISTS do not touch");
    h.run(&["GET", "k"]);
    assert_eq!(h.run(&["OBJECT", "IDLETIME", "k"]), Reply::Integer(0));
    assert!(matches!(h.run(&["OBJECT", "FREQ", "k"]), Reply::Error(_)));
    assert_eq!(h.run(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]), ok());
    h.run(&["SET", "f", "v"]);
    assert_eq!(h.run(&["OBJECT", "FREQ", "f"]), Reply::Integer(5));
    for _ in 0..200 {
        h.run(&["GET", "f"]);
    }
    let Reply::Integer(freq) = h.run(&["OBJECT", "FREQ", "f"]) else { panic!() };
    assert!(freq > 5, "frequent access raises the counter: {freq}");
    assert!(matches!(h.run(&["OBJECT", "IDLETIME", "f"]), Reply::Error(_)));
}

/// A watched key that expires counts as changed, whether it is deleted by the active
/// expiry cycle or found expired at EXEC (Redis 7.0).
#[test]
fn watched_key_expiring_fails_exec() {
    let mut h = Harness::new();
    let mut other = h.engine.new_client();
    for active in [true, false] {
        h.run(&["SET", "x", "foo", "PX", "100"]);
        assert_eq!(h.run(&["WATCH", "x"]), ok());
        h.clock.advance_ms(200);
        if active {
            h.engine.active_expire_cycle(1_000_000);
        } else {
            // Another client's read deletes it lazily.
            let mut out = ReplyBuilder::new();
            h.engine.execute(&mut other, &[b"GET", b"x"], &mut out);
        }
        assert_eq!(h.run(&["MULTI"]), ok());
        assert_eq!(h.run(&["PING"]), Reply::Simple("QUEUED".into()));
        assert_eq!(h.run(&["EXEC"]), Reply::Null, "active expiry: {active}");
    }
    // A key missing when watched and still missing is no change.
    assert_eq!(h.run(&["WATCH", "nothing"]), ok());
    assert_eq!(h.run(&["MULTI"]), ok());
    h.run(&["PING"]);
    assert_eq!(h.run(&["EXEC"]), Reply::Array(vec![Reply::Simple("PONG".into())]));
}

/// Function libraries leave and come back through their code (FUNCTION DUMP / RESTORE and
/// snapshots), all or nothing, under each restore policy.
#[test]
fn function_libraries_restore_from_code() {
    use quince_engine::cmd::scripting::FunctionRestorePolicy as Policy;
    let mut h = Harness::new();
    let lib = |name: &str, func: &str, ret: i64| {
        format!("#!lua name={name}\nredis.register_function('{func}', function() return {ret} end)")
    };
    assert_eq!(h.run(&["FUNCTION", "LOAD", &lib("a", "fa", 1)]), bulk("a"));
    assert_eq!(h.run(&["FUNCTION", "LOAD", &lib("b", "fb", 2)]), bulk("b"));
    let codes = h.engine.scripting.library_codes();
    assert_eq!(codes.len(), 2);
    assert_eq!(h.run(&["FUNCTION", "FLUSH"]), ok());
    h.engine.restore_function_libraries(&codes, Policy::Append).unwrap();
    assert_eq!(h.run(&["FCALL", "fb", "0"]), Reply::Integer(2));
    assert_eq!(h.engine.restore_function_libraries(&codes, Policy::Append), Err("ERR Library a already exists".into()));
    // A function name taken by another library: nothing changes.
    let clash = vec![lib("c", "fa", 3).into_bytes()];
    assert_eq!(
        h.engine.restore_function_libraries(&clash, Policy::Replace),
        Err("ERR Function fa already exists".into())
    );
    assert_eq!(h.run(&["FCALL", "fa", "0"]), Reply::Integer(1));
    let newer = vec![lib("a", "fa", 10).into_bytes()];
    h.engine.restore_function_libraries(&newer, Policy::Replace).unwrap();
    assert_eq!(h.run(&["FCALL", "fa", "0"]), Reply::Integer(10));
    assert_eq!(h.run(&["FCALL", "fb", "0"]), Reply::Integer(2));
    h.engine.restore_function_libraries(&clash, Policy::Flush).unwrap();
    assert_eq!(h.run(&["FCALL", "fa", "0"]), Reply::Integer(3));
    assert_eq!(h.run(&["FCALL", "fb", "0"]), Reply::Error("ERR Function not found".into()));
    let broken = vec![b"#!lua name=d\nthis is not lua".to_vec()];
    assert!(h
        .engine
        .restore_function_libraries(&broken, Policy::Flush)
        .unwrap_err()
        .starts_with("ERR Error compiling"));
    assert_eq!(h.run(&["FCALL", "fa", "0"]), Reply::Integer(3), "a failed restore changes nothing");
}

/// The active expiry cycle never runs while a script or transaction holds the gate: no key
/// expires under them.
#[test]
fn active_expiry_waits_for_scripts_and_transactions() {
    let mut h = Harness::new();
    h.run(&["SET", "k", "v", "PX", "10"]);
    h.clock.advance_ms(20);
    let gate = h.engine.exclusive();
    assert_eq!(h.engine.active_expire_cycle(1_000_000).expired, 0);
    drop(gate);
    assert_eq!(h.engine.active_expire_cycle(1_000_000).expired, 1);
}
