//! The Lua debugger (SCRIPT DEBUG SYNC): whole sessions, every debugger command, compared
//! byte for byte with redis-server (each reply of the session, then the EVAL's reply and
//! the connection's end), over both I/O backends; and what only quince does: other clients
//! get BUSY during a session instead of waiting. Skipped without redis-server unless
//! QUINCE_REQUIRE_REDIS=1 (the quince-only tests always run).

use std::time::Duration;

use quince_test_util::{encode_command, start_quince, start_redis, RawClient, ServerProcess};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

/// One debugging session: the script, EVAL's numkeys and arguments, then the debugger
/// commands the user types (each a command line split on spaces, or raw bytes).
struct Session<'a> {
    script: &'a str,
    args: &'a [&'a str],
    typed: &'a [Typed<'a>],
}

enum Typed<'a> {
    Line(&'a str),
    Args(&'a [&'a [u8]]),
    Raw(&'a [u8]),
}

/// Everything the client receives in the session, reply by reply, then what is left when
/// the server closes the connection.
fn transcript(server: &ServerProcess, session: &Session<'_>) -> Vec<Vec<u8>> {
    let mut client = RawClient::connect(server.port);
    let mut got = vec![client.call(&["SCRIPT", "DEBUG", "SYNC"])];
    let mut eval = vec!["EVAL", session.script];
    eval.extend_from_slice(session.args);
    got.push(client.call(&eval));
    for typed in session.typed {
        match typed {
            Typed::Line(line) => client.send(&line.split(' ').collect::<Vec<_>>()),
            Typed::Args(args) => client.send(args),
            Typed::Raw(bytes) => client.send_raw(bytes),
        }
        got.push(client.read_reply());
    }
    got.push(client.read_to_close());
    got
}

const SCRIPT: &str = "local function double(x)\n  local y = x * 2\n  redis.breakpoint()\n  return y\nend\nlocal t = {a=1, b='two', c={1,2,{deep=true}}}\nredis.call('lpush', KEYS[1], ARGV[1])\nredis.debug('t is', t, #ARGV, nil, false)\nreturn double(21)";

fn sessions() -> Vec<Session<'static>> {
    use Typed::*;
    vec![
        Session {
            script: SCRIPT,
            args: &["1", "list", "elem"],
            typed: &[
                Line("help"),
                Line("s"),
                Line("print"),
                Line("p t"),
                Line("p KEYS"),
                Line("p ARGV"),
                Line("p nosuch"),
                Line("list"),
                Line("l 2 1"),
                Line("whole"),
                Line("b"),
                Line("b 8"),
                Line("b 8"),
                Line("b abc 0 99"),
                Line("b 7 9"),
                Line("b"),
                Line("b -7"),
                Line("b -5"),
                Line("c"),
                Line("n"),
                Line("c"),
                Line("trace"),
                Line("e y + 1"),
                Line("eval ARGV[1]"),
                Line("e local z ="),
                Line("e error('boom')"),
                Line("e {1, 'x', {k = 2}}"),
                Line("redis lrange list 0 -1"),
                Line("r get list"),
                Line("r nosuchcommand a b"),
                Line("r get"),
                Line("maxlen"),
                Line("maxlen 10"),
                Line("r set big 0123456789012345678901234567890123456789012345678901234567890123456789"),
                Line("r get big"),
                Line("m 0"),
                Line("r get big"),
                Line("redis"),
                Line("frobnicate"),
                Line("c"),
            ],
        },
        // The user stops the script; what it wrote stays.
        Session { script: "redis.call('set', 'a', '1')\nredis.call('set', 'b', '2')\nreturn 1", args: &["0"], typed: &[Line("s"), Line("abort")] },
        // Redis's suite: NUL bytes in a command, and a `redis` command of 100 arguments.
        Session {
            script: "return 'hello'",
            args: &["0"],
            typed: &[
                Args(&[b"'hello\0world'"]),
                Args(&[b"'hello\0'"]),
                Args(&[b"'\0hello'"]),
                Args(&[b"'\0hello\0'"]),
                Args(&[b"redis", b"test", b"test", b"test", b"test", b"test", b"test", b"test", b"test", b"test", b"test", b"test", b"test"]),
                Line("c"),
            ],
        },
        // Input that is not a command ends the script with an error.
        Session { script: "return 1", args: &["0"], typed: &[Raw(b"*1\r\n$0\r\n\r\n")] },
        // RESP3 replies, and errors in replies, as the debugger shows them.
        Session {
            script: "redis.setresp(3)\nredis.call('hset', 'h', 'f', 'v')\nlocal m = redis.call('hgetall', 'h')\nlocal s = redis.call('smembers', 'nosuch')\nreturn redis.pcall('incr', 'h')",
            args: &["0"],
            typed: &[Line("s"), Line("s"), Line("s"), Line("s"), Line("p"), Line("s")],
        },
        // A script that does not compile, and wrong arguments: the session still ends.
        Session { script: "return +", args: &["0"], typed: &[] },
        Session { script: "return 1", args: &["2", "k"], typed: &[] },
        // Running off the end.
        Session { script: "local x = 0\nfor i = 1, 3 do\n  x = x + i\nend\nreturn x", args: &["0"], typed: &[Line("n"), Line("n"), Line("n"), Line("b 5"), Line("c"), Line("c")] },
    ]
}

