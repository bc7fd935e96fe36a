//! The worker runtime: leases jobs from one or more queues, runs their handlers on tokio
//! tasks (at most `concurrency` at once), keeps their leases alive with heartbeats, and
//! reports each outcome. Completions are acknowledged in batches, so a busy worker spends
//! about two round trips per batch of jobs rather than two per job.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::{mpsc, Notify};
use tokio::task::AbortHandle;

use crate::job::Job;
use crate::queue::{FailOutcome, LeaseStatus, Queue};
use crate::store::Store;
use crate::Error;

/// Why an attempt failed, and whether another attempt could succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobError {
    pub message: String,
    pub retry: bool,
}

impl JobError {
    /// A failure worth retrying (after the job's backoff, while attempts remain).
    pub fn retry(message: impl Into<String>) -> Self {
        Self { message: message.into(), retry: true }
    }

    /// A failure no retry can fix (an undecodable payload): dead-letter the job now.
    pub fn fatal(message: impl Into<String>) -> Self {
        Self { message: message.into(), retry: false }
    }
}

impl<E: std::fmt::Display> From<E> for JobError {
    fn from(e: E) -> Self {
        JobError::retry(e.to_string())
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Handler<S> = Arc<dyn Fn(JobContext<S>) -> BoxFuture<Result<Vec<u8>, JobError>> + Send + Sync>;

/// What a handler gets: the job, and its queue to report progress.
pub struct JobContext<S: Store> {
    pub job: Job,
    queue: Queue<S>,
}

impl<S: Store> JobContext<S> {
    pub fn payload(&self) -> &[u8] {
        &self.job.payload
    }

    /// Stores progress observers can read; false if the lease is no longer ours.
    pub async fn progress(&self, progress: &[u8]) -> Result<bool, Error> {
        self.queue.progress(&self.job, progress).await
    }
}

/// What happens to a job whose type this worker has no handler for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownJobs {
    /// Dead-letter it with the reason (default): never silently dropped, retried by hand.
    DeadLetter,
    /// Give it back for a worker that knows it (a fleet being upgraded); this worker then
    /// leaves that queue alone for `poll_max`.
    Leave,
}

#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Handlers running at once (default 10).
    pub concurrency: usize,
    /// Lease length; heartbeats renew it every third of it (default 30 s).
    pub lease: Duration,
    /// Attempt timeout when the job sets none (default: none).
    pub job_timeout: Option<Duration>,
    /// Longest idle wait before looking again (default 1 s); enqueues wake workers sooner.
    pub poll_max: Duration,
    /// On shutdown, how long running handlers may finish before their jobs are released.
    pub shutdown_grace: Duration,
    pub unknown_jobs: UnknownJobs,
    /// Shown in each job's `worker` field (default: host-pid-random).
    pub name: String,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "worker".into());
        Self {
            concurrency: 10,
            lease: Duration::from_secs(30),
            job_timeout: None,
            poll_max: Duration::from_secs(1),
            shutdown_grace: Duration::from_secs(10),
            unknown_jobs: UnknownJobs::DeadLetter,
            name: format!("{host}-{}-{:04x}", std::process::id(), fastrand::u16(..)),
        }
    }
}

/// What a worker did, returned when it stops.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerReport {
    pub completed: u64,
    pub retried: u64,
    pub dead_lettered: u64,
    pub cancelled: u64,
    /// Outcomes the server refused because the lease was stale (the job ran too long
    /// without a heartbeat getting through, or was taken back).
    pub stale: u64,
    /// Handlers stopped because their lease was lost.
    pub lost: u64,
    /// Jobs given back at shutdown (or unknown types left for others).
    pub released: u64,
    /// The store's maxmemory-policy when it can evict queue keys (a warning was printed).
    pub unsafe_eviction_policy: Option<String>,
}

/// A pool of handlers over one or more queues of one store.
pub struct Worker<S: Store> {
    queues: Vec<(Queue<S>, u32)>,
    handlers: HashMap<String, Handler<S>>,
    options: WorkerOptions,
}

enum Outcome {
    Done(Result<Vec<u8>, JobError>),
    Cancelled,
}

struct Finished {
    queue: usize,
    job: Job,
    outcome: Outcome,
}

#[derive(PartialEq)]
enum Phase {
    Running,
    /// The handler returned (or was cancelled); its outcome is being reported.
    Reporting,
}

