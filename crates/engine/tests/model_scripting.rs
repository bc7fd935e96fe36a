//! Property test: random sequences of scripts (EVAL with KEYS/ARGV, cached EVALSHA, FCALL)
//! that read and write string keys and lists, run in-process, agree with a simple model.
//! Scripts touch keys they did not declare too (they hold the transaction gate).

use std::collections::BTreeMap;

use proptest::prelude::*;
use quince_engine::{Engine, EngineOptions, Reply, ReplyBuilder};

const INCR: &str = "return redis.call('incrby', KEYS[1], ARGV[1])";
const PUSH_AND_LEN: &str = "redis.call('rpush', KEYS[1], unpack(ARGV)) return redis.call('llen', KEYS[1])";
const SWAP: &str = "local a = redis.call('get', KEYS[1]) local b = redis.call('get', KEYS[2]) \
     if a then redis.call('set', KEYS[2], a) else redis.call('del', KEYS[2]) end \
     if b then redis.call('set', KEYS[1], b) else redis.call('del', KEYS[1]) end return {a or false, b or false}";
const UNDECLARED_SUM: &str = "local s = 0 for i = 0, 3 do local v = redis.pcall('get', 'n' .. i) \
     if type(v) == 'string' and tonumber(v) then s = s + tonumber(v) end end return s";

#[derive(Debug, Clone)]
enum Op {
    Incr(u8, i64),
    Push(u8, Vec<u8>),
    Swap(u8, u8),
    Sum,
    FcallIncr(u8, i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..4, -100i64..100).prop_map(|(k, n)| Op::Incr(k, n)),
        (0u8..4, proptest::collection::vec(0u8..10, 1..4)).prop_map(|(k, v)| Op::Push(k, v)),
        (0u8..4, 0u8..4).prop_map(|(a, b)| Op::Swap(a, b)),
        Just(Op::Sum),
        (0u8..4, -100i64..100).prop_map(|(k, n)| Op::FcallIncr(k, n)),
    ]
}

#[derive(Debug, Clone, PartialEq)]
enum Val {
    Int(i64),
    List(Vec<String>),
}

fn run(engine: &Engine, client: &mut quince_engine::Client, args: &[String]) -> Reply {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let mut out = ReplyBuilder::new();
    engine.execute(client, &args, &mut out);
    out.take().remove(0)
}

fn s(v: &str) -> String {
    v.to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn scripts_agree_with_model(ops in proptest::collection::vec(op(), 1..30)) {
        let engine = Engine::new(EngineOptions { shards: 8, ..EngineOptions::default() });
        let mut client = engine.new_client();
        let lib = "#!lua name=m\nredis.register_function('fincr', function(k, a) return redis.call('incrby', k[1], a[1]) end)";
        prop_assert_eq!(run(&engine, &mut client, &[s("FUNCTION"), s("LOAD"), s(lib)]), Reply::Bulk(b"m".to_vec()));
        let sha = match run(&engine, &mut client, &[s("SCRIPT"), s("LOAD"), s(INCR)]) {
            Reply::Bulk(b) => String::from_utf8(b).unwrap(),
            other => panic!("{other:?}"),
        };
        let mut model: BTreeMap<String, Val> = BTreeMap::new();
        for (i, op) in ops.iter().enumerate() {
            match op {
                Op::Incr(k, n) | Op::FcallIncr(k, n) => {
                    let key = format!("n{k}");
                    let reply = match op {
                        Op::Incr(..) if i % 2 == 0 => run(&engine, &mut client, &[s("EVAL"), s(INCR), s("1"), key.clone(), n.to_string()]),
                        Op::Incr(..) => run(&engine, &mut client, &[s("EVALSHA"), sha.clone(), s("1"), key.clone(), n.to_string()]),
                        _ => run(&engine, &mut client, &[s("FCALL"), s("fincr"), s("1"), key.clone(), n.to_string()]),
                    };
                    match model.get(&key) {
                        Some(Val::List(_)) => prop_assert!(matches!(reply, Reply::Error(ref e) if e.starts_with("WRONGTYPE")), "{:?}", reply),
                        Some(Val::Int(v)) => {
                            let nv = v + n;
                            prop_assert_eq!(reply, Reply::Integer(nv));
                            model.insert(key, Val::Int(nv));
                        }
                        None => {
                            prop_assert_eq!(reply, Reply::Integer(*n));
                            model.insert(key, Val::Int(*n));
                        }
                    }
                }
                Op::Push(k, items) => {
                    let key = format!("n{k}");
                    let mut args = vec![s("EVAL"), s(PUSH_AND_LEN), s("1"), key.clone()];
                    args.extend(items.iter().map(|v| v.to_string()));
                    let reply = run(&engine, &mut client, &args);
                    match model.get_mut(&key) {
                        Some(Val::Int(_)) => prop_assert!(matches!(reply, Reply::Error(ref e) if e.starts_with("WRONGTYPE")), "{:?}", reply),
                        Some(Val::List(l)) => {
                            l.extend(items.iter().map(|v| v.to_string()));
                            prop_assert_eq!(reply, Reply::Integer(l.len() as i64));
                        }
                        None => {
                            model.insert(key, Val::List(items.iter().map(|v| v.to_string()).collect()));
                            prop_assert_eq!(reply, Reply::Integer(items.len() as i64));
                        }
                    }
                }
                Op::Swap(a, b) => {
                    let (ka, kb) = (format!("n{a}"), format!("n{b}"));
                    let reply = run(&engine, &mut client, &[s("EVAL"), s(SWAP), s("2"), ka.clone(), kb.clone()]);
                    let is_list = |k: &String| matches!(model.get(k), Some(Val::List(_)));
                    if is_list(&ka) || is_list(&kb) {
                        prop_assert!(matches!(reply, Reply::Error(_)), "{:?}", reply);
                        // GET failed before any write: nothing changed.
                        continue;
                    }
                    let va = model.get(&ka).cloned();
                    let vb = model.get(&kb).cloned();
                    let as_reply = |v: &Option<Val>| match v {
                        Some(Val::Int(n)) => Reply::Bulk(n.to_string().into_bytes()),
                        _ => Reply::Null,
                    };
                    prop_assert_eq!(reply, Reply::Array(vec![as_reply(&va), as_reply(&vb)]));
                    match vb { Some(v) => { model.insert(ka.clone(), v); } None => { model.remove(&ka); } }
                    match va { Some(v) => { model.insert(kb.clone(), v); } None => { model.remove(&kb); } }
                }
                Op::Sum => {
                    let reply = run(&engine, &mut client, &[s("EVAL"), s(UNDECLARED_SUM), s("0")]);
                    let sum: i64 = model.values().map(|v| match v { Val::Int(n) => *n, _ => 0 }).sum();
                    prop_assert_eq!(reply, Reply::Integer(sum));
                }
            }
        }
    }
}
