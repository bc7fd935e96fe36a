//! Differential tests for Lua scripting and functions (EVAL family, SCRIPT, FUNCTION,
//! FCALL): conversions both ways, errors, the sandbox, RESP2 and RESP3, against a real
//! redis-server. Skipped without redis-server unless QUINCE_REQUIRE_REDIS=1.

use std::time::Duration;

use quince_test_util::{start_quince, Compare, Differential, Step};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn cmd(args: &[&str]) -> Step {
    Step::cmd(args)
}

fn eval(script: &str, args: &[&str]) -> Step {
    let mut all = vec!["EVAL", script];
    all.extend_from_slice(args);
    Step::cmd(&all)
}

fn run(name: &str, steps: &[Step]) {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    diff.run(name, steps);
}

#[test]
fn lua_to_redis_conversions() {
    run(
        "lua to redis",
        &[
            eval("return 1", &["0"]),
            eval("return 3.99", &["0"]),
            eval("return -3.99", &["0"]),
            eval("return 'hello'", &["0"]),
            eval("return true", &["0"]),
            eval("return false", &["0"]),
            eval("return nil", &["0"]),
            eval("return {1,2,3,'ciao',{1,2}}", &["0"]),
            eval("return {1,2,nil,4}", &["0"]),
            eval("return {ok='fine'}", &["0"]),
            eval("return {err='My Error'}", &["0"]),
            eval("return {err='My\\r\\nError'}", &["0"]),
            eval("return redis.status_reply('STATUS')", &["0"]),
            eval("return redis.error_reply('CUSTOM failure')", &["0"]),
            eval("return redis.error_reply('-WRONG x')", &["0"]),
            eval("return redis.error_reply(1)", &["0"]),
            eval("return {KEYS[1], KEYS[2], ARGV[1], ARGV[2]}", &["2", "a", "b", "c", "d"]),
            eval("return #ARGV", &["0"]),
            eval("redis.setresp(3); return {true, false, {double=3.5}, {big_number='1234567890123'}}", &["0"]),
            eval("redis.setresp(3); return {map={a=1}}", &["0"]),
            eval("redis.setresp(3); return {set={b=true}}", &["0"]),
            eval("redis.setresp(3); return {verbatim_string={format='txt', string='hi'}}", &["0"]),
            eval("redis.setresp(3); return true", &["0"]),
            eval("redis.setresp(3); return false", &["0"]),
            eval("return redis.sha1hex('')", &["0"]),
            eval("return redis.sha1hex('Pizza & Mandolino')", &["0"]),
            eval("return redis.REDIS_VERSION", &["0"]),
            eval("return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}", &["0"]),
            eval("return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_REPLICA, redis.REPL_ALL}", &["0"]),
            eval("return redis.replicate_commands()", &["0"]),
            eval("redis.set_repl(redis.REPL_ALL) return 1", &["0"]),
            eval("redis.set_repl(12) return 1", &["0"]),
            eval("redis.log(redis.LOG_WARNING, 'x') return 1", &["0"]),
            eval("redis.log('x', 'y') return 1", &["0"]),
            eval("redis.setresp(4)", &["0"]),
        ],
    );
}

/// KEYS and ARGV are what this run was given, whatever an earlier script did to its own
/// (quince refills the same two tables: docs/threading.md).
#[test]
fn keys_and_argv_fresh_each_run() {
    let probe = "return {#KEYS, #ARGV, tostring(KEYS[1]), tostring(KEYS[3]), tostring(KEYS.extra), tostring(ARGV[1]), tostring(ARGV[9]), tostring(getmetatable(KEYS))}";
    run(
        "keys and argv fresh",
        &[
            eval("KEYS[3] = 'x'; KEYS.extra = 1; ARGV[1] = nil; table.insert(ARGV, 'y'); return {#KEYS, KEYS[3], KEYS.extra, ARGV[3]}", &["2", "a", "b", "c", "d"]),
            eval(probe, &["1", "k", "v"]),
            eval("setmetatable(ARGV, {__index = function() return 'meta' end}); return ARGV[9]", &["0"]),
            eval(probe, &["0", "w"]),
            eval("for i = 1, 50 do KEYS['k' .. i] = i end; return #KEYS", &["3", "a", "b", "c"]),
            eval(probe, &["0"]),
            eval("return #KEYS + #ARGV", &["3", "a", "b", "c", "d", "e"]),
            eval("return #KEYS + #ARGV", &["0"]),
            // (Not error(KEYS): redis-server 7.0.15 crashes on an error table without `err`.)
            eval("KEYS.extra = 2; error(KEYS[1])", &["1", "a"]),
            eval(probe, &["1", "z"]),
            eval("return KEYS", &["2", "p", "q"]),
        ],
    );
}

#[test]
fn redis_to_lua_conversions() {
    run(
        "redis to lua",
        &[
            cmd(&["SET", "x", "10"]),
            cmd(&["RPUSH", "l", "a", "b", "c"]),
            cmd(&["HSET", "h", "f", "v"]),
            eval("return type(redis.call('incr', 'x'))", &["0"]),
            eval("return redis.call('incr', 'x')", &["0"]),
            eval("return type(redis.call('get', 'x'))", &["0"]),
            eval("return redis.call('get', 'nokey')", &["0"]),
            eval("return type(redis.call('get', 'nokey'))", &["0"]),
            eval("return redis.call('lrange', 'l', 0, -1)", &["0"]),
            eval("local r = redis.call('set', 'y', 1) return r.ok", &["0"]),
            eval("local r = redis.pcall('lpush', 'x', 1) return r.err", &["0"]),
            eval("return redis.pcall('lpush', 'x', 1)", &["0"]),
            eval("return redis.call('lpush', 'x', 1)", &["0"]),
            eval("redis.setresp(3) local r = redis.call('hgetall', 'h') return r.map.f", &["0"]),
            eval("redis.setresp(3) return redis.call('hgetall', 'h')", &["0"]),
            eval("redis.setresp(2) return redis.call('hgetall', 'h')", &["0"]),
            eval("redis.setresp(3) return type(redis.call('get', 'nokey'))", &["0"]),
            eval("return redis.call('set', KEYS[1], 3.14159)", &["1", "pi"]),
            cmd(&["GET", "pi"]),
            eval("return redis.call('set', KEYS[1], 10000000000000000)", &["1", "big"]),
            cmd(&["GET", "big"]),
            eval("redis.call('select', 9) redis.call('set', 'indb9', 1) return redis.call('dbsize')", &["0"]),
            cmd(&["EXISTS", "indb9"]),
            cmd(&["SELECT", "9"]),
            cmd(&["EXISTS", "indb9"]),
            cmd(&["SELECT", "0"]),
        ],
    );
}

