//! The completion reactor: one io_uring per worker (docs/threading.md, "io_uring").
//!
//! Every socket operation of a loop turn goes to the kernel in the one `io_uring_enter`
//! that also waits for the next completions: a receive armed once per connection
//! (multishot, into buffers the ring provides), one send per batch of replies, accepts
//! armed once per listener, and a read of the eventfd other threads wake us through. A
//! request and its reply cost no syscall of their own, where epoll costs a read and a
//! write each.
//!
//! Memory the kernel may still touch is never freed under it: received data lands in a
//! pool owned by the reactor, handed back only after the worker copied it out; the bytes
//! of a send in flight stay in the connection's `RingSocket` and, when the connection
//! closes first, in `orphans` until the send completes.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use io_uring::{cqueue, opcode, squeue, types, IoUring};
use slab::Slab;

use quince_engine::Engine;

use super::{Happening, Reactor};
use crate::connection::{Connection, Io, Next, RingSocket};
use crate::socket::{Listener, Socket};

/// Submission queue size; the completion queue is four times as large (and the kernel
/// keeps overflowing completions rather than dropping them).
const RING_ENTRIES: u32 = 1024;
/// Receive buffers: `BUFFER_COUNT` of `BUFFER_SIZE` bytes per worker. Each is copied into
/// its connection's read buffer in the turn it arrives and handed back at the next one,
/// so the pool only needs to cover one turn's receives; a connection that finds it empty
/// has its receive armed again next turn. The kernel takes them in turn, so every page of
/// the pool ends up resident: 512 KB per worker (at 128 × 16 KB, 2 MB per worker showed up
/// as 20 bytes per key when loading 100,000 hashes).
const BUFFER_SIZE: usize = 4 * 1024;
const BUFFER_COUNT: u16 = 128;
const BUFFER_GROUP: u16 = 0;

/// What a completion is for: the top byte of its user data. The rest holds the connection's
/// token (low 32 bits) and generation (24 bits), or the listener's index.
const RECEIVE: u64 = 1;
const SEND: u64 = 2;
const ACCEPT: u64 = 3;
const WAKE: u64 = 4;
/// Buffer hand-backs and cancellations report only failures, which need no action.
const QUIET: u64 = 5;
const GENERATION_MASK: u32 = (1 << 24) - 1;

/// The socket of a descriptor an accept completed with: TCP or Unix, as its own address
/// family says (a completion may come from a listener already replaced).
fn accepted_socket(fd: i32) -> Socket {
    // SAFETY: getsockname writes at most `len` bytes into the storage we pass.
    let family = unsafe {
        let mut addr: libc::sockaddr_storage = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        libc::getsockname(fd, &mut addr as *mut _ as *mut libc::sockaddr, &mut len);
        i32::from(addr.ss_family)
    };
    // SAFETY: the kernel just created this descriptor for us.
    unsafe {
        if family == libc::AF_UNIX {
            Socket::Unix(std::os::unix::net::UnixStream::from_raw_fd(fd))
        } else {
            Socket::Tcp(std::net::TcpStream::from_raw_fd(fd))
        }
    }
}

fn user_data(kind: u64, generation: u32, token: usize) -> u64 {
    (kind << 56) | (u64::from(generation & GENERATION_MASK) << 32) | (token as u64 & 0xffff_ffff)
}

pub struct RingReactor {
    ring: IoUring,
    /// The listening sockets the ring accepts on.
    listeners: Vec<Listener>,
    pool: Vec<u8>,
    /// Buffers handed out this turn, given back to the kernel at the next wait.
    lent: Vec<u16>,
    wake_fd: Arc<OwnedFd>,
    /// Where the eventfd's counter is read into.
    wake_count: Box<u64>,
    /// Bytes of sends still in flight for connections already closed, by user data.
    orphans: HashMap<u64, Vec<u8>>,
    next_generation: u32,
    completions: Vec<(u64, i32, u32)>,
    /// Completions taken off the queue early (to make room while submitting), handled at
    /// the next wait.
    backlog: Vec<(u64, i32, u32)>,
    /// Receives to arm at the next wait, after the buffers lent this turn are given back
    /// (armed before, they would find the pool empty): (fd, generation, token).
    receives_to_arm: Vec<(RawFd, u32, usize)>,
    /// Listeners whose accept failed (EMFILE...), and when to try again.
    accept_retry: Vec<(usize, Instant)>,
    /// Which set of listeners the armed accepts belong to (in their user data): bumped
    /// when CONFIG SET port / bind replaces them, so completions of the old set's accepts
    /// are told apart.
    listener_generation: u32,
}

