//! The Lua sandbox against a real redis-server 7.0.15: every escape issue 24 found, and the
//! patterns of Redis's Lua CVE fixes (CVE-2025-46817, -46818, -46819, -49844, CVE-2024-46981,
//! CVE-2024-31449, CVE-2022-24736, CVE-2021-32626, CVE-2020-14147), compared reply for reply
//! in RESP2 and RESP3. Each group ends with checks that the server is alive and that no
//! script's change is visible to the next script. Skipped without redis-server unless
//! QUINCE_REQUIRE_REDIS=1.

use quince_test_util::{Differential, Step};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn eval(script: &str) -> Step {
    Step::cmd(&["EVAL", script, "0"])
}

fn run(name: &str, scripts: &[&str]) {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    let mut steps: Vec<Step> = scripts.iter().map(|s| eval(s)).collect();
    // Whatever the scripts tried, later scripts see the pristine sandbox.
    steps.extend([
        eval("return ('abc'):upper()"),
        eval("return string.upper('abc')"),
        eval("local t = {} for k in pairs(_G) do t[#t+1] = k end table.sort(t) return t"),
        eval("return type(leak)"),
        Step::cmd(&["PING"]),
    ]);
    diff.run(name, &steps);
}

/// Issue 24 item 1 and CVE-2025-46817: unpack's count overflowed and crashed the server.
#[test]
fn unpack_bounds() {
    run(
        "unpack",
        &[
            "return #{unpack({1,2,3}, -2, 2147483647)}",
            "return {unpack({1,2,3}, -2, 2147483647)}",
            "return {unpack({1,2,3}, 0, 2147483647)}",
            "return {unpack({1,2,3}, -2147483648, -2)}",
            "return {unpack({1,2,3}, -1, -2)}",
            "return {unpack({1,2,3}, 1, -1)}",
            "local t = {unpack({1,2,3}, -1, 5)} return #t",
            "local r = {} local t = {unpack({1,2,3}, -1, 5)} for i = 1, 7 do r[i] = t[i] or '_NIL_' end return r",
            "local r = {} local t = {unpack({1,2,3}, -2147483648, -2147483646)} for i = 1, 3 do r[i] = t[i] or '_NIL_' end return r",
            "return {unpack({1,2,3}, 2)}",
            "return {unpack({1,2,3}, 'x')}",
            "return {unpack()}",
            "return {unpack({1,2,3}, 1, 1000000)}",
            "local t = {} for i=1,100000 do t[i]=i end return #{unpack(t)}",
            "local t = {} for i=1,7000 do t[i]=i end return #{unpack(t)}",
            "return select('#', unpack({}, 1, 200000))",
            "return select('#', unpack({1,2,nil,4}))",
            "local u = unpack return {pcall(u, 1)}",
        ],
    );
}

/// Issue 24 item 2: bytecode must never load (crafted bytecode reads and writes memory).
#[test]
fn binary_chunks_refused() {
    run(
        "binary chunks",
        &[
            "local b=string.dump(function() return 42 end); local f=load(function() local x=b; b=nil; return x end); return f()",
            "local b=string.dump(function() return 42 end); local f,e=load(function() local x=b; b=nil; return x end); return {tostring(f), e}",
            "local b=string.dump(function() return 42 end); local f,e=loadstring(b); return {tostring(f), e}",
            "return loadstring(string.dump(function() return 1 end))()",
            "local f,e = loadstring(string.char(27)..'abc') return e",
            "local f,e = loadstring(string.char(27)..'abc', '=xy') return e",
            "local b=string.dump(function() return 42 end); local n=0; local f,e=load(function() n=n+1 if n<=#b then return string.sub(b,n,n) end end, '=bytes') return {tostring(f), e}",
            // Text chunks still load, stream and see the sandbox.
            "local f = load(function() return nil end) return type(f)",
            "local f,e = load('x') return {tostring(f), e}",
            "local f,e = load(function() return 'return 7' end, 'nm') return tostring(f)",
            "local n=0 local f,e = load(function() n=n+1 if n==1 then return 'return 7' end end, 'nm') return f()",
            "local n=0 local f,e = load(function() n=n+1 if n==1 then return 'x=1' end end, '=nm') return {pcall(f)}",
            "local n=0 local f,e = load(function() n=n+1 if n==1 then return 'x=1' end end, '=nm') f()",
            "local f,e = load(function() return {} end) return e",
            "local f,e = load(function() error('boom') end) return e",
            "local f,e = load(function() return nil end, {}) return e",
            "local f = loadstring('x=2') f()",
            "local f,e = loadstring('x=', 'nm') return e",
            "local f,e = loadstring() return e",
            "local f,e = loadstring({}) return e",
            "local f = loadstring('return _G') return tostring(f() == _G)",
            "local f = loadstring('rawset(_G, \"leak\", 1)') return {pcall(f)}",
            "return tostring(loadstring('return 1')) ~= nil",
        ],
    );
}

