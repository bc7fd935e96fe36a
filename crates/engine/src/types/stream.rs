//! The stream type (Redis's t_stream.c data layer): entries in nodes keyed by their first
//! ID, like Redis's radix tree of listpacks, plus the 7.0 metadata and consumer groups.
//!
//! A node packs its entries into one byte buffer: per entry a flag byte (live/deleted),
//! the ms part as a varint delta from the node's first ID, the seq part as a varint, the
//! field count and the length-prefixed fields and values. That keeps a small entry to a few
//! bytes of overhead. Nodes are closed (and shrunk) once they reach
//! `stream-node-max-entries` entries or `stream-node-max-bytes` bytes, as Redis does, so
//! approximate (`~`) trimming removes whole nodes exactly when Redis would.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A stream entry ID: milliseconds and sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl StreamId {
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    pub const MAX: StreamId = StreamId { ms: u64::MAX, seq: u64::MAX };

    pub const fn new(ms: u64, seq: u64) -> Self {
        Self { ms, seq }
    }

    pub fn is_zero(&self) -> bool {
        self.ms == 0 && self.seq == 0
    }

    /// The next ID, or None at the maximum (Redis's streamIncrID).
    pub fn incr(self) -> Option<StreamId> {
        if self.seq < u64::MAX {
            Some(StreamId::new(self.ms, self.seq + 1))
        } else if self.ms < u64::MAX {
            Some(StreamId::new(self.ms + 1, 0))
        } else {
            None
        }
    }

    /// The previous ID, or None at 0-0 (Redis's streamDecrID).
    pub fn decr(self) -> Option<StreamId> {
        if self.seq > 0 {
            Some(StreamId::new(self.ms, self.seq - 1))
        } else if self.ms > 0 {
            Some(StreamId::new(self.ms - 1, u64::MAX))
        } else {
            None
        }
    }

    pub fn to_bytes(self) -> Vec<u8> {
        self.to_string().into_bytes()
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// Parses one part of an ID as Redis's string2ull: a strict 64-bit integer (negative
/// rejected), else C's `strtoull` over the whole string (white space, a sign and values
/// above `i64::MAX` allowed; a `-` sign wraps as in C).
fn parse_u64_part(s: &[u8]) -> Option<u64> {
    if let Some(v) = quince_resp::parse_i64_strict(s) {
        return u64::try_from(v).ok();
    }
    let mut i = s.iter().take_while(|&&b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')).count();
    let negative = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits = &s[i..];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(if negative { v.wrapping_neg() } else { v })
}

/// How an ID argument is read (Redis's streamGenericParseIDOrReply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedId {
    pub id: StreamId,
    /// False for the `<ms>-*` form (only accepted when `allow_auto_seq`).
    pub seq_given: bool,
}

/// Parses `<ms>[-<seq>]`, `-` and `+` (unless `strict`); a missing seq is `missing_seq`.
pub fn parse_id(arg: &[u8], missing_seq: u64, strict: bool, allow_auto_seq: bool) -> Option<ParsedId> {
    if arg.len() > 127 {
        return None;
    }
    if arg == b"-" || arg == b"+" {
        if strict {
            return None;
        }
        let id = if arg == b"-" { StreamId::MIN } else { StreamId::MAX };
        return Some(ParsedId { id, seq_given: true });
    }
    // C stops at a NUL byte.
    let arg = arg.split(|&b| b == 0).next().unwrap_or(b"");
    match arg.iter().position(|&b| b == b'-') {
        Some(dash) => {
            let ms = parse_u64_part(&arg[..dash])?;
            let rest = &arg[dash + 1..];
            if allow_auto_seq && rest == b"*" {
                return Some(ParsedId { id: StreamId::new(ms, 0), seq_given: false });
            }
            let seq = parse_u64_part(rest)?;
            Some(ParsedId { id: StreamId::new(ms, seq), seq_given: true })
        }
        None => Some(ParsedId { id: StreamId::new(parse_u64_part(arg)?, missing_seq), seq_given: true }),
    }
}

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn get_varint(buf: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = buf[*pos];
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

const FLAG_LIVE: u8 = 0;
const FLAG_DELETED: u8 = 1;

/// A run of entries sharing one buffer (Redis's listpack node).
#[derive(Debug, Clone, PartialEq)]
struct Node {
    /// The ID of the node's first entry (its key in the tree).
    master: StreamId,
    data: Vec<u8>,
    /// Entries stored, deleted ones included.
    count: u32,
    /// Entries not deleted.
    live: u32,
}

/// One entry of a node while decoding.
#[derive(Debug, Clone, Copy)]
struct Raw<'a> {
    /// Offset of the flag byte.
    at: usize,
    deleted: bool,
    id: StreamId,
    fields: Fields<'a>,
}

/// The field/value pairs of an entry, decoded lazily.
#[derive(Debug, Clone, Copy)]
pub struct Fields<'a> {
    data: &'a [u8],
    count: usize,
}

