//! Software emulation of the x87 80-bit `long double` that Redis uses for INCRBYFLOAT and HINCRBYFLOAT.
//!
//! Redis 7.0 parses both operands with `strtold` (`string2ld`), adds them in `long double` (on x86-64 the
//! x87 extended format: 64-bit explicit mantissa, 15-bit exponent, round to nearest even) and replies with
//! `%.17Lf` minus trailing zeros (`ld2string` in `LD_STR_HUMAN` mode). `f64` gives different replies
//! (10.5 + 0.1 is "10.6" in Redis but "10.59999999999999964" with `f64`), so this module reproduces that
//! arithmetic exactly. Every conversion goes through exact big-integer arithmetic and every rounding is to
//! nearest, ties to even, with gradual underflow to denormals and overflow to infinity, as the x87 does.

use std::cmp::Ordering;
use std::fmt::Write as _;

/// Redis's buffer size for long double strings (`MAX_LONG_DOUBLE_CHARS`).
const MAX_LONG_DOUBLE_CHARS: usize = 5 * 1024;
/// Bits in the x87 extended mantissa (the integer bit is explicit).
const PREC: u32 = 64;
/// Exponent of the last mantissa bit for denormals and the smallest normals: 2^(1 - 16383 - 63).
const MIN_Q: i64 = -16445;
/// Exponent of the last mantissa bit for the largest binade: 2^(16383 - 63).
const MAX_Q: i64 = 16320;
/// Exponent of the leading bit of the smallest normal value.
const MIN_NORMAL_EXP: i64 = -16382;
/// The same limits for `f64`.
const F64_PREC: u32 = 53;
const F64_MIN_Q: i64 = -1074;
const F64_MAX_Q: i64 = 971;
/// Decimal exponents outside these bounds cannot be finite, non-zero long doubles: every value with
/// `ndigits + exp10 <= UNDERFLOW_DEC` is below half the smallest denormal (about 1.82e-4951) and every
/// value with `ndigits - 1 + exp10 >= OVERFLOW_DEC` is above the largest finite value (about 1.19e4932).
const UNDERFLOW_DEC: i64 = -4951;
const OVERFLOW_DEC: i64 = 4933;
/// Parsed exponents are clamped to this magnitude; anything beyond already over- or underflows.
const EXP_CLAMP: i64 = 1_000_000_000_000;

/// Which kind of value a [`LongDouble`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Finite,
    Infinite,
    Nan,
}

/// An x87 80-bit extended precision value.
///
/// Finite values are `(-1)^neg * mant * 2^exp`: normal values have bit 63 of `mant` set and `exp` in
/// `MIN_Q..=MAX_Q`; denormals and zeros have `exp == MIN_Q`. Infinities and NaNs keep only their sign
/// (their `mant` is the x87 encoding's, `exp` is zero). Equality is structural: `0 != -0`, `NaN == NaN`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LongDouble {
    neg: bool,
    kind: Kind,
    mant: u64,
    exp: i32,
}

impl LongDouble {
    /// Positive zero.
    pub const ZERO: LongDouble = LongDouble::zero(false);

    const fn zero(neg: bool) -> LongDouble {
        LongDouble { neg, kind: Kind::Finite, mant: 0, exp: MIN_Q as i32 }
    }

    const fn infinity(neg: bool) -> LongDouble {
        LongDouble { neg, kind: Kind::Infinite, mant: 1 << 63, exp: 0 }
    }

    /// The x87 default NaN ("real indefinite") is negative with mantissa 0xC000_0000_0000_0000.
    const fn nan(neg: bool) -> LongDouble {
        LongDouble { neg, kind: Kind::Nan, mant: 0xC000_0000_0000_0000, exp: 0 }
    }

    fn from_rounded(neg: bool, rounded: Rounded) -> LongDouble {
        match rounded {
            Rounded::Overflow => LongDouble::infinity(neg),
            Rounded::Finite(mant, exp) => LongDouble { neg, kind: Kind::Finite, mant, exp: exp as i32 },
        }
    }

    /// Redis's `string2ld`: accepts exactly what glibc's `strtold` consumes in full (optional sign, then a
    /// decimal number with optional fraction and exponent, a hex float such as `0x1.8p3`, or
    /// `inf`/`infinity` in any case) and rejects empty input, input of `MAX_LONG_DOUBLE_CHARS` (5 KiB) bytes
    /// or more, leading whitespace, unconsumed trailing bytes, NaN, and values that overflow to infinity or
    /// underflow to zero (`strtold` sets ERANGE for those). The result is correctly rounded (nearest, ties
    /// to even) into the 64-bit mantissa, with denormals below 2^-16382, except for one glibc quirk kept on
    /// purpose: a hex float whose result is denormal is rounded as if its 65th significant bit were zero.
    /// `None` where `string2ld` returns 0.
    pub fn parse(s: &[u8]) -> Option<LongDouble> {
        if s.is_empty() || s.len() >= MAX_LONG_DOUBLE_CHARS || is_c_space(s[0]) {
            return None;
        }
        let (neg, body) = match s[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
            return Some(LongDouble::infinity(neg));
        }
        if body.len() >= 2 && body[0] == b'0' && (body[1] | 0x20) == b'x' {
            parse_hex(neg, &body[2..])
        } else {
            parse_decimal(neg, body)
        }
    }

    /// The exact long double of an integer (every `i64` fits in the 64-bit mantissa).
    pub fn from_i64(n: i64) -> LongDouble {
        let mag = n.unsigned_abs();
        if mag == 0 {
            return LongDouble::ZERO;
        }
        let shift = mag.leading_zeros();
        LongDouble { neg: n < 0, kind: Kind::Finite, mant: mag << shift, exp: -(shift as i32) }
    }

    /// The exact long double of a double (every `f64` is representable).
    pub fn from_f64(x: f64) -> LongDouble {
        let bits = x.to_bits();
        let neg = bits >> 63 == 1;
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1 << 52) - 1);
        match biased {
            0x7ff if frac == 0 => LongDouble::infinity(neg),
            0x7ff => LongDouble::nan(neg),
            0 if frac == 0 => LongDouble::zero(neg),
            0 => {
                let shift = frac.leading_zeros() as i32;
                LongDouble { neg, kind: Kind::Finite, mant: frac << shift, exp: -1074 - shift }
            }
            _ => LongDouble { neg, kind: Kind::Finite, mant: (frac | 1 << 52) << 11, exp: biased - 1075 - 11 },
        }
    }

    /// The exact sum rounded to nearest, ties to even, into 64 bits of mantissa (the x87 default), with
    /// overflow to infinity. `inf + -inf` is the x87 default NaN; an exact zero sum of non-zero operands is
    /// `+0`, and `-0 + -0` is `-0`.
    #[allow(clippy::should_implement_trait)]
    pub fn sum(self, other: LongDouble) -> LongDouble {
        match (self.kind, other.kind) {
            (Kind::Nan, _) => return self,
            (_, Kind::Nan) => return other,
            (Kind::Infinite, Kind::Infinite) if self.neg != other.neg => return LongDouble::nan(true),
            (Kind::Infinite, _) => return self,
            (_, Kind::Infinite) => return other,
            _ => {}
        }
        if other.mant == 0 {
            return if self.mant == 0 { LongDouble::zero(self.neg && other.neg) } else { self };
        }
        if self.mant == 0 {
            return other;
        }
        let (a, b) = if self.exp >= other.exp { (self, other) } else { (other, self) };
        let diff = i64::from(a.exp) - i64::from(b.exp);
        // Align a's mantissa as far left as u128 allows; whatever of b falls below 2^q only matters as a
        // sticky bit, because a then has at least 126 significant bits and the result keeps 64.
        let lead = diff.min(63);
        let big_a = u128::from(a.mant) << lead;
        let q = i64::from(a.exp) - lead;
        let tail = diff - lead;
        let (small_b, sticky) = if tail == 0 {
            (u128::from(b.mant), false)
        } else if tail >= 64 {
            (0, true)
        } else {
            (u128::from(b.mant >> tail), b.mant & ((1u64 << tail) - 1) != 0)
        };
        let (neg, n) = if a.neg == b.neg {
            (a.neg, big_a + small_b)
        } else if sticky {
            // a - (small_b + f) with 0 < f < 1 is (a - small_b - 1) + (1 - f).
            (a.neg, big_a - small_b - 1)
        } else {
            match big_a.cmp(&small_b) {
                Ordering::Equal => return LongDouble::ZERO,
                Ordering::Greater => (a.neg, big_a - small_b),
                Ordering::Less => (b.neg, small_b - big_a),
            }
        };
        LongDouble::from_rounded(neg, round_bits(n, q, sticky, PREC, MIN_Q, MAX_Q))
    }

    /// Whether this is a NaN (only `inf + -inf` makes one; `parse` never returns one).
    pub fn is_nan(self) -> bool {
        self.kind == Kind::Nan
    }

    /// Whether this is positive or negative infinity.
    pub fn is_infinite(self) -> bool {
        self.kind == Kind::Infinite
    }

    /// Whether the sign bit is set (also for `-0`).
    pub fn is_sign_negative(self) -> bool {
        self.neg
    }

    /// The nearest `f64` (ties to even, gradual underflow, overflow to infinity), as a C cast does.
    pub fn to_f64(self) -> f64 {
        let sign = if self.neg { 1u64 << 63 } else { 0 };
        let magnitude = match self.kind {
            Kind::Nan => 0x7ff8_0000_0000_0000,
            Kind::Infinite => 0x7ff0_0000_0000_0000,
            Kind::Finite => {
                match round_bits(u128::from(self.mant), self.exp.into(), false, F64_PREC, F64_MIN_Q, F64_MAX_Q) {
                    Rounded::Overflow => 0x7ff0_0000_0000_0000,
                    Rounded::Finite(m, _) if m < 1 << 52 => m,
                    Rounded::Finite(m, e) => ((e + 1075) as u64) << 52 | (m & ((1 << 52) - 1)),
                }
            }
        };
        f64::from_bits(sign | magnitude)
    }

    /// Redis's `ld2string` in `LD_STR_HUMAN` mode (the INCRBYFLOAT reply): glibc's `%.17Lf` (the exact
    /// decimal expansion of the binary value rounded at the 17th fractional digit, ties to even), then
    /// trailing zeros and a trailing '.' removed and "-0" turned into "0". Infinities print as "inf" and
    /// "-inf", NaNs as "nan" and "-nan". `None` where the text would not fit Redis's 5 KiB buffer, which no
    /// value reaches (the largest needs under 5,000 bytes).
    pub fn to_human_string(self) -> Option<String> {
        let mut s = match self.kind {
            Kind::Finite => self.sign_prefix() + &fixed_decimal(self.mant, self.exp.into(), 17),
            _ => return Some(self.special_string()),
        };
        if s.len() + 1 > MAX_LONG_DOUBLE_CHARS {
            return None;
        }
        let kept = s.trim_end_matches('0').len();
        s.truncate(kept);
        if s.ends_with('.') {
            s.pop();
        }
        if s == "-0" {
            s.remove(0);
        }
        Some(s)
    }

    /// Redis's `ld2string` in `LD_STR_AUTO` mode: glibc's `%.17Lg` (17 significant digits, ties to even,
    /// exponent form below 1e-4 or from 1e17 on, trailing zeros removed). Infinities print as "inf" and
    /// "-inf", NaNs as "nan" and "-nan". `None` where the text would not fit Redis's 5 KiB buffer (never).
    pub fn to_auto_string(self) -> Option<String> {
        let s = match self.kind {
            Kind::Finite if self.mant == 0 => self.sign_prefix() + "0",
            Kind::Finite => self.sign_prefix() + &general_decimal(self.mant, self.exp.into()),
            _ => self.special_string(),
        };
        (s.len() < MAX_LONG_DOUBLE_CHARS).then_some(s)
    }

    fn sign_prefix(self) -> String {
        if self.neg {
            "-".to_string()
        } else {
            String::new()
        }
    }

    fn special_string(self) -> String {
        let body = if self.kind == Kind::Nan { "nan" } else { "inf" };
        self.sign_prefix() + body
    }
}

