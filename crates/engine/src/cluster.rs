//! Cluster mode's routing: whether this node serves a command's keys, or which redirection
//! the client gets (Redis's getNodeByQuery and clusterRedirectClient). The cluster layer
//! (`crates/cluster`) owns the cluster's state (nodes, epochs, the bus) and publishes a
//! [`SlotMap`] here whenever slot ownership, migrations or the cluster's health change; the
//! engine only reads it, once per keyed command.

use std::any::Any;
use std::sync::{Arc, OnceLock};

use hashbrown::HashMap;
use parking_lot::RwLock;

use crate::command::CommandSpec;
use crate::slot::{key_hash_slot, SLOT_COUNT};

/// No node: the slot is not assigned.
pub const NO_NODE: u16 = u16::MAX;

/// Who serves each slot, as the cluster layer last published it.
#[derive(Debug, Clone)]
pub struct SlotMap {
    /// Per slot, an index into `endpoints` (or [`NO_NODE`]).
    pub owner: Box<[u16]>,
    /// Per node, the `host:port` a redirection names.
    pub endpoints: Vec<String>,
    pub myself: u16,
    /// This node's master, when it is a replica ([`NO_NODE`] otherwise).
    pub my_master: u16,
    /// Slots this node is handing to another node (CLUSTER SETSLOT MIGRATING).
    pub migrating_to: HashMap<u16, u16>,
    /// Slots this node is taking from another node (CLUSTER SETSLOT IMPORTING).
    pub importing_from: HashMap<u16, u16>,
    /// The cluster's state as this node sees it (CLUSTER INFO's cluster_state).
    pub ok: bool,
}

impl SlotMap {
    /// A node alone, serving nothing: the map before the cluster layer publishes one.
    pub fn alone() -> SlotMap {
        SlotMap {
            owner: vec![NO_NODE; SLOT_COUNT].into_boxed_slice(),
            endpoints: vec![String::new()],
            myself: 0,
            my_master: NO_NODE,
            migrating_to: HashMap::new(),
            importing_from: HashMap::new(),
            ok: false,
        }
    }
}

/// Why a command is not served here: the redirection or error the client gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    CrossSlot,
    /// Keys of a slot being moved are split between the two nodes.
    TryAgain,
    Ask {
        slot: u16,
        endpoint: String,
    },
    Moved {
        slot: u16,
        endpoint: String,
    },
    Down,
    DownReadOnly,
    DownUnbound,
}

impl Redirect {
    /// The error line, as clusterRedirectClient writes it.
    pub fn line(&self) -> String {
        match self {
            Redirect::CrossSlot => "CROSSSLOT Keys in request don't hash to the same slot".into(),
            Redirect::TryAgain => "TRYAGAIN Multiple keys request during rehashing of slot".into(),
            Redirect::Down => "CLUSTERDOWN The cluster is down".into(),
            Redirect::DownReadOnly => "CLUSTERDOWN The cluster is down and only accepts read commands".into(),
            Redirect::DownUnbound => "CLUSTERDOWN Hash slot not served".into(),
            Redirect::Ask { slot, endpoint } => format!("ASK {slot} {endpoint}"),
            Redirect::Moved { slot, endpoint } => format!("MOVED {slot} {endpoint}"),
        }
    }

    /// What a script's redis.call says instead (scriptVerifyClusterState).
    pub fn script_line(&self) -> &'static str {
        match self {
            Redirect::DownReadOnly => {
                "Script attempted to execute a write command while the cluster is down and readonly"
            }
            Redirect::Down => "Script attempted to execute a command while the cluster is down",
            _ => "Script attempted to access a non local key in a cluster node",
        }
    }
}

/// One command of a request, as routing sees it.
pub struct Routed<'a> {
    pub spec: &'a CommandSpec,
    pub args: &'a [&'a [u8]],
}

