//! CLUSTER, READONLY, READWRITE and ASKING. Standalone (`cluster-enabled no`), Redis answers
//! every one of them with the same error, and so does quince. In cluster mode the
//! subcommands that only read the local dataset run here; the others belong to the cluster
//! layer (`crates/cluster`), which installs their handler (`Cluster::set_commands`).

use crate::command::CommandSpec;
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::reply::ReplySink;
use crate::slot::{key_hash_slot, SLOT_COUNT};

const DISABLED: &str = "ERR This instance has cluster support disabled";

fn cluster(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if !ctx.engine.cluster.enabled() {
        return Err(CmdError::msg(DISABLED));
    }
    let sub = args[1].to_ascii_lowercase();
    match (sub.as_slice(), args.len()) {
        (b"keyslot", 3) => {
            out.integer(key_hash_slot(args[2]) as i64);
            Ok(())
        }
        (b"countkeysinslot", 3) => {
            let slot = crate::cmd::parse_i64(args[2])?;
            if !(0..SLOT_COUNT as i64).contains(&slot) {
                return Err(CmdError::msg("ERR Invalid slot"));
            }
            out.integer(ctx.engine.keyspace.count_in_slot(0, slot as usize) as i64);
            Ok(())
        }
        (b"getkeysinslot", 4) => {
            let slot = crate::cmd::parse_i64(args[2])?;
            let count = crate::cmd::parse_i64(args[3])?;
            if !(0..SLOT_COUNT as i64).contains(&slot) || count < 0 {
                return Err(CmdError::msg("ERR Invalid slot or number of keys"));
            }
            let keys = ctx.engine.keyspace.keys_in_slot(0, slot as usize, count as usize);
            out.array(keys.len());
            for key in keys {
                out.bulk(&key);
            }
            Ok(())
        }
        _ => match ctx.engine.cluster.commands() {
            Some(handler) => handler(ctx, args, out),
            None => Err(CmdError::msg("ERR the cluster layer is not running")),
        },
    }
}

/// READONLY, READWRITE and ASKING: a connection flag, in cluster mode only.
fn connection_flag(ctx: &mut Ctx<'_>, out: &mut dyn ReplySink, set: impl FnOnce(&mut Ctx<'_>)) -> CmdResult {
    if !ctx.engine.cluster.enabled() {
        return Err(CmdError::msg(DISABLED));
    }
    set(ctx);
    out.simple("OK");
    Ok(())
}

fn readonly(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    connection_flag(ctx, out, |ctx| ctx.client.cluster_readonly = true)
}

fn readwrite(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    connection_flag(ctx, out, |ctx| ctx.client.cluster_readonly = false)
}

fn asking(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    connection_flag(ctx, out, |ctx| ctx.client.cluster_asking = true)
}

