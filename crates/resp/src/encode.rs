//! Reply encoding: RESP3 types, down-converted to RESP2 exactly as Redis does
//! (see the `addReply*` family in Redis's networking.c).

use crate::number::format_double;

/// The protocol a client negotiated with HELLO (RESP2 unless it asked for 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    #[default]
    Resp2,
    Resp3,
}

impl Protocol {
    pub fn version(self) -> i64 {
        match self {
            Protocol::Resp2 => 2,
            Protocol::Resp3 => 3,
        }
    }
}

/// Appends replies to an output buffer in the given protocol.
pub struct Encoder<'a> {
    out: &'a mut Vec<u8>,
    protocol: Protocol,
}

impl<'a> Encoder<'a> {
    pub fn new(out: &'a mut Vec<u8>, protocol: Protocol) -> Self {
        Self { out, protocol }
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    pub fn set_protocol(&mut self, protocol: Protocol) {
        self.protocol = protocol;
    }

    fn is_resp3(&self) -> bool {
        self.protocol == Protocol::Resp3
    }

    fn header(&mut self, prefix: u8, n: i64) {
        crate::number::write_header(self.out, prefix, n);
    }

    /// `+text`. The text must not contain CR or LF.
    pub fn simple(&mut self, text: &[u8]) {
        self.out.push(b'+');
        self.out.extend_from_slice(text);
        self.out.extend_from_slice(b"\r\n");
    }

    /// `-text`: `text` is the full error including its code, e.g. `ERR syntax error`.
    /// CR and LF are replaced by spaces so the reply stays one line, as Redis does.
    pub fn error(&mut self, text: &[u8]) {
        self.out.push(b'-');
        self.out.extend(text.iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }));
        self.out.extend_from_slice(b"\r\n");
    }

    pub fn integer(&mut self, n: i64) {
        self.header(b':', n);
    }

    pub fn bulk(&mut self, data: &[u8]) {
        self.header(b'$', data.len() as i64);
        self.out.extend_from_slice(data);
        self.out.extend_from_slice(b"\r\n");
    }

    /// The null reply: `$-1` in RESP2, `_` in RESP3.
    pub fn null(&mut self) {
        self.out.extend_from_slice(if self.is_resp3() { b"_\r\n" } else { b"$-1\r\n" });
    }

    /// The null reply of commands that return arrays: `*-1` in RESP2, `_` in RESP3.
    pub fn null_array(&mut self) {
        self.out.extend_from_slice(if self.is_resp3() { b"_\r\n" } else { b"*-1\r\n" });
    }

    pub fn array(&mut self, len: usize) {
        self.header(b'*', len as i64);
    }

    /// A map of `len` pairs; RESP2 gets a flat array of `2 * len` elements.
    pub fn map(&mut self, len: usize) {
        if self.is_resp3() {
            self.header(b'%', len as i64);
        } else {
            self.header(b'*', 2 * len as i64);
        }
    }

    pub fn set(&mut self, len: usize) {
        self.header(if self.is_resp3() { b'~' } else { b'*' }, len as i64);
    }

    /// An out-of-band push frame (pub/sub messages, invalidations); an array in RESP2.
    pub fn push(&mut self, len: usize) {
        self.header(if self.is_resp3() { b'>' } else { b'*' }, len as i64);
    }

    /// An attribute map preceding a reply. RESP2 has no attributes: the caller must not
    /// send one there (Redis drops them), so this writes nothing in RESP2.
    pub fn attribute(&mut self, len: usize) {
        if self.is_resp3() {
            self.header(b'|', len as i64);
        }
    }

    /// A double: `,1.5` in RESP3, a bulk string in RESP2, formatted like `%.17g`.
    pub fn double(&mut self, d: f64) {
        let mut text = Vec::with_capacity(24);
        format_double(d, &mut text);
        if self.is_resp3() {
            self.out.push(b',');
            self.out.extend_from_slice(&text);
            self.out.extend_from_slice(b"\r\n");
        } else {
            self.bulk(&text);
        }
    }

    pub fn boolean(&mut self, b: bool) {
        match (self.is_resp3(), b) {
            (true, true) => self.out.extend_from_slice(b"#t\r\n"),
            (true, false) => self.out.extend_from_slice(b"#f\r\n"),
            (false, b) => self.integer(i64::from(b)),
        }
    }

    /// A verbatim string with a three-letter format (`txt`, `mkd`); a bulk string in RESP2.
    pub fn verbatim(&mut self, format: &[u8; 3], data: &[u8]) {
        if self.is_resp3() {
            self.header(b'=', data.len() as i64 + 4);
            self.out.extend_from_slice(format);
            self.out.push(b':');
            self.out.extend_from_slice(data);
            self.out.extend_from_slice(b"\r\n");
        } else {
            self.bulk(data);
        }
    }

    /// A big number given as its decimal digits; a bulk string in RESP2.
    pub fn big_number(&mut self, digits: &[u8]) {
        if self.is_resp3() {
            self.out.push(b'(');
            self.out.extend_from_slice(digits);
            self.out.extend_from_slice(b"\r\n");
        } else {
            self.bulk(digits);
        }
    }

    /// Pre-encoded protocol bytes, copied verbatim.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }
}

