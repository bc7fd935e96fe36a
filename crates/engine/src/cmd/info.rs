//! INFO: every section Redis 7.0 has, in Redis's order, with figures measured by the engine
//! (and, for memory and CPU, by the host process through `/proc`).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::CmdResult;
use crate::exec::Ctx;
use crate::reply::ReplySink;
use crate::{QUINCE_VERSION, REDIS_VERSION};

/// Sections in output order. `default` is all but commandstats and latencystats; `all` adds
/// them; `everything` adds modules.
const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "cluster",
    "keyspace",
    "latencystats",
];
const NOT_DEFAULT: &[&str] = &["commandstats", "latencystats", "modules"];

/// INFO [section ...] — O(1) per section (keyspace: O(shards x dbs)).
fn info(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let requested: Vec<String> = args[1..].iter().map(|a| String::from_utf8_lossy(a).to_ascii_lowercase()).collect();
    let wants = |section: &str| {
        if requested.is_empty() {
            return !NOT_DEFAULT.contains(&section);
        }
        requested.iter().any(|r| match r.as_str() {
            "everything" => true,
            "all" => section != "modules",
            "default" => !NOT_DEFAULT.contains(&section),
            r => r == section,
        })
    };
    let mut text = String::new();
    for section in SECTIONS {
        if wants(section) {
            if !text.is_empty() {
                text.push_str("\r\n");
            }
            info_section(ctx, section, &mut text);
        }
    }
    out.verbatim(b"txt", text.as_bytes());
    Ok(())
}

/// `1.23K`-style sizes as Redis's bytesToHuman prints them.
pub fn bytes_to_human(n: u64) -> String {
    let n = n as f64;
    let units =
        [(1024f64.powi(5), 'P'), (1024f64.powi(4), 'T'), (1024f64.powi(3), 'G'), (1024f64.powi(2), 'M'), (1024.0, 'K')];
    for (size, unit) in units {
        if n >= size {
            return format!("{:.2}{unit}", n / size);
        }
    }
    format!("{}B", n as u64)
}

/// Resident set size from /proc (0 where unavailable).
pub(crate) fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .map_or(0, |pages| pages * 4096)
}

fn total_system_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()))
        })
        .map_or(0, |kb| kb * 1024)
}

/// (user, system) CPU seconds of the process, and of the calling thread, from /proc.
fn cpu_times() -> ((f64, f64), (f64, f64)) {
    let read = |path: &str| -> (f64, f64) {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| {
                // Fields after the command name (which is in parentheses and may hold spaces).
                let rest = &s[s.rfind(')')? + 2..];
                let fields: Vec<&str> = rest.split_whitespace().collect();
                let user: f64 = fields.get(11)?.parse().ok()?;
                let sys: f64 = fields.get(12)?.parse().ok()?;
                Some((user / 100.0, sys / 100.0))
            })
            .unwrap_or((0.0, 0.0))
    };
    (read("/proc/self/stat"), read("/proc/thread-self/stat"))
}