/// Bytecode as the script body itself (EVAL, SCRIPT LOAD) and as a function library.
#[test]
fn bytecode_bodies_refused() {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    let body: &[u8] = b"\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00";
    diff.run(
        "bytecode bodies",
        &[
            Step::bytes(&[b"EVAL", body, b"0"]),
            Step::bytes(&[b"SCRIPT", b"LOAD", body]),
            Step::bytes(&[b"EVAL", b"\x1b", b"0"]),
            Step::bytes(&[b"FUNCTION", b"LOAD", b"#!lua name=bc\n\x1bLuaQ\x00"]),
            Step::cmd(&["PING"]),
        ],
    );
}

/// Issue 24 item 3 and CVE-2025-46818: the metatables of basic types are read-only.
#[test]
fn basic_type_metatables() {
    run(
        "metatables",
        &[
            "getmetatable('').__index=function(s,k) return function() return 'HIJACKED' end end",
            "return ('abc'):upper()",
            "getmetatable('').__index.upper = function() return 'HIJACKED' end",
            "local mt = getmetatable('') mt.__index = nil",
            "local mt = getmetatable('') rawset(mt, '__index', {})",
            "local mt = getmetatable('') mt.__newfield = 1",
            "return {pcall(setmetatable, getmetatable(''), {})}",
            "return type(getmetatable('').__index)",
            "return getmetatable('').__index == string",
            "local mt = getmetatable('') return rawequal(mt.__index, string)",
            "return tostring(getmetatable(getmetatable('')))",
            "local ok, e = pcall(function() getmetatable(nil).__index = function() return 1 end end) return e",
            "local ok, e = pcall(function() getmetatable(123.222).__index = function() return 1 end end) return e",
            "local ok, e = pcall(function() getmetatable(true).__index = function() return 1 end end) return e",
            "local ok, e = pcall(function() getmetatable(function() return 1 end).__index = function() return 1 end end) return e",
            "local ok, e = pcall(function() getmetatable(coroutine.create(function() return 1 end)).__index = function() return 1 end end) return e",
            "local r = {} for i=1,3 do local ok, e = pcall(getmetatable) r[i] = e end return r",
            "local a = {} return getmetatable(a)",
            "local t = setmetatable({}, {__index=function(t,k) return k end}) return t.x",
            "local t = {} setmetatable(t, {}) return 1",
        ],
    );
}

