//! [`Scheduler`]: enqueues jobs on intervals and cron expressions. Run as many instances as
//! you like (one per worker process, say): each tick's job is enqueued once, by whichever
//! instance gets there first (`qq_schedule` records the last tick per schedule), so there is
//! no single scheduler to lose.

use std::future::Future;
use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};

use crate::job::JobSpec;
use crate::queue::Queue;
use crate::store::Store;
use crate::Error;

enum Every {
    Interval(u64),
    Cron(Box<cron::Schedule>),
}

impl Every {
    /// The first tick strictly after `after_ms` (Unix ms, the server's clock).
    fn next_after(&self, after_ms: u64) -> Option<u64> {
        match self {
            Every::Interval(iv) => Some((after_ms / iv + 1) * iv),
            Every::Cron(schedule) => {
                let t: DateTime<Utc> = Utc.timestamp_millis_opt(after_ms as i64).single()?;
                schedule.after(&t).next().map(|d| d.timestamp_millis() as u64)
            }
        }
    }
}

struct Schedule {
    name: String,
    every: Every,
    job: JobSpec,
    next_ms: Option<u64>,
}

/// What a scheduler did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchedulerReport {
    /// Ticks this instance enqueued (others may have enqueued the rest).
    pub enqueued: u64,
    /// Ticks another instance had enqueued first.
    pub already_enqueued: u64,
}

pub struct Scheduler<S: Store> {
    queue: Queue<S>,
    schedules: Vec<Schedule>,
    catch_up: Duration,
}

/// Longest sleep between looks at the clock (the server's clock can move differently).
const LOOK_MAX: Duration = Duration::from_secs(1);

impl<S: Store> Scheduler<S> {
    pub fn new(queue: Queue<S>) -> Self {
        Self { queue, schedules: Vec::new(), catch_up: Duration::from_secs(60) }
    }

    /// Ticks missed while no scheduler ran are enqueued late if younger than this (default
    /// one minute); older ones are skipped, so a restart does not bring a burst.
    pub fn catch_up(mut self, window: Duration) -> Self {
        self.catch_up = window;
        self
    }

    /// Enqueues `job` at every multiple of `interval` since the Unix epoch.
    pub fn every(self, name: &str, interval: Duration, job: JobSpec) -> Result<Self, Error> {
        let ms = interval.as_millis() as u64;
        if ms == 0 {
            return Err(Error::Invalid(format!("schedule {name}: the interval must be at least 1 ms")));
        }
        self.add(name, Every::Interval(ms), job)
    }

    /// Enqueues `job` at the times of a cron expression with seconds, in UTC:
    /// `sec min hour day-of-month month day-of-week [year]` (`0 */5 * * * *`: every five
    /// minutes).
    pub fn cron(self, name: &str, expression: &str, job: JobSpec) -> Result<Self, Error> {
        let schedule = cron::Schedule::from_str(expression)
            .map_err(|e| Error::Invalid(format!("schedule {name}: cron expression {expression:?}: {e}")))?;
        self.add(name, Every::Cron(Box::new(schedule)), job)
    }

    fn add(mut self, name: &str, every: Every, job: JobSpec) -> Result<Self, Error> {
        job.validate()?;
        if self.schedules.iter().any(|s| s.name == name) {
            return Err(Error::Invalid(format!("schedule {name} is defined twice")));
        }
        self.schedules.push(Schedule { name: name.to_string(), every, job, next_ms: None });
        Ok(self)
    }

    /// Enqueues due ticks until `shutdown` completes. Store errors are retried (printed).
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) -> Result<SchedulerReport, Error> {
        let mut report = SchedulerReport::default();
        tokio::pin!(shutdown);
        loop {
            let wait = match self.tick(&mut report).await {
                Ok(wait) => wait,
                Err(e) => {
                    eprintln!("quince-queue: scheduler: {e}");
                    LOOK_MAX
                }
            };
            tokio::select! {
                _ = &mut shutdown => return Ok(report),
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Enqueues every due tick; returns how long to sleep.
    async fn tick(&mut self, report: &mut SchedulerReport) -> Result<Duration, Error> {
        let now = self.queue.server_time_ms().await?;
        let oldest = now.saturating_sub(self.catch_up.as_millis() as u64);
        let mut last_ticks = None;
        let mut soonest = LOOK_MAX.as_millis() as u64;
        for s in &mut self.schedules {
            let mut next = match s.next_ms {
                Some(n) => n,
                // A new instance goes on after the last tick any instance enqueued (within
                // the catch-up window); a schedule never run starts now, not in the past.
                None => {
                    if last_ticks.is_none() {
                        last_ticks = Some(self.queue.schedules().await?);
                    }
                    let from = match last_ticks.as_ref().and_then(|t| t.get(&s.name)) {
                        Some(&last) => last.max(oldest.saturating_sub(1)),
                        None => now.saturating_sub(1),
                    };
                    s.every.next_after(from).unwrap_or(u64::MAX)
                }
            };
            while next <= now {
                if next >= oldest {
                    match self.queue.schedule_tick(&s.name, next, &s.job).await? {
                        Some(_) => report.enqueued += 1,
                        None => report.already_enqueued += 1,
                    }
                }
                next = s.every.next_after(next).unwrap_or(u64::MAX);
            }
            s.next_ms = Some(next);
            soonest = soonest.min(next.saturating_sub(now));
        }
        Ok(Duration::from_millis(soonest.max(1)))
    }
}
