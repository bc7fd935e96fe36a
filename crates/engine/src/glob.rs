//! Redis glob matching (`stringmatchlen` in Redis 7.0's util.c), used by KEYS, SCAN MATCH,
//! PSUBSCRIBE, CONFIG GET and friends.
//!
//! Syntax: `*` any run of bytes, `?` any one byte, `[...]` a class (`^` first negates it,
//! `a-z` ranges, reversed ranges such as `z-a` allowed, `\x` a literal `x`), `\x` outside a
//! class a literal `x`. The quirks of Redis's matcher are kept on purpose:
//!
//! - a class with no closing `]` runs to the end of the pattern (`[abc` is the class `abc`);
//! - `]` right after `[` (or `[^`) closes an empty class, so `[]` never matches and `[^]`
//!   matches any byte;
//! - `-` is a range operator whenever two more pattern bytes follow it, even when the
//!   upper end is `]`: `[a-]` is the unterminated class of the range `]`..`a`;
//! - range ends compare as C `char`s, which are signed on x86-64 Linux, so bytes 0x80-0xff
//!   sort before 0x00 (`[\x00-\xff]` matches only those two bytes);
//! - with `nocase`, only ASCII letters fold, and an escaped byte inside a class (`[\A]`)
//!   still compares case-sensitively;
//! - a trailing `\` matches a literal backslash.
//!
//! Redis 7.0 made the backtracking `*` safe: once the rest of the pattern after a star has
//! failed at every remaining position, no earlier star can succeed either, so the whole
//! match fails at once. That means only the innermost star ever resumes, and this
//! implementation keeps just that one resume point: O(pattern × string) time, constant
//! space, no recursion.

/// Byte `i` of `pattern`, or NUL past its end (Redis patterns are NUL-terminated strings and
/// its matcher peeks one byte ahead).
fn at(pattern: &[u8], i: usize) -> u8 {
    pattern.get(i).copied().unwrap_or(0)
}

fn fold(b: u8) -> u8 {
    b.to_ascii_lowercase()
}

fn same(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        fold(a) == fold(b)
    } else {
        a == b
    }
}

/// How one straight run (up to the next `*`) ended.
enum Run {
    Matched,
    Failed,
    /// A `*` that is not the last pattern byte: retry from `rest` (the pattern after the
    /// star) at successive string positions starting at `from`.
    Star {
        rest: usize,
        from: usize,
    },
}

/// Matches the class starting at `pattern[p] == '['` against byte `c`; returns whether it
/// matched and the index of the class's last pattern byte (its `]`, or the last pattern byte
/// when unterminated).
fn class(pattern: &[u8], mut p: usize, c: u8, nocase: bool) -> (bool, usize) {
    let len = pattern.len();
    p += 1;
    let negate = at(pattern, p) == b'^';
    if negate {
        p += 1;
    }
    let mut hit = false;
    loop {
        let left = len - p;
        let b = at(pattern, p);
        if b == b'\\' && left >= 2 {
            p += 1;
            // Escaped bytes compare exactly, even under nocase (as in Redis).
            if pattern[p] == c {
                hit = true;
            }
        } else if b == b']' {
            break;
        } else if left == 0 {
            // Unterminated: the class ends with the pattern.
            p -= 1;
            break;
        } else if left >= 3 && pattern[p + 1] == b'-' {
            // Ends compare as signed chars, as on x86-64.
            let (mut lo, mut hi, mut ch) = (b as i8 as i32, pattern[p + 2] as i8 as i32, c as i8 as i32);
            if lo > hi {
                std::mem::swap(&mut lo, &mut hi);
            }
            if nocase {
                let lower = |v: i32| if (b'A' as i32..=b'Z' as i32).contains(&v) { v + 32 } else { v };
                lo = lower(lo);
                hi = lower(hi);
                ch = lower(ch);
            }
            p += 2;
            if lo <= ch && ch <= hi {
                hit = true;
            }
        } else if same(b, c, nocase) {
            hit = true;
        }
        p += 1;
    }
    (hit != negate, p)
}

