//! The sink a command of the embedded Db writes its reply into. A scalar reply (most of
//! them: GET's bulk, SET's OK, INCR's integer) becomes its `Value` at once; an aggregate goes
//! through the engine's `ReplyBuilder`. PERF: no vector per call for the common case, and no
//! text for a status reply whose caller discards it (`FromValue::KEEPS_STATUS_TEXT`).

use quince_engine::{ReplyBuilder, ReplySink};
use quince_resp::Protocol;

use crate::Value;

pub(crate) struct Capture {
    /// Keep a status reply's text (`+OK` as `Value::Simple("OK")`); when false it is an
    /// empty `Value::Simple`.
    keep_status_text: bool,
    /// The last complete top-level scalar.
    scalar: Option<Value>,
    /// Set once an aggregate opens: every later call goes here.
    builder: Option<ReplyBuilder>,
}

impl Capture {
    pub(crate) fn new(keep_status_text: bool) -> Self {
        Self { keep_status_text, scalar: None, builder: None }
    }

    /// The command's reply (the last top-level one, after any attribute).
    pub(crate) fn take(&mut self) -> Option<Value> {
        match &mut self.builder {
            Some(builder) => builder.take().pop(),
            None => self.scalar.take(),
        }
    }

    fn scalar(&mut self, value: impl FnOnce() -> Value, forward: impl FnOnce(&mut ReplyBuilder)) {
        match &mut self.builder {
            Some(builder) => forward(builder),
            None => self.scalar = Some(value()),
        }
    }

    fn aggregate(&mut self, open: impl FnOnce(&mut ReplyBuilder)) {
        open(self.builder.get_or_insert_with(ReplyBuilder::new))
    }
}

impl ReplySink for Capture {
    fn protocol(&self) -> Protocol {
        Protocol::Resp3
    }
    fn set_protocol(&mut self, _protocol: Protocol) {}
    fn simple(&mut self, text: &str) {
        let keep = self.keep_status_text;
        self.scalar(|| Value::Simple(if keep { text.into() } else { String::new() }), |b| b.simple(text))
    }
    fn error(&mut self, text: &str) {
        self.scalar(|| Value::Error(text.into()), |b| b.error(text))
    }
    fn integer(&mut self, n: i64) {
        self.scalar(|| Value::Integer(n), |b| b.integer(n))
    }
    fn bulk(&mut self, data: &[u8]) {
        self.scalar(|| Value::Bulk(data.to_vec()), |b| b.bulk(data))
    }
    fn null(&mut self) {
        self.scalar(|| Value::Null, |b| b.null())
    }
    fn null_array(&mut self) {
        self.scalar(|| Value::Null, |b| b.null_array())
    }
    fn array(&mut self, len: usize) {
        self.aggregate(|b| b.array(len))
    }
    fn map(&mut self, len: usize) {
        self.aggregate(|b| b.map(len))
    }
    fn set(&mut self, len: usize) {
        self.aggregate(|b| b.set(len))
    }
    fn double(&mut self, d: f64) {
        self.scalar(|| Value::Double(d), |b| b.double(d))
    }
    fn boolean(&mut self, v: bool) {
        self.scalar(|| Value::Boolean(v), |b| b.boolean(v))
    }
    fn verbatim(&mut self, format: &[u8; 3], data: &[u8]) {
        self.scalar(
            || Value::Verbatim(String::from_utf8_lossy(format).into_owned(), data.to_vec()),
            |b| b.verbatim(format, data),
        )
    }
    fn attribute(&mut self, len: usize) {
        self.aggregate(|b| b.attribute(len))
    }
    fn push(&mut self, len: usize) {
        self.aggregate(|b| b.push(len))
    }
    fn big_number(&mut self, digits: &[u8]) {
        self.scalar(|| Value::BigNumber(String::from_utf8_lossy(digits).into_owned()), |b| b.big_number(digits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the engine writes, `Capture` gives what `ReplyBuilder` gives.
    #[test]
    fn captures_what_the_builder_builds() {
        type Script = fn(&mut dyn ReplySink);
        let scripts: [Script; 8] = [
            |s| s.bulk(b"v"),
            |s| s.simple("OK"),
            |s| s.error("ERR x"),
            |s| s.null(),
            |s| {
                s.array(2);
                s.integer(1);
                s.bulk(b"a")
            },
            |s| {
                s.map(1);
                s.bulk(b"k");
                s.set(0)
            },
            |s| {
                s.attribute(1);
                s.bulk(b"ttl");
                s.integer(3);
                s.double(1.5)
            },
            |s| s.array(0),
        ];
        for script in scripts {
            let (mut capture, mut builder) = (Capture::new(true), ReplyBuilder::new());
            script(&mut capture);
            script(&mut builder);
            assert_eq!(capture.take(), builder.take().pop());
        }
        let mut discarding = Capture::new(false);
        discarding.simple("OK");
        assert_eq!(discarding.take(), Some(Value::Simple(String::new())));
    }
}
