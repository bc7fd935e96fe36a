//! The replication commands: SYNC and PSYNC (a replica asks for the stream), REPLCONF (a
//! replica describes itself and acknowledges), WAIT, ROLE, REPLICAOF / SLAVEOF.

use quince_engine::command::{ArgDoc, ArgType};
use quince_engine::{CmdError, CmdResult, CommandSpec, Ctx, ReplySink};

use crate::Layer;

pub fn register() -> Vec<CommandSpec> {
    vec![
        replicaof_spec("replicaof", "5.0.0"),
        replicaof_spec("slaveof", "1.0.0").deprecated("5.0.0", "`REPLICAOF`"),
        CommandSpec::new("sync", 1, "no_async_loading admin no_multi noscript", "", sync).doc(
            "server",
            "1.0.0",
            "Internal command used for replication",
            "",
        ),
        CommandSpec::new("psync", -3, "admin noscript no_async_loading no_multi", "", psync)
            .doc("server", "2.8.0", "Internal command used for replication", "")
            .args(vec![ArgDoc::new("replicationid", ArgType::String), ArgDoc::new("offset", ArgType::Integer)]),
        CommandSpec::new("replconf", -1, "admin noscript loading stale allow_busy", "", replconf)
            .doc("server", "3.0.0", "An internal command for configuring the replication stream", "O(1)")
            .syscmd(),
        CommandSpec::new("wait", 3, "noscript", "@slow @connection", wait)
            .doc(
                "generic",
                "3.0.0",
                "Wait for the synchronous replication of all the write commands sent in the context of the current \
                 connection",
                "O(1)",
            )
            .tips(&["request_policy:all_shards", "response_policy:agg_min"])
            .args(vec![ArgDoc::new("numreplicas", ArgType::Integer), ArgDoc::new("timeout", ArgType::Integer)]),
        super::failover::register(),
        CommandSpec::new("role", 1, "noscript loading stale fast", "@admin @dangerous", role).doc(
            "server",
            "2.8.12",
            "Return the role of the instance in the context of replication",
            "O(1)",
        ),
    ]
}

fn layer<'a>(ctx: &Ctx<'a>) -> Result<&'a Layer, CmdError> {
    Layer::of(ctx.engine).ok_or_else(|| CmdError::msg("ERR persistence is not enabled"))
}

/// Why a connection may not start a sync now (Redis's syncCommand checks), if it may not.
fn sync_refusal(ctx: &Ctx<'_>, layer: &Layer) -> Option<CmdError> {
    if layer.is_replica() && !layer.master_link_up() {
        return Some(CmdError::msg("NOMASTERLINK Can't SYNC while not connected with my master"));
    }
    if ctx.client.handle.pending_output() > 0 {
        return Some(CmdError::msg("ERR SYNC and PSYNC are invalid with pending output"));
    }
    None
}

/// A full sync for this connection: it waits for the transfer that serves it, which
/// starts now unless diskless replication waits `repl-diskless-sync-delay` for more
/// replicas to share the snapshot (or a child runs already: then at the next cron).
fn full_sync(ctx: &Ctx<'_>, layer: &Layer, psync: bool) -> CmdResult {
    let (diskless, delay) = {
        let config = ctx.engine.config.read();
        (config.get_bool("repl-diskless-sync"), config.get_int("repl-diskless-sync-delay"))
    };
    let capa_eof = psync && layer.replication.pending_capa_eof(ctx.client.id);
    if !(diskless && capa_eof) && layer.replication.join_transfer(&ctx.client.handle, psync, ctx.now_ms) {
        layer.log_notice("Waiting for end of BGSAVE for SYNC");
        return Ok(());
    }
    layer.replication.queue_full_sync(&ctx.client.handle, psync, ctx.now_ms);
    if diskless && capa_eof && delay > 0 {
        layer.log_notice("Delay next BGSAVE for diskless SYNC");
        return Ok(());
    }
    layer.start_full_syncs(ctx.engine);
    Ok(())
}

/// SYNC — O(N): the dataset as an RDB bulk, then the stream of every write (the protocol
/// before PSYNC: no offsets, so such a replica always syncs fully).
fn sync(ctx: &mut Ctx<'_>, _args: &[&[u8]], _out: &mut dyn ReplySink) -> CmdResult {
    let layer = layer(ctx)?;
    if ctx.client.handle.has_flag(quince_engine::clients::flag::REPLICA) {
        return Ok(());
    }
    if let Some(refusal) = sync_refusal(ctx, layer) {
        return Err(refusal);
    }
    layer.log_notice(&format!("Replica {} asks for synchronization", ctx.client.handle.conn.addr));
    full_sync(ctx, layer, false)
}

