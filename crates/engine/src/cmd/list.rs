//! Lists: pushes and pops at both ends, ranges, in-place edits, moves between lists, and
//! the blocking pops (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP) that wait for a push.

use crate::blocking::parse_timeout;
use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{Db, TtlOnWrite, Value};
use crate::pubsub::notify;
use crate::reply::ReplySink;
use crate::types::{Bytes, ListValue};

use super::{is, parse_i64};

/// Which end of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Left,
    Right,
}

impl End {
    /// LEFT or RIGHT, else a syntax error (getListPositionFromObjectOrReply).
    fn parse(arg: &[u8]) -> Result<Self, CmdError> {
        if is(arg, "LEFT") {
            Ok(End::Left)
        } else if is(arg, "RIGHT") {
            Ok(End::Right)
        } else {
            Err(CmdError::Syntax)
        }
    }
}

impl ListValue {
    pub fn push(&mut self, end: End, item: &[u8]) {
        let item: Bytes = item.into();
        match end {
            End::Left => self.items_mut().push_front(item),
            End::Right => self.items_mut().push_back(item),
        }
    }

    pub fn pop(&mut self, end: End) -> Option<Bytes> {
        match end {
            End::Left => self.items_mut().pop_front(),
            End::Right => self.items_mut().pop_back(),
        }
    }

    /// The item at a Redis index (negative counts from the tail).
    pub fn get(&self, index: i64) -> Option<&[u8]> {
        let i = normalize_index(index, self.len())?;
        self.items().get(i).map(|b| &b[..])
    }

    /// Inclusive Redis range clamped to the list, as LRANGE computes it; None if empty.
    pub fn range(&self, start: i64, end: i64) -> Option<(usize, usize)> {
        let len = self.len() as i64;
        let mut start = if start < 0 { len + start } else { start };
        let mut end = if end < 0 { len + end } else { end };
        if start < 0 {
            start = 0;
        }
        if start > end || start >= len {
            return None;
        }
        if end >= len {
            end = len - 1;
        }
        Some((start as usize, end as usize))
    }
}

fn normalize_index(index: i64, len: usize) -> Option<usize> {
    let i = if index < 0 { len as i64 + index } else { index };
    (0..len as i64).contains(&i).then_some(i as usize)
}

/// The value at `key` for reading (Redis's lookupKeyRead: the access recorded, a miss is
/// a `keymiss` event), or WRONGTYPE.
fn read_lookup<'d>(db: &'d mut Db, key: &[u8], now: i64) -> Result<Option<&'d ListValue>, CmdError> {
    match db.get_read(key, now).map(|e| &e.value) {
        None => Ok(None),
        Some(Value::List(list)) => Ok(Some(list)),
        Some(_) => Err(CmdError::WrongType),
    }
}

/// Like `read`, counting a keyspace hit or miss as Redis's lookupKeyRead does (a key of
/// another type is a hit).
fn read_hit<'d>(ctx: &'d mut Ctx<'_>, key: &[u8]) -> Result<Option<&'d ListValue>, CmdError> {
    let (engine, now) = (ctx.engine, ctx.now_ms);
    let list = read_lookup(ctx.db(key), key, now);
    crate::exec::count_hit(engine, !matches!(list, Ok(None)));
    list
}

/// The list at `key` for modification, or WRONGTYPE.
fn write<'d>(db: &'d mut Db, key: &[u8], now: i64) -> Result<Option<&'d mut ListValue>, CmdError> {
    match db.get_mut(key, now).map(|e| &mut e.value) {
        None => Ok(None),
        Some(Value::List(list)) => Ok(Some(list)),
        Some(_) => Err(CmdError::WrongType),
    }
}

/// Deletes `key` if its list became empty (Redis never keeps empty lists).
fn delete_if_empty(db: &mut Db, key: &[u8], now: i64) -> bool {
    matches!(db.peek(key, now).map(|e| &e.value), Some(Value::List(l)) if l.is_empty()) && db.remove(key, now)
}

fn event_of(end: End, push: bool) -> &'static str {
    match (end, push) {
        (End::Left, true) => "lpush",
        (End::Right, true) => "rpush",
        (End::Left, false) => "lpop",
        (End::Right, false) => "rpop",
    }
}

fn reply_items<'a>(out: &mut dyn ReplySink, items: impl ExactSizeIterator<Item = &'a [u8]>) {
    out.array(items.len());
    for item in items {
        out.bulk(item);
    }
}

