//! Blocking commands (BLPOP, BLMOVE, BZPOPMIN, ...): the waiter registry and how a write
//! that makes a key ready serves the clients waiting on it.
//!
//! A handler that finds nothing to pop calls `Ctx::block`, which registers a `Waiter` on
//! each of its keys, in the key's shard, while the shard is still locked (so no write can
//! slip between the check and the registration). A write that adds elements to a key with
//! waiters marks it ready (`Db::signal_ready`). Once the writing command has run, the
//! executor re-runs each waiter's command, FIFO per key, under the locks of the waiter's
//! own keys: the pop and the reply happen under the lock, so an element is served to
//! exactly one client. Every state change of a waiter (served, timed out, unblocked,
//! disconnected) happens with all its keys' shards locked, so exactly one of them wins.

use std::sync::Arc;

use parking_lot::Mutex;
use quince_resp::Encoder;

use crate::error::CmdError;
use crate::exec::Client;
use crate::keyspace::Key;
use crate::reply::ReplySink;

/// A client blocked on one or more keys.
pub struct Waiter {
    /// The blocked client as it was when it blocked (database, protocol, id).
    pub client: Client,
    /// The command to re-run once a key is ready.
    pub args: Vec<Vec<u8>>,
    /// Keys waited on (all in `client.db`).
    pub keys: Vec<Key>,
    /// Absolute Unix ms after which the wait ends with the timeout reply; None: forever.
    pub deadline_ms: Option<i64>,
    /// Writes the reply sent when the wait times out (a null array for BLPOP, ...).
    pub timeout_reply: fn(&mut dyn ReplySink),
    /// For a wait on something other than keys (WAIT for replicas): the integer the client
    /// gets when the wait ends, counted then. Replaces `timeout_reply`.
    count_reply: Option<Box<dyn Fn() -> i64 + Send + Sync>>,
    state: Mutex<WaitState>,
}

#[derive(Debug)]
enum WaitState {
    Waiting,
    /// Finished: the encoded reply, not yet taken by the client's worker.
    Done(Vec<u8>),
    /// Finished and delivered (or the client went away).
    Taken,
}

/// How a wait ends other than by being served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unblock {
    Timeout,
    /// CLIENT UNBLOCK ... ERROR.
    Error,
    /// The server became a replica (Redis's disconnectAllBlockedClients).
    RoleChange,
    /// The client disconnected: no reply.
    Disconnect,
}

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiter").field("client", &self.client.id).field("keys", &self.keys).finish_non_exhaustive()
    }
}

impl Waiter {
    pub fn new(
        client: Client,
        args: &[&[u8]],
        keys: &[&[u8]],
        deadline_ms: Option<i64>,
        timeout_reply: fn(&mut dyn ReplySink),
    ) -> Self {
        Self {
            client,
            args: args.iter().map(|a| a.to_vec()).collect(),
            keys: keys.iter().map(|&k| k.into()).collect(),
            deadline_ms,
            timeout_reply,
            count_reply: None,
            state: Mutex::new(WaitState::Waiting),
        }
    }

    /// A wait on no key that ends with the integer `count` gives at that moment (on its
    /// deadline, or when the party it waits for calls `Engine::end_wait` with `Timeout`).
    pub fn counting(
        client: Client,
        args: &[&[u8]],
        deadline_ms: Option<i64>,
        count: Box<dyn Fn() -> i64 + Send + Sync>,
    ) -> Self {
        let mut waiter = Self::new(client, args, &[], deadline_ms, |_| {});
        waiter.count_reply = Some(count);
        waiter
    }

    pub fn is_waiting(&self) -> bool {
        matches!(*self.state.lock(), WaitState::Waiting)
    }

    /// Records the reply and wakes the client's worker. Caller holds the keys' locks.
    pub(crate) fn finish(&self, reply: Vec<u8>) -> bool {
        let mut state = self.state.lock();
        if !matches!(*state, WaitState::Waiting) {
            return false;
        }
        *state = WaitState::Done(reply);
        drop(state);
        self.client.handle.wake();
        true
    }

    /// Ends the wait without a reply (the client is gone). Caller holds the keys' locks.
    pub(crate) fn abandon(&self) {
        *self.state.lock() = WaitState::Taken;
    }

    /// The reply, once the wait is over (for the client's worker; taken once).
    pub fn take_reply(&self) -> Option<Vec<u8>> {
        let mut state = self.state.lock();
        match std::mem::replace(&mut *state, WaitState::Taken) {
            WaitState::Done(reply) => Some(reply),
            other => {
                *state = other;
                None
            }
        }
    }

    /// The reply for an unblock by timeout or CLIENT UNBLOCK ERROR, encoded for the client.
    /// An error reply in the client's protocol (a cluster redirection of a wait).
    pub(crate) fn error_reply(&self, line: &str) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut enc = Encoder::new(&mut bytes, self.client.protocol);
        ReplySink::error(&mut enc, line);
        bytes
    }

    pub(crate) fn unblock_reply(&self, how: Unblock) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut enc = Encoder::new(&mut bytes, self.client.protocol);
        match how {
            Unblock::Error => {
                ReplySink::error(&mut enc, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
            }
            Unblock::RoleChange => {
                ReplySink::error(
                    &mut enc,
                    "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)",
                );
            }
            _ => match &self.count_reply {
                Some(count) => ReplySink::integer(&mut enc, count()),
                None => (self.timeout_reply)(&mut enc),
            },
        }
        bytes
    }
}

/// A timeout argument in seconds (a float since Redis 6) to an absolute deadline in ms;
/// `None` for 0 (wait forever). Parsed as Redis's getTimeoutFromObjectOrReply does: a long
/// double (hex and exponents allowed, nothing else around it), times 1000, rounded up.
pub fn parse_timeout(arg: &[u8], now_ms: i64) -> Result<Option<i64>, CmdError> {
    let value = crate::longdouble::LongDouble::parse(arg).filter(|v| !v.is_nan()).ok_or_else(timeout_not_float)?;
    let ms = (value.to_f64() * 1000.0).ceil();
    // An out-of-range conversion gives LLONG_MIN on x86, which Redis reports as negative.
    let ms = if ms.is_finite() && ms > -9.2e18 && ms < 9.2e18 { ms as i64 } else { i64::MIN };
    if ms < 0 {
        return Err(CmdError::msg("ERR timeout is negative"));
    }
    Ok((ms > 0).then(|| now_ms.saturating_add(ms)))
}

fn timeout_not_float() -> CmdError {
    CmdError::msg("ERR timeout is not a float or out of range")
}

/// What a served waiter produced, while the executor re-runs its command.
#[derive(Debug, Default)]
pub(crate) struct ServeState {
    /// The handler called `block` again: nothing was available for it.
    pub not_served: bool,
}

pub type WaiterRef = Arc<Waiter>;
