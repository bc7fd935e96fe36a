//! Streams as RDB objects: each node becomes a listpack laid out as Redis's t_stream.c
//! keeps it (a master entry, then entries delta-encoded against it), followed by the
//! stream metadata and the consumer groups with their PELs and consumers.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

use quince_engine::types::stream::{Consumer, Group, Nack, NodeEntry, StreamId, StreamValue};

use super::decode::{prealloc, Input};
use super::encode::Output;
use super::error::RdbError;
use super::listpack::{self, ListpackBuilder, LpItem};

const FLAG_DELETED: i64 = 1;
const FLAG_SAMEFIELDS: i64 = 2;

fn id_bytes(id: StreamId) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&id.ms.to_be_bytes());
    b[8..].copy_from_slice(&id.seq.to_be_bytes());
    b
}

fn id_from_bytes(b: &[u8; 16]) -> StreamId {
    let ms = u64::from_be_bytes(b[..8].try_into().expect("8 bytes"));
    let seq = u64::from_be_bytes(b[8..].try_into().expect("8 bytes"));
    StreamId::new(ms, seq)
}

/// One node's listpack, as `streamAppendItem` builds it entry by entry.
fn node_listpack(master: StreamId, entries: &[NodeEntry<'_>]) -> Vec<u8> {
    let master_fields: Vec<&[u8]> = entries.first().map(|e| e.fields.iter().step_by(2).collect()).unwrap_or_default();
    let live = entries.iter().filter(|e| !e.deleted).count();
    let mut lp = ListpackBuilder::new();
    lp.push_int(live as i64);
    lp.push_int((entries.len() - live) as i64);
    lp.push_int(master_fields.len() as i64);
    for f in &master_fields {
        lp.push_str(f);
    }
    lp.push_int(0);
    for e in entries {
        let items: Vec<&[u8]> = e.fields.iter().collect();
        let same = items.len() / 2 == master_fields.len() && items.iter().step_by(2).eq(master_fields.iter());
        let mut flags = if e.deleted { FLAG_DELETED } else { 0 };
        if same {
            flags |= FLAG_SAMEFIELDS;
        }
        lp.push_int(flags);
        lp.push_int(e.id.ms.wrapping_sub(master.ms) as i64);
        lp.push_int(e.id.seq.wrapping_sub(master.seq) as i64);
        let n = (items.len() / 2) as i64;
        if same {
            for v in items.iter().skip(1).step_by(2) {
                lp.push_str(v);
            }
            lp.push_int(n + 3);
        } else {
            lp.push_int(n);
            for item in &items {
                lp.push_str(item);
            }
            lp.push_int(n + 3 + n + 1);
        }
    }
    lp.finish()
}

/// `rdbSaveObject` for a stream (RDB_TYPE_STREAM_LISTPACKS_2).
pub(crate) fn write_stream(o: &mut Output, s: &StreamValue) {
    o.len(s.node_count() as u64);
    for (master, entries) in s.nodes() {
        o.string(&id_bytes(master));
        o.string(&node_listpack(master, &entries));
    }
    o.len(s.length);
    o.len(s.last_id.ms);
    o.len(s.last_id.seq);
    o.len(s.first_id.ms);
    o.len(s.first_id.seq);
    o.len(s.max_deleted_id.ms);
    o.len(s.max_deleted_id.seq);
    o.len(s.entries_added);
    o.len(s.groups.len() as u64);
    for (name, g) in &s.groups {
        o.string(name);
        o.len(g.last_id.ms);
        o.len(g.last_id.seq);
        o.len(g.entries_read as u64);
        o.len(g.pel.len() as u64);
        for (id, nack) in &g.pel {
            o.raw(&id_bytes(*id));
            o.ms_time(nack.delivery_time);
            o.len(nack.delivery_count);
        }
        o.len(g.consumers.len() as u64);
        for (cname, c) in &g.consumers {
            o.string(cname);
            o.ms_time(c.seen_time);
            o.len(c.pel.len() as u64);
            for id in &c.pel {
                o.raw(&id_bytes(*id));
            }
        }
    }
}

/// An entry as loaded: ID, deleted flag, fields and values alternately.
type LoadedEntry = (StreamId, bool, Vec<Vec<u8>>);

fn lp_err() -> RdbError {
    RdbError::corrupt("Stream listpack integrity check failed.")
}

fn take<'a>(items: &[LpItem<'a>], pos: &mut usize) -> Result<LpItem<'a>, RdbError> {
    let item = *items.get(*pos).ok_or_else(lp_err)?;
    *pos += 1;
    Ok(item)
}

