//! A worker thread: one event loop owning its connections and executing their commands
//! inline under the engine's shard locks. Every worker also watches the shared listening
//! sockets; a connection it accepts while another worker owns fewer goes to that one
//! (balance.rs).
//!
//! The loop is written once over a `Reactor`, which moves the bytes: io_uring completions
//! (uring.rs, the default where the kernel allows it) or epoll readiness (epoll.rs, the
//! fallback). docs/threading.md explains both.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use slab::Slab;

use quince_engine::{ConnInfo, Engine, ScriptService};

use crate::connection::{Connection, Io, Next};
use crate::log::{log, Level};
use crate::socket::{Listener, Socket};

pub mod balance;
pub mod epoll;
pub mod scripts;
pub mod uring;
use scripts::ScriptQueue;

const POLL_TIMEOUT: Duration = Duration::from_millis(100);
/// How often subscribers' output is checked against the soft limit without new messages.
const LIMIT_CHECK_PERIOD: Duration = Duration::from_millis(100);

/// Stack of the threads that run scripts (the workers). cjson nests to 1,000
/// levels as in Redis, one Rust frame per level, which a debug build's frames would take
/// past the default 2 MB. Address space only: untouched pages cost no memory.
pub const SCRIPT_STACK_SIZE: usize = 64 << 20;

pub struct Worker {
    pub index: usize,
    pub engine: Arc<Engine>,
    pub listeners: Vec<Listener>,
    /// The server's listening sockets (CONFIG SET port / bind replaces them at runtime),
    /// and the generation of the set `listeners` was cloned from.
    pub listening: Arc<crate::listening::Listening>,
    pub listener_generation: u64,
    /// Spreads accepted connections over the workers.
    pub balancer: Arc<balance::Balancer>,
    pub stop: Arc<AtomicBool>,
    pub backend: Backend,
    /// Tells the main thread whether this worker is ready to serve, or why it can't.
    pub started: std::sync::mpsc::Sender<Result<(), String>>,
    /// The main thread's answer once every worker is ready: serve (true) or stop. No
    /// worker accepts before all have their reactor: one that could not set up after
    /// others took connections would otherwise stop a server already serving.
    pub go: std::sync::mpsc::Receiver<bool>,
}

/// Which reactor moves the bytes (`io-backend` directive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// io_uring where the kernel allows it, else epoll.
    Auto,
    IoUring,
    Epoll,
}

/// What a reactor saw while the loop waited.
pub enum Happening {
    /// Another thread woke the loop: a script finished, a client was killed or has
    /// pushed output.
    Wake,
    /// Readiness: listener `n` has connections waiting.
    Acceptable(usize),
    /// Completions: a connection was accepted.
    Accepted(Socket),
    /// Readiness on a connection's socket.
    Ready { token: usize, readable: bool, writable: bool, peer_closed: bool },
    /// Completions: `len` bytes arrived for the connection, in the reactor's `buffer`.
    Received { token: usize, generation: u32, buffer: u16, len: usize },
    /// Completions: the peer ended its input (`error`: the receive failed instead).
    ReceiveEnded { token: usize, generation: u32, error: bool },
    /// Completions: the connection's receive stopped (out of buffers) and must be armed again.
    ReceiveStopped { token: usize, generation: u32 },
    /// Completions: a send finished.
    Sent { token: usize, generation: u32, result: io::Result<usize> },
}

