//! Snapshot files: writing an RDB (or an AOF base) safely — a temp file, fsync, rename,
//! fsync of the directory — and loading one.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use quince_engine::Engine;

use crate::aof::manifest::sync_dir;
use crate::layer::LogLevel;
use crate::rdb;

/// Writes the RDB file `dir/name` through `dir/temp-<pid>.rdb`, with the replication
/// history `repl` (ID and offset) in its aux fields when there is one.
pub fn save_file(
    engine: &Engine,
    dir: &Path,
    name: &str,
    pid: i32,
    repl: Option<(String, u64, usize)>,
) -> Result<(), String> {
    let temp = dir.join(format!("temp-{pid}.rdb"));
    let result = write_rdb(engine, &temp, false, repl).and_then(|()| {
        std::fs::rename(&temp, dir.join(name))
            .map_err(|e| format!("Error moving temp DB file on the final destination: {e}"))?;
        sync_dir(dir).map_err(|e| format!("Failed to fsync directory: {e}"))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Writes an AOF base file at `path`: an RDB (with the `aof-base` aux field) or commands.
pub fn write_base_file(engine: &Engine, path: &Path, rdb: bool) -> Result<(), String> {
    if rdb {
        return write_rdb(engine, path, true, None);
    }
    let file = File::create(path).map_err(|e| format!("Failed opening {}: {e}", path.display()))?;
    let mut out = BufWriter::with_capacity(1 << 16, file);
    // As Redis's rewriteAppendOnlyFileRio: the time of the rewrite first.
    if engine.config.read().get_bool("aof-timestamp-enabled") {
        let now_s = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        out.write_all(crate::aof::writer::timestamp_annotation(now_s).as_bytes())
            .map_err(|e| format!("Write error writing the AOF base: {e}"))?;
    }
    crate::aof::rewrite::write_commands(engine, &mut out)
        .map_err(|e| format!("Write error writing the AOF base: {e}"))?;
    finish(out)
}

fn write_rdb(engine: &Engine, path: &Path, aof_base: bool, repl: Option<(String, u64, usize)>) -> Result<(), String> {
    let file = File::create(path).map_err(|e| format!("Failed opening the temp RDB file {}: {e}", path.display()))?;
    let mut out = BufWriter::with_capacity(1 << 16, file);
    let options = rdb::SaveOptions { repl, ..rdb::SaveOptions::from_config(engine, aof_base) };
    rdb::write_snapshot(engine, &mut out, &options).map_err(|e| format!("Write error saving DB on disk: {e}"))?;
    finish(out)
}

fn finish(out: BufWriter<File>) -> Result<(), String> {
    let file = out.into_inner().map_err(|e| format!("Write error saving DB on disk: {}", e.error()))?;
    file.sync_all().map_err(|e| format!("Write error saving DB on disk: {e}"))
}

/// Loads an RDB file into the engine; the number of keys loaded. An AOF base keeps keys
/// whose TTL passed (they expire later, as Redis loads an RDB preamble); a snapshot skips
/// them, as a master does. With `merge` (DEBUG RELOAD MERGE) keys and function libraries
/// already present are replaced instead of failing the load.
pub fn load_file(
    engine: &Engine,
    path: &Path,
    aof_base: bool,
    merge: bool,
    log: &mut dyn FnMut(LogLevel, &str),
) -> Result<u64, String> {
    load_file_stats(engine, path, aof_base, merge, log).map(|(keys, _)| keys)
}

/// `load_file`, with the offset where the RDB data ends (an AOF base may go on with
/// commands after it).
pub fn load_file_stats(
    engine: &Engine,
    path: &Path,
    aof_base: bool,
    merge: bool,
    log: &mut dyn FnMut(LogLevel, &str),
) -> Result<(u64, u64), String> {
    let file = File::open(path).map_err(|e| format!("Fatal error loading the DB: {e}. Exiting."))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut input = BufReader::with_capacity(1 << 16, file);
    let start = std::time::Instant::now();
    let mut last_report = std::time::Instant::now();
    let mut progress = |keys: u64, bytes: u64| {
        if last_report.elapsed().as_secs() >= 1 {
            last_report = std::time::Instant::now();
            let pct = (bytes * 100).checked_div(size).unwrap_or(100);
            log(LogLevel::Notice, &format!("Loading RDB: {keys} keys, {bytes} of {size} bytes ({pct}%)"));
        }
    };
    // A replica keeps keys whose TTL passed (its master's DELs remove them), as Redis
    // loads when it is not a master (iAmMaster): `replicaof` set, or a cluster replica.
    let replica = engine.cluster.is_replica() || !engine.config.read().get("replicaof").unwrap_or("").is_empty();
    let options = rdb::LoadOptions {
        skip_expired: !aof_base && !replica,
        allow_duplicates: merge,
        verify_checksum: !crate::Layer::of(engine).is_some_and(|l| l.skip_checksum()),
        collect_expired: !aof_base,
        key_load_delay_us: engine.config.read().get_int("key-load-delay"),
    };
    let stats = rdb::load_snapshot(engine, &mut input, &options, &mut progress).map_err(|e| {
        // As Redis's rdbReportCorruptRDB after its checksum line: the failure named.
        if matches!(e, rdb::RdbError::Checksum { .. }) {
            log(LogLevel::Warning, &e.to_string());
            return "Internal error in RDB reading -> RDB CRC error".to_string();
        }
        String::from(e)
    })?;
    let keys = stats.keys_loaded;
    if let Some(layer) = crate::Layer::of(engine) {
        layer.note_rdb_load(stats.keys_loaded, stats.keys_expired);
        let aux = |name: &[u8]| {
            stats.aux.iter().find(|(k, _)| k == name).map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        };
        if let (Some(id), Some(offset)) = (aux(b"repl-id"), aux(b"repl-offset").and_then(|o| o.parse().ok())) {
            let db = aux(b"repl-stream-db").and_then(|d| d.parse().ok()).unwrap_or(0);
            layer.replication.note_loaded_history(id, offset, db, stats.expired.clone());
        }
    }
    log(
        LogLevel::Verbose,
        &format!("RDB {} loaded: {keys} keys in {:.3} seconds", path.display(), start.elapsed().as_secs_f64()),
    );
    Ok((keys, stats.bytes))
}