/// Pushes `items` onto the list at `key`, creating it unless `only_existing`. Returns the
/// new length (0 when nothing was created).
fn push_items(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    end: End,
    items: &[&[u8]],
    only_existing: bool,
) -> Result<usize, CmdError> {
    let now = ctx.now_ms;
    let db = ctx.db(key);
    let len = match write(db, key, now)? {
        Some(list) => {
            for item in items {
                list.push(end, item);
            }
            list.len()
        }
        None if only_existing => return Ok(0),
        None => {
            let mut list = ListValue::new();
            for item in items {
                list.push(end, item);
            }
            let len = list.len();
            db.set(key, Value::List(list), TtlOnWrite::Clear, now);
            len
        }
    };
    db.signal_ready(key);
    ctx.dirty(items.len() as u64);
    ctx.notify(notify::LIST, event_of(end, true), key);
    Ok(len)
}

fn push_command(
    ctx: &mut Ctx<'_>,
    args: &[&[u8]],
    out: &mut dyn ReplySink,
    end: End,
    only_existing: bool,
) -> CmdResult {
    let len = push_items(ctx, args[1], end, &args[2..], only_existing)?;
    out.integer(len as i64);
    Ok(())
}

/// LPUSH key element [element ...] — O(1) per element.
fn lpush(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    push_command(ctx, args, out, End::Left, false)
}

/// RPUSH key element [element ...] — O(1) per element.
fn rpush(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    push_command(ctx, args, out, End::Right, false)
}

/// LPUSHX key element [element ...] — O(1) per element; only if the list exists.
fn lpushx(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    push_command(ctx, args, out, End::Left, true)
}

/// RPUSHX key element [element ...] — O(1) per element; only if the list exists.
fn rpushx(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    push_command(ctx, args, out, End::Right, true)
}

/// A count argument that must be >= 0 (getPositiveLongFromObjectOrReply).
fn parse_positive(arg: &[u8], msg: Option<&str>) -> Result<i64, CmdError> {
    let err = || match msg {
        Some(m) => CmdError::msg(format!("ERR {m}")),
        None => CmdError::msg("ERR value is out of range, must be positive"),
    };
    let n = quince_resp::parse_i64_strict(arg).ok_or_else(err)?;
    if n < 0 {
        return Err(err());
    }
    Ok(n)
}

/// Pops up to `count` items from one end (in pop order) and deletes the key if emptied.
fn pop_items(ctx: &mut Ctx<'_>, key: &[u8], end: End, count: usize) -> Result<Option<Vec<Bytes>>, CmdError> {
    let Some((items, deleted)) = pop_items_quietly(ctx, key, end, count)? else { return Ok(None) };
    if !items.is_empty() {
        ctx.notify(notify::LIST, event_of(end, false), key);
    }
    if deleted {
        ctx.notify(notify::GENERIC, "del", key);
    }
    Ok(Some(items))
}

/// `pop_items` without its keyspace events; also tells whether the key was deleted.
fn pop_items_quietly(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    end: End,
    count: usize,
) -> Result<Option<(Vec<Bytes>, bool)>, CmdError> {
    let now = ctx.now_ms;
    let db = ctx.db(key);
    let Some(list) = write(db, key, now)? else { return Ok(None) };
    let n = count.min(list.len());
    let items: Vec<Bytes> = (0..n).filter_map(|_| list.pop(end)).collect();
    let deleted = delete_if_empty(db, key, now);
    ctx.dirty(n as u64);
    Ok(Some((items, deleted)))
}

fn pop_command(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, end: End) -> CmdResult {
    if args.len() > 3 {
        return Err(CmdError::msg(format!("ERR wrong number of arguments for '{}' command", ctx.spec.name)));
    }
    let count = match args.get(2) {
        Some(arg) => Some(parse_positive(arg, None)?),
        None => None,
    };
    let key = args[1];
    let now = ctx.now_ms;
    // Type and existence are checked before the zero-count shortcut, as Redis does.
    let exists = write(ctx.db(key), key, now)?.is_some();
    if !exists {
        match count {
            Some(_) => out.null_array(),
            None => out.null(),
        }
        return Ok(());
    }
    match count {
        Some(0) => out.array(0),
        Some(n) => {
            let items = pop_items(ctx, key, end, n as usize)?.unwrap_or_default();
            reply_items(out, items.iter().map(|b| &b[..]));
        }
        None => {
            let items = pop_items(ctx, key, end, 1)?.unwrap_or_default();
            out.bulk(&items[0]);
        }
    }
    Ok(())
}

