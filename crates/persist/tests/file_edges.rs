//! Whole-file edge cases: expired keys, duplicates, bad headers and checksums, function
//! libraries, databases beyond the configured count.

mod common;

use common::{Local, Run};
use quince_persist::rdb::{load_snapshot, write_snapshot, LoadOptions, RdbError, SaveOptions};

fn save(q: &Local) -> Vec<u8> {
    let mut file = Vec::new();
    write_snapshot(&q.engine, &mut file, &SaveOptions::default()).unwrap();
    file
}

fn load(q: &Local, file: &[u8], options: &LoadOptions) -> Result<quince_persist::rdb::LoadStats, RdbError> {
    load_snapshot(&q.engine, file, options, &mut |_, _| {})
}

#[test]
fn expired_keys_are_saved_and_skipped_on_load() {
    let mut q = Local::new();
    q.cmd(&["SET", "live", "1"]);
    q.cmd(&["SET", "dying", "1", "PX", "30"]);
    std::thread::sleep(std::time::Duration::from_millis(60));
    let file = save(&q);
    let fresh = Local::new();
    let stats = load(&fresh, &file, &LoadOptions::default()).unwrap();
    assert_eq!((stats.keys_loaded, stats.keys_expired), (1, 1));
    let fresh = Local::new();
    let stats = load(&fresh, &file, &LoadOptions { skip_expired: false, ..LoadOptions::default() }).unwrap();
    assert_eq!((stats.keys_loaded, stats.keys_expired), (2, 0));
}

#[test]
fn duplicates_fail_unless_allowed() {
    let mut q = Local::new();
    q.cmd(&["SET", "k", "new"]);
    q.cmd(&["FUNCTION", "LOAD", common::LIBRARY]);
    let file = save(&q);
    let mut target = Local::new();
    target.cmd(&["SET", "k", "old"]);
    let err = load(&target, &file, &LoadOptions::default()).unwrap_err();
    assert_eq!(err.to_string(), "RDB has duplicated key 'k' in DB 0");
    let mut target = Local::new();
    target.cmd(&["SET", "k", "old"]);
    target.cmd(&["FUNCTION", "LOAD", common::LIBRARY]);
    let stats = load(&target, &file, &LoadOptions { allow_duplicates: true, ..LoadOptions::default() }).unwrap();
    assert_eq!(stats.functions_loaded, 1);
    assert_eq!(target.cmd(&["GET", "k"]), b"$3\r\nnew\r\n");
    assert_eq!(target.cmd(&["FCALL", "interop_echo", "0", "hi"]), b"$2\r\nhi\r\n");
    // A library already present is an error without allow_duplicates.
    let mut other = Local::new();
    other.cmd(&["FUNCTION", "LOAD", common::LIBRARY]);
    let err = load(&other, &file, &LoadOptions::default()).unwrap_err();
    assert_eq!(err.to_string(), "Failed loading library, Library 'interoplib' already exists");
}

#[test]
fn headers_and_checksums() {
    let mut q = Local::new();
    q.cmd(&["SET", "k", "v"]);
    let file = save(&q);
    let fresh = Local::new();
    let mut bad = file.clone();
    bad[0] = b'X';
    assert_eq!(
        load(&fresh, &bad, &LoadOptions::default()).unwrap_err().to_string(),
        "Wrong signature trying to load DB from file"
    );
    let mut newer = file.clone();
    newer[5..9].copy_from_slice(b"0011");
    assert_eq!(
        load(&fresh, &newer, &LoadOptions::default()).unwrap_err().to_string(),
        "Can't handle RDB format version 11"
    );
    let short = &file[..file.len() - 3];
    assert_eq!(
        load(&fresh, short, &LoadOptions::default()).unwrap_err().to_string(),
        "Short read or OOM loading DB. Unrecoverable error, aborting now."
    );
    let mut wrong = file.clone();
    let n = wrong.len();
    wrong[n - 1] ^= 0xff;
    let fresh = Local::new();
    let err = load(&fresh, &wrong, &LoadOptions::default()).unwrap_err();
    assert!(matches!(err, RdbError::Checksum { .. }), "{err}");
    assert!(err.to_string().starts_with("Wrong RDB checksum expected: ("), "{err}");
    // Not checked when verification is off, nor when the stored checksum is 0.
    let fresh = Local::new();
    load(&fresh, &wrong, &LoadOptions { verify_checksum: false, ..LoadOptions::default() }).unwrap();
    let mut zero = file.clone();
    zero[n - 8..].fill(0);
    let fresh = Local::new();
    load(&fresh, &zero, &LoadOptions::default()).unwrap();
    // rdbchecksum no writes a zero checksum.
    let mut plain = Vec::new();
    write_snapshot(&q.engine, &mut plain, &SaveOptions { checksum: false, ..SaveOptions::default() }).unwrap();
    assert_eq!(&plain[plain.len() - 8..], &[0; 8]);
}

#[test]
fn databases_beyond_the_configured_count_are_refused() {
    let mut q = Local::new();
    q.cmd(&["SELECT", "15"]);
    q.cmd(&["SET", "k", "v"]);
    let mut file = save(&q);
    // SELECTDB 15 -> SELECTDB 16 (one past `databases 16`); checksum off so it loads that far.
    let at = file.windows(2).position(|w| w == [0xfe, 15]).unwrap();
    file[at + 1] = 16;
    let fresh = Local::new();
    let err = load(&fresh, &file, &LoadOptions { verify_checksum: false, ..LoadOptions::default() }).unwrap_err();
    assert!(matches!(err, RdbError::TooManyDatabases { configured: 16 }), "{err}");
}

#[test]
fn aux_fields_are_redis_s() {
    let q = Local::new();
    let file = save(&q);
    let fresh = Local::new();
    let stats = load(&fresh, &file, &LoadOptions::default()).unwrap();
    let names: Vec<String> = stats.aux.iter().map(|(k, _)| String::from_utf8_lossy(k).into_owned()).collect();
    assert_eq!(names, ["redis-ver", "redis-bits", "ctime", "used-mem", "aof-base"]);
    assert_eq!(stats.aux[0].1, b"7.0.15");
    assert_eq!(stats.version, 10);
    assert_eq!(&file[..9], b"REDIS0010");
    // An empty dataset is header, aux fields, EOF and checksum.
    assert_eq!(file[file.len() - 9], 0xff);
}
