//! Crash reports as redis-server writes them. With `crash-log-enabled yes` (the default) a
//! SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT writes Redis's bug-report block to the log
//! (the signal, the faulting address, who sent it, and the stack trace of the crashing
//! thread from glibc's `backtrace`, as addresses in the binary: `addr2line -e quince-server`
//! turns them into lines), then the signal's default action runs, so the exit status (and a
//! core dump where enabled) is the signal's. Nothing here allocates or takes a lock: the
//! crash may have happened inside the allocator or while the log's lock was held.

use std::ffi::{c_int, c_void};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::log;

static ENABLED: AtomicBool = AtomicBool::new(true);

const SIGNALS: [c_int; 5] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL, libc::SIGABRT];

extern "C" {
    // glibc's execinfo.h.
    fn backtrace(buffer: *mut *mut c_void, size: c_int) -> c_int;
    fn backtrace_symbols_fd(buffer: *const *mut c_void, size: c_int, fd: c_int);
}

/// Installs the handlers (once, at start-up).
pub fn install() {
    // SAFETY: a zeroed sigaction with our handler, an emptied mask and SA_SIGINFO is valid;
    // `on_crash` has the signature SA_SIGINFO expects.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_crash as *const () as usize;
        // SA_ONSTACK: on the alternate stack Rust gives each thread, so a stack overflow is
        // reported too.
        action.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER | libc::SA_RESETHAND | libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        for signal in SIGNALS {
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
    // glibc loads libgcc on the first backtrace (which allocates): done now, not in a crash.
    let mut frames = [std::ptr::null_mut(); 1];
    // SAFETY: the buffer holds one entry.
    unsafe { backtrace(frames.as_mut_ptr(), 1) };
}

/// `crash-log-enabled`: whether a crash writes the report (always the default action after).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Text formatted on the stack.
struct Line {
    buf: [u8; 512],
    len: usize,
}

impl Line {
    fn new() -> Self {
        Line { buf: [0; 512], len: 0 }
    }

    fn write_to(&self, fd: c_int) {
        // SAFETY: writes the initialized part of our own buffer.
        unsafe { libc::write(fd, self.buf.as_ptr().cast(), self.len) };
    }
}

impl std::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

fn raw(fd: c_int, text: &str) {
    // SAFETY: writes a live string.
    unsafe { libc::write(fd, text.as_ptr().cast(), text.len()) };
}

fn log_line(fd: c_int, args: std::fmt::Arguments<'_>) {
    let mut line = Line::new();
    log::write_prefix(&mut line);
    let _ = line.write_fmt(args);
    let _ = line.write_str("\n");
    line.write_to(fd);
}

extern "C" fn on_crash(signal: c_int, info: *mut libc::siginfo_t, _context: *mut c_void) {
    if ENABLED.load(Ordering::Relaxed) {
        let fd = log::fd();
        raw(fd, "\n\n=== REDIS BUG REPORT START: Cut & paste starting from here ===\n");
        // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
        let info = unsafe { &*info };
        log_line(
            fd,
            format_args!(
                "Quince {} (redis {} compatible) crashed by signal: {signal}, si_code: {}",
                quince_engine::QUINCE_VERSION,
                quince_engine::REDIS_VERSION,
                info.si_code
            ),
        );
        // (A fault's address; a signal sent by a process has none.)
        if (signal == libc::SIGSEGV || signal == libc::SIGBUS) && info.si_code > 0 {
            // SAFETY: si_addr is set for these signals.
            log_line(fd, format_args!("Accessing address: {:p}", unsafe { info.si_addr() }));
        }
        if info.si_code == libc::SI_USER || info.si_code == libc::SI_TKILL {
            // SAFETY: si_pid and si_uid are set for signals sent by a process.
            let (pid, uid) = unsafe { (info.si_pid(), info.si_uid()) };
            log_line(fd, format_args!("Killed by PID: {pid}, UID: {uid}"));
        }
        raw(fd, "\n------ STACK TRACE ------\n\nBacktrace:\n");
        let mut frames = [std::ptr::null_mut(); 100];
        // SAFETY: the buffer holds 100 entries; the symbols go straight to `fd`.
        unsafe {
            let n = backtrace(frames.as_mut_ptr(), frames.len() as c_int);
            backtrace_symbols_fd(frames.as_ptr(), n, fd);
        }
        raw(
            fd,
            "\n=== REDIS BUG REPORT END. Make sure to include from START to END. ===\n\n       \
             Please report the crash with the lines above, and the binary's version, to the Quince project.\n\n",
        );
    }
    // The default action, with this signal: SA_RESETHAND put it back already.
    // SAFETY: re-raising the signal being handled.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}
