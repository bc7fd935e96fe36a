//! The cluster's state as this node sees it, and the rules of Redis 7.0's cluster bus
//! (cluster.c): which nodes exist, who serves which slot, epochs, failure detection, and
//! how each message changes them. No sockets and no clock here: links are numbers, time is
//! passed in, and what must go out on the network goes through [`Transport`], so the same
//! code runs under the real bus (`bus.rs`) and under a test's simulated network.

use std::collections::{BTreeMap, HashMap};

use crate::message::{
    self, flag, kind, Body, Extension, Gossip, Header, Message, NodeName, SlotBitmap, BITMAP_LEN, NO_NAME, SLOTS,
};

pub type LinkId = usize;

/// What the state asks of the network.
pub trait Transport {
    /// Queues a message on a link.
    fn send(&mut self, link: LinkId, bytes: &[u8]);
    /// Opens an outbound link to a node's bus port (the connection completes later:
    /// `State::link_connected`, or `State::link_closed` if it fails). None: it could not
    /// even start.
    fn connect(&mut self, ip: &str, port: u16) -> Option<LinkId>;
    fn close(&mut self, link: LinkId);
    /// The address of our end of a link (how a node learns its own IP).
    fn local_ip(&self, link: LinkId) -> Option<String>;
    /// The address of the other end.
    fn peer_ip(&self, link: LinkId) -> Option<String>;
}

/// A transport that only records what would be sent: a client's PUBLISH (encoded under
/// the state's lock for the links that exist then, written by the bus later), changes
/// made outside the bus thread (links they drop are closed by the bus, which closes every
/// socket the state no longer knows), tests.
#[derive(Default)]
pub struct Recorder {
    pub sent: Vec<(LinkId, Vec<u8>)>,
}

impl Transport for Recorder {
    fn send(&mut self, link: LinkId, bytes: &[u8]) {
        self.sent.push((link, bytes.to_vec()));
    }
    fn connect(&mut self, _: &str, _: u16) -> Option<LinkId> {
        None
    }
    fn close(&mut self, _: LinkId) {}
    fn local_ip(&self, _: LinkId) -> Option<String> {
        None
    }
    fn peer_ip(&self, _: LinkId) -> Option<String> {
        None
    }
}

/// What the state asks of the rest of the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Replicate from this master (None: be a master).
    Replicate(Option<(String, u16)>),
    /// A message published on another node (sharded: SPUBLISH).
    Publish {
        channel: Vec<u8>,
        message: Vec<u8>,
        sharded: bool,
    },
    Log(&'static str, String),
    /// A replica's manual failover asked this master to hold writes until then (0: stop).
    PauseWrites(i64),
}

/// Another node, or this one.
#[derive(Debug, Clone)]
pub struct Node {
    pub name: NodeName,
    pub flags: u16,
    pub ip: String,
    pub port: u16,
    pub cport: u16,
    pub pport: u16,
    pub hostname: String,
    pub config_epoch: u64,
    pub slots: Box<SlotBitmap>,
    pub numslots: usize,
    pub replica_of: Option<NodeName>,
    pub ctime: i64,
    pub ping_sent: i64,
    pub pong_received: i64,
    pub data_received: i64,
    pub fail_time: i64,
    pub repl_offset: u64,
    /// Masters that reported this node failing, with when they last did.
    pub fail_reports: Vec<(NodeName, i64)>,
    /// The link we opened to it, and the one it opened to us.
    pub link: Option<LinkId>,
    pub inbound_link: Option<LinkId>,
    last_in_ping_gossip: u64,
    /// When this node (a master) last had our vote for one of its replicas.
    voted_time: i64,
    /// Since when this master has had no working replica (replica migration).
    orphaned_time: i64,
}

impl Node {
    pub fn new(name: NodeName, flags: u16, now: i64) -> Node {
        Node {
            name,
            flags,
            ip: String::new(),
            port: 0,
            cport: 0,
            pport: 0,
            hostname: String::new(),
            config_epoch: 0,
            slots: Box::new([0; BITMAP_LEN]),
            numslots: 0,
            replica_of: None,
            ctime: now,
            ping_sent: 0,
            pong_received: 0,
            data_received: 0,
            fail_time: 0,
            repl_offset: 0,
            fail_reports: Vec::new(),
            link: None,
            inbound_link: None,
            last_in_ping_gossip: 0,
            voted_time: 0,
            orphaned_time: 0,
        }
    }

    pub fn is_master(&self) -> bool {
        self.flags & flag::MASTER != 0
    }
    pub fn is_replica(&self) -> bool {
        self.flags & flag::REPLICA != 0
    }
    pub fn in_handshake(&self) -> bool {
        self.flags & flag::HANDSHAKE != 0
    }
    pub fn timed_out(&self) -> bool {
        self.flags & flag::PFAIL != 0
    }
    pub fn failed(&self) -> bool {
        self.flags & flag::FAIL != 0
    }
    pub fn name_str(&self) -> &str {
        std::str::from_utf8(&self.name).unwrap_or("?")
    }
}

/// A link the state knows: whose it is, and which way it was opened.
#[derive(Debug, Clone)]
pub struct LinkInfo {
    pub node: Option<NodeName>,
    pub inbound: bool,
    pub ctime: i64,
    pub connected: bool,
}

/// Settings the state reads (from the server's configuration).
#[derive(Debug, Clone)]
pub struct Settings {
    pub node_timeout: i64,
    pub port: u16,
    pub cport: u16,
    pub pport: u16,
    pub announce_ip: String,
    pub announce_hostname: String,
    pub require_full_coverage: bool,
    pub allow_replica_migration: bool,
    pub replica_validity_factor: i64,
    pub repl_ping_period_ms: i64,
    pub replica_no_failover: bool,
    pub migration_barrier: usize,
    /// `cluster-link-sendbuf-limit` (0: none).
    pub link_sendbuf_limit: usize,
    /// `cluster-preferred-endpoint-type`: 0 ip, 1 hostname, 2 unknown-endpoint (what
    /// MOVED and ASK name).
    pub preferred_endpoint: i64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            node_timeout: 15000,
            port: 6379,
            cport: 16379,
            pport: 0,
            announce_ip: String::new(),
            announce_hostname: String::new(),
            require_full_coverage: true,
            allow_replica_migration: true,
            replica_validity_factor: 10,
            repl_ping_period_ms: 10_000,
            replica_no_failover: false,
            migration_barrier: 1,
            link_sendbuf_limit: 0,
            preferred_endpoint: 0,
        }
    }
}

/// CLUSTER_FAIL_REPORT_VALIDITY_MULT, CLUSTER_FAIL_UNDO_TIME_MULT, CLUSTER_WRITABLE_DELAY,
/// the rejoin delay bounds, the FORGET blacklist's time.
const FAIL_REPORT_VALIDITY_MULT: i64 = 2;
const FAIL_UNDO_TIME_MULT: i64 = 2;
const WRITABLE_DELAY: i64 = 2000;
const MIN_REJOIN_DELAY: i64 = 500;
const MAX_REJOIN_DELAY: i64 = 5000;
/// CLUSTER_MF_TIMEOUT and CLUSTER_MF_PAUSE_MULT.
const MF_TIMEOUT: i64 = 5000;
const MF_PAUSE_MULT: i64 = 2;
pub const BLACKLIST_TTL_MS: i64 = 60_000;

pub struct State {
    pub myself: NodeName,
    /// Every known node, this one included (ordered by name: deterministic iteration).
    pub nodes: BTreeMap<NodeName, Node>,
    /// Per slot, its owner.
    pub slots: Vec<Option<NodeName>>,
    pub migrating_to: BTreeMap<u16, NodeName>,
    pub importing_from: BTreeMap<u16, NodeName>,
    pub current_epoch: u64,
    pub last_vote_epoch: u64,
    pub ok: bool,
    /// Masters serving at least one slot (CLUSTER INFO's cluster_size).
    pub size: usize,
    pub settings: Settings,
    pub links: HashMap<LinkId, LinkInfo>,
    /// Nodes FORGET removed, and until when they must not come back through gossip.
    pub blacklist: HashMap<NodeName, i64>,
    owner_not_claiming: Box<SlotBitmap>,
    pub stats_sent: [u64; kind::COUNT],
    /// Links closed because their send buffer passed `cluster-link-sendbuf-limit`.
    pub links_buffer_limit_exceeded: u64,
    pub stats_received: [u64; kind::COUNT],
    pub pfail_nodes: usize,
    pings_sent: u64,
    iteration: u64,
    first_update_state: i64,
    among_minority_time: i64,
    /// nodes.conf must be written before the next reply goes out ...
    pub todo_save: bool,
    /// ... and synced to disk (slot ownership, epochs, votes: what Redis fsyncs).
    pub todo_fsync: bool,
    pub todo_update_state: bool,
    /// Slot ownership or health changed: the engine's slot map needs publishing.
    pub routing_changed: bool,
    pub effects: Vec<Effect>,
    /// Nodes just marked FAIL: the FAIL message goes to every node (`flush_pending`).
    pending_fail: Vec<NodeName>,
    /// Slots this shard stopped serving: their shard channels' subscribers are dropped
    /// when the slot map is published.
    pub removed_slots: Vec<u16>,
    /// DEBUG DROP-CLUSTER-PACKET-FILTER: messages of this type are dropped on arrival.
    pub drop_filter: Option<u16>,
    /// The master replication was last pointed at (None: none, this node is a master).
    replicating: Option<(String, u16)>,
    /// A PONG must go to every node at the next turn (a slot changed hands here).
    pub pong_to_all: bool,
    failover_auth_time: i64,
    failover_auth_count: usize,
    failover_auth_sent: bool,
    failover_auth_rank: usize,
    failover_auth_epoch: u64,
    /// A manual failover in progress ends (fails) at this time (0: none).
    pub mf_end: i64,
    /// As a master: the replica failing over manually.
    mf_replica: Option<NodeName>,
    /// As a replica: the offset the paused master announced (-1: not yet).
    mf_master_offset: i64,
    mf_can_start: bool,
    /// An MFSTART must go to our master at the next turn.
    pub send_mfstart: bool,
    /// As a master: the replica's link that gets our offset once writes are paused.
    pub mf_ping_to: Option<LinkId>,
    /// A replica's data age (ms), set before each cron from the replication link.
    pub data_age: i64,
    /// The replication offset this node reports (set by the server before each cron).
    pub repl_offset: u64,
    random: u64,
}

