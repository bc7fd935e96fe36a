//! The keyspace: `S` shards (a power of two), each holding every database's slice of the
//! keys whose hash slot maps to it, behind its own lock.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use hashbrown::HashMap;
use parking_lot::{Mutex, MutexGuard};

use crate::blocking::WaiterRef;
use crate::slot::{key_hash_slot, SLOT_COUNT};
use crate::types::{HashValue, ListValue, SetValue, StreamValue, ZSetValue};

pub type Key = Box<[u8]>;

/// Strings up to this length are created in one allocation by Redis ("embstr").
pub const EMBSTR_MAX_LEN: usize = 44;
/// Redis shares the integer objects 0..10000 when no LRU/LFU eviction policy is active.
pub const SHARED_INTEGERS: i64 = 10_000;

pub use crate::types::small::{SmallBytes, EMB_INLINE_MAX};

mod table;
pub use table::{fork_child_ended, fork_child_started};
use table::{KeySlot, KeyTable};

/// A string value, in the encoding Redis would give it (OBJECT ENCODING reports it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrValue {
    /// A decimal integer without leading zeros or sign oddities, stored as a number.
    Int(i64),
    /// A short string created whole (SET, INCRBYFLOAT...).
    Embstr(SmallBytes),
    /// A string modified in place (APPEND, SETRANGE, SETBIT...) or longer than 44 bytes.
    /// Boxed: a `StrValue` stays 24 bytes (an embstr's inline bytes set the size); a raw
    /// string pays one more small allocation.
    #[allow(clippy::box_collection)]
    Raw(Box<Vec<u8>>),
}

impl StrValue {
    /// The encoding Redis's `tryObjectEncoding` picks for a value given by a client.
    pub fn from_client(bytes: &[u8]) -> Self {
        if bytes.len() <= 20 {
            if let Some(n) = quince_resp::parse_i64_strict(bytes) {
                return StrValue::Int(n);
            }
        }
        if bytes.len() <= EMBSTR_MAX_LEN {
            StrValue::Embstr(SmallBytes::new(bytes))
        } else {
            StrValue::Raw(Box::new(bytes.to_vec()))
        }
    }

    /// A string created by the server (`createStringObject`): embstr if short, else raw.
    pub fn created(bytes: Vec<u8>) -> Self {
        if bytes.len() <= EMBSTR_MAX_LEN {
            StrValue::Embstr(SmallBytes::new(&bytes))
        } else {
            StrValue::Raw(Box::new(bytes))
        }
    }

    /// The stored bytes of a non-integer string (None for the int encoding).
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            StrValue::Int(_) => None,
            StrValue::Embstr(b) => Some(b),
            StrValue::Raw(b) => Some(b),
        }
    }

    pub fn as_bytes(&self) -> Cow<'_, [u8]> {
        match self {
            StrValue::Int(n) => Cow::Owned(n.to_string().into_bytes()),
            StrValue::Embstr(b) => Cow::Borrowed(b),
            StrValue::Raw(b) => Cow::Borrowed(b),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            StrValue::Int(n) => decimal_len(*n),
            StrValue::Embstr(b) => b.len(),
            StrValue::Raw(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes, converted to the raw encoding for in-place modification.
    pub fn make_raw(&mut self) -> &mut Vec<u8> {
        if !matches!(self, StrValue::Raw(_)) {
            let bytes = match std::mem::replace(self, StrValue::Int(0)) {
                StrValue::Int(n) => n.to_string().into_bytes(),
                StrValue::Embstr(b) => b.to_vec(),
                StrValue::Raw(b) => *b,
            };
            *self = StrValue::Raw(Box::new(bytes));
        }
        match self {
            StrValue::Raw(b) => b,
            _ => unreachable!("converted above"),
        }
    }

    /// The integer value, if the string holds one (Redis's `getLongLongFromObject`).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            StrValue::Int(n) => Some(*n),
            StrValue::Embstr(b) => quince_resp::parse_i64_strict(b),
            StrValue::Raw(b) => quince_resp::parse_i64_strict(b),
        }
    }

    pub fn encoding_name(&self) -> &'static str {
        match self {
            StrValue::Int(_) => "int",
            StrValue::Embstr(_) => "embstr",
            StrValue::Raw(_) => "raw",
        }
    }
}

/// Digits (and sign) of `n` in decimal.
pub fn decimal_len(n: i64) -> usize {
    let mut len = usize::from(n < 0);
    let mut v = n.unsigned_abs();
    loop {
        len += 1;
        v /= 10;
        if v == 0 {
            return len;
        }
    }
}

/// A stored value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(StrValue),
    List(ListValue),
    Hash(HashValue),
    Set(SetValue),
    ZSet(ZSetValue),
    /// Boxed: a stream's header is large and the key table holds every value inline.
    Stream(Box<StreamValue>),
}

impl Value {
    /// A string value from client bytes, encoded as Redis would.
    pub fn string(bytes: &[u8]) -> Self {
        Value::Str(StrValue::from_client(bytes))
    }

    /// The name TYPE reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::Stream(_) => "stream",
        }
    }

    pub fn encoding_name(&self) -> &'static str {
        match self {
            Value::Str(s) => s.encoding_name(),
            Value::List(l) => l.encoding_name(),
            Value::Hash(h) => h.encoding_name(),
            Value::Set(s) => s.encoding_name(),
            Value::ZSet(z) => z.encoding_name(),
            Value::Stream(_) => "stream",
        }
    }
}

/// How lookups record access: Redis keeps either an LRU clock or an LFU counter per key,
/// depending on the eviction policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AccessMode {
    /// Record the LRU clock (seconds, 24 bits).
    #[default]
    Lru,
    /// Record LFU: a logarithmic counter with this log factor, decayed every `decay_minutes`.
    Lfu { log_factor: u32, decay_minutes: u32 },
}

