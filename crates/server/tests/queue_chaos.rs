//! quince-queue under faults: jobs are enqueued and processed while worker processes are
//! SIGKILLed at random and quince-server itself is SIGKILLed and restarted
//! (`appendfsync always`). Every enqueue the producer saw acknowledged must end completed,
//! exactly once; redeliveries are counted and printed.
//!
//! Size: QUINCE_QUEUE_CHAOS_JOBS (default 5,000) and QUINCE_QUEUE_CHAOS_SERVER_KILLS
//! (default 5); the full run is 50,000 and 20.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quince_queue::{JobSpec, Queue, RedisStore, Settings, State, Worker, WorkerOptions};
use quince_test_util::free_port;

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");
const QUEUE: &str = "chaos";

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// quince-server on a fixed port and directory, so a restart serves the same data.
struct Server {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Server {
    fn start(port: u16, dir: &Path) -> Self {
        let mut server = Server { child: None, port, dir: dir.to_path_buf() };
        server.restart();
        server
    }

    fn restart(&mut self) {
        let child = Command::new(QUINCE)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "yes", "--appendfsync", "always", "--dir", self.dir.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start quince-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "quince-server did not come back on port {}", self.port);
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill(); // SIGKILL, by pid
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Worker processes, killed (by pid) when dropped, also when the test fails.
struct Workers(Vec<Child>);

impl Drop for Workers {
    fn drop(&mut self) {
        for w in &mut self.0 {
            let _ = w.kill();
            let _ = w.wait();
        }
    }
}

/// A worker process: this test binary running `chaos_worker_process`.
fn spawn_worker(port: u16) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "chaos_worker_process", "--ignored", "--nocapture", "--test-threads", "1"])
        .env("QUINCE_CHAOS_URL", format!("redis://127.0.0.1:{port}/"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start a worker process")
}

/// Run by `spawn_worker` in a child process until it is killed.
#[test]
#[ignore = "a worker process for no_acknowledged_job_is_lost_or_completed_twice"]
fn chaos_worker_process() {
    let Ok(url) = std::env::var("QUINCE_CHAOS_URL") else { return };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    rt.block_on(async {
        let store = loop {
            match RedisStore::connect(&url).await {
                Ok(store) => break store,
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        let queue = loop {
            match Queue::new(store.clone(), QUEUE).await {
                Ok(q) => break q,
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        let options = WorkerOptions {
            concurrency: 20,
            lease: Duration::from_millis(1500),
            poll_max: Duration::from_millis(200),
            ..WorkerOptions::default()
        };
        let worker = Worker::new(options).queue(queue, 1).handle("work", |ctx| async move {
            // Some work, so kills land while jobs run.
            tokio::time::sleep(Duration::from_millis(fastrand_ms(ctx.job.id.len()))).await;
            Ok(ctx.payload().to_vec())
        });
        let _ = worker.run(std::future::pending::<()>()).await;
    });
}

fn fastrand_ms(seed: usize) -> u64 {
    (std::process::id() as u64 + seed as u64 * 7) % 5
}

#[test]
fn no_acknowledged_job_is_lost_or_completed_twice() {
    let jobs = env_number("QUINCE_QUEUE_CHAOS_JOBS", 5_000);
    let server_kills = env_number("QUINCE_QUEUE_CHAOS_SERVER_KILLS", 5);
    let dir = std::env::temp_dir().join(format!("quince-queue-chaos-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    let mut server = Server::start(port, &dir);
    let url = format!("redis://127.0.0.1:{port}/");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let queue = rt.block_on(async {
        let q = Queue::new(RedisStore::connect(&url).await.unwrap(), QUEUE).await.unwrap();
        q.configure(&Settings { keep_done: Some(None), ..Settings::default() }).await.unwrap();
        q
    });

    // The producer: batches of 100, each job with a unique key, so a batch retried after a
    // kill (its reply lost) does not enqueue its jobs twice.
    let acked: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let produced = Arc::new(AtomicUsize::new(0));
    let producer_done = Arc::new(AtomicBool::new(false));
    let producer = {
        let (queue, acked, produced, done) = (queue.clone(), acked.clone(), produced.clone(), producer_done.clone());
        rt.spawn(async move {
            let mut next = 0;
            while next < jobs {
                let batch: Vec<JobSpec> = (next..(next + 100).min(jobs))
                    .map(|n| {
                        JobSpec::new("work", format!("job {n}"))
                            .unique(format!("job-{n}"), Duration::ZERO)
                            // Every kill of a worker spends the attempts of the jobs it held;
                            // here no job may end dead-lettered for that.
                            .max_attempts(1000)
                    })
                    .collect();
                match queue.enqueue_bulk(&batch).await {
                    Ok(ids) => {
                        acked.lock().unwrap().extend(ids.into_iter().map(|e| e.id));
                        next += batch.len();
                        produced.store(next, Ordering::SeqCst);
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
            done.store(true, Ordering::SeqCst);
        })
    };

    let mut workers = Workers((0..3).map(|_| spawn_worker(port)).collect());
    let mut rng_state = 0x2545F4914F6CDD1Du64 ^ std::process::id() as u64;
    let mut rand = move |n: u64| {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        rng_state % n
    };
    let (mut worker_kills, mut kills_done) = (0, 0);
    let deadline = Instant::now() + Duration::from_secs(60) + Duration::from_millis(jobs as u64 * 10);
    let mut last = quince_queue::Counts::default();
    loop {
        std::thread::sleep(Duration::from_millis(150 + rand(300)));
        if producer_done.load(Ordering::SeqCst) {
            if let Ok(c) = rt.block_on(queue.counts()) {
                last = c.clone();
                if c.pending() == 0 && c.completed >= jobs as u64 && kills_done >= server_kills {
                    break;
                }
            }
        }
        assert!(Instant::now() < deadline, "not done in time: {last:?}, produced {}", produced.load(Ordering::SeqCst));
        if kills_done < server_kills && rand(3) == 0 {
            server.kill();
            std::thread::sleep(Duration::from_millis(rand(200)));
            server.restart();
            kills_done += 1;
        } else {
            let victim = rand(workers.0.len() as u64) as usize;
            let _ = workers.0[victim].kill(); // SIGKILL, by pid
            let _ = workers.0[victim].wait();
            workers.0[victim] = spawn_worker(port);
            worker_kills += 1;
        }
    }
    rt.block_on(producer).unwrap();
    drop(workers);

    // Every acknowledged job is completed; the completion counter counts each job once.
    let acked = acked.lock().unwrap().clone();
    assert_eq!(acked.len(), jobs);
    let (counts, done_ids) = rt.block_on(async {
        let counts = queue.counts().await.unwrap();
        let done = queue.list(State::Done, 0, jobs as u64 + 1000).await.unwrap();
        (counts, done)
    });
    let done: std::collections::HashSet<&String> = done_ids.iter().collect();
    let missing: Vec<&String> = acked.iter().filter(|id| !done.contains(id)).collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged jobs not completed, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    for id in acked.iter().step_by((jobs / 200).max(1)) {
        let info = rt.block_on(queue.job(id)).unwrap().unwrap();
        assert_eq!(info.state(), "completed", "job {id}");
    }
    assert_eq!(counts.completed, done.len() as u64, "one completion per job: {counts:?}");
    assert_eq!((counts.ready, counts.active, counts.delayed, counts.dead), (0, 0, 0, 0), "{counts:?}");
    eprintln!(
        "chaos: {jobs} jobs acknowledged, all completed once; {} server kills, {worker_kills} worker kills; \
         {} leases expired and redelivered, {} stale reports refused",
        kills_done, counts.expired, counts.stale
    );
}
