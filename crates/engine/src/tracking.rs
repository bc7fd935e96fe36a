//! Client-side caching (Redis 6+'s CLIENT TRACKING, tracking.c): the keys each tracking
//! client read, the prefixes broadcast clients follow, and the invalidation messages sent
//! when a key changes: a RESP3 push `invalidate [keys]`, or, redirected to a RESP2
//! connection subscribed to `__redis__:invalidate`, a Pub/Sub message there.
//!
//! Keys are tracked across databases, as in Redis. Nothing here costs anything while no
//! client tracks (`active`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use quince_resp::{Encoder, Protocol};

use crate::clients::ClientHandle;
use crate::reply::ReplySink;

pub const CHANNEL: &[u8] = b"__redis__:invalidate";

/// One client's tracking settings (CLIENT TRACKING's options).
#[derive(Debug, Default, Clone)]
pub struct ClientTracking {
    pub on: bool,
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
    pub noloop: bool,
    /// CLIENT CACHING yes (OPTIN) / no (OPTOUT) for the next command or transaction.
    pub caching: bool,
    pub broken_redirect: bool,
    /// The client id invalidations go to (0: this connection).
    pub redirect: u64,
    pub prefixes: BTreeSet<Vec<u8>>,
}

#[derive(Debug, Default)]
struct Bcast {
    clients: BTreeSet<u64>,
    /// Keys changed since the last broadcast, with the id of the client that changed each
    /// last (0: none, e.g. expiry), for NOLOOP.
    pending: BTreeMap<Vec<u8>, u64>,
}

#[derive(Debug, Default)]
pub struct Tracking {
    clients: AtomicUsize,
    /// Key -> ids of the clients that read it (default mode).
    table: Mutex<HashMap<Vec<u8>, BTreeSet<u64>>>,
    prefixes: Mutex<BTreeMap<Vec<u8>, Bcast>>,
}

/// An invalidation for the client running the current command: it follows that command's
/// reply (Redis's tracking_pending_keys).
pub type OwnPending = Vec<Option<Vec<u8>>>;

impl Tracking {
    /// Whether any client tracks (the only cost otherwise).
    #[inline]
    pub fn active(&self) -> bool {
        self.clients.load(Ordering::Relaxed) > 0
    }

    pub fn clients(&self) -> usize {
        self.clients.load(Ordering::Relaxed)
    }

    pub fn total_keys(&self) -> usize {
        self.table.lock().len()
    }

    pub fn total_items(&self) -> usize {
        self.table.lock().values().map(BTreeSet::len).sum()
    }

    pub fn total_prefixes(&self) -> usize {
        self.prefixes.lock().len()
    }

    /// Turns tracking on for a client (Redis's enableTracking): options replace the old
    /// ones; BCAST prefixes add to those it follows.
    pub fn enable(&self, handle: &ClientHandle, mut settings: ClientTracking, prefixes: &[&[u8]]) {
        let mut state = handle.tracking.lock();
        if !state.on {
            self.clients.fetch_add(1, Ordering::Relaxed);
        }
        settings.on = true;
        settings.caching = false;
        settings.prefixes = std::mem::take(&mut state.prefixes);
        if settings.bcast {
            let mut table = self.prefixes.lock();
            let wanted: Vec<&[u8]> = if prefixes.is_empty() { vec![&b""[..]] } else { prefixes.to_vec() };
            for p in wanted {
                table.entry(p.to_vec()).or_default().clients.insert(handle.id);
                settings.prefixes.insert(p.to_vec());
            }
        }
        *state = settings;
    }

    /// Turns tracking off (Redis's disableTracking); the keys it read are forgotten lazily.
    pub fn disable(&self, handle: &ClientHandle) {
        let mut state = handle.tracking.lock();
        if !state.on {
            return;
        }
        if state.bcast {
            let mut table = self.prefixes.lock();
            for p in &state.prefixes {
                if let Some(b) = table.get_mut(p) {
                    b.clients.remove(&handle.id);
                    if b.clients.is_empty() {
                        table.remove(p);
                    }
                }
            }
        }
        *state = ClientTracking::default();
        self.clients.fetch_sub(1, Ordering::Relaxed);
    }

