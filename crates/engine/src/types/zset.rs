//! Sorted sets: a flat vector ordered by (score, member) (Redis's listpack) while small, a
//! skip list with spans plus a member -> score table (Redis's `skiplist` encoding) after.
//!
//! Conversion follows Redis 7.0: a set becomes a skiplist when an insert would make it hold
//! more than `zset-max-listpack-entries` members or brings a member longer than
//! `zset-max-listpack-value` bytes, and never converts back by itself. Results built whole
//! (ZUNIONSTORE, ZRANGESTORE, GEOSEARCHSTORE...) go through [`ZSetValue::from_entries`],
//! which gives the encoding Redis ends up with for them.
//!
//! # API used by other command families (geo)
//! - [`ZSetValue::new_for_add`] the empty set ZADD creates for a new key,
//! - [`ZSetValue::add`] ZADD's element update with NX/XX/GT/LT/INCR, [`ZSetValue::insert`]
//!   a plain upsert, [`ZSetValue::remove`], [`ZSetValue::score`], [`ZSetValue::rank`],
//! - [`ZSetValue::range_by_score`] members in a [`ScoreRange`] ascending or descending,
//! - [`ZSetValue::iter`], [`ZSetValue::iter_from`], [`ZSetValue::get_by_rank`], `len`.

use hashbrown::HashMap;

use super::packed::{self, Packed};
use super::skiplist::{before, SkipList, NIL};
use super::{Bytes, Limits};

/// The big encoding: ordered index plus member -> score lookup.
#[derive(Debug, Clone, Default)]
pub struct SkiplistSet {
    pub(crate) list: SkipList,
    pub(crate) dict: HashMap<Bytes, f64>,
}

#[derive(Debug, Clone)]
pub enum ZSetValue {
    /// Ascending by (score, member): member and score (8 bytes) alternate, packed in one
    /// buffer as a listpack keeps them.
    Listpack(Packed),
    Skiplist(Box<SkiplistSet>),
}

impl Default for ZSetValue {
    fn default() -> Self {
        ZSetValue::Listpack(Packed::new())
    }
}

/// A packed listpack's items as (member, score) entries, from a byte offset.
fn entries_at(p: &Packed, pos: usize) -> ListpackEntries<'_> {
    ListpackEntries(p.iter_at(pos))
}

fn entries(p: &Packed) -> ListpackEntries<'_> {
    entries_at(p, 0)
}

struct ListpackEntries<'a>(packed::Iter<'a>);

impl<'a> Iterator for ListpackEntries<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        let member = self.0.next()?;
        let score = self.0.next()?;
        Some((member, decode_score(score)))
    }
}

/// A score as a listpack item: integral scores of magnitude below 2^55 as 1 to 7
/// little-endian two's complement bytes (most scores are small integers: a listpack keeps
/// them as integers too), anything else as the 8 bytes of the f64. Returns (bytes, length).
fn encode_score(score: f64) -> ([u8; 8], usize) {
    const INT_LIMIT: f64 = (1u64 << 55) as f64;
    if score.fract() == 0.0 && score.abs() < INT_LIMIT {
        let n = score as i64;
        let bytes = n.to_le_bytes();
        // The fewest bytes that sign-extend back to n.
        let len = (1..=7).find(|&k| (n << (64 - 8 * k)) >> (64 - 8 * k) == n).expect("below 2^55 fits 7 bytes");
        (bytes, len)
    } else {
        (score.to_le_bytes(), 8)
    }
}

fn decode_score(bytes: &[u8]) -> f64 {
    if bytes.len() == 8 {
        return f64::from_le_bytes(bytes.try_into().expect("8 bytes"));
    }
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    let shift = 64 - 8 * bytes.len() as u32;
    ((i64::from_le_bytes(buf) << shift) >> shift) as f64
}

/// A listpack holding `entries`, already in (score, member) order.
fn packed_from<'a>(entries: impl IntoIterator<Item = (&'a [u8], f64)>) -> Packed {
    let mut p = Packed::new();
    for (m, sc) in entries {
        let (bytes, len) = encode_score(listpack_score(sc));
        p.push_all(&[m, &bytes[..len]]);
    }
    p
}

impl PartialEq for ZSetValue {
    /// Same members with the same scores (encodings may differ).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a.0 == b.0 && a.1 == b.1)
    }
}

