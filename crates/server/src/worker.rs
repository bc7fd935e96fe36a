//! A worker thread: one event loop (epoll via mio) owning its connections and executing
//! their commands inline under the engine's shard locks. Every worker also polls the
//! shared listening sockets, so whichever worker is free accepts the next connection.

use std::io::{self, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token, Waker};
use slab::Slab;

use quince_engine::{ConnInfo, Engine};

use crate::connection::{Connection, Next};
use crate::log::{log, Level};

pub mod script_runner;
use script_runner::{Finished, Offload};

/// Listener tokens come after every possible connection token.
const LISTENER_BASE: usize = usize::MAX / 2;
/// Woken by other threads: a connection of ours was killed or has pushed output.
const WAKER: Token = Token(LISTENER_BASE - 1);
const POLL_TIMEOUT: Duration = Duration::from_millis(100);
/// How often subscribers' output is checked against the soft limit without new messages.
const LIMIT_CHECK_PERIOD: Duration = Duration::from_millis(100);

pub struct Worker {
    pub index: usize,
    pub engine: Arc<Engine>,
    pub listeners: Vec<TcpListener>,
    pub stop: Arc<AtomicBool>,
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
            protected: c.get_bool("protected-mode") && c.get("requirepass").unwrap_or("").is_empty(),
            query_buffer_limit: c.get_int("client-query-buffer-limit") as usize,
            max_bulk_len: c.get_int("proto-max-bulk-len"),
        }
    }
}

