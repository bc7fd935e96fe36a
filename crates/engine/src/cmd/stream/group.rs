//! Consumer group commands: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, and XINFO.

use super::{get, get_read, interval_id, loose_id, nogroup_key, reply_entry, reply_id, strict_id, subcommand_syntax};
use crate::cmd::is;
use crate::cmd::server::reply_subcommand_help;
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{TtlOnWrite, Value};
use crate::pubsub::notify;
use crate::reply::ReplySink;
use crate::types::stream::{Group, Nack, StreamId, ENTRIES_READ_INVALID};
use crate::types::StreamValue;

fn lossy(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER ... — one handler for the
/// subcommands, sharing Redis's option parsing and existence checks (xgroupCommand).
pub(super) fn xgroup(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let sub = args[1];
    let argc = args.len();
    let mut mkstream = false;
    let mut entries_read = ENTRIES_READ_INVALID;
    let key = args.get(2).copied().unwrap_or_default();
    let group = args.get(3).copied().unwrap_or_default();
    let now = ctx.now_ms;
    let create = is(sub, "create");
    let setid = is(sub, "setid");
    let mut i = 5;
    while i < argc {
        if create && is(args[i], "mkstream") {
            mkstream = true;
            i += 1;
        } else if (create || setid) && is(args[i], "entriesread") && i + 1 < argc {
            entries_read = quince_resp::parse_i64_strict(args[i + 1]).ok_or(CmdError::NotInteger)?;
            if entries_read < 0 && entries_read != ENTRIES_READ_INVALID {
                return Err(CmdError::msg("ERR value for ENTRIESREAD must be positive or -1"));
            }
            i += 2;
        } else {
            return Err(subcommand_syntax(args));
        }
    }
    let exists = get(ctx.db(key), key, now)?.is_some();
    if !mkstream {
        if !exists {
            return Err(CmdError::msg(
                "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use \
                 the MKSTREAM option to create an empty stream automatically.",
            ));
        }
        let has_group = get(ctx.db(key), key, now)?.is_some_and(|s| s.groups.contains_key(group));
        if !has_group && (setid || is(sub, "createconsumer") || is(sub, "delconsumer")) {
            return Err(CmdError::msg(format!(
                "NOGROUP No such consumer group '{}' for key name '{}'",
                lossy(group),
                lossy(key)
            )));
        }
    }
    if create && (5..=8).contains(&argc) {
        let id = if args[4] == b"$" {
            get(ctx.db(key), key, now)?.map_or(StreamId::MIN, |s| s.last_id)
        } else {
            strict_id(args[4], 0)?
        };
        let db = ctx.db(key);
        if !exists {
            db.set(key, Value::Stream(Box::default()), TtlOnWrite::Clear, now);
        }
        let stream = get(db, key, now)?.expect("stream exists");
        if stream.groups.contains_key(group) {
            return Err(CmdError::msg("BUSYGROUP Consumer Group name already exists"));
        }
        stream.groups.insert(group.to_vec(), Group::new(id, entries_read));
        ctx.dirty(1);
        ctx.notify(notify::STREAM, "xgroup-create", key);
        out.simple("OK");
    } else if setid && (argc == 5 || argc == 7) {
        let stream = get(ctx.db(key), key, now)?.expect("stream exists");
        let id = if args[4] == b"$" { stream.last_id } else { loose_id(args[4], 0)? };
        let g = stream.groups.get_mut(group).expect("group exists");
        g.last_id = id;
        g.entries_read = entries_read;
        ctx.dirty(1);
        ctx.notify(notify::STREAM, "xgroup-setid", key);
        out.simple("OK");
    } else if is(sub, "destroy") && argc == 4 {
        let stream = get(ctx.db(key), key, now)?.expect("stream exists");
        if stream.groups.remove(group).is_some() {
            ctx.dirty(1);
            // Clients blocked in XREADGROUP on this group get their error.
            ctx.db(key).signal_ready(key);
            ctx.notify(notify::STREAM, "xgroup-destroy", key);
            out.integer(1);
        } else {
            out.integer(0);
        }
    } else if is(sub, "createconsumer") && argc == 5 {
        let stream = get(ctx.db(key), key, now)?.expect("stream exists");
        let created = stream.groups.get_mut(group).expect("group exists").create_consumer(args[4], now);
        if created {
            ctx.dirty(1);
            ctx.notify(notify::STREAM, "xgroup-createconsumer", key);
        }
        out.integer(i64::from(created));
    } else if is(sub, "delconsumer") && argc == 5 {
        let stream = get(ctx.db(key), key, now)?.expect("stream exists");
        let pending = stream.groups.get_mut(group).expect("group exists").delete_consumer(args[4]);
        if pending.is_some() {
            ctx.dirty(1);
            ctx.notify(notify::STREAM, "xgroup-delconsumer", key);
        }
        out.integer(pending.unwrap_or(0) as i64);
    } else {
        return Err(subcommand_syntax(args));
    }
    Ok(())
}

/// XGROUP HELP — O(1).
pub(super) fn xgroup_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    reply_subcommand_help(
        out,
        "XGROUP",
        &[
            "CREATE <key> <groupname> <id|$> [option]",
            "    Create a new consumer group. Options are:",
            "    * MKSTREAM",
            "      Create the empty stream if it does not exist.",
            "    * ENTRIESREAD entries_read",
            "      Set the group's entries_read counter (internal use).",
            "CREATECONSUMER <key> <groupname> <consumer>",
            "    Create a new consumer in the specified group.",
            "DELCONSUMER <key> <groupname> <consumer>",
            "    Remove the specified consumer.",
            "DESTROY <key> <groupname>",
            "    Remove the specified group.",
            "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
            "    Set the current group ID and entries_read counter.",
        ],
    )
}

