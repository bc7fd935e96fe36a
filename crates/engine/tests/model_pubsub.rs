//! Property test: random (un)subscribe and publish sequences from several clients run
//! through the engine and through a plain model of who listens to what must agree on
//! every confirmation, every PUBLISH count, every delivered message and PUBSUB NUMSUB/NUMPAT.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use proptest::prelude::*;
use quince_engine::{Client, Engine, EngineOptions, ManualClock, Reply, ReplyBuilder};

const CHANNELS: [&str; 4] = ["a", "b", "ab", "news.1"];
const PATTERNS: [&str; 4] = ["a*", "?b", "*", "news.[0-9]"];
const SUBSCRIBERS: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    Subscribe { client: usize, channels: Vec<usize> },
    Unsubscribe { client: usize, channels: Vec<usize> },
    PSubscribe { client: usize, patterns: Vec<usize> },
    PUnsubscribe { client: usize, patterns: Vec<usize> },
    SSubscribe { client: usize, channel: usize },
    Publish { channel: usize, shard: bool },
    NumSub { channel: usize },
    NumPat,
}

fn op() -> impl Strategy<Value = Op> {
    let client = 0..SUBSCRIBERS;
    let names = || prop::collection::vec(0..4usize, 0..3);
    prop_oneof![
        (client.clone(), prop::collection::vec(0..4usize, 1..3))
            .prop_map(|(client, channels)| Op::Subscribe { client, channels }),
        (client.clone(), names()).prop_map(|(client, channels)| Op::Unsubscribe { client, channels }),
        (client.clone(), prop::collection::vec(0..4usize, 1..3))
            .prop_map(|(client, patterns)| Op::PSubscribe { client, patterns }),
        (client.clone(), names()).prop_map(|(client, patterns)| Op::PUnsubscribe { client, patterns }),
        (client.clone(), 0..4usize).prop_map(|(client, channel)| Op::SSubscribe { client, channel }),
        (0..4usize, any::<bool>()).prop_map(|(channel, shard)| Op::Publish { channel, shard }),
        (0..4usize).prop_map(|channel| Op::NumSub { channel }),
        Just(Op::NumPat),
    ]
}

/// Who listens to what, in subscription order per client.
#[derive(Default)]
struct Model {
    channels: Vec<Vec<String>>,
    patterns: Vec<Vec<String>>,
    shard: Vec<Vec<String>>,
}

fn glob(pattern: &str, s: &str) -> bool {
    // The patterns above use only `*`, `?` and one `[0-9]` class.
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'*') => (0..=s.len()).any(|i| go(&p[1..], &s[i..])),
            Some(b'?') => !s.is_empty() && go(&p[1..], &s[1..]),
            Some(b'[') => {
                let end = p.iter().position(|&c| c == b']').expect("closed class");
                let (lo, hi) = (p[1], p[3]);
                !s.is_empty() && (lo..=hi).contains(&s[0]) && go(&p[end + 1..], &s[1..])
            }
            Some(&c) => s.first() == Some(&c) && go(&p[1..], &s[1..]),
        }
    }
    go(pattern.as_bytes(), s.as_bytes())
}

fn bulk(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}

fn confirm(verb: &str, name: Option<&str>, count: usize) -> Reply {
    Reply::Push(vec![bulk(verb), name.map_or(Reply::Null, bulk), Reply::Integer(count as i64)])
}

fn frame(parts: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", parts.len()).into_bytes();
    for p in parts {
        out.extend_from_slice(format!("${}\r\n{p}\r\n", p.len()).as_bytes());
    }
    out
}

/// Splits pushed output into frames, sorted (pattern matches are delivered in registry
/// order, which is unspecified, as in Redis).
fn frames(mut bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let len = quince_resp::reply_frame_len(bytes).expect("well formed").expect("complete");
        out.push(bytes[..len].to_vec());
        bytes = &bytes[len..];
    }
    out.sort();
    out
}

struct Harness {
    engine: Engine,
    clients: Vec<Client>,
}

impl Harness {
    fn run(&mut self, client: usize, args: &[&str]) -> Vec<Reply> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let mut out = ReplyBuilder::new();
        self.engine.execute(&mut self.clients[client], &args, &mut out);
        out.take()
    }
}

fn unsubscribe_model(list: &mut Vec<String>, names: &[&str], verb: &str, others: usize) -> Vec<Reply> {
    let targets: Vec<String> =
        if names.is_empty() { list.clone() } else { names.iter().map(|s| s.to_string()).collect() };
    if targets.is_empty() {
        return vec![confirm(verb, None, list.len() + others)];
    }
    targets
        .iter()
        .map(|name| {
            list.retain(|n| n != name);
            confirm(verb, Some(name), list.len() + others)
        })
        .collect()
}

