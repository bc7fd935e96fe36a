//! What the server records about the commands it runs: per-command call counts and time
//! (INFO commandstats), latency histograms (LATENCY HISTOGRAM, INFO latencystats), error
//! counts by code (INFO errorstats), the slow log (SLOWLOG) and latency events (LATENCY).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

/// Everything recorded about command execution, owned by the engine.
#[derive(Debug)]
pub struct Observe {
    /// Indexed by command-table id.
    pub commands: Box<[CommandStat]>,
    pub errors: ErrorStats,
    pub slowlog: Mutex<SlowLog>,
    pub latency: Mutex<LatencyMonitor>,
    /// `slowlog-log-slower-than` (microseconds; negative: off) and `slowlog-max-len`.
    pub slowlog_threshold_us: std::sync::atomic::AtomicI64,
    pub slowlog_max_len: AtomicU64,
    /// `latency-monitor-threshold` in milliseconds (0: off).
    pub latency_threshold_ms: AtomicU64,
    pub instantaneous: Mutex<Instantaneous>,
    /// Counters clients keep for the commands they run on the fast path (see `LocalStats`).
    pub locals: Arc<LocalRegistry>,
}

impl Observe {
    /// `fast_ids`: the command ids the fast path may run (see `LocalStats`).
    pub fn new(command_ids: usize, fast_ids: Vec<usize>) -> Self {
        Self {
            locals: Arc::new(LocalRegistry::new(fast_ids, command_ids)),
            commands: (0..command_ids).map(|_| CommandStat::default()).collect(),
            errors: ErrorStats::default(),
            slowlog: Mutex::new(SlowLog::default()),
            latency: Mutex::new(LatencyMonitor::default()),
            slowlog_threshold_us: std::sync::atomic::AtomicI64::new(10_000),
            slowlog_max_len: AtomicU64::new(128),
            latency_threshold_ms: AtomicU64::new(0),
            instantaneous: Mutex::new(Instantaneous::default()),
        }
    }

