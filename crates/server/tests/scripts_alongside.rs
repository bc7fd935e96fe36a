//! Scripts that keep to their declared keys run alongside other clients' commands and
//! scripts, holding only the shards of those keys (docs/threading.md). These tests check
//! what that must not change: a script that reaches for other keys still runs atomically
//! (alone, or holding more shards), a busy script still makes everyone else get BUSY and can
//! be killed, and scripts on other keys really do run meanwhile.

use std::time::{Duration, Instant};

use quince_test_util::{start_quince, RawClient, ServerProcess};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");
const BUSY_EVAL: &[u8] = b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n";

fn start() -> ServerProcess {
    start_quince(QUINCE, &["--threads", "2"])
}

/// A script that runs `spin_ms` milliseconds (by the server's clock) and then reads and
/// writes its key; with ARGV[2] = "reach", it first reads the key named by ARGV[3] (not
/// declared), and with "reach-after" it does so after its write.
const SCRIPT: &str = "\
local t = redis.call('TIME') \
local start = t[1] * 1000 + math.floor(t[2] / 1000) \
local spin = tonumber(ARGV[1]) \
while true do \
  local now = redis.call('TIME') \
  if now[1] * 1000 + math.floor(now[2] / 1000) - start >= spin then break end \
end \
local other = false \
if ARGV[2] == 'reach' then other = redis.call('GET', ARGV[3]) end \
local v = redis.call('INCR', KEYS[1]) \
if ARGV[2] == 'reach-after' then other = redis.call('GET', ARGV[3]) end \
return {v, other}";

/// While a script occupies one worker: `first` if it answers a PING at once, else a new
/// client that does (one of the other worker's). Clients of the busy worker answer only
/// once the script ends; they are dropped unread.
fn on_a_free_worker(server: &ServerProcess, first: RawClient) -> RawClient {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut candidates = vec![first];
    candidates.extend((0..3).map(|_| server.client()));
    for mut c in candidates {
        let tx = tx.clone();
        std::thread::spawn(move || {
            if c.call(&["PING"]) == b"+PONG\r\n" {
                let _ = tx.send(c);
            }
        });
    }
    rx.recv_timeout(Duration::from_millis(500)).expect("a client of the free worker answers")
}

fn eval(c: &mut RawClient, key: &str, spin_ms: u64, mode: &str, other: &str) -> Vec<u8> {
    c.call(&["EVAL", SCRIPT, "1", key, &spin_ms.to_string(), mode, other])
}

