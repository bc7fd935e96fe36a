//! Where a queue's state lives: anything that runs Redis 7 functions. Two implementations:
//! [`Embedded`] (a `quince::Db` in this process) and [`RedisStore`] (a connection to
//! quince-server, redis-server or Valkey, through the `redis` crate).

use std::future::Future;
use std::time::Duration;

use crate::Error;

/// A reply, reduced to what the queue's functions return.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Int(i64),
    Bytes(Vec<u8>),
    Array(Vec<Value>),
}

impl Value {
    pub(crate) fn into_array(self, what: &str) -> Result<Vec<Value>, Error> {
        match self {
            Value::Array(items) => Ok(items),
            other => Err(Error::Unexpected(format!("{what}: expected an array, got {other:?}"))),
        }
    }

    pub(crate) fn as_int(&self, what: &str) -> Result<i64, Error> {
        match self {
            Value::Int(n) => Ok(*n),
            Value::Bytes(b) => std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| Error::Unexpected(format!("{what}: expected an integer, got {self:?}"))),
            other => Err(Error::Unexpected(format!("{what}: expected an integer, got {other:?}"))),
        }
    }

    pub(crate) fn into_bytes(self, what: &str) -> Result<Vec<u8>, Error> {
        match self {
            Value::Bytes(b) => Ok(b),
            Value::Int(n) => Ok(n.to_string().into_bytes()),
            other => Err(Error::Unexpected(format!("{what}: expected a string, got {other:?}"))),
        }
    }

    pub(crate) fn into_string(self, what: &str) -> Result<String, Error> {
        String::from_utf8(self.into_bytes(what)?).map_err(|_| Error::Unexpected(format!("{what}: not UTF-8")))
    }
}

/// What the queue needs from a Redis-compatible store.
pub trait Store: Clone + Send + Sync + 'static {
    /// `FCALL function 1 key args...`.
    fn fcall(&self, function: &str, key: &str, args: Vec<Vec<u8>>)
        -> impl Future<Output = Result<Value, Error>> + Send;

    /// Any other command (the registry of queue names, CONFIG GET...).
    fn command(&self, args: Vec<Vec<u8>>) -> impl Future<Output = Result<Value, Error>> + Send;

    /// `FUNCTION LOAD REPLACE code`.
    fn load_library(&self, code: &str) -> impl Future<Output = Result<(), Error>> + Send;

    /// The store's `maxmemory-policy` and `maxmemory` (bytes; 0 = no limit).
    fn eviction_policy(&self) -> impl Future<Output = Result<(String, u64), Error>> + Send;

    /// `BLPOP keys timeout`: true if an element was popped, false on timeout. Workers wait
    /// here when no queue has a job ready.
    fn wait_signal(&self, keys: Vec<String>, timeout: Duration) -> impl Future<Output = Result<bool, Error>> + Send;
}

/// The queue on an embedded `quince::Db`: no server, no socket. Function calls run on the
/// calling thread (they take microseconds; with `Fsync::Always` a write also waits for its
/// fsync); blocking waits run on tokio's blocking pool.
#[derive(Clone)]
pub struct Embedded {
    db: quince::Db,
}

impl Embedded {
    pub fn new(db: quince::Db) -> Self {
        Self { db }
    }

    pub fn db(&self) -> &quince::Db {
        &self.db
    }
}

fn from_quince(value: quince::Value) -> Result<Value, Error> {
    Ok(match value {
        quince::Value::Null => Value::Nil,
        quince::Value::Integer(n) => Value::Int(n),
        quince::Value::Bulk(b) => Value::Bytes(b),
        quince::Value::Simple(s) => Value::Bytes(s.into_bytes()),
        quince::Value::Error(e) => return Err(Error::Reply(e)),
        quince::Value::Array(items) | quince::Value::Set(items) => {
            Value::Array(items.into_iter().map(from_quince).collect::<Result<_, _>>()?)
        }
        quince::Value::Double(d) => Value::Bytes(d.to_string().into_bytes()),
        quince::Value::Boolean(b) => Value::Int(b as i64),
        quince::Value::Verbatim(_, text) => Value::Bytes(text),
        // The embedded Db answers CONFIG GET with a map (as to RESP3 clients): flatten it.
        quince::Value::Map(pairs) => Value::Array(
            pairs.into_iter().flat_map(|(k, v)| [from_quince(k), from_quince(v)]).collect::<Result<_, _>>()?,
        ),
        other => return Err(Error::Unexpected(format!("reply {other:?}"))),
    })
}

fn embedded_error(e: quince::Error) -> Error {
    match e {
        quince::Error::Reply(text) => Error::Reply(text),
        other => Error::Store(other.to_string()),
    }
}

impl Store for Embedded {
    async fn fcall(&self, function: &str, key: &str, args: Vec<Vec<u8>>) -> Result<Value, Error> {
        from_quince(self.db.fcall(function, &[key], &args).map_err(embedded_error)?)
    }

    async fn command(&self, args: Vec<Vec<u8>>) -> Result<Value, Error> {
        from_quince(self.db.command(&args).map_err(embedded_error)?)
    }

    async fn load_library(&self, code: &str) -> Result<(), Error> {
        self.db.function_load(code, true).map_err(embedded_error)?;
        Ok(())
    }

    async fn eviction_policy(&self) -> Result<(String, u64), Error> {
        config_pair(
            from_quince(self.db.command(&["CONFIG", "GET", "maxmemory-policy"]).map_err(embedded_error)?)?,
            from_quince(self.db.command(&["CONFIG", "GET", "maxmemory"]).map_err(embedded_error)?)?,
        )
    }

