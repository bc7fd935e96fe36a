//! Whole RDB files: `write_snapshot` saves an engine's dataset and function libraries as
//! redis-server 7.0 does (`rdbSaveRio`), `load_snapshot` loads any RDB file of version 1 to
//! 10 into an engine (`rdbLoadRioWithLoadingCtx`).
//!
//! ```text
//! "REDIS0010"
//! AUX redis-ver, redis-bits, ctime, used-mem, aof-base       (0xFA key value)
//! FUNCTION2 <library code>                                    (0xF5, one per library)
//! per non-empty database: SELECTDB <n> (0xFE), RESIZEDB <keys> <expires> (0xFB),
//!   per key: [EXPIRETIME_MS <i64 LE>] [IDLE <len> | FREQ <byte>] <type> <key> <object>
//! EOF (0xFF) <CRC64 of everything before, u64 LE; 0 when rdbchecksum is off>
//! ```

use std::io::{self, Read, Write};
use std::sync::atomic::Ordering;

use quince_engine::keyspace::{lfu_decayed, lru_clock, Entry, LFU_INIT_VAL, LRU_CLOCK_MAX};
use quince_engine::Engine;

use super::crc64::crc64;
use super::decode::Input;
use super::encode::Output;
use super::error::RdbError;
use super::write::{object_type, write_value, WriteOptions};
use super::{opcodes, read_object, types, RDB_VERSION};

/// How `write_snapshot` saves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveOptions {
    /// `rdbcompression`: LZF-compress strings over 20 bytes when that saves space.
    pub compression: bool,
    /// `rdbchecksum`: end with the CRC64 (else 8 zero bytes).
    pub checksum: bool,
    /// The `aof-base` aux field: 1 when the file is the base of a multi-part AOF.
    pub aof_base: bool,
    /// `rdb-key-save-delay` (a testing aid, as in Redis): microseconds to sleep after each
    /// key; negative: sleep 1 µs after one key in that many, on average.
    pub key_save_delay_us: i64,
    /// The replication ID and offset the snapshot is the dataset of (the `repl-id` and
    /// `repl-offset` aux fields, and the database the stream is in: `repl-stream-db`), as Redis writes them for a
    /// replica's sync and when it has a replication history.
    pub repl: Option<(String, u64, usize)>,
    /// Functions only, no keys (a replica's `REPLCONF rdb-filter-only functions`, as
    /// `redis-cli --functions-rdb` asks).
    pub functions_only: bool,
}

impl SaveOptions {
    /// The options the engine's configuration asks for (`rdbcompression`, `rdbchecksum`);
    /// `aof_base` for the base file of a multi-part AOF.
    pub fn from_config(engine: &Engine, aof_base: bool) -> Self {
        let config = engine.config.read();
        Self {
            compression: config.get_int("rdbcompression") != 0,
            checksum: config.get_int("rdbchecksum") != 0,
            aof_base,
            key_save_delay_us: config.get_int("rdb-key-save-delay"),
            repl: None,
            functions_only: false,
        }
    }
}

impl Default for SaveOptions {
    fn default() -> Self {
        Self {
            compression: true,
            checksum: true,
            aof_base: false,
            key_save_delay_us: 0,
            repl: None,
            functions_only: false,
        }
    }
}

/// What `write_snapshot` wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SaveStats {
    pub keys: u64,
    pub bytes: u64,
}

/// Writes through to `inner`, keeping the CRC64 and byte count.
struct Sink<W> {
    inner: W,
    crc: u64,
    checksum: bool,
    bytes: u64,
}

impl<W: Write> Sink<W> {
    fn put(&mut self, data: &[u8]) -> io::Result<()> {
        if self.checksum {
            self.crc = crc64(self.crc, data);
        }
        self.bytes += data.len() as u64;
        self.inner.write_all(data)
    }

    /// Writes out and empties `o` once it holds enough to be worth a write.
    fn drain(&mut self, o: &mut Output, force: bool) -> io::Result<()> {
        if force || o.buf.len() >= 64 * 1024 {
            self.put(&o.buf)?;
            o.buf.clear();
        }
        Ok(())
    }
}

fn aux(o: &mut Output, key: &str, value: &[u8]) {
    o.byte(opcodes::AUX);
    o.string(key.as_bytes());
    o.string(value);
}

/// Which per-key access data the eviction policy wants saved (`MAXMEMORY_FLAG_LRU/LFU`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum AccessData {
    None,
    Idle,
    Freq { decay_minutes: u32 },
}

