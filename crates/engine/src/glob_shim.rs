//! TEMPORARY until glob.rs lands.
pub fn glob_match(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    let lower = |b: u8| if nocase { b.to_ascii_lowercase() } else { b };
    match pattern.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|i| glob_match(rest, &s[i..], nocase)),
        Some((b'?', rest)) => !s.is_empty() && glob_match(rest, &s[1..], nocase),
        Some((b'\\', rest)) if !rest.is_empty() => {
            !s.is_empty() && lower(rest[0]) == lower(s[0]) && glob_match(&rest[1..], &s[1..], nocase)
        }
        Some((&p, rest)) => !s.is_empty() && lower(p) == lower(s[0]) && glob_match(rest, &s[1..], nocase),
    }
}
