//! Redis Cluster for quince-server (`cluster-enabled yes`): the cluster bus on
//! `port + 10000` (or `cluster-port`) speaking Redis 7.0's binary protocol, so quince and
//! redis-server nodes form one cluster; `nodes.conf`; the CLUSTER commands. The engine
//! routes commands by the slot map this layer publishes (`quince_engine::cluster`).
//! docs/cluster.md says what is built and what is not yet.

pub mod bus;
pub mod commands;
pub mod message;
pub mod nodes_conf;
pub mod state;

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use quince_engine::cluster::{SlotMap, NO_NODE};
use quince_engine::Engine;

use crate::message::{NodeName, SLOTS};
use crate::state::{Settings, State};

/// A message published here, encoded for one link.
pub(crate) type Published = (state::LinkId, Vec<u8>);

/// A log line's level and text, for the server's log.
pub type LogFn = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// The cluster layer: the state, where it is saved, and the bus's wake-up.
pub struct ClusterLayer {
    pub state: Mutex<State>,
    pub config_path: PathBuf,
    pub(crate) waker: Mutex<Option<Arc<mio::Waker>>>,
    pub(crate) engine: Weak<Engine>,
    pub(crate) log: LogFn,
    /// The server's client port (the announced ports default to it).
    pub(crate) port: u16,
    /// PUBLISH/SPUBLISH messages for the bus thread to send.
    pub(crate) outbox: Mutex<Vec<Published>>,
    /// The nodes.conf lock (held for the process's life, as Redis's flock).
    _lock: Option<std::fs::File>,
}

impl ClusterLayer {
    pub fn of(engine: &Engine) -> Option<&ClusterLayer> {
        engine.cluster.layer()?.downcast_ref::<ClusterLayer>()
    }

    /// Wakes the bus (a command changed something the network must hear now).
    pub fn wake(&self) {
        if let Some(w) = self.waker.lock().as_ref() {
            let _ = w.wake();
        }
    }

    pub(crate) fn log(&self, level: &str, line: &str) {
        (self.log)(level, line);
    }

    /// Saves nodes.conf now, synced (CLUSTER SAVECONFIG, start-up).
    pub fn save(&self, state: &State) -> std::io::Result<()> {
        nodes_conf::save(&self.config_path, state, true)
    }

    /// Saves nodes.conf if a change asked for it, synced if the change asked for that.
    pub fn save_pending(&self, state: &mut State) -> std::io::Result<()> {
        if !state.todo_save {
            return Ok(());
        }
        let fsync = state.todo_fsync;
        state.todo_save = false;
        state.todo_fsync = false;
        nodes_conf::save(&self.config_path, state, fsync)
    }

    /// Publishes the slot map the engine routes by.
    pub fn publish_routing(&self, state: &mut State) {
        let Some(engine) = self.engine.upgrade() else { return };
        engine.cluster.publish(slot_map(state));
        engine.redirect_blocked_clients();
        // Shard channels of slots this shard no longer serves: their subscribers are
        // unsubscribed (Redis's removeChannelsInSlot).
        for slot in std::mem::take(&mut state.removed_slots) {
            engine.pubsub.drop_shard_channels_in_slot(slot as usize, now_ms());
        }
    }
}

/// The engine's view of the state: owners by index, endpoints, migrations, health.
pub fn slot_map(state: &State) -> SlotMap {
    let names: Vec<NodeName> = state.nodes.keys().copied().collect();
    let index = |name: &NodeName| names.binary_search(name).map_or(NO_NODE, |i| i as u16);
    // What MOVED and ASK name (getPreferredEndpoint): the address, the hostname (or "?"),
    // or nothing.
    let endpoints = state
        .nodes
        .values()
        .map(|n| match state.settings.preferred_endpoint {
            0 => format!("{}:{}", n.ip, n.port),
            1 if n.hostname.is_empty() => format!("?:{}", n.port),
            1 => format!("{}:{}", n.hostname, n.port),
            _ => format!(":{}", n.port),
        })
        .collect();
    // From each node's bitmap (they mirror `state.slots`), skipping empty bytes.
    let mut owner = vec![NO_NODE; SLOTS].into_boxed_slice();
    for (i, node) in state.nodes.values().enumerate().filter(|(_, n)| n.numslots > 0) {
        for (byte_index, &byte) in node.slots.iter().enumerate().filter(|(_, b)| **b != 0) {
            for bit in 0..8 {
                if byte & (1 << bit) != 0 {
                    owner[byte_index * 8 + bit] = i as u16;
                }
            }
        }
    }
    let me = state.me();
    SlotMap {
        owner,
        endpoints,
        myself: index(&state.myself),
        my_master: if me.is_replica() { me.replica_of.as_ref().map_or(NO_NODE, index) } else { NO_NODE },
        migrating_to: state.migrating_to.iter().map(|(s, n)| (*s, index(n))).collect(),
        importing_from: state.importing_from.iter().map(|(s, n)| (*s, index(n))).collect(),
        ok: state.ok,
    }
}

