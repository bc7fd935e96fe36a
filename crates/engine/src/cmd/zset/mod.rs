//! Sorted set commands (Redis's t_zset.c), split by kind:
//! - `write`: ZADD, ZINCRBY, ZREM, ZREMRANGEBY*, the pops (ZPOPMIN/MAX, ZMPOP) and their
//!   blocking forms (BZPOPMIN/MAX, BZMPOP),
//! - `read`: ZCARD, ZSCORE, ZMSCORE, ZRANK, ZCOUNT, ZLEXCOUNT, ZRANDMEMBER, ZSCAN,
//! - `range`: ZRANGE and its older forms (ZREVRANGE, Z[REV]RANGEBYSCORE/LEX), ZRANGESTORE,
//! - `setops`: ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD,
//! - `spec`: the command table entries.
//!
//! This file holds what they share: key lookup, argument parsing with Redis's exact rules
//! (C `strtod` for scores and ranges) and the member/score reply shapes of RESP2 and RESP3.

mod range;
mod read;
mod setops;
mod spec;
mod write;

pub use spec::register;

use crate::error::CmdError;
use crate::exec::Ctx;
use crate::keyspace::{Db, Value};
use crate::reply::ReplySink;
use crate::types::zset::{LexBound, LexRange, ScoreRange};
use crate::types::ZSetValue;
use quince_resp::Protocol;

/// The value at `key` for reading (Redis's lookupKeyRead: the access recorded, a miss is
/// a `keymiss` event), or WRONGTYPE.
fn read_lookup<'d>(db: &'d mut Db, key: &[u8], now: i64) -> Result<Option<&'d ZSetValue>, CmdError> {
    match db.get_read(key, now).map(|e| &e.value) {
        None => Ok(None),
        Some(Value::ZSet(z)) => Ok(Some(z)),
        Some(_) => Err(CmdError::WrongType),
    }
}

/// Like `read`, counting a keyspace hit or miss as Redis's lookupKeyRead does (a key of
/// another type is a hit).
fn read_hit<'d>(ctx: &'d mut Ctx<'_>, key: &[u8]) -> Result<Option<&'d ZSetValue>, CmdError> {
    let (engine, now) = (ctx.engine, ctx.now_ms);
    let zset = read_lookup(ctx.db(key), key, now);
    crate::exec::count_hit(engine, !matches!(zset, Ok(None)));
    zset
}

/// The sorted set at `key` for modification, or WRONGTYPE.
fn write<'d>(db: &'d mut Db, key: &[u8], now: i64) -> Result<Option<&'d mut ZSetValue>, CmdError> {
    match db.get_mut(key, now).map(|e| &mut e.value) {
        None => Ok(None),
        Some(Value::ZSet(z)) => Ok(Some(z)),
        Some(_) => Err(CmdError::WrongType),
    }
}

/// Deletes `key` if its sorted set became empty (Redis never keeps empty collections).
fn delete_if_empty(db: &mut Db, key: &[u8], now: i64) -> bool {
    matches!(db.peek(key, now).map(|e| &e.value), Some(Value::ZSet(z)) if z.is_empty()) && db.remove(key, now)
}

