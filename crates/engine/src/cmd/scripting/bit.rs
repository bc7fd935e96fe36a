//! LuaBitOp's `bit` library as Redis's scripting sandbox has it.

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::luaapi::{to_number, type_error};

/// LuaBitOp's number normalisation: round to nearest, keep the low 32 bits.
fn normalise(n: f64) -> i32 {
    let r = n.round_ties_even();
    ((r % 4294967296.0) as i64) as u32 as i32
}

/// LuaBitOp's barg: argument `n` (1-based) as 32 bits; not a number is an argument error.
fn barg(args: &[Value], n: usize) -> mlua::Result<i32> {
    to_number(args.get(n - 1)).map(normalise).ok_or_else(|| type_error(args, n, "number"))
}

fn function(lua: &Lua, f: impl Fn(&[Value]) -> mlua::Result<i32> + Send + 'static) -> mlua::Result<Function> {
    lua.create_function(move |_, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        f(&args).map(|v| v as f64)
    })
}

pub(super) fn bit_library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("tobit", function(lua, |a| barg(a, 1))?)?;
    t.raw_set("bnot", function(lua, |a| Ok(!barg(a, 1)?))?)?;
    fn fold(args: &[Value], f: fn(i32, i32) -> i32) -> mlua::Result<i32> {
        let mut acc = barg(args, 1)?;
        for n in 2..=args.len() {
            acc = f(acc, barg(args, n)?);
        }
        Ok(acc)
    }
    t.raw_set("band", function(lua, |a| fold(a, |x, y| x & y))?)?;
    t.raw_set("bor", function(lua, |a| fold(a, |x, y| x | y))?)?;
    t.raw_set("bxor", function(lua, |a| fold(a, |x, y| x ^ y))?)?;
    type Shift = fn(i32, u32) -> i32;
    let shifts: [(&str, Shift); 5] = [
        ("lshift", |x, n| ((x as u32) << n) as i32),
        ("rshift", |x, n| ((x as u32) >> n) as i32),
        ("arshift", |x, n| x >> n),
        ("rol", |x, n| (x as u32).rotate_left(n) as i32),
        ("ror", |x, n| (x as u32).rotate_right(n) as i32),
    ];
    for (name, f) in shifts {
        t.raw_set(name, function(lua, move |a| Ok(f(barg(a, 1)?, (barg(a, 2)? & 31) as u32)))?)?;
    }
    t.raw_set("bswap", function(lua, |a| Ok((barg(a, 1)? as u32).swap_bytes() as i32))?)?;
    t.raw_set(
        "tohex",
        lua.create_function(|lua, args: MultiValue| {
            let args: Vec<Value> = args.into_iter().collect();
            let x = barg(&args, 1)? as u32;
            // Only an absent count defaults; an explicit nil is an error, as in LuaBitOp.
            let n = if args.len() < 2 { 8 } else { barg(&args, 2)? };
            let (upper, digits) = if n < 0 { (true, n.unsigned_abs() as usize) } else { (false, n as usize) };
            let digits = digits.min(8);
            let s = if upper { format!("{x:08X}") } else { format!("{x:08x}") };
            lua.create_string(&s[8 - digits..])
        })?,
    )?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_normalisation() {
        assert_eq!(normalise(4294967296.0 + 5.0), 5);
        assert_eq!(normalise(-1.0), -1);
        assert_eq!(normalise(2147483648.0), i32::MIN);
        assert_eq!(normalise(2.5), 2);
        assert!(barg(&[Value::Boolean(true)], 1).is_err());
    }
}