/// XACK key group id [id ...] — O(1) for each ID.
pub(super) fn xack(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (key, group) = (args[1], args[2]);
    let has_group = get_read(ctx, key)?.is_some_and(|s| s.groups.contains_key(group));
    if !has_group {
        out.integer(0);
        return Ok(());
    }
    let ids = args[3..].iter().map(|a| strict_id(a, 0)).collect::<Result<Vec<_>, _>>()?;
    let now = ctx.now_ms;
    let g = get(ctx.db(key), key, now)?.expect("stream").groups.get_mut(group).expect("group");
    let acked = ids.iter().filter(|&&id| g.ack(id)).count();
    ctx.dirty(acked as u64);
    out.integer(acked as i64);
    Ok(())
}

/// XPENDING key group [[IDLE min-idle-time] start end count [consumer]] — O(N) for the
/// entries returned.
pub(super) fn xpending(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let argc = args.len();
    let (key, group) = (args[1], args[2]);
    if argc != 3 && !(6..=9).contains(&argc) {
        return Err(CmdError::Syntax);
    }
    let mut range = None;
    let mut min_idle = 0;
    let mut consumer = None;
    if argc >= 6 {
        let mut start_idx = 3;
        if is(args[3], "idle") {
            min_idle = quince_resp::parse_i64_strict(args[4]).ok_or(CmdError::NotInteger)?;
            if argc < 8 {
                return Err(CmdError::Syntax);
            }
            start_idx += 2;
        }
        let count = quince_resp::parse_i64_strict(args[start_idx + 2]).ok_or(CmdError::NotInteger)?.max(0);
        let start = interval_id(args[start_idx], 0, true)?;
        let end = interval_id(args[start_idx + 1], u64::MAX, false)?;
        if start_idx + 3 < argc {
            consumer = Some(args[start_idx + 3]);
        }
        range = Some((start, end, count));
    }
    let now = ctx.now_ms;
    let Some(g) = get_read(ctx, key)?.and_then(|s| s.groups.get(group)) else {
        return Err(nogroup_key(key, group));
    };
    let Some((start, end, mut count)) = range else {
        out.array(4);
        out.integer(g.pel.len() as i64);
        match (g.pel.keys().next(), g.pel.keys().next_back()) {
            (Some(&first), Some(&last)) => {
                reply_id(out, first);
                reply_id(out, last);
                let owners: Vec<_> = g.consumers.iter().filter(|(_, c)| !c.pel.is_empty()).collect();
                out.array(owners.len());
                for (name, c) in owners {
                    out.array(2);
                    out.bulk(name);
                    out.bulk(c.pel.len().to_string().as_bytes());
                }
            }
            _ => {
                out.null();
                out.null();
                out.null_array();
            }
        }
        return Ok(());
    };
    let ids: Vec<StreamId> = match consumer {
        Some(name) => match g.consumers.get(name) {
            Some(c) if start <= end => c.pel.range(start..=end).copied().collect(),
            Some(_) => Vec::new(),
            None => {
                out.array(0);
                return Ok(());
            }
        },
        None if start <= end => g.pel.range(start..=end).map(|(id, _)| *id).collect(),
        None => Vec::new(),
    };
    let mut rows = Vec::new();
    for id in ids {
        if count == 0 {
            break;
        }
        let nack = &g.pel[&id];
        if min_idle != 0 && now - nack.delivery_time < min_idle {
            continue;
        }
        count -= 1;
        rows.push((id, nack));
    }
    out.array(rows.len());
    for (id, nack) in rows {
        out.array(4);
        reply_id(out, id);
        out.bulk(&nack.consumer);
        out.integer((now - nack.delivery_time).max(0));
        out.integer(nack.delivery_count as i64);
    }
    Ok(())
}

