//! The directory lock: `quince.lock` held with flock, so a second process opening the same
//! directory gets an error naming the holder instead of sharing (and corrupting) its files.
//! The kernel drops the lock when the holder's file closes, so a killed process leaves no
//! stale lock behind.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::io::AsRawFd;
use std::path::Path;

use crate::Error;

pub(crate) const LOCK_FILE: &str = "quince.lock";

/// Takes the lock of `dir` (waiting for nobody) and writes this process's id in it.
pub(crate) fn acquire(dir: &Path) -> Result<File, Error> {
    let path = dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| Error::Open(format!("{}: {e}", path.display())))?;
    // SAFETY: flock on a file descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        let holder = holder.trim();
        let who = if holder.is_empty() { "another process".to_string() } else { format!("process {holder}") };
        return Err(Error::Locked(format!("ERR {} is in use by {who} (lock file {})", dir.display(), path.display())));
    }
    let pid = std::process::id().to_string();
    let written =
        file.set_len(0).and_then(|_| file.seek(SeekFrom::Start(0))).and_then(|_| file.write_all(pid.as_bytes()));
    written.map_err(|e| Error::Open(format!("{}: {e}", path.display())))?;
    Ok(file)
}
