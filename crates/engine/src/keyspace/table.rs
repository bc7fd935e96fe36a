//! The table of one database's keys in one shard.
//!
//! Each key and its entry live together in one allocation; the hash table holds only
//! pointers to them. A table is a power of two of buckets at most 7/8 full, so right after
//! it doubles it is less than half full: with the pair stored in the bucket (72 bytes) every
//! empty bucket costs as much as a key, with a pointer only 8 bytes. Redis's dict makes the
//! same trade (an 8-byte bucket array of pointers to entries). See docs/memory.md.

use hashbrown::hash_table::Entry as Slot;
use hashbrown::{DefaultHashBuilder, HashTable};
use std::hash::BuildHasher;

use super::{Entry, SmallBytes};

/// A key and its entry, in one allocation.
#[derive(Debug)]
pub(super) struct Pair {
    key: SmallBytes,
    entry: Entry,
}

#[derive(Debug, Default)]
pub(super) struct KeyTable {
    table: HashTable<Box<Pair>>,
    hasher: DefaultHashBuilder,
}

impl KeyTable {
    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Bytes of the table itself (its buckets), not of the keys and entries it points to.
    pub fn allocation_size(&self) -> usize {
        self.table.allocation_size()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    pub fn get(&self, key: &[u8]) -> Option<&Entry> {
        self.table.find(self.hash(key), |p| p.key[..] == *key).map(|p| &p.entry)
    }

    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        let hash = self.hash(key);
        self.table.find_mut(hash, |p| p.key[..] == *key).map(|p| &mut p.entry)
    }

    /// Stores `entry` under `key`; returns the entry it replaced (the key stays as it was).
    pub fn insert(&mut self, key: &[u8], entry: Entry) -> Option<Entry> {
        match self.slot(key) {
            KeySlot::Taken(found) => Some(std::mem::replace(found, entry)),
            KeySlot::Free(free) => {
                free.fill(entry);
                None
            }
        }
    }

    /// The entry of `key`, or the place to put one: one hash and one probe either way.
    pub fn slot<'t, 'k>(&'t mut self, key: &'k [u8]) -> KeySlot<'t, 'k> {
        let hash = self.hash(key);
        let hasher = &self.hasher;
        match self.table.entry(hash, |p| p.key[..] == *key, |p| hasher.hash_one(&p.key[..])) {
            Slot::Occupied(found) => KeySlot::Taken(&mut found.into_mut().entry),
            Slot::Vacant(vacant) => KeySlot::Free(FreeSlot { vacant, key }),
        }
    }

    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let hash = self.hash(key);
        match self.table.find_entry(hash, |p| p.key[..] == *key) {
            Ok(found) => Some(found.remove().0.entry),
            Err(_) => None,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &Entry)> + '_ {
        self.table.iter().map(|p| (&p.key[..], &p.entry))
    }

    /// Up to `n` entries from the occupied buckets at and after bucket `start` (modulo the
    /// bucket count), as Redis's dictGetSomeKeys samples: a table at most 7/8 and at least
    /// about 3/8 full after growing needs a few buckets per entry, so a sample costs O(n),
    /// not a walk from the table's start.
    pub fn sample_from(&self, start: usize, n: usize) -> impl Iterator<Item = (&[u8], &Entry)> + '_ {
        let buckets = self.table.num_buckets();
        let wanted = if self.table.is_empty() { 0 } else { n.min(self.table.len()) };
        let start = start % buckets.max(1);
        (0..buckets)
            .filter_map(move |step| self.table.get_bucket((start + step) % buckets))
            .take(wanted)
            .map(|p| (&p.key[..], &p.entry))
    }
}

