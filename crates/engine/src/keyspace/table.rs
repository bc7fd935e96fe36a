//! The table of one database's keys in one shard: a chained hash table with incremental
//! rehashing, as Redis's dict.
//!
//! Each key and its entry live together in one allocation (a `Node`, 80 bytes with the
//! chain link), the buckets hold only the chains' heads: 8 bytes a bucket, at a load between
//! 1/2 and 1 (the table doubles when it holds as many keys as buckets), so 8 to 16 bytes a
//! key. Growing or shrinking moves one bucket's chain per write into the new bucket array
//! (and lookups look in both meanwhile), so no single command pays for moving a whole shard.
//!
//! SCAN walks the buckets in Redis's reverse-binary cursor order (`scan_step`), which visits
//! every key present for the whole scan exactly once per table size, however often the table
//! grows or shrinks between calls, at a cost proportional to the buckets visited.
//! See docs/memory.md.

use hashbrown::DefaultHashBuilder;
use std::hash::BuildHasher;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Entry, SmallBytes};

/// A key and its entry, in one allocation, linked into its bucket's chain.
#[derive(Debug)]
struct Node {
    next: Link,
    key: SmallBytes,
    entry: Entry,
}

type Link = Option<NonNull<Node>>;

/// Bucket arrays are never smaller than this (Redis's DICT_HT_INITIAL_SIZE).
const MIN_BUCKETS: usize = 4;
/// Buckets a rehash step may find empty before it stops (Redis's `empty_visits`).
const EMPTY_VISITS_PER_STEP: usize = 10;
/// How many buckets ahead a rehash step prefetches the node it will move.
const REHASH_PREFETCH_DISTANCE: usize = 8;
/// With a forked child alive, a table grows only past this many keys per bucket (Redis's
/// `dict_force_resize_ratio`).
const FORCE_RESIZE_RATIO: usize = 5;

/// Forked children alive (BGSAVE, AOF rewrite, replication's RDB). Meanwhile tables start
/// growing only when over `FORCE_RESIZE_RATIO` times full, never start shrinking, and a
/// rehash under way waits, as Redis's `dict_can_resize`: moving keys writes to the pages
/// the child still shares, so each would be copied. Process-wide, as a fork is.
static FORK_CHILDREN: AtomicUsize = AtomicUsize::new(0);

/// A forked child started (see `FORK_CHILDREN`).
pub fn fork_child_started() {
    FORK_CHILDREN.fetch_add(1, Ordering::Relaxed);
}

/// A forked child was reaped.
pub fn fork_child_ended() {
    let _ = FORK_CHILDREN.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
}

pub(super) fn resizing_avoided() -> bool {
    FORK_CHILDREN.load(Ordering::Relaxed) > 0
}

#[derive(Debug, Default)]
pub(super) struct KeyTable {
    /// The buckets (Redis's ht[0]): empty, or a power of two of chain heads.
    main: Box<[Link]>,
    /// While rehashing, the new buckets (ht[1]); empty otherwise.
    next: Box<[Link]>,
    /// While rehashing, the first bucket of `main` not yet moved to `next`.
    rehash_at: usize,
    len: usize,
    hasher: DefaultHashBuilder,
    /// The nodes of the keys with a TTL, in no order, each node knowing its place
    /// (`Entry::ttl_slot`): what the active expiry cycle and volatile eviction sample from,
    /// at one pointer per key (nodes never move; Redis keeps a second dict for this).
    volatile: Vec<NonNull<Node>>,
}

// SAFETY: the table owns its nodes as a Box would (each reachable from exactly one link);
// `&self` methods only read them.
unsafe impl Send for KeyTable {}
// SAFETY: as above.
unsafe impl Sync for KeyTable {}

impl Drop for KeyTable {
    fn drop(&mut self) {
        for head in self.main.iter_mut().chain(self.next.iter_mut()) {
            let mut link = head.take();
            while let Some(node) = link {
                // SAFETY: every node was made by `Box::leak` in `FreeSlot::fill` and is
                // linked once; it is unlinked here before being freed.
                let node = unsafe { Box::from_raw(node.as_ptr()) };
                link = node.next;
            }
        }
    }
}

