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
