//! Read-only sorted set queries: ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZCOUNT,
//! ZLEXCOUNT, ZRANDMEMBER and ZSCAN.

use std::cell::Cell;

use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::glob::glob_match;
use crate::keyspace::scan_hash;
use crate::reply::ReplySink;
use crate::types::ZSetValue;
use quince_resp::Protocol;

use super::super::{is, set::parse_cursor};
use super::{parse_lex_range, parse_long, parse_long_in, parse_score_range, read_hit, reply_member};

/// ZCARD key — O(1).
pub(super) fn zcard(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let len = read_hit(ctx, args[1])?.map_or(0, |z| z.len());
    out.integer(len as i64);
    Ok(())
}

/// ZSCORE key member — O(1).
pub(super) fn zscore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    match read_hit(ctx, args[1])?.and_then(|z| z.score(args[2])) {
        Some(score) => out.double(score),
        None => out.null(),
    }
    Ok(())
}

/// ZMSCORE key member [member ...] — O(N) in the number of members.
pub(super) fn zmscore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let zset = read_hit(ctx, args[1])?;
    out.array(args.len() - 2);
    for member in &args[2..] {
        match zset.and_then(|z| z.score(member)) {
            Some(score) => out.double(score),
            None => out.null(),
        }
    }
    Ok(())
}

fn zrank_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, reverse: bool) -> CmdResult {
    match read_hit(ctx, args[1])?.and_then(|z| z.rank(args[2], reverse)) {
        Some(rank) => out.integer(rank as i64),
        None => out.null(),
    }
    Ok(())
}

/// ZRANK key member — O(log(N)).
pub(super) fn zrank(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zrank_generic(ctx, args, out, false)
}

/// ZREVRANK key member — O(log(N)).
pub(super) fn zrevrank(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zrank_generic(ctx, args, out, true)
}

/// ZCOUNT key min max — O(log(N)).
pub(super) fn zcount(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let range = parse_score_range(args[2], args[3])?;
    let count = read_hit(ctx, args[1])?.map_or(0, |z| {
        let (start, end) = z.score_range_ranks(&range);
        end - start
    });
    out.integer(count as i64);
    Ok(())
}

/// ZLEXCOUNT key min max — O(log(N)).
pub(super) fn zlexcount(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let range = parse_lex_range(args[2], args[3])?;
    let count = read_hit(ctx, args[1])?.map_or(0, |z| {
        let (start, end) = z.lex_range_ranks(&range);
        end - start
    });
    out.integer(count as i64);
    Ok(())
}

thread_local! {
    /// Per-thread random state for ZRANDMEMBER, seeded once from the clock and thread.
    static RANDOM: Cell<u64> = const { Cell::new(0) };
}

/// SplitMix64: a tiny generator whose every output is well mixed, so consecutive calls
/// sample uniformly (ZRANDMEMBER's distribution is tested statistically).
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// A generator continuing this thread's random sequence (seeded on first use).
fn rng(ctx: &Ctx<'_>) -> Rng {
    let mut state = RANDOM.with(Cell::get);
    if state == 0 {
        state = ctx.engine.clock.now_us() as u64 ^ scan_hash(format!("{:?}", std::thread::current().id()).as_bytes());
    }
    Rng(state)
}

fn save_rng(rng: &mut Rng) {
    RANDOM.with(|s| s.set(rng.0 | 1));
}

/// ZRANDMEMBER key [count [WITHSCORES]] — O(N) in the number of members returned.
pub(super) fn zrandmember(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len() >= 3 {
        let count = parse_long_in(args[2], -i64::MAX, i64::MAX, None)?;
        let withscores = match args.len() {
            3 => false,
            4 if is(args[3], "withscores") => true,
            _ => return Err(CmdError::Syntax),
        };
        if withscores && !(-i64::MAX / 2..=i64::MAX / 2).contains(&count) {
            return Err(CmdError::msg("ERR value is out of range"));
        }
        let mut rng = rng(ctx);
        let result = match read_hit(ctx, args[1])? {
            None => {
                out.array(0);
                Ok(())
            }
            Some(zset) => {
                randmember_count(zset, count, withscores, &mut rng, out);
                Ok(())
            }
        };
        save_rng(&mut rng);
        return result;
    }
    let mut rng = rng(ctx);
    match read_hit(ctx, args[1])? {
        None => out.null(),
        Some(zset) => {
            let (member, _) = zset.get_by_rank(rng.below(zset.len())).expect("non-empty");
            out.bulk(member);
        }
    }
    save_rng(&mut rng);
    Ok(())
}

