//! The Quince data engine: keyspace, value types, commands, expiry.
//!
//! The engine owns data and command semantics and nothing else: no sockets, no threads of
//! its own, no clock of its own (time comes from an injected [`Clock`]). The server, the
//! embedded library and the simulator all drive it through [`Engine::execute`].
//!
//! ```
//! use quince_engine::{Client, Engine, EngineOptions, Reply, ReplyBuilder};
//!
//! let engine = Engine::new(EngineOptions::default());
//! let mut client = engine.new_client();
//! let mut replies = ReplyBuilder::new();
//! engine.execute(&mut client, &[b"SET", b"greeting", b"hello"], &mut replies);
//! engine.execute(&mut client, &[b"GET", b"greeting"], &mut replies);
//! assert_eq!(replies.take(), [Reply::Simple("OK".into()), Reply::Bulk(b"hello".to_vec())]);
//! ```

pub mod acl;
pub mod bits;
pub mod blocking;
pub mod clients;
pub mod clock;
pub mod cluster;
pub mod cmd;
pub mod command;
pub mod config;
pub mod error;
pub mod evict;
mod exec;
mod expire;
mod fast_read;
pub mod gate;
pub mod geohash;
pub mod glob;
pub mod hll;
pub mod keyspace;
pub mod lazyfree;
pub mod longdouble;
pub mod observe;
pub mod persistence;
pub mod pubsub;
pub mod reply;
pub mod slot;
pub mod tracking;
pub mod types;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

pub use clients::{ClientHandle, ClientRegistry, ConnInfo};
pub use clock::{Clock, ManualClock, SystemClock};
pub use cmd::scripting::{with_busy_service, with_script_service, ScriptService};
pub use command::{CommandSpec, CommandTable};
pub use config::Config;
pub use error::{CmdError, CmdResult};
pub use exec::{Client, Ctx, NullSink, ReplyMode};
pub use expire::CycleReport;
pub use keyspace::{AccessMode, Keyspace};
pub use observe::Observe;
pub use reply::{Reply, ReplyBuilder, ReplySink};

/// The version Quince reports as `redis_version`: the Redis release whose behaviour it follows.
pub const REDIS_VERSION: &str = "7.0.15";
pub const QUINCE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Moves the host's listening sockets to a `bind` list, a port and a TLS port
/// (`Engine::rebind`).
pub type Rebinder = Box<dyn Fn(&str, u16, u16) -> Result<(), String> + Send + Sync>;

/// Builds the host's TLS configuration anew from the `tls-*` parameters
/// (`Engine::reconfigure_tls`).
pub type TlsHook = Box<dyn Fn(&Config) -> Result<(), String> + Send + Sync>;

pub struct EngineOptions {
    pub config: Config,
    pub clock: Arc<dyn Clock>,
    /// Keyspace shards; 0 picks a default from the worker count.
    pub shards: usize,
    /// Commands served besides the engine's own (the persistence layer's SAVE, DUMP...).
    pub extra_commands: Vec<CommandSpec>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self { config: Config::default(), clock: Arc::new(SystemClock), shards: 0, extra_commands: Vec::new() }
    }
}

/// Counters INFO reports. Updated by the engine and, for connections, by the server.
#[derive(Debug, Default)]
pub struct Stats {
    pub connected_clients: AtomicU64,
    pub total_connections_received: AtomicU64,
    pub rejected_connections: AtomicU64,
    pub total_commands_processed: AtomicU64,
    pub keyspace_hits: AtomicU64,
    pub keyspace_misses: AtomicU64,
    pub total_net_input_bytes: AtomicU64,
    pub total_net_output_bytes: AtomicU64,
    /// Socket reads and writes by the server (INFO's total_reads_processed and
    /// total_writes_processed: a write is one flush of a client's output, however many
    /// replies it carries).
    pub total_reads_processed: AtomicU64,
    pub total_writes_processed: AtomicU64,
    /// In-place changes (see `Ctx::dirty`); add `Engine::dirty()` for the total.
    pub dirty: AtomicU64,
    /// Keys removed by `maxmemory` eviction.
    pub evicted_keys: AtomicU64,
    /// Child processes forked (snapshots, AOF rewrites), counted by the persistence layer.
    pub total_forks: AtomicU64,
}

