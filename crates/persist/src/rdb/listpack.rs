//! Listpacks (Redis's listpack.c): the compact sequence small hashes, sorted sets, list
//! nodes and stream nodes are stored as.
//!
//! ```text
//! <total-bytes u32 LE> <num-elements u16 LE, 65535 = unknown> <entry>* <0xFF>
//! entry = <encoding + data> <backlen: length of encoding + data, 1..5 bytes>
//! 0xxxxxxx                 7-bit unsigned integer
//! 10LLLLLL <data>          string of up to 63 bytes
//! 110xxxxx xxxxxxxx        13-bit signed integer
//! 1110LLLL LLLLLLLL <data> string of up to 4095 bytes
//! 0xF0 <len u32 LE> <data> longer string
//! 0xF1/0xF2/0xF3/0xF4      16/24/32/64-bit signed integer, little endian
//! ```
//!
//! The backlen is big-endian base 128 with the continuation bit on every byte but the
//! first, so a parser walking backwards reads it from the right.

use std::borrow::Cow;

const HDR_SIZE: usize = 6;
const EOF: u8 = 0xff;
/// `LP_HDR_NUMELE_UNKNOWN`: the element count no longer fits the header.
const NUMELE_UNKNOWN: usize = 65535;

/// Builds a listpack by appending, as `lpAppend` / `lpAppendInteger` do.
#[derive(Debug, Clone)]
pub struct ListpackBuilder {
    buf: Vec<u8>,
    count: usize,
}

impl Default for ListpackBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ListpackBuilder {
    pub fn new() -> Self {
        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(&[0; HDR_SIZE]);
        Self { buf, count: 0 }
    }

    /// Appends a string, stored as an integer when it is one in canonical form.
    pub fn push_str(&mut self, s: &[u8]) {
        match quince_resp::parse_i64_strict(s) {
            Some(v) => self.push_int(v),
            None => self.push_raw_str(s),
        }
    }

    fn push_raw_str(&mut self, s: &[u8]) {
        let start = self.buf.len();
        let len = s.len();
        if len < 64 {
            self.buf.push(0x80 | len as u8);
        } else if len < 4096 {
            self.buf.push(0xe0 | (len >> 8) as u8);
            self.buf.push(len as u8);
        } else {
            self.buf.push(0xf0);
            self.buf.extend_from_slice(&(len as u32).to_le_bytes());
        }
        self.buf.extend_from_slice(s);
        self.finish_entry(start);
    }

    /// Appends an integer in the smallest encoding that holds it.
    pub fn push_int(&mut self, v: i64) {
        let start = self.buf.len();
        if (0..=127).contains(&v) {
            self.buf.push(v as u8);
        } else if (-4096..=4095).contains(&v) {
            let u = if v < 0 { (1i64 << 13) + v } else { v } as u16;
            self.buf.push(0xc0 | (u >> 8) as u8);
            self.buf.push(u as u8);
        } else if (-32768..=32767).contains(&v) {
            self.buf.push(0xf1);
            self.buf.extend_from_slice(&(v as i16).to_le_bytes());
        } else if (-8_388_608..=8_388_607).contains(&v) {
            self.buf.push(0xf2);
            self.buf.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
        } else if (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&v) {
            self.buf.push(0xf3);
            self.buf.extend_from_slice(&(v as i32).to_le_bytes());
        } else {
            self.buf.push(0xf4);
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
        self.finish_entry(start);
    }

    fn finish_entry(&mut self, start: usize) {
        let l = (self.buf.len() - start) as u64;
        encode_backlen(&mut self.buf, l);
        self.count += 1;
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The listpack's total size if finished now (`lpBytes`).
    pub fn total_bytes(&self) -> usize {
        self.buf.len() + 1
    }

    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(EOF);
        let total = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&total.to_le_bytes());
        let numele = self.count.min(NUMELE_UNKNOWN) as u16;
        self.buf[4..6].copy_from_slice(&numele.to_le_bytes());
        self.buf
    }
}

