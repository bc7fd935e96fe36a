//! Set commands: membership (SADD SREM SISMEMBER SMISMEMBER SCARD SMEMBERS SMOVE), random
//! picks (SPOP SRANDMEMBER), the algebra (SINTER SINTERCARD SUNION SDIFF and their STORE
//! forms) and SSCAN. Also the helpers the hash family shares: keyspace hit accounting, the
//! per-command RNG, SCAN cursor and option parsing, and distinct random sampling.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::glob::glob_match;
use crate::keyspace::{Entry, Rng, TtlOnWrite, Value};
use crate::pubsub::notify;
use crate::reply::ReplySink;
use crate::types::{Bytes, SetValue};

use super::{is, parse_i64};

// ---------------------------------------------------------------------------------------
// Helpers shared with the hash family.

pub(crate) use crate::exec::count_hit;

/// Accounts Redis's `server.dirty += changes` for a command that also created or deleted
/// its key through `Db::set`/`Db::remove`, which count one change each by themselves.
pub(crate) fn add_dirty(ctx: &Ctx<'_>, changes: u64, counted_by_db: u64) {
    ctx.dirty(changes.saturating_sub(counted_by_db));
}

static RNG_SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// The random source of one command (SPOP, SRANDMEMBER, HRANDFIELD): seeded from the
/// injected clock, the client id and a process-wide sequence, so two commands in the same
/// microsecond still draw differently. Not for anything security-related.
pub(crate) fn command_rng(ctx: &Ctx<'_>) -> Rng {
    let sequence = RNG_SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let mut z = (ctx.engine.clock.now_us() as u64)
        ^ ctx.client.id.rotate_left(32)
        ^ sequence.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // splitmix64 finalizer: spreads nearby seeds over the whole state.
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    Rng::new(z ^ (z >> 31))
}

/// `count` distinct indices below `size` (count < size), uniformly at random. Like Redis,
/// when most of the collection is wanted it removes random ones instead of drawing.
pub(crate) fn distinct_indices(rng: &mut Rng, size: usize, count: usize) -> Vec<usize> {
    debug_assert!(count < size);
    if count * 3 > size {
        // Partial Fisher-Yates: the first `count` slots end up a uniform sample.
        let mut all: Vec<usize> = (0..size).collect();
        for i in 0..count {
            let j = i + rng.below(size - i);
            all.swap(i, j);
        }
        all.truncate(count);
        all
    } else {
        let mut picked = hashbrown::HashSet::with_capacity(count);
        let mut order = Vec::with_capacity(count);
        while order.len() < count {
            let i = rng.below(size);
            if picked.insert(i) {
                order.push(i);
            }
        }
        order
    }
}

/// A cursor of SCAN, SSCAN, HSCAN or ZSCAN as Redis's parseScanCursorOrReply reads it with
/// strtoul: optional sign (a negative value wraps), decimal digits, nothing after; leading
/// space or overflow is `invalid cursor`. The empty string is cursor 0.
pub(crate) fn parse_cursor(arg: &[u8]) -> Result<u64, CmdError> {
    let invalid = || CmdError::msg("ERR invalid cursor");
    // The argument is read as a C string: an embedded NUL ends it.
    let arg = &arg[..arg.iter().position(|&b| b == 0).unwrap_or(arg.len())];
    let Some(&first) = arg.first() else { return Ok(0) };
    if matches!(first, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        return Err(invalid());
    }
    let (negative, digits) = match first {
        b'-' => (true, &arg[1..]),
        b'+' => (false, &arg[1..]),
        _ => (false, arg),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(invalid());
    }
    let mut value: u64 = 0;
    for &d in digits {
        value = value.checked_mul(10).and_then(|v| v.checked_add(u64::from(d - b'0'))).ok_or_else(invalid)?;
    }
    Ok(if negative { value.wrapping_neg() } else { value })
}

/// HSCAN/SSCAN/ZSCAN options after the cursor: COUNT (at least 1) and MATCH.
pub(crate) struct ScanOptions<'a> {
    pub count: usize,
    pub pattern: Option<&'a [u8]>,
}

