//! A simulated disk holding one log file. It keeps two images: what was written (the page
//! cache, which reads see) and what is durable (what an fsync put on the platters). The
//! seed decides every fault: short writes and a full disk, failing fsyncs (which may drop
//! the dirty pages, as Linux does: a later fsync then succeeds without them), and what a
//! crash keeps of the data that was never fsynced (nothing, a prefix, a prefix and then
//! zeros where the file grew but its data did not reach the disk).

use std::sync::Arc;

use parking_lot::Mutex;
use quince_persist::aof::writer::LogFile;
use rand::RngExt;
use rand_xorshift::XorShiftRng;

/// How often each fault strikes (probabilities per call).
#[derive(Debug, Clone, Copy)]
pub struct Faults {
    /// A write finds the disk full: part of it (maybe none) is written, then the next few
    /// writes fail with ENOSPC.
    pub full_disk: f64,
    /// An fsync fails with EIO.
    pub fsync_error: f64,
    /// A failed fsync dropped the dirty pages (they read back, but never reach the disk).
    pub drop_on_fsync_error: f64,
}

impl Faults {
    pub fn none() -> Faults {
        Faults { full_disk: 0.0, fsync_error: 0.0, drop_on_fsync_error: 0.0 }
    }
}

/// What a crash does to data written but not fsynced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crash {
    /// The process died; the kernel keeps the page cache (pages whose writeback failed are
    /// still lost).
    Process,
    /// The machine lost power: only what fsync made durable is sure; the seed decides how
    /// much of the rest the writeback had already put on the disk.
    Power,
}

struct State {
    rng: XorShiftRng,
    faults: Faults,
    written: Vec<u8>,
    durable: Vec<u8>,
    /// Byte ranges of `written` whose pages a failed fsync dropped: a crash finds zeros
    /// there (the blocks were allocated but never got the data).
    lost: Vec<(usize, usize)>,
    /// Writes still to fail with ENOSPC.
    full_for: u32,
    trace: Vec<String>,
}

impl State {
    /// `written` as the disk would hold it: dropped ranges are zeros.
    fn on_disk(&self, upto: usize) -> Vec<u8> {
        let mut image = self.written[..upto].to_vec();
        for &(from, to) in &self.lost {
            let (from, to) = (from.min(upto), to.min(upto));
            image[from..to].fill(0);
        }
        image
    }
}

/// A handle on the simulated file (every handle sees the same file).
#[derive(Clone)]
pub struct SimFile(Arc<Mutex<State>>);

impl SimFile {
    /// A file holding `content`, durable already (what a restart found and kept).
    pub fn new(content: Vec<u8>, faults: Faults, rng: XorShiftRng) -> SimFile {
        SimFile(Arc::new(Mutex::new(State {
            rng,
            faults,
            durable: content.clone(),
            written: content,
            lost: Vec::new(),
            full_for: 0,
            trace: Vec::new(),
        })))
    }

    /// The file a crash leaves.
    pub fn crash(&self, how: Crash) -> Vec<u8> {
        let mut s = self.0.lock();
        let written = s.written.len();
        let durable = s.durable.len().min(written);
        let kept = match how {
            Crash::Process => written,
            Crash::Power => match s.rng.random_range(0..3) {
                0 => durable,
                _ => s.rng.random_range(durable..=written),
            },
        };
        let mut image = s.on_disk(kept);
        // The durable image wins where it exists (a dropped range stays zero only past it).
        image[..durable].copy_from_slice(&s.durable[..durable]);
        if how == Crash::Power && kept < written && s.rng.random_bool(0.3) {
            // The file's new size reached the disk, its data not.
            let grown = s.rng.random_range(kept..=written);
            image.resize(grown, 0);
        }
        let line = format!("crash ({how:?}): {} bytes written, {durable} durable, {} kept", written, image.len());
        s.trace.push(line);
        image
    }

    /// Bytes written so far (the page cache's view).
    pub fn len(&self) -> u64 {
        self.0.lock().written.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The faults and crashes so far, in order.
    pub fn take_trace(&self) -> Vec<String> {
        std::mem::take(&mut self.0.lock().trace)
    }
}

impl LogFile for SimFile {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let mut s = self.0.lock();
        let full = || std::io::Error::from_raw_os_error(28); // ENOSPC
        if s.full_for > 0 {
            s.full_for -= 1;
            return Err(full());
        }
        let faults = s.faults;
        if !data.is_empty() && s.rng.random_bool(faults.full_disk) {
            let part = s.rng.random_range(0..data.len());
            s.full_for = s.rng.random_range(1..4);
            let line = format!("disk full: {part} of {} bytes written, {} writes will fail", data.len(), s.full_for);
            s.trace.push(line);
            s.written.extend_from_slice(&data[..part]);
            return if part == 0 { Err(full()) } else { Ok(part) };
        }
        s.written.extend_from_slice(data);
        Ok(data.len())
    }

    fn cut_to(&mut self, len: u64) -> std::io::Result<()> {
        let mut s = self.0.lock();
        let len = len as usize;
        s.written.resize(len, 0);
        s.durable.truncate(len);
        s.lost.retain_mut(|r| {
            r.1 = r.1.min(len);
            r.0 < r.1
        });
        Ok(())
    }

    fn sync_data(&mut self) -> std::io::Result<()> {
        let mut s = self.0.lock();
        let faults = s.faults;
        if s.rng.random_bool(faults.fsync_error) {
            let dropped = s.rng.random_bool(faults.drop_on_fsync_error);
            let from = s.durable.len().min(s.written.len());
            let to = s.written.len();
            if dropped && from < to {
                s.lost.push((from, to));
            }
            let line = format!(
                "fsync failed (EIO){}",
                if dropped { format!(", bytes {from}..{to} dropped") } else { String::new() }
            );
            s.trace.push(line);
            return Err(std::io::Error::from_raw_os_error(5));
        }
        let all = s.written.len();
        s.durable = s.on_disk(all);
        Ok(())
    }

    fn another_handle(&self) -> std::io::Result<Box<dyn LogFile>> {
        Ok(Box::new(self.clone()))
    }
}
