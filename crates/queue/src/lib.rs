//! `quince-queue`: a job queue that never loses a job. Job state lives in ordinary Redis
//! types and changes only through one FUNCTION library (`lua/quince_queue.lua`), so the
//! same queue runs on the embedded `quince::Db`, on quince-server and on redis-server 7 or
//! Valkey. Delivery is at-least-once with leases renewed by heartbeats; completion is
//! exactly-once, because every report carries its lease's fencing token and the server
//! refuses a stale one.
//!
//! ```
//! use quince_queue::{Embedded, JobSpec, Queue, Worker, WorkerOptions};
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let store = Embedded::new(quince::Db::memory());
//! let queue = Queue::new(store, "emails").await.unwrap();
//! queue.enqueue(&JobSpec::new("welcome", "ada@example.com")).await.unwrap();
//!
//! let worker = Worker::new(WorkerOptions::default())
//!     .queue(queue.clone(), 1)
//!     .handle("welcome", |ctx| async move { Ok(ctx.payload().to_vec()) });
//! let q = queue.clone();
//! let stop = async move {
//!     while q.counts().await.unwrap().completed < 1 {
//!         tokio::time::sleep(std::time::Duration::from_millis(5)).await;
//!     }
//! };
//! let report = worker.run(stop).await.unwrap();
//! assert_eq!(report.completed, 1);
//! # });
//! ```
//!
//! docs/queue.md describes the data layout, each transition and how the guarantees are
//! tested.

pub mod conformance;
pub mod dashboard;
mod job;
mod queue;
mod scheduler;
mod store;
mod worker;

pub use job::{Counts, Enqueued, Job, JobInfo, JobSpec, PRIORITY_MAX};
pub use queue::{
    CancelOutcome, EvictionCheck, FailOutcome, Fetched, LeaseStatus, Queue, Settings, State, LIBRARY, LIBRARY_VERSION,
};
pub use scheduler::{Scheduler, SchedulerReport};
pub use store::{Embedded, RedisStore, Store, Value};
pub use worker::{JobContext, JobError, UnknownJobs, Worker, WorkerOptions, WorkerReport};

/// What a queue operation can fail with.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The store answered with an error (its text, first word the code: `OOM`, `ERR`...).
    Reply(String),
    /// The store could not be reached or the connection broke.
    Store(String),
    /// A reply of another shape than the library returns (a foreign library loaded under
    /// our name, or a bug).
    Unexpected(String),
    /// A bad argument, refused before anything was sent.
    Invalid(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Reply(e) => write!(f, "{e}"),
            Error::Store(e) => write!(f, "store unreachable: {e}"),
            Error::Unexpected(e) => write!(f, "unexpected reply: {e}"),
            Error::Invalid(e) => write!(f, "invalid: {e}"),
        }
    }
}

impl std::error::Error for Error {}
