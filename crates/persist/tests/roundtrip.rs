//! Property tests: random values of every type and encoding survive DUMP/RESTORE payloads
//! and whole snapshots unchanged; corrupted payloads and files (truncated, bytes flipped,
//! Redis's own corrupt-dump corpus) give an error or a valid value, never a panic.

use std::collections::BTreeMap;
use std::sync::Arc;

use hashbrown::DefaultHashBuilder;
use proptest::prelude::*;
use quince_engine::keyspace::{Entry, StrValue, Value};
use quince_engine::types::hash::FieldTable;
use quince_engine::types::set::MemberTable;
use quince_engine::types::stream::{Group, NodeLimits, StreamId, StreamValue};
use quince_engine::types::{Bytes, HashValue, Limits, ListValue, SetValue, ZSetValue};
use quince_engine::{Engine, EngineOptions, ManualClock};
use quince_persist::dump::{create_payload, decode_payload, verify_payload};
use quince_persist::rdb::crc64::crc64;
use quince_persist::rdb::{load_snapshot, write_snapshot, LoadOptions, SaveOptions, WriteOptions};

/// A value's content independent of its encoding: type and elements in a fixed order.
#[derive(Debug, Clone, PartialEq)]
enum Content {
    Str(Vec<u8>),
    List(Vec<Vec<u8>>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
    Set(Vec<Vec<u8>>),
    ZSet(Vec<(Vec<u8>, u64)>),
    Stream(String),
}

fn content(v: &Value) -> Content {
    match v {
        Value::Str(s) => Content::Str(s.as_bytes().into_owned()),
        Value::List(l) => Content::List(l.iter().map(<[u8]>::to_vec).collect()),
        Value::Hash(h) => Content::Hash(h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()),
        Value::Set(s) => {
            let mut m: Vec<Vec<u8>> = s.iter().map(|m| m.into_owned()).collect();
            m.sort();
            Content::Set(m)
        }
        // Listpacks keep integral scores as integers, so -0 reads back as 0.
        Value::ZSet(z) => Content::ZSet(z.iter().map(|(m, s)| (m.to_vec(), (s + 0.0).to_bits())).collect()),
        Value::Stream(s) => {
            let entries: Vec<(StreamId, Vec<Vec<u8>>)> =
                s.entries().into_iter().map(|(id, f)| (id, f.to_vec())).collect();
            Content::Stream(format!(
                "{entries:?} len={} last={} first={} maxdel={} added={} groups={:?}",
                s.length, s.last_id, s.first_id, s.max_deleted_id, s.entries_added, s.groups
            ))
        }
    }
}

fn bytes_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => "[a-z]{0,8}".prop_map(String::into_bytes),
        2 => any::<i64>().prop_map(|n| n.to_string().into_bytes()),
        1 => (-200i64..200).prop_map(|n| n.to_string().into_bytes()),
        1 => proptest::collection::vec(any::<u8>(), 0..40),
        1 => (1usize..3000).prop_map(|n| b"xyz".repeat(n / 3 + 1)[..n].to_vec()),
    ]
}

fn distinct(items: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut seen = std::collections::HashSet::new();
    items.into_iter().filter(|i| seen.insert(i.clone())).collect()
}

