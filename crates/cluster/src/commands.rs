//! The CLUSTER subcommands the cluster layer serves (cluster.c's clusterCommand). KEYSLOT,
//! COUNTKEYSINSLOT and GETKEYSINSLOT read only the local dataset and run in the engine.

use quince_engine::{CmdError, CmdResult, Ctx, ReplySink};

use crate::message::{flag, NodeName, SLOTS};
use crate::nodes_conf;
use crate::state::{node_name_str, Node, State, BLACKLIST_TTL_MS};
use crate::{now_ms, ClusterLayer};

const HELP: &[&str] = &[
    "ADDSLOTS <slot> [<slot> ...]",
    "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH",
    "    Advance the cluster config epoch.",
    "COUNT-FAILURE-REPORTS <node-id>",
    "    Return number of failure reports for <node-id>.",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "DELSLOTS <slot> [<slot> ...]",
    "    Delete slots information from current node.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
    "FAILOVER [FORCE|TAKEOVER]",
    "    Promote current replica node to being a master.",
    "FORGET <node-id>",
    "    Remove a node from the cluster.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "FLUSHSLOTS",
    "    Delete current node own slots information.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "MEET <ip> <port> [<bus-port>]",
    "    Connect nodes into a working cluster.",
    "MYID",
    "    Return the node id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "REPLICATE <node-id>",
    "    Configure current node as replica to <node-id>.",
    "RESET [HARD|SOFT]",
    "    Reset current node (default: soft).",
    "SET-CONFIG-EPOCH <epoch>",
    "    Set config epoch of current node.",
    "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    "    Set slot state.",
    "REPLICAS <node-id>",
    "    Return <node-id> replicas.",
    "SAVECONFIG",
    "    Force saving cluster configuration on disk.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "LINKS",
    "    Return information about all network links between this node and its peers.",
    "    Output format is an array where each array element is a map containing attributes of a link",
];

fn text(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).into_owned()
}

fn lookup(state: &State, arg: &[u8]) -> Option<NodeName> {
    let name: NodeName = arg.try_into().ok()?;
    state.nodes.contains_key(&name).then_some(name)
}

fn unknown_node(arg: &[u8]) -> CmdError {
    CmdError::msg(format!("ERR Unknown node {}", text(arg)))
}

/// getSlotOrReply.
fn slot_arg(arg: &[u8]) -> Result<usize, CmdError> {
    quince_resp::parse_i64_strict(arg)
        .filter(|s| (0..SLOTS as i64).contains(s))
        .map(|s| s as usize)
        .ok_or_else(|| CmdError::msg("ERR Invalid or out of range slot"))
}

/// After a change: nodes.conf saved and the slot map published before the reply (as
/// Redis's clusterBeforeSleep runs before replies are written), the bus woken.
fn finish(layer: &ClusterLayer, state: &mut State) -> Result<(), CmdError> {
    if state.todo_update_state {
        state.update_state(now_ms());
    }
    layer.save_pending(state).map_err(|e| CmdError::msg(format!("ERR error saving the cluster node config: {e}")))?;
    if state.routing_changed {
        state.routing_changed = false;
        layer.publish_routing(state);
    }
    // (Effects such as starting replication are carried out by the bus thread, woken now.)
    layer.wake();
    Ok(())
}

