//! The hook through which a persistence layer (the `quince-persist` crate) plugs into the
//! engine. The engine knows nothing of files: it hands every write's effects to the hook in
//! execution order, and the commands that need files (SAVE, BGSAVE, DEBUG RELOAD, DUMP...)
//! are registered by the persistence layer itself through `EngineOptions::extra_commands`.

use std::any::Any;

use crate::Engine;

/// What the engine asks of a persistence layer. Only `as_any`, `wants_effects` and `feed`
/// are required: the rest default to a layer with no files (nothing saved, nothing to wait
/// for; the file commands answer that persistence is not available), which is what a
/// recorder of effects in tests needs.
pub trait Persistence: Send + Sync + 'static {
    /// For the persistence layer's own commands to reach their state (downcast).
    fn as_any(&self) -> &dyn Any;

    /// Whether `feed` wants effects at all (false: the engine skips encoding them).
    fn wants_effects(&self) -> bool;

    /// The effects of one write: one command, or a whole transaction or script (wrap them
    /// in MULTI/EXEC when `Effects::needs_wrap`). Called in execution order for any two
    /// writes that touch a common key: while their shard locks (or the exclusive
    /// transaction gate) are still held.
    fn feed(&self, effects: &Effects);

    /// The `# Persistence` section of INFO, without its header line.
    fn info_fields(&self, _engine: &Engine) -> String {
        String::new()
    }

    /// LASTSAVE: Unix seconds of the last successful save.
    /// Bytes of the AOF buffer not yet written (MEMORY STATS' aof.buffer).
    fn aof_buffer_bytes(&self) -> usize {
        0
    }

    /// Memory that does not count toward `maxmemory` (Redis's
    /// freeMemoryGetNotCountedMemory): replicas' pending output and the AOF buffer, so a
    /// lagging replica never makes the master evict keys.
    fn not_counted_for_eviction(&self) -> u64 {
        0
    }

    /// Bytes the replication backlog holds allocated (INFO's `mem_replication_backlog`).
    fn replication_backlog_bytes(&self) -> usize {
        0
    }

    /// INFO's `migrate_cached_sockets`: connections MIGRATE keeps to its targets.
    fn migrate_cached_sockets(&self) -> usize {
        0
    }

    fn lastsave(&self) -> i64 {
        0
    }

    /// Why writes are refused right now (a `-MISCONF ...` line without the dash), if they are.
    fn write_refusal(&self) -> Option<String> {
        None
    }

    /// Why a command is refused because of the replication role: READONLY for a write on
    /// a replica, MASTERDOWN for a command not flagged `stale` while the link to the master
    /// is down and `replica-serve-stale-data` is no. Never for the master's own stream.
    fn role_refusal(&self, _engine: &Engine, _write: bool, _stale_ok: bool) -> Option<String> {
        None
    }

    /// The `# Replication` section of INFO without its header, when the layer keeps a
    /// replication stream; None for the engine's own (a master without one).
    fn replication_info(&self, _engine: &Engine) -> Option<String> {
        None
    }

    /// DEBUG CHANGE-REPL-ID: a new replication ID, no secondary one.
    fn change_replication_id(&self) -> Result<(), String> {
        Err(NO_FILES.into())
    }

    /// INFO's `sync_full`, `sync_partial_ok`, `sync_partial_err`.
    fn sync_counts(&self) -> [u64; 3] {
        [0; 3]
    }

    /// CONFIG RESETSTAT: the sync counters back to zero.
    fn reset_sync_counts(&self) {}

    /// Where the replication stream ends now (`master_repl_offset`; 0 without one).
    fn replication_offset(&self) -> u64 {
        0
    }

    /// Replicas whose last acknowledgement is at most `min-replicas-max-lag` seconds old
    /// (for `min-replicas-to-write`).
    fn good_replicas(&self) -> usize {
        0
    }

    /// Whether replies about to be sent may depend on writes that are not yet as durable
    /// as `appendfsync` promises; cheap (the server asks before every flush).
    fn durability_pending(&self) -> bool {
        false
    }

    /// Makes every write fed so far durable per `appendfsync` (group commit: one call can
    /// cover the writes of many clients). An error: under `appendfsync always` the log
    /// could not be written or fsynced, so replies that may depend on those writes must not
    /// be given yet (the caller retries later).
    fn make_durable(&self) -> Result<(), String> {
        Ok(())
    }

    /// Where the log of writes ends now (None: no log). A caller that reads it after its
    /// write and passes it to `make_durable_upto` waits for its own write only.
    fn write_position(&self) -> Option<u64> {
        None
    }

    /// Makes the writes fed up to `position` durable per `appendfsync` (errors as
    /// `make_durable`).
    fn make_durable_upto(&self, _position: u64) -> Result<(), String> {
        self.make_durable()
    }

    /// The configuration changed (CONFIG SET): react to `appendonly`, `appendfsync`...
    /// `in_transaction`: CONFIG SET ran inside EXEC, where no child may fork (its snapshot
    /// would hold half the transaction): work that forks is scheduled for the cron.
    fn config_changed(&self, _engine: &Engine, _in_transaction: bool) {}

    /// DEBUG RELOAD: save (unless `!save`), empty the dataset (unless `!flush`), load the
    /// snapshot; with `merge`, keys and libraries already present are replaced instead of
    /// failing the load. Runs with the transaction gate held exclusively.
    fn debug_reload(&self, _engine: &Engine, _save: bool, _flush: bool, _merge: bool) -> Result<(), String> {
        Err(NO_FILES.into())
    }

    /// Before exiting (SHUTDOWN, SIGTERM): stop children, write the AOF out, save an RDB when
    /// `save` says so (None: when save points are configured). Runs with the gate held
    /// exclusively (or with no command running).
    fn prepare_shutdown(&self, _engine: &Engine, save: Option<bool>) -> Result<(), String> {
        match save {
            Some(true) => Err(NO_FILES.into()),
            _ => Ok(()),
        }
    }

    /// FLUSHALL emptied the dataset: stop a snapshot child and, with save points configured,
    /// save the empty dataset (as Redis's flushAllDataAndResetRDB). Gate held exclusively.
    fn after_flushall(&self, _engine: &Engine) {}

    /// FUNCTION DUMP: the payload holding these library codes.
    fn function_payload(&self, _engine: &Engine, _codes: &[Vec<u8>]) -> Result<Vec<u8>, String> {
        Err(NO_FILES.into())
    }

    /// FUNCTION RESTORE: the library codes in a payload, or the error text (without `ERR `).
    fn function_payload_codes(&self, _payload: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        Err(NO_FILES.into())
    }

    /// Writes a line to the server's log at warning level (nothing without a log).
    fn log_warning(&self, _message: &str) {}

    /// DEBUG LOG: writes `DEBUG LOG: <message>` to the server's log at warning level.
    fn debug_log(&self, _message: &str) -> Result<(), String> {
        Err(NO_FILES.into())
    }

    /// DEBUG SET-SKIP-CHECKSUM-VALIDATION: RESTORE and RDB loading skip the CRC check.
    fn debug_skip_checksum_validation(&self, _skip: bool) -> Result<(), String> {
        Err(NO_FILES.into())
    }

    /// DEBUG AOF-FLUSH-SLEEP: sleep this long before each write of buffered AOF data (0:
    /// never), as Redis's test knob.
    fn debug_aof_flush_sleep(&self, _micros: u64) -> Result<(), String> {
        Err(NO_FILES.into())
    }

    /// DEBUG LOADAOF: write out the AOF, empty the dataset, load the AOF again. Runs with the
    /// transaction gate held exclusively.
    fn debug_loadaof(&self, _engine: &Engine) -> Result<(), String> {
        Err(NO_FILES.into())
    }
}