/// PSYNC replid offset — O(1) when the backlog continues the replica's history
/// (`+CONTINUE`), else O(N): `+FULLRESYNC replid offset` and the snapshot.
fn psync(ctx: &mut Ctx<'_>, args: &[&[u8]], _out: &mut dyn ReplySink) -> CmdResult {
    let layer = layer(ctx)?;
    if ctx.client.handle.has_flag(quince_engine::clients::flag::REPLICA) {
        return Ok(());
    }
    let replid = String::from_utf8_lossy(args[1]).into_owned();
    if args.len() > 3 && args[3].eq_ignore_ascii_case(b"failover") {
        // Our master hands over to us (its FAILOVER): we share its ID, so we promote
        // ourselves and it continues from our history.
        layer.log(crate::layer::LogLevel::Warning, &format!("Failover request received for replid {replid}."));
        if !layer.is_replica() {
            return Err(CmdError::msg("ERR PSYNC FAILOVER can't be sent to a master."));
        }
        if !replid.eq_ignore_ascii_case(&layer.replication.position().0) {
            return Err(CmdError::msg("ERR PSYNC FAILOVER replid must match my replid."));
        }
        layer.replicaof(None).map_err(CmdError::msg)?;
        layer.log_notice(&format!("MASTER MODE enabled (failover request from '{}')", ctx.client.handle.conn.addr));
    }
    if let Some(refusal) = sync_refusal(ctx, layer) {
        return Err(refusal);
    }
    let addr = ctx.client.handle.conn.addr.clone();
    // Redis reads the offset with getLongLongFromObjectOrReply.
    let Some(from) = quince_resp::parse_i64_strict(args[2]) else {
        layer.log(
            crate::layer::LogLevel::Warning,
            &format!("Replica {addr} asks for synchronization but with a wrong offset"),
        );
        return Err(CmdError::NotInteger);
    };
    layer.log_notice(&format!("Replica {addr} asks for synchronization"));
    match layer.replication.try_continue(&ctx.client.handle, &replid, from, ctx.now_ms) {
        Ok(()) => {
            layer.log_notice(&format!(
                "Partial resynchronization request from {addr} accepted. Sending backlog bytes starting with offset {from}."
            ));
            return Ok(());
        }
        Err(why) => layer.log_notice(&why),
    }
    layer.log_notice(&format!("Starting BGSAVE for SYNC with target: replicas sockets ({addr})"));
    full_sync(ctx, layer, true)
}

/// REPLCONF option value ... — O(1): what a replica tells its master before PSYNC
/// (listening-port, ip-address, capa), and after it (ACK offset). GETACK is the master's
/// request, answered by the replica's link.
fn replconf(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let layer = layer(ctx)?;
    if args.len().is_multiple_of(2) {
        return Err(CmdError::Syntax);
    }
    let id = ctx.client.id;
    for pair in args[1..].chunks(2) {
        let (option, value) = (pair[0], pair[1]);
        if option.eq_ignore_ascii_case(b"listening-port") {
            let port = quince_resp::parse_i64_strict(value).ok_or(CmdError::NotInteger)?;
            layer.replication.note_conf(id, |c| c.listening_port = port as u16);
        } else if option.eq_ignore_ascii_case(b"ip-address") {
            if value.len() >= 256 {
                return Err(CmdError::msg(format!(
                    "ERR REPLCONF ip-address provided by replica instance is too long: {} bytes",
                    value.len()
                )));
            }
            let ip = String::from_utf8_lossy(value).into_owned();
            layer.replication.note_conf(id, |c| c.announced_ip = Some(ip));
        } else if option.eq_ignore_ascii_case(b"capa") {
            let (eof, psync2) = (value.eq_ignore_ascii_case(b"eof"), value.eq_ignore_ascii_case(b"psync2"));
            layer.replication.note_conf(id, |c| {
                c.capa_eof |= eof;
                c.capa_psync2 |= psync2;
            });
        } else if option.eq_ignore_ascii_case(b"ack") {
            // Only from a replica's connection, and never answered.
            if ctx.client.handle.has_flag(quince_engine::clients::flag::REPLICA) {
                if let Some(offset) = quince_resp::parse_i64_strict(value) {
                    layer.replication.ack(ctx.engine, id, offset.max(0) as u64, ctx.now_ms);
                }
            }
            return Ok(());
        } else if option.eq_ignore_ascii_case(b"getack") {
            // Only meaningful from our master, whose stream the link reads itself.
            return Ok(());
        } else if option.eq_ignore_ascii_case(b"rdb-only") {
            let flag = quince_resp::parse_i64_strict(value).ok_or(CmdError::NotInteger)?;
            if flag != 0 && flag != 1 {
                return Err(CmdError::msg("ERR value is out of range, value must between 0 and 1"));
            }
            layer.replication.note_conf(id, |c| c.rdb_only = flag == 1);
        } else if option.eq_ignore_ascii_case(b"rdb-filter-only") {
            // The one include filter Redis 7.0 knows: "functions" (an empty list: nothing).
            let Some(filters) = quince_resp::split_args(value) else {
                return Err(CmdError::msg("ERR Missing rdb-filter-only values"));
            };
            for filter in &filters {
                if !filter.eq_ignore_ascii_case(b"functions") {
                    return Err(CmdError::msg(format!(
                        "ERR Unsupported rdb-filter-only option: {}",
                        String::from_utf8_lossy(filter)
                    )));
                }
            }
            layer.replication.note_conf(id, |c| c.functions_only = true);
        } else {
            return Err(CmdError::msg(format!(
                "ERR Unrecognized REPLCONF option: {}",
                String::from_utf8_lossy(option)
            )));
        }
    }
    out.simple("OK");
    Ok(())
}

