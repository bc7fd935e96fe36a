//! DEBUG: the subcommands Redis's own test suite relies on, behind `enable-debug-command`
//! exactly as in Redis (`no` by default; `local` allows loopback clients only).

use std::sync::atomic::Ordering;

use crate::command::CommandSpec;
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{Entry, StrValue, TtlOnWrite, Value};
use crate::reply::ReplySink;

use super::{atoi, is, parse_i64};

fn debug_allowed(ctx: &Ctx<'_>) -> bool {
    ctx.engine.config.read().protected_action_allowed("enable-debug-command", local_client(ctx))
}

/// A client of this machine (loopback or the Unix socket), for the `local` setting of
/// `enable-debug-command` and `enable-module-command`.
pub(super) fn local_client(ctx: &Ctx<'_>) -> bool {
    let addr = &ctx.client.handle.conn.addr;
    addr.is_empty() || addr.starts_with("127.0.0.1:") || addr.starts_with("[::1]:")
}

// DEBUG DIGEST and DIGEST-VALUE compute Redis 7.0's digest (debug.c) exactly, so a dataset
// gives the same hex on quince and on redis-server. Two SHA1 combinators build it:
// `xor_digest` for unordered parts (keys, set members, hash fields, zset members) and
// `mix_digest` where order matters (a list's elements, a stream's entries, the parts of one
// element). Only logical contents go in, never the encoding, so any iteration order and any
// encoding of equal contents give equal digests.

type Digest = [u8; 20];

fn sha1(data: &[u8]) -> Digest {
    sha1_smol::Sha1::from(data).digest().bytes()
}

/// Redis's `xorDigest`: `digest ^= SHA1(data)`, commutative.
fn xor_digest(digest: &mut Digest, data: &[u8]) {
    for (d, h) in digest.iter_mut().zip(sha1(data)) {
        *d ^= h;
    }
}

/// Redis's `mixDigest`: `digest = SHA1(digest ^ SHA1(data))`, order-dependent.
fn mix_digest(digest: &mut Digest, data: &[u8]) {
    xor_digest(digest, data);
    *digest = sha1(digest);
}

/// Redis's object type codes (`OBJ_STRING`...), which the digest mixes in big-endian.
fn redis_type_code(value: &Value) -> u32 {
    match value {
        Value::Str(_) => 0,
        Value::List(_) => 1,
        Value::Set(_) => 2,
        Value::ZSet(_) => 3,
        Value::Hash(_) => 4,
        Value::Stream(_) => 6,
    }
}

/// Redis's `xorObjectDigest`: mixes one value (and whether it has a TTL, not the TTL
/// itself) into `digest`.
fn mix_value_digest(digest: &mut Digest, entry: &Entry) {
    mix_digest(digest, &redis_type_code(&entry.value).to_be_bytes());
    match &entry.value {
        // The int encoding digests its decimal text, as getDecodedObject gives it.
        Value::Str(s) => mix_digest(digest, &s.as_bytes()),
        Value::List(l) => l.iter().for_each(|item| mix_digest(digest, item)),
        Value::Set(set) => set.iter().for_each(|member| xor_digest(digest, &member)),
        Value::ZSet(z) => {
            let mut score_text = Vec::with_capacity(24);
            for (member, score) in z.iter() {
                // Redis 7.0 formats the score with snprintf("%.17g") here (7.2 moved to
                // fpconv_dtoa, which gives shorter text and so other digests).
                score_text.clear();
                quince_resp::format_double(score, &mut score_text);
                let mut element = [0u8; 20];
                mix_digest(&mut element, member);
                mix_digest(&mut element, &score_text);
                xor_digest(digest, &element);
            }
        }
        Value::Hash(h) => {
            for (field, value) in h.iter() {
                let mut element = [0u8; 20];
                mix_digest(&mut element, field);
                mix_digest(&mut element, value);
                xor_digest(digest, &element);
            }
        }
        // Live entries in ID order, each as "ms.seq" then its fields and values; node
        // layout, consumer groups, last ID and tombstones do not count.
        Value::Stream(st) => {
            for (id, fields) in st.entries() {
                mix_digest(digest, format!("{}.{}", id.ms, id.seq).as_bytes());
                fields.iter().for_each(|f| mix_digest(digest, f));
            }
        }
    }
    if entry.expire_at_ms().is_some() {
        xor_digest(digest, b"!!expire!!");
    }
}

