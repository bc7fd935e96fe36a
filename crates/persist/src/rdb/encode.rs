//! Writing the RDB primitives: lengths, strings (integer-encoded or LZF-compressed when
//! that is what Redis would write), doubles, times. Everything goes to a byte buffer; the
//! file writer flushes it.

use super::lzf;

/// The 2-bit length type `11`: what follows is a special encoding.
const ENCVAL: u8 = 3;
const ENC_INT8: u8 = 0;
const ENC_INT16: u8 = 1;
const ENC_INT32: u8 = 2;
pub(crate) const ENC_LZF: u8 = 3;

/// A buffer of RDB bytes and the save options that shape them.
#[derive(Debug, Default)]
pub(crate) struct Output {
    pub buf: Vec<u8>,
    /// `rdbcompression`: LZF-compress strings longer than 20 bytes when it saves space.
    pub compress: bool,
}

impl Output {
    pub fn new(compress: bool) -> Self {
        Self { buf: Vec::new(), compress }
    }

    pub fn byte(&mut self, b: u8) {
        self.buf.push(b);
    }

    /// `rdbSaveLen`: 6-bit, 14-bit, 32-bit or 64-bit length.
    pub fn len(&mut self, len: u64) {
        if len < 1 << 6 {
            self.buf.push(len as u8);
        } else if len < 1 << 14 {
            self.buf.push(((len >> 8) as u8) | 0x40);
            self.buf.push(len as u8);
        } else if len <= u64::from(u32::MAX) {
            self.buf.push(0x80);
            self.buf.extend_from_slice(&(len as u32).to_be_bytes());
        } else {
            self.buf.push(0x81);
            self.buf.extend_from_slice(&len.to_be_bytes());
        }
    }

    /// `rdbEncodeInteger`: the value as an 8, 16 or 32-bit integer string, if it fits.
    fn try_int(&mut self, v: i64) -> bool {
        if let Ok(b) = i8::try_from(v) {
            self.buf.extend_from_slice(&[(ENCVAL << 6) | ENC_INT8, b as u8]);
        } else if let Ok(h) = i16::try_from(v) {
            self.buf.push((ENCVAL << 6) | ENC_INT16);
            self.buf.extend_from_slice(&h.to_le_bytes());
        } else if let Ok(w) = i32::try_from(v) {
            self.buf.push((ENCVAL << 6) | ENC_INT32);
            self.buf.extend_from_slice(&w.to_le_bytes());
        } else {
            return false;
        }
        true
    }

    /// `rdbSaveRawString`: an integer encoding for short decimal strings, LZF for longer
    /// ones when compression is on and it saves at least 4 bytes, else verbatim.
    pub fn string(&mut self, s: &[u8]) {
        if s.len() <= 11 {
            if let Some(v) = quince_resp::parse_i64_strict(s) {
                if self.try_int(v) {
                    return;
                }
            }
        }
        if self.compress && s.len() > 20 {
            if let Some(packed) = lzf::compress(s, s.len() - 4) {
                self.lzf_blob(&packed, s.len());
                return;
            }
        }
        self.len(s.len() as u64);
        self.buf.extend_from_slice(s);
    }

    /// `rdbSaveLzfBlob`: LZF data that expands to `original_len` bytes.
    pub fn lzf_blob(&mut self, packed: &[u8], original_len: usize) {
        self.buf.push((ENCVAL << 6) | ENC_LZF);
        self.len(packed.len() as u64);
        self.len(original_len as u64);
        self.buf.extend_from_slice(packed);
    }

    /// `rdbSaveLongLongAsStringObject`: an integer-encoded string object.
    pub fn int_string(&mut self, v: i64) {
        if !self.try_int(v) {
            let text = quince_resp::format_i64(v);
            self.len(text.as_bytes().len() as u64);
            self.buf.extend_from_slice(text.as_bytes());
        }
    }

    /// `rdbSaveMillisecondTime`: i64 little endian.
    pub fn ms_time(&mut self, t: i64) {
        self.buf.extend_from_slice(&t.to_le_bytes());
    }

    /// `rdbSaveBinaryDoubleValue`: IEEE 754 binary64, little endian.
    pub fn binary_double(&mut self, d: f64) {
        self.buf.extend_from_slice(&d.to_le_bytes());
    }

    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_strings() {
        let mut o = Output::new(true);
        o.len(63);
        o.len(64);
        o.len(16383);
        o.len(16384);
        o.len(1 << 40);
        assert_eq!(o.buf, [63, 0x40, 64, 0x7f, 0xff, 0x80, 0, 0, 0x40, 0, 0x81, 0, 0, 1, 0, 0, 0, 0, 0]);
        let mut o = Output::new(true);
        o.string(b"12");
        o.string(b"-300");
        o.string(b"100000");
        o.string(b"012");
        o.string(b"12345678901");
        assert_eq!(
            o.buf,
            [
                0xc0, 12, 0xc1, 0xd4, 0xfe, 0xc2, 0xa0, 0x86, 1, 0, 3, b'0', b'1', b'2', 11, b'1', b'2', b'3', b'4',
                b'5', b'6', b'7', b'8', b'9', b'0', b'1'
            ]
        );
    }
}
