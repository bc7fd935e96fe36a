//! Scripts run on the worker that received them: with a single worker thread, every client
//! shares the worker of a busy script, which serves them from inside the script; they must
//! still get BUSY, be able to SCRIPT KILL / FUNCTION KILL it, and keep the order of
//! pipelined requests around a script.

use std::time::{Duration, Instant};

use quince_test_util::{start_quince, RawClient};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");
const BUSY_EVAL: &[u8] = b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n";
const BUSY_FUNCTION: &[u8] =
    b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n";

/// Sends PING until the server answers BUSY (the script passed the threshold).
fn wait_busy(client: &mut RawClient, busy: &[u8]) {
    let start = Instant::now();
    loop {
        let reply = client.call(&["PING"]);
        if reply == busy {
            return;
        }
        assert_eq!(reply, b"+PONG\r\n");
        assert!(start.elapsed() < Duration::from_secs(5), "the script never became busy");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn busy_script_on_the_only_worker_can_be_killed() {
    let server = start_quince(QUINCE, &["--threads", "1"]);
    let mut admin = server.client();
    assert_eq!(admin.call(&["CONFIG", "SET", "busy-reply-threshold", "100"]), b"+OK\r\n");
    let mut runner = server.client();
    // Pipelined after the script: runs only after it, and its reply comes after the script's.
    runner.send_raw(b"*3\r\n$4\r\nEVAL\r\n$17\r\nwhile true do end\r\n$1\r\n0\r\n*2\r\n$4\r\nECHO\r\n$5\r\nafter\r\n");
    wait_busy(&mut admin, BUSY_EVAL);
    assert_eq!(admin.call(&["FUNCTION", "KILL"]), BUSY_EVAL);
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), b"+OK\r\n");
    let reply = String::from_utf8(runner.read_reply()).unwrap();
    assert!(reply.starts_with("-ERR Script killed by user with SCRIPT KILL..."), "{reply}");
    assert_eq!(runner.read_reply(), b"$5\r\nafter\r\n");
    assert_eq!(admin.call(&["PING"]), b"+PONG\r\n");
}

#[test]
fn busy_function_on_the_only_worker_can_be_killed() {
    let server = start_quince(QUINCE, &["--threads", "1"]);
    let mut admin = server.client();
    assert_eq!(admin.call(&["CONFIG", "SET", "busy-reply-threshold", "100"]), b"+OK\r\n");
    let lib = "#!lua name=spin\nredis.register_function('spin', function() while true do end end)";
    assert_eq!(admin.call(&["FUNCTION", "LOAD", lib]), b"$4\r\nspin\r\n");
    let mut runner = server.client();
    runner.send(&["FCALL", "spin", "0"]);
    wait_busy(&mut admin, BUSY_FUNCTION);
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), BUSY_FUNCTION);
    assert_eq!(admin.call(&["FUNCTION", "KILL"]), b"+OK\r\n");
    let reply = String::from_utf8(runner.read_reply()).unwrap();
    assert!(reply.starts_with("-ERR Script killed by user with SCRIPT KILL..."), "{reply}");
}

/// A transaction that queued a script runs off the event loop too.
#[test]
fn exec_of_a_busy_script_does_not_stall_the_worker() {
    let server = start_quince(QUINCE, &["--threads", "1"]);
    let mut admin = server.client();
    assert_eq!(admin.call(&["CONFIG", "SET", "busy-reply-threshold", "100"]), b"+OK\r\n");
    let mut runner = server.client();
    assert_eq!(runner.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(runner.call(&["SET", "k", "v"]), b"+QUEUED\r\n");
    assert_eq!(runner.call(&["EVAL", "while true do end", "0"]), b"+QUEUED\r\n");
    runner.send(&["EXEC"]);
    wait_busy(&mut admin, BUSY_EVAL);
    // The transaction wrote before the script: the script itself did not, so it is killable.
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), b"+OK\r\n");
    let reply = String::from_utf8(runner.read_reply()).unwrap();
    assert!(reply.starts_with("*2\r\n+OK\r\n-ERR Script killed by user"), "{reply}");
}

/// The script's client disconnects or is killed while the script runs: the script ends
/// normally, and the server keeps serving.
#[test]
fn script_caller_gone_while_running() {
    let server = start_quince(QUINCE, &["--threads", "1"]);
    let mut admin = server.client();
    let spin = "local t = redis.call('TIME') local s = t[1] * 1000000 + t[2] \
                while true do local n = redis.call('TIME') if n[1] * 1000000 + n[2] - s > 300000 then break end end \
                return redis.call('INCR', KEYS[1])";
    let mut quitter = server.client();
    quitter.send(&["EVAL", spin, "1", "gone"]);
    std::thread::sleep(Duration::from_millis(50));
    drop(quitter);
    let mut killed = server.client();
    assert_eq!(killed.call(&["CLIENT", "SETNAME", "victim"]), b"+OK\r\n");
    // Waits for the first script (the gate), then runs its own.
    killed.send(&["EVAL", spin, "1", "gone"]);
    std::thread::sleep(Duration::from_millis(50));
    let list = String::from_utf8(admin.call(&["CLIENT", "LIST"])).unwrap();
    let id = list.lines().find(|l| l.contains("name=victim")).and_then(|l| l.split(' ').next()).unwrap().to_string();
    assert_eq!(admin.call(&["CLIENT", "KILL", "ID", &id[3..]]), b":1\r\n");
    let start = Instant::now();
    while admin.call(&["GET", "gone"]) != b"$1\r\n2\r\n" {
        assert!(start.elapsed() < Duration::from_secs(5), "both scripts run to the end");
        std::thread::sleep(Duration::from_millis(10));
    }
    let rest = killed.read_to_close();
    assert!(rest.is_empty() || rest == b":2\r\n", "{rest:?}");
    let list = String::from_utf8(admin.call(&["CLIENT", "LIST"])).unwrap();
    assert_eq!(list.lines().filter(|l| l.starts_with("id=")).count(), 1, "{list}");
}

