//! A quick look ahead in a pipeline: where the next request ends and where its first few
//! arguments are, without decoding it, so a server can prefetch the keys of the requests
//! it is about to run.

/// How many leading arguments `peek_request` reports: enough for the name, a key, and the
/// first key of EVAL, EVALSHA and FCALL (`name script numkeys key`).
pub const PEEKED_ARGS: usize = 4;

/// A request seen by `peek_request`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peeked {
    /// Its length in bytes.
    pub len: usize,
    /// Its argument count.
    pub count: usize,
    /// The spans of its first `count.min(PEEKED_ARGS)` arguments (the rest are empty).
    pub args: [std::ops::Range<usize>; PEEKED_ARGS],
}

impl Peeked {
    /// The span of argument `i`, if the request has it and it is among the first
    /// `PEEKED_ARGS`.
    pub fn arg(&self, i: usize) -> Option<std::ops::Range<usize>> {
        (i < self.count.min(PEEKED_ARGS)).then(|| self.args[i].clone())
    }
}

/// The multibulk request at the start of `buf`. None when the request is incomplete,
/// inline, unusually long-headed or malformed: the decoder proper deals with those.
pub fn peek_request(buf: &[u8]) -> Option<Peeked> {
    let mut at = 0;
    let count = header(buf, &mut at, b'*')?;
    let mut args: [std::ops::Range<usize>; PEEKED_ARGS] = Default::default();
    for i in 0..count {
        let len = header(buf, &mut at, b'$')?;
        let end = at.checked_add(len)?;
        if buf.get(end..end + 2)? != b"\r\n" {
            return None;
        }
        if let Some(span) = args.get_mut(i) {
            *span = at..end;
        }
        at = end + 2;
    }
    Some(Peeked { len: at, count, args })
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
    fn finds_the_first_arguments_and_the_end_of_each_request() {
        let mut buf = Vec::new();
        crate::encode_command(&mut buf, &[&b"GET"[..], b"key:1"]);
        let first = buf.len();
        crate::encode_command(&mut buf, &[&b"EVALSHA"[..], b"sha", b"1", b"value with\r\nbytes", b"arg"]);
        crate::encode_command(&mut buf, &[&b"PING"[..]]);
        let one = peek_request(&buf).unwrap();
        assert_eq!((one.len, one.count, &buf[one.arg(1).unwrap()]), (first, 2, &b"key:1"[..]));
        assert_eq!(one.arg(2), None);
        let rest = &buf[first..];
        let two = peek_request(rest).unwrap();
        assert_eq!(two.count, 5);
        let spans: Vec<&[u8]> = (0..5).filter_map(|i| two.arg(i)).map(|r| &rest[r]).collect();
        assert_eq!(spans, [&b"EVALSHA"[..], b"sha", b"1", b"value with\r\nbytes"]);
        let three = peek_request(&rest[two.len..]).unwrap();
        assert_eq!((first + two.len + three.len, three.count, three.arg(1)), (buf.len(), 1, None));
        // Every incomplete prefix, inline commands and junk: left to the decoder.
        for cut in 0..first {
            assert_eq!(peek_request(&buf[..cut]), None, "cut at {cut}");
        }
        for junk in
            [&b"GET k\r\n"[..], b"*1\r\n$3\r\nGETX\r\n", b"*-1\r\n", b"*1\r\n$99999999999\r\n", b"*2\r\n$1\r\nx\n"]
        {
            assert_eq!(peek_request(junk), None, "{:?}", String::from_utf8_lossy(junk));
        }
        assert_eq!(peek_request(b"*0\r\n").map(|p| (p.len, p.count)), Some((4, 0)));
    }
}
