//! Shared helpers of the persistence tests: an in-process engine that runs commands and
//! returns raw RESP, a small RESP2 parser, and a canonical description of a key's content
//! that two servers can be compared on.
#![allow(dead_code)]

use std::sync::Arc;

use quince_engine::{Client, Engine, EngineOptions, SystemClock};
use quince_resp::{Encoder, Protocol};
use quince_test_util::RawClient;

/// Something that runs a command and returns its raw RESP2 reply.
pub trait Run {
    fn run(&mut self, args: &[&[u8]]) -> Vec<u8>;

    fn cmd(&mut self, args: &[&str]) -> Vec<u8> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.run(&args)
    }
}

impl Run for RawClient {
    fn run(&mut self, args: &[&[u8]]) -> Vec<u8> {
        self.call(args)
    }
}

/// An engine in this process with one client, the persistence commands installed.
pub struct Local {
    pub engine: Arc<Engine>,
    pub client: Client,
}

impl Local {
    pub fn new() -> Self {
        let engine = Arc::new(Engine::new(EngineOptions {
            clock: Arc::new(SystemClock),
            shards: 4,
            extra_commands: quince_persist::commands(),
            ..EngineOptions::default()
        }));
        let client = engine.new_client();
        Self { engine, client }
    }
}

impl Run for Local {
    fn run(&mut self, args: &[&[u8]]) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut out = Encoder::new(&mut buf, Protocol::Resp2);
        self.engine.execute(&mut self.client, args, &mut out);
        buf
    }
}

/// A parsed RESP2 reply.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum R {
    Simple(Vec<u8>),
    Error(Vec<u8>),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<R>>),
}

pub fn parse(data: &[u8]) -> R {
    let (r, used) = parse_at(data, 0);
    assert_eq!(used, data.len(), "one reply");
    r
}

fn line(data: &[u8], at: usize) -> (&[u8], usize) {
    let end = at + data[at..].windows(2).position(|w| w == b"\r\n").expect("CRLF");
    (&data[at..end], end + 2)
}

fn parse_at(data: &[u8], at: usize) -> (R, usize) {
    let (l, next) = line(data, at + 1);
    let n = || std::str::from_utf8(l).unwrap().parse::<i64>().unwrap();
    match data[at] {
        b'+' => (R::Simple(l.to_vec()), next),
        b'-' => (R::Error(l.to_vec()), next),
        b':' => (R::Int(n()), next),
        b'$' if n() < 0 => (R::Bulk(None), next),
        b'$' => {
            let len = n() as usize;
            (R::Bulk(Some(data[next..next + len].to_vec())), next + len + 2)
        }
        b'*' if n() < 0 => (R::Array(None), next),
        b'*' => {
            let mut items = Vec::new();
            let mut pos = next;
            for _ in 0..n() {
                let (r, p) = parse_at(data, pos);
                items.push(r);
                pos = p;
            }
            (R::Array(Some(items)), pos)
        }
        other => panic!("unexpected reply type {}", other as char),
    }
}