/// A hint to load the cache line at `at` (never faults, whatever the address).
#[inline]
fn prefetch(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 reads nothing architecturally; any address is allowed.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// Redis's `rev`: the cursor counts with its bits reversed.
fn next_cursor(v: u64, mask: u64) -> u64 {
    ((v | !mask).reverse_bits().wrapping_add(1)).reverse_bits()
}

impl KeyTable {
    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    fn is_rehashing(&self) -> bool {
        !self.next.is_empty()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes of the bucket arrays, not of the keys and entries they point to.
    pub fn allocation_size(&self) -> usize {
        (self.main.len() + self.next.len()) * std::mem::size_of::<Link>()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keys with a TTL.
    pub fn volatile_len(&self) -> usize {
        self.volatile.len()
    }

    /// Bytes of the list of keys with a TTL.
    pub fn volatile_allocation_size(&self) -> usize {
        self.volatile.capacity() * std::mem::size_of::<NonNull<Node>>()
    }

    /// The `i`-th key with a TTL (`i < volatile_len()`), for sampling.
    pub fn volatile_at(&self, i: usize) -> (&[u8], &Entry) {
        // SAFETY: listed nodes are live while the table is borrowed.
        let n = unsafe { self.volatile[i].as_ref() };
        (&n.key[..], &n.entry)
    }

    /// Every key with a TTL.
    pub fn volatile_iter(&self) -> impl Iterator<Item = (&[u8], &Entry)> + '_ {
        (0..self.volatile.len()).map(|i| self.volatile_at(i))
    }

    /// Sets or clears the expiry of `key`: None if it is missing, else its previous expiry.
    pub fn set_expire(&mut self, key: &[u8], at: Option<i64>) -> Option<Option<i64>> {
        self.rehash_step();
        let node = self.find(key, self.hash(key))?;
        Some(set_node_expire(&mut self.volatile, node, at))
    }

    /// The bucket arrays that may hold a key of `hash`: while rehashing, a key whose old
    /// bucket was moved already is only in the new array (its old bucket is empty: not
    /// read, a cache miss saved in a large table); the others are in the old one, or, if
    /// added since the rehash began, the new one.
    fn arrays_for(&self, hash: u64) -> [&[Link]; 2] {
        if self.is_rehashing() && (hash as usize & (self.main.len() - 1)) < self.rehash_at {
            [&self.next, &[]]
        } else {
            [&self.main, &self.next]
        }
    }

    /// The node holding `key`, in either bucket array.
    fn find(&self, key: &[u8], hash: u64) -> Link {
        for buckets in self.arrays_for(hash) {
            if buckets.is_empty() {
                break;
            }
            let mut link = buckets[hash as usize & (buckets.len() - 1)];
            while let Some(node) = link {
                // SAFETY: linked nodes are live while the table is borrowed.
                let n = unsafe { node.as_ref() };
                if n.key[..] == *key {
                    return Some(node);
                }
                link = n.next;
            }
        }
        None
    }

    /// Asks the CPU to start loading the bucket `key` hashes to (the one that holds it,
    /// while rehashing: see `arrays_for`); returns the hash for `prefetch_chain`. A
    /// pipeline's next commands are looked up after all their buckets and then their nodes
    /// were asked for, so the cache misses of a large table overlap instead of coming one
    /// after another.
    pub fn prefetch_bucket(&self, key: &[u8]) -> u64 {
        let hash = self.hash(key);
        let [buckets, _] = self.arrays_for(hash);
        if !buckets.is_empty() {
            prefetch(buckets.as_ptr().wrapping_add(hash as usize & (buckets.len() - 1)).cast());
        }
        hash
    }

    /// Asks for the first node of the chain `hash` leads to (its two cache lines): in the
    /// array `prefetch_bucket` loaded (keys added during a rehash, in the other, are not
    /// prefetched: reading their bucket would wait for it).
    pub fn prefetch_chain(&self, hash: u64) {
        let [buckets, _] = self.arrays_for(hash);
        if let Some(node) = buckets.get(hash as usize & buckets.len().wrapping_sub(1)).copied().flatten() {
            let at: *const u8 = node.as_ptr().cast();
            prefetch(at);
            prefetch(at.wrapping_add(64));
        }
    }

    pub fn get(&self, key: &[u8]) -> Option<&Entry> {
        // SAFETY: a live node, borrowed with the table.
        self.find(key, self.hash(key)).map(|node| unsafe { &(*node.as_ptr()).entry })
    }

    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        self.rehash_step();
        // SAFETY: a live node, borrowed mutably with the table.
        self.find(key, self.hash(key)).map(|node| unsafe { &mut (*node.as_ptr()).entry })
    }

    /// Stores `entry` under `key`; returns the entry it replaced (the key stays as it was).
    pub fn insert(&mut self, key: &[u8], entry: Entry) -> Option<Entry> {
        match self.slot(key) {
            KeySlot::Taken(mut found) => {
                let expire = found.set_expire(entry.expire_at_ms());
                let e = found.entry();
                let value = std::mem::replace(&mut e.value, entry.value);
                let access = std::mem::replace(&mut e.access, entry.access);
                Some(Entry::new(value, expire, access))
            }
            KeySlot::Free(free) => {
                free.fill(entry);
                None
            }
        }
    }

    /// The entry of `key`, or the place to put one: one hash and one walk of a chain
    /// (two while rehashing) either way.
    pub fn slot<'t, 'k>(&'t mut self, key: &'k [u8]) -> KeySlot<'t, 'k> {
        self.rehash_step();
        if !self.is_rehashing()
            && self.len >= self.main.len()
            && (self.main.is_empty() || !resizing_avoided() || self.len >= self.main.len() * FORCE_RESIZE_RATIO)
        {
            self.resize((self.main.len() * 2).max(MIN_BUCKETS));
        }
        let hash = self.hash(key);
        match self.find(key, hash) {
            // SAFETY: a live node, borrowed mutably with the table.
            Some(node) => KeySlot::Taken(Occupied { volatile: &mut self.volatile, node }),
            None => KeySlot::Free(FreeSlot { table: self, key, hash }),
        }
    }

    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        self.rehash_step();
        let hash = self.hash(key);
        let removed = self.unlink(key, hash)?;
        self.len -= 1;
        // SAFETY: a live node of this table.
        if unsafe { removed.as_ref() }.entry.expire_at_ms().is_some() {
            unlist(&mut self.volatile, removed);
        }
        self.shrink_if_sparse();
        // SAFETY: unlinked above (and out of `volatile`), so this is the only pointer to it.
        Some(unsafe { Box::from_raw(removed.as_ptr()) }.entry)
    }

    /// Starts shrinking a table below 10% full to the smallest power of two that holds its
    /// keys, as Redis's htNeedsResize and dictResize.
    fn shrink_if_sparse(&mut self) {
        if !self.is_rehashing()
            && self.main.len() > MIN_BUCKETS
            && self.len * 10 < self.main.len()
            && !resizing_avoided()
        {
            self.resize(self.len.next_power_of_two().max(MIN_BUCKETS));
        }
    }

    /// Takes the node of `key` out of its chain.
    fn unlink(&mut self, key: &[u8], hash: u64) -> Link {
        for buckets in [&mut self.main, &mut self.next] {
            if buckets.is_empty() {
                break;
            }
            let mask = buckets.len() - 1;
            let mut link: &mut Link = &mut buckets[hash as usize & mask];
            while let Some(node) = *link {
                // SAFETY: linked nodes are live; the table is borrowed mutably.
                let n = unsafe { &mut *node.as_ptr() };
                if n.key[..] == *key {
                    *link = n.next.take();
                    return Some(node);
                }
                link = &mut n.next;
            }
        }
        None
    }

    /// Starts moving the keys into `buckets` new buckets (a power of two).
    fn resize(&mut self, buckets: usize) {
        if buckets == self.main.len() {
            return;
        }
        let fresh = vec![None; buckets].into_boxed_slice();
        if self.main.is_empty() {
            self.main = fresh;
        } else {
            self.next = fresh;
            self.rehash_at = 0;
        }
    }

    /// Moves one bucket's chain (looking at no more than a few empty buckets) from the old
    /// bucket array to the new one, and swaps them once the old one is empty.
    fn rehash_step(&mut self) {
        // Moving chains rewrites the links of nodes a forked child still shares, a page
        // copied for every 51 nodes: with a child alive a rehash waits (as Redis 7.2's
        // DICT_RESIZE_AVOID), unless the new array is five times over full.
        if !self.is_rehashing() || (resizing_avoided() && self.len < self.next.len() * FORCE_RESIZE_RATIO) {
            return;
        }
        let mask = self.next.len() - 1;
        self.prefetch_rehash_ahead(mask);
        let mut empty = 0;
        while self.rehash_at < self.main.len() {
            let mut link = self.main[self.rehash_at].take();
            self.rehash_at += 1;
            if link.is_none() {
                empty += 1;
                if empty == EMPTY_VISITS_PER_STEP {
                    return;
                }
                continue;
            }
            while let Some(node) = link {
                // SAFETY: the chain was taken out of `main`; each node is moved once.
                let n = unsafe { &mut *node.as_ptr() };
                link = n.next;
                let at = self.hasher.hash_one(&n.key[..]) as usize & mask;
                n.next = self.next[at];
                self.next[at] = Some(node);
            }
            break;
        }
        if self.rehash_at == self.main.len() {
            self.main = std::mem::take(&mut self.next);
            self.rehash_at = 0;
        }
    }

    /// PERF: a step reads nodes at random in memory (to hash their keys) and writes at
    /// random into the new array. Ahead of the move, in two stages: the first node of the
    /// bucket `2 * REHASH_PREFETCH_DISTANCE` on is asked for; the one `REHASH_PREFETCH_DISTANCE`
    /// on, asked for earlier, is hashed now (and again when moved: a hash of a cached key
    /// costs less than the miss on its new bucket) and its new bucket asked for, with its
    /// chain's second node. (The bucket array itself is read in order: the hardware
    /// prefetches it.)
    fn prefetch_rehash_ahead(&self, mask: usize) {
        let node_fields = |node: NonNull<Node>| {
            let node: *const u8 = node.as_ptr().cast();
            // The fields a move reads (wherever the layout put them: maybe two lines).
            prefetch(node.wrapping_add(std::mem::offset_of!(Node, key)));
            prefetch(node.wrapping_add(std::mem::offset_of!(Node, next)));
        };
        if let Some(Some(far)) = self.main.get(self.rehash_at + 2 * REHASH_PREFETCH_DISTANCE) {
            node_fields(*far);
        }
        if let Some(Some(near)) = self.main.get(self.rehash_at + REHASH_PREFETCH_DISTANCE) {
            // SAFETY: a linked node, live while the table is borrowed.
            let n = unsafe { near.as_ref() };
            let at = self.hasher.hash_one(&n.key[..]) as usize & mask;
            prefetch(self.next.as_ptr().wrapping_add(at).cast());
            if let Some(second) = n.next {
                node_fields(second);
            }
        }
    }

    /// Goes on with a rehash in progress (or a shrink a sparse table needs, as Redis's cron
    /// does) for about `budget` bucket moves; true if one is still going (Redis's
    /// `activerehashing`).
    pub fn rehash_some(&mut self, budget: usize) -> bool {
        if resizing_avoided() {
            return self.is_rehashing();
        }
        for _ in 0..budget {
            self.shrink_if_sparse();
            if !self.is_rehashing() {
                break;
            }
            self.rehash_step();
        }
        self.is_rehashing()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &Entry)> + '_ {
        self.main.iter().chain(self.next.iter()).flat_map(|head| Chain { link: *head, table: PhantomData })
    }

    /// Up to `n` entries from the chains at and after bucket `start` (modulo the bucket
    /// count, both arrays while rehashing), as Redis's dictGetSomeKeys samples: at a load of
    /// 1/10 to 1 a sample costs O(n) buckets, not a walk from the table's start.
    pub fn sample_from(&self, start: usize, n: usize) -> impl Iterator<Item = (&[u8], &Entry)> + '_ {
        let buckets = self.main.len() + self.next.len();
        let wanted = n.min(self.len);
        let start = start % buckets.max(1);
        (0..buckets)
            .flat_map(move |step| {
                let at = (start + step) % buckets;
                let head = if at < self.main.len() { self.main[at] } else { self.next[at - self.main.len()] };
                Chain { link: head, table: PhantomData }
            })
            .take(wanted)
    }

    /// One step of Redis's dictScan: calls `emit` for every key of the bucket(s) at cursor
    /// `v` and returns the next cursor, 0 when the walk is over. While rehashing it visits
    /// the smaller array's bucket and every bucket of the larger one it expands to.
    pub fn scan_step(&self, v: u64, mut emit: impl FnMut(&[u8], &Entry)) -> u64 {
        let mut each = |head: Link| {
            for (k, e) in (Chain { link: head, table: PhantomData }) {
                emit(k, e);
            }
        };
        if self.main.is_empty() {
            return 0;
        }
        if !self.is_rehashing() {
            let mask = (self.main.len() - 1) as u64;
            each(self.main[(v & mask) as usize]);
            return next_cursor(v, mask);
        }
        let (small, large) =
            if self.main.len() <= self.next.len() { (&self.main, &self.next) } else { (&self.next, &self.main) };
        let (m0, m1) = ((small.len() - 1) as u64, (large.len() - 1) as u64);
        each(small[(v & m0) as usize]);
        let mut v = v;
        loop {
            each(large[(v & m1) as usize]);
            v = next_cursor(v, m1);
            if v & (m0 ^ m1) == 0 {
                return v;
            }
        }
    }
}

