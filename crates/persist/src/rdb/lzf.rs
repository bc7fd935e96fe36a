//! LZF, the compression RDB strings use (`RDB_ENC_LZF`).
//!
//! The compressed format (liblzf 3.x, as in Redis's lzf_c.c / lzf_d.c):
//!
//! ```text
//! 000LLLLL <L+1 bytes>          literal run of 1..32 bytes
//! LLLooooo oooooooo             back reference of L+2 (3..8) bytes, offset o+1 (1..8192)
//! 111ooooo LLLLLLLL oooooooo    back reference of L+9 bytes, offset o+1
//! ```
//!
//! The compressor follows liblzf's algorithm with Redis's build settings (HLOG 16,
//! VERY_FAST, a zeroed hash table) step for step, so it emits the same bytes as
//! redis-server: that is what makes quince's DUMP payloads byte-identical to Redis's.

const HLOG: u32 = 16;
const HSIZE: usize = 1 << HLOG;
const MAX_LIT: usize = 1 << 5;
const MAX_OFF: usize = 1 << 13;
const MAX_REF: usize = (1 << 8) + (1 << 3);

#[inline]
fn first(data: &[u8], i: usize) -> u32 {
    (u32::from(data[i]) << 8) | u32::from(data[i + 1])
}

#[inline]
fn next(v: u32, data: &[u8], i: usize) -> u32 {
    (v << 8) | u32::from(data[i + 2])
}

#[inline]
fn idx(h: u32) -> usize {
    // VERY_FAST's hash; the wrapping arithmetic is the C unsigned arithmetic.
    ((h >> (3 * 8 - HLOG)).wrapping_sub(h.wrapping_mul(5)) as usize) & (HSIZE - 1)
}

/// The hash table: positions + 1 (0: an empty slot), like liblzf's zeroed pointer table.
/// Kept per thread and cleared slot by slot after use, because zeroing 256 KiB for every
/// short string would dominate the cost of a snapshot.
struct Table {
    slots: Vec<u32>,
    touched: Vec<u32>,
}

impl Table {
    fn set(&mut self, slot: usize, value: u32) {
        if self.slots[slot] == 0 {
            self.touched.push(slot as u32);
        }
        self.slots[slot] = value;
    }

    fn clear(&mut self) {
        for &slot in &self.touched {
            self.slots[slot as usize] = 0;
        }
        self.touched.clear();
    }
}

thread_local! {
    static TABLE: std::cell::RefCell<Table> =
        std::cell::RefCell::new(Table { slots: vec![0; HSIZE], touched: Vec::new() });
}

/// Compresses `input` into at most `out_len` bytes, as `lzf_compress` does; None when the
/// output would not fit (the caller then stores the data verbatim).
pub fn compress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    if input.is_empty() || out_len == 0 {
        return None;
    }
    TABLE.with(|table| {
        let mut table = table.borrow_mut();
        let result = compress_with(&mut table, input, out_len);
        table.clear();
        result
    })
}

