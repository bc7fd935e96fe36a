//! Decoding RDB objects (`rdbLoadObject`) into engine values, with the encoding Redis 7.0
//! gives them after loading under the current thresholds (`Limits`): e.g. a HASH of few
//! short fields becomes a listpack, a HASH_LISTPACK over `hash-max-listpack-entries` a hash
//! table, a ZSET_2 that fits becomes a listpack.
//!
//! Every compact blob (listpack, ziplist, intset, zipmap) is validated in full before use,
//! as Redis's deep sanitization does, whatever `sanitize-dump-payload` says: corrupt input
//! is an error, never a panic or a broken value.

use std::collections::HashSet;
use std::io::Read;

use hashbrown::DefaultHashBuilder;
use quince_engine::keyspace::SmallBytes;
use quince_engine::keyspace::{StrValue, Value};
use quince_engine::types::hash::FieldTable;
use quince_engine::types::set::MemberTable;
use quince_engine::types::{Bytes, HashValue, Limits, ListValue, SetValue, ZSetValue};

use super::decode::{parse_double, prealloc, Input, RdbString};
use super::error::RdbError;
use super::listpack::{self, LpItem};
use super::{intset, stream, types, ziplist, zipmap};

/// intsets never hold more than this many members, whatever the configuration says.
const INTSET_MAX_ENTRIES: usize = 1 << 30;

/// Reads one object of RDB type `rdb_type`. `Ok(None)` is an empty collection, which Redis
/// skips when loading a file (and RESTORE rejects).
pub fn read_object<R: Read>(input: &mut Input<R>, rdb_type: u8, limits: &Limits) -> Result<Option<Value>, RdbError> {
    let value = match rdb_type {
        types::STRING => Value::Str(match input.string()? {
            RdbString::Int(n) => StrValue::Int(n),
            RdbString::Bytes(b) => string_value(b),
        }),
        types::LIST => {
            let n = input.len()?;
            let mut items = std::collections::VecDeque::with_capacity(prealloc(n));
            for _ in 0..n {
                items.push_back(Bytes::from(input.string_bytes()?));
            }
            list(items)
        }
        types::SET => return read_set(input, limits),
        types::ZSET | types::ZSET_2 => return read_zset(input, rdb_type == types::ZSET_2, limits),
        types::HASH => return read_hash(input, limits),
        types::LIST_QUICKLIST | types::LIST_QUICKLIST_2 => {
            return read_quicklist(input, rdb_type == types::LIST_QUICKLIST_2);
        }
        types::HASH_ZIPMAP => {
            let blob = input.string_bytes()?;
            let pairs = zipmap::parse(&blob).map_err(|_| RdbError::corrupt("Zipmap integrity check failed."))?;
            let maxlen = pairs.iter().map(|(f, v)| f.len().max(v.len())).max().unwrap_or(0);
            let pairs: Vec<(Bytes, Bytes)> = pairs.into_iter().map(|(f, v)| (Bytes::from(f), Bytes::from(v))).collect();
            if has_duplicate_fields(&pairs) {
                return Err(RdbError::corrupt("Hash zipmap with dup elements, or big length (0)"));
            }
            let big = pairs.len() > limits.hash_max_listpack_entries || maxlen > limits.hash_max_listpack_value;
            hash(pairs, big)
        }
        types::LIST_ZIPLIST => {
            let blob = input.string_bytes()?;
            let items = ziplist::parse(&blob).map_err(|_| RdbError::corrupt("List ziplist integrity check failed."))?;
            list(items.into_iter().map(|i| Bytes::from(i.to_bytes().into_owned())).collect())
        }
        types::SET_INTSET => {
            let blob = input.string_bytes()?;
            let members = intset::parse(&blob).map_err(|_| RdbError::corrupt("Intset integrity check failed."))?;
            if members.len() > limits.set_max_intset_entries.min(INTSET_MAX_ENTRIES) {
                let mut t = MemberTable::with_capacity_and_hasher(members.len(), DefaultHashBuilder::default());
                t.extend(members.iter().map(|n| SmallBytes::new(n.to_string().as_bytes())));
                Value::Set(SetValue::from_table(t))
            } else {
                Value::Set(SetValue::Intset(members.into_iter().collect()))
            }
        }
        types::ZSET_ZIPLIST | types::ZSET_LISTPACK => {
            let blob = input.string_bytes()?;
            let (items, what) = if rdb_type == types::ZSET_ZIPLIST {
                (ziplist::parse(&blob), "Zset ziplist integrity check failed.")
            } else {
                (listpack::parse(&blob), "Zset listpack integrity check failed.")
            };
            let items = items.map_err(|_| RdbError::corrupt(what))?;
            let entries = zset_pairs(&items).ok_or_else(|| RdbError::corrupt(what))?;
            if entries.is_empty() {
                return Ok(None);
            }
            let mut seen = HashSet::with_capacity(entries.len());
            if entries.iter().any(|(m, _)| !seen.insert(&m[..])) {
                return Err(RdbError::corrupt(what));
            }
            Value::ZSet(if entries.len() > limits.zset_max_listpack_entries {
                ZSetValue::from_entries(entries, &Limits { zset_max_listpack_entries: 0, ..*limits })
            } else {
                sorted_listpack(entries)
            })
        }
        types::HASH_ZIPLIST | types::HASH_LISTPACK => {
            let blob = input.string_bytes()?;
            let (items, what) = if rdb_type == types::HASH_ZIPLIST {
                (ziplist::parse(&blob), "Hash ziplist integrity check failed.")
            } else {
                (listpack::parse(&blob), "Hash listpack integrity check failed.")
            };
            let items = items.map_err(|_| RdbError::corrupt(what))?;
            if !items.len().is_multiple_of(2) {
                return Err(RdbError::corrupt(what));
            }
            let pairs: Vec<(Bytes, Bytes)> = items
                .chunks_exact(2)
                .map(|p| (Bytes::from(p[0].to_bytes().into_owned()), Bytes::from(p[1].to_bytes().into_owned())))
                .collect();
            if has_duplicate_fields(&pairs) {
                return Err(RdbError::corrupt(what));
            }
            if pairs.is_empty() {
                return Ok(None);
            }
            let big = pairs.len() > limits.hash_max_listpack_entries;
            hash(pairs, big)
        }
        types::STREAM_LISTPACKS | types::STREAM_LISTPACKS_2 => {
            Value::Stream(Box::new(stream::read_stream(input, rdb_type == types::STREAM_LISTPACKS_2)?))
        }
        types::MODULE | types::MODULE_2 => {
            return Err(RdbError::Module(
                "The RDB file contains module data I can't load: no matching module type".into(),
            ))
        }
        other => return Err(RdbError::corrupt(format!("Unknown RDB encoding type {other}"))),
    };
    Ok(match &value {
        Value::List(l) if l.is_empty() => None,
        _ => Some(value),
    })
}

