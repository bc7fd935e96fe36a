//! Spreading connections over the workers. Every worker accepts on the shared listening
//! sockets, but the kernel does not spread them: a multishot accept on io_uring hands every
//! new connection to the ring that armed it first, and epoll wakes whichever worker it
//! likes, so without help one worker could own every connection while the others idle. A
//! worker that accepts a connection while another owns fewer hands it to that one (into its
//! inbox, then wakes it), so the counts stay within one of each other.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use std::sync::Mutex;

use crate::socket::Socket;

type Waker = Arc<dyn Fn() + Send + Sync>;

/// Each worker's share of the connections, and its inbox of handed-over sockets.
pub struct Balancer {
    workers: Vec<Slot>,
}

struct Slot {
    /// Connections the worker owns, plus those handed to it and not yet taken in.
    owned: AtomicUsize,
    inbox: Mutex<Vec<Socket>>,
    /// Set once the worker's loop runs; no connection is handed to a worker before.
    waker: OnceLock<Waker>,
}

impl Balancer {
    pub fn new(workers: usize) -> Arc<Balancer> {
        let workers = (0..workers)
            .map(|_| Slot { owned: AtomicUsize::new(0), inbox: Mutex::new(Vec::new()), waker: OnceLock::new() })
            .collect();
        Arc::new(Balancer { workers })
    }

    /// Worker `index` can be handed connections; `waker` wakes its loop (which takes them
    /// in once it runs).
    pub fn ready(&self, index: usize, waker: Waker) {
        let _ = self.workers[index].waker.set(waker);
    }

    /// Wakes every ready worker (its listeners changed).
    pub fn wake_all(&self) {
        for slot in &self.workers {
            if let Some(wake) = slot.waker.get() {
                wake();
            }
        }
    }

    /// Worker `index` accepted `socket`: hands it to the ready worker owning the fewest
    /// connections if that one owns fewer than `index` (None), or counts it for `index`
    /// and gives it back to be taken in there.
    pub fn place(&self, index: usize, socket: Socket) -> Option<Socket> {
        let mine = self.workers[index].owned.load(Ordering::Relaxed);
        let target = self
            .workers
            .iter()
            .enumerate()
            .filter(|(i, slot)| *i != index && slot.waker.get().is_some())
            .min_by_key(|(_, slot)| slot.owned.load(Ordering::Relaxed));
        match target {
            Some((_, slot)) if slot.owned.load(Ordering::Relaxed) < mine => {
                slot.owned.fetch_add(1, Ordering::Relaxed);
                slot.inbox.lock().unwrap_or_else(|e| e.into_inner()).push(socket);
                if let Some(wake) = slot.waker.get() {
                    wake();
                }
                None
            }
            _ => {
                self.workers[index].owned.fetch_add(1, Ordering::Relaxed);
                Some(socket)
            }
        }
    }

    /// The sockets handed to worker `index` (already counted as its own).
    pub fn take_inbox(&self, index: usize) -> Vec<Socket> {
        let mut inbox = self.workers[index].inbox.lock().unwrap_or_else(|e| e.into_inner());
        if inbox.is_empty() {
            Vec::new()
        } else {
            std::mem::take(&mut *inbox)
        }
    }

    /// Worker `index` let go of a connection (closed, or never taken in).
    pub fn released(&self, index: usize) {
        self.workers[index].owned.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn socket() -> Socket {
        let (a, _b) = std::os::unix::net::UnixStream::pair().expect("socket pair");
        Socket::Unix(a)
    }

    #[test]
    fn accepted_connections_go_to_the_worker_owning_fewest() {
        let balancer = Balancer::new(3);
        let wakes = Arc::new(AtomicUsize::new(0));
        for i in 0..3 {
            let wakes = wakes.clone();
            balancer.ready(
                i,
                Arc::new(move || {
                    wakes.fetch_add(1, Ordering::Relaxed);
                }),
            );
        }
        // Worker 0 accepts everything: it keeps one, then hands out until all are even.
        let mut kept = 0;
        for _ in 0..9 {
            if balancer.place(0, socket()).is_some() {
                kept += 1;
            }
        }
        assert_eq!(kept, 3);
        assert_eq!(balancer.take_inbox(1).len(), 3);
        assert_eq!(balancer.take_inbox(2).len(), 3);
        assert!(balancer.take_inbox(2).is_empty());
        assert_eq!(wakes.load(Ordering::Relaxed), 6);
        // Closing two of worker 1's: the next accepts go there.
        balancer.released(1);
        balancer.released(1);
        assert!(balancer.place(2, socket()).is_none());
        assert!(balancer.place(0, socket()).is_none());
        assert_eq!(balancer.take_inbox(1).len(), 2);
        assert!(balancer.place(1, socket()).is_some());
    }

    #[test]
    fn a_worker_not_ready_gets_nothing() {
        let balancer = Balancer::new(2);
        balancer.ready(0, Arc::new(|| {}));
        for _ in 0..4 {
            assert!(balancer.place(0, socket()).is_some());
        }
        assert!(balancer.take_inbox(1).is_empty());
    }
}