/// C's `isspace` in the "C" locale.
fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Parses an optionally signed run of decimal digits that must end the input (an exponent), clamped
/// to `EXP_CLAMP`.
fn parse_exponent(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = digits.iter().fold(0i64, |acc, &d| (acc * 10 + i64::from(d - b'0')).min(EXP_CLAMP));
    Some(if neg { -value } else { value })
}

/// Finishes a parse: rejects what `strtold` reports as ERANGE (overflow to infinity, underflow to zero).
fn accept(neg: bool, rounded: Rounded) -> Option<LongDouble> {
    match rounded {
        Rounded::Finite(0, _) | Rounded::Overflow => None,
        finite => Some(LongDouble::from_rounded(neg, finite)),
    }
}

/// Decimal digits with optional '.', then an optional `e`/`E` exponent; everything must be consumed.
fn parse_decimal(neg: bool, s: &[u8]) -> Option<LongDouble> {
    let mut digits: Vec<u8> = Vec::new();
    let mut frac_digits: i64 = 0;
    let mut seen_digit = false;
    let mut i = 0;
    let mut in_fraction = false;
    while i < s.len() {
        match s[i] {
            d @ b'0'..=b'9' => {
                seen_digit = true;
                if d != b'0' || !digits.is_empty() {
                    digits.push(d - b'0');
                }
                if in_fraction {
                    frac_digits += 1;
                }
            }
            b'.' if !in_fraction => in_fraction = true,
            _ => break,
        }
        i += 1;
    }
    if !seen_digit {
        return None;
    }
    let mut exp10 = 0;
    if i < s.len() {
        if s[i] | 0x20 != b'e' {
            return None;
        }
        exp10 = parse_exponent(&s[i + 1..])?;
    }
    let trailing_zeros = digits.iter().rev().take_while(|&&d| d == 0).count();
    digits.truncate(digits.len() - trailing_zeros);
    if digits.is_empty() {
        return Some(LongDouble::zero(neg));
    }
    // The value is digits * 10^exp10.
    let exp10 = exp10 - frac_digits + trailing_zeros as i64;
    let ndigits = digits.len() as i64;
    if ndigits + exp10 <= UNDERFLOW_DEC || ndigits - 1 + exp10 >= OVERFLOW_DEC {
        return None;
    }
    let mut num = Big::default();
    for chunk in digits.chunks(9) {
        let value = chunk.iter().fold(0u32, |acc, &d| acc * 10 + u32::from(d));
        num.mul_add_small(10u32.pow(chunk.len() as u32), value);
    }
    if exp10 >= 0 {
        // digits * 5^e * 2^e is an integer: round its leading bits.
        num.mul_pow5(exp10 as u64);
        let (top, shift, sticky) = num.top_bits();
        return accept(neg, round_bits(top, exp10 + shift, sticky, PREC, MIN_Q, MAX_Q));
    }
    // digits / (5^m * 2^m): divide by 5^m with a quotient of 66 or 67 bits, remainder as the sticky bit.
    let m = -exp10;
    let mut den = Big::from_u128(1);
    den.mul_pow5(m as u64);
    let mut q = -m;
    let scale = 66 - (num.bit_len() as i64 - den.bit_len() as i64);
    if scale > 0 {
        num.shl(scale as u64);
        q -= scale;
    } else if scale < 0 {
        den.shl((-scale) as u64);
        q -= scale;
    }
    let quotient = div_small_quotient(&mut num, &den);
    accept(neg, round_bits(quotient, q, !num.is_zero(), PREC, MIN_Q, MAX_Q))
}

/// The part after "0x": hex digits with optional '.', then an optional `p`/`P` binary exponent.
fn parse_hex(neg: bool, s: &[u8]) -> Option<LongDouble> {
    let mut num = Big::default();
    let mut frac_digits: i64 = 0;
    let mut seen_digit = false;
    let mut in_fraction = false;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'.' if !in_fraction => in_fraction = true,
            c if c.is_ascii_hexdigit() => {
                seen_digit = true;
                let value = (c as char).to_digit(16).unwrap_or(0);
                if value != 0 || !num.is_zero() {
                    num.shl(4);
                    num.mul_add_small(1, value);
                }
                if in_fraction {
                    frac_digits += 1;
                }
            }
            _ => break,
        }
        i += 1;
    }
    if !seen_digit {
        return None;
    }
    let mut exp2 = 0;
    if i < s.len() {
        if s[i] | 0x20 != b'p' {
            return None;
        }
        exp2 = parse_exponent(&s[i + 1..])?;
    }
    if num.is_zero() {
        return Some(LongDouble::zero(neg));
    }
    let q = exp2 - 4 * frac_digits;
    let bits = num.bit_len();
    if bits > u64::from(PREC) && q + bits as i64 - 1 < MIN_NORMAL_EXP {
        // glibc's strtold (2.36) forgets the bit right after the first 64 significant bits of a hex
        // float when the result is denormal, rounding as if it were zero; do the same.
        num.clear_bit(bits - u64::from(PREC) - 1);
    }
    let (top, shift, sticky) = num.top_bits();
    accept(neg, round_bits(top, q + shift, sticky, PREC, MIN_Q, MAX_Q))
}

/// `%.<frac>Lf` of `mant * 2^exp` without the sign: the exact value times 10^frac, rounded to an integer
/// (ties to even), printed with a '.' before its last `frac` digits.
fn fixed_decimal(mant: u64, exp: i64, frac: u32) -> String {
    let mut n = Big::from_u128(u128::from(mant));
    n.mul_pow5(u64::from(frac));
    let exp2 = exp + i64::from(frac);
    if exp2 >= 0 {
        n.shl(exp2 as u64);
    } else {
        let drop = (-exp2) as u64;
        let half = n.bit(drop - 1);
        let rest = n.any_below(drop - 1);
        n.shr(drop);
        if half && (rest || n.bit(0)) {
            n.mul_add_small(1, 1);
        }
    }
    let mut digits = n.to_decimal();
    let width = frac as usize + 1;
    if digits.len() < width {
        digits.insert_str(0, &"0".repeat(width - digits.len()));
    }
    if frac > 0 {
        digits.insert(digits.len() - frac as usize, '.');
    }
    digits
}

/// `%.17Lg` of the non-zero `mant * 2^exp` without the sign.
fn general_decimal(mant: u64, exp: i64) -> String {
    const P: i64 = 17;
    const LOW: u128 = 10_000_000_000_000_000; // 10^(P-1)
    const HIGH: u128 = 100_000_000_000_000_000; // 10^P
    let top_bit = i64::from(63 - mant.leading_zeros() as i32) + exp;
    // Decimal exponent estimate, corrected below; the value lies in [2^top_bit, 2^(top_bit+1)).
    let mut x10 = (top_bit as f64 * std::f64::consts::LOG10_2).floor() as i64;
    let mut digits;
    let mut tries = 0;
    loop {
        tries += 1;
        // digits = value * 10^(P-1-x10) = mant * 5^p * 2^(exp+p), as num / den.
        let p = P - 1 - x10;
        let mut num = Big::from_u128(u128::from(mant));
        let mut den = Big::from_u128(1);
        if p >= 0 {
            num.mul_pow5(p as u64);
        } else {
            den.mul_pow5((-p) as u64);
        }
        let exp2 = exp + p;
        if exp2 >= 0 {
            num.shl(exp2 as u64);
        } else {
            den.shl((-exp2) as u64);
        }
        digits = div_small_quotient(&mut num, &den);
        if tries < 4 && digits < LOW {
            x10 -= 1;
            continue;
        }
        if tries < 4 && digits >= HIGH {
            x10 += 1;
            continue;
        }
        num.shl(1);
        let round_up = match num.cmp(&den) {
            Ordering::Greater => true,
            Ordering::Equal => digits & 1 == 1,
            Ordering::Less => false,
        };
        if round_up {
            digits += 1;
            if digits == HIGH {
                digits = LOW;
                x10 += 1;
            }
        }
        break;
    }
    let digits = digits.to_string();
    let trim = |s: &str| s.trim_end_matches('0').to_string();
    if !(-4..P).contains(&x10) {
        let frac = trim(&digits[1..]);
        let mut out = digits[..1].to_string();
        if !frac.is_empty() {
            out.push('.');
            out.push_str(&frac);
        }
        let _ = write!(out, "e{}{:02}", if x10 < 0 { '-' } else { '+' }, x10.unsigned_abs());
        out
    } else if x10 >= 0 {
        let split = x10 as usize + 1;
        let frac = trim(&digits[split..]);
        if frac.is_empty() {
            digits[..split].to_string()
        } else {
            format!("{}.{}", &digits[..split], frac)
        }
    } else {
        format!("0.{}{}", "0".repeat((-x10 - 1) as usize), trim(&digits))
    }
}