/// CLUSTER <subcommand> for the layer's subcommands.
pub fn cluster_command(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let Some(layer) = ClusterLayer::of(ctx.engine) else {
        return Err(CmdError::msg("ERR This instance has cluster support disabled"));
    };
    let sub = args[1].to_ascii_lowercase();
    let argc = args.len();
    match (sub.as_slice(), argc) {
        (b"help", 2) => return quince_engine::cmd::server::reply_subcommand_help(out, "CLUSTER", HELP),
        (b"meet", 4 | 5) => {
            let port = quince_resp::parse_i64_strict(args[3])
                .ok_or_else(|| CmdError::msg(format!("ERR Invalid TCP base port specified: {}", text(args[3]))))?;
            let cport = match args.get(4) {
                Some(a) => quince_resp::parse_i64_strict(a)
                    .ok_or_else(|| CmdError::msg(format!("ERR Invalid TCP bus port specified: {}", text(a))))?,
                None => port + 10000,
            };
            let invalid =
                || CmdError::msg(format!("ERR Invalid node address specified: {}:{}", text(args[2]), text(args[3])));
            let ip: std::net::IpAddr = text(args[2]).parse().map_err(|_| invalid())?;
            if !(0..=65535).contains(&port) || !(0..=65535).contains(&cport) {
                return Err(invalid());
            }
            // (Redis normalizes the address and says OK for one already in handshake.)
            let ip = match ip {
                std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(v6.to_string(), |v4| v4.to_string()),
                v4 => v4.to_string(),
            };
            let mut state = layer.state.lock();
            state.start_handshake(&ip, port as u16, cport as u16, now_ms());
            finish(layer, &mut state)?;
            out.simple("OK");
        }
        (b"nodes", 2) => {
            let state = layer.state.lock();
            out.verbatim(b"txt", nodes_conf::describe(&state).as_bytes());
        }
        (b"myid", 2) => {
            let state = layer.state.lock();
            out.bulk(&state.myself);
        }
        (b"slots", 2) => {
            let state = layer.state.lock();
            reply_slots(ctx, &state, out);
        }
        (b"shards", 2) => {
            let state = layer.state.lock();
            reply_shards(ctx, &state, out);
        }
        (b"flushslots", 2) => {
            if ctx.engine.keyspace.db_len(0) != 0 {
                return Err(CmdError::msg("ERR DB must be empty to perform CLUSTER FLUSHSLOTS."));
            }
            let mut state = layer.state.lock();
            let me = state.myself;
            for slot in 0..SLOTS {
                if state.slots[slot] == Some(me) {
                    state.del_slot(slot);
                }
            }
            state.todo_save = true;
            state.todo_update_state = true;
            finish(layer, &mut state)?;
            out.simple("OK");
        }
        (b"addslots" | b"delslots", 3..) => {
            let del = sub.as_slice() == b"delslots";
            let slots = args[2..].iter().map(|a| slot_arg(a)).collect::<Result<Vec<_>, _>>()?;
            let mut state = layer.state.lock();
            update_slots(layer, &mut state, slots.iter().map(|&s| (s, s)), del)?;
            out.simple("OK");
        }
        (b"addslotsrange" | b"delslotsrange", 4..) => {
            if argc % 2 == 1 {
                return Err(CmdError::msg(format!(
                    "ERR wrong number of arguments for 'cluster|{}' command",
                    String::from_utf8_lossy(&sub)
                )));
            }
            let del = sub.as_slice() == b"delslotsrange";
            let mut ranges = Vec::new();
            for pair in args[2..].chunks(2) {
                let (start, end) = (slot_arg(pair[0])?, slot_arg(pair[1])?);
                if start > end {
                    return Err(CmdError::msg(format!(
                        "ERR start slot number {start} is greater than end slot number {end}"
                    )));
                }
                ranges.push((start, end));
            }
            let mut state = layer.state.lock();
            update_slots(layer, &mut state, ranges.into_iter(), del)?;
            out.simple("OK");
        }
        (b"setslot", 4..) => {
            setslot(ctx, layer, args)?;
            out.simple("OK");
        }
        (b"bumpepoch", 2) => {
            let mut state = layer.state.lock();
            let bumped = bump_epoch_without_consensus(&mut state);
            let epoch = state.me().config_epoch;
            finish(layer, &mut state)?;
            out.simple(&format!("{} {epoch}", if bumped { "BUMPED" } else { "STILL" }));
        }
        (b"info", 2) => {
            let state = layer.state.lock();
            out.verbatim(b"txt", info_text(&state).as_bytes());
        }
        (b"saveconfig", 2) => {
            let state = layer.state.lock();
            layer.save(&state).map_err(|e| CmdError::msg(format!("ERR error saving the cluster node config: {e}")))?;
            out.simple("OK");
        }
        (b"forget", 3) => {
            let mut state = layer.state.lock();
            let Some(name) = lookup(&state, args[2]) else { return Err(unknown_node(args[2])) };
            if name == state.myself {
                return Err(CmdError::msg("ERR I tried hard but I can't forget myself..."));
            }
            if state.me().is_replica() && state.me().replica_of == Some(name) {
                return Err(CmdError::msg("ERR Can't forget my master!"));
            }
            state.blacklist.insert(name, now_ms() + BLACKLIST_TTL_MS);
            state.del_node(name, &mut crate::state::Recorder::default());
            state.todo_save = true;
            state.todo_update_state = true;
            finish(layer, &mut state)?;
            out.simple("OK");
        }
        (b"replicate", 3) => {
            let mut state = layer.state.lock();
            let Some(name) = lookup(&state, args[2]) else { return Err(unknown_node(args[2])) };
            if name == state.myself {
                return Err(CmdError::msg("ERR Can't replicate myself"));
            }
            if state.nodes[&name].is_replica() {
                return Err(CmdError::msg("ERR I can only replicate a master, not a replica."));
            }
            if state.me().is_master() && (state.me().numslots != 0 || ctx.engine.keyspace.db_len(0) != 0) {
                return Err(CmdError::msg("ERR To set a master the node must be empty and without assigned slots."));
            }
            state.set_my_master(name);
            finish(layer, &mut state)?;
            out.simple("OK");
        }
        (b"slaves" | b"replicas", 3) => {
            let state = layer.state.lock();
            let Some(name) = lookup(&state, args[2]) else { return Err(unknown_node(args[2])) };
            if state.nodes[&name].is_replica() {
                return Err(CmdError::msg("ERR The specified node is not a master"));
            }
            let replicas: Vec<&Node> = state.nodes.values().filter(|n| n.replica_of == Some(name)).collect();
            out.array(replicas.len());
            for r in replicas {
                out.bulk(nodes_conf::node_line(&state, r).as_bytes());
            }
        }
        (b"count-failure-reports", 3) => {
            let state = layer.state.lock();
            let Some(name) = lookup(&state, args[2]) else { return Err(unknown_node(args[2])) };
            let validity = state.settings.node_timeout * 2;
            let now = now_ms();
            let count = state.nodes[&name].fail_reports.iter().filter(|(_, at)| now - at <= validity).count();
            out.integer(count as i64);
        }
        (b"failover", 2 | 3) => {
            if let Some(option) = args.get(2) {
                if !option.eq_ignore_ascii_case(b"force") && !option.eq_ignore_ascii_case(b"takeover") {
                    return Err(CmdError::Syntax);
                }
            }
            let (force, takeover) = match args.get(2) {
                Some(a) if a.eq_ignore_ascii_case(b"takeover") => (true, true),
                Some(_) => (true, false),
                None => (false, false),
            };
            let mut state = layer.state.lock();
            if state.me().is_master() {
                return Err(CmdError::msg("ERR You should send CLUSTER FAILOVER to a replica"));
            }
            let Some(master) = state.me().replica_of.filter(|m| state.nodes.contains_key(m)) else {
                return Err(CmdError::msg("ERR I'm a replica but my master is unknown to me"));
            };
            let m = &state.nodes[&master];
            if !force && (m.failed() || m.link.is_none()) {
                return Err(CmdError::msg("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE"));
            }
            state.start_manual_failover(force, takeover, now_ms());
            finish(layer, &mut state)?;
            out.simple("OK");
        }
        (b"set-config-epoch", 3) => {
            let epoch = quince_engine::cmd::parse_i64(args[2])?;
            let mut state = layer.state.lock();
            if epoch < 0 {
                return Err(CmdError::msg(format!("ERR Invalid config epoch specified: {epoch}")));
            }
            if state.nodes.len() > 1 {
                return Err(CmdError::msg(
                    "ERR The user can assign a config epoch only when the node does not know any other node.",
                ));
            }
            if state.me().config_epoch != 0 {
                return Err(CmdError::msg("ERR Node config epoch is already non-zero"));
            }
            let epoch = epoch as u64;
            let me = state.myself;
            state.nodes.get_mut(&me).expect("myself").config_epoch = epoch;
            (layer.log)("warning", &format!("configEpoch set to {epoch} via CLUSTER SET-CONFIG-EPOCH"));
            if state.current_epoch < epoch {
                state.current_epoch = epoch;
            }
            state.todo_save = true;
            state.todo_update_state = true;
            finish(layer, &mut state)?;
            out.simple("OK");
        }
        (b"reset", 2 | 3) => {
            let hard = match args.get(2) {
                None => false,
                Some(a) if a.eq_ignore_ascii_case(b"hard") => true,
                Some(a) if a.eq_ignore_ascii_case(b"soft") => false,
                Some(_) => return Err(CmdError::Syntax),
            };
            let mut state = layer.state.lock();
            if state.me().is_master() && ctx.engine.keyspace.db_len(0) != 0 {
                return Err(CmdError::msg("ERR CLUSTER RESET can't be called with master nodes containing keys"));
            }
            let was_replica = state.me().is_replica();
            state.reset(hard, now_ms());
            if was_replica {
                // A replica turned master: it stops replicating, and its data goes.
                state.replicate(None);
                let keyspace = &ctx.engine.keyspace;
                for s in 0..keyspace.shard_count() {
                    keyspace.lock(s).dbs[0].clear();
                }
            }
            finish(layer, &mut state)?;
            out.simple("OK");
        }
        (b"links", 2) => {
            let state = layer.state.lock();
            reply_links(&state, out);
        }
        _ => {
            return Err(CmdError::msg(format!(
                "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLUSTER HELP.",
                quince_engine::error::truncate_c(args[1], 128)
            )))
        }
    }
    Ok(())
}

