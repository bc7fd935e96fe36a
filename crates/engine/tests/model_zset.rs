//! Property test: random sorted set command sequences run through the engine in-process and
//! against a plain model (a sorted Vec per key) must agree, with small encoding limits so
//! sets keep converting between listpack and skiplist.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use quince_engine::{Client, Engine, EngineOptions, ManualClock, Reply, ReplyBuilder};

struct Harness {
    engine: Engine,
    client: Client,
}

impl Harness {
    fn new(entries: usize, value: usize) -> Self {
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        let engine = Engine::new(EngineOptions { clock, shards: 4, ..EngineOptions::default() });
        let client = engine.new_client();
        let mut h = Self { engine, client };
        h.run(&["CONFIG", "SET", "zset-max-listpack-entries", &entries.to_string()]);
        h.run(&["CONFIG", "SET", "zset-max-listpack-value", &value.to_string()]);
        h
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

/// Ascending by (score, member).
type Model = BTreeMap<String, Vec<(f64, String)>>;

fn sort(v: &mut [(f64, String)]) {
    v.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then_with(|| a.1.cmp(&b.1)));
}

fn bulk(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}

fn members(items: &[(f64, String)], withscores: bool) -> Reply {
    Reply::Array(
        items
            .iter()
            .map(|(s, m)| if withscores { Reply::Array(vec![bulk(m), Reply::Double(*s)]) } else { bulk(m) })
            .collect(),
    )
}

fn fmt(score: f64) -> String {
    if score == f64::INFINITY {
        "+inf".into()
    } else if score == f64::NEG_INFINITY {
        "-inf".into()
    } else {
        score.to_string()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Zadd { key: usize, nx: bool, xx: bool, gt: bool, lt: bool, ch: bool, pairs: Vec<(f64, String)> },
    Zincrby { key: usize, by: f64, member: String },
    Zrem { key: usize, members: Vec<String> },
    RangeByRank { key: usize, start: i64, stop: i64, rev: bool },
    RangeByScore { key: usize, min: f64, max: f64, min_ex: bool, max_ex: bool, rev: bool, limit: Option<(i64, i64)> },
    RangeByLex { key: usize, min: String, max: String, rev: bool },
    Rank { key: usize, member: String, rev: bool },
    Score { key: usize, member: String },
    Count { key: usize, min: f64, max: f64 },
    RemRangeByRank { key: usize, start: i64, stop: i64 },
    RemRangeByScore { key: usize, min: f64, max: f64 },
    Pop { key: usize, max: bool, count: usize },
    Union { dst: usize, a: usize, b: usize, weight: f64, agg: usize },
    Inter { dst: usize, a: usize, b: usize, agg: usize },
    Diff { dst: usize, a: usize, b: usize },
    RangeStore { dst: usize, src: usize, start: i64, stop: i64 },
    Scan { key: usize },
    Encoding { key: usize },
}

fn key_name(k: usize) -> String {
    format!("{{z}}k{k}")
}

fn member() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0u8..12).prop_map(|i| format!("m{i}")),
        1 => (0u8..4).prop_map(|i| format!("long-member-{i}")),
    ]
}

