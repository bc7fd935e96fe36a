//! Loading the append-only file: the base (an RDB file or commands), then each incremental
//! file's commands, replayed through the engine as Redis's loadSingleAppendOnlyFile does,
//! including its handling of torn tails (`aof-load-truncated`).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use quince_engine::{Engine, NullSink};

/// How loading one file ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOutcome {
    Loaded,
    Empty,
    /// A torn tail was cut off (only allowed for the last file).
    Truncated,
}

/// What a caller needs to log progress: bytes read so far of this file.
pub type Progress<'a> = &'a mut dyn FnMut(u64);

/// Why loading stopped. The text is the log line Redis writes for the same case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

/// Replays one file of commands (not an RDB) into the engine. `last`: this is the last file,
/// whose torn tail may be cut when `truncate_ok`.
pub fn load_command_file(
    engine: &Engine,
    path: &Path,
    last: bool,
    truncate_ok: bool,
    log: &mut dyn FnMut(&str),
    progress: Progress<'_>,
) -> Result<FileOutcome, LoadError> {
    load_commands_from(engine, path, 0, last, truncate_ok, log, progress)
}

/// `load_command_file` from byte `start` on: the commands after an RDB preamble (a Redis 6
/// AOF, or a base file with a tail), as Redis's loadSingleAppendOnlyFile reads on after it.
pub fn load_commands_from(
    engine: &Engine,
    path: &Path,
    start: u64,
    last: bool,
    truncate_ok: bool,
    log: &mut dyn FnMut(&str),
    progress: Progress<'_>,
) -> Result<FileOutcome, LoadError> {
    use std::io::{Seek, SeekFrom};
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut file = File::open(path)
        .map_err(|e| LoadError(format!("Fatal error: can't open the append log file {name} for reading: {e}")))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    // A log written through a memory map (the embedded library's) that was not closed
    // ends with zeros its writer had reserved: no part of the log, read up to them only.
    let end = logical_end(&mut file, start, len)
        .map_err(|e| LoadError(format!("Unrecoverable error reading the append only file {name}: {e}")))?;
    if end <= start {
        cut_zero_tail(path, &name, end, len, log)?;
        return Ok(FileOutcome::Empty);
    }
    file.seek(SeekFrom::Start(start))
        .map_err(|e| LoadError(format!("Unrecoverable error reading the append only file {name}: {e}")))?;
    let mut reader = CommandReader::new(BufReader::with_capacity(1 << 16, file.take(end - start)));
    reader.offset = start;
    let mut client = engine.new_client();
    // The loading client runs every command as part of a transaction already under way:
    // no gate (loading owns the dataset), and blocking commands never block.
    client.in_exec = true;
    // It applies logged effects: no lazy expiry, past times kept (the log's DELs decide).
    client.must_obey = true;
    let mut sink = NullSink(quince_resp::Protocol::Resp2);
    let mut valid_up_to = start;
    let mut valid_before_multi = start;
    let mut queued: Option<Vec<Vec<Vec<u8>>>> = None;
    let mut last_progress = start;
    loop {
        let command = match reader.next_command() {
            Ok(Some(command)) => command,
            Ok(None) => break,
            // Torn inside a transaction: cut before its MULTI (Redis cuts after the last
            // whole command, leaving a MULTI open that swallows the next appends).
            Err(ReadError::Eof) if queued.is_some() => {
                log(&format!("Revert incomplete MULTI/EXEC transaction in AOF file {name}"));
                return torn_tail(path, &name, valid_before_multi, last, truncate_ok, log);
            }
            Err(ReadError::Eof) => return torn_tail(path, &name, valid_up_to, last, truncate_ok, log),
            Err(ReadError::Format) => {
                return Err(LoadError(format!(
                    "Bad file format reading the append only file {name}: make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>"
                )))
            }
            Err(ReadError::Io(e)) => {
                return Err(LoadError(format!("Unrecoverable error reading the append only file {name}: {e}")))
            }
        };
        let args: Vec<&[u8]> = command.iter().map(|a| &a[..]).collect();
        if !matches!(engine.table.resolve(&args), quince_engine::command::Resolved::Found(_)) {
            return Err(LoadError(format!(
                "Unknown command '{}' reading the append only file {name}",
                String::from_utf8_lossy(args[0])
            )));
        }
        if args[0].eq_ignore_ascii_case(b"multi") {
            valid_before_multi = valid_up_to;
            queued = Some(Vec::new());
        } else if args[0].eq_ignore_ascii_case(b"exec") {
            for command in queued.take().unwrap_or_default() {
                let args: Vec<&[u8]> = command.iter().map(|a| &a[..]).collect();
                engine.execute(&mut client, &args, &mut sink);
            }
        } else if let Some(queue) = queued.as_mut() {
            queue.push(command);
        } else {
            engine.execute(&mut client, &args, &mut sink);
        }
        valid_up_to = reader.offset;
        if reader.offset - last_progress >= 1 << 20 {
            progress(reader.offset - last_progress);
            last_progress = reader.offset;
        }
    }
    progress(reader.offset - last_progress);
    if queued.is_some() {
        log(&format!("Revert incomplete MULTI/EXEC transaction in AOF file {name}"));
        return torn_tail(path, &name, valid_before_multi, last, truncate_ok, log);
    }
    cut_zero_tail(path, &name, end, len, log)?;
    Ok(FileOutcome::Loaded)
}

