//! String commands. This subset: GET and SET with all options.

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{TtlOnWrite, Value};
use crate::reply::ReplySink;

use super::{is, parse_i64};

/// Options of SET, parsed as Redis's `parseExtendedStringArgumentsOrReply` does: each
/// option may repeat, but conflicting ones (NX with XX, two expiry forms) are a syntax error.
#[derive(Debug, Default, Clone, Copy)]
struct SetOptions {
    nx: bool,
    xx: bool,
    get: bool,
    keep_ttl: bool,
    expire: Option<(ExpireUnit, i64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExpireUnit {
    Ex,
    Px,
    ExAt,
    PxAt,
}

fn parse_set_options(args: &[&[u8]]) -> Result<SetOptions, CmdError> {
    let mut o = SetOptions::default();
    let mut j = 3;
    while j < args.len() {
        let opt = args[j];
        let has_next = j + 1 < args.len();
        let unit =
            [("EX", ExpireUnit::Ex), ("PX", ExpireUnit::Px), ("EXAT", ExpireUnit::ExAt), ("PXAT", ExpireUnit::PxAt)]
                .into_iter()
                .find(|(name, _)| is(opt, name))
                .map(|(_, u)| u);
        if is(opt, "NX") && !o.xx {
            o.nx = true;
        } else if is(opt, "XX") && !o.nx {
            o.xx = true;
        } else if is(opt, "GET") {
            o.get = true;
        } else if is(opt, "KEEPTTL") && o.expire.is_none() {
            o.keep_ttl = true;
        } else if let Some(unit) =
            unit.filter(|u| has_next && !o.keep_ttl && o.expire.is_none_or(|(existing, _)| existing == *u))
        {
            // The value is parsed later, after all options, as Redis does.
            o.expire = Some((unit, j as i64 + 1));
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    Ok(o)
}

/// Turns an EX/PX/EXAT/PXAT argument into an absolute time in ms, with Redis's checks.
fn absolute_expire_ms(arg: &[u8], unit: ExpireUnit, now_ms: i64) -> Result<i64, CmdError> {
    let mut ms = parse_i64(arg)?;
    let seconds = matches!(unit, ExpireUnit::Ex | ExpireUnit::ExAt);
    if ms <= 0 || (seconds && ms > i64::MAX / 1000) {
        return Err(CmdError::InvalidExpireTime);
    }
    if seconds {
        ms *= 1000;
    }
    if matches!(unit, ExpireUnit::Ex | ExpireUnit::Px) {
        ms = ms.wrapping_add(now_ms);
    }
    if ms <= 0 {
        return Err(CmdError::InvalidExpireTime);
    }
    Ok(ms)
}

/// Replies with a key's string value or null; WRONGTYPE for other types.
fn reply_get(ctx: &mut Ctx<'_>, key: &[u8], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let found = match ctx.db(key).get(key, now) {
        None => {
            out.null();
            false
        }
        Some(entry) => match &entry.value {
            Value::Str(s) => {
                out.bulk(s);
                true
            }
        },
    };
    ctx.hit(found);
    Ok(())
}

/// GET key — O(1).
fn get(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    reply_get(ctx, args[1], out)
}

/// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ts-ms|KEEPTTL] — O(1).
fn set(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let opts = parse_set_options(args)?;
    let (key, value) = (args[1], args[2]);
    let now = ctx.now_ms;
    let expire_at = match opts.expire {
        Some((unit, pos)) => Some(absolute_expire_ms(args[pos as usize], unit, now)?),
        None => None,
    };
    if opts.get {
        reply_get(ctx, key, out)?;
    }
    let db = ctx.db(key);
    let exists = db.contains(key, now);
    if (opts.nx && exists) || (opts.xx && !exists) {
        if !opts.get {
            out.null();
        }
        return Ok(());
    }
    let ttl = match (expire_at, opts.keep_ttl) {
        (Some(at), _) => TtlOnWrite::At(at),
        (None, true) => TtlOnWrite::Keep,
        (None, false) => TtlOnWrite::Clear,
    };
    db.set(key, Value::Str(value.to_vec()), ttl, now);
    if !opts.get {
        out.simple("OK");
    }
    Ok(())
}

/// The shared body of INCR, DECR, INCRBY and DECRBY (Redis's `incrDecrCommand`): the TTL
/// is kept, a missing key counts as 0.
fn incr_by(ctx: &mut Ctx<'_>, key: &[u8], delta: i64, out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let db = ctx.db(key);
    let current = match db.get(key, now) {
        None => 0,
        Some(entry) => match &entry.value {
            Value::Str(s) => parse_i64(s)?,
        },
    };
    let value = current.checked_add(delta).ok_or_else(|| CmdError::msg("ERR increment or decrement would overflow"))?;
    db.set(key, Value::Str(value.to_string().into_bytes()), TtlOnWrite::Keep, now);
    out.integer(value);
    Ok(())
}

/// INCR key — O(1).
fn incr(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    incr_by(ctx, args[1], 1, out)
}

/// DECR key — O(1).
fn decr(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    incr_by(ctx, args[1], -1, out)
}

/// INCRBY key increment — O(1).
fn incrby(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let delta = parse_i64(args[2])?;
    incr_by(ctx, args[1], delta, out)
}

/// DECRBY key decrement — O(1).
fn decrby(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let delta = parse_i64(args[2])?;
    let negated = delta.checked_neg().ok_or_else(|| CmdError::msg("ERR decrement would overflow"))?;
    incr_by(ctx, args[1], negated, out)
}

fn counter_spec(
    name: &str,
    arity: i32,
    handler: crate::command::Handler,
    summary: &'static str,
    amount: Option<&'static str>,
) -> CommandSpec {
    let mut args = vec![ArgDoc::key("key", 0)];
    args.extend(amount.map(|a| ArgDoc::new(a, ArgType::Integer)));
    CommandSpec::new(name, arity, "write denyoom fast", "string", handler)
        .doc("string", "1.0.0", summary, "O(1)")
        .keys("RW access update", 1, 0, 1)
        .args(args)
}

pub fn register() -> Vec<CommandSpec> {
    vec![
        counter_spec("incr", 2, incr, "Increment the integer value of a key by one", None),
        counter_spec("decr", 2, decr, "Decrement the integer value of a key by one", None),
        counter_spec(
            "incrby",
            3,
            incrby,
            "Increment the integer value of a key by the given amount",
            Some("increment"),
        ),
        counter_spec(
            "decrby",
            3,
            decrby,
            "Decrement the integer value of a key by the given number",
            Some("decrement"),
        ),
        CommandSpec::new("get", 2, "readonly fast", "string", get)
            .doc("string", "1.0.0", "Get the value of a key", "O(1)")
            .keys("RO access", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0)]),
        CommandSpec::new("set", -3, "write denyoom", "string", set)
            .doc("string", "1.0.0", "Set the string value of a key", "O(1)")
            .keys("RW access update variable_flags", 1, 0, 1)
            .key_notes("RW and ACCESS due to the optional `GET` argument")
            .variable_key_flags(|args| {
                let get = args.iter().skip(3).any(|a| is(a, "GET"));
                CommandSpec::key_flags(if get { "RW access update" } else { "OW update" })
            })
            .history(&[
                ("2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."),
                ("6.0.0", "Added the `KEEPTTL` option."),
                ("6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."),
                ("7.0.0", "Allowed the `NX` and `GET` options to be used together."),
            ])
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("value", ArgType::String),
                ArgDoc::one_of("condition", vec![ArgDoc::token("nx", "NX"), ArgDoc::token("xx", "XX")])
                    .optional()
                    .since("2.6.12"),
                ArgDoc::token("get", "GET").optional().since("6.2.0"),
                ArgDoc::one_of(
                    "expiration",
                    vec![
                        ArgDoc::new("seconds", ArgType::Integer).after("EX").since("2.6.12"),
                        ArgDoc::new("milliseconds", ArgType::Integer).after("PX").since("2.6.12"),
                        ArgDoc::new("unix-time-seconds", ArgType::UnixTime).after("EXAT").since("6.2.0"),
                        ArgDoc::new("unix-time-milliseconds", ArgType::UnixTime).after("PXAT").since("6.2.0"),
                        ArgDoc::token("keepttl", "KEEPTTL").since("6.0.0"),
                    ],
                )
                .optional(),
            ]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(args: &[&str]) -> Result<SetOptions, CmdError> {
        let mut all: Vec<&[u8]> = vec![b"SET", b"k", b"v"];
        all.extend(args.iter().map(|a| a.as_bytes()));
        parse_set_options(&all)
    }

    #[test]
    fn option_conflicts_follow_redis() {
        assert!(opts(&["NX", "XX"]).is_err());
        assert!(opts(&["EX", "1", "PX", "1"]).is_err());
        assert!(opts(&["EX", "1", "KEEPTTL"]).is_err());
        assert!(opts(&["KEEPTTL", "EX", "1"]).is_err());
        assert!(opts(&["EX"]).is_err());
        assert!(opts(&["NX", "NX", "GET", "GET"]).is_ok());
        assert!(opts(&["EX", "1", "EX", "2"]).is_ok());
        assert!(opts(&["ex", "x"]).is_ok()); // the value is checked later
    }
}