impl<'a> Fields<'a> {
    /// Number of field/value pairs.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Fields and values alternately.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let data = self.data;
        let mut pos = 0;
        (0..self.count * 2).map(move |_| {
            let len = get_varint(data, &mut pos) as usize;
            let s = &data[pos..pos + len];
            pos += len;
            s
        })
    }

    pub fn to_vec(&self) -> Vec<Vec<u8>> {
        self.iter().map(<[u8]>::to_vec).collect()
    }
}

impl Node {
    fn decode_at(&self, at: usize) -> (Raw<'_>, usize) {
        let mut pos = at;
        let deleted = self.data[pos] == FLAG_DELETED;
        pos += 1;
        let ms = self.master.ms + get_varint(&self.data, &mut pos);
        let seq = get_varint(&self.data, &mut pos);
        let count = get_varint(&self.data, &mut pos) as usize;
        let start = pos;
        for _ in 0..count * 2 {
            let len = get_varint(&self.data, &mut pos) as usize;
            pos += len;
        }
        let fields = Fields { data: &self.data[start..pos], count };
        (Raw { at, deleted, id: StreamId::new(ms, seq), fields }, pos)
    }

    fn raws(&self) -> impl Iterator<Item = Raw<'_>> {
        let mut pos = 0;
        std::iter::from_fn(move || {
            if pos >= self.data.len() {
                return None;
            }
            let (raw, next) = self.decode_at(pos);
            pos = next;
            Some(raw)
        })
    }

    fn push(&mut self, id: StreamId, fields: &[&[u8]]) {
        self.data.push(FLAG_LIVE);
        put_varint(&mut self.data, id.ms - self.master.ms);
        put_varint(&mut self.data, id.seq);
        put_varint(&mut self.data, (fields.len() / 2) as u64);
        for f in fields {
            put_varint(&mut self.data, f.len() as u64);
            self.data.extend_from_slice(f);
        }
        self.count += 1;
        self.live += 1;
    }

    fn last_live_id(&self) -> Option<StreamId> {
        self.raws().filter(|r| !r.deleted).map(|r| r.id).last()
    }

    fn last_id(&self) -> StreamId {
        self.raws().map(|r| r.id).last().unwrap_or(self.master)
    }
}

/// One entry of a node as stored (see [`StreamValue::nodes`]).
#[derive(Debug, Clone, Copy)]
pub struct NodeEntry<'a> {
    pub id: StreamId,
    /// Deleted (XDEL, XTRIM) but still in its node, as Redis keeps it until the node goes.
    pub deleted: bool,
    pub fields: Fields<'a>,
}

/// How XADD/XTRIM trims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trim {
    MaxLen(u64),
    MinId(StreamId),
}

