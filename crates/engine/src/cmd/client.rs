//! CLIENT subcommands and MONITOR: connection introspection and control across all
//! workers, through the engine's client registry.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::blocking::Unblock;
use crate::clients::{flag, ClientHandle};
use crate::command::{ArgDoc, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::{Ctx, ReplyMode};
use crate::reply::ReplySink;

use super::{is, parse_i64};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientType {
    Normal,
    Master,
    Replica,
    PubSub,
}

fn parse_client_type(arg: &[u8]) -> Result<ClientType, CmdError> {
    let lower = arg.to_ascii_lowercase();
    match &lower[..] {
        b"normal" => Ok(ClientType::Normal),
        b"slave" | b"replica" => Ok(ClientType::Replica),
        b"pubsub" => Ok(ClientType::PubSub),
        b"master" => Ok(ClientType::Master),
        _ => Err(CmdError::msg(format!("ERR Unknown client type '{}'", String::from_utf8_lossy(arg)))),
    }
}

/// MONITOR clients count as normal, as in Redis's getClientType.
fn client_type(handle: &ClientHandle) -> ClientType {
    if handle.has_flag(flag::MASTER) {
        ClientType::Master
    } else if handle.has_flag(flag::REPLICA) && !handle.has_flag(flag::MONITOR) {
        ClientType::Replica
    } else if handle.has_flag(flag::PUBSUB) {
        ClientType::PubSub
    } else {
        ClientType::Normal
    }
}

/// One CLIENT LIST line (without the trailing newline), in Redis 7.0's field order.
pub(crate) fn client_info_line(
    engine: &crate::Engine,
    now: i64,
    handle: &Arc<ClientHandle>,
    current_args: Option<&[&[u8]]>,
) -> String {
    let mut flags = String::new();
    let f = handle.flags.load(Ordering::Relaxed);
    for (bit, letter) in [
        (flag::REPLICA, 'S'),
        (flag::MASTER, 'M'),
        (flag::MONITOR, 'O'),
        (flag::PUBSUB, 'P'),
        (flag::MULTI, 'x'),
        (flag::BLOCKED, 'b'),
        (flag::CLOSE_AFTER_REPLY, 'c'),
        (flag::UNIX_SOCKET, 'U'),
        (flag::NO_EVICT, 'e'),
    ] {
        if f & bit != 0 {
            flags.push(letter);
        }
    }
    {
        // After `b` (blocked), as Redis orders them.
        let tracking = handle.tracking.lock();
        let at = flags.find('b').map_or_else(|| flags.find(['c', 'U', 'e']).unwrap_or(flags.len()), |i| i + 1);
        let mut extra = String::new();
        if tracking.on {
            extra.push('t');
        }
        if tracking.broken_redirect {
            extra.push('R');
        }
        if tracking.bcast {
            extra.push('B');
        }
        flags.insert_str(at, &extra);
    }
    if flags.is_empty() {
        flags.push('N');
    }
    let cmd = match handle.last_command.load(Ordering::Relaxed) {
        usize::MAX => "NULL".to_string(),
        id => engine.table.by_id(id).map_or_else(|| "NULL".to_string(), |s| s.name.clone()),
    };
    let name = handle.name().map(|n| String::from_utf8_lossy(&n).into_owned()).unwrap_or_default();
    let qbuf = handle.qbuf.load(Ordering::Relaxed);
    let qbuf_free = handle.qbuf_free.load(Ordering::Relaxed);
    let argv_mem: usize = current_args.map_or(0, |args| args.iter().map(|a| a.len()).sum());
    let omem = handle.pending_output();
    let (sub, psub, ssub) = {
        let subs = handle.pubsub.lock();
        (subs.channels.len(), subs.patterns.len(), subs.shard.len())
    };
    let multi = handle.multi_count.load(Ordering::Relaxed);
    let multi_mem = handle.multi_bytes.load(Ordering::Relaxed) + handle.watched_bytes.load(Ordering::Relaxed);
    format!(
        "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} \
         qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs=1024 rbp=0 obl=0 oll=0 omem={} tot-mem={} events=r \
         cmd={} user={} redir={} resp={}",
        handle.id,
        handle.conn.addr,
        handle.conn.laddr,
        handle.conn.fd,
        name,
        (now - handle.created_ms).max(0) / 1000,
        (now - handle.last_interaction_ms.load(Ordering::Relaxed)).max(0) / 1000,
        flags,
        handle.db.load(Ordering::Relaxed),
        sub,
        psub,
        ssub,
        multi,
        qbuf,
        qbuf_free,
        argv_mem,
        multi_mem,
        omem,
        qbuf + qbuf_free + argv_mem + multi_mem + omem + 1024,
        cmd,
        handle.user_name(),
        {
            let t = handle.tracking.lock();
            if t.on {
                t.redirect as i64
            } else {
                -1
            }
        },
        handle.resp.load(Ordering::Relaxed),
    )
}

/// CLIENT ID — O(1).
fn client_id(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    out.integer(ctx.client.id as i64);
    Ok(())
}

/// CLIENT INFO — O(1).
fn client_info(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut line = client_info_line(ctx.engine, ctx.now_ms, &ctx.client.handle.clone(), Some(args));
    line.push('\n');
    out.verbatim(b"txt", line.as_bytes());
    Ok(())
}

/// CLIENT LIST [TYPE type] [ID id [id ...]] — O(N) in the number of clients.
fn client_list(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut wanted_type = None;
    let mut ids: Option<Vec<u64>> = None;
    if args.len() == 4 && is(args[2], "TYPE") {
        wanted_type = Some(parse_client_type(args[3])?);
    } else if args.len() > 3 && is(args[2], "ID") {
        let mut list = Vec::new();
        for arg in &args[3..] {
            let id = parse_i64(arg).map_err(|_| CmdError::msg("ERR Invalid client ID"))?;
            list.push(id as u64);
        }
        ids = Some(list);
    } else if args.len() != 2 {
        return Err(CmdError::Syntax);
    }
    let me = ctx.client.id;
    let handles: Vec<Arc<ClientHandle>> = match &ids {
        Some(ids) => ids.iter().filter_map(|id| ctx.engine.clients.get(*id)).collect(),
        None => ctx.engine.clients.all(),
    };
    let mut text = String::new();
    for handle in handles {
        if wanted_type.is_some_and(|t| t != client_type(&handle)) {
            continue;
        }
        // A killed connection is gone for Redis at once (freed); here its worker closes
        // it a moment later.
        if handle.id != me && handle.is_killed() {
            continue;
        }
        let current = (handle.id == me).then_some(args);
        text.push_str(&client_info_line(ctx.engine, ctx.now_ms, &handle, current));
        text.push('\n');
    }
    out.verbatim(b"txt", text.as_bytes());
    Ok(())
}

/// CLIENT KILL ip:port | CLIENT KILL [ID id] [TYPE type] [ADDR a] [LADDR a] [USER u] [SKIPME yes|no]
fn client_kill(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (mut addr, mut laddr, mut id, mut wanted_type, mut skip_me) = (None, None, None, None, true);
    let mut user: Option<Arc<crate::acl::User>> = None;
    if args.len() == 3 {
        addr = Some(args[2]);
        skip_me = false;
    } else {
        let mut i = 2;
        while i < args.len() {
            let more = i + 1 < args.len();
            let value = if more { args[i + 1] } else { &b""[..] };
            if is(args[i], "ID") && more {
                let n = parse_i64(value)
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| CmdError::msg("ERR client-id should be greater than 0"))?;
                id = Some(n as u64);
            } else if is(args[i], "TYPE") && more {
                wanted_type = Some(parse_client_type(value)?);
            } else if is(args[i], "ADDR") && more {
                addr = Some(value);
            } else if is(args[i], "LADDR") && more {
                laddr = Some(value);
            } else if is(args[i], "USER") && more {
                let Some(u) = ctx.engine.acl.user(value) else {
                    return Err(CmdError::msg(format!("ERR No such user '{}'", String::from_utf8_lossy(value))));
                };
                user = Some(u);
            } else if is(args[i], "SKIPME") && more {
                if is(value, "YES") {
                    skip_me = true;
                } else if is(value, "NO") {
                    skip_me = false;
                } else {
                    return Err(CmdError::Syntax);
                }
            } else {
                return Err(CmdError::Syntax);
            }
            i += 2;
        }
    }
    let me = ctx.client.id;
    let mut killed = 0;
    for handle in ctx.engine.clients.all() {
        if addr.is_some_and(|a| a != handle.conn.addr.as_bytes())
            || laddr.is_some_and(|a| a != handle.conn.laddr.as_bytes())
            || wanted_type.is_some_and(|t| t != client_type(&handle))
            || id.is_some_and(|id| id != handle.id)
            || user.as_ref().is_some_and(|u| !handle.user.lock().as_ref().is_some_and(|h| Arc::ptr_eq(h, u)))
            || (handle.id == me && skip_me)
        {
            continue;
        }
        if handle.id == me {
            // Killing ourselves: the reply goes out first.
            ctx.client.close_after_reply = true;
        } else {
            handle.kill();
        }
        killed += 1;
    }
    if args.len() == 3 {
        if killed == 0 {
            return Err(CmdError::msg("ERR No such client"));
        }
        out.simple("OK");
    } else {
        out.integer(killed);
    }
    Ok(())
}

