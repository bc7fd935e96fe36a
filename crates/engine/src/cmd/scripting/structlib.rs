//! Redis's `struct` library (Roberto Ierusalimschy's struct 0.2 as bundled with Redis 7.0):
//! packing numbers and strings into binary strings and back, with C layout rules.
//!
//! Behaviour follows deps/lua/src/lua_struct.c as built for 64-bit Linux: native order is
//! little endian, `l`/`L`/`T`/`d` are 8 bytes, `h`/`H` 2, `i`/`I` default to 4 (up to 32),
//! `!` without a number aligns to 8; integers are 64-bit, so bytes past the eighth of a
//! wider integer are zero.

use mlua::{Lua, MultiValue, Table, Value};

use super::lua_err;
use super::luaapi::{arg_error, c_double_to_i64, check_lstring, check_number, exact_args, opt_integer, to_number};

/// Largest size of an `i`/`I` integer.
const MAX_INT_SIZE: usize = 32;
/// `!` without a size: the strictest alignment of the platform (a double's).
const MAX_ALIGN: usize = 8;
/// Lua 5.1's LUAI_MAXCSTACK: most values a C function may have on its stack.
const MAX_STACK: usize = 8000;

pub(super) fn struct_library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    // Each gets its arguments packed by the prelude (see `exact_args`).
    t.raw_set("pack", lua.create_function(|lua, (a, n): (Table, i64)| lua.create_string(pack(&exact_args(&a, n)?)?))?)?;
    t.raw_set("unpack", lua.create_function(|lua, (a, n): (Table, i64)| unpack(lua, &exact_args(&a, n)?))?)?;
    t.raw_set("size", lua.create_function(|_, (a, n): (Table, i64)| size(&exact_args(&a, n)?).map(|n| n as f64))?)?;
    Ok(t)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Endian {
    Big,
    Little,
}

struct Header {
    endian: Endian,
    align: usize,
}

impl Default for Header {
    fn default() -> Self {
        Header { endian: Endian::Little, align: 1 }
    }
}

/// A format string being read, option by option.
struct Format<'a> {
    fmt: &'a [u8],
    pos: usize,
}

impl Format<'_> {
    fn next_opt(&mut self) -> Option<u8> {
        // The C code reads a NUL-terminated string: a NUL byte ends the format.
        let opt = *self.fmt.get(self.pos).filter(|&&b| b != 0)?;
        self.pos += 1;
        Some(opt)
    }

    /// getnum: a decimal number at the cursor, or `default`.
    fn number(&mut self, default: usize) -> mlua::Result<usize> {
        if !self.fmt.get(self.pos).is_some_and(|b| b.is_ascii_digit()) {
            return Ok(default);
        }
        let mut a: i32 = 0;
        while let Some(&d) = self.fmt.get(self.pos).filter(|b| b.is_ascii_digit()) {
            let d = (d - b'0') as i32;
            if a > i32::MAX / 10 || a * 10 > i32::MAX - d {
                return Err(lua_err("integral size overflow"));
            }
            a = a * 10 + d;
            self.pos += 1;
        }
        Ok(a as usize)
    }

    /// optsize: the size of option `opt` (0 for those that take no room).
    fn size_of(&mut self, opt: u8) -> mlua::Result<usize> {
        Ok(match opt {
            b'B' | b'b' | b'x' => 1,
            b'H' | b'h' => 2,
            b'L' | b'l' | b'T' | b'd' => 8,
            b'f' => 4,
            b'c' => self.number(1)?,
            b'i' | b'I' => {
                let size = self.number(4)?;
                if size > MAX_INT_SIZE {
                    return Err(lua_err(format!("integral size {size} is larger than limit of {MAX_INT_SIZE}")));
                }
                size
            }
            _ => 0,
        })
    }

    /// controloptions: endianness, alignment and spaces; anything else is an error.
    fn control(&mut self, opt: u8, h: &mut Header) -> mlua::Result<()> {
        match opt {
            b' ' => {}
            b'>' => h.endian = Endian::Big,
            b'<' => h.endian = Endian::Little,
            b'!' => {
                let a = self.number(MAX_ALIGN)?;
                if a == 0 || a & (a - 1) != 0 {
                    return Err(lua_err(format!("alignment {a} is not a power of 2")));
                }
                h.align = a;
            }
            _ => return Err(arg_error(1, &format!("invalid format option '{}'", opt as char))),
        }
        Ok(())
    }
}

/// gettoalign: padding before an item of `size` at offset `len`.
fn padding(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    (size.wrapping_sub(len & (size - 1))) & (size - 1)
}