struct InFlight {
    token: String,
    attempt: u32,
    abort: AbortHandle,
    phase: Phase,
    /// Our lease is surely valid until then (measured from before the call that set it).
    lease_valid_until: Instant,
}

type InFlightMap = Arc<Mutex<HashMap<(usize, String), InFlight>>>;

impl<S: Store> Worker<S> {
    pub fn new(options: WorkerOptions) -> Self {
        Self { queues: Vec::new(), handlers: HashMap::new(), options }
    }

    /// Takes jobs from `queue`; when several queues have jobs, each is picked in
    /// proportion to its weight.
    pub fn queue(mut self, queue: Queue<S>, weight: u32) -> Self {
        self.queues.push((queue, weight.max(1)));
        self
    }

    /// Runs `handler` for jobs of type `kind`.
    pub fn handle<F, Fut>(mut self, kind: &str, handler: F) -> Self
    where
        F: Fn(JobContext<S>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<u8>, JobError>> + Send + 'static,
    {
        self.handlers.insert(kind.to_string(), Arc::new(move |ctx| Box::pin(handler(ctx))));
        self
    }

    /// Works until `shutdown` completes, then stops fetching, lets running handlers finish
    /// for `shutdown_grace`, releases what still runs and returns what it did.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<WorkerReport, Error> {
        if self.queues.is_empty() {
            return Err(Error::Invalid("a worker needs at least one queue".into()));
        }
        let mut report = WorkerReport::default();
        let check = self.queues[0].0.eviction_check().await?;
        if !check.safe() {
            eprintln!(
                "quince-queue: warning: maxmemory-policy is {} (maxmemory {}): under memory pressure the server may \
                 evict queue keys and lose jobs; set maxmemory-policy noeviction",
                check.policy, check.maxmemory
            );
            report.unsafe_eviction_policy = Some(check.policy);
        }
        let shared = Arc::new(Shared {
            worker: self,
            in_flight: Arc::new(Mutex::new(HashMap::new())),
            slot_freed: Notify::new(),
            stopping: AtomicBool::new(false),
            stop: Notify::new(),
            report: Mutex::new(report),
        });
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        // Every loop is a task of the runtime, so jobs, fetches and reports run on its
        // threads without waking the thread that awaits `run`.
        let reporter = tokio::spawn(report_loop(shared.clone(), done_rx));
        let heartbeat = tokio::spawn(heartbeat_loop(shared.clone(), done_tx.clone()));
        let fetcher = tokio::spawn(fetch_loop(shared.clone(), done_tx.clone()));
        shutdown.await;
        // The fetcher stops between fetches, never in the middle of one: a lease granted
        // by a fetch whose reply nobody read would hold its jobs until it expired.
        shared.stopping.store(true, Ordering::SeqCst);
        shared.stop.notify_waiters();
        let _ = fetcher.await;
        shared.drain().await;
        heartbeat.abort();
        drop(done_tx);
        let _ = reporter.await;
        let report = shared.report.lock().clone();
        Ok(report)
    }
}

struct Shared<S: Store> {
    worker: Worker<S>,
    in_flight: InFlightMap,
    slot_freed: Notify,
    stopping: AtomicBool,
    stop: Notify,
    report: Mutex<WorkerReport>,
}

impl<S: Store> Shared<S> {
    fn options(&self) -> &WorkerOptions {
        &self.worker.options
    }

    fn running(&self) -> usize {
        self.in_flight.lock().len()
    }

    /// Queue indexes in a weighted random order.
    fn queue_order(&self, skip_until: &[Option<Instant>]) -> Vec<usize> {
        let now = Instant::now();
        let mut left: Vec<(usize, u32)> = self
            .worker
            .queues
            .iter()
            .enumerate()
            .filter(|(i, _)| skip_until[*i].is_none_or(|t| t <= now))
            .map(|(i, (_, w))| (i, *w))
            .collect();
        let mut order = Vec::with_capacity(left.len());
        while !left.is_empty() {
            let total: u32 = left.iter().map(|(_, w)| w).sum();
            let mut pick = fastrand::u32(0..total);
            let at = left
                .iter()
                .position(|(_, w)| {
                    if pick < *w {
                        true
                    } else {
                        pick -= w;
                        false
                    }
                })
                .unwrap_or(0);
            order.push(left.remove(at).0);
        }
        order
    }

