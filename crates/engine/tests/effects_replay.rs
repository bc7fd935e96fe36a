//! Property test: the write effects the engine records for the append-only file are a
//! faithful, deterministic log. Random command sequences over every family (strings with
//! expiries, lists with blocked clients served by other clients' pushes, sets with SPOP,
//! hashes, sorted sets, streams with consumer groups, the EXPIRE family, MULTI/EXEC, Lua
//! scripts that write, FLUSHDB/SWAPDB/SELECT) run on engine A while a manual clock advances
//! (keys expire lazily and through the active expiry cycle). A recorder installed as A's
//! persistence layer collects every `Effects` with the time it was fed. The effects are then
//! replayed into a fresh engine B by a client that obeys them (`must_obey`, as the AOF
//! loader), through MULTI/EXEC when `needs_wrap`: once all at the final time (loading an
//! AOF: nothing expires while loading) and once each at the time it was recorded (as a
//! replica). Every replayed command must succeed, and at the end (same clock) both engines
//! must hold the same dataset in every database: each key's type, TTL and contents.

use std::sync::Arc;

use parking_lot::Mutex;
use proptest::prelude::*;
use quince_engine::persistence::{Effects, Persistence};
use quince_engine::{Client, Engine, EngineOptions, ManualClock, Reply, ReplyBuilder};
use quince_resp::{Decoded, RequestDecoder};

const START_MS: i64 = 1_700_000_000_000;
const DATABASES: usize = 3;

/// One recorded hand-over: when, and the commands as (database, args).
#[derive(Debug, Clone)]
struct Recorded {
    at_ms: i64,
    wrap: bool,
    ops: Vec<(usize, Vec<Vec<u8>>)>,
}

/// A persistence layer that keeps the effects it is fed.
struct Recorder {
    clock: Arc<ManualClock>,
    log: Mutex<Vec<Recorded>>,
}

impl Persistence for Recorder {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn wants_effects(&self) -> bool {
        true
    }

    fn feed(&self, effects: &Effects) {
        let ops = effects
            .ops()
            .map(|(db, resp)| {
                let mut decoder = RequestDecoder::new(quince_resp::DEFAULT_PROTO_MAX_BULK_LEN);
                assert_eq!(decoder.decode(resp), Ok(Decoded::Request { len: resp.len() }), "one command per op");
                (db, decoder.args(resp).map(|a| a.to_vec()).collect())
            })
            .collect();
        let recorded = Recorded { at_ms: quince_engine::Clock::now_ms(&*self.clock), wrap: effects.needs_wrap(), ops };
        self.log.lock().push(recorded);
    }
}

fn engine_with(clock: Arc<ManualClock>) -> Engine {
    let mut config = quince_engine::Config::default();
    config.set("databases", &[DATABASES.to_string()]).unwrap();
    // Small encodings so conversions (and SPOP's rebuilt intsets) happen.
    config.set("set-max-intset-entries", &["4".into()]).unwrap();
    config.set("stream-node-max-entries", &["3".into()]).unwrap();
    Engine::new(EngineOptions { clock, shards: 4, config, ..EngineOptions::default() })
}

fn run(engine: &Engine, client: &mut Client, args: &[Vec<u8>]) -> Option<Reply> {
    let args: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
    let mut out = ReplyBuilder::new();
    engine.execute(client, &args, &mut out);
    out.take().into_iter().next()
}

fn run_str(engine: &Engine, client: &mut Client, args: &[&str]) -> Reply {
    let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
    run(engine, client, &args).expect("a reply")
}

#[derive(Debug, Clone)]
enum Op {
    /// A command on the main client.
    Cmd(Vec<String>),
    /// A (blocking) command on waiter client `n`, if it is not blocked already.
    Wait(usize, Vec<String>),
    /// MULTI, the commands, EXEC.
    Multi(Vec<Vec<String>>),
    /// XCLAIM of the `n`-th pending entry of x0's group g (found at run time).
    ClaimPending {
        nth: usize,
        consumer: &'static str,
        idle: Option<u32>,
        lastid: bool,
    },
    Advance(i64),
    ActiveExpire,
}

