//! `quince`: the Quince engine in your process, like SQLite is to SQL: no server, no socket.
//!
//! ```
//! let db = quince::Db::memory();
//! db.set("greeting", "hello").unwrap();
//! assert_eq!(db.get("greeting").unwrap(), Some(b"hello".to_vec()));
//! assert_eq!(db.incr("visits").unwrap(), 1);
//! // Any command the server knows, with Redis's replies and errors:
//! let reply = db.command(&["LPUSH", "list", "a", "b"]).unwrap();
//! assert_eq!(reply, quince::Value::Integer(2));
//! ```
//!
//! A [`Db`] is `Clone + Send + Sync`; clones share one dataset, and any number of threads
//! use it at once (commands on keys of different shards run in parallel, as in
//! quince-server). Keys with a TTL expire on access and in the background: the Db owns a
//! thread that runs the active expiry cycle `hz` times a second, stopped when the last
//! clone is dropped.
//!
//! A durable Db (`Db::open`) keeps its data as quince-server does: a multi-part AOF
//! (`appendfsync always|everysec|no`) and RDB snapshots in the same directory layout, so
//! `quince-server --dir DIR --appendonly yes` serves a directory the library wrote and the
//! library opens one the server wrote. With `Fsync::Always` a write returns only after its
//! AOF record is on disk (one fsync serves every thread that waits at that moment). A lock
//! file (`quince.lock`, held with flock) keeps a second process from opening the same
//! directory.
//!
//! What is built so far (issue 16): the in-memory and durable Db, `command`, and the typed
//! API of [`typed`] (strings, keys and TTLs, lists with blocking pops across threads,
//! hashes, sets, sorted sets, scripts, functions, transactions), streams with consumer
//! groups, geo, HyperLogLog, bitmaps, in-process pub/sub ([`Subscription`]) and
//! [`Db::serve`] (RESP on a socket, for redis-cli). The Python package is in `sdk/python`.

mod capture;
mod lock;
mod more;
mod pubsub;
mod reply_parse;
mod serve;
mod streams;
pub mod typed;
mod value;
mod wakeup;

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;
use quince_engine::{Client, Engine, EngineOptions};
use quince_resp::Protocol;
use smallvec::SmallVec;
use wakeup::Wakeup;

pub use more::GeoUnit;
pub use pubsub::{Message, Subscription};
/// The directives of redis.conf, for `Db::memory_with`.
pub use quince_engine::Config;
pub use serve::Server;
pub use streams::StreamEntry;
pub use typed::{Expiry, Scan, SetOptions, SetOutcome, Transaction};
pub use value::{FromValue, Value};

/// What a command can fail with. `Display` is Redis's text (`WRONGTYPE Operation against a
/// key holding the wrong kind of value`), so messages match what a Redis user knows.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The command's error reply, as Redis words it (its first word is the error code).
    Reply(String),
    /// The reply had another shape than the typed method expects (a bug in this crate or
    /// a command used through the wrong method).
    UnexpectedReply(String),
    /// Another process holds the directory (its lock file names it).
    Locked(String),
    /// Opening a directory failed: unreadable files, a corrupt AOF or RDB (the message
    /// names the file), a bad option.
    Open(String),
}