/// Facts about the hosting process that INFO reports; set once by the server.
#[derive(Debug, Clone, Default)]
pub struct ServerFacts {
    pub tcp_port: u16,
    pub threads: usize,
    pub executable: String,
    pub config_file: String,
    pub start_time_ms: i64,
    pub process_id: u32,
    /// `uname`-style `sysname release machine`.
    pub os: String,
    /// 40 hex characters, new each start.
    pub run_id: String,
    /// How the server's workers wait for sockets: "epoll" or "io_uring" (INFO's
    /// multiplexing_api); empty reads as "epoll".
    pub multiplexing_api: &'static str,
    /// INFO's mem_allocator (`libc` when the server doesn't say).
    pub mem_allocator: String,
}

/// Configuration values read on every command, cached in atomics so the hot path takes no
/// lock. Refreshed by `Engine::config_changed`.
#[derive(Debug)]
pub struct HotConfig {
    pub lfu: AtomicBool,
    pub lfu_log_factor: AtomicU32,
    pub lfu_decay_time: AtomicU32,
    /// Redis keeps shared integer objects unless an LRU/LFU policy needs per-key access data.
    pub shared_integers: AtomicBool,
    pub active_expire: AtomicBool,
    /// `latency-tracking`: commands' latency histograms are kept (INFO latencystats,
    /// LATENCY HISTOGRAM).
    pub latency_tracking: AtomicBool,
    /// `notify-keyspace-events` as `pubsub::notify` bits (0: notifications off).
    pub notify_flags: std::sync::atomic::AtomicI64,
    /// Collection encoding thresholds (`hash-max-listpack-entries` ...).
    pub limits: parking_lot::RwLock<types::Limits>,
    /// `maxmemory` in bytes (0: no limit) and `maxmemory-policy`.
    pub maxmemory: AtomicU64,
    pub maxmemory_policy: parking_lot::RwLock<evict::Policy>,
    /// `min-replicas-to-write` (with `min-replicas-max-lag`) asks for replicas: writes are
    /// refused with NOREPLICAS unless that many replicas acknowledged recently.
    pub writes_need_replicas: AtomicBool,
    pub min_replicas_to_write: AtomicU64,
    /// We are a replica: keys are deleted by the master's stream only; other clients'
    /// commands see logically expired keys as missing without deleting them (Redis's
    /// expireIfNeeded on a replica), and no active expiry runs.
    pub replica_keeps_expired: AtomicBool,
    /// `busy-reply-threshold` (`lua-time-limit`) in milliseconds, read by every script.
    pub busy_reply_threshold_ms: std::sync::atomic::AtomicI64,
    /// `lazyfree-lazy-user-del` (DEL frees as UNLINK) and `lazyfree-lazy-user-flush`
    /// (FLUSHDB/FLUSHALL without a mode free as ASYNC).
    pub lazy_user_del: AtomicBool,
    /// `activerehashing`: the cron finishes the key tables' incremental rehashing.
    pub active_rehashing: AtomicBool,
    /// `lazyfree-lazy-expire`, `-eviction` and `-server-del` as `lazyfree::LAZY_*` bits.
    pub lazy_free_mask: std::sync::atomic::AtomicU8,
    pub lazy_user_flush: AtomicBool,
}

/// WATCHed keys: (db, key) to the dirty flags of the clients watching it.
type WatchTable = hashbrown::HashMap<(usize, keyspace::Key), Vec<Arc<AtomicBool>>>;

/// What a host's allocator offers MEMORY STATS, MALLOC-STATS and PURGE.
#[derive(Clone, Copy)]
pub struct AllocatorHooks {
    /// The allocator's statistics report (jemalloc's malloc_stats_print).
    pub stats: fn() -> String,
    /// Returns unused pages to the system; false if the allocator refused.
    pub purge: fn() -> bool,
    /// Bytes the allocator handed out, holds in active pages and keeps resident (jemalloc's
    /// stats.allocated, stats.active, stats.resident).
    pub sizes: fn() -> Option<(u64, u64, u64)>,
}

