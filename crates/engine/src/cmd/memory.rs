//! MEMORY USAGE (per-key memory estimates), STATS and DOCTOR (where memory goes),
//! MALLOC-STATS and PURGE (the allocator's), HELP.

use std::sync::atomic::Ordering;

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{Entry, StrValue, Value};
use crate::reply::ReplySink;

use super::{is, parse_i64};

/// Bytes a key and its value take: the key, the value's payload and the fixed per-entry
/// overhead of the table slot (entry struct plus hash-table bookkeeping).
pub fn entry_usage(key: &[u8], entry: &Entry) -> usize {
    let slot = std::mem::size_of::<Entry>() + std::mem::size_of::<Box<[u8]>>() + 8;
    let value = match &entry.value {
        Value::Str(StrValue::Int(_)) => 0,
        Value::Str(StrValue::Embstr(b)) => b.heap_bytes(),
        Value::Str(StrValue::Raw(b)) => b.capacity(),
        // Collections: element bytes plus a per-element allocation and pointer overhead.
        Value::List(l) => l.iter().map(|i| i.len() + 24).sum(),
        Value::Hash(h) => h.iter().map(|(f, v)| f.len() + v.len() + 48).sum(),
        // A small packed set: its one buffer.
        Value::Set(crate::types::SetValue::Small(b)) => b.len(),
        Value::Set(set) => set.iter().map(|m| m.len() + 24).sum(),
        Value::ZSet(z) => z.iter().map(|(m, _)| m.len() + 48).sum(),
        Value::Stream(st) => st.data_bytes(),
    };
    let ttl = if entry.expire_at_ms().is_some() { key.len() + 16 } else { 0 };
    slot + key.len() + value + ttl
}

