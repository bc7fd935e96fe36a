//! Persistence commands against redis-server 7.0.15, byte for byte: BGSAVE/SAVE replies,
//! the MISCONF refusal of writes after a failed snapshot (`stop-writes-on-bgsave-error`),
//! and the fields of INFO persistence.

use quince_test_util::{Compare, Differential, Step};

fn cmd(args: &[&str]) -> Step {
    Step::cmd(args)
}

#[test]
fn a_failed_snapshot_refuses_writes_like_redis() {
    // /sys is a directory where nobody, not even root, can create the snapshot file.
    let args = ["--dir", "/sys", "--save", "3600 1"];
    let Some(mut diff) = Differential::start_with(env!("CARGO_BIN_EXE_quince-server"), &args) else { return };
    diff.run(
        "misconf",
        &[
            cmd(&["SET", "k", "v"]).compare(Compare::ErrorOrNot),
            cmd(&["BGSAVE"]),
            Step::SleepMs(800),
            cmd(&["SET", "k", "v"]),
            cmd(&["PING"]),
            cmd(&["INCR", "n"]),
            cmd(&["GET", "k"]).compare(Compare::ErrorOrNot),
            cmd(&["SAVE"]),
            cmd(&["CONFIG", "SET", "stop-writes-on-bgsave-error", "no"]),
            cmd(&["SET", "k", "v2"]),
            cmd(&["GET", "k"]),
            cmd(&["CONFIG", "SET", "stop-writes-on-bgsave-error", "yes"]),
            cmd(&["SET", "k", "v3"]),
            cmd(&["MULTI"]),
            cmd(&["SET", "k", "v4"]),
            cmd(&["EXEC"]),
            cmd(&["BGSAVE", "NOW"]),
            cmd(&["BGSAVE", "SCHEDULE", "x"]),
            cmd(&["SAVE", "x"]),
            cmd(&["BGREWRITEAOF", "x"]),
            cmd(&["CONFIG", "SET", "stop-writes-on-bgsave-error", "no"]),
        ],
    );
}

#[test]
fn info_persistence_has_redis_fields() {
    let Some(diff) = Differential::start(env!("CARGO_BIN_EXE_quince-server")) else { return };
    let fields = |reply: Vec<u8>| -> Vec<String> {
        String::from_utf8_lossy(&reply)
            .lines()
            .filter_map(|l| l.split_once(':').map(|(name, _)| name.to_string()))
            .collect()
    };
    let quince = fields(diff.quince.client().call(&["INFO", "persistence"]));
    let redis = fields(diff.redis.client().call(&["INFO", "persistence"]));
    assert_eq!(quince, redis);
}

/// A fresh, empty directory for one server's files.
fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("quince-diff-persist-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn save_bgsave_and_debug_reload_keep_the_dataset() {
    let (qdir, rdir) = (scratch_dir("quince"), scratch_dir("redis"));
    let Some(mut diff) = Differential::start_each(
        env!("CARGO_BIN_EXE_quince-server"),
        &["--dir", qdir.to_str().unwrap()],
        &["--dir", rdir.to_str().unwrap()],
    ) else {
        return;
    };
    let reads = [
        cmd(&["GET", "s"]),
        cmd(&["GET", "n"]),
        cmd(&["OBJECT", "ENCODING", "n"]),
        cmd(&["LRANGE", "l", "0", "-1"]),
        cmd(&["OBJECT", "ENCODING", "l"]),
        cmd(&["HGETALL", "h"]),
        cmd(&["OBJECT", "ENCODING", "h"]),
        cmd(&["SMEMBERS", "set"]).compare(Compare::Unordered),
        cmd(&["OBJECT", "ENCODING", "set"]),
        cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]),
        cmd(&["OBJECT", "ENCODING", "z"]),
        cmd(&["XRANGE", "x", "-", "+"]),
        cmd(&["XINFO", "GROUPS", "x"]),
        cmd(&["PTTL", "t"]).compare(Compare::IntWithin(2000)),
        cmd(&["DBSIZE"]),
        cmd(&["FUNCTION", "LIST"]),
    ];
    let mut steps = vec![
        cmd(&["SET", "s", "hello"]),
        cmd(&["SET", "n", "42"]),
        cmd(&["RPUSH", "l", "a", "1", "b"]),
        cmd(&["HSET", "h", "f", "v", "g", "w"]),
        cmd(&["SADD", "set", "1", "2", "3"]),
        cmd(&["ZADD", "z", "1", "a", "2.5", "b"]),
        cmd(&["XADD", "x", "1-1", "f", "v"]),
        cmd(&["XGROUP", "CREATE", "x", "g", "0"]),
        cmd(&["SET", "t", "v", "EX", "100"]),
        cmd(&["FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\nredis.register_function('f', function() return 1 end)"]),
        cmd(&["DEBUG", "RELOAD"]),
    ];
    steps.extend(reads.iter().cloned());
    steps.extend([
        cmd(&["SAVE"]),
        cmd(&["SET", "after-save", "1"]),
        cmd(&["DEBUG", "RELOAD", "NOSAVE"]),
        cmd(&["EXISTS", "after-save"]),
        cmd(&["BGSAVE"]),
        Step::SleepMs(500),
        cmd(&["DEBUG", "RELOAD", "NOSAVE"]),
        cmd(&["DEBUG", "RELOAD", "BOGUS"]),
    ]);
    steps.extend(reads.iter().cloned());
    diff.run("save and reload", &steps);
    drop(diff);
    let _ = std::fs::remove_dir_all(&qdir);
    let _ = std::fs::remove_dir_all(&rdir);
}

