//! The sockets quince serves clients on: TCP, and a Unix domain socket when the
//! `unixsocket` directive names one (as redis-server does). Both reactors work on their file
//! descriptors, so one type each for listeners and connections covers both kinds. On
//! `tls-port`, connections are TCP with rustls on top (tls.rs).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;

use crate::tls::{TlsContext, TlsSocket};

pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
    /// `tls-port`: connections speak TLS, with the context's current configuration.
    Tls(TcpListener, Arc<TlsContext>),
}

impl Listener {
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(match self {
            Self::Tcp(l) => Self::Tcp(l.try_clone()?),
            Self::Unix(l) => Self::Unix(l.try_clone()?),
            Self::Tls(l, context) => Self::Tls(l.try_clone()?, context.clone()),
        })
    }

    /// Stops listening at once, for every descriptor of this socket (the clones other
    /// workers hold included): a client connecting from now on is refused, as when
    /// redis-server has exited, rather than accepted and then dropped while the server
    /// stops.
    pub fn stop_listening(&self) {
        use std::os::fd::AsRawFd;
        let fd = match self {
            Self::Tcp(l) | Self::Tls(l, _) => l.as_raw_fd(),
            Self::Unix(l) => l.as_raw_fd(),
        };
        // SAFETY: shutdown on a descriptor we own; an error (already shut) changes nothing.
        unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
    }

    /// Accepts one connection (the listener is non-blocking: WouldBlock when none waits).
    pub fn accept(&self) -> io::Result<Socket> {
        Ok(match self {
            Self::Tcp(l) => Socket::Tcp(l.accept()?.0),
            Self::Unix(l) => Socket::Unix(l.accept()?.0),
            Self::Tls(l, context) => Socket::Tls(Box::new(context.accept(l.accept()?.0)?)),
        })
    }
}

impl AsRawFd for Listener {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Self::Tcp(l) | Self::Tls(l, _) => l.as_raw_fd(),
            Self::Unix(l) => l.as_raw_fd(),
        }
    }
}

/// A client connection's socket.
pub enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsSocket>),
}

impl Socket {
    /// The peer's address (None for a Unix socket, whose clients are local).
    pub fn peer_addr(&self) -> io::Result<Option<SocketAddr>> {
        match self {
            Self::Tcp(s) => s.peer_addr().map(Some),
            Self::Tls(s) => s.tcp.peer_addr().map(Some),
            Self::Unix(_) => Ok(None),
        }
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        match self {
            Self::Tcp(s) => s.local_addr().ok(),
            Self::Tls(s) => s.tcp.local_addr().ok(),
            Self::Unix(_) => None,
        }
    }

    pub fn is_unix(&self) -> bool {
        matches!(self, Self::Unix(_))
    }

    /// Replies go out as soon as they are written (TCP only).
    pub fn set_nodelay(&self) {
        match self {
            Self::Tcp(s) => drop(s.set_nodelay(true)),
            Self::Tls(s) => drop(s.tcp.set_nodelay(true)),
            Self::Unix(_) => {}
        }
    }

    /// A TLS connection: its reads may leave decrypted bytes behind in rustls after a short
    /// read, and its writes may leave ciphertext queued there.
    pub fn is_tls(&self) -> bool {
        matches!(self, Self::Tls(_))
    }

    /// Sends ciphertext rustls still holds: Ok(true) when nothing is left (always, for a
    /// plain socket), Ok(false) when the socket would block first.
    pub fn flush_pending(&self) -> io::Result<bool> {
        match self {
            Self::Tls(s) => s.flush_pending(),
            _ => Ok(true),
        }
    }

    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.set_nonblocking(on),
            Self::Tls(s) => s.tcp.set_nonblocking(on),
            Self::Unix(s) => s.set_nonblocking(on),
        }
    }
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Self::Tcp(s) => s.as_raw_fd(),
            Self::Tls(s) => s.tcp.as_raw_fd(),
            Self::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl Read for &Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => (&*s).read(buf),
            Socket::Unix(s) => (&*s).read(buf),
            Socket::Tls(s) => s.read(buf),
        }
    }
}

impl Write for &Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => (&*s).write(buf),
            Socket::Unix(s) => (&*s).write(buf),
            Socket::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