/// Moves bytes between the sockets and the connections.
pub trait Reactor {
    /// Waits until something happens or `timeout` passes, appending what happened.
    fn wait(&mut self, timeout: Duration, happenings: &mut Vec<Happening>) -> io::Result<()>;
    /// Readiness: accepts one waiting connection from listener `n`.
    fn accept(&mut self, listener: usize) -> io::Result<Socket>;
    /// Starts serving a new connection's socket.
    fn watch(&mut self, socket: Socket, token: usize) -> io::Result<Io>;
    /// Completions: the bytes of a `Received`.
    fn received(&self, buffer: u16, len: usize) -> &[u8];
    /// After a connection's requests ran: sends its output and renews its interest, or
    /// closes it. Returns true when the connection is done and must be removed.
    fn settle(&mut self, conn: &mut Connection, token: usize, next: Next) -> bool;
    /// Wakes this worker's loop from another thread.
    fn waker(&self) -> Arc<dyn Fn() + Send + Sync>;
    /// At shutdown: sends what it can of the pending output.
    fn finish(&mut self, engine: &Engine, conns: &mut Slab<Connection>);
    /// The listening sockets it watches.
    fn listeners(&self) -> &[Listener];
    /// Watches `listeners` instead of the ones it had (which stop being watched).
    fn replace_listeners(&mut self, listeners: Vec<Listener>) -> io::Result<()>;
}

/// Refuses new clients from now on, on every worker (the sockets are shared).
fn stop_listening<R: Reactor>(reactor: &R) {
    for listener in reactor.listeners() {
        listener.stop_listening();
    }
}

/// The connections waiting for something other than input.
#[derive(Default)]
struct Waiting {
    /// Held by CLIENT PAUSE.
    paused: Vec<usize>,
    /// Blocked in BLPOP & co.
    blocked: Vec<usize>,
    /// Replies waiting for this turn's AOF group commit.
    deferred: Vec<usize>,
}

/// What handling an event may change, lent as one piece (also to a busy script's hook).
struct LoopState<'a> {
    conns: &'a mut Slab<Connection>,
    waiting: &'a mut Waiting,
    scripts: &'a ScriptQueue,
    waker: &'a Arc<dyn Fn() + Send + Sync>,
}

/// The worker's loop, lent to a script it runs (quince_engine::ScriptService).
struct LoopService<'w, 'a, R: Reactor> {
    worker: &'w Worker,
    reactor: &'w mut R,
    state: &'w mut LoopState<'a>,
    limits: &'w Limits,
    happenings: &'w mut Vec<Happening>,
    /// The connection whose command runs the script.
    token: usize,
}

impl<R: Reactor> LoopService<'_, '_, R> {
    /// Handles what happened within `timeout`.
    fn handle_events(&mut self, timeout: Duration) {
        self.happenings.clear();
        if self.reactor.wait(timeout, self.happenings).is_ok() {
            for happening in self.happenings.drain(..) {
                self.worker.on_happening(happening, self.reactor, self.state, self.limits);
            }
        }
    }

    fn stopping(&self) -> bool {
        self.worker.stop.load(Ordering::Relaxed) || self.worker.engine.shutdown_requested()
    }
}

impl<R: Reactor> ScriptService for LoopService<'_, '_, R> {
    fn serve(&mut self) -> bool {
        // A zero timeout: this only collects what already happened.
        self.handle_events(Duration::ZERO);
        self.stopping()
    }

    fn debug_link(&self) -> bool {
        self.state.conns.contains(self.token)
    }

    fn debug_send(&mut self, bytes: &[u8]) -> bool {
        let engine = &self.worker.engine;
        self.state.conns.get_mut(self.token).is_some_and(|conn| conn.send_now(engine, bytes))
    }

    fn debug_receive(&mut self) -> Option<Vec<u8>> {
        loop {
            let conn = self.state.conns.get_mut(self.token)?;
            let input = conn.take_unread_input();
            if !input.is_empty() {
                return Some(input);
            }
            if conn.closing || conn.close_pending || self.stopping() {
                return None;
            }
            // The other connections are served meanwhile (they get BUSY).
            self.handle_events(Duration::from_millis(100));
        }
    }
}

/// Settings read once per loop turn (cheap to copy, live-changeable later via CONFIG SET).
struct Limits {
    maxclients: u64,
    timeout_s: u64,
    protected: bool,
    query_buffer_limit: usize,
    max_bulk_len: i64,
}