    fn start(self: &Arc<Self>, queue: usize, job: Job, done: &mpsc::UnboundedSender<Finished>, since: Instant) {
        let handler = self.worker.handlers.get(&job.kind).cloned();
        let timeout = match job.timeout_ms {
            0 => self.options().job_timeout,
            ms => Some(Duration::from_millis(ms)),
        };
        let ctx = JobContext { job: job.clone(), queue: self.worker.queues[queue].0.clone() };
        let done_tx = done.clone();
        let key = (queue, job.id.clone());
        let (token, attempt) = (job.token.clone(), job.attempt);
        let lease = self.options().lease;
        // Registered before the task starts so its outcome always finds the entry.
        let mut in_flight = self.in_flight.lock();
        let task = tokio::spawn(async move {
            let outcome = match handler {
                None => Err(JobError::fatal(format!("no handler for job type {:?}", ctx.job.kind))),
                Some(handler) => run_guarded(handler(ctx), timeout).await,
            };
            let _ = done_tx.send(Finished { queue, job, outcome: Outcome::Done(outcome) });
        });
        in_flight.insert(
            key,
            InFlight {
                token,
                attempt,
                abort: task.abort_handle(),
                phase: Phase::Running,
                lease_valid_until: since + lease,
            },
        );
    }

    async fn drain(self: &Arc<Self>) {
        let deadline = Instant::now() + self.options().shutdown_grace;
        while self.running() > 0 && Instant::now() < deadline {
            let _ = tokio::time::timeout(Duration::from_millis(20), self.slot_freed.notified()).await;
        }
        // Still running after the grace period: stop them and give their jobs back.
        let mut give_back: Vec<(usize, String, String)> = Vec::new();
        {
            let mut in_flight = self.in_flight.lock();
            in_flight.retain(|(queue, id), entry| {
                if entry.phase == Phase::Running {
                    entry.abort.abort();
                    give_back.push((*queue, id.clone(), entry.token.clone()));
                    false
                } else {
                    true
                }
            });
        }
        for (q, (queue, _)) in self.worker.queues.iter().enumerate() {
            let jobs: Vec<(&str, &str)> =
                give_back.iter().filter(|(i, _, _)| *i == q).map(|(_, id, t)| (id.as_str(), t.as_str())).collect();
            if !jobs.is_empty() {
                if let Ok(n) = queue.release(&jobs).await {
                    self.report.lock().released += n;
                }
            }
        }
        // Outcomes being reported finish in report_loop.
        while self.running() > 0 && Instant::now() < deadline + Duration::from_secs(1) {
            let _ = tokio::time::timeout(Duration::from_millis(20), self.slot_freed.notified()).await;
        }
    }
}

/// Runs a handler, turning a panic or a timeout into a failed attempt.
async fn run_guarded(
    handler: BoxFuture<Result<Vec<u8>, JobError>>,
    timeout: Option<Duration>,
) -> Result<Vec<u8>, JobError> {
    let guarded = CatchUnwind(handler);
    let result = match timeout {
        Some(t) => match tokio::time::timeout(t, guarded).await {
            Ok(r) => r,
            Err(_) => return Err(JobError::retry(format!("timed out after {} ms", t.as_millis()))),
        },
        None => guarded.await,
    };
    result.unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a non-string panic".into());
        Err(JobError::retry(format!("handler panicked: {message}")))
    })
}

