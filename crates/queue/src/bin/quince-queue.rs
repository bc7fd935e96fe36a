//! `quince-queue`: the queue from the command line. Works on any Redis 7 server
//! (quince-server, redis-server, Valkey) or on a directory of the embedded Db no process
//! holds (`--dir`).
//!
//!     quince-queue queues                               # every queue with its counts
//!     quince-queue enqueue emails welcome '{"to":"ada"}' --priority 5
//!     quince-queue job emails 17                        # every field of job 17
//!     quince-queue list emails dead                     # ids in a state
//!     quince-queue dead emails retry [ID...]            # or: purge
//!     quince-queue pause emails / resume emails
//!     quince-queue work emails --type welcome -- ./send.sh   # payload on stdin, result = stdout
//!     quince-queue dashboard --listen 127.0.0.1:8080         # and /metrics

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use quince_queue::{Embedded, Error, JobError, JobSpec, Queue, RedisStore, State, Store, Worker, WorkerOptions};

#[derive(Parser)]
#[command(name = "quince-queue", version, about = "The quince job queue from the command line")]
struct Cli {
    /// The server to use.
    #[arg(long, default_value = "redis://127.0.0.1:6379/", global = true)]
    url: String,
    /// Use the embedded Db in this directory instead of a server (no other process may hold it).
    #[arg(long, global = true)]
    dir: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lists every queue with its counts.
    Queues,
    /// Enqueues one job and prints its id.
    Enqueue {
        queue: String,
        #[arg(value_name = "TYPE")]
        kind: String,
        payload: String,
        #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
        priority: i32,
        #[arg(long, default_value_t = 0)]
        delay_ms: u64,
        #[arg(long, default_value_t = 3)]
        max_attempts: u32,
        /// An idempotency key (kept forever unless --unique-ttl-ms).
        #[arg(long)]
        unique: Option<String>,
        #[arg(long, default_value_t = 0)]
        unique_ttl_ms: u64,
    },
    /// Prints every field of a job.
    Job {
        queue: String,
        id: String,
    },
    /// Prints the ids of jobs in a state, oldest first.
    List {
        queue: String,
        /// ready, delayed, active, blocked, dead or done.
        state: State,
        #[arg(long, default_value_t = 0)]
        offset: u64,
        #[arg(long, default_value_t = 100)]
        count: u64,
    },
    /// Dead letters: retry (back to ready, attempts reset) or purge, by id or the oldest --limit.
    Dead {
        queue: String,
        action: DeadAction,
        ids: Vec<String>,
        #[arg(long, default_value_t = 1000)]
        limit: u64,
    },
    /// Stops leasing jobs from a queue (running ones finish).
    Pause {
        queue: String,
    },
    Resume {
        queue: String,
    },
    /// Cancels a job (a running one at its next heartbeat).
    Cancel {
        queue: String,
        id: String,
    },
    /// Runs a command per job: the payload on its stdin, its stdout the result; a non-zero
    /// exit fails the attempt with its stderr (exit 100: no retry).
    Work {
        queue: String,
        /// Job types to take (others are left for other workers).
        #[arg(long = "type", required = true)]
        kinds: Vec<String>,
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        /// Stop after this many jobs (default: run until killed).
        #[arg(long)]
        jobs: Option<u64>,
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Serves the dashboard (queues, throughput, latency, dead letters, schedules) and
    /// Prometheus /metrics.
    Dashboard {
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: String,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum DeadAction {
    Retry,
    Purge,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
    let result = rt.block_on(async {
        match &cli.dir {
            Some(dir) => {
                let db = quince::Db::open(dir).map_err(|e| Error::Store(e.to_string()))?;
                run(Embedded::new(db), cli.command).await
            }
            None => run(RedisStore::connect(&cli.url).await?, cli.command).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quince-queue: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run<S: Store>(store: S, command: Command) -> Result<(), Error> {
    match command {
        Command::Queues => {
            println!(
                "{:<24} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10} {:>10} paused",
                "queue", "ready", "delayed", "active", "blocked", "dead", "done", "completed"
            );
            for name in Queue::names(&store).await? {
                let c = Queue::new(store.clone(), &name).await?.counts().await?;
                println!(
                    "{name:<24} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10} {:>10} {}",
                    c.ready,
                    c.delayed,
                    c.active,
                    c.blocked,
                    c.dead,
                    c.done,
                    c.completed,
                    if c.paused { "yes" } else { "no" }
                );
            }
        }
        Command::Enqueue { queue, kind, payload, priority, delay_ms, max_attempts, unique, unique_ttl_ms } => {
            let mut job = JobSpec::new(kind, payload)
                .priority(priority)
                .delay(Duration::from_millis(delay_ms))
                .max_attempts(max_attempts);
            if let Some(key) = unique {
                job = job.unique(key, Duration::from_millis(unique_ttl_ms));
            }
            let e = Queue::new(store, &queue).await?.enqueue(&job).await?;
            println!("{}{}", e.id, if e.created { "" } else { " (already enqueued)" });
        }
        Command::Job { queue, id } => match Queue::new(store, &queue).await?.job(&id).await? {
            None => return Err(Error::Invalid(format!("no job {id} in {queue}"))),
            Some(info) => {
                let mut fields: Vec<_> = info.fields.iter().collect();
                fields.sort();
                for (k, v) in fields {
                    println!("{k}: {}", String::from_utf8_lossy(v));
                }
            }
        },
        Command::List { queue, state, offset, count } => {
            for id in Queue::new(store, &queue).await?.list(state, offset, count).await? {
                println!("{id}");
            }
        }
        Command::Dead { queue, action, ids, limit } => {
            let q = Queue::new(store, &queue).await?;
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            let n = match action {
                DeadAction::Retry => q.retry_dead(&ids, limit).await?,
                DeadAction::Purge => q.purge_dead(&ids, limit).await?,
            };
            println!("{n}");
        }
        Command::Pause { queue } => Queue::new(store, &queue).await?.pause().await?,
        Command::Resume { queue } => Queue::new(store, &queue).await?.resume().await?,
        Command::Cancel { queue, id } => {
            println!("{:?}", Queue::new(store, &queue).await?.cancel(&id).await?);
        }
        Command::Dashboard { listen } => {
            let listener = tokio::net::TcpListener::bind(&listen)
                .await
                .map_err(|e| Error::Invalid(format!("cannot listen on {listen}: {e}")))?;
            eprintln!(
                "quince-queue: dashboard on http://{}/",
                listener.local_addr().map_err(|e| Error::Store(e.to_string()))?
            );
            quince_queue::dashboard::serve(store, listener).await.map_err(|e| Error::Store(e.to_string()))?;
        }
        Command::Work { queue, kinds, concurrency, jobs, command } => {
            work(Queue::new(store, &queue).await?, kinds, concurrency, jobs, command).await?;
        }
    }
    Ok(())
}

async fn work<S: Store>(
    queue: Queue<S>,
    kinds: Vec<String>,
    concurrency: usize,
    jobs: Option<u64>,
    command: Vec<String>,
) -> Result<(), Error> {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let options =
        WorkerOptions { concurrency, unknown_jobs: quince_queue::UnknownJobs::Leave, ..WorkerOptions::default() };
    let mut worker = Worker::new(options).queue(queue, 1);
    let command = std::sync::Arc::new(command);
    for kind in &kinds {
        let (command, done) = (command.clone(), done.clone());
        worker = worker.handle(kind, move |ctx| {
            let (command, done) = (command.clone(), done.clone());
            async move {
                let result = run_command(&command, ctx.payload()).await;
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                result
            }
        });
    }
    let stop = async move {
        match jobs {
            Some(n) => {
                while done.load(std::sync::atomic::Ordering::SeqCst) < n {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
            None => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    };
    let report = worker.run(stop).await?;
    eprintln!(
        "quince-queue: {} completed, {} retried, {} dead-lettered",
        report.completed, report.retried, report.dead_lettered
    );
    Ok(())
}

/// Exit status that means "do not retry this job".
const EXIT_FATAL: i32 = 100;

async fn run_command(command: &[String], payload: &[u8]) -> Result<Vec<u8>, JobError> {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(&command[0])
        .args(&command[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| JobError::fatal(format!("cannot run {}: {e}", command[0])))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let payload = payload.to_vec();
    let writer = tokio::spawn(async move {
        let _ = stdin.write_all(&payload).await;
    });
    let output = child.wait_with_output().await.map_err(|e| JobError::retry(e.to_string()))?;
    let _ = writer.await;
    match output.status.code() {
        Some(0) => Ok(output.stdout),
        code => {
            let message = format!(
                "{} exited with {}: {}",
                command[0],
                code.map_or("a signal".to_string(), |c| c.to_string()),
                String::from_utf8_lossy(&output.stderr).trim()
            );
            if code == Some(EXIT_FATAL) {
                Err(JobError::fatal(message))
            } else {
                Err(JobError::retry(message))
            }
        }
    }
}
