//! Golden files: RDB files written by older Redis versions (Redis's own tests/assets),
//! with zipmap, ziplist and quicklist encodings Redis 7.0 converts on load. Each must load
//! with the contents and encodings Redis's tests expect, and (when redis-server is
//! installed) read exactly as redis-server 7.0.15 reads the same file.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_same_dataset, parse, render, Local, Run};
use quince_persist::rdb::{load_snapshot, LoadOptions, LoadStats, RdbError};
use quince_test_util::start_redis;

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name)
}

fn load_with(name: &str, config: &[(&str, &str)]) -> (Local, Result<LoadStats, RdbError>) {
    let mut local = Local::new();
    for (k, v) in config {
        local.cmd(&["CONFIG", "SET", k, v]);
    }
    let data = std::fs::read(golden(name)).unwrap();
    let options = LoadOptions { skip_expired: false, ..LoadOptions::default() };
    let result = load_snapshot(&local.engine, &data[..], &options, &mut |_, _| {});
    (local, result)
}

fn load(name: &str) -> Local {
    let (local, result) = load_with(name, &[]);
    result.unwrap_or_else(|e| panic!("{name}: {e}"));
    local
}

fn text(s: &mut dyn Run, args: &[&str]) -> String {
    render(&parse(&s.cmd(args)))
}

