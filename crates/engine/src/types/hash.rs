//! Hashes: a flat field/value vector (Redis's listpack) while small, a hash table after.
//!
//! The conversion rules are Redis 7.0's (t_hash.c): a hash becomes a table, and never goes
//! back, when it gets more than `hash-max-listpack-entries` fields or when a field or value
//! longer than `hash-max-listpack-value` is written to it.

use hashbrown::DefaultHashBuilder;
use indexmap::IndexMap;

use super::packed::Packed;
use super::set::{scan_positions, ScanPage};
use super::small::SmallBytes;
use super::Limits;

/// The table encoding. Its order is arbitrary; being indexable gives O(1) random picks
/// (HRANDFIELD) and O(1) removal.
/// Fields and values up to 22 bytes are stored in the table itself (`SmallBytes`).
pub type FieldTable = IndexMap<SmallBytes, SmallBytes, DefaultHashBuilder>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashValue {
    /// Insertion-ordered fields and values, alternating, packed in one buffer as a
    /// listpack keeps them.
    Listpack(Packed),
    /// Boxed: a stored value stays small (the key table holds every value inline).
    Table(Box<FieldTable>),
}

impl Default for HashValue {
    fn default() -> Self {
        HashValue::Listpack(Packed::new())
    }
}

/// A packed listpack's items as (field, value) pairs.
fn pairs(p: &Packed) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
    let mut items = p.iter();
    std::iter::from_fn(move || Some((items.next()?, items.next()?)))
}

impl HashValue {
    /// A listpack-encoded hash holding `pairs` in order (fields assumed distinct).
    pub fn listpack_from<F: AsRef<[u8]>, V: AsRef<[u8]>>(pairs: impl IntoIterator<Item = (F, V)>) -> Self {
        let mut p = Packed::new();
        for (f, v) in pairs {
            p.push_all(&[f.as_ref(), v.as_ref()]);
        }
        HashValue::Listpack(p)
    }

    pub fn len(&self) -> usize {
        match self {
            HashValue::Listpack(p) => p.len() / 2,
            HashValue::Table(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        match self {
            HashValue::Listpack(_) => "listpack",
            HashValue::Table(_) => "hashtable",
        }
    }

    /// Every field and value, in the encoding's order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = (&[u8], &[u8])> + '_> {
        match self {
            HashValue::Listpack(p) => Box::new(pairs(p)),
            HashValue::Table(t) => Box::new(t.iter().map(|(f, v)| (&f[..], &v[..]))),
        }
    }

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match self {
            // PERF: a linear search, as in a listpack; it holds few, short entries.
            HashValue::Listpack(p) => pairs(p).find(|(f, _)| *f == field).map(|(_, v)| v),
            HashValue::Table(t) => t.get(field).map(|v| &v[..]),
        }
    }

    pub fn contains(&self, field: &[u8]) -> bool {
        self.get(field).is_some()
    }

    /// The `i`-th field and value in the encoding's order (`i < len`).
    pub fn get_index(&self, i: usize) -> (&[u8], &[u8]) {
        match self {
            HashValue::Listpack(p) => pairs(p).nth(i).expect("index below len"),
            HashValue::Table(t) => {
                let (f, v) = t.get_index(i).expect("index below len");
                (f, v)
            }
        }
    }

