//! Shared test helpers: start quince-server or redis-server on a free loopback port, talk
//! raw RESP to them, and run differential scripts that compare replies byte for byte.
//!
//! ```no_run
//! use quince_test_util::{Differential, Step};
//! // In a server integration test:
//! let Some(mut diff) = Differential::start(env!("CARGO_PKG_NAME")) else { return };
//! diff.run("basics", &[Step::cmd(&["SET", "k", "v"]), Step::cmd(&["GET", "k"])]);
//! ```

pub mod script;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("bind an ephemeral port").port()
}

/// Finds an executable on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|dir| Path::new(dir).join(name)).find(|p| p.is_file())
}

/// True when the environment insists reference-server tests run (CI sets it).
pub fn redis_required() -> bool {
    std::env::var("QUINCE_REQUIRE_REDIS").is_ok_and(|v| v == "1")
}

/// The `process_id` the server on `port` reports in INFO server, if it answers with one
/// (a server requiring a password does not).
/// The process id a server on `port` reports (INFO server), if it answers.
pub fn answering_pid(port: u16) -> Option<u32> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    // QUIT too, and read until the server closes: by then it has forgotten this connection,
    // so it never shows up in the tests' CLIENT LIST or CLIENT KILL counts.
    let mut request = encode_command(&["INFO", "server"]);
    request.extend(encode_command(&["QUIT"]));
    stream.write_all(&request).ok()?;
    let mut all = Vec::new();
    let _ = stream.read_to_end(&mut all);
    let len = quince_resp::reply_frame_len(&all).ok()??;
    let text = String::from_utf8_lossy(&all[..len]).into_owned();
    let line = text.lines().find(|l| l.starts_with("process_id:"))?;
    line["process_id:".len()..].trim().parse().ok()
}

/// Waits (until `deadline`) while the server on `port` answers `-LOADING` (it accepts
/// connections before its dataset is loaded).
/// For a server that doesn't say who it is: ours if our process is still running a moment
/// later (a server that failed to bind exits at once).
fn started_by_us(child: &mut Child) -> bool {
    std::thread::sleep(Duration::from_millis(200));
    matches!(child.try_wait(), Ok(None))
}

