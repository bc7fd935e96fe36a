//! The readiness reactor: epoll through mio, edge-triggered. Each connection reads and
//! writes its own non-blocking socket when told it is ready; interest is renewed only
//! when it changes (docs/threading.md, "The read loop").

use std::io;
use std::sync::Arc;
use std::time::Duration;

use std::os::fd::AsRawFd;

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use slab::Slab;

use quince_engine::Engine;

use super::{Happening, Reactor};
use crate::connection::{Connection, Io, Next};
use crate::socket::{Listener, Socket};

/// Listener tokens come after every possible connection token.
const LISTENER_BASE: usize = usize::MAX / 2;
/// Woken by other threads: a connection of ours was killed or has pushed output.
const WAKER: Token = Token(LISTENER_BASE - 1);

pub struct EpollReactor {
    poll: Poll,
    events: Events,
    listeners: Vec<Listener>,
    waker: Arc<Waker>,
}

impl EpollReactor {
    pub fn new(listeners: Vec<Listener>) -> io::Result<Self> {
        let poll = Poll::new()?;
        for (i, listener) in listeners.iter().enumerate() {
            let fd = listener.as_raw_fd();
            poll.registry().register(&mut SourceFd(&fd), Token(LISTENER_BASE + i), Interest::READABLE)?;
        }
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        Ok(Self { poll, events: Events::with_capacity(1024), listeners, waker })
    }
}

impl Reactor for EpollReactor {
    fn wait(&mut self, timeout: Duration, happenings: &mut Vec<Happening>) -> io::Result<()> {
        self.poll.poll(&mut self.events, Some(timeout))?;
        for event in self.events.iter() {
            let token = event.token();
            happenings.push(if token == WAKER {
                Happening::Wake
            } else if token.0 >= LISTENER_BASE {
                Happening::Acceptable(token.0 - LISTENER_BASE)
            } else {
                let peer_closed = event.is_read_closed() || event.is_error();
                Happening::Ready {
                    token: token.0,
                    readable: event.is_readable() || peer_closed,
                    writable: event.is_writable(),
                    peer_closed,
                }
            });
        }
        Ok(())
    }

    fn accept(&mut self, listener: usize) -> io::Result<Socket> {
        self.listeners[listener].accept()
    }

    fn watch(&mut self, socket: Socket, token: usize) -> io::Result<Io> {
        socket.set_nonblocking(true)?;
        let fd = socket.as_raw_fd();
        self.poll.registry().register(&mut SourceFd(&fd), Token(token), Interest::READABLE)?;
        Ok(Io::Ready(socket))
    }

    fn received(&self, _buffer: u16, _len: usize) -> &[u8] {
        &[]
    }

    fn settle(&mut self, conn: &mut Connection, token: usize, next: Next) -> bool {
        let Io::Ready(socket) = &conn.io else { return true };
        let fd = socket.as_raw_fd();
        if next != Next::Keep {
            let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
            return true;
        }
        // Edge-triggered: the registration stays armed; it changes only when writability
        // interest does, or when input was left unread.
        let must_rearm = conn.rearm && !conn.paused;
        if conn.wants_writable == conn.registered_writable && !must_rearm {
            return false;
        }
        conn.registered_writable = conn.wants_writable;
        conn.rearm = false;
        let interest = if conn.wants_writable { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
        let _ = self.poll.registry().reregister(&mut SourceFd(&fd), Token(token), interest);
        false
    }

    fn waker(&self) -> Arc<dyn Fn() + Send + Sync> {
        let waker = Arc::clone(&self.waker);
        Arc::new(move || {
            let _ = waker.wake();
        })
    }

    fn listeners(&self) -> &[Listener] {
        &self.listeners
    }

    fn replace_listeners(&mut self, listeners: Vec<Listener>) -> io::Result<()> {
        for old in &self.listeners {
            let _ = self.poll.registry().deregister(&mut SourceFd(&old.as_raw_fd()));
        }
        // (Readiness events of the old ones were all handled: this runs between waits.)
        self.listeners = listeners;
        for (i, listener) in self.listeners.iter().enumerate() {
            let fd = listener.as_raw_fd();
            self.poll.registry().register(&mut SourceFd(&fd), Token(LISTENER_BASE + i), Interest::READABLE)?;
        }
        Ok(())
    }

    fn finish(&mut self, engine: &Engine, conns: &mut Slab<Connection>) {
        for (_, conn) in conns.iter_mut() {
            let _ = conn.flush(engine);
        }
    }
}
