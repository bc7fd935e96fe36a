//! Differential test of write effects: a fixed script covering every command that Redis
//! 7.0 rewrites for the append-only file runs against a real redis-server (AOF on,
//! `appendfsync always`) and against the quince engine in-process with a recorder as its
//! persistence layer. After each step, the commands Redis appended to its incr AOF file are
//! compared, one by one, with the effects quince recorded for the same step: same database,
//! same command, same arguments, MULTI/EXEC in the same places. Absolute times (13-digit
//! Unix ms, stream IDs built on them) are masked; so are the members of steps whose choice
//! is random (SPOP), of which only the shape is compared.
//!
//! Skipped with a message when redis-server is missing; fails then if QUINCE_REQUIRE_REDIS=1.
//! `EFFECTS_SHOW=1` prints what Redis logged for each step.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quince_engine::persistence::{Effects, Persistence};
use quince_engine::{Client, Engine, EngineOptions, Reply, ReplyBuilder};
use quince_resp::{Decoded, RequestDecoder};
use quince_test_util::{start_redis, RawClient};

/// One logged command: database, arguments. MULTI and EXEC appear as commands too.
type Logged = (usize, Vec<Vec<u8>>);

/// Quince's side: keeps what the engine hands over, flattened like an AOF.
struct Recorder {
    log: Mutex<Vec<Logged>>,
}

impl Persistence for Recorder {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn wants_effects(&self) -> bool {
        true
    }

    fn feed(&self, effects: &Effects) {
        let mut log = self.log.lock().unwrap();
        let ops: Vec<Logged> = effects.ops().map(|(db, resp)| (db, decode_one(resp))).collect();
        if effects.needs_wrap() {
            let first_db = effects.all_ops().next().map_or(0, |(db, _, _)| db);
            log.push((first_db, vec![b"MULTI".to_vec()]));
        }
        let last_db = ops.last().map(|(db, _)| *db).unwrap_or(0);
        log.extend(ops);
        if effects.needs_wrap() {
            log.push((last_db, vec![b"EXEC".to_vec()]));
        }
    }
}

fn decode_one(resp: &[u8]) -> Vec<Vec<u8>> {
    let mut decoder = RequestDecoder::new(quince_resp::DEFAULT_PROTO_MAX_BULK_LEN);
    assert_eq!(decoder.decode(resp), Ok(Decoded::Request { len: resp.len() }));
    decoder.args(resp).map(|a| a.to_vec()).collect()
}

/// Every command of an AOF file, with the database its SELECTs put it in (SELECTs dropped).
fn parse_aof(bytes: &[u8]) -> Vec<Logged> {
    let mut commands = Vec::new();
    let mut db = 0;
    let mut at = 0;
    while at < bytes.len() {
        let mut decoder = RequestDecoder::new(quince_resp::DEFAULT_PROTO_MAX_BULK_LEN);
        let Ok(Decoded::Request { len }) = decoder.decode(&bytes[at..]) else { break };
        let args: Vec<Vec<u8>> = decoder.args(&bytes[at..at + len]).map(|a| a.to_vec()).collect();
        at += len;
        if args[0].eq_ignore_ascii_case(b"select") {
            db = String::from_utf8_lossy(&args[1]).parse().unwrap();
            continue;
        }
        commands.push((db, args));
    }
    commands
}

/// One step of the script.
struct Step {
    /// Which connection/client runs it (1 and 2 are for blocking commands).
    client: usize,
    args: Vec<String>,
    /// Send without waiting for the reply (a command that blocks); the reply is read later
    /// by a `Collect` on the same client.
    blocks: bool,
    /// Read the pending reply of `client` (after the step that served it).
    collect: bool,
    /// The logged members are random (SPOP): compare only command, key and argument count.
    random: bool,
    /// Wait this long first (let keys expire).
    sleep_ms: u64,
    /// Runs only against servers (DUMP/RESTORE belong to the persistence layer); an argument
    /// `@dump:<key>` stands for that server's DUMP of the key.
    servers_only: bool,
}

fn cmd(args: &[&str]) -> Step {
    Step {
        client: 0,
        args: args.iter().map(|a| a.to_string()).collect(),
        blocks: false,
        collect: false,
        random: false,
        sleep_ms: 0,
        servers_only: false,
    }
}

impl Step {
    fn on(mut self, client: usize) -> Self {
        self.client = client;
        self
    }
    fn blocking(mut self) -> Self {
        self.blocks = true;
        self
    }
    fn random(mut self) -> Self {
        self.random = true;
        self
    }
    fn after_ms(mut self, ms: u64) -> Self {
        self.sleep_ms = ms;
        self
    }
    fn servers_only(mut self) -> Self {
        self.servers_only = true;
        self
    }
}

fn collect(client: usize) -> Step {
    Step { collect: true, ..cmd(&[]).on(client) }
}