impl Error {
    /// The error code: the reply's first word (`ERR`, `WRONGTYPE`, `NOSCRIPT`...).
    pub fn code(&self) -> &str {
        match self {
            Error::Reply(text) => text.split(' ').next().unwrap_or(""),
            Error::UnexpectedReply(_) | Error::Locked(_) | Error::Open(_) => "ERR",
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Reply(text) => f.write_str(text),
            Error::UnexpectedReply(what) => write!(f, "ERR unexpected reply: {what}"),
            Error::Locked(what) | Error::Open(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {}

/// When a durable Db's writes reach the disk (`appendfsync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fsync {
    /// Before the write returns (group commit across threads).
    Always,
    /// Once a second, in the background (at most about a second of writes lost on a
    /// power failure; none on a crash of the process).
    #[default]
    EverySec,
    /// When the operating system writes its page cache out.
    No,
}

/// How `Db::open_with` opens a directory.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub fsync: Fsync,
    /// More redis.conf directives (`("save", "60 1000")`, `("maxmemory", "1gb")`...).
    pub config: Vec<(String, String)>,
}

pub type Result<T> = std::result::Result<T, Error>;

/// An embedded dataset. Cheap to clone; every clone is the same data.
#[derive(Clone)]
pub struct Db {
    inner: Arc<Inner>,
    /// The logical database (SELECT's number) this handle works on.
    index: usize,
}

struct Inner {
    engine: Arc<Engine>,
    /// The persistence layer of a durable Db.
    layer: Option<Arc<quince_persist::Layer>>,
    /// The directory's lock (released when the file closes: on drop or process death).
    _lock: Option<std::fs::File>,
    /// Clients kept for reuse: one is taken per command (a command runs as a client, for
    /// its reply protocol, blocking state and stats), so no allocation per call.
    clients: Mutex<Vec<Client>>,
    /// Unique per Db (`NEXT_DB_ID`).
    id: u64,
    stop: Arc<AtomicBool>,
    housekeeper: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.housekeeper.lock().take() {
            let _ = handle.join();
        }
        // As quince-server at SIGTERM: the AOF written out and fsynced, an RDB saved when
        // save points are configured.
        if let Some(layer) = &self.layer {
            let _gate = self.engine.exclusive();
            if let Err(e) = layer.shutdown(&self.engine, None) {
                eprintln!("quince: closing the database: {e}");
            }
        }
    }
}

/// Commands that change a connection's state, which an embedded Db does not have: each
/// call runs on its own. Their replacements are named in the error.
const CONNECTION_COMMANDS: &[(&str, &str)] = &[
    ("SELECT", "use Db::select"),
    ("MULTI", "use Db::transaction"),
    ("EXEC", "use Db::transaction"),
    ("DISCARD", "use Db::transaction"),
    ("WATCH", "use Db::transaction"),
    ("UNWATCH", "use Db::transaction"),
    ("SUBSCRIBE", "use Db::subscribe"),
    ("PSUBSCRIBE", "use Db::psubscribe"),
    ("SSUBSCRIBE", "use Db::subscribe"),
    ("UNSUBSCRIBE", "use Subscription::unsubscribe"),
    ("PUNSUBSCRIBE", "use Subscription::punsubscribe"),
    ("SUNSUBSCRIBE", "use Subscription::unsubscribe"),
    ("MONITOR", "there is no connection to stream to"),
    ("HELLO", "replies are typed values already"),
    ("AUTH", "there is no connection to authenticate"),
    ("RESET", "there is no connection to reset"),
    ("QUIT", "there is no connection to close"),
    ("SHUTDOWN", "drop the Db instead"),
];

/// The `CONNECTION_COMMANDS` error, and CLIENT REPLY's.
fn refuse_connection_command(name: &[u8], sub: Option<&&[u8]>) -> Result<()> {
    // PERF: most names (GET, SET, HGET...) are too short to be one of these.
    if name.len() < 4 || name.len() > 12 {
        return Ok(());
    }
    if let Some((_, instead)) = CONNECTION_COMMANDS.iter().find(|(c, _)| name.eq_ignore_ascii_case(c.as_bytes())) {
        return Err(Error::Reply(format!(
            "ERR {} changes a connection's state; an embedded Db has none ({instead})",
            String::from_utf8_lossy(name).to_uppercase()
        )));
    }
    if name.eq_ignore_ascii_case(b"CLIENT") && sub.is_some_and(|sub| sub.eq_ignore_ascii_case(b"REPLY")) {
        return Err(Error::Reply(
            "ERR CLIENT REPLY changes a connection's state; an embedded Db has none (every call returns its reply)"
                .into(),
        ));
    }
    Ok(())
}

/// Whether a client can serve the next call (one in an unexpected state, CLIENT REPLY OFF
/// say, is dropped).
fn reusable(client: &Client) -> bool {
    client.blocked.is_none() && client.multi.is_none() && client.reply_mode == quince_engine::ReplyMode::On
}

/// Tells each Db apart for the thread-local clients (an address could be reused).
static NEXT_DB_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The client this thread used last, for the Db it belongs to.
    static LOCAL_CLIENT: RefCell<Option<LocalClient>> = const { RefCell::new(None) };
}