fn compress_with(htab: &mut Table, input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let in_len = input.len();
    let mut out = vec![0u8; out_len];
    let mut op = 1usize; // output position; out[op - lit - 1] holds the run header
    let mut lit = 0usize;
    let mut ip = 0usize;

    if in_len >= 2 {
        let mut hval = first(input, ip);
        while in_len >= 3 && ip < in_len - 2 {
            hval = next(hval, input, ip);
            let slot = idx(hval);
            let reference = htab.slots[slot] as usize; // position + 1, or 0
            htab.set(slot, (ip + 1) as u32);

            // `ref > in_data`: a match never starts at position 0.
            let candidate = (reference > 1).then(|| reference - 1).and_then(|r| Some((r, ip.checked_sub(r + 1)?)));
            let found = candidate.filter(|&(r, off)| {
                off < MAX_OFF && input[r + 2] == input[ip + 2] && input[r] == input[ip] && input[r + 1] == input[ip + 1]
            });
            if let Some((r, off)) = found {
                let mut len = 2usize;
                let maxlen = (in_len - ip - len).min(MAX_REF);
                if op + 3 + 1 >= out_len && op - usize::from(lit == 0) + 3 + 1 >= out_len {
                    return None;
                }
                out[op - lit - 1] = (lit as u8).wrapping_sub(1); // stop run
                op -= usize::from(lit == 0); // undo an empty run
                                             // liblzf first compares 16 bytes unrolled when `maxlen > 16` (which may
                                             // look up to 2 bytes past `maxlen`), then bytewise up to `maxlen`.
                let mut mismatch = false;
                if maxlen > 16 {
                    for _ in 0..16 {
                        len += 1;
                        if input[r + len] != input[ip + len] {
                            mismatch = true;
                            break;
                        }
                    }
                }
                if !mismatch {
                    loop {
                        len += 1;
                        if !(len < maxlen && input[r + len] == input[ip + len]) {
                            break;
                        }
                    }
                }
                len -= 2; // now the match length - 1
                ip += 1;
                if len < 7 {
                    out[op] = ((off >> 8) + (len << 5)) as u8;
                    op += 1;
                } else {
                    out[op] = ((off >> 8) + (7 << 5)) as u8;
                    out[op + 1] = (len - 7) as u8;
                    op += 2;
                }
                out[op] = off as u8;
                op += 1;
                lit = 0;
                op += 1; // start a run
                ip += len + 1;
                if ip >= in_len - 2 {
                    break;
                }
                // VERY_FAST: rehash the last two positions of the match.
                ip -= 2;
                hval = first(input, ip);
                hval = next(hval, input, ip);
                htab.set(idx(hval), (ip + 1) as u32);
                ip += 1;
                hval = next(hval, input, ip);
                htab.set(idx(hval), (ip + 1) as u32);
                ip += 1;
            } else {
                if op >= out_len {
                    return None;
                }
                lit += 1;
                out[op] = input[ip];
                op += 1;
                ip += 1;
                if lit == MAX_LIT {
                    out[op - lit - 1] = (lit - 1) as u8;
                    lit = 0;
                    op += 1;
                }
            }
        }
    }
    if op + 3 > out_len {
        return None;
    }
    while ip < in_len {
        lit += 1;
        out[op] = input[ip];
        op += 1;
        ip += 1;
        if lit == MAX_LIT {
            out[op - lit - 1] = (lit - 1) as u8;
            lit = 0;
            op += 1;
        }
    }
    out[op - lit - 1] = (lit as u8).wrapping_sub(1);
    op -= usize::from(lit == 0);
    out.truncate(op);
    Some(out)
}

/// Decompresses `input`, which must expand to exactly `out_len` bytes; None when the data
/// is corrupt (a reference before the start, a run past either end, a wrong length).
pub fn decompress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(out_len);
    let mut ip = 0usize;
    while ip < input.len() {
        let ctrl = usize::from(input[ip]);
        ip += 1;
        if ctrl < (1 << 5) {
            let run = ctrl + 1;
            if out.len() + run > out_len || ip + run > input.len() {
                return None;
            }
            out.extend_from_slice(&input[ip..ip + run]);
            ip += run;
        } else {
            let mut len = ctrl >> 5;
            let back = (ctrl & 0x1f) << 8;
            if ip >= input.len() {
                return None;
            }
            if len == 7 {
                len += usize::from(input[ip]);
                ip += 1;
                if ip >= input.len() {
                    return None;
                }
            }
            let back = back + usize::from(input[ip]) + 1;
            ip += 1;
            len += 2;
            if out.len() + len > out_len || back > out.len() {
                return None;
            }
            let start = out.len() - back;
            // Overlapping copies repeat the pattern, byte by byte.
            for k in 0..len {
                let b = out[start + k];
                out.push(b);
            }
        }
    }
    (out.len() == out_len).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(data: &[u8]) {
        if let Some(c) = compress(data, data.len().saturating_sub(4).max(1)) {
            assert!(c.len() < data.len());
            assert_eq!(decompress(&c, data.len()).as_deref(), Some(data));
        }
        let c = compress(data, data.len() + 64).expect("room to spare");
        assert_eq!(decompress(&c, data.len()).as_deref(), Some(data));
    }

    #[test]
    fn round_trips() {
        round_trip(b"a");
        round_trip(b"ab");
        round_trip(b"abc");
        round_trip(&[b'a'; 100]);
        round_trip(&b"hello world ".repeat(50));
        let noise: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        round_trip(&noise);
        let mixed: Vec<u8> = (0..20000u32).map(|i| if i % 300 < 200 { b'x' } else { (i % 7) as u8 }).collect();
        round_trip(&mixed);
    }

    #[test]
    fn known_redis_bytes() {
        // The LZF blob in redis-server 7.0's DUMP of a string of 53 'a's.
        let data = [b'a'; 53];
        let c = compress(&data, 49).unwrap();
        assert_eq!(c, [0x01, b'a', b'a', 0xe0, 0x28, 0x00, 0x01, b'a', b'a']);
        assert_eq!(decompress(&c, 53).as_deref(), Some(&data[..]));
    }

    #[test]
    fn corrupt_input_is_rejected() {
        assert!(decompress(&[0x20, 0x00], 10).is_none()); // reference before start
        assert!(decompress(&[0x05, b'a'], 6).is_none()); // literal past the input
        assert!(decompress(&[0x00, b'a'], 2).is_none()); // too short
        assert!(decompress(&[0xe0], 10).is_none()); // truncated reference
    }
}
