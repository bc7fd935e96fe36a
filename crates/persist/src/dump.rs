//! DUMP and RESTORE: one value serialized as an RDB object with a footer (Redis's
//! `createDumpPayload` / `verifyDumpPayload` in cluster.c).
//!
//! ```text
//! <type byte> <object, as in an RDB file> <RDB version: u16 LE, 10> <CRC64 of all before: u64 LE>
//! ```

use quince_engine::cmd::{is, parse_i64};
use quince_engine::command::{ArgDoc, ArgType, CommandSpec};
use quince_engine::keyspace::{lru_clock, Entry, Value, LFU_INIT_VAL, LRU_CLOCK_MAX};
use quince_engine::pubsub::notify;
use quince_engine::reply::ReplySink;
use quince_engine::types::Limits;
use quince_engine::{CmdError, CmdResult, Ctx};

use crate::rdb::crc64::crc64;
use crate::rdb::{object_type, read_object, types, write_object, Input, WriteOptions, RDB_VERSION};

/// The DUMP payload of `value`.
pub fn create_payload(value: &Value, options: &WriteOptions) -> Vec<u8> {
    let mut out = vec![object_type(value)];
    write_object(value, options, &mut out);
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Whether the payload's footer is sound: an RDB version this build reads and a matching
/// CRC64 (`verifyDumpPayload`).
pub fn verify_payload(payload: &[u8]) -> bool {
    verify_payload_with(payload, false)
}

/// `verify_payload`, the CRC not checked when `skip_crc` (DEBUG SET-SKIP-CHECKSUM-VALIDATION).
pub fn verify_payload_with(payload: &[u8], skip_crc: bool) -> bool {
    if payload.len() < 10 {
        return false;
    }
    let footer = &payload[payload.len() - 10..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > RDB_VERSION {
        return false;
    }
    if skip_crc {
        return true;
    }
    let crc = crc64(0, &payload[..payload.len() - 8]);
    crc.to_le_bytes() == footer[2..]
}

/// Decodes a verified payload's value in the encoding Redis gives it under `limits`.
/// None for anything RESTORE answers "Bad data format" to (an empty collection included).
pub fn decode_payload(payload: &[u8], limits: &Limits) -> Option<Value> {
    decode_payload_checked(payload, limits).ok()
}

/// `decode_payload`; the error is the log line for a structurally corrupt payload
/// ("Internal error in RDB reading -> Ziplist integrity check failed.", which Redis logs at
/// verbose level for RESTORE), or None for another refusal.
pub fn decode_payload_checked(payload: &[u8], limits: &Limits) -> Result<Value, Option<String>> {
    // Like Redis, the object is read from the whole payload, footer included.
    let mut input = Input::new(payload, false);
    let rdb_type = input.byte().map_err(|_| None)?;
    if !types::is_object_type(rdb_type) {
        return Err(None);
    }
    match read_object(&mut input, rdb_type, limits) {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(None),
        Err(e @ crate::rdb::RdbError::Corrupt(_)) => Err(Some(e.to_string())),
        Err(_) => Err(None),
    }
}

/// The write options DUMP uses: `rdbcompression` and the list node settings now.
pub(crate) fn dump_options(ctx: &Ctx<'_>) -> WriteOptions {
    let compress = ctx.engine.config.read().get_int("rdbcompression") != 0;
    let limits = ctx.limits();
    WriteOptions {
        compress,
        list_max_listpack_size: limits.list_max_listpack_size,
        list_compress_depth: limits.list_compress_depth,
    }
}

/// DUMP key — O(1) to find the key, O(N*M) to serialize it.
fn dump(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let options = dump_options(ctx);
    let now = ctx.now_ms;
    let payload = ctx.db(args[1]).get(args[1], now).map(|e| create_payload(&e.value, &options));
    ctx.hit(args[1], payload.is_some());
    match payload {
        Some(p) => out.bulk(&p),
        None => out.null(),
    }
    Ok(())
}

/// RESTORE's options after the serialized value.
struct RestoreOptions {
    replace: bool,
    absttl: bool,
    idle: Option<i64>,
    freq: Option<i64>,
}

fn parse_restore_options(args: &[&[u8]]) -> Result<RestoreOptions, CmdError> {
    let mut o = RestoreOptions { replace: false, absttl: false, idle: None, freq: None };
    let mut j = 4;
    while j < args.len() {
        let more = j + 1 < args.len();
        if is(args[j], "replace") {
            o.replace = true;
        } else if is(args[j], "absttl") {
            o.absttl = true;
        } else if is(args[j], "idletime") && more && o.freq.is_none() {
            let idle = parse_i64(args[j + 1])?;
            if idle < 0 {
                return Err(CmdError::msg("ERR Invalid IDLETIME value, must be >= 0"));
            }
            o.idle = Some(idle);
            j += 1;
        } else if is(args[j], "freq") && more && o.idle.is_none() {
            let freq = parse_i64(args[j + 1])?;
            if !(0..=255).contains(&freq) {
                return Err(CmdError::msg("ERR Invalid FREQ value, must be >= 0 and <= 255"));
            }
            o.freq = Some(freq);
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    Ok(o)
}

/// The access field of a restored key (`objectSetLRUOrLFU`): FREQ under an LFU policy,
/// IDLETIME otherwise, else a fresh access.
fn restored_access(ctx: &Ctx<'_>, options: &RestoreOptions) -> u32 {
    let now = ctx.now_ms;
    if let quince_engine::AccessMode::Lfu { .. } = ctx.access_mode {
        let minutes = (((now / 60_000) as u64) & 0xffff) as u32;
        let counter = options.freq.map_or(LFU_INIT_VAL, |f| f as u32);
        return (minutes << 8) | counter;
    }
    let clock = lru_clock(now);
    match options.idle {
        Some(idle) => {
            let idle = (idle as u64 % (u64::from(LRU_CLOCK_MAX) + 1)) as u32;
            if idle > clock {
                LRU_CLOCK_MAX - (idle - clock)
            } else {
                clock - idle
            }
        }
        None => clock,
    }
}

/// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
/// — O(N*M) to rebuild the value (O(N*M*log(N)) for sorted sets).
fn restore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let options = parse_restore_options(args)?;
    let key = args[1];
    let now = ctx.now_ms;
    if !options.replace && ctx.db(key).contains(key, now) {
        return Err(CmdError::msg("BUSYKEY Target key name already exists."));
    }
    let mut ttl = parse_i64(args[2])?;
    if ttl < 0 {
        return Err(CmdError::msg("ERR Invalid TTL value, must be >= 0"));
    }
    let payload = args[3];
    let skip_crc = crate::Layer::of(ctx.engine).is_some_and(|l| l.skip_checksum());
    if !verify_payload_with(payload, skip_crc) {
        return Err(CmdError::msg("ERR DUMP payload version or checksum are wrong"));
    }
    let limits = ctx.limits();
    let value = match decode_payload_checked(payload, &limits) {
        Ok(value) => value,
        Err(why) => {
            if let (Some(line), Some(layer)) = (why, crate::Layer::of(ctx.engine)) {
                layer.log_line(crate::layer::LogLevel::Verbose, &line);
            }
            return Err(CmdError::msg("ERR Bad data format"));
        }
    };
    let deleted = options.replace && ctx.db(key).remove(key, now);
    if ttl != 0 && !options.absttl {
        ttl = ttl.saturating_add(now);
    }
    // A TTL already past deletes the key, except when applying logged effects (loading),
    // which keep the dataset exactly as logged.
    if ttl != 0 && ttl <= now && !ctx.obeying() {
        // Already expired: the key is gone (a replaced one deleted), as Redis answers OK.
        if deleted {
            ctx.notify(notify::GENERIC, "del", key);
            // Logged as the deletion it was (Redis 7.0 rewrites the command to DEL).
            ctx.propagate_as(&[&b"DEL"[..], key]);
        }
        out.simple("OK");
        return Ok(());
    }
    let access = restored_access(ctx, &options);
    let db = ctx.db(key);
    if deleted {
        // Redis counts one change for the delete-and-add.
        db.dirty = db.dirty.saturating_sub(1);
    }
    db.insert_entry(key, Entry::new(value, (ttl != 0).then_some(ttl), access), now);
    ctx.notify(notify::GENERIC, "restore", key);
    // A relative TTL is logged as the absolute time it became (argument 2, plus ABSTTL).
    if ttl != 0 && !options.absttl && ctx.propagating() {
        let absolute = ttl.to_string();
        let mut logged: Vec<&[u8]> = args.to_vec();
        logged[2] = absolute.as_bytes();
        logged.push(b"ABSTTL");
        ctx.propagate_as(&logged);
    }
    out.simple("OK");
    Ok(())
}

/// DUMP and RESTORE, declared as Redis 7.0.15's src/commands/dump.json and restore.json.
pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::new("dump", 2, "readonly", "keyspace", dump)
            .doc("generic", "2.6.0", "Return a serialized version of the value stored at the specified key.", "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).")
            .tips(&["nondeterministic_output"])
            .keys("RO access", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0)]),
        CommandSpec::new("restore", -4, "write denyoom", "keyspace dangerous", restore)
            .doc("generic", "2.6.0", "Create a key using the provided serialized value, previously obtained using DUMP.", "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).")
            .history(&[("3.0.0", "Added the `REPLACE` modifier."), ("5.0.0", "Added the `ABSTTL` modifier."), ("5.0.0", "Added the `IDLETIME` and `FREQ` options.")])
            .keys("OW update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("ttl", ArgType::Integer),
                ArgDoc::new("serialized-value", ArgType::String),
                ArgDoc::token("replace", "REPLACE").optional().since("3.0.0"),
                ArgDoc::token("absttl", "ABSTTL").optional().since("5.0.0"),
                ArgDoc::new("seconds", ArgType::Integer).after("IDLETIME").optional().since("5.0.0"),
                ArgDoc::new("frequency", ArgType::Integer).after("FREQ").optional().since("5.0.0"),
            ]),
        // What MIGRATE sends in cluster mode: RESTORE, allowed on a slot being imported.
        CommandSpec::new("restore-asking", -4, "write denyoom asking", "keyspace dangerous", restore)
            .doc("server", "3.0.0", "An internal command for migrating keys in a cluster", "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).")
            .history(&[("3.0.0", "Added the `REPLACE` modifier."), ("5.0.0", "Added the `ABSTTL` modifier."), ("5.0.0", "Added the `IDLETIME` and `FREQ` options.")])
            .syscmd()
            .keys("OW update", 1, 0, 1),
    ]
}
