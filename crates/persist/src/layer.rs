//! The persistence layer as the engine sees it (`quince_engine::persistence::Persistence`):
//! the AOF it feeds, RDB snapshots, background children, save points, INFO persistence,
//! and the refusal of writes (MISCONF) when saving or logging fails.

use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use quince_engine::persistence::{Effects, Persistence};
use quince_engine::Engine;

use crate::aof::load::{self as aof_load, FileOutcome};
use crate::aof::manifest::{self, Manifest};
use crate::aof::writer::{AofWriter, FsyncPolicy};
use crate::fork::{self, ChildExit, ChildPid};
use crate::snapshot;

/// Log levels the host maps to its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Verbose,
    Notice,
    Warning,
}

/// Where the layer's log lines go (the server's log).
pub type Logger = Arc<dyn Fn(LogLevel, &str) + Send + Sync>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AofState {
    Off,
    On,
    /// Turned on at run time: logging into a temporary incremental file until the first
    /// rewrite writes the base.
    WaitRewrite,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChildKind {
    Rdb,
    Aof,
}

#[derive(Debug)]
struct Child {
    kind: ChildKind,
    pid: ChildPid,
    started_ms: i64,
    /// `dirty` when the child was forked (what a successful save covers).
    dirty_at_fork: u64,
    /// The file the child writes.
    temp: PathBuf,
    /// The child writes a snapshot for replicas (into a pipe), not the RDB file.
    to_replicas: bool,
    /// Its progress reports (`child_info`), and what it has said so far.
    info: Option<crate::child_info::InfoPipe>,
    progress: ChildProgress,
}

/// A child's progress as INFO persistence shows it (Redis's stat_current_cow_*,
/// stat_current_save_keys_*).
#[derive(Debug, Default, Clone, Copy)]
struct ChildProgress {
    /// Keys in the dataset when it forked.
    keys_total: u64,
    keys_done: u64,
    cow_bytes: u64,
    cow_peak: u64,
    /// When the child measured `cow_bytes`, Unix ms (0: not yet).
    cow_at_ms: i64,
    /// The child's last report came: `cow_bytes` is its final figure.
    finished: bool,
}

impl Child {
    /// Takes in what the child reported since the last look.
    fn read_reports(&mut self) {
        let Some(pipe) = self.info.as_mut() else { return };
        for report in pipe.drain() {
            let p = &mut self.progress;
            p.keys_done = report.keys;
            p.cow_bytes = report.cow_bytes;
            p.cow_peak = p.cow_peak.max(report.cow_bytes);
            p.cow_at_ms = report.at_ms;
            p.finished |= report.last;
        }
    }
}

/// Keys in every database (what a child forked now will write).
fn total_keys(engine: &Engine) -> u64 {
    (0..engine.keyspace.databases()).map(|db| engine.keyspace.db_len(db) as u64).sum()
}

#[derive(Debug)]
struct State {
    child: Option<Child>,
    lastsave_s: i64,
    last_bgsave_ok: bool,
    last_bgsave_try_s: i64,
    last_bgsave_duration_s: i64,
    rdb_saves: u64,
    dirty_at_last_save: u64,
    bgsave_scheduled: bool,
    aof: AofState,
    manifest: Manifest,
    aof_rewrites: u64,
    last_rewrite_ok: bool,
    /// Rewrites failed in a row (INFO aof_rewrites_consecutive_failures); from
    /// `REWRITE_LIMIT_THRESHOLD` on, automatic rewrites are spaced out (`rewrite_limited`).
    rewrite_failures: u64,
    /// The limit's current delay, and when the next automatic rewrite may start.
    limit_delay_minutes: i64,
    limit_next_rewrite_s: i64,
    last_rewrite_duration_s: i64,
    rewrite_scheduled: bool,
    /// `appendonly yes` was set and the AOF must start (at the next cron, under the gate).
    aof_start_pending: bool,
    aof_base_size: u64,
    /// The temporary incremental file used while in `WaitRewrite`.
    temp_incr: Option<String>,
    last_write_error: Option<String>,
    /// Copy-on-write of the last snapshot and rewrite children (`rdb_last_cow_size`,
    /// `aof_last_cow_size`).
    rdb_last_cow_bytes: u64,
    aof_last_cow_bytes: u64,
}

pub struct Layer {
    state: Mutex<State>,
    /// The open incremental file, when the AOF is on; swapped under the exclusive gate.
    aof: RwLock<Option<Arc<AofWriter>>>,
    /// Effects are wanted: the AOF is on and nothing is loading.
    logging: AtomicBool,
    loading: AtomicBool,
    /// A replica receives a snapshot with `repl-diskless-load swapdb` while serving the
    /// dataset it had (INFO's `async_loading`).
    pub(crate) async_loading: AtomicBool,
    /// Writes are refused (MISCONF); the reason is in `State`.
    refusing: AtomicBool,
    /// Connections that asked for the replication stream (SYNC).
    pub replication: Arc<crate::replication::Replication>,
    /// The link to our master when we are a replica (REPLICAOF).
    master: Mutex<Option<crate::replication::link::MasterLink>>,
    /// A FAILOVER under way.
    pub(crate) failover: Mutex<Option<crate::replication::failover::Failover>>,
    /// `master` is set: checked on every command before taking its lock.
    is_replica: AtomicBool,
    /// The engine, for threads the layer starts (the link to a master).
    engine: std::sync::OnceLock<std::sync::Weak<Engine>>,
    logger: Logger,
    /// DEBUG AOF-FLUSH-SLEEP, in microseconds.
    aof_flush_sleep_us: std::sync::atomic::AtomicU64,
    /// DEBUG SET-SKIP-CHECKSUM-VALIDATION: RESTORE and RDB loading skip the CRC.
    skip_checksum: AtomicBool,
    /// Keys the last RDB load (a snapshot or an AOF's RDB base) loaded, and skipped as
    /// expired (INFO's rdb_last_load_keys_loaded / _expired).
    last_load_keys: [std::sync::atomic::AtomicU64; 2],
    /// Incremental AOF files are appended through a memory-mapped tail (`set_mapped_tail`).
    mapped_tail: AtomicBool,
}

/// The settings read from the configuration on each use.
struct Paths {
    dir: PathBuf,
    dbfilename: String,
    aof_dir: PathBuf,
    aof_prefix: String,
}

fn paths(engine: &Engine) -> Paths {
    let config = engine.config.read();
    let dir = PathBuf::from(config.get("dir").unwrap_or("."));
    let aof_dir = dir.join(config.get("appenddirname").unwrap_or("appendonlydir"));
    Paths {
        dir,
        dbfilename: config.get("dbfilename").unwrap_or("dump.rdb").to_string(),
        aof_dir,
        aof_prefix: config.get("appendfilename").unwrap_or("appendonly.aof").to_string(),
    }
}

fn manifest_name(prefix: &str) -> String {
    format!("{prefix}.manifest")
}

fn now_s(engine: &Engine) -> i64 {
    engine.clock.now_ms() / 1000
}

impl Layer {
    pub fn new(logger: Logger) -> Arc<Layer> {
        Arc::new(Layer {
            state: Mutex::new(State {
                child: None,
                lastsave_s: 0,
                last_bgsave_ok: true,
                last_bgsave_try_s: 0,
                last_bgsave_duration_s: -1,
                rdb_saves: 0,
                dirty_at_last_save: 0,
                bgsave_scheduled: false,
                aof: AofState::Off,
                manifest: Manifest::default(),
                aof_rewrites: 0,
                last_rewrite_ok: true,
                rewrite_failures: 0,
                limit_delay_minutes: 0,
                limit_next_rewrite_s: 0,
                last_rewrite_duration_s: -1,
                rewrite_scheduled: false,
                aof_start_pending: false,
                aof_base_size: 0,
                temp_incr: None,
                last_write_error: None,
                rdb_last_cow_bytes: 0,
                aof_last_cow_bytes: 0,
            }),
            aof: RwLock::new(None),
            logging: AtomicBool::new(false),
            loading: AtomicBool::new(false),
            async_loading: AtomicBool::new(false),
            refusing: AtomicBool::new(false),
            replication: Arc::default(),
            master: Mutex::new(None),
            failover: Mutex::new(None),
            is_replica: AtomicBool::new(false),
            engine: std::sync::OnceLock::new(),
            logger,
            aof_flush_sleep_us: std::sync::atomic::AtomicU64::new(0),
            skip_checksum: AtomicBool::new(false),
            last_load_keys: Default::default(),
            mapped_tail: AtomicBool::new(false),
        })
    }

    /// Appends to incremental AOF files through a memory-mapped tail, with no system call
    /// per write (the embedded library's choice: it makes durable after every command,
    /// where the server writes once per batch). A crash of the process loses nothing either
    /// way; the file ends with reserved zeros until closed, which the loader ignores.
    pub fn set_mapped_tail(&self, on: bool) {
        self.mapped_tail.store(on, Ordering::SeqCst);
    }

    /// Gives the layer the engine it serves, for the threads it starts.
    pub fn attach_engine(&self, engine: &Arc<Engine>) {
        let _ = self.engine.set(Arc::downgrade(engine));
    }

    /// REPLICAOF host port: follow that master (the status line), or REPLICAOF NO ONE
    /// (`None`): become a master again. The `replicaof` configuration follows, so CONFIG
    /// GET and CONFIG REWRITE show the role.
    pub fn replicaof(&self, target: Option<(String, u16)>) -> Result<&'static str, String> {
        if let Some(engine) = self.engine.get().and_then(std::sync::Weak::upgrade) {
            // REPLICAOF during a FAILOVER ends it (Redis's replicaofCommand aborts it).
            crate::replication::failover::abort(self, &engine, "Replica of command received");
        }
        self.follow(target, false)
    }

    /// FAILOVER hands over to `host:port`: follow it, asking it to take over.
    pub(crate) fn replicaof_failover(&self, host: String, port: u16) -> Result<&'static str, String> {
        self.follow(Some((host, port)), true)
    }

    fn follow(&self, target: Option<(String, u16)>, failover: bool) -> Result<&'static str, String> {
        let mut master = self.master.lock();
        let engine = self.engine.get().and_then(std::sync::Weak::upgrade);
        let Some((host, port)) = target else {
            self.is_replica.store(false, Ordering::SeqCst);
            if let Some(link) = master.take() {
                link.stop();
                // Our history goes on under a new ID; our replicas continue from it
                // partially once they reconnect (Redis's shiftReplicationId).
                self.replication.promote();
                self.replication.disconnect_all();
                self.log(LogLevel::Notice, "MASTER MODE enabled (user request)");
            }
            if let Some(engine) = &engine {
                engine.hot.replica_keeps_expired.store(false, Ordering::SeqCst);
                engine.forget_replica_local_keys();
                let _ = engine.config.write().set("replicaof", &["no".to_string(), "one".to_string()]);
                self.apply_oom_score(engine);
            }
            return Ok("OK");
        };
        if master.as_ref().is_some_and(|m| m.host.eq_ignore_ascii_case(&host) && m.port == port) {
            self.log(
                LogLevel::Notice,
                "REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.",
            );
            return Ok("OK Already connected to specified master");
        }
        let weak = self.engine.get().cloned().ok_or("ERR replication is not available")?;
        if let Some(old) = master.take() {
            old.stop();
        }
        if let Some(engine) = &engine {
            engine.unblock_all_for_role_change();
            engine.hot.replica_keeps_expired.store(true, Ordering::SeqCst);
            let _ = engine.config.write().set("replicaof", &[host.clone(), port.to_string()]);
        }
        // Our stream becomes the master's; our replicas must learn it (Redis's
        // disconnectSlaves), and continue from us partially when they can.
        self.replication.start_relaying();
        self.replication.disconnect_all();
        *master =
            Some(crate::replication::link::MasterLink::start(weak, host.clone(), port, self.logger.clone(), failover));
        self.is_replica.store(true, Ordering::SeqCst);
        if let Some(engine) = &engine {
            self.apply_oom_score(engine);
        }
        self.log(LogLevel::Notice, &format!("REPLICAOF {host}:{port} enabled (user request)"));
        Ok("OK")
    }

    /// We follow a master.
    pub fn is_replica(&self) -> bool {
        self.is_replica.load(Ordering::SeqCst)
    }

    /// We follow a master and the link is up.
    pub fn master_link_up(&self) -> bool {
        self.master.lock().as_ref().is_some_and(|m| m.status.is_up())
    }

    /// How old a replica's data is (Redis's data_age in clusterHandleSlaveFailover): since
    /// the master was last heard from while the link is up, since the link went down
    /// otherwise. None when this server follows no master.
    pub fn master_data_age_ms(&self, now_ms: i64) -> Option<i64> {
        let master = self.master.lock();
        let status = &master.as_ref()?.status;
        let since = if status.is_up() {
            status.last_io_ms.load(Ordering::Relaxed)
        } else {
            status.down_since_ms.load(Ordering::Relaxed)
        };
        Some(if since > 0 { (now_ms - since).max(0) } else { i64::MAX / 4 })
    }

    /// ROLE of a replica: (master host, port, link state word).
    pub fn master_link_role(&self) -> Option<(String, u16, &'static str)> {
        let master = self.master.lock();
        let link = master.as_ref()?;
        Some((link.host.clone(), link.port, link.status.state().word()))
    }

    /// For a WAIT's count: the replication state, without keeping it alive.
    pub fn replication_handle(&self) -> std::sync::Weak<crate::replication::Replication> {
        Arc::downgrade(&self.replication)
    }

    /// Full syncs that waited (`repl-diskless-sync-delay`, or a child that ran) start.
    fn start_due_full_syncs(&self, engine: &Engine) {
        if !self.replication.has_waiting() || self.state.lock().child.is_some() {
            return;
        }
        let (delay, max) = {
            let config = engine.config.read();
            let delay =
                if config.get_bool("repl-diskless-sync") { config.get_int("repl-diskless-sync-delay") } else { 0 };
            (delay, config.get_int("repl-diskless-sync-max-replicas"))
        };
        // Still as Redis's blocked event loop while a command runs alone.
        let due = {
            let Some(_gate) = engine.try_shared_gate() else { return };
            self.replication.waiting_syncs_due(delay, max, engine.clock.now_ms())
        };
        if due {
            let _gate = engine.exclusive();
            self.start_full_syncs(engine);
        }
    }

    /// Starts the transfer of one snapshot to every replica waiting for a full sync: a
    /// child writes it into a pipe (replication/transfer.rs). The caller holds the gate
    /// exclusively. With a child running already, they wait for the next cron.
    pub fn start_full_syncs(&self, engine: &Engine) {
        let mut state = self.state.lock();
        if state.child.is_some() || !self.replication.has_waiting() {
            return;
        }
        let (size, diskless) = {
            let config = engine.config.read();
            (config.get_int("repl-backlog-size").max(1) as usize, config.get_bool("repl-diskless-sync"))
        };
        let (input, output) = match crate::replication::transfer::pipe() {
            Ok(ends) => ends,
            Err(e) => {
                self.log(LogLevel::Warning, &format!("Can't create the pipe for a replica's sync: {e}"));
                return;
            }
        };
        let repl = self.replication.prepare_full_sync(size);
        let functions_only = self.replication.waiting_functions_only();
        let mark = crate::replication::random_id();
        let now = engine.clock.now_ms();
        let mut receivers = Vec::new();
        let (id, offset) = (repl.0.clone(), repl.1);
        for waiting in self.replication.take_waiting() {
            let handle = waiting.handle.clone();
            let eof = self.replication.attach_for_transfer(waiting, &mark, diskless, now);
            receivers.push(crate::replication::transfer::Receiver { handle, eof });
        }
        let receivers = std::sync::Arc::new(parking_lot::Mutex::new(receivers));
        if !diskless && !functions_only {
            self.replication.transfer_started(receivers.clone(), id, offset);
        }
        let child_mark = mark.clone();
        let keys_total = total_keys(engine);
        let forked = fork::spawn_child(engine, move |engine| {
            crate::replication::transfer::write_snapshot(engine, output, repl, &child_mark, functions_only)
        });
        let spawned = match forked {
            Ok(spawned) => spawned,
            Err(e) => {
                self.log(LogLevel::Warning, &format!("Can't fork for a replica's sync: {e}"));
                self.replication.transfer_finished();
                for r in receivers.lock().iter() {
                    r.handle.kill();
                }
                return;
            }
        };
        self.log(
            LogLevel::Notice,
            &format!(
                "Starting BGSAVE for SYNC with target: {} (pid {})",
                if diskless { "replicas sockets" } else { "disk" },
                spawned.pid.0
            ),
        );
        let pid = spawned.pid;
        state.child = Some(Child {
            kind: ChildKind::Rdb,
            pid,
            started_ms: now,
            dirty_at_fork: engine.dirty(),
            temp: PathBuf::new(),
            to_replicas: true,
            info: spawned.info,
            progress: ChildProgress { keys_total, ..ChildProgress::default() },
        });
        drop(state);
        crate::replication::transfer::relay(
            input,
            receivers,
            mark,
            self.replication.clone(),
            self.logger.clone(),
            pid.0,
        );
    }

    pub(crate) fn log_notice(&self, message: &str) {
        self.log(LogLevel::Notice, message);
    }

    /// A replica starts receiving its master's snapshot: with `repl-diskless-load swapdb`
    /// (or `on-empty-db` and no keys) Redis loads as it reads, reporting `loading:1` and
    /// answering -LOADING meanwhile, or, when the snapshot continues the history the
    /// replica already has (swapdb), serving its dataset with `async_loading:1`. With
    /// `disabled` it receives first (to a file, in Redis) and is loading only while it loads.
    pub(crate) fn begin_replica_transfer(&self, engine: &Engine, same_history: bool) {
        let mode = engine.config.read().get("repl-diskless-load").unwrap_or("disabled").to_string();
        let empty = || (0..engine.keyspace.databases()).all(|db| engine.keyspace.db_len(db) == 0);
        match mode.as_str() {
            "swapdb" if same_history => {
                self.async_loading.store(true, Ordering::SeqCst);
                engine.set_async_loading(true);
            }
            "swapdb" => self.set_replica_loading(engine, true),
            "on-empty-db" if empty() => self.set_replica_loading(engine, true),
            _ => {}
        }
    }

    /// The snapshot is loaded (or the transfer failed): loading states end.
    pub(crate) fn end_replica_transfer(&self, engine: &Engine) {
        self.async_loading.store(false, Ordering::SeqCst);
        engine.set_async_loading(false);
        if self.loading.load(Ordering::SeqCst) {
            self.set_replica_loading(engine, false);
        }
    }

    pub(crate) fn set_replica_loading(&self, engine: &Engine, on: bool) {
        self.loading.store(on, Ordering::SeqCst);
        engine.set_loading(on);
    }

    /// A replica loaded its master's snapshot: the append-only file, if on, must start
    /// over from this dataset (Redis's restartAOFAfterSYNC).
    pub(crate) fn after_replica_sync(&self, engine: &Engine) {
        if self.state.lock().aof == AofState::On {
            let _gate = engine.exclusive();
            if let Err(e) = self.bgrewriteaof(engine, false) {
                self.log(LogLevel::Warning, &format!("Rewriting the AOF after the sync with the master: {e}"));
            }
        }
    }

    /// The layer installed in `engine`, if it is this type.
    pub fn of(engine: &Engine) -> Option<&Layer> {
        engine.persistence()?.as_any().downcast_ref::<Layer>()
    }

    pub(crate) fn log(&self, level: LogLevel, message: &str) {
        (self.logger)(level, message);
    }

    /// An RDB load finished: its counts for INFO.
    pub(crate) fn note_rdb_load(&self, loaded: u64, expired: u64) {
        self.last_load_keys[0].store(loaded, Ordering::Relaxed);
        self.last_load_keys[1].store(expired, Ordering::Relaxed);
    }

    /// `oom-score-adj` for the role the server has now (master or replica).
    fn apply_oom_score(&self, engine: &Engine) {
        let class =
            if self.is_replica.load(Ordering::SeqCst) { crate::oom::Class::Replica } else { crate::oom::Class::Master };
        if let Err(e) = crate::oom::apply(engine, class) {
            self.log(LogLevel::Warning, &e);
        }
    }

    /// DEBUG SET-SKIP-CHECKSUM-VALIDATION is on.
    pub(crate) fn skip_checksum(&self) -> bool {
        self.skip_checksum.load(Ordering::Relaxed)
    }

    /// Writes a line to the server's log (for commands of this crate).
    pub(crate) fn log_line(&self, level: LogLevel, message: &str) {
        self.log(level, message);
    }

    fn set_loading(&self, engine: &Engine, loading: bool) {
        self.loading.store(loading, Ordering::SeqCst);
        engine.set_loading(loading);
        self.update_logging();
    }

    fn update_logging(&self) {
        let on = self.aof.read().is_some() && !self.loading.load(Ordering::SeqCst);
        self.logging.store(on, Ordering::SeqCst);
    }

    // ---------------------------------------------------------------------------------
    // Startup and shutdown
    // ---------------------------------------------------------------------------------

    /// Loads the dataset at startup: the AOF when `appendonly yes`, else the RDB file; then
    /// opens the AOF for appending (creating its base file when there is none). Reports
    /// `loading:1` meanwhile; callers may already serve clients (they get -LOADING).
    pub fn load_at_startup(&self, engine: &Engine) -> Result<(), String> {
        let p = paths(engine);
        let aof_on = engine.config.read().get_bool("appendonly");
        {
            let mut state = self.state.lock();
            state.lastsave_s = now_s(engine);
            state.dirty_at_last_save = engine.dirty();
        }
        // The engine reports loading (and answers -LOADING) until the AOF is open too:
        // a write accepted before that would never reach the log.
        engine.set_loading(true);
        self.loading.store(true, Ordering::SeqCst);
        let start = std::time::Instant::now();
        let result = if aof_on {
            self.load_aof_files(engine, &p).map(|loaded| {
                if loaded {
                    self.log(
                        LogLevel::Notice,
                        &format!("DB loaded from append only file: {:.3} seconds", start.elapsed().as_secs_f64()),
                    );
                }
            })
        } else {
            let path = p.dir.join(&p.dbfilename);
            match std::fs::metadata(&path) {
                Err(_) => Ok(()),
                Ok(_) => snapshot::load_file(engine, &path, false, false, &mut |l, m| self.log(l, m)).map(|keys| {
                    self.log(
                        LogLevel::Notice,
                        &format!("DB loaded from disk: {:.3} seconds ({keys} keys)", start.elapsed().as_secs_f64()),
                    );
                }),
            }
        };
        self.loading.store(false, Ordering::SeqCst);
        result?;
        {
            let mut state = self.state.lock();
            state.dirty_at_last_save = engine.dirty();
        }
        if aof_on {
            self.open_aof_at_startup(engine, &p)?;
        }
        engine.set_loading(false);
        self.follow_configured_master(engine);
        Ok(())
    }

    /// The `replicaof` directive: follow that master once the dataset is loaded, continuing
    /// the history the snapshot recorded (a partial resync after a restart) when it did.
    fn follow_configured_master(&self, engine: &Engine) {
        let target = engine.config.read().get("replicaof").unwrap_or("").to_string();
        let backlog_size = engine.config.read().get_int("repl-backlog-size").max(1) as usize;
        let history = self.replication.take_loaded_history();
        let Some((host, port)) = target.rsplit_once(' ').and_then(|(h, p)| Some((h, p.parse::<u16>().ok()?))) else {
            if let Some(history) = history {
                self.log(
                    LogLevel::Notice,
                    &format!(
                        "Continuing the replication history of the loaded data: {}:{}",
                        history.id, history.offset
                    ),
                );
                self.replication.restore_as_master(history, engine.expired_deletion_command(), backlog_size);
            }
            return;
        };
        if let Some(history) = history {
            self.log(
                LogLevel::Notice,
                &format!("Using the replication history of the loaded data: {}:{}", history.id, history.offset),
            );
            self.replication.adopt_master_history(&history.id, history.offset, history.db, backlog_size);
        }
        if let Err(e) = self.replicaof(Some((host.to_string(), port))) {
            self.log(LogLevel::Warning, &format!("Following the configured master {host}:{port}: {e}"));
        }
    }

    /// Loads the AOF the manifest names; false when there is none.
    fn load_aof_files(&self, engine: &Engine, p: &Paths) -> Result<bool, String> {
        let manifest_path = p.aof_dir.join(manifest_name(&p.aof_prefix));
        self.upgrade_old_aof(p, &manifest_path)?;
        let manifest = match std::fs::read_to_string(&manifest_path) {
            Ok(text) => Manifest::parse(&text).map_err(|e| format!("{e} in {}", manifest_path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.state.lock().manifest = Manifest::default();
                return Ok(false);
            }
            Err(e) => return Err(format!("Can't open the AOF manifest {}: {e}", manifest_path.display())),
        };
        self.state.lock().manifest = manifest.clone();
        let truncate_ok = engine.config.read().get_bool("aof-load-truncated");
        let files: Vec<_> = manifest.load_order().cloned().collect();
        if files.is_empty() {
            return Ok(false);
        }
        let total: u64 =
            files.iter().map(|f| std::fs::metadata(p.aof_dir.join(&f.name)).map(|m| m.len()).unwrap_or(0)).sum();
        let mut done = 0u64;
        let mut last_report = std::time::Instant::now();
        for (index, file) in files.iter().enumerate() {
            let path = p.aof_dir.join(&file.name);
            let last = index + 1 == files.len();
            if let Err(e) = std::fs::metadata(&path) {
                return Err(if e.kind() == std::io::ErrorKind::NotFound {
                    format!("The append log file {} doesn't exist: No such file or directory", file.name)
                } else {
                    format!("Fatal error: can't open the append log file {} for reading: {e}", file.name)
                });
            }
            if aof_load::is_rdb(&path).map_err(|e| format!("Can't read {}: {e}", file.name))? {
                self.log(LogLevel::Notice, "Reading RDB base file on AOF loading...");
                let (_, rdb_end) = snapshot::load_file_stats(engine, &path, true, false, &mut |l, m| self.log(l, m))
                    .map_err(|e| format!("Error reading the RDB base file {}, AOF loading aborted: {e}", file.name))?;
                done += std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                // An RDB preamble followed by commands (Redis 6's AOF): those too.
                if std::fs::metadata(&path).map_or(0, |m| m.len()) > rdb_end {
                    self.log(LogLevel::Notice, "Reading the remaining AOF tail...");
                    aof_load::load_commands_from(
                        engine,
                        &path,
                        rdb_end,
                        last,
                        truncate_ok,
                        &mut |m| self.log(LogLevel::Warning, m),
                        &mut |_| {},
                    )
                    .map_err(|e| e.0)?;
                }
                continue;
            }
            let mut progress = |bytes: u64| {
                done += bytes;
                if last_report.elapsed().as_secs() >= 1 {
                    last_report = std::time::Instant::now();
                    let pct = (done * 100).checked_div(total).unwrap_or(100);
                    self.log(LogLevel::Notice, &format!("Loading the AOF: {done} bytes of {total} ({pct}%)"));
                }
            };
            let outcome = aof_load::load_command_file(
                engine,
                &path,
                last,
                truncate_ok,
                &mut |m| self.log(LogLevel::Warning, m),
                &mut progress,
            )
            .map_err(|e| e.0)?;
            if outcome == FileOutcome::Empty {
                self.log(LogLevel::Notice, &format!("DB loaded from {} file {}: empty", kind_word(file), file.name));
            } else {
                self.log(LogLevel::Notice, &format!("DB loaded from {} file {}", kind_word(file), file.name));
            }
        }
        Ok(true)
    }

    /// A single-file AOF of Redis before 7.0 (`appendonly.aof` in `dir`) becomes the base of
    /// a multi-part AOF, as Redis 7.0's aofUpgradePrepare does: when there is no AOF
    /// directory, or no manifest or an empty one, or a manifest naming only that base while
    /// the directory does not hold it (an upgrade interrupted before the move).
    fn upgrade_old_aof(&self, p: &Paths, manifest_path: &Path) -> Result<(), String> {
        let old = p.dir.join(&p.aof_prefix);
        if !old.is_file() {
            return Ok(());
        }
        let existing = match std::fs::read_to_string(manifest_path) {
            Ok(text) => Some(Manifest::parse(&text).map_err(|e| format!("{e} in {}", manifest_path.display()))?),
            Err(_) => None,
        };
        let upgrade = !p.aof_dir.is_dir()
            || existing.as_ref().is_none_or(|m| m.base.is_none() && m.incr.is_empty())
            || existing.as_ref().is_some_and(|m| {
                m.incr.is_empty()
                    && m.base.as_ref().is_some_and(|b| b.name == p.aof_prefix)
                    && !p.aof_dir.join(&p.aof_prefix).exists()
            });
        if !upgrade {
            return Ok(());
        }
        std::fs::create_dir_all(&p.aof_dir)
            .map_err(|e| format!("Can't open or create append-only dir {}: {e}", p.aof_dir.display()))?;
        let manifest = Manifest {
            base: Some(manifest::AofFile { name: p.aof_prefix.clone(), seq: 1, kind: manifest::FileType::Base }),
            base_seq: 1,
            ..Manifest::default()
        };
        let name = manifest_name(&p.aof_prefix);
        manifest.persist(&p.aof_dir, &name).map_err(|e| format!("Can't persist the AOF manifest {name}: {e}"))?;
        std::fs::rename(&old, p.aof_dir.join(&p.aof_prefix)).map_err(|e| {
            format!("Error trying to move the old AOF file {} into dir {}: {e}", p.aof_prefix, p.aof_dir.display())
        })?;
        self.log(
            LogLevel::Notice,
            &format!(
                "Successfully migrated an old-style AOF file ({}) into the AOF directory ({}).",
                p.aof_prefix,
                p.aof_dir.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            ),
        );
        Ok(())
    }

    /// Opens the last incremental file for appending; creates a base first when the AOF has
    /// none (Redis's aofOpenIfNeededOnServerStart), and persists the manifest.
    fn open_aof_at_startup(&self, engine: &Engine, p: &Paths) -> Result<(), String> {
        std::fs::create_dir_all(&p.aof_dir)
            .map_err(|e| format!("Can't open or create append-only dir {}: {e}", p.aof_dir.display()))?;
        let mut state = self.state.lock();
        if state.manifest.base.is_none() && state.manifest.incr.is_empty() {
            let rdb = engine.config.read().get_bool("aof-use-rdb-preamble");
            let base = state.manifest.new_base(&p.aof_prefix, rdb);
            let path = p.aof_dir.join(&base);
            snapshot::write_base_file(engine, &path, rdb).map_err(|e| format!("Creating the AOF base file: {e}"))?;
            self.log(LogLevel::Notice, &format!("Creating AOF base file {base} on server start"));
        }
        let created = state.manifest.incr.is_empty();
        if created {
            state.manifest.new_incr(&p.aof_prefix);
        }
        let name = state.manifest.incr.last().expect("an incr file exists").name.clone();
        let writer = open_writer(engine, &p.aof_dir.join(&name), self.mapped_tail.load(Ordering::SeqCst))?;
        state
            .manifest
            .persist(&p.aof_dir, &manifest_name(&p.aof_prefix))
            .map_err(|e| format!("Can't persist the AOF manifest: {e}"))?;
        self.log(
            LogLevel::Notice,
            &format!("{} AOF incr file {name} on server start", if created { "Creating" } else { "Opening" }),
        );
        state.aof = AofState::On;
        state.aof_base_size = aof_size(&state.manifest, &p.aof_dir);
        *self.aof.write() = Some(Arc::new(writer));
        drop(state);
        self.update_logging();
        Ok(())
    }

    /// At shutdown: kills a running child, writes the AOF out, and saves an RDB when save
    /// points are configured (as Redis's prepareForShutdown). `save`: SHUTDOWN SAVE / NOSAVE
    /// override. No command may be running (the caller holds the gate or stopped them).
    pub fn shutdown(&self, engine: &Engine, save: Option<bool>) -> Result<(), String> {
        if let Some(child) = self.state.lock().child.take() {
            self.log(LogLevel::Warning, "There is a child saving an .rdb. Killing it!");
            fork::kill_child(child.pid);
            let _ = std::fs::remove_file(&child.temp);
        }
        if let Some(writer) = self.aof.read().clone() {
            self.log(LogLevel::Notice, "Calling fsync() on the AOF file.");
            writer.flush_all()?;
        }
        let save_points = !engine.config.read().get("save").unwrap_or("").trim().is_empty();
        if save.unwrap_or(save_points) {
            self.log(LogLevel::Notice, "Saving the final RDB snapshot before exiting.");
            // (save_now logged why.)
            self.save_now(engine).map_err(|_| "Error trying to save the DB, can't exit.".to_string())?;
            self.log(LogLevel::Notice, "DB saved on disk");
        }
        Ok(())
    }

    /// Writes and fsyncs what the AOF buffered (after the last command ran, at exit).
    pub fn flush_aof(&self) -> Result<(), String> {
        match self.aof.read().clone() {
            Some(writer) => writer.flush_all(),
            None => Ok(()),
        }
    }

    // ---------------------------------------------------------------------------------
    // RDB
    // ---------------------------------------------------------------------------------

    /// SAVE: writes the snapshot from this thread. The caller holds the exclusive gate.
    pub fn save_now(&self, engine: &Engine) -> Result<(), String> {
        if self.state.lock().child.as_ref().is_some_and(|c| c.kind == ChildKind::Rdb) {
            return Err("ERR Background save already in progress".into());
        }
        let p = paths(engine);
        let dirty = engine.dirty();
        // Attempts count, as Redis's stat_rdb_saves does.
        self.state.lock().rdb_saves += 1;
        let repl = self.replication.history_for_save();
        let result = snapshot::save_file(engine, &p.dir, &p.dbfilename, std::process::id() as i32, repl);
        let mut state = self.state.lock();
        match result {
            Ok(()) => {
                state.lastsave_s = now_s(engine);
                state.last_bgsave_ok = true;
                state.dirty_at_last_save = dirty;
                drop(state);
                self.refresh_refusal(engine);
                Ok(())
            }
            Err(e) => {
                self.log(LogLevel::Warning, &format!("Failed saving the DB: {e}"));
                Err("ERR".into())
            }
        }
    }

    /// BGSAVE [SCHEDULE]: forks a child that writes the snapshot. The caller holds the
    /// exclusive gate. Returns the status line.
    /// BGSAVE [SCHEDULE]. Inside EXEC (`in_transaction`) it is always scheduled, as in
    /// Redis: a snapshot forked now would hold half the transaction.
    pub fn bgsave(&self, engine: &Engine, schedule: bool, in_transaction: bool) -> Result<&'static str, String> {
        let mut state = self.state.lock();
        match state.child.as_ref().map(|c| c.kind) {
            Some(ChildKind::Rdb) => return Err("ERR Background save already in progress".into()),
            Some(ChildKind::Aof) | None if in_transaction => {
                state.bgsave_scheduled = true;
                return Ok("Background saving scheduled");
            }
            Some(ChildKind::Aof) if schedule => {
                state.bgsave_scheduled = true;
                return Ok("Background saving scheduled");
            }
            Some(ChildKind::Aof) => {
                return Err("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.".into())
            }
            None => {}
        }
        self.start_bgsave(engine, &mut state).map(|_| "Background saving started")
    }

    fn start_bgsave(&self, engine: &Engine, state: &mut State) -> Result<(), String> {
        let p = paths(engine);
        let dirty = engine.dirty();
        state.rdb_saves += 1;
        state.last_bgsave_try_s = now_s(engine);
        let dir = p.dir.clone();
        let name = p.dbfilename.clone();
        // Read before the fork: the child must take no lock another thread may hold.
        let repl = self.replication.history_for_save();
        let keys_total = total_keys(engine);
        let spawned = fork::spawn_child(engine, move |engine| {
            // SAFETY: getpid has no preconditions.
            let me = unsafe { libc::getpid() };
            snapshot::save_file(engine, &dir, &name, me, repl).is_ok()
        })
        .map_err(|e| {
            state.last_bgsave_ok = false;
            format!("ERR Can't save in background: fork: {e}")
        })?;
        let pid = spawned.pid;
        self.log(LogLevel::Notice, &format!("Background saving started by pid {}", pid.0));
        state.child = Some(Child {
            kind: ChildKind::Rdb,
            pid,
            started_ms: engine.clock.now_ms(),
            dirty_at_fork: dirty,
            temp: p.dir.join(format!("temp-{}.rdb", pid.0)),
            to_replicas: false,
            info: spawned.info,
            progress: ChildProgress { keys_total, ..ChildProgress::default() },
        });
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    // AOF rewrite
    // ---------------------------------------------------------------------------------

    /// BGREWRITEAOF. The caller holds the exclusive gate. Returns the status line. Inside
    /// EXEC (`in_transaction`) it is scheduled for the cron, as in Redis: a child forked
    /// now would snapshot half the transaction, whose effects are all logged after it.
    pub fn bgrewriteaof(&self, engine: &Engine, in_transaction: bool) -> Result<&'static str, String> {
        let mut state = self.state.lock();
        match state.child.as_ref().map(|c| c.kind) {
            Some(ChildKind::Aof) => return Err("ERR Background append only file rewriting already in progress".into()),
            Some(ChildKind::Rdb) => {
                state.rewrite_scheduled = true;
                return Ok("Background append only file rewriting scheduled");
            }
            None if in_transaction => {
                state.rewrite_scheduled = true;
                return Ok("Background append only file rewriting scheduled");
            }
            None => {}
        }
        self.start_rewrite(engine, &mut state).map(|_| "Background append only file rewriting started").map_err(|e| {
            self.log(LogLevel::Warning, &e);
            note_rewrite(&mut state, false);
            "ERR Can't execute an AOF background rewriting. Please check the server logs for more information.".into()
        })
    }

    /// Starts a rewrite: new writes go to a fresh incremental file from this point on, and
    /// a child writes the new base as of this point. The caller holds the exclusive gate.
    fn start_rewrite(&self, engine: &Engine, state: &mut State) -> Result<(), String> {
        let p = paths(engine);
        std::fs::create_dir_all(&p.aof_dir)
            .map_err(|e| format!("Can't open or create append-only dir {}: {e}", p.aof_dir.display()))?;
        match state.aof {
            AofState::On => {
                // Switch to a new incremental file, listed in the manifest before anything
                // is written to it.
                if let Some(writer) = self.aof.read().clone() {
                    writer.flush_all()?;
                }
                let mut next = state.manifest.clone();
                let name = next.new_incr(&p.aof_prefix);
                let writer = open_writer(engine, &p.aof_dir.join(&name), self.mapped_tail.load(Ordering::SeqCst))?;
                next.persist(&p.aof_dir, &manifest_name(&p.aof_prefix))
                    .map_err(|e| format!("Can't persist the AOF manifest: {e}"))?;
                state.manifest = next;
                *self.aof.write() = Some(Arc::new(writer));
                self.log(LogLevel::Notice, &format!("Creating AOF incr file {name} on background rewrite"));
            }
            AofState::WaitRewrite => {
                let name = format!("temp-{}.incr", p.aof_prefix);
                let path = p.aof_dir.join(&name);
                let mapped = self.mapped_tail.load(Ordering::SeqCst);
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .read(mapped)
                    .write(true)
                    .truncate(true)
                    .open(&path)
                    .map_err(|e| format!("Can't open the append-only file {name}: {e}"))?;
                let policy = FsyncPolicy::from_config(engine.config.read().get("appendfsync").unwrap_or("everysec"));
                let writer = AofWriter::new(file, 0, policy).map_err(|e| e.to_string())?;
                writer.set_mapped(mapped);
                writer.set_timestamps(engine.config.read().get_bool("aof-timestamp-enabled"));
                state.temp_incr = Some(name);
                *self.aof.write() = Some(Arc::new(writer));
            }
            AofState::Off => {}
        }
        self.update_logging();
        let rdb = engine.config.read().get_bool("aof-use-rdb-preamble");
        let dir = p.aof_dir.clone();
        let dirty = engine.dirty();
        let keys_total = total_keys(engine);
        let spawned = fork::spawn_child(engine, move |engine| {
            // SAFETY: getpid has no preconditions.
            let me = unsafe { libc::getpid() };
            let temp = dir.join(format!("temp-rewriteaof-bg-{me}.aof"));
            snapshot::write_base_file(engine, &temp, rdb).is_ok()
        })
        .map_err(|e| format!("Can't rewrite append only file in background: fork: {e}"))?;
        let pid = spawned.pid;
        self.log(LogLevel::Notice, &format!("Background append only file rewriting started by pid {}", pid.0));
        state.rewrite_scheduled = false;
        state.child = Some(Child {
            kind: ChildKind::Aof,
            pid,
            started_ms: engine.clock.now_ms(),
            dirty_at_fork: dirty,
            temp: p.aof_dir.join(format!("temp-rewriteaof-bg-{}.aof", pid.0)),
            to_replicas: false,
            info: spawned.info,
            progress: ChildProgress { keys_total, ..ChildProgress::default() },
        });
        Ok(())
    }

    /// A rewrite child finished well: its file becomes the base, the incremental files
    /// written before it started become history, and history is deleted.
    fn finish_rewrite(&self, engine: &Engine, state: &mut State, child: &Child) -> Result<(), String> {
        let p = paths(engine);
        let rdb = engine.config.read().get_bool("aof-use-rdb-preamble");
        let mut next = state.manifest.clone();
        let base = next.new_base(&p.aof_prefix, rdb);
        std::fs::rename(&child.temp, p.aof_dir.join(&base)).map_err(|e| {
            format!("Error trying to rename the temporary AOF base file {} into {base}: {e}", child.temp.display())
        })?;
        self.log(LogLevel::Notice, &format!("Successfully renamed the temporary AOF base file into {base}"));
        if let Some(temp) = state.temp_incr.take() {
            let name = next.new_incr(&p.aof_prefix);
            std::fs::rename(p.aof_dir.join(&temp), p.aof_dir.join(&name))
                .map_err(|e| format!("Error trying to rename the temporary AOF incr file {temp} into {name}: {e}"))?;
        }
        if state.aof == AofState::Off {
            // Without an open AOF every incremental file is superseded by the new base.
            next.incr_rewritten();
        } else {
            next.incr_rewritten_except_last();
        }
        next.persist(&p.aof_dir, &manifest_name(&p.aof_prefix))
            .map_err(|e| format!("Can't persist the AOF manifest: {e}"))?;
        state.manifest = next;
        self.delete_history(engine, state);
        if state.aof == AofState::WaitRewrite {
            state.aof = AofState::On;
        }
        state.aof_base_size = aof_size(&state.manifest, &p.aof_dir);
        Ok(())
    }

    /// Redis's aofDelHistoryFiles: unless `aof-disable-auto-gc`, the history files leave
    /// the manifest (persisted first, so it never names a missing file) and are deleted.
    fn delete_history(&self, engine: &Engine, state: &mut State) {
        if state.manifest.history.is_empty() || engine.config.read().get_bool("aof-disable-auto-gc") {
            return;
        }
        let p = paths(engine);
        let mut next = state.manifest.clone();
        let history = std::mem::take(&mut next.history);
        if let Err(e) = next.persist(&p.aof_dir, &manifest_name(&p.aof_prefix)) {
            self.log(LogLevel::Warning, &format!("Can't persist the AOF manifest: {e}"));
            return;
        }
        state.manifest = next;
        for old in history {
            self.log(LogLevel::Notice, &format!("Removing the history file {} in the background", old.name));
            let _ = std::fs::remove_file(p.aof_dir.join(&old.name));
        }
    }

    // ---------------------------------------------------------------------------------
    // The periodic duty
    // ---------------------------------------------------------------------------------

    /// Called about every 100 ms by the host: AOF writes and everysec fsyncs, reaping
    /// children, save points, scheduled and automatic rewrites, starting the AOF.
    pub fn cron(&self, engine: &Engine) {
        crate::migrate::close_idle_sockets();
        self.replication.cron(engine, &|line| self.log(LogLevel::Notice, line));
        crate::replication::failover::cron(self, engine);
        self.start_due_full_syncs(engine);
        if let Some(writer) = self.aof.read().clone() {
            writer.tick();
        }
        self.reap(engine);
        self.refresh_refusal(engine);
        let mut state = self.state.lock();
        if state.child.is_some() {
            return;
        }
        let now = now_s(engine);
        let start_aof = std::mem::take(&mut state.aof_start_pending);
        // Scheduled and automatic rewrites wait while rewrites keep failing (Redis's
        // aofRewriteLimited); starting the AOF does not.
        let growth = self.rewrite_due(engine, &state);
        let want_rewrite =
            start_aof || ((state.rewrite_scheduled || growth.is_some()) && !self.rewrite_limited(&mut state, now));
        if let (Some(growth), true, false) = (growth, want_rewrite, start_aof || state.rewrite_scheduled) {
            self.log(LogLevel::Notice, &format!("Starting automatic rewriting of AOF on {growth}% growth"));
        }
        let want_bgsave = state.bgsave_scheduled || self.save_point_due(engine, &state, now);
        if !want_rewrite && !want_bgsave {
            return;
        }
        drop(state);
        // The fork point: no command is half done while the gate is held.
        let _gate = engine.exclusive();
        let mut state = self.state.lock();
        if state.child.is_some() {
            return;
        }
        if want_rewrite {
            if start_aof && state.aof == AofState::Off {
                state.aof = AofState::WaitRewrite;
            }
            if let Err(e) = self.start_rewrite(engine, &mut state) {
                self.log(LogLevel::Warning, &e);
                note_rewrite(&mut state, false);
            }
        } else if want_bgsave {
            state.bgsave_scheduled = false;
            if let Err(e) = self.start_bgsave(engine, &mut state) {
                self.log(LogLevel::Warning, &e);
            }
        }
    }

    fn save_point_due(&self, engine: &Engine, state: &State, now: i64) -> bool {
        let config = engine.config.read();
        let points: Vec<i64> =
            config.get("save").unwrap_or("").split_whitespace().filter_map(|w| w.parse().ok()).collect();
        drop(config);
        let changes = engine.dirty().saturating_sub(state.dirty_at_last_save) as i64;
        // After a failed save, retry only every 5 seconds (CONFIG_BGSAVE_RETRY_DELAY).
        let may_try = state.last_bgsave_ok || now - state.last_bgsave_try_s > 5;
        for pair in points.chunks(2) {
            if let [seconds, min_changes] = pair {
                if changes >= *min_changes && now - state.lastsave_s >= *seconds && may_try {
                    self.log(LogLevel::Notice, &format!("{min_changes} changes in {seconds} seconds. Saving..."));
                    return true;
                }
            }
        }
        false
    }

    /// Redis's aofRewriteLimited: after `REWRITE_LIMIT_THRESHOLD` failed rewrites in a
    /// row, automatic ones start only once a delay has passed, 1 minute and then doubling
    /// up to an hour, with a log line each time the delay is set.
    fn rewrite_limited(&self, state: &mut State, now: i64) -> bool {
        if state.rewrite_failures < REWRITE_LIMIT_THRESHOLD {
            state.limit_delay_minutes = 0;
            state.limit_next_rewrite_s = 0;
            return false;
        }
        if state.limit_next_rewrite_s != 0 {
            if now < state.limit_next_rewrite_s {
                return true;
            }
            state.limit_next_rewrite_s = 0;
            return false;
        }
        state.limit_delay_minutes = if state.limit_delay_minutes == 0 {
            1
        } else {
            (state.limit_delay_minutes * 2).min(REWRITE_LIMIT_MAX_MINUTES)
        };
        state.limit_next_rewrite_s = now + state.limit_delay_minutes * 60;
        self.log(
            LogLevel::Warning,
            &format!(
                "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in {} minutes",
                state.limit_delay_minutes
            ),
        );
        true
    }

    /// The growth (in percent) when an automatic rewrite is due.
    fn rewrite_due(&self, engine: &Engine, state: &State) -> Option<i64> {
        if state.aof != AofState::On {
            return None;
        }
        let (percentage, min_size) = {
            let config = engine.config.read();
            (config.get_int("auto-aof-rewrite-percentage"), config.get_int("auto-aof-rewrite-min-size"))
        };
        let writer = self.aof.read().clone()?;
        let size = state.aof_base_size + writer.size();
        let base = state.aof_base_size.max(1);
        if percentage <= 0 || (size as i64) < min_size {
            return None;
        }
        let growth = (size.saturating_sub(base) * 100 / base) as i64;
        (growth >= percentage).then_some(growth)
    }

    /// Collects a finished child and applies its outcome.
    fn reap(&self, engine: &Engine) {
        let mut state = self.state.lock();
        let Some(child) = state.child.as_ref() else { return };
        let Some(exit) = fork::try_reap(child.pid) else { return };
        let mut child = state.child.take().expect("checked above");
        // Its last words are in the pipe before it exits.
        child.read_reports();
        if child.progress.finished {
            match child.kind {
                ChildKind::Rdb => state.rdb_last_cow_bytes = child.progress.cow_bytes,
                ChildKind::Aof => state.aof_last_cow_bytes = child.progress.cow_bytes,
            }
        }
        let elapsed_s = (engine.clock.now_ms() - child.started_ms) / 1000;
        match child.kind {
            ChildKind::Rdb if child.to_replicas => {
                if exit.ok() {
                    self.log(LogLevel::Notice, "Background RDB transfer terminated with success");
                } else {
                    self.log(LogLevel::Warning, &describe_failure("Background transfer", exit));
                }
            }
            ChildKind::Rdb => {
                state.last_bgsave_duration_s = elapsed_s;
                if exit.ok() {
                    self.log(LogLevel::Notice, "Background saving terminated with success");
                    state.lastsave_s = now_s(engine);
                    state.last_bgsave_ok = true;
                    state.dirty_at_last_save = child.dirty_at_fork;
                } else {
                    self.log(LogLevel::Warning, &describe_failure("Background saving", exit));
                    let _ = std::fs::remove_file(&child.temp);
                    // Killed on purpose (SIGUSR1) is not an error, as in Redis.
                    if exit != ChildExit::Signal(libc::SIGUSR1) {
                        state.last_bgsave_ok = false;
                    }
                }
            }
            ChildKind::Aof => {
                state.last_rewrite_duration_s = elapsed_s;
                if exit.ok() {
                    self.log(LogLevel::Notice, "Background AOF rewrite terminated with success");
                    match self.finish_rewrite(engine, &mut state, &child) {
                        Ok(()) => {
                            note_rewrite(&mut state, true);
                            state.aof_rewrites += 1;
                            self.log(LogLevel::Notice, "Background AOF rewrite finished successfully");
                        }
                        Err(e) => {
                            self.log(LogLevel::Warning, &e);
                            note_rewrite(&mut state, false);
                        }
                    }
                } else {
                    self.log(LogLevel::Warning, &describe_failure("Background AOF rewrite", exit));
                    let _ = std::fs::remove_file(&child.temp);
                    // Killed on purpose (SIGUSR1) is not a failure, as in Redis.
                    if exit != ChildExit::Signal(libc::SIGUSR1) {
                        note_rewrite(&mut state, false);
                    }
                    // Still waiting for a first base: what the temporary incremental file
                    // gathered goes (the next rewrite's snapshot covers it), and the next
                    // rewrite is scheduled, as Redis's backgroundRewriteDoneHandler.
                    if state.aof == AofState::WaitRewrite {
                        if let Some(temp) = state.temp_incr.take() {
                            self.log(
                                LogLevel::Notice,
                                &format!("Removing the temp incr aof file {temp} in the background"),
                            );
                            let _ = std::fs::remove_file(paths(engine).aof_dir.join(&temp));
                        }
                        state.rewrite_scheduled = true;
                    }
                }
            }
        }
    }

    /// Recomputes whether writes must be refused (MISCONF), as Redis's writeCommandsDeniedByDiskError.
    fn refresh_refusal(&self, engine: &Engine) {
        let stop_on_bgsave_error = engine.config.read().get_bool("stop-writes-on-bgsave-error");
        let save_points = !engine.config.read().get("save").unwrap_or("").trim().is_empty();
        let aof_error = self.aof.read().as_ref().and_then(|w| w.error());
        let mut state = self.state.lock();
        let refusing = (stop_on_bgsave_error && save_points && !state.last_bgsave_ok) || aof_error.is_some();
        state.last_write_error = aof_error;
        self.refusing.store(refusing, Ordering::SeqCst);
    }

    /// Turns the AOF off (CONFIG SET appendonly no): writes out and closes the file, kills
    /// a running rewrite.
    fn stop_aof(&self) {
        let writer = self.aof.write().take();
        self.update_logging();
        if let Some(writer) = writer {
            let _ = writer.flush_all();
        }
        let mut state = self.state.lock();
        if state.child.as_ref().is_some_and(|c| c.kind == ChildKind::Aof) {
            let child = state.child.take().expect("checked");
            self.log(LogLevel::Notice, &format!("Killing running AOF rewrite child: {}", child.pid.0));
            fork::kill_child(child.pid);
            let _ = std::fs::remove_file(&child.temp);
        }
        state.aof = AofState::Off;
        state.aof_start_pending = false;
        state.temp_incr = None;
    }

    /// DEBUG LOADAOF / RELOAD, a replica's full sync: every key of every database and every
    /// function library removed (Redis's emptyData without EMPTYDB_NOFUNCTIONS).
    pub(crate) fn empty_dataset(engine: &Engine) {
        for mut shard in engine.keyspace.lock_all() {
            for db in shard.dbs.iter_mut() {
                db.clear();
            }
        }
        engine.scripting.flush_libraries();
    }
}

