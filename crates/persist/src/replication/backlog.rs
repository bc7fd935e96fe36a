//! The replication backlog: the last `repl-backlog-size` bytes of the replication stream,
//! so a replica that lost its link for a moment continues from its offset (PSYNC) instead
//! of loading the whole dataset again.

/// A ring of the stream's most recent bytes. Offsets are stream offsets: the first byte
/// ever fed to a new backlog is `start_offset` (Redis's `master_repl_offset + 1`).
#[derive(Debug)]
pub struct Backlog {
    ring: Vec<u8>,
    /// Where the next byte goes in `ring`.
    head: usize,
    /// Bytes held (at most `ring.len()`).
    held: usize,
    /// Stream offset of the byte after the last one held.
    end_offset: u64,
}

impl Backlog {
    /// An empty backlog of `size` bytes whose next byte has stream offset `next_offset`.
    pub fn new(size: usize, next_offset: u64) -> Backlog {
        Backlog { ring: vec![0; size.max(1)], head: 0, held: 0, end_offset: next_offset }
    }

    pub fn size(&self) -> usize {
        self.ring.len()
    }

    /// Bytes held (INFO's `repl_backlog_histlen`).
    pub fn held(&self) -> usize {
        self.held
    }

    /// Stream offset of the oldest byte held (INFO's `repl_backlog_first_byte_offset`).
    pub fn first_offset(&self) -> u64 {
        self.end_offset - self.held as u64
    }

    pub fn feed(&mut self, mut bytes: &[u8]) {
        let size = self.ring.len();
        self.end_offset += bytes.len() as u64;
        if bytes.len() >= size {
            bytes = &bytes[bytes.len() - size..];
            self.ring.copy_from_slice(bytes);
            self.head = 0;
            self.held = size;
            return;
        }
        let first = (size - self.head).min(bytes.len());
        self.ring[self.head..self.head + first].copy_from_slice(&bytes[..first]);
        self.ring[..bytes.len() - first].copy_from_slice(&bytes[first..]);
        self.head = (self.head + bytes.len()) % size;
        self.held = (self.held + bytes.len()).min(size);
    }

    /// The bytes from stream offset `from` to the end, if the backlog still holds them all
    /// (`from` may be the end itself: nothing to send).
    pub fn since(&self, from: u64) -> Option<Vec<u8>> {
        if from < self.first_offset() || from > self.end_offset {
            return None;
        }
        let count = (self.end_offset - from) as usize;
        let size = self.ring.len();
        let start = (self.head + size - count) % size;
        let mut out = Vec::with_capacity(count);
        let first = (size - start).min(count);
        out.extend_from_slice(&self.ring[start..start + first]);
        out.extend_from_slice(&self.ring[..count - first]);
        Some(out)
    }

    /// The stream held continues one `delta` bytes longer than this backlog knew (a master
    /// restarting from its snapshot): every offset moves up by `delta`.
    pub fn rebase(&mut self, delta: u64) {
        self.end_offset += delta;
    }

    /// A new size (CONFIG SET repl-backlog-size): the newest bytes are kept.
    pub fn resize(&mut self, size: usize) {
        let held = self.since(self.first_offset()).unwrap_or_default();
        let end = self.end_offset;
        *self = Backlog::new(size, end - held.len() as u64);
        self.feed(&held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_bytes_across_wraps() {
        let mut backlog = Backlog::new(10, 1);
        let mut stream = Vec::new();
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnop", b"q", b"0123456789ABCDEF"] {
            backlog.feed(chunk);
            stream.extend_from_slice(chunk);
            let end = 1 + stream.len() as u64;
            assert_eq!(backlog.held(), stream.len().min(10));
            assert_eq!(backlog.first_offset(), end - backlog.held() as u64);
            for from in backlog.first_offset()..=end {
                let want = &stream[(from - 1) as usize..];
                assert_eq!(backlog.since(from).as_deref(), Some(want), "from {from}");
            }
            assert_eq!(backlog.since(backlog.first_offset().wrapping_sub(1)), None);
            assert_eq!(backlog.since(end + 1), None);
        }
        backlog.resize(4);
        assert_eq!(backlog.since(backlog.first_offset()).unwrap(), b"CDEF");
        backlog.resize(8);
        backlog.feed(b"xy");
        assert_eq!(backlog.since(backlog.first_offset()).unwrap(), b"CDEFxy");
    }
}
