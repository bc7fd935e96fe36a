//! Jobs as a producer describes them ([`JobSpec`]), as a worker receives them ([`Job`]) and
//! as an observer reads them back ([`JobInfo`]).

use std::collections::HashMap;
use std::time::Duration;

use crate::store::Value;
use crate::Error;

/// A job to enqueue. `JobSpec::new("email", payload)` runs once as soon as a worker is free,
/// with up to 3 attempts one second apart (doubling).
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub(crate) kind: String,
    pub(crate) payload: Vec<u8>,
    pub(crate) priority: i32,
    pub(crate) delay_ms: u64,
    pub(crate) at_ms: u64,
    pub(crate) max_attempts: u32,
    pub(crate) timeout_ms: u64,
    pub(crate) backoff_ms: u64,
    pub(crate) unique: Option<(String, u64)>,
    pub(crate) parents: Vec<String>,
}

/// Highest and lowest priority; higher runs first.
pub const PRIORITY_MAX: i32 = 1000;

impl JobSpec {
    pub fn new(kind: impl Into<String>, payload: impl Into<Vec<u8>>) -> Self {
        Self {
            kind: kind.into(),
            payload: payload.into(),
            priority: 0,
            delay_ms: 0,
            at_ms: 0,
            max_attempts: 3,
            timeout_ms: 0,
            backoff_ms: 1000,
            unique: None,
            parents: Vec::new(),
        }
    }

    /// From -1000 to 1000; higher runs first, equal priorities in enqueue order. Default 0.
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Run no earlier than `delay` from now (the server's clock).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay_ms = delay.as_millis() as u64;
        self
    }

    /// Run no earlier than this Unix time in milliseconds (the server's clock).
    pub fn run_at_ms(mut self, unix_ms: u64) -> Self {
        self.at_ms = unix_ms;
        self
    }

    /// Attempts before the job is dead-lettered (at least 1; default 3).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// An attempt running longer fails with a timeout (default: the worker's).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout_ms = timeout.as_millis() as u64;
        self
    }

    /// The delay before the first retry; each further retry doubles it, with jitter (default 1 s).
    pub fn backoff(mut self, first_retry: Duration) -> Self {
        self.backoff_ms = first_retry.as_millis() as u64;
        self
    }

    /// An idempotency key: while a job holding `key` was enqueued less than `ttl` ago
    /// (forever if `ttl` is zero), enqueueing another returns that job's id instead.
    pub fn unique(mut self, key: impl Into<String>, ttl: Duration) -> Self {
        self.unique = Some((key.into(), ttl.as_millis() as u64));
        self
    }

    /// Run only after these jobs (same queue) completed. If one of them is dead-lettered or
    /// cancelled, this job is dead-lettered too.
    pub fn after<I: IntoIterator<Item = S>, S: Into<String>>(mut self, parents: I) -> Self {
        self.parents.extend(parents.into_iter().map(Into::into));
        self
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        if !(-PRIORITY_MAX..=PRIORITY_MAX).contains(&self.priority) {
            return Err(Error::Invalid(format!("priority {} is outside -1000..=1000", self.priority)));
        }
        if self.max_attempts == 0 {
            return Err(Error::Invalid("max_attempts must be at least 1".into()));
        }
        if self.kind.is_empty() {
            return Err(Error::Invalid("a job needs a type".into()));
        }
        if self.parents.iter().any(|p| p.is_empty() || p.contains(char::is_whitespace)) {
            return Err(Error::Invalid("a parent id is empty or has whitespace".into()));
        }
        Ok(())
    }

    /// The 11 fields qq_enqueue and qq_schedule take per job (see the Lua library).
    pub(crate) fn push_fields(&self, out: &mut Vec<Vec<u8>>) {
        let (unique_key, unique_ttl) = self.unique.clone().unwrap_or_default();
        out.push(self.kind.clone().into_bytes());
        out.push(self.payload.clone());
        out.push(self.priority.to_string().into_bytes());
        out.push(self.delay_ms.to_string().into_bytes());
        out.push(self.at_ms.to_string().into_bytes());
        out.push(self.max_attempts.to_string().into_bytes());
        out.push(self.timeout_ms.to_string().into_bytes());
        out.push(unique_key.into_bytes());
        out.push(unique_ttl.to_string().into_bytes());
        out.push(self.parents.join(" ").into_bytes());
        out.push(self.backoff_ms.to_string().into_bytes());
    }
}

/// The answer to an enqueue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enqueued {
    pub id: String,
    /// False when a unique key matched a job already enqueued: `id` is that job's.
    pub created: bool,
}

/// A job leased to this worker. The lease's `token` fences every later report: once the
/// lease expired or was taken back, the server refuses them.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub queue: String,
    pub id: String,
    pub token: String,
    pub kind: String,
    pub payload: Vec<u8>,
    /// 1 on the first attempt.
    pub attempt: u32,
    pub max_attempts: u32,
    pub timeout_ms: u64,
    pub backoff_ms: u64,
}