/// WAIT numreplicas timeout — O(1): blocks until `numreplicas` replicas acknowledged the
/// client's last write, or `timeout` ms pass (0: forever); replies with how many did.
fn wait(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let layer = layer(ctx)?;
    if layer.is_replica() {
        return Err(CmdError::msg(
            "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is \
             configured to be writable (which is not the default) writes to replicas are just local and are not \
             propagated.",
        ));
    }
    let wanted = quince_resp::parse_i64_strict(args[1]).ok_or(CmdError::NotInteger)?;
    let timeout = quince_resp::parse_i64_strict(args[2])
        .ok_or_else(|| CmdError::msg("ERR timeout is not an integer or out of range"))?;
    if timeout < 0 {
        return Err(CmdError::msg("ERR timeout is negative"));
    }
    let offset = ctx.client.woff;
    let acked = layer.replication.acked(offset);
    if acked as i64 >= wanted || !ctx.may_block() {
        out.integer(acked as i64);
        return Ok(());
    }
    let deadline = (timeout > 0).then(|| ctx.now_ms.saturating_add(timeout));
    let replication = layer.replication_handle();
    let count = Box::new(move || replication.upgrade().map_or(0, |r| r.acked(offset) as i64));
    let waiter = ctx.block_counting(args, deadline, count);
    layer.replication.add_wait(waiter, offset, wanted.max(0) as usize, ctx.engine.clients_paused());
    Ok(())
}

/// ROLE — O(1): `master offset [[ip port offset]...]`, or `slave host port state offset`.
fn role(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let layer = layer(ctx)?;
    if let Some((host, port, state)) = layer.master_link_role() {
        out.array(5);
        out.bulk(b"slave");
        out.bulk(host.as_bytes());
        out.integer(port as i64);
        out.bulk(state.as_bytes());
        let offset = if state == "connected" { layer.replication.offset() as i64 } else { -1 };
        out.integer(offset);
        return Ok(());
    }
    let (offset, replicas) = layer.replication.role();
    out.array(3);
    out.bulk(b"master");
    out.integer(offset as i64);
    out.array(replicas.len());
    for (ip, port, acked) in replicas {
        out.array(3);
        out.bulk(ip.as_bytes());
        out.bulk(port.to_string().as_bytes());
        out.bulk(acked.to_string().as_bytes());
    }
    Ok(())
}

fn replicaof_spec(name: &str, since: &'static str) -> CommandSpec {
    CommandSpec::new(name, 3, "no_async_loading admin noscript stale", "", replicaof)
        .doc("server", since, "Make the server a replica of another instance, or promote it as master.", "O(1)")
        .args(vec![ArgDoc::one_of(
            "args",
            vec![
                ArgDoc::block(
                    "host-port",
                    vec![ArgDoc::new("host", ArgType::String), ArgDoc::new("port", ArgType::Integer)],
                ),
                ArgDoc::block("no-one", vec![ArgDoc::token("no", "NO"), ArgDoc::token("one", "ONE")]),
            ],
        )])
}

/// REPLICAOF host port | NO ONE — O(1): follow a master (the link syncs in the background)
/// or become a master again.
fn replicaof(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    // In a cluster a node replicates whom CLUSTER REPLICATE names.
    if ctx.engine.cluster.enabled() {
        return Err(CmdError::msg("ERR REPLICAOF not allowed in cluster mode."));
    }
    let layer = layer(ctx)?;
    let target = if args[1].eq_ignore_ascii_case(b"no") && args[2].eq_ignore_ascii_case(b"one") {
        None
    } else {
        let port = quince_resp::parse_i64_strict(args[2])
            .filter(|p| (0..=65535).contains(p))
            .ok_or_else(|| CmdError::msg("ERR Invalid master port"))?;
        Some((String::from_utf8_lossy(args[1]).into_owned(), port as u16))
    };
    let status = layer.replicaof(target).map_err(CmdError::msg)?;
    out.simple(status);
    Ok(())
}
