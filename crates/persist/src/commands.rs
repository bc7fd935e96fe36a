//! The commands the persistence layer serves; the host passes them to the engine through
//! `EngineOptions::extra_commands`. SAVE, BGSAVE and BGREWRITEAOF run with the transaction
//! gate held exclusively (the engine's `command::runs_exclusively`), so they see a consistent dataset.

use quince_engine::command::ArgDoc;
use quince_engine::{CmdError, CmdResult, CommandSpec, Ctx, ReplySink};

use crate::Layer;

/// Every command of this crate.
pub fn commands() -> Vec<CommandSpec> {
    let mut all = crate::dump::register();
    all.extend(crate::migrate::register());
    all.extend(crate::replication::commands::register());
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
