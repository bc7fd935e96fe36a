//! The registry of connected clients, shared by all worker threads: what CLIENT LIST/INFO
//! show, how CLIENT KILL reaches a connection owned by another thread, and where MONITOR
//! output for another thread's connection is queued.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

/// Where a connection comes from, as the server knows it.
#[derive(Debug, Clone, Default)]
pub struct ConnInfo {
    /// `ip:port` of the peer.
    pub addr: String,
    /// `ip:port` of our side.
    pub laddr: String,
    pub fd: i32,
}

/// Client flags shown by CLIENT LIST (a subset of Redis's).
pub mod flag {
    pub const MONITOR: u32 = 1 << 0;
    pub const PUBSUB: u32 = 1 << 1;
    pub const MULTI: u32 = 1 << 2;
    pub const BLOCKED: u32 = 1 << 3;
    pub const CLOSE_AFTER_REPLY: u32 = 1 << 4;
    pub const NO_EVICT: u32 = 1 << 5;
    /// Connected through the `unixsocket` listener.
    pub const UNIX_SOCKET: u32 = 1 << 6;
    /// Receives the replication stream (SYNC): the `replica` output-limit class.
    pub const REPLICA: u32 = 1 << 7;
    /// The link to our master (a replica applying the master's stream).
    pub const MASTER: u32 = 1 << 8;
}

/// One class of `client-output-buffer-limit <class> <hard> <soft> <soft-seconds>`
/// (bytes; 0: no limit).
#[derive(Debug, Default)]
pub struct OutputLimit {
    pub hard_bytes: AtomicUsize,
    pub soft_bytes: AtomicUsize,
    pub soft_seconds: AtomicI64,
}

impl OutputLimit {
    pub(crate) fn set(&self, hard: usize, soft: usize, seconds: i64) {
        self.hard_bytes.store(hard, Ordering::Relaxed);
        self.soft_bytes.store(soft, Ordering::Relaxed);
        self.soft_seconds.store(seconds, Ordering::Relaxed);
    }

    /// Redis's checkClientOutputBufferLimits for a client with `pending` bytes of output:
    /// at or over the hard limit, or over the soft one for longer than its seconds (the
    /// time it went over is kept on the client).
    pub fn exceeded(&self, client: &ClientHandle, pending: usize, now_ms: i64) -> bool {
        let hard = self.hard_bytes.load(Ordering::Relaxed);
        let soft = self.soft_bytes.load(Ordering::Relaxed);
        if hard > 0 && pending >= hard {
            return true;
        }
        if soft > 0 && pending >= soft {
            let since = client.soft_limit_since_ms.load(Ordering::Relaxed);
            if since == 0 {
                client.soft_limit_since_ms.store(now_ms, Ordering::Relaxed);
                return false;
            }
            let secs = self.soft_seconds.load(Ordering::Relaxed);
            return (now_ms - since) / 1000 > secs;
        }
        client.soft_limit_since_ms.store(0, Ordering::Relaxed);
        false
    }
}

/// The `normal` and `replica` classes of `client-output-buffer-limit` (the `pubsub` one
/// lives with Pub/Sub, which checks it as it queues each message).
#[derive(Debug, Default)]
pub struct OutputLimits {
    pub normal: OutputLimit,
    pub replica: OutputLimit,
}

