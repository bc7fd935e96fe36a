//! Redis's `cmsgpack` library (lua-cmsgpack 0.4.0): MessagePack for Lua values.
//!
//! Behaviour follows Redis 7.0's deps/lua/src/lua_cmsgpack.c on 64-bit Linux: integral
//! numbers pack as the smallest integer type, others as float when a float holds them
//! exactly, else double; a table whose keys are exactly 1..n packs as an array (an empty
//! table too), any other as a map; tables nested 16 deep, functions and nil pack as nil.
//! Unpacked integers are Lua numbers (a uint 64 above 2^63 wraps negative, as in C).

use mlua::{Lua, MultiValue, Table, Value};

use super::lua_err;
use super::luaapi::{arg_error, check_integer, check_lstring, exact_args, exact_number, opt_integer, vm_error};

/// Tables nested deeper than this pack as nil (LUACMSGPACK_MAX_NESTING).
const MAX_NESTING: usize = 16;
/// Lua 5.1's LUAI_MAXCSTACK: most values a C function may have on its stack.
const MAX_STACK: usize = 8000;
const TOO_MANY_VALUES: &str =
    "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)";

pub(super) fn cmsgpack_library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    // Each gets its arguments packed by the prelude (see `exact_args`).
    t.raw_set("pack", lua.create_function(|lua, (a, n): (Table, i64)| pack(lua, exact_args(&a, n)?))?)?;
    t.raw_set(
        "unpack",
        lua.create_function(|lua, (a, n): (Table, i64)| {
            let args = exact_args(&a, n)?;
            let data = check_lstring(&args, 1)?;
            unpack_full(lua, &data, 0, 0, args.len())
        })?,
    )?;
    t.raw_set(
        "unpack_one",
        lua.create_function(|lua, (a, n): (Table, i64)| {
            let args = exact_args(&a, n)?;
            let offset = opt_integer(&args, 2, 0)?;
            let data = check_lstring(&args, 1)?;
            unpack_full(lua, &data, 1, offset, 1)
        })?,
    )?;
    t.raw_set(
        "unpack_limit",
        lua.create_function(|lua, (a, n): (Table, i64)| {
            let args = exact_args(&a, n)?;
            let limit = check_integer(&args, 2)?;
            let offset = opt_integer(&args, 3, 0)?;
            let data = check_lstring(&args, 1)?;
            unpack_full(lua, &data, limit, offset, 1)
        })?,
    )?;
    t.raw_set("_NAME", "cmsgpack")?;
    t.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    t.raw_set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    t.raw_set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(t)
}

// ---------------------------------------------------------------------------------------
// Packing
// ---------------------------------------------------------------------------------------

/// cmsgpack.pack(v1, v2, ...): the values packed one after the other.
fn pack(lua: &Lua, args: Vec<Value>) -> mlua::Result<mlua::String> {
    if args.is_empty() {
        return Err(arg_error(0, "MessagePack pack needs input."));
    }
    // lua_checkstack(L, nargs) with the arguments already on the stack.
    if args.len() * 2 > MAX_STACK {
        return Err(arg_error(0, "Too many arguments for MessagePack pack."));
    }
    let mut out = Vec::new();
    for v in args.iter() {
        encode(v, &mut out, 0)?;
    }
    lua.create_string(&out)
}

fn encode(v: &Value, out: &mut Vec<u8>, level: usize) -> mlua::Result<()> {
    match v {
        Value::String(s) => encode_bytes(&s.as_bytes(), out),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => encode_int(*i, out),
        Value::Number(n) => encode_number(*n, out),
        Value::Table(t) if level < MAX_NESTING => encode_table(t, out, level)?,
        _ => out.push(0xc0),
    }
    Ok(())
}