/// ADDSLOTS/DELSLOTS(RANGE): every slot checked before any changes (checkSlotAssignmentsOrReply).
fn update_slots(
    layer: &ClusterLayer,
    state: &mut State,
    ranges: impl Iterator<Item = (usize, usize)>,
    del: bool,
) -> Result<(), CmdError> {
    let mut seen = vec![false; SLOTS];
    for (start, end) in ranges {
        for (slot, seen) in seen.iter_mut().enumerate().take(end + 1).skip(start) {
            if del && state.slots[slot].is_none() {
                return Err(CmdError::msg(format!("ERR Slot {slot} is already unassigned")));
            }
            if !del && state.slots[slot].is_some() {
                return Err(CmdError::msg(format!("ERR Slot {slot} is already busy")));
            }
            if std::mem::replace(seen, true) {
                return Err(CmdError::msg(format!("ERR Slot {slot} specified multiple times")));
            }
        }
    }
    let me = state.myself;
    for (slot, _) in seen.iter().enumerate().filter(|(_, s)| **s) {
        state.importing_from.remove(&(slot as u16));
        if del {
            state.del_slot(slot);
        } else {
            state.add_slot(me, slot);
        }
    }
    state.todo_save = true;
    state.todo_update_state = true;
    finish(layer, state)
}