    /// CONFIG RESETSTAT: command and error statistics back to zero.
    pub fn reset_stats(&self) {
        self.commands.iter().for_each(CommandStat::reset);
        self.errors.reset();
        self.locals.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Command `id`'s counters: the shared ones and the clients' own.
    pub fn command_totals(&self, id: usize) -> CommandTotals {
        let stat = &self.commands[id];
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut totals = CommandTotals {
            calls: load(&stat.calls),
            usec: load(&stat.usec),
            rejected_calls: load(&stat.rejected_calls),
            failed_calls: load(&stat.failed_calls),
            histogram: std::array::from_fn(|i| load(&stat.histogram[i])),
        };
        if let Some(slot) = self.locals.fast_ids.iter().position(|&f| f == id) {
            self.locals.each_current(|local| local.commands[slot].add_to(&mut totals));
        }
        self.locals.each_thread(|stats| stats.commands[id].add_to(&mut totals));
        totals
    }

    /// Commands processed, keyspace hits and misses counted by clients themselves (to add
    /// to the engine's `Stats`).
    pub fn local_counts(&self) -> [u64; 3] {
        let mut sums = [0; 3];
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        self.locals.each_current(|local| {
            sums[0] += load(&local.commands_processed);
            sums[1] += load(&local.keyspace_hits);
            sums[2] += load(&local.keyspace_misses);
        });
        self.locals.each_thread(|stats| sums[0] += load(&stats.commands_processed));
        sums
    }

    /// A command call that took `usec`, counted by the running thread (INFO commandstats,
    /// LATENCY HISTOGRAM with `track_latency`).
    pub fn record_call(&self, id: usize, usec: u64, track_latency: bool) {
        if !self.locals.with_thread(|stats| stats.commands[id].record(usec, track_latency)) {
            self.commands[id].record(usec, track_latency);
        }
    }

    /// A command processed (INFO's total_commands_processed); `shared`: the engine's own
    /// counter, used by a thread that is ending.
    pub fn count_processed(&self, shared: &AtomicU64) {
        if !self.locals.with_thread(|stats| bump(&stats.commands_processed, 1)) {
            shared.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The commands the fast path runs (`fast_read`): GET, SET and INCR.
pub const FAST_COMMANDS: usize = 3;

/// Counters one client keeps for what it runs on the fast path, written by the thread
/// running that client alone: a load and a store, no locked instruction (each shared
/// counter costs a locked add, and a GET bumped five of them: about a third of its time).
/// Readers (INFO, LATENCY HISTOGRAM) add them to the shared counters. CONFIG RESETSTAT
/// can't clear them (they have one writer): it starts a new epoch, readers skip the
/// counters of an older one, and their owner clears them before counting again.
#[derive(Debug)]
pub struct LocalStats {
    epoch: AtomicU64,
    commands_processed: AtomicU64,
    keyspace_hits: AtomicU64,
    keyspace_misses: AtomicU64,
    commands: [LocalCommandStat; FAST_COMMANDS],
}

#[derive(Debug)]
struct LocalCommandStat {
    calls: AtomicU64,
    usec: AtomicU64,
    histogram: [AtomicU64; HISTOGRAM_BUCKETS],
}

impl LocalCommandStat {
    fn new() -> Self {
        Self {
            calls: AtomicU64::new(0),
            usec: AtomicU64::new(0),
            histogram: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    fn record(&self, usec: u64, track_latency: bool) {
        bump(&self.calls, 1);
        bump(&self.usec, usec);
        if track_latency {
            let bucket = (u64::BITS - usec.leading_zeros()) as usize;
            bump(&self.histogram[bucket.min(HISTOGRAM_BUCKETS - 1)], 1);
        }
    }

    fn clear(&self) {
        [&self.calls, &self.usec].into_iter().chain(&self.histogram).for_each(|c| c.store(0, Ordering::Relaxed));
    }

    fn add_to(&self, totals: &mut CommandTotals) {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        totals.calls += load(&self.calls);
        totals.usec += load(&self.usec);
        for (sum, bucket) in totals.histogram.iter_mut().zip(&self.histogram) {
            *sum += load(bucket);
        }
    }
}

/// Adds to a counter that only the caller's thread writes.
fn bump(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

impl LocalStats {
    fn new(epoch: u64) -> Self {
        Self {
            epoch: AtomicU64::new(epoch),
            commands_processed: AtomicU64::new(0),
            keyspace_hits: AtomicU64::new(0),
            keyspace_misses: AtomicU64::new(0),
            commands: std::array::from_fn(|_| LocalCommandStat::new()),
        }
    }

    /// A call of fast command `slot` that took `usec`; `hit`: whether a read found its key.
    fn record(&self, slot: usize, usec: u64, hit: Option<bool>, track_latency: bool) {
        bump(&self.commands_processed, 1);
        match hit {
            Some(true) => bump(&self.keyspace_hits, 1),
            Some(false) => bump(&self.keyspace_misses, 1),
            None => {}
        }
        self.commands[slot].record(usec, track_latency);
    }

    fn clear(&self) {
        let counters = [&self.commands_processed, &self.keyspace_hits, &self.keyspace_misses];
        counters.into_iter().for_each(|c| c.store(0, Ordering::Relaxed));
        self.commands.iter().for_each(LocalCommandStat::clear);
    }
}

/// Every client's `LocalStats` (kept when the client goes: what it counted stays counted,
/// and the next client takes them over), and the reset epoch.
#[derive(Debug)]
pub struct LocalRegistry {
    fast_ids: Vec<usize>,
    epoch: AtomicU64,
    all: Mutex<Vec<Arc<LocalStats>>>,
    free: Mutex<Vec<Arc<LocalStats>>>,
    /// Tells registries apart in the threads' `THREAD_STATS` (unique in the process).
    id: u64,
    /// How many commands the table has (the length of a `ThreadStats`).
    command_ids: usize,
    /// Every thread's `ThreadStats` (kept when the thread ends, for the next one).
    threads: Mutex<Vec<Arc<ThreadStats>>>,
    free_threads: Mutex<Vec<Arc<ThreadStats>>>,
}

/// What the general executor counts per command, kept by the thread that runs it: as
/// `LocalStats`, a load and a store per counter, no locked instruction (three locked adds
/// per command were a tenth of a pipelined script's time). One per thread and engine;
/// readers add them up with the same epoch rule.
#[derive(Debug)]
pub struct ThreadStats {
    epoch: AtomicU64,
    commands_processed: AtomicU64,
    /// By command-table id.
    commands: Box<[LocalCommandStat]>,
}

impl ThreadStats {
    fn new(epoch: u64, command_ids: usize) -> Self {
        Self {
            epoch: AtomicU64::new(epoch),
            commands_processed: AtomicU64::new(0),
            commands: zeroed_commands(command_ids),
        }
    }

    fn clear(&self) {
        self.commands_processed.store(0, Ordering::Relaxed);
        for command in self.commands.iter() {
            command.clear();
        }
    }
}

/// `n` command counters at zero, in one zeroed allocation: an engine's first command on a
/// thread makes one per command id (tests make thousands of engines; built element by
/// element, that was seconds of a debug build's run).
fn zeroed_commands(n: usize) -> Box<[LocalCommandStat]> {
    let zeroed = Box::<[LocalCommandStat]>::new_zeroed_slice(n);
    // SAFETY: `LocalCommandStat` is only `AtomicU64`s, for which all-zero bytes are 0.
    unsafe { zeroed.assume_init() }
}

/// A thread's `ThreadStats` for one registry; given back to it when the thread ends.
struct ThreadSlot {
    registry: std::sync::Weak<LocalRegistry>,
    id: u64,
    stats: Arc<ThreadStats>,
}

impl Drop for ThreadSlot {
    fn drop(&mut self) {
        if let Some(registry) = self.registry.upgrade() {
            registry.free_threads.lock().push(self.stats.clone());
        }
    }
}

thread_local! {
    static THREAD_STATS: std::cell::RefCell<Vec<ThreadSlot>> = const { std::cell::RefCell::new(Vec::new()) };
}

static NEXT_REGISTRY_ID: AtomicU64 = AtomicU64::new(1);

impl LocalRegistry {
    fn new(fast_ids: Vec<usize>, command_ids: usize) -> Self {
        Self {
            fast_ids,
            epoch: AtomicU64::new(0),
            all: Mutex::default(),
            free: Mutex::default(),
            id: NEXT_REGISTRY_ID.fetch_add(1, Ordering::Relaxed),
            command_ids,
            threads: Mutex::default(),
            free_threads: Mutex::default(),
        }
    }

    fn each_thread(&self, mut f: impl FnMut(&ThreadStats)) {
        let epoch = self.epoch.load(Ordering::SeqCst);
        for stats in self.threads.lock().iter().filter(|t| t.epoch.load(Ordering::SeqCst) == epoch) {
            f(stats);
        }
    }

    /// Runs `f` on this thread's `ThreadStats` (cleared first if CONFIG RESETSTAT ran
    /// since it last counted); false when the thread is ending and has none.
    fn with_thread(self: &Arc<Self>, f: impl FnOnce(&ThreadStats)) -> bool {
        THREAD_STATS
            .try_with(|slots| {
                let mut slots = slots.borrow_mut();
                let at = match slots.iter().position(|slot| slot.id == self.id) {
                    Some(at) => at,
                    None => {
                        // Slots of engines gone go first (tests make thousands of engines).
                        slots.retain(|slot| slot.registry.strong_count() > 0);
                        let epoch = self.epoch.load(Ordering::SeqCst);
                        let stats = self.free_threads.lock().pop().unwrap_or_else(|| {
                            let stats = Arc::new(ThreadStats::new(epoch, self.command_ids));
                            self.threads.lock().push(stats.clone());
                            stats
                        });
                        slots.push(ThreadSlot { registry: Arc::downgrade(self), id: self.id, stats });
                        slots.len() - 1
                    }
                };
                let stats = &slots[at].stats;
                let epoch = self.epoch.load(Ordering::Relaxed);
                if stats.epoch.load(Ordering::Relaxed) != epoch {
                    stats.clear();
                    stats.epoch.store(epoch, Ordering::SeqCst);
                }
                f(stats);
            })
            .is_ok()
    }

    fn each_current(&self, mut f: impl FnMut(&LocalStats)) {
        let epoch = self.epoch.load(Ordering::SeqCst);
        for local in self.all.lock().iter().filter(|l| l.epoch.load(Ordering::SeqCst) == epoch) {
            f(local);
        }
    }

    /// A call of fast command `command` (its index among `FAST_COMMANDS`) by the client
    /// holding `slot`, counted in that client's `LocalStats`.
    pub fn record(
        self: &Arc<Self>,
        slot: &mut LocalStatsSlot,
        command: usize,
        usec: u64,
        hit: Option<bool>,
        track_latency: bool,
    ) {
        let epoch = self.epoch.load(Ordering::Relaxed);
        let local = slot.0.get_or_insert_with(|| {
            let local = self.free.lock().pop().unwrap_or_else(|| {
                let local = Arc::new(LocalStats::new(epoch));
                self.all.lock().push(local.clone());
                local
            });
            (local, self.clone())
        });
        let stats = &local.0;
        if stats.epoch.load(Ordering::Relaxed) != epoch {
            stats.clear();
            stats.epoch.store(epoch, Ordering::SeqCst);
        }
        stats.record(command, usec, hit, track_latency);
    }
}

/// A client's `LocalStats`, taken on its first fast command. A copy of the client starts
/// without (the counters keep one writer); a client that goes hands them to the next.
#[derive(Debug, Default)]
pub struct LocalStatsSlot(Option<(Arc<LocalStats>, Arc<LocalRegistry>)>);

impl Clone for LocalStatsSlot {
    fn clone(&self) -> Self {
        Self(None)
    }
}

impl Drop for LocalStatsSlot {
    fn drop(&mut self) {
        if let Some((local, registry)) = self.0.take() {
            registry.free.lock().push(local);
        }
    }
}

/// A command's counters summed (`Observe::command_totals`).
#[derive(Debug, Clone)]
pub struct CommandTotals {
    pub calls: u64,
    pub usec: u64,
    pub rejected_calls: u64,
    pub failed_calls: u64,
    pub histogram: [u64; HISTOGRAM_BUCKETS],
}

impl CommandTotals {
    /// Whether the latency histogram holds any call.
    pub fn has_latencies(&self) -> bool {
        self.histogram.iter().any(|&b| b > 0)
    }

    /// The calls in the latency histogram.
    pub fn latency_count(&self) -> u64 {
        self.histogram.iter().sum()
    }

    /// Cumulative counts at power-of-two microsecond bounds (1, 2, 4, ...), up to the bucket
    /// holding the slowest call, as LATENCY HISTOGRAM reports them.
    pub fn cumulative_histogram(&self) -> Vec<(u64, u64)> {
        let counts = &self.histogram;
        let Some(last) = counts.iter().rposition(|&c| c > 0) else { return Vec::new() };
        let mut total = 0;
        (0..=last)
            .filter_map(|i| {
                total += counts[i];
                // Bucket i holds durations below 2^i us; it is reported at bound 2^i.
                (total > 0).then_some((1u64 << i, total))
            })
            .collect()
    }

    /// The smallest power-of-two bound below which `pct` percent of calls fall.
    pub fn percentile(&self, pct: f64) -> f64 {
        let counts = &self.histogram;
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return 0.0;
        }
        let wanted = ((pct / 100.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, c) in counts.iter().enumerate() {
            seen += c;
            if seen >= wanted {
                return (1u64 << i) as f64;
            }
        }
        (1u64 << (HISTOGRAM_BUCKETS - 1)) as f64
    }
}

/// Samples averaged for the `instantaneous_*` INFO fields (Redis's STATS_METRIC_SAMPLES).
const INSTANT_SAMPLES: usize = 16;

/// Rates sampled every 100 ms from running totals, as Redis's trackInstantaneousMetric.
#[derive(Debug, Default)]
pub struct Instantaneous {
    /// For each metric (ops, input bytes, output bytes): last total, and recent per-second rates.
    last_ms: i64,
    last: [u64; 3],
    rates: [std::collections::VecDeque<u64>; 3],
}

impl Instantaneous {
    /// Feeds the current totals; samples at most every 100 ms.
    pub fn sample(&mut self, now_ms: i64, totals: [u64; 3]) {
        if self.last_ms == 0 {
            self.last_ms = now_ms;
            self.last = totals;
            return;
        }
        let elapsed = now_ms - self.last_ms;
        if elapsed < 100 {
            return;
        }
        for (i, total) in totals.iter().enumerate() {
            let rate = total.saturating_sub(self.last[i]) * 1000 / elapsed as u64;
            self.rates[i].push_back(rate);
            if self.rates[i].len() > INSTANT_SAMPLES {
                self.rates[i].pop_front();
            }
        }
        self.last = totals;
        self.last_ms = now_ms;
    }

    /// Average per-second rate of metric `i` (0 ops, 1 input bytes, 2 output bytes).
    pub fn rate(&self, i: usize) -> u64 {
        let r = &self.rates[i];
        if r.is_empty() {
            0
        } else {
            r.iter().sum::<u64>() / r.len() as u64
        }
    }
}

/// Latency buckets: bucket `i` counts calls that took less than 2^i microseconds (the last
/// bucket takes everything longer).
pub const HISTOGRAM_BUCKETS: usize = 40;

/// Counters for one command (or subcommand).
#[derive(Debug)]
pub struct CommandStat {
    pub calls: AtomicU64,
    pub usec: AtomicU64,
    /// Rejected before running (arity, auth, ...).
    pub rejected_calls: AtomicU64,
    /// Ran and replied with an error.
    pub failed_calls: AtomicU64,
    pub histogram: [AtomicU64; HISTOGRAM_BUCKETS],
}

impl Default for CommandStat {
    fn default() -> Self {
        Self {
            calls: AtomicU64::new(0),
            usec: AtomicU64::new(0),
            rejected_calls: AtomicU64::new(0),
            failed_calls: AtomicU64::new(0),
            histogram: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl CommandStat {
    /// One call that took `usec`; `track_latency` (`latency-tracking`) also puts it in the
    /// latency histogram.
    pub fn record(&self, usec: u64, track_latency: bool) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.usec.fetch_add(usec, Ordering::Relaxed);
        if !track_latency {
            return;
        }
        let bucket = (u64::BITS - usec.leading_zeros()) as usize;
        self.histogram[bucket.min(HISTOGRAM_BUCKETS - 1)].fetch_add(1, Ordering::Relaxed);
    }

    pub fn reset(&self) {
        for c in [&self.calls, &self.usec, &self.rejected_calls, &self.failed_calls] {
            c.store(0, Ordering::Relaxed);
        }
        self.histogram.iter().for_each(|b| b.store(0, Ordering::Relaxed));
    }
}

/// Error replies counted by their code (the first word, e.g. `ERR`, `WRONGTYPE`).
#[derive(Debug, Default)]
pub struct ErrorStats {
    by_code: Mutex<BTreeMap<String, u64>>,
    pub total: AtomicU64,
}

/// Redis stops adding new error codes to the table past this many.
const ERROR_STATS_MAX: usize = 128;

impl ErrorStats {
    pub fn record(&self, error_line: &str) {
        self.total.fetch_add(1, Ordering::Relaxed);
        let code = error_line.split(' ').next().unwrap_or("ERR");
        let mut map = self.by_code.lock();
        if let Some(n) = map.get_mut(code) {
            *n += 1;
        } else if map.len() < ERROR_STATS_MAX {
            map.insert(code.to_string(), 1);
        }
    }

    pub fn snapshot(&self) -> Vec<(String, u64)> {
        self.by_code.lock().iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    pub fn reset(&self) {
        self.by_code.lock().clear();
        self.total.store(0, Ordering::Relaxed);
    }
}

/// One slow log entry.
#[derive(Debug, Clone)]
pub struct SlowEntry {
    pub id: u64,
    pub time_s: i64,
    pub duration_us: u64,
    pub args: Vec<Vec<u8>>,
    pub peer: String,
    pub client_name: Vec<u8>,
}

/// Most arguments and bytes per argument a slow log entry keeps (as Redis).
pub const SLOWLOG_MAX_ARGC: usize = 32;
pub const SLOWLOG_MAX_STRING: usize = 128;

#[derive(Debug, Default)]
pub struct SlowLog {
    entries: VecDeque<SlowEntry>,
    next_id: u64,
}

impl SlowLog {
    /// Adds an entry (newest first), trimming arguments as Redis does, and the log to `max_len`.
    pub fn push(&mut self, args: &[&[u8]], duration_us: u64, time_s: i64, peer: String, name: Vec<u8>, max_len: usize) {
        let keep = args.len().min(SLOWLOG_MAX_ARGC);
        let mut stored = Vec::with_capacity(keep);
        for (i, arg) in args.iter().take(keep).enumerate() {
            if keep != args.len() && i == keep - 1 {
                stored.push(format!("... ({} more arguments)", args.len() - keep + 1).into_bytes());
            } else if arg.len() > SLOWLOG_MAX_STRING {
                let mut a = arg[..SLOWLOG_MAX_STRING].to_vec();
                a.extend_from_slice(format!("... ({} more bytes)", arg.len() - SLOWLOG_MAX_STRING).as_bytes());
                stored.push(a);
            } else {
                stored.push(arg.to_vec());
            }
        }
        let entry = SlowEntry { id: self.next_id, time_s, duration_us, args: stored, peer, client_name: name };
        self.next_id += 1;
        self.entries.push_front(entry);
        self.entries.truncate(max_len);
    }

    pub fn trim(&mut self, max_len: usize) {
        self.entries.truncate(max_len);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn reset(&mut self) {
        self.entries.clear();
    }

    pub fn newest(&self, n: usize) -> impl Iterator<Item = &SlowEntry> {
        self.entries.iter().take(n)
    }
}

/// Samples kept per latency event.
pub const LATENCY_HISTORY_LEN: usize = 160;

#[derive(Debug, Default, Clone)]
pub struct LatencySeries {
    /// (unix seconds, milliseconds), oldest first; one sample per second at most.
    pub samples: VecDeque<(i64, u64)>,
    pub max: u64,
}

/// LATENCY monitor events, by name.
#[derive(Debug, Default)]
pub struct LatencyMonitor {
    events: BTreeMap<String, LatencySeries>,
}

impl LatencyMonitor {
    /// Records `ms` for `event`; samples in the same second keep the larger value.
    pub fn add(&mut self, event: &str, time_s: i64, ms: u64) {
        let series = self.events.entry(event.to_string()).or_default();
        series.max = series.max.max(ms);
        match series.samples.back_mut() {
            Some(last) if last.0 == time_s => last.1 = last.1.max(ms),
            _ => {
                series.samples.push_back((time_s, ms));
                if series.samples.len() > LATENCY_HISTORY_LEN {
                    series.samples.pop_front();
                }
            }
        }
    }

    pub fn events(&self) -> impl Iterator<Item = (&String, &LatencySeries)> {
        self.events.iter()
    }

    pub fn get(&self, event: &[u8]) -> Option<&LatencySeries> {
        std::str::from_utf8(event).ok().and_then(|e| self.events.get(e))
    }

    /// Forgets one event (or all with None); returns how many were reset.
    pub fn reset(&mut self, event: Option<&[u8]>) -> usize {
        match event {
            None => {
                let n = self.events.len();
                self.events.clear();
                n
            }
            Some(e) => std::str::from_utf8(e).ok().and_then(|e| self.events.remove(e)).map_or(0, |_| 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_counted_by_threads_add_up_and_reset() {
        let observe = Arc::new(Observe::new(4, vec![]));
        let shared = AtomicU64::new(0);
        observe.record_call(1, 5, true);
        observe.count_processed(&shared);
        // Another thread's counts, kept after it ends; a later thread takes its counters
        // over and adds to them.
        for _ in 0..2 {
            let observe = observe.clone();
            std::thread::spawn(move || {
                let shared = AtomicU64::new(0);
                observe.record_call(1, 100, true);
                observe.record_call(2, 1, false);
                observe.count_processed(&shared);
                assert_eq!(shared.load(Ordering::Relaxed), 0, "counted in the thread's own counters");
            })
            .join()
            .unwrap();
        }
        assert_eq!(observe.locals.threads.lock().len(), 2, "the second thread reused the first one's");
        let one = observe.command_totals(1);
        assert_eq!((one.calls, one.usec), (3, 205));
        assert_eq!(one.histogram.iter().sum::<u64>(), 3);
        assert_eq!(one.histogram[(u64::BITS - 100u64.leading_zeros()) as usize], 2);
        let two = observe.command_totals(2);
        assert_eq!((two.calls, two.usec, two.histogram.iter().sum::<u64>()), (2, 2, 0));
        assert_eq!(observe.local_counts()[0], 3);
        assert_eq!(shared.load(Ordering::Relaxed), 0);

        observe.reset_stats();
        assert_eq!(observe.command_totals(1).calls, 0);
        assert_eq!(observe.local_counts()[0], 0);
        observe.record_call(1, 7, true);
        let one = observe.command_totals(1);
        assert_eq!((one.calls, one.usec), (1, 7), "cleared before counting again");
    }

    #[test]
    fn slowlog_trims_like_redis() {
        let mut log = SlowLog::default();
        let long = vec![b'x'; 200];
        let many: Vec<&[u8]> = (0..40).map(|_| &b"a"[..]).collect();
        log.push(&[b"set", &long], 5, 1, "p".into(), vec![], 10);
        log.push(&many, 5, 1, "p".into(), vec![], 10);
        let newest: Vec<_> = log.newest(2).collect();
        assert_eq!(newest[0].args.len(), 32);
        assert_eq!(newest[0].args[31], b"... (9 more arguments)");
        assert!(newest[1].args[1].ends_with(b"... (72 more bytes)"));
        assert_eq!(newest[1].id, 0);
        log.trim(1);
        assert_eq!(log.len(), 1);
    }

    #[test]
    fn histogram_is_cumulative() {
        let observe = Observe::new(1, Vec::new());
        let stat = &observe.commands[0];
        stat.record(0, true);
        stat.record(3, true);
        stat.record(3, true);
        stat.record(100, true);
        let s = observe.command_totals(0);
        let h = s.cumulative_histogram();
        assert_eq!(h.first(), Some(&(1, 1)));
        assert_eq!(h.last(), Some(&(128, 4)));
        assert_eq!(s.percentile(50.0), 4.0);
    }
}
