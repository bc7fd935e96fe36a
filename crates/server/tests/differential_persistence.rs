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