/// Redis's `computeDatasetDigest`: per non-empty database in order, mix in its id, then xor
/// in each key's digest (its name mixed with its value). Keys whose TTL passed but that are
/// not deleted yet count, as in Redis's dict walk. All shards are locked at once so the
/// digest is of one point in time.
fn dataset_digest(ctx: &Ctx<'_>) -> Digest {
    let shards = ctx.engine.keyspace.lock_all();
    let mut total = [0u8; 20];
    for db in 0..ctx.engine.keyspace.databases() {
        let mut keys = [0u8; 20];
        let mut any = false;
        for shard in &shards {
            for (key, entry) in shard.dbs[db].iter_all() {
                any = true;
                let mut digest = [0u8; 20];
                mix_digest(&mut digest, key);
                mix_value_digest(&mut digest, entry);
                xor_digest(&mut keys, &digest);
            }
        }
        if any {
            mix_digest(&mut total, &(db as u32).to_be_bytes());
            keys.iter().zip(total.iter_mut()).for_each(|(k, t)| *t ^= k);
        }
    }
    total
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Approximately what the value takes serialized in an RDB file.
fn serialized_len(entry: &Entry) -> usize {
    match &entry.value {
        Value::Str(StrValue::Int(n)) => match n {
            -128..=127 => 2,
            -32768..=32767 => 3,
            -2_147_483_648..=2_147_483_647 => 5,
            _ => 1 + crate::keyspace::decimal_len(*n) + 1,
        },
        Value::Str(s) => {
            let len = s.len();
            len + if len < 64 {
                1
            } else if len < 16384 {
                2
            } else {
                5
            }
        }
        // Collections: roughly their elements plus a length header per element.
        Value::List(l) => l.iter().map(|i| i.len() + 1).sum::<usize>() + 11,
        Value::Hash(h) => h.iter().map(|(f, v)| f.len() + v.len() + 2).sum::<usize>() + 11,
        Value::Set(set) => set.iter().map(|m| m.len() + 1).sum::<usize>() + 11,
        Value::ZSet(z) => z.iter().map(|(m, _)| m.len() + 10).sum::<usize>() + 11,
        Value::Stream(st) => st.data_bytes() + 11,
    }
}

fn debug(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if !debug_allowed(ctx) {
        return Err(CmdError::msg(
            "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it \
             from a local connection, otherwise you need to set this option in the configuration file, and then \
             restart the server.",
        ));
    }
    let sub = args[1];
    let argc = args.len();
    if is(sub, "HELP") && argc == 2 {
        return debug_help(out);
    } else if is(sub, "SLEEP") && argc == 3 {
        let secs: f64 = std::str::from_utf8(args[2]).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0.0);
        if secs > 0.0 && secs.is_finite() {
            std::thread::sleep(std::time::Duration::from_secs_f64(secs));
        }
        out.simple("OK");
    } else if is(sub, "QUICKLIST-PACKED-THRESHOLD") && argc == 3 {
        // Redis stores list elements above this size as plain nodes. Quince keeps every
        // element as its own allocation, so the value is validated and has no effect.
        let size = std::str::from_utf8(args[2]).ok().and_then(crate::config::parse_memory);
        match size {
            Some(sz) if sz <= (1u64 << 32) - (1 << 20) => out.simple("OK"),
            _ => return Err(CmdError::msg("ERR argument must be a memory value bigger than 1 and smaller than 4gb")),
        }
    } else if is(sub, "SET-ACTIVE-EXPIRE") && argc == 3 {
        let on = parse_i64(args[2])? != 0;
        ctx.engine.hot.active_expire.store(on, Ordering::Relaxed);
        out.simple("OK");
    } else if is(sub, "SET-DISABLE-DENY-SCRIPTS") && argc == 3 {
        // atoi, as Redis: anything not a number is 0.
        let on = std::str::from_utf8(args[2]).ok().and_then(|s| s.trim_start().parse::<i64>().ok()).unwrap_or(0) != 0;
        ctx.engine.scripting.disable_deny.store(on, Ordering::Relaxed);
        out.simple("OK");
    } else if is(sub, "CONFIG-REWRITE-FORCE-ALL") && argc == 2 {
        // Every parameter, defaults included (Redis tests that the file reads back).
        super::server::rewrite_config_file(ctx.engine, true)
            .map_err(|e| CmdError::msg(format!("ERR CONFIG-REWRITE-FORCE-ALL failed: {}", e.render("debug"))))?;
        out.simple("OK");
    } else if is(sub, "CHANGE-REPL-ID") && argc == 2 {
        ctx.engine
            .persistence()
            .ok_or_else(|| CmdError::msg("ERR replication is not available"))?
            .change_replication_id()
            .map_err(CmdError::msg)?;
        out.simple("OK");
    } else if is(sub, "REPLICATE") && argc >= 3 {
        // Into the replication stream only, not run here: data divergence, for tests.
        ctx.propagate_to_replicas(&args[2..]);
        out.simple("OK");
    } else if is(sub, "OBJECT") && argc == 3 {
        let key = args[2];
        let db = ctx.client.db;
        let now = ctx.now_ms;
        let shard = ctx.engine.keyspace.shard_of(key);
        let mut guard = ctx.engine.keyspace.lock(shard);
        // The raw lookup Redis does: a key whose TTL passed but that is not deleted yet is
        // still there (a time before any TTL expires nothing).
        let Some(entry) = guard.dbs[db].peek(key, i64::MIN) else { return Err(CmdError::msg("ERR no such key")) };
        let shared = matches!(&entry.value, Value::Str(StrValue::Int(n))
            if ctx.engine.hot.shared_integers.load(Ordering::Relaxed) && (0..crate::keyspace::SHARED_INTEGERS).contains(n));
        let line = format!(
            "Value at:{:p} refcount:{} encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}",
            &entry.value as *const Value,
            if shared { i32::MAX } else { 1 },
            entry.value.encoding_name(),
            serialized_len(entry),
            entry.access,
            entry.idle_seconds(now),
        );
        out.simple(&line);
    } else if is(sub, "DIGEST") && argc == 2 {
        out.simple(&hex(&dataset_digest(ctx)));
    } else if is(sub, "DIGEST-VALUE") && argc >= 2 {
        let db = ctx.client.db;
        out.array(argc - 2);
        for key in &args[2..] {
            let shard = ctx.engine.keyspace.shard_of(key);
            let mut guard = ctx.engine.keyspace.lock(shard);
            // The raw lookup Redis does (a key whose TTL passed still counts); the value and
            // whether it has a TTL, not the key name. A missing key gives 20 zero bytes.
            let mut digest = [0u8; 20];
            if let Some(entry) = guard.dbs[db].peek(key, i64::MIN) {
                mix_value_digest(&mut digest, entry);
            }
            out.simple(&hex(&digest));
        }
    } else if is(sub, "POPULATE") && (3..=5).contains(&argc) {
        let count = parse_i64(args[2])?;
        if count < 0 {
            return Err(CmdError::msg("ERR count must be greater than or equal to 0"));
        }
        let prefix = args.get(3).copied().unwrap_or(b"key");
        let size = match args.get(4) {
            Some(a) => Some(parse_i64(a)?.max(0) as usize),
            None => None,
        };
        let (db, now) = (ctx.client.db, ctx.now_ms);
        for i in 0..count {
            let mut key = prefix.to_vec();
            key.extend_from_slice(format!(":{i}").as_bytes());
            let shard = ctx.engine.keyspace.shard_of(&key);
            let mut guard = ctx.engine.keyspace.lock(shard);
            let target = &mut guard.dbs[db];
            if target.contains(&key, now) {
                continue;
            }
            let mut value = format!("value:{i}").into_bytes();
            if let Some(size) = size {
                value.resize(size, 0);
            }
            target.set(&key, Value::string(&value), TtlOnWrite::Clear, now);
        }
        out.simple("OK");
    } else if is(sub, "PROTOCOL") && argc == 3 {
        return debug_protocol(args[2], out);
    } else if is(sub, "RELOAD") {
        // DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]
        let (mut save, mut flush, mut merge) = (true, true, false);
        for opt in &args[2..] {
            if is(opt, "MERGE") {
                merge = true;
            } else if is(opt, "NOFLUSH") {
                flush = false;
            } else if is(opt, "NOSAVE") {
                save = false;
            } else {
                return Err(CmdError::msg("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."));
            }
        }
        let layer = ctx.engine.persistence().ok_or_else(|| CmdError::msg("ERR persistence is not enabled"))?;
        layer.debug_reload(ctx.engine, save, flush, merge).map_err(CmdError::msg)?;
        out.simple("OK");
    } else if is(sub, "AOF-FLUSH-SLEEP") && argc == 3 {
        let layer = ctx.engine.persistence().ok_or_else(|| CmdError::msg("ERR persistence is not enabled"))?;
        layer.debug_aof_flush_sleep(atoi(args[2]).max(0) as u64).map_err(CmdError::msg)?;
        out.simple("OK");
    } else if is(sub, "SEGFAULT") && argc == 2 {
        // The server's crash handler writes Redis's crash report, then the process dies of
        // the signal (an embedded Db's host process too: DEBUG is for tests).
        // SAFETY: raising a signal has no memory-safety precondition.
        unsafe { libc::raise(libc::SIGSEGV) };
        out.simple("OK");
    } else if is(sub, "DROP-CLUSTER-PACKET-FILTER") && argc == 3 {
        // (Redis accepts it standalone too: the filter is then never consulted.)
        match ctx.engine.cluster.debug() {
            Some(handler) => return handler(ctx, args, out),
            None => {
                crate::cmd::parse_i64(args[2])?;
                out.simple("OK");
            }
        }
    } else if is(sub, "CLUSTERLINK") && argc == 5 && is(args[2], "KILL") {
        match ctx.engine.cluster.debug() {
            Some(handler) => return handler(ctx, args, out),
            None => return Err(CmdError::msg("ERR Debug option only available for cluster mode enabled setup!")),
        }
    } else if is(sub, "PAUSE-CRON") && argc == 3 {
        // The host's periodic work waits (expiry cycles, persistence duties, a shutdown a
        // signal scheduled), as Redis's serverCron does.
        ctx.engine.set_cron_paused(atoi(args[2]) != 0);
        out.simple("OK");
    } else if is(sub, "LOG") && argc == 3 {
        let layer = ctx.engine.persistence().ok_or_else(|| CmdError::msg("ERR persistence is not enabled"))?;
        layer.debug_log(&String::from_utf8_lossy(args[2])).map_err(CmdError::msg)?;
        out.simple("OK");
    } else if is(sub, "SET-SKIP-CHECKSUM-VALIDATION") && argc == 3 {
        let layer = ctx.engine.persistence().ok_or_else(|| CmdError::msg("ERR persistence is not enabled"))?;
        layer.debug_skip_checksum_validation(atoi(args[2]) != 0).map_err(CmdError::msg)?;
        out.simple("OK");
    } else if is(sub, "LOADAOF") && argc == 2 {
        let layer = ctx.engine.persistence().ok_or_else(|| CmdError::msg("ERR persistence is not enabled"))?;
        layer.debug_loadaof(ctx.engine).map_err(CmdError::msg)?;
        out.simple("OK");
    } else {
        return Err(CmdError::UnknownSubcommand(sub.to_vec()));
    }
    Ok(())
}