fn words(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

fn pick<T: Clone + std::fmt::Debug + 'static>(items: &'static [T]) -> impl Strategy<Value = T> {
    prop::sample::select(items)
}

const STRS: &[&str] = &["s0", "s1"];
const LISTS: &[&str] = &["l0", "l1"];
const SETS: &[&str] = &["t0", "t1"];
const ZSETS: &[&str] = &["z0", "z1"];
const ALL_KEYS: &[&str] = &["s0", "s1", "l0", "l1", "t0", "t1", "h0", "z0", "z1", "x0"];
const MEMBERS: &[&str] = &["1", "2", "3", "4", "5", "a", "b", "c"];

fn string_cmd() -> impl Strategy<Value = Vec<String>> {
    let expiry = prop_oneof![
        Just(vec![]),
        (1u32..3).prop_map(|n| vec!["EX".to_string(), n.to_string()]),
        (1u32..2500).prop_map(|n| vec!["PX".to_string(), n.to_string()]),
        (-2i64..3).prop_map(|n| vec!["EXAT".to_string(), (START_MS / 1000 + n).to_string()]),
        (-500i64..4000).prop_map(|n| vec!["PXAT".to_string(), (START_MS + n).to_string()]),
        Just(vec!["KEEPTTL".to_string()]),
    ];
    let cond = prop_oneof![Just(vec![]), Just(vec!["NX".to_string()]), Just(vec!["XX".to_string()])];
    let getex_opt = prop_oneof![
        Just(vec![]),
        Just(vec!["PERSIST".to_string()]),
        (1u32..3).prop_map(|n| vec!["EX".to_string(), n.to_string()]),
        (1u32..2500).prop_map(|n| vec!["PX".to_string(), n.to_string()]),
        (-500i64..4000).prop_map(|n| vec!["PXAT".to_string(), (START_MS + n).to_string()]),
        (-2i64..3).prop_map(|n| vec!["EXAT".to_string(), (START_MS / 1000 + n).to_string()]),
    ];
    prop_oneof![
        4 => (pick(STRS), pick(MEMBERS), expiry, cond, any::<bool>()).prop_map(|(k, v, e, c, get)| {
            let mut cmd = words(&["SET", k, v]);
            cmd.extend(c);
            if get {
                cmd.push("GET".into());
            }
            cmd.extend(e);
            cmd
        }),
        1 => (pick(STRS), 1u32..3, pick(MEMBERS)).prop_map(|(k, n, v)| words(&["SETEX", k, &n.to_string(), v])),
        1 => (pick(STRS), 1u32..2500, pick(MEMBERS)).prop_map(|(k, n, v)| words(&["PSETEX", k, &n.to_string(), v])),
        1 => (pick(STRS), pick(MEMBERS)).prop_map(|(k, v)| words(&["GETSET", k, v])),
        1 => pick(STRS).prop_map(|k| words(&["GETDEL", k])),
        2 => (pick(STRS), getex_opt).prop_map(|(k, o)| {
            let mut cmd = words(&["GETEX", k]);
            cmd.extend(o);
            cmd
        }),
        2 => (pick(STRS), pick(&["1.5", "0.1", "-3", "1e3"][..])).prop_map(|(k, n)| words(&["INCRBYFLOAT", k, n])),
        1 => (pick(STRS), pick(MEMBERS)).prop_map(|(k, v)| words(&["APPEND", k, v])),
        1 => pick(STRS).prop_map(|k| words(&["INCR", k])),
    ]
}

fn expire_cmd() -> impl Strategy<Value = Vec<String>> {
    let cond = prop_oneof![
        3 => Just(None),
        1 => pick(&["NX", "XX", "GT", "LT"][..]).prop_map(Some),
    ];
    (pick(ALL_KEYS), 0usize..5, -1i64..4, cond).prop_map(|(k, form, n, cond)| {
        let (name, arg) = match form {
            0 => ("EXPIRE", n.to_string()),
            1 => ("PEXPIRE", (n * 700).to_string()),
            2 => ("EXPIREAT", (START_MS / 1000 + n).to_string()),
            3 => ("PEXPIREAT", (START_MS + n * 900).to_string()),
            _ => ("PERSIST", String::new()),
        };
        let mut cmd = words(&[name, k]);
        if name != "PERSIST" {
            cmd.push(arg);
            cmd.extend(cond.map(str::to_string));
        }
        cmd
    })
}