pub(crate) fn parse_scan_options<'a>(args: &[&'a [u8]]) -> Result<ScanOptions<'a>, CmdError> {
    let mut opts = ScanOptions { count: 10, pattern: None };
    let mut i = 0;
    while i < args.len() {
        let has_value = i + 1 < args.len();
        if is(args[i], "COUNT") && has_value {
            let n = parse_i64(args[i + 1])?;
            if n < 1 {
                return Err(CmdError::Syntax);
            }
            opts.count = usize::try_from(n).unwrap_or(usize::MAX);
        } else if is(args[i], "MATCH") && has_value {
            // "*" matches everything: the same as no pattern.
            opts.pattern = Some(args[i + 1]).filter(|p| *p != b"*");
        } else {
            return Err(CmdError::Syntax);
        }
        i += 2;
    }
    Ok(opts)
}

impl ScanOptions<'_> {
    pub fn matches(&self, element: &[u8]) -> bool {
        self.pattern.is_none_or(|p| glob_match(p, element, false))
    }
}

/// The `[cursor, [elements...]]` reply of an empty scan (missing key).
pub(crate) fn reply_empty_scan(out: &mut dyn ReplySink) {
    out.array(2);
    out.bulk(b"0");
    out.array(0);
}

/// An integer argument within `[min, max]`, with Redis's getRangeLongFromObjectOrReply
/// errors: the integer error, else `value is out of range, value must between ...`.
pub(crate) fn parse_range(arg: &[u8], min: i64, max: i64) -> Result<i64, CmdError> {
    let n = parse_i64(arg)?;
    if n < min || n > max {
        return Err(CmdError::msg(format!("ERR value is out of range, value must between {min} and {max}")));
    }
    Ok(n)
}

/// A count that must be zero or more; any bad input gets `message` (Redis's
/// getPositiveLongFromObjectOrReply with a message).
fn parse_positive(arg: &[u8], message: &str) -> Result<i64, CmdError> {
    parse_i64(arg).ok().filter(|n| *n >= 0).ok_or_else(|| CmdError::msg(message))
}

// ---------------------------------------------------------------------------------------
// Set lookups.

fn set_of(entry: &Entry) -> Result<&SetValue, CmdError> {
    match &entry.value {
        Value::Set(s) => Ok(s),
        _ => Err(CmdError::WrongType),
    }
}

/// lookupKeyRead for a set: records the access and a keyspace hit or miss.
fn read_set<'c>(ctx: &'c mut Ctx<'_>, key: &[u8]) -> Result<Option<&'c SetValue>, CmdError> {
    let (engine, now) = (ctx.engine, ctx.now_ms);
    let entry = ctx.db(key).get_read(key, now);
    count_hit(engine, entry.is_some());
    entry.map(set_of).transpose()
}

/// lookupKeyWrite for a set: records the access, no hit accounting.
fn write_set<'c>(ctx: &'c mut Ctx<'_>, key: &[u8]) -> Result<Option<&'c mut SetValue>, CmdError> {
    let now = ctx.now_ms;
    match ctx.db(key).get_mut(key, now) {
        None => Ok(None),
        Some(Entry { value: Value::Set(s), .. }) => Ok(Some(s)),
        Some(_) => Err(CmdError::WrongType),
    }
}

/// A set already looked up (and type-checked) by this command, read again without
/// recording another access.
fn peek_set<'c>(ctx: &'c mut Ctx<'_>, key: &[u8]) -> Option<&'c SetValue> {
    let now = ctx.now_ms;
    match ctx.db(key).peek(key, now) {
        Some(Entry { value: Value::Set(s), .. }) => Some(s),
        _ => None,
    }
}

/// Deletes `key` if its set became empty (Redis never keeps empty collections). True if
/// it did.
fn delete_if_empty(ctx: &mut Ctx<'_>, key: &[u8]) -> bool {
    let now = ctx.now_ms;
    let empty = peek_set(ctx, key).is_some_and(SetValue::is_empty);
    if empty {
        ctx.db(key).remove(key, now);
    }
    empty
}

fn reply_int_member(out: &mut dyn ReplySink, n: i64) {
    out.bulk(quince_resp::format_i64(n).as_bytes());
}

/// Every member of a set as a RESP3 set (a flat array in RESP2).
fn reply_members(out: &mut dyn ReplySink, set: &SetValue) {
    out.set(set.len());
    match set {
        SetValue::Intset(v) => v.iter().for_each(|n| reply_int_member(out, n)),
        SetValue::Small(_) => set.iter().for_each(|m| out.bulk(&m)),
        SetValue::Table(t) => t.iter().for_each(|m| out.bulk(m)),
    }
}

