//! Replication as Redis 7.0 speaks it (PSYNC2). One byte stream carries every write's
//! effects, in order, as RESP commands (SELECT on database changes, MULTI/EXEC around
//! transactions and scripts, PING and `REPLCONF GETACK *` from the master itself): the
//! offset of a byte in it names one point of the dataset's history, the replication ID
//! names the history. The last `repl-backlog-size` bytes stay in a backlog, so a replica
//! that lost its link continues from its offset (`+CONTINUE`) instead of loading a snapshot
//! again (`+FULLRESYNC`). A replica keeps its master's ID and offset and relays the
//! master's bytes verbatim to its own replicas; when promoted it keeps the old ID as its
//! secondary one, so the others continue from it too.
//!
//! This module is the stream's state on either role; `link` is the replica's side of a
//! connection to a master; `commands` the commands (SYNC, PSYNC, REPLCONF, WAIT, ROLE,
//! REPLICAOF).

pub mod backlog;
pub mod commands;
pub mod failover;
pub mod link;
pub mod transfer;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use quince_engine::blocking::{Unblock, WaiterRef};
use quince_engine::clients::{flag, ClientHandle};
use quince_engine::persistence::Effects;
use quince_engine::Engine;

use backlog::Backlog;

/// What a replica said of itself with REPLCONF before PSYNC.
#[derive(Debug, Clone, Default)]
pub struct ReplicaConf {
    pub listening_port: u16,
    /// `REPLCONF ip-address` (else the connection's peer address is shown).
    pub announced_ip: Option<String>,
    pub capa_eof: bool,
    pub capa_psync2: bool,
    /// `REPLCONF rdb-only 1`: the snapshot only, no stream (`redis-cli --rdb`).
    pub rdb_only: bool,
    /// `REPLCONF rdb-filter-only functions`: a snapshot of the functions only.
    pub functions_only: bool,
}

/// A connection receiving the stream.
struct Replica {
    handle: Arc<ClientHandle>,
    conf: ReplicaConf,
    /// The offset it last acknowledged (REPLCONF ACK).
    ack_offset: u64,
    /// Unix ms of its last acknowledgement (or of the sync).
    ack_ms: i64,
    /// It came by SYNC: it never acknowledges, so it is never timed out for that.
    pre_psync: bool,
    /// It has the stream flowing. A replica sent an EOF-marked snapshot gets the stream
    /// after its first ACK (it finds the mark at the end of what it reads, as Redis's
    /// replica does); until then the stream waits in `held`.
    online: bool,
    held: Vec<u8>,
    /// Its snapshot is still being written (INFO's `state=wait_bgsave`).
    transferring: bool,
}

/// A replica waiting for a full sync to start (`repl-diskless-sync-delay`, or a child
/// already running).
pub struct WaitingReplica {
    pub handle: Arc<ClientHandle>,
    conf: ReplicaConf,
    psync: bool,
    since_ms: i64,
}

impl Replica {
    fn ip(&self) -> String {
        self.conf.announced_ip.clone().unwrap_or_else(|| {
            let addr = &self.handle.conn.addr;
            addr.rsplit_once(':').map_or(addr.as_str(), |(ip, _)| ip).to_string()
        })
    }

    fn gone(&self) -> bool {
        self.handle.is_gone()
    }
}

/// INFO's sync counters (Stats section).
#[derive(Debug, Default, Clone, Copy)]
pub struct SyncCounts {
    pub full: u64,
    pub partial_ok: u64,
    pub partial_err: u64,
}

struct State {
    replid: String,
    /// The ID of the history we continued from (after a promotion), valid up to
    /// `second_offset`; "000…" and -1 when none.
    replid2: String,
    second_offset: i64,
    /// `master_repl_offset`: bytes of the stream so far.
    offset: u64,
    backlog: Option<Backlog>,
    /// The database the stream's last SELECT chose (None: the next write sends one).
    selected_db: Option<usize>,
    /// The database the stream is in at `offset` (a link continuing it starts there).
    stream_db: usize,
    replicas: Vec<Replica>,
    waiting: Vec<WaitingReplica>,
    /// Unix ms of the last newline sent to waiting replicas (their keepalive).
    last_newline_ms: i64,
    /// The running transfer that late replicas may join (a snapshot sent with its length):
    /// its receivers, and the ID and offset it is the dataset of.
    transfer: Option<(transfer::Receivers, String, u64)>,
    /// REPLCONF settings of connections that have not sent PSYNC yet, by client id.
    pending: Vec<(u64, ReplicaConf)>,
    /// Unix ms since when no replica is connected (for `repl-backlog-ttl`).
    alone_since_ms: i64,
    /// Unix ms of the last PING fed to replicas.
    last_ping_ms: i64,
    /// We are a replica: the stream is our master's, relayed by the link as it arrives,
    /// and our own writes' effects are not part of it.
    relaying: bool,
    counts: SyncCounts,
}

