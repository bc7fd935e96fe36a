//! Interop with redis-server 7.0.15: DUMP payloads and RDB files move both ways and the
//! data reads the same on both sides; DUMP bytes are identical where encodings allow.
//! Skipped (with a message) without redis-server, failing when QUINCE_REQUIRE_REDIS=1.

mod common;

use std::path::Path;

use common::{assert_same_dataset, keys, load_dataset, parse, Local, Run, LIBRARY, R};
use quince_persist::rdb::{load_snapshot, write_snapshot, LoadOptions, SaveOptions};
use quince_test_util::{start_redis, RawClient};

fn bulk(r: R) -> Vec<u8> {
    match r {
        R::Bulk(Some(b)) => b,
        other => panic!("expected a bulk string, got {other:?}"),
    }
}

fn int(r: R) -> i64 {
    match r {
        R::Int(n) => n,
        other => panic!("expected an integer, got {other:?}"),
    }
}

/// Moves every key of databases 0 and 3 from `from` to `to` with DUMP / RESTORE ... ABSTTL.
fn transfer(from: &mut dyn Run, to: &mut dyn Run) {
    for db in ["0", "3"] {
        from.cmd(&["SELECT", db]);
        to.cmd(&["SELECT", db]);
        for key in keys(from) {
            let payload = bulk(parse(&from.run(&[b"DUMP", &key])));
            let at = int(parse(&from.run(&[b"PEXPIRETIME", &key])));
            let at = if at > 0 { at.to_string() } else { "0".to_string() };
            let reply = to.run(&[b"RESTORE", &key, at.as_bytes(), &payload, b"ABSTTL"]);
            assert_eq!(reply, b"+OK\r\n", "RESTORE {}", String::from_utf8_lossy(&key));
        }
    }
    from.cmd(&["SELECT", "0"]);
    to.cmd(&["SELECT", "0"]);
}

fn functions(s: &mut dyn Run) -> R {
    parse(&s.cmd(&["FUNCTION", "LIST", "WITHCODE"]))
}

#[test]
fn dump_restore_both_ways() {
    let Some(source) = start_redis(&[]) else { return };
    let Some(restored) = start_redis(&[]) else { return };
    let Some(back) = start_redis(&[]) else { return };
    let mut source = source.client();
    load_dataset(&mut source);
    let mut quince = Local::new();
    let mut redis_restored = restored.client();
    transfer(&mut source, &mut quince);
    transfer(&mut source, &mut redis_restored);
    assert_same_dataset(&mut quince, &mut redis_restored, 0);
    assert_same_dataset(&mut quince, &mut redis_restored, 3);

    // DUMP bytes are Redis's own wherever the encoding has a defined order.
    let mut identical = 0;
    for key in keys(&mut redis_restored) {
        let encoding = common::bulk_text(&parse(&redis_restored.run(&[b"OBJECT", b"ENCODING", &key])));
        if encoding == "hashtable" {
            continue;
        }
        let theirs = bulk(parse(&redis_restored.run(&[b"DUMP", &key])));
        let ours = bulk(parse(&quince.run(&[b"DUMP", &key])));
        assert_eq!(ours, theirs, "DUMP bytes of {} ({encoding})", String::from_utf8_lossy(&key));
        identical += 1;
    }
    assert!(identical >= 20, "compared {identical} keys byte for byte");

    // And back: quince's payloads restore in redis-server to the same data.
    let mut redis_back = back.client();
    transfer(&mut quince, &mut redis_back);
    assert_same_dataset(&mut quince, &mut redis_back, 0);
    assert_same_dataset(&mut quince, &mut redis_back, 3);
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("quince-rdb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn load_file(path: &Path) -> Local {
    let local = Local::new();
    let file = std::fs::File::open(path).unwrap();
    let stats = load_snapshot(&local.engine, std::io::BufReader::new(file), &LoadOptions::default(), &mut |_, _| {})
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()));
    assert!(stats.keys_loaded > 0);
    local
}

