//! FAILOVER: a coordinated switch of roles between this master and one of its replicas,
//! as Redis 6.2+ does it. Writes are paused; once a replica (the one named with TO, or any)
//! has acknowledged the whole stream, this master becomes its replica and asks it with
//! `PSYNC <id> <offset> FAILOVER` to take over: the replica promotes itself (it shares our
//! ID) and continues our stream partially. TIMEOUT aborts a failover whose replica never
//! caught up, or with FORCE fails over to it anyway; FAILOVER ABORT cancels.

use quince_engine::command::{ArgDoc, ArgType};
use quince_engine::{CmdError, CmdResult, CommandSpec, Ctx, Engine, ReplySink};

use crate::layer::{Layer, LogLevel};

/// A failover under way.
#[derive(Debug, Clone)]
pub struct Failover {
    /// The replica to hand over to (None: the first to catch up).
    pub target: Option<(String, u16)>,
    /// Unix ms after which a failover still waiting times out.
    pub end_ms: Option<i64>,
    pub force: bool,
    /// This master has become the target's replica and sent PSYNC ... FAILOVER.
    pub in_progress: bool,
}

impl Failover {
    /// INFO's `master_failover_state`.
    pub fn state_word(failover: Option<&Failover>) -> &'static str {
        match failover {
            None => "no-failover",
            Some(f) if f.in_progress => "failover-in-progress",
            Some(_) => "waiting-for-sync",
        }
    }

    fn target_text(&self) -> String {
        self.target.as_ref().map_or_else(|| "any replica".to_string(), |(h, p)| format!("{h}:{p}"))
    }
}

pub fn register() -> CommandSpec {
    CommandSpec::new("failover", -1, "admin noscript stale", "", failover)
        .doc("server", "6.2.0", "Start a coordinated failover between this server and one of its replicas.", "O(1)")
        .args(vec![
            ArgDoc::block(
                "target",
                vec![
                    ArgDoc::new("host", ArgType::String),
                    ArgDoc::new("port", ArgType::Integer),
                    ArgDoc::token("force", "FORCE").optional(),
                ],
            )
            .after("TO")
            .optional(),
            ArgDoc::token("abort", "ABORT").optional(),
            ArgDoc::new("milliseconds", ArgType::Integer).after("TIMEOUT").optional(),
        ])
}

/// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds] — O(1).
fn failover(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if ctx.engine.cluster.enabled() {
        return Err(CmdError::msg("ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead."));
    }
    let layer = Layer::of(ctx.engine).ok_or_else(|| CmdError::msg("ERR persistence is not enabled"))?;
    if args.len() == 2 && args[1].eq_ignore_ascii_case(b"abort") {
        if layer.failover.lock().is_none() {
            return Err(CmdError::msg("ERR No failover in progress."));
        }
        abort(layer, ctx.engine, "Failover manually aborted");
        out.simple("OK");
        return Ok(());
    }
    let (mut timeout_ms, mut force, mut target) = (0i64, false, None::<(String, i64)>);
    let mut j = 1;
    while j < args.len() {
        let arg = args[j];
        if arg.eq_ignore_ascii_case(b"timeout") && j + 1 < args.len() && timeout_ms == 0 {
            timeout_ms = quince_resp::parse_i64_strict(args[j + 1]).ok_or(CmdError::NotInteger)?;
            if timeout_ms <= 0 {
                return Err(CmdError::msg("ERR FAILOVER timeout must be greater than 0"));
            }
            j += 2;
        } else if arg.eq_ignore_ascii_case(b"to") && j + 2 < args.len() && target.is_none() {
            let port = quince_resp::parse_i64_strict(args[j + 2]).ok_or(CmdError::NotInteger)?;
            target = Some((String::from_utf8_lossy(args[j + 1]).into_owned(), port));
            j += 3;
        } else if arg.eq_ignore_ascii_case(b"force") && !force {
            force = true;
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    if layer.failover.lock().is_some() {
        return Err(CmdError::msg("ERR FAILOVER already in progress."));
    }
    if layer.is_replica() {
        return Err(CmdError::msg("ERR FAILOVER is not valid when server is a replica."));
    }
    if layer.replication.is_empty() {
        return Err(CmdError::msg("ERR FAILOVER requires connected replicas."));
    }
    if force && (timeout_ms == 0 || target.is_none()) {
        return Err(CmdError::msg("ERR FAILOVER with force option requires both a timeout and target HOST and IP."));
    }
    let target = match target {
        Some((host, port)) => {
            let Some(online) = layer.replication.replica_state(&host, port) else {
                return Err(CmdError::msg("ERR FAILOVER target HOST and PORT is not a replica."));
            };
            if !online {
                return Err(CmdError::msg("ERR FAILOVER target replica is not online."));
            }
            layer.log_notice(&format!("FAILOVER requested to {host}:{port}."));
            Some((host, port as u16))
        }
        None => {
            layer.log_notice("FAILOVER requested to any replica.");
            None
        }
    };
    *layer.failover.lock() =
        Some(Failover { target, end_ms: (timeout_ms > 0).then(|| ctx.now_ms + timeout_ms), force, in_progress: false });
    ctx.engine.set_failover_pause(true);
    out.simple("OK");
    Ok(())
}

/// Ends a failover that did not happen: a master again, writes resume.
pub fn abort(layer: &Layer, engine: &Engine, why: &str) {
    let Some(failover) = layer.failover.lock().take() else { return };
    layer.log_notice(&format!("FAILOVER to {} aborted: {why}", failover.target_text()));
    if failover.in_progress {
        let _ = layer.replicaof(None);
    }
    engine.set_failover_pause(false);
}

/// The failover happened (the target accepted PSYNC ... FAILOVER): writes resume, here
/// as a replica's (READONLY).
pub fn finish(layer: &Layer, engine: &Engine) {
    if layer.failover.lock().take().is_some() {
        engine.set_failover_pause(false);
    }
}

/// From the cron: a waiting failover times out, or hands over to a replica that caught up.
pub fn cron(layer: &Layer, engine: &Engine) {
    let now = engine.clock.now_ms();
    let Some(failover) = layer.failover.lock().clone() else { return };
    if failover.in_progress {
        return;
    }
    if failover.end_ms.is_some_and(|end| end <= now) {
        if failover.force {
            let (host, port) = failover.target.clone().expect("FORCE requires a target");
            layer.log(LogLevel::Notice, &format!("FAILOVER to {host}:{port} time out exceeded, failing over."));
            hand_over(layer, host, port);
        } else {
            abort(layer, engine, "Replica never caught up before timeout");
        }
        return;
    }
    let offset = layer.replication.offset();
    let caught_up = match &failover.target {
        Some((host, port)) => {
            layer.replication.acked_by(host, *port).is_some_and(|acked| acked == offset).then(|| (host.clone(), *port))
        }
        None => layer.replication.replica_with_offset(offset),
    };
    // Replicas acknowledge every second (a GETACK now would move the offset).
    if let Some((host, port)) = caught_up {
        layer.log(LogLevel::Notice, &format!("Failover target {host}:{port} is synced, failing over."));
        hand_over(layer, host, port);
    }
}

fn hand_over(layer: &Layer, host: String, port: u16) {
    if let Some(failover) = layer.failover.lock().as_mut() {
        failover.target = Some((host.clone(), port));
        failover.in_progress = true;
    }
    if let Err(e) = layer.replicaof_failover(host, port) {
        layer.log(LogLevel::Warning, &format!("FAILOVER: {e}"));
    }
}