/// What `KeyTable::slot` found.
pub(super) enum KeySlot<'t, 'k> {
    Taken(&'t mut Entry),
    Free(FreeSlot<'t, 'k>),
}

pub(super) struct FreeSlot<'t, 'k> {
    vacant: hashbrown::hash_table::VacantEntry<'t, Box<Pair>>,
    key: &'k [u8],
}

impl FreeSlot<'_, '_> {
    pub fn fill(self, entry: Entry) {
        self.vacant.insert(Box::new(Pair { key: self.key.into(), entry }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::{StrValue, Value};

    fn entry(n: i64) -> Entry {
        Entry::new(Value::Str(StrValue::Int(n)), None, 0)
    }

    fn int_of(e: Option<&Entry>) -> Option<i64> {
        match e.map(|e| &e.value) {
            Some(Value::Str(StrValue::Int(n))) => Some(*n),
            _ => None,
        }
    }

    /// Eviction and RANDOMKEY sample from a random bucket: `n` distinct entries (or all of a
    /// smaller table), from any start, every key reachable, also when the table is sparse
    /// after mass deletion (it does not shrink).
    #[test]
    fn samples_from_any_bucket() {
        let mut t = KeyTable::default();
        assert_eq!(t.sample_from(7, 5).count(), 0);
        for i in 0..10_000 {
            t.insert(format!("key:{i}").as_bytes(), entry(i));
        }
        let mut seen = std::collections::HashSet::new();
        for start in (0..t.table.num_buckets() * 2).step_by(3) {
            let sample: Vec<&[u8]> = t.sample_from(start, 5).map(|(k, _)| k).collect();
            assert_eq!(sample.len(), 5);
            let distinct: std::collections::HashSet<&[u8]> = sample.iter().copied().collect();
            assert_eq!(distinct.len(), 5, "start {start}");
            seen.extend(sample.iter().map(|k| k.to_vec()));
        }
        assert_eq!(seen.len(), 10_000, "every key is reachable from some start");
        for i in 0..9_990 {
            t.remove(format!("key:{i}").as_bytes());
        }
        for start in [0, 1, 12_345, usize::MAX] {
            let sample: Vec<&[u8]> = t.sample_from(start, 5).map(|(k, _)| k).collect();
            assert_eq!(sample.len(), 5, "a sparse table still gives a full sample");
        }
        assert_eq!(t.sample_from(3, 50).count(), 10, "at most the table's size");
    }

    #[test]
    fn behaves_as_a_map_of_byte_strings() {
        let mut t = KeyTable::default();
        let long = vec![b'x'; 100];
        assert!(t.insert(b"a", entry(1)).is_none());
        assert!(t.insert(&long, entry(2)).is_none());
        assert_eq!(int_of(t.insert(b"a", entry(3)).as_ref()), Some(1));
        assert_eq!((t.len(), int_of(t.get(b"a")), int_of(t.get(&long))), (2, Some(3), Some(2)));
        assert!(t.get(b"a").is_some() && t.get(b"b").is_none());
        if let Some(e) = t.get_mut(&long) {
            *e = entry(4);
        }
        assert_eq!(int_of(t.get(&long)), Some(4));
        let mut keys: Vec<Vec<u8>> = t.iter().map(|(k, _)| k.to_vec()).collect();
        keys.sort();
        assert_eq!(keys, vec![b"a".to_vec(), long.clone()]);
        assert_eq!(int_of(t.remove(b"a").as_ref()), Some(3));
        assert!(t.remove(b"a").is_none() && t.get(b"a").is_none());
        assert_eq!(t.iter().count(), 1);
        for i in 0..10_000 {
            t.insert(format!("k{i}").as_bytes(), entry(i));
        }
        assert_eq!(t.len(), 10_001);
        assert!((0..10_000).all(|i| int_of(t.get(format!("k{i}").as_bytes())) == Some(i)));
        assert!(!t.is_empty());
        match t.slot(b"k7") {
            KeySlot::Taken(e) => *e = entry(70),
            KeySlot::Free(_) => panic!("k7 is there"),
        }
        match t.slot(b"new") {
            KeySlot::Free(free) => free.fill(entry(5)),
            KeySlot::Taken(_) => panic!("new is not there"),
        }
        assert_eq!((int_of(t.get(b"k7")), int_of(t.get(b"new")), t.len()), (Some(70), Some(5), 10_002));
    }
}
