//! Client-side caching (CLIENT TRACKING) against a real redis-server: RESP3 invalidation
//! pushes, their order with replies, OPTIN/OPTOUT/NOLOOP/BCAST, the RESP2 redirection to a
//! `__redis__:invalidate` subscriber, and the command's errors, every frame compared.
//! Skipped without redis-server unless QUINCE_REQUIRE_REDIS=1.

use quince_test_util::script::Act::{self, *};
use quince_test_util::{Differential, ServerProcess};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn run_clients(name: &str, clients: usize, script: &[Act]) {
    quince_test_util::script::run_clients(QUINCE, name, clients, script);
}

#[test]
fn resp3_default_mode_invalidations() {
    run_clients(
        "tracking default",
        2,
        &[
            Quiet(0, &["HELLO", "3"]),
            Call(0, &["CLIENT", "TRACKINGINFO"]),
            Call(0, &["CLIENT", "GETREDIR"]),
            Call(0, &["CLIENT", "TRACKING", "ON"]),
            Call(0, &["CLIENT", "TRACKINGINFO"]),
            Call(0, &["CLIENT", "GETREDIR"]),
            Call(1, &["SET", "a", "1"]),
            Call(0, &["GET", "a"]),
            Call(1, &["SET", "a", "2"]),
            Read(0),
            // Not tracked any more until read again.
            Call(1, &["SET", "a", "3"]),
            Call(0, &["MGET", "a", "b"]),
            Call(1, &["DEL", "b"]),
            Call(1, &["SET", "b", "x"]),
            Read(0),
            // Its own write: the invalidation follows the reply.
            Call(0, &["SET", "a", "4"]),
            Read(0),
            Call(0, &["GET", "a"]),
            Call(0, &["MULTI"]),
            Call(0, &["SET", "a", "5"]),
            Call(0, &["INCR", "c"]),
            Call(0, &["EXEC"]),
            Read(0),
            Call(0, &["GET", "a"]),
            Call(1, &["FLUSHALL"]),
            Read(0),
            Call(0, &["GET", "a"]),
            Call(0, &["FLUSHDB"]),
            Read(0),
            Call(0, &["CLIENT", "TRACKING", "OFF"]),
            Call(0, &["GET", "a"]),
            Call(1, &["SET", "a", "1"]),
            Call(0, &["PING"]),
            // NOLOOP: its own writes are not reported.
            Call(0, &["CLIENT", "TRACKING", "ON", "NOLOOP"]),
            Call(0, &["GET", "n"]),
            Call(0, &["SET", "n", "1"]),
            Call(0, &["GET", "n"]),
            Call(1, &["SET", "n", "2"]),
            Read(0),
            Call(0, &["CLIENT", "TRACKING", "OFF"]),
        ],
    );
}

#[test]
fn optin_optout_bcast_and_errors() {
    run_clients(
        "tracking modes",
        2,
        &[
            Quiet(0, &["HELLO", "3"]),
            Call(0, &["CLIENT", "CACHING", "YES"]),
            Call(0, &["CLIENT", "TRACKING", "ON", "OPTIN"]),
            Call(0, &["CLIENT", "CACHING", "NO"]),
            Call(0, &["CLIENT", "CACHING", "MAYBE"]),
            Call(0, &["GET", "x"]),
            Call(1, &["SET", "x", "1"]),
            Call(0, &["CLIENT", "CACHING", "YES"]),
            Call(0, &["CLIENT", "TRACKINGINFO"]),
            Call(0, &["GET", "y"]),
            Call(0, &["GET", "z"]),
            Call(1, &["MSET", "x", "2", "y", "2", "z", "2"]),
            Read(0),
            Call(0, &["CLIENT", "TRACKING", "ON", "OPTOUT"]),
            Call(0, &["CLIENT", "TRACKING", "OFF"]),
            Call(0, &["CLIENT", "TRACKING", "ON", "OPTOUT"]),
            Call(0, &["CLIENT", "CACHING", "NO"]),
            Call(0, &["GET", "p"]),
            Call(0, &["GET", "q"]),
            Call(1, &["MSET", "p", "1", "q", "1"]),
            Read(0),
            Call(0, &["CLIENT", "TRACKING", "ON", "BCAST"]),
            Call(0, &["CLIENT", "TRACKING", "OFF"]),
            Call(0, &["CLIENT", "TRACKING", "ON", "PREFIX", "a"]),
            Call(0, &["CLIENT", "TRACKING", "ON", "BCAST", "OPTIN"]),
            Call(0, &["CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"]),
            Call(0, &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "PREFIX", "a"]),
            Call(0, &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "PREFIX", "obj:"]),
            Call(0, &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:x"]),
            Call(0, &["CLIENT", "TRACKINGINFO"]),
            Call(1, &["SET", "user:1", "a"]),
            Read(0),
            Call(1, &["SET", "other", "a"]),
            Call(1, &["SET", "obj:7", "a"]),
            Read(0),
            Call(0, &["CLIENT", "TRACKING", "ON", "REDIRECT", "0"]),
            Call(0, &["CLIENT", "TRACKING", "ON", "REDIRECT", "999999"]),
            Call(0, &["CLIENT", "TRACKING", "ON", "NOSUCH"]),
            Call(0, &["CLIENT", "TRACKING", "MAYBE"]),
            Call(0, &["CLIENT", "TRACKING"]),
            Call(0, &["CLIENT", "TRACKING", "OFF"]),
            Call(0, &["CLIENT", "TRACKINGINFO"]),
        ],
    );
}

/// A RESP2 client redirecting to a subscriber of `__redis__:invalidate` (client ids differ
/// between servers, so this one runs by hand).
#[test]
fn resp2_redirect_to_a_subscriber() {
    let Some(d) = Differential::start(QUINCE) else { return };
    let transcript = |server: &ServerProcess| {
        let mut sub = server.client();
        let mut reader = server.client();
        let mut writer = server.client();
        let id = String::from_utf8_lossy(&sub.call(&["CLIENT", "ID"])).trim().trim_start_matches(':').to_string();
        let mut frames = vec![sub.call(&["SUBSCRIBE", "__redis__:invalidate"])];
        frames.push(reader.call(&["CLIENT", "TRACKING", "ON", "REDIRECT", &id]));
        frames.push(reader.call(&["GET", "k"]));
        frames.push(writer.call(&["SET", "k", "v"]));
        frames.push(sub.read_reply());
        frames.push(reader.call(&["GET", "k"]));
        frames.push(writer.call(&["FLUSHALL"]));
        frames.push(sub.read_reply());
        // The subscriber leaves: the redirection is broken.
        drop(sub);
        std::thread::sleep(std::time::Duration::from_millis(100));
        frames.push(reader.call(&["GET", "k"]));
        frames.push(writer.call(&["SET", "k", "w"]));
        let info = String::from_utf8_lossy(&reader.call(&["CLIENT", "TRACKINGINFO"])).to_string();
        frames.push(info.replace(&format!(":{id}\r\n"), ":ID\r\n").into_bytes());
        frames.push(reader.call(&["CLIENT", "TRACKING", "OFF"]));
        frames
    };
    let (q, r) = (transcript(&d.quince), transcript(&d.redis));
    for (i, (a, b)) in q.iter().zip(&r).enumerate() {
        assert_eq!(String::from_utf8_lossy(a), String::from_utf8_lossy(b), "frame {i} (left quince, right redis)");
    }
}
