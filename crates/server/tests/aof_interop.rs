//! The append-only file against redis-server 7.0.15: quince loads the multi-part AOF Redis
//! writes (and Redis loads quince's) with the same contents, and a truncated or corrupted AOF
//! gets the same outcome on both: loaded (a torn tail cut off, with the same contents) or
//! refused at startup. Never a panic, never different data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use quince_test_util::{free_port, redis_required, which, RawClient};

/// The commands both servers log: every family, a transaction, a script, expiries, SELECT.
const WORKLOAD: &[&[&str]] = &[
    &["SET", "s1", "hello"],
    &["SET", "n", "10"],
    &["INCRBY", "n", "5"],
    &["APPEND", "s1", " world"],
    &["RPUSH", "l", "a", "b", "c"],
    &["LPUSH", "l", "z"],
    &["HSET", "h", "f1", "v1", "f2", "v2"],
    &["SADD", "set", "x", "y", "3"],
    &["ZADD", "z", "1.5", "m1", "-2", "m2"],
    &["SET", "ttl", "v", "EX", "1000"],
    &["MULTI"],
    &["INCR", "n"],
    &["RPUSH", "l", "in-tx"],
    &["EXEC"],
    &[
        "EVAL",
        "redis.call('set', KEYS[1], ARGV[1]); return redis.call('rpush', KEYS[2], ARGV[1])",
        "2",
        "scripted",
        "l",
        "from-script",
    ],
    &["SELECT", "3"],
    &["SET", "db3", "three"],
    &["SELECT", "0"],
    &["DEL", "s1"],
    &["XADD", "stream", "1-1", "f", "v"],
    &["XADD", "stream", "2-1", "g", "w"],
];

/// Damaged copies tried, half truncated at a random offset, half with one random bit flipped.
const CASES: usize = 80;

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `binary` on `dir` with the AOF on; None if it exits instead (refused to load).
fn start(binary: &Path, dir: &Path) -> Option<Server> {
    start_with(binary, dir, &["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"])
}

/// Starts `binary` on `dir` with `args`; None if it exits instead (refused to load).
fn start_with(binary: &Path, dir: &Path, args: &[&str]) -> Option<Server> {
    let port = free_port();
    let log = dir.join("server.log");
    let mut child = Command::new(binary)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
        .args(args)
        .args(["--dir", dir.to_str().unwrap(), "--logfile", log.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn server");
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return None;
        }
        // Servers accept connections while loading (-LOADING) and may still exit after.
        if ping(port).is_some_and(|reply| !reply.starts_with("-LOADING")) {
            return Some(Server { child, port });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("{} neither started nor exited on {}", binary.display(), dir.display());
}

/// One PING on a fresh connection: the reply line, or None if the server is not there.
fn ping(port: u16) -> Option<String> {
    use std::io::{BufRead, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream.write_all(b"*1\r\n$4\r\nPING\r\n").ok()?;
    let mut line = String::new();
    std::io::BufReader::new(stream).read_line(&mut line).ok()?;
    (!line.is_empty()).then_some(line)
}

/// Every key of every database with its type, contents and whether it has a TTL.
fn contents(port: u16) -> BTreeMap<Vec<u8>, String> {
    let mut client = RawClient::connect(port);
    let mut all = BTreeMap::new();
    for db in 0..16 {
        client.call(&["SELECT", &db.to_string()]);
        let keys = client.call(&["KEYS", "*"]);
        for key in parse_bulks(&keys) {
            let kind = String::from_utf8_lossy(&client.call(&[&b"TYPE"[..], &key])).trim().to_string();
            let read: &[&[u8]] = match kind.as_str() {
                "+string" => &[b"GET"],
                "+list" => &[b"LRANGE", b"0", b"-1"],
                "+hash" => &[b"HGETALL"],
                "+set" => &[b"SMEMBERS"],
                "+zset" => &[b"ZRANGE", b"0", b"-1", b"WITHSCORES"],
                "+stream" => &[b"XRANGE", b"-", b"+"],
                other => panic!("unexpected type {other} of {key:?}"),
            };
            let mut command = vec![read[0], &key[..]];
            command.extend_from_slice(&read[1..]);
            let mut value = client.call(&command);
            if matches!(kind.as_str(), "+hash" | "+set") {
                let mut items = parse_bulks(&value);
                items.sort();
                value = items.join(&b","[..]);
            }
            let ttl = client.call(&[&b"PTTL"[..], &key]);
            let has_ttl = !ttl.starts_with(b":-1");
            let mut name = format!("{db}/").into_bytes();
            name.extend_from_slice(&key);
            all.insert(name, format!("{kind} ttl={has_ttl} {}", String::from_utf8_lossy(&value)));
        }
    }
    all
}

/// The bulk strings of a flat array reply, as bytes.
fn parse_bulks(reply: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut pos = reply.iter().position(|&b| b == b'\n').map_or(reply.len(), |p| p + 1);
    while pos < reply.len() && reply[pos] == b'$' {
        let end = pos + reply[pos..].iter().position(|&b| b == b'\r').expect("length line");
        let len: usize = std::str::from_utf8(&reply[pos + 1..end]).unwrap().parse().unwrap();
        out.push(reply[end + 2..end + 2 + len].to_vec());
        pos = end + 2 + len + 2;
    }
    out
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("quince-aof-interop-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to.join("appendonlydir")).unwrap();
    for entry in std::fs::read_dir(from.join("appendonlydir")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join("appendonlydir").join(entry.file_name())).unwrap();
    }
}

fn run_workload(port: u16) {
    let mut client = RawClient::connect(port);
    for command in WORKLOAD {
        client.call(command);
    }
}

fn redis_binary() -> Option<PathBuf> {
    let found = which("redis-server");
    if found.is_none() {
        assert!(!redis_required(), "QUINCE_REQUIRE_REDIS=1 but redis-server is not on PATH");
        eprintln!("skipping: redis-server not found (apt-get install -y redis-server)");
    }
    found
}

fn quince_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_quince-server"))
}

fn incr_file(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir.join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".incr.aof"))
        .expect("an incremental AOF file")
}