#[test]
fn encodings_rdb() {
    let mut q = load("encodings.rdb");
    assert_eq!(text(&mut q, &["GET", "string"]), "\"Hello World\"");
    assert_eq!(text(&mut q, &["GET", "number"]), "\"10\"");
    assert_eq!(text(&mut q, &["STRLEN", "compressible"]), ":137");
    assert_eq!(
        text(&mut q, &["LRANGE", "list_zipped", "0", "-1"]),
        r#"["1", "2", "3", "a", "b", "c", "100000", "6000000000"]"#
    );
    assert_eq!(text(&mut q, &["LLEN", "list"]), ":24");
    assert_eq!(
        text(&mut q, &["SORT", "set_zipped_3"]),
        r#"["1000000000", "2000000000", "3000000000", "4000000000", "5000000000", "6000000000"]"#
    );
    assert_eq!(text(&mut q, &["OBJECT", "ENCODING", "set_zipped_1"]), "\"intset\"");
    assert_eq!(text(&mut q, &["HGET", "hash", "eee"]), "\"5000000000\"");
    assert_eq!(text(&mut q, &["OBJECT", "ENCODING", "hash_zipped"]), "\"listpack\"");
    assert_eq!(text(&mut q, &["ZSCORE", "zset", "bbbb"]), "\"5000000000\"");
    assert_eq!(text(&mut q, &["ZRANGE", "zset_zipped", "0", "-1", "WITHSCORES"]), r#"["a", "1", "b", "2", "c", "3"]"#);
    assert_eq!(text(&mut q, &["OBJECT", "ENCODING", "zset_zipped"]), "\"listpack\"");
    assert_eq!(text(&mut q, &["DBSIZE"]), ":13");
}

#[test]
fn list_quicklist_rdb() {
    let mut q = load("list-quicklist.rdb");
    assert_eq!(text(&mut q, &["GET", "x"]), "\"7\"");
    assert_eq!(text(&mut q, &["LPOP", "list"]), "\"7\"");
}

#[test]
fn hash_zipmap_rdb_converts() {
    let mut q = load("hash-zipmap.rdb");
    assert_eq!(text(&mut q, &["OBJECT", "ENCODING", "hash"]), "\"listpack\"");
    assert_eq!(text(&mut q, &["HMGET", "hash", "f1", "f2"]), r#"["v1", "v2"]"#);
    let (mut q, r) = load_with("hash-zipmap.rdb", &[("hash-max-ziplist-entries", "1")]);
    r.unwrap();
    assert_eq!(text(&mut q, &["OBJECT", "ENCODING", "hash"]), "\"hashtable\"");
    let (mut q, r) = load_with("hash-zipmap.rdb", &[("hash-max-ziplist-value", "1")]);
    r.unwrap();
    assert_eq!(text(&mut q, &["OBJECT", "ENCODING", "hash"]), "\"hashtable\"");
    assert_eq!(text(&mut q, &["HLEN", "hash"]), ":2");
}

#[test]
fn hash_and_zset_ziplist_rdb_convert() {
    let mut q = load("hash-ziplist.rdb");
    assert_eq!(text(&mut q, &["OBJECT", "ENCODING", "hash"]), "\"listpack\"");
    assert_eq!(text(&mut q, &["HMGET", "hash", "f1", "f2"]), r#"["v1", "v2"]"#);
    let (mut q, r) = load_with("hash-ziplist.rdb", &[("hash-max-ziplist-entries", "1")]);
    r.unwrap();
    assert_eq!(text(&mut q, &["OBJECT", "ENCODING", "hash"]), "\"hashtable\"");

    let mut q = load("zset-ziplist.rdb");
    assert_eq!(text(&mut q, &["OBJECT", "ENCODING", "zset"]), "\"listpack\"");
    assert_eq!(text(&mut q, &["ZRANGE", "zset", "0", "-1", "WITHSCORES"]), r#"["one", "1", "two", "2"]"#);
    let (mut q, r) = load_with("zset-ziplist.rdb", &[("zset-max-ziplist-entries", "1")]);
    r.unwrap();
    assert_eq!(text(&mut q, &["OBJECT", "ENCODING", "zset"]), "\"skiplist\"");
    assert_eq!(text(&mut q, &["ZCARD", "zset"]), ":2");
}

#[test]
fn empty_keys_are_skipped() {
    let (mut q, r) = load_with("corrupt_empty_keys.rdb", &[]);
    let stats = r.unwrap();
    assert_eq!(stats.empty_keys_skipped, 9);
    assert_eq!(stats.keys_loaded, 0);
    assert_eq!(text(&mut q, &["DBSIZE"]), ":0");
}

#[test]
fn corrupt_ziplist_fails_cleanly() {
    let (_, r) = load_with("corrupt_ziplist.rdb", &[]);
    let err = r.expect_err("a corrupt ziplist must not load");
    assert!(err.to_string().contains("integrity check failed"), "{err}");
}

#[test]
fn old_lua_aux_field_is_ignored() {
    let (mut q, r) = load_with("scriptbackup.rdb", &[]);
    let stats = r.unwrap();
    assert!(stats.aux.iter().any(|(k, _)| k == b"lua"));
    assert_eq!(text(&mut q, &["SCRIPT", "EXISTS", "a0c38691e9fffe4563723c32ba77a34398e090e6"]), "[:0]");
}

#[test]
fn golden_files_read_as_redis_reads_them() {
    for name in ["encodings.rdb", "hash-zipmap.rdb", "hash-ziplist.rdb", "zset-ziplist.rdb", "list-quicklist.rdb"] {
        let dir = std::env::temp_dir().join(format!("quince-golden-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(golden(name), dir.join(name)).unwrap();
        let Some(redis) = start_redis(&["--dir", dir.to_str().unwrap(), "--dbfilename", name]) else { return };
        let mut redis = redis.client();
        let (mut q, r) = load_with(name, &[]);
        r.unwrap();
        assert_same_dataset(&mut q, &mut redis, 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn rdb_preamble_of_an_aof_stops_at_the_commands() {
    let data = std::fs::read(golden("rdb-preamble.aof")).unwrap();
    let mut q = Local::new();
    let options = LoadOptions { skip_expired: false, ..LoadOptions::default() };
    let stats = load_snapshot(&q.engine, &data[..], &options, &mut |_, _| {}).unwrap();
    // The AOF tail starts right after the RDB's checksum.
    assert!(data[stats.bytes as usize..].starts_with(b"*2\r\n$6\r\nSELECT"));
    assert_eq!(text(&mut q, &["DBSIZE"]), format!(":{}", stats.keys_loaded));
    assert!(stats.keys_loaded > 0);
}
