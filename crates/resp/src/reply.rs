//! Finding reply frame boundaries: what a client (or a test) needs to split a byte stream
//! of RESP2/RESP3 replies into whole replies without interpreting them.

use crate::number::parse_i64_strict;

/// A malformed reply stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameError {
    pub offset: usize,
}

/// Length of the first complete reply in `buf` (attributes count as part of the reply they
/// precede), `Ok(None)` if more bytes are needed.
pub fn reply_frame_len(buf: &[u8]) -> Result<Option<usize>, FrameError> {
    let mut pos = 0;
    // Elements still to read, as a stack-free counter: aggregates add their children.
    let mut pending: u64 = 1;
    while pending > 0 {
        let Some(line_len) = memchr::memmem::find(&buf[pos..], b"\r\n") else {
            return Ok(None);
        };
        if line_len == 0 {
            return Err(FrameError { offset: pos });
        }
        let kind = buf[pos];
        let body = &buf[pos + 1..pos + line_len];
        let next = pos + line_len + 2;
        let count = || parse_i64_strict(body).ok_or(FrameError { offset: pos });
        pending -= 1;
        match kind {
            b'+' | b'-' | b':' | b',' | b'#' | b'_' | b'(' => pos = next,
            b'$' | b'=' | b'!' => {
                let n = count()?;
                if n < 0 {
                    pos = next;
                } else {
                    let end = next + n as usize + 2;
                    if buf.len() < end {
                        return Ok(None);
                    }
                    pos = end;
                }
            }
            b'*' | b'~' | b'>' => {
                let n = count()?;
                pending += n.max(0) as u64;
                pos = next;
            }
            b'%' => {
                pending += 2 * count()?.max(0) as u64;
                pos = next;
            }
            // An attribute map is followed by the reply it annotates.
            b'|' => {
                pending += 2 * count()?.max(0) as u64 + 1;
                pos = next;
            }
            _ => return Err(FrameError { offset: pos }),
        }
    }
    Ok(Some(pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames() {
        assert_eq!(reply_frame_len(b"+OK\r\n+x"), Ok(Some(5)));
        assert_eq!(reply_frame_len(b"$3\r\nabc\r\n"), Ok(Some(9)));
        assert_eq!(reply_frame_len(b"$3\r\nab"), Ok(None));
        assert_eq!(reply_frame_len(b"*2\r\n:1\r\n$-1\r\n"), Ok(Some(13)));
        assert_eq!(reply_frame_len(b"%1\r\n+a\r\n:1\r\n"), Ok(Some(12)));
        assert_eq!(reply_frame_len(b"*-1\r\n"), Ok(Some(5)));
        assert_eq!(reply_frame_len(b"*1\r\n"), Ok(None));
        assert!(reply_frame_len(b"?\r\n").is_err());
    }
}
