//! The server runs plain GETs, SETs and INCRs on the engine's fast path (`Engine::execute_fast`)
//! when nothing unusual is in force. Against redis-server 7.0.15: the same replies, byte for
//! byte, pipelined, in RESP2 and RESP3, and the same traces left behind: the commands'
//! calls, keyspace hits and misses, commands processed, the dataset's change count, the
//! values' encodings, TTLs cleared by SET, the LFU counter a read bumps, and CLIENT LIST's
//! last command. A state that makes the fast path decline (a key holding another type, an
//! expired key, keyspace events) gets the general path's answer.

use quince_test_util::{Differential, RawClient};

/// A field of an INFO reply, as text.
fn info_field(client: &mut RawClient, section: &str, field: &str) -> String {
    let info = String::from_utf8_lossy(&client.call(&["INFO", section])).into_owned();
    info.lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in INFO {section}: {info}"))
        .trim()
        .to_string()
}

/// `calls=N` of a command's INFO commandstats line.
fn calls(client: &mut RawClient, command: &str) -> String {
    let line = info_field(client, "commandstats", &format!("cmdstat_{command}"));
    line.split(',').find(|f| f.starts_with("calls=")).expect("calls").to_string()
}

/// Sends `commands` in one write and reads their replies.
fn pipeline(client: &mut RawClient, commands: &[&[&str]]) -> Vec<Vec<u8>> {
    let mut bytes = Vec::new();
    for command in commands {
        bytes.extend(quince_test_util::encode_command(command));
    }
    client.send_raw(&bytes);
    commands.iter().map(|_| client.read_reply()).collect()
}

