//! What a forked child tells its parent while it works, as Redis's childinfo.c: how many
//! keys it has written and how much memory copy-on-write has cost so far (the pages the
//! child and the parent no longer share, its `Private_Dirty`), through a pipe made before
//! the fork. The parent shows them in INFO persistence (`current_cow_size`,
//! `current_save_keys_processed`, ...) and keeps the final figure (`rdb_last_cow_size`,
//! `aof_last_cow_size`).

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// A report: the child's progress while it works, or its last words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    pub last: bool,
    pub keys: u64,
    /// Private dirty bytes when measured (Redis's `zmalloc_get_private_dirty`).
    pub cow_bytes: u64,
    /// Wall-clock time of the measurement, Unix milliseconds.
    pub at_ms: i64,
}

/// Each report is four little-endian u64s: well under PIPE_BUF, so writes never interleave.
const REPORT_BYTES: usize = 32;

impl Report {
    fn encode(&self) -> [u8; REPORT_BYTES] {
        let mut b = [0u8; REPORT_BYTES];
        b[..8].copy_from_slice(&u64::from(self.last).to_le_bytes());
        b[8..16].copy_from_slice(&self.keys.to_le_bytes());
        b[16..24].copy_from_slice(&self.cow_bytes.to_le_bytes());
        b[24..].copy_from_slice(&self.at_ms.to_le_bytes());
        b
    }

    fn decode(b: &[u8]) -> Self {
        let word = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        Self { last: word(0) != 0, keys: word(1), cow_bytes: word(2), at_ms: word(3) as i64 }
    }
}

/// The parent's end of a child's pipe (non-blocking).
#[derive(Debug)]
pub struct InfoPipe {
    read: File,
    partial: Vec<u8>,
}

/// Makes the pipe: the parent's reading end and the write end for the child. None if the
/// system refuses one (the child then runs without reporting, as before).
pub fn open() -> Option<(InfoPipe, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills the two descriptors on success; each is owned once below.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return None;
        }
        let flags = libc::fcntl(fds[0], libc::F_GETFL);
        libc::fcntl(fds[0], libc::F_SETFL, flags | libc::O_NONBLOCK);
        Some((InfoPipe { read: File::from_raw_fd(fds[0]), partial: Vec::new() }, OwnedFd::from_raw_fd(fds[1])))
    }
}

impl InfoPipe {
    /// The reports written since the last call, oldest first (never waits).
    pub fn drain(&mut self) -> Vec<Report> {
        let mut buf = [0u8; 4096];
        loop {
            match self.read.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => self.partial.extend_from_slice(&buf[..n]),
            }
        }
        let whole = self.partial.len() / REPORT_BYTES * REPORT_BYTES;
        let reports = self.partial[..whole].chunks_exact(REPORT_BYTES).map(Report::decode).collect();
        self.partial.drain(..whole);
        reports
    }
}

// The child's side: set once right after the fork, in the child only.
static CHILD_FD: AtomicI32 = AtomicI32::new(-1);
static KEYS_DONE: AtomicU64 = AtomicU64::new(0);
static LAST_REPORT_MS: AtomicU64 = AtomicU64::new(0);

/// In a new child: reports go to `fd` from now on.
pub fn install_in_child(fd: OwnedFd) {
    use std::os::fd::IntoRawFd;
    CHILD_FD.store(fd.into_raw_fd(), Ordering::Relaxed);
}

/// The child has written `keys` keys. Every 1,024 keys, and at most once a second, the
/// parent hears of it with a fresh copy-on-write figure (as Redis's rdbSaveProgress). No
/// effect outside a child (a foreground SAVE).
pub fn progress(keys: u64) {
    let fd = CHILD_FD.load(Ordering::Relaxed);
    if fd < 0 {
        return;
    }
    KEYS_DONE.store(keys, Ordering::Relaxed);
    if !keys.is_multiple_of(1024) {
        return;
    }
    let now = now_ms();
    if now.saturating_sub(LAST_REPORT_MS.load(Ordering::Relaxed) as i64) < 1000 {
        return;
    }
    LAST_REPORT_MS.store(now as u64, Ordering::Relaxed);
    send(fd, Report { last: false, keys, cow_bytes: private_dirty_bytes(), at_ms: now });
}

/// The child's work is done: its final copy-on-write figure.
pub fn finish() {
    let fd = CHILD_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        let keys = KEYS_DONE.load(Ordering::Relaxed);
        send(fd, Report { last: true, keys, cow_bytes: private_dirty_bytes(), at_ms: now_ms() });
    }
}

fn send(fd: libc::c_int, report: Report) {
    let bytes = report.encode();
    // SAFETY: a write of a stack buffer to our pipe; a short or failed write only loses
    // a report (the parent keeps its last figures).
    unsafe {
        libc::write(fd, bytes.as_ptr().cast(), bytes.len());
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// This process's private dirty memory: the sum of `Private_Dirty` in /proc/self/smaps_rollup
/// (or smaps on kernels before 4.14), in bytes; 0 without /proc.
pub fn private_dirty_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup")
        .or_else(|_| std::fs::read_to_string("/proc/self/smaps"))
        .unwrap_or_default();
    text.lines()
        .filter_map(|l| l.strip_prefix("Private_Dirty:"))
        .filter_map(|v| v.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
        .sum::<u64>()
        * 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_cross_the_pipe_whole() {
        let (mut pipe, write) = open().expect("a pipe");
        assert!(pipe.drain().is_empty(), "nothing yet, and no waiting");
        let sent = [
            Report { last: false, keys: 1024, cow_bytes: 4096, at_ms: 1_700_000_000_000 },
            Report { last: true, keys: 5000, cow_bytes: 1 << 40, at_ms: 1_700_000_001_000 },
        ];
        use std::os::fd::AsRawFd;
        let first = sent[0].encode();
        send(write.as_raw_fd(), sent[0]);
        // Half a report waits for its other half.
        // SAFETY: writes to our own pipe.
        unsafe { libc::write(write.as_raw_fd(), sent[1].encode().as_ptr().cast(), 10) };
        assert_eq!(pipe.drain(), vec![sent[0]]);
        // SAFETY: as above.
        unsafe { libc::write(write.as_raw_fd(), sent[1].encode()[10..].as_ptr().cast(), REPORT_BYTES - 10) };
        assert_eq!(pipe.drain(), vec![sent[1]]);
        assert_eq!(Report::decode(&first), sent[0]);
    }

    #[test]
    fn private_dirty_memory_grows_with_written_pages() {
        let before = private_dirty_bytes();
        let mut v = vec![0u8; 64 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        let after = private_dirty_bytes();
        std::hint::black_box(&v);
        assert!(after >= before + (60 << 20), "{before} -> {after}");
    }
}
