//! MIGRATE: moves (or copies) keys to another server speaking RESP (a quince-server or a
//! redis-server) as RESTORE commands carrying DUMP payloads, then deletes the keys the
//! target acknowledged (Redis's migrateCommand in cluster.c).
//!
//! Connections to targets are kept for 10 seconds for the next MIGRATE to the same
//! `host:port` (INFO's `migrate_cached_sockets`), with the database last selected on each, so
//! a run of MIGRATEs sends one SELECT. A cached connection the target closed is noticed on
//! use and the command tried once more on a fresh one. MIGRATE runs alone (the transaction
//! gate held exclusively), as in Redis where the whole server waits for the target.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use quince_engine::cmd::{is, parse_i64};
use quince_engine::command::{ArgDoc, ArgType, CommandSpec};
use quince_engine::pubsub::notify;
use quince_engine::reply::ReplySink;
use quince_engine::{CmdError, CmdResult, Ctx};
use smallvec::SmallVec;

use crate::dump::{create_payload, dump_options};

/// An idle cached connection is closed after this long.
const CACHE_TTL: Duration = Duration::from_secs(10);
/// At most this many cached connections (one is dropped to make room).
const CACHE_MAX: usize = 64;
/// Bytes written to the target per timed write.
const WRITE_CHUNK: usize = 64 * 1024;

/// A connection to a target, kept between MIGRATEs.
struct Cached {
    /// TCP, or TLS over it with `tls-cluster` (as Redis's MIGRATE connects).
    stream: Box<dyn crate::outgoing::Outgoing>,
    /// The database selected on it (-1: unknown, SELECT before the next RESTORE).
    last_dbid: i64,
    last_use: Instant,
    /// Bytes read past the last reply line.
    pending: Vec<u8>,
}

static SOCKETS: Mutex<Option<HashMap<Vec<u8>, Cached>>> = Mutex::new(None);

fn sockets() -> std::sync::MutexGuard<'static, Option<HashMap<Vec<u8>, Cached>>> {
    SOCKETS.lock().unwrap_or_else(|e| e.into_inner())
}

/// INFO's `migrate_cached_sockets`.
pub fn cached_sockets() -> usize {
    sockets().as_ref().map_or(0, HashMap::len)
}

/// Closes the cached connections idle for more than 10 seconds (from the server's cron).
pub fn close_idle_sockets() {
    if let Some(map) = sockets().as_mut() {
        map.retain(|_, c| c.last_use.elapsed() <= CACHE_TTL);
    }
}

/// How talking to the target failed.
struct SocketError {
    /// While writing (else reading).
    writing: bool,
    /// It timed out (no retry then).
    timed_out: bool,
}

fn socket_error(e: &io::Error, writing: bool) -> SocketError {
    let timed_out = matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut);
    SocketError { writing, timed_out }
}

impl Cached {
    /// Writes `bytes` in chunks, each within `timeout`.
    fn write_all(&mut self, bytes: &[u8], timeout: Duration) -> Result<(), SocketError> {
        for chunk in bytes.chunks(WRITE_CHUNK) {
            let deadline = Instant::now() + timeout;
            let mut sent = 0;
            while sent < chunk.len() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(SocketError { writing: true, timed_out: true });
                }
                self.stream.tcp().set_write_timeout(Some(left)).map_err(|e| socket_error(&e, true))?;
                match self.stream.write(&chunk[sent..]) {
                    Ok(0) => return Err(SocketError { writing: true, timed_out: false }),
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(socket_error(&e, true)),
                }
            }
        }
        Ok(())
    }

    /// Reads one reply line (without its CRLF) within `timeout`.
    fn read_line(&mut self, timeout: Duration) -> Result<Vec<u8>, SocketError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.pending.drain(..=end).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(SocketError { writing: false, timed_out: true });
            }
            self.stream.tcp().set_read_timeout(Some(left)).map_err(|e| socket_error(&e, false))?;
            let mut buf = [0u8; 4096];
            match self.stream.read(&mut buf) {
                Ok(0) => return Err(SocketError { writing: false, timed_out: false }),
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(socket_error(&e, false)),
            }
        }
    }
}

