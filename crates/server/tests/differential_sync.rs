//! SYNC against redis-server 7.0.15: the replication stream (an RDB bulk, then every
//! write's effects) carries the same commands on both servers, command by command.

use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use quince_test_util::{Differential, RawClient};

/// A connection that sent SYNC and consumed the snapshot.
struct Stream {
    socket: TcpStream,
    buf: Vec<u8>,
}

impl Stream {
    fn attach(port: u16) -> Stream {
        let mut admin = RawClient::connect(port);
        admin.call(&["CONFIG", "SET", "repl-ping-replica-period", "3600"]);
        let mut socket = TcpStream::connect(("127.0.0.1", port)).unwrap();
        socket.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        std::io::Write::write_all(&mut socket, b"SYNC\r\n").unwrap();
        let mut stream = Stream { socket, buf: Vec::new() };
        // Newlines may come first (keepalives); then `$<len>\r\n` and the RDB, no CRLF.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            while stream.buf.first() == Some(&b'\n') {
                stream.buf.remove(0);
            }
            if let Some(end) = stream.buf.windows(2).position(|w| w == b"\r\n") {
                assert_eq!(stream.buf[0], b'$', "SYNC reply: {:?}", String::from_utf8_lossy(&stream.buf));
                let len: usize = std::str::from_utf8(&stream.buf[1..end]).unwrap().parse().unwrap();
                if stream.buf.len() >= end + 2 + len {
                    assert_eq!(&stream.buf[end + 2..end + 7], b"REDIS", "an RDB payload");
                    stream.buf.drain(..end + 2 + len);
                    return stream;
                }
            }
            assert!(Instant::now() < deadline, "no snapshot after SYNC");
            stream.fill();
        }
    }

    fn fill(&mut self) {
        let mut chunk = [0u8; 65536];
        match self.socket.read(&mut chunk) {
            Ok(0) => panic!("replication stream closed"),
            Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            Err(_) => {}
        }
    }

    /// Every command received until the stream stays quiet for a moment.
    fn drain(&mut self) -> Vec<Vec<String>> {
        let mut commands = Vec::new();
        let mut quiet_since = Instant::now();
        while quiet_since.elapsed() < Duration::from_millis(300) {
            let before = self.buf.len();
            self.fill();
            if self.buf.len() != before {
                quiet_since = Instant::now();
            }
            while let Some(command) = self.parse() {
                commands.push(command);
            }
        }
        commands
    }

    fn parse(&mut self) -> Option<Vec<String>> {
        let mut pos = 0;
        let line = |buf: &[u8], pos: &mut usize| -> Option<String> {
            let end = *pos + buf[*pos..].windows(2).position(|w| w == b"\r\n")?;
            let text = String::from_utf8_lossy(&buf[*pos..end]).into_owned();
            *pos = end + 2;
            Some(text)
        };
        let header = line(&self.buf, &mut pos)?;
        let argc: usize = header.strip_prefix('*').expect("a command array").parse().unwrap();
        let mut args = Vec::new();
        for _ in 0..argc {
            let len: usize = line(&self.buf, &mut pos)?.strip_prefix('$').unwrap().parse().unwrap();
            if self.buf.len() < pos + len + 2 {
                return None;
            }
            args.push(String::from_utf8_lossy(&self.buf[pos..pos + len]).into_owned());
            pos += len + 2;
        }
        self.buf.drain(..pos);
        Some(args)
    }
}

/// Absolute times differ between the servers: digits of 13 or more become `<time>`.
fn mask(commands: Vec<Vec<String>>) -> Vec<Vec<String>> {
    commands
        .into_iter()
        .map(|c| {
            c.into_iter()
                .enumerate()
                .map(|(i, a)| {
                    let a = if i == 0 { a.to_lowercase() } else { a };
                    if a.len() >= 13 && a.bytes().all(|b| b.is_ascii_digit()) {
                        "<time>".into()
                    } else {
                        a
                    }
                })
                .collect()
        })
        .collect()
}

const WORKLOAD: &[&[&str]] = &[
    &["SET", "k", "v"],
    &["SET", "t", "v", "EX", "100"],
    &["EXPIRE", "k", "1000"],
    &["INCRBYFLOAT", "f", "1.5"],
    &["RPUSH", "l", "a", "b", "c"],
    &["LPOP", "l"],
    &["SELECT", "3"],
    &["SET", "other", "db"],
    &["SELECT", "0"],
    &["MULTI"],
    &["INCR", "n"],
    &["INCR", "n"],
    &["EXEC"],
    &["MULTI"],
    &["GET", "n"],
    &["EXEC"],
    &["EVAL", "redis.call('set', KEYS[1], '1'); redis.call('incr', KEYS[1]); return 1", "1", "s"],
    &["EVAL", "return redis.call('get', KEYS[1])", "1", "s"],
    &["GETDEL", "s"],
    &["DEL", "missing"],
    &["HSET", "h", "f", "v"],
    &["HINCRBYFLOAT", "h", "g", "2.5"],
    &["ZADD", "z", "1", "a"],
    &["XADD", "x", "1-1", "f", "v"],
    // PUBLISH reaches replicas (not the AOF), alone, in a transaction and in a script.
    &["PUBLISH", "ch", "msg"],
    &["MULTI"],
    &["PUBLISH", "bla", "bla"],
    &["EXEC"],
    &["EVAL", "redis.call('set', KEYS[1], 'v'); redis.call('publish', 'ch', 'x'); return 1", "1", "p"],
    &["FLUSHDB"],
];

#[test]
fn the_replication_stream_matches_redis() {
    let Some(diff) = Differential::start(env!("CARGO_BIN_EXE_quince-server")) else { return };
    let mut streams = Vec::new();
    for server in [&diff.quince, &diff.redis] {
        let mut stream = Stream::attach(server.port);
        let mut client = server.client();
        for command in WORKLOAD {
            client.call(command);
        }
        streams.push(mask(stream.drain()));
    }
    let (quince, redis) = (&streams[0], &streams[1]);
    for (i, (q, r)) in quince.iter().zip(redis).enumerate() {
        assert_eq!(q, r, "command {i} of the stream");
    }
    assert_eq!(quince.len(), redis.len(), "stream lengths: quince {quince:?}\nredis {redis:?}");
    assert!(quince.len() > 20);
}