fn list_cmd() -> impl Strategy<Value = Vec<String>> {
    let dir = || pick(&["LEFT", "RIGHT", "left"][..]);
    prop_oneof![
        4 => (pick(LISTS), prop::collection::vec(pick(MEMBERS), 1..4), any::<bool>()).prop_map(|(k, vs, left)| {
            let mut cmd = words(&[if left { "LPUSH" } else { "RPUSH" }, k]);
            cmd.extend(vs.iter().map(|v| v.to_string()));
            cmd
        }),
        2 => (pick(LISTS), prop::option::of(0u32..4), any::<bool>()).prop_map(|(k, n, left)| {
            let mut cmd = words(&[if left { "LPOP" } else { "RPOP" }, k]);
            cmd.extend(n.map(|n| n.to_string()));
            cmd
        }),
        1 => (dir(), 1u32..4).prop_map(|(d, n)| words(&["LMPOP", "2", "l0", "l1", d, "COUNT", &n.to_string()])),
        1 => (pick(LISTS), pick(LISTS), dir(), dir()).prop_map(|(a, b, d1, d2)| words(&["LMOVE", a, b, d1, d2])),
        1 => (pick(LISTS), pick(LISTS)).prop_map(|(a, b)| words(&["RPOPLPUSH", a, b])),
        1 => (dir(), 1u32..3).prop_map(|(d, n)| words(&["BLMPOP", "0.01", "2", "l1", "l0", d, "COUNT", &n.to_string()])),
        1 => Just(words(&["BLPOP", "l0", "l1", "0.01"])),
        1 => (pick(LISTS), pick(LISTS)).prop_map(|(a, b)| words(&["BLMOVE", a, b, "RIGHT", "left", "0.01"])),
    ]
}

fn waiter_cmd() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        Just(words(&["BLPOP", "l0", "l1", "0"])),
        Just(words(&["BRPOP", "l1", "0"])),
        Just(words(&["BLMOVE", "l0", "l1", "LEFT", "RIGHT", "0"])),
        Just(words(&["BRPOPLPUSH", "l1", "l0", "0"])),
        Just(words(&["BLMPOP", "0", "2", "l0", "l1", "RIGHT", "COUNT", "2"])),
        Just(words(&["BZPOPMIN", "z0", "z1", "0"])),
        Just(words(&["BZPOPMAX", "z1", "0"])),
        Just(words(&["BZMPOP", "0", "1", "z0", "MAX", "COUNT", "2"])),
        Just(words(&["XREADGROUP", "GROUP", "g", "cw", "COUNT", "2", "BLOCK", "0", "STREAMS", "x0", ">"])),
    ]
}

fn set_cmd() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        4 => (pick(SETS), prop::collection::vec(pick(MEMBERS), 1..6)).prop_map(|(k, vs)| {
            let mut cmd = words(&["SADD", k]);
            cmd.extend(vs.iter().map(|v| v.to_string()));
            cmd
        }),
        2 => pick(SETS).prop_map(|k| words(&["SPOP", k])),
        3 => (pick(SETS), 0u32..8).prop_map(|(k, n)| words(&["SPOP", k, &n.to_string()])),
        1 => (pick(SETS), pick(SETS), pick(MEMBERS)).prop_map(|(a, b, m)| words(&["SMOVE", a, b, m])),
        1 => (pick(SETS), pick(MEMBERS)).prop_map(|(k, m)| words(&["SREM", k, m])),
        1 => Just(words(&["SINTERSTORE", "t1", "t0", "t1"])),
    ]
}

fn hash_cmd() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        2 => (pick(MEMBERS), pick(MEMBERS)).prop_map(|(f, v)| words(&["HSET", "h0", f, v])),
        2 => (pick(MEMBERS), pick(&["1.5", "-0.25", "10"][..])).prop_map(|(f, n)| words(&["HINCRBYFLOAT", "h0", f, n])),
        1 => pick(MEMBERS).prop_map(|f| words(&["HDEL", "h0", f])),
    ]
}

