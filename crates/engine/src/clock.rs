//! Time as the engine sees it. The engine never reads the system clock directly, so the
//! deterministic simulator and tests can drive expiry with a fake clock.

use std::sync::atomic::{fence, AtomicI64, AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
    /// Microseconds since the Unix epoch.
    fn now_us(&self) -> i64 {
        self.now_ms() * 1000
    }
    /// How the clock is read, for INFO's `monotonic_clock`.
    fn describe(&self) -> String {
        "POSIX clock_gettime".to_string()
    }
}

/// The wall clock.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        self.now_us() / 1000
    }
    fn now_us(&self) -> i64 {
        HARDWARE_TICKS.now_ns(&Hardware) / 1000
    }
    fn describe(&self) -> String {
        match HARDWARE_TICKS.ticks_per_us() {
            Some(rate) => format!("X86 TSC @ {rate} ticks/us"),
            None => "POSIX clock_gettime".to_string(),
        }
    }
}

/// `clock_gettime(id)` in nanoseconds; None where it fails or does not exist.
fn clock_ns(id: libc::clockid_t) -> Option<i64> {
    // PERF: clock_gettime with plain integer arithmetic; SystemTime's checked subtraction
    // and u128 conversion cost as much again.
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid place for the kernel (vDSO) to write the time.
        if unsafe { libc::clock_gettime(id, &mut ts) } == 0 {
            // (time_t and c_long are narrower than i64 on 32-bit targets.)
            #[allow(clippy::unnecessary_cast)]
            return Some(ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64);
        }
    }
    let _ = id;
    None
}

/// CLOCK_REALTIME in nanoseconds since the Unix epoch.
fn realtime_ns() -> i64 {
    clock_ns(libc::CLOCK_REALTIME)
        .unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64))
}

/// CLOCK_MONOTONIC in nanoseconds: it runs at the wall clock's rate (NTP slews both) but
/// never jumps, so the counter's rate is measured against it.
fn monotonic_ns() -> i64 {
    clock_ns(libc::CLOCK_MONOTONIC).unwrap_or_else(realtime_ns)
}

/// Where a `TickClock` reads its counter and the clocks it keeps in step with.
pub(crate) trait TickSource {
    /// The counter, or None when there is no usable one (the clock then reads
    /// `realtime_ns` every time).
    fn ticks(&self) -> Option<u64>;
    fn realtime_ns(&self) -> i64;
    fn monotonic_ns(&self) -> i64;
}

/// The processor's time-stamp counter, where it runs at a constant rate in every power
/// state (CPUID's "invariant TSC"); elsewhere none.
struct Hardware;

#[cfg(target_arch = "x86_64")]
fn invariant_tsc() -> bool {
    use std::sync::OnceLock;
    static INVARIANT: OnceLock<bool> = OnceLock::new();
    *INVARIANT.get_or_init(|| {
        // (CPUID exists on every x86_64 processor; the extended leaf is asked for only
        // when the processor reports it.)
        let max = std::arch::x86_64::__cpuid(0x8000_0000).eax;
        max >= 0x8000_0007 && std::arch::x86_64::__cpuid(0x8000_0007).edx & (1 << 8) != 0
    })
}

impl TickSource for Hardware {
    #[inline]
    fn ticks(&self) -> Option<u64> {
        #[cfg(target_arch = "x86_64")]
        if invariant_tsc() {
            // SAFETY: RDTSC has no preconditions.
            return Some(unsafe { std::arch::x86_64::_rdtsc() });
        }
        None
    }
    fn realtime_ns(&self) -> i64 {
        realtime_ns()
    }
    fn monotonic_ns(&self) -> i64 {
        monotonic_ns()
    }
}

static HARDWARE_TICKS: TickClock = TickClock::new();

