//! Replies as values, and their conversion to the types the typed API returns.

use crate::{Error, Result};

/// A command's reply, in RESP3's shapes (the engine's `Reply`): the embedded Db speaks
/// RESP3 to itself, so maps, sets, doubles and booleans keep their types.
pub use quince_engine::Reply as Value;

/// A Rust type a reply converts to, as redis-rs's `FromRedisValue`: nil is `None`, bulk
/// strings are bytes, and a shape that does not fit is `Error::UnexpectedReply`.
pub trait FromValue: Sized {
    /// Whether the conversion reads a status reply's text (`+OK`); types that don't
    /// spare the Db making a `String` of it.
    const KEEPS_STATUS_TEXT: bool = true;
    fn from_value(value: Value) -> Result<Self>;
}

fn unexpected<T>(what: &str, value: &Value) -> Result<T> {
    Err(Error::UnexpectedReply(format!("expected {what}, got {value:?}")))
}

impl FromValue for Value {
    fn from_value(value: Value) -> Result<Self> {
        Ok(value)
    }
}

impl FromValue for () {
    const KEEPS_STATUS_TEXT: bool = false;
    fn from_value(_: Value) -> Result<Self> {
        Ok(())
    }
}

impl FromValue for i64 {
    fn from_value(value: Value) -> Result<Self> {
        match value {
            Value::Integer(n) => Ok(n),
            Value::Bulk(ref b) | Value::Verbatim(_, ref b) => {
                match std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()) {
                    Some(n) => Ok(n),
                    None => unexpected("an integer", &value),
                }
            }
            Value::Boolean(b) => Ok(b as i64),
            other => unexpected("an integer", &other),
        }
    }
}

impl FromValue for u64 {
    fn from_value(value: Value) -> Result<Self> {
        let n = i64::from_value(value)?;
        u64::try_from(n).map_err(|_| Error::UnexpectedReply(format!("expected a count, got {n}")))
    }
}

impl FromValue for usize {
    fn from_value(value: Value) -> Result<Self> {
        Ok(u64::from_value(value)? as usize)
    }
}

impl FromValue for bool {
    fn from_value(value: Value) -> Result<Self> {
        match value {
            Value::Boolean(b) => Ok(b),
            Value::Integer(n) => Ok(n != 0),
            Value::Simple(_) => Ok(true),
            Value::Null => Ok(false),
            other => unexpected("a boolean", &other),
        }
    }
}

impl FromValue for f64 {
    fn from_value(value: Value) -> Result<Self> {
        match value {
            Value::Double(d) => Ok(d),
            Value::Integer(n) => Ok(n as f64),
            Value::Bulk(ref b) => match std::str::from_utf8(b).ok().and_then(parse_redis_double) {
                Some(d) => Ok(d),
                None => unexpected("a number", &value),
            },
            other => unexpected("a number", &other),
        }
    }
}

/// Redis's spelling of doubles: `inf`, `-inf`, and plain decimal or exponent forms.
fn parse_redis_double(s: &str) -> Option<f64> {
    match s {
        "inf" | "+inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok(),
    }
}

impl FromValue for Vec<u8> {
    fn from_value(value: Value) -> Result<Self> {
        match value {
            Value::Bulk(b) | Value::Verbatim(_, b) => Ok(b),
            Value::Simple(s) | Value::BigNumber(s) => Ok(s.into_bytes()),
            Value::Integer(n) => Ok(n.to_string().into_bytes()),
            other => unexpected("a string", &other),
        }
    }
}

impl FromValue for String {
    fn from_value(value: Value) -> Result<Self> {
        let bytes = Vec::<u8>::from_value(value)?;
        String::from_utf8(bytes).map_err(|e| Error::UnexpectedReply(format!("expected UTF-8 text: {e}")))
    }
}

impl<T: FromValue> FromValue for Option<T> {
    const KEEPS_STATUS_TEXT: bool = T::KEEPS_STATUS_TEXT;
    fn from_value(value: Value) -> Result<Self> {
        match value {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(value: Value) -> Result<Self> {
        match value {
            Value::Array(items) | Value::Set(items) | Value::Push(items) => {
                items.into_iter().map(T::from_value).collect()
            }
            Value::Null => Ok(Vec::new()),
            other => unexpected("an array", &other),
        }
    }
}

impl<A: FromValue, B: FromValue> FromValue for (A, B) {
    fn from_value(value: Value) -> Result<Self> {
        match value {
            Value::Array(items) if items.len() == 2 => {
                let mut items = items.into_iter();
                let a = A::from_value(items.next().unwrap_or(Value::Null))?;
                let b = B::from_value(items.next().unwrap_or(Value::Null))?;
                Ok((a, b))
            }
            other => unexpected("a pair", &other),
        }
    }
}

/// Field/value pairs from a RESP3 map (HGETALL, CONFIG GET...) or a flat RESP2-style array.
pub(crate) fn pairs<A: FromValue, B: FromValue>(value: Value) -> Result<Vec<(A, B)>> {
    match value {
        Value::Map(pairs) => pairs.into_iter().map(|(k, v)| Ok((A::from_value(k)?, B::from_value(v)?))).collect(),
        Value::Array(items) if items.len() % 2 == 0 => {
            let mut out = Vec::with_capacity(items.len() / 2);
            let mut items = items.into_iter();
            while let (Some(k), Some(v)) = (items.next(), items.next()) {
                out.push((A::from_value(k)?, B::from_value(v)?));
            }
            Ok(out)
        }
        other => unexpected("a map", &other),
    }
}