/// MEMORY USAGE key [SAMPLES count] — O(1) for strings.
fn memory_usage(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut j = 3;
    while j < args.len() {
        if is(args[j], "SAMPLES") && j + 1 < args.len() {
            if parse_i64(args[j + 1])? < 0 {
                return Err(CmdError::Syntax);
            }
            j += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    let (key, now) = (args[2], ctx.now_ms);
    match ctx.db(key).peek(key, now) {
        Some(entry) => out.integer(entry_usage(key, entry) as i64),
        None => out.null(),
    }
    Ok(())
}

/// Where the server's memory goes (Redis's getMemoryOverheadData): the structures the
/// server keeps besides the dataset, measured where quince measures them.
struct Overhead {
    total_allocated: u64,
    startup_allocated: u64,
    peak_allocated: u64,
    /// Bytes buffered for replicas, and for the other clients (their read buffers and
    /// pending output).
    clients_slaves: u64,
    clients_normal: u64,
    normal_clients: u64,
    replicas: u64,
    aof_buffer: u64,
    lua_caches: u64,
    functions_caches: u64,
    /// (database, key-table bytes, expiry-index bytes) of each database holding keys.
    dbs: Vec<(usize, u64, u64)>,
    overhead_total: u64,
    total_keys: u64,
    bytes_per_key: u64,
    dataset: u64,
    dataset_perc: f32,
    peak_perc: f32,
    /// The allocator's allocated, active and resident bytes, and the process's RSS.
    allocator: (u64, u64, u64),
    rss: u64,
    cached_scripts: u64,
}

fn overhead(ctx: &Ctx<'_>) -> Overhead {
    let engine = ctx.engine;
    let rss = super::info::rss_bytes();
    let total_allocated = engine.used_memory().unwrap_or(rss);
    let peak_allocated = engine.note_memory_peak(total_allocated);
    let startup_allocated = engine.startup_memory();
    let (mut clients_slaves, mut clients_normal, mut replicas, mut normal_clients) = (0, 0, 0, 0);
    for handle in engine.clients.all() {
        let bytes = (handle.qbuf.load(Ordering::Relaxed)
            + handle.qbuf_free.load(Ordering::Relaxed)
            + handle.pending_output()) as u64;
        if handle.has_flag(crate::clients::flag::REPLICA) {
            clients_slaves += bytes;
            replicas += 1;
        } else {
            clients_normal += bytes;
            normal_clients += 1;
        }
    }
    let aof_buffer = engine.persistence().map_or(0, |p| p.aof_buffer_bytes()) as u64;
    let scripts = engine.scripting.memory();
    let (lua_caches, functions_caches) = (scripts.scripts_eval as u64, scripts.functions_code as u64);
    let mut total_keys = 0;
    let mut dbs = Vec::new();
    let mut overhead_total =
        startup_allocated + clients_slaves + clients_normal + aof_buffer + lua_caches + functions_caches;
    for (db, keys, main, expires) in engine.keyspace.table_overheads() {
        total_keys += keys as u64;
        overhead_total += (main + expires) as u64;
        dbs.push((db, main as u64, expires as u64));
    }
    let net_usage = if total_allocated > startup_allocated { total_allocated - startup_allocated } else { 1 };
    let dataset = total_allocated.saturating_sub(overhead_total);
    // As Redis, which reads them only with jemalloc: otherwise the RSS stands for all three.
    let allocator = engine.allocator_hooks().and_then(|h| (h.sizes)()).unwrap_or((total_allocated, rss, rss));
    Overhead {
        total_allocated,
        startup_allocated,
        peak_allocated,
        clients_slaves,
        clients_normal,
        normal_clients,
        replicas,
        aof_buffer,
        lua_caches,
        functions_caches,
        dbs,
        overhead_total,
        total_keys,
        bytes_per_key: net_usage.checked_div(total_keys).unwrap_or(0),
        dataset,
        dataset_perc: dataset as f32 * 100.0 / net_usage as f32,
        peak_perc: total_allocated as f32 * 100.0 / peak_allocated.max(1) as f32,
        allocator,
        rss,
        cached_scripts: scripts.cached_scripts as u64,
    }
}

/// `part / whole` as Redis's C `float` division, and the difference.
fn ratio(part: u64, whole: u64) -> (f32, i64) {
    (part as f32 / whole as f32, part as i64 - whole as i64)
}

/// MEMORY STATS — O(1) in the keys (O(N) in the clients and shards): where memory goes.
fn memory_stats(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let o = overhead(ctx);
    let (allocated, active, resident) = o.allocator;
    out.map(27 + o.dbs.len());
    let mut int = |name: &str, value: i64| {
        out.bulk(name.as_bytes());
        out.integer(value);
    };
    int("peak.allocated", o.peak_allocated as i64);
    int("total.allocated", o.total_allocated as i64);
    int("startup.allocated", o.startup_allocated as i64);
    // No backlog: replicas resync in full (issue 23).
    int("replication.backlog", 0);
    int("clients.slaves", o.clients_slaves as i64);
    int("clients.normal", o.clients_normal as i64);
    // No cluster bus (issue 20).
    int("cluster.links", 0);
    int("aof.buffer", o.aof_buffer as i64);
    int("lua.caches", o.lua_caches as i64);
    int("functions.caches", o.functions_caches as i64);
    for (db, main, expires) in &o.dbs {
        out.bulk(format!("db.{db}").as_bytes());
        out.map(3);
        out.bulk(b"overhead.hashtable.main");
        out.integer(*main as i64);
        out.bulk(b"overhead.hashtable.expires");
        out.integer(*expires as i64);
        // Quince keeps no slot-to-keys map.
        out.bulk(b"overhead.hashtable.slot-to-keys");
        out.integer(0);
    }
    let (alloc_frag, alloc_frag_bytes) = ratio(active, allocated);
    let (alloc_rss, alloc_rss_bytes) = ratio(resident, active);
    let (rss_extra, rss_extra_bytes) = ratio(o.rss, resident);
    let (frag, frag_bytes) = ratio(o.rss, o.total_allocated);
    let mut pairs: Vec<(&str, Result<i64, f32>)> = vec![
        ("overhead.total", Ok(o.overhead_total as i64)),
        ("keys.count", Ok(o.total_keys as i64)),
        ("keys.bytes-per-key", Ok(o.bytes_per_key as i64)),
        ("dataset.bytes", Ok(o.dataset as i64)),
        ("dataset.percentage", Err(o.dataset_perc)),
        ("peak.percentage", Err(o.peak_perc)),
        ("allocator.allocated", Ok(allocated as i64)),
        ("allocator.active", Ok(active as i64)),
        ("allocator.resident", Ok(resident as i64)),
        ("allocator-fragmentation.ratio", Err(alloc_frag)),
        ("allocator-fragmentation.bytes", Ok(alloc_frag_bytes)),
        ("allocator-rss.ratio", Err(alloc_rss)),
        ("allocator-rss.bytes", Ok(alloc_rss_bytes)),
        ("rss-overhead.ratio", Err(rss_extra)),
        ("rss-overhead.bytes", Ok(rss_extra_bytes)),
        ("fragmentation", Err(frag)),
        ("fragmentation.bytes", Ok(frag_bytes)),
    ];
    for (name, value) in pairs.drain(..) {
        out.bulk(name.as_bytes());
        match value {
            Ok(n) => out.integer(n),
            // Redis computes these as C floats and replies with their double.
            Err(f) => out.double(f as f64),
        }
    }
    Ok(())
}

/// MEMORY DOCTOR — O(N) in the clients: Redis's memory report, from the same figures.
fn memory_doctor(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let o = overhead(ctx);
    let (allocated, active, resident) = o.allocator;
    let mut found: Vec<&str> = Vec::new();
    let empty = o.total_allocated < 5 * 1024 * 1024;
    let high_frag;
    if !empty {
        let over = |(r, bytes): (f32, i64), limit: f32| r > limit && bytes > 10 << 20;
        if o.peak_allocated as f32 / o.total_allocated as f32 > 1.5 {
            found.push(PEAK);
        }
        high_frag = over(ratio(o.rss, o.total_allocated), 1.4);
        if high_frag {
            found.push("");
        }
        if over(ratio(active, allocated), 1.1) {
            found.push(ALLOC_FRAG);
        }
        if over(ratio(resident, active), 1.1) {
            found.push(ALLOC_RSS);
        }
        if over(ratio(o.rss, resident), 1.1) {
            found.push(PROC_RSS);
        }
        if o.replicas > 0 && o.clients_slaves / o.replicas > 10 * 1024 * 1024 {
            found.push(REPLICA_BUF);
        }
        if o.normal_clients > 0 && o.clients_normal / o.normal_clients > 200 * 1024 {
            found.push(CLIENT_BUF);
        }
        if o.cached_scripts > 1000 {
            found.push(MANY_SCRIPTS);
        }
    }
    let report = if empty {
        "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n".to_string()
    } else if found.is_empty() {
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
            .to_string()
    } else {
        let mut s = "Sam, I detected a few issues in this Redis instance memory implants:\n\n".to_string();
        let allocator = match ctx.engine.allocator_hooks() {
            Some(_) => "jemalloc",
            None => "libc",
        };
        // In Redis's order (the replica and client buffer reports come after the RSS ones).
        for part in found {
            if part.is_empty() {
                s.push_str(&format!(" * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"{allocator}\".\n\n"));
            } else {
                s.push_str(part);
            }
        }
        s.push_str("I'm here to keep you safe, Sam. I want to help you.\n");
        s
    };
    out.verbatim(b"txt", report.as_bytes());
    Ok(())
}

const PEAK: &str = " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n";
const ALLOC_FRAG: &str = " * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n";
const ALLOC_RSS: &str = " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n";
const PROC_RSS: &str = " * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This problem may be due to Lua scripts or Modules.\n\n";
const REPLICA_BUF: &str = " * Big replica buffers: The replica output buffers in this instance are greater than 10MB for each replica (on average). This likely means that there is some replica instance that is struggling receiving data, either because it is too slow or because of networking issues. As a result, data piles on the master output buffers. Please try to identify what replica is not receiving data correctly and why. You can use the INFO output in order to check the replicas delays and the CLIENT LIST command to check the output buffers of each replica.\n\n";
const CLIENT_BUF: &str = " * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n";
const MANY_SCRIPTS: &str = " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.\n\n";

/// MEMORY MALLOC-STATS — depends on the allocator: its own statistics report.
fn memory_malloc_stats(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let report = match ctx.engine.allocator_hooks() {
        Some(hooks) => (hooks.stats)(),
        None => "Stats not supported for the current allocator".to_string(),
    };
    out.verbatim(b"txt", report.as_bytes());
    Ok(())
}

/// MEMORY PURGE — depends on how much memory the allocator holds unused: gives it back to
/// the system.
fn memory_purge(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if let Some(hooks) = ctx.engine.allocator_hooks() {
        if !(hooks.purge)() {
            return Err(CmdError::msg("ERR Error purging dirty pages"));
        }
    }
    out.simple("OK");
    Ok(())
}

fn memory_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "MEMORY",
        &[
            "DOCTOR",
            "    Return memory problems reports.",
            "MALLOC-STATS",
            "    Return internal statistics report from the memory allocator.",
            "PURGE",
            "    Attempt to purge dirty pages for reclamation by the allocator.",
            "STATS",
            "    Return information about the memory usage of the server.",
            "USAGE <key> [SAMPLES <count>]",
            "    Return memory in bytes used by <key> and its value. Nested values are",
            "    sampled up to <count> times (default: 5, 0 means sample all).",
        ],
    )
}