/// Masks what depends on the clock: 13-digit Unix ms and stream IDs built on them.
fn mask(arg: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(arg);
    let (ms, seq) = text.split_once('-').unwrap_or((&text, ""));
    let is_ms = ms.len() == 13 && ms.bytes().all(|b| b.is_ascii_digit());
    if is_ms && (seq.is_empty() || seq.bytes().all(|b| b.is_ascii_digit())) {
        return if seq.is_empty() { b"<ms>".to_vec() } else { b"<ms>-<seq>".to_vec() };
    }
    arg.to_vec()
}

/// The logged commands as text; for a random step (SPOP's members, the keys RANDOMKEY or
/// SCAN happen to meet first) the arguments past the key are masked and the order is not
/// compared (the lines are sorted: a MULTI/EXEC pair still shows).
fn shape(logged: &[Logged], random: bool) -> Vec<String> {
    let mut lines: Vec<String> = logged
        .iter()
        .map(|(db, args)| {
            let restore = args[0].eq_ignore_ascii_case(b"restore");
            let shown: Vec<String> = args
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    if i == 0 {
                        String::from_utf8_lossy(a).to_uppercase()
                    } else if restore && i == 3 {
                        "<payload>".to_string()
                    } else if random && i >= 2 {
                        "<random>".to_string()
                    } else {
                        String::from_utf8_lossy(&mask(a)).into_owned()
                    }
                })
                .collect();
            format!("db{db}: {}", shown.join(" "))
        })
        .collect();
    if random {
        lines.sort();
    }
    lines
}

struct Quince {
    engine: Engine,
    recorder: Arc<Recorder>,
    clients: Vec<Client>,
}

impl Quince {
    fn new() -> Self {
        let mut config = quince_engine::Config::default();
        config.set("stream-node-max-entries", &["2".into()]).unwrap();
        let engine = Engine::new(EngineOptions { config, ..EngineOptions::default() });
        let recorder = Arc::new(Recorder { log: Mutex::new(Vec::new()) });
        engine.set_persistence(recorder.clone());
        let clients = (0..3).map(|_| engine.new_client()).collect();
        Self { engine, recorder, clients }
    }

    fn run(&mut self, step: &Step) -> Option<Reply> {
        let client = &mut self.clients[step.client];
        if step.collect {
            let reply = self.engine.blocked_reply(client);
            assert!(reply.is_some(), "quince: client {} was served", step.client);
            return None;
        }
        let args: Vec<&[u8]> = step.args.iter().map(|a| a.as_bytes()).collect();
        let mut out = ReplyBuilder::new();
        self.engine.execute(client, &args, &mut out);
        if step.blocks {
            assert!(client.blocked.is_some(), "quince: {:?} blocks", step.args);
        }
        out.take().into_iter().next()
    }

    fn take_log(&self) -> Vec<Logged> {
        std::mem::take(&mut *self.recorder.log.lock().unwrap())
    }
}

/// A server writing an append-only file (redis-server, or quince-server with its AOF).
struct Redis {
    _server: quince_test_util::ServerProcess,
    clients: Vec<RawClient>,
    incr: PathBuf,
    seen: usize,
}

/// AOF on, fsync before every reply, active expiry off (see `Redis::attach`).
fn aof_args(dir: &std::path::Path) -> Vec<String> {
    let dir = dir.to_str().unwrap().to_string();
    ["--appendonly", "yes", "--appendfsync", "always", "--dir", &dir]
        .into_iter()
        .chain(["--enable-debug-command", "yes", "--stream-node-max-entries", "2", "--aof-use-rdb-preamble", "no"])
        .map(str::to_string)
        .collect()
}

impl Redis {
    fn start(dir: &std::path::Path) -> Option<Self> {
        let args = aof_args(dir);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Some(Self::attach(start_redis(&args)?, dir))
    }

    fn start_quince(dir: &std::path::Path) -> Self {
        let args = aof_args(dir);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Self::attach(quince_test_util::start_quince(env!("CARGO_BIN_EXE_quince-server"), &args), dir)
    }

    fn attach(server: quince_test_util::ServerProcess, dir: &std::path::Path) -> Self {
        let mut clients: Vec<RawClient> = (0..3).map(|_| RawClient::connect(server.port)).collect();
        // The server answers -LOADING until its append-only file is open.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while clients[0].call(&["PING"]).starts_with(b"-LOADING") {
            assert!(std::time::Instant::now() < deadline, "the server kept loading");
            std::thread::sleep(Duration::from_millis(10));
        }
        // Keys expire only when a command finds them (as in the in-process engine).
        clients[0].call(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
        let incr = dir.join("appendonlydir").join("appendonly.aof.1.incr.aof");
        Self { _server: server, clients, incr, seen: 0 }
    }