fn info_section(ctx: &Ctx<'_>, section: &str, s: &mut String) {
    let engine = ctx.engine;
    let stats = &engine.stats;
    let now_ms = engine.clock.now_ms();
    let facts = engine.server.read().clone();
    let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let config = |name: &str| engine.config.read().get(name).unwrap_or("").to_string();
    // `write!` into a String cannot fail.
    let _ = match section {
        "server" => {
            let uptime = (now_ms - facts.start_time_ms).max(0) / 1000;
            write!(
                s,
                "# Server\r\nredis_version:{REDIS_VERSION}\r\nquince_version:{QUINCE_VERSION}\r\n\
                 redis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:0\r\nredis_mode:{}\r\n\
                 os:{}\r\narch_bits:{}\r\nmonotonic_clock:{}\r\nmultiplexing_api:{}\r\n\
                 atomicvar_api:c11-builtin\r\ngcc_version:0.0.0\r\nprocess_id:{}\r\nprocess_supervised:no\r\n\
                 run_id:{}\r\ntcp_port:{}\r\nserver_time_usec:{}\r\nuptime_in_seconds:{uptime}\r\n\
                 uptime_in_days:{}\r\nhz:{}\r\nconfigured_hz:{}\r\nlru_clock:{}\r\nexecutable:{}\r\n\
                 config_file:{}\r\nio_threads_active:0\r\nquince_threads:{}\r\nquince_shards:{}\r\n",
                if engine.cluster.enabled() { "cluster" } else { "standalone" },
                facts.os,
                usize::BITS,
                engine.clock.describe(),
                if facts.multiplexing_api.is_empty() { "epoll" } else { facts.multiplexing_api },
                facts.process_id,
                facts.run_id,
                // As Redis: the TCP port, or the TLS port when there is no TCP one (both as
                // CONFIG SET left them).
                match (config("port").parse::<u16>().unwrap_or(0), config("tls-port").parse::<u16>().unwrap_or(0)) {
                    (0, 0) => facts.tcp_port,
                    (0, tls) => tls,
                    (port, _) => port,
                },
                engine.clock.now_us(),
                uptime / 86400,
                config("hz"),
                config("hz"),
                crate::keyspace::lru_clock(now_ms),
                facts.executable,
                facts.config_file,
                facts.threads,
                engine.keyspace.shard_count(),
            )
        }
        "clients" => write!(
            s,
            "# Clients\r\nconnected_clients:{}\r\ncluster_connections:0\r\nmaxclients:{}\r\n\
             client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\nblocked_clients:{}\r\n\
             tracking_clients:{}\r\nclients_in_timeout_table:0\r\n",
            load(&stats.connected_clients),
            config("maxclients"),
            engine.clients.all().iter().filter(|c| c.has_flag(crate::clients::flag::BLOCKED)).count(),
            engine.tracking.clients(),
        ),
        "memory" => {
            let rss = rss_bytes();
            let used = engine.used_memory().unwrap_or(rss);
            let peak = engine.note_memory_peak(used);
            let system = total_system_memory();
            let maxmemory: u64 = config("maxmemory").parse().unwrap_or(0);
            let frag = if used > 0 { rss as f64 / used as f64 } else { 0.0 };
            let m = engine.scripting.memory();
            let vm_total = m.vm_eval + m.vm_functions;
            // Output waiting for clients: replicas' (the stream) and the others'.
            let (mut replica_output, mut normal_output) = (0usize, 0usize);
            for client in engine.clients.all() {
                if client.has_flag(crate::clients::flag::REPLICA) && !client.has_flag(crate::clients::flag::MONITOR) {
                    replica_output += client.output_memory();
                } else {
                    normal_output += client.output_memory();
                }
            }
            let backlog = engine.persistence().map_or(0, |p| p.replication_backlog_bytes());
            let aof_buffer = engine.persistence().map_or(0, |p| p.aof_buffer_bytes());
            write!(
                s,
                "# Memory\r\nused_memory:{used}\r\nused_memory_human:{}\r\nused_memory_rss:{rss}\r\n\
                 used_memory_rss_human:{}\r\nused_memory_peak:{peak}\r\nused_memory_peak_human:{}\r\n\
                 used_memory_peak_perc:{:.2}%\r\ntotal_system_memory:{system}\r\ntotal_system_memory_human:{}\r\n\
                 used_memory_lua:{}\r\nused_memory_vm_eval:{}\r\nused_memory_lua_human:{}\r\n\
                 used_memory_scripts_eval:{}\r\nnumber_of_cached_scripts:{}\r\nnumber_of_functions:{}\r\n\
                 number_of_libraries:{}\r\nused_memory_vm_functions:{}\r\nused_memory_vm_total:{vm_total}\r\n\
                 used_memory_vm_total_human:{}\r\nused_memory_functions:{}\r\nused_memory_scripts:{}\r\n\
                 used_memory_scripts_human:{}\r\nmaxmemory:{maxmemory}\r\nmaxmemory_human:{}\r\n\
                 maxmemory_policy:{}\r\nmem_fragmentation_ratio:{frag:.2}\r\nmem_fragmentation_bytes:{}\r\n\
                 mem_not_counted_for_evict:{}\r\nmem_replication_backlog:{backlog}\r\n\
                 mem_total_replication_buffers:{}\r\nmem_clients_slaves:{replica_output}\r\n\
                 mem_clients_normal:{normal_output}\r\nmem_cluster_links:0\r\nmem_aof_buffer:{aof_buffer}\r\n\
                 mem_allocator:{}\r\nactive_defrag_running:0\r\nlazyfree_pending_objects:{}\r\nlazyfreed_objects:{}\r\n",
                bytes_to_human(used),
                bytes_to_human(rss),
                bytes_to_human(peak),
                if peak > 0 { used as f64 * 100.0 / peak as f64 } else { 0.0 },
                bytes_to_human(system),
                m.vm_eval,
                m.vm_eval,
                bytes_to_human(m.vm_eval as u64),
                m.scripts_eval,
                m.cached_scripts,
                m.functions,
                m.libraries,
                m.vm_functions,
                bytes_to_human(vm_total as u64),
                m.functions_code,
                m.scripts_eval + m.functions_code,
                bytes_to_human((m.scripts_eval + m.functions_code) as u64),
                bytes_to_human(maxmemory),
                config("maxmemory-policy"),
                rss as i64 - used as i64,
                engine.persistence().map_or(0, |p| p.not_counted_for_eviction()),
                backlog + replica_output,
                if facts.mem_allocator.is_empty() { "libc" } else { &facts.mem_allocator },
                engine.lazyfree.pending(),
                engine.lazyfree.freed(),
            )
        }
        "persistence" if engine.persistence().is_some() => {
            let fields = engine.persistence().map(|p| p.info_fields(engine)).unwrap_or_default();
            write!(s, "# Persistence\r\n{fields}")
        }
        "persistence" => write!(
            s,
            "# Persistence\r\nloading:0\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\n\
             current_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\n\
             current_save_keys_total:0\r\nrdb_changes_since_last_save:{}\r\nrdb_bgsave_in_progress:0\r\n\
             rdb_last_save_time:{}\r\n\
             rdb_saves:0\r\naof_enabled:0\r\naof_rewrite_in_progress:0\r\naof_rewrite_scheduled:0\r\n\
             aof_rewrites:0\r\nmodule_fork_in_progress:0\r\n",
            engine.dirty(),
            facts.start_time_ms / 1000,
        ),
        "stats" => {
            let sync = engine.persistence().map_or([0; 3], |p| p.sync_counts());
            let rates = {
                let inst = engine.observe.instantaneous.lock();
                [inst.rate(0), inst.rate(1), inst.rate(2)]
            };
            // What clients counted themselves on the fast path (`observe::LocalStats`).
            let local = engine.observe.local_counts();
            write!(
                s,
                "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n\
             instantaneous_ops_per_sec:{}\r\ntotal_net_input_bytes:{}\r\ntotal_net_output_bytes:{}\r\n\
             instantaneous_input_kbps:{:.2}\r\ninstantaneous_output_kbps:{:.2}\r\nrejected_connections:{}\r\n\
             sync_full:{}\r\nsync_partial_ok:{}\r\nsync_partial_err:{}\r\nexpired_keys:{}\r\nevicted_keys:{}\r\nevicted_clients:0\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\n\
             pubsub_channels:{}\r\npubsub_patterns:{}\r\npubsubshard_channels:{}\r\ntotal_forks:{}\r\n\
             migrate_cached_sockets:{}\r\nslave_expires_tracked_keys:{}\r\ntracking_total_keys:{}\r\ntracking_total_items:{}\r\ntracking_total_prefixes:{}\r\n\
             total_error_replies:{}\r\ntotal_reads_processed:{}\r\ntotal_writes_processed:{}\r\n\
             io_threaded_reads_processed:0\r\nio_threaded_writes_processed:0\r\n",
                load(&stats.total_connections_received),
                load(&stats.total_commands_processed) + local[0],
                rates[0],
                load(&stats.total_net_input_bytes),
                load(&stats.total_net_output_bytes),
                rates[1] as f64 / 1024.0,
                rates[2] as f64 / 1024.0,
                load(&stats.rejected_connections),
                sync[0],
                sync[1],
                sync[2],
                engine.expired_keys(),
                engine.stats.evicted_keys.load(Ordering::Relaxed),
                load(&stats.keyspace_hits) + local[1],
                load(&stats.keyspace_misses) + local[2],
                engine.pubsub.count(crate::pubsub::Kind::Channel),
                engine.pubsub.count(crate::pubsub::Kind::Pattern),
                engine.pubsub.count(crate::pubsub::Kind::Shard),
                engine.stats.total_forks.load(Ordering::Relaxed),
                engine.persistence().map_or(0, |p| p.migrate_cached_sockets()),
                engine.replica_tracked_keys(),
                engine.tracking.total_keys(),
                engine.tracking.total_items(),
                engine.tracking.total_prefixes(),
                load(&engine.observe.errors.total),
                load(&stats.total_reads_processed),
                load(&stats.total_writes_processed),
            )
        }
        "replication" if engine.persistence().and_then(|p| p.replication_info(engine)).is_some() => {
            let fields = engine.persistence().and_then(|p| p.replication_info(engine)).unwrap_or_default();
            write!(s, "# Replication\r\n{fields}")
        }
        "replication" => write!(
            s,
            "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\n\
             master_replid:{}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\n\
             master_repl_offset:0\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\nrepl_backlog_size:1048576\r\n\
             repl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n",
            facts.run_id,
        ),
        "cpu" => {
            let ((user, sys), (thread_user, thread_sys)) = cpu_times();
            write!(
                s,
                "# CPU\r\nused_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\nused_cpu_sys_children:0.000000\r\n\
                 used_cpu_user_children:0.000000\r\nused_cpu_sys_main_thread:{thread_sys:.6}\r\n\
                 used_cpu_user_main_thread:{thread_user:.6}\r\n"
            )
        }
        "modules" => write!(s, "# Modules\r\n"),
        "commandstats" => {
            let _ = write!(s, "# Commandstats\r\n");
            for spec in engine.table.all_flat() {
                let stat = engine.observe.command_totals(spec.id);
                let (calls, usec) = (stat.calls, stat.usec);
                let (rejected, failed) = (stat.rejected_calls, stat.failed_calls);
                if calls == 0 && rejected == 0 && failed == 0 {
                    continue;
                }
                let per_call = if calls > 0 { usec as f64 / calls as f64 } else { 0.0 };
                let _ = write!(
                    s,
                    "cmdstat_{}:calls={calls},usec={usec},usec_per_call={per_call:.2},rejected_calls={rejected},\
                     failed_calls={failed}\r\n",
                    spec.name
                );
            }
            Ok(())
        }
        "errorstats" => {
            let _ = write!(s, "# Errorstats\r\n");
            for (code, count) in engine.observe.errors.snapshot() {
                let _ = write!(s, "errorstat_{code}:count={count}\r\n");
            }
            Ok(())
        }
        "latencystats" => {
            let _ = write!(s, "# Latencystats\r\n");
            let percentiles: Vec<f64> =
                config("latency-tracking-info-percentiles").split_whitespace().filter_map(|p| p.parse().ok()).collect();
            let percentiles = if percentiles.is_empty() { vec![50.0, 99.0, 99.9] } else { percentiles };
            // As Redis: nothing while `latency-tracking` is off, and only the commands
            // whose histogram holds calls (those made while it was on).
            let tracking = engine.hot.latency_tracking.load(Ordering::Relaxed);
            for spec in engine.table.all_flat().filter(|_| tracking) {
                let stat = engine.observe.command_totals(spec.id);
                if !stat.has_latencies() {
                    continue;
                }
                let values: Vec<String> =
                    percentiles.iter().map(|p| format!("p{}={:.3}", format_pct(*p), stat.percentile(*p))).collect();
                let _ = write!(s, "latency_percentiles_usec_{}:{}\r\n", spec.name, values.join(","));
            }
            Ok(())
        }
        "cluster" => write!(s, "# Cluster\r\ncluster_enabled:{}\r\n", u8::from(engine.cluster.enabled())),
        "keyspace" => {
            let _ = write!(s, "# Keyspace\r\n");
            for db in 0..engine.keyspace.databases() {
                let (mut keys, mut expires, mut ttl_sum, mut ttl_count) = (0, 0, 0i64, 0i64);
                for shard in 0..engine.keyspace.shard_count() {
                    let guard = engine.keyspace.lock(shard);
                    keys += guard.dbs[db].len();
                    expires += guard.dbs[db].expires_len();
                    let (sum, count) = guard.dbs[db].sample_ttls(now_ms, 16);
                    ttl_sum += sum;
                    ttl_count += count;
                }
                if keys > 0 {
                    let avg_ttl = if ttl_count > 0 { ttl_sum / ttl_count } else { 0 };
                    let _ = write!(s, "db{db}:keys={keys},expires={expires},avg_ttl={avg_ttl}\r\n");
                }
            }
            Ok(())
        }
        _ => Ok(()),
    };
}

/// Percentile labels as Redis prints them (`50`, `99`, `99.9`).
fn format_pct(p: f64) -> String {
    let s = format!("{p}");
    s.trim_end_matches(".0").to_string()
}

pub fn register() -> Vec<CommandSpec> {
    vec![CommandSpec::new("info", -1, "loading stale", "dangerous", info)
        .doc("server", "1.0.0", "Get information and statistics about the server", "O(1)")
        .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])
        .history(&[("7.0.0", "Added support for taking multiple section arguments.")])
        .args(vec![ArgDoc::new("section", ArgType::String).optional().multiple()])]
}
