//! [`Queue`]: one named queue on a store, with every operation of the Lua library.

use std::collections::HashMap;
use std::time::Duration;

use crate::job::{Counts, Enqueued, Job, JobInfo, JobSpec, FETCH_FIELDS};
use crate::store::{Store, Value};
use crate::Error;

/// The Lua library every state change goes through; loaded by clients themselves.
pub const LIBRARY: &str = include_str!("../lua/quince_queue.lua");
/// The library's VERSION; a client finding an older one (or none) loads its own. Bump it
/// with every change of the library.
pub const LIBRARY_VERSION: i64 = 2;

/// Longest queue name; names become part of every key.
const NAME_MAX: usize = 200;
/// The set of queue names (`Queue::new` adds to it); the CLI and dashboard list it.
pub const REGISTRY_KEY: &str = "qq:queues";

/// A named queue on a store. Cheap to clone; clones share the store's connection.
#[derive(Clone)]
pub struct Queue<S: Store> {
    store: S,
    name: String,
    base: String,
}

/// Whether the store may evict the queue's keys under memory pressure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvictionCheck {
    pub policy: String,
    pub maxmemory: u64,
}

impl EvictionCheck {
    /// Only `noeviction` keeps a queue whole when memory runs out: any other policy may
    /// delete job hashes or whole state sets (volatile-* policies too, since finished jobs
    /// and unique keys carry TTLs). Writes then fail with OOM instead.
    pub fn safe(&self) -> bool {
        self.policy == "noeviction"
    }
}

/// How `Queue::cancel` went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelOutcome {
    /// It had not started; it never will.
    Cancelled,
    /// It is running: its worker is told at its next heartbeat and stops it.
    Requested,
    /// It had already finished.
    Finished,
    Missing,
}

/// The states whose job ids `Queue::list` pages through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Ready,
    Delayed,
    Active,
    /// Waiting for parent jobs.
    Blocked,
    Dead,
    /// Completed or cancelled, within the retention limits.
    Done,
}

impl State {
    pub const ALL: [State; 6] = [State::Ready, State::Delayed, State::Active, State::Blocked, State::Dead, State::Done];

    /// The state's name, which is also its set's key suffix (`qq:{NAME}:ready`).
    pub fn name(self) -> &'static str {
        match self {
            State::Ready => "ready",
            State::Delayed => "delayed",
            State::Active => "active",
            State::Blocked => "blocked",
            State::Dead => "dead",
            State::Done => "done",
        }
    }
}

impl std::str::FromStr for State {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        State::ALL.into_iter().find(|s| s.name() == name).ok_or_else(|| {
            let names: Vec<&str> = State::ALL.iter().map(|s| s.name()).collect();
            format!("no state {name:?}; one of {}", names.join(", "))
        })
    }
}

/// Queue-wide settings, stored with the queue (every client sees them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// At most `max` jobs leased per `per` (None: unlimited).
    pub rate_limit: Option<(u64, Duration)>,
    /// Finished (completed or cancelled) jobs kept: at most this many (None: default
    /// 10,000; Some(None): unlimited) ...
    pub keep_done: Option<Option<u64>>,
    /// ... and none older than this (None: no age limit).
    pub keep_done_for: Option<Duration>,
    /// Dead-lettered jobs kept: by default all (they are lost work until someone looks).
    pub keep_dead: Option<Option<u64>>,
    pub keep_dead_for: Option<Duration>,
    /// Write the event stream `qq:{name}:events` (default true).
    pub events: Option<bool>,
}

impl<S: Store> Queue<S> {
    /// Opens queue `name`, loading the library if the store has none or another version.
    pub async fn new(store: S, name: &str) -> Result<Self, Error> {
        if name.is_empty() || name.len() > NAME_MAX || name.contains(['{', '}']) || name.contains(char::is_whitespace) {
            return Err(Error::Invalid(format!(
                "queue name {name:?}: 1 to {NAME_MAX} characters, no braces or whitespace"
            )));
        }
        let queue = Self { base: format!("qq:{{{name}}}"), name: name.to_string(), store };
        queue.ensure_library().await?;
        queue.store.command(vec![b"SADD".to_vec(), REGISTRY_KEY.into(), name.into()]).await?;
        Ok(queue)
    }