pub struct Engine {
    pub keyspace: Keyspace,
    pub table: CommandTable,
    /// The first `rename-command` line that could not be applied, and why (the host
    /// refuses to start).
    pub rename_error: Option<(String, String)>,
    /// Users from the config file or the ACL file that could not be loaded, and why, in
    /// Redis's log wording (the host refuses to start).
    pub acl_error: Option<String>,
    /// Users, permissions and the ACL log.
    pub acl: acl::Acl,
    /// Client-side caching: who read which keys (CLIENT TRACKING).
    pub tracking: tracking::Tracking,
    pub clock: Arc<dyn Clock>,
    pub config: RwLock<Config>,
    pub stats: Stats,
    pub server: RwLock<ServerFacts>,
    pub hot: HotConfig,
    pub clients: ClientRegistry,
    pub observe: Observe,
    pub lazyfree: lazyfree::LazyFree,
    pub pubsub: pubsub::PubSub,
    /// `client-output-buffer-limit` for normal clients and replicas.
    pub output_limits: clients::OutputLimits,
    /// CLIENT PAUSE: until when (Unix ms, 0: not paused) and whether reads pause too.
    pause_end_ms: std::sync::atomic::AtomicI64,
    /// A FAILOVER holds writes until it ends.
    failover_pause: AtomicBool,
    async_loading: AtomicBool,
    /// Keys a writable replica's clients gave a TTL: the replica expires them itself (the
    /// master's stream never will). INFO's `slave_expires_tracked_keys`.
    pub(crate) replica_local_ttls: parking_lot::Mutex<hashbrown::HashSet<(usize, keyspace::Key)>>,
    pause_all: AtomicBool,
    memory_probe: RwLock<Option<fn() -> usize>>,
    /// Used memory once the server was ready, before any client (MEMORY STATS'
    /// startup.allocated).
    startup_memory: AtomicU64,
    /// The host's allocator controls (MEMORY MALLOC-STATS and PURGE), if it has any.
    allocator: RwLock<Option<AllocatorHooks>>,
    memory_peak: AtomicU64,
    next_client_id: AtomicU64,
    /// Clients blocked on keys right now; when zero, commands skip the ready-key check.
    pub(crate) blocked_count: AtomicUsize,
    /// Held shared by every command and exclusively by EXEC (transaction atomicity).
    exec_gate: gate::ExecGate,
    /// The indexes in the command table of the commands with a fast path (`fast_read`),
    /// those that answer to their own names (not renamed).
    fast_commands: [Option<usize>; observe::FAST_COMMANDS],
    /// WATCHed keys: (db, key) to the flags of the clients watching it.
    watches: parking_lot::Mutex<WatchTable>,
    watch_count: AtomicUsize,
    expire_cursor: AtomicUsize,
    shutdown_requested: AtomicBool,
    /// A shutdown a signal scheduled, not yet run (SHUTDOWN ABORT cancels it).
    shutdown_pending: AtomicBool,
    /// DEBUG PAUSE-CRON: the host's periodic work (and a scheduled shutdown) waits.
    cron_paused: AtomicBool,
    /// How the host moves its listening sockets (CONFIG SET port / bind); None: it has
    /// none that can move (an embedded Db).
    rebinder: parking_lot::RwLock<Option<Rebinder>>,
    tls_hook: parking_lot::RwLock<Option<TlsHook>>,
    /// The Lua VM, its script cache and the running script's state.
    pub scripting: cmd::scripting::Scripting,
    /// The persistence layer, once installed (none: an in-memory engine).
    persistence: std::sync::OnceLock<Arc<dyn persistence::Persistence>>,
    loading: AtomicBool,
    /// Cluster mode (`cluster-enabled`): the slot map commands are routed by.
    pub cluster: cluster::Cluster,
}

impl Engine {
    /// Keeps the classes of `client-output-buffer-limit` (as stored: always well formed).
    fn set_output_limits(&self, text: &str) {
        let words: Vec<&str> = text.split_whitespace().collect();
        for chunk in words.chunks(4) {
            if let [class, hard, soft, secs] = chunk {
                let limit = match class.to_ascii_lowercase().as_str() {
                    "normal" => &self.output_limits.normal,
                    "replica" | "slave" => &self.output_limits.replica,
                    "pubsub" => &self.pubsub.limit,
                    _ => continue,
                };
                limit.set(hard.parse().unwrap_or(0), soft.parse().unwrap_or(0), secs.parse().unwrap_or(0));
            }
        }
    }

    /// Whether `client`, with `pending` bytes of output not yet written, is over the
    /// output limit of its class (Redis's getClientType: a replica unless it is a
    /// MONITOR, else pubsub when subscribed, else normal). Bytes the client is exempt
    /// from (a replica's snapshot) don't count.
    pub fn output_limit_reached(&self, client: &clients::ClientHandle, pending: usize, now_ms: i64) -> bool {
        let pending = pending.saturating_sub(client.limit_exempt_bytes());
        use clients::flag;
        let limit = if client.has_flag(flag::REPLICA) && !client.has_flag(flag::MONITOR) {
            &self.output_limits.replica
        } else if client.has_flag(flag::PUBSUB) {
            &self.pubsub.limit
        } else {
            &self.output_limits.normal
        };
        limit.exceeded(client, pending, now_ms)
    }
}

