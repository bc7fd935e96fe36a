//! Random Lua scripts against the sandbox (issue 24): EVAL_RO of the input as a script, or
//! of a script assembled from the input out of the fragments that broke sandboxes before
//! (unpack bounds, bytecode through load, metatables, raw writes to protected tables,
//! cjson/cmsgpack/struct/bit edges, deep and large replies). One engine and one Lua VM
//! serve every run, so a run that changed the sandbox shows in the checks after it: the
//! string library still works, no global leaked, the escape hatches are still absent.
//! Never a crash, a panic, or a changed sandbox. A watchdog kills scripts that run past
//! 200 ms (EVAL_RO: scripts cannot write, so they are always killable). Repetition counts
//! are bounded: a script that only allocates gigabytes stops the fuzzer, not the sandbox.
#![no_main]
use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use quince_engine::{Engine, EngineOptions};
use quince_resp::{Encoder, Protocol};

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<&'static Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let engine: &'static Engine = Box::leak(Box::new(Engine::new(EngineOptions::default())));
        std::thread::spawn(move || {
            let mut killer = engine.new_client();
            loop {
                std::thread::sleep(Duration::from_millis(50));
                let scripting = &engine.scripting;
                if scripting.running() && engine.clock.now_ms() - scripting.time_snapshot_ms() > 200 {
                    let mut out = Vec::new();
                    engine.execute(&mut killer, &[b"SCRIPT", b"KILL"], &mut Encoder::new(&mut out, Protocol::Resp2));
                }
            }
        });
        engine
    })
}

fn eval(script: &[u8], keys: &[&[u8]]) -> Vec<u8> {
    let engine = engine();
    let mut client = engine.new_client();
    let numkeys = keys.len().to_string();
    let mut args: Vec<&[u8]> = vec![b"EVAL_RO", script, numkeys.as_bytes()];
    args.extend_from_slice(keys);
    let mut out = Vec::new();
    engine.execute(&mut client, &args, &mut Encoder::new(&mut out, Protocol::Resp2));
    out
}

/// Pieces of scripts; `#` is replaced by a number drawn from the input.
const FRAGMENTS: &[&str] = &[
    "local t = {unpack({1,2,3}, #, #)} ",
    "local t = {unpack({}, #)} ",
    "local b = string.dump(function() return # end) local f = load(function() local x = b b = nil return x end) if f then f() end ",
    "local f = loadstring(string.dump(function() return # end)) if f then f() end ",
    "local f = loadstring('return ' .. #) if f then f() end ",
    "pcall(function() getmetatable('').__index = function() return 'X' end end) ",
    "pcall(function() getmetatable('').__index.upper = 1 end) ",
    "pcall(rawset, _G, 'leak', #) ",
    "pcall(rawset, string, 'upper', #) ",
    "pcall(setmetatable, _G, {}) ",
    "pcall(table.insert, _G, #) ",
    "pcall(table.insert, string, #) ",
    "pcall(table.remove, redis) ",
    "pcall(table.sort, _G) ",
    "local mt = getmetatable(_G) pcall(function() mt.__index = nil end) ",
    "for k, v in pairs(_G) do local _ = k end ",
    "for k, v in pairs(string) do local _ = rawget(string, k) end ",
    "local n = next(redis) ",
    "local co = coroutine.create(function() x = # end) coroutine.resume(co) ",
    "local c = coroutine.wrap(function() rawset(_G, 'y', #) end) pcall(c) ",
    "pcall(cjson.decode, string.rep('[', # % 3000) .. string.rep(']', # % 3000)) ",
    "pcall(cjson.decode, '\"\\\\ud8' .. # .. '\"') ",
    "pcall(cjson.encode, {#, {#, {#}}}) ",
    "pcall(cmsgpack.unpack, string.rep(cmsgpack.pack(#), # % 20000)) ",
    "pcall(cmsgpack.pack, {#, 'x', {#}}) ",
    "pcall(struct.pack, '>I' .. #, #) ",
    "pcall(struct.unpack, 'i' .. #, 'abcdefgh') ",
    "pcall(bit.tohex, #, #) ",
    "pcall(bit.lshift, #, #) ",
    "local s = string.rep('x', # % 100000) ",
    "pcall(string.format, '%' .. # .. 'd', #) ",
    "pcall(string.rep, 'x', -1 - # % 1000) ",
    "local t = {} for i = 1, # % 20000 do t[i] = i end ",
    "local t = {} local c = t for i = 1, # % 9000 do c[1] = {} c = c[1] end ",
    "pcall(redis.call, 'ping') ",
    "pcall(redis.call, 'get', KEYS[1] or 'k') ",
    "pcall(redis.pcall, 'set', 'k', #) ",
    "pcall(redis.sha1hex, #) ",
    "pcall(redis.error_reply, #) ",
    "pcall(redis.setresp, # % 4) ",
    "collectgarbage('collect') ",
    "pcall(error, {err = #}) ",
    "pcall(load, function() return nil end) ",
    "pcall(loadstring, '[' .. string.rep('=', # % 1000) .. '[') ",
];

