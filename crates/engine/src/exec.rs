//! Executing one command: lookup, arity and auth checks driven by the spec, locking the
//! shards of the command's keys in ascending order, running the handler.

use parking_lot::MutexGuard;
use quince_resp::Protocol;
use smallvec::SmallVec;

use std::sync::Arc;

use crate::blocking::{ServeState, Unblock, Waiter, WaiterRef};
use crate::clients::ClientHandle;
use crate::command::{CommandSpec, Resolved};
use crate::error::{truncate_c, CmdError};
use crate::keyspace::{AccessMode, Db, Key, Shard};
use crate::persistence::Effects;
use crate::reply::ReplySink;
use crate::Engine;
use std::sync::atomic::Ordering;

/// Per-connection state the engine needs (the server keeps sockets and buffers itself).
#[derive(Debug, Clone)]
pub struct Client {
    pub id: u64,
    pub db: usize,
    pub protocol: Protocol,
    /// AUTH or HELLO AUTH succeeded, or the default user needed none when the connection
    /// started (see `Acl::auth_required`).
    pub authenticated: bool,
    /// The user the connection runs as.
    pub user: Arc<crate::acl::User>,
    /// Set by QUIT (and protocol errors): reply, then close the connection.
    pub close_after_reply: bool,
    /// CLIENT REPLY state.
    pub reply_mode: ReplyMode,
    /// What other threads see of this client (CLIENT LIST, KILL, MONITOR).
    pub handle: Arc<ClientHandle>,
    /// Set when the last command blocked (BLPOP...): no further command runs until the
    /// wait ends and `Engine::blocked_reply` hands over its reply.
    pub blocked: Option<WaiterRef>,
    /// Commands queued since MULTI (None: not in a transaction).
    pub multi: Option<Vec<Vec<Vec<u8>>>>,
    /// A command failed to queue: EXEC will abort (EXECABORT).
    pub multi_error: bool,
    /// EXEC is running this client's queue (blocking commands don't block).
    pub in_exec: bool,
    /// WATCHed keys.
    pub watched: Vec<WatchedKey>,
    /// Set by any change to a watched key: EXEC then fails.
    pub watch_dirty: Arc<std::sync::atomic::AtomicBool>,
    /// Keys the running transaction made ready; their waiters are served after EXEC.
    deferred_ready: Vec<(usize, Key)>,
    /// A script's redis.call is running (MONITOR shows such commands as `[db lua]`).
    pub in_script: bool,
    /// The time a running script's commands see: its start (Redis's script time snapshot).
    pub(crate) script_now_ms: i64,
    /// The script command about to run holds the shards of its declared keys under the
    /// shared gate (`Engine::script_runs_alongside`), not the gate exclusively.
    pub(crate) script_alongside: bool,
    /// A script running alongside others reached beyond its declared keys before writing
    /// anything: it stopped, and runs again with the gate held exclusively.
    pub(crate) script_escalated: bool,
    /// SCRIPT DEBUG SYNC: the next EVAL runs under the Lua debugger.
    pub script_debug: bool,
    /// Cluster mode: ASKING was the previous command (one command's permission to use a
    /// slot this node is importing).
    pub cluster_asking: bool,
    /// Cluster mode: READONLY (a replica serves this client's reads of its master's slots).
    pub cluster_readonly: bool,
    /// The slot of the running script's declared keys, or of the first key it touched
    /// (its later commands must keep to it unless it may cross slots: Redis's
    /// `original_c->slot`).
    pub(crate) script_slot: Option<u16>,
    /// The running script may reach keys of several slots (no shebang, or
    /// `allow-cross-slot-keys`).
    pub(crate) script_cross_slot: bool,
    /// Where the running script's writes are propagated (`persistence::targets`, set by
    /// redis.set_repl).
    pub script_repl: u8,

    /// The AOF loader or a master: its commands are logged effects to obey, not requests
    /// to check (Redis's mustObeyClient; e.g. XADD's `MAXLEN = n LIMIT m` is accepted, and
    /// keys do not expire under it: the log's DELs do that). See `Ctx::obeying`.
    pub must_obey: bool,
    /// Where the replication stream ended after this client's last write (Redis's woff):
    /// what WAIT waits for replicas to acknowledge.
    pub woff: u64,
    /// Write effects recorded for the persistence layer, until handed over: after each
    /// command, or after the whole transaction or script.
    effects: Effects,
    /// Invalidations for this client's own reads its command changed: sent after the
    /// reply of the command (or of EXEC, or of the script) the client sent.
    pub(crate) tracking_own: crate::tracking::OwnPending,
    /// The running script called a read-only command: its declared keys are tracked.
    script_read: bool,
    /// Some while a server runs a batch of this client's requests back to back (see
    /// `begin_batch`): the time the previous command of the batch ended, which the next
    /// one takes as its start.
    batch_clock_us: Option<i64>,
    /// Counters of the commands this client ran on the fast path (`fast_read`).
    pub(crate) local_stats: crate::observe::LocalStatsSlot,
}

/// A command a handler recorded as its effect: database, arguments, for replicas only.
type LoggedCommand = (usize, Vec<Vec<u8>>, bool);

/// A key a client WATCHes.
#[derive(Debug, Clone)]
pub struct WatchedKey {
    pub db: usize,
    pub key: Key,
    /// The key was already logically expired when watched (its later deletion is no change).
    pub stale: bool,
    /// The key held a live value when watched: if it is gone at EXEC without anyone
    /// flagging the watchers, it expired (actively or lazily), which Redis counts as a change.
    pub existed: bool,
}

/// CLIENT REPLY ON|OFF|SKIP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyMode {
    On,
    Off,
    /// Suppress the reply of the next command only.
    SkipNext,
}

impl Client {
    pub fn new(handle: Arc<ClientHandle>, user: Arc<crate::acl::User>, authenticated: bool) -> Self {
        *handle.user.lock() = Some(user.clone());
        Self {
            user,
            id: handle.id,
            db: 0,
            protocol: Protocol::Resp2,
            authenticated,
            close_after_reply: false,
            reply_mode: ReplyMode::On,
            handle,
            blocked: None,
            multi: None,
            multi_error: false,
            in_exec: false,
            watched: Vec::new(),
            watch_dirty: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            deferred_ready: Vec::new(),
            in_script: false,
            script_now_ms: 0,
            script_alongside: false,
            script_escalated: false,
            script_debug: false,
            cluster_asking: false,
            cluster_readonly: false,
            script_slot: None,
            script_cross_slot: true,
            script_repl: crate::persistence::targets::ALL,

            must_obey: false,
            woff: 0,
            effects: Effects::default(),
            tracking_own: Vec::new(),
            script_read: false,
            batch_clock_us: None,
            local_stats: Default::default(),
        }
    }

    /// The requests executed until `end_batch` arrived together and run back to back: each
    /// command's start time is the previous one's end (one clock read per command instead
    /// of two). Only for requests executed without waiting in between.
    pub fn begin_batch(&mut self) {
        self.batch_clock_us = Some(0);
    }

    pub fn end_batch(&mut self) {
        self.batch_clock_us = None;
    }

    /// In a batch, the time the previous command ended (the next one's start).
    pub(crate) fn batch_start_us(&self) -> Option<i64> {
        self.batch_clock_us.filter(|&t| t > 0)
    }

    /// A command of the batch ended at `end_us`.
    pub(crate) fn batch_ended(&mut self, end_us: i64) {
        if self.batch_clock_us.is_some() {
            self.batch_clock_us = Some(end_us);
        }
    }

    /// Within a batch, the next command reads the clock again (time passed in between).
    pub(crate) fn restart_batch_clock(&mut self) {
        if self.batch_clock_us.is_some() {
            self.batch_clock_us = Some(0);
        }
    }

    pub fn select(&mut self, db: usize) {
        self.db = db;
        self.handle.db.store(db, Ordering::Relaxed);
    }

    pub fn name(&self) -> Option<Vec<u8>> {
        self.handle.name()
    }

    pub fn set_name(&self, name: Option<Vec<u8>>) {
        *self.handle.name.lock() = name;
    }
}

/// A shard a command works on: locked by the command itself, or lent to it by a
/// transaction that holds the shards of all its commands for its whole run.
pub(crate) enum ShardAccess<'a> {
    Locked(MutexGuard<'a, Shard>),
    Lent(&'a mut Shard),
}

impl std::ops::Deref for ShardAccess<'_> {
    type Target = Shard;
    fn deref(&self) -> &Shard {
        match self {
            ShardAccess::Locked(guard) => guard,
            ShardAccess::Lent(shard) => shard,
        }
    }
}

impl std::ops::DerefMut for ShardAccess<'_> {
    fn deref_mut(&mut self) -> &mut Shard {
        match self {
            ShardAccess::Locked(guard) => guard,
            ShardAccess::Lent(shard) => shard,
        }
    }
}

/// The shards a transaction or a script holds while its commands run.
pub(crate) type HeldShards<'e> = [(usize, ShardAccess<'e>)];

/// A command's locked shards (`Ctx::locked`).
pub(crate) type LockedShards<'a> = SmallVec<[(usize, ShardAccess<'a>); 2]>;

/// What a handler sees: the engine, the calling client, the time the command started,
/// and the shards of its declared keys, already locked.
pub struct Ctx<'a> {
    pub engine: &'a Engine,
    pub client: &'a mut Client,
    pub spec: &'a CommandSpec,
    /// One timestamp per command, so a command sees a consistent time (as Redis caches it).
    pub now_ms: i64,
    /// How key lookups record access (LRU clock or LFU counter), fixed for the command.
    pub access_mode: AccessMode,
    pub(crate) locked: LockedShards<'a>,
    /// The shards are lent by a transaction holding them (see `lock_extra`).
    lent: bool,
    /// Set while re-running a blocked client's command to serve it.
    serve: Option<ServeState>,
    /// Changes counted through `dirty` by this command.
    local_dirty: std::cell::Cell<u64>,
    /// Writes other clients made to shards `lock_extra` took during the command, so they
    /// don't count as this command's in `table_dirty`.
    foreign_dirty: u64,
    /// `notify-keyspace-events` when the command started (0: notifications off).
    notify_flags: i64,
    /// A persistence layer records write effects (see `propagate_as`).
    propagating: bool,
    /// What to log instead of the command itself: (database, command) in order.
    propagation: Option<Vec<LoggedCommand>>,
    /// Log the command even though it counted no change.
    force_propagation: bool,
    /// Some locked table has `expiry_suspended` (an obeying client) or `expiry_deferred` (a
    /// read under CLIENT PAUSE) set: both are cleared when the command lets go of its tables.
    expiry_suspended: bool,
    /// Ready keys found by a command that locked shards itself (SWAPDB, FLUSHDB...).
    later_ready: Vec<(usize, Key)>,
    /// Argument positions of write keys the command left unchanged (SMOVE's destination
    /// that already held the member): WATCH is not flagged for them, as in Redis, which
    /// signals only the keys it modified.
    unmodified_keys: SmallVec<[usize; 1]>,
}

impl<'a> Ctx<'a> {
    /// The keys the client's commands made ready for blocked clients (a script's), served
    /// once this command's locks are let go.
    pub(crate) fn defer_client_ready(&mut self) {
        let ready = std::mem::take(&mut self.client.deferred_ready);
        self.later_ready.extend(ready);
    }

    /// Tells WATCH that the write key at argument `position` was not changed.
    pub fn key_unmodified(&mut self, position: usize) {
        self.unmodified_keys.push(position);
    }