/// clusterBumpConfigEpochWithoutConsensus: a new epoch unless ours is already the greatest
/// and unique.
pub fn bump_epoch_without_consensus(state: &mut State) -> bool {
    let max_epoch = state.nodes.values().map(|n| n.config_epoch).max().unwrap_or(0).max(state.current_epoch);
    let mine = state.me().config_epoch;
    if mine == 0 || mine != max_epoch {
        state.current_epoch += 1;
        let epoch = state.current_epoch;
        let me = state.myself;
        state.nodes.get_mut(&me).expect("myself").config_epoch = epoch;
        state.todo_save = true;
        state.todo_fsync = true;
        state.effects.push(crate::state::Effect::Log("warning", format!("New configEpoch set to {epoch}")));
        true
    } else {
        false
    }
}

/// CLUSTER SETSLOT (the caller replies OK).
fn setslot(ctx: &mut Ctx<'_>, layer: &ClusterLayer, args: &[&[u8]]) -> Result<(), CmdError> {
    let mut state = layer.state.lock();
    if state.me().is_replica() {
        return Err(CmdError::msg("ERR Please use SETSLOT only with masters."));
    }
    let slot = slot_arg(args[2])?;
    let action = args[3].to_ascii_lowercase();
    let me = state.myself;
    let target = |state: &State, unknown: &str| -> Result<NodeName, CmdError> {
        let Some(n) = lookup(state, args[4]) else {
            return Err(CmdError::msg(format!("ERR {unknown} {}", text(args[4]))));
        };
        if state.nodes[&n].is_replica() {
            return Err(CmdError::msg("ERR Target node is not a master"));
        }
        Ok(n)
    };
    match (action.as_slice(), args.len()) {
        (b"migrating", 5) => {
            if state.slots[slot] != Some(me) {
                return Err(CmdError::msg(format!("ERR I'm not the owner of hash slot {slot}")));
            }
            let n = target(&state, "I don't know about node")?;
            state.migrating_to.insert(slot as u16, n);
        }
        (b"importing", 5) => {
            if state.slots[slot] == Some(me) {
                return Err(CmdError::msg(format!("ERR I'm already the owner of hash slot {slot}")));
            }
            let n = target(&state, "I don't know about node")?;
            state.importing_from.insert(slot as u16, n);
        }
        (b"stable", 4) => {
            state.importing_from.remove(&(slot as u16));
            state.migrating_to.remove(&(slot as u16));
        }
        (b"node", 5) => {
            let n = target(&state, "Unknown node")?;
            let keys = ctx.engine.keyspace.count_in_slot(0, slot);
            if state.slots[slot] == Some(me) && n != me && keys != 0 {
                return Err(CmdError::msg(format!(
                    "ERR Can't assign hashslot {slot} to a different node while I still hold keys for this hash slot."
                )));
            }
            if keys == 0 {
                state.migrating_to.remove(&(slot as u16));
            }
            let was_mine = state.slots[slot] == Some(me);
            state.del_slot(slot);
            state.add_slot(n, slot);
            if was_mine && n != me && state.me().numslots == 0 && state.settings.allow_replica_migration {
                (layer.log)(
                    "warning",
                    &format!(
                        "Configuration change detected. Reconfiguring myself as a replica of {}",
                        node_name_str(&n)
                    ),
                );
                state.set_my_master(n);
            }
            if n == me && state.importing_from.remove(&(slot as u16)).is_some() {
                if bump_epoch_without_consensus(&mut state) {
                    (layer.log)("warning", &format!("configEpoch updated after importing slot {slot}"));
                }
                state.pong_to_all = true;
            }
        }
        _ => {
            return Err(CmdError::msg("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"));
        }
    }
    state.todo_save = true;
    state.todo_update_state = true;
    state.routing_changed = true;
    finish(layer, &mut state)
}

