//! A durable Db: reopening keeps the data in each fsync mode, the directory lock, and no
//! acknowledged write lost when a process using `Fsync::Always` is killed with SIGKILL.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use quince::{Db, Error, Fsync, Options};

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("quince-durable-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn reopening_keeps_the_data_in_each_fsync_mode() {
    for fsync in [Fsync::Always, Fsync::EverySec, Fsync::No] {
        let dir = temp_dir(&format!("{fsync:?}"));
        {
            let db = Db::open_with(&dir, Options { fsync, ..Options::default() }).unwrap();
            db.set("k", "v").unwrap();
            db.rpush("list", &["a", "b"]).unwrap();
            db.hset("h", &[("f", "1")]).unwrap();
            db.zadd("z", &[(1.5, "m")]).unwrap();
            db.set_with("ttl", "x", quince::SetOptions::new().expire(quince::Expiry::In(Duration::from_secs(100))))
                .unwrap();
            db.select(3).unwrap().set("in3", "yes").unwrap();
        }
        let db = Db::open_with(&dir, Options { fsync, ..Options::default() }).unwrap();
        assert_eq!(db.get("k").unwrap(), Some(b"v".to_vec()), "{fsync:?}");
        assert_eq!(db.lrange("list", 0, -1).unwrap(), vec![b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(db.hget("h", "f").unwrap(), Some(b"1".to_vec()));
        assert_eq!(db.zscore("z", "m").unwrap(), Some(1.5));
        assert!(db.ttl("ttl").unwrap().is_some_and(|t| t > Duration::from_secs(90)));
        assert_eq!(db.select(3).unwrap().get("in3").unwrap(), Some(b"yes".to_vec()));
        // The server's directory layout: a multi-part AOF under appendonlydir.
        assert!(dir.join("appendonlydir").is_dir());
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_second_open_of_the_directory_is_refused() {
    let dir = temp_dir("lock");
    let db = Db::open(&dir).unwrap();
    match Db::open(&dir) {
        Err(Error::Locked(text)) => {
            assert!(text.contains(&format!("process {}", std::process::id())), "{text}");
            assert!(text.contains("quince.lock"), "{text}");
        }
        other => panic!("expected the lock error, got {:?}", other.map(|_| ())),
    }
    drop(db);
    // Released with the Db.
    let again = Db::open(&dir).unwrap();
    drop(again);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_option_is_an_error() {
    let dir = temp_dir("badopt");
    let options = Options { config: vec![("maxmemory".into(), "lots".into())], ..Options::default() };
    match Db::open_with(&dir, options) {
        Err(Error::Open(text)) => assert!(text.contains("maxmemory"), "{text}"),
        other => panic!("expected an option error, got {:?}", other.map(|_| ())),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child process of `kill_minus_9_keeps_acknowledged_writes` (run by it, not alone):
/// opens the directory with the fsync mode in QUINCE_CRASH_FSYNC and increments a counter
/// forever, printing each value once INCR returned it.
#[test]
#[ignore = "helper process, started by kill_minus_9_keeps_acknowledged_writes"]
fn crash_writer() {
    let Ok(dir) = std::env::var("QUINCE_CRASH_DIR") else { return };
    let fsync = match std::env::var("QUINCE_CRASH_FSYNC").as_deref() {
        Ok("everysec") => Fsync::EverySec,
        _ => Fsync::Always,
    };
    let db = Db::open_with(&dir, Options { fsync, ..Options::default() }).unwrap();
    loop {
        let n = db.incr("counter").unwrap();
        db.rpush("log", &[n.to_string()]).unwrap();
        println!("ack {n}");
    }
}

/// With `Always` and with `EverySec` (whose log tail is a memory mapping: a store, not a
/// `write`, yet in the kernel's hands once done), a process killed at any moment loses no
/// write it acknowledged, and the reserved end of its log is cut at the next open.
#[test]
fn kill_minus_9_keeps_acknowledged_writes() {
    for mode in ["always", "everysec"] {
        kill_cycles(mode);
    }
}

fn kill_cycles(mode: &str) {
    let dir = temp_dir(&format!("crash-{mode}"));
    let exe = std::env::current_exe().unwrap();
    let mut last_ack = 0i64;
    let cycles = 20;
    for cycle in 0..cycles {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_writer", "--ignored", "--nocapture", "--test-threads", "1"])
            .env("QUINCE_CRASH_DIR", &dir)
            .env("QUINCE_CRASH_FSYNC", mode)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        // Let it write for a varying while (a few to a few hundred acknowledged writes).
        let run_for = Duration::from_millis(30 + (cycle * 37 % 150) as u64);
        let start = Instant::now();
        let mut acks_this_cycle = 0;
        while start.elapsed() < run_for || acks_this_cycle == 0 {
            let Some(Ok(line)) = lines.next() else { break };
            if let Some(n) = line.strip_prefix("ack ") {
                last_ack = n.parse().unwrap();
                acks_this_cycle += 1;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "the writer made no progress");
        }
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        // Acknowledgements printed before the kill landed count too.
        for line in lines.map_while(Result::ok) {
            if let Some(n) = line.strip_prefix("ack ") {
                last_ack = n.parse().unwrap();
            }
        }
        let _ = child.wait();
        if mode == "everysec" {
            let bytes = std::fs::read(incr_aof(&dir)).unwrap();
            assert_eq!(bytes.last(), Some(&0), "cycle {cycle}: the killed writer's mapped tail is left reserved");
        }
        let db = Db::open(&dir).unwrap();
        let counter: i64 =
            db.get("counter").unwrap().map(|v| String::from_utf8(v).unwrap().parse().unwrap()).unwrap_or(0);
        assert!(counter >= last_ack, "{mode} cycle {cycle}: acknowledged {last_ack}, found {counter} after SIGKILL");
        // The acknowledged RPUSH is there too: the log ends at the last acknowledged value
        // or later (a kill between an INCR and its RPUSH leaves that value out of the log).
        let tail = db.lrange("log", -1, -1).unwrap();
        let logged: i64 = tail.first().map(|v| String::from_utf8_lossy(v).parse().unwrap()).unwrap_or(0);
        assert!(logged >= last_ack, "{mode} cycle {cycle}: the log ends at {logged}, {last_ack} was acknowledged");
        drop(db);
        let bytes = std::fs::read(incr_aof(&dir)).unwrap();
        assert!(bytes.ends_with(b"\r\n"), "{mode} cycle {cycle}: a closed log ends with its last command");
    }
    assert!(last_ack > cycles as i64, "the writer acknowledged only {last_ack} writes in {cycles} cycles");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The incremental AOF file of a closed Db directory.
fn incr_aof(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(dir.join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".incr.aof"))
        .expect("an incremental AOF file")
}

/// A torn last record (a crash mid-write) is cut off at open, as `aof-load-truncated yes`
/// (the default) does in the server; with it off, the open fails naming the file. A record
/// that is not RESP fails the open with Redis's message.
#[test]
fn a_torn_or_corrupt_aof_at_open() {
    let dir = temp_dir("torn");
    {
        let db = Db::open(&dir).unwrap();
        db.set("a", "1").unwrap();
        db.set("b", "2").unwrap();
    }
    let aof = incr_aof(&dir);
    let len = std::fs::metadata(&aof).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&aof).unwrap();
    file.set_len(len - 5).unwrap();
    drop(file);

    let strict = Options { config: vec![("aof-load-truncated".into(), "no".into())], ..Options::default() };
    match Db::open_with(&dir, strict) {
        Err(Error::Open(text)) => {
            assert!(text.starts_with("Unexpected end of file reading the append only file"), "{text}");
            assert!(text.contains(".incr.aof"), "{text}");
        }
        other => panic!("expected the truncation error, got {:?}", other.map(|_| ())),
    }
    let db = Db::open(&dir).unwrap();
    assert_eq!(db.get("a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get("b").unwrap(), None, "the torn record is dropped");
    db.set("c", "3").unwrap();
    drop(db);
    let db = Db::open(&dir).unwrap();
    assert_eq!(db.get("c").unwrap(), Some(b"3".to_vec()), "writes after the cut are kept");
    drop(db);

    // A torn record followed by zeros (a killed writer's mapped tail): the zeros are no
    // part of the log, the torn record is cut as above.
    let aof = incr_aof(&dir);
    let mut bytes = std::fs::read(&aof).unwrap();
    let whole = bytes.len();
    bytes.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$1\r\nd\r\n$1\r");
    bytes.extend_from_slice(&[0u8; 5000]);
    std::fs::write(&aof, &bytes).unwrap();
    let db = Db::open(&dir).unwrap();
    assert_eq!(db.get("c").unwrap(), Some(b"3".to_vec()));
    assert_eq!(db.get("d").unwrap(), None, "the torn record is dropped");
    drop(db);
    assert_eq!(std::fs::read(&aof).unwrap().len(), whole, "cut at the last whole record");

    // Garbage in the middle of the log.
    let aof = incr_aof(&dir);
    let mut bytes = std::fs::read(&aof).unwrap();
    bytes.splice(0..0, b"this is not RESP\r\n".iter().copied());
    std::fs::write(&aof, bytes).unwrap();
    match Db::open(&dir) {
        Err(Error::Open(text)) => assert!(text.starts_with("Bad file format reading the append only file"), "{text}"),
        other => panic!("expected the format error, got {:?}", other.map(|_| ())),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
