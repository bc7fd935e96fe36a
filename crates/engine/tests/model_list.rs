//! Property test: random list command sequences run through the engine and through a
//! plain `VecDeque` model of each list must agree on every reply and on the final state.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use proptest::prelude::*;
use quince_engine::{Client, Engine, EngineOptions, ManualClock, Reply, ReplyBuilder};

const KEYS: [&str; 3] = ["{l}a", "{l}b", "{l}c"];
const VALUES: [&str; 4] = ["x", "y", "1", "22"];

#[derive(Debug, Clone)]
enum Op {
    Push { key: usize, left: bool, values: Vec<usize> },
    Pop { key: usize, left: bool, count: Option<usize> },
    Range { key: usize, start: i64, stop: i64 },
    Index { key: usize, index: i64 },
    Set { key: usize, index: i64, value: usize },
    Insert { key: usize, after: bool, pivot: usize, value: usize },
    Rem { key: usize, count: i64, value: usize },
    Trim { key: usize, start: i64, stop: i64 },
    Move { src: usize, dst: usize, from_left: bool, to_left: bool },
    Pos { key: usize, value: usize, rank: i64 },
    Len { key: usize },
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0..KEYS.len();
    let value = 0..VALUES.len();
    let index = -6i64..6;
    prop_oneof![
        (key.clone(), any::<bool>(), prop::collection::vec(value.clone(), 1..4))
            .prop_map(|(key, left, values)| Op::Push { key, left, values }),
        (key.clone(), any::<bool>(), prop::option::of(0usize..4)).prop_map(|(key, left, count)| Op::Pop {
            key,
            left,
            count
        }),
        (key.clone(), index.clone(), index.clone()).prop_map(|(key, start, stop)| Op::Range { key, start, stop }),
        (key.clone(), index.clone()).prop_map(|(key, index)| Op::Index { key, index }),
        (key.clone(), index.clone(), value.clone()).prop_map(|(key, index, value)| Op::Set { key, index, value }),
        (key.clone(), any::<bool>(), value.clone(), value.clone()).prop_map(|(key, after, pivot, value)| Op::Insert {
            key,
            after,
            pivot,
            value
        }),
        (key.clone(), -2i64..3, value.clone()).prop_map(|(key, count, value)| Op::Rem { key, count, value }),
        (key.clone(), index.clone(), index.clone()).prop_map(|(key, start, stop)| Op::Trim { key, start, stop }),
        (key.clone(), key.clone(), any::<bool>(), any::<bool>()).prop_map(|(src, dst, from_left, to_left)| Op::Move {
            src,
            dst,
            from_left,
            to_left
        }),
        (key.clone(), value.clone(), prop_oneof![1i64..3, -2i64..0]).prop_map(|(key, value, rank)| Op::Pos {
            key,
            value,
            rank
        }),
        key.prop_map(|key| Op::Len { key }),
    ]
}

fn bulk(s: &[u8]) -> Reply {
    Reply::Bulk(s.to_vec())
}

fn array(items: impl IntoIterator<Item = Vec<u8>>) -> Reply {
    Reply::Array(items.into_iter().map(|i| bulk(&i)).collect())
}

/// Redis's LRANGE/LTRIM index clamping: the inclusive range, or None when empty.
fn clamp(len: usize, start: i64, stop: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 { (len + start).max(0) } else { start };
    let stop = if stop < 0 { len + stop } else { stop.min(len - 1) };
    (start <= stop && start < len).then_some((start as usize, stop as usize))
}