/// A pending entry: delivered to a consumer and not yet acknowledged.
#[derive(Debug, Clone, PartialEq)]
pub struct Nack {
    pub consumer: Vec<u8>,
    /// Unix ms of the last delivery.
    pub delivery_time: i64,
    pub delivery_count: u64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Consumer {
    /// Unix ms of the consumer's last interaction.
    pub seen_time: i64,
    pub pel: BTreeSet<StreamId>,
}

/// The "invalid" value of a group's entries-read counter.
pub const ENTRIES_READ_INVALID: i64 = -1;

#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub last_id: StreamId,
    /// Logical read counter, or `ENTRIES_READ_INVALID`.
    pub entries_read: i64,
    pub pel: BTreeMap<StreamId, Nack>,
    /// By name, in byte order as Redis's radix tree.
    pub consumers: BTreeMap<Vec<u8>, Consumer>,
}

impl Group {
    pub fn new(last_id: StreamId, entries_read: i64) -> Self {
        Self { last_id, entries_read, pel: BTreeMap::new(), consumers: BTreeMap::new() }
    }

    /// Creates the consumer if missing; true if created.
    pub fn create_consumer(&mut self, name: &[u8], now_ms: i64) -> bool {
        if self.consumers.contains_key(name) {
            return false;
        }
        self.consumers.insert(name.to_vec(), Consumer { seen_time: now_ms, pel: BTreeSet::new() });
        true
    }

    /// Deletes a consumer and its pending entries; returns how many it had.
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let consumer = self.consumers.remove(name)?;
        for id in &consumer.pel {
            self.pel.remove(id);
        }
        Some(consumer.pel.len())
    }

    /// Records `id` as delivered to `consumer` now (taking it over from another consumer
    /// if it was pending there), as streamReplyWithRange does.
    pub fn deliver(&mut self, id: StreamId, consumer: &[u8], now_ms: i64) {
        if let Some(nack) = self.pel.get_mut(&id) {
            if let Some(old) = self.consumers.get_mut(&nack.consumer) {
                old.pel.remove(&id);
            }
            nack.consumer = consumer.to_vec();
            nack.delivery_time = now_ms;
            nack.delivery_count = 1;
        } else {
            self.pel.insert(id, Nack { consumer: consumer.to_vec(), delivery_time: now_ms, delivery_count: 1 });
        }
        if let Some(c) = self.consumers.get_mut(consumer) {
            c.pel.insert(id);
        }
    }

    /// Acknowledges `id`; true if it was pending.
    pub fn ack(&mut self, id: StreamId) -> bool {
        let Some(nack) = self.pel.remove(&id) else { return false };
        if let Some(c) = self.consumers.get_mut(&nack.consumer) {
            c.pel.remove(&id);
        }
        true
    }
}

/// A stream value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamValue {
    nodes: BTreeMap<StreamId, Node>,
    /// Live entries.
    pub length: u64,
    pub last_id: StreamId,
    /// The first live entry's ID (0-0 when empty), as XINFO's recorded-first-entry-id.
    pub first_id: StreamId,
    pub max_deleted_id: StreamId,
    pub entries_added: u64,
    /// By name, in byte order.
    pub groups: BTreeMap<Vec<u8>, Group>,
}

/// Node size limits (`stream-node-max-entries`, `stream-node-max-bytes`).
#[derive(Debug, Clone, Copy)]
pub struct NodeLimits {
    pub max_entries: i64,
    pub max_bytes: i64,
}

impl Default for NodeLimits {
    fn default() -> Self {
        Self { max_entries: 100, max_bytes: 4096 }
    }
}

/// Redis's STREAM_LISTPACK_MAX_SIZE.
const LISTPACK_MAX_SIZE: usize = 1 << 30;