/// The part of a client other threads may read or act on.
pub struct ClientHandle {
    pub id: u64,
    pub conn: ConnInfo,
    pub created_ms: i64,
    pub name: Mutex<Option<Vec<u8>>>,
    pub db: AtomicUsize,
    pub resp: AtomicU8,
    pub last_interaction_ms: AtomicI64,
    /// Table id of the last command run (usize::MAX: none yet).
    pub last_command: AtomicUsize,
    /// Unprocessed query bytes, including the command being run (CLIENT LIST `qbuf`).
    pub qbuf: AtomicUsize,
    pub qbuf_free: AtomicUsize,
    /// Pending output bytes (CLIENT LIST `omem`).
    pub output_bytes: AtomicUsize,
    /// Bytes the connection's output buffers hold allocated (what its output costs in
    /// memory, beyond `output_bytes` still to send).
    pub output_alloc: AtomicUsize,
    /// Commands queued since MULTI, -1 outside a transaction (CLIENT LIST `multi`).
    pub multi_count: AtomicI64,
    /// Bytes the queued commands and the watched keys take (CLIENT LIST `multi-mem`).
    pub multi_bytes: AtomicUsize,
    pub watched_bytes: AtomicUsize,
    pub flags: AtomicU32,
    /// Set by CLIENT KILL; the owning worker closes the connection when it sees it.
    pub killed: AtomicBool,
    /// The connection is gone (its server unregistered it).
    closed: AtomicBool,
    /// Output queued by other threads (MONITOR lines), written by the owning worker.
    pushed: Mutex<Vec<u8>>,
    /// The wait this client is blocked in (for CLIENT UNBLOCK from other clients).
    pub blocked_on: Mutex<Option<crate::blocking::WaiterRef>>,
    waker: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
    /// Channels, patterns and shard channels this client listens to.
    pub pubsub: Mutex<crate::pubsub::Subscriptions>,
    /// When pending output first passed the soft output limit (0: it is below).
    pub soft_limit_since_ms: AtomicI64,
    /// See `limit_exempt_bytes`.
    limit_exempt: AtomicUsize,
    /// The user the connection runs as (CLIENT LIST `user`, CLIENT KILL USER, closing the
    /// connections of a deleted user). None: not set yet (the default user).
    pub user: Mutex<Option<Arc<crate::acl::User>>>,
    /// CLIENT TRACKING's settings.
    pub tracking: Mutex<crate::tracking::ClientTracking>,
}

impl std::fmt::Debug for ClientHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientHandle").field("id", &self.id).field("conn", &self.conn).finish_non_exhaustive()
    }
}

impl ClientHandle {
    pub fn new(id: u64, conn: ConnInfo, now_ms: i64) -> Self {
        Self {
            id,
            conn,
            created_ms: now_ms,
            name: Mutex::new(None),
            db: AtomicUsize::new(0),
            resp: AtomicU8::new(2),
            last_interaction_ms: AtomicI64::new(now_ms),
            last_command: AtomicUsize::new(usize::MAX),
            qbuf: AtomicUsize::new(0),
            qbuf_free: AtomicUsize::new(0),
            output_bytes: AtomicUsize::new(0),
            output_alloc: AtomicUsize::new(0),
            multi_count: AtomicI64::new(-1),
            multi_bytes: AtomicUsize::new(0),
            watched_bytes: AtomicUsize::new(0),
            flags: AtomicU32::new(0),
            killed: AtomicBool::new(false),
            user: Mutex::new(None),
            tracking: Mutex::new(crate::tracking::ClientTracking::default()),
            closed: AtomicBool::new(false),
            pushed: Mutex::new(Vec::new()),
            blocked_on: Mutex::new(None),
            waker: Mutex::new(None),
            pubsub: Mutex::new(crate::pubsub::Subscriptions::default()),
            soft_limit_since_ms: AtomicI64::new(0),
            limit_exempt: AtomicUsize::new(0),
        }
    }

    pub fn has_flag(&self, f: u32) -> bool {
        self.flags.load(Ordering::Relaxed) & f != 0
    }

    pub fn set_flag(&self, f: u32, on: bool) {
        if on {
            self.flags.fetch_or(f, Ordering::Relaxed);
        } else {
            self.flags.fetch_and(!f, Ordering::Relaxed);
        }
    }

    /// Installs how to wake the worker that owns this connection.
    pub fn set_waker(&self, wake: Box<dyn Fn() + Send + Sync>) {
        *self.waker.lock() = Some(wake);
    }

    pub fn wake(&self) {
        if let Some(wake) = self.waker.lock().as_ref() {
            wake();
        }
    }

    /// Asks the owning worker to close the connection.
    pub fn kill(&self) {
        self.killed.store(true, Ordering::SeqCst);
        self.wake();
    }

