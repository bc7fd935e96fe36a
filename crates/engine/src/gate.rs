//! The transaction gate: every command holds its shared side; scripts, EXEC of a
//! transaction that may touch any key, FLUSHALL, snapshots... hold it exclusively, so
//! nothing interleaves with them (docs/threading.md).
//!
//! PERF: a reader-writer lock keeps its readers in one counter, a cache line every thread
//! writes on every command: with two threads on two cores each command waited for that
//! line to come from the other core. Readers here count in one of several slots, each on
//! its own line, picked per thread; a writer raises a flag, then waits for the slots to
//! empty. A reader that finds the flag raised steps back and queues on the lock behind
//! the writer, so writers are not starved. Readers and writers meet at the flag and the
//! slots in sequentially consistent order: either the reader sees the flag, or the writer
//! sees the reader's count.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Reader slots: enough that threads rarely share one (a shared slot is still correct).
const SLOTS: usize = 32;

/// A counter alone on its cache line (two lines: adjacent-line prefetching pairs them).
#[repr(align(128))]
#[derive(Default)]
struct Slot(AtomicUsize);

pub struct ExecGate {
    /// Writers against each other and against readers that stepped back.
    lock: RwLock<()>,
    /// A writer holds `lock` and wants the slots empty: readers step back.
    writer: AtomicBool,
    slots: Box<[Slot]>,
}

impl std::fmt::Debug for ExecGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecGate").field("writer", &self.writer.load(Ordering::Relaxed)).finish()
    }
}

/// The shared side, held.
pub enum SharedGate<'a> {
    Slot(&'a AtomicUsize),
    Lock(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
}

impl Drop for SharedGate<'_> {
    fn drop(&mut self) {
        if let SharedGate::Slot(count) = self {
            count.fetch_sub(1, Ordering::Release);
        }
    }
}

/// The exclusive side, held.
pub struct ExclusiveGate<'a> {
    gate: &'a ExecGate,
    _lock: RwLockWriteGuard<'a, ()>,
}

impl Drop for ExclusiveGate<'_> {
    fn drop(&mut self) {
        // The writer's work is done: readers may count in their slots again (before the
        // lock is released; no other writer can raise the flag until then).
        self.gate.writer.store(false, Ordering::SeqCst);
    }
}

/// This thread's slot.
/// How many threads have taken a slot index: while fewer than `SLOTS`, the slots from
/// this number on are unused and a writer need not look at them.
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

fn slot_index() -> usize {
    thread_local! {
        // (SeqCst: a writer that reads a count without this thread's slot comes before it
        // in the total order, so this thread's reader sees the writer's flag.)
        static INDEX: usize = NEXT_SLOT.fetch_add(1, Ordering::SeqCst) % SLOTS;
    }
    INDEX.with(|i| *i)
}

impl Default for ExecGate {
    fn default() -> Self {
        Self {
            lock: RwLock::new(()),
            writer: AtomicBool::new(false),
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
        }
    }
}

impl ExecGate {
    /// The shared side through this thread's slot, unless a writer is there.
    fn try_slot(&self) -> Option<SharedGate<'_>> {
        if self.writer.load(Ordering::Relaxed) {
            return None;
        }
        let count = &self.slots[slot_index()].0;
        count.fetch_add(1, Ordering::SeqCst);
        if self.writer.load(Ordering::SeqCst) {
            count.fetch_sub(1, Ordering::Release);
            return None;
        }
        Some(SharedGate::Slot(count))
    }

    pub fn read(&self) -> SharedGate<'_> {
        self.try_slot().unwrap_or_else(|| SharedGate::Lock(self.lock.read()))
    }

    pub fn try_read(&self) -> Option<SharedGate<'_>> {
        self.try_slot().or_else(|| self.lock.try_read().map(SharedGate::Lock))
    }

    pub fn try_read_for(&self, wait: Duration) -> Option<SharedGate<'_>> {
        self.try_slot().or_else(|| self.lock.try_read_for(wait).map(SharedGate::Lock))
    }

    pub fn write(&self) -> ExclusiveGate<'_> {
        let lock = self.lock.write();
        self.writer.store(true, Ordering::SeqCst);
        self.wait_for_slots(None);
        ExclusiveGate { gate: self, _lock: lock }
    }

    pub fn try_write(&self) -> Option<ExclusiveGate<'_>> {
        let lock = self.lock.try_write()?;
        self.writer.store(true, Ordering::SeqCst);
        let gate = ExclusiveGate { gate: self, _lock: lock };
        // (Dropped, it lowers the flag.)
        self.slots_empty().then_some(gate)
    }

    pub fn try_write_for(&self, wait: Duration) -> Option<ExclusiveGate<'_>> {
        let deadline = Instant::now() + wait;
        let lock = self.lock.try_write_for(wait)?;
        self.writer.store(true, Ordering::SeqCst);
        let gate = ExclusiveGate { gate: self, _lock: lock };
        self.wait_for_slots(Some(deadline)).then_some(gate)
    }

    fn slots_empty(&self) -> bool {
        // PERF: only the slots threads have taken (a server has a few threads, not 32).
        let taken = NEXT_SLOT.load(Ordering::SeqCst).min(SLOTS);
        self.slots[..taken].iter().all(|s| s.0.load(Ordering::SeqCst) == 0)
    }

    /// Waits for the readers in slots to leave (they can't come back while the flag is
    /// up): spins briefly (a command takes microseconds), then yields, then sleeps.
    fn wait_for_slots(&self, deadline: Option<Instant>) -> bool {
        let mut round = 0u32;
        while !self.slots_empty() {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            round += 1;
            if round < 64 {
                std::hint::spin_loop();
            } else if round < 128 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    #[test]
    fn writers_exclude_readers_and_each_other() {
        let gate = Arc::new(ExecGate::default());
        // Writers move a pair of counters together; readers must never see them apart.
        let pair = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
        let threads: Vec<_> = (0..6)
            .map(|t| {
                let (gate, pair) = (gate.clone(), pair.clone());
                std::thread::spawn(move || {
                    for i in 0..3000 {
                        if t % 3 == 0 {
                            let _w = if i % 2 == 0 {
                                gate.write()
                            } else {
                                gate.try_write_for(Duration::from_secs(5)).unwrap()
                            };
                            let a = pair.0.load(Ordering::Relaxed);
                            pair.0.store(a + 1, Ordering::Relaxed);
                            std::hint::spin_loop();
                            pair.1.store(a + 1, Ordering::Relaxed);
                        } else {
                            let _r = if i % 2 == 0 {
                                gate.read()
                            } else {
                                gate.try_read_for(Duration::from_secs(5)).unwrap()
                            };
                            let (a, b) = (pair.0.load(Ordering::Relaxed), pair.1.load(Ordering::Relaxed));
                            assert_eq!(a, b, "a reader saw a writer half done");
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(pair.0.load(Ordering::Relaxed), 2 * 3000);
    }

    #[test]
    fn try_forms_fail_while_the_other_side_is_held() {
        let gate = ExecGate::default();
        let r = gate.read();
        assert!(gate.try_write().is_none());
        assert!(gate.try_write_for(Duration::from_millis(5)).is_none());
        // A failed attempt leaves the gate as it was: readers still come in.
        assert!(gate.try_read().is_some());
        drop(r);
        let w = gate.try_write().expect("free");
        assert!(gate.try_read().is_none());
        assert!(gate.try_read_for(Duration::from_millis(5)).is_none());
        drop(w);
        assert!(gate.try_read().is_some());
    }
}
