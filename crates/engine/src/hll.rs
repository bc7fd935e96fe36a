//! HyperLogLog values (PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST), byte-compatible with Redis 7.0.
//!
//! A HyperLogLog is an ordinary string value, so the exact bytes matter: they travel through GET,
//! DUMP/RESTORE, replication and RDB files. This module reproduces the Redis 7.0 layout and the
//! Redis 7.0 update algorithm step by step, so that every command sequence leaves the same bytes
//! Redis would leave.
//!
//! Layout (all values):
//!
//! ```text
//! +------+---+-----+-----------------------------+-----------------+
//! | HYLL | E | 000 | cached cardinality (8B, LE) | registers / ops |
//! +------+---+-----+-----------------------------+-----------------+
//! ```
//!
//! * `E` is the encoding: 0 dense, 1 sparse.
//! * The cached cardinality is valid while the most significant bit of its last byte is clear.
//! * Dense: 16384 registers of 6 bits, packed from the least significant bit of each byte upward.
//! * Sparse: run-length opcodes covering the 16384 registers, in order:
//!   `00xxxxxx` ZERO (1..=64 zero registers), `01xxxxxx yyyyyyyy` XZERO (1..=16384 zero registers),
//!   `1vvvvvxx` VAL (1..=4 registers set to 1..=32).
//!
//! Elements are hashed with MurmurHash64A (seed `0xadc83b19`); the low 14 bits select the register
//! and the position of the first set bit in the remaining 50 bits (plus one) is the candidate value.
//! Cardinalities come from Otmar Ertl's improved raw estimator (the one Redis 7.0 uses).
//!
//! Redis works on sds strings, which always carry a NUL byte after their content; its sparse code
//! can read that byte (an XZERO opcode cut in half at the very end) and, on such malformed input,
//! even write it. [`Sds`] models that byte for the duration of one command so that malformed
//! values behave as in Redis too. Nothing in this module panics on any input bytes.

use std::fmt::{self, Write as _};

/// Default of the `hll-sparse-max-bytes` config: the largest sparse value (header included)
/// before the value is promoted to the dense encoding.
pub const HLL_SPARSE_MAX_BYTES_DEFAULT: usize = 3000;

/// Bits of the hash that select the register.
const HLL_P: u32 = 14;
/// Bits of the hash left for the run of zeroes.
const HLL_Q: usize = 64 - HLL_P as usize;
/// Number of registers.
const HLL_REGISTERS: usize = 1 << HLL_P;
/// Bits per dense register.
const HLL_BITS: usize = 6;
/// Largest value a dense register holds.
const HLL_REGISTER_MAX: u32 = (1 << HLL_BITS) - 1;
/// Header size: magic, encoding, three unused bytes, cached cardinality.
const HLL_HDR_SIZE: usize = 16;
/// Bytes of the dense register area.
const HLL_DENSE_REGS_SIZE: usize = (HLL_REGISTERS * HLL_BITS).div_ceil(8);
/// Exact length of every dense value.
const HLL_DENSE_SIZE: usize = HLL_HDR_SIZE + HLL_DENSE_REGS_SIZE;
/// Encoding byte of dense values.
const HLL_DENSE: u8 = 0;
/// Encoding byte of sparse values.
const HLL_SPARSE: u8 = 1;
/// Offset of the encoding byte.
const ENCODING_OFFSET: usize = 4;
/// Offset of the cached cardinality.
const CARD_OFFSET: usize = 8;
/// Offset of the cached cardinality byte holding the "cache invalid" bit.
const CARD_FLAG_OFFSET: usize = CARD_OFFSET + 7;
/// The "cache invalid" bit.
const CARD_INVALID_BIT: u8 = 0x80;
/// Magic prefix of every HLL value.
const HLL_MAGIC: &[u8; 4] = b"HYLL";
/// Largest register value a sparse VAL opcode can hold.
const SPARSE_VAL_MAX_VALUE: u8 = 32;
/// Longest run a sparse VAL opcode can hold.
const SPARSE_VAL_MAX_LEN: usize = 4;
/// Longest run a sparse ZERO opcode can hold.
const SPARSE_ZERO_MAX_LEN: usize = 64;
/// Longest run a sparse XZERO opcode can hold.
const SPARSE_XZERO_MAX_LEN: usize = 16384;
/// `0.5 / ln 2`, the asymptotic alpha of the estimator.
const HLL_ALPHA_INF: f64 = 0.721_347_520_444_481_7;
/// Seed Redis uses for MurmurHash64A.
const HASH_SEED: u64 = 0xadc8_3b19;
/// 2^63: the first magnitude a C `long long` cannot hold.
const I64_LIMIT: f64 = 9_223_372_036_854_775_808.0;
/// Redis's `hllSparseSet` merges adjacent VAL opcodes over at most this many opcodes.
const MERGE_SCAN_OPCODES: usize = 5;

/// Why an HLL command failed on a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HllError {
    /// The string is not an HLL at all (bad length, magic or encoding byte).
    NotHll,
    /// The value looks like an HLL but its sparse opcodes do not describe exactly 16384 registers.
    Corrupted,
}

impl HllError {
    /// The exact error line Redis replies with, without the leading `-`.
    pub fn message(self) -> &'static str {
        match self {
            HllError::NotHll => "WRONGTYPE Key is not a valid HyperLogLog string value.",
            HllError::Corrupted => "INVALIDOBJ Corrupted HLL object detected",
        }
    }
}