/// A score interval as ZRANGEBYSCORE takes it: `min`/`max`, each inclusive or exclusive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreRange {
    pub min: f64,
    pub max: f64,
    pub min_exclusive: bool,
    pub max_exclusive: bool,
}

impl ScoreRange {
    /// `min <= score <= max`.
    pub fn inclusive(min: f64, max: f64) -> Self {
        Self { min, max, min_exclusive: false, max_exclusive: false }
    }

    /// Whether `score` is above the lower bound (Redis's zslValueGteMin).
    pub fn gte_min(&self, score: f64) -> bool {
        if self.min_exclusive {
            score > self.min
        } else {
            score >= self.min
        }
    }

    /// Whether `score` is below the upper bound (Redis's zslValueLteMax).
    pub fn lte_max(&self, score: f64) -> bool {
        if self.max_exclusive {
            score < self.max
        } else {
            score <= self.max
        }
    }
}

/// One end of a lexicographic range: `-`, `+`, `[member` or `(member`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexBound {
    NegInf,
    PosInf,
    Inclusive(Vec<u8>),
    Exclusive(Vec<u8>),
}

/// A member interval as ZRANGEBYLEX takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexRange {
    pub min: LexBound,
    pub max: LexBound,
}

impl LexRange {
    /// Redis's zslLexValueGteMin: `-` admits everything, `+` nothing.
    pub fn gte_min(&self, member: &[u8]) -> bool {
        match &self.min {
            LexBound::NegInf => true,
            LexBound::PosInf => false,
            LexBound::Inclusive(m) => member >= &m[..],
            LexBound::Exclusive(m) => member > &m[..],
        }
    }

    /// Redis's zslLexValueLteMax.
    pub fn lte_max(&self, member: &[u8]) -> bool {
        match &self.max {
            LexBound::NegInf => false,
            LexBound::PosInf => true,
            LexBound::Inclusive(m) => member <= &m[..],
            LexBound::Exclusive(m) => member < &m[..],
        }
    }
}

/// ZADD's options for one element (Redis's ZADD_IN_* flags).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddFlags {
    /// Only add new members.
    pub nx: bool,
    /// Only update existing members.
    pub xx: bool,
    /// Update an existing member only to a greater score.
    pub gt: bool,
    /// Update an existing member only to a lower score.
    pub lt: bool,
    /// Add the score to the current one (0 for a new member).
    pub incr: bool,
}

/// What [`ZSetValue::add`] did (Redis's ZADD_OUT_* flags).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AddOutcome {
    /// A new member, with this score.
    Added(f64),
    /// An existing member's score changed to this.
    Updated(f64),
    /// The member was processed but kept its score (same score, or a zero increment).
    Unchanged(f64),
    /// Nothing done because of NX, XX, GT or LT.
    Skipped,
    /// The score (or the incremented score) is NaN; nothing changed.
    Nan,
}

impl ZSetValue {
    /// The empty set ZADD creates for a new key whose first member is `first_member_len`
    /// bytes long: a skiplist straight away when the listpack could never hold it.
    pub fn new_for_add(first_member_len: usize, limits: &Limits) -> Self {
        if limits.zset_max_listpack_entries == 0 || first_member_len > limits.zset_max_listpack_value {
            ZSetValue::Skiplist(Box::default())
        } else {
            ZSetValue::Listpack(Packed::new())
        }
    }

    /// A set built whole from distinct members (store commands' results), in the encoding
    /// Redis 7.0 leaves them in: a listpack when it has at most `zset-max-listpack-entries`
    /// members and none longer than `zset-max-listpack-value`, a skiplist otherwise.
    pub fn from_entries(entries: Vec<(Bytes, f64)>, limits: &Limits) -> Self {
        let max_len = entries.iter().map(|(m, _)| m.len()).max().unwrap_or(0);
        let fits = entries.len() <= limits.zset_max_listpack_entries && max_len <= limits.zset_max_listpack_value;
        let mut entries = entries;
        if fits {
            for e in &mut entries {
                e.1 = listpack_score(e.1);
            }
            entries.sort_by(|a, b| order(a.1, &a.0, b.1, &b.0));
            debug_assert!(entries.windows(2).all(|w| w[0].0 != w[1].0), "members must be distinct");
            ZSetValue::Listpack(packed_from(entries.iter().map(|(m, sc)| (&m[..], *sc))))
        } else {
            let mut set = SkiplistSet::default();
            set.dict.reserve(entries.len());
            for (member, score) in entries {
                set.list.insert(member.clone(), score);
                let previous = set.dict.insert(member, score);
                debug_assert!(previous.is_none(), "members must be distinct");
            }
            ZSetValue::Skiplist(Box::new(set))
        }
    }