fn info_text(state: &State) -> String {
    use std::fmt::Write as _;
    let (mut assigned, mut ok, mut pfail, mut fail) = (0, 0, 0, 0);
    for owner in state.slots.iter().flatten() {
        assigned += 1;
        match state.nodes.get(owner) {
            Some(n) if n.failed() => fail += 1,
            Some(n) if n.timed_out() => pfail += 1,
            _ => ok += 1,
        }
    }
    let me = state.me();
    let my_epoch = match me.replica_of.and_then(|m| state.nodes.get(&m)) {
        Some(m) if me.is_replica() => m.config_epoch,
        _ => me.config_epoch,
    };
    let mut s = String::new();
    let _ = write!(
        s,
        "cluster_state:{}\r\ncluster_slots_assigned:{assigned}\r\ncluster_slots_ok:{ok}\r\n\
         cluster_slots_pfail:{pfail}\r\ncluster_slots_fail:{fail}\r\ncluster_known_nodes:{}\r\n\
         cluster_size:{}\r\ncluster_current_epoch:{}\r\ncluster_my_epoch:{my_epoch}\r\n",
        if state.ok { "ok" } else { "fail" },
        state.nodes.len(),
        state.size,
        state.current_epoch,
    );
    let mut total = 0;
    for (k, count) in state.stats_sent.iter().enumerate().filter(|(_, c)| **c != 0) {
        total += count;
        let _ = write!(s, "cluster_stats_messages_{}_sent:{count}\r\n", crate::message::kind::name(k as u16));
    }
    let _ = write!(s, "cluster_stats_messages_sent:{total}\r\n");
    let mut total = 0;
    for (k, count) in state.stats_received.iter().enumerate().filter(|(_, c)| **c != 0) {
        total += count;
        let _ = write!(s, "cluster_stats_messages_{}_received:{count}\r\n", crate::message::kind::name(k as u16));
    }
    let _ = write!(s, "cluster_stats_messages_received:{total}\r\n");
    let _ = write!(s, "total_cluster_links_buffer_limit_exceeded:{}\r\n", state.links_buffer_limit_exceeded);
    s
}

