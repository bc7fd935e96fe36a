//! REPLICAOF: quince follows a master — a real redis-server 7.0.15 or another quince — by
//! SYNC: the snapshot replaces its dataset, the stream keeps it equal, clients' writes get
//! READONLY, and REPLICAOF NO ONE makes it a master again.

use std::time::{Duration, Instant};

use quince_test_util::{start_quince, start_redis, RawClient, ServerProcess};

fn text(reply: Vec<u8>) -> String {
    String::from_utf8_lossy(&reply).into_owned()
}

/// Waits until `check` holds on the replica (the link works in the background).
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn follow(master: &ServerProcess, replica: &ServerProcess) {
    let (mut m, mut r) = (master.client(), replica.client());
    m.call(&["FLUSHALL"]);
    m.call(&["SET", "before", "sync"]);
    m.call(&["RPUSH", "list", "a", "b"]);
    m.call(&["SELECT", "2"]);
    m.call(&["HSET", "h", "f", "v"]);
    m.call(&["SELECT", "0"]);
    r.call(&["SET", "replica-only", "gone after the sync"]);
    let port = master.port.to_string();
    assert_eq!(text(r.call(&["REPLICAOF", "127.0.0.1", &port])), "+OK\r\n");
    assert_eq!(text(r.call(&["REPLICAOF", "127.0.0.1", &port])), "+OK Already connected to specified master\r\n");
    eventually("the snapshot", || r.call(&["GET", "before"]) == b"$4\r\nsync\r\n");
    assert_eq!(text(r.call(&["EXISTS", "replica-only"])), ":0\r\n");
    assert_eq!(text(r.call(&["LRANGE", "list", "0", "-1"])), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    // The stream: writes, a transaction, a script, expiry as absolute time.
    m.call(&["SET", "after", "1", "EX", "1000"]);
    m.call(&["MULTI"]);
    m.call(&["INCR", "n"]);
    m.call(&["INCR", "n"]);
    m.call(&["EXEC"]);
    m.call(&["EVAL", "redis.call('rpush', KEYS[1], 'c'); return 1", "1", "list"]);
    eventually("the stream", || r.call(&["LLEN", "list"]) == b":3\r\n");
    assert_eq!(text(r.call(&["GET", "n"])), "$1\r\n2\r\n");
    let ttl: i64 = text(r.call(&["TTL", "after"]))[1..].trim().parse().unwrap();
    assert!((990..=1000).contains(&ttl), "TTL {ttl}");
    r.call(&["SELECT", "2"]);
    assert_eq!(text(r.call(&["HGET", "h", "f"])), "$1\r\nv\r\n");
    r.call(&["SELECT", "0"]);
    assert_eq!(text(r.call(&["SET", "x", "1"])), "-READONLY You can't write against a read only replica.\r\n");
    assert!(text(r.call(&["INFO", "replication"])).contains("role:slave\r\nmaster_host:127.0.0.1"));
    assert_eq!(text(r.call(&["REPLICAOF", "NO", "ONE"])), "+OK\r\n");
    assert_eq!(text(r.call(&["SET", "x", "1"])), "+OK\r\n");
    assert!(text(r.call(&["INFO", "replication"])).contains("role:master"));
    assert_eq!(text(r.call(&["REPLICAOF", "127.0.0.1", "70000"])), "-ERR Invalid master port\r\n");
}

#[test]
fn quince_follows_a_redis_master() {
    let Some(master) = start_redis(&[]) else { return };
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    follow(&master, &replica);
}

#[test]
fn quince_follows_a_quince_master() {
    let master = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    follow(&master, &replica);
}

#[test]
fn a_replica_with_its_link_down_refuses_stale_reads_when_asked() {
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    let mut r = RawClient::connect(replica.port);
    r.call(&["CONFIG", "SET", "replica-serve-stale-data", "no"]);
    // Port 1 on loopback: nothing listens, the link stays down.
    r.call(&["REPLICAOF", "127.0.0.1", "1"]);
    let masterdown = "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n";
    assert_eq!(text(r.call(&["GET", "k"])), masterdown);
    assert!(text(r.call(&["INFO", "replication"])).contains("master_link_status:down"));
    r.call(&["MULTI"]);
    assert_eq!(text(r.call(&["PING"])), masterdown);
    assert_eq!(text(r.call(&["EXEC"])), "-EXECABORT Transaction discarded because of previous errors.\r\n");
    r.call(&["CONFIG", "SET", "replica-serve-stale-data", "yes"]);
    assert_eq!(text(r.call(&["GET", "k"])), "$-1\r\n");
    r.call(&["REPLICAOF", "NO", "ONE"]);
}

// ---- PSYNC2: full and partial syncs across quince and redis-server, WAIT, restarts ----

/// `field:value` of INFO's replication section.
fn info_field(client: &mut RawClient, section: &str, field: &str) -> Option<String> {
    let info = text(client.call(&["INFO", section]));
    info.lines().find_map(|l| l.strip_prefix(&format!("{field}:")).map(|v| v.trim().to_string()))
}

fn info_int(client: &mut RawClient, section: &str, field: &str) -> i64 {
    info_field(client, section, field).and_then(|v| v.parse().ok()).unwrap_or(-1)
}

/// `count` writes of every type, pipelined in batches: strings with TTLs, counters,
/// lists, hashes, sets, sorted sets, streams, HyperLogLogs, bitmaps, geo, a second
/// database, transactions and scripts, deletions.
fn write_every_type(port: u16, count: usize, seed: usize) {
    let mut c = RawClient::connect(port);
    let mut sent = 0;
    while sent < count {
        let batch = (count - sent).min(500);
        for i in sent..sent + batch {
            let n = seed * 1_000_003 + i;
            let key = |kind: &str| format!("{kind}:{}", n % 997);
            let v = n.to_string();
            let command: Vec<String> = match i % 16 {
                0 => vec!["SET".into(), key("s"), v, "EX".into(), "1000".into()],
                1 => vec!["INCRBY".into(), key("n"), (n % 7).to_string()],
                2 => vec!["RPUSH".into(), key("l"), v.clone(), v],
                3 => vec!["LPOP".into(), key("l")],
                4 => vec!["HSET".into(), key("h"), format!("f{}", n % 13), v],
                5 => vec!["SADD".into(), key("set"), format!("m{}", n % 31)],
                6 => vec!["SREM".into(), key("set"), format!("m{}", n % 29)],
                7 => vec!["ZADD".into(), key("z"), (n % 101).to_string(), format!("m{}", n % 17)],
                8 => vec!["XADD".into(), key("x"), "MAXLEN".into(), "50".into(), "*".into(), "f".into(), v],
                9 => vec!["PFADD".into(), key("hll"), v],
                10 => vec!["SETBIT".into(), key("bits"), (n % 4096).to_string(), "1".into()],
                11 => vec!["GEOADD".into(), key("geo"), "13.36".into(), "38.11".into(), v],
                12 => vec![
                    "EVAL".into(),
                    "redis.call('incr', KEYS[1]) return redis.call('append', KEYS[2], ARGV[1])".into(),
                    "2".into(),
                    key("n"),
                    key("s2"),
                    "x".into(),
                ],
                13 => vec!["DEL".into(), key("s")],
                14 => vec!["PEXPIRE".into(), key("h"), "500000".into()],
                _ => vec!["APPEND".into(), key("s3"), v],
            };
            c.send(&command);
        }
        for _ in 0..batch {
            c.read_reply();
        }
        // A transaction and another database now and then.
        c.call(&["MULTI"]);
        c.call(&["INCR", "tx"]);
        c.call(&["LPUSH", "txl", &sent.to_string()]);
        c.call(&["EXEC"]);
        c.call(&["SELECT", "3"]);
        c.call(&["SET", &format!("db3:{}", sent % 100), &sent.to_string()]);
        c.call(&["SELECT", "0"]);
        sent += batch;
    }
}

/// Waits until the replica has applied everything the master streamed, then compares
/// DEBUG DIGEST (every database, every type, TTLs included).
fn assert_in_sync(master: &mut RawClient, replica: &mut RawClient) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let m = info_int(master, "replication", "master_repl_offset");
        let r = info_int(replica, "replication", "master_repl_offset");
        let up = info_field(replica, "replication", "master_link_status").as_deref() == Some("up");
        if up && m == r {
            break;
        }
        assert!(Instant::now() < deadline, "replica never caught up: master {m}, replica {r}, link up {up}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (dm, dr) = (text(master.call(&["DEBUG", "DIGEST"])), text(replica.call(&["DEBUG", "DIGEST"])));
    assert!(dm.len() == 43 && dm.starts_with('+'), "DEBUG DIGEST answered {dm}");
    assert_eq!(dm, dr, "the datasets differ");
    assert_ne!(dm, "+0000000000000000000000000000000000000000\r\n", "an empty dataset proves nothing");
}

/// Full sync while 100,000 writes of every type go on, then partial resyncs after the link
/// is cut from either side; the master's counters say which kind each sync was.
fn sync_full_then_partial(master: &ServerProcess, replica: &ServerProcess) {
    let (mut m, mut r) = (master.client(), replica.client());
    write_every_type(master.port, 5_000, 1);
    let port = master.port;
    let writer = std::thread::spawn(move || write_every_type(port, 100_000, 2));
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(text(r.call(&["REPLICAOF", "127.0.0.1", &master.port.to_string()])), "+OK\r\n");
    writer.join().expect("the writer");
    assert_in_sync(&mut m, &mut r);
    assert_eq!(info_int(&mut m, "stats", "sync_full"), 1);
    let partial_before = info_int(&mut m, "stats", "sync_partial_ok");

    // The master drops the replica; the replica drops the master: both continue.
    assert_eq!(text(m.call(&["CLIENT", "KILL", "TYPE", "replica"])), ":1\r\n");
    write_every_type(master.port, 3_000, 3);
    assert_in_sync(&mut m, &mut r);
    assert_eq!(text(r.call(&["CLIENT", "KILL", "TYPE", "master"])), ":1\r\n");
    write_every_type(master.port, 3_000, 4);
    assert_in_sync(&mut m, &mut r);
    assert_eq!(info_int(&mut m, "stats", "sync_full"), 1, "a cut link must not cost a full sync");
    assert_eq!(info_int(&mut m, "stats", "sync_partial_ok"), partial_before + 2);

    // ROLE on both sides.
    let role = text(r.call(&["ROLE"]));
    assert!(
        role.starts_with(&format!("*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:{}\r\n$9\r\nconnected\r\n:", master.port)),
        "{role}"
    );
    let role = text(m.call(&["ROLE"]));
    assert!(role.starts_with("*3\r\n$6\r\nmaster\r\n:"), "{role}");
    assert!(
        role.contains(&format!("$9\r\n127.0.0.1\r\n${}\r\n{}\r\n", replica.port.to_string().len(), replica.port)),
        "{role}"
    );
}

const NO_DELAY: [&str; 4] = ["--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes"];
const DEBUG: [&str; 2] = ["--enable-debug-command", "yes"];

#[test]
fn redis_replica_of_a_quince_master_syncs_fully_then_partially() {
    let Some(replica) = start_redis(&["--enable-debug-command", "yes"]) else { return };
    let master = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    sync_full_then_partial(&master, &replica);
}

#[test]
fn quince_replica_of_a_redis_master_syncs_fully_then_partially() {
    let Some(master) = start_redis(&["--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"]) else {
        return;
    };
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &DEBUG);
    sync_full_then_partial(&master, &replica);
}