#[test]
fn script_errors() {
    run(
        "errors",
        &[
            eval("return 1", &["2", "a"]),
            eval("return 1", &["-1"]),
            eval("return 1", &["x"]),
            cmd(&["EVAL", "return 1"]),
            eval("retur 1", &["0"]),
            eval("error('boom')", &["0"]),
            eval("error({err='CODE custom'})", &["0"]),
            eval("return redis.call('nosuchcommand')", &["0"]),
            eval("return redis.call('get')", &["0"]),
            eval("return redis.call()", &["0"]),
            eval("return redis.call({})", &["0"]),
            eval("return redis.call('multi')", &["0"]),
            eval("return redis.call('blpop', 'l', 0)", &["0"]),
            eval("return redis.pcall('nosuchcommand')", &["0"]),
            eval("local ok, e = pcall(function() redis.call('nosuch') end) return e", &["0"]),
            eval("return x", &["0"]),
            eval("x = 1", &["0"]),
            eval("redis.call = function() return 1 end", &["0"]),
            eval("cjson.encode = 1", &["0"]),
            eval("setmetatable(_G, {})", &["0"]),
            eval("return loadfile('x')", &["0"]),
            eval("return dofile('x')", &["0"]),
            eval("print('x')", &["0"]),
            eval("return os.time()", &["0"]),
            eval("return io.write('x')", &["0"]),
            cmd(&["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"]),
            cmd(&["EVALSHA", "short", "0"]),
            cmd(&["EVAL_RO", "return redis.call('set', 'a', 1)", "0"]),
            cmd(&["EVAL_RO", "return redis.call('get', 'a')", "0"]),
            eval("#!lua flags=no-writes\nreturn redis.call('set', 'a', 1)", &["0"]),
            eval("#!lua flags=no-writes\nreturn redis.call('get', 'a')", &["0"]),
            eval("#!lua flags=bad\nreturn 1", &["0"]),
            eval("#!lua foo=bar\nreturn 1", &["0"]),
            eval("#!python\nreturn 1", &["0"]),
            eval("#!lua", &["0"]),
            cmd(&["EVAL_RO", "#!lua\nreturn 1", "0"]),
            eval("#!lua\nreturn 1", &["0"]),
            // Library errors in tail position still name the script's line (C functions
            // in Redis keep the caller's frame).
            eval("return redis.setresp(4)", &["0"]),
            eval("return redis.log(99, 'x')", &["0"]),
            eval("return redis.set_repl(9)", &["0"]),
            eval("return redis.sha1hex()", &["0"]),
            eval("return redis.sha1hex('a')", &["0"]),
            eval("return redis.acl_check_cmd('nosuch')", &["0"]),
        ],
    );
}

#[test]
fn script_cache_commands() {
    run(
        "script cache",
        &[
            cmd(&["SCRIPT", "LOAD", "return 'loaded'"]),
            cmd(&[
                "SCRIPT",
                "EXISTS",
                "b534286061d4b9e4026607613b95c06c06015ae8",
                "ffffffffffffffffffffffffffffffffffffffff",
            ]),
            cmd(&["EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", "0"]),
            cmd(&["EVALSHA", "B534286061D4B9E4026607613B95C06C06015AE8", "0"]),
            cmd(&["EVALSHA_RO", "b534286061d4b9e4026607613b95c06c06015ae8", "0"]),
            cmd(&["SCRIPT", "LOAD", "retur x"]),
            cmd(&["SCRIPT", "FLUSH"]),
            cmd(&["SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8"]),
            cmd(&["SCRIPT", "FLUSH", "ASYNC"]),
            cmd(&["SCRIPT", "FLUSH", "SYNC"]),
            cmd(&["SCRIPT", "FLUSH", "BAD"]),
            cmd(&["SCRIPT", "KILL"]),
            cmd(&["SCRIPT", "HELP"]),
            cmd(&["SCRIPT", "NOSUCH"]),
            cmd(&["EVAL", "return 1", "0"]),
            cmd(&["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"]),
            cmd(&["COMMAND", "INFO", "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"]),
            cmd(&["COMMAND", "DOCS", "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"]),
            cmd(&["COMMAND", "INFO", "script|load", "script|exists", "script|flush", "script|kill", "script|help"]),
            cmd(&["COMMAND", "INFO", "function|load", "function|delete", "function|flush", "function|list"]),
            cmd(&["COMMAND", "INFO", "function|stats", "function|kill", "function|help"]),
            cmd(&["COMMAND", "GETKEYS", "EVAL", "return 1", "2", "a", "b", "c"]),
        ],
    );
}

