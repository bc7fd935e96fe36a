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
/// BITPOS's bit argument: 0 or 1.
pub fn bitpos_bit(arg: &[u8]) -> BitResult<bool> {
    match parse_i64_arg(arg)? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(ERR_BITPOS_BIT.to_string()),
    }
}

pub fn bitpos(s: Option<&[u8]>, args: &[&[u8]]) -> BitResult<i64> {
    let Some(bit_arg) = args.first() else { return Err(ERR_BITPOS_ARITY.to_string()) };
    let bit = bitpos_bit(bit_arg)?;
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
    /// Bitwise AND of all sources.
    And,
    /// Bitwise OR of all sources.
    Or,
    /// Bitwise XOR of all sources.
    Xor,
    /// Bitwise NOT of the single source.
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
    let sources = if op == BitOp::Not { &sources[..sources.len().min(1)] } else { sources };
    let max_len = sources.iter().map(|s| s.len()).max().unwrap_or(0);
    let Some((first, rest)) = sources.split_first() else { return Vec::new() };
    let mut out = Vec::with_capacity(max_len);
    out.extend_from_slice(first);
    out.resize(max_len, 0);
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
/// `None` on overflow with [`Overflow::Fail`]. For SET, `value` is the new value and `incr` is 0.
///
/// Redis decides the direction of an overflow with 64-bit wrapping arithmetic, so a SET of a value
/// so negative that `max - value` exceeds `i64::MAX` counts as an overflow *upward* and saturates at
/// the maximum; this is reproduced here.
fn signed_add(value: i64, incr: i64, bits: u32, overflow: Overflow) -> Option<i64> {
    let max = if bits >= 64 { i64::MAX } else { (1i64 << (bits - 1)) - 1 };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let upward = value > max || (bits < 64 && incr > max_incr) || (value >= 0 && incr > 0 && incr > max_incr);
    let downward = value < min || (bits < 64 && incr < min_incr) || (value < 0 && incr < 0 && incr < min_incr);
    if !upward && !downward {
        return Some(value.wrapping_add(incr));
    }
    match overflow {
        Overflow::Fail => None,
        Overflow::Sat => Some(if upward { max } else { min }),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Tiny xorshift64* generator for the randomized tests.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: u64) -> u64 {
            if n == 0 {
                0
            } else {
                self.next() % n
            }
        }

        fn range(&mut self, lo: i64, hi: i64) -> i64 {
            lo + self.below((hi - lo + 1) as u64) as i64
        }

        /// A value with long runs of 0x00/0xff so that word skipping is exercised.
        fn bytes(&mut self, max_len: u64) -> Vec<u8> {
            let len = self.below(max_len + 1) as usize;
            let fill = match self.below(3) {
                0 => 0x00,
                1 => 0xff,
                _ => return (0..len).map(|_| self.next() as u8).collect(),
            };
            let mut v = vec![fill; len];
            for _ in 0..self.below(3) {
                if len > 0 {
                    let i = self.below(len as u64) as usize;
                    v[i] ^= 1 << self.below(8);
                }
            }
            v
        }
    }

    fn ok(s: &str) -> BitResult<i64> {
        s.parse::<i64>().map_err(|e| e.to_string())
    }

    fn err<T>(e: &str) -> BitResult<T> {
        Err(e.to_string())
    }

    fn count(s: Option<&[u8]>, args: &[&str]) -> BitResult<i64> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        bitcount(s, &args)
    }

    fn pos(s: Option<&[u8]>, args: &[&str]) -> BitResult<i64> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        bitpos(s, &args)
    }

    /// BITFIELD replies and the value left in the key.
    type FieldOutcome = (Vec<Option<i64>>, Option<Vec<u8>>);

    /// Runs BITFIELD the way the command layer does; returns the replies and the stored value.
    fn field(s: Option<&[u8]>, args: &str, read_only: bool) -> BitResult<FieldOutcome> {
        let args: Vec<&[u8]> = args.split_whitespace().map(str::as_bytes).collect();
        let ops = parse_bitfield(&args, read_only, 512 << 20)?;
        let mut v = s.map(<[u8]>::to_vec).unwrap_or_default();
        let (replies, _) = run_bitfield(&mut v, &ops);
        let stored = if bitfield_needs_write(&ops) { Some(v) } else { s.map(<[u8]>::to_vec) };
        Ok((replies, stored))
    }

    fn field_replies(s: Option<&[u8]>, args: &str) -> Vec<Option<i64>> {
        field(s, args, false).map(|r| r.0).unwrap_or_default()
    }

    // -----------------------------------------------------------------------------------------
    // Argument parsing
    // -----------------------------------------------------------------------------------------

    #[test]
    fn integers_parse_like_string2ll() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in ["", "-", "-0", "01", "+1", " 1", "1 ", "1e3", "0x10", "9223372036854775808", "-9223372036854775809"]
        {
            assert_eq!(parse_i64(bad.as_bytes()), None, "{bad:?}");
        }
        assert_eq!(parse_i64(b"000000000000000000001"), None);
        assert_eq!(parse_i64(b"1\0"), None);
    }

    #[test]
    fn bit_offsets() {
        let max = 512u64 << 20;
        assert_eq!(parse_bit_offset(b"0", false, 0, max), Ok(0));
        assert_eq!(parse_bit_offset(b"4294967295", false, 0, max), Ok(4294967295));
        assert_eq!(parse_bit_offset(b"4294967296", false, 0, max), err(ERR_BIT_OFFSET));
        assert_eq!(parse_bit_offset(b"-1", false, 0, max), err(ERR_BIT_OFFSET));
        assert_eq!(parse_bit_offset(b"x", false, 0, max), err(ERR_BIT_OFFSET));
        assert_eq!(parse_bit_offset(b"#1", false, 0, max), err(ERR_BIT_OFFSET));
        assert_eq!(parse_bit_offset(b"#1", true, 0, max), err(ERR_BIT_OFFSET));
        assert_eq!(parse_bit_offset(b"#3", true, 8, max), Ok(24));
        assert_eq!(parse_bit_offset(b"#", true, 8, max), err(ERR_BIT_OFFSET));
        assert_eq!(parse_bit_offset(b"#-1", true, 8, max), err(ERR_BIT_OFFSET));
        assert_eq!(parse_bit_offset(b"#536870911", true, 8, max), Ok(4294967288));
        assert_eq!(parse_bit_offset(b"#536870912", true, 8, max), err(ERR_BIT_OFFSET));
        // Redis multiplies with wrap-around: (2^61 + 1) * 8 == 8 (mod 2^64).
        assert_eq!(parse_bit_offset(b"#2305843009213693953", true, 8, max), Ok(8));
        assert_eq!(parse_bit_offset(b"#2305843009213693953", true, 7, max), err(ERR_BIT_OFFSET));
        assert_eq!(parse_bit_offset(b"#9223372036854775807", true, 64, max), err(ERR_BIT_OFFSET));
        assert_eq!(parse_bit_offset(b"", true, 8, max), err(ERR_BIT_OFFSET));
        // Smaller limits, and no limit at all (master / AOF clients).
        assert_eq!(parse_bit_offset(b"7", false, 0, 1), Ok(7));
        assert_eq!(parse_bit_offset(b"8", false, 0, 1), err(ERR_BIT_OFFSET));
        assert_eq!(parse_bit_offset(b"0", false, 0, 0), err(ERR_BIT_OFFSET));
        assert_eq!(parse_bit_offset(b"9223372036854775807", false, 0, u64::MAX), Ok(i64::MAX as u64));
    }

    #[test]
    fn bit_values() {
        assert_eq!(parse_bit_value(b"0"), Ok(false));
        assert_eq!(parse_bit_value(b"1"), Ok(true));
        for bad in ["2", "-1", "01", "-0", "", "x", "1 "] {
            assert_eq!(parse_bit_value(bad.as_bytes()), err(ERR_BIT_VALUE), "{bad:?}");
        }
    }

    // -----------------------------------------------------------------------------------------
    // SETBIT / GETBIT
    // -----------------------------------------------------------------------------------------

    #[test]
    fn setbit_getbit() {
        let mut s = Vec::new();
        assert_eq!(set_bit(&mut s, 7, true), 0);
        assert_eq!(s, [0x01]);
        assert_eq!(set_bit(&mut s, 7, true), 1);
        assert_eq!(set_bit(&mut s, 0, true), 0);
        assert_eq!(s, [0x81]);
        assert_eq!(set_bit(&mut s, 7, false), 1);
        assert_eq!(s, [0x80]);
        assert_eq!(set_bit(&mut s, 17, false), 0);
        assert_eq!(s, [0x80, 0, 0]);
        assert_eq!(get_bit(&s, 0), 1);
        assert_eq!(get_bit(&s, 1), 0);
        assert_eq!(get_bit(&s, 100), 0);
        assert_eq!(get_bit(&s, u64::MAX), 0);
        assert_eq!(get_bit(b"1", 2), 1); // '1' is 0x31.
        assert_eq!(get_bit(b"1", 7), 1);
        assert_eq!(get_bit(b"1", 4), 0);
    }

    // -----------------------------------------------------------------------------------------
    // BITCOUNT
    // -----------------------------------------------------------------------------------------

    #[test]
    fn bitcount_basics() {
        assert_eq!(count(None, &[]), ok("0"));
        assert_eq!(count(None, &["0", "1000", "bit"]), ok("0"));
        // A missing key answers 0 before the arguments are looked at.
        assert_eq!(count(None, &["1"]), ok("0"));
        assert_eq!(count(None, &["a", "b", "c", "d", "e"]), ok("0"));
        let s = Some(&b"foobar"[..]);
        assert_eq!(count(s, &[]), ok("26"));
        assert_eq!(count(s, &["0", "-1"]), ok("26"));
        assert_eq!(count(s, &["1", "-2"]), ok("18")); // "ooba"
        assert_eq!(count(s, &["-2", "1"]), ok("0"));
        assert_eq!(count(s, &["0", "1000"]), ok("26"));
        assert_eq!(count(s, &["0", "-1", "bit"]), ok("26"));
        assert_eq!(count(s, &["10", "14", "bit"]), ok("4"));
        assert_eq!(count(s, &["3", "14", "bit"]), ok("7"));
        assert_eq!(count(s, &["3", "29", "bit"]), ok("16"));
        assert_eq!(count(s, &["10", "-34", "bit"]), ok("4"));
        assert_eq!(count(s, &["3", "-34", "bit"]), ok("7"));
        assert_eq!(count(s, &["3", "-19", "bit"]), ok("16"));
        assert_eq!(count(s, &["-2", "1", "bit"]), ok("0"));
        assert_eq!(count(s, &["0", "1000", "bit"]), ok("26"));
        assert_eq!(count(s, &["1", "2", "BiT"]), ok("2"));
        assert_eq!(count(s, &["0", "0", "BYTE"]), ok("4"));
        assert_eq!(count(s, &["0", "4294967296"]), ok("26"));
        let x = Some(&b"xxxx"[..]);
        assert_eq!(count(x, &["4", "10"]), ok("0"));
        assert_eq!(count(x, &["32", "87", "bit"]), ok("0"));
        assert_eq!(count(x, &["-6", "-7"]), ok("0"));
        assert_eq!(count(x, &["-6", "-15", "bit"]), ok("0"));
        assert_eq!(count(Some(b"ab"), &["1", "-1"]), ok("3"));
        assert_eq!(count(Some(b"__PPxxxxxxxxxxxxxxxxRR__"), &["2", "-3"]), ok("74"));
        assert_eq!(count(Some(b""), &[]), ok("0"));
        assert_eq!(count(Some(b""), &["0", "-1", "bit"]), ok("0"));
        assert_eq!(count(Some(b"\xaa"), &[]), ok("4"));
        assert_eq!(count(Some(b"\x00\x00\xff"), &["0", "-1", "bit"]), ok("8"));
    }

    #[test]
    fn bitcount_errors_and_order() {
        let s = Some(&b"foobar"[..]);
        assert_eq!(count(s, &["0"]), err(ERR_SYNTAX));
        assert_eq!(count(s, &["0", "1", "hello"]), err(ERR_SYNTAX));
        assert_eq!(count(s, &["1", "2", "3", "4"]), err(ERR_SYNTAX));
        assert_eq!(count(s, &["x", "-2", "foo"]), err(ERR_NOT_INTEGER));
        assert_eq!(count(s, &["0", "x", "foo"]), err(ERR_NOT_INTEGER));
        // Negative start > end answers 0 before the unit is validated.
        assert_eq!(count(s, &["-1", "-2", "foo"]), ok("0"));
        assert_eq!(count(s, &["0", "1", "bit\0trailing"]), ok("1"));
        assert_eq!(count(s, &["0", "1", ""]), err(ERR_SYNTAX));
    }

    // -----------------------------------------------------------------------------------------
    // BITPOS
    // -----------------------------------------------------------------------------------------

    #[test]
    fn bitpos_missing_and_empty() {
        assert_eq!(pos(None, &["0"]), ok("0"));
        assert_eq!(pos(None, &["0", "0", "-1", "bit"]), ok("0"));
        assert_eq!(pos(None, &["1"]), ok("-1"));
        assert_eq!(pos(None, &["1", "0", "-1"]), ok("-1"));
        // The bit is validated first, the rest only for existing keys.
        assert_eq!(pos(None, &["x"]), err(ERR_NOT_INTEGER));
        assert_eq!(pos(None, &["2"]), err(ERR_BITPOS_BIT));
        assert_eq!(pos(None, &["1", "a", "b", "c", "d", "e", "f"]), ok("-1"));
        assert_eq!(pos(None, &[]), err(ERR_BITPOS_ARITY));
        // An existing empty string holds neither a 0 nor a 1.
        for args in [&["0"][..], &["1"], &["0", "0"], &["0", "0", "-1", "bit"]] {
            assert_eq!(pos(Some(b""), args), ok("-1"), "{args:?}");
        }
    }

    #[test]
    fn bitpos_tcl_cases() {
        let s = Some(&b"\xff\xf0\x00"[..]);
        assert_eq!(pos(s, &["0"]), ok("12"));
        assert_eq!(pos(s, &["0", "0", "-1", "bit"]), ok("12"));
        assert_eq!(pos(s, &["0", "1"]), ok("12"));
        assert_eq!(pos(s, &["0", "1", "-1", "bit"]), ok("12"));
        let s = Some(&b"\x00\x0f\x00"[..]);
        assert_eq!(pos(s, &["1"]), ok("12"));
        assert_eq!(pos(s, &["1", "0", "-1", "bit"]), ok("12"));
        let s = Some(&b"\x00\x0f\xff"[..]);
        assert_eq!(pos(s, &["1", "1"]), ok("12"));
        assert_eq!(pos(s, &["1", "1", "-1", "bit"]), ok("12"));

        let mut ones = vec![0xffu8; 27];
        ones.push(0x0f);
        let mut zeros = vec![0u8; 27];
        zeros.push(0xf0);
        for start in 0..=8 {
            let st = start.to_string();
            assert_eq!(pos(Some(&ones), &["0", &st]), ok("216"));
            assert_eq!(pos(Some(&zeros), &["1", &st]), ok("216"));
            let bit_start = (start * 8 + 1).to_string();
            assert_eq!(pos(Some(&ones), &["0", &bit_start, "-1", "bit"]), ok("216"));
            assert_eq!(pos(Some(&zeros), &["1", &bit_start, "-1", "bit"]), ok("216"));
        }

        let mut z = Vec::new();
        for _ in 0..20 {
            assert_eq!(pos(Some(&z), &["1"]), ok("-1"));
            assert_eq!(pos(Some(&z), &["1", "0", "-1", "bit"]), ok("-1"));
            z.push(0);
        }

        let s = Some(&b"\x00\xff\x00"[..]);
        assert_eq!(pos(s, &["0", "0", "-1"]), ok("0"));
        assert_eq!(pos(s, &["0", "1", "-1"]), ok("16"));
        assert_eq!(pos(s, &["0", "2", "-1"]), ok("16"));
        assert_eq!(pos(s, &["0", "2", "200"]), ok("16"));
        assert_eq!(pos(s, &["0", "1", "1"]), ok("-1"));
        assert_eq!(pos(s, &["0", "0", "-1", "bit"]), ok("0"));
        assert_eq!(pos(s, &["0", "8", "-1", "bit"]), ok("16"));
        assert_eq!(pos(s, &["0", "16", "-1", "bit"]), ok("16"));
        assert_eq!(pos(s, &["0", "16", "200", "bit"]), ok("16"));
        assert_eq!(pos(s, &["0", "8", "8", "bit"]), ok("-1"));
        assert_eq!(pos(s, &["1", "0", "-1"]), ok("8"));
        assert_eq!(pos(s, &["1", "1", "-1"]), ok("8"));
        assert_eq!(pos(s, &["1", "2", "-1"]), ok("-1"));
        assert_eq!(pos(s, &["1", "2", "200"]), ok("-1"));
        assert_eq!(pos(s, &["1", "1", "1"]), ok("8"));
        assert_eq!(pos(s, &["1", "0", "-1", "bit"]), ok("8"));
        assert_eq!(pos(s, &["1", "8", "-1", "bit"]), ok("8"));
        assert_eq!(pos(s, &["1", "16", "-1", "bit"]), ok("-1"));
        assert_eq!(pos(s, &["1", "16", "200", "bit"]), ok("-1"));
        assert_eq!(pos(s, &["1", "8", "8", "bit"]), ok("8"));

        // Looking for a clear bit: zero padding on the right only without an explicit end.
        let s = Some(&b"\xff\xff\xff"[..]);
        assert_eq!(pos(s, &["0"]), ok("24"));
        assert_eq!(pos(s, &["0", "0"]), ok("24"));
        assert_eq!(pos(s, &["0", "-1"]), ok("24"));
        assert_eq!(pos(s, &["0", "5"]), ok("-1"));
        assert_eq!(pos(s, &["0", "0", "-1"]), ok("-1"));
        assert_eq!(pos(s, &["0", "0", "-1", "bit"]), ok("-1"));
        assert_eq!(pos(s, &["0", "0", "-1", "byte"]), ok("-1"));
    }

    #[test]
    fn bitpos_errors_and_order() {
        let s = Some(&b"foobar"[..]);
        assert_eq!(pos(s, &["x"]), err(ERR_NOT_INTEGER));
        assert_eq!(pos(s, &["-1"]), err(ERR_BITPOS_BIT));
        assert_eq!(pos(s, &["2", "x"]), err(ERR_BITPOS_BIT));
        assert_eq!(pos(s, &["1", "x"]), err(ERR_NOT_INTEGER));
        // The unit is checked before the end argument.
        assert_eq!(pos(s, &["1", "0", "notint", "foo"]), err(ERR_SYNTAX));
        assert_eq!(pos(s, &["1", "0", "notint", "bit"]), err(ERR_NOT_INTEGER));
        assert_eq!(pos(s, &["1", "notint", "0", "foo"]), err(ERR_NOT_INTEGER));
        assert_eq!(pos(s, &["1", "0", "1", "bit", "extra"]), err(ERR_SYNTAX));
    }

    // -----------------------------------------------------------------------------------------
    // BITOP
    // -----------------------------------------------------------------------------------------

    #[test]
    fn bitop_cases() {
        assert_eq!(parse_bitop(b"AnD"), Ok(BitOp::And));
        assert_eq!(parse_bitop(b"or"), Ok(BitOp::Or));
        assert_eq!(parse_bitop(b"XOR"), Ok(BitOp::Xor));
        assert_eq!(parse_bitop(b"not"), Ok(BitOp::Not));
        assert_eq!(parse_bitop(b"nand"), err(ERR_SYNTAX));
        assert_eq!(parse_bitop(b""), err(ERR_SYNTAX));
        assert_eq!(check_bitop_sources(BitOp::Not, 2), err(ERR_BITOP_NOT));
        assert_eq!(check_bitop_sources(BitOp::Not, 1), Ok(()));
        assert_eq!(check_bitop_sources(BitOp::And, 5), Ok(()));

        assert_eq!(bitop(BitOp::Not, &[b""]), b"");
        assert_eq!(bitop(BitOp::Not, &[b"\xaa\x00\xff\x55"]), b"\x55\xff\x00\xaa");
        for op in [BitOp::And, BitOp::Or, BitOp::Xor] {
            assert_eq!(bitop(op, &[b"\x01\x02\xff"]), b"\x01\x02\xff");
        }
        assert_eq!(bitop(BitOp::And, &[b"", b"\x01\x02\xff"]), b"\x00\x00\x00");
        assert_eq!(bitop(BitOp::Or, &[b"", b"\x01\x02\xff", b""]), b"\x01\x02\xff");
        assert_eq!(bitop(BitOp::Xor, &[b"", b"\x01\x02\xff"]), b"\x01\x02\xff");
        let (a, b): (&[u8], &[u8]) = (b"\x01\x02\xff\xff", b"\x01\x02\xff");
        assert_eq!(bitop(BitOp::And, &[a, b]), b"\x01\x02\xff\x00");
        assert_eq!(bitop(BitOp::Or, &[a, b]), b"\x01\x02\xff\xff");
        assert_eq!(bitop(BitOp::Xor, &[a, b]), b"\x00\x00\x00\xff");
        assert_eq!(bitop(BitOp::Xor, &[b"1", b"2", b"1"]), b"2");
        assert_eq!(bitop(BitOp::Or, &[&[0u8; 32], b""]).len(), 32);
        assert_eq!(bitop(BitOp::And, &[b"", b""]), b"");
        assert_eq!(bitop(BitOp::Or, &[]), b"");
        assert_eq!(bitop(BitOp::Not, &[]), b"");
        assert_eq!(bitop(BitOp::Not, &[b"\x0f", b"\x00\x00"]), b"\xf0");
    }

    // -----------------------------------------------------------------------------------------
    // BITFIELD
    // -----------------------------------------------------------------------------------------

    #[test]
    fn bitfield_tcl_cases() {
        let some = |v: &[i64]| v.iter().map(|&x| Some(x)).collect::<Vec<_>>();
        let mut v = Vec::new();
        let mut run = |args: &str| {
            let words: Vec<&[u8]> = args.split_whitespace().map(str::as_bytes).collect();
            let ops = parse_bitfield(&words, false, 512 << 20).expect("valid");
            run_bitfield(&mut v, &ops).0
        };
        assert_eq!(run("set i8 0 -100"), some(&[0]));
        assert_eq!(run("set i8 0 101"), some(&[-100]));
        assert_eq!(run("get i8 0"), some(&[101]));
        assert_eq!(field_replies(None, "set u8 0 255"), some(&[0]));
        assert_eq!(field_replies(Some(b"\xff"), "set u8 0 100"), some(&[255]));
        assert_eq!(field_replies(None, "set i8 0 255 set i8 0 100 get i8 0"), some(&[0, -1, 100]));
        assert_eq!(field_replies(None, "set u8 0 255 incrby u8 0 100 get u8 0"), some(&[0, 99, 99]));
        assert_eq!(field(None, "", false), Ok((vec![], None)));
        assert_eq!(field(Some(b"x"), "", true), Ok((vec![], Some(b"x".to_vec()))));
        let (_, stored) = field(None, "set u8 #0 65 set u8 #1 66 set u8 #2 67", false).expect("valid");
        assert_eq!(stored.as_deref(), Some(&b"ABC"[..]));
        assert_eq!(field_replies(Some(b"\x0a"), "incrby u8 #0 100 incrby u8 #0 100"), some(&[110, 210]));
        assert_eq!(field_replies(Some(&[100]), "overflow wrap incrby u8 #0 257 get u8 #0"), some(&[101, 101]));
        assert_eq!(field_replies(Some(&[101]), "overflow wrap incrby u8 #0 255 get u8 #0"), some(&[100, 100]));
        assert_eq!(field_replies(Some(&[100]), "overflow sat incrby u8 #0 257 get u8 #0"), some(&[255, 255]));
        assert_eq!(field_replies(Some(&[255]), "overflow sat incrby u8 #0 -255 get u8 #0"), some(&[0, 0]));
        assert_eq!(field_replies(Some(&[100]), "overflow wrap incrby i8 #0 257 get i8 #0"), some(&[101, 101]));
        assert_eq!(field_replies(Some(&[101]), "overflow wrap incrby i8 #0 255 get i8 #0"), some(&[100, 100]));
        assert_eq!(field_replies(Some(&[100]), "overflow sat incrby i8 #0 257 get i8 #0"), some(&[127, 127]));
        assert_eq!(field_replies(Some(&[127]), "overflow sat incrby i8 #0 -255 get i8 #0"), some(&[-128, -128]));
        // Regression #3221: integer-encoded "1" is read through its digits.
        assert_eq!(field_replies(Some(b"1"), "get u1 0"), some(&[0]));
        // Regression #3564.
        assert_eq!(field_replies(None, "SET i8 0 10 SET i8 64 10 INCRBY i8 10 99900"), some(&[0, 0, 60]));
    }

    #[test]
    fn bitfield_overflow_quirks() {
        // FAIL replies nil and leaves the field alone, but the key is still created / grown.
        assert_eq!(field(None, "overflow fail set u2 0 10", false), Ok((vec![None], Some(vec![0]))));
        assert_eq!(field(Some(b""), "overflow fail incrby i8 8 200", false), Ok((vec![None], Some(vec![0, 0]))));
        // A negative SET into an unsigned field overflows upward.
        assert_eq!(field_replies(None, "set u8 0 -1 get u8 0"), vec![Some(0), Some(255)]);
        assert_eq!(field_replies(None, "overflow sat set u8 0 -1 get u8 0"), vec![Some(0), Some(255)]);
        assert_eq!(field_replies(None, "overflow sat set u8 0 -1000 get u8 0"), vec![Some(0), Some(255)]);
        // Redis saturates a SET of a hugely negative value at the *maximum* of a signed field.
        let min = i64::MIN;
        assert_eq!(field_replies(None, &format!("overflow sat set i16 0 {min} get i16 0")), vec![Some(0), Some(32767)]);
        assert_eq!(field_replies(None, &format!("overflow sat set i1 0 {min} get i1 0")), vec![Some(0), Some(0)]);
        assert_eq!(field_replies(None, "overflow sat set i16 0 -40000 get i16 0"), vec![Some(0), Some(-32768)]);
        assert_eq!(field_replies(None, &format!("overflow wrap set i16 0 {min} get i16 0")), vec![Some(0), Some(0)]);
        assert_eq!(field_replies(None, &format!("overflow fail set i16 0 {min} get i16 0")), vec![None, Some(0)]);
        assert_eq!(field_replies(None, &format!("overflow sat set i64 0 {min} get i64 0")), vec![Some(0), Some(min)]);
        assert_eq!(
            field_replies(None, &format!("overflow sat incrby i64 0 {min} incrby i64 0 -1")),
            vec![Some(min); 2]
        );
        let max = i64::MAX;
        assert_eq!(
            field_replies(None, &format!("overflow wrap incrby i64 0 {max} incrby i64 0 1")),
            vec![Some(max), Some(min)]
        );
        assert_eq!(field_replies(None, &format!("overflow sat incrby u63 0 {max} incrby u63 0 1")), vec![Some(max); 2]);
        assert_eq!(field_replies(None, &format!("incrby u63 0 {max} incrby u63 0 1")), vec![Some(max), Some(0)]);
        assert_eq!(
            field_replies(None, "overflow fail incrby u8 0 255 incrby u8 0 1 incrby u8 0 -256"),
            vec![Some(255), None, None]
        );
        // OVERFLOW applies to the operations that follow it only.
        assert_eq!(
            field_replies(None, "set u4 0 20 overflow sat set u4 0 20 get u4 0"),
            vec![Some(0), Some(4), Some(15)]
        );
        // Unaligned fields spanning 9 bytes.
        assert_eq!(
            field_replies(None, &format!("set i64 7 {min} get i64 7 get u1 7 get u63 8")),
            vec![Some(0), Some(min), Some(1), Some(0)]
        );
        assert_eq!(
            field_replies(Some(&[0xff; 9]), "get i64 7 get u63 9 get i64 8"),
            vec![Some(-1), Some(max), Some(-1)]
        );
    }

    #[test]
    fn bitfield_parse_errors() {
        let p = |args: &str, ro: bool| {
            let words: Vec<&[u8]> = args.split_whitespace().map(str::as_bytes).collect();
            parse_bitfield(&words, ro, 512 << 20).map(|ops| ops.len())
        };
        assert_eq!(p("get u64 0", false), err(ERR_BITFIELD_TYPE));
        assert_eq!(p("get i65 0", false), err(ERR_BITFIELD_TYPE));
        assert_eq!(p("get u0 0", false), err(ERR_BITFIELD_TYPE));
        assert_eq!(p("get I8 0", false), err(ERR_BITFIELD_TYPE));
        assert_eq!(p("get u08 0", false), err(ERR_BITFIELD_TYPE));
        assert_eq!(p("get i 0", false), err(ERR_BITFIELD_TYPE));
        assert_eq!(p("get i-1 0", false), err(ERR_BITFIELD_TYPE));
        assert_eq!(p("get u8 #-1", false), err(ERR_BIT_OFFSET));
        assert_eq!(p("get u8 4294967296", false), err(ERR_BIT_OFFSET));
        assert_eq!(p("get u8 4294967295", false), Ok(1));
        assert_eq!(p("overflow", false), err(ERR_SYNTAX));
        assert_eq!(p("overflow foo", false), err(ERR_OVERFLOW_TYPE));
        assert_eq!(p("overflow get u8 0", false), err(ERR_OVERFLOW_TYPE));
        assert_eq!(p("get", false), err(ERR_SYNTAX));
        assert_eq!(p("get u8", false), err(ERR_SYNTAX));
        assert_eq!(p("set u8 0", false), err(ERR_SYNTAX));
        assert_eq!(p("foo", false), err(ERR_SYNTAX));
        assert_eq!(p("set i8 0 x", false), err(ERR_NOT_INTEGER));
        assert_eq!(p("incrby i8 0 01", false), err(ERR_NOT_INTEGER));
        // BITFIELD_RO: parse errors win over the read-only error, which comes after parsing.
        assert_eq!(p("get u8 0 set u8 0 1", true), err(ERR_BITFIELD_RO));
        assert_eq!(p("set u8 0 1 get u8", true), err(ERR_SYNTAX));
        assert_eq!(p("overflow fail get u8 0 GET i64 #3", true), Ok(2));
        assert_eq!(p("OVERFLOW SAT overflow WRAP Overflow Fail", true), Ok(0));
        // Names are compared as C strings.
        let words: [&[u8]; 3] = [b"get\0junk", b"u8\0junk", b"0"];
        assert_eq!(parse_bitfield(&words, true, 512 << 20).map(|ops| ops.len()), Ok(1));
    }

    #[test]
    fn bitfield_change_counting() {
        let parse = |args: &str| {
            let words: Vec<&[u8]> = args.split_whitespace().map(str::as_bytes).collect();
            parse_bitfield(&words, false, 512 << 20).expect("valid")
        };
        // Creating the value always counts, even for a no-op SET.
        let mut v = Vec::new();
        assert_eq!(run_bitfield_counted(&mut v, &parse("set i5 0 0")), (vec![Some(0)], 1));
        assert_eq!(run_bitfield_counted(&mut v, &parse("set i5 0 0")), (vec![Some(0)], 0));
        assert_eq!(run_bitfield_counted(&mut v, &parse("set i5 0 1 set i5 0 1")), (vec![Some(0), Some(1)], 1));
        assert_eq!(run_bitfield_counted(&mut v, &parse("incrby i5 0 0")), (vec![Some(1)], 0));
        assert_eq!(run_bitfield_counted(&mut v, &parse("incrby i5 0 1")), (vec![Some(2)], 1));
        // Growing the value makes every write count.
        assert_eq!(run_bitfield_counted(&mut v, &parse("set i5 90 0 set i5 0 2")), (vec![Some(0), Some(2)], 2));
        assert_eq!(v.len(), 12);
        let mut v = Vec::new();
        assert_eq!(run_bitfield_counted(&mut v, &parse("overflow fail set u2 0 5")), (vec![None], 0));
        assert_eq!(v, [0]);
        assert_eq!(run_bitfield(&mut v, &parse("get u2 0")), (vec![Some(0)], false));
        // Read-only op lists never grow the value.
        let mut v = vec![0xff];
        assert_eq!(run_bitfield(&mut v, &parse("get u8 100 get i8 4")), (vec![Some(0), Some(-16)], false));
        assert_eq!(v, [0xff]);
        // Hand-built ops with a bad width do not panic.
        let op =
            BitfieldOp { kind: BitfieldKind::IncrBy(1), signed: false, bits: 0, offset: 3, overflow: Overflow::Sat };
        let _ = run_bitfield(&mut v, &[op, BitfieldOp { bits: 99, signed: true, ..op }, BitfieldOp { bits: 64, ..op }]);
    }

    // -----------------------------------------------------------------------------------------
    // Cases recorded from a real redis-server 7.0.15
    // -----------------------------------------------------------------------------------------

    /// `command value args... => stored reply`. Values: `-` missing, `%hex` bytes; arguments are
    /// literal unless written `%hex`. For BITOP the operands are the source values and the stored
    /// value is the destination's (it held "old" before). Replies: `I:n`, `A:a,b,n` (n = nil),
    /// `E:text`.
    const REDIS_CASES: &str = "\
bitcount %10 -25 11 % => %10 E:ERR syntax error
bitcount %49720d051fcca2404251ac4f4a601dee19 16 => %49720d051fcca2404251ac4f4a601dee19 E:ERR syntax error
bitcount %dbff 24 % byte => %dbff E:ERR value is not an integer or out of range
bitcount %f7ffffffff -9223372036854775809 -210 => %f7ffffffff E:ERR value is not an integer or out of range
bitcount % 24 -29 bit => % I:0
bitcount %0000000000000000010000000000010000 => %0000000000000000010000000000010000 I:2
bitcount %0000004004000000000000000000000000 -15 -3 Byte => %0000004004000000000000000000000000 I:2
bitcount %05d5 -13 3 => %05d5 I:7
bitcount %165988479e 26 17 byte => %165988479e I:0
bitcount %1f -30 -3 byte => %1f I:5
bitcount %8fb21b06f8 18 -5 => %8fb21b06f8 I:0
bitcount %b3 9223372036854775807 -7 byte => %b3 I:0
bitcount %bf13d43e4844329e3c2c939bde8f0c => %bf13d43e4844329e3c2c939bde8f0c I:60
bitcount %e5a99bf393320b45 -99 29 bit => %e5a99bf393320b45 I:18
bitcount %ea -5 -30 => %ea I:0
bitcount %ff -1 25 byte => %ff I:8
bitcount %ff -2 29 => %ff I:8
bitcount %ffffff => %ffffff I:24
bitcount %ffffffeffffffffdff -30 -21 bit => %ffffffeffffffffdff I:10
bitcount %ffffffffdffeffff -1 -29 => %ffffffffdffeffff I:0
bitcount %ffffffffffffffffffffffffffffff -13 -13 => %ffffffffffffffffffffffffffffff I:8
bitcount %ffffffffffffffffffffffffffffff 3 -11 => %ffffffffffffffffffffffffffffff I:16
bitcount %ffffffffffffffffffffffffffffffff 25 18 => %ffffffffffffffffffffffffffffffff I:0
bitcount %ffffffffffffffffffffffffffffffffff -11 -23 bits => %ffffffffffffffffffffffffffffffffff I:0
bitcount - -0 14 bit => - I:0
bitcount - 17 -9223372036854775808 => - I:0
bitcount - 19 -17 bit => - I:0
bitcount - => - I:0
bitfield %00 SET i43 58 -8796093022208 GET u54 67 GET u59 #2 get u22 #1 => %00000000000000000000000000 A:0,0,0,0
bitfield %00 set i39 89 -204 incrby i18 9 6 GET u39 #8 => %000000c0000000000000007fffffff34 A:0,6,0
bitfield %0000 get i18 51 incrby u36 100 68719476739 GET i2 #3 => %0000000000000000000000000000000003 A:0,3,0
bitfield %000000000000000000000000 GET i50 #0 INCRBY i48 59 -101 => %000000000000001ffffffffff360 A:0,-101
bitfield %000000000000000000000000 get i21 #10 overflow wrap GET u28 14 => %000000000000000000000000 A:0,0
bitfield %000000000000000000000000 get i21 62 set i6 91 -65 => %00000000000000000000001f80 A:0,0
bitfield %000000000000000000000000 set i29 63 -5 GET u38 91 => %0000000000000001ffffffb0 A:0,137438953472
bitfield %0000010000000000 get i11 46 get u7 44 get i15 36 => %0000010000000000 A:0,0,0
bitfield %002000000000000004 GET i22 93 get u57 #4 => %002000000000000004 A:0,0
bitfield %1fae14 GET u38 19 INCRBY u5 8 9223372036854775807 => %1fa614 A:171798691840,20
bitfield %9eb5 overflow SAT GET i18 84 overflow fail get u4 32 => %9eb5 A:0,0
bitfield %c034fdd8eb INCRBY u10 78 -143 GET i33 69 overflow Fail => %c034fdd8eb000000000371 A:881,14434304
bitfield %f7ffff set u24 89 -24652859951219 get i43 37 => %f7ffff0000000000000000051bc680 A:0,0
bitfield %ff set u8 73 254 set i6 50 65 overflow wrap => %ff00000000000100007f00 A:0,0
bitfield %ffff GET i63 6 get u46 50 SET u10 76 1024 => %ffff000000000000000000 A:-9007199254740992,0,0
bitfield %ffffff GET i60 #8 GET i40 63 => %ffffff A:0,0
bitfield %ffffff get u24 50 INCRBY i54 21 -172 => %fffffeffffffffffea80 A:0,-2251799813685420
bitfield %ffffff set u46 87 1 overflow wrap get i21 #4 GET i59 #6 => %ffffff0000000000000000000000000008 A:0,0,0
bitfield %ffffffffff overflow SAT GET u59 19 overflow Fail => %ffffffffff A:576460477425516544
bitfield %ffffffffffffffff INCRBY u43 46 9223372036854775807 => %fffffffffffffffeffffff80 A:8796059467775
bitfield %ffffffffffffffffffffffff GET u38 #7 get i51 78 => %ffffffffffffffffffffffff A:0,-8589934592
bitfield - INCRBY u35 58 1 GET u61 17 overflow fail => %000000000000000000000008 A:1,0
bitfield - get i9 #1 overflow SAT SET u37 21 137438953469 => %000007ffffffff40 A:0,0
bitfield - overflow wrap get i55 #10 overflow wrap get u57 6 overflow wrap => - A:0,0
bitfield % overflow wrap overflow Fail GET i29 #9 set u3 #10 880 get u27 58 => %0000000000 A:0,n,0
bitfield %0000 incrby i53 #0 2 overflow Fail SET i14 81 -8193 => %000000000000100000000000 A:2,n
bitfield %000000000000000000000000 overflow Fail SET u21 21 -2 SET i5 72 16 => %000000000000000000000000 A:n,n
bitfield %03b6642b39 GET i49 47 overflow fail INCRBY i22 16 -17207493488 => %03b6642b39 A:0,n
bitfield %41c7 overflow fail overflow SAT overflow fail GET u41 #8 set i4 16 -30 => %41c700 A:0,n
bitfield %98 overflow Fail set i14 #3 12050538963566 get u18 #7 => %98000000000000 A:n,0
bitfield %d0c1fd overflow fail incrby u16 90 -196 GET i39 #3 => %d0c1fd0000000000000000000000 A:n,0
bitfield %ff incrby u27 #2 1 overflow Fail incrby u56 42 72057594037927938 => %ff000000000000000000800000 A:1,n
bitfield %fffc overflow fail incrby i3 20 -125 get i50 10 overflow wrap => %fffc00 A:n,-70368744177664
bitfield %ffffff SET u5 #2 253 overflow fail SET u42 42 4398046511105 => %fffbff0000000000000000 A:31,n
bitfield - GET i38 70 GET u13 63 overflow fail INCRBY u25 73 -3500691367 => %00000000000000000000000000 A:0,0,n
bitfield - get u25 #3 overflow wrap GET i60 88 overflow fail set u7 57 -293 => %0000000000000000 A:0,0,n
bitfield - overflow SAT overflow fail GET i51 40 set u17 91 -191 => %0000000000000000000000000000 A:0,n
bitfield - set i14 2 8193 overflow fail INCRBY u9 #0 9223372036854775807 => %2001 A:0,n
bitfield %f2 overflow get i11 46 set u22 71 -5326042151624464 => %f2 E:ERR Invalid OVERFLOW type specified
bitfield - set u53 64 227 overflow GET u20 6 set i21 68 -1048574 => - E:ERR Invalid OVERFLOW type specified
bitfield %e428 GET i32 19 incrby u51 #-1 -146 => %e428 E:ERR bit offset is not an integer or out of range
bitfield - INCRBY i64 #0 -137 get u4 x => - E:ERR bit offset is not an integer or out of range
bitfield % GET i57 65 get i15 #9 set i33 98 43 get => % E:ERR syntax error
bitfield %0000000000300000 set i21 75 69 foo get u52 67 => %0000000000300000 E:ERR syntax error
bitfield % INCRBY u40 54 -15300 get u8 #3 INCRBY i10 54 % => % E:ERR value is not an integer or out of range
bitfield - get u63 #6 set u30 22 01 get => - E:ERR value is not an integer or out of range
bitfield_ro % => % A:
bitfield_ro %004000 overflow Fail get u22 #1 => %004000 A:0
bitfield_ro %6546b98b0ec81e5ff4 => %6546b98b0ec81e5ff4 A:
bitfield_ro %ff => %ff A:
bitfield_ro %ffffffffffffffffffffffff get i25 37 => %ffffffffffffffffffffffff A:-1
bitfield_ro - => - A:
bitfield_ro - set i38 80 -35 => - E:ERR BITFIELD_RO only supports the GET subcommand
bitfield_ro - set u21 #2 0 => - E:ERR BITFIELD_RO only supports the GET subcommand
bitfield_ro - overflow get u58 33 get overflow SAT SET u54 26 113 => - E:ERR Invalid OVERFLOW type specified
bitfield_ro - overflow set i46 #6 -70368744177661 => - E:ERR Invalid OVERFLOW type specified
bitfield_ro % SET u32 4294967296 9223372036854775807 => % E:ERR bit offset is not an integer or out of range
bitfield_ro %0000 set u57 4294967296 65 => %0000 E:ERR bit offset is not an integer or out of range
bitfield_ro % get u7 #8 get => % E:ERR syntax error
bitfield_ro %0000 set i27 86 -35855267002762 SET i-1 35 => %0000 E:ERR syntax error
bitfield_ro % GET i11 8 SET i3 #8 01 => % E:ERR value is not an integer or out of range
bitfield_ro - incrby u31 72 % SET u9 13 0 overflow wrap => - E:ERR value is not an integer or out of range
bitop - not %02d9f84503ae6150 - => %6f6c64 E:ERR BITOP NOT must be called with a single source key.
bitop - not %ffffffffffffffffff - %2dc698 => %6f6c64 E:ERR BITOP NOT must be called with a single source key.
bitop - nand %e4a564a85d => %6f6c64 E:ERR syntax error
bitop - nand - - %000000000000000000 => %6f6c64 E:ERR syntax error
bitop - Not % => - I:0
bitop - not %0000000000000000 => %ffffffffffffffff I:8
bitop - not - => - I:0
bitop - xor %ff => %ff I:1
bitop - xor %ffffffffff - % => %ffffffffff I:5
bitop - xor - %ffff - => %ffff I:2
bitpos %ffffff 12 -3 19 bit x => %ffffff E:ERR The bit argument must be 1 or 0.
bitpos - 596 0x10 -0 byte => - E:ERR The bit argument must be 1 or 0.
bitpos %00000000000000000000000000000000 0 -17 27 bit x => %00000000000000000000000000000000 E:ERR syntax error
bitpos %40e1 1 30 -1 byte x => %40e1 E:ERR syntax error
bitpos % 0 78 -9223372036854775809 byte => % E:ERR value is not an integer or out of range
bitpos %dfffff %2031 -23 19 bit => %dfffff E:ERR value is not an integer or out of range
bitpos - => - E:ERR wrong number of arguments for 'bitpos' command
bitpos % 0 => % I:-1
bitpos % 1 -29 => % I:-1
bitpos %000000 0 -9 -2 => %000000 I:0
bitpos %00000000000000000000000000000000 0 -11 -12 => %00000000000000000000000000000000 I:-1
bitpos %00000000000000000000000002000000 0 19 => %00000000000000000000000002000000 I:-1
bitpos %0000040000 0 7 0 byte => %0000040000 I:-1
bitpos %0149 0 -13 -26 byte => %0149 I:0
bitpos %14181639f3d6471682b2b4ad79cbd4f921 1 => %14181639f3d6471682b2b4ad79cbd4f921 I:3
bitpos %5589 1 -22 => %5589 I:1
bitpos %64 0 230 -5 bit => %64 I:-1
bitpos %6949628d5597999b0a47379fa5f2a4 0 18 -30 bit => %6949628d5597999b0a47379fa5f2a4 I:19
bitpos %7e9288f899 0 13 30 byte => %7e9288f899 I:-1
bitpos %de 1 -30 -20 => %de I:0
bitpos %fdffffffff7fffffffffffffffffffff 0 7 -9 => %fdffffffff7fffffffffffffffffffff I:-1
bitpos %fff7ff 1 -12 19 => %fff7ff I:0
bitpos %ffffffffff 1 0 28 => %ffffffffff I:0
bitpos %fffffffffffffffffffff7ffffffffff 1 -28 -21 byte => %fffffffffffffffffffff7ffffffffff I:0
bitpos %ffffffffffffffffffffffffffffffffff 1 17 1 byte => %ffffffffffffffffffffffffffffffffff I:-1
bitpos - 0 1 14 Byte => - I:0
bitpos - 0 1 21 byte => - I:0
bitpos - 0 => - I:0
bitpos - 1 -10 22 => - I:-1
bitpos - 1 -14 18 => - I:-1
bitpos - 1 346 1e3 bit => - I:-1
getbit %14 +1 => %14 E:ERR bit offset is not an integer or out of range
getbit - -8 => - E:ERR bit offset is not an integer or out of range
getbit %0000000000 153 => %0000000000 I:0
getbit %125f13 268 => %125f13 I:0
getbit %7bd17af0cf31533e4c9a8aeb5420ed 18 => %7bd17af0cf31533e4c9a8aeb5420ed I:1
getbit %7f0fafb1b8ca3dc8fbed3ab77a4e02 74 => %7f0fafb1b8ca3dc8fbed3ab77a4e02 I:1
getbit %ffff 138 => %ffff I:0
getbit %ffff 195 => %ffff I:0
setbit % 197 12 => % E:ERR bit is not an integer or out of range
setbit %ffffffffffffffffff 51 12 => %ffffffffffffffffff E:ERR bit is not an integer or out of range
setbit %000000 -27 1 => %000000 E:ERR bit offset is not an integer or out of range
setbit %5b -7 -171 => %5b E:ERR bit offset is not an integer or out of range
setbit % 250 0 => %0000000000000000000000000000000000000000000000000000000000000000 I:0
setbit %7c60c090901ff29a162e1e0c3b11a2 9 1 => %7c60c090901ff29a162e1e0c3b11a2 I:1
setbit %ffffffffff 50 1 => %ffffffffff0020 I:0
setbit %ffffffffffffffffff 100 0 => %ffffffffffffffffff00000000 I:0
setbit %ffffffffffffffffff 162 0 => %ffffffffffffffffff000000000000000000000000 I:0
setbit - 125 1 => %00000000000000000000000000000004 I:0
";

    fn decode_value(tok: &str) -> Option<Vec<u8>> {
        let hex = tok.strip_prefix('%')?;
        Some((0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0)).collect())
    }

    fn decode_arg(tok: &str) -> Vec<u8> {
        decode_value(tok).unwrap_or_else(|| tok.as_bytes().to_vec())
    }

    fn int_reply(r: BitResult<i64>) -> String {
        match r {
            Ok(i) => format!("I:{i}"),
            Err(e) => format!("E:{e}"),
        }
    }

    /// Executes one recorded case the way the command layer would: (reply, stored value).
    fn execute(kind: &str, value: Option<Vec<u8>>, args: &[Vec<u8>]) -> (String, Option<Vec<u8>>) {
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let max = 512u64 << 20;
        match kind {
            "bitcount" => (int_reply(bitcount(value.as_deref(), &refs)), value),
            "bitpos" => (int_reply(bitpos(value.as_deref(), &refs)), value),
            "getbit" => match parse_bit_offset(&args[0], false, 0, max) {
                Ok(off) => (format!("I:{}", get_bit(value.as_deref().unwrap_or(&[]), off)), value),
                Err(e) => (format!("E:{e}"), value),
            },
            "setbit" => {
                let parsed =
                    parse_bit_offset(&args[0], false, 0, max).and_then(|o| Ok((o, parse_bit_value(&args[1])?)));
                match parsed {
                    Ok((off, on)) => {
                        let mut v = value.unwrap_or_default();
                        let old = set_bit(&mut v, off, on);
                        (format!("I:{old}"), Some(v))
                    }
                    Err(e) => (format!("E:{e}"), value),
                }
            }
            "bitop" => {
                let op = parse_bitop(&args[0]).and_then(|op| check_bitop_sources(op, args.len() - 1).map(|_| op));
                match op {
                    Ok(op) => {
                        let result = bitop(op, &refs[1..]);
                        (format!("I:{}", result.len()), Some(result).filter(|r| !r.is_empty()))
                    }
                    Err(e) => (format!("E:{e}"), Some(b"old".to_vec())),
                }
            }
            "bitfield" | "bitfield_ro" => match parse_bitfield(&refs, kind == "bitfield_ro", max) {
                Ok(ops) => {
                    let write = bitfield_needs_write(&ops);
                    let mut v = value.clone().unwrap_or_default();
                    let replies = run_bitfield(&mut v, &ops).0;
                    let items: Vec<String> =
                        replies.iter().map(|r| r.map_or_else(|| "n".to_string(), |i| i.to_string())).collect();
                    (format!("A:{}", items.join(",")), if write { Some(v) } else { value })
                }
                Err(e) => (format!("E:{e}"), value),
            },
            other => panic!("unknown command {other}"),
        }
    }

    #[test]
    fn recorded_redis_cases() {
        let mut checked = 0;
        for line in REDIS_CASES.lines().filter(|l| !l.is_empty()) {
            let (lhs, rhs) = line.split_once(" => ").expect("case separator");
            let (stored, reply) = rhs.split_once(' ').expect("stored value and reply");
            let mut toks = lhs.split(' ');
            let kind = toks.next().expect("command");
            let (value, args): (Option<Vec<u8>>, Vec<Vec<u8>>) = if kind == "bitop" {
                toks.next();
                let op = decode_arg(toks.next().expect("op"));
                let sources = toks.map(|t| decode_value(t).unwrap_or_default());
                (None, std::iter::once(op).chain(sources).collect())
            } else {
                let value = decode_value(toks.next().expect("value"));
                (value, toks.map(decode_arg).collect())
            };
            let (got_reply, got_stored) = execute(kind, value, &args);
            assert_eq!((got_reply.as_str(), got_stored), (reply, decode_value(stored)), "{line}");
            checked += 1;
        }
        assert!(checked > 100);
    }

    // -----------------------------------------------------------------------------------------
    // Randomized comparison with naive per-bit implementations
    // -----------------------------------------------------------------------------------------

    fn naive_bit(s: &[u8], i: i64) -> bool {
        s[(i / 8) as usize] >> (7 - i % 8) & 1 == 1
    }

    /// Inclusive bit range of BITCOUNT/BITPOS arguments, or None when empty.
    fn naive_range(len: i64, start: i64, end: i64, is_bit: bool) -> Option<(i64, i64)> {
        let total = if is_bit { len * 8 } else { len };
        let fix = |x: i64| if x < 0 { (x + total).max(0) } else { x };
        let (start, end) = (fix(start), fix(end).min(total - 1));
        if start > end {
            return None;
        }
        Some(if is_bit { (start, end) } else { (start * 8, end * 8 + 7) })
    }

    #[test]
    fn random_bitcount_bitpos_vs_naive() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let max_len = if rng.below(10) == 0 { 300 } else { 40 };
            let s = rng.bytes(max_len);
            let len = s.len() as i64;
            let span = len * 8 + 20;
            let is_bit = rng.below(2) == 0;
            let (start, end) = if is_bit {
                (rng.range(-span, span), rng.range(-span, span))
            } else {
                (rng.range(-len - 3, len + 3), rng.range(-len - 3, len + 3))
            };
            let unit = if is_bit { "bit" } else { "byte" };
            let (st, en) = (start.to_string(), end.to_string());

            let want = match naive_range(len, start, end, is_bit) {
                _ if start < 0 && end < 0 && start > end => 0,
                Some((a, b)) => (a..=b).filter(|&i| naive_bit(&s, i)).count() as i64,
                None => 0,
            };
            assert_eq!(count(Some(&s), &[&st, &en, unit]), Ok(want), "{s:?} {st} {en} {unit}");
            if !is_bit {
                assert_eq!(count(Some(&s), &[&st, &en]), Ok(want));
            }
            let total: i64 = (0..len * 8).filter(|&i| naive_bit(&s, i)).count() as i64;
            assert_eq!(count(Some(&s), &[]), Ok(total));

            for bit in [false, true] {
                let b = if bit { "1" } else { "0" };
                let find = |r: Option<(i64, i64)>| r.and_then(|(a, e)| (a..=e).find(|&i| naive_bit(&s, i) == bit));
                let want = find(naive_range(len, start, end, is_bit)).unwrap_or(-1);
                assert_eq!(pos(Some(&s), &[b, &st, &en, unit]), Ok(want), "{s:?} {b} {st} {en} {unit}");
                // Without an end, a clear bit may be found in the zero padding past the end.
                let open = naive_range(len, start, len - 1, false);
                let want = match find(open) {
                    Some(p) => p,
                    None if !bit && open.is_some() => len * 8,
                    None => -1,
                };
                assert_eq!(pos(Some(&s), &[b, &st]), Ok(want), "{s:?} {b} {st}");
                let want = match find(naive_range(len, 0, len - 1, false)) {
                    Some(p) => p,
                    None if !bit && len > 0 => len * 8,
                    None => -1,
                };
                assert_eq!(pos(Some(&s), &[b]), Ok(want));
            }
        }
    }

    #[test]
    fn random_bitop_vs_naive() {
        let mut rng = Rng(12345);
        for _ in 0..3000 {
            let n = 1 + rng.below(5) as usize;
            let sources: Vec<Vec<u8>> = (0..n).map(|_| rng.bytes(80)).collect();
            let refs: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
            let max = sources.iter().map(Vec::len).max().unwrap_or(0);
            let byte = |k: usize, i: usize| sources[k].get(i).copied().unwrap_or(0);
            for op in [BitOp::And, BitOp::Or, BitOp::Xor, BitOp::Not] {
                // NOT only looks at (and is only as long as) the first source.
                let len = if op == BitOp::Not { sources[0].len() } else { max };
                let want: Vec<u8> = (0..len)
                    .map(|i| {
                        (1..n).fold(byte(0, i), |acc, k| match op {
                            BitOp::And => acc & byte(k, i),
                            BitOp::Or => acc | byte(k, i),
                            BitOp::Xor => acc ^ byte(k, i),
                            BitOp::Not => acc,
                        })
                    })
                    .map(|b| if op == BitOp::Not { !b } else { b })
                    .collect();
                assert_eq!(bitop(op, &refs), want, "{op:?} {sources:?}");
            }
        }
    }

    /// Per-bit reference for a field read.
    fn naive_read(s: &[u8], offset: u64, bits: u32) -> u64 {
        (0..u64::from(bits)).fold(0, |acc, j| {
            let i = offset + j;
            let bit = s.get((i / 8) as usize).map_or(0, |b| u64::from(b >> (7 - i % 8) & 1));
            acc << 1 | bit
        })
    }

    #[test]
    fn random_bitfield_vs_naive() {
        let mut rng = Rng(777);
        for _ in 0..20_000 {
            let mut s = rng.bytes(24);
            let bits = 1 + rng.below(64) as u32;
            let signed = bits == 64 || rng.below(2) == 0;
            let limit = (s.len() as u64 * 8).saturating_sub(u64::from(bits)) + 16;
            let offset = rng.below(limit);
            // Reads.
            let raw = naive_read(&s, offset, bits);
            assert_eq!(read_field(&s, offset, bits), raw);
            let negative = bits < 64 && raw >> (bits - 1) == 1;
            let signed_value = if negative { (i128::from(raw) - (1i128 << bits)) as i64 } else { raw as i64 };
            assert_eq!(read_signed_field(&s, offset, bits), signed_value);
            // Writes: only the field's bits change.
            let value = rng.next();
            let mut t = s.clone();
            let needed = ((offset + u64::from(bits) - 1) / 8 + 1) as usize;
            if t.len() < needed {
                t.resize(needed, 0);
                s.resize(needed, 0);
            }
            write_field(&mut t, offset, bits, value);
            assert_eq!(naive_read(&t, offset, bits), value & low_mask(bits));
            for i in 0..t.len() as u64 * 8 {
                if i < offset || i >= offset + u64::from(bits) {
                    assert_eq!(naive_read(&t, i, 1), naive_read(&s, i, 1));
                }
            }
            // INCRBY arithmetic against i128 (the stored value is always in range).
            let incr = match rng.below(3) {
                0 => rng.next() as i64,
                1 => rng.range(-300, 300),
                _ => (rng.next() as i64) >> rng.below(64),
            };
            let (min, max) =
                if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
            let old = if signed { i128::from(signed_value) } else { i128::from(raw) };
            let sum = old + i128::from(incr);
            let width = 1i128 << bits;
            let wrapped = (sum - min).rem_euclid(width) + min;
            for ow in [Overflow::Wrap, Overflow::Sat, Overflow::Fail] {
                let want = if (min..=max).contains(&sum) {
                    Some(sum)
                } else {
                    match ow {
                        Overflow::Wrap => Some(wrapped),
                        Overflow::Sat => Some(sum.clamp(min, max)),
                        Overflow::Fail => None,
                    }
                };
                let got = if signed {
                    signed_add(signed_value, incr, bits, ow).map(i128::from)
                } else {
                    unsigned_add(raw, incr, bits, ow).map(i128::from)
                };
                assert_eq!(got, want, "{signed} {bits} {old} {incr} {ow:?}");
            }
        }
    }

    #[test]
    fn random_arguments_never_panic() {
        let mut rng = Rng(4242);
        let words: [&[u8]; 24] = [
            b"get",
            b"SET",
            b"incrby",
            b"overflow",
            b"wrap",
            b"sat",
            b"fail",
            b"u8",
            b"i64",
            b"u63",
            b"i1",
            b"#3",
            b"0",
            b"-1",
            b"7",
            b"9223372036854775807",
            b"-9223372036854775808",
            b"bit",
            b"byte",
            b"",
            b"\0",
            b"#",
            b"x",
            b"100",
        ];
        for _ in 0..20_000 {
            let n = rng.below(9) as usize;
            let args: Vec<&[u8]> = (0..n).map(|_| words[rng.below(words.len() as u64) as usize]).collect();
            let mut s = rng.bytes(20);
            let value = if rng.below(4) == 0 { None } else { Some(s.as_slice()) };
            let _ = bitcount(value, &args);
            let _ = bitpos(value, &args);
            if let Some(first) = args.first() {
                let _ = parse_bitop(first);
                let _ = parse_bit_offset(first, true, 8, 64);
            }
            // A small proto-max-bulk-len keeps the values small.
            if let Ok(ops) = parse_bitfield(&args, rng.below(2) == 0, 16) {
                let _ = run_bitfield(&mut s, &ops);
                assert!(s.len() <= 32);
            }
        }
    }

    #[test]
    fn large_values() {
        let mut s = vec![0u8; 4 << 20];
        assert_eq!(pos(Some(&s), &["1"]), ok("-1"));
        assert_eq!(pos(Some(&s), &["0", "0", "-1", "bit"]), ok("0"));
        set_bit(&mut s, 30_000_001, true);
        assert_eq!(pos(Some(&s), &["1"]), ok("30000001"));
        assert_eq!(pos(Some(&s), &["1", "3", "-1", "bit"]), ok("30000001"));
        assert_eq!(pos(Some(&s), &["1", "30000002", "-1", "bit"]), ok("-1"));
        assert_eq!(count(Some(&s), &[]), ok("1"));
        assert_eq!(count(Some(&s), &["30000001", "30000001", "bit"]), ok("1"));
        assert_eq!(count(Some(&s), &["3750001", "-1"]), ok("0"));
        let ones = vec![0xffu8; 4 << 20];
        assert_eq!(pos(Some(&ones), &["0"]), Ok(32 << 20));
        assert_eq!(pos(Some(&ones), &["0", "1", "-1"]), ok("-1"));
        assert_eq!(count(Some(&ones), &["1", "-2", "bit"]), Ok((32 << 20) - 2));
        let mut v = Vec::new();
        assert_eq!(set_bit(&mut v, 4294967295, true), 0);
        assert_eq!(v.len(), 512 << 20);
        assert_eq!(get_bit(&v, 4294967295), 1);
    }
}