/// LPOP key [count] — O(N) in the number of elements returned.
fn lpop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    pop_command(ctx, args, out, End::Left)
}

/// RPOP key [count] — O(N) in the number of elements returned.
fn rpop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    pop_command(ctx, args, out, End::Right)
}

/// LLEN key — O(1).
fn llen(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let len = read_hit(ctx, args[1])?.map_or(0, |l| l.len());
    out.integer(len as i64);
    Ok(())
}

/// LRANGE key start stop — O(S+N).
fn lrange(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let start = parse_i64(args[2])?;
    let stop = parse_i64(args[3])?;
    let Some(list) = read_hit(ctx, args[1])? else {
        out.array(0);
        return Ok(());
    };
    match list.range(start, stop) {
        Some((a, b)) => reply_items(out, list.items().range(a..=b).map(|x| &x[..])),
        None => out.array(0),
    }
    Ok(())
}

/// LINDEX key index — O(N) to reach the index.
fn lindex(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let Some(list) = read_hit(ctx, args[1])? else {
        out.null();
        return Ok(());
    };
    let index = parse_i64(args[2])?;
    match list.get(index) {
        Some(item) => out.bulk(item),
        None => out.null(),
    }
    Ok(())
}

/// LSET key index element — O(N) to reach the index.
fn lset(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let Some(list) = write(ctx.db(args[1]), args[1], now)? else { return Err(CmdError::msg("ERR no such key")) };
    let index = parse_i64(args[2])?;
    let Some(i) = normalize_index(index, list.len()) else { return Err(CmdError::msg("ERR index out of range")) };
    list.items_mut()[i] = args[3].into();
    ctx.dirty(1);
    ctx.notify(notify::LIST, "lset", args[1]);
    out.simple("OK");
    Ok(())
}

/// LINSERT key BEFORE|AFTER pivot element — O(N) to find the pivot.
fn linsert(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let after = if is(args[2], "AFTER") {
        true
    } else if is(args[2], "BEFORE") {
        false
    } else {
        return Err(CmdError::Syntax);
    };
    let now = ctx.now_ms;
    let key = args[1];
    let db = ctx.db(key);
    let Some(list) = write(db, key, now)? else {
        out.integer(0);
        return Ok(());
    };
    let Some(pos) = list.iter().position(|item| item == args[3]) else {
        out.integer(-1);
        return Ok(());
    };
    list.items_mut().insert(if after { pos + 1 } else { pos }, args[4].into());
    let len = list.len();
    db.signal_ready(key);
    ctx.dirty(1);
    ctx.notify(notify::LIST, "linsert", key);
    out.integer(len as i64);
    Ok(())
}

/// LREM key count element — O(N+M).
fn lrem(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let count = parse_i64(args[2])?;
    let now = ctx.now_ms;
    let key = args[1];
    let db = ctx.db(key);
    let Some(list) = write(db, key, now)? else {
        out.integer(0);
        return Ok(());
    };
    let limit = if count == 0 { usize::MAX } else { count.unsigned_abs() as usize };
    let items = list.items_mut();
    let mut removed = 0;
    if count >= 0 {
        let mut i = 0;
        while i < items.len() && removed < limit {
            if &items[i][..] == args[3] {
                items.remove(i);
                removed += 1;
            } else {
                i += 1;
            }
        }
    } else {
        let mut i = items.len();
        while i > 0 && removed < limit {
            i -= 1;
            if &items[i][..] == args[3] {
                items.remove(i);
                removed += 1;
            }
        }
    }
    let deleted = delete_if_empty(db, key, now);
    ctx.dirty(removed as u64);
    if removed > 0 {
        ctx.notify(notify::LIST, "lrem", key);
    }
    if deleted {
        ctx.notify(notify::GENERIC, "del", key);
    }
    out.integer(removed as i64);
    Ok(())
}