/// A loaded string in the encoding `tryObjectEncoding` picks.
fn string_value(bytes: Vec<u8>) -> StrValue {
    if bytes.len() <= 20 {
        if let Some(n) = quince_resp::parse_i64_strict(&bytes) {
            return StrValue::Int(n);
        }
    }
    StrValue::created(bytes)
}

fn list(items: std::collections::VecDeque<Bytes>) -> Value {
    Value::List(items.into_iter().collect::<ListValue>())
}

fn hash(pairs: Vec<(Bytes, Bytes)>, big: bool) -> Value {
    if big {
        let mut t = FieldTable::with_capacity_and_hasher(pairs.len(), DefaultHashBuilder::default());
        t.extend(pairs.iter().map(|(f, v)| (SmallBytes::new(f), SmallBytes::new(v))));
        Value::Hash(HashValue::Table(Box::new(t)))
    } else {
        Value::Hash(HashValue::listpack_from(pairs))
    }
}

fn has_duplicate_fields(pairs: &[(Bytes, Bytes)]) -> bool {
    let mut seen = HashSet::with_capacity(pairs.len());
    pairs.iter().any(|(f, _)| !seen.insert(&f[..]))
}

/// Member/score pairs of a sorted-set listpack or ziplist; None if odd, with a NaN score
/// or a score that is not a number.
fn zset_pairs(items: &[LpItem<'_>]) -> Option<Vec<(Bytes, f64)>> {
    if !items.len().is_multiple_of(2) {
        return None;
    }
    items
        .chunks_exact(2)
        .map(|p| {
            let score = match p[1] {
                LpItem::Int(v) => v as f64,
                LpItem::Str(s) => parse_double(s)?,
            };
            (!score.is_nan()).then(|| (Bytes::from(p[0].to_bytes().into_owned()), score))
        })
        .collect()
}

/// A listpack-encoded sorted set from loaded (distinct) pairs, ordered by (score, member)
/// as the engine requires.
fn sorted_listpack(mut entries: Vec<(Bytes, f64)>) -> ZSetValue {
    entries.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.0.cmp(&b.0)));
    // The listpack keeps integral scores as integers (no -0); from_entries does that.
    let limits =
        Limits { zset_max_listpack_entries: usize::MAX, zset_max_listpack_value: usize::MAX, ..Limits::default() };
    ZSetValue::from_entries(entries, &limits)
}

