//! Sets: a sorted integer array (Redis's intset) while every member is an integer and the
//! set is small, a hash table after.
//!
//! The rules are Redis 7.0's (t_set.c): a set starts as an intset when its first member is
//! an integer (as `string2ll` reads it), and becomes a table, never going back, when a
//! non-integer is added or it grows past `set-max-intset-entries`.

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

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetValue {
    /// Ascending, no duplicates.
    Intset(IntSet),
    /// Boxed: a stored value stays small (the key table holds every value inline).
    Table(Box<MemberTable>),
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
            SetValue::Table(Box::default())
        }
    }

    pub fn len(&self) -> usize {
        match self {
            SetValue::Intset(v) => v.len(),
            SetValue::Table(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        match self {
            SetValue::Intset(_) => "intset",
            SetValue::Table(_) => "hashtable",
        }
    }

    /// Every member, in the encoding's order (intsets ascending).
    pub fn iter(&self) -> Box<dyn Iterator<Item = Cow<'_, [u8]>> + '_> {
        match self {
            SetValue::Intset(v) => Box::new(v.iter().map(|n| Cow::Owned(n.to_string().into_bytes()))),
            SetValue::Table(t) => Box::new(t.iter().map(|m| Cow::Borrowed(&m[..]))),
        }
    }

    pub fn contains(&self, member: &[u8]) -> bool {
        match self {
            SetValue::Intset(v) => as_int(member).is_some_and(|n| v.binary_search(n).is_ok()),
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
            SetValue::Table(t) => t.swap_remove(member),
        }
    }

    /// The `i`-th member in the encoding's order (`i < len`).
    pub fn get_index(&self, i: usize) -> Cow<'_, [u8]> {
        match self {
            SetValue::Intset(v) => Cow::Owned(v.get(i).to_string().into_bytes()),
            SetValue::Table(t) => Cow::Borrowed(&t[i]),
        }
    }

    /// Removes and returns the `i`-th member (`i < len`).
    pub fn take_index(&mut self, i: usize) -> Bytes {
        match self {
            SetValue::Intset(v) => v.remove(i).to_string().into_bytes().into(),
            SetValue::Table(t) => Bytes::from(&t.swap_remove_index(i).expect("index below len")[..]),
        }
    }

    /// Intset to table (Redis never converts back).
    fn convert(&mut self) {
        if let SetValue::Intset(v) = self {
            let mut table = MemberTable::with_capacity_and_hasher(v.len(), DefaultHashBuilder::default());
            table.extend(v.iter().map(|n| SmallBytes::new(n.to_string().as_bytes())));
            *self = SetValue::Table(Box::new(table));
        }
    }

    /// One SSCAN step: an intset returns everything and cursor 0, as in Redis; a table
    /// returns `count` members (see `scan_positions`).
    pub fn scan(&self, cursor: u64, count: usize) -> ScanPage<Cow<'_, [u8]>> {
        match self {
            SetValue::Intset(_) => ScanPage { items: self.iter().collect(), next: 0 },
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
}