fn stream_strategy() -> impl Strategy<Value = StreamValue> {
    (
        proptest::collection::vec((1u64..4, proptest::collection::vec(bytes_strategy(), 1..4)), 1..60),
        proptest::collection::vec(any::<u16>(), 0..10),
        1i64..20,
        any::<bool>(),
    )
        .prop_map(|(adds, deletions, node_entries, groups)| {
            let mut s = StreamValue::new();
            let mut id = StreamId::new(1000, 0);
            for (step, fields) in &adds {
                id = StreamId::new(id.ms + step - 1, if *step == 1 { id.seq + 1 } else { 0 });
                let mut fv: Vec<&[u8]> = Vec::new();
                for f in fields {
                    fv.push(b"field");
                    fv.push(f);
                }
                if fv.len() > 2 && step % 2 == 0 {
                    fv[2] = b"other";
                }
                s.append(id, &fv, NodeLimits { max_entries: node_entries, max_bytes: 4096 });
            }
            let ids: Vec<StreamId> = s.entries().iter().map(|(id, _)| *id).collect();
            let doomed: Vec<StreamId> = deletions.iter().map(|d| ids[*d as usize % ids.len()]).collect();
            s.xdel(&doomed);
            if groups {
                let mut g = Group::new(s.last_id, s.entries_added as i64);
                g.create_consumer(b"alice", 1_700_000_000_000);
                g.create_consumer(b"bob", 1_700_000_000_001);
                for (i, id) in ids.iter().enumerate().take(5) {
                    g.deliver(*id, if i % 2 == 0 { b"alice" } else { b"bob" }, 1_700_000_000_000 + i as i64);
                }
                s.groups.insert(b"g1".to_vec(), g);
                s.groups.insert(b"empty".to_vec(), Group::new(StreamId::MIN, -1));
            }
            s
        })
}

fn value_strategy() -> impl Strategy<Value = Value> {
    let items = || proptest::collection::vec(bytes_strategy(), 1..80);
    prop_oneof![
        any::<i64>().prop_map(|n| Value::Str(StrValue::Int(n))),
        bytes_strategy().prop_map(|b| Value::Str(StrValue::Embstr(quince_engine::keyspace::SmallBytes::new(&b)))),
        bytes_strategy().prop_map(|b| Value::Str(StrValue::Raw(Box::new(b)))),
        items().prop_map(|i| Value::List(i.into_iter().map(Bytes::from).collect::<ListValue>())),
        (proptest::collection::vec(bytes_strategy(), 1..1200))
            .prop_map(|i| Value::List(i.into_iter().map(Bytes::from).collect::<ListValue>())),
        (items(), any::<bool>()).prop_map(|(i, table)| {
            let pairs: Vec<(Bytes, Bytes)> = distinct(i)
                .into_iter()
                .enumerate()
                .map(|(n, f)| (Bytes::from(f), Bytes::from(n.to_string().into_bytes())))
                .collect();
            if table {
                let mut t = FieldTable::with_hasher(DefaultHashBuilder::default());
                t.extend(pairs.iter().map(|(f, v)| {
                    (quince_engine::keyspace::SmallBytes::new(f), quince_engine::keyspace::SmallBytes::new(v))
                }));
                Value::Hash(HashValue::Table(Box::new(t)))
            } else {
                Value::Hash(HashValue::listpack_from(pairs))
            }
        }),
        proptest::collection::btree_set(any::<i64>(), 1..600)
            .prop_map(|s| Value::Set(SetValue::Intset(s.into_iter().collect()))),
        items().prop_map(|i| {
            let mut t = MemberTable::with_hasher(DefaultHashBuilder::default());
            t.extend(distinct(i).iter().map(|m| quince_engine::keyspace::SmallBytes::new(m)));
            Value::Set(SetValue::Table(Box::new(t)))
        }),
        (
            items(),
            proptest::collection::vec(
                prop_oneof![any::<f64>().prop_filter("no NaN", |f| !f.is_nan()), (-50i64..50).prop_map(|n| n as f64)],
                80
            ),
            0usize..200
        )
            .prop_map(|(i, scores, max)| {
                let entries: Vec<(Bytes, f64)> =
                    distinct(i).into_iter().zip(scores).map(|(m, s)| (Bytes::from(m), s)).collect();
                let limits =
                    Limits { zset_max_listpack_entries: max, zset_max_listpack_value: 2000, ..Limits::default() };
                Value::ZSet(ZSetValue::from_entries(entries, &limits))
            }),
        stream_strategy().prop_map(|s| Value::Stream(Box::new(s))),
    ]
}

