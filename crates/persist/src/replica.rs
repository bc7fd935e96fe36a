//! The replication stream as SYNC serves it: a snapshot of the dataset as an RDB bulk,
//! then every write's effects, in the order they happened, as RESP commands (with SELECT on
//! database changes and MULTI/EXEC around transactions and scripts), the same stream the
//! append-only file gets. Quince has no replica side yet; this is what Redis's test suite
//! reads through `attach_to_replication_stream`, and what a replica would consume.

use std::sync::Arc;

use parking_lot::Mutex;
use quince_engine::clients::ClientHandle;
use quince_engine::persistence::Effects;

/// A connection that asked for the stream.
struct Replica {
    handle: Arc<ClientHandle>,
    /// The database the stream's last SELECT chose (None: none sent yet).
    selected_db: Option<usize>,
}

/// The connections receiving the replication stream.
#[derive(Default)]
pub struct Replicas {
    list: Mutex<Vec<Replica>>,
    count: std::sync::atomic::AtomicUsize,
}

impl Replicas {
    /// Starts the stream for `handle`: the snapshot first, then every later write. The
    /// caller holds the gate exclusively, so nothing is written between the two.
    pub fn attach(&self, handle: Arc<ClientHandle>, snapshot: &[u8]) {
        let mut payload = format!("${}\r\n", snapshot.len()).into_bytes();
        payload.extend_from_slice(snapshot);
        handle.set_flag(quince_engine::clients::flag::REPLICA, true);
        // The replica limit bounds the stream queued after the snapshot (bytes still
        // unsent of it are over-counted by at most its size, never a healthy replica cut).
        handle.set_limit_exempt_bytes(payload.len());
        handle.push_output(&payload);
        let mut list = self.list.lock();
        list.push(Replica { handle, selected_db: None });
        self.count.store(list.len(), std::sync::atomic::Ordering::SeqCst);
    }

    /// Closes every replica's connection (they must sync again).
    pub fn disconnect_all(&self) {
        let mut list = self.list.lock();
        for replica in list.drain(..) {
            replica.handle.kill();
        }
        self.count.store(0, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn is_empty(&self) -> bool {
        self.count.load(std::sync::atomic::Ordering::Relaxed) == 0
    }

    pub fn len(&self) -> usize {
        self.count.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sends one write's effects to every replica, dropping those whose connection closed
    /// (only this list still holds their handle).
    pub fn feed(&self, effects: &Effects) {
        let mut list = self.list.lock();
        list.retain(|r| Arc::strong_count(&r.handle) > 1 && !r.handle.is_killed());
        self.count.store(list.len(), std::sync::atomic::Ordering::SeqCst);
        for replica in list.iter_mut() {
            let mut out = Vec::new();
            crate::aof::writer::encode_effects_for_replicas(effects, &mut replica.selected_db, &mut out);
            replica.handle.push_output(&out);
        }
    }
}
