//! SLOWLOG GET/LEN/RESET/HELP over the engine's slow log.

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::reply::ReplySink;

/// SLOWLOG GET [count] — newest first; count -1 means all.
fn slowlog_get(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len() > 3 {
        return Err(crate::error::subcommand_syntax(args));
    }
    let log = ctx.engine.observe.slowlog.lock();
    let count = match args.get(2) {
        None => 10,
        Some(arg) => match quince_resp::parse_i64_strict(arg) {
            Some(-1) => log.len(),
            Some(n) if n >= 0 => n as usize,
            _ => return Err(CmdError::msg("ERR count should be greater than or equal to -1")),
        },
    };
    let entries: Vec<_> = log.newest(count).collect();
    out.array(entries.len());
    for e in entries {
        out.array(6);
        out.integer(e.id as i64);
        out.integer(e.time_s);
        out.integer(e.duration_us as i64);
        out.array(e.args.len());
        for a in &e.args {
            out.bulk(a);
        }
        out.bulk(e.peer.as_bytes());
        out.bulk(&e.client_name);
    }
    Ok(())
}

fn slowlog_len(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    out.integer(ctx.engine.observe.slowlog.lock().len() as i64);
    Ok(())
}

fn slowlog_reset(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    ctx.engine.observe.slowlog.lock().reset();
    out.simple("OK");
    Ok(())
}

fn slowlog_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "SLOWLOG",
        &[
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
        ],
    )
}

pub fn register() -> Vec<CommandSpec> {
    vec![CommandSpec::container(
        "slowlog",
        "",
        "",
        vec![
            CommandSpec::new("get", -2, "admin loading stale", "", slowlog_get)
                .doc("server", "2.2.12", "Get the slow log's entries", "O(N) where N is the number of entries returned")
                .history(&[("4.0.0", "Added client IP address, port and name to the reply.")])
                .tips(&["request_policy:all_nodes", "nondeterministic_output"])
                .args(vec![ArgDoc::new("count", ArgType::Integer).optional()]),
            CommandSpec::new("len", 2, "admin loading stale", "", slowlog_len)
                .doc("server", "2.2.12", "Get the slow log's length", "O(1)")
                .tips(&["request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"]),
            CommandSpec::new("reset", 2, "admin loading stale", "", slowlog_reset)
                .doc(
                    "server",
                    "2.2.12",
                    "Clear all entries from the slow log",
                    "O(N) where N is the number of entries in the slowlog",
                )
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
            CommandSpec::new("help", 2, "loading stale", "", slowlog_help).doc(
                "server",
                "6.2.0",
                "Show helpful text about the different subcommands",
                "O(1)",
            ),
        ],
    )
    .doc("server", "2.2.12", "A container for slow log commands", "Depends on subcommand.")]
}