/// Saves every database and function library of `engine` to `writer` in RDB version 10,
/// as redis-server 7.0.15 lays it out, and flushes it. Keys whose TTL passed are saved too
/// (Redis does; loading skips them).
///
/// Locks one shard at a time. The caller guarantees a consistent dataset: it holds
/// `Engine::exclusive()` or runs in a forked child. Nothing in the engine changes.
pub fn write_snapshot<W: Write>(engine: &Engine, writer: W, options: &SaveOptions) -> io::Result<SaveStats> {
    let now = engine.clock.now_ms();
    let (list_max_listpack_size, list_compress_depth, policy, decay_minutes) = {
        let config = engine.config.read();
        (
            config.get_int("list-max-listpack-size"),
            config.get_int("list-compress-depth"),
            config.get("maxmemory-policy").unwrap_or("noeviction").to_string(),
            engine.hot.lfu_decay_time.load(Ordering::Relaxed),
        )
    };
    let access = if policy.contains("lru") {
        AccessData::Idle
    } else if policy.contains("lfu") {
        AccessData::Freq { decay_minutes }
    } else {
        AccessData::None
    };
    let write_options = WriteOptions { compress: options.compression, list_max_listpack_size, list_compress_depth };
    let mut sink = Sink { inner: writer, crc: 0, checksum: options.checksum, bytes: 0 };
    let mut o = Output::new(options.compression);
    o.raw(format!("REDIS{RDB_VERSION:04}").as_bytes());
    aux(&mut o, "redis-ver", quince_engine::REDIS_VERSION.as_bytes());
    aux(&mut o, "redis-bits", usize::BITS.to_string().as_bytes());
    aux(&mut o, "ctime", (now / 1000).to_string().as_bytes());
    aux(&mut o, "used-mem", engine.used_memory().unwrap_or(0).to_string().as_bytes());
    if let Some((id, offset, db)) = &options.repl {
        aux(&mut o, "repl-stream-db", db.to_string().as_bytes());
        aux(&mut o, "repl-id", id.as_bytes());
        aux(&mut o, "repl-offset", offset.to_string().as_bytes());
    }
    aux(&mut o, "aof-base", if options.aof_base { b"1" } else { b"0" });
    for code in engine.scripting.library_codes() {
        o.byte(opcodes::FUNCTION2);
        o.string(&code);
    }
    let mut keys = 0u64;
    let shards = engine.keyspace.shard_count();
    let databases = if options.functions_only { 0 } else { engine.keyspace.databases() };
    for db in 0..databases {
        let (size, expires) = (0..shards).fold((0usize, 0usize), |(n, e), s| {
            let shard = engine.keyspace.lock(s);
            (n + shard.dbs[db].len(), e + shard.dbs[db].expires_len())
        });
        if size == 0 {
            continue;
        }
        o.byte(opcodes::SELECTDB);
        o.len(db as u64);
        o.byte(opcodes::RESIZEDB);
        o.len(size as u64);
        o.len(expires as u64);
        for s in 0..shards {
            let shard = engine.keyspace.lock(s);
            for (key, entry) in shard.dbs[db].iter_all() {
                write_key(&mut o, key, entry, access, now, &write_options);
                keys += 1;
                sink.drain(&mut o, false)?;
                key_save_delay(options.key_save_delay_us, keys);
                crate::child_info::progress(keys);
            }
        }
    }
    o.byte(opcodes::EOF);
    sink.drain(&mut o, true)?;
    let crc = if options.checksum { sink.crc } else { 0 };
    sink.put(&crc.to_le_bytes())?;
    sink.inner.flush()?;
    Ok(SaveStats { keys, bytes: sink.bytes })
}

/// Redis's debugDelay after the `nth` key saved or loaded (`rdb-key-save-delay`,
/// `key-load-delay`).
fn key_save_delay(delay_us: i64, nth: u64) {
    let sleep_us = match delay_us {
        0 => 0,
        d if d > 0 => d as u64,
        // Redis draws at random; every |d|-th key gives the same average delay.
        d => u64::from(nth.is_multiple_of(d.unsigned_abs())),
    };
    if sleep_us > 0 {
        std::thread::sleep(std::time::Duration::from_micros(sleep_us));
    }
}

/// `rdbSaveKeyValuePair`.
fn write_key(o: &mut Output, key: &[u8], entry: &Entry, access: AccessData, now: i64, options: &WriteOptions) {
    if let Some(at) = entry.expire_at_ms() {
        o.byte(opcodes::EXPIRETIME_MS);
        o.ms_time(at);
    }
    match access {
        AccessData::None => {}
        AccessData::Idle => {
            o.byte(opcodes::IDLE);
            o.len(entry.idle_seconds(now));
        }
        AccessData::Freq { decay_minutes } => {
            o.byte(opcodes::FREQ);
            o.byte(lfu_decayed(entry.access, now, decay_minutes) as u8);
        }
    }
    o.byte(object_type(&entry.value));
    o.string(key);
    write_value(o, &entry.value, options);
}

