//! Generic keyspace commands. This subset: DEL EXISTS EXPIRE PEXPIRE EXPIREAT
//! PEXPIREAT TTL PTTL PERSIST.

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::reply::ReplySink;

use super::{is, parse_i64};

/// DEL key [key ...] — O(N) in the number of keys.
fn del(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let removed = args[1..].iter().filter(|key| ctx.db(key).remove(key, now)).count();
    out.integer(removed as i64);
    Ok(())
}

/// EXISTS key [key ...] — O(N); a key named twice counts twice.
fn exists(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let found = args[1..].iter().filter(|key| ctx.db(key).contains(key, now)).count();
    out.integer(found as i64);
    Ok(())
}

#[derive(Debug, Default, Clone, Copy)]
struct ExpireCondition {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

fn parse_expire_condition(args: &[&[u8]]) -> Result<ExpireCondition, CmdError> {
    let mut c = ExpireCondition::default();
    for opt in &args[3..] {
        if is(opt, "NX") {
            c.nx = true;
        } else if is(opt, "XX") {
            c.xx = true;
        } else if is(opt, "GT") {
            c.gt = true;
        } else if is(opt, "LT") {
            c.lt = true;
        } else {
            return Err(CmdError::msg(format!("ERR Unsupported option {}", String::from_utf8_lossy(opt))));
        }
    }
    if c.nx && (c.xx || c.gt || c.lt) {
        return Err(CmdError::msg("ERR NX and XX, GT or LT options at the same time are not compatible"));
    }
    if c.gt && c.lt {
        return Err(CmdError::msg("ERR GT and LT options at the same time are not compatible"));
    }
    Ok(c)
}

/// The shared body of EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT (Redis's
/// `expireGenericCommand`): `relative` adds the current time, `seconds` scales by 1000.
fn expire_generic(
    ctx: &mut Ctx<'_>,
    args: &[&[u8]],
    out: &mut dyn ReplySink,
    relative: bool,
    seconds: bool,
) -> CmdResult {
    let cond = parse_expire_condition(args)?;
    let mut when = parse_i64(args[2])?;
    if seconds {
        when = when.checked_mul(1000).ok_or(CmdError::InvalidExpireTime)?;
    }
    let base = if relative { ctx.now_ms } else { 0 };
    when = when.checked_add(base).ok_or(CmdError::InvalidExpireTime)?;
    let (key, now) = (args[1], ctx.now_ms);
    let db = ctx.db(key);
    let Some(entry) = db.get(key, now) else {
        out.integer(0);
        return Ok(());
    };
    let current = entry.expire_at_ms;
    let refused = (cond.nx && current.is_some())
        || (cond.xx && current.is_none())
        || (cond.gt && current.is_none_or(|c| when <= c))
        || (cond.lt && current.is_some_and(|c| when >= c));
    if refused {
        out.integer(0);
        return Ok(());
    }
    if when <= now {
        db.remove(key, now);
    } else {
        db.set_expire(key, when, now);
    }
    out.integer(1);
    Ok(())
}

/// EXPIRE key seconds [NX|XX|GT|LT] — O(1).
fn expire(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    expire_generic(ctx, args, out, true, true)
}

/// PEXPIRE key milliseconds [NX|XX|GT|LT] — O(1).
fn pexpire(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    expire_generic(ctx, args, out, true, false)
}

/// EXPIREAT key unix-time-seconds [NX|XX|GT|LT] — O(1).
fn expireat(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    expire_generic(ctx, args, out, false, true)
}

/// PEXPIREAT key unix-time-milliseconds [NX|XX|GT|LT] — O(1).
fn pexpireat(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    expire_generic(ctx, args, out, false, false)
}

/// Remaining TTL: -2 if the key is missing, -1 if it has no TTL.
fn ttl_generic(ctx: &mut Ctx<'_>, key: &[u8], out: &mut dyn ReplySink, in_ms: bool) -> CmdResult {
    let now = ctx.now_ms;
    let reply = match ctx.db(key).get(key, now) {
        None => -2,
        Some(entry) => match entry.expire_at_ms {
            None => -1,
            Some(at) => {
                let ms = (at - now).max(0);
                if in_ms {
                    ms
                } else {
                    (ms + 500) / 1000
                }
            }
        },
    };
    out.integer(reply);
    Ok(())
}

/// TTL key — O(1).
fn ttl(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    ttl_generic(ctx, args[1], out, false)
}

/// PTTL key — O(1).
fn pttl(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    ttl_generic(ctx, args[1], out, true)
}

/// PERSIST key — O(1).
fn persist(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let removed = ctx.db(args[1]).persist(args[1], now);
    out.integer(i64::from(removed));
    Ok(())
}

fn expire_spec(
    name: &str,
    handler: crate::command::Handler,
    since: &'static str,
    summary: &'static str,
    amount: ArgDoc,
) -> CommandSpec {
    CommandSpec::new(name, -3, "write fast", "keyspace", handler)
        .doc("generic", since, summary, "O(1)")
        .keys("RW update", 1, 0, 1)
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .args(vec![
            ArgDoc::key("key", 0),
            amount,
            ArgDoc::one_of(
                "condition",
                vec![
                    ArgDoc::token("nx", "NX"),
                    ArgDoc::token("xx", "XX"),
                    ArgDoc::token("gt", "GT"),
                    ArgDoc::token("lt", "LT"),
                ],
            )
            .optional()
            .since("7.0.0"),
        ])
}

pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::new("del", -2, "write", "keyspace", del)
            .doc("generic", "1.0.0", "Delete a key", "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).")
            .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
            .keys("RM delete", 1, -1, 1)
            .args(vec![ArgDoc::key("key", 0).multiple()]),
        CommandSpec::new("exists", -2, "readonly fast", "keyspace", exists)
            .doc("generic", "1.0.0", "Determine if a key exists", "O(N) where N is the number of keys to check.")
            .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
            .keys("RO", 1, -1, 1)
            .history(&[("3.0.3", "Accepts multiple `key` arguments.")])
            .args(vec![ArgDoc::key("key", 0).multiple()]),
        expire_spec("expire", expire, "1.0.0", "Set a key's time to live in seconds", ArgDoc::new("seconds", ArgType::Integer)),
        expire_spec("pexpire", pexpire, "2.6.0", "Set a key's time to live in milliseconds", ArgDoc::new("milliseconds", ArgType::Integer)),
        expire_spec("expireat", expireat, "1.2.0", "Set the expiration for a key as a UNIX timestamp", ArgDoc::new("unix-time-seconds", ArgType::UnixTime)),
        expire_spec("pexpireat", pexpireat, "2.6.0", "Set the expiration for a key as a UNIX timestamp specified in milliseconds", ArgDoc::new("unix-time-milliseconds", ArgType::UnixTime)),
        CommandSpec::new("ttl", 2, "readonly fast", "keyspace", ttl)
            .doc("generic", "1.0.0", "Get the time to live for a key in seconds", "O(1)")
            .history(&[("2.8.0", "Added the -2 reply.")])
            .tips(&["nondeterministic_output"])
            .keys("RO access", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0)]),
        CommandSpec::new("pttl", 2, "readonly fast", "keyspace", pttl)
            .doc("generic", "2.6.0", "Get the time to live for a key in milliseconds", "O(1)")
            .history(&[("2.8.0", "Added the -2 reply.")])
            .tips(&["nondeterministic_output"])
            .keys("RO access", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0)]),
        CommandSpec::new("persist", 2, "write fast", "keyspace", persist)
            .doc("generic", "2.2.0", "Remove the expiration from a key", "O(1)")
            .keys("RW update", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0)]),
    ]
}
