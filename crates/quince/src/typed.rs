//! The typed API: one method per common command, with Rust types in and out. Each is
//! the command of the same name run through the engine (`Db::run`), so replies, errors and
//! edge cases are Redis's; the types only save the conversions.

use std::time::Duration;

use crate::value::pairs;
use crate::{Db, Error, FromValue, Result, Value};

/// An expiry for SET (`EX`/`PX`/`EXAT`/`PXAT`, or `KEEPTTL`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expiry {
    /// Relative, rounded to milliseconds (`PX`).
    In(Duration),
    /// At a Unix time in milliseconds (`PXAT`).
    AtMs(i64),
    /// Keep the key's current TTL (`KEEPTTL`).
    Keep,
}

/// SET's options as a builder: `SetOptions::new().only_if_absent().expire(Expiry::In(..))`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SetOptions {
    nx: bool,
    xx: bool,
    get: bool,
    expiry: Option<Expiry>,
}

impl SetOptions {
    pub fn new() -> Self {
        Self::default()
    }

    /// `NX`: only set a key that does not exist.
    pub fn only_if_absent(mut self) -> Self {
        self.nx = true;
        self
    }

    /// `XX`: only set a key that exists.
    pub fn only_if_present(mut self) -> Self {
        self.xx = true;
        self
    }

    /// `GET`: return the old value.
    pub fn get_old(mut self) -> Self {
        self.get = true;
        self
    }

    pub fn expire(mut self, expiry: Expiry) -> Self {
        self.expiry = Some(expiry);
        self
    }
}

/// What `set_with` did.
#[derive(Debug, Clone, PartialEq)]
pub enum SetOutcome {
    /// The value was written (and, with `get_old`, the old value, if any).
    Set(Option<Vec<u8>>),
    /// NX/XX refused the write (with `get_old`, the current value, if any).
    NotSet(Option<Vec<u8>>),
}

fn b<K: AsRef<[u8]> + ?Sized>(k: &K) -> &[u8] {
    k.as_ref()
}

impl Db {
    /// Runs a command and converts its reply.
    pub fn call<T: FromValue>(&self, args: &[&[u8]]) -> Result<T> {
        T::from_value(self.run_capturing(args, T::KEEPS_STATUS_TEXT)?)
    }