struct LocalClient {
    db_id: u64,
    owner: Weak<Inner>,
    client: Option<Client>,
}

impl Drop for LocalClient {
    /// Another Db's turn on this thread, or the thread's end: the client goes back to its
    /// Db's pool (where CLIENT LIST keeps seeing it), unless that Db is gone.
    fn drop(&mut self) {
        if let (Some(inner), Some(client)) = (self.owner.upgrade(), self.client.take()) {
            inner.give_back(client);
        }
    }
}

impl Inner {
    /// A client from the pool, or a new one.
    fn take_client(&self) -> Client {
        self.clients.lock().pop().unwrap_or_else(|| {
            let mut client = self.engine.new_client();
            client.protocol = Protocol::Resp3;
            client
        })
    }

    fn give_back(&self, client: Client) {
        if reusable(&client) {
            self.clients.lock().push(client);
        }
    }
}

impl Db {
    /// A new, empty dataset in memory, with Redis's default configuration.
    pub fn memory() -> Db {
        Db::memory_with(quince_engine::Config::default())
    }

    /// A new in-memory dataset with the given configuration (the directives of
    /// redis.conf: `maxmemory`, `hz`, `list-max-listpack-size`...).
    pub fn memory_with(config: quince_engine::Config) -> Db {
        let engine = Arc::new(Engine::new(EngineOptions { config, ..EngineOptions::default() }));
        Db::start(engine, None, None)
    }

    /// Opens (or creates) a durable dataset in `dir`, with `appendfsync everysec`.
    pub fn open(dir: impl AsRef<std::path::Path>) -> Result<Db> {
        Db::open_with(dir, Options::default())
    }