/// C's double to unsigned 64-bit conversion as gcc compiles it on x86-64 (an unordered
/// compare counts as below 2^63, so NaN converts like a signed value).
fn c_double_to_u64(d: f64) -> u64 {
    const TWO_63: f64 = 9.223_372_036_854_776e18;
    if d.is_nan() || d < TWO_63 {
        c_double_to_i64(d) as u64
    } else {
        (c_double_to_i64(d - TWO_63) as u64) ^ (1 << 63)
    }
}

fn put_integer(out: &mut Vec<u8>, n: f64, endian: Endian, size: usize) {
    let mut value = if n < 0.0 { c_double_to_i64(n) as u64 } else { c_double_to_u64(n) };
    let mut bytes = vec![0u8; size];
    let order: Box<dyn Iterator<Item = usize>> =
        if endian == Endian::Little { Box::new(0..size) } else { Box::new((0..size).rev()) };
    for i in order {
        bytes[i] = (value & 0xff) as u8;
        value = value.checked_shr(8).unwrap_or(0);
    }
    out.extend_from_slice(&bytes);
}

/// struct.pack(fmt, v1, v2, ...).
fn pack(args: &[Value]) -> mlua::Result<Vec<u8>> {
    let fmt = check_lstring(args, 1)?;
    let mut f = Format { fmt: &fmt, pos: 0 };
    let mut h = Header::default();
    let mut arg = 2;
    let mut out = Vec::new();
    // The C function pushes a nil after its arguments: the first missing one is "nil".
    let mut padded: Vec<Value> = args.to_vec();
    padded.push(Value::Nil);
    let args = &padded[..];
    while let Some(opt) = f.next_opt() {
        let mut size = f.size_of(opt)?;
        let pad = padding(out.len(), &h, opt, size);
        out.resize(out.len() + pad, 0);
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let n = check_number(args, arg)?;
                arg += 1;
                put_integer(&mut out, n, h.endian, size);
            }
            b'x' => out.push(0),
            b'f' => {
                let v = check_number(args, arg)? as f32;
                arg += 1;
                let bytes = if h.endian == Endian::Little { v.to_le_bytes() } else { v.to_be_bytes() };
                out.extend_from_slice(&bytes);
            }
            b'd' => {
                let v = check_number(args, arg)?;
                arg += 1;
                let bytes = if h.endian == Endian::Little { v.to_le_bytes() } else { v.to_be_bytes() };
                out.extend_from_slice(&bytes);
            }
            b'c' | b's' => {
                let s = check_lstring(args, arg)?;
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    // luaL_argcheck names the argument after the string (arg already moved on).
                    return Err(arg_error(arg, "string too short"));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                }
            }
            _ => f.control(opt, &mut h)?,
        }
    }
    Ok(out)
}

/// getinteger: `size` bytes as an integer, sign-extended for lowercase options.
fn get_integer(bytes: &[u8], endian: Endian, signed: bool) -> f64 {
    let size = bytes.len();
    let mut l: u64 = 0;
    let mut add = |b: u8| l = (l << 8) | b as u64;
    if endian == Endian::Big {
        bytes.iter().for_each(|&b| add(b));
    } else {
        bytes.iter().rev().for_each(|&b| add(b));
    }
    if !signed {
        return l as f64;
    }
    // As x86 shifts: the count is taken modulo 64.
    let mask = u64::MAX.wrapping_shl((size * 8).wrapping_sub(1) as u32);
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

/// struct.unpack(fmt, data [, pos]): the values, then the position after them.
fn unpack(lua: &Lua, args: &[Value]) -> mlua::Result<MultiValue> {
    let fmt = check_lstring(args, 1)?;
    let data = check_lstring(args, 2)?;
    let ld = data.len();
    // size_t in C: a negative position wraps around and fails the length checks.
    let start = opt_integer(args, 3, 1)? as u64 as usize;
    if start == 0 {
        return Err(arg_error(3, "offset must be 1 or greater"));
    }
    let mut pos = start - 1;
    let mut f = Format { fmt: &fmt, pos: 0 };
    let mut h = Header::default();
    let mut values: Vec<Value> = Vec::new();
    let too_short = || arg_error(2, "data string too short");
    while let Some(opt) = f.next_opt() {
        let mut size = f.size_of(opt)?;
        pos = pos.wrapping_add(padding(pos, &h, opt, size));
        if size > ld || pos > ld - size {
            return Err(too_short());
        }
        if args.len() + values.len() + 2 > MAX_STACK {
            return Err(lua_err("stack overflow (too many results)"));
        }
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let v = get_integer(&data[pos..pos + size], h.endian, opt.is_ascii_lowercase());
                values.push(Value::Number(v));
            }
            b'x' => {}
            b'f' => {
                let b: [u8; 4] = data[pos..pos + 4].try_into().expect("4 bytes");
                let v = if h.endian == Endian::Little { f32::from_le_bytes(b) } else { f32::from_be_bytes(b) };
                values.push(Value::Number(v as f64));
            }
            b'd' => {
                let b: [u8; 8] = data[pos..pos + 8].try_into().expect("8 bytes");
                let v = if h.endian == Endian::Little { f64::from_le_bytes(b) } else { f64::from_be_bytes(b) };
                values.push(Value::Number(v));
            }
            b'c' => {
                if size == 0 {
                    // The previous value is the length (lua_isnumber: numeric strings too).
                    let Some(n) = to_number(values.last()) else {
                        return Err(lua_err("format 'c0' needs a previous size"));
                    };
                    values.pop();
                    size = c_double_to_u64(n) as usize;
                    if size > ld || pos > ld - size {
                        return Err(too_short());
                    }
                }
                values.push(Value::String(lua.create_string(&data[pos..pos + size])?));
            }
            b's' => {
                let Some(len) = data[pos..].iter().position(|&b| b == 0) else {
                    return Err(lua_err("unfinished string in data"));
                };
                size = len + 1;
                values.push(Value::String(lua.create_string(&data[pos..pos + len])?));
            }
            _ => f.control(opt, &mut h)?,
        }
        pos = pos.wrapping_add(size);
    }
    values.push(Value::Number(pos.wrapping_add(1) as i64 as f64));
    Ok(MultiValue::from_iter(values))
}

