//! Incremental request decoder: multibulk (`*N\r\n$len\r\n...`) and inline commands, with
//! redis-server's exact protocol errors and limits (see `processMultibulkBuffer` and
//! `processInlineBuffer` in Redis's networking.c).

use crate::number::parse_i64_strict;
use crate::split::split_args;

/// Longest inline request, or unterminated count line, Redis buffers before giving up.
pub const PROTO_INLINE_MAX_SIZE: usize = 64 * 1024;
/// Redis's default `proto-max-bulk-len` (512 MB).
pub const DEFAULT_PROTO_MAX_BULK_LEN: i64 = 512 * 1024 * 1024;

/// A protocol error. Redis replies `-ERR <message>` and closes the connection after the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProtocolError {
    TooBigInlineRequest,
    UnbalancedQuotes,
    TooBigMultibulkCount,
    InvalidMultibulkLength,
    TooBigBulkCount,
    ExpectedDollar(u8),
    InvalidBulkLength,
    /// Before AUTH: more than 10 arguments.
    UnauthenticatedMultibulkLength,
    /// Before AUTH: an argument over 16 KB.
    UnauthenticatedBulkLength,
}

impl ProtocolError {
    /// The error text after `-ERR `, byte for byte as Redis sends it.
    pub fn message(&self) -> Vec<u8> {
        let text: &[u8] = match self {
            Self::TooBigInlineRequest => b"Protocol error: too big inline request",
            Self::UnbalancedQuotes => b"Protocol error: unbalanced quotes in request",
            Self::TooBigMultibulkCount => b"Protocol error: too big mbulk count string",
            Self::InvalidMultibulkLength => b"Protocol error: invalid multibulk length",
            Self::TooBigBulkCount => b"Protocol error: too big bulk count string",
            Self::InvalidBulkLength => b"Protocol error: invalid bulk length",
            Self::UnauthenticatedMultibulkLength => b"Protocol error: unauthenticated multibulk length",
            Self::UnauthenticatedBulkLength => b"Protocol error: unauthenticated bulk length",
            Self::ExpectedDollar(got) => {
                let mut m = b"Protocol error: expected '$', got '".to_vec();
                m.push(*got);
                m.push(b'\'');
                return m;
            }
        };
        text.to_vec()
    }
}

/// The first `\r` in `hay`. PERF: count and length lines are a few bytes long, where a
/// plain scan costs a fraction of memchr's set-up; longer lines go to memchr.
#[inline]
fn find_cr(hay: &[u8]) -> Option<usize> {
    let head = hay.len().min(16);
    if let Some(i) = hay[..head].iter().position(|&b| b == b'\r') {
        return Some(i);
    }
    memchr::memchr(b'\r', &hay[head..]).map(|i| i + head)
}

/// The number written at `buf[at..]` up to a `\r` followed by one more byte (Redis takes
/// that byte for the `\n`): its value and where the next line starts. Only plain numbers
/// of up to 9 digits: `0`, or a digit 1-9 and more digits; None for anything else.
#[inline]
fn plain_number(buf: &[u8], at: usize) -> Option<(usize, usize)> {
    const MAX_DIGITS: usize = 9;
    let mut value = 0usize;
    let mut i = at;
    loop {
        let byte = *buf.get(i)?;
        match byte {
            b'0'..=b'9' if i - at < MAX_DIGITS && !(i > at && value == 0) => {
                value = value * 10 + usize::from(byte - b'0');
            }
            b'\r' if i > at => break,
            _ => return None,
        }
        i += 1;
    }
    (i + 1 < buf.len()).then_some((value, i + 2))
}

/// What one call to [`RequestDecoder::decode`] found at the start of the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    /// A complete request of `len` bytes; its arguments are available through `args`.
    Request { len: usize },
    /// `len` bytes that hold no command (an empty inline line, `*0`, `*-1`): skip them.
    Empty { len: usize },
    /// More bytes are needed. Call again with the same bytes plus whatever arrives next.
    Incomplete,
}

#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    len: usize,
    /// Inline arguments are unescaped, so they live in the decoder, not the read buffer.
    inline: bool,
}

