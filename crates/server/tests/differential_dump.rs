//! Differential tests for DUMP and RESTORE: payload bytes, every option and error path,
//! in RESP2 and RESP3, against a real redis-server. Skipped without redis-server unless
//! QUINCE_REQUIRE_REDIS=1.

use quince_engine::keyspace::Value;
use quince_persist::dump::create_payload;
use quince_persist::rdb::crc64::crc64;
use quince_persist::rdb::WriteOptions;
use quince_test_util::{Compare, Differential, Step};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn cmd(args: &[&str]) -> Step {
    Step::cmd(args)
}

fn run(name: &str, steps: &[Step]) {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    diff.run(name, steps);
}

fn payload(value: &str) -> Vec<u8> {
    create_payload(&Value::string(value.as_bytes()), &WriteOptions::default())
}

/// `body` with a footer for RDB `version` and a correct CRC64.
fn sealed(body: &[u8], version: u16) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&version.to_le_bytes());
    let crc = crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

fn restore(key: &str, ttl: &str, payload: &[u8], extra: &[&str]) -> Step {
    let mut args: Vec<&[u8]> = vec![b"RESTORE", key.as_bytes(), ttl.as_bytes(), payload];
    args.extend(extra.iter().map(|a| a.as_bytes()));
    Step::bytes(&args)
}

#[test]
fn dump_of_every_type_matches_redis() {
    let big: Vec<String> = (0..300).map(|i| format!("item-{i}")).collect();
    let mut rpush = vec!["RPUSH", "biglist"];
    rpush.extend(big.iter().map(String::as_str));
    run(
        "dump bytes",
        &[
            cmd(&["DUMP", "missing"]),
            cmd(&["SET", "s", "hello"]),
            cmd(&["DUMP", "s"]),
            cmd(&["SET", "n", "-123456"]),
            cmd(&["DUMP", "n"]),
            cmd(&["SET", "long", &"compress me ".repeat(20)]),
            cmd(&["DUMP", "long"]),
            cmd(&["RPUSH", "l", "a", "1", "b", "-70000"]),
            cmd(&["DUMP", "l"]),
            cmd(&rpush),
            cmd(&["DUMP", "biglist"]),
            cmd(&["HSET", "h", "f", "v", "n", "5"]),
            cmd(&["DUMP", "h"]),
            cmd(&["SADD", "is", "5", "-3", "70000"]),
            cmd(&["DUMP", "is"]),
            cmd(&["ZADD", "z", "1", "a", "2.5", "b", "-inf", "c"]),
            cmd(&["DUMP", "z"]),
            cmd(&["XADD", "x", "1-1", "f", "v"]),
            cmd(&["XADD", "x", "2-1", "f", "w", "g", "h"]),
            cmd(&["XGROUP", "CREATE", "x", "grp", "0"]),
            cmd(&["DUMP", "x"]),
            cmd(&["CONFIG", "SET", "rdbcompression", "no"]),
            cmd(&["DUMP", "long"]),
            cmd(&["CONFIG", "SET", "rdbcompression", "yes"]),
            cmd(&["DUMP"]),
            cmd(&["DUMP", "a", "b"]),
        ],
    );
}

#[test]
fn restore_options_and_effects() {
    let p = payload("restored");
    let n = payload("42");
    run(
        "restore options",
        &[
            restore("k", "0", &p, &[]),
            cmd(&["GET", "k"]),
            cmd(&["TTL", "k"]),
            cmd(&["OBJECT", "ENCODING", "k"]),
            restore("k", "0", &p, &[]),
            restore("k", "0", &n, &["REPLACE"]),
            cmd(&["GET", "k"]),
            cmd(&["OBJECT", "ENCODING", "k"]),
            restore("t", "100000", &p, &[]),
            cmd(&["PTTL", "t"]).compare(Compare::IntWithin(1000)),
            restore("a", "99999999999999", &p, &["ABSTTL"]),
            cmd(&["PEXPIRETIME", "a"]),
            restore("past", "1", &p, &["ABSTTL"]),
            cmd(&["EXISTS", "past"]),
            cmd(&["SET", "old", "x"]),
            restore("old", "1", &p, &["ABSTTL", "REPLACE"]),
            cmd(&["EXISTS", "old"]),
            restore("i", "0", &p, &["IDLETIME", "1000"]),
            cmd(&["OBJECT", "IDLETIME", "i"]).compare(Compare::IntWithin(2)),
            restore("f", "0", &p, &["FREQ", "100"]),
            cmd(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]),
            restore("f2", "0", &p, &["FREQ", "100"]),
            cmd(&["OBJECT", "FREQ", "f2"]),
            restore("f3", "0", &p, &["replace", "absttl", "freq", "7"]),
            cmd(&["OBJECT", "FREQ", "f3"]),
            cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]),
            cmd(&["DBSIZE"]),
        ],
    );
}

