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

/// CRC16-CCITT (XMODEM), the checksum Redis Cluster uses.
pub fn crc16(data: &[u8]) -> u16 {
    data.iter().fold(0u16, |crc, &b| (crc << 8) ^ CRC16[usize::from((crc >> 8) as u8 ^ b)])
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

fn memchr_byte(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

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