/// How often (in bytes read) `load_snapshot` reports progress, like Redis's
/// `loading-process-events-interval-bytes` default.
const PROGRESS_INTERVAL: u64 = 2 * 1024 * 1024;

/// How `load_snapshot` loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadOptions {
    /// Skip keys whose TTL already passed (a master loading its own file). False for a
    /// replica or an AOF preamble, which must keep the dataset as the file has it.
    pub skip_expired: bool,
    /// Replace keys and function libraries that already exist (DEBUG RELOAD's
    /// `RDBFLAGS_ALLOW_DUP`); otherwise a duplicate key is an error.
    pub allow_duplicates: bool,
    /// Check the CRC64 at the end (`rdbchecksum yes`); a stored 0 is never checked.
    pub verify_checksum: bool,
    /// Keep the skipped expired keys in `LoadStats::expired` (a master restarting with a
    /// replication history feeds their deletions to its replicas, as Redis's
    /// RDBFLAGS_FEED_REPL).
    pub collect_expired: bool,
    /// `key-load-delay` (a testing aid, as in Redis): microseconds to sleep after each key
    /// loaded; negative: 1 µs after one key in that many.
    pub key_load_delay_us: i64,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            skip_expired: true,
            allow_duplicates: false,
            verify_checksum: true,
            collect_expired: false,
            key_load_delay_us: 0,
        }
    }
}

/// What `load_snapshot` loaded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadStats {
    /// The file's RDB version.
    pub version: u32,
    pub keys_loaded: u64,
    /// Keys skipped because their TTL had passed.
    pub keys_expired: u64,
    /// Empty collections skipped (older Redis versions could save them).
    pub empty_keys_skipped: u64,
    pub functions_loaded: u64,
    /// The AUX fields in file order (redis-ver, ctime, repl-id...).
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
    /// Bytes read, checksum included.
    pub bytes: u64,
    /// (database, key) of the skipped expired keys, with `collect_expired`.
    pub expired: Vec<(usize, Vec<u8>)>,
}

