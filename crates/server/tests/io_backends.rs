//! The two I/O backends (`io-backend io_uring` and `epoll`) serve the same traffic the same
//! way: each test here runs over both. The rest of the suite runs over the default (auto,
//! io_uring where the kernel allows it), and .ci/run runs it again with
//! `QUINCE_IO_BACKEND=epoll`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use quince_test_util::{encode_command, start_quince, RawClient, ServerProcess};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");
const BACKENDS: [&str; 2] = ["io_uring", "epoll"];

fn start(backend: &str, extra: &[&str]) -> ServerProcess {
    let mut args = vec!["--io-backend", backend];
    args.extend_from_slice(extra);
    start_quince(QUINCE, &args)
}

fn info_field(c: &mut RawClient, field: &str) -> String {
    let info = String::from_utf8(c.call(&["INFO", "server"])).unwrap();
    let prefix = format!("{field}:");
    info.lines().find_map(|l| l.strip_prefix(&prefix)).unwrap_or_default().to_string()
}

#[test]
fn info_reports_the_backend_in_use_and_the_directive_is_immutable() {
    for backend in BACKENDS {
        let server = start(backend, &[]);
        let mut c = server.client();
        assert_eq!(info_field(&mut c, "multiplexing_api"), backend);
        let expected = format!("*2\r\n$10\r\nio-backend\r\n${}\r\n{backend}\r\n", backend.len());
        assert_eq!(c.call(&["CONFIG", "GET", "io-backend"]), expected.as_bytes());
        let refused = c.call(&["CONFIG", "SET", "io-backend", "epoll"]);
        assert!(refused.starts_with(b"-ERR CONFIG SET failed"), "{}", String::from_utf8_lossy(&refused));
    }
}