/// Issue 24 item 4: globals and library tables are read-only, and the sandbox has
/// exactly Redis's globals (no getfenv, setfenv, newproxy).
#[test]
fn readonly_globals_and_libraries() {
    run(
        "globals",
        &[
            "rawset(_G,'leak','x')",
            "return leak",
            "x = 1",
            "_G.x = 1",
            "local ok, e = pcall(function() _G.x = 1 end) return e",
            "local ok, e = pcall(setmetatable, _G, {}) return e",
            "setmetatable(_G, nil)",
            "table.insert(_G, 'x')",
            "return _G[1]",
            "table.insert(string, 'x')",
            "return {table.remove(string)}",
            "return {table.remove(string, 1)}",
            "table.sort(redis)",
            "table.sort(_G)",
            "string.upper = 1",
            "rawset(string, 'x', 1)",
            "cjson.encode = 1",
            "rawset(redis, 'x', 1)",
            "redis.call = 1",
            "rawset(cjson, 'encode', 1)",
            "math.random = nil",
            "bit.band = 1",
            "struct.pack = 1",
            "cmsgpack.pack = 1",
            "table.concat = 1",
            "return type(getfenv)",
            "return type(setfenv)",
            "return type(newproxy)",
            "return type(module)",
            "return type(require)",
            "return type(package)",
            "return type(os)",
            "return type(io)",
            "return type(print)",
            "return type(debug)",
            "return type(dofile)",
            "return type(loadfile)",
            "return type(__redis__err__handler)",
            "return {type(load), type(loadstring), type(rawget), type(gcinfo), type(coroutine), type(collectgarbage), type(_VERSION)}",
            "return type(getmetatable(_G))",
            "return type(getmetatable(string))",
            "return type(getmetatable(redis))",
            "getmetatable(_G).__index = function() return 1 end",
            "local t = {} for k in pairs(string) do t[#t+1] = k end table.sort(t) return t",
            "local t = {} for k in pairs(table) do t[#t+1] = k end table.sort(t) return t",
            "local t = {} for k in pairs(redis) do t[#t+1] = k end table.sort(t) return t",
            "local t = {} for k in pairs(cjson) do t[#t+1] = k end table.sort(t) return t",
            "local t = {} for k in pairs(math) do t[#t+1] = k end return #t",
            "return rawget(string, 'upper') ~= nil",
            "return rawget(_G, 'redis') == redis",
            "return rawget(_G, 'nope')",
            "return _G._G == _G",
            "return {pcall(next, string, 'nope')}",
            "return type(next(_G))",
            "return next({})",
            "return tostring(rawequal(_G, _G))",
            "local ok, e = pcall(rawset, {}, nil, 1) return e",
            "local ok, e = pcall(rawset, 1, 2, 3) return e",
            "return {pcall(table.insert, 1, 2)}",
            "return {pcall(table.insert, {}, 1, 2, 3)}",
            "KEYS[1] = 'x' return KEYS[1]",
            "table.insert(ARGV, 'x') return ARGV",
            "return coroutine.wrap(function() x = 1 end)()",
            "return coroutine.wrap(function() return _G ~= nil end)()",
            "local co = coroutine.create(function() rawset(_G, 'q', 1) end) return {coroutine.resume(co)}",
            "return coroutine.wrap(function() return 5 end)()",
            "coroutine.resume = 1",
            "rawset(coroutine, 'x', 1)",
            "local t = {} for k in pairs(coroutine) do t[#t+1] = k end table.sort(t) return t",
            "rawset(getmetatable(_G), 'x', 1)",
            "return rawget(getmetatable(_G), 'x')",
            "getmetatable(_G).x = 1",
            "local c = cjson.new() c.x = 1 return c.x",
            "local c = cjson.new() c.encode_max_depth(2) return c.encode({{{1}}})",
            "return {cjson._NAME, cjson._VERSION, cjson.new().encode({1})}",
        ],
    );
}

