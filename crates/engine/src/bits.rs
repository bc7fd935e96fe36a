//! Pure bitmap logic of SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO, matching
//! Redis 7.0.15 (argument parsing order, error texts and edge cases included).
//!
//! Bits are numbered as in Redis: bit 0 is the most significant bit of the first byte. Everything
//! here works on plain byte slices; the command layer looks keys up, checks types and stores results.
//!
//! Errors are Redis's error lines without the leading `-` (e.g. `ERR syntax error`). Nothing in this
//! module panics on any argument or value bytes.

/// Errors carry Redis's exact error line without the leading '-', e.g. [`ERR_SYNTAX`].
pub type BitResult<T> = Result<T, String>;

/// `ERR syntax error`.
pub const ERR_SYNTAX: &str = "ERR syntax error";
/// Any integer argument that does not parse (Redis's `getLongLongFromObjectOrReply` default).
pub const ERR_NOT_INTEGER: &str = "ERR value is not an integer or out of range";
/// Bad or out of range bit offset (SETBIT, GETBIT, BITFIELD).
pub const ERR_BIT_OFFSET: &str = "ERR bit offset is not an integer or out of range";
/// Bad SETBIT value.
pub const ERR_BIT_VALUE: &str = "ERR bit is not an integer or out of range";
/// Bad BITPOS bit argument.
pub const ERR_BITPOS_BIT: &str = "ERR The bit argument must be 1 or 0.";
/// BITOP NOT with more than one source.
pub const ERR_BITOP_NOT: &str = "ERR BITOP NOT must be called with a single source key.";
/// Bad BITFIELD type.
pub const ERR_BITFIELD_TYPE: &str =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
/// Bad BITFIELD OVERFLOW argument.
pub const ERR_OVERFLOW_TYPE: &str = "ERR Invalid OVERFLOW type specified";
/// SET or INCRBY given to BITFIELD_RO.
pub const ERR_BITFIELD_RO: &str = "ERR BITFIELD_RO only supports the GET subcommand";
/// BITPOS called without its bit argument (normally caught by the arity check first).
pub const ERR_BITPOS_ARITY: &str = "ERR wrong number of arguments for 'bitpos' command";

// ---------------------------------------------------------------------------------------------
// Argument helpers
// ---------------------------------------------------------------------------------------------