#[test]
fn libraries_cjson_bit() {
    run(
        "libraries",
        &[
            eval("return cjson.encode({1,2,3,'x',{a=1}})", &["0"]),
            eval("return cjson.encode({a='x/y\\n'})", &["0"]),
            eval("return cjson.encode({})", &["0"]),
            eval("return cjson.encode(1.5)", &["0"]),
            eval("return cjson.encode(0.1)", &["0"]),
            eval("return cjson.encode(1e20)", &["0"]),
            eval("return cjson.encode(true)", &["0"]),
            eval("return cjson.encode(cjson.null)", &["0"]),
            eval("return cjson.decode('[1,2,3,\"x\"]')", &["0"]),
            eval("return cjson.decode('{\"a\":[1,{\"b\":\"c\"}]}').a[2].b", &["0"]),
            eval("return cjson.decode('\"\\\\u0041\\\\n\"')", &["0"]),
            eval("return tostring(cjson.decode('null') == cjson.null)", &["0"]),
            eval("return cjson.decode('[1,2')", &["0"]),
            eval("return {bit.band(0xff, 0x0f), bit.bor(1, 2), bit.bxor(3, 1), bit.bnot(0)}", &["0"]),
            eval("return {bit.lshift(1, 4), bit.rshift(-1, 28), bit.arshift(-256, 4), bit.tobit(2^32 + 5)}", &["0"]),
            eval("return {bit.tohex(65535), bit.tohex(-1, -4), bit.tohex(255, 2)}", &["0"]),
            eval("return {bit.rol(1, 33), bit.ror(1, 1), bit.bswap(0x12345678)}", &["0"]),
            eval("return {math.random(10), math.random(10), math.random(5, 8)}", &["0"]),
            eval("math.randomseed(42) return {math.random(1000), math.random(1000)}", &["0"]),
            eval("return string.format('%d-%s', 5, 'x')", &["0"]),
            eval("return table.concat({'a','b'}, ',')", &["0"]),
            // Numbers within 2^-52 of an integer keep their value (mlua would round them).
            eval("return cjson.encode({1e-20, 3.5, 0.9999999999999999, {a = 1e-30}})", &["0"]),
            eval("redis.call('set', 'x', 1e-20) return redis.call('get', 'x')", &["0"]),
            eval("redis.call('set', 'x', 0.9999999999999999) return redis.call('get', 'x')", &["0"]),
            eval("return redis.call('echo', 12345678901234567890)", &["0"]),
            eval("local t = {} for i = 1, 10000 do t['k' .. i] = i end return #cjson.encode(t)", &["0"]),
            eval("return cjson.encode()", &["0"]),
            eval("return cjson.encode(1, 2)", &["0"]),
            eval("return cjson.decode()", &["0"]),
            eval("return cjson.decode({})", &["0"]),
            eval("return cjson.encode_max_depth(5, 6)", &["0"]),
            eval("return cjson.encode_max_depth('x')", &["0"]),
            eval("return cjson.encode_max_depth(0)", &["0"]),
            eval("return {cjson.encode_invalid_numbers('null'), cjson.encode({0/0, 1/0})}", &["0"]),
            eval("return cjson.encode_invalid_numbers('x')", &["0"]),
            eval("return {cjson.encode_invalid_numbers(true), cjson.encode({0/0, -1/0})}", &["0"]),
            eval("return {cjson.encode_invalid_numbers('off'), cjson.encode_invalid_numbers()}", &["0"]),
        ],
    );
}

/// cmsgpack: every MessagePack type both ways, the array/map choice, nesting limits,
/// unpack_one / unpack_limit offsets, and the error texts (lauxlib's argument errors name
/// the function as called).
#[test]
fn library_cmsgpack() {
    let hex = "local function hex(s) return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end)) end ";
    let packed = |expr: &str| eval(&format!("{hex}return hex(cmsgpack.pack({expr}))"), &["0"]);
    run(
        "cmsgpack",
        &[
            packed("0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, 2^53"),
            packed("-1, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649, -2^63"),
            packed("0.5, 1.5, 0.1, -2.25, 1e300, 1/0, -1/0, 2^63, 2^64, 3.4e38, 3.5e38"),
            packed("'', 'x', string.rep('a', 31), string.rep('b', 32), string.rep('c', 255), string.rep('d', 256)"),
            packed("true, false, nil, cjson.null, redis.call"),
            packed("1e-30, -2e-17, 7.724474214491728e-39, {1e-300, x = 1e-20}"),
            packed("{1, 2, 3}, {}, {[1] = 1, [2] = 2}, {[1] = 1, [3] = 3}, {[0] = 1}, {[1.5] = 1}, {x = {y = {1}}}"),
            packed("{a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8}"),
            eval(&format!("{hex}local t = {{}} for i = 1, 20 do t[i] = i end return hex(cmsgpack.pack(t))"), &["0"]),
            eval(&format!("{hex}local t = {{}} for i = 1, 70000 do t[i] = 1 end return string.sub(hex(cmsgpack.pack(t)), 1, 12)"), &["0"]),
            eval(&format!("{hex}local t = {{}} for i = 1, 20 do t['k' .. i] = i end return hex(cmsgpack.pack(t))"), &["0"]),
            eval(&format!("{hex}local t = {{}} t[1] = t return hex(cmsgpack.pack(t))"), &["0"]),
            eval(
                &format!("{hex}local t = setmetatable({{}}, {{__index = function(t, k) return k * 2 end}}) t[1] = 1 t[2] = 2 return hex(cmsgpack.pack(t))"),
                &["0"],
            ),
            eval("return cmsgpack.pack()", &["0"]),
            eval("local p = cmsgpack.pack return p()", &["0"]),
            eval("local ok, e = pcall(cmsgpack.pack) return e", &["0"]),
            eval("local t = {} for i = 1, 4001 do t[i] = i end return cmsgpack.pack(unpack(t))", &["0"]),
            eval("return {cmsgpack.unpack(cmsgpack.pack(1, -1, 300, -300, 70000, -70000, 2^40, -2^40, 'x', true, false))}", &["0"]),
            eval("local v = {cmsgpack.unpack(cmsgpack.pack(0.5, 0.1, 1e300, nil, 7))} return {tostring(v[1]), tostring(v[2]), tostring(v[3]), tostring(v[4]), v[5]}", &["0"]),
            eval("local t = cmsgpack.unpack(cmsgpack.pack({a = {b = {1, 2, {c = 'd'}}}})) return t.a.b[3].c", &["0"]),
            eval("return cmsgpack.unpack(string.char(0xcf, 255, 255, 255, 255, 255, 255, 255, 255))", &["0"]),
            eval("return cmsgpack.unpack(string.char(0xcc, 200, 0xd0, 200, 0xcd, 1, 2, 0xd1, 255, 0, 0xce, 255, 255, 255, 255, 0xd2, 128, 0, 0, 0))", &["0"]),
            eval("return {cmsgpack.unpack(string.char(0xcc, 200, 0xd0, 200, 0xcd, 1, 2, 0xd1, 255, 0, 0xce, 255, 255, 255, 255, 0xd2, 128, 0, 0, 0))}", &["0"]),
            eval("return {cmsgpack.unpack(string.char(0xd9, 2, 104, 105, 0xda, 0, 1, 120, 0xdb, 0, 0, 0, 1, 121, 0xdc, 0, 1, 7, 0xde, 0, 1, 1, 2))}", &["0"]),
            eval("return cmsgpack.unpack('')", &["0"]),
            eval("return cmsgpack.unpack(12)", &["0"]),
            eval("return cmsgpack.unpack()", &["0"]),
            eval("return cmsgpack.unpack({})", &["0"]),
            eval("return cmsgpack.unpack(string.char(0xcd, 1))", &["0"]),
            eval("return cmsgpack.unpack(string.char(0x92, 1))", &["0"]),
            eval("return cmsgpack.unpack(string.char(0xc1))", &["0"]),
            eval("return cmsgpack.unpack(string.char(0x81, 0xc0, 1))", &["0"]),
            eval("return type(cmsgpack.unpack(string.rep(string.char(0x91), 3999) .. string.char(1)))", &["0"]),
            eval("return cmsgpack.unpack(string.rep(string.char(0x91), 4000) .. string.char(1))", &["0"]),
            eval("return cmsgpack.unpack(string.rep(string.char(0x81, 1), 4000) .. string.char(1))", &["0"]),
            eval("local t = {} for i = 1, 4000 do t[i] = i end local s = cmsgpack.pack(unpack(t)) return cmsgpack.unpack(s .. s)", &["0"]),
            eval("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}", &["0"]),
            eval("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1)}", &["0"]),
            eval("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}", &["0"]),
            eval("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 3)}", &["0"]),
            eval("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 4)}", &["0"]),
            eval("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), -1)}", &["0"]),
            eval("return {cmsgpack.unpack_one('ab', '1')}", &["0"]),
            eval("return {cmsgpack.unpack_one('ab', 1.7)}", &["0"]),
            eval("return {cmsgpack.unpack_one('ab', 'x')}", &["0"]),
            eval("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}", &["0"]),
            eval("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0)}", &["0"]),
            eval("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0, 1)}", &["0"]),
            eval("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 5, 1)}", &["0"]),
            eval("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), -1)}", &["0"]),
            eval("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3))}", &["0"]),
            eval("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 'x')}", &["0"]),
            eval("return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}", &["0"]),
            eval("cmsgpack.pack = nil", &["0"]),
            eval("return cmsgpack_safe", &["0"]),
        ],
    );
}

