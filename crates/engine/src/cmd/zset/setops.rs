//! ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD (Redis's
//! zunionInterDiffGenericCommand). Inputs may be sorted sets or plain sets (every member
//! scoring 1); weights multiply scores and AGGREGATE SUM|MIN|MAX combines them.

use hashbrown::HashMap;

use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{TtlOnWrite, Value};
use crate::pubsub::notify;
use crate::reply::ReplySink;
use crate::types::{Bytes, ZSetValue};

use super::super::is;
use super::{parse_double, parse_long, parse_long_in, reply_members};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    /// Redis's zunionInterAggregate: a SUM of +inf and -inf is 0, not NaN.
    fn apply(self, target: &mut f64, value: f64) {
        match self {
            Aggregate::Sum => {
                *target += value;
                if target.is_nan() {
                    *target = 0.0;
                }
            }
            Aggregate::Min => {
                if value < *target {
                    *target = value;
                }
            }
            Aggregate::Max => {
                if value > *target {
                    *target = value;
                }
            }
        }
    }
}

/// One input: its members with scores (1 for a plain set), copied out of the keyspace so
/// several inputs (in different shards) can be read together.
struct Source<'a> {
    key: &'a [u8],
    members: HashMap<Bytes, f64>,
    weight: f64,
}

/// Reads input `key`: None when missing, WRONGTYPE unless a set or sorted set.
fn load(ctx: &mut Ctx<'_>, key: &[u8]) -> Result<HashMap<Bytes, f64>, CmdError> {
    let now = ctx.now_ms;
    let entry = ctx.db(key).get(key, now);
    let found = entry.is_some();
    let members = match entry.map(|e| &e.value) {
        None => HashMap::new(),
        Some(Value::ZSet(z)) => z.iter().map(|(m, s)| (Bytes::from(m), s)).collect(),
        Some(Value::Set(s)) => s.iter().map(|m| (Bytes::from(&m[..]), 1.0)).collect(),
        Some(_) => return Err(CmdError::WrongType),
    };
    ctx.hit(key, found);
    Ok(members)
}

/// Options after the keys: WEIGHTS, AGGREGATE, WITHSCORES, LIMIT, each where allowed.
struct Options {
    aggregate: Aggregate,
    withscores: bool,
    limit: usize,
}