/// How often the wall clock is read again, so a jump of CLOCK_REALTIME (settimeofday, NTP
/// stepping) shows within this long.
const RESYNC_NS: u64 = 1_000_000;
/// Until the counter's rate is known: resync after this many ticks (well under a
/// millisecond at any clock speed in use).
const FIRST_SPAN_TICKS: u64 = 1 << 20;
/// The counter's rate is measured over at least this long once the clock has run that long
/// (between one and two of these), so a microsecond of jitter in a reading is a
/// millionth of it.
const RATE_SPAN_NS: i64 = 1_000_000_000;
/// A reading of the clocks whose two counter reads lie further apart than this was
/// interrupted: it is taken again.
const TIGHT_READ_TICKS: u64 = 5_000;
/// The shortest span a rate is measured over (the first one: later ones are longer).
const MIN_RATE_SPAN_NS: i64 = 1_000_000;

/// The wall clock read through a cycle counter: PERF: `clock_gettime` costs about 25 ns
/// in this project's VM and RDTSC 12, and a command reads the clock twice (start and end).
/// Every millisecond one reader takes the wall clock again and rebases; the counter's rate
/// is measured against CLOCK_MONOTONIC over a span of one to two seconds. Readers go
/// through a sequence lock and read the wall clock directly while it changes, before the
/// rate is known, or when the counter went backwards (a thread moved to a processor whose
/// counter lags).
pub(crate) struct TickClock {
    /// Even: the fields are stable; odd: being rewritten. Zero: never calibrated.
    seq: AtomicU64,
    base_ticks: AtomicU64,
    base_ns: AtomicI64,
    /// Nanoseconds per tick, in 32.32 fixed point; zero while the rate is unknown.
    ns_per_tick_q32: AtomicU64,
    resync_ticks: AtomicU64,
    /// The two reference points the rate is measured from: older, then newer.
    rate_from: [(AtomicU64, AtomicI64); 2],
}

impl TickClock {
    pub(crate) const fn new() -> Self {
        Self {
            seq: AtomicU64::new(0),
            base_ticks: AtomicU64::new(0),
            base_ns: AtomicI64::new(0),
            ns_per_tick_q32: AtomicU64::new(0),
            resync_ticks: AtomicU64::new(FIRST_SPAN_TICKS),
            rate_from: [(AtomicU64::new(0), AtomicI64::new(0)), (AtomicU64::new(0), AtomicI64::new(0))],
        }
    }

    /// Nanoseconds since the Unix epoch.
    #[inline]
    pub(crate) fn now_ns(&self, source: &impl TickSource) -> i64 {
        let Some(ticks) = source.ticks() else { return source.realtime_ns() };
        let seq = self.seq.load(Ordering::Acquire);
        let base_ticks = self.base_ticks.load(Ordering::Relaxed);
        let base_ns = self.base_ns.load(Ordering::Relaxed);
        let rate = self.ns_per_tick_q32.load(Ordering::Relaxed);
        let resync_ticks = self.resync_ticks.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        if seq & 1 == 1 || seq != self.seq.load(Ordering::Relaxed) {
            return source.realtime_ns();
        }
        let elapsed = ticks.wrapping_sub(base_ticks);
        if seq == 0 || elapsed > resync_ticks {
            // (A counter behind the base also lands here: `elapsed` wraps to a huge value.)
            return self.resync(seq, source);
        }
        if rate == 0 {
            return source.realtime_ns();
        }
        base_ns + ((elapsed as u128 * rate as u128) >> 32) as i64
    }

    /// Ticks per microsecond, once measured.
    pub(crate) fn ticks_per_us(&self) -> Option<u64> {
        let rate = self.ns_per_tick_q32.load(Ordering::Relaxed);
        (rate != 0).then(|| ((1000u128 << 32) / rate as u128) as u64)
    }

