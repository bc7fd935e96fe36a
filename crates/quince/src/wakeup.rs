//! A client's waker for a thread that waits: the engine calls it when the client has
//! something (a blocked command served, a message pushed); the thread sleeps on it.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use quince_engine::Client;

/// Installed as `client`'s waker; `wait` sleeps until woken or `at_most` passed.
#[derive(Clone)]
pub(crate) struct Wakeup(Arc<(Mutex<bool>, Condvar)>);

impl Wakeup {
    pub(crate) fn install(client: &Client) -> Wakeup {
        let wakeup = Wakeup(Arc::new((Mutex::new(false), Condvar::new())));
        let signal = wakeup.0.clone();
        client.handle.set_waker(Box::new(move || {
            *signal.0.lock() = true;
            signal.1.notify_all();
        }));
        wakeup
    }

    /// Returns at once if woken since the last wait (no wake-up is lost between the
    /// caller's check and this call).
    pub(crate) fn wait(&self, at_most: Duration) {
        let mut woken = self.0 .0.lock();
        if !*woken {
            self.0 .1.wait_for(&mut woken, at_most);
        }
        *woken = false;
    }
}