impl Engine {
    pub fn new(options: EngineOptions) -> Self {
        let databases = options.config.get_int("databases") as usize;
        let shards = match options.shards {
            0 => 64,
            n => n,
        };
        let start_time_ms = options.clock.now_ms();
        let mut commands = cmd::all_commands();
        commands.extend(options.extra_commands);
        let mut table = CommandTable::new(commands);
        // `rename-command`: the first failure is kept for the host to report and stop on.
        let mut rename_error = None;
        for (old, new) in &options.config.renamed_commands {
            if let Err(e) = table.rename(old, new) {
                rename_error.get_or_insert((format!("rename-command {old} {new}"), e));
            }
        }
        let table_ids = table.id_count();
        let fast_commands = fast_read::FAST_COMMAND_NAMES
            .map(|name| table.index_of(name.as_bytes()).filter(|&i| table.at(i).name == name));
        let fast_ids = fast_commands.iter().map(|i| i.map_or(usize::MAX, |i| table.at(i).id)).collect();
        let acl = acl::Acl::new(&table);
        acl.set_default_password(options.config.get("requirepass").unwrap_or(""), &table);
        *acl.applied_requirepass.lock() = Some(options.config.get("requirepass").unwrap_or("").to_string());
        let acl_error = cmd::acl::load_users_at_startup(&acl, &table, &options.config).err();
        let cluster = cluster::Cluster::new(options.config.get_bool("cluster-enabled"));
        let engine = Self {
            cluster,
            acl,
            acl_error,
            tracking: tracking::Tracking::default(),
            keyspace: Keyspace::new(shards, databases),
            table,
            rename_error,
            clock: options.clock,
            config: RwLock::new(options.config),
            stats: Stats::default(),
            server: RwLock::new(ServerFacts { start_time_ms, ..ServerFacts::default() }),
            hot: HotConfig {
                lfu: AtomicBool::new(false),
                lfu_log_factor: AtomicU32::new(0),
                lfu_decay_time: AtomicU32::new(0),
                shared_integers: AtomicBool::new(false),
                active_expire: AtomicBool::new(false),
                latency_tracking: AtomicBool::new(true),
                notify_flags: std::sync::atomic::AtomicI64::new(0),
                limits: parking_lot::RwLock::new(types::Limits::default()),
                maxmemory: AtomicU64::new(0),
                maxmemory_policy: parking_lot::RwLock::new(evict::Policy::NoEviction),
                writes_need_replicas: AtomicBool::new(false),
                min_replicas_to_write: AtomicU64::new(0),
                replica_keeps_expired: AtomicBool::new(false),
                busy_reply_threshold_ms: std::sync::atomic::AtomicI64::new(0),
                lazy_user_del: AtomicBool::new(false),
                active_rehashing: AtomicBool::new(true),
                lazy_free_mask: std::sync::atomic::AtomicU8::new(0),
                lazy_user_flush: AtomicBool::new(false),
            },
            clients: ClientRegistry::default(),
            observe: Observe::new(table_ids, fast_ids),
            lazyfree: lazyfree::LazyFree::default(),
            pubsub: pubsub::PubSub::default(),
            output_limits: clients::OutputLimits::default(),
            pause_end_ms: std::sync::atomic::AtomicI64::new(0),
            failover_pause: AtomicBool::new(false),
            async_loading: AtomicBool::new(false),
            replica_local_ttls: parking_lot::Mutex::new(hashbrown::HashSet::new()),
            pause_all: AtomicBool::new(false),
            memory_probe: RwLock::new(None),
            startup_memory: AtomicU64::new(0),
            allocator: RwLock::new(None),
            memory_peak: AtomicU64::new(0),
            next_client_id: AtomicU64::new(1),
            blocked_count: AtomicUsize::new(0),
            exec_gate: gate::ExecGate::default(),
            fast_commands,
            watches: parking_lot::Mutex::new(hashbrown::HashMap::new()),
            watch_count: AtomicUsize::new(0),
            expire_cursor: AtomicUsize::new(0),
            shutdown_requested: AtomicBool::new(false),
            shutdown_pending: AtomicBool::new(false),
            cron_paused: AtomicBool::new(false),
            rebinder: parking_lot::RwLock::new(None),
            tls_hook: parking_lot::RwLock::new(None),
            scripting: cmd::scripting::Scripting::default(),
            persistence: std::sync::OnceLock::new(),
            loading: AtomicBool::new(false),
        };
        engine.hot.active_expire.store(true, Ordering::Relaxed);
        engine.config_changed();
        engine
    }

