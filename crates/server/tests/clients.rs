//! Connection management across connections and worker threads: CLIENT LIST/INFO/KILL,
//! CLIENT REPLY, MONITOR, SLOWLOG and the statistics INFO reports.

use std::time::Duration;

use quince_test_util::{start_quince, RawClient};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn text(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

/// The bulk payload of a `$len\r\n...\r\n` reply.
fn bulk(reply: &[u8]) -> String {
    let s = text(reply);
    s.split_once("\r\n").map(|(_, rest)| rest.trim_end_matches("\r\n").to_string()).unwrap_or_default()
}

#[test]
fn client_list_and_info_describe_connections() {
    let server = start_quince(QUINCE, &["--threads", "2"]);
    let mut a = server.client();
    let mut b = server.client();
    assert_eq!(b.call(&["CLIENT", "SETNAME", "bee"]), b"+OK\r\n");
    assert_eq!(b.call(&["SELECT", "3"]), b"+OK\r\n");
    let list = bulk(&a.call(&["CLIENT", "LIST"]));
    let lines: Vec<&str> = list.lines().collect();
    assert!(lines.len() >= 2, "{list}");
    let me = lines.iter().find(|l| l.contains("cmd=client|list")).expect("own line");
    assert!(me.contains(" qbuf=26 "), "{me}");
    assert!(me.contains(" flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 "), "{me}");
    assert!(me.ends_with("user=default redir=-1 resp=2"), "{me}");
    let other = lines.iter().find(|l| l.contains("name=bee")).expect("named client listed");
    assert!(other.contains(" db=3 ") && other.contains("cmd=select"), "{other}");
    let id = text(&a.call(&["CLIENT", "ID"])).trim_start_matches(':').trim().to_string();
    let info = bulk(&a.call(&["CLIENT", "INFO"]));
    assert!(info.starts_with(&format!("id={id} ")) && info.contains("cmd=client|info"), "{info}");
    let by_id = bulk(&a.call(&["CLIENT", "LIST", "ID", &id, "999999"]));
    assert_eq!(by_id.lines().count(), 1);
}

#[test]
fn client_kill_closes_other_connections_and_optionally_self() {
    let server = start_quince(QUINCE, &["--threads", "2"]);
    let mut me = server.client();
    let mut victims: Vec<RawClient> = (0..3).map(|_| server.client()).collect();
    for v in &mut victims {
        assert_eq!(v.call(&["PING"]), b"+PONG\r\n");
    }
    assert_eq!(me.call(&["CLIENT", "KILL", "SKIPME", "YES"]), b":3\r\n");
    for v in &mut victims {
        assert_eq!(v.read_to_close(), b"", "killed connection is closed without a reply");
    }
    // The old form targets one address and may kill the caller itself: reply first, then close.
    let info = bulk(&me.call(&["CLIENT", "INFO"]));
    let addr = info.split(' ').find_map(|f| f.strip_prefix("addr=")).expect("addr").to_string();
    assert_eq!(me.call(&["CLIENT", "KILL", &addr]), b"+OK\r\n");
    assert_eq!(me.read_to_close(), b"");
    assert_eq!(server.client().call(&["CLIENT", "KILL", "1.2.3.4:5"]), b"-ERR No such client\r\n");
}

#[test]
fn client_reply_off_and_skip_suppress_replies() {
    let server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    c.send(&["CLIENT", "REPLY", "OFF"]);
    c.send(&["SET", "a", "1"]);
    c.send(&["GET", "a"]);
    assert_eq!(c.call(&["CLIENT", "REPLY", "ON"]), b"+OK\r\n");
    c.send(&["CLIENT", "REPLY", "SKIP"]);
    c.send(&["PING", "skipped"]);
    assert_eq!(c.call(&["PING", "seen"]), b"$4\r\nseen\r\n");
}

#[test]
fn monitor_streams_commands_from_other_connections() {
    let server = start_quince(QUINCE, &["--threads", "2"]);
    let mut monitor = server.client();
    assert_eq!(monitor.call(&["MONITOR"]), b"+OK\r\n");
    let mut c = server.client();
    c.call(&["set", "foo", "bar"]);
    c.call(&["auth", "secret"]);
    c.call(&["get", "foo"]);
    let first = text(&monitor.read_reply());
    assert!(
        first.starts_with('+') && first.contains(" [0 127.0.0.1:") && first.ends_with("] \"set\" \"foo\" \"bar\"\r\n"),
        "{first}"
    );
    let second = text(&monitor.read_reply());
    assert!(second.ends_with("\"auth\" \"(redacted)\"\r\n"), "{second}");
    let third = text(&monitor.read_reply());
    assert!(third.ends_with("\"get\" \"foo\"\r\n"), "{third}");
    // A transaction shows as MULTI, then its commands as EXEC runs them, then EXEC; a
    // command refused while queueing is not shown, an aborted EXEC is.
    c.call(&["multi"]);
    c.call(&["set", "a", "1"]);
    c.call(&["exec"]);
    c.call(&["multi"]);
    c.call(&["nosuchcommand"]);
    c.call(&["exec"]);
    for expected in ["\"multi\"", "\"set\" \"a\" \"1\"", "\"exec\"", "\"multi\"", "\"exec\""] {
        let line = text(&monitor.read_reply());
        assert!(line.ends_with(&format!("] {expected}\r\n")), "{line} (expected {expected})");
    }
    // A script shows first, then the commands it runs, marked as coming from Lua.
    c.call(&["eval", "redis.call('set', KEYS[1], ARGV[1])", "1", "foo", "bar"]);
    let line = text(&monitor.read_reply());
    assert!(line.contains("] \"eval\" "), "{line}");
    let line = text(&monitor.read_reply());
    assert!(line.ends_with(" [0 lua] \"set\" \"foo\" \"bar\"\r\n"), "{line}");
}

#[test]
fn slowlog_records_slow_commands_with_client_details() {
    let server = start_quince(QUINCE, &["--enable-debug-command", "yes"]);
    let mut c = server.client();
    c.call(&["CONFIG", "SET", "slowlog-log-slower-than", "100000"]);
    c.call(&["CLIENT", "SETNAME", "slowpoke"]);
    c.call(&["SLOWLOG", "RESET"]);
    c.call(&["DEBUG", "SLEEP", "0.2"]);
    c.call(&["PING"]);
    assert_eq!(c.call(&["SLOWLOG", "LEN"]), b":1\r\n");
    let entry = text(&c.call(&["SLOWLOG", "GET"]));
    assert!(entry.contains("$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$3\r\n0.2\r\n"), "{entry}");
    assert!(entry.contains("$8\r\nslowpoke\r\n"), "{entry}");
    c.call(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    let long = "x".repeat(200);
    c.call(&["SET", "k", &long]);
    let entry = text(&c.call(&["SLOWLOG", "GET", "1"]));
    assert!(entry.contains("... (72 more bytes)"), "{entry}");
    // A blocked command is logged when it is served, after the command that served it.
    let mut blocked = server.client();
    blocked.send(&["BLPOP", "l", "0"]);
    while !text(&c.call(&["INFO", "clients"])).contains("blocked_clients:1\r\n") {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    c.call(&["SLOWLOG", "RESET"]);
    c.call(&["RPUSH", "l", "x"]);
    assert_eq!(text(&blocked.read_reply()), "*2\r\n$1\r\nl\r\n$1\r\nx\r\n");
    let entries = text(&c.call(&["SLOWLOG", "GET", "2"]));
    let blpop = entries.find("$5\r\nBLPOP\r\n").expect("BLPOP logged");
    let rpush = entries.find("$5\r\nRPUSH\r\n").expect("RPUSH logged");
    assert!(blpop < rpush, "newest first: {entries}");
}

#[test]
fn info_reports_command_and_error_stats() {
    let server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    c.call(&["CONFIG", "RESETSTAT"]);
    c.call(&["SET", "a", "1"]);
    c.call(&["SET", "a"]);
    c.call(&["NOSUCHCOMMAND"]);
    c.call(&["INCR", "nope", "x"]);
    c.call(&["SET", "s", "x"]);
    c.call(&["INCR", "s"]);
    let info = bulk(&c.call(&["INFO", "commandstats", "errorstats"]));
    assert!(info.contains("cmdstat_set:calls=2,"), "{info}");
    assert!(info.contains(",rejected_calls=1,failed_calls=0"), "{info}");
    assert!(info.contains("cmdstat_incr:calls=1,") && info.contains("rejected_calls=1,failed_calls=1"), "{info}");
    assert!(info.contains("errorstat_ERR:count=4"), "{info}");
    let default = bulk(&c.call(&["INFO"]));
    for field in [
        "redis_version:",
        "used_memory:",
        "used_cpu_user:",
        "loading:0",
        "total_error_replies:4",
        "instantaneous_ops_per_sec:",
    ] {
        assert!(default.contains(field), "missing {field}");
    }
    assert!(!default.contains("rejected_calls"));
    std::thread::sleep(Duration::from_millis(10));
}

#[test]
fn config_rewrite_updates_the_startup_file() {
    let dir = std::env::temp_dir().join(format!("quince-rewrite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("quince.conf");
    std::fs::write(&file, "# my settings\nmaxmemory-policy noeviction\nhz 10\nhz 12\n").unwrap();
    let path = file.to_string_lossy().into_owned();
    let server = quince_test_util::ServerProcess::spawn("quince", std::path::Path::new(QUINCE), &[&path]).unwrap();
    let mut c = server.client();
    assert_eq!(c.call(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]), b"+OK\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "timeout", "77"]), b"+OK\r\n");
    assert_eq!(c.call(&["CONFIG", "REWRITE"]), b"+OK\r\n");
    let rewritten = std::fs::read_to_string(&file).unwrap();
    assert!(rewritten.starts_with("# my settings\nmaxmemory-policy allkeys-lru\nhz 12\n"), "{rewritten}");
    assert!(
        rewritten.contains("# Generated by CONFIG REWRITE\n") && rewritten.contains("\ntimeout 77\n"),
        "{rewritten}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    let no_file = start_quince(QUINCE, &[]);
    assert_eq!(no_file.client().call(&["CONFIG", "REWRITE"]), b"-ERR The server is running without a config file\r\n");
}

/// DEBUG CONFIG-REWRITE-FORCE-ALL writes every parameter, defaults included, in a file the
/// server reads back to the same configuration: strings quoted where they would split
/// (`proc-title-template`), multi-argument directives as arguments, no `replicaof` line
/// without a master, `dir` absolute (Redis's "CONFIG REWRITE sanity").
#[test]
fn config_rewrite_of_everything_reads_back() {
    let dir = std::env::temp_dir().join(format!("quince-rewrite-all-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("quince.conf");
    std::fs::write(&file, "enable-debug-command yes\nsave \"\"\n").unwrap();
    let path = file.to_string_lossy().into_owned();
    // One directory for both starts (the file names it).
    let data = dir.to_string_lossy().into_owned();
    let spawn = || {
        quince_test_util::ServerProcess::spawn("quince", std::path::Path::new(QUINCE), &[&path, "--dir", &data])
            .unwrap()
    };
    let server = spawn();
    let mut c = server.client();
    assert_eq!(c.call(&["CONFIG", "SET", "proc-title-template", "{title} \"quoted\" {port}"]), b"+OK\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "save", "3600 1 300 100"]), b"+OK\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "maxmemory", "100mb"]), b"+OK\r\n");
    let before = c.call(&["CONFIG", "GET", "*"]);
    assert_eq!(c.call(&["DEBUG", "CONFIG-REWRITE-FORCE-ALL"]), b"+OK\r\n");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.contains("\nproc-title-template \"{title} \\\"quoted\\\" {port}\"\n"), "{written}");
    assert!(written.contains("\nhz 10\n") && !written.contains("replicaof"), "{written}");
    let dir =
        String::from_utf8_lossy(&c.call(&["CONFIG", "GET", "dir"])).split("\r\n").nth(4).unwrap_or("").to_string();
    assert!(written.contains(&format!("\ndir \"{dir}\"\n")), "dir {dir}: {written}");
    drop(c);
    drop(server);
    let server = spawn();
    let after = server.client().call(&["CONFIG", "GET", "*"]);
    let pairs = |reply: &[u8]| {
        let text = String::from_utf8_lossy(reply).into_owned();
        let lines: Vec<String> = text.split("\r\n").map(str::to_string).collect();
        // (The test harness gives each start its own --port and --dir.)
        let mut items: Vec<(String, String)> = lines
            .chunks(4)
            .filter(|c| c.len() == 4 && c[1] != "port" && c[1] != "dir")
            .map(|c| (c[1].clone(), c[3].clone()))
            .collect();
        items.sort();
        items
    };
    assert_eq!(
        pairs(&before[before.iter().position(|&b| b == b'\n').unwrap() + 1..]),
        pairs(&after[after.iter().position(|&b| b == b'\n').unwrap() + 1..])
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn client_pause_holds_writes_until_unpause() {
    let server = start_quince(QUINCE, &["--threads", "2"]);
    let mut admin = server.client();
    let mut writer = server.client();
    assert_eq!(admin.call(&["CLIENT", "PAUSE", "100000", "WRITE"]), b"+OK\r\n");
    assert_eq!(writer.call(&["GET", "k"]), b"$-1\r\n", "reads go through a WRITE pause");
    writer.send(&["SET", "k", "v"]);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(admin.call(&["GET", "k"]), b"$-1\r\n", "the write is held");
    let list = bulk(&admin.call(&["CLIENT", "LIST"]));
    assert!(list.lines().any(|l| l.contains("flags=b")), "{list}");
    assert_eq!(admin.call(&["CLIENT", "UNPAUSE"]), b"+OK\r\n");
    assert_eq!(writer.read_reply(), b"+OK\r\n");
    assert_eq!(admin.call(&["GET", "k"]), b"$1\r\nv\r\n");
    assert_eq!(admin.call(&["CLIENT", "PAUSE", "-1"]), b"-ERR timeout is negative\r\n");
    assert_eq!(admin.call(&["CLIENT", "PAUSE", "10", "SOME"]), b"-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n");
    // A short ALL pause ends by itself.
    assert_eq!(admin.call(&["CLIENT", "PAUSE", "300"]), b"+OK\r\n");
    let started = std::time::Instant::now();
    assert_eq!(writer.call(&["PING"]), b"+PONG\r\n");
    assert!(started.elapsed() >= Duration::from_millis(200), "PING waited for the pause");
}

/// A client whose blocking wait ends while CLIENT PAUSE holds the requests it pipelined after
/// it gets their replies once the pause lifts (it sends nothing more to wake its worker).
#[test]
fn requests_after_a_wait_resume_when_a_pause_lifts() {
    let server = start_quince(QUINCE, &[]);
    let mut admin = server.client();
    let mut waiter = server.client();
    let mut pipeline = quince_test_util::encode_command(&["BLPOP", "q", "0.5"]);
    pipeline.extend(quince_test_util::encode_command(&["SET", "k", "v"]));
    waiter.send_raw(&pipeline);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !bulk(&admin.call(&["INFO", "clients"])).contains("blocked_clients:1\r\n") {
        assert!(std::time::Instant::now() < deadline, "BLPOP never blocked");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(admin.call(&["CLIENT", "PAUSE", "1500", "WRITE"]), b"+OK\r\n");
    assert_eq!(waiter.read_reply(), b"*-1\r\n", "the wait times out during the pause");
    assert_eq!(admin.call(&["GET", "k"]), b"$-1\r\n", "the SET is held");
    // Without a retry of held requests this read would time out (10 s) and fail.
    assert_eq!(waiter.read_reply(), b"+OK\r\n");
    assert_eq!(admin.call(&["GET", "k"]), b"$1\r\nv\r\n");
}

/// CLIENT PAUSE WRITE holds EXEC of a transaction with a write and scripts that may write, but
/// not scripts or functions declared `no-writes` (Redis's may-replicate rule).
#[test]
fn pause_write_holds_write_transactions_but_not_read_only_scripts() {
    let server = start_quince(QUINCE, &[]);
    let mut admin = server.client();
    let mut tx = server.client();
    assert_eq!(tx.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(tx.call(&["SET", "foo", "bar"]), b"+QUEUED\r\n");
    assert_eq!(admin.call(&["CLIENT", "PAUSE", "100000", "WRITE"]), b"+OK\r\n");
    tx.send(&["EXEC"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !bulk(&admin.call(&["INFO", "clients"])).contains("blocked_clients:1\r\n") {
        assert!(std::time::Instant::now() < deadline, "EXEC was not held");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut reader = server.client();
    assert_eq!(reader.call(&["EVAL", "#!lua flags=no-writes\nreturn 7", "0"]), b":7\r\n");
    assert_eq!(reader.call(&["EVAL_RO", "return 8", "0"]), b":8\r\n");
    assert_eq!(admin.call(&["GET", "foo"]), b"$-1\r\n", "the transaction is still held");
    assert_eq!(admin.call(&["CLIENT", "UNPAUSE"]), b"+OK\r\n");
    assert_eq!(tx.read_reply(), b"*1\r\n+OK\r\n");
}

/// During a CLIENT PAUSE keys whose TTL passes read as gone but are not deleted (neither by
/// the read nor by the active cycle) until the pause ends, as in Redis.
#[test]
fn expiry_waits_for_the_end_of_a_pause() {
    let server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    let expired = |c: &mut RawClient| {
        let info = bulk(&c.call(&["INFO", "stats"]));
        info.lines().find_map(|l| l.strip_prefix("expired_keys:")).expect("expired_keys").trim().to_string()
    };
    assert_eq!(expired(&mut c), "0");
    assert_eq!(c.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(c.call(&["SET", "foo", "bar", "PX", "10"]), b"+QUEUED\r\n");
    assert_eq!(c.call(&["CLIENT", "PAUSE", "50000", "WRITE"]), b"+QUEUED\r\n");
    assert_eq!(c.call(&["EXEC"]), b"*2\r\n+OK\r\n+OK\r\n");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(c.call(&["GET", "foo"]), b"$-1\r\n", "logically expired");
    assert_eq!(c.call(&["EXISTS", "foo"]), b":0\r\n");
    assert_eq!(expired(&mut c), "0", "nothing deleted during the pause");
    assert_eq!(c.call(&["CLIENT", "UNPAUSE"]), b"+OK\r\n");
    assert_eq!(c.call(&["GET", "foo"]), b"$-1\r\n");
    assert_eq!(expired(&mut c), "1");
}

/// CLIENT LIST's `multi` counts the commands queued since MULTI (-1 outside), and
/// `multi-mem` what they and the WATCHed keys take, also in `tot-mem`.
#[test]
fn client_list_shows_the_transaction() {
    let server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    let field = |c: &mut quince_test_util::RawClient, name: &str| -> i64 {
        let line = bulk(&c.call(&["CLIENT", "INFO"]));
        let value = line.split(' ').find_map(|f| f.strip_prefix(&format!("{name}="))).unwrap_or("?").trim().to_string();
        value.parse().unwrap_or_else(|_| panic!("{name} in {line}"))
    };
    assert_eq!((field(&mut c, "multi"), field(&mut c, "multi-mem")), (-1, 0));
    c.call(&["WATCH", "some-key"]);
    let watching = field(&mut c, "multi-mem");
    assert!(watching > 0);
    c.call(&["MULTI"]);
    c.call(&["SET", "k", &"v".repeat(1000)]);
    c.call(&["GET", "k"]);
    // (CLIENT INFO itself is queued too: the line comes from EXEC's reply.)
    c.send(&["CLIENT", "INFO"]);
    assert_eq!(c.read_reply(), b"+QUEUED\r\n");
    let exec = c.call(&["EXEC"]);
    let text = String::from_utf8_lossy(&exec).into_owned();
    let multi: i64 = text.split(' ').find_map(|f| f.strip_prefix("multi=")).unwrap().parse().unwrap();
    let multi_mem: i64 = text.split(' ').find_map(|f| f.strip_prefix("multi-mem=")).unwrap().parse().unwrap();
    assert_eq!(multi, 3, "{text}");
    assert!(multi_mem > watching + 1000, "{text}");
    assert_eq!((field(&mut c, "multi"), field(&mut c, "multi-mem")), (-1, 0));
}
