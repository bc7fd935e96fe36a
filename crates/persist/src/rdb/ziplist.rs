//! Ziplists (Redis's ziplist.c), the compact encoding of Redis before 7.0. Quince reads
//! them from old RDB files and DUMP payloads (RDB types 10, 12, 13 and 14) and never writes
//! them, like Redis 7.0.
//!
//! ```text
//! <zlbytes u32 LE> <zltail u32 LE: offset of the last entry> <zllen u16 LE, 65535 = unknown>
//! <entry>* <0xFF>
//! entry = <prevlen: 1 byte < 254, or 0xFE + u32 LE> <encoding> <data>
//! 00LLLLLL / 01LLLLLL LLLLLLLL (big endian) / 10000000 + u32 BE   string lengths
//! 0xC0 i16, 0xD0 i32, 0xE0 i64, 0xF0 i24, 0xFE i8 (little endian); 0xF1..0xFD: 0..12
//! ```

use super::listpack::{Corrupt, LpItem};

const HEADER: usize = 10;
const END: u8 = 0xff;

/// Parses and fully validates a ziplist (`ziplistValidateIntegrity` with deep checks).
pub fn parse(zl: &[u8]) -> Result<Vec<LpItem<'_>>, Corrupt> {
    let size = zl.len();
    if size < HEADER + 1 {
        return Err(Corrupt);
    }
    let bytes = u32::from_le_bytes([zl[0], zl[1], zl[2], zl[3]]) as usize;
    let tail = u32::from_le_bytes([zl[4], zl[5], zl[6], zl[7]]) as usize;
    let header_count = usize::from(u16::from_le_bytes([zl[8], zl[9]]));
    if bytes != size || zl[size - 1] != END || tail > size - 1 {
        return Err(Corrupt);
    }
    let last = size - 1; // offset of the terminator
    let mut items = Vec::with_capacity(header_count.min((size - HEADER) / 2));
    let mut p = HEADER;
    let mut prev: Option<usize> = None;
    let mut prev_raw = 0usize;
    while zl[p] != END {
        let (prevlen, prevlen_size) = if zl[p] < 254 {
            (usize::from(zl[p]), 1)
        } else {
            if p + 5 > last {
                return Err(Corrupt);
            }
            (u32::from_le_bytes([zl[p + 1], zl[p + 2], zl[p + 3], zl[p + 4]]) as usize, 5)
        };
        if prevlen != prev_raw {
            return Err(Corrupt);
        }
        let h = p + prevlen_size;
        if h >= last {
            return Err(Corrupt);
        }
        let enc = zl[h];
        let (item, header_size, len) = match enc >> 6 {
            0 => (None, 1, usize::from(enc & 0x3f)),
            1 => {
                if h + 2 > last {
                    return Err(Corrupt);
                }
                (None, 2, (usize::from(enc & 0x3f) << 8) | usize::from(zl[h + 1]))
            }
            2 => {
                if enc != 0x80 || h + 5 > last {
                    return Err(Corrupt);
                }
                (None, 5, u32::from_be_bytes([zl[h + 1], zl[h + 2], zl[h + 3], zl[h + 4]]) as usize)
            }
            _ => {
                let n = match enc {
                    0xc0 => 2,
                    0xd0 => 4,
                    0xe0 => 8,
                    0xf0 => 3,
                    0xfe => 1,
                    0xf1..=0xfd => 0,
                    _ => return Err(Corrupt),
                };
                if h + 1 + n > last {
                    return Err(Corrupt);
                }
                let d = &zl[h + 1..h + 1 + n];
                let v = match enc {
                    0xc0 => i64::from(i16::from_le_bytes([d[0], d[1]])),
                    0xd0 => i64::from(i32::from_le_bytes([d[0], d[1], d[2], d[3]])),
                    0xe0 => i64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]),
                    0xf0 => i64::from(i32::from_le_bytes([0, d[0], d[1], d[2]]) >> 8),
                    0xfe => i64::from(d[0] as i8),
                    _ => i64::from(enc & 0x0f) - 1,
                };
                (Some(LpItem::Int(v)), 1, n)
            }
        };
        let data = h + header_size;
        let next = data.checked_add(len).ok_or(Corrupt)?;
        if next > last {
            return Err(Corrupt);
        }
        items.push(item.unwrap_or(LpItem::Str(&zl[data..next])));
        prev_raw = next - p;
        prev = Some(p);
        p = next;
    }
    if p != last {
        return Err(Corrupt);
    }
    if prev.is_some_and(|prev| prev != tail) {
        return Err(Corrupt);
    }
    if header_count != 65535 && items.len() != header_count {
        return Err(Corrupt);
    }
    Ok(items)
}