/// struct: every option, endianness, alignment, the C conversions of out-of-range
/// numbers, positions, and the error texts.
#[test]
fn library_struct() {
    let hex = "local function hex(s) return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end)) end ";
    let packed = |fmt: &str, args: &str| eval(&format!("{hex}return hex(struct.pack('{fmt}', {args}))"), &["0"]);
    run(
        "struct",
        &[
            packed("bBhHlLTiI", "-1, 255, -2, 65535, -3, 4, 5, -6, 7"),
            packed(">bBhHlLTiI", "-1, 255, -2, 65535, -3, 4, 5, -6, 7"),
            packed("<i1i2i3i5i8i9i16I16", "-1, -2, -3, -5, -8, -9, -16, 16"),
            packed(">i3 >I9", "-3, 9"),
            packed("!bi!2bh!bdbd!4bd", "1, 2, 3, 4, 5, 6.5, 7, 8.5, 9, 10.5"),
            packed("bxxbx", "1, 2"),
            packed("c3c0sc", "'abcd', 'ef', 'gh', 'ij'"),
            packed("c", "12"),
            packed("b", "'12'"),
            packed("f>fd>d", "1.5, 1.5, 0.1, 0.1"),
            packed("LLLLLlll", "2^64, 2^63, 1e30, 0/0, -1, -2^64, 1/0, -1/0"),
            packed("bbb", "1.5, -1.5, 300"),
            packed("dfd>d", "1e-300, 1e-40, -2e-17, 5e-324"),
            packed("", ""),
            packed(" < > ", ""),
            eval("return struct.pack('!3')", &["0"]),
            eval("return struct.pack('i33', 1)", &["0"]),
            eval("return struct.pack('i99999999999', 1)", &["0"]),
            eval("return struct.pack('b', 'x')", &["0"]),
            eval("return struct.pack('bb', 1)", &["0"]),
            eval("return struct.pack('bbb', 1)", &["0"]),
            eval("return struct.pack('c5', 'ab')", &["0"]),
            eval("return struct.pack('s', {})", &["0"]),
            eval("return struct.pack('b3', 1)", &["0"]),
            eval("return struct.pack('z')", &["0"]),
            eval("return struct.pack()", &["0"]),
            eval("local p = struct.pack return p('b')", &["0"]),
            eval("local ok, e = pcall(struct.pack, 'b') return e", &["0"]),
            eval("return {struct.unpack('bBhHlLTiI', struct.pack('bBhHlLTiI', -1, 255, -2, 65535, -3, 4, 5, -6, 7))}", &["0"]),
            eval("return {struct.unpack('>I3 <i3 i16 I16', 'abcdef' .. string.rep(string.char(255), 32))}", &["0"]),
            eval("return {struct.unpack('>h', 'ab')}", &["0"]),
            eval("return {struct.unpack('>h', 'abc', 2)}", &["0"]),
            eval("return {struct.unpack('>h', 'ab', 2)}", &["0"]),
            eval("return {struct.unpack('b', 'abc', 0)}", &["0"]),
            eval("return {struct.unpack('b', 'abc', -1)}", &["0"]),
            eval("return {struct.unpack('', 'abc', -1)}", &["0"]),
            eval("return {struct.unpack('b', 'abc', 'x')}", &["0"]),
            eval("return {struct.unpack('bc0', string.char(3) .. 'abcd')}", &["0"]),
            eval("return {struct.unpack('c1c0', '3abcd')}", &["0"]),
            eval("return {struct.unpack('c1c0', 'xabcd')}", &["0"]),
            eval("return {struct.unpack('c0', 'abcd')}", &["0"]),
            eval("return {struct.unpack('bc0', string.char(9) .. 'abcd')}", &["0"]),
            eval("return {struct.unpack('ss', 'ab' .. string.char(0) .. 'cd' .. string.char(0))}", &["0"]),
            eval("return {struct.unpack('s', 'ab')}", &["0"]),
            eval("return {struct.unpack('!4bi', struct.pack('!4bi', 1, 2))}", &["0"]),
            eval("return {struct.unpack('xxb', 'abc')}", &["0"]),
            eval("local v = {struct.unpack('f d >f >d', struct.pack('f d >f >d', 1.5, 0.1, -2.5, 1e300))} return {tostring(v[1]), tostring(v[2]), tostring(v[3]), tostring(v[4]), v[5]}", &["0"]),
            eval("return {struct.unpack('z', 'ab')}", &["0"]),
            eval("return {struct.unpack('b')}", &["0"]),
            eval("return {struct.unpack()}", &["0"]),
            eval("return {struct.unpack('i0', 'ab')}", &["0"]),
            eval("return {struct.size('bhilLTfdxc3i7'), struct.size('!bhilLTfdxc3i7'), struct.size('zq'), struct.size('b', 1)}", &["0"]),
            eval("return struct.size('s')", &["0"]),
            eval("return struct.size('c0')", &["0"]),
            eval("return struct.size('%')", &["0"]),
            eval("return struct.size('!5')", &["0"]),
            eval("return struct.size()", &["0"]),
            eval("struct.x = 1", &["0"]),
        ],
    );
}