    /// Output not counted against the client's output limit: a replica's initial snapshot,
    /// which Redis sends from a file rather than its output buffer.
    pub fn limit_exempt_bytes(&self) -> usize {
        self.limit_exempt.load(Ordering::Relaxed)
    }

    pub fn set_limit_exempt_bytes(&self, bytes: usize) {
        self.limit_exempt.store(bytes, Ordering::Relaxed);
    }

    /// The connection is gone, or asked to close: nothing more reaches its peer.
    pub fn is_gone(&self) -> bool {
        self.closed.load(Ordering::Relaxed) || self.is_killed()
    }

    pub fn mark_closed(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    pub fn is_killed(&self) -> bool {
        self.killed.load(Ordering::Relaxed)
    }

    /// Queues bytes for the connection (from any thread) and wakes its worker.
    pub fn push_output(&self, bytes: &[u8]) {
        self.pushed.lock().extend_from_slice(bytes);
        self.wake();
    }

    /// Output not yet written to the socket: the connection's buffer plus what other
    /// threads queued (what `client-output-buffer-limit` bounds).
    pub fn pending_output(&self) -> usize {
        self.output_bytes.load(Ordering::Relaxed) + self.pushed.lock().len()
    }

    /// Memory the client's pending output holds: its buffers' allocation plus what other
    /// threads queued (INFO's `mem_clients_slaves`, what `maxmemory` leaves out for replicas).
    pub fn output_memory(&self) -> usize {
        self.output_alloc.load(Ordering::Relaxed).max(self.output_bytes.load(Ordering::Relaxed))
            + self.pushed.lock().capacity()
    }

    /// Takes the queued bytes (owning worker only).
    pub fn take_pushed(&self) -> Vec<u8> {
        std::mem::take(&mut *self.pushed.lock())
    }

    /// The name of the user the connection runs as.
    pub fn user_name(&self) -> String {
        self.user.lock().as_ref().map_or_else(|| "default".to_string(), |u| u.name_lossy())
    }

    pub fn name(&self) -> Option<Vec<u8>> {
        self.name.lock().clone()
    }
}

/// All registered clients by id (ascending, as CLIENT LIST shows them).
#[derive(Debug, Default)]
pub struct ClientRegistry {
    clients: Mutex<BTreeMap<u64, Arc<ClientHandle>>>,
    monitors: Mutex<Vec<Arc<ClientHandle>>>,
    has_monitors: AtomicBool,
}

impl ClientRegistry {
    pub fn register(&self, handle: Arc<ClientHandle>) {
        self.clients.lock().insert(handle.id, handle);
    }

    pub fn unregister(&self, id: u64) {
        self.clients.lock().remove(&id);
        let mut monitors = self.monitors.lock();
        monitors.retain(|m| m.id != id);
        self.has_monitors.store(!monitors.is_empty(), Ordering::Relaxed);
    }

    pub fn all(&self) -> Vec<Arc<ClientHandle>> {
        self.clients.lock().values().cloned().collect()
    }

    pub fn get(&self, id: u64) -> Option<Arc<ClientHandle>> {
        self.clients.lock().get(&id).cloned()
    }

    pub fn len(&self) -> usize {
        self.clients.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn add_monitor(&self, handle: Arc<ClientHandle>) {
        let mut monitors = self.monitors.lock();
        if !monitors.iter().any(|m| m.id == handle.id) {
            monitors.push(handle);
        }
        self.has_monitors.store(true, Ordering::Relaxed);
    }

    pub fn remove_monitor(&self, id: u64) {
        let mut monitors = self.monitors.lock();
        monitors.retain(|m| m.id != id);
        self.has_monitors.store(!monitors.is_empty(), Ordering::Relaxed);
    }

    /// Cheap check for the command path: is anyone monitoring?
    pub fn has_monitors(&self) -> bool {
        self.has_monitors.load(Ordering::Relaxed)
    }

    pub fn monitors(&self) -> Vec<Arc<ClientHandle>> {
        self.monitors.lock().clone()
    }
}
