//! Redis glob matching (`*`, `?`, `[...]` with `^` and ranges, `\` escapes), for KEYS,
//! SCAN MATCH and CONFIG GET. A greedy star with a single backtrack point keeps matching
//! O(pattern x string): no pattern can make it exponential (Redis needed a special guard
//! for that, see the "pattern matching long nested loops" regression test).

/// Matches one pattern token (not `*`) at `p` against byte `c`; returns (matched, next p).
fn match_one(pattern: &[u8], p: usize, c: u8, nocase: bool) -> (bool, usize) {
    let eq = |a: u8, b: u8| if nocase { a.eq_ignore_ascii_case(&b) } else { a == b };
    match pattern[p] {
        b'?' => (true, p + 1),
        b'\\' if p + 1 < pattern.len() => (eq(pattern[p + 1], c), p + 2),
        b'[' => {
            let mut i = p + 1;
            let negate = pattern.get(i) == Some(&b'^');
            if negate {
                i += 1;
            }
            let mut hit = false;
            loop {
                match pattern.get(i) {
                    None => {
                        // Unterminated class: Redis treats the end of pattern as its end.
                        i = pattern.len();
                        break;
                    }
                    Some(b'\\') if i + 1 < pattern.len() => {
                        hit |= eq(pattern[i + 1], c);
                        i += 2;
                    }
                    Some(b']') => {
                        i += 1;
                        break;
                    }
                    Some(&lo) if pattern.get(i + 1) == Some(&b'-') && i + 2 < pattern.len() => {
                        let hi = pattern[i + 2];
                        let (mut lo, mut hi, mut ch) = (lo, hi, c);
                        if lo > hi {
                            std::mem::swap(&mut lo, &mut hi);
                        }
                        if nocase {
                            lo = lo.to_ascii_lowercase();
                            hi = hi.to_ascii_lowercase();
                            ch = ch.to_ascii_lowercase();
                        }
                        hit |= (lo..=hi).contains(&ch);
                        i += 3;
                    }
                    Some(&b) => {
                        hit |= eq(b, c);
                        i += 1;
                    }
                }
            }
            (hit != negate, i)
        }
        b => (eq(b, c), p + 1),
    }
}

pub fn glob_match(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    let (mut p, mut i) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            while p < pattern.len() && pattern[p] == b'*' {
                p += 1;
            }
            if p == pattern.len() {
                return true;
            }
            star = Some((p, i));
            continue;
        }
        if p < pattern.len() {
            let (ok, next) = match_one(pattern, p, s[i], nocase);
            if ok {
                p = next;
                i += 1;
                continue;
            }
        }
        match star {
            Some((sp, si)) => {
                p = sp;
                i = si + 1;
                star = Some((sp, si + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::glob_match as m;

    #[test]
    fn redis_globs() {
        assert!(m(b"*", b"", false));
        assert!(m(b"h?llo", b"hello", false));
        assert!(m(b"h*llo", b"heeeello", false));
        assert!(m(b"h[ae]llo", b"hallo", false));
        assert!(!m(b"h[^e]llo", b"hello", false));
        assert!(m(b"h[a-b]llo", b"hbllo", false));
        assert!(m(b"h[b-a]llo", b"hbllo", false));
        assert!(m(b"a\\*b", b"a*b", false));
        assert!(!m(b"a\\*b", b"axb", false));
        assert!(m(b"HELLO", b"hello", true));
        assert!(!m(b"HELLO", b"hello", false));
        assert!(m(b"*a*b", b"xxaxxb", false));
        assert!(!m(b"*a*b", b"xxaxxc", false));
        let long = vec![b'a'; 40];
        assert!(!m(b"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", &long, false));
    }
}