/// calls/rejected_calls/failed_calls of some commands, from INFO commandstats (which also
/// has timings that differ between servers).
fn command_counts(names: &str) -> Step {
    let script = "local out = {} \
        local info = redis.call('INFO', 'commandstats') \
        for _, name in ipairs(ARGV) do \
          local line = string.match(info, 'cmdstat_' .. name .. ':[^\\r]*') or (name .. ': none') \
          table.insert(out, (string.gsub(line, 'usec=%d+,usec_per_call=[%d.]+,', ''))) \
        end \
        return out";
    let mut args = vec!["EVAL", script, "0"];
    args.extend(names.split(' '));
    Step::cmd(&args)
}

/// What a script's refused or failed commands count (error stats, rejected and failed calls),
/// refusals over `maxmemory`, `min-replicas-to-write`, shebang flags, and DEBUG
/// SET-DISABLE-DENY-SCRIPTS.
#[test]
fn script_refusals_and_stats() {
    run(
        "script refusals",
        &[
            cmd(&["CONFIG", "RESETSTAT"]),
            eval("return redis.call('select', 99)", &["0"]),
            cmd(&["EVAL_RO", "return redis.call('set', 'x', 'y')", "1", "x"]),
            cmd(&["EVAL_RO", "local t = redis.pcall('set', 'x', 'y') return t['err']", "1", "x"]),
            eval("return redis.pcall('nosuchcommand')", &["0"]),
            eval("return redis.call('get')", &["0"]),
            eval("return redis.call('set', {})", &["0"]),
            eval("return redis.pcall('select', 99)", &["0"]),
            eval("return redis.error_reply('MY_CODE custom')", &["0"]),
            cmd(&["INFO", "errorstats"]),
            command_counts("eval eval_ro select set get"),
            eval("return redis.call('debug', 'sleep', 0)", &["0"]),
            cmd(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"]),
            eval("return redis.call('debug', 'protocol', 'attrib')", &["0"]),
            eval("redis.setresp(3) return redis.call('debug', 'protocol', 'attrib')", &["0"]),
            eval("redis.setresp(3) return redis.call('debug', 'protocol', 'bignum')", &["0"]),
            cmd(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"]),
            eval("return redis.call('debug', 'sleep', 0)", &["0"]),
            eval("return redis.pcall('xread', 'BLOCK', 0, 'STREAMS', 's', '$')", &["1", "s"]),
            eval("return redis.pcall('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 0, 'STREAMS', 's', '>')", &["1", "s"]),
            cmd(&["SADD", "set", "c", "a", "b", "aa"]),
            eval("return redis.call('sort', KEYS[1], 'by', 'nosort')", &["1", "set"]),
            // Over maxmemory (1 byte: always).
            cmd(&["SET", "x", "123"]),
            cmd(&["CONFIG", "SET", "maxmemory", "1"]),
            cmd(&["CONFIG", "RESETSTAT"]),
            eval("return redis.call('set', 'x', 1)", &["1", "x"]),
            eval("local t = redis.pcall('set', 'x', 1) return t['err']", &["1", "x"]),
            eval("return redis.pcall('set', 'x', 1)", &["1", "x"]),
            eval("return redis.call('get', 'x')", &["1", "x"]),
            eval("#!lua flags=\nreturn 1", &["0"]),
            eval("#!lua\nreturn 1", &["0"]),
            eval("#!lua flags=no-writes\nreturn redis.call('get', 'x')", &["1", "x"]),
            eval("#!lua flags=allow-oom\nredis.call('set', 'x', 1) return redis.call('get', 'x')", &["1", "x"]),
            cmd(&["INFO", "errorstats"]),
            command_counts("eval set"),
            cmd(&["SET", "y", "1"]),
            cmd(&["GET", "x"]),
            cmd(&["MULTI"]),
            cmd(&["GET", "x"]),
            cmd(&["EXEC"]),
            cmd(&["CONFIG", "SET", "maxmemory", "0"]),
            cmd(&["MULTI"]),
            cmd(&["GET", "x"]),
            cmd(&["SET", "y", "2"]),
            cmd(&["CONFIG", "SET", "maxmemory", "1"]),
            cmd(&["EXEC"]),
            cmd(&["MULTI"]),
            cmd(&["GET", "x"]),
            cmd(&["CONFIG", "SET", "maxmemory", "0"]),
            cmd(&["EXEC"]),
            cmd(&["MULTI"]),
            eval("#!lua\nreturn 1", &["0"]),
            cmd(&["CONFIG", "SET", "maxmemory", "1"]),
            cmd(&["EXEC"]),
            cmd(&["CONFIG", "SET", "maxmemory", "0"]),
            // Not enough replicas (quince has none; neither has this redis).
            cmd(&["CONFIG", "SET", "min-replicas-to-write", "1"]),
            cmd(&["SET", "x", "1"]),
            cmd(&["GET", "x"]),
            eval("return redis.call('get', 'x')", &["1", "x"]),
            eval("#!lua flags=no-writes\nreturn redis.call('get', 'x')", &["1", "x"]),
            eval("#!lua\nreturn redis.call('get', 'x')", &["1", "x"]),
            eval("return redis.call('set', 'x', 1)", &["1", "x"]),
            cmd(&["MULTI"]),
            cmd(&["INCR", "x"]),
            cmd(&["EXEC"]),
            cmd(&["MULTI"]),
            cmd(&["GET", "x"]),
            cmd(&["EXEC"]),
            cmd(&["CONFIG", "SET", "min-replicas-to-write", "0"]),
            cmd(&["MULTI"]),
            cmd(&["INCR", "x"]),
            cmd(&["CONFIG", "SET", "min-replicas-to-write", "1"]),
            cmd(&["EXEC"]),
            cmd(&["CONFIG", "SET", "min-replicas-to-write", "0"]),
            cmd(&["GET", "x"]),
        ],
    );
}

/// Time stands still inside a script: a key can't expire half way through it.
#[test]
fn script_time_is_frozen() {
    run(
        "script time",
        &[
            cmd(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"]),
            eval("redis.call('SET', 'key', 'value', 'PX', '1') redis.call('DEBUG', 'SLEEP', 0.01) return redis.call('EXISTS', 'key')", &["0"]),
            cmd(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"]),
            cmd(&["EXISTS", "key"]),
            cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]),
            cmd(&["SET", "key", "value", "PX", "1"]),
            cmd(&["DEBUG", "SLEEP", "0.01"]),
            cmd(&["DEBUG", "OBJECT", "key"]).compare(Compare::ErrorOrNot),
            eval("return redis.call('EXISTS', 'key')", &["0"]),
            cmd(&["EXISTS", "key"]),
            cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]),
        ],
    );
}