fn wait_until_loaded(port: u16, deadline: Instant) {
    while Instant::now() < deadline {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut request = encode_command(&["PING"]);
        request.extend(encode_command(&["QUIT"]));
        if stream.write_all(&request).is_err() {
            return;
        }
        let mut all = Vec::new();
        let _ = stream.read_to_end(&mut all);
        if !all.starts_with(b"-LOADING") {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A server process on a loopback port, killed (by pid) when dropped.
pub struct ServerProcess {
    child: Child,
    pub port: u16,
    pub name: &'static str,
    /// Its own working directory (`--dir`), so snapshots it writes never land in the source
    /// tree nor get loaded by another test's server; removed when dropped.
    pub dir: PathBuf,
}

/// A fresh directory for one server's files.
pub fn server_dir(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("quince-test-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a server directory");
    dir
}

impl ServerProcess {
    /// Starts `program args... ` with `--port` and (unless `args` bind) `--bind 127.0.0.1`
    /// added, and waits until it accepts connections.
    pub fn spawn(name: &'static str, program: &Path, extra_args: &[&str]) -> std::io::Result<Self> {
        let dir = server_dir(name);
        for _attempt in 0..5 {
            let port = free_port();
            let mut cmd = Command::new(program);
            // After `extra_args` (a config file must come first), unless the test chose its own.
            cmd.args(extra_args).args(["--port", &port.to_string()]);
            if !extra_args.contains(&"--bind") {
                cmd.args(["--bind", "127.0.0.1"]);
            }
            if !extra_args.contains(&"--dir") {
                cmd.args(["--dir", dir.to_str().expect("utf-8 temp dir")]);
            }
            cmd.stdout(Stdio::null()).stderr(Stdio::null());
            let mut child = cmd.spawn()?;
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    // Another test's server may have taken the same "free" port first: make
                    // sure the one answering is ours before handing it out.
                    // A server that doesn't answer INFO (a password) is taken for ours only
                    // while our process lives: if it exited, the port was someone else's.
                    match answering_pid(port) {
                        Some(pid) if pid != child.id() => break,
                        None if !matches!(child.try_wait(), Ok(None)) => break,
                        None if !started_by_us(&mut child) => break,
                        _ => {
                            wait_until_loaded(port, deadline);
                            return Ok(Self { child, port, name, dir });
                        }
                    }
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break; // port taken or bad arguments: try another port
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        Err(std::io::Error::other(format!("{name} did not start")))
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits up to `timeout` for the process to exit on its own; returns whether it did.
    pub fn wait_exit(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Sends SIGTERM (by pid).
    pub fn terminate(&self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
    }

    pub fn client(&self) -> RawClient {
        RawClient::connect(self.port)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts quince-server from the binary Cargo built for this test.
/// `QUINCE_IO_BACKEND` (auto, io_uring, epoll) picks the server's I/O backend, so the
/// whole suite can run over each (.ci/run runs the server's tests over epoll too), unless
/// the test chose one itself.
pub fn start_quince(binary: &str, extra_args: &[&str]) -> ServerProcess {
    let backend = std::env::var("QUINCE_IO_BACKEND").ok();
    let mut args = vec!["--save", ""];
    args.extend_from_slice(extra_args);
    if let Some(backend) = backend.as_deref().filter(|_| !extra_args.contains(&"--io-backend")) {
        args.extend_from_slice(&["--io-backend", backend]);
    }
    ServerProcess::spawn("quince", Path::new(binary), &args).expect("quince-server starts")
}

/// Starts a real redis-server, or returns None (with a message) when none is installed.
/// Panics instead when `QUINCE_REQUIRE_REDIS=1`.
pub fn start_redis(extra_args: &[&str]) -> Option<ServerProcess> {
    let Some(path) = which("redis-server") else {
        if redis_required() {
            panic!("QUINCE_REQUIRE_REDIS=1 but redis-server is not on PATH");
        }
        eprintln!("SKIPPED: redis-server not found on PATH; differential checks did not run");
        return None;
    };
    let mut args = vec!["--save", "", "--appendonly", "no"];
    args.extend_from_slice(extra_args);
    Some(ServerProcess::spawn("redis", &path, &args).expect("redis-server starts"))
}

/// Encodes a command as a RESP multibulk request.
pub fn encode_command<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        let a = a.as_ref();
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// A blocking RESP client that returns raw reply bytes, over TCP or a Unix socket.
pub struct RawClient {
    stream: ClientStream,
    buf: Vec<u8>,
}

enum ClientStream {
    Tcp(TcpStream),
    Unix(std::os::unix::net::UnixStream),
}

impl ClientStream {
    fn io(&mut self) -> &mut dyn ReadWrite {
        match self {
            Self::Tcp(s) => s,
            Self::Unix(s) => s,
        }
    }

    fn shutdown(&self, how: std::net::Shutdown) {
        let _ = match self {
            Self::Tcp(s) => s.shutdown(how),
            Self::Unix(s) => s.shutdown(how),
        };
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

impl RawClient {
    pub fn connect(port: u16) -> Self {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        stream.set_nodelay(true).expect("nodelay");
        Self { stream: ClientStream::Tcp(stream), buf: Vec::new() }
    }

    /// Connects through a server's Unix domain socket (`unixsocket`).
    pub fn connect_unix(path: &Path) -> Self {
        let stream =
            std::os::unix::net::UnixStream::connect(path).unwrap_or_else(|e| panic!("connect {}: {e}", path.display()));
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        Self { stream: ClientStream::Unix(stream), buf: Vec::new() }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.io().write_all(bytes).expect("write");
    }

    pub fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) {
        self.send_raw(&encode_command(args));
    }

    /// Reads one whole reply (including a leading attribute, if any).
    pub fn read_reply(&mut self) -> Vec<u8> {
        loop {
            if let Some(len) = quince_resp::reply_frame_len(&self.buf).expect("well-formed reply") {
                return self.buf.drain(..len).collect();
            }
            let mut chunk = [0u8; 64 * 1024];
            let n = self.stream.io().read(&mut chunk).expect("read reply");
            assert!(
                n > 0,
                "connection closed while waiting for a reply; got so far: {:?}",
                String::from_utf8_lossy(&self.buf)
            );
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Vec<u8> {
        self.send(args);
        self.read_reply()
    }

    /// Closes the sending side; the server sees end of input.
    pub fn shutdown_write(&mut self) {
        self.stream.shutdown(std::net::Shutdown::Write);
    }

    /// Reads until the server closes the connection; returns everything received.
    pub fn read_to_close(&mut self) -> Vec<u8> {
        let mut all = std::mem::take(&mut self.buf);
        let _ = self.stream.io().read_to_end(&mut all);
        all
    }
}

/// How a step's replies are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// Byte for byte.
    Exact,
    /// Both error replies, or both not (texts may differ).
    ErrorOrNot,
    /// Run, but do not compare (e.g. a reply that embeds a server-specific id).
    Ignore,
    /// Integer replies within this distance of each other (PTTL and friends).
    IntWithin(i64),
    /// Byte for byte after masking the `id` field of a HELLO reply.
    MaskHelloId,
    /// The same multiset of elements in a flat array, set or map reply (KEYS, CONFIG GET).
    Unordered,
}

/// Splits a flat RESP array (or set) of simple items into its element frames, sorted.
fn sorted_elements(r: &[u8]) -> Option<(Vec<u8>, Vec<Vec<u8>>)> {
    let line_end = |from: usize| r[from..].windows(2).position(|w| w == b"\r\n").map(|p| from + p);
    let head_end = line_end(0)?;
    let head = r[..head_end + 2].to_vec();
    if !matches!(r.first(), Some(b'*' | b'~' | b'%')) {
        return None;
    }
    let mut items = Vec::new();
    let mut at = head_end + 2;
    while at < r.len() {
        let end = line_end(at)?;
        let mut next = end + 2;
        if r[at] == b'$' {
            let len: usize = std::str::from_utf8(&r[at + 1..end]).ok()?.parse().ok()?;
            next += len + 2;
        }
        items.push(r.get(at..next)?.to_vec());
        at = next;
    }
    if r[0] == b'%' {
        // A map: keep each key with its value.
        items = items.chunks(2).map(|pair| pair.concat()).collect();
    }
    items.sort();
    Some((head, items))
}

fn parse_int_reply(r: &[u8]) -> Option<i64> {
    std::str::from_utf8(r.strip_prefix(b":")?.strip_suffix(b"\r\n")?).ok()?.parse().ok()
}

/// Replaces the integer after the `id` key of a HELLO reply with 0.
fn mask_hello_id(r: &[u8]) -> Vec<u8> {
    let key = b"$2\r\nid\r\n:";
    let Some(at) = r.windows(key.len()).position(|w| w == key) else { return r.to_vec() };
    let start = at + key.len();
    let end = start + r[start..].iter().position(|&b| b == b'\r').unwrap_or(0);
    [&r[..start], b"0", &r[end..]].concat()
}

/// One step of a differential script.
#[derive(Debug, Clone)]
pub enum Step {
    Cmd(Vec<Vec<u8>>, Compare),
    /// Raw bytes on a new connection, then the client's write side is shut; every byte the
    /// server sends until it closes the connection is compared.
    Raw(Vec<u8>),
    /// Pause (for expiry), applied to both servers.
    SleepMs(u64),
}

impl Step {
    pub fn cmd(args: &[&str]) -> Self {
        Step::Cmd(args.iter().map(|a| a.as_bytes().to_vec()).collect(), Compare::Exact)
    }
    pub fn bytes(args: &[&[u8]]) -> Self {
        Step::Cmd(args.iter().map(|a| a.to_vec()).collect(), Compare::Exact)
    }
    pub fn compare(self, how: Compare) -> Self {
        match self {
            Step::Cmd(args, _) => Step::Cmd(args, how),
            other => other,
        }
    }
}

/// Runs scripts against quince and redis-server side by side.
pub struct Differential {
    pub quince: ServerProcess,
    pub redis: ServerProcess,
}

impl Differential {
    /// Starts both servers; None (after printing why) when redis-server is unavailable.
    pub fn start(quince_binary: &str) -> Option<Self> {
        let redis = start_redis(&["--enable-debug-command", "yes"])?;
        let quince = start_quince(quince_binary, &["--enable-debug-command", "yes"]);
        Some(Self { quince, redis })
    }

    /// As `start`, with `extra_args` given to both servers.
    pub fn start_with(quince_binary: &str, extra_args: &[&str]) -> Option<Self> {
        Self::start_each(quince_binary, extra_args, extra_args)
    }

    /// As `start`, with arguments of its own for each server (their own `--dir`...).
    pub fn start_each(quince_binary: &str, quince_args: &[&str], redis_args: &[&str]) -> Option<Self> {
        fn with_debug<'a>(extra: &[&'a str]) -> Vec<&'a str> {
            let mut args = vec!["--enable-debug-command", "yes"];
            args.extend_from_slice(extra);
            args
        }
        let redis = start_redis(&with_debug(redis_args))?;
        let quince = start_quince(quince_binary, &with_debug(quince_args));
        Some(Self { quince, redis })
    }

    /// Runs `steps` on fresh connections, in RESP2 and then RESP3 (after `HELLO 3`), with
    /// `FLUSHALL` before each pass, and panics on the first difference.
    pub fn run(&mut self, name: &str, steps: &[Step]) {
        for resp3 in [false, true] {
            let mut q = self.quince.client();
            let mut r = self.redis.client();
            for c in [&mut q, &mut r] {
                c.call(&["FLUSHALL"]);
                if resp3 {
                    c.call(&["HELLO", "3"]);
                }
            }
            for (i, step) in steps.iter().enumerate() {
                let proto = if resp3 { "RESP3" } else { "RESP2" };
                match step {
                    Step::SleepMs(ms) => std::thread::sleep(Duration::from_millis(*ms)),
                    Step::Cmd(args, how) => {
                        let (qr, rr) = (q.call(args), r.call(args));
                        let same = match how {
                            Compare::Exact => qr == rr,
                            Compare::ErrorOrNot => qr.starts_with(b"-") == rr.starts_with(b"-"),
                            Compare::Ignore => true,
                            Compare::IntWithin(d) => match (parse_int_reply(&qr), parse_int_reply(&rr)) {
                                (Some(a), Some(b)) => (a - b).abs() <= *d,
                                _ => qr == rr,
                            },
                            Compare::MaskHelloId => mask_hello_id(&qr) == mask_hello_id(&rr),
                            Compare::Unordered => match (sorted_elements(&qr), sorted_elements(&rr)) {
                                (Some(a), Some(b)) => a == b,
                                _ => qr == rr,
                            },
                        };
                        assert!(
                            same,
                            "{name} [{proto}] step {i} {}:\n  quince: {}\n  redis:  {}",
                            show_args(args),
                            show(&qr),
                            show(&rr)
                        );
                    }
                    Step::Raw(bytes) => {
                        let mut qc = self.quince.client();
                        let mut rc = self.redis.client();
                        for c in [&mut qc, &mut rc] {
                            c.send_raw(bytes);
                            c.shutdown_write();
                        }
                        let (qr, rr) = (qc.read_to_close(), rc.read_to_close());
                        assert!(
                            qr == rr,
                            "{name} [{proto}] step {i} raw {}:\n  quince: {}\n  redis:  {}",
                            show(bytes),
                            show(&qr),
                            show(&rr)
                        );
                    }
                }
            }
        }
    }
}

fn show(bytes: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(bytes))
}

fn show_args(args: &[Vec<u8>]) -> String {
    args.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect::<Vec<_>>().join(" ")
}
