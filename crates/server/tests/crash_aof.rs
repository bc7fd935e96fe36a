//! Crash safety of the append-only file: writers run against quince, the server is killed
//! with SIGKILL at random moments and restarted on the same directory, and every write that
//! was acknowledged must be there, exactly once, with nothing that was never sent.
//!
//! `QUINCE_CRASH_CYCLES=200 cargo test -p quince-server --test crash_aof --release` runs the
//! longer version.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quince_test_util::{encode_command, ServerProcess};

const WRITERS: usize = 4;

/// A client that reports a dead server instead of panicking.
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    fn connect(port: u16) -> Option<Conn> {
        let stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        Some(Conn { reader: BufReader::new(stream.try_clone().ok()?), writer: stream })
    }

    /// Sends one command and reads one reply line (integer, status or error replies only).
    fn call(&mut self, args: &[&str]) -> Option<String> {
        self.writer.write_all(&encode_command(args)).ok()?;
        self.read_line()
    }

    fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end().to_string()),
        }
    }

    /// LRANGE key 0 -1 as integers.
    fn list(&mut self, key: &str) -> Vec<u64> {
        self.writer.write_all(&encode_command(&["LRANGE", key, "0", "-1"])).unwrap();
        let header = self.read_line().expect("reply");
        let n: usize = header[1..].parse().expect("array length");
        (0..n)
            .map(|_| {
                self.read_line().expect("bulk header");
                self.read_line().expect("bulk").parse().expect("integer element")
            })
            .collect()
    }

    fn get_int(&mut self, key: &str) -> u64 {
        self.writer.write_all(&encode_command(&["GET", key])).unwrap();
        let header = self.read_line().expect("reply");
        if header == "$-1" {
            return 0;
        }
        self.read_line().expect("bulk").parse().expect("integer")
    }
}

/// What one writer knows: the next element to push, how many pushes were acknowledged,
/// and when each acknowledgement arrived.
#[derive(Default, Clone)]
struct Progress {
    next: u64,
    acked: u64,
    ack_times: Vec<Instant>,
}

/// Element `i` of writer `t` goes to `list:t`; every fifth one through a script that also
/// counts it in `cnt:t` (so a script's two writes must survive together or not at all), and
/// every seventh in MULTI/EXEC with the same counter.
fn push(conn: &mut Conn, t: usize, i: u64) -> Option<()> {
    let list = format!("list:{t}");
    let counter = format!("cnt:{t}");
    let value = i.to_string();
    let reply = if i.is_multiple_of(5) {
        conn.call(&[
            "EVAL",
            "redis.call('rpush', KEYS[1], ARGV[1]); return redis.call('incr', KEYS[2])",
            "2",
            &list,
            &counter,
            &value,
        ])?
    } else if i.is_multiple_of(7) {
        conn.call(&["MULTI"])?;
        conn.call(&["RPUSH", &list, &value])?;
        conn.call(&["INCR", &counter])?;
        let header = conn.call(&["EXEC"])?;
        if header != "*2" {
            return None;
        }
        conn.read_line()?;
        conn.read_line()?
    } else {
        conn.call(&["RPUSH", &list, &value])?
    };
    reply.starts_with(':').then_some(())
}

fn counted(i: u64) -> bool {
    i.is_multiple_of(5) || i.is_multiple_of(7)
}