    // ---- strings ------------------------------------------------------------------

    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        // PERF: the engine's read fast path, when nothing unusual is in force.
        if let Some(found) = self.fast_get(b(&key)) {
            return Ok(found);
        }
        self.call(&[b"GET", b(&key)])
    }

    pub fn set(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        // PERF: the engine's fast path, when nothing unusual is in force.
        if self.fast_set(b(&key), b(&value)) {
            return Ok(());
        }
        self.call(&[b"SET", b(&key), b(&value)])
    }

    /// SET with options; with `get_old` the old value comes back in the outcome.
    pub fn set_with(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, options: SetOptions) -> Result<SetOutcome> {
        let mut args: Vec<Vec<u8>> = vec![b"SET".to_vec(), b(&key).to_vec(), b(&value).to_vec()];
        if options.nx {
            args.push(b"NX".to_vec());
        }
        if options.xx {
            args.push(b"XX".to_vec());
        }
        if options.get {
            args.push(b"GET".to_vec());
        }
        match options.expiry {
            Some(Expiry::In(d)) => {
                args.push(b"PX".to_vec());
                args.push(d.as_millis().max(1).to_string().into_bytes());
            }
            Some(Expiry::AtMs(ms)) => {
                args.push(b"PXAT".to_vec());
                args.push(ms.to_string().into_bytes());
            }
            Some(Expiry::Keep) => args.push(b"KEEPTTL".to_vec()),
            None => {}
        }
        let args: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        let reply = self.run(&args)?;
        if options.get {
            // GET: the old value either way; whether it was set needs NX/XX's outcome,
            // which SET ... GET reports the same way Redis does (nil on a refused NX).
            let old = Option::<Vec<u8>>::from_value(reply)?;
            let refused = (options.nx && old.is_some()) || (options.xx && old.is_none());
            return Ok(if refused { SetOutcome::NotSet(old) } else { SetOutcome::Set(old) });
        }
        Ok(match reply {
            Value::Null => SetOutcome::NotSet(None),
            _ => SetOutcome::Set(None),
        })
    }

    pub fn incr(&self, key: impl AsRef<[u8]>) -> Result<i64> {
        self.call(&[b"INCR", b(&key)])
    }

    pub fn incr_by(&self, key: impl AsRef<[u8]>, by: i64) -> Result<i64> {
        self.call(&[b"INCRBY", b(&key), by.to_string().as_bytes()])
    }

    pub fn incr_by_float(&self, key: impl AsRef<[u8]>, by: f64) -> Result<f64> {
        self.call(&[b"INCRBYFLOAT", b(&key), by.to_string().as_bytes()])
    }

    pub fn append(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<usize> {
        self.call(&[b"APPEND", b(&key), b(&value)])
    }

    pub fn mget<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Vec<u8>>>> {
        let mut args: Vec<&[u8]> = vec![b"MGET"];
        args.extend(keys.iter().map(|k| k.as_ref()));
        self.call(&args)
    }

    pub fn mset<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, pairs: &[(K, V)]) -> Result<()> {
        let mut args: Vec<&[u8]> = vec![b"MSET"];
        for (k, v) in pairs {
            args.push(k.as_ref());
            args.push(v.as_ref());
        }
        self.call(&args)
    }

    // ---- keys and TTLs ------------------------------------------------------------

    /// DEL: how many of the keys existed.
    pub fn del<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"DEL"];
        args.extend(keys.iter().map(|k| k.as_ref()));
        self.call(&args)
    }

    pub fn exists(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        self.call(&[b"EXISTS", b(&key)])
    }

    /// TYPE: "string", "list", ... or "none".
    pub fn key_type(&self, key: impl AsRef<[u8]>) -> Result<String> {
        self.call(&[b"TYPE", b(&key)])
    }

    /// PEXPIRE: whether the key exists (and now has the TTL).
    pub fn expire(&self, key: impl AsRef<[u8]>, ttl: Duration) -> Result<bool> {
        self.call(&[b"PEXPIRE", b(&key), ttl.as_millis().to_string().as_bytes()])
    }

    pub fn persist(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        self.call(&[b"PERSIST", b(&key)])
    }

    /// PTTL as a Duration: None when the key has no TTL or does not exist (see `exists`).
    pub fn ttl(&self, key: impl AsRef<[u8]>) -> Result<Option<Duration>> {
        let ms: i64 = self.call(&[b"PTTL", b(&key)])?;
        Ok((ms >= 0).then(|| Duration::from_millis(ms as u64)))
    }

    pub fn rename(&self, from: impl AsRef<[u8]>, to: impl AsRef<[u8]>) -> Result<()> {
        self.call(&[b"RENAME", b(&from), b(&to)])
    }

    pub fn dbsize(&self) -> Result<usize> {
        self.call(&[b"DBSIZE"])
    }

    pub fn flushdb(&self) -> Result<()> {
        self.call(&[b"FLUSHDB"])
    }

    /// The keys matching a glob pattern, through SCAN (so a big keyspace is walked in
    /// steps; a key present for the whole walk is returned at least once, as SCAN
    /// guarantees).
    pub fn scan(&self, pattern: impl AsRef<[u8]>) -> Scan<'_> {
        Scan { db: self, pattern: pattern.as_ref().to_vec(), cursor: Some(b"0".to_vec()), batch: Vec::new() }
    }

    // ---- lists --------------------------------------------------------------------

    /// LPUSH: the list's length after.
    pub fn lpush<V: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, values: &[V]) -> Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"LPUSH", b(&key)];
        args.extend(values.iter().map(|v| v.as_ref()));
        self.call(&args)
    }

    pub fn rpush<V: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, values: &[V]) -> Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"RPUSH", b(&key)];
        args.extend(values.iter().map(|v| v.as_ref()));
        self.call(&args)
    }

    pub fn lpop(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.call(&[b"LPOP", b(&key)])
    }

    pub fn rpop(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.call(&[b"RPOP", b(&key)])
    }

    pub fn llen(&self, key: impl AsRef<[u8]>) -> Result<usize> {
        self.call(&[b"LLEN", b(&key)])
    }

    pub fn lrange(&self, key: impl AsRef<[u8]>, start: i64, stop: i64) -> Result<Vec<Vec<u8>>> {
        self.call(&[b"LRANGE", b(&key), start.to_string().as_bytes(), stop.to_string().as_bytes()])
    }

    /// BLPOP: waits on this thread (up to `timeout`; `Duration::ZERO` waits forever) until
    /// one of the lists has an element, pushed by any thread. Returns (key, element).
    pub fn blpop<K: AsRef<[u8]>>(&self, keys: &[K], timeout: Duration) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        self.blocking_pop(b"BLPOP", keys, timeout)
    }

    pub fn brpop<K: AsRef<[u8]>>(&self, keys: &[K], timeout: Duration) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        self.blocking_pop(b"BRPOP", keys, timeout)
    }

    fn blocking_pop<K: AsRef<[u8]>>(
        &self,
        name: &[u8],
        keys: &[K],
        timeout: Duration,
    ) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let seconds = format!("{}", timeout.as_secs_f64());
        let mut args: Vec<&[u8]> = vec![name];
        args.extend(keys.iter().map(|k| k.as_ref()));
        args.push(seconds.as_bytes());
        self.call(&args)
    }

    // ---- hashes -------------------------------------------------------------------

    /// HSET: how many fields were new.
    pub fn hset<F: AsRef<[u8]>, V: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, fields: &[(F, V)]) -> Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"HSET", b(&key)];
        for (f, v) in fields {
            args.push(f.as_ref());
            args.push(v.as_ref());
        }
        self.call(&args)
    }

    pub fn hget(&self, key: impl AsRef<[u8]>, field: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.call(&[b"HGET", b(&key), b(&field)])
    }

    pub fn hgetall(&self, key: impl AsRef<[u8]>) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        pairs(self.run(&[b"HGETALL", b(&key)])?)
    }

    pub fn hdel<F: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, fields: &[F]) -> Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"HDEL", b(&key)];
        args.extend(fields.iter().map(|f| f.as_ref()));
        self.call(&args)
    }

    pub fn hincr_by(&self, key: impl AsRef<[u8]>, field: impl AsRef<[u8]>, by: i64) -> Result<i64> {
        self.call(&[b"HINCRBY", b(&key), b(&field), by.to_string().as_bytes()])
    }

    pub fn hlen(&self, key: impl AsRef<[u8]>) -> Result<usize> {
        self.call(&[b"HLEN", b(&key)])
    }

    // ---- sets ---------------------------------------------------------------------

    pub fn sadd<M: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, members: &[M]) -> Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"SADD", b(&key)];
        args.extend(members.iter().map(|m| m.as_ref()));
        self.call(&args)
    }

    pub fn srem<M: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, members: &[M]) -> Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"SREM", b(&key)];
        args.extend(members.iter().map(|m| m.as_ref()));
        self.call(&args)
    }

    pub fn sismember(&self, key: impl AsRef<[u8]>, member: impl AsRef<[u8]>) -> Result<bool> {
        self.call(&[b"SISMEMBER", b(&key), b(&member)])
    }

    /// SMEMBERS (in no particular order, as in Redis).
    pub fn smembers(&self, key: impl AsRef<[u8]>) -> Result<Vec<Vec<u8>>> {
        self.call(&[b"SMEMBERS", b(&key)])
    }

    pub fn scard(&self, key: impl AsRef<[u8]>) -> Result<usize> {
        self.call(&[b"SCARD", b(&key)])
    }

    // ---- sorted sets --------------------------------------------------------------

    /// ZADD: how many members were new.
    pub fn zadd<M: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, members: &[(f64, M)]) -> Result<usize> {
        let scores: Vec<String> = members.iter().map(|(s, _)| format_score(*s)).collect();
        let mut args: Vec<&[u8]> = vec![b"ZADD", b(&key)];
        for ((_, m), s) in members.iter().zip(&scores) {
            args.push(s.as_bytes());
            args.push(m.as_ref());
        }
        self.call(&args)
    }

    pub fn zscore(&self, key: impl AsRef<[u8]>, member: impl AsRef<[u8]>) -> Result<Option<f64>> {
        self.call(&[b"ZSCORE", b(&key), b(&member)])
    }

    pub fn zincr_by(&self, key: impl AsRef<[u8]>, by: f64, member: impl AsRef<[u8]>) -> Result<f64> {
        self.call(&[b"ZINCRBY", b(&key), format_score(by).as_bytes(), b(&member)])
    }

    pub fn zrem<M: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, members: &[M]) -> Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"ZREM", b(&key)];
        args.extend(members.iter().map(|m| m.as_ref()));
        self.call(&args)
    }

    pub fn zcard(&self, key: impl AsRef<[u8]>) -> Result<usize> {
        self.call(&[b"ZCARD", b(&key)])
    }

    /// Members with scores in `min..=max` (inclusive; use infinities for open ends),
    /// lowest first, with their scores.
    pub fn zrange_by_score(&self, key: impl AsRef<[u8]>, min: f64, max: f64) -> Result<Vec<(Vec<u8>, f64)>> {
        let (min, max) = (format_score(min), format_score(max));
        self.call(&[b"ZRANGE", b(&key), min.as_bytes(), max.as_bytes(), b"BYSCORE", b"WITHSCORES"])
    }

    /// Members by rank `start..=stop` (negative counts from the end), with their scores.
    pub fn zrange(&self, key: impl AsRef<[u8]>, start: i64, stop: i64) -> Result<Vec<(Vec<u8>, f64)>> {
        self.call(&[b"ZRANGE", b(&key), start.to_string().as_bytes(), stop.to_string().as_bytes(), b"WITHSCORES"])
    }

    // ---- scripts and functions ----------------------------------------------------

    /// EVAL: the script's reply as a Value (Lua numbers come back as integers, tables as
    /// arrays, as Redis converts them).
    pub fn eval<K: AsRef<[u8]>, A: AsRef<[u8]>>(&self, script: &str, keys: &[K], args: &[A]) -> Result<Value> {
        self.script_call(b"EVAL", script.as_bytes(), keys, args)
    }

    pub fn evalsha<K: AsRef<[u8]>, A: AsRef<[u8]>>(&self, sha: &str, keys: &[K], args: &[A]) -> Result<Value> {
        self.script_call(b"EVALSHA", sha.as_bytes(), keys, args)
    }

    /// SCRIPT LOAD: the script's sha1, for `evalsha`.
    pub fn script_load(&self, script: &str) -> Result<String> {
        self.call(&[b"SCRIPT", b"LOAD", script.as_bytes()])
    }

    /// FUNCTION LOAD [REPLACE]: the library's name.
    pub fn function_load(&self, code: &str, replace: bool) -> Result<String> {
        if replace {
            self.call(&[b"FUNCTION", b"LOAD", b"REPLACE", code.as_bytes()])
        } else {
            self.call(&[b"FUNCTION", b"LOAD", code.as_bytes()])
        }
    }

    pub fn fcall<K: AsRef<[u8]>, A: AsRef<[u8]>>(&self, function: &str, keys: &[K], args: &[A]) -> Result<Value> {
        self.script_call(b"FCALL", function.as_bytes(), keys, args)
    }

    fn script_call<K: AsRef<[u8]>, A: AsRef<[u8]>>(
        &self,
        command: &[u8],
        target: &[u8],
        keys: &[K],
        args: &[A],
    ) -> Result<Value> {
        let numkeys = keys.len().to_string();
        let mut all: Vec<&[u8]> = vec![command, target, numkeys.as_bytes()];
        all.extend(keys.iter().map(|k| k.as_ref()));
        all.extend(args.iter().map(|a| a.as_ref()));
        self.run(&all)
    }

    // ---- transactions -------------------------------------------------------------

    /// Runs the commands `build` queues as one MULTI/EXEC transaction: no other command
    /// runs in between. Returns each command's reply (an error reply in place for a
    /// command that failed while running, as EXEC does); a command refused while queueing
    /// (wrong arity, unknown) aborts the whole transaction with EXECABORT.
    pub fn transaction(&self, build: impl FnOnce(&mut Transaction)) -> Result<Vec<Value>> {
        let mut tx = Transaction { commands: Vec::new() };
        build(&mut tx);
        let engine = self.engine();
        let mut client = engine.new_client();
        client.protocol = quince_resp::Protocol::Resp3;
        client.select(self.index);
        let mut out = quince_engine::ReplyBuilder::new();
        engine.execute(&mut client, &[b"MULTI"], &mut out);
        for command in &tx.commands {
            let args: Vec<&[u8]> = command.iter().map(|a| &a[..]).collect();
            engine.execute(&mut client, &args, &mut out);
        }
        engine.execute(&mut client, &[b"EXEC"], &mut out);
        self.make_durable()?;
        let replies = out.take();
        // The last reply is EXEC's; the queueing replies (+QUEUED or errors) come before it.
        match replies.into_iter().last() {
            Some(Value::Array(results)) => Ok(results),
            Some(Value::Error(text)) => Err(Error::Reply(text)),
            Some(Value::Null) => Err(Error::Reply("EXECABORT Transaction discarded".into())),
            other => Err(Error::UnexpectedReply(format!("EXEC replied {other:?}"))),
        }
    }
}

