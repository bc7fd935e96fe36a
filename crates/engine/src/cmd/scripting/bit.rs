//! LuaBitOp's `bit` library as Redis's scripting sandbox has it.

use mlua::{Lua, Table, Value, Variadic};

use super::lua_err;

/// LuaBitOp's number normalisation: round to nearest, keep the low 32 bits.
fn tobit(v: &Value) -> mlua::Result<i32> {
    let n = match v {
        Value::Integer(i) => *i as f64,
        Value::Number(n) => *n,
        Value::String(s) => s
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .ok_or_else(|| lua_err("bad argument (number expected)"))?,
        other => return Err(lua_err(format!("bad argument #1 (number expected, got {})", other.type_name()))),
    };
    let r = n.round_ties_even();
    Ok(((r % 4294967296.0) as i64) as u32 as i32)
}

pub(super) fn bit_library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("tobit", lua.create_function(|_, v: Value| Ok(tobit(&v)? as f64))?)?;
    t.raw_set("bnot", lua.create_function(|_, v: Value| Ok(!tobit(&v)? as f64))?)?;
    fn fold(args: &Variadic<Value>, f: fn(i32, i32) -> i32) -> mlua::Result<f64> {
        let mut acc = tobit(args.first().unwrap_or(&Value::Nil))?;
        for v in args.iter().skip(1) {
            acc = f(acc, tobit(v)?);
        }
        Ok(acc as f64)
    }
    t.raw_set("band", lua.create_function(|_, a: Variadic<Value>| fold(&a, |x, y| x & y))?)?;
    t.raw_set("bor", lua.create_function(|_, a: Variadic<Value>| fold(&a, |x, y| x | y))?)?;
    t.raw_set("bxor", lua.create_function(|_, a: Variadic<Value>| fold(&a, |x, y| x ^ y))?)?;
    type Shift = fn(i32, u32) -> i32;
    let shifts: [(&str, Shift); 5] = [
        ("lshift", |x, n| ((x as u32) << n) as i32),
        ("rshift", |x, n| ((x as u32) >> n) as i32),
        ("arshift", |x, n| x >> n),
        ("rol", |x, n| (x as u32).rotate_left(n) as i32),
        ("ror", |x, n| (x as u32).rotate_right(n) as i32),
    ];
    for (name, f) in shifts {
        t.raw_set(
            name,
            lua.create_function(move |_, (x, n): (Value, Value)| Ok(f(tobit(&x)?, (tobit(&n)? & 31) as u32) as f64))?,
        )?;
    }
    t.raw_set("bswap", lua.create_function(|_, v: Value| Ok((tobit(&v)? as u32).swap_bytes() as i32 as f64))?)?;
    t.raw_set(
        "tohex",
        lua.create_function(|_, (v, n): (Value, Option<Value>)| {
            let x = tobit(&v)? as u32;
            let n = match n {
                Some(n) => tobit(&n)?,
                None => 8,
            };
            let (upper, digits) = if n < 0 { (true, (-n) as usize) } else { (false, n as usize) };
            let digits = digits.min(8);
            let s = if upper { format!("{x:08X}") } else { format!("{x:08x}") };
            Ok(s[8 - digits..].to_string())
        })?,
    )?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_normalisation() {
        assert_eq!(tobit(&Value::Number(4294967296.0 + 5.0)).unwrap(), 5);
        assert_eq!(tobit(&Value::Number(-1.0)).unwrap(), -1);
        assert_eq!(tobit(&Value::Number(2147483648.0)).unwrap(), i32::MIN);
        assert_eq!(tobit(&Value::Number(2.5)).unwrap(), 2);
    }
}
