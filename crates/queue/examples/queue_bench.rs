//! Throughput of quince-queue, BullMQ's benchmark shape (bench/queue.sh runs it next to
//! BullMQ): enqueue JOBS no-op jobs in bulk batches, then process them with one worker at
//! CONCURRENCY. Prints one JSON line.
//!
//! Usage: queue_bench URL|embedded JOBS BATCH CONCURRENCY

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_queue::{Embedded, JobSpec, Queue, RedisStore, Store, Worker, WorkerOptions};

// The allocator quince-server uses; it matters for the embedded run (the engine is in here).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

async fn run<S: Store>(store: S, jobs: usize, batch: usize, concurrency: usize) -> (f64, f64) {
    let name = format!("bench-{}-{}", std::process::id(), fastrand::u32(..));
    let queue = Queue::new(store, &name).await.expect("open the queue");
    let spec = JobSpec::new("noop", r#"{"n":1}"#);
    let start = Instant::now();
    let mut left = jobs;
    while left > 0 {
        let n = left.min(batch);
        queue.enqueue_bulk(&vec![spec.clone(); n]).await.expect("enqueue");
        left -= n;
    }
    let enqueue = jobs as f64 / start.elapsed().as_secs_f64();

    let handled = Arc::new(AtomicU64::new(0));
    let counter = handled.clone();
    let worker = Worker::new(WorkerOptions { concurrency, ..WorkerOptions::default() }).queue(queue.clone(), 1).handle(
        "noop",
        move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
            async { Ok(Vec::new()) }
        },
    );
    let start = Instant::now();
    let watch = handled.clone();
    let report = worker
        .run(async move {
            while watch.load(Ordering::Relaxed) < jobs as u64 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await
        .expect("worker");
    let process = jobs as f64 / start.elapsed().as_secs_f64();
    assert_eq!(report.completed, jobs as u64, "every job completed once: {report:?}");
    (enqueue, process)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: queue_bench URL|embedded JOBS BATCH CONCURRENCY");
        std::process::exit(2);
    }
    let (jobs, batch, concurrency) = (args[2].parse().unwrap(), args[3].parse().unwrap(), args[4].parse().unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let (enqueue, process) = rt.block_on(async {
        if args[1] == "embedded" {
            run(Embedded::new(quince::Db::memory()), jobs, batch, concurrency).await
        } else {
            run(RedisStore::connect(&args[1]).await.expect("connect"), jobs, batch, concurrency).await
        }
    });
    println!("{{\"enqueue_jobs_per_s\": {enqueue:.0}, \"process_jobs_per_s\": {process:.0}}}");
}
