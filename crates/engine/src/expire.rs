//! The active expiry cycle, modelled on Redis's `activeExpireCycle`: sample keys with a
//! TTL, delete the expired ones, and keep going in a database while more than 10% of a
//! sample was stale, within a CPU time budget per call.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::keyspace::Rng;
use crate::Engine;

/// Keys sampled per database per round (ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP).
const KEYS_PER_LOOP: usize = 20;
/// Keep sampling a database while more than this percentage of a round was expired.
const ACCEPTABLE_STALE_PERCENT: usize = 10;

/// Outcome of one cycle, for stats and tests.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CycleReport {
    pub sampled: usize,
    pub expired: usize,
    pub timed_out: bool,
}

impl Engine {
    /// On a writable replica: deletes the tracked keys (set with a TTL by the replica's own
    /// clients) whose TTL passed, and stops tracking keys that lost their TTL or are gone
    /// (Redis's expireSlaveKeys).
    fn expire_replica_local_keys(&self, report: &mut CycleReport) {
        let tracked: Vec<(usize, crate::keyspace::Key)> = {
            let set = self.replica_local_ttls.lock();
            if set.is_empty() {
                return;
            }
            set.iter().cloned().collect()
        };
        let Some(_gate) = self.exec_gate.try_read() else { return };
        let now_ms = self.clock.now_ms();
        let mut done = Vec::new();
        for (db, key) in tracked {
            let Some(mut guard) = self.keyspace.try_lock(self.keyspace.shard_of(&key)) else { continue };
            let table = &mut guard.dbs[db];
            report.sampled += 1;
            match table.peek_expire_at_ms(&key) {
                Some(at) if at <= now_ms => {
                    table.remove_expired(&key);
                    report.expired += 1;
                    done.push((db, key));
                }
                Some(_) => {}
                None => done.push((db, key)),
            }
        }
        let mut set = self.replica_local_ttls.lock();
        for entry in done {
            set.remove(&entry);
        }
    }

    /// INFO's `slave_expires_tracked_keys`.
    pub fn replica_tracked_keys(&self) -> usize {
        self.replica_local_ttls.lock().len()
    }

    /// A replica became a master: its own expiry covers every key again.
    pub fn forget_replica_local_keys(&self) {
        self.replica_local_ttls.lock().clear();
    }

    /// Runs one active expiry cycle for at most `budget_us` microseconds. The server calls
    /// it `hz` times a second with 25% of the period as budget, as Redis does. Each shard
    /// lock is held for one sampling round at a time, so clients are never stalled long.
    pub fn active_expire_cycle(&self, budget_us: u64) -> CycleReport {
        // Redis's databasesCron rehashes for 1 ms a call, whatever expiry does.
        if self.hot.active_rehashing.load(Ordering::Relaxed) && !self.pause_in_force() {
            self.keyspace.rehash_for(std::time::Duration::from_millis(1));
        }
        self.keyspace.note_size();
        let start = Instant::now();
        let mut report = CycleReport::default();
        // DEBUG SET-ACTIVE-EXPIRE 0 turns the cycle off (Redis's tests rely on it).
        if !self.hot.active_expire.load(Ordering::Relaxed) || self.pause_in_force() {
            return report;
        }
        if self.hot.replica_keeps_expired.load(Ordering::Relaxed) {
            // A replica leaves expiry to its master, except for keys its own clients set.
            self.expire_replica_local_keys(&mut report);
            return report;
        }
        // Not while a script or transaction runs alone (it holds the gate exclusively), nor
        // in the shards one running alongside others holds: as in Redis, no key expires
        // under them (a script sees time stand still).
        let Some(_gate) = self.exec_gate.try_read() else { return report };
        let shards = self.keyspace.shard_count();
        let dbs = self.keyspace.databases();
        let first = self.expire_cursor.fetch_add(1, Ordering::Relaxed);
        let mut rng = Rng::new(self.clock.now_us() as u64 ^ first as u64);
        let now_ms = self.clock.now_ms();
        let notify_flags = self.hot.notify_flags.load(Ordering::Relaxed);
        let notify_expired = crate::exec::db_event_mask(notify_flags) & crate::keyspace::EVENT_EXPIRED;
        // Client-side caching hears of expired keys too.
        let tracking = self.tracking.active();
        let event_mask = if tracking { crate::keyspace::EVENT_EXPIRED } else { notify_expired };
        for step in 0..shards * dbs {
            let slot = (first + step) % (shards * dbs);
            let (shard, db) = (slot / dbs, slot % dbs);
            loop {
                let (sampled, expired, events) = {
                    // Under the shared transaction gate: a snapshot taken with the gate held
                    // exclusively never sees a sampling round half done.
                    let Some(_gate) = self.exec_gate.try_read_for(std::time::Duration::from_millis(1)) else {
                        return report;
                    };
                    let persistence = self.persistence().filter(|p| p.wants_effects());
                    let log_mask = if persistence.is_some() { crate::keyspace::EVENT_EXPIRED_LOG } else { 0 };
                    // A shard a script or transaction holds (perhaps for long) is left for
                    // a later cycle: no key expires under them, and the cycle never waits.
                    let Some(mut guard) = self.keyspace.try_lock(shard) else { break };
                    let table = &mut guard.dbs[db];
                    table.set_collect_events(event_mask | log_mask);
                    table.set_lazy_free(self.hot.lazy_free_mask.load(Ordering::Relaxed), &self.lazyfree);
                    let (sampled, expired) = table.expire_sample(KEYS_PER_LOOP, now_ms, &mut rng);
                    // The DELs are logged under the shard lock, in order with the writes.
                    if let Some(layer) = persistence {
                        let mut effects = crate::persistence::Effects::default();
                        let del = self.expired_deletion_command();
                        for key in table.take_expired_log() {
                            effects.push(db, &[del, &key[..]]);
                        }
                        if !effects.is_empty() {
                            layer.feed(&effects);
                        }
                    }
                    (sampled, expired, if table.has_events() { table.take_events() } else { Vec::new() })
                };
                // Published with the shard unlocked: subscribers never wait on the keyspace.
                for (_, event, key) in &events {
                    if tracking {
                        self.tracking.invalidate(&self.clients, key, None, None, &mut Vec::new(), true);
                    }
                    if notify_expired != 0 {
                        self.notify_keyspace_event(notify_flags, event, key, db);
                    }
                }
                if tracking && !events.is_empty() {
                    self.tracking.broadcast(&self.clients);
                }
                report.sampled += sampled;
                report.expired += expired;
                if start.elapsed().as_micros() as u64 > budget_us {
                    report.timed_out = true;
                    self.note_expire_latency(start);
                    return report;
                }
                if sampled == 0 || expired * 100 / sampled <= ACCEPTABLE_STALE_PERCENT {
                    break;
                }
            }
        }
        self.note_expire_latency(start);
        report
    }

    /// Records an `expire-cycle` latency event when the cycle took at least the threshold.
    fn note_expire_latency(&self, start: Instant) {
        let threshold = self.observe.latency_threshold_ms.load(Ordering::Relaxed);
        let ms = start.elapsed().as_millis() as u64;
        if threshold > 0 && ms >= threshold {
            self.observe.latency.lock().add("expire-cycle", self.clock.now_ms() / 1000, ms);
        }
    }
}
