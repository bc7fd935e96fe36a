//! Appending to the current incremental AOF file: a shared buffer that writers fill under
//! their locks, written and fsynced by whichever thread needs it durable first (group
//! commit: one write and one fsync cover every write buffered by then, from any client).

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use parking_lot::Mutex;
use quince_engine::persistence::Effects;

/// `appendfsync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FsyncPolicy {
    Always = 0,
    EverySec = 1,
    No = 2,
}

impl FsyncPolicy {
    pub fn from_config(value: &str) -> Self {
        match value {
            "always" => FsyncPolicy::Always,
            "no" => FsyncPolicy::No,
            _ => FsyncPolicy::EverySec,
        }
    }
}

struct Pending {
    buf: Vec<u8>,
    /// The database the log's last SELECT chose (None: none yet in this file).
    selected_db: Option<usize>,
    /// The second of the last `#TS:` annotation (`aof-timestamp-enabled`; 0: none yet).
    annotated_s: u64,
}

/// The file the writer appends to: a real one, or a simulated disk's (the deterministic
/// simulator's, `crates/sim`, which decides what each call does and what a crash keeps).
pub trait LogFile: Send {
    /// One `write(2)` at the file's position: how many bytes it took (fewer on a full disk).
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize>;
    /// Cuts (or extends) the file to `len` bytes and puts the position there.
    fn cut_to(&mut self, len: u64) -> std::io::Result<()>;
    /// `fdatasync(2)`: what was written so far survives a crash.
    fn sync_data(&mut self) -> std::io::Result<()>;
    /// A second handle on the same file, for fsyncs made outside the writer's lock.
    fn another_handle(&self) -> std::io::Result<Box<dyn LogFile>>;
    /// The real file, when there is one (a mapped tail needs it).
    fn as_file(&self) -> Option<&File> {
        None
    }
}

impl LogFile for File {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        Write::write(self, data)
    }

    fn cut_to(&mut self, len: u64) -> std::io::Result<()> {
        self.set_len(len)?;
        self.seek(SeekFrom::Start(len)).map(|_| ())
    }

    fn sync_data(&mut self) -> std::io::Result<()> {
        File::sync_data(self)
    }

    fn another_handle(&self) -> std::io::Result<Box<dyn LogFile>> {
        Ok(Box::new(self.try_clone()?))
    }

    fn as_file(&self) -> Option<&File> {
        Some(self)
    }
}

struct Target {
    file: Box<dyn LogFile>,
    /// Bytes in the file (for INFO aof_current_size and the rewrite growth rule): the log's
    /// logical end, short of the preallocated end of a mapped tail.
    size: u64,
    /// Whether appends are stores into a shared mapping of the file (`MappedTail`) instead
    /// of `write` calls.
    mapped: bool,
    tail: Option<MappedTail>,
    /// Under `always` (plain writes): the bytes written since the last successful fsync,
    /// and the file's size then. After a failed fsync Linux may have dropped those pages
    /// (marked clean, so the next fsync succeeds without them and a crash finds zeros or
    /// old blocks): `resync` says they must be written again before the next fsync counts.
    track: bool,
    unsynced: Vec<u8>,
    synced_size: u64,
    resync: bool,
}

/// The end of the log mapped into memory (the embedded library's choice, `Layer::
/// set_mapped_tail`): an append is a copy into the mapping, with no system call, and is in
/// the kernel's page cache as soon as it is copied, so a crash of the process loses nothing,
/// as with `write`. The file is extended ahead with `fallocate` (a full disk is an error
/// there, never a SIGBUS on a store), so until `finish` cuts it back to the log's end, it
/// ends with zeros; the loader ignores a zero tail (`load::logical_end`).
struct MappedTail {
    ptr: *mut u8,
    len: usize,
    /// The file offset the mapping starts at (page aligned).
    start: u64,
}

// SAFETY: the mapping is plain memory owned by the writer; `Target`'s mutex serialises it.
unsafe impl Send for MappedTail {}

/// How far a mapped tail is extended at a time.
const MAP_CHUNK: u64 = 4 << 20;

