//! Freeing big values off the command path, as Redis's lazyfree: UNLINK, FLUSHDB/FLUSHALL
//! ASYNC, `lazyfree-lazy-user-del` / `lazyfree-lazy-user-flush`, and for values removed by
//! expiry, eviction or a server-side deletion (an overwrite, a STORE's old destination)
//! `lazyfree-lazy-expire`, `-eviction` and `-server-del`, hand what they removed to
//! one background thread ("quince-lazyfree", started on first use, ended with the engine)
//! when freeing it takes more than LAZYFREE_THRESHOLD allocations; smaller values are
//! freed at once, where handing them over would cost more. INFO's
//! `lazyfree_pending_objects` and `lazyfreed_objects` count them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use parking_lot::Mutex;

use crate::keyspace::Value;

/// Redis's LAZYFREE_THRESHOLD: values that take more allocations than this to free go to
/// the background thread.
pub const LAZYFREE_THRESHOLD: usize = 64;

/// Something to drop in the background and how many objects it counts for.
type Job = (Box<dyn Send>, u64);

/// A handle on the engine's background freeing; clones share it (each database table
/// keeps one for the values it removes itself, see `Db::set_lazy_free`).
#[derive(Clone, Default)]
pub struct LazyFree {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    sender: Mutex<Option<mpsc::Sender<Job>>>,
    pending: Arc<AtomicU64>,
    freed: Arc<AtomicU64>,
}

impl std::fmt::Debug for LazyFree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyFree").field("pending", &self.pending()).field("freed", &self.freed()).finish()
    }
}

/// Causes of removal with their own `lazyfree-lazy-*` switch (`Db::set_lazy_free`'s mask).
pub const LAZY_EXPIRE: u8 = 1;
pub const LAZY_EVICTION: u8 = 2;
pub const LAZY_SERVER_DEL: u8 = 4;

/// About how many allocations freeing `value` takes (Redis's lazyfreeGetFreeEffort, for
/// quince's representations): one for compact encodings, one per element otherwise, a
/// stream's nodes plus its consumer groups' pending entries.
pub fn free_effort(value: &Value) -> usize {
    match value {
        Value::Str(_) => 1,
        Value::List(l) => l.len(),
        Value::Hash(h) if h.encoding_name() == "hashtable" => h.len(),
        Value::Set(s) if s.encoding_name() == "hashtable" => s.len(),
        Value::ZSet(z) if z.encoding_name() == "skiplist" => z.len(),
        Value::Hash(_) | Value::Set(_) | Value::ZSet(_) => 1,
        Value::Stream(s) => s.free_effort(),
    }
}

impl LazyFree {
    /// Frees `value`: in the background if it is big, else now. True if deferred.
    pub fn free_value(&self, value: Value) -> bool {
        if free_effort(&value) <= LAZYFREE_THRESHOLD {
            return false;
        }
        self.defer(Box::new(value), 1);
        true
    }

    /// Frees `what` (a whole database table) in the background, counted as `objects`.
    pub fn free_all(&self, what: Box<dyn Send>, objects: u64) {
        self.defer(what, objects);
    }

    fn defer(&self, what: Box<dyn Send>, objects: u64) {
        let shared = &*self.shared;
        shared.pending.fetch_add(objects, Ordering::Relaxed);
        let mut sender = shared.sender.lock();
        if sender.is_none() {
            let (tx, rx) = mpsc::channel::<Job>();
            let (pending, freed) = (shared.pending.clone(), shared.freed.clone());
            let spawned = std::thread::Builder::new().name("quince-lazyfree".into()).spawn(move || {
                for (what, objects) in rx {
                    drop(what);
                    pending.fetch_sub(objects, Ordering::Relaxed);
                    freed.fetch_add(objects, Ordering::Relaxed);
                }
            });
            if spawned.is_ok() {
                *sender = Some(tx);
            }
        }
        let job = (what, objects);
        let unsent = match sender.as_ref() {
            Some(tx) => tx.send(job).err().map(|e| e.0),
            None => Some(job),
        };
        // No thread (it could not start): free here, still counted.
        if let Some((what, objects)) = unsent {
            drop(what);
            shared.pending.fetch_sub(objects, Ordering::Relaxed);
            shared.freed.fetch_add(objects, Ordering::Relaxed);
        }
    }

    /// Objects handed over and not yet freed (`lazyfree_pending_objects`).
    pub fn pending(&self) -> u64 {
        self.shared.pending.load(Ordering::Relaxed)
    }

    /// Objects freed in the background since start or CONFIG RESETSTAT (`lazyfreed_objects`).
    pub fn freed(&self) -> u64 {
        self.shared.freed.load(Ordering::Relaxed)
    }

    pub fn reset_stats(&self) {
        self.shared.freed.store(0, Ordering::Relaxed);
    }
}