/// Matches `pattern[p..]` against `s[si..]` without backtracking into earlier stars.
fn run(pattern: &[u8], mut p: usize, s: &[u8], mut si: usize, nocase: bool) -> Run {
    let len = pattern.len();
    while p < len && si < s.len() {
        match pattern[p] {
            b'*' => {
                while p + 1 < len && pattern[p + 1] == b'*' {
                    p += 1;
                }
                if p + 1 == len {
                    return Run::Matched;
                }
                return Run::Star { rest: p + 1, from: si };
            }
            b'?' => si += 1,
            b'[' => {
                let (hit, end) = class(pattern, p, s[si], nocase);
                if !hit {
                    return Run::Failed;
                }
                p = end;
                si += 1;
            }
            b => {
                let literal = if b == b'\\' && len - p >= 2 {
                    p += 1;
                    pattern[p]
                } else {
                    b
                };
                if !same(literal, s[si], nocase) {
                    return Run::Failed;
                }
                si += 1;
            }
        }
        p += 1;
        if si == s.len() {
            while at(pattern, p) == b'*' {
                p += 1;
            }
            break;
        }
    }
    if p == len && si == s.len() {
        Run::Matched
    } else {
        Run::Failed
    }
}

/// Whether `s` matches the glob `pattern`, exactly as Redis's `stringmatchlen` decides;
/// `nocase` folds ASCII letters.
pub fn glob_match(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    // The innermost star: where the rest of the pattern starts, and the string position the
    // current attempt of that rest started at.
    let mut star: Option<(usize, usize)> = None;
    let (mut p, mut si) = (0, 0);
    loop {
        match run(pattern, p, s, si, nocase) {
            Run::Matched => return true,
            Run::Star { rest, from } => {
                star = Some((rest, from));
                (p, si) = (rest, from);
            }
            Run::Failed => {
                let Some((rest, from)) = star else { return false };
                // The star takes one more byte; once it has tried every position, no earlier
                // star can help (Redis's skipLongerMatches), so the match fails.
                let next = from + 1;
                if next >= s.len() {
                    return false;
                }
                star = Some((rest, next));
                (p, si) = (rest, next);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    fn m(p: &str, s: &str) -> bool {
        glob_match(p.as_bytes(), s.as_bytes(), false)
    }

    fn mi(p: &str, s: &str) -> bool {
        glob_match(p.as_bytes(), s.as_bytes(), true)
    }

    /// A straightforward exponential reference for the common syntax (no class quirks).
    /// Redis differs only for the empty string, which only the empty pattern matches.
    fn reference(p: &[u8], s: &[u8]) -> bool {
        if s.is_empty() {
            p.is_empty()
        } else {
            classic(p, s)
        }
    }

    fn classic(p: &[u8], s: &[u8]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some((b'*', rest)) => (0..=s.len()).any(|i| classic(rest, &s[i..])),
            Some((b'?', rest)) => !s.is_empty() && classic(rest, &s[1..]),
            Some((&c, rest)) => !s.is_empty() && s[0] == c && classic(rest, &s[1..]),
        }
    }

    #[test]
    fn basics() {
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(!m("a", ""));
        // As in Redis, nothing but the empty pattern matches the empty string (KEYS and SCAN
        // special-case a lone "*" before matching).
        assert!(!m("*", ""));
        assert!(!m("**", ""));
        assert!(m("*", "anything"));
        assert!(m("h?llo", "hello"));
        assert!(!m("h?llo", "hllo"));
        assert!(m("h*llo", "hllo"));
        assert!(m("h*llo", "heeeello"));
        assert!(m("h[ae]llo", "hallo"));
        assert!(!m("h[ae]llo", "hillo"));
        assert!(m("h[^e]llo", "hallo"));
        assert!(!m("h[^e]llo", "hello"));
        assert!(m("h[a-b]llo", "hbllo"));
        assert!(!m("h[a-b]llo", "hcllo"));
        assert!(m("a*b*c", "axxbyyc"));
        assert!(!m("a*b*c", "axxbyy"));
        assert!(m("a*", "a"));
        assert!(m("*a", "ba"));
        assert!(!m("*a", "ab"));
        assert!(m("a*b", "ab"));
        assert!(m("*?", "x"));
        assert!(!m("*?", ""));
        assert!(!m("?", ""));
        assert!(m("user:*:name", "user:1000:name"));
    }

    #[test]
    fn trailing_stars_after_the_string_ends() {
        assert!(m("abc*", "abc"));
        assert!(m("abc***", "abc"));
        assert!(!m("abc*d", "abc"));
        assert!(m("a*b*", "ab"));
        assert!(!m("a*?", "a"));
    }

    #[test]
    fn escapes() {
        assert!(m(r"\*", "*"));
        assert!(!m(r"\*", "a"));
        assert!(m(r"a\?b", "a?b"));
        assert!(!m(r"a\?b", "axb"));
        assert!(m(r"\\", r"\"));
        // A trailing backslash is a literal backslash.
        assert!(m(r"a\", r"a\"));
        assert!(!m(r"a\", "a"));
        assert!(m(r"\a", "a"));
        assert!(mi(r"\A", "a"), "an escape outside a class still folds case");
    }

    #[test]
    fn class_edge_cases() {
        // "[\]]" is a class holding ']'.
        assert!(m(r"[\]]", "]"));
        assert!(!m(r"[\]]", r"\"));
        assert!(m(r"[\\]", r"\"));
        // "[]" is an empty class: never matches; "[^]" matches any byte.
        assert!(!m("[]", "]"));
        assert!(!m("[]", "a"));
        assert!(m("[^]", "a"));
        assert!(!m("[]a]", "a]"), "']' right after '[' closes an empty class");
        assert!(m("[^]a]", "xa]"));
        // "[a-]": a range from 'a' to ']' (reversed, so ']'..'a'), unterminated.
        assert!(m("[a-]", "a"));
        assert!(m("[a-]", "]"));
        assert!(m("[a-]", "^"));
        assert!(m("[a-]", "_"));
        assert!(!m("[a-]", "-"));
        assert!(!m("[a-]", "b"));
        // "[-a]" is '-' or 'a'; "[a-b-c]" is a-b, then '-', 'c'.
        assert!(m("[-a]", "-"));
        assert!(m("[-a]", "a"));
        assert!(m("[a-b-c]", "-"));
        assert!(m("[a-b-c]", "c"));
        assert!(!m("[a-b-c]", "d"));
        // "[ab-]" is 'a', then the range 'b'..']' (so ']'..'b'), unterminated; "[ab-" ends with
        // a literal '-', as fewer than two bytes follow it.
        assert!(m("[ab-]", "_"));
        assert!(!m("[ab-]", "-"));
        assert!(!m("[ab-]x", "-x"));
        assert!(m("[ab-", "-"));
        assert!(m("[a-", "-"));
        // Reversed ranges work like forward ones.
        assert!(m("[z-a]", "m"));
        assert!(!m("[z-a]", "A"));
        // Unterminated classes run to the end of the pattern.
        assert!(m("[abc", "b"));
        assert!(!m("[abc", "d"));
        assert!(!m("[abc", "b]"));
        assert!(!m("[", "["));
        assert!(!m("[", "a"));
        assert!(m("[^", "a"));
        assert!(m("x[^", "xa"));
        assert!(m(r"[a\", r"\"));
        // Escapes in classes.
        assert!(m(r"[\-]", "-"));
        assert!(m(r"[\^a]", "^"));
        assert!(m(r"[^\]]", "a"));
        assert!(!m(r"[^\]]", "]"));
        // '*' and '?' are plain bytes in a class.
        assert!(m("[*?]", "*"));
        assert!(!m("[*?]", "a"));
    }

    #[test]
    fn case_folding() {
        assert!(mi("HELLO", "hello"));
        assert!(mi("h*O", "hello"));
        assert!(!m("HELLO", "hello"));
        assert!(mi("[A-C]", "b"));
        assert!(mi("[a-c]", "B"));
        assert!(mi("[^A-C]", "d"));
        assert!(mi("[xY]", "y"));
        assert!(!mi(r"[\A]", "a"), "escaped class bytes compare exactly");
        assert!(mi(r"[\A]", "A"));
        // Range ends are ordered before they are folded: under nocase "[Z-a]" becomes the
        // empty range 'z'..'a', while "[a-Z]" is reordered to 'Z'..'a' and folds to 'z'..'a'.
        assert!(m("[Z-a]", "_"));
        assert!(!mi("[Z-a]", "_"));
        assert!(!mi("[Z-a]", "z"));
        assert!(!mi("[a-Z]", "a"));
    }

    #[test]
    fn signed_char_ranges() {
        assert!(glob_match(b"[\x00-\xff]", b"\xff", false));
        assert!(glob_match(b"[\x00-\xff]", b"\x00", false));
        assert!(!glob_match(b"[\x00-\xff]", b"a", false));
        assert!(!glob_match(b"[\x00-\xff]", b"\x80", false));
        assert!(glob_match(b"[\x80-\xff]", b"\x90", false));
        assert!(!glob_match(b"[\x80-\xff]", b"a", false));
        assert!(glob_match(b"[\xff-\x01]", b"\x00", false));
        assert!(glob_match(b"\xe9*", b"\xe9t\xe9", true));
    }

    #[test]
    fn binary_bytes() {
        assert!(glob_match(b"a\x00b", b"a\x00b", false));
        assert!(!glob_match(b"a\x00b", b"a\x00c", false));
        assert!(glob_match(b"a?b", b"a\x00b", false));
        assert!(glob_match(b"*\x00", b"xyz\x00", false));
    }

    #[test]
    fn nested_stars_do_not_backtrack_exponentially() {
        // Redis's regression test (tests/unit/keyspace.tcl).
        let key = "a".repeat(40);
        let pattern = format!("{}b", "a*".repeat(20));
        assert!(!m(&pattern, &key));
        // Much larger than Redis's own test; exponential backtracking would never finish.
        let key = "a".repeat(20_000);
        let pattern = format!("{}b", "a*".repeat(2_000));
        assert!(!m(&pattern, &key));
        let pattern = format!("{}a", "*a".repeat(2_000));
        assert!(m(&pattern, &key));
        assert!(m(&"*".repeat(100_000), &key));
        let pattern = "*?".repeat(50_000);
        assert!(!m(&pattern, &"x".repeat(49_999)));
        assert!(m(&pattern, &"x".repeat(50_000)));
    }

    #[test]
    fn long_patterns_use_no_recursion() {
        let pattern = "*a".repeat(200_000);
        let s = "a".repeat(200_000);
        assert!(m(&pattern, &s));
        assert!(!m(&pattern, &s[1..]));
    }

    #[test]
    fn agrees_with_a_naive_matcher() {
        // Every pattern over {a, b, *, ?} up to length 6 against every string over {a, b}
        // up to length 6.
        let mut patterns = vec![Vec::new()];
        let mut frontier = vec![Vec::new()];
        for _ in 0..6 {
            let mut next = Vec::new();
            for p in &frontier {
                for &c in b"ab*?" {
                    let mut q: Vec<u8> = p.clone();
                    q.push(c);
                    next.push(q);
                }
            }
            patterns.extend(next.iter().cloned());
            frontier = next;
        }
        let mut strings = vec![Vec::new()];
        let mut frontier = vec![Vec::new()];
        for _ in 0..6 {
            let mut next = Vec::new();
            for s in &frontier {
                for &c in b"ab" {
                    let mut t: Vec<u8> = s.clone();
                    t.push(c);
                    next.push(t);
                }
            }
            strings.extend(next.iter().cloned());
            frontier = next;
        }
        for p in &patterns {
            for s in &strings {
                assert_eq!(
                    glob_match(p, s, false),
                    reference(p, s),
                    "pattern {:?} string {:?}",
                    String::from_utf8_lossy(p),
                    String::from_utf8_lossy(s)
                );
            }
        }
    }
}