/// What the request is, beyond its keys.
#[derive(Default, Clone, Copy)]
pub struct RouteFlags {
    pub asking: bool,
    pub readonly: bool,
    /// The command writes (for EXEC: EXEC's own flags, which never say so: Redis's quirk,
    /// so a transaction is not refused with the read-only CLUSTERDOWN).
    pub writes: bool,
    /// A queued transaction holds a write (for a READONLY replica's reads).
    pub transaction_writes: bool,
    pub allow_reads_when_down: bool,
    pub allow_pubsubshard_when_down: bool,
}

/// The cluster switch, the published map, and the cluster layer's own state.
pub struct Cluster {
    enabled: bool,
    map: RwLock<Arc<SlotMap>>,
    layer: OnceLock<Arc<dyn Any + Send + Sync>>,
    commands: OnceLock<crate::command::Handler>,
    /// Sends a PUBLISH (false) or SPUBLISH (true) to the other nodes.
    publisher: OnceLock<Publisher>,
    /// Applies CONFIG SET of the cluster's directives (announced addresses, timeouts).
    on_config: OnceLock<ConfigHook>,
    /// DEBUG CLUSTERLINK.
    debug: OnceLock<crate::command::Handler>,
}

pub type ConfigHook = Box<dyn Fn(&crate::Engine) + Send + Sync>;

pub type Publisher = Box<dyn Fn(&[u8], &[u8], bool) + Send + Sync>;

impl Cluster {
    pub fn new(enabled: bool) -> Cluster {
        Cluster {
            enabled,
            map: RwLock::new(Arc::new(SlotMap::alone())),
            layer: OnceLock::new(),
            commands: OnceLock::new(),
            publisher: OnceLock::new(),
            on_config: OnceLock::new(),
            debug: OnceLock::new(),
        }
    }

    /// `cluster-enabled yes` (fixed at start-up).
    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// This node is a replica in the cluster (as the last published map says).
    pub fn is_replica(&self) -> bool {
        self.enabled && self.map.read().my_master != NO_NODE
    }

    pub fn publish(&self, map: SlotMap) {
        *self.map.write() = Arc::new(map);
    }

    pub fn map(&self) -> Arc<SlotMap> {
        self.map.read().clone()
    }

    /// Installs the cluster layer (once), for its commands to reach (downcast).
    pub fn set_layer(&self, layer: Arc<dyn Any + Send + Sync>) {
        let _ = self.layer.set(layer);
    }

    pub fn layer(&self) -> Option<&Arc<dyn Any + Send + Sync>> {
        self.layer.get()
    }

    /// The handler of the CLUSTER subcommands the layer serves (all but KEYSLOT,
    /// COUNTKEYSINSLOT and GETKEYSINSLOT).
    pub fn set_commands(&self, handler: crate::command::Handler) {
        let _ = self.commands.set(handler);
    }

    pub fn commands(&self) -> Option<crate::command::Handler> {
        self.commands.get().copied()
    }

    pub fn set_debug(&self, handler: crate::command::Handler) {
        let _ = self.debug.set(handler);
    }

    pub fn debug(&self) -> Option<crate::command::Handler> {
        self.debug.get().copied()
    }

    pub fn set_config_hook(&self, hook: ConfigHook) {
        let _ = self.on_config.set(hook);
    }

    pub(crate) fn config_changed(&self, engine: &crate::Engine) {
        if let Some(hook) = self.on_config.get() {
            hook(engine);
        }
    }

    pub fn set_publisher(&self, publisher: Publisher) {
        let _ = self.publisher.set(publisher);
    }

    /// A message published here goes to the other nodes' subscribers too.
    pub fn published(&self, channel: &[u8], message: &[u8], sharded: bool) {
        if let Some(publisher) = self.publisher.get() {
            publisher(channel, message, sharded);
        }
    }
}

/// The channel or key arguments routing looks at: keys, plus the shard channels of
/// SPUBLISH, SSUBSCRIBE and SUNSUBSCRIBE (Redis routes them by slot as keys).
pub fn routing_keys<'a>(spec: &CommandSpec, args: &[&'a [u8]], mut f: impl FnMut(&'a [u8])) {
    match spec.name.as_str() {
        "spublish" => {
            if let Some(channel) = args.get(1) {
                f(channel);
            }
        }
        "ssubscribe" | "sunsubscribe" => args.iter().skip(1).for_each(|c| f(c)),
        _ => spec.each_key_position(args, |p| f(args[p])),
    }
}