pub fn register() -> Vec<CommandSpec> {
    vec![CommandSpec::container(
        "memory",
        "",
        "",
        vec![
            CommandSpec::new("purge", 2, "", "", memory_purge)
                .doc(
                    "server",
                    "4.0.0",
                    "Ask the allocator to release memory",
                    "Depends on how much memory is allocated, could be slow",
                )
                .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
            CommandSpec::new("help", 2, "loading stale", "", memory_help).doc(
                "server",
                "4.0.0",
                "Show helpful text about the different subcommands",
                "O(1)",
            ),
            CommandSpec::new("doctor", 2, "", "", memory_doctor)
                .doc("server", "4.0.0", "Outputs memory problems report", "O(1)")
                .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
            CommandSpec::new("stats", 2, "", "", memory_stats)
                .doc("server", "4.0.0", "Show memory usage details", "O(1)")
                .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
            CommandSpec::new("malloc-stats", 2, "", "", memory_malloc_stats)
                .doc(
                    "server",
                    "4.0.0",
                    "Show allocator internal stats",
                    "Depends on how much memory is allocated, could be slow",
                )
                .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
            CommandSpec::new("usage", -3, "readonly", "", memory_usage)
                .doc("server", "4.0.0", "Estimate the memory usage of a key", "O(N) where N is the number of samples.")
                .keys("RO", 2, 0, 1)
                .args(vec![ArgDoc::key("key", 0), ArgDoc::new("count", ArgType::Integer).after("SAMPLES").optional()]),
        ],
    )
    .doc("server", "4.0.0", "A container for memory diagnostics commands", "Depends on subcommand.")]
}