fn encode_backlen(buf: &mut Vec<u8>, l: u64) {
    if l <= 127 {
        buf.push(l as u8);
    } else if l < 16383 {
        buf.extend_from_slice(&[(l >> 7) as u8, (l & 127) as u8 | 128]);
    } else if l < 2_097_151 {
        buf.extend_from_slice(&[(l >> 14) as u8, ((l >> 7) & 127) as u8 | 128, (l & 127) as u8 | 128]);
    } else if l < 268_435_455 {
        buf.extend_from_slice(&[
            (l >> 21) as u8,
            ((l >> 14) & 127) as u8 | 128,
            ((l >> 7) & 127) as u8 | 128,
            (l & 127) as u8 | 128,
        ]);
    } else {
        buf.extend_from_slice(&[
            (l >> 28) as u8,
            ((l >> 21) & 127) as u8 | 128,
            ((l >> 14) & 127) as u8 | 128,
            ((l >> 7) & 127) as u8 | 128,
            (l & 127) as u8 | 128,
        ]);
    }
}

fn backlen_size(l: usize) -> usize {
    match l {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

/// One listpack element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LpItem<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl<'a> LpItem<'a> {
    /// The element as a string (integers in decimal).
    pub fn to_bytes(self) -> Cow<'a, [u8]> {
        match self {
            LpItem::Int(v) => Cow::Owned(v.to_string().into_bytes()),
            LpItem::Str(s) => Cow::Borrowed(s),
        }
    }

    pub fn as_int(self) -> Option<i64> {
        match self {
            LpItem::Int(v) => Some(v),
            LpItem::Str(s) => quince_resp::parse_i64_strict(s),
        }
    }
}

/// Why a listpack was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt;

/// Parses and fully validates a listpack (`lpValidateIntegrity` with deep checks): the
/// header's size and count, each entry's encoding and backlen, the terminator.
pub fn parse(lp: &[u8]) -> Result<Vec<LpItem<'_>>, Corrupt> {
    if lp.len() < HDR_SIZE + 1 {
        return Err(Corrupt);
    }
    let total = u32::from_le_bytes([lp[0], lp[1], lp[2], lp[3]]) as usize;
    let numele = usize::from(u16::from_le_bytes([lp[4], lp[5]]));
    if total != lp.len() || lp[lp.len() - 1] != EOF {
        return Err(Corrupt);
    }
    let end = lp.len() - 1;
    // Every entry takes at least 2 bytes, which bounds the preallocation.
    let mut items = Vec::with_capacity(numele.min((end - HDR_SIZE) / 2));
    let mut p = HDR_SIZE;
    while p < end {
        let (item, size) = entry_at(&lp[..end], p).ok_or(Corrupt)?;
        let back_size = backlen_size(size);
        let back_end = p + size + back_size;
        if back_end > end || decode_backlen(&lp[p + size..back_end]) != Some(size) {
            return Err(Corrupt);
        }
        items.push(item);
        p = back_end;
    }
    if p != end || (numele != NUMELE_UNKNOWN && numele != items.len()) {
        return Err(Corrupt);
    }
    Ok(items)
}

/// The element at `p` and the size of its encoding + data, within `data`.
fn entry_at(data: &[u8], p: usize) -> Option<(LpItem<'_>, usize)> {
    let b = data[p];
    let need = |n: usize| if p + n <= data.len() { Some(&data[p..p + n]) } else { None };
    let signed = |u: u64, bits: u32| -> i64 {
        let shift = 64 - bits;
        ((u << shift) as i64) >> shift
    };
    if b & 0x80 == 0 {
        return Some((LpItem::Int(i64::from(b & 0x7f)), 1));
    }
    if b & 0xc0 == 0x80 {
        let len = usize::from(b & 0x3f);
        let e = need(1 + len)?;
        return Some((LpItem::Str(&e[1..]), 1 + len));
    }
    if b & 0xe0 == 0xc0 {
        let e = need(2)?;
        let u = (u64::from(e[0] & 0x1f) << 8) | u64::from(e[1]);
        return Some((LpItem::Int(signed(u, 13)), 2));
    }
    if b & 0xf0 == 0xe0 {
        let h = need(2)?;
        let len = (usize::from(h[0] & 0x0f) << 8) | usize::from(h[1]);
        let e = need(2 + len)?;
        return Some((LpItem::Str(&e[2..]), 2 + len));
    }
    let int = |n: usize| -> Option<(LpItem<'_>, usize)> {
        let e = need(1 + n)?;
        let mut u = 0u64;
        for (i, &byte) in e[1..].iter().enumerate() {
            u |= u64::from(byte) << (8 * i);
        }
        Some((LpItem::Int(signed(u, (n * 8) as u32)), 1 + n))
    };
    match b {
        0xf0 => {
            let h = need(5)?;
            let len = u32::from_le_bytes([h[1], h[2], h[3], h[4]]) as usize;
            let e = need(5usize.checked_add(len)?)?;
            Some((LpItem::Str(&e[5..]), 5 + len))
        }
        0xf1 => int(2),
        0xf2 => int(3),
        0xf3 => int(4),
        0xf4 => int(8),
        _ => None,
    }
}