#[test]
fn quince_replica_of_a_quince_master_syncs_fully_then_partially() {
    let master = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &DEBUG);
    sync_full_then_partial(&master, &replica);
}

fn kill_signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill").args([signal, &pid.to_string()]).status().expect("kill runs");
    assert!(status.success());
}

#[test]
fn wait_counts_the_replicas_that_acknowledged() {
    let master = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let replicas = [
        start_quince(env!("CARGO_BIN_EXE_quince-server"), &DEBUG),
        start_quince(env!("CARGO_BIN_EXE_quince-server"), &DEBUG),
    ];
    let mut m = master.client();
    // No write yet on this connection: nothing to wait for.
    assert_eq!(text(m.call(&["WAIT", "2", "100"])), ":0\r\n");
    for replica in &replicas {
        replica.client().call(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    }
    eventually("two replicas online", || info_int(&mut m, "replication", "connected_slaves") == 2);
    // The backlog's memory shows in INFO memory (and counts toward the replication buffers).
    assert_eq!(info_int(&mut m, "memory", "mem_replication_backlog"), 1 << 20);
    // CONFIG SET resizes the backlog at once (a MULTI that shrinks it then writes counts).
    m.call(&["CONFIG", "SET", "repl-backlog-size", "16384"]);
    assert_eq!(info_int(&mut m, "memory", "mem_replication_backlog"), 16384);
    m.call(&["CONFIG", "SET", "repl-backlog-size", "1mb"]);
    assert!(info_int(&mut m, "memory", "mem_total_replication_buffers") >= 1 << 20);
    assert!(info_int(&mut m, "memory", "mem_clients_normal") >= 0);
    m.call(&["SET", "k", "v"]);
    assert_eq!(text(m.call(&["WAIT", "2", "1000"])), ":2\r\n");
    assert_eq!(text(m.call(&["WAIT", "0", "0"])), ":2\r\n");
    // One replica stopped: WAIT for both times out with the one that answered.
    kill_signal(replicas[1].pid(), "-STOP");
    m.call(&["INCR", "n"]);
    let started = Instant::now();
    let waited = text(m.call(&["WAIT", "2", "500"]));
    assert_eq!(waited, ":1\r\n", "after {:?}: {}", started.elapsed(), text(m.call(&["INFO", "replication"])));
    assert!(started.elapsed() >= Duration::from_millis(450), "WAIT returned before its timeout");
    assert_eq!(text(m.call(&["WAIT", "1", "0"])), ":1\r\n");
    kill_signal(replicas[1].pid(), "-CONT");
    assert_eq!(text(m.call(&["WAIT", "2", "5000"])), ":2\r\n");
    // Inside MULTI it never blocks; on a replica it is refused; bad arguments as Redis.
    m.call(&["MULTI"]);
    m.call(&["SET", "k", "w"]);
    m.call(&["WAIT", "5", "0"]);
    let exec = text(m.call(&["EXEC"]));
    assert!(exec.starts_with("*2\r\n+OK\r\n:"), "{exec}");
    let mut r = replicas[0].client();
    assert!(text(r.call(&["WAIT", "1", "0"])).starts_with("-ERR WAIT cannot be used with replica instances."));
    // min-replicas-to-write counts replicas that acknowledged within the lag.
    m.call(&["CONFIG", "SET", "min-replicas-to-write", "2"]);
    assert_eq!(text(m.call(&["SET", "k", "x"])), "+OK\r\n");
    assert_eq!(info_int(&mut m, "replication", "min_slaves_good_slaves"), 2);
    m.call(&["CONFIG", "SET", "min-replicas-to-write", "3"]);
    assert_eq!(text(m.call(&["SET", "k", "x"])), "-NOREPLICAS Not enough good replicas to write.\r\n");
}

/// WAIT counts a replica once it has the write in its AOF as its `appendfsync` wants (as
/// Redis's replica flushes its AOF before answering its master): a replica killed right
/// after acknowledging loses none of those writes. Before, the acknowledgement could leave
/// while the write still waited for the replica's log writer: the last ~25 ms of writes
/// that WAIT had counted were gone after the replica's restart.
#[test]
fn a_replica_acknowledges_only_writes_in_its_log() {
    let master = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let dir = quince_test_util::server_dir("replica-ack-log");
    let master_port = master.port.to_string();
    let log = ["--dir", dir.to_str().unwrap(), "--appendonly", "yes", "--appendfsync", "always"];
    let replica_args = [&log[..], &["--replicaof", "127.0.0.1", &master_port]].concat();
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &replica_args);
    let mut m = master.client();
    eventually("the replica online", || text(m.call(&["INFO", "replication"])).contains("state=online"));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (port, stop) = (master.port, stop.clone());
            std::thread::spawn(move || {
                let mut c = RawClient::connect(port);
                let key = format!("acked:{w}");
                let mut acked = Vec::new();
                for i in 0.. {
                    if stop.load(std::sync::atomic::Ordering::SeqCst) {
                        break;
                    }
                    c.call(&["RPUSH", &key, &i.to_string()]);
                    if c.call(&["WAIT", "1", "200"]) == b":1\r\n" {
                        acked.push(i.to_string());
                    }
                }
                (key, acked)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(800));
    kill_signal(replica.pid(), "-STOP");
    std::thread::sleep(Duration::from_millis(300));
    kill_signal(replica.pid(), "-KILL");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let written: Vec<_> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    drop(replica);
    // The replica alone again, from its own log.
    let restarted = start_quince(env!("CARGO_BIN_EXE_quince-server"), &log);
    let mut r = restarted.client();
    let mut total = 0;
    for (key, acked) in written {
        let reply = text(r.call(&["LRANGE", &key, "0", "-1"]));
        let kept: std::collections::HashSet<&str> =
            reply.split("\r\n").filter(|l| !l.starts_with(['*', '$'])).collect();
        let lost: Vec<&String> = acked.iter().filter(|i| !kept.contains(i.as_str())).collect();
        assert!(lost.is_empty(), "{key}: {} of {} acknowledged writes lost: {lost:?}", lost.len(), acked.len());
        total += acked.len();
    }
    assert!(total > 100, "only {total} writes were acknowledged");
    drop(restarted);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_replica_restarted_from_its_snapshot_continues_partially() {
    let master = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let dir = quince_test_util::server_dir("replica-restart");
    let master_port = master.port.to_string();
    let args =
        ["--replicaof", "127.0.0.1", &master_port, "--dir", dir.to_str().unwrap(), "--enable-debug-command", "yes"];
    let mut m = master.client();
    write_every_type(master.port, 2_000, 5);
    {
        let mut replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &args);
        let mut r = replica.client();
        // The directive shows in CONFIG GET; the link syncs on its own.
        assert_eq!(
            text(r.call(&["CONFIG", "GET", "replicaof"])),
            format!("*2\r\n$9\r\nreplicaof\r\n${}\r\n127.0.0.1 {}\r\n", master_port.len() + 10, master_port)
        );
        assert_in_sync(&mut m, &mut r);
        // SHUTDOWN SAVE writes the history (repl-id, repl-offset) into the snapshot.
        r.send(&["SHUTDOWN", "SAVE"]);
        assert!(replica.wait_exit(Duration::from_secs(10)));
    }
    write_every_type(master.port, 1_000, 6);
    let full = info_int(&mut m, "stats", "sync_full");
    let partial = info_int(&mut m, "stats", "sync_partial_ok");
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &args);
    let mut r = replica.client();
    assert_in_sync(&mut m, &mut r);
    assert_eq!(info_int(&mut m, "stats", "sync_full"), full, "the restart cost a full sync");
    assert_eq!(info_int(&mut m, "stats", "sync_partial_ok"), partial + 1);
    drop(replica);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_promoted_replica_lets_the_others_and_the_old_master_continue() {
    let a = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let b = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let c = start_quince(env!("CARGO_BIN_EXE_quince-server"), &DEBUG);
    let (mut ca, mut cb, mut cc) = (a.client(), b.client(), c.client());
    for client in [&mut cb, &mut cc] {
        client.call(&["REPLICAOF", "127.0.0.1", &a.port.to_string()]);
    }
    write_every_type(a.port, 3_000, 7);
    assert_in_sync(&mut ca, &mut cb);
    assert_in_sync(&mut ca, &mut cc);
    // B is promoted; C and then A follow it without a full sync (B's secondary ID).
    assert_eq!(text(cb.call(&["REPLICAOF", "NO", "ONE"])), "+OK\r\n");
    let old_id = info_field(&mut ca, "replication", "master_replid").unwrap();
    assert_eq!(info_field(&mut cb, "replication", "master_replid2").as_deref(), Some(old_id.as_str()));
    cc.call(&["REPLICAOF", "127.0.0.1", &b.port.to_string()]);
    ca.call(&["REPLICAOF", "127.0.0.1", &b.port.to_string()]);
    write_every_type(b.port, 2_000, 8);
    assert_in_sync(&mut cb, &mut cc);
    assert_in_sync(&mut cb, &mut ca);
    assert_eq!(info_int(&mut cb, "stats", "sync_full"), 0);
    assert_eq!(info_int(&mut cb, "stats", "sync_partial_ok"), 2);
    // A chained replica: C follows A, which follows B.
    cc.call(&["REPLICAOF", "127.0.0.1", &a.port.to_string()]);
    write_every_type(b.port, 1_000, 9);
    assert_in_sync(&mut cb, &mut ca);
    assert_in_sync(&mut ca, &mut cc);
}

#[test]
fn replication_commands_answer_as_redis() {
    let Some(mut d) = quince_test_util::Differential::start(env!("CARGO_BIN_EXE_quince-server")) else { return };
    use quince_test_util::Step;
    let mut steps = Vec::new();
    for name in ["psync", "replconf", "wait", "role", "sync", "replicaof", "slaveof", "failover"] {
        steps.push(Step::cmd(&["COMMAND", "INFO", name]));
        steps.push(Step::cmd(&["COMMAND", "DOCS", name]));
    }
    steps.extend([
        Step::cmd(&["ROLE"]),
        Step::cmd(&["WAIT", "0", "0"]),
        Step::cmd(&["WAIT", "1", "50"]),
        Step::cmd(&["WAIT", "x", "0"]),
        Step::cmd(&["WAIT", "1", "x"]),
        Step::cmd(&["WAIT", "1", "-1"]),
        Step::cmd(&["WAIT", "1"]),
        Step::cmd(&["REPLCONF"]),
        Step::cmd(&["REPLCONF", "listening-port"]),
        Step::cmd(&["REPLCONF", "listening-port", "x"]),
        Step::cmd(&["REPLCONF", "listening-port", "7000", "capa", "eof", "capa", "psync2"]),
        Step::cmd(&["REPLCONF", "nosuch", "1"]),
        // ACK from a connection that is not a replica, and GETACK, get no reply at all.
        Step::Raw(b"REPLCONF ack 10\r\nREPLCONF getack *\r\nPING\r\n".to_vec()),
        Step::cmd(&["REPLCONF", "ip-address", &"1".repeat(255)]),
        Step::cmd(&["REPLCONF", "ip-address", &"1".repeat(256)]),
        Step::cmd(&["FAILOVER"]),
        Step::cmd(&["FAILOVER", "ABORT"]),
        Step::cmd(&["FAILOVER", "TIMEOUT", "0"]),
        Step::cmd(&["FAILOVER", "TIMEOUT", "x"]),
        Step::cmd(&["FAILOVER", "TO", "127.0.0.1"]),
        Step::cmd(&["FAILOVER", "TO", "127.0.0.1", "x"]),
        Step::cmd(&["FAILOVER", "FORCE"]),
        Step::cmd(&["FAILOVER", "FORCE", "FORCE"]),
        Step::cmd(&["FAILOVER", "nosuch"]),
        Step::cmd(&["PSYNC", "x", "1", "FAILOVER"]),
        Step::cmd(&["PSYNC", "x"]),
        Step::cmd(&["PSYNC", "?", "x"]),
        Step::cmd(&["SET", "after", "all"]),
    ]);
    d.run("replication commands", &steps);
}

/// A master that speaks the handshake and then sends what the test gives it.
struct FakeMaster {
    listener: std::net::TcpListener,
}

impl FakeMaster {
    fn new() -> FakeMaster {
        FakeMaster { listener: std::net::TcpListener::bind("127.0.0.1:0").unwrap() }
    }

    fn port(&self) -> u16 {
        self.listener.local_addr().unwrap().port()
    }

    /// Accepts the replica, answers PING, REPLCONF and PSYNC (with `psync_reply`), then
    /// writes `then`; returns the connection.
    fn serve(&self, psync_reply: &[u8], then: &[u8]) -> std::net::TcpStream {
        use std::io::{BufRead, BufReader, Write};
        let (mut stream, _) = self.listener.accept().unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            let argc: usize = header.trim()[1..].parse().unwrap();
            let mut args = Vec::new();
            for _ in 0..argc {
                let mut len = String::new();
                reader.read_line(&mut len).unwrap();
                let mut arg = String::new();
                reader.read_line(&mut arg).unwrap();
                args.push(arg.trim().to_ascii_uppercase());
            }
            match args[0].as_str() {
                "PING" => stream.write_all(b"+PONG\r\n").unwrap(),
                "REPLCONF" => stream.write_all(b"+OK\r\n").unwrap(),
                "PSYNC" => {
                    stream.write_all(psync_reply).unwrap();
                    stream.write_all(then).unwrap();
                    return stream;
                }
                other => panic!("unexpected {other}"),
            }
        }
    }
}