pub fn is_pubsubshard(spec: &CommandSpec) -> bool {
    matches!(spec.name.as_str(), "spublish" | "ssubscribe" | "sunsubscribe")
}

/// getNodeByQuery: None when this node serves the request (keys or not), or the
/// redirection. `exists` says whether a key is here (asked only for slots being moved);
/// the slot of the keys comes back with Ok, for a script to hold its later commands to it.
pub fn route(
    map: &SlotMap,
    commands: &[Routed<'_>],
    flags: RouteFlags,
    mut exists: impl FnMut(&[u8]) -> bool,
) -> Result<Option<u16>, Redirect> {
    let mut first: Option<&[u8]> = None;
    let (mut slot, mut owner) = (0u16, NO_NODE);
    let (mut migrating, mut importing, mut multiple_keys) = (false, false, false);
    let (mut missing, mut existing) = (0usize, 0usize);
    let pubsubshard = commands.first().is_some_and(|c| is_pubsubshard(c.spec));
    let migrate = commands.first().is_some_and(|c| c.spec.name == "migrate");
    let mut failure = None;
    for command in commands {
        routing_keys(command.spec, command.args, |key| {
            if failure.is_some() {
                return;
            }
            let this_slot = key_hash_slot(key) as u16;
            match first {
                None => {
                    first = Some(key);
                    slot = this_slot;
                    owner = map.owner[slot as usize];
                    if owner == NO_NODE {
                        failure = Some(Redirect::DownUnbound);
                        return;
                    }
                    if owner == map.myself && map.migrating_to.contains_key(&slot) {
                        migrating = true;
                    } else if map.importing_from.contains_key(&slot) {
                        importing = true;
                    }
                }
                Some(k) if k != key => {
                    if this_slot != slot {
                        failure = Some(Redirect::CrossSlot);
                        return;
                    }
                    multiple_keys = true;
                }
                Some(_) => {}
            }
            if (migrating || importing) && !pubsubshard {
                if exists(key) {
                    existing += 1;
                } else {
                    missing += 1;
                }
            }
        });
        if let Some(f) = failure {
            return Err(f);
        }
    }
    if owner == NO_NODE {
        // No key at all: served here.
        return Ok(None);
    }
    if !map.ok {
        if pubsubshard {
            if !flags.allow_pubsubshard_when_down {
                return Err(Redirect::Down);
            }
        } else if !flags.allow_reads_when_down {
            return Err(Redirect::Down);
        } else if flags.writes {
            return Err(Redirect::DownReadOnly);
        }
    }
    if (migrating || importing) && migrate {
        return Ok(Some(slot));
    }
    if migrating && missing > 0 {
        if existing > 0 {
            return Err(Redirect::TryAgain);
        }
        let to = map.migrating_to[&slot];
        return Err(Redirect::Ask { slot, endpoint: map.endpoints[to as usize].clone() });
    }
    if importing && flags.asking {
        if multiple_keys && missing > 0 {
            return Err(Redirect::TryAgain);
        }
        return Ok(Some(slot));
    }
    let writes = flags.writes || flags.transaction_writes;
    if (flags.readonly || pubsubshard) && !writes && map.my_master != NO_NODE && map.my_master == owner {
        return Ok(Some(slot));
    }
    if owner != map.myself {
        return Err(Redirect::Moved { slot, endpoint: map.endpoints[owner as usize].clone() });
    }
    Ok(Some(slot))
}

impl crate::Engine {
    /// Whether a command (or, for EXEC, the queued transaction) is served here in cluster
    /// mode; the error line to reply instead. Inside a script, Redis's script wording, and
    /// a script that declared no keys keeps to the slot it touched first.
    pub(crate) fn cluster_refusal(
        &self,
        client: &mut crate::exec::Client,
        spec: &CommandSpec,
        args: &[&[u8]],
        queued: Option<&[Vec<Vec<u8>>]>,
        in_script: bool,
    ) -> Option<String> {
        let map = self.cluster.map();
        let mut flags = RouteFlags {
            asking: client.cluster_asking || spec.has_flag(crate::command::flags::ASKING),
            readonly: client.cluster_readonly,
            writes: false,
            transaction_writes: false,
            allow_reads_when_down: false,
            allow_pubsubshard_when_down: true,
        };
        if !map.ok {
            let config = self.config.read();
            flags.allow_reads_when_down = config.get_bool("cluster-allow-reads-when-down");
            flags.allow_pubsubshard_when_down = config.get_bool("cluster-allow-pubsubshard-when-down");
        }
        let exists = |key: &[u8]| {
            let now_ms = self.clock.now_ms();
            let mut shard = self.keyspace.lock(self.keyspace.shard_of(key));
            shard.dbs[0].peek(key, now_ms).is_some()
        };
        // A script's own commands run with the shards of its keys held (locking one again
        // would deadlock): their keys are taken as present.
        let present = |_: &[u8]| true;
        let result = match queued {
            // PERF: one command (the common case) is routed without building a list.
            None => {
                flags.writes = self.writes_and_stale_ok(spec, args).0;
                let one = [Routed { spec, args }];
                if in_script {
                    route(&map, &one, flags, present)
                } else {
                    route(&map, &one, flags, exists)
                }
            }
            Some(queued) => {
                let resolved: Vec<(&CommandSpec, Vec<&[u8]>)> = queued
                    .iter()
                    .filter_map(|command| {
                        let command_args: Vec<&[u8]> = command.iter().map(|a| &a[..]).collect();
                        match self.table.resolve(&command_args) {
                            crate::command::Resolved::Found(s) => Some((s, command_args)),
                            _ => None,
                        }
                    })
                    .collect();
                for (s, a) in &resolved {
                    flags.transaction_writes |= self.writes_and_stale_ok(s, a).0;
                }
                let commands: Vec<Routed<'_>> = resolved.iter().map(|(s, a)| Routed { spec: s, args: a }).collect();
                route(&map, &commands, flags, exists)
            }
        };
        match result {
            Ok(slot) => {
                if !in_script {
                    // What a script this command runs keeps to (Redis's `c->slot`).
                    client.script_slot = slot;
                } else {
                    if let Some(slot) = slot {
                        match client.script_slot {
                            None => client.script_slot = Some(slot),
                            Some(first) if first != slot && !client.script_cross_slot => {
                                return Some(
                                    "ERR Script attempted to access keys that do not hash to the same slot".into(),
                                );
                            }
                            Some(_) => {}
                        }
                    }
                }
                None
            }
            Err(redirect) if in_script => Some(format!("ERR {}", redirect.script_line())),
            Err(redirect) => Some(redirect.line()),
        }
    }
}

impl crate::Engine {
    /// After the slot map changed: clients blocked on keys this node no longer serves get
    /// the redirection, and all of them get CLUSTERDOWN while the cluster is down
    /// (Redis's clusterRedirectBlockedClientIfNeeded; Redis looks once a second, this runs
    /// when the map changes). A slot being imported keeps its waiters.
    pub fn redirect_blocked_clients(&self) {
        if !self.cluster.enabled() || self.blocked_count.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            return;
        }
        let map = self.cluster.map();
        for handle in self.clients.all() {
            let waiter = handle.blocked_on.lock().clone();
            let Some(waiter) = waiter else { continue };
            let Some(key) = waiter.keys.first() else { continue };
            let line = if !map.ok {
                Some(Redirect::Down.line())
            } else {
                let slot = key_hash_slot(key) as u16;
                let owner = map.owner[slot as usize];
                if owner == map.myself || map.importing_from.contains_key(&slot) {
                    None
                } else if owner == NO_NODE {
                    Some(Redirect::DownUnbound.line())
                } else {
                    Some(Redirect::Moved { slot, endpoint: map.endpoints[owner as usize].clone() }.line())
                }
            };
            if let Some(line) = line {
                self.end_wait_with(&waiter, crate::blocking::Unblock::Timeout, Some(&line));
            }
        }
    }
}
