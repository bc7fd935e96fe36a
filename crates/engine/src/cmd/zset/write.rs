//! Commands that change sorted sets in place: ZADD/ZINCRBY, ZREM, ZREMRANGEBY*, and the pops
//! (ZPOPMIN/ZPOPMAX, ZMPOP) with their blocking forms (BZPOPMIN/BZPOPMAX, BZMPOP).

use crate::blocking::parse_timeout;
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{TtlOnWrite, Value};
use crate::pubsub::notify;
use crate::reply::ReplySink;
use crate::types::zset::{AddFlags, AddOutcome};
use crate::types::{Bytes, ZSetValue};
use quince_resp::Protocol;

use super::super::is;
use super::{delete_if_empty, parse_lex_range, parse_long, parse_long_in, parse_score, parse_score_range, write};

/// ZADD and ZINCRBY (Redis's zaddGenericCommand): options, then score/member pairs.
fn zadd_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, incr: bool) -> CmdResult {
    let mut flags = AddFlags { incr, ..AddFlags::default() };
    let mut ch = false;
    let mut first = 2;
    while first < args.len() {
        let opt = args[first];
        if is(opt, "nx") {
            flags.nx = true;
        } else if is(opt, "xx") {
            flags.xx = true;
        } else if is(opt, "ch") {
            ch = true;
        } else if is(opt, "incr") {
            flags.incr = true;
        } else if is(opt, "gt") {
            flags.gt = true;
        } else if is(opt, "lt") {
            flags.lt = true;
        } else {
            break;
        }
        first += 1;
    }
    let elements = args.len() - first;
    if !elements.is_multiple_of(2) || elements == 0 {
        return Err(CmdError::Syntax);
    }
    let pairs = elements / 2;
    if flags.nx && flags.xx {
        return Err(CmdError::msg("ERR XX and NX options at the same time are not compatible"));
    }
    if (flags.nx && (flags.gt || flags.lt)) || (flags.gt && flags.lt) {
        return Err(CmdError::msg("ERR GT, LT, and/or NX options at the same time are not compatible"));
    }
    if flags.incr && pairs > 1 {
        return Err(CmdError::msg("ERR INCR option supports a single increment-element pair"));
    }
    // Every score is checked before anything changes: the command runs whole or not at all.
    let scores = (0..pairs).map(|j| parse_score(args[first + j * 2])).collect::<Result<Vec<_>, _>>()?;
    let key = args[1];
    let (now, limits) = (ctx.now_ms, ctx.limits());
    let db = ctx.db(key);
    let existing = write(db, key, now)?;
    if existing.is_none() && flags.xx {
        reply_zadd(out, flags.incr, ch, 0, 0, None);
        return Ok(());
    }
    let mut created = None;
    let zset = match existing {
        Some(z) => z,
        None => created.insert(ZSetValue::new_for_add(args[first + 1].len(), &limits)),
    };
    let (mut added, mut updated, mut last) = (0usize, 0usize, None);
    let mut nan = false;
    for (j, &score) in scores.iter().enumerate() {
        let member = args[first + 1 + j * 2];
        match zset.add(member, score, flags, &limits) {
            AddOutcome::Added(s) => {
                added += 1;
                last = Some(s);
            }
            AddOutcome::Updated(s) => {
                updated += 1;
                last = Some(s);
            }
            AddOutcome::Unchanged(s) => last = Some(s),
            AddOutcome::Skipped => last = None,
            AddOutcome::Nan => {
                nan = true;
                break;
            }
        }
    }
    if let Some(z) = created {
        // Redis adds the key before the loop; it can only stay empty if nothing was added,
        // which for a new key means no pair at all was processed.
        if !z.is_empty() {
            db.set(key, Value::ZSet(z), TtlOnWrite::Clear, now);
        }
    } else if added > 0 {
        db.signal_ready(key);
    }
    ctx.dirty((added + updated) as u64);
    if added + updated > 0 {
        ctx.notify(notify::ZSET, if flags.incr { "zincr" } else { "zadd" }, key);
    }
    if nan {
        return Err(CmdError::msg("ERR resulting score is not a number (NaN)"));
    }
    reply_zadd(out, flags.incr, ch, added, updated, last);
    Ok(())
}

