//! CONFIG SET `port` and `bind` at runtime, as Redis 7.0 applies them (changeListenPort,
//! changeBindAddr): the new sockets listen first; a port in use or an address that can't
//! be bound is refused with Redis's error and the old sockets keep serving; on success the
//! old port stops accepting, connections already open stay. `bind ""` leaves no TCP
//! listener (the Unix socket still serves). Each step against redis-server too, replies
//! compared byte for byte. Runs over epoll (see the test's comment for io_uring's open
//! problem).

use std::net::TcpStream;
use std::time::Duration;

use quince_test_util::{free_port, start_quince, start_redis, RawClient, ServerProcess};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn refused(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_err()
}

/// Connects to `port` and PINGs, retrying a moment (a worker moves to new listeners at its
/// next turn).
fn ping(port: u16) -> Vec<u8> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) {
            drop(stream);
            return RawClient::connect(port).call(&["PING"]);
        }
        assert!(std::time::Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs the steps on one server; returns the replies to compare.
fn steps(server: &ServerProcess, unix: &std::path::Path) -> Vec<Vec<u8>> {
    let mut replies = Vec::new();
    let mut c = server.client();
    // A new port: served there, the old one refuses, the open connection stays.
    let new_port = free_port();
    replies.push(c.call(&["CONFIG", "SET", "port", &new_port.to_string()]));
    assert_eq!(ping(new_port), b"+PONG\r\n");
    assert!(refused(server.port), "the old port still accepts");
    replies.push(c.call(&["PING"]));
    // A port another socket holds: refused, the current one still serves.
    let holder = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let taken = holder.local_addr().unwrap().port();
    replies.push(c.call(&["CONFIG", "SET", "port", &taken.to_string()]));
    replies.push(c.call(&["CONFIG", "GET", "port"]).len().to_string().into_bytes());
    assert_eq!(ping(new_port), b"+PONG\r\n");
    // An address that can't be bound: refused, bind unchanged.
    replies.push(c.call(&["CONFIG", "SET", "bind", "999.999.999.999"]));
    replies.push(c.call(&["CONFIG", "GET", "bind"]));
    // No TCP address at all: only the Unix socket serves.
    replies.push(c.call(&["CONFIG", "SET", "bind", ""]));
    assert!(refused(new_port), "bind \"\" still accepts over TCP");
    let mut local = RawClient::connect_unix(unix);
    replies.push(local.call(&["PING"]));
    replies.push(local.call(&["CONFIG", "SET", "bind", "127.0.0.1"]));
    assert_eq!(ping(new_port), b"+PONG\r\n");
    replies.push(local.call(&["CONFIG", "GET", "bind"]));
    drop(holder);
    replies
}

#[test]
fn config_set_port_and_bind_move_the_listening_sockets() {
    let dir = std::env::temp_dir().join(format!("quince-rebinding-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let quince_sock = dir.join("quince.sock");
    // Over epoll: over io_uring a Unix-socket client that connects right after two rebinds
    // in a row is, now and then under load, never served (1 in 60 tries on this VM, 3 in
    // 10 runs of this test beside other tests; open, docs/threading.md "Known problems").
    let quince = start_quince(QUINCE, &["--unixsocket", quince_sock.to_str().unwrap(), "--io-backend", "epoll"]);
    let quince_replies = steps(&quince, &quince_sock);
    assert_eq!(
        quince_replies[2],
        b"-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.\r\n"
    );
    assert_eq!(
        quince_replies[4],
        b"-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.\r\n"
    );
    let redis_sock = dir.join("redis.sock");
    if let Some(redis) = start_redis(&["--unixsocket", redis_sock.to_str().unwrap()]) {
        let redis_replies = steps(&redis, &redis_sock);
        for (i, (q, r)) in quince_replies.iter().zip(&redis_replies).enumerate() {
            assert_eq!(String::from_utf8_lossy(q), String::from_utf8_lossy(r), "step {i}");
        }
    }
    drop(quince);
    let _ = std::fs::remove_dir_all(&dir);
}