#[test]
fn each_server_loads_the_others_aof_with_the_same_contents() {
    let Some(redis) = redis_binary() else { return };
    let quince = quince_binary();
    for (writer, reader) in [(&redis, &quince), (&quince, &redis)] {
        let dir = temp_dir("cross");
        let expected = {
            let server = start(writer, &dir).expect("writer starts");
            run_workload(server.port);
            contents(server.port)
        };
        assert!(expected.len() >= 9, "workload wrote too little: {expected:?}");
        let server = start(reader, &dir)
            .unwrap_or_else(|| panic!("{} refused the AOF of {}", reader.display(), writer.display()));
        assert_eq!(contents(server.port), expected, "{} loading the AOF of {}", reader.display(), writer.display());
        drop(server);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn truncated_and_corrupted_aofs_get_the_same_outcome_as_redis() {
    let Some(redis) = redis_binary() else { return };
    let golden = temp_dir("golden");
    drop({
        let server = start(&redis, &golden).expect("redis starts");
        run_workload(server.port);
        server
    });
    let original = std::fs::read(incr_file(&golden)).unwrap();
    let (loaded, refused) = compare_damaged(&original, 0x2545_f491_4f6c_dd1d, |case, mutated, name, binary| {
        let dir = temp_dir(&format!("case-{case}-{name}"));
        copy_dir(&golden, &dir);
        std::fs::write(incr_file(&dir), mutated).unwrap();
        let outcome = start(binary, &dir).map(|server| contents(server.port));
        let _ = std::fs::remove_dir_all(&dir);
        outcome
    });
    eprintln!("{CASES} damaged AOFs: {loaded} loaded alike, {refused} refused alike");
    let _ = std::fs::remove_dir_all(&golden);
}

fn describe(outcome: &Outcome) -> &'static str {
    if outcome.is_some() {
        "loaded it"
    } else {
        "refused it"
    }
}

#[test]
fn truncated_and_corrupted_rdb_files_get_the_same_outcome_as_redis() {
    let Some(redis) = redis_binary() else { return };
    let quince = quince_binary();
    let golden = temp_dir("rdb-golden");
    let rdb_args = ["--appendonly", "no"];
    drop({
        let server = start_with(&redis, &golden, &rdb_args).expect("redis starts");
        run_workload(server.port);
        let mut client = RawClient::connect(server.port);
        for i in 0..200 {
            client.call(&["HSET", "big-hash", &format!("field-{i}"), &"v".repeat(i % 70)]);
            client.call(&["ZADD", "big-zset", &i.to_string(), &format!("member-{i}")]);
        }
        assert_eq!(client.call(&["SAVE"]), b"+OK\r\n");
        server
    });
    let original = std::fs::read(golden.join("dump.rdb")).unwrap();
    // The undamaged file loads into quince with Redis's contents.
    let expected = {
        let server = start_with(&redis, &golden, &rdb_args).expect("redis reloads its RDB");
        contents(server.port)
    };
    let copy = temp_dir("rdb-copy");
    std::fs::copy(golden.join("dump.rdb"), copy.join("dump.rdb")).unwrap();
    let server = start_with(&quince, &copy, &rdb_args).expect("quince loads redis's RDB");
    assert_eq!(contents(server.port), expected);
    drop(server);
    let (loaded, refused) = compare_damaged(&original, 0x9e37_79b9_7f4a_7c15, |case, mutated, name, binary| {
        let dir = temp_dir(&format!("rdb-case-{case}-{name}"));
        std::fs::write(dir.join("dump.rdb"), mutated).unwrap();
        let outcome = start_with(binary, &dir, &rdb_args).map(|server| contents(server.port));
        let _ = std::fs::remove_dir_all(&dir);
        outcome
    });
    eprintln!("{CASES} damaged RDB files: {loaded} loaded alike, {refused} refused alike");
    let _ = std::fs::remove_dir_all(&golden);
    let _ = std::fs::remove_dir_all(&copy);
}

/// What a server made of a damaged file: its contents, or None when it refused to start.
type Outcome = Option<BTreeMap<Vec<u8>, String>>;

/// `CASES` damaged copies of `original` (half truncated at a random offset, half with one
/// random bit flipped), each loaded by redis-server and by quince through `load(case, bytes,
/// name, binary)`: both must refuse, or both load the same contents. Returns (loaded,
/// refused) counts.
fn compare_damaged(
    original: &[u8],
    seed: u64,
    mut load: impl FnMut(usize, &[u8], &str, &Path) -> Outcome,
) -> (usize, usize) {
    let Some(redis) = redis_binary() else { return (0, 0) };
    let quince = quince_binary();
    let mut rng = seed;
    let mut next = |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let (mut loaded, mut refused) = (0, 0);
    for case in 0..CASES {
        let mut mutated = original.to_vec();
        let what = if case % 2 == 0 {
            let at = next(original.len() as u64) as usize;
            mutated.truncate(at);
            format!("truncated at {at}")
        } else {
            let at = next(original.len() as u64) as usize;
            let bit = 1u8 << next(8);
            mutated[at] ^= bit;
            format!("byte {at} xor {bit:#x}")
        };
        let outcomes: Vec<Outcome> = [("redis", &redis), ("quince", &quince)]
            .into_iter()
            .map(|(name, binary)| load(case, &mutated, name, binary))
            .collect();
        assert_eq!(
            outcomes[0].is_some(),
            outcomes[1].is_some(),
            "{what}: redis {} but quince {}",
            describe(&outcomes[0]),
            describe(&outcomes[1])
        );
        assert_eq!(outcomes[0], outcomes[1], "{what}: different contents after loading");
        if outcomes[0].is_some() {
            loaded += 1;
        } else {
            refused += 1;
        }
    }
    (loaded, refused)
}

fn base_file(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir.join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".base.aof"))
        .expect("an AOF base file")
}

