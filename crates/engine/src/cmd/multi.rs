//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//!
//! While a client is in MULTI the executor queues its commands (see `Engine::execute`).
//! EXEC runs the queue with the engine's transaction gate held exclusively, so no other
//! client's command interleaves with it on any shard; clients blocked on keys the
//! transaction filled are served after the whole transaction, as Redis does. WATCHed keys
//! are flagged by every command that changes them.

use std::sync::atomic::Ordering;

use crate::command::{ArgDoc, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::reply::ReplySink;

/// MULTI — O(1).
fn multi(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if ctx.client.multi.is_some() {
        return Err(CmdError::msg("ERR MULTI calls can not be nested"));
    }
    ctx.client.multi = Some(Vec::new());
    ctx.client.handle.multi_count.store(0, Ordering::Relaxed);
    ctx.client.handle.multi_bytes.store(0, Ordering::Relaxed);
    ctx.client.multi_error = false;
    ctx.client.handle.set_flag(crate::clients::flag::MULTI, true);
    out.simple("OK");
    Ok(())
}

/// EXEC outside MULTI (inside MULTI the executor runs the transaction itself).
fn exec(_ctx: &mut Ctx<'_>, _args: &[&[u8]], _out: &mut dyn ReplySink) -> CmdResult {
    Err(CmdError::msg("ERR EXEC without MULTI"))
}

/// DISCARD — O(N) in the number of queued commands.
fn discard(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if ctx.client.multi.is_none() {
        return Err(CmdError::msg("ERR DISCARD without MULTI"));
    }
    ctx.engine.discard_transaction(ctx.client);
    out.simple("OK");
    Ok(())
}

/// WATCH key [key ...] — O(1) per key.
fn watch(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if ctx.client.multi.is_some() {
        return Err(CmdError::msg("ERR WATCH inside MULTI is not allowed"));
    }
    let (db, now) = (ctx.client.db, ctx.now_ms);
    for key in &args[1..] {
        if !ctx.client.watched.iter().any(|w| w.db == db && &w.key[..] == *key) {
            let stale = ctx.db(key).is_stale(key, now);
            let existed = !stale && ctx.db(key).peek(key, now).is_some();
            let (engine, client) = (ctx.engine, &mut *ctx.client);
            engine.watch_key(client, db, key, stale, existed);
        }
    }
    out.simple("OK");
    Ok(())
}

/// UNWATCH — O(N) in the number of watched keys.
fn unwatch(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    ctx.engine.unwatch_all(ctx.client);
    ctx.client.watch_dirty.store(false, Ordering::SeqCst);
    out.simple("OK");
    Ok(())
}

pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::new("multi", 1, "noscript loading stale fast allow_busy", "transaction", multi).doc(
            "transactions",
            "1.2.0",
            "Mark the start of a transaction block",
            "O(1)",
        ),
        CommandSpec::new("exec", 1, "noscript loading stale skip_slowlog", "transaction", exec).doc(
            "transactions",
            "1.2.0",
            "Execute all commands issued after MULTI",
            "Depends on commands in the transaction",
        ),
        CommandSpec::new("discard", 1, "noscript loading stale fast allow_busy", "transaction", discard).doc(
            "transactions",
            "2.0.0",
            "Discard all commands issued after MULTI",
            "O(N), when N is the number of queued commands",
        ),
        CommandSpec::new("watch", -2, "noscript loading stale fast allow_busy", "transaction", watch)
            .doc(
                "transactions",
                "2.2.0",
                "Watch the given keys to determine execution of the MULTI/EXEC block",
                "O(1) for every key.",
            )
            .keys("RO", 1, -1, 1)
            .args(vec![ArgDoc::key("key", 0).multiple()]),
        CommandSpec::new("unwatch", 1, "noscript loading stale fast allow_busy", "transaction", unwatch).doc(
            "transactions",
            "2.2.0",
            "Forget about all watched keys",
            "O(1)",
        ),
    ]
}