/// LTRIM key start stop — O(N) in the number of removed elements.
fn ltrim(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let start = parse_i64(args[2])?;
    let stop = parse_i64(args[3])?;
    let now = ctx.now_ms;
    let key = args[1];
    let db = ctx.db(key);
    if let Some(list) = write(db, key, now)? {
        let len = list.len();
        let (keep_from, keep_to) = match list.range(start, stop) {
            Some((a, b)) => (a, b + 1),
            None => (len, len),
        };
        let items = list.items_mut();
        items.truncate(keep_to);
        items.drain(..keep_from.min(items.len()));
        let removed = len - list.len();
        let deleted = delete_if_empty(db, key, now);
        ctx.dirty(removed as u64);
        ctx.notify(notify::LIST, "ltrim", key);
        if deleted {
            ctx.notify(notify::GENERIC, "del", key);
        }
    }
    out.simple("OK");
    Ok(())
}

/// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len] — O(N).
fn lpos(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (mut rank, mut count, mut maxlen) = (1i64, None::<i64>, 0i64);
    let mut j = 3;
    while j < args.len() {
        let more = j + 1 < args.len();
        if is(args[j], "RANK") && more {
            rank = parse_i64(args[j + 1])?;
            if rank == 0 {
                return Err(CmdError::msg(
                    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use \
                     negative to start from the end of the list",
                ));
            }
        } else if is(args[j], "COUNT") && more {
            count = Some(parse_positive(args[j + 1], Some("COUNT can't be negative"))?);
        } else if is(args[j], "MAXLEN") && more {
            maxlen = parse_positive(args[j + 1], Some("MAXLEN can't be negative"))?;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 2;
    }
    let Some(list) = read_hit(ctx, args[1])? else {
        match count {
            Some(_) => out.array(0),
            None => out.null(),
        }
        return Ok(());
    };
    let from_tail = rank < 0;
    let skip = rank.unsigned_abs() - 1;
    let len = list.len();
    let scan_limit = if maxlen == 0 { len } else { (maxlen as usize).min(len) };
    let mut matches = Vec::new();
    let mut seen = 0u64;
    let wanted = match count {
        Some(0) => usize::MAX,
        Some(n) => n as usize,
        None => 1,
    };
    for step in 0..scan_limit {
        let index = if from_tail { len - 1 - step } else { step };
        if list.items()[index][..] == *args[2] {
            seen += 1;
            if seen > skip {
                matches.push(index as i64);
                if matches.len() >= wanted {
                    break;
                }
            }
        }
    }
    match count {
        Some(_) => {
            out.array(matches.len());
            for m in matches {
                out.integer(m);
            }
        }
        None => match matches.first() {
            Some(&m) => out.integer(m),
            None => out.null(),
        },
    }
    Ok(())
}

/// Moves one item from the `from` end of `src` to the `to` end of `dst`; the moved item,
/// or None if `src` is missing. WRONGTYPE if either key holds another type.
fn move_item(ctx: &mut Ctx<'_>, src: &[u8], dst: &[u8], from: End, to: End) -> Result<Option<Bytes>, CmdError> {
    let now = ctx.now_ms;
    if write(ctx.db(src), src, now)?.is_none() {
        return Ok(None);
    }
    write(ctx.db(dst), dst, now)?;
    let (mut items, deleted) = pop_items_quietly(ctx, src, from, 1)?.expect("source list exists");
    let item = items.pop().expect("source list is not empty");
    // Redis notifies the push onto the destination before the pop from the source.
    push_items(ctx, dst, to, &[&item], false)?;
    ctx.notify(notify::LIST, event_of(from, false), src);
    if deleted && src != dst {
        ctx.notify(notify::GENERIC, "del", src);
    }
    ctx.dirty(1);
    Ok(Some(item))
}

/// LMOVE source destination LEFT|RIGHT LEFT|RIGHT — O(1).
fn lmove(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let from = End::parse(args[3])?;
    let to = End::parse(args[4])?;
    match move_item(ctx, args[1], args[2], from, to)? {
        Some(item) => out.bulk(&item),
        None => out.null(),
    }
    Ok(())
}

/// RPOPLPUSH source destination — O(1).
fn rpoplpush(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    match move_item(ctx, args[1], args[2], End::Right, End::Left)? {
        Some(item) => out.bulk(&item),
        None => out.null(),
    }
    Ok(())
}

/// LMPOP/BLMPOP arguments after the timeout: numkeys key... LEFT|RIGHT [COUNT count].
struct MultiPop<'a> {
    keys: &'a [&'a [u8]],
    end: End,
    count: usize,
}

