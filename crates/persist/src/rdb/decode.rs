//! Reading the RDB primitives from any `Read`, with the running CRC64 and byte count.
//!
//! Nothing here trusts a length from the input: strings are read in bounded chunks, so a
//! corrupt length fails at the end of the input instead of allocating gigabytes, and
//! collection preallocation is capped (`prealloc`).

use std::io::Read;

use super::crc64::crc64;
use super::encode::ENC_LZF;
use super::error::RdbError;
use super::lzf;

/// Strings are read in pieces of at most this many bytes.
const READ_CHUNK: usize = 1 << 20;
/// Collections preallocate at most this many elements before seeing them.
const PREALLOC_MAX: usize = 4096;

/// Capacity to reserve for `n` announced elements.
pub(crate) fn prealloc(n: u64) -> usize {
    n.min(PREALLOC_MAX as u64) as usize
}

/// An RDB byte source: the reader, the CRC64 of everything read so far and the offset.
pub struct Input<R> {
    reader: R,
    crc: u64,
    checksum: bool,
    offset: u64,
}

/// A string as `rdbGenericLoadStringObject` returns it: an integer encoding, or bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RdbString {
    Int(i64),
    Bytes(Vec<u8>),
}

impl RdbString {
    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            RdbString::Int(v) => v.to_string().into_bytes(),
            RdbString::Bytes(b) => b,
        }
    }
}

impl<R: Read> Input<R> {
    /// A source that computes the CRC64 of what it reads when `checksum` is set.
    pub fn new(reader: R, checksum: bool) -> Self {
        Self { reader, crc: 0, checksum, offset: 0 }
    }

    /// The CRC64 of everything read so far (0 when not computed).
    pub fn crc(&self) -> u64 {
        self.crc
    }

    /// Bytes read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub(crate) fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), RdbError> {
        self.reader.read_exact(buf)?;
        if self.checksum {
            self.crc = crc64(self.crc, buf);
        }
        self.offset += buf.len() as u64;
        Ok(())
    }

    pub fn byte(&mut self) -> Result<u8, RdbError> {
        let mut b = [0u8; 1];
        self.read_exact(&mut b)?;
        Ok(b[0])
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], RdbError> {
        let mut b = [0u8; N];
        self.read_exact(&mut b)?;
        Ok(b)
    }

    /// `n` bytes, read in bounded chunks.
    pub(crate) fn bytes(&mut self, n: u64) -> Result<Vec<u8>, RdbError> {
        let n = usize::try_from(n).map_err(|_| RdbError::ShortRead)?;
        let mut v = Vec::with_capacity(n.min(READ_CHUNK));
        while v.len() < n {
            let start = v.len();
            let take = (n - start).min(READ_CHUNK);
            v.resize(start + take, 0);
            self.read_exact(&mut v[start..])?;
        }
        Ok(v)
    }

    /// `rdbLoadLenByRef`: a length, or (true, encoding) for a special string encoding.
    pub(crate) fn len_or_enc(&mut self) -> Result<(bool, u64), RdbError> {
        let b = self.byte()?;
        match b >> 6 {
            3 => Ok((true, u64::from(b & 0x3f))),
            0 => Ok((false, u64::from(b & 0x3f))),
            1 => Ok((false, (u64::from(b & 0x3f) << 8) | u64::from(self.byte()?))),
            _ => match b {
                0x80 => Ok((false, u64::from(u32::from_be_bytes(self.array()?)))),
                0x81 => Ok((false, u64::from_be_bytes(self.array()?))),
                _ => Err(RdbError::corrupt(format!("Unknown length encoding {} in rdbLoadLen()", b >> 6))),
            },
        }
    }

    /// `rdbLoadLen`: a plain length (a special encoding here is corrupt data).
    pub(crate) fn len(&mut self) -> Result<u64, RdbError> {
        match self.len_or_enc()? {
            (false, n) => Ok(n),
            (true, _) => Err(RdbError::corrupt("Unexpected string encoding where a length was expected")),
        }
    }

    /// `rdbGenericLoadStringObject`.
    pub(crate) fn string(&mut self) -> Result<RdbString, RdbError> {
        let (encoded, n) = self.len_or_enc()?;
        if !encoded {
            return Ok(RdbString::Bytes(self.bytes(n)?));
        }
        match n as u8 {
            0 => Ok(RdbString::Int(i64::from(self.byte()? as i8))),
            1 => Ok(RdbString::Int(i64::from(i16::from_le_bytes(self.array()?)))),
            2 => Ok(RdbString::Int(i64::from(i32::from_le_bytes(self.array()?)))),
            ENC_LZF => {
                let clen = self.len()?;
                let len = self.len()?;
                let packed = self.bytes(clen)?;
                let len = usize::try_from(len).map_err(|_| RdbError::ShortRead)?;
                // An expansion beyond LZF's best ratio is corrupt, whatever the header says.
                if len > packed.len().saturating_mul(300) + 64 {
                    return Err(RdbError::corrupt("Invalid LZF compressed string"));
                }
                lzf::decompress(&packed, len)
                    .map(RdbString::Bytes)
                    .ok_or_else(|| RdbError::corrupt("Invalid LZF compressed string"))
            }
            e => Err(RdbError::corrupt(format!("Unknown RDB string encoding type {e}"))),
        }
    }

    /// A string as bytes (integers in decimal).
    pub(crate) fn string_bytes(&mut self) -> Result<Vec<u8>, RdbError> {
        Ok(self.string()?.into_bytes())
    }

    pub(crate) fn ms_time(&mut self) -> Result<i64, RdbError> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    pub(crate) fn binary_double(&mut self) -> Result<f64, RdbError> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// `rdbLoadDoubleValue`: the old text encoding (RDB type ZSET).
    pub(crate) fn text_double(&mut self) -> Result<f64, RdbError> {
        let len = self.byte()?;
        match len {
            255 => Ok(f64::NEG_INFINITY),
            254 => Ok(f64::INFINITY),
            253 => Ok(f64::NAN),
            _ => {
                let text = self.bytes(u64::from(len))?;
                parse_double(&text).ok_or_else(|| RdbError::corrupt("Invalid double value"))
            }
        }
    }
}

/// A double as C's strtod/sscanf("%lg") reads the text Redis writes ("inf", "-inf", "nan"
/// and decimal or exponent forms).
pub(crate) fn parse_double(text: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(text).ok()?.trim();
    match s.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        "nan" | "-nan" => Some(f64::NAN),
        _ => s.parse::<f64>().ok(),
    }
}
