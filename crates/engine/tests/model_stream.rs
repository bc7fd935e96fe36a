//! Property test: random stream command sequences (XADD with explicit and partial IDs and
//! trimming, XDEL, XRANGE/XREVRANGE with exclusive bounds and COUNT, XTRIM, XLEN) run
//! through the engine and through a `BTreeMap` model of the stream must agree on every
//! reply and on the final state. Small node sizes (`stream-node-max-entries`) put entries
//! across many nodes, so node boundaries, node removal and approximate trimming are hit.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use quince_engine::{Client, Engine, EngineOptions, ManualClock, Reply, ReplyBuilder};

type Id = (u64, u64);

#[derive(Debug, Clone)]
enum IdArg {
    Full(u64, u64),
    AutoSeq(u64),
}

#[derive(Debug, Clone)]
enum Bound {
    Min,
    Max,
    Incl(u64, u64),
    MsOnly(u64),
    Excl(u64, u64),
}

#[derive(Debug, Clone)]
enum Op {
    Add { id: IdArg, fields: usize, maxlen: Option<u64> },
    Del { ids: Vec<Id> },
    Range { start: Bound, end: Bound, count: Option<u64>, rev: bool },
    TrimLen { maxlen: u64 },
    TrimMinId { ms: u64 },
    TrimApprox { maxlen: u64 },
    Len,
}

fn id() -> impl Strategy<Value = Id> {
    (0u64..30, 0u64..3)
}