// ---------------------------------------------------------------------------------------
// Commands.

/// SADD key member [member ...] — O(1) per member.
fn sadd(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (key, now, limits) = (args[1], ctx.now_ms, ctx.limits());
    let (added, created) = match write_set(ctx, key)? {
        Some(set) => (args[2..].iter().filter(|m| set.add(m, &limits)).count(), false),
        None => {
            // Built whole, then stored: one lookup, as with Redis's dbAdd.
            let mut set = SetValue::new_for(args[2]);
            let added = args[2..].iter().filter(|m| set.add(m, &limits)).count();
            ctx.db(key).set(key, Value::Set(set), TtlOnWrite::Clear, now);
            (added, true)
        }
    };
    add_dirty(ctx, added as u64, u64::from(created));
    if added > 0 {
        ctx.notify(notify::SET, "sadd", key);
    }
    out.integer(added as i64);
    Ok(())
}

/// SREM key member [member ...] — O(1) per member.
fn srem(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let key = args[1];
    let Some(set) = write_set(ctx, key)? else {
        out.integer(0);
        return Ok(());
    };
    let mut removed = 0u64;
    for member in &args[2..] {
        if set.remove(member) {
            removed += 1;
            if set.is_empty() {
                break;
            }
        }
    }
    let deleted = delete_if_empty(ctx, key);
    add_dirty(ctx, removed, u64::from(deleted));
    if removed > 0 {
        ctx.notify(notify::SET, "srem", key);
    }
    if deleted {
        ctx.notify(notify::GENERIC, "del", key);
    }
    out.integer(removed as i64);
    Ok(())
}

/// SISMEMBER key member — O(1).
fn sismember(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let found = read_set(ctx, args[1])?.is_some_and(|s| s.contains(args[2]));
    out.integer(i64::from(found));
    Ok(())
}

/// SMISMEMBER key member [member ...] — O(N) in the members asked.
fn smismember(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let set = read_set(ctx, args[1])?;
    out.array(args.len() - 2);
    for member in &args[2..] {
        out.integer(i64::from(set.is_some_and(|s| s.contains(member))));
    }
    Ok(())
}

/// SCARD key — O(1).
fn scard(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let len = read_set(ctx, args[1])?.map_or(0, SetValue::len);
    out.integer(len as i64);
    Ok(())
}

/// SMOVE source destination member — O(1).
fn smove(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (src, dst, member, now, limits) = (args[1], args[2], args[3], ctx.now_ms, ctx.limits());
    // Redis looks both keys up (as writes: no hit accounting) before answering 0 for a
    // missing source, and checks their types only when the source exists.
    let src_found = ctx.db(src).get(src, now).map(|e| set_of(e).map(|s| s.contains(member)));
    let dst_found = ctx.db(dst).get(dst, now).map(|e| set_of(e).map(|s| s.contains(member)));
    let Some(in_src) = src_found.transpose()? else {
        out.integer(0);
        return Ok(());
    };
    let in_dst = dst_found.transpose()?;
    if src == dst || !in_src {
        out.integer(i64::from(in_src));
        return Ok(());
    }
    // Only what changes is written: a destination already holding the member is untouched.
    write_set(ctx, src)?.expect("checked above").remove(member);
    let src_deleted = delete_if_empty(ctx, src);
    ctx.notify(notify::SET, "srem", src);
    if src_deleted {
        ctx.notify(notify::GENERIC, "del", src);
    }
    let mut counted_by_db = u64::from(src_deleted);
    match in_dst {
        Some(true) => ctx.key_unmodified(2),
        Some(false) => {
            write_set(ctx, dst)?.expect("checked above").add(member, &limits);
        }
        None => {
            let mut set = SetValue::new_for(member);
            set.add(member, &limits);
            ctx.db(dst).set(dst, Value::Set(set), TtlOnWrite::Clear, now);
            counted_by_db += 1;
        }
    }
    add_dirty(ctx, 1 + u64::from(in_dst != Some(true)), counted_by_db);
    if in_dst != Some(true) {
        ctx.notify(notify::SET, "sadd", dst);
    }
    out.integer(1);
    Ok(())
}

