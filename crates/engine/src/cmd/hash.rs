//! Hash commands: field writes (HSET HMSET HSETNX HDEL), reads (HGET HMGET HEXISTS HLEN
//! HSTRLEN HKEYS HVALS HGETALL), counters (HINCRBY HINCRBYFLOAT), HRANDFIELD and HSCAN.

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{Entry, TtlOnWrite, Value};
use crate::longdouble::LongDouble;
use crate::pubsub::notify;
use crate::reply::ReplySink;
use crate::types::HashValue;

use super::parse_i64;
use super::set::{
    add_dirty, command_rng, count_hit, distinct_indices, parse_cursor, parse_range, parse_scan_options,
    reply_empty_scan,
};

fn hash_of(entry: &Entry) -> Result<&HashValue, CmdError> {
    match &entry.value {
        Value::Hash(h) => Ok(h),
        _ => Err(CmdError::WrongType),
    }
}

/// lookupKeyRead for a hash: records the access and a keyspace hit or miss.
fn read_hash<'c>(ctx: &'c mut Ctx<'_>, key: &[u8]) -> Result<Option<&'c HashValue>, CmdError> {
    let (engine, now) = (ctx.engine, ctx.now_ms);
    let entry = ctx.db(key).get_read(key, now);
    count_hit(engine, entry.is_some());
    entry.map(hash_of).transpose()
}

/// lookupKeyWrite for a hash: records the access, no hit accounting.
fn write_hash<'c>(ctx: &'c mut Ctx<'_>, key: &[u8]) -> Result<Option<&'c mut HashValue>, CmdError> {
    let now = ctx.now_ms;
    match ctx.db(key).get_mut(key, now) {
        None => Ok(None),
        Some(Entry { value: Value::Hash(h), .. }) => Ok(Some(h)),
        Some(_) => Err(CmdError::WrongType),
    }
}

/// Runs `update` on the hash at `key` (Redis's hashTypeLookupWriteOrCreate and what
/// follows). A missing key gets a new hash, stored once `update` succeeds and only if it
/// is not empty, so the key is looked up (and its access recorded) once. Returns whether
/// the key was created (which `Db::set` counted as one change).
fn update_hash<T>(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    update: impl FnOnce(&mut HashValue) -> Result<T, CmdError>,
) -> Result<(bool, T), CmdError> {
    if let Some(hash) = write_hash(ctx, key)? {
        return Ok((false, update(hash)?));
    }
    let mut hash = HashValue::default();
    let result = update(&mut hash)?;
    let created = !hash.is_empty();
    if created {
        let now = ctx.now_ms;
        ctx.db(key).set(key, Value::Hash(hash), TtlOnWrite::Clear, now);
    }
    Ok((created, result))
}

fn wrong_arity(ctx: &Ctx<'_>) -> CmdError {
    CmdError::msg(format!("ERR wrong number of arguments for '{}' command", ctx.spec.name))
}

/// HSET key field value [field value ...] — O(1) per pair; replies with the new fields.
fn hset(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let added = hset_generic(ctx, args)?;
    out.integer(added as i64);
    Ok(())
}

/// HMSET key field value [field value ...] — O(1) per pair; replies OK.
fn hmset(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    hset_generic(ctx, args)?;
    out.simple("OK");
    Ok(())
}