/// `cluster-preferred-endpoint-type`: 0 ip, 1 hostname, 2 unknown-endpoint.
fn endpoint_type(ctx: &Ctx<'_>) -> i64 {
    ctx.engine.config.read().get_int("cluster-preferred-endpoint-type")
}

fn preferred_endpoint(kind: i64, n: &Node) -> Option<String> {
    match kind {
        0 => Some(n.ip.clone()),
        1 => Some(if n.hostname.is_empty() { "?".into() } else { n.hostname.clone() }),
        _ => None,
    }
}

/// addNodeToNodeReply.
fn node_reply(kind: i64, n: &Node, out: &mut dyn ReplySink) {
    out.array(4);
    match preferred_endpoint(kind, n) {
        Some(e) => out.bulk(e.as_bytes()),
        None => out.null(),
    }
    out.integer(i64::from(n.port));
    out.bulk(&n.name);
    let show_ip = kind != 0;
    let show_hostname = kind != 1 && !n.hostname.is_empty();
    out.map(usize::from(show_ip) + usize::from(show_hostname));
    if show_ip {
        out.bulk(b"ip");
        out.bulk(n.ip.as_bytes());
    }
    if show_hostname {
        out.bulk(b"hostname");
        out.bulk(n.hostname.as_bytes());
    }
}

fn replica_available(state: &State, n: &Node) -> bool {
    if n.failed() {
        return false;
    }
    let offset = if n.flags & flag::MYSELF != 0 { state.repl_offset } else { n.repl_offset };
    offset != 0
}

/// CLUSTER SLOTS: one entry per run of consecutive slots with one owner.
fn reply_slots(ctx: &Ctx<'_>, state: &State, out: &mut dyn ReplySink) {
    let kind = endpoint_type(ctx);
    let mut runs: Vec<(usize, usize, NodeName)> = Vec::new();
    for slot in 0..SLOTS {
        let Some(owner) = state.slots[slot] else { continue };
        match runs.last_mut() {
            Some((_, end, o)) if *o == owner && *end + 1 == slot => *end = slot,
            _ => runs.push((slot, slot, owner)),
        }
    }
    out.array(runs.len());
    for (start, end, owner) in runs {
        let master = &state.nodes[&owner];
        let replicas: Vec<&Node> =
            state.nodes.values().filter(|n| n.replica_of == Some(owner) && replica_available(state, n)).collect();
        out.array(3 + replicas.len());
        out.integer(start as i64);
        out.integer(end as i64);
        node_reply(kind, master, out);
        for r in replicas {
            node_reply(kind, r, out);
        }
    }
}

