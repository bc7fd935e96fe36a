//! Where handlers write replies. A handler never knows whether it talks RESP2, RESP3 or an
//! embedded caller: it calls a `ReplySink`.

use quince_resp::{Encoder, Protocol};

pub trait ReplySink {
    fn protocol(&self) -> Protocol;
    /// Switches protocol mid-stream (HELLO replies in the protocol it selects).
    fn set_protocol(&mut self, protocol: Protocol);
    fn simple(&mut self, text: &str);
    /// A full error line including its code, e.g. `ERR syntax error`.
    fn error(&mut self, text: &str);
    fn integer(&mut self, n: i64);
    fn bulk(&mut self, data: &[u8]);
    fn null(&mut self);
    fn null_array(&mut self);
    fn array(&mut self, len: usize);
    fn map(&mut self, len: usize);
    fn set(&mut self, len: usize);
    fn double(&mut self, d: f64);
    fn boolean(&mut self, b: bool);
    fn verbatim(&mut self, format: &[u8; 3], data: &[u8]);
    /// RESP3 attribute map preceding the next reply (callers only send it in RESP3).
    fn attribute(&mut self, len: usize);
    /// RESP3 push (out-of-band) aggregate.
    fn push(&mut self, len: usize);
    /// RESP3 big number (a bulk string in RESP2).
    fn big_number(&mut self, digits: &[u8]);
    /// A double the caller formatted itself (Redis's addReplyHumanLongDouble, GEOPOS
    /// coordinates): a bulk string of `text` in RESP2, a RESP3 double written as `text`.
    /// Sinks that keep values rather than text get `d`.
    fn double_text(&mut self, d: f64, text: &[u8]) {
        if self.protocol() == Protocol::Resp3 {
            self.double(d)
        } else {
            self.bulk(text)
        }
    }
}

impl ReplySink for Encoder<'_> {
    fn protocol(&self) -> Protocol {
        Encoder::protocol(self)
    }
    fn set_protocol(&mut self, protocol: Protocol) {
        Encoder::set_protocol(self, protocol)
    }
    fn simple(&mut self, text: &str) {
        Encoder::simple(self, text.as_bytes())
    }
    fn error(&mut self, text: &str) {
        Encoder::error(self, text.as_bytes())
    }
    fn integer(&mut self, n: i64) {
        Encoder::integer(self, n)
    }
    fn bulk(&mut self, data: &[u8]) {
        Encoder::bulk(self, data)
    }
    fn null(&mut self) {
        Encoder::null(self)
    }
    fn null_array(&mut self) {
        Encoder::null_array(self)
    }
    fn array(&mut self, len: usize) {
        Encoder::array(self, len)
    }
    fn map(&mut self, len: usize) {
        Encoder::map(self, len)
    }
    fn set(&mut self, len: usize) {
        Encoder::set(self, len)
    }
    fn double(&mut self, d: f64) {
        Encoder::double(self, d)
    }
    fn boolean(&mut self, b: bool) {
        Encoder::boolean(self, b)
    }
    fn verbatim(&mut self, format: &[u8; 3], data: &[u8]) {
        Encoder::verbatim(self, format, data)
    }
    fn attribute(&mut self, len: usize) {
        Encoder::attribute(self, len)
    }
    fn push(&mut self, len: usize) {
        Encoder::push(self, len)
    }
    fn big_number(&mut self, digits: &[u8]) {
        Encoder::big_number(self, digits)
    }
    fn double_text(&mut self, _d: f64, text: &[u8]) {
        if Encoder::protocol(self) == Protocol::Resp3 {
            self.raw(b",");
            self.raw(text);
            self.raw(b"\r\n");
        } else {
            Encoder::bulk(self, text)
        }
    }
}

/// A reply as a value, for the embedded library and in-process tests.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Integer(i64),
    Bulk(Vec<u8>),
    Null,
    Array(Vec<Reply>),
    Map(Vec<(Reply, Reply)>),
    Set(Vec<Reply>),
    Double(f64),
    Boolean(bool),
    Verbatim(String, Vec<u8>),
    BigNumber(String),
    Push(Vec<Reply>),
    /// An attribute map; it is delivered as its own item before the reply it annotates.
    Attribute(Vec<(Reply, Reply)>),
}

/// Builds `Reply` values from the sink calls of one or more commands.
#[derive(Debug, Default)]
pub struct ReplyBuilder {
    done: Vec<Reply>,
    /// Open aggregates: the values so far and how many are still expected.
    open: Vec<(Reply, usize)>,
}

impl ReplyBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Completed top-level replies, oldest first.
    pub fn take(&mut self) -> Vec<Reply> {
        std::mem::take(&mut self.done)
    }

    fn value(&mut self, v: Reply) {
        let mut v = v;
        loop {
            let Some((agg, remaining)) = self.open.last_mut() else {
                self.done.push(v);
                return;
            };
            match agg {
                Reply::Array(items) | Reply::Set(items) | Reply::Push(items) => items.push(v),
                Reply::Map(pairs) | Reply::Attribute(pairs) => match pairs.last_mut() {
                    Some((_, val @ Reply::Null)) if *remaining % 2 == 1 => *val = v,
                    _ => pairs.push((v, Reply::Null)),
                },
                _ => unreachable!("only aggregates are opened"),
            }
            *remaining -= 1;
            if *remaining > 0 {
                return;
            }
            v = self.open.pop().expect("just checked").0;
        }
    }

    fn open(&mut self, agg: Reply, len: usize) {
        if len == 0 {
            self.value(agg);
        } else {
            self.open.push((agg, len));
        }
    }
}

impl ReplySink for ReplyBuilder {
    fn protocol(&self) -> Protocol {
        Protocol::Resp3
    }
    fn set_protocol(&mut self, _protocol: Protocol) {}
    fn simple(&mut self, text: &str) {
        self.value(Reply::Simple(text.into()))
    }
    fn error(&mut self, text: &str) {
        self.value(Reply::Error(text.into()))
    }
    fn integer(&mut self, n: i64) {
        self.value(Reply::Integer(n))
    }
    fn bulk(&mut self, data: &[u8]) {
        self.value(Reply::Bulk(data.to_vec()))
    }
    fn null(&mut self) {
        self.value(Reply::Null)
    }
    fn null_array(&mut self) {
        self.value(Reply::Null)
    }
    fn array(&mut self, len: usize) {
        self.open(Reply::Array(Vec::with_capacity(len)), len)
    }
    fn map(&mut self, len: usize) {
        self.open(Reply::Map(Vec::with_capacity(len)), len * 2)
    }
    fn set(&mut self, len: usize) {
        self.open(Reply::Set(Vec::with_capacity(len)), len)
    }
    fn double(&mut self, d: f64) {
        self.value(Reply::Double(d))
    }
    fn boolean(&mut self, b: bool) {
        self.value(Reply::Boolean(b))
    }
    fn verbatim(&mut self, format: &[u8; 3], data: &[u8]) {
        self.value(Reply::Verbatim(String::from_utf8_lossy(format).into_owned(), data.to_vec()))
    }
    fn attribute(&mut self, len: usize) {
        self.open(Reply::Attribute(Vec::with_capacity(len)), len * 2)
    }
    fn push(&mut self, len: usize) {
        self.open(Reply::Push(Vec::with_capacity(len)), len)
    }
    fn big_number(&mut self, digits: &[u8]) {
        self.value(Reply::BigNumber(String::from_utf8_lossy(digits).into_owned()))
    }
}
