//! Number parsing and formatting with Redis's exact rules.

/// Parses a signed 64-bit integer the way Redis's `string2ll` does: no sign but `-`, no
/// leading zeros, no spaces, at most 20 bytes, overflow rejected.
pub fn parse_i64_strict(s: &[u8]) -> Option<i64> {
    // LONG_STR_SIZE in Redis is 21, so 21+ byte inputs are rejected outright.
    if s.is_empty() || s.len() >= 21 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !(b'1'..=b'9').contains(&digits[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    if negative {
        if v > i64::MAX as u64 + 1 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// An i64 formatted in decimal in a stack buffer (no allocation on hot paths).
pub struct I64Text {
    buf: [u8; 20],
    start: usize,
}

impl I64Text {
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

/// Appends `prefix`, `n` in decimal and CRLF: a RESP header (`$12\r\n`, `*3\r\n`, `:7\r\n`).
/// PERF: most lengths and counts have one or two digits; those are one small append.
#[inline]
pub fn write_header(out: &mut Vec<u8>, prefix: u8, n: i64) {
    if (0..10).contains(&n) {
        out.extend_from_slice(&[prefix, b'0' + n as u8, b'\r', b'\n']);
    } else if (10..100).contains(&n) {
        out.extend_from_slice(&[prefix, b'0' + (n / 10) as u8, b'0' + (n % 10) as u8, b'\r', b'\n']);
    } else {
        out.push(prefix);
        out.extend_from_slice(format_i64(n).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

/// Formats `n` in decimal without allocating.
pub fn format_i64(n: i64) -> I64Text {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut v = n.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if n < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    I64Text { buf, start: i }
}

/// Formats a double like C's `printf("%.17g")`, which is what Redis 7.0 uses for double
/// replies. Infinity is `inf`/`-inf` as Redis writes it explicitly.
pub fn format_double(d: f64, out: &mut Vec<u8>) {
    if d.is_nan() {
        out.extend_from_slice(b"nan");
        return;
    }
    if d.is_infinite() {
        out.extend_from_slice(if d > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    if d == 0.0 {
        out.extend_from_slice(if d.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    // PERF: a whole number of at most 17 digits prints as that integer (no exponent, no
    // fraction): the common case of numbers scripts pass to redis.call (ids, timestamps,
    // counters), without the two exact float formattings below.
    if d.fract() == 0.0 && d.abs() < 1e17 {
        out.extend_from_slice(crate::format_i64(d as i64).as_bytes());
        return;
    }
    format_double_general(d, out);
}

/// `format_double` for any finite, non-zero `d`.
fn format_double_general(d: f64, out: &mut Vec<u8>) {
    const PRECISION: i32 = 17;
    // `{:.16e}` rounds to 17 significant digits exactly as printf does.
    let sci = format!("{:.16e}", d);
    let (mantissa, exp) = sci.split_once('e').expect("exponent present");
    let exp: i32 = exp.parse().expect("valid exponent");
    if (-4..PRECISION).contains(&exp) {
        let decimals = (PRECISION - 1 - exp).max(0) as usize;
        let fixed = format!("{:.*}", decimals, d);
        out.extend_from_slice(strip_fraction_zeros(&fixed).as_bytes());
    } else {
        out.extend_from_slice(strip_fraction_zeros(mantissa).as_bytes());
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let abs = exp.unsigned_abs();
        if abs < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(abs.to_string().as_bytes());
    }
}

fn strip_fraction_zeros(s: &str) -> &str {
    if !s.contains('.') {
        return s;
    }
    s.trim_end_matches('0').trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_match_the_general_formatting() {
        for n in [-1000, -10, -1, 0, 1, 9, 10, 11, 42, 99, 100, 101, 12345, i64::MAX, i64::MIN] {
            let mut fast = Vec::new();
            write_header(&mut fast, b'$', n);
            assert_eq!(fast, format!("${n}\r\n").into_bytes(), "{n}");
        }
    }

    fn g17(d: f64) -> String {
        let mut v = Vec::new();
        format_double(d, &mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn strict_integers() {
        assert_eq!(parse_i64_strict(b"0"), Some(0));
        assert_eq!(parse_i64_strict(b"-1"), Some(-1));
        assert_eq!(parse_i64_strict(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64_strict(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-",
            b"+1",
            b"01",
            b"-0",
            b" 1",
            b"1 ",
            b"1a",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"100000000000000000000",
        ] {
            assert_eq!(parse_i64_strict(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn whole_numbers_take_the_short_way_to_the_same_text() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut values =
            vec![1.0, -1.0, 9.0, 10.0, 1e15, 1e16, -1e16, 99_999_999_999_999_984.0, 9_007_199_254_740_993.0];
        values.extend([2f64.powi(53), 2f64.powi(53) + 2.0, -(2f64.powi(53) + 4.0), 1_700_000_000_123.0]);
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let digits = (state % 18) as i32;
            values.push(
                ((state >> 8) % 10u64.pow(digits as u32).max(1)) as f64 * if state & 1 == 0 { 1.0 } else { -1.0 },
            );
        }
        for d in values {
            if d == 0.0 {
                continue;
            }
            let (mut fast, mut general) = (Vec::new(), Vec::new());
            format_double(d, &mut fast);
            format_double_general(d, &mut general);
            assert_eq!(String::from_utf8(fast).unwrap(), String::from_utf8(general).unwrap(), "{d}");
        }
    }

    #[test]
    fn doubles_match_printf_g17() {
        assert_eq!(g17(1.5), "1.5");
        assert_eq!(g17(0.1), "0.10000000000000001");
        assert_eq!(g17(3.0), "3");
        assert_eq!(g17(-2.25), "-2.25");
        assert_eq!(g17(1e17), "1e+17");
        assert_eq!(g17(1.5e-5), "1.5e-05");
        assert_eq!(g17(0.0001), "0.0001");
        assert_eq!(g17(12345678901234567.0), "12345678901234568");
        assert_eq!(g17(f64::INFINITY), "inf");
        assert_eq!(g17(f64::NEG_INFINITY), "-inf");
        assert_eq!(g17(1e300), "1.0000000000000001e+300");
    }
}