fn zset_cmd() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        4 => (pick(ZSETS), 0u32..9, pick(MEMBERS)).prop_map(|(k, s, m)| words(&["ZADD", k, &s.to_string(), m])),
        1 => (pick(ZSETS), pick(MEMBERS)).prop_map(|(k, m)| words(&["ZINCRBY", k, "0.5", m])),
        2 => (pick(ZSETS), prop::option::of(0u32..3), any::<bool>()).prop_map(|(k, n, min)| {
            let mut cmd = words(&[if min { "ZPOPMIN" } else { "ZPOPMAX" }, k]);
            cmd.extend(n.map(|n| n.to_string()));
            cmd
        }),
        1 => (pick(&["MIN", "MAX"][..]), 1u32..3).prop_map(|(d, n)| words(&["ZMPOP", "2", "z0", "z1", d, "COUNT", &n.to_string()])),
        1 => Just(words(&["BZPOPMIN", "z1", "z0", "0.01"])),
        1 => (1u32..3).prop_map(|n| words(&["BZMPOP", "0.01", "2", "z1", "z0", "MIN", "COUNT", &n.to_string()])),
        1 => Just(words(&["GEOADD", "z1", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"])),
    ]
}

fn stream_cmd() -> impl Strategy<Value = Vec<String>> {
    let id = prop_oneof![
        3 => Just("*".to_string()),
        1 => (0i64..3).prop_map(|n| format!("{}-*", START_MS + n * 1000)),
    ];
    let trim = prop_oneof![
        2 => Just(vec![]),
        1 => (0u32..5).prop_map(|n| words(&["MAXLEN", "~", &n.to_string()])),
        1 => (0u32..5).prop_map(|n| words(&["MAXLEN", &n.to_string()])),
        1 => (0u32..5, 1u32..4).prop_map(|(n, l)| words(&["MAXLEN", "~", &n.to_string(), "LIMIT", &l.to_string()])),
        1 => (0i64..3).prop_map(|n| words(&["MINID", "~", &(START_MS + n * 700).to_string()])),
    ];
    prop_oneof![
        5 => (trim, id, pick(MEMBERS)).prop_map(|(t, id, v)| {
            let mut cmd = words(&["XADD", "x0"]);
            cmd.extend(t);
            cmd.push(id);
            cmd.extend(words(&["f", v]));
            cmd
        }),
        1 => (0u32..4).prop_map(|n| words(&["XTRIM", "x0", "MAXLEN", "~", &n.to_string()])),
        1 => (0u32..4).prop_map(|n| words(&["XTRIM", "x0", "MAXLEN", &n.to_string()])),
        1 => Just(words(&["XGROUP", "CREATE", "x0", "g", "$", "MKSTREAM"])),
        2 => Just(words(&["XGROUP", "CREATE", "x0", "g", "0", "MKSTREAM"])),
        1 => Just(words(&["XGROUP", "CREATE", "x0", "g2", "0"])),
        5 => (pick(&["c1", "c2"][..]), any::<bool>(), pick(&["g", "g2"][..])).prop_map(|(c, noack, g)| {
            let mut cmd = words(&["XREADGROUP", "GROUP", g, c, "COUNT", "2"]);
            if noack {
                cmd.push("NOACK".into());
            }
            cmd.extend(words(&["STREAMS", "x0", ">"]));
            cmd
        }),
        1 => pick(&["c1", "c2"][..]).prop_map(|c| words(&["XREADGROUP", "GROUP", "g", c, "STREAMS", "x0", "0"])),
        2 => (pick(&["c1", "c2", "c3"][..]), 0u32..600, any::<bool>()).prop_map(|(c, idle, justid)| {
            let mut cmd = words(&["XAUTOCLAIM", "x0", "g", c, &idle.to_string(), "0-0", "COUNT", "2"]);
            if justid {
                cmd.push("JUSTID".into());
            }
            cmd
        }),
        1 => Just(words(&["XDEL", "x0", &format!("{START_MS}-0")])),
        1 => Just(words(&["XGROUP", "DELCONSUMER", "x0", "g", "c1"])),
        1 => Just(words(&["XGROUP", "SETID", "x0", "g", "0"])),
    ]
}

fn script_cmd() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        Just(words(&[
            "EVAL",
            "redis.call('SET', KEYS[1], ARGV[1], 'PX', 800) return redis.call('INCRBYFLOAT', KEYS[2], '1.5')",
            "2",
            "s0",
            "s1",
            "v",
        ])),
        Just(words(&["EVAL", "return redis.call('SPOP', KEYS[1], 2)", "1", "t0"])),
        Just(words(&[
            "EVAL",
            "redis.call('RPUSH', KEYS[1], 'a', 'b') return redis.call('BLPOP', KEYS[1], 0)",
            "1",
            "l0"
        ])),
        Just(words(&[
            "EVAL",
            "redis.call('XADD', KEYS[1], '*', 'f', 'v') return redis.call('EXPIRE', KEYS[1], 2)",
            "1",
            "x0"
        ])),
        Just(words(&["EVAL", "return redis.call('GET', KEYS[1])", "1", "s0"])),
        Just(words(&["FUNCTION", "LOAD", "REPLACE", LIBRARY])),
        Just(words(&["FUNCTION", "DELETE", "effects"])),
        Just(words(&["FUNCTION", "FLUSH"])),
        (pick(SETS), pick(ZSETS)).prop_map(|(s, z)| words(&["FCALL", "popboth", "2", s, z])),
    ]
}

