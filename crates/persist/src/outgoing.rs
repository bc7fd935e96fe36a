//! Connections this server opens to another (its master, a MIGRATE target): plain TCP, or
//! TLS over it when `tls-replication` (the link to the master) or `tls-cluster` (MIGRATE)
//! asks, as Redis connects. TLS itself is the host's (quince-server installs a connector
//! built on its `tls-*` configuration); a host without one can't open TLS connections.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, RwLock};

/// A connection to another server.
pub trait Outgoing: Read + Write + Send {
    /// The TCP socket underneath (timeouts, addresses).
    fn tcp(&self) -> &TcpStream;
}

impl Outgoing for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

/// Wraps a connected TCP stream in TLS as a client.
pub type TlsConnector = Arc<dyn Fn(TcpStream) -> io::Result<Box<dyn Outgoing>> + Send + Sync>;

static CONNECTOR: RwLock<Option<TlsConnector>> = RwLock::new(None);

/// The host's TLS connector (quince-server's, once at start-up).
pub fn set_tls_connector(connector: TlsConnector) {
    *CONNECTOR.write().unwrap_or_else(|e| e.into_inner()) = Some(connector);
}

/// `tcp` as is, or in TLS when `tls`.
pub fn wrap(tcp: TcpStream, tls: bool) -> io::Result<Box<dyn Outgoing>> {
    if !tls {
        return Ok(Box::new(tcp));
    }
    let connector = CONNECTOR.read().unwrap_or_else(|e| e.into_inner()).clone();
    match connector {
        Some(connect) => connect(tcp),
        None => Err(io::Error::other("TLS is not supported by this host")),
    }
}