/// The commands of a transaction being built (`Db::transaction`).
pub struct Transaction {
    commands: Vec<Vec<Vec<u8>>>,
}

impl Transaction {
    /// Queues a command.
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> &mut Self {
        self.commands.push(args.iter().map(|a| a.as_ref().to_vec()).collect());
        self
    }
}

/// A score as Redis parses it back exactly (`inf`, `-inf`, or Rust's shortest round-trip).
fn format_score(score: f64) -> String {
    if score == f64::INFINITY {
        "+inf".into()
    } else if score == f64::NEG_INFINITY {
        "-inf".into()
    } else {
        format!("{score}")
    }
}

/// The keys matching a pattern, walked with SCAN (`Db::scan`).
pub struct Scan<'a> {
    db: &'a Db,
    pattern: Vec<u8>,
    /// The next cursor; None once SCAN returned 0.
    cursor: Option<Vec<u8>>,
    batch: Vec<Vec<u8>>,
}

impl Iterator for Scan<'_> {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(key) = self.batch.pop() {
                return Some(Ok(key));
            }
            let cursor = self.cursor.take()?;
            let reply = self.db.run(&[b"SCAN", &cursor, b"MATCH", &self.pattern, b"COUNT", b"100"]);
            match reply.and_then(<(Vec<u8>, Vec<Vec<u8>>)>::from_value) {
                Ok((next, mut keys)) => {
                    if next != b"0" {
                        self.cursor = Some(next);
                    }
                    keys.reverse();
                    self.batch = keys;
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}
