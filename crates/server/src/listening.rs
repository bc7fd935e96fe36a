//! The listening sockets, shared by the workers. CONFIG SET `port` and `bind` replace the
//! TCP ones at runtime (Redis's changeListenPort / changeBindAddr): the new sockets are
//! bound first, so a failure leaves the old ones serving; on success the old ones stop
//! listening and each worker moves its reactor to the new set at its next turn.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use crate::log::{self, Level};
use crate::socket::Listener;
use crate::tls::TlsContext;

pub struct Listening {
    /// Bumped by every replacement: a worker whose reactor has an older one moves over.
    generation: AtomicU64,
    /// The TCP listeners, the TLS ones, then the Unix one if any.
    set: Mutex<Vec<Listener>>,
    backlog: i32,
    /// What TLS listeners hand their connections.
    tls: Arc<TlsContext>,
    /// The `bind` list the TCP and TLS sockets were bound to.
    bound_to: Mutex<String>,
}

impl Listening {
    pub fn new(listeners: Vec<Listener>, bind: &str, backlog: i32, tls: Arc<TlsContext>) -> Self {
        Self {
            generation: AtomicU64::new(0),
            set: Mutex::new(listeners),
            backlog,
            tls,
            bound_to: Mutex::new(bind.into()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Listener>> {
        self.set.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// A worker's own descriptors of the current set, with its generation.
    pub fn clones(&self) -> std::io::Result<(u64, Vec<Listener>)> {
        let set = self.lock();
        let generation = self.generation();
        Ok((generation, set.iter().map(Listener::try_clone).collect::<Result<_, _>>()?))
    }

    /// Listens on `port` and `tls_port` at every address of `bind` instead of the current
    /// TCP and TLS listeners (port 0 or an empty `bind`: none). On failure nothing changes
    /// and the reason (also logged) comes back.
    pub fn rebind(&self, bind: &str, port: u16, tls_port: u16) -> Result<(), String> {
        let mut set = self.lock();
        let current = |tls: bool| {
            set.iter().find_map(|l| match l {
                Listener::Tcp(l) if !tls => l.local_addr().ok(),
                Listener::Tls(l, _) if tls => l.local_addr().ok(),
                _ => None,
            })
        };
        // A port that stays as it was keeps its sockets unless the addresses change.
        let bind_unchanged = self.bound_to.lock().unwrap_or_else(|e| e.into_inner()).as_str() == bind;
        let keep_tcp = bind_unchanged && current(false).is_some_and(|a| a.port() == port) && port != 0;
        let keep_tls = bind_unchanged && current(true).is_some_and(|a| a.port() == tls_port) && tls_port != 0;
        let tcp = if port == 0 || keep_tcp { Vec::new() } else { bind_all(bind, port, self.backlog, false)? };
        let tls = if tls_port == 0 || keep_tls { Vec::new() } else { bind_all(bind, tls_port, self.backlog, false)? };
        // The old sockets stop listening (every worker's copy with them); a Unix one stays.
        let (kept, dropped): (Vec<Listener>, Vec<Listener>) = set.drain(..).partition(|l| match l {
            Listener::Tcp(_) => keep_tcp,
            Listener::Tls(..) => keep_tls,
            Listener::Unix(_) => true,
        });
        dropped.iter().for_each(Listener::stop_listening);
        set.extend(tcp.into_iter().map(Listener::Tcp));
        set.extend(tls.into_iter().map(|l| Listener::Tls(l, self.tls.clone())));
        set.extend(kept);
        set.sort_by_key(|l| match l {
            Listener::Tcp(_) => 0,
            Listener::Tls(..) => 1,
            Listener::Unix(_) => 2,
        });
        *self.bound_to.lock().unwrap_or_else(|e| e.into_inner()) = bind.to_string();
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// Binds every address of the `bind` directive. A leading `-` marks an address whose
/// failure (e.g. no IPv6 on this host) is tolerated, as in Redis.
pub fn bind_all(bind: &str, port: u16, backlog: i32, at_startup: bool) -> Result<Vec<std::net::TcpListener>, String> {
    let mut listeners = Vec::new();
    // `bind ""`: no TCP listener at all, as Redis's listenToPort (a Unix socket only).
    if bind.trim().is_empty() {
        return Ok(listeners);
    }
    for spec in bind.split_whitespace() {
        let (optional, addr) = match spec.strip_prefix('-') {
            Some(a) => (true, a),
            None => (false, spec),
        };
        let ip: IpAddr = match addr {
            "*" => IpAddr::from([0, 0, 0, 0]),
            "::*" => IpAddr::from([0u16; 8]),
            a => a.parse().map_err(|_| format!("Invalid bind address '{a}'"))?,
        };
        // Later listeners share the port the first one got.
        let port =
            listeners.first().and_then(|l: &std::net::TcpListener| l.local_addr().ok()).map_or(port, |a| a.port());
        let addr_port = SocketAddr::new(ip, port);
        // (At start-up an address in use is retried a moment: see BIND_RETRY.)
        let bound = if at_startup { listen_retrying(addr_port, backlog) } else { listen(addr_port, backlog) };
        match bound {
            Ok(l) => listeners.push(l),
            Err(e) if optional => log::log(Level::Verbose, &format!("Skipping optional bind {addr}:{port}: {e}")),
            Err(e) => {
                // Redis's two lines; its test framework retries another port on the second.
                log::log(
                    Level::Warning,
                    &format!("Warning: Could not create server TCP listening socket {addr}:{port}: {e}"),
                );
                return Err(if at_startup {
                    format!("Failed listening on port {port} (TCP), aborting.")
                } else {
                    format!("Failed listening on port {port} (TCP)")
                });
            }
        }
    }
    if listeners.is_empty() {
        return Err("Failed listening on any address".into());
    }
    Ok(listeners)
}

/// How long a bind that finds the address in use is retried. A server killed with -9
/// while an io_uring multishot accept was armed keeps its listener until the kernel tears
/// the ring down, some milliseconds later; a supervisor restarting at once must not fail
/// on that. A port another live process holds still fails, this much later.
const BIND_RETRY: Duration = Duration::from_millis(1000);

fn listen_retrying(addr: SocketAddr, backlog: i32) -> std::io::Result<std::net::TcpListener> {
    let deadline = Instant::now() + BIND_RETRY;
    loop {
        match listen(addr, backlog) {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

fn listen(addr: SocketAddr, backlog: i32) -> std::io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(backlog)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}
