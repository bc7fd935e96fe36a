//! Script runners: threads that run the commands that may run a script (EVAL, EVALSHA,
//! FCALL, their _RO forms, and EXEC of a transaction that queued one) on behalf of the
//! workers. A worker hands such a command over and goes on serving its other connections,
//! so a long script never stalls them: they get BUSY once it passes
//! `busy-reply-threshold`, and SCRIPT KILL / FUNCTION KILL / SHUTDOWN NOSAVE get through.
//!
//! The runner owns the client while the command runs and sends it back, with the reply,
//! through the worker's channel, then wakes the worker. A runner never waits for a worker,
//! so a worker waiting for the transaction gate cannot deadlock with it.

use std::collections::VecDeque;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use quince_engine::{Client, Engine};
use quince_resp::Encoder;

use crate::log::{log, Level};

/// Runner threads wait this long for more work before they exit.
const IDLE_EXIT: Duration = Duration::from_secs(30);
/// At most this many runner threads; more commands wait in the queue. Only one script runs
/// at a time (it holds the transaction gate exclusively): the others wait for the gate or
/// get BUSY, so a thread per waiting client is enough and this bound is rarely reached.
const MAX_RUNNERS: usize = 256;

/// A command finished by a runner, back to the worker owning the connection.
pub struct Finished {
    pub token: usize,
    /// The client as the command left it.
    pub client: Client,
    /// The command's reply, encoded in the client's protocol.
    pub reply: Vec<u8>,
}

/// How a worker hands commands to the runners and hears back.
#[derive(Clone)]
pub struct Offload {
    pub engine: Arc<Engine>,
    pub done: Sender<Finished>,
    /// Wakes the worker's loop.
    pub waker: Arc<dyn Fn() + Send + Sync>,
}

struct Job {
    token: usize,
    client: Client,
    args: Vec<Vec<u8>>,
    offload: Offload,
}

#[derive(Default)]
struct Pool {
    state: Mutex<PoolState>,
    work: Condvar,
}

#[derive(Default)]
struct PoolState {
    jobs: VecDeque<Job>,
    /// Threads waiting for a job.
    idle: usize,
    threads: usize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Pool::default)
}

impl Offload {
    /// Runs `args` for `client` on a runner thread; the result comes back as a `Finished`
    /// for `token`.
    pub fn submit(&self, token: usize, client: Client, args: Vec<Vec<u8>>) {
        let pool = pool();
        let mut state = pool.state.lock().unwrap_or_else(|e| e.into_inner());
        state.jobs.push_back(Job { token, client, args, offload: self.clone() });
        if state.jobs.len() <= state.idle || state.threads >= MAX_RUNNERS {
            pool.work.notify_one();
            return;
        }
        state.threads += 1;
        let spawned = std::thread::Builder::new()
            .name("quince-script".into())
            .stack_size(crate::worker::SCRIPT_STACK_SIZE)
            .spawn(runner_loop);
        if let Err(e) = spawned {
            state.threads -= 1;
            log(Level::Warning, &format!("Spawning a script runner: {e}; running the script on the worker"));
            // Nothing else would run it: run it here, as before runners existed.
            let job = state.jobs.pop_back().expect("just pushed");
            drop(state);
            run(job);
        }
    }
}

fn runner_loop() {
    let pool = pool();
    loop {
        let job = {
            let mut state = pool.state.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(job) = state.jobs.pop_front() {
                    break job;
                }
                state.idle += 1;
                let (guard, waited) = pool.work.wait_timeout(state, IDLE_EXIT).unwrap_or_else(|e| e.into_inner());
                state = guard;
                state.idle -= 1;
                if waited.timed_out() && state.jobs.is_empty() {
                    state.threads -= 1;
                    return;
                }
            }
        };
        run(job);
    }
}

fn run(job: Job) {
    let Job { token, mut client, args, offload } = job;
    let mut reply = Vec::new();
    let argv: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
    let protocol = client.protocol;
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut out = Encoder::new(&mut reply, protocol);
        offload.engine.execute(&mut client, &argv, &mut out);
    }));
    if ran.is_err() {
        reply.clear();
        Encoder::new(&mut reply, protocol).error(b"ERR internal error while running the script");
    }
    // The worker may be gone (shutdown): then nobody needs the result.
    if offload.done.send(Finished { token, client, reply }).is_ok() {
        (offload.waker)();
    }
}
