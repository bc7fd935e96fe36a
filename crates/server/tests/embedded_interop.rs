//! The embedded library and the server share one directory format: quince-server serves
//! a directory `quince::Db` wrote, and the library opens one the server wrote.

use std::time::Duration;

use quince::{Db, Fsync, Options};
use quince_test_util::start_quince;

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("quince-interop-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_server_serves_what_the_library_wrote() {
    let dir = temp_dir("lib-to-server");
    {
        let db = Db::open_with(&dir, Options { fsync: Fsync::Always, ..Options::default() }).unwrap();
        db.set("from", "library").unwrap();
        db.rpush("list", &["1", "2", "3"]).unwrap();
        db.hset("hash", &[("f", "v")]).unwrap();
        db.zadd("zset", &[(2.0, "b"), (1.0, "a")]).unwrap();
        db.command(&["XADD", "stream", "1-1", "field", "value"]).unwrap();
    }
    let dir_arg = dir.to_str().unwrap();
    let server = start_quince(QUINCE, &["--dir", dir_arg, "--appendonly", "yes"]);
    let mut c = server.client();
    assert_eq!(c.call(&["GET", "from"]), b"$7\r\nlibrary\r\n");
    assert_eq!(c.call(&["LRANGE", "list", "0", "-1"]), b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");
    assert_eq!(c.call(&["HGET", "hash", "f"]), b"$1\r\nv\r\n");
    assert_eq!(c.call(&["ZRANGE", "zset", "0", "-1"]), b"*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    assert_eq!(c.call(&["XLEN", "stream"]), b":1\r\n");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_library_opens_what_the_server_wrote() {
    let dir = temp_dir("server-to-lib");
    let dir_arg = dir.to_str().unwrap();
    let mut server = start_quince(QUINCE, &["--dir", dir_arg, "--appendonly", "yes", "--appendfsync", "always"]);
    let mut c = server.client();
    assert_eq!(c.call(&["SET", "from", "server"]), b"+OK\r\n");
    assert_eq!(c.call(&["SADD", "set", "x", "y"]), b":2\r\n");
    assert_eq!(c.call(&["INCRBY", "n", "41"]), b":41\r\n");
    assert_eq!(c.call(&["SELECT", "2"]), b"+OK\r\n");
    assert_eq!(c.call(&["SET", "db2", "here"]), b"+OK\r\n");
    server.terminate();
    assert!(server.wait_exit(Duration::from_secs(10)), "the server stops on SIGTERM");
    let db = Db::open(&dir).unwrap();
    assert_eq!(db.get("from").unwrap(), Some(b"server".to_vec()));
    let mut members = db.smembers("set").unwrap();
    members.sort();
    assert_eq!(members, vec![b"x".to_vec(), b"y".to_vec()]);
    assert_eq!(db.incr("n").unwrap(), 42);
    assert_eq!(db.select(2).unwrap().get("db2").unwrap(), Some(b"here".to_vec()));
    drop(db);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child process of `the_server_loads_what_a_killed_library_wrote` (run by it, not
/// alone): writes through the library with `EverySec`, says so, and waits to be killed.
#[test]
#[ignore = "helper process, started by the_server_loads_what_a_killed_library_wrote"]
fn killed_library_writer() {
    let Ok(dir) = std::env::var("QUINCE_INTEROP_DIR") else { return };
    let db = Db::open_with(&dir, Options { fsync: Fsync::EverySec, ..Options::default() }).unwrap();
    for i in 0..1000 {
        db.set(format!("k{i}"), i.to_string()).unwrap();
    }
    println!("written");
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// A library process killed with SIGKILL leaves its log's mapped tail reserved (zeros past
/// the last command); the server loads the log up to there, cuts the zeros, and appends
/// after the last command.
#[test]
fn the_server_loads_what_a_killed_library_wrote() {
    use std::io::BufRead;
    let dir = temp_dir("killed-lib");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "killed_library_writer", "--ignored", "--nocapture", "--test-threads", "1"])
        .env("QUINCE_INTEROP_DIR", &dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // (The harness prints "test NAME ... " before it on the same line.)
    assert!(lines.any(|l| l.is_ok_and(|l| l.trim_end().ends_with("written"))), "the library process wrote");
    child.kill().unwrap();
    let _ = child.wait();
    let incr = std::fs::read_dir(dir.join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".incr.aof"))
        .expect("an incremental AOF file");
    assert_eq!(std::fs::read(&incr).unwrap().last(), Some(&0), "the killed writer's tail is reserved zeros");
    let dir_arg = dir.to_str().unwrap();
    let mut server = start_quince(QUINCE, &["--dir", dir_arg, "--appendonly", "yes"]);
    let mut c = server.client();
    assert_eq!(c.call(&["DBSIZE"]), b":1000\r\n");
    assert_eq!(c.call(&["GET", "k999"]), b"$3\r\n999\r\n");
    assert_eq!(c.call(&["SET", "after", "restart"]), b"+OK\r\n");
    server.terminate();
    assert!(server.wait_exit(Duration::from_secs(10)), "the server stops on SIGTERM");
    let bytes = std::fs::read(&incr).unwrap();
    assert!(bytes.ends_with(b"$5\r\nafter\r\n$7\r\nrestart\r\n"), "appended right after the last command");
    assert!(!bytes.contains(&0), "no zeros left in the log");
    let db = Db::open(&dir).unwrap();
    assert_eq!(db.get("after").unwrap(), Some(b"restart".to_vec()));
    assert_eq!(db.get("k0").unwrap(), Some(b"0".to_vec()));
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}