impl Worker {
    pub fn run(mut self) -> io::Result<()> {
        let mut poll = Poll::new()?;
        for (i, listener) in self.listeners.iter_mut().enumerate() {
            poll.registry().register(listener, Token(LISTENER_BASE + i), Interest::READABLE)?;
        }
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<Finished>();
        let offload = Offload { engine: Arc::clone(&self.engine), done: done_tx, waker: Arc::clone(&waker) };
        let mut events = Events::with_capacity(1024);
        let mut conns: Slab<Connection> = Slab::new();
        let mut last_sweep = Instant::now();
        let mut last_limit_check = Instant::now();
        let mut paused: Vec<usize> = Vec::new();
        // Connections blocked in BLPOP & co, and the nearest deadline among them.
        let mut blocked: Vec<usize> = Vec::new();
        // Connections whose replies wait for this turn's AOF group commit.
        let mut deferred: Vec<usize> = Vec::new();
        let mut next_deadline_ms: Option<i64> = None;
        while !self.stop.load(Ordering::Relaxed) {
            // Held clients are retried often, so they resume promptly when a pause ends.
            let mut timeout = if paused.is_empty() { POLL_TIMEOUT } else { Duration::from_millis(5) };
            if let Some(deadline) = next_deadline_ms {
                let left = (deadline - self.engine.clock.now_ms()).max(0) as u64;
                timeout = timeout.min(Duration::from_millis(left));
            }
            if let Err(e) = poll.poll(&mut events, Some(timeout)) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            let limits = Limits::read(&self.engine);
            for event in events.iter() {
                let token = event.token().0;
                if event.token() == WAKER {
                    // Scripts first: a killed client gets its script's reply before closing.
                    for done in done_rx.try_iter() {
                        let Some(conn) = conns.get_mut(done.token) else { continue };
                        let next = conn.finish_script(&self.engine, done.client, &done.reply);
                        remember(&mut paused, done.token, conn.paused);
                        remember(&mut blocked, done.token, conn.is_blocked());
                        self.settle(&poll, &mut conns, done.token, next);
                    }
                    self.serve_wakeups(&poll, &mut conns);
                    continue;
                }
                if token >= LISTENER_BASE {
                    self.accept_all(token - LISTENER_BASE, &poll, &mut conns, &limits, &offload);
                    continue;
                }
                let Some(conn) = conns.get_mut(token) else { continue };
                let mut next = Next::Keep;
                if event.is_readable() || event.is_read_closed() || event.is_error() {
                    let peer_closed = event.is_read_closed() || event.is_error();
                    next = conn.on_readable(&self.engine, limits.query_buffer_limit, peer_closed);
                }
                if next == Next::Keep && event.is_writable() && conn.wants_writable {
                    next = conn.flush(&self.engine);
                }
                if conn.client.handle.is_killed() {
                    next = Next::Close;
                }
                remember(&mut paused, token, conn.paused);
                remember(&mut blocked, token, conn.is_blocked());
                if conn.flush_deferred {
                    deferred.push(token);
                }
                self.settle(&poll, &mut conns, token, next);
            }
            // One group commit for every connection whose replies waited for it.
            if !deferred.is_empty() {
                if let Some(layer) = self.engine.persistence() {
                    layer.make_durable();
                }
                for token in std::mem::take(&mut deferred) {
                    let Some(conn) = conns.get_mut(token) else { continue };
                    if conn.flush_deferred {
                        let next = conn.flush(&self.engine);
                        self.settle(&poll, &mut conns, token, next);
                    }
                }
            }
            next_deadline_ms = None;
            for token in std::mem::take(&mut blocked) {
                let Some(conn) = conns.get_mut(token) else { continue };
                let now_ms = self.engine.clock.now_ms();
                let (next, deadline) = conn.poll_blocked(&self.engine, now_ms);
                // The requests after the wait may be held by CLIENT PAUSE.
                remember(&mut paused, token, conn.paused);
                if conn.is_blocked() {
                    blocked.push(token);
                    if let Some(d) = deadline {
                        next_deadline_ms = Some(next_deadline_ms.map_or(d, |n: i64| n.min(d)));
                    }
                }
                self.settle(&poll, &mut conns, token, next);
            }
            for token in std::mem::take(&mut paused) {
                let Some(conn) = conns.get_mut(token) else { continue };
                if !conn.paused {
                    continue;
                }
                let next = conn.resume(&self.engine);
                if conn.paused {
                    paused.push(token);
                }
                self.settle(&poll, &mut conns, token, next);
            }
            if self.engine.shutdown_requested() {
                break;
            }
            if last_limit_check.elapsed() >= LIMIT_CHECK_PERIOD {
                last_limit_check = Instant::now();
                self.close_over_output_limit(&poll, &mut conns);
            }
            if limits.timeout_s > 0 && last_sweep.elapsed() >= Duration::from_secs(1) {
                last_sweep = Instant::now();
                self.close_idle(&poll, &mut conns, limits.timeout_s);
            }
        }
        for (_, conn) in conns.iter_mut() {
            let _ = conn.flush(&self.engine);
        }
        Ok(())
    }

    /// Another thread killed some of our clients or queued output for them.
    fn serve_wakeups(&self, poll: &Poll, conns: &mut Slab<Connection>) {
        let tokens: Vec<usize> = conns.iter().map(|(t, _)| t).collect();
        for token in tokens {
            let conn = &mut conns[token];
            let next = if conn.client.handle.is_killed() {
                // A client killing itself still gets its reply first.
                let _ = conn.flush(&self.engine);
                Next::Close
            } else {
                let pushed = conn.client.handle.take_pushed();
                if pushed.is_empty() {
                    continue;
                }
                conn.queue_output(&pushed);
                conn.flush(&self.engine)
            };
            self.settle(poll, conns, token, next);
        }
    }