    /// The names of the queues on `store` (every one a client opened), sorted.
    pub async fn names(store: &S) -> Result<Vec<String>, Error> {
        let reply = store.command(vec![b"SMEMBERS".to_vec(), REGISTRY_KEY.into()]).await?;
        let mut names: Vec<String> =
            reply.into_array("SMEMBERS")?.into_iter().map(|v| v.into_string("queue name")).collect::<Result<_, _>>()?;
        names.sort();
        Ok(names)
    }

    async fn ensure_library(&self) -> Result<(), Error> {
        match self.store.fcall("qq_version", &self.base, Vec::new()).await {
            // Ours or a newer one (versions only add functions, so older clients keep
            // working with a newer library).
            Ok(v) if v.as_int("qq_version")? >= LIBRARY_VERSION => Ok(()),
            // No library, or an older one: load ours.
            Ok(_) | Err(Error::Reply(_)) => self.store.load_library(LIBRARY).await,
            Err(e) => Err(e),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key every key of this queue starts with, `qq:{name}`.
    pub fn base_key(&self) -> &str {
        &self.base
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    pub(crate) fn signal_key(&self) -> String {
        format!("{}:signal", self.base)
    }

    async fn call(&self, function: &str, args: Vec<Vec<u8>>) -> Result<Value, Error> {
        self.store.fcall(function, &self.base, args).await
    }

    /// The store's eviction policy, and whether it is safe for a queue.
    pub async fn eviction_check(&self) -> Result<EvictionCheck, Error> {
        let (policy, maxmemory) = self.store.eviction_policy().await?;
        Ok(EvictionCheck { policy, maxmemory })
    }

    pub async fn enqueue(&self, job: &JobSpec) -> Result<Enqueued, Error> {
        let mut out = self.enqueue_bulk(std::slice::from_ref(job)).await?;
        out.pop().ok_or_else(|| Error::Unexpected("qq_enqueue: empty reply".into()))
    }

    /// Enqueues all of `jobs` atomically, in one round trip.
    pub async fn enqueue_bulk(&self, jobs: &[JobSpec]) -> Result<Vec<Enqueued>, Error> {
        for job in jobs {
            job.validate()?;
        }
        let mut args = Vec::with_capacity(1 + jobs.len() * 11);
        args.push(jobs.len().to_string().into_bytes());
        for job in jobs {
            job.push_fields(&mut args);
        }
        let reply = self.call("qq_enqueue", args).await?.into_array("qq_enqueue")?;
        let mut out = Vec::with_capacity(jobs.len());
        let mut items = reply.into_iter();
        while let (Some(id), Some(created)) = (items.next(), items.next()) {
            out.push(Enqueued { id: id.into_string("qq_enqueue id")?, created: created.as_int("qq_enqueue")? == 1 });
        }
        Ok(out)
    }

    /// Leases up to `count` jobs to `worker` for `lease`. Also returns a hint for an empty
    /// answer: how long until a delayed job is due or the rate window ends.
    pub async fn fetch(&self, worker: &str, count: usize, lease: Duration) -> Result<Fetched, Error> {
        let args = vec![
            worker.as_bytes().to_vec(),
            count.to_string().into_bytes(),
            (lease.as_millis().max(1) as u64).to_string().into_bytes(),
        ];
        let reply = self.call("qq_fetch", args).await?.into_array("qq_fetch")?;
        let mut items = reply.into_iter();
        let hint = items.next().ok_or_else(|| Error::Unexpected("qq_fetch: empty reply".into()))?.as_int("hint")?;
        let mut jobs = Vec::with_capacity(items.len() / FETCH_FIELDS);
        while items.len() >= FETCH_FIELDS {
            jobs.push(Job::from_fields(&self.name, &mut items)?);
        }
        Ok(Fetched { jobs, paused: hint == -2, retry_in: (hint > 0).then(|| Duration::from_millis(hint as u64)) })
    }

    /// Records jobs as completed with their results. Per job: true if recorded, false if
    /// its lease was stale (expired or taken back), in which case nothing changed.
    pub async fn ack(&self, done: &[(&Job, &[u8])]) -> Result<Vec<bool>, Error> {
        let mut args = Vec::with_capacity(1 + 4 * done.len());
        args.push(done.len().to_string().into_bytes());
        for (job, result) in done {
            args.push(job.id.clone().into_bytes());
            args.push(job.token.clone().into_bytes());
            args.push(job.attempt.to_string().into_bytes());
            args.push(result.to_vec());
        }
        let reply = self.call("qq_ack", args).await?.into_array("qq_ack")?;
        reply.iter().map(|v| Ok(v.as_int("qq_ack")? == 1)).collect()
    }

    /// Records a failed attempt: retried after `retry_in` (None: dead-letter it now).
    pub async fn fail(&self, job: &Job, error: &str, retry_in: Option<Duration>) -> Result<FailOutcome, Error> {
        let delay = retry_in.map(|d| d.as_millis() as i64).unwrap_or(-1);
        let args = vec![
            job.id.clone().into_bytes(),
            job.token.clone().into_bytes(),
            job.attempt.to_string().into_bytes(),
            error.as_bytes().to_vec(),
            delay.to_string().into_bytes(),
        ];
        let outcome = self.call("qq_fail", args).await?.into_string("qq_fail")?;
        Ok(match outcome.as_str() {
            "retry" => FailOutcome::Retry,
            "dead" => FailOutcome::Dead,
            "cancelled" => FailOutcome::Cancelled,
            _ => FailOutcome::Stale,
        })
    }

    /// Extends the leases of `jobs` to `lease` from now.
    pub async fn heartbeat(&self, jobs: &[(&str, &str)], lease: Duration) -> Result<Vec<LeaseStatus>, Error> {
        let mut args = Vec::with_capacity(1 + 2 * jobs.len());
        args.push((lease.as_millis().max(1) as u64).to_string().into_bytes());
        for (id, token) in jobs {
            args.push(id.as_bytes().to_vec());
            args.push(token.as_bytes().to_vec());
        }
        let reply = self.call("qq_heartbeat", args).await?.into_array("qq_heartbeat")?;
        reply
            .iter()
            .map(|v| {
                Ok(match v.as_int("qq_heartbeat")? {
                    1 => LeaseStatus::Held,
                    2 => LeaseStatus::CancelRequested,
                    _ => LeaseStatus::Lost,
                })
            })
            .collect()
    }

    /// Gives leased jobs back without spending an attempt. Returns how many were released.
    pub async fn release(&self, jobs: &[(&str, &str)]) -> Result<u64, Error> {
        let args = jobs.iter().flat_map(|(id, token)| [id.as_bytes().to_vec(), token.as_bytes().to_vec()]).collect();
        Ok(self.call("qq_release", args).await?.as_int("qq_release")? as u64)
    }

    /// Stores a running job's progress (any bytes; observers read it with `job`).
    pub async fn progress(&self, job: &Job, progress: &[u8]) -> Result<bool, Error> {
        let args = vec![job.id.clone().into_bytes(), job.token.clone().into_bytes(), progress.to_vec()];
        Ok(self.call("qq_progress", args).await?.as_int("qq_progress")? == 1)
    }

    pub async fn cancel(&self, id: &str) -> Result<CancelOutcome, Error> {
        let outcome = self.call("qq_cancel", vec![id.as_bytes().to_vec()]).await?.into_string("qq_cancel")?;
        Ok(match outcome.as_str() {
            "cancelled" => CancelOutcome::Cancelled,
            "requested" => CancelOutcome::Requested,
            "finished" => CancelOutcome::Finished,
            _ => CancelOutcome::Missing,
        })
    }

    /// Stops leasing jobs (running ones finish) until `resume`.
    pub async fn pause(&self) -> Result<(), Error> {
        self.call("qq_pause", Vec::new()).await.map(drop)
    }

    pub async fn resume(&self) -> Result<(), Error> {
        self.call("qq_resume", Vec::new()).await.map(drop)
    }

    pub async fn configure(&self, settings: &Settings) -> Result<(), Error> {
        let mut pairs: Vec<(&str, i64)> = Vec::new();
        if let Some((max, per)) = settings.rate_limit {
            pairs.push(("rate_max", max as i64));
            pairs.push(("rate_ms", per.as_millis().max(1) as i64));
        }
        let count = |v: Option<u64>| v.map(|n| n as i64).unwrap_or(-1);
        if let Some(keep) = settings.keep_done {
            pairs.push(("keep_done", count(keep)));
        }
        if let Some(age) = settings.keep_done_for {
            pairs.push(("keep_done_ms", age.as_millis() as i64));
        }
        if let Some(keep) = settings.keep_dead {
            pairs.push(("keep_dead", count(keep)));
        }
        if let Some(age) = settings.keep_dead_for {
            pairs.push(("keep_dead_ms", age.as_millis() as i64));
        }
        if let Some(events) = settings.events {
            pairs.push(("events", events as i64));
        }
        if pairs.is_empty() {
            return Ok(());
        }
        let args = pairs.iter().flat_map(|(k, v)| [k.as_bytes().to_vec(), v.to_string().into_bytes()]).collect();
        self.call("qq_configure", args).await.map(drop)
    }

    pub async fn counts(&self) -> Result<Counts, Error> {
        Counts::from_value(self.call("qq_counts", Vec::new()).await?)
    }

    /// Every field of a job, or None if there is no such job (or it was trimmed).
    pub async fn job(&self, id: &str) -> Result<Option<JobInfo>, Error> {
        let items = self.call("qq_job", vec![id.as_bytes().to_vec()]).await?.into_array("qq_job")?;
        if items.is_empty() {
            return Ok(None);
        }
        let mut fields = HashMap::new();
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            fields.insert(k.into_string("qq_job field")?, v.into_bytes("qq_job value")?);
        }
        Ok(Some(JobInfo { fields }))
    }

    /// Job ids in `state`, from `offset`, at most `count` (oldest or first to run first).
    pub async fn list(&self, state: State, offset: u64, count: u64) -> Result<Vec<String>, Error> {
        let args =
            vec![state.name().as_bytes().to_vec(), offset.to_string().into_bytes(), count.to_string().into_bytes()];
        let items = self.call("qq_list", args).await?.into_array("qq_list")?;
        items.into_iter().map(|v| v.into_string("qq_list")).collect()
    }

    /// Moves dead-lettered jobs back to ready with their attempts reset: the given ids, or
    /// (with none) up to `limit` of the oldest. Returns how many moved.
    pub async fn retry_dead(&self, ids: &[&str], limit: u64) -> Result<u64, Error> {
        self.dead_op("qq_dead_retry", ids, limit).await
    }

    /// Deletes dead-lettered jobs: the given ids, or (with none) up to `limit` of the oldest.
    pub async fn purge_dead(&self, ids: &[&str], limit: u64) -> Result<u64, Error> {
        self.dead_op("qq_dead_purge", ids, limit).await
    }

    async fn dead_op(&self, function: &str, ids: &[&str], limit: u64) -> Result<u64, Error> {
        let mut args = vec![limit.max(1).to_string().into_bytes()];
        args.extend(ids.iter().map(|id| id.as_bytes().to_vec()));
        Ok(self.call(function, args).await?.as_int(function)? as u64)
    }

    /// Enqueues `job` for tick `tick_ms` of schedule `name`, unless this tick or a later one
    /// was already enqueued (by this or any other scheduler). Returns the new job's id.
    pub async fn schedule_tick(&self, name: &str, tick_ms: u64, job: &JobSpec) -> Result<Option<String>, Error> {
        job.validate()?;
        let mut args = vec![name.as_bytes().to_vec(), tick_ms.to_string().into_bytes()];
        job.push_fields(&mut args);
        match self.call("qq_schedule", args).await? {
            Value::Nil => Ok(None),
            v => Ok(Some(v.into_string("qq_schedule")?)),
        }
    }

    /// Each schedule's last tick enqueued (Unix ms).
    pub async fn schedules(&self) -> Result<HashMap<String, u64>, Error> {
        let items = self.call("qq_schedules", Vec::new()).await?.into_array("qq_schedules")?;
        let mut out = HashMap::new();
        let mut it = items.into_iter();
        while let (Some(name), Some(tick)) = (it.next(), it.next()) {
            out.insert(name.into_string("qq_schedules")?, tick.as_int("qq_schedules")? as u64);
        }
        Ok(out)
    }

    /// The server's clock, Unix milliseconds (what leases and delays are measured by).
    pub async fn server_time_ms(&self) -> Result<u64, Error> {
        Ok(self.call("qq_time", Vec::new()).await?.as_int("qq_time")? as u64)
    }
}

/// What one fetch leased.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    pub jobs: Vec<Job>,
    pub paused: bool,
    /// With no jobs: when a delayed job is due or the rate window ends, if known.
    pub retry_in: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOutcome {
    /// It will run again after its backoff.
    Retry,
    /// Out of attempts (or not retryable): in the dead-letter set.
    Dead,
    /// It was cancelled while running.
    Cancelled,
    /// The lease had expired or been taken back; nothing changed.
    Stale,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseStatus {
    Held,
    /// Extended, but someone asked to cancel the job: stop it.
    CancelRequested,
    /// Expired or taken back: stop and report nothing.
    Lost,
}