impl fmt::Display for HllError {
    /// Shows the Redis error line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for HllError {}

// ------------------------------------------------------------------------------------------------
// Hashing
// ------------------------------------------------------------------------------------------------

/// MurmurHash64A as Redis uses it (little-endian word reads on every platform).
fn murmurhash64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    // Redis passes the length as a C `int`; element sizes are far below 2^31.
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut chunks = key.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mut k = u64::from_le_bytes(word);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// Register index and candidate register value (1..=51) of an element.
fn pat_len(element: &[u8]) -> (usize, u8) {
    let hash = murmurhash64a(element, HASH_SEED);
    let index = (hash & (HLL_REGISTERS as u64 - 1)) as usize;
    // The sentinel bit bounds the count at Q + 1.
    let rest = (hash >> HLL_P) | (1u64 << HLL_Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

// ------------------------------------------------------------------------------------------------
// Dense registers
// ------------------------------------------------------------------------------------------------

/// Reads dense register `i` from the register area (a missing byte after the area reads as the
/// NUL terminator, i.e. zero).
fn dense_get(regs: &[u8], i: usize) -> u8 {
    let byte = i * HLL_BITS / 8;
    let fb = (i * HLL_BITS) & 7;
    let b0 = u32::from(regs.get(byte).copied().unwrap_or(0));
    let b1 = u32::from(regs.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> fb) | (b1 << (8 - fb))) & HLL_REGISTER_MAX) as u8
}

/// Writes dense register `i` (bits beyond the area are dropped, exactly like Redis's macro that
/// touches the terminator with a no-op mask).
fn dense_set(regs: &mut [u8], i: usize, val: u8) {
    let byte = i * HLL_BITS / 8;
    let fb = (i * HLL_BITS) & 7;
    let fb8 = 8 - fb;
    let v = u32::from(val);
    if let Some(b) = regs.get_mut(byte) {
        *b &= !((HLL_REGISTER_MAX << fb) as u8);
        *b |= (v << fb) as u8;
    }
    if let Some(b) = regs.get_mut(byte + 1) {
        *b &= !((HLL_REGISTER_MAX >> fb8) as u8);
        *b |= (v >> fb8) as u8;
    }
}

/// Raises dense register `i` to `val` if it is lower; says whether it changed.
fn dense_raise(regs: &mut [u8], i: usize, val: u8) -> bool {
    if val > dense_get(regs, i) {
        dense_set(regs, i, val);
        true
    } else {
        false
    }
}

/// Histogram of register values of a dense register area.
fn dense_histogram(regs: &[u8]) -> [u32; 64] {
    let mut histo = [0u32; 64];
    for i in 0..HLL_REGISTERS {
        histo[usize::from(dense_get(regs, i))] += 1;
    }
    histo
}

// ------------------------------------------------------------------------------------------------
// Sparse opcodes
// ------------------------------------------------------------------------------------------------

/// `00xxxxxx`: a run of up to 64 zero registers.
fn is_zero(b: u8) -> bool {
    b & 0xc0 == 0
}

/// `01xxxxxx yyyyyyyy`: a run of up to 16384 zero registers.
fn is_xzero(b: u8) -> bool {
    b & 0xc0 == 0x40
}

/// `1vvvvvxx`: up to 4 registers holding 1..=32.
fn is_val(b: u8) -> bool {
    b & 0x80 != 0
}

/// Run length of a ZERO opcode.
fn zero_len(b: u8) -> usize {
    usize::from(b & 0x3f) + 1
}

/// Run length of an XZERO opcode given its two bytes.
fn xzero_len(b0: u8, b1: u8) -> usize {
    ((usize::from(b0 & 0x3f) << 8) | usize::from(b1)) + 1
}

/// Register value of a VAL opcode.
fn val_value(b: u8) -> u8 {
    ((b >> 2) & 0x1f) + 1
}

/// Run length of a VAL opcode.
fn val_len(b: u8) -> usize {
    usize::from(b & 0x3) + 1
}

/// Encodes a VAL opcode (`value` 1..=32, `len` 1..=4).
fn val_op(value: u8, len: usize) -> u8 {
    (value.wrapping_sub(1) << 2) | (len.wrapping_sub(1) as u8 & 0x3) | 0x80
}

/// Appends the opcode Redis uses for a zero run of `len` registers: ZERO up to 64, else XZERO.
fn push_zero_run(seq: &mut Vec<u8>, len: usize) {
    let l = len.wrapping_sub(1);
    if len > SPARSE_ZERO_MAX_LEN {
        seq.push(((l >> 8) as u8) | 0x40);
        seq.push((l & 0xff) as u8);
    } else {
        seq.push(l as u8);
    }
}

/// Walks sparse opcodes the way Redis converts them to dense and merges them: every register of
/// a VAL run is reported to `f`. Returns whether the opcodes cover exactly 16384 registers; a VAL
/// run past the last register is an error even when it follows a complete set of registers (the
/// behaviour of Redis builds carrying the CVE-2025-32023 fix, such as Debian's 7.0.15; unpatched
/// 7.0.15 ignored such trailing opcodes here while PFCOUNT rejected them).
/// `term` is the byte following the value (an XZERO cut in half at the end reads it).
fn walk_sparse(ops: &[u8], term: u8, mut f: impl FnMut(usize, u8)) -> bool {
    let mut idx = 0usize;
    let mut p = 0usize;
    while p < ops.len() {
        let b = ops[p];
        if is_zero(b) {
            idx += zero_len(b);
            p += 1;
        } else if is_xzero(b) {
            idx += xzero_len(b, ops.get(p + 1).copied().unwrap_or(term));
            p += 2;
        } else {
            let run = val_len(b);
            let value = val_value(b);
            if idx + run > HLL_REGISTERS {
                return false;
            }
            for reg in idx..idx + run {
                f(reg, value);
            }
            idx += run;
            p += 1;
        }
        if idx > HLL_REGISTERS {
            // The index only grows: this can no longer end at exactly 16384.
            return false;
        }
    }
    idx == HLL_REGISTERS
}

/// Histogram of register values of sparse opcodes, or `None` when they are not valid by
/// [`walk_sparse`]'s rules (which PFCOUNT applies too).
fn sparse_histogram(ops: &[u8], term: u8) -> Option<[u32; 64]> {
    let mut histo = [0u32; 64];
    let valid = walk_sparse(ops, term, |_, v| histo[usize::from(v)] += 1);
    let nonzero: u32 = histo.iter().sum();
    histo[0] = (HLL_REGISTERS as u32).saturating_sub(nonzero);
    valid.then_some(histo)
}

// ------------------------------------------------------------------------------------------------
// Estimator (Otmar Ertl, "New cardinality estimation algorithms for HyperLogLog sketches")
// ------------------------------------------------------------------------------------------------

/// Ertl's sigma helper.
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let previous = z;
        z += x * y;
        y += y;
        // NaN never occurs here (x is a ratio in [0, 1]); the second test just guarantees exit.
        if previous == z || z.is_nan() {
            return z;
        }
    }
}

/// Ertl's tau helper.
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let previous = z;
        y *= 0.5;
        let d = 1.0 - x;
        z -= d * d * y;
        if previous == z || z.is_nan() {
            return z / 3.0;
        }
    }
}

/// Cardinality estimate from a register histogram, with Redis's exact floating point steps.
fn estimate(histo: &[u32; 64]) -> u64 {
    let m = HLL_REGISTERS as f64;
    let mut z = m * tau((m - f64::from(histo[HLL_Q + 1])) / m);
    for &count in histo[1..=HLL_Q].iter().rev() {
        z += f64::from(count);
        z *= 0.5;
    }
    z += m * sigma(f64::from(histo[0]) / m);
    // Redis rounds with llroundl (half away from zero) into a long long. Out of range (only when
    // z is 0, i.e. a crafted dense value whose registers are all 51 or more) x86-64 yields
    // LLONG_MIN, which Redis then reinterprets as an unsigned count.
    let e = (HLL_ALPHA_INF * m * m / z).round();
    if e.is_finite() && e.abs() < I64_LIMIT {
        e as i64 as u64
    } else {
        1 << 63
    }
}

/// Computes the cardinality of a checked value (`term` is the byte following it).
fn count_value(value: &[u8], term: u8) -> Result<u64, HllError> {
    let body = value.get(HLL_HDR_SIZE..).ok_or(HllError::NotHll)?;
    let histo = match value.get(ENCODING_OFFSET) {
        Some(&HLL_DENSE) => dense_histogram(body),
        Some(&HLL_SPARSE) => sparse_histogram(body, term).ok_or(HllError::Corrupted)?,
        _ => return Err(HllError::NotHll),
    };
    Ok(estimate(&histo))
}

// ------------------------------------------------------------------------------------------------
// Working copy of a value
// ------------------------------------------------------------------------------------------------

