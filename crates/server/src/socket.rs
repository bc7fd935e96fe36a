//! The sockets quince serves clients on: TCP, and a Unix domain socket when the
//! `unixsocket` directive names one (as redis-server does). Both reactors work on their file
//! descriptors, so one type each for listeners and connections covers both kinds.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};

pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Listener {
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(match self {
            Self::Tcp(l) => Self::Tcp(l.try_clone()?),
            Self::Unix(l) => Self::Unix(l.try_clone()?),
        })
    }

    /// Stops listening at once, for every descriptor of this socket (the clones other
    /// workers hold included): a client connecting from now on is refused, as when
    /// redis-server has exited, rather than accepted and then dropped while the server
    /// stops.
    pub fn stop_listening(&self) {
        use std::os::fd::AsRawFd;
        let fd = match self {
            Self::Tcp(l) => l.as_raw_fd(),
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
        })
    }
}

impl AsRawFd for Listener {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Self::Tcp(l) => l.as_raw_fd(),
            Self::Unix(l) => l.as_raw_fd(),
        }
    }
}

/// A client connection's socket.
pub enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Socket {
    /// The peer's address (None for a Unix socket, whose clients are local).
    pub fn peer_addr(&self) -> io::Result<Option<SocketAddr>> {
        match self {
            Self::Tcp(s) => s.peer_addr().map(Some),
            Self::Unix(_) => Ok(None),
        }
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        match self {
            Self::Tcp(s) => s.local_addr().ok(),
            Self::Unix(_) => None,
        }
    }

    pub fn is_unix(&self) -> bool {
        matches!(self, Self::Unix(_))
    }

    /// Replies go out as soon as they are written (TCP only).
    pub fn set_nodelay(&self) {
        if let Self::Tcp(s) = self {
            let _ = s.set_nodelay(true);
        }
    }

    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.set_nonblocking(on),
            Self::Unix(s) => s.set_nonblocking(on),
        }
    }
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Self::Tcp(s) => s.as_raw_fd(),
            Self::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl Read for &Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => (&*s).read(buf),
            Socket::Unix(s) => (&*s).read(buf),
        }
    }
}

impl Write for &Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => (&*s).write(buf),
            Socket::Unix(s) => (&*s).write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
