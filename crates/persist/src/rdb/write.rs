//! Encoding values as RDB objects (`rdbSaveObjectType` + `rdbSaveObject`), in the
//! encodings Redis 7.0 writes: listpacks for small hashes and sorted sets, intsets for
//! small integer sets, QUICKLIST_2 for lists, STREAM_LISTPACKS_2 for streams.

use quince_engine::keyspace::{StrValue, Value};
use quince_engine::types::{HashValue, ListValue, SetValue, ZSetValue};

use super::encode::Output;
use super::listpack::ListpackBuilder;
use super::{intset, lzf, stream, types};

/// What shapes the bytes of an object besides its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// `rdbcompression`: LZF-compress strings (and encoded blobs) over 20 bytes.
    pub compress: bool,
    /// `list-max-listpack-size`: how lists are cut into quicklist nodes.
    pub list_max_listpack_size: i64,
    /// `list-compress-depth`: nodes this far from both ends stay plain; Redis keeps the
    /// inner ones LZF-compressed in memory and saves them as they are.
    pub list_compress_depth: i64,
}

impl Default for WriteOptions {
    /// Redis's defaults: compression on, 8 KiB list nodes.
    fn default() -> Self {
        Self { compress: true, list_max_listpack_size: -2, list_compress_depth: 0 }
    }
}

/// The RDB type byte `write_object` uses for `value`.
pub fn object_type(value: &Value) -> u8 {
    match value {
        Value::Str(_) => types::STRING,
        Value::List(_) => types::LIST_QUICKLIST_2,
        Value::Set(SetValue::Intset(_)) => types::SET_INTSET,
        Value::Set(SetValue::Small(_) | SetValue::Table(_)) => types::SET,
        Value::ZSet(ZSetValue::Listpack(_)) => types::ZSET_LISTPACK,
        Value::ZSet(ZSetValue::Skiplist(_)) => types::ZSET_2,
        Value::Hash(HashValue::Listpack(_)) => types::HASH_LISTPACK,
        Value::Hash(HashValue::Table(_)) => types::HASH,
        Value::Stream(_) => types::STREAM_LISTPACKS_2,
    }
}

/// Appends the encoding of `value` (without its type byte) to `out`.
pub fn write_object(value: &Value, opts: &WriteOptions, out: &mut Vec<u8>) {
    let mut o = Output { buf: std::mem::take(out), compress: opts.compress };
    write_value(&mut o, value, opts);
    *out = o.buf;
}

pub(crate) fn write_value(o: &mut Output, value: &Value, opts: &WriteOptions) {
    match value {
        Value::Str(StrValue::Int(n)) => o.int_string(*n),
        Value::Str(StrValue::Embstr(b)) => o.string(b),
        Value::Str(StrValue::Raw(b)) => o.string(b),
        Value::List(list) => write_list(o, list, opts.list_max_listpack_size, opts.list_compress_depth),
        Value::Set(SetValue::Intset(members)) => o.string(&intset::encode(&members.iter().collect::<Vec<_>>())),
        Value::Set(set @ (SetValue::Small(_) | SetValue::Table(_))) => {
            o.len(set.len() as u64);
            for m in set.iter() {
                o.string(&m);
            }
        }
        Value::ZSet(z @ ZSetValue::Listpack(_)) => {
            let mut lp = ListpackBuilder::new();
            for (member, score) in z.iter() {
                lp.push_str(member);
                push_score(&mut lp, score);
            }
            o.string(&lp.finish());
        }
        Value::ZSet(z @ ZSetValue::Skiplist(_)) => {
            o.len(z.len() as u64);
            // Greatest first, so loading inserts at the head of the skip list in O(1).
            for (member, score) in z.iter_from(0, true) {
                o.string(member);
                o.binary_double(score);
            }
        }
        Value::Hash(h @ HashValue::Listpack(_)) => {
            let mut lp = ListpackBuilder::new();
            for (f, v) in h.iter() {
                lp.push_str(f);
                lp.push_str(v);
            }
            o.string(&lp.finish());
        }
        Value::Hash(HashValue::Table(t)) => {
            o.len(t.len() as u64);
            for (f, v) in t.iter() {
                o.string(f);
                o.string(v);
            }
        }
        Value::Stream(s) => stream::write_stream(o, s),
    }
}