/// The cached connection to `host:port`, or a new one (connected within `timeout`).
/// `tls`: `tls-cluster` (the connection speaks TLS).
fn connect(name: &[u8], host: &[u8], port: &[u8], timeout: Duration, tls: bool) -> Option<Cached> {
    if let Some(cached) = sockets().as_mut().and_then(|map| map.remove(name)) {
        return Some(cached);
    }
    let host = std::str::from_utf8(host).ok()?;
    let port: u16 = std::str::from_utf8(port).ok()?.parse().ok()?;
    let addrs = (host, port).to_socket_addrs().ok()?;
    for addr in addrs {
        if let Ok(stream) = TcpStream::connect_timeout(&addr, timeout) {
            let _ = stream.set_nodelay(true);
            // (The TLS handshake happens with the first write, under its timeout.)
            let _ = stream.set_read_timeout(Some(timeout));
            let _ = stream.set_write_timeout(Some(timeout));
            let stream = crate::outgoing::wrap(stream, tls).ok()?;
            return Some(Cached { stream, last_dbid: -1, last_use: Instant::now(), pending: Vec::new() });
        }
    }
    None
}

/// Puts a connection (back) in the cache, making room if it is full.
fn keep(name: Vec<u8>, mut cached: Cached) {
    cached.last_use = Instant::now();
    let mut guard = sockets();
    let map = guard.get_or_insert_with(HashMap::new);
    if map.len() >= CACHE_MAX && !map.contains_key(&name) {
        if let Some(victim) = map.keys().next().cloned() {
            map.remove(&victim);
        }
    }
    map.insert(name, cached);
}

fn bulk(out: &mut Vec<u8>, arg: &[u8]) {
    out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
    out.extend_from_slice(arg);
    out.extend_from_slice(b"\r\n");
}

fn array(out: &mut Vec<u8>, len: usize) {
    out.extend_from_slice(format!("*{len}\r\n").as_bytes());
}

/// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
/// [AUTH2 username password] [KEYS key [key ...]] — O(N) in the keys' sizes, plus the
/// transfer.
fn migrate(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (mut copy, mut replace) = (false, false);
    let (mut username, mut password): (Option<&[u8]>, Option<&[u8]>) = (None, None);
    let (mut first_key, mut num_keys) = (3, 1);
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(args[j], "copy") {
            copy = true;
        } else if is(args[j], "replace") {
            replace = true;
        } else if is(args[j], "auth") {
            if more < 1 {
                return Err(CmdError::Syntax);
            }
            j += 1;
            password = Some(args[j]);
        } else if is(args[j], "auth2") {
            if more < 2 {
                return Err(CmdError::Syntax);
            }
            username = Some(args[j + 1]);
            password = Some(args[j + 2]);
            j += 2;
        } else if is(args[j], "keys") {
            if !args[3].is_empty() {
                return Err(CmdError::msg(
                    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string",
                ));
            }
            first_key = j + 1;
            num_keys = args.len() - j - 1;
            break;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    let timeout_ms = parse_i64(args[5])?;
    let dbid = parse_i64(args[4])?;
    let timeout = Duration::from_millis(if timeout_ms <= 0 { 1000 } else { timeout_ms as u64 });

    // The keys that are here, with their payloads and times to live (all missing: NOKEY,
    // not an error: they may just have expired).
    let options = dump_options(ctx);
    let now = ctx.now_ms;
    let mut found: Vec<(&[u8], Vec<u8>, i64)> = Vec::new();
    for &key in &args[first_key..first_key + num_keys] {
        let item = ctx.db(key).get(key, now).map(|e| (create_payload(&e.value, &options), e.expire_at_ms()));
        ctx.hit(key, item.is_some());
        if let Some((payload, expire)) = item {
            let ttl = match expire {
                Some(at) => (at - now).max(1),
                None => 0,
            };
            found.push((key, payload, ttl));
        }
    }
    if found.is_empty() {
        out.simple("NOKEY");
        return Ok(());
    }

    let name = [args[1], b":", args[2]].concat();
    let mut may_retry = true;
    loop {
        let tls = ctx.engine.config.read().get_bool("tls-cluster");
        let engine_cluster = ctx.engine.cluster.enabled();
        let Some(mut target) = connect(&name, args[1], args[2], timeout, tls) else {
            return Err(CmdError::msg("IOERR error or timeout connecting to the client"));
        };
        let mut request = Vec::new();
        if let Some(password) = password {
            array(&mut request, if username.is_some() { 3 } else { 2 });
            bulk(&mut request, b"AUTH");
            if let Some(username) = username {
                bulk(&mut request, username);
            }
            bulk(&mut request, password);
        }
        let select = target.last_dbid != dbid;
        if select {
            array(&mut request, 2);
            bulk(&mut request, b"SELECT");
            bulk(&mut request, dbid.to_string().as_bytes());
        }
        for (key, payload, ttl) in &found {
            array(&mut request, if replace { 5 } else { 4 });
            // In a cluster the target is importing the slot: RESTORE-ASKING may write there.
            bulk(&mut request, if engine_cluster { b"RESTORE-ASKING" } else { b"RESTORE" });
            bulk(&mut request, key);
            bulk(&mut request, ttl.to_string().as_bytes());
            bulk(&mut request, payload);
            if replace {
                bulk(&mut request, b"REPLACE");
            }
        }
        let exchanged = target.write_all(&request, timeout).and_then(|()| {
            let auth = if password.is_some() { Some(target.read_line(timeout)?) } else { None };
            let selected = if select { Some(target.read_line(timeout)?) } else { None };
            Ok((auth, selected))
        });
        let (auth, selected) = match exchanged {
            Ok(replies) => replies,
            Err(e) => {
                // A cached connection the target closed: once more on a new one.
                if !e.timed_out && may_retry {
                    may_retry = false;
                    continue;
                }
                let doing = if e.writing { "writing" } else { "reading" };
                return Err(CmdError::msg(format!("IOERR error or timeout {doing} to target instance")));
            }
        };
        // The target's first error is the reply; the keys it acknowledged are deleted here
        // (unless COPY), and logged as one DEL.
        let mut error: Option<Vec<u8>> = None;
        let mut failure: Option<SocketError> = None;
        let mut moved: SmallVec<[&[u8]; 8]> = SmallVec::new();
        let mut replies_read = 0;
        for (key, _, _) in &found {
            let line = match target.read_line(timeout) {
                Ok(line) => line,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            replies_read += 1;
            let refusal = [auth.as_deref(), selected.as_deref(), Some(&line[..])]
                .into_iter()
                .flatten()
                .find(|reply| reply.first() == Some(&b'-'));
            if let Some(refusal) = refusal {
                if error.is_none() {
                    target.last_dbid = -1;
                    error = Some(refusal[1..].to_vec());
                }
            } else if !copy {
                if ctx.db(key).take(key, now).is_some() {
                    ctx.notify(notify::GENERIC, "del", key);
                }
                moved.push(key);
            }
        }
        if let Some(e) = &failure {
            if error.is_none() && replies_read == 0 && may_retry && !e.timed_out {
                may_retry = false;
                continue;
            }
        }
        if !moved.is_empty() {
            let mut del: SmallVec<[&[u8]; 8]> = SmallVec::new();
            del.push(b"DEL");
            del.extend(moved.iter().copied());
            ctx.propagate_as(&del);
        }
        if let Some(error) = error {
            if failure.is_none() {
                keep(name, target);
            }
            let text = String::from_utf8_lossy(&error);
            return Err(CmdError::msg(format!("ERR Target instance replied with error: {text}")));
        }
        if let Some(e) = failure {
            let doing = if e.writing { "writing" } else { "reading" };
            return Err(CmdError::msg(format!("IOERR error or timeout {doing} to target instance")));
        }
        target.last_dbid = dbid;
        keep(name, target);
        out.simple("OK");
        return Ok(());
    }
}

/// MIGRATE's keys: the key argument, or those after KEYS (Redis's migrateGetKeys).
/// AUTH's password and AUTH2's username and password are skipped (a password `KEYS` is
/// not the keyword).
fn migrate_getkeys(args: &[&[u8]]) -> SmallVec<[(usize, usize); 4]> {
    let mut i = 6;
    while i < args.len() {
        if is(args[i], "keys") {
            if !args[3].is_empty() {
                return SmallVec::new();
            }
            return (i + 1..args.len()).map(|p| (p, 1)).collect();
        }
        if is(args[i], "auth") {
            i += 1;
        } else if is(args[i], "auth2") {
            i += 2;
        }
        i += 1;
    }
    smallvec::smallvec![(3, 0)]
}

/// MIGRATE, declared as Redis 7.0.15's src/commands/migrate.json.
pub fn register() -> Vec<CommandSpec> {
    vec![CommandSpec::new("migrate", -6, "write", "keyspace dangerous", migrate)
        .doc("generic", "2.6.0", "Atomically transfer a key from a Redis instance to another one.", "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed.")
        .history(&[
            ("3.0.0", "Added the `COPY` and `REPLACE` options."),
            ("3.0.6", "Added the `KEYS` option."),
            ("4.0.7", "Added the `AUTH` option."),
            ("6.0.0", "Added the `AUTH2` option."),
        ])
        .tips(&["nondeterministic_output"])
        .keys("RW access delete", 3, 0, 1)
        .keys_keyword("RW access delete incomplete", "KEYS", -2, -1, 1, 0)
        .getkeys(migrate_getkeys)
        .args(vec![
            ArgDoc::new("host", ArgType::String),
            ArgDoc::new("port", ArgType::Integer),
            ArgDoc::one_of("key_or_empty_string", vec![ArgDoc::key("key", 0), ArgDoc::token("empty_string", "")]),
            ArgDoc::new("destination-db", ArgType::Integer),
            ArgDoc::new("timeout", ArgType::Integer),
            ArgDoc::token("copy", "COPY").optional().since("3.0.0"),
            ArgDoc::token("replace", "REPLACE").optional().since("3.0.0"),
            ArgDoc::one_of(
                "authentication",
                vec![
                    ArgDoc::new("password", ArgType::String).after("AUTH").optional().since("4.0.7"),
                    ArgDoc::block(
                        "username_password",
                        vec![ArgDoc::new("username", ArgType::String), ArgDoc::new("password", ArgType::String)],
                    )
                    .after("AUTH2")
                    .optional()
                    .since("6.0.0"),
                ],
            )
            .optional(),
            ArgDoc::key("key", 1).after("KEYS").optional().multiple().since("3.0.6"),
        ])]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_as_redis_finds_them() {
        let args: Vec<&[u8]> = vec![b"MIGRATE", b"h", b"1", b"k", b"0", b"5"];
        assert_eq!(migrate_getkeys(&args).as_slice(), &[(3, 0)]);
        let args: Vec<&[u8]> = vec![b"MIGRATE", b"h", b"1", b"", b"0", b"5", b"COPY", b"KEYS", b"a", b"b"];
        assert_eq!(migrate_getkeys(&args).as_slice(), &[(8, 1), (9, 1)]);
        let args: Vec<&[u8]> = vec![b"MIGRATE", b"h", b"1", b"x", b"0", b"5", b"KEYS", b"a"];
        assert!(migrate_getkeys(&args).is_empty());
        let args: Vec<&[u8]> = vec![b"MIGRATE", b"h", b"1", b"", b"0", b"5", b"AUTH", b"KEYS", b"KEYS", b"rw"];
        assert_eq!(migrate_getkeys(&args).as_slice(), &[(9, 1)]);
        let args: Vec<&[u8]> = vec![b"MIGRATE", b"h", b"1", b"", b"0", b"5", b"AUTH2", b"KEYS", b"KEYS", b"KEYS", b"k"];
        assert_eq!(migrate_getkeys(&args).as_slice(), &[(10, 1)]);
    }
}
