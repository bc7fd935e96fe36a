//! Intsets (Redis's intset.c): a set of integers as one sorted array, the encoding of
//! small all-integer sets (RDB type 11).
//!
//! ```text
//! <encoding u32 LE: 2, 4 or 8 bytes per member> <length u32 LE> <members, ascending, LE>
//! ```

use super::listpack::Corrupt;

/// The intset blob of `members` (ascending, distinct), in the smallest encoding that
/// holds them all, as Redis keeps it.
pub fn encode(members: &[i64]) -> Vec<u8> {
    debug_assert!(members.windows(2).all(|w| w[0] < w[1]), "intset members ascend");
    let width: usize = members
        .iter()
        .map(|&v| {
            if i16::try_from(v).is_ok() {
                2
            } else if i32::try_from(v).is_ok() {
                4
            } else {
                8
            }
        })
        .max()
        .unwrap_or(2);
    let mut out = Vec::with_capacity(8 + width * members.len());
    out.extend_from_slice(&(width as u32).to_le_bytes());
    out.extend_from_slice(&(members.len() as u32).to_le_bytes());
    for &v in members {
        out.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    out
}

/// Parses and fully validates an intset (`intsetValidateIntegrity` with deep checks):
/// a known encoding, a length matching the size, not empty, strictly ascending.
pub fn parse(blob: &[u8]) -> Result<Vec<i64>, Corrupt> {
    if blob.len() < 8 {
        return Err(Corrupt);
    }
    let width = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
    let count = u32::from_le_bytes([blob[4], blob[5], blob[6], blob[7]]) as usize;
    if !matches!(width, 2 | 4 | 8) || count.checked_mul(width).and_then(|n| n.checked_add(8)) != Some(blob.len()) {
        return Err(Corrupt);
    }
    if count == 0 {
        return Err(Corrupt);
    }
    let members: Vec<i64> = blob[8..]
        .chunks_exact(width)
        .map(|c| match width {
            2 => i64::from(i16::from_le_bytes([c[0], c[1]])),
            4 => i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            _ => i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
        })
        .collect();
    if members.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Corrupt);
    }
    Ok(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_bytes_and_round_trip() {
        // redis-server 7.0: SADD s 1 2 -5 dumps this intset.
        let blob = encode(&[-5, 1, 2]);
        assert_eq!(blob, [2, 0, 0, 0, 3, 0, 0, 0, 0xfb, 0xff, 1, 0, 2, 0]);
        assert_eq!(parse(&blob).unwrap(), vec![-5, 1, 2]);
        for set in [vec![1, 70000], vec![i64::MIN, 0, i64::MAX], vec![-32768, 32767]] {
            assert_eq!(parse(&encode(&set)).unwrap(), set);
        }
        assert_eq!(encode(&[1, 70000])[0], 4);
        assert_eq!(encode(&[0, i64::MAX])[0], 8);
    }

    #[test]
    fn rejects_corrupt() {
        assert!(parse(&encode(&[])).is_err());
        assert!(parse(&[2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 5, 0]).is_err()); // duplicate
        assert!(parse(&[2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 4, 0]).is_err()); // unsorted
        assert!(parse(&[3, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0]).is_err()); // bad width
        assert!(parse(&[2, 0, 0, 0, 2, 0, 0, 0, 5, 0]).is_err()); // short
    }
}