/// How long a listener rests after its accept failed (a descriptor shortage does not end
/// at once; re-arming at once would spin).
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

impl RingReactor {
    /// Sets up the ring and checks, on a socket pair, that this kernel does everything
    /// the reactor relies on; an error (with the listeners given back) means the caller
    /// should fall back to epoll.
    pub fn new(listeners: Vec<Listener>) -> Result<Self, (io::Error, Vec<Listener>)> {
        let ring = match Self::ring() {
            Ok(ring) => ring,
            Err(e) => return Err((e, listeners)),
        };
        let wake_fd = match Self::eventfd() {
            Ok(fd) => fd,
            Err(e) => return Err((e, listeners)),
        };
        let mut reactor = Self {
            ring,
            listeners,
            pool: vec![0; BUFFER_SIZE * BUFFER_COUNT as usize],
            lent: Vec::new(),
            wake_fd,
            wake_count: Box::new(0),
            orphans: HashMap::new(),
            next_generation: 0,
            completions: Vec::with_capacity(1024),
            backlog: Vec::new(),
            receives_to_arm: Vec::new(),
            accept_retry: Vec::new(),
            listener_generation: 0,
        };
        if let Err(e) = reactor.provide_all().and_then(|()| reactor.self_test()) {
            return Err((e, std::mem::take(&mut reactor.listeners)));
        }
        reactor.arm_wake();
        for n in 0..reactor.listeners.len() {
            reactor.arm_accept(n);
        }
        Ok(reactor)
    }

    fn ring() -> io::Result<IoUring> {
        // Completions are produced only when the loop asks for them (defer_taskrun), and
        // only this thread submits: the kernel then skips work it does for shared rings.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_cqsize(RING_ENTRIES * 4)
            .build(RING_ENTRIES)
            .or_else(|_| IoUring::builder().setup_cqsize(RING_ENTRIES * 4).build(RING_ENTRIES))?;
        if !ring.params().is_feature_ext_arg() || !ring.params().is_feature_nodrop() {
            return Err(io::Error::new(io::ErrorKind::Unsupported, "kernel too old (no EXT_ARG or NODROP)"));
        }
        Ok(ring)
    }