/// Loads an RDB file (version 1 to 10) from `reader` into `engine`: keys with their TTLs
/// and LRU/LFU data into their databases, function libraries into the scripting state.
/// `progress(keys_loaded, bytes_read)` runs every couple of megabytes (for loading
/// reports and to serve LOADING replies meanwhile).
///
/// The engine is not emptied first; the caller flushes it when replacing a dataset.
/// Errors are worded like Redis's log lines; on error the engine holds what was loaded
/// before the failure.
pub fn load_snapshot<R: Read>(
    engine: &Engine,
    reader: R,
    options: &LoadOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<LoadStats, RdbError> {
    let mut input = Input::new(reader, options.verify_checksum);
    let mut next_report = PROGRESS_INTERVAL;
    let magic: [u8; 9] = input.array()?;
    if &magic[..5] != b"REDIS" {
        return Err(RdbError::BadMagic);
    }
    let version = std::str::from_utf8(&magic[5..]).ok().and_then(|v| v.parse::<u32>().ok()).unwrap_or(0);
    if version < 1 || version > u32::from(RDB_VERSION) {
        return Err(RdbError::UnsupportedVersion(version));
    }
    let mut stats = LoadStats { version, ..LoadStats::default() };
    let limits = *engine.hot.limits.read();
    let databases = engine.keyspace.databases();
    let lfu = engine.hot.lfu.load(Ordering::Relaxed);
    let now = engine.clock.now_ms();
    let mut db = 0usize;
    let (mut expire_at, mut lru_idle, mut lfu_freq): (Option<i64>, Option<u64>, Option<u8>) = (None, None, None);
    loop {
        if input.offset() >= next_report {
            next_report = input.offset() + PROGRESS_INTERVAL;
            progress(stats.keys_loaded, input.offset());
        }
        let op = input.byte()?;
        match op {
            opcodes::EXPIRETIME => {
                expire_at = Some(i64::from(i32::from_le_bytes(input.array()?)) * 1000);
                continue;
            }
            opcodes::EXPIRETIME_MS => {
                expire_at = Some(input.ms_time()?);
                continue;
            }
            opcodes::FREQ => {
                lfu_freq = Some(input.byte()?);
                continue;
            }
            opcodes::IDLE => {
                lru_idle = Some(input.len()?);
                continue;
            }
            opcodes::EOF => break,
            opcodes::SELECTDB => {
                let n = input.len()?;
                if n >= databases as u64 {
                    return Err(RdbError::TooManyDatabases { configured: databases });
                }
                db = n as usize;
                continue;
            }
            opcodes::RESIZEDB => {
                input.len()?;
                input.len()?;
                continue;
            }
            opcodes::AUX => {
                let key = input.string_bytes()?;
                let value = input.string_bytes()?;
                stats.aux.push((key, value));
                continue;
            }
            opcodes::MODULE_AUX => {
                return Err(RdbError::Module(
                    "The RDB file contains AUX module data I can't load: no matching module".into(),
                ))
            }
            opcodes::FUNCTION | opcodes::FUNCTION2 => {
                let code = read_function(&mut input, op)?;
                quince_engine::cmd::scripting::load_library_code(engine, &code, options.allow_duplicates)
                    .map_err(|e| RdbError::Function(e.strip_prefix("ERR ").unwrap_or(&e).to_string()))?;
                stats.functions_loaded += 1;
                continue;
            }
            t if types::is_object_type(t) => {}
            t => return Err(RdbError::corrupt(format!("Unknown RDB encoding type {t}"))),
        }
        let key = input.string_bytes()?;
        let value = read_object(&mut input, op, &limits)?;
        let (at, idle, freq) = (expire_at.take(), lru_idle.take(), lfu_freq.take());
        let Some(value) = value else {
            stats.empty_keys_skipped += 1;
            continue;
        };
        if options.skip_expired && at.is_some_and(|at| at < now) {
            stats.keys_expired += 1;
            if options.collect_expired {
                stats.expired.push((db, key));
            }
            continue;
        }
        let access = if lfu {
            ((((now / 60_000) as u64 & 0xffff) as u32) << 8) | u32::from(freq.unwrap_or(LFU_INIT_VAL as u8))
        } else {
            let clock = lru_clock(now);
            match idle {
                // objectSetLRUOrLFU: the clock minus the idle seconds, wrapping.
                Some(idle) => {
                    let idle = (idle % (u64::from(LRU_CLOCK_MAX) + 1)) as u32;
                    if idle > clock {
                        LRU_CLOCK_MAX - (idle - clock)
                    } else {
                        clock - idle
                    }
                }
                None => clock,
            }
        };
        let shard = engine.keyspace.shard_of(&key);
        let mut guard = engine.keyspace.lock(shard);
        let table = &mut guard.dbs[db];
        table.set_collect_events(0);
        if table.peek(&key, i64::MIN).is_some() && !options.allow_duplicates {
            return Err(RdbError::DuplicateKey { db, key });
        }
        table.insert_entry(&key, Entry::new(value, at, access), i64::MIN);
        // Loading is not a change of the dataset: it does not count in `dirty`.
        table.dirty = table.dirty.saturating_sub(1);
        stats.keys_loaded += 1;
        drop(guard);
        key_save_delay(options.key_load_delay_us, stats.keys_loaded);
    }
    if version >= 5 {
        let expected = input.crc();
        let stored = u64::from_le_bytes(input.array()?);
        if options.verify_checksum && stored != 0 && stored != expected {
            return Err(RdbError::Checksum { expected, got: stored });
        }
    }
    stats.bytes = input.offset();
    Ok(stats)
}

/// A library's code from FUNCTION2, or rebuilt from 7.0-rc's FUNCTION layout.
fn read_function<R: Read>(input: &mut Input<R>, op: u8) -> Result<Vec<u8>, RdbError> {
    if op == opcodes::FUNCTION2 {
        return input.string_bytes();
    }
    let name = input.string_bytes()?;
    let engine_name = input.string_bytes()?;
    if input.len()? != 0 {
        input.string_bytes()?; // the description, dropped as Redis does
    }
    let blob = input.string_bytes()?;
    let mut code = b"#!".to_vec();
    code.extend_from_slice(&engine_name);
    code.extend_from_slice(b" name=");
    code.extend_from_slice(&name);
    code.push(b'\n');
    code.extend_from_slice(&blob);
    Ok(code)
}

/// FUNCTION DUMP's payload: each library as FUNCTION2 and its code (LZF when `compress`
/// and it saves space), then the RDB version and the CRC64, as Redis's functionDumpCommand.
pub fn function_payload(codes: &[Vec<u8>], compress: bool) -> Vec<u8> {
    let mut o = Output::new(compress);
    for code in codes {
        o.byte(opcodes::FUNCTION2);
        o.string(code);
    }
    let mut out = o.buf;
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = super::crc64::crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// FUNCTION RESTORE: the library codes of a payload, or the error Redis replies (without
/// the `ERR ` prefix).
pub fn function_payload_codes(payload: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    if !crate::dump::verify_payload(payload) {
        return Err("DUMP payload version or checksum are wrong".into());
    }
    let body = &payload[..payload.len() - 10];
    let mut input = Input::new(body, false);
    let mut codes = Vec::new();
    while input.offset() < body.len() as u64 {
        let op = input.byte().map_err(|_| "can not read data type".to_string())?;
        if op != opcodes::FUNCTION && op != opcodes::FUNCTION2 {
            return Err("given type is not a function".into());
        }
        codes
            .push(read_function(&mut input, op).map_err(|_| "failed loading the given functions payload".to_string())?);
    }
    Ok(codes)
}