/// What a loaded RDB said of the replication history (its aux fields).
pub struct LoadedHistory {
    pub id: String,
    pub offset: u64,
    /// The database the stream was in.
    pub db: usize,
    /// Keys skipped at load because their TTL had passed (a master feeds their DELs).
    pub expired: Vec<(usize, Vec<u8>)>,
}

impl State {
    /// A new replication ID and no secondary one: nobody continues from the old history.
    fn start_new_history(&mut self) {
        self.replid = random_id();
        self.replid2 = NO_ID.to_string();
        self.second_offset = -1;
    }
}

/// WAIT calls blocked until enough replicas acknowledge an offset.
struct PendingWait {
    waiter: WaiterRef,
    offset: u64,
    replicas: usize,
}

/// The replication stream's state on this server.
pub struct Replication {
    state: Mutex<State>,
    /// Writes must be fed: a backlog exists or replicas are connected (read per write).
    active: AtomicBool,
    /// A copy of `State::offset` readable without the lock.
    offset: AtomicU64,
    replica_count: AtomicUsize,
    waits: Mutex<Vec<PendingWait>>,
    /// The `repl-id` / `repl-offset` of the last RDB loaded (a replica restarting).
    loaded_history: Mutex<Option<LoadedHistory>>,
}

const NO_ID: &str = "0000000000000000000000000000000000000000";

/// 40 random hex characters from the kernel's generator (a replication ID, a run ID).
pub fn random_id() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 20];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut bytes);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

impl Default for Replication {
    fn default() -> Self {
        Replication {
            state: Mutex::new(State {
                replid: random_id(),
                replid2: NO_ID.to_string(),
                second_offset: -1,
                offset: 0,
                backlog: None,
                selected_db: None,
                stream_db: 0,
                replicas: Vec::new(),
                waiting: Vec::new(),
                last_newline_ms: 0,
                transfer: None,
                pending: Vec::new(),
                alone_since_ms: now_ms(),
                last_ping_ms: 0,
                relaying: false,
                counts: SyncCounts::default(),
            }),
            active: AtomicBool::new(false),
            offset: AtomicU64::new(0),
            replica_count: AtomicUsize::new(0),
            waits: Mutex::new(Vec::new()),
            loaded_history: Mutex::new(None),
        }
    }
}

impl Replication {
    /// Whether writes must be fed to the stream.
    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// `master_repl_offset`.
    pub fn offset(&self) -> u64 {
        self.offset.load(Ordering::Relaxed)
    }

