//! The cluster bus's network side: one thread with its own poll, the listener on the bus
//! port, a link per peer in each direction, and `State::cron` every 100 ms (Redis runs
//! clusterCron from serverCron at that rate). Messages are framed as Redis reads them: 8
//! bytes (signature and length), then the rest; a bad signature or length closes the
//! link, a message that fails its checks is dropped with a log line.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use crate::message::{self, Message};
use crate::state::{Effect, LinkId, State, Transport};
use crate::{now_ms, ClusterLayer};

const WAKER: Token = Token(usize::MAX - 1);
const FIRST_LISTENER: usize = usize::MAX - 64;
/// The most a peer may claim a message is: a PUBLISH of the largest bulk Redis accepts.
const MAX_MESSAGE: usize = 512 * 1024 * 1024 + 64 * 1024;
/// Redis reads at most one clusterMsg's size per call.
const READ_CHUNK: usize = 16 * 1024;

struct Link {
    stream: TcpStream,
    connecting: bool,
    rcv: Vec<u8>,
    snd: Vec<u8>,
    /// The state forgot it (or asked to close it): the socket goes after its last write.
    closing: bool,
}

/// The links, as the state's [`Transport`].
struct Links {
    poll: Poll,
    links: HashMap<LinkId, Link>,
    next: LinkId,
}

impl Transport for Links {
    fn send(&mut self, link: LinkId, bytes: &[u8]) {
        if let Some(l) = self.links.get_mut(&link) {
            l.snd.extend_from_slice(bytes);
        }
    }

    fn connect(&mut self, ip: &str, port: u16) -> Option<LinkId> {
        let addr: SocketAddr = (ip, port).to_socket_addrs().ok()?.next()?;
        let mut stream = TcpStream::connect(addr).ok()?;
        let id = self.next;
        self.next += 1;
        self.poll.registry().register(&mut stream, Token(id), Interest::READABLE | Interest::WRITABLE).ok()?;
        let _ = stream.set_nodelay(true);
        self.links.insert(id, Link { stream, connecting: true, rcv: Vec::new(), snd: Vec::new(), closing: false });
        Some(id)
    }

    fn close(&mut self, link: LinkId) {
        if let Some(l) = self.links.get_mut(&link) {
            l.closing = true;
        }
    }

    fn local_ip(&self, link: LinkId) -> Option<String> {
        self.links.get(&link)?.stream.local_addr().ok().map(|a| ip_text(&a))
    }

    fn peer_ip(&self, link: LinkId) -> Option<String> {
        self.links.get(&link)?.stream.peer_addr().ok().map(|a| ip_text(&a))
    }
}

/// An address as Redis prints it (IPv4-mapped IPv6 shown as IPv4).
fn ip_text(addr: &SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => a.ip().to_string(),
        SocketAddr::V6(a) => match a.ip().to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => a.ip().to_string(),
        },
    }
}

/// The addresses `bind` names (as redis.conf writes them: `*`, `::*`, `-` for optional).
fn bind_addresses(bind: &str, port: u16) -> Vec<(SocketAddr, bool)> {
    let mut out = Vec::new();
    for word in bind.split_whitespace() {
        let (optional, word) = match word.strip_prefix('-') {
            Some(w) => (true, w),
            None => (false, word),
        };
        let ip = match word {
            "*" => "0.0.0.0",
            "::*" => "::",
            other => other,
        };
        if let Ok(ip) = ip.parse::<std::net::IpAddr>() {
            out.push((SocketAddr::new(ip, port), optional));
        }
    }
    if out.is_empty() {
        out.push((SocketAddr::new("0.0.0.0".parse().expect("address"), port), false));
    }
    out
}

/// Binds the bus port and starts the bus thread.
pub fn spawn(layer: Arc<ClusterLayer>, bind: &str, port: u16) -> Result<(), String> {
    let poll = Poll::new().map_err(|e| format!("cluster bus: {e}"))?;
    let mut listeners = Vec::new();
    for (i, (addr, optional)) in bind_addresses(bind, port).into_iter().enumerate() {
        match bind_listener(addr) {
            Ok(mut l) => {
                poll.registry()
                    .register(&mut l, Token(FIRST_LISTENER + i), Interest::READABLE)
                    .map_err(|e| format!("cluster bus: {e}"))?;
                listeners.push(l);
            }
            Err(_) if optional => {}
            Err(e) => {
                return Err(format!("Could not bind to cluster bus port {addr}: {e}"));
            }
        }
    }
    let waker = Arc::new(Waker::new(poll.registry(), WAKER).map_err(|e| format!("cluster bus: {e}"))?);
    *layer.waker.lock() = Some(waker);
    std::thread::Builder::new()
        .name("quince-cluster".into())
        .spawn(move || run(layer, poll, listeners))
        .map_err(|e| format!("spawning the cluster bus: {e}"))?;
    Ok(())
}

