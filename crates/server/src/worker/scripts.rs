//! Scripts run on the worker that received them. A connection that meets a command that
//! may run a script (EVAL, EVALSHA, FCALL, their _RO forms, and EXEC of a transaction that
//! queued one) queues it here and stops executing requests, as a blocked client does; the
//! worker runs the queue once the events of its turn are handled, with nothing of the loop
//! borrowed, so the script's count hook can lend the loop back: past
//! `busy-reply-threshold` the worker serves its other connections from inside the script
//! (they get BUSY, and SCRIPT KILL, FUNCTION KILL and SHUTDOWN NOSAVE reach it), as Redis's
//! processEventsWhileBlocked does. docs/threading.md tells the whole story.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use smallvec::SmallVec;

use quince_engine::{Client, Engine, ScriptService};
use quince_resp::Encoder;

/// A script command met by connection `token`, waiting for its turn.
pub struct ScriptJob {
    pub token: usize,
    /// The connection's client as the command starts (the connection keeps a stand-in
    /// for CLIENT LIST and the like while the script runs, and takes this one back after).
    pub client: Box<Client>,
    pub args: ArgBuffer,
}

/// A command's arguments copied out of the connection's read buffer (which may grow while
/// the script serves the loop): one allocation, reused from job to job.
#[derive(Default)]
pub struct ArgBuffer {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl ArgBuffer {
    fn fill(&mut self, args: &[&[u8]]) {
        self.data.clear();
        self.ends.clear();
        for arg in args {
            self.data.extend_from_slice(arg);
            self.ends.push(self.data.len());
        }
    }

    fn slices(&self) -> SmallVec<[&[u8]; 8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let arg = &self.data[start..end];
                start = end;
                arg
            })
            .collect()
    }
}

/// The worker's queue of script commands, shared by its connections, and argument buffers
/// for the next ones.
#[derive(Clone, Default)]
pub struct ScriptQueue(Rc<RefCell<Queue>>);

#[derive(Default)]
struct Queue {
    jobs: VecDeque<ScriptJob>,
    spare: Vec<ArgBuffer>,
}

impl ScriptQueue {
    pub fn submit(&self, token: usize, client: Box<Client>, args: &[&[u8]]) {
        let mut queue = self.0.borrow_mut();
        let mut buffer = queue.spare.pop().unwrap_or_default();
        buffer.fill(args);
        queue.jobs.push_back(ScriptJob { token, client, args: buffer });
    }

    pub fn pop(&self) -> Option<ScriptJob> {
        self.0.borrow_mut().jobs.pop_front()
    }

    /// Keeps a finished job's argument buffer for a later job (a few, not too big).
    pub fn recycle(&self, buffer: ArgBuffer) {
        let mut queue = self.0.borrow_mut();
        if queue.spare.len() < 16 && buffer.data.capacity() <= 64 * 1024 {
            queue.spare.push(buffer);
        }
    }
}

/// Runs the job's command and writes its reply, encoded in the client's protocol, to
/// `reply`. `service` is the worker's loop, lent to the script (see `ScriptService`).
pub fn run(engine: &Engine, job: &mut ScriptJob, reply: &mut Vec<u8>, service: &mut dyn ScriptService) {
    reply.clear();
    let argv = job.args.slices();
    let protocol = job.client.protocol;
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut out = Encoder::new(reply, protocol);
        quince_engine::with_script_service(service, || engine.execute(&mut job.client, &argv, &mut out));
    }));
    if ran.is_err() {
        reply.clear();
        Encoder::new(reply, protocol).error(b"ERR internal error while running the script");
    }
}
