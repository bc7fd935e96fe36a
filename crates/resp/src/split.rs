//! Splitting a line into arguments, as Redis's `sdssplitargs` does for inline commands,
//! redis.conf lines and redis-cli input.

/// Splits `line` into arguments with Redis's quoting rules: `"..."` with `\n \r \t \b \a
/// \xHH` escapes, `'...'` with `\'`, and a closing quote that must be followed by a space
/// or the end. Returns `None` on unbalanced quotes. Like the C original, a NUL byte ends
/// the line.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let line = match memchr::memchr(0, line) {
        Some(nul) => &line[..nul],
        None => line,
    };
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let mut args = Vec::new();
    let mut p = 0;
    loop {
        while p < line.len() && is_c_space(line[p]) {
            p += 1;
        }
        if p >= line.len() {
            return Some(args);
        }
        let mut current = Vec::new();
        let (mut in_double, mut in_single) = (false, false);
        loop {
            let c = at(p);
            if in_double {
                if c == b'\\' && at(p + 1) == b'x' && is_hex(at(p + 2)) && is_hex(at(p + 3)) {
                    current.push(hex_val(at(p + 2)) * 16 + hex_val(at(p + 3)));
                    p += 3;
                } else if c == b'\\' && at(p + 1) != 0 {
                    p += 1;
                    current.push(match at(p) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                } else if c == b'"' {
                    if at(p + 1) != 0 && !is_c_space(at(p + 1)) {
                        return None;
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return None;
                } else {
                    current.push(c);
                }
            } else if in_single {
                if c == b'\\' && at(p + 1) == b'\'' {
                    p += 1;
                    current.push(b'\'');
                } else if c == b'\'' {
                    if at(p + 1) != 0 && !is_c_space(at(p + 1)) {
                        return None;
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return None;
                } else {
                    current.push(c);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => {
                        if c != 0 {
                            p += 1;
                        }
                        break;
                    }
                    b'"' => in_double = true,
                    b'\'' => in_single = true,
                    other => current.push(other),
                }
            }
            p += 1;
        }
        args.push(current);
    }
}

/// C's `isspace` in the "C" locale.
fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

#[cfg(test)]
mod tests {
    use super::split_args;

    fn split(s: &str) -> Option<Vec<String>> {
        split_args(s.as_bytes()).map(|v| v.into_iter().map(|a| String::from_utf8_lossy(&a).into_owned()).collect())
    }

    #[test]
    fn plain_and_quoted() {
        assert_eq!(split("set a b").unwrap(), ["set", "a", "b"]);
        assert_eq!(split("  set   a\tb  ").unwrap(), ["set", "a", "b"]);
        assert_eq!(split(r#"set "a b" 'c d'"#).unwrap(), ["set", "a b", "c d"]);
        assert_eq!(split(r#""\x41\n" 'it\'s'"#).unwrap(), ["A\n", "it's"]);
        assert_eq!(split(r#"a"b c" d"#).unwrap(), ["ab c", "d"]);
        assert_eq!(split(r#"a"b c"d"#), None);
        assert_eq!(split("").unwrap(), Vec::<String>::new());
        assert_eq!(split(r#""""#).unwrap(), [""]);
    }

    #[test]
    fn unbalanced() {
        assert_eq!(split(r#"set "a"#), None);
        assert_eq!(split("set 'a"), None);
        assert_eq!(split(r#"set "a"b"#), None);
        assert_eq!(split("set 'a'b"), None);
    }
}
