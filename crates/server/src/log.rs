//! Log lines in redis-server's format: `pid:role dd Mon yyyy hh:mm:ss.mmm <level> message`.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use std::sync::Mutex;

/// Where log lines go: stdout when `logfile ""` (the default, as redis-server) or the
/// `logfile` directive's file.
static SINK: OnceLock<Mutex<Box<dyn Write + Send>>> = OnceLock::new();
/// Lines below this level are dropped (`loglevel`: debug/verbose = 0, notice = 1, warning = 2).
static MIN_LEVEL: AtomicU8 = AtomicU8::new(1);
/// The descriptor log lines go to, for the crash report (written with plain `write(2)`
/// calls from a signal handler, where the sink's lock may be held by the crashing thread).
static LOG_FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(1);

/// The log's file descriptor (stdout unless `logfile` names a file).
pub fn fd() -> i32 {
    LOG_FD.load(Ordering::Relaxed)
}

pub fn init(logfile: &str, loglevel: &str) -> std::io::Result<()> {
    MIN_LEVEL.store(
        match loglevel {
            "debug" | "verbose" => 0,
            "warning" => 2,
            _ => 1,
        },
        Ordering::Relaxed,
    );
    let sink: Box<dyn Write + Send> = if logfile.is_empty() {
        Box::new(std::io::stdout())
    } else {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(logfile)?;
        LOG_FD.store(std::os::fd::AsRawFd::as_raw_fd(&file), Ordering::Relaxed);
        Box::new(file)
    };
    let _ = SINK.set(Mutex::new(sink));
    Ok(())
}

#[derive(Clone, Copy)]
pub enum Level {
    Verbose,
    Notice,
    Warning,
}

/// The role letter of log lines: `M` for a master, `S` for a replica (as Redis).
static ROLE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(b'M');

/// The server's replication role changed (its cron keeps this up to date).
pub fn set_replica(replica: bool) {
    ROLE.store(if replica { b'S' } else { b'M' }, Ordering::Relaxed);
}

fn role() -> char {
    ROLE.load(Ordering::Relaxed) as char
}

pub fn log(level: Level, message: &str) {
    if (level as u8) < MIN_LEVEL.load(Ordering::Relaxed) {
        return;
    }
    let mark = match level {
        Level::Verbose => '-',
        Level::Notice => '*',
        Level::Warning => '#',
    };
    raw(&format!("{}:{} {} {} {}\n", std::process::id(), role(), timestamp(), mark, message));
}

/// Writes `text` as is (the start-up banner), where log lines go.
pub fn raw(text: &str) {
    let line = text;
    match SINK.get() {
        Some(sink) => {
            let mut sink = sink.lock().unwrap_or_else(|e| e.into_inner());
            let _ = sink.write_all(line.as_bytes());
            let _ = sink.flush();
        }
        None => print!("{line}"),
    }
}

/// A log line's prefix (`pid:M dd Mon yyyy hh:mm:ss.mmm # `) written into `out` without
/// allocating (for the crash report).
pub fn write_prefix(out: &mut dyn std::fmt::Write) {
    let _ = write!(out, "{}:{} ", std::process::id(), role());
    write_timestamp(out);
    let _ = out.write_str(" # ");
}

/// `22 Nov 2026 22:28:29.123` in UTC.
fn timestamp() -> String {
    let mut text = String::with_capacity(24);
    write_timestamp(&mut text);
    text
}

/// The time as log lines show it, written into `out` without allocating.
fn write_timestamp(out: &mut dyn std::fmt::Write) {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let (year, month, day) = civil_from_days(days);
    let _ = write!(
        out,
        "{:02} {} {} {:02}:{:02}:{:02}.{:03}",
        day,
        MONTHS[(month - 1) as usize],
        year,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_millis()
    );
}

/// Days since 1970-01-01 to (year, month, day), Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20_414), (2025, 11, 22));
    }
}