/// A function library whose function pops from a set and a sorted set.
const LIBRARY: &str = "#!lua name=effects\nredis.register_function('popboth', function(keys, args) \
                       redis.call('SPOP', keys[1]) return redis.call('ZPOPMIN', keys[2]) end)";

fn db_cmd() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        3 => (0..DATABASES).prop_map(|d| words(&["SELECT", &d.to_string()])),
        1 => Just(words(&["FLUSHDB"])),
        1 => (0..DATABASES, 0..DATABASES).prop_map(|(a, b)| words(&["SWAPDB", &a.to_string(), &b.to_string()])),
        1 => pick(ALL_KEYS).prop_map(|k| words(&["MOVE", k, "1"])),
        1 => (pick(ALL_KEYS), pick(ALL_KEYS)).prop_map(|(a, b)| words(&["COPY", a, b, "DB", "2", "REPLACE"])),
        1 => Just(words(&["RANDOMKEY"])),
        1 => Just(words(&["SCAN", "0", "COUNT", "100"])),
        1 => Just(words(&["KEYS", "*"])),
        1 => (pick(&["lazyfree-lazy-expire", "lazyfree-lazy-user-del"][..]), pick(&["yes", "no"][..]))
            .prop_map(|(option, value)| words(&["CONFIG", "SET", option, value])),
    ]
}

fn any_cmd() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        4 => string_cmd(),
        3 => expire_cmd(),
        3 => list_cmd(),
        3 => set_cmd(),
        2 => hash_cmd(),
        3 => zset_cmd(),
        8 => stream_cmd(),
        1 => script_cmd(),
        1 => db_cmd(),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => any_cmd().prop_map(Op::Cmd),
        3 => (0usize..3, waiter_cmd()).prop_map(|(n, c)| Op::Wait(n, c)),
        2 => prop::collection::vec(any_cmd(), 1..5).prop_map(Op::Multi),
        4 => (0usize..3, pick(&["c1", "c2", "c3"][..]), prop::option::of(0u32..1000), any::<bool>())
            .prop_map(|(nth, consumer, idle, lastid)| Op::ClaimPending { nth, consumer, idle, lastid }),
        4 => (1i64..1500).prop_map(Op::Advance),
        1 => Just(Op::ActiveExpire),
    ]
}