fn parse_multi_pop<'a>(args: &'a [&'a [u8]], numkeys_idx: usize) -> Result<MultiPop<'a>, CmdError> {
    let numkeys_msg = || CmdError::msg("ERR numkeys should be greater than 0");
    let numkeys = quince_resp::parse_i64_strict(args[numkeys_idx]).ok_or_else(numkeys_msg)?;
    if numkeys < 1 {
        return Err(numkeys_msg());
    }
    let where_idx = numkeys_idx.checked_add(numkeys as usize).and_then(|i| i.checked_add(1));
    let Some(where_idx) = where_idx.filter(|&i| i < args.len()) else { return Err(CmdError::Syntax) };
    let end = End::parse(args[where_idx])?;
    let mut count = None;
    let mut j = where_idx + 1;
    while j < args.len() {
        if count.is_none() && is(args[j], "COUNT") && j + 1 < args.len() {
            let msg = || CmdError::msg("ERR count should be greater than 0");
            let n = quince_resp::parse_i64_strict(args[j + 1]).ok_or_else(msg)?;
            if n < 1 {
                return Err(msg());
            }
            count = Some(n as usize);
            j += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok(MultiPop { keys: &args[numkeys_idx + 1..where_idx], end, count: count.unwrap_or(1) })
}

/// The first key among `keys` holding a non-empty list; WRONGTYPE if an earlier key holds
/// another type (as Redis checks them in order).
fn first_nonempty<'k>(ctx: &mut Ctx<'_>, keys: &[&'k [u8]]) -> Result<Option<&'k [u8]>, CmdError> {
    let now = ctx.now_ms;
    for &key in keys {
        if write(ctx.db(key), key, now)?.is_some_and(|l| !l.is_empty()) {
            return Ok(Some(key));
        }
    }
    Ok(None)
}

/// `[key, [items...]]`, the reply of LMPOP/BLMPOP.
fn reply_key_items(out: &mut dyn ReplySink, key: &[u8], items: &[Bytes]) {
    out.array(2);
    out.bulk(key);
    reply_items(out, items.iter().map(|b| &b[..]));
}

/// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] — O(N+M).
fn lmpop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let spec = parse_multi_pop(args, 1)?;
    match first_nonempty(ctx, spec.keys)? {
        Some(key) => {
            let items = pop_items(ctx, key, spec.end, spec.count)?.unwrap_or_default();
            reply_key_items(out, key, &items);
            propagate_pop(ctx, key, spec.end, Some(items.len()));
        }
        None => out.null_array(),
    }
    Ok(())
}

/// Logs a pop from `key` deterministically, as Redis replicates LMPOP, BLPOP, BRPOP and
/// BLMPOP: `LPOP|RPOP key` for a single pop, `LPOP|RPOP key <n>` (n = what was popped) for
/// the multi-pops. The blocking forms are never logged as themselves: a replay must not block.
fn propagate_pop(ctx: &mut Ctx<'_>, key: &[u8], end: End, popped: Option<usize>) {
    if !ctx.propagating() {
        return;
    }
    let name: &[u8] = if end == End::Left { b"LPOP" } else { b"RPOP" };
    match popped {
        Some(n) => ctx.propagate_as(&[name, key, n.to_string().as_bytes()]),
        None => ctx.propagate_as(&[name, key]),
    }
}

fn null_array_reply(out: &mut dyn ReplySink) {
    out.null_array();
}

/// BLPOP/BRPOP: pop from the first non-empty list, or block on all of them.
fn blocking_pop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, end: End) -> CmdResult {
    let deadline = parse_timeout(args[args.len() - 1], ctx.now_ms)?;
    let keys = &args[1..args.len() - 1];
    match first_nonempty(ctx, keys)? {
        Some(key) => {
            let items = pop_items(ctx, key, end, 1)?.unwrap_or_default();
            out.array(2);
            out.bulk(key);
            out.bulk(&items[0]);
            propagate_pop(ctx, key, end, None);
        }
        None if !ctx.may_block() && !ctx.serving() => out.null_array(),
        None => ctx.block(args, keys, deadline, null_array_reply),
    }
    Ok(())
}

/// BLPOP key [key ...] timeout — O(N) in the number of keys.
fn blpop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    blocking_pop(ctx, args, out, End::Left)
}

/// BRPOP key [key ...] timeout — O(N) in the number of keys.
fn brpop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    blocking_pop(ctx, args, out, End::Right)
}