    /// Installs the persistence layer (once; later calls are ignored).
    pub fn set_persistence(&self, layer: Arc<dyn persistence::Persistence>) {
        let _ = self.persistence.set(layer);
    }

    pub fn persistence(&self) -> Option<&Arc<dyn persistence::Persistence>> {
        self.persistence.get()
    }

    /// Waits until no command runs and holds every other command off while the guard
    /// lives: a consistent point of the whole dataset (for fork-based snapshots).
    pub fn exclusive(&self) -> gate::ExclusiveGate<'_> {
        self.exec_gate.write()
    }

    /// Holds the transaction gate as any command does (for work outside a command that
    /// touches keys: the server's eviction cron), so it never interleaves with a snapshot.
    pub fn shared_gate(&self) -> gate::SharedGate<'_> {
        self.exec_gate.read()
    }

    /// The shared gate if no command holds it exclusively now (work that must stand still
    /// while such a command runs, as Redis's whole event loop does: DEBUG SLEEP, a script).
    pub fn try_shared_gate(&self) -> Option<gate::SharedGate<'_>> {
        self.exec_gate.try_read()
    }

    /// Re-reads the configuration values cached in `hot`; call after changing `config`.
    pub fn config_changed(&self) {
        self.config_changed_in(false)
    }

    /// `config_changed` for a CONFIG SET that ran inside EXEC when `in_transaction`.
    pub fn config_changed_in(&self, in_transaction: bool) {
        let config = self.config.read();
        let policy = config.get("maxmemory-policy").unwrap_or("noeviction");
        let lfu = policy.contains("lfu");
        let int = |name: &str| config.get_int(name);
        let maxmemory = int("maxmemory");
        self.hot.lfu.store(lfu, Ordering::Relaxed);
        self.hot.shared_integers.store(maxmemory == 0 || !(lfu || policy.contains("lru")), Ordering::Relaxed);
        let need_replicas = int("min-replicas-to-write") > 0 && int("min-replicas-max-lag") > 0;
        self.hot.writes_need_replicas.store(need_replicas, Ordering::Relaxed);
        self.hot.min_replicas_to_write.store(int("min-replicas-to-write").max(0) as u64, Ordering::Relaxed);
        self.hot.lfu_log_factor.store(int("lfu-log-factor") as u32, Ordering::Relaxed);
        self.hot.lfu_decay_time.store(int("lfu-decay-time") as u32, Ordering::Relaxed);
        *self.hot.limits.write() = types::Limits {
            hash_max_listpack_entries: int("hash-max-listpack-entries") as usize,
            hash_max_listpack_value: int("hash-max-listpack-value") as usize,
            set_max_intset_entries: int("set-max-intset-entries") as usize,
            zset_max_listpack_entries: int("zset-max-listpack-entries") as usize,
            zset_max_listpack_value: int("zset-max-listpack-value") as usize,
            list_max_listpack_size: int("list-max-listpack-size"),
            list_compress_depth: int("list-compress-depth"),
            stream_node_max_entries: int("stream-node-max-entries"),
            stream_node_max_bytes: int("stream-node-max-bytes"),
        };
        self.hot.notify_flags.store(int("notify-keyspace-events"), Ordering::Relaxed);
        self.hot.busy_reply_threshold_ms.store(int("busy-reply-threshold"), Ordering::Relaxed);
        self.hot.lazy_user_del.store(config.get_bool("lazyfree-lazy-user-del"), Ordering::Relaxed);
        self.hot.active_rehashing.store(config.get_bool("activerehashing"), Ordering::Relaxed);
        let lazy = [
            ("lazyfree-lazy-expire", lazyfree::LAZY_EXPIRE),
            ("lazyfree-lazy-eviction", lazyfree::LAZY_EVICTION),
            ("lazyfree-lazy-server-del", lazyfree::LAZY_SERVER_DEL),
        ];
        let mask = lazy.iter().filter(|(name, _)| config.get_bool(name)).fold(0, |m, (_, bit)| m | bit);
        self.hot.lazy_free_mask.store(mask, Ordering::Relaxed);
        self.hot.latency_tracking.store(config.get_bool("latency-tracking"), Ordering::Relaxed);
        self.hot.lazy_user_flush.store(config.get_bool("lazyfree-lazy-user-flush"), Ordering::Relaxed);
        self.hot.maxmemory.store(maxmemory.max(0) as u64, Ordering::Relaxed);
        *self.hot.maxmemory_policy.write() = evict::Policy::from_config(policy);
        self.set_output_limits(config.get("client-output-buffer-limit").unwrap_or(""));
        self.observe.slowlog_threshold_us.store(int("slowlog-log-slower-than"), Ordering::Relaxed);
        let slowlog_max_len = int("slowlog-max-len").max(0) as u64;
        self.observe.slowlog_max_len.store(slowlog_max_len, Ordering::Relaxed);
        self.observe.slowlog.lock().trim(slowlog_max_len as usize);
        self.observe.latency_threshold_ms.store(int("latency-monitor-threshold").max(0) as u64, Ordering::Relaxed);
        self.acl.trim_log(int("acllog-max-len").max(0) as usize);
        // `requirepass` sets the default user's password when it changes (Redis's
        // updateRequirePass), not on every CONFIG SET.
        let requirepass = config.get("requirepass").unwrap_or("").to_string();
        drop(config);
        let mut applied = self.acl.applied_requirepass.lock();
        if applied.as_deref() != Some(requirepass.as_str()) {
            self.acl.set_default_password(&requirepass, &self.table);
            *applied = Some(requirepass);
        }
        drop(applied);
        if let Some(layer) = self.persistence() {
            layer.config_changed(self, in_transaction);
        }
        self.cluster.config_changed(self);
    }

    /// The dataset is being loaded: commands not flagged `loading` get `-LOADING`.
    pub fn set_loading(&self, loading: bool) {
        self.loading.store(loading, Ordering::SeqCst);
    }

    /// A replica loads its master's snapshot while serving its old dataset: commands
    /// flagged `no_async_loading` and configs denied while loading get -LOADING.
    pub fn set_async_loading(&self, on: bool) {
        self.async_loading.store(on, Ordering::SeqCst);
    }

    pub fn is_async_loading(&self) -> bool {
        self.async_loading.load(Ordering::Relaxed)
    }

    pub fn is_loading(&self) -> bool {
        self.loading.load(Ordering::Relaxed)
    }

    /// How lookups record access under the current eviction policy.
    pub fn access_mode(&self) -> AccessMode {
        if self.hot.lfu.load(Ordering::Relaxed) {
            AccessMode::Lfu {
                log_factor: self.hot.lfu_log_factor.load(Ordering::Relaxed),
                decay_minutes: self.hot.lfu_decay_time.load(Ordering::Relaxed),
            }
        } else {
            AccessMode::Lru
        }
    }

    /// A new client with the next client id, in RESP2, database 0, not listed by CLIENT
    /// LIST (for embedded use and tests).
    pub fn new_client(&self) -> Client {
        let id = self.next_client_id.fetch_add(1, Ordering::Relaxed);
        let handle = Arc::new(ClientHandle::new(id, ConnInfo::default(), self.clock.now_ms()));
        Client::new(handle, self.acl.default_user.clone(), self.acl.new_connection_authenticated())
    }

    /// A new network client, registered so CLIENT LIST/KILL and INFO see it. The server
    /// must call `unregister_client` when the connection closes.
    pub fn register_client(&self, conn: ConnInfo) -> Client {
        let id = self.next_client_id.fetch_add(1, Ordering::Relaxed);
        let handle = Arc::new(ClientHandle::new(id, conn, self.clock.now_ms()));
        self.clients.register(handle.clone());
        Client::new(handle, self.acl.default_user.clone(), self.acl.new_connection_authenticated())
    }

    pub fn unregister_client(&self, client: &Client) {
        client.handle.mark_closed();
        self.tracking.disable(&client.handle);
        self.pubsub.unsubscribe_all(&client.handle);
        if let Some(waiter) = &client.blocked {
            self.end_wait(waiter, blocking::Unblock::Disconnect);
        }
        if !client.watched.is_empty() {
            let mut client = client.clone();
            self.unwatch_all(&mut client);
        }
        self.clients.unregister(client.id);
    }

    /// Installs how to read the process's allocated bytes (the server counts them in its
    /// global allocator); INFO memory falls back to RSS without it.
    pub fn set_memory_probe(&self, probe: fn() -> usize) {
        *self.memory_probe.write() = Some(probe);
    }

    /// Notes the memory used now as the start-up memory (the server calls it once ready).
    pub fn note_startup_memory(&self) {
        if let Some(used) = self.used_memory() {
            self.startup_memory.store(used, Ordering::Relaxed);
        }
    }

    pub fn startup_memory(&self) -> u64 {
        self.startup_memory.load(Ordering::Relaxed)
    }

    /// Installs the allocator's controls (the server runs on jemalloc).
    pub fn set_allocator_hooks(&self, hooks: AllocatorHooks) {
        *self.allocator.write() = Some(hooks);
    }

    pub fn allocator_hooks(&self) -> Option<AllocatorHooks> {
        *self.allocator.read()
    }

    pub fn used_memory(&self) -> Option<u64> {
        self.memory_probe.read().map(|probe| probe() as u64)
    }

    /// Records a memory reading and returns the peak so far.
    pub fn note_memory_peak(&self, used: u64) -> u64 {
        self.memory_peak.fetch_max(used, Ordering::Relaxed).max(used)
    }

    /// CLIENT PAUSE: pauses all commands, or only writes, until `end_ms`; a pause never
    /// shortens or weakens one already in force (as Redis merges them).
    pub fn pause_clients(&self, end_ms: i64, all: bool) {
        let now = self.clock.now_ms();
        let active = self.pause_end_ms.load(Ordering::SeqCst) > now;
        let all = all || (active && self.pause_all.load(Ordering::SeqCst));
        self.pause_all.store(all, Ordering::SeqCst);
        self.pause_end_ms.fetch_max(end_ms, Ordering::SeqCst);
    }

    /// A CLIENT PAUSE or a FAILOVER holds clients now: the master adds nothing of its own
    /// (PING, GETACK) to the replication stream, whose offset must stay still.
    pub fn clients_paused(&self) -> bool {
        self.pause_in_force() || self.failover_pause.load(Ordering::Relaxed)
    }

    /// FAILOVER pauses writes until it ends (its own pause: CLIENT UNPAUSE does not lift it).
    pub fn set_failover_pause(&self, on: bool) {
        self.failover_pause.store(on, Ordering::SeqCst);
        if !on {
            for client in self.clients.all() {
                client.wake();
            }
        }
    }

    /// CLIENT UNPAUSE: lifts the pause and wakes every worker so held clients resume.
    pub fn unpause_clients(&self) {
        self.pause_end_ms.store(0, Ordering::SeqCst);
        self.pause_all.store(false, Ordering::SeqCst);
        for client in self.clients.all() {
            client.wake();
        }
    }

    /// A CLIENT PAUSE is in force: the dataset is kept as it is, so keys whose TTL passes are
    /// not deleted until it ends (reads see them as gone), as Redis's
    /// checkClientPauseTimeoutAndReturnIfPaused in expireIfNeeded and the expiry cycle.
    pub fn pause_in_force(&self) -> bool {
        self.pause_in_force_at(self.clock.now_ms())
    }

    /// As `pause_in_force`, at `now_ms` (no clock read when no pause was ever set).
    pub fn pause_in_force_at(&self, now_ms: i64) -> bool {
        let end = self.pause_end_ms.load(Ordering::Relaxed);
        end != 0 && end > now_ms
    }

    /// If `args` must wait for a CLIENT PAUSE, until when (Unix ms). Unknown commands and
    /// arity errors are never held, so such clients get their error at once (as in Redis).
    pub fn postponed_until(&self, client: &Client, args: &[&[u8]]) -> Option<i64> {
        let end = self.pause_end_ms.load(Ordering::Relaxed);
        let failover = self.failover_pause.load(Ordering::Relaxed);
        if args.is_empty() || ((end == 0 || end <= self.clock.now_ms()) && !failover) {
            return None;
        }
        let command::Resolved::Found(spec) = self.table.resolve(args) else { return None };
        let argc = args.len() as i32;
        if (spec.arity > 0 && spec.arity != argc) || argc < -spec.arity {
            return None;
        }
        // EXEC is held when its transaction holds a command that would be (Redis's processCommand
        // checks the flags the queued commands add up to).
        let queued_writes = || {
            client.multi.as_ref().is_some_and(|queue| {
                queue.iter().any(|cmd| {
                    let args: Vec<&[u8]> = cmd.iter().map(|a| &a[..]).collect();
                    matches!(self.table.resolve(&args), command::Resolved::Found(spec) if self.may_replicate(spec, &args))
                })
            })
        };
        let writes = self.may_replicate(spec, args) || (spec.name == "exec" && queued_writes());
        if failover && writes {
            return Some(i64::MAX);
        }
        if end == 0 || end <= self.clock.now_ms() {
            return None;
        }
        (self.pause_all.load(Ordering::Relaxed) || writes).then_some(end)
    }

    /// Set by SHUTDOWN; the host process watches it.
    pub fn shutdown_requested(&self) -> bool {
        self.shutdown_requested.load(Ordering::SeqCst)
    }

    pub fn request_shutdown(&self) {
        self.shutdown_requested.store(true, Ordering::SeqCst);
    }

    /// SIGTERM/SIGINT: a shutdown for the host's periodic work to run (with its final
    /// save), as Redis's signal handler sets `shutdown_asap` for serverCron.
    pub fn schedule_shutdown(&self) {
        self.shutdown_pending.store(true, Ordering::SeqCst);
    }

    /// Whether a signal scheduled a shutdown not yet run.
    pub fn shutdown_scheduled(&self) -> bool {
        self.shutdown_pending.load(Ordering::SeqCst)
    }

    /// Takes the scheduled shutdown, if any, for the host to run now.
    pub fn take_scheduled_shutdown(&self) -> bool {
        self.shutdown_pending.swap(false, Ordering::SeqCst)
    }

    /// SHUTDOWN ABORT: cancels the scheduled shutdown; false when there was none.
    pub fn abort_scheduled_shutdown(&self) -> bool {
        self.shutdown_pending.swap(false, Ordering::SeqCst)
    }

    /// The host's way to listen on a new `bind` list and port (quince-server's).
    pub fn set_rebinder(&self, rebinder: Rebinder) {
        *self.rebinder.write() = Some(rebinder);
    }

    /// Listens on `bind`, `port` and `tls_port` instead (CONFIG SET): Err with the reason
    /// when the host can't (the old sockets stay), or has no sockets to move.
    pub fn rebind(&self, bind: &str, port: u16, tls_port: u16) -> Result<(), String> {
        match self.rebinder.read().as_ref() {
            Some(rebind) => rebind(bind, port, tls_port),
            None => Err("this process has no listening sockets to change".into()),
        }
    }

    /// The host's way to rebuild its TLS configuration (quince-server's).
    pub fn set_tls_hook(&self, hook: TlsHook) {
        *self.tls_hook.write() = Some(hook);
    }

    /// Rebuilds the host's TLS configuration from `config` (CONFIG SET of a `tls-*`
    /// parameter): Err with the reason when it can't (the old one stays), or has no TLS.
    pub fn reconfigure_tls(&self, config: &Config) -> Result<(), String> {
        match self.tls_hook.read().as_ref() {
            Some(hook) => hook(config),
            None => Err("TLS is not supported by this host".into()),
        }
    }

    /// DEBUG PAUSE-CRON.
    pub fn set_cron_paused(&self, paused: bool) {
        self.cron_paused.store(paused, Ordering::SeqCst);
    }

    /// Whether the host's periodic work is paused (DEBUG PAUSE-CRON 1).
    pub fn cron_paused(&self) -> bool {
        self.cron_paused.load(Ordering::SeqCst)
    }

    /// CONFIG RESETSTAT: the expired-keys counters back to zero.
    pub fn reset_expired_keys(&self) {
        for s in 0..self.keyspace.shard_count() {
            self.keyspace.lock(s).dbs.iter_mut().for_each(|db| db.expired_keys = 0);
        }
    }

    /// Samples the instantaneous ops and network rates; the host calls it often (it keeps
    /// one sample per 100 ms).
    pub fn sample_instantaneous(&self) {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let totals = [
            load(&self.stats.total_commands_processed) + self.observe.local_counts()[0],
            load(&self.stats.total_net_input_bytes),
            load(&self.stats.total_net_output_bytes),
        ];
        self.observe.instantaneous.lock().sample(self.clock.now_ms(), totals);
    }

    /// Changes since start (Redis's `dirty`, INFO rdb_changes_since_last_save).
    pub fn dirty(&self) -> u64 {
        let tables: u64 = (0..self.keyspace.shard_count())
            .map(|s| self.keyspace.lock(s).dbs.iter().map(|db| db.dirty).sum::<u64>())
            .sum();
        tables + self.stats.dirty.load(Ordering::Relaxed)
    }

    /// Keys removed by expiry so far, over all shards and databases.
    pub fn expired_keys(&self) -> u64 {
        (0..self.keyspace.shard_count())
            .map(|s| self.keyspace.lock(s).dbs.iter().map(|db| db.expired_keys).sum::<u64>())
            .sum()
    }
}