/// A value being modified by one command, followed by the NUL byte Redis's sds strings carry.
///
/// Invariant: `buf.len() == content length + 1` and the value is at least a checked header long.
struct Sds {
    buf: Vec<u8>,
}

impl Sds {
    /// Wraps a value, appending the terminator.
    fn new(mut value: Vec<u8>) -> Self {
        value.push(0);
        Sds { buf: value }
    }

    /// Content length (without the terminator).
    fn len(&self) -> usize {
        self.buf.len() - 1
    }

    /// Byte at `i`; the terminator for `i == len`, zero beyond.
    fn at(&self, i: usize) -> u8 {
        self.buf.get(i).copied().unwrap_or(0)
    }

    /// The encoding byte.
    fn encoding(&self) -> u8 {
        self.at(ENCODING_OFFSET)
    }

    /// Marks the cached cardinality stale.
    fn invalidate_cache(&mut self) {
        if let Some(b) = self.buf.get_mut(CARD_FLAG_OFFSET) {
            *b |= CARD_INVALID_BIT;
        }
    }

    /// The register area plus the terminator (dense values only).
    fn registers_mut(&mut self) -> &mut [u8] {
        let start = HLL_HDR_SIZE.min(self.buf.len());
        &mut self.buf[start..]
    }

    /// Content without the terminator, and the terminator.
    fn parts(&self) -> (&[u8], u8) {
        let len = self.len();
        (&self.buf[..len], self.buf[len])
    }

    /// Gives the value back, dropping the terminator.
    fn into_value(mut self) -> Vec<u8> {
        self.buf.pop();
        self.buf
    }

    /// Replaces the opcode at `p` (`old_len` bytes, the next opcode at `next` if any) by `seq`,
    /// moving the tail and the terminator exactly like Redis's memmove / sdsIncrLen / memcpy.
    fn splice(&mut self, p: usize, old_len: usize, next: Option<usize>, seq: &[u8]) {
        let len = self.len();
        let Some(new_len) = (len + seq.len()).checked_sub(old_len) else { return };
        let need = len.max(new_len) + 1;
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
        if let Some(next) = next {
            if seq.len() != old_len {
                let dest = next + seq.len() - old_len;
                self.buf.copy_within(next..len, dest);
            }
        }
        self.buf[new_len] = 0;
        // p + seq.len() <= new_len + 1 because the opcode at p ends at most one byte past the end.
        let stop = (p + seq.len()).min(self.buf.len());
        let count = stop.saturating_sub(p);
        self.buf[p..stop].copy_from_slice(&seq[..count]);
        self.buf.truncate(new_len + 1);
    }

    /// Removes the byte at `p` (used to merge two VAL opcodes), shifting the terminator in.
    fn remove_byte(&mut self, p: usize) {
        let len = self.len();
        if p >= len {
            return;
        }
        self.buf.copy_within(p + 1..=len, p);
        self.buf.truncate(len);
        self.buf[len - 1] = 0;
    }
}

/// Converts a sparse working value to dense in place (Redis's `hllSparseToDense`): the header is
/// kept (cached cardinality included) with the encoding byte switched to dense.
fn sparse_to_dense(o: &mut Sds) -> Result<(), HllError> {
    if o.encoding() == HLL_DENSE {
        return Ok(());
    }
    let mut dense = vec![0u8; HLL_DENSE_SIZE + 1];
    let (value, term) = o.parts();
    let header = value.get(..HLL_HDR_SIZE).ok_or(HllError::NotHll)?;
    dense[..HLL_HDR_SIZE].copy_from_slice(header);
    dense[ENCODING_OFFSET] = HLL_DENSE;
    let ops = &value[HLL_HDR_SIZE..];
    let regs = &mut dense[HLL_HDR_SIZE..];
    if !walk_sparse(ops, term, |i, v| dense_set(regs, i, v)) {
        return Err(HllError::Corrupted);
    }
    o.buf = dense;
    Ok(())
}

/// Promotes to dense and sets the register (the tail of Redis's `hllSparseSet`).
fn promote_and_set(o: &mut Sds, index: usize, count: u8) -> Result<bool, HllError> {
    sparse_to_dense(o)?;
    // Redis asserts the register really grows here; it always does for values it produced.
    dense_raise(o.registers_mut(), index, count);
    Ok(true)
}

/// Raises register `index` of a sparse working value to `count` (Redis's `hllSparseSet`),
/// promoting to dense when the value does not fit a VAL opcode or the value would grow beyond
/// `max_bytes`. Returns whether the register changed.
fn sparse_set(o: &mut Sds, index: usize, count: u8, max_bytes: usize) -> Result<bool, HllError> {
    if count > SPARSE_VAL_MAX_VALUE {
        return promote_and_set(o, index, count);
    }

    // Step 1: find the opcode covering `index`.
    let end = o.len();
    let mut p = HLL_HDR_SIZE;
    let mut prev = None;
    let mut first = 0usize;
    let mut span = 0usize;
    while p < end {
        let b = o.at(p);
        let op_len;
        if is_zero(b) {
            span = zero_len(b);
            op_len = 1;
        } else if is_val(b) {
            span = val_len(b);
            op_len = 1;
        } else {
            span = xzero_len(b, o.at(p + 1));
            op_len = 2;
        }
        if index < first + span {
            break;
        }
        prev = Some(p);
        p += op_len;
        first += span;
    }
    if span == 0 || p >= end {
        return Err(HllError::Corrupted);
    }
    let b = o.at(p);
    let old_len = if is_xzero(b) { 2 } else { 1 };
    let next = if p + old_len >= end { None } else { Some(p + old_len) };

    // Step 2: trivial in-place updates.
    if is_val(b) {
        if val_value(b) >= count {
            return Ok(false);
        }
        if val_len(b) == 1 {
            o.buf[p] = val_op(count, 1);
            merge_adjacent_vals(o, prev);
            return Ok(true);
        }
    }
    if is_zero(b) && zero_len(b) == 1 {
        o.buf[p] = val_op(count, 1);
        merge_adjacent_vals(o, prev);
        return Ok(true);
    }

    // General case: split the opcode into up to three.
    let last = first + span - 1;
    let mut seq = Vec::with_capacity(5);
    if is_val(b) {
        let current = val_value(b);
        if index != first {
            seq.push(val_op(current, index - first));
        }
        seq.push(val_op(count, 1));
        if index != last {
            seq.push(val_op(current, last - index));
        }
    } else {
        if index != first {
            push_zero_run(&mut seq, index - first);
        }
        seq.push(val_op(count, 1));
        if index != last {
            push_zero_run(&mut seq, last - index);
        }
    }

    // Step 3: substitute, unless the value would grow too large.
    if seq.len() > old_len && end + (seq.len() - old_len) > max_bytes {
        return promote_and_set(o, index, count);
    }
    o.splice(p, old_len, next, &seq);
    merge_adjacent_vals(o, prev);
    Ok(true)
}