/// Walks one node's listpack (`streamValidateListpackIntegrity`, deep) into its entries.
fn parse_node(master: StreamId, items: &[LpItem<'_>]) -> Result<Vec<LoadedEntry>, RdbError> {
    let mut pos = 0usize;
    let mut next = || -> Result<LpItem<'_>, RdbError> { take(items, &mut pos) };
    let int = |item: LpItem<'_>| item.as_int().ok_or_else(lp_err);
    let live = int(next()?)?;
    let deleted = int(next()?)?;
    let master_count = int(next()?)?;
    let master_count = usize::try_from(master_count).map_err(|_| lp_err())?;
    let mut master_fields = Vec::with_capacity(master_count.min(items.len()));
    for _ in 0..master_count {
        master_fields.push(next()?.to_bytes().into_owned());
    }
    if int(next()?)? != 0 {
        return Err(lp_err());
    }
    let total = live.checked_add(deleted).filter(|t| *t >= 0).ok_or_else(lp_err)?;
    let mut entries = Vec::with_capacity(prealloc(total as u64));
    let mut seen_live = 0i64;
    for _ in 0..total {
        let flags = int(next()?)?;
        let ms = master.ms.wrapping_add(int(next()?)? as u64);
        let seq = master.seq.wrapping_add(int(next()?)? as u64);
        let mut fields: Vec<Vec<u8>> = Vec::new();
        let count = if flags & FLAG_SAMEFIELDS != 0 {
            for f in &master_fields {
                fields.push(f.clone());
                fields.push(next()?.to_bytes().into_owned());
            }
            master_fields.len() as i64 + 3
        } else {
            let n = int(next()?)?;
            let n = usize::try_from(n).map_err(|_| lp_err())?;
            for _ in 0..n.checked_mul(2).ok_or_else(lp_err)? {
                fields.push(next()?.to_bytes().into_owned());
            }
            2 * n as i64 + 4
        };
        if int(next()?)? != count {
            return Err(lp_err());
        }
        let deleted = flags & FLAG_DELETED != 0;
        if !deleted {
            seen_live += 1;
        }
        entries.push((StreamId::new(ms, seq), deleted, fields));
    }
    if pos != items.len() || seen_live != live {
        return Err(lp_err());
    }
    Ok(entries)
}

/// `rdbLoadObject` for RDB_TYPE_STREAM_LISTPACKS (v1, `v2 == false`) and
/// STREAM_LISTPACKS_2. Besides Redis's own checks, entries must ascend across nodes, stay
/// at or below `last_id`, and the live count must match the stored length: the engine's
/// stream relies on those.
pub(crate) fn read_stream<R: Read>(input: &mut Input<R>, v2: bool) -> Result<StreamValue, RdbError> {
    let mut s = StreamValue::new();
    let nodes = input.len()?;
    let mut live = 0u64;
    let mut last_seen: Option<StreamId> = None;
    let mut first_live: Option<StreamId> = None;
    for _ in 0..nodes {
        let key = input.string_bytes()?;
        let key: [u8; 16] =
            key.try_into().map_err(|_| RdbError::corrupt("Stream node key entry is not the size of a stream ID"))?;
        let master = id_from_bytes(&key);
        let lp = input.string_bytes()?;
        let items = listpack::parse(&lp).map_err(|_| lp_err())?;
        if items.is_empty() {
            return Err(RdbError::corrupt("Empty listpack inside stream"));
        }
        let entries = parse_node(master, &items)?;
        if entries.is_empty() {
            return Err(RdbError::corrupt("Empty listpack inside stream"));
        }
        for (id, deleted, fields) in &entries {
            if *id < master || last_seen.is_some_and(|prev| *id <= prev) || fields.is_empty() {
                return Err(lp_err());
            }
            last_seen = Some(*id);
            if !*deleted {
                live += 1;
                first_live.get_or_insert(*id);
            }
        }
        let borrowed: Vec<(StreamId, bool, Vec<&[u8]>)> =
            entries.iter().map(|(id, d, f)| (*id, *d, f.iter().map(|v| &v[..]).collect())).collect();
        s.push_loaded_node(master, &borrowed);
    }
    s.length = input.len()?;
    s.last_id = StreamId::new(input.len()?, input.len()?);
    if v2 {
        s.first_id = StreamId::new(input.len()?, input.len()?);
        s.max_deleted_id = StreamId::new(input.len()?, input.len()?);
        s.entries_added = input.len()?;
    } else {
        s.first_id = first_live.unwrap_or(StreamId::MIN);
        s.entries_added = s.length;
    }
    if s.length != live || last_seen.is_some_and(|id| id > s.last_id) {
        return Err(RdbError::corrupt("Stream length inconsistent with rax entries"));
    }
    let groups = input.len()?;
    for _ in 0..groups {
        let name = input.string_bytes()?;
        let last_id = StreamId::new(input.len()?, input.len()?);
        let entries_read = if v2 { input.len()? as i64 } else { s.estimate_distance(last_id) };
        if s.groups.contains_key(&name) {
            return Err(RdbError::corrupt(format!(
                "Duplicated consumer group name {}",
                String::from_utf8_lossy(&name)
            )));
        }
        let group = read_group(input, Group::new(last_id, entries_read))?;
        s.groups.insert(name, group);
    }
    Ok(s)
}

fn read_group<R: Read>(input: &mut Input<R>, mut group: Group) -> Result<Group, RdbError> {
    // The global PEL first, owners unknown until the consumers are read.
    let mut pending: BTreeMap<StreamId, (i64, u64)> = BTreeMap::new();
    let pel = input.len()?;
    for _ in 0..pel {
        let id = id_from_bytes(&input.array()?);
        let delivery_time = input.ms_time()?;
        let delivery_count = input.len()?;
        if pending.insert(id, (delivery_time, delivery_count)).is_some() {
            return Err(RdbError::corrupt("Duplicated global PEL entry loading stream consumer group"));
        }
    }
    let consumers = input.len()?;
    for _ in 0..consumers {
        let cname = input.string_bytes()?;
        if group.consumers.contains_key(&cname) {
            return Err(RdbError::corrupt("Duplicate stream consumer detected."));
        }
        let seen_time = input.ms_time()?;
        let mut owned = BTreeSet::new();
        let n = input.len()?;
        for _ in 0..n {
            let id = id_from_bytes(&input.array()?);
            let Some((delivery_time, delivery_count)) = pending.remove(&id) else {
                return Err(RdbError::corrupt(if group.pel.contains_key(&id) {
                    "Duplicated consumer PEL entry  loading a stream consumer group"
                } else {
                    "Consumer entry not found in group global PEL"
                }));
            };
            group.pel.insert(id, Nack { consumer: cname.clone(), delivery_time, delivery_count });
            owned.insert(id);
        }
        group.consumers.insert(cname, Consumer { seen_time, pel: owned });
    }
    // Every pending entry needs an owner (Redis checks this under deep sanitization; the
    // engine's PEL always names its consumer, so quince always does).
    if !pending.is_empty() {
        return Err(RdbError::corrupt("Stream CG PEL entry without consumer"));
    }
    Ok(group)
}