fn score() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => (-4i32..6).prop_map(f64::from),
        2 => (-8i32..8).prop_map(|i| f64::from(i) / 2.0),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0usize..3;
    prop_oneof![
        6 => (key.clone(), any::<[bool; 5]>(), prop::collection::vec((score(), member()), 1..6)).prop_map(
            |(key, f, pairs)| {
                let nx = f[0] && !f[1];
                Op::Zadd { key, nx, xx: f[1] && !f[0], gt: !nx && f[2] && !f[3], lt: !nx && f[3] && !f[2], ch: f[4], pairs }
            }
        ),
        2 => (key.clone(), -3i32..4, member()).prop_map(|(key, by, member)| Op::Zincrby { key, by: f64::from(by), member }),
        2 => (key.clone(), prop::collection::vec(member(), 1..4)).prop_map(|(key, members)| Op::Zrem { key, members }),
        2 => (key.clone(), -8i64..8, -8i64..8, any::<bool>()).prop_map(|(key, start, stop, rev)| Op::RangeByRank { key, start, stop, rev }),
        2 => (key.clone(), score(), score(), any::<[bool; 3]>(), prop::option::of((-1i64..4, -1i64..4))).prop_map(
            |(key, min, max, f, limit)| Op::RangeByScore { key, min, max, min_ex: f[0], max_ex: f[1], rev: f[2], limit }
        ),
        1 => (key.clone(), member(), member(), any::<bool>()).prop_map(|(key, min, max, rev)| Op::RangeByLex { key, min, max, rev }),
        2 => (key.clone(), member(), any::<bool>()).prop_map(|(key, member, rev)| Op::Rank { key, member, rev }),
        1 => (key.clone(), member()).prop_map(|(key, member)| Op::Score { key, member }),
        1 => (key.clone(), score(), score()).prop_map(|(key, min, max)| Op::Count { key, min, max }),
        1 => (key.clone(), -6i64..6, -6i64..6).prop_map(|(key, start, stop)| Op::RemRangeByRank { key, start, stop }),
        1 => (key.clone(), score(), score()).prop_map(|(key, min, max)| Op::RemRangeByScore { key, min, max }),
        2 => (key.clone(), any::<bool>(), 1usize..4).prop_map(|(key, max, count)| Op::Pop { key, max, count }),
        1 => (key.clone(), key.clone(), key.clone(), -2i32..3, 0usize..3).prop_map(
            |(dst, a, b, w, agg)| Op::Union { dst, a, b, weight: f64::from(w), agg }
        ),
        1 => (key.clone(), key.clone(), key.clone(), 0usize..3).prop_map(|(dst, a, b, agg)| Op::Inter { dst, a, b, agg }),
        1 => (key.clone(), key.clone(), key.clone()).prop_map(|(dst, a, b)| Op::Diff { dst, a, b }),
        1 => (key.clone(), key.clone(), -5i64..5, -5i64..5).prop_map(|(dst, src, start, stop)| Op::RangeStore { dst, src, start, stop }),
        1 => key.clone().prop_map(|key| Op::Scan { key }),
        1 => key.prop_map(|key| Op::Encoding { key }),
    ]
}

fn rank_bounds(start: i64, stop: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 { (len + start).max(0) } else { start };
    let stop = if stop < 0 { len + stop } else { stop };
    if start > stop || start >= len {
        return None;
    }
    Some((start as usize, stop.min(len - 1) as usize))
}

/// A listpack drops the sign of a zero score and a skiplist keeps it; the model does not
/// track encodings, so zero compares unsigned.
fn zero_unsigned(text: String) -> String {
    if text == "-0" {
        "0".into()
    } else {
        text
    }
}

const AGG: [&str; 3] = ["SUM", "MIN", "MAX"];

fn aggregate(agg: usize, target: f64, value: f64) -> f64 {
    match agg {
        0 => {
            let s = target + value;
            if s.is_nan() {
                0.0
            } else {
                s
            }
        }
        1 => value.min(target),
        _ => value.max(target),
    }
}

/// Stores a computed set in the model (removing the key when empty) and returns the reply.
fn store(model: &mut Model, dst: usize, mut items: Vec<(f64, String)>) -> Reply {
    sort(&mut items);
    let n = items.len();
    if n == 0 {
        model.remove(&key_name(dst));
    } else {
        model.insert(key_name(dst), items);
    }
    Reply::Integer(n as i64)
}