/// `aof-timestamp-enabled yes`: `#TS:` lines in the incremental file and at the head of a
/// rewritten base, as Redis writes them; each server loads the other's annotated files.
#[test]
fn timestamp_annotations_are_written_and_loaded_both_ways() {
    let Some(redis) = redis_binary() else { return };
    let quince = quince_binary();
    let args = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"];
    for (writer, reader) in [(&quince, &redis), (&redis, &quince)] {
        let dir = temp_dir("timestamps");
        let expected = {
            let server = start_with(writer, &dir, &args).expect("writer starts");
            let mut client = RawClient::connect(server.port);
            // Turned on at runtime (as Redis's own test does): the first write is annotated.
            assert_eq!(client.call(&["CONFIG", "SET", "aof-timestamp-enabled", "yes"]), b"+OK\r\n");
            client.call(&["SET", "before", "1"]);
            let incr = std::fs::read_to_string(incr_file(&dir)).unwrap();
            assert!(incr.starts_with("#TS:"), "{}: incr file {incr:?}", writer.display());
            client.call(&["BGREWRITEAOF"]);
            let deadline = Instant::now() + Duration::from_secs(10);
            while String::from_utf8_lossy(&client.call(&["INFO", "persistence"])).contains("aof_rewrite_in_progress:1")
                || !String::from_utf8_lossy(&client.call(&["INFO", "persistence"])).contains("aof_rewrites:1")
            {
                assert!(Instant::now() < deadline, "{}: the rewrite did not finish", writer.display());
                std::thread::sleep(Duration::from_millis(20));
            }
            let base = std::fs::read(base_file(&dir)).unwrap();
            assert!(base.starts_with(b"#TS:"), "{}: base file {:?}", writer.display(), String::from_utf8_lossy(&base));
            client.call(&["SET", "after", "2"]);
            contents(server.port)
        };
        let server = start_with(reader, &dir, &args)
            .unwrap_or_else(|| panic!("{} refused the annotated AOF of {}", reader.display(), writer.display()));
        assert_eq!(contents(server.port), expected, "{} loading the AOF of {}", reader.display(), writer.display());
        drop(server);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The single-file AOF of Redis 6 (`appendonly.aof` in `dir`, no AOF directory) becomes the
/// base of a multi-part AOF at start-up, as Redis 7.0 upgrades it: same data, the file moved
/// into the directory, the manifest naming it.
#[test]
fn an_old_style_aof_is_upgraded_like_redis() {
    let Some(redis) = redis_binary() else { return };
    let quince = quince_binary();
    let mut commands = Vec::new();
    for (k, v) in [("k1", "v1"), ("k2", "v2")] {
        commands.extend(quince_test_util::encode_command(&["SET", k, v]));
    }
    // Redis 6's default: an RDB preamble (the last rewrite) followed by the commands since.
    let with_preamble = {
        let dir = temp_dir("preamble-rdb");
        let snapshot = {
            let server =
                start_with(&redis, &dir, &["--appendonly", "no", "--dbfilename", "dump.rdb"]).expect("redis starts");
            let mut client = RawClient::connect(server.port);
            client.call(&["SET", "k0", "v0"]);
            assert_eq!(client.call(&["SAVE"]), b"+OK\r\n");
            std::fs::read(dir.join("dump.rdb")).unwrap()
        };
        let _ = std::fs::remove_dir_all(&dir);
        [snapshot, commands.clone()].concat()
    };
    for old in [commands, with_preamble] {
        let mut seen = Vec::new();
        for server in [&redis, &quince] {
            let dir = temp_dir("upgrade");
            std::fs::remove_dir_all(dir.join("appendonlydir")).ok();
            std::fs::write(dir.join("appendonly.aof"), &old).unwrap();
            let running = start_with(server, &dir, &["--appendonly", "yes"]).expect("starts on an old-style AOF");
            let mut client = RawClient::connect(running.port);
            let values = (client.call(&["GET", "k1"]), client.call(&["GET", "k2"]));
            assert_eq!(client.call(&["SET", "k3", "v3"]), b"+OK\r\n");
            let manifest = std::fs::read_to_string(dir.join("appendonlydir/appendonly.aof.manifest")).unwrap();
            let moved = (dir.join("appendonlydir/appendonly.aof").is_file(), dir.join("appendonly.aof").exists());
            drop(running);
            // And it starts again on what it wrote.
            let again = start_with(server, &dir, &["--appendonly", "yes"]).expect("restarts");
            let after = RawClient::connect(again.port).call(&["MGET", "k1", "k2", "k3"]);
            drop(again);
            seen.push((values, manifest, moved, after));
            let _ = std::fs::remove_dir_all(&dir);
        }
        assert_eq!(seen[0], seen[1], "redis-server first, quince second");
        assert_eq!(seen[1].2, (true, false), "the old file moved into the AOF directory");
    }
}
