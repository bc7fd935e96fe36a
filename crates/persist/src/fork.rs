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

/// A child just forked: its pid and the pipe its progress reports come through.
#[derive(Debug)]
pub struct Spawned {
    pub pid: ChildPid,
    pub info: Option<crate::child_info::InfoPipe>,
}

/// Forks; the child runs `work` and exits with its result (0: success). The caller must
/// hold `Engine::exclusive()`, so the child's copy of the dataset is at a consistent point.
pub fn spawn_child(engine: &Engine, work: impl FnOnce(&Engine) -> bool) -> std::io::Result<Spawned> {
    let (info, report_to) = crate::child_info::open().unzip();
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // The death signal follows the thread that forked, not the process: only children of
    // the threads that live as long as the server (main, workers) get it, not those of the
    // loader or a replica link, which end earlier and would take the child with them.
    let die_with_parent = std::thread::current().name().is_some_and(|n| n == "main" || n.starts_with("quince-worker"));
    // SAFETY: fork is async-signal-safe; the child only runs `work`, which touches the
    // keyspace (its locks are released first: their holders don't exist in the child) and
    // files, then leaves with _exit, skipping destructors and atexit handlers of the parent.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(std::io::Error::last_os_error()),
        0 => {
            // SAFETY: the child's own descriptors and process attributes.
            unsafe { detach_child_from_server(parent, die_with_parent) };
            // SAFETY: single-threaded child of a fork made under the exclusive gate.
            unsafe { engine.keyspace.unlock_all_after_fork() };
            // (A failure leaves the parent's score: nothing to report from here.)
            let _ = crate::oom::apply(engine, crate::oom::Class::BackgroundChild);
            drop(info);
            if let Some(fd) = report_to {
                crate::child_info::install_in_child(fd);
            }
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(engine))).unwrap_or(false);
            crate::child_info::finish();
            // SAFETY: ends the child without running the parent's exit handlers.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        pid => {
            engine.stats.total_forks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            quince_engine::keyspace::fork_child_started();
            drop(report_to);
            Ok(Spawned { pid: ChildPid(pid), info })
        }
    }
}

/// In a new child: closes what belongs to the serving parent, as Redis's
/// closeChildUnusedResourceAfterFork does, and makes the child die with its parent.
/// Sockets (listeners and clients) and anonymous-inode descriptors (io_uring rings, whose
/// armed accepts hold the listeners too; eventfds; epoll) are closed: a child that outlived
/// a killed parent kept the port, and a restarted server could not bind it. Files stay open.
///
/// # Safety
/// Only in the child right after fork, before anything uses those descriptors.
unsafe fn detach_child_from_server(parent: libc::pid_t, die_with_parent: bool) {
    // SAFETY: plain syscalls on this process's own descriptors and attributes.
    unsafe {
        if die_with_parent {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        }
        // The parent may have died before the line above: then nobody waits for this child.
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        if !close_listed_descriptors() {
            // No /proc: every descriptor up to the limit (at most 65,536 checks).
            let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            let max_fd = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
                limit.rlim_cur.min(1 << 16) as libc::c_int
            } else {
                1024
            };
            for fd in 3..max_fd {
                close_if_server_descriptor(fd);
            }
        }
    }
}

/// Without /proc: closes `fd` if fstat shows a socket or an anonymous inode (mode 0; newer
/// kernels give anonymous inodes a regular-file mode, which only /proc tells apart).
fn close_if_server_descriptor(fd: libc::c_int) {
    // SAFETY: fstat into a zeroed stat buffer, close of our own descriptor.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) == 0 && matches!(st.st_mode & libc::S_IFMT, libc::S_IFSOCK | 0) {
            libc::close(fd);
        }
    }
}

/// Walks the descriptors listed in /proc/self/fd (getdents64 into a stack buffer: no
/// allocation right after fork), closing those that link to a socket or an anonymous
/// inode. False when /proc can't be read.
fn close_listed_descriptors() -> bool {
    // SAFETY: open/getdents64/close on a directory descriptor of our own; the records are
    // read within the bytes the kernel wrote, each bounded by its own length field.
    unsafe {
        let dir = libc::open(c"/proc/self/fd".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
        if dir < 0 {
            return false;
        }
        // Descriptors to close are gathered first (closing while listing could shift entries),
        // at most a buffer's worth per listing.
        let mut found = [0 as libc::c_int; 1024];
        loop {
            let mut buf = [0u8; 4096];
            let mut count = 0;
            loop {
                let n = libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len()) as isize;
                if n <= 0 {
                    break;
                }
                let mut at = 0usize;
                while at + 19 < n as usize {
                    let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
                    if reclen == 0 {
                        break;
                    }
                    let mut fd: libc::c_int = 0;
                    let mut digits = 0;
                    for &b in &buf[at + 19..(at + reclen).min(n as usize)] {
                        if !b.is_ascii_digit() {
                            break;
                        }
                        fd = fd.saturating_mul(10).saturating_add(libc::c_int::from(b - b'0'));
                        digits += 1;
                    }
                    if digits > 0
                        && fd > 2
                        && fd != dir
                        && count < found.len()
                        && names_server_object(dir, &buf[at + 19..])
                    {
                        found[count] = fd;
                        count += 1;
                    }
                    at += reclen;
                }
            }
            for &fd in &found[..count] {
                libc::close(fd);
            }
            // More than a buffer's worth: list again (closed ones are gone from the list).
            if count < found.len() {
                break;
            }
            libc::lseek(dir, 0, libc::SEEK_SET);
        }
        libc::close(dir);
        true
    }
}

/// Whether the entry `name` (NUL-terminated, as getdents64 gives it) of /proc/self/fd links
/// to a socket or an anonymous inode (io_uring, eventfd, epoll).
fn names_server_object(dir: libc::c_int, name: &[u8]) -> bool {
    let mut target = [0u8; 16];
    // SAFETY: `name` holds the entry's NUL-terminated name; `target` is a buffer of its length.
    let n = unsafe { libc::readlinkat(dir, name.as_ptr().cast(), target.as_mut_ptr().cast(), target.len()) };
    n > 0 && (target.starts_with(b"socket:") || target.starts_with(b"anon_inode:"))
}

/// Checks without waiting whether `child` ended.
pub fn try_reap(child: ChildPid) -> Option<ChildExit> {
    let mut status = 0;
    // SAFETY: waitpid on our own child with a valid status pointer.
    let r = unsafe { libc::waitpid(child.0, &mut status, libc::WNOHANG) };
    if r != child.0 {
        // 0: still running. -1: not our child any more (already reaped): report failure.
        if r == 0 {
            return None;
        }
        quince_engine::keyspace::fork_child_ended();
        return Some(ChildExit::Code(-1));
    }
    quince_engine::keyspace::fork_child_ended();
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
    quince_engine::keyspace::fork_child_ended();
}
