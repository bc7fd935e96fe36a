//! One client connection: its read buffer and decoder, its engine-side client state, and
//! its pending output. Owned by exactly one worker thread.
//!
//! Bytes move one of two ways (docs/threading.md): with readiness (epoll), the connection
//! reads and writes its socket itself; with completions (io_uring), the worker's ring
//! receives into its own buffers and hands the bytes over (`on_received`), and sends what
//! the connection has queued (`start_send`, `sent`).

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use quince_engine::{Client, Engine};
use quince_resp::{Decoded, Encoder, RequestDecoder};

use crate::socket::Socket;
use crate::worker::scripts::ScriptQueue;
use smallvec::SmallVec;

/// Bytes asked of the kernel per read (Redis's PROTO_IOBUF_LEN is 16 KB).
const READ_CHUNK: usize = 16 * 1024;
/// Output is flushed mid-batch once this much is pending, to bound memory on deep pipelines.
const FLUSH_THRESHOLD: usize = 256 * 1024;
/// Most the read buffer grows by at once while a large bulk argument arrives.
const MAX_READ_GROWTH: usize = 64 << 20;
/// Redis's per-client reply buffer (PROTO_REPLY_CHUNK_BYTES): output limits count beyond it.
const OUTPUT_STATIC_BUFFER: usize = 16 * 1024;

/// How a connection's bytes move.
pub enum Io {
    /// Readiness: the connection reads and writes the non-blocking socket itself.
    Ready(Socket),
    /// Completions: the worker's ring does the socket I/O.
    Ring(RingSocket),
}

/// A socket served by an io_uring: the reply bytes in flight live here, apart from
/// `write_buf`, because the kernel reads them until the send completes.
pub struct RingSocket {
    pub socket: Socket,
    /// Tells this connection's completions from those of an earlier one in the same slot.
    pub generation: u32,
    sending: Vec<u8>,
    send_pos: usize,
    pub send_in_flight: bool,
    /// A multishot receive is armed for this socket.
    pub receiving: bool,
}

impl RingSocket {
    pub fn new(socket: Socket, generation: u32) -> Self {
        Self { socket, generation, sending: Vec::new(), send_pos: 0, send_in_flight: false, receiving: false }
    }

    /// The in-flight bytes, for a worker that closes the connection before the send
    /// completes: they must outlive it.
    pub fn take_in_flight(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.sending)
    }
}

pub struct Connection {
    pub io: Io,
    /// Boxed: a script command takes it away and gives it back (a pointer, not a copy).
    pub client: Box<Client>,
    decoder: RequestDecoder,
    /// Read buffer; `read_buf[read_start..read_end]` is received but not yet executed.
    /// Its length is its usable size: it is zeroed once when grown, never per read.
    read_buf: Vec<u8>,
    read_start: usize,
    read_end: usize,
    write_buf: Vec<u8>,
    write_pos: usize,
    /// No more input is processed; close once the output is flushed.
    pub closing: bool,
    pub last_interaction: Instant,
    pub wants_writable: bool,
    /// Held by CLIENT PAUSE: the next request stays buffered until the pause lifts.
    pub paused: bool,
    /// Replies wait for the AOF to become durable; the worker flushes after one group
    /// commit for all its connections (`appendfsync always`).
    pub flush_deferred: bool,
    /// This connection's slot in its worker (how a queued script's result finds it).
    token: usize,
    scripts: ScriptQueue,
    /// This client's script command is queued or running (see worker/scripts.rs): `client`
    /// is the shell below until it comes back, and further requests wait, like a blocked
    /// client's.
    pub script_running: bool,
    /// A copy of the client made at its first script, standing in for it while each script
    /// runs (its id, handle, db and protocol are what the connection reads meanwhile):
    /// handing the client over costs no clone and no reference counts.
    script_shell: Option<Box<Client>>,
    /// Requests of the pipeline whose keys were prefetched and have not run yet.
    prefetched: usize,
    /// The connection is to be closed (peer gone, killed) once its script comes back.
    pub close_pending: bool,
    /// Whether the poller currently watches for writability too (re-registering only
    /// when this changes saves an epoll_ctl per event).
    pub registered_writable: bool,
    /// Input may sit unread in the socket (reading stopped under CLIENT PAUSE): the
    /// registration must be renewed so the poller reports it again.
    pub rearm: bool,
    /// Closed for going over its output-buffer limit: the output is dropped.
    pub output_limit_hit: bool,
}