/// addNodeDetailsToShardReply.
fn shard_node_reply(kind: i64, state: &State, n: &Node, out: &mut dyn ReplySink) {
    let offset = if n.flags & flag::MYSELF != 0 { state.repl_offset } else { n.repl_offset };
    let endpoint = preferred_endpoint(kind, n).unwrap_or_else(|| "?".into());
    let fields = 7 + usize::from(n.port != 0) + usize::from(!n.hostname.is_empty()) - 1;
    out.map(fields);
    out.bulk(b"id");
    out.bulk(&n.name);
    if n.port != 0 {
        out.bulk(b"port");
        out.integer(i64::from(n.port));
    }
    out.bulk(b"ip");
    out.bulk(n.ip.as_bytes());
    out.bulk(b"endpoint");
    out.bulk(endpoint.as_bytes());
    if !n.hostname.is_empty() {
        out.bulk(b"hostname");
        out.bulk(n.hostname.as_bytes());
    }
    out.bulk(b"role");
    out.bulk(if n.is_replica() { b"replica" } else { b"master" });
    out.bulk(b"replication-offset");
    out.integer(offset as i64);
    out.bulk(b"health");
    let health: &[u8] = if n.failed() {
        b"fail"
    } else if n.is_replica() && offset == 0 {
        b"loading"
    } else {
        b"online"
    };
    out.bulk(health);
}

/// CLUSTER SHARDS: one entry per master, its slot ranges and its nodes.
fn reply_shards(ctx: &Ctx<'_>, state: &State, out: &mut dyn ReplySink) {
    let kind = endpoint_type(ctx);
    let masters: Vec<&Node> = state.nodes.values().filter(|n| n.is_master()).collect();
    out.array(masters.len());
    for m in masters {
        out.map(2);
        out.bulk(b"slots");
        let ranges = nodes_conf::slot_ranges(m);
        out.array(ranges.len() * 2);
        for (start, end) in ranges {
            out.integer(start as i64);
            out.integer(end as i64);
        }
        out.bulk(b"nodes");
        let members: Vec<&Node> =
            std::iter::once(m).chain(state.nodes.values().filter(|n| n.replica_of == Some(m.name))).collect();
        out.array(members.len());
        for n in members {
            shard_node_reply(kind, state, n, out);
        }
    }
}

/// CLUSTER LINKS: each link to or from a known node.
fn reply_links(state: &State, out: &mut dyn ReplySink) {
    let now = now_ms();
    let mut links = Vec::new();
    for n in state.nodes.values() {
        for (link, dir) in [(n.link, "to"), (n.inbound_link, "from")] {
            if let Some(id) = link {
                let created = state.links.get(&id).map_or(0, |l| l.ctime);
                links.push((dir, n, created));
            }
        }
    }
    out.array(links.len());
    for (dir, n, created) in links {
        out.map(6);
        out.bulk(b"direction");
        out.bulk(dir.as_bytes());
        out.bulk(b"node");
        out.bulk(&n.name);
        out.bulk(b"create-time");
        out.integer(created);
        out.bulk(b"events");
        out.bulk(b"r");
        out.bulk(b"send-buffer-allocated");
        out.integer(0);
        out.bulk(b"send-buffer-used");
        out.integer(0);
        let _ = now;
    }
}

/// DEBUG's cluster subcommands: CLUSTERLINK KILL TO|FROM|ALL <node-id>, and
/// DROP-CLUSTER-PACKET-FILTER <type> (-1: none).
pub fn debug_cluster(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let Some(layer) = ClusterLayer::of(ctx.engine) else {
        return Err(CmdError::msg("ERR Debug option only available for cluster mode enabled setup!"));
    };
    if args[1].eq_ignore_ascii_case(b"drop-cluster-packet-filter") {
        let kind = quince_engine::cmd::parse_i64(args[2])?;
        layer.state.lock().drop_filter = u16::try_from(kind).ok();
        out.simple("OK");
        return Ok(());
    }
    let mut state = layer.state.lock();
    let Some(name) = lookup(&state, args[4]) else { return Err(unknown_node(args[4])) };
    let direction = args[3].to_ascii_lowercase();
    let (to, from) = match direction.as_slice() {
        b"to" => (true, false),
        b"from" => (false, true),
        b"all" => (true, true),
        _ => return Err(CmdError::msg(format!("ERR Unknown direction {}", text(args[3])))),
    };
    state.kill_links(name, to, from);
    drop(state);
    layer.wake();
    out.simple("OK");
    Ok(())
}
