//! Sets: a sorted integer array (Redis's intset) while every member is an integer and the
//! set is small, a hash table after.
//!
//! The rules are Redis 7.0's (t_set.c): a set starts as an intset when its first member is
//! an integer (as `string2ll` reads it), and becomes a table, never going back, when a
//! non-integer is added or it grows past `set-max-intset-entries`.
//!
//! A "table" of up to 128 members of up to 64 bytes is kept packed in one buffer (`Small`,
//! as Redis 7.2's listpack sets, with 7.2's default limits), and becomes a real table past
//! them. Redis 7.0 has no such encoding, so it reports `hashtable` as 7.0 does: what a
//! client sees is the same (SSCAN pages by COUNT, random picks uniform), in a fifth of the
//! memory of a small set's table.

use std::borrow::Cow;

use hashbrown::DefaultHashBuilder;
use indexmap::IndexSet;

use super::intset::IntSet;
use super::small::SmallBytes;
use super::{Bytes, Limits};

/// The table encoding. Its order is arbitrary; being indexable gives O(1) random picks
/// (SPOP, SRANDMEMBER) and O(1) removal.
/// Members up to 22 bytes are stored in the table itself (`SmallBytes`).
pub type MemberTable = IndexSet<SmallBytes, DefaultHashBuilder>;

/// intsets hold at most 2^30 members whatever the configuration says (intset internals).
const INTSET_MAX_ENTRIES: usize = 1 << 30;

/// A `Small` set holds at most this many members (Redis 7.2's `set-max-listpack-entries`
/// default) ...
const SMALL_MAX_ENTRIES: usize = 128;
/// ... of at most this many bytes each (7.2's `set-max-listpack-value` default).
const SMALL_MAX_MEMBER: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetValue {
    /// Ascending, no duplicates.
    Intset(IntSet),
    /// A small table's members, packed (see the module's documentation): each a length
    /// byte and its bytes, in insertion order.
    Small(Box<[u8]>),
    /// Boxed: a stored value stays small (the key table holds every value inline).
    Table(Box<MemberTable>),
}

/// The members of a `Small` buffer. PERF: members are at most `SMALL_MAX_MEMBER` (< 128)
/// bytes, so each length prefix is one byte, read without LEB128's loop.
fn small_members(buf: &[u8]) -> impl Iterator<Item = &[u8]> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || {
        let len = usize::from(*buf.get(pos)?);
        let member = &buf[pos + 1..pos + 1 + len];
        pos += 1 + len;
        Some(member)
    })
}

/// Where the `Small` member that `pick` chooses (given its index and bytes) starts and ends,
/// length prefix included.
fn small_find(buf: &[u8], mut pick: impl FnMut(usize, &[u8]) -> bool) -> Option<std::ops::Range<usize>> {
    let mut pos = 0;
    for (i, member) in small_members(buf).enumerate() {
        let next = pos + 1 + member.len();
        if pick(i, member) {
            return Some(pos..next);
        }
        pos = next;
    }
    None
}

/// `buf` without the bytes in `cut`, exactly sized.
fn small_without(buf: &mut Box<[u8]>, cut: std::ops::Range<usize>) {
    let mut v = std::mem::take(buf).into_vec();
    v.drain(cut);
    *buf = v.into_boxed_slice();
}

impl Default for SetValue {
    fn default() -> Self {
        SetValue::Intset(IntSet::new())
    }
}

/// A member as an intset would store it: an integer in canonical decimal form.
fn as_int(member: &[u8]) -> Option<i64> {
    quince_resp::parse_i64_strict(member)
}

impl SetValue {
    /// An empty set of the encoding Redis's setTypeCreate picks for a first member.
    pub fn new_for(first: &[u8]) -> Self {
        if as_int(first).is_some() {
            SetValue::Intset(IntSet::new())
        } else {
            SetValue::Small(Box::default())
        }
    }

    /// A set of string members (no duplicates), packed when it is small enough.
    pub fn from_table(table: MemberTable) -> Self {
        if table.len() <= SMALL_MAX_ENTRIES && table.iter().all(|m| m.len() <= SMALL_MAX_MEMBER) {
            let mut buf = Vec::new();
            for m in &table {
                buf.push(m.len() as u8);
                buf.extend_from_slice(m);
            }
            SetValue::Small(buf.into_boxed_slice())
        } else {
            SetValue::Table(Box::new(table))
        }
    }