fn check(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let engine = Engine::new(EngineOptions { clock, shards: 4, ..EngineOptions::default() });
    // Subscribers, then one publisher that never subscribes.
    let clients = (0..=SUBSCRIBERS).map(|_| engine.new_client()).collect();
    let mut h = Harness { engine, clients };
    let mut m = Model {
        channels: vec![Vec::new(); SUBSCRIBERS],
        patterns: vec![Vec::new(); SUBSCRIBERS],
        shard: vec![Vec::new(); SUBSCRIBERS],
    };
    let publisher = SUBSCRIBERS;
    for op in ops {
        match op {
            Op::Subscribe { client, channels } => {
                let names: Vec<&str> = channels.iter().map(|&c| CHANNELS[c]).collect();
                let mut expected = Vec::new();
                for name in &names {
                    if !m.channels[client].iter().any(|n| n == name) {
                        m.channels[client].push(name.to_string());
                    }
                    let count = m.channels[client].len() + m.patterns[client].len();
                    expected.push(confirm("subscribe", Some(name), count));
                }
                let args: Vec<&str> = std::iter::once("SUBSCRIBE").chain(names).collect();
                prop_assert_eq!(h.run(client, &args), expected);
            }
            Op::Unsubscribe { client, channels } => {
                let names: Vec<&str> = channels.iter().map(|&c| CHANNELS[c]).collect();
                let others = m.patterns[client].len();
                let expected = unsubscribe_model(&mut m.channels[client], &names, "unsubscribe", others);
                let args: Vec<&str> = std::iter::once("UNSUBSCRIBE").chain(names).collect();
                prop_assert_eq!(h.run(client, &args), expected);
            }
            Op::PSubscribe { client, patterns } => {
                let names: Vec<&str> = patterns.iter().map(|&p| PATTERNS[p]).collect();
                let mut expected = Vec::new();
                for name in &names {
                    if !m.patterns[client].iter().any(|n| n == name) {
                        m.patterns[client].push(name.to_string());
                    }
                    let count = m.channels[client].len() + m.patterns[client].len();
                    expected.push(confirm("psubscribe", Some(name), count));
                }
                let args: Vec<&str> = std::iter::once("PSUBSCRIBE").chain(names).collect();
                prop_assert_eq!(h.run(client, &args), expected);
            }
            Op::PUnsubscribe { client, patterns } => {
                let names: Vec<&str> = patterns.iter().map(|&p| PATTERNS[p]).collect();
                let others = m.channels[client].len();
                let expected = unsubscribe_model(&mut m.patterns[client], &names, "punsubscribe", others);
                let args: Vec<&str> = std::iter::once("PUNSUBSCRIBE").chain(names).collect();
                prop_assert_eq!(h.run(client, &args), expected);
            }
            Op::SSubscribe { client, channel } => {
                let name = CHANNELS[channel];
                if !m.shard[client].iter().any(|n| n == name) {
                    m.shard[client].push(name.to_string());
                }
                let expected = vec![confirm("ssubscribe", Some(name), m.shard[client].len())];
                prop_assert_eq!(h.run(client, &["SSUBSCRIBE", name]), expected);
            }
            Op::Publish { channel, shard } => {
                let name = CHANNELS[channel];
                let mut receivers = 0;
                let mut expected: Vec<Vec<Vec<u8>>> = vec![Vec::new(); SUBSCRIBERS];
                for (c, want) in expected.iter_mut().enumerate() {
                    if shard {
                        if m.shard[c].iter().any(|n| n == name) {
                            want.push(frame(&["smessage", name, "m"]));
                            receivers += 1;
                        }
                        continue;
                    }
                    if m.channels[c].iter().any(|n| n == name) {
                        want.push(frame(&["message", name, "m"]));
                        receivers += 1;
                    }
                    for p in m.patterns[c].iter().filter(|p| glob(p, name)) {
                        want.push(frame(&["pmessage", p, name, "m"]));
                        receivers += 1;
                    }
                }
                let verb = if shard { "SPUBLISH" } else { "PUBLISH" };
                prop_assert_eq!(h.run(publisher, &[verb, name, "m"]), vec![Reply::Integer(receivers)]);
                for (c, want) in expected.iter_mut().enumerate() {
                    want.sort();
                    let got = frames(&h.clients[c].handle.take_pushed());
                    prop_assert_eq!(&got, want, "client {}", c);
                }
            }
            Op::NumSub { channel } => {
                let name = CHANNELS[channel];
                let n = m.channels.iter().filter(|l| l.iter().any(|x| x == name)).count();
                let expected = vec![Reply::Array(vec![bulk(name), Reply::Integer(n as i64)])];
                prop_assert_eq!(h.run(publisher, &["PUBSUB", "NUMSUB", name]), expected);
            }
            Op::NumPat => {
                let unique: BTreeSet<&String> = m.patterns.iter().flatten().collect();
                let expected = vec![Reply::Integer(unique.len() as i64)];
                prop_assert_eq!(h.run(publisher, &["PUBSUB", "NUMPAT"]), expected);
            }
        }
    }
    // PUBSUB CHANNELS lists exactly the channels somebody listens to.
    let mut active: BTreeMap<String, ()> = BTreeMap::new();
    for name in m.channels.iter().flatten() {
        active.insert(name.clone(), ());
    }
    let mut listed: Vec<Vec<u8>> = match h.run(publisher, &["PUBSUB", "CHANNELS"]).remove(0) {
        Reply::Array(items) => items
            .into_iter()
            .map(|r| match r {
                Reply::Bulk(b) => b,
                other => panic!("unexpected {other:?}"),
            })
            .collect(),
        other => panic!("unexpected {other:?}"),
    };
    listed.sort();
    let want: Vec<Vec<u8>> = active.keys().map(|k| k.as_bytes().to_vec()).collect();
    prop_assert_eq!(listed, want);
    // RESET drops every subscription.
    for c in 0..SUBSCRIBERS {
        h.run(c, &["RESET"]);
    }
    prop_assert_eq!(h.run(publisher, &["PUBSUB", "NUMPAT"]), vec![Reply::Integer(0)]);
    prop_assert_eq!(h.run(publisher, &["PUBLISH", "a", "x"]), vec![Reply::Integer(0)]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn pubsub_matches_model(ops in prop::collection::vec(op(), 1..40)) {
        check(ops)?;
    }
}