/// The outcome of rounding an exact binary value into a floating-point format.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Rounded {
    /// `mant * 2^exp`: `mant` has exactly `prec` bits, or fewer when `exp` is the format's minimum.
    Finite(u64, i64),
    /// Above the largest finite value: infinity under round-to-nearest.
    Overflow,
}

/// Rounds `n * 2^q` (plus less than one unit of `2^q` when `sticky`) to nearest, ties to even, into a
/// `prec`-bit mantissa whose last bit is at least `2^min_q` (denormals) and at most `2^max_q`. Callers
/// that set `sticky` give `n` more than `prec + 1` significant bits.
fn round_bits(n: u128, q: i64, sticky: bool, prec: u32, min_q: i64, max_q: i64) -> Rounded {
    if n == 0 {
        return Rounded::Finite(0, min_q);
    }
    let bits = 128 - i64::from(n.leading_zeros());
    let mut shift = bits - i64::from(prec);
    if q + shift < min_q {
        shift = min_q - q;
    }
    let (mant, exp) = if shift <= 0 {
        (n << (-shift), q + shift)
    } else {
        let (kept, half, rest) = if shift > 128 {
            (0, false, true)
        } else if shift == 128 {
            (0, n >> 127 == 1, n << 1 != 0)
        } else {
            let s = shift as u32;
            (n >> s, (n >> (s - 1)) & 1 == 1, n & ((1u128 << (s - 1)) - 1) != 0)
        };
        let mut mant = kept;
        if half && (rest || sticky || kept & 1 == 1) {
            mant += 1;
        }
        let mut exp = q + shift;
        if mant >> prec != 0 {
            mant >>= 1;
            exp += 1;
        }
        (mant, exp)
    };
    if exp > max_q {
        Rounded::Overflow
    } else {
        Rounded::Finite(mant as u64, exp)
    }
}

/// A non-negative big integer: little-endian 32-bit limbs without high zero limbs (zero has none).
#[derive(Clone, Debug, Default)]
struct Big {
    limbs: Vec<u32>,
}

impl Big {
    fn from_u128(mut n: u128) -> Big {
        let mut limbs = Vec::new();
        while n != 0 {
            limbs.push(n as u32);
            n >>= 32;
        }
        Big { limbs }
    }

    fn trim(&mut self) {
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.limbs.is_empty()
    }

    fn bit_len(&self) -> u64 {
        match self.limbs.last() {
            None => 0,
            Some(&top) => (self.limbs.len() as u64 - 1) * 32 + u64::from(32 - top.leading_zeros()),
        }
    }

    fn bit(&self, i: u64) -> bool {
        usize::try_from(i / 32).ok().and_then(|at| self.limbs.get(at)).is_some_and(|&limb| (limb >> (i % 32)) & 1 == 1)
    }

    /// Whether any bit below position `i` is set.
    fn any_below(&self, i: u64) -> bool {
        let full = usize::try_from(i / 32).unwrap_or(usize::MAX).min(self.limbs.len());
        if self.limbs[..full].iter().any(|&limb| limb != 0) {
            return true;
        }
        let part = (i % 32) as u32;
        part != 0 && full < self.limbs.len() && self.limbs[full] & ((1u32 << part) - 1) != 0
    }

    fn clear_bit(&mut self, i: u64) {
        if let Some(limb) = usize::try_from(i / 32).ok().and_then(|at| self.limbs.get_mut(at)) {
            *limb &= !(1 << (i % 32));
        }
        self.trim();
    }

    /// `self = self * m + a`.
    fn mul_add_small(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for limb in &mut self.limbs {
            let v = u64::from(*limb) * u64::from(m) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.limbs.push(carry as u32);
        }
        self.trim();
    }

    fn mul_pow5(&mut self, mut e: u64) {
        const FIVE_13: u32 = 1_220_703_125;
        while e >= 13 {
            self.mul_add_small(FIVE_13, 0);
            e -= 13;
        }
        if e > 0 {
            self.mul_add_small(5u32.pow(e as u32), 0);
        }
    }

    fn shl(&mut self, bits: u64) {
        if self.is_zero() {
            return;
        }
        let part = (bits % 32) as u32;
        if part != 0 {
            let mut carry = 0;
            for limb in &mut self.limbs {
                let v = *limb;
                *limb = (v << part) | carry;
                carry = v >> (32 - part);
            }
            if carry != 0 {
                self.limbs.push(carry);
            }
        }
        let whole = (bits / 32) as usize;
        if whole > 0 {
            self.limbs.splice(0..0, std::iter::repeat_n(0, whole));
        }
    }

    fn shr(&mut self, bits: u64) {
        let whole = usize::try_from(bits / 32).unwrap_or(usize::MAX);
        if whole >= self.limbs.len() {
            self.limbs.clear();
            return;
        }
        self.limbs.drain(..whole);
        let part = (bits % 32) as u32;
        if part != 0 {
            let len = self.limbs.len();
            for i in 0..len {
                let high = if i + 1 < len { self.limbs[i + 1] << (32 - part) } else { 0 };
                self.limbs[i] = (self.limbs[i] >> part) | high;
            }
        }
        self.trim();
    }

    /// Divides in place by a non-zero `d`, returning the remainder.
    fn div_rem_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.limbs.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / u64::from(d)) as u32;
            rem = cur % u64::from(d);
        }
        self.trim();
        rem as u32
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.limbs.len().cmp(&other.limbs.len()).then_with(|| self.limbs.iter().rev().cmp(other.limbs.iter().rev()))
    }

    /// `self -= other`, for `self >= other`.
    fn sub_assign(&mut self, other: &Big) {
        let mut borrow = false;
        for (i, limb) in self.limbs.iter_mut().enumerate() {
            let o = other.limbs.get(i).copied();
            if o.is_none() && !borrow {
                break;
            }
            let (v, b1) = limb.overflowing_sub(o.unwrap_or(0));
            let (v, b2) = v.overflowing_sub(u32::from(borrow));
            *limb = v;
            borrow = b1 || b2;
        }
        self.trim();
    }

    fn low_u128(&self) -> u128 {
        self.limbs.iter().take(4).enumerate().fold(0, |acc, (i, &limb)| acc | u128::from(limb) << (32 * i))
    }

    /// The leading (up to) 128 bits, how many bits were dropped below them and whether any was set.
    fn top_bits(&self) -> (u128, i64, bool) {
        let bits = self.bit_len();
        if bits <= 128 {
            return (self.low_u128(), 0, false);
        }
        let drop = bits - 128;
        let mut top = self.clone();
        top.shr(drop);
        (top.low_u128(), drop as i64, self.any_below(drop))
    }

    fn to_decimal(&self) -> String {
        let mut rest = self.clone();
        let mut chunks = Vec::new();
        while !rest.is_zero() {
            chunks.push(rest.div_rem_small(1_000_000_000));
        }
        let mut out = chunks.pop().unwrap_or(0).to_string();
        for chunk in chunks.iter().rev() {
            let _ = write!(out, "{chunk:09}");
        }
        out
    }
}

/// `floor(num / den)` for a quotient below 2^127, leaving the remainder in `num`.
fn div_small_quotient(num: &mut Big, den: &Big) -> u128 {
    let (num_bits, den_bits) = (num.bit_len(), den.bit_len());
    if den_bits == 0 || num_bits < den_bits {
        return 0;
    }
    let top = num_bits - den_bits;
    if top > 126 {
        return u128::MAX;
    }
    let mut shifted = den.clone();
    shifted.shl(top);
    let mut quotient = 0u128;
    for i in (0..=top).rev() {
        if num.cmp(&shifted) != Ordering::Less {
            num.sub_assign(&shifted);
            quotient |= 1 << i;
        }
        shifted.shr(1);
    }
    quotient
}

impl std::ops::Add for LongDouble {
    type Output = LongDouble;

