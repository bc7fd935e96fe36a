//! Background work in a forked child, as Redis does it: the child sees the dataset frozen
//! at the fork (copy-on-write), writes it out and exits, while the parent keeps serving.

use quince_engine::Engine;

/// A running child process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildPid(pub libc::pid_t);

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildExit {
    Code(i32),
    Signal(i32),
}

impl ChildExit {
    pub fn ok(self) -> bool {
        self == ChildExit::Code(0)
    }
}

/// Forks; the child runs `work` and exits with its result (0: success). The caller must
/// hold `Engine::exclusive()`, so the child's copy of the dataset is at a consistent point.
pub fn spawn_child(engine: &Engine, work: impl FnOnce(&Engine) -> bool) -> std::io::Result<ChildPid> {
    // SAFETY: fork is async-signal-safe; the child only runs `work`, which touches the
    // keyspace (its locks are released first: their holders don't exist in the child) and
    // files, then leaves with _exit, skipping destructors and atexit handlers of the parent.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(std::io::Error::last_os_error()),
        0 => {
            // SAFETY: single-threaded child of a fork made under the exclusive gate.
            unsafe { engine.keyspace.unlock_all_after_fork() };
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(engine))).unwrap_or(false);
            // SAFETY: ends the child without running the parent's exit handlers.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        pid => {
            engine.stats.total_forks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(ChildPid(pid))
        }
    }
}

/// Checks without waiting whether `child` ended.
pub fn try_reap(child: ChildPid) -> Option<ChildExit> {
    let mut status = 0;
    // SAFETY: waitpid on our own child with a valid status pointer.
    let r = unsafe { libc::waitpid(child.0, &mut status, libc::WNOHANG) };
    if r != child.0 {
        // 0: still running. -1: not our child any more (already reaped): report failure.
        return if r == 0 { None } else { Some(ChildExit::Code(-1)) };
    }
    if libc::WIFSIGNALED(status) {
        Some(ChildExit::Signal(libc::WTERMSIG(status)))
    } else {
        Some(ChildExit::Code(libc::WEXITSTATUS(status)))
    }
}

/// Kills a child (SIGUSR1, as Redis does, so it is not taken for a failure) and reaps it.
pub fn kill_child(child: ChildPid) {
    // SAFETY: signalling and reaping our own child.
    unsafe {
        libc::kill(child.0, libc::SIGUSR1);
        let mut status = 0;
        libc::waitpid(child.0, &mut status, 0);
    }
}
