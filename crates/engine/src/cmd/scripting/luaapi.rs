//! What the C libraries of Redis's Lua get from the Lua C API, for our Rust libraries:
//! argument checks with lauxlib's error texts, Lua's number/string coercions.
//!
//! Argument errors name the function as the calling script does (`bad argument #2 to
//! 'pack'`, or `'p'` through a local alias, `'?'` through pcall). Rust can't see the call
//! site, so the message carries `NAME_MARK` and the prelude's wrapper puts the name in.

use mlua::{Table, Value};

use super::lua_err;

/// The arguments of a function the prelude wraps with `packed` (a table and the count),
/// numbers read exactly: mlua hands a number within 2^-52 of an integer over as that
/// integer (1e-30 as 0), so every number is read again as a float.
pub(super) fn exact_args(t: &Table, n: i64) -> mlua::Result<Vec<Value>> {
    (1..=n).map(|i| exact_number(t.raw_get(i)?, || t.raw_get::<f64>(i))).collect()
}

/// `v`, read from somewhere by `read_exact` again if it is a number (see `exact_args`).
pub(super) fn exact_number(v: Value, read_exact: impl FnOnce() -> mlua::Result<f64>) -> mlua::Result<Value> {
    match v {
        Value::Integer(_) => Ok(Value::Number(read_exact()?)),
        other => Ok(other),
    }
}

/// Replaced by the called function's name in the prelude's `wrap`.
pub(super) const NAME_MARK: char = '\u{1}';

/// An error the Lua VM itself raises inside a C function ("table index is nil"): no
/// position is added to it.
pub(super) fn vm_error(msg: &str) -> mlua::Error {
    lua_err(format!("\u{2}{msg}"))
}

/// Lua's type name (`lua_typename`): both number kinds are "number", light userdata is
/// "userdata"; `None` is an absent argument.
pub(super) fn type_name(v: Option<&Value>) -> &'static str {
    match v {
        None => "no value",
        Some(Value::Nil) => "nil",
        Some(Value::Boolean(_)) => "boolean",
        Some(Value::LightUserData(_)) | Some(Value::UserData(_)) => "userdata",
        Some(Value::Integer(_)) | Some(Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Table(_)) => "table",
        Some(Value::Function(_)) => "function",
        Some(Value::Thread(_)) => "thread",
        Some(_) => "userdata",
    }
}

/// luaL_argerror: `bad argument #n to '<name>' (msg)`.
pub(super) fn arg_error(n: usize, msg: &str) -> mlua::Error {
    lua_err(format!("bad argument #{n} to '{NAME_MARK}' ({msg})"))
}

/// luaL_typerror.
pub(super) fn type_error(args: &[Value], n: usize, expected: &str) -> mlua::Error {
    arg_error(n, &format!("{expected} expected, got {}", type_name(args.get(n - 1))))
}

/// luaO_str2d: what strtod accepts, whole string but surrounding whitespace.
pub(super) fn str_to_number(s: &[u8]) -> Option<f64> {
    // strtod stops at a NUL byte, and Lua looks no further.
    let s = s.split(|&b| b == 0).next().unwrap_or_default();
    let s = std::str::from_utf8(s).ok()?;
    let t = s.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r'));
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if body.len() > 2 && (body.starts_with("0x") || body.starts_with("0X")) {
        let digits = &body[2..];
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let v = digits.bytes().fold(0f64, |acc, b| acc * 16.0 + (b as char).to_digit(16).unwrap_or(0) as f64);
        return Some(if neg { -v } else { v });
    }
    let lower = body.to_ascii_lowercase();
    let special = match lower.as_str() {
        "inf" | "infinity" => Some(f64::INFINITY),
        "nan" => Some(f64::NAN),
        _ => None,
    };
    if let Some(v) = special {
        return Some(if neg { -v } else { v });
    }
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')) {
        return None;
    }
    t.parse::<f64>().ok()
}

/// lua_tonumber (None where it gives 0 for a non-number).
pub(super) fn to_number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        Value::String(s) => str_to_number(&s.as_bytes()),
        _ => None,
    }
}

/// luaL_checknumber for argument `n` (1-based).
pub(super) fn check_number(args: &[Value], n: usize) -> mlua::Result<f64> {
    to_number(args.get(n - 1)).ok_or_else(|| type_error(args, n, "number"))
}

/// C's double to 64-bit integer conversion as x86-64 does it (out of range: i64::MIN).
pub(super) fn c_double_to_i64(d: f64) -> i64 {
    if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

/// luaL_checkinteger.
pub(super) fn check_integer(args: &[Value], n: usize) -> mlua::Result<i64> {
    check_number(args, n).map(c_double_to_i64)
}

/// luaL_optinteger.
pub(super) fn opt_integer(args: &[Value], n: usize, default: i64) -> mlua::Result<i64> {
    match args.get(n - 1) {
        None | Some(Value::Nil) => Ok(default),
        Some(_) => check_integer(args, n),
    }
}

/// luaL_checklstring: strings, and numbers as Lua prints them.
pub(super) fn check_lstring(args: &[Value], n: usize) -> mlua::Result<Vec<u8>> {
    match args.get(n - 1) {
        Some(Value::String(s)) => Ok(s.as_bytes().to_vec()),
        Some(Value::Integer(i)) => Ok(fmt_14g(*i as f64).into_bytes()),
        Some(Value::Number(f)) => Ok(fmt_14g(*f).into_bytes()),
        _ => Err(type_error(args, n, "string")),
    }
}

/// `%.14g`, Lua 5.1's number format (LUA_NUMBER_FMT), with glibc's inf/nan spelling.
pub(super) fn fmt_14g(n: f64) -> String {
    fmt_g(n, 14)
}

/// C's `%.<precision>g` (precision 1 to 17).
pub(super) fn fmt_g(n: f64, precision: usize) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf".into() } else { "inf".into() };
    }
    let p = precision.clamp(1, 17);
    if n == n.trunc() && n.abs() < 10f64.powi(p as i32) {
        if n == 0.0 && n.is_sign_negative() {
            return "-0".into();
        }
        return format!("{}", n as i64);
    }
    let sci = format!("{n:.*e}", p - 1);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let m = if mantissa.contains('.') { mantissa.trim_end_matches('0').trim_end_matches('.') } else { mantissa };
        format!("{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        let s = format!("{:.*}", (p as i32 - 1 - exp).max(0) as usize, n);
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lua_number_strings() {
        assert_eq!(str_to_number(b" 12 "), Some(12.0));
        assert_eq!(str_to_number(b"0x10"), Some(16.0));
        assert_eq!(str_to_number(b"-1.5e3"), Some(-1500.0));
        assert_eq!(str_to_number(b"1e"), None);
        assert_eq!(str_to_number(b"abc"), None);
        assert_eq!(str_to_number(b""), None);
        assert_eq!(str_to_number(b"12\0xyz"), Some(12.0));
        assert_eq!(fmt_14g(0.1), "0.1");
        assert_eq!(fmt_14g(1e100), "1e+100");
        assert_eq!(fmt_14g(3.0), "3");
        assert_eq!(fmt_14g(f64::INFINITY), "inf");
        assert_eq!(fmt_14g(123456789012345.0), "1.2345678901234e+14");
    }
}
