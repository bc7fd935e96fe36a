//! ZRANGE in all its forms (by rank, score or lex, forward or reversed, LIMIT, WITHSCORES),
//! the older ZREVRANGE / Z[REV]RANGEBYSCORE / Z[REV]RANGEBYLEX, and ZRANGESTORE.

use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{TtlOnWrite, Value};
use crate::pubsub::notify;
use crate::reply::ReplySink;
use crate::types::{Bytes, ZSetValue};

use super::super::is;
use super::write::rank_bounds;
use super::{parse_lex_range, parse_long, parse_score_range, read_hit, reply_members};

#[derive(Clone, Copy, PartialEq, Eq)]
enum RangeType {
    Auto,
    Rank,
    Score,
    Lex,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Auto,
    Forward,
    Reverse,
}

enum Bounds {
    Rank(i64, i64),
    Score(crate::types::zset::ScoreRange),
    Lex(crate::types::zset::LexRange),
}

/// Ranks `[start, end)` selected by a range (ascending order), walked backwards when
/// reversed. Offsets and limits apply in walking order, as Redis applies them.
fn selected_ranks(zset: &ZSetValue, bounds: &Bounds, reverse: bool, offset: i64, limit: i64) -> (usize, usize) {
    let (lo, hi) = match bounds {
        Bounds::Rank(start, end) => {
            let len = zset.len();
            return match rank_bounds(*start, *end, len) {
                None => (0, 0),
                Some((s, e)) if reverse => (len - 1 - e, len - s),
                Some((s, e)) => (s, e + 1),
            };
        }
        Bounds::Score(range) => zset.score_range_ranks(range),
        Bounds::Lex(range) => zset.lex_range_ranks(range),
    };
    // A negative offset walks off the end in Redis: nothing is returned.
    if offset < 0 {
        return (0, 0);
    }
    let offset = offset as usize;
    let in_range = hi - lo;
    if offset >= in_range {
        return (0, 0);
    }
    let take = if limit < 0 { in_range - offset } else { (limit as usize).min(in_range - offset) };
    if reverse {
        (hi - offset - take, hi - offset)
    } else {
        (lo + offset, lo + offset + take)
    }
}

/// ZRANGE and friends (Redis's zrangeGenericCommand): `<src> <min> <max>` at `first`, then
/// options; `store` is ZRANGESTORE's destination.
fn zrange_generic(
    ctx: &mut Ctx<'_>,
    args: &[&[u8]],
    out: &mut dyn ReplySink,
    first: usize,
    store: Option<&[u8]>,
    mut range_type: RangeType,
    mut direction: Direction,
) -> CmdResult {
    let (mut withscores, mut offset, mut limit) = (false, 0i64, -1i64);
    let mut j = first + 3;
    while j < args.len() {
        let left = args.len() - j - 1;
        if store.is_none() && is(args[j], "withscores") {
            withscores = true;
        } else if is(args[j], "limit") && left >= 2 {
            offset = parse_long(args[j + 1])?;
            limit = parse_long(args[j + 2])?;
            j += 2;
        } else if direction == Direction::Auto && is(args[j], "rev") {
            direction = Direction::Reverse;
        } else if range_type == RangeType::Auto && is(args[j], "bylex") {
            range_type = RangeType::Lex;
        } else if range_type == RangeType::Auto && is(args[j], "byscore") {
            range_type = RangeType::Score;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    let reverse = direction == Direction::Reverse;
    if range_type == RangeType::Auto {
        range_type = RangeType::Rank;
    }
    if limit != -1 && range_type == RangeType::Rank {
        return Err(CmdError::msg(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if withscores && range_type == RangeType::Lex {
        return Err(CmdError::msg("ERR syntax error, WITHSCORES not supported in combination with BYLEX"));
    }
    let (mut min, mut max) = (args[first + 1], args[first + 2]);
    if reverse && range_type != RangeType::Rank {
        std::mem::swap(&mut min, &mut max);
    }
    let bounds = match range_type {
        RangeType::Score => Bounds::Score(parse_score_range(min, max)?),
        RangeType::Lex => Bounds::Lex(parse_lex_range(min, max)?),
        _ => Bounds::Rank(parse_long(min)?, parse_long(max)?),
    };
    let src = args[first];
    let Some(zset) = read_hit(ctx, src)? else {
        match store {
            Some(dst) => store_result(ctx, dst, Vec::new(), out),
            None => out.array(0),
        }
        return Ok(());
    };
    let (start, end) = selected_ranks(zset, &bounds, reverse, offset, limit);
    let items = zset.rank_range(start, end, reverse);
    match store {
        None => reply_members(out, items, withscores),
        Some(dst) => {
            let entries: Vec<(Bytes, f64)> = items.map(|(m, s)| (Bytes::from(m), s)).collect();
            store_result(ctx, dst, entries, out);
        }
    }
    Ok(())
}

/// Stores a range result at `dst` (deleting `dst` when empty) and replies its size.
fn store_result(ctx: &mut Ctx<'_>, dst: &[u8], entries: Vec<(Bytes, f64)>, out: &mut dyn ReplySink) {
    let (now, limits) = (ctx.now_ms, ctx.limits());
    let db = ctx.db(dst);
    let len = entries.len();
    if len == 0 {
        if db.remove(dst, now) {
            ctx.notify(notify::GENERIC, "del", dst);
        }
    } else {
        db.set(dst, Value::ZSet(ZSetValue::from_entries(entries, &limits)), TtlOnWrite::Clear, now);
        ctx.notify(notify::ZSET, "zrangestore", dst);
    }
    out.integer(len as i64);
}

/// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES] —
/// O(log(N)+M).
pub(super) fn zrange(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zrange_generic(ctx, args, out, 1, None, RangeType::Auto, Direction::Auto)
}

/// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count] — O(log(N)+M).
pub(super) fn zrangestore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zrange_generic(ctx, args, out, 2, Some(args[1]), RangeType::Auto, Direction::Auto)
}

/// ZREVRANGE key start stop [WITHSCORES] — O(log(N)+M).
pub(super) fn zrevrange(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zrange_generic(ctx, args, out, 1, None, RangeType::Rank, Direction::Reverse)
}

/// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count] — O(log(N)+M).
pub(super) fn zrangebyscore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zrange_generic(ctx, args, out, 1, None, RangeType::Score, Direction::Forward)
}

/// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count] — O(log(N)+M).
pub(super) fn zrevrangebyscore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zrange_generic(ctx, args, out, 1, None, RangeType::Score, Direction::Reverse)
}

/// ZRANGEBYLEX key min max [LIMIT offset count] — O(log(N)+M).
pub(super) fn zrangebylex(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zrange_generic(ctx, args, out, 1, None, RangeType::Lex, Direction::Forward)
}

/// ZREVRANGEBYLEX key max min [LIMIT offset count] — O(log(N)+M).
pub(super) fn zrevrangebylex(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zrange_generic(ctx, args, out, 1, None, RangeType::Lex, Direction::Reverse)
}