    /// The selected database's part of the shard owning `key`.
    ///
    /// INVARIANT: `key` is one of the command's declared keys, so its shard is locked.
    pub fn db(&mut self, key: &[u8]) -> &mut Db {
        let db = self.client.db;
        self.db_at(key, db)
    }

    /// The database `db` (not the selected one) within the shard owning `key` (MOVE, COPY).
    ///
    /// INVARIANT: as for `db`.
    pub fn db_at(&mut self, key: &[u8], db: usize) -> &mut Db {
        let suspend = self.obeying();
        self.expiry_suspended |= suspend;
        // PERF: with one shard locked (most commands), a declared key can only be in it:
        // no second slot hash per lookup.
        let guard = if self.locked.len() == 1 {
            debug_assert_eq!(self.locked[0].0, self.engine.keyspace.shard_of(key), "undeclared key");
            &mut self.locked[0].1
        } else {
            let shard = self.engine.keyspace.shard_of(key);
            let spec_name = &self.spec.name;
            let (_, guard) = self
                .locked
                .iter_mut()
                .find(|(s, _)| *s == shard)
                .unwrap_or_else(|| panic!("command {spec_name} touched an undeclared key"));
            guard
        };
        let db = &mut guard.dbs[db];
        db.access_mode = self.access_mode;
        db.set_lazy_free(self.engine.hot.lazy_free_mask.load(Ordering::Relaxed), &self.engine.lazyfree);
        let log = if self.propagating { crate::keyspace::EVENT_EXPIRED_LOG } else { 0 };
        // Client-side caching hears of keys found expired.
        let tracked = if self.engine.tracking.active() { crate::keyspace::EVENT_EXPIRED } else { 0 };
        db.set_collect_events(db_event_mask(self.notify_flags) | log | tracked);
        db.expiry_suspended = suspend;
        // While a pause keeps the dataset still, read commands leave expired keys in place
        // (writes are held by the pause, or run inside a transaction that started before).
        // On a replica only the master's stream deletes keys (Redis's expireIfNeeded); a
        // write on a writable replica deletes them locally (EXPIRE_FORCE_DELETE_EXPIRED),
        // and the TTLs its clients set are tracked for the replica to expire itself.
        let write = self.spec.has_flag(crate::command::flags::WRITE);
        let replica = self.engine.hot.replica_keeps_expired.load(Ordering::Relaxed);
        let defer = !suspend && !write && (self.engine.pause_in_force_at(self.now_ms) || replica);
        self.expiry_suspended |= defer || (replica && !suspend);
        db.expiry_deferred = defer;
        db.track_local_ttls = replica && !suspend && write;
        db
    }

    /// The client's commands are logged effects to apply as they are (the AOF loader, a
    /// master): keys do not expire under them and no time counts as already past (Redis's
    /// mustObeyClient, and keyIsExpired / checkAlreadyExpired while loading).
    pub fn obeying(&self) -> bool {
        self.client.must_obey || self.engine.is_loading()
    }

    /// Whether this command's write effects are being recorded (for the append-only file).
    /// Commands that rewrite their effect check it first to skip the work otherwise.
    pub fn propagating(&self) -> bool {
        self.propagating
    }

    /// Records `args` as (part of) this command's effect, in place of the command itself:
    /// what a replay must run to reach the same state deterministically (Redis's
    /// rewriteClientCommandVector / alsoPropagate). Several calls record several commands,
    /// in order; they apply to the selected database.
    pub fn propagate_as<A: AsRef<[u8]>>(&mut self, args: &[A]) {
        let db = self.client.db;
        self.propagate_in(db, args);
    }

    /// As `propagate_as`, for a command applying to database `db`.
    pub fn propagate_in<A: AsRef<[u8]>>(&mut self, db: usize, args: &[A]) {
        if self.propagating {
            let command = args.iter().map(|a| a.as_ref().to_vec()).collect();
            self.propagation.get_or_insert_with(Vec::new).push((db, command, false));
        }
    }

    /// Records `args` for the replication stream only, not the append-only file (PUBLISH,
    /// as Redis's forceCommandPropagation(c, PROPAGATE_REPL)).
    pub fn propagate_to_replicas<A: AsRef<[u8]>>(&mut self, args: &[A]) {
        if self.propagating {
            let db = self.client.db;
            let command = args.iter().map(|a| a.as_ref().to_vec()).collect();
            self.propagation.get_or_insert_with(Vec::new).push((db, command, true));
        }
    }

    /// Records that this command's write has no effect to log (its effects were recorded
    /// otherwise), unless `propagate_as` is called.
    pub fn propagate_nothing(&mut self) {
        if self.propagating {
            self.propagation.get_or_insert_with(Vec::new);
        }
    }

    /// Logs the command even if it counted no change (FLUSHALL on an empty server, as Redis
    /// always propagates it).
    pub fn force_propagation(&mut self) {
        self.force_propagation = true;
    }

    /// Moves this command's effects into the client's record: the DELs of keys it found
    /// expired, then its own effect if it wrote anything.
    fn record_effects(&mut self, args: &[&[u8]], wrote: bool) {
        if !self.propagating {
            return;
        }
        let effects = &mut self.client.effects;
        for (_, guard) in self.locked.iter_mut() {
            for (index, db) in guard.dbs.iter_mut().enumerate() {
                if db.has_expired_log() {
                    let del = self.engine.expired_deletion_command();
                    for key in db.take_expired_log() {
                        effects.push(index, &[del, &key[..]]);
                    }
                }
            }
        }
        // Redis 7.0's propagatePendingCommands wraps whatever one command propagated in
        // MULTI/EXEC when it is more than one op (a lazily expired key's DEL and the write,
        // SPOP's SREMs...), except for commands that touch arbitrary keys (RANDOMKEY, SCAN).
        // (Assigned, not only set: a command that propagated nothing, SELECT say, leaves
        // its flag behind for the next one.)
        effects.atomic = self.client.in_exec || self.client.in_script || !touches_arbitrary_keys(args[0]);
        let script = self.spec.runs_script;
        // Inside a script, redis.set_repl narrows where its commands' effects go.
        let mask = if self.client.in_script { self.client.script_repl } else { crate::persistence::targets::ALL };
        match self.propagation.take() {
            Some(commands) => {
                for (db, command, replicas_only) in commands {
                    let to = if replicas_only {
                        crate::persistence::targets::REPLICAS
                    } else {
                        crate::persistence::targets::ALL
                    };
                    effects.push_to(db, &command, to & mask);
                }
            }
            None if (wrote || self.force_propagation) && !script => effects.push_to(self.client.db, args, mask),
            None => {}
        }
    }

    /// Locks the shards of `keys`, keys the command only finds while running (SORT's BY/GET
    /// pattern keys, a repeated STORE), so `db` accepts them. Shards are only ever taken in
    /// ascending order: when a needed shard sorts below one already held, every lock is
    /// released and the union retaken, and this returns true. Then whatever the command
    /// read may have changed meanwhile and it must read again (and call this again with
    /// the keys it then finds).
    ///
    /// INVARIANT: called before the command wrote anything.
    pub fn lock_extra(&mut self, keys: &[&[u8]]) -> bool {
        let mut missing: SmallVec<[usize; 4]> = keys
            .iter()
            .map(|k| self.engine.keyspace.shard_of(k))
            .filter(|s| !self.locked.iter().any(|(held, _)| held == s))
            .collect();
        if missing.is_empty() {
            return false;
        }
        missing.sort_unstable();
        missing.dedup();
        let before = self.locked_dirty();
        let relocked = self.relock(missing);
        self.foreign_dirty = self.foreign_dirty.wrapping_add(self.locked_dirty().wrapping_sub(before));
        relocked
    }

    /// Adds the locks of `missing` (ascending, none held): true if every lock had to be
    /// released and retaken to keep the ascending order.
    fn relock(&mut self, missing: SmallVec<[usize; 4]>) -> bool {
        let highest_held = self.locked.iter().map(|(s, _)| *s).max();
        if highest_held.is_none_or(|h| h < missing[0]) {
            for shard in missing {
                self.locked.push((shard, ShardAccess::Locked(self.engine.keyspace.lock(shard))));
            }
            return false;
        }
        // INVARIANT: a transaction lends its shards only when none of its commands finds
        // keys at run time (`Engine::transaction_shards`), so this is never reached then:
        // retaking locks here would wait for the shards the transaction itself holds.
        debug_assert!(!self.lent, "{} locked extra shards inside a transaction", self.spec.name);
        let mut all: SmallVec<[usize; 4]> = self.locked.iter().map(|(s, _)| *s).chain(missing).collect();
        all.sort_unstable();
        self.release_expiry_suspension();
        self.locked.clear();
        for shard in all {
            self.locked.push((shard, ShardAccess::Locked(self.engine.keyspace.lock(shard))));
        }
        true
    }

    /// Counts `n` changes made in place (Redis's `server.dirty += n`); whole-value writes
    /// through `Db` count themselves.
    pub fn dirty(&self, n: u64) {
        self.local_dirty.set(self.local_dirty.get() + n);
        self.engine.stats.dirty.fetch_add(n, Ordering::Relaxed);
    }

    /// Collection encoding thresholds from the configuration.
    pub fn limits(&self) -> crate::types::Limits {
        *self.engine.hot.limits.read()
    }

    /// Whether this run serves a blocked client (its command re-run on a ready key).
    pub fn serving(&self) -> bool {
        self.serve.is_some()
    }

    /// Whether a blocking command may block now (not while serving a waiter; later, not
    /// inside MULTI or scripts). When false it must answer as if its timeout had passed.
    pub fn may_block(&self) -> bool {
        self.serve.is_none() && !self.client.in_exec
    }

    /// Writes counted by the locked tables so far (to tell whether a command changed
    /// anything, for WATCH).
    fn table_dirty(&self) -> u64 {
        self.locked_dirty().wrapping_sub(self.foreign_dirty)
    }

    fn locked_dirty(&self) -> u64 {
        self.locked.iter().map(|(_, g)| g.dbs.iter().map(|d| d.dirty).sum::<u64>()).sum()
    }

    /// Blocks the client on `keys` (declared keys of this command) until one is ready or
    /// `deadline_ms` passes; `timeout_reply` writes what the client then gets. The handler
    /// writes no reply itself. While serving a waiter this records "nothing to serve".
    pub fn block(
        &mut self,
        args: &[&[u8]],
        keys: &[&[u8]],
        deadline_ms: Option<i64>,
        timeout_reply: fn(&mut dyn ReplySink),
    ) {
        if let Some(serve) = &mut self.serve {
            serve.not_served = true;
            return;
        }
        let mut unique: SmallVec<[&[u8]; 4]> = SmallVec::new();
        for &key in keys {
            if !unique.contains(&key) {
                unique.push(key);
            }
        }
        let waiter = Arc::new(Waiter::new(self.client.clone(), args, &unique, deadline_ms, timeout_reply));
        for &key in &unique {
            self.db(key).add_waiter(key, waiter.clone());
        }
        self.engine.blocked_count.fetch_add(1, Ordering::SeqCst);
        *self.client.handle.blocked_on.lock() = Some(waiter.clone());
        self.client.handle.set_flag(crate::clients::flag::BLOCKED, true);
        self.client.blocked = Some(waiter);
    }