    pub fn len(&self) -> usize {
        match self {
            ZSetValue::Listpack(p) => p.len() / 2,
            ZSetValue::Skiplist(s) => s.list.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        match self {
            ZSetValue::Listpack(_) => "listpack",
            ZSetValue::Skiplist(_) => "skiplist",
        }
    }

    /// Every member with its score, ascending by (score, member).
    pub fn iter(&self) -> Box<dyn Iterator<Item = (&[u8], f64)> + '_> {
        Box::new(self.iter_from(0, false))
    }

    /// Members from 0-based `rank` (counted from the end when `reverse`), in order.
    pub fn iter_from(&self, rank: usize, reverse: bool) -> ZIter<'_> {
        let len = self.len();
        let remaining = len.saturating_sub(rank);
        let cursor = match self {
            ZSetValue::Listpack(_) => NIL,
            ZSetValue::Skiplist(s) if remaining == 0 => {
                let _ = s;
                NIL
            }
            ZSetValue::Skiplist(s) if reverse => {
                if rank == 0 {
                    s.list.last()
                } else {
                    s.list.node_at(len - 1 - rank)
                }
            }
            ZSetValue::Skiplist(s) => {
                if rank == 0 {
                    s.list.first()
                } else {
                    s.list.node_at(rank)
                }
            }
        };
        // Listpack: forward walks from the entry's byte offset; backward steps through
        // the offsets of the entries before it (a listpack walks back by its back-lengths).
        let (pos, back) = match self {
            ZSetValue::Listpack(p) if reverse => {
                let back = p.offsets(2 * (len - rank.min(len)), 2);
                (back.len(), back)
            }
            ZSetValue::Listpack(p) if remaining > 0 => (p.offset(2 * rank), Vec::new()),
            _ => (0, Vec::new()),
        };
        ZIter { set: self, pos, back, cursor, remaining, reverse }
    }

    /// The member at 0-based `rank` in ascending order.
    pub fn get_by_rank(&self, rank: usize) -> Option<(&[u8], f64)> {
        match self {
            ZSetValue::Listpack(p) => entries(p).nth(rank),
            ZSetValue::Skiplist(s) => {
                let x = s.list.node_at(rank);
                (x != NIL).then(|| s.list.entry(x))
            }
        }
    }

    /// The score of `member`.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match self {
            ZSetValue::Listpack(p) => entries(p).find(|(m, _)| *m == member).map(|(_, s)| s),
            ZSetValue::Skiplist(s) => s.dict.get(member).copied(),
        }
    }

    /// 0-based rank of `member`, ascending or (with `reverse`) descending.
    pub fn rank(&self, member: &[u8], reverse: bool) -> Option<usize> {
        let rank = match self {
            ZSetValue::Listpack(p) => entries(p).position(|(m, _)| m == member)?,
            ZSetValue::Skiplist(s) => {
                let score = *s.dict.get(member)?;
                s.list.count_prefix(|m, sc| before(sc, m, score, member))
            }
        };
        Some(if reverse { self.len() - 1 - rank } else { rank })
    }

    /// How many leading members (ascending order) satisfy `pred`, which must hold for a
    /// prefix of the order. O(log n).
    pub fn count_prefix(&self, mut pred: impl FnMut(&[u8], f64) -> bool) -> usize {
        match self {
            // A listpack is walked, as Redis does: few short entries.
            ZSetValue::Listpack(p) => entries(p).take_while(|(m, s)| pred(m, *s)).count(),
            ZSetValue::Skiplist(s) => s.list.count_prefix(pred),
        }
    }

    /// Ranks `[start, end)` of the members inside `range`.
    pub fn score_range_ranks(&self, range: &ScoreRange) -> (usize, usize) {
        let start = self.count_prefix(|_, s| !range.gte_min(s));
        let end = self.count_prefix(|_, s| range.lte_max(s));
        (start, end.max(start))
    }

    /// Ranks `[start, end)` of the members inside a lexicographic range (meaningful when all
    /// scores are equal, as for Redis).
    pub fn lex_range_ranks(&self, range: &LexRange) -> (usize, usize) {
        let start = self.count_prefix(|m, _| !range.gte_min(m));
        let end = self.count_prefix(|m, _| range.lte_max(m));
        (start, end.max(start))
    }

    /// Members with a score inside `range`, ascending or (with `reverse`) descending.
    pub fn range_by_score(&self, range: &ScoreRange, reverse: bool) -> ZIter<'_> {
        let (start, end) = self.score_range_ranks(range);
        self.rank_range(start, end, reverse)
    }

    /// Members with ranks in `[start, end)`, ascending or (with `reverse`) from `end - 1` down.
    pub fn rank_range(&self, start: usize, end: usize, reverse: bool) -> ZIter<'_> {
        let end = end.min(self.len());
        let start = start.min(end);
        let mut it = if reverse { self.iter_from(self.len() - end, true) } else { self.iter_from(start, false) };
        it.remaining = end - start;
        it
    }

    /// Adds or updates one member as ZADD does (Redis's zsetAdd), converting to a skiplist
    /// when the listpack limits would be exceeded.
    pub fn add(&mut self, member: &[u8], score: f64, flags: AddFlags, limits: &Limits) -> AddOutcome {
        if score.is_nan() {
            return AddOutcome::Nan;
        }
        let Some(current) = self.score(member) else {
            if flags.xx {
                return AddOutcome::Skipped;
            }
            self.insert_new(member, score, limits);
            return AddOutcome::Added(score);
        };
        if flags.nx {
            return AddOutcome::Skipped;
        }
        let score = if flags.incr { score + current } else { score };
        if score.is_nan() {
            return AddOutcome::Nan;
        }
        if (flags.lt && score >= current) || (flags.gt && score <= current) {
            return AddOutcome::Skipped;
        }
        if score == current {
            return AddOutcome::Unchanged(score);
        }
        self.update_score(member, current, score);
        AddOutcome::Updated(score)
    }

    /// Sets `member`'s score, adding it if absent. Returns whether it was added.
    pub fn insert(&mut self, member: &[u8], score: f64, limits: &Limits) -> bool {
        matches!(self.add(member, score, AddFlags::default(), limits), AddOutcome::Added(_))
    }

    /// Removes `member`; returns whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self {
            ZSetValue::Listpack(p) => {
                let found = entries(p).position(|(m, _)| m == member);
                if let Some(i) = found {
                    p.remove(2 * i, 2);
                }
                found.is_some()
            }
            ZSetValue::Skiplist(s) => match s.dict.remove(member) {
                Some(score) => {
                    s.list.remove(score, member).expect("dict and skiplist agree");
                    true
                }
                None => false,
            },
        }
    }

    /// Removes the members with ranks in `[start, end)`; returns how many.
    pub fn remove_rank_range(&mut self, start: usize, end: usize) -> usize {
        let end = end.min(self.len());
        if start >= end {
            return 0;
        }
        match self {
            ZSetValue::Listpack(p) => p.remove(2 * start, 2 * (end - start)),
            ZSetValue::Skiplist(s) => {
                let mut doomed = Vec::with_capacity(end - start);
                let mut x = s.list.node_at(start);
                for _ in start..end {
                    let (m, sc) = s.list.entry(x);
                    doomed.push((Bytes::from(m), sc));
                    x = s.list.next(x);
                }
                for (m, sc) in doomed {
                    s.list.remove(sc, &m);
                    s.dict.remove(&m);
                }
            }
        }
        end - start
    }

    /// Converts a skiplist back to a listpack when it fits the limits (Redis's
    /// zsetConvertToListpackIfNeeded, used by store commands).
    pub fn convert_to_listpack_if_needed(&mut self, limits: &Limits) {
        if let ZSetValue::Skiplist(s) = self {
            let max_len = s.dict.keys().map(|m| m.len()).max().unwrap_or(0);
            if s.list.len() <= limits.zset_max_listpack_entries && max_len <= limits.zset_max_listpack_value {
                let packed = packed_from(self.iter());
                *self = ZSetValue::Listpack(packed);
            }
        }
    }

    fn insert_new(&mut self, member: &[u8], score: f64, limits: &Limits) {
        if let ZSetValue::Listpack(p) = self {
            if p.len() / 2 < limits.zset_max_listpack_entries && member.len() <= limits.zset_max_listpack_value {
                let score = listpack_score(score);
                let at = entries(p).take_while(|(m, s)| before(*s, m, score, member)).count();
                let (bytes, len) = encode_score(score);
                p.insert(2 * at, &[member, &bytes[..len]]);
                return;
            }
            self.convert_to_skiplist();
        }
        let ZSetValue::Skiplist(s) = self else { unreachable!("converted above") };
        s.list.insert(member.into(), score);
        s.dict.insert(member.into(), score);
    }

    fn update_score(&mut self, member: &[u8], current: f64, score: f64) {
        match self {
            ZSetValue::Listpack(p) => {
                let i = entries(p).position(|(m, _)| m == member).expect("member present");
                p.remove(2 * i, 2);
                let score = listpack_score(score);
                let at = entries(p).take_while(|(pm, ps)| before(*ps, pm, score, member)).count();
                let (bytes, len) = encode_score(score);
                p.insert(2 * at, &[member, &bytes[..len]]);
            }
            ZSetValue::Skiplist(s) => {
                let m = s.list.remove(current, member).expect("dict and skiplist agree");
                s.list.insert(m, score);
                *s.dict.get_mut(member).expect("member present") = score;
            }
        }
    }

    fn convert_to_skiplist(&mut self) {
        if let ZSetValue::Listpack(p) = self {
            let mut set = SkiplistSet::default();
            set.dict.reserve(p.len() / 2);
            for (m, s) in entries(p) {
                set.list.insert(m.into(), s);
                set.dict.insert(m.into(), s);
            }
            *self = ZSetValue::Skiplist(Box::new(set));
        }
    }

    /// Members in the member -> score table's own order (for ZSCAN over a skiplist set and
    /// sampling); the listpack's order for a listpack.
    pub fn table_iter(&self) -> Box<dyn Iterator<Item = (&[u8], f64)> + '_> {
        match self {
            ZSetValue::Listpack(p) => Box::new(entries(p)),
            ZSetValue::Skiplist(s) => Box::new(s.dict.iter().map(|(m, s)| (&m[..], *s))),
        }
    }
}

