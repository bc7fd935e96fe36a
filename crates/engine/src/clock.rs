//! Time as the engine sees it. The engine never reads the system clock directly, so the
//! deterministic simulator and tests can drive expiry with a fake clock.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
    /// Microseconds since the Unix epoch.
    fn now_us(&self) -> i64 {
        self.now_ms() * 1000
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
        // PERF: clock_gettime with plain integer arithmetic; SystemTime's checked
        // subtraction and u128 conversion cost as much again (two reads per command).
        #[cfg(unix)]
        {
            let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: `ts` is a valid place for the kernel (vDSO) to write the time.
            if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) } == 0 {
                // (time_t and c_long are narrower than i64 on 32-bit targets.)
                #[allow(clippy::unnecessary_cast)]
                return ts.tv_sec as i64 * 1_000_000 + ts.tv_nsec as i64 / 1000;
            }
        }
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64)
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