/// Cuts a file's zero tail (`logical_end` is `end`, short of `len`), once what comes
/// before it loaded, so appends go on from the log's real end.
fn cut_zero_tail(path: &Path, name: &str, end: u64, len: u64, log: &mut dyn FnMut(&str)) -> Result<(), LoadError> {
    if end >= len {
        return Ok(());
    }
    log(&format!(
        "AOF {name}: ignoring {} zero bytes after offset {end} (the unused end of a log written through a memory map)",
        len - end
    ));
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| {
            f.set_len(end)?;
            f.sync_all()
        })
        .map_err(|e| LoadError(format!("Error truncating the AOF file {name}: {e}")))
}

/// Where a command file's content ends: past its last non-zero byte at or after `start`
/// (`len` when it does not end with a zero, as no complete command does: each ends with
/// CRLF).
pub fn logical_end(file: &mut File, start: u64, len: u64) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut end = len;
    let mut block = vec![0u8; 1 << 16];
    while end > start {
        let from = end.saturating_sub(block.len() as u64).max(start);
        let chunk = &mut block[..(end - from) as usize];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(chunk)?;
        if let Some(last) = chunk.iter().rposition(|&b| b != 0) {
            return Ok(from + last as u64 + 1);
        }
        end = from;
    }
    Ok(end)
}

/// An unexpected end of file: cut it at the last complete command if allowed.
fn torn_tail(
    path: &Path,
    name: &str,
    valid_up_to: u64,
    last: bool,
    truncate_ok: bool,
    log: &mut dyn FnMut(&str),
) -> Result<FileOutcome, LoadError> {
    if truncate_ok {
        log(&format!("!!! Warning: short read while loading the AOF file {name}!!!"));
        log(&format!("!!! Truncating the AOF {name} at offset {valid_up_to} !!!"));
        let cut = std::fs::OpenOptions::new().write(true).open(path).and_then(|f| {
            f.set_len(valid_up_to)?;
            f.sync_all()
        });
        match cut {
            Err(e) => log(&format!("Error truncating the AOF file {name}: {e}")),
            Ok(()) if !last => {
                return Err(LoadError(format!("Fatal error: the truncated file is not the last file (AOF {name})")))
            }
            Ok(()) => {
                log(&format!("AOF {name} loaded anyway because aof-load-truncated is enabled"));
                return Ok(FileOutcome::Truncated);
            }
        }
    }
    Err(LoadError(format!(
        "Unexpected end of file reading the append only file {name}. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."
    )))
}