fn decode_backlen(bytes: &[u8]) -> Option<usize> {
    // Read from the right: the last byte holds the lowest 7 bits.
    let mut val = 0usize;
    for (i, &b) in bytes.iter().rev().enumerate() {
        val |= usize::from(b & 127) << (7 * i);
        let last = i + 1 == bytes.len();
        if (b & 128 == 0) != last {
            return None;
        }
    }
    Some(val)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_round_trip() {
        let values: Vec<Vec<u8>> = vec![
            b"0".to_vec(),
            b"127".to_vec(),
            b"128".to_vec(),
            b"-1".to_vec(),
            b"-4096".to_vec(),
            b"4095".to_vec(),
            b"4096".to_vec(),
            b"-32768".to_vec(),
            b"32768".to_vec(),
            b"-8388608".to_vec(),
            b"8388608".to_vec(),
            b"2147483647".to_vec(),
            b"-2147483649".to_vec(),
            b"9223372036854775807".to_vec(),
            b"-9223372036854775808".to_vec(),
            b"".to_vec(),
            b"-0".to_vec(),
            b"007".to_vec(),
            vec![b'x'; 63],
            vec![b'y'; 64],
            vec![b'z'; 4095],
            vec![b'w'; 4096],
            vec![b'v'; 20000],
        ];
        let mut b = ListpackBuilder::new();
        for v in &values {
            b.push_str(v);
        }
        let total = b.total_bytes();
        let lp = b.finish();
        assert_eq!(lp.len(), total);
        let items = parse(&lp).unwrap();
        let back: Vec<Vec<u8>> = items.iter().map(|i| i.to_bytes().into_owned()).collect();
        assert_eq!(back, values);
        assert_eq!(items[1], LpItem::Int(127));
        assert_eq!(items[16], LpItem::Str(b"-0"));
    }

    #[test]
    fn known_bytes() {
        // redis-server 7.0: HSET h a 1 dumps this listpack.
        let mut b = ListpackBuilder::new();
        b.push_str(b"a");
        b.push_str(b"1");
        assert_eq!(b.finish(), [0x0c, 0, 0, 0, 2, 0, 0x81, b'a', 2, 1, 1, 0xff]);
    }

    #[test]
    fn many_elements_use_unknown_count() {
        let mut b = ListpackBuilder::new();
        for i in 0..70000 {
            b.push_int(i);
        }
        let lp = b.finish();
        assert_eq!(&lp[4..6], &[0xff, 0xff]);
        assert_eq!(parse(&lp).unwrap().len(), 70000);
    }

    #[test]
    fn corruption_is_detected() {
        let mut b = ListpackBuilder::new();
        b.push_str(b"hello");
        b.push_int(1000);
        let lp = b.finish();
        assert!(parse(&lp).is_ok());
        for i in 0..lp.len() {
            for flip in [1u8, 0x80, 0xff] {
                let mut bad = lp.clone();
                bad[i] ^= flip;
                let _ = parse(&bad); // never panics
            }
            let _ = parse(&lp[..i]);
        }
        let mut bad = lp.clone();
        bad[4] = 3; // wrong count
        assert!(parse(&bad).is_err());
    }
}