#[test]
fn restore_errors() {
    let p = payload("v");
    let mut bad_crc = p.clone();
    *bad_crc.last_mut().unwrap() ^= 1;
    let body = &p[..p.len() - 10];
    let newer = sealed(body, 11);
    let older = sealed(body, 9);
    let garbage = sealed(&[0, 0x80, 0xff, 0xff], 10);
    let unknown_type = sealed(&[8, 1, b'x'], 10);
    let module = sealed(&[7, 1, 2, 3], 10);
    let empty_list = sealed(&[18, 0], 10);
    run(
        "restore errors",
        &[
            restore("k", "0", &bad_crc, &[]),
            restore("k", "0", &newer, &[]),
            restore("k", "0", &older, &[]),
            cmd(&["GET", "k"]),
            restore("g", "0", &garbage, &[]),
            restore("g", "0", &unknown_type, &[]),
            restore("g", "0", &module, &[]),
            restore("g", "0", &empty_list, &[]),
            restore("g", "0", b"short", &[]),
            restore("g", "0", b"", &[]),
            restore("g", "-1", &p, &[]),
            restore("g", "abc", &p, &[]),
            restore("g", "0", &p, &["IDLETIME", "-1"]),
            restore("g", "0", &p, &["IDLETIME", "x"]),
            restore("g", "0", &p, &["IDLETIME"]),
            restore("g", "0", &p, &["FREQ", "256"]),
            restore("g", "0", &p, &["FREQ", "-1"]),
            restore("g", "0", &p, &["FREQ", "1.5"]),
            restore("g", "0", &p, &["IDLETIME", "1", "FREQ", "1"]),
            restore("g", "0", &p, &["FREQ", "1", "IDLETIME", "1"]),
            restore("g", "0", &p, &["BOGUS"]),
            cmd(&["SET", "busy", "x"]),
            restore("busy", "0", &p, &[]),
            restore("busy", "0", &p, &["FREQ", "3"]),
            restore("busy", "-5", &p, &[]),
            restore("busy", "0", &bad_crc, &["REPLACE"]),
            cmd(&["GET", "busy"]),
            cmd(&["RESTORE", "k", "0"]),
            cmd(&["DBSIZE"]),
        ],
    );
}

#[test]
fn dump_encodings_of_command_built_values() {
    // DUMP next to the type and encoding it serializes (DUMP/RESTORE across servers is
    // crates/persist/tests/interop.rs).
    let mut steps = vec![
        cmd(&["HSET", "h", "a", "1", "b", "2"]),
        cmd(&["SADD", "s", "x", "y"]),
        cmd(&["SADD", "is", "1", "2", "3"]),
        cmd(&["ZADD", "z", "1", "m", "2", "n"]),
        cmd(&["RPUSH", "l", "1", "2", "three"]),
        cmd(&["XADD", "x", "5-5", "k", "v"]),
        cmd(&["SET", "str", "text"]),
    ];
    for key in ["h", "is", "z", "l", "x", "str"] {
        steps.push(cmd(&["DUMP", key]));
        steps.push(cmd(&["TYPE", key]));
        steps.push(cmd(&["OBJECT", "ENCODING", key]));
    }
    steps.push(cmd(&["SMEMBERS", "s"]).compare(Compare::Unordered));
    run("dump encodings", &steps);
}