fn bind_listener(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = socket2::Socket::new(socket2::Domain::for_address(addr), socket2::Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.bind(&addr.into())?;
    socket.listen(511)?;
    socket.set_nonblocking(true)?;
    Ok(TcpListener::from_std(socket.into()))
}

/// PUBLISH/SPUBLISH from a client: encoded now, for the links the nodes have now (as
/// Redis sends it from the command), written by the bus thread (which owns the sockets).
pub fn queue_publish(layer: &ClusterLayer, channel: &[u8], message: &[u8], sharded: bool) {
    let mut recorder = crate::state::Recorder::default();
    layer.state.lock().send_publish(channel, message, sharded, &mut recorder);
    if !recorder.sent.is_empty() {
        layer.outbox.lock().extend(recorder.sent);
        layer.wake();
    }
}

fn run(layer: Arc<ClusterLayer>, poll: Poll, listeners: Vec<TcpListener>) {
    let mut links = Links { poll, links: HashMap::new(), next: 0 };
    let mut events = Events::with_capacity(256);
    let mut next_cron = Instant::now();
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        if layer.engine.strong_count() == 0 {
            return;
        }
        let wait = next_cron.saturating_duration_since(Instant::now());
        if let Err(e) = links.poll.poll(&mut events, Some(wait)) {
            if e.kind() != ErrorKind::Interrupted {
                layer.log("warning", &format!("cluster bus poll: {e}"));
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        let mut state = layer.state.lock();
        let now = now_ms();
        for event in events.iter() {
            let token = event.token().0;
            if token == WAKER.0 {
                continue;
            }
            if token >= FIRST_LISTENER {
                if let Some(listener) = listeners.get(token - FIRST_LISTENER) {
                    accept_all(listener, &mut links, &mut state, now);
                }
                continue;
            }
            let id = token;
            let Some(link) = links.links.get_mut(&id) else { continue };
            if link.connecting && (event.is_writable() || event.is_error() || event.is_write_closed()) {
                match link.stream.take_error() {
                    Ok(None) if link.stream.peer_addr().is_ok() => {
                        link.connecting = false;
                        state.link_connected(id, now, &mut links);
                    }
                    Ok(None) => continue,
                    _ => {
                        link.closing = true;
                        continue;
                    }
                }
            }
            if event.is_readable() || event.is_read_closed() || event.is_error() {
                read_link(&layer, id, &mut links, &mut state, &mut buf, now);
            }
        }
        if Instant::now() >= next_cron {
            next_cron = Instant::now() + Duration::from_millis(100);
            if let Some(engine) = layer.engine.upgrade() {
                let before = state.repl_offset;
                state.repl_offset = replication_offset(&engine);
                // A replica starting or ending a full sync tells the others at once (they
                // hide it from CLUSTER SLOTS while its offset is 0).
                if (before == 0) != (state.repl_offset == 0) && state.me().is_replica() {
                    state.pong_to_all = true;
                }
                state.data_age =
                    quince_persist::Layer::of(&engine).and_then(|l| l.master_data_age_ms(now)).unwrap_or(i64::MAX / 4);
            }
            state.cron(now, &mut links);
        }
        for (link, bytes) in std::mem::take(&mut *layer.outbox.lock()) {
            links.send(link, &bytes);
        }
        state.flush_pending(&mut links);
        state.flush_mfstart(&mut links);
        if std::mem::take(&mut state.pong_to_all) {
            state.broadcast_pong(now, &mut links);
        }
        if state.todo_update_state {
            state.update_state(now);
        }
        finish_turn(&layer, &mut state, &mut links);
        let effects = std::mem::take(&mut state.effects);
        let mf_ping = state.mf_ping_to.is_some();
        drop(state);
        apply_effects(&layer, effects);
        if mf_ping {
            // Writes are paused now (and the commands that were running are done): the
            // offset the replica must reach is final.
            let mut state = layer.state.lock();
            if let Some(engine) = layer.engine.upgrade() {
                state.repl_offset = replication_offset(&engine);
            }
            state.flush_mf_ping(now_ms(), &mut links);
            finish_turn(&layer, &mut state, &mut links);
        }
    }
}

/// What the turn left to do: nodes.conf, the engine's slot map, writes, closed links.
fn finish_turn(layer: &ClusterLayer, state: &mut State, links: &mut Links) {
    if let Err(e) = layer.save_pending(state) {
        layer.log("warning", &format!("Could not save the cluster configuration file: {e}"));
    }
    if state.routing_changed {
        state.routing_changed = false;
        layer.publish_routing(state);
    }
    // Links the state no longer knows are closed.
    let ids: Vec<LinkId> = links.links.keys().copied().collect();
    for id in ids {
        let known = state.links.contains_key(&id);
        let link = links.links.get_mut(&id).expect("listed");
        if !known {
            link.closing = true;
        }
        if !link.connecting && !link.snd.is_empty() {
            match link.stream.write(&link.snd) {
                Ok(n) => {
                    link.snd.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => link.closing = true,
            }
        }
        // A peer that stopped reading must not make us buffer without end.
        let limit = state.settings.link_sendbuf_limit;
        if limit > 0 && link.snd.len() > limit && !link.closing {
            link.closing = true;
            state.links_buffer_limit_exceeded += 1;
        }
        if link.closing {
            let mut link = links.links.remove(&id).expect("listed");
            let _ = links.poll.registry().deregister(&mut link.stream);
            state.link_closed(id);
        }
    }
}

fn accept_all(listener: &TcpListener, links: &mut Links, state: &mut State, now: i64) {
    loop {
        match listener.accept() {
            Ok((mut stream, _)) => {
                let id = links.next;
                links.next += 1;
                if links
                    .poll
                    .registry()
                    .register(&mut stream, Token(id), Interest::READABLE | Interest::WRITABLE)
                    .is_err()
                {
                    continue;
                }
                let _ = stream.set_nodelay(true);
                links
                    .links
                    .insert(id, Link { stream, connecting: false, rcv: Vec::new(), snd: Vec::new(), closing: false });
                state.link_accepted(id, now);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(_) => return,
        }
    }
}

/// Reads what the socket has and processes each whole message.
fn read_link(layer: &ClusterLayer, id: LinkId, links: &mut Links, state: &mut State, buf: &mut [u8], now: i64) {
    loop {
        let Some(link) = links.links.get_mut(&id) else { return };
        if link.closing {
            return;
        }
        match link.stream.read(buf) {
            Ok(0) => {
                link.closing = true;
                return;
            }
            Ok(n) => link.rcv.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => {
                link.closing = true;
                return;
            }
        }
        // Every whole message in the buffer.
        loop {
            let Some(link) = links.links.get_mut(&id) else { return };
            if link.rcv.len() < 8 {
                break;
            }
            let total = match message::frame_length(&link.rcv[..8]) {
                Ok(total) if total <= MAX_MESSAGE => total,
                _ => {
                    layer.log("warning", "Bad message length or signature received from Cluster bus.");
                    link.closing = true;
                    return;
                }
            };
            if link.rcv.len() < total {
                break;
            }
            let frame: Vec<u8> = link.rcv.drain(..total).collect();
            match Message::decode(&frame) {
                Ok(msg) => {
                    if !state.process(id, msg, now, links) {
                        return;
                    }
                }
                Err(e) => layer.log("warning", &format!("Dropped a cluster bus message: {e}")),
            }
        }
    }
}

/// The offset this node reports on the bus: a replica in the middle of a full sync (or
/// loading it) reports 0, as Redis's replicationGetSlaveOffset without a master client, so
/// CLUSTER SLOTS and SHARDS leave it out until it can serve.
fn replication_offset(engine: &quince_engine::Engine) -> u64 {
    let Some(layer) = quince_persist::Layer::of(engine) else { return 0 };
    if layer.is_replica() {
        let syncing = layer.master_link_role().is_some_and(|(_, _, state)| state == "sync");
        if syncing || engine.is_loading() || engine.is_async_loading() {
            return 0;
        }
    }
    layer.replication.offset()
}

/// Carries out what the state asked of the server (outside the state's lock).
fn apply_effects(layer: &ClusterLayer, effects: Vec<Effect>) {
    for effect in effects {
        match effect {
            Effect::Log(level, line) => layer.log(level, &line),
            Effect::Replicate(target) => {
                let Some(engine) = layer.engine.upgrade() else { continue };
                if let Some(persist) = quince_persist::Layer::of(&engine) {
                    if let Err(e) = persist.replicaof(target) {
                        layer.log("warning", &format!("Could not change replication: {e}"));
                    }
                }
            }
            Effect::PauseWrites(until) => {
                let Some(engine) = layer.engine.upgrade() else { continue };
                if until == 0 {
                    engine.unpause_clients();
                } else {
                    engine.pause_clients(until, false);
                    // Commands already running finish before the offset is read.
                    drop(engine.exclusive());
                }
            }
            Effect::Publish { channel, message, sharded } => {
                let Some(engine) = layer.engine.upgrade() else { continue };
                let kind =
                    if sharded { quince_engine::pubsub::Kind::Shard } else { quince_engine::pubsub::Kind::Channel };
                engine.pubsub.publish(kind, &channel, &message, now_ms(), None);
            }
        }
    }
}