/// The keys and entries of one chain.
struct Chain<'t> {
    link: Link,
    table: PhantomData<&'t KeyTable>,
}

impl<'t> Iterator for Chain<'t> {
    type Item = (&'t [u8], &'t Entry);

    fn next(&mut self) -> Option<Self::Item> {
        let node = self.link?;
        // SAFETY: linked nodes are live while the table is borrowed for 't.
        let n: &'t Node = unsafe { &*node.as_ptr() };
        self.link = n.next;
        Some((&n.key[..], &n.entry))
    }
}

/// Adds a node to `volatile` (the keys with a TTL of its table), noting its place.
fn list(volatile: &mut Vec<NonNull<Node>>, node: NonNull<Node>) {
    let slot = u32::try_from(volatile.len()).expect("fewer than 2^32 keys with a TTL in a table");
    // SAFETY: a live node of the table `volatile` belongs to, borrowed mutably with it.
    unsafe { (*node.as_ptr()).entry.ttl_slot = slot };
    volatile.push(node);
}

/// Takes a listed node out of `volatile`: the last one takes its place.
fn unlist(volatile: &mut Vec<NonNull<Node>>, node: NonNull<Node>) {
    // SAFETY: a live node of the table `volatile` belongs to.
    let slot = unsafe { node.as_ref() }.entry.ttl_slot as usize;
    debug_assert_eq!(volatile[slot], node);
    volatile.swap_remove(slot);
    if let Some(moved) = volatile.get(slot) {
        // SAFETY: another live node of the same table.
        unsafe { (*moved.as_ptr()).entry.ttl_slot = slot as u32 };
    }
}