#[test]
fn functions() {
    let lib = "#!lua name=mylib\n\
        redis.register_function('f1', function(keys, args) return redis.call('set', keys[1], args[1]) end)\n\
        redis.register_function{function_name='f2', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}";
    let single = "#!lua name=one\n\
        redis.register_function{function_name='Only', callback=function() return 1 end, flags={'no-writes', 'allow-oom'}, description='d'}";
    run(
        "functions",
        &[
            cmd(&["FUNCTION", "FLUSH"]),
            cmd(&["FUNCTION", "LOAD", lib]),
            cmd(&["FUNCTION", "LOAD", lib]),
            cmd(&["FUNCTION", "LOAD", "REPLACE", lib]),
            cmd(&["FCALL", "f1", "1", "k", "v"]),
            cmd(&["FCALL", "f2", "1", "k"]),
            cmd(&["FCALL_RO", "f2", "1", "k"]),
            cmd(&["FCALL_RO", "f1", "1", "k", "v"]),
            cmd(&["FCALL", "nosuch", "0"]),
            cmd(&["FCALL", "f1", "x"]),
            cmd(&["FCALL", "f1", "5", "k"]),
            cmd(&["FCALL", "f1", "-1"]),
            // Functions of a library are listed in hash order: list a one-function library.
            cmd(&["FUNCTION", "LOAD", single]),
            cmd(&["FUNCTION", "DELETE", "mylib"]),
            cmd(&["FUNCTION", "LIST"]),
            cmd(&["FUNCTION", "LIST", "WITHCODE"]),
            cmd(&["FUNCTION", "LIST", "LIBRARYNAME", "on*"]),
            cmd(&["FCALL", "ONLY", "0"]),
            cmd(&["FUNCTION", "LOAD", "REPLACE", lib]),
            cmd(&["FUNCTION", "LIST", "LIBRARYNAME", "zz*"]),
            cmd(&["FUNCTION", "LIST", "LIBRARYNAME"]),
            cmd(&["FUNCTION", "LIST", "BAD"]),
            cmd(&["FUNCTION", "STATS"]),
            cmd(&["FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('f1', function() return 1 end)"]),
            cmd(&["FUNCTION", "LOAD", "#!lua name=empty\nreturn 1"]),
            cmd(&["FUNCTION", "LOAD", "#!lua name=bad\nredis.call('ping')"]),
            cmd(&["FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function('bad-name', function() end)"]),
            cmd(&[
                "FUNCTION",
                "LOAD",
                "#!lua name=bad\nredis.register_function{function_name='x', callback=function() end, flags={'nope'}}",
            ]),
            cmd(&["FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function('x')"]),
            cmd(&["FUNCTION", "LOAD", "#!lua name=bad\nlocal s = string.format('x')"]),
            cmd(&["FUNCTION", "LOAD", "#!lua name=bad\nsyntax error here"]),
            cmd(&["FUNCTION", "LOAD", "#!lua\nreturn 1"]),
            cmd(&["FUNCTION", "LOAD", "#!lua name=a name=b\nreturn 1"]),
            cmd(&["FUNCTION", "LOAD", "#!lua name=a x=y\nreturn 1"]),
            cmd(&["FUNCTION", "LOAD", "#!js name=a\nreturn 1"]),
            cmd(&["FUNCTION", "LOAD", "no shebang"]),
            cmd(&["FUNCTION", "LOAD", "#!lua name=bad-name\nreturn 1"]),
            cmd(&["FUNCTION", "LOAD", "BADOPT", lib]),
            cmd(&["FUNCTION", "LOAD", "#!lua name=errs\nredis.register_function('e1', function() return x end)"]),
            cmd(&["FCALL", "e1", "0"]),
            cmd(&["FUNCTION", "DELETE", "errs"]),
            cmd(&["FUNCTION", "DELETE", "errs"]),
            cmd(&["FUNCTION", "KILL"]),
            cmd(&["FUNCTION", "HELP"]),
            cmd(&["FUNCTION", "FLUSH", "BAD"]),
            cmd(&["FUNCTION", "FLUSH", "SYNC", "EXTRA"]),
            cmd(&["FUNCTION", "FLUSH", "ASYNC"]),
            cmd(&["FUNCTION", "LIST"]),
            cmd(&["FCALL", "f1", "1", "k", "v"]),
            cmd(&["FUNCTION", "STATS"]),
        ],
    );
}