impl StreamValue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> u64 {
        self.length
    }

    /// About how many allocations freeing the stream takes: its nodes, and each consumer
    /// group's pending entries and consumers.
    pub fn free_effort(&self) -> usize {
        self.nodes.len() + self.groups.values().map(|g| 1 + g.pel.len() + g.consumers.len()).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// Number of nodes (XINFO's radix-tree-keys).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Appends an entry with ID `id` (which the caller checked is above `last_id`);
    /// `fields` alternates fields and values.
    pub fn append(&mut self, id: StreamId, fields: &[&[u8]], limits: NodeLimits) {
        debug_assert!(id > self.last_id, "IDs only grow");
        let total: usize = fields.iter().map(|f| f.len()).sum();
        let max_bytes = match usize::try_from(limits.max_bytes) {
            Ok(0) | Err(_) => LISTPACK_MAX_SIZE,
            Ok(b) => b.min(LISTPACK_MAX_SIZE),
        };
        let need_new = match self.nodes.last_key_value() {
            None => true,
            Some((_, node)) => {
                node.data.len() + total >= max_bytes
                    || (limits.max_entries > 0 && i64::from(node.count) >= limits.max_entries)
            }
        };
        if need_new {
            if let Some(mut last) = self.nodes.last_entry() {
                last.get_mut().data.shrink_to_fit();
            }
            self.nodes.insert(id, Node { master: id, data: Vec::new(), count: 0, live: 0 });
        }
        let node = self.nodes.last_entry().expect("a node").into_mut();
        node.push(id, fields);
        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
        if self.length == 1 {
            self.first_id = id;
        }
    }

    /// Live entries with `start <= id <= end`, ascending (or descending with `rev`), at
    /// most `count` of them (0: all).
    pub fn range(&self, start: StreamId, end: StreamId, rev: bool, count: usize) -> Vec<(StreamId, Fields<'_>)> {
        let mut out = Vec::new();
        if start > end {
            return out;
        }
        // The node holding `start` is the last one whose master is <= start.
        let first_master = self.nodes.range(..=start).next_back().map(|(k, _)| *k).unwrap_or(start);
        let nodes = self.nodes.range(first_master..=end);
        let full = |out: &Vec<_>| count != 0 && out.len() >= count;
        if rev {
            for (_, node) in nodes.rev() {
                let raws: Vec<Raw<'_>> = node.raws().collect();
                for r in raws.into_iter().rev() {
                    if r.deleted || r.id > end {
                        continue;
                    }
                    if r.id < start {
                        return out;
                    }
                    out.push((r.id, r.fields));
                    if full(&out) {
                        return out;
                    }
                }
            }
        } else {
            for (_, node) in nodes {
                for r in node.raws() {
                    if r.deleted || r.id < start {
                        continue;
                    }
                    if r.id > end {
                        return out;
                    }
                    out.push((r.id, r.fields));
                    if full(&out) {
                        return out;
                    }
                }
            }
        }
        out
    }

    /// The fields of the live entry `id`.
    pub fn get(&self, id: StreamId) -> Option<Fields<'_>> {
        let (_, node) = self.nodes.range(..=id).next_back()?;
        node.raws().find(|r| r.id == id && !r.deleted).map(|r| r.fields)
    }

    /// The first (or last) live entry's ID.
    pub fn edge_id(&self, first: bool) -> Option<StreamId> {
        if first {
            self.nodes.values().find_map(|n| n.raws().find(|r| !r.deleted).map(|r| r.id))
        } else {
            self.nodes.values().rev().find_map(Node::last_live_id)
        }
    }

    /// Marks entry `id` deleted (Redis's streamDeleteItem); true if it was live. Does not
    /// touch the XDEL metadata (see `xdel`).
    fn delete_item(&mut self, id: StreamId) -> bool {
        let Some((&master, node)) = self.nodes.range_mut(..=id).next_back() else { return false };
        let Some(at) = node.raws().find(|r| r.id == id && !r.deleted).map(|r| r.at) else { return false };
        node.data[at] = FLAG_DELETED;
        node.live -= 1;
        if node.live == 0 {
            self.nodes.remove(&master);
        }
        self.length -= 1;
        true
    }

    /// XDEL: deletes the given IDs, updating max-deleted-entry-id and the recorded first
    /// ID. Returns how many existed.
    pub fn xdel(&mut self, ids: &[StreamId]) -> u64 {
        let mut deleted = 0;
        let mut first_entry = false;
        for &id in ids {
            if self.delete_item(id) {
                if id == self.first_id {
                    first_entry = true;
                }
                if id > self.max_deleted_id {
                    self.max_deleted_id = id;
                }
                deleted += 1;
            }
        }
        if deleted > 0 {
            if self.length == 0 {
                self.first_id = StreamId::MIN;
            } else if first_entry {
                self.first_id = self.edge_id(true).unwrap_or(StreamId::MAX);
            }
        }
        deleted
    }

    /// Trims as Redis's streamTrim: whole nodes first; with `approx` only whole nodes;
    /// `limit` (0: none) caps the entries removed. Returns how many were removed.
    pub fn trim(&mut self, trim: Trim, approx: bool, limit: u64) -> u64 {
        let mut deleted = 0u64;
        loop {
            if let Trim::MaxLen(maxlen) = trim {
                if self.length <= maxlen {
                    break;
                }
            }
            let Some(mut first) = self.nodes.first_entry() else { break };
            let entries = u64::from(first.get().live);
            if limit != 0 && deleted + entries > limit {
                break;
            }
            let remove_node = match trim {
                Trim::MaxLen(maxlen) => self.length - entries >= maxlen,
                Trim::MinId(min) => first.get().last_id() < min,
            };
            if remove_node {
                first.remove();
                self.length -= entries;
                deleted += entries;
                continue;
            }
            if approx {
                break;
            }
            let node = first.get_mut();
            let ats: Vec<(usize, StreamId)> = node.raws().filter(|r| !r.deleted).map(|r| (r.at, r.id)).collect();
            for (at, id) in ats {
                let stop = match trim {
                    Trim::MaxLen(maxlen) => self.length <= maxlen,
                    Trim::MinId(min) => id >= min,
                };
                if stop {
                    break;
                }
                node.data[at] = FLAG_DELETED;
                node.live -= 1;
                self.length -= 1;
                deleted += 1;
            }
            if node.live == 0 {
                first.remove();
            }
            break;
        }
        if self.length == 0 {
            self.first_id = StreamId::MIN;
        } else if deleted > 0 {
            self.first_id = self.edge_id(true).unwrap_or(StreamId::MAX);
        }
        deleted
    }

    /// Whether `start..=end` (None: unbounded) may hold a deleted entry (Redis's
    /// streamRangeHasTombstones).
    pub fn range_has_tombstones(&self, start: Option<StreamId>, end: Option<StreamId>) -> bool {
        if self.length == 0 || self.max_deleted_id.is_zero() {
            return false;
        }
        if self.first_id > self.max_deleted_id {
            return false;
        }
        let start = start.unwrap_or(StreamId::MIN);
        let end = end.unwrap_or(StreamId::MAX);
        start <= self.max_deleted_id && self.max_deleted_id <= end
    }

    /// Redis's streamEstimateDistanceFromFirstEverEntry: the logical read counter of `id`,
    /// or `ENTRIES_READ_INVALID` when it cannot be known.
    pub fn estimate_distance(&self, id: StreamId) -> i64 {
        if self.entries_added == 0 {
            return 0;
        }
        if self.length == 0 && id <= self.last_id {
            return self.entries_added as i64;
        }
        match id.cmp(&self.last_id) {
            std::cmp::Ordering::Equal => return self.entries_added as i64,
            std::cmp::Ordering::Greater => return ENTRIES_READ_INVALID,
            std::cmp::Ordering::Less => {}
        }
        if self.max_deleted_id.is_zero() || self.max_deleted_id < self.first_id {
            match id.cmp(&self.first_id) {
                std::cmp::Ordering::Less => return (self.entries_added - self.length) as i64,
                std::cmp::Ordering::Equal => return (self.entries_added - self.length + 1) as i64,
                std::cmp::Ordering::Greater => {}
            }
        }
        ENTRIES_READ_INVALID
    }

    /// A group's lag as XINFO reports it (None: unknown).
    pub fn group_lag(&self, group: &Group) -> Option<i64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if group.entries_read != ENTRIES_READ_INVALID && !self.range_has_tombstones(Some(group.last_id), None) {
            return Some(self.entries_added as i64 - group.entries_read);
        }
        let read = self.estimate_distance(group.last_id);
        (read != ENTRIES_READ_INVALID).then(|| self.entries_added as i64 - read)
    }

    /// Advances a group's last-delivered ID to `id` (delivered now), updating its read
    /// counter as streamReplyWithRange does.
    pub fn advance_group(&mut self, group: &[u8], id: StreamId) {
        let has_tombstones = self.range_has_tombstones(Some(id), None);
        let estimate = self.estimate_distance(id);
        let entries_added = self.entries_added;
        let Some(g) = self.groups.get_mut(group) else { return };
        if id > g.last_id {
            if g.entries_read != ENTRIES_READ_INVALID && !has_tombstones {
                g.entries_read += 1;
            } else if entries_added != 0 {
                g.entries_read = estimate;
            }
            g.last_id = id;
        }
    }

    /// Bytes used by entry data (for MEMORY USAGE).
    pub fn data_bytes(&self) -> usize {
        self.nodes.values().map(|n| n.data.capacity() + 48).sum()
    }

    /// Every live entry in order (digest, serialization, tests).
    pub fn entries(&self) -> Vec<(StreamId, Fields<'_>)> {
        self.range(StreamId::MIN, StreamId::MAX, false, 0)
    }

    /// Every node as its first ID (the key Redis's radix tree gives it) and its entries in
    /// order, deleted ones included: the layout an RDB snapshot persists, one listpack per
    /// node.
    pub fn nodes(&self) -> impl Iterator<Item = (StreamId, Vec<NodeEntry<'_>>)> + '_ {
        self.nodes.iter().map(|(master, node)| {
            let entries = node.raws().map(|r| NodeEntry { id: r.id, deleted: r.deleted, fields: r.fields }).collect();
            (*master, entries)
        })
    }

    /// Appends a whole node as loaded from a snapshot. The caller (the RDB loader) checked
    /// that `master` <= the first entry's ID, that IDs ascend, and that they are above every
    /// entry already held; it also sets `length`, `last_id` and the other metadata itself.
    pub fn push_loaded_node(&mut self, master: StreamId, entries: &[(StreamId, bool, Vec<&[u8]>)]) {
        let mut node = Node { master, data: Vec::new(), count: 0, live: 0 };
        for (id, deleted, fields) in entries {
            debug_assert!(*id >= master, "entries follow their node's master ID");
            let at = node.data.len();
            node.push(*id, fields);
            if *deleted {
                node.data[at] = FLAG_DELETED;
                node.live -= 1;
            }
        }
        self.nodes.insert(master, node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(ms: u64, seq: u64) -> StreamId {
        StreamId::new(ms, seq)
    }

    fn filled(n: u64, max_entries: i64) -> StreamValue {
        let mut s = StreamValue::new();
        for i in 1..=n {
            s.append(id(i, 0), &[b"f", b"v"], NodeLimits { max_entries, max_bytes: 4096 });
        }
        s
    }

    #[test]
    fn parse_ids() {
        assert_eq!(parse_id(b"1-2", 0, true, false).unwrap().id, id(1, 2));
        assert_eq!(parse_id(b"5", 7, true, false).unwrap().id, id(5, 7));
        assert!(parse_id(b"-", 0, true, false).is_none());
        assert_eq!(parse_id(b"+", 0, false, false).unwrap().id, StreamId::MAX);
        assert!(!parse_id(b"3-*", 0, true, true).unwrap().seq_given);
        assert!(parse_id(b"3-*", 0, true, false).is_none());
        assert!(parse_id(b"a-1", 0, true, false).is_none());
        assert!(parse_id(b"1--1", 0, true, false).is_none());
        assert_eq!(parse_id(b"18446744073709551615-1", 0, true, false).unwrap().id, id(u64::MAX, 1));
        assert!(parse_id(b"18446744073709551616", 0, true, false).is_none());
    }

    #[test]
    fn append_range_and_delete() {
        let mut s = filled(250, 100);
        assert_eq!(s.node_count(), 3);
        assert_eq!(s.range(id(10, 0), id(12, 0), false, 0).len(), 3);
        assert_eq!(
            s.range(id(10, 0), id(12, 0), true, 2).iter().map(|e| e.0).collect::<Vec<_>>(),
            [id(12, 0), id(11, 0)]
        );
        assert_eq!(s.xdel(&[id(1, 0), id(1, 0), id(300, 0)]), 1);
        assert_eq!(s.first_id, id(2, 0));
        assert_eq!(s.max_deleted_id, id(1, 0));
        assert!(s.get(id(1, 0)).is_none());
        assert_eq!(s.get(id(2, 0)).unwrap().to_vec(), vec![b"f".to_vec(), b"v".to_vec()]);
        assert_eq!(s.len(), 249);
    }

    #[test]
    fn trims_like_redis() {
        let mut s = filled(250, 100);
        assert_eq!(s.trim(Trim::MaxLen(200), true, 0), 0);
        assert_eq!(s.trim(Trim::MaxLen(140), true, 0), 100);
        assert_eq!(s.trim(Trim::MaxLen(100), false, 0), 50);
        assert_eq!(s.first_id, id(151, 0));
        assert_eq!(s.trim(Trim::MinId(id(200, 0)), false, 0), 49);
        assert_eq!(s.len(), 51);
        assert_eq!(s.trim(Trim::MaxLen(0), false, 0), 51);
        assert_eq!(s.first_id, StreamId::MIN);
    }

    #[test]
    fn trim_limit_and_minid_nodes() {
        let mut s = filled(10, 2);
        // Approximate trimming removes whole nodes of 2, never more than the limit allows.
        assert_eq!(s.trim(Trim::MaxLen(0), true, 3), 2);
        assert_eq!(s.trim(Trim::MinId(id(6, 0)), true, 0), 2);
        assert_eq!(s.first_id, id(5, 0));
        assert_eq!(s.trim(Trim::MinId(id(6, 0)), false, 0), 1);
        assert_eq!(s.xdel(&[id(7, 0), id(6, 0)]), 2);
        assert_eq!(s.node_count(), 2);
        assert_eq!(s.range(StreamId::MIN, StreamId::MAX, false, 0).len(), 3);
        assert_eq!(s.edge_id(false), Some(id(10, 0)));
        assert_eq!(s.first_id, id(8, 0));
    }

    #[test]
    fn group_pending_entries() {
        let mut g = Group::new(StreamId::MIN, 0);
        assert!(g.create_consumer(b"a", 1));
        assert!(!g.create_consumer(b"a", 2));
        g.create_consumer(b"b", 1);
        g.deliver(id(1, 0), b"a", 10);
        g.deliver(id(2, 0), b"a", 10);
        // Delivering again to another consumer moves the entry and resets its count.
        g.pel.get_mut(&id(2, 0)).unwrap().delivery_count = 5;
        g.deliver(id(2, 0), b"b", 20);
        assert_eq!(g.pel[&id(2, 0)].delivery_count, 1);
        assert_eq!(g.consumers[&b"a"[..]].pel.len(), 1);
        assert_eq!(g.consumers[&b"b"[..]].pel.len(), 1);
        assert!(g.ack(id(1, 0)));
        assert!(!g.ack(id(1, 0)));
        assert_eq!(g.delete_consumer(b"b"), Some(1));
        assert!(g.pel.is_empty());
        assert_eq!(g.delete_consumer(b"b"), None);
    }

    #[test]
    fn lag_and_distance() {
        let mut s = filled(5, 100);
        assert_eq!(s.estimate_distance(id(0, 0)), 0);
        assert_eq!(s.estimate_distance(id(1, 0)), 1);
        assert_eq!(s.estimate_distance(id(5, 0)), 5);
        assert_eq!(s.estimate_distance(id(3, 0)), ENTRIES_READ_INVALID);
        s.groups.insert(b"g".to_vec(), Group::new(StreamId::MIN, 0));
        assert_eq!(s.group_lag(&s.groups[&b"g"[..]]), Some(5));
        s.advance_group(b"g", id(1, 0));
        assert_eq!(s.groups[&b"g"[..]].entries_read, 1);
    }
}