/// CLIENT SETNAME name — O(1).
fn client_setname(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::connection::set_client_name(ctx, args[2])?;
    out.simple("OK");
    Ok(())
}

/// CLIENT GETNAME — O(1).
fn client_getname(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    match ctx.client.name() {
        Some(name) => out.bulk(&name),
        None => out.null(),
    }
    Ok(())
}

/// CLIENT REPLY ON|OFF|SKIP — O(1). OFF and SKIP send no reply themselves.
fn client_reply(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if is(args[2], "ON") {
        ctx.client.reply_mode = ReplyMode::On;
        out.simple("OK");
    } else if is(args[2], "OFF") {
        ctx.client.reply_mode = ReplyMode::Off;
    } else if is(args[2], "SKIP") {
        if ctx.client.reply_mode != ReplyMode::Off {
            ctx.client.reply_mode = ReplyMode::SkipNext;
        }
    } else {
        return Err(CmdError::Syntax);
    }
    Ok(())
}

/// CLIENT NO-EVICT ON|OFF — O(1).
fn client_no_evict(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let on = if is(args[2], "ON") {
        true
    } else if is(args[2], "OFF") {
        false
    } else {
        return Err(CmdError::Syntax);
    };
    ctx.client.handle.set_flag(flag::NO_EVICT, on);
    out.simple("OK");
    Ok(())
}