    pub fn len(&self) -> usize {
        match self {
            SetValue::Intset(v) => v.len(),
            SetValue::Small(b) => small_members(b).count(),
            SetValue::Table(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        match self {
            SetValue::Intset(_) => "intset",
            SetValue::Small(_) | SetValue::Table(_) => "hashtable",
        }
    }

    /// Every member, in the encoding's order (intsets ascending).
    pub fn iter(&self) -> Box<dyn Iterator<Item = Cow<'_, [u8]>> + '_> {
        match self {
            SetValue::Intset(v) => Box::new(v.iter().map(|n| Cow::Owned(n.to_string().into_bytes()))),
            SetValue::Small(b) => Box::new(small_members(b).map(Cow::Borrowed)),
            SetValue::Table(t) => Box::new(t.iter().map(|m| Cow::Borrowed(&m[..]))),
        }
    }

    pub fn contains(&self, member: &[u8]) -> bool {
        match self {
            SetValue::Intset(v) => as_int(member).is_some_and(|n| v.binary_search(n).is_ok()),
            SetValue::Small(b) => small_members(b).any(|m| m == member),
            SetValue::Table(t) => t.contains(member),
        }
    }

    /// Adds `member` (Redis's setTypeAdd); true if it is new. Converts an intset to a table
    /// for a non-integer member or when it grows past `set-max-intset-entries`.
    pub fn add(&mut self, member: &[u8], limits: &Limits) -> bool {
        match self {
            SetValue::Intset(v) => match as_int(member) {
                Some(n) => match v.binary_search(n) {
                    Ok(_) => false,
                    Err(at) => {
                        v.insert(at, n);
                        if v.len() > limits.set_max_intset_entries.min(INTSET_MAX_ENTRIES) {
                            self.convert();
                        }
                        true
                    }
                },
                None => {
                    self.convert();
                    self.add(member, limits)
                }
            },
            SetValue::Small(b) => {
                let mut count = 0;
                if small_members(b).inspect(|_| count += 1).any(|m| m == member) {
                    return false;
                }
                if count >= SMALL_MAX_ENTRIES || member.len() > SMALL_MAX_MEMBER {
                    self.unpack();
                    return self.add(member, limits);
                }
                let mut v = std::mem::take(b).into_vec();
                v.reserve_exact(member.len() + 1);
                v.push(member.len() as u8);
                v.extend_from_slice(member);
                *b = v.into_boxed_slice();
                true
            }
            SetValue::Table(t) => {
                if t.contains(member) {
                    false
                } else {
                    t.insert(member.into());
                    true
                }
            }
        }
    }

    /// `Small` to a real table, the members in the same order (so an SSCAN under way keeps
    /// its place).
    fn unpack(&mut self) {
        if let SetValue::Small(b) = self {
            let mut table =
                MemberTable::with_capacity_and_hasher(small_members(b).count() + 1, DefaultHashBuilder::default());
            table.extend(small_members(b).map(SmallBytes::new));
            *self = SetValue::Table(Box::new(table));
        }
    }

    /// Removes `member`; true if it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self {
            SetValue::Intset(v) => match as_int(member).map(|n| v.binary_search(n)) {
                Some(Ok(at)) => {
                    v.remove(at);
                    true
                }
                _ => false,
            },
            SetValue::Small(b) => match small_find(b, |_, m| m == member) {
                Some(cut) => {
                    small_without(b, cut);
                    true
                }
                None => false,
            },
            SetValue::Table(t) => t.swap_remove(member),
        }
    }

    /// The `i`-th member in the encoding's order (`i < len`).
    pub fn get_index(&self, i: usize) -> Cow<'_, [u8]> {
        match self {
            SetValue::Intset(v) => Cow::Owned(v.get(i).to_string().into_bytes()),
            SetValue::Small(b) => Cow::Borrowed(small_members(b).nth(i).expect("index below len")),
            SetValue::Table(t) => Cow::Borrowed(&t[i]),
        }
    }

    /// Removes and returns the `i`-th member (`i < len`).
    pub fn take_index(&mut self, i: usize) -> Bytes {
        match self {
            SetValue::Intset(v) => v.remove(i).to_string().into_bytes().into(),
            SetValue::Small(b) => {
                let cut = small_find(b, |at, _| at == i).expect("index below len");
                let member = Bytes::from(&b[cut.start + 1..cut.end]);
                small_without(b, cut);
                member
            }
            SetValue::Table(t) => Bytes::from(&t.swap_remove_index(i).expect("index below len")[..]),
        }
    }

    /// Intset to table (Redis never converts back): packed while small.
    fn convert(&mut self) {
        if let SetValue::Intset(v) = self {
            let mut table = MemberTable::with_capacity_and_hasher(v.len(), DefaultHashBuilder::default());
            table.extend(v.iter().map(|n| SmallBytes::new(n.to_string().as_bytes())));
            *self = SetValue::from_table(table);
        }
    }

    /// One SSCAN step: an intset returns everything and cursor 0, as in Redis; a table
    /// returns `count` members (see `scan_positions`).
    pub fn scan(&self, cursor: u64, count: usize) -> ScanPage<Cow<'_, [u8]>> {
        match self {
            SetValue::Intset(_) => ScanPage { items: self.iter().collect(), next: 0 },
            SetValue::Small(b) => {
                let members: Vec<&[u8]> = small_members(b).collect();
                let (at, next) = scan_positions(members.len(), cursor, count);
                ScanPage { items: at.map(|i| Cow::Borrowed(members[i])).collect(), next }
            }
            SetValue::Table(t) => {
                let (at, next) = scan_positions(t.len(), cursor, count);
                ScanPage { items: at.filter_map(|i| t.get_index(i)).map(|m| Cow::Borrowed(&m[..])).collect(), next }
            }
        }
    }
}