/// Sets or clears the expiry of a linked node, keeping `volatile` in step; returns the
/// previous expiry.
fn set_node_expire(volatile: &mut Vec<NonNull<Node>>, node: NonNull<Node>, at: Option<i64>) -> Option<i64> {
    // SAFETY: a live node of the table `volatile` belongs to, borrowed mutably with it.
    let old = unsafe { &mut (*node.as_ptr()).entry }.set_expire_at_ms(at);
    match (old.is_some(), at.is_some()) {
        (false, true) => list(volatile, node),
        (true, false) => unlist(volatile, node),
        _ => {}
    }
    old
}

/// What `KeyTable::slot` found.
pub(super) enum KeySlot<'t, 'k> {
    Taken(Occupied<'t>),
    Free(FreeSlot<'t, 'k>),
}

/// A key found by `KeyTable::slot`: its entry, whose expiry changes through `set_expire`.
pub(super) struct Occupied<'t> {
    volatile: &'t mut Vec<NonNull<Node>>,
    node: NonNull<Node>,
}

impl<'t> Occupied<'t> {
    pub fn entry(&mut self) -> &mut Entry {
        // SAFETY: a live node, borrowed mutably with its table for 't.
        unsafe { &mut (*self.node.as_ptr()).entry }
    }

    /// Sets or clears the expiry; returns the previous one.
    pub fn set_expire(&mut self, at: Option<i64>) -> Option<i64> {
        set_node_expire(self.volatile, self.node, at)
    }
}

