//! MIGRATE, compared with redis-server: the same steps run with a redis-server migrating to
//! another redis-server and with quince migrating to a redis-server and to another quince,
//! replies compared byte for byte, then the keys left on each side. Also: MIGRATE is logged
//! as the DEL it amounts to, AUTH secrets are redacted, cached connections expire.
//! Skipped without redis-server unless QUINCE_REQUIRE_REDIS=1 (the quince-only tests
//! always run).

use std::time::{Duration, Instant};

use quince_test_util::{start_quince, start_redis, RawClient, ServerProcess};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

/// The steps, run on the source; `{port}` is the target's port, `{dead}` a closed one.
const STEPS: &[&[&str]] = &[
    &["SET", "k", "v"],
    &["PEXPIRE", "k", "100000"],
    &["MIGRATE", "127.0.0.1", "{port}", "k", "0", "5000"],
    &["EXISTS", "k"],
    &["MIGRATE", "127.0.0.1", "{port}", "k", "0", "5000"],
    &["RPUSH", "list", "a", "b", "c"],
    &["MIGRATE", "127.0.0.1", "{port}", "list", "3", "5000", "COPY"],
    &["MIGRATE", "127.0.0.1", "{port}", "list", "3", "5000", "COPY"],
    &["MIGRATE", "127.0.0.1", "{port}", "list", "3", "5000", "COPY", "REPLACE"],
    &["MIGRATE", "127.0.0.1", "{port}", "list", "3", "5000"],
    &["LLEN", "list"],
    &["MIGRATE", "127.0.0.1", "{port}", "list", "3", "5000", "REPLACE"],
    &["HSET", "h", "f1", "v1", "f2", "v2"],
    &["ZADD", "z", "1", "a", "2.5", "b"],
    &["SADD", "s", "x", "y"],
    &["XADD", "st", "1-1", "f", "v"],
    &["MSET", "a", "1", "b", "2", "c", "3"],
    &["MIGRATE", "127.0.0.1", "{port}", "", "1", "5000", "KEYS", "h", "nokey", "z", "s", "st", "a"],
    &["MIGRATE", "127.0.0.1", "{port}", "", "1", "5000", "KEYS", "nokey1", "nokey2"],
    &["SET", "b", "other"],
    &["MIGRATE", "127.0.0.1", "{port}", "", "1", "5000", "KEYS", "b", "c"],
    &["EXISTS", "b", "c"],
    // Errors before anything moves.
    &["MIGRATE", "127.0.0.1", "{port}", "b", "1", "5000", "KEYS", "c"],
    &["MIGRATE", "127.0.0.1", "{port}", "b", "1", "5000", "AUTH"],
    &["MIGRATE", "127.0.0.1", "{port}", "b", "1", "5000", "AUTH2", "u"],
    &["MIGRATE", "127.0.0.1", "{port}", "b", "1", "5000", "FROB"],
    &["MIGRATE", "127.0.0.1", "{port}", "b", "notanumber", "5000"],
    &["MIGRATE", "127.0.0.1", "{port}", "b", "1", "soon"],
    &["MIGRATE", "127.0.0.1", "{port}", "b", "1"],
    &["MIGRATE", "127.0.0.1", "{dead}", "b", "1", "500"],
    &["MIGRATE", "127.0.0.1", "{port}", "b", "1", "0", "AUTH", "secret"],
    &["MIGRATE", "127.0.0.1", "{port}", "b", "99", "1000"],
    &["EXISTS", "b"],
    &["COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "5", "COPY", "KEYS", "x", "y"],
    &["COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "5"],
];

fn run_steps(source: &ServerProcess, target_port: u16, dead_port: u16) -> Vec<Vec<u8>> {
    let mut c = source.client();
    STEPS
        .iter()
        .map(|step| {
            let args: Vec<String> = step
                .iter()
                .map(|a| a.replace("{port}", &target_port.to_string()).replace("{dead}", &dead_port.to_string()))
                .collect();
            c.call(&args)
        })
        .collect()
}

/// What a server holds in databases 0, 1 and 3 (DUMP of every key, TTLs within a second).
fn contents(server: &ServerProcess) -> Vec<(i64, String, Vec<u8>, bool)> {
    let mut c = server.client();
    let mut all = Vec::new();
    for db in [0, 1, 3] {
        c.call(&["SELECT", &db.to_string()]);
        for key in ["k", "list", "h", "z", "s", "st", "a", "b", "c"] {
            // (A set's DUMP lists its members in its hash table's order, which differs.)
            let dump = if key == "s" { c.call(&["SORT", key, "ALPHA"]) } else { c.call(&["DUMP", key]) };
            let ttl = c.call(&["TTL", key]);
            let has_ttl = ttl != b":-1\r\n" && ttl != b":-2\r\n";
            all.push((db, key.to_string(), dump, has_ttl));
        }
    }
    all
}

fn compare(name: &str, quince_target_args: Option<&[&str]>) {
    let Some(redis) = start_redis(&[]) else { return };
    let Some(redis_target) = start_redis(&[]) else { return };
    let quince = start_quince(QUINCE, &[]);
    let quince_target = match quince_target_args {
        Some(args) => start_quince(QUINCE, args),
        None => start_redis(&[]).expect("redis-server"),
    };
    // Nothing listens on port 1 (a free port could be taken by another test meanwhile).
    let dead = 1;
    let expected = run_steps(&redis, redis_target.port, dead);
    let got = run_steps(&quince, quince_target.port, dead);
    for (i, (e, g)) in expected.iter().zip(&got).enumerate() {
        assert_eq!(
            String::from_utf8_lossy(e),
            String::from_utf8_lossy(g),
            "{name}: step {i} {:?}: redis-server (left) and quince (right) differ",
            STEPS[i]
        );
    }
    assert_eq!(contents(&redis), contents(&quince), "{name}: the sources");
    assert_eq!(contents(&redis_target), contents(&quince_target), "{name}: the targets");
}

#[test]
fn migrates_to_redis_as_redis_does() {
    compare("quince to redis-server", None);
}

#[test]
fn migrates_to_quince_as_redis_does() {
    compare("quince to quince", Some(&[]));
}

#[test]
fn auth_as_redis_does() {
    let Some(redis) = start_redis(&[]) else { return };
    let quince = start_quince(QUINCE, &[]);
    for (source, target) in [(&redis, start_redis(&[]).expect("redis")), (&quince, start_quince(QUINCE, &[]))] {
        let mut t = target.client();
        t.call(&["CONFIG", "SET", "requirepass", "foobar"]);
        let mut c = source.client();
        let port = target.port.to_string();
        c.call(&["RPUSH", "list", "a", "b"]);
        assert_eq!(c.call(&["MIGRATE", "127.0.0.1", &port, "list", "0", "5000", "AUTH", "foobar"]), b"+OK\r\n");
        c.call(&["RPUSH", "list", "c"]);
        c.call(&["SET", "other", "1"]);
        let wrong = c.call(&["MIGRATE", "127.0.0.1", &port, "list", "0", "5000", "AUTH", "nope"]);
        assert_eq!(
            String::from_utf8_lossy(&wrong),
            "-ERR Target instance replied with error: WRONGPASS invalid username-password pair or user is disabled.\r\n",
            "{}",
            source.name
        );
        let ok =
            c.call(&["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "AUTH2", "default", "foobar", "KEYS", "other"]);
        assert_eq!(ok, b"+OK\r\n", "{}", source.name);
        assert_eq!(c.call(&["EXISTS", "list", "other"]), b":1\r\n", "{}", source.name);
        t.call(&["AUTH", "foobar"]);
        assert_eq!(t.call(&["LRANGE", "list", "0", "-1"]), b"*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    }
}

/// A target that does not answer in time: IOERR, and the key stays.
#[test]
fn a_slow_target_times_out() {
    let source = start_quince(QUINCE, &[]);
    // One worker: DEBUG SLEEP holds the whole target, as it does a redis-server.
    let target = start_quince(QUINCE, &["--threads", "1", "--enable-debug-command", "yes"]);
    let mut c = source.client();
    c.call(&["SET", "key", "value"]);
    let mut sleeper = target.client();
    sleeper.send(&["DEBUG", "SLEEP", "1.5"]);
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    let reply = c.call(&["MIGRATE", "127.0.0.1", &target.port.to_string(), "key", "0", "300"]);
    assert_eq!(reply, b"-IOERR error or timeout reading to target instance\r\n");
    assert!(started.elapsed() < Duration::from_millis(1200), "{:?}", started.elapsed());
    assert_eq!(c.call(&["EXISTS", "key"]), b":1\r\n");
    assert_eq!(sleeper.read_reply(), b"+OK\r\n");
}

/// MIGRATE reaches the AOF as the DEL it amounts to (a reload does not bring the key back,
/// nor migrate it again); its AUTH password is redacted from the slow log.
#[test]
fn logged_as_del_and_redacted() {
    let source = start_quince(QUINCE, &["--appendonly", "yes", "--enable-debug-command", "yes"]);
    let target = start_quince(QUINCE, &["--requirepass", "hunter2"]);
    let port = target.port.to_string();
    let mut c = source.client();
    c.call(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    c.call(&["SET", "moved", "1"]);
    c.call(&["SET", "copied", "1"]);
    assert_eq!(c.call(&["MIGRATE", "127.0.0.1", &port, "moved", "0", "5000", "AUTH", "hunter2"]), b"+OK\r\n");
    assert_eq!(c.call(&["MIGRATE", "127.0.0.1", &port, "copied", "0", "5000", "COPY", "AUTH", "hunter2"]), b"+OK\r\n");
    let slowlog = c.call(&["SLOWLOG", "GET", "3"]);
    let text = String::from_utf8_lossy(&slowlog);
    assert!(text.contains("(redacted)") && !text.contains("hunter2"), "{text}");
    assert_eq!(c.call(&["DEBUG", "LOADAOF"]), b"+OK\r\n");
    assert_eq!(c.call(&["EXISTS", "moved", "copied"]), b":1\r\n");
    let mut t = target.client();
    t.call(&["AUTH", "hunter2"]);
    assert_eq!(t.call(&["EXISTS", "moved", "copied"]), b":2\r\n");
}

/// Connections are cached per target and closed after 10 idle seconds (INFO
/// migrate_cached_sockets); a cached connection the target dropped is replaced silently.
#[test]
fn cached_connections() {
    let source = start_quince(QUINCE, &[]);
    let target = start_quince(QUINCE, &[]);
    let port = target.port.to_string();
    let mut c = source.client();
    let cached = |c: &mut RawClient| {
        let info = String::from_utf8_lossy(&c.call(&["INFO", "stats"])).into_owned();
        info.lines().find_map(|l| l.strip_prefix("migrate_cached_sockets:")).unwrap_or("?").to_string()
    };
    assert_eq!(cached(&mut c), "0");
    c.call(&["SET", "a", "1"]);
    assert_eq!(c.call(&["MIGRATE", "127.0.0.1", &port, "a", "0", "5000"]), b"+OK\r\n");
    assert_eq!(cached(&mut c), "1");
    // The target drops every client: the next MIGRATE reconnects once and succeeds.
    let mut t = target.client();
    t.call(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
    c.call(&["SET", "b", "2"]);
    assert_eq!(c.call(&["MIGRATE", "127.0.0.1", &port, "b", "0", "5000"]), b"+OK\r\n");
    assert_eq!(t.call(&["EXISTS", "a", "b"]), b":2\r\n");
    let deadline = Instant::now() + Duration::from_secs(15);
    while cached(&mut c) != "0" {
        assert!(Instant::now() < deadline, "the cached connection was never closed");
        std::thread::sleep(Duration::from_millis(250));
    }
}
