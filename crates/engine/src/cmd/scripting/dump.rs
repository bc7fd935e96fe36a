//! The FUNCTION DUMP payload, as Redis 7.0 writes it: per library, the RDB opcode
//! RDB_OPCODE_FUNCTION2 (245) and the library's code as an RDB string; then the RDB version
//! (2 bytes, little endian) and a CRC64 (Jones, reflected; 8 bytes, little endian) of
//! everything before it. Strings are written uncompressed (valid RDB; Redis compresses
//! those over 20 bytes with LZF), and read in every RDB string encoding (plain, integer,
//! LZF).

/// The RDB version quince writes (Redis 7.0's).
const RDB_VERSION: u16 = 10;
const OPCODE_FUNCTION2: u8 = 245;
/// The format of Redis 7.0's release candidates: name, engine, description, code.
const OPCODE_FUNCTION_PRE_GA: u8 = 246;

/// FUNCTION DUMP's payload for the libraries' codes.
pub(super) fn dump_payload(codes: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        out.push(OPCODE_FUNCTION2);
        write_len(&mut out, code.len() as u64);
        out.extend_from_slice(code);
    }
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Redis's verifyDumpPayload: the footer's version and checksum.
pub(super) fn payload_valid(payload: &[u8]) -> bool {
    if payload.len() < 10 {
        return false;
    }
    let footer = &payload[payload.len() - 10..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    version <= RDB_VERSION && crc64(&payload[..payload.len() - 8]).to_le_bytes() == footer[2..]
}

/// The library codes of a payload whose footer was checked, up to the first error, and
/// that error (the reply text without `ERR `), as Redis reads them one by one.
pub(super) fn payload_codes(payload: &[u8]) -> (Vec<Vec<u8>>, Option<String>) {
    let data = &payload[..payload.len() - 10];
    let mut pos = 0;
    let mut codes = Vec::new();
    while pos < data.len() {
        let kind = data[pos];
        pos += 1;
        let code = match kind {
            OPCODE_FUNCTION2 => read_string(data, &mut pos).ok_or("Failed loading library payload"),
            OPCODE_FUNCTION_PRE_GA => pre_ga_code(data, &mut pos),
            _ => Err("given type is not a function"),
        };
        match code {
            Ok(code) => codes.push(code),
            Err(e) => return (codes, Some(e.to_string())),
        }
    }
    (codes, None)
}

/// A library in the release-candidate format, turned into code with its shebang line.
fn pre_ga_code(data: &[u8], pos: &mut usize) -> Result<Vec<u8>, &'static str> {
    let name = read_string(data, pos).ok_or("Failed loading library name")?;
    let engine = read_string(data, pos).ok_or("Failed loading engine name")?;
    let has_desc = read_len(data, pos).ok_or("Failed loading library description indicator")?;
    if has_desc.0 != 0 {
        read_string(data, pos).ok_or("Failed loading library description")?;
    }
    let blob = read_string(data, pos).ok_or("Failed loading library blob")?;
    let mut code = b"#!".to_vec();
    code.extend_from_slice(&engine);
    code.extend_from_slice(b" name=");
    code.extend_from_slice(&name);
    code.push(b'\n');
    code.extend_from_slice(&blob);
    Ok(code)
}

/// rdbSaveLen.
fn write_len(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else if n <= u32::MAX as u64 {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// rdbLoadLen: the length, and whether it is an encoding type (RDB_ENCVAL) instead.
fn read_len(data: &[u8], pos: &mut usize) -> Option<(u64, bool)> {
    let b = *data.get(*pos)?;
    *pos += 1;
    let mut take = |n: usize| -> Option<u64> {
        let bytes = data.get(*pos..*pos + n)?;
        *pos += n;
        Some(bytes.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64))
    };
    match b >> 6 {
        0 => Some(((b & 0x3f) as u64, false)),
        1 => Some((((b & 0x3f) as u64) << 8 | take(1)?, false)),
        3 => Some(((b & 0x3f) as u64, true)),
        _ if b == 0x80 => Some((take(4)?, false)),
        _ if b == 0x81 => Some((take(8)?, false)),
        _ => None,
    }
}

/// rdbGenericLoadStringObject: a plain, integer-encoded or LZF-compressed string.
fn read_string(data: &[u8], pos: &mut usize) -> Option<Vec<u8>> {
    let (len, encoded) = read_len(data, pos)?;
    let mut take = |n: usize| -> Option<&[u8]> {
        let bytes = data.get(*pos..pos.checked_add(n)?)?;
        *pos += n;
        Some(bytes)
    };
    if !encoded {
        return take(usize::try_from(len).ok()?).map(|b| b.to_vec());
    }
    let int = |bytes: &[u8]| -> i64 {
        match bytes.len() {
            1 => bytes[0] as i8 as i64,
            2 => i16::from_le_bytes([bytes[0], bytes[1]]) as i64,
            _ => i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as i64,
        }
    };
    match len {
        0 => Some(int(take(1)?).to_string().into_bytes()),
        1 => Some(int(take(2)?).to_string().into_bytes()),
        2 => Some(int(take(4)?).to_string().into_bytes()),
        3 => {
            let (clen, _) = read_len(data, pos)?;
            let (ulen, _) = read_len(data, pos)?;
            let compressed = data.get(*pos..pos.checked_add(usize::try_from(clen).ok()?)?)?;
            *pos += compressed.len();
            lzf_decompress(compressed, usize::try_from(ulen).ok()?)
        }
        _ => None,
    }
}

/// LZF decompression (liblzf's lzf_decompress); None unless exactly `len` bytes come out.
fn lzf_decompress(input: &[u8], len: usize) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(len);
    let mut ip = 0;
    while ip < input.len() {
        let ctrl = input[ip] as usize;
        ip += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            out.extend_from_slice(input.get(ip..ip + run)?);
            ip += run;
        } else {
            let mut run = ctrl >> 5;
            if run == 7 {
                run += *input.get(ip)? as usize;
                ip += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + *input.get(ip)? as usize + 1;
            ip += 1;
            let start = out.len().checked_sub(back)?;
            // Byte by byte: the reference may overlap what it produces.
            for i in 0..run + 2 {
                let b = out[start + i];
                out.push(b);
            }
        }
        if out.len() > len {
            return None;
        }
    }
    (out.len() == len).then_some(out)
}

/// Redis's crc64: Jones polynomial, reflected input and output, initial value 0.
fn crc64(data: &[u8]) -> u64 {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut crc = 0u64;
    for &b in data {
        crc ^= b as u64;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ POLY } else { crc >> 1 };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_matches_redis() {
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn payload_round_trip_and_encodings() {
        let codes = vec![b"#!lua name=a\ncode".to_vec(), vec![b'x'; 20_000]];
        let payload = dump_payload(&codes);
        assert!(payload_valid(&payload));
        assert_eq!(payload_codes(&payload), (codes, None));
        let mut bad = payload.clone();
        bad[3] ^= 1;
        assert!(!payload_valid(&bad));
        // LZF: a literal run of "ab", then a back reference of 4 bytes at distance 2.
        let mut pos = 0;
        assert_eq!(read_string(&[0xc3, 5, 6, 0x01, b'a', b'b', 0x40, 0x01], &mut pos), Some(b"ababab".to_vec()));
        let mut pos = 0;
        assert_eq!(read_string(&[0xc1, 0x39, 0x30], &mut pos), Some(b"12345".to_vec()));
    }
}