fn bound() -> impl Strategy<Value = Bound> {
    prop_oneof![
        Just(Bound::Min),
        Just(Bound::Max),
        id().prop_map(|(m, s)| Bound::Incl(m, s)),
        (0u64..30).prop_map(Bound::MsOnly),
        id().prop_map(|(m, s)| Bound::Excl(m, s)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let id_arg = prop_oneof![id().prop_map(|(m, s)| IdArg::Full(m, s)), (0u64..30).prop_map(IdArg::AutoSeq)];
    prop_oneof![
        4 => (id_arg, 1usize..4, prop::option::of(0u64..12)).prop_map(|(id, fields, maxlen)| Op::Add { id, fields, maxlen }),
        1 => prop::collection::vec(id(), 1..4).prop_map(|ids| Op::Del { ids }),
        2 => (bound(), bound(), prop::option::of(0u64..5), any::<bool>())
            .prop_map(|(start, end, count, rev)| Op::Range { start, end, count, rev }),
        1 => (0u64..10).prop_map(|maxlen| Op::TrimLen { maxlen }),
        1 => (0u64..30).prop_map(|ms| Op::TrimMinId { ms }),
        1 => (0u64..10).prop_map(|maxlen| Op::TrimApprox { maxlen }),
        1 => Just(Op::Len),
    ]
}

#[derive(Debug, Default)]
struct Model {
    /// None until the key exists (streams are kept when empty).
    entries: Option<BTreeMap<Id, Vec<Vec<u8>>>>,
    last: Id,
}

fn bulk(s: &[u8]) -> Reply {
    Reply::Bulk(s.to_vec())
}

fn id_text((ms, seq): Id) -> String {
    format!("{ms}-{seq}")
}

fn fields(n: usize) -> Vec<Vec<u8>> {
    (0..n).flat_map(|i| [format!("f{i}").into_bytes(), format!("v{}", i * 7).into_bytes()]).collect()
}

fn entry_reply(id: Id, fields: &[Vec<u8>]) -> Reply {
    Reply::Array(vec![bulk(id_text(id).as_bytes()), Reply::Array(fields.iter().map(|f| bulk(f)).collect())])
}

/// The inclusive interval a bound stands for, None when it cannot be (`(0-0` as an end).
fn resolve(b: &Bound, is_start: bool) -> Option<Id> {
    Some(match *b {
        Bound::Min => (0, 0),
        Bound::Max => (u64::MAX, u64::MAX),
        Bound::Incl(m, s) => (m, s),
        Bound::MsOnly(m) => (m, if is_start { 0 } else { u64::MAX }),
        Bound::Excl(m, s) => {
            if is_start {
                if s == u64::MAX {
                    (m + 1, 0)
                } else {
                    (m, s + 1)
                }
            } else if s > 0 {
                (m, s - 1)
            } else if m > 0 {
                (m - 1, u64::MAX)
            } else {
                return None;
            }
        }
    })
}

fn model_apply(m: &mut Model, op: &Op) -> Reply {
    match op {
        Op::Add { id, fields: n, maxlen } => {
            let new_id = match *id {
                IdArg::Full(0, 0) => {
                    return Reply::Error("ERR The ID specified in XADD must be greater than 0-0".into())
                }
                IdArg::Full(ms, seq) => (ms, seq),
                IdArg::AutoSeq(ms) if ms == m.last.0 => (ms, m.last.1 + 1),
                IdArg::AutoSeq(ms) => (ms, 0),
            };
            if new_id <= m.last {
                return Reply::Error(
                    "ERR The ID specified in XADD is equal or smaller than the target stream top item".into(),
                );
            }
            let entries = m.entries.get_or_insert_with(BTreeMap::new);
            entries.insert(new_id, fields(*n));
            m.last = new_id;
            if let Some(maxlen) = maxlen {
                while entries.len() as u64 > *maxlen {
                    entries.pop_first();
                }
            }
            bulk(id_text(new_id).as_bytes())
        }
        Op::Del { ids } => {
            let Some(entries) = m.entries.as_mut() else { return Reply::Integer(0) };
            Reply::Integer(ids.iter().filter(|id| entries.remove(id).is_some()).count() as i64)
        }
        Op::Range { start, end, count, rev } => {
            let (Some(lo), Some(hi)) = (resolve(start, true), resolve(end, false)) else {
                let which = if resolve(start, true).is_none() { "start" } else { "end" };
                return Reply::Error(format!("ERR invalid {which} ID for the interval"));
            };
            let Some(entries) = m.entries.as_ref() else { return Reply::Array(vec![]) };
            if *count == Some(0) {
                return Reply::Null;
            }
            let limit = count.map_or(usize::MAX, |c| c as usize);
            let hits: Vec<Reply> = if lo > hi {
                vec![]
            } else if *rev {
                entries.range(lo..=hi).rev().take(limit).map(|(id, f)| entry_reply(*id, f)).collect()
            } else {
                entries.range(lo..=hi).take(limit).map(|(id, f)| entry_reply(*id, f)).collect()
            };
            Reply::Array(hits)
        }
        Op::TrimLen { maxlen } => {
            let Some(entries) = m.entries.as_mut() else { return Reply::Integer(0) };
            let mut removed = 0;
            while entries.len() as u64 > *maxlen {
                entries.pop_first();
                removed += 1;
            }
            Reply::Integer(removed)
        }
        Op::TrimMinId { ms } => {
            let Some(entries) = m.entries.as_mut() else { return Reply::Integer(0) };
            let before = entries.len();
            entries.retain(|id, _| *id >= (*ms, 0));
            Reply::Integer((before - entries.len()) as i64)
        }
        Op::TrimApprox { .. } => unreachable!("checked against the engine's count"),
        Op::Len => Reply::Integer(m.entries.as_ref().map_or(0, |e| e.len()) as i64),
    }
}

fn bound_text(b: &Bound) -> String {
    match *b {
        Bound::Min => "-".into(),
        Bound::Max => "+".into(),
        Bound::Incl(m, s) => id_text((m, s)),
        Bound::MsOnly(m) => m.to_string(),
        Bound::Excl(m, s) => format!("({}", id_text((m, s))),
    }
}

fn command(op: &Op) -> Vec<String> {
    let mut c: Vec<String> = Vec::new();
    match op {
        Op::Add { id, fields: n, maxlen } => {
            c.extend(["XADD".into(), "s".into()]);
            if let Some(maxlen) = maxlen {
                c.extend(["MAXLEN".into(), maxlen.to_string()]);
            }
            c.push(match *id {
                IdArg::Full(ms, seq) => id_text((ms, seq)),
                IdArg::AutoSeq(ms) => format!("{ms}-*"),
            });
            c.extend(fields(*n).into_iter().map(|f| String::from_utf8(f).unwrap()));
        }
        Op::Del { ids } => {
            c.extend(["XDEL".into(), "s".into()]);
            c.extend(ids.iter().map(|&id| id_text(id)));
        }
        Op::Range { start, end, count, rev } => {
            if *rev {
                c.extend(["XREVRANGE".into(), "s".into(), bound_text(end), bound_text(start)]);
            } else {
                c.extend(["XRANGE".into(), "s".into(), bound_text(start), bound_text(end)]);
            }
            if let Some(n) = count {
                c.extend(["COUNT".into(), n.to_string()]);
            }
        }
        Op::TrimLen { maxlen } => c.extend(["XTRIM".into(), "s".into(), "MAXLEN".into(), maxlen.to_string()]),
        Op::TrimMinId { ms } => c.extend(["XTRIM".into(), "s".into(), "MINID".into(), "=".into(), ms.to_string()]),
        Op::TrimApprox { maxlen } => {
            c.extend(["XTRIM".into(), "s".into(), "MAXLEN".into(), "~".into(), maxlen.to_string()])
        }
        Op::Len => c.extend(["XLEN".into(), "s".into()]),
    }
    c
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
    fn engine_streams_agree_with_a_btreemap_model(node_entries in 1u64..5, ops in prop::collection::vec(op(), 1..80)) {
        let engine = Engine::new(EngineOptions { clock: Arc::new(ManualClock::new(0)), shards: 4, ..EngineOptions::default() });
        let mut client = engine.new_client();
        let config = ["CONFIG".to_string(), "SET".into(), "stream-node-max-entries".into(), node_entries.to_string()];
        prop_assert_eq!(run(&engine, &mut client, &config), Reply::Simple("OK".into()));
        let mut model = Model::default();
        for op in &ops {
            let got = run(&engine, &mut client, &command(op));
            if let Op::TrimApprox { maxlen } = op {
                // Whole nodes go from the head: some prefix, never below maxlen.
                let Reply::Integer(removed) = got else { panic!("XTRIM ~ replied {got:?}") };
                let len = model.entries.as_ref().map_or(0, |e| e.len()) as i64;
                prop_assert!(removed <= (len - *maxlen as i64).max(0), "removed {} of {} for ~{}", removed, len, maxlen);
                if let Some(entries) = model.entries.as_mut() {
                    for _ in 0..removed {
                        entries.pop_first();
                    }
                }
                continue;
            }
            let expected = model_apply(&mut model, op);
            prop_assert_eq!(got, expected, "after {:?}", op);
        }
        let got = run(&engine, &mut client, &["XRANGE".into(), "s".into(), "-".into(), "+".into()]);
        let expected = match &model.entries {
            None => Reply::Array(vec![]),
            Some(e) => Reply::Array(e.iter().map(|(id, f)| entry_reply(*id, f)).collect()),
        };
        prop_assert_eq!(got, expected);
        let exists = run(&engine, &mut client, &["EXISTS".into(), "s".into()]);
        prop_assert_eq!(exists, Reply::Integer(i64::from(model.entries.is_some())));
    }
}

/// Consumer group operations on one stream with one group, against a model of the group's
/// last-delivered ID and pending entries list (the clock is fixed, so idle times are 0).
#[derive(Debug, Clone)]
enum GroupOp {
    Add { ms: u64, fields: usize },
    Del { ids: Vec<Id> },
    Read { consumer: usize, count: Option<u64> },
    History { consumer: usize, count: Option<u64> },
    Ack { ids: Vec<Id> },
    Claim { consumer: usize, ids: Vec<Id> },
    Pending,
    PendingOf { consumer: usize },
}

const CONSUMERS: [&str; 2] = ["alice", "bob"];

fn group_op() -> impl Strategy<Value = GroupOp> {
    let ids = prop::collection::vec((1u64..30, 0u64..2), 1..4);
    prop_oneof![
        3 => (1u64..30, 1usize..3).prop_map(|(ms, fields)| GroupOp::Add { ms, fields }),
        1 => ids.clone().prop_map(|ids| GroupOp::Del { ids }),
        2 => (0usize..2, prop::option::of(1u64..4)).prop_map(|(consumer, count)| GroupOp::Read { consumer, count }),
        1 => (0usize..2, prop::option::of(1u64..4)).prop_map(|(consumer, count)| GroupOp::History { consumer, count }),
        1 => ids.clone().prop_map(|ids| GroupOp::Ack { ids }),
        1 => (0usize..2, ids).prop_map(|(consumer, ids)| GroupOp::Claim { consumer, ids }),
        1 => Just(GroupOp::Pending),
        1 => (0usize..2).prop_map(|consumer| GroupOp::PendingOf { consumer }),
    ]
}

#[derive(Debug, Default)]
struct GroupModel {
    entries: BTreeMap<Id, Vec<Vec<u8>>>,
    last: Id,
    group_last: Id,
    /// Pending entries: owner and delivery count.
    pel: BTreeMap<Id, (usize, i64)>,
}

/// XREADGROUP's reply for stream `s` (the reply builder speaks RESP3: a map by key).
fn read_reply(entries: Vec<Reply>) -> Reply {
    Reply::Map(vec![(bulk(b"s"), Reply::Array(entries))])
}

fn group_apply(m: &mut GroupModel, op: &GroupOp) -> Reply {
    match op {
        GroupOp::Add { ms, fields: n } => {
            let id = if *ms == m.last.0 { (*ms, m.last.1 + 1) } else { (*ms, 0) };
            if id <= m.last {
                return Reply::Error(
                    "ERR The ID specified in XADD is equal or smaller than the target stream top item".into(),
                );
            }
            m.entries.insert(id, fields(*n));
            m.last = id;
            bulk(id_text(id).as_bytes())
        }
        GroupOp::Del { ids } => Reply::Integer(ids.iter().filter(|id| m.entries.remove(id).is_some()).count() as i64),
        GroupOp::Read { consumer, count } => {
            let after: Vec<Id> = m
                .entries
                .range((std::ops::Bound::Excluded(m.group_last), std::ops::Bound::Unbounded))
                .map(|(id, _)| *id)
                .take(count.map_or(usize::MAX, |c| c as usize))
                .collect();
            if after.is_empty() {
                return Reply::Null;
            }
            let mut out = Vec::new();
            for id in after {
                m.group_last = id;
                m.pel.insert(id, (*consumer, 1));
                out.push(entry_reply(id, &m.entries[&id]));
            }
            read_reply(out)
        }
        GroupOp::History { consumer, count } => {
            let mine: Vec<Id> = m
                .pel
                .iter()
                .filter(|(_, (owner, _))| owner == consumer)
                .map(|(id, _)| *id)
                .take(count.map_or(usize::MAX, |c| c as usize))
                .collect();
            let mut out = Vec::new();
            for id in mine {
                match m.entries.get(&id) {
                    Some(f) => {
                        m.pel.get_mut(&id).unwrap().1 += 1;
                        out.push(entry_reply(id, f));
                    }
                    None => out.push(Reply::Array(vec![bulk(id_text(id).as_bytes()), Reply::Null])),
                }
            }
            read_reply(out)
        }
        GroupOp::Ack { ids } => Reply::Integer(ids.iter().filter(|id| m.pel.remove(id).is_some()).count() as i64),
        GroupOp::Claim { consumer, ids } => {
            let mut out = Vec::new();
            for id in ids {
                if !m.entries.contains_key(id) {
                    m.pel.remove(id);
                    continue;
                }
                if let Some(p) = m.pel.get_mut(id) {
                    p.0 = *consumer;
                    out.push(bulk(id_text(*id).as_bytes()));
                }
            }
            Reply::Array(out)
        }
        GroupOp::Pending => {
            if m.pel.is_empty() {
                return Reply::Array(vec![Reply::Integer(0), Reply::Null, Reply::Null, Reply::Null]);
            }
            let first = *m.pel.keys().next().unwrap();
            let last = *m.pel.keys().next_back().unwrap();
            let mut owners = Vec::new();
            for (i, name) in CONSUMERS.iter().enumerate() {
                let n = m.pel.values().filter(|(o, _)| *o == i).count();
                if n > 0 {
                    owners.push(Reply::Array(vec![bulk(name.as_bytes()), bulk(n.to_string().as_bytes())]));
                }
            }
            Reply::Array(vec![
                Reply::Integer(m.pel.len() as i64),
                bulk(id_text(first).as_bytes()),
                bulk(id_text(last).as_bytes()),
                Reply::Array(owners),
            ])
        }
        GroupOp::PendingOf { consumer } => Reply::Array(
            m.pel
                .iter()
                .filter(|(_, (o, _))| o == consumer)
                .map(|(id, (o, n))| {
                    Reply::Array(vec![
                        bulk(id_text(*id).as_bytes()),
                        bulk(CONSUMERS[*o].as_bytes()),
                        Reply::Integer(0),
                        Reply::Integer(*n),
                    ])
                })
                .collect(),
        ),
    }
}

fn group_command(op: &GroupOp) -> Vec<String> {
    let s = |x: &str| x.to_string();
    let mut c: Vec<String> = Vec::new();
    match op {
        GroupOp::Add { ms, fields: n } => {
            c.extend([s("XADD"), s("s"), format!("{ms}-*")]);
            c.extend(fields(*n).into_iter().map(|f| String::from_utf8(f).unwrap()));
        }
        GroupOp::Del { ids } => {
            c.extend([s("XDEL"), s("s")]);
            c.extend(ids.iter().map(|&id| id_text(id)));
        }
        GroupOp::Read { consumer, count } | GroupOp::History { consumer, count } => {
            c.extend([s("XREADGROUP"), s("GROUP"), s("g"), s(CONSUMERS[*consumer])]);
            if let Some(n) = count {
                c.extend([s("COUNT"), n.to_string()]);
            }
            let from = if matches!(op, GroupOp::Read { .. }) { ">" } else { "0" };
            c.extend([s("STREAMS"), s("s"), s(from)]);
        }
        GroupOp::Ack { ids } => {
            c.extend([s("XACK"), s("s"), s("g")]);
            c.extend(ids.iter().map(|&id| id_text(id)));
        }
        GroupOp::Claim { consumer, ids } => {
            c.extend([s("XCLAIM"), s("s"), s("g"), s(CONSUMERS[*consumer]), s("0")]);
            c.extend(ids.iter().map(|&id| id_text(id)));
            c.push(s("JUSTID"));
        }
        GroupOp::Pending => c.extend([s("XPENDING"), s("s"), s("g")]),
        GroupOp::PendingOf { consumer } => {
            c.extend([s("XPENDING"), s("s"), s("g"), s("-"), s("+"), s("100"), s(CONSUMERS[*consumer])])
        }
    }
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn consumer_groups_agree_with_a_pel_model(ops in prop::collection::vec(group_op(), 1..60)) {
        let engine = Engine::new(EngineOptions { clock: Arc::new(ManualClock::new(0)), shards: 4, ..EngineOptions::default() });
        let mut client = engine.new_client();
        let config = ["CONFIG".to_string(), "SET".into(), "stream-node-max-entries".into(), "2".into()];
        prop_assert_eq!(run(&engine, &mut client, &config), Reply::Simple("OK".into()));
        let create: Vec<String> = ["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"].iter().map(|s| s.to_string()).collect();
        prop_assert_eq!(run(&engine, &mut client, &create), Reply::Simple("OK".into()));
        let mut model = GroupModel::default();
        for op in &ops {
            let expected = group_apply(&mut model, op);
            let got = run(&engine, &mut client, &group_command(op));
            prop_assert_eq!(got, expected, "after {:?}", op);
        }
    }
}