/// (name, arity, flags, since, summary, complexity, tips) of Redis 7.0's CLUSTER subcommands.
type Sub = (&'static str, i32, &'static str, &'static str, &'static str, &'static str, &'static [&'static str]);
const SUBCOMMANDS: &[Sub] = &[
    (
        "addslots",
        -3,
        "no_async_loading admin stale",
        "3.0.0",
        "Assign new hash slots to receiving node",
        "O(N) where N is the total number of hash slot arguments",
        &[],
    ),
    (
        "addslotsrange",
        -4,
        "no_async_loading admin stale",
        "7.0.0",
        "Assign new hash slots to receiving node",
        "O(N) where N is the total number of the slots between the start slot and end slot arguments.",
        &[],
    ),
    (
        "bumpepoch",
        2,
        "no_async_loading admin stale",
        "3.0.0",
        "Advance the cluster config epoch",
        "O(1)",
        &["nondeterministic_output"],
    ),
    (
        "count-failure-reports",
        3,
        "admin stale",
        "3.0.0",
        "Return the number of failure reports active for a given node",
        "O(N) where N is the number of failure reports",
        &["nondeterministic_output"],
    ),
    ("countkeysinslot", 3, "stale", "3.0.0", "Return the number of local keys in the specified hash slot", "O(1)", &[]),
    (
        "delslots",
        -3,
        "no_async_loading admin stale",
        "3.0.0",
        "Set hash slots as unbound in receiving node",
        "O(N) where N is the total number of hash slot arguments",
        &[],
    ),
    (
        "delslotsrange",
        -4,
        "no_async_loading admin stale",
        "7.0.0",
        "Set hash slots as unbound in receiving node",
        "O(N) where N is the total number of the slots between the start slot and end slot arguments.",
        &[],
    ),
    (
        "failover",
        -2,
        "no_async_loading admin stale",
        "3.0.0",
        "Forces a replica to perform a manual failover of its master.",
        "O(1)",
        &[],
    ),
    ("flushslots", 2, "no_async_loading admin stale", "3.0.0", "Delete a node's own slots information", "O(1)", &[]),
    ("forget", 3, "no_async_loading admin stale", "3.0.0", "Remove a node from the nodes table", "O(1)", &[]),
    (
        "getkeysinslot",
        4,
        "stale",
        "3.0.0",
        "Return local key names in the specified hash slot",
        "O(log(N)) where N is the number of requested keys",
        &["nondeterministic_output"],
    ),
    ("help", 2, "loading stale", "5.0.0", "Show helpful text about the different subcommands", "O(1)", &[]),
    ("info", 2, "stale", "3.0.0", "Provides info about Redis Cluster node state", "O(1)", &["nondeterministic_output"]),
    (
        "keyslot",
        3,
        "stale",
        "3.0.0",
        "Returns the hash slot of the specified key",
        "O(N) where N is the number of bytes in the key",
        &[],
    ),
    (
        "links",
        2,
        "stale",
        "7.0.0",
        "Returns a list of all TCP links to and from peer nodes in cluster",
        "O(N) where N is the total number of Cluster nodes",
        &["nondeterministic_output"],
    ),
    (
        "meet",
        -4,
        "no_async_loading admin stale",
        "3.0.0",
        "Force a node cluster to handshake with another node",
        "O(1)",
        &[],
    ),
    ("myid", 2, "stale", "3.0.0", "Return the node id", "O(1)", &[]),
    (
        "nodes",
        2,
        "stale",
        "3.0.0",
        "Get Cluster config for the node",
        "O(N) where N is the total number of Cluster nodes",
        &["nondeterministic_output"],
    ),
    (
        "replicas",
        3,
        "admin stale",
        "5.0.0",
        "List replica nodes of the specified master node",
        "O(1)",
        &["nondeterministic_output"],
    ),
    (
        "replicate",
        3,
        "no_async_loading admin stale",
        "3.0.0",
        "Reconfigure a node as a replica of the specified master node",
        "O(1)",
        &[],
    ),
    (
        "reset",
        -2,
        "admin stale noscript",
        "3.0.0",
        "Reset a Redis Cluster node",
        "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect.",
        &[],
    ),
    (
        "saveconfig",
        2,
        "no_async_loading admin stale",
        "3.0.0",
        "Forces the node to save cluster state on disk",
        "O(1)",
        &[],
    ),
    (
        "set-config-epoch",
        3,
        "no_async_loading admin stale",
        "3.0.0",
        "Set the configuration epoch in a new node",
        "O(1)",
        &[],
    ),
    ("setslot", -4, "no_async_loading admin stale", "3.0.0", "Bind a hash slot to a specific node", "O(1)", &[]),
    (
        "shards",
        2,
        "stale",
        "7.0.0",
        "Get array of cluster slots to node mappings",
        "O(N) where N is the total number of cluster nodes",
        &["nondeterministic_output"],
    ),
    (
        "slaves",
        3,
        "admin stale",
        "3.0.0",
        "List replica nodes of the specified master node",
        "O(1)",
        &["nondeterministic_output"],
    ),
    (
        "slots",
        2,
        "stale",
        "3.0.0",
        "Get array of Cluster slot to node mappings",
        "O(N) where N is the total number of Cluster nodes",
        &["nondeterministic_output"],
    ),
];

pub fn register() -> Vec<CommandSpec> {
    let subs = SUBCOMMANDS
        .iter()
        .map(|(name, arity, flags, since, summary, complexity, tips)| {
            let spec = CommandSpec::new(name, *arity, flags, "", cluster)
                .doc("cluster", since, summary, complexity)
                .tips(tips);
            if *name == "slaves" {
                spec.deprecated("5.0.0", "`CLUSTER REPLICAS`")
            } else {
                spec
            }
        })
        .collect();
    vec![
        CommandSpec::container("cluster", "", "", subs).doc(
            "cluster",
            "3.0.0",
            "A container for cluster commands",
            "Depends on subcommand.",
        ),
        CommandSpec::new("readonly", 1, "fast loading stale", "connection", readonly).doc(
            "cluster",
            "3.0.0",
            "Enables read queries for a connection to a cluster replica node",
            "O(1)",
        ),
        CommandSpec::new("readwrite", 1, "fast loading stale", "connection", readwrite).doc(
            "cluster",
            "3.0.0",
            "Disables read queries for a connection to a cluster replica node",
            "O(1)",
        ),
        CommandSpec::new("asking", 1, "fast", "connection", asking).doc(
            "cluster",
            "3.0.0",
            "Sent by cluster clients after an -ASK redirect",
            "O(1)",
        ),
    ]
}