impl Limits {
    fn read(engine: &Engine) -> Self {
        let c = engine.config.read();
        Self {
            maxclients: c.get_int("maxclients") as u64,
            timeout_s: c.get_int("timeout") as u64,
            // Redis 7: while the default user takes no password.
            protected: c.get_bool("protected-mode")
                && engine.acl.default_user.rules().has(quince_engine::acl::rules::user_flags::NOPASS),
            query_buffer_limit: c.get_int("client-query-buffer-limit") as usize,
            max_bulk_len: c.get_int("proto-max-bulk-len"),
        }
    }
}

impl Worker {
    pub fn run(mut self) -> io::Result<()> {
        let mut listeners = std::mem::take(&mut self.listeners);
        if self.backend != Backend::Epoll {
            match uring::RingReactor::new(listeners) {
                Ok(ring) => {
                    self.engine.server.write().multiplexing_api = "io_uring";
                    return self.serve_when_all_ready(ring);
                }
                Err((e, _)) if self.backend == Backend::IoUring => {
                    let why = format!("io_uring refused (io-backend io_uring): {e}");
                    let _ = self.started.send(Err(why.clone()));
                    return Err(io::Error::new(e.kind(), why));
                }
                Err((e, given_back)) => {
                    if self.index == 0 {
                        log(Level::Notice, &format!("io_uring unavailable ({e}): serving connections with epoll"));
                    }
                    listeners = given_back;
                }
            }
        }
        match epoll::EpollReactor::new(listeners) {
            Ok(reactor) => self.serve_when_all_ready(reactor),
            Err(e) => {
                let _ = self.started.send(Err(format!("epoll: {e}")));
                Err(e)
            }
        }
    }

    fn serve_when_all_ready<R: Reactor>(&self, reactor: R) -> io::Result<()> {
        // Before any worker serves: one that accepts first must see every other as a
        // worker to hand connections to (a late one would get none of the first burst).
        self.balancer.ready(self.index, reactor.waker());
        let _ = self.started.send(Ok(()));
        if self.go.recv().unwrap_or(false) {
            self.serve(reactor)
        } else {
            Ok(())
        }
    }

