//! A quick look ahead in a pipeline: where the next request ends and what its first
//! argument after the command name is (usually its key), without decoding it, so a server
//! can prefetch the keys of the requests it is about to run.

/// For the multibulk request at the start of `buf`: its length in bytes and the span of its
/// second argument (None for a request with fewer than two arguments). None when the
/// request is incomplete, inline, unusually long-headed or malformed: the decoder proper
/// deals with those.
pub fn peek_request(buf: &[u8]) -> Option<(usize, Option<std::ops::Range<usize>>)> {
    let mut at = 0;
    let count = header(buf, &mut at, b'*')?;
    let mut second = None;
    for i in 0..count {
        let len = header(buf, &mut at, b'$')?;
        let end = at.checked_add(len)?;
        if buf.get(end..end + 2)? != b"\r\n" {
            return None;
        }
        if i == 1 {
            second = Some(at..end);
        }
        at = end + 2;
    }
    Some((at, second))
}

/// Reads `<marker><digits>\r\n` at `*at`, moving past it: the number (at most 10 digits).
fn header(buf: &[u8], at: &mut usize, marker: u8) -> Option<usize> {
    let rest = buf.get(*at..)?;
    if rest.first() != Some(&marker) {
        return None;
    }
    let mut n = 0usize;
    for (i, &b) in rest.iter().enumerate().skip(1).take(11) {
        if b.is_ascii_digit() {
            n = n.checked_mul(10)?.checked_add(usize::from(b - b'0'))?;
        } else if b == b'\r' && i > 1 && rest.get(i + 1) == Some(&b'\n') {
            *at += i + 2;
            return Some(n);
        } else {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_key_and_the_end_of_each_request() {
        let mut buf = Vec::new();
        crate::encode_command(&mut buf, &[&b"GET"[..], b"key:1"]);
        let first = buf.len();
        crate::encode_command(&mut buf, &[&b"SET"[..], b"k", b"value with\r\nbytes"]);
        crate::encode_command(&mut buf, &[&b"PING"[..]]);
        let (len, key) = peek_request(&buf).unwrap();
        assert_eq!((len, &buf[key.unwrap()]), (first, &b"key:1"[..]));
        let (len2, key) = peek_request(&buf[first..]).unwrap();
        assert_eq!(&buf[first..][key.unwrap()], b"k");
        let (len3, key) = peek_request(&buf[first + len2..]).unwrap();
        assert_eq!((first + len2 + len3, key), (buf.len(), None));
        // Every incomplete prefix, inline commands and junk: left to the decoder.
        for cut in 0..first {
            assert_eq!(peek_request(&buf[..cut]), None, "cut at {cut}");
        }
        for junk in
            [&b"GET k\r\n"[..], b"*1\r\n$3\r\nGETX\r\n", b"*-1\r\n", b"*1\r\n$99999999999\r\n", b"*2\r\n$1\r\nx\n"]
        {
            assert_eq!(peek_request(junk), None, "{:?}", String::from_utf8_lossy(junk));
        }
        assert_eq!(peek_request(b"*0\r\n"), Some((4, None)));
    }
}