    /// Blocks the client on no key until `deadline_ms` or until whoever holds the returned
    /// waiter ends it (`Engine::end_wait` with `Unblock::Timeout`); it then gets the integer
    /// `count` gives (WAIT: the replicas that acknowledged). Not while serving a waiter.
    pub fn block_counting(
        &mut self,
        args: &[&[u8]],
        deadline_ms: Option<i64>,
        count: Box<dyn Fn() -> i64 + Send + Sync>,
    ) -> WaiterRef {
        let waiter = Arc::new(Waiter::counting(self.client.clone(), args, deadline_ms, count));
        self.engine.blocked_count.fetch_add(1, Ordering::SeqCst);
        *self.client.handle.blocked_on.lock() = Some(waiter.clone());
        self.client.handle.set_flag(crate::clients::flag::BLOCKED, true);
        self.client.blocked = Some(waiter.clone());
        waiter
    }

    /// Has the executor serve the clients waiting on `ready` keys once this command is
    /// done and logged (after the whole transaction inside EXEC), as for the keys of the
    /// locked tables: for commands that lock shards themselves (SWAPDB, FLUSHDB...).
    pub fn serve_after(&mut self, ready: Vec<(usize, Key)>) {
        self.later_ready.extend(ready);
    }

    /// Keys with waiters that this command made ready, by database.
    fn take_ready(&mut self) -> Vec<(usize, Key)> {
        let mut ready = std::mem::take(&mut self.later_ready);
        for (_, guard) in self.locked.iter_mut() {
            for (index, db) in guard.dbs.iter_mut().enumerate() {
                if db.has_ready() {
                    ready.extend(db.take_ready().into_iter().map(|k| (index, k)));
                }
            }
        }
        ready
    }

    /// Publishes a keyspace notification for `key` in the selected database, if the class
    /// is enabled (Redis's notifyKeyspaceEvent).
    pub fn notify(&mut self, class: i64, event: &str, key: &[u8]) {
        let db = self.client.db;
        self.notify_db(class, event, key, db);
    }

    /// As `notify`, for a key of database `db` (MOVE, COPY ... DB).
    pub fn notify_db(&mut self, class: i64, event: &str, key: &[u8], db: usize) {
        // PERF: one branch when notifications are off or the class is not enabled.
        if self.notify_flags & class == 0 {
            return;
        }
        self.publish_db_events();
        self.engine.notify_keyspace_event(self.notify_flags, event, key, db);
    }

    /// Publishes the `expired` and `new` events the locked tables recorded so far, so they
    /// come before the command's own events, as in Redis.
    fn publish_db_events(&mut self) {
        let mask = db_event_mask(self.notify_flags);
        let tracking = self.engine.tracking.active();
        if mask == 0 && !tracking {
            return;
        }
        let mut events = Vec::new();
        for (_, guard) in self.locked.iter_mut() {
            for (index, db) in guard.dbs.iter_mut().enumerate() {
                if db.has_events() {
                    events.extend(db.take_events().into_iter().map(|(seq, e, k)| (seq, index, e, k)));
                }
            }
        }
        events.sort_unstable_by_key(|e| e.0);
        for (_, db, event, key) in events {
            if event == "expired" {
                if tracking {
                    let current = Some(self.client.id);
                    let own = &mut self.client.tracking_own;
                    self.engine.tracking.invalidate(&self.engine.clients, &key, None, current, own, true);
                }
                // (Collected for tracking alone when the `x` class is off.)
                if mask & crate::keyspace::EVENT_EXPIRED == 0 {
                    continue;
                }
            }
            self.engine.notify_keyspace_event(self.notify_flags, event, &key, db);
        }
    }

    /// Counts a keyspace hit or miss for a read of `key`, as Redis's lookupKeyRead does (a
    /// key of another type is a hit); a miss is a `keymiss` event.
    pub fn hit(&mut self, key: &[u8], found: bool) {
        count_hit(self.engine, found);
        if !found {
            self.notify(crate::pubsub::notify::KEY_MISS, "keymiss", key);
        }
    }
}

impl Ctx<'_> {
    /// Keys expire again for whoever next uses the tables (commands that lock shards
    /// themselves, KEYS, SCAN, the expiry cycle, never set `expiry_suspended`). On a
    /// replica, the TTLs this command's client set are handed to the replica's tracking.
    fn release_expiry_suspension(&mut self) {
        if std::mem::take(&mut self.expiry_suspended) {
            let mut local = Vec::new();
            for (_, guard) in self.locked.iter_mut() {
                for (index, db) in guard.dbs.iter_mut().enumerate() {
                    db.expiry_suspended = false;
                    db.expiry_deferred = false;
                    db.track_local_ttls = false;
                    local.extend(db.take_local_ttls().into_iter().map(|k| (index, k)));
                }
            }
            if !local.is_empty() {
                self.engine.replica_local_ttls.lock().extend(local);
            }
        }
    }
}

impl Drop for Ctx<'_> {
    fn drop(&mut self) {
        self.release_expiry_suspension();
    }
}

impl Engine {
    /// Runs one command and writes its reply (or error) to `out`.
    pub fn execute(&self, client: &mut Client, args: &[&[u8]], out: &mut dyn ReplySink) {
        if args.is_empty() {
            return;
        }
        self.execute_request(client, args, out);
        // ASKING holds for the next command only (or the next transaction).
        if client.cluster_asking && client.multi.is_none() && !args[0].eq_ignore_ascii_case(b"asking") {
            client.cluster_asking = false;
        }
        if self.tracking.active() || !client.tracking_own.is_empty() {
            self.after_tracked_request(client, args, out);
        }
    }

    /// Client-side caching after a request: the client's own invalidations follow its
    /// reply, broadcast clients hear of the keys changed, CLIENT CACHING's one-command
    /// setting ends (not inside MULTI, not for CLIENT itself), the table keeps its limit.
    fn after_tracked_request(&self, client: &mut Client, args: &[&[u8]], out: &mut dyn ReplySink) {
        let own = std::mem::take(&mut client.tracking_own);
        if !own.is_empty() {
            crate::tracking::write_own(out, &client.handle, &self.clients, own);
        }
        self.tracking.broadcast(&self.clients);
        if client.multi.is_none() && !args[0].eq_ignore_ascii_case(b"client") {
            client.handle.tracking.lock().caching = false;
        }
        let max_keys = self.config.read().get_int("tracking-table-max-keys").max(0) as usize;
        self.tracking.limit(&self.clients, max_keys);
    }

    /// A key changed: WATCH and client-side caching hear of it. `by`: the client that
    /// changed it (None: the server, evicting or expiring).
    pub(crate) fn key_changed(&self, db: Option<usize>, key: &[u8], by: Option<&mut Client>) {
        self.touch_watched(db, Some(key));
        if self.tracking.active() {
            match by {
                Some(client) => {
                    let id = Some(client.id);
                    self.tracking.invalidate(&self.clients, key, id, id, &mut client.tracking_own, true);
                }
                None => {
                    // Evicting for a command: its client's own invalidation comes first.
                    let current = crate::tracking::current_evicting();
                    let mut own = Vec::new();
                    self.tracking.invalidate(&self.clients, key, None, current, &mut own, true);
                    crate::tracking::add_early(own);
                }
            }
        }
    }

    fn execute_request(&self, client: &mut Client, args: &[&[u8]], out: &mut dyn ReplySink) {
        if client.multi.is_some() && !client.in_exec && self.queue_in_transaction(client, args, out) {
            return;
        }
        // Every command runs under the shared side of the transaction gate; EXEC and scripts
        // take it exclusively, so they never interleave with other clients' commands.
        // PERF: the command is looked up once, for the gate and for running it.
        let resolved = self.table.resolve(args);
        if client.in_exec {
            self.execute_resolved(client, args, resolved, out);
            return;
        }
        // A script whose runs so far kept to the shards of its declared keys runs under the
        // shared gate holding those shards, alongside other clients' commands and scripts.
        let alongside = matches!(resolved, Resolved::Found(spec) if spec.runs_script)
            && !client.script_debug
            && self.script_runs_alongside(args);
        client.script_alongside = alongside;
        let mut waited = false;
        let Some(gate) = self.enter_gate(resolved, alongside, client.must_obey, out, &mut waited) else {
            client.script_alongside = false;
            return;
        };
        if waited {
            // Time passed while this command waited for the gate.
            client.restart_batch_clock();
        }
        if self.shutdown_requested() {
            // SHUTDOWN's (or a signal's) final save ran: the server is going away, and
            // nothing runs after that save. The connection just closes.
            client.close_after_reply = true;
            client.script_alongside = false;
            return;
        }
        self.execute_resolved(client, args, resolved, out);
        client.script_alongside = false;
        if std::mem::take(&mut client.script_escalated) {
            // It reached beyond its keys before writing: run it again alone.
            drop(gate);
            let Some(_gate) = self.wait_gate(true, client.must_obey, || false, &mut waited) else {
                self.reject(None, out, self.scripting.busy_error());
                return;
            };
            client.restart_batch_clock();
            self.execute_resolved(client, args, resolved, out);
        }
    }

    /// Why the server's state refuses `spec` right now: writes (and PING, as Redis counts
    /// it) while persistence fails (MISCONF), anything not flagged `loading` while loading.
    fn state_refusal(&self, spec: &CommandSpec, obey: bool) -> Option<String> {
        if let Some(layer) = self.persistence() {
            if spec.has_flag(crate::command::flags::WRITE) || spec.name == "ping" {
                if let Some(line) = layer.write_refusal() {
                    return Some(line);
                }
            }
            if !obey {
                if let Some(line) = layer.role_refusal(
                    self,
                    spec.has_flag(crate::command::flags::WRITE),
                    spec.has_flag(crate::command::flags::STALE),
                ) {
                    return Some(line);
                }
            }
        }
        if self.is_loading() && !spec.has_flag(crate::command::flags::LOADING) {
            return Some("LOADING Redis is loading the dataset in memory".into());
        }
        if self.is_async_loading() && spec.has_flag(crate::command::flags::NO_ASYNC_LOADING) {
            return Some("LOADING Redis is loading the dataset in memory".into());
        }
        None
    }

    /// Why EXEC must abort though every command queued: the state refuses writes (MISCONF)
    /// and the transaction writes, or memory is out and it may grow it (processCommand's
    /// checks on EXEC with the transaction's flags).
    fn exec_refusal(&self, queued: &[Vec<Vec<u8>>], obey: bool) -> Option<String> {
        // The transaction's flags, in one pass (Redis keeps them while queueing): whether it
        // writes, may grow memory, or holds a command not allowed on a stale replica.
        let (mut writes, mut denies_oom, mut stale_ok) = (false, false, true);
        for command in queued {
            let args: SmallVec<[&[u8]; 8]> = command.iter().map(|a| &a[..]).collect();
            if let Resolved::Found(spec) = self.table.resolve(&args) {
                let (command_writes, command_stale_ok) = self.writes_and_stale_ok(spec, &args);
                writes |= command_writes;
                denies_oom |= self.command_denies_oom(spec, &args);
                stale_ok &= command_stale_ok;
            }
        }
        // Redis's processCommand order: OOM (evicting first, for every EXEC), MISCONF,
        // NOREPLICAS, then the replica role (READONLY, MASTERDOWN).
        if self.out_of_memory() && denies_oom {
            return Some(crate::evict::OOM_ERROR.to_string());
        }
        if writes {
            if let Some(line) = self.persistence().and_then(|p| p.write_refusal()) {
                return Some(line);
            }
            if !self.enough_good_replicas() {
                return Some(crate::cmd::scripting::NOREPLICAS_ERROR.to_string());
            }
        }
        if !obey {
            if let Some(line) = self.persistence().and_then(|p| p.role_refusal(self, writes, stale_ok)) {
                return Some(line);
            }
        }
        None
    }