/// The 24-bit LRU clock: seconds, wrapping (LRU_CLOCK_MAX).
pub const LRU_CLOCK_MAX: u32 = (1 << 24) - 1;
pub const LFU_INIT_VAL: u32 = 5;

pub fn lru_clock(now_ms: i64) -> u32 {
    ((now_ms / 1000) as u64 & u64::from(LRU_CLOCK_MAX)) as u32
}

fn lfu_minutes(now_ms: i64) -> u32 {
    ((now_ms / 60_000) as u64 & 0xffff) as u32
}

/// The LFU counter after decay (Redis's LFUDecrAndReturn), for a packed `access` field.
pub fn lfu_decayed(access: u32, now_ms: i64, decay_minutes: u32) -> u32 {
    let ldt = access >> 8;
    let counter = access & 255;
    let now = lfu_minutes(now_ms);
    let elapsed = if now >= ldt { now - ldt } else { 65535 - ldt + now };
    let periods = elapsed.checked_div(decay_minutes).unwrap_or(0);
    counter.saturating_sub(periods)
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub value: Value,
    /// Absolute expiry in Unix milliseconds, `NO_EXPIRY` for none. PERF: an i64 rather
    /// than an Option, 8 bytes less in every slot of the key table (see `expire_at_ms`).
    expire: i64,
    /// LRU clock of the last access, or LFU `minutes << 8 | counter` (see `AccessMode`).
    pub access: u32,
    /// Where the key table's list of keys with a TTL holds this key's node, while it has
    /// one and is in a table (see `KeyTable::set_expire`). PERF: in the padding after
    /// `access`, so the list costs a pointer per key with a TTL and nothing per entry.
    ttl_slot: u32,
}

/// `Entry::expire` of a key without a time to live.
const NO_EXPIRY: i64 = i64::MIN;

impl Entry {
    pub fn new(value: Value, expire_at_ms: Option<i64>, access: u32) -> Self {
        let mut entry = Self { value, expire: NO_EXPIRY, access, ttl_slot: 0 };
        entry.set_expire_at_ms(expire_at_ms);
        entry
    }

    /// Absolute expiry in Unix milliseconds, if the key has a time to live.
    #[inline]
    pub fn expire_at_ms(&self) -> Option<i64> {
        (self.expire != NO_EXPIRY).then_some(self.expire)
    }

    /// Sets or clears the expiry; returns the previous one. (`i64::MIN` itself, a time long
    /// past like its neighbour, is stored as `i64::MIN + 1`.) Not for an entry in a table,
    /// whose list of keys with a TTL must follow: see `KeyTable::set_expire`.
    fn set_expire_at_ms(&mut self, at: Option<i64>) -> Option<i64> {
        let old = self.expire_at_ms();
        self.expire = at.map_or(NO_EXPIRY, |t| t.max(NO_EXPIRY + 1));
        old
    }

    /// Idle seconds since the last access (OBJECT IDLETIME), from the LRU clock.
    pub fn idle_seconds(&self, now_ms: i64) -> u64 {
        let now = lru_clock(now_ms);
        let diff = if now >= self.access { now - self.access } else { LRU_CLOCK_MAX - self.access + now };
        u64::from(diff)
    }
}

/// What a write does to the key's existing time to live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtlOnWrite {
    Clear,
    Keep,
    At(i64),
}

/// The order SCAN walks a shard in: a fixed 64-bit hash of the key. Iterating in hash
/// order (not table order) is what keeps SCAN's guarantee across table resizes.
pub fn scan_hash(key: &[u8]) -> u64 {
    let mut h = std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().build_hasher();
    h.write(key);
    h.finish()
}

/// A key found with its TTL passed, not yet deleted (see `Db::read_live`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stale;