/// Whether a file starts like an RDB (an RDB-format base or preamble).
pub fn is_rdb(path: &Path) -> std::io::Result<bool> {
    let mut head = [0u8; 5];
    let mut file = File::open(path)?;
    let mut got = 0;
    while got < 5 {
        match file.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got == 5 && &head == b"REDIS")
}

enum ReadError {
    /// The file ended inside a command.
    Eof,
    Format,
    Io(std::io::Error),
}

/// Reads RESP multibulk commands, tracking the offset of the end of the last one.
struct CommandReader<R> {
    reader: R,
    offset: u64,
    line: Vec<u8>,
}

/// The longest argument accepted while loading (Redis's proto-max-bulk-len ceiling).
const MAX_ARG_LEN: u64 = 1 << 40;

impl<R: BufRead> CommandReader<R> {
    fn new(reader: R) -> Self {
        Self { reader, offset: 0, line: Vec::new() }
    }

    /// The next command; None at a clean end of file.
    fn next_command(&mut self) -> Result<Option<Vec<Vec<u8>>>, ReadError> {
        let mut consumed = 0u64;
        let header = loop {
            let Some(line) = self.read_line(&mut consumed, true)? else { return Ok(None) };
            // Annotations (`#TS:...`) are skipped, as Redis does.
            if line.first() == Some(&b'#') {
                self.offset += consumed;
                consumed = 0;
                continue;
            }
            break line;
        };
        if header.first() != Some(&b'*') {
            return Err(ReadError::Format);
        }
        let argc = c_strtol(&header[1..]);
        if argc < 1 {
            return Err(ReadError::Format);
        }
        let argc = argc as u64;
        let mut args = Vec::with_capacity(argc.min(1024) as usize);
        for _ in 0..argc {
            let line = self.read_line(&mut consumed, false)?.ok_or(ReadError::Eof)?;
            if line.first() != Some(&b'$') {
                return Err(ReadError::Format);
            }
            let len = c_strtol(&line[1..]);
            if !(0..=MAX_ARG_LEN as i64).contains(&len) {
                return Err(ReadError::Format);
            }
            let len = len as u64;
            let mut arg = Vec::new();
            let got = (&mut self.reader).take(len).read_to_end(&mut arg).map_err(ReadError::Io)?;
            if (got as u64) < len {
                return Err(ReadError::Eof);
            }
            let mut crlf = [0u8; 2];
            read_exact_or_eof(&mut self.reader, &mut crlf)?;
            consumed += len + 2;
            args.push(arg);
        }
        self.offset += consumed;
        Ok(Some(args))
    }

    /// One line without its CRLF. At a clean end of file (nothing read) returns None when
    /// `eof_ok`, else the EOF error.
    fn read_line(&mut self, consumed: &mut u64, eof_ok: bool) -> Result<Option<Vec<u8>>, ReadError> {
        self.line.clear();
        let n = self.reader.read_until(b'\n', &mut self.line).map_err(ReadError::Io)?;
        if n == 0 {
            return if eof_ok { Ok(None) } else { Err(ReadError::Eof) };
        }
        if self.line.last() != Some(&b'\n') {
            return Err(ReadError::Eof);
        }
        *consumed += n as u64;
        let mut line = std::mem::take(&mut self.line);
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(Some(line))
    }
}

fn read_exact_or_eof(reader: &mut impl Read, buf: &mut [u8]) -> Result<(), ReadError> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => return Err(ReadError::Eof),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
    Ok(())
}

/// A length as C's strtol reads it, which is what Redis's loader uses: leading blanks and
/// a sign allowed, digits up to the first other byte, 0 when there are none (saturating).
fn c_strtol(text: &[u8]) -> i64 {
    let mut rest = text;
    while let [b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c, tail @ ..] = rest {
        rest = tail;
    }
    let negative = rest.first() == Some(&b'-');
    if matches!(rest.first(), Some(b'-' | b'+')) {
        rest = &rest[1..];
    }
    let mut value: i64 = 0;
    for &b in rest.iter().take_while(|b| b.is_ascii_digit()) {
        value = value.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if negative {
        -value
    } else {
        value
    }
}