fn reply_zadd(out: &mut dyn ReplySink, incr: bool, ch: bool, added: usize, updated: usize, last: Option<f64>) {
    if incr {
        match last {
            Some(score) => out.double(score),
            None => out.null(),
        }
    } else {
        out.integer((if ch { added + updated } else { added }) as i64);
    }
}

/// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...] — O(log(N)) per
/// member added.
pub(super) fn zadd(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zadd_generic(ctx, args, out, false)
}

/// ZINCRBY key increment member — O(log(N)).
pub(super) fn zincrby(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zadd_generic(ctx, args, out, true)
}

/// ZREM key member [member ...] — O(M*log(N)).
pub(super) fn zrem(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (key, now) = (args[1], ctx.now_ms);
    let db = ctx.db(key);
    let Some(zset) = write(db, key, now)? else {
        out.integer(0);
        return Ok(());
    };
    let mut deleted = 0;
    for member in &args[2..] {
        if zset.remove(member) {
            deleted += 1;
        }
        if zset.is_empty() {
            break;
        }
    }
    let emptied = delete_if_empty(db, key, now);
    ctx.dirty(deleted);
    if deleted > 0 {
        ctx.notify(notify::ZSET, "zrem", key);
        if emptied {
            ctx.notify(notify::GENERIC, "del", key);
        }
    }
    out.integer(deleted as i64);
    Ok(())
}

/// Which ZREMRANGEBY* command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RangeKind {
    Rank,
    Score,
    Lex,
}

/// ZREMRANGEBYRANK/SCORE/LEX (Redis's zremrangeGenericCommand): the range is parsed before
/// the key is looked up.
fn zremrange(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, kind: RangeKind) -> CmdResult {
    enum Parsed {
        Rank(i64, i64),
        Score(crate::types::zset::ScoreRange),
        Lex(crate::types::zset::LexRange),
    }
    let parsed = match kind {
        RangeKind::Rank => Parsed::Rank(parse_long(args[2])?, parse_long(args[3])?),
        RangeKind::Score => Parsed::Score(parse_score_range(args[2], args[3])?),
        RangeKind::Lex => Parsed::Lex(parse_lex_range(args[2], args[3])?),
    };
    let (key, now) = (args[1], ctx.now_ms);
    let db = ctx.db(key);
    let Some(zset) = write(db, key, now)? else {
        out.integer(0);
        return Ok(());
    };
    let (start, end) = match parsed {
        Parsed::Rank(start, end) => match rank_bounds(start, end, zset.len()) {
            Some((s, e)) => (s, e + 1),
            None => (0, 0),
        },
        Parsed::Score(range) => zset.score_range_ranks(&range),
        Parsed::Lex(range) => zset.lex_range_ranks(&range),
    };
    let deleted = zset.remove_rank_range(start, end);
    let emptied = delete_if_empty(db, key, now);
    ctx.dirty(deleted as u64);
    if deleted > 0 {
        let event = match kind {
            RangeKind::Rank => "zremrangebyrank",
            RangeKind::Score => "zremrangebyscore",
            RangeKind::Lex => "zremrangebylex",
        };
        ctx.notify(notify::ZSET, event, key);
        if emptied {
            ctx.notify(notify::GENERIC, "del", key);
        }
    }
    out.integer(deleted as i64);
    Ok(())
}

/// Start and end ranks (inclusive) of `start..=end` with negative indexes from the end, as
/// Redis sanitizes them; None when the range is empty.
pub(super) fn rank_bounds(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 { (len + start).max(0) } else { start };
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end.min(len - 1) as usize))
}

/// ZREMRANGEBYRANK key start stop — O(log(N)+M).
pub(super) fn zremrangebyrank(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zremrange(ctx, args, out, RangeKind::Rank)
}

/// ZREMRANGEBYSCORE key min max — O(log(N)+M).
pub(super) fn zremrangebyscore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zremrange(ctx, args, out, RangeKind::Score)
}

/// ZREMRANGEBYLEX key min max — O(log(N)+M).
pub(super) fn zremrangebylex(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zremrange(ctx, args, out, RangeKind::Lex)
}