/// Step 4 of Redis's `hllSparseSet`: starting at the opcode before the updated one, merges
/// adjacent VAL opcodes of equal value over at most five opcodes, then invalidates the cache.
fn merge_adjacent_vals(o: &mut Sds, prev: Option<usize>) {
    let mut p = prev.unwrap_or(HLL_HDR_SIZE);
    let mut scan = MERGE_SCAN_OPCODES;
    while p < o.len() && scan > 0 {
        scan -= 1;
        let b = o.at(p);
        if is_xzero(b) {
            p += 2;
            continue;
        }
        if is_zero(b) {
            p += 1;
            continue;
        }
        let nb = o.at(p + 1);
        if p + 1 < o.len() && is_val(nb) && val_value(b) == val_value(nb) {
            let len = val_len(b) + val_len(nb);
            if len <= SPARSE_VAL_MAX_LEN {
                o.buf[p + 1] = val_op(val_value(b), len);
                o.remove_byte(p);
                // Try again at the same position: the merged opcode may merge with its right.
                continue;
            }
        }
        p += 1;
    }
    o.invalidate_cache();
}

/// Raises register `index` of a working value of either encoding (Redis's `hllAdd` step).
fn set_register(o: &mut Sds, index: usize, count: u8, max_bytes: usize) -> Result<bool, HllError> {
    match o.encoding() {
        HLL_DENSE => Ok(dense_raise(o.registers_mut(), index, count)),
        HLL_SPARSE => sparse_set(o, index, count, max_bytes),
        _ => Err(HllError::Corrupted),
    }
}

/// Folds a checked value into `max` (Redis's `hllMerge`).
fn merge_into(max: &mut [u8; HLL_REGISTERS], value: &[u8]) -> Result<(), HllError> {
    let body = value.get(HLL_HDR_SIZE..).ok_or(HllError::NotHll)?;
    if value.get(ENCODING_OFFSET) == Some(&HLL_DENSE) {
        for (i, m) in max.iter_mut().enumerate() {
            *m = (*m).max(dense_get(body, i));
        }
        Ok(())
    } else if walk_sparse(body, 0, |i, v| max[i] = max[i].max(v)) {
        Ok(())
    } else {
        Err(HllError::Corrupted)
    }
}

/// The value Redis's `createHLLObject` builds: sparse, all registers zero, cached cardinality 0.
fn create_hll() -> Vec<u8> {
    let mut value = Vec::with_capacity(HLL_HDR_SIZE + 2);
    value.extend_from_slice(HLL_MAGIC);
    value.push(HLL_SPARSE);
    value.extend_from_slice(&[0; 3]);
    value.extend_from_slice(&[0; 8]);
    let mut left = HLL_REGISTERS;
    while left > 0 {
        let run = left.min(SPARSE_XZERO_MAX_LEN);
        push_zero_run(&mut value, run);
        left -= run;
    }
    value
}

// ------------------------------------------------------------------------------------------------
// Public API
// ------------------------------------------------------------------------------------------------

/// The value `PFADD key` stores for a missing key before adding elements: an empty sparse HLL
/// whose cached cardinality is already flagged stale (Redis invalidates it because the key was
/// created). Add elements with [`add`]; PFADD then replies 1 whatever [`add`] returns.
pub fn new_hll() -> Vec<u8> {
    let mut value = create_hll();
    value[CARD_FLAG_OFFSET] |= CARD_INVALID_BIT;
    value
}

/// Redis's `isHLLObjectOrReply` for a string value: at least a header long, magic `HYLL`, a known
/// encoding and, when dense, exactly the dense length. Sparse opcodes are not validated here.
pub fn check(value: &[u8]) -> Result<(), HllError> {
    let valid = value.len() >= HLL_HDR_SIZE
        && value[..4] == *HLL_MAGIC
        && value[ENCODING_OFFSET] <= HLL_SPARSE
        && (value[ENCODING_OFFSET] != HLL_DENSE || value.len() == HLL_DENSE_SIZE);
    if valid {
        Ok(())
    } else {
        Err(HllError::NotHll)
    }
}