/// A script that runs past `busy-reply-threshold` makes other clients get BUSY until
/// SCRIPT KILL stops it; a script that wrote can't be killed.
#[test]
fn busy_script_and_script_kill() {
    let server = start_quince(QUINCE, &[]);
    let mut admin = server.client();
    assert_eq!(admin.call(&["CONFIG", "SET", "busy-reply-threshold", "50"]), b"+OK\r\n");
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), b"-NOTBUSY No scripts in execution right now.\r\n");
    let mut runner = server.client();
    runner.send(&["EVAL", "while true do end", "0"]);
    std::thread::sleep(Duration::from_millis(200));
    let mut other = server.client();
    let busy = other.call(&["PING"]);
    assert_eq!(busy, b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n",);
    assert_eq!(other.call(&["FUNCTION", "KILL"]), busy);
    assert_eq!(other.call(&["SCRIPT", "KILL"]), b"+OK\r\n");
    let reply = String::from_utf8(runner.read_reply()).unwrap();
    assert!(reply.starts_with("-ERR Script killed by user with SCRIPT KILL..."), "{reply}");
    assert_eq!(other.call(&["PING"]), b"+PONG\r\n");

    runner.send(&["EVAL", "redis.call('set', 'k', 1) while true do end", "0"]);
    std::thread::sleep(Duration::from_millis(200));
    let unkillable = String::from_utf8(other.call(&["SCRIPT", "KILL"])).unwrap();
    assert!(unkillable.starts_with("-UNKILLABLE Sorry the script already executed write commands"), "{unkillable}");
}

/// FUNCTION DUMP / RESTORE: payloads cross between quince and redis-server both ways
/// (Redis compresses long libraries with LZF, quince does not: both read both), and the
/// policies and errors match.
#[test]
fn function_dump_restore() {
    let Some(diff) = Differential::start(QUINCE) else { return };
    let lib = |name: &str, func: &str| {
        format!("#!lua name={name}\nredis.register_function('{func}', function() return '{}' end)", "x".repeat(60))
    };
    for redis_to_quince in [true, false] {
        let (mut q, mut r) = (diff.quince.client(), diff.redis.client());
        let (from, to) = if redis_to_quince { (&mut r, &mut q) } else { (&mut q, &mut r) };
        from.call(&["FUNCTION", "FLUSH"]);
        to.call(&["FUNCTION", "FLUSH"]);
        assert_eq!(from.call(&["FUNCTION", "LOAD", &lib("liba", "fa")]), b"$4\r\nliba\r\n");
        assert_eq!(from.call(&["FUNCTION", "LOAD", &lib("libb", "fb")]), b"$4\r\nlibb\r\n");
        let dump = from.call(&["FUNCTION", "DUMP"]);
        let payload = &dump[dump.iter().position(|&b| b == b'\n').unwrap() + 1..dump.len() - 2];
        assert_eq!(to.call(&[&b"FUNCTION"[..], b"RESTORE", payload]), b"+OK\r\n");
        assert_eq!(to.call(&["FCALL", "fb", "0"]), format!("$60\r\n{}\r\n", "x".repeat(60)).into_bytes());
        let again = to.call(&[&b"FUNCTION"[..], b"RESTORE", payload]);
        assert!(again.starts_with(b"-ERR Library lib"), "{}", String::from_utf8_lossy(&again));
        assert_eq!(to.call(&[&b"FUNCTION"[..], b"RESTORE", payload, b"REPLACE"]), b"+OK\r\n");
        assert_eq!(to.call(&[&b"FUNCTION"[..], b"RESTORE", payload, b"FLUSH"]), b"+OK\r\n");
        // FUNCTION LIST's order is the server's own: compare what the functions answer.
        assert_eq!(from.call(&["FCALL", "fa", "0"]), to.call(&["FCALL", "fa", "0"]));
        assert_eq!(
            to.call(&["FUNCTION", "LIST", "LIBRARYNAME", "libb"]),
            from.call(&["FUNCTION", "LIST", "LIBRARYNAME", "libb"])
        );
    }
    let mut diff = diff;
    diff.run(
        "function restore errors",
        &[
            cmd(&["FUNCTION", "RESTORE", "bad payload"]),
            cmd(&["FUNCTION", "RESTORE", "x"]),
            cmd(&["FUNCTION", "RESTORE", "x", "SOMETHING"]),
            cmd(&["FUNCTION", "RESTORE", "x", "FLUSH", "extra"]),
            cmd(&["FUNCTION", "RESTORE"]),
            cmd(&["FUNCTION", "DUMP", "extra"]),
            cmd(&["FUNCTION", "FLUSH"]),
            cmd(&["FUNCTION", "DUMP"]),
            Step::bytes(&[b"FUNCTION", b"RESTORE", b"\xf5\x0c#!lua name=a\n\x0a\x00\x33\x9b\x1a\x62\x0e\x9a\xc4\xe3"])
                .compare(Compare::ErrorOrNot),
            cmd(&["FUNCTION", "HELP"]),
        ],
    );
}

/// INFO memory's scripting fields: Redis 7.0's names in its order, and values that follow
/// what the VMs and caches hold, on both servers.
#[test]
fn info_memory_of_scripts() {
    let Some(diff) = Differential::start(QUINCE) else { return };
    let field = |info: &str, name: &str| -> u64 {
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .unwrap_or_else(|| panic!("no {name} in INFO"))
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} is not a number"))
    };
    let scripting_names = |info: &str| -> Vec<String> {
        info.lines()
            .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
            .filter(|k| ["lua", "script", "function", "librar", "vm_"].iter().any(|w| k.contains(w)))
            .collect()
    };
    let body = "return redis.call('PING') .. 'a fairly long script body to be counted'";
    let library = "#!lua name=memlib\nredis.register_function('f', function() return 1 end)";
    let mut names = Vec::new();
    for server in [&diff.redis, &diff.quince] {
        let mut c = server.client();
        let info =
            |c: &mut quince_test_util::RawClient| String::from_utf8_lossy(&c.call(&["INFO", "memory"])).into_owned();
        c.call(&["SCRIPT", "FLUSH"]);
        c.call(&["FUNCTION", "FLUSH"]);
        c.call(&["EVAL", "return 1", "0"]);
        let before = info(&mut c);
        assert!(field(&before, "used_memory_lua") > 0, "{} runs a Lua VM", server.name);
        assert_eq!(field(&before, "used_memory_lua"), field(&before, "used_memory_vm_eval"));
        c.call(&["SCRIPT", "LOAD", body]);
        let loaded = info(&mut c);
        assert_eq!(field(&loaded, "number_of_cached_scripts"), field(&before, "number_of_cached_scripts") + 1);
        assert!(
            field(&loaded, "used_memory_scripts_eval")
                >= field(&before, "used_memory_scripts_eval") + body.len() as u64,
            "{}: a cached script's body counts",
            server.name
        );
        c.call(&["FUNCTION", "LOAD", library]);
        let with_library = info(&mut c);
        assert!(field(&with_library, "used_memory_functions") >= library.len() as u64);
        assert!(field(&with_library, "used_memory_vm_functions") > 0);
        assert_eq!(
            field(&with_library, "used_memory_vm_total"),
            field(&with_library, "used_memory_vm_eval") + field(&with_library, "used_memory_vm_functions")
        );
        assert_eq!(
            field(&with_library, "used_memory_scripts"),
            field(&with_library, "used_memory_scripts_eval") + field(&with_library, "used_memory_functions")
        );
        c.call(&["SCRIPT", "FLUSH"]);
        let flushed = info(&mut c);
        assert_eq!(field(&flushed, "number_of_cached_scripts"), 0);
        assert_eq!(field(&flushed, "used_memory_scripts_eval"), 0);
        names.push(scripting_names(&flushed));
    }
    assert_eq!(names[0], names[1], "INFO memory's scripting fields, redis-server then quince");
}

