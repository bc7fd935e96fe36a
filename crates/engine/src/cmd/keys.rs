//! Generic keyspace commands: DEL UNLINK EXISTS TYPE TOUCH RENAME RENAMENX MOVE COPY KEYS
//! SCAN RANDOMKEY SWAPDB OBJECT, and the TTL family.

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::glob::glob_match;
use crate::keyspace::{Key, Rng};
use crate::pubsub::notify;
use crate::reply::ReplySink;

use super::{is, parse_i64};

/// DEL key [key ...] — O(N) in the number of keys.
fn del(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    // UNLINK (and DEL under lazyfree-lazy-user-del) frees big values in the background.
    let lazily = ctx.spec.name == "unlink" || ctx.engine.hot.lazy_user_del.load(std::sync::atomic::Ordering::Relaxed);
    let mut removed = 0;
    for key in &args[1..] {
        if let Some(entry) = ctx.db(key).take(key, now) {
            if lazily {
                ctx.engine.lazyfree.free_value(entry.value);
            }
            ctx.notify(notify::GENERIC, "del", key);
            removed += 1;
        }
    }
    out.integer(removed);
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
    let current = entry.expire_at_ms();
    let refused = (cond.nx && current.is_some())
        || (cond.xx && current.is_none())
        || (cond.gt && current.is_none_or(|c| when <= c))
        || (cond.lt && current.is_some_and(|c| when >= c));
    if refused {
        out.integer(0);
        return Ok(());
    }
    // A time already past deletes the key, logged as DEL (UNLINK under
    // lazyfree-lazy-expire) as Redis's expireGenericCommand does; not while applying logged
    // effects, which set the TTL instead (the key then expires as anywhere else).
    if when <= now && !ctx.obeying() {
        ctx.db(key).remove_for(key, now, crate::lazyfree::LAZY_EXPIRE);
        ctx.notify(notify::GENERIC, "del", key);
        let del = super::deletion_command(ctx, "lazyfree-lazy-expire");
        ctx.propagate_as(&[del, key]);
    } else {
        ctx.db(key).set_expire(key, when, now);
        ctx.notify(notify::GENERIC, "expire", key);
        // Logged as PEXPIREAT key <absolute ms> with the same condition options, so a
        // replay at another time sets the same deadline.
        if ctx.propagating() {
            let when = when.to_string();
            let mut rewritten: Vec<&[u8]> = vec![b"PEXPIREAT", key, when.as_bytes()];
            rewritten.extend_from_slice(&args[3..]);
            ctx.propagate_as(&rewritten);
        }
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
    ttl_or_time(ctx, key, out, in_ms, false)
}

/// TTL, PTTL, EXPIRETIME and PEXPIRETIME (Redis's `ttlGenericCommand`); seconds round to
/// nearest.
fn ttl_or_time(ctx: &mut Ctx<'_>, key: &[u8], out: &mut dyn ReplySink, in_ms: bool, absolute: bool) -> CmdResult {
    let now = ctx.now_ms;
    let reply = match ctx.db(key).peek(key, now) {
        None => -2,
        Some(entry) => match entry.expire_at_ms() {
            None => -1,
            Some(at) => {
                let ms = if absolute { at } else { at - now }.max(0);
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
    if removed {
        ctx.notify(notify::GENERIC, "persist", args[1]);
    }
    out.integer(i64::from(removed));
    Ok(())
}

/// EXPIRETIME key — O(1).
fn expiretime(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    ttl_or_time(ctx, args[1], out, false, true)
}

/// PEXPIRETIME key — O(1).
fn pexpiretime(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    ttl_or_time(ctx, args[1], out, true, true)
}

/// TYPE key — O(1); `none` for a missing key. Does not count as an access.
fn type_cmd(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let name = ctx.db(args[1]).peek(args[1], now).map_or("none", |e| e.value.type_name());
    out.simple(name);
    Ok(())
}

/// TOUCH key [key ...] — O(N): records an access, returns how many keys exist.
fn touch(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    let found = args[1..].iter().filter(|key| ctx.db(key).get(key, now).is_some()).count();
    out.integer(found as i64);
    Ok(())
}

/// RENAME / RENAMENX key newkey — O(1): the value keeps its TTL and access data.
fn rename_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, nx: bool) -> CmdResult {
    let (from, to, now) = (args[1], args[2], ctx.now_ms);
    if !ctx.db(from).contains(from, now) {
        return Err(CmdError::msg("ERR no such key"));
    }
    if from == to {
        reply_rename(out, nx, !nx);
        return Ok(());
    }
    if nx && ctx.db(to).contains(to, now) {
        out.integer(0);
        return Ok(());
    }
    let entry = ctx.db(from).take(from, now).expect("checked above");
    ctx.db(to).insert_entry(to, entry, now);
    ctx.notify(notify::GENERIC, "rename_from", from);
    ctx.notify(notify::GENERIC, "rename_to", to);
    reply_rename(out, nx, true);
    Ok(())
}

fn reply_rename(out: &mut dyn ReplySink, nx: bool, done: bool) {
    if nx {
        out.integer(i64::from(done));
    } else {
        out.simple("OK");
    }
}

fn rename(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    rename_generic(ctx, args, out, false)
}

fn renamenx(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    rename_generic(ctx, args, out, true)
}

/// A database index argument: an integer (else the integer error) within range.
fn parse_db_index(ctx: &Ctx<'_>, arg: &[u8]) -> Result<usize, CmdError> {
    let n = parse_i64(arg)?;
    // (Redis's getIntFromObjectOrReply.)
    if n < i64::from(i32::MIN) || n > i64::from(i32::MAX) {
        return Err(CmdError::msg("ERR value is out of range, value must between -2147483648 and 2147483647"));
    }
    if n < 0 || n as usize >= ctx.engine.keyspace.databases() {
        return Err(CmdError::DbIndexOutOfRange);
    }
    Ok(n as usize)
}

/// MOVE key db — O(1).
fn move_cmd(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if ctx.engine.cluster.enabled() {
        return Err(CmdError::msg("ERR MOVE is not allowed in cluster mode"));
    }
    let (key, now) = (args[1], ctx.now_ms);
    let dst = parse_db_index(ctx, args[2])?;
    if dst == ctx.client.db {
        return Err(CmdError::msg("ERR source and destination objects are the same"));
    }
    if !ctx.db(key).contains(key, now) || ctx.db_at(key, dst).contains(key, now) {
        out.integer(0);
        return Ok(());
    }
    let entry = ctx.db(key).take(key, now).expect("checked above");
    ctx.db_at(key, dst).insert_entry(key, entry, now);
    ctx.notify(notify::GENERIC, "move_from", key);
    ctx.notify_db(notify::GENERIC, "move_to", key, dst);
    out.integer(1);
    Ok(())
}

/// COPY source destination [DB destination-db] [REPLACE] — O(N) in the value size.
fn copy(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (src, dst, now) = (args[1], args[2], ctx.now_ms);
    let mut replace = false;
    let mut dst_db = ctx.client.db;
    let mut j = 3;
    while j < args.len() {
        if is(args[j], "REPLACE") {
            replace = true;
        } else if is(args[j], "DB") && j + 1 < args.len() {
            dst_db = parse_db_index(ctx, args[j + 1]).map_err(|e| match e {
                CmdError::DbIndexOutOfRange => CmdError::msg("ERR DB index is out of range"),
                _ => e,
            })?;
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    if ctx.engine.cluster.enabled() && (ctx.client.db != 0 || dst_db != 0) {
        return Err(CmdError::msg("ERR Copying to another database is not allowed in cluster mode"));
    }
    if src == dst && dst_db == ctx.client.db {
        return Err(CmdError::msg("ERR source and destination objects are the same"));
    }
    let Some(entry) = ctx.db(src).get(src, now).cloned() else {
        out.integer(0);
        return Ok(());
    };
    let target = ctx.db_at(dst, dst_db);
    if target.contains(dst, now) && !replace {
        out.integer(0);
        return Ok(());
    }
    target.insert_entry(dst, entry, now);
    ctx.notify_db(notify::GENERIC, "copy_to", dst, dst_db);
    out.integer(1);
    Ok(())
}

/// KEYS pattern — O(N): every shard of the selected database, one at a time.
fn keys(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (pattern, now, db) = (args[1], ctx.now_ms, ctx.client.db);
    let all = pattern == b"*";
    let mut found: Vec<Key> = Vec::new();
    for shard in 0..ctx.engine.keyspace.shard_count() {
        let guard = ctx.engine.keyspace.lock(shard);
        found.extend(
            guard.dbs[db]
                .unexpired(now)
                .filter(|(k, _)| all || glob_match(pattern, k, false))
                .map(|(k, _)| Key::from(k)),
        );
    }
    out.array(found.len());
    for key in &found {
        out.bulk(key);
    }
    Ok(())
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type] — O(COUNT) per call: each shard's
/// table is walked with Redis's bucket cursor (see `Db::scan`), shard after shard.
fn scan(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let cursor = super::set::parse_cursor(args[1])?;
    let mut count = 10usize;
    let mut pattern: Option<&[u8]> = None;
    let mut type_name: Option<&[u8]> = None;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - i >= 2;
        if is(args[i], "COUNT") && more {
            let n = parse_i64(args[i + 1])?;
            if n < 1 {
                return Err(CmdError::Syntax);
            }
            count = n.min(1 << 20) as usize;
        } else if is(args[i], "MATCH") && more {
            pattern = Some(args[i + 1]).filter(|p| *p != b"*");
        } else if is(args[i], "TYPE") && more {
            type_name = Some(args[i + 1]);
        } else {
            return Err(CmdError::Syntax);
        }
        i += 2;
    }
    let (now, db) = (ctx.now_ms, ctx.client.db);
    let engine = ctx.engine;
    let keyspace = &engine.keyspace;
    let (mut shard, mut position) = keyspace.decode_cursor(cursor);
    let mut keys: Vec<Key> = Vec::new();
    // Keys found expired are deleted and logged, as Redis's scanGenericCommand does for
    // the keys it would otherwise return.
    let mut expired: Vec<Key> = Vec::new();
    let mut next = 0;
    while shard < keyspace.shard_count() {
        let mut guard = keyspace.lock(shard);
        let db = &mut guard.dbs[db];
        db.set_lazy_free(engine.hot.lazy_free_mask.load(std::sync::atomic::Ordering::Relaxed), &engine.lazyfree);
        let (page, resume) = db.scan(position, count - keys.len().min(count - 1));
        for key in page {
            if pattern.is_some_and(|p| !glob_match(p, &key, false)) {
                continue;
            }
            if db.is_stale(&key, now) && !db.contains(&key, now) {
                expired.push(key);
                continue;
            }
            if let Some(t) = type_name {
                let matches =
                    db.peek(&key, now).is_some_and(|e| e.value.type_name().as_bytes().eq_ignore_ascii_case(t));
                if !matches {
                    continue;
                }
            }
            keys.push(key);
        }
        // Whatever else the table noted as expired is logged with them.
        for key in db.take_expired_log() {
            if !expired.contains(&key) {
                expired.push(key);
            }
        }
        drop(guard);
        next = keyspace.encode_cursor(shard, resume);
        if resume.is_some() || keys.len() >= count {
            break;
        }
        shard += 1;
        position = 0;
    }
    if !expired.is_empty() && ctx.propagating() {
        let del = engine.expired_deletion_command();
        for key in &expired {
            ctx.propagate_as(&[del, &key[..]]);
        }
    }
    out.array(2);
    out.bulk(next.to_string().as_bytes());
    out.array(keys.len());
    for key in &keys {
        out.bulk(key);
    }
    Ok(())
}

/// RANDOMKEY — O(shards) here: a random live key of the selected database (a shard drawn by
/// its size, then the key at or after a random table bucket: not exactly uniform, like
/// Redis's dictGetFairRandomKey).
fn randomkey(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (now, db) = (ctx.now_ms, ctx.client.db);
    let engine = ctx.engine;
    let keyspace = &engine.keyspace;
    let mut rng = Rng::new(ctx.engine.clock.now_us() as u64 ^ ctx.client.id.rotate_left(17));
    for _attempt in 0..100 {
        let sizes: Vec<usize> = (0..keyspace.shard_count()).map(|s| keyspace.lock(s).dbs[db].len()).collect();
        let total: usize = sizes.iter().sum();
        if total == 0 {
            break;
        }
        let mut pick = rng.below(total);
        for (shard, size) in sizes.iter().enumerate() {
            if pick >= *size {
                pick -= size;
                continue;
            }
            let mut guard = keyspace.lock(shard);
            let db = &mut guard.dbs[db];
            let Some(key) = db.key_from_bucket(rng.below(usize::MAX)).map(Key::from) else { break };
            // A key whose TTL passed is deleted here and another one is drawn.
            if db.contains(&key, now) {
                out.bulk(&key);
                return Ok(());
            }
            // Its deletion is logged like any lazy expiry; this shard is not one the
            // executor locked, so the command records it itself (with any other expired
            // key the table noted for the log).
            let mut expired = db.take_expired_log();
            if !expired.contains(&key) {
                expired.push(key);
            }
            drop(guard);
            for key in expired {
                ctx.propagate_as(&[engine.expired_deletion_command(), &key[..]]);
            }
            break;
        }
    }
    out.null();
    Ok(())
}

/// SWAPDB index1 index2 — O(shards): swaps the two databases in every shard at once.
fn swapdb(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if ctx.engine.cluster.enabled() {
        return Err(CmdError::msg("ERR SWAPDB is not allowed in cluster mode"));
    }
    let parse = |arg: &[u8], which: &str| -> Result<i64, CmdError> {
        parse_i64(arg)
            .ok()
            .filter(|n| i32::try_from(*n).is_ok())
            .ok_or_else(|| CmdError::msg(format!("ERR invalid {which} DB index")))
    };
    let a = parse(args[1], "first")?;
    let b = parse(args[2], "second")?;
    let dbs = ctx.engine.keyspace.databases() as i64;
    if a < 0 || a >= dbs || b < 0 || b >= dbs {
        return Err(CmdError::DbIndexOutOfRange);
    }
    let (a, b) = (a as usize, b as usize);
    ctx.force_propagation();
    let mut ready = Vec::new();
    // Deletions of expired keys not logged yet are logged before the swap: after it, their
    // tables hold the other database.
    let mut expired: Vec<(usize, Key)> = Vec::new();
    if a != b {
        let mut all = ctx.engine.keyspace.lock_all();
        for shard in all.iter_mut() {
            for index in [a, b] {
                expired.extend(shard.dbs[index].take_expired_log().into_iter().map(|k| (index, k)));
            }
            let (low, high) = (a.min(b), a.max(b));
            let (left, right) = shard.dbs.split_at_mut(high);
            let (ready_low, ready_high) = left[low].swap_data(&mut right[0]);
            ready.extend(ready_low.into_iter().map(|k| (low, k)));
            ready.extend(ready_high.into_iter().map(|k| (high, k)));
        }
    }
    if !expired.is_empty() && ctx.propagating() {
        let del = ctx.engine.expired_deletion_command();
        for (index, key) in &expired {
            ctx.propagate_in(*index, &[del, &key[..]]);
        }
        ctx.propagate_as(args);
    }
    // Clients blocked on keys that the swap brought in are served, as Redis does (once
    // the SWAPDB is logged: their pops come after it).
    ctx.serve_after(ready);
    out.simple("OK");
    Ok(())
}

/// OBJECT ENCODING|FREQ|IDLETIME|REFCOUNT key — O(1); none of them counts as an access.
fn object_sub(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (key, now) = (args[2], ctx.now_ms);
    let lfu = ctx.engine.hot.lfu.load(std::sync::atomic::Ordering::Relaxed);
    let shared_ints = ctx.engine.hot.shared_integers.load(std::sync::atomic::Ordering::Relaxed);
    let decay = ctx.engine.hot.lfu_decay_time.load(std::sync::atomic::Ordering::Relaxed);
    let sub = ctx.spec.name.rsplit('|').next().unwrap_or("");
    let Some(entry) = ctx.db(key).peek(key, now) else {
        out.null();
        return Ok(());
    };
    match sub {
        "encoding" => out.bulk(entry.value.encoding_name().as_bytes()),
        "refcount" => {
            let shared = matches!(&entry.value, crate::keyspace::Value::Str(crate::keyspace::StrValue::Int(n))
                if shared_ints && (0..crate::keyspace::SHARED_INTEGERS).contains(n));
            out.integer(if shared { i64::from(i32::MAX) } else { 1 });
        }
        "idletime" => {
            if lfu {
                return Err(CmdError::msg("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."));
            }
            out.integer(entry.idle_seconds(now) as i64);
        }
        _ => {
            if !lfu {
                return Err(CmdError::msg("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."));
            }
            out.integer(i64::from(crate::keyspace::lfu_decayed(entry.access, now, decay)));
        }
    }
    Ok(())
}

fn object_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "OBJECT",
        &[
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>",
            "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
        ],
    )
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

fn object_spec(name: &str, summary: &'static str, since: &'static str) -> CommandSpec {
    CommandSpec::new(name, 3, "readonly", "keyspace", object_sub)
        .doc("generic", since, summary, "O(1)")
        .tips(&["nondeterministic_output"])
        .keys("RO", 2, 0, 1)
        .args(vec![ArgDoc::key("key", 0)])
}

pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::new("unlink", -2, "write fast", "keyspace", del)
            .doc("generic", "4.0.0", "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.")
            .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
            .keys("RM delete", 1, -1, 1)
            .args(vec![ArgDoc::key("key", 0).multiple()]),
        CommandSpec::new("type", 2, "readonly fast", "keyspace", type_cmd)
            .doc("generic", "1.0.0", "Determine the type stored at key", "O(1)")
            .keys("RO", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0)]),
        CommandSpec::new("touch", -2, "readonly fast", "keyspace", touch)
            .doc("generic", "3.2.1", "Alters the last access time of a key(s). Returns the number of existing keys specified.", "O(N) where N is the number of keys that will be touched.")
            .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
            .keys("RO", 1, -1, 1)
            .args(vec![ArgDoc::key("key", 0).multiple()]),
        CommandSpec::new("rename", 3, "write", "keyspace", rename)
            .doc("generic", "1.0.0", "Rename a key", "O(1)")
            .keys("RW access delete", 1, 0, 1)
            .keys("OW update", 2, 0, 1)
            .args(vec![ArgDoc::key("key", 0), ArgDoc::key("newkey", 1)]),
        CommandSpec::new("renamenx", 3, "write fast", "keyspace", renamenx)
            .doc("generic", "1.0.0", "Rename a key, only if the new key does not exist", "O(1)")
            .history(&[("3.2.0", "The command no longer returns an error when source and destination names are the same.")])
            .keys("RW access delete", 1, 0, 1)
            .keys("OW insert", 2, 0, 1)
            .args(vec![ArgDoc::key("key", 0), ArgDoc::key("newkey", 1)]),
        CommandSpec::new("move", 3, "write fast", "keyspace", move_cmd)
            .doc("generic", "1.0.0", "Move a key to another database", "O(1)")
            .keys("RW access update", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0), ArgDoc::new("db", ArgType::Integer)]),
        CommandSpec::new("copy", -3, "write denyoom", "keyspace", copy)
            .doc("generic", "6.2.0", "Copy a key", "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.")
            .keys("RO access", 1, 0, 1)
            .keys("OW update", 2, 0, 1)
            .args(vec![
                ArgDoc::key("source", 0),
                ArgDoc::key("destination", 1),
                ArgDoc::new("destination-db", ArgType::Integer).after("DB").optional(),
                ArgDoc::token("replace", "REPLACE").optional(),
            ]),
        CommandSpec::new("keys", 2, "readonly", "keyspace dangerous", keys)
            .doc("generic", "1.0.0", "Find all keys matching the given pattern", "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.")
            .tips(&["request_policy:all_shards", "nondeterministic_output_order"])
            .args(vec![ArgDoc::new("pattern", ArgType::Pattern)]),
        CommandSpec::new("scan", -2, "readonly", "keyspace", scan)
            .doc("generic", "2.8.0", "Incrementally iterate the keys space", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.")
            .history(&[("6.0.0", "Added the `TYPE` subcommand.")])
            .tips(&["nondeterministic_output", "request_policy:special"])
            .args(vec![
                ArgDoc::new("cursor", ArgType::Integer),
                ArgDoc::new("pattern", ArgType::Pattern).after("MATCH").optional(),
                ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
                ArgDoc::new("type", ArgType::String).after("TYPE").optional().since("6.0.0"),
            ]),
        CommandSpec::new("randomkey", 1, "readonly", "keyspace", randomkey)
            .doc("generic", "1.0.0", "Return a random key from the keyspace", "O(1)")
            .tips(&["request_policy:all_shards", "nondeterministic_output"]),
        CommandSpec::new("swapdb", 3, "write fast", "keyspace dangerous", swapdb)
            .doc("server", "4.0.0", "Swaps two Redis databases", "O(N) where N is the count of clients watching or blocking on keys from both databases.")
            .args(vec![ArgDoc::new("index1", ArgType::Integer), ArgDoc::new("index2", ArgType::Integer)]),
        CommandSpec::new("expiretime", 2, "readonly fast", "keyspace", expiretime)
            .doc("generic", "7.0.0", "Get the expiration Unix timestamp for a key", "O(1)")
            .keys("RO access", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0)]),
        CommandSpec::new("pexpiretime", 2, "readonly fast", "keyspace", pexpiretime)
            .doc("generic", "7.0.0", "Get the expiration Unix timestamp for a key in milliseconds", "O(1)")
            .keys("RO access", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0)]),
        CommandSpec::container(
            "object",
            "",
            "",
            vec![
                object_spec("encoding", "Inspect the internal encoding of a Redis object", "2.2.3"),
                object_spec("freq", "Get the logarithmic access frequency counter of a Redis object", "4.0.0"),
                object_spec("idletime", "Get the time since a Redis object was last accessed", "2.2.3"),
                object_spec("refcount", "Get the number of references to the value of the key", "2.2.3"),
                CommandSpec::new("help", 2, "loading stale", "keyspace", object_help)
                    .doc("generic", "6.2.0", "Show helpful text about the different subcommands", "O(1)"),
            ],
        )
        .doc("generic", "2.2.3", "A container for object introspection commands", "Depends on subcommand."),
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