pub fn bulk_text(r: &R) -> String {
    match r {
        R::Bulk(Some(b)) | R::Simple(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

/// A canonical description of `key`: type, encoding, expiry and every element in an
/// order that does not depend on hash tables.
pub fn describe(s: &mut dyn Run, key: &[u8]) -> Vec<R> {
    let typ = bulk_text(&parse(&s.run(&[b"TYPE", key])));
    let mut d = vec![R::Simple(typ.clone().into_bytes())];
    d.push(parse(&s.run(&[b"OBJECT", b"ENCODING", key])));
    d.push(parse(&s.run(&[b"PEXPIRETIME", key])));
    match typ.as_str() {
        "string" => d.push(parse(&s.run(&[b"GET", key]))),
        "list" => d.push(parse(&s.run(&[b"LRANGE", key, b"0", b"-1"]))),
        "set" => {
            let R::Array(Some(mut m)) = parse(&s.run(&[b"SMEMBERS", key])) else { panic!("SMEMBERS") };
            m.sort();
            d.push(R::Array(Some(m)));
        }
        "zset" => d.push(parse(&s.run(&[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"]))),
        "hash" => {
            let R::Array(Some(flat)) = parse(&s.run(&[b"HGETALL", key])) else { panic!("HGETALL") };
            let mut pairs: Vec<R> = flat.chunks(2).map(|p| R::Array(Some(p.to_vec()))).collect();
            pairs.sort();
            d.push(R::Array(Some(pairs)));
        }
        "stream" => {
            d.push(parse(&s.run(&[b"XRANGE", key, b"-", b"+"])));
            // radix-tree-nodes counts Redis's rax internals, not data: masked.
            let mut info = parse(&s.run(&[b"XINFO", b"STREAM", key, b"FULL"]));
            if let R::Array(Some(items)) = &mut info {
                if let Some(i) = items.iter().position(|r| *r == R::Bulk(Some(b"radix-tree-nodes".to_vec()))) {
                    items[i + 1] = R::Int(0);
                }
            }
            d.push(info);
        }
        other => panic!("unexpected type {other}"),
    }
    d
}

/// Every key of the selected database, sorted.
pub fn keys(s: &mut dyn Run) -> Vec<Vec<u8>> {
    let R::Array(Some(k)) = parse(&s.cmd(&["KEYS", "*"])) else { panic!("KEYS") };
    let mut k: Vec<Vec<u8>> = k.into_iter().map(|r| if let R::Bulk(Some(b)) = r { b } else { panic!() }).collect();
    k.sort();
    k
}

/// A reply as compact text.
pub fn render(r: &R) -> String {
    match r {
        R::Simple(b) => format!("+{}", String::from_utf8_lossy(b)),
        R::Error(b) => format!("-{}", String::from_utf8_lossy(b)),
        R::Int(n) => format!(":{n}"),
        R::Bulk(None) | R::Array(None) => "(nil)".into(),
        R::Bulk(Some(b)) => format!("{:?}", String::from_utf8_lossy(b)),
        R::Array(Some(items)) => format!("[{}]", items.iter().map(render).collect::<Vec<_>>().join(", ")),
    }
}

/// Panics showing where two descriptions first differ.
pub fn assert_same_description(a: &[R], b: &[R], what: &str) {
    let (ta, tb): (Vec<String>, Vec<String>) = (a.iter().map(render).collect(), b.iter().map(render).collect());
    if ta == tb {
        return;
    }
    for (i, (x, y)) in ta.iter().zip(tb.iter()).enumerate() {
        if x != y {
            let at = x.bytes().zip(y.bytes()).position(|(p, q)| p != q).unwrap_or(x.len().min(y.len()));
            let from = at.saturating_sub(150);
            let cut = |s: &str| s.get(from..(at + 150).min(s.len())).unwrap_or(s).to_string();
            panic!("{what}: part {i} differs at byte {at}:\n  left:  ...{}\n  right: ...{}", cut(x), cut(y));
        }
    }
    panic!("{what}: lengths differ: {} vs {}", ta.len(), tb.len());
}

/// Asserts both servers hold the same keys with the same content in database `db`.
pub fn assert_same_dataset(a: &mut dyn Run, b: &mut dyn Run, db: usize) {
    let db = db.to_string();
    a.cmd(&["SELECT", &db]);
    b.cmd(&["SELECT", &db]);
    let (ka, kb) = (keys(a), keys(b));
    assert_eq!(
        ka.iter().map(|k| String::from_utf8_lossy(k).into_owned()).collect::<Vec<_>>(),
        kb.iter().map(|k| String::from_utf8_lossy(k).into_owned()).collect::<Vec<_>>(),
        "same keys in db {db}"
    );
    for k in &ka {
        assert_same_description(&describe(a, k), &describe(b, k), &format!("key {}", String::from_utf8_lossy(k)));
    }
    a.cmd(&["SELECT", "0"]);
    b.cmd(&["SELECT", "0"]);
}

/// The commands that build the interop dataset: every type, small and large encodings,
/// expiries, a stream with groups, PEL and consumers, a function library.
pub fn dataset() -> Vec<Vec<String>> {
    let mut c: Vec<Vec<String>> = Vec::new();
    let mut add = |parts: Vec<String>| c.push(parts);
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    add(s(&["SET", "str:small", "hello"]));
    add(s(&["SET", "str:int", "12345"]));
    add(s(&["SET", "str:bigint", "-9223372036854775808"]));
    add(s(&["SET", "str:long", &"abcdefghij".repeat(30)]));
    add(s(&["SET", "str:incompressible", "q8w7e6r5t4y3u2i1o0p9a8s7d6f5g4h3j2k1l0"]));
    add(s(&["SET", "str:float", "3.14159"]));
    add(s(&["APPEND", "str:raw", "12"]));
    add(s(&["SET", "str:ttl", "expiring", "PX", "100000000"]));
    add(s(&["SET", "str:empty", ""]));
    add(s(&["SET", "str:binary", "\u{0}\u{1}\u{2}\r\n\u{ff}"]));
    let mut l = s(&["RPUSH", "list:small", "a", "b", "1", "-2", "300000", "9223372036854775807"]);
    l.push("x".repeat(100));
    add(l);
    let mut l = s(&["RPUSH", "list:big"]);
    l.extend((0..3000).map(|i| format!("element-{i}")));
    add(l);
    let mut l = s(&["RPUSH", "list:ints"]);
    l.extend((0..5000).map(|i| (i * 7919 - 100000).to_string()));
    add(l);
    add(s(&["LPUSH", "list:lpush", "c", "b", "a"]));
    add(s(&["SADD", "set:intset", "1", "2", "3", "-5", "100000", "4000000000"]));
    let mut l = s(&["SADD", "set:bigints"]);
    l.extend((0..600).map(|i| i.to_string()));
    add(l);
    add(s(&["SADD", "set:strings", "a", "b", "c", "1"]));
    add(s(&["HSET", "hash:small", "a", "1", "b", "two", "c", &"x".repeat(40), "123", "-7"]));
    let mut l = s(&["HSET", "hash:big"]);
    l.extend((0..600).flat_map(|i| [format!("field{i}"), format!("value{i}")]));
    add(l);
    add(s(&["HSET", "hash:longvalue", "f", &"v".repeat(100)]));
    add(s(&["ZADD", "zset:small", "1", "a", "2", "b", "1.5", "c", "-inf", "d", "+inf", "e", "0.1", "f", "-0", "g"]));
    add(s(&["ZADD", "zset:huge", "1e20", "a", "-1e20", "b", "4611686018427387904", "c", "4611686018427387903", "d"]));
    let mut l = s(&["ZADD", "zset:big"]);
    l.extend((0..200).flat_map(|i| [format!("{}", i as f64 / 3.0), format!("m{i}")]));
    add(l);
    add(s(&["ZADD", "zset:longmember", "1", &"m".repeat(80)]));
    add(s(&["EXPIRE", "zset:small", "100000"]));
    for i in 1..=5 {
        add(s(&["XADD", "stream:a", &format!("{i}-0"), "field", &format!("v{i}"), "other", "x"]));
    }
    add(s(&["XADD", "stream:a", "6-0", "different", "fields"]));
    add(s(&["XDEL", "stream:a", "3-0"]));
    add(s(&["XGROUP", "CREATE", "stream:a", "g1", "0"]));
    add(s(&["XGROUP", "CREATE", "stream:a", "g2", "$"]));
    add(s(&["XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", "stream:a", ">"]));
    add(s(&["XREADGROUP", "GROUP", "g1", "bob", "COUNT", "1", "STREAMS", "stream:a", ">"]));
    add(s(&["XACK", "stream:a", "g1", "1-0"]));
    add(s(&["XGROUP", "CREATECONSUMER", "stream:a", "g2", "carol"]));
    let mut l = s(&["XADD", "stream:big", "*"]);
    l.extend(s(&["a", "1", "b", "2"]));
    for _ in 0..250 {
        add(l.clone());
    }
    add(s(&["XTRIM", "stream:big", "MAXLEN", "180"]));
    add(s(&["XADD", "stream:empty", "1-1", "f", "v"]));
    add(s(&["XDEL", "stream:empty", "1-1"]));
    add(s(&["SELECT", "3"]));
    add(s(&["SET", "db3:key", "in db 3"]));
    add(s(&["SELECT", "0"]));
    c
}

/// The function library of the dataset.
pub const LIBRARY: &str =
    "#!lua name=interoplib\nredis.register_function('interop_echo', function(keys, args) return args[1] end)";

pub fn load_dataset(s: &mut dyn Run) {
    for cmd in dataset() {
        let args: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
        let reply = s.run(&args);
        assert!(!reply.starts_with(b"-"), "{cmd:?}: {}", String::from_utf8_lossy(&reply));
    }
    let reply = s.cmd(&["FUNCTION", "LOAD", LIBRARY]);
    assert!(!reply.starts_with(b"-"), "{}", String::from_utf8_lossy(&reply));
}