/// The text of a reply with the addresses of Lua functions and the like (`function@0x...`)
/// masked: they differ from process to process.
fn masked(reply: &[u8]) -> String {
    let text = String::from_utf8_lossy(reply);
    let mut out = String::new();
    let mut rest = &text[..];
    while let Some(at) = rest.find("@0x") {
        out.push_str(&rest[..at]);
        out.push_str("@<address>");
        rest = rest[at + 3..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out.push_str(rest);
    out
}

fn run_differential(quince_args: &[&str]) {
    let Some(redis) = start_redis(&[]) else { return };
    let quince = start_quince(QUINCE, quince_args);
    for (n, session) in sessions().iter().enumerate() {
        let expected = transcript(&redis, session);
        let got = transcript(&quince, session);
        assert_eq!(expected.len(), got.len(), "session {n}: reply count");
        for (i, (e, g)) in expected.iter().zip(&got).enumerate() {
            assert_eq!(masked(e), masked(g), "session {n}, reply {i}: redis-server (left) and quince (right) differ");
        }
    }
    // What the sessions wrote is there (the aborted one's too).
    let mut r = redis.client();
    let mut q = quince.client();
    for key in ["list", "a", "b", "h", "big"] {
        assert_eq!(r.call(&["DUMP", key]), q.call(&["DUMP", key]), "{key}");
    }
}

#[test]
fn sessions_match_redis_over_epoll() {
    run_differential(&["--io-backend", "epoll"]);
}

#[test]
fn sessions_match_redis_over_io_uring_or_its_fallback() {
    run_differential(&["--io-backend", "auto", "--threads", "2"]);
}

#[test]
fn debug_mode_refusals_match_redis() {
    let Some(redis) = start_redis(&[]) else { return };
    let quince = start_quince(QUINCE, &[]);
    for server in [&redis, &quince] {
        let mut c = server.client();
        assert_eq!(c.call(&["SCRIPT", "DEBUG", "SYNC"]), b"+OK\r\n");
        assert_eq!(c.call(&["EVALSHA", "abc", "0"]), b"-NOSCRIPT No matching script. Please use EVAL.\r\n");
        let sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";
        assert_eq!(c.call(&["EVALSHA", sha, "0"]), b"-ERR Please use EVAL instead of EVALSHA for debugging\r\n");
        assert_eq!(c.call(&["SCRIPT", "DEBUG", "maybe"]), b"-ERR Use SCRIPT DEBUG YES/SYNC/NO\r\n");
        assert_eq!(c.call(&["SCRIPT", "DEBUG", "NO"]), b"+OK\r\n");
        // Debugging off again: scripts run as usual, the connection stays.
        assert_eq!(c.call(&["EVAL", "return 7", "0"]), b":7\r\n");
    }
}

#[test]
fn forked_sessions_are_refused() {
    let quince = start_quince(QUINCE, &[]);
    let mut c = quince.client();
    let reply = c.call(&["SCRIPT", "DEBUG", "YES"]);
    assert!(reply.starts_with(b"-ERR SCRIPT DEBUG YES"), "{}", String::from_utf8_lossy(&reply));
    assert_eq!(c.call(&["EVAL", "return 7", "0"]), b":7\r\n");
}

/// While a session is stopped, other clients (on the same worker and on others) get BUSY,
/// SCRIPT KILL reaches the script, and once it ends everything runs again.
#[test]
fn other_clients_get_busy_during_a_session() {
    for backend in ["epoll", "auto"] {
        let quince = start_quince(QUINCE, &["--io-backend", backend, "--threads", "2"]);
        let mut debugger = quince.client();
        assert_eq!(debugger.call(&["SCRIPT", "DEBUG", "SYNC"]), b"+OK\r\n");
        let first = debugger.call(&["EVAL", "redis.call('set', 'x', '1')\nreturn redis.call('get', 'x')", "0"]);
        assert!(first.starts_with(b"*2\r\n+* Stopped at 1"), "{}", String::from_utf8_lossy(&first));
        let mut others: Vec<RawClient> = (0..4).map(|_| quince.client()).collect();
        for other in &mut others {
            let reply = other.call(&["GET", "x"]);
            assert!(reply.starts_with(b"-BUSY"), "{backend}: {}", String::from_utf8_lossy(&reply));
        }
        // Stepping still works after others were served.
        let step = debugger.call(&["s"]);
        assert!(step.starts_with(b"*4\r\n+<redis> set x 1\r\n"), "{}", String::from_utf8_lossy(&step));
        assert_eq!(others[0].call(&["SCRIPT", "KILL"]), b"-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n");
        debugger.send(&["c"]);
        assert_eq!(debugger.read_reply(), b"*1\r\n+<endsession>\r\n");
        assert_eq!(debugger.read_reply(), b"$1\r\n1\r\n");
        assert_eq!(debugger.read_to_close(), b"");
        for other in &mut others {
            assert_eq!(other.call(&["GET", "x"]), b"$1\r\n1\r\n");
        }
    }
}

/// A client that leaves mid-session: the script runs on to its end without stopping, and
/// the server goes on serving.
#[test]
fn a_vanished_debugger_lets_the_script_finish() {
    let quince = start_quince(QUINCE, &[]);
    let mut debugger = quince.client();
    debugger.call(&["SCRIPT", "DEBUG", "SYNC"]);
    let script = "redis.call('set', 'before', '1')\nredis.breakpoint()\nredis.call('set', 'after', '1')\nreturn 1";
    let first = debugger.call(&["EVAL", script, "0"]);
    assert!(first.starts_with(b"*2\r\n+* Stopped at 1"));
    drop(debugger);
    let mut c = quince.client();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let reply = c.call(&["GET", "after"]);
        if reply == b"$1\r\n1\r\n" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the script never finished: {}", String::from_utf8_lossy(&reply));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.call(&["GET", "before"]), b"$1\r\n1\r\n");
    // A pipelined request after the EVAL is the debugger's first command.
    let mut piped = quince.client();
    piped.call(&["SCRIPT", "DEBUG", "SYNC"]);
    let mut both = encode_command(&["EVAL", "return 5", "0"]);
    both.extend(encode_command(&["c"]));
    piped.send_raw(&both);
    assert!(piped.read_reply().starts_with(b"*2\r\n+* Stopped at 1"));
    assert_eq!(piped.read_reply(), b"*1\r\n+<endsession>\r\n");
    assert_eq!(piped.read_reply(), b":5\r\n");
}
