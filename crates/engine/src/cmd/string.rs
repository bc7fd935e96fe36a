//! String commands: GET/SET and their variants, multi-key MGET/MSET, in-place edits
//! (APPEND, SETRANGE), counters (INCR family, INCRBYFLOAT), ranges and LCS.

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{Entry, StrValue, TtlOnWrite, Value};
use crate::longdouble::LongDouble;
use crate::pubsub::notify;
use crate::reply::ReplySink;

use super::{is, parse_i64};

/// Options of SET and GETEX, parsed as Redis's `parseExtendedStringArgumentsOrReply` does:
/// each option may repeat, but conflicting ones (NX with XX, two expiry forms) are a syntax
/// error, and SET-only or GETEX-only options are rejected by the other command.
#[derive(Debug, Default, Clone, Copy)]
struct SetOptions {
    nx: bool,
    xx: bool,
    get: bool,
    keep_ttl: bool,
    persist: bool,
    /// The expiry form and the index of its argument.
    expire: Option<(ExpireUnit, usize)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExpireUnit {
    Ex,
    Px,
    ExAt,
    PxAt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OptionsFor {
    Set,
    GetEx,
}

fn parse_set_options(args: &[&[u8]], first: usize, command: OptionsFor) -> Result<SetOptions, CmdError> {
    let set = command == OptionsFor::Set;
    let mut o = SetOptions::default();
    let mut j = first;
    while j < args.len() {
        let opt = args[j];
        let has_next = j + 1 < args.len();
        let unit =
            [("EX", ExpireUnit::Ex), ("PX", ExpireUnit::Px), ("EXAT", ExpireUnit::ExAt), ("PXAT", ExpireUnit::PxAt)]
                .into_iter()
                .find(|(name, _)| is(opt, name))
                .map(|(_, u)| u);
        if set && is(opt, "NX") && !o.xx {
            o.nx = true;
        } else if set && is(opt, "XX") && !o.nx {
            o.xx = true;
        } else if set && is(opt, "GET") {
            o.get = true;
        } else if set && is(opt, "KEEPTTL") && o.expire.is_none() {
            o.keep_ttl = true;
        } else if !set && is(opt, "PERSIST") && o.expire.is_none() {
            o.persist = true;
        } else if let Some(unit) = unit
            .filter(|u| has_next && !o.keep_ttl && !o.persist && o.expire.is_none_or(|(existing, _)| existing == *u))
        {
            // The value is parsed later, after all options, as Redis does.
            o.expire = Some((unit, j + 1));
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

/// The string in an entry, or WRONGTYPE.
pub fn as_str(entry: &Entry) -> Result<&StrValue, CmdError> {
    match &entry.value {
        Value::Str(s) => Ok(s),
        _ => Err(CmdError::WrongType),
    }
}

pub fn as_str_mut(entry: &mut Entry) -> Result<&mut StrValue, CmdError> {
    match &mut entry.value {
        Value::Str(s) => Ok(s),
        _ => Err(CmdError::WrongType),
    }
}

/// Redis's checkStringLength: a string may not grow past proto-max-bulk-len.
pub fn check_string_length(ctx: &Ctx<'_>, size: u64, append: u64) -> CmdResult {
    let max = ctx.engine.config.read().get_u64("proto-max-bulk-len");
    match size.checked_add(append) {
        Some(total) if total <= max => Ok(()),
        _ => Err(CmdError::msg("ERR string exceeds maximum allowed size (proto-max-bulk-len)")),
    }
}

pub(crate) fn reply_str(out: &mut dyn ReplySink, s: &StrValue) {
    match s {
        StrValue::Int(n) => {
            out.bulk(quince_resp::format_i64(*n).as_bytes());
        }
        StrValue::Embstr(b) => out.bulk(b),
        StrValue::Raw(b) => out.bulk(b),
    }
}

/// Replies with a key's string value or null; WRONGTYPE for other types.
fn reply_get(ctx: &mut Ctx<'_>, key: &[u8], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let found = match ctx.db(key).get(key, now) {
        None => {
            out.null();
            Ok(false)
        }
        Some(entry) => as_str(entry).map(|s| reply_str(out, s)).map(|()| true),
    };
    // A key of another type is a hit too (WRONGTYPE), as in Redis's lookupKeyRead.
    ctx.hit(key, found.as_ref().map_or(true, |&found| found));
    found.map(|_| ())
}

/// GET key — O(1).
fn get(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    reply_get(ctx, args[1], out)
}

/// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ts-ms|KEEPTTL] — O(1).
fn set(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let opts = parse_set_options(args, 3, OptionsFor::Set)?;
    let (key, value) = (args[1], args[2]);
    let now = ctx.now_ms;
    let expire_at = match opts.expire {
        Some((unit, pos)) => Some(absolute_expire_ms(args[pos], unit, now)?),
        None => None,
    };
    if opts.get {
        reply_get(ctx, key, out)?;
    }
    let db = ctx.db(key);
    // (Only NX and XX need to know: a plain SET looks the key up once, in `set`.)
    let exists = (opts.nx || opts.xx) && db.contains(key, now);
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
    db.set(key, Value::string(value), ttl, now);
    ctx.notify(notify::STRING, "set", key);
    if expire_at.is_some() {
        ctx.notify(notify::GENERIC, "expire", key);
    }
    if !opts.get {
        out.simple("OK");
    }
    propagate_set(ctx, args, expire_at);
    Ok(())
}

/// Logs a SET deterministically, as Redis's setGenericCommand rewrites it: with an expiry,
/// `SET key value PXAT <absolute ms>` (the other options dropped: the write already
/// happened); with GET, the command without its GET arguments (a replay has no reply).
fn propagate_set(ctx: &mut Ctx<'_>, args: &[&[u8]], expire_at: Option<i64>) {
    if !ctx.propagating() {
        return;
    }
    if let Some(at) = expire_at {
        let at = at.to_string();
        ctx.propagate_as(&[&b"SET"[..], args[1], args[2], b"PXAT", at.as_bytes()]);
    } else if args.len() > 3 && args[3..].iter().any(|a| is(a, "GET")) {
        let kept: Vec<&[u8]> =
            args.iter().enumerate().filter(|(j, a)| *j < 3 || !is(a, "GET")).map(|(_, a)| *a).collect();
        ctx.propagate_as(&kept);
    }
}

/// SETNX key value — O(1).
fn setnx(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let db = ctx.db(args[1]);
    if db.contains(args[1], now) {
        out.integer(0);
    } else {
        db.set(args[1], Value::string(args[2]), TtlOnWrite::Clear, now);
        ctx.notify(notify::STRING, "set", args[1]);
        out.integer(1);
    }
    Ok(())
}

/// SETEX / PSETEX key time value — O(1).
fn setex_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, unit: ExpireUnit) -> CmdResult {
    let now = ctx.now_ms;
    let at = absolute_expire_ms(args[2], unit, now)?;
    ctx.db(args[1]).set(args[1], Value::string(args[3]), TtlOnWrite::At(at), now);
    ctx.notify(notify::STRING, "set", args[1]);
    ctx.notify(notify::GENERIC, "expire", args[1]);
    out.simple("OK");
    // Redis runs SETEX through setGenericCommand: logged as SET key value PXAT <abs ms>.
    ctx.propagate_as(&[&b"SET"[..], args[1], args[3], b"PXAT", at.to_string().as_bytes()]);
    Ok(())
}

fn setex(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    setex_generic(ctx, args, out, ExpireUnit::Ex)
}

fn psetex(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    setex_generic(ctx, args, out, ExpireUnit::Px)
}

/// GETSET key value — O(1): the old value, then SET (TTL cleared).
fn getset(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    reply_get(ctx, args[1], out)?;
    let now = ctx.now_ms;
    ctx.db(args[1]).set(args[1], Value::string(args[2]), TtlOnWrite::Clear, now);
    ctx.notify(notify::STRING, "set", args[1]);
    // Logged as SET key value (Redis's getsetCommand rewrites argv[0]).
    ctx.propagate_as(&[&b"SET"[..], args[1], args[2]]);
    Ok(())
}

/// GETDEL key — O(1).
fn getdel(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    reply_get(ctx, args[1], out)?;
    let now = ctx.now_ms;
    if ctx.db(args[1]).remove(args[1], now) {
        ctx.notify(notify::GENERIC, "del", args[1]);
        // Logged as the deletion itself (DEL, or UNLINK under lazyfree-lazy-user-del).
        let del = super::deletion_command(ctx, "lazyfree-lazy-user-del");
        ctx.propagate_as(&[del, args[1]]);
    }
    Ok(())
}

/// GETEX key [EX s|PX ms|EXAT ts|PXAT ts-ms|PERSIST] — O(1).
fn getex(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let opts = parse_set_options(args, 2, OptionsFor::GetEx)?;
    let (key, now) = (args[1], ctx.now_ms);
    let value = match ctx.db(key).get(key, now) {
        None => None,
        Some(entry) => Some(as_str(entry)?.clone()),
    };
    ctx.hit(key, value.is_some());
    let Some(value) = value else {
        out.null();
        return Ok(());
    };
    let expire_at = match opts.expire {
        Some((unit, pos)) => Some((unit, absolute_expire_ms(args[pos], unit, now)?)),
        None => None,
    };
    reply_str(out, &value);
    let obeying = ctx.obeying();
    let db = ctx.db(key);
    match expire_at {
        // GETEX is never logged as is: as DEL/UNLINK, PEXPIREAT or PERSIST (getexCommand).
        Some((ExpireUnit::ExAt | ExpireUnit::PxAt, at)) if at <= now && !obeying => {
            db.remove_for(key, now, crate::lazyfree::LAZY_EXPIRE);
            ctx.notify(notify::GENERIC, "del", key);
            let del = super::deletion_command(ctx, "lazyfree-lazy-expire");
            ctx.propagate_as(&[del, key]);
        }
        Some((_, at)) => {
            db.set_expire(key, at, now);
            ctx.notify(notify::GENERIC, "expire", key);
            ctx.propagate_as(&[&b"PEXPIREAT"[..], key, at.to_string().as_bytes()]);
        }
        None if opts.persist && db.persist(key, now) => {
            ctx.notify(notify::GENERIC, "persist", key);
            ctx.propagate_as(&[&b"PERSIST"[..], key]);
        }
        None => {}
    }
    Ok(())
}

/// MGET key [key ...] — O(N); non-strings read as null.
fn mget(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    out.array(args.len() - 1);
    for key in &args[1..] {
        let found = match ctx.db(key).get(key, now) {
            Some(Entry { value: Value::Str(s), .. }) => {
                reply_str(out, s);
                true
            }
            // A key of another type is a hit that reads as null, as in Redis.
            Some(_) => {
                out.null();
                true
            }
            None => {
                out.null();
                false
            }
        };
        ctx.hit(key, found);
    }
    Ok(())
}

/// MSET key value [key value ...] — O(N).
fn mset(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len().is_multiple_of(2) {
        return Err(CmdError::msg(format!("ERR wrong number of arguments for '{}' command", ctx.spec.name)));
    }
    let now = ctx.now_ms;
    for pair in args[1..].chunks_exact(2) {
        ctx.db(pair[0]).set(pair[0], Value::string(pair[1]), TtlOnWrite::Clear, now);
        ctx.notify(notify::STRING, "set", pair[0]);
    }
    out.simple("OK");
    Ok(())
}

/// MSETNX key value [key value ...] — O(N): all or nothing.
fn msetnx(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len().is_multiple_of(2) {
        return Err(CmdError::msg(format!("ERR wrong number of arguments for '{}' command", ctx.spec.name)));
    }
    let now = ctx.now_ms;
    if args[1..].chunks_exact(2).any(|pair| ctx.db(pair[0]).contains(pair[0], now)) {
        out.integer(0);
        return Ok(());
    }
    for pair in args[1..].chunks_exact(2) {
        ctx.db(pair[0]).set(pair[0], Value::string(pair[1]), TtlOnWrite::Clear, now);
        ctx.notify(notify::STRING, "set", pair[0]);
    }
    out.integer(1);
    Ok(())
}

/// APPEND key value — O(1) amortized.
fn append(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (key, value, now) = (args[1], args[2], ctx.now_ms);
    let current_len = match ctx.db(key).get(key, now) {
        None => None,
        Some(entry) => Some(as_str(entry)?.len()),
    };
    let new_len = match current_len {
        None => {
            ctx.db(key).set(key, Value::string(value), TtlOnWrite::Clear, now);
            value.len()
        }
        Some(len) => {
            check_string_length(ctx, len as u64, value.len() as u64)?;
            let entry = ctx.db(key).get_mut(key, now).expect("looked up above");
            let bytes = as_str_mut(entry)?.make_raw();
            bytes.extend_from_slice(value);
            let len = bytes.len();
            ctx.dirty(1);
            len
        }
    };
    ctx.notify(notify::STRING, "append", key);
    out.integer(new_len as i64);
    Ok(())
}

/// STRLEN key — O(1).
fn strlen(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (engine, now) = (ctx.engine, ctx.now_ms);
    let entry = ctx.db(args[1]).get_read(args[1], now);
    crate::exec::count_hit(engine, entry.is_some());
    let len = match entry {
        None => 0,
        Some(entry) => as_str(entry)?.len(),
    };
    out.integer(len as i64);
    Ok(())
}

/// GETRANGE key start end (and its old name SUBSTR) — O(N) in the returned length.
fn getrange(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut start = parse_i64(args[2])?;
    let mut end = parse_i64(args[3])?;
    let (engine, now) = (ctx.engine, ctx.now_ms);
    let entry = ctx.db(args[1]).get_read(args[1], now);
    crate::exec::count_hit(engine, entry.is_some());
    let Some(entry) = entry else {
        out.bulk(b"");
        return Ok(());
    };
    let value = as_str(entry)?.as_bytes();
    let len = value.len() as i64;
    if start < 0 && end < 0 && start > end {
        out.bulk(b"");
        return Ok(());
    }
    if start < 0 {
        start += len;
    }
    if end < 0 {
        end += len;
    }
    start = start.max(0);
    end = end.max(0).min(len - 1);
    if start > end || len == 0 {
        out.bulk(b"");
    } else {
        out.bulk(&value[start as usize..=end as usize]);
    }
    Ok(())
}

/// SETRANGE key offset value — O(1) plus the copy.
fn setrange(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let offset = parse_i64(args[2])?;
    if offset < 0 {
        return Err(CmdError::msg("ERR offset is out of range"));
    }
    let (key, value, now) = (args[1], args[3], ctx.now_ms);
    let offset = offset as u64;
    let current_len = match ctx.db(key).get(key, now) {
        None => None,
        Some(entry) => Some(as_str(entry)?.len()),
    };
    if value.is_empty() {
        out.integer(current_len.unwrap_or(0) as i64);
        return Ok(());
    }
    check_string_length(ctx, offset, value.len() as u64)?;
    let offset = offset as usize;
    let db = ctx.db(key);
    if current_len.is_none() {
        db.set(key, Value::Str(StrValue::Raw(Box::default())), TtlOnWrite::Clear, now);
    }
    let entry = db.get_mut(key, now).expect("present");
    let bytes = as_str_mut(entry)?.make_raw();
    if bytes.len() < offset + value.len() {
        bytes.resize(offset + value.len(), 0);
    }
    bytes[offset..offset + value.len()].copy_from_slice(value);
    out.integer(bytes.len() as i64);
    if current_len.is_some() {
        ctx.dirty(1);
    }
    ctx.notify(notify::STRING, "setrange", key);
    Ok(())
}

/// INCRBYFLOAT key increment — O(1), computed in extended precision as Redis's long double.
fn incrbyfloat(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (key, now) = (args[1], ctx.now_ms);
    let current = match ctx.db(key).get(key, now) {
        None => LongDouble::from_i64(0),
        Some(entry) => {
            let s = as_str(entry)?;
            match s {
                StrValue::Int(n) => LongDouble::from_i64(*n),
                _ => LongDouble::parse(&s.as_bytes()).ok_or_else(|| CmdError::msg("ERR value is not a valid float"))?,
            }
        }
    };
    let incr = LongDouble::parse(args[2]).ok_or_else(|| CmdError::msg("ERR value is not a valid float"))?;
    let value = current + incr;
    if value.is_nan() || value.is_infinite() {
        return Err(CmdError::msg("ERR increment would produce NaN or Infinity"));
    }
    let text = value.to_human_string().ok_or_else(|| CmdError::msg("ERR increment would produce NaN or Infinity"))?;
    ctx.db(key).set(key, Value::Str(StrValue::created(text.clone().into_bytes())), TtlOnWrite::Keep, now);
    ctx.notify(notify::STRING, "incrbyfloat", key);
    out.bulk(text.as_bytes());
    // Logged as SET key <result> KEEPTTL, so float formatting never differs on replay.
    ctx.propagate_as(&[&b"SET"[..], key, text.as_bytes(), b"KEEPTTL"]);
    Ok(())
}

/// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN] — O(N*M).
fn lcs(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let mut strings: [Vec<u8>; 2] = Default::default();
    for (i, key) in args[1..3].iter().enumerate() {
        if let Some(entry) = ctx.db(key).get(key, now) {
            strings[i] = as_str(entry)
                .map_err(|_| CmdError::msg("ERR The specified keys must contain string values"))?
                .as_bytes()
                .into_owned();
        }
    }
    let (mut get_len, mut get_idx, mut with_match_len, mut min_match_len) = (false, false, false, 0i64);
    let mut j = 3;
    while j < args.len() {
        let more = j + 1 < args.len();
        if is(args[j], "IDX") {
            get_idx = true;
        } else if is(args[j], "LEN") {
            get_len = true;
        } else if is(args[j], "WITHMATCHLEN") {
            with_match_len = true;
        } else if is(args[j], "MINMATCHLEN") && more {
            min_match_len = parse_i64(args[j + 1])?.max(0);
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    if get_len && get_idx {
        return Err(CmdError::msg("ERR If you want both the length and indexes, please just use IDX."));
    }
    let (a, b) = (&strings[0], &strings[1]);
    let cells = (a.len() as u64 + 1) * (b.len() as u64 + 1);
    let max = ctx.engine.config.read().get_u64("proto-max-bulk-len");
    if cells.saturating_mul(4) > max {
        return Err(CmdError::msg("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"));
    }
    let result = lcs_table(a, b);
    if get_len {
        out.integer(result.len as i64);
        return Ok(());
    }
    if !get_idx {
        out.bulk(&result.string);
        return Ok(());
    }
    let matches: Vec<&LcsMatch> = result.matches.iter().filter(|m| m.len as i64 >= min_match_len).collect();
    out.map(2);
    out.bulk(b"matches");
    out.array(matches.len());
    for m in matches {
        out.array(2 + usize::from(with_match_len));
        out.array(2);
        out.integer(m.a.0 as i64);
        out.integer(m.a.1 as i64);
        out.array(2);
        out.integer(m.b.0 as i64);
        out.integer(m.b.1 as i64);
        if with_match_len {
            out.integer(m.len as i64);
        }
    }
    out.bulk(b"len");
    out.integer(result.len as i64);
    Ok(())
}

struct LcsMatch {
    a: (usize, usize),
    b: (usize, usize),
    len: usize,
}

struct LcsResult {
    len: usize,
    string: Vec<u8>,
    /// Contiguous matching ranges, from the end of the strings backwards (Redis's order).
    matches: Vec<LcsMatch>,
}

/// The classic dynamic-programming LCS, walked back from the end preferring to drop a byte
/// of `b` on ties, so ranges come out exactly as Redis reports them.
fn lcs_table(a: &[u8], b: &[u8]) -> LcsResult {
    let w = b.len() + 1;
    let mut t = vec![0u32; (a.len() + 1) * w];
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            t[i * w + j] = if a[i - 1] == b[j - 1] {
                t[(i - 1) * w + j - 1] + 1
            } else {
                t[(i - 1) * w + j].max(t[i * w + j - 1])
            };
        }
    }
    let len = t[a.len() * w + b.len()] as usize;
    let mut string = vec![0u8; len];
    let mut matches = Vec::new();
    let (mut i, mut j, mut idx) = (a.len(), b.len(), len);
    let mut current: Option<LcsMatch> = None;
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            string[idx - 1] = a[i - 1];
            match &mut current {
                None => current = Some(LcsMatch { a: (i - 1, i - 1), b: (j - 1, j - 1), len: 1 }),
                Some(m) if m.a.0 == i && m.b.0 == j => {
                    m.a.0 -= 1;
                    m.b.0 -= 1;
                    m.len += 1;
                }
                Some(_) => emit = true,
            }
            if current.as_ref().is_some_and(|m| m.a.0 == 0 || m.b.0 == 0) {
                emit = true;
            }
            idx -= 1;
            i -= 1;
            j -= 1;
        } else {
            if t[(i - 1) * w + j] > t[i * w + j - 1] {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = current.is_some();
        }
        if emit {
            matches.extend(current.take());
        }
    }
    LcsResult { len, string, matches }
}

/// The shared body of INCR, DECR, INCRBY and DECRBY (Redis's `incrDecrCommand`): the TTL
/// is kept, a missing key counts as 0.
fn incr_by(ctx: &mut Ctx<'_>, key: &[u8], delta: i64, out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let db = ctx.db(key);
    let current = match db.get(key, now) {
        None => 0,
        Some(entry) => as_str(entry)?.as_i64().ok_or(CmdError::NotInteger)?,
    };
    let value = current.checked_add(delta).ok_or_else(|| CmdError::msg("ERR increment or decrement would overflow"))?;
    db.set(key, Value::Str(StrValue::Int(value)), TtlOnWrite::Keep, now);
    ctx.notify(notify::STRING, "incrby", key);
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
        CommandSpec::new("setnx", 3, "write denyoom fast", "string", setnx)
            .doc("string", "1.0.0", "Set the value of a key, only if the key does not exist", "O(1)")
            .keys("OW insert", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0), ArgDoc::new("value", ArgType::String)]),
        CommandSpec::new("setex", 4, "write denyoom", "string", setex)
            .doc("string", "2.0.0", "Set the value and expiration of a key", "O(1)")
            .keys("OW update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("seconds", ArgType::Integer),
                ArgDoc::new("value", ArgType::String),
            ]),
        CommandSpec::new("psetex", 4, "write denyoom", "string", psetex)
            .doc("string", "2.6.0", "Set the value and expiration in milliseconds of a key", "O(1)")
            .keys("OW update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("milliseconds", ArgType::Integer),
                ArgDoc::new("value", ArgType::String),
            ]),
        CommandSpec::new("getset", 3, "write denyoom fast", "string", getset)
            .doc("string", "1.0.0", "Set the string value of a key and return its old value", "O(1)")
            .deprecated("6.2.0", "`SET` with the `!GET` argument")
            .keys("RW access update", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0), ArgDoc::new("value", ArgType::String)]),
        CommandSpec::new("getdel", 2, "write fast", "string", getdel)
            .doc("string", "6.2.0", "Get the value of a key and delete the key", "O(1)")
            .keys("RW access delete", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0)]),
        CommandSpec::new("getex", -2, "write fast", "string", getex)
            .doc("string", "6.2.0", "Get the value of a key and optionally set its expiration", "O(1)")
            .keys("RW access update", 1, 0, 1)
            .key_notes("RW and UPDATE because it changes the TTL")
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::one_of(
                    "expiration",
                    vec![
                        ArgDoc::new("seconds", ArgType::Integer).after("EX"),
                        ArgDoc::new("milliseconds", ArgType::Integer).after("PX"),
                        ArgDoc::new("unix-time-seconds", ArgType::UnixTime).after("EXAT"),
                        ArgDoc::new("unix-time-milliseconds", ArgType::UnixTime).after("PXAT"),
                        ArgDoc::token("persist", "PERSIST"),
                    ],
                )
                .optional(),
            ]),
        CommandSpec::new("mget", -2, "readonly fast", "string", mget)
            .doc("string", "1.0.0", "Get the values of all the given keys", "O(N) where N is the number of keys to retrieve.")
            .tips(&["request_policy:multi_shard"])
            .keys("RO access", 1, -1, 1)
            .args(vec![ArgDoc::key("key", 0).multiple()]),
        CommandSpec::new("mset", -3, "write denyoom", "string", mset)
            .doc("string", "1.0.1", "Set multiple keys to multiple values", "O(N) where N is the number of keys to set.")
            .tips(&["request_policy:multi_shard", "response_policy:all_succeeded"])
            .keys("OW update", 1, -1, 2)
            .args(vec![ArgDoc::block(
                "key_value",
                vec![ArgDoc::key("key", 0), ArgDoc::new("value", ArgType::String)],
            )
            .multiple()]),
        CommandSpec::new("msetnx", -3, "write denyoom", "string", msetnx)
            .doc("string", "1.0.1", "Set multiple keys to multiple values, only if none of the keys exist", "O(N) where N is the number of keys to set.")
            .tips(&["request_policy:multi_shard", "response_policy:agg_min"])
            .keys("OW insert", 1, -1, 2)
            .args(vec![ArgDoc::block(
                "key_value",
                vec![ArgDoc::key("key", 0), ArgDoc::new("value", ArgType::String)],
            )
            .multiple()]),
        CommandSpec::new("append", 3, "write denyoom fast", "string", append)
            .doc("string", "2.0.0", "Append a value to a key", "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.")
            .keys("RW insert", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0), ArgDoc::new("value", ArgType::String)]),
        CommandSpec::new("strlen", 2, "readonly fast", "string", strlen)
            .doc("string", "2.2.0", "Get the length of the value stored in a key", "O(1)")
            .keys("RO", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0)]),
        CommandSpec::new("getrange", 4, "readonly", "string", getrange)
            .doc("string", "2.4.0", "Get a substring of the string stored at a key", "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.")
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("start", ArgType::Integer),
                ArgDoc::new("end", ArgType::Integer),
            ]),
        CommandSpec::new("substr", 4, "readonly", "string", getrange)
            .doc("string", "1.0.0", "Get a substring of the string stored at a key", "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.")
            .deprecated("2.0.0", "`GETRANGE`")
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("start", ArgType::Integer),
                ArgDoc::new("end", ArgType::Integer),
            ]),
        CommandSpec::new("setrange", 4, "write denyoom", "string", setrange)
            .doc("string", "2.2.0", "Overwrite part of a string at key starting at the specified offset", "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.")
            .keys("RW update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("offset", ArgType::Integer),
                ArgDoc::new("value", ArgType::String),
            ]),
        CommandSpec::new("incrbyfloat", 3, "write denyoom fast", "string", incrbyfloat)
            .doc("string", "2.6.0", "Increment the float value of a key by the given amount", "O(1)")
            .keys("RW access update", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0), ArgDoc::new("increment", ArgType::Double)]),
        CommandSpec::new("lcs", -3, "readonly", "string", lcs)
            .doc("string", "7.0.0", "Find longest common substring", "O(N*M) where N and M are the lengths of s1 and s2, respectively")
            .keys("RO access", 1, 1, 1)
            .args(vec![
                ArgDoc::key("key1", 0),
                ArgDoc::key("key2", 0),
                ArgDoc::token("len", "LEN").optional(),
                ArgDoc::token("idx", "IDX").optional(),
                ArgDoc::new("len", ArgType::Integer).after("MINMATCHLEN").optional(),
                ArgDoc::token("withmatchlen", "WITHMATCHLEN").optional(),
            ]),
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
        parse_set_options(&all, 3, OptionsFor::Set)
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