    /// After a read-only command of a tracking client (default mode): remembers the keys
    /// it read, unless OPTIN without CACHING yes or OPTOUT with CACHING no.
    pub fn remember(&self, handle: &ClientHandle, keys: impl Iterator<Item = Vec<u8>>) {
        {
            let state = handle.tracking.lock();
            if !state.on || state.bcast || (state.optin && !state.caching) || (state.optout && state.caching) {
                return;
            }
        }
        let mut table = self.table.lock();
        for key in keys {
            table.entry(key).or_default().insert(handle.id);
        }
    }

    /// A key changed (Redis's trackingInvalidateKey): clients that read it are told, and
    /// it is queued for the broadcast clients whose prefix matches. `by`: the client that
    /// changed it (None: the server itself, e.g. expiry or eviction), what broadcast
    /// NOLOOP goes by; `current`: the client whose command is running (NOLOOP in default
    /// mode goes by it, and its own invalidation is queued in `own` to follow its reply).
    pub fn invalidate(
        &self,
        registry: &crate::clients::ClientRegistry,
        key: &[u8],
        by: Option<u64>,
        current: Option<u64>,
        own: &mut OwnPending,
        bcast: bool,
    ) {
        if bcast {
            let mut prefixes = self.prefixes.lock();
            for (p, b) in prefixes.iter_mut() {
                if key.starts_with(p) {
                    b.pending.insert(key.to_vec(), by.unwrap_or(0));
                }
            }
        }
        let Some(ids) = self.table.lock().remove(key) else { return };
        for id in ids {
            let Some(target) = registry.get(id) else { continue };
            let (on, bcast_mode, noloop) = {
                let s = target.tracking.lock();
                (s.on, s.bcast, s.noloop)
            };
            if !on || bcast_mode || (noloop && current == Some(id)) {
                continue;
            }
            if current == Some(id) {
                own.push(Some(key.to_vec()));
            } else {
                send(registry, &target, Keys::One(key));
            }
        }
    }

    /// FLUSHALL / FLUSHDB: every tracking client is told "everything" (a null), and the
    /// table is emptied (Redis's trackingInvalidateKeysOnFlush).
    pub fn invalidate_all(&self, registry: &crate::clients::ClientRegistry, by: Option<u64>, own: &mut OwnPending) {
        if !self.active() {
            self.table.lock().clear();
            return;
        }
        for target in registry.all() {
            if !target.tracking.lock().on {
                continue;
            }
            if by == Some(target.id) {
                own.push(None);
            } else {
                send(registry, &target, Keys::All);
            }
        }
        self.table.lock().clear();
    }

    /// Sends the keys queued for each prefix to its broadcast clients (Redis does it
    /// before returning to the event loop; here after each command that changed keys).
    pub fn broadcast(&self, registry: &crate::clients::ClientRegistry) {
        // (The clients of a prefix, the keys changed under it with who changed each.)
        type Batch = (Vec<u64>, BTreeMap<Vec<u8>, u64>);
        let batches: Vec<Batch> = {
            let mut prefixes = self.prefixes.lock();
            prefixes
                .values_mut()
                .filter(|b| !b.pending.is_empty())
                .map(|b| (b.clients.iter().copied().collect(), std::mem::take(&mut b.pending)))
                .collect()
        };
        for (clients, keys) in batches {
            for id in clients {
                let Some(target) = registry.get(id) else { continue };
                let noloop = target.tracking.lock().noloop;
                let list: Vec<&[u8]> =
                    keys.iter().filter(|(_, by)| !(noloop && **by == id)).map(|(k, _)| k.as_slice()).collect();
                if !list.is_empty() {
                    send(registry, &target, Keys::Many(&list));
                }
            }
        }
    }

    /// `tracking-table-max-keys`: forgets keys beyond the limit, telling their clients
    /// (Redis's trackingLimitUsedSlots; 0: no limit).
    pub fn limit(&self, registry: &crate::clients::ClientRegistry, max_keys: usize) {
        if max_keys == 0 {
            return;
        }
        loop {
            let key = {
                let table = self.table.lock();
                if table.len() <= max_keys {
                    return;
                }
                table.keys().next().cloned()
            };
            let Some(key) = key else { return };
            let mut own = Vec::new();
            self.invalidate(registry, &key, None, None, &mut own, false);
        }
    }
}

