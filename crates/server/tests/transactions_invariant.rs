//! Atomicity under concurrency: clients on several worker threads (2 and 4) move amounts
//! between accounts held in different shards, with MULTI/EXEC, EVAL and EVALSHA scripts,
//! functions and WATCH-based optimistic transfers, while checkers read every balance
//! atomically (in a MULTI/EXEC of GETs, with MGET, and with a Lua script summing them). The
//! total never changes; a checker that ever sees another total proves a transfer was seen
//! half done. At the end every account holds exactly what the movers' own records say it
//! should: no update was lost or applied twice.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use quince_test_util::{start_quince, RawClient};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");
const SHARDS: usize = 16;
const ACCOUNTS: usize = 8;
const INITIAL: i64 = 1000;
/// Each mover stops after this many transfers or this long, whichever comes first.
const TRANSFERS_MAX: usize = 1500;
const RUN_TIME_MAX: Duration = Duration::from_secs(4);
/// Commands queued between a MULTI transfer's two writes.
const WINDOW_READS: usize = 10;

/// Redis Cluster's key hash slot (CRC16/XMODEM mod 16384), for keys without a hash tag.
fn slot(key: &str) -> usize {
    let mut crc: u16 = 0;
    for &b in key.as_bytes() {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc as usize % 16384
}

/// Account keys that all live in different shards.
fn account_keys() -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    let mut shards_used = Vec::new();
    for i in 0.. {
        let key = format!("acct:{i}");
        let shard = slot(&key) % SHARDS;
        if !shards_used.contains(&shard) {
            shards_used.push(shard);
            keys.push(key);
            if keys.len() == ACCOUNTS {
                break;
            }
        }
    }
    keys
}

/// A minimal RESP reader: integers, bulks and arrays of them, as strings.
fn parse(reply: &[u8]) -> Vec<Option<String>> {
    fn line(r: &[u8], pos: &mut usize) -> String {
        let end = r[*pos..].windows(2).position(|w| w == b"\r\n").expect("line end") + *pos;
        let s = String::from_utf8_lossy(&r[*pos..end]).into_owned();
        *pos = end + 2;
        s
    }
    fn value(r: &[u8], pos: &mut usize, out: &mut Vec<Option<String>>) {
        let kind = r[*pos];
        *pos += 1;
        let head = line(r, pos);
        match kind {
            b':' | b'+' => out.push(Some(head)),
            b'$' if head == "-1" => out.push(None),
            b'$' => {
                let len: usize = head.parse().expect("bulk length");
                out.push(Some(String::from_utf8_lossy(&r[*pos..*pos + len]).into_owned()));
                *pos += len + 2;
            }
            b'*' if head == "-1" => out.push(None),
            b'*' => {
                for _ in 0..head.parse::<usize>().expect("array length") {
                    value(r, pos, out);
                }
            }
            _ => panic!("unexpected reply {:?}", String::from_utf8_lossy(r)),
        }
    }
    let mut out = Vec::new();
    value(reply, &mut 0, &mut out);
    out
}

fn total(values: &[Option<String>]) -> i64 {
    values.iter().map(|v| v.as_deref().expect("balance").parse::<i64>().expect("integer balance")).sum()
}

const TRANSFER_SCRIPT: &str = "\
local amount = tonumber(ARGV[1]) \
local from = tonumber(redis.call('GET', KEYS[1])) \
if from < amount then return 0 end \
redis.call('DECRBY', KEYS[1], amount) \
local spin = 0 for i = 1, 200 do spin = spin + i end \
redis.call('INCRBY', KEYS[2], amount) \
return 1";

const SUM_SCRIPT: &str = "\
local sum = 0 \
for _, k in ipairs(KEYS) do sum = sum + tonumber(redis.call('GET', k)) end \
return sum";

const LIBRARY: &str = "#!lua name=bank\n\
redis.register_function('move', function(keys, args) \
  redis.call('DECRBY', keys[1], args[1]) \
  redis.call('INCRBY', keys[2], args[1]) \
  return 1 \
end)";

/// Styles of transfer, chosen in turn by each mover.
const STYLES: usize = 5;

/// One transfer of `amount` from `from` to `to` in the given style; false when the script
/// found too little money and moved nothing.
fn transfer(c: &mut RawClient, style: usize, sha: &str, from: &str, to: &str, amount: i64) -> bool {
    let amount_s = amount.to_string();
    match style {
        0 => {
            // Reads between the two writes widen the window a non-atomic EXEC would open.
            c.send(&["MULTI"]);
            c.send(&["DECRBY", from, &amount_s]);
            for _ in 0..WINDOW_READS {
                c.send(&["GET", to]);
            }
            c.send(&["INCRBY", to, &amount_s]);
            c.send(&["EXEC"]);
            assert_eq!(c.read_reply(), b"+OK\r\n");
            for _ in 0..WINDOW_READS + 2 {
                assert_eq!(c.read_reply(), b"+QUEUED\r\n");
            }
            let exec = parse(&c.read_reply());
            assert_eq!(exec.len(), WINDOW_READS + 2, "{exec:?}");
            true
        }
        1 | 4 => {
            let r = if style == 1 {
                c.call(&["EVAL", TRANSFER_SCRIPT, "2", from, to, &amount_s])
            } else {
                c.call(&["EVALSHA", sha, "2", from, to, &amount_s])
            };
            assert!(r == b":1\r\n" || r == b":0\r\n", "{:?}", String::from_utf8_lossy(&r));
            r == b":1\r\n"
        }
        2 => {
            let r = c.call(&["FCALL", "move", "2", from, to, &amount_s]);
            assert_eq!(r, b":1\r\n");
            true
        }
        _ => loop {
            // Optimistic: read, then write only if nobody touched the accounts meanwhile.
            assert_eq!(c.call(&["WATCH", from, to]), b"+OK\r\n");
            let balances = parse(&c.call(&["MGET", from, to]));
            let (a, b) = (total(&balances[..1]), total(&balances[1..]));
            c.send(&["MULTI"]);
            c.send(&["SET", from, &(a - amount).to_string()]);
            c.send(&["SET", to, &(b + amount).to_string()]);
            c.send(&["EXEC"]);
            assert_eq!(c.read_reply(), b"+OK\r\n");
            assert_eq!(c.read_reply(), b"+QUEUED\r\n");
            assert_eq!(c.read_reply(), b"+QUEUED\r\n");
            let exec = c.read_reply();
            if exec != b"*-1\r\n" {
                assert_eq!(exec, b"*2\r\n+OK\r\n+OK\r\n");
                break true;
            }
        },
    }
}

