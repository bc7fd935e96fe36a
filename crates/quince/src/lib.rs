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
//! What is built so far (issue 16): the in-memory Db, `command`, and the typed API of
//! [`typed`] (strings, keys and TTLs, lists with blocking pops across threads, hashes,
//! sets, sorted sets, scripts and functions). Durable directories (`Db::open`), the rest
//! of the typed families, `Db::serve` and the Python package are planned.

mod reply_parse;
pub mod typed;
mod value;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use quince_engine::{Client, Engine, EngineOptions, ReplyBuilder};
use quince_resp::Protocol;
use smallvec::SmallVec;

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
}

impl Error {
    /// The error code: the reply's first word (`ERR`, `WRONGTYPE`, `NOSCRIPT`...).
    pub fn code(&self) -> &str {
        match self {
            Error::Reply(text) => text.split(' ').next().unwrap_or(""),
            Error::UnexpectedReply(_) => "ERR",
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Reply(text) => f.write_str(text),
            Error::UnexpectedReply(what) => write!(f, "ERR unexpected reply: {what}"),
        }
    }
}

impl std::error::Error for Error {}

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
    /// Clients kept for reuse: one is taken per command (a command runs as a client, for
    /// its reply protocol, blocking state and stats), so no allocation per call.
    clients: Mutex<Vec<Client>>,
    stop: Arc<AtomicBool>,
    housekeeper: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.housekeeper.lock().take() {
            let _ = handle.join();
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
    ("SUBSCRIBE", "in-process pub/sub is planned"),
    ("PSUBSCRIBE", "in-process pub/sub is planned"),
    ("SSUBSCRIBE", "in-process pub/sub is planned"),
    ("UNSUBSCRIBE", "in-process pub/sub is planned"),
    ("PUNSUBSCRIBE", "in-process pub/sub is planned"),
    ("SUNSUBSCRIBE", "in-process pub/sub is planned"),
    ("MONITOR", "there is no connection to stream to"),
    ("HELLO", "replies are typed values already"),
    ("AUTH", "there is no connection to authenticate"),
    ("RESET", "there is no connection to reset"),
    ("QUIT", "there is no connection to close"),
    ("SHUTDOWN", "drop the Db instead"),
];

impl Db {
    /// A new, empty dataset in memory, with Redis's default configuration.
    pub fn memory() -> Db {
        Db::memory_with(quince_engine::Config::default())
    }

    /// A new in-memory dataset with the given configuration (the directives of
    /// redis.conf: `maxmemory`, `hz`, `list-max-listpack-size`...).
    pub fn memory_with(config: quince_engine::Config) -> Db {
        let hz = config.get_int("hz").clamp(1, 500) as u64;
        let engine = Arc::new(Engine::new(EngineOptions { config, ..EngineOptions::default() }));
        let stop = Arc::new(AtomicBool::new(false));
        let housekeeper = {
            let (engine, stop) = (engine.clone(), stop.clone());
            std::thread::Builder::new()
                .name("quince-housekeeper".into())
                .spawn(move || housekeep(&engine, &stop, hz))
                .ok()
        };
        Db {
            inner: Arc::new(Inner {
                engine,
                clients: Mutex::new(Vec::new()),
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
        if let Some(name) = args.first() {
            if let Some((_, instead)) =
                CONNECTION_COMMANDS.iter().find(|(c, _)| name.eq_ignore_ascii_case(c.as_bytes()))
            {
                return Err(Error::Reply(format!(
                    "ERR {} changes a connection's state; an embedded Db has none ({instead})",
                    String::from_utf8_lossy(name).to_uppercase()
                )));
            }
        }
        let engine = &self.inner.engine;
        let mut client = self.inner.clients.lock().pop().unwrap_or_else(|| {
            let mut client = engine.new_client();
            client.protocol = Protocol::Resp3;
            client
        });
        client.select(self.index);
        let mut out = ReplyBuilder::new();
        engine.execute(&mut client, args, &mut out);
        let reply = if client.blocked.is_some() {
            self.wait_blocked(&mut client)
        } else {
            out.take().pop().ok_or_else(|| Error::UnexpectedReply("no reply".into()))
        };
        // A client in an unexpected state is not reused.
        if client.blocked.is_none() && client.multi.is_none() {
            self.inner.clients.lock().push(client);
        }
        match reply? {
            Value::Error(text) => Err(Error::Reply(text)),
            value => Ok(value),
        }
    }

    /// Waits for a blocked command's reply: served by a write on another thread (which
    /// wakes this one), or ended at its deadline here.
    fn wait_blocked(&self, client: &mut Client) -> Result<Value> {
        let engine = &self.inner.engine;
        let signal = Arc::new((Mutex::new(false), Condvar::new()));
        {
            let signal = signal.clone();
            client.handle.set_waker(Box::new(move || {
                *signal.0.lock() = true;
                signal.1.notify_all();
            }));
        }
        let reply = loop {
            if let Some(bytes) = engine.blocked_reply(client) {
                break bytes;
            }
            let deadline = engine.check_block_timeout(client, engine.clock.now_ms());
            if let Some(bytes) = engine.blocked_reply(client) {
                break bytes;
            }
            let mut woken = signal.0.lock();
            if !*woken {
                // Wake at the deadline (or every 100 ms without one: a timeout of 0 waits
                // forever, and the wait state is checked again anyway).
                let wait = match deadline {
                    Some(at) => Duration::from_millis((at - engine.clock.now_ms()).clamp(1, 100) as u64),
                    None => Duration::from_millis(100),
                };
                signal.1.wait_for(&mut woken, wait);
            }
            *woken = false;
        };
        client.handle.set_waker(Box::new(|| {}));
        reply_parse::parse(&reply)
    }

    /// The engine behind this Db (for INFO-like introspection and tests).
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }
}

/// The Db's background work: the active expiry cycle `hz` times a second with 25% of each
/// period as its budget (as Redis and quince-server), the instantaneous stats, and
/// eviction when over `maxmemory` with no command arriving.
fn housekeep(engine: &Engine, stop: &AtomicBool, hz: u64) {
    let period = Duration::from_millis(1000 / hz);
    let budget_us = 1_000_000 / hz / 4;
    while !stop.load(Ordering::SeqCst) {
        engine.active_expire_cycle(budget_us);
        engine.sample_instantaneous();
        if engine.hot.maxmemory.load(Ordering::Relaxed) > 0 {
            let _gate = engine.shared_gate();
            engine.out_of_memory();
        }
        std::thread::sleep(period.min(Duration::from_millis(100)));
    }
}
