//! quince-server over loopback: pipelining, hostile input, limits, startup and shutdown.

use std::time::Duration;

use quince_test_util::{encode_command, start_quince, which, RawClient};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

#[test]
fn pipelined_batch_gets_every_reply_in_order() {
    let server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    let mut batch = Vec::new();
    for i in 0..10_000 {
        batch.extend(encode_command(&["SET", &format!("k{i}"), &format!("v{i}")]));
        batch.extend(encode_command(&["GET", &format!("k{i}")]));
    }
    c.send_raw(&batch);
    for i in 0..10_000 {
        assert_eq!(c.read_reply(), b"+OK\r\n");
        let v = format!("v{i}");
        assert_eq!(c.read_reply(), format!("${}\r\n{v}\r\n", v.len()).as_bytes());
    }
    assert_eq!(c.call(&["DBSIZE"]), b":10000\r\n");
}

#[test]
fn large_values_round_trip_in_pieces() {
    let server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    let value = vec![b'x'; 5 << 20];
    let request = encode_command(&[&b"SET"[..], b"big", &value]);
    for chunk in request.chunks(100_000) {
        c.send_raw(chunk);
    }
    assert_eq!(c.read_reply(), b"+OK\r\n");
    let reply = c.call(&["GET", "big"]);
    assert_eq!(reply.len(), value.len() + format!("${}\r\n\r\n", value.len()).len());
}

#[test]
fn one_gigabyte_bulk_header_is_refused_and_closed() {
    let server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    c.send_raw(b"*2\r\n$3\r\nSET\r\n$1073741824\r\n");
    assert_eq!(c.read_to_close(), b"-ERR Protocol error: invalid bulk length\r\n");
    assert_eq!(server.client().call(&["PING"]), b"+PONG\r\n");
}

