//! Entry commands: XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID, XREAD, XREADGROUP.

use super::{get, get_read, interval_id, node_limits, reply_entries, reply_id, strict_id};
use crate::cmd::is;
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{TtlOnWrite, Value};
use crate::pubsub::notify;
use crate::reply::ReplySink;
use crate::types::stream::{parse_id, ParsedId, StreamId, Trim};
use crate::types::StreamValue;
use quince_resp::Protocol;

/// XADD/XTRIM options (Redis's streamAddTrimArgs).
struct TrimArgs {
    trim: Option<Trim>,
    approx: bool,
    /// Entries removed at most (0: no limit).
    limit: u64,
    no_mkstream: bool,
    /// XADD: the explicit ID (None for `*`) and its argument position.
    id: Option<ParsedId>,
    id_pos: usize,
    /// Position of the MAXLEN/MINID threshold argument (its `~` is just before it).
    trim_arg: usize,
}

fn int_arg(arg: &[u8]) -> Result<i64, CmdError> {
    quince_resp::parse_i64_strict(arg).ok_or(CmdError::NotInteger)
}

/// Redis's streamParseAddOrTrimArgsOrReply.
fn parse_trim_args(ctx: &Ctx<'_>, args: &[&[u8]], xadd: bool) -> Result<TrimArgs, CmdError> {
    let mut t =
        TrimArgs { trim: None, approx: false, limit: 0, no_mkstream: false, id: None, id_pos: args.len(), trim_arg: 0 };
    let mut limit_given = false;
    let mut i = 2;
    let incompatible =
        || CmdError::msg("ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = args[i];
        if xadd && opt == b"*" {
            t.id_pos = i;
            break;
        } else if is(opt, "maxlen") && more > 0 {
            if t.trim.is_some() {
                return Err(incompatible());
            }
            t.approx = false;
            let next = args[i + 1];
            if more >= 2 && next == b"~" {
                t.approx = true;
                i += 1;
            } else if more >= 2 && next == b"=" {
                i += 1;
            }
            let maxlen = int_arg(args[i + 1])?;
            if maxlen < 0 {
                return Err(CmdError::msg("ERR The MAXLEN argument must be >= 0."));
            }
            i += 1;
            t.trim_arg = i;
            t.trim = Some(Trim::MaxLen(maxlen as u64));
        } else if is(opt, "minid") && more > 0 {
            if t.trim.is_some() {
                return Err(incompatible());
            }
            t.approx = false;
            let next = args[i + 1];
            if more >= 2 && next == b"~" {
                t.approx = true;
                i += 1;
            } else if more >= 2 && next == b"=" {
                i += 1;
            }
            let min = strict_id(args[i + 1], 0)?;
            i += 1;
            t.trim_arg = i;
            t.trim = Some(Trim::MinId(min));
        } else if is(opt, "limit") && more > 0 {
            let limit = int_arg(args[i + 1])?;
            if limit < 0 {
                return Err(CmdError::msg("ERR The LIMIT argument must be >= 0."));
            }
            t.limit = limit as u64;
            limit_given = true;
            i += 1;
        } else if xadd && is(opt, "nomkstream") {
            t.no_mkstream = true;
        } else if xadd {
            let parsed = parse_id(opt, 0, true, true).ok_or_else(super::invalid_id)?;
            t.id = Some(parsed);
            t.id_pos = i;
            break;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    if t.limit != 0 && t.trim.is_none() {
        return Err(CmdError::msg("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"));
    }
    if !xadd && t.trim.is_none() {
        return Err(CmdError::msg("ERR syntax error, XTRIM must be called with a trimming strategy"));
    }
    if ctx.obeying() {
        // The AOF loader and a master are obeyed (Redis's mustObeyClient): their trims are
        // exact rewrites that may keep a LIMIT, which must not limit them.
        t.limit = 0;
    } else if limit_given {
        if !t.approx {
            return Err(CmdError::msg("ERR syntax error, LIMIT cannot be used without the special ~ option"));
        }
    } else if t.approx {
        let max_entries = ctx.limits().stream_node_max_entries;
        let limit = max_entries.saturating_mul(100);
        t.limit = if limit <= 0 { 10000 } else { limit.min(1_000_000) as u64 };
    } else {
        t.limit = 0;
    }
    Ok(t)
}

/// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value
/// [field value ...] — O(1) when adding, O(N) for the entries trimmed.
pub(super) fn xadd(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let t = parse_trim_args(ctx, args, true)?;
    let field_pos = t.id_pos + 1;
    if args.len() < field_pos + 2 || (args.len() - field_pos) % 2 == 1 {
        return Err(CmdError::msg("ERR wrong number of arguments for 'xadd' command"));
    }
    if let Some(p) = t.id {
        if p.seq_given && p.id.is_zero() {
            return Err(CmdError::msg("ERR The ID specified in XADD must be greater than 0-0"));
        }
    }
    let key = args[1];
    let now = ctx.now_ms;
    let limits = node_limits(ctx);
    let propagating = ctx.propagating();
    let db = ctx.db(key);
    let exists = get(db, key, now)?.is_some();
    if !exists && t.no_mkstream {
        out.null();
        return Ok(());
    }
    let last_id = get(db, key, now)?.map(|s| s.last_id).unwrap_or_default();
    if last_id == StreamId::MAX {
        return Err(CmdError::msg("ERR The stream has exhausted the last possible ID, unable to add more items"));
    }
    let smaller = || CmdError::msg("ERR The ID specified in XADD is equal or smaller than the target stream top item");
    let id = match t.id {
        None => {
            let ms = now.max(0) as u64;
            if ms > last_id.ms {
                StreamId::new(ms, 0)
            } else {
                last_id.incr().ok_or_else(smaller)?
            }
        }
        Some(p) if p.seq_given => p.id,
        Some(p) => {
            if p.id.ms == last_id.ms {
                if last_id.seq == u64::MAX {
                    return Err(smaller());
                }
                StreamId::new(last_id.ms, last_id.seq + 1)
            } else {
                p.id
            }
        }
    };
    if id <= last_id {
        return Err(smaller());
    }
    if !exists {
        db.set(key, Value::Stream(Box::default()), TtlOnWrite::Clear, now);
    }
    let stream = get(db, key, now)?.expect("stream exists");
    stream.append(id, &args[field_pos..], limits);
    reply_id(out, id);
    let trimmed = match t.trim {
        Some(trim) => stream.trim(trim, t.approx, t.limit),
        None => 0,
    };
    // Logged deterministically (xaddCommand): an approximate trim as the exact one it did,
    // an auto-generated (`*` or `ms-*`) ID as the ID given.
    let rewritten = propagating.then(|| {
        let mut rewritten: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
        if t.approx && t.trim.is_some() {
            rewrite_approx_trim(&mut rewritten, &t, stream);
        }
        if t.id.is_none_or(|p| !p.seq_given) {
            rewritten[t.id_pos] = id.to_bytes();
        }
        rewritten
    });
    db.signal_ready(key);
    if let Some(rewritten) = rewritten {
        ctx.propagate_as(&rewritten);
    }
    ctx.dirty(1);
    ctx.notify(notify::STREAM, "xadd", key);
    if trimmed > 0 {
        ctx.notify(notify::STREAM, "xtrim", key);
    }
    Ok(())
}

/// Redis's streamRewriteApproxSpecifier and streamRewriteTrimArgument: `MAXLEN ~ n` is
/// logged as `MAXLEN = <length now>`, `MINID ~ id` as `MINID = <first ID now>`, since how
/// much an approximate trim removes depends on the node layout.
fn rewrite_approx_trim(rewritten: &mut [Vec<u8>], t: &TrimArgs, stream: &StreamValue) {
    rewritten[t.trim_arg - 1] = b"=".to_vec();
    rewritten[t.trim_arg] = match t.trim {
        Some(Trim::MaxLen(_)) => stream.len().to_string().into_bytes(),
        _ => stream.edge_id(true).unwrap_or(StreamId::MAX).to_bytes(),
    };
}

fn xrange_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, rev: bool) -> CmdResult {
    let (start_arg, end_arg) = if rev { (args[3], args[2]) } else { (args[2], args[3]) };
    let start = interval_id(start_arg, 0, true)?;
    let end = interval_id(end_arg, u64::MAX, false)?;
    let mut count: i64 = -1;
    let mut j = 4;
    while j < args.len() {
        if is(args[j], "count") && j + 1 < args.len() {
            count = int_arg(args[j + 1])?.max(0);
            j += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    let key = args[1];
    let Some(stream) = get_read(ctx, key)? else {
        out.array(0);
        return Ok(());
    };
    if count == 0 {
        out.null_array();
        return Ok(());
    }
    let count = if count < 0 { 0 } else { usize::try_from(count).unwrap_or(usize::MAX) };
    let entries = stream.range(start, end, rev, count);
    reply_entries(out, &entries);
    Ok(())
}

/// XRANGE key start end [COUNT count] — O(N) with N the number of entries returned.
pub(super) fn xrange(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    xrange_generic(ctx, args, out, false)
}

/// XREVRANGE key end start [COUNT count] — O(N) with N the number of entries returned.
pub(super) fn xrevrange(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    xrange_generic(ctx, args, out, true)
}

/// XLEN key — O(1).
pub(super) fn xlen(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let len = get_read(ctx, args[1])?.map_or(0, |s| s.len());
    out.integer(len as i64);
    Ok(())
}

/// XDEL key id [id ...] — O(1) for each entry deleted.
pub(super) fn xdel(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let key = args[1];
    let now = ctx.now_ms;
    if get(ctx.db(key), key, now)?.is_none() {
        out.integer(0);
        return Ok(());
    }
    let ids = args[2..].iter().map(|a| strict_id(a, 0)).collect::<Result<Vec<_>, _>>()?;
    let stream = get(ctx.db(key), key, now)?.expect("stream exists");
    let deleted = stream.xdel(&ids);
    ctx.dirty(deleted);
    if deleted > 0 {
        ctx.notify(notify::STREAM, "xdel", key);
    }
    out.integer(deleted as i64);
    Ok(())
}

/// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count] — O(N) with N the entries removed.
pub(super) fn xtrim(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let t = parse_trim_args(ctx, args, false)?;
    let key = args[1];
    let now = ctx.now_ms;
    let propagating = ctx.propagating();
    let Some(stream) = get(ctx.db(key), key, now)? else {
        out.integer(0);
        return Ok(());
    };
    let deleted = stream.trim(t.trim.expect("a strategy"), t.approx, t.limit);
    // An approximate trim is logged as the exact one it did (xtrimCommand).
    if deleted > 0 && t.approx && propagating {
        let mut rewritten: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
        rewrite_approx_trim(&mut rewritten, &t, stream);
        ctx.propagate_as(&rewritten);
    }
    ctx.dirty(deleted);
    if deleted > 0 {
        ctx.notify(notify::STREAM, "xtrim", key);
    }
    out.integer(deleted as i64);
    Ok(())
}

/// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id] — O(1).
pub(super) fn xsetid(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let id = strict_id(args[2], 0)?;
    let mut entries_added: i64 = -1;
    let mut max_deleted = StreamId::MIN;
    let mut i = 3;
    while i < args.len() {
        let more = args.len() - 1 - i;
        if is(args[i], "entriesadded") && more > 0 {
            entries_added = int_arg(args[i + 1])?;
            if entries_added < 0 {
                return Err(CmdError::msg("ERR entries_added must be positive"));
            }
            i += 2;
        } else if is(args[i], "maxdeletedid") && more > 0 {
            max_deleted = strict_id(args[i + 1], 0)?;
            if id < max_deleted {
                return Err(CmdError::msg(
                    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
                ));
            }
            i += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    let key = args[1];
    let now = ctx.now_ms;
    let Some(stream) = get(ctx.db(key), key, now)? else {
        return Err(CmdError::msg("ERR no such key"));
    };
    if !stream.is_empty() {
        let max_id = stream.edge_id(false).unwrap_or(StreamId::MIN);
        if id < max_id {
            return Err(CmdError::msg("ERR The ID specified in XSETID is smaller than the target stream top item"));
        }
        if entries_added != -1 && stream.len() > entries_added as u64 {
            return Err(CmdError::msg(
                "ERR The entries_added specified in XSETID is smaller than the target stream length",
            ));
        }
    }
    stream.last_id = id;
    if entries_added != -1 {
        stream.entries_added = entries_added as u64;
    }
    if !max_deleted.is_zero() {
        stream.max_deleted_id = max_deleted;
    }
    ctx.dirty(1);
    ctx.notify(notify::STREAM, "xsetid", key);
    out.simple("OK");
    Ok(())
}

/// What XREAD/XREADGROUP send for one stream: entries, or (history) a null for a pending
/// entry that no longer exists.
type Served = Vec<(StreamId, Option<Vec<Vec<u8>>>)>;

/// The ID an XREAD[GROUP] waits past: `>` is kept apart (resolved at serve time).
#[derive(Clone, Copy)]
enum ReadFrom {
    After(StreamId),
    New,
}

fn timeout_null(out: &mut dyn ReplySink) {
    out.null_array();
}

/// XREAD and XREADGROUP (Redis's xreadCommand).
fn xread_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, xreadgroup: bool) -> CmdResult {
    let mut timeout: Option<Option<i64>> = None;
    let mut count: i64 = 0;
    let mut streams_arg = 0;
    let mut noack = false;
    let mut group_consumer: Option<(&[u8], &[u8])> = None;
    let mut i = 1;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let o = args[i];
        if is(o, "block") && more > 0 {
            if ctx.client.in_script {
                // As Redis: BLOCK makes no sense in a script, and is refused by name.
                let name = String::from_utf8_lossy(args[0]);
                return Err(CmdError::msg(format!("ERR {name} command is not allowed with BLOCK option from scripts")));
            }
            i += 1;
            let ms = quince_resp::parse_i64_strict(args[i])
                .ok_or_else(|| CmdError::msg("ERR timeout is not an integer or out of range"))?;
            if ms < 0 {
                return Err(CmdError::msg("ERR timeout is negative"));
            }
            timeout = Some((ms > 0).then(|| ctx.now_ms.saturating_add(ms)));
        } else if is(o, "count") && more > 0 {
            i += 1;
            count = int_arg(args[i])?.max(0);
        } else if is(o, "streams") && more > 0 {
            streams_arg = i + 1;
            if !(args.len() - streams_arg).is_multiple_of(2) {
                return Err(CmdError::msg(
                    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.",
                ));
            }
            break;
        } else if is(o, "group") && more >= 2 {
            if !xreadgroup {
                return Err(CmdError::msg(
                    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.",
                ));
            }
            group_consumer = Some((args[i + 1], args[i + 2]));
            i += 2;
        } else if is(o, "noack") {
            if !xreadgroup {
                return Err(CmdError::msg(
                    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.",
                ));
            }
            noack = true;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    if streams_arg == 0 {
        return Err(CmdError::Syntax);
    }
    if xreadgroup && group_consumer.is_none() {
        return Err(CmdError::msg("ERR Missing GROUP option for XREADGROUP"));
    }
    let n = (args.len() - streams_arg) / 2;
    let keys = &args[streams_arg..streams_arg + n];
    let id_args = &args[streams_arg + n..];
    let serving = ctx.serving();
    let now = ctx.now_ms;
    // The key spec finds the first STREAMS after the options' start; a GROUP named
    // "STREAMS" makes the parse above see other keys. Nothing was read yet.
    ctx.lock_extra(keys);

    // Resolve the IDs (and check the groups exist), as Redis does before serving anything.
    let mut from = Vec::with_capacity(n);
    for (k, (&key, &id_arg)) in keys.iter().zip(id_args).enumerate() {
        let _ = k;
        let found = ctx.db(key).peek(key, now).is_some();
        ctx.hit(key, found);
        let stream = match get(ctx.db(key), key, now) {
            Err(CmdError::WrongType) if serving && xreadgroup => {
                return Err(CmdError::msg("UNBLOCKED the stream key no longer exists"));
            }
            other => other?,
        };
        if let Some((group, _)) = group_consumer {
            let has_group = stream.as_ref().is_some_and(|s| s.groups.contains_key(group));
            if !has_group {
                if serving {
                    return Err(if stream.is_none() {
                        CmdError::msg("UNBLOCKED the stream key no longer exists")
                    } else {
                        CmdError::msg("NOGROUP the consumer group this client was blocked on no longer exists")
                    });
                }
                return Err(CmdError::msg(format!(
                    "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                    String::from_utf8_lossy(key),
                    String::from_utf8_lossy(group)
                )));
            }
        }
        if id_arg == b"$" {
            if xreadgroup {
                return Err(CmdError::msg(
                    "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of \
                     this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would \
                     just return an empty result set.",
                ));
            }
            from.push(ReadFrom::After(stream.map_or(StreamId::MIN, |s| s.last_id)));
        } else if id_arg == b">" {
            if !xreadgroup {
                return Err(CmdError::msg(
                    "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> \
                     option.",
                ));
            }
            from.push(ReadFrom::New);
        } else {
            from.push(ReadFrom::After(strict_id(id_arg, 0)?));
        }
    }

    // A blocked client being served reads at most 1000 entries unless COUNT says otherwise.
    let count = if serving && count == 0 { 1000 } else { count };
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    let mut served: Vec<(&[u8], Served)> = Vec::new();
    // XREADGROUP is never logged as itself: its deliveries are (see `read_group`).
    let mut effects: Option<Vec<Vec<Vec<u8>>>> = (xreadgroup && ctx.propagating()).then(Vec::new);
    for (&key, &start) in keys.iter().zip(&from) {
        let Some(stream) = get(ctx.db(key), key, now)? else { continue };
        let result = match group_consumer {
            None => {
                let ReadFrom::After(gt) = start else { unreachable!("> is only for XREADGROUP") };
                match stream.edge_id(false) {
                    Some(max) if max > gt => {
                        let lo = gt.incr().unwrap_or(StreamId::MAX);
                        let entries = stream.range(lo, StreamId::MAX, false, count);
                        Some(entries.into_iter().map(|(id, f)| (id, Some(f.to_vec()))).collect::<Served>())
                    }
                    _ => None,
                }
            }
            Some((group, consumer)) => {
                let read = GroupRead { key, group, consumer, noack, now, created: std::cell::Cell::new(false) };
                let result = read_group(stream, &read, start, count, effects.as_mut());
                if read.created.get() {
                    ctx.notify(crate::pubsub::notify::STREAM, "xgroup-createconsumer", key);
                }
                result
            }
        };
        if let Some(entries) = result {
            if group_consumer.is_some() {
                ctx.dirty(1);
            }
            served.push((key, entries));
        }
    }
    if let Some(effects) = effects {
        ctx.propagate_nothing();
        super::propagate_all(ctx, effects);
    }
    if !served.is_empty() {
        if out.protocol() == Protocol::Resp2 {
            out.array(served.len());
        } else {
            out.map(served.len());
        }
        for (key, entries) in &served {
            if out.protocol() == Protocol::Resp2 {
                out.array(2);
            }
            out.bulk(key);
            out.array(entries.len());
            for (id, fields) in entries {
                out.array(2);
                reply_id(out, *id);
                match fields {
                    Some(fields) => {
                        out.array(fields.len());
                        for f in fields {
                            out.bulk(f);
                        }
                    }
                    None => out.null_array(),
                }
            }
        }
        return Ok(());
    }
    match timeout {
        Some(deadline) if ctx.may_block() || serving => {
            // `$` means "after the last ID when the client blocked": fix it in the
            // command that is re-run when a key is ready.
            let mut rewritten: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
            for (k, f) in from.iter().enumerate() {
                if let ReadFrom::After(id) = f {
                    if id_args[k] == b"$" {
                        rewritten[streams_arg + n + k] = id.to_bytes();
                    }
                }
            }
            let rewritten: Vec<&[u8]> = rewritten.iter().map(|a| &a[..]).collect();
            ctx.block(&rewritten, keys, deadline, timeout_null);
        }
        _ => out.null_array(),
    }
    Ok(())
}

/// Who reads in an XREADGROUP, from which stream.
struct GroupRead<'a> {
    key: &'a [u8],
    group: &'a [u8],
    consumer: &'a [u8],
    noack: bool,
    now: i64,
    /// Set when the read created the consumer (Redis notifies `xgroup-createconsumer`).
    created: std::cell::Cell<bool>,
}

/// Serves one stream of an XREADGROUP: new entries for `>`, else the consumer's history.
/// None when there is nothing new (the client may block). With `effects`, records how the
/// read is logged, as Redis's streamReplyWithRange: an XCLAIM per delivered entry, or for
/// NOACK the consumer's creation and the group's new last ID. A history read is not logged
/// (Redis 7.0 neither).
fn read_group(
    stream: &mut StreamValue,
    read: &GroupRead<'_>,
    start: ReadFrom,
    count: usize,
    effects: Option<&mut Vec<Vec<Vec<u8>>>>,
) -> Option<Served> {
    let (key, group, consumer, noack, now) = (read.key, read.group, read.consumer, read.noack, read.now);
    let g = stream.groups.get_mut(group).expect("group checked");
    match start {
        ReadFrom::After(gt) => {
            read.created.set(touch_consumer(g, consumer, now));
            let lo = gt.incr().unwrap_or(StreamId::MAX);
            let g = stream.groups.get(group).expect("group");
            let ids: Vec<StreamId> = g.consumers[consumer]
                .pel
                .range(lo..)
                .take(if count == 0 { usize::MAX } else { count })
                .copied()
                .collect();
            let mut served = Served::new();
            for id in ids {
                let fields = stream.get(id).map(|f| f.to_vec());
                if fields.is_some() {
                    let nack = stream.groups.get_mut(group).expect("group").pel.get_mut(&id).expect("pending");
                    nack.delivery_time = now;
                    nack.delivery_count += 1;
                }
                served.push((id, fields));
            }
            Some(served)
        }
        ReadFrom::New => {
            let last = stream.groups[group].last_id;
            let max = stream.edge_id(false)?;
            if max <= last {
                return None;
            }
            let created = touch_consumer(stream.groups.get_mut(group).expect("group"), consumer, now);
            read.created.set(created);
            let lo = last.incr().unwrap_or(StreamId::MAX);
            let entries: Served = stream
                .range(lo, StreamId::MAX, false, count)
                .into_iter()
                .map(|(id, f)| (id, Some(f.to_vec())))
                .collect();
            let mut effects = effects;
            if let Some(effects) = effects.as_deref_mut() {
                if created && noack {
                    effects.push(super::createconsumer_effect(key, group, consumer));
                }
            }
            for (id, _) in &entries {
                stream.advance_group(group, *id);
                if !noack {
                    let g = stream.groups.get_mut(group).expect("group");
                    g.deliver(*id, consumer, now);
                    if let Some(effects) = effects.as_deref_mut() {
                        effects.push(super::xclaim_effect(key, group, &id.to_bytes(), &g.pel[id], g.last_id));
                    }
                }
            }
            if let Some(effects) = effects {
                if noack && !entries.is_empty() {
                    effects.push(super::setid_effect(key, group, &stream.groups[group]));
                }
            }
            Some(entries)
        }
    }
}

/// Looks the consumer up (refreshing its seen time) or creates it; true if created.
fn touch_consumer(g: &mut crate::types::stream::Group, consumer: &[u8], now: i64) -> bool {
    match g.consumers.get_mut(consumer) {
        Some(c) => {
            c.seen_time = now;
            false
        }
        None => g.create_consumer(consumer, now),
    }
}

/// XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...] — O(N) for
/// the entries returned.
pub(super) fn xread(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    xread_generic(ctx, args, out, false)
}

/// XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key
/// [key ...] id [id ...] — O(M) for the entries returned.
pub(super) fn xreadgroup(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    xread_generic(ctx, args, out, true)
}