/// A score as a sorted-set listpack holds it (`zzlInsertAt`): an integer when the double
/// is integral and within ±2^62, else its `%.17g` text.
fn push_score(lp: &mut ListpackBuilder, score: f64) {
    let limit = (i64::MAX / 2) as f64;
    if (-limit..=limit).contains(&score) && score == (score as i64) as f64 {
        lp.push_int(score as i64);
    } else {
        let mut text = Vec::with_capacity(24);
        quince_resp::format_double(score, &mut text);
        lp.push_str(&text);
    }
}

/// Elements of at least this size get a node of their own (`packed_threshold`).
const PACKED_THRESHOLD: usize = 1 << 30;
/// Node size limits for negative `list-max-listpack-size` values -1..-5.
const OPTIMIZATION_LEVEL: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
const SIZE_SAFETY_LIMIT: usize = 8192;
const SIZE_ESTIMATE_OVERHEAD: usize = 8;

/// Whether a quicklist node of `node_bytes` bytes and `count` elements takes one more
/// element of `sz` bytes (`_quicklistNodeAllowInsert`).
fn node_allows(node_bytes: usize, count: usize, fill: i64, sz: usize) -> bool {
    let new_sz = node_bytes + sz + SIZE_ESTIMATE_OVERHEAD;
    if fill < 0 {
        if let Some(&limit) = OPTIMIZATION_LEVEL.get((-fill - 1) as usize) {
            if new_sz <= limit {
                return true;
            }
        }
    }
    if new_sz > SIZE_SAFETY_LIMIT {
        return false;
    }
    (count as i64) < fill
}

/// Quicklist nodes smaller than this are never compressed (`MIN_COMPRESS_BYTES`).
const MIN_COMPRESS_BYTES: usize = 48;
/// A compressed node must be at least this much smaller (`MIN_COMPRESS_IMPROVE`).
const MIN_COMPRESS_IMPROVE: usize = 8;

/// A list as QUICKLIST_2: the nodes an RPUSH of every element would have built in Redis,
/// the inner ones (beyond `depth` from either end) compressed as Redis's quicklist keeps
/// them.
fn write_list(o: &mut Output, list: &ListValue, fill: i64, depth: i64) {
    let fill = fill.clamp(-5, (1 << 15) - 1);
    // (container, bytes): 2 = a listpack node, 1 = a plain node holding one element.
    let mut nodes: Vec<(u8, Vec<u8>)> = Vec::new();
    let mut current: Option<ListpackBuilder> = None;
    for item in list.iter() {
        if item.len() >= PACKED_THRESHOLD {
            if let Some(lp) = current.take() {
                nodes.push((2, lp.finish()));
            }
            nodes.push((1, item.to_vec()));
            continue;
        }
        let fits = current.as_ref().is_some_and(|lp| node_allows(lp.total_bytes(), lp.len(), fill, item.len()));
        if !fits {
            if let Some(lp) = current.take() {
                nodes.push((2, lp.finish()));
            }
            current = Some(ListpackBuilder::new());
        }
        current.as_mut().expect("a node").push_str(item);
    }
    if let Some(lp) = current {
        nodes.push((2, lp.finish()));
    }
    o.len(nodes.len() as u64);
    let depth = usize::try_from(depth).unwrap_or(0).min(u16::MAX as usize);
    let count = nodes.len();
    for (i, (container, bytes)) in nodes.into_iter().enumerate() {
        o.len(u64::from(container));
        let inner = depth > 0 && i >= depth && i + depth < count;
        if inner && container == 2 && bytes.len() >= MIN_COMPRESS_BYTES {
            // `__quicklistCompressNode`, then `rdbSaveLzfBlob` of the compressed node.
            if let Some(packed) = lzf::compress(&bytes, bytes.len()) {
                if packed.len() + MIN_COMPRESS_IMPROVE < bytes.len() {
                    o.lzf_blob(&packed, bytes.len());
                    continue;
                }
            }
        }
        o.string(&bytes);
    }
}
