//! A full sync's snapshot, written by a forked child into a pipe (as Redis's diskless
//! `rdb pipe`), so the master keeps serving while it is built (`rdb-key-save-delay` slows
//! it as in Redis) and one snapshot serves every replica waiting at the fork. A thread
//! relays the pipe: as it arrives to replicas that read the EOF-marked format, whole with
//! its length (`$len`) to the others, which get newline keepalives meanwhile. The child
//! ends its output with the transfer's 40-byte mark, so a child killed half way is told
//! apart from a complete snapshot: then the replicas of the transfer are dropped and sync
//! again.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;

use quince_engine::clients::ClientHandle;

use super::Replication;
use crate::layer::{LogLevel, Logger};

/// One replica of a transfer.
pub struct Receiver {
    pub handle: Arc<ClientHandle>,
    /// Reads the EOF-marked format (the bytes as they come); else gets `$len` at the end.
    pub eof: bool,
}

/// The replicas of a running transfer; a disk-format transfer takes late joiners.
pub type Receivers = Arc<parking_lot::Mutex<Vec<Receiver>>>;

/// Creates the pipe: (read end, write end).
pub fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array on success; we own them after.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// In the child: the snapshot, then the mark, into the pipe.
pub fn write_snapshot(
    engine: &quince_engine::Engine,
    out: OwnedFd,
    repl: (String, u64, usize),
    mark: &str,
    functions_only: bool,
) -> bool {
    let file = std::fs::File::from(out);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    let options = crate::rdb::SaveOptions {
        repl: Some(repl),
        functions_only,
        ..crate::rdb::SaveOptions::from_config(engine, false)
    };
    crate::rdb::write_snapshot(engine, &mut out, &options).is_ok()
        && out.write_all(mark.as_bytes()).is_ok()
        && out.flush().is_ok()
}

/// In the parent: relays the pipe to the receivers on a thread of its own.
/// `child` is the writer, stopped (SIGUSR1) when every receiver is gone.
pub fn relay(
    input: OwnedFd,
    receivers: Receivers,
    mark: String,
    replication: Arc<Replication>,
    log: Logger,
    child: libc::pid_t,
) {
    let spawned = std::thread::Builder::new().name("quince-repl-transfer".into()).spawn({
        let log = log.clone();
        move || relay_pipe(input, receivers, &mark, &replication, &*log, child)
    });
    if let Err(e) = spawned {
        log(LogLevel::Warning, &format!("Can't start the replication transfer thread: {e}"));
    }
}

fn relay_pipe(
    input: OwnedFd,
    shared: Receivers,
    mark: &str,
    replication: &Replication,
    log: &dyn Fn(LogLevel, &str),
    child: libc::pid_t,
) {
    let fd = std::os::fd::AsRawFd::as_raw_fd(&input);
    let mut file = std::fs::File::from(input);
    let mut whole = Vec::new();
    let mut tail: Vec<u8> = Vec::with_capacity(mark.len() * 2);
    let mut sent = 0usize;
    let mut chunk = vec![0u8; 1 << 16];
    let mut last_keepalive = std::time::Instant::now();
    let mut receivers: Vec<(Arc<ClientHandle>, bool)>;
    loop {
        {
            let mut list = shared.lock();
            list.retain(|r| !r.handle.is_gone());
            receivers = list.iter().map(|r| (r.handle.clone(), r.eof)).collect();
        }
        if receivers.is_empty() {
            replication.transfer_finished();
            log(LogLevel::Warning, "Diskless rdb transfer, last replica dropped, killing fork child.");
            // SAFETY: signals our own child; the layer's cron reaps it.
            unsafe { libc::kill(child, libc::SIGUSR1) };
            return;
        }
        // Keepalives for replicas that wait for the length.
        if last_keepalive.elapsed() >= std::time::Duration::from_secs(1) {
            last_keepalive = std::time::Instant::now();
            for (handle, _) in receivers.iter().filter(|r| !r.1) {
                handle.push_output(b"\n");
            }
        }
        let mut poll = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut poll, 1, 200) };
        if ready <= 0 {
            continue;
        }
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                log(LogLevel::Warning, &format!("Diskless rdb transfer, reading from the child: {e}"));
                break;
            }
        };
        let bytes = &chunk[..n];
        sent += n;
        for (handle, _) in receivers.iter().filter(|r| r.1) {
            handle.set_limit_exempt_bytes(sent + 64);
            handle.push_output(bytes);
        }
        // Kept whole for the replicas that get it with its length (they may still join).
        if receivers.iter().any(|r| !r.1) {
            whole.extend_from_slice(bytes);
        }
        tail.extend_from_slice(bytes);
        if tail.len() > mark.len() {
            tail.drain(..tail.len() - mark.len());
        }
    }
    // No one joins from here on.
    replication.transfer_finished();
    let receivers: Vec<Receiver> = std::mem::take(&mut *shared.lock());
    if tail != mark.as_bytes() {
        log(LogLevel::Warning, "Diskless rdb transfer: the child did not finish the snapshot; dropping its replicas.");
        for r in &receivers {
            r.handle.kill();
        }
        return;
    }
    log(
        LogLevel::Notice,
        &format!("Diskless rdb transfer, done reading from pipe, {} replicas still up.", receivers.len()),
    );
    for r in receivers.iter().filter(|r| r.eof) {
        replication.transfer_done(r.handle.id);
    }
    let snapshot = &whole[..whole.len().saturating_sub(mark.len())];
    for r in receivers.iter().filter(|r| !r.eof) {
        let header = format!("${}\r\n", snapshot.len());
        r.handle.set_limit_exempt_bytes(header.len() + snapshot.len() + 64);
        r.handle.push_output(header.as_bytes());
        r.handle.push_output(snapshot);
        // The stream that waited during the transfer follows the snapshot.
        replication.set_online(r.handle.id);
    }
}