fn client_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "CLIENT",
        &[
            "CACHING (YES|NO)",
            "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
            "GETREDIR",
            "    Return the client ID we are redirecting to when tracking is enabled.",
            "GETNAME",
            "    Return the name of the current connection.",
            "ID",
            "    Return the ID of the current connection.",
            "INFO",
            "    Return information about the current client connection.",
            "KILL <ip:port>",
            "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]",
            "    Kill connections. Options are:",
            "    * ADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made from the specified address",
            "    * LADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made to specified local address",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Kill connections by type.",
            "    * USER <username>",
            "      Kill connections authenticated by <username>.",
            "    * SKIPME (YES|NO)",
            "      Skip killing current connection (default: yes).",
            "LIST [options ...]",
            "    Return information about client connections. Options:",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Return clients of specified type.",
            "UNPAUSE",
            "    Stop the current client pause, resuming traffic.",
            "PAUSE <timeout> [WRITE|ALL]",
            "    Suspend all, or just write, clients for <timeout> milliseconds.",
            "REPLY (ON|OFF|SKIP)",
            "    Control the replies sent to the current connection.",
            "SETNAME <name>",
            "    Assign the name <name> to the current connection.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]",
            "    Unblock the specified blocked client.",
            "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
            "         [OPTIN] [OPTOUT] [NOLOOP]",
            "    Control server assisted client side caching.",
            "TRACKINGINFO",
            "    Report tracking status for the current connection.",
            "NO-EVICT (ON|OFF)",
            "    Protect current client connection from eviction.",
        ],
    )
}