/// Appends a command as a RESP array of bulk strings (how requests, the append-only file
/// and replication streams carry commands).
pub fn encode_command<A: AsRef<[u8]>>(out: &mut Vec<u8>, args: &[A]) {
    crate::number::write_header(out, b'*', args.len() as i64);
    for arg in args {
        let arg = arg.as_ref();
        crate::number::write_header(out, b'$', arg.len() as i64);
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(p: Protocol, f: impl FnOnce(&mut Encoder)) -> String {
        let mut out = Vec::new();
        f(&mut Encoder::new(&mut out, p));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn resp2_down_conversion() {
        use Protocol::*;
        assert_eq!(enc(Resp2, |e| e.map(2)), "*4\r\n");
        assert_eq!(enc(Resp3, |e| e.map(2)), "%2\r\n");
        assert_eq!(enc(Resp2, |e| e.set(3)), "*3\r\n");
        assert_eq!(enc(Resp3, |e| e.set(3)), "~3\r\n");
        assert_eq!(enc(Resp2, |e| e.null()), "$-1\r\n");
        assert_eq!(enc(Resp2, |e| e.null_array()), "*-1\r\n");
        assert_eq!(enc(Resp3, |e| e.null_array()), "_\r\n");
        assert_eq!(enc(Resp2, |e| e.double(0.5)), "$3\r\n0.5\r\n");
        assert_eq!(enc(Resp3, |e| e.double(0.5)), ",0.5\r\n");
        assert_eq!(enc(Resp3, |e| e.double(f64::NEG_INFINITY)), ",-inf\r\n");
        assert_eq!(enc(Resp2, |e| e.boolean(true)), ":1\r\n");
        assert_eq!(enc(Resp3, |e| e.boolean(false)), "#f\r\n");
        assert_eq!(enc(Resp3, |e| e.verbatim(b"txt", b"hi")), "=6\r\ntxt:hi\r\n");
        assert_eq!(enc(Resp2, |e| e.verbatim(b"txt", b"hi")), "$2\r\nhi\r\n");
        assert_eq!(enc(Resp3, |e| e.push(3)), ">3\r\n");
        assert_eq!(enc(Resp2, |e| e.push(3)), "*3\r\n");
        assert_eq!(enc(Resp3, |e| e.big_number(b"123")), "(123\r\n");
        assert_eq!(enc(Resp2, |e| e.attribute(1)), "");
        assert_eq!(enc(Resp2, |e| e.integer(i64::MIN)), ":-9223372036854775808\r\n");
        assert_eq!(enc(Resp2, |e| e.error(b"ERR a\r\nb")), "-ERR a  b\r\n");
    }

    #[test]
    fn commands_encode_as_arrays_of_bulks() {
        let mut out = Vec::new();
        encode_command(&mut out, &[&b"SET"[..], b"k", b""]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
    }
}
