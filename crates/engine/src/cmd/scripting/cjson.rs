//! Redis's `cjson` library (lua-cjson 2.1 as bundled with Redis 7.0).

use std::sync::Arc;

use mlua::{Lua, MultiValue, Table, Value};
use parking_lot::Mutex;

use super::lua_err;
use super::luaapi::{self, arg_error, check_integer, check_lstring, exact_args, exact_number};

/// cjson.null: a light userdata NULL, as lua-cjson uses.
fn cjson_null() -> Value {
    Value::LightUserData(mlua::LightUserData(std::ptr::null_mut()))
}

fn json_escape(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in s {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            0..=31 | 127 => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// lua-cjson's number format: `%.<precision>g` (`encode_number_precision`, 14 by default).
fn json_number(n: f64, out: &mut Vec<u8>, precision: usize) -> mlua::Result<()> {
    if n.is_nan() || n.is_infinite() {
        return Err(lua_err("Cannot serialise number: must not be NaN or Inf"));
    }
    out.extend_from_slice(luaapi::fmt_g(n, precision).as_bytes());
    Ok(())
}

/// luaL_checkoption on the first argument: the index of the option it names.
fn check_option(args: &[Value], options: &[&[u8]]) -> mlua::Result<usize> {
    let name = check_lstring(args, 1)?;
    options
        .iter()
        .position(|o| *o == &name[..])
        .ok_or_else(|| arg_error(1, &format!("invalid option '{}'", String::from_utf8_lossy(&name))))
}

/// json_arg_init: at most `max` arguments, padded with nils.
fn settings_args(a: &Table, n: i64, max: usize) -> mlua::Result<Vec<Value>> {
    let mut args = exact_args(a, n)?;
    if args.len() > max {
        return Err(arg_error(max + 1, "found too many arguments"));
    }
    args.resize(max, Value::Nil);
    Ok(args)
}

/// lua-cjson's settings (encode_max_depth ...).
#[derive(Clone, Copy)]
struct JsonConfig {
    encode_max_depth: usize,
    decode_max_depth: usize,
    /// 0 off (an error), 1 on (`nan`, `inf`), 2 `null`.
    encode_invalid_numbers: u8,
    /// `encode_number_precision`: significant digits of encoded numbers (1 to 14).
    number_precision: usize,
    /// `encode_keep_buffer`: only reported (quince's encoder has no buffer to keep).
    keep_buffer: bool,
}

/// Nesting quince allows whatever the configured depth (each level recurses in Rust).
const JSON_DEPTH_CAP: usize = 1000;

fn json_encode(v: &Value, out: &mut Vec<u8>, depth: usize, cfg: JsonConfig) -> mlua::Result<()> {
    let max = cfg.encode_max_depth.min(JSON_DEPTH_CAP);
    if depth > max && matches!(v, Value::Table(_)) {
        return Err(lua_err(format!("Cannot serialise, excessive nesting ({depth})")));
    }
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(i) => json_number(*i as f64, out, cfg.number_precision)?,
        Value::Number(n) if cfg.encode_invalid_numbers == 2 && (n.is_nan() || n.is_infinite()) => {
            out.extend_from_slice(b"null")
        }
        Value::Number(n) if cfg.encode_invalid_numbers == 1 && (n.is_nan() || n.is_infinite()) => out
            .extend_from_slice(if n.is_nan() {
                b"nan"
            } else if *n > 0.0 {
                b"inf"
            } else {
                b"-inf"
            }),
        Value::Number(n) => json_number(*n, out, cfg.number_precision)?,
        Value::String(s) => json_escape(&s.as_bytes(), out),
        Value::Table(t) => {
            // Two passes over the pairs, holding one at a time: holding them all would take a
            // Lua reference each, and a big table would run out of them.
            let mut count = 0usize;
            let mut max = 0usize;
            let mut is_array = true;
            for pair in t.clone().pairs::<Value, Value>() {
                let (k, _) = pair?;
                count += 1;
                let idx = match k {
                    Value::Integer(i) if i >= 1 => Some(i as usize),
                    Value::Number(n) if n >= 1.0 && n.fract() == 0.0 => Some(n as usize),
                    _ => None,
                };
                match idx {
                    Some(i) if is_array => max = max.max(i),
                    _ => is_array = false,
                }
            }
            if is_array && count > 0 {
                if max > 10 && max > count * 2 {
                    return Err(lua_err("Cannot serialise table: excessively sparse array"));
                }
                out.push(b'[');
                for i in 1..=max {
                    if i > 1 {
                        out.push(b',');
                    }
                    let v = exact_number(t.raw_get(i)?, || t.raw_get::<f64>(i))?;
                    json_encode(&v, out, depth + 1, cfg)?;
                }
                out.push(b']');
            } else {
                out.push(b'{');
                for (n, pair) in t.clone().pairs::<Value, Value>().enumerate() {
                    let (k, v) = pair?;
                    if n > 0 {
                        out.push(b',');
                    }
                    match &k {
                        Value::String(s) => json_escape(&s.as_bytes(), out),
                        Value::Integer(_) | Value::Number(_) => {
                            let mut num = Vec::new();
                            json_encode(&k, &mut num, depth + 1, cfg)?;
                            json_escape(&num, out);
                        }
                        _ => return Err(lua_err("Cannot serialise table: table key must be a number or string")),
                    }
                    out.push(b':');
                    let v = exact_number(v, || t.raw_get::<f64>(k.clone()))?;
                    json_encode(&v, out, depth + 1, cfg)?;
                }
                out.push(b'}');
            }
        }
        other => return Err(lua_err(format!("Cannot serialise {}: type not supported", other.type_name()))),
    }
    Ok(())
}

struct JsonParser<'a> {
    s: &'a [u8],
    pos: usize,
    max_depth: usize,
}