fn parse_options(
    args: &[&[u8]],
    mut j: usize,
    sources: &mut [Source<'_>],
    op: Op,
    store: bool,
    card_only: bool,
) -> Result<Options, CmdError> {
    let mut o = Options { aggregate: Aggregate::Sum, withscores: false, limit: 0 };
    let setnum = sources.len();
    while j < args.len() {
        let remaining = args.len() - j;
        if op != Op::Diff && !card_only && remaining > setnum && is(args[j], "weights") {
            j += 1;
            for source in sources.iter_mut() {
                source.weight =
                    parse_double(args[j]).ok_or_else(|| CmdError::msg("ERR weight value is not a float"))?;
                j += 1;
            }
        } else if op != Op::Diff && !card_only && remaining >= 2 && is(args[j], "aggregate") {
            o.aggregate = match args[j + 1] {
                a if is(a, "sum") => Aggregate::Sum,
                a if is(a, "min") => Aggregate::Min,
                a if is(a, "max") => Aggregate::Max,
                _ => return Err(CmdError::Syntax),
            };
            j += 2;
        } else if !store && !card_only && is(args[j], "withscores") {
            o.withscores = true;
            j += 1;
        } else if card_only && remaining >= 2 && is(args[j], "limit") {
            o.limit = parse_long_in(args[j + 1], 0, i64::MAX, Some("LIMIT can't be negative"))? as usize;
            j += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok(o)
}

/// The shared body: `numkeys` at `numkeys_idx`, keys after it, then options; `store` is the
/// destination of the STORE forms; `card_only` is ZINTERCARD.
fn zsetop(
    ctx: &mut Ctx<'_>,
    args: &[&[u8]],
    out: &mut dyn ReplySink,
    numkeys_idx: usize,
    store: Option<&[u8]>,
    op: Op,
    card_only: bool,
) -> CmdResult {
    let setnum = parse_long(args[numkeys_idx])?;
    if setnum < 1 {
        return Err(CmdError::msg(format!("ERR at least 1 input key is needed for '{}' command", ctx.spec.name)));
    }
    if setnum > (args.len() - numkeys_idx - 1) as i64 {
        return Err(CmdError::Syntax);
    }
    let keys = &args[numkeys_idx + 1..numkeys_idx + 1 + setnum as usize];
    let mut sources = Vec::with_capacity(keys.len());
    for &key in keys {
        sources.push(Source { key, members: load(ctx, key)?, weight: 1.0 });
    }
    let opts = parse_options(args, numkeys_idx + 1 + keys.len(), &mut sources, op, store.is_some(), card_only)?;
    if op != Op::Diff {
        // Smallest first (a stable sort, as glibc's qsort behaves here).
        sources.sort_by_key(|s| s.members.len());
    }
    let mut result: Vec<(Bytes, f64)> = Vec::new();
    match op {
        Op::Inter => {
            let (first, rest) = sources.split_first().expect("at least one source");
            let mut cardinality = 0usize;
            for (member, &score0) in &first.members {
                let mut score = first.weight * score0;
                if score.is_nan() {
                    score = 0.0;
                }
                let everywhere = rest.iter().all(|src| match src.members.get(member) {
                    Some(&value) => {
                        opts.aggregate.apply(&mut score, value * src.weight);
                        true
                    }
                    None => false,
                });
                if !everywhere {
                    continue;
                }
                if card_only {
                    cardinality += 1;
                    if opts.limit > 0 && cardinality >= opts.limit {
                        break;
                    }
                } else {
                    result.push((member.clone(), score));
                }
            }
            if card_only {
                out.integer(cardinality as i64);
                return Ok(());
            }
        }
        Op::Union => {
            let mut acc: HashMap<Bytes, f64> = HashMap::new();
            for src in &sources {
                for (member, &s) in &src.members {
                    let mut score = src.weight * s;
                    if score.is_nan() {
                        score = 0.0;
                    }
                    match acc.get_mut(member) {
                        Some(target) => opts.aggregate.apply(target, score),
                        None => {
                            acc.insert(member.clone(), score);
                        }
                    }
                }
            }
            result = acc.into_iter().collect();
        }
        Op::Diff => {
            let (first, rest) = sources.split_first().expect("at least one source");
            // The first key repeated later leaves nothing.
            if !rest.iter().any(|s| s.key == first.key) {
                result = first
                    .members
                    .iter()
                    .filter(|(m, _)| !rest.iter().any(|s| s.members.contains_key(*m)))
                    .map(|(m, s)| (m.clone(), *s))
                    .collect();
            }
        }
    }
    match store {
        Some(dst) => {
            let (now, limits) = (ctx.now_ms, ctx.limits());
            let len = result.len();
            let spec = ctx.spec;
            let db = ctx.db(dst);
            if len == 0 {
                if db.remove(dst, now) {
                    ctx.notify(notify::GENERIC, "del", dst);
                }
            } else {
                db.set(dst, Value::ZSet(ZSetValue::from_entries(result, &limits)), TtlOnWrite::Clear, now);
                // The event is the command's name: zunionstore, zinterstore, zdiffstore.
                ctx.notify(notify::ZSET, &spec.name, dst);
            }
            out.integer(len as i64);
        }
        None => {
            result
                .sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.0.cmp(&b.0)));
            reply_members(out, result.iter().map(|(m, s)| (&m[..], *s)), opts.withscores);
        }
    }
    Ok(())
}

/// ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX]
/// — O(N)+O(M*log(M)).
pub(super) fn zunionstore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zsetop(ctx, args, out, 2, Some(args[1]), Op::Union, false)
}

/// ZINTERSTORE destination numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX]
/// — O(N*K)+O(M*log(M)).
pub(super) fn zinterstore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zsetop(ctx, args, out, 2, Some(args[1]), Op::Inter, false)
}

/// ZDIFFSTORE destination numkeys key [key ...] — O(L + (N-K)log(N)).
pub(super) fn zdiffstore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zsetop(ctx, args, out, 2, Some(args[1]), Op::Diff, false)
}

/// ZUNION numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES] —
/// O(N)+O(M*log(M)).
pub(super) fn zunion(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zsetop(ctx, args, out, 1, None, Op::Union, false)
}

/// ZINTER numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES] —
/// O(N*K)+O(M*log(M)).
pub(super) fn zinter(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zsetop(ctx, args, out, 1, None, Op::Inter, false)
}

/// ZINTERCARD numkeys key [key ...] [LIMIT limit] — O(N*K).
pub(super) fn zintercard(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zsetop(ctx, args, out, 1, None, Op::Inter, true)
}

/// ZDIFF numkeys key [key ...] [WITHSCORES] — O(L + (N-K)log(N)).
pub(super) fn zdiff(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    zsetop(ctx, args, out, 1, None, Op::Diff, false)
}
