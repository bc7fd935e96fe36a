//! The replica side of replication (REPLICAOF host port): a thread that connects to the
//! master, asks for the stream with SYNC, replaces the dataset with the master's snapshot,
//! then applies every command the master sends, as an obeying client (no lazy expiry, past
//! times kept), until REPLICAOF NO ONE or the link breaks (then it reconnects every second).
//! Meanwhile clients' writes get READONLY, and with `replica-serve-stale-data no` commands
//! not flagged `stale` get MASTERDOWN while the link is down.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use quince_engine::{Engine, NullSink};

use crate::layer::{LogLevel, Logger};

/// A running link to a master.
pub struct MasterLink {
    pub host: String,
    pub port: u16,
    /// The snapshot is loaded and the stream flows.
    pub up: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl MasterLink {
    /// Starts following `host:port`.
    pub fn start(engine: Weak<Engine>, host: String, port: u16, log: Logger) -> MasterLink {
        let up = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let (thread_up, thread_stop, address) = (up.clone(), stop.clone(), format!("{host}:{port}"));
        let _ = std::thread::Builder::new().name("quince-replica".into()).spawn(move || {
            while !thread_stop.load(Ordering::SeqCst) {
                let Some(engine) = engine.upgrade() else { return };
                log(LogLevel::Notice, &format!("Connecting to MASTER {address}"));
                match follow(&engine, &address, &thread_up, &thread_stop, &*log) {
                    Ok(()) => return,
                    Err(e) => {
                        thread_up.store(false, Ordering::SeqCst);
                        log(LogLevel::Warning, &format!("Replication from MASTER {address}: {e}"));
                    }
                }
                drop(engine);
                for _ in 0..10 {
                    if thread_stop.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        });
        MasterLink { host, port, up, stop }
    }

    /// Stops following (REPLICAOF NO ONE, or another master).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.up.store(false, Ordering::SeqCst);
    }
}

/// One session with the master: SYNC, load the snapshot, apply the stream. Ok when stopped.
fn follow(
    engine: &Engine,
    address: &str,
    up: &AtomicBool,
    stop: &AtomicBool,
    log: &dyn Fn(LogLevel, &str),
) -> Result<(), String> {
    let addr = std::net::ToSocketAddrs::to_socket_addrs(address)
        .map_err(|e| format!("can't resolve: {e}"))?
        .next()
        .ok_or("no address")?;
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(|e| format!("connect: {e}"))?;
    stream.set_read_timeout(Some(Duration::from_millis(200))).map_err(|e| e.to_string())?;
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    writer.write_all(b"SYNC\r\n").map_err(|e| format!("SYNC: {e}"))?;
    let mut reader = BufReader::with_capacity(1 << 16, stream);
    // Newlines are the master's keepalives while it prepares the snapshot.
    let header = loop {
        let line = read_line(&mut reader, stop)?.ok_or("stopped")?;
        if !line.is_empty() {
            break line;
        }
    };
    let len: u64 = header
        .strip_prefix('$')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("unexpected reply to SYNC: {header}"))?;
    let snapshot = read_n(&mut reader, len, stop)?;
    log(LogLevel::Notice, &format!("MASTER <-> REPLICA sync: received {len} bytes of snapshot"));
    {
        // The dataset is replaced at one point: no command runs meanwhile.
        let _gate = engine.exclusive();
        crate::layer::Layer::empty_dataset(engine);
        let options = crate::rdb::LoadOptions { skip_expired: false, ..crate::rdb::LoadOptions::default() };
        crate::rdb::load_snapshot(engine, &snapshot[..], &options, &mut |_, _| {})
            .map_err(|e| format!("loading the master's snapshot: {e}"))?;
    }
    log(LogLevel::Notice, "MASTER <-> REPLICA sync: Finished with success");
    up.store(true, Ordering::SeqCst);
    let mut client = engine.new_client();
    client.must_obey = true;
    let mut sink = NullSink(quince_resp::Protocol::Resp2);
    loop {
        let Some(command) = read_command(&mut reader, stop)? else { return Ok(()) };
        let args: Vec<&[u8]> = command.iter().map(|a| &a[..]).collect();
        engine.execute(&mut client, &args, &mut sink);
    }
}

/// A line without CRLF; None once stopped. Timeouts just poll the stop flag.
fn read_line(reader: &mut BufReader<TcpStream>, stop: &AtomicBool) -> Result<Option<String>, String> {
    let mut line = Vec::new();
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(None);
        }
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => return Err("connection closed by the master".into()),
            Ok(_) if line.last() == Some(&b'\n') => {
                while matches!(line.last(), Some(b'\n' | b'\r')) {
                    line.pop();
                }
                return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
            }
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// `n` bytes; the buffer grows with what arrives (a length announced by the peer never
/// sizes an allocation by itself).
fn read_n(reader: &mut BufReader<TcpStream>, n: u64, stop: &AtomicBool) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 65536];
    while (out.len() as u64) < n {
        if stop.load(Ordering::SeqCst) {
            return Err("stopped".into());
        }
        let want = (n - out.len() as u64).min(chunk.len() as u64) as usize;
        match reader.read(&mut chunk[..want]) {
            Ok(0) => return Err("connection closed by the master".into()),
            Ok(got) => out.extend_from_slice(&chunk[..got]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(out)
}

/// One command of the stream (a RESP array of bulks); None once stopped. A bare newline
/// (keepalive) is skipped.
fn read_command(reader: &mut BufReader<TcpStream>, stop: &AtomicBool) -> Result<Option<Vec<Vec<u8>>>, String> {
    let header = loop {
        let Some(line) = read_line(reader, stop)? else { return Ok(None) };
        if !line.is_empty() {
            break line;
        }
    };
    let argc: usize = header
        .strip_prefix('*')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("protocol error in the master's stream: {header}"))?;
    let mut args = Vec::with_capacity(argc.min(1024));
    for _ in 0..argc {
        let Some(line) = read_line(reader, stop)? else { return Ok(None) };
        let len: usize =
            line.strip_prefix('$').and_then(|n| n.parse().ok()).ok_or("protocol error in the master's stream")?;
        let mut arg = read_n(reader, len as u64 + 2, stop)?;
        arg.truncate(len);
        args.push(arg);
    }
    Ok(Some(args))
}