#[test]
fn transfers_never_change_the_total_on_two_threads() {
    transfers_never_change_the_total("2");
}

#[test]
fn transfers_never_change_the_total_on_four_threads() {
    transfers_never_change_the_total("4");
}

fn transfers_never_change_the_total(threads: &str) {
    let server = start_quince(QUINCE, &["--threads", threads, "--shards", &SHARDS.to_string()]);
    let port = server.port;
    let keys = account_keys();
    let mut admin = server.client();
    for key in &keys {
        assert_eq!(admin.call(&["SET", key, &INITIAL.to_string()]), b"+OK\r\n");
    }
    assert_eq!(admin.call(&["FUNCTION", "LOAD", LIBRARY]), b"$4\r\nbank\r\n");
    let loaded = admin.call(&["SCRIPT", "LOAD", TRANSFER_SCRIPT]);
    let sha = String::from_utf8(loaded[5..45].to_vec()).expect("a sha1");
    let expected = INITIAL * ACCOUNTS as i64;
    let stop = Arc::new(AtomicBool::new(false));
    let checks = Arc::new(AtomicU64::new(0));
    let start = Instant::now();

    let mut movers = Vec::new();
    for m in 0..8usize {
        let (keys, sha) = (keys.clone(), sha.clone());
        movers.push(thread::spawn(move || {
            let mut c = RawClient::connect(port);
            let mut seed = m as u64 * 7919 + 1;
            // What this mover's transfers did to each account.
            let mut moved = [0i64; ACCOUNTS];
            for n in 0..TRANSFERS_MAX {
                if start.elapsed() > RUN_TIME_MAX {
                    break;
                }
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let from = (seed >> 33) as usize % ACCOUNTS;
                let to = (from + 1 + (seed >> 40) as usize % (ACCOUNTS - 1)) % ACCOUNTS;
                let amount = 1 + (seed >> 50) as i64 % 20;
                if transfer(&mut c, (m + n) % STYLES, &sha, &keys[from], &keys[to], amount) {
                    moved[from] -= amount;
                    moved[to] += amount;
                }
            }
            moved
        }));
    }

    let mut checkers = Vec::new();
    for style in 0..3usize {
        let (keys, stop, checks) = (keys.clone(), stop.clone(), checks.clone());
        checkers.push(thread::spawn(move || {
            let mut c = RawClient::connect(port);
            let key_refs: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
            while !stop.load(Ordering::SeqCst) {
                let seen = match style {
                    0 => {
                        c.send(&["MULTI"]);
                        for key in &key_refs {
                            c.send(&["GET", key]);
                        }
                        c.send(&["EXEC"]);
                        assert_eq!(c.read_reply(), b"+OK\r\n");
                        for _ in &key_refs {
                            assert_eq!(c.read_reply(), b"+QUEUED\r\n");
                        }
                        total(&parse(&c.read_reply()))
                    }
                    1 => {
                        let mut args = vec!["MGET"];
                        args.extend(&key_refs);
                        total(&parse(&c.call(&args)))
                    }
                    _ => {
                        let mut args = vec!["EVAL", SUM_SCRIPT, "8"];
                        args.extend(&key_refs);
                        total(&parse(&c.call(&args)))
                    }
                };
                assert_eq!(seen, expected, "checker {style} saw a transfer half done");
                checks.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }

    let mut should_hold = [INITIAL; ACCOUNTS];
    for mover in movers {
        let moved = mover.join().expect("mover");
        for (balance, delta) in should_hold.iter_mut().zip(moved) {
            *balance += delta;
        }
    }
    stop.store(true, Ordering::SeqCst);
    for checker in checkers {
        checker.join().expect("checker");
    }
    let mut args = vec!["MGET"];
    args.extend(keys.iter().map(|k| k.as_str()));
    let finals = parse(&admin.call(&args));
    assert_eq!(total(&finals), expected);
    let finals_n: Vec<i64> = finals.iter().map(|v| v.as_deref().unwrap_or("0").parse().unwrap()).collect();
    assert_eq!(finals_n, should_hold, "an update was lost or applied twice");
    assert!(finals.iter().any(|v| v.as_deref() != Some("1000")), "money moved: {finals:?}");
    assert!(checks.load(Ordering::Relaxed) > 50, "the checkers ran: {}", checks.load(Ordering::Relaxed));
}