/// The model: what each command should reply, applied to plain deques.
fn model_apply(lists: &mut HashMap<usize, VecDeque<Vec<u8>>>, op: &Op) -> Reply {
    let v = |i: usize| VALUES[i].as_bytes().to_vec();
    let reply = match op {
        Op::Push { key, left, values } => {
            let list = lists.entry(*key).or_default();
            for &value in values {
                if *left {
                    list.push_front(v(value))
                } else {
                    list.push_back(v(value))
                }
            }
            Reply::Integer(list.len() as i64)
        }
        Op::Pop { key, left, count } => match (lists.get_mut(key), count) {
            (None, Some(_)) => Reply::Null,
            (None, None) => Reply::Null,
            (Some(list), None) => bulk(&(if *left { list.pop_front() } else { list.pop_back() }).unwrap()),
            (Some(list), Some(n)) => {
                let items: Vec<Vec<u8>> =
                    (0..*n).map_while(|_| if *left { list.pop_front() } else { list.pop_back() }).collect();
                array(items)
            }
        },
        Op::Range { key, start, stop } => {
            let list = lists.get(key).cloned().unwrap_or_default();
            match clamp(list.len(), *start, *stop) {
                Some((a, b)) => array(list.range(a..=b).cloned()),
                None => Reply::Array(vec![]),
            }
        }
        Op::Index { key, index } => {
            let list = lists.get(key).cloned().unwrap_or_default();
            let i = if *index < 0 { list.len() as i64 + index } else { *index };
            match usize::try_from(i).ok().and_then(|i| list.get(i)) {
                Some(item) => bulk(item),
                None => Reply::Null,
            }
        }
        Op::Set { key, index, value } => match lists.get_mut(key) {
            None => Reply::Error("ERR no such key".into()),
            Some(list) => {
                let i = if *index < 0 { list.len() as i64 + index } else { *index };
                match usize::try_from(i).ok().filter(|&i| i < list.len()) {
                    Some(i) => {
                        list[i] = v(*value);
                        Reply::Simple("OK".into())
                    }
                    None => Reply::Error("ERR index out of range".into()),
                }
            }
        },
        Op::Insert { key, after, pivot, value } => match lists.get_mut(key) {
            None => Reply::Integer(0),
            Some(list) => match list.iter().position(|x| *x == v(*pivot)) {
                None => Reply::Integer(-1),
                Some(p) => {
                    list.insert(if *after { p + 1 } else { p }, v(*value));
                    Reply::Integer(list.len() as i64)
                }
            },
        },
        Op::Rem { key, count, value } => match lists.get_mut(key) {
            None => Reply::Integer(0),
            Some(list) => {
                let limit = if *count == 0 { usize::MAX } else { count.unsigned_abs() as usize };
                let mut positions: Vec<usize> = (0..list.len()).filter(|&i| list[i] == v(*value)).collect();
                if *count < 0 {
                    positions.reverse();
                }
                positions.truncate(limit);
                positions.sort_unstable();
                for p in positions.iter().rev() {
                    list.remove(*p);
                }
                Reply::Integer(positions.len() as i64)
            }
        },
        Op::Trim { key, start, stop } => {
            if let Some(list) = lists.get_mut(key) {
                *list = match clamp(list.len(), *start, *stop) {
                    Some((a, b)) => list.range(a..=b).cloned().collect(),
                    None => VecDeque::new(),
                };
            }
            Reply::Simple("OK".into())
        }
        Op::Move { src, dst, from_left, to_left } => {
            let Some(list) = lists.get_mut(src) else { return Reply::Null };
            let item = if *from_left { list.pop_front() } else { list.pop_back() }.unwrap();
            let dst_list = lists.entry(*dst).or_default();
            if *to_left {
                dst_list.push_front(item.clone())
            } else {
                dst_list.push_back(item.clone())
            }
            lists.retain(|_, l| !l.is_empty());
            bulk(&item)
        }
        Op::Pos { key, value, rank } => {
            let list = lists.get(key).cloned().unwrap_or_default();
            let mut hits: Vec<usize> = (0..list.len()).filter(|&i| list[i] == v(*value)).collect();
            if *rank < 0 {
                hits.reverse();
            }
            match hits.get(rank.unsigned_abs() as usize - 1) {
                Some(&i) => Reply::Integer(i as i64),
                None => Reply::Null,
            }
        }
        Op::Len { key } => Reply::Integer(lists.get(key).map_or(0, |l| l.len()) as i64),
    };
    lists.retain(|_, l| !l.is_empty());
    reply
}