    /// Runs the step; true if Redis replied with an error.
    fn run(&mut self, step: &Step) -> bool {
        let client = &mut self.clients[step.client];
        if step.collect {
            client.read_reply();
        } else if step.blocks {
            client.send(&step.args);
            // Let the server block it before the next step runs.
            std::thread::sleep(Duration::from_millis(50));
        } else {
            let mut args: Vec<Vec<u8>> = step.args.iter().map(|a| a.as_bytes().to_vec()).collect();
            for arg in &mut args {
                if let Some(key) = arg.strip_prefix(b"@dump:") {
                    *arg = bulk_payload(&client.call(&[&b"DUMP"[..], key]));
                }
            }
            return client.call(&args).starts_with(b"-");
        }
        false
    }

    /// Commands appended since the last call.
    fn take_log(&mut self) -> Vec<Logged> {
        let bytes = std::fs::read(&self.incr).unwrap_or_default();
        let all = parse_aof(&bytes);
        let new = all[self.seen..].to_vec();
        self.seen = all.len();
        new
    }
}

fn script() -> Vec<Step> {
    let future_s = "4102444800"; // 2100-01-01
    let future_ms = "4102444800000";
    let function = "#!lua name=effectslib\nredis.register_function('setit', function(keys, args) \
                    return redis.call('SET', keys[1], args[1]) end)";
    let mut steps = vec![
        // Strings: relative and absolute expiries become PXAT; GET is dropped.
        cmd(&["SET", "k", "v", "EX", "100"]),
        cmd(&["SET", "k", "v", "PX", "100000", "XX"]),
        cmd(&["SET", "k", "v", "EX", "100", "GET"]),
        cmd(&["SET", "k", "v2", "GET"]),
        cmd(&["SET", "k", "v3", "NX"]),
        cmd(&["SET", "k", "v", "EXAT", future_s]),
        cmd(&["SET", "k", "v", "PXAT", future_ms, "GET"]),
        cmd(&["SET", "k", "v", "KEEPTTL"]),
        cmd(&["SETEX", "k", "100", "v"]),
        cmd(&["PSETEX", "k", "100000", "v"]),
        cmd(&["GETSET", "k", "w"]),
        cmd(&["GETEX", "k"]),
        cmd(&["GETEX", "k", "EX", "100"]),
        cmd(&["GETEX", "k", "PX", "100000"]),
        cmd(&["GETEX", "k", "EXAT", future_s]),
        cmd(&["GETEX", "k", "PERSIST"]),
        cmd(&["GETEX", "k", "PERSIST"]),
        cmd(&["GETEX", "k", "PXAT", "1"]),
        cmd(&["SET", "k", "v"]),
        cmd(&["GETDEL", "k"]),
        cmd(&["GETDEL", "k"]),
        cmd(&["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"]),
        cmd(&["SET", "k", "v"]),
        cmd(&["GETDEL", "k"]),
        cmd(&["CONFIG", "SET", "lazyfree-lazy-user-del", "no"]),
        cmd(&["INCRBYFLOAT", "f", "1.5"]),
        cmd(&["INCRBYFLOAT", "f", "0.1"]),
        cmd(&["SET", "k", "v", "PXAT", "1"]),
        // The key SET above made already expired: GET deletes it.
        cmd(&["GET", "k"]),
        cmd(&["SET", "e", "v", "PX", "1"]),
        cmd(&["SET", "e", "w"]).after_ms(20),
        // RANDOMKEY in a database holding only an expired key deletes it.
        cmd(&["SELECT", "2"]),
        cmd(&["SET", "e", "v", "PX", "1"]),
        cmd(&["RANDOMKEY"]).after_ms(20),
        // SCAN and RANDOMKEY log the keys they find expired as plain DELs, even after a
        // command that logged nothing (SELECT), never in MULTI/EXEC.
        cmd(&["SELECT", "3"]),
        cmd(&["SET", "a", "v", "PX", "1"]),
        cmd(&["SET", "b", "v", "PX", "1"]),
        cmd(&["SELECT", "3"]).after_ms(20),
        cmd(&["SCAN", "0", "COUNT", "1000"]).random(),
        cmd(&["SET", "a", "v", "PX", "1"]),
        cmd(&["SET", "b", "v", "PX", "1"]),
        cmd(&["SELECT", "3"]).after_ms(20),
        cmd(&["RANDOMKEY"]).random(),
        cmd(&["SELECT", "0"]),
        // The EXPIRE family becomes PEXPIREAT (options kept), or DEL/UNLINK when past.
        cmd(&["SET", "k", "v"]),
        cmd(&["EXPIRE", "k", "100"]),
        cmd(&["PEXPIRE", "k", "100000", "XX"]),
        cmd(&["EXPIREAT", "k", future_s, "GT"]),
        cmd(&["PEXPIREAT", "k", future_ms, "NX"]),
        cmd(&["pexpireat", "k", future_ms]),
        cmd(&["PERSIST", "k"]),
        cmd(&["PERSIST", "k"]),
        cmd(&["EXPIRE", "k", "-1"]),
        cmd(&["SET", "k", "v"]),
        cmd(&["CONFIG", "SET", "lazyfree-lazy-expire", "yes"]),
        cmd(&["PEXPIREAT", "k", "1"]),
        cmd(&["SET", "e", "v", "PX", "1"]),
        cmd(&["GET", "e"]).after_ms(20),
        cmd(&["CONFIG", "SET", "lazyfree-lazy-expire", "no"]),
        cmd(&["EXPIRE", "missing", "100"]),
    ];
    // Reads that find a key expired delete it, and Redis logs that deletion.
    for read in [
        &["TTL", "e"][..],
        &["PTTL", "e"],
        &["EXPIRETIME", "e"],
        &["TYPE", "e"],
        &["EXISTS", "e"],
        &["STRLEN", "e"],
        &["MGET", "e", "f"],
        &["TOUCH", "e"],
        &["OBJECT", "ENCODING", "e"],
        &["GETRANGE", "e", "0", "1"],
        &["SCAN", "0", "MATCH", "e", "COUNT", "1000"],
        &["SCAN", "0", "COUNT", "1000", "TYPE", "string"],
        &["KEYS", "e"],
        &["DBSIZE"],
        &["RENAME", "e", "e2"],
        &["APPEND", "e", "x"],
        &["INCR", "e"],
    ] {
        steps.push(cmd(&["SET", "e", "1", "PX", "1"]));
        steps.push(cmd(read).after_ms(20));
        steps.push(cmd(&["DEL", "e", "e2"]));
    }
    steps.extend([
        // Hashes.
        cmd(&["HINCRBYFLOAT", "h", "f", "2.5"]),
        cmd(&["HINCRBYFLOAT", "h", "f", "1e2"]),
        // Sets: SPOP becomes SREMs (wrapped when several) or DEL.
        cmd(&["SADD", "s", "1", "2", "3", "4", "5", "6", "7", "8"]),
        cmd(&["SPOP", "s"]).random(),
        cmd(&["SPOP", "s", "2"]).random(),
        cmd(&["SPOP", "s", "4"]).random(),
        cmd(&["SPOP", "s", "0"]),
        cmd(&["SPOP", "s", "10"]),
        cmd(&["SADD", "s", "a", "b", "c"]),
        cmd(&["SPOP", "s", "3"]),
        // Most of the set popped: Redis draws the members that stay instead.
        cmd(&["SADD", "s", "1", "2", "3", "4", "5", "6", "7", "8"]),
        cmd(&["SPOP", "s", "7"]).random(),
        cmd(&["DEL", "s"]),
        cmd(&["SADD", "s", "a", "b", "c"]),
        cmd(&["SRANDMEMBER", "s", "2"]),
        cmd(&["SMOVE", "s", "s2", "a"]),
        cmd(&["SINTERCARD", "1", "s"]),
        // Lists: blocking pops logged as their non-blocking forms.
        cmd(&["RPUSH", "l", "a", "b", "c", "d", "e", "f", "g", "h"]),
        cmd(&["BLPOP", "l", "0"]),
        cmd(&["BRPOP", "nothing", "l", "0"]),
        cmd(&["LMPOP", "1", "l", "LEFT"]),
        cmd(&["LMPOP", "2", "nothing", "l", "RIGHT", "COUNT", "2"]),
        cmd(&["BLMPOP", "0", "1", "l", "LEFT", "COUNT", "1"]),
        cmd(&["BLMOVE", "l", "l2", "left", "RIGHT", "0"]),
        cmd(&["BRPOPLPUSH", "l", "l2", "0"]),
        cmd(&["LMPOP", "1", "l", "LEFT", "COUNT", "10"]),
        cmd(&["LPOS", "l2", "a"]),
        // Served blocked clients.
        cmd(&["BLPOP", "q", "0"]).on(1).blocking(),
        cmd(&["RPUSH", "q", "x"]),
        collect(1),
        cmd(&["BRPOP", "q", "0"]).on(1).blocking(),
        cmd(&["RPUSH", "q", "z"]),
        collect(1),
        cmd(&["BLMOVE", "q", "q2", "LEFT", "RIGHT", "0"]).on(1).blocking(),
        cmd(&["RPUSH", "q", "x"]),
        collect(1),
        cmd(&["BRPOPLPUSH", "q", "q2", "0"]).on(1).blocking(),
        cmd(&["LPUSH", "q", "x"]),
        collect(1),
        cmd(&["BLMPOP", "0", "2", "q3", "q", "RIGHT", "COUNT", "5"]).on(1).blocking(),
        cmd(&["RPUSH", "q", "a", "b"]),
        collect(1),
        cmd(&["BZPOPMIN", "zq", "0"]).on(1).blocking(),
        cmd(&["BZPOPMAX", "zq", "0"]).on(2).blocking(),
        cmd(&["ZADD", "zq", "1", "a", "2", "b", "3", "c"]),
        collect(1),
        collect(2),
        cmd(&["BZMPOP", "0", "1", "zq2", "MAX", "COUNT", "3"]).on(1).blocking(),
        cmd(&["ZADD", "zq2", "1", "a", "2", "b"]),
        collect(1),
        // Sorted sets.
        cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"]),
        cmd(&["BZPOPMIN", "z", "0"]),
        cmd(&["BZPOPMAX", "nothing", "z", "0"]),
        cmd(&["ZMPOP", "1", "z", "MIN"]),
        cmd(&["ZMPOP", "1", "z", "MAX", "COUNT", "1"]),
        cmd(&["BZMPOP", "0", "1", "z", "MIN", "COUNT", "5"]),
        cmd(&["ZRANDMEMBER", "z", "2"]),
        cmd(&["GEOADD", "geo", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"]),
        cmd(&["GEOADD", "geo", "CH", "XX", "13.361389", "38.115556", "Palermo"]),
        cmd(&["GEOADD", "geo", "NX", "13.5", "38.1", "Palermo"]),
        // Streams: IDs and approximate trims made exact.
        cmd(&["XADD", "x", "*", "f", "1"]),
        cmd(&["XADD", "x", "*", "f", "2"]),
        cmd(&["XADD", "x", "*", "f", "3"]),
        cmd(&["XADD", "x", "*", "f", "4"]),
        cmd(&["XADD", "x", "MAXLEN", "~", "2", "*", "f", "5"]),
        cmd(&["XADD", "x", "MAXLEN", "=", "10", "*", "f", "6"]),
        cmd(&["XADD", "x", "MAXLEN", "~", "1", "LIMIT", "1", "*", "f", "7"]),
        cmd(&["XADD", "y", "5-*", "f", "1"]),
        cmd(&["XADD", "y", "5-*", "f", "2"]),
        cmd(&["XADD", "y", "7-3", "f", "3"]),
        cmd(&["XADD", "y", "MINID", "~", "6", "8-*", "f", "4"]),
        cmd(&["XADD", "y", "9-1", "f", "5"]),
        cmd(&["XADD", "y", "9-2", "f", "6"]),
        cmd(&["XTRIM", "y", "MINID", "~", "9-2"]),
        cmd(&["XTRIM", "y", "MAXLEN", "~", "0"]),
        cmd(&["XTRIM", "y", "MAXLEN", "0"]),
        cmd(&["XADD", "nope", "NOMKSTREAM", "*", "f", "1"]),
        // Consumer groups: deliveries become XCLAIMs, NOACK reads XGROUP SETID.
        cmd(&["XADD", "g", "1-1", "f", "1"]),
        cmd(&["XADD", "g", "1-2", "f", "2"]),
        cmd(&["XADD", "g", "1-3", "f", "3"]),
        cmd(&["XADD", "g", "1-4", "f", "4"]),
        cmd(&["XADD", "g", "1-5", "f", "5"]),
        cmd(&["XGROUP", "CREATE", "g", "grp", "0"]),
        cmd(&["XGROUP", "CREATE", "g", "late", "$"]),
        cmd(&["XGROUP", "CREATE", "mk", "grp", "$", "MKSTREAM"]),
        cmd(&["XREADGROUP", "GROUP", "grp", "c1", "COUNT", "2", "STREAMS", "g", ">"]),
        cmd(&["XREADGROUP", "GROUP", "grp", "c2", "COUNT", "1", "NOACK", "STREAMS", "g", ">"]),
        cmd(&["XREADGROUP", "GROUP", "grp", "c2", "COUNT", "1", "NOACK", "STREAMS", "g", ">"]),
        cmd(&["XREADGROUP", "GROUP", "grp", "c1", "STREAMS", "g", "0"]),
        cmd(&["XREADGROUP", "GROUP", "grp", "c1", "STREAMS", "g", ">"]),
        cmd(&["XREADGROUP", "GROUP", "grp", "c1", "STREAMS", "g", ">"]),
        cmd(&["XCLAIM", "g", "grp", "c3", "0", "1-1", "1-2"]),
        cmd(&["XCLAIM", "g", "grp", "c3", "0", "1-5", "IDLE", "5000", "RETRYCOUNT", "7", "JUSTID"]),
        cmd(&["XCLAIM", "g", "grp", "c3", "0", "1-9", "LASTID", "2-0"]),
        cmd(&["XDEL", "g", "1-2"]),
        cmd(&["XCLAIM", "g", "grp", "c3", "0", "1-2", "1-5"]),
        cmd(&["XDEL", "g", "1-5"]),
        cmd(&["XAUTOCLAIM", "g", "grp", "c4", "0", "0-0", "COUNT", "10"]),
        cmd(&["XAUTOCLAIM", "g", "grp", "c4", "0", "0-0", "JUSTID"]),
        cmd(&["XACK", "g", "grp", "1-1"]),
        cmd(&["XREADGROUP", "GROUP", "grp", "c5", "BLOCK", "0", "STREAMS", "g", ">"]).on(1).blocking(),
        cmd(&["XADD", "g", "3-1", "f", "6"]),
        collect(1),
        cmd(&["XREADGROUP", "GROUP", "grp", "c6", "NOACK", "BLOCK", "0", "STREAMS", "g", ">"]).on(1).blocking(),
        cmd(&["XADD", "g", "3-2", "f", "7"]),
        collect(1),
        cmd(&["XGROUP", "SETID", "g", "grp", "$"]),
        cmd(&["XGROUP", "CREATECONSUMER", "g", "grp", "c9"]),
        cmd(&["XGROUP", "DELCONSUMER", "g", "grp", "c9"]),
        cmd(&["XSETID", "g", "9-9"]),
        cmd(&["XGROUP", "DESTROY", "g", "late"]),
        // Scripts and functions: only the commands they ran, wrapped when several.
        cmd(&["EVAL", "return redis.call('SET', KEYS[1], 'x', 'EX', 100)", "1", "k"]),
        cmd(&["EVAL", "redis.call('INCRBYFLOAT', KEYS[1], 1) return redis.call('RPUSH', KEYS[2], 'a')", "2", "f", "l"]),
        cmd(&["EVAL", "return redis.call('GET', KEYS[1])", "1", "k"]),
        cmd(&["EVAL", "return redis.call('SPOP', KEYS[1])", "1", "s"]).random(),
        cmd(&["EVAL", "redis.call('SET', KEYS[1], 'a') return redis.call('INCR', KEYS[1])", "1", "ek"]),
        cmd(&["EVAL", "redis.call('DEL', KEYS[1]) return redis.call('DEL', KEYS[1])", "1", "ek"]),
        cmd(&["MULTI"]),
        cmd(&["EVAL", "return redis.call('SET', KEYS[1], 'b', 'PX', 100000)", "1", "ek"]),
        cmd(&["SET", "ek2", "c"]),
        cmd(&["EXEC"]),
        cmd(&["MULTI"]),
        cmd(&["EVAL", "return redis.call('SET', KEYS[1], 'b')", "1", "ek"]),
        cmd(&["EXEC"]),
        cmd(&["SCRIPT", "LOAD", "return 1"]),
        cmd(&["SCRIPT", "FLUSH"]),
        cmd(&["FUNCTION", "LOAD", function]),
        cmd(&["FCALL", "setit", "1", "k", "fv"]),
        cmd(&["FUNCTION", "DELETE", "effectslib"]),
        cmd(&["FUNCTION", "FLUSH"]),
        // Transactions.
        cmd(&["MULTI"]),
        cmd(&["SET", "a", "1", "PX", "100000"]),
        cmd(&["INCRBYFLOAT", "b", "2"]),
        cmd(&["EXEC"]),
        cmd(&["MULTI"]),
        cmd(&["GET", "a"]),
        cmd(&["SPOP", "nothing"]),
        cmd(&["EXEC"]),
        cmd(&["MULTI"]),
        cmd(&["RPUSH", "tl", "a"]),
        cmd(&["EXEC"]),
        // Writes that change nothing are not logged; those that do, as themselves.
        cmd(&["MULTI"]),
        cmd(&["SELECT", "1"]),
        cmd(&["SET", "a", "b"]),
        cmd(&["SELECT", "0"]),
        cmd(&["SET", "c", "d"]),
        cmd(&["BLPOP", "nothing", "0"]),
        cmd(&["EXEC"]),
        cmd(&["SELECT", "0"]),
        cmd(&["MULTI"]),
        cmd(&["RPUSH", "ml", "a", "b"]),
        cmd(&["BLPOP", "ml", "0"]),
        cmd(&["BLMOVE", "ml", "ml2", "RIGHT", "LEFT", "0"]),
        cmd(&["EXEC"]),
        cmd(&["EVAL", "redis.call('SELECT', 1) redis.call('SET', KEYS[1], 'x') return 1", "1", "k"]),
        cmd(&["SET", "k", "v"]),
        cmd(&["SETNX", "k", "v"]),
        cmd(&["MSETNX", "k", "v", "k9", "v"]),
        cmd(&["LPUSHX", "nolist", "a"]),
        cmd(&["HSET", "h2", "f", "v"]),
        cmd(&["HSETNX", "h2", "f", "v"]),
        cmd(&["HDEL", "h2", "nofield"]),
        cmd(&["HDEL", "h2", "f"]),
        cmd(&["SADD", "ss", "a"]),
        cmd(&["SADD", "ss", "a"]),
        cmd(&["SMOVE", "ss", "ss", "a"]),
        cmd(&["SREM", "ss", "b"]),
        cmd(&["SINTERSTORE", "dst", "nothing1", "nothing2"]),
        cmd(&["SINTERSTORE", "ss2", "ss", "ss"]),
        cmd(&["SINTERSTORE", "ss2", "nothing1", "ss"]),
        cmd(&["SUNIONSTORE", "ss3", "ss"]),
        cmd(&["SDIFFSTORE", "ss3", "ss", "ss"]),
        cmd(&["ZADD", "zz", "1", "a"]),
        cmd(&["ZADD", "zz", "1", "a"]),
        cmd(&["ZADD", "zz", "GT", "0", "a"]),
        cmd(&["ZADD", "zz", "INCR", "2", "a"]),
        cmd(&["ZINCRBY", "zz", "0", "a"]),
        cmd(&["ZREM", "zz", "nope"]),
        cmd(&["ZUNIONSTORE", "zd", "1", "nothing"]),
        cmd(&["ZUNIONSTORE", "zd", "1", "zz"]),
        cmd(&["ZINTERSTORE", "zd", "2", "zz", "nothing"]),
        cmd(&["ZRANGESTORE", "zd2", "zz", "0", "-1"]),
        cmd(&["ZRANGESTORE", "zd2", "zz", "5", "10"]),
        cmd(&["ZREMRANGEBYSCORE", "zz", "100", "200"]),
        cmd(&["GEOSEARCHSTORE", "gd", "geo", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"]),
        cmd(&["GEOSEARCHSTORE", "gd", "geo", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"]),
        cmd(&["GEORADIUS", "geo", "15", "37", "200", "km", "STORE", "gd2"]),
        cmd(&["SORT", "nothing", "STORE", "sd"]),
        cmd(&["SORT", "l2", "ALPHA", "STORE", "sd"]),
        cmd(&["SORT", "nothing", "STORE", "sd"]),
        cmd(&["RPUSH", "rl", "a", "b", "c", "b"]),
        cmd(&["LREM", "rl", "0", "x"]),
        cmd(&["LREM", "rl", "0", "b"]),
        cmd(&["LSET", "rl", "0", "z"]),
        cmd(&["LINSERT", "rl", "BEFORE", "nope", "y"]),
        cmd(&["LINSERT", "rl", "BEFORE", "z", "y"]),
        cmd(&["LTRIM", "rl", "0", "-1"]),
        cmd(&["LTRIM", "rl", "1", "0"]),
        cmd(&["LMOVE", "rl2", "rl2", "LEFT", "RIGHT"]),
        cmd(&["RPUSH", "rl2", "a"]),
        cmd(&["LMOVE", "rl2", "rl2", "LEFT", "RIGHT"]),
        cmd(&["SETRANGE", "sr", "0", ""]),
        cmd(&["SETRANGE", "sr", "2", "ab"]),
        cmd(&["SETBIT", "bits", "3", "1"]),
        cmd(&["SETBIT", "bits", "3", "1"]),
        cmd(&["BITFIELD", "bf", "INCRBY", "u8", "0", "300", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"]),
        cmd(&["BITOP", "AND", "bd", "nothing1", "nothing2"]),
        cmd(&["BITOP", "OR", "bd", "bits"]),
        cmd(&["BITOP", "AND", "bd", "nothing1"]),
        cmd(&["COPY", "bits", "bd"]),
        cmd(&["RENAME", "bits", "bits"]),
        cmd(&["RENAMENX", "bits", "bd"]),
        cmd(&["MOVE", "nothing", "1"]),
        cmd(&["EXPIRE", "bits", "100", "GT"]),
        cmd(&["EXPIRE", "bits", "100", "LT"]),
        cmd(&["EXPIRE", "bits", "200", "NX"]),
        cmd(&["INCRBYFLOAT", "bits2", "1"]),
        cmd(&["XADD", "xs", "1-1", "f", "v"]),
        cmd(&["XGROUP", "CREATE", "xs", "g", "0"]),
        cmd(&["XGROUP", "CREATECONSUMER", "xs", "g", "c"]),
        cmd(&["XGROUP", "CREATECONSUMER", "xs", "g", "c"]),
        cmd(&["XGROUP", "DELCONSUMER", "xs", "g", "nobody"]),
        cmd(&["XGROUP", "DESTROY", "xs", "nogroup"]),
        cmd(&["XACK", "xs", "g", "9-9"]),
        cmd(&["XDEL", "xs", "9-9"]),
        cmd(&["XTRIM", "xs", "MAXLEN", "5"]),
        cmd(&["XADD", "xs", "MAXLEN", "0", "2-1", "f", "v"]),
        cmd(&["XADD", "xs", "NOMKSTREAM", "MINID", "=", "0", "*", "f", "v"]),
        cmd(&["XSETID", "xs", "99-0"]),
        cmd(&["XGROUP", "SETID", "xs", "g", "0", "ENTRIESREAD", "0"]),
        cmd(&["XREADGROUP", "GROUP", "g", "c", "STREAMS", "xs", ">"]),
        cmd(&["BLPOP", "sw", "0"]).on(1).blocking(),
        cmd(&["SELECT", "1"]),
        cmd(&["RPUSH", "sw", "a", "b"]),
        cmd(&["SWAPDB", "0", "1"]),
        collect(1),
        cmd(&["SWAPDB", "0", "1"]),
        cmd(&["SELECT", "0"]),
        cmd(&["SWAPDB", "1", "1"]),
        // RESTORE: a relative TTL made absolute (ABSTTL), a past one a DEL of what it replaced.
        cmd(&["SET", "rsrc", "hello"]),
        cmd(&["RPUSH", "rlist", "a", "b"]),
        cmd(&["RESTORE", "r1", "0", "@dump:rsrc"]).servers_only(),
        cmd(&["RESTORE", "r1", "100000", "@dump:rlist", "REPLACE"]).servers_only(),
        cmd(&["RESTORE", "r2", "4102444800000", "@dump:rsrc", "ABSTTL", "IDLETIME", "10"]).servers_only(),
        cmd(&["RESTORE", "r1", "1", "@dump:rsrc", "REPLACE", "ABSTTL"]).servers_only(),
        cmd(&["RESTORE", "r3", "1", "@dump:rsrc", "ABSTTL"]).servers_only(),
        cmd(&["RESTORE", "r2", "0", "@dump:rsrc"]).servers_only(),
        cmd(&["DEL", "r1", "r2", "r3"]).servers_only(),
        cmd(&["FLUSHDB", "ASYNC"]),
        // Keyspace and databases.
        cmd(&["PUBLISH", "ch", "m"]),
        cmd(&["PFADD", "hll", "a", "b", "c"]),
        cmd(&["PFCOUNT", "hll"]),
        cmd(&["PFCOUNT", "hll"]),
        cmd(&["RENAME", "hll", "hll2"]),
        cmd(&["COPY", "hll2", "hll3"]),
        cmd(&["MOVE", "hll3", "1"]),
        cmd(&["SORT", "l2", "ALPHA", "STORE", "sorted"]),
        cmd(&["SELECT", "1"]),
        cmd(&["SET", "one", "1", "EX", "100"]),
        cmd(&["SWAPDB", "0", "1"]),
        cmd(&["FLUSHDB"]),
        cmd(&["SELECT", "0"]),
        cmd(&["FLUSHALL"]),
        cmd(&["FLUSHALL"]),
        cmd(&["SET", "last", "v"]),
    ]);
    steps
}

/// The bytes of a bulk string reply.
fn bulk_payload(reply: &[u8]) -> Vec<u8> {
    let header_end = reply.iter().position(|&b| b == b'\n').expect("a bulk reply") + 1;
    reply[header_end..reply.len() - 2].to_vec()
}

/// A fresh directory for one server's files.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("quince-effects-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The same script over the network: quince-server's own append-only file (written by the
/// persistence layer from these effects) must match Redis's, step by step.
#[test]
fn quince_server_aof_matches_redis() {
    let (redis_dir, quince_dir) = (temp_dir("redis-srv"), temp_dir("quince-srv"));
    let Some(mut redis) = Redis::start(&redis_dir) else { return };
    let mut quince = Redis::start_quince(&quince_dir);
    let mut mismatches = Vec::new();
    for (n, step) in script().iter().enumerate() {
        if step.sleep_ms > 0 {
            std::thread::sleep(Duration::from_millis(step.sleep_ms));
        }
        if redis.run(step) != quince.run(step) {
            mismatches.push(format!("step {n} {:?}: only one server replied with an error", step.args));
        }
        let (expected, got) = (shape(&redis.take_log(), step.random), shape(&quince.take_log(), step.random));
        if std::env::var("EFFECTS_SHOW").is_ok() {
            eprintln!("server {n} {:?} => {expected:?}", step.args);
        }
        if expected != got {
            mismatches.push(format!("step {n} {:?}:\n  redis:  {expected:?}\n  quince: {got:?}", step.args));
        }
    }
    drop((redis, quince));
    let _ = std::fs::remove_dir_all(&redis_dir);
    let _ = std::fs::remove_dir_all(&quince_dir);
    assert!(mismatches.is_empty(), "{} mismatches:\n{}", mismatches.len(), mismatches.join("\n"));
}

#[test]
fn aof_effects_match_redis() {
    let dir = temp_dir("in-process");
    let Some(mut redis) = Redis::start(&dir) else { return };
    let mut quince = Quince::new();
    let mut mismatches = Vec::new();
    for (n, step) in script().iter().enumerate().filter(|(_, step)| !step.servers_only) {
        if step.sleep_ms > 0 {
            std::thread::sleep(Duration::from_millis(step.sleep_ms));
        }
        let redis_failed = redis.run(step);
        let reply = quince.run(step);
        if let Some(Reply::Error(e)) = reply.as_ref().filter(|_| !redis_failed) {
            mismatches.push(format!("step {n} {:?}: quince replied {e}", step.args));
        }
        let (expected, got) = (shape(&redis.take_log(), step.random), shape(&quince.take_log(), step.random));
        if std::env::var("EFFECTS_SHOW").is_ok() {
            eprintln!("{n} {:?} => {expected:?}", step.args);
        }
        if expected != got {
            mismatches.push(format!("step {n} {:?}:\n  redis:  {expected:?}\n  quince: {got:?}", step.args));
        }
    }
    drop(redis);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(mismatches.is_empty(), "{} mismatches:\n{}", mismatches.len(), mismatches.join("\n"));
}