    /// Connected replicas.
    pub fn len(&self) -> usize {
        self.replica_count.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn counts(&self) -> SyncCounts {
        self.state.lock().counts
    }

    /// Output queued for the replicas, not yet sent (and the stream held for those still
    /// receiving their snapshot).
    pub fn pending_output_bytes(&self) -> usize {
        let state = self.state.lock();
        state.replicas.iter().filter(|r| !r.gone()).map(|r| r.handle.output_memory() + r.held.capacity()).sum()
    }

    /// CONFIG SET repl-backlog-size: the backlog keeps its newest bytes.
    pub fn resize_backlog(&self, size: usize) {
        let mut state = self.state.lock();
        if let Some(backlog) = &mut state.backlog {
            if backlog.size() != size {
                backlog.resize(size);
            }
        }
    }

    /// The backlog's allocated bytes (0 without one).
    pub fn backlog_bytes(&self) -> usize {
        self.state.lock().backlog.as_ref().map_or(0, |b| b.size())
    }

    pub fn reset_counts(&self) {
        self.state.lock().counts = SyncCounts::default();
    }

    /// What a snapshot records of the history (Redis's rdbPopulateSaveInfo): the ID and
    /// offset while a backlog keeps the stream, so a replica restarting from the file
    /// continues with a partial resync.
    pub fn history_for_save(&self) -> Option<(String, u64, usize)> {
        let state = self.state.lock();
        state.backlog.as_ref().map(|_| (state.replid.clone(), state.offset, state.stream_db))
    }

    /// The history an RDB just loaded recorded, and the expired keys it skipped.
    pub fn note_loaded_history(&self, id: String, offset: u64, db: usize, expired: Vec<(usize, Vec<u8>)>) {
        *self.loaded_history.lock() = Some(LoadedHistory { id, offset, db, expired });
    }

    pub fn take_loaded_history(&self) -> Option<LoadedHistory> {
        self.loaded_history.lock().take()
    }

    /// The database the stream is in at its current offset.
    pub fn stream_db(&self) -> usize {
        self.state.lock().stream_db
    }

    /// (replication ID, offset): what a replica asks to continue from (PSYNC id offset+1).
    pub fn position(&self) -> (String, u64) {
        let state = self.state.lock();
        (state.replid.clone(), state.offset)
    }

    fn refresh(&self, state: &State) {
        self.offset.store(state.offset, Ordering::SeqCst);
        self.replica_count.store(state.replicas.len(), Ordering::SeqCst);
        self.active.store(state.backlog.is_some() || !state.replicas.is_empty(), Ordering::SeqCst);
    }

    /// One write's effects (ours, as a master). Relayed streams come through `relay`.
    pub fn feed(&self, effects: &Effects) {
        let mut state = self.state.lock();
        if state.relaying {
            return;
        }
        let mut bytes = Vec::new();
        let State { selected_db, .. } = &mut *state;
        crate::aof::writer::encode_effects_for_replicas(effects, selected_db, &mut bytes);
        state.stream_db = state.selected_db.unwrap_or(state.stream_db);
        Self::append(&mut state, &bytes);
        self.refresh(&state);
    }

    /// A command of the master itself (PING, REPLCONF GETACK), sent without a SELECT.
    fn feed_own_command(&self, state: &mut State, args: &[&[u8]]) {
        let mut bytes = Vec::new();
        quince_resp::encode_command(&mut bytes, args);
        Self::append(state, &bytes);
        self.refresh(state);
    }

    /// Bytes of our master's stream, as they arrived (a replica relays them verbatim),
    /// after which the stream is in database `db`.
    pub fn relay(&self, bytes: &[u8], db: usize) {
        let mut state = self.state.lock();
        state.stream_db = db;
        Self::append(&mut state, bytes);
        self.refresh(&state);
    }

    fn append(state: &mut State, bytes: &[u8]) {
        if state.backlog.is_none() && state.replicas.is_empty() {
            // Nothing keeps the stream: the offset stays (Redis's replicationFeedSlaves).
            return;
        }
        state.offset += bytes.len() as u64;
        if let Some(backlog) = &mut state.backlog {
            backlog.feed(bytes);
        }
        state.replicas.retain(|r| !r.gone());
        for replica in &mut state.replicas {
            if replica.online {
                replica.handle.push_output(bytes);
            } else {
                replica.held.extend_from_slice(bytes);
            }
        }
    }

    /// REPLCONF settings of a connection that will sync.
    pub fn note_conf(&self, client_id: u64, update: impl FnOnce(&mut ReplicaConf)) {
        let mut state = self.state.lock();
        let index = match state.pending.iter().position(|(id, _)| *id == client_id) {
            Some(index) => index,
            None => {
                // Connections that never sync leave an entry: the oldest go first.
                if state.pending.len() >= 1024 {
                    state.pending.remove(0);
                }
                state.pending.push((client_id, ReplicaConf::default()));
                state.pending.len() - 1
            }
        };
        update(&mut state.pending[index].1);
    }

    /// The snapshot kind the first waiting replica wants (functions only or all).
    pub fn waiting_functions_only(&self) -> bool {
        self.state.lock().waiting.first().is_some_and(|w| w.conf.functions_only)
    }

    /// Whether a connection about to sync said `REPLCONF capa eof`.
    pub fn pending_capa_eof(&self, client_id: u64) -> bool {
        self.state.lock().pending.iter().any(|(id, c)| *id == client_id && c.capa_eof)
    }

    fn take_conf(state: &mut State, client_id: u64) -> ReplicaConf {
        match state.pending.iter().position(|(id, _)| *id == client_id) {
            Some(index) => state.pending.remove(index).1,
            None => ReplicaConf::default(),
        }
    }

    fn ensure_backlog(state: &mut State, size: usize) {
        if state.backlog.is_none() {
            state.backlog = Some(Backlog::new(size, state.offset + 1));
            // A new backlog starts a history of its own (Redis's createReplicationBacklog
            // with no replicas yet: the ID changes so nobody continues from the old one).
            if state.replicas.is_empty() && !state.relaying {
                state.start_new_history();
            }
        }
    }

    /// PSYNC `replid` `from` (the first offset the replica lacks): continues the stream for
    /// `handle` from the backlog when it holds that point of this history, writing
    /// `+CONTINUE`. Returns false (nothing written) when a full sync is needed.
    pub fn try_continue(&self, handle: &Arc<ClientHandle>, replid: &str, from: i64, now_ms: i64) -> Result<(), String> {
        let mut state = self.state.lock();
        let ours = replid.eq_ignore_ascii_case(&state.replid);
        let previous = replid.eq_ignore_ascii_case(&state.replid2) && from <= state.second_offset;
        if !ours && !previous {
            if replid != "?" {
                state.counts.partial_err += 1;
                return Err(if replid.eq_ignore_ascii_case(&state.replid2) {
                    format!(
                        "Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '{replid}', \
                         my replication IDs are '{}' and '{}'), and the requested offset {from} is above the secondary \
                         ID's last valid offset {}",
                        state.replid, state.replid2, state.second_offset
                    )
                } else {
                    format!(
                        "Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '{replid}', \
                         my replication IDs are '{}' and '{}')",
                        state.replid, state.replid2
                    )
                });
            }
            return Err("Full resync requested by replica".into());
        }
        let Some(missing) = state.backlog.as_ref().and_then(|b| if from < 0 { None } else { b.since(from as u64) })
        else {
            state.counts.partial_err += 1;
            return Err(format!(
                "Unable to partial resync with replica: lack of backlog (Replica request was: {from})."
            ));
        };
        let conf = Self::take_conf(&mut state, handle.id);
        let line = if conf.capa_psync2 { format!("+CONTINUE {}\r\n", state.replid) } else { "+CONTINUE\r\n".into() };
        handle.set_flag(flag::REPLICA, true);
        handle.push_output(line.as_bytes());
        handle.push_output(&missing);
        Self::first_ping_later(&mut state, now_ms);
        state.replicas.push(Replica {
            handle: handle.clone(),
            conf,
            ack_offset: 0,
            ack_ms: now_ms,
            pre_psync: false,
            online: true,
            held: Vec::new(),
            transferring: false,
        });
        state.counts.partial_ok += 1;
        self.refresh(&state);
        Ok(())
    }

    /// Before a full sync's snapshot: the backlog exists (the replica continues from it
    /// later), and the history the snapshot is a point of: (ID, offset, database 0).
    pub fn prepare_full_sync(&self, backlog_size: usize) -> (String, u64, usize) {
        let mut state = self.state.lock();
        Self::ensure_backlog(&mut state, backlog_size);
        self.refresh(&state);
        (state.replid.clone(), state.offset, 0)
    }

    /// A full sync waits for the transfer that serves it: `repl-diskless-sync-delay` for
    /// more replicas to share one snapshot, or the child running now to end.
    pub fn queue_full_sync(&self, handle: &Arc<ClientHandle>, psync: bool, now_ms: i64) {
        let mut state = self.state.lock();
        let conf = Self::take_conf(&mut state, handle.id);
        handle.set_flag(flag::REPLICA, true);
        state.waiting.push(WaitingReplica { handle: handle.clone(), conf, psync, since_ms: now_ms });
    }

    /// Whether waiting full syncs may start: the oldest waited `delay_s`, or
    /// `max_replicas` (> 0) are waiting. Sends waiting replicas their newline keepalive.
    pub fn waiting_syncs_due(&self, delay_s: i64, max_replicas: i64, now_ms: i64) -> bool {
        let mut state = self.state.lock();
        state.waiting.retain(|w| !w.handle.is_gone());
        let Some(oldest) = state.waiting.iter().map(|w| w.since_ms).min() else { return false };
        if now_ms - state.last_newline_ms >= 1000 {
            state.last_newline_ms = now_ms;
            for waiting in &state.waiting {
                waiting.handle.push_output(b"\n");
            }
        }
        now_ms - oldest >= delay_s * 1000 || (max_replicas > 0 && state.waiting.len() as i64 >= max_replicas)
    }

    /// The replicas waiting for a full sync, taken for the transfer about to start.
    /// Those that want the same snapshot as the first (all keys, or functions only); the
    /// others wait for the next transfer.
    pub fn take_waiting(&self) -> Vec<WaitingReplica> {
        let mut state = self.state.lock();
        state.waiting.retain(|w| !w.handle.is_gone());
        let Some(functions_only) = state.waiting.first().map(|w| w.conf.functions_only) else { return Vec::new() };
        let (now, later): (Vec<_>, Vec<_>) =
            std::mem::take(&mut state.waiting).into_iter().partition(|w| w.conf.functions_only == functions_only);
        state.waiting = later;
        now
    }

    pub fn has_waiting(&self) -> bool {
        !self.state.lock().waiting.is_empty()
    }

    /// A waiting replica joins the transfer of a snapshot taken now (the caller holds the
    /// gate exclusively and forks right after): `+FULLRESYNC id offset` (PSYNC; not SYNC)
    /// and, for the EOF-marked format, `$EOF:<mark>`; the snapshot follows from the
    /// transfer, the stream after it (held until then). Returns whether it reads the EOF
    /// format.
    pub fn attach_for_transfer(&self, waiting: WaitingReplica, mark: &str, eof_allowed: bool, now_ms: i64) -> bool {
        let mut state = self.state.lock();
        // The stream after the snapshot must say which database it writes to.
        state.selected_db = None;
        let eof = eof_allowed && waiting.conf.capa_eof;
        let mut header =
            if waiting.psync { format!("+FULLRESYNC {} {}\r\n", state.replid, state.offset) } else { String::new() };
        if eof {
            header.push_str(&format!("$EOF:{mark}\r\n"));
        }
        let handle = waiting.handle;
        handle.set_flag(flag::REPLICA, true);
        handle.push_output(header.as_bytes());
        if waiting.conf.rdb_only {
            // The snapshot only: it gets no stream and is not a replica for WAIT or INFO.
            state.counts.full += 1;
            return eof;
        }
        let offset = state.offset;
        Self::first_ping_later(&mut state, now_ms);
        state.replicas.push(Replica {
            handle: handle.clone(),
            conf: waiting.conf,
            ack_offset: offset,
            ack_ms: now_ms,
            pre_psync: !waiting.psync,
            online: false,
            held: Vec::new(),
            transferring: true,
        });
        state.counts.full += 1;
        self.refresh(&state);
        eof
    }

    /// The snapshot of an EOF-format replica is all sent (the stream follows its first ACK).
    pub fn transfer_done(&self, client_id: u64) {
        let mut state = self.state.lock();
        if let Some(replica) = state.replicas.iter_mut().find(|r| r.handle.id == client_id) {
            replica.transferring = false;
        }
    }

    /// A transfer sending its snapshot with its length started: replicas asking for a full
    /// sync meanwhile join it (Redis attaches them to the BGSAVE in progress).
    pub fn transfer_started(&self, receivers: transfer::Receivers, id: String, offset: u64) {
        self.state.lock().transfer = Some((receivers, id, offset));
    }

    pub fn transfer_finished(&self) {
        self.state.lock().transfer = None;
    }

    /// Joins the running transfer if there is one: the replica gets `+FULLRESYNC` with the
    /// transfer's ID and offset, and the stream a replica of it holds since then.
    pub fn join_transfer(&self, handle: &Arc<ClientHandle>, psync: bool, now_ms: i64) -> bool {
        let mut state = self.state.lock();
        let Some((receivers, id, offset)) = state.transfer.clone() else { return false };
        let wants =
            state.pending.iter().find(|(cid, _)| *cid == handle.id).map(|(_, c)| (c.rdb_only, c.functions_only));
        if wants.is_some_and(|(rdb_only, functions_only)| rdb_only || functions_only) {
            return false;
        }
        let mut list = receivers.lock();
        let Some(held) = state
            .replicas
            .iter()
            .find(|r| r.transferring && !r.gone() && list.iter().any(|x| x.handle.id == r.handle.id))
            .map(|r| r.held.clone())
        else {
            return false;
        };
        let conf = Self::take_conf(&mut state, handle.id);
        handle.set_flag(flag::REPLICA, true);
        if psync {
            handle.push_output(format!("+FULLRESYNC {id} {offset}\r\n").as_bytes());
        }
        state.replicas.push(Replica {
            handle: handle.clone(),
            conf,
            ack_offset: offset,
            ack_ms: now_ms,
            pre_psync: !psync,
            online: false,
            held,
            transferring: true,
        });
        state.counts.full += 1;
        list.push(transfer::Receiver { handle: handle.clone(), eof: false });
        drop(list);
        self.refresh(&state);
        true
    }

    /// The replica has its whole snapshot: the stream held meanwhile follows, and flows.
    pub fn set_online(&self, client_id: u64) {
        let mut state = self.state.lock();
        if let Some(replica) = state.replicas.iter_mut().find(|r| r.handle.id == client_id) {
            replica.online = true;
            replica.transferring = false;
            let held = std::mem::take(&mut replica.held);
            replica.handle.push_output(&held);
        }
    }

    /// The first replica to connect gets its first PING a period later, not at once.
    fn first_ping_later(state: &mut State, now_ms: i64) {
        if state.replicas.iter().all(Replica::gone) {
            state.last_ping_ms = now_ms;
        }
    }

    /// REPLCONF ACK from a replica's connection; ends WAITs that now have their replicas.
    pub fn ack(&self, engine: &Engine, client_id: u64, offset: u64, now_ms: i64) {
        {
            let mut state = self.state.lock();
            let Some(replica) = state.replicas.iter_mut().find(|r| r.handle.id == client_id) else { return };
            replica.ack_offset = replica.ack_offset.max(offset);
            replica.ack_ms = now_ms;
            if !replica.online {
                replica.online = true;
                let held = std::mem::take(&mut replica.held);
                replica.handle.push_output(&held);
            }
        }
        self.serve_waits(engine);
    }

    /// Replicas that acknowledged `offset` or later.
    pub fn acked(&self, offset: u64) -> usize {
        self.state.lock().replicas.iter().filter(|r| !r.gone() && !r.transferring && r.ack_offset >= offset).count()
    }

    /// A WAIT blocked for `replicas` acknowledgements of `offset`; asks replicas to ack.
    /// While clients are paused no GETACK is sent (the offset stays still); replicas
    /// acknowledge every second anyway.
    pub fn add_wait(&self, waiter: WaiterRef, offset: u64, replicas: usize, paused: bool) {
        self.waits.lock().push(PendingWait { waiter, offset, replicas });
        if !paused {
            self.request_acks();
        }
    }

    /// Feeds `REPLCONF GETACK *`: every replica answers with its offset at once.
    pub fn request_acks(&self) {
        let mut state = self.state.lock();
        if state.relaying || state.replicas.is_empty() {
            return;
        }
        self.feed_own_command(&mut state, &[b"REPLCONF", b"GETACK", b"*"]);
    }

    fn serve_waits(&self, engine: &Engine) {
        let mut waits = self.waits.lock();
        waits.retain(|wait| {
            if !wait.waiter.is_waiting() {
                return false;
            }
            if self.acked(wait.offset) >= wait.replicas {
                // The wait ends with its count reply, as at its deadline.
                engine.end_wait(&wait.waiter, Unblock::Timeout);
                return false;
            }
            true
        });
    }

    /// Replicas whose last ACK is at most `max_lag_s` seconds old.
    pub fn good_replicas(&self, max_lag_s: i64, now_ms: i64) -> usize {
        let state = self.state.lock();
        state
            .replicas
            .iter()
            .filter(|r| !r.gone() && !r.pre_psync && !r.transferring && (now_ms - r.ack_ms) / 1000 <= max_lag_s)
            .count()
    }

    /// Once every ~100 ms: PINGs every `repl-ping-replica-period`, drops replicas silent
    /// for `repl-timeout`, frees the backlog after `repl-backlog-ttl` alone, follows
    /// `repl-backlog-size`, ends WAITs whose replicas answered.
    pub fn cron(&self, engine: &Engine, log: &dyn Fn(&str)) {
        let now = now_ms();
        let (ping_period_s, timeout_s, ttl_s, size) = {
            let config = engine.config.read();
            (
                config.get_int("repl-ping-replica-period").max(1),
                config.get_int("repl-timeout").max(1),
                config.get_int("repl-backlog-ttl"),
                config.get_int("repl-backlog-size").max(1) as usize,
            )
        };
        // While a command runs alone (DEBUG SLEEP, a long script) the master is as still
        // as Redis's blocked event loop: no PING, no keepalive.
        let Some(_gate) = engine.try_shared_gate() else { return };
        {
            let mut state = self.state.lock();
            state.replicas.retain(|r| !r.gone());
            for replica in &state.replicas {
                if !replica.pre_psync && now - replica.ack_ms > timeout_s * 1000 {
                    log(&format!(
                        "Disconnecting timedout replica (streaming sync): {}:{}",
                        replica.ip(),
                        replica.conf.listening_port
                    ));
                    replica.handle.kill();
                }
            }
            if let Some(backlog) = &mut state.backlog {
                if backlog.size() != size {
                    backlog.resize(size);
                }
            }
            if !state.replicas.is_empty() {
                state.alone_since_ms = now;
                // Not while clients are paused (a FAILOVER waits for the offsets to meet).
                if !state.relaying && now - state.last_ping_ms >= ping_period_s * 1000 && !engine.clients_paused() {
                    state.last_ping_ms = now;
                    self.feed_own_command(&mut state, &[b"PING"]);
                }
            } else if !state.relaying
                && ttl_s > 0
                && state.backlog.is_some()
                && now - state.alone_since_ms > ttl_s * 1000
            {
                // Redis's freeReplicationBacklog after the TTL: a new history begins.
                state.backlog = None;
                state.start_new_history();
                log(&format!("Replication backlog freed after {ttl_s} seconds without connected replicas."));
            }
            self.refresh(&state);
        }
        self.serve_waits(engine);
    }

    /// Closes every replica's connection (they sync again, partially when they can).
    pub fn disconnect_all(&self) {
        let mut state = self.state.lock();
        for replica in state.replicas.drain(..) {
            replica.handle.kill();
        }
        for waiting in state.waiting.drain(..) {
            waiting.handle.kill();
        }
        self.refresh(&state);
    }

    /// We become a replica: our stream is the master's from now on.
    pub fn start_relaying(&self) {
        let mut state = self.state.lock();
        state.relaying = true;
        state.selected_db = None;
    }

    /// We become a master again (REPLICAOF NO ONE): the history so far stays valid under
    /// the secondary ID up to here, a new ID continues it (Redis's shiftReplicationId).
    pub fn promote(&self) {
        let mut state = self.state.lock();
        state.replid2 = std::mem::replace(&mut state.replid, random_id());
        state.second_offset = state.offset as i64 + 1;
        state.relaying = false;
        state.selected_db = None;
        self.refresh(&state);
    }

    /// A full sync from our master is loaded: its history (ID and offset) becomes ours,
    /// with a fresh backlog.
    pub fn adopt_master_history(&self, replid: &str, offset: u64, stream_db: usize, backlog_size: usize) {
        let mut state = self.state.lock();
        state.replid = replid.to_string();
        state.replid2 = NO_ID.to_string();
        state.second_offset = -1;
        state.offset = offset;
        state.stream_db = stream_db;
        state.backlog = Some(Backlog::new(backlog_size, offset + 1));
        self.refresh(&state);
    }

    /// The master continued our stream under a new ID (it was promoted): our old ID stays
    /// valid up to here as the secondary one.
    pub fn switch_master_id(&self, replid: &str) {
        let mut state = self.state.lock();
        if state.replid != replid {
            state.replid2 = std::mem::replace(&mut state.replid, replid.to_string());
            state.second_offset = state.offset as i64 + 1;
        }
        if state.backlog.is_none() {
            let offset = state.offset;
            state.backlog = Some(Backlog::new(1 << 20, offset + 1));
        }
        self.refresh(&state);
    }

    /// DEBUG CHANGE-REPL-ID: a new ID, and no secondary one (Redis's changeReplicationId
    /// and clearReplicationId2).
    pub fn change_id(&self) {
        let mut state = self.state.lock();
        state.start_new_history();
    }

    /// A master restarted from a snapshot of its own: the history it recorded stays valid
    /// as the secondary ID up to that offset, so its replicas continue partially; the
    /// deletions of keys that expired meanwhile come first in the stream (Redis's
    /// loadDataFromDisk with a valid rdbSaveInfo).
    pub fn restore_as_master(&self, history: LoadedHistory, del: &[u8], backlog_size: usize) {
        let mut state = self.state.lock();
        state.backlog = Some(Backlog::new(backlog_size, 1));
        state.offset = 0;
        state.selected_db = None;
        for (db, key) in &history.expired {
            let mut effects = Effects::default();
            effects.push(*db, &[del, &key[..]]);
            let mut bytes = Vec::new();
            let State { selected_db, .. } = &mut *state;
            crate::aof::writer::encode_effects_for_replicas(&effects, selected_db, &mut bytes);
            Self::append(&mut state, &bytes);
        }
        state.stream_db = state.selected_db.unwrap_or(history.db);
        // The stream so far continues the recorded one.
        state.offset += history.offset;
        if let Some(backlog) = &mut state.backlog {
            backlog.rebase(history.offset);
        }
        state.replid2 = history.id;
        state.second_offset = history.offset as i64 + 1;
        state.alone_since_ms = now_ms();
        self.refresh(&state);
    }

    /// A failed full sync left no valid history: the next sync must be full.
    pub fn forget_history(&self) {
        let mut state = self.state.lock();
        state.start_new_history();
        state.backlog = None;
        self.refresh(&state);
    }

    fn find<'s>(state: &'s State, host: &str, port: i64) -> Option<&'s Replica> {
        state.replicas.iter().find(|r| !r.gone() && r.ip() == host && i64::from(r.conf.listening_port) == port)
    }

    /// Whether `host:port` is a replica, and if so whether it is online.
    pub fn replica_state(&self, host: &str, port: i64) -> Option<bool> {
        let state = self.state.lock();
        Self::find(&state, host, port).map(|r| !r.transferring)
    }

    /// The offset `host:port` acknowledged, if it is an online replica.
    pub fn acked_by(&self, host: &str, port: u16) -> Option<u64> {
        let state = self.state.lock();
        Self::find(&state, host, i64::from(port)).filter(|r| !r.transferring).map(|r| r.ack_offset)
    }

    /// An online replica that acknowledged exactly `offset`: (address, listening port).
    pub fn replica_with_offset(&self, offset: u64) -> Option<(String, u16)> {
        let state = self.state.lock();
        state
            .replicas
            .iter()
            .find(|r| !r.gone() && !r.transferring && r.ack_offset == offset)
            .map(|r| (r.ip(), r.conf.listening_port))
    }

    /// ROLE's master reply: (offset, [(ip, port, acked offset)]).
    pub fn role(&self) -> (u64, Vec<(String, u16, u64)>) {
        let state = self.state.lock();
        let replicas = state
            .replicas
            .iter()
            .filter(|r| !r.gone() && !r.transferring)
            .map(|r| (r.ip(), r.conf.listening_port, r.ack_offset))
            .collect();
        (state.offset, replicas)
    }

    /// The common part of INFO's replication section, from `connected_slaves` on.
    pub fn info(&self, good_replicas: Option<usize>, backlog_size: usize, failover_state: &str) -> String {
        use std::fmt::Write;
        let now = now_ms();
        let state = self.state.lock();
        let live: Vec<&Replica> = state.replicas.iter().filter(|r| !r.gone()).collect();
        let mut s = format!("connected_slaves:{}\r\n", live.len() + state.waiting.len());
        if let Some(good) = good_replicas {
            let _ = write!(s, "min_slaves_good_slaves:{good}\r\n");
        }
        for (i, replica) in live.iter().enumerate() {
            let _ = write!(
                s,
                "slave{i}:ip={},port={},state={},offset={},lag={}\r\n",
                replica.ip(),
                replica.conf.listening_port,
                if replica.transferring { "wait_bgsave" } else { "online" },
                if replica.transferring { 0 } else { replica.ack_offset },
                if replica.transferring { 0 } else { (now - replica.ack_ms).max(0) / 1000 }
            );
        }
        for (i, waiting) in state.waiting.iter().enumerate() {
            let addr = &waiting.handle.conn.addr;
            let ip = waiting
                .conf
                .announced_ip
                .clone()
                .unwrap_or_else(|| addr.rsplit_once(':').map_or(addr.as_str(), |(ip, _)| ip).to_string());
            let _ = write!(
                s,
                "slave{}:ip={ip},port={},state=wait_bgsave,offset=0,lag=0\r\n",
                live.len() + i,
                waiting.conf.listening_port
            );
        }
        let _ = write!(
            s,
            "master_failover_state:{failover_state}\r\nmaster_replid:{}\r\nmaster_replid2:{}\r\nmaster_repl_offset:{}\r\n\
             second_repl_offset:{}\r\nrepl_backlog_active:{}\r\nrepl_backlog_size:{}\r\n\
             repl_backlog_first_byte_offset:{}\r\nrepl_backlog_histlen:{}\r\n",
            state.replid,
            state.replid2,
            state.offset,
            state.second_offset,
            u8::from(state.backlog.is_some()),
            state.backlog.as_ref().map_or(backlog_size, |b| b.size()),
            state.backlog.as_ref().map_or(0, |b| b.first_offset()),
            state.backlog.as_ref().map_or(0, |b| b.held()),
        );
        s
    }
}