    /// Redis's hashTypeTryConversion: before writing `items` (fields and values), converts a
    /// listpack to a table if any of them is longer than `hash-max-listpack-value`.
    pub fn convert_for<'a>(&mut self, items: impl IntoIterator<Item = &'a [u8]>, limits: &Limits) {
        if matches!(self, HashValue::Listpack(_)) && items.into_iter().any(|i| i.len() > limits.hash_max_listpack_value)
        {
            self.convert();
        }
    }

    /// Sets `field` to `value` (Redis's hashTypeSet), converting to a table when the pair is
    /// too long for a listpack or the listpack grows past its entry limit. Returns true if
    /// the field is new.
    pub fn set(&mut self, field: &[u8], value: &[u8], limits: &Limits) -> bool {
        self.convert_for([field, value], limits);
        match self {
            HashValue::Listpack(p) => {
                let found = pairs(p).position(|(f, _)| f == field);
                if let Some(i) = found {
                    p.replace(2 * i + 1, value);
                    return false;
                }
                p.push_all(&[field, value]);
                if p.len() / 2 > limits.hash_max_listpack_entries {
                    self.convert();
                }
                true
            }
            HashValue::Table(t) => t.insert(field.into(), value.into()).is_none(),
        }
    }

    /// Removes `field`; true if it was there. Listpacks keep their order; tables do not.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self {
            HashValue::Listpack(p) => {
                let found = pairs(p).position(|(f, _)| f == field);
                if let Some(i) = found {
                    p.remove(2 * i, 2);
                }
                found.is_some()
            }
            HashValue::Table(t) => t.swap_remove(field).is_some(),
        }
    }

    /// Listpack to table (Redis never converts back).
    fn convert(&mut self) {
        if let HashValue::Listpack(p) = self {
            let mut table = FieldTable::with_capacity_and_hasher(p.len() / 2, DefaultHashBuilder::default());
            table.extend(pairs(p).map(|(f, v)| (SmallBytes::new(f), SmallBytes::new(v))));
            *self = HashValue::Table(Box::new(table));
        }
    }

    /// One HSCAN step: a listpack returns everything and cursor 0, as in Redis; a table
    /// returns `count` fields (see `scan_positions`).
    pub fn scan(&self, cursor: u64, count: usize) -> ScanPage<(&[u8], &[u8])> {
        match self {
            HashValue::Listpack(p) => ScanPage { items: pairs(p).collect(), next: 0 },
            HashValue::Table(t) => {
                let (at, next) = scan_positions(t.len(), cursor, count);
                ScanPage { items: at.filter_map(|i| t.get_index(i)).map(|(f, v)| (&f[..], &v[..])).collect(), next }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(entries: usize, value: usize) -> Limits {
        Limits { hash_max_listpack_entries: entries, hash_max_listpack_value: value, ..Limits::default() }
    }

    #[test]
    fn listpack_keeps_insertion_order_and_converts_on_entries() {
        let l = limits(3, 64);
        let mut h = HashValue::default();
        assert!(h.set(b"b", b"1", &l));
        assert!(h.set(b"a", b"2", &l));
        assert!(!h.set(b"b", b"3", &l));
        assert_eq!(h.iter().collect::<Vec<_>>(), vec![(&b"b"[..], &b"3"[..]), (&b"a"[..], &b"2"[..])]);
        assert!(h.set(b"c", b"4", &l));
        assert_eq!(h.encoding_name(), "listpack");
        assert!(h.set(b"d", b"5", &l));
        assert_eq!(h.encoding_name(), "hashtable");
        assert_eq!(h.len(), 4);
        assert_eq!(h.get(b"b"), Some(&b"3"[..]));
        assert!(h.remove(b"b"));
        assert!(!h.remove(b"b"));
        assert_eq!(h.encoding_name(), "hashtable", "never converts back");
    }

    #[test]
    fn long_field_or_value_converts() {
        let l = limits(512, 4);
        let mut h = HashValue::default();
        h.set(b"abcd", b"1234", &l);
        assert_eq!(h.encoding_name(), "listpack");
        h.set(b"x", b"12345", &l);
        assert_eq!(h.encoding_name(), "hashtable");
        let mut h = HashValue::default();
        h.convert_for([&b"f"[..], &b"abcde"[..]], &l);
        assert_eq!(h.encoding_name(), "hashtable");
    }

    #[test]
    fn zero_entry_limit_means_always_a_table() {
        let mut h = HashValue::default();
        h.set(b"f", b"v", &limits(0, 64));
        assert_eq!(h.encoding_name(), "hashtable");
    }

    #[test]
    fn table_scan_visits_everything_once() {
        let l = limits(0, 64);
        let mut h = HashValue::default();
        for i in 0..1000 {
            h.set(format!("f{i}").as_bytes(), b"v", &l);
        }
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        loop {
            let page = h.scan(cursor, 10);
            assert_eq!(page.items.len(), 10);
            for (f, _) in page.items {
                assert!(seen.insert(f.to_vec()), "returned twice");
            }
            cursor = page.next;
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), 1000);
    }
}
