//! CRC-64 as Redis computes it (crc64.c): the Jones polynomial 0xad93d23594c935a9,
//! reflected input and output, initial value 0, no final xor. RDB files end with it and
//! DUMP payloads carry it.

/// The Jones polynomial, bit-reflected (for the LSB-first table algorithm).
const POLY_REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5;

/// Slice-by-8 tables: `TABLES[0]` is the classic byte table, `TABLES[k]` advances k more
/// zero bytes.
static TABLES: [[u64; 256]; 8] = build_tables();

const fn build_tables() -> [[u64; 256]; 8] {
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ POLY_REFLECTED } else { crc >> 1 };
            bit += 1;
        }
        t[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
}

/// Continues the checksum `crc` over `data` (start with 0).
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let v = crc ^ u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        crc = TABLES[7][(v & 0xff) as usize]
            ^ TABLES[6][((v >> 8) & 0xff) as usize]
            ^ TABLES[5][((v >> 16) & 0xff) as usize]
            ^ TABLES[4][((v >> 24) & 0xff) as usize]
            ^ TABLES[3][((v >> 32) & 0xff) as usize]
            ^ TABLES[2][((v >> 40) & 0xff) as usize]
            ^ TABLES[1][((v >> 48) & 0xff) as usize]
            ^ TABLES[0][(v >> 56) as usize];
    }
    for &b in chunks.remainder() {
        crc = TABLES[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_test_vectors() {
        // The vectors of crc64.c's own test.
        assert_eq!(crc64(0, b"123456789"), 0xe9c6_d914_c4b8_d9ca);
        // `sizeof(li)` in the C test counts the terminating NUL.
        let li = b"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed \
do eiusmod tempor incididunt ut labore et dolore magna \
aliqua. Ut enim ad minim veniam, quis nostrud exercitation \
ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis \
aute irure dolor in reprehenderit in voluptate velit esse \
cillum dolore eu fugiat nulla pariatur. Excepteur sint \
occaecat cupidatat non proident, sunt in culpa qui officia \
deserunt mollit anim id est laborum.\0";
        assert_eq!(crc64(0, li), 0xc779_4709_e696_83b3);
    }

    #[test]
    fn incremental_equals_whole() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 31 % 251) as u8).collect();
        let whole = crc64(0, &data);
        for split in [0, 1, 7, 8, 9, 500, 999, 1000] {
            assert_eq!(crc64(crc64(0, &data[..split]), &data[split..]), whole);
        }
        // Against the bytewise definition.
        let mut slow = 0u64;
        for &b in &data {
            slow = TABLES[0][((slow ^ u64::from(b)) & 0xff) as usize] ^ (slow >> 8);
        }
        assert_eq!(slow, whole);
    }
}