/// A future that turns a panic while polling into an `Err` (what `futures`' catch_unwind does).
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn std::any::Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// Leases jobs while slots are free; waits for a signal (an enqueue) when none are ready.
async fn fetch_loop<S: Store>(shared: Arc<Shared<S>>, done: mpsc::UnboundedSender<Finished>) {
    let options = shared.options().clone();
    let mut skip_until: Vec<Option<Instant>> = vec![None; shared.worker.queues.len()];
    let signal_keys: Vec<String> = shared.worker.queues.iter().map(|(q, _)| q.signal_key()).collect();
    let mut error_backoff = Duration::from_millis(50);
    loop {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let free = options.concurrency.saturating_sub(shared.running());
        if free == 0 {
            tokio::select! {
                _ = shared.stop.notified() => return,
                _ = tokio::time::timeout(options.poll_max, shared.slot_freed.notified()) => {}
            }
            continue;
        }
        let mut leased = 0;
        let mut wait = options.poll_max;
        let mut failed = false;
        for q in shared.queue_order(&skip_until) {
            let queue = &shared.worker.queues[q].0;
            let since = Instant::now();
            match queue.fetch(&options.name, free, options.lease).await {
                Ok(fetched) => {
                    if let Some(r) = fetched.retry_in {
                        wait = wait.min(r);
                    }
                    for job in fetched.jobs {
                        leased += 1;
                        if options.unknown_jobs == UnknownJobs::Leave && !shared.worker.handlers.contains_key(&job.kind)
                        {
                            if let Ok(n) = queue.release(&[(&job.id, &job.token)]).await {
                                shared.report.lock().released += n;
                            }
                            skip_until[q] = Some(Instant::now() + options.poll_max);
                            continue;
                        }
                        shared.start(q, job, &done, since);
                    }
                    if leased > 0 {
                        break;
                    }
                }
                Err(e) => {
                    eprintln!("quince-queue: fetch from {} failed: {e}; retrying in {error_backoff:?}", queue.name());
                    failed = true;
                    break;
                }
            }
        }
        if failed {
            tokio::select! {
                _ = shared.stop.notified() => return,
                _ = tokio::time::sleep(error_backoff) => {}
            }
            error_backoff = (error_backoff * 2).min(Duration::from_secs(5));
            continue;
        }
        error_backoff = Duration::from_millis(50);
        if leased == 0 {
            let store = shared.worker.queues[0].0.store().clone();
            tokio::select! {
                _ = shared.stop.notified() => return,
                waited = store.wait_signal(signal_keys.clone(), wait) => {
                    if let Err(e) = waited {
                        eprintln!("quince-queue: waiting for jobs failed: {e}");
                        tokio::time::sleep(error_backoff).await;
                    }
                }
            }
        }
    }
}

/// Reports outcomes: completions in one qq_ack per batch, failures one by one.
async fn report_loop<S: Store>(shared: Arc<Shared<S>>, mut done: mpsc::UnboundedReceiver<Finished>) {
    const BATCH_MAX: usize = 1000;
    let mut batch = Vec::with_capacity(BATCH_MAX);
    while done.recv_many(&mut batch, BATCH_MAX).await > 0 {
        // Only outcomes whose entry is still ours are reported (a lost lease's is not).
        batch.retain(|f: &Finished| {
            let mut in_flight = shared.in_flight.lock();
            match in_flight.get_mut(&(f.queue, f.job.id.clone())) {
                // The first outcome wins (a handler finishing as it was cancelled sends two).
                Some(entry) if entry.phase == Phase::Running => {
                    entry.phase = Phase::Reporting;
                    true
                }
                _ => false,
            }
        });
        for q in 0..shared.worker.queues.len() {
            report_queue(&shared, q, &batch).await;
        }
        {
            let mut in_flight = shared.in_flight.lock();
            for f in &batch {
                in_flight.remove(&(f.queue, f.job.id.clone()));
            }
        }
        shared.slot_freed.notify_one();
        batch.clear();
    }
}

async fn report_queue<S: Store>(shared: &Arc<Shared<S>>, q: usize, batch: &[Finished]) {
    let queue = &shared.worker.queues[q].0;
    let completions: Vec<(&Job, &[u8])> = batch
        .iter()
        .filter(|f| f.queue == q)
        .filter_map(|f| match &f.outcome {
            Outcome::Done(Ok(result)) => Some((&f.job, result.as_slice())),
            _ => None,
        })
        .collect();
    if !completions.is_empty() {
        let valid_until = completions
            .iter()
            .filter_map(|(job, _)| shared.in_flight.lock().get(&(q, job.id.clone())).map(|e| e.lease_valid_until))
            .max();
        if let Some(acks) = retry_until(valid_until, || queue.ack(&completions)).await {
            let mut report = shared.report.lock();
            for ok in acks {
                if ok {
                    report.completed += 1;
                } else {
                    report.stale += 1;
                }
            }
        }
    }
    for f in batch.iter().filter(|f| f.queue == q) {
        let (message, retry_in) = match &f.outcome {
            Outcome::Done(Ok(_)) => continue,
            Outcome::Done(Err(e)) => {
                let retry = e.retry && f.job.attempt < f.job.max_attempts;
                (e.message.clone(), retry.then(|| f.job.retry_delay()))
            }
            Outcome::Cancelled => ("cancelled while running".to_string(), None),
        };
        let valid_until = shared.in_flight.lock().get(&(q, f.job.id.clone())).map(|e| e.lease_valid_until);
        if let Some(outcome) = retry_until(valid_until, || queue.fail(&f.job, &message, retry_in)).await {
            let mut report = shared.report.lock();
            match outcome {
                FailOutcome::Retry => report.retried += 1,
                FailOutcome::Dead => report.dead_lettered += 1,
                FailOutcome::Cancelled => report.cancelled += 1,
                FailOutcome::Stale => report.stale += 1,
            }
        }
    }
}