/// Issue 24 item 5 and CVE-2021-32626: replies of any size, and deep ones up to Redis's
/// stack limit (then "reached lua stack limit" in place of the deeper value).
#[test]
fn large_and_deep_replies() {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    let mut push = vec!["RPUSH".to_string(), "list".to_string()];
    push.extend((0..10_000).map(|i| format!("element:{i}")));
    let push: Vec<&str> = push.iter().map(String::as_str).collect();
    diff.run(
        "large and deep replies",
        &[
            Step::cmd(&push),
            Step::cmd(&["EVAL", "return redis.call('lrange',KEYS[1],0,-1)", "1", "list"]),
            Step::cmd(&["EVAL", "return #redis.call('lrange',KEYS[1],0,-1)", "1", "list"]),
            eval("local t = {} for i=1,100000 do t[i]=i end return t"),
            eval("local t = {} for i=1,20000 do t[i]={i, tostring(i)} end return t"),
            eval("redis.setresp(3) local m = {} for i=1,20000 do m['k'..i]=i end return {map=m}"),
            eval("redis.setresp(3) local s = {} for i=1,20000 do s['m'..i]=true end return {set=s}"),
            eval("local a = {}; local b = {a}; a[1] = b; return a"),
            eval("local t = {} for i=1,5000 do t = {t} end return t"),
            eval("local t = {} for i=1,7994 do t = {t} end return t"),
            eval("local t = {} for i=1,7995 do t = {t} end return t"),
            eval("local t = {} for i=1,7996 do t = {t} end return t"),
            eval("local t = {1} for i=1,8100 do t = {t, i} end return t"),
            Step::cmd(&["PING"]),
        ],
    );
}

/// Issue 24 item 6: cjson nests to 1000 levels and refuses lone surrogates.
#[test]
fn cjson_limits() {
    run(
        "cjson",
        &[
            "return #cjson.encode(cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)))",
            "return #cjson.encode(cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001)))",
            "return #cjson.encode(cjson.decode(string.rep('[', 201) .. string.rep(']', 201)))",
            "local t = {} local c = t for i=1,999 do c[1] = {} c = c[1] end return #cjson.encode(t)",
            "local t = {} local c = t for i=1,1000 do c[1] = {} c = c[1] end return #cjson.encode(t)",
            "local t = {} local c = t for i=1,1001 do c[1] = {} c = c[1] end return #cjson.encode(t)",
            "return cjson.decode('\"\\\\ud800\"')",
            "return cjson.decode('\"\\\\udc00\"')",
            "return cjson.decode('{\"a\":\"\\\\ud800\"}')",
            "return cjson.decode('\"\\\\ud800\\\\u0041\"')",
            "return cjson.decode('\"\\\\ud800x\"')",
            "return cjson.decode('\"\\\\ud83d\\\\ude00\"')",
            "return cjson.decode('\"\\\\u00e9\\\\u0041\"')",
            "return cjson.decode('\"\\\\u12\"')",
            "return cjson.decode('\"\\\\uzzzz\"')",
            // Settings are the shared library's, kept across scripts as in Redis; each is
            // put back so the RESP3 pass starts from the defaults.
            "return {cjson.encode_number_precision(3), cjson.encode(3.14159)}",
            "return cjson.encode({3.14159265358979, 123456, 0.000123456})",
            "return cjson.encode_number_precision(0)",
            "return cjson.encode_number_precision(15)",
            "return cjson.encode_number_precision()",
            "return cjson.encode_number_precision(14)",
            "return cjson.encode({3.14159265358979, 123456789012345, 1e-5})",
            "return {cjson.encode_keep_buffer(false), tostring(cjson.encode_keep_buffer())}",
            "return tostring(cjson.encode_keep_buffer(true))",
            "return {cjson.encode_sparse_array()}",
            "return {cjson.decode_invalid_numbers()}",
            "return cjson.encode({[1]=1,[5]=5})",
            "return cjson.encode({-0.0, 0/-1, 1e15, -1e-5, 123456789012345})",
        ],
    );
}