/// Which end a pop takes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Min,
    Max,
}

/// Pops up to `count` members from one end of the set at `key` (which must exist), deleting
/// the key once empty.
fn pop_members(ctx: &mut Ctx<'_>, key: &[u8], end: End, count: usize) -> Result<Vec<(Bytes, f64)>, CmdError> {
    let now = ctx.now_ms;
    let db = ctx.db(key);
    let Some(zset) = write(db, key, now)? else { return Ok(Vec::new()) };
    let n = count.min(zset.len());
    let popped: Vec<(Bytes, f64)> =
        zset.rank_range(0, zset.len(), end == End::Max).take(n).map(|(m, s)| (Bytes::from(m), s)).collect();
    match end {
        End::Min => zset.remove_rank_range(0, n),
        End::Max => zset.remove_rank_range(zset.len() - n, zset.len()),
    };
    let emptied = delete_if_empty(db, key, now);
    ctx.dirty(n as u64);
    if n > 0 {
        ctx.notify(notify::ZSET, if end == End::Min { "zpopmin" } else { "zpopmax" }, key);
        if emptied {
            ctx.notify(notify::GENERIC, "del", key);
        }
    }
    Ok(popped)
}

/// The first of `keys` holding a non-empty sorted set; WRONGTYPE for another type met first.
fn first_nonempty<'k>(ctx: &mut Ctx<'_>, keys: &[&'k [u8]]) -> Result<Option<&'k [u8]>, CmdError> {
    let now = ctx.now_ms;
    for &key in keys {
        if write(ctx.db(key), key, now)?.is_some_and(|z| !z.is_empty()) {
            return Ok(Some(key));
        }
    }
    Ok(None)
}

/// Popped members: flat `member score ...`, or `[member, score]` pairs when `nested`.
fn reply_popped(out: &mut dyn ReplySink, popped: &[(Bytes, f64)], nested: bool) {
    for (member, score) in popped {
        if nested {
            out.array(2);
        }
        out.bulk(member);
        out.double(*score);
    }
}

/// ZPOPMIN/ZPOPMAX key [count].
fn zpop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, end: End) -> CmdResult {
    if args.len() > 3 {
        return Err(CmdError::Syntax);
    }
    let count = match args.get(2) {
        Some(arg) => Some(parse_long_in(arg, 0, i64::MAX, Some("value is out of range, must be positive"))?),
        None => None,
    };
    let key = args[1];
    let now = ctx.now_ms;
    let exists = write(ctx.db(key), key, now)?.is_some();
    if !exists || count == Some(0) {
        out.array(0);
        return Ok(());
    }
    // RESP3 nests [member, score] pairs only when a count was given.
    let nested = out.protocol() == Protocol::Resp3 && count.is_some();
    let popped = pop_members(ctx, key, end, count.unwrap_or(1) as usize)?;
    out.array(if nested { popped.len() } else { popped.len() * 2 });
    reply_popped(out, &popped, nested);
    Ok(())
}

/// ZPOPMIN key [count] — O(log(N)*M).
pub(super) fn zpopmin(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zpop(ctx, args, out, End::Min)
}

/// ZPOPMAX key [count] — O(log(N)*M).
pub(super) fn zpopmax(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zpop(ctx, args, out, End::Max)
}

/// Logs a pop deterministically, as Redis replicates BZPOPMIN/BZPOPMAX (`ZPOPMIN|ZPOPMAX
/// key`) and ZMPOP/BZMPOP (`ZPOPMIN|ZPOPMAX key <n>`, n = what was popped): a replay must
/// neither block nor depend on the other keys.
fn propagate_pop(ctx: &mut Ctx<'_>, key: &[u8], end: End, popped: Option<usize>) {
    if !ctx.propagating() {
        return;
    }
    let name: &[u8] = if end == End::Min { b"ZPOPMIN" } else { b"ZPOPMAX" };
    match popped {
        Some(n) => ctx.propagate_as(&[name, key, n.to_string().as_bytes()]),
        None => ctx.propagate_as(&[name, key]),
    }
}

