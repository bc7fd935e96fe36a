//! The `unixsocket` listener, against redis-server: the same replies over a Unix domain
//! socket, the same client address and flag in CLIENT LIST/INFO, the socket file's mode
//! from `unixsocketperm`, and the file removed at shutdown. Over both I/O backends.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use quince_test_util::{start_quince, start_redis, RawClient, ServerProcess};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

/// `addr`, `laddr` and `flags` of CLIENT INFO, with the server's socket path as `<sock>`.
fn client_fields(c: &mut RawClient, path: &Path) -> String {
    let info = String::from_utf8(c.call(&["CLIENT", "INFO"])).unwrap();
    let path = path.to_str().unwrap();
    info.split_whitespace()
        .filter(|f| f.starts_with("addr=") || f.starts_with("laddr=") || f.starts_with("flags="))
        .map(|f| f.replace(path, "<sock>"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What one server answers over its Unix socket.
fn session(path: &Path) -> Vec<String> {
    let mut c = RawClient::connect_unix(path);
    let mut replies: Vec<String> = [
        &["PING"][..],
        &["SET", "k", "v"],
        &["GET", "k"],
        &["INCR", "n"],
        &["CONFIG", "GET", "unixsocketperm"],
        &["CLIENT", "SETNAME", "viaunix"],
        &["CLIENT", "GETNAME"],
    ]
    .iter()
    .map(|args| String::from_utf8_lossy(&c.call(args)).into_owned())
    .collect();
    replies.push(client_fields(&mut c, path));
    let list = String::from_utf8(c.call(&["CLIENT", "LIST"])).unwrap();
    replies.push(format!("listed with flag U: {}", list.contains(" flags=U ")));
    replies
}

/// A fresh socket path (Unix socket paths are limited to about 100 bytes: kept short).
fn socket_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("qsock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}.sock"))
}

fn start_with_socket(backend: Option<&str>, path: &Path) -> ServerProcess {
    let path = path.to_str().unwrap();
    let mut args = vec!["--unixsocket", path, "--unixsocketperm", "700"];
    if let Some(b) = backend {
        args.extend_from_slice(&["--io-backend", b]);
    }
    start_quince(QUINCE, &args)
}

#[test]
fn unix_socket_clients_get_what_redis_gives_them() {
    let redis_path = socket_path("redis");
    let Some(redis) = start_redis(&["--unixsocket", redis_path.to_str().unwrap(), "--unixsocketperm", "700"]) else {
        return;
    };
    let expected = session(&redis_path);
    assert!(expected.iter().any(|r| r.contains("flags=U")), "{expected:?}");
    drop(redis);
    for backend in ["io_uring", "epoll"] {
        let path = socket_path(&format!("quince-{backend}"));
        let server = start_with_socket(Some(backend), &path);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{backend}");
        assert_eq!(session(&path), expected, "{backend}");
        // TCP clients are served alongside.
        assert_eq!(server.client().call(&["GET", "k"]), b"$1\r\nv\r\n");
        // The socket file is removed when the server exits (SIGTERM).
        server.terminate();
        let deadline = Instant::now() + Duration::from_secs(5);
        while path.exists() {
            assert!(Instant::now() < deadline, "{backend}: {} left behind", path.display());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn a_stale_socket_file_is_replaced_and_many_clients_share_the_socket() {
    let path = socket_path("stale");
    std::fs::write(&path, b"left by a crashed server").unwrap();
    let _server = start_with_socket(None, &path);
    let handles: Vec<_> = (0..20)
        .map(|n| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut c = RawClient::connect_unix(&path);
                for i in 0..200 {
                    let key = format!("u{n}:{i}");
                    assert_eq!(c.call(&["SET", &key, &key]), b"+OK\r\n");
                    assert_eq!(c.call(&["GET", &key]), format!("${}\r\n{key}\r\n", key.len()).as_bytes());
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(RawClient::connect_unix(&path).call(&["DBSIZE"]), b":4000\r\n");
}