    /// Opens (or creates) a durable dataset in `dir`: loads what is there (the AOF, or
    /// the RDB when there is no AOF, as quince-server at start-up) and logs every write.
    pub fn open_with(dir: impl AsRef<std::path::Path>, options: Options) -> Result<Db> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|e| Error::Open(format!("creating {}: {e}", dir.display())))?;
        let dir = dir.canonicalize().map_err(|e| Error::Open(format!("{}: {e}", dir.display())))?;
        let lock = lock::acquire(&dir)?;
        let mut config = quince_engine::Config::default();
        let fsync = match options.fsync {
            Fsync::Always => "always",
            Fsync::EverySec => "everysec",
            Fsync::No => "no",
        };
        let mut directives = vec![
            ("dir".to_string(), dir.display().to_string()),
            ("appendonly".to_string(), "yes".to_string()),
            ("appendfsync".to_string(), fsync.to_string()),
        ];
        directives.extend(options.config);
        for (name, value) in &directives {
            config.set(name, std::slice::from_ref(value)).map_err(|e| Error::Open(format!("option {name}: {e}")))?;
        }
        let engine = Arc::new(Engine::new(EngineOptions {
            config,
            extra_commands: quince_persist::commands(),
            ..EngineOptions::default()
        }));
        if let Some((line, reason)) = &engine.rename_error {
            return Err(Error::Open(format!("{line}: {reason}")));
        }
        if let Some(reason) = &engine.acl_error {
            return Err(Error::Open(reason.clone()));
        }
        let layer = quince_persist::Layer::new(Arc::new(|level, message: &str| {
            if level == quince_persist::LogLevel::Warning {
                eprintln!("quince: {message}");
            }
        }));
        // Every command is made durable as it returns: through a mapped log tail that is
        // a copy, not a `write` call (docs/embedded.md, "Durability").
        layer.set_mapped_tail(true);
        engine.set_persistence(layer.clone());
        layer.attach_engine(&engine);
        engine.set_loading(true);
        layer.load_at_startup(&engine).map_err(Error::Open)?;
        Ok(Db::start(engine, Some(layer), Some(lock)))
    }

    fn start(engine: Arc<Engine>, layer: Option<Arc<quince_persist::Layer>>, lock: Option<std::fs::File>) -> Db {
        let hz = engine.config.read().get_int("hz").clamp(1, 500) as u64;
        let stop = Arc::new(AtomicBool::new(false));
        let housekeeper = {
            let (engine, stop, layer) = (engine.clone(), stop.clone(), layer.clone());
            std::thread::Builder::new()
                .name("quince-housekeeper".into())
                .spawn(move || housekeep(&engine, layer.as_deref(), &stop, hz))
                .ok()
        };
        Db {
            inner: Arc::new(Inner {
                engine,
                layer,
                _lock: lock,
                clients: Mutex::new(Vec::new()),
                id: NEXT_DB_ID.fetch_add(1, Ordering::Relaxed),
                stop,
                housekeeper: Mutex::new(housekeeper),
            }),
            index: 0,
        }
    }

    /// A handle on logical database `index` (SELECT's number) of the same dataset.
    pub fn select(&self, index: usize) -> Result<Db> {
        let databases = self.inner.engine.config.read().get_int("databases").max(0) as usize;
        if index >= databases {
            return Err(Error::Reply("ERR DB index is out of range".into()));
        }
        Ok(Db { inner: self.inner.clone(), index })
    }

    /// Runs any command the server knows, with its arguments, and returns its reply (RESP3
    /// shapes: maps, sets, doubles) or its error. Blocking commands (BLPOP, BLMOVE,
    /// BZPOPMIN, XREAD BLOCK...) wait on this thread until served or timed out.
    pub fn command<A: AsRef<[u8]>>(&self, args: &[A]) -> Result<Value> {
        let args: SmallVec<[&[u8]; 8]> = args.iter().map(|a| a.as_ref()).collect();
        self.run(&args)
    }

    /// `command` for arguments already as byte slices.
    pub fn run(&self, args: &[&[u8]]) -> Result<Value> {
        self.run_capturing(args, true)
    }

    /// `run`; `keep_status_text`: false when the caller discards a status reply's text.
    pub(crate) fn run_capturing(&self, args: &[&[u8]], keep_status_text: bool) -> Result<Value> {
        if let Some(name) = args.first() {
            refuse_connection_command(name, args.get(1))?;
        }
        let engine = &self.inner.engine;
        let mut out = capture::Capture::new(keep_status_text);
        let waited = self.with_client(|client| {
            client.select(self.index);
            engine.execute(client, args, &mut out);
            client.blocked.is_some().then(|| self.wait_blocked(client))
        });
        self.make_durable()?;
        let reply = match waited {
            Some(reply) => reply?,
            None => out.take().ok_or_else(|| Error::UnexpectedReply("no reply".into()))?,
        };
        match reply {
            Value::Error(text) => Err(Error::Reply(text)),
            value => Ok(value),
        }
    }

    /// GET through the engine's fast path (`Engine::fast_get`); None when it declines and
    /// the command must run the general way.
    pub(crate) fn fast_get(&self, key: &[u8]) -> Option<Option<Vec<u8>>> {
        self.with_client(|client| {
            client.select(self.index);
            self.inner.engine.fast_get(client, key, |value| value.map(<[u8]>::to_vec))
        })
    }

    /// SET through the engine's fast path (`Engine::fast_set`); false when it declines.
    pub(crate) fn fast_set(&self, key: &[u8], value: &[u8]) -> bool {
        self.with_client(|client| {
            client.select(self.index);
            self.inner.engine.fast_set(client, key, value)
        })
    }

    /// Runs `f` with a client of this Db: the one this thread keeps (`LOCAL_CLIENT`: no
    /// lock, nothing shared between threads), or one of the pool when this thread's is in
    /// use already (a call made while another runs on the same thread).
    fn with_client<R>(&self, f: impl FnOnce(&mut Client) -> R) -> R {
        LOCAL_CLIENT.with(|cell| match cell.try_borrow_mut() {
            Ok(mut slot) => {
                if slot.as_ref().is_none_or(|local| local.db_id != self.inner.id) {
                    // (Dropping the one of another Db gives it back to that Db.)
                    *slot = Some(LocalClient {
                        db_id: self.inner.id,
                        owner: Arc::downgrade(&self.inner),
                        client: Some(self.inner.take_client()),
                    });
                }
                let local = slot.as_mut().expect("just set");
                let client = local.client.as_mut().expect("a local client holds its client until dropped");
                let result = f(client);
                if !reusable(client) {
                    *slot = None;
                }
                result
            }
            Err(_) => {
                let mut client = self.inner.take_client();
                let result = f(&mut client);
                self.inner.give_back(client);
                result
            }
        })
    }

    /// Waits for a blocked command's reply: served by a write on another thread (which
    /// wakes this one), or ended at its deadline here.
    fn wait_blocked(&self, client: &mut Client) -> Result<Value> {
        reply_parse::parse(&self.wait_blocked_bytes(client)?)
    }

    /// `wait_blocked`, the reply as RESP in the client's protocol.
    pub(crate) fn wait_blocked_bytes(&self, client: &mut Client) -> Result<Vec<u8>> {
        let engine = &self.inner.engine;
        let wakeup = Wakeup::install(client);
        let reply = loop {
            if let Some(bytes) = engine.blocked_reply(client) {
                break bytes;
            }
            let deadline = engine.check_block_timeout(client, engine.clock.now_ms());
            if let Some(bytes) = engine.blocked_reply(client) {
                break bytes;
            }
            // Wake at the deadline (or every 100 ms without one: a timeout of 0 waits
            // forever, and the wait state is checked again anyway).
            wakeup.wait(match deadline {
                Some(at) => Duration::from_millis((at - engine.clock.now_ms()).clamp(1, 100) as u64),
                None => Duration::from_millis(100),
            });
        };
        client.handle.set_waker(Box::new(|| {}));
        Ok(reply)
    }

    /// With `appendfsync always`: waits until this thread's writes so far are on disk.
    /// One fsync covers every thread whose writes were logged before it started (group
    /// commit); a thread does not wait for writes other threads made after its own.
    ///
    /// If the log can't be written or synced (a full disk), the caller gets a `MISCONF`
    /// error instead of its reply: its write is in memory but not on disk, so it must not
    /// be reported as done.
    pub(crate) fn make_durable(&self) -> Result<()> {
        if let Some(layer) = &self.inner.layer {
            use quince_engine::persistence::Persistence;
            if let Some(position) = layer.write_position() {
                layer.make_durable_upto(position).map_err(|e| Error::Reply(format!("MISCONF {e}")))?;
            }
        }
        Ok(())
    }

    /// The engine behind this Db (for INFO-like introspection and tests).
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }
}

/// The Db's background work: the active expiry cycle `hz` times a second with 25% of each
/// period as its budget (as Redis and quince-server), the instantaneous stats, and
/// eviction when over `maxmemory` with no command arriving.
fn housekeep(engine: &Engine, layer: Option<&quince_persist::Layer>, stop: &AtomicBool, hz: u64) {
    let period = Duration::from_millis(1000 / hz);
    let budget_us = 1_000_000 / hz / 4;
    let mut last_persistence_cron = std::time::Instant::now();
    while !stop.load(Ordering::SeqCst) {
        engine.active_expire_cycle(budget_us);
        // The persistence layer's cron every 100 ms: everysec fsync, save points, AOF
        // rewrites, as quince-server's main thread runs it.
        if let Some(layer) = layer {
            if last_persistence_cron.elapsed() >= Duration::from_millis(100) {
                last_persistence_cron = std::time::Instant::now();
                layer.cron(engine);
            }
        }
        engine.sample_instantaneous();
        if engine.hot.maxmemory.load(Ordering::Relaxed) > 0 {
            let _gate = engine.shared_gate();
            engine.out_of_memory();
        }
        std::thread::sleep(period.min(Duration::from_millis(100)));
    }
}