/// The settings the state reads, from the server's configuration.
pub fn settings_from(engine: &Engine, port: u16) -> Settings {
    let config = engine.config.read();
    let announce_port = config.get_int("cluster-announce-port") as u16;
    let announce_bus_port = config.get_int("cluster-announce-bus-port") as u16;
    let cluster_port = config.get_int("cluster-port") as u16;
    let bus_port = if cluster_port != 0 { cluster_port } else { port.wrapping_add(10000) };
    Settings {
        node_timeout: config.get_int("cluster-node-timeout"),
        port: if announce_port != 0 { announce_port } else { port },
        cport: if announce_bus_port != 0 { announce_bus_port } else { bus_port },
        pport: 0,
        announce_ip: config.get("cluster-announce-ip").unwrap_or("").to_string(),
        announce_hostname: config.get("cluster-announce-hostname").unwrap_or("").to_string(),
        require_full_coverage: config.get_bool("cluster-require-full-coverage"),
        allow_replica_migration: config.get_bool("cluster-allow-replica-migration"),
        replica_validity_factor: config.get_int("cluster-replica-validity-factor"),
        repl_ping_period_ms: config.get_int("repl-ping-replica-period") * 1000,
        replica_no_failover: config.get_bool("cluster-replica-no-failover"),
        migration_barrier: config.get_int("cluster-migration-barrier").max(0) as usize,
        link_sendbuf_limit: config.get_int("cluster-link-sendbuf-limit").max(0) as usize,
        preferred_endpoint: config.get_int("cluster-preferred-endpoint-type"),
    }
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Locks nodes.conf for this process (as Redis's clusterLockConfig): a second server on the
/// same file stops at start-up.
fn lock_config(path: &std::path::Path) -> Result<std::fs::File, String> {
    use std::os::unix::io::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("Can't open {} in order to acquire a lock: {e}", path.display()))?;
    // SAFETY: flock on a descriptor this function owns.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r != 0 {
        return Err(format!(
            "Sorry, the cluster configuration file {} is already used by a different Redis Cluster node. Please make sure that different nodes use different cluster configuration files.",
            path.display()
        ));
    }
    Ok(file)
}