/// What the worker should do with the connection after an event.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    Keep,
    /// Close once the pending output is sent.
    Close,
    /// Close now; pending output is dropped (limits, idle timeout, I/O errors).
    CloseNow,
}

impl Connection {
    pub fn new(io: Io, client: Client, max_bulk_len: i64, token: usize, scripts: ScriptQueue) -> Self {
        Self {
            io,
            client: Box::new(client),
            decoder: RequestDecoder::new(max_bulk_len),
            read_buf: vec![0; READ_CHUNK],
            read_start: 0,
            read_end: 0,
            write_buf: Vec::new(),
            write_pos: 0,
            closing: false,
            flush_deferred: false,
            last_interaction: Instant::now(),
            wants_writable: false,
            paused: false,
            token,
            scripts,
            script_running: false,
            script_shell: None,
            prefetched: 0,
            close_pending: false,
            registered_writable: false,
            rearm: false,
            output_limit_hit: false,
        }
    }

    /// Makes room for the next read: at least `at_least`, a chunk, or more of what a large
    /// bulk still needs, but never more than what is already buffered: the buffer doubles
    /// as data arrives, so a header announcing a huge bulk costs memory only once its bytes
    /// come (zeroing the announced size up front let a stranger take gigabytes).
    fn reserve_read_space(&mut self, at_least: usize) {
        let pending = self.read_end - self.read_start;
        let wanted = self
            .decoder
            .bytes_wanted()
            .saturating_sub(pending)
            .min(pending)
            .clamp(READ_CHUNK, MAX_READ_GROWTH)
            .max(at_least);
        if self.read_buf.len() - self.read_end >= wanted {
            return;
        }
        if self.read_start > 0 {
            self.read_buf.copy_within(self.read_start..self.read_end, 0);
            self.read_start = 0;
            self.read_end = pending;
        }
        if self.read_buf.len() - self.read_end < wanted {
            self.read_buf.resize(self.read_end + wanted, 0);
        }
    }