    /// Reads the wall clock and, for the one reader that claims the update, rebases the
    /// counter on it.
    #[cold]
    fn resync(&self, seq: u64, source: &impl TickSource) -> i64 {
        if self.seq.compare_exchange(seq, seq + 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            return source.realtime_ns();
        }
        fence(Ordering::Release);
        let Some((ticks, real, mono)) = Self::read_together(source) else {
            // No clean reading (a busy machine kept interrupting it): nothing changes, this
            // read takes the wall clock and a later one tries again.
            self.seq.store(seq, Ordering::Release);
            return source.realtime_ns();
        };
        let mut rate = self.ns_per_tick_q32.load(Ordering::Relaxed);
        if seq == 0 {
            for (from_ticks, from_ns) in &self.rate_from {
                from_ticks.store(ticks, Ordering::Relaxed);
                from_ns.store(mono, Ordering::Relaxed);
            }
        } else {
            let older = &self.rate_from[0];
            let (span_ticks, span_ns) =
                (ticks.wrapping_sub(older.0.load(Ordering::Relaxed)), mono - older.1.load(Ordering::Relaxed));
            // A span that went backwards (another processor's counter) tells nothing.
            if span_ticks > 0 && span_ticks < 1 << 62 && span_ns >= MIN_RATE_SPAN_NS {
                rate = ((u128::from(span_ns as u64) << 32) / u128::from(span_ticks)) as u64;
            }
            let newer = &self.rate_from[1];
            if mono - newer.1.load(Ordering::Relaxed) >= RATE_SPAN_NS {
                older.0.store(newer.0.load(Ordering::Relaxed), Ordering::Relaxed);
                older.1.store(newer.1.load(Ordering::Relaxed), Ordering::Relaxed);
                newer.0.store(ticks, Ordering::Relaxed);
                newer.1.store(mono, Ordering::Relaxed);
            }
        }
        let resync_ticks = if rate == 0 {
            FIRST_SPAN_TICKS
        } else {
            ((u128::from(RESYNC_NS) << 32) / u128::from(rate)).clamp(1, u128::from(u32::MAX)) as u64
        };
        self.base_ticks.store(ticks, Ordering::Relaxed);
        self.base_ns.store(real, Ordering::Relaxed);
        self.ns_per_tick_q32.store(rate, Ordering::Relaxed);
        self.resync_ticks.store(resync_ticks, Ordering::Relaxed);
        self.seq.store(seq + 2, Ordering::Release);
        real
    }