/// CLIENT PAUSE timeout [WRITE|ALL] — O(1).
fn client_pause(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len() > 4 {
        return Err(crate::error::subcommand_syntax(args));
    }
    let all = match args.get(3) {
        None => true,
        Some(m) if is(m, "ALL") => true,
        Some(m) if is(m, "WRITE") => false,
        Some(_) => return Err(CmdError::msg("ERR CLIENT PAUSE mode must be WRITE or ALL")),
    };
    let timeout = parse_i64(args[2]).map_err(|_| CmdError::msg("ERR timeout is not an integer or out of range"))?;
    if timeout < 0 {
        return Err(CmdError::msg("ERR timeout is negative"));
    }
    let end = if timeout > 0 {
        timeout.checked_add(ctx.now_ms).ok_or_else(|| CmdError::msg("ERR timeout is out of range"))?
    } else {
        0
    };
    ctx.engine.pause_clients(end, all);
    out.simple("OK");
    Ok(())
}

/// CLIENT UNPAUSE — O(N) in the number of clients (each worker is woken).
fn client_unpause(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    ctx.engine.unpause_clients();
    out.simple("OK");
    Ok(())
}

/// CLIENT UNBLOCK client-id [TIMEOUT|ERROR] — O(log N); ends another client's blocking
/// wait as if it timed out, or with an UNBLOCKED error.
fn client_unblock(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len() > 4 {
        return Err(crate::error::subcommand_syntax(args));
    }
    let how = match args.get(3) {
        None => Unblock::Timeout,
        Some(a) if a.eq_ignore_ascii_case(b"TIMEOUT") => Unblock::Timeout,
        Some(a) if a.eq_ignore_ascii_case(b"ERROR") => Unblock::Error,
        Some(_) => return Err(CmdError::msg("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")),
    };
    let id = super::parse_i64(args[2])?;
    let waiter =
        u64::try_from(id).ok().and_then(|id| ctx.engine.clients.get(id)).and_then(|h| h.blocked_on.lock().clone());
    let unblocked = waiter.is_some_and(|w| ctx.engine.end_wait(&w, how));
    out.integer(i64::from(unblocked));
    Ok(())
}

/// MONITOR — streams every command the server runs to this connection.
fn monitor(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if ctx.client.handle.has_flag(flag::MONITOR) {
        return Ok(());
    }
    ctx.client.handle.set_flag(flag::MONITOR, true);
    ctx.engine.clients.add_monitor(ctx.client.handle.clone());
    out.simple("OK");
    Ok(())
}

/// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]
fn client_tracking(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut settings = crate::tracking::ClientTracking::default();
    let mut prefixes: Vec<&[u8]> = Vec::new();
    let mut j = 3;
    while j < args.len() {
        let more = j + 1 < args.len();
        if is(args[j], "REDIRECT") && more {
            j += 1;
            if settings.redirect != 0 {
                return Err(CmdError::msg("ERR A client can only redirect to a single other client"));
            }
            let id = parse_i64(args[j])?;
            if id <= 0 || ctx.engine.clients.get(id as u64).is_none() {
                return Err(CmdError::msg("ERR The client ID you want redirect to does not exist"));
            }
            settings.redirect = id as u64;
        } else if is(args[j], "BCAST") {
            settings.bcast = true;
        } else if is(args[j], "OPTIN") {
            settings.optin = true;
        } else if is(args[j], "OPTOUT") {
            settings.optout = true;
        } else if is(args[j], "NOLOOP") {
            settings.noloop = true;
        } else if is(args[j], "PREFIX") && more {
            j += 1;
            prefixes.push(args[j]);
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    let handle = ctx.client.handle.clone();
    if is(args[2], "ON") {
        let current = handle.tracking.lock().clone();
        if !settings.bcast && !prefixes.is_empty() {
            return Err(CmdError::msg("ERR PREFIX option requires BCAST mode to be enabled"));
        }
        if current.on && current.bcast != settings.bcast {
            return Err(CmdError::msg(
                "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then \
                 re-enabling it with a different mode.",
            ));
        }
        if settings.bcast && (settings.optin || settings.optout) {
            return Err(CmdError::msg("ERR OPTIN and OPTOUT are not compatible with BCAST"));
        }
        if settings.optin && settings.optout {
            return Err(CmdError::msg("ERR You can't specify both OPTIN mode and OPTOUT mode"));
        }
        if (settings.optin && current.optout) || (settings.optout && current.optin) {
            return Err(CmdError::msg(
                "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then \
                 re-enabling it with a different mode.",
            ));
        }
        if settings.bcast {
            let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            let overlap = |a: &[u8], b: &[u8]| a[..a.len().min(b.len())] == b[..a.len().min(b.len())];
            for (i, p) in prefixes.iter().enumerate() {
                if let Some(old) = current.prefixes.iter().find(|old| overlap(old, p)) {
                    return Err(CmdError::msg(format!(
                        "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must \
                         not overlap.",
                        lossy(p),
                        lossy(old)
                    )));
                }
                if let Some(other) = prefixes[i + 1..].iter().find(|o| overlap(p, o)) {
                    return Err(CmdError::msg(format!(
                        "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client \
                         must not overlap.",
                        lossy(p),
                        lossy(other)
                    )));
                }
            }
        }
        ctx.engine.tracking.enable(&handle, settings, &prefixes);
    } else if is(args[2], "OFF") {
        ctx.engine.tracking.disable(&handle);
    } else {
        return Err(CmdError::Syntax);
    }
    out.simple("OK");
    Ok(())
}

/// CLIENT CACHING YES|NO
fn client_caching(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut state = ctx.client.handle.tracking.lock();
    if !state.on {
        return Err(CmdError::msg(
            "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode \
             enabled",
        ));
    }
    if is(args[2], "YES") {
        if !state.optin {
            return Err(CmdError::msg("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."));
        }
    } else if is(args[2], "NO") {
        if !state.optout {
            return Err(CmdError::msg("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."));
        }
    } else {
        return Err(CmdError::Syntax);
    }
    state.caching = true;
    out.simple("OK");
    Ok(())
}

/// CLIENT GETREDIR
fn client_getredir(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let state = ctx.client.handle.tracking.lock();
    out.integer(if state.on { state.redirect as i64 } else { -1 });
    Ok(())
}

/// CLIENT TRACKINGINFO
fn client_trackinginfo(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let state = ctx.client.handle.tracking.lock().clone();
    out.map(3);
    out.bulk(b"flags");
    let mut flags: Vec<&str> = vec![if state.on { "on" } else { "off" }];
    if state.bcast {
        flags.push("bcast");
    }
    if state.optin {
        flags.push("optin");
        if state.caching {
            flags.push("caching-yes");
        }
    }
    if state.optout {
        flags.push("optout");
        if state.caching {
            flags.push("caching-no");
        }
    }
    if state.noloop {
        flags.push("noloop");
    }
    if state.broken_redirect {
        flags.push("broken_redirect");
    }
    out.set(flags.len());
    flags.iter().for_each(|f| out.bulk(f.as_bytes()));
    out.bulk(b"redirect");
    out.integer(if state.on { state.redirect as i64 } else { -1 });
    out.bulk(b"prefixes");
    out.array(state.prefixes.len());
    state.prefixes.iter().for_each(|p| out.bulk(p));
    Ok(())
}

fn sub(
    name: &str,
    arity: i32,
    flags: &str,
    handler: crate::command::Handler,
    since: &'static str,
    summary: &'static str,
) -> CommandSpec {
    CommandSpec::new(name, arity, flags, "connection", handler).doc("connection", since, summary, "O(1)")
}

pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::container(
            "client",
            "",
            "",
            vec![
                sub(
                    "id",
                    2,
                    "noscript loading stale",
                    client_id,
                    "5.0.0",
                    "Returns the client ID for the current connection",
                ),
                sub(
                    "info",
                    2,
                    "noscript loading stale",
                    client_info,
                    "6.2.0",
                    "Returns information about the current client connection.",
                )
                .tips(&["nondeterministic_output"]),
                sub(
                    "list",
                    -2,
                    "admin noscript loading stale",
                    client_list,
                    "2.4.0",
                    "Get the list of client connections",
                )
                .tips(&["nondeterministic_output"])
                .history(&[
                    ("2.8.12", "Added unique client `id` field."),
                    ("5.0.0", "Added optional `TYPE` filter."),
                    ("6.0.0", "Added `user` field."),
                    ("6.2.0", "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."),
                    ("7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."),
                    ("7.0.3", "Added `ssub` field."),
                ]),
                sub(
                    "kill",
                    -3,
                    "admin noscript loading stale",
                    client_kill,
                    "2.4.0",
                    "Kill the connection of a client",
                ),
                sub("setname", 3, "noscript loading stale", client_setname, "2.6.9", "Set the current connection name"),
                sub("getname", 2, "noscript loading stale", client_getname, "2.6.9", "Get the current connection name"),
                sub(
                    "reply",
                    3,
                    "noscript loading stale",
                    client_reply,
                    "3.2.0",
                    "Instruct the server whether to reply to commands",
                )
                .args(vec![ArgDoc::one_of(
                    "on_off_skip",
                    vec![ArgDoc::token("on", "ON"), ArgDoc::token("off", "OFF"), ArgDoc::token("skip", "SKIP")],
                )]),
                sub(
                    "tracking",
                    -3,
                    "noscript loading stale",
                    client_tracking,
                    "6.0.0",
                    "Enable or disable server assisted client side caching support",
                )
                .doc(
                    "connection",
                    "6.0.0",
                    "Enable or disable server assisted client side caching support",
                    "O(1). Some options may introduce additional complexity.",
                )
                .args(vec![
                    ArgDoc::one_of("status", vec![ArgDoc::token("on", "ON"), ArgDoc::token("off", "OFF")]),
                    ArgDoc::new("client-id", crate::command::ArgType::Integer).after("REDIRECT").optional(),
                    ArgDoc::new("prefix", crate::command::ArgType::String)
                        .after("PREFIX")
                        .optional()
                        .multiple()
                        .multiple_token(),
                    ArgDoc::token("bcast", "BCAST").optional(),
                    ArgDoc::token("optin", "OPTIN").optional(),
                    ArgDoc::token("optout", "OPTOUT").optional(),
                    ArgDoc::token("noloop", "NOLOOP").optional(),
                ]),
                sub(
                    "caching",
                    3,
                    "noscript loading stale",
                    client_caching,
                    "6.0.0",
                    "Instruct the server about tracking or not keys in the next request",
                )
                .args(vec![ArgDoc::one_of("mode", vec![ArgDoc::token("yes", "YES"), ArgDoc::token("no", "NO")])]),
                sub(
                    "getredir",
                    2,
                    "noscript loading stale",
                    client_getredir,
                    "6.0.0",
                    "Get tracking notifications redirection client ID if any",
                ),
                sub(
                    "trackinginfo",
                    2,
                    "noscript loading stale",
                    client_trackinginfo,
                    "6.2.0",
                    "Return information about server assisted client side caching for the current connection",
                ),
                sub(
                    "no-evict",
                    3,
                    "admin noscript loading stale",
                    client_no_evict,
                    "7.0.0",
                    "Set client eviction mode for the current connection",
                )
                .args(vec![ArgDoc::one_of("enabled", vec![ArgDoc::token("on", "ON"), ArgDoc::token("off", "OFF")])]),
                sub(
                    "pause",
                    -3,
                    "admin noscript loading stale",
                    client_pause,
                    "2.9.50",
                    "Stop processing commands from clients for some time",
                )
                .history(&[("6.2.0", "`CLIENT PAUSE WRITE` mode added along with the `mode` option.")])
                .args(vec![
                    ArgDoc::new("timeout", crate::command::ArgType::Integer),
                    ArgDoc::one_of("mode", vec![ArgDoc::token("write", "WRITE"), ArgDoc::token("all", "ALL")])
                        .optional()
                        .since("6.2.0"),
                ]),
                sub(
                    "unblock",
                    -3,
                    "admin noscript loading stale",
                    client_unblock,
                    "5.0.0",
                    "Unblock a client blocked in a blocking command from a different connection",
                )
                .args(vec![
                    ArgDoc::new("client-id", crate::command::ArgType::Integer),
                    ArgDoc::one_of(
                        "timeout_error",
                        vec![ArgDoc::token("timeout", "TIMEOUT"), ArgDoc::token("error", "ERROR")],
                    )
                    .optional(),
                ]),
                sub(
                    "unpause",
                    2,
                    "admin noscript loading stale",
                    client_unpause,
                    "6.2.0",
                    "Resume processing of clients that were paused",
                ),
                sub(
                    "help",
                    2,
                    "loading stale",
                    client_help,
                    "5.0.0",
                    "Show helpful text about the different subcommands",
                ),
            ],
        )
        .doc("connection", "2.4.0", "A container for client connection commands", "Depends on subcommand."),
        CommandSpec::new("monitor", 1, "admin noscript loading stale", "", monitor).doc(
            "server",
            "1.0.0",
            "Listen for all requests received by the server in real time",
            "",
        ),
    ]
}