#[test]
fn function_dump_and_restore_match_redis() {
    let Some(mut diff) = Differential::start(env!("CARGO_BIN_EXE_quince-server")) else { return };
    let lib1 = "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)";
    let lib2 = "#!lua name=lib2\nredis.register_function{function_name='f2', callback=function() return 2 end, flags={'no-writes'}}";
    diff.run(
        "function dump/restore",
        &[
            cmd(&["FUNCTION", "FLUSH"]),
            cmd(&["FUNCTION", "DUMP"]),
            cmd(&["FUNCTION", "LOAD", lib1]),
            // One library: the payload is byte for byte Redis's (LZF-compressed code).
            cmd(&["FUNCTION", "DUMP"]),
            cmd(&["FUNCTION", "RESTORE", "bogus"]),
            cmd(&["FUNCTION", "RESTORE", "x", "SOMETIMES"]),
            cmd(&["FUNCTION", "RESTORE", "x", "FLUSH", "extra"]),
            cmd(&["FUNCTION", "FLUSH"]),
            cmd(&["FUNCTION", "LOAD", lib2]),
            cmd(&["FCALL", "f2", "0"]),
        ],
    );
    // Cross-restore: each server restores the other's payload, under every policy.
    for (from, to) in [(&diff.redis, &diff.quince), (&diff.quince, &diff.redis)] {
        let (mut src, mut dst) = (from.client(), to.client());
        src.call(&["FUNCTION", "FLUSH"]);
        src.call(&["FUNCTION", "LOAD", lib1]);
        src.call(&["FUNCTION", "LOAD", lib2]);
        let payload = src.call(&["FUNCTION", "DUMP"]);
        let payload = &payload[payload.iter().position(|&b| b == b'\n').unwrap() + 1..payload.len() - 2];
        dst.call(&["FUNCTION", "FLUSH"]);
        dst.call(&["FUNCTION", "LOAD", lib1]);
        let name = format!("{} to {}", from.name, to.name);
        let text = |r: Vec<u8>| String::from_utf8_lossy(&r).into_owned();
        assert_eq!(
            text(dst.call(&[&b"FUNCTION"[..], b"RESTORE", payload])),
            "-ERR Library lib1 already exists\r\n",
            "{name}"
        );
        assert_eq!(text(dst.call(&["FCALL", "f2", "0"])), "-ERR Function not found\r\n", "{name}: all or nothing");
        assert_eq!(text(dst.call(&[&b"FUNCTION"[..], b"RESTORE", payload, b"REPLACE"])), "+OK\r\n", "{name}");
        assert_eq!(text(dst.call(&["FCALL", "f2", "0"])), ":2\r\n", "{name}");
        assert_eq!(text(dst.call(&[&b"FUNCTION"[..], b"RESTORE", payload, b"FLUSH"])), "+OK\r\n", "{name}");
        assert_eq!(text(dst.call(&["FCALL", "f1", "0"])), ":1\r\n", "{name}");
        dst.call(&["FUNCTION", "FLUSH"]);
        src.call(&["FUNCTION", "FLUSH"]);
    }
}