fn int_with_msg(arg: &[u8], msg: &str) -> Result<i64, CmdError> {
    quince_resp::parse_i64_strict(arg).ok_or_else(|| CmdError::msg(format!("ERR {msg}")))
}

/// Moves a pending entry to `consumer` (creating the consumer), as XCLAIM/XAUTOCLAIM do.
/// True if the consumer had to be created (Redis then notifies `xgroup-createconsumer`).
fn assign(g: &mut Group, id: StreamId, consumer: &[u8], now: i64) -> bool {
    let created = match g.consumers.get_mut(consumer) {
        Some(c) => {
            c.seen_time = now;
            false
        }
        None => g.create_consumer(consumer, now),
    };
    let nack = g.pel.get_mut(&id).expect("pending");
    if nack.consumer != consumer {
        let old = std::mem::replace(&mut nack.consumer, consumer.to_vec());
        if let Some(c) = g.consumers.get_mut(&old) {
            c.pel.remove(&id);
        }
        g.consumers.get_mut(consumer).expect("consumer").pel.insert(id);
    }
    created
}

/// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-ms]
/// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid] — O(log N) per ID.
pub(super) fn xclaim(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (key, group, consumer) = (args[1], args[2], args[3]);
    let has_group = get_read(ctx, key)?.is_some_and(|s| s.groups.contains_key(group));
    if !has_group {
        return Err(nogroup_key(key, group));
    }
    let min_idle = int_with_msg(args[4], "Invalid min-idle-time argument for XCLAIM")?.max(0);
    let mut j = 5;
    let mut ids = Vec::new();
    while j < args.len() {
        match super::parse_id_quiet(args[j]) {
            Some(id) => ids.push(id),
            None => break,
        }
        j += 1;
    }
    let now = ctx.now_ms;
    let (mut force, mut justid) = (false, false);
    let mut delivery_time: i64 = -1;
    let mut retry_count: i64 = -1;
    let mut last_id = StreamId::MIN;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let opt = args[j];
        if is(opt, "force") {
            force = true;
        } else if is(opt, "justid") {
            justid = true;
        } else if is(opt, "idle") && more > 0 {
            j += 1;
            delivery_time = now - int_with_msg(args[j], "Invalid IDLE option argument for XCLAIM")?;
        } else if is(opt, "time") && more > 0 {
            j += 1;
            delivery_time = int_with_msg(args[j], "Invalid TIME option argument for XCLAIM")?;
        } else if is(opt, "retrycount") && more > 0 {
            j += 1;
            retry_count = int_with_msg(args[j], "Invalid RETRYCOUNT option argument for XCLAIM")?;
        } else if is(opt, "lastid") && more > 0 {
            j += 1;
            last_id = strict_id(args[j], 0)?;
        } else {
            return Err(CmdError::msg(format!("ERR Unrecognized XCLAIM option '{}'", lossy(opt))));
        }
        j += 1;
    }
    let propagating = ctx.propagating();
    let stream = get(ctx.db(key), key, now)?.expect("stream");
    let mut dirty = 0;
    // Logged as one idempotent XCLAIM per claimed (or dropped) entry, or an XGROUP SETID
    // when only LASTID moved the group (xclaimCommand); never as itself.
    let mut effects: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut propagate_last_id = false;
    {
        let g = stream.groups.get_mut(group).expect("group");
        if last_id > g.last_id {
            g.last_id = last_id;
            dirty += 1;
            propagate_last_id = true;
        }
    }
    if delivery_time == -1 || delivery_time < 0 || delivery_time > now {
        delivery_time = now;
    }
    let mut claimed = Vec::new();
    let mut created_consumer = false;
    for (index, id) in ids.into_iter().enumerate() {
        let id_arg = args[5 + index];
        let exists = stream.get(id).is_some();
        let g = stream.groups.get_mut(group).expect("group");
        if !exists {
            if propagating {
                if let Some(nack) = g.pel.get(&id) {
                    effects.push(super::xclaim_effect(key, group, id_arg, nack, g.last_id));
                    propagate_last_id = false;
                }
            }
            if g.ack(id) {
                dirty += 1;
            }
            continue;
        }
        let mut fresh = false;
        if force && !g.pel.contains_key(&id) {
            g.pel.insert(id, Nack { consumer: Vec::new(), delivery_time: now, delivery_count: 1 });
            fresh = true;
        }
        let Some(nack) = g.pel.get(&id) else { continue };
        if !fresh && min_idle != 0 && now - nack.delivery_time < min_idle {
            continue;
        }
        created_consumer |= assign(g, id, consumer, now);
        let nack = g.pel.get_mut(&id).expect("pending");
        nack.delivery_time = delivery_time;
        if retry_count >= 0 {
            nack.delivery_count = retry_count as u64;
        } else if !justid {
            nack.delivery_count += 1;
        }
        if propagating {
            let nack = &g.pel[&id];
            effects.push(super::xclaim_effect(key, group, id_arg, nack, g.last_id));
            propagate_last_id = false;
        }
        claimed.push(id);
        dirty += 1;
    }
    if propagate_last_id && propagating {
        effects.push(super::setid_effect(key, group, &stream.groups[group]));
    }
    out.array(claimed.len());
    for id in claimed {
        if justid {
            reply_id(out, id);
        } else {
            reply_entry(out, id, &stream.get(id).expect("exists"));
        }
    }
    if created_consumer {
        ctx.notify(notify::STREAM, "xgroup-createconsumer", key);
    }
    ctx.dirty(dirty);
    ctx.propagate_nothing();
    super::propagate_all(ctx, effects);
    Ok(())
}

/// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID] — O(1) per
/// entry scanned.
pub(super) fn xautoclaim(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (key, group, consumer) = (args[1], args[2], args[3]);
    let min_idle = int_with_msg(args[4], "Invalid min-idle-time argument for XAUTOCLAIM")?.max(0);
    let start = interval_id(args[5], 0, true)?;
    let mut count: i64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(args[j], "count") && more > 0 {
            const MAX_COUNT: i64 = i64::MAX / 16;
            count = quince_resp::parse_i64_strict(args[j + 1])
                .filter(|c| (1..=MAX_COUNT).contains(c))
                .ok_or_else(|| CmdError::msg("ERR COUNT must be > 0"))?;
            j += 1;
        } else if is(args[j], "justid") {
            justid = true;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    let has_group = get_read(ctx, key)?.is_some_and(|s| s.groups.contains_key(group));
    if !has_group {
        return Err(nogroup_key(key, group));
    }
    let now = ctx.now_ms;
    let propagating = ctx.propagating();
    let stream = get(ctx.db(key), key, now)?.expect("stream");
    // Logged as one idempotent XCLAIM per claimed or dropped entry (xautoclaimCommand).
    let mut effects: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut attempts = count.saturating_mul(10);
    let mut claimed = Vec::new();
    let mut created_consumer = false;
    let mut deleted = Vec::new();
    let mut cursor = start;
    let mut last_seen: Option<StreamId> = None;
    let mut dirty = 0;
    loop {
        if attempts == 0 || count == 0 {
            break;
        }
        attempts -= 1;
        let next = stream.groups[group].pel.range(cursor..).next().map(|(id, _)| *id);
        let Some(id) = next else {
            last_seen = None;
            break;
        };
        last_seen = Some(id);
        cursor = id.incr().unwrap_or(StreamId::MAX);
        let exists = stream.get(id).is_some();
        let g = stream.groups.get_mut(group).expect("group");
        if !exists {
            if propagating {
                effects.push(super::xclaim_effect(key, group, &id.to_bytes(), &g.pel[&id], g.last_id));
            }
            g.ack(id);
            deleted.push(id);
            count -= 1;
            dirty += 1;
            continue;
        }
        if min_idle != 0 && now - g.pel[&id].delivery_time < min_idle {
            continue;
        }
        created_consumer |= assign(g, id, consumer, now);
        let nack = g.pel.get_mut(&id).expect("pending");
        nack.delivery_time = now;
        if !justid {
            nack.delivery_count += 1;
        }
        if propagating {
            effects.push(super::xclaim_effect(key, group, &id.to_bytes(), &g.pel[&id], g.last_id));
        }
        claimed.push(id);
        count -= 1;
        dirty += 1;
        if id == StreamId::MAX {
            last_seen = None;
            break;
        }
    }
    // The next ID to scan from: the first pending entry after the last one looked at.
    let end = match last_seen {
        Some(last) => {
            last.incr().and_then(|n| stream.groups[group].pel.range(n..).next().map(|(id, _)| *id)).unwrap_or_default()
        }
        None => StreamId::MIN,
    };
    out.array(3);
    reply_id(out, end);
    out.array(claimed.len());
    for id in claimed {
        if justid {
            reply_id(out, id);
        } else {
            reply_entry(out, id, &stream.get(id).expect("exists"));
        }
    }
    out.array(deleted.len());
    for id in deleted {
        reply_id(out, id);
    }
    if created_consumer {
        ctx.notify(notify::STREAM, "xgroup-createconsumer", key);
    }
    ctx.dirty(dirty);
    ctx.propagate_nothing();
    super::propagate_all(ctx, effects);
    Ok(())
}

/// The stream for XINFO: "no such key" when missing.
fn xinfo_stream_of<'d>(ctx: &'d mut Ctx<'_>, key: &[u8]) -> Result<&'d mut StreamValue, CmdError> {
    get_read(ctx, key)?.ok_or_else(|| CmdError::msg("ERR no such key"))
}

fn reply_lag(out: &mut dyn ReplySink, s: &StreamValue, g: &Group) {
    match s.group_lag(g) {
        Some(lag) => out.integer(lag),
        None => out.null(),
    }
}

fn reply_entries_read(out: &mut dyn ReplySink, g: &Group) {
    if g.entries_read == ENTRIES_READ_INVALID {
        out.null();
    } else {
        out.integer(g.entries_read);
    }
}

/// XINFO STREAM key [FULL [COUNT count]] — O(1), O(N) with FULL.
pub(super) fn xinfo_stream(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let s = xinfo_stream_of(ctx, args[2])?;
    let opts = &args[3..];
    let mut full = false;
    let mut count: i64 = 10;
    if !opts.is_empty() {
        if (opts.len() != 1 && opts.len() != 3) || !is(opts[0], "full") {
            return Err(subcommand_syntax(args));
        }
        full = true;
        if opts.len() == 3 {
            if !is(opts[1], "count") {
                return Err(subcommand_syntax(args));
            }
            count = quince_resp::parse_i64_strict(opts[2]).ok_or(CmdError::NotInteger)?;
            if count < 0 {
                count = 10;
            }
        }
    }
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    out.map(if full { 9 } else { 10 });
    out.bulk(b"length");
    out.integer(s.len() as i64);
    out.bulk(b"radix-tree-keys");
    out.integer(s.node_count() as i64);
    out.bulk(b"radix-tree-nodes");
    out.integer(s.node_count() as i64 + 1);
    out.bulk(b"last-generated-id");
    reply_id(out, s.last_id);
    out.bulk(b"max-deleted-entry-id");
    reply_id(out, s.max_deleted_id);
    out.bulk(b"entries-added");
    out.integer(s.entries_added as i64);
    out.bulk(b"recorded-first-entry-id");
    reply_id(out, s.first_id);
    if !full {
        out.bulk(b"groups");
        out.integer(s.groups.len() as i64);
        for (name, rev) in [(&b"first-entry"[..], false), (&b"last-entry"[..], true)] {
            out.bulk(name);
            match s.range(StreamId::MIN, StreamId::MAX, rev, 1).first() {
                Some((id, fields)) => reply_entry(out, *id, fields),
                None => out.null(),
            }
        }
        return Ok(());
    }
    out.bulk(b"entries");
    super::reply_entries(out, &s.range(StreamId::MIN, StreamId::MAX, false, count));
    out.bulk(b"groups");
    out.array(s.groups.len());
    let limit = if count == 0 { usize::MAX } else { count };
    for (name, g) in &s.groups {
        out.map(7);
        out.bulk(b"name");
        out.bulk(name);
        out.bulk(b"last-delivered-id");
        reply_id(out, g.last_id);
        out.bulk(b"entries-read");
        reply_entries_read(out, g);
        out.bulk(b"lag");
        reply_lag(out, s, g);
        out.bulk(b"pel-count");
        out.integer(g.pel.len() as i64);
        out.bulk(b"pending");
        let pending: Vec<_> = g.pel.iter().take(limit).collect();
        out.array(pending.len());
        for (id, nack) in pending {
            out.array(4);
            reply_id(out, *id);
            out.bulk(&nack.consumer);
            out.integer(nack.delivery_time);
            out.integer(nack.delivery_count as i64);
        }
        out.bulk(b"consumers");
        out.array(g.consumers.len());
        for (cname, c) in &g.consumers {
            out.map(4);
            out.bulk(b"name");
            out.bulk(cname);
            out.bulk(b"seen-time");
            out.integer(c.seen_time);
            out.bulk(b"pel-count");
            out.integer(c.pel.len() as i64);
            out.bulk(b"pending");
            let pending: Vec<_> = c.pel.iter().take(limit).collect();
            out.array(pending.len());
            for id in pending {
                let nack = &g.pel[id];
                out.array(3);
                reply_id(out, *id);
                out.integer(nack.delivery_time);
                out.integer(nack.delivery_count as i64);
            }
        }
    }
    Ok(())
}

/// XINFO GROUPS key — O(1) per group.
pub(super) fn xinfo_groups(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let s = xinfo_stream_of(ctx, args[2])?;
    out.array(s.groups.len());
    for (name, g) in &s.groups {
        out.map(6);
        out.bulk(b"name");
        out.bulk(name);
        out.bulk(b"consumers");
        out.integer(g.consumers.len() as i64);
        out.bulk(b"pending");
        out.integer(g.pel.len() as i64);
        out.bulk(b"last-delivered-id");
        reply_id(out, g.last_id);
        out.bulk(b"entries-read");
        reply_entries_read(out, g);
        out.bulk(b"lag");
        reply_lag(out, s, g);
    }
    Ok(())
}

/// XINFO CONSUMERS key group — O(1) per consumer.
pub(super) fn xinfo_consumers(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (key, group) = (args[2], args[3]);
    let now = ctx.now_ms;
    let s = xinfo_stream_of(ctx, key)?;
    let Some(g) = s.groups.get(group) else {
        return Err(CmdError::msg(format!(
            "NOGROUP No such consumer group '{}' for key name '{}'",
            lossy(group),
            lossy(key)
        )));
    };
    out.array(g.consumers.len());
    for (name, c) in &g.consumers {
        out.map(3);
        out.bulk(b"name");
        out.bulk(name);
        out.bulk(b"pending");
        out.integer(c.pel.len() as i64);
        out.bulk(b"idle");
        out.integer((now - c.seen_time).max(0));
    }
    Ok(())
}

/// XINFO HELP — O(1).
pub(super) fn xinfo_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    reply_subcommand_help(
        out,
        "XINFO",
        &[
            "CONSUMERS <key> <groupname>",
            "    Show consumers of <groupname>.",
            "GROUPS <key>",
            "    Show the stream consumer groups.",
            "STREAM <key> [FULL [COUNT <count>]",
            "    Show information about the stream.",
        ],
    )
}