/// A score as a listpack keeps it: Redis stores integral scores as integers there, so -0
/// comes back as 0 (a skiplist keeps the sign).
#[inline]
fn listpack_score(score: f64) -> f64 {
    if score == 0.0 {
        0.0
    } else {
        score
    }
}

/// Total order of (score, member) pairs; scores are never NaN.
fn order(s1: f64, m1: &[u8], s2: f64, m2: &[u8]) -> std::cmp::Ordering {
    s1.partial_cmp(&s2).unwrap_or(std::cmp::Ordering::Equal).then_with(|| m1.cmp(m2))
}

/// Walks a sorted set in rank order, forward or backward, for a bounded number of members.
#[derive(Debug, Clone)]
pub struct ZIter<'a> {
    set: &'a ZSetValue,
    /// Listpack: the next entry's byte offset (forward), or how many of `back` are left.
    pos: usize,
    /// Listpack, backward: byte offsets of the entries still to visit, first to last.
    back: Vec<usize>,
    /// Skiplist node.
    cursor: u32,
    remaining: usize,
    reverse: bool,
}

impl<'a> Iterator for ZIter<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        match self.set {
            ZSetValue::Listpack(p) => {
                if self.reverse {
                    self.pos -= 1;
                    entries_at(p, self.back[self.pos]).next()
                } else {
                    let mut it = entries_at(p, self.pos);
                    let entry = it.next();
                    self.pos = it.0.position();
                    entry
                }
            }
            ZSetValue::Skiplist(s) => {
                let x = self.cursor;
                self.cursor = if self.reverse { s.list.prev(x) } else { s.list.next(x) };
                Some(s.list.entry(x))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for ZIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(entries: usize, value: usize) -> Limits {
        Limits { zset_max_listpack_entries: entries, zset_max_listpack_value: value, ..Limits::default() }
    }

    fn members(z: &ZSetValue) -> Vec<(String, f64)> {
        z.iter().map(|(m, s)| (String::from_utf8(m.to_vec()).unwrap(), s)).collect()
    }

    #[test]
    fn scores_round_trip_through_their_packed_form() {
        for score in [
            0.0,
            1.0,
            -1.0,
            127.0,
            128.0,
            -129.0,
            65_535.0,
            1e15,
            -1e15,
            36_028_797_018_963_967.0,
            -36_028_797_018_963_967.0,
            36_028_797_018_963_968.0,
            1.5,
            -0.25,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN_POSITIVE,
            9.007_199_254_740_993e15,
        ] {
            let (bytes, len) = encode_score(score);
            assert_eq!(decode_score(&bytes[..len]), score, "{score}");
        }
        assert_eq!(encode_score(5.0).1, 1);
        assert_eq!(encode_score(-200.0).1, 2);
        assert_eq!(encode_score(0.5).1, 8);
    }

    #[test]
    fn converts_at_the_limits() {
        let l = limits(3, 5);
        let mut z = ZSetValue::new_for_add(1, &l);
        assert!(z.insert(b"a", 1.0, &l));
        assert!(z.insert(b"b", 2.0, &l));
        assert!(z.insert(b"c", 3.0, &l));
        assert_eq!(z.encoding_name(), "listpack");
        assert!(!z.insert(b"c", 0.5, &l));
        assert_eq!(members(&z)[0], ("c".into(), 0.5));
        assert!(z.insert(b"d", 4.0, &l));
        assert_eq!(z.encoding_name(), "skiplist");
        assert_eq!(members(&z).len(), 4);
        let mut y = ZSetValue::new_for_add(1, &l);
        y.insert(b"toolong", 1.0, &l);
        assert_eq!(y.encoding_name(), "skiplist");
        assert_eq!(ZSetValue::new_for_add(6, &l).encoding_name(), "skiplist");
        assert_eq!(ZSetValue::new_for_add(1, &limits(0, 64)).encoding_name(), "skiplist");
    }

    #[test]
    fn add_flags() {
        let l = Limits::default();
        let mut z = ZSetValue::default();
        let f = |nx, xx, gt, lt, incr| AddFlags { nx, xx, gt, lt, incr };
        assert_eq!(z.add(b"a", 1.0, f(false, true, false, false, false), &l), AddOutcome::Skipped);
        assert_eq!(z.add(b"a", 1.0, f(true, false, false, false, false), &l), AddOutcome::Added(1.0));
        assert_eq!(z.add(b"a", 5.0, f(true, false, false, false, false), &l), AddOutcome::Skipped);
        assert_eq!(z.add(b"a", 0.0, f(false, false, true, false, false), &l), AddOutcome::Skipped);
        assert_eq!(z.add(b"a", 3.0, f(false, false, true, false, false), &l), AddOutcome::Updated(3.0));
        assert_eq!(z.add(b"a", 2.0, f(false, false, false, false, true), &l), AddOutcome::Updated(5.0));
        assert_eq!(z.add(b"a", 0.0, f(false, false, false, false, true), &l), AddOutcome::Unchanged(5.0));
        assert_eq!(z.add(b"a", f64::NAN, AddFlags::default(), &l), AddOutcome::Nan);
        z.insert(b"inf", f64::INFINITY, &l);
        assert_eq!(z.add(b"inf", f64::NEG_INFINITY, f(false, false, false, false, true), &l), AddOutcome::Nan);
    }

    #[test]
    fn ranges_agree_across_encodings() {
        let small = limits(1000, 64);
        let big = limits(0, 0);
        let mut a = ZSetValue::default();
        let mut b = ZSetValue::new_for_add(1, &big);
        for i in 0..200u32 {
            let m = format!("m{:03}", (i * 37) % 200);
            let s = f64::from(i % 23);
            a.insert(m.as_bytes(), s, &small);
            b.insert(m.as_bytes(), s, &big);
        }
        assert_eq!((a.encoding_name(), b.encoding_name()), ("listpack", "skiplist"));
        assert_eq!(members(&a), members(&b));
        for lo in [-1.0, 0.0, 5.0, 22.0, 30.0] {
            for hi in [-2.0, 0.0, 7.0, 22.0] {
                for ex in [false, true] {
                    let r = ScoreRange { min: lo, max: hi, min_exclusive: ex, max_exclusive: !ex };
                    for rev in [false, true] {
                        let x: Vec<_> = a.range_by_score(&r, rev).collect();
                        let y: Vec<_> = b.range_by_score(&r, rev).collect();
                        assert_eq!(x, y);
                        let mut want: Vec<_> = a.iter().filter(|(_, s)| r.gte_min(*s) && r.lte_max(*s)).collect();
                        if rev {
                            want.reverse();
                        }
                        assert_eq!(x, want);
                    }
                }
            }
        }
        for (i, (m, _)) in a.iter().enumerate() {
            assert_eq!(a.rank(m, false), Some(i));
            assert_eq!(b.rank(m, false), Some(i));
            assert_eq!(b.rank(m, true), Some(199 - i));
            assert_eq!(a.get_by_rank(i), b.get_by_rank(i));
        }
        let x: Vec<_> = b.iter_from(5, true).take(3).collect();
        let y: Vec<_> = a.iter_from(5, true).take(3).collect();
        assert_eq!(x, y);
        assert_eq!(a.remove_rank_range(10, 20), 10);
        assert_eq!(b.remove_rank_range(10, 20), 10);
        assert_eq!(members(&a), members(&b));
        for (m, _) in members(&a).iter().step_by(3) {
            assert!(a.remove(m.as_bytes()));
            assert!(b.remove(m.as_bytes()));
        }
        assert_eq!(members(&a), members(&b));
        b.convert_to_listpack_if_needed(&small);
        assert_eq!(b.encoding_name(), "listpack");
        assert_eq!(members(&a), members(&b));
    }

    #[test]
    fn from_entries_picks_the_encoding() {
        let l = limits(2, 3);
        let e = |v: &[(&str, f64)]| v.iter().map(|(m, s)| (Bytes::from(m.as_bytes()), *s)).collect::<Vec<_>>();
        let z = ZSetValue::from_entries(e(&[("b", 1.0), ("a", 1.0)]), &l);
        assert_eq!(z.encoding_name(), "listpack");
        assert_eq!(members(&z), vec![("a".into(), 1.0), ("b".into(), 1.0)]);
        assert_eq!(ZSetValue::from_entries(e(&[("a", 1.0), ("b", 1.0), ("c", 0.0)]), &l).encoding_name(), "skiplist");
        assert_eq!(ZSetValue::from_entries(e(&[("abcd", 1.0)]), &l).encoding_name(), "skiplist");
    }

    #[test]
    fn lex_ranges() {
        let l = Limits::default();
        let mut z = ZSetValue::default();
        for m in ["a", "b", "c", "d"] {
            z.insert(m.as_bytes(), 0.0, &l);
        }
        let r = LexRange { min: LexBound::Exclusive(b"a".to_vec()), max: LexBound::Inclusive(b"c".to_vec()) };
        assert_eq!(z.lex_range_ranks(&r), (1, 3));
        let r = LexRange { min: LexBound::PosInf, max: LexBound::NegInf };
        assert_eq!(z.lex_range_ranks(&r), (4, 4));
        let r = LexRange { min: LexBound::NegInf, max: LexBound::PosInf };
        assert_eq!(z.lex_range_ranks(&r), (0, 4));
    }

    /// ZSCAN of a skiplist set pages by COUNT and returns every member present for the
    /// whole scan, while scores change (members move in the order), members go and come.
    #[test]
    fn skiplist_scans_cover_members_present_throughout() {
        let l = limits(0, 64);
        let mut z = ZSetValue::new_for_add(2, &l);
        for i in 0..1000 {
            z.insert(format!("m{i}").as_bytes(), i as f64, &l);
        }
        let ZSetValue::Skiplist(_) = z else { panic!("not a skiplist") };
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        let mut step = 0u64;
        loop {
            let ZSetValue::Skiplist(s) = &z else { unreachable!() };
            let (page, next) = s.list.scan_slots(cursor, 7);
            assert!(page.len() <= 7);
            seen.extend(page.iter().map(|(m, _)| m.to_vec()));
            cursor = next;
            step += 1;
            // Move members around the order, drop some and add others.
            z.insert(format!("m{}", (step * 37) % 900).as_bytes(), -(step as f64), &l);
            z.remove(format!("m{}", 900 + step % 100).as_bytes());
            z.insert(format!("new{step}").as_bytes(), step as f64 * 0.5, &l);
            if cursor == 0 {
                break;
            }
        }
        assert!(step > 100, "{step} calls");
        for i in 0..900 {
            assert!(seen.contains(format!("m{i}").as_bytes()), "m{i} missed");
        }
    }
}