    /// Re-arms interest after an event, or closes the connection.
    fn settle(&self, poll: &Poll, conns: &mut Slab<Connection>, token: usize, next: Next) {
        let conn = &mut conns[token];
        if next == Next::Close && conn.script_running {
            // The runner owns the client: close when it hands it back (finish_script).
            conn.close_pending = true;
            conn.closing = true;
            return;
        }
        if next == Next::Close {
            let _ = poll.registry().deregister(&mut conn.stream);
            self.engine.unregister_client(&conn.client);
            conns.remove(token);
            self.engine.stats.connected_clients.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        // Edge-triggered: the registration stays armed; it changes only when writability
        // interest does, or when input was left unread.
        let must_rearm = conn.rearm && !conn.paused;
        if conn.wants_writable == conn.registered_writable && !must_rearm {
            return;
        }
        conn.registered_writable = conn.wants_writable;
        conn.rearm = false;
        let interest = if conn.wants_writable { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
        let _ = poll.registry().reregister(&mut conn.stream, Token(token), interest);
    }

    fn accept_all(
        &self,
        listener: usize,
        poll: &Poll,
        conns: &mut Slab<Connection>,
        limits: &Limits,
        offload: &Offload,
    ) {
        loop {
            let (mut stream, peer) = match self.listeners[listener].accept() {
                Ok(pair) => pair,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    log(Level::Warning, &format!("Accepting client connection: {e}"));
                    return;
                }
            };
            let stats = &self.engine.stats;
            stats.total_connections_received.fetch_add(1, Ordering::Relaxed);
            if let Some(refusal) = refusal(limits, stats.connected_clients.load(Ordering::Relaxed), &peer) {
                stats.rejected_connections.fetch_add(1, Ordering::Relaxed);
                // Best effort, as Redis does: the socket is fresh, so this rarely blocks.
                let _ = stream.write(refusal.as_bytes());
                continue;
            }
            let _ = stream.set_nodelay(true);
            let entry = conns.vacant_entry();
            let token = entry.key();
            if poll.registry().register(&mut stream, Token(token), Interest::READABLE).is_err() {
                continue;
            }
            stats.connected_clients.fetch_add(1, Ordering::Relaxed);
            let conn_info = ConnInfo {
                addr: peer.to_string(),
                laddr: stream.local_addr().map(|a| a.to_string()).unwrap_or_default(),
                fd: std::os::fd::AsRawFd::as_raw_fd(&stream),
            };
            let client = self.engine.register_client(conn_info);
            let waker = offload.waker.clone();
            client.handle.set_waker(Box::new(move || {
                let _ = waker.wake();
            }));
            entry.insert(Connection::new(stream, client, limits.max_bulk_len, token, offload.clone()));
            log(Level::Verbose, &format!("Accepted {peer} on worker {}", self.index));
        }
    }

    /// Subscribers over the pubsub soft output limit for too long are closed even when no
    /// new message arrives to trigger the check (Redis's clientsCron does the same).
    fn close_over_output_limit(&self, poll: &Poll, conns: &mut Slab<Connection>) {
        let now_ms = self.engine.clock.now_ms();
        let over: Vec<usize> = conns
            .iter()
            .filter(|(_, c)| self.engine.pubsub.output_limit_reached(&c.client.handle, now_ms))
            .map(|(t, _)| t)
            .collect();
        for token in over {
            log(Level::Warning, "Client closed for overcoming of output buffer limits.");
            self.settle(poll, conns, token, Next::Close);
        }
    }

    fn close_idle(&self, poll: &Poll, conns: &mut Slab<Connection>, timeout_s: u64) {
        let idle: Vec<usize> = conns
            .iter()
            .filter(|(_, c)| c.last_interaction.elapsed() > Duration::from_secs(timeout_s))
            .map(|(t, _)| t)
            .collect();
        for token in idle {
            log(Level::Verbose, "Closing idle client");
            self.settle(poll, conns, token, Next::Close);
        }
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
fn refusal(limits: &Limits, connected: u64, peer: &SocketAddr) -> Option<&'static str> {
    if connected >= limits.maxclients {
        return Some("-ERR max number of clients reached\r\n");
    }
    if limits.protected && !peer.ip().is_loopback() {
        return Some(
            "-DENIED Quince is running in protected mode because protected mode is enabled and \
             no password is set for the default user. In this mode connections are only accepted \
             from the loopback interface. Set a password (requirepass), or disable protected mode \
             (protected-mode no), or bind to the addresses you trust and restart.\r\n",
        );
    }
    None
}