/// Checks the restarted server against what the writers saw; returns where each resumes.
fn verify(port: u16, progress: &[Progress], kill_at: Instant, max_loss: Option<Duration>) -> Vec<u64> {
    let mut conn = Conn::connect(port).expect("connect after restart");
    // Clients are accepted while the AOF loads; they get -LOADING until it is done.
    let deadline = Instant::now() + Duration::from_secs(60);
    while conn.call(&["PING"]).is_some_and(|r| r.starts_with("-LOADING")) {
        assert!(Instant::now() < deadline, "still loading after a minute");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut resume = Vec::new();
    for (t, p) in progress.iter().enumerate() {
        let items = conn.list(&format!("list:{t}"));
        let len = items.len() as u64;
        // Exactly the elements 0..len, in order: nothing lost in the middle, nothing twice.
        assert!(items.iter().copied().eq(0..len), "writer {t}: list is not 0..{len}: {items:?}");
        // Nothing that was never sent (at most the one in flight beyond the acknowledged).
        assert!(len <= p.next, "writer {t}: {len} elements but only {} were sent", p.next);
        match max_loss {
            // appendfsync always: every acknowledged write is there.
            None => assert!(len >= p.acked, "writer {t}: {} acknowledged but only {len} survived", p.acked),
            // everysec: only writes acknowledged in the last moments may be gone.
            Some(window) => {
                let lost_before = p.ack_times.iter().take_while(|at| **at + window < kill_at).count() as u64;
                assert!(
                    len >= lost_before,
                    "writer {t}: writes acknowledged over {window:?} before the kill were lost"
                );
            }
        }
        // The script's and the transaction's two writes survived together.
        let expected = (0..len).filter(|i| counted(*i)).count() as u64;
        assert_eq!(conn.get_int(&format!("cnt:{t}")), expected, "writer {t}: counter out of step with its list");
        resume.push(len);
    }
    resume
}

fn start(dir: &Path, fsync: &str) -> ServerProcess {
    let binary = Path::new(env!("CARGO_BIN_EXE_quince-server"));
    let dir = dir.to_str().unwrap();
    let log = format!("{dir}/quince.log");
    let args = [
        "--save",
        "",
        "--appendonly",
        "yes",
        "--appendfsync",
        fsync,
        "--dir",
        dir,
        "--threads",
        "2",
        "--logfile",
        &log,
        "--aof-use-rdb-preamble",
        "no",
    ];
    ServerProcess::spawn("quince", binary, &args).expect("quince-server starts")
}

fn crash_cycles(fsync: &str, cycles: usize, max_loss: Option<Duration>) {
    let dir = std::env::temp_dir().join(format!("quince-crash-{fsync}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut progress = vec![Progress::default(); WRITERS];
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut total_acked = 0u64;
    let mut last_kill: Option<Instant> = None;
    for cycle in 0..cycles {
        let mut server = start(&dir, fsync);
        let port = server.port;
        if let Some(kill_at) = last_kill {
            let resume = verify(port, &progress, kill_at, max_loss);
            for (p, len) in progress.iter_mut().zip(resume) {
                *p = Progress { next: len, acked: len, ack_times: Vec::new() };
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let shared: Vec<Arc<Mutex<Progress>>> = progress.iter().cloned().map(|p| Arc::new(Mutex::new(p))).collect();
        let handles: Vec<_> = (0..WRITERS)
            .map(|t| {
                let stop = stop.clone();
                let state = shared[t].clone();
                std::thread::spawn(move || {
                    let Some(mut conn) = Conn::connect(port) else { return };
                    while !stop.load(Ordering::SeqCst) {
                        let i = {
                            let mut s = state.lock().unwrap();
                            s.next += 1;
                            s.next - 1
                        };
                        if push(&mut conn, t, i).is_none() {
                            return;
                        }
                        let mut s = state.lock().unwrap();
                        s.acked = i + 1;
                        s.ack_times.push(Instant::now());
                    }
                })
            })
            .collect();
        // Kill at a random moment while the writers are busy; in every other cycle an AOF
        // rewrite starts first, so some kills land while its child runs or as it finishes.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let wait = Duration::from_millis(50 + rng % 250);
        if cycle % 2 == 1 {
            std::thread::sleep(wait / 2);
            let mut admin = Conn::connect(port).expect("connect");
            let reply = admin.call(&["BGREWRITEAOF"]).unwrap_or_default();
            assert!(reply.starts_with("+Background append only file rewriting"), "BGREWRITEAOF: {reply}");
            std::thread::sleep(wait / 2);
        } else {
            std::thread::sleep(wait);
        }
        let kill_at = Instant::now();
        let _ = std::process::Command::new("kill").args(["-KILL", &server.pid().to_string()]).status();
        assert!(server.wait_exit(Duration::from_secs(10)), "server did not die");
        stop.store(true, Ordering::SeqCst);
        for h in handles {
            h.join().unwrap();
        }
        let before: u64 = progress.iter().map(|p| p.acked).sum();
        progress = shared.iter().map(|s| s.lock().unwrap().clone()).collect();
        total_acked += progress.iter().map(|p| p.acked).sum::<u64>() - before;
        last_kill = Some(kill_at);
    }
    let server = start(&dir, fsync);
    verify(server.port, &progress, last_kill.unwrap_or_else(Instant::now), max_loss);
    eprintln!("{fsync}: {cycles} kill cycles, {total_acked} acknowledged pushes checked");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

fn cycles() -> usize {
    std::env::var("QUINCE_CRASH_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(20)
}

#[test]
fn appendfsync_always_keeps_every_acknowledged_write() {
    crash_cycles("always", cycles(), None);
}

#[test]
fn appendfsync_everysec_loses_at_most_about_a_second() {
    crash_cycles("everysec", (cycles() / 4).max(5), Some(Duration::from_millis(1500)));
}

/// A log torn inside a transaction (a crash while its MULTI/EXEC was being written) loses
/// the whole transaction and nothing else, now and after later restarts: the loader cuts
/// the file before the MULTI. (Redis cuts after the last whole command instead, leaving a
/// MULTI open that swallows the writes appended after the restart: they were lost at the
/// next restart.)
#[test]
fn a_log_torn_inside_a_transaction_loses_that_transaction_only() {
    let dir = quince_test_util::server_dir("torn-multi");
    let incr = dir.join("appendonlydir").join("appendonly.aof.1.incr.aof");
    {
        let mut server = start(&dir, "always");
        let mut c = Conn::connect(server.port).unwrap();
        c.call(&["SET", "before", "1"]).unwrap();
        for command in [&["MULTI"][..], &["RPUSH", "torn", "a"], &["INCR", "torn-counter"], &["EXEC"]] {
            c.call(command).unwrap();
        }
        server.terminate();
        assert!(server.wait_exit(Duration::from_secs(10)));
    }
    // Cut the log in the middle of the transaction's INCR.
    let log = std::fs::read(&incr).unwrap();
    let incr_at = log.windows(4).position(|w| w == b"INCR").expect("the INCR is in the log");
    std::fs::write(&incr, &log[..incr_at + 2]).unwrap();
    let multi_at = log.windows(5).position(|w| w == b"MULTI").unwrap();
    for round in 0..2 {
        let mut server = start(&dir, "always");
        let mut c = Conn::connect(server.port).unwrap();
        assert_eq!(c.get_int("before"), 1, "round {round}");
        assert_eq!(c.call(&["EXISTS", "torn", "torn-counter"]).unwrap(), ":0", "round {round}: half a transaction");
        if round == 0 {
            let cut = std::fs::metadata(&incr).unwrap().len() as usize;
            assert!(cut < multi_at, "the file is cut before the MULTI (at {cut}, MULTI at {multi_at})");
            assert_eq!(c.call(&["SET", "after", "2"]).unwrap(), "+OK");
        } else {
            assert_eq!(c.get_int("after"), 2, "the write after the first restart stays");
        }
        server.terminate();
        assert!(server.wait_exit(Duration::from_secs(10)));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