/// The other CVE patterns: the bit library (CVE-2024-31449), struct sizes (CVE-2020-14147),
/// long-bracket lexing (CVE-2025-46819), garbage during parsing (CVE-2025-49844), flushing
/// scripts while garbage is pending (CVE-2024-46981), code run at load time (CVE-2022-24736).
#[test]
fn cve_patterns() {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    diff.run(
        "cve patterns",
        &[
            eval("return bit.tohex(65535, -2147483648)"),
            eval("return bit.tohex(65, -2147483648)"),
            eval("return {bit.tohex(-1, -8), bit.tohex(255, 2147483647)}"),
            eval("return struct.pack('>I2147483648', '10')"),
            eval("return struct.unpack('i2147483648', 'abc')"),
            eval("return struct.pack('c2147483648', 'x')"),
            eval("return struct.unpack('>I16', string.rep('x', 16))"),
            eval("return [=["),
            eval("return [==[ x"),
            eval("return [==[ x ]=]"),
            eval("return [=[x]=]"),
            eval("local sep = string.rep('=', 100000) return #loadstring('return [' .. sep .. '[x]' .. sep .. ']')()"),
            eval("local f, e = loadstring(string.rep('\\n', 300000) .. 'return [' .. string.rep('=', 70000) .. '[') return e"),
            eval("local f, e = loadstring('--[' .. string.rep('=', 5000)) return {type(f), e}"),
            eval("local t = {} for i = 1, 2000 do t[i] = string.rep('x', i) end collectgarbage('collect') local f = loadstring(string.rep('local a = \"' .. string.rep('y', 50) .. '\" ', 2000) .. 'return 1') return f()"),
            eval("collectgarbage('stop') local t = {} for i = 1, 1000 do t[i] = {i} end collectgarbage('restart') return #t"),
            eval("return 1 end redis.call('set', 'x', 'y') function f() return 1"),
            eval("return redis.call('ping')"),
            Step::cmd(&["SCRIPT", "LOAD", "local t = {} for i=1,10000 do t[i] = {} end return #t"]),
            Step::cmd(&["SCRIPT", "FLUSH", "ASYNC"]),
            eval("local t = {} for i=1,10000 do t[i] = {} end return #t"),
            Step::cmd(&["SCRIPT", "FLUSH", "SYNC"]),
            eval("collectgarbage('collect') return collectgarbage('count') > 0"),
            Step::cmd(&["FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() local t = {} for i=1,1000 do t[i]={} end return #t end)"]),
            Step::cmd(&["FCALL", "f", "0"]),
            Step::cmd(&["FUNCTION", "FLUSH", "ASYNC"]),
            Step::cmd(&["FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() string.upper = 1 end)"]),
            Step::cmd(&["FCALL", "f", "0"]),
            Step::cmd(&["FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\nredis.register_function('f', function() getmetatable('').__index = {} end)"]),
            Step::cmd(&["FCALL", "f", "0"]),
            Step::cmd(&["FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\nredis.register_function('f', function() return {unpack({1,2,3}, -2, 2147483647)} end)"]),
            Step::cmd(&["FCALL", "f", "0"]),
            Step::cmd(&["FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\nredis.register_function('f', function() return type(getfenv) end)"]),
            Step::cmd(&["FCALL", "f", "0"]),
            Step::cmd(&["FUNCTION", "FLUSH"]),
            Step::cmd(&["PING"]),
        ],
    );
}

/// The script cache has no bound (as in Redis 7.0): 9,000 distinct cached scripts must not
/// use up the Lua references a script needs (each one took one of mlua's ~8,000 slots).
#[test]
fn many_cached_scripts() {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    for server in [&diff.quince, &diff.redis] {
        let mut c = server.client();
        let mut pipeline = Vec::new();
        for i in 0..9000 {
            pipeline.extend(quince_test_util::encode_command(&["EVAL", &format!("return {i}"), "0"]));
        }
        c.send_raw(&pipeline);
        for i in 0..9000 {
            assert_eq!(c.read_reply(), format!(":{i}\r\n").into_bytes(), "{}", server.name);
        }
    }
    diff.run(
        "after 9,000 cached scripts",
        &[
            Step::cmd(&["EVAL", "return select('#', cmsgpack.unpack(string.rep(cmsgpack.pack('a'), 7900)))", "0"]),
            Step::cmd(&[
                "EVAL",
                "return #cjson.encode(cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)))",
                "0",
            ]),
            Step::cmd(&["EVAL", "local t = {} for i=1,7994 do t = {t} end return t", "0"]),
            Step::cmd(&["PING"]),
        ],
    );
}