/// C's `strtod` on a C string: skips leading white space, reads the longest prefix that is
/// a number (decimal, hex float, `inf`/`infinity`, `nan`), and returns its value, how many
/// bytes it used (0 when none) and whether it over- or underflowed (`ERANGE`).
fn strtod(s: &[u8]) -> (f64, usize, bool) {
    let mut i = s.iter().take_while(|&&b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')).count();
    let negative = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let sign = |v: f64| if negative { -v } else { v };
    let rest = &s[i..];
    let starts = |word: &[u8]| rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word);
    if starts(b"infinity") {
        return (sign(f64::INFINITY), i + 8, false);
    }
    if starts(b"inf") {
        return (sign(f64::INFINITY), i + 3, false);
    }
    if starts(b"nan") {
        let mut end = i + 3;
        // nan(n-char-sequence)
        if s.get(end) == Some(&b'(') {
            let inner = s[end + 1..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
            if s.get(end + 1 + inner) == Some(&b')') {
                end += inner + 2;
            }
        }
        return (f64::NAN, end, false);
    }
    if rest.len() >= 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
        if let Some((v, used, erange)) = hex_float(&rest[2..]) {
            return (sign(v), i + 2 + used, erange);
        }
    }
    let digits = |from: usize| s[from.min(s.len())..].iter().take_while(|b| b.is_ascii_digit()).count();
    let int_digits = digits(i);
    let mut end = i + int_digits;
    let mut frac_digits = 0;
    if s.get(end) == Some(&b'.') {
        frac_digits = digits(end + 1);
        if int_digits + frac_digits > 0 {
            end += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return (0.0, 0, false);
    }
    if matches!(s.get(end), Some(b'e' | b'E')) {
        let mut j = end + 1;
        if matches!(s.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp_digits = digits(j);
        if exp_digits > 0 {
            end = j + exp_digits;
        }
    }
    let text = std::str::from_utf8(&s[i..end]).expect("ASCII");
    let v: f64 = text.parse().unwrap_or(0.0);
    let mantissa_nonzero = s[i..end].iter().take_while(|b| !matches!(b, b'e' | b'E')).any(|b| matches!(b, b'1'..=b'9'));
    let erange = v.is_infinite() || (v == 0.0 && mantissa_nonzero);
    (sign(v), end, erange)
}

/// The part of a hex float after `0x`: hex digits with an optional point and an optional
/// binary exponent `p[+-]digits`. None when no hex digit follows (strtod then reads `0`).
fn hex_float(s: &[u8]) -> Option<(f64, usize, bool)> {
    let mut mant: u128 = 0;
    let mut exp: i64 = 0;
    let mut sticky = false;
    let mut seen = false;
    let mut point = false;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == b'.' && !point {
            point = true;
            i += 1;
            continue;
        }
        let Some(d) = (c as char).to_digit(16) else { break };
        seen = true;
        if mant >> 120 == 0 {
            mant = mant << 4 | u128::from(d);
            if point {
                exp -= 4;
            }
        } else {
            sticky |= d != 0;
            if !point {
                exp += 4;
            }
        }
        i += 1;
    }
    if !seen {
        return None;
    }
    if i < s.len() && (s[i] | 0x20) == b'p' {
        let mut j = i + 1;
        let neg = match s.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let n = s[j.min(s.len())..].iter().take_while(|b| b.is_ascii_digit()).count();
        if n > 0 {
            let e = s[j..j + n].iter().fold(0i64, |acc, &b| (acc * 10 + i64::from(b - b'0')).min(1 << 40));
            exp += if neg { -e } else { e };
            i = j + n;
        }
    }
    let mut v = (mant | u128::from(sticky)) as f64;
    while exp > 0 {
        let step = exp.min(1000);
        v *= 2f64.powi(step as i32);
        exp -= step;
    }
    while exp < 0 {
        let step = (-exp).min(1000);
        v *= 2f64.powi(-(step as i32));
        exp += step;
    }
    let erange = v.is_infinite() || (v == 0.0 && mant != 0);
    Some((v, i, erange))
}

/// A score or weight argument as Redis's getDoubleFromObject reads it: all of it a number,
/// no leading space, no NaN, no overflow or underflow to zero.
fn parse_double(arg: &[u8]) -> Option<f64> {
    if arg.is_empty() || arg[0].is_ascii_whitespace() || arg[0] == 0x0b {
        return None;
    }
    let (v, used, erange) = strtod(arg);
    let overflow = erange && (v.is_infinite() || v == 0.0);
    (used == arg.len() && !overflow && !v.is_nan()).then_some(v)
}

/// A score for ZADD/ZINCRBY.
fn parse_score(arg: &[u8]) -> Result<f64, CmdError> {
    parse_double(arg).ok_or_else(|| CmdError::msg("ERR value is not a valid float"))
}

/// The bytes of an argument as C sees them: up to the first NUL.
fn c_str(arg: &[u8]) -> &[u8] {
    &arg[..arg.iter().position(|&b| b == 0).unwrap_or(arg.len())]
}

/// One end of a score range: `(` makes it exclusive; the rest is read by `strtod`, which must
/// reach the end of the (C) string; NaN is refused.
fn parse_score_bound(arg: &[u8]) -> Option<(f64, bool)> {
    let s = c_str(arg);
    let (s, exclusive) = match s.first() {
        Some(b'(') => (&s[1..], true),
        _ => (s, false),
    };
    let (v, used, _) = strtod(s);
    (used == s.len() && !v.is_nan()).then_some((v, exclusive))
}

/// `min max` of ZRANGEBYSCORE and friends (Redis's zslParseRange).
fn parse_score_range(min: &[u8], max: &[u8]) -> Result<ScoreRange, CmdError> {
    let err = || CmdError::msg("ERR min or max is not a float");
    let (min, min_exclusive) = parse_score_bound(min).ok_or_else(err)?;
    let (max, max_exclusive) = parse_score_bound(max).ok_or_else(err)?;
    Ok(ScoreRange { min, max, min_exclusive, max_exclusive })
}

fn parse_lex_bound(arg: &[u8]) -> Option<LexBound> {
    match arg.first() {
        Some(b'+') if c_str(arg).len() == 1 => Some(LexBound::PosInf),
        Some(b'-') if c_str(arg).len() == 1 => Some(LexBound::NegInf),
        Some(b'(') => Some(LexBound::Exclusive(arg[1..].to_vec())),
        Some(b'[') => Some(LexBound::Inclusive(arg[1..].to_vec())),
        _ => None,
    }
}

/// `min max` of ZRANGEBYLEX and friends (Redis's zslParseLexRange).
fn parse_lex_range(min: &[u8], max: &[u8]) -> Result<LexRange, CmdError> {
    let err = || CmdError::msg("ERR min or max not valid string range item");
    Ok(LexRange { min: parse_lex_bound(min).ok_or_else(err)?, max: parse_lex_bound(max).ok_or_else(err)? })
}

/// A C `long` argument (getLongFromObjectOrReply), with Redis's generic error.
fn parse_long(arg: &[u8]) -> Result<i64, CmdError> {
    super::parse_i64(arg)
}

/// A `long` within [min, max], replying `msg` (or Redis's default text) otherwise
/// (getRangeLongFromObjectOrReply).
fn parse_long_in(arg: &[u8], min: i64, max: i64, msg: Option<&str>) -> Result<i64, CmdError> {
    let err = |default: CmdError| match msg {
        Some(m) => CmdError::msg(format!("ERR {m}")),
        None => default,
    };
    let n = quince_resp::parse_i64_strict(arg).ok_or_else(|| err(CmdError::NotInteger))?;
    if n < min || n > max {
        return Err(err(CmdError::msg(format!("ERR value is out of range, value must between {min} and {max}"))));
    }
    Ok(n)
}

/// Writes members, with their scores when `withscores`: a flat array in RESP2, an array of
/// [member, score] pairs in RESP3 (Redis keeps it an array so the order survives).
fn reply_members<'a>(out: &mut dyn ReplySink, items: impl ExactSizeIterator<Item = (&'a [u8], f64)>, withscores: bool) {
    let resp3 = out.protocol() == Protocol::Resp3;
    let len = items.len();
    out.array(if withscores && !resp3 { len * 2 } else { len });
    for (member, score) in items {
        reply_member(out, member, score, withscores, resp3);
    }
}