/// SPOP key [count] — O(1) per popped member.
fn spop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len() == 3 {
        return spop_count(ctx, args, out);
    }
    if args.len() > 3 {
        return Err(CmdError::Syntax);
    }
    let key = args[1];
    let mut rng = command_rng(ctx);
    let Some(set) = write_set(ctx, key)? else {
        out.null();
        return Ok(());
    };
    let member = set.take_index(rng.below(set.len()));
    out.bulk(&member);
    // The random choice is logged as the removal it made: SREM key member.
    ctx.propagate_as(&[&b"SREM"[..], key, &member]);
    let deleted = delete_if_empty(ctx, key);
    add_dirty(ctx, 1, u64::from(deleted));
    ctx.notify(notify::SET, "spop", key);
    if deleted {
        ctx.notify(notify::GENERIC, "del", key);
    }
    Ok(())
}

/// SPOP key count: `count` distinct random members, removed; the reply is a set.
fn spop_count(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let count = parse_positive(args[2], "ERR value is out of range, must be positive")? as usize;
    let (key, now, limits) = (args[1], ctx.now_ms, ctx.limits());
    let mut rng = command_rng(ctx);
    let engine = ctx.engine;
    let propagating = ctx.propagating();
    let Some(set) = write_set(ctx, key)? else {
        out.set(0);
        return Ok(());
    };
    let size = set.len();
    if count == 0 {
        out.set(0);
        return Ok(());
    }
    if count >= size {
        // Redis answers with SUNION of the key (one more keyspace lookup) and deletes it.
        count_hit(engine, true);
        let mut all = SetValue::default();
        for member in set.iter() {
            all.add(&member, &limits);
        }
        reply_members(out, &all);
        ctx.db(key).remove(key, now);
        add_dirty(ctx, size as u64, 1);
        // Popping everything is logged as DEL key (Redis's spopWithCountCommand).
        ctx.propagate_as(&[&b"DEL"[..], key]);
        ctx.notify(notify::SET, "spop", key);
        ctx.notify(notify::GENERIC, "del", key);
        return Ok(());
    }
    let remaining = size - count;
    out.set(count);
    // Each popped member is logged as SREM key member (wrapped in MULTI/EXEC as one
    // command's effects), in reply order.
    let mut popped: Vec<Bytes> = Vec::new();
    // Like Redis: pop random members while few are wanted, else draw the ones that stay
    // and rebuild the set from them (which may change its encoding back to an intset).
    if remaining * 5 > count {
        let picked: Vec<Bytes> =
            distinct_indices(&mut rng, size, count).into_iter().map(|i| set.get_index(i).into_owned().into()).collect();
        for member in &picked {
            set.remove(member);
            out.bulk(member);
        }
        if propagating {
            popped = picked;
        }
    } else {
        let keep: Vec<Bytes> = distinct_indices(&mut rng, size, remaining)
            .into_iter()
            .map(|i| set.get_index(i).into_owned().into())
            .collect();
        let mut kept = SetValue::new_for(&keep[0]);
        for member in &keep {
            set.remove(member);
            kept.add(member, &limits);
        }
        match &*set {
            SetValue::Intset(v) => v.iter().for_each(|n| reply_int_member(out, n)),
            SetValue::Small(_) => set.iter().for_each(|m| out.bulk(&m)),
            SetValue::Table(t) => t.iter().for_each(|m| out.bulk(m)),
        }
        if propagating {
            popped = match &*set {
                SetValue::Intset(v) => v.iter().map(|n| Bytes::from(n.to_string().into_bytes())).collect(),
                SetValue::Small(_) | SetValue::Table(_) => set.iter().map(|m| Bytes::from(m.to_vec())).collect(),
            };
        }
        *set = kept;
    }
    for member in &popped {
        ctx.propagate_as(&[&b"SREM"[..], key, &member[..]]);
    }
    ctx.dirty(count as u64);
    ctx.notify(notify::SET, "spop", key);
    Ok(())
}

/// SRANDMEMBER key [count] — O(N) in the count.
fn srandmember(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len() == 3 {
        return srandmember_count(ctx, args, out);
    }
    if args.len() > 3 {
        return Err(CmdError::Syntax);
    }
    let mut rng = command_rng(ctx);
    match read_set(ctx, args[1])? {
        None => out.null(),
        Some(set) => out.bulk(&set.get_index(rng.below(set.len()))),
    }
    Ok(())
}

