//! LATENCY: latency events (LATEST, HISTORY, RESET, DOCTOR, GRAPH) and per-command latency
//! histograms (HISTOGRAM).

use std::fmt::Write as _;

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::reply::ReplySink;

fn latency_latest(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let monitor = ctx.engine.observe.latency.lock();
    let events: Vec<_> = monitor.events().collect();
    out.array(events.len());
    for (name, series) in events {
        let (time, latest) = series.samples.back().copied().unwrap_or((0, 0));
        out.array(4);
        out.bulk(name.as_bytes());
        out.integer(time);
        out.integer(latest as i64);
        out.integer(series.max as i64);
    }
    Ok(())
}

fn latency_history(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let monitor = ctx.engine.observe.latency.lock();
    let samples: Vec<(i64, u64)> =
        monitor.get(args[2]).map(|s| s.samples.iter().copied().collect()).unwrap_or_default();
    out.array(samples.len());
    for (time, ms) in samples {
        out.array(2);
        out.integer(time);
        out.integer(ms as i64);
    }
    Ok(())
}

fn latency_reset(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut monitor = ctx.engine.observe.latency.lock();
    let resets =
        if args.len() == 2 { monitor.reset(None) } else { args[2..].iter().map(|e| monitor.reset(Some(e))).sum() };
    out.integer(resets as i64);
    Ok(())
}

/// LATENCY GRAPH event: a small text chart of the event's samples, newest last.
fn latency_graph(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let monitor = ctx.engine.observe.latency.lock();
    let Some(series) = monitor.get(args[2]) else {
        return Err(CmdError::msg(format!(
            "ERR No samples available for event '{}'",
            String::from_utf8_lossy(args[2])
        )));
    };
    let now = ctx.now_ms / 1000;
    let mut text = format!(
        "{} - high {} ms, low {} ms (all time high {} ms)\n",
        String::from_utf8_lossy(args[2]),
        series.samples.iter().map(|s| s.1).max().unwrap_or(0),
        series.samples.iter().map(|s| s.1).min().unwrap_or(0),
        series.max
    );
    text.push_str(&"-".repeat(80));
    text.push('\n');
    for (time, ms) in &series.samples {
        let _ = writeln!(text, "{:>6}s ago {:>6} ms {}", now - time, ms, "#".repeat((*ms as usize).clamp(1, 60)));
    }
    out.verbatim(b"txt", text.as_bytes());
    Ok(())
}

/// LATENCY DOCTOR: a plain report of every event seen and what to look at.
fn latency_doctor(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let monitor = ctx.engine.observe.latency.lock();
    let threshold = ctx.engine.observe.latency_threshold_ms.load(std::sync::atomic::Ordering::Relaxed);
    let mut text = String::new();
    let events: Vec<_> = monitor.events().collect();
    if events.is_empty() {
        text.push_str("No latency spike was observed since the monitor was last reset.");
        if threshold == 0 {
            text.push_str(
                " The latency monitor is disabled: set latency-monitor-threshold (in milliseconds) to enable it.",
            );
        }
        text.push('\n');
    } else {
        let _ = writeln!(text, "Latency events observed (threshold {threshold} ms):\n");
        for (i, (name, series)) in events.iter().enumerate() {
            let n = series.samples.len().max(1) as u64;
            let avg = series.samples.iter().map(|s| s.1).sum::<u64>() / n;
            let _ = writeln!(
                text,
                "{}. {name}: {} latency spikes (average {avg}ms, max {}ms).",
                i + 1,
                series.samples.len(),
                series.max
            );
        }
        text.push_str(
            "\nFor 'command' and 'fast-command' events, check SLOWLOG GET for the slow commands; \
             for 'expire-cycle', many keys expiring at once.\n",
        );
    }
    out.verbatim(b"txt", text.as_bytes());
    Ok(())
}

/// LATENCY HISTOGRAM [command ...]: cumulative per-command latency distributions.
fn latency_histogram(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let table = &ctx.engine.table;
    let observe = &ctx.engine.observe;
    // As Redis: the commands with a histogram (calls made while `latency-tracking` was on),
    // and `calls` counts the histogram's.
    let has_data = |id: usize| observe.command_totals(id).has_latencies();
    let mut specs: Vec<&CommandSpec> = Vec::new();
    if args.len() == 2 {
        specs.extend(table.all_flat().filter(|s| has_data(s.id)));
    } else {
        for name in &args[2..] {
            let Some(spec) = table.get_full(name) else { continue };
            if spec.subcommands.is_empty() {
                if has_data(spec.id) && !specs.iter().any(|s| s.id == spec.id) {
                    specs.push(spec);
                }
            } else {
                for sub in &spec.subcommands {
                    if has_data(sub.id) && !specs.iter().any(|s| s.id == sub.id) {
                        specs.push(sub);
                    }
                }
            }
        }
    }
    out.map(specs.len());
    for spec in specs {
        let stat = observe.command_totals(spec.id);
        out.bulk(spec.name.as_bytes());
        out.map(2);
        out.bulk(b"calls");
        out.integer(stat.latency_count() as i64);
        out.bulk(b"histogram_usec");
        let buckets = stat.cumulative_histogram();
        out.map(buckets.len());
        for (bound, count) in buckets {
            out.integer(bound as i64);
            out.integer(count as i64);
        }
    }
    Ok(())
}

fn latency_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "LATENCY",
        &[
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
        ],
    )
}

pub fn register() -> Vec<CommandSpec> {
    let sub = |name: &str, arity: i32, handler: crate::command::Handler, since: &'static str, summary: &'static str| {
        CommandSpec::new(name, arity, "admin noscript loading stale", "", handler).doc("server", since, summary, "O(1)")
    };
    vec![CommandSpec::container(
        "latency",
        "",
        "",
        vec![
            sub("latest", 2, latency_latest, "2.8.13", "Return the latest latency samples for all events.").tips(&[
                "nondeterministic_output",
                "request_policy:all_nodes",
                "response_policy:special",
            ]),
            sub("history", 3, latency_history, "2.8.13", "Return timestamp-latency samples for the event.")
                .tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"])
                .args(vec![ArgDoc::new("event", ArgType::String)]),
            sub("reset", -2, latency_reset, "2.8.13", "Reset latency data for one or more events.")
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
                .args(vec![ArgDoc::new("event", ArgType::String).optional().multiple()]),
            sub("graph", 3, latency_graph, "2.8.13", "Return a latency graph for the event.")
                .tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"])
                .args(vec![ArgDoc::new("event", ArgType::String)]),
            sub("doctor", 2, latency_doctor, "2.8.13", "Return a human readable latency analysis report.").tips(&[
                "nondeterministic_output",
                "request_policy:all_nodes",
                "response_policy:special",
            ]),
            sub(
                "histogram",
                -2,
                latency_histogram,
                "7.0.0",
                "Return the cumulative distribution of latencies of a subset of commands or all.",
            )
            .tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"])
            .args(vec![ArgDoc::new("command", ArgType::String).optional().multiple()]),
            CommandSpec::new("help", 2, "loading stale", "", latency_help).doc(
                "server",
                "2.8.13",
                "Show helpful text about the different subcommands.",
                "O(1)",
            ),
        ],
    )
    .doc("server", "2.8.13", "A container for latency diagnostics commands", "Depends on subcommand.")]
}