/// Random and mutated input must never take the server down: after every hostile
/// connection a fresh client still gets PONG.
#[test]
fn hostile_input_never_crashes_the_server() {
    let server = start_quince(QUINCE, &[]);
    let seeds: &[&[u8]] = &[
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
        b"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n",
        b"SET a \"b\\x41\" 'c'\r\n",
        b"*-1\r\n*0\r\n$",
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..300 {
        let mut input = seeds[round % seeds.len()].repeat(1 + (next() % 4) as usize);
        for _ in 0..(next() % 8) {
            let at = (next() as usize) % input.len();
            match next() % 3 {
                0 => input[at] = next() as u8,
                1 => input.insert(at, b"*$\r\n-0123456789"[(next() % 15) as usize]),
                _ => input.truncate(at.max(1)),
            }
        }
        let mut c = server.client();
        c.send_raw(&input);
        c.shutdown_write();
        let _ = c.read_to_close();
    }
    assert_eq!(server.client().call(&["PING"]), b"+PONG\r\n");
}

#[test]
fn maxclients_refuses_extra_connections() {
    let server = start_quince(QUINCE, &["--maxclients", "2"]);
    let mut a = server.client();
    // The start-up probe's connection may not be reaped yet; wait until only `a` is counted.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !String::from_utf8_lossy(&a.call(&["INFO", "clients"])).contains("connected_clients:1\r\n") {
        assert!(std::time::Instant::now() < deadline, "probe connection never went away");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut b = server.client();
    assert_eq!(a.call(&["PING"]), b"+PONG\r\n");
    assert_eq!(b.call(&["PING"]), b"+PONG\r\n");
    let mut extra = RawClient::connect(server.port);
    assert_eq!(extra.read_to_close(), b"-ERR max number of clients reached\r\n");
}

#[test]
fn idle_clients_are_closed_after_timeout() {
    let server = start_quince(QUINCE, &["--timeout", "1"]);
    let mut c = server.client();
    assert_eq!(c.call(&["PING"]), b"+PONG\r\n");
    std::thread::sleep(Duration::from_millis(2600));
    assert_eq!(c.read_to_close(), b"");
}

#[test]
fn requirepass_gates_commands() {
    let server = start_quince(QUINCE, &["--requirepass", "secret"]);
    let mut c = server.client();
    assert_eq!(c.call(&["GET", "k"]), b"-NOAUTH Authentication required.\r\n");
    assert_eq!(c.call(&["AUTH", "wrong"]), b"-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    assert_eq!(c.call(&["AUTH", "secret"]), b"+OK\r\n");
    assert_eq!(c.call(&["GET", "k"]), b"$-1\r\n");
    let mut h = server.client();
    assert!(h.call(&["HELLO", "3"]).starts_with(b"-NOAUTH HELLO must be called"));
    assert!(h.call(&["HELLO", "3", "AUTH", "default", "secret"]).starts_with(b"%7\r\n"));
}

#[test]
fn active_expiry_removes_keys_nobody_reads() {
    let server = start_quince(QUINCE, &["--hz", "50"]);
    let mut c = server.client();
    for i in 0..200 {
        c.call(&["SET", &format!("k{i}"), "v", "PX", "30"]);
    }
    c.call(&["SET", "keep", "v"]);
    std::thread::sleep(Duration::from_millis(800));
    // DBSIZE does not expire keys itself, so only the background cycle can have removed them.
    assert_eq!(c.call(&["DBSIZE"]), b":1\r\n");
    let info = String::from_utf8(c.call(&["INFO", "stats"])).unwrap();
    assert!(info.contains("expired_keys:200\r\n"), "{info}");
}

#[test]
fn shutdown_command_stops_the_server() {
    let mut server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    c.send(&["SHUTDOWN", "NOSAVE"]);
    assert_eq!(c.read_to_close(), b"");
    assert!(server.wait_exit(Duration::from_secs(5)), "server still running after SHUTDOWN");
}

#[test]
fn sigterm_stops_the_server_and_logs_startup_facts() {
    let log = std::env::temp_dir().join(format!("quince-test-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut server = start_quince(QUINCE, &["--logfile", log.to_str().unwrap(), "--threads", "3"]);
    server.terminate();
    assert!(server.wait_exit(Duration::from_secs(5)), "server still running after SIGTERM");
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let startup = format!("port={} threads=3", server.port);
    assert!(text.contains(&startup) && text.contains("pid=") && text.contains("redis 7.0.15"), "{text}");
    assert!(text.contains("bye bye"), "{text}");
}

#[test]
fn bad_config_refuses_to_start() {
    let out = std::process::Command::new(QUINCE).args(["--port", "70000"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("FATAL CONFIG FILE ERROR") && err.contains("argument must be between 0 and 65535"), "{err}");
    let out = std::process::Command::new(QUINCE).args(["--no-such-directive", "1"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("Bad directive or wrong number of arguments"));
}

/// Command-line options read as redis-server 7.0 reads them (a value may start with `--`
/// right after an option without one; `--save` before another option means `save ""`),
/// with the same error lines, line numbers included.
#[test]
fn command_line_errors_match_redis() {
    let Some(redis) = which("redis-server") else {
        assert!(!quince_test_util::redis_required(), "QUINCE_REQUIRE_REDIS=1 but redis-server is not on PATH");
        eprintln!("skipping: redis-server not found (apt-get install -y redis-server)");
        return;
    };
    let cases: &[&[&str]] = &[
        &["--port"],
        &["--port", "6380", "--loglevel"],
        &["--port", "6379", "6380"],
        &["--port", "--loglevel", "verbose"],
        &["--port", "--bla", "--loglevel", "verbose"],
        &["--logfile", "--my--log--file", "--loglevel", "--bla"],
        &["--shutdown-on-sigint"],
    ];
    // The error's lines after the first (which names the product).
    let error = |binary: &std::path::Path, args: &[&str]| -> (bool, Vec<String>) {
        let out = std::process::Command::new(binary).args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
        let lines = text.lines().filter(|l| !l.is_empty() && !l.contains("FATAL CONFIG FILE ERROR")).map(String::from);
        (out.status.success(), lines.collect())
    };
    for args in cases {
        let expected = error(&redis, args);
        assert!(!expected.0, "redis-server started with {args:?}");
        assert_eq!(error(std::path::Path::new(QUINCE), args), expected, "{args:?}: quince first, redis second");
    }
}

/// redis-benchmark is Redis's own load tool; its whole default suite must run against
/// quince with no errors, pipelined and not.
#[test]
fn redis_benchmark_default_suite_runs_clean() {
    let Some(bench) = which("redis-benchmark") else {
        assert!(!quince_test_util::redis_required(), "QUINCE_REQUIRE_REDIS=1 but redis-benchmark is missing");
        eprintln!("SKIPPED: redis-benchmark not found on PATH");
        return;
    };
    let server = start_quince(QUINCE, &[]);
    for pipeline in ["1", "16"] {
        let out = std::process::Command::new(&bench)
            .args(["-p", &server.port.to_string(), "-P", pipeline, "-n", "5000", "-c", "20", "-q"])
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{text}");
        assert!(!text.contains("ERR") && !text.contains("WARNING") && !text.contains("rror"), "{text}");
        for test in [
            "PING_INLINE",
            "PING_MBULK",
            "SET",
            "GET",
            "INCR",
            "LPUSH",
            "RPUSH",
            "LPOP",
            "RPOP",
            "SADD",
            "HSET",
            "SPOP",
            "ZADD",
            "ZPOPMIN",
            "LPUSH (needed to benchmark LRANGE)",
            "LRANGE_100 (first 100 elements)",
            "LRANGE_300 (first 300 elements)",
            "LRANGE_500 (first 500 elements)",
            "LRANGE_600 (first 600 elements)",
            "MSET (10 keys)",
        ] {
            assert!(text.contains(&format!("{test}: ")), "{test} missing from: {text}");
        }
    }
}

/// Under `ulimit -n 64` a server that cannot raise its open-files limit to maxclients + 32
/// lowers maxclients to fit (Redis's adjustOpenFilesLimit), and clients past it get
/// "-ERR max number of clients reached" rather than waiting for a descriptor. Compared with
/// redis-server under the same limit (where the limit can be raised, both keep 10000).
#[test]
fn a_low_open_files_limit_lowers_maxclients_as_redis_does() {
    let Some(redis_path) = which("redis-server") else {
        assert!(!quince_test_util::redis_required(), "QUINCE_REQUIRE_REDIS=1 but redis-server is not on PATH");
        eprintln!("SKIPPED: redis-server not found on PATH");
        return;
    };
    let redis_path = redis_path.to_str().unwrap().to_string();
    let wrap = "ulimit -n 64 && exec \"$0\" \"$@\"";
    let sh = std::path::Path::new("/bin/sh");
    let quince = quince_test_util::ServerProcess::spawn("quince", sh, &["-c", wrap, QUINCE, "--save", ""]).unwrap();
    let redis = quince_test_util::ServerProcess::spawn(
        "redis",
        sh,
        &["-c", wrap, &redis_path, "--save", "", "--appendonly", "no"],
    )
    .unwrap();
    let outcome = |server: &quince_test_util::ServerProcess| {
        let mut first = server.client();
        let maxclients = String::from_utf8(first.call(&["CONFIG", "GET", "maxclients"])).unwrap();
        let n: usize = maxclients.lines().nth(4).unwrap().parse().unwrap();
        // The start-up check's connections must be gone before counting.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !String::from_utf8(first.call(&["INFO", "clients"])).unwrap().contains("connected_clients:1\r\n") {
            assert!(std::time::Instant::now() < deadline, "start-up connections still open");
            std::thread::sleep(Duration::from_millis(20));
        }
        // A few more than allowed (capped: a raised limit keeps 10000).
        let mut clients = vec![first];
        let (mut served, mut refused) = (0, 0);
        for _ in 1..(n + 5).min(60) {
            let mut c = server.client();
            c.send(&["PING"]);
            match c.read_reply() {
                r if r == b"+PONG\r\n" => served += 1,
                r if r == b"-ERR max number of clients reached\r\n" => refused += 1,
                r => panic!("unexpected reply {:?}", String::from_utf8_lossy(&r)),
            }
            clients.push(c);
        }
        (maxclients, served, refused)
    };
    let expected = outcome(&redis);
    drop(redis);
    assert_eq!(outcome(&quince), expected);
}

/// With `logfile ""` the log goes to stdout, as redis-server's; `always-show-logo yes` (set by
/// Redis's test framework) shows the banner whose ` PID: <pid>` line the framework waits for.
#[test]
fn log_lines_and_the_banner_go_to_stdout() {
    use std::io::{BufRead, BufReader};
    let dir = std::env::temp_dir().join(format!("quince-banner-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (logo, expect_banner) in [("yes", true), ("no", false)] {
        let port = quince_test_util::free_port();
        let mut child = std::process::Command::new(QUINCE)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--always-show-logo", logo])
            .arg("--dir")
            .arg(&dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut lines = Vec::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            let ready = line.contains("Ready to accept connections");
            lines.push(line);
            if ready {
                break;
            }
        }
        let _ = child.kill(); // by pid
        let out = child.wait_with_output().unwrap();
        let text = lines.join("\n");
        assert_eq!(text.contains(&format!(" PID: {pid}")), expect_banner, "{text}");
        assert_eq!(text.contains(&format!(" Port: {port}")), expect_banner, "{text}");
        assert_eq!(text.contains(&format!("Running mode=standalone, port={port}.")), !expect_banner, "{text}");
        assert!(text.contains(&format!("{pid}:M ")), "log lines on stdout: {text}");
        assert!(out.stderr.is_empty(), "nothing on stderr: {}", String::from_utf8_lossy(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A dataset that fails to load (a truncated AOF with `aof-load-truncated no`): as
/// redis-server, the banner and "Server initialized" come first, then the error, and the
/// process exits with a failure (Redis's test framework waits for the ` PID: ` line before
/// it looks for the error).
#[test]
fn a_failed_load_is_logged_after_the_banner() {
    let dir = one_incr_aof_dir(
        "quince-badaof",
        "*3\r\n$3\r\nset\r\n$3\r\nfoo\r\n$5\r\nhello\r\n*3\r\n$3\r\nset\r\n$3\r\nbar\r\n$5\r\nworld\r",
    );
    let port = quince_test_util::free_port();
    let child = std::process::Command::new(QUINCE)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--appendonly", "yes"])
        .args(["--aof-load-truncated", "no", "--always-show-logo", "yes", "--logfile", ""])
        .arg("--dir")
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("no {needle:?} in {text}"));
    assert!(at(&format!(" PID: {pid}")) < at("Server initialized"), "{text}");
    assert!(at("Server initialized") < at("Unexpected end of file reading the append only file"), "{text}");
    assert!(!text.contains("Ready to accept connections"), "{text}");
    assert!(!out.status.success(), "exit status {:?}", out.status);
    let _ = std::fs::remove_dir_all(&dir);
}

/// While the AOF loads, a slow script in it makes the server busy; clients get LOADING,
/// not BUSY (Redis's processCommand checks loading first).
#[test]
fn a_slow_script_in_the_aof_answers_loading_not_busy() {
    let script = "redis.call('set',KEYS[1],'y'); for i=1,1500000 do redis.call('ping') end return 'ok'";
    let mut log = quince_test_util::encode_command(&["SELECT", "9"]);
    log.extend(quince_test_util::encode_command(&["EVAL", script, "1", "x"]));
    let dir = one_incr_aof_dir("quince-slowaof", log);
    // Started by hand: the test helpers wait until the load is over.
    let (mut child, port) = spawn_listening(|cmd| {
        cmd.args(["--appendonly", "yes", "--lua-time-limit", "1"]).arg("--dir").arg(&dir);
    });
    let mut c = RawClient::connect(port);
    let mut seen = Vec::new();
    loop {
        let reply = c.call(&["PING"]);
        if reply == b"+PONG\r\n" {
            break;
        }
        seen.push(String::from_utf8_lossy(&reply).into_owned());
    }
    assert!(!seen.is_empty(), "the load ended before a PING could see it");
    let other = seen.iter().find(|r| !r.starts_with("-LOADING"));
    assert!(other.is_none(), "{other:?} among {} replies", seen.len());
    c.call(&["SELECT", "9"]);
    assert_eq!(c.call(&["GET", "x"]), b"$1\r\ny\r\n");
    let _ = child.kill(); // by pid
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// While the dataset loads, CONFIG SET of a parameter Redis flags deny-loading (`dir`,
/// `appendonly`) answers LOADING; others (`loglevel`) apply.
#[test]
fn config_set_during_loading_refuses_deny_loading_parameters() {
    // Long enough to load that the test sees it loading.
    let mut log = Vec::with_capacity(64 << 20);
    for i in 0..1_500_000 {
        log.extend(encode_command(&["SET", &format!("key:{i}"), "value"]));
    }
    let dir = one_incr_aof_dir("quince-loadcfg", log);
    let (mut child, port) = spawn_listening(|cmd| {
        cmd.args(["--appendonly", "yes", "--save", "", "--enable-protected-configs", "yes"]).arg("--dir").arg(&dir);
    });
    let mut c = RawClient::connect(port);
    let loading = |c: &mut RawClient| String::from_utf8_lossy(&c.call(&["INFO", "persistence"])).contains("loading:1");
    assert!(loading(&mut c), "the load ended before the test could see it");
    assert_eq!(c.call(&["CONFIG", "SET", "loglevel", "verbose"]), b"+OK\r\n");
    let refused = c.call(&["CONFIG", "SET", "dir", "/tmp"]);
    let still = loading(&mut c);
    let _ = child.kill(); // by pid
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(still, "the load ended during the test: inconclusive");
    assert_eq!(refused, b"-LOADING Redis is loading the dataset in memory\r\n");
}

/// `oom-score-adj`: the process's OOM score follows the configured value of its class
/// (master, replica, background child), relative to the score it started with or
/// absolute, and goes back when turned off (Redis's unit/oom-score-adj).
#[test]
fn oom_score_adj_follows_the_role() {
    let dir = std::env::temp_dir().join(format!("quince-oom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir_arg = dir.to_str().unwrap().to_string();
    let server = start_quince(QUINCE, &["--dir", &dir_arg, "--save", ""]);
    let score = |pid: u32| -> i64 {
        std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).unwrap().trim().parse().unwrap()
    };
    let pid = server.pid();
    let base = score(pid);
    let mut c = server.client();
    let ok = |c: &mut RawClient, args: &[&str]| assert_eq!(c.call(args), b"+OK\r\n", "{args:?}");
    ok(&mut c, &["CONFIG", "SET", "oom-score-adj-values", "10 20 30"]);
    ok(&mut c, &["CONFIG", "SET", "oom-score-adj", "yes"]);
    assert_eq!(score(pid), base + 10);
    ok(&mut c, &["CONFIG", "SET", "oom-score-adj-values", "15 20 30"]);
    assert_eq!(score(pid), base + 15);
    ok(&mut c, &["REPLICAOF", "127.0.0.1", "1"]);
    assert_eq!(score(pid), base + 20);
    ok(&mut c, &["REPLICAOF", "NO", "ONE"]);
    assert_eq!(score(pid), base + 15);
    // A background save's child takes the third value.
    c.call(&["SET", "k", "v"]);
    ok(&mut c, &["CONFIG", "SET", "rdb-key-save-delay", "3000000"]);
    assert_eq!(c.call(&["BGSAVE"]), b"+Background saving started\r\n");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut seen = None;
    while seen.is_none() && std::time::Instant::now() < deadline {
        // The child is a child of whichever thread forked: look at every thread's children.
        for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap().flatten() {
            let kids = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for kid in kids.split_whitespace().filter_map(|p| p.parse::<u32>().ok()) {
                if std::fs::read_to_string(format!("/proc/{kid}/oom_score_adj"))
                    .is_ok_and(|s| s.trim() == (base + 30).to_string())
                {
                    seen = Some(kid);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(seen.is_some(), "no child with score {}", base + 30);
    ok(&mut c, &["CONFIG", "SET", "rdb-key-save-delay", "0"]);
    ok(&mut c, &["CONFIG", "SET", "oom-score-adj", "absolute"]);
    assert_eq!(score(pid), 15);
    ok(&mut c, &["CONFIG", "SET", "oom-score-adj", "no"]);
    assert_eq!(score(pid), base);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// quince has no software watchdog yet: `watchdog-period` other than 0 is refused, at
/// start-up and by CONFIG SET, rather than accepted with no watchdog running.
#[test]
fn watchdog_period_is_refused_not_ignored() {
    let out = std::process::Command::new(QUINCE).args(["--watchdog-period", "100"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("no software watchdog"), "{out:?}");
    let server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    let refused = c.call(&["CONFIG", "SET", "watchdog-period", "200"]);
    assert!(refused.starts_with(b"-ERR CONFIG SET failed (possibly related to argument 'watchdog-period')"));
    assert_eq!(c.call(&["CONFIG", "GET", "watchdog-period"]), b"*2\r\n$15\r\nwatchdog-period\r\n$1\r\n0\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "watchdog-period", "0"]), b"+OK\r\n");
    // Client eviction likewise.
    let refused = c.call(&["CONFIG", "SET", "maxmemory-clients", "10%"]);
    assert!(refused.starts_with(b"-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients')"));
    let out = std::process::Command::new(QUINCE).args(["--maxmemory-clients", "1mb"]).output().unwrap();
    assert!(!out.status.success());
}

/// DEBUG LOG writes its message to the log, as Redis's (its tests mark places in the log).
#[test]
fn debug_log_writes_to_the_log() {
    let dir = std::env::temp_dir().join(format!("quince-debuglog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("quince.log");
    let (dir_arg, log_arg) = (dir.to_str().unwrap().to_string(), log.to_str().unwrap().to_string());
    let server = start_quince(QUINCE, &["--dir", &dir_arg, "--logfile", &log_arg, "--enable-debug-command", "yes"]);
    let mut c = server.client();
    assert_eq!(c.call(&["DEBUG", "LOG", "marker 42"]), b"+OK\r\n");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.lines().any(|l| l.contains(" # DEBUG LOG: marker 42")), "{text}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A crash writes Redis's bug report with a stack trace to the log, then the process dies of
/// the signal; with `crash-log-enabled no` it only dies.
#[test]
fn a_crash_writes_a_report_and_dies_of_the_signal() {
    use std::os::unix::process::ExitStatusExt;
    let dir = std::env::temp_dir().join(format!("quince-crash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (how, report) in [("segfault", true), ("abort", true), ("segfault", false)] {
        let log = dir.join(format!("{how}-{report}.log"));
        let (mut child, port) = spawn_listening(|cmd| {
            cmd.args(["--save", "", "--enable-debug-command", "yes"]);
            cmd.args(["--crash-log-enabled", if report { "yes" } else { "no" }]);
            cmd.arg("--logfile").arg(&log).arg("--dir").arg(&dir);
        });
        let signal = if how == "segfault" {
            let mut c = RawClient::connect(port);
            c.send(&["DEBUG", "SEGFAULT"]);
            libc_signal::SEGV
        } else {
            // By pid, the process this test started.
            std::process::Command::new("kill").args(["-ABRT", &child.id().to_string()]).status().unwrap();
            libc_signal::ABRT
        };
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(signal), "{how}: {status:?}");
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(text.contains("------ STACK TRACE ------"), report, "{how}: {text}");
        assert_eq!(text.contains(&format!("crashed by signal: {signal}")), report, "{how}: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Once SHUTDOWN ran, a new client is refused, as when redis-server has exited: not
/// accepted and then dropped while the server stops (Redis's tests reconnect at once and
/// expect "connection refused").
#[test]
fn after_shutdown_new_connections_are_refused() {
    for backend in ["io_uring", "epoll"] {
        let (mut child, port) = spawn_listening(|cmd| {
            cmd.args(["--save", "", "--io-backend", backend]);
        });
        let mut c = RawClient::connect(port);
        c.send(&["SHUTDOWN", "NOSAVE"]);
        assert!(c.read_to_close().is_empty(), "{backend}: SHUTDOWN replies nothing");
        let refused = std::net::TcpStream::connect(("127.0.0.1", port));
        assert_eq!(
            refused.as_ref().map_err(|e| e.kind()).err(),
            Some(std::io::ErrorKind::ConnectionRefused),
            "{backend}: {refused:?}"
        );
        let _ = child.wait();
    }
}

/// Starts quince-server by hand on a free port (`--port`, `--bind 127.0.0.1`, then what
/// `configure` adds) and waits until it listens, not until it has loaded (the test helpers
/// wait for that): for tests that watch start-up or loading.
fn spawn_listening(configure: impl Fn(&mut std::process::Command)) -> (KillOnDrop, u16) {
    for _attempt in 0..5 {
        let port = quince_test_util::free_port();
        let mut cmd = std::process::Command::new(QUINCE);
        cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"]);
        configure(&mut cmd);
        let mut child =
            KillOnDrop(cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "the server never listened");
            std::thread::sleep(Duration::from_millis(5));
        }
        // Another test's server may have held the "free" port: ours if it says so, or (when
        // it does not answer INFO: a password) if our process still runs a moment later.
        let ours = match quince_test_util::answering_pid(port) {
            Some(pid) => pid == child.id(),
            None => {
                std::thread::sleep(Duration::from_millis(200));
                matches!(child.0.try_wait(), Ok(None))
            }
        };
        if ours {
            return (child, port);
        }
    }
    panic!("no free port for the server after 5 attempts");
}

/// A fresh data directory whose AOF is one incremental file holding `incr` (the manifest
/// naming it), for tests of loading.
fn one_incr_aof_dir(name: &str, incr: impl AsRef<[u8]>) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let aof = dir.join("appendonlydir");
    std::fs::create_dir_all(&aof).unwrap();
    std::fs::write(aof.join("appendonly.aof.manifest"), "file appendonly.aof.1.incr.aof seq 1 type i\n").unwrap();
    std::fs::write(aof.join("appendonly.aof.1.incr.aof"), incr).unwrap();
    dir
}

/// A server process a test started by hand: killed (by pid) and reaped when the test ends,
/// however it ends.
struct KillOnDrop(std::process::Child);

impl std::ops::Deref for KillOnDrop {
    type Target = std::process::Child;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for KillOnDrop {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Signal numbers on Linux.
mod libc_signal {
    pub const ABRT: i32 = 6;
    pub const SEGV: i32 = 11;
}

/// A port another process holds: Redis's two log lines (its test framework retries another
/// port on "Failed listening on port"), and a failing exit.
#[test]
fn a_taken_port_is_reported_as_redis_does() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = std::env::temp_dir().join(format!("quince-taken-port-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = std::process::Command::new(QUINCE)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
        .arg("--dir")
        .arg(&dir)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(
        log.contains(&format!("# Warning: Could not create server TCP listening socket 127.0.0.1:{port}:")),
        "{log}"
    );
    assert!(log.contains(&format!("# Failed listening on port {port} (TCP), aborting.")), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An empty directory of this test process's own, named after `name`.
fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits until `log` holds `text` (the server's log file), up to 10 s.
fn wait_for_log(log: &std::path::Path, text: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let content = std::fs::read_to_string(log).unwrap_or_default();
        if content.contains(text) {
            return content;
        }
        assert!(std::time::Instant::now() < deadline, "no {text:?} in the log:\n{content}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// As Redis's prepareForShutdown: a SIGINT whose final save fails logs why and keeps the
/// server running (listening), SHUTDOWN then fails with "Errors trying to SHUTDOWN", and
/// SHUTDOWN NOSAVE still exits (Redis's unit/shutdown).
#[test]
fn a_failed_final_save_keeps_the_server_running() {
    let dir = fresh_dir("quince-failed-final-save");
    let log = dir.join("log");
    let (mut child, port) = spawn_listening(|cmd| {
        cmd.args(["--save", "900 1"]).arg("--dir").arg(&dir).arg("--logfile").arg(&log);
    });
    let mut c = RawClient::connect(port);
    assert_eq!(c.call(&["SET", "k", "v"]), b"+OK\r\n");
    // A directory where the snapshot goes: the rename at the end of the save fails.
    std::fs::create_dir_all(dir.join("dump.rdb")).unwrap();
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let text = wait_for_log(&log, "Errors trying to shut down the server");
    assert!(text.contains("Received SIGINT scheduling shutdown..."), "{text}");
    assert!(text.contains("Error trying to save the DB, can't exit."), "{text}");
    let mut fresh = RawClient::connect(port);
    assert_eq!(fresh.call(&["PING"]), b"+PONG\r\n", "still serving, new clients too");
    assert_eq!(c.call(&["SHUTDOWN"]), b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n");
    assert_eq!(c.call(&["GET", "k"]), b"$1\r\nv\r\n");
    c.send(&["SHUTDOWN", "NOSAVE"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "SHUTDOWN NOSAVE did not exit");
        std::thread::sleep(Duration::from_millis(10));
    }
    wait_for_log(&log, "ready to exit, bye bye");
    let _ = std::fs::remove_dir_all(&dir);
}

/// DEBUG PAUSE-CRON holds a shutdown a signal scheduled; SHUTDOWN ABORT cancels it
/// ("Shutdown manually aborted"), and without one it is "No shutdown in progress".
#[test]
fn shutdown_abort_cancels_a_scheduled_sigterm() {
    let dir = fresh_dir("quince-shutdown-abort");
    let log = dir.join("log");
    let (mut child, port) = spawn_listening(|cmd| {
        cmd.args(["--save", "", "--enable-debug-command", "yes"]).arg("--dir").arg(&dir).arg("--logfile").arg(&log);
    });
    let mut c = RawClient::connect(port);
    assert_eq!(c.call(&["SHUTDOWN", "ABORT"]), b"-ERR No shutdown in progress.\r\n");
    assert_eq!(c.call(&["DEBUG", "PAUSE-CRON", "1"]), b"+OK\r\n");
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    wait_for_log(&log, "Received SIGTERM scheduling shutdown...");
    assert_eq!(c.call(&["SHUTDOWN", "ABORT"]), b"+OK\r\n");
    wait_for_log(&log, "Shutdown manually aborted.");
    assert_eq!(c.call(&["DEBUG", "PAUSE-CRON", "0"]), b"+OK\r\n");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(c.call(&["PING"]), b"+PONG\r\n");
    assert!(child.try_wait().unwrap().is_none(), "the aborted shutdown did not run");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A second SIGINT during the final save exits at once and removes the temporary RDB.
#[test]
fn a_second_sigint_during_the_final_save_exits_now() {
    let dir = fresh_dir("quince-insist-exit");
    let log = dir.join("log");
    let (mut child, port) = spawn_listening(|cmd| {
        cmd.args(["--save", "900 1", "--rdb-key-save-delay", "100000"])
            .arg("--dir")
            .arg(&dir)
            .arg("--logfile")
            .arg(&log);
    });
    let mut c = RawClient::connect(port);
    for i in 0..20 {
        assert_eq!(c.call(&["SET", &i.to_string(), "v"]), b"+OK\r\n");
    }
    let temp = dir.join(format!("temp-{}.rdb", child.id()));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !temp.exists() {
        assert!(std::time::Instant::now() < deadline, "the final save never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "not a clean shutdown");
    assert!(!temp.exists(), "the temporary RDB is removed");
    wait_for_log(&log, "You insist... exiting now.");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An INFO field's value.
fn info_field(c: &mut RawClient, field: &str) -> String {
    let info = String::from_utf8_lossy(&c.call(&["INFO", "persistence"])).into_owned();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in INFO"))
        .trim()
        .to_string()
}

fn wait_rewrite_done(c: &mut RawClient) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while info_field(c, "aof_rewrite_in_progress") != "0" || info_field(c, "aof_rewrite_scheduled") != "0" {
        assert!(std::time::Instant::now() < deadline, "the rewrite never ended");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pid of the running rewrite child (INFO doesn't say; the server's only child, forked
/// by whichever of its threads ran the command).
fn child_pid(server: u32) -> Option<i32> {
    std::fs::read_dir(format!("/proc/{server}/task")).ok()?.find_map(|task| {
        let children = std::fs::read_to_string(task.ok()?.path().join("children")).ok()?;
        children.split_whitespace().next()?.parse().ok()
    })
}

/// Redis 7.0's multi-part AOF housekeeping (its suite's integration/aof-multi-part):
/// with `aof-disable-auto-gc yes` rewritten files stay as history, newest first, and go
/// when it is set back to no; three failed rewrites in a row limit automatic ones (a log
/// line, no new incremental file), INFO counts them, a manual BGREWRITEAOF still runs;
/// DEBUG LOADAOF leaves no changes to save.
#[test]
fn aof_history_gc_and_the_rewrite_failure_limit() {
    let dir = fresh_dir("quince-aof-gc");
    let log = dir.join("log");
    let (child, port) = spawn_listening(|cmd| {
        cmd.args(["--appendonly", "yes", "--save", "", "--enable-debug-command", "yes"])
            .arg("--dir")
            .arg(&dir)
            .arg("--logfile")
            .arg(&log);
    });
    let mut c = RawClient::connect(port);
    let manifest = || std::fs::read_to_string(dir.join("appendonlydir/appendonly.aof.manifest")).unwrap();
    assert_eq!(c.call(&["SET", "k", "v"]), b"+OK\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "aof-disable-auto-gc", "yes"]), b"+OK\r\n");
    for _ in 0..2 {
        c.call(&["BGREWRITEAOF"]);
        wait_rewrite_done(&mut c);
    }
    assert_eq!(
        manifest(),
        "file appendonly.aof.3.base.rdb seq 3 type b\nfile appendonly.aof.2.incr.aof seq 2 type h\n\
         file appendonly.aof.2.base.rdb seq 2 type h\nfile appendonly.aof.1.incr.aof seq 1 type h\n\
         file appendonly.aof.1.base.rdb seq 1 type h\nfile appendonly.aof.3.incr.aof seq 3 type i\n"
    );
    assert!(dir.join("appendonlydir/appendonly.aof.1.incr.aof").exists());
    assert_eq!(c.call(&["CONFIG", "SET", "aof-disable-auto-gc", "no"]), b"+OK\r\n");
    assert_eq!(
        manifest(),
        "file appendonly.aof.3.base.rdb seq 3 type b\nfile appendonly.aof.3.incr.aof seq 3 type i\n"
    );
    assert!(!dir.join("appendonlydir/appendonly.aof.1.incr.aof").exists());
    assert!(!dir.join("appendonlydir/appendonly.aof.2.base.rdb").exists());

    // Three rewrites killed: the limit.
    assert_eq!(c.call(&["CONFIG", "SET", "rdb-key-save-delay", "10000000"]), b"+OK\r\n");
    for _ in 0..3 {
        assert_eq!(c.call(&["BGREWRITEAOF"]), b"+Background append only file rewriting started\r\n");
        let pid = child_pid(child.id()).expect("a rewrite child");
        // SAFETY: kill(2) on the server's child, found by pid.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        wait_rewrite_done(&mut c);
    }
    assert_eq!(info_field(&mut c, "aof_rewrites_consecutive_failures"), "3");
    assert_eq!(info_field(&mut c, "aof_last_bgrewrite_status"), "err");
    let before = manifest();
    assert_eq!(c.call(&["CONFIG", "SET", "auto-aof-rewrite-percentage", "1"]), b"+OK\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "auto-aof-rewrite-min-size", "1kb"]), b"+OK\r\n");
    assert_eq!(c.call(&["SET", "x", &"x".repeat(2048)]), b"+OK\r\n");
    wait_for_log(&log, "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in 1 minutes");
    assert_eq!(info_field(&mut c, "aof_rewrite_in_progress"), "0");
    assert_eq!(manifest(), before, "no new incremental file while limited");
    // A manual rewrite still runs, and success ends the count.
    assert_eq!(c.call(&["CONFIG", "SET", "auto-aof-rewrite-percentage", "0"]), b"+OK\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "rdb-key-save-delay", "0"]), b"+OK\r\n");
    c.call(&["BGREWRITEAOF"]);
    wait_rewrite_done(&mut c);
    assert_eq!(info_field(&mut c, "aof_rewrites_consecutive_failures"), "0");
    assert_eq!(info_field(&mut c, "aof_last_bgrewrite_status"), "ok");
    assert_eq!(manifest().lines().count(), 2, "{}", manifest());
    // DEBUG LOADAOF: nothing left to save afterwards.
    assert_eq!(c.call(&["SET", "y", "1"]), b"+OK\r\n");
    assert_eq!(c.call(&["DEBUG", "LOADAOF"]), b"+OK\r\n");
    assert_eq!(info_field(&mut c, "rdb_changes_since_last_save"), "0");
    assert_eq!(c.call(&["GET", "y"]), b"$1\r\n1\r\n");
    drop(child);
    let _ = std::fs::remove_dir_all(&dir);
}

/// AOF turned on at runtime writes to a temporary incremental file until its first rewrite
/// succeeds; a rewrite that fails removes that file (Redis's log line) and a new one starts.
#[test]
fn a_failed_first_rewrite_removes_the_temporary_incr_file() {
    let dir = fresh_dir("quince-temp-incr");
    let log = dir.join("log");
    let (child, port) = spawn_listening(|cmd| {
        cmd.args(["--save", "", "--rdb-key-save-delay", "10000000"]).arg("--dir").arg(&dir).arg("--logfile").arg(&log);
    });
    let mut c = RawClient::connect(port);
    assert_eq!(c.call(&["SET", "k", "v"]), b"+OK\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "appendonly", "yes"]), b"+OK\r\n");
    let temp = dir.join("appendonlydir/temp-appendonly.aof.incr");
    assert!(temp.exists(), "no temporary incr file");
    let pid = child_pid(child.id()).expect("the first rewrite's child");
    // SAFETY: kill(2) on the server's child, found by pid.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    wait_for_log(&log, "Removing the temp incr aof file temp-appendonly.aof.incr in the background");
    assert!(!dir.join("appendonlydir/appendonly.aof.manifest").exists(), "no manifest before a first base");
    // The next rewrite starts on its own, with a new temporary file; let it succeed.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while child_pid(child.id()).is_none() {
        assert!(std::time::Instant::now() < deadline, "no new rewrite");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.call(&["CONFIG", "SET", "rdb-key-save-delay", "0"]), b"+OK\r\n");
    let pid = child_pid(child.id()).expect("the second rewrite's child");
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    // Between the killed child being reaped and the retry, no rewrite runs or is scheduled:
    // wait for the retry's success itself.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while info_field(&mut c, "aof_last_bgrewrite_status") != "ok"
        || info_field(&mut c, "aof_rewrite_in_progress") != "0"
    {
        assert!(std::time::Instant::now() < deadline, "the third rewrite never succeeded");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("appendonlydir/appendonly.aof.manifest")).unwrap(),
        "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    );
    assert!(!temp.exists());
    assert_eq!(c.call(&["GET", "k"]), b"$1\r\nv\r\n");
    drop(child);
    let _ = std::fs::remove_dir_all(&dir);
}

/// After a failed BGSAVE (with save points and stop-writes-on-bgsave-error), writes made by
/// scripts are refused with MISCONF too, reads are not (Redis's scriptVerifyWriteCommandAllow;
/// its integration/rdb "failed bgsave prevents writes").
#[test]
fn a_failed_bgsave_refuses_script_writes() {
    let dir = fresh_dir("quince-misconf-script");
    let (child, port) = spawn_listening(|cmd| {
        cmd.args(["--save", "900 1"]).arg("--dir").arg(&dir);
    });
    let mut c = RawClient::connect(port);
    assert_eq!(c.call(&["SET", "x", "x"]), b"+OK\r\n");
    std::fs::create_dir_all(dir.join("dump.rdb")).unwrap();
    c.call(&["BGSAVE"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while info_field(&mut c, "rdb_last_bgsave_status") != "err" {
        assert!(std::time::Instant::now() < deadline, "the BGSAVE did not fail");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(c.call(&["SET", "x", "y"]).starts_with(b"-MISCONF "));
    let write = "return redis.call('set','x',1)";
    assert!(c.call(&["EVAL", write, "1", "x"]).starts_with(b"-MISCONF "));
    assert!(c.call(&["EVAL", &format!("#!lua\n{write}"), "1", "x"]).starts_with(b"-MISCONF "));
    assert_eq!(c.call(&["EVAL", "return redis.call('get','x')", "1", "x"]), b"$1\r\nx\r\n");
    assert_eq!(c.call(&["EVAL", "#!lua flags=no-writes\nreturn redis.call('get','x')", "1", "x"]), b"$1\r\nx\r\n");
    drop(child);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An RDB whose CRC64 does not match is refused at start-up with Redis's lines (the
/// checksum's, then "RDB CRC error"), and the server exits.
#[test]
fn a_corrupt_rdb_checksum_stops_the_start() {
    let dir = fresh_dir("quince-rdb-crc");
    {
        let (child, port) = spawn_listening(|cmd| {
            cmd.arg("--dir").arg(&dir);
        });
        let mut c = RawClient::connect(port);
        assert_eq!(c.call(&["SET", "k", "v"]), b"+OK\r\n");
        assert_eq!(c.call(&["SAVE"]), b"+OK\r\n");
        drop(child);
    }
    let path = dir.join("dump.rdb");
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 8..].copy_from_slice(b"foobar00");
    std::fs::write(&path, bytes).unwrap();
    let out = std::process::Command::new(QUINCE)
        .args(["--port", &quince_test_util::free_port().to_string(), "--bind", "127.0.0.1"])
        .arg("--dir")
        .arg(&dir)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("Wrong RDB checksum expected: ("), "{log}");
    assert!(log.contains("RDB CRC error"), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `rename-command` as Redis 7.0 has it: the old name is unknown, the new one runs the
/// command, an empty one removes it; a bad line stops the start with Redis's reason.
/// Replies compared with redis-server started the same way.
#[test]
fn rename_command_renames_or_removes_commands() {
    let args = ["--rename-command", "flushdb", "badger", "--rename-command", "debug", ""];
    let steps: [&[&str]; 5] = [&["SET", "k", "v"], &["FLUSHDB"], &["BADGER"], &["DBSIZE"], &["DEBUG", "SLEEP", "0"]];
    let run = |server: &quince_test_util::ServerProcess| -> Vec<Vec<u8>> {
        let mut c = server.client();
        steps.iter().map(|s| c.call(s)).collect()
    };
    let quince = start_quince(QUINCE, &args);
    let got = run(&quince);
    assert_eq!(got[1], b"-ERR unknown command 'FLUSHDB', with args beginning with: \r\n");
    assert_eq!(got[2], b"+OK\r\n");
    assert_eq!(got[3], b":0\r\n");
    if let Some(redis) = quince_test_util::start_redis(&args) {
        assert_eq!(got, run(&redis));
    }
    for (old, new, reason) in
        [("nosuch", "x", "No such command in rename-command"), ("get", "set", "Target command name already exists")]
    {
        let out = std::process::Command::new(QUINCE)
            .args(["--port", &quince_test_util::free_port().to_string(), "--rename-command", old, new])
            .output()
            .unwrap();
        assert!(!out.status.success());
        let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!(">>> 'rename-command {old} {new}'\n{reason}")), "{text}");
    }
}

/// A BGSAVE child reports its progress and its copy-on-write cost as Redis's does
/// (INFO persistence `current_save_keys_processed/total`, `current_fork_perc`,
/// `current_cow_size/peak`, then `rdb_last_cow_size`); a rewrite child its own
/// `aof_last_cow_size`. Writes made meanwhile leave the child's copies of those pages private.
#[test]
fn background_children_report_progress_and_copy_on_write() {
    let dir = fresh_dir("quince-cow");
    let (child, port) = spawn_listening(|cmd| {
        cmd.args(["--save", "", "--enable-debug-command", "yes"]).arg("--dir").arg(&dir);
    });
    let mut c = RawClient::connect(port);
    assert_eq!(info_field(&mut c, "current_save_keys_total"), "0");
    assert_eq!(info_field(&mut c, "rdb_last_cow_size"), "0");
    assert_eq!(c.call(&["DEBUG", "POPULATE", "20000", "key", "100"]), b"+OK\r\n");
    // 20,000 keys at 30 µs each (about 100 µs of sleep here): about 2 s of saving.
    assert_eq!(c.call(&["CONFIG", "SET", "rdb-key-save-delay", "30"]), b"+OK\r\n");
    assert_eq!(c.call(&["BGSAVE"]), b"+Background saving started\r\n");
    assert_eq!(info_field(&mut c, "current_save_keys_total"), "20000");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut round = 0;
    loop {
        // Rewrite values the child has yet to save: the parent's pages get copied.
        for i in 0..2_000 {
            let key = format!("key:{}", (round * 2_000 + i) % 20_000);
            c.call(&["SET", &key, &"y".repeat(100)]);
        }
        round += 1;
        let processed: u64 = info_field(&mut c, "current_save_keys_processed").parse().unwrap();
        let cow: u64 = info_field(&mut c, "current_cow_size").parse().unwrap();
        if processed > 0 && cow > 0 {
            let perc: f64 = info_field(&mut c, "current_fork_perc").parse().unwrap();
            assert!(perc > 0.0 && perc <= 100.0, "{perc}");
            let peak: u64 = info_field(&mut c, "current_cow_peak").parse().unwrap();
            assert!(peak >= cow);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no progress report: {processed} keys, {cow} bytes");
    }
    assert_eq!(c.call(&["CONFIG", "SET", "rdb-key-save-delay", "0"]), b"+OK\r\n");
    while info_field(&mut c, "rdb_bgsave_in_progress") != "0" {
        assert!(std::time::Instant::now() < deadline, "the BGSAVE never ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(info_field(&mut c, "rdb_last_bgsave_status"), "ok");
    let last: u64 = info_field(&mut c, "rdb_last_cow_size").parse().unwrap();
    assert!(last > 0, "rdb_last_cow_size {last}");
    for field in ["current_cow_size", "current_cow_peak", "current_save_keys_processed", "current_save_keys_total"] {
        assert_eq!(info_field(&mut c, field), "0", "{field} without a child");
    }
    assert_eq!(info_field(&mut c, "current_fork_perc"), "0.00");
    // An AOF rewrite's child: its own figure.
    assert_eq!(info_field(&mut c, "aof_last_cow_size"), "0");
    assert_eq!(c.call(&["CONFIG", "SET", "appendonly", "yes"]), b"+OK\r\n");
    while info_field(&mut c, "aof_rewrite_in_progress") != "0" || info_field(&mut c, "aof_rewrite_scheduled") != "0" {
        assert!(std::time::Instant::now() < deadline + Duration::from_secs(20), "the rewrite never ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    let aof: u64 = info_field(&mut c, "aof_last_cow_size").parse().unwrap();
    assert!(aof > 0, "aof_last_cow_size {aof}");
    drop(child);
    let _ = std::fs::remove_dir_all(&dir);
}