/// Failed rewrites in a row from which automatic ones are limited (Redis's
/// AOF_REWRITE_LIMITE_THRESHOLD), and the longest delay (AOF_REWRITE_LIMITE_MAX_MINUTES).
const REWRITE_LIMIT_THRESHOLD: u64 = 3;
const REWRITE_LIMIT_MAX_MINUTES: i64 = 60;

/// A rewrite ended (or could not start): its status for INFO and the failures in a row.
fn note_rewrite(state: &mut State, ok: bool) {
    state.last_rewrite_ok = ok;
    state.rewrite_failures = if ok { 0 } else { state.rewrite_failures + 1 };
}

fn kind_word(file: &manifest::AofFile) -> &'static str {
    match file.kind {
        manifest::FileType::Base => "base",
        _ => "incr",
    }
}

fn describe_failure(what: &str, exit: ChildExit) -> String {
    match exit {
        ChildExit::Signal(sig) => format!("{what} terminated by signal {sig}"),
        ChildExit::Code(_) => format!("{what} terminated with error"),
    }
}

fn open_writer(engine: &Engine, path: &Path, mapped: bool) -> Result<AofWriter, String> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .read(mapped)
        .append(true)
        .open(path)
        .map_err(|e| format!("Can't open the append-only file {}: {e}", path.display()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let policy = FsyncPolicy::from_config(engine.config.read().get("appendfsync").unwrap_or("everysec"));
    let writer = AofWriter::new(file, size, policy).map_err(|e| e.to_string())?;
    writer.set_mapped(mapped);
    writer.set_timestamps(engine.config.read().get_bool("aof-timestamp-enabled"));
    Ok(writer)
}

/// Bytes of the base file (the reference size for automatic rewrites).
fn aof_size(manifest: &Manifest, dir: &Path) -> u64 {
    manifest.base.as_ref().and_then(|b| std::fs::metadata(dir.join(&b.name)).ok()).map_or(0, |m| m.len())
}

impl Persistence for Layer {
    fn aof_buffer_bytes(&self) -> usize {
        self.aof.read().as_ref().map_or(0, |w| w.buffered() as usize)
    }

    fn not_counted_for_eviction(&self) -> u64 {
        let replicas = if self.replication.is_empty() { 0 } else { self.replication.pending_output_bytes() };
        (replicas + self.aof_buffer_bytes()) as u64
    }

    fn replication_backlog_bytes(&self) -> usize {
        self.replication.backlog_bytes()
    }

    fn migrate_cached_sockets(&self) -> usize {
        crate::migrate::cached_sockets()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn wants_effects(&self) -> bool {
        self.logging.load(Ordering::Relaxed) || self.replication.is_active()
    }

    fn feed(&self, effects: &Effects) {
        if self.logging.load(Ordering::Relaxed) {
            if let Some(writer) = self.aof.read().as_ref() {
                writer.append(effects);
            }
        }
        if self.replication.is_active() {
            self.replication.feed(effects);
        }
    }

    fn info_fields(&self, engine: &Engine) -> String {
        let mut state = self.state.lock();
        let now_ms = engine.clock.now_ms();
        let writer = self.aof.read().clone();
        if let Some(child) = state.child.as_mut() {
            child.read_reports();
        }
        let state = state;
        // Redis's current_* fields: the running child's, zeros without one.
        let progress = state.child.as_ref().map(|c| c.progress).unwrap_or_default();
        let cow_age_s = if progress.cow_at_ms > 0 { (now_ms - progress.cow_at_ms).max(0) / 1000 } else { 0 };
        let fork_perc =
            if progress.keys_total > 0 { progress.keys_done as f64 * 100.0 / progress.keys_total as f64 } else { 0.0 };
        let child_of = |kind| state.child.as_ref().filter(|c| c.kind == kind);
        let rdb_child = child_of(ChildKind::Rdb);
        let aof_child = child_of(ChildKind::Aof);
        let status = |ok: bool| if ok { "ok" } else { "err" };
        let mut s = format!(
            "loading:{}\r\nasync_loading:{}\r\ncurrent_cow_peak:{}\r\ncurrent_cow_size:{}\r\ncurrent_cow_size_age:{}\r\n\
             current_fork_perc:{:.2}\r\ncurrent_save_keys_processed:{}\r\ncurrent_save_keys_total:{}\r\n\
             rdb_changes_since_last_save:{}\r\nrdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\n\
             rdb_last_bgsave_status:{}\r\nrdb_last_bgsave_time_sec:{}\r\nrdb_current_bgsave_time_sec:{}\r\n\
             rdb_saves:{}\r\nrdb_last_cow_size:{}\r\nrdb_last_load_keys_expired:{}\r\nrdb_last_load_keys_loaded:{}\r\n\
             aof_enabled:{}\r\naof_rewrite_in_progress:{}\r\naof_rewrite_scheduled:{}\r\n\
             aof_last_rewrite_time_sec:{}\r\naof_current_rewrite_time_sec:{}\r\naof_last_bgrewrite_status:{}\r\n\
             aof_rewrites:{}\r\naof_rewrites_consecutive_failures:{}\r\naof_last_write_status:{}\r\n\
             aof_last_cow_size:{}\r\nmodule_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n",
            u8::from(self.loading.load(Ordering::SeqCst)),
            u8::from(self.async_loading.load(Ordering::SeqCst)),
            progress.cow_peak,
            progress.cow_bytes,
            cow_age_s,
            fork_perc,
            progress.keys_done,
            progress.keys_total,
            engine.dirty().saturating_sub(state.dirty_at_last_save),
            u8::from(rdb_child.is_some()),
            state.lastsave_s,
            status(state.last_bgsave_ok),
            state.last_bgsave_duration_s,
            rdb_child.map_or(-1, |c| (now_ms - c.started_ms) / 1000),
            state.rdb_saves,
            state.rdb_last_cow_bytes,
            self.last_load_keys[1].load(Ordering::Relaxed),
            self.last_load_keys[0].load(Ordering::Relaxed),
            u8::from(state.aof != AofState::Off),
            u8::from(aof_child.is_some()),
            u8::from(state.rewrite_scheduled || state.aof_start_pending),
            state.last_rewrite_duration_s,
            aof_child.map_or(-1, |c| (now_ms - c.started_ms) / 1000),
            status(state.last_rewrite_ok),
            state.aof_rewrites,
            state.rewrite_failures,
            status(state.last_write_error.is_none()),
            state.aof_last_cow_bytes,
        );
        if let (AofState::On, Some(writer)) = (state.aof, writer) {
            s.push_str(&format!(
                "aof_current_size:{}\r\naof_base_size:{}\r\naof_pending_rewrite:0\r\naof_buffer_length:{}\r\n\
                 aof_pending_bio_fsync:{}\r\naof_delayed_fsync:0\r\n",
                state.aof_base_size + writer.size(),
                state.aof_base_size,
                writer.buffered(),
                u8::from(writer.pending_fsync()),
            ));
        }
        s
    }

    fn lastsave(&self) -> i64 {
        self.state.lock().lastsave_s
    }

    fn role_refusal(&self, engine: &Engine, write: bool, stale_ok: bool) -> Option<String> {
        if !self.is_replica.load(Ordering::Relaxed) {
            return None;
        }
        let master = self.master.lock();
        let link = master.as_ref()?;
        let (read_only, serve_stale) = {
            let config = engine.config.read();
            (config.get_bool("replica-read-only"), config.get_bool("replica-serve-stale-data"))
        };
        if write && read_only {
            return Some("READONLY You can't write against a read only replica.".into());
        }
        if !stale_ok && !serve_stale && !link.status.is_up() {
            return Some("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.".into());
        }
        None
    }

    fn replication_info(&self, engine: &Engine) -> Option<String> {
        let (good, backlog_size) = {
            let config = engine.config.read();
            let (min, lag) = (config.get_int("min-replicas-to-write"), config.get_int("min-replicas-max-lag"));
            let good = (min > 0 && lag > 0).then(|| self.replication.good_replicas(lag, engine.clock.now_ms()));
            (good, config.get_int("repl-backlog-size").max(1) as usize)
        };
        let mut s = String::new();
        if let Some(link) = self.master.lock().as_ref() {
            let status = &link.status;
            let now = engine.clock.now_ms();
            let state = status.state();
            let offset = self.replication.offset();
            let last_io = status.last_io_ms.load(Ordering::Relaxed);
            s.push_str(&format!(
                "role:slave\r\nmaster_host:{}\r\nmaster_port:{}\r\nmaster_link_status:{}\r\n\
                 master_last_io_seconds_ago:{}\r\nmaster_sync_in_progress:{}\r\nslave_read_repl_offset:{}\r\n\
                 slave_repl_offset:{offset}\r\n",
                link.host,
                link.port,
                if status.is_up() { "up" } else { "down" },
                if status.is_up() && last_io > 0 { (now - last_io).max(0) / 1000 } else { -1 },
                u8::from(state == crate::replication::link::LinkState::Sync),
                status.read_offset.load(Ordering::Relaxed).max(offset),
            ));
            if state == crate::replication::link::LinkState::Sync {
                let total = status.sync_total.load(Ordering::Relaxed);
                let read = status.sync_read.load(Ordering::Relaxed);
                let perc = if total > 0 { read as f64 / total as f64 * 100.0 } else { 0.0 };
                s.push_str(&format!(
                    "master_sync_total_bytes:{total}\r\nmaster_sync_read_bytes:{read}\r\n\
                     master_sync_left_bytes:{}\r\nmaster_sync_perc:{perc:.2}\r\nmaster_sync_last_io_seconds_ago:{}\r\n",
                    total - read,
                    (now - last_io).max(0) / 1000,
                ));
            }
            if !status.is_up() {
                let since = status.down_since_ms.load(Ordering::Relaxed);
                s.push_str(&format!(
                    "master_link_down_since_seconds:{}\r\n",
                    if since > 0 { (now - since).max(0) / 1000 } else { -1 }
                ));
            }
            let config = engine.config.read();
            s.push_str(&format!(
                "slave_priority:{}\r\nslave_read_only:{}\r\nreplica_announced:{}\r\n",
                config.get_int("replica-priority"),
                u8::from(config.get_bool("replica-read-only")),
                u8::from(config.get_bool("replica-announced")),
            ));
        } else {
            s.push_str("role:master\r\n");
        }
        let failover = crate::replication::failover::Failover::state_word(self.failover.lock().as_ref());
        s.push_str(&self.replication.info(good, backlog_size, failover));
        Some(s)
    }

    fn replication_offset(&self) -> u64 {
        self.replication.offset()
    }

    fn good_replicas(&self) -> usize {
        // A replica ignores min-replicas-to-write (its writes come from its master).
        if self.is_replica() {
            return usize::MAX;
        }
        let Some(engine) = self.engine.get().and_then(std::sync::Weak::upgrade) else { return 0 };
        let lag = engine.config.read().get_int("min-replicas-max-lag");
        self.replication.good_replicas(lag, engine.clock.now_ms())
    }

    fn change_replication_id(&self) -> Result<(), String> {
        self.replication.change_id();
        Ok(())
    }

    fn reset_sync_counts(&self) {
        self.replication.reset_counts();
    }

    fn sync_counts(&self) -> [u64; 3] {
        let c = self.replication.counts();
        [c.full, c.partial_ok, c.partial_err]
    }

    fn write_refusal(&self) -> Option<String> {
        if !self.refusing.load(Ordering::Relaxed) {
            return None;
        }
        let state = self.state.lock();
        Some(match &state.last_write_error {
            Some(e) => format!("MISCONF Errors writing to the AOF file: {e}"),
            None => "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. \
                     Commands that may modify the data set are disabled, because this instance is configured to \
                     report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). \
                     Please check the Redis logs for details about the RDB error."
                .to_string(),
        })
    }

    fn durability_pending(&self) -> bool {
        self.aof.read().as_ref().is_some_and(|w| w.behind())
    }

    fn write_position(&self) -> Option<u64> {
        self.aof.read().as_ref().map(|w| w.position())
    }

    fn make_durable_upto(&self, position: u64) -> Result<(), String> {
        let writer = self.aof.read().clone();
        let Some(writer) = writer else { return Ok(()) };
        let sleep_us = self.aof_flush_sleep_us.load(Ordering::Relaxed);
        if sleep_us > 0 && writer.behind() {
            std::thread::sleep(std::time::Duration::from_micros(sleep_us));
        }
        let result = writer.make_durable_upto(position);
        if writer.error().is_some() {
            self.refusing.store(true, Ordering::SeqCst);
            self.state.lock().last_write_error = writer.error();
        }
        result
    }

    fn make_durable(&self) -> Result<(), String> {
        match self.write_position() {
            Some(position) => self.make_durable_upto(position),
            None => Ok(()),
        }
    }

    fn config_changed(&self, engine: &Engine, in_transaction: bool) {
        // A new repl-backlog-size applies at once (Redis's resizeReplicationBacklog).
        self.replication.resize_backlog(engine.config.read().get_int("repl-backlog-size").max(1) as usize);
        let (on, policy, timestamps) = {
            let config = engine.config.read();
            (
                config.get_bool("appendonly"),
                FsyncPolicy::from_config(config.get("appendfsync").unwrap_or("everysec")),
                config.get_bool("aof-timestamp-enabled"),
            )
        };
        if let Some(writer) = self.aof.read().as_ref() {
            writer.set_policy(policy);
            writer.set_timestamps(timestamps);
        }
        // `aof-disable-auto-gc no` again: the history kept meanwhile goes now.
        self.delete_history(engine, &mut self.state.lock());
        let state = self.state.lock().aof;
        match (on, state) {
            // CONFIG SET holds the gate exclusively: the first rewrite forks right away (as
            // Redis's startAppendOnly), unless a child runs already (then at the next cron).
            (true, AofState::Off) => {
                let mut state = self.state.lock();
                if state.child.is_some() || self.loading.load(Ordering::SeqCst) {
                    state.aof_start_pending = true;
                    if state.child.as_ref().is_some_and(|c| c.kind != ChildKind::Aof) {
                        self.log(LogLevel::Warning, "AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.");
                    }
                } else if in_transaction {
                    state.aof_start_pending = true;
                    self.log(
                        LogLevel::Warning,
                        "AOF was enabled during a transaction. An AOF background was scheduled to start when possible.",
                    );
                } else {
                    state.aof = AofState::WaitRewrite;
                    if let Err(e) = self.start_rewrite(engine, &mut state) {
                        self.log(LogLevel::Warning, &format!("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation: {e}"));
                        state.aof_start_pending = true;
                    }
                }
            }
            (false, AofState::On | AofState::WaitRewrite) => self.stop_aof(),
            _ => {}
        }
        // `stop-writes-on-bgsave-error` and `save` decide MISCONF at once.
        self.refresh_refusal(engine);
        self.apply_oom_score(engine);
    }

    fn function_payload(&self, engine: &Engine, codes: &[Vec<u8>]) -> Result<Vec<u8>, String> {
        let compress = engine.config.read().get_bool("rdbcompression");
        Ok(crate::rdb::function_payload(codes, compress))
    }

    fn function_payload_codes(&self, payload: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        crate::rdb::function_payload_codes(payload)
    }

    fn after_flushall(&self, engine: &Engine) {
        let rdb_child = {
            let mut state = self.state.lock();
            match state.child.as_ref().map(|c| c.kind) {
                Some(ChildKind::Rdb) => state.child.take(),
                _ => None,
            }
        };
        if let Some(child) = rdb_child {
            fork::kill_child(child.pid);
            let _ = std::fs::remove_file(&child.temp);
        }
        if engine.config.read().get("save").unwrap_or("").trim().is_empty() {
            return;
        }
        let p = paths(engine);
        let dirty = engine.dirty();
        match snapshot::save_file(
            engine,
            &p.dir,
            &p.dbfilename,
            std::process::id() as i32,
            self.replication.history_for_save(),
        ) {
            Ok(()) => {
                let mut state = self.state.lock();
                state.lastsave_s = now_s(engine);
                state.last_bgsave_ok = true;
                state.dirty_at_last_save = dirty;
            }
            Err(e) => self.log(LogLevel::Warning, &format!("Failed saving the DB: {e}")),
        }
    }

    fn prepare_shutdown(&self, engine: &Engine, save: Option<bool>) -> Result<(), String> {
        let result = self.shutdown(engine, save);
        if let Err(e) = &result {
            self.log(LogLevel::Warning, e);
        }
        result
    }

    fn debug_reload(&self, engine: &Engine, save: bool, flush: bool, merge: bool) -> Result<(), String> {
        if save {
            self.save_now(engine)?;
        }
        if flush {
            Self::empty_dataset(engine);
        }
        let p = paths(engine);
        self.set_loading(engine, true);
        let result = snapshot::load_file(engine, &p.dir.join(&p.dbfilename), false, merge, &mut |l, m| self.log(l, m));
        self.set_loading(engine, false);
        result.map_err(|e| {
            self.log(LogLevel::Warning, &e);
            "ERR Error trying to load the RDB dump, check server logs.".to_string()
        })?;
        self.log(LogLevel::Notice, "DB reloaded by DEBUG RELOAD");
        Ok(())
    }

    fn log_warning(&self, message: &str) {
        self.log(LogLevel::Warning, message);
    }

    fn debug_log(&self, message: &str) -> Result<(), String> {
        self.log(LogLevel::Warning, &format!("DEBUG LOG: {message}"));
        Ok(())
    }

    fn debug_skip_checksum_validation(&self, skip: bool) -> Result<(), String> {
        self.skip_checksum.store(skip, Ordering::Relaxed);
        Ok(())
    }

    fn debug_aof_flush_sleep(&self, micros: u64) -> Result<(), String> {
        self.aof_flush_sleep_us.store(micros, Ordering::Relaxed);
        Ok(())
    }

    fn debug_loadaof(&self, engine: &Engine) -> Result<(), String> {
        if let Some(writer) = self.aof.read().clone() {
            writer.flush_all()?;
        }
        Self::empty_dataset(engine);
        let p = paths(engine);
        self.set_loading(engine, true);
        let result = self.load_aof_files(engine, &p);
        self.set_loading(engine, false);
        if let Err(e) = result {
            // Redis exits here; we keep running with what loaded and say so.
            self.log(LogLevel::Warning, &e);
            return Err(format!("ERR {e}"));
        }
        // What loaded is no change to save, as Redis's `server.dirty = 0` after the load.
        self.state.lock().dirty_at_last_save = engine.dirty();
        self.log(LogLevel::Warning, "Append Only File loaded by DEBUG LOADAOF");
        Ok(())
    }
}