/// BGREWRITEAOF, BGSAVE and `CONFIG SET appendonly yes` inside MULTI are scheduled for
/// after the transaction (a child forked half way through it would snapshot half of it,
/// and the rewritten log would then apply the transaction's first half twice).
#[test]
fn background_saves_inside_a_transaction_are_scheduled() {
    let (qdir, rdir) = (scratch_dir("quince-multi"), scratch_dir("redis-multi"));
    let Some(mut diff) = Differential::start_each(
        env!("CARGO_BIN_EXE_quince-server"),
        &["--dir", qdir.to_str().unwrap(), "--appendonly", "yes"],
        &["--dir", rdir.to_str().unwrap(), "--appendonly", "yes"],
    ) else {
        return;
    };
    diff.run(
        "scheduled in multi",
        &[
            cmd(&["INCR", "n"]),
            cmd(&["MULTI"]),
            cmd(&["INCR", "n"]),
            cmd(&["BGREWRITEAOF"]),
            cmd(&["BGSAVE"]),
            cmd(&["INCR", "n"]),
            cmd(&["EXEC"]),
            // The cron starts the rewrite, then the save.
            Step::SleepMs(2500),
            cmd(&["INFO", "persistence"]).compare(Compare::Ignore),
            cmd(&["DEBUG", "LOADAOF"]),
            cmd(&["GET", "n"]),
            cmd(&["DEBUG", "RELOAD", "NOSAVE"]),
            cmd(&["GET", "n"]),
            cmd(&["CONFIG", "SET", "appendonly", "no"]),
            cmd(&["MULTI"]),
            cmd(&["INCR", "n"]),
            cmd(&["CONFIG", "SET", "appendonly", "yes"]),
            cmd(&["EXEC"]),
            Step::SleepMs(1500),
            cmd(&["DEBUG", "LOADAOF"]),
            cmd(&["GET", "n"]),
        ],
    );
    // The scheduled rewrites ran (the two after the transactions at least).
    let mut c = diff.quince.client();
    let info = String::from_utf8(c.call(&["INFO", "persistence"])).unwrap();
    let field = |name: &str| info.lines().find_map(|l| l.strip_prefix(name)).unwrap_or("").trim().to_string();
    assert_eq!(field("aof_rewrite_scheduled:"), "0", "{info}");
    assert!(field("aof_rewrites:").parse::<u64>().unwrap() >= 2, "{info}");
    drop(diff);
    let _ = std::fs::remove_dir_all(&qdir);
    let _ = std::fs::remove_dir_all(&rdir);
}

/// INFO's rdb_last_load_keys_loaded and _expired after loading a snapshot (DEBUG RELOAD),
/// as Redis counts them: keys whose TTL passed are skipped and counted.
#[test]
fn rdb_load_counts_match_redis() {
    let (qdir, rdir) = (scratch_dir("quince-loadinfo"), scratch_dir("redis-loadinfo"));
    let Some(diff) = Differential::start_each(
        env!("CARGO_BIN_EXE_quince-server"),
        &["--dir", qdir.to_str().unwrap()],
        &["--dir", rdir.to_str().unwrap()],
    ) else {
        return;
    };
    let counts = |server: &quince_test_util::ServerProcess| -> Vec<String> {
        let mut c = server.client();
        let mut seen = Vec::new();
        let mut observe = |c: &mut quince_test_util::RawClient| {
            let info = String::from_utf8(c.call(&["INFO", "persistence"])).unwrap();
            seen.extend(info.lines().filter(|l| l.starts_with("rdb_last_load_keys_")).map(str::to_string));
        };
        c.call(&["DEBUG", "POPULATE", "1000"]);
        c.call(&["DEBUG", "RELOAD"]);
        observe(&mut c);
        c.call(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
        for j in 0..64 {
            c.call(&["SELECT", &(j % 16).to_string()]);
            c.call(&["SET", &j.to_string(), "v", "PX", "10"]);
        }
        std::thread::sleep(std::time::Duration::from_millis(30));
        c.call(&["DEBUG", "RELOAD"]);
        observe(&mut c);
        c.call(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
        seen
    };
    let (quince, redis) = (counts(&diff.quince), counts(&diff.redis));
    assert_eq!(quince, redis, "quince first, redis second");
    assert!(redis.contains(&"rdb_last_load_keys_expired:64".to_string()), "{redis:?}");
    drop(diff);
    let _ = std::fs::remove_dir_all(&qdir);
    let _ = std::fs::remove_dir_all(&rdir);
}