/// Runs the ops on A, returns A, its clock and what the recorder saw.
fn run_a(ops: &[Op]) -> (Engine, Arc<ManualClock>, Vec<Recorded>) {
    let clock = Arc::new(ManualClock::new(START_MS));
    let engine = engine_with(clock.clone());
    let recorder = Arc::new(Recorder { clock: clock.clone(), log: Mutex::new(Vec::new()) });
    engine.set_persistence(recorder.clone());
    let mut main = engine.new_client();
    let mut waiters: Vec<Client> = (0..3).map(|_| engine.new_client()).collect();
    let as_bytes = |cmd: &[String]| cmd.iter().map(|a| a.as_bytes().to_vec()).collect::<Vec<_>>();
    for op in ops {
        match op {
            Op::Cmd(cmd) => {
                run(&engine, &mut main, &as_bytes(cmd));
            }
            Op::Wait(n, cmd) => {
                let waiter = &mut waiters[*n];
                if waiter.blocked.is_none() {
                    run(&engine, waiter, &as_bytes(cmd));
                }
            }
            Op::Multi(cmds) => {
                run_str(&engine, &mut main, &["MULTI"]);
                for cmd in cmds {
                    run(&engine, &mut main, &as_bytes(cmd));
                }
                run_str(&engine, &mut main, &["EXEC"]);
            }
            Op::ClaimPending { nth, consumer, idle, lastid } => {
                let db = main.db;
                run_str(&engine, &mut main, &["SELECT", "0"]);
                let pending = run_str(&engine, &mut main, &["XPENDING", "x0", "g", "-", "+", "10"]);
                if let Reply::Array(entries) = pending {
                    if let Some(Reply::Array(entry)) = entries.get(*nth) {
                        let Reply::Bulk(id) = &entry[0] else { panic!("an ID") };
                        let id = String::from_utf8(id.clone()).unwrap();
                        let mut cmd = words(&["XCLAIM", "x0", "g", consumer, "0", &id, "9999-0"]);
                        if let Some(idle) = idle {
                            cmd.extend(words(&["IDLE", &idle.to_string()]));
                        }
                        if *lastid {
                            cmd.extend(words(&["LASTID", &format!("{}-0", START_MS + 5000)]));
                        }
                        run(&engine, &mut main, &as_bytes(&cmd));
                    }
                }
                run_str(&engine, &mut main, &["SELECT", &db.to_string()]);
            }
            Op::Advance(ms) => clock.advance_ms(*ms),
            Op::ActiveExpire => {
                engine.active_expire_cycle(u64::MAX);
            }
        }
        // The main client never stays blocked: its wait times out at once.
        if main.blocked.is_some() {
            engine.check_block_timeout(&main, i64::MAX);
            let _ = engine.blocked_reply(&mut main);
        }
        for waiter in &mut waiters {
            if waiter.blocked.is_some() {
                let _ = engine.blocked_reply(waiter);
            }
        }
    }
    let log = std::mem::take(&mut *recorder.log.lock());
    (engine, clock, log)
}

/// How effects are applied to B.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Replay {
    /// All at the end time, as loading an append-only file: keys do not expire under the
    /// loading client and no time is already past (`Client::must_obey`).
    Load,
    /// Each at the time it was recorded, as a replica applies them.
    Timed,
}

/// Replays the log into a fresh engine; every command must succeed.
fn replay(log: &[Recorded], end_ms: i64, how: Replay) -> Result<Engine, TestCaseError> {
    let clock = Arc::new(ManualClock::new(START_MS));
    let engine = engine_with(clock.clone());
    let mut client = engine.new_client();
    client.must_obey = true;
    let set_clock = |ms: i64| {
        let now = quince_engine::Clock::now_ms(&*clock);
        clock.advance_ms(ms - now);
    };
    set_clock(if how == Replay::Load { end_ms } else { START_MS });
    for recorded in log {
        if how == Replay::Timed {
            set_clock(recorded.at_ms);
        }
        if recorded.wrap {
            prop_assert_eq!(run_str(&engine, &mut client, &["MULTI"]), Reply::Simple("OK".into()));
        }
        for (db, args) in &recorded.ops {
            if client.db != *db {
                run_str(&engine, &mut client, &["SELECT", &db.to_string()]);
            }
            let reply = run(&engine, &mut client, args).expect("a reply");
            let shown: Vec<String> = args.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect();
            prop_assert!(!matches!(reply, Reply::Error(_)), "replaying {:?} failed: {:?}", shown, reply);
        }
        if recorded.wrap {
            let reply = run_str(&engine, &mut client, &["EXEC"]);
            if let Reply::Array(replies) = &reply {
                for r in replies {
                    prop_assert!(!matches!(r, Reply::Error(_)), "in {:?}: {:?}", recorded.ops, r);
                }
            } else {
                prop_assert!(false, "EXEC failed: {:?}", reply);
            }
        }
    }
    set_clock(end_ms);
    Ok(engine)
}