/// struct.size(fmt): the bytes `struct.pack(fmt, ...)` produces.
fn size(args: &[Value]) -> mlua::Result<usize> {
    let fmt = check_lstring(args, 1)?;
    let mut f = Format { fmt: &fmt, pos: 0 };
    let mut h = Header::default();
    let mut pos = 0usize;
    while let Some(opt) = f.next_opt() {
        let size = f.size_of(opt)?;
        pos += padding(pos, &h, opt, size);
        if opt == b's' {
            return Err(arg_error(1, "option 's' has no fixed size"));
        }
        if opt == b'c' && size == 0 {
            return Err(arg_error(1, "option 'c0' has no fixed size"));
        }
        if !opt.is_ascii_alphanumeric() {
            f.control(opt, &mut h)?;
        }
        pos += size;
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(lua: &Lua, v: &str) -> Value {
        Value::String(lua.create_string(v).unwrap())
    }

    #[test]
    fn pack_layouts() {
        let lua = Lua::new();
        let n = |v: f64| Value::Number(v);
        assert_eq!(pack(&[s(&lua, ">i2"), n(258.0)]).unwrap(), [1, 2]);
        assert_eq!(pack(&[s(&lua, "<i2"), n(-2.0)]).unwrap(), [0xfe, 0xff]);
        assert_eq!(pack(&[s(&lua, "!4bi"), n(1.0), n(2.0)]).unwrap(), [1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(pack(&[s(&lua, "s"), s(&lua, "ab")]).unwrap(), b"ab\0");
        assert_eq!(pack(&[s(&lua, "c3"), s(&lua, "abcd")]).unwrap(), b"abc");
        assert_eq!(pack(&[s(&lua, "i9"), n(-1.0)]).unwrap(), [255, 255, 255, 255, 255, 255, 255, 255, 0]);
        assert!(pack(&[s(&lua, "c5"), s(&lua, "ab")]).unwrap_err().to_string().contains("#3"));
        assert!(pack(&[s(&lua, "z")]).unwrap_err().to_string().contains("invalid format option 'z'"));
        assert!(pack(&[s(&lua, "b")]).unwrap_err().to_string().contains("number expected, got nil"));
    }

    #[test]
    fn unpack_and_size() {
        let lua = Lua::new();
        let vals: Vec<Value> = unpack(&lua, &[s(&lua, ">h"), s(&lua, "\u{7f}\u{7f}")]).unwrap().into_iter().collect();
        assert_eq!(vals, [Value::Number(32639.0), Value::Number(3.0)]);
        let vals: Vec<Value> = unpack(&lua, &[s(&lua, "bc0"), s(&lua, "\u{2}hi!")]).unwrap().into_iter().collect();
        assert_eq!(vals.len(), 2);
        assert_eq!(get_integer(&[0xff, 0xff], Endian::Little, true), -1.0);
        assert_eq!(get_integer(&[0xff, 0xff], Endian::Little, false), 65535.0);
        assert_eq!(size(&[s(&lua, "!8bd")]).unwrap(), 16);
        assert_eq!(size(&[s(&lua, "bzi")]).unwrap(), 5);
        assert!(size(&[s(&lua, "s")]).is_err());
    }
}