fn name_of(s: &str) -> Option<NodeName> {
    s.as_bytes().try_into().ok()
}

pub fn node_name_str(name: &NodeName) -> &str {
    std::str::from_utf8(name).unwrap_or("?")
}

/// A fresh random node name (40 hex characters).
pub fn random_name() -> NodeName {
    let id = quince_persist::replication::random_id();
    name_of(&id).expect("40 hex characters")
}

impl State {
    pub fn new(myself: NodeName, settings: Settings, now: i64) -> State {
        let mut me = Node::new(myself, flag::MYSELF | flag::MASTER, now);
        me.port = settings.port;
        me.cport = settings.cport;
        me.pport = settings.pport;
        me.hostname = settings.announce_hostname.clone();
        let mut nodes = BTreeMap::new();
        nodes.insert(myself, me);
        State {
            myself,
            nodes,
            slots: vec![None; SLOTS],
            migrating_to: BTreeMap::new(),
            importing_from: BTreeMap::new(),
            current_epoch: 0,
            last_vote_epoch: 0,
            ok: false,
            size: 0,
            settings,
            links: HashMap::new(),
            blacklist: HashMap::new(),
            owner_not_claiming: Box::new([0; BITMAP_LEN]),
            stats_sent: [0; kind::COUNT],
            links_buffer_limit_exceeded: 0,
            stats_received: [0; kind::COUNT],
            pfail_nodes: 0,
            pings_sent: 0,
            iteration: 0,
            first_update_state: 0,
            among_minority_time: 0,
            todo_save: true,
            todo_fsync: true,
            todo_update_state: true,
            routing_changed: true,
            effects: Vec::new(),
            pending_fail: Vec::new(),
            removed_slots: Vec::new(),
            drop_filter: None,
            replicating: None,
            pong_to_all: false,
            failover_auth_time: 0,
            failover_auth_count: 0,
            failover_auth_sent: false,
            failover_auth_rank: 0,
            failover_auth_epoch: 0,
            mf_end: 0,
            mf_replica: None,
            mf_master_offset: -1,
            mf_can_start: false,
            send_mfstart: false,
            mf_ping_to: None,
            data_age: i64::MAX / 4,
            repl_offset: 0,
            random: now as u64 ^ u64::from_le_bytes(myself[..8].try_into().expect("8 bytes")),
        }
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64*: picks which nodes to ping and gossip about.
        let mut x = self.random | 1;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.random = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn me(&self) -> &Node {
        &self.nodes[&self.myself]
    }

    fn me_mut(&mut self) -> &mut Node {
        self.nodes.get_mut(&self.myself).expect("myself is always known")
    }

    /// The master whose slots this node's messages carry: itself, or its master.
    fn my_master(&self) -> Option<&Node> {
        let me = self.me();
        if me.is_replica() {
            me.replica_of.and_then(|m| self.nodes.get(&m))
        } else {
            Some(me)
        }
    }

    fn log(&mut self, level: &'static str, line: String) {
        self.effects.push(Effect::Log(level, line));
    }

    fn changed(&mut self) {
        self.todo_save = true;
        self.todo_fsync = true;
        self.todo_update_state = true;
        self.routing_changed = true;
    }

    // ---- slots ----

    pub fn add_slot(&mut self, name: NodeName, slot: usize) -> bool {
        if self.slots[slot].is_some() {
            return false;
        }
        if let Some(n) = self.nodes.get_mut(&name) {
            if !message::slot_is_set(&n.slots, slot) {
                message::set_slot(&mut n.slots, slot);
                n.numslots += 1;
            }
        }
        self.slots[slot] = Some(name);
        self.routing_changed = true;
        true
    }

    pub fn del_slot(&mut self, slot: usize) -> bool {
        let Some(owner) = self.slots[slot].take() else { return false };
        let me = self.me();
        if owner == self.myself || (me.is_replica() && me.replica_of == Some(owner)) {
            self.removed_slots.push(slot as u16);
        }
        if let Some(n) = self.nodes.get_mut(&owner) {
            if message::slot_is_set(&n.slots, slot) {
                n.slots[slot >> 3] &= !(1 << (slot & 7));
                n.numslots -= 1;
            }
        }
        self.routing_changed = true;
        true
    }

    fn del_node_slots(&mut self, name: NodeName) -> usize {
        let mut deleted = 0;
        for slot in 0..SLOTS {
            if self.slots[slot] == Some(name) {
                self.del_slot(slot);
                deleted += 1;
            }
        }
        deleted
    }

    fn slot_unclaimed(&self, slot: usize) -> bool {
        self.slots[slot].is_none() || message::slot_is_set(&self.owner_not_claiming, slot)
    }

    // ---- nodes ----

    pub fn add_node(&mut self, node: Node) {
        self.nodes.insert(node.name, node);
        self.routing_changed = true;
    }

    /// Removes a node: its slots become unassigned, its links close, its failure
    /// reports go (clusterDelNode).
    pub fn del_node(&mut self, name: NodeName, transport: &mut dyn Transport) {
        for slot in 0..SLOTS {
            if self.importing_from.get(&(slot as u16)) == Some(&name) {
                self.importing_from.remove(&(slot as u16));
            }
            if self.migrating_to.get(&(slot as u16)) == Some(&name) {
                self.migrating_to.remove(&(slot as u16));
            }
            if self.slots[slot] == Some(name) {
                self.del_slot(slot);
            }
        }
        for n in self.nodes.values_mut() {
            n.fail_reports.retain(|(reporter, _)| *reporter != name);
            if n.replica_of == Some(name) {
                n.replica_of = None;
            }
        }
        if let Some(node) = self.nodes.remove(&name) {
            for link in [node.link, node.inbound_link].into_iter().flatten() {
                self.free_link(link, transport);
            }
        }
        self.routing_changed = true;
    }

    fn free_link(&mut self, link: LinkId, transport: &mut dyn Transport) {
        if let Some(info) = self.links.remove(&link) {
            if let Some(name) = info.node {
                if let Some(n) = self.nodes.get_mut(&name) {
                    if n.link == Some(link) {
                        n.link = None;
                    }
                    if n.inbound_link == Some(link) {
                        n.inbound_link = None;
                    }
                }
            }
        }
        transport.close(link);
    }

    fn rename_node(&mut self, old: NodeName, new: NodeName) {
        if let Some(mut node) = self.nodes.remove(&old) {
            node.name = new;
            for link in [node.link, node.inbound_link].into_iter().flatten() {
                if let Some(info) = self.links.get_mut(&link) {
                    info.node = Some(new);
                }
            }
            self.nodes.insert(new, node);
        }
    }

    /// CLUSTER MEET: a node in handshake with a random name, to be met at the next cron
    /// (clusterStartHandshake). False when the address is already in handshake.
    pub fn start_handshake(&mut self, ip: &str, port: u16, cport: u16, now: i64) -> bool {
        let busy = self.nodes.values().any(|n| n.in_handshake() && n.ip == ip && n.port == port && n.cport == cport);
        if busy {
            return false;
        }
        let mut node = Node::new(random_name(), flag::HANDSHAKE | flag::MEET, now);
        node.ip = ip.to_string();
        node.port = port;
        node.cport = cport;
        self.add_node(node);
        true
    }

    fn set_node_as_master(&mut self, name: NodeName) {
        let Some(n) = self.nodes.get(&name) else { return };
        if n.is_master() {
            return;
        }
        let had_master = n.replica_of.is_some();
        let me = self.myself;
        let n = self.nodes.get_mut(&name).expect("checked");
        if had_master && name != me {
            n.flags |= flag::MIGRATE_TO;
        }
        n.flags &= !flag::REPLICA;
        n.flags |= flag::MASTER;
        n.replica_of = None;
        self.changed();
    }

    /// A master that has (had) a replica is one replica migration may give a replica to
    /// once it has none left (clusterNodeAddSlave sets MIGRATE_TO).
    fn master_has_replica(&mut self, master: NodeName) {
        if let Some(m) = self.nodes.get_mut(&master) {
            m.flags |= flag::MIGRATE_TO;
        }
    }

    /// Makes this node a replica of `master` (clusterSetMaster): its slots go, replication
    /// starts.
    pub fn set_my_master(&mut self, master: NodeName) {
        let me = self.myself;
        if self.me().is_master() {
            let me_node = self.me_mut();
            me_node.flags &= !(flag::MASTER | flag::MIGRATE_TO);
            me_node.flags |= flag::REPLICA;
            self.del_node_slots(me);
            self.migrating_to.clear();
            self.importing_from.clear();
        }
        self.me_mut().replica_of = Some(master);
        self.master_has_replica(master);
        if let Some(m) = self.nodes.get(&master) {
            let target = (m.ip.clone(), m.port);
            self.replicate(Some(target));
        }
        self.changed();
    }

    /// Points replication at `target` (the server's REPLICAOF, carried out by the bus).
    pub fn replicate(&mut self, target: Option<(String, u16)>) {
        self.replicating = target.clone();
        self.effects.push(Effect::Replicate(target));
    }

    /// CONFIG SET of a cluster directive: this node's announced addresses and the
    /// timeouts take effect at once (gossip carries them to the others).
    pub fn apply_settings(&mut self, settings: Settings) {
        let old = std::mem::replace(&mut self.settings, settings);
        if old.preferred_endpoint != self.settings.preferred_endpoint {
            self.routing_changed = true;
        }
        let s = &self.settings;
        let (port, cport, pport, hostname, announce_ip) =
            (s.port, s.cport, s.pport, s.announce_hostname.clone(), s.announce_ip.clone());
        let me = self.me_mut();
        let mut changed = me.port != port || me.cport != cport || me.pport != pport || me.hostname != hostname;
        me.port = port;
        me.cport = cport;
        me.pport = pport;
        me.hostname = hostname;
        // An announced address replaces ours; clearing it lets the next MEET or PING tell
        // us again.
        if !announce_ip.is_empty() && me.ip != announce_ip {
            me.ip = announce_ip;
            changed = true;
        } else if announce_ip.is_empty() && !old.announce_ip.is_empty() {
            me.ip.clear();
            changed = true;
        }
        let no_failover = self.settings.replica_no_failover;
        let me = self.me_mut();
        let flags = if no_failover { me.flags | flag::NOFAILOVER } else { me.flags & !flag::NOFAILOVER };
        if flags != me.flags {
            me.flags = flags;
            changed = true;
        }
        if changed {
            self.todo_save = true;
            self.routing_changed = true;
        }
    }

    /// CLUSTER RESET (clusterReset): back to a master alone, without slots; HARD also
    /// takes a new name and zeroes the epochs.
    pub fn reset(&mut self, hard: bool, now: i64) {
        let me = self.myself;
        if self.me().is_replica() {
            self.set_node_as_master(me);
        }
        self.migrating_to.clear();
        self.importing_from.clear();
        self.del_node_slots(me);
        let others: Vec<NodeName> = self.nodes.keys().copied().filter(|n| *n != me).collect();
        for name in others {
            self.del_node(name, &mut Recorder::default());
        }
        if hard {
            self.current_epoch = 0;
            self.last_vote_epoch = 0;
            self.me_mut().config_epoch = 0;
            let new = random_name();
            self.rename_node(me, new);
            self.myself = new;
            self.log("notice", format!("Node hard reset, now I'm {}", node_name_str(&new)));
        }
        self.me_mut().ctime = now;
        self.changed();
    }

    // ---- messages out ----

    fn header(&self, kind: u16) -> Header {
        let me = self.me();
        let master = self.my_master().unwrap_or(me);
        let mut h = Header::new(kind, self.myself);
        h.ip = self.settings.announce_ip.as_bytes().to_vec();
        h.slots = master.slots.clone();
        h.replica_of = me.replica_of.unwrap_or(NO_NAME);
        h.port = self.settings.port;
        h.pport = self.settings.pport;
        h.cport = self.settings.cport;
        h.flags = me.flags;
        h.state = if self.ok { 0 } else { 1 };
        h.current_epoch = self.current_epoch;
        h.config_epoch = master.config_epoch;
        h.offset = self.repl_offset;
        if me.is_master() && self.mf_end != 0 {
            h.mflags[0] |= message::mflag::PAUSED;
        }
        h
    }

    fn send(&mut self, link: LinkId, msg: &Message, transport: &mut dyn Transport) {
        if let Some(count) = self.stats_sent.get_mut(msg.header.kind as usize) {
            *count += 1;
        }
        transport.send(link, &msg.encode());
    }

    fn gossip_entry(n: &Node) -> Gossip {
        Gossip {
            name: n.name,
            ping_sent: (n.ping_sent / 1000) as u32,
            pong_received: (n.pong_received / 1000) as u32,
            ip: n.ip.as_bytes().to_vec(),
            port: n.port,
            cport: n.cport,
            flags: n.flags,
            pport: n.pport,
        }
    }

    /// PING, PONG or MEET with a gossip section (clusterSendPing).
    pub fn send_ping(&mut self, link: LinkId, kind: u16, now: i64, transport: &mut dyn Transport) {
        let Some(info) = self.links.get(&link).cloned() else { return };
        let total = self.nodes.len();
        let mut fresh = total.saturating_sub(2);
        let wanted = (total / 10).max(3).min(fresh);
        if !info.inbound && kind == message::kind::PING {
            if let Some(n) = info.node.and_then(|name| self.nodes.get_mut(&name)) {
                n.ping_sent = now;
            }
        }
        self.pings_sent += 1;
        let round = self.pings_sent;
        let mut entries = Vec::new();
        let names: Vec<NodeName> = self.nodes.keys().copied().collect();
        let mut tries = wanted * 3;
        while fresh > 0 && entries.len() < wanted && tries > 0 {
            tries -= 1;
            let pick = names[(self.next_random() % names.len() as u64) as usize];
            let n = &self.nodes[&pick];
            if pick == self.myself || n.flags & flag::PFAIL != 0 {
                continue;
            }
            if n.flags & (flag::HANDSHAKE | flag::NOADDR) != 0 || (n.link.is_none() && n.numslots == 0) {
                fresh -= 1;
                continue;
            }
            if n.last_in_ping_gossip == round {
                continue;
            }
            entries.push(Self::gossip_entry(n));
            self.nodes.get_mut(&pick).expect("picked").last_in_ping_gossip = round;
            fresh -= 1;
        }
        // Every node in PFAIL goes along, so failure reports spread fast.
        for n in self.nodes.values() {
            if n.flags & flag::PFAIL != 0 && n.flags & (flag::HANDSHAKE | flag::NOADDR) == 0 {
                entries.push(Self::gossip_entry(n));
            }
        }
        let mut extensions = Vec::new();
        if !self.settings.announce_hostname.is_empty() {
            extensions.push(Extension::Hostname(self.settings.announce_hostname.as_bytes().to_vec()));
        }
        let msg = Message { header: self.header(kind), body: Body::Gossip { entries, extensions } };
        self.send(link, &msg, transport);
    }

    /// Sends to every node we have a link to (clusterBroadcastMessage).
    fn broadcast(&mut self, msg: &Message, transport: &mut dyn Transport) {
        let links: Vec<LinkId> =
            self.nodes.values().filter(|n| n.name != self.myself && !n.in_handshake()).filter_map(|n| n.link).collect();
        for link in links {
            self.send(link, msg, transport);
        }
    }

    /// A PONG to every node (after a change others must hear of at once).
    pub fn broadcast_pong(&mut self, now: i64, transport: &mut dyn Transport) {
        let links: Vec<LinkId> =
            self.nodes.values().filter(|n| n.name != self.myself && !n.in_handshake()).filter_map(|n| n.link).collect();
        for link in links {
            self.send_ping(link, kind::PONG, now, transport);
        }
    }

    fn send_fail(&mut self, about: NodeName, transport: &mut dyn Transport) {
        let msg = Message { header: self.header(kind::FAIL), body: Body::Fail { about } };
        self.broadcast(&msg, transport);
    }

    fn send_update(&mut self, link: Option<LinkId>, about: NodeName, transport: &mut dyn Transport) {
        let Some(link) = link else { return };
        let Some(n) = self.nodes.get(&about) else { return };
        let body = Body::Update { config_epoch: n.config_epoch, node: n.name, slots: n.slots.clone() };
        let msg = Message { header: self.header(kind::UPDATE), body };
        self.send(link, &msg, transport);
    }

    /// PUBLISH / SPUBLISH to the other nodes (all of them, as Redis 7.0 does for both).
    pub fn send_publish(&mut self, channel: &[u8], message: &[u8], sharded: bool, transport: &mut dyn Transport) {
        let k = if sharded { kind::PUBLISHSHARD } else { kind::PUBLISH };
        let msg = Message {
            header: self.header(k),
            body: Body::Publish { channel: channel.to_vec(), message: message.to_vec() },
        };
        if sharded {
            // Only the nodes of this node's shard (its master and that master's replicas).
            let master = self.my_master().map(|m| m.name).unwrap_or(self.myself);
            let links: Vec<LinkId> = self
                .nodes
                .values()
                .filter(|n| n.name != self.myself && (n.name == master || n.replica_of == Some(master)))
                .filter_map(|n| n.link)
                .collect();
            for link in links {
                self.send(link, &msg, transport);
            }
        } else {
            self.broadcast(&msg, transport);
        }
    }

    /// DEBUG CLUSTERLINK KILL TO|FROM|ALL: drops our link(s) with a node (the bus closes
    /// the sockets, the cron reconnects).
    pub fn kill_links(&mut self, name: NodeName, to: bool, from: bool) {
        let Some(n) = self.nodes.get_mut(&name) else { return };
        let mut dropped = Vec::new();
        if to {
            dropped.extend(n.link.take());
        }
        if from {
            dropped.extend(n.inbound_link.take());
        }
        for link in dropped {
            self.links.remove(&link);
        }
    }

    // ---- links ----

    pub fn link_accepted(&mut self, link: LinkId, now: i64) {
        self.links.insert(link, LinkInfo { node: None, inbound: true, ctime: now, connected: true });
    }

    /// An outbound link finished connecting: PING (or MEET) goes out first.
    pub fn link_connected(&mut self, link: LinkId, now: i64, transport: &mut dyn Transport) {
        let Some(info) = self.links.get_mut(&link) else { return };
        info.connected = true;
        let Some(name) = info.node else { return };
        let Some(node) = self.nodes.get(&name) else { return };
        let old_ping_sent = node.ping_sent;
        let k = if node.flags & flag::MEET != 0 { kind::MEET } else { kind::PING };
        self.send_ping(link, k, now, transport);
        if let Some(node) = self.nodes.get_mut(&name) {
            if old_ping_sent != 0 {
                node.ping_sent = old_ping_sent;
            }
            node.flags &= !flag::MEET;
        }
    }

    /// A link closed (by the peer, an error, or a failed connect).
    pub fn link_closed(&mut self, link: LinkId) {
        if let Some(info) = self.links.remove(&link) {
            if let Some(name) = info.node {
                if let Some(n) = self.nodes.get_mut(&name) {
                    if n.link == Some(link) {
                        n.link = None;
                    }
                    if n.inbound_link == Some(link) {
                        n.inbound_link = None;
                    }
                }
            }
        }
    }

    // ---- messages in ----

    /// clusterProcessPacket. Returns false when the link was closed by it.
    pub fn process(&mut self, link: LinkId, msg: Message, now: i64, transport: &mut dyn Transport) -> bool {
        let Message { header: hdr, body } = msg;
        let k = hdr.kind;
        if let Some(count) = self.stats_received.get_mut(k as usize) {
            *count += 1;
        }
        if self.drop_filter == Some(k) {
            self.log("warning", "Dropping packet that matches debug drop filter".into());
            return true;
        }
        let Some(link_info) = self.links.get(&link).cloned() else { return false };
        // The sender: the link's node, unless that one is still in handshake (it has a
        // random name then); an inbound link learns its node here.
        let sender = match link_info.node.filter(|n| self.nodes.get(n).is_some_and(|n| !n.in_handshake())) {
            Some(n) => Some(n),
            None => {
                let known = self.nodes.contains_key(&hdr.sender).then_some(hdr.sender);
                if let (Some(name), None) = (known, link_info.node) {
                    // Redis frees a previous inbound link of the node.
                    if let Some(old) = self.nodes[&name].inbound_link.filter(|&old| old != link) {
                        self.free_link(old, transport);
                    }
                    self.nodes.get_mut(&name).expect("known").inbound_link = Some(link);
                    if let Some(info) = self.links.get_mut(&link) {
                        info.node = Some(name);
                    }
                }
                known
            }
        };
        if let Some(s) = sender {
            self.nodes.get_mut(&s).expect("known").data_received = now;
        }
        let mut sender_config_epoch = 0;
        if let Some(s) = sender.filter(|s| !self.nodes[s].in_handshake()) {
            sender_config_epoch = hdr.config_epoch;
            if hdr.current_epoch > self.current_epoch {
                self.current_epoch = hdr.current_epoch;
                self.todo_save = true;
                self.todo_fsync = true;
            }
            let n = self.nodes.get_mut(&s).expect("known");
            if sender_config_epoch > n.config_epoch {
                n.config_epoch = sender_config_epoch;
                self.todo_save = true;
                self.todo_fsync = true;
            }
            let n = self.nodes.get_mut(&s).expect("known");
            n.repl_offset = hdr.offset;
            // A manual failover waits for the paused master's final offset.
            if self.mf_end != 0
                && self.me().is_replica()
                && self.me().replica_of == Some(s)
                && hdr.mflags[0] & message::mflag::PAUSED != 0
                && self.mf_master_offset == -1
            {
                self.mf_master_offset = hdr.offset as i64;
                self.log(
                    "warning",
                    format!("Received replication offset for paused master manual failover: {}", hdr.offset),
                );
            }
        }
        match (k, body) {
            (kind::PING | kind::PONG | kind::MEET, Body::Gossip { entries, extensions }) => self
                .process_gossip_message(
                    link,
                    &link_info,
                    sender,
                    &hdr,
                    &entries,
                    &extensions,
                    sender_config_epoch,
                    now,
                    transport,
                ),
            (kind::FAIL, Body::Fail { about }) => {
                match sender {
                    Some(s) => {
                        if let Some(failing) = self.nodes.get_mut(&about) {
                            if failing.flags & (flag::FAIL | flag::MYSELF) == 0 {
                                failing.flags |= flag::FAIL;
                                failing.fail_time = now;
                                failing.flags &= !flag::PFAIL;
                                let line = format!(
                                    "FAIL message received from {} about {}",
                                    node_name_str(&s),
                                    node_name_str(&about)
                                );
                                self.log("notice", line);
                                self.changed();
                            }
                        }
                    }
                    None => {
                        let line = format!(
                            "Ignoring FAIL message from unknown node {} about {}",
                            node_name_str(&hdr.sender),
                            node_name_str(&about)
                        );
                        self.log("notice", line);
                    }
                }
                true
            }
            (kind::PUBLISH | kind::PUBLISHSHARD, Body::Publish { channel, message }) => {
                if sender.is_some() {
                    self.effects.push(Effect::Publish { channel, message, sharded: k == kind::PUBLISHSHARD });
                }
                true
            }
            (kind::UPDATE, Body::Update { config_epoch, node, slots }) => {
                if sender.is_none() {
                    return true;
                }
                let Some(n) = self.nodes.get(&node) else { return true };
                if n.config_epoch >= config_epoch {
                    return true;
                }
                if n.is_replica() {
                    self.set_node_as_master(node);
                }
                self.nodes.get_mut(&node).expect("known").config_epoch = config_epoch;
                self.todo_save = true;
                self.todo_fsync = true;
                self.update_slots_config_with(node, config_epoch, &slots, transport);
                true
            }
            (kind::FAILOVER_AUTH_REQUEST, _) => {
                if let Some(s) = sender {
                    self.send_failover_auth_if_needed(s, &hdr, now, transport);
                }
                true
            }
            (kind::FAILOVER_AUTH_ACK, _) => {
                if let Some(s) = sender {
                    let n = &self.nodes[&s];
                    // Only masters serving slots vote, for this election.
                    if n.is_master() && n.numslots > 0 && hdr.current_epoch >= self.failover_auth_epoch {
                        self.failover_auth_count += 1;
                        self.handle_replica_failover(now, transport);
                    }
                }
                true
            }
            (kind::MFSTART, _) => {
                let Some(s) = sender else { return true };
                if self.nodes[&s].replica_of != Some(self.myself) {
                    return true;
                }
                self.reset_manual_failover();
                self.mf_end = now + MF_TIMEOUT;
                self.mf_replica = Some(s);
                self.effects.push(Effect::PauseWrites(now + MF_TIMEOUT * MF_PAUSE_MULT));
                self.log("warning", format!("Manual failover requested by replica {}.", node_name_str(&s)));
                // The PING with our final offset goes once writes are paused (the bus
                // pauses them, waits for running commands, then calls `flush_mf_ping`).
                self.mf_ping_to = Some(link);
                true
            }
            // MODULE messages (no modules here) and unknown types: counted, dropped.
            _ => true,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn process_gossip_message(
        &mut self,
        link: LinkId,
        link_info: &LinkInfo,
        mut sender: Option<NodeName>,
        hdr: &Header,
        entries: &[Gossip],
        extensions: &[Extension],
        sender_config_epoch: u64,
        now: i64,
        transport: &mut dyn Transport,
    ) -> bool {
        let k = hdr.kind;
        if k == kind::PING || k == kind::MEET {
            // A node learns its own address from the first MEET (or PING) it gets.
            if (k == kind::MEET || self.me().ip.is_empty()) && self.settings.announce_ip.is_empty() {
                if let Some(ip) = transport.local_ip(link) {
                    if ip != self.me().ip {
                        self.me_mut().ip = ip.clone();
                        self.log("warning", format!("IP address for this node updated to {ip}"));
                        self.todo_save = true;
                    }
                }
            }
            if sender.is_none() && k == kind::MEET {
                // Someone met us: we meet it back, in handshake until its PONG.
                let mut node = Node::new(random_name(), flag::HANDSHAKE, now);
                node.ip = self.ip_of(link, hdr, transport);
                node.port = hdr.port;
                node.pport = hdr.pport;
                node.cport = hdr.cport;
                self.add_node(node);
                self.todo_save = true;
                self.process_gossip_section(sender, entries, now);
            }
            self.send_ping(link, kind::PONG, now, transport);
        }
        if !link_info.inbound {
            let Some(link_node) = link_info.node else { return true };
            let in_handshake = self.nodes.get(&link_node).is_some_and(|n| n.in_handshake());
            if in_handshake {
                if let Some(s) = sender {
                    // We met a node we already know: update its address, drop the
                    // handshake node.
                    if self.update_address_if_needed(s, link, hdr, transport) {
                        self.changed();
                    }
                    self.del_node(link_node, transport);
                    return false;
                }
                self.rename_node(link_node, hdr.sender);
                let node = self.nodes.get_mut(&hdr.sender).expect("renamed");
                node.flags &= !flag::HANDSHAKE;
                node.flags |= hdr.flags & (flag::MASTER | flag::REPLICA);
                let line = format!("Handshake with node {} completed.", node_name_str(&hdr.sender));
                self.log("verbose", line);
                self.todo_save = true;
                // (Redis's `sender` stays unknown for the rest of this message.)
            } else if link_node != hdr.sender {
                // The node at this address changed its name: forget the address.
                if let Some(n) = self.nodes.get_mut(&link_node) {
                    n.flags |= flag::NOADDR;
                    n.ip.clear();
                    n.port = 0;
                    n.pport = 0;
                    n.cport = 0;
                }
                self.free_link(link, transport);
                self.todo_save = true;
                return false;
            }
        }
        if let Some(s) = sender {
            let n = self.nodes.get_mut(&s).expect("known");
            n.flags = (n.flags & !flag::NOFAILOVER) | (hdr.flags & flag::NOFAILOVER);
        }
        if let Some(s) = sender {
            if k == kind::PING
                && !self.nodes[&s].in_handshake()
                && self.update_address_if_needed(s, link, hdr, transport)
            {
                self.changed();
            }
        }
        if !link_info.inbound && k == kind::PONG {
            if let Some(link_node) = self.links.get(&link).and_then(|l| l.node) {
                let n = self.nodes.get_mut(&link_node).expect("linked");
                n.pong_received = now;
                n.ping_sent = 0;
                if n.timed_out() {
                    n.flags &= !flag::PFAIL;
                    self.changed();
                } else if n.failed() {
                    self.clear_failure_if_needed(link_node, now);
                }
            }
        }
        // The sender's role.
        if let Some(s) = sender {
            if hdr.replica_of == NO_NAME {
                self.set_node_as_master(s);
            } else {
                let master = self.nodes.contains_key(&hdr.replica_of).then_some(hdr.replica_of);
                if self.nodes[&s].is_master() {
                    self.del_node_slots(s);
                    let n = self.nodes.get_mut(&s).expect("known");
                    n.flags &= !(flag::MASTER | flag::MIGRATE_TO);
                    n.flags |= flag::REPLICA;
                    self.changed();
                }
                if let Some(m) = master {
                    if self.nodes[&s].replica_of != Some(m) {
                        self.nodes.get_mut(&s).expect("known").replica_of = Some(m);
                        self.master_has_replica(m);
                        self.todo_save = true;
                    }
                }
            }
        }
        // Slots: does the sender (or its master) claim what we think it serves?
        let mut dirty_slots = false;
        if let Some(s) = sender {
            let n = &self.nodes[&s];
            let sender_master = if n.is_master() { Some(s) } else { n.replica_of };
            if let Some(m) = sender_master.and_then(|m| self.nodes.get(&m)) {
                dirty_slots = m.slots[..] != hdr.slots[..];
            }
        }
        if let Some(s) = sender {
            if self.nodes[&s].is_master() && dirty_slots {
                self.update_slots_config_with(s, sender_config_epoch, &hdr.slots, transport);
            }
        }
        // The sender claims slots others serve with a newer epoch: tell it (UPDATE).
        if let Some(s) = sender {
            if dirty_slots {
                for slot in 0..SLOTS {
                    if !message::slot_is_set(&hdr.slots, slot) {
                        continue;
                    }
                    if self.slots[slot] == Some(s) || self.slot_unclaimed(slot) {
                        continue;
                    }
                    let owner = self.slots[slot].expect("claimed");
                    if self.nodes[&owner].config_epoch > sender_config_epoch {
                        let line = format!(
                            "Node {} has old slots configuration, sending an UPDATE message about {}",
                            node_name_str(&s),
                            node_name_str(&owner)
                        );
                        self.log("verbose", line);
                        let to = self.nodes[&s].link;
                        self.send_update(to, owner, transport);
                        break;
                    }
                }
            }
        }
        // Two masters with one config epoch: the one with the smaller name moves on.
        if let Some(s) = sender {
            if self.me().is_master() && self.nodes[&s].is_master() && sender_config_epoch == self.me().config_epoch {
                self.handle_config_epoch_collision(s);
            }
        }
        if sender.is_some() {
            self.process_gossip_section(sender, entries, now);
            let hostname = extensions.iter().rev().find_map(|e| match e {
                Extension::Hostname(h) => Some(String::from_utf8_lossy(h).into_owned()),
                Extension::Unknown { .. } => None,
            });
            for e in extensions {
                if let Extension::Unknown { kind, .. } = e {
                    self.log("warning", format!("Received unknown extension type {kind}"));
                }
            }
            let s = sender.take().expect("checked");
            let n = self.nodes.get_mut(&s).expect("known");
            let hostname = hostname.unwrap_or_default();
            if n.hostname != hostname {
                n.hostname = hostname;
                self.todo_save = true;
                self.routing_changed = true;
            }
        }
        true
    }

    /// The address a message's sender has: the one it announces, or the link's peer.
    fn ip_of(&self, link: LinkId, hdr: &Header, transport: &dyn Transport) -> String {
        if !hdr.ip.is_empty() {
            return String::from_utf8_lossy(&hdr.ip).into_owned();
        }
        transport.peer_ip(link).unwrap_or_default()
    }

    fn update_address_if_needed(
        &mut self,
        name: NodeName,
        link: LinkId,
        hdr: &Header,
        transport: &mut dyn Transport,
    ) -> bool {
        let Some(n) = self.nodes.get(&name) else { return false };
        if n.link == Some(link) {
            return false;
        }
        let ip = self.ip_of(link, hdr, transport);
        if ip.is_empty() {
            return false;
        }
        if n.port == hdr.port && n.cport == hdr.cport && n.pport == hdr.pport && n.ip == ip {
            return false;
        }
        let old_link = n.link;
        let n = self.nodes.get_mut(&name).expect("known");
        n.ip = ip.clone();
        n.port = hdr.port;
        n.pport = hdr.pport;
        n.cport = hdr.cport;
        n.flags &= !flag::NOADDR;
        let port = n.port;
        if let Some(old) = old_link {
            self.free_link(old, transport);
        }
        self.log("warning", format!("Address updated for node {}, now {ip}:{port}", node_name_str(&name)));
        if self.me().is_replica() && self.me().replica_of == Some(name) {
            self.replicate(Some((ip, port)));
        }
        self.routing_changed = true;
        true
    }

    fn process_gossip_section(&mut self, sender: Option<NodeName>, entries: &[Gossip], now: i64) {
        let sender_is_master = sender.and_then(|s| self.nodes.get(&s)).is_some_and(|s| s.is_master());
        for g in entries {
            let failing = g.flags & (flag::FAIL | flag::PFAIL) != 0;
            if self.nodes.contains_key(&g.name) {
                if let (Some(s), true) = (sender, sender_is_master) {
                    if g.name != self.myself {
                        if failing {
                            let n = self.nodes.get_mut(&g.name).expect("known");
                            match n.fail_reports.iter_mut().find(|(r, _)| *r == s) {
                                Some(report) => report.1 = now,
                                None => {
                                    n.fail_reports.push((s, now));
                                    let line = format!(
                                        "Node {} reported node {} as not reachable.",
                                        node_name_str(&s),
                                        node_name_str(&g.name)
                                    );
                                    self.log("verbose", line);
                                }
                            }
                            self.mark_failing_if_needed(g.name, now);
                        } else {
                            let n = self.nodes.get_mut(&g.name).expect("known");
                            n.fail_reports.retain(|(r, _)| *r != s);
                        }
                    }
                }
                let validity = self.settings.node_timeout * FAIL_REPORT_VALIDITY_MULT;
                let n = self.nodes.get_mut(&g.name).expect("known");
                n.fail_reports.retain(|(_, at)| now - at <= validity);
                // A fresher PONG time heard through gossip counts (it keeps nodes we
                // seldom ping from looking failed).
                if !failing && n.ping_sent == 0 && n.fail_reports.is_empty() {
                    let pong = g.pong_received as i64 * 1000;
                    if pong <= now + 500 && pong > n.pong_received {
                        n.pong_received = pong;
                    }
                }
                // A node we think failing, reported fine at another address: take it.
                let g_ip = String::from_utf8_lossy(&g.ip).into_owned();
                if n.flags & (flag::FAIL | flag::PFAIL) != 0
                    && g.flags & flag::NOADDR == 0
                    && !failing
                    && (!n.ip.eq_ignore_ascii_case(&g_ip) || n.port != g.port || n.cport != g.cport)
                {
                    n.ip = g_ip;
                    n.port = g.port;
                    n.pport = g.pport;
                    n.cport = g.cport;
                    n.flags &= !flag::NOADDR;
                    if let Some(link) = n.link.take() {
                        // (The cron reconnects; the bus closes the socket when it sees the
                        // link gone.)
                        self.links.remove(&link);
                    }
                    self.routing_changed = true;
                }
            } else if sender.is_some() && g.flags & flag::NOADDR == 0 && !self.blacklisted(&g.name, now) {
                let mut node = Node::new(g.name, g.flags, now);
                node.ip = String::from_utf8_lossy(&g.ip).into_owned();
                node.port = g.port;
                node.pport = g.pport;
                node.cport = g.cport;
                // (Redis keeps the flags gossiped; a node never gossips its own MYSELF.)
                node.flags &= !flag::MYSELF;
                self.add_node(node);
                self.todo_save = true;
            }
        }
    }

    fn blacklisted(&mut self, name: &NodeName, now: i64) -> bool {
        self.blacklist.retain(|_, until| *until > now);
        self.blacklist.contains_key(name)
    }

    fn masters_quorum(&self) -> usize {
        self.size / 2 + 1
    }

    fn mark_failing_if_needed(&mut self, name: NodeName, now: i64) {
        let quorum = self.masters_quorum();
        let me_master = self.me().is_master();
        let Some(n) = self.nodes.get(&name) else { return };
        if !n.timed_out() || n.failed() {
            return;
        }
        let failures = n.fail_reports.len() + usize::from(me_master);
        if failures < quorum {
            return;
        }
        self.log("notice", format!("Marking node {} as failing (quorum reached).", node_name_str(&name)));
        let n = self.nodes.get_mut(&name).expect("known");
        n.flags &= !flag::PFAIL;
        n.flags |= flag::FAIL;
        n.fail_time = now;
        self.pending_fail.push(name);
        self.changed();
    }

    fn clear_failure_if_needed(&mut self, name: NodeName, now: i64) {
        let timeout = self.settings.node_timeout;
        let Some(n) = self.nodes.get(&name) else { return };
        if n.is_replica() || n.numslots == 0 {
            let what = if n.is_replica() { "replica" } else { "master without slots" };
            let line = format!("Clear FAIL state for node {}: {what} is reachable again.", node_name_str(&name));
            self.nodes.get_mut(&name).expect("known").flags &= !flag::FAIL;
            self.log("notice", line);
            self.changed();
            return;
        }
        if n.is_master() && n.numslots > 0 && now - n.fail_time > timeout * FAIL_UNDO_TIME_MULT {
            let line = format!(
                "Clear FAIL state for node {}: is reachable again and nobody is serving its slots after some time.",
                node_name_str(&name)
            );
            self.nodes.get_mut(&name).expect("known").flags &= !flag::FAIL;
            self.log("notice", line);
            self.changed();
        }
    }

    fn handle_config_epoch_collision(&mut self, sender: NodeName) {
        let me = self.me();
        let s = &self.nodes[&sender];
        if s.config_epoch != me.config_epoch || !s.is_master() || !me.is_master() {
            return;
        }
        if sender <= self.myself {
            return;
        }
        self.current_epoch += 1;
        let epoch = self.current_epoch;
        self.me_mut().config_epoch = epoch;
        self.todo_save = true;
        self.todo_fsync = true;
        let line =
            format!("WARNING: configEpoch collision with node {}. configEpoch set to {epoch}", node_name_str(&sender));
        self.log("verbose", line);
    }

    /// clusterUpdateSlotsConfigWith: `sender` claims `slots` with `epoch`; it takes those
    /// whose owner has an older epoch (or none).
    fn update_slots_config_with(
        &mut self,
        sender: NodeName,
        epoch: u64,
        slots: &SlotBitmap,
        transport: &mut dyn Transport,
    ) {
        if sender == self.myself {
            self.log("warning", "Discarding UPDATE message about myself.".into());
            return;
        }
        let _ = transport;
        let cur_master = if self.me().is_master() { Some(self.myself) } else { self.me().replica_of };
        let mut new_master = None;
        let (mut sender_slots, mut migrated_our_slots) = (0, 0);
        for slot in 0..SLOTS {
            if message::slot_is_set(slots, slot) {
                sender_slots += 1;
                if self.slots[slot] == Some(sender) {
                    self.owner_not_claiming[slot >> 3] &= !(1 << (slot & 7));
                    continue;
                }
                if self.importing_from.contains_key(&(slot as u16)) {
                    continue;
                }
                let older = match self.slots[slot] {
                    None => true,
                    Some(owner) => {
                        self.slot_unclaimed(slot) || self.nodes.get(&owner).is_none_or(|o| o.config_epoch < epoch)
                    }
                };
                if older {
                    if self.slots[slot].is_some() && self.slots[slot] == cur_master {
                        new_master = Some(sender);
                        migrated_our_slots += 1;
                    }
                    self.del_slot(slot);
                    self.add_slot(sender, slot);
                    self.owner_not_claiming[slot >> 3] &= !(1 << (slot & 7));
                    self.changed();
                }
            } else if self.slots[slot] == Some(sender) {
                message::set_slot(&mut self.owner_not_claiming, slot);
            }
        }
        let cur_master_slots = cur_master.and_then(|m| self.nodes.get(&m)).map_or(0, |m| m.numslots);
        if let Some(m) = new_master {
            if cur_master_slots == 0 && (self.settings.allow_replica_migration || sender_slots == migrated_our_slots) {
                self.log(
                    "warning",
                    format!(
                        "Configuration change detected. Reconfiguring myself as a replica of {}",
                        node_name_str(&m)
                    ),
                );
                self.set_my_master(m);
            }
        }
    }

    // ---- failover ----

    /// A master's vote for a replica asking to replace its failed master
    /// (clusterSendFailoverAuthIfNeeded).
    fn send_failover_auth_if_needed(
        &mut self,
        node: NodeName,
        request: &Header,
        now: i64,
        transport: &mut dyn Transport,
    ) {
        if self.me().is_replica() || self.me().numslots == 0 {
            return;
        }
        let name = node_name_str(&node).to_string();
        if request.current_epoch < self.current_epoch {
            let line = format!(
                "Failover auth denied to {name}: reqEpoch ({}) < curEpoch({})",
                request.current_epoch, self.current_epoch
            );
            self.log("warning", line);
            return;
        }
        if self.last_vote_epoch == self.current_epoch {
            let line = format!("Failover auth denied to {name}: already voted for epoch {}", self.current_epoch);
            self.log("warning", line);
            return;
        }
        let n = &self.nodes[&node];
        let master = n.replica_of.filter(|m| self.nodes.contains_key(m));
        let force_ack = request.mflags[0] & message::mflag::FORCEACK != 0;
        if n.is_master() {
            self.log("warning", format!("Failover auth denied to {name}: it is a master node"));
            return;
        }
        let Some(master) = master else {
            self.log("warning", format!("Failover auth denied to {name}: I don't know its master"));
            return;
        };
        if !self.nodes[&master].failed() && !force_ack {
            self.log("warning", format!("Failover auth denied to {name}: its master is up"));
            return;
        }
        let timeout = self.settings.node_timeout;
        let since_vote = now - self.nodes[&master].voted_time;
        if since_vote < timeout * 2 {
            let line = format!(
                "Failover auth denied to {name}: can't vote about this master before {} milliseconds",
                timeout * 2 - since_vote
            );
            self.log("warning", line);
            return;
        }
        // The slots it claims must not be served by a node with a newer config.
        for slot in 0..SLOTS {
            if !message::slot_is_set(&request.slots, slot) || self.slot_unclaimed(slot) {
                continue;
            }
            let owner_epoch = self.slots[slot].and_then(|o| self.nodes.get(&o)).map_or(0, |o| o.config_epoch);
            if owner_epoch <= request.config_epoch {
                continue;
            }
            let line = format!(
                "Failover auth denied to {name}: slot {slot} epoch ({owner_epoch}) > reqEpoch ({})",
                request.config_epoch
            );
            self.log("warning", line);
            return;
        }
        self.last_vote_epoch = self.current_epoch;
        self.nodes.get_mut(&master).expect("known").voted_time = now;
        self.todo_save = true;
        self.todo_fsync = true;
        if let Some(link) = self.nodes[&node].link {
            let msg = Message { header: self.header(kind::FAILOVER_AUTH_ACK), body: Body::Empty };
            self.send(link, &msg, transport);
        }
        self.log("warning", format!("Failover auth granted to {name} for epoch {}", self.current_epoch));
    }

    /// How many replicas of our master have newer data than us (they go first).
    fn replica_rank(&self) -> usize {
        let Some(master) = self.me().replica_of else { return 0 };
        let mine = self.repl_offset;
        self.nodes
            .values()
            .filter(|n| n.replica_of == Some(master) && n.name != self.myself)
            .filter(|n| n.flags & flag::NOFAILOVER == 0 && n.repl_offset > mine)
            .count()
    }

    fn reset_manual_failover(&mut self) {
        if self.mf_replica.is_some() {
            self.effects.push(Effect::PauseWrites(0));
        }
        self.mf_end = 0;
        self.mf_can_start = false;
        self.mf_replica = None;
        self.mf_master_offset = -1;
    }

    /// CLUSTER FAILOVER [FORCE|TAKEOVER] on a replica (the checks were made).
    pub fn start_manual_failover(&mut self, force: bool, takeover: bool, now: i64) {
        self.reset_manual_failover();
        self.mf_end = now + MF_TIMEOUT;
        if takeover {
            self.log("warning", "Taking over the master (user request).".into());
            crate::commands::bump_epoch_without_consensus(self);
            self.replace_my_master(now);
        } else if force {
            self.log("warning", "Forced failover user request accepted.".into());
            self.mf_can_start = true;
        } else {
            self.log("warning", "Manual failover user request accepted.".into());
            self.send_mfstart = true;
        }
    }

    /// The PING a manual failover's replica waits for, with this master's offset once
    /// its writes are paused (`repl_offset` read after the pause).
    pub fn flush_mf_ping(&mut self, now: i64, transport: &mut dyn Transport) {
        if let Some(link) = self.mf_ping_to.take() {
            self.send_ping(link, kind::PING, now, transport);
        }
    }

    /// Sends MFSTART to our master (the bus calls this when `send_mfstart` is set).
    pub fn flush_mfstart(&mut self, transport: &mut dyn Transport) {
        if !std::mem::take(&mut self.send_mfstart) {
            return;
        }
        let link = self.me().replica_of.and_then(|m| self.nodes.get(&m)).and_then(|m| m.link);
        if let Some(link) = link {
            let msg = Message { header: self.header(kind::MFSTART), body: Body::Empty };
            self.send(link, &msg, transport);
        }
    }

    /// The election is won (or a takeover): this replica becomes the master of its
    /// master's slots (clusterFailoverReplaceYourMaster).
    fn replace_my_master(&mut self, now: i64) {
        let me = self.myself;
        let Some(old) = self.me().replica_of.filter(|_| self.me().is_replica()) else { return };
        self.set_node_as_master(me);
        self.replicate(None);
        for slot in 0..SLOTS {
            if self.nodes.get(&old).is_some_and(|o| message::slot_is_set(&o.slots, slot)) {
                self.del_slot(slot);
                self.add_slot(me, slot);
            }
        }
        self.update_state(now);
        self.todo_save = true;
        self.pong_to_all = true;
        self.reset_manual_failover();
        self.changed();
    }

    /// A manual failover starts once our offset reached the paused master's.
    fn handle_manual_failover(&mut self) {
        if self.mf_end == 0 || self.mf_can_start || self.mf_master_offset == -1 {
            return;
        }
        if self.mf_master_offset == self.repl_offset as i64 {
            self.mf_can_start = true;
            self.log("warning", "All master replication stream processed, manual failover can start.".into());
        }
    }

    /// A replica of a failed master runs for its place (clusterHandleSlaveFailover).
    pub fn handle_replica_failover(&mut self, now: i64, transport: &mut dyn Transport) {
        let timeout = self.settings.node_timeout;
        let auth_age = now - self.failover_auth_time;
        let quorum = self.size / 2 + 1;
        let manual = self.mf_end != 0 && self.mf_can_start;
        let auth_timeout = (timeout * 2).max(2000);
        let auth_retry_time = auth_timeout * 2;
        let me = self.me();
        let master = me.replica_of.and_then(|m| self.nodes.get(&m));
        let eligible = me.is_replica()
            && master.is_some_and(|m| (m.failed() || manual) && m.numslots > 0)
            && (!self.settings.replica_no_failover || manual);
        if !eligible {
            return;
        }
        let mut data_age = self.data_age;
        if data_age > timeout {
            data_age -= timeout;
        }
        let validity = self.settings.repl_ping_period_ms + timeout * self.settings.replica_validity_factor;
        if self.settings.replica_validity_factor != 0 && data_age > validity && !manual {
            return;
        }
        if auth_age > auth_retry_time {
            // A new election, after a delay that lets the FAIL spread and better replicas
            // go first.
            self.failover_auth_time = now + 500 + (self.next_random() % 500) as i64;
            self.failover_auth_count = 0;
            self.failover_auth_sent = false;
            self.failover_auth_rank = self.replica_rank();
            self.failover_auth_time += self.failover_auth_rank as i64 * 1000;
            if self.mf_end != 0 {
                self.failover_auth_time = now;
                self.failover_auth_rank = 0;
            }
            let line = format!(
                "Start of election delayed for {} milliseconds (rank #{}, offset {}).",
                self.failover_auth_time - now,
                self.failover_auth_rank,
                self.repl_offset
            );
            self.log("warning", line);
            // Our offset to the other replicas, for their rank.
            let master = self.me().replica_of;
            let links: Vec<LinkId> = self
                .nodes
                .values()
                .filter(|n| n.name != self.myself && n.replica_of == master)
                .filter_map(|n| n.link)
                .collect();
            for link in links {
                self.send_ping(link, kind::PONG, now, transport);
            }
            if self.mf_end == 0 {
                return;
            }
        }
        if !self.failover_auth_sent && self.mf_end == 0 {
            let rank = self.replica_rank();
            if rank > self.failover_auth_rank {
                let added = (rank - self.failover_auth_rank) as i64 * 1000;
                self.failover_auth_time += added;
                self.failover_auth_rank = rank;
                self.log("warning", format!("Replica rank updated to #{rank}, added {added} milliseconds of delay."));
            }
        }
        if now < self.failover_auth_time || auth_age > auth_timeout {
            return;
        }
        if !self.failover_auth_sent {
            self.current_epoch += 1;
            self.failover_auth_epoch = self.current_epoch;
            self.log("warning", format!("Starting a failover election for epoch {}.", self.current_epoch));
            let mut h = self.header(kind::FAILOVER_AUTH_REQUEST);
            if self.mf_end != 0 {
                h.mflags[0] |= message::mflag::FORCEACK;
            }
            let msg = Message { header: h, body: Body::Empty };
            self.broadcast(&msg, transport);
            self.failover_auth_sent = true;
            self.changed();
            return;
        }
        if self.failover_auth_count >= quorum {
            self.log("warning", "Failover election won: I'm the new master.".into());
            if self.me().config_epoch < self.failover_auth_epoch {
                let epoch = self.failover_auth_epoch;
                self.me_mut().config_epoch = epoch;
                self.log("warning", format!("configEpoch set to {epoch} after successful failover"));
            }
            self.replace_my_master(now);
        }
    }

    /// Replicas of `master` not failing (and, with `strict`, not suspected either).
    fn working_replicas(&self, master: NodeName, strict: bool) -> usize {
        self.nodes
            .values()
            .filter(|n| n.replica_of == Some(master) && !n.failed() && !(strict && n.timed_out()))
            .count()
    }

    /// A master left without replicas gets one from the master with the most, if this
    /// replica is the one chosen (clusterHandleSlaveMigration).
    fn handle_replica_migration(&mut self, max_replicas: usize, now: i64) {
        const MIGRATION_DELAY: i64 = 5000;
        if !self.ok {
            return;
        }
        let Some(my_master) = self.me().replica_of else { return };
        if self.working_replicas(my_master, true) <= self.settings.migration_barrier {
            return;
        }
        let mut candidate = self.myself;
        let mut target = None;
        let names: Vec<NodeName> = self.nodes.keys().copied().collect();
        for name in names {
            let n = &self.nodes[&name];
            let ok = if n.is_master() { self.working_replicas(name, false) } else { 0 };
            let orphaned = n.is_master() && !n.failed() && n.flags & flag::MIGRATE_TO != 0 && ok == 0;
            let numslots = n.numslots;
            let n = self.nodes.get_mut(&name).expect("listed");
            if orphaned {
                if target.is_none() && numslots > 0 {
                    target = Some(name);
                }
                if n.orphaned_time == 0 {
                    n.orphaned_time = now;
                }
            } else {
                n.orphaned_time = 0;
            }
            if ok == max_replicas {
                for r in self.nodes.values().filter(|r| r.replica_of == Some(name)) {
                    if r.name < candidate {
                        candidate = r.name;
                    }
                }
            }
        }
        if let Some(target) = target {
            if candidate == self.myself && now - self.nodes[&target].orphaned_time > MIGRATION_DELAY {
                self.log("warning", format!("Migrating to orphaned master {}", node_name_str(&target)));
                self.set_my_master(target);
            }
        }
    }

    // ---- the periodic work ----

    /// clusterCron (every 100 ms).
    pub fn cron(&mut self, now: i64, transport: &mut dyn Transport) {
        self.iteration += 1;
        let timeout = self.settings.node_timeout;
        let handshake_timeout = timeout.max(1000);
        self.pfail_nodes = 0;
        let names: Vec<NodeName> = self.nodes.keys().copied().collect();
        for name in &names {
            let Some(n) = self.nodes.get(name) else { continue };
            if n.flags & (flag::MYSELF | flag::NOADDR) != 0 {
                continue;
            }
            if n.flags & flag::PFAIL != 0 {
                self.pfail_nodes += 1;
            }
            if n.in_handshake() && now - n.ctime > handshake_timeout {
                self.del_node(*name, transport);
                continue;
            }
            if n.link.is_none() {
                let (ip, cport) = (n.ip.clone(), n.cport);
                match transport.connect(&ip, cport) {
                    Some(link) => {
                        self.links
                            .insert(link, LinkInfo { node: Some(*name), inbound: false, ctime: now, connected: false });
                        self.nodes.get_mut(name).expect("known").link = Some(link);
                    }
                    None => {
                        let n = self.nodes.get_mut(name).expect("known");
                        if n.ping_sent == 0 {
                            n.ping_sent = now;
                        }
                    }
                }
            }
        }
        // Once a second, ping one of five random nodes: the one heard from longest ago.
        if self.iteration.is_multiple_of(10) && !names.is_empty() {
            let mut best: Option<(NodeName, i64)> = None;
            for _ in 0..5 {
                let pick = names[(self.next_random() % names.len() as u64) as usize];
                let Some(n) = self.nodes.get(&pick) else { continue };
                if n.link.is_none() || n.ping_sent != 0 || n.flags & (flag::MYSELF | flag::HANDSHAKE) != 0 {
                    continue;
                }
                if best.is_none_or(|(_, pong)| pong > n.pong_received) {
                    best = Some((pick, n.pong_received));
                }
            }
            if let Some((name, _)) = best {
                let link = self.nodes[&name].link.expect("checked");
                self.send_ping(link, kind::PING, now, transport);
            }
        }
        let mut update_state = false;
        let (mut orphaned_masters, mut max_replicas, mut my_master_replicas) = (0, 0, 0);
        let me_replica = self.me().is_replica();
        for name in &names {
            let Some(n) = self.nodes.get(name) else { continue };
            if n.flags & (flag::MYSELF | flag::NOADDR | flag::HANDSHAKE) != 0 {
                continue;
            }
            if me_replica && n.is_master() && !n.failed() {
                let ok = self.working_replicas(*name, false);
                if ok == 0 && n.numslots > 0 && n.flags & flag::MIGRATE_TO != 0 {
                    orphaned_masters += 1;
                }
                max_replicas = max_replicas.max(ok);
                if self.me().replica_of == Some(*name) {
                    my_master_replicas = ok;
                }
            }
            let n = &self.nodes[name];
            let ping_delay = now - n.ping_sent;
            let data_delay = now - n.data_received;
            let connected = n.link.and_then(|l| self.links.get(&l)).filter(|l| l.connected);
            if let Some(info) = connected {
                if now - info.ctime > timeout
                    && n.ping_sent != 0
                    && ping_delay > timeout / 2
                    && data_delay > timeout / 2
                {
                    // The link looks stuck: reconnect.
                    let link = n.link.expect("connected");
                    self.free_link(link, transport);
                }
            }
            // (A link still connecting counts: the PING waits in its buffer, and the time
            // it was "sent" is what detects a node that never answers.)
            let n = &self.nodes[name];
            let due = n.ping_sent == 0 && now - n.pong_received > timeout / 2;
            if let (Some(link), true) = (n.link, due) {
                self.send_ping(link, kind::PING, now, transport);
                continue;
            }
            if n.ping_sent == 0 {
                continue;
            }
            let delay = ping_delay.min(data_delay);
            if delay > timeout && n.flags & (flag::PFAIL | flag::FAIL) == 0 {
                self.nodes.get_mut(name).expect("known").flags |= flag::PFAIL;
                update_state = true;
            }
        }
        // A replica whose replication is not pointed at its master yet (started from
        // nodes.conf, or the master's address came late) starts it.
        if self.me().is_replica() {
            let target = self.me().replica_of.and_then(|m| self.nodes.get(&m)).filter(|m| !m.ip.is_empty());
            let target = target.map(|m| (m.ip.clone(), m.port));
            if target.is_some() && target != self.replicating {
                self.replicate(target);
            }
        }
        if self.mf_end != 0 && self.mf_end < now {
            self.log("warning", "Manual failover timed out.".into());
            self.reset_manual_failover();
        }
        if self.me().is_replica() {
            self.handle_manual_failover();
            self.handle_replica_failover(now, transport);
            if orphaned_masters > 0
                && max_replicas >= 2
                && my_master_replicas == max_replicas
                && self.settings.allow_replica_migration
            {
                self.handle_replica_migration(max_replicas, now);
            }
        }
        if update_state || !self.ok || self.todo_update_state {
            self.update_state(now);
        }
    }

    /// clusterUpdateState: OK when every slot is served by a reachable node (with
    /// `cluster-require-full-coverage`) and a majority of masters is reachable.
    pub fn update_state(&mut self, now: i64) {
        self.todo_update_state = false;
        if self.first_update_state == 0 {
            self.first_update_state = now;
        }
        if self.me().is_master() && !self.ok && now - self.first_update_state < WRITABLE_DELAY {
            return;
        }
        let mut ok = true;
        if self.settings.require_full_coverage {
            // Every slot is served by a node not failing: the union of their slot bitmaps
            // (each node's bitmap mirrors `slots`) covers everything.
            let mut covered = [0u8; BITMAP_LEN];
            for n in self.nodes.values().filter(|n| !n.failed() && n.numslots > 0) {
                for (c, b) in covered.iter_mut().zip(n.slots.iter()) {
                    *c |= b;
                }
            }
            ok = covered.iter().all(|&b| b == 0xFF);
        }
        let mut size = 0;
        let mut reachable = 0;
        for n in self.nodes.values() {
            if n.is_master() && n.numslots > 0 {
                size += 1;
                if n.flags & (flag::FAIL | flag::PFAIL) == 0 {
                    reachable += 1;
                }
            }
        }
        self.size = size;
        if reachable < size / 2 + 1 {
            ok = false;
            self.among_minority_time = now;
        }
        if ok != self.ok {
            let rejoin_delay = self.settings.node_timeout.clamp(MIN_REJOIN_DELAY, MAX_REJOIN_DELAY);
            if ok && self.me().is_master() && now - self.among_minority_time < rejoin_delay {
                return;
            }
            self.log("warning", format!("Cluster state changed: {}", if ok { "ok" } else { "fail" }));
            self.ok = ok;
            self.routing_changed = true;
        }
    }

    /// FAIL messages decided during processing go out here (they need the transport).
    pub fn flush_pending(&mut self, transport: &mut dyn Transport) {
        for name in std::mem::take(&mut self.pending_fail) {
            self.send_fail(name, transport);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Gossip, Header};
    use proptest::prelude::*;

    fn name(c: u8) -> NodeName {
        [c; 40]
    }

    /// A state that knows one other master, `b`, on inbound link 1.
    fn state_knowing_b() -> State {
        let mut state = State::new(name(b'a'), Settings::default(), 1_000_000);
        let mut b = Node::new(name(b'b'), flag::MASTER, 1_000_000);
        b.ip = "127.0.0.1".into();
        b.port = 7001;
        b.cport = 17001;
        state.add_node(b);
        state.link_accepted(1, 1_000_000);
        state
    }

    fn ping_from_b(kind: u16) -> Message {
        let mut h = Header::new(kind, name(b'b'));
        h.port = 7001;
        h.cport = 17001;
        h.flags = flag::MASTER;
        Message { header: h, body: Body::Gossip { entries: vec![], extensions: vec![] } }
    }

    #[test]
    fn a_newer_epoch_claim_takes_the_slots() {
        let mut state = state_knowing_b();
        for slot in 0..10 {
            state.add_slot(name(b'a'), slot);
        }
        let mut msg = ping_from_b(kind::PING);
        msg.header.config_epoch = 5;
        for slot in 0..5 {
            message::set_slot(&mut msg.header.slots, slot);
        }
        assert!(state.process(1, msg, 1_000_100, &mut Recorder::default()));
        assert_eq!(state.slots[0], Some(name(b'b')));
        assert_eq!(state.slots[4], Some(name(b'b')));
        assert_eq!(state.slots[5], Some(name(b'a')));
        assert_eq!(state.nodes[&name(b'b')].numslots, 5);
        assert_eq!(state.me().numslots, 5);
    }

    #[test]
    fn an_older_epoch_claim_is_answered_with_an_update() {
        let mut state = state_knowing_b();
        state.me_mut().config_epoch = 9;
        state.add_slot(name(b'a'), 3);
        let mut recorder = Recorder::default();
        // Our outbound link to b, where the UPDATE goes.
        state.links.insert(2, LinkInfo { node: Some(name(b'b')), inbound: false, ctime: 0, connected: true });
        state.nodes.get_mut(&name(b'b')).unwrap().link = Some(2);
        let mut msg = ping_from_b(kind::PING);
        msg.header.config_epoch = 1;
        message::set_slot(&mut msg.header.slots, 3);
        state.process(1, msg, 1_000_100, &mut recorder);
        assert_eq!(state.slots[3], Some(name(b'a')), "the older claim loses");
        let update = recorder.sent.iter().filter(|(l, _)| *l == 2).find_map(|(_, bytes)| {
            let m = Message::decode(bytes).ok()?;
            matches!(m.body, Body::Update { .. }).then_some(m)
        });
        let Some(Message { body: Body::Update { config_epoch, node, slots }, .. }) = update else {
            panic!("no UPDATE sent: {:?}", recorder.sent.len())
        };
        assert_eq!((config_epoch, node), (9, name(b'a')));
        assert!(message::slot_is_set(&slots, 3));
    }

    #[test]
    fn gossip_adds_unknown_nodes_but_not_forgotten_ones() {
        let mut state = state_knowing_b();
        let gossip = |c: u8| Gossip {
            name: name(c),
            ping_sent: 0,
            pong_received: 0,
            ip: b"127.0.0.1".to_vec(),
            port: 7002,
            cport: 17002,
            flags: flag::MASTER,
            pport: 0,
        };
        state.blacklist.insert(name(b'd'), 2_000_000);
        let mut msg = ping_from_b(kind::PING);
        msg.body = Body::Gossip { entries: vec![gossip(b'c'), gossip(b'd')], extensions: vec![] };
        state.process(1, msg, 1_000_100, &mut Recorder::default());
        assert!(state.nodes.contains_key(&name(b'c')));
        assert!(!state.nodes.contains_key(&name(b'd')), "FORGET keeps a node out for a minute");
    }

    #[test]
    fn a_master_unheard_past_the_timeout_is_failing_once_a_majority_says_so() {
        let mut state = state_knowing_b();
        state.settings.node_timeout = 1000;
        // Three masters with slots: a, b and c; b stops answering.
        state.add_slot(name(b'a'), 0);
        state.add_slot(name(b'b'), 1);
        let mut c = Node::new(name(b'c'), flag::MASTER, 1_000_000);
        c.ip = "127.0.0.1".into();
        state.add_node(c);
        state.add_slot(name(b'c'), 2);
        state.update_state(1_000_000);
        let b = state.nodes.get_mut(&name(b'b')).unwrap();
        b.ping_sent = 1_000_000;
        b.data_received = 1_000_000;
        b.link = None;
        state.cron(1_002_000, &mut Recorder::default());
        assert!(state.nodes[&name(b'b')].timed_out(), "PFAIL after the timeout");
        assert!(!state.nodes[&name(b'b')].failed());
        // c reports b failing: with our own view that is 2 of 3 masters.
        state.link_accepted(5, 1_002_000);
        let mut h = Header::new(kind::PING, name(b'c'));
        h.flags = flag::MASTER;
        message::set_slot(&mut h.slots, 2);
        let g = Gossip {
            name: name(b'b'),
            ping_sent: 0,
            pong_received: 0,
            ip: b"127.0.0.1".to_vec(),
            port: 7001,
            cport: 17001,
            flags: flag::MASTER | flag::PFAIL,
            pport: 0,
        };
        let msg = Message { header: h, body: Body::Gossip { entries: vec![g], extensions: vec![] } };
        state.process(5, msg, 1_002_100, &mut Recorder::default());
        assert!(state.nodes[&name(b'b')].failed(), "FAIL with a majority of masters");
    }

    proptest! {
        // Whatever a peer sends that decodes, the state processes it without panicking,
        // known sender or not, on inbound and outbound links.
        #[test]
        fn hostile_messages_never_panic(seed in any::<u64>(), flips in proptest::collection::vec((0usize..3000, any::<u8>()), 0..40),
                                         kind in 0u16..12, count in 0u16..3) {
            let mut state = state_knowing_b();
            state.links.insert(2, LinkInfo { node: Some(name(b'b')), inbound: false, ctime: 0, connected: true });
            let mut msg = ping_from_b(kind);
            msg.header.current_epoch = seed % 7;
            msg.header.config_epoch = seed % 5;
            let g = Gossip { name: name(b'a' + (seed % 4) as u8), ping_sent: 0, pong_received: 0, ip: b"1.2.3.4".to_vec(),
                             port: 1, cport: 2, flags: (seed >> 8) as u16, pport: 0 };
            msg.body = match kind {
                0..=2 => Body::Gossip { entries: vec![g; count as usize], extensions: vec![] },
                3 => Body::Fail { about: name(b'a' + (seed % 3) as u8) },
                4 | 10 => Body::Publish { channel: b"c".to_vec(), message: b"m".to_vec() },
                7 => Body::Update { config_epoch: seed % 9, node: name(b'a' + (seed % 3) as u8), slots: Box::new([0xF0; BITMAP_LEN]) },
                9 => Body::Module { module_id: 1, kind: 1, payload: vec![] },
                _ => Body::Empty,
            };
            let mut bytes = msg.encode();
            for (at, byte) in flips {
                if at < bytes.len() && at >= 8 {
                    bytes[at] = byte;
                }
            }
            if let Ok(decoded) = Message::decode(&bytes) {
                let again = decoded.clone();
                state.process(1, decoded, 1_000_100, &mut Recorder::default());
                state.process(2, again, 1_000_200, &mut Recorder::default());
                state.cron(1_100_000, &mut Recorder::default());
            }
        }
    }
}