fn sorted(reply: Reply) -> Reply {
    match reply {
        Reply::Array(mut items) | Reply::Set(mut items) => {
            items.sort_by_key(|r| format!("{r:?}"));
            Reply::Array(items)
        }
        other => other,
    }
}

/// Hash pairs as sorted (field, value) couples.
fn sorted_pairs(reply: Reply) -> Reply {
    match reply {
        Reply::Array(items) => {
            let mut pairs: Vec<Reply> = items.chunks(2).map(|p| Reply::Array(p.to_vec())).collect();
            pairs.sort_by_key(|r| format!("{r:?}"));
            Reply::Array(pairs)
        }
        other => other,
    }
}

/// A stream's group, without what Redis 7.0 itself does not replicate: the entries-read
/// counter and lag (XCLAIM ... LASTID moves the last ID only), and consumers with nothing
/// pending (a history read creates one without logging it); idle times of consumers.
fn groups_view(engine: &Engine, client: &mut Client, key: &str) -> Vec<Reply> {
    let mut view = Vec::new();
    let Reply::Array(groups) = run_str(engine, client, &["XINFO", "GROUPS", key]) else { return view };
    for group in groups {
        let Reply::Array(fields) = group else { continue };
        let field =
            |name: &str| fields.chunks(2).find(|p| p[0] == Reply::Bulk(name.as_bytes().to_vec())).map(|p| p[1].clone());
        let Some(Reply::Bulk(name)) = field("name") else { continue };
        let name = String::from_utf8(name).unwrap();
        view.push(Reply::Bulk(name.clone().into_bytes()));
        view.push(field("last-delivered-id").unwrap());
        view.push(field("pending").unwrap());
        view.push(run_str(engine, client, &["XPENDING", key, &name, "-", "+", "1000"]));
        if let Reply::Array(consumers) = run_str(engine, client, &["XINFO", "CONSUMERS", key, &name]) {
            for consumer in consumers {
                let Reply::Array(fields) = consumer else { continue };
                if fields.get(3) != Some(&Reply::Integer(0)) {
                    view.push(fields[1].clone());
                    view.push(fields[3].clone());
                }
            }
        }
    }
    view
}

/// Everything a key holds that a replay must reproduce.
fn key_view(engine: &Engine, client: &mut Client, key: &str) -> Vec<Reply> {
    let kind = run_str(engine, client, &["TYPE", key]);
    let mut view = vec![kind.clone(), run_str(engine, client, &["PTTL", key])];
    let Reply::Simple(kind) = kind else { return view };
    match kind.as_str() {
        "string" => view.push(run_str(engine, client, &["GET", key])),
        "list" => view.push(run_str(engine, client, &["LRANGE", key, "0", "-1"])),
        "set" => view.push(sorted(run_str(engine, client, &["SMEMBERS", key]))),
        "hash" => view.push(sorted_pairs(run_str(engine, client, &["HGETALL", key]))),
        "zset" => view.push(run_str(engine, client, &["ZRANGE", key, "0", "-1", "WITHSCORES"])),
        "stream" => {
            view.push(run_str(engine, client, &["XRANGE", key, "-", "+"]));
            if let Reply::Array(info) = run_str(engine, client, &["XINFO", "STREAM", key]) {
                for pair in info.chunks(2) {
                    let keep = ["length", "last-generated-id", "max-deleted-entry-id", "entries-added", "groups"];
                    if keep.iter().any(|k| pair[0] == Reply::Bulk(k.as_bytes().to_vec())) {
                        view.extend(pair.iter().cloned());
                    }
                }
            }
            view.extend(groups_view(engine, client, key));
        }
        other => panic!("unexpected type {other}"),
    }
    view
}