/// redis.call with thousands of arguments (`unpack` of a big table, as Redis's own suite
/// does): the reply still has room on the Lua stack.
#[test]
fn redis_call_with_thousands_of_arguments() {
    run(
        "unpack into redis.call",
        &[
            eval("local a = {} for i = 1, 7999 do a[i] = 1 end return redis.call('LPUSH', 'l', unpack(a))", &["0"]),
            eval("local a = {} for i = 1, 7999 do a[i] = 1 end return redis.pcall('LPUSH', 'l', unpack(a))", &["0"]),
            eval("local a = {'x'} for i = 2, 7999 do a[i] = 1 end return redis.pcall('LPUSH', 'l', unpack(a))", &["0"]),
            cmd(&["LLEN", "l"]),
        ],
    );
}

/// On a replica whose link is down with `replica-serve-stale-data no`: functions and
/// shebang scripts without `allow-stale` get MASTERDOWN, commands inside an allowed one are
/// refused unless flagged `stale`; a writing script on a read-only replica gets READONLY.
#[test]
fn script_flags_on_a_stale_replica_match_redis() {
    let library = "#!lua name=stale\n\
        redis.register_function{function_name='f1', callback=function() return 'hello' end, flags={'no-writes'}}\n\
        redis.register_function{function_name='f2', callback=function() return 'hello' end, flags={'allow-stale', 'no-writes'}}\n\
        redis.register_function{function_name='f3', callback=function() return redis.call('get', 'x') end, flags={'allow-stale', 'no-writes'}}\n\
        redis.register_function{function_name='f4', callback=function() return redis.call('ping') end, flags={'allow-stale', 'no-writes'}}\n\
        redis.register_function{function_name='w', callback=function() return 1 end, flags={'allow-stale'}}";
    run(
        "stale replica",
        &[
            cmd(&["FUNCTION", "LOAD", "REPLACE", library]),
            cmd(&["CONFIG", "SET", "replica-serve-stale-data", "no"]),
            cmd(&["REPLICAOF", "127.0.0.1", "1"]),
            cmd(&["FCALL", "f1", "0"]),
            cmd(&["FCALL", "f2", "0"]),
            cmd(&["FCALL", "f3", "0"]),
            cmd(&["FCALL", "f4", "0"]),
            cmd(&["FCALL", "w", "0"]),
            cmd(&["EVAL", "#!lua flags=no-writes\nreturn 1", "0"]),
            cmd(&["EVAL", "#!lua flags=no-writes,allow-stale\nreturn 1", "0"]),
            // Without a shebang: refused before it runs (scriptPrepareForRun).
            cmd(&["EVAL", "return redis.call('get', KEYS[1])", "1", "x"]),
            cmd(&["EVAL", "return 1", "0"]),
            cmd(&["CONFIG", "SET", "replica-serve-stale-data", "yes"]),
            // A read-only replica: a write inside a script without shebang is refused.
            cmd(&["EVAL", "return redis.call('set', KEYS[1], 1)", "1", "x"]),
            cmd(&["EVAL", "return redis.call('get', KEYS[1])", "1", "x"]),
            cmd(&["FCALL", "f1", "0"]),
            cmd(&["FCALL", "w", "0"]),
            cmd(&["REPLICAOF", "NO", "ONE"]),
            cmd(&["FCALL", "w", "0"]),
        ],
    );
}

/// A transaction queued on a master and run after the server became a read-only replica:
/// a queued script that declares writes aborts EXEC (its flags are the transaction's), one
/// without a shebang runs and its write fails inside (Redis's unit/scripting "no-writes
/// shebang flag on replica").
#[test]
fn queued_scripts_on_a_server_turned_replica_match_redis() {
    let Some(diff) = Differential::start(QUINCE) else { return };
    let mut replies = Vec::new();
    for port in [diff.redis.port, diff.quince.port] {
        let mut admin = quince_test_util::RawClient::connect(port);
        let mut declared = quince_test_util::RawClient::connect(port);
        let mut compat = quince_test_util::RawClient::connect(port);
        let seen = vec![
            declared.call(&["MULTI"]),
            declared.call(&["EVAL", "#!lua\nreturn 1", "0"]),
            compat.call(&["MULTI"]),
            compat.call(&["EVAL", "redis.call('set', KEYS[1], 1) return 1", "1", "x"]),
            compat.call(&["EVAL", "return redis.call('get', KEYS[1])", "1", "x"]),
            admin.call(&["REPLICAOF", "127.0.0.1", "1"]),
            declared.call(&["EXEC"]),
            compat.call(&["EXEC"]),
            admin.call(&["REPLICAOF", "NO", "ONE"]),
        ];
        // The script's SHA names it in the error: the same on both.
        replies.push(seen.into_iter().map(|r| String::from_utf8_lossy(&r).into_owned()).collect::<Vec<_>>());
    }
    assert_eq!(replies[1], replies[0], "quince (left) against redis-server (right)");
    assert!(replies[0][6].starts_with("-EXECABORT Transaction discarded because of: READONLY"), "{:?}", replies[0]);
    assert!(replies[0][7].contains("READONLY You can't write against a read only replica."), "{:?}", replies[0]);
}
