//! Redis Cluster hash slots: CRC16 (XMODEM) of the key, or of its `{hashtag}`, mod 16384.
//! Keys sharing a hashtag share a slot, hence a shard.

pub const SLOT_COUNT: usize = 16384;

const fn crc16_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

static CRC16: [u16; 256] = crc16_table();

/// Slicing-by-8 tables: `SLICES[j][x]` is the CRC of byte `x` followed by `j` zero bytes.
/// The CRC is linear in XOR, so 8 input bytes fold in with 8 independent lookups instead
/// of a chain of 8 dependent ones.
const fn crc16_slices() -> [[u16; 256]; 8] {
    let base = crc16_table();
    let mut slices = [[0u16; 256]; 8];
    slices[0] = base;
    let mut j = 1;
    while j < 8 {
        let mut x = 0;
        while x < 256 {
            let prev = slices[j - 1][x];
            slices[j][x] = (prev << 8) ^ base[(prev >> 8) as usize];
            x += 1;
        }
        j += 1;
    }
    slices
}

static SLICES: [[u16; 256]; 8] = crc16_slices();

/// CRC16-CCITT (XMODEM), the checksum Redis Cluster uses.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let t = &SLICES;
        crc = t[7][usize::from((crc >> 8) as u8 ^ c[0])]
            ^ t[6][usize::from(crc as u8 ^ c[1])]
            ^ t[5][usize::from(c[2])]
            ^ t[4][usize::from(c[3])]
            ^ t[3][usize::from(c[4])]
            ^ t[2][usize::from(c[5])]
            ^ t[1][usize::from(c[6])]
            ^ t[0][usize::from(c[7])];
    }
    chunks.remainder().iter().fold(crc, |crc, &b| (crc << 8) ^ CRC16[usize::from((crc >> 8) as u8 ^ b)])
}

/// The hash slot of a key. Only the part between the first `{` and the next `}` is hashed,
/// when that part is non-empty.
pub fn key_hash_slot(key: &[u8]) -> usize {
    if let Some(open) = memchr_byte(b'{', key) {
        if let Some(close) = memchr_byte(b'}', &key[open + 1..]) {
            if close > 0 {
                return usize::from(crc16(&key[open + 1..open + 1 + close])) & (SLOT_COUNT - 1);
            }
        }
    }
    usize::from(crc16(key)) & (SLOT_COUNT - 1)
}

/// The first `needle` in `hay`. PERF: eight bytes per step (keys are short, and most
/// have no `{`, so the whole key is scanned).
fn memchr_byte(needle: u8, hay: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut chunks = hay.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ (ONES * u64::from(needle));
        // A zero byte of `w` is a match; the lowest flagged byte is the first one (flags
        // above a zero byte may be false, those below never are).
        let zero = w.wrapping_sub(ONES) & !w & HIGHS;
        if zero != 0 {
            return Some(at + zero.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    chunks.remainder().iter().position(|&b| b == needle).map(|p| at + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain byte-at-a-time CRC, as the specification writes it.
    fn crc16_bytewise(data: &[u8]) -> u16 {
        data.iter().fold(0u16, |crc, &b| (crc << 8) ^ CRC16[usize::from((crc >> 8) as u8 ^ b)])
    }

    #[test]
    fn sliced_crc_matches_the_bytewise_one() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in 0..200 {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            assert_eq!(crc16(&data), crc16_bytewise(&data), "length {len}");
        }
    }

    #[test]
    fn the_word_at_a_time_search_finds_the_first_match() {
        // Bytes around the needle's value and with the high bit set, where the word trick
        // could go wrong; the needle anywhere, once or twice, or not at all.
        let alphabet = [b'{', b'{' - 1, b'{' + 1, b'{' ^ 0x80, 0x00, 0x01, 0xff, b'a'];
        let mut state = 0x9e37_79b9u64;
        for len in 0..40 {
            for _ in 0..200 {
                let hay: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        alphabet[(state % alphabet.len() as u64) as usize]
                    })
                    .collect();
                assert_eq!(memchr_byte(b'{', &hay), hay.iter().position(|&b| b == b'{'), "{hay:?}");
            }
        }
    }

    #[test]
    fn known_slots() {
        // Reference values from Redis Cluster's specification and CLUSTER KEYSLOT.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(key_hash_slot(b"foo"), 12182);
        assert_eq!(key_hash_slot(b"somekey"), 11058);
        assert_eq!(key_hash_slot(b"{user1000}.following"), key_hash_slot(b"user1000"));
        assert_eq!(key_hash_slot(b"foo{}{bar}"), key_hash_slot(b"foo{}{bar}"));
        assert_ne!(key_hash_slot(b"foo{}{bar}"), key_hash_slot(b"bar"));
        assert_eq!(key_hash_slot(b"foo{{bar}}zap"), key_hash_slot(b"{bar"));
    }
}