/// A subscriber on the script's worker gets what the script publishes, and MONITOR sees
/// the script's commands.
#[test]
fn script_publishes_to_subscriber_on_same_worker() {
    let server = start_quince(QUINCE, &["--threads", "1"]);
    let mut subscriber = server.client();
    assert_eq!(subscriber.call(&["SUBSCRIBE", "ch"]), b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
    let mut monitor = server.client();
    assert_eq!(monitor.call(&["MONITOR"]), b"+OK\r\n");
    let mut client = server.client();
    let reply = client.call(&["EVAL", "return redis.call('PUBLISH', 'ch', 'hello')", "0"]);
    assert_eq!(reply, b":1\r\n");
    assert_eq!(subscriber.read_reply(), b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n");
    let eval_line = String::from_utf8(monitor.read_reply()).unwrap();
    assert!(eval_line.contains("\"EVAL\""), "{eval_line}");
    let publish_line = String::from_utf8(monitor.read_reply()).unwrap();
    assert!(publish_line.contains("lua] \"PUBLISH\" \"ch\" \"hello\""), "{publish_line}");
}

/// While a script is busy, commands sent inside MULTI get BUSY and flag the transaction,
/// and EXEC aborts with the BUSY error, leaving the client out of MULTI (Redis 7.0).
#[test]
fn transaction_during_busy_script() {
    let server = start_quince(QUINCE, &["--threads", "1"]);
    let mut admin = server.client();
    assert_eq!(admin.call(&["CONFIG", "SET", "busy-reply-threshold", "50"]), b"+OK\r\n");
    assert_eq!(admin.call(&["SET", "xx", "1"]), b"+OK\r\n");
    let mut client = server.client();
    assert_eq!(client.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(client.call(&["INCR", "xx"]), b"+QUEUED\r\n");
    let mut runner = server.client();
    runner.send(&["EVAL", "while true do end", "0"]);
    wait_busy(&mut admin, BUSY_EVAL);
    assert_eq!(client.call(&["INCR", "xx"]), BUSY_EVAL);
    let exec = String::from_utf8(client.call(&["EXEC"])).unwrap();
    assert_eq!(
        exec,
        "-EXECABORT Transaction discarded because of: BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
    );
    assert_eq!(client.call(&["MULTI"]), b"+OK\r\n", "MULTI is allowed while busy");
    assert_eq!(client.call(&["INCR", "xx"]), BUSY_EVAL);
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), b"+OK\r\n");
    let _ = runner.read_reply();
    assert_eq!(client.call(&["INCR", "xx"]), b"+QUEUED\r\n");
    assert_eq!(client.call(&["EXEC"]), b"-EXECABORT Transaction discarded because of previous errors.\r\n");
    assert_eq!(admin.call(&["GET", "xx"]), b"$1\r\n1\r\n", "no half transaction ran");
    assert_eq!(client.call(&["PING"]), b"+PONG\r\n");
}

#[test]
fn shutdown_nosave_stops_a_busy_script_that_wrote() {
    // The script wrote, so SCRIPT KILL can't stop it; SHUTDOWN NOSAVE, sent by a client of
    // the same (only) worker, must still end the server instead of waiting for the script.
    let mut server = start_quince(QUINCE, &["--threads", "1"]);
    let mut admin = server.client();
    assert_eq!(admin.call(&["CONFIG", "SET", "busy-reply-threshold", "100"]), b"+OK\r\n");
    let mut runner = server.client();
    runner.send(&["EVAL", "redis.call('SET', 'k', 'v') while true do end", "0"]);
    wait_busy(&mut admin, BUSY_EVAL);
    assert!(admin.call(&["SCRIPT", "KILL"]).starts_with(b"-UNKILLABLE"));
    admin.send(&["SHUTDOWN", "NOSAVE"]);
    assert!(server.wait_exit(Duration::from_secs(10)), "the server kept running under a busy script");
}

/// Past the threshold the log says so, in Redis's words (naming the KILL command that stops
/// it).
#[test]
fn a_busy_script_is_logged_as_slow() {
    let dir = std::env::temp_dir().join(format!("quince-slowlog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("quince.log");
    let (dir_arg, log_arg) = (dir.to_str().unwrap().to_string(), log.to_str().unwrap().to_string());
    let server = start_quince(QUINCE, &["--dir", &dir_arg, "--logfile", &log_arg, "--busy-reply-threshold", "100"]);
    let mut admin = server.client();
    let mut runner = server.client();
    runner.send(&["EVAL", "while true do end", "0"]);
    wait_busy(&mut admin, BUSY_EVAL);
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), b"+OK\r\n");
    runner.read_reply();
    let text = std::fs::read_to_string(&log).unwrap();
    let line = text.lines().find(|l| l.contains("Slow script detected: still in execution after ")).unwrap_or("");
    assert!(
        line.contains(" # ") && line.contains("You can try killing the script using the SCRIPT KILL command."),
        "{text}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