    /// Readiness: reads everything available, executing every complete command as it
    /// arrives, then writes the replies (one write for the whole batch unless it grew very
    /// large). `peer_closed`: the event reported the peer's end of input (or an error),
    /// which a short read does not show: read on until the end is seen.
    pub fn on_readable(&mut self, engine: &Engine, query_buffer_limit: usize, peer_closed: bool) -> Next {
        self.last_interaction = Instant::now();
        while !self.closing && !self.paused {
            self.reserve_read_space(0);
            let space = self.read_buf.len() - self.read_end;
            let Io::Ready(socket) = &self.io else { return Next::Keep };
            let tls = socket.is_tls();
            match (&*socket).read(&mut self.read_buf[self.read_end..]) {
                Ok(0) => return self.on_peer_closed(engine),
                Ok(n) => {
                    if let Some(next) = self.absorb(engine, n, query_buffer_limit) {
                        return next;
                    }
                    if self.write_buf.len() - self.write_pos >= FLUSH_THRESHOLD {
                        let next = self.flush(engine);
                        if next != Next::Keep {
                            return next;
                        }
                    }
                    // PERF: a short read emptied the socket. The registration is
                    // edge-triggered, so bytes arriving later raise a new event: no
                    // read that would only say WouldBlock (a syscall per request saved).
                    // (Not over TLS: rustls may hold more of what it already read, and the
                    // socket more than rustls took in one read.)
                    if n < space && !peer_closed && !tls {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Next::CloseNow,
            }
        }
        self.end_of_input(engine)
    }

    /// Completions: bytes the ring received for this connection.
    pub fn on_received(&mut self, engine: &Engine, data: &[u8], query_buffer_limit: usize) -> Next {
        self.last_interaction = Instant::now();
        if self.closing {
            // Input after QUIT or a protocol error is ignored, as Redis does.
            return Next::Close;
        }
        self.reserve_read_space(data.len());
        self.read_buf[self.read_end..self.read_end + data.len()].copy_from_slice(data);
        if let Some(next) = self.absorb(engine, data.len(), query_buffer_limit) {
            return next;
        }
        self.end_of_input(engine)
    }

    /// The peer finished sending: it still gets the replies of what it sent.
    pub fn on_peer_closed(&mut self, engine: &Engine) -> Next {
        self.closing = true;
        let _ = self.flush(engine);
        Next::Close
    }

    /// Takes `n` bytes just placed after `read_end` and executes what they complete.
    /// Returns what to do with the connection when it must not go on.
    fn absorb(&mut self, engine: &Engine, n: usize, query_buffer_limit: usize) -> Option<Next> {
        self.read_end += n;
        engine.stats.total_net_input_bytes.fetch_add(n as u64, Ordering::Relaxed);
        engine.stats.total_reads_processed.fetch_add(1, Ordering::Relaxed);
        self.execute_buffered(engine);
        if self.read_end - self.read_start > query_buffer_limit {
            crate::log::log(
                crate::log::Level::Warning,
                &format!("Closing client id={} that reached max query buffer length", self.client.id),
            );
            return Some(Next::CloseNow);
        }
        None
    }

    /// After a batch of input: replies that depend on writes not yet durable wait for the
    /// worker's group commit at the end of its loop turn, shared with its other
    /// connections; the others go out now.
    fn end_of_input(&mut self, engine: &Engine) -> Next {
        if !self.closing && engine.persistence().is_some_and(|p| p.durability_pending()) {
            self.flush_deferred = true;
            return Next::Keep;
        }
        self.flush(engine)
    }

    /// Retries requests held by CLIENT PAUSE.
    pub fn resume(&mut self, engine: &Engine) -> Next {
        self.paused = false;
        self.rearm = true;
        self.execute_buffered(engine);
        // Cleared only once the request went through (clearing first let CLIENT LIST on
        // another thread see a held client without its `b` for a moment).
        if !self.paused && self.client.blocked.is_none() {
            self.client.handle.set_flag(quince_engine::clients::flag::BLOCKED, false);
        }
        self.flush(engine)
    }

    /// Executes all complete requests in the read buffer.
    /// Looks ahead at up to `PREFETCH_WINDOW` buffered requests (`SCRIPT_WINDOW` scripts)
    /// and has the engine start loading their keys (`lookahead_key`), so that in a large
    /// keyspace their cache misses overlap. Returns how many requests it covered (at least
    /// 1, so a lone request is looked at once).
    fn prefetch_keys(&self, engine: &Engine) -> usize {
        const PREFETCH_WINDOW: usize = 16;
        // A script runs for microseconds: lines loaded 16 scripts ahead are gone from the
        // caches when it comes (perf, a 3-command FCALL pipeline: the key lookups' share of
        // the samples 9% unprefetched, 6.7% with 16 scripts looked ahead, 3.8% with 4).
        const SCRIPT_WINDOW: usize = 4;
        let mut keys: SmallVec<[&[u8]; PREFETCH_WINDOW]> = SmallVec::new();
        let mut at = self.read_start;
        let (mut seen, mut scripts) = (0, 0);
        while seen < PREFETCH_WINDOW && scripts < SCRIPT_WINDOW {
            let pending = &self.read_buf[at..self.read_end];
            let Some(peeked) = quince_resp::peek_request(pending) else { break };
            let (key, script) = lookahead_key(pending, &peeked);
            keys.extend(key);
            scripts += usize::from(script);
            at += peeked.len;
            seen += 1;
        }
        if seen > 1 {
            engine.keyspace.prefetch(self.client.db, &keys);
        }
        seen.max(1)
    }

    fn execute_buffered(&mut self, engine: &Engine) {
        self.client.begin_batch();
        // (`prefetched` carries over: a pipeline resumed after a script or a wait goes on
        // with the window it prefetched, instead of peeking at it again each time.)
        while !self.closing && self.client.blocked.is_none() && !self.script_running {
            if self.prefetched == 0 && engine.keyspace.is_large() {
                self.prefetched = self.prefetch_keys(engine);
            }
            let pending = &self.read_buf[self.read_start..self.read_end];
            self.decoder.set_unauthenticated(engine.acl.auth_required(self.client.authenticated));
            match self.decoder.decode(pending) {
                Ok(Decoded::Request { len }) => {
                    // PERF: up to 8 arguments live on the stack; no allocation per request.
                    let args: SmallVec<[&[u8]; 8]> = self.decoder.args(pending).collect();
                    if engine.postponed_until(&self.client, &args).is_some() {
                        self.paused = true;
                        self.client.handle.set_flag(quince_engine::clients::flag::BLOCKED, true);
                        break;
                    }
                    // CLIENT LIST's qbuf: what is buffered, including this command.
                    self.client.handle.qbuf.store(pending.len(), Ordering::Relaxed);
                    self.client.handle.qbuf_free.store(self.read_buf.len() - self.read_end, Ordering::Relaxed);
                    // A script runs once the worker's events are handled (so it can serve
                    // them while busy); the rest of the pipeline waits for its reply. While
                    // another script is busy it runs now, to get BUSY at once as in Redis.
                    if engine.runs_script(&self.client, &args) && !engine.scripting.busy(&*engine.clock) {
                        let mut shell = self.script_shell.take().unwrap_or_else(|| {
                            let mut shell = self.client.clone();
                            shell.multi = None;
                            shell.watched.clear();
                            shell
                        });
                        shell.db = self.client.db;
                        shell.protocol = self.client.protocol;
                        // It may wait for its turn and the gate: its command reads the
                        // clock instead of taking the previous command's end as its start.
                        self.client.end_batch();
                        let client = std::mem::replace(&mut self.client, shell);
                        self.scripts.submit(self.token, client, &args);
                        self.prefetched = self.prefetched.saturating_sub(1);
                        self.read_start += len;
                        self.script_running = true;
                        break;
                    }
                    let replied_before = self.write_buf.len();
                    let mut out = Encoder::new(&mut self.write_buf, self.client.protocol);
                    if !engine.execute_fast(&mut self.client, &args, &mut out) {
                        engine.execute(&mut self.client, &args, &mut out);
                    }
                    self.prefetched = self.prefetched.saturating_sub(1);
                    self.read_start += len;
                    if self.write_buf.len() > replied_before && self.is_replica_link() {
                        // The reply would land in the middle of the replication stream: as
                        // Redis, it is dropped and logged, and the replica disconnected.
                        log_replica_reply(engine, &args, &self.write_buf[replied_before..]);
                        self.write_buf.truncate(replied_before);
                        self.closing = true;
                        break;
                    }
                    if self.client.blocked.is_some() {
                        // BLPOP & co: the rest of the pipeline waits for the wait to end.
                        break;
                    }
                    if self.client.close_after_reply {
                        self.closing = true;
                    }
                    drop(args);
                    if self.over_output_limit(engine) {
                        break;
                    }
                }
                Ok(Decoded::Empty { len }) => self.read_start += len,
                Ok(Decoded::Incomplete) => {
                    // The window ended with what was buffered: the next read peeks again.
                    self.prefetched = 0;
                    break;
                }
                Err(e) => {
                    let mut text = b"ERR ".to_vec();
                    text.extend_from_slice(&e.message());
                    Encoder::new(&mut self.write_buf, self.client.protocol).error(&text);
                    crate::log::log(
                        crate::log::Level::Verbose,
                        &format!(
                            "Protocol error from client id={}: {}",
                            self.client.id,
                            String::from_utf8_lossy(&text)
                        ),
                    );
                    self.closing = true;
                }
            }
        }
        self.client.end_batch();
        self.client.handle.qbuf.store(self.read_end - self.read_start, Ordering::Relaxed);
        if self.read_start == self.read_end {
            self.read_start = 0;
            self.read_end = 0;
            // Give back a buffer a large request grew, once it is empty.
            if self.read_buf.len() > 4 * FLUSH_THRESHOLD {
                self.read_buf = vec![0; READ_CHUNK];
            }
            self.decoder.release_spare();
        }
    }

    /// For a blocked client: ends the wait if its deadline passed, and once the wait is
    /// over sends its reply and goes on with the buffered requests. Returns the deadline
    /// still ahead while it keeps waiting.
    /// The connection of one of our replicas (after SYNC/PSYNC; not MONITOR).
    fn is_replica_link(&self) -> bool {
        let handle = &self.client.handle;
        handle.has_flag(quince_engine::clients::flag::REPLICA)
            && !handle.has_flag(quince_engine::clients::flag::MONITOR)
    }

    pub fn poll_blocked(&mut self, engine: &Engine, now_ms: i64) -> (Next, Option<i64>) {
        let deadline = engine.check_block_timeout(&self.client, now_ms);
        let Some(reply) = engine.blocked_reply(&mut self.client) else { return (Next::Keep, deadline) };
        self.queue_output(&reply);
        self.execute_buffered(engine);
        let next = self.flush(engine);
        let deadline = self.client.blocked.as_ref().and_then(|w| w.deadline_ms);
        (next, deadline)
    }

    /// The worker ran this client's script command: takes the client back, sends the
    /// reply and goes on with the buffered requests.
    pub fn finish_script(&mut self, engine: &Engine, client: Box<Client>, reply: &[u8]) -> Next {
        self.script_shell = Some(std::mem::replace(&mut self.client, client));
        self.script_running = false;
        self.queue_output(reply);
        if self.client.close_after_reply {
            self.closing = true;
        }
        if self.close_pending {
            let _ = self.flush(engine);
            return Next::Close;
        }
        self.execute_buffered(engine);
        self.flush(engine)
    }

    /// Output not yet written: the queue and, over io_uring, the send in flight.
    fn pending_output(&self) -> usize {
        let in_flight = match &self.io {
            Io::Ring(ring) => ring.sending.len() - ring.send_pos,
            Io::Ready(_) => 0,
        };
        self.write_buf.len() - self.write_pos + in_flight
    }

    /// After a reply: whether the client's output is over `client-output-buffer-limit` for
    /// its class. Then it is closed at once with its output dropped, as Redis does (a
    /// client that sends requests and never reads replies would take all memory).
    fn over_output_limit(&mut self, engine: &Engine) -> bool {
        // Redis counts the reply list beyond its 16 KB static buffer.
        let pending = self.pending_output().saturating_sub(OUTPUT_STATIC_BUFFER);
        if pending == 0 {
            // Below every limit: a soft-limit clock started earlier stops (read first: no
            // write to the shared handle per command).
            let since = &self.client.handle.soft_limit_since_ms;
            if since.load(Ordering::Relaxed) != 0 {
                since.store(0, Ordering::Relaxed);
            }
            return false;
        }
        if !engine.output_limit_reached(&self.client.handle, pending, engine.clock.now_ms()) {
            return false;
        }
        crate::log::log(
            crate::log::Level::Warning,
            &format!(
                "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
                self.client.id, self.client.handle.conn.addr
            ),
        );
        self.closing = true;
        self.output_limit_hit = true;
        true
    }

    /// The Lua debugger's input: what was received and not executed, taken out.
    pub fn take_unread_input(&mut self) -> Vec<u8> {
        let input = self.read_buf[self.read_start..self.read_end].to_vec();
        self.read_start = 0;
        self.read_end = 0;
        input
    }

    /// The Lua debugger's output: written to the socket at once, past the replies held
    /// for the script (as Redis's debugger writes to the socket itself), waiting up to
    /// 5 seconds for room. False if it could not all be written.
    pub fn send_now(&mut self, engine: &Engine, bytes: &[u8]) -> bool {
        let socket = match &self.io {
            Io::Ready(socket) => socket,
            Io::Ring(ring) => &ring.socket,
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut sent = 0;
        while sent < bytes.len() {
            match (&*socket).write(&bytes[sent..]) {
                Ok(0) => return false,
                Ok(n) => {
                    sent += n;
                    engine.stats.total_net_output_bytes.fetch_add(n as u64, Ordering::Relaxed);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return false;
                    }
                    let mut poll = libc::pollfd { fd: socket.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
                    // SAFETY: one valid pollfd, for the duration of the call.
                    unsafe { libc::poll(&mut poll, 1, left.as_millis().min(5000) as libc::c_int) };
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        // Over TLS, until rustls has handed all the ciphertext to the socket.
        loop {
            match socket.flush_pending() {
                Ok(true) => return true,
                Ok(false) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return false;
                    }
                    let mut poll = libc::pollfd { fd: socket.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
                    // SAFETY: one valid pollfd, for the duration of the call.
                    unsafe { libc::poll(&mut poll, 1, left.as_millis().min(5000) as libc::c_int) };
                }
                Err(_) => return false,
            }
        }
    }

    pub fn is_blocked(&self) -> bool {
        self.client.blocked.is_some()
    }

    /// Appends bytes produced elsewhere (MONITOR lines) to the output.
    pub fn queue_output(&mut self, bytes: &[u8]) {
        self.write_buf.extend_from_slice(bytes);
    }

    /// Writes pending output (readiness), or gets it ready for the ring to send
    /// (completions). Returns Close when the peer is gone, or when closing and done.
    pub fn flush(&mut self, engine: &Engine) -> Next {
        self.flush_deferred = false;
        if self.output_limit_hit {
            return Next::CloseNow;
        }
        // PERF: while the pipeline waits for its script, more replies of the same batch
        // follow: one write after the last, not one per script (a syscall and a wake-up of
        // the client each).
        if self.script_running {
            return Next::Keep;
        }
        // No reply leaves before the writes it may depend on are as durable as
        // `appendfsync` promises (always: fsynced).
        if self.write_pos < self.write_buf.len() {
            if let Some(layer) = engine.persistence() {
                // Under `always`, a log that can't be written (a full disk) holds every
                // reply until it can: the worker retries each turn of its loop.
                if layer.durability_pending() && layer.make_durable().is_err() {
                    self.flush_deferred = true;
                    return Next::Keep;
                }
            }
        }
        let socket = match &self.io {
            Io::Ready(socket) => socket,
            Io::Ring(_) => {
                // The worker sends after this turn; CLIENT LIST omem and the Pub/Sub output
                // limit see what is still queued meanwhile.
                self.note_ring_output();
                return if self.closing { Next::Close } else { Next::Keep };
            }
        };
        if self.write_pos < self.write_buf.len() {
            engine.stats.total_writes_processed.fetch_add(1, Ordering::Relaxed);
        }
        while self.write_pos < self.write_buf.len() {
            match (&*socket).write(&self.write_buf[self.write_pos..]) {
                Ok(0) => return Next::CloseNow,
                Ok(n) => {
                    self.write_pos += n;
                    engine.stats.total_net_output_bytes.fetch_add(n as u64, Ordering::Relaxed);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.wants_writable = true;
                    // What was sent leaves the buffer once it is most of it (a peer that
                    // keeps lagging, a replica, would otherwise keep all it was ever sent).
                    if self.write_pos >= 64 * 1024 && self.write_pos * 2 >= self.write_buf.len() {
                        self.write_buf.drain(..self.write_pos);
                        self.write_pos = 0;
                    }
                    // CLIENT LIST omem and the Pub/Sub output limit see what is still queued.
                    self.client.handle.output_bytes.store(self.write_buf.len() - self.write_pos, Ordering::Relaxed);
                    self.client.handle.output_alloc.store(self.write_buf.capacity(), Ordering::Relaxed);
                    return Next::Keep;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Next::CloseNow,
            }
        }
        self.write_buf.clear();
        self.write_pos = 0;
        // Over TLS, the ciphertext rustls queued goes out too; what the socket can't take
        // now waits for it to be writable.
        match socket.flush_pending() {
            Ok(true) => {}
            Ok(false) => {
                self.wants_writable = true;
                return Next::Keep;
            }
            Err(_) => return Next::CloseNow,
        }
        if self.wants_writable {
            self.client.handle.output_bytes.store(0, Ordering::Relaxed);
            // A burst that grew the buffer past 1 MB gives the memory back once sent.
            if self.write_buf.capacity() > 1 << 20 {
                self.write_buf = Vec::with_capacity(16 * 1024);
            }
            self.client.handle.output_alloc.store(self.write_buf.capacity(), Ordering::Relaxed);
        }
        self.wants_writable = false;
        if self.closing {
            Next::Close
        } else {
            Next::Keep
        }
    }

    /// For a killed client: writes what the socket takes now of the pending output (a
    /// client killing itself still gets its reply), then the connection closes without
    /// waiting for the rest, as Redis frees a killed client.
    pub fn last_words(&mut self, engine: &Engine) -> Next {
        let _ = self.flush(engine);
        if let Io::Ring(ring) = &mut self.io {
            // A send in flight would be overtaken: the rest is dropped instead.
            if !ring.send_in_flight {
                let mut socket = &ring.socket;
                if socket.write_all(&ring.sending[ring.send_pos..]).is_ok() {
                    let _ = socket.write_all(&self.write_buf[self.write_pos..]);
                }
            }
        }
        Next::CloseNow
    }

    /// Completions: when no send is in flight and output is queued, moves it to the
    /// in-flight buffer and returns the bytes to send. The queue keeps the other buffer's
    /// capacity, so steady traffic allocates nothing.
    pub fn start_send(&mut self) -> Option<(*const u8, u32)> {
        let Io::Ring(ring) = &mut self.io else { return None };
        // As in `flush`: the replies wait for the script's.
        if ring.send_in_flight || self.script_running {
            return None;
        }
        if ring.send_pos >= ring.sending.len() {
            if self.write_buf.is_empty() {
                return None;
            }
            ring.sending.clear();
            ring.send_pos = 0;
            std::mem::swap(&mut ring.sending, &mut self.write_buf);
        }
        ring.send_in_flight = true;
        let rest = &ring.sending[ring.send_pos..];
        Some((rest.as_ptr(), rest.len().min(u32::MAX as usize) as u32))
    }

    /// Completions: a send finished having written `n` bytes.
    pub fn sent(&mut self, engine: &Engine, n: usize) {
        let Io::Ring(ring) = &mut self.io else { return };
        ring.send_in_flight = false;
        ring.send_pos += n;
        engine.stats.total_net_output_bytes.fetch_add(n as u64, Ordering::Relaxed);
        engine.stats.total_writes_processed.fetch_add(1, Ordering::Relaxed);
        self.note_ring_output();
    }

    /// Completions: publishes the output not yet sent (queued or in flight) as the
    /// client's pending output.
    fn note_ring_output(&self) {
        if let Io::Ring(ring) = &self.io {
            let queued = self.write_buf.len() + ring.sending.len() - ring.send_pos;
            self.client.handle.output_bytes.store(queued, Ordering::Relaxed);
            let alloc = self.write_buf.capacity() + ring.sending.capacity();
            self.client.handle.output_alloc.store(alloc, Ordering::Relaxed);
        }
    }

    /// Completions: the multishot receive ended (settling arms a new one unless closing).
    pub fn receive_stopped(&mut self) {
        if let Io::Ring(ring) = &mut self.io {
            ring.receiving = false;
        }
    }

    /// Completions: a send failed (the peer is gone); nothing is in flight any more.
    pub fn send_failed(&mut self) {
        if let Io::Ring(ring) = &mut self.io {
            ring.send_in_flight = false;
        }
    }

    /// Completions: output not yet handed to the kernel, or in flight.
    pub fn output_pending(&self) -> bool {
        match &self.io {
            Io::Ring(ring) => ring.send_in_flight || ring.send_pos < ring.sending.len() || !self.write_buf.is_empty(),
            Io::Ready(_) => self.write_pos < self.write_buf.len(),
        }
    }
}

/// The key a looked-ahead request most likely uses first, and whether it runs a script:
/// the first declared key of a script (EVAL, EVALSHA, FCALL and their _RO forms: `name
/// script numkeys key...`; none when numkeys is 0), else the argument after the command
/// name (a guess: a wrong one only costs a wasted prefetch).
fn lookahead_key<'b>(request: &'b [u8], peeked: &quince_resp::Peeked) -> (Option<&'b [u8]>, bool) {
    let Some(name) = peeked.arg(0).map(|name| &request[name]) else { return (None, false) };
    if !quince_engine::cmd::scripting::is_script_command(name) {
        return (peeked.arg(1).map(|key| &request[key]), false);
    }
    let numkeys = peeked.arg(2).and_then(|n| quince_resp::parse_i64_strict(&request[n])).unwrap_or(0);
    let key = if numkeys > 0 { peeked.arg(3).map(|key| &request[key]) } else { None };
    (key, true)
}

/// A command from one of our replicas' connections produced `reply` (Redis's
/// "Replica generated a reply" and, for an error, its CRITICAL line).
fn log_replica_reply(engine: &Engine, args: &[&[u8]], reply: &[u8]) {
    let name = match engine.table.resolve(args) {
        quince_engine::command::Resolved::Found(spec) | quince_engine::command::Resolved::UnknownSubcommand(spec) => {
            spec.name.clone()
        }
        quince_engine::command::Resolved::Unknown => String::from_utf8_lossy(args[0]).into_owned(),
    };
    if reply.first() == Some(&b'-') {
        let text = String::from_utf8_lossy(&reply[1..]).trim_end().to_string();
        crate::log::log(
            crate::log::Level::Warning,
            &format!(
                "== CRITICAL == This master is sending an error to its replica: '{text}' after processing the command '{name}'"
            ),
        );
    }
    let shown: String = String::from_utf8_lossy(&reply[..reply.len().min(128)]).escape_debug().collect();
    crate::log::log(
        crate::log::Level::Warning,
        &format!("Replica generated a reply to command '{name}', disconnecting it: {shown}"),
    );
}

#[cfg(test)]
mod tests {
    use super::lookahead_key;

    fn key_of(args: &[&[u8]]) -> (Option<Vec<u8>>, bool) {
        let mut request = Vec::new();
        quince_resp::encode_command(&mut request, args);
        let peeked = quince_resp::peek_request(&request).unwrap();
        let (key, script) = lookahead_key(&request, &peeked);
        (key.map(<[u8]>::to_vec), script)
    }

    #[test]
    fn the_lookahead_finds_a_scripts_first_declared_key() {
        let k1 = Some(b"k1".to_vec());
        assert_eq!(key_of(&[b"GET", b"k1"]), (k1.clone(), false));
        assert_eq!(key_of(&[b"evalsha", b"0123", b"2", b"k1", b"k2", b"arg"]), (k1.clone(), true));
        assert_eq!(key_of(&[b"FCALL_RO", b"f", b"1", b"k1"]), (k1, true));
        assert_eq!(key_of(&[b"EVAL", b"return 1", b"0", b"arg"]), (None, true));
        assert_eq!(key_of(&[b"EVAL", b"return 1", b"x", b"arg"]), (None, true));
        assert_eq!(key_of(&[b"Eval", b"return 1"]), (None, true));
        assert_eq!(key_of(&[b"PING"]), (None, false));
    }
}