/// Decodes one request at a time from the front of a read buffer.
///
/// Multibulk arguments are zero-copy: they are slices of the caller's buffer. The decoder
/// keeps its progress inside a partly received request, so a large pipelined or
/// slowly-arriving request is scanned once, not once per read.
#[derive(Debug)]
pub struct RequestDecoder {
    max_bulk_len: i64,
    /// Offset inside the current request up to which it has been parsed.
    pos: usize,
    /// Arguments still expected in the current multibulk (0 when between requests).
    args_remaining: usize,
    bulk_len: Option<usize>,
    spans: Vec<Span>,
    inline: Vec<u8>,
    /// The client has not authenticated: Redis's smaller limits apply, so a stranger
    /// can't make the server buffer much before being refused.
    unauthenticated: bool,
}

/// Before AUTH, Redis refuses requests of more arguments, or with longer ones, than these.
const UNAUTHENTICATED_MAX_ARGS: i64 = 10;
const UNAUTHENTICATED_MAX_BULK: usize = 16 * 1024;

impl RequestDecoder {
    pub fn new(max_bulk_len: i64) -> Self {
        Self {
            max_bulk_len,
            pos: 0,
            args_remaining: 0,
            bulk_len: None,
            spans: Vec::with_capacity(8),
            inline: Vec::new(),
            unauthenticated: false,
        }
    }

    /// Whether the client has yet to authenticate (see `unauthenticated`).
    pub fn set_unauthenticated(&mut self, unauthenticated: bool) {
        self.unauthenticated = unauthenticated;
    }

    /// Changes `proto-max-bulk-len` for requests that start after this call.
    pub fn set_max_bulk_len(&mut self, max_bulk_len: i64) {
        self.max_bulk_len = max_bulk_len;
    }

    /// Decodes the request at the front of `buf`.
    ///
    /// `buf` must start where the current request starts; after `Incomplete` the next call
    /// must pass the same bytes (possibly moved) followed by new ones.
    pub fn decode(&mut self, buf: &[u8]) -> Result<Decoded, ProtocolError> {
        self.decode_with(buf, true)
    }

    /// `decode`, with or without the one-pass read of a whole request (`decode_whole`; the
    /// tests compare the two).
    fn decode_with(&mut self, buf: &[u8], one_pass: bool) -> Result<Decoded, ProtocolError> {
        if buf.is_empty() {
            return Ok(Decoded::Incomplete);
        }
        if one_pass && buf[0] == b'*' && self.args_remaining == 0 && !self.unauthenticated {
            if let Some(len) = self.decode_whole(buf) {
                return Ok(Decoded::Request { len });
            }
        }
        let result = if buf[0] == b'*' { self.decode_multibulk(buf) } else { self.decode_inline(buf) };
        if !matches!(result, Ok(Decoded::Incomplete)) {
            self.pos = 0;
            self.args_remaining = 0;
            self.bulk_len = None;
        }
        result
    }

    /// Bytes the current partial request still needs at least, as a read-size hint.
    pub fn bytes_wanted(&self) -> usize {
        self.bulk_len.map_or(0, |len| self.pos + len + 2)
    }

    /// Gives back the memory a request with very many arguments made the decoder keep
    /// (call between requests; Redis frees a big argv once the command ran too).
    pub fn release_spare(&mut self) {
        const KEEP: usize = 1024;
        if self.args_remaining == 0 && self.spans.capacity() > KEEP {
            self.spans = Vec::with_capacity(8);
        }
        if self.inline.capacity() > KEEP * 64 {
            self.inline = Vec::new();
        }
    }

    pub fn argc(&self) -> usize {
        self.spans.len()
    }

