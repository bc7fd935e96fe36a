//! RESP bytes back to a `Value`: a blocked command's reply comes from the engine already
//! encoded (it is written by the thread that served it, for a connection's buffer).

use crate::{Error, Result, Value};

/// Parses one complete RESP2/RESP3 reply.
pub(crate) fn parse(buf: &[u8]) -> Result<Value> {
    let mut pos = 0;
    let value = parse_at(buf, &mut pos, 0)?;
    Ok(value)
}

/// Parses every complete reply in `buf` (pushed messages arrive back to back).
pub(crate) fn parse_all(buf: &[u8]) -> Result<Vec<Value>> {
    let mut pos = 0;
    let mut values = Vec::new();
    while pos < buf.len() {
        values.push(parse_at(buf, &mut pos, 0)?);
    }
    Ok(values)
}

fn bad(what: &str) -> Error {
    Error::UnexpectedReply(format!("malformed reply: {what}"))
}

fn line<'a>(buf: &'a [u8], pos: &mut usize) -> Result<&'a [u8]> {
    let rest = buf.get(*pos..).ok_or_else(|| bad("truncated"))?;
    let end = rest.windows(2).position(|w| w == b"\r\n").ok_or_else(|| bad("no line end"))?;
    *pos += end + 2;
    Ok(&rest[..end])
}

fn number(text: &[u8]) -> Result<i64> {
    std::str::from_utf8(text).ok().and_then(|s| s.parse().ok()).ok_or_else(|| bad("bad number"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn parse_at(buf: &[u8], pos: &mut usize, depth: usize) -> Result<Value> {
    if depth > 1000 {
        return Err(bad("nested too deep"));
    }
    let kind = *buf.get(*pos).ok_or_else(|| bad("empty"))?;
    *pos += 1;
    let head = line(buf, pos)?;
    let bulk = |pos: &mut usize, len: i64| -> Result<Vec<u8>> {
        let len = usize::try_from(len).map_err(|_| bad("negative length"))?;
        let data = buf.get(*pos..*pos + len).ok_or_else(|| bad("truncated bulk"))?.to_vec();
        *pos += len + 2;
        Ok(data)
    };
    let items = |pos: &mut usize, n: i64| -> Result<Vec<Value>> {
        (0..n.max(0)).map(|_| parse_at(buf, pos, depth + 1)).collect()
    };
    let pairs = |pos: &mut usize, n: i64| -> Result<Vec<(Value, Value)>> {
        (0..n.max(0)).map(|_| Ok((parse_at(buf, pos, depth + 1)?, parse_at(buf, pos, depth + 1)?))).collect()
    };
    Ok(match kind {
        b'+' => Value::Simple(text(head)),
        b'-' => Value::Error(text(head)),
        b':' => Value::Integer(number(head)?),
        b'$' => match number(head)? {
            n if n < 0 => Value::Null,
            n => Value::Bulk(bulk(pos, n)?),
        },
        b'*' => match number(head)? {
            n if n < 0 => Value::Null,
            n => Value::Array(items(pos, n)?),
        },
        b'~' => Value::Set(items(pos, number(head)?)?),
        b'>' => Value::Push(items(pos, number(head)?)?),
        b'%' => Value::Map(pairs(pos, number(head)?)?),
        b'|' => Value::Attribute(pairs(pos, number(head)?)?),
        b'_' => Value::Null,
        b'#' => Value::Boolean(head == b"t"),
        b',' => Value::Double(match head {
            b"inf" => f64::INFINITY,
            b"-inf" => f64::NEG_INFINITY,
            _ => std::str::from_utf8(head).ok().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN),
        }),
        b'(' => Value::BigNumber(text(head)),
        b'=' => {
            let data = bulk(pos, number(head)?)?;
            let format = text(data.get(..3).unwrap_or_default());
            Value::Verbatim(format, data.get(4..).unwrap_or_default().to_vec())
        }
        other => return Err(bad(&format!("unknown type byte {other}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_shape() {
        assert_eq!(
            parse(b"*2\r\n$3\r\nkey\r\n$1\r\nv\r\n").unwrap(),
            Value::Array(vec![Value::Bulk(b"key".to_vec()), Value::Bulk(b"v".to_vec())])
        );
        assert_eq!(parse(b"_\r\n").unwrap(), Value::Null);
        assert_eq!(parse(b"*-1\r\n").unwrap(), Value::Null);
        assert_eq!(parse(b":-7\r\n").unwrap(), Value::Integer(-7));
        assert_eq!(parse(b",1.5\r\n").unwrap(), Value::Double(1.5));
        assert_eq!(
            parse(b"%1\r\n+a\r\n#t\r\n").unwrap(),
            Value::Map(vec![(Value::Simple("a".into()), Value::Boolean(true))])
        );
        assert!(parse(b"$5\r\nab").is_err());
        assert!(parse(b"?\r\n").is_err());
    }
}