fn hset_generic(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> Result<usize, CmdError> {
    if !args.len().is_multiple_of(2) {
        return Err(wrong_arity(ctx));
    }
    let limits = ctx.limits();
    let (created, added) = update_hash(ctx, args[1], |hash| {
        hash.convert_for(args[2..].iter().copied(), &limits);
        Ok(args[2..].chunks_exact(2).filter(|pair| hash.set(pair[0], pair[1], &limits)).count())
    })?;
    add_dirty(ctx, (args.len() as u64 - 2) / 2, u64::from(created));
    ctx.notify(notify::HASH, "hset", args[1]);
    Ok(added)
}

/// HSETNX key field value — O(1).
fn hsetnx(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let limits = ctx.limits();
    let (created, added) = update_hash(ctx, args[1], |hash| {
        let new = !hash.contains(args[2]);
        if new {
            hash.set(args[2], args[3], &limits);
        }
        Ok(new)
    })?;
    if added {
        add_dirty(ctx, 1, u64::from(created));
        ctx.notify(notify::HASH, "hset", args[1]);
    }
    out.integer(i64::from(added));
    Ok(())
}

/// HGET key field — O(1).
fn hget(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    match read_hash(ctx, args[1])?.and_then(|h| h.get(args[2])) {
        Some(value) => out.bulk(value),
        None => out.null(),
    }
    Ok(())
}

/// HMGET key field [field ...] — O(N) in the fields asked; missing ones are null.
fn hmget(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let hash = read_hash(ctx, args[1])?;
    out.array(args.len() - 2);
    for field in &args[2..] {
        match hash.and_then(|h| h.get(field)) {
            Some(value) => out.bulk(value),
            None => out.null(),
        }
    }
    Ok(())
}

/// HDEL key field [field ...] — O(N) in the fields given.
fn hdel(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (key, now) = (args[1], ctx.now_ms);
    let Some(hash) = write_hash(ctx, key)? else {
        out.integer(0);
        return Ok(());
    };
    let mut deleted = 0u64;
    for field in &args[2..] {
        if hash.remove(field) {
            deleted += 1;
            if hash.is_empty() {
                break;
            }
        }
    }
    let emptied = hash.is_empty();
    if emptied {
        ctx.db(key).remove(key, now);
    }
    add_dirty(ctx, deleted, u64::from(emptied));
    if deleted > 0 {
        ctx.notify(notify::HASH, "hdel", key);
        if emptied {
            ctx.notify(notify::GENERIC, "del", key);
        }
    }
    out.integer(deleted as i64);
    Ok(())
}

/// HLEN key — O(1).
fn hlen(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let len = read_hash(ctx, args[1])?.map_or(0, HashValue::len);
    out.integer(len as i64);
    Ok(())
}

/// HSTRLEN key field — O(1).
fn hstrlen(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let len = read_hash(ctx, args[1])?.and_then(|h| h.get(args[2])).map_or(0, <[u8]>::len);
    out.integer(len as i64);
    Ok(())
}

/// HEXISTS key field — O(1).
fn hexists(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let found = read_hash(ctx, args[1])?.is_some_and(|h| h.contains(args[2]));
    out.integer(i64::from(found));
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Fields,
    Values,
    Both,
}

/// HKEYS, HVALS and HGETALL (Redis's genericHgetallCommand): fields and values together
/// are a map in RESP3, either alone a flat array.
fn hgetall_generic(ctx: &mut Ctx<'_>, key: &[u8], part: Part, out: &mut dyn ReplySink) -> CmdResult {
    let hash = read_hash(ctx, key)?;
    let len = hash.map_or(0, HashValue::len);
    if part == Part::Both {
        out.map(len);
    } else {
        out.array(len);
    }
    for (field, value) in hash.into_iter().flat_map(HashValue::iter) {
        if part != Part::Values {
            out.bulk(field);
        }
        if part != Part::Fields {
            out.bulk(value);
        }
    }
    Ok(())
}

/// HKEYS key — O(N).
fn hkeys(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    hgetall_generic(ctx, args[1], Part::Fields, out)
}

/// HVALS key — O(N).
fn hvals(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    hgetall_generic(ctx, args[1], Part::Values, out)
}

/// HGETALL key — O(N).
fn hgetall(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    hgetall_generic(ctx, args[1], Part::Both, out)
}

/// HINCRBY key field increment — O(1).
fn hincrby(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let incr = parse_i64(args[3])?;
    let limits = ctx.limits();
    let (created, value) = update_hash(ctx, args[1], |hash| {
        let current = match hash.get(args[2]) {
            None => 0,
            Some(v) => {
                quince_resp::parse_i64_strict(v).ok_or_else(|| CmdError::msg("ERR hash value is not an integer"))?
            }
        };
        let value =
            current.checked_add(incr).ok_or_else(|| CmdError::msg("ERR increment or decrement would overflow"))?;
        hash.set(args[2], quince_resp::format_i64(value).as_bytes(), &limits);
        Ok(value)
    })?;
    add_dirty(ctx, 1, u64::from(created));
    ctx.notify(notify::HASH, "hincrby", args[1]);
    out.integer(value);
    Ok(())
}

/// HINCRBYFLOAT key field increment — O(1), in extended precision like INCRBYFLOAT.
fn hincrbyfloat(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let incr = LongDouble::parse(args[3]).ok_or_else(|| CmdError::msg("ERR value is not a valid float"))?;
    if incr.is_nan() || incr.is_infinite() {
        return Err(CmdError::msg("ERR value is NaN or Infinity"));
    }
    let limits = ctx.limits();
    let (created, text) = update_hash(ctx, args[1], |hash| {
        let current = match hash.get(args[2]) {
            None => LongDouble::from_i64(0),
            Some(v) => LongDouble::parse(v).ok_or_else(|| CmdError::msg("ERR hash value is not a float"))?,
        };
        let text = Some(current + incr)
            .filter(|v| !v.is_nan() && !v.is_infinite())
            .and_then(LongDouble::to_human_string)
            .ok_or_else(|| CmdError::msg("ERR increment would produce NaN or Infinity"))?;
        hash.set(args[2], text.as_bytes(), &limits);
        Ok(text)
    })?;
    add_dirty(ctx, 1, u64::from(created));
    ctx.notify(notify::HASH, "hincrbyfloat", args[1]);
    out.bulk(text.as_bytes());
    // Logged as HSET key field <result>, so float formatting never differs on replay.
    ctx.propagate_as(&[&b"HSET"[..], args[1], args[2], text.as_bytes()]);
    Ok(())
}

/// HRANDFIELD key [count [WITHVALUES]] — O(N) in the fields returned.
fn hrandfield(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut rng = command_rng(ctx);
    if args.len() == 2 {
        match read_hash(ctx, args[1])? {
            None => out.null(),
            Some(hash) => out.bulk(hash.get_index(rng.below(hash.len())).0),
        }
        return Ok(());
    }
    let n = parse_range(args[2], -i64::MAX, i64::MAX)?;
    if args.len() > 4 || (args.len() == 4 && !super::is(args[3], "WITHVALUES")) {
        return Err(CmdError::Syntax);
    }
    let with_values = args.len() == 4;
    // Twice the count is replied with values: keep that within range.
    if with_values && !(-i64::MAX / 2..=i64::MAX / 2).contains(&n) {
        return Err(CmdError::msg("ERR value is out of range"));
    }
    let resp3 = out.protocol() == quince_resp::Protocol::Resp3;
    let Some(hash) = read_hash(ctx, args[1])? else {
        out.array(0);
        return Ok(());
    };
    let (count, unique) = (n.unsigned_abs() as usize, n >= 0);
    let size = hash.len();
    if count == 0 {
        out.array(0);
        return Ok(());
    }
    let reply_len = if unique { count.min(size) } else { count };
    // RESP2 gets a flat field, value, ... array; RESP3 an array of pairs.
    out.array(if with_values && !resp3 { reply_len * 2 } else { reply_len });
    let reply_entry = |out: &mut dyn ReplySink, (field, value): (&[u8], &[u8])| {
        if with_values && resp3 {
            out.array(2);
        }
        out.bulk(field);
        if with_values {
            out.bulk(value);
        }
    };
    // A packed listpack is walked per positional lookup: index its entries once.
    let packed: Option<Vec<(&[u8], &[u8])>> = matches!(hash, HashValue::Listpack(_)).then(|| hash.iter().collect());
    let pick = |i: usize| packed.as_ref().map_or_else(|| hash.get_index(i), |entries| entries[i]);
    if !unique || count == 1 {
        for _ in 0..count {
            reply_entry(out, pick(rng.below(size)));
        }
    } else if count >= size {
        hash.iter().for_each(|entry| reply_entry(out, entry));
    } else {
        for i in distinct_indices(&mut rng, size, count) {
            reply_entry(out, pick(i));
        }
    }
    Ok(())
}

/// HSCAN key cursor [MATCH pattern] [COUNT count]: COUNT fields visited per call (see
/// `types::set::scan_positions`); a listpack-encoded hash is returned whole.
fn hscan(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let cursor = parse_cursor(args[2])?;
    let Some(hash) = read_hash(ctx, args[1])? else {
        reply_empty_scan(out);
        return Ok(());
    };
    let opts = parse_scan_options(&args[3..])?;
    let page = hash.scan(cursor, opts.count);
    let entries: Vec<_> = page.items.into_iter().filter(|(field, _)| opts.matches(field)).collect();
    out.array(2);
    out.bulk(page.next.to_string().as_bytes());
    out.array(entries.len() * 2);
    for (field, value) in entries {
        out.bulk(field);
        out.bulk(value);
    }
    Ok(())
}

pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::new("hdel", -3, "write fast", "hash", hdel)
            .doc("hash", "2.0.0", "Delete one or more hash fields", "O(N) where N is the number of fields to be removed.")
            .history(&[("2.4.0", "Accepts multiple `field` arguments.")])
            .keys("RW delete", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("field", ArgType::String).multiple(),
            ]),
        CommandSpec::new("hexists", 3, "readonly fast", "hash", hexists)
            .doc("hash", "2.0.0", "Determine if a hash field exists", "O(1)")
            .keys("RO", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("field", ArgType::String),
            ]),
        CommandSpec::new("hget", 3, "readonly fast", "hash", hget)
            .doc("hash", "2.0.0", "Get the value of a hash field", "O(1)")
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("field", ArgType::String),
            ]),
        CommandSpec::new("hgetall", 2, "readonly", "hash", hgetall)
            .doc("hash", "2.0.0", "Get all the fields and values in a hash", "O(N) where N is the size of the hash.")
            .tips(&["nondeterministic_output_order"])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
            ]),
        CommandSpec::new("hincrby", 4, "write denyoom fast", "hash", hincrby)
            .doc("hash", "2.0.0", "Increment the integer value of a hash field by the given number", "O(1)")
            .keys("RW access update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("field", ArgType::String),
                ArgDoc::new("increment", ArgType::Integer),
            ]),
        CommandSpec::new("hincrbyfloat", 4, "write denyoom fast", "hash", hincrbyfloat)
            .doc("hash", "2.6.0", "Increment the float value of a hash field by the given amount", "O(1)")
            .keys("RW access update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("field", ArgType::String),
                ArgDoc::new("increment", ArgType::Double),
            ]),
        CommandSpec::new("hkeys", 2, "readonly", "hash", hkeys)
            .doc("hash", "2.0.0", "Get all the fields in a hash", "O(N) where N is the size of the hash.")
            .tips(&["nondeterministic_output_order"])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
            ]),
        CommandSpec::new("hlen", 2, "readonly fast", "hash", hlen)
            .doc("hash", "2.0.0", "Get the number of fields in a hash", "O(1)")
            .keys("RO", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
            ]),
        CommandSpec::new("hmget", -3, "readonly fast", "hash", hmget)
            .doc("hash", "2.0.0", "Get the values of all the given hash fields", "O(N) where N is the number of fields being requested.")
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("field", ArgType::String).multiple(),
            ]),
        CommandSpec::new("hmset", -4, "write denyoom fast", "hash", hmset)
            .doc("hash", "2.0.0", "Set multiple hash fields to multiple values", "O(N) where N is the number of fields being set.")
            .deprecated("4.0.0", "`HSET` with multiple field-value pairs")
            .keys("RW update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::block("field_value", vec![
                    ArgDoc::new("field", ArgType::String),
                    ArgDoc::new("value", ArgType::String),
                ]).multiple(),
            ]),
        CommandSpec::new("hrandfield", -2, "readonly", "hash", hrandfield)
            .doc("hash", "6.2.0", "Get one or multiple random fields from a hash", "O(N) where N is the number of fields returned")
            .tips(&["nondeterministic_output"])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::block("options", vec![
                    ArgDoc::new("count", ArgType::Integer),
                    ArgDoc::token("withvalues", "WITHVALUES").optional(),
                ]).optional(),
            ]),
        CommandSpec::new("hscan", -3, "readonly", "hash", hscan)
            .doc("hash", "2.8.0", "Incrementally iterate hash fields and associated values", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..")
            .tips(&["nondeterministic_output"])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("cursor", ArgType::Integer),
                ArgDoc::new("pattern", ArgType::Pattern).after("MATCH").optional(),
                ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
            ]),
        CommandSpec::new("hset", -4, "write denyoom fast", "hash", hset)
            .doc("hash", "2.0.0", "Set the string value of a hash field", "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.")
            .history(&[("4.0.0", "Accepts multiple `field` and `value` arguments.")])
            .keys("RW update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::block("field_value", vec![
                    ArgDoc::new("field", ArgType::String),
                    ArgDoc::new("value", ArgType::String),
                ]).multiple(),
            ]),
        CommandSpec::new("hsetnx", 4, "write denyoom fast", "hash", hsetnx)
            .doc("hash", "2.0.0", "Set the value of a hash field, only if the field does not exist", "O(1)")
            .keys("RW insert", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("field", ArgType::String),
                ArgDoc::new("value", ArgType::String),
            ]),
        CommandSpec::new("hstrlen", 3, "readonly fast", "hash", hstrlen)
            .doc("hash", "3.2.0", "Get the length of the value of a hash field", "O(1)")
            .keys("RO", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("field", ArgType::String),
            ]),
        CommandSpec::new("hvals", 2, "readonly", "hash", hvals)
            .doc("hash", "2.0.0", "Get all the values in a hash", "O(N) where N is the size of the hash.")
            .tips(&["nondeterministic_output_order"])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
            ]),
    ]
}