impl JsonParser<'_> {
    fn ws(&mut self) {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    fn fail<T>(&self, what: &str) -> mlua::Result<T> {
        let rest = &self.s[self.pos.min(self.s.len())..];
        let token = match rest.first() {
            None => "T_END",
            Some(b',') => "T_COMMA",
            Some(b':') => "T_COLON",
            Some(b'[') => "T_ARR_BEGIN",
            Some(b']') => "T_ARR_END",
            Some(b'{') => "T_OBJ_BEGIN",
            Some(b'}') => "T_OBJ_END",
            Some(b'"') => "T_STRING",
            Some(b'-' | b'0'..=b'9') => "T_NUMBER",
            _ if rest.starts_with(b"true") || rest.starts_with(b"false") => "T_BOOLEAN",
            _ if rest.starts_with(b"null") => "T_NULL",
            _ => "invalid token",
        };
        Err(lua_err(format!("Expected {what} but found {token} at character {}", self.pos + 1)))
    }

    fn value(&mut self, lua: &Lua, depth: usize) -> mlua::Result<Value> {
        self.ws();
        if depth > self.max_depth && matches!(self.s.get(self.pos), Some(b'{' | b'[')) {
            return Err(lua_err(format!(
                "Found too many nested data structures ({depth}) at character {}",
                self.pos + 1
            )));
        }
        self.ws();
        let rest = &self.s[self.pos..];
        match rest.first() {
            Some(b'{') => {
                self.pos += 1;
                let t = lua.create_table()?;
                self.ws();
                if self.s.get(self.pos) == Some(&b'}') {
                    self.pos += 1;
                    return Ok(Value::Table(t));
                }
                loop {
                    self.ws();
                    if self.s.get(self.pos) != Some(&b'"') {
                        return self.fail("object key string");
                    }
                    let k = self.string(lua)?;
                    self.ws();
                    if self.s.get(self.pos) != Some(&b':') {
                        return self.fail("colon");
                    }
                    self.pos += 1;
                    let v = self.value(lua, depth + 1)?;
                    t.raw_set(k, v)?;
                    self.ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(Value::Table(t));
                        }
                        _ => return self.fail("comma or object end"),
                    }
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let t = lua.create_table()?;
                self.ws();
                if self.s.get(self.pos) == Some(&b']') {
                    self.pos += 1;
                    return Ok(Value::Table(t));
                }
                let mut i = 1;
                loop {
                    let v = self.value(lua, depth + 1)?;
                    t.raw_set(i, v)?;
                    i += 1;
                    self.ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(Value::Table(t));
                        }
                        _ => return self.fail("comma or array end"),
                    }
                }
            }
            Some(b'"') => Ok(Value::String(self.string(lua)?)),
            _ if rest.starts_with(b"true") => {
                self.pos += 4;
                Ok(Value::Boolean(true))
            }
            _ if rest.starts_with(b"false") => {
                self.pos += 5;
                Ok(Value::Boolean(false))
            }
            _ if rest.starts_with(b"null") => {
                self.pos += 4;
                Ok(cjson_null())
            }
            Some(b'-' | b'0'..=b'9') => {
                let end = rest
                    .iter()
                    .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .unwrap_or(rest.len());
                match std::str::from_utf8(&rest[..end]).ok().and_then(|s| s.parse::<f64>().ok()) {
                    Some(n) => {
                        self.pos += end;
                        Ok(Value::Number(n))
                    }
                    None => self.fail("value"),
                }
            }
            _ => self.fail("value"),
        }
    }

    fn string(&mut self, lua: &Lua) -> mlua::Result<mlua::String> {
        self.pos += 1;
        let mut buf = Vec::new();
        loop {
            let Some(&b) = self.s.get(self.pos) else {
                return Err(lua_err(format!(
                    "Expected value but found unexpected end of string at character {}",
                    self.pos + 1
                )));
            };
            self.pos += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.s.get(self.pos) else { return self.fail("value") };
                    self.pos += 1;
                    match e {
                        b'n' => buf.push(b'\n'),
                        b't' => buf.push(b'\t'),
                        b'r' => buf.push(b'\r'),
                        b'b' => buf.push(8),
                        b'f' => buf.push(12),
                        b'u' => {
                            // lua-cjson refuses bad hex and lone or unpaired surrogates,
                            // naming the escape's backslash.
                            let escape_at = self.pos - 2;
                            let invalid = || {
                                Err(lua_err(format!(
                                    "Expected value but found invalid unicode escape code at character {}",
                                    escape_at + 1
                                )))
                            };
                            let hex4 = |at: usize| {
                                self.s
                                    .get(at..at + 4)
                                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                                    .and_then(|h| u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok())
                            };
                            let Some(mut cp) = hex4(self.pos) else { return invalid() };
                            self.pos += 4;
                            if (0xDC00..0xE000).contains(&cp) {
                                return invalid();
                            }
                            if (0xD800..0xDC00).contains(&cp) {
                                let low = (self.s.get(self.pos..self.pos + 2) == Some(b"\\u"))
                                    .then(|| hex4(self.pos + 2))
                                    .flatten()
                                    .filter(|l| (0xDC00..0xE000).contains(l));
                                let Some(low) = low else { return invalid() };
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                                self.pos += 6;
                            }
                            let c = char::from_u32(cp).unwrap_or('\u{FFFD}');
                            let mut tmp = [0u8; 4];
                            buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                        }
                        other => buf.push(other),
                    }
                }
                _ => buf.push(b),
            }
        }
        lua.create_string(&buf)
    }
}