    /// The counter, the wall clock and the monotonic clock at (nearly) one instant: a
    /// reading interrupted between its counter reads, or whose counter went backwards (the
    /// thread moved), is taken again; None after three tries. So every reference point
    /// is within `TIGHT_READ_TICKS` of its clocks, and a rate measured over at least
    /// `MIN_RATE_SPAN_NS` is within a fraction of a percent.
    fn read_together(source: &impl TickSource) -> Option<(u64, i64, i64)> {
        for _ in 0..3 {
            let before = source.ticks()?;
            let real = source.realtime_ns();
            let mono = source.monotonic_ns();
            let after = source.ticks()?;
            if after >= before && after - before < TIGHT_READ_TICKS {
                return Some((before + (after - before) / 2, real, mono));
            }
        }
        None
    }
}

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(start_ms: i64) -> Self {
        Self(AtomicI64::new(start_ms))
    }
    pub fn advance_ms(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
    pub fn set_ms(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A counter at 3 ticks per nanosecond (or none), a wall clock that can jump.
    struct Simulated {
        ns: Cell<i64>,
        jump: Cell<i64>,
        counter: Cell<bool>,
        /// Added to the counter, as a processor whose counter lags.
        skew: Cell<i64>,
    }

    impl Simulated {
        fn new() -> Self {
            Self { ns: Cell::new(1_000_000_000), jump: Cell::new(0), counter: Cell::new(true), skew: Cell::new(0) }
        }
        fn advance(&self, ns: i64) {
            self.ns.set(self.ns.get() + ns);
        }
        fn real(&self) -> i64 {
            1_700_000_000_000_000_000 + self.ns.get() + self.jump.get()
        }
    }

    impl TickSource for Simulated {
        fn ticks(&self) -> Option<u64> {
            self.counter.get().then(|| ((self.ns.get() + self.skew.get()) * 3) as u64)
        }
        fn realtime_ns(&self) -> i64 {
            self.real()
        }
        fn monotonic_ns(&self) -> i64 {
            self.ns.get()
        }
    }

    #[test]
    fn follows_the_wall_clock_between_resyncs() {
        let clock = TickClock::new();
        let source = Simulated::new();
        assert_eq!(clock.now_ns(&source), source.real());
        assert_eq!(clock.ticks_per_us(), None, "the rate is unknown after one reading");
        for _ in 0..5000 {
            source.advance(1_337);
            let now = clock.now_ns(&source);
            assert!((now - source.real()).abs() <= 1, "{} vs {}", now, source.real());
        }
        assert_eq!(clock.ticks_per_us(), Some(3000));
    }

    #[test]
    fn a_wall_clock_jump_shows_within_a_millisecond() {
        let clock = TickClock::new();
        let source = Simulated::new();
        for _ in 0..100 {
            source.advance(100_000);
            clock.now_ns(&source);
        }
        source.jump.set(-3_600_000_000_000);
        let mut seen_after = None;
        for step in 0..30 {
            source.advance(100_000);
            if (clock.now_ns(&source) - source.real()).abs() <= 1 {
                seen_after = Some(step);
                break;
            }
        }
        assert!(seen_after.is_some_and(|step| step <= 10), "jump seen after {seen_after:?} steps of 0.1 ms");
    }

    /// A source whose every reading is interrupted (the counter jumps between its two
    /// reads): the clock never calibrates from it and reads the wall clock.
    struct Interrupted(Simulated);

    impl TickSource for Interrupted {
        fn ticks(&self) -> Option<u64> {
            self.0.advance(10_000);
            self.0.ticks()
        }
        fn realtime_ns(&self) -> i64 {
            self.0.real()
        }
        fn monotonic_ns(&self) -> i64 {
            self.0.ns.get()
        }
    }

    #[test]
    fn interrupted_readings_leave_the_wall_clock_in_charge() {
        let clock = TickClock::new();
        let source = Interrupted(Simulated::new());
        for _ in 0..1000 {
            source.0.advance(100_000);
            let now = clock.now_ns(&source);
            // (The reading itself moves the simulated time: compare with its bounds.)
            assert!(now <= source.0.real() && now >= source.0.real() - 200_000, "{now}");
        }
        assert_eq!(clock.ticks_per_us(), None, "no rate from interrupted readings");
    }

    #[test]
    fn a_counter_behind_the_base_reads_the_wall_clock() {
        let clock = TickClock::new();
        let source = Simulated::new();
        for _ in 0..100 {
            source.advance(100_000);
            clock.now_ns(&source);
        }
        // (Further behind than the last resync: a smaller lag reads as that much earlier.)
        source.skew.set(-2_000_000);
        assert_eq!(clock.now_ns(&source), source.real());
        source.skew.set(0);
        source.counter.set(false);
        source.advance(10);
        assert_eq!(clock.now_ns(&source), source.real(), "no counter: the wall clock");
    }

    #[test]
    fn the_hardware_clock_agrees_with_clock_gettime_across_threads() {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    let mut worst = 0;
                    for i in 0..200_000 {
                        let before = realtime_ns();
                        let now = SystemClock.now_us() * 1000;
                        let after = realtime_ns();
                        // Within 50 µs of the readings around it (microsecond truncation,
                        // a preempted thread).
                        worst = worst.max((before - 1000 - now).max(now - after));
                        if i % 10_000 == 0 {
                            std::thread::yield_now();
                        }
                    }
                    worst
                })
            })
            .collect();
        for thread in threads {
            let worst = thread.join().unwrap();
            assert!(worst < 50_000, "TSC clock off by {worst} ns");
        }
    }
}