/// Starts cluster mode: loads (or creates) nodes.conf, binds the bus, starts its thread,
/// and installs the CLUSTER commands. `port`: the server's client port.
pub fn start(engine: &Arc<Engine>, port: u16, bind: &str, log: LogFn) -> Result<(), String> {
    let now = now_ms();
    let (dir, file) = {
        let config = engine.config.read();
        (
            config.get("dir").unwrap_or(".").to_string(),
            config.get("cluster-config-file").unwrap_or("nodes.conf").to_string(),
        )
    };
    let config_path = std::path::Path::new(&dir).join(&file);
    let settings = settings_from(engine, port);
    let existing = std::fs::read_to_string(&config_path).ok().filter(|t| !t.trim().is_empty());
    let lock = lock_config(&config_path)?;
    let state = match existing {
        Some(text) => {
            let loaded = nodes_conf::parse(&text, now)?;
            let mut state = State::new(loaded.myself, settings.clone(), now);
            state.nodes.clear();
            for mut node in loaded.nodes {
                if node.name == loaded.myself {
                    // Our own addresses come from this start's configuration.
                    node.port = settings.port;
                    node.cport = settings.cport;
                    node.hostname = settings.announce_hostname.clone();
                    node.flags |= message::flag::MYSELF;
                }
                state.nodes.insert(node.name, node);
            }
            let owners: Vec<(NodeName, Vec<usize>)> = state
                .nodes
                .values()
                .filter(|n| n.is_master())
                .map(|n| (n.name, (0..SLOTS).filter(|&s| message::slot_is_set(&n.slots, s)).collect()))
                .collect();
            // Masters with replicas on record may receive migrating replicas.
            let masters: Vec<NodeName> = state.nodes.values().filter_map(|n| n.replica_of).collect();
            for m in masters {
                if let Some(m) = state.nodes.get_mut(&m) {
                    m.flags |= message::flag::MIGRATE_TO;
                }
            }
            for (name, slots) in owners {
                for slot in slots {
                    state.slots[slot] = Some(name);
                }
            }
            state.current_epoch = loaded.current_epoch;
            state.last_vote_epoch = loaded.last_vote_epoch;
            state.migrating_to = loaded.migrating.into_iter().collect();
            state.importing_from = loaded.importing.into_iter().collect();
            log("notice", &format!("Node configuration loaded, I'm {}", state::node_name_str(&state.myself)));
            state
        }
        None => {
            let state = State::new(state::random_name(), settings.clone(), now);
            log("notice", &format!("No cluster configuration found, I'm {}", state::node_name_str(&state.myself)));
            state
        }
    };
    let mut state = state;
    state.apply_settings(settings.clone());
    let layer = Arc::new(ClusterLayer {
        state: Mutex::new(state),
        config_path,
        waker: Mutex::new(None),
        engine: Arc::downgrade(engine),
        log,
        outbox: Mutex::new(Vec::new()),
        port,
        _lock: Some(lock),
    });
    {
        let mut state = layer.state.lock();
        layer.save(&state).map_err(|e| format!("Can't save the cluster configuration file: {e}"))?;
        layer.publish_routing(&mut state);
    }
    engine.cluster.set_layer(layer.clone());
    engine.cluster.set_commands(commands::cluster_command);
    engine.cluster.set_debug(commands::debug_cluster);
    {
        let weak = Arc::downgrade(&layer);
        engine.cluster.set_config_hook(Box::new(move |engine| {
            if let Some(layer) = weak.upgrade() {
                let settings = settings_from(engine, layer.port);
                let mut state = layer.state.lock();
                state.apply_settings(settings);
                if state.routing_changed {
                    state.routing_changed = false;
                    layer.publish_routing(&mut state);
                }
                drop(state);
                layer.wake();
            }
        }));
    }
    {
        let weak = Arc::downgrade(&layer);
        engine.cluster.set_publisher(Box::new(move |channel, message, sharded| {
            if let Some(layer) = weak.upgrade() {
                bus::queue_publish(&layer, channel, message, sharded);
            }
        }));
    }
    bus::spawn(layer, bind, settings.cport)
}

/// After the dataset loaded (verifyClusterConfigWithData): keys only in database 0, and a
/// master takes the unassigned slots it holds keys for (or imports those another node
/// owns). Not for a replica: its data follows its master.
pub fn verify_with_data(engine: &Engine) -> Result<(), String> {
    let Some(layer) = ClusterLayer::of(engine) else { return Ok(()) };
    let keyspace = &engine.keyspace;
    let mut slots_with_keys = vec![false; SLOTS];
    for s in 0..keyspace.shard_count() {
        let shard = keyspace.lock(s);
        if shard.dbs.iter().skip(1).any(|db| !db.is_empty()) {
            return Err("You can't have keys in a DB different than DB 0 when in Cluster mode. Exiting.".into());
        }
        for (key, _) in shard.dbs[0].iter_all() {
            slots_with_keys[quince_engine::slot::key_hash_slot(key)] = true;
        }
    }
    let mut state = layer.state.lock();
    if state.me().is_replica() {
        return Ok(());
    }
    let me = state.myself;
    let mut changed = false;
    for (slot, _) in slots_with_keys.iter().enumerate().filter(|(_, k)| **k) {
        match state.slots[slot] {
            Some(owner) if owner == me => {}
            _ if state.importing_from.contains_key(&(slot as u16)) => {}
            None => {
                layer.log("warning", &format!("I have keys for unassigned slot {slot}. Taking responsibility for it."));
                state.add_slot(me, slot);
                changed = true;
            }
            Some(owner) => {
                layer.log(
                    "warning",
                    &format!("I have keys for slot {slot}, but the slot is assigned to another node. Setting it to importing state."),
                );
                state.importing_from.insert(slot as u16, owner);
                changed = true;
            }
        }
    }
    if changed {
        layer.save(&state).map_err(|e| format!("Can't save the cluster configuration file: {e}"))?;
        layer.publish_routing(&mut state);
    }
    Ok(())
}
