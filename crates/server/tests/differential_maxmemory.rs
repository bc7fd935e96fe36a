//! `maxmemory` against redis-server 7.0.15: -OOM for commands that may grow memory (and for
//! queueing in MULTI), EXECABORT for a transaction that would, reads still served, and
//! eviction under a policy emptying the dataset with `evicted` events. `maxmemory 1` is over
//! the limit on both servers whatever they hold.

use quince_test_util::{Compare, Differential, Step};

fn cmd(args: &[&str]) -> Step {
    Step::cmd(args)
}

#[test]
fn out_of_memory_refusals_match_redis() {
    let Some(mut diff) = Differential::start(env!("CARGO_BIN_EXE_quince-server")) else { return };
    diff.run(
        "oom",
        &[
            cmd(&["SET", "x", "value"]),
            cmd(&["MULTI"]),
            cmd(&["GET", "x"]),
            cmd(&["PING"]),
            cmd(&["CONFIG", "SET", "maxmemory", "1"]).compare(Compare::Ignore),
            // Queued before the limit: read-only EXEC still runs.
            cmd(&["EXEC"]),
            cmd(&["SET", "y", "1"]),
            cmd(&["LPUSH", "l", "a"]),
            cmd(&["GET", "x"]),
            cmd(&["DEL", "x"]),
            cmd(&["SET", "x", "again"]),
            cmd(&["MULTI"]),
            cmd(&["SET", "z", "1"]),
            cmd(&["GET", "z"]),
            cmd(&["EXEC"]),
            cmd(&["MULTI"]),
            cmd(&["DISCARD"]),
            cmd(&["PING"]),
            cmd(&["CONFIG", "SET", "maxmemory", "0"]),
            cmd(&["MULTI"]),
            cmd(&["SET", "w", "1"]),
            cmd(&["CONFIG", "SET", "maxmemory", "1"]).compare(Compare::Ignore),
            cmd(&["EXEC"]).compare(Compare::Ignore),
            cmd(&["CONFIG", "SET", "maxmemory", "0"]),
        ],
    );
}

#[test]
fn exec_of_a_growing_transaction_aborts_under_oom() {
    let Some(diff) = Differential::start(env!("CARGO_BIN_EXE_quince-server")) else { return };
    for server in [&diff.quince, &diff.redis] {
        let (mut c, mut admin) = (server.client(), server.client());
        c.call(&["MULTI"]);
        c.call(&["SET", "x", "1"]);
        c.call(&["GET", "x"]);
        admin.call(&["CONFIG", "SET", "maxmemory", "1"]);
        let reply = c.call(&["EXEC"]);
        assert_eq!(
            String::from_utf8_lossy(&reply),
            "-EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'.\r\n",
            "{}",
            server.name
        );
        admin.call(&["CONFIG", "SET", "maxmemory", "0"]);
    }
}

#[test]
fn eviction_empties_the_dataset_with_evicted_events() {
    let Some(mut diff) = Differential::start(env!("CARGO_BIN_EXE_quince-server")) else { return };
    for policy in ["allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-ttl", "volatile-lru"] {
        diff.run(
            policy,
            &[
                cmd(&["CONFIG", "SET", "maxmemory-policy", policy]),
                cmd(&["SET", "a", "1", "EX", "100"]),
                cmd(&["SET", "b", "2", "PX", "100000"]),
                cmd(&["RPUSH", "c", "x", "y"]),
                cmd(&["CONFIG", "SET", "maxmemory", "1"]),
                Step::SleepMs(300),
                // Volatile policies evict only keys with a TTL; the others, everything.
                cmd(&["EXISTS", "a", "b"]),
                cmd(&["EXISTS", "c"]),
                cmd(&["CONFIG", "SET", "maxmemory", "0"]),
                cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]),
            ],
        );
    }
    // The `evicted` keyevent notification.
    for server in [&diff.quince, &diff.redis] {
        let (mut c, mut sub) = (server.client(), server.client());
        c.call(&["FLUSHALL"]);
        c.call(&["CONFIG", "SET", "notify-keyspace-events", "Ee"]);
        c.call(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]);
        sub.call(&["PSUBSCRIBE", "*"]);
        c.call(&["SET", "foo", "bar"]);
        c.call(&["CONFIG", "SET", "maxmemory", "1"]);
        let event = sub.read_reply();
        assert_eq!(
            String::from_utf8_lossy(&event),
            "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$22\r\n__keyevent@0__:evicted\r\n$3\r\nfoo\r\n",
            "{}",
            server.name
        );
        c.call(&["CONFIG", "SET", "maxmemory", "0"]);
        c.call(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
        c.call(&["CONFIG", "SET", "notify-keyspace-events", ""]);
    }
}