/// DEBUG PROTOCOL <type>: one reply of each RESP type, for client tests.
fn debug_protocol(name: &[u8], out: &mut dyn ReplySink) -> CmdResult {
    let resp3 = out.protocol() == quince_resp::Protocol::Resp3;
    if is(name, "string") {
        out.bulk(b"Hello World");
    } else if is(name, "integer") {
        out.integer(12345);
    } else if is(name, "double") {
        #[allow(clippy::approx_constant)] // the exact value Redis sends
        out.double(3.141);
    } else if is(name, "bignum") {
        out.big_number(b"1234567999999999999999999999999999999");
    } else if is(name, "null") {
        out.null();
    } else if is(name, "array") {
        out.array(3);
        (0..3).for_each(|j| out.integer(j));
    } else if is(name, "set") {
        out.set(3);
        (0..3).for_each(|j| out.integer(j));
    } else if is(name, "map") {
        out.map(3);
        for j in 0..3 {
            out.integer(j);
            out.boolean(j == 1);
        }
    } else if is(name, "attrib") {
        if resp3 {
            out.attribute(1);
            out.bulk(b"key-popularity");
            out.array(2);
            out.bulk(b"key:123");
            out.integer(90);
        }
        out.bulk(b"Some real reply following the attribute");
    } else if is(name, "push") {
        if !resp3 {
            return Err(CmdError::msg("ERR RESP2 is not supported by this command"));
        }
        out.push(2);
        out.bulk(b"server-cpu-usage");
        out.integer(42);
        out.bulk(b"Some real reply following the push reply");
    } else if is(name, "true") {
        out.boolean(true);
    } else if is(name, "false") {
        out.boolean(false);
    } else if is(name, "verbatim") {
        out.verbatim(b"txt", b"This is a verbatim\nstring");
    } else {
        return Err(CmdError::msg(
            "ERR Wrong protocol type name. Please use one of the following: \
             string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false",
        ));
    }
    Ok(())
}