/// SRANDMEMBER key count: distinct members for a positive count, repeats allowed for a
/// negative one; always an array.
fn srandmember_count(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let n = parse_range(args[2], -i64::MAX, i64::MAX)?;
    let mut rng = command_rng(ctx);
    let Some(set) = read_set(ctx, args[1])? else {
        out.array(0);
        return Ok(());
    };
    let (count, unique) = (n.unsigned_abs() as usize, n >= 0);
    let size = set.len();
    if count == 0 {
        out.array(0);
    } else if !unique || count == 1 {
        out.array(count);
        if let SetValue::Small(_) = set {
            // Picking by index walks a packed set: list its members once.
            let members: Vec<_> = set.iter().collect();
            for _ in 0..count {
                out.bulk(&members[rng.below(size)]);
            }
        } else {
            for _ in 0..count {
                out.bulk(&set.get_index(rng.below(size)));
            }
        }
    } else if count >= size {
        out.array(size);
        set.iter().for_each(|m| out.bulk(&m));
    } else {
        out.array(count);
        for i in distinct_indices(&mut rng, size, count) {
            out.bulk(&set.get_index(i));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The set algebra. Handlers cannot hold two keys' sets at once (each lookup borrows the
// context), so each operation reads the sources one at a time into a local result.

/// Looks every source up as lookupKeyRead does (hits, access, WRONGTYPE on any of them,
/// even after a missing one) and returns their sizes; None for a missing key.
fn source_sizes(ctx: &mut Ctx<'_>, keys: &[&[u8]]) -> Result<Vec<Option<usize>>, CmdError> {
    keys.iter().map(|key| Ok(read_set(ctx, key)?.map(SetValue::len))).collect()
}

/// The intersection of the sets at `keys`, in the order of the smallest one; None when a
/// key is missing (an empty result). Redis's sinterGenericCommand.
fn intersect(ctx: &mut Ctx<'_>, keys: &[&[u8]]) -> Result<Option<Vec<Bytes>>, CmdError> {
    let sizes = source_sizes(ctx, keys)?;
    let Some(sizes) = sizes.into_iter().collect::<Option<Vec<usize>>>() else { return Ok(None) };
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| sizes[i]);
    let first = keys[order[0]];
    let mut members: Vec<Bytes> =
        peek_set(ctx, first).expect("looked up").iter().map(|m| m.into_owned().into_boxed_slice()).collect();
    for &j in &order[1..] {
        if members.is_empty() {
            break;
        }
        if keys[j] == first {
            continue;
        }
        let other = peek_set(ctx, keys[j]).expect("looked up");
        members.retain(|m| other.contains(m));
    }
    Ok(Some(members))
}

/// SINTER key [key ...] and SMEMBERS key — O(N*M) worst case.
fn sinter(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let members = intersect(ctx, &args[1..])?.unwrap_or_default();
    out.set(members.len());
    members.iter().for_each(|m| out.bulk(m));
    Ok(())
}

/// SMEMBERS key — O(N): SINTER of one key, as in Redis.
fn smembers(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    match read_set(ctx, args[1])? {
        None => out.set(0),
        Some(set) => reply_members(out, set),
    }
    Ok(())
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit] — O(N*M) worst case.
fn sintercard(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let numkeys = parse_i64(args[1])
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| CmdError::msg("ERR numkeys should be greater than 0"))?;
    if numkeys > (args.len() - 2) as i64 {
        return Err(CmdError::msg("ERR Number of keys can't be greater than number of args"));
    }
    let numkeys = numkeys as usize;
    let mut limit = 0usize;
    let mut j = 2 + numkeys;
    while j < args.len() {
        if is(args[j], "LIMIT") && j + 1 < args.len() {
            j += 1;
            limit = parse_positive(args[j], "ERR LIMIT can't be negative")? as usize;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    let found = intersect(ctx, &args[2..2 + numkeys])?.map_or(0, |m| m.len());
    out.integer(if limit > 0 { found.min(limit) } else { found } as i64);
    Ok(())
}

/// Stores `result` at `dst` (replacing any value, clearing its TTL) or deletes `dst` when
/// it is empty; replies with its size.
fn store(ctx: &mut Ctx<'_>, dst: &[u8], result: SetValue, out: &mut dyn ReplySink, event: &str) {
    let now = ctx.now_ms;
    let len = result.len();
    let db = ctx.db(dst);
    if len > 0 {
        db.set(dst, Value::Set(result), TtlOnWrite::Clear, now);
        ctx.notify(notify::SET, event, dst);
    } else if db.remove(dst, now) {
        ctx.notify(notify::GENERIC, "del", dst);
    }
    out.integer(len as i64);
}

/// SINTERSTORE destination key [key ...] — O(N*M) worst case.
fn sinterstore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let limits = ctx.limits();
    let members = intersect(ctx, &args[2..])?.unwrap_or_default();
    // The result starts as an intset whatever the sources are, as in Redis.
    let mut result = SetValue::default();
    for m in &members {
        result.add(m, &limits);
    }
    store(ctx, args[1], result, out, "sinterstore");
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algebra {
    Union,
    Diff,
}

/// SUNION and SDIFF (Redis's sunionDiffGenericCommand): the result set, built by adding
/// to an intset as Redis does, so its encoding (for the STORE forms) is Redis's too.
fn union_or_diff(ctx: &mut Ctx<'_>, keys: &[&[u8]], op: Algebra) -> Result<SetValue, CmdError> {
    let limits = ctx.limits();
    let sizes = source_sizes(ctx, keys)?;
    let mut result = SetValue::default();
    match op {
        Algebra::Union => {
            for (key, size) in keys.iter().zip(&sizes) {
                if size.is_some() {
                    for m in peek_set(ctx, key).expect("looked up").iter() {
                        result.add(&m, &limits);
                    }
                }
            }
        }
        Algebra::Diff => {
            let Some(first_size) = sizes[0] else { return Ok(result) };
            // The same key given again as a later source: nothing is left.
            if sizes.iter().enumerate().skip(1).any(|(j, s)| s.is_some() && keys[j] == keys[0]) {
                return Ok(result);
            }
            let present = sizes.iter().flatten().count() as u64;
            let one_work = present * first_size as u64 / 2;
            let two_work: u64 = sizes.iter().flatten().map(|&s| s as u64).sum();
            if one_work <= two_work {
                // Algorithm 1: members of the first set found in no other set.
                let mut members: Vec<Bytes> =
                    peek_set(ctx, keys[0]).expect("looked up").iter().map(|m| m.into_owned().into()).collect();
                for (key, size) in keys.iter().zip(&sizes).skip(1) {
                    if size.is_some() && !members.is_empty() {
                        let other = peek_set(ctx, key).expect("looked up");
                        members.retain(|m| !other.contains(m));
                    }
                }
                for m in &members {
                    result.add(m, &limits);
                }
            } else {
                // Algorithm 2: all of the first set, then remove every other set's members.
                for m in peek_set(ctx, keys[0]).expect("looked up").iter() {
                    result.add(&m, &limits);
                }
                for (key, size) in keys.iter().zip(&sizes).skip(1) {
                    if result.is_empty() {
                        break;
                    }
                    if size.is_some() {
                        for m in peek_set(ctx, key).expect("looked up").iter() {
                            result.remove(&m);
                        }
                    }
                }
            }
        }
    }
    Ok(result)
}

/// SUNION key [key ...] — O(N) in all members.
fn sunion(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let result = union_or_diff(ctx, &args[1..], Algebra::Union)?;
    reply_members(out, &result);
    Ok(())
}

/// SUNIONSTORE destination key [key ...] — O(N) in all members.
fn sunionstore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let result = union_or_diff(ctx, &args[2..], Algebra::Union)?;
    store(ctx, args[1], result, out, "sunionstore");
    Ok(())
}

/// SDIFF key [key ...] — O(N) in all members.
fn sdiff(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let result = union_or_diff(ctx, &args[1..], Algebra::Diff)?;
    reply_members(out, &result);
    Ok(())
}

/// SDIFFSTORE destination key [key ...] — O(N) in all members.
fn sdiffstore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let result = union_or_diff(ctx, &args[2..], Algebra::Diff)?;
    store(ctx, args[1], result, out, "sdiffstore");
    Ok(())
}

/// SSCAN key cursor [MATCH pattern] [COUNT count]: COUNT members visited per call (see
/// `types::set::scan_positions`).
fn sscan(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let cursor = parse_cursor(args[2])?;
    let Some(set) = read_set(ctx, args[1])? else {
        reply_empty_scan(out);
        return Ok(());
    };
    let opts = parse_scan_options(&args[3..])?;
    let page = set.scan(cursor, opts.count);
    let members: Vec<_> = page.items.iter().filter(|m| opts.matches(m)).collect();
    out.array(2);
    out.bulk(page.next.to_string().as_bytes());
    out.array(members.len());
    members.iter().for_each(|m| out.bulk(m));
    Ok(())
}

// ---------------------------------------------------------------------------------------

pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::new("sadd", -3, "write denyoom fast", "set", sadd)
            .doc("set", "1.0.0", "Add one or more members to a set", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
            .history(&[("2.4.0", "Accepts multiple `member` arguments.")])
            .keys("RW insert", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("member", ArgType::String).multiple(),
            ]),
        CommandSpec::new("scard", 2, "readonly fast", "set", scard)
            .doc("set", "1.0.0", "Get the number of members in a set", "O(1)")
            .keys("RO", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
            ]),
        CommandSpec::new("sdiff", -2, "readonly", "set", sdiff)
            .doc("set", "1.0.0", "Subtract multiple sets", "O(N) where N is the total number of elements in all given sets.")
            .tips(&["nondeterministic_output_order"])
            .keys("RO access", 1, -1, 1)
            .args(vec![
                ArgDoc::key("key", 0).multiple(),
            ]),
        CommandSpec::new("sdiffstore", -3, "write denyoom", "set", sdiffstore)
            .doc("set", "1.0.0", "Subtract multiple sets and store the resulting set in a key", "O(N) where N is the total number of elements in all given sets.")
            .keys("OW update", 1, 0, 1)
            .keys("RO access", 2, -1, 1)
            .args(vec![
                ArgDoc::key("destination", 0),
                ArgDoc::key("key", 1).multiple(),
            ]),
        CommandSpec::new("sinter", -2, "readonly", "set", sinter)
            .doc("set", "1.0.0", "Intersect multiple sets", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
            .tips(&["nondeterministic_output_order"])
            .keys("RO access", 1, -1, 1)
            .args(vec![
                ArgDoc::key("key", 0).multiple(),
            ]),
        CommandSpec::new("sintercard", -3, "readonly", "set", sintercard)
            .doc("set", "7.0.0", "Intersect multiple sets and return the cardinality of the result", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
            .keys_keynum("RO access", 1, 0, 1, 1)
            .args(vec![
                ArgDoc::new("numkeys", ArgType::Integer),
                ArgDoc::key("key", 0).multiple(),
                ArgDoc::new("limit", ArgType::Integer).after("LIMIT").optional(),
            ]),
        CommandSpec::new("sinterstore", -3, "write denyoom", "set", sinterstore)
            .doc("set", "1.0.0", "Intersect multiple sets and store the resulting set in a key", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
            .keys("RW update", 1, 0, 1)
            .keys("RO access", 2, -1, 1)
            .args(vec![
                ArgDoc::key("destination", 0),
                ArgDoc::key("key", 1).multiple(),
            ]),
        CommandSpec::new("sismember", 3, "readonly fast", "set", sismember)
            .doc("set", "1.0.0", "Determine if a given value is a member of a set", "O(1)")
            .keys("RO", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("member", ArgType::String),
            ]),
        CommandSpec::new("smembers", 2, "readonly", "set", smembers)
            .doc("set", "1.0.0", "Get all the members in a set", "O(N) where N is the set cardinality.")
            .tips(&["nondeterministic_output_order"])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
            ]),
        CommandSpec::new("smismember", -3, "readonly fast", "set", smismember)
            .doc("set", "6.2.0", "Returns the membership associated with the given elements for a set", "O(N) where N is the number of elements being checked for membership")
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("member", ArgType::String).multiple(),
            ]),
        CommandSpec::new("smove", 4, "write fast", "set", smove)
            .doc("set", "1.0.0", "Move a member from one set to another", "O(1)")
            .keys("RW access delete", 1, 0, 1)
            .keys("RW insert", 2, 0, 1)
            .args(vec![
                ArgDoc::key("source", 0),
                ArgDoc::key("destination", 1),
                ArgDoc::new("member", ArgType::String),
            ]),
        CommandSpec::new("spop", -2, "write fast", "set", spop)
            .doc("set", "1.0.0", "Remove and return one or multiple random members from a set", "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.")
            .history(&[("3.2.0", "Added the `count` argument.")])
            .tips(&["nondeterministic_output"])
            .keys("RW access delete", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("count", ArgType::Integer).optional().since("3.2.0"),
            ]),
        CommandSpec::new("srandmember", -2, "readonly", "set", srandmember)
            .doc("set", "1.0.0", "Get one or multiple random members from a set", "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.")
            .history(&[("2.6.0", "Added the optional `count` argument.")])
            .tips(&["nondeterministic_output"])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("count", ArgType::Integer).optional().since("2.6.0"),
            ]),
        CommandSpec::new("srem", -3, "write fast", "set", srem)
            .doc("set", "1.0.0", "Remove one or more members from a set", "O(N) where N is the number of members to be removed.")
            .history(&[("2.4.0", "Accepts multiple `member` arguments.")])
            .keys("RW delete", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("member", ArgType::String).multiple(),
            ]),
        CommandSpec::new("sscan", -3, "readonly", "set", sscan)
            .doc("set", "2.8.0", "Incrementally iterate Set elements", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..")
            .tips(&["nondeterministic_output"])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("cursor", ArgType::Integer),
                ArgDoc::new("pattern", ArgType::Pattern).after("MATCH").optional(),
                ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
            ]),
        CommandSpec::new("sunion", -2, "readonly", "set", sunion)
            .doc("set", "1.0.0", "Add multiple sets", "O(N) where N is the total number of elements in all given sets.")
            .tips(&["nondeterministic_output_order"])
            .keys("RO access", 1, -1, 1)
            .args(vec![
                ArgDoc::key("key", 0).multiple(),
            ]),
        CommandSpec::new("sunionstore", -3, "write denyoom", "set", sunionstore)
            .doc("set", "1.0.0", "Add multiple sets and store the resulting set in a key", "O(N) where N is the total number of elements in all given sets.")
            .keys("OW update", 1, 0, 1)
            .keys("RO access", 2, -1, 1)
            .args(vec![
                ArgDoc::key("destination", 0),
                ArgDoc::key("key", 1).multiple(),
            ]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_like_strtoul() {
        assert_eq!(parse_cursor(b"0"), Ok(0));
        assert_eq!(parse_cursor(b""), Ok(0));
        assert_eq!(parse_cursor(b"+7"), Ok(7));
        assert_eq!(parse_cursor(b"-1"), Ok(u64::MAX));
        assert_eq!(parse_cursor(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_cursor(b"12\x00junk"), Ok(12));
        for bad in [&b"18446744073709551616"[..], b" 1", b"1 ", b"-", b"+", b"0x10", b"1.5"] {
            assert!(parse_cursor(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn scan_options() {
        let o = parse_scan_options(&[b"MATCH", b"a*", b"count", b"5"]).unwrap();
        assert_eq!((o.count, o.pattern), (5, Some(&b"a*"[..])));
        assert!(o.matches(b"abc") && !o.matches(b"bc"));
        assert!(parse_scan_options(&[b"MATCH", b"*"]).unwrap().pattern.is_none());
        assert_eq!(parse_scan_options(&[b"COUNT", b"0"]).err(), Some(CmdError::Syntax));
        assert_eq!(parse_scan_options(&[b"COUNT", b"x"]).err(), Some(CmdError::NotInteger));
        assert_eq!(parse_scan_options(&[b"COUNT"]).err(), Some(CmdError::Syntax));
        assert_eq!(parse_scan_options(&[b"TYPE", b"string"]).err(), Some(CmdError::Syntax));
    }

    #[test]
    fn distinct_indices_are_distinct_and_uniform() {
        let mut rng = Rng::new(42);
        let mut hits = [0u32; 10];
        for count in [2, 8] {
            for _ in 0..5000 {
                let picked = distinct_indices(&mut rng, 10, count);
                assert_eq!(picked.len(), count);
                let unique: hashbrown::HashSet<_> = picked.iter().collect();
                assert_eq!(unique.len(), count);
                picked.iter().for_each(|&i| hits[i] += 1);
            }
        }
        // 50,000 picks over 10 slots: each within 5% of 5,000.
        assert!(hits.iter().all(|&h| (4750..=5250).contains(&h)), "{hits:?}");
    }
}