#[test]
fn rdb_files_both_ways() {
    let dir = temp_dir("files");
    let dir_s = dir.to_str().unwrap();
    let Some(redis) = start_redis(&["--dir", dir_s, "--dbfilename", "redis.rdb", "--enable-debug-command", "yes"])
    else {
        return;
    };
    let mut redis = redis.client();
    load_dataset(&mut redis);
    assert_eq!(redis.cmd(&["SAVE"]), b"+OK\r\n");
    // Redis's own view after loading its file, for encodings that change on load.
    assert_eq!(redis.cmd(&["DEBUG", "RELOAD"]), b"+OK\r\n");

    let mut quince = load_file(&dir.join("redis.rdb"));
    assert_same_dataset(&mut quince, &mut redis, 0);
    assert_same_dataset(&mut quince, &mut redis, 3);
    assert_eq!(functions(&mut quince), functions(&mut redis));

    // quince writes a file redis-server starts from.
    let file = std::fs::File::create(dir.join("quince.rdb")).unwrap();
    let stats = write_snapshot(&quince.engine, std::io::BufWriter::new(file), &SaveOptions::default()).unwrap();
    let dbsize = |s: &mut RawClient, db: &str| {
        s.cmd(&["SELECT", db]);
        let n = int(parse(&s.cmd(&["DBSIZE"])));
        s.cmd(&["SELECT", "0"]);
        n as u64
    };
    assert_eq!(stats.keys, dbsize(&mut redis, "0") + dbsize(&mut redis, "3"));
    let Some(from_quince) = start_redis(&["--dir", dir_s, "--dbfilename", "quince.rdb"]) else { return };
    let mut from_quince: RawClient = from_quince.client();
    assert_same_dataset(&mut quince, &mut from_quince, 0);
    assert_same_dataset(&mut quince, &mut from_quince, 3);
    assert_eq!(functions(&mut quince), functions(&mut from_quince));
    assert!(common::render(&functions(&mut quince)).contains("interop_echo"), "{LIBRARY}");

    // Without compression and checksum too.
    let file = std::fs::File::create(dir.join("plain.rdb")).unwrap();
    let options = SaveOptions { compression: false, checksum: false, ..SaveOptions::default() };
    write_snapshot(&quince.engine, std::io::BufWriter::new(file), &options).unwrap();
    let Some(plain) = start_redis(&["--dir", dir_s, "--dbfilename", "plain.rdb"]) else { return };
    let mut plain = plain.client();
    assert_same_dataset(&mut quince, &mut plain, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// IDLE and FREQ records: written under an LRU resp. LFU policy, read back by redis-server
/// (and from it) into OBJECT IDLETIME / OBJECT FREQ.
#[test]
fn access_data_round_trips() {
    let dir = temp_dir("access");
    let dir_s = dir.to_str().unwrap();
    for (policy, option, value, probe) in
        [("allkeys-lru", "IDLETIME", "1000", "IDLETIME"), ("allkeys-lfu", "FREQ", "77", "FREQ")]
    {
        let mut quince = Local::new();
        quince.cmd(&["CONFIG", "SET", "maxmemory-policy", policy]);
        quince.cmd(&["SET", "seed", "v"]);
        let seed = bulk(parse(&quince.cmd(&["DUMP", "seed"])));
        let reply = quince.run(&[b"RESTORE", b"k", b"0", &seed, option.as_bytes(), value.as_bytes()]);
        assert_eq!(reply, b"+OK\r\n");
        let name = format!("{policy}.rdb");
        let file = std::fs::File::create(dir.join(&name)).unwrap();
        write_snapshot(&quince.engine, std::io::BufWriter::new(file), &SaveOptions::default()).unwrap();
        let Some(redis) = start_redis(&["--dir", dir_s, "--dbfilename", &name, "--maxmemory-policy", policy]) else {
            return;
        };
        let mut redis = redis.client();
        let theirs = int(parse(&redis.cmd(&["OBJECT", probe, "k"])));
        let want: i64 = value.parse().unwrap();
        assert!((theirs - want).abs() <= 2, "{policy}: redis reads {probe} {theirs}, want {want}");
        // And back: redis-server saves it (over quince's file), quince loads it.
        assert_eq!(redis.cmd(&["SAVE"]), b"+OK\r\n");
        let mut again = Local::new();
        again.cmd(&["CONFIG", "SET", "maxmemory-policy", policy]);
        let file = std::fs::File::open(dir.join(&name)).unwrap();
        load_snapshot(&again.engine, std::io::BufReader::new(file), &LoadOptions::default(), &mut |_, _| {}).unwrap();
        let ours = int(parse(&again.cmd(&["OBJECT", probe, "k"])));
        assert!((ours - want).abs() <= 2, "{policy}: quince reads {probe} {ours}, want {want}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Builders for hand-made legacy payloads.
mod legacy {
    pub fn len(out: &mut Vec<u8>, n: usize) {
        if n < 64 {
            out.push(n as u8);
        } else if n < 16384 {
            out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
        } else {
            out.push(0x80);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
    }

    pub fn string(out: &mut Vec<u8>, s: &[u8]) {
        len(out, s.len());
        out.extend_from_slice(s);
    }

    pub fn seal(mut body: Vec<u8>) -> Vec<u8> {
        body.extend_from_slice(&9u16.to_le_bytes());
        let crc = quince_persist::rdb::crc64::crc64(0, &body);
        body.extend_from_slice(&crc.to_le_bytes());
        body
    }

    /// A type byte, a count and strings.
    pub fn collection(t: u8, items: &[&[u8]], pairs: bool) -> Vec<u8> {
        let mut out = vec![t];
        len(&mut out, if pairs { items.len() / 2 } else { items.len() });
        for i in items {
            string(&mut out, i);
        }
        seal(out)
    }

    /// A type byte and one string holding `blob`.
    pub fn blob(t: u8, blob: &[u8]) -> Vec<u8> {
        let mut out = vec![t];
        string(&mut out, blob);
        seal(out)
    }
}

/// Payloads in the encodings only older Redis versions wrote (linked lists, text-double
/// sorted sets, ziplists, zipmaps, quicklists of ziplists), RESTOREd into redis-server
/// 7.0.15 and quince under small thresholds: same content, same resulting encodings.
#[test]
fn legacy_payloads_restore_like_redis() {
    use quince_persist::rdb::{types, ziplist, zipmap};
    let Some(redis) = start_redis(&[]) else { return };
    let mut redis = redis.client();
    let mut quince = Local::new();
    for s in [&mut redis as &mut dyn Run, &mut quince] {
        for (k, v) in [
            ("hash-max-listpack-entries", "4"),
            ("hash-max-listpack-value", "8"),
            ("set-max-intset-entries", "4"),
            ("zset-max-listpack-entries", "4"),
            ("zset-max-listpack-value", "8"),
        ] {
            s.cmd(&["CONFIG", "SET", k, v]);
        }
    }
    let long = b"a value longer than eight".as_slice();
    let mut zset_text = vec![types::ZSET];
    legacy::len(&mut zset_text, 4);
    for (m, score) in [(&b"a"[..], &b"1.5"[..]), (b"b", b"-3"), (b"c", b"\xfe"), (b"d", b"\xff")] {
        legacy::string(&mut zset_text, m);
        if score.len() == 1 && score[0] >= 0xfd {
            zset_text.push(score[0]);
        } else {
            zset_text.push(score.len() as u8);
            zset_text.extend_from_slice(score);
        }
    }
    let zset_text = legacy::seal(zset_text);
    let mut quicklist = vec![types::LIST_QUICKLIST];
    legacy::len(&mut quicklist, 2);
    legacy::string(&mut quicklist, &ziplist::encode(&[b"a", b"1", b"-20000"]));
    legacy::string(&mut quicklist, &ziplist::encode(&[b"b", long]));
    let quicklist = legacy::seal(quicklist);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("list-linked", legacy::collection(types::LIST, &[b"x", b"12", long], false)),
        ("set-ints", legacy::collection(types::SET, &[b"3", b"1", b"2"], false)),
        ("set-mixed", legacy::collection(types::SET, &[b"3", b"x", b"2"], false)),
        ("set-many-ints", legacy::collection(types::SET, &[b"1", b"2", b"3", b"4", b"5"], false)),
        ("hash-small", legacy::collection(types::HASH, &[b"f", b"v", b"g", b"w"], true)),
        ("hash-long", legacy::collection(types::HASH, &[b"f", long], true)),
        (
            "hash-many",
            legacy::collection(types::HASH, &[b"1", b"1", b"2", b"2", b"3", b"3", b"4", b"4", b"5", b"5"], true),
        ),
        ("zset-text", zset_text),
        ("list-ziplist", legacy::blob(types::LIST_ZIPLIST, &ziplist::encode(&[b"p", b"7", long]))),
        ("list-quicklist", quicklist),
        ("zset-ziplist", legacy::blob(types::ZSET_ZIPLIST, &ziplist::encode(&[b"n", b"1.25", b"m", b"2"]))),
        (
            "zset-ziplist-big",
            legacy::blob(
                types::ZSET_ZIPLIST,
                &ziplist::encode(&[b"a", b"1", b"b", b"2", b"c", b"3", b"d", b"4", b"e", b"5"]),
            ),
        ),
        ("hash-ziplist", legacy::blob(types::HASH_ZIPLIST, &ziplist::encode(&[b"f", long]))),
        (
            "hash-ziplist-big",
            legacy::blob(
                types::HASH_ZIPLIST,
                &ziplist::encode(&[b"1", b"a", b"2", b"b", b"3", b"c", b"4", b"d", b"5", b"e"]),
            ),
        ),
        ("hash-zipmap", legacy::blob(types::HASH_ZIPMAP, &zipmap::encode(&[(b"f", b"v"), (b"g", b"1")]))),
        ("hash-zipmap-long", legacy::blob(types::HASH_ZIPMAP, &zipmap::encode(&[(b"f", long)]))),
        ("set-intset-big", legacy::blob(types::SET_INTSET, &quince_persist::rdb::intset::encode(&[1, 2, 3, 4, 5]))),
    ];
    for (key, payload) in &cases {
        for s in [&mut redis as &mut dyn Run, &mut quince] {
            let reply = s.run(&[b"RESTORE", key.as_bytes(), b"0", payload]);
            assert_eq!(String::from_utf8_lossy(&reply), "+OK\r\n", "{key}");
        }
    }
    assert_same_dataset(&mut quince, &mut redis, 0);
}

/// Rewrites a STREAM_LISTPACKS_2 payload as the 6.x STREAM_LISTPACKS one: without the
/// first ID, max deleted ID, entries-added and group entries-read fields.
fn stream_v2_to_v1(p: &[u8]) -> Vec<u8> {
    fn len(p: &[u8], i: &mut usize) -> (bool, u64) {
        let b = p[*i];
        *i += 1;
        match b >> 6 {
            0 => (false, u64::from(b & 0x3f)),
            1 => {
                *i += 1;
                (false, (u64::from(b & 0x3f) << 8) | u64::from(p[*i - 1]))
            }
            3 => (true, u64::from(b & 0x3f)),
            _ if b == 0x80 => {
                *i += 4;
                (false, u64::from(u32::from_be_bytes(p[*i - 4..*i].try_into().unwrap())))
            }
            _ => {
                *i += 8;
                (false, u64::from_be_bytes(p[*i - 8..*i].try_into().unwrap()))
            }
        }
    }
    fn skip_string(p: &[u8], i: &mut usize) {
        match len(p, i) {
            (false, n) => *i += n as usize,
            (true, 0) => *i += 1,
            (true, 1) => *i += 2,
            (true, 2) => *i += 4,
            _ => {
                let (_, clen) = len(p, i);
                len(p, i);
                *i += clen as usize;
            }
        }
    }
    let body = &p[..p.len() - 10];
    assert_eq!(body[0], 19);
    let mut out = vec![15u8];
    let mut i = 1;
    let (_, nodes) = len(body, &mut i);
    for _ in 0..nodes {
        skip_string(body, &mut i);
        skip_string(body, &mut i);
    }
    for _ in 0..3 {
        len(body, &mut i); // length, last ID
    }
    out.extend_from_slice(&body[1..i]);
    for _ in 0..5 {
        len(body, &mut i); // first ID, max deleted ID, entries added: dropped
    }
    let start = i;
    let (_, groups) = len(body, &mut i);
    out.extend_from_slice(&body[start..i]);
    for _ in 0..groups {
        let start = i;
        skip_string(body, &mut i);
        len(body, &mut i);
        len(body, &mut i);
        out.extend_from_slice(&body[start..i]);
        len(body, &mut i); // entries read: dropped
        let start = i;
        let (_, pel) = len(body, &mut i);
        for _ in 0..pel {
            i += 24;
            len(body, &mut i);
        }
        let (_, consumers) = len(body, &mut i);
        for _ in 0..consumers {
            skip_string(body, &mut i);
            i += 8;
            let (_, n) = len(body, &mut i);
            i += 16 * n as usize;
        }
        out.extend_from_slice(&body[start..i]);
    }
    assert_eq!(i, body.len());
    legacy::seal(out)
}

/// 6.x stream payloads (no entries-added / first ID / group entries-read) restore with the
/// metadata Redis 7.0 derives for them.
#[test]
fn v1_stream_payloads_restore_like_redis() {
    let Some(source) = start_redis(&[]) else { return };
    let Some(target) = start_redis(&[]) else { return };
    let mut source = source.client();
    let mut target = target.client();
    let mut quince = Local::new();
    for i in 1..=8 {
        source.cmd(&["XADD", "s", &format!("{i}-1"), "f", &format!("v{i}"), "g", "x"]);
    }
    source.cmd(&["XGROUP", "CREATE", "s", "behind", "0"]);
    source.cmd(&["XGROUP", "CREATE", "s", "at-end", "$"]);
    source.cmd(&["XGROUP", "CREATE", "s", "middle", "4-1"]);
    source.cmd(&["XREADGROUP", "GROUP", "behind", "c1", "COUNT", "3", "STREAMS", "s", ">"]);
    source.cmd(&["XADD", "t", "1-1", "a", "b"]);
    source.cmd(&["XADD", "t", "2-1", "a", "c"]);
    source.cmd(&["XDEL", "t", "1-1"]);
    source.cmd(&["XGROUP", "CREATE", "t", "g", "0"]);
    for key in ["s", "t"] {
        let v2 = bulk(parse(&source.cmd(&["DUMP", key])));
        let v1 = stream_v2_to_v1(&v2);
        for s in [&mut target as &mut dyn Run, &mut quince] {
            assert_eq!(s.run(&[b"RESTORE", key.as_bytes(), b"0", &v1]), b"+OK\r\n", "{key}");
        }
    }
    assert_same_dataset(&mut quince, &mut target, 0);
}
