//! Zipmaps (Redis's zipmap.c), the small-hash encoding of Redis 2.4 and older (RDB type
//! 9). Read only: Redis 7.0 converts them to listpacks when loading.
//!
//! ```text
//! <count: 1 byte, 254 = unknown> (<len> <field> <len> <free: 1 byte> <value> <free bytes>)* <0xFF>
//! len = 1 byte below 254, else 0xFE + u32 (host order, little endian in practice)
//! ```

use super::listpack::Corrupt;

const BIGLEN: u8 = 254;
const END: u8 = 0xff;

type Pair<'a> = (&'a [u8], &'a [u8]);

/// Parses and fully validates a zipmap (`zipmapValidateIntegrity` with deep checks):
/// entries inside the buffer, at least one entry, a correct count when it is known.
pub fn parse(zm: &[u8]) -> Result<Vec<Pair<'_>>, Corrupt> {
    let size = zm.len();
    if size < 2 || zm[size - 1] != END {
        return Err(Corrupt);
    }
    // Valid positions for a cursor: 2..=size-1 (`OUT_OF_RANGE` in the C code).
    let in_range = |p: usize| p >= 2 && p < size;
    let read_len = |p: usize| -> Option<(usize, usize)> {
        if zm[p] < BIGLEN {
            Some((usize::from(zm[p]), 1))
        } else if p + 5 <= size {
            Some((u32::from_le_bytes([zm[p + 1], zm[p + 2], zm[p + 3], zm[p + 4]]) as usize, 5))
        } else {
            None
        }
    };
    let mut pairs = Vec::new();
    let mut p = 1usize;
    while zm[p] != END {
        let (flen, s) = read_len(p).ok_or(Corrupt)?;
        if !in_range(p + s) {
            return Err(Corrupt);
        }
        let field_at = p + s;
        p = field_at.checked_add(flen).ok_or(Corrupt)?;
        if !in_range(p) {
            return Err(Corrupt);
        }
        let (vlen, s) = read_len(p).ok_or(Corrupt)?;
        if !in_range(p + s) {
            return Err(Corrupt);
        }
        let free = usize::from(zm[p + s]);
        let value_at = p + s + 1;
        p = value_at.checked_add(vlen).and_then(|v| v.checked_add(free)).ok_or(Corrupt)?;
        if !in_range(p) || value_at + vlen > size - 1 {
            return Err(Corrupt);
        }
        pairs.push((&zm[field_at..field_at + flen], &zm[value_at..value_at + vlen]));
    }
    if pairs.is_empty() || (zm[0] != BIGLEN && usize::from(zm[0]) != pairs.len()) {
        return Err(Corrupt);
    }
    Ok(pairs)
}

/// Encodes a zipmap as Redis 2.4 wrote them (to build old-format fixtures in tests).
pub fn encode(pairs: &[Pair<'_>]) -> Vec<u8> {
    let mut zm = vec![if pairs.len() < usize::from(BIGLEN) { pairs.len() as u8 } else { BIGLEN }];
    let put_len = |zm: &mut Vec<u8>, len: usize| {
        if len < usize::from(BIGLEN) {
            zm.push(len as u8);
        } else {
            zm.push(BIGLEN);
            zm.extend_from_slice(&(len as u32).to_le_bytes());
        }
    };
    for (f, v) in pairs {
        put_len(&mut zm, f.len());
        zm.extend_from_slice(f);
        put_len(&mut zm, v.len());
        zm.push(0);
        zm.extend_from_slice(v);
    }
    zm.push(END);
    zm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corruption() {
        let long = vec![b'v'; 300];
        let pairs: Vec<Pair<'_>> = vec![(b"a", b"1"), (b"field", &long), (b"", b"")];
        let zm = encode(&pairs);
        assert_eq!(parse(&zm).unwrap(), pairs);
        for i in 0..zm.len() {
            let mut bad = zm.clone();
            bad[i] ^= 0x55;
            let _ = parse(&bad);
            let _ = parse(&zm[..i]);
        }
        assert!(parse(&[0, END]).is_err());
    }
}