fn null_array_reply(out: &mut dyn ReplySink) {
    out.null_array();
}

/// BZPOPMIN/BZPOPMAX key [key ...] timeout: `[key, member, score]` from the first non-empty
/// set, or block on all of them.
fn bzpop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, end: End) -> CmdResult {
    let deadline = parse_timeout(args[args.len() - 1], ctx.now_ms)?;
    let keys = &args[1..args.len() - 1];
    match first_nonempty(ctx, keys)? {
        Some(key) => {
            let popped = pop_members(ctx, key, end, 1)?;
            out.array(1 + popped.len() * 2);
            out.bulk(key);
            reply_popped(out, &popped, false);
            propagate_pop(ctx, key, end, None);
        }
        None if !ctx.may_block() && !ctx.serving() => out.null_array(),
        None => ctx.block(args, keys, deadline, null_array_reply),
    }
    Ok(())
}

/// BZPOPMIN key [key ...] timeout — O(log(N)).
pub(super) fn bzpopmin(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    bzpop(ctx, args, out, End::Min)
}

/// BZPOPMAX key [key ...] timeout — O(log(N)).
pub(super) fn bzpopmax(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    bzpop(ctx, args, out, End::Max)
}

/// Parsed ZMPOP/BZMPOP arguments.
struct MultiPop<'a> {
    keys: &'a [&'a [u8]],
    end: End,
    count: usize,
}

/// `numkeys key [key ...] MIN|MAX [COUNT count]` from `numkeys_idx` (zmpopGenericCommand).
fn parse_multi_pop<'a>(args: &'a [&'a [u8]], numkeys_idx: usize) -> Result<MultiPop<'a>, CmdError> {
    let numkeys = parse_long_in(args[numkeys_idx], 1, i64::MAX, Some("numkeys should be greater than 0"))?;
    let where_idx = (numkeys as u64).checked_add(numkeys_idx as u64 + 1).filter(|&i| i < args.len() as u64);
    let Some(where_idx) = where_idx.map(|i| i as usize) else { return Err(CmdError::Syntax) };
    let end = if is(args[where_idx], "MIN") {
        End::Min
    } else if is(args[where_idx], "MAX") {
        End::Max
    } else {
        return Err(CmdError::Syntax);
    };
    let mut count = None;
    let mut j = where_idx + 1;
    while j < args.len() {
        if count.is_none() && is(args[j], "COUNT") && j + 1 < args.len() {
            count = Some(parse_long_in(args[j + 1], 1, i64::MAX, Some("count should be greater than 0"))? as usize);
            j += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok(MultiPop { keys: &args[numkeys_idx + 1..where_idx], end, count: count.unwrap_or(1) })
}

/// `[key, [[member, score], ...]]`, the reply of ZMPOP/BZMPOP in both protocols.
fn reply_key_members(out: &mut dyn ReplySink, key: &[u8], popped: &[(Bytes, f64)]) {
    out.array(2);
    out.bulk(key);
    out.array(popped.len());
    reply_popped(out, popped, true);
}

/// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] — O(K) + O(M*log(N)).
pub(super) fn zmpop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let spec = parse_multi_pop(args, 1)?;
    match first_nonempty(ctx, spec.keys)? {
        Some(key) => {
            let popped = pop_members(ctx, key, spec.end, spec.count)?;
            reply_key_members(out, key, &popped);
            propagate_pop(ctx, key, spec.end, Some(popped.len()));
        }
        None => out.null_array(),
    }
    Ok(())
}

/// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count] — O(K) + O(M*log(N)).
pub(super) fn bzmpop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let spec = parse_multi_pop(args, 2)?;
    let deadline = parse_timeout(args[1], ctx.now_ms)?;
    match first_nonempty(ctx, spec.keys)? {
        Some(key) => {
            let popped = pop_members(ctx, key, spec.end, spec.count)?;
            reply_key_members(out, key, &popped);
            propagate_pop(ctx, key, spec.end, Some(popped.len()));
        }
        None if !ctx.may_block() && !ctx.serving() => out.null_array(),
        None => ctx.block(args, spec.keys, deadline, null_array_reply),
    }
    Ok(())
}