fn read_set<R: Read>(input: &mut Input<R>, limits: &Limits) -> Result<Option<Value>, RdbError> {
    let n = input.len()?;
    if n == 0 {
        return Ok(None);
    }
    let max_intset = limits.set_max_intset_entries.min(INTSET_MAX_ENTRIES) as u64;
    let mut ints: Option<Vec<i64>> = (n <= max_intset).then(|| Vec::with_capacity(prealloc(n)));
    let mut table = MemberTable::with_capacity_and_hasher(
        if ints.is_some() { 0 } else { prealloc(n) },
        DefaultHashBuilder::default(),
    );
    let dup = || RdbError::corrupt("Duplicate set members detected");
    for _ in 0..n {
        let member = input.string_bytes()?;
        if let Some(v) = ints.as_mut() {
            match quince_resp::parse_i64_strict(&member) {
                Some(x) => {
                    v.push(x);
                    continue;
                }
                None => {
                    // Not an integer: the set becomes a table (`setTypeConvert`).
                    for x in ints.take().expect("intset") {
                        if !table.insert(SmallBytes::new(x.to_string().as_bytes())) {
                            return Err(dup());
                        }
                    }
                }
            }
        }
        if !table.insert(SmallBytes::from(&member[..])) {
            return Err(dup());
        }
    }
    Ok(Some(match ints {
        Some(mut v) => {
            v.sort_unstable();
            if v.windows(2).any(|w| w[0] == w[1]) {
                return Err(dup());
            }
            Value::Set(SetValue::Intset(v.into_iter().collect()))
        }
        None => Value::Set(SetValue::from_table(table)),
    }))
}

fn read_zset<R: Read>(input: &mut Input<R>, binary: bool, limits: &Limits) -> Result<Option<Value>, RdbError> {
    let n = input.len()?;
    if n == 0 {
        return Ok(None);
    }
    let mut entries = Vec::with_capacity(prealloc(n));
    let mut seen = HashSet::with_capacity(prealloc(n));
    for _ in 0..n {
        let member = Bytes::from(input.string_bytes()?);
        let score = if binary { input.binary_double()? } else { input.text_double()? };
        if score.is_nan() {
            return Err(RdbError::corrupt("Zset with NAN score detected"));
        }
        if !seen.insert(member.clone()) {
            return Err(RdbError::corrupt("Duplicate zset fields detected"));
        }
        entries.push((member, score));
    }
    // Converted after loading, when it fits (`zsetConvert` to a listpack).
    Ok(Some(Value::ZSet(ZSetValue::from_entries(entries, limits))))
}

fn read_hash<R: Read>(input: &mut Input<R>, limits: &Limits) -> Result<Option<Value>, RdbError> {
    let n = input.len()?;
    if n == 0 {
        return Ok(None);
    }
    let mut big = n > limits.hash_max_listpack_entries as u64;
    let mut pairs = Vec::with_capacity(prealloc(n));
    for _ in 0..n {
        let field = Bytes::from(input.string_bytes()?);
        let value = Bytes::from(input.string_bytes()?);
        if field.len() > limits.hash_max_listpack_value || value.len() > limits.hash_max_listpack_value {
            big = true;
        }
        pairs.push((field, value));
    }
    if has_duplicate_fields(&pairs) {
        return Err(RdbError::corrupt("Duplicate hash fields detected"));
    }
    Ok(Some(hash(pairs, big)))
}

fn read_quicklist<R: Read>(input: &mut Input<R>, v2: bool) -> Result<Option<Value>, RdbError> {
    let nodes = input.len()?;
    if nodes == 0 {
        return Ok(None);
    }
    let mut items = std::collections::VecDeque::new();
    for _ in 0..nodes {
        let container = if v2 { input.len()? } else { 2 };
        if container != 1 && container != 2 {
            return Err(RdbError::corrupt("Quicklist integrity check failed."));
        }
        let data = input.string_bytes()?;
        if data.is_empty() {
            return Err(RdbError::corrupt("Quicklist integrity check failed."));
        }
        if container == 1 {
            items.push_back(Bytes::from(data));
            continue;
        }
        let parsed = if v2 {
            listpack::parse(&data).map_err(|_| RdbError::corrupt("Listpack integrity check failed."))?
        } else {
            ziplist::parse(&data).map_err(|_| RdbError::corrupt("Ziplist integrity check failed."))?
        };
        // Empty nodes are skipped silently, as Redis does.
        items.extend(parsed.into_iter().map(|i| Bytes::from(i.to_bytes().into_owned())));
    }
    if items.is_empty() {
        return Ok(None);
    }
    Ok(Some(list(items)))
}