#[test]
fn many_connections_pipelining_at_once_get_their_own_replies() {
    for backend in BACKENDS {
        let server = start(backend, &["--threads", "2"]);
        let port = server.port;
        // More connections than the ring has receive buffers, all sending at once.
        let handles: Vec<_> = (0..200)
            .map(|n| {
                std::thread::spawn(move || {
                    let mut c = RawClient::connect(port);
                    let mut batch = Vec::new();
                    for i in 0..50 {
                        batch.extend(encode_command(&["SET", &format!("c{n}:{i}"), &format!("{n}-{i}")]));
                        batch.extend(encode_command(&["GET", &format!("c{n}:{i}")]));
                    }
                    c.send_raw(&batch);
                    for i in 0..50 {
                        assert_eq!(c.read_reply(), b"+OK\r\n");
                        let v = format!("{n}-{i}");
                        assert_eq!(c.read_reply(), format!("${}\r\n{v}\r\n", v.len()).as_bytes());
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("client thread");
        }
        assert_eq!(server.client().call(&["DBSIZE"]), b":10000\r\n", "{backend}");
    }
}

#[test]
fn values_larger_than_every_buffer_go_both_ways() {
    for backend in BACKENDS {
        let server = start(backend, &[]);
        let mut c = server.client();
        // 8 MB: more than the ring's whole receive pool, and far more than a socket buffer.
        let value: Vec<u8> = (0..8usize << 20).map(|i| (i % 251) as u8).collect();
        assert_eq!(c.call(&[&b"SET"[..], b"big", &value]), b"+OK\r\n");
        let reply = c.call(&["GET", "big"]);
        let header = format!("${}\r\n", value.len());
        assert_eq!(&reply[..header.len()], header.as_bytes());
        assert!(reply[header.len()..reply.len() - 2] == value[..], "{backend}: the value came back changed");
        assert_eq!(c.call(&["STRLEN", "big"]), format!(":{}\r\n", value.len()).as_bytes());
    }
}

#[test]
fn a_reader_that_falls_behind_gets_everything_in_order() {
    for backend in BACKENDS {
        let server = start(backend, &[]);
        let mut c = server.client();
        assert_eq!(c.call(&["SET", "v", &"y".repeat(10_000)]), b"+OK\r\n");
        // 2,000 replies of 10 kB (20 MB) are queued before the client reads any.
        let mut batch = Vec::new();
        for _ in 0..2_000 {
            batch.extend(encode_command(&["GET", "v"]));
        }
        c.send_raw(&batch);
        std::thread::sleep(Duration::from_millis(300));
        let expected = format!("$10000\r\n{}\r\n", "y".repeat(10_000));
        for _ in 0..2_000 {
            assert_eq!(c.read_reply(), expected.as_bytes(), "{backend}");
        }
        assert_eq!(c.call(&["PING"]), b"+PONG\r\n");
    }
}

#[test]
fn closing_paths_deliver_the_last_replies() {
    for backend in BACKENDS {
        let server = start(backend, &[]);
        // QUIT: +OK, then the server closes.
        let mut c = server.client();
        c.send_raw(&[encode_command(&["SET", "q", "1"]), encode_command(&["QUIT"])].concat());
        assert_eq!(c.read_to_close(), b"+OK\r\n+OK\r\n", "{backend}");
        // A client that sends its requests and ends its input still gets every reply.
        let mut c = server.client();
        let mut batch = Vec::new();
        for _ in 0..1_000 {
            batch.extend(encode_command(&["INCR", "counter"]));
        }
        c.send_raw(&batch);
        c.shutdown_write();
        let all = c.read_to_close();
        let expected: String = (1..=1_000).map(|i| format!(":{i}\r\n")).collect();
        assert_eq!(String::from_utf8_lossy(&all), expected, "{backend}");
        // A protocol error gets its error, then the connection closes.
        let mut c = server.client();
        c.send_raw(b"*1\r\n$4\r\nPING\r\n*x\r\n");
        assert_eq!(
            String::from_utf8_lossy(&c.read_to_close()),
            "+PONG\r\n-ERR Protocol error: invalid multibulk length\r\n",
            "{backend}"
        );
        // A client killing itself gets its reply (the number of clients killed).
        let mut c = server.client();
        assert_eq!(c.call(&["CLIENT", "SETNAME", "me"]), b"+OK\r\n");
        let id = client_id(&mut c);
        c.send(&["CLIENT", "KILL", "SKIPME", "no", "ID", &id]);
        assert_eq!(c.read_to_close(), b":1\r\n", "{backend}");
        assert_eq!(server.client().call(&["GET", "counter"]), b"$4\r\n1000\r\n");
    }
}

fn client_id(c: &mut RawClient) -> String {
    let reply = c.call(&["CLIENT", "ID"]);
    String::from_utf8_lossy(&reply[1..reply.len() - 2]).into_owned()
}

#[test]
fn a_killed_client_that_stopped_reading_is_closed_at_once() {
    for backend in BACKENDS {
        let server = start(backend, &[]);
        let mut stuck = server.client();
        assert_eq!(stuck.call(&["SET", "v", &"z".repeat(100_000)]), b"+OK\r\n");
        let id = client_id(&mut stuck);
        // Its replies (50 MB) fill the socket buffers: a send stays in flight.
        let batch: Vec<u8> = (0..500).flat_map(|_| encode_command(&["GET", "v"])).collect();
        stuck.send_raw(&batch);
        std::thread::sleep(Duration::from_millis(200));
        let mut admin = server.client();
        assert_eq!(admin.call(&["CLIENT", "KILL", "ID", &id]), b":1\r\n");
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let list = String::from_utf8(admin.call(&["CLIENT", "LIST"])).unwrap();
            if !list.contains(&format!("id={id} ")) {
                break;
            }
            assert!(Instant::now() < deadline, "{backend}: the killed client is still listed:\n{list}");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(admin.call(&["PING"]), b"+PONG\r\n");
    }
}

#[test]
fn connection_churn_reuses_slots_without_crossing_replies() {
    for backend in BACKENDS {
        let server = start(backend, &[]);
        let mut keeper = server.client();
        for round in 0..300 {
            // Connections that leave with requests unanswered or replies unread.
            let mut gone = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
            let _ = gone.write_all(&encode_command(&["SET", &format!("gone{round}"), "x"]));
            if round % 3 == 0 {
                let _ = gone.write_all(b"*2\r\n$3\r\nGET\r\n$5\r\ngo");
            }
            drop(gone);
            let mut c = server.client();
            let key = format!("k{round}");
            assert_eq!(c.call(&["SET", &key, &key]), b"+OK\r\n");
            assert_eq!(c.call(&["GET", &key]), format!("${}\r\n{key}\r\n", key.len()).as_bytes());
        }
        assert_eq!(keeper.call(&["PING"]), b"+PONG\r\n");
        // Every abandoned connection was noticed and closed.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let info = String::from_utf8(keeper.call(&["INFO", "clients"])).unwrap();
            if info.contains("connected_clients:1\r\n") {
                break;
            }
            assert!(Instant::now() < deadline, "{backend}: {info}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn blocked_and_paused_clients_resume_over_both_backends() {
    for backend in BACKENDS {
        let server = start(backend, &[]);
        let mut waiter = server.client();
        waiter.send(&["BLPOP", "jobs", "5"]);
        // Requests pipelined behind the wait are answered after it.
        waiter.send(&["PING"]);
        std::thread::sleep(Duration::from_millis(100));
        let mut pusher = server.client();
        assert_eq!(pusher.call(&["CLIENT", "PAUSE", "300", "WRITE"]), b"+OK\r\n");
        let started = Instant::now();
        assert_eq!(pusher.call(&["RPUSH", "jobs", "a"]), b":1\r\n");
        assert!(started.elapsed() >= Duration::from_millis(200), "{backend}: the write was not held");
        assert_eq!(waiter.read_reply(), b"*2\r\n$4\r\njobs\r\n$1\r\na\r\n", "{backend}");
        assert_eq!(waiter.read_reply(), b"+PONG\r\n");
    }
}

#[test]
fn refused_connections_get_redis_error() {
    for backend in BACKENDS {
        let server = start(backend, &["--maxclients", "1"]);
        // The start-up check's own connection may not be closed server-side yet.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut first = loop {
            let mut c = server.client();
            if c.call(&["PING"]) == b"+PONG\r\n" {
                break c;
            }
            assert!(Instant::now() < deadline, "{backend}: no connection accepted");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(first.call(&["PING"]), b"+PONG\r\n");
        let mut second = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        second.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        let _ = second.read_to_end(&mut got);
        assert_eq!(got, b"-ERR max number of clients reached\r\n", "{backend}");
    }
}

/// CPU time (user + system, in clock ticks) the process has used so far.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn running_out_of_descriptors_neither_spins_nor_stops_accepting() {
    for backend in BACKENDS {
        // 64 descriptors in all. maxclients 32 fits them (so it is not lowered at start-up),
        // but 16 workers use about 50 themselves: accepts run out of descriptors long
        // before the server reaches maxclients. (The limit must be in place before the
        // server starts: io_uring's accept keeps the limit it was armed with.)
        let server = ServerProcess::spawn(
            "quince",
            std::path::Path::new("/bin/sh"),
            &[
                "-c",
                "ulimit -n 64 && exec \"$0\" \"$@\"",
                QUINCE,
                "--save",
                "",
                "--io-backend",
                backend,
                "--threads",
                "16",
                "--maxclients",
                "32",
            ],
        )
        .unwrap();
        let mut clients: Vec<TcpStream> =
            (0..80).map(|_| TcpStream::connect(("127.0.0.1", server.port)).unwrap()).collect();
        for c in &mut clients {
            let _ = c.write_all(&encode_command(&["PING"]));
        }
        std::thread::sleep(Duration::from_millis(300));
        // With accepts failing, the server rests instead of retrying in a loop.
        let before = cpu_ticks(server.pid());
        std::thread::sleep(Duration::from_secs(1));
        let used = cpu_ticks(server.pid()) - before;
        assert!(used < 30, "{backend}: {used} ticks of CPU in 1 s while out of descriptors");
        // Once descriptors are free again, waiting and new clients are served.
        clients.clear();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let answered = TcpStream::connect(("127.0.0.1", server.port)).ok().and_then(|mut c| {
                c.set_read_timeout(Some(Duration::from_millis(500))).ok()?;
                c.write_all(&encode_command(&["PING"])).ok()?;
                let mut buf = [0u8; 7];
                c.read_exact(&mut buf).ok()?;
                Some(buf)
            });
            if answered == Some(*b"+PONG\r\n") {
                break;
            }
            assert!(Instant::now() < deadline, "{backend}: no PONG after descriptors were freed");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// CPU ticks each worker thread (`quince-worker-N`) of the process has used so far.
fn worker_ticks(pid: u32) -> Vec<u64> {
    let mut ticks = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let Ok(stat) = std::fs::read_to_string(task.unwrap().path().join("stat")) else { continue };
        if !stat.contains("(quince-worker-") {
            continue;
        }
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        ticks.push(fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap());
    }
    ticks
}

#[test]
fn connections_are_spread_over_the_workers() {
    for backend in BACKENDS {
        let server = start(backend, &["--threads", "2"]);
        let port = server.port;
        // Eight connections, opened one after the other and then all busy at once: each
        // worker must serve its share (the kernel alone gives io_uring's every one to the
        // worker whose accept was armed first).
        let mut clients: Vec<RawClient> = (0..8).map(|_| RawClient::connect(port)).collect();
        for c in clients.iter_mut() {
            assert_eq!(c.call(&["PING"]), b"+PONG\r\n");
        }
        let before = worker_ticks(server.pid());
        let handles: Vec<_> = clients
            .into_iter()
            .map(|mut c| {
                std::thread::spawn(move || {
                    let mut batch = Vec::new();
                    for i in 0..2000 {
                        batch.extend(encode_command(&["SET", &format!("k{i}"), "v"]));
                    }
                    for _ in 0..10 {
                        c.send_raw(&batch);
                        for _ in 0..2000 {
                            assert_eq!(c.read_reply(), b"+OK\r\n");
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("client thread");
        }
        let after = worker_ticks(server.pid());
        let used: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
        let total: u64 = used.iter().sum();
        assert_eq!(used.len(), 2, "{backend}: two workers");
        assert!(total > 0, "{backend}: the workers ran");
        for share in &used {
            assert!(*share * 5 >= total, "{backend}: a worker served less than a fifth of the load: {used:?}");
        }
    }
}

/// (total_reads_processed, total_writes_processed) from one INFO. Over io_uring a write is
/// counted when its completion is handled, which a loaded machine may delay past the
/// client's next request: give earlier sends time to complete first.
fn io_counts(c: &mut RawClient) -> (u64, u64) {
    std::thread::sleep(Duration::from_millis(100));
    let info = String::from_utf8(c.call(&["INFO", "stats"])).unwrap();
    let field = |name: &str| -> u64 {
        let prefix = format!("{name}:");
        info.lines().find_map(|l| l.strip_prefix(&prefix)).expect(name).parse().unwrap()
    };
    (field("total_reads_processed"), field("total_writes_processed"))
}

#[test]
fn a_pipeline_of_scripts_gets_its_replies_in_one_write() {
    for backend in BACKENDS {
        let server = start(backend, &[]);
        let mut observer = server.client();
        let mut c = server.client();
        let sha = String::from_utf8(c.call(&["SCRIPT", "LOAD", "return redis.call('INCR', KEYS[1])"])).unwrap();
        let sha = sha.lines().nth(1).unwrap().to_string();
        // Commands before, between and after scripts, in one write.
        let mut batch = encode_command(&["SET", "n", "0"]);
        for _ in 0..8 {
            batch.extend(encode_command(&["EVALSHA", &sha, "1", "n"]));
        }
        batch.extend(encode_command(&["GET", "n"]));
        for _ in 0..8 {
            batch.extend(encode_command(&["EVAL", "return redis.call('INCR', KEYS[1])", "1", "n"]));
        }
        batch.extend(encode_command(&["PING"]));
        let (reads, writes) = io_counts(&mut observer);
        c.send_raw(&batch);
        assert_eq!(c.read_reply(), b"+OK\r\n");
        for i in 1..=8 {
            assert_eq!(c.read_reply(), format!(":{i}\r\n").as_bytes(), "{backend}");
        }
        assert_eq!(c.read_reply(), b"$1\r\n8\r\n");
        for i in 9..=16 {
            assert_eq!(c.read_reply(), format!(":{i}\r\n").as_bytes(), "{backend}");
        }
        assert_eq!(c.read_reply(), b"+PONG\r\n");
        // Besides the pipeline's (one read, one write): the second INFO's read, and the
        // first INFO's write (made after it counted).
        let (reads_after, writes_after) = io_counts(&mut observer);
        assert_eq!(writes_after - writes, 1 + 1, "{backend}: the pipeline's replies took more than one write");
        assert_eq!(reads_after - reads, 1 + 1, "{backend}: reads counted");
    }
}
