//! The replica's side (REPLICAOF host port): a thread that connects to the master, says who
//! it is (REPLCONF listening-port, capa eof psync2), asks to continue its history (PSYNC
//! id offset), loads the master's snapshot when the master answers with a full sync, then
//! applies the master's stream as an obeying client (no expiry of its own, past times
//! kept), relaying the bytes verbatim to its own replicas and acknowledging its offset
//! every second and on `REPLCONF GETACK`. A broken link is retried every second, with a
//! partial resync when the master still has our point of its history.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use quince_engine::clients::{flag, ConnInfo};
use quince_engine::Engine;
use quince_resp::{Decoded, Encoder, Protocol, RequestDecoder};

use crate::layer::{Layer, LogLevel, Logger};

/// Where the link stands (ROLE's state word).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum LinkState {
    /// Waiting to connect (after a failure, or not yet tried).
    Connect = 0,
    Connecting = 1,
    /// PING/AUTH/REPLCONF/PSYNC exchanged.
    Handshake = 2,
    /// Receiving the snapshot.
    Sync = 3,
    /// Applying the stream.
    Connected = 4,
}

impl LinkState {
    fn from_u8(v: u8) -> LinkState {
        match v {
            1 => LinkState::Connecting,
            2 => LinkState::Handshake,
            3 => LinkState::Sync,
            4 => LinkState::Connected,
            _ => LinkState::Connect,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            LinkState::Connect => "connect",
            LinkState::Connecting => "connecting",
            LinkState::Handshake => "handshake",
            LinkState::Sync => "sync",
            LinkState::Connected => "connected",
        }
    }
}

/// What INFO and ROLE read of a running link.
#[derive(Debug, Default)]
pub struct LinkStatus {
    state: AtomicU8,
    /// Unix ms of the last bytes from the master (0: none yet).
    pub last_io_ms: AtomicI64,
    /// Unix ms the link went down (0: it was never up).
    pub down_since_ms: AtomicI64,
    /// The snapshot being received: its size (-1: not known, an EOF-marked stream) and
    /// the bytes read so far.
    pub sync_total: AtomicI64,
    pub sync_read: AtomicI64,
    /// Stream bytes read from the master, applied or not (`slave_read_repl_offset`).
    pub read_offset: std::sync::atomic::AtomicU64,
}

impl LinkStatus {
    pub fn state(&self) -> LinkState {
        LinkState::from_u8(self.state.load(Ordering::SeqCst))
    }

    fn set(&self, state: LinkState) {
        let was = self.state.swap(state as u8, Ordering::SeqCst);
        if was == LinkState::Connected as u8 && state != LinkState::Connected {
            self.down_since_ms.store(now_ms(), Ordering::SeqCst);
        }
    }

    pub fn is_up(&self) -> bool {
        self.state() == LinkState::Connected
    }
}

/// A running link to a master.
pub struct MasterLink {
    pub host: String,
    pub port: u16,
    pub status: Arc<LinkStatus>,
    stop: Arc<AtomicBool>,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

impl MasterLink {
    /// Starts following `host:port`.
    /// Starts following `host:port`; with `failover`, the first PSYNC carries FAILOVER (the
    /// target takes over from us).
    pub fn start(engine: Weak<Engine>, host: String, port: u16, log: Logger, failover: bool) -> MasterLink {
        let status = Arc::new(LinkStatus::default());
        let stop = Arc::new(AtomicBool::new(false));
        let failover = Arc::new(AtomicBool::new(failover));
        let (thread_status, thread_stop, address) = (status.clone(), stop.clone(), format!("{host}:{port}"));
        let _ = std::thread::Builder::new().name("quince-replica".into()).spawn(move || {
            while !thread_stop.load(Ordering::SeqCst) {
                let Some(engine) = engine.upgrade() else { return };
                let Some(layer) = Layer::of(&engine) else { return };
                log(LogLevel::Notice, &format!("Connecting to MASTER {address}"));
                let session = Session {
                    engine: &engine,
                    layer,
                    status: &thread_status,
                    stop: &thread_stop,
                    log: &*log,
                    failover: failover.swap(false, Ordering::SeqCst),
                };
                match session.run(&address) {
                    Ok(()) => return,
                    Err(e) => {
                        thread_status.set(LinkState::Connect);
                        log(LogLevel::Warning, &format!("Replication from MASTER {address}: {e}"));
                    }
                }
                drop(engine);
                for _ in 0..10 {
                    if thread_stop.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        });
        MasterLink { host, port, status, stop }
    }

    /// Stops following (REPLICAOF NO ONE, or another master).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.status.set(LinkState::Connect);
    }
}

/// Reads from the master with a buffer that keeps what a reply or command left over.
struct Reader {
    /// TCP, or TLS over it with `tls-replication`.
    stream: Box<dyn crate::outgoing::Outgoing>,
    buf: Vec<u8>,
    start: usize,
}

impl Reader {
    fn pending(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
    }