const OPTIONS: [WriteOptions; 3] = [
    WriteOptions { compress: true, list_max_listpack_size: -2, list_compress_depth: 0 },
    WriteOptions { compress: false, list_max_listpack_size: 4, list_compress_depth: 1 },
    WriteOptions { compress: true, list_max_listpack_size: -5, list_compress_depth: 2 },
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn payloads_round_trip(value in value_strategy(), opt in 0usize..3) {
        let payload = create_payload(&value, &OPTIONS[opt]);
        prop_assert!(verify_payload(&payload));
        let back = decode_payload(&payload, &Limits::default()).expect("decodes");
        prop_assert_eq!(content(&back), content(&value));
        // Re-encoding what was decoded gives the same bytes when the encoding is kept.
        if back.encoding_name() == value.encoding_name() && !matches!(value, Value::Set(SetValue::Table(_)) | Value::Hash(HashValue::Table(_))) {
            prop_assert_eq!(create_payload(&back, &OPTIONS[opt]), payload);
        }
    }

    #[test]
    fn corrupted_payloads_never_panic(value in value_strategy(), cuts in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6)) {
        let payload = create_payload(&value, &OPTIONS[0]);
        let body = &payload[..payload.len() - 10];
        for (at, byte) in &cuts {
            // Truncated, with a valid footer again.
            let short = reseal(&body[..at % body.len()]);
            let _ = decode_payload(&short, &Limits::default());
            // One byte changed.
            let mut flipped = body.to_vec();
            let i = at % flipped.len();
            flipped[i] ^= byte | 1;
            let _ = decode_payload(&reseal(&flipped), &Limits::default());
        }
    }

    #[test]
    fn snapshots_round_trip(values in proptest::collection::vec((value_strategy(), proptest::option::of(0i64..1_000_000), 0usize..3), 1..12)) {
        let (source, now) = engine();
        let mut want = BTreeMap::new();
        for (i, (value, ttl, db)) in values.iter().enumerate() {
            let key = format!("key:{i}").into_bytes();
            let at = ttl.map(|t| now + 1000 + t);
            let shard = source.keyspace.shard_of(&key);
            source.keyspace.lock(shard).dbs[*db].insert_entry(&key, Entry::new(value.clone(), at, 0), now);
            want.insert((*db, key), (content(value), at));
        }
        let mut file = Vec::new();
        write_snapshot(&source, &mut file, &SaveOptions::default()).unwrap();
        let (target, _) = engine();
        let stats = load_snapshot(&target, &file[..], &LoadOptions::default(), &mut |_, _| {}).unwrap();
        prop_assert_eq!(stats.keys_loaded as usize, values.len());
        let mut got = BTreeMap::new();
        for s in 0..target.keyspace.shard_count() {
            let shard = target.keyspace.lock(s);
            for (db, table) in shard.dbs.iter().enumerate() {
                for (k, e) in table.iter_all() {
                    got.insert((db, k.to_vec()), (content(&e.value), e.expire_at_ms()));
                }
            }
        }
        prop_assert_eq!(got, want);
    }

    #[test]
    fn corrupted_files_never_panic(value in value_strategy(), cuts in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6)) {
        let (source, now) = engine();
        let shard = source.keyspace.shard_of(b"k");
        source.keyspace.lock(shard).dbs[0].insert_entry(b"k", Entry::new(value, None, 0), now);
        let mut file = Vec::new();
        write_snapshot(&source, &mut file, &SaveOptions::default()).unwrap();
        let options = LoadOptions { verify_checksum: false, allow_duplicates: true, ..LoadOptions::default() };
        for (at, byte) in &cuts {
            let (target, _) = engine();
            let _ = load_snapshot(&target, &file[..at % file.len()], &options, &mut |_, _| {});
            let mut flipped = file.clone();
            let i = at % flipped.len();
            flipped[i] ^= byte | 1;
            let _ = load_snapshot(&target, &flipped[..], &options, &mut |_, _| {});
        }
        // And a flipped byte with the checksum on is caught.
        let mut flipped = file.clone();
        let i = 9 + cuts[0].0 % (file.len() - 17);
        flipped[i] ^= cuts[0].1 | 1;
        let (target, _) = engine();
        let loaded = load_snapshot(&target, &flipped[..], &LoadOptions::default(), &mut |_, _| {});
        prop_assert!(loaded.is_err());
    }
}