/// What the file commands answer when the layer has no files.
const NO_FILES: &str = "ERR persistence is not enabled";

/// Where an effect goes: the append-only file, replicas, or both (Redis's PROPAGATE_AOF
/// and PROPAGATE_REPL; a script chooses with redis.set_repl).
pub mod targets {
    pub const AOF: u8 = 1;
    pub const REPLICAS: u8 = 2;
    pub const ALL: u8 = AOF | REPLICAS;
}

/// The write effects of one command, or of a whole transaction or script: commands in
/// RESP, each with the database it applies to. Reused between commands (no allocation on
/// the hot path once warm).
#[derive(Debug, Default, Clone)]
pub struct Effects {
    buf: Vec<u8>,
    /// (database, end offset in `buf`, `targets`) per command.
    ops: Vec<(usize, usize, u8)>,
    /// From a transaction or script: more than one op must be applied atomically (the
    /// layer wraps them in MULTI/EXEC, as Redis's propagatePendingCommands does).
    pub atomic: bool,
}

impl Effects {
    /// Appends one command for database `db`.
    pub fn push<A: AsRef<[u8]>>(&mut self, db: usize, args: &[A]) {
        self.push_to(db, args, targets::ALL);
    }

    /// Appends a command for the given `targets` only (nothing when none).
    pub fn push_to<A: AsRef<[u8]>>(&mut self, db: usize, args: &[A], to: u8) {
        if to & targets::ALL == 0 {
            return;
        }
        quince_resp::encode_command(&mut self.buf, args);
        self.ops.push((db, self.buf.len(), to & targets::ALL));
    }

    /// Appends a command only replicas get, not the append-only file (PUBLISH, as Redis's
    /// PROPAGATE_REPL).
    pub fn push_for_replicas<A: AsRef<[u8]>>(&mut self, db: usize, args: &[A]) {
        self.push_to(db, args, targets::REPLICAS);
    }

    /// The commands for the append-only file, in order: (database, RESP bytes).
    pub fn ops(&self) -> impl Iterator<Item = (usize, &[u8])> {
        self.all_ops().filter(|op| op.2 & targets::AOF != 0).map(|(db, bytes, _)| (db, bytes))
    }

    /// Every command with its targets: (database, RESP bytes, `targets`).
    pub fn all_ops(&self) -> impl Iterator<Item = (usize, &[u8], u8)> {
        let mut start = 0;
        self.ops.iter().map(move |&(db, end, to)| {
            let op = &self.buf[start..end];
            start = end;
            (db, op, to)
        })
    }

    /// Commands, replicas-only ones included.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Whether a consumer must wrap its commands in MULTI/EXEC: decided on all of them, for
    /// the append-only file too (Redis's propagatePendingCommands counts every op).
    pub fn needs_wrap(&self) -> bool {
        self.atomic && self.ops.len() > 1
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.ops.clear();
        self.atomic = false;
    }
}
