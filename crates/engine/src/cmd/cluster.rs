//! CLUSTER, READONLY and READWRITE. Quince runs as a standalone server (`cluster-enabled
//! no`), where Redis answers every one of them with the same error; so does quince.

use crate::command::CommandSpec;
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::reply::ReplySink;

fn cluster_disabled(_ctx: &mut Ctx<'_>, _args: &[&[u8]], _out: &mut dyn ReplySink) -> CmdResult {
    Err(CmdError::msg("ERR This instance has cluster support disabled"))
}

/// (name, arity, flags, summary) of Redis 7.0's CLUSTER subcommands.
const SUBCOMMANDS: &[(&str, i32, &str, &str)] = &[
    ("addslots", -3, "no_async_loading admin stale", "Assign new hash slots to receiving node"),
    ("addslotsrange", -4, "no_async_loading admin stale", "Assign new hash slots to receiving node"),
    ("bumpepoch", 2, "no_async_loading admin stale", "Advance the cluster config epoch"),
    ("count-failure-reports", 3, "admin stale", "Return the number of failure reports active for a given node"),
    ("countkeysinslot", 3, "stale", "Return the number of local keys in the specified hash slot"),
    ("delslots", -3, "no_async_loading admin stale", "Set hash slots as unbound in receiving node"),
    ("delslotsrange", -4, "no_async_loading admin stale", "Set hash slots as unbound in receiving node"),
    ("failover", -2, "no_async_loading admin stale", "Forces a replica to perform a manual failover of its master."),
    ("flushslots", 2, "no_async_loading admin stale", "Delete a node's own slots information"),
    ("forget", 3, "no_async_loading admin stale", "Remove a node from the nodes table"),
    ("getkeysinslot", 4, "stale", "Return local key names in the specified hash slot"),
    ("help", 2, "loading stale", "Show helpful text about the different subcommands"),
    ("info", 2, "stale", "Provides info about Redis Cluster node state"),
    ("keyslot", 3, "stale", "Returns the hash slot of the specified key"),
    ("links", 2, "stale", "Returns a list of all TCP links to and from peer nodes in cluster"),
    ("meet", -4, "no_async_loading admin stale", "Force a node cluster to handshake with another node"),
    ("myid", 2, "stale", "Return the node id"),
    ("nodes", 2, "stale", "Get Cluster config for the node"),
    ("replicas", 3, "admin stale", "List replica nodes of the specified master node"),
    ("replicate", 3, "no_async_loading admin stale", "Reconfigure a node as a replica of the specified master node"),
    ("reset", -2, "admin stale noscript", "Reset a Redis Cluster node"),
    ("saveconfig", 2, "no_async_loading admin stale", "Forces the node to save cluster state on disk"),
    ("set-config-epoch", 3, "no_async_loading admin stale", "Set the configuration epoch in a new node"),
    ("setslot", -4, "no_async_loading admin stale", "Bind a hash slot to a specific node"),
    ("shards", 2, "stale", "Get array of cluster slots to node mappings"),
    ("slaves", 3, "admin stale", "List replica nodes of the specified master node"),
    ("slots", 2, "stale", "Get array of Cluster slot to node mappings"),
];

pub fn register() -> Vec<CommandSpec> {
    let subs = SUBCOMMANDS
        .iter()
        .map(|(name, arity, flags, summary)| {
            CommandSpec::new(name, *arity, flags, "", cluster_disabled).doc("cluster", "3.0.0", summary, "")
        })
        .collect();
    vec![
        CommandSpec::container("cluster", "", "", subs).doc(
            "cluster",
            "3.0.0",
            "A container for cluster commands",
            "Depends on subcommand.",
        ),
        CommandSpec::new("readonly", 1, "fast loading stale", "connection", cluster_disabled).doc(
            "cluster",
            "3.0.0",
            "Enables read queries for a connection to a cluster replica node",
            "O(1)",
        ),
        CommandSpec::new("readwrite", 1, "fast loading stale", "connection", cluster_disabled).doc(
            "cluster",
            "3.0.0",
            "Disables read queries for a connection to a cluster replica node",
            "O(1)",
        ),
    ]
}