    /// Exact sum rounded to nearest-even, as x87 long double addition.
    fn add(self, other: LongDouble) -> LongDouble {
        self.sum(other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn human(s: &str) -> Option<String> {
        LongDouble::parse(s.as_bytes()).and_then(LongDouble::to_human_string)
    }

    /// One INCRBYFLOAT step as Redis runs it: parse the stored string and the increment, add, reject
    /// NaN/infinity, store the human string.
    fn incrbyfloat(current: Option<&str>, incr: &str) -> Result<String, &'static str> {
        let value = match current {
            None => LongDouble::ZERO,
            Some(s) => LongDouble::parse(s.as_bytes()).ok_or("value is not a valid float")?,
        };
        let incr = LongDouble::parse(incr.as_bytes()).ok_or("value is not a valid float")?;
        let sum = value.sum(incr);
        if sum.is_nan() || sum.is_infinite() {
            return Err("increment would produce NaN or Infinity");
        }
        sum.to_human_string().ok_or("overflow")
    }

    #[test]
    fn redis_incr_tcl_expectations() {
        assert_eq!(incrbyfloat(None, "1").unwrap(), "1");
        assert_eq!(incrbyfloat(Some("1"), "0.25").unwrap(), "1.25");
        assert_eq!(incrbyfloat(Some("1.5"), "1.5").unwrap(), "3");
        assert_eq!(incrbyfloat(Some("17179869184"), "1.5").unwrap(), "17179869185.5");
        assert_eq!(incrbyfloat(Some("17179869184"), "17179869184").unwrap(), "34359738368");
        for bad in ["    11", "11    ", " 11 ", "1\u{0}2"] {
            assert_eq!(incrbyfloat(Some(bad), "1.0"), Err("value is not a valid float"), "{bad:?}");
        }
        assert_eq!(incrbyfloat(Some("0"), "+inf"), Err("increment would produce NaN or Infinity"));
        assert_eq!(incrbyfloat(Some("1"), "-1.1").unwrap(), "-0.1");
        let first = incrbyfloat(None, "0.024390243902439025").unwrap();
        assert_eq!(first, "0.02439024390243902");
        assert_eq!(incrbyfloat(Some(&first), "-0.024390243902439025").unwrap(), "0");
        // The INCRBYFLOAT examples of the Redis documentation.
        assert_eq!(incrbyfloat(Some("10.50"), "0.1").unwrap(), "10.6");
        assert_eq!(incrbyfloat(Some("10.6"), "-5").unwrap(), "5.6");
        assert_eq!(incrbyfloat(Some("5.0e3"), "2.0e2").unwrap(), "5200");
        assert_eq!(human("10.5").unwrap(), "10.5");
        assert_eq!(incrbyfloat(Some("10.5"), "0.25").unwrap(), "10.75");
        assert_eq!(human("1.5e3").unwrap(), "1500");
    }

    #[test]
    fn parse_syntax() {
        let ok = [
            "0",
            "-0",
            "+0",
            ".5",
            "5.",
            "+.5e1",
            "1e+2",
            "1E-2",
            "0x1p3",
            "0X1.8P+1",
            "0x.8",
            "0x10",
            "-0x1p-16445",
            "inf",
            "-INF",
            "Infinity",
            "+iNfInItY",
            "0e999999999999999999999",
            "00000.0000e-99999999",
        ];
        for s in ok {
            assert!(LongDouble::parse(s.as_bytes()).is_some(), "{s:?} should parse");
        }
        let bad = [
            "",
            " 1",
            "\t1",
            "\u{b}1",
            "1 ",
            "+",
            "-",
            ".",
            "e5",
            "1e",
            "1e+",
            "1.2.3",
            "0x",
            "0x.",
            "0x1p",
            "0xg",
            "nan",
            "-NaN",
            "nan(1)",
            "infin",
            "infinityy",
            "1e5000",
            "-1e5000",
            "1e-5000",
            "0x1p16384",
            "0x1p-16446",
            "0x1.0000000000000001p-16446",
            "1_0",
            "1,5",
            "- 1",
            "1e99999999999999999999",
            "1e-99999999999999999999",
        ];
        for s in bad {
            assert_eq!(LongDouble::parse(s.as_bytes()), None, "{s:?} should not parse");
        }
        let long = "1".repeat(MAX_LONG_DOUBLE_CHARS - 1);
        assert!(LongDouble::parse(long.as_bytes()).is_none(), "1e5118 overflows");
        let long = format!("1.{}", "0".repeat(MAX_LONG_DOUBLE_CHARS - 3));
        assert_eq!(long.len(), MAX_LONG_DOUBLE_CHARS - 1);
        assert!(LongDouble::parse(long.as_bytes()).is_some());
        let too_long = format!("1.{}", "0".repeat(MAX_LONG_DOUBLE_CHARS - 2));
        assert!(LongDouble::parse(too_long.as_bytes()).is_none());
    }

    #[test]
    fn extremes() {
        let max = LongDouble::parse(b"0x1.fffffffffffffffep16383").unwrap();
        assert_eq!((max.mant, max.exp), (u64::MAX, MAX_Q as i32));
        assert!(max.sum(max).is_infinite());
        let human = max.to_human_string().unwrap();
        assert_eq!(human.len(), 4933);
        assert!(
            human.starts_with("118973149535723176502126385303097020516906332229462420044032373389173700552297072261")
        );
        assert_eq!(max.to_auto_string().unwrap(), "1.1897314953572318e+4932");
        let min = LongDouble::parse(b"0x1p-16445").unwrap();
        assert_eq!((min.mant, min.exp), (1, MIN_Q as i32));
        assert_eq!(min.to_auto_string().unwrap(), "3.6451995318824746e-4951");
        assert_eq!(min.to_human_string().unwrap(), "0");
        assert_eq!(LongDouble::parse(b"-3e-4951").unwrap().to_human_string().unwrap(), "0");
        assert!(LongDouble::parse(b"1.8e-4951").is_none());
        assert_eq!(LongDouble::from_i64(i64::MIN).to_human_string().unwrap(), "-9223372036854775808");
        assert_eq!(LongDouble::from_i64(0), LongDouble::ZERO);
        let inf = LongDouble::parse(b"inf").unwrap();
        let nan = inf.sum(LongDouble::parse(b"-inf").unwrap());
        assert!(nan.is_nan());
        assert_eq!(nan.to_human_string().unwrap(), "-nan");
        assert!(nan.to_f64().is_nan());
        assert_eq!(inf.to_human_string().unwrap(), "inf");
        assert_eq!(inf.to_f64(), f64::INFINITY);
        let neg_zero = LongDouble::parse(b"-0").unwrap();
        assert_eq!(neg_zero.to_auto_string().unwrap(), "-0");
        assert_eq!(neg_zero.to_human_string().unwrap(), "0");
        assert!(neg_zero.sum(neg_zero).is_sign_negative());
        assert!(!neg_zero.sum(LongDouble::ZERO).is_sign_negative());
        for x in [0.1, -2.5e-310, 1e308, f64::MAX, f64::MIN_POSITIVE, 5e-324, -0.0] {
            assert_eq!(LongDouble::from_f64(x).to_f64().to_bits(), x.to_bits());
        }
    }

    #[test]
    fn no_panic_on_junk() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = b"0123456789.eEpPxX+-infatyINFATY \t\x00abcdef";
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let s: Vec<u8> = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            if let Some(v) = LongDouble::parse(&s) {
                assert!(!v.is_nan());
                let _ = (v.to_human_string(), v.to_auto_string(), v.to_f64(), v.sum(v));
            }
        }
    }

    /// The x87 memory image: sign and biased exponent, explicit mantissa.
    fn bits80(v: LongDouble) -> (u16, u64) {
        let sign = u16::from(v.neg) << 15;
        match v.kind {
            Kind::Infinite | Kind::Nan => (sign | 0x7fff, v.mant),
            Kind::Finite if v.mant >> 63 == 0 => (sign, v.mant),
            Kind::Finite => (sign | (v.exp + 16446) as u16, v.mant),
        }
    }

    fn decode_input(token: &str) -> Vec<u8> {
        match token.strip_prefix("hex:") {
            None => token.as_bytes().to_vec(),
            Some(hex) => (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect(),
        }
    }

    /// Checks one reference line produced by a C program using glibc's strtold, long double addition,
    /// printf("%.17Lf") / printf("%.17Lg") and a cast to double:
    /// `P <input> ERR`, `P <input> <se> <mant> <human> <auto> <f64>` or
    /// `A <input> <input> <se> <mant> <human> <auto> <f64>`, with hexadecimal bit patterns and inputs
    /// written as is or as `hex:<bytes>`.
    fn check_vector(line: &str) -> Result<(), String> {
        let fields: Vec<&str> = line.split(' ').collect();
        let (value, expected) = match fields[0] {
            "P" => (LongDouble::parse(&decode_input(fields[1])), &fields[2..]),
            "A" => {
                let a = LongDouble::parse(&decode_input(fields[1]));
                let b = LongDouble::parse(&decode_input(fields[2]));
                (a.zip(b).map(|(a, b)| a.sum(b)), &fields[3..])
            }
            _ => return Err(format!("bad vector {line}")),
        };
        let got = match value {
            None => "ERR".to_string(),
            Some(v) => {
                let (se, mant) = bits80(v);
                format!(
                    "{se:04x} {mant:016x} {} {} {:016x}",
                    v.to_human_string().unwrap_or_default(),
                    v.to_auto_string().unwrap_or_default(),
                    v.to_f64().to_bits()
                )
            }
        };
        if got == expected.join(" ") {
            Ok(())
        } else {
            Err(format!("{line}\n   got {got}"))
        }
    }

    /// Set LONGDOUBLE_VECTORS to a file of reference lines (see `check_vector`) to check them all.
    #[test]
    #[ignore]
    fn reference_vectors_from_file() {
        let path = std::env::var("LONGDOUBLE_VECTORS").expect("LONGDOUBLE_VECTORS");
        let text = std::fs::read_to_string(path).unwrap();
        let mut failures = Vec::new();
        let mut count = 0;
        for line in text.lines().filter(|l| !l.is_empty()) {
            count += 1;
            if let Err(e) = check_vector(line) {
                failures.push(e);
            }
        }
        for f in failures.iter().take(30) {
            eprintln!("{f}");
        }
        assert!(failures.is_empty(), "{} of {count} vectors differ", failures.len());
        eprintln!("{count} vectors match");
    }

    #[test]
    fn reference_vectors() {
        let failures: Vec<String> =
            VECTORS.lines().filter(|l| !l.is_empty()).filter_map(|l| check_vector(l).err()).collect();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// Generated by a C program with glibc 2.36 on x86-64 (see `check_vector` for the format).
    const VECTORS: &str = r#"
A +7332556460394129737.400 81 403d cb84f2809a935335 7332556460394129818.5 7.3325564603941298e+18 43d9709e5013526a
A -0.00000000000001243 1e-5 3fee a7c5ac439b9a7cc1 0.00000999999998757 9.99999998757e-06 3ee4f8b588737350
A -14952646174932266086 -0.3 c03e cf8278793cf0ec66 -14952646174932266086 -1.4952646174932266e+19 c3e9f04f0f279e1e
A -353.51e-19 0x20000000000000003p-16459 bfc8 a30718298c708ce0 -0.00000000000000004 -3.5351e-17 bc8460e305318e12
A -4700271312690870005 142.7 c03d 82756fb629cbeccd -4700271312690869862.5 -4.7002713126908699e+18 c3d04eadf6c5397e
A -504982946870414271936 1 c043 db005e955087ff2e -504982946870414271936 -5.0498294687041427e+20 c43b600bd2aa1100
A -527537163441255797.75 0.1 c039 ea46082a1776aeb5 -527537163441255797.65625 -5.275371634412558e+17 c39d48c10542eed6
A -54752639218379473776 0.01 c040 bdf61cd1bda850dc -54752639218379473776 -5.4752639218379474e+19 c407bec39a37b50a
A -880538083782068095 0.000001 c03a c384cb8cf08877f0 -880538083782068095 -8.805380837820681e+17 c3a87099719e110f
A -8839999999999999999865782272 1e-5 c05b e4823681e8a36cfc -8839999999999999999865782272 -8.84e+27 c5bc9046d03d146e
A -9223372036854775808 -766 c03e 80000000000002fe -9223372036854776574 -9.2233720368547766e+18 c3e0000000000000
A 0 0.000001 3feb 8637bd05af6c69b6 0.000001 1e-06 3eb0c6f7a0b5ed8d
A 0 1e-5 3fee a7c5ac471b478423 0.00001 1e-05 3ee4f8b588e368f1
A 0.00000067582110389 0.000001 3feb e0ecc65182620cf0 0.00000167582110389 1.67582110389e-06 3ebc1d98ca304c42
A 18446744073709551617 -541 403e fffffffffffffde3 18446744073709551075 1.8446744073709551e+19 43f0000000000000
A 265122350001547121952 1e-5 4042 e5f4fcca5e300152 265122350001547121952 2.6512235000154712e+20 442cbe9f994bc600
A 4654186413047173367808 0.1 4046 fc4dcfbbbade3c48 4654186413047173367808 4.6541864130471734e+21 446f89b9f7775bc8
A 645085431815451192.75 3.0e2 403a 8f3cdc84d23b364c 645085431815451492.75 6.4508543181545149e+17 43a1e79b909a4767
P +0X1p-7284 238b 8000000000000000 0 1.9838625699807855e-2193 0000000000000000
P +0xc217faafed0cd2a1p-16381 0041 c217faafed0cd2a1 0 9.4044230019319966e-4913 0000000000000000
P -0.000000040641 bfe6 ae8d40874ba1404a -0.000000040641 -4.0641e-08 be65d1a810e97428
P -0X84b7595E3FD789E1P-6948 a51a 84b7595e3fd789e1 0 -2.6557907032914778e-2073 8000000000000000
P -0Xc.1p-44 bfd6 c100000000000000 -0.00000000000068567 -6.8567374000849668e-13 bd68200000000000
P -0x3c77fbac5482cc2adp-16391 8039 f1dfeeb1520b30ab 0 -4.5779529867438039e-4915 8000000000000000
P -1.036258451868508672814496654e-358 bb59 df08f18dac5cc902 0 -1.0362584518685087e-358 8000000000000000
P -38227003348810408558 c040 84a06640aa60c89c -38227003348810408560 -3.8227003348810409e+19 c400940cc8154c19
P -7114945967853528267.5 c03d c57abb528403c997 -7114945967853528267.5 -7.1149459678535283e+18 c3d8af576a508079
P -871777863616323333324800 c04e b89b2c34f1f7ef67 -871777863616323333324800 -8.7177786361632333e+23 c4e71365869e3efe
P -982256084882224496.73 c03a da1acb479def570c -982256084882224496.75 -9.822560848822245e+17 c3ab435968f3bdeb
P 0.00000000055767426 3fe0 994ad65badc873da 0.00000000055767426 5.5767426e-10 3e03295acb75b90e
P 0.0000591306878586684122 3ff0 f80317b6f9d737a7 0.00005913068785867 5.9130687858668412e-05 3f0f0062f6df3ae7
P 2.87332546849941259510e-165 3ddc a96f4a16bf5726ac 0 2.8733254684994126e-165 1dc52de942d7eae5
P 26024522882364551508992 4049 b05959cdb5b98116 26024522882364551507968 2.6024522882364552e+22 44960b2b39b6b730
P 2671050606254941763 403c 9445e97f8bab990c 2671050606254941763 2.6710506062549418e+18 43c288bd2ff17573
P 290927593699990257270784 404c f66cdda6b6c0cb30 290927593699990257270784 2.9092759369999026e+23 44cecd9bb4d6d819
P 4.9371642153596366626e-1527 2c30 d2c379943ac73c48 0 4.9371642153596367e-1527 0000000000000000
P 4.9406564584124654e-324 3bcc ffffffffffffff64 0 4.9406564584124654e-324 0000000000000001
P 4.9E46 409a 8953c69f9c974a77 48999999999999999999580471415599173996172541952 4.9e+46 49a12a78d3f392e9
P 563744528150648812 4039 fa5a552b0faafd80 563744528150648812 5.6374452815064881e+17 439f4b4aa561f560
P 6475341596920539243.35613E-4939 0026 b35eedbaa950d9f6 0 6.4753415969205392e-4921 0000000000000000
A -0 +98197578850386140.798530959136655424E-4954 0000 000018803225406c 0 9.8197578850384692e-4938 0000000000000000
P +0.38103e-4945 0000 0000000000019851 0 3.8102906186814319e-4946 0000000000000000
P +24756049795316067946.282392465623708515E-4964 0000 00000000000a5ce5 0 2.4756044552821957e-4945 0000000000000000
P +27087456590056736669.58121E-4962 0000 00000000046de136 0 2.7087456579261384e-4943 0000000000000000
P +3.71006557057367661E-4946 0000 0000000000018d93 0 3.7100476315546638e-4946 0000000000000000
P -.1289308523280570723724369774841588960095E-4949 8000 0000000000000004 0 -1.4580798127529898e-4950 8000000000000000
P -0528386295982711595502461.5e-4962 8000 000001517f52e634 0 -5.2838629598263406e-4939 8000000000000000
P -5664826718248774603250542.6E-4969 8000 000000000017b683 0 -5.6648259777214915e-4945 8000000000000000
P -789455426352271563.611E-4967 8000 0000000000000016 0 -8.0194389701414441e-4950 8000000000000000
P -89051.65164043624447613815E-4954 8000 0000000000000018 0 -8.748478876517939e-4950 8000000000000000
P -9.7716401027065295300e-4943 8000 000000000ffa677a 0 -9.7716400910832948e-4943 8000000000000000
P .53e-4944 0000 0000000000162f8f 0 5.299999827772566e-4945 0000000000000000
P .7566828233E-4942 0000 000000000c5f7890 0 7.5668282502178371e-4943 0000000000000000
P .9639565293589530438E-4948 0000 0000000000000108 0 9.623326764169733e-4949 0000000000000000
P 0.81871461363306220e-4946 0000 00000000000057bc 0 8.187118148608038e-4947 0000000000000000
P 064.62498962433305116077e-4937 0000 00064c6ca3a72cb3 0 6.4624989624333064e-4936 0000000000000000
P 0817352096910899295e-4966 0000 00000000000000e0 0 8.1652469514167431e-4949 0000000000000000
P 1.82259976594123730127e-4951 0000 0000000000000001 0 3.6451995318824746e-4951 0000000000000000
P 3.64519953188247460253e-4951 0000 0000000000000001 0 3.6451995318824746e-4951 0000000000000000
P 9889056541606059787908338.83418e-4961 0000 0000f6bc9777665d 0 9.8890565416060613e-4937 0000000000000000
P +0Xfdf38E4fC44E4Be72P-16475 0000 0000003f7ce393f1 0 9.9396655262150262e-4940 0000000000000000
P +0x17062c8520dea89b7p-16464 0000 00002e0c590a41bd 0 1.8455852397422392e-4937 0000000000000000
P +0x31fae399001b0f167p-16511 0000 0000000000000001 0 3.6451995318824746e-4951 0000000000000000
P +0xdfc43f26054e37e7e7b1p-16507 0000 0000000000037f11 0 8.3525008513695458e-4946 0000000000000000
P -0X.1P-16387 8000 0040000000000000 0 -6.5666077013908076e-4935 8000000000000000
P -0x1ea0bbd5dc929a6dbp-16489 8000 00000000001ea0bc 0 -7.3167465659813957e-4945 8000000000000000
P -0x39b5d3a4e8bc8f2c9p-16486 8000 0000000001cdae9d 0 -1.1029206226066306e-4943 8000000000000000
P -0x3e72f002e7cc4f769p-16475 8000 0000000f9cbc00ba 0 -2.4442548677407983e-4940 8000000000000000
P -0x82ea8da3c413d5454674p-16469 8000 0082ea8da3c413d5 0 -1.3432429423700371e-4934 8000000000000000
P -0xB8B.F47aA1FfcbBcBA6706D30c85DD7P-16442 8000 0000000000005c60 0 -8.6201678529956759e-4947 8000000000000000
P 0XdCDbD35F8F5a87e7p-16490 0000 000000000006e6df 0 1.648793007061549e-4945 0000000000000000
P 0Xe072c3FDbC4E12ED2aP-16516 0000 0000000000000002 0 7.2903990637649492e-4951 0000000000000000
P 0x100000000000000010p-16490 0000 0000000000800000 0 3.0578149954745582e-4944 0000000000000000
P 0x10000000000000005p-16480 0000 0000000020000000 0 1.9570015971037172e-4942 0000000000000000
P 0x12ed5bc849a9a34c7p-16498 0000 0000000000000977 0 8.832318465751236e-4948 0000000000000000
P 0x1da7fa7b2000c2645p-16473 0000 0000001da7fa7b20 0 4.6429731045876703e-4940 0000000000000000
P 0x30bce3c567a731b53p-16455 0000 00c2f38f159e9cc7 0 2.0002646532323047e-4934 0000000000000000
P 0x3p-16447 0000 0000000000000001 0 3.6451995318824746e-4951 0000000000000000
P 0x82875e8a32258180p-16469 0000 00000082875e8a32 0 2.0435603462643893e-4939 0000000000000000
P 0xab87281441ee58fd30bbp-16487 0000 0000002ae1ca0510 0 6.7136096497356042e-4940 0000000000000000
P 0xbf426222d42a503a1817p-16465 0000 0bf426222d42a504 0 3.1398121439921617e-4933 0000000000000000
P 0xcdf6f42881932f33fec1p-16504 0000 000000000019bedf 0 6.1504102977626197e-4945 0000000000000000
A -05.7498919645639487436923406e20 -2.357911198383507013e+5307 ERR
A -4459525205534760169976068.18665578294524742 hex:6265742e39796109747863 ERR
A 0.041638064270211474 aPf+a-AX0X ERR
A 0x1p16384 -0x1p16384 ERR
A 0xC84FDb0D9A1147.7cEd4eCdfDcDE42BP16337 -1.91410242686373877188129740216417378102786717164462970686145e-6 ERR
A aaa88fA 134467145826984478253173828125e-14 ERR
A hex: +0xf39c070e81d45758p16312 ERR
A hex: nan ERR
P +0XDAB4d93aF7B59dC7C4p16398 ERR
P +0Xd5aFaBBc15Cd6EDD14D6Aa0a7A353.3p16375 ERR
P +0XeF5f8BE5F350137bp16381 ERR
P +0xF83f0AfEDedB367F5p16342 ERR
P +0xb5e3236a030efc43392fp16313 ERR
P -0xb03d373021fd89988163p16323 ERR
P -6.42715818595611964E-5216 ERR
P -8514628571238814657011061947108187770967.81123E-5894 ERR
P 0E1N ERR
P 0x1p-16446 ERR
P 0xd2ef99186BaE756Ab690A52ccC2AFap-16932 ERR
P 1..2 ERR
P 1.1897314953572317651e4932 ERR
P 3-F1 ERR
P 4077915695759466469.05169612918403153e4921 ERR
P 6in-A ERR
P 8.8643268330996463174653893897683127829850e4938 ERR
P Fe1 ERR
P I88Nney ERR
P ceAc86fPb ERR
P d5p ERR
P dE8pYe ERR
P fa ERR
P hex:0b31 ERR
P hex:2031 ERR
P hex:506336092e3879204669 ERR
P hex:540936416158416549343570 ERR
P hex:65616635002069206966464e ERR
P p063XENc ERR
P pfaA5d9F3na ERR
A +0x10f543a1fff2ac7bfp-16486 0.88497979733 3ffe e28e0937272ed122 0.88497979733 0.88497979733 3fec51c126e4e5da
A +0x9fd8d122adac6479e481p-16383 816.187 4008 cc0bf7ced916872b 816.187 816.187 4089817ef9db22d1
A +714 +0xC973DD739d4813824b46f0F8ebbBeaP-16465 4008 b280000000000000 714 714 4086500000000000
A -.5773657612 -0xfaAc9ACc4efde5B7p-2124 bffe 93ce3e162f242c70 -0.5773657612 -0.5773657612 bfe279c7c2c5e486
A -0XEbp-16419 5961981.2 4015 b5f1fa6666666666 5961981.1999999999998181 5961981.2 4156be3f4ccccccd
A -0x1c4cd41262dc71f79p-16381 -9513.823 c00c 94a74ac083126e98 -9513.8230000000000004 -9513.823 c0c294e95810624e
A -0x1d8938fa6c6eef8e6p-16383 376 4007 bc00000000000000 376 376 4077800000000000
A -0xc78f0f9ddd2d0cb87ba9p-16476 882 4008 dc80000000000000 882 882 408b900000000000
A -0xcf1d149c2f7d35691efcp-16388 -662 c008 a580000000000000 -662 -662 c084b00000000000
A -105.169 -0xBp-45 c005 d256872b020cf9ba -105.16900000000031264 -105.16900000000031 c05a4ad0e560419f
A -5041014.9 +0x34a7fefce27dbfb42p-16483 c015 99d6edcccccccccd -5041014.90000000000009095 -5041014.9 c1533addb999999a
A -813 0xffbB3Bee6B1eEe9ACP-16416 c008 cb40000000000000 -813 -813 c089680000000000
A 0.06325 -0x936c47324c1d8f133a71p-16382 3ffb 8189374bc6a7ef9e 0.06325 0.06325 3fb03126e978d4fe
A 0xA0p36 -0x11bd09ec1b5b5f528p-16393 402a a000000000000000 10995116277760 10995116277760 42a4000000000000
A 0xc36cc1Cb2a6eA5CD08A7cB85f6233B.p-16391 -8.927659 c002 8ed7b0f6ad70e6f3 -8.927659 -8.927659 c021daf61ed5ae1d
A 1.668782200732760283e-13 0x6A78F94E 401d d4f1f29c00000000 1786313038 1786313038 41da9e3e53800000
A 149 0x2a7ff0a27c9aca200p-16495 4006 9500000000000000 149 149 4062a00000000000
A 17179869184 0X06ABAe042CA41bD0P-16409 4021 8000000000000000 17179869184 17179869184 4210000000000000
A 17179869184 0x1. 4021 8000000020000000 17179869185 17179869185 4210000000040000
A 4.6230735480 0x1863d2648f559db27p-16380 4001 93f037eff534b9b5 4.623073548 4.623073548 40127e06fdfea697
A 538 -0x8f7e3dabd687b2dfp-16487 4008 8680000000000000 538 538 4080d00000000000
A 821 -0xaaa91871ec437179p-16499 4008 cd40000000000000 821 821 4089a80000000000
P +0XD.P-8 3ffa d000000000000000 0.05078125 0.05078125 3faa000000000000
P -0X.05p-1 bff8 a000000000000000 -0.009765625 -0.009765625 bf84000000000000
P -0X3.1P24 c018 c400000000000000 -51380224 -51380224 c188800000000000
P -0X3FA644Dc1B5f7a.D7bap-29 c017 fe9913706d7deb5f -33370662.87834142678002536 -33370662.878341427 c17fd3226e0dafbd
P -0X6 c001 c000000000000000 -6 -6 c018000000000000
P -0X6ac425B3535c2fAfP-43 c012 d5884b66a6b85f5e -874628.71256134052771358 -874628.71256134053 c12ab1096cd4d70c
P -0XbP-6 bffc b000000000000000 -0.171875 -0.171875 bfc6000000000000
P -0x5 c001 a000000000000000 -5 -5 c014000000000000
P 0X06 4001 c000000000000000 6 6 4018000000000000
P 0X6.p27 401c c000000000000000 805306368 805306368 41c8000000000000
P 0X6F6d0aDBDd3bfbD1fBp-39 401e deda15b7ba77f7a4 3738834359.72839305642992258 3738834359.7283931 41ebdb42b6f74eff
P 0X6c.9eDfEdP9 400e d93dbfda00000000 55613.749420166015625 55613.749420166016 40eb27b7fb400000
P 0X924.3CEaAfed5a54fD4P43 4035 9243ceaafed5a550 20584950755453650.65625 20584950755453651 43524879d55fdab5
P 0Xe958a273P-6 4018 e958a27300000000 61170313.796875 61170313.796875 418d2b144e600000
P 0Xf46B53.61 4016 f46b536100000000 16018259.37890625 16018259.37890625 416e8d6a6c200000
P 0x.1 3ffb 8000000000000000 0.0625 0.0625 3fb0000000000000
P 0x1. 3fff 8000000000000000 1 1 3ff0000000000000
P 0x5EP19 4018 bc00000000000000 49283072 49283072 4187800000000000
P 0x8B. 4006 8b00000000000000 139 139 4061600000000000
P 0xFdCCD3dDF9E25E3Fap-42 4018 fdccd3ddf9e25e40 66532175.46837672428227961 66532175.468376724 418fb99a7bbf3c4c
P 0xfdD418ADa1feA43db0p-45 4019 fdd418ada1fea43e 133079237.42602474287559744 133079237.42602474 419fba8315b43fd5
A +0x2000000000000000fp-16490 -infinity ffff 8000000000000000 -inf -inf fff0000000000000
A -8494803.29 -inf ffff 8000000000000000 -inf -inf fff0000000000000
A 024182630525842838.65324407717811376384e-4956 INF 7fff 8000000000000000 inf inf 7ff0000000000000
A INF +0893195435559792842044065.83674646352127403892 7fff 8000000000000000 inf inf 7ff0000000000000
A Infinity -1391320.405181 7fff 8000000000000000 inf inf 7ff0000000000000
A Infinity 3.64519953188247460253e-4951 7fff 8000000000000000 inf inf 7ff0000000000000
A inf -0x.aP-36 7fff 8000000000000000 inf inf 7ff0000000000000
A inf -0x8374fEcaP17 7fff 8000000000000000 inf inf 7ff0000000000000
P -inf ffff 8000000000000000 -inf -inf fff0000000000000
P -infinity ffff 8000000000000000 -inf -inf fff0000000000000
P INF 7fff 8000000000000000 inf inf 7ff0000000000000
P Infinity 7fff 8000000000000000 inf inf 7ff0000000000000
P inf 7fff 8000000000000000 inf inf 7ff0000000000000
A +140353532.9 1397.11 401a 85da572028f5c28f 140354930.00999999999476131 140354930.01 41a0bb4ae4051eb8
A +18836619712.649 5.0e3 4021 8c5802a914c49ba6 18836624712.64900000020861626 18836624712.649 42118b0055229893
A -16.79959 -36442.1 c00e 8e6ae64b87bdcf03 -36458.89958999999999989 -36458.89959 c0e1cd5cc970f7ba
A -2.8649 7594104321.19 401f e2526aff299ce076 7594104318.32510000001639128 7594104318.3251 41fc4a4d5fe5339c
A -21181688.949 -0.00695010675 c017 a19a7c7a5c92b68d -21181688.95595010675060621 -21181688.955950107 c174334f8f4b9257
A -269 +0.2 c007 8666666666666666 -268.79999999999999999 -268.8 c070cccccccccccd
A -345.47816513908694988 3.0e2 c004 b5e9a41f49dceb38 -45.47816513908694988 -45.47816513908695 c046bd3483e93b9d
A -351 -2933.30 c00a cd44cccccccccccd -3284.30000000000000004 -3284.3 c0a9a8999999999a
A -366 -860335.74250 c012 d221dbe147ae147b -860701.74250000000000682 -860701.7425 c12a443b7c28f5c3
A -5173.3944 981832347027523.9 4030 df3e2a117d03a05c 981832347022350.505615234375 981832347022350.51 430be7c5422fa074
A -597 0.000000329923489923573153 c008 953ffffe9dbf5257 -596.99999967007651008 -596.99999967007651 c082a7ffffd3b7ea
A -6943433.10642 -594 c015 d3ea36367caea748 -6944027.10642000000007101 -6944027.10642 c15a7d46c6cf95d5
A -795 0.0000000075467 c008 c6bffffff7e59433 -794.99999999245330001 -794.9999999924533 c088d7fffffefcb3
A -88610001639.426 9536891.778 c023 a507fe6b5d2f1aa0 -88600464747.64800000190734863 -88600464747.648 c234a0ffcd6ba5e3
A 0.0094129696367068 -322 c007 a0fecb8e49a044ec -321.99058703036329321 -321.99058703036329 c0741fd971c93409
A 274294345.6 848 401b 82cb4ccccccccccd 274295193.60000000000582077 274295193.6 41b059699999999a
A 425476.483500 -395 4011 cf8f2f78d4fdf3b6 425081.48349999999999227 425081.4835 4119f1e5ef1a9fbe
A 5957147214.1351 -974 401f b1896b40114af4f1 5957146240.13510000007227063 5957146240.1351 41f6312d6802295f
A 67 -821374099.9560866 c01c c3d4b143d3085d9d -821374032.95608660002471879 -821374032.9560866 c1c87a96287a610c
A 74788539629.40999999642372131 -1 4023 8b4df4676347ae14 74788539628.40999999642372131 74788539628.41 423169be8cec68f6
A 827737481940837.6 72.060 4030 bc34a9a503eb6a3d 827737481940909.65997314453125 827737481940909.66 4307869534a07d6d
A 8452360347.438865 +162 401f fbe6649eb82cba73 8452360509.43886499991640449 8452360509.438865 41ff7ccc93d70597
P +5388596994.640162 401f a097bb8151f0d413 5388596994.64016199996694922 5388596994.640162 41f412f7702a3e1b
P -0.42387091699538895801E3 c007 d3ef7a35465cf2ba -423.870916995388958 -423.87091699538896 c07a7def46a8cb9e
P -12985.93143936806986491 c00c cae7b9cb3de04495 -12985.93143936806986449 -12985.93143936807 c0c95cf73967bc09
P -21.3684051767804039 c003 aaf27e69cf976a5b -21.3684051767804039 -21.368405176780404 c0355e4fcd39f2ed
P -24898368.4500000000007276 c017 bdf5a0399999999a -24898368.4500000000007276 -24898368.45 c177beb407333333
P -53762974396858832.36328125 c036 bf0123eefe41d05d -53762974396858832.36328125 -53762974396858832 c367e0247ddfc83a
P -6981356.38000000000010914 c015 d50dd8c28f5c28f6 -6981356.38000000000010914 -6981356.38 c15aa1bb1851eb85
P -8762.88145738327067935 c00c 88eb869cc3a7dc79 -8762.88145738327067935 -8762.8814573832707 c0c11d70d39874fc
P 0.00096744396910369 3ff4 fd9c10d5014d903f 0.00096744396910369 0.00096744396910369 3f4fb3821aa029b2
P 0.11440626248157057 3ffb ea4dd49e870a3022 0.11440626248157057 0.11440626248157057 3fbd49ba93d0e146
P 163059.60200000000000387 4010 9f3ce6872b020c4a 163059.60200000000000387 163059.602 4103e79cd0e56042
P 2010572040.76000000000931323 401d efadca11851eb852 2010572040.76000000000931323 2010572040.76 41ddf5b94230a3d7
P 209680227.12635699998645578 401a c7f77632058eeae9 209680227.12635699998645578 209680227.126357 41a8feeec640b1dd
P 29777094.71549672678156639 4017 e32e635b956590f6 29777094.71549672678156639 29777094.715496727 417c65cc6b72acb2
P 36307.95899999999999963 400e 8dd3f5810624dd2f 36307.95899999999999963 36307.959 40e1ba7eb020c49c
P 576361740286.56999999284744263 4026 8631d637fe91eb85 576361740286.56999999284744263 576361740286.57 4260c63ac6ffd23d
P 64190.06 400e fabe0f5c28f5c28f 64190.05999999999999872 64190.06 40ef57c1eb851eb8
P 78578.11299999999999955 400f 99790e76c8b43958 78578.11299999999999955 78578.113 40f32f21ced91687
P 841737792394.55000001192092896 4026 c3fb7b6b8a8ccccd 841737792394.55000001192092896 841737792394.55 42687f6f6d71519a
P 8595717511512.758 4029 fa2b160b2b184189 8595717511512.75799989700317383 8595717511512.758 429f4562c1656308
P 88872.47681435360906178362 400f ad943d0840b381d5 88872.47681435360906477 88872.476814353609 40f5b287a1081670
P 947.40000000000000002 4008 ecd999999999999a 947.40000000000000002 947.4 408d9b3333333333
A -inf inf ffff c000000000000000 -nan -nan fff8000000000000
A -infinity infinity ffff c000000000000000 -nan -nan fff8000000000000
A INF -INF ffff c000000000000000 -nan -nan fff8000000000000
A Infinity -Infinity ffff c000000000000000 -nan -nan fff8000000000000
A inf -inf ffff c000000000000000 -nan -nan fff8000000000000
A +339.18825199808202996696e-873 -0.89 bffe e3d70a3d70a3d70a -0.89 -0.89 bfec7ae147ae147b
A +84 479 4008 8cc0000000000000 563 563 4081980000000000
A -0.000076684 0.01 3ff8 a295676c061eb93a 0.009923316 0.009923316 3f8452aced80c3d7
A -0.0008791 0.000001 bff4 e6304b2166821518 -0.0008781 -0.0008781 bf4cc609642cd043
A -0.003032121456939 0.6105238065478399 3ffe 9b8493380eae7fe6 0.6074916850909009 0.6074916850909009 3fe370926701d5d0
A -0.09 +94.488572 4005 bccc11a11233df2b 94.398572 94.398572 405799823422467c
A -0.1 81.90849547748385 4005 a39df31e85839ac3 81.80849547748385 81.80849547748385 405473be63d0b073
A -0.99991420330729 -0.1 bfff 8cc9fd15ce2b99c9 -1.09991420330729 -1.09991420330729 bff1993fa2b9c573
A -3.251687 -0.00000 c000 d01ba3ca7503b81b -3.251687 -3.251687 c00a0374794ea077
A -312 0.0003213 c007 9bfff578bd80ff6f -311.9996787 -311.9996787 c0737ffeaf17b020
A -44.15141370016424 -80.60503108268517 c005 f9834cbb0722d5d4 -124.75644478284941 -124.75644478284941 c05f30699760e45b
A -5.877 -1 c001 dc10624dd2f1a9fc -6.877 -6.877 c01b820c49ba5e35
A -6.40672 -0.000000656770165 c001 cd03db09edef9cfd -6.406720656770165 -6.406720656770165 c019a07b613dbdf4
A -64.1081123786572 59.516626175891986 c001 92ed74791d2d9ed0 -4.591486202765214 -4.591486202765214 c0125dae8f23a5b4
A -8.42272 0.1 c002 8529dc725c3dee78 -8.32272 -8.32272 c020a53b8e4b87be
A -90.00657373889086 -8.54618118728061 c005 c51b02b19537fdca -98.55275492617147 -98.55275492617147 c058a3605632a700
A .4774983964 -4.8638404834 c001 8c5cea149777e77e -4.386342087 -4.386342087 c0118b9d4292eefd
A 0 -0.1 bffb cccccccccccccccd -0.1 -0.1 bfb999999999999a
A 0 -1 bfff 8000000000000000 -1 -1 bff0000000000000
A 0 -23.32509057504359 c003 ba99c91660668218 -23.32509057504359 -23.32509057504359 c037533922cc0cd0
A 0 -25.03177272389098 c003 c841120ed021fd98 -25.03177272389098 -25.03177272389098 c039082241da0440
A 0 -28.517435131258424 c003 e423b507b4738102 -28.517435131258424 -28.517435131258424 c03c8476a0f68e70
A 0 -49.86581423116698 c004 c77698017d1820e7 -49.86581423116698 -49.86581423116698 c048eed3002fa304
A 0 -5.986987641666758 c001 bf95671b5079ffec -5.986987641666758 -5.986987641666758 c017f2ace36a0f40
A 0 -50.32526402702862 c004 c94d12035a9cdbfe -50.32526402702862 -50.32526402702862 c04929a2406b539b
A 0 -51.92042768114984 c004 cfae8498137c9948 -51.92042768114984 -51.92042768114984 c049f5d093026f93
A 0 -57.46195526330704 c004 e5d90accf079a82d -57.46195526330704 -57.46195526330704 c04cbb21599e0f35
A 0 -63.3992882125048 c004 fd98df02598bb02d -63.3992882125048 -63.3992882125048 c04fb31be04b3176
A 0 -67.16292826597032 c005 86536b556bdf7ec7 -67.16292826597032 -67.16292826597032 c050ca6d6aad7bf0
A 0 -82.54170372118257 c005 a5155a30ad33872a -82.54170372118257 -82.54170372118257 c054a2ab4615a671
A 0 -85.70145606549977 c005 ab67253fd9ce004d -85.70145606549977 -85.70145606549977 c0556ce4a7fb39c0
A 0 1.3790018618572049 3fff b083220ce6600182 1.3790018618572049 1.3790018618572049 3ff61064419ccc00
A 0 11.947016731575303 4002 bf26fb042e177fa0 11.947016731575303 11.947016731575303 4027e4df6085c2f0
A 0 19.26312950265347 4003 9a1ae3a404133fb7 19.26312950265347 19.26312950265347 4033435c74808268
A 0 22.710972750861984 4003 b5b0127b4a651fd1 22.710972750861984 22.710972750861984 4036b6024f694ca4
A 0 3.0e2 4007 9600000000000000 300 300 4072c00000000000
A 0 30.499104440782418 4003 f3fe2a78139740bf 30.499104440782418 30.499104440782418 403e7fc54f0272e8
A 0 32.3445507489121 4004 8160d1e9598f21b9 32.3445507489121 32.3445507489121 40402c1a3d2b31e4
A 0 36.53374271375682 4004 92228d7330415cf7 36.53374271375682 36.53374271375682 40424451ae66082c
A 0 38.740159548533086 4004 9af5ec627b16402a 38.740159548533086 38.740159548533086 40435ebd8c4f62c8
A 0 48.21686618015565 4004 c0de122afd82020c 48.21686618015565 48.21686618015565 40481bc2455fb040
A 0 6.253140239279119 4001 c819b98f202c7d0c 6.253140239279119 6.253140239279119 4019033731e40590
A 0 73.14298299026078 4005 92493511061bd202 73.14298299026078 73.14298299026078 40524926a220c37a
A 0 9.96426699412578 4002 9f6da33a461e8310 9.96426699412578 9.96426699412578 4023edb46748c3d0
A 0 90.90957557084167 4005 b5d1b3e3a402d166 90.90957557084167 90.90957557084167 4056ba367c74805a
A 0 91.52161767951787 4005 b70b1178f516ddc4 91.52161767951787 91.52161767951787 4056e1622f1ea2dc
A 0.000001 55.16784199098001 4004 dcabdf08747ce4a4 55.16784299098001 55.16784299098001 404b957be10e8f9d
A 0.00000424950828 5.430393474360827 4001 adc5d172894d07d6 5.430397723869107 5.430397723869107 4015b8ba2e5129a1
A 0.0001 -0.3 bffd 998c7e28240b7804 -0.2999 -0.2999 bfd3318fc504816f
A 0.0281012258 15.823091793198671 4002 fd9e7c9232ecbe3d 15.851193018998671 15.851193018998671 402fb3cf92465d98
A 0.03 77.01106262397818 4005 9a15062906260148 77.04106262397818 77.04106262397818 405342a0c520c4c0
A 0.46152342 2.5 4000 bd899986cf3c93af 2.96152342 2.96152342 4007b13330d9e792
A 0.64 0.1 3ffe bd70a3d70a3d70a4 0.74 0.74 3fe7ae147ae147ae
A 215 -65.29669453618177 4006 95b40bd3ae328968 149.70330546381823 149.70330546381823 4062b6817a75c651
A 26.95199729718985 1e-5 4003 d79db60077debcc0 26.95200729718985 26.95200729718985 403af3b6c00efbd8
A 70 6.678039067516295 4005 995b27efc8c92018 76.678039067516295 76.678039067516295 40532b64fdf91924
A 91 -0.3 4005 b566666666666666 90.7 90.7 4056accccccccccd
P +0.8880100 3ffe e3549f94855da273 0.88801 0.88801 3fec6a93f290abb4
P +0.9258985302032 3ffe ed07afa2a320574c 0.9258985302032 0.9258985302032 3feda0f5f454640b
P +821 4008 cd40000000000000 821 821 4089a80000000000
P -.30 bffd 999999999999999a -0.3 -0.3 bfd3333333333333
P -.6 bffe 999999999999999a -0.6 -0.6 bfe3333333333333
P -.6310374775 bffe a18bac1069af9c0f -0.6310374775 -0.6310374775 bfe43175820d35f4
P -0.0005999999999915 bff4 9d495182a0011694 -0.0005999999999915 -0.0005999999999915 bf43a92a30540023
P -0.062 bffa fdf3b645a1cac083 -0.062 -0.062 bfafbe76c8b43958
P -0.67117 bffe abd1cc100e6afcce -0.67117 -0.67117 bfe57a398201cd60
P -128.10052109193992 c006 8019bbc01270aeb1 -128.10052109193992 -128.10052109193992 c060033778024e16
P -613 c008 9940000000000000 -613 -613 c083280000000000
P 0 0000 0000000000000000 0 0 0000000000000000
P 0.611 3ffe 9c6a7ef9db22d0e5 0.611 0.611 3fe38d4fdf3b645a
P 00012 4002 c000000000000000 12 12 4028000000000000
P 244.80120627347942 4006 f4cd1bdab5f1b33a 244.80120627347942 244.80120627347942 406e99a37b56be36
P 3 4000 c000000000000000 3 3 4008000000000000
P 36.24503126532957 4004 90fae979dc5a1d26 36.24503126532957 36.24503126532957 40421f5d2f3b8b44
P 37.38013051721541 4004 958540ef2e9b6499 37.38013051721541 37.38013051721541 4042b0a81de5d36d
P 4.241 4001 87b645a1cac08312 4.241 4.241 4010f6c8b4395810
P 41.5445063370 4004 a62d9311b784de6e 41.544506337 41.544506337 4044c5b26236f09c
P 433 4007 d880000000000000 433 433 407b100000000000
P 479 4007 ef80000000000000 479 479 407df00000000000
P 49.33950550244859 4004 c55ba7549750a1bc 49.33950550244859 49.33950550244859 4048ab74ea92ea14
P 733 4008 b740000000000000 733 733 4086e80000000000
A +0X1e39FCFdc4548bBD2p8 -0X1e39FCFdc4548bBD2p8 0000 0000000000000000 0 0 0000000000000000
A +3.26265194038196653569081344e+26 -3.26265194038196653569081344e+26 0000 0000000000000000 0 0 0000000000000000
A -18224115407125455998812160 18224115407125455998812160 0000 0000000000000000 0 0 0000000000000000
A -47264342.29112766600155737 47264342.29112766600155737 0000 0000000000000000 0 0 0000000000000000
A -54387069204642621688 54387069204642621688 0000 0000000000000000 0 0 0000000000000000
A -58.09154514635440351 58.09154514635440351 0000 0000000000000000 0 0 0000000000000000
A -727704.10000000000002274 727704.10000000000002274 0000 0000000000000000 0 0 0000000000000000
A 0 -0 0000 0000000000000000 0 0 0000000000000000
A 0xa89Ae946fd3cbEB7ed1cp-16486 -0xa89Ae946fd3cbEB7ed1cp-16486 0000 0000000000000000 0 0 0000000000000000
A 0xdba5cbce3d71a612p-16385 -0xdba5cbce3d71a612p-16385 0000 0000000000000000 0 0 0000000000000000
A 1.52013715431660410391e+33 -1.52013715431660410391e+33 0000 0000000000000000 0 0 0000000000000000
A 1883.90842200000000006 -1883.90842200000000006 0000 0000000000000000 0 0 0000000000000000
A 23130568752.00108934380114079 -23130568752.00108934380114079 0000 0000000000000000 0 0 0000000000000000
A 3658690381581443576576 -3658690381581443576576 0000 0000000000000000 0 0 0000000000000000
A 421 -421 0000 0000000000000000 0 0 0000000000000000
A 57684.429E-23 0xa48eb0a43f77c3f83079p-16470 3fc2 aa411f4c18ba1157 0 5.7684429e-19 3c254823e9831742
A 711 -711 0000 0000000000000000 0 0 0000000000000000
A 719096185584.75959998369216919 -719096185584.75959998369216919 0000 0000000000000000 0 0 0000000000000000
P 0x1.0000000000000001p-16446 ERR
A 10.5 0.1 4002 a99999999999999a 10.6 10.6 4025333333333333
P 0x10000000000000003p-16447 0000 4000000000000000 0 1.6810515715560468e-4932 0000000000000000
P 0x1000000000000000300p-16455 0000 4000000000000000 0 1.6810515715560468e-4932 0000000000000000
P 0x10000000000000001p-16447 0000 4000000000000000 0 1.6810515715560468e-4932 0000000000000000
P 0x30000000000000003p-16449 0000 3000000000000000 0 1.2607886786670351e-4932 0000000000000000
P 0x1.8000000000000001p-16446 0000 0000000000000001 0 3.6451995318824746e-4951 0000000000000000
P 0x1.000000000000001p-16446 0000 0000000000000001 0 3.6451995318824746e-4951 0000000000000000
P 0.000003814697265625 3fed 8000000000000000 0.00000381469726562 3.814697265625e-06 3ed0000000000000
P 0.000011444091796875 3fee c000000000000000 0.00001144409179688 1.1444091796875e-05 3ee8000000000000
P 100000000000000005 4037 b1a2bc2ec5000280 100000000000000005 1e+17 4376345785d8a000
P 100000000000000015 4037 b1a2bc2ec5000780 100000000000000015 1.0000000000000002e+17 4376345785d8a001
P 18446744073709551615 403e ffffffffffffffff 18446744073709551615 1.8446744073709552e+19 43f0000000000000
P 18446744073709551616 403f 8000000000000000 18446744073709551616 1.8446744073709552e+19 43f0000000000000
P 18446744073709551617.5 403f 8000000000000001 18446744073709551618 1.8446744073709552e+19 43f0000000000000
P 36893488147419103235 4040 8000000000000001 36893488147419103236 3.6893488147419103e+19 4400000000000000
P 1.18973149535723176508e4932 ERR
P 1.8225997659412373013e-4951 0000 0000000000000001 0 3.6451995318824746e-4951 0000000000000000
P 1.82259976594123730126e-4951 ERR
P hex:203131 ERR
P hex:31312020 ERR
P hex:3100 ERR
A 17179869184 1.5 4021 8000000030000000 17179869185.5 17179869185.5 4210000000060000
A 17179869184 17179869184 4022 8000000000000000 34359738368 34359738368 4220000000000000
A 1 -1.1 bffb ccccccccccccccd0 -0.1 -0.1 bfb999999999999a
A 0.024390243902439025 -0.024390243902439025 0000 0000000000000000 0 0 0000000000000000
A 0.02439024390243902 -0.024390243902439025 bfc5 b870000000000000 0 -4.9991884546948806e-18 bc570e0000000000
A 10.50 0.1 4002 a99999999999999a 10.6 10.6 4025333333333333
A 10.6 -5 4001 b333333333333334 5.6 5.6 4016666666666666
A 5.0e3 2.0e2 400b a280000000000000 5200 5200 40b4500000000000
A 1.5 1.5 4000 c000000000000000 3 3 4008000000000000
A 10.5 0.25 4002 ac00000000000000 10.75 10.75 4025800000000000
A 0x1.fffffffffffffffep16383 0x1p16319 7fff 8000000000000000 inf inf 7ff0000000000000
A 0x1.fffffffffffffffep16383 0x1.fffffffffffffffep16319 7fff 8000000000000000 inf inf 7ff0000000000000
A -inf 1 ffff 8000000000000000 -inf -inf fff0000000000000
A 0x1p-16445 -0x1p-16444 8000 0000000000000001 0 -3.6451995318824746e-4951 8000000000000000
A 0x1p-16382 -0x1p-16445 0000 7fffffffffffffff 0 3.3621031431120935e-4932 0000000000000000
A 1e-4950 -1e-4950 0000 0000000000000000 0 0 0000000000000000
A -0 -0 8000 0000000000000000 0 -0 8000000000000000
A -0 0 0000 0000000000000000 0 0 0000000000000000
A 9223372036854775807 1 403e 8000000000000000 9223372036854775808 9.2233720368547758e+18 43e0000000000000
A 18446744073709551615 0.5 403f 8000000000000000 18446744073709551616 1.8446744073709552e+19 43f0000000000000
A 18446744073709551614 0.5 403e fffffffffffffffe 18446744073709551614 1.8446744073709552e+19 43f0000000000000
A 1 1e-19 3fff 8000000000000001 1 1 3ff0000000000000
A 1 -1e-20 3fff 8000000000000000 1 1 3ff0000000000000
A 1 0x1p-64 3fff 8000000000000000 1 1 3ff0000000000000
A 1 0x1.0000000000000001p-64 3fff 8000000000000000 1 1 3ff0000000000000
A 1 -0x1p-65 3fff 8000000000000000 1 1 3ff0000000000000
A 1 -0x1.0000000000000001p-65 3fff 8000000000000000 1 1 3ff0000000000000
"#;
}