fn debug_help(out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "DEBUG",
        &[
            "AOF-FLUSH-SLEEP <microsec>",
            "    Server will sleep before flushing the AOF, this is used for testing.",
            "CHANGE-REPL-ID",
            "    Change the replication IDs of the instance.",
            "    Dangerous: should be used only for testing the replication subsystem.",
            "CONFIG-REWRITE-FORCE-ALL",
            "    Like CONFIG REWRITE but writes all configuration options, including",
            "    keywords not listed in original configuration file or default values.",
            "DIGEST",
            "    Output a hex signature representing the current DB content.",
            "DIGEST-VALUE <key> [<key> ...]",
            "    Output a hex signature of the values of all the specified keys.",
            "LOG <message>",
            "    Write <message> to the server log.",
            "REPLICATE <string>",
            "    Replicates the provided string to replicas, allowing data divergence.",
            "OBJECT <key>",
            "    Show low level info about the `key` and associated value.",
            "DROP-CLUSTER-PACKET-FILTER <packet-type>",
            "    Drop all packets that match the filtered type. Set to -1 allow all packets.",
            "CLUSTERLINK KILL <to|from|all> <node-id>",
            "    Kills the link based on the direction to/from (both) with the provided node.",
            "PAUSE-CRON <0|1>",
            "    Stop periodic cron job processing.",
            "POPULATE <count> [<prefix>] [<size>]",
            "    Create <count> string keys named key:<num>. If <prefix> is specified then",
            "    it is used instead of the 'key' prefix. These are not propagated to",
            "    replicas. Cluster slots are not respected so keys not belonging to the",
            "    current node can be created in cluster mode.",
            "PROTOCOL <type>",
            "    Reply with a test value of the specified type. <type> can be: string,",
            "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
            "    true, false.",
            "SEGFAULT",
            "    Crash the server with sigsegv.",
            "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
            "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
            "SET-ACTIVE-EXPIRE <0|1>",
            "    Setting it to 0 disables expiring keys in background when they are not",
            "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
            "    default.",
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
        ],
    )
}