    /// Whether the persistence layer wants write effects recorded.
    fn effects_wanted(&self) -> bool {
        self.persistence().is_some_and(|p| p.wants_effects())
    }

    /// Logs the deletions of keys found expired outside a command (unwrapped, as Redis's
    /// active expiry).
    pub(crate) fn log_expired(&self, db: usize, keys: Vec<Key>) {
        let Some(layer) = self.persistence().filter(|p| p.wants_effects()) else { return };
        let mut effects = Effects::default();
        let del = self.expired_deletion_command();
        for key in keys {
            effects.push(db, &[del, &key[..]]);
        }
        if !effects.is_empty() {
            layer.feed(&effects);
        }
    }

    /// Gives the effects the client recorded to the persistence layer.
    fn hand_over_effects(&self, client: &mut Client) {
        if client.effects.is_empty() {
            return;
        }
        if let Some(layer) = self.persistence() {
            layer.feed(&client.effects);
            client.woff = layer.replication_offset();
        }
        client.effects.clear();
    }

    /// Takes the transaction gate for one command: exclusively for the commands flagged
    /// `exclusive` (scripts, FLUSHALL, CONFIG SET...: see `command::runs_exclusively`) and an
    /// unknown subcommand of such a container, shared otherwise. While a script runs longer
    /// than `busy-reply-threshold`, commands that would wait for it get BUSY instead, and
    /// those flagged `allow_busy` (SCRIPT KILL, SHUTDOWN NOSAVE...) run at once without the
    /// gate. None: BUSY was replied.
    fn enter_gate(
        &self,
        resolved: Resolved<'_>,
        script_alongside: bool,
        obey: bool,
        out: &mut dyn ReplySink,
        waited: &mut bool,
    ) -> Option<Gate<'_>> {
        let (spec, exclusive) = match resolved {
            Resolved::Found(spec) => (Some(spec), spec.exclusive && !script_alongside),
            Resolved::UnknownSubcommand(parent) => (None, parent.exclusive),
            Resolved::Unknown => (None, false),
        };
        let gate = self.wait_gate(
            exclusive,
            obey,
            || spec.is_some_and(|spec| spec.has_flag(crate::command::flags::ALLOW_BUSY)),
            waited,
        );
        if gate.is_none() {
            // While loading (a slow script in the AOF), LOADING comes first, as in Redis's
            // processCommand.
            let loading = self.is_loading() && !spec.is_some_and(|s| s.has_flag(crate::command::flags::LOADING));
            let line =
                if loading { "LOADING Redis is loading the dataset in memory" } else { self.scripting.busy_error() };
            self.reject(spec, out, line);
        }
        gate
    }

    /// Waits for the transaction gate in 5 ms slices. Once a script has run longer than
    /// `busy-reply-threshold`: Bypass if `allow_busy()`, else None (the caller replies BUSY).
    /// `waited` is set when the gate was not free at once. An obeying client (a master's
    /// stream) never gets BUSY: it waits for the script, as Redis leaves the master's stream
    /// unread during a busy script.
    fn wait_gate(
        &self,
        exclusive: bool,
        obey: bool,
        allow_busy: impl Fn() -> bool,
        waited: &mut bool,
    ) -> Option<Gate<'_>> {
        // A busy script may hold only the shared gate (and its shards): everyone else gets
        // BUSY all the same, as in Redis.
        if !obey && self.scripting.busy(&*self.clock) {
            if allow_busy() {
                return Some(Gate::Bypass);
            }
            self.scripting.wait_for_debug_session();
            if self.scripting.busy(&*self.clock) {
                return None;
            }
        }
        let free = if exclusive {
            self.exec_gate.try_write().map(Gate::Exclusive)
        } else {
            self.exec_gate.try_read().map(Gate::Shared)
        };
        if free.is_some() {
            return free;
        }
        *waited = true;
        let wait = std::time::Duration::from_millis(5);
        loop {
            // Checked before waiting: a command served from inside a busy script's hook (on
            // the script's own thread) must not wait for the gate that thread holds.
            if !obey && self.scripting.busy(&*self.clock) {
                return if allow_busy() { Some(Gate::Bypass) } else { None };
            }
            // (parking_lot's timed attempts try the uncontended fast path before any clock read.)
            let gate = if exclusive {
                self.exec_gate.try_write_for(wait).map(Gate::Exclusive)
            } else {
                self.exec_gate.try_read_for(wait).map(Gate::Shared)
            };
            if gate.is_some() {
                return gate;
            }
        }
    }

    /// Runs one command of a script (redis.call), resolved by the caller already: the
    /// script holds the gate exclusively, or `held` (all the shards of the command's keys).
    /// `shards`: those of the command's keys, if the caller found them already.
    pub(crate) fn execute_in_script(
        &self,
        client: &mut Client,
        args: &[&[u8]],
        spec: &CommandSpec,
        out: &mut dyn ReplySink,
        held: Option<&mut HeldShards<'_>>,
        shards: Option<SmallVec<[usize; 4]>>,
    ) {
        let outer = std::mem::replace(&mut client.in_script, true);
        self.execute_lent(client, args, Resolved::Found(spec), out, held, shards);
        client.in_script = outer;
    }

    /// Locks `shards` (ascending) for a command, waiting in 5 ms slices; None when a
    /// script is busy meanwhile (the caller replies BUSY): a busy script can hold a shard
    /// for as long as it runs.
    pub(crate) fn lock_shards(&self, shards: &[usize]) -> Option<LockedShards<'_>> {
        let mut locked = SmallVec::new();
        for &shard in shards {
            let guard = match self.keyspace.try_lock(shard) {
                Some(guard) => guard,
                None => loop {
                    if self.scripting.busy(&*self.clock) {
                        return None;
                    }
                    if let Some(guard) = self.keyspace.try_lock_for(shard, std::time::Duration::from_millis(5)) {
                        break guard;
                    }
                },
            };
            locked.push((shard, ShardAccess::Locked(guard)));
        }
        Some(locked)
    }

    /// EVAL, EVALSHA and FCALL show themselves to MONITOR before the commands they run, as
    /// Redis's evalCommand and fcallCommandGeneric do (their specs skip the usual feed).
    pub(crate) fn feed_monitors_before_script(&self, client: &Client, spec: &CommandSpec, args: &[&[u8]]) {
        if self.clients.has_monitors() {
            self.feed_monitors(client, spec, args);
        }
    }

    /// After a script: serves the clients blocked on keys it made ready, once the script's
    /// effects are handed over (a served pop must be logged after the push that fed it).
    pub(crate) fn serve_script_ready(&self, client: &mut Client) {
        self.hand_over_effects(client);
        let ready = std::mem::take(&mut client.deferred_ready);
        if !ready.is_empty() {
            self.serve_ready(ready);
        }
    }

    /// Inside MULTI: queues the command (replying QUEUED), or runs EXEC. Returns false for
    /// the commands that run immediately even in a transaction (MULTI, DISCARD, WATCH, QUIT,
    /// RESET).
    fn queue_in_transaction(&self, client: &mut Client, args: &[&[u8]], out: &mut dyn ReplySink) -> bool {
        let name = args[0];
        if name.eq_ignore_ascii_case(b"exec") {
            let start_us = self.clock.now_us();
            self.observe.count_processed(&self.stats.total_commands_processed);
            let outcome = self.run_transaction(client, out);
            // (CLIENT LIST inside the transaction still shows its queue, as in Redis.)
            client.handle.multi_count.store(-1, Ordering::Relaxed);
            client.handle.multi_bytes.store(0, Ordering::Relaxed);
            // EXEC is counted, logged and shown to MONITOR after the commands it ran, as in
            // Redis's call(); refused before it could run, it is a rejected call.
            if let Resolved::Found(spec) = self.table.resolve(args) {
                let stat = &self.observe.commands[spec.id];
                if outcome == ExecOutcome::Rejected {
                    stat.rejected_calls.fetch_add(1, Ordering::Relaxed);
                    return true;
                }
                let duration_us = (self.clock.now_us() - start_us).max(0) as u64;
                self.observe.record_call(spec.id, duration_us, self.latency_tracking());
                if outcome == ExecOutcome::Failed {
                    stat.failed_calls.fetch_add(1, Ordering::Relaxed);
                }
                self.after_command(client, spec, args, start_us, duration_us);
            }
            return true;
        }
        if ["multi", "discard", "watch", "quit", "reset"].iter().any(|n| name.eq_ignore_ascii_case(n.as_bytes())) {
            return false;
        }
        let spec = match self.table.resolve(args) {
            Resolved::Found(spec) => spec,
            Resolved::UnknownSubcommand(parent) => {
                client.multi_error = true;
                self.reject(None, out, &CmdError::UnknownSubcommand(args[1].to_vec()).render(&parent.name));
                return true;
            }
            Resolved::Unknown => {
                client.multi_error = true;
                self.reject(None, out, &unknown_command_error(args));
                return true;
            }
        };
        let argc = args.len() as i32;
        if (spec.arity > 0 && spec.arity != argc) || argc < -spec.arity {
            client.multi_error = true;
            self.reject(Some(spec), out, &format!("ERR wrong number of arguments for '{}' command", spec.name));
            return true;
        }
        // Redis's processCommand order: authentication, commands refused in MULTI, ACL.
        if self.acl.auth_required(client.authenticated) && !spec.has_flag(crate::command::flags::NO_AUTH) {
            client.multi_error = true;
            self.reject(Some(spec), out, "NOAUTH Authentication required.");
            return true;
        }
        if spec.has_flag(crate::command::flags::NO_MULTI) {
            client.multi_error = true;
            self.reject(Some(spec), out, "ERR Command not allowed inside a transaction");
            return true;
        }
        if !client.user.is_unrestricted() && !client.must_obey {
            if let Err(denial) = self.acl_check(client, spec, args) {
                self.acl_log_denial(client, spec, args, denial, crate::cmd::acl::context::MULTI);
                client.multi_error = true;
                self.reject(Some(spec), out, &denial.error_line(spec));
                return true;
            }
        }
        if self.cluster.enabled() && !client.must_obey {
            if let Some(line) = self.cluster_refusal(client, spec, args, None, false) {
                client.multi_error = true;
                self.reject(Some(spec), out, &line);
                return true;
            }
        }
        // Queueing takes memory: over `maxmemory` nothing is queued.
        if self.out_of_memory() {
            client.multi_error = true;
            self.reject(Some(spec), out, crate::evict::OOM_ERROR);
            return true;
        }
        if !self.enough_good_replicas() && spec.has_flag(crate::command::flags::WRITE) {
            client.multi_error = true;
            self.reject(Some(spec), out, crate::cmd::scripting::NOREPLICAS_ERROR);
            return true;
        }
        if let Some(line) = pubsub_context_error(client, spec) {
            client.multi_error = true;
            self.reject(Some(spec), out, &line);
            return true;
        }
        if let Some(line) = self.state_refusal(spec, client.must_obey) {
            client.multi_error = true;
            self.reject(Some(spec), out, &line);
            return true;
        }
        // While a script is busy, commands are refused before they could be queued, as
        // in Redis's processCommand, and the transaction is flagged.
        if !spec.has_flag(crate::command::flags::ALLOW_BUSY) && self.scripting.busy(&*self.clock) {
            client.multi_error = true;
            self.reject(Some(spec), out, self.scripting.busy_error());
            return true;
        }
        if let Some(queue) = client.multi.as_mut() {
            queue.push(args.iter().map(|a| a.to_vec()).collect());
            // What the queued copy takes: each argument's bytes and vector, and the command's.
            let vec = std::mem::size_of::<Vec<u8>>();
            let bytes = args.iter().map(|a| a.len() + vec).sum::<usize>() + vec;
            client.handle.multi_count.fetch_add(1, Ordering::Relaxed);
            client.handle.multi_bytes.fetch_add(bytes, Ordering::Relaxed);
        }
        out.simple("QUEUED");
        true
    }

    /// EXEC: runs the queued commands with the transaction gate held exclusively.
    fn run_transaction(&self, client: &mut Client, out: &mut dyn ReplySink) -> ExecOutcome {
        let queued = client.multi.take().unwrap_or_default();
        client.handle.set_flag(crate::clients::flag::MULTI, false);
        // Cluster mode: the whole queue must be served here, or the transaction is
        // discarded with the redirection (processCommand's getNodeByQuery over EXEC).
        if self.cluster.enabled() && !client.must_obey {
            if let Resolved::Found(exec) = self.table.resolve(&[b"exec"]) {
                if let Some(line) = self.cluster_refusal(client, exec, &[b"exec"], Some(&queued), false) {
                    client.multi_error = false;
                    self.unwatch_all(client);
                    self.reject(None, out, &line);
                    return ExecOutcome::Rejected;
                }
            }
        }
        // The server's state is checked first, as Redis's processCommand runs before EXEC.
        if let Some(reason) = self.exec_refusal(&queued, client.must_obey) {
            client.multi_error = false;
            self.unwatch_all(client);
            self.reject(None, out, &format!("EXECABORT Transaction discarded because of: {reason}"));
            return ExecOutcome::Rejected;
        }
        // The gate (and the transaction's shards) before the WATCH check: a write landing
        // between the check and the run of the queue would otherwise be lost (optimistic
        // locking must be atomic). A transaction whose commands name all their keys holds
        // the shards of those and of the watched keys, under the shared gate, so
        // transactions on other shards run meanwhile; any other takes the gate exclusively.
        let plan = self.transaction_shards(client, &queued);
        let mut waited = false;
        let Some(gate) = self.wait_gate(plan.is_none(), client.must_obey, || false, &mut waited) else {
            client.multi_error = false;
            self.unwatch_all(client);
            let busy = self.scripting.busy_error();
            self.reject(None, out, &format!("EXECABORT Transaction discarded because of: {busy}"));
            return ExecOutcome::Rejected;
        };
        // Ascending, as every command locks.
        let mut held = match plan {
            None => None,
            Some(shards) => match self.lock_shards(&shards) {
                Some(held) => Some(held),
                None => {
                    client.multi_error = false;
                    self.unwatch_all(client);
                    let busy = self.scripting.busy_error();
                    self.reject(None, out, &format!("EXECABORT Transaction discarded because of: {busy}"));
                    return ExecOutcome::Rejected;
                }
            },
        };
        // The queued commands start now, not when the command before EXEC ended.
        client.restart_batch_clock();
        if std::mem::take(&mut client.multi_error) {
            self.unwatch_all(client);
            self.reject(None, out, "EXECABORT Transaction discarded because of previous errors.");
            return ExecOutcome::Failed;
        }
        if client.watch_dirty.swap(false, Ordering::SeqCst) || self.watched_key_expired(client, held.as_deref_mut()) {
            self.unwatch_all(client);
            out.null_array();
            return ExecOutcome::Ran;
        }
        self.unwatch_all(client);
        client.in_exec = true;
        out.array(queued.len());
        for command in &queued {
            let args: SmallVec<[&[u8]; 8]> = command.iter().map(|a| &a[..]).collect();
            self.execute_lent(client, &args, self.table.resolve(&args), out, held.as_deref_mut(), None);
        }
        client.in_exec = false;
        // Handed over while the shards are held, so the log keeps each key's order.
        self.hand_over_effects(client);
        let ready = std::mem::take(&mut client.deferred_ready);
        drop(held);
        drop(gate);
        if !ready.is_empty() {
            // Serving writes keys: under the shared gate, like any command.
            let _gate = self.exec_gate.read();
            self.serve_ready(ready);
        }
        ExecOutcome::Ran
    }

    /// DISCARD (and RESET, disconnect): drops the queue and the watched keys.
    pub fn discard_transaction(&self, client: &mut Client) {
        client.multi = None;
        client.multi_error = false;
        client.watch_dirty.store(false, Ordering::SeqCst);
        client.handle.set_flag(crate::clients::flag::MULTI, false);
        client.handle.multi_count.store(-1, Ordering::Relaxed);
        client.handle.multi_bytes.store(0, Ordering::Relaxed);
        self.unwatch_all(client);
    }

    pub(crate) fn watch_key(&self, client: &mut Client, db: usize, key: &[u8], stale: bool, existed: bool) {
        let mut watches = self.watches.lock();
        watches.entry((db, key.into())).or_default().push(client.watch_dirty.clone());
        client.watched.push(WatchedKey { db, key: key.into(), stale, existed });
        client.handle.watched_bytes.fetch_add(std::mem::size_of::<WatchedKey>() + key.len(), Ordering::Relaxed);
        self.watch_count.fetch_add(1, Ordering::SeqCst);
    }

    /// Redis's isWatchedKeyExpired: a watched key, live when watched, has expired since.
    /// `held`: the transaction's shards, which include the watched keys'.
    fn watched_key_expired(&self, client: &Client, mut held: Option<&mut HeldShards<'_>>) -> bool {
        let now = self.clock.now_ms();
        client.watched.iter().filter(|w| !w.stale).any(|w| {
            let shard = self.keyspace.shard_of(&w.key);
            let mut own;
            let guard: &mut Shard = match held.as_deref_mut().and_then(|h| h.iter_mut().find(|(s, _)| *s == shard)) {
                Some((_, guard)) => guard,
                None => {
                    own = self.keyspace.lock(shard);
                    &mut own
                }
            };
            let db = &mut guard.dbs[w.db];
            // A time before any TTL: looks the key up without expiring it.
            db.is_stale(&w.key, now) || (w.existed && db.peek(&w.key, i64::MIN).is_none())
        })
    }

    /// The shards a transaction holds while it runs, ascending: those of its commands' keys
    /// and of the watched keys. None (it takes the gate exclusively, as scripts do) when a
    /// command may touch keys it does not name: keyless commands other than a few that
    /// never touch the keyspace, commands that find keys at run time (SORT's BY/GET,
    /// a GEORADIUS STORE or XREAD's STREAMS parsed past its key spec) and those that run
    /// alone (scripts, FLUSHALL...).
    fn transaction_shards(&self, client: &Client, queued: &[Vec<Vec<u8>>]) -> Option<SmallVec<[usize; 8]>> {
        let mut shards: SmallVec<[usize; 8]> = SmallVec::new();
        for command in queued {
            let args: SmallVec<[&[u8]; 8]> = command.iter().map(|a| &a[..]).collect();
            let Resolved::Found(spec) = self.table.resolve(&args) else { return None };
            let before = shards.len();
            spec.each_key_position(&args, |p| shards.push(self.keyspace.shard_of(args[p])));
            if !confined(spec, shards.len() > before) {
                return None;
            }
        }
        shards.extend(client.watched.iter().map(|w| self.keyspace.shard_of(&w.key)));
        shards.sort_unstable();
        shards.dedup();
        Some(shards)
    }

    /// Watched keys of `dbs` that hold a live value in any of `check` (what FLUSHDB,
    /// FLUSHALL and SWAPDB change), collected before the command runs.
    fn live_watched_keys(&self, dbs: &[usize], check: &[usize]) -> Vec<(usize, Key)> {
        let watched: Vec<(usize, Key)> =
            self.watches.lock().keys().filter(|(db, _)| dbs.contains(db)).cloned().collect();
        let now = self.clock.now_ms();
        watched
            .into_iter()
            .filter(|(db, key)| {
                let mut guard = self.keyspace.lock(self.keyspace.shard_of(key));
                let mut dbs_to_check = check.to_vec();
                if dbs_to_check.is_empty() {
                    dbs_to_check.push(*db);
                }
                dbs_to_check.iter().any(|&d| guard.dbs[d].peek(key, now).is_some())
            })
            .collect()
    }

    pub(crate) fn unwatch_all(&self, client: &mut Client) {
        if client.watched.is_empty() {
            return;
        }
        client.handle.watched_bytes.store(0, Ordering::Relaxed);
        let mut watches = self.watches.lock();
        for watched in client.watched.drain(..) {
            let slot = (watched.db, watched.key);
            if let Some(flags) = watches.get_mut(&slot) {
                flags.retain(|f| !Arc::ptr_eq(f, &client.watch_dirty));
                if flags.is_empty() {
                    watches.remove(&slot);
                }
            }
            self.watch_count.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Flags the clients watching `key` in `db` (None: any database), or every watched key
    /// of `db` when `key` is None.
    pub(crate) fn touch_watched(&self, db: Option<usize>, key: Option<&[u8]>) {
        if self.watch_count.load(Ordering::SeqCst) == 0 {
            return;
        }
        let watches = self.watches.lock();
        for ((d, k), flags) in watches.iter() {
            if db.is_none_or(|db| db == *d) && key.is_none_or(|key| &k[..] == key) {
                for flag in flags {
                    flag.store(true, Ordering::SeqCst);
                }
            }
        }
    }

    fn execute_resolved(
        &self,
        client: &mut Client,
        args: &[&[u8]],
        resolved: Resolved<'_>,
        reply_out: &mut dyn ReplySink,
    ) {
        self.execute_lent(client, args, resolved, reply_out, None, None);
    }

    /// Runs one resolved command. `held`: the shards a transaction or script holds, which
    /// the command uses instead of locking its own (they include all of them); `known`: the
    /// shards of the command's keys, if the caller found them already.
    fn execute_lent(
        &self,
        client: &mut Client,
        args: &[&[u8]],
        resolved: Resolved<'_>,
        reply_out: &mut dyn ReplySink,
        held: Option<&mut HeldShards<'_>>,
        known: Option<SmallVec<[usize; 4]>>,
    ) {
        self.observe.count_processed(&self.stats.total_commands_processed);
        // CLIENT REPLY OFF/SKIP: run the command, throw its reply away.
        let mut discard = NullSink(client.protocol);
        let suppress = match client.reply_mode {
            ReplyMode::On => false,
            ReplyMode::SkipNext => {
                client.reply_mode = ReplyMode::On;
                !is_client_reply_on(args)
            }
            ReplyMode::Off => !is_client_reply_on(args),
        };
        let spec = match resolved {
            Resolved::Found(spec) => spec,
            Resolved::UnknownSubcommand(parent) => {
                let out: &mut dyn ReplySink = if suppress { &mut discard } else { reply_out };
                self.reject(None, out, &CmdError::UnknownSubcommand(args[1].to_vec()).render(&parent.name));
                return;
            }
            Resolved::Unknown => {
                let out: &mut dyn ReplySink = if suppress { &mut discard } else { reply_out };
                self.reject(None, out, &unknown_command_error(args));
                return;
            }
        };
        // (Un)subscribe confirmations get through CLIENT REPLY OFF, as Redis pushes them.
        let out: &mut dyn ReplySink =
            if suppress && !is_subscription_command(&spec.name) { &mut discard } else { reply_out };
        client.handle.last_command.store(spec.id, Ordering::Relaxed);
        let argc = args.len() as i32;
        if (spec.arity > 0 && spec.arity != argc) || argc < -spec.arity {
            self.reject(Some(spec), out, &format!("ERR wrong number of arguments for '{}' command", spec.name));
            return;
        }
        if self.acl.auth_required(client.authenticated) && !spec.has_flag(crate::command::flags::NO_AUTH) {
            self.reject(Some(spec), out, "NOAUTH Authentication required.");
            return;
        }
        // PERF: one atomic load for a user allowed everything. A script's commands were
        // checked by the script (its own error text), an obeying client runs anything.
        if !client.user.is_unrestricted() && !client.in_script && !client.must_obey {
            if let Err(denial) = self.acl_check(client, spec, args) {
                let line = if client.in_exec {
                    self.acl_log_denial(client, spec, args, denial, crate::cmd::acl::context::MULTI);
                    format!(
                        "NOPERM ACLs rules changed between the moment the transaction was accumulated and the \
                         EXEC call. This command is no longer allowed for the following reason: {}",
                        denial.exec_reason()
                    )
                } else {
                    self.acl_log_denial(client, spec, args, denial, crate::cmd::acl::context::TOPLEVEL);
                    denial.error_line(spec)
                };
                self.reject(Some(spec), out, &line);
                return;
            }
        }
        // Cluster mode: a node serves only its slots' keys (Redis's processCommand asks
        // getNodeByQuery after the ACL check); what a master or the AOF sends is obeyed.
        // (A script's commands are checked by the script, `call_command`.)
        if self.cluster.enabled() && !client.in_exec && !client.in_script && !client.must_obey {
            if let Some(line) = self.cluster_refusal(client, spec, args, None, false) {
                self.reject(Some(spec), out, &line);
                return;
            }
        }
        // Over `maxmemory`: keys are evicted first (`out_of_memory`); commands that may grow
        // memory are refused if that is not enough (not those EXEC or a script runs: the
        // transaction or script was checked as a whole).
        // (Not inside EXEC or a script: nothing is evicted half way through them.)
        let checks_memory = !client.in_exec && !client.in_script;
        let out_of_memory = if !checks_memory {
            false
        } else if self.tracking.active() {
            // Keys evicted for this command are invalidated before its reply, as in Redis
            // (eviction runs before the command).
            let (oom, early) = crate::tracking::evicting_for(client.id, || self.out_of_memory());
            if !early.is_empty() {
                crate::tracking::write_own(out, &client.handle, &self.clients, early);
            }
            oom
        } else {
            self.out_of_memory()
        };
        if out_of_memory && self.command_denies_oom(spec, args) {
            self.reject(Some(spec), out, crate::evict::OOM_ERROR);
            return;
        }
        if !client.in_exec
            && !client.in_script
            && !self.enough_good_replicas()
            && spec.has_flag(crate::command::flags::WRITE)
        {
            self.reject(Some(spec), out, crate::cmd::scripting::NOREPLICAS_ERROR);
            return;
        }
        // Checked when a command arrives, not for the commands EXEC runs (as Redis checks
        // in processCommand, not in call()).
        if !client.in_exec {
            if let Some(line) = pubsub_context_error(client, spec) {
                self.reject(Some(spec), out, &line);
                return;
            }
            if let Some(line) = self.state_refusal(spec, client.must_obey) {
                self.reject(Some(spec), out, &line);
                return;
            }
            // A replica's connection carries the stream; it reads nor writes keys (Redis's
            // processCommand for CLIENT_SLAVE).
            if client.handle.has_flag(crate::clients::flag::REPLICA)
                && !client.handle.has_flag(crate::clients::flag::MONITOR)
                && (spec.has_flag(crate::command::flags::WRITE)
                    || spec.has_flag(crate::command::flags::READONLY)
                    || self.may_replicate(spec, args))
            {
                self.reject(Some(spec), out, "ERR Replica can't interact with the keyspace");
                return;
            }
        }
        let Some(handler) = spec.handler else {
            self.reject(Some(spec), out, &CmdError::UnknownSubcommand(args[1].to_vec()).render(&spec.name));
            return;
        };
        // A script running alongside others holds the shards of its declared keys; one
        // running alone locks nothing itself: each of its commands locks its own shards.
        let mut shards: SmallVec<[usize; 4]> = SmallVec::new();
        if let Some(known) = known {
            shards = known;
        } else if !spec.runs_script {
            spec.each_key_position(args, |p| shards.push(self.keyspace.shard_of(args[p])));
        } else if client.script_alongside {
            // (numkeys was checked by `script_runs_alongside`.)
            let numkeys = args.get(2).and_then(|n| quince_resp::parse_i64_strict(n)).unwrap_or(0) as usize;
            shards.extend(args.iter().skip(3).take(numkeys).map(|k| self.keyspace.shard_of(k)));
        }
        if shards.len() > 1 {
            shards.sort_unstable();
            shards.dedup();
        }
        // PERF: in a batch, a command starts when the previous one ended (one clock read
        // per command instead of two).
        let start_us = match client.batch_clock_us {
            Some(t) if t > 0 => t,
            _ => self.clock.now_us(),
        };
        // Inside a script time stands still at the script's start, as in Redis: a key
        // can't expire half way through a script.
        let now_ms = if client.in_script { client.script_now_ms } else { start_us / 1000 };
        client.handle.last_interaction_ms.store(start_us / 1000, Ordering::Relaxed);
        let mut ready = Vec::new();
        // FLUSHDB, FLUSHALL and SWAPDB flag the watched keys they change: those that exist.
        let whole_db_watched = if self.watch_count.load(Ordering::SeqCst) > 0 {
            self.whole_db_changes(spec, args, client.db)
        } else {
            None
        };
        let propagating = self.effects_wanted();
        let result = {
            // Lock in ascending shard order: the global order that keeps multi-key commands
            // from deadlocking each other.
            let lent = held.is_some();
            let locked = match held {
                Some(held) => held
                    .iter_mut()
                    .filter(|(s, _)| shards.contains(s))
                    .map(|(s, access)| (*s, ShardAccess::Lent(access)))
                    .collect(),
                None => match self.lock_shards(&shards) {
                    Some(locked) => locked,
                    None => {
                        self.reject(Some(spec), out, self.scripting.busy_error());
                        return;
                    }
                },
            };
            let access_mode = self.access_mode();
            let mut ctx = Ctx {
                lent,
                engine: self,
                client,
                spec,
                now_ms,
                access_mode,
                locked,
                serve: None,
                local_dirty: std::cell::Cell::new(0),
                foreign_dirty: 0,
                notify_flags: self.hot.notify_flags.load(Ordering::Relaxed),
                propagating,
                propagation: None,
                force_propagation: false,
                expiry_suspended: false,
                later_ready: Vec::new(),
                unmodified_keys: SmallVec::new(),
            };
            let watching = (self.watch_count.load(Ordering::SeqCst) > 0 || self.tracking.active())
                && spec.has_flag(crate::command::flags::WRITE);
            let dirty_before = if watching || propagating { ctx.table_dirty() } else { 0 };
            let result = handler(&mut ctx, args, out);
            ctx.publish_db_events();
            if propagating {
                let wrote = ctx.local_dirty.get() > 0 || ctx.table_dirty() != dirty_before;
                ctx.record_effects(args, wrote);
                // Handed over while the command's locks are held, so two writes to a key
                // reach the log in the order they happened.
                if !ctx.client.in_exec && !ctx.client.in_script {
                    self.hand_over_effects(ctx.client);
                }
            }
            if watching && ctx.client.blocked.is_none() && result.is_ok() {
                match &whole_db_watched {
                    Some(keys) => {
                        for (db, key) in keys {
                            self.touch_watched(Some(*db), Some(key));
                        }
                    }
                    None => self.touch_written_keys(&mut ctx, args, dirty_before),
                }
            }
            // A flush forgets every tracked key (tracking or not, as Redis frees the table).
            if result.is_ok() && matches!(spec.name.as_str(), "flushall" | "flushdb") {
                let by = Some(ctx.client.id);
                self.tracking.invalidate_all(&self.clients, by, &mut ctx.client.tracking_own);
            }
            // Client-side caching: a tracking client's read-only command remembers its keys
            // (a read-only script's own commands do, not the script).
            // A script that ran a read-only command remembers its declared keys, as Redis
            // tracks the script caller's command.
            if self.tracking.active() {
                let read_only = spec.has_flag(crate::command::flags::READONLY);
                let remember = if ctx.client.in_script {
                    ctx.client.script_read |= read_only;
                    false
                } else if spec.runs_script {
                    std::mem::take(&mut ctx.client.script_read)
                } else {
                    read_only && !spec.has_flag(crate::command::flags::PUBSUB)
                };
                if remember {
                    let keys = spec.keys_with_specs(args).map(|(p, _)| args[p].to_vec());
                    self.tracking.remember(&ctx.client.handle, keys);
                }
            }
            if self.blocked_count.load(Ordering::SeqCst) > 0 || !ctx.later_ready.is_empty() {
                ready = ctx.take_ready();
            }
            result
        };
        let end_us = self.clock.now_us();
        if client.batch_clock_us.is_some() {
            client.batch_clock_us = Some(end_us);
        }
        let duration_us = (end_us - start_us).max(0) as u64;
        let stat = &self.observe.commands[spec.id];
        // A command that blocked is counted when its wait ends, as Redis does.
        if client.blocked.is_none() {
            self.observe.record_call(spec.id, duration_us, self.latency_tracking());
        }
        if let Err(e) = result {
            let line = e.render(&spec.name);
            stat.failed_calls.fetch_add(1, Ordering::Relaxed);
            self.observe.errors.record(&line);
            out.error(&line);
        }
        self.after_command(client, spec, args, start_us, duration_us);
        // Waiters on keys this command filled are served now, before its client hears back
        // (after the whole transaction inside EXEC), and after the command is logged, as
        // Redis's handleClientsBlockedOnKeys runs after call().
        if !ready.is_empty() {
            if client.in_exec {
                client.deferred_ready.extend(ready);
            } else {
                self.serve_ready(ready);
            }
        }
    }

    /// The watched keys a whole-database command is about to change, if it is one.
    fn whole_db_changes(&self, spec: &CommandSpec, args: &[&[u8]], db: usize) -> Option<Vec<(usize, Key)>> {
        match spec.name.as_str() {
            "flushdb" => Some(self.live_watched_keys(&[db], &[])),
            "flushall" => Some(self.live_watched_keys(&(0..self.keyspace.databases()).collect::<Vec<_>>(), &[])),
            "swapdb" => {
                let parse = |a: &[u8]| quince_resp::parse_i64_strict(a).and_then(|n| usize::try_from(n).ok());
                let (a, b) = (parse(args.get(1)?)?, parse(args.get(2)?)?);
                if a >= self.keyspace.databases() || b >= self.keyspace.databases() || a == b {
                    return Some(Vec::new());
                }
                Some(self.live_watched_keys(&[a, b], &[a, b]))
            }
            _ => None,
        }
    }

    /// WATCH: a write command that changed anything flags its keys.
    fn touch_written_keys(&self, ctx: &mut Ctx<'_>, args: &[&[u8]], dirty_before: u64) {
        let changed = ctx.local_dirty.get() > 0 || ctx.table_dirty() != dirty_before;
        let db = ctx.client.db;
        match ctx.spec.name.as_str() {
            _ if changed => {
                // Keys the command only reads (a SORT or GEORADIUS source next to its STORE
                // destination) are not modified: Redis signals only the written ones.
                let read_only = crate::command::key_flags::RO;
                let spec = ctx.spec;
                for (pos, ks) in spec.keys_with_specs(args) {
                    if ks.flags & read_only == 0 && !ctx.unmodified_keys.contains(&pos) {
                        self.key_changed(Some(db), args[pos], Some(&mut *ctx.client));
                    }
                }
                // MOVE and COPY ... DB n change a key in another database too.
                if matches!(spec.name.as_str(), "move" | "copy") {
                    self.touch_watched(None, Some(args[1]));
                    if let Some(&dst) = args.get(2) {
                        self.touch_watched(None, Some(dst));
                    }
                }
            }
            _ => {}
        }
    }

    /// Serves the clients blocked on keys that became ready, FIFO per key. Serving one may
    /// make more keys ready (BLMOVE pushes), which are served in turn.
    pub(crate) fn serve_ready(&self, ready: Vec<(usize, Key)>) {
        let mut queue: std::collections::VecDeque<(usize, Key)> = ready.into();
        while let Some((db, key)) = queue.pop_front() {
            let shard = self.keyspace.shard_of(&key);
            let waiters = self.keyspace.lock(shard).dbs[db].waiters(&key);
            for waiter in waiters {
                let now = self.clock.now_ms();
                let exists = {
                    let mut guard = self.keyspace.lock(shard);
                    if self.effects_wanted() {
                        let table = &mut guard.dbs[db];
                        table.set_collect_events(table.collect_events | crate::keyspace::EVENT_EXPIRED_LOG);
                    }
                    let exists = guard.dbs[db].contains(&key, now);
                    // A key found expired here is logged as deleted now, under its lock.
                    if guard.dbs[db].has_expired_log() {
                        self.log_expired(db, guard.dbs[db].take_expired_log());
                    }
                    exists
                };
                // A missing key only matters to XREADGROUP waiters, which get an error when
                // their stream is deleted; the others would find nothing.
                let xreadgroup = waiter.args.first().is_some_and(|c| c.eq_ignore_ascii_case(b"xreadgroup"));
                if !exists && !xreadgroup {
                    continue;
                }
                queue.extend(self.serve_waiter(&waiter));
            }
        }
    }

    /// Re-runs a waiter's command under the locks of its keys. If it found something, its
    /// reply is handed to the waiter. Returns the keys the command itself made ready.
    fn serve_waiter(&self, waiter: &WaiterRef) -> Vec<(usize, Key)> {
        let args: SmallVec<[&[u8]; 8]> = waiter.args.iter().map(|a| &a[..]).collect();
        let Resolved::Found(spec) = self.table.resolve(&args) else { return Vec::new() };
        let Some(handler) = spec.handler else { return Vec::new() };
        let mut shards: SmallVec<[usize; 4]> =
            spec.key_positions(&args).map(|p| self.keyspace.shard_of(args[p])).collect();
        shards.sort_unstable();
        shards.dedup();
        let mut client = waiter.client.clone();
        let propagating = self.effects_wanted();
        let start_us = self.clock.now_us();
        let locked = shards.iter().map(|&s| (s, ShardAccess::Locked(self.keyspace.lock(s)))).collect();
        let mut ctx = Ctx {
            lent: false,
            engine: self,
            client: &mut client,
            spec,
            now_ms: start_us / 1000,
            access_mode: self.access_mode(),
            locked,
            serve: Some(ServeState::default()),
            local_dirty: std::cell::Cell::new(0),
            foreign_dirty: 0,
            notify_flags: self.hot.notify_flags.load(Ordering::Relaxed),
            propagating,
            propagation: None,
            force_propagation: false,
            expiry_suspended: false,
            later_ready: Vec::new(),
            unmodified_keys: SmallVec::new(),
        };
        if !waiter.is_waiting() {
            return Vec::new();
        }
        let mut reply = Vec::new();
        let mut enc = quince_resp::Encoder::new(&mut reply, waiter.client.protocol);
        let watching = self.watch_count.load(Ordering::SeqCst) > 0 || self.tracking.active();
        let dirty_before = if watching || propagating { ctx.table_dirty() } else { 0 };
        let result = handler(&mut ctx, &args, &mut enc);
        ctx.publish_db_events();
        if propagating {
            let wrote = ctx.local_dirty.get() > 0 || ctx.table_dirty() != dirty_before;
            ctx.record_effects(&args, wrote);
            self.hand_over_effects(ctx.client);
        }
        if watching {
            self.touch_written_keys(&mut ctx, &args, dirty_before);
        }
        let not_served = ctx.serve.as_ref().is_some_and(|s| s.not_served);
        // A key that changed type keeps its waiters blocked, as in Redis 7.0.
        if not_served || result == Err(CmdError::WrongType) {
            return ctx.take_ready();
        }
        let failed = result.is_err();
        if let Err(e) = result {
            let line = e.render(&spec.name);
            self.observe.errors.record(&line);
            ReplySink::error(&mut enc, &line);
        }
        for key in &waiter.keys {
            ctx.db(key).remove_waiter(key, waiter);
        }
        let ready = ctx.take_ready();
        // Its own invalidations (a BLMOVE's destination it read) follow its reply.
        let own = std::mem::take(&mut ctx.client.tracking_own);
        let handle = ctx.client.handle.clone();
        drop(ctx);
        if !own.is_empty() {
            crate::tracking::write_own(&mut enc, &handle, &self.clients, own);
        }
        self.blocked_count.fetch_sub(1, Ordering::SeqCst);
        waiter.finish(reply);
        let duration_us = (self.clock.now_us() - start_us).max(0) as u64;
        self.observe.record_call(spec.id, duration_us, self.latency_tracking());
        if failed {
            self.observe.commands[spec.id].failed_calls.fetch_add(1, Ordering::Relaxed);
        }
        self.log_if_slow(&waiter.client, spec, &args, start_us, duration_us);
        ready
    }

    /// Ends a wait by timeout, CLIENT UNBLOCK or disconnection, if it is still waiting.
    /// Returns whether it was.
    pub fn end_wait(&self, waiter: &WaiterRef, how: Unblock) -> bool {
        self.end_wait_with(waiter, how, None)
    }

    /// `end_wait`, the client getting `error` (a redirection) instead of the usual reply.
    pub(crate) fn end_wait_with(&self, waiter: &WaiterRef, how: Unblock, error: Option<&str>) -> bool {
        let db = waiter.client.db;
        let mut shards: SmallVec<[usize; 4]> = waiter.keys.iter().map(|k| self.keyspace.shard_of(k)).collect();
        shards.sort_unstable();
        shards.dedup();
        let mut locked: SmallVec<[(usize, MutexGuard<'_, Shard>); 2]> =
            shards.iter().map(|&s| (s, self.keyspace.lock(s))).collect();
        if !waiter.is_waiting() {
            return false;
        }
        for key in &waiter.keys {
            let shard = self.keyspace.shard_of(key);
            if let Some((_, guard)) = locked.iter_mut().find(|(s, _)| *s == shard) {
                guard.dbs[db].remove_waiter(key, waiter);
            }
        }
        self.blocked_count.fetch_sub(1, Ordering::SeqCst);
        match how {
            Unblock::Disconnect => waiter.abandon(),
            _ => {
                let spec_id = waiter.client.handle.last_command.load(Ordering::Relaxed);
                if let Some(stat) = self.observe.commands.get(spec_id) {
                    stat.record(0, self.latency_tracking());
                }
                if how == Unblock::Error {
                    self.observe.errors.record("UNBLOCKED client unblocked via CLIENT UNBLOCK");
                    if let Some(stat) = self.observe.commands.get(spec_id) {
                        stat.failed_calls.fetch_add(1, Ordering::Relaxed);
                    }
                }
                let reply = match error {
                    Some(line) => {
                        self.observe.errors.record(line);
                        waiter.error_reply(line)
                    }
                    None => waiter.unblock_reply(how),
                };
                waiter.finish(reply);
            }
        }
        true
    }

    /// The server becomes a replica: every blocked client gets an UNBLOCKED error (its
    /// wait would otherwise be served by writes the master never made).
    pub fn unblock_all_for_role_change(&self) {
        for handle in self.clients.all() {
            let waiter = handle.blocked_on.lock().clone();
            if let Some(waiter) = waiter {
                self.end_wait(&waiter, Unblock::RoleChange);
            }
        }
    }

    /// For the client's connection: the reply of a finished wait, clearing the blocked
    /// state. None while still waiting.
    pub fn blocked_reply(&self, client: &mut Client) -> Option<Vec<u8>> {
        let reply = client.blocked.as_ref()?.take_reply()?;
        client.blocked = None;
        *client.handle.blocked_on.lock() = None;
        client.handle.set_flag(crate::clients::flag::BLOCKED, false);
        Some(reply)
    }

    /// For the client's connection: ends the wait if its deadline has passed. Returns the
    /// deadline still ahead, if any.
    pub fn check_block_timeout(&self, client: &Client, now_ms: i64) -> Option<i64> {
        let waiter = client.blocked.as_ref()?;
        let deadline = waiter.deadline_ms?;
        if deadline <= now_ms {
            self.end_wait(waiter, Unblock::Timeout);
            None
        } else {
            Some(deadline)
        }
    }

    /// Slow log, latency events and MONITOR feeds for a command that ran.
    fn after_command(&self, client: &Client, spec: &CommandSpec, args: &[&[u8]], start_us: i64, duration_us: u64) {
        // A command that blocked is slow-logged when its wait ends (see `serve_waiter`).
        if client.blocked.is_none() {
            self.log_if_slow(client, spec, args, start_us, duration_us);
        }
        if self.clients.has_monitors()
            && !spec.has_flag(crate::command::flags::ADMIN)
            && !spec.has_flag(crate::command::flags::SKIP_MONITOR)
        {
            self.feed_monitors(client, spec, args);
        }
    }

    /// The slow log and latency events for a command that took `duration_us`.
    pub(crate) fn log_if_slow(
        &self,
        client: &Client,
        spec: &CommandSpec,
        args: &[&[u8]],
        start_us: i64,
        duration_us: u64,
    ) {
        let threshold = self.observe.slowlog_threshold_us.load(Ordering::Relaxed);
        if threshold >= 0 && duration_us >= threshold as u64 && !spec.has_flag(crate::command::flags::SKIP_SLOWLOG) {
            let max_len = self.observe.slowlog_max_len.load(Ordering::Relaxed) as usize;
            let redacted = redacted_args(spec, args);
            let args: Vec<&[u8]> = redacted.iter().map(|a| a.as_ref()).collect();
            self.observe.slowlog.lock().push(
                &args,
                duration_us,
                start_us / 1_000_000,
                client.handle.conn.addr.clone(),
                client.name().unwrap_or_default(),
                max_len,
            );
        }
        let latency_ms = self.observe.latency_threshold_ms.load(Ordering::Relaxed);
        if latency_ms > 0 && duration_us / 1000 >= latency_ms {
            let event = if spec.has_flag(crate::command::flags::FAST) { "fast-command" } else { "command" };
            self.observe.latency.lock().add(event, start_us / 1_000_000, duration_us / 1000);
        }
    }

    /// One MONITOR line: `+<secs>.<usecs> [<db> <addr>] "arg" ...`.
    fn feed_monitors(&self, client: &Client, spec: &CommandSpec, args: &[&[u8]]) {
        let now_us = self.clock.now_us();
        let origin = if client.in_script { "lua" } else { client.handle.conn.addr.as_str() };
        let mut line = format!("+{}.{:06} [{} {}]", now_us / 1_000_000, now_us % 1_000_000, client.db, origin);
        for arg in redacted_args(spec, args) {
            line.push(' ');
            line.push_str(&quote_repr(&arg));
        }
        line.push_str("\r\n");
        for monitor in self.clients.monitors() {
            monitor.push_output(line.as_bytes());
        }
    }

    /// An error before the command ran: counted as rejected (Redis's rejected_calls).
    /// A replica whose link to its master is down, with `replica-serve-stale-data no`
    /// (Redis's "running stale": only commands flagged `stale` run).
    pub(crate) fn running_stale(&self) -> bool {
        self.persistence().and_then(|p| p.role_refusal(self, false, false)).is_some()
    }

    /// A replica with `replica-read-only yes`.
    pub(crate) fn read_only_replica(&self) -> bool {
        self.persistence().and_then(|p| p.role_refusal(self, true, true)).is_some()
    }

    /// `latency-tracking`: whether calls go into the latency histograms.
    fn latency_tracking(&self) -> bool {
        self.hot.latency_tracking.load(Ordering::Relaxed)
    }

    fn reject(&self, spec: Option<&CommandSpec>, out: &mut dyn ReplySink, line: &str) {
        if let Some(spec) = spec {
            self.observe.commands[spec.id].rejected_calls.fetch_add(1, Ordering::Relaxed);
        }
        self.observe.errors.record(line);
        out.error(line);
    }
}

/// Which `Db` events a command's tables record under `notify-keyspace-events` flags.
pub(crate) fn db_event_mask(flags: i64) -> u8 {
    use crate::pubsub::notify;
    if flags == 0 {
        return 0;
    }
    let mut mask = 0;
    if flags & notify::EXPIRED != 0 {
        mask |= crate::keyspace::EVENT_EXPIRED;
    }
    if flags & notify::NEW != 0 {
        mask |= crate::keyspace::EVENT_NEW;
    }
    if flags & notify::KEY_MISS != 0 {
        mask |= crate::keyspace::EVENT_KEYMISS;
    }
    mask
}

impl Engine {
    /// Publishes `event` on `key` of database `db` to the keyspace and/or keyevent
    /// channels enabled in `flags`.
    pub(crate) fn notify_keyspace_event(&self, flags: i64, event: &str, key: &[u8], db: usize) {
        use crate::pubsub::{notification_channel, notify, Kind};
        if self.pubsub.is_idle() {
            return;
        }
        let now_ms = self.clock.now_ms();
        if flags & notify::KEYSPACE != 0 {
            let channel = notification_channel(true, db, key);
            self.pubsub.publish(Kind::Channel, &channel, event.as_bytes(), now_ms, None);
        }
        if flags & notify::KEYEVENT != 0 {
            let channel = notification_channel(false, db, event.as_bytes());
            self.pubsub.publish(Kind::Channel, &channel, key, now_ms, None);
        }
    }
}

/// A keyspace hit or miss, for read lookups that borrow the `Ctx` and can't call `Ctx::hit`.
pub(crate) fn count_hit(engine: &Engine, found: bool) {
    let counter = if found { &engine.stats.keyspace_hits } else { &engine.stats.keyspace_misses };
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Parameters whose values CONFIG SET never shows in the slow log or MONITOR.
const SENSITIVE_CONFIGS: &[&str] = &["masteruser", "masterauth", "requirepass"];

/// Arguments as the slow log and MONITOR show them: secrets replaced by `(redacted)`.
fn redacted_args<'a>(spec: &CommandSpec, args: &[&'a [u8]]) -> Vec<std::borrow::Cow<'a, [u8]>> {
    use std::borrow::Cow;
    let redact_from = match spec.name.as_str() {
        "auth" => Some(1),
        "hello" => args.iter().position(|a| a.eq_ignore_ascii_case(b"AUTH")).map(|p| p + 1),
        _ => None,
    };
    // MIGRATE's AUTH password and AUTH2 username and password (up to its KEYS).
    let mut migrate_secrets: SmallVec<[usize; 2]> = SmallVec::new();
    if spec.name == "migrate" {
        let mut j = 6;
        while j < args.len() {
            if args[j].eq_ignore_ascii_case(b"auth") {
                migrate_secrets.push(j + 1);
                j += 1;
            } else if args[j].eq_ignore_ascii_case(b"auth2") {
                migrate_secrets.extend([j + 1, j + 2]);
                j += 2;
            } else if args[j].eq_ignore_ascii_case(b"keys") {
                break;
            }
            j += 1;
        }
    }
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            let secret = match (spec.name.as_str(), redact_from) {
                ("auth", Some(from)) => i >= from,
                ("hello", Some(from)) => i == from || i == from + 1,
                ("migrate", _) => migrate_secrets.contains(&i),
                // ACL SETUSER: every argument after the subcommand (passwords among them).
                ("acl|setuser", _) => i >= 2,
                // CONFIG SET of a sensitive parameter (a password) hides the value.
                ("config|set", _) => {
                    i >= 3
                        && i % 2 == 1
                        && SENSITIVE_CONFIGS.iter().any(|c| args[i - 1].eq_ignore_ascii_case(c.as_bytes()))
                }
                _ => false,
            };
            if secret {
                Cow::Borrowed(&b"(redacted)"[..])
            } else {
                Cow::Borrowed(*a)
            }
        })
        .collect()
}