/// One database's keys within one shard.
#[derive(Debug, Default)]
pub struct Db {
    /// PERF: each key and its entry in one allocation (keys of up to 22 bytes inline in
    /// it), the table holding pointers (see keyspace/table.rs).
    map: KeyTable,
    /// Keys removed because their TTL passed (lazily or by the active cycle).
    pub expired_keys: u64,
    /// Writes made through this table (Redis's `dirty` counter, its share of it).
    pub dirty: u64,
    /// How lookups record access; set by the executor before each use.
    pub access_mode: AccessMode,
    rng: Rng,
    /// Clients blocked on keys of this table, FIFO per key (see `blocking`).
    blocked: HashMap<Key, VecDeque<WaiterRef>>,
    /// Keys with waiters that a write made ready, to serve once the write is done.
    ready: Vec<Key>,
    /// Which keyspace events this table records (`EVENT_*`); set by the executor.
    pub collect_events: u8,
    /// Recorded `expired` and `new` events, for the executor to publish (the table can't).
    events: Vec<(u64, &'static str, Key)>,
    /// Keys deleted by expiry, recorded under `EVENT_EXPIRED_LOG` for the executor to log
    /// as DELs (the append-only file must see them before the write that noticed them).
    expired_log: Vec<Key>,
    /// Lookups never expire keys (set by the executor for the AOF loader and a master,
    /// whose logged DELs do it, as Redis's keyIsExpired while loading).
    pub expiry_suspended: bool,
    /// Reads see keys whose TTL passed as gone but leave them in place (set by the executor
    /// for read commands while a CLIENT PAUSE is in force).
    pub expiry_deferred: bool,
    /// A writable replica's client writes: keys given a TTL are recorded in `local_ttls`
    /// (the replica expires them itself; the master knows nothing of them).
    pub track_local_ttls: bool,
    local_ttls: Vec<Key>,
    /// Which removals (`lazyfree::LAZY_*`) hand big values to `lazy_free`; set by whoever
    /// locks the table (`set_lazy_free`).
    lazy_mask: u8,
    lazy_free: Option<crate::lazyfree::LazyFree>,
}

/// Orders events recorded in different tables during one command.
fn next_event_seq() -> u64 {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// `Db::collect_events` bits.
pub const EVENT_EXPIRED: u8 = 1;
pub const EVENT_NEW: u8 = 2;
/// Record expired keys for the persistence layer (`take_expired_log`).
pub const EVENT_EXPIRED_LOG: u8 = 4;
/// Record `keymiss` events (reads that found no key, `get_read`).
pub const EVENT_KEYMISS: u8 = 8;

impl Db {
    /// Marks `key` as ready if clients wait on it: the executor serves them after the
    /// current command. Call after adding elements to a list or sorted set.
    pub fn signal_ready(&mut self, key: &[u8]) {
        if !self.blocked.is_empty() && self.blocked.contains_key(key) && !self.ready.iter().any(|k| &k[..] == key) {
            self.ready.push(key.into());
        }
    }

    pub(crate) fn add_waiter(&mut self, key: &[u8], waiter: WaiterRef) {
        match self.blocked.get_mut(key) {
            Some(queue) => queue.push_back(waiter),
            None => {
                self.blocked.insert(Key::from(key), VecDeque::from([waiter]));
            }
        }
    }

    /// Drops `waiter` (and any finished waiters) from the queue of `key`.
    pub(crate) fn remove_waiter(&mut self, key: &[u8], waiter: &WaiterRef) {
        if let Some(queue) = self.blocked.get_mut(key) {
            queue.retain(|w| !Arc::ptr_eq(w, waiter) && w.is_waiting());
            if queue.is_empty() {
                self.blocked.remove(key);
            }
        }
    }

    /// The clients waiting on `key`, in arrival order.
    pub(crate) fn waiters(&self, key: &[u8]) -> Vec<WaiterRef> {
        self.blocked.get(key).map(|q| q.iter().filter(|w| w.is_waiting()).cloned().collect()).unwrap_or_default()
    }

    /// SWAPDB: exchanges the keys (and their TTLs) with `other`; the clients blocked in
    /// each database stay there. Returns the keys with waiters, per side (present or not).
    /// A key that is present but expired counts as ready too, as in Redis's
    /// scanDatabaseForReadyKeys: serving then finds it expired and deletes it (and logs the
    /// DEL after the SWAPDB).
    pub fn swap_data(&mut self, other: &mut Db) -> (Vec<Key>, Vec<Key>) {
        std::mem::swap(&mut self.map, &mut other.map);
        // Every key someone waits on: one the swap brought in may serve them, and one it
        // took away ends an XREADGROUP's wait with an error (Redis's
        // scanDatabaseForDeletedKeys); serving skips the other waiters of a missing key.
        let ready = |db: &mut Db| -> Vec<Key> { db.blocked.keys().cloned().collect() };
        (ready(self), ready(other))
    }

    /// Records which events to keep from now on; dropping any kept while nobody listens.
    pub fn set_collect_events(&mut self, mask: u8) {
        self.collect_events = mask;
        if mask & (EVENT_EXPIRED | EVENT_NEW | EVENT_KEYMISS) == 0 && !self.events.is_empty() {
            self.events.clear();
        }
        if mask & EVENT_EXPIRED_LOG == 0 && !self.expired_log.is_empty() {
            self.expired_log.clear();
        }
    }

    /// The recorded keyspace events, oldest first.
    /// The recorded events in the order they happened (a command touching several tables
    /// merges them by the sequence number).
    pub fn take_events(&mut self) -> Vec<(u64, &'static str, Key)> {
        std::mem::take(&mut self.events)
    }

    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    fn note_expired(&mut self, key: &[u8]) {
        self.expired_keys += 1;
        if self.collect_events & EVENT_EXPIRED != 0 {
            self.events.push((next_event_seq(), "expired", key.into()));
        }
        if self.collect_events & EVENT_EXPIRED_LOG != 0 {
            self.expired_log.push(key.into());
        }
    }

    /// The keys deleted by expiry since the last call (recorded under `EVENT_EXPIRED_LOG`).
    pub fn take_expired_log(&mut self) -> Vec<Key> {
        std::mem::take(&mut self.expired_log)
    }

    pub fn has_expired_log(&self) -> bool {
        !self.expired_log.is_empty()
    }

    fn note_new(&mut self, key: &[u8]) {
        if self.collect_events & EVENT_NEW != 0 {
            self.events.push((next_event_seq(), "new", key.into()));
        }
    }

    pub(crate) fn take_ready(&mut self) -> Vec<Key> {
        std::mem::take(&mut self.ready)
    }

    pub(crate) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn expires_len(&self) -> usize {
        self.map.volatile_len()
    }

    /// Bytes of this table's own structures (MEMORY STATS' overheads): the key table's
    /// buckets, and the list of keys with a TTL (a pointer each).
    pub fn table_overheads(&self) -> (usize, usize) {
        (self.map.allocation_size(), self.map.volatile_allocation_size())
    }

    /// Looks a key up and records the access, deleting it first if its TTL has passed.
    pub fn get(&mut self, key: &[u8], now_ms: i64) -> Option<&Entry> {
        self.get_mut(key, now_ms).map(|e| &*e)
    }

    pub fn get_mut(&mut self, key: &[u8], now_ms: i64) -> Option<&mut Entry> {
        self.expire_if_due(key, now_ms);
        if self.deferred_expired(key, now_ms) {
            return None;
        }
        let entry = self.map.get_mut(key)?;
        entry.access = touched(entry.access, self.access_mode, now_ms, &mut self.rng);
        Some(entry)
    }

    /// A read lookup (Redis's lookupKeyRead): as `get`, and a miss is recorded as a
    /// `keymiss` event when those are collected.
    pub fn get_read(&mut self, key: &[u8], now_ms: i64) -> Option<&Entry> {
        self.expire_if_due(key, now_ms);
        let mode = self.access_mode;
        let found = if self.deferred_expired(key, now_ms) { None } else { self.map.get_mut(key) };
        match found {
            Some(entry) => {
                entry.access = touched(entry.access, mode, now_ms, &mut self.rng);
                Some(entry)
            }
            None => {
                if self.collect_events & EVENT_KEYMISS != 0 {
                    self.events.push((next_event_seq(), "keymiss", key.into()));
                }
                None
            }
        }
    }

    /// A read for the executor's fast path (`Engine::fast_get`): the entry, its access
    /// recorded, or None for a missing key; Err when the key's TTL has passed, with nothing
    /// changed (the general path deletes it and says so to the log and notifications).
    pub fn read_live(&mut self, key: &[u8], now_ms: i64, mode: AccessMode) -> Result<Option<&Entry>, Stale> {
        let Some(entry) = self.map.get_mut(key) else { return Ok(None) };
        if entry.expire_at_ms().is_some_and(|at| at <= now_ms) {
            return Err(Stale);
        }
        entry.access = touched(entry.access, mode, now_ms, &mut self.rng);
        Ok(Some(entry))
    }

    /// INCR's work for the executor's fast path (`Engine::fast_incr`) on a key that holds
    /// an integer: its new value, stored in place with its TTL and access data kept, as
    /// `set` would leave them after INCR's write lookup. None, with nothing changed, when
    /// the general path must run it: no such key (it is created there), its TTL has passed,
    /// it holds another type or a string that is no integer, or the sum overflows.
    pub fn incr_live(&mut self, key: &[u8], delta: i64, now_ms: i64, mode: AccessMode) -> Option<i64> {
        let entry = self.map.get_mut(key)?;
        if entry.expire_at_ms().is_some_and(|at| at <= now_ms) {
            return None;
        }
        let Value::Str(current) = &entry.value else { return None };
        let value = current.as_i64()?.checked_add(delta)?;
        entry.access = touched(entry.access, mode, now_ms, &mut self.rng);
        // (A string's old value is never a big one to free in the background.)
        entry.value = Value::Str(StrValue::Int(value));
        self.dirty += 1;
        Some(value)
    }

    /// Records a read that found no key (for lookups not made through `get_read`).
    pub fn note_keymiss(&mut self, key: &[u8]) {
        if self.collect_events & EVENT_KEYMISS != 0 {
            self.events.push((next_event_seq(), "keymiss", key.into()));
        }
    }

    /// Looks a key up without recording an access (Redis's LOOKUP_NOTOUCH).
    pub fn peek(&mut self, key: &[u8], now_ms: i64) -> Option<&Entry> {
        self.expire_if_due(key, now_ms);
        if self.deferred_expired(key, now_ms) {
            return None;
        }
        self.map.get(key)
    }

    /// Under `expiry_deferred`: the key's TTL has passed but it stays until the pause ends.
    fn deferred_expired(&self, key: &[u8], now_ms: i64) -> bool {
        self.expiry_deferred && self.is_stale(key, now_ms)
    }

    /// The key's absolute expiry, if it exists and has one (expired or not).
    pub fn peek_expire_at_ms(&self, key: &[u8]) -> Option<i64> {
        self.map.get(key).and_then(|e| e.expire_at_ms())
    }

    /// Deletes a key whose TTL passed, counting it as expired (a writable replica's own
    /// keys: nothing is logged, the master never knew them).
    pub fn remove_expired(&mut self, key: &[u8]) {
        if let Some(entry) = self.remove_entry(key) {
            self.dispose(entry.value, crate::lazyfree::LAZY_EXPIRE);
            self.expired_keys += 1;
        }
    }

    /// The key is present but its TTL has passed (not yet deleted).
    pub fn is_stale(&self, key: &[u8], now_ms: i64) -> bool {
        self.map.get(key).and_then(|e| e.expire_at_ms()).is_some_and(|at| at <= now_ms)
    }

    pub fn contains(&mut self, key: &[u8], now_ms: i64) -> bool {
        self.peek(key, now_ms).is_some()
    }

    /// The access field a new value starts with.
    fn fresh_access(&self, now_ms: i64) -> u32 {
        match self.access_mode {
            AccessMode::Lru => lru_clock(now_ms),
            AccessMode::Lfu { .. } => (lfu_minutes(now_ms) << 8) | LFU_INIT_VAL,
        }
    }

    /// Starts loading `key`'s bucket; the hash for `prefetch_chain` (see
    /// `KeyTable::prefetch_bucket`).
    pub fn prefetch_bucket(&self, key: &[u8]) -> u64 {
        self.map.prefetch_bucket(key)
    }

    /// Starts loading the first node of the chain of `hash`.
    pub fn prefetch_chain(&self, hash: u64) {
        self.map.prefetch_chain(hash)
    }

    /// Which removals free big values in the background (`lazyfree::LAZY_*` bits, from the
    /// `lazyfree-lazy-expire`, `-eviction` and `-server-del` switches), and where to.
    pub fn set_lazy_free(&mut self, mask: u8, lazy_free: &crate::lazyfree::LazyFree) {
        self.lazy_mask = mask;
        if mask != 0 && self.lazy_free.is_none() {
            self.lazy_free = Some(lazy_free.clone());
        }
    }

    /// Frees a value this table removed for `cause` (a `lazyfree::LAZY_*` bit): in the
    /// background when that cause's switch is on and the value is big, else now.
    fn dispose(&self, value: Value, cause: u8) {
        match &self.lazy_free {
            Some(lazy) if self.lazy_mask & cause != 0 => {
                lazy.free_value(value);
            }
            _ => drop(value),
        }
    }

    /// Stores `value` under `key`, replacing any previous value of any type.
    pub fn set(&mut self, key: &[u8], value: Value, ttl: TtlOnWrite, now_ms: i64) {
        self.expire_if_due(key, now_ms);
        let fresh = self.fresh_access(now_ms);
        let lfu = matches!(self.access_mode, AccessMode::Lfu { .. });
        let expiry = |old: Option<i64>| match ttl {
            TtlOnWrite::Clear => None,
            TtlOnWrite::Keep => old,
            TtlOnWrite::At(ms) => Some(ms),
        };
        // PERF: one hash and one probe, whether the key is new or overwritten; the key is
        // only copied when new.
        let (expire_at_ms, old) = match self.map.slot(key) {
            KeySlot::Taken(mut found) => {
                let expire_at_ms = expiry(found.entry().expire_at_ms());
                found.set_expire(expire_at_ms);
                let entry = found.entry();
                let old = std::mem::replace(&mut entry.value, value);
                // An overwrite keeps the LFU history of the key, as Redis's dbOverwrite does.
                if !lfu {
                    entry.access = fresh;
                }
                (expire_at_ms, Some(old))
            }
            KeySlot::Free(free) => {
                let expire_at_ms = expiry(None);
                free.fill(Entry::new(value, expire_at_ms, fresh));
                (expire_at_ms, None)
            }
        };
        match old {
            None => self.note_new(key),
            // An overwritten value goes as a server-side deletion (Redis's dbOverwrite).
            Some(old) => self.dispose(old, crate::lazyfree::LAZY_SERVER_DEL),
        }
        self.dirty += 1;
        if self.track_local_ttls && expire_at_ms.is_some() {
            self.local_ttls.push(key.into());
        }
        self.signal_ready(key);
    }

    /// Keys a writable replica's client gave a TTL in this command.
    pub fn take_local_ttls(&mut self) -> Vec<Key> {
        std::mem::take(&mut self.local_ttls)
    }

    /// Inserts a whole entry (value, TTL, access data) for RENAME, MOVE, COPY and SWAPDB-like
    /// moves, replacing any existing key.
    pub fn insert_entry(&mut self, key: &[u8], entry: Entry, now_ms: i64) {
        self.expire_if_due(key, now_ms);
        let old = self.map.insert(key, entry);
        // RENAME, MOVE and COPY add the key anew (Redis's dbAdd after deleting any old one).
        self.note_new(key);
        self.dirty += 1;
        if let Some(old) = old {
            self.dispose(old.value, crate::lazyfree::LAZY_SERVER_DEL);
        }
        self.signal_ready(key);
    }

    /// Removes a key as the server does on its own (a STORE's old destination, an emptied
    /// collection): true if it existed (and had not expired). Its value goes as a
    /// server-side deletion (`lazyfree-lazy-server-del`).
    pub fn remove(&mut self, key: &[u8], now_ms: i64) -> bool {
        self.remove_for(key, now_ms, crate::lazyfree::LAZY_SERVER_DEL)
    }

    /// Removes a key for `cause` (a `lazyfree::LAZY_*` bit: an EXPIRE or SET with a time
    /// already past deletes as expiry does); true if it existed (and had not expired).
    pub fn remove_for(&mut self, key: &[u8], now_ms: i64, cause: u8) -> bool {
        match self.take(key, now_ms) {
            Some(entry) => {
                self.dispose(entry.value, cause);
                true
            }
            None => false,
        }
    }

    /// Removes a key and returns its entry.
    pub fn take(&mut self, key: &[u8], now_ms: i64) -> Option<Entry> {
        self.expire_if_due(key, now_ms);
        let entry = self.remove_entry(key)?;
        self.dirty += 1;
        Some(entry)
    }

    fn remove_entry(&mut self, key: &[u8]) -> Option<Entry> {
        let entry = self.map.remove(key)?;
        // Clients blocked in XREADGROUP on a deleted (or expired) stream get an error.
        if matches!(entry.value, Value::Stream(_)) {
            self.signal_ready(key);
        }
        Some(entry)
    }

    /// Sets an absolute expiry on an existing key. Returns false if the key is missing.
    pub fn set_expire(&mut self, key: &[u8], at_ms: i64, now_ms: i64) -> bool {
        self.expire_if_due(key, now_ms);
        if self.map.set_expire(key, Some(at_ms)).is_none() {
            return false;
        }
        if self.track_local_ttls {
            self.local_ttls.push(key.into());
        }
        self.dirty += 1;
        true
    }

    /// Removes a key's TTL. True if it had one.
    pub fn persist(&mut self, key: &[u8], now_ms: i64) -> bool {
        self.expire_if_due(key, now_ms);
        let had_ttl = self.map.set_expire(key, None).flatten().is_some();
        if had_ttl {
            self.dirty += 1;
        }
        had_ttl
    }

    pub fn clear(&mut self) -> usize {
        self.clear_taking().0
    }

    /// Empties the database and returns how many keys it had and the old tables, for the
    /// caller to free (FLUSHDB ASYNC hands them to the lazy-free thread).
    pub fn clear_taking(&mut self) -> (usize, Box<dyn Send>) {
        // Clients blocked in XREADGROUP on a stream that goes away get an error.
        let streams: Vec<Key> = self
            .blocked
            .keys()
            .filter(|k| matches!(self.map.get(&k[..]).map(|e| &e.value), Some(Value::Stream(_))))
            .cloned()
            .collect();
        for key in streams {
            self.signal_ready(&key);
        }
        let n = self.map.len();
        self.dirty += n as u64;
        (n, Box::new(std::mem::take(&mut self.map)))
    }

    fn expire_if_due(&mut self, key: &[u8], now_ms: i64) {
        if self.map.volatile_len() == 0 || self.expiry_suspended || self.expiry_deferred {
            return;
        }
        if let Some(entry) = self.map.get(key) {
            if entry.expire_at_ms().is_some_and(|at| at <= now_ms) {
                if let Some(entry) = self.remove_entry(key) {
                    self.dispose(entry.value, crate::lazyfree::LAZY_EXPIRE);
                }
                self.note_expired(key);
            }
        }
    }

    /// Deletes every key whose TTL has passed (before a full walk such as KEYS).
    pub fn expire_all_due(&mut self, now_ms: i64) {
        if self.expiry_suspended {
            return;
        }
        let due: Vec<Key> = self
            .map
            .volatile_iter()
            .filter(|(_, e)| e.expire_at_ms().is_some_and(|at| at <= now_ms))
            .map(|(k, _)| Key::from(k))
            .collect();
        for key in due {
            if let Some(entry) = self.remove_entry(&key) {
                self.dispose(entry.value, crate::lazyfree::LAZY_EXPIRE);
            }
            self.note_expired(&key);
        }
    }

    /// Every key whose TTL has not passed, deleting none (Redis's KEYS skips expired keys
    /// with keyIsExpired: a deletion here would go unlogged).
    pub fn unexpired(&self, now_ms: i64) -> impl Iterator<Item = (&[u8], &Entry)> {
        self.map.iter().filter(move |(_, e)| e.expire_at_ms().is_none_or(|at| at > now_ms))
    }

    /// Every key with its entry, expired ones included and nothing changed (for snapshots,
    /// which save keys whose TTL passed as Redis does, and must not write to the table).
    pub fn iter_all(&self) -> impl Iterator<Item = (&[u8], &Entry)> {
        self.map.iter()
    }

    /// Every live key with its entry (expired ones are deleted first).
    pub fn iter_live(&mut self, now_ms: i64) -> impl Iterator<Item = (&[u8], &Entry)> {
        self.expire_all_due(now_ms);
        self.map.iter()
    }

    /// One SCAN call's share of this shard, as Redis's scanGenericCommand: table steps
    /// from `cursor` (a bucket cursor, see `KeyTable::scan_step`) until `count` keys are
    /// found, ten times `count` buckets were visited or the walk is over. Returns the keys
    /// and the cursor to continue from (None when the shard is done). Keys whose TTL passed
    /// are included, as Redis's SCAN visits them: the caller deletes those it would return
    /// (see `is_stale`).
    pub fn scan(&self, cursor: u64, count: usize) -> (Vec<Key>, Option<u64>) {
        let mut keys = Vec::new();
        let mut v = cursor;
        let mut visits = count.saturating_mul(10).max(1);
        loop {
            v = self.map.scan_step(v, |k, _| keys.push(Key::from(k)));
            visits -= 1;
            if v == 0 || visits == 0 || keys.len() >= count {
                break;
            }
        }
        (keys, (v != 0).then_some(v))
    }

    /// Sum and count of the remaining TTLs (ms) of up to `n` keys with a TTL (INFO avg_ttl).
    pub fn sample_ttls(&self, now_ms: i64, n: usize) -> (i64, i64) {
        let mut sum = 0;
        let mut count = 0;
        for (_, entry) in self.map.volatile_iter().take(n) {
            if let Some(at) = entry.expire_at_ms() {
                sum += (at - now_ms).max(0);
                count += 1;
            }
        }
        (sum, count)
    }

    /// Draws `n` keys (only keys with a TTL when `volatile`) and returns the one `score`
    /// ranks lowest, with its score: random keys with a TTL, or a run of table buckets from
    /// a random one (Redis's dictGetSomeKeys). Only the chosen key is copied.
    pub fn eviction_best(
        &self,
        n: usize,
        volatile: bool,
        rng: &mut Rng,
        score: impl Fn(u32, Option<i64>) -> i64,
    ) -> Option<(i64, Key)> {
        fn lowest<'a>(
            candidates: impl Iterator<Item = (&'a [u8], &'a Entry)>,
            score: impl Fn(u32, Option<i64>) -> i64,
        ) -> Option<(i64, Key)> {
            let mut best: Option<(i64, &[u8])> = None;
            for (key, entry) in candidates {
                let s = score(entry.access, entry.expire_at_ms());
                if best.is_none_or(|(b, _)| s < b) {
                    best = Some((s, key));
                }
            }
            best.map(|(s, key)| (s, Key::from(key)))
        }
        if volatile {
            let keys = self.map.volatile_len();
            if keys == 0 {
                return None;
            }
            lowest((0..n).map(|_| self.map.volatile_at(rng.below(keys))), score)
        } else {
            lowest(self.map.sample_from(rng.below(usize::MAX), n), score)
        }
    }

    /// Removes a key evicted by `maxmemory` (not a change made by a client: no dirty count).
    pub fn evict(&mut self, key: &[u8]) -> bool {
        match self.remove_entry(key) {
            Some(entry) => {
                self.dispose(entry.value, crate::lazyfree::LAZY_EVICTION);
                true
            }
            None => false,
        }
    }

    /// The first key at or after table bucket `start` (RANDOMKEY with a random `start`):
    /// O(1) on average, where walking to the n-th key was O(n).
    pub fn key_from_bucket(&self, start: usize) -> Option<&[u8]> {
        self.map.sample_from(start, 1).next().map(|(key, _)| key)
    }

    /// Checks up to `samples` random keys with a TTL and deletes the expired ones.
    /// Returns (sampled, expired).
    pub fn expire_sample(&mut self, samples: usize, now_ms: i64, rng: &mut Rng) -> (usize, usize) {
        let sampled = samples.min(self.map.volatile_len());
        let mut expired = 0;
        for _ in 0..sampled {
            if self.map.volatile_len() == 0 {
                break;
            }
            let (key, entry) = self.map.volatile_at(rng.below(self.map.volatile_len()));
            if entry.expire_at_ms().is_some_and(|at| at <= now_ms) {
                let key = SmallBytes::new(key);
                if let Some(entry) = self.map.remove(&key[..]) {
                    self.dispose(entry.value, crate::lazyfree::LAZY_EXPIRE);
                }
                self.note_expired(&key);
                expired += 1;
            }
        }
        (sampled, expired)
    }
}

/// A key's access field after an access: the LRU clock, or the LFU counter decayed and
/// incremented (Redis's updateLFU).
fn touched(access: u32, mode: AccessMode, now_ms: i64, rng: &mut Rng) -> u32 {
    match mode {
        AccessMode::Lru => lru_clock(now_ms),
        AccessMode::Lfu { log_factor, decay_minutes } => {
            let counter = lfu_decayed(access, now_ms, decay_minutes);
            let counter = lfu_log_incr(counter, log_factor, rng);
            (lfu_minutes(now_ms) << 8) | counter
        }
    }
}

/// Redis's LFULogIncr: the counter grows with probability 1/((counter-5)*factor+1).
fn lfu_log_incr(counter: u32, log_factor: u32, rng: &mut Rng) -> u32 {
    if counter >= 255 {
        return 255;
    }
    let r = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let base = counter.saturating_sub(LFU_INIT_VAL) as f64;
    let p = 1.0 / (base * f64::from(log_factor) + 1.0);
    if r < p {
        counter + 1
    } else {
        counter
    }
}

/// A tiny xorshift generator for sampling; not for anything user-visible.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Default for Rng {
    fn default() -> Self {
        Self(0x9e37_79b9_7f4a_7c15)
    }
}

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
    /// The keyspace is large enough for prefetching a pipeline's keys to pay (see
    /// `prefetch`); the cron sets it (`note_size`).
    large: std::sync::atomic::AtomicBool,
}

