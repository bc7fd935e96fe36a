//! The keyspace: `S` shards (a power of two), each holding every database's slice of the
//! keys whose hash slot maps to it, behind its own lock.

use hashbrown::HashMap;
use indexmap::IndexSet;
use parking_lot::{Mutex, MutexGuard};

use crate::slot::{key_hash_slot, SLOT_COUNT};

pub type Key = Box<[u8]>;

/// A stored value. Later issues add the collection types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Str(Vec<u8>),
}

impl Value {
    /// The name TYPE reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub value: Value,
    /// Absolute expiry in Unix milliseconds.
    pub expire_at_ms: Option<i64>,
}

/// What a write does to the key's existing time to live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtlOnWrite {
    Clear,
    Keep,
    At(i64),
}

/// One database's keys within one shard.
#[derive(Debug, Default)]
pub struct Db {
    map: HashMap<Key, Entry>,
    /// Keys that have a TTL, indexable so the active expiry cycle can sample at random.
    expires: IndexSet<Key>,
    /// Keys removed because their TTL passed (lazily or by the active cycle).
    pub expired_keys: u64,
}

impl Db {
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn expires_len(&self) -> usize {
        self.expires.len()
    }

    /// Looks a key up, deleting it first if its TTL has passed (lazy expiry).
    pub fn get(&mut self, key: &[u8], now_ms: i64) -> Option<&Entry> {
        self.expire_if_due(key, now_ms);
        self.map.get(key)
    }

    pub fn get_mut(&mut self, key: &[u8], now_ms: i64) -> Option<&mut Entry> {
        self.expire_if_due(key, now_ms);
        self.map.get_mut(key)
    }

    pub fn contains(&mut self, key: &[u8], now_ms: i64) -> bool {
        self.get(key, now_ms).is_some()
    }

    /// Stores `value` under `key`, replacing any previous value of any type.
    pub fn set(&mut self, key: &[u8], value: Value, ttl: TtlOnWrite, now_ms: i64) {
        self.expire_if_due(key, now_ms);
        // PERF: one hash lookup on overwrite; the key is only copied when new.
        let existing = self.map.get_mut(key);
        let old_expire = existing.as_ref().and_then(|e| e.expire_at_ms);
        let expire_at_ms = match ttl {
            TtlOnWrite::Clear => None,
            TtlOnWrite::Keep => old_expire,
            TtlOnWrite::At(ms) => Some(ms),
        };
        match existing {
            Some(entry) => {
                entry.value = value;
                entry.expire_at_ms = expire_at_ms;
            }
            None => {
                self.map.insert(key.into(), Entry { value, expire_at_ms });
            }
        }
        match (old_expire.is_some(), expire_at_ms.is_some()) {
            (true, false) => {
                self.expires.swap_remove(key);
            }
            (false, true) => {
                self.expires.insert(key.into());
            }
            _ => {}
        }
    }

    /// Removes a key; true if it existed (and had not expired).
    pub fn remove(&mut self, key: &[u8], now_ms: i64) -> bool {
        self.expire_if_due(key, now_ms);
        self.remove_entry(key).is_some()
    }

    fn remove_entry(&mut self, key: &[u8]) -> Option<Entry> {
        let entry = self.map.remove(key)?;
        if entry.expire_at_ms.is_some() {
            self.expires.swap_remove(key);
        }
        Some(entry)
    }

    /// Sets an absolute expiry on an existing key. Returns false if the key is missing.
    pub fn set_expire(&mut self, key: &[u8], at_ms: i64, now_ms: i64) -> bool {
        self.expire_if_due(key, now_ms);
        let Some(entry) = self.map.get_mut(key) else { return false };
        if entry.expire_at_ms.replace(at_ms).is_none() {
            self.expires.insert(key.into());
        }
        true
    }

    /// Removes a key's TTL. True if it had one.
    pub fn persist(&mut self, key: &[u8], now_ms: i64) -> bool {
        self.expire_if_due(key, now_ms);
        let had_ttl = self.map.get_mut(key).and_then(|entry| entry.expire_at_ms.take()).is_some();
        if had_ttl {
            self.expires.swap_remove(key);
        }
        had_ttl
    }

    pub fn clear(&mut self) -> usize {
        let n = self.map.len();
        self.map = HashMap::new();
        self.expires = IndexSet::new();
        n
    }