/// BLMOVE/BRPOPLPUSH once the arguments are parsed.
fn blocking_move(
    ctx: &mut Ctx<'_>,
    args: &[&[u8]],
    out: &mut dyn ReplySink,
    from: End,
    to: End,
    deadline: Option<i64>,
) -> CmdResult {
    let (src, dst) = (args[1], args[2]);
    let now = ctx.now_ms;
    let src_state = write(ctx.db(src), src, now).map(|l| l.is_some());
    match src_state {
        // While serving, a source that changed type keeps the client waiting (Redis 7.0).
        Err(_) if ctx.serving() => {
            ctx.block(args, &[src], deadline, null_array_reply);
            return Ok(());
        }
        Err(e) => return Err(e),
        Ok(false) if !ctx.may_block() && !ctx.serving() => {
            out.null();
            return Ok(());
        }
        Ok(false) => {
            // A timed-out wait answers with a null array, as for every list wait in Redis.
            ctx.block(args, &[src], deadline, null_array_reply);
            return Ok(());
        }
        Ok(true) => {}
    }
    // A destination of another type is reported to the client (even one being served).
    if write(ctx.db(dst), dst, now).is_err() {
        return Err(CmdError::msg("WRONGTYPE Operation against a key holding the wrong kind of value"));
    }
    let item = move_item(ctx, src, dst, from, to)?.expect("source exists");
    out.bulk(&item);
    // Logged as the non-blocking LMOVE / RPOPLPUSH. Redis's immediate path keeps the
    // client's direction arguments; its serving path (serveClientBlockedOnList) spells
    // them `left`/`right`.
    if ctx.propagating() {
        if args[0].eq_ignore_ascii_case(b"brpoplpush") {
            ctx.propagate_as(&[&b"RPOPLPUSH"[..], src, dst]);
        } else if ctx.serving() {
            ctx.propagate_as(&[&b"LMOVE"[..], src, dst, end_name(from), end_name(to)]);
        } else {
            ctx.propagate_as(&[&b"LMOVE"[..], src, dst, args[3], args[4]]);
        }
    }
    Ok(())
}

/// How Redis spells a direction it logs itself (shared.left / shared.right).
fn end_name(end: End) -> &'static [u8] {
    match end {
        End::Left => b"left",
        End::Right => b"right",
    }
}

/// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout — O(1).
fn blmove(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let from = End::parse(args[3])?;
    let to = End::parse(args[4])?;
    let deadline = parse_timeout(args[5], ctx.now_ms)?;
    blocking_move(ctx, args, out, from, to, deadline)
}

/// BRPOPLPUSH source destination timeout — O(1).
fn brpoplpush(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let deadline = parse_timeout(args[3], ctx.now_ms)?;
    blocking_move(ctx, args, out, End::Right, End::Left, deadline)
}

/// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count] — O(N+M).
fn blmpop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let spec = parse_multi_pop(args, 2)?;
    let deadline = parse_timeout(args[1], ctx.now_ms)?;
    match first_nonempty(ctx, spec.keys)? {
        Some(key) => {
            let items = pop_items(ctx, key, spec.end, spec.count)?.unwrap_or_default();
            reply_key_items(out, key, &items);
            propagate_pop(ctx, key, spec.end, Some(items.len()));
        }
        None if !ctx.may_block() && !ctx.serving() => out.null_array(),
        None => ctx.block(args, spec.keys, deadline, null_array_reply),
    }
    Ok(())
}

pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::new("lpush", -3, "write denyoom fast", "list", lpush)
            .doc("list", "1.0.0", "Prepend one or multiple elements to a list", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
            .history(&[("2.4.0", "Accepts multiple `element` arguments.")])
            .keys("RW insert", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("element", ArgType::String).multiple(),
            ]),
        CommandSpec::new("rpush", -3, "write denyoom fast", "list", rpush)
            .doc("list", "1.0.0", "Append one or multiple elements to a list", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
            .history(&[("2.4.0", "Accepts multiple `element` arguments.")])
            .keys("RW insert", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("element", ArgType::String).multiple(),
            ]),
        CommandSpec::new("lpushx", -3, "write denyoom fast", "list", lpushx)
            .doc("list", "2.2.0", "Prepend an element to a list, only if the list exists", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
            .history(&[("4.0.0", "Accepts multiple `element` arguments.")])
            .keys("RW insert", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("element", ArgType::String).multiple(),
            ]),
        CommandSpec::new("rpushx", -3, "write denyoom fast", "list", rpushx)
            .doc("list", "2.2.0", "Append an element to a list, only if the list exists", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
            .history(&[("4.0.0", "Accepts multiple `element` arguments.")])
            .keys("RW insert", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("element", ArgType::String).multiple(),
            ]),
        CommandSpec::new("lpop", -2, "write fast", "list", lpop)
            .doc("list", "1.0.0", "Remove and get the first elements in a list", "O(N) where N is the number of elements returned")
            .history(&[("6.2.0", "Added the `count` argument.")])
            .keys("RW access delete", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("count", ArgType::Integer).optional().since("6.2.0"),
            ]),
        CommandSpec::new("rpop", -2, "write fast", "list", rpop)
            .doc("list", "1.0.0", "Remove and get the last elements in a list", "O(N) where N is the number of elements returned")
            .history(&[("6.2.0", "Added the `count` argument.")])
            .keys("RW access delete", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("count", ArgType::Integer).optional().since("6.2.0"),
            ]),
        CommandSpec::new("llen", 2, "readonly fast", "list", llen)
            .doc("list", "1.0.0", "Get the length of a list", "O(1)")
            .keys("RO", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
            ]),
        CommandSpec::new("lrange", 4, "readonly", "list", lrange)
            .doc("list", "1.0.0", "Get a range of elements from a list", "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.")
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("start", ArgType::Integer),
                ArgDoc::new("stop", ArgType::Integer),
            ]),
        CommandSpec::new("lindex", 3, "readonly", "list", lindex)
            .doc("list", "1.0.0", "Get an element from a list by its index", "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).")
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("index", ArgType::Integer),
            ]),
        CommandSpec::new("lset", 4, "write denyoom", "list", lset)
            .doc("list", "1.0.0", "Set the value of an element in a list by its index", "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).")
            .keys("RW update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("index", ArgType::Integer),
                ArgDoc::new("element", ArgType::String),
            ]),
        CommandSpec::new("linsert", 5, "write denyoom", "list", linsert)
            .doc("list", "2.2.0", "Insert an element before or after another element in a list", "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).")
            .keys("RW insert", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::one_of(
                  "where",
                  vec![
                    ArgDoc::token("before", "BEFORE"),
                    ArgDoc::token("after", "AFTER"),
                  ],
                ),
                ArgDoc::new("pivot", ArgType::String),
                ArgDoc::new("element", ArgType::String),
            ]),
        CommandSpec::new("lrem", 4, "write", "list", lrem)
            .doc("list", "1.0.0", "Remove elements from a list", "O(N+M) where N is the length of the list and M is the number of elements removed.")
            .keys("RW delete", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("count", ArgType::Integer),
                ArgDoc::new("element", ArgType::String),
            ]),
        CommandSpec::new("ltrim", 4, "write", "list", ltrim)
            .doc("list", "1.0.0", "Trim a list to the specified range", "O(N) where N is the number of elements to be removed by the operation.")
            .keys("RW delete", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("start", ArgType::Integer),
                ArgDoc::new("stop", ArgType::Integer),
            ]),
        CommandSpec::new("lpos", -3, "readonly", "list", lpos)
            .doc("list", "6.0.6", "Return the index of matching elements on a list", "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.")
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("element", ArgType::String),
                ArgDoc::new("rank", ArgType::Integer).after("RANK").optional(),
                ArgDoc::new("num-matches", ArgType::Integer).after("COUNT").optional(),
                ArgDoc::new("len", ArgType::Integer).after("MAXLEN").optional(),
            ]),
        CommandSpec::new("lmove", 5, "write denyoom", "list", lmove)
            .doc("list", "6.2.0", "Pop an element from a list, push it to another list and return it", "O(1)")
            .keys("RW access delete", 1, 0, 1)
            .keys("RW insert", 2, 0, 1)
            .args(vec![
                ArgDoc::key("source", 0),
                ArgDoc::key("destination", 1),
                ArgDoc::one_of(
                  "wherefrom",
                  vec![
                    ArgDoc::token("left", "LEFT"),
                    ArgDoc::token("right", "RIGHT"),
                  ],
                ),
                ArgDoc::one_of(
                  "whereto",
                  vec![
                    ArgDoc::token("left", "LEFT"),
                    ArgDoc::token("right", "RIGHT"),
                  ],
                ),
            ]),
        CommandSpec::new("rpoplpush", 3, "write denyoom", "list", rpoplpush)
            .doc("list", "1.2.0", "Remove the last element in a list, prepend it to another list and return it", "O(1)")
            .deprecated("6.2.0", "`LMOVE` with the `RIGHT` and `LEFT` arguments")
            .keys("RW access delete", 1, 0, 1)
            .keys("RW insert", 2, 0, 1)
            .args(vec![
                ArgDoc::key("source", 0),
                ArgDoc::key("destination", 1),
            ]),
        CommandSpec::new("lmpop", -4, "write", "list", lmpop)
            .doc("list", "7.0.0", "Pop elements from a list", "O(N+M) where N is the number of provided keys and M is the number of elements returned.")
            .keys_keynum("RW access delete", 1, 0, 1, 1)
            .args(vec![
                ArgDoc::new("numkeys", ArgType::Integer),
                ArgDoc::key("key", 0).multiple(),
                ArgDoc::one_of(
                  "where",
                  vec![
                    ArgDoc::token("left", "LEFT"),
                    ArgDoc::token("right", "RIGHT"),
                  ],
                ),
                ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
            ]),
        CommandSpec::new("blpop", -3, "write noscript blocking", "list", blpop)
            .doc("list", "2.0.0", "Remove and get the first element in a list, or block until one is available", "O(N) where N is the number of provided keys.")
            .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
            .keys("RW access delete", 1, -2, 1)
            .args(vec![
                ArgDoc::key("key", 0).multiple(),
                ArgDoc::new("timeout", ArgType::Double),
            ]),
        CommandSpec::new("brpop", -3, "write noscript blocking", "list", brpop)
            .doc("list", "2.0.0", "Remove and get the last element in a list, or block until one is available", "O(N) where N is the number of provided keys.")
            .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
            .keys("RW access delete", 1, -2, 1)
            .args(vec![
                ArgDoc::key("key", 0).multiple(),
                ArgDoc::new("timeout", ArgType::Double),
            ]),
        CommandSpec::new("blmove", 6, "write denyoom noscript blocking", "list", blmove)
            .doc("list", "6.2.0", "Pop an element from a list, push it to another list and return it; or block until one is available", "O(1)")
            .keys("RW access delete", 1, 0, 1)
            .keys("RW insert", 2, 0, 1)
            .args(vec![
                ArgDoc::key("source", 0),
                ArgDoc::key("destination", 1),
                ArgDoc::one_of(
                  "wherefrom",
                  vec![
                    ArgDoc::token("left", "LEFT"),
                    ArgDoc::token("right", "RIGHT"),
                  ],
                ),
                ArgDoc::one_of(
                  "whereto",
                  vec![
                    ArgDoc::token("left", "LEFT"),
                    ArgDoc::token("right", "RIGHT"),
                  ],
                ),
                ArgDoc::new("timeout", ArgType::Double),
            ]),
        CommandSpec::new("brpoplpush", 4, "write denyoom noscript blocking", "list", brpoplpush)
            .doc("list", "2.2.0", "Pop an element from a list, push it to another list and return it; or block until one is available", "O(1)")
            .deprecated("6.2.0", "`BLMOVE` with the `RIGHT` and `LEFT` arguments")
            .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
            .keys("RW access delete", 1, 0, 1)
            .keys("RW insert", 2, 0, 1)
            .args(vec![
                ArgDoc::key("source", 0),
                ArgDoc::key("destination", 1),
                ArgDoc::new("timeout", ArgType::Double),
            ]),
        CommandSpec::new("blmpop", -5, "write blocking", "list", blmpop)
            .doc("list", "7.0.0", "Pop elements from a list, or block until one is available", "O(N+M) where N is the number of provided keys and M is the number of elements returned.")
            .keys_keynum("RW access delete", 2, 0, 1, 1)
            .args(vec![
                ArgDoc::new("timeout", ArgType::Double),
                ArgDoc::new("numkeys", ArgType::Integer),
                ArgDoc::key("key", 0).multiple(),
                ArgDoc::one_of(
                  "where",
                  vec![
                    ArgDoc::token("left", "LEFT"),
                    ArgDoc::token("right", "RIGHT"),
                  ],
                ),
                ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
            ]),
    ]
}