pub(super) fn cjson_library(lua: &Lua) -> mlua::Result<Table> {
    let cfg = Arc::new(Mutex::new(JsonConfig {
        encode_max_depth: 1000,
        decode_max_depth: 1000,
        encode_invalid_numbers: 0,
        number_precision: 14,
        keep_buffer: true,
    }));
    let t = lua.create_table()?;
    // encode, decode and the settings get their arguments packed by the prelude (see
    // `exact_args`), and check their count as lua-cjson does.
    let c = cfg.clone();
    t.raw_set(
        "encode",
        lua.create_function(move |lua, (a, n): (Table, i64)| {
            let args = exact_args(&a, n)?;
            if args.len() != 1 {
                return Err(arg_error(1, "expected 1 argument"));
            }
            let mut out = Vec::new();
            let cfg = *c.lock();
            json_encode(&args[0], &mut out, 1, cfg)?;
            lua.create_string(&out)
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set(
        "decode",
        lua.create_function(move |lua, (a, n): (Table, i64)| {
            let args = exact_args(&a, n)?;
            if args.len() != 1 {
                return Err(arg_error(1, "expected 1 argument"));
            }
            let bytes = check_lstring(&args, 1)?;
            let max_depth = c.lock().decode_max_depth.min(JSON_DEPTH_CAP);
            let mut p = JsonParser { s: &bytes, pos: 0, max_depth };
            let v = p.value(lua, 1)?;
            p.ws();
            if p.pos < bytes.len() {
                return p.fail("the end");
            }
            Ok(v)
        })?,
    )?;
    // Integer settings: the name, the field and the largest value lua-cjson takes.
    type Field = fn(&mut JsonConfig) -> &mut usize;
    let integers: [(&str, Field, i64); 3] = [
        ("encode_max_depth", |c| &mut c.encode_max_depth, i32::MAX as i64),
        ("decode_max_depth", |c| &mut c.decode_max_depth, i32::MAX as i64),
        ("encode_number_precision", |c| &mut c.number_precision, 14),
    ];
    for (name, field, max) in integers {
        let c = cfg.clone();
        t.raw_set(
            name,
            lua.create_function(move |_, (a, n): (Table, i64)| {
                let args = settings_args(&a, n, 1)?;
                let mut cfg = c.lock();
                if !matches!(args[0], Value::Nil) {
                    let v = check_integer(&args, 1)?;
                    if !(1..=max).contains(&v) {
                        return Err(arg_error(1, &format!("expected integer between 1 and {max}")));
                    }
                    *field(&mut cfg) = v as usize;
                }
                Ok(*field(&mut cfg) as f64)
            })?,
        )?;
    }
    let c = cfg.clone();
    t.raw_set(
        "encode_invalid_numbers",
        lua.create_function(move |lua, (a, n): (Table, i64)| {
            let args = settings_args(&a, n, 1)?;
            let mut cfg = c.lock();
            match &args[0] {
                Value::Nil => {}
                Value::Boolean(b) => cfg.encode_invalid_numbers = u8::from(*b),
                _ => cfg.encode_invalid_numbers = check_option(&args, &[b"off", b"on", b"null"])? as u8,
            }
            Ok(match cfg.encode_invalid_numbers {
                0 => Value::Boolean(false),
                1 => Value::Boolean(true),
                _ => Value::String(lua.create_string("null")?),
            })
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set(
        "encode_keep_buffer",
        lua.create_function(move |_, (a, n): (Table, i64)| {
            let args = settings_args(&a, n, 1)?;
            let mut cfg = c.lock();
            match &args[0] {
                Value::Nil => {}
                Value::Boolean(b) => cfg.keep_buffer = *b,
                _ => cfg.keep_buffer = check_option(&args, &[b"off", b"on"])? == 1,
            }
            Ok(cfg.keep_buffer)
        })?,
    )?;
    // Settings quince keeps at lua-cjson's defaults: asked, they report them; changing one
    // is refused rather than accepted and ignored.
    t.raw_set(
        "encode_sparse_array",
        lua.create_function(|_, (a, n): (Table, i64)| {
            let args = settings_args(&a, n, 3)?;
            if args.iter().any(|v| !matches!(v, Value::Nil)) {
                return Err(lua_err("encode_sparse_array: changing this setting is not supported by quince"));
            }
            Ok((false, 2.0, 10.0))
        })?,
    )?;
    t.raw_set(
        "decode_invalid_numbers",
        lua.create_function(|_, (a, n): (Table, i64)| {
            let args = settings_args(&a, n, 1)?;
            if !matches!(args[0], Value::Nil) {
                return Err(lua_err("decode_invalid_numbers: changing this setting is not supported by quince"));
            }
            Ok(true)
        })?,
    )?;
    t.raw_set("null", cjson_null())?;
    t.raw_set("_NAME", "cjson")?;
    t.raw_set("_VERSION", "2.1.0")?;
    // cjson.new(): an instance with settings of its own (the prelude wraps its functions).
    t.raw_set("new", lua.create_function(|lua, _: MultiValue| cjson_library(lua))?)?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjson_number_format() {
        let f = |n: f64| {
            let mut out = Vec::new();
            json_number(n, &mut out, 14).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(f(1.0), "1");
        assert_eq!(f(1.5), "1.5");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(1e20), "1e+20");
        assert_eq!(f(-3.25e-7), "-3.25e-07");
        assert_eq!(f(123456789012345.0), "1.2345678901234e+14");
        assert!(json_number(f64::NAN, &mut Vec::new(), 14).is_err());
        let p = |n: f64, precision: usize| {
            let mut out = Vec::new();
            json_number(n, &mut out, precision).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(p(4.56789, 3), "4.57");
        assert_eq!(p(123456.0, 3), "1.23e+05");
        assert_eq!(p(999.0, 3), "999");
        assert_eq!(p(9.99, 2), "10");
        assert_eq!(p(0.000123456, 2), "0.00012");
        assert_eq!(p(1.5, 1), "2");
    }
}