/// One SSCAN/HSCAN step over an indexed table of `len` elements: the positions to return
/// and the cursor after them (0: done). The cursor is the number of positions still to
/// visit, walked from the top down. Tables only append (a new element goes last, a
/// replaced one keeps its place) and fill a removed element's place with the last one
/// (`swap_remove`), so no element ever moves from a position still to visit to one
/// already visited: every element present for the whole scan is returned (Redis's SCAN
/// guarantee; one moved the other way may come twice, as Redis allows), at `count`
/// elements of work per call, as Redis's dictScan.
pub fn scan_positions(len: usize, cursor: u64, count: usize) -> (std::ops::Range<usize>, u64) {
    let top = if cursor == 0 { len } else { usize::try_from(cursor).unwrap_or(usize::MAX).min(len) };
    let bottom = top.saturating_sub(count.max(1));
    (bottom..top, bottom as u64)
}

/// Items of one HSCAN/SSCAN step and the cursor to continue from (0: done).
#[derive(Debug)]
pub struct ScanPage<T> {
    pub items: Vec<T>,
    pub next: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize) -> Limits {
        Limits { set_max_intset_entries: max, ..Limits::default() }
    }

    fn members(s: &SetValue) -> Vec<String> {
        let mut v: Vec<String> = s.iter().map(|m| String::from_utf8(m.into_owned()).unwrap()).collect();
        v.sort();
        v
    }

    #[test]
    fn intset_until_a_string_or_too_many() {
        let l = limits(3);
        let mut s = SetValue::new_for(b"3");
        assert!(s.add(b"3", &l));
        assert!(s.add(b"-1", &l));
        assert!(!s.add(b"3", &l));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![Cow::Borrowed(&b"-1"[..]), Cow::Borrowed(&b"3"[..])]);
        assert!(s.add(b"2", &l));
        assert_eq!(s.encoding_name(), "intset");
        assert!(s.add(b"7", &l));
        assert_eq!(s.encoding_name(), "hashtable");
        assert_eq!(members(&s), ["-1", "2", "3", "7"]);

        let mut s = SetValue::new_for(b"1");
        s.add(b"1", &l);
        s.add(b"01", &l);
        assert_eq!(s.encoding_name(), "hashtable", "01 is not an integer for string2ll");
        assert!(s.contains(b"1") && s.contains(b"01") && !s.contains(b"2"));
    }

    #[test]
    fn membership_across_encodings() {
        let l = limits(512);
        let mut s = SetValue::new_for(b"5");
        s.add(b"5", &l);
        assert!(s.contains(b"5"));
        assert!(!s.contains(b"+5"));
        assert!(!s.contains(b"5.0"));
        assert!(!s.remove(b"x"));
        assert!(s.remove(b"5"));
        assert!(s.is_empty());
        assert_eq!(SetValue::new_for(b"a").encoding_name(), "hashtable");
        assert_eq!(SetValue::new_for(b"99999999999999999999").encoding_name(), "hashtable");
    }

    #[test]
    fn take_index_removes() {
        let l = limits(512);
        let mut s = SetValue::new_for(b"1");
        for m in ["1", "2", "3"] {
            s.add(m.as_bytes(), &l);
        }
        assert_eq!(&*s.take_index(1), b"2");
        assert_eq!(members(&s), ["1", "3"]);
    }

    #[test]
    fn scan_pages_cover_members_present_throughout() {
        let l = limits(0);
        let mut s = SetValue::new_for(b"x");
        for i in 0..500 {
            s.add(format!("m{i}").as_bytes(), &l);
        }
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        let mut step = 0;
        loop {
            let page = s.scan(cursor, 5);
            let items: Vec<Vec<u8>> = page.items.iter().map(|m| m.to_vec()).collect();
            assert!(items.len() <= 5, "a page of {} members for COUNT 5", items.len());
            cursor = page.next;
            seen.extend(items);
            // Remove and add other members while scanning.
            step += 1;
            s.remove(format!("m{}", 400 + step).as_bytes());
            s.add(format!("new{step}").as_bytes(), &l);
            if cursor == 0 {
                break;
            }
        }
        for i in 0..400 {
            assert!(seen.contains(format!("m{i}").as_bytes()), "m{i} missed");
        }
        assert!(step >= 100, "{step} calls for 500 members at COUNT 5");
    }

    /// A string set stays packed up to 128 members of up to 64 bytes, then becomes a table;
    /// every operation agrees with a model set across the change, and both report Redis
    /// 7.0's `hashtable`.
    #[test]
    fn small_string_sets_are_packed_until_too_big() {
        assert_eq!(std::mem::size_of::<SetValue>(), 24);
        let l = limits(512);
        let mut rng = crate::keyspace::Rng::new(11);
        for round in 0..40 {
            let mut s = SetValue::new_for(b"a");
            let mut model = std::collections::BTreeSet::new();
            for _ in 0..400 {
                let long = rng.below(500) == 0;
                let m = if long { vec![b'L'; 65] } else { format!("m{}", rng.below(150 + round)).into_bytes() };
                match rng.below(4) {
                    0 => assert_eq!(s.remove(&m), model.remove(&m)),
                    1 if !model.is_empty() => {
                        let i = rng.below(s.len());
                        let picked = s.get_index(i).into_owned();
                        assert_eq!(s.take_index(i).to_vec(), picked);
                        assert!(model.remove(&picked));
                    }
                    _ => assert_eq!(s.add(&m, &l), model.insert(m.clone())),
                }
                assert_eq!(s.len(), model.len());
                assert_eq!(s.encoding_name(), "hashtable");
                let packed = matches!(s, SetValue::Small(_));
                if model.len() > SMALL_MAX_ENTRIES || model.iter().any(|m| m.len() > SMALL_MAX_MEMBER) {
                    assert!(!packed, "{} members packed", model.len());
                }
                assert!(model.iter().all(|m| s.contains(m)) && !s.contains(b"absent"));
            }
            let all: std::collections::BTreeSet<Vec<u8>> = s.iter().map(|m| m.into_owned()).collect();
            assert_eq!(all, model);
        }
        // Packed from the start, and after an intset meets a string.
        let mut s = SetValue::new_for(b"1");
        s.add(b"1", &l);
        s.add(b"x", &l);
        assert!(matches!(s, SetValue::Small(_)));
        assert_eq!(members(&s), ["1", "x"]);
        let table: MemberTable = (0..200).map(|i| SmallBytes::new(format!("{i}x").as_bytes())).collect();
        assert!(matches!(SetValue::from_table(table), SetValue::Table(_)));
        let table: MemberTable = (0..20).map(|i| SmallBytes::new(format!("{i}x").as_bytes())).collect();
        assert!(matches!(SetValue::from_table(table), SetValue::Small(_)));
    }

    /// SSCAN of a packed set pages by COUNT and keeps its place across removals, additions
    /// and the change to a table.
    #[test]
    fn packed_set_scans_cover_members_present_throughout() {
        let l = limits(0);
        let mut s = SetValue::new_for(b"x");
        for i in 0..100 {
            s.add(format!("m{i}").as_bytes(), &l);
        }
        assert!(matches!(s, SetValue::Small(_)));
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        let mut step = 0;
        loop {
            let page = s.scan(cursor, 3);
            assert!(page.items.len() <= 3);
            seen.extend(page.items.iter().map(|m| m.to_vec()));
            cursor = page.next;
            step += 1;
            s.remove(format!("m{}", 90 + step % 10).as_bytes());
            s.add(format!("new{step}a").as_bytes(), &l);
            s.add(format!("new{step}b").as_bytes(), &l);
            if cursor == 0 {
                break;
            }
        }
        assert!(matches!(s, SetValue::Table(_)), "grew past 128 members while scanning");
        for i in 0..90 {
            assert!(seen.contains(format!("m{i}").as_bytes()), "m{i} missed");
        }
    }
}