/// What one server answers and leaves behind for the scenario.
fn scenario(port: u16) -> Vec<String> {
    let mut admin = RawClient::connect(port);
    admin.call(&["FLUSHALL"]);
    admin.call(&["CONFIG", "RESETSTAT"]);
    let mut seen = Vec::new();
    let processed_before: i64 = info_field(&mut admin, "stats", "total_commands_processed").parse().unwrap();
    let dirty_before: i64 = info_field(&mut admin, "persistence", "rdb_changes_since_last_save").parse().unwrap();
    let big = "v".repeat(100);
    let mut client = RawClient::connect(port);
    let replies = pipeline(
        &mut client,
        &[
            &["GET", "missing"],
            &["SET", "k", "hello"],
            &["get", "k"],
            &["SET", "n", "12345"],
            &["GET", "n"],
            &["SET", "big", &big],
            &["GET", "big"],
            &["SET", "empty", ""],
            &["GET", "empty"],
            &["SADD", "list", "a"],
            &["GET", "list"],
            &["SET", "list", "now a string"],
            &["GET", "list"],
            &["SET", "volatile", "1", "EX", "100"],
            &["SET", "volatile", "2"],
            &["GET", "volatile"],
            // INCR: created by the general path, then in place; a string of digits, a
            // number kept with its TTL, then what the fast path leaves to the general one.
            &["INCR", "counter"],
            &["INCR", "counter"],
            &["incr", "counter"],
            &["SET", "digits", "0041"],
            &["INCR", "digits"],
            &["SET", "timed", "7", "EX", "100"],
            &["INCR", "timed"],
            &["INCR", "k"],
            &["INCR", "list"],
            &["SET", "max", "9223372036854775807"],
            &["INCR", "max"],
            &["SET", "spaced", " 1"],
            &["INCR", "spaced"],
        ],
    );
    seen.extend(replies.iter().map(|r| String::from_utf8_lossy(r).into_owned()));
    // RESP3: a missing key is a null, not a nil bulk.
    client.call(&["HELLO", "3"]);
    let replies = pipeline(&mut client, &[&["GET", "missing"], &["GET", "k"], &["SET", "k", "again"]]);
    seen.extend(replies.iter().map(|r| String::from_utf8_lossy(r).into_owned()));
    client.call(&["HELLO", "2"]);
    // An expired key: the general path deletes it.
    admin.call(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    admin.call(&["SET", "short", "x", "PX", "1"]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    seen.push(format!("expired: {}", String::from_utf8_lossy(&client.call(&["GET", "short"]))));
    seen.push(format!("expired_keys: {}", info_field(&mut admin, "stats", "expired_keys")));
    admin.call(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
    // What CLIENT LIST tells of the client's last command.
    client.call(&["GET", "k"]);
    let list = String::from_utf8_lossy(&admin.call(&["CLIENT", "LIST"])).into_owned();
    let cmds: Vec<&str> = list.split_whitespace().filter(|f| f.starts_with("cmd=")).collect();
    seen.push(format!("client list: {cmds:?}"));
    for command in ["get", "set", "sadd", "incr"] {
        seen.push(format!("{command}: {}", calls(&mut admin, command)));
    }
    for field in ["keyspace_hits", "keyspace_misses"] {
        seen.push(format!("{field}: {}", info_field(&mut admin, "stats", field)));
    }
    let processed: i64 = info_field(&mut admin, "stats", "total_commands_processed").parse().unwrap();
    seen.push(format!("processed: {}", processed - processed_before));
    let dirty: i64 = info_field(&mut admin, "persistence", "rdb_changes_since_last_save").parse().unwrap();
    seen.push(format!("changes: {}", dirty - dirty_before));
    // (After the counters: OBJECT and TTL count keyspace hits in Redis, not in quince.)
    for key in ["k", "n", "big", "empty", "list", "counter", "digits", "timed", "max"] {
        seen.push(format!("{key}: {}", String::from_utf8_lossy(&admin.call(&["OBJECT", "ENCODING", key]))));
    }
    for key in ["volatile", "timed"] {
        seen.push(format!("{key} ttl: {}", String::from_utf8_lossy(&admin.call(&["TTL", key]))));
    }
    seen
}

#[test]
fn plain_gets_sets_and_incrs_answer_and_count_as_redis() {
    let Some(diff) = Differential::start(env!("CARGO_BIN_EXE_quince-server")) else { return };
    assert_eq!(scenario(diff.quince.port), scenario(diff.redis.port));
}

/// Under an LFU policy a read bumps the key's counter: 5 for a new key, then 6 after its
/// first read (certain below the initial value's log increments), through the fast path
/// as through the general one. With keyspace events on, the fast path declines and the
/// events are those of Redis.
#[test]
fn reads_bump_lfu_and_events_are_heard() {
    let Some(diff) = Differential::start(env!("CARGO_BIN_EXE_quince-server")) else { return };
    let run = |port: u16| {
        let mut client = RawClient::connect(port);
        client.call(&["FLUSHALL"]);
        client.call(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]);
        client.call(&["SET", "k", "v"]);
        let before = client.call(&["OBJECT", "FREQ", "k"]);
        client.call(&["GET", "k"]);
        let after = client.call(&["OBJECT", "FREQ", "k"]);
        client.call(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
        client.call(&["CONFIG", "SET", "notify-keyspace-events", "KEAm"]);
        let mut sub = RawClient::connect(port);
        sub.call(&["PSUBSCRIBE", "__key*"]);
        client.call(&["SET", "k", "w"]);
        client.call(&["GET", "nothing"]);
        client.call(&["CONFIG", "SET", "notify-keyspace-events", ""]);
        let events: Vec<String> = (0..4).map(|_| String::from_utf8_lossy(&sub.read_reply()).into_owned()).collect();
        (before, after, events)
    };
    let quince = run(diff.quince.port);
    let redis = run(diff.redis.port);
    assert_eq!(quince, redis);
    assert_eq!(quince.1, b":6\r\n");
}

/// A script's GET, SET and INCR (redis.call) take the fast path too: the same replies as
/// Redis, and the same counters left behind (commands' calls, hits and misses, commands
/// processed, changes), for a script declaring its key (run alongside others) and for
/// one reaching an undeclared key (run alone).
#[test]
fn scripts_gets_sets_and_incrs_answer_and_count_as_redis() {
    let Some(diff) = Differential::start(env!("CARGO_BIN_EXE_quince-server")) else { return };
    let script = "redis.call('SET', KEYS[1], ARGV[1]) \
                  local n = redis.call('INCR', KEYS[1]) \
                  local v = redis.call('GET', KEYS[1]) \
                  local missing = redis.call('GET', KEYS[1] .. ':none') \
                  local t = redis.pcall('INCR', 'text') \
                  return {n, v, tostring(missing), t['err'] or t}";
    let run = |port: u16| {
        let mut client = RawClient::connect(port);
        client.call(&["FLUSHALL"]);
        client.call(&["SET", "text", "abc"]);
        client.call(&["CONFIG", "RESETSTAT"]);
        let mut seen: Vec<String> = Vec::new();
        for (key, value) in [("a", "1"), ("a", "41"), ("b", "x1"), ("c", "9223372036854775806")] {
            for protocol in ["2", "3"] {
                client.call(&["HELLO", protocol]);
                let reply = client.call(&["EVAL", script, "1", key, value]);
                seen.push(String::from_utf8_lossy(&reply).into_owned());
            }
        }
        client.call(&["HELLO", "2"]);
        for command in ["get", "set", "incr", "eval"] {
            seen.push(format!("{command}: {}", calls(&mut client, command)));
        }
        for field in ["keyspace_hits", "keyspace_misses", "total_commands_processed"] {
            seen.push(format!("{field}: {}", info_field(&mut client, "stats", field)));
        }
        seen.push(format!("changes: {}", info_field(&mut client, "persistence", "rdb_changes_since_last_save")));
        seen
    };
    assert_eq!(run(diff.quince.port), run(diff.redis.port));
}
