//! Multi-connection scripts run against quince and redis-server side by side: every
//! recorded reply (or delivered message) must be the same bytes on both.

use std::time::Duration;

use crate::{Differential, RawClient, ServerProcess};

/// One step of a multi-connection script; `usize` fields are connection indexes.
pub enum Act {
    /// Send and read one reply.
    Call(usize, &'static [&'static str]),
    /// Send without reading (the client may block, or get several frames).
    Send(usize, &'static [&'static str]),
    /// Read one frame (a reply or a pushed message).
    Read(usize),
    /// Send and read, not recording the reply (HELLO: it embeds the client id).
    Quiet(usize, &'static [&'static str]),
    /// Send and read a flat array whose order is unspecified (PUBSUB CHANNELS).
    Unordered(usize, &'static [&'static str]),
    /// Connection 0 publishes to `sentinel`, then every frame connection `.0` receives up
    /// to that message is recorded as one entry (keyspace notifications of any number).
    Drain(usize),
    /// Wait until the server reports this many blocked clients.
    Blocked(usize),
    /// Connection `.0` runs CLIENT UNBLOCK on connection `.1`'s id with this reason.
    Unblock(usize, usize, &'static str),
    Close(usize),
    Sleep(u64),
}

use Act::*;

/// Runs `script` on `clients` connections to each server and compares the transcripts.
/// Does nothing (after saying why) when redis-server is unavailable.
pub fn run_clients(quince_binary: &str, name: &str, clients: usize, script: &[Act]) {
    let Some(diff) = Differential::start(quince_binary) else { return };
    let q = transcript(&diff.quince, clients, script);
    let r = transcript(&diff.redis, clients, script);
    assert_eq!(q.len(), r.len());
    for (i, (a, b)) in q.iter().zip(&r).enumerate() {
        assert_eq!(
            String::from_utf8_lossy(a),
            String::from_utf8_lossy(b),
            "{name}: reply {i} differs (left quince, right redis)"
        );
    }
}

/// Runs the script against one server; returns every recorded frame in order.
fn transcript(server: &ServerProcess, clients: usize, script: &[Act]) -> Vec<Vec<u8>> {
    let mut conns: Vec<Option<RawClient>> = (0..clients).map(|_| Some(server.client())).collect();
    // Client ids differ between servers: CLIENT UNBLOCK steps look them up first.
    let ids: Vec<String> = if script.iter().any(|a| matches!(a, Unblock(..))) {
        conns
            .iter_mut()
            .map(|c| {
                let reply = c.as_mut().expect("open").call(&["CLIENT", "ID"]);
                String::from_utf8_lossy(&reply).trim().trim_start_matches(':').to_string()
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut control: Option<RawClient> = None;
    let mut replies = Vec::new();
    for act in script {
        match act {
            Call(i, args) => replies.push(conns[*i].as_mut().expect("open").call(args)),
            Send(i, args) => conns[*i].as_mut().expect("open").send(args),
            Read(i) => replies.push(conns[*i].as_mut().expect("open").read_reply()),
            Quiet(i, args) => {
                conns[*i].as_mut().expect("open").call(args);
            }
            Unordered(i, args) => {
                replies.push(canonical_unordered(&conns[*i].as_mut().expect("open").call(args)));
            }
            Drain(i) => {
                conns[0].as_mut().expect("open").call(&["PUBLISH", "sentinel", "end"]);
                let conn = conns[*i].as_mut().expect("open");
                let mut all = Vec::new();
                loop {
                    let frame = conn.read_reply();
                    let done = frame.windows(12).any(|w| w == b"$8\r\nsentinel");
                    all.extend_from_slice(&frame);
                    if done {
                        break;
                    }
                }
                replies.push(all);
            }
            Blocked(n) => wait_blocked(control.get_or_insert_with(|| server.client()), *n),
            Unblock(by, target, how) => {
                let args = ["CLIENT", "UNBLOCK", ids[*target].as_str(), how];
                replies.push(conns[*by].as_mut().expect("open").call(&args));
            }
            Close(i) => conns[*i] = None,
            Sleep(ms) => std::thread::sleep(Duration::from_millis(*ms)),
        }
    }
    replies
}

fn wait_blocked(control: &mut RawClient, n: usize) {
    let want = format!("blocked_clients:{n}\r\n");
    for _ in 0..1000 {
        let info = control.call(&["INFO", "clients"]);
        if String::from_utf8_lossy(&info).contains(&want) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("never saw {want:?}");
}

/// A flat array reply with its elements sorted, for replies in unspecified order.
fn canonical_unordered(reply: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(reply).into_owned();
    let mut lines: Vec<&str> = text.split("\r\n").collect();
    lines.pop();
    let head = lines.remove(0).to_string();
    let mut items: Vec<String> = lines.chunks(2).map(|c| c.join("\r\n")).collect();
    items.sort();
    format!("{head} {items:?}").into_bytes()
}