/// Redis's sdscatrepr: a double-quoted string with C escapes for non-printable bytes.
pub fn quote_repr(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('"');
    for &b in bytes {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            7 => s.push_str("\\a"),
            8 => s.push_str("\\b"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('"');
    s
}

fn is_subscription_command(name: &str) -> bool {
    matches!(name, "subscribe" | "unsubscribe" | "psubscribe" | "punsubscribe" | "ssubscribe" | "sunsubscribe")
}

/// A RESP2 client in subscribed mode may only (un)subscribe, PING, QUIT or RESET.
fn pubsub_context_error(client: &Client, spec: &CommandSpec) -> Option<String> {
    if client.protocol != Protocol::Resp2 || !client.handle.has_flag(crate::clients::flag::PUBSUB) {
        return None;
    }
    if is_subscription_command(&spec.name) || matches!(spec.name.as_str(), "ping" | "quit" | "reset") {
        return None;
    }
    Some(format!(
        "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
        spec.name
    ))
}

/// Is this `CLIENT REPLY ON` (the one command whose reply always gets through)?
fn is_client_reply_on(args: &[&[u8]]) -> bool {
    args.len() == 3
        && args[0].eq_ignore_ascii_case(b"client")
        && args[1].eq_ignore_ascii_case(b"reply")
        && args[2].eq_ignore_ascii_case(b"on")
}

/// How EXEC ended, for its command statistics (as Redis's call() and rejectCommand count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExecOutcome {
    /// Ran its queue, or aborted on a touched WATCH (a null reply, no error).
    Ran,
    /// Ran and replied with an error (EXECABORT after a command failed to queue).
    Failed,
    /// Refused before running, as processCommand refuses (MISCONF, OOM, BUSY...).
    Rejected,
}

/// The transaction gate as one command holds it.
#[allow(dead_code)]
enum Gate<'a> {
    Shared(crate::gate::SharedGate<'a>),
    Exclusive(crate::gate::ExclusiveGate<'a>),
    /// A command allowed while a script is busy runs without it.
    Bypass,
}

/// A sink that drops everything (suppressed replies).
/// A sink that drops every reply (CLIENT REPLY OFF, loading the append-only file).
pub struct NullSink(pub Protocol);

impl ReplySink for NullSink {
    fn protocol(&self) -> Protocol {
        self.0
    }
    fn set_protocol(&mut self, protocol: Protocol) {
        self.0 = protocol;
    }
    fn simple(&mut self, _: &str) {}
    fn error(&mut self, _: &str) {}
    fn integer(&mut self, _: i64) {}
    fn bulk(&mut self, _: &[u8]) {}
    fn null(&mut self) {}
    fn null_array(&mut self) {}
    fn array(&mut self, _: usize) {}
    fn map(&mut self, _: usize) {}
    fn set(&mut self, _: usize) {}
    fn double(&mut self, _: f64) {}
    fn boolean(&mut self, _: bool) {}
    fn verbatim(&mut self, _: &[u8; 3], _: &[u8]) {}
    fn attribute(&mut self, _: usize) {}
    fn push(&mut self, _: usize) {}
    fn big_number(&mut self, _: &[u8]) {}
}

/// `ERR unknown command '<name>', with args beginning with: '<a1>' '<a2>' ...`, with the
/// same 128-byte truncation as Redis.
fn unknown_command_error(args: &[&[u8]]) -> String {
    let mut listed = String::new();
    for arg in &args[1..] {
        if listed.len() >= 128 {
            break;
        }
        let room = 128 - listed.len();
        listed.push('\'');
        listed.push_str(&truncate_c(arg, room));
        listed.push_str("' ");
    }
    format!("ERR unknown command '{}', with args beginning with: {}", truncate_c(args[0], 128), listed)
}

/// Commands flagged TOUCHES_ARBITRARY_KEYS in Redis: their expired-key DELs are never
/// wrapped in MULTI/EXEC.
fn touches_arbitrary_keys(name: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b"randomkey") || name.eq_ignore_ascii_case(b"scan")
}

impl Engine {
    /// How the deletion of an expired key is logged: UNLINK under `lazyfree-lazy-expire`,
    /// DEL otherwise (Redis's deleteExpiredKeyAndPropagate).
    pub fn expired_deletion_command(&self) -> &'static [u8] {
        if self.config.read().get_bool("lazyfree-lazy-expire") {
            b"UNLINK"
        } else {
            b"DEL"
        }
    }
}

/// Whether a command touches only the keys it names (`has_keys`: it names some), so a
/// transaction or script holding their shards may run it with those locks.
pub(crate) fn confined(spec: &CommandSpec, has_keys: bool) -> bool {
    spec.named_keys_only && (has_keys || spec.keyspace_free)
}

/// Sets the command's classification flags the executor reads (`CommandTable::new`).
pub(crate) fn classify(spec: &mut CommandSpec) {
    spec.runs_script = crate::cmd::scripting::is_script_command(spec.name.as_bytes());
    spec.named_keys_only = !spec.exclusive && !finds_keys_at_run_time(&spec.name);
    spec.keyspace_free = keyspace_free(&spec.name);
}

/// Commands that lock shards of keys they only find while running (`Ctx::lock_extra`).
fn finds_keys_at_run_time(name: &str) -> bool {
    matches!(name, "sort" | "sort_ro" | "georadius" | "georadiusbymember" | "xread" | "xreadgroup")
}

/// Keyless commands that never touch the keyspace (a transaction holding shards may run
/// them; other keyless commands may visit every shard).
fn keyspace_free(name: &str) -> bool {
    matches!(name, "ping" | "echo" | "time" | "select" | "publish")
}