/// ZRANDMEMBER with a count (Redis's zrandmemberWithCountCommand): a negative count picks
/// with repetition, a count at least the size returns the whole set, otherwise distinct
/// members are sampled.
fn randmember_count(zset: &ZSetValue, count: i64, withscores: bool, rng: &mut Rng, out: &mut dyn ReplySink) {
    let resp3 = out.protocol() == Protocol::Resp3;
    let size = zset.len();
    let (count, unique) = (count.unsigned_abs() as usize, count >= 0);
    if count == 0 {
        out.array(0);
        return;
    }
    let reply_len = |n: usize| if withscores && !resp3 { n * 2 } else { n };
    // A packed listpack is walked per positional lookup: index its entries once.
    let packed: Option<Vec<(&[u8], f64)>> = matches!(zset, ZSetValue::Listpack(_)).then(|| zset.iter().collect());
    let pick = |rank: usize| match &packed {
        Some(entries) => entries[rank],
        None => zset.get_by_rank(rank).expect("in range"),
    };
    if !unique || count == 1 {
        out.array(reply_len(count));
        for _ in 0..count {
            let (member, score) = pick(rng.below(size));
            reply_member(out, member, score, withscores, resp3);
        }
        return;
    }
    if count >= size {
        // Redis walks sorted sets from the highest member down here (zuiInitIterator).
        out.array(reply_len(size));
        for (member, score) in zset.rank_range(0, size, true) {
            reply_member(out, member, score, withscores, resp3);
        }
        return;
    }
    // Distinct ranks by a partial Fisher-Yates shuffle over a sparse permutation.
    let mut swapped: hashbrown::HashMap<usize, usize> = hashbrown::HashMap::new();
    let mut picks = Vec::with_capacity(count);
    for i in 0..count {
        let j = i + rng.below(size - i);
        let at_j = *swapped.get(&j).unwrap_or(&j);
        let at_i = *swapped.get(&i).unwrap_or(&i);
        swapped.insert(j, at_i);
        picks.push(at_j);
    }
    // A small listpack is sampled in order by Redis (lpRandomPairsUnique).
    if matches!(zset, ZSetValue::Listpack(_)) && count * 3 <= size {
        picks.sort_unstable();
    }
    out.array(reply_len(count));
    for rank in picks {
        let (member, score) = pick(rank);
        reply_member(out, member, score, withscores, resp3);
    }
}

/// ZSCAN key cursor [MATCH pattern] [COUNT count] — O(1) per call, O(N) for a full pass.
///
/// A listpack is returned whole with cursor 0, as Redis does. A skiplist set is walked in
/// the order of a fixed hash of its members: the cursor is the next hash to visit, so a
/// member present for the whole scan is returned at least once whatever changes between
/// calls.
pub(super) fn zscan(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let cursor = parse_cursor(args[2])?;
    let Some(zset) = read_hit(ctx, args[1])? else {
        out.array(2);
        out.bulk(b"0");
        out.array(0);
        return Ok(());
    };
    let mut count = 10usize;
    let mut pattern: Option<&[u8]> = None;
    let mut i = 3;
    while i < args.len() {
        let more = args.len() - i >= 2;
        if is(args[i], "count") && more {
            let n = parse_long(args[i + 1])?;
            if n < 1 {
                return Err(CmdError::Syntax);
            }
            count = n as usize;
        } else if is(args[i], "match") && more {
            pattern = Some(args[i + 1]).filter(|p| *p != b"*");
        } else {
            return Err(CmdError::Syntax);
        }
        i += 2;
    }
    let (page, next): (Vec<(&[u8], f64)>, u64) = match zset {
        ZSetValue::Listpack(_) => (zset.iter().collect(), 0),
        ZSetValue::Skiplist(s) => s.list.scan_slots(cursor, count),
    };
    let page: Vec<_> = page.into_iter().filter(|(m, _)| pattern.is_none_or(|p| glob_match(p, m, false))).collect();
    out.array(2);
    out.bulk(next.to_string().as_bytes());
    out.array(page.len() * 2);
    let mut text = Vec::with_capacity(24);
    for (member, score) in page {
        out.bulk(member);
        text.clear();
        quince_resp::format_double(score, &mut text);
        out.bulk(&text);
    }
    Ok(())
}
