//! MEMORY USAGE (per-key memory estimates), MALLOC-STATS and PURGE (the allocator's), HELP.

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{Entry, StrValue, Value};
use crate::reply::ReplySink;

use super::{is, parse_i64};

/// Bytes a key and its value take: the key, the value's payload and the fixed per-entry
/// overhead of the table slot (entry struct plus hash-table bookkeeping).
pub fn entry_usage(key: &[u8], entry: &Entry) -> usize {
    let slot = std::mem::size_of::<Entry>() + std::mem::size_of::<Box<[u8]>>() + 8;
    let value = match &entry.value {
        Value::Str(StrValue::Int(_)) => 0,
        Value::Str(StrValue::Embstr(b)) => b.heap_bytes(),
        Value::Str(StrValue::Raw(b)) => b.capacity(),
        // Collections: element bytes plus a per-element allocation and pointer overhead.
        Value::List(l) => l.iter().map(|i| i.len() + 24).sum(),
        Value::Hash(h) => h.iter().map(|(f, v)| f.len() + v.len() + 48).sum(),
        Value::Set(set) => set.iter().map(|m| m.len() + 24).sum(),
        Value::ZSet(z) => z.iter().map(|(m, _)| m.len() + 48).sum(),
        Value::Stream(st) => st.data_bytes(),
    };
    let ttl = if entry.expire_at_ms().is_some() { key.len() + 16 } else { 0 };
    slot + key.len() + value + ttl
}

/// MEMORY USAGE key [SAMPLES count] — O(1) for strings.
fn memory_usage(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut j = 3;
    while j < args.len() {
        if is(args[j], "SAMPLES") && j + 1 < args.len() {
            if parse_i64(args[j + 1])? < 0 {
                return Err(CmdError::Syntax);
            }
            j += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    let (key, now) = (args[2], ctx.now_ms);
    match ctx.db(key).peek(key, now) {
        Some(entry) => out.integer(entry_usage(key, entry) as i64),
        None => out.null(),
    }
    Ok(())
}

/// MEMORY MALLOC-STATS — depends on the allocator: its own statistics report.
fn memory_malloc_stats(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let report = match ctx.engine.allocator_hooks() {
        Some(hooks) => (hooks.stats)(),
        None => "Stats not supported for the current allocator".to_string(),
    };
    out.verbatim(b"txt", report.as_bytes());
    Ok(())
}

/// MEMORY PURGE — depends on how much memory the allocator holds unused: gives it back to
/// the system.
fn memory_purge(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if let Some(hooks) = ctx.engine.allocator_hooks() {
        if !(hooks.purge)() {
            return Err(CmdError::msg("ERR Error purging dirty pages"));
        }
    }
    out.simple("OK");
    Ok(())
}

fn memory_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "MEMORY",
        &[
            "MALLOC-STATS",
            "    Return internal statistics report from the memory allocator.",
            "PURGE",
            "    Attempt to purge dirty pages for reclamation by the allocator.",
            "USAGE <key> [SAMPLES <count>]",
            "    Return memory in bytes used by <key> and its value. Nested values are",
            "    sampled up to <count> times (default: 5, 0 means sample all).",
        ],
    )
}

pub fn register() -> Vec<CommandSpec> {
    vec![CommandSpec::container(
        "memory",
        "",
        "",
        vec![
            CommandSpec::new("purge", 2, "", "", memory_purge)
                .doc(
                    "server",
                    "4.0.0",
                    "Ask the allocator to release memory",
                    "Depends on how much memory is allocated, could be slow",
                )
                .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
            CommandSpec::new("help", 2, "loading stale", "", memory_help).doc(
                "server",
                "4.0.0",
                "Show helpful text about the different subcommands",
                "O(1)",
            ),
            CommandSpec::new("malloc-stats", 2, "", "", memory_malloc_stats)
                .doc(
                    "server",
                    "4.0.0",
                    "Show allocator internal stats",
                    "Depends on how much memory is allocated, could be slow",
                )
                .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
            CommandSpec::new("usage", -3, "readonly", "", memory_usage)
                .doc("server", "4.0.0", "Estimate the memory usage of a key", "O(N) where N is the number of samples.")
                .keys("RO", 2, 0, 1)
                .args(vec![ArgDoc::key("key", 0), ArgDoc::new("count", ArgType::Integer).after("SAMPLES").optional()]),
        ],
    )
    .doc("server", "4.0.0", "A container for memory diagnostics commands", "Depends on subcommand.")]
}