    fn eventfd() -> io::Result<Arc<OwnedFd>> {
        // SAFETY: eventfd has no memory-safety preconditions; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor owned by nobody else.
        Ok(Arc::new(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn provide_all(&mut self) -> io::Result<()> {
        let entry =
            opcode::ProvideBuffers::new(self.pool.as_mut_ptr(), BUFFER_SIZE as i32, BUFFER_COUNT, BUFFER_GROUP, 0)
                .build()
                .user_data(user_data(QUIET, 0, 0));
        self.push(entry);
        self.ring.submit_and_wait(1)?;
        let result = self.ring.completion().next().map(|c| c.result());
        match result {
            Some(r) if r >= 0 => Ok(()),
            Some(r) => Err(io::Error::from_raw_os_error(-r)),
            None => Err(io::Error::other("no completion for the buffer pool")),
        }
    }

    /// A multishot receive into a provided buffer, on a socket pair: older kernels refuse
    /// it with EINVAL, or end it after one completion.
    fn self_test(&mut self) -> io::Result<()> {
        let (a, b) = std::os::unix::net::UnixStream::pair()?;
        let entry = opcode::RecvMulti::new(types::Fd(a.as_raw_fd()), BUFFER_GROUP).build().user_data(0);
        self.push(entry);
        io::Write::write_all(&mut &b, b"x")?;
        let ts = types::Timespec::new().sec(1);
        match self.ring.submitter().submit_with_args(1, &types::SubmitArgs::new().timespec(&ts)) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => {}
            Err(e) => return Err(e),
        }
        let first = self.ring.completion().next().map(|c| (c.result(), c.flags()));
        let outcome = match first {
            Some((1, flags)) if cqueue::more(flags) => {
                if let Some(bid) = cqueue::buffer_select(flags) {
                    self.lent.push(bid);
                }
                Ok(())
            }
            Some((r, _)) if r < 0 => Err(io::Error::from_raw_os_error(-r)),
            _ => Err(io::Error::new(io::ErrorKind::Unsupported, "multishot receive not supported")),
        };
        // End the test receive before the pair closes; its last completion is skipped.
        self.push(
            opcode::AsyncCancel::new(0).build().flags(squeue::Flags::SKIP_SUCCESS).user_data(user_data(QUIET, 0, 0)),
        );
        self.ring.submit()?;
        drop((a, b));
        outcome
    }

    /// Queues an entry, submitting first when the queue is full.
    fn push(&mut self, entry: squeue::Entry) {
        loop {
            // SAFETY: every entry refers to memory that outlives the operation: the pool,
            // `wake_count` and send buffers (owned by a connection or `orphans`).
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return;
            }
            if self.ring.submit().is_err() && self.set_completions_aside() == 0 {
                // The kernel refuses more while completions wait (EBUSY); with none to set
                // aside, give it a moment.
                std::thread::yield_now();
            }
        }
    }

    fn arm_wake(&mut self) {
        let ptr = &mut *self.wake_count as *mut u64 as *mut u8;
        let entry =
            opcode::Read::new(types::Fd(self.wake_fd.as_raw_fd()), ptr, 8).build().user_data(user_data(WAKE, 0, 0));
        self.push(entry);
    }

    fn arm_accept(&mut self, listener: usize) {
        let entry = opcode::AcceptMulti::new(types::Fd(self.listeners[listener].as_raw_fd()))
            // Non-blocking, so that a killed client's last words never stall the loop.
            .flags(libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK)
            .build()
            .user_data(user_data(ACCEPT, self.listener_generation, listener));
        self.push(entry);
    }

    fn arm_receive(&mut self, fd: RawFd, generation: u32, token: usize) {
        let entry = opcode::RecvMulti::new(types::Fd(fd), BUFFER_GROUP)
            .build()
            .user_data(user_data(RECEIVE, generation, token));
        self.push(entry);
    }

    fn cancel(&mut self, target: u64) {
        let entry = opcode::AsyncCancel::new(target)
            .build()
            .flags(squeue::Flags::SKIP_SUCCESS)
            .user_data(user_data(QUIET, 0, 0));
        self.push(entry);
    }

    /// Gives the buffers lent last turn back to the kernel.
    fn give_back_buffers(&mut self) {
        while let Some(bid) = self.lent.pop() {
            let addr = self.pool[bid as usize * BUFFER_SIZE..].as_mut_ptr();
            let entry = opcode::ProvideBuffers::new(addr, BUFFER_SIZE as i32, 1, BUFFER_GROUP, bid)
                .build()
                .flags(squeue::Flags::SKIP_SUCCESS)
                .user_data(user_data(QUIET, 0, 0));
            self.push(entry);
        }
    }

    /// Closes a connection's side of the ring: its receive is cancelled (the socket closes
    /// when that completes and the connection is dropped), its send's bytes kept until the
    /// send completes.
    ///
    /// The queue is submitted before returning: the caller then drops the socket, and an
    /// entry still queued that names its descriptor number would otherwise reach whatever
    /// socket is accepted next under that number (in any worker).
    fn forget(&mut self, ring: &mut RingSocket, token: usize, cut_send: bool) {
        let generation = ring.generation;
        self.receives_to_arm.retain(|&(_, g, t)| (g, t) != (generation, token));
        if ring.receiving {
            self.cancel(user_data(RECEIVE, generation, token));
            ring.receiving = false;
        }
        if ring.send_in_flight {
            let send = user_data(SEND, generation, token);
            self.orphans.insert(send, ring.take_in_flight());
            if cut_send {
                self.cancel(send);
            }
        }
        self.submit_now();
    }

    /// Arms the accepts whose rest is over; returns `timeout` shortened to the end of the
    /// nearest rest still running.
    fn rearm_rested_accepts(&mut self, timeout: Duration) -> Duration {
        let now = Instant::now();
        let (due, resting): (Vec<_>, Vec<_>) = self.accept_retry.drain(..).partition(|&(_, at)| at <= now);
        self.accept_retry = resting;
        for (listener, _) in due {
            self.arm_accept(listener);
        }
        let nearest = self.accept_retry.iter().map(|&(_, at)| at.saturating_duration_since(now)).min();
        nearest.map_or(timeout, |rest| timeout.min(rest))
    }

    /// Hands the queued entries to the kernel without waiting.
    fn submit_now(&mut self) {
        while let Err(e) = self.ring.submit() {
            if e.raw_os_error() != Some(libc::EBUSY) && e.raw_os_error() != Some(libc::EINTR) {
                crate::log::log(crate::log::Level::Warning, &format!("io_uring submit: {e}"));
                return;
            }
            self.set_completions_aside();
        }
    }

    /// Takes the completions waiting in the queue off it, to be handled at the next wait
    /// (the kernel refuses submissions while its completion queue overflows). Returns how
    /// many there were.
    fn set_completions_aside(&mut self) -> usize {
        let before = self.backlog.len();
        self.backlog.extend(self.ring.completion().map(|c| (c.user_data(), c.result(), c.flags())));
        self.backlog.len() - before
    }
}

fn error_of(result: i32) -> io::Error {
    io::Error::from_raw_os_error(-result)
}

impl Reactor for RingReactor {
    fn wait(&mut self, timeout: Duration, happenings: &mut Vec<Happening>) -> io::Result<()> {
        self.give_back_buffers();
        for (fd, generation, token) in std::mem::take(&mut self.receives_to_arm) {
            self.arm_receive(fd, generation, token);
        }
        let timeout = if self.accept_retry.is_empty() { timeout } else { self.rearm_rested_accepts(timeout) };
        let ts = types::Timespec::new().sec(timeout.as_secs()).nsec(timeout.subsec_nanos());
        match self.ring.submitter().submit_with_args(1, &types::SubmitArgs::new().timespec(&ts)) {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)) => {}
            Err(e) => return Err(e),
        }
        self.completions.clear();
        self.completions.append(&mut self.backlog);
        self.completions.extend(self.ring.completion().map(|c| (c.user_data(), c.result(), c.flags())));
        for i in 0..self.completions.len() {
            let (data, result, flags) = self.completions[i];
            let token = (data & 0xffff_ffff) as usize;
            let generation = ((data >> 32) as u32) & GENERATION_MASK;
            match data >> 56 {
                RECEIVE => {
                    if result > 0 {
                        let Some(buffer) = cqueue::buffer_select(flags) else { continue };
                        self.lent.push(buffer);
                        happenings.push(Happening::Received { token, generation, buffer, len: result as usize });
                        if !cqueue::more(flags) {
                            happenings.push(Happening::ReceiveStopped { token, generation });
                        }
                    } else if result == 0 {
                        happenings.push(Happening::ReceiveEnded { token, generation, error: false });
                    } else if result == -libc::ENOBUFS {
                        happenings.push(Happening::ReceiveStopped { token, generation });
                    } else if result != -libc::ECANCELED {
                        happenings.push(Happening::ReceiveEnded { token, generation, error: true });
                    }
                }
                SEND => {
                    if self.orphans.remove(&data).is_some() {
                        continue;
                    }
                    let result = if result >= 0 { Ok(result as usize) } else { Err(error_of(result)) };
                    happenings.push(Happening::Sent { token, generation, result });
                }
                // An accept of a replaced listener: a connection it took is served all the
                // same; it is not re-armed.
                ACCEPT if generation != self.listener_generation && result >= 0 => {
                    happenings.push(Happening::Accepted(accepted_socket(result)));
                }
                ACCEPT if generation != self.listener_generation => {}
                ACCEPT => {
                    if result >= 0 {
                        happenings.push(Happening::Accepted(accepted_socket(result)));
                        if !cqueue::more(flags) {
                            self.arm_accept(token);
                        }
                    } else if result == -libc::EINVAL {
                        // A listener shut down at shutdown (`stop_listening`): not re-armed.
                    } else if !cqueue::more(flags) {
                        // Once per rest, not once per attempt.
                        crate::log::log(
                            crate::log::Level::Warning,
                            &format!("Accepting client connection: {}", error_of(result)),
                        );
                        self.accept_retry.push((token, Instant::now() + ACCEPT_RETRY));
                    }
                }
                WAKE => {
                    happenings.push(Happening::Wake);
                    self.arm_wake();
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn accept(&mut self, _listener: usize) -> io::Result<Socket> {
        Err(io::ErrorKind::WouldBlock.into())
    }

    fn watch(&mut self, socket: Socket, _token: usize) -> io::Result<Io> {
        self.next_generation = (self.next_generation + 1) & GENERATION_MASK;
        Ok(Io::Ring(RingSocket::new(socket, self.next_generation)))
    }

    fn received(&self, buffer: u16, len: usize) -> &[u8] {
        let start = buffer as usize * BUFFER_SIZE;
        &self.pool[start..start + len.min(BUFFER_SIZE)]
    }

    fn settle(&mut self, conn: &mut Connection, token: usize, next: Next) -> bool {
        match next {
            Next::CloseNow => {
                if let Io::Ring(ring) = &mut conn.io {
                    self.forget(ring, token, true);
                }
                return true;
            }
            Next::Close => {
                conn.closing = true;
                if !conn.output_pending() {
                    if let Io::Ring(ring) = &mut conn.io {
                        self.forget(ring, token, false);
                    }
                    return true;
                }
            }
            Next::Keep => {}
        }
        let (closing, deferred) = (conn.closing, conn.flush_deferred);
        let Io::Ring(ring) = &mut conn.io else { return true };
        let (fd, generation) = (ring.socket.as_raw_fd(), ring.generation);
        if !ring.receiving && !closing {
            ring.receiving = true;
            self.receives_to_arm.push((fd, generation, token));
        }
        // Replies waiting for the AOF's group commit are sent once it is done (the worker
        // settles them again then): a send queued now could reach the kernel first.
        if deferred {
            return false;
        }
        if let Some((ptr, len)) = conn.start_send() {
            let entry = opcode::Send::new(types::Fd(fd), ptr, len)
                .flags(libc::MSG_NOSIGNAL)
                .build()
                .user_data(user_data(SEND, generation, token));
            self.push(entry);
        }
        false
    }

    fn waker(&self) -> Arc<dyn Fn() + Send + Sync> {
        let fd = Arc::clone(&self.wake_fd);
        Arc::new(move || {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to an eventfd we own; failure (the
            // counter is saturated) still leaves the loop woken.
            unsafe { libc::write(fd.as_raw_fd(), &one as *const u64 as *const libc::c_void, 8) };
        })
    }

    fn listeners(&self) -> &[Listener] {
        &self.listeners
    }

    fn replace_listeners(&mut self, listeners: Vec<Listener>) -> io::Result<()> {
        // The old set's accepts are cancelled (a TCP listener replaced was shut down, which
        // ends its accept anyway; a Unix one carries on in the new set).
        for index in 0..self.listeners.len() {
            self.cancel(user_data(ACCEPT, self.listener_generation, index));
        }
        self.accept_retry.clear();
        self.listener_generation = (self.listener_generation + 1) & GENERATION_MASK;
        self.listeners = listeners;
        for index in 0..self.listeners.len() {
            self.arm_accept(index);
        }
        Ok(())
    }

    fn finish(&mut self, engine: &Engine, conns: &mut Slab<Connection>) {
        // Sends what is queued, for up to 100 ms, then lets the rest go.
        let deadline = Instant::now() + Duration::from_millis(100);
        let mut happenings = Vec::new();
        loop {
            let mut pending = false;
            for (token, conn) in conns.iter_mut() {
                let _ = self.settle(conn, token, Next::Keep);
                pending |= conn.output_pending();
            }
            if !pending || Instant::now() >= deadline || self.wait(Duration::from_millis(10), &mut happenings).is_err()
            {
                break;
            }
            for happening in happenings.drain(..) {
                if let Happening::Sent { token, generation, result: Ok(n) } = happening {
                    if let Some(conn) = super::ring_conn(conns, token, generation) {
                        conn.sent(engine, n);
                    }
                }
            }
        }
        for (token, conn) in conns.iter_mut() {
            if let Io::Ring(ring) = &mut conn.io {
                self.forget(ring, token, true);
            }
        }
    }
}

impl Drop for RingReactor {
    fn drop(&mut self) {
        // Operations may still be in flight as the ring closes: the memory they point at
        // is left to the process's exit rather than freed under the kernel.
        std::mem::forget(std::mem::take(&mut self.pool));
        std::mem::forget(std::mem::take(&mut self.orphans));
        std::mem::forget(std::mem::replace(&mut self.wake_count, Box::new(0)));
    }
}
