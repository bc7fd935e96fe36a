//! The commands the persistence layer serves; the host passes them to the engine through
//! `EngineOptions::extra_commands`. SAVE, BGSAVE and BGREWRITEAOF run with the transaction
//! gate held exclusively (the engine's `command::runs_exclusively`), so they see a consistent dataset.

use quince_engine::command::{ArgDoc, ArgType};
use quince_engine::{CmdError, CmdResult, CommandSpec, Ctx, ReplySink};

use crate::Layer;

/// Every command of this crate.
pub fn commands() -> Vec<CommandSpec> {
    let mut all = crate::dump::register();
    all.extend(crate::migrate::register());
    all.extend([
        CommandSpec::new("save", 1, "no_async_loading admin noscript no_multi", "", save).doc(
            "server",
            "1.0.0",
            "Synchronously save the dataset to disk",
            "O(N) where N is the total number of keys in all databases",
        ),
        CommandSpec::new("bgsave", -1, "no_async_loading admin noscript", "", bgsave)
            .doc("server", "1.0.0", "Asynchronously save the dataset to disk", "O(1)")
            .history(&[("3.2.2", "Added the `SCHEDULE` option.")])
            .args(vec![ArgDoc::token("schedule", "SCHEDULE").optional().since("3.2.2")]),
        CommandSpec::new("bgrewriteaof", 1, "no_async_loading admin noscript", "", bgrewriteaof).doc(
            "server",
            "1.0.0",
            "Asynchronously rewrite the append-only file",
            "O(1)",
        ),
        replicaof_spec("replicaof", "5.0.0"),
        replicaof_spec("slaveof", "1.0.0").deprecated("5.0.0", "`REPLICAOF`"),
        CommandSpec::new("sync", 1, "no_async_loading admin no_multi noscript", "", sync).doc(
            "server",
            "1.0.0",
            "Internal command used for replication",
            "",
        ),
    ]);
    all
}

fn layer<'a>(ctx: &Ctx<'a>) -> Result<&'a Layer, CmdError> {
    Layer::of(ctx.engine).ok_or_else(|| CmdError::msg("ERR persistence is not enabled"))
}

/// SAVE — O(N): writes the RDB file before replying.
fn save(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    layer(ctx)?.save_now(ctx.engine).map_err(CmdError::msg)?;
    out.simple("OK");
    Ok(())
}

/// BGSAVE [SCHEDULE] — O(1): forks a child that writes the RDB file.
fn bgsave(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let schedule = match args {
        [_] => false,
        [_, opt] if opt.eq_ignore_ascii_case(b"SCHEDULE") => true,
        _ => return Err(CmdError::Syntax),
    };
    let status = layer(ctx)?.bgsave(ctx.engine, schedule, ctx.client.in_exec).map_err(CmdError::msg)?;
    out.simple(status);
    Ok(())
}

/// BGREWRITEAOF — O(1): forks a child that writes a new AOF base file.
fn bgrewriteaof(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let status = layer(ctx)?.bgrewriteaof(ctx.engine, ctx.client.in_exec).map_err(CmdError::msg)?;
    out.simple(status);
    Ok(())
}

/// SYNC — O(N): the dataset as an RDB bulk, then the stream of every write's effects (the
/// replication stream; no replica side yet). Runs with the gate held exclusively, so the
/// snapshot and the stream meet exactly.
fn sync(ctx: &mut Ctx<'_>, _args: &[&[u8]], _out: &mut dyn ReplySink) -> CmdResult {
    let layer = layer(ctx)?;
    let mut snapshot = Vec::new();
    // Built in this process under the gate, not in a child: a testing delay per key would
    // stall every client.
    let options =
        crate::rdb::SaveOptions { key_save_delay_us: 0, ..crate::rdb::SaveOptions::from_config(ctx.engine, false) };
    crate::rdb::write_snapshot(ctx.engine, &mut snapshot, &options)
        .map_err(|e| CmdError::msg(format!("ERR can't build the snapshot: {e}")))?;
    layer.replicas.attach(ctx.client.handle.clone(), &snapshot);
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