    /// Reads more bytes; Ok(false) on a timeout (the caller checks its flags).
    fn fill(&mut self, status: &LinkStatus) -> Result<bool, String> {
        if self.start > 0 && self.start * 2 > self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let len = self.buf.len();
        self.buf.resize(len + 65536, 0);
        match self.stream.read(&mut self.buf[len..]) {
            Ok(0) => {
                self.buf.truncate(len);
                Err("connection closed by the master".into())
            }
            Ok(n) => {
                self.buf.truncate(len + n);
                status.last_io_ms.store(now_ms(), Ordering::Relaxed);
                Ok(true)
            }
            // A signal (SIGSTOP/SIGCONT of the process, say) interrupts the read: no data yet.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted
                ) =>
            {
                self.buf.truncate(len);
                Ok(false)
            }
            Err(e) => {
                self.buf.truncate(len);
                Err(e.to_string())
            }
        }
    }
}

struct Session<'a> {
    engine: &'a Engine,
    layer: &'a Layer,
    status: &'a LinkStatus,
    stop: &'a AtomicBool,
    log: &'a dyn Fn(LogLevel, &str),
    /// This session's PSYNC carries FAILOVER.
    failover: bool,
}

/// The replies to handshake commands and to PSYNC are single lines.
const MAX_LINE: usize = 64 * 1024;