fn command(op: &Op) -> Vec<String> {
    let k = |i: usize| KEYS[i].to_string();
    let v = |i: usize| VALUES[i].to_string();
    let end = |left: bool| if left { "LEFT" } else { "RIGHT" }.to_string();
    match op {
        Op::Push { key, left, values } => {
            let mut c = vec![if *left { "LPUSH" } else { "RPUSH" }.to_string(), k(*key)];
            c.extend(values.iter().map(|&x| v(x)));
            c
        }
        Op::Pop { key, left, count } => {
            let mut c = vec![if *left { "LPOP" } else { "RPOP" }.to_string(), k(*key)];
            c.extend(count.map(|n| n.to_string()));
            c
        }
        Op::Range { key, start, stop } => vec!["LRANGE".into(), k(*key), start.to_string(), stop.to_string()],
        Op::Index { key, index } => vec!["LINDEX".into(), k(*key), index.to_string()],
        Op::Set { key, index, value } => vec!["LSET".into(), k(*key), index.to_string(), v(*value)],
        Op::Insert { key, after, pivot, value } => {
            vec!["LINSERT".into(), k(*key), if *after { "AFTER" } else { "BEFORE" }.into(), v(*pivot), v(*value)]
        }
        Op::Rem { key, count, value } => vec!["LREM".into(), k(*key), count.to_string(), v(*value)],
        Op::Trim { key, start, stop } => vec!["LTRIM".into(), k(*key), start.to_string(), stop.to_string()],
        Op::Move { src, dst, from_left, to_left } => {
            vec!["LMOVE".into(), k(*src), k(*dst), end(*from_left), end(*to_left)]
        }
        Op::Pos { key, value, rank } => vec!["LPOS".into(), k(*key), v(*value), "RANK".into(), rank.to_string()],
        Op::Len { key } => vec!["LLEN".into(), k(*key)],
    }
}

fn run(engine: &Engine, client: &mut Client, args: &[String]) -> Reply {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let mut out = ReplyBuilder::new();
    engine.execute(client, &args, &mut out);
    out.take().remove(0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn engine_lists_agree_with_a_deque_model(ops in prop::collection::vec(op(), 1..60)) {
        let engine = Engine::new(EngineOptions { clock: Arc::new(ManualClock::new(0)), shards: 4, ..EngineOptions::default() });
        let mut client = engine.new_client();
        let mut model: HashMap<usize, VecDeque<Vec<u8>>> = HashMap::new();
        for op in &ops {
            let expected = model_apply(&mut model, op);
            let got = run(&engine, &mut client, &command(op));
            prop_assert_eq!(got, expected, "after {:?}", op);
        }
        for (i, key) in KEYS.iter().enumerate() {
            let got = run(&engine, &mut client, &["LRANGE".into(), key.to_string(), "0".into(), "-1".into()]);
            let expected = array(model.get(&i).cloned().unwrap_or_default());
            prop_assert_eq!(got, expected);
            let exists = run(&engine, &mut client, &["EXISTS".into(), key.to_string()]);
            prop_assert_eq!(exists, Reply::Integer(i64::from(model.contains_key(&i))));
        }
    }
}

/// LLEN/LRANGE/LINDEX/LPOS count keyspace hits as Redis's lookupKeyRead: a key of another
/// type is a hit (then WRONGTYPE), a missing key a miss.
#[test]
fn list_reads_count_keyspace_hits() {
    let engine =
        Engine::new(EngineOptions { clock: Arc::new(ManualClock::new(0)), shards: 4, ..EngineOptions::default() });
    let mut client = engine.new_client();
    let cmd = |c: &mut Client, args: &[&str]| run(&engine, c, &args.iter().map(|a| a.to_string()).collect::<Vec<_>>());
    cmd(&mut client, &["RPUSH", "l", "a"]);
    cmd(&mut client, &["SET", "s", "x"]);
    let counts = || {
        let s = &engine.stats;
        (
            s.keyspace_hits.load(std::sync::atomic::Ordering::Relaxed),
            s.keyspace_misses.load(std::sync::atomic::Ordering::Relaxed),
        )
    };
    let before = counts();
    cmd(&mut client, &["LLEN", "l"]);
    cmd(&mut client, &["LRANGE", "s", "0", "-1"]);
    cmd(&mut client, &["LINDEX", "missing", "0"]);
    cmd(&mut client, &["LPOS", "l", "a"]);
    let after = counts();
    assert_eq!((after.0 - before.0, after.1 - before.1), (3, 1));
}