/// A snapshot of a real server holding `key` = `value` (from SYNC).
fn snapshot_with(key: &str, value: &str) -> Vec<u8> {
    use std::io::{BufRead, BufReader, Read, Write};
    let server = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    server.client().call(&["SET", key, value]);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream.write_all(b"SYNC\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let mut header = String::new();
    while header.trim().is_empty() {
        header.clear();
        reader.read_line(&mut header).unwrap();
    }
    let len: usize = header.trim()[1..].parse().unwrap();
    let mut rdb = vec![0; len];
    reader.read_exact(&mut rdb).unwrap();
    rdb
}

#[test]
fn a_malformed_snapshot_or_stream_from_the_master_is_refused_and_retried() {
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    let mut r = replica.client();
    r.call(&["SET", "old", "data"]);
    let fake = FakeMaster::new();
    let id = "a".repeat(40);
    r.call(&["REPLICAOF", "127.0.0.1", &fake.port().to_string()]);

    // A corrupt snapshot: refused, nothing half loaded, and the replica tries again.
    let full = format!("+FULLRESYNC {id} 0\r\n");
    let _first = fake.serve(full.as_bytes(), b"$12\r\nREDIS0010xyz");
    let good = snapshot_with("k", "v");
    let mut payload = format!("${}\r\n", good.len()).into_bytes();
    payload.extend_from_slice(&good);
    // The retry: a good snapshot, one command, then garbage in the stream.
    let set: &[u8] = b"*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$1\r\n1\r\n";
    let mut then = payload.clone();
    then.extend_from_slice(set);
    then.extend_from_slice(b"*2\r\n$3\r\nSET\r\n$-7\r\n");
    let _second = fake.serve(full.as_bytes(), &then);
    eventually("the good snapshot and the command before the garbage", || {
        r.call(&["GET", "k"]) == b"$1\r\nv\r\n" && r.call(&["GET", "x"]) == b"$1\r\n1\r\n"
    });
    assert_eq!(text(r.call(&["EXISTS", "old"])), ":0\r\n");
    // The protocol error drops the link; the replica connects again and asks to continue
    // from the bytes it applied (the snapshot's offset 0, then the SET's bytes).
    let third = std::thread::spawn(move || {
        use std::io::{BufRead, BufReader};
        let (stream, _) = fake.listener.accept().unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut lines = Vec::new();
        let mut reader = BufReader::new(stream);
        while !lines.iter().any(|l: &String| l.starts_with("PSYNC")) {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            let argc: usize = header.trim()[1..].parse().unwrap();
            let mut args = Vec::new();
            for _ in 0..argc {
                let mut len = String::new();
                reader.read_line(&mut len).unwrap();
                let mut arg = String::new();
                reader.read_line(&mut arg).unwrap();
                args.push(arg.trim().to_string());
            }
            let reply: &[u8] = if args[0] == "PING" { b"+PONG\r\n" } else { b"+OK\r\n" };
            std::io::Write::write_all(reader.get_mut(), reply).unwrap();
            lines.push(args.join(" "));
        }
        lines
    });
    let lines = third.join().unwrap();
    assert_eq!(lines.last().unwrap(), &format!("PSYNC {id} {}", set.len() + 1), "{lines:?}");
    assert_eq!(text(r.call(&["PING"])), "+PONG\r\n");
}

#[test]
fn failover_hands_the_master_role_to_a_replica() {
    let a = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let b = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let c = start_quince(env!("CARGO_BIN_EXE_quince-server"), &DEBUG);
    let (mut ca, mut cb, mut cc) = (a.client(), b.client(), c.client());
    cb.call(&["REPLICAOF", "127.0.0.1", &a.port.to_string()]);
    cc.call(&["REPLICAOF", "127.0.0.1", &a.port.to_string()]);
    write_every_type(a.port, 2_000, 10);
    assert_in_sync(&mut ca, &mut cb);
    assert_in_sync(&mut ca, &mut cc);
    // Errors first, as Redis's.
    assert_eq!(text(cb.call(&["FAILOVER"])), "-ERR FAILOVER is not valid when server is a replica.\r\n");
    assert_eq!(
        text(ca.call(&["FAILOVER", "TO", "127.0.0.1", "1"])),
        "-ERR FAILOVER target HOST and PORT is not a replica.\r\n"
    );
    assert_eq!(
        text(ca.call(&["FAILOVER", "TO", "127.0.0.1", &b.port.to_string(), "FORCE"])),
        "-ERR FAILOVER with force option requires both a timeout and target HOST and IP.\r\n"
    );
    // A failover to B: writes pause, B catches up and takes over, A follows B.
    assert_eq!(text(ca.call(&["FAILOVER", "TO", "127.0.0.1", &b.port.to_string(), "TIMEOUT", "5000"])), "+OK\r\n");
    eventually("B to be the master", || {
        info_field(&mut cb, "replication", "role").as_deref() == Some("master")
            && info_field(&mut ca, "replication", "master_link_status").as_deref() == Some("up")
    });
    assert_eq!(info_field(&mut ca, "replication", "master_port"), Some(b.port.to_string()));
    assert_eq!(info_field(&mut ca, "replication", "master_failover_state").as_deref(), Some("no-failover"));
    assert_eq!(info_int(&mut cb, "stats", "sync_partial_ok"), 1, "A continued from B partially");
    assert_eq!(text(ca.call(&["SET", "k", "v"])), "-READONLY You can't write against a read only replica.\r\n");
    write_every_type(b.port, 1_000, 11);
    assert_in_sync(&mut cb, &mut ca);
    // C, A's replica, follows the chain.
    assert_in_sync(&mut ca, &mut cc);
    // FAILOVER ABORT ends one that waits (a replica that never catches up: stopped).
    kill_signal(a.pid(), "-STOP");
    cb.call(&["SET", "x", "1"]);
    assert_eq!(text(cb.call(&["FAILOVER", "TIMEOUT", "10000"])), "+OK\r\n");
    assert_eq!(info_field(&mut cb, "replication", "master_failover_state").as_deref(), Some("waiting-for-sync"));
    assert_eq!(text(cb.call(&["FAILOVER", "TIMEOUT", "10"])), "-ERR FAILOVER already in progress.\r\n");
    assert_eq!(text(cb.call(&["FAILOVER", "ABORT"])), "+OK\r\n");
    assert_eq!(info_field(&mut cb, "replication", "master_failover_state").as_deref(), Some("no-failover"));
    assert_eq!(text(cb.call(&["SET", "y", "1"])), "+OK\r\n", "writes resume after the abort");
    // A timeout without FORCE gives up; the master stays the master.
    assert_eq!(text(cb.call(&["FAILOVER", "TIMEOUT", "300"])), "+OK\r\n");
    eventually("the failover to time out", || {
        info_field(&mut cb, "replication", "master_failover_state").as_deref() == Some("no-failover")
    });
    assert_eq!(info_field(&mut cb, "replication", "role").as_deref(), Some("master"));
    kill_signal(a.pid(), "-CONT");
}

#[test]
fn a_replica_connection_gets_no_replies_only_the_stream() {
    let quince = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let redis = start_redis(&["--repl-diskless-sync-delay", "0"]);
    for server in std::iter::once(&quince).chain(redis.as_ref()) {
        let mut c = server.client();
        let full = text(c.call(&["PSYNC", "?", "-1"]));
        assert!(full.starts_with("+FULLRESYNC "), "{}: {full:?}", server.name);
        c.send(&["GET", "foo"]);
        // The server drops the reply (it would corrupt the stream) and the connection.
        c.shutdown_write();
        let got = c.read_to_close();
        // Keepalive newlines, then at most the snapshot (`$len` and up to len bytes: the
        // connection may close before it is all sent), never a reply to GET.
        let start = got.iter().position(|&b| b != b'\n').unwrap_or(got.len());
        let got = &got[start..];
        if !got.is_empty() {
            let header_end = got.windows(2).position(|w| w == b"\r\n").expect("a bulk header");
            let len: i64 = std::str::from_utf8(&got[1..header_end]).unwrap().parse().unwrap();
            assert!(got[0] == b'$' && len > 0, "{}: a reply on the replica link: {got:?}", server.name);
            assert!(got.len() <= header_end + 2 + len as usize, "{}: bytes after the snapshot", server.name);
        }
        assert_eq!(text(server.client().call(&["PING"])), "+PONG\r\n");
    }
}

/// What a replica answers about keys whose TTL passed, and what a writable replica does
/// with its own clients' TTLs.
fn replica_expiry_replies(master: &ServerProcess, replica: &ServerProcess) -> Vec<String> {
    let (mut m, mut r) = (master.client(), replica.client());
    r.call(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    m.call(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    m.call(&["SET", "k", "v", "PX", "50"]);
    m.call(&["SET", "k2", "v", "PX", "50"]);
    eventually("the keys on the replica", || r.call(&["DBSIZE"]) == b":2\r\n");
    std::thread::sleep(Duration::from_millis(120));
    let mut replies = Vec::new();
    for command in [
        &["DBSIZE"][..],
        &["EXISTS", "k", "k2"],
        &["GET", "k"],
        &["TTL", "k"],
        &["DBSIZE"],
        &["CONFIG", "SET", "replica-read-only", "no"],
        &["INCR", "k"],
        &["TTL", "k"],
        &["GET", "k2"],
        &["DBSIZE"],
        &["SET", "local", "1", "PX", "300"],
        &["SET", "local2", "1"],
        &["PEXPIRE", "local2", "300"],
    ] {
        replies.push(text(r.call(command)));
    }
    replies.push(info_field(&mut r, "stats", "slave_expires_tracked_keys").unwrap_or_default());
    eventually("the replica to expire its own keys", || r.call(&["EXISTS", "local", "local2"]) == b":0\r\n");
    std::thread::sleep(Duration::from_millis(300));
    replies.push(info_field(&mut r, "stats", "slave_expires_tracked_keys").unwrap_or_default());
    replies.push(text(r.call(&["DBSIZE"])));
    replies
}

#[test]
fn a_replica_leaves_expiry_to_its_master_as_redis() {
    let Some(redis_master) = start_redis(&["--enable-debug-command", "yes"]) else { return };
    let Some(redis_replica) = start_redis(&[]) else { return };
    let master = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    let want = replica_expiry_replies(&redis_master, &redis_replica);
    assert_eq!(replica_expiry_replies(&master, &replica), want);
}

#[test]
fn a_replica_arriving_during_a_disk_sync_joins_its_snapshot() {
    let master = start_quince(
        env!("CARGO_BIN_EXE_quince-server"),
        &["--repl-diskless-sync", "no", "--enable-debug-command", "yes"],
    );
    let replicas = [
        start_quince(env!("CARGO_BIN_EXE_quince-server"), &DEBUG),
        start_quince(env!("CARGO_BIN_EXE_quince-server"), &DEBUG),
    ];
    let mut m = master.client();
    for i in 0..10 {
        m.call(&["SET", &format!("k{i}"), "v"]);
    }
    // 150 ms per key: the snapshot takes 1.5 s to write.
    m.call(&["CONFIG", "SET", "rdb-key-save-delay", "150000"]);
    let forks_before = info_int(&mut m, "stats", "total_forks");
    replicas[0].client().call(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    eventually("the first sync to start", || info_int(&mut m, "persistence", "rdb_bgsave_in_progress") == 1);
    replicas[1].client().call(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    eventually("both replicas waiting for the snapshot", || {
        let info = text(m.call(&["INFO", "replication"]));
        info.matches("state=wait_bgsave").count() == 2
    });
    m.call(&["SET", "during", "the transfer"]);
    m.call(&["CONFIG", "SET", "rdb-key-save-delay", "0"]);
    for replica in &replicas {
        assert_in_sync(&mut m, &mut replica.client());
    }
    assert_eq!(info_int(&mut m, "stats", "total_forks"), forks_before + 1, "one snapshot for both");
    assert_eq!(info_int(&mut m, "stats", "sync_full"), 2);
}

#[test]
fn a_paused_replica_reads_the_stream_but_applies_it_after() {
    let master = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &DEBUG);
    let (mut m, mut r) = (master.client(), replica.client());
    r.call(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    m.call(&["SET", "before", "sync"]);
    assert_in_sync(&mut m, &mut r);
    // After the sync: the stream has selected the database, the next write is just a SET.
    m.call(&["SET", "foo", "bar"]);
    assert_in_sync(&mut m, &mut r);
    let applied = info_int(&mut r, "replication", "slave_repl_offset");
    r.call(&["CLIENT", "PAUSE", "100000", "WRITE"]);
    m.call(&["SET", "foo2", "bar2"]);
    let master_offset = info_int(&mut m, "replication", "master_repl_offset");
    eventually("the replica to read the write", || {
        info_int(&mut r, "replication", "slave_read_repl_offset") == master_offset
    });
    assert_eq!(info_int(&mut r, "replication", "slave_repl_offset"), applied);
    assert_eq!(text(r.call(&["GET", "foo2"])), "$-1\r\n");
    r.call(&["CLIENT", "UNPAUSE"]);
    eventually("the write applied", || r.call(&["GET", "foo2"]) == b"$4\r\nbar2\r\n");
    assert_eq!(info_int(&mut r, "replication", "slave_repl_offset"), master_offset);
}

#[test]
fn redis_cli_dumps_an_rdb_or_the_functions_only() {
    let Some(cli) = quince_test_util::which("redis-cli") else {
        assert!(!quince_test_util::redis_required(), "QUINCE_REQUIRE_REDIS=1 but redis-cli is missing");
        eprintln!("SKIPPED: redis-cli not found");
        return;
    };
    let master = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let mut m = master.client();
    m.call(&["SET", "k", "v"]);
    m.call(&["FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)"]);
    for (flag, keys) in [("--rdb", 1), ("--functions-rdb", 0)] {
        let file = master.dir.join(format!("cli{keys}.rdb"));
        let out = std::process::Command::new(&cli)
            .args(["-p", &master.port.to_string(), flag, file.to_str().unwrap()])
            .output()
            .unwrap();
        let text_out = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        assert!(text_out.contains("Transfer finished with success"), "{flag}: {text_out}");
        // The dump loads back with the key (or without it) and the library.
        let loader = start_quince(
            env!("CARGO_BIN_EXE_quince-server"),
            &["--dir", master.dir.to_str().unwrap(), "--dbfilename", file.file_name().unwrap().to_str().unwrap()],
        );
        let mut l = loader.client();
        assert_eq!(text(l.call(&["DBSIZE"])), format!(":{keys}\r\n"), "{flag}");
        assert!(text(l.call(&["FUNCTION", "LIST"])).contains("lib1"), "{flag}");
    }
    // Neither dump is a replica: WAIT and INFO see none.
    assert_eq!(info_int(&mut m, "replication", "connected_slaves"), 0);
}

#[test]
fn the_link_to_the_master_leaves_from_bind_source_addr() {
    // Protected mode admits 127.0.0.1 and ::1 only, as Redis's.
    let master = start_quince(
        env!("CARGO_BIN_EXE_quince-server"),
        &["--repl-diskless-sync-delay", "0", "--protected-mode", "no"],
    );
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &["--bind-source-addr", "127.0.0.2"]);
    let mut m = master.client();
    replica.client().call(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    eventually("the replica online", || info_int(&mut m, "replication", "connected_slaves") == 1);
    let line = info_field(&mut m, "replication", "slave0").unwrap();
    assert!(line.starts_with("ip=127.0.0.2,"), "{line}");
}

#[test]
fn redis_set_repl_chooses_where_a_scripts_writes_go() {
    let master = start_quince(
        env!("CARGO_BIN_EXE_quince-server"),
        &["--repl-diskless-sync-delay", "0", "--appendonly", "yes", "--enable-debug-command", "yes"],
    );
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &[]);
    let (mut m, mut r) = (master.client(), replica.client());
    r.call(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    eventually("the link", || info_field(&mut r, "replication", "master_link_status").as_deref() == Some("up"));
    let script = "redis.call('set','a','1'); redis.set_repl(redis.REPL_NONE); redis.call('set','b','2'); \
                  redis.set_repl(redis.REPL_AOF); redis.call('set','c','3'); redis.set_repl(redis.REPL_ALL); \
                  redis.call('set','d','4')";
    m.call(&["EVAL", script, "0"]);
    m.call(&["SET", "after", "x"]);
    eventually("the replica to have the writes", || r.call(&["GET", "after"]) == b"$1\r\nx\r\n");
    // Redis's own expectations (unit/scripting "selective replication").
    assert_eq!(text(r.call(&["MGET", "a", "b", "c", "d"])), "*4\r\n$1\r\n1\r\n$-1\r\n$-1\r\n$1\r\n4\r\n");
    assert_eq!(text(m.call(&["MGET", "a", "b", "c", "d"])), "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n");
    assert_eq!(text(m.call(&["DEBUG", "LOADAOF"])), "+OK\r\n");
    assert_eq!(text(m.call(&["MGET", "a", "b", "c", "d"])), "*4\r\n$1\r\n1\r\n$-1\r\n$1\r\n3\r\n$1\r\n4\r\n");
}

#[test]
fn a_lagging_replicas_output_never_makes_the_master_evict() {
    let master = start_quince(env!("CARGO_BIN_EXE_quince-server"), &NO_DELAY);
    let replica = start_quince(env!("CARGO_BIN_EXE_quince-server"), &DEBUG);
    let mut m = master.client();
    for i in 0..100 {
        m.call(&["SET", &format!("k{i}"), "v"]);
    }
    replica.client().call(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    assert_in_sync(&mut m, &mut replica.client());
    kill_signal(replica.pid(), "-STOP");
    // 8 MB through the stream to a replica that reads nothing; the dataset stays small.
    let value = "x".repeat(32 * 1024);
    for _ in 0..256 {
        assert_eq!(text(m.call(&["SET", "big", &value])), "+OK\r\n");
    }
    std::thread::sleep(Duration::from_millis(300));
    let replica_output = info_int(&mut m, "memory", "mem_clients_slaves");
    let not_counted = info_int(&mut m, "memory", "mem_not_counted_for_evict");
    assert!(replica_output > 4 * 1024 * 1024 && not_counted >= replica_output, "{replica_output} {not_counted}");
    // A limit under what the process uses, over what counts: the replica's output (held
    // still: the replica is stopped) must not make the master evict.
    let used = info_int(&mut m, "memory", "used_memory");
    let limit = used - not_counted + 1024 * 1024;
    assert!(limit < used);
    m.call(&["CONFIG", "SET", "maxmemory-policy", "allkeys-random"]);
    m.call(&["CONFIG", "SET", "maxmemory", &limit.to_string()]);
    // A write that changes nothing (nothing streamed) checks the limit first.
    assert_eq!(text(m.call(&["SET", "k1", "w", "NX"])), "$-1\r\n");
    assert_eq!(info_int(&mut m, "stats", "evicted_keys"), 0, "the replica's buffer evicted keys");
    assert_eq!(text(m.call(&["DBSIZE"])), ":101\r\n");
    m.call(&["CONFIG", "SET", "maxmemory", "0"]);
    kill_signal(replica.pid(), "-CONT");
}