/// Retries a report while the store is unreachable, but never past the lease: after it the
/// server refuses the report anyway and the job is delivered again.
async fn retry_until<T, F, Fut>(valid_until: Option<Instant>, mut call: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    let valid_until = valid_until?;
    let mut backoff = Duration::from_millis(50);
    loop {
        match call().await {
            Ok(v) => return Some(v),
            Err(e) if Instant::now() + backoff < valid_until => {
                eprintln!("quince-queue: reporting an outcome failed: {e}; retrying in {backoff:?}");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
            Err(e) => {
                eprintln!("quince-queue: reporting an outcome failed: {e}; the lease ran out, the job will run again");
                return None;
            }
        }
    }
}

/// Renews every running job's lease each third of the lease; stops handlers whose lease is
/// lost (or could not be renewed in time) and those someone cancelled.
async fn heartbeat_loop<S: Store>(shared: Arc<Shared<S>>, done: mpsc::UnboundedSender<Finished>) {
    let lease = shared.options().lease;
    let mut tick = tokio::time::interval((lease / 3).max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        for (q, (queue, _)) in shared.worker.queues.iter().enumerate() {
            let held: Vec<(String, String)> = shared
                .in_flight
                .lock()
                .iter()
                .filter(|((i, _), _)| *i == q)
                .map(|((_, id), e)| (id.clone(), e.token.clone()))
                .collect();
            if held.is_empty() {
                continue;
            }
            let pairs: Vec<(&str, &str)> = held.iter().map(|(id, t)| (id.as_str(), t.as_str())).collect();
            let since = Instant::now();
            match queue.heartbeat(&pairs, lease).await {
                Ok(statuses) => {
                    for ((id, _), status) in held.iter().zip(statuses) {
                        apply_lease_status(&shared, q, id, status, since + lease, &done);
                    }
                }
                Err(e) => {
                    eprintln!("quince-queue: heartbeat failed: {e}");
                    // Unrenewed leases run out: stop those handlers before they do.
                    let now = Instant::now();
                    for (id, _) in &held {
                        let expired = shared
                            .in_flight
                            .lock()
                            .get(&(q, id.clone()))
                            .is_some_and(|e| e.phase == Phase::Running && e.lease_valid_until <= now);
                        if expired {
                            apply_lease_status(&shared, q, id, LeaseStatus::Lost, now, &done);
                        }
                    }
                }
            }
        }
    }
}

fn apply_lease_status<S: Store>(
    shared: &Arc<Shared<S>>,
    q: usize,
    id: &str,
    status: LeaseStatus,
    valid_until: Instant,
    done: &mpsc::UnboundedSender<Finished>,
) {
    let key = (q, id.to_string());
    let mut in_flight = shared.in_flight.lock();
    let Some(entry) = in_flight.get_mut(&key) else { return };
    match status {
        LeaseStatus::Held => entry.lease_valid_until = valid_until,
        LeaseStatus::Lost if entry.phase == Phase::Running => {
            entry.abort.abort();
            in_flight.remove(&key);
            shared.report.lock().lost += 1;
            shared.slot_freed.notify_one();
        }
        LeaseStatus::Lost => {}
        LeaseStatus::CancelRequested if entry.phase == Phase::Running => {
            entry.lease_valid_until = valid_until;
            entry.abort.abort();
            let job = Job {
                queue: shared.worker.queues[q].0.name().to_string(),
                id: id.to_string(),
                token: entry.token.clone(),
                kind: String::new(),
                payload: Vec::new(),
                attempt: entry.attempt,
                max_attempts: 0,
                timeout_ms: 0,
                backoff_ms: 0,
            };
            let _ = done.send(Finished { queue: q, job, outcome: Outcome::Cancelled });
        }
        LeaseStatus::CancelRequested => entry.lease_valid_until = valid_until,
    }
}