    fn expire_if_due(&mut self, key: &[u8], now_ms: i64) {
        if self.expires.is_empty() {
            return;
        }
        if let Some(entry) = self.map.get(key) {
            if entry.expire_at_ms.is_some_and(|at| at <= now_ms) {
                self.remove_entry(key);
                self.expired_keys += 1;
            }
        }
    }

    /// Checks up to `samples` random keys with a TTL and deletes the expired ones.
    /// Returns (sampled, expired).
    pub fn expire_sample(&mut self, samples: usize, now_ms: i64, rng: &mut Rng) -> (usize, usize) {
        let sampled = samples.min(self.expires.len());
        let mut expired = 0;
        for _ in 0..sampled {
            if self.expires.is_empty() {
                break;
            }
            let idx = rng.below(self.expires.len());
            let key = &self.expires[idx];
            let due = self.map.get(key).and_then(|e| e.expire_at_ms).is_some_and(|at| at <= now_ms);
            if due {
                let key = self.expires.swap_remove_index(idx).expect("index in range");
                self.map.remove(&key);
                self.expired_keys += 1;
                expired += 1;
            }
        }
        (sampled, expired)
    }
}

/// A tiny xorshift generator for sampling; not for anything user-visible.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// One shard: the slice of every database whose keys hash here.
#[derive(Debug)]
pub struct Shard {
    pub dbs: Box<[Db]>,
}

impl Shard {
    fn new(databases: usize) -> Self {
        Self { dbs: (0..databases).map(|_| Db::default()).collect() }
    }
}

#[derive(Debug)]
pub struct Keyspace {
    shards: Box<[Mutex<Shard>]>,
    databases: usize,
}

impl Keyspace {
    /// `shard_count` is rounded up to a power of two and capped at the slot count.
    pub fn new(shard_count: usize, databases: usize) -> Self {
        let n = shard_count.clamp(1, SLOT_COUNT).next_power_of_two();
        Self { shards: (0..n).map(|_| Mutex::new(Shard::new(databases))).collect(), databases }
    }

    pub fn databases(&self) -> usize {
        self.databases
    }

    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// The shard owning `key`: its hash slot modulo the shard count.
    pub fn shard_of(&self, key: &[u8]) -> usize {
        key_hash_slot(key) & (self.shards.len() - 1)
    }

    pub fn lock(&self, shard: usize) -> MutexGuard<'_, Shard> {
        self.shards[shard].lock()
    }

    /// Locks every shard in ascending order (the global lock order).
    pub fn lock_all(&self) -> Vec<MutexGuard<'_, Shard>> {
        self.shards.iter().map(|s| s.lock()).collect()
    }

    /// Keys in database `db`, summed over shards. Each shard is locked in turn.
    pub fn db_len(&self, db: usize) -> usize {
        self.shards.iter().map(|s| s.lock().dbs[db].len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::Str(v.as_bytes().to_vec())
    }

    #[test]
    fn lazy_expiry_and_ttl_bookkeeping() {
        let mut db = Db::default();
        db.set(b"a", s("1"), TtlOnWrite::At(100), 0);
        db.set(b"b", s("2"), TtlOnWrite::Clear, 0);
        assert_eq!(db.expires_len(), 1);
        assert!(db.get(b"a", 99).is_some());
        assert!(db.get(b"a", 100).is_none());
        assert_eq!(db.expired_keys, 1);
        assert_eq!(db.expires_len(), 0);
        db.set(b"b", s("3"), TtlOnWrite::At(50), 0);
        db.set(b"b", s("4"), TtlOnWrite::Keep, 0);
        assert_eq!(db.get(b"b", 0).unwrap().expire_at_ms, Some(50));
        db.set(b"b", s("5"), TtlOnWrite::Clear, 0);
        assert_eq!(db.expires_len(), 0);
        assert!(db.set_expire(b"b", 10, 0));
        assert!(db.persist(b"b", 0));
        assert!(!db.persist(b"b", 0));
    }

    #[test]
    fn active_sampling_removes_expired() {
        let mut db = Db::default();
        for i in 0..100 {
            db.set(format!("k{i}").as_bytes(), s("v"), TtlOnWrite::At(if i < 50 { 10 } else { 1000 }), 0);
        }
        let mut rng = Rng::new(7);
        let mut total = 0;
        for _ in 0..200 {
            total += db.expire_sample(20, 500, &mut rng).1;
        }
        assert_eq!(total, 50);
        assert_eq!(db.len(), 50);
        assert_eq!(db.expires_len(), 50);
    }
}