impl Session<'_> {
    /// Whether what was applied is in our AOF as `appendfsync` wants it (written, and
    /// fsynced under `always`), so an acknowledgement may say we have it: Redis's replica
    /// answers its master after flushing its AOF, so WAIT counts replicas that keep the
    /// writes across their own crash. While our log cannot be written, no acknowledgement
    /// goes out (the periodic one retries).
    fn logged(&self) -> bool {
        use quince_engine::persistence::Persistence;
        self.layer.make_durable().is_ok()
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// One line (without CRLF); newlines alone are the master's keepalives when
    /// `skip_empty`. Fails once the master sent nothing for `timeout`.
    fn read_line(&self, reader: &mut Reader, skip_empty: bool, timeout: Duration) -> Result<String, String> {
        let mut last_io = Instant::now();
        loop {
            if let Some(end) = reader.pending().iter().position(|&b| b == b'\n') {
                let line = String::from_utf8_lossy(&reader.pending()[..end]).trim_end_matches('\r').to_string();
                reader.consume(end + 1);
                if line.is_empty() && skip_empty {
                    last_io = Instant::now();
                    continue;
                }
                return Ok(line);
            }
            if reader.pending().len() > MAX_LINE {
                return Err("protocol error: a reply line from the master is too long".into());
            }
            if self.stopped() {
                return Err("stopped".into());
            }
            if last_io.elapsed() > timeout {
                return Err("Timeout connecting to the MASTER...".into());
            }
            if reader.fill(self.status)? {
                last_io = Instant::now();
            }
        }
    }

    fn command(&self, reader: &mut Reader, args: &[&[u8]], timeout: Duration) -> Result<String, String> {
        let mut out = Vec::new();
        quince_resp::encode_command(&mut out, args);
        reader.stream.write_all(&out).map_err(|e| format!("writing to the master: {e}"))?;
        self.read_line(reader, true, timeout)
    }

    fn run(&self, address: &str) -> Result<(), String> {
        self.status.set(LinkState::Connecting);
        let addr = std::net::ToSocketAddrs::to_socket_addrs(address)
            .map_err(|e| format!("can't resolve: {e}"))?
            .next()
            .ok_or("no address")?;
        let (timeout_s, announce_port, announce_ip, auth, user, backlog_size) = {
            let config = self.engine.config.read();
            // As Redis: the announced port, else the TLS port when the link speaks TLS
            // (the port the master's clients reach us on), else the plain one.
            let port = match config.get_int("replica-announce-port") {
                0 if config.get_bool("tls-replication") && config.get_int("tls-port") != 0 => {
                    config.get_int("tls-port")
                }
                0 => config.get_int("port"),
                p => p,
            };
            let text = |name: &str| config.get(name).filter(|v| !v.is_empty()).map(str::to_string);
            (
                config.get_int("repl-timeout").max(1) as u64,
                port,
                text("replica-announce-ip"),
                text("masterauth"),
                text("masteruser"),
                config.get_int("repl-backlog-size").max(1) as usize,
            )
        };
        let source = self.engine.config.read().get("bind-source-addr").filter(|a| !a.is_empty()).map(str::to_string);
        let stream = connect(addr, source.as_deref(), Duration::from_secs(timeout_s))
            .map_err(|e| format!("Error condition on socket for SYNC: {e}"))?;
        stream.set_read_timeout(Some(Duration::from_millis(100))).map_err(|e| e.to_string())?;
        let _ = stream.set_nodelay(true);
        let conn = ConnInfo {
            addr: stream.peer_addr().map(|a| a.to_string()).unwrap_or_default(),
            laddr: stream.local_addr().map(|a| a.to_string()).unwrap_or_default(),
            fd: std::os::fd::AsRawFd::as_raw_fd(&stream),
        };
        let tls = self.engine.config.read().get_bool("tls-replication");
        let stream = crate::outgoing::wrap(stream, tls).map_err(|e| format!("TLS to the master: {e}"))?;
        let mut reader = Reader { stream, buf: Vec::new(), start: 0 };
        self.status.set(LinkState::Handshake);
        (self.log)(LogLevel::Notice, "MASTER <-> REPLICA sync started");
        let deadline = || Duration::from_secs(timeout_s);

        let pong = self.command(&mut reader, &[b"PING"], deadline())?;
        // A master asking for a password still proves it is there (Redis accepts these).
        if pong.starts_with('-')
            && !["-NOAUTH", "-NOPERM", "-ERR operation not permitted"].iter().any(|p| pong.starts_with(p))
        {
            return Err(format!("Error reply to PING from master: '{pong}'"));
        }
        if let Some(password) = &auth {
            let mut args: Vec<&[u8]> = vec![b"AUTH"];
            if let Some(user) = &user {
                args.push(user.as_bytes());
            }
            args.push(password.as_bytes());
            let reply = self.command(&mut reader, &args, deadline())?;
            if reply.starts_with('-') {
                return Err(format!("Unable to AUTH to MASTER: {reply}"));
            }
        }
        let port = announce_port.to_string();
        let reply = self.command(&mut reader, &[b"REPLCONF", b"listening-port", port.as_bytes()], deadline())?;
        if reply.starts_with('-') {
            (self.log)(
                LogLevel::Notice,
                &format!("(Non critical) Master does not understand REPLCONF listening-port: {reply}"),
            );
        }
        if let Some(ip) = &announce_ip {
            let reply = self.command(&mut reader, &[b"REPLCONF", b"ip-address", ip.as_bytes()], deadline())?;
            if reply.starts_with('-') {
                (self.log)(
                    LogLevel::Notice,
                    &format!("(Non critical) Master does not understand REPLCONF ip-address: {reply}"),
                );
            }
        }
        let reply = self.command(&mut reader, &[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"], deadline())?;
        if reply.starts_with('-') {
            (self.log)(LogLevel::Notice, &format!("(Non critical) Master does not understand REPLCONF capa: {reply}"));
        }

        let replication = &self.layer.replication;
        let (replid, offset) = replication.position();
        let from = (offset + 1).to_string();
        (self.log)(LogLevel::Notice, &format!("Trying a partial resynchronization (request {replid}:{from})."));
        let mut psync: Vec<&[u8]> = vec![b"PSYNC", replid.as_bytes(), from.as_bytes()];
        if self.failover {
            psync.push(b"FAILOVER");
        }
        let reply = self.command(&mut reader, &psync, deadline())?;
        if self.failover {
            if reply.starts_with("+FULLRESYNC") || reply.starts_with("+CONTINUE") {
                super::failover::finish(self.layer, self.engine);
            } else {
                super::failover::abort(self.layer, self.engine, "Failover target rejected psync request");
                return Ok(());
            }
        }
        if let Some(rest) = reply.strip_prefix("+FULLRESYNC ") {
            let mut words = rest.split(' ');
            let (Some(id), Some(Ok(master_offset))) = (words.next(), words.next().map(str::parse::<u64>)) else {
                return Err(format!("Master replied with wrong +FULLRESYNC syntax: {reply}"));
            };
            if id.len() != 40 {
                return Err(format!("Master replied with wrong +FULLRESYNC syntax: {reply}"));
            }
            (self.log)(LogLevel::Notice, &format!("Full resync from master: {id}:{master_offset}"));
            self.full_sync(&mut reader, Some((id.to_string(), master_offset)), backlog_size)?;
        } else if let Some(rest) = reply.strip_prefix("+CONTINUE") {
            let id = rest.trim();
            (self.log)(LogLevel::Notice, "Successful partial resynchronization with master.");
            if id.len() == 40 && id != replid {
                (self.log)(LogLevel::Notice, &format!("Master replication ID changed to {id}"));
                replication.switch_master_id(id);
                // Our replicas must learn the new ID (they continue from us partially).
                replication.disconnect_all();
            } else {
                replication.switch_master_id(&replid);
            }
            (self.log)(LogLevel::Notice, "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
        } else if reply.starts_with("-NOMASTERLINK") || reply.starts_with("-LOADING") {
            return Err(format!("Master is currently unable to PSYNC but should be in the future: {reply}"));
        } else if reply.starts_with('-') {
            // A master without PSYNC: the old protocol, and no history to continue later.
            (self.log)(
                LogLevel::Notice,
                &format!("Master does not support PSYNC or is in error state (reply: {reply})"),
            );
            let mut out = Vec::new();
            quince_resp::encode_command(&mut out, &[b"SYNC"]);
            reader.stream.write_all(&out).map_err(|e| format!("writing to the master: {e}"))?;
            self.full_sync(&mut reader, None, backlog_size)?;
        } else {
            return Err(format!("Unexpected reply to PSYNC from master: {reply}"));
        }
        self.stream(reader, conn, timeout_s)
    }

    /// Receives the snapshot (`$len` or `$EOF:<mark>` then the bytes up to the mark) and
    /// replaces the dataset with it. A snapshot that does not load leaves an empty dataset
    /// and no history (the next attempt is a full sync), never half a dataset.
    fn full_sync(
        &self,
        reader: &mut Reader,
        history: Option<(String, u64)>,
        backlog_size: usize,
    ) -> Result<(), String> {
        self.status.set(LinkState::Sync);
        let timeout = Duration::from_secs(self.engine.config.read().get_int("repl-timeout").max(1) as u64);
        let same_history = history.as_ref().is_some_and(|(id, _)| *id == self.layer.replication.position().0);
        self.layer.begin_replica_transfer(self.engine, same_history);
        let result = self.receive_and_load(reader, history, backlog_size, timeout);
        self.layer.end_replica_transfer(self.engine);
        result
    }

    fn receive_and_load(
        &self,
        reader: &mut Reader,
        history: Option<(String, u64)>,
        backlog_size: usize,
        timeout: Duration,
    ) -> Result<(), String> {
        let header = self.read_line(reader, true, timeout)?;
        let Some(size) = header.strip_prefix('$') else {
            return Err(format!("Bad protocol from MASTER, the first byte is not '$' (we received '{header}')"));
        };
        let snapshot = if let Some(mark) = size.strip_prefix("EOF:") {
            let mark = mark.as_bytes().to_vec();
            if mark.len() != 40 {
                return Err(format!("Bad EOF mark from MASTER: '{header}'"));
            }
            self.status.sync_total.store(-1, Ordering::Relaxed);
            self.read_until_mark(reader, &mark)?
        } else {
            let len: u64 = size.parse().map_err(|_| format!("Bad snapshot length from MASTER: '{header}'"))?;
            self.status.sync_total.store(len as i64, Ordering::Relaxed);
            self.read_exact_len(reader, len)?
        };
        (self.log)(
            LogLevel::Notice,
            &format!("MASTER <-> REPLICA sync: received {} bytes of snapshot", snapshot.len()),
        );
        let replication = &self.layer.replication;
        let async_loading = self.layer.async_loading.load(Ordering::SeqCst);
        {
            // The old dataset goes at one point: no command runs meanwhile. Then, as
            // Redis, clients are answered while the snapshot loads: -LOADING for what
            // needs the dataset, INFO, PING and the like served (`loading:1`).
            let _gate = self.engine.exclusive();
            (self.log)(LogLevel::Notice, "MASTER <-> REPLICA sync: Flushing old data");
            Layer::empty_dataset(self.engine);
            (self.log)(LogLevel::Notice, "MASTER <-> REPLICA sync: Loading DB in memory");
            if !async_loading {
                self.layer.set_replica_loading(self.engine, true);
            }
        }
        let options = crate::rdb::LoadOptions {
            skip_expired: false,
            key_load_delay_us: self.engine.config.read().get_int("key-load-delay"),
            ..crate::rdb::LoadOptions::default()
        };
        // (With swapdb's async loading the old dataset is served meanwhile: the load
        // keeps the gate then.)
        let loaded = {
            let _gate = async_loading.then(|| self.engine.exclusive());
            crate::rdb::load_snapshot(self.engine, &snapshot[..], &options, &mut |_, _| {})
        };
        {
            let _gate = self.engine.exclusive();
            if let Err(e) = loaded {
                Layer::empty_dataset(self.engine);
                replication.forget_history();
                return Err(format!("Failed trying to load the MASTER synchronization DB from socket: {e}"));
            }
            let (id, offset) = history.unwrap_or_else(|| (super::random_id(), 0));
            replication.adopt_master_history(&id, offset, 0, backlog_size);
        }
        // Loaded: clients are served again before the AOF starts over (Redis's
        // readSyncBulkPayload stops loading before restartAOFAfterSYNC's fork).
        self.layer.end_replica_transfer(self.engine);
        // Our replicas follow the new history from its start.
        replication.disconnect_all();
        self.layer.after_replica_sync(self.engine);
        (self.log)(LogLevel::Notice, "MASTER <-> REPLICA sync: Finished with success");
        Ok(())
    }

    /// `n` bytes; the buffer grows with what arrives (a length announced by the peer never
    /// sizes an allocation by itself).
    fn read_exact_len(&self, reader: &mut Reader, n: u64) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let mut idle = Instant::now();
        while (out.len() as u64) < n {
            let take = reader.pending().len().min((n - out.len() as u64) as usize);
            if take > 0 {
                out.extend_from_slice(&reader.pending()[..take]);
                reader.consume(take);
                self.status.sync_read.store(out.len() as i64, Ordering::Relaxed);
                idle = Instant::now();
                continue;
            }
            self.check_transfer(idle)?;
            reader.fill(self.status)?;
        }
        Ok(out)
    }

    /// The bytes up to the 40-byte `mark` that ends a diskless transfer.
    fn read_until_mark(&self, reader: &mut Reader, mark: &[u8]) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let mut idle = Instant::now();
        loop {
            if out.len() >= mark.len() && out.ends_with(mark) {
                out.truncate(out.len() - mark.len());
                return Ok(out);
            }
            if !reader.pending().is_empty() {
                // Never past the mark: what follows it is the stream.
                let old_len = out.len();
                out.extend_from_slice(reader.pending());
                let search_from = old_len.saturating_sub(mark.len() - 1);
                let found = out[search_from..].windows(mark.len()).position(|w| w == mark).map(|i| i + search_from);
                let consumed = match found {
                    Some(at) => {
                        out.truncate(at + mark.len());
                        at + mark.len() - old_len
                    }
                    None => out.len() - old_len,
                };
                reader.consume(consumed);
                self.status.sync_read.store(out.len() as i64, Ordering::Relaxed);
                idle = Instant::now();
                continue;
            }
            self.check_transfer(idle)?;
            reader.fill(self.status)?;
        }
    }

    fn check_transfer(&self, idle_since: Instant) -> Result<(), String> {
        if self.stopped() {
            return Err("stopped".into());
        }
        let timeout = self.engine.config.read().get_int("repl-timeout").max(1) as u64;
        if idle_since.elapsed() > Duration::from_secs(timeout) {
            return Err("Timeout receiving bulk data from MASTER... If the problem persists try to set the \
                        'repl-timeout' parameter in redis.conf to a larger value."
                .into());
        }
        Ok(())
    }

    /// Applies the master's stream until the link breaks or we stop following.
    fn stream(&self, mut reader: Reader, conn: ConnInfo, timeout_s: u64) -> Result<(), String> {
        let engine = self.engine;
        let replication = &self.layer.replication;
        let mut client = engine.register_client(conn);
        client.must_obey = true;
        client.authenticated = true;
        client.handle.set_flag(flag::MASTER, true);
        // A continued stream is in the database it was in when the link broke; after a
        // full sync the master SELECTs before its first write.
        client.db = replication.stream_db();
        let handle = client.handle.clone();
        self.status.set(LinkState::Connected);
        self.status.last_io_ms.store(now_ms(), Ordering::Relaxed);
        let result = (|| {
            let mut reply = Vec::new();
            let mut decoder = RequestDecoder::new(i64::MAX);
            let mut last_ack = Instant::now() - Duration::from_secs(2);
            loop {
                if self.stopped() {
                    return Ok(());
                }
                if handle.is_killed() {
                    return Err("the master's client was killed (CLIENT KILL)".to_string());
                }
                if last_ack.elapsed() >= Duration::from_secs(1) {
                    if self.logged() {
                        send_ack(&mut *reader.stream, replication.offset())?;
                    }
                    last_ack = Instant::now();
                }
                match decoder.decode(reader.pending()).map_err(|e| format!("protocol error from the master: {e:?}"))? {
                    Decoded::Incomplete => {
                        let idle_ms = now_ms() - self.status.last_io_ms.load(Ordering::Relaxed);
                        if idle_ms > timeout_s as i64 * 1000 {
                            return Err("MASTER timeout: no data nor PING received...".to_string());
                        }
                        reader.fill(self.status)?;
                        self.note_read(&reader);
                    }
                    Decoded::Empty { len } => {
                        replication.relay(&reader.pending()[..len], client.db);
                        reader.consume(len);
                    }
                    Decoded::Request { len } => {
                        let args: Vec<Vec<u8>> = decoder.args(reader.pending()).map(<[u8]>::to_vec).collect();
                        let getack = args.len() >= 2
                            && args[0].eq_ignore_ascii_case(b"REPLCONF")
                            && args[1].eq_ignore_ascii_case(b"GETACK");
                        let refs: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
                        if !getack && engine.postponed_until(&client, &refs).is_some() {
                            // CLIENT PAUSE holds the master's writes too (Redis pauses the
                            // master client): the stream is read on, applied after.
                            self.note_read(&reader);
                            if !reader.fill(self.status)? {
                                std::thread::sleep(Duration::from_millis(5));
                            }
                            self.note_read(&reader);
                            continue;
                        }
                        if getack {
                            // The offset before this command, as Redis's replica reports it.
                            if self.logged() {
                                send_ack(&mut *reader.stream, replication.offset())?;
                                last_ack = Instant::now();
                            }
                        } else {
                            reply.clear();
                            engine.execute(&mut client, &refs, &mut Encoder::new(&mut reply, Protocol::Resp2));
                            if reply.first() == Some(&b'-') {
                                self.report_error(&reply, &refs);
                            }
                        }
                        replication.relay(&reader.pending()[..len], client.db);
                        reader.consume(len);
                    }
                }
            }
        })();
        engine.unregister_client(&client);
        result
    }
}

impl Session<'_> {
    /// What has been read of the stream: the applied offset plus the bytes waiting.
    fn note_read(&self, reader: &Reader) {
        let read = self.layer.replication.offset() + reader.pending().len() as u64;
        self.status.read_offset.store(read, Ordering::Relaxed);
    }

    /// The master's command failed here: the datasets may have diverged (Redis's
    /// afterErrorReply for a master client). `propagation-error-behavior` panic or
    /// panic-on-replicas stops a read-only replica rather than let it serve them.
    fn report_error(&self, reply: &[u8], args: &[&[u8]]) {
        let text = String::from_utf8_lossy(&reply[1..reply.len().saturating_sub(2).max(1)]);
        let text: String = text.chars().take(4096).collect();
        let name = match self.engine.table.resolve(args) {
            quince_engine::command::Resolved::Found(spec)
            | quince_engine::command::Resolved::UnknownSubcommand(spec) => spec.name.clone(),
            quince_engine::command::Resolved::Unknown => "<unknown>".to_string(),
        };
        (self.log)(
            LogLevel::Warning,
            &format!(
                "== CRITICAL == This replica is sending an error to its master: '{text}' after processing the command '{name}'"
            ),
        );
        let (behavior, read_only) = {
            let config = self.engine.config.read();
            (
                config.get("propagation-error-behavior").unwrap_or("ignore").to_string(),
                config.get_bool("replica-read-only"),
            )
        };
        if read_only && (behavior == "panic" || behavior == "panic-on-replicas") {
            (self.log)(
                LogLevel::Warning,
                &format!("This replica panicked sending an error to its master after processing the command '{name}'"),
            );
            std::process::abort();
        }
    }
}

/// A connection to the master, from `bind-source-addr` when it is set (as Redis binds its
/// outgoing replication socket).
fn connect(addr: std::net::SocketAddr, source: Option<&str>, timeout: Duration) -> std::io::Result<TcpStream> {
    let Some(source) = source else { return TcpStream::connect_timeout(&addr, timeout) };
    let ip: std::net::IpAddr =
        source.parse().map_err(|_| std::io::Error::other(format!("bad bind-source-addr '{source}'")))?;
    let socket = socket2::Socket::new(socket2::Domain::for_address(addr), socket2::Type::STREAM, None)?;
    socket.bind(&std::net::SocketAddr::new(ip, 0).into())?;
    socket.connect_timeout(&addr.into(), timeout)?;
    Ok(socket.into())
}

fn send_ack(stream: &mut dyn crate::outgoing::Outgoing, offset: u64) -> Result<(), String> {
    let mut out = Vec::new();
    quince_resp::encode_command(&mut out, &[&b"REPLCONF"[..], b"ACK", offset.to_string().as_bytes()]);
    stream.write_all(&out).map_err(|e| format!("writing to the master: {e}"))
}