/// PFADD of `elements` into an existing value. Returns whether any register changed (PFADD then
/// replies 1; it also replies 1 when the key was just created, which the caller handles). When a
/// register changed the cached cardinality is flagged stale. The value may be promoted to dense
/// on the way (`sparse_max_bytes` is the `hll-sparse-max-bytes` config).
///
/// On `Err`, `hll` holds what Redis leaves in memory in that case (elements before the failing
/// one applied); Redis neither signals nor propagates that change.
pub fn add(hll: &mut Vec<u8>, elements: &[&[u8]], sparse_max_bytes: usize) -> Result<bool, HllError> {
    check(hll)?;
    let mut o = Sds::new(std::mem::take(hll));
    let mut updated = false;
    let mut result = Ok(());
    for element in elements {
        let (index, count) = pat_len(element);
        match set_register(&mut o, index, count, sparse_max_bytes) {
            Ok(changed) => updated |= changed,
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    if result.is_ok() && updated {
        o.invalidate_cache();
    }
    *hll = o.into_value();
    result.map(|()| updated)
}

/// PFCOUNT of a single key: returns the cached cardinality when it is valid; otherwise computes it
/// and stores it into the header. Returns `(count, updated)`; when `updated` the caller must store
/// the value back (Redis treats that as a modification of the key).
#[allow(clippy::ptr_arg)] // a Vec like the other mutating entry points, for a uniform API
pub fn count_cached(hll: &mut Vec<u8>) -> Result<(u64, bool), HllError> {
    check(hll)?;
    let mut card = [0u8; 8];
    card.copy_from_slice(&hll[CARD_OFFSET..CARD_OFFSET + 8]);
    if card[7] & CARD_INVALID_BIT == 0 {
        return Ok((u64::from_le_bytes(card), false));
    }
    let count = count_value(hll, 0)?;
    hll[CARD_OFFSET..CARD_OFFSET + 8].copy_from_slice(&count.to_le_bytes());
    Ok((count, true))
}

/// PFCOUNT of several keys (missing keys left out by the caller): the cardinality of the union,
/// without touching any cache. Values are checked and merged in order, so the first bad value
/// decides the error, as in Redis.
pub fn count_union(hlls: &[&[u8]]) -> Result<u64, HllError> {
    let mut max = [0u8; HLL_REGISTERS];
    for value in hlls {
        check(value)?;
        merge_into(&mut max, value)?;
    }
    let mut histo = [0u32; 64];
    for &r in &max {
        histo[usize::from(r & 63)] += 1;
    }
    Ok(estimate(&histo))
}

/// PFMERGE: the new value of the destination given its current value (`None` when missing) and
/// the source values (missing sources left out by the caller), exactly as Redis 7.0 stores it.
///
/// As in Redis the destination takes part in the union, and every value is checked then merged
/// in order (destination first), so the first bad value decides the error. The result is dense
/// when any input is dense; otherwise it is built by sparse register updates from the
/// destination (or an empty HLL) and may be promoted on the way. The cache is always flagged stale.
pub fn merge(dest: Option<&[u8]>, sources: &[&[u8]], sparse_max_bytes: usize) -> Result<Vec<u8>, HllError> {
    let mut max = [0u8; HLL_REGISTERS];
    let mut use_dense = false;
    for value in dest.into_iter().chain(sources.iter().copied()) {
        check(value)?;
        use_dense |= value[ENCODING_OFFSET] == HLL_DENSE;
        merge_into(&mut max, value)?;
    }
    let mut o = Sds::new(dest.map_or_else(create_hll, <[u8]>::to_vec));
    if use_dense {
        sparse_to_dense(&mut o)?;
    }
    for (j, &value) in max.iter().enumerate() {
        if value != 0 {
            // Redis ignores failures here (impossible once the destination merged cleanly).
            let _ = set_register(&mut o, j, value, sparse_max_bytes);
        }
    }
    o.invalidate_cache();
    Ok(o.into_value())
}

/// PFDEBUG GETREG: converts a sparse value to dense in place (Redis does, and counts it as a
/// change) and returns the 16384 register values.
pub fn debug_getreg(hll: &mut Vec<u8>) -> Result<Vec<u8>, HllError> {
    to_dense(hll)?;
    let regs = &hll[HLL_HDR_SIZE..];
    Ok((0..HLL_REGISTERS).map(|i| dense_get(regs, i)).collect())
}

/// PFDEBUG DECODE: the opcodes of a sparse value in Redis's text form, e.g.
/// `"Z:8436 v:1,1 Z:4274"` (`z:` ZERO, `Z:` XZERO, `v:value,len` VAL). The error is the Redis
/// error line: `ERR HLL encoding is not sparse` for dense values, or the [`HllError`] text.
pub fn debug_decode(hll: &[u8]) -> Result<String, String> {
    check(hll).map_err(|e| e.message().to_string())?;
    if hll[ENCODING_OFFSET] != HLL_SPARSE {
        return Err("ERR HLL encoding is not sparse".to_string());
    }
    let ops = &hll[HLL_HDR_SIZE..];
    let mut out = String::new();
    let mut p = 0;
    while p < ops.len() {
        let b = ops[p];
        // Writing to a String cannot fail.
        let _ = if is_zero(b) {
            p += 1;
            write!(out, "z:{} ", zero_len(b))
        } else if is_xzero(b) {
            p += 2;
            write!(out, "Z:{} ", xzero_len(b, ops.get(p - 1).copied().unwrap_or(0)))
        } else {
            p += 1;
            write!(out, "v:{},{} ", val_value(b), val_len(b))
        };
    }
    Ok(out.trim_matches(' ').to_string())
}

/// PFDEBUG ENCODING: `"dense"` or `"sparse"` for a checked value.
pub fn encoding_name(hll: &[u8]) -> &'static str {
    if hll.get(ENCODING_OFFSET) == Some(&HLL_DENSE) {
        "dense"
    } else {
        "sparse"
    }
}

/// PFDEBUG TODENSE: converts a sparse value to dense in place (header and cached cardinality
/// kept). Returns whether it converted (PFDEBUG replies 1 then, 0 for an already dense value).
pub fn to_dense(hll: &mut Vec<u8>) -> Result<bool, HllError> {
    check(hll)?;
    if hll[ENCODING_OFFSET] == HLL_DENSE {
        return Ok(false);
    }
    let mut o = Sds::new(std::mem::take(hll));
    let result = sparse_to_dense(&mut o);
    *hll = o.into_value();
    result.map(|()| true)
}

/// PFSELFTEST with the default `hll-sparse-max-bytes`. See [`selftest_with`].
pub fn selftest() -> Result<(), String> {
    selftest_with(HLL_SPARSE_MAX_BYTES_DEFAULT)
}

/// PFSELFTEST: the checks Redis runs. First, random values written to every dense register read
/// back unchanged (1000 rounds). Then 10 million distinct elements go into a dense and a sparse
/// HLL (the latter promoted past `sparse_max_bytes`); at cardinalities 1, 10, 100, ... the sparse
/// one must still be sparse while small, both must give the same estimate, and the error must stay
/// within six standard errors. Errors are Redis's `TESTFAILED ...` lines.
pub fn selftest_with(sparse_max_bytes: usize) -> Result<(), String> {
    selftest_run(1000, 10_000_000, sparse_max_bytes, random_seed())
}

/// Small xorshift64* generator for the self test (std has no RNG; modest quality suffices).
struct XorShift(u64);

impl XorShift {
    /// Next pseudo-random 64 bits.
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// A seed that differs between runs, from std's randomly keyed hasher and the clock.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    hasher.finish() | 1
}

/// The self test with its sizes as parameters (tests run it smaller).
fn selftest_run(cycles: usize, elements: u64, sparse_max_bytes: usize, seed: u64) -> Result<(), String> {
    let mut rng = XorShift(seed | 1);

    // Test 1: dense register access.
    let mut regs = vec![0u8; HLL_DENSE_REGS_SIZE + 1];
    let mut expected = vec![0u8; HLL_REGISTERS];
    for _ in 0..cycles {
        for (i, e) in expected.iter_mut().enumerate() {
            let r = (rng.next() & u64::from(HLL_REGISTER_MAX)) as u8;
            *e = r;
            dense_set(&mut regs, i, r);
        }
        for (i, &e) in expected.iter().enumerate() {
            let got = dense_get(&regs, i);
            if got != e {
                return Err(format!("TESTFAILED Register {i} should be {e} but is {got}"));
            }
        }
    }

    // Test 2: approximation error, dense and sparse side by side.
    let mut dense = vec![0u8; HLL_DENSE_SIZE];
    dense[..4].copy_from_slice(HLL_MAGIC);
    let mut sparse = Sds::new(create_hll());
    let relerr = 1.04 / (HLL_REGISTERS as f64).sqrt();
    let mut checkpoint: u64 = 1;
    let ele_seed = rng.next();
    for j in 1..=elements {
        let ele = (j ^ ele_seed).to_le_bytes();
        let (index, count) = pat_len(&ele);
        dense_raise(&mut dense[HLL_HDR_SIZE..], index, count);
        let _ = set_register(&mut sparse, index, count, sparse_max_bytes);
        if j != checkpoint {
            continue;
        }
        if (j as usize) < sparse_max_bytes / 2 && sparse.encoding() != HLL_SPARSE {
            return Err("TESTFAILED sparse encoding not used".to_string());
        }
        let dense_count = count_value(&dense, 0).unwrap_or(0);
        let (sparse_value, term) = sparse.parts();
        let sparse_count = count_value(sparse_value, term).unwrap_or(0);
        if dense_count != sparse_count {
            return Err("TESTFAILED dense/sparse disagree".to_string());
        }
        let abserr = checkpoint.abs_diff(dense_count);
        let maxerr = if j == 10 { 1 } else { (relerr * 6.0 * checkpoint as f64).ceil() as u64 };
        if abserr > maxerr {
            return Err(format!("TESTFAILED Too big error. card:{checkpoint} abserr:{abserr}"));
        }
        checkpoint = checkpoint.saturating_mul(10);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = HLL_SPARSE_MAX_BYTES_DEFAULT;

    /// Decodes a hex string (test vectors captured from redis-server 7.0.15).
    fn hex(s: &str) -> Vec<u8> {
        (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
    }

    /// FNV-1a 64, to compare whole dense values against a short fingerprint.
    fn fnv1a(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
    }

    /// PFADD to a missing key.
    fn pfadd_new(elements: &[&[u8]]) -> Vec<u8> {
        let mut v = new_hll();
        add(&mut v, elements, MAX).unwrap();
        v
    }

    /// PFADD of `el:0` .. `el:{n-1}` in batches of 1000, as the golden vectors were produced.
    fn numbered(n: usize, sparse_max_bytes: usize) -> Vec<u8> {
        let mut v = new_hll();
        let names: Vec<String> = (0..n).map(|j| format!("el:{j}")).collect();
        for batch in names.chunks(1000) {
            let refs: Vec<&[u8]> = batch.iter().map(|s| s.as_bytes()).collect();
            add(&mut v, &refs, sparse_max_bytes).unwrap();
        }
        v
    }

    /// An 8-byte element (a little-endian counter) whose pattern length is 33.
    const COUNT33: [u8; 8] = 3_130_853_818u64.to_le_bytes();

    /// Deterministic xorshift for the fuzz tests.
    fn rng(seed: u64) -> XorShift {
        XorShift(seed | 1)
    }

    #[test]
    fn alpha_constant_matches() {
        assert_eq!(HLL_ALPHA_INF, 0.5 / std::f64::consts::LN_2);
    }

    #[test]
    fn murmur_and_pattern_match_redis() {
        assert_eq!(murmurhash64a(b"", HASH_SEED), 0xd8df_ea65_85bc_9732);
        assert_eq!(murmurhash64a(b"a", HASH_SEED), 0x53d2_470a_9b43_b1a7);
        assert_eq!(murmurhash64a(b"hello world!", HASH_SEED), 0x0fc4_4401_1f57_220c);
        assert_eq!(murmurhash64a(b"0123456789abcdef", HASH_SEED), 0x9f85_6542_8eaa_573d);
        assert_eq!(pat_len(b"a"), (12711, 2));
        assert_eq!(pat_len(b"b"), (15780, 1));
        assert_eq!(pat_len(b"c"), (8436, 1));
        assert_eq!(pat_len(b"el:99999"), (10919, 1));
        assert_eq!(pat_len(&COUNT33), (3655, 33));
    }

    #[test]
    fn dense_registers_round_trip() {
        let mut regs = vec![0u8; HLL_DENSE_REGS_SIZE];
        let mut r = rng(7);
        let values: Vec<u8> = (0..HLL_REGISTERS).map(|_| (r.next() & 63) as u8).collect();
        for (i, &v) in values.iter().enumerate() {
            dense_set(&mut regs, i, v);
        }
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(dense_get(&regs, i), v, "register {i}");
        }
        assert!(selftest_run(3, 0, MAX, 99).is_ok());
    }

    #[test]
    fn new_hll_bytes() {
        let v = new_hll();
        assert_eq!(v, hex("48594c4c0100000000000000000000807fff"));
        assert_eq!(check(&v), Ok(()));
        assert_eq!(debug_decode(&v).unwrap(), "Z:16384");
        assert_eq!(encoding_name(&v), "sparse");
        let mut v2 = v.clone();
        assert_eq!(count_cached(&mut v2), Ok((0, true)));
        assert_eq!(v2, hex("48594c4c0100000000000000000000007fff"));
    }

    #[test]
    fn pfadd_sparse_golden() {
        let mut v = pfadd_new(&[b"a", b"b", b"c"]);
        assert_eq!(v, hex("48594c4c01000000000000000000008060f38050b1844bfb80425a"));
        assert_eq!(debug_decode(&v).unwrap(), "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603");
        assert_eq!(count_cached(&mut v), Ok((3, true)));
        assert_eq!(v, hex("48594c4c01000000030000000000000060f38050b1844bfb80425a"));
        assert_eq!(count_cached(&mut v), Ok((3, false)));

        let g2 = pfadd_new(&[b"b", b"c", b"d", b"e", b"f", b"g"]);
        assert_eq!(g2, hex("48594c4c010000000000000000000080466d80560c80443c8438805a3f80426d80425a"));
        assert_eq!(
            debug_decode(&g2).unwrap(),
            "Z:1646 v:1,1 Z:5645 v:1,1 Z:1085 v:2,1 z:57 v:1,1 Z:6720 v:1,1 Z:622 v:1,1 Z:603"
        );
    }

    #[test]
    fn pfadd_return_values_and_cache() {
        let mut v = new_hll();
        assert_eq!(add(&mut v, &[], MAX), Ok(false));
        assert_eq!(v, new_hll());
        assert_eq!(add(&mut v, &[b"a", b"b", b"c"], MAX), Ok(true));
        assert_eq!(count_cached(&mut v), Ok((3, true)));
        assert_eq!(v[15], 0);
        assert_eq!(add(&mut v, &[b"a", b"b", b"c"], MAX), Ok(false));
        assert_eq!(v[15], 0, "no change keeps the cache");
        assert_eq!(add(&mut v, &[], MAX), Ok(false));
        assert_eq!(add(&mut v, &[b""], MAX), Ok(true));
        assert_eq!(v[15], 0x80);
        assert_eq!(add(&mut v, &[b"1", b"2", b"3"], MAX), Ok(true));
        assert_eq!(v[15], 0x80);

        let mut v = pfadd_new(&[b"1", b"2", b"3", b"4", b"5"]);
        assert_eq!(count_cached(&mut v).unwrap().0, 5);
        add(&mut v, &[b"6", b"7", b"8", b"8", b"9", b"10"], MAX).unwrap();
        assert_eq!(count_cached(&mut v).unwrap().0, 10);
    }

    #[test]
    fn adjacent_val_opcodes_merge() {
        // q57661 .. q2894 hit registers 0..=5 with value 1.
        let els: [&[u8]; 6] = [b"q57661", b"q33549", b"q52225", b"q18211", b"q6256", b"q2894"];
        let mut v = new_hll();
        let steps = ["807ffe", "817ffd", "827ffc", "837ffb", "83807ffa", "83817ff9"];
        for (e, step) in els.iter().zip(steps) {
            add(&mut v, &[e], MAX).unwrap();
            assert_eq!(v[HLL_HDR_SIZE..], hex(step)[..]);
        }
        let shuffled = pfadd_new(&[els[5], els[3], els[1], els[0], els[2], els[4]]);
        assert_eq!(shuffled, v);
        assert_eq!(debug_decode(&v).unwrap(), "v:1,4 v:1,2 Z:16378");
        let mut up = shuffled;
        assert_eq!(add(&mut up, &[b"q61486"], MAX), Ok(true));
        assert_eq!(up[HLL_HDR_SIZE..], hex("8184827ff9")[..]);
    }

    #[test]
    fn cardinalities_and_promotion_golden() {
        // (n, encoding, PFCOUNT, length, FNV-1a of the value after PFCOUNT), from redis-server.
        let cases: [(usize, &str, u64, usize, u64); 7] = [
            (10, "sparse", 10, 48, 0xf09b_0b0c_4349_60b4),
            (100, "sparse", 100, 289, 0xa521_bddb_7dde_b587),
            (1000, "sparse", 999, 1892, 0x5037_165b_dd54_d0fa),
            (2000, "dense", 1987, 12304, 0x9355_a8cb_3876_c858),
            (5000, "dense", 4959, 12304, 0x7c74_678f_bb78_dab7),
            (10000, "dense", 10019, 12304, 0xbcd9_d99f_071a_ad11),
            (100_000, "dense", 98893, 12304, 0x44f4_03e1_c04b_3f92),
        ];
        for (n, enc, card, len, fp) in cases {
            let mut v = numbered(n, MAX);
            assert_eq!(encoding_name(&v), enc, "n={n}");
            assert_eq!(count_cached(&mut v), Ok((card, true)), "n={n}");
            assert_eq!(v.len(), len, "n={n}");
            assert_eq!(fnv1a(&v), fp, "n={n}");
        }
        let n10 = numbered(10, MAX);
        assert_eq!(
            n10[..40],
            hex("48594c4c010000000000000000000080" /* cache not yet computed */)
                .into_iter()
                .chain(hex("43f78040d2884c868851158442a48841338048cf8041428c"))
                .collect::<Vec<u8>>()[..]
        );
    }

    #[test]
    fn small_sparse_max_bytes() {
        let v = numbered(5, 40);
        assert_eq!(v, hex("48594c4c01000000000000000000008043f7804d5a8853bb8841338059278c408f"));
        let v = numbered(12, 40);
        assert_eq!(encoding_name(&v), "dense");
        assert_eq!(fnv1a(&v), 0xeb9a_1d2a_1ce8_1297);
        // With no room at all the first register change promotes.
        let mut v = new_hll();
        add(&mut v, &[b"a"], 0).unwrap();
        assert_eq!(encoding_name(&v), "dense");
    }

    #[test]
    fn value_too_large_for_sparse_promotes() {
        let mut v = pfadd_new(&[b"a", b"b", b"c"]);
        assert_eq!(add(&mut v, &[&COUNT33, b"d"], MAX), Ok(true));
        assert_eq!(encoding_name(&v), "dense");
        assert_eq!(fnv1a(&v), 0x7416_0ca4_735b_7c41);
        let regs = debug_getreg(&mut v.clone()).unwrap();
        assert_eq!(regs[3655], 33);
        let mut dest = pfadd_new(&[b"a"]);
        dest = merge(Some(&dest), &[&v], MAX).unwrap();
        assert_eq!(fnv1a(&dest), 0x7416_0ca4_735b_7c41);
        assert_eq!(count_cached(&mut v), Ok((5, true)));
        assert_eq!(v[..16], hex("48594c4c000000000500000000000000")[..]);
    }

    #[test]
    fn merge_golden() {
        let g1 = pfadd_new(&[b"a", b"b", b"c"]);
        let g2 = pfadd_new(&[b"b", b"c", b"d", b"e", b"f", b"g"]);
        let mut m = merge(None, &[&g1, &g2], MAX).unwrap();
        assert_eq!(m, hex("48594c4c010000000000000000000080466d80560c80443c84388050b184498c80426d80425a"));
        assert_eq!(count_cached(&mut m).unwrap().0, 7);

        let n100 = numbered(100, MAX);
        let n1000 = numbered(1000, MAX);
        let n10000 = numbered(10000, MAX);
        assert_eq!(count_union(&[&n1000, &g2, &n100]), Ok(1005));

        let md = merge(None, &[&g1, &n10000], MAX).unwrap();
        assert_eq!((md.len(), fnv1a(&md)), (12304, 0x3ecb_2535_b531_6697));
        let ms = merge(None, &[&n1000, &n100, &g2], MAX).unwrap();
        assert_eq!((encoding_name(&ms), ms.len(), fnv1a(&ms)), ("sparse", 1904, 0xfa78_b21b_962e_ea04));

        // PFMERGE with only a destination, missing or existing, and the destination as a source.
        assert_eq!(merge(None, &[], MAX).unwrap(), new_hll());
        let mut e3 = pfadd_new(&[b"a"]);
        count_cached(&mut e3).unwrap();
        assert_eq!(e3, hex("48594c4c01000000010000000000000071a6844e57"));
        let again = merge(Some(&e3), &[&e3], MAX).unwrap();
        assert_eq!(again, hex("48594c4c01000000010000000000008071a6844e57"));
        assert_eq!(merge(Some(&e3), &[], MAX).unwrap(), again);
    }

    #[test]
    fn errors_and_their_order() {
        assert_eq!(HllError::NotHll.message(), "WRONGTYPE Key is not a valid HyperLogLog string value.");
        assert_eq!(HllError::Corrupted.message(), "INVALIDOBJ Corrupted HLL object detected");
        assert_eq!(check(b"foobar"), Err(HllError::NotHll));
        let good = pfadd_new(&[b"a", b"b", b"c"]);

        let mut tail = good.clone();
        tail.extend_from_slice(b"hello");
        assert_eq!(count_cached(&mut tail.clone()), Err(HllError::Corrupted));
        // PFADD still finds its register before the junk, as Redis does.
        let mut t = tail.clone();
        assert_eq!(add(&mut t, &[b"zz"], MAX), Ok(true));
        assert_eq!(t, hex("48594c4c0100000000000000000000804ad98056188050b1844bfb80425a68656c6c6f"));

        let mut magic = good.clone();
        magic[..4].copy_from_slice(b"0123");
        assert_eq!(count_cached(&mut magic), Err(HllError::NotHll));
        let mut enc = good.clone();
        enc[4] = b'x';
        assert_eq!(count_cached(&mut enc), Err(HllError::NotHll));
        let mut dense_len = good.clone();
        dense_len[4] = 0;
        assert_eq!(count_cached(&mut dense_len), Err(HllError::NotHll));
        assert_eq!(add(&mut dense_len.clone(), &[b"x"], MAX), Err(HllError::NotHll));

        // First bad value decides, destination first for PFMERGE.
        assert_eq!(count_union(&[&good, &tail, b"foo"]), Err(HllError::Corrupted));
        assert_eq!(count_union(&[&good, b"foo", &tail]), Err(HllError::NotHll));
        assert_eq!(merge(Some(&tail), &[b"foo"], MAX), Err(HllError::Corrupted));
        assert_eq!(merge(Some(b"foo"), &[&tail], MAX), Err(HllError::NotHll));
        assert_eq!(merge(Some(&good), &[&tail], MAX), Err(HllError::Corrupted));
    }

    #[test]
    fn opcodes_past_the_last_register() {
        // All registers then a VAL: rejected by every full walk, but PFADD still works on it.
        let v = hex("48594c4c0100000000000000000000807fff80");
        assert_eq!(count_cached(&mut v.clone()), Err(HllError::Corrupted));
        assert_eq!(count_union(&[&v]), Err(HllError::Corrupted));
        assert_eq!(merge(None, &[&v], MAX), Err(HllError::Corrupted));
        let mut d = v.clone();
        assert_eq!(to_dense(&mut d), Err(HllError::Corrupted));
        assert_eq!(d, v);
        assert_eq!(debug_getreg(&mut d), Err(HllError::Corrupted));
        let mut a = v.clone();
        assert_eq!(add(&mut a, &[b"a"], MAX), Ok(true));
        assert_eq!(a, hex("48594c4c01000000000000000000008071a6844e5780"));
        // Too few registers, or a run crossing the end.
        for ops in ["7ffe", "7ffe01", "7ffe81", "7fff00", "7fff4000", ""] {
            let mut v = hex("48594c4c010000000000000000000080");
            v.extend(hex(ops));
            assert_eq!(count_cached(&mut v.clone()), Err(HllError::Corrupted), "{ops}");
            assert_eq!(merge(None, &[&v], MAX), Err(HllError::Corrupted), "{ops}");
        }
        // PFADD only needs the opcode covering its register.
        let mut short = hex("48594c4c0100000000000000000000807ffe");
        assert_eq!(add(&mut short, &[b"a"], MAX), Ok(true));
        assert_eq!(short, hex("48594c4c01000000000000000000008071a6844e56"));
        let mut empty = hex("48594c4c010000000000000000000080");
        assert_eq!(add(&mut empty, &[b"a"], MAX), Err(HllError::Corrupted));
    }

    #[test]
    fn xzero_cut_in_half_reads_the_terminator() {
        // XZERO 16127, then a lone XZERO byte whose low byte is the (zero) terminator: 257 zeros.
        let mut v = hex("48594c4c0100000000000000000000807efe41");
        assert_eq!(debug_decode(&v).unwrap(), "Z:16127 Z:257");
        assert_eq!(count_cached(&mut v.clone()), Ok((0, true)));
        // e53 hits register 16200 (value 3): Redis splits the half opcode and keeps the last byte
        // of the new sequence in its terminator only.
        assert_eq!(add(&mut v, &[b"e53"], MAX), Ok(true));
        assert_eq!(v[HLL_HDR_SIZE..], hex("7efe40488840")[..]);
    }

    #[test]
    fn debug_helpers() {
        let mut v = pfadd_new(&[b"a", b"b", b"c"]);
        count_cached(&mut v).unwrap();
        let mut d = v.clone();
        assert_eq!(to_dense(&mut d), Ok(true));
        assert_eq!(d.len(), HLL_DENSE_SIZE);
        assert_eq!(d[..16], hex("48594c4c000000000300000000000000")[..], "header and cache kept");
        assert_eq!(to_dense(&mut d), Ok(false));
        assert_eq!(encoding_name(&d), "dense");
        assert_eq!(debug_decode(&d), Err("ERR HLL encoding is not sparse".to_string()));
        assert_eq!(count_cached(&mut d), Ok((3, false)));
        let mut g = v.clone();
        let regs = debug_getreg(&mut g).unwrap();
        assert_eq!(g, d);
        assert_eq!(regs.len(), HLL_REGISTERS);
        let set: Vec<(usize, u8)> = regs.iter().enumerate().filter(|(_, r)| **r != 0).map(|(i, &r)| (i, r)).collect();
        assert_eq!(set, [(8436, 1), (12711, 2), (15780, 1)]);
    }

    #[test]
    fn all_registers_51_overflow_like_redis() {
        // z is 0, llroundl overflows to LLONG_MIN; Redis stores it, so the cache stays invalid.
        let mut v = vec![0u8; HLL_DENSE_SIZE];
        v[..4].copy_from_slice(HLL_MAGIC);
        v[CARD_FLAG_OFFSET] = CARD_INVALID_BIT;
        for i in 0..HLL_REGISTERS {
            dense_set(&mut v[HLL_HDR_SIZE..], i, 51);
        }
        assert_eq!(count_cached(&mut v), Ok((1 << 63, true)));
        assert_eq!(count_cached(&mut v), Ok((1 << 63, true)));
        assert_eq!(count_union(&[&v]), Ok(1 << 63));
    }

    #[test]
    fn sparse_and_dense_agree() {
        let mut r = rng(42);
        for round in 0..300 {
            let n = (r.next() % 100) as usize;
            let els: Vec<Vec<u8>> = (0..n).map(|_| r.next().to_string().into_bytes()).collect();
            let refs: Vec<&[u8]> = els.iter().map(|e| e.as_slice()).collect();
            let mut sparse = new_hll();
            let mut dense = new_hll();
            to_dense(&mut dense).unwrap();
            add(&mut sparse, &refs, MAX).unwrap();
            add(&mut dense, &refs, MAX).unwrap();
            assert_eq!(encoding_name(&sparse), "sparse");
            let regs = debug_getreg(&mut sparse.clone()).unwrap();
            assert_eq!(regs, debug_getreg(&mut dense.clone()).unwrap(), "round {round}");
            assert_eq!(count_cached(&mut sparse).unwrap().0, count_cached(&mut dense).unwrap().0);
            assert_eq!(merge(None, &[&sparse], MAX).unwrap()[HLL_HDR_SIZE..], sparse[HLL_HDR_SIZE..]);
        }
    }

    #[test]
    fn fuzzed_values_never_panic() {
        let mut r = rng(2024);
        for round in 0..400 {
            let n = (r.next() % 600) as usize;
            let els: Vec<Vec<u8>> = (0..n).map(|_| r.next().to_le_bytes().to_vec()).collect();
            let refs: Vec<&[u8]> = els.iter().map(|e| e.as_slice()).collect();
            let mut v = new_hll();
            add(&mut v, &refs, if round % 3 == 0 { 300 } else { MAX }).unwrap();
            for _ in 0..1 + r.next() % 5 {
                match r.next() % 4 {
                    0 => {
                        let pos = (r.next() % v.len() as u64) as usize;
                        v[pos] = r.next() as u8;
                    }
                    1 => v.push(r.next() as u8),
                    2 if v.len() > 17 => {
                        v.pop();
                    }
                    _ => {
                        let pos = HLL_HDR_SIZE + (r.next() % (v.len() - HLL_HDR_SIZE) as u64) as usize;
                        v[pos] = [0x40, 0x41, 0x7f, 0x00, 0x3f, 0x80, 0xfc, 0x83][(r.next() % 8) as usize];
                    }
                }
            }
            let other = pfadd_new(&[b"x", b"y"]);
            let _ = check(&v);
            let _ = count_cached(&mut v.clone());
            let _ = count_union(&[&v, &other]);
            let _ = merge(Some(&v), &[&other], 50);
            let _ = merge(Some(&other), &[&v], MAX);
            let _ = add(&mut v.clone(), &refs[..refs.len().min(20)], 20);
            let _ = add(&mut v.clone(), &[&COUNT33], MAX);
            let _ = debug_decode(&v);
            let _ = debug_getreg(&mut v.clone());
            let _ = to_dense(&mut v.clone());
            let _ = encoding_name(&v);
        }
        for len in 0..40 {
            let mut v = new_hll();
            v.resize(len, 0x41);
            let _ = add(&mut v.clone(), &[b"a"], MAX);
            let _ = count_cached(&mut v.clone());
            let _ = merge(Some(&v), &[], MAX);
            let _ = to_dense(&mut v);
        }
    }

    #[test]
    fn selftest_small() {
        assert_eq!(selftest_run(2, 200_000, MAX, 12345), Ok(()));
    }

    #[test]
    #[cfg_attr(debug_assertions, ignore = "ten million adds: run with optimizations")]
    fn selftest_full() {
        assert_eq!(selftest(), Ok(()));
    }
}