thread_local! {
    /// The client whose command is evicting keys on this thread, and its invalidations.
    static EVICTING_FOR: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
    static EARLY: std::cell::RefCell<OwnPending> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` (eviction before a command) noting the client it runs for; returns what `f`
/// returned and that client's own invalidations, to be written before its reply.
pub fn evicting_for<R>(client: u64, f: impl FnOnce() -> R) -> (R, OwnPending) {
    EVICTING_FOR.with(|c| c.set(Some(client)));
    let r = f();
    EVICTING_FOR.with(|c| c.set(None));
    (r, EARLY.with(|e| std::mem::take(&mut *e.borrow_mut())))
}

pub(crate) fn current_evicting() -> Option<u64> {
    EVICTING_FOR.with(std::cell::Cell::get)
}

pub(crate) fn add_early(own: OwnPending) {
    if !own.is_empty() && current_evicting().is_some() {
        EARLY.with(|e| e.borrow_mut().extend(own));
    }
}

/// What an invalidation names.
pub enum Keys<'a> {
    One(&'a [u8]),
    Many(&'a [&'a [u8]]),
    /// Every key (a flush): a null.
    All,
}

fn encode(out: &mut dyn ReplySink, keys: &Keys<'_>) {
    match keys {
        Keys::One(k) => {
            out.array(1);
            out.bulk(k);
        }
        Keys::Many(list) => {
            out.array(list.len());
            list.iter().for_each(|k| out.bulk(k));
        }
        Keys::All => out.null(),
    }
}

/// Writes the current client's own invalidations after its reply: into its output in
/// RESP3, or to the connection it redirects to.
pub fn write_own(
    out: &mut dyn ReplySink,
    handle: &Arc<ClientHandle>,
    registry: &crate::clients::ClientRegistry,
    pending: OwnPending,
) {
    let redirect = handle.tracking.lock().redirect;
    for key in &pending {
        let keys = match key {
            Some(k) => Keys::One(k),
            None => Keys::All,
        };
        if redirect != 0 {
            send(registry, handle, keys);
        } else if out.protocol() == Protocol::Resp3 {
            out.push(2);
            out.bulk(b"invalidate");
            encode(out, &keys);
        }
    }
}

/// Sends one invalidation to `client` or where it redirects (Redis's sendTrackingMessage).
pub fn send(registry: &crate::clients::ClientRegistry, client: &Arc<ClientHandle>, keys: Keys<'_>) {
    let redirect = client.tracking.lock().redirect;
    let mut target = client.clone();
    let mut redirected = false;
    if redirect != 0 {
        match registry.get(redirect) {
            Some(r) => {
                target = r;
                redirected = true;
            }
            None => {
                client.tracking.lock().broken_redirect = true;
                if client.resp.load(Ordering::Relaxed) == 3 {
                    let mut bytes = Vec::new();
                    let mut enc = Encoder::new(&mut bytes, Protocol::Resp3);
                    enc.push(2);
                    enc.bulk(b"tracking-redir-broken");
                    enc.integer(redirect as i64);
                    client.push_output(&bytes);
                }
                return;
            }
        }
    }
    let mut bytes = Vec::new();
    if target.resp.load(Ordering::Relaxed) == 3 {
        let mut enc = Encoder::new(&mut bytes, Protocol::Resp3);
        enc.push(2);
        enc.bulk(b"invalidate");
        encode(&mut enc, &keys);
    } else if redirected && target.has_flag(crate::clients::flag::PUBSUB) {
        let mut enc = Encoder::new(&mut bytes, Protocol::Resp2);
        enc.push(3);
        enc.bulk(b"message");
        enc.bulk(CHANNEL);
        encode(&mut enc, &keys);
    } else {
        return;
    }
    if !target.is_killed() {
        target.push_output(&bytes);
    }
}