    async fn wait_signal(&self, keys: Vec<String>, timeout: Duration) -> Result<bool, Error> {
        let db = self.db.clone();
        let popped = tokio::task::spawn_blocking(move || db.blpop(&keys, timeout))
            .await
            .map_err(|e| Error::Store(format!("blocking wait: {e}")))?
            .map_err(embedded_error)?;
        Ok(popped.is_some())
    }
}

fn config_pair(policy: Value, maxmemory: Value) -> Result<(String, u64), Error> {
    let second = |v: Value| -> Result<Value, Error> {
        v.into_array("CONFIG GET")?.into_iter().nth(1).ok_or_else(|| Error::Unexpected("CONFIG GET: no value".into()))
    };
    let policy = second(policy)?.into_string("maxmemory-policy")?;
    let maxmemory = second(maxmemory)?.as_int("maxmemory")? as u64;
    Ok((policy, maxmemory))
}

/// The queue on a Redis server (quince-server, redis-server 7, Valkey). Commands share one
/// multiplexed connection that reconnects by itself; blocking waits use a second one, so a
/// waiting worker never delays the others' commands.
#[derive(Clone)]
pub struct RedisStore {
    commands: redis::aio::ConnectionManager,
    waits: redis::aio::ConnectionManager,
}

/// How long a command may take before the call fails (an fsync-always server under load
/// can take a while; a dead one should not hang workers forever).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

impl RedisStore {
    /// Connects to `url` (`redis://127.0.0.1:6379/0`, `redis+unix:///path`).
    pub async fn connect(url: &str) -> Result<Self, Error> {
        let client = redis::Client::open(url).map_err(redis_error)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_max_delay(Duration::from_secs(2));
        let commands = client.get_connection_manager_with_config(config.clone()).await.map_err(redis_error)?;
        let waits =
            client.get_connection_manager_with_config(config.set_response_timeout(None)).await.map_err(redis_error)?;
        Ok(Self { commands, waits })
    }
}

fn redis_error(e: redis::RedisError) -> Error {
    if let Some(code) = e.code() {
        Error::Reply(format!("{code} {}", e.detail().unwrap_or_default()))
    } else {
        Error::Store(e.to_string())
    }
}

fn from_redis(value: redis::Value) -> Result<Value, Error> {
    Ok(match value {
        redis::Value::Nil => Value::Nil,
        redis::Value::Int(n) => Value::Int(n),
        redis::Value::BulkString(b) => Value::Bytes(b),
        redis::Value::SimpleString(s) => Value::Bytes(s.into_bytes()),
        redis::Value::Okay => Value::Bytes(b"OK".to_vec()),
        redis::Value::Array(items) | redis::Value::Set(items) => {
            Value::Array(items.into_iter().map(from_redis).collect::<Result<_, _>>()?)
        }
        // A RESP3 map (CONFIG GET on a RESP3 connection) reads as its flattened pairs.
        redis::Value::Map(pairs) => {
            Value::Array(pairs.into_iter().flat_map(|(k, v)| [from_redis(k), from_redis(v)]).collect::<Result<_, _>>()?)
        }
        redis::Value::ServerError(e) => {
            return Err(Error::Reply(format!("{} {}", e.code(), e.details().unwrap_or_default())))
        }
        other => return Err(Error::Unexpected(format!("reply {other:?}"))),
    })
}

impl Store for RedisStore {
    async fn fcall(&self, function: &str, key: &str, args: Vec<Vec<u8>>) -> Result<Value, Error> {
        let mut cmd = redis::cmd("FCALL");
        cmd.arg(function).arg(1).arg(key);
        for a in args {
            cmd.arg(a);
        }
        let value: redis::Value = cmd.query_async(&mut self.commands.clone()).await.map_err(redis_error)?;
        from_redis(value)
    }

    async fn command(&self, args: Vec<Vec<u8>>) -> Result<Value, Error> {
        let mut cmd = redis::Cmd::new();
        for a in args {
            cmd.arg(a);
        }
        let value: redis::Value = cmd.query_async(&mut self.commands.clone()).await.map_err(redis_error)?;
        from_redis(value)
    }

    async fn load_library(&self, code: &str) -> Result<(), Error> {
        let _: redis::Value = redis::cmd("FUNCTION")
            .arg("LOAD")
            .arg("REPLACE")
            .arg(code)
            .query_async(&mut self.commands.clone())
            .await
            .map_err(redis_error)?;
        Ok(())
    }

    async fn eviction_policy(&self) -> Result<(String, u64), Error> {
        let mut conn = self.commands.clone();
        let policy: redis::Value = redis::cmd("CONFIG")
            .arg("GET")
            .arg("maxmemory-policy")
            .query_async(&mut conn)
            .await
            .map_err(redis_error)?;
        let maxmemory: redis::Value =
            redis::cmd("CONFIG").arg("GET").arg("maxmemory").query_async(&mut conn).await.map_err(redis_error)?;
        config_pair(from_redis(policy)?, from_redis(maxmemory)?)
    }

    async fn wait_signal(&self, keys: Vec<String>, timeout: Duration) -> Result<bool, Error> {
        let mut cmd = redis::cmd("BLPOP");
        for k in &keys {
            cmd.arg(k);
        }
        cmd.arg(format!("{:.3}", timeout.as_secs_f64().max(0.001)));
        let value: redis::Value = cmd.query_async(&mut self.waits.clone()).await.map_err(redis_error)?;
        Ok(!matches!(value, redis::Value::Nil))
    }
}