impl Target {
    /// Appends `data` at the log's end: all of it, or an error with how many of its bytes
    /// are nonetheless in the log (0 unless a short write could not be cut back off).
    fn append(&mut self, data: &[u8]) -> Result<(), (usize, std::io::Error)> {
        if !self.mapped {
            let mut written = 0;
            while written < data.len() {
                match self.file.write(&data[written..]) {
                    Ok(0) => return Err(self.short_write(&data[..written], std::io::ErrorKind::WriteZero.into())),
                    Ok(n) => written += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(self.short_write(&data[..written], e)),
                }
            }
            self.size += data.len() as u64;
            if self.track {
                self.unsynced.extend_from_slice(data);
            }
            return Ok(());
        }
        let end = self.size + data.len() as u64;
        if self.tail.as_ref().is_none_or(|t| end > t.start + t.len as u64) {
            self.remap(end).map_err(|e| (0, e))?;
        }
        let tail = self.tail.as_ref().expect("remap maps the tail");
        // SAFETY: [size, end) lies inside the mapping (checked or just mapped), whose
        // blocks `fallocate` reserved; nothing else maps or truncates the file (the
        // directory's lock), and `data` is not inside the mapping.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), tail.ptr.add((self.size - tail.start) as usize), data.len());
        }
        self.size = end;
        Ok(())
    }

    /// Tracks (or stops tracking) what is not yet fsynced, from a file taken as synced now.
    fn set_tracking(&mut self, on: bool) {
        let on = on && !self.mapped;
        if on != self.track {
            self.track = on;
            self.unsynced.clear();
            self.synced_size = self.size;
            self.resync = false;
        }
    }

    /// fsync under `always`. After a failed one, the bytes since the last good fsync are
    /// written again first (the file cut back to where it was synced), so a success means
    /// they are on the disk, not that the kernel forgot them.
    fn sync(&mut self) -> std::io::Result<()> {
        if self.resync {
            self.file.cut_to(self.synced_size)?;
            self.size = self.synced_size;
            // `append` tracks the bytes as unsynced again.
            let data = std::mem::take(&mut self.unsynced);
            if let Err((_, e)) = self.append(&data) {
                return Err(self.rewrite_failed(data, e));
            }
            self.resync = false;
        }
        let result = self.file.sync_data();
        match &result {
            Ok(()) => {
                self.unsynced.clear();
                self.synced_size = self.size;
            }
            Err(_) if self.track => self.resync = true,
            Err(_) => {}
        }
        result
    }

    /// Writing the unsynced bytes again stopped part-way: cut back to the synced size
    /// again (a retry starts over from there).
    fn rewrite_failed(&mut self, data: Vec<u8>, e: std::io::Error) -> std::io::Error {
        let _ = self.file.cut_to(self.synced_size);
        self.size = self.synced_size;
        self.unsynced = data;
        self.resync = true;
        e
    }

    /// A write that stopped part-way (a full disk): as Redis does, the part written is cut
    /// back off the file, so retrying the whole buffer cannot log those commands twice; if
    /// even that fails, the part stays in the log and only the rest is to be retried.
    fn short_write(&mut self, written: &[u8], e: std::io::Error) -> (usize, std::io::Error) {
        if written.is_empty() || cfg!(feature = "seeded-bug") {
            return (0, e);
        }
        if self.file.cut_to(self.size).is_ok() {
            return (0, e);
        }
        self.size += written.len() as u64;
        if self.track {
            self.unsynced.extend_from_slice(written);
        }
        (written.len(), e)
    }

    /// Maps a tail covering the log from its end to at least `end`, extending the file.
    fn remap(&mut self, end: u64) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
        let start = self.size / page * page;
        let needed = (end - start).div_ceil(page) * page;
        let Some(file) = self.file.as_file() else {
            return Err(std::io::Error::other("only a real file can be mapped"));
        };
        let fd = file.as_raw_fd();
        // A full chunk when the disk has room, else exactly what this append needs.
        let mut len = needed.max(MAP_CHUNK);
        // SAFETY: fallocate on our own descriptor; mode 0 allocates and extends the file.
        while unsafe { libc::fallocate(fd, 0, start as libc::off_t, len as libc::off_t) } != 0 {
            let e = std::io::Error::last_os_error();
            if len > needed && e.raw_os_error() == Some(libc::ENOSPC) {
                len = needed;
                continue;
            }
            return Err(e);
        }
        self.unmap();
        // SAFETY: a shared read-write mapping of `len` bytes of our file from a page
        // boundary; the file is at least `start + len` long (fallocate above).
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                start as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        self.tail = Some(MappedTail { ptr: ptr as *mut u8, len: len as usize, start });
        Ok(())
    }

    fn unmap(&mut self) {
        if let Some(tail) = self.tail.take() {
            // SAFETY: the mapping `remap` made, no longer used.
            unsafe { libc::munmap(tail.ptr as *mut libc::c_void, tail.len) };
        }
    }

    /// Ends a mapped tail: unmapped, and the file cut back to the log's end (the zeros
    /// past it dropped), so the file is a plain AOF again for any reader.
    fn finish(&mut self) -> std::io::Result<()> {
        if self.tail.is_none() {
            return Ok(());
        }
        self.unmap();
        self.file.cut_to(self.size)
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// The writer of one open incremental file; offsets are logical (bytes ever appended).
pub struct AofWriter {
    pending: Mutex<Pending>,
    target: Mutex<Target>,
    /// A handle on the same file for fsyncs made outside `target`'s lock.
    sync_handle: Mutex<Box<dyn LogFile>>,
    appended: AtomicU64,
    written: AtomicU64,
    synced: AtomicU64,
    policy: AtomicU8,
    /// `aof-timestamp-enabled`: a `#TS:<unix seconds>` line before the first command of
    /// each second, as Redis's feedAppendOnlyFile writes (loaders skip it; redis-check-aof
    /// truncates a log at one).
    timestamps: AtomicBool,
    /// The last write or fsync error, until a later one succeeds (MISCONF while set).
    error: Mutex<Option<String>>,
    last_fsync_ms: AtomicU64,
}

impl AofWriter {
    pub fn new(file: File, size: u64, policy: FsyncPolicy) -> std::io::Result<Self> {
        Self::on(Box::new(file), size, policy)
    }

    /// A writer appending to `file`, which holds `size` bytes of log already.
    pub fn on(file: Box<dyn LogFile>, size: u64, policy: FsyncPolicy) -> std::io::Result<Self> {
        let sync_handle = file.another_handle()?;
        Ok(Self {
            pending: Mutex::new(Pending { buf: Vec::new(), selected_db: None, annotated_s: 0 }),
            timestamps: AtomicBool::new(false),
            target: Mutex::new(Target {
                file,
                size,
                mapped: false,
                tail: None,
                track: policy == FsyncPolicy::Always,
                unsynced: Vec::new(),
                synced_size: size,
                resync: false,
            }),
            sync_handle: Mutex::new(sync_handle),
            appended: AtomicU64::new(0),
            written: AtomicU64::new(0),
            synced: AtomicU64::new(0),
            policy: AtomicU8::new(policy as u8),
            error: Mutex::new(None),
            last_fsync_ms: AtomicU64::new(now_ms()),
        })
    }

    /// Appends go to a memory-mapped tail of the file (`MappedTail`) instead of `write`
    /// calls. The file must be open for reading too (a shared mapping needs it).
    pub fn set_mapped(&self, on: bool) {
        let mut target = self.target.lock();
        if !on {
            let _ = target.finish();
        }
        target.mapped = on;
        let always = self.policy() == FsyncPolicy::Always;
        target.set_tracking(always);
    }

    /// `aof-timestamp-enabled`.
    pub fn set_timestamps(&self, on: bool) {
        self.timestamps.store(on, Ordering::Relaxed);
    }

    pub fn set_policy(&self, policy: FsyncPolicy) {
        self.policy.store(policy as u8, Ordering::SeqCst);
        self.target.lock().set_tracking(policy == FsyncPolicy::Always);
    }

    pub fn policy(&self) -> FsyncPolicy {
        match self.policy.load(Ordering::SeqCst) {
            0 => FsyncPolicy::Always,
            1 => FsyncPolicy::EverySec,
            _ => FsyncPolicy::No,
        }
    }

    /// Buffers one write's effects (see `encode_effects`).
    pub fn append(&self, effects: &Effects) {
        let mut pending = self.pending.lock();
        let before = pending.buf.len();
        let Pending { buf, selected_db, annotated_s } = &mut *pending;
        if self.timestamps.load(Ordering::Relaxed) {
            let now_s = now_ms() / 1000;
            if now_s > *annotated_s {
                *annotated_s = now_s;
                buf.extend_from_slice(timestamp_annotation(now_s).as_bytes());
            }
        }
        encode_effects(effects, selected_db, buf);
        let added = (pending.buf.len() - before) as u64;
        self.appended.fetch_add(added, Ordering::SeqCst);
    }

    /// Whether a reply about to be sent may depend on writes not yet as durable as the
    /// policy promises (always: fsynced; otherwise: written to the kernel).
    pub fn behind(&self) -> bool {
        let appended = self.appended.load(Ordering::SeqCst);
        match self.policy() {
            FsyncPolicy::Always => self.synced.load(Ordering::SeqCst) < appended,
            _ => self.written.load(Ordering::SeqCst) < appended,
        }
    }

    /// How far the log goes: the end of everything appended so far (for `make_durable_upto`).
    pub fn position(&self) -> u64 {
        self.appended.load(Ordering::SeqCst)
    }

    /// Whether the log is not yet durable per the policy up to `position`.
    fn behind_of(&self, position: u64) -> bool {
        let durable = match self.policy() {
            FsyncPolicy::Always => self.synced.load(Ordering::SeqCst),
            _ => self.written.load(Ordering::SeqCst),
        };
        durable < position
    }

    /// Makes everything buffered so far durable per the policy. Threads arriving while
    /// another one writes wait for it and usually find their writes covered (group commit).
    pub fn make_durable(&self) -> Result<(), String> {
        self.make_durable_upto(self.position())
    }

    /// Makes the log durable up to `position` at least (a caller's own writes): a thread
    /// whose writes an fsync in progress covers returns once it is done, whatever others
    /// appended meanwhile (group commit across threads each waiting for their own write).
    ///
    /// An error means the log could not be written or fsynced under `always`: replies that
    /// may depend on those writes must wait (Redis exits there instead). Under `everysec`
    /// and `no` a failed write is kept for a retry and only refuses later writes (MISCONF),
    /// as in Redis; replies go out.
    pub fn make_durable_upto(&self, position: u64) -> Result<(), String> {
        if !self.behind_of(position) {
            return Ok(());
        }
        let mut target = self.target.lock();
        if !self.behind_of(position) {
            return Ok(());
        }
        let always = self.policy() == FsyncPolicy::Always;
        let (data, end) = {
            let mut pending = self.pending.lock();
            (std::mem::take(&mut pending.buf), self.appended.load(Ordering::SeqCst))
        };
        if let Err((kept, e)) = target.append(&data) {
            let message = format!("Error writing to the AOF file: {e}");
            self.fail(message.clone(), data, kept, end);
            return if always { Err(message) } else { Ok(()) };
        }
        self.written.store(end, Ordering::SeqCst);
        if always {
            if let Err(e) = target.sync() {
                let message = format!("Can't persist AOF for fsync error when the AOF fsync policy is 'always': {e}");
                *self.error.lock() = Some(message.clone());
                return Err(message);
            }
            self.synced.store(end, Ordering::SeqCst);
            self.last_fsync_ms.store(now_ms(), Ordering::SeqCst);
        }
        *self.error.lock() = None;
        Ok(())
    }

    /// A failed write: what of `data` (which ends at logical offset `end`) is not in the
    /// log goes back to the front of the buffer to be retried.
    fn fail(&self, message: String, mut data: Vec<u8>, kept: usize, end: u64) {
        if kept > 0 {
            self.written.store(end - (data.len() - kept) as u64, Ordering::SeqCst);
        }
        let mut pending = self.pending.lock();
        let mut restored = data.split_off(kept);
        restored.extend_from_slice(&pending.buf);
        pending.buf = restored;
        *self.error.lock() = Some(message);
    }

    /// The periodic duty (every 100 ms or so): write what is buffered, and with `everysec`
    /// fsync once a second (outside the write lock, so writers don't wait on the disk).
    pub fn tick(&self) {
        if self.behind() || self.written.load(Ordering::SeqCst) < self.appended.load(Ordering::SeqCst) {
            self.write_buffered();
        }
        if self.policy() == FsyncPolicy::EverySec && now_ms() >= self.last_fsync_ms.load(Ordering::SeqCst) + 1000 {
            self.fsync_now();
        }
    }

    /// Writes the buffer without fsync (whatever the policy).
    pub fn write_buffered(&self) {
        let mut target = self.target.lock();
        let (data, end) = {
            let mut pending = self.pending.lock();
            (std::mem::take(&mut pending.buf), self.appended.load(Ordering::SeqCst))
        };
        if data.is_empty() {
            return;
        }
        if let Err((kept, e)) = target.append(&data) {
            self.fail(format!("Error writing to the AOF file: {e}"), data, kept, end);
            return;
        }
        self.written.store(end, Ordering::SeqCst);
        *self.error.lock() = None;
    }

    /// fsyncs what has been written so far.
    pub fn fsync_now(&self) {
        let written = self.written.load(Ordering::SeqCst);
        if self.synced.load(Ordering::SeqCst) >= written {
            self.last_fsync_ms.store(now_ms(), Ordering::SeqCst);
            return;
        }
        let result = self.sync_handle.lock().sync_data();
        match result {
            Ok(()) => {
                self.synced.fetch_max(written, Ordering::SeqCst);
                self.last_fsync_ms.store(now_ms(), Ordering::SeqCst);
            }
            Err(e) => *self.error.lock() = Some(format!("Error fsyncing the AOF file: {e}")),
        }
    }

    /// Writes and fsyncs everything (before closing the file, at shutdown, before a rewrite).
    /// A mapped tail ends here (the file cut back to the log's end), so whatever reads
    /// the file next (a reload, a rewrite's rename) sees a plain AOF; later appends map a
    /// new one.
    pub fn flush_all(&self) -> Result<(), String> {
        self.write_buffered();
        if let Err(e) = self.target.lock().finish() {
            *self.error.lock() = Some(format!("Error cutting the AOF file to its end: {e}"));
        }
        self.fsync_now();
        match self.error.lock().clone() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    pub fn error(&self) -> Option<String> {
        self.error.lock().clone()
    }

    /// Bytes in the file plus those still buffered.
    pub fn size(&self) -> u64 {
        let written_size = self.target.lock().size;
        written_size + (self.appended.load(Ordering::SeqCst) - self.written.load(Ordering::SeqCst))
    }

    /// Bytes buffered and not yet written (INFO aof_buffer_length).
    pub fn buffered(&self) -> u64 {
        self.appended.load(Ordering::SeqCst) - self.written.load(Ordering::SeqCst)
    }

    pub fn pending_fsync(&self) -> bool {
        self.synced.load(Ordering::SeqCst) < self.written.load(Ordering::SeqCst)
    }
}

/// Appends one write's effects as a command stream (the AOF's and the replication
/// stream's format): SELECT when the database differs from `selected_db`, and MULTI/EXEC
/// around a transaction's or script's several commands, MULTI after the SELECT of the first
/// one (as Redis 7.0's feedAppendOnlyFile and propagatePendingCommands write them). The AOF
/// leaves out replicas-only commands (PUBLISH) but not the MULTI/EXEC they count toward.
pub fn encode_effects(effects: &Effects, selected_db: &mut Option<usize>, out: &mut Vec<u8>) {
    encode_ops(effects, false, selected_db, out);
}

/// As `encode_effects`, for the replication stream: replicas-only commands included.
pub fn encode_effects_for_replicas(effects: &Effects, selected_db: &mut Option<usize>, out: &mut Vec<u8>) {
    encode_ops(effects, true, selected_db, out);
}

fn encode_ops(effects: &Effects, replicas: bool, selected_db: &mut Option<usize>, out: &mut Vec<u8>) {
    let mut select = |db: usize, out: &mut Vec<u8>| {
        if *selected_db != Some(db) {
            quince_resp::encode_command(out, &[&b"SELECT"[..], db.to_string().as_bytes()]);
            *selected_db = Some(db);
        }
    };
    let wrap = effects.needs_wrap();
    if wrap {
        if let Some((db, _, _)) = effects.all_ops().next() {
            select(db, out);
        }
        quince_resp::encode_command(out, &[&b"MULTI"[..]]);
    }
    let target =
        if replicas { quince_engine::persistence::targets::REPLICAS } else { quince_engine::persistence::targets::AOF };
    for (db, command, to) in effects.all_ops() {
        if to & target == 0 {
            continue;
        }
        select(db, out);
        out.extend_from_slice(command);
    }
    if wrap {
        quince_resp::encode_command(out, &[&b"EXEC"[..]]);
    }
}

/// `#TS:<unix seconds>` and CRLF: an AOF timestamp annotation.
pub fn timestamp_annotation(unix_s: u64) -> String {
    format!("#TS:{unix_s}\r\n")
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_wraps_and_writes() {
        let dir = std::env::temp_dir().join(format!("quince-aof-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.aof");
        let writer = AofWriter::new(File::create(&path).unwrap(), 0, FsyncPolicy::Always).unwrap();
        let mut effects = Effects::default();
        effects.push(0, &["SET", "k", "v"]);
        writer.append(&effects);
        effects.clear();
        effects.atomic = true;
        effects.push(1, &["INCR", "n"]);
        effects.push(1, &["DEL", "k"]);
        writer.append(&effects);
        assert!(writer.behind());
        writer.make_durable().unwrap();
        assert!(!writer.behind());
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n\
             *2\r\n$6\r\nSELECT\r\n$1\r\n1\r\n*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n\
             *2\r\n$3\r\nDEL\r\n$1\r\nk\r\n*1\r\n$4\r\nEXEC\r\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_mapped_tail_appends_without_writes_and_is_cut_when_flushed() {
        let dir = std::env::temp_dir().join(format!("quince-aof-mapped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.aof");
        std::fs::write(&path, b"*1\r\n$4\r\nPING\r\n").unwrap();
        let file = std::fs::OpenOptions::new().read(true).append(true).open(&path).unwrap();
        let writer = AofWriter::new(file, 14, FsyncPolicy::EverySec).unwrap();
        writer.set_mapped(true);
        let mut effects = Effects::default();
        // Enough to cross a chunk: the tail is extended and mapped again on the way.
        let value = "v".repeat(1000);
        for i in 0..(2 * MAP_CHUNK as usize / 1000) {
            effects.clear();
            effects.push(0, &["SET", &format!("k{i}"), &value]);
            writer.append(&effects);
            writer.make_durable().unwrap();
            assert!(!writer.behind());
        }
        let logical = writer.size();
        // While open, the file runs past the log into reserved zeros, and the log is in it.
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.len() as u64 > logical, "{} bytes for a log of {logical}", bytes.len());
        assert!(bytes[logical as usize..].iter().all(|&b| b == 0));
        assert!(
            bytes.starts_with(b"*1\r\n$4\r\nPING\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$2\r\nk0\r\n")
        );
        let mut file = File::open(&path).unwrap();
        assert_eq!(crate::aof::load::logical_end(&mut file, 0, bytes.len() as u64).unwrap(), logical);
        // Flushed: cut to the log's end; appends after that map a new tail.
        writer.flush_all().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), logical);
        effects.clear();
        effects.push(0, &["DEL", "k0"]);
        writer.append(&effects);
        writer.make_durable().unwrap();
        drop(writer);
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.ends_with(b"*2\r\n$3\r\nDEL\r\n$2\r\nk0\r\n"), "dropping the writer cuts the tail");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file whose next fsync fails and, as Linux may, drops the dirty pages: a crash
    /// finds zeros where they were, even after a later fsync succeeded.
    #[derive(Default)]
    struct Dropping {
        written: Vec<u8>,
        durable: Vec<u8>,
        fail_next_sync: bool,
        dropped: Option<(usize, usize)>,
    }

    #[derive(Clone, Default)]
    struct DroppingFile(std::sync::Arc<Mutex<Dropping>>);

    impl LogFile for DroppingFile {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.0.lock().written.extend_from_slice(data);
            Ok(data.len())
        }
        fn cut_to(&mut self, len: u64) -> std::io::Result<()> {
            let mut f = self.0.lock();
            f.written.truncate(len as usize);
            f.durable.truncate(len as usize);
            if f.dropped.is_some_and(|(from, _)| from >= len as usize) {
                f.dropped = None;
            }
            Ok(())
        }
        fn sync_data(&mut self) -> std::io::Result<()> {
            let mut f = self.0.lock();
            if std::mem::take(&mut f.fail_next_sync) {
                f.dropped = Some((f.durable.len(), f.written.len()));
                return Err(std::io::Error::from_raw_os_error(5));
            }
            let mut image = f.written.clone();
            if let Some((from, to)) = f.dropped {
                let to = to.min(image.len());
                image[from..to].fill(0);
            }
            f.durable = image;
            Ok(())
        }
        fn another_handle(&self) -> std::io::Result<Box<dyn LogFile>> {
            Ok(Box::new(self.clone()))
        }
    }

    #[test]
    fn after_a_failed_fsync_under_always_the_unsynced_writes_are_written_again() {
        let file = DroppingFile::default();
        let writer = AofWriter::on(Box::new(file.clone()), 0, FsyncPolicy::Always).unwrap();
        let mut effects = Effects::default();
        effects.push(0, &["SET", "a", "1"]);
        writer.append(&effects);
        writer.make_durable().unwrap();
        file.0.lock().fail_next_sync = true;
        effects.clear();
        effects.push(0, &["SET", "b", "2"]);
        writer.append(&effects);
        assert!(writer.make_durable().is_err(), "the reply waits");
        effects.clear();
        effects.push(0, &["SET", "c", "3"]);
        writer.append(&effects);
        writer.make_durable().unwrap();
        let f = file.0.lock();
        assert_eq!(f.durable, f.written, "what the fsync that succeeded covers is on the disk");
        let text = String::from_utf8(f.durable.clone()).unwrap();
        assert!(text.ends_with("$1\r\nb\r\n$1\r\n2\r\n*3\r\n$3\r\nSET\r\n$1\r\nc\r\n$1\r\n3\r\n"), "{text:?}");
        assert_eq!(text.matches("SET").count(), 3, "each write once: {text:?}");
    }

    #[test]
    fn replicas_only_commands_skip_the_aof_but_count_for_the_wrap() {
        let mut effects = Effects::default();
        effects.atomic = true;
        effects.push(0, &["SET", "k", "v"]);
        effects.push_for_replicas(0, &["PUBLISH", "ch", "m"]);
        let (mut aof, mut replica) = (Vec::new(), Vec::new());
        encode_effects(&effects, &mut None, &mut aof);
        encode_effects_for_replicas(&effects, &mut None, &mut replica);
        let select = "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n";
        let (multi, exec) = ("*1\r\n$5\r\nMULTI\r\n", "*1\r\n$4\r\nEXEC\r\n");
        let set = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
        let publish = "*3\r\n$7\r\nPUBLISH\r\n$2\r\nch\r\n$1\r\nm\r\n";
        assert_eq!(String::from_utf8(aof).unwrap(), format!("{select}{multi}{set}{exec}"));
        assert_eq!(String::from_utf8(replica).unwrap(), format!("{select}{multi}{set}{publish}{exec}"));
    }
}