/// Encodes a ziplist as Redis 6 wrote them (to build old-format fixtures in tests).
pub fn encode(items: &[&[u8]]) -> Vec<u8> {
    let mut zl = vec![0u8; HEADER];
    let mut prev_raw = 0usize;
    let mut tail = HEADER;
    for item in items {
        let start = zl.len();
        tail = start;
        if prev_raw < 254 {
            zl.push(prev_raw as u8);
        } else {
            zl.push(0xfe);
            zl.extend_from_slice(&(prev_raw as u32).to_le_bytes());
        }
        match quince_resp::parse_i64_strict(item) {
            Some(v) if (0..=12).contains(&v) => zl.push(0xf1 + v as u8),
            Some(v) if i8::try_from(v).is_ok() => zl.extend_from_slice(&[0xfe, v as u8]),
            Some(v) if i16::try_from(v).is_ok() => {
                zl.push(0xc0);
                zl.extend_from_slice(&(v as i16).to_le_bytes());
            }
            Some(v) if (-(1 << 23)..(1 << 23)).contains(&v) => {
                zl.push(0xf0);
                zl.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
            }
            Some(v) if i32::try_from(v).is_ok() => {
                zl.push(0xd0);
                zl.extend_from_slice(&(v as i32).to_le_bytes());
            }
            Some(v) => {
                zl.push(0xe0);
                zl.extend_from_slice(&v.to_le_bytes());
            }
            None => {
                let len = item.len();
                if len < 64 {
                    zl.push(len as u8);
                } else if len < 16384 {
                    zl.extend_from_slice(&[0x40 | (len >> 8) as u8, len as u8]);
                } else {
                    zl.push(0x80);
                    zl.extend_from_slice(&(len as u32).to_be_bytes());
                }
                zl.extend_from_slice(item);
            }
        }
        prev_raw = zl.len() - start;
    }
    zl.push(END);
    let total = zl.len() as u32;
    zl[0..4].copy_from_slice(&total.to_le_bytes());
    zl[4..8].copy_from_slice(&(tail as u32).to_le_bytes());
    zl[8..10].copy_from_slice(&(items.len().min(65535) as u16).to_le_bytes());
    zl
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let big = vec![b'q'; 300];
        let vals: Vec<&[u8]> = vec![
            b"a",
            b"0",
            b"12",
            b"13",
            b"-1",
            b"127",
            b"-128",
            b"1000",
            b"-70000",
            b"8388608",
            b"3000000000",
            &big,
            b"",
        ];
        let zl = encode(&vals);
        let items = parse(&zl).unwrap();
        let back: Vec<Vec<u8>> = items.iter().map(|i| i.to_bytes().into_owned()).collect();
        let want: Vec<Vec<u8>> = vals.iter().map(|v| v.to_vec()).collect();
        assert_eq!(back, want);
        assert_eq!(parse(&encode(&[])).unwrap(), vec![]);
    }

    #[test]
    fn corruption_never_panics() {
        let zl = encode(&[b"hello", b"5", b"-300", b"world"]);
        for i in 0..zl.len() {
            for flip in [1u8, 0x40, 0xff] {
                let mut bad = zl.clone();
                bad[i] ^= flip;
                let _ = parse(&bad);
            }
            assert!(parse(&zl[..i]).is_err());
        }
    }
}
