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

use quince_engine::{Client, Engine};
use quince_resp::Encoder;

/// A script command met by connection `token`, waiting for its turn.
pub struct ScriptJob {
    pub token: usize,
    /// The connection's client as the command starts (the connection keeps a copy for
    /// CLIENT LIST and the like while the script runs, and takes this one back after).
    pub client: Client,
    pub args: Vec<Vec<u8>>,
}

/// The worker's queue of script commands, shared by its connections.
#[derive(Clone, Default)]
pub struct ScriptQueue(Rc<RefCell<VecDeque<ScriptJob>>>);

impl ScriptQueue {
    pub fn submit(&self, token: usize, client: Client, args: Vec<Vec<u8>>) {
        self.0.borrow_mut().push_back(ScriptJob { token, client, args });
    }

    pub fn pop(&self) -> Option<ScriptJob> {
        self.0.borrow_mut().pop_front()
    }
}

/// Runs the job's command and returns its reply, encoded in the client's protocol.
/// `serve_while_busy` is the worker's service of its other connections; it returns true
/// when the script must stop (the server is shutting down).
pub fn run(engine: &Engine, job: &mut ScriptJob, serve_while_busy: &mut dyn FnMut() -> bool) -> Vec<u8> {
    let mut reply = Vec::new();
    let argv: SmallVec<[&[u8]; 8]> = job.args.iter().map(|a| &a[..]).collect();
    let protocol = job.client.protocol;
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut out = Encoder::new(&mut reply, protocol);
        quince_engine::with_busy_service(serve_while_busy, || engine.execute(&mut job.client, &argv, &mut out));
    }));
    if ran.is_err() {
        reply.clear();
        Encoder::new(&mut reply, protocol).error(b"ERR internal error while running the script");
    }
    reply
}