fn encode_bytes(s: &[u8], out: &mut Vec<u8>) {
    let len = s.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len <= 0xff {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(s);
}

/// A Lua number: as an integer when an int64 holds it exactly, else as float or double.
fn encode_number(n: f64, out: &mut Vec<u8>) {
    let int64_equivalent = (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&n) && n.trunc() == n;
    if int64_equivalent {
        encode_int(n as i64, out);
    } else if n == (n as f32) as f64 {
        out.push(0xca);
        out.extend_from_slice(&(n as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_int(n: i64, out: &mut Vec<u8>) {
    if n >= 0 {
        if n <= 127 {
            out.push(n as u8);
        } else if n <= 0xff {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// Whether the table's keys are exactly the numbers 1..n (n = how many keys).
fn is_array(t: &Table) -> mlua::Result<bool> {
    let (mut count, mut max) = (0i64, 0i64);
    for pair in t.clone().pairs::<Value, Value>() {
        let (k, _) = pair?;
        let n = match k {
            Value::Integer(i) => i as f64,
            Value::Number(n) => n,
            _ => return Ok(false),
        };
        // The C code keeps the indexes in an int.
        if n <= 0.0 || n > i32::MAX as f64 || n.trunc() != n {
            return Ok(false);
        }
        max = max.max(n as i64);
        count += 1;
    }
    Ok(max == count)
}

fn encode_table(t: &Table, out: &mut Vec<u8>, level: usize) -> mlua::Result<()> {
    if is_array(t)? {
        let len = t.raw_len();
        encode_header(len as u64, out, 0x90, 0xdc, 0xdd);
        for i in 1..=len {
            // lua_gettable: metamethods apply, as in the C library.
            let v = exact_number(t.get(i as i64)?, || t.get::<f64>(i as i64))?;
            encode(&v, out, level + 1)?;
        }
    } else {
        // Two passes, as the C code: count, then encode. Holding every pair at once would
        // take a Lua reference each, and a big table would run out of them.
        let mut count = 0u64;
        for pair in t.clone().pairs::<Value, Value>() {
            pair?;
            count += 1;
        }
        encode_header(count, out, 0x80, 0xde, 0xdf);
        for pair in t.clone().pairs::<Value, Value>() {
            let (k, v) = pair?;
            let v = exact_number(v, || t.raw_get::<f64>(k.clone()))?;
            encode(&k, out, level + 1)?;
            encode(&v, out, level + 1)?;
        }
    }
    Ok(())
}

/// An array or map header: the fix form up to 15 entries, then 16 or 32 bits.
fn encode_header(n: u64, out: &mut Vec<u8>, fix: u8, b16: u8, b32: u8) {
    if n <= 15 {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(b16);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(b32);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

// ---------------------------------------------------------------------------------------
// Unpacking
// ---------------------------------------------------------------------------------------

/// Why decoding stopped.
enum DecodeError {
    /// Not enough bytes (MP_CUR_ERROR_EOF).
    Eof,
    /// A byte no MessagePack type starts with (MP_CUR_ERROR_BADFMT).
    BadFormat,
    /// A Lua error (the stack limit, or from the VM).
    Lua(mlua::Error),
}

impl From<mlua::Error> for DecodeError {
    fn from(e: mlua::Error) -> Self {
        DecodeError::Lua(e)
    }
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    /// Values the C decoder would have on its Lua stack now (LUAI_MAXCSTACK applies).
    stack: usize,
}

impl Cursor<'_> {
    fn need(&self, n: usize) -> Result<(), DecodeError> {
        if self.data.len() - self.pos < n {
            Err(DecodeError::Eof)
        } else {
            Ok(())
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        self.need(n)?;
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn be(&mut self, n: usize) -> Result<u64, DecodeError> {
        Ok(self.take(n)?.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64))
    }

    /// One value, containers included. Iterative, with the nesting kept in `frames`, so
    /// deep input can't exhaust the thread's stack; the C decoder's Lua stack limit stops
    /// it at about 4000 levels, as in Redis.
    fn decode(&mut self, lua: &Lua) -> Result<Value, DecodeError> {
        let mut frames: Vec<Frame> = Vec::new();
        loop {
            let mut value = match self.item(lua)? {
                Item::Value(v) => v,
                Item::Array(len) => {
                    let table = lua.create_table()?;
                    self.stack += 1;
                    if self.stack + 1 > MAX_STACK {
                        return Err(DecodeError::Lua(lua_err("stack overflow (in function mp_decode_to_lua_array)")));
                    }
                    if len > 0 {
                        // The index of the element being decoded sits above the table.
                        self.stack += 1;
                        frames.push(Frame { table, left: len, next: Slot::Index(1) });
                        continue;
                    }
                    self.stack -= 1;
                    Value::Table(table)
                }
                Item::Map(len) => {
                    let table = lua.create_table()?;
                    self.stack += 1;
                    if len > 0 {
                        frames.push(Frame { table, left: len, next: Slot::Key });
                        continue;
                    }
                    self.stack -= 1;
                    Value::Table(table)
                }
            };
            // Store the value in its container; a container now complete is the next value.
            loop {
                let Some(frame) = frames.last_mut() else { return Ok(value) };
                match std::mem::replace(&mut frame.next, Slot::Key) {
                    Slot::Index(i) => {
                        frame.table.raw_set(i, value)?;
                        self.stack -= 1;
                        frame.left -= 1;
                        if frame.left > 0 {
                            self.stack += 1;
                            frame.next = Slot::Index(i + 1);
                            break;
                        }
                    }
                    Slot::Key => {
                        frame.next = Slot::Value(value);
                        self.stack += 1;
                        break;
                    }
                    Slot::Value(key) => {
                        // lua_settable: a nil or NaN key fails; a nil value leaves the key out.
                        if matches!(key, Value::Nil) {
                            return Err(DecodeError::Lua(vm_error("table index is nil")));
                        }
                        if matches!(key, Value::Number(n) if n.is_nan()) {
                            return Err(DecodeError::Lua(vm_error("table index is NaN")));
                        }
                        frame.table.raw_set(key, value)?;
                        self.stack -= 1;
                        frame.left -= 1;
                        if frame.left > 0 {
                            break;
                        }
                    }
                }
                let done = frames.pop().expect("a frame is open");
                self.stack -= 1;
                value = Value::Table(done.table);
            }
        }
    }

    /// The next item: a whole scalar, or the header of a container.
    fn item(&mut self, lua: &Lua) -> Result<Item, DecodeError> {
        self.need(1)?;
        if self.stack + 1 > MAX_STACK {
            return Err(DecodeError::Lua(lua_err(TOO_MANY_VALUES)));
        }
        let tag = self.data[self.pos];
        self.pos += 1;
        let num = |n: f64| Ok(Item::Value(Value::Number(n)));
        match tag {
            0xcc => num(self.be(1)? as f64),
            0xd0 => num(self.be(1)? as u8 as i8 as f64),
            0xcd => num(self.be(2)? as f64),
            0xd1 => num(self.be(2)? as u16 as i16 as f64),
            0xce => num(self.be(4)? as f64),
            0xd2 => num(self.be(4)? as u32 as i32 as f64),
            // lua_pushinteger takes a signed integer: above 2^63 the value wraps negative.
            0xcf => num(self.be(8)? as i64 as f64),
            0xd3 => num(self.be(8)? as i64 as f64),
            0xc0 => Ok(Item::Value(Value::Nil)),
            0xc3 => Ok(Item::Value(Value::Boolean(true))),
            0xc2 => Ok(Item::Value(Value::Boolean(false))),
            0xca => num(f32::from_bits(self.be(4)? as u32) as f64),
            0xcb => num(f64::from_bits(self.be(8)?)),
            0xd9..=0xdb => {
                let width = match tag {
                    0xd9 => 1,
                    0xda => 2,
                    _ => 4,
                };
                let len = self.be(width)? as usize;
                let s = self.take(len)?;
                Ok(Item::Value(Value::String(lua.create_string(s)?)))
            }
            0xdc => Ok(Item::Array(self.be(2)? as usize)),
            0xdd => Ok(Item::Array(self.be(4)? as usize)),
            0xde => Ok(Item::Map(self.be(2)? as usize)),
            0xdf => Ok(Item::Map(self.be(4)? as usize)),
            _ if tag & 0x80 == 0 => num(tag as f64),
            _ if tag & 0xe0 == 0xe0 => num(tag as i8 as f64),
            _ if tag & 0xe0 == 0xa0 => {
                let s = self.take((tag & 0x1f) as usize)?;
                Ok(Item::Value(Value::String(lua.create_string(s)?)))
            }
            _ if tag & 0xf0 == 0x90 => Ok(Item::Array((tag & 0xf) as usize)),
            _ if tag & 0xf0 == 0x80 => Ok(Item::Map((tag & 0xf) as usize)),
            _ => Err(DecodeError::BadFormat),
        }
    }
}

enum Item {
    Value(Value),
    Array(usize),
    Map(usize),
}

/// A container being decoded.
struct Frame {
    table: Table,
    /// Elements (pairs, for a map) still to come.
    left: usize,
    next: Slot,
}

/// What the next decoded value is for.
enum Slot {
    Index(i64),
    Key,
    /// The value of this key.
    Value(Value),
}

/// mp_unpack_full: up to `limit` values from `offset` (both 0: all of them, and no next
/// offset). `args` is how many arguments stay on the C function's stack.
fn unpack_full(lua: &Lua, data: &[u8], limit: i64, offset: i64, args: usize) -> mlua::Result<MultiValue> {
    let len = data.len();
    if offset < 0 || limit < 0 {
        // The C code prints the input length where it means the limit.
        return Err(lua_err(format!(
            "Invalid request to unpack with offset of {} and limit of {}.",
            offset as i32, len as i32
        )));
    }
    if offset as u64 > len as u64 {
        return Err(lua_err(format!("Start offset {} greater than input length {}.", offset as i32, len as i32)));
    }
    let decode_all = limit == 0 && offset == 0;
    let limit = if decode_all { i32::MAX as i64 } else { limit };
    let mut cursor = Cursor { data, pos: offset as usize, stack: args };
    let mut values = Vec::new();
    while cursor.pos < len && (values.len() as i64) < limit {
        match cursor.decode(lua) {
            Ok(v) => values.push(v),
            Err(DecodeError::Eof) => return Err(lua_err("Missing bytes in input.")),
            Err(DecodeError::BadFormat) => return Err(lua_err("Bad data format in input.")),
            Err(DecodeError::Lua(e)) => return Err(e),
        }
        cursor.stack += 1;
    }
    if !decode_all {
        if cursor.stack + 1 > MAX_STACK {
            return Err(lua_err("stack overflow (in function mp_unpack_full)"));
        }
        let next = if cursor.pos == len { -1 } else { cursor.pos as i64 };
        values.insert(0, Value::Number(next as f64));
    }
    Ok(MultiValue::from_iter(values))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packed(v: Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode(&v, &mut out, 0).unwrap();
        out
    }

    #[test]
    fn numbers_pack_in_the_smallest_form() {
        assert_eq!(packed(Value::Integer(5)), [5]);
        assert_eq!(packed(Value::Integer(-1)), [0xff]);
        assert_eq!(packed(Value::Integer(-33)), [0xd0, 0xdf]);
        assert_eq!(packed(Value::Integer(200)), [0xcc, 200]);
        assert_eq!(packed(Value::Integer(65536)), [0xce, 0, 1, 0, 0]);
        assert_eq!(packed(Value::Integer(-40000)), [0xd2, 0xff, 0xff, 0x63, 0xc0]);
        assert_eq!(packed(Value::Number(1.5)), [0xca, 0x3f, 0xc0, 0, 0]);
        assert_eq!(packed(Value::Number(0.1)), [0xcb, 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a]);
        assert_eq!(packed(Value::Number(9_223_372_036_854_775_808.0))[0], 0xca, "2^63 is no int64");
    }

    #[test]
    fn tables_pack_as_arrays_or_maps() {
        let lua = Lua::new();
        let t: Table = lua.load("return {1, 2, 3}").eval().unwrap();
        assert_eq!(packed(Value::Table(t)), [0x93, 1, 2, 3]);
        let t: Table = lua.load("return {}").eval().unwrap();
        assert_eq!(packed(Value::Table(t)), [0x90]);
        let t: Table = lua.load("return {a = true}").eval().unwrap();
        assert_eq!(packed(Value::Table(t)), [0x81, 0xa1, b'a', 0xc3]);
        let t: Table = lua.load("local t = {} t[1] = t return t").eval().unwrap();
        let out = packed(Value::Table(t));
        assert_eq!(out.len(), 17, "16 nested arrays, then nil");
        assert_eq!(out[16], 0xc0);
    }

    #[test]
    fn unpack_round_trip_and_errors() {
        let lua = Lua::new();
        let all = unpack_full(&lua, &[1, 0xa2, b'h', b'i', 0x92, 0xc3, 0xc0], 0, 0, 1).unwrap();
        assert_eq!(all.len(), 3);
        let one = unpack_full(&lua, &[1, 2], 1, 0, 1).unwrap();
        let v: Vec<Value> = one.into_iter().collect();
        assert_eq!(v, [Value::Number(1.0), Value::Number(1.0)]);
        let e = |data: &[u8]| unpack_full(&lua, data, 0, 0, 1).unwrap_err().to_string();
        assert!(e(&[0xcd, 1]).contains("Missing bytes in input."));
        assert!(e(&[0xc1]).contains("Bad data format in input."));
        let big = unpack_full(&lua, &[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], 0, 0, 1).unwrap();
        assert_eq!(big.into_iter().next(), Some(Value::Number(-1.0)));
    }
}