/// From this many keys on, tables and nodes outgrow a core's L2 cache (80 bytes a node),
/// and a pipeline's keys are worth prefetching; below, the lookahead would only cost.
const PREFETCH_MIN_KEYS: usize = 50_000;

impl Keyspace {
    /// `shard_count` is rounded up to a power of two and capped at the slot count.
    pub fn new(shard_count: usize, databases: usize) -> Self {
        let n = shard_count.clamp(1, SLOT_COUNT).next_power_of_two();
        Self {
            shards: (0..n).map(|_| Mutex::new(Shard::new(databases))).collect(),
            databases,
            large: std::sync::atomic::AtomicBool::new(false),
        }
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

    /// For each database holding keys: (database, keys, key-table bytes, expiry-index
    /// bytes), over every shard (MEMORY STATS).
    pub fn table_overheads(&self) -> Vec<(usize, usize, usize, usize)> {
        let mut per_db = vec![(0usize, 0usize, 0usize); self.databases];
        for shard in 0..self.shards.len() {
            let guard = self.lock(shard);
            for (db, table) in guard.dbs.iter().enumerate() {
                let (main, expires) = table.table_overheads();
                per_db[db].0 += table.len();
                per_db[db].1 += main;
                per_db[db].2 += expires;
            }
        }
        per_db
            .into_iter()
            .enumerate()
            .filter(|(_, (keys, _, _))| *keys > 0)
            .map(|(db, (keys, main, expires))| (db, keys, main, expires))
            .collect()
    }

    /// Redis's `activerehashing`: moves tables that are growing or shrinking on to their
    /// new bucket arrays for up to `budget`, so tables that see no writes don't go on
    /// looking in two arrays. Shards in use are skipped (a later cron finishes them).
    pub fn rehash_for(&self, budget: std::time::Duration) {
        if table::resizing_avoided() {
            return;
        }
        let start = std::time::Instant::now();
        for shard in 0..self.shards.len() {
            let Some(mut guard) = self.try_lock(shard) else { continue };
            for db in guard.dbs.iter_mut() {
                while db.map.rehash_some(100) {
                    if start.elapsed() >= budget {
                        return;
                    }
                }
            }
        }
    }

    /// Counts the keys (of the shards not in use) and notes whether the keyspace is large
    /// enough for prefetching (`is_large`). From the cron.
    pub fn note_size(&self) {
        let mut keys = 0;
        for shard in self.shards.iter() {
            if let Some(guard) = shard.try_lock() {
                keys += guard.dbs.iter().map(Db::len).sum::<usize>();
            }
        }
        self.large.store(keys >= PREFETCH_MIN_KEYS, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a pipeline's keys are worth prefetching (`note_size`).
    pub fn is_large(&self) -> bool {
        self.large.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Starts loading what looking up `keys` in database `db` will read: every key's bucket
    /// first, then the chains' first nodes, so that up to `keys.len()` cache misses are
    /// in flight at once (a pipeline's keys in a table larger than the caches). Shards in
    /// use are skipped.
    pub fn prefetch(&self, db: usize, keys: &[&[u8]]) {
        const MAX: usize = 32;
        let mut found = [(0usize, 0u64); MAX];
        let mut n = 0;
        for key in keys.iter().take(MAX) {
            let shard = self.shard_of(key);
            let Some(guard) = self.try_lock(shard) else { continue };
            let Some(table) = guard.dbs.get(db) else { return };
            found[n] = (shard, table.prefetch_bucket(key));
            n += 1;
        }
        for &(shard, hash) in &found[..n] {
            if let Some(guard) = self.try_lock(shard) {
                guard.dbs[db].prefetch_chain(hash);
            }
        }
    }

    pub fn try_lock(&self, shard: usize) -> Option<MutexGuard<'_, Shard>> {
        self.shards[shard].try_lock()
    }

    pub fn try_lock_for(&self, shard: usize, wait: std::time::Duration) -> Option<MutexGuard<'_, Shard>> {
        self.shards[shard].try_lock_for(wait)
    }

    /// SCAN cursors: the shard index in the top bits, that shard's table cursor below.
    /// Returns (shard, table cursor).
    pub fn decode_cursor(&self, cursor: u64) -> (usize, u64) {
        let bits = self.shards.len().trailing_zeros();
        if bits == 0 {
            return (0, cursor);
        }
        ((cursor >> (64 - bits)) as usize, cursor & (u64::MAX >> bits))
    }

    /// The cursor for continuing at `position` of `shard`; 0 once past the last shard.
    pub fn encode_cursor(&self, shard: usize, position: Option<u64>) -> u64 {
        let bits = self.shards.len().trailing_zeros();
        let (shard, position) = match position {
            Some(p) if bits == 0 || p <= u64::MAX >> bits => (shard, p),
            _ => (shard + 1, 0),
        };
        if shard >= self.shards.len() {
            return 0;
        }
        if bits == 0 {
            position
        } else {
            ((shard as u64) << (64 - bits)) | position
        }
    }

    /// For a forked child only: releases the shard locks that threads of the parent held at
    /// the fork (they don't exist in the child, so the locks would never be released).
    ///
    /// # Safety
    /// Only in a single-threaded forked child, forked while the transaction gate was held
    /// exclusively, so no shard's data was in the middle of a change.
    pub unsafe fn unlock_all_after_fork(&self) {
        for shard in &self.shards {
            if shard.is_locked() {
                // SAFETY: see the function's contract; the holder is gone with its thread.
                unsafe { shard.force_unlock() };
            }
        }
    }

    /// Locks every shard in ascending order (the global lock order).
    pub fn lock_all(&self) -> Vec<MutexGuard<'_, Shard>> {
        self.shards.iter().map(|s| s.lock()).collect()
    }

    /// Keys in database `db`, summed over shards. Each shard is locked in turn.
    pub fn db_len(&self, db: usize) -> usize {
        self.shards.iter().map(|s| s.lock().dbs[db].len()).sum()
    }

    /// Up to `limit` keys of database `db` in hash slot `slot` (expired ones too, as Redis's
    /// per-slot key list holds them until deleted). A slot lives in one shard: one shard
    /// is walked (CLUSTER COUNTKEYSINSLOT, GETKEYSINSLOT, SETSLOT NODE).
    // PERF: O(keys in the shard); Redis keeps a list of keys per slot.
    pub fn keys_in_slot(&self, db: usize, slot: usize, limit: usize) -> Vec<Vec<u8>> {
        let shard = self.lock(slot & (self.shards.len() - 1));
        shard.dbs[db]
            .iter_all()
            .filter(|(k, _)| crate::slot::key_hash_slot(k) == slot)
            .take(limit)
            .map(|(k, _)| k.to_vec())
            .collect()
    }

    /// How many keys of database `db` are in hash slot `slot` (see `keys_in_slot`).
    pub fn count_in_slot(&self, db: usize, slot: usize) -> usize {
        let shard = self.lock(slot & (self.shards.len() - 1));
        shard.dbs[db].iter_all().filter(|(k, _)| crate::slot::key_hash_slot(k) == slot).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::string(v.as_bytes())
    }

    /// The key table holds keys and entries in its slots: these sizes are its memory per
    /// key (docs/memory.md). A change here changes every dataset's footprint.
    #[test]
    fn table_slot_sizes() {
        assert_eq!(std::mem::size_of::<SmallBytes>(), 24);
        assert_eq!(std::mem::size_of::<StrValue>(), 24);
        assert_eq!(std::mem::size_of::<Value>(), 32);
        assert_eq!(std::mem::size_of::<Entry>(), 48);
    }

    /// Prefetching is a hint: any keys (present, missing, in tables being rehashed, in a
    /// database that doesn't exist) leave the tables as they were; the cron's count turns it
    /// on from PREFETCH_MIN_KEYS keys.
    #[test]
    fn prefetching_is_only_a_hint() {
        let ks = Keyspace::new(4, 2);
        ks.note_size();
        assert!(!ks.is_large());
        let keys: Vec<String> = (0..PREFETCH_MIN_KEYS + 10).map(|i| format!("key:{i}")).collect();
        for (i, key) in keys.iter().enumerate() {
            let shard = ks.shard_of(key.as_bytes());
            ks.lock(shard).dbs[0].set(key.as_bytes(), s(&i.to_string()), TtlOnWrite::Clear, 0);
            if i % 997 == 0 {
                let batch: Vec<&[u8]> = keys[i.saturating_sub(40)..=i].iter().map(|k| k.as_bytes()).collect();
                ks.prefetch(0, &batch);
                ks.prefetch(1, &batch);
                ks.prefetch(7, &batch);
                ks.prefetch(0, &[b"missing", b""]);
            }
        }
        ks.note_size();
        assert!(ks.is_large());
        assert_eq!(ks.db_len(0), PREFETCH_MIN_KEYS + 10);
        for (i, key) in keys.iter().enumerate().step_by(101) {
            let shard = ks.shard_of(key.as_bytes());
            let mut guard = ks.lock(shard);
            assert_eq!(guard.dbs[0].peek(key.as_bytes(), 0).map(|e| e.value.clone()), Some(s(&i.to_string())));
        }
    }

    #[test]
    fn small_bytes_inline_up_to_22_and_compare_as_bytes() {
        let short = SmallBytes::new(b"key:000000000001");
        assert!(matches!(short, SmallBytes::Inline(16, _)));
        assert_eq!(&short[..], b"key:000000000001");
        assert_eq!(short.heap_bytes(), 0);
        let edge = SmallBytes::new(&[b'x'; EMB_INLINE_MAX]);
        assert!(matches!(edge, SmallBytes::Inline(..)));
        let long = SmallBytes::new(&[b'y'; EMB_INLINE_MAX + 1]);
        assert!(matches!(long, SmallBytes::Boxed(_)));
        assert_eq!(long.heap_bytes(), EMB_INLINE_MAX + 1);
        assert_eq!(SmallBytes::Boxed(b"ab"[..].into()), SmallBytes::new(b"ab"));
        let mut map: HashMap<SmallBytes, u8> = HashMap::new();
        map.insert(SmallBytes::new(b"k"), 1);
        map.insert(long.clone(), 2);
        assert_eq!(map.get(&b"k"[..]), Some(&1));
        assert_eq!(map.get(&long[..]), Some(&2));
        assert_eq!(StrValue::from_client(b"xxx").encoding_name(), "embstr");
        assert_eq!(StrValue::from_client(&[b'z'; 44]).encoding_name(), "embstr");
        assert_eq!(StrValue::from_client(&[b'z'; 45]).encoding_name(), "raw");
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
        assert_eq!(db.get(b"b", 0).unwrap().expire_at_ms(), Some(50));
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