fn reply_member(out: &mut dyn ReplySink, member: &[u8], score: f64, withscores: bool, resp3: bool) {
    if withscores && resp3 {
        out.array(2);
    }
    out.bulk(member);
    if withscores {
        out.double(score);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtod_like_c() {
        assert_eq!(strtod(b"1.5"), (1.5, 3, false));
        assert_eq!(strtod(b"  -2e3x"), (-2000.0, 6, false));
        assert_eq!(strtod(b"1e"), (1.0, 1, false));
        assert_eq!(strtod(b"."), (0.0, 0, false));
        assert_eq!(strtod(b""), (0.0, 0, false));
        assert_eq!(strtod(b".5"), (0.5, 2, false));
        assert_eq!(strtod(b"5."), (5.0, 2, false));
        assert_eq!(strtod(b"-inf"), (f64::NEG_INFINITY, 4, false));
        assert_eq!(strtod(b"+Infinity"), (f64::INFINITY, 9, false));
        assert_eq!(strtod(b"0x1p3"), (8.0, 5, false));
        assert_eq!(strtod(b"0x.8"), (0.5, 4, false));
        assert_eq!(strtod(b"0xg"), (0.0, 1, false));
        assert_eq!(strtod(b"1e400"), (f64::INFINITY, 5, true));
        assert_eq!(strtod(b"1e-400"), (0.0, 6, true));
        assert!(strtod(b"nan").0.is_nan());
    }

    #[test]
    fn doubles_and_ranges() {
        assert_eq!(parse_double(b"10"), Some(10.0));
        assert_eq!(parse_double(b""), None);
        assert_eq!(parse_double(b" 1"), None);
        assert_eq!(parse_double(b"1 "), None);
        assert_eq!(parse_double(b"nan"), None);
        assert_eq!(parse_double(b"1e400"), None);
        assert_eq!(parse_double(b"inf"), Some(f64::INFINITY));
        assert_eq!(parse_double(b"1\x002"), None);
        let r = parse_score_range(b"(1", b" 2").unwrap();
        assert_eq!(r, ScoreRange { min: 1.0, max: 2.0, min_exclusive: true, max_exclusive: false });
        assert!(parse_score_range(b"", b"(").unwrap().max_exclusive);
        assert!(parse_score_range(b"1x", b"2").is_err());
        assert!(parse_score_range(b"nan", b"2").is_err());
        assert_eq!(parse_score_range(b"1\x00x", b"1e999").unwrap().max, f64::INFINITY);
        assert!(parse_lex_range(b"a", b"+").is_err());
        assert!(parse_lex_range(b"-x", b"+").is_err());
        assert_eq!(parse_lex_range(b"(", b"[b").unwrap().min, LexBound::Exclusive(Vec::new()));
    }

    mod libc_fns {
        extern "C" {
            pub fn strtod(nptr: *const std::ffi::c_char, endptr: *mut *mut std::ffi::c_char) -> f64;
            pub fn __errno_location() -> *mut i32;
        }
    }
    use libc_fns::__errno_location;

    /// glibc's strtod on `s` (NUL-terminated copy): value, bytes used, ERANGE.
    fn c_strtod(s: &[u8]) -> (f64, usize, bool) {
        let c = std::ffi::CString::new(s).expect("no NUL");
        let mut end: *mut std::ffi::c_char = std::ptr::null_mut();
        // SAFETY: `c` is a valid C string for the duration of the call; errno is this
        // thread's.
        unsafe {
            *__errno_location() = 0;
            let v = libc_fns::strtod(c.as_ptr(), &mut end);
            let used = end.offset_from(c.as_ptr()) as usize;
            (v, used, *__errno_location() == 34)
        }
    }

    #[test]
    fn strtod_agrees_with_glibc() {
        let alphabet: &[&[u8]] = &[
            b"0",
            b"1",
            b"5",
            b"9",
            b".",
            b"e",
            b"E",
            b"-",
            b"+",
            b"x",
            b"X",
            b"p",
            b"a",
            b"f",
            b"inf",
            b"nan",
            b"infinity",
            b" ",
            b"(",
            b"00",
            b"e308",
            b"e-320",
            b"0x1",
            b"1e400",
            b"7",
        ];
        let mut seed = 0x1234_5678_9abc_def0u64;
        for _ in 0..200_000 {
            let mut s = Vec::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut r = seed;
            for _ in 0..(r % 7 + 1) {
                r /= 7;
                s.extend_from_slice(alphabet[(r % alphabet.len() as u64) as usize]);
                r /= alphabet.len() as u64;
            }
            let (v, used, erange) = strtod(&s);
            let (cv, cused, cerange) = c_strtod(&s);
            let same_value = (v.is_nan() && cv.is_nan()) || v.to_bits() == cv.to_bits();
            assert!(
                same_value && used == cused,
                "{:?}: ours {v} {used}, glibc {cv} {cused}",
                String::from_utf8_lossy(&s)
            );
            // glibc also flags denormal results; only overflow and underflow to zero matter.
            if v.is_infinite() || v == 0.0 {
                assert_eq!(erange, cerange, "{:?}", String::from_utf8_lossy(&s));
            }
        }
    }
}
