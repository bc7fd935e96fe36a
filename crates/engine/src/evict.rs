//! `maxmemory`: when the memory in use exceeds it, keys are evicted per
//! `maxmemory-policy` before commands run (Redis's performEvictions), and commands flagged
//! `denyoom` are refused with -OOM while nothing more can be evicted.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::keyspace::{lfu_decayed, lru_clock, Key, Rng, LRU_CLOCK_MAX};
use crate::persistence::Effects;
use crate::Engine;

/// `maxmemory-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    NoEviction,
    VolatileLru,
    AllKeysLru,
    VolatileLfu,
    AllKeysLfu,
    VolatileRandom,
    AllKeysRandom,
    VolatileTtl,
}

impl Policy {
    pub fn from_config(name: &str) -> Self {
        match name {
            "volatile-lru" => Policy::VolatileLru,
            "allkeys-lru" => Policy::AllKeysLru,
            "volatile-lfu" => Policy::VolatileLfu,
            "allkeys-lfu" => Policy::AllKeysLfu,
            "volatile-random" => Policy::VolatileRandom,
            "allkeys-random" => Policy::AllKeysRandom,
            "volatile-ttl" => Policy::VolatileTtl,
            _ => Policy::NoEviction,
        }
    }

    fn volatile(self) -> bool {
        matches!(self, Policy::VolatileLru | Policy::VolatileLfu | Policy::VolatileRandom | Policy::VolatileTtl)
    }
}

/// The error a refused command gets.
pub const OOM_ERROR: &str = "OOM command not allowed when used memory > 'maxmemory'.";

impl Engine {
    /// The memory `maxmemory` limits: all of it but replicas' output and the AOF buffer.
    pub fn memory_for_eviction(&self) -> Option<u64> {
        let used = self.used_memory()?;
        let not_counted = self.persistence().map_or(0, |p| p.not_counted_for_eviction());
        Some(used.saturating_sub(not_counted))
    }

    /// Whether memory is over `maxmemory` and nothing more can be evicted now (Redis's
    /// EVICT_FAIL): evicts keys per the policy first, for at most a time budget (after which
    /// the server's cron goes on evicting, and commands are not refused meanwhile).
    pub fn out_of_memory(&self) -> bool {
        let maxmemory = self.hot.maxmemory.load(Ordering::Relaxed);
        // Nothing is evicted while a dataset loads (Redis's performEvictions).
        if maxmemory == 0 || self.is_loading() {
            return false;
        }
        let Some(used) = self.memory_for_eviction() else { return false };
        if used <= maxmemory {
            return false;
        }
        let policy = *self.hot.maxmemory_policy.read();
        if policy == Policy::NoEviction {
            return true;
        }
        let (samples, tenacity) = {
            let config = self.config.read();
            (config.get_int("maxmemory-samples").max(1) as usize, config.get_int("maxmemory-eviction-tenacity"))
        };
        let budget_us = eviction_time_limit_us(tenacity);
        let start = Instant::now();
        let mut rng = Rng::new(self.clock.now_us() as u64);
        while self.memory_for_eviction().is_some_and(|u| u > maxmemory) {
            let Some((db, key)) = self.pick_victim(policy, samples, &mut rng) else {
                return true;
            };
            self.evict_key(db, &key);
            if start.elapsed().as_micros() as u64 > budget_us {
                // Still over: the cron carries on; this command may run.
                return false;
            }
        }
        false
    }

    /// The best candidate among `samples` keys drawn from each database, per the policy.
    fn pick_victim(&self, policy: Policy, samples: usize, rng: &mut Rng) -> Option<(usize, Key)> {
        let now = self.clock.now_ms();
        let decay = self.hot.lfu_decay_time.load(Ordering::Relaxed);
        // Lower is evicted first.
        let score = |access: u32, expire: Option<i64>| -> i64 {
            match policy {
                Policy::VolatileLru | Policy::AllKeysLru => {
                    let clock = lru_clock(now);
                    let idle = if clock >= access { clock - access } else { LRU_CLOCK_MAX - access + clock };
                    -i64::from(idle)
                }
                Policy::VolatileLfu | Policy::AllKeysLfu => i64::from(lfu_decayed(access, now, decay)),
                Policy::VolatileTtl => expire.unwrap_or(i64::MAX),
                _ => 0,
            }
        };
        let shards = self.keyspace.shard_count();
        let databases = self.keyspace.databases();
        let mut best: Option<(i64, usize, Key)> = None;
        // Random shards until one holds candidates in some database (most are empty in a
        // small dataset); every database is sampled under that one lock.
        let first = rng.below(shards);
        for step in 0..shards {
            let guard = self.keyspace.lock((first + step) % shards);
            for db in 0..databases {
                if let Some((s, key)) = guard.dbs[db].eviction_best(samples, policy.volatile(), rng, score) {
                    if best.as_ref().is_none_or(|(b, _, _)| s < *b) {
                        best = Some((s, db, key));
                    }
                }
                if matches!(policy, Policy::AllKeysRandom | Policy::VolatileRandom) && best.is_some() {
                    break;
                }
            }
            if best.is_some() {
                break;
            }
        }
        best.map(|(_, db, key)| (db, key))
    }

    /// Deletes an evicted key: logged as a DEL, an `evicted` event, WATCH flagged.
    fn evict_key(&self, db: usize, key: &[u8]) {
        let shard = self.keyspace.shard_of(key);
        {
            let mut guard = self.keyspace.lock(shard);
            guard.dbs[db].set_lazy_free(self.hot.lazy_free_mask.load(Ordering::Relaxed), &self.lazyfree);
            if !guard.dbs[db].evict(key) {
                return;
            }
            if let Some(layer) = self.persistence().filter(|p| p.wants_effects()) {
                let mut effects = Effects::default();
                let lazy = self.config.read().get_bool("lazyfree-lazy-eviction");
                effects.push(db, &[if lazy { &b"UNLINK"[..] } else { &b"DEL"[..] }, key]);
                layer.feed(&effects);
            }
        }
        self.stats.evicted_keys.fetch_add(1, Ordering::Relaxed);
        self.key_changed(Some(db), key, None);
        let flags = self.hot.notify_flags.load(Ordering::Relaxed);
        if flags & crate::pubsub::notify::EVICTED != 0 {
            self.notify_keyspace_event(flags, "evicted", key, db);
        }
    }
}

/// Redis's evictionTimeLimitUs: 50 µs at tenacity 0, growing 15% per step up to 10,
/// unlimited at 100.
fn eviction_time_limit_us(tenacity: i64) -> u64 {
    if tenacity <= 10 {
        return 50 * (tenacity.max(0) as u64 + 1);
    }
    if tenacity < 100 {
        return (500.0 * 1.15f64.powi((tenacity - 10) as i32)) as u64;
    }
    u64::MAX
}