fn dataset(engine: &Engine) -> Vec<(usize, String, Vec<Reply>)> {
    let mut client = engine.new_client();
    // The function libraries are part of what the log rebuilds.
    let mut all =
        vec![(0, "(functions)".to_string(), vec![run_str(engine, &mut client, &["FUNCTION", "LIST", "WITHCODE"])])];
    for db in 0..DATABASES {
        run_str(engine, &mut client, &["SELECT", &db.to_string()]);
        let Reply::Array(keys) = run_str(engine, &mut client, &["KEYS", "*"]) else { panic!("KEYS") };
        let mut keys: Vec<String> = keys
            .into_iter()
            .map(|k| match k {
                Reply::Bulk(b) => String::from_utf8(b).unwrap(),
                other => panic!("{other:?}"),
            })
            .collect();
        keys.sort();
        for key in keys {
            let view = key_view(engine, &mut client, &key);
            all.push((db, key, view));
        }
    }
    all
}

fn check(ops: &[Op]) -> Result<(), TestCaseError> {
    let (a, clock, log) = run_a(ops);
    let end_ms = quince_engine::Clock::now_ms(&*clock);
    let expected = dataset(&a);
    for how in [Replay::Load, Replay::Timed] {
        let b = replay(&log, end_ms, how)?;
        prop_assert_eq!(&expected, &dataset(&b), "{:?} replay of effects: {:#?}", how, log);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn replayed_effects_rebuild_the_same_dataset(ops in prop::collection::vec(op(), 1..60)) {
        check(&ops)?;
    }
}

/// The recorder sees what the rewrites promise, in a few fixed cases.
#[test]
fn fixed_rewrites() {
    let (_, _, log) = run_a(&[
        Op::Cmd(words(&["SET", "s0", "v", "EX", "10", "NX"])),
        Op::Cmd(words(&["INCRBYFLOAT", "s1", "1.5"])),
        Op::Cmd(words(&["RPUSH", "l0", "a", "b", "c"])),
        Op::Cmd(words(&["BLMPOP", "0", "1", "l0", "LEFT", "COUNT", "5"])),
        Op::Cmd(words(&["SADD", "t0", "1", "2", "3"])),
        Op::Cmd(words(&["SPOP", "t0", "2"])),
        Op::Cmd(words(&["EXPIRE", "t0", "-1"])),
    ]);
    let shown: Vec<(bool, Vec<String>)> = log
        .iter()
        .flat_map(|r| {
            r.ops.iter().map(move |(_, args)| {
                (r.wrap, args.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect::<Vec<_>>())
            })
        })
        .collect();
    let px = (START_MS + 10_000).to_string();
    assert_eq!(shown[0], (false, words(&["SET", "s0", "v", "PXAT", &px])));
    assert_eq!(shown[1], (false, words(&["SET", "s1", "1.5", "KEEPTTL"])));
    assert_eq!(shown[2].1, words(&["RPUSH", "l0", "a", "b", "c"]));
    assert_eq!(shown[3], (false, words(&["LPOP", "l0", "3"])));
    assert_eq!(shown[4].1, words(&["SADD", "t0", "1", "2", "3"]));
    assert!(shown[5].0 && shown[6].0, "SPOP's two SREMs are wrapped");
    assert_eq!(&shown[5].1[..2], &words(&["SREM", "t0"])[..]);
    assert_eq!(shown[7], (false, words(&["DEL", "t0"])));
    assert_eq!(shown.len(), 8);
}

/// A key that expired unnoticed is deleted by SWAPDB's check of watched keys: that deletion
/// must be logged before the swap, or a replay would delete the other database's key.
#[test]
fn deletion_found_by_swapdb_is_logged_before_it() {
    let ops = [
        Op::Cmd(words(&["SET", "s0", "a", "PX", "100"])),
        Op::Cmd(words(&["SELECT", "1"])),
        Op::Cmd(words(&["SET", "s0", "b"])),
        Op::Cmd(words(&["SELECT", "0"])),
        Op::Wait(0, words(&["WATCH", "s0"])),
        Op::Advance(200),
        Op::Cmd(words(&["SWAPDB", "0", "1"])),
        Op::Cmd(words(&["GET", "s0"])),
    ];
    check(&ops).unwrap();
}