    /// The arguments of the last complete request. `buf` is the buffer it was decoded from.
    pub fn args<'a>(&'a self, buf: &'a [u8]) -> impl ExactSizeIterator<Item = &'a [u8]> + 'a {
        self.spans.iter().map(move |s| {
            let src = if s.inline { &self.inline[..] } else { buf };
            &src[s.start..s.start + s.len]
        })
    }

    /// PERF: a multibulk request wholly in `buf` whose count and lengths are plain
    /// numbers (digits, no sign or leading zero, within the limits), as nearly every
    /// request is, read in one pass: the request's length, its arguments in `spans`. None
    /// for anything else (incomplete, an error, an empty or very long request), with
    /// nothing kept: `decode_multibulk` then reads it from its start and says what it is.
    /// The two paths agree on every request the fast one takes (tests below).
    fn decode_whole(&mut self, buf: &[u8]) -> Option<usize> {
        /// Most arguments the one-pass read takes (a longer request may well be partial).
        const MAX_ARGS: usize = 1024;
        let (count, mut pos) = plain_number(buf, 1)?;
        if count == 0 || count > MAX_ARGS {
            return None;
        }
        self.spans.clear();
        for _ in 0..count {
            let bulk = match buf.get(pos) {
                Some(b'$') => plain_number(buf, pos + 1).filter(|&(len, _)| len as i64 <= self.max_bulk_len),
                _ => None,
            };
            // (Redis does not check the two bytes after the payload; it skips them.)
            let Some((len, start)) = bulk.filter(|&(len, start)| buf.len() - start >= len + 2) else {
                self.spans.clear();
                return None;
            };
            self.spans.push(Span { start, len, inline: false });
            pos = start + len + 2;
        }
        Some(pos)
    }

    fn decode_multibulk(&mut self, buf: &[u8]) -> Result<Decoded, ProtocolError> {
        if self.args_remaining == 0 {
            let Some(cr) = find_cr(buf) else {
                if buf.len() > PROTO_INLINE_MAX_SIZE {
                    return Err(ProtocolError::TooBigMultibulkCount);
                }
                return Ok(Decoded::Incomplete);
            };
            // Redis needs the byte after '\r' to be present too (it assumes it is '\n').
            if cr + 1 >= buf.len() {
                return Ok(Decoded::Incomplete);
            }
            let count = match parse_i64_strict(&buf[1..cr]) {
                Some(n) if n <= i64::from(i32::MAX) => n,
                _ => return Err(ProtocolError::InvalidMultibulkLength),
            };
            if self.unauthenticated && count > UNAUTHENTICATED_MAX_ARGS {
                return Err(ProtocolError::UnauthenticatedMultibulkLength);
            }
            self.pos = cr + 2;
            if count <= 0 {
                return Ok(Decoded::Empty { len: self.pos });
            }
            self.args_remaining = count as usize;
            self.spans.clear();
        }
        while self.args_remaining > 0 {
            let len = match self.bulk_len {
                Some(len) => len,
                None => {
                    let rest = &buf[self.pos..];
                    let Some(cr) = find_cr(rest) else {
                        if rest.len() > PROTO_INLINE_MAX_SIZE {
                            return Err(ProtocolError::TooBigBulkCount);
                        }
                        return Ok(Decoded::Incomplete);
                    };
                    if cr + 1 >= rest.len() {
                        return Ok(Decoded::Incomplete);
                    }
                    if rest[0] != b'$' {
                        return Err(ProtocolError::ExpectedDollar(rest[0]));
                    }
                    let len = match parse_i64_strict(&rest[1..cr]) {
                        Some(n) if n >= 0 && n <= self.max_bulk_len => n as usize,
                        _ => return Err(ProtocolError::InvalidBulkLength),
                    };
                    if self.unauthenticated && len > UNAUTHENTICATED_MAX_BULK {
                        return Err(ProtocolError::UnauthenticatedBulkLength);
                    }
                    self.pos += cr + 2;
                    self.bulk_len = Some(len);
                    len
                }
            };
            // Redis does not check the two bytes after the payload; it skips them.
            if buf.len() - self.pos < len + 2 {
                return Ok(Decoded::Incomplete);
            }
            self.spans.push(Span { start: self.pos, len, inline: false });
            self.pos += len + 2;
            self.bulk_len = None;
            self.args_remaining -= 1;
        }
        Ok(Decoded::Request { len: self.pos })
    }

    fn decode_inline(&mut self, buf: &[u8]) -> Result<Decoded, ProtocolError> {
        let Some(newline) = memchr::memchr(b'\n', buf) else {
            if buf.len() > PROTO_INLINE_MAX_SIZE {
                return Err(ProtocolError::TooBigInlineRequest);
            }
            return Ok(Decoded::Incomplete);
        };
        let line_end = if newline > 0 && buf[newline - 1] == b'\r' { newline - 1 } else { newline };
        let args = split_args(&buf[..line_end]).ok_or(ProtocolError::UnbalancedQuotes)?;
        let len = newline + 1;
        if args.is_empty() {
            return Ok(Decoded::Empty { len });
        }
        self.spans.clear();
        self.inline.clear();
        for arg in args {
            self.spans.push(Span { start: self.inline.len(), len: arg.len(), inline: true });
            self.inline.extend_from_slice(&arg);
        }
        Ok(Decoded::Request { len })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, ProtocolError> {
        let mut d = RequestDecoder::new(DEFAULT_PROTO_MAX_BULK_LEN);
        let mut pos = 0;
        let mut out = Vec::new();
        loop {
            match d.decode(&input[pos..])? {
                Decoded::Request { len } => {
                    out.push(d.args(&input[pos..]).map(|a| a.to_vec()).collect());
                    pos += len;
                }
                Decoded::Empty { len } => pos += len,
                Decoded::Incomplete => return Ok(out),
            }
        }
    }

    #[test]
    fn a_huge_request_leaves_no_huge_buffers_behind() {
        let mut d = RequestDecoder::new(DEFAULT_PROTO_MAX_BULK_LEN);
        let mut req = b"*100001\r\n$4\r\nSADD\r\n".to_vec();
        for _ in 0..100_000 {
            req.extend_from_slice(b"$1\r\nx\r\n");
        }
        assert_eq!(d.decode(&req), Ok(Decoded::Request { len: req.len() }));
        assert_eq!(d.args(&req).count(), 100_001);
        d.release_spare();
        assert!(d.spans.capacity() <= 1024, "{}", d.spans.capacity());
        let ping = b"*1\r\n$4\r\nPING\r\n";
        assert_eq!(d.decode(ping), Ok(Decoded::Request { len: ping.len() }));
        assert_eq!(d.args(ping).collect::<Vec<_>>(), vec![&b"PING"[..]]);
    }

    #[test]
    fn multibulk_and_inline() {
        let reqs = decode_all(b"*1\r\n$4\r\nPING\r\nset a 'b c'\r\n\r\n*0\r\n*-1\r\nget a\n").unwrap();
        assert_eq!(reqs.len(), 3);
        assert_eq!(reqs[0], vec![b"PING".to_vec()]);
        assert_eq!(reqs[1], vec![b"set".to_vec(), b"a".to_vec(), b"b c".to_vec()]);
        assert_eq!(reqs[2], vec![b"get".to_vec(), b"a".to_vec()]);
    }

    #[test]
    fn byte_at_a_time_gives_same_result() {
        let input = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123456789\r\n";
        let mut d = RequestDecoder::new(DEFAULT_PROTO_MAX_BULK_LEN);
        for end in 0..input.len() {
            assert_eq!(d.decode(&input[..end]), Ok(Decoded::Incomplete), "at {end}");
        }
        assert_eq!(d.decode(input), Ok(Decoded::Request { len: input.len() }));
        assert_eq!(d.args(input).nth(2).unwrap(), b"0123456789");
    }

    #[test]
    fn protocol_errors() {
        let err = |i: &[u8]| decode_all(i).unwrap_err();
        assert_eq!(err(b"*x\r\n"), ProtocolError::InvalidMultibulkLength);
        assert_eq!(err(b"*2147483648\r\n"), ProtocolError::InvalidMultibulkLength);
        assert_eq!(err(b"*1\r\nfoo\r\n"), ProtocolError::ExpectedDollar(b'f'));
        assert_eq!(err(b"*1\r\n$-1\r\n"), ProtocolError::InvalidBulkLength);
        assert_eq!(err(b"*1\r\n$1073741824\r\n"), ProtocolError::InvalidBulkLength);
        assert_eq!(err(b"*1\r\n$abc\r\n"), ProtocolError::InvalidBulkLength);
        assert_eq!(err(b"set \"a\n"), ProtocolError::UnbalancedQuotes);
        assert_eq!(err(&vec![b'a'; PROTO_INLINE_MAX_SIZE + 1]), ProtocolError::TooBigInlineRequest);
        let mut big = b"*".to_vec();
        big.extend(vec![b'1'; PROTO_INLINE_MAX_SIZE + 1]);
        assert_eq!(err(&big), ProtocolError::TooBigMultibulkCount);
        let mut big = b"*1\r\n$".to_vec();
        big.extend(vec![b'1'; PROTO_INLINE_MAX_SIZE + 1]);
        assert_eq!(err(&big), ProtocolError::TooBigBulkCount);
    }

    /// What one decoding call returned, with the request's arguments.
    type Step = (Result<Decoded, ProtocolError>, Vec<Vec<u8>>);

    /// Every result of decoding `input` a request at a time, fed in chunks of `chunk`
    /// bytes, with `decode` or with the general path alone.
    fn trace(input: &[u8], chunk: usize, general: bool) -> Vec<Step> {
        let mut d = RequestDecoder::new(DEFAULT_PROTO_MAX_BULK_LEN);
        let (mut start, mut end, mut seen) = (0, 0, Vec::new());
        while start < input.len() && seen.len() < 64 {
            let buf = &input[start..end];
            let result = d.decode_with(buf, !general);
            let args = match result {
                Ok(Decoded::Request { .. }) => d.args(buf).map(|a| a.to_vec()).collect(),
                _ => Vec::new(),
            };
            seen.push((result, args));
            match result {
                Ok(Decoded::Request { len } | Decoded::Empty { len }) => start += len,
                Ok(Decoded::Incomplete) if end < input.len() => end = (end + chunk).min(input.len()),
                _ => break,
            }
        }
        seen
    }

    #[test]
    fn the_one_pass_read_takes_plain_requests() {
        let mut d = RequestDecoder::new(DEFAULT_PROTO_MAX_BULK_LEN);
        let get = b"*2\r\n$3\r\nGET\r\n$10\r\nkey:000001\r\n*1";
        assert_eq!(d.decode_whole(get), Some(get.len() - 2));
        assert_eq!(d.args(get).collect::<Vec<_>>(), vec![&b"GET"[..], b"key:000001"]);
        for other in [&b"*0\r\n"[..], b"*2\r\n$3\r\nGET\r\n$1\r\nk\r", b"*1\r\n$03\r\nGET\r\n", b"*1\r\n+3\r\n"] {
            let mut d = RequestDecoder::new(DEFAULT_PROTO_MAX_BULK_LEN);
            assert_eq!(d.decode_whole(other), None, "{}", String::from_utf8_lossy(other));
            assert!(d.spans.is_empty());
        }
    }

    proptest::proptest! {
        /// The one-pass read agrees with the general path, whatever the bytes: requests of
        /// any arguments, with count or length lines changed (signs, leading zeros,
        /// letters, huge numbers), truncated, fed whole or in small chunks.
        #[test]
        fn the_one_pass_read_agrees_with_the_general_path(
            requests in proptest::collection::vec(
                (proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12), 0..5),
                 proptest::option::of((0usize..64, proptest::sample::select(vec![
                     &b"0"[..], b"00", b"-1", b"+2", b"x", b"\r", b"\n", b"9999999999", b"1024", b"1025", b"$", b"*", b"01",
                 ])))),
                1..4),
            cut in 0usize..200,
            chunk in 1usize..40,
        ) {
            let mut input = Vec::new();
            for (args, edit) in &requests {
                let mut request = format!("*{}\r\n", args.len()).into_bytes();
                for arg in args {
                    request.extend(format!("${}\r\n", arg.len()).into_bytes());
                    request.extend(arg);
                    request.extend(b"\r\n");
                }
                if let Some((at, bytes)) = edit {
                    let at = at % request.len();
                    request.splice(at..at + 1, bytes.iter().copied());
                }
                input.extend(request);
            }
            input.truncate(input.len().saturating_sub(cut % 8));
            for chunk in [input.len().max(1), chunk] {
                proptest::prop_assert_eq!(trace(&input, chunk, false), trace(&input, chunk, true));
            }
        }
    }

    #[test]
    fn requests_before_an_error_are_decoded() {
        let mut d = RequestDecoder::new(DEFAULT_PROTO_MAX_BULK_LEN);
        let input = b"*1\r\n$4\r\nPING\r\n*1\r\n$-5\r\n";
        assert_eq!(d.decode(input), Ok(Decoded::Request { len: 14 }));
        assert_eq!(d.decode(&input[14..]), Err(ProtocolError::InvalidBulkLength));
    }
}