fn check(h: &mut Harness, model: &mut Model, op: &Op, entries: usize, value: usize) {
    match op.clone() {
        Op::Zadd { key, nx, xx, gt, lt, ch, pairs } => {
            let k = key_name(key);
            let mut args = vec!["ZADD".to_string(), k.clone()];
            for (on, name) in [(nx, "NX"), (xx, "XX"), (gt, "GT"), (lt, "LT"), (ch, "CH")] {
                if on {
                    args.push(name.into());
                }
            }
            for (s, m) in &pairs {
                args.push(fmt(*s));
                args.push(m.clone());
            }
            let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            let got = h.run(&argv);
            let set = model.entry(k.clone()).or_default();
            let (mut added, mut updated) = (0, 0);
            for (s, m) in pairs {
                match set.iter().position(|(_, x)| *x == m) {
                    Some(i) => {
                        let cur = set[i].0;
                        if nx || (gt && s <= cur) || (lt && s >= cur) || s == cur {
                            continue;
                        }
                        set[i].0 = s;
                        updated += 1;
                    }
                    None if xx => {}
                    None => {
                        set.push((s, m));
                        added += 1;
                    }
                }
            }
            sort(set);
            if set.is_empty() {
                model.remove(&k);
            }
            assert_eq!(got, Reply::Integer(if ch { added + updated } else { added }));
        }
        Op::Zincrby { key, by, member } => {
            let k = key_name(key);
            let got = h.run(&["ZINCRBY", &k, &fmt(by), &member]);
            let set = model.entry(k).or_default();
            let cur = set.iter().position(|(_, x)| *x == member);
            let new = cur.map_or(0.0, |i| set[i].0) + by;
            if new.is_nan() {
                assert!(matches!(got, Reply::Error(_)), "{got:?}");
                return;
            }
            match cur {
                Some(i) => set[i].0 = new,
                None => set.push((new, member)),
            }
            sort(set);
            assert_eq!(got, Reply::Double(new));
        }
        Op::Zrem { key, members } => {
            let k = key_name(key);
            let mut args = vec!["ZREM", &k];
            args.extend(members.iter().map(|m| m.as_str()));
            let got = h.run(&args);
            let mut removed = 0;
            if let Some(set) = model.get_mut(&k) {
                for m in &members {
                    if let Some(i) = set.iter().position(|(_, x)| x == m) {
                        set.remove(i);
                        removed += 1;
                    }
                }
                if set.is_empty() {
                    model.remove(&k);
                }
            }
            assert_eq!(got, Reply::Integer(removed));
        }
        Op::RangeByRank { key, start, stop, rev } => {
            let k = key_name(key);
            let mut args =
                vec!["ZRANGE".to_string(), k.clone(), start.to_string(), stop.to_string(), "WITHSCORES".into()];
            if rev {
                args.push("REV".into());
            }
            let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            let got = h.run(&argv);
            let mut set = model.get(&k).cloned().unwrap_or_default();
            if rev {
                set.reverse();
            }
            let want = match rank_bounds(start, stop, set.len()) {
                Some((s, e)) => set[s..=e].to_vec(),
                None => Vec::new(),
            };
            assert_eq!(got, members(&want, true));
        }
        Op::RangeByScore { key, min, max, min_ex, max_ex, rev, limit } => {
            let k = key_name(key);
            let bound = |v: f64, ex: bool| if ex { format!("({}", fmt(v)) } else { fmt(v) };
            let (lo, hi) = (bound(min, min_ex), bound(max, max_ex));
            let mut args = vec!["ZRANGE".to_string(), k.clone()];
            if rev {
                args.extend([hi, lo, "BYSCORE".into(), "REV".into()]);
            } else {
                args.extend([lo, hi, "BYSCORE".into()]);
            }
            if let Some((offset, count)) = limit {
                args.extend(["LIMIT".into(), offset.to_string(), count.to_string()]);
            }
            let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            let got = h.run(&argv);
            let mut want: Vec<_> = model
                .get(&k)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|(s, _)| {
                    (if min_ex { *s > min } else { *s >= min }) && (if max_ex { *s < max } else { *s <= max })
                })
                .collect();
            if rev {
                want.reverse();
            }
            if let Some((offset, count)) = limit {
                want = if offset < 0 {
                    Vec::new()
                } else {
                    let it = want.into_iter().skip(offset as usize);
                    if count < 0 {
                        it.collect()
                    } else {
                        it.take(count as usize).collect()
                    }
                };
            }
            assert_eq!(got, members(&want, false));
        }
        Op::RangeByLex { key, min, max, rev } => {
            // Lex ranges are meaningful when every score is equal: use a dedicated key.
            let k = format!("{{z}}lex{key}");
            let set = model.get(&key_name(key)).cloned().unwrap_or_default();
            h.run(&["DEL", &k]);
            let mut want: Vec<(f64, String)> = set.iter().map(|(_, m)| (0.0, m.clone())).collect();
            for (_, m) in &want {
                h.run(&["ZADD", &k, "0", m]);
            }
            sort(&mut want);
            let (lo, hi) = (format!("[{min}"), format!("({max}"));
            let got =
                if rev { h.run(&["ZREVRANGEBYLEX", &k, &hi, &lo]) } else { h.run(&["ZRANGEBYLEX", &k, &lo, &hi]) };
            h.run(&["DEL", &k]);
            let mut want: Vec<_> = want.into_iter().filter(|(_, m)| *m >= min && *m < max).collect();
            if rev {
                want.reverse();
            }
            assert_eq!(got, members(&want, false));
        }
        Op::Rank { key, member, rev } => {
            let k = key_name(key);
            let got = h.run(&[if rev { "ZREVRANK" } else { "ZRANK" }, &k, &member]);
            let set = model.get(&k).cloned().unwrap_or_default();
            let want = match set.iter().position(|(_, m)| *m == member) {
                Some(i) => Reply::Integer(if rev { set.len() - 1 - i } else { i } as i64),
                None => Reply::Null,
            };
            assert_eq!(got, want);
        }
        Op::Score { key, member } => {
            let k = key_name(key);
            let got = h.run(&["ZSCORE", &k, &member]);
            let want = model
                .get(&k)
                .and_then(|s| s.iter().find(|(_, m)| *m == member))
                .map_or(Reply::Null, |(s, _)| Reply::Double(*s));
            assert_eq!(got, want);
        }
        Op::Count { key, min, max } => {
            let k = key_name(key);
            let got = h.run(&["ZCOUNT", &k, &fmt(min), &fmt(max)]);
            let n = model.get(&k).map_or(0, |s| s.iter().filter(|(s, _)| *s >= min && *s <= max).count());
            assert_eq!(got, Reply::Integer(n as i64));
        }
        Op::RemRangeByRank { key, start, stop } => {
            let k = key_name(key);
            let got = h.run(&["ZREMRANGEBYRANK", &k, &start.to_string(), &stop.to_string()]);
            let mut n = 0;
            if let Some(set) = model.get_mut(&k) {
                if let Some((s, e)) = rank_bounds(start, stop, set.len()) {
                    set.drain(s..=e);
                    n = e - s + 1;
                }
                if set.is_empty() {
                    model.remove(&k);
                }
            }
            assert_eq!(got, Reply::Integer(n as i64));
        }
        Op::RemRangeByScore { key, min, max } => {
            let k = key_name(key);
            let got = h.run(&["ZREMRANGEBYSCORE", &k, &fmt(min), &fmt(max)]);
            let mut n = 0;
            if let Some(set) = model.get_mut(&k) {
                let before = set.len();
                set.retain(|(s, _)| !(*s >= min && *s <= max));
                n = before - set.len();
                if set.is_empty() {
                    model.remove(&k);
                }
            }
            assert_eq!(got, Reply::Integer(n as i64));
        }
        Op::Pop { key, max, count } => {
            let k = key_name(key);
            let got = h.run(&[if max { "ZPOPMAX" } else { "ZPOPMIN" }, &k, &count.to_string()]);
            let mut popped = Vec::new();
            if let Some(set) = model.get_mut(&k) {
                for _ in 0..count.min(set.len()) {
                    popped.push(if max { set.pop().unwrap() } else { set.remove(0) });
                }
                if set.is_empty() {
                    model.remove(&k);
                }
            }
            assert_eq!(got, members(&popped, true));
        }
        Op::Union { dst, a, b, weight, agg } => {
            let (kd, ka, kb) = (key_name(dst), key_name(a), key_name(b));
            let got = h.run(&["ZUNIONSTORE", &kd, "2", &ka, &kb, "WEIGHTS", "1", &fmt(weight), "AGGREGATE", AGG[agg]]);
            let (sa, sb) = (model.get(&ka).cloned().unwrap_or_default(), model.get(&kb).cloned().unwrap_or_default());
            // Redis visits the smaller input first (the first of equal sizes).
            let mut inputs = [(sa, 1.0), (sb, weight)];
            inputs.sort_by_key(|(s, _)| s.len());
            let mut acc: Vec<(f64, String)> = Vec::new();
            for (set, w) in inputs {
                for (s, m) in set {
                    let mut v = w * s;
                    if v.is_nan() {
                        v = 0.0;
                    }
                    match acc.iter_mut().find(|(_, x)| *x == m) {
                        Some(e) => e.0 = aggregate(agg, e.0, v),
                        None => acc.push((v, m)),
                    }
                }
            }
            assert_eq!(got, store(model, dst, acc));
        }
        Op::Inter { dst, a, b, agg } => {
            let (kd, ka, kb) = (key_name(dst), key_name(a), key_name(b));
            let got = h.run(&["ZINTERSTORE", &kd, "2", &ka, &kb, "AGGREGATE", AGG[agg]]);
            let (sa, sb) = (model.get(&ka).cloned().unwrap_or_default(), model.get(&kb).cloned().unwrap_or_default());
            let (small, big) = if sb.len() < sa.len() { (sb, sa) } else { (sa, sb) };
            let acc = small
                .iter()
                .filter_map(|(s, m)| big.iter().find(|(_, x)| x == m).map(|(t, _)| (aggregate(agg, *s, *t), m.clone())))
                .collect();
            assert_eq!(got, store(model, dst, acc));
        }
        Op::Diff { dst, a, b } => {
            let (kd, ka, kb) = (key_name(dst), key_name(a), key_name(b));
            let got = h.run(&["ZDIFFSTORE", &kd, "2", &ka, &kb]);
            let (sa, sb) = (model.get(&ka).cloned().unwrap_or_default(), model.get(&kb).cloned().unwrap_or_default());
            let acc = if a == b {
                Vec::new()
            } else {
                sa.into_iter().filter(|(_, m)| !sb.iter().any(|(_, x)| x == m)).collect()
            };
            assert_eq!(got, store(model, dst, acc));
        }
        Op::RangeStore { dst, src, start, stop } => {
            let (kd, ks) = (key_name(dst), key_name(src));
            let got = h.run(&["ZRANGESTORE", &kd, &ks, &start.to_string(), &stop.to_string()]);
            let set = model.get(&ks).cloned().unwrap_or_default();
            let items = rank_bounds(start, stop, set.len()).map_or(Vec::new(), |(s, e)| set[s..=e].to_vec());
            assert_eq!(got, store(model, dst, items));
        }
        Op::Scan { key } => {
            let k = key_name(key);
            let mut seen: Vec<(String, String)> = Vec::new();
            let mut cursor = "0".to_string();
            let mut rounds = 0;
            loop {
                let Reply::Array(parts) = h.run(&["ZSCAN", &k, &cursor, "COUNT", "2"]) else { panic!("array") };
                let (Reply::Bulk(c), Reply::Array(items)) = (&parts[0], &parts[1]) else { panic!("shape") };
                for pair in items.chunks(2) {
                    let (Reply::Bulk(m), Reply::Bulk(s)) = (&pair[0], &pair[1]) else { panic!("pair") };
                    seen.push((
                        String::from_utf8(m.clone()).unwrap(),
                        zero_unsigned(String::from_utf8(s.clone()).unwrap()),
                    ));
                }
                cursor = String::from_utf8(c.clone()).unwrap();
                rounds += 1;
                if cursor == "0" || rounds > 100 {
                    break;
                }
            }
            assert_eq!(cursor, "0");
            seen.sort();
            let mut want: Vec<(String, String)> = model
                .get(&k)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|(s, m)| {
                    let mut text = Vec::new();
                    quince_resp::format_double(s, &mut text);
                    (m, zero_unsigned(String::from_utf8(text).unwrap()))
                })
                .collect();
            want.sort();
            assert_eq!(seen, want);
        }
        Op::Encoding { key } => {
            let k = key_name(key);
            let got = h.run(&["OBJECT", "ENCODING", &k]);
            if let Some(set) = model.get(&k) {
                // A set over the limits must have converted; one within them may still be
                // a skiplist (sets never convert back by themselves).
                let over = set.len() > entries || set.iter().any(|(_, m)| m.len() > value);
                if over {
                    assert_eq!(got, bulk("skiplist"));
                }
                assert!(got == bulk("skiplist") || got == bulk("listpack"), "{got:?}");
            } else {
                assert_eq!(got, Reply::Null);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn zset_commands_match_the_model(
        limits in (0usize..6, prop_oneof![Just(3usize), Just(64usize)]),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let mut h = Harness::new(limits.0, limits.1);
        let mut model = Model::new();
        for op in &ops {
            check(&mut h, &mut model, op, limits.0, limits.1);
        }
        for (k, set) in &model {
            let got = h.run(&["ZRANGE", k, "0", "-1", "WITHSCORES"]);
            prop_assert_eq!(got, members(set, true));
        }
    }
}

/// Plain sets as inputs of the set operations score 1 per member (times the weight); sets
/// are placed directly in the keyspace, so this holds whatever the set commands do.
#[test]
fn plain_sets_as_inputs() {
    use quince_engine::keyspace::{TtlOnWrite, Value};
    use quince_engine::types::SetValue;
    let mut h = Harness::new(128, 64);
    let put = |h: &mut Harness, key: &str, value: SetValue| {
        let shard = h.engine.keyspace.shard_of(key.as_bytes());
        h.engine.keyspace.lock(shard).dbs[0].set(key.as_bytes(), Value::Set(value), TtlOnWrite::Clear, 0);
    };
    put(&mut h, "{t}ints", SetValue::Intset([1, 2, 3].into_iter().collect()));
    let table: quince_engine::types::set::MemberTable = ["a", "b", "2"].iter().map(|m| m.as_bytes().into()).collect();
    put(&mut h, "{t}strs", SetValue::Table(Box::new(table)));
    h.run(&["ZADD", "{t}z", "10", "a", "20", "2", "30", "zz"]);
    let pairs =
        |items: &[(&str, f64)]| members(&items.iter().map(|(m, s)| (*s, m.to_string())).collect::<Vec<_>>(), true);
    assert_eq!(
        h.run(&["ZUNION", "2", "{t}ints", "{t}z", "WEIGHTS", "2", "1", "WITHSCORES"]),
        pairs(&[("1", 2.0), ("3", 2.0), ("a", 10.0), ("2", 22.0), ("zz", 30.0)])
    );
    assert_eq!(
        h.run(&["ZINTER", "3", "{t}ints", "{t}strs", "{t}z", "AGGREGATE", "MAX", "WITHSCORES"]),
        pairs(&[("2", 20.0)])
    );
    assert_eq!(h.run(&["ZDIFF", "2", "{t}strs", "{t}ints", "WITHSCORES"]), pairs(&[("a", 1.0), ("b", 1.0)]));
    assert_eq!(h.run(&["ZINTERCARD", "2", "{t}strs", "{t}z"]), Reply::Integer(2));
    assert_eq!(h.run(&["ZINTERSTORE", "{t}d", "2", "{t}ints", "{t}strs"]), Reply::Integer(1));
    assert_eq!(h.run(&["ZRANGE", "{t}d", "0", "-1", "WITHSCORES"]), pairs(&[("2", 2.0)]));
    assert!(matches!(h.run(&["ZRANGE", "{t}ints", "0", "-1"]), Reply::Error(e) if e.starts_with("WRONGTYPE")));
}

/// A client blocked in BZPOPMIN/BZMPOP is served by the write that fills the key: ZADD,
/// ZINCRBY or a store command, FIFO, each member delivered once.
#[test]
fn blocking_pops_are_served_by_writes() {
    let mut h = Harness::new(128, 64);
    let mut waiters: Vec<Client> = (0..3).map(|_| h.engine.new_client()).collect();
    let block = |h: &Harness, c: &mut Client, args: &[&str]| {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let mut out = ReplyBuilder::new();
        h.engine.execute(c, &args, &mut out);
        assert!(out.take().is_empty(), "blocked, no reply yet");
        assert!(c.blocked.is_some());
    };
    block(&h, &mut waiters[0], &["BZPOPMIN", "{b}x", "{b}y", "0"]);
    block(&h, &mut waiters[1], &["BZMPOP", "0", "1", "{b}y", "MAX", "COUNT", "5"]);
    block(&h, &mut waiters[2], &["BZPOPMAX", "{b}y", "0"]);
    assert_eq!(h.run(&["ZADD", "{b}y", "1", "a", "2", "b", "3", "c"]), Reply::Integer(3));
    let reply = |h: &Harness, c: &mut Client| String::from_utf8(h.engine.blocked_reply(c).expect("served")).unwrap();
    assert_eq!(reply(&h, &mut waiters[0]), "*3\r\n$4\r\n{b}y\r\n$1\r\na\r\n$1\r\n1\r\n");
    assert_eq!(
        reply(&h, &mut waiters[1]),
        "*2\r\n$4\r\n{b}y\r\n*2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"
    );
    assert!(h.engine.blocked_reply(&mut waiters[2]).is_none(), "nothing left for the third");
    assert_eq!(h.run(&["EXISTS", "{b}y"]), Reply::Integer(0));
    h.run(&["ZADD", "{b}src", "7", "m"]);
    assert_eq!(h.run(&["ZUNIONSTORE", "{b}y", "1", "{b}src"]), Reply::Integer(1));
    assert_eq!(reply(&h, &mut waiters[2]), "*3\r\n$4\r\n{b}y\r\n$1\r\nm\r\n$1\r\n7\r\n");
    block(&h, &mut waiters[0], &["BZPOPMIN", "{b}z", "0"]);
    assert_eq!(h.run(&["ZINCRBY", "{b}z", "1.5", "n"]), Reply::Double(1.5));
    assert_eq!(reply(&h, &mut waiters[0]), "*3\r\n$4\r\n{b}z\r\n$1\r\nn\r\n$3\r\n1.5\r\n");
}