pub(super) struct FreeSlot<'t, 'k> {
    table: &'t mut KeyTable,
    key: &'k [u8],
    hash: u64,
}

impl FreeSlot<'_, '_> {
    pub fn fill(self, entry: Entry) {
        let table = self.table;
        // New keys go to the new bucket array while rehashing, as Redis's dictAddRaw.
        let buckets = if table.is_rehashing() { &mut table.next } else { &mut table.main };
        let at = self.hash as usize & (buckets.len() - 1);
        let has_ttl = entry.expire_at_ms().is_some();
        let node = NonNull::from(Box::leak(Box::new(Node { next: buckets[at], key: self.key.into(), entry })));
        buckets[at] = Some(node);
        table.len += 1;
        if has_ttl {
            list(&mut table.volatile, node);
        }
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
    /// after mass deletion (and shrinking).
    #[test]
    fn samples_from_any_bucket() {
        let mut t = KeyTable::default();
        assert_eq!(t.sample_from(7, 5).count(), 0);
        for i in 0..10_000 {
            t.insert(format!("key:{i}").as_bytes(), entry(i));
        }
        let mut seen = std::collections::HashSet::new();
        // (A chain is sampled from its head, so a key deep in a long chain is reached from
        // its own bucket only by a large enough sample, as in Redis's dictGetSomeKeys.)
        for start in 0..(t.main.len() + t.next.len()) * 2 {
            let sample: Vec<&[u8]> = t.sample_from(start, 5).map(|(k, _)| k).collect();
            assert_eq!(sample.len(), 5);
            let distinct: std::collections::HashSet<&[u8]> = sample.iter().copied().collect();
            assert_eq!(distinct.len(), 5, "start {start}");
            seen.extend(t.sample_from(start, 16).map(|(k, _)| k.to_vec()));
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

    /// Every key of a full scan of a table that doesn't change, exactly once.
    fn full_scan(t: &KeyTable) -> Vec<Vec<u8>> {
        let mut keys = Vec::new();
        let mut v = 0;
        loop {
            v = t.scan_step(v, |k, _| keys.push(k.to_vec()));
            if v == 0 {
                return keys;
            }
        }
    }

    /// Redis's SCAN guarantee over the reverse-binary cursor: a key present from the start
    /// of a scan to its end is returned, however the table grows, shrinks or rehashes
    /// between steps (keys come and go at every step here); a table left alone is walked
    /// exactly once.
    #[test]
    fn scan_returns_every_key_present_throughout() {
        let mut t = KeyTable::default();
        assert_eq!(t.scan_step(0, |_, _| panic!("empty")), 0);
        for i in 0..1_000 {
            t.insert(format!("stay:{i}").as_bytes(), entry(i));
        }
        let mut once = full_scan(&t);
        once.sort();
        assert_eq!(once.len(), 1_000);
        once.dedup();
        assert_eq!(once.len(), 1_000, "no duplicates when nothing changes");
        // Grow to 64k keys and shrink back to almost nothing, in waves, while scanning.
        let mut seen = std::collections::HashSet::new();
        let (mut v, mut steps, mut next_temp, mut live_temp) = (0u64, 0, 0u64, std::collections::VecDeque::new());
        let mut rehashing_seen = false;
        loop {
            v = t.scan_step(v, |k, _| {
                seen.insert(k.to_vec());
            });
            steps += 1;
            let growing = (steps / 300) % 2 == 0;
            for _ in 0..(if growing { 200 } else { 0 }) {
                t.insert(format!("temp:{next_temp}").as_bytes(), entry(0));
                live_temp.push_back(next_temp);
                next_temp += 1;
            }
            if !growing {
                for _ in 0..400 {
                    if let Some(old) = live_temp.pop_front() {
                        assert!(t.remove(format!("temp:{old}").as_bytes()).is_some());
                    }
                }
            }
            rehashing_seen |= t.is_rehashing();
            if v == 0 {
                break;
            }
        }
        assert!(rehashing_seen, "the scan crossed rehashes");
        assert!(next_temp > 50_000, "the table grew a lot: {next_temp}");
        for i in 0..1_000 {
            assert!(seen.contains(format!("stay:{i}").as_bytes()), "stay:{i} missed after {steps} steps");
        }
    }

    /// Tests that assert table sizes run one at a time: the fork flag is process-wide.
    static SIZES: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Growing and shrinking move keys one bucket per write; meanwhile every key is found
    /// in one of the two arrays, and the cron's steps finish the move.
    #[test]
    fn rehashes_incrementally() {
        let _sizes = SIZES.lock().unwrap_or_else(|e| e.into_inner());
        let mut t = KeyTable::default();
        for i in 0..4_096 {
            t.insert(format!("k{i}").as_bytes(), entry(i));
        }
        // The 4,097th key starts a doubling; a lookup finds keys in both arrays.
        t.insert(b"k4096", entry(4_096));
        assert!(t.is_rehashing());
        assert!((0..=4_096).all(|i| int_of(t.get(format!("k{i}").as_bytes())) == Some(i)));
        assert_eq!(t.iter().count(), 4_097);
        assert_eq!(t.allocation_size(), (4_096 + 8_192) * 8);
        assert!(!t.rehash_some(usize::MAX));
        assert_eq!(t.allocation_size(), 8_192 * 8);
        assert!((0..=4_096).all(|i| int_of(t.get(format!("k{i}").as_bytes())) == Some(i)));
        // Below a tenth full it shrinks to the smallest power of two that holds the keys.
        for i in 0..4_000 {
            assert_eq!(int_of(t.remove(format!("k{i}").as_bytes()).as_ref()), Some(i));
        }
        assert!(!t.rehash_some(usize::MAX));
        assert_eq!((t.len(), t.allocation_size()), (97, 128 * 8), "shrunk twice: on a delete, then by the cron");
        assert!((4_000..=4_096).all(|i| int_of(t.get(format!("k{i}").as_bytes())) == Some(i)));
        for i in 4_000..=4_096 {
            assert!(t.remove(format!("k{i}").as_bytes()).is_some());
        }
        assert!(t.is_empty() && t.iter().next().is_none());
    }

    /// At every step of a growth and of a shrink, each key is found (moved already, not
    /// yet, or added since the move began), removed keys are not, and prefetching any key
    /// is harmless.
    #[test]
    fn finds_every_key_at_every_step_of_a_rehash() {
        let _sizes = SIZES.lock().unwrap_or_else(|e| e.into_inner());
        let mut t = KeyTable::default();
        let key = |i: i64| format!("k{i}").into_bytes();
        for i in 0..512 {
            t.insert(&key(i), entry(i));
        }
        let check = |t: &KeyTable, live: &std::ops::Range<i64>, gone: &std::ops::Range<i64>| {
            for i in live.clone() {
                t.prefetch_chain(t.prefetch_bucket(&key(i)));
                assert_eq!(int_of(t.get(&key(i))), Some(i), "k{i} at bucket {}", t.rehash_at);
            }
            assert!(gone.clone().all(|i| t.get(&key(i)).is_none()));
        };
        // Each insert moves a bucket along: old keys, and new ones, found throughout.
        let mut added = 512;
        t.insert(&key(added), entry(added));
        added += 1;
        assert!(t.is_rehashing());
        while t.is_rehashing() {
            t.insert(&key(added), entry(added));
            added += 1;
            check(&t, &(0..added), &(added..added + 10));
        }
        // Removals shrink it again, a bucket per removal.
        let mut removed = 0;
        while t.len() > 40 {
            assert_eq!(int_of(t.remove(&key(removed)).as_ref()), Some(removed));
            removed += 1;
            if t.is_rehashing() {
                check(&t, &(removed..added), &(0..removed));
            }
        }
        assert!(!t.rehash_some(usize::MAX));
        check(&t, &(removed..added), &(0..removed));
    }

    /// While a forked child lives, a table grows only when five times over full and
    /// doesn't shrink or rehash from the cron (Redis's "Don't rehash if redis has child
    /// process"); after it, the next write grows it.
    #[test]
    fn a_fork_child_holds_resizing_back() {
        let _sizes = SIZES.lock().unwrap_or_else(|e| e.into_inner());
        let mut t = KeyTable::default();
        for i in 0..4_096 {
            t.insert(format!("k{i}").as_bytes(), entry(i));
        }
        assert!(!t.rehash_some(usize::MAX));
        fork_child_started();
        for i in 4_096..4_100 {
            t.insert(format!("k{i}").as_bytes(), entry(i));
        }
        assert!(!t.is_rehashing() && t.allocation_size() == 4_096 * 8, "no growth at 1x");
        for i in 4_100..20_480 {
            t.insert(format!("k{i}").as_bytes(), entry(i));
        }
        assert!(!t.is_rehashing(), "nor below 5x");
        t.insert(b"k20480", entry(20_480));
        assert!(t.is_rehashing(), "at 5x it grows anyway");
        assert!(t.rehash_some(usize::MAX), "the cron leaves it");
        for i in 0..20_481 {
            t.remove(format!("k{i}").as_bytes());
        }
        // The growth waits for the child too (writes don't move it along).
        assert!(t.is_empty() && t.is_rehashing() && t.allocation_size() == (4_096 + 8_192) * 8, "paused");
        fork_child_ended();
        assert!(!t.rehash_some(usize::MAX));
        assert_eq!(t.allocation_size(), MIN_BUCKETS * 8, "shrunk once the child is gone");
        t.insert(b"a", entry(1));
        assert_eq!(int_of(t.get(b"a")), Some(1));
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
            KeySlot::Taken(mut e) => e.entry().value = entry(70).value,
            KeySlot::Free(_) => panic!("k7 is there"),
        }
        match t.slot(b"new") {
            KeySlot::Free(free) => free.fill(entry(5)),
            KeySlot::Taken(_) => panic!("new is not there"),
        }
        assert_eq!((int_of(t.get(b"k7")), int_of(t.get(b"new")), t.len()), (Some(70), Some(5), 10_002));
    }

    /// The list of keys with a TTL follows every way an expiry changes (insert, overwrite,
    /// `set_expire`, `Occupied::set_expire`, removal) through growth and shrinking: it
    /// holds exactly the keys with a TTL, each once, each node knowing its place.
    #[test]
    fn keys_with_a_ttl_are_listed_once_whatever_changes_them() {
        use std::collections::BTreeMap;
        let mut t = KeyTable::default();
        let mut model: BTreeMap<Vec<u8>, Option<i64>> = BTreeMap::new();
        let mut rng = crate::keyspace::Rng::new(7);
        for step in 0..40_000u64 {
            let key = format!("k{}", rng.below(if step < 20_000 { 3_000 } else { 300 })).into_bytes();
            let at = (rng.below(2) == 0).then_some(step as i64);
            match rng.below(5) {
                0 => {
                    t.insert(&key, Entry::new(Value::Str(StrValue::Int(1)), at, 0));
                    model.insert(key, at);
                }
                1 => {
                    let had = model.get(&key).copied();
                    assert_eq!(t.set_expire(&key, at), had);
                    if let Some(e) = model.get_mut(&key) {
                        *e = at;
                    }
                }
                2 => match t.slot(&key) {
                    KeySlot::Taken(mut found) => {
                        assert_eq!(found.set_expire(at), model[&key]);
                        model.insert(key, at);
                    }
                    KeySlot::Free(free) => {
                        free.fill(Entry::new(Value::Str(StrValue::Int(2)), at, 0));
                        model.insert(key, at);
                    }
                },
                _ => {
                    let removed = t.remove(&key).map(|e| e.expire_at_ms());
                    assert_eq!(removed, model.remove(&key));
                }
            }
            if step % 997 == 0 || step == 39_999 {
                let mut listed: Vec<(Vec<u8>, i64)> =
                    t.volatile_iter().map(|(k, e)| (k.to_vec(), e.expire_at_ms().unwrap())).collect();
                listed.sort();
                let want: Vec<(Vec<u8>, i64)> =
                    model.iter().filter_map(|(k, at)| at.map(|at| (k.clone(), at))).collect();
                assert_eq!(listed, want);
                for (i, node) in t.volatile.iter().enumerate() {
                    // SAFETY: listed nodes are live.
                    assert_eq!(unsafe { node.as_ref() }.entry.ttl_slot as usize, i);
                }
            }
        }
        assert_eq!(t.len(), model.len());
    }
}