const RETURNS: &[&str] = &[
    "return t",
    "return #",
    "return {#, {#}, 'x'}",
    "return redis.status_reply('#')",
    "return {err = '#'}",
    "return {map = {a = #}}",
    "return {set = {a = true}}",
    "return {double = #}",
    "return s",
    "return c",
    "return",
];

fn number(bytes: &mut impl Iterator<Item = u8>) -> String {
    let b = [bytes.next().unwrap_or(0), bytes.next().unwrap_or(0), bytes.next().unwrap_or(0)];
    match b[0] % 8 {
        0 => "2147483647".into(),
        1 => "-2147483648".into(),
        2 => "-2".into(),
        3 => "0".into(),
        4 => "1e308".into(),
        5 => "0/0".into(),
        _ => (i64::from(b[1]) * 256 + i64::from(b[2]) - 1000).to_string(),
    }
}

fn assemble(data: &[u8]) -> Vec<u8> {
    let mut bytes = data.iter().copied();
    let mut script = String::new();
    let pieces = 1 + bytes.next().unwrap_or(0) % 6;
    for _ in 0..pieces {
        let fragment = FRAGMENTS[usize::from(bytes.next().unwrap_or(0)) % FRAGMENTS.len()];
        for (i, part) in fragment.split('#').enumerate() {
            if i > 0 {
                script.push_str(&number(&mut bytes));
            }
            script.push_str(part);
        }
    }
    let ret = RETURNS[usize::from(bytes.next().unwrap_or(0)) % RETURNS.len()];
    for (i, part) in ret.split('#').enumerate() {
        if i > 0 {
            script.push_str(&number(&mut bytes));
        }
        script.push_str(part);
    }
    script.into_bytes()
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let script = if mode % 2 == 0 { assemble(rest) } else { rest.to_vec() };
    // Scripts that only allocate a lot stop the fuzzer, not the sandbox: bound them.
    if mode % 2 == 1 && rest.windows(3).any(|w| w == b"rep") {
        return;
    }
    eval(&script, &[b"k"]);
    // The sandbox is intact for the next script.
    assert_eq!(eval(b"return ('abc'):upper()", &[]), b"$3\r\nABC\r\n");
    assert_eq!(eval(b"return string.upper('abc')", &[]), b"$3\r\nABC\r\n");
    assert_eq!(eval(b"return {type(getfenv), type(setfenv), type(newproxy)}", &[]).first(), Some(&b'-'));
    assert_eq!(eval(b"return rawget(_G, 'leak') == nil and rawget(_G, 'y') == nil", &[]), b":1\r\n");
    assert_eq!(eval(b"return getmetatable('').__index == string", &[]), b":1\r\n");
    // No Lua references leaked: a script needing nearly all of mlua's reference stack runs.
    assert_eq!(
        eval(b"return select('#', cmsgpack.unpack(string.rep(cmsgpack.pack('a'), 7900)))", &[]),
        b":7900\r\n"
    );
});