#[test]
fn scripts_on_other_keys_run_meanwhile_and_a_command_on_its_key_waits() {
    let server = start();
    let mut a = server.client();
    // A script occupies its worker's thread, as in Redis: only a client of the other worker
    // can be served meanwhile. With four more clients, some are on the other worker.
    let others: Vec<RawClient> = (0..4).map(|_| server.client()).collect();
    // Each script's first run is alone: that is how it is learned to keep to its keys.
    assert_eq!(eval(&mut a, "{a}k", 0, "", ""), b"*2\r\n:1\r\n$-1\r\n");
    let port = server.port;
    let long = std::thread::spawn(move || {
        let started = Instant::now();
        let reply = eval(&mut a, "{a}k", 1500, "", "");
        (reply, started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(300));
    // The long script holds only {a}'s shard: scripts and plain commands on other keys are
    // served at once by the other worker...
    let served: Vec<Duration> = others
        .into_iter()
        .enumerate()
        .map(|(i, mut b)| {
            std::thread::spawn(move || {
                let started = Instant::now();
                let key = format!("{{b{i}}}k");
                assert_eq!(eval(&mut b, &key, 0, "", ""), b"*2\r\n:1\r\n$-1\r\n");
                assert_eq!(b.call(&["SET", &format!("{{b{i}}}plain"), "1"]), b"+OK\r\n");
                started.elapsed()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    let fastest = served.iter().min().copied().unwrap_or_default();
    assert!(fastest < Duration::from_millis(700), "served meanwhile: {served:?}");
    // ...while a command on its key waits for it to end, and sees all of it.
    let mut c = RawClient::connect(port);
    assert_eq!(c.call(&["GET", "{a}k"]), b"$1\r\n2\r\n");
    let (reply, took) = long.join().unwrap();
    assert_eq!(reply, b"*2\r\n:2\r\n$-1\r\n");
    // (The script counts whole milliseconds.)
    assert!(took >= Duration::from_millis(1400), "{took:?}");
}

#[test]
fn a_script_reaching_beyond_its_keys_before_writing_runs_again_alone() {
    let server = start();
    let mut c = server.client();
    assert_eq!(c.call(&["SET", "{o}other", "seen"]), b"+OK\r\n");
    assert_eq!(eval(&mut c, "{k}k", 0, "", ""), b"*2\r\n:1\r\n$-1\r\n");
    // Learned to keep to its key, it now runs alongside; reading an undeclared key of
    // another shard stops it before it wrote, and it runs again alone: one INCR, the
    // other key's value, no error.
    assert_eq!(eval(&mut c, "{k}k", 0, "reach", "{o}other"), b"*2\r\n:2\r\n$4\r\nseen\r\n");
    assert_eq!(c.call(&["GET", "{k}k"]), b"$1\r\n2\r\n");
    // From now on it always runs alone, whatever path it takes.
    assert_eq!(eval(&mut c, "{k}k", 0, "", ""), b"*2\r\n:3\r\n$-1\r\n");
    assert_eq!(eval(&mut c, "{k}k", 0, "reach-after", "{o}other"), b"*2\r\n:4\r\n$4\r\nseen\r\n");
    let calls = String::from_utf8(c.call(&["INFO", "commandstats"])).unwrap();
    assert!(calls.contains("cmdstat_incr:calls=4,"), "{calls}");
}

#[test]
fn a_script_reaching_beyond_its_keys_after_writing_locks_the_shard() {
    let server = start();
    let mut c = server.client();
    assert_eq!(c.call(&["SET", "{o}other", "seen"]), b"+OK\r\n");
    assert_eq!(eval(&mut c, "{k}k", 0, "", ""), b"*2\r\n:1\r\n$-1\r\n");
    // Alongside, it wrote, then read an undeclared key: its shard is free, so it is
    // locked too and the script goes on.
    assert_eq!(eval(&mut c, "{k}k", 0, "reach-after", "{o}other"), b"*2\r\n:2\r\n$4\r\nseen\r\n");
}

#[test]
fn a_script_running_any_key_command_is_learned_to_run_alone() {
    let server = start();
    let mut c = server.client();
    let script = "redis.call('SET', KEYS[1], 'x') return redis.call('DBSIZE')";
    assert_eq!(c.call(&["EVAL", script, "1", "{k}a"]), b":1\r\n");
    assert_eq!(c.call(&["SET", "{z}b", "y"]), b"+OK\r\n");
    assert_eq!(c.call(&["EVAL", script, "1", "{k}a"]), b":2\r\n");
}

#[test]
fn a_busy_script_running_alongside_gets_everyone_busy_and_can_be_killed() {
    let server = start();
    let mut admin = server.client();
    assert_eq!(admin.call(&["CONFIG", "SET", "busy-reply-threshold", "100"]), b"+OK\r\n");
    let mut runner = server.client();
    let script = "if ARGV[1] == 'spin' then while true do end end return redis.call('GET', KEYS[1])";
    assert_eq!(runner.call(&["EVAL", script, "1", "{s}k", "once"]), b"$-1\r\n");
    runner.send(&["EVAL", script, "1", "{s}k", "spin"]);
    let start = Instant::now();
    loop {
        let reply = admin.call(&["PING"]);
        if reply == BUSY_EVAL {
            break;
        }
        assert_eq!(reply, b"+PONG\r\n");
        assert!(start.elapsed() < Duration::from_secs(5), "the script never became busy");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Commands on other keys and on its own key alike.
    assert_eq!(admin.call(&["GET", "{other}k"]), BUSY_EVAL);
    let mut third = server.client();
    assert_eq!(third.call(&["GET", "{s}k"]), BUSY_EVAL);
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), b"+OK\r\n");
    let reply = String::from_utf8(runner.read_reply()).unwrap();
    assert!(reply.starts_with("-ERR Script killed by user with SCRIPT KILL..."), "{reply}");
    assert_eq!(third.call(&["GET", "{s}k"]), b"$-1\r\n");
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), b"-NOTBUSY No scripts in execution right now.\r\n");
}

#[test]
fn a_script_reaching_after_writing_for_a_shard_held_too_long_fails_that_command() {
    let server = start();
    let mut a = server.client();
    let mut b = server.client();
    // Both learned to keep to their keys.
    assert_eq!(eval(&mut a, "{k}k", 0, "", ""), b"*2\r\n:1\r\n$-1\r\n");
    assert_eq!(eval(&mut b, "{o}k", 0, "", ""), b"*2\r\n:1\r\n$-1\r\n");
    // B holds {o}'s shard for 1.5 s; A, alongside, writes its key and then reads a key of
    // that shard: it can't wait for it (it holds its own shard out of order), so after a
    // second of trying, that command fails and the script with it, its write kept (as any
    // script failing half way in Redis).
    let holder = std::thread::spawn(move || eval(&mut b, "{o}k", 1500, "", ""));
    std::thread::sleep(Duration::from_millis(200));
    // A runs on the other worker (a script occupies its worker's thread).
    let mut a = on_a_free_worker(&server, a);
    let reply = String::from_utf8(eval(&mut a, "{k}k", 0, "reach-after", "{o}other")).unwrap();
    assert!(
        reply.starts_with("-ERR script accessed a key outside the shards of its declared keys, after writing"),
        "{reply}"
    );
    assert_eq!(holder.join().unwrap(), b"*2\r\n:2\r\n$-1\r\n");
    assert_eq!(a.call(&["GET", "{k}k"]), b"$1\r\n2\r\n");
    // Learned: from now on it runs alone and reaches the key.
    assert_eq!(eval(&mut a, "{k}k", 0, "reach-after", "{o}other"), b"*2\r\n:3\r\n$-1\r\n");
}