#[test]
fn dump_of_compressed_list_nodes_matches_redis() {
    let items: Vec<String> = (0..400).map(|i| format!("element number {i} of a compressible list")).collect();
    let mut rpush = vec!["RPUSH", "l"];
    rpush.extend(items.iter().map(String::as_str));
    let noise: Vec<String> = (0..40u64).map(|i| format!("{:x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15))).collect();
    let mut rpush_noise = vec!["RPUSH", "n"];
    rpush_noise.extend(noise.iter().map(String::as_str));
    run(
        "compressed list nodes",
        &[
            cmd(&["CONFIG", "SET", "list-compress-depth", "1"]),
            cmd(&rpush),
            cmd(&["DUMP", "l"]),
            cmd(&["CONFIG", "SET", "list-compress-depth", "2"]),
            cmd(&["CONFIG", "SET", "list-max-listpack-size", "4"]),
            cmd(&["DEL", "l"]),
            cmd(&rpush),
            cmd(&["DUMP", "l"]),
            cmd(&rpush_noise),
            cmd(&["DUMP", "n"]),
            cmd(&["CONFIG", "SET", "rdbcompression", "no"]),
            cmd(&["DUMP", "l"]),
            cmd(&["DUMP", "n"]),
        ],
    );
}

#[test]
fn command_docs_and_info() {
    run(
        "dump and restore specs",
        &[
            cmd(&["COMMAND", "INFO", "dump", "restore"]),
            cmd(&["COMMAND", "DOCS", "dump", "restore"]),
            cmd(&["COMMAND", "GETKEYS", "RESTORE", "k", "0", "payload"]),
            cmd(&["COMMAND", "GETKEYS", "DUMP", "k"]),
        ],
    );
}

/// DEBUG SET-SKIP-CHECKSUM-VALIDATION: a payload with a wrong CRC is restored while it is
/// on (Redis's tests rely on it), refused again once off; DEBUG AOF-FLUSH-SLEEP answers OK.
#[test]
fn debug_skip_checksum_validation_matches_redis() {
    let mut bad_crc = payload("hello");
    let last = bad_crc.len() - 1;
    bad_crc[last] ^= 0xff;
    run(
        "skip checksum",
        &[
            restore("a", "0", &bad_crc, &[]),
            cmd(&["DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1"]),
            restore("a", "0", &bad_crc, &[]),
            cmd(&["GET", "a"]),
            cmd(&["DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0"]),
            restore("b", "0", &bad_crc, &[]),
            cmd(&["DEBUG", "SET-SKIP-CHECKSUM-VALIDATION"]).compare(Compare::ErrorOrNot),
            cmd(&["DEBUG", "AOF-FLUSH-SLEEP", "0"]),
        ],
    );
}

/// A corrupt payload: "Bad data format", and Redis's verbose log line naming the check
/// that failed (its test suite looks for "integrity check failed").
#[test]
fn a_corrupt_payload_is_refused_and_logged() {
    // A ziplist-encoded hash whose third entry claims a length past its end (from Redis's
    // corrupt-dump tests).
    let corrupt: &[u8] = b"\x0D\x1B\x1B\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62\x00\x04\x14\x63\x00\x04\x02\x64\x00\xFF\x09\x00\xD9\x10\x54\x92\x15\xF5\x5F\x52";
    run("corrupt payload", &[restore("k", "0", corrupt, &[]), cmd(&["EXISTS", "k"])]);
    let dir = std::env::temp_dir().join(format!("quince-corrupt-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("quince.log");
    let dir_arg = dir.to_str().unwrap().to_string();
    let log_arg = log.to_str().unwrap().to_string();
    let server =
        quince_test_util::start_quince(QUINCE, &["--dir", &dir_arg, "--logfile", &log_arg, "--loglevel", "verbose"]);
    let mut c = server.client();
    let reply = c.call(&[&b"RESTORE"[..], b"k", b"0", corrupt]);
    assert_eq!(reply, b"-ERR Bad data format\r\n");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("Hash ziplist integrity check failed."), "{text}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