    fn serve<R: Reactor>(&self, mut reactor: R) -> io::Result<()> {
        let scripts = ScriptQueue::default();
        let waker = reactor.waker();
        let mut happenings: Vec<Happening> = Vec::with_capacity(1024);
        let mut conns: Slab<Connection> = Slab::new();
        let mut last_sweep = Instant::now();
        let mut last_limit_check = Instant::now();
        let mut waiting = Waiting::default();
        let mut next_deadline_ms: Option<i64> = None;
        let mut listener_generation = self.listener_generation;
        while !self.stop.load(Ordering::Relaxed) {
            if self.listening.generation() != listener_generation {
                // CONFIG SET port / bind replaced the listening sockets.
                match self.listening.clones() {
                    Ok((generation, listeners)) => {
                        listener_generation = generation;
                        if let Err(e) = reactor.replace_listeners(listeners) {
                            log(Level::Warning, &format!("Moving to the new listening sockets: {e}"));
                        }
                    }
                    Err(e) => log(Level::Warning, &format!("Cloning the new listening sockets: {e}")),
                }
            }
            // Held clients are retried often, so they resume promptly when a pause ends.
            let mut timeout = if waiting.paused.is_empty() { POLL_TIMEOUT } else { Duration::from_millis(5) };
            if let Some(deadline) = next_deadline_ms {
                let left = (deadline - self.engine.clock.now_ms()).max(0) as u64;
                timeout = timeout.min(Duration::from_millis(left));
            }
            happenings.clear();
            if let Err(e) = reactor.wait(timeout, &mut happenings) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // The reactor keeps what the kernel may still use before the connections go.
                reactor.finish(&self.engine, &mut conns);
                return Err(e);
            }
            let limits = Limits::read(&self.engine);
            let mut state = LoopState { conns: &mut conns, waiting: &mut waiting, scripts: &scripts, waker: &waker };
            for happening in happenings.drain(..) {
                self.on_happening(happening, &mut reactor, &mut state, &limits);
            }
            self.run_scripts(&mut reactor, &mut state, &limits);
            next_deadline_ms = None;
            for token in std::mem::take(&mut state.waiting.blocked) {
                let Some(conn) = state.conns.get_mut(token) else { continue };
                let (next, deadline) = conn.poll_blocked(&self.engine, self.engine.clock.now_ms());
                if conn.is_blocked() {
                    if let Some(d) = deadline {
                        next_deadline_ms = Some(next_deadline_ms.map_or(d, |n: i64| n.min(d)));
                    }
                }
                // Still blocked, or held by CLIENT PAUSE after the wait: noted again here.
                self.after_event(&mut reactor, &mut state, token, next);
            }
            for token in std::mem::take(&mut state.waiting.paused) {
                let Some(conn) = state.conns.get_mut(token) else { continue };
                if !conn.paused {
                    continue;
                }
                let next = conn.resume(&self.engine);
                self.after_event(&mut reactor, &mut state, token, next);
            }
            // Scripts the resumed and served connections met.
            self.run_scripts(&mut reactor, &mut state, &limits);
            // One group commit for every connection whose replies waited for it.
            if !state.waiting.deferred.is_empty() {
                if let Some(layer) = self.engine.persistence() {
                    // An error leaves the replies waiting: `flush` tells each one.
                    let _ = layer.make_durable();
                }
                for token in std::mem::take(&mut state.waiting.deferred) {
                    let Some(conn) = state.conns.get_mut(token) else { continue };
                    if conn.flush_deferred {
                        let next = conn.flush(&self.engine);
                        if conn.flush_deferred {
                            state.waiting.deferred.push(token);
                        }
                        self.settle(&mut reactor, state.conns, token, next);
                    }
                }
            }
            if self.engine.shutdown_requested() {
                break;
            }
            if last_limit_check.elapsed() >= LIMIT_CHECK_PERIOD {
                last_limit_check = Instant::now();
                self.close_over_output_limit(&mut reactor, &mut conns);
            }
            if limits.timeout_s > 0 && last_sweep.elapsed() >= Duration::from_secs(1) {
                last_sweep = Instant::now();
                self.close_idle(&mut reactor, &mut conns, limits.timeout_s);
            }
        }
        // Refuse new clients before the connections close (SHUTDOWN's client among them).
        if self.engine.shutdown_requested() {
            stop_listening(&reactor);
        }
        reactor.finish(&self.engine, &mut conns);
        Ok(())
    }

    /// Handles one thing the reactor saw.
    fn on_happening<R: Reactor>(
        &self,
        happening: Happening,
        reactor: &mut R,
        state: &mut LoopState<'_>,
        limits: &Limits,
    ) {
        let conns = &mut *state.conns;
        let (token, next) = match happening {
            Happening::Wake => {
                self.serve_wakeups(reactor, conns);
                for socket in self.balancer.take_inbox(self.index) {
                    self.admit_here(socket, reactor, state, limits);
                }
                return;
            }
            Happening::Acceptable(listener) => {
                self.accept_all(listener, reactor, state, limits);
                return;
            }
            Happening::Accepted(socket) => {
                self.admit(socket, reactor, state, limits);
                return;
            }
            Happening::Ready { token, readable, writable, peer_closed } => {
                let Some(conn) = conns.get_mut(token) else { return };
                let mut next = Next::Keep;
                if readable {
                    next = conn.on_readable(&self.engine, limits.query_buffer_limit, peer_closed);
                }
                if next == Next::Keep && writable && conn.wants_writable {
                    next = conn.flush(&self.engine);
                }
                (token, next)
            }
            Happening::Received { token, generation, buffer, len } => {
                let Some(conn) = ring_conn(conns, token, generation) else { return };
                let data = reactor.received(buffer, len);
                (token, conn.on_received(&self.engine, data, limits.query_buffer_limit))
            }
            Happening::ReceiveEnded { token, generation, error } => {
                let Some(conn) = ring_conn(conns, token, generation) else { return };
                conn.receive_stopped();
                (token, if error { Next::CloseNow } else { conn.on_peer_closed(&self.engine) })
            }
            Happening::ReceiveStopped { token, generation } => {
                let Some(conn) = ring_conn(conns, token, generation) else { return };
                // Settling arms it again.
                conn.receive_stopped();
                (token, if conn.closing { Next::Close } else { Next::Keep })
            }
            Happening::Sent { token, generation, result } => {
                let Some(conn) = ring_conn(conns, token, generation) else { return };
                match result {
                    Ok(n) => {
                        conn.sent(&self.engine, n);
                        (token, if conn.closing { Next::Close } else { Next::Keep })
                    }
                    Err(_) => {
                        conn.send_failed();
                        (token, Next::CloseNow)
                    }
                }
            }
        };
        self.after_event(reactor, state, token, next);
    }

    /// The common end of every path that ran a connection's requests: notes whether it
    /// now waits (paused, blocked, for the group commit) and settles it.
    fn after_event<R: Reactor>(&self, reactor: &mut R, state: &mut LoopState<'_>, token: usize, next: Next) {
        let conn = &mut state.conns[token];
        let next = if conn.client.handle.is_killed() { conn.last_words(&self.engine) } else { next };
        remember(&mut state.waiting.paused, token, conn.paused);
        remember(&mut state.waiting.blocked, token, conn.is_blocked());
        if conn.flush_deferred {
            state.waiting.deferred.push(token);
        }
        if self.engine.shutdown_requested() {
            // SHUTDOWN ran: refuse new clients before its client sees its connection end.
            stop_listening(reactor);
        }
        self.settle(reactor, state.conns, token, next);
    }

    /// Runs the queued script commands, in order, on this thread. While one is busy, its
    /// count hook calls back here to serve the other connections (`LoopService::serve`);
    /// the Lua debugger talks to its client through here too.
    fn run_scripts<R: Reactor>(&self, reactor: &mut R, state: &mut LoopState<'_>, limits: &Limits) {
        let mut reply = Vec::new();
        let mut happenings = Vec::new();
        while let Some(mut job) = state.scripts.pop() {
            {
                let mut service = LoopService {
                    worker: self,
                    reactor: &mut *reactor,
                    state: &mut *state,
                    limits,
                    happenings: &mut happenings,
                    token: job.token,
                };
                scripts::run(&self.engine, &mut job, &mut reply, &mut service);
            }
            state.scripts.recycle(job.args);
            let Some(conn) = state.conns.get_mut(job.token) else { continue };
            let next = conn.finish_script(&self.engine, job.client, &reply);
            self.after_event(reactor, state, job.token, next);
        }
    }

    /// Another thread killed some of our clients or queued output for them.
    fn serve_wakeups<R: Reactor>(&self, reactor: &mut R, conns: &mut Slab<Connection>) {
        let tokens: Vec<usize> = conns.iter().map(|(t, _)| t).collect();
        for token in tokens {
            let conn = &mut conns[token];
            let next = if conn.client.handle.is_killed() {
                conn.last_words(&self.engine)
            } else {
                let pushed = conn.client.handle.take_pushed();
                if pushed.is_empty() {
                    continue;
                }
                conn.queue_output(&pushed);
                conn.flush(&self.engine)
            };
            self.settle(reactor, conns, token, next);
        }
    }

    /// Hands the connection to the reactor after an event, and forgets it once closed.
    fn settle<R: Reactor>(&self, reactor: &mut R, conns: &mut Slab<Connection>, token: usize, next: Next) {
        let conn = &mut conns[token];
        if next != Next::Keep && conn.script_running {
            // The script owns the client: close when it gives it back (finish_script).
            conn.close_pending = true;
            conn.closing = true;
            return;
        }
        if reactor.settle(conn, token, next) {
            self.engine.unregister_client(&conn.client);
            conns.remove(token);
            self.balancer.released(self.index);
            self.engine.stats.connected_clients.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Readiness: accepts every connection waiting on listener `n`.
    fn accept_all<R: Reactor>(&self, listener: usize, reactor: &mut R, state: &mut LoopState<'_>, limits: &Limits) {
        loop {
            match reactor.accept(listener) {
                Ok(socket) => self.admit(socket, reactor, state, limits),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A listener shut down at shutdown (`stop_listening`) accepts no more.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return,
                Err(e) => {
                    log(Level::Warning, &format!("Accepting client connection: {e}"));
                    return;
                }
            }
        }
    }

    /// A connection this worker accepted: taken in here, or handed to a worker owning fewer.
    fn admit<R: Reactor>(&self, socket: Socket, reactor: &mut R, state: &mut LoopState<'_>, limits: &Limits) {
        if let Some(socket) = self.balancer.place(self.index, socket) {
            self.admit_here(socket, reactor, state, limits);
        }
    }

    /// Takes a new connection in (counted as this worker's already), or turns it away with
    /// Redis's error.
    fn admit_here<R: Reactor>(&self, socket: Socket, reactor: &mut R, state: &mut LoopState<'_>, limits: &Limits) {
        if !self.take_in(socket, reactor, state, limits) {
            self.balancer.released(self.index);
        }
    }

    /// The work of `admit_here`: false if the connection was not taken in.
    fn take_in<R: Reactor>(&self, socket: Socket, reactor: &mut R, state: &mut LoopState<'_>, limits: &Limits) -> bool {
        let conns = &mut *state.conns;
        // A TCP peer that is already gone has no address: nothing to serve.
        let Ok(peer) = socket.peer_addr() else { return false };
        let stats = &self.engine.stats;
        stats.total_connections_received.fetch_add(1, Ordering::Relaxed);
        if let Some(refusal) = refusal(limits, stats.connected_clients.load(Ordering::Relaxed), peer.as_ref()) {
            stats.rejected_connections.fetch_add(1, Ordering::Relaxed);
            match socket {
                // Over TLS, after the handshake (see `TlsSocket::refuse`).
                Socket::Tls(tls) => tls.refuse(refusal),
                // Best effort, as Redis does: the socket is fresh, so this rarely blocks.
                socket => drop(io::Write::write(&mut &socket, refusal.as_bytes())),
            }
            return false;
        }
        socket.set_nodelay();
        let unix = socket.is_unix();
        let (addr, laddr) = match peer {
            Some(peer) => (peer.to_string(), socket.local_addr().map(|a| a.to_string()).unwrap_or_default()),
            // Redis names both ends of a Unix socket connection `<unixsocket>:0`.
            None => {
                let path = format!("{}:0", self.engine.config.read().get("unixsocket").unwrap_or(""));
                (path.clone(), path)
            }
        };
        let conn_info = ConnInfo { addr, laddr, fd: std::os::fd::AsRawFd::as_raw_fd(&socket) };
        let entry = conns.vacant_entry();
        let token = entry.key();
        let Ok(io) = reactor.watch(socket, token) else { return false };
        stats.connected_clients.fetch_add(1, Ordering::Relaxed);
        let client = self.engine.register_client(conn_info);
        if unix {
            client.handle.set_flag(quince_engine::clients::flag::UNIX_SOCKET, true);
        }
        let waker = Arc::clone(state.waker);
        client.handle.set_waker(Box::new(move || waker()));
        log(Level::Verbose, &format!("Accepted {} on worker {}", client.handle.conn.addr, self.index));
        entry.insert(Connection::new(io, client, limits.max_bulk_len, token, state.scripts.clone()));
        // Completions: the first receive is armed here (a connection settling closed is
        // released by `settle`).
        self.settle(reactor, conns, token, Next::Keep);
        true
    }

    /// Clients over their class's soft output limit for too long are closed even when no new
    /// output arrives to trigger the check (Redis's clientsCron does the same); so are
    /// replicas, whose stream other threads queue.
    fn close_over_output_limit<R: Reactor>(&self, reactor: &mut R, conns: &mut Slab<Connection>) {
        let now_ms = self.engine.clock.now_ms();
        let over: Vec<usize> = conns
            .iter()
            .filter(|(_, c)| {
                let handle = &c.client.handle;
                self.engine.output_limit_reached(handle, handle.pending_output(), now_ms)
            })
            .map(|(t, _)| t)
            .collect();
        for token in over {
            log(Level::Warning, "Client scheduled to be closed ASAP for overcoming of output buffer limits.");
            self.settle(reactor, conns, token, Next::CloseNow);
        }
    }

    fn close_idle<R: Reactor>(&self, reactor: &mut R, conns: &mut Slab<Connection>, timeout_s: u64) {
        let idle: Vec<usize> = conns
            .iter()
            .filter(|(_, c)| c.last_interaction.elapsed() > Duration::from_secs(timeout_s))
            .map(|(t, _)| t)
            .collect();
        for token in idle {
            log(Level::Verbose, "Closing idle client");
            self.settle(reactor, conns, token, Next::CloseNow);
        }
    }
}

/// The connection a completion is for, unless it was closed (and its slot perhaps reused)
/// since the operation was submitted.
pub(crate) fn ring_conn(conns: &mut Slab<Connection>, token: usize, generation: u32) -> Option<&mut Connection> {
    let conn = conns.get_mut(token)?;
    match &conn.io {
        Io::Ring(ring) if ring.generation == generation => Some(conn),
        _ => None,
    }
}

/// Adds `token` to a list of waiting connections (held by CLIENT PAUSE, blocked on keys)
/// when `waits`, once: every path that runs a connection's requests ends here.
fn remember(list: &mut Vec<usize>, token: usize, waits: bool) {
    if waits && !list.contains(&token) {
        list.push(token);
    }
}

/// Why a new connection is turned away, as the bytes Redis would send, if it is.
/// `peer` is None for a Unix socket client, which is always local.
/// Redis 7.0's reply to a non-local client in protected mode, byte for byte (its typos
/// included: clients and scripts match on it).
const PROTECTED_MODE_DENIED: &str = "-DENIED Redis is running in protected mode because protected mode is enabled and \
no password is set for the default user. In this mode connections are only accepted from the loopback interface. \
If you want to connect from external computers to Redis you may adopt one of the following solutions: \
1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by \
connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible \
from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just \
disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', \
and then restarting the server. 3) If you started the server manually just for testing, restart it with the \
'--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to \
do one of the above things in order for the server to start accepting connections from the outside.\r\n";

fn is_local_peer(peer: &SocketAddr) -> bool {
    let ip = peer.ip().to_canonical();
    ip == std::net::IpAddr::from([127, 0, 0, 1]) || ip == std::net::IpAddr::from(std::net::Ipv6Addr::LOCALHOST)
}

fn refusal(limits: &Limits, connected: u64, peer: Option<&SocketAddr>) -> Option<&'static str> {
    if connected >= limits.maxclients {
        return Some("-ERR max number of clients reached\r\n");
    }
    // Redis's islocalClient: a Unix socket, or a peer at exactly 127.0.0.1 or ::1.
    if limits.protected && peer.is_some_and(|p| !is_local_peer(p)) {
        return Some(PROTECTED_MODE_DENIED);
    }
    None
}