/// Redis's `string2ll`: a strict decimal `i64` (no sign but `-`, no leading zeros, no spaces, at
/// most 20 bytes).
fn parse_i64(arg: &[u8]) -> Option<i64> {
    if arg.is_empty() || arg.len() >= 21 {
        return None;
    }
    if arg == b"0" {
        return Some(0);
    }
    let (negative, digits) = match arg.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, arg),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if negative {
        if v > 1u64 << 63 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// `parse_i64` with Redis's generic "not an integer" error.
fn parse_i64_arg(arg: &[u8]) -> BitResult<i64> {
    parse_i64(arg).ok_or_else(|| ERR_NOT_INTEGER.to_string())
}

/// C `strcasecmp(arg, name) == 0`: the argument is compared up to its first NUL byte.
fn c_eq_ignore_case(arg: &[u8], name: &str) -> bool {
    let end = arg.iter().position(|&b| b == 0).unwrap_or(arg.len());
    arg[..end].eq_ignore_ascii_case(name.as_bytes())
}

/// The `BYTE|BIT` unit argument: `true` for BIT.
fn parse_unit(arg: &[u8]) -> BitResult<bool> {
    if c_eq_ignore_case(arg, "bit") {
        Ok(true)
    } else if c_eq_ignore_case(arg, "byte") {
        Ok(false)
    } else {
        Err(ERR_SYNTAX.to_string())
    }
}

/// SETBIT/GETBIT/BITFIELD offset parsing (Redis's `getBitOffsetFromArgument`).
///
/// With `hash_allowed` and `field_bits > 0`, a leading `#` multiplies the offset by `field_bits`
/// (BITFIELD's `#N` form; like Redis on x86-64 the product wraps around on overflow). The offset must
/// be non-negative and `offset / 8` must be below `proto_max_bulk_len` (pass `u64::MAX` to skip the
/// limit, as Redis does for its master and AOF clients).
pub fn parse_bit_offset(arg: &[u8], hash_allowed: bool, field_bits: u32, proto_max_bulk_len: u64) -> BitResult<u64> {
    let err = || ERR_BIT_OFFSET.to_string();
    let use_hash = hash_allowed && field_bits > 0 && arg.first() == Some(&b'#');
    let digits = if use_hash { &arg[1..] } else { arg };
    let mut offset = parse_i64(digits).ok_or_else(err)?;
    if use_hash {
        offset = offset.wrapping_mul(i64::from(field_bits));
    }
    let offset = u64::try_from(offset).map_err(|_| err())?;
    if offset >> 3 >= proto_max_bulk_len {
        return Err(err());
    }
    Ok(offset)
}

/// SETBIT's value argument: `0` or `1`, anything else is `ERR bit is not an integer or out of range`.
pub fn parse_bit_value(arg: &[u8]) -> BitResult<bool> {
    match parse_i64(arg) {
        Some(0) => Ok(false),
        Some(1) => Ok(true),
        _ => Err(ERR_BIT_VALUE.to_string()),
    }
}

// ---------------------------------------------------------------------------------------------
// SETBIT / GETBIT
// ---------------------------------------------------------------------------------------------

/// Byte index of a bit offset, if it is addressable on this platform.
fn byte_index(offset: u64) -> Option<usize> {
    usize::try_from(offset >> 3).ok()
}

/// Mask of a bit offset inside its byte (bit 0 is the most significant bit).
fn bit_mask(offset: u64) -> u8 {
    0x80 >> (offset & 7)
}

/// GETBIT: the bit at `offset` (0 past the end of `s`).
pub fn get_bit(s: &[u8], offset: u64) -> u8 {
    match byte_index(offset).and_then(|i| s.get(i)) {
        Some(&byte) => u8::from(byte & bit_mask(offset) != 0),
        None => 0,
    }
}

/// Sets a bit, growing `s` with zero bytes as needed; returns the old bit.
///
/// The offset must have been validated with [`parse_bit_offset`]. Redis counts the key as modified
/// (keyspace notification, dirty counter) when `s` grew or the bit changed.
pub fn set_bit(s: &mut Vec<u8>, offset: u64, on: bool) -> u8 {
    let Some(index) = byte_index(offset) else { return 0 };
    if s.len() <= index {
        s.resize(index.saturating_add(1), 0);
    }
    let mask = bit_mask(offset);
    let byte = &mut s[index];
    let old = u8::from(*byte & mask != 0);
    if on {
        *byte |= mask;
    } else {
        *byte &= !mask;
    }
    old
}

// ---------------------------------------------------------------------------------------------
// Counting and searching
// ---------------------------------------------------------------------------------------------

/// An 8-byte chunk as a native-endian word (only compared with or popcounted, so endianness
/// does not matter).
fn word(chunk: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(chunk);
    u64::from_ne_bytes(w)
}

/// Number of set bits in `s`, a word at a time.
fn popcount(s: &[u8]) -> u64 {
    let chunks = s.chunks_exact(32);
    let tail = chunks.remainder();
    let mut total = 0u64;
    for c in chunks {
        let (a, b, d, e) = (word(&c[0..8]), word(&c[8..16]), word(&c[16..24]), word(&c[24..32]));
        total += u64::from(a.count_ones() + b.count_ones() + d.count_ones() + e.count_ones());
    }
    let words = tail.chunks_exact(8);
    let rest = words.remainder();
    for c in words {
        total += u64::from(word(c).count_ones());
    }
    total + rest.iter().map(|b| u64::from(b.count_ones())).sum::<u64>()
}

/// Mask of the bits of a byte at positions `>= from` (MSB first).
fn mask_from(from: u64) -> u8 {
    0xFF >> (from & 7)
}

/// Mask of the bits of a byte at positions `<= to` (MSB first).
fn mask_through(to: u64) -> u8 {
    !((0xFFu32 >> ((to & 7) + 1)) as u8)
}

/// Set bits in the bit range `first..=last`, which must lie inside `s`.
fn count_range(s: &[u8], first: u64, last: u64) -> u64 {
    let (lo, hi) = ((first >> 3) as usize, (last >> 3) as usize);
    let Some(bytes) = s.get(lo..=hi) else { return 0 };
    let outside =
        (bytes[0] & !mask_from(first)).count_ones() + (bytes[bytes.len() - 1] & !mask_through(last)).count_ones();
    popcount(bytes) - u64::from(outside)
}

/// Index of the first byte of `s` that differs from `skip`, skipping whole words first.
fn first_byte_not(s: &[u8], skip: u8) -> Option<usize> {
    let skip_word = u64::from_ne_bytes([skip; 8]);
    let mut start = 0;
    for c in s.chunks_exact(8) {
        if word(c) != skip_word {
            break;
        }
        start += 8;
    }
    s[start..].iter().position(|&b| b != skip).map(|p| start + p)
}

/// Position of the first bit equal to `bit` in the bit range `first..=last` (inside `s`).
fn find_in_range(s: &[u8], first: u64, last: u64, bit: bool) -> Option<u64> {
    let (lo, hi) = ((first >> 3) as usize, (last >> 3) as usize);
    let bytes = s.get(lo..=hi)?;
    // Flip the bytes when looking for a 0 so that we always look for a 1.
    let flip = if bit { 0x00 } else { 0xFF };
    let hit = |index: usize, byte: u8| Some(((lo + index) as u64) * 8 + u64::from(byte.leading_zeros()));
    if bytes.len() == 1 {
        let b = (bytes[0] ^ flip) & mask_from(first) & mask_through(last);
        return if b != 0 { hit(0, b) } else { None };
    }
    let b = (bytes[0] ^ flip) & mask_from(first);
    if b != 0 {
        return hit(0, b);
    }
    let middle = &bytes[1..bytes.len() - 1];
    if let Some(i) = first_byte_not(middle, flip) {
        return hit(i + 1, middle[i] ^ flip);
    }
    let b = (bytes[bytes.len() - 1] ^ flip) & mask_through(last);
    if b != 0 {
        hit(bytes.len() - 1, b)
    } else {
        None
    }
}

/// Redis's range normalization for BITCOUNT/BITPOS over `total` units: negative indexes count
/// from the end, both ends are clamped into the value. `None` for an empty range.
fn normalize_range(mut start: i64, mut end: i64, total: i64) -> Option<(u64, u64)> {
    if start < 0 {
        start = start.saturating_add(total);
    }
    if end < 0 {
        end = end.saturating_add(total);
    }
    start = start.max(0);
    end = end.max(0);
    if end >= total {
        end = total - 1;
    }
    if start > end {
        return None;
    }
    Some((start as u64, end as u64))
}

/// Length of `s` in the requested unit.
fn total_units(s: &[u8], is_bit: bool) -> i64 {
    let len = i64::try_from(s.len()).unwrap_or(i64::MAX);
    if is_bit {
        len.saturating_mul(8)
    } else {
        len
    }
}

/// Converts a normalized range into an inclusive bit range.
fn to_bit_range((start, end): (u64, u64), is_bit: bool) -> (u64, u64) {
    if is_bit {
        (start, end)
    } else {
        (start * 8, end * 8 + 7)
    }
}

/// BITCOUNT key [start end [BYTE|BIT]]: `args` are the arguments after the key (possibly empty),
/// `s` is the value (None when the key is missing).
///
/// As in Redis a missing key answers 0 before any argument is looked at. Errors:
/// `ERR value is not an integer or out of range`, `ERR syntax error`.
pub fn bitcount(s: Option<&[u8]>, args: &[&[u8]]) -> BitResult<i64> {
    let Some(s) = s else { return Ok(0) };
    let count = match args.len() {
        0 => popcount(s),
        2 | 3 => {
            let start = parse_i64_arg(args[0])?;
            let end = parse_i64_arg(args[1])?;
            if start < 0 && end < 0 && start > end {
                return Ok(0);
            }
            let is_bit = match args.get(2) {
                Some(unit) => parse_unit(unit)?,
                None => false,
            };
            match normalize_range(start, end, total_units(s, is_bit)) {
                Some(range) => {
                    let (first, last) = to_bit_range(range, is_bit);
                    count_range(s, first, last)
                }
                None => 0,
            }
        }
        _ => return Err(ERR_SYNTAX.to_string()),
    };
    Ok(i64::try_from(count).unwrap_or(i64::MAX))
}

/// BITPOS key bit [start [end [BYTE|BIT]]]: `args` are the arguments after the key, `s` is the value
/// (None when the key is missing).
///
/// The bit argument is checked first; a missing key then answers 0 when looking for a clear bit and
/// -1 for a set bit, whatever the other arguments. Looking for a clear bit in a byte range without
/// an explicit end treats the value as zero-padded on the right (answering the bit just past the
/// end); with an explicit end, or in BIT units, -1 means "not found". Errors:
/// `ERR value is not an integer or out of range`, `ERR The bit argument must be 1 or 0.`,
/// `ERR syntax error`.
pub fn bitpos(s: Option<&[u8]>, args: &[&[u8]]) -> BitResult<i64> {
    let Some(bit_arg) = args.first() else { return Err(ERR_BITPOS_ARITY.to_string()) };
    let bit = match parse_i64_arg(bit_arg)? {
        0 => false,
        1 => true,
        _ => return Err(ERR_BITPOS_BIT.to_string()),
    };
    let Some(s) = s else { return Ok(if bit { -1 } else { 0 }) };
    let (range, is_bit, end_given) = match args.len() {
        1 => (normalize_range(0, total_units(s, false) - 1, total_units(s, false)), false, false),
        2..=4 => {
            let start = parse_i64_arg(args[1])?;
            let is_bit = match args.get(3) {
                Some(unit) => parse_unit(unit)?,
                None => false,
            };
            let total = total_units(s, is_bit);
            let (end, end_given) = match args.get(2) {
                Some(end) => (parse_i64_arg(end)?, true),
                None => (total - 1, false),
            };
            (normalize_range(start, end, total), is_bit, end_given)
        }
        _ => return Err(ERR_SYNTAX.to_string()),
    };
    let Some(range) = range else { return Ok(-1) };
    let (first, last) = to_bit_range(range, is_bit);
    let pos = match find_in_range(s, first, last, bit) {
        Some(pos) => pos as i64,
        // Without an explicit end the value is zero-padded: the first clear bit is just past it.
        None if !bit && !end_given && !is_bit => last as i64 + 1,
        None => -1,
    };
    Ok(pos)
}

// ---------------------------------------------------------------------------------------------
// BITOP
// ---------------------------------------------------------------------------------------------

/// A BITOP operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

/// Parses BITOP's operation name (case-insensitive); `ERR syntax error` otherwise.
pub fn parse_bitop(name: &[u8]) -> BitResult<BitOp> {
    if c_eq_ignore_case(name, "and") {
        Ok(BitOp::And)
    } else if c_eq_ignore_case(name, "or") {
        Ok(BitOp::Or)
    } else if c_eq_ignore_case(name, "xor") {
        Ok(BitOp::Xor)
    } else if c_eq_ignore_case(name, "not") {
        Ok(BitOp::Not)
    } else {
        Err(ERR_SYNTAX.to_string())
    }
}

/// BITOP's source count check: NOT takes exactly one source
/// (`ERR BITOP NOT must be called with a single source key.`).
pub fn check_bitop_sources(op: BitOp, sources: usize) -> BitResult<()> {
    if op == BitOp::Not && sources != 1 {
        return Err(ERR_BITOP_NOT.to_string());
    }
    Ok(())
}

/// BITOP result for the given sources (missing keys as empty); the result length is the longest
/// source, shorter sources are zero-padded. An empty result means the destination key is deleted.
/// NOT uses only the first source.
pub fn bitop(op: BitOp, sources: &[&[u8]]) -> Vec<u8> {
    let max_len = sources.iter().map(|s| s.len()).max().unwrap_or(0);
    let Some((first, rest)) = sources.split_first() else { return Vec::new() };
    let mut out = vec![0u8; max_len];
    out[..first.len()].copy_from_slice(first);
    match op {
        BitOp::Not => out.iter_mut().for_each(|b| *b = !*b),
        BitOp::And => {
            for src in rest {
                for (o, s) in out.iter_mut().zip(src.iter()) {
                    *o &= *s;
                }
                out[src.len()..].iter_mut().for_each(|b| *b = 0);
            }
        }
        BitOp::Or => {
            for src in rest {
                for (o, s) in out.iter_mut().zip(src.iter()) {
                    *o |= *s;
                }
            }
        }
        BitOp::Xor => {
            for src in rest {
                for (o, s) in out.iter_mut().zip(src.iter()) {
                    *o ^= *s;
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// BITFIELD
// ---------------------------------------------------------------------------------------------

/// BITFIELD overflow behaviour for SET and INCRBY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Wrap around (the default).
    Wrap,
    /// Saturate at the type's minimum or maximum.
    Sat,
    /// Do nothing and reply nil.
    Fail,
}

/// What one BITFIELD operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitfieldKind {
    /// GET: reply with the field's value.
    Get,
    /// SET value: store the value, reply with the old one.
    Set(i64),
    /// INCRBY increment: add, reply with the new value.
    IncrBy(i64),
}

/// One parsed BITFIELD operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitfieldOp {
    /// The operation and its argument.
    pub kind: BitfieldKind,
    /// `i` types are signed, `u` types unsigned.
    pub signed: bool,
    /// Field width: 1..=64 for signed, 1..=63 for unsigned.
    pub bits: u32,
    /// Bit offset of the field's most significant bit (`#N` already multiplied out).
    pub offset: u64,
    /// The OVERFLOW mode in effect for this operation.
    pub overflow: Overflow,
}

/// Parses a BITFIELD type such as `i16` or `u8` into (signed, bits).
fn parse_bitfield_type(arg: &[u8]) -> BitResult<(bool, u32)> {
    let err = || ERR_BITFIELD_TYPE.to_string();
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(err()),
    };
    // Redis parses the width as a C string: it stops at the first NUL.
    let width = &arg[1..];
    let width = &width[..width.iter().position(|&b| b == 0).unwrap_or(width.len())];
    let bits = parse_i64(width).ok_or_else(err)?;
    let max = if signed { 64 } else { 63 };
    if !(1..=max).contains(&bits) {
        return Err(err());
    }
    Ok((signed, bits as u32))
}

/// BITFIELD: parses the whole operation list (the arguments after the key), validating everything
/// before anything runs, as Redis does. `read_only` is for BITFIELD_RO, which rejects SET and INCRBY
/// after the whole list parsed fine.
///
/// Errors, in the order Redis checks them for each operation: `ERR syntax error` (unknown
/// subcommand or missing arguments), `ERR Invalid OVERFLOW type specified`, `ERR Invalid bitfield
/// type. ...`, `ERR bit offset is not an integer or out of range`, `ERR value is not an integer or
/// out of range`; then `ERR BITFIELD_RO only supports the GET subcommand`.
pub fn parse_bitfield(args: &[&[u8]], read_only: bool, proto_max_bulk_len: u64) -> BitResult<Vec<BitfieldOp>> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 0;
    while j < args.len() {
        let remaining = args.len() - j - 1;
        let sub = args[j];
        let is_get = c_eq_ignore_case(sub, "get") && remaining >= 2;
        let is_set = !is_get && c_eq_ignore_case(sub, "set") && remaining >= 3;
        let is_incr = !is_get && !is_set && c_eq_ignore_case(sub, "incrby") && remaining >= 3;
        if !is_get && !is_set && !is_incr {
            if c_eq_ignore_case(sub, "overflow") && remaining >= 1 {
                let mode = args[j + 1];
                overflow = if c_eq_ignore_case(mode, "wrap") {
                    Overflow::Wrap
                } else if c_eq_ignore_case(mode, "sat") {
                    Overflow::Sat
                } else if c_eq_ignore_case(mode, "fail") {
                    Overflow::Fail
                } else {
                    return Err(ERR_OVERFLOW_TYPE.to_string());
                };
                j += 2;
                continue;
            }
            return Err(ERR_SYNTAX.to_string());
        }
        let (signed, bits) = parse_bitfield_type(args[j + 1])?;
        let offset = parse_bit_offset(args[j + 2], true, bits, proto_max_bulk_len)?;
        let kind = if is_get {
            BitfieldKind::Get
        } else {
            let value = parse_i64_arg(args[j + 3])?;
            if is_set {
                BitfieldKind::Set(value)
            } else {
                BitfieldKind::IncrBy(value)
            }
        };
        ops.push(BitfieldOp { kind, signed, bits, offset, overflow });
        j += if is_get { 3 } else { 4 };
    }
    if read_only && bitfield_needs_write(&ops) {
        return Err(ERR_BITFIELD_RO.to_string());
    }
    Ok(ops)
}

/// Whether any operation is a SET or INCRBY (the key is then created or grown, even when every
/// write fails with OVERFLOW FAIL).
pub fn bitfield_needs_write(ops: &[BitfieldOp]) -> bool {
    ops.iter().any(|op| op.kind != BitfieldKind::Get)
}

/// The op's field width, forced into the valid range (1..=64).
fn field_bits(op: &BitfieldOp) -> u32 {
    op.bits.clamp(1, 64)
}

/// All ones in the low `bits` bits.
fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The 9-byte window (zero-padded past the end of `s`) holding any field that starts in byte
/// `byte`, as a 72-bit big-endian number.
fn load_window(s: &[u8], byte: usize) -> u128 {
    (0..9).fold(0u128, |acc, i| {
        let b = byte.checked_add(i).and_then(|k| s.get(k)).copied().unwrap_or(0);
        (acc << 8) | u128::from(b)
    })
}

/// Unsigned value of the `bits`-wide field at `offset` (zero-padded past the end of `s`).
fn read_field(s: &[u8], offset: u64, bits: u32) -> u64 {
    let Some(byte) = byte_index(offset) else { return 0 };
    let shift = 72 - (offset & 7) as u32 - bits;
    (load_window(s, byte) >> shift) as u64 & low_mask(bits)
}

/// Signed value of the `bits`-wide field at `offset` (two's complement).
fn read_signed_field(s: &[u8], offset: u64, bits: u32) -> i64 {
    let v = read_field(s, offset, bits);
    if bits < 64 && v >> (bits - 1) & 1 == 1 {
        (v | !low_mask(bits)) as i64
    } else {
        v as i64
    }
}

/// Stores the low `bits` bits of `value` at `offset`; bytes past the end of `s` are not written.
fn write_field(s: &mut [u8], offset: u64, bits: u32, value: u64) {
    let Some(byte) = byte_index(offset) else { return };
    let shift = 72 - (offset & 7) as u32 - bits;
    let mask = u128::from(low_mask(bits)) << shift;
    let window = (load_window(s, byte) & !mask) | (u128::from(value & low_mask(bits)) << shift);
    for i in 0..9 {
        if let Some(b) = byte.checked_add(i).and_then(|k| s.get_mut(k)) {
            *b = (window >> (8 * (8 - i))) as u8;
        }
    }
}

/// Result of adding `incr` to `value` in a signed `bits`-wide field: the value to store, or
/// `None` on overflow with [`Overflow::Fail`].
fn signed_add(value: i64, incr: i64, bits: u32, overflow: Overflow) -> Option<i64> {
    let max = (1i128 << (bits - 1)) - 1;
    let min = -max - 1;
    let sum = i128::from(value) + i128::from(incr);
    if (min..=max).contains(&sum) {
        return Some(sum as i64);
    }
    match overflow {
        Overflow::Fail => None,
        Overflow::Sat => Some(if sum > max { max as i64 } else { min as i64 }),
        Overflow::Wrap => {
            let raw = (value as u64).wrapping_add(incr as u64) & low_mask(bits);
            let negative = bits < 64 && raw >> (bits - 1) & 1 == 1;
            Some(if negative { (raw | !low_mask(bits)) as i64 } else { raw as i64 })
        }
    }
}

/// Result of adding `incr` to `value` in an unsigned `bits`-wide field (`bits` <= 63): the value
/// to store, or `None` on overflow with [`Overflow::Fail`]. `value` may exceed the field (SET of a
/// too large or negative number, seen as unsigned), which counts as an overflow upward.
fn unsigned_add(value: u64, incr: i64, bits: u32, overflow: Overflow) -> Option<u64> {
    let max = low_mask(bits);
    let sum = i128::from(value) + i128::from(incr);
    if (0..=i128::from(max)).contains(&sum) {
        return Some(sum as u64);
    }
    match overflow {
        Overflow::Fail => None,
        Overflow::Sat => Some(if sum > i128::from(max) { max } else { 0 }),
        Overflow::Wrap => Some(value.wrapping_add(incr as u64) & max),
    }
}

/// Runs the ops on `s` and returns one reply per op (Some(value), or None for a SET/INCRBY that
/// overflowed under OVERFLOW FAIL, which Redis answers with nil) plus the number of changes Redis
/// adds to its dirty counter (0 means no notification).
///
/// When any op writes, `s` is first grown with zero bytes to hold the farthest written field, as
/// Redis does before running anything (a missing key is passed as an empty vector and is then
/// created even if every write fails); the caller should store `s` in that case. Growing the value
/// makes every successful write count as a change; otherwise a write counts when the field's
/// value changes. GET reads past the end as zeros.
pub fn run_bitfield_counted(s: &mut Vec<u8>, ops: &[BitfieldOp]) -> (Vec<Option<i64>>, u64) {
    let highest = ops
        .iter()
        .filter(|op| op.kind != BitfieldKind::Get)
        .map(|op| op.offset.saturating_add(u64::from(field_bits(op)) - 1))
        .max();
    let mut grown = false;
    if let Some(highest) = highest {
        let needed = byte_index(highest).map_or(usize::MAX, |b| b.saturating_add(1));
        if s.len() < needed {
            s.resize(needed, 0);
            grown = true;
        }
    }
    let mut replies = Vec::with_capacity(ops.len());
    let mut changes = 0u64;
    for op in ops {
        // Parsed ops always have a valid width; hand-built ones are clamped rather than trusted.
        let op = BitfieldOp { bits: field_bits(op), ..*op };
        let (incr, is_set) = match op.kind {
            BitfieldKind::Get => {
                let v = if op.signed {
                    read_signed_field(s, op.offset, op.bits)
                } else {
                    read_field(s, op.offset, op.bits) as i64
                };
                replies.push(Some(v));
                continue;
            }
            BitfieldKind::Set(v) => (v, true),
            BitfieldKind::IncrBy(v) => (v, false),
        };
        let outcome = if op.signed {
            let old = read_signed_field(s, op.offset, op.bits);
            let new = if is_set {
                signed_add(incr, 0, op.bits, op.overflow)
            } else {
                signed_add(old, incr, op.bits, op.overflow)
            };
            new.map(|new| (old, new, new as u64))
        } else {
            let old = read_field(s, op.offset, op.bits);
            let new = if is_set {
                unsigned_add(incr as u64, 0, op.bits, op.overflow)
            } else {
                unsigned_add(old, incr, op.bits, op.overflow)
            };
            new.map(|new| (old as i64, new as i64, new))
        };
        match outcome {
            Some((old, new, raw)) => {
                write_field(s, op.offset, op.bits, raw);
                if grown || old != new {
                    changes += 1;
                }
                replies.push(Some(if is_set { old } else { new }));
            }
            None => replies.push(None),
        }
    }
    (replies, changes)
}

/// Runs the ops on `s` (growing it as needed for writes) and returns one reply per op, Some(value)
/// or None for a FAIL overflow (nil), plus whether anything counts as written (for the caller to
/// notify). See [`run_bitfield_counted`] for the details.
pub fn run_bitfield(s: &mut Vec<u8>, ops: &[BitfieldOp]) -> (Vec<Option<i64>>, bool) {
    let (replies, changes) = run_bitfield_counted(s, ops);
    (replies, changes > 0)
}