fn engine() -> (Engine, i64) {
    let now = 1_700_000_000_000;
    let clock = Arc::new(ManualClock::new(now));
    (Engine::new(EngineOptions { clock, shards: 4, ..EngineOptions::default() }), now)
}

/// A payload body with a valid footer.
fn reseal(body: &[u8]) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&10u16.to_le_bytes());
    let crc = crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

/// Every `restore key 0 "..."` payload of Redis's tests/integration/corrupt-dump.tcl.
const CORRUPT_DUMP_TCL: &str = include_str!("golden/corrupt-dump-payloads.txt");

fn tcl_unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            match b[i + 1] {
                b'x' => {
                    let hex: String = s[i + 2..].chars().take_while(|c| c.is_ascii_hexdigit()).take(2).collect();
                    out.push(u8::from_str_radix(&hex, 16).unwrap());
                    i += 2 + hex.len();
                    continue;
                }
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'a' => out.push(7),
                c => out.push(c),
            }
            i += 2;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn redis_corrupt_dump_corpus_never_panics() {
    let mut checked = 0;
    let mut rejected = 0;
    for line in CORRUPT_DUMP_TCL.lines().filter(|l| !l.is_empty()) {
        let payload = tcl_unescape(line);
        for limits in [
            Limits::default(),
            Limits {
                hash_max_listpack_entries: 1,
                zset_max_listpack_entries: 1,
                set_max_intset_entries: 1,
                ..Limits::default()
            },
        ] {
            // The TCL tests turn checksum validation off (DEBUG SET-SKIP-CHECKSUM-VALIDATION).
            if decode_payload(&payload, &limits).is_none() {
                rejected += 1;
            }
        }
        checked += 1;
    }
    assert!(checked >= 30, "corpus has {checked} payloads");
    assert!(rejected >= 2 * checked - 4, "Redis's corrupt payloads are rejected ({rejected} of {checked} x2)");
}

/// Not a correctness test: prints how long 200k keys take to save and load (debug builds
/// are slow; run with --release --ignored to measure).
#[test]
#[ignore]
fn timing_200k_keys() {
    let (source, now) = engine();
    for i in 0..200_000u32 {
        let key = format!("key:{i}").into_bytes();
        let value = match i % 4 {
            0 => Value::string(format!("value-{i}").as_bytes()),
            1 => Value::List((0..10).map(|j| Bytes::from(format!("{i}-{j}").into_bytes())).collect::<ListValue>()),
            2 => Value::Hash(HashValue::listpack_from(
                (0..5).map(|j| (Bytes::from(format!("f{j}").into_bytes()), Bytes::from(format!("{i}").into_bytes()))),
            )),
            _ => Value::Set(SetValue::Intset((0..8).map(|j| i64::from(i) * 10 + j).collect())),
        };
        let shard = source.keyspace.shard_of(&key);
        source.keyspace.lock(shard).dbs[0].insert_entry(&key, Entry::new(value, None, 0), now);
    }
    let t = std::time::Instant::now();
    let mut file = Vec::new();
    write_snapshot(&source, &mut file, &SaveOptions::default()).unwrap();
    println!("save: {} bytes in {:?}", file.len(), t.elapsed());
    let (target, _) = engine();
    let t = std::time::Instant::now();
    let stats =
        load_snapshot(&target, std::io::BufReader::new(&file[..]), &LoadOptions::default(), &mut |_, _| {}).unwrap();
    println!("load: {} keys in {:?}", stats.keys_loaded, t.elapsed());
}