/// Values per leased job in qq_fetch's reply.
pub(crate) const FETCH_FIELDS: usize = 6;

/// A job's `opts` field: "max_attempts timeout_ms backoff_ms".
pub(crate) fn parse_opts(opts: &str) -> (u32, u64, u64) {
    let mut it = opts.split(' ').map(|n| n.parse::<u64>().unwrap_or(0));
    let max_attempts = it.next().unwrap_or(1).max(1) as u32;
    (max_attempts, it.next().unwrap_or(0), it.next().unwrap_or(0))
}

impl Job {
    pub(crate) fn from_fields(queue: &str, fields: &mut impl Iterator<Item = Value>) -> Result<Self, Error> {
        let mut next = |what: &str| fields.next().ok_or_else(|| Error::Unexpected(format!("qq_fetch: no {what}")));
        let id = next("id")?.into_string("id")?;
        let token = next("token")?.into_string("token")?;
        let kind = next("type")?.into_string("type")?;
        let payload = next("payload")?.into_bytes("payload")?;
        let attempt = next("attempts")?.as_int("attempts")? as u32;
        let (max_attempts, timeout_ms, backoff_ms) = parse_opts(&next("opts")?.into_string("opts")?);
        Ok(Job { queue: queue.to_string(), id, token, kind, payload, attempt, max_attempts, timeout_ms, backoff_ms })
    }

    /// The delay before the next attempt if this one fails: backoff doubled per attempt
    /// (capped at an hour), half of it fixed and half random, so failing jobs spread out.
    pub fn retry_delay(&self) -> Duration {
        let doublings = self.attempt.saturating_sub(1).min(30);
        let full = self.backoff_ms.saturating_mul(1u64 << doublings).min(3_600_000);
        Duration::from_millis(full / 2 + fastrand::u64(0..=full / 2))
    }
}

/// A job as stored: every field of its hash.
#[derive(Debug, Clone, PartialEq)]
pub struct JobInfo {
    pub fields: HashMap<String, Vec<u8>>,
}

impl JobInfo {
    pub fn get(&self, field: &str) -> Option<&[u8]> {
        self.fields.get(field).map(|v| v.as_slice())
    }

    pub fn text(&self, field: &str) -> Option<&str> {
        self.get(field).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// ready, delayed, blocked (waiting for parents), active, completed, dead or cancelled.
    pub fn state(&self) -> &str {
        self.text("state").unwrap_or("")
    }

    /// Attempts started so far (0 before the first fetch).
    pub fn attempts(&self) -> u32 {
        self.text("attempts").and_then(|s| s.parse().ok()).unwrap_or(0)
    }

    pub fn max_attempts(&self) -> u32 {
        parse_opts(self.text("opts").unwrap_or("")).0
    }

    pub fn error(&self) -> Option<&str> {
        self.text("error").filter(|e| !e.is_empty())
    }

    pub fn result(&self) -> Option<&[u8]> {
        self.get("result")
    }

    pub fn payload(&self) -> &[u8] {
        self.get("payload").unwrap_or_default()
    }
}

/// Jobs per state and counters since the queue was created.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub ready: u64,
    pub delayed: u64,
    pub active: u64,
    pub blocked: u64,
    pub dead: u64,
    /// Finished jobs still kept (completed or cancelled), within the retention limits.
    pub done: u64,
    pub paused: bool,
    pub enqueued: u64,
    pub completed: u64,
    pub failed: u64,
    pub retried: u64,
    /// Leases that ran out (a worker died or stalled) and were taken back.
    pub expired: u64,
    pub dead_lettered: u64,
    pub cancelled: u64,
    /// Acks and failures refused because their lease was no longer current.
    pub stale: u64,
}

impl Counts {
    pub(crate) fn from_value(v: Value) -> Result<Self, Error> {
        let mut c = Counts::default();
        let items = v.into_array("qq_counts")?;
        for pair in items.chunks(2) {
            let [name, value] = pair else { break };
            let name = name.clone().into_string("qq_counts")?;
            let n = value.as_int("qq_counts")?.max(0) as u64;
            match name.as_str() {
                "ready" => c.ready = n,
                "delayed" => c.delayed = n,
                "active" => c.active = n,
                "blocked" => c.blocked = n,
                "dead" => c.dead = n,
                "done" => c.done = n,
                "paused" => c.paused = n == 1,
                "enqueued" => c.enqueued = n,
                "completed" => c.completed = n,
                "failed" => c.failed = n,
                "retried" => c.retried = n,
                "expired" => c.expired = n,
                "dead_lettered" => c.dead_lettered = n,
                "cancelled" => c.cancelled = n,
                "stale" => c.stale = n,
                _ => {}
            }
        }
        Ok(c)
    }

    /// Jobs not finished: ready, delayed, active or blocked.
    pub fn pending(&self) -> u64 {
        self.ready + self.delayed + self.active + self.blocked
    }
}