pub fn register() -> Vec<CommandSpec> {
    vec![CommandSpec::new("debug", -2, "admin noscript loading stale", "", debug)
        .doc("server", "1.0.0", "A container for debugging commands", "Depends on subcommand.")
        .syscmd()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Limits, ZSetValue};

    fn value_digest(entry: &Entry) -> String {
        let mut digest = [0u8; 20];
        mix_value_digest(&mut digest, entry);
        hex(&digest)
    }

    // Golden values from redis-server 7.0.15's DEBUG DIGEST-VALUE.
    #[test]
    fn value_digests_match_redis() {
        assert_eq!(
            value_digest(&Entry::new(Value::string(b"hello"), None, 0)),
            "36b23a1456b2dce2c3ed252c456761301dba8060"
        );
        // An int-encoded string with a TTL: its decimal text, plus the "!!expire!!" mark.
        let n = Entry::new(Value::string(b"12345"), Some(4_102_444_800_000), 0);
        assert_eq!(value_digest(&n), "074a6e8892a0b0b4fcf085794cb69322c36c9d00");
        let mut z = ZSetValue::default();
        z.insert(b"a", 0.1, &Limits::default());
        z.insert(b"b", f64::NEG_INFINITY, &Limits::default());
        assert_eq!(value_digest(&Entry::new(Value::ZSet(z), None, 0)), "fa48bda41961eaa30d989c5e8a983204dcf42d6b");
    }
}
