//! SORT and SORT_RO: sort the elements of a list, set or sorted set, numerically or
//! lexicographically, by themselves or by weights found in other keys (`BY weight_*`,
//! `BY obj_*->field`), fetch other keys per element (`GET`), and reply or STORE a list.
//!
//! Keys named by BY/GET patterns are not declared keys: their shards are locked at run time
//! with `Ctx::lock_extra` before anything is read for the reply.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use smallvec::{smallvec, SmallVec};

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{StrValue, TtlOnWrite, Value};
use crate::pubsub::notify;
use crate::reply::ReplySink;
use crate::types::{Bytes, Limits, ListValue, ZSetValue};

use super::is;

// ---------------------------------------------------------------------------------------
// C number parsing
// ---------------------------------------------------------------------------------------

/// The result of C's `strtod`: the value, how many bytes it consumed (0: no conversion) and
/// whether it set `errno = ERANGE` (overflow, or an inexact result below the normal range).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Strtod {
    pub value: f64,
    pub end: usize,
    pub erange: bool,
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// glibc's `strtod` in the C locale over `s` as a C string (it stops at the first NUL):
/// leading blanks, a sign, then `inf`/`infinity`, `nan[(chars)]`, a hexadecimal float
/// (`0x1.8p3`) or a decimal one.
pub(crate) fn strtod(s: &[u8]) -> Strtod {
    let s = &s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())];
    let none = Strtod { value: 0.0, end: 0, erange: false };
    let mut i = s.iter().take_while(|&&b| is_c_space(b)).count();
    let negative = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let sign = if negative { -1.0 } else { 1.0 };
    let rest = &s[i..];
    let starts_ci = |word: &[u8]| rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word);
    if starts_ci(b"inf") {
        let end = i + if starts_ci(b"infinity") { 8 } else { 3 };
        return Strtod { value: sign * f64::INFINITY, end, erange: false };
    }
    if starts_ci(b"nan") {
        let mut end = i + 3;
        if s.get(end) == Some(&b'(') {
            let chars = s[end + 1..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
            if s.get(end + 1 + chars) == Some(&b')') {
                end += chars + 2;
            }
        }
        return Strtod { value: f64::NAN, end, erange: false };
    }
    if rest.len() > 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
        if let Some(hex) = parse_hex(&rest[2..]) {
            return Strtod { value: sign * hex.value, end: i + 2 + hex.end, erange: hex.erange };
        }
    }
    let digits = |from: usize| rest[from.min(rest.len())..].iter().take_while(|b| b.is_ascii_digit()).count();
    let int_digits = digits(0);
    let mut j = int_digits;
    let mut frac_digits = 0;
    if rest.get(j) == Some(&b'.') {
        frac_digits = digits(j + 1);
        j += 1 + frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return none;
    }
    let mantissa_end = j;
    if matches!(rest.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(rest.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let exp_digits = digits(k);
        if exp_digits > 0 {
            j = k + exp_digits;
        }
    }
    let text = std::str::from_utf8(&rest[..j]).expect("ASCII digits");
    let magnitude: f64 = text.parse().unwrap_or(0.0);
    let nonzero = rest[..mantissa_end].iter().any(|b| matches!(b, b'1'..=b'9'));
    // Decimal strings that land below the normal range are never exact in practice.
    let erange = nonzero && (magnitude.is_infinite() || magnitude < f64::MIN_POSITIVE);
    Strtod { value: sign * magnitude, end: i + j, erange }
}

/// A hexadecimal float after its `0x`: None when no hex digit follows (then C reads just
/// the leading `0`).
fn parse_hex(s: &[u8]) -> Option<Strtod> {
    let mut mantissa: u64 = 0;
    let mut sticky = false;
    let mut exp: i64 = 0;
    let mut i = 0;
    let mut any = false;
    let mut seen_dot = false;
    while i < s.len() {
        let b = s[i];
        if b == b'.' && !seen_dot {
            seen_dot = true;
            i += 1;
            continue;
        }
        let Some(d) = (b as char).to_digit(16) else { break };
        any = true;
        if mantissa >> 60 == 0 {
            mantissa = mantissa << 4 | u64::from(d);
            if seen_dot {
                exp -= 4;
            }
        } else {
            sticky |= d != 0;
            if !seen_dot {
                exp += 4;
            }
        }
        i += 1;
    }
    if !any {
        return None;
    }
    if matches!(s.get(i), Some(b'p' | b'P')) {
        let mut k = i + 1;
        let negative = s.get(k) == Some(&b'-');
        if matches!(s.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let n = s[k.min(s.len())..].iter().take_while(|b| b.is_ascii_digit()).count();
        if n > 0 {
            let e = s[k..k + n].iter().fold(0i64, |v, &b| (v * 10 + i64::from(b - b'0')).min(1 << 40));
            exp += if negative { -e } else { e };
            i = k + n;
        }
    }
    let (value, erange) = scale_binary(mantissa, sticky, exp);
    Some(Strtod { value, end: i, erange })
}

/// `m * 2^e` rounded to nearest even as a double (`sticky`: nonzero bits were dropped
/// below `m`), and whether glibc reports ERANGE: overflow, or a tiny inexact result
/// (x86 detects tininess after rounding).
fn scale_binary(m: u64, sticky: bool, e: i64) -> (f64, bool) {
    if m == 0 {
        return (0.0, false);
    }
    /// `m >> shift` rounded to nearest even; and whether anything was lost.
    fn round_shift(m: u64, sticky: bool, shift: i64) -> (u64, bool) {
        if shift <= 0 {
            return (m << (-shift).min(63), sticky);
        }
        let m = u128::from(m);
        let shift = shift.min(100) as u32;
        let q = m >> shift;
        let rem = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = rem > half || (rem == half && (sticky || q & 1 == 1));
        (q as u64 + u64::from(up), rem != 0 || sticky)
    }
    let e = e.clamp(-100_000, 100_000);
    let bits = i64::from(64 - m.leading_zeros());
    // Rounded to 53 bits with an unbounded exponent (for tininess after rounding).
    let (m53, _) = round_shift(m, sticky, bits - 53);
    let (m53, exp53) = if m53 >> 53 != 0 { (m53 >> 1, e + bits - 53 + 1) } else { (m53, e + bits - 53) };
    let top = exp53 + 52;
    if top > 1023 {
        return (f64::INFINITY, true);
    }
    if top >= -1022 {
        let biased = (top + 1023) as u64;
        return (f64::from_bits(biased << 52 | (m53 & ((1 << 52) - 1))), false);
    }
    // Subnormal: a multiple of 2^-1074.
    let (r, inexact) = round_shift(m, sticky, -(e + 1074));
    (f64::from_bits(r), inexact)
}

/// Redis's `string2d` (getDoubleFromObject): the whole argument must be a double, without
/// leading blanks; NaN, and overflow or underflow to zero, are errors.
pub(crate) fn string2d(s: &[u8]) -> Option<f64> {
    if s.is_empty() || is_c_space(s[0]) {
        return None;
    }
    let r = strtod(s);
    let out_of_range = r.erange && (r.value.is_infinite() || r.value == 0.0);
    (r.end == s.len() && !out_of_range && !r.value.is_nan()).then_some(r.value)
}

// ---------------------------------------------------------------------------------------
// Redis's partial quicksort
// ---------------------------------------------------------------------------------------

/// Redis's `pqsort` (Bentley & McIlroy's quicksort that skips partitions outside the
/// wanted range): afterwards `v[lrange..=rrange]` holds what a full sort would put there.
/// SORT ... BY ... LIMIT and GEO searches with COUNT use it, and since it is not stable
/// it is reproduced step by step: elements that compare equal come out in Redis's order.
pub(crate) fn pqsort<T>(v: &mut [T], cmp: &mut impl FnMut(&T, &T) -> Ordering, lrange: i64, rrange: i64) {
    let n = v.len();
    pqsort_at(v, 0, n, cmp, lrange, rrange);
}

fn med3<T>(v: &[T], a: usize, b: usize, c: usize, cmp: &mut impl FnMut(&T, &T) -> Ordering) -> usize {
    if cmp(&v[a], &v[b]) == Ordering::Less {
        if cmp(&v[b], &v[c]) == Ordering::Less {
            b
        } else if cmp(&v[a], &v[c]) == Ordering::Less {
            c
        } else {
            a
        }
    } else if cmp(&v[b], &v[c]) == Ordering::Greater {
        b
    } else if cmp(&v[a], &v[c]) == Ordering::Less {
        a
    } else {
        c
    }
}

fn vecswap<T>(v: &mut [T], a: usize, b: usize, n: usize) {
    for k in 0..n {
        v.swap(a + k, b + k);
    }
}

/// Whether the partition `[start, start + len)` overlaps the wanted range (C compares
/// pointers; these are the same comparisons in elements).
fn wanted(start: usize, len: usize, lrange: i64, rrange: i64) -> bool {
    let (l, r) = (start as i64, (start + len) as i64 - 1);
    !((lrange < l && rrange < l) || (lrange > r && rrange > r))
}

fn pqsort_at<T>(
    v: &mut [T],
    mut a: usize,
    mut n: usize,
    cmp: &mut impl FnMut(&T, &T) -> Ordering,
    lrange: i64,
    rrange: i64,
) {
    loop {
        if n < 7 {
            for pm in a + 1..a + n {
                let mut pl = pm;
                while pl > a && cmp(&v[pl - 1], &v[pl]) == Ordering::Greater {
                    v.swap(pl, pl - 1);
                    pl -= 1;
                }
            }
            return;
        }
        let mut pm = a + n / 2;
        if n > 7 {
            let mut pl = a;
            let mut pn = a + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(v, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(v, pm - d, pm, pm + d, cmp);
                pn = med3(v, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(v, pl, pm, pn, cmp);
        }
        v.swap(a, pm);
        let (mut pa, mut pb) = (a + 1, a + 1);
        let (mut pc, mut pd) = (a + n - 1, a + n - 1);
        loop {
            while pb <= pc {
                let c = cmp(&v[pb], &v[a]);
                if c == Ordering::Greater {
                    break;
                }
                if c == Ordering::Equal {
                    v.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb <= pc {
                let c = cmp(&v[pc], &v[a]);
                if c == Ordering::Less {
                    break;
                }
                if c == Ordering::Equal {
                    v.swap(pc, pd);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            v.swap(pb, pc);
            pb += 1;
            pc -= 1;
        }
        let pn = a + n;
        let r = (pa - a).min(pb - pa);
        vecswap(v, a, pb - r, r);
        let r = (pd - pc).min(pn - pd - 1);
        vecswap(v, pb, pn - r, r);
        let r = pb - pa;
        if r > 1 && wanted(a, r, lrange, rrange) {
            pqsort_at(v, a, r, cmp, lrange, rrange);
        }
        let r = pd - pc;
        if r > 1 {
            // Iterate rather than recurse, as the C does.
            a = pn - r;
            n = r;
            if wanted(a, n, lrange, rrange) {
                continue;
            }
        }
        return;
    }
}

// ---------------------------------------------------------------------------------------
// Patterns
// ---------------------------------------------------------------------------------------

/// What a BY/GET pattern names for one element (Redis's lookupKeyByPattern).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Lookup {
    /// `#`: the element itself.
    Element,
    /// No `*` in the pattern: nothing (GET replies nil).
    Nothing,
    /// A string key, or a field of a hash key.
    Key { key: Vec<u8>, field: Option<Vec<u8>> },
}

/// Substitutes `element` for the first `*` of `pattern`. As in C, the pattern is read as a
/// C string for finding `*` and `->` (a NUL ends the search) while the key and field take
/// every byte. `->` only names a hash field when it comes after the `*` and is followed by
/// at least one character.
fn pattern_lookup(pattern: &[u8], element: &[u8]) -> Lookup {
    let c_len = pattern.iter().position(|&b| b == 0).unwrap_or(pattern.len());
    let cstr = &pattern[..c_len];
    if cstr == b"#" {
        return Lookup::Element;
    }
    let Some(star) = cstr.iter().position(|&b| b == b'*') else { return Lookup::Nothing };
    let arrow = cstr[star + 1..].windows(2).position(|w| w == b"->").map(|p| star + 1 + p);
    let (suffix_end, field) = match arrow {
        Some(a) if a + 2 < c_len => (a, Some(pattern[a + 2..].to_vec())),
        _ => (pattern.len(), None),
    };
    let mut key = Vec::with_capacity(pattern.len() + element.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(element);
    key.extend_from_slice(&pattern[star + 1..suffix_end]);
    Lookup::Key { key, field }
}

/// A looked-up value: strings keep their integer encoding (it decides how a numeric
/// weight converts to a double).
enum Found {
    Int(i64),
    Bytes(Vec<u8>),
}

impl Found {
    fn into_bytes(self) -> Vec<u8> {
        match self {
            Found::Int(n) => n.to_string().into_bytes(),
            Found::Bytes(b) => b,
        }
    }
}

/// Reads what `pattern` names for `element`, as lookupKeyRead does (access recorded,
/// keyspace hit or miss counted). Wrong types read as missing.
fn fetch(ctx: &mut Ctx<'_>, pattern: &[u8], element: &[u8]) -> Option<Found> {
    let (key, field) = match pattern_lookup(pattern, element) {
        Lookup::Element => return Some(Found::Bytes(element.to_vec())),
        Lookup::Nothing => return None,
        Lookup::Key { key, field } => (key, field),
    };
    let now = ctx.now_ms;
    let found = ctx.db(&key).get(&key, now).map(|e| match (&e.value, &field) {
        (Value::Str(StrValue::Int(n)), None) => Some(Found::Int(*n)),
        (Value::Str(s), None) => Some(Found::Bytes(s.as_bytes().into_owned())),
        // PERF: a scan of the fields until the hash family's `HashValue::get` is merged.
        (Value::Hash(h), Some(f)) => h.iter().find(|(k, _)| *k == &f[..]).map(|(_, v)| Found::Bytes(v.to_vec())),
        _ => None,
    });
    ctx.hit(&key, found.is_some());
    found.flatten()
}

// ---------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------

#[derive(Debug, Default)]
struct SortOptions<'a> {
    desc: bool,
    alpha: bool,
    limit_start: i64,
    /// -1: no limit.
    limit_count: i64,
    by: Option<&'a [u8]>,
    /// BY a pattern without `*`: keep the native order.
    dont_sort: bool,
    gets: Vec<&'a [u8]>,
    store: Option<&'a [u8]>,
}

/// Parses the options after the key as sortCommandGeneric does: later options override
/// earlier ones, STORE is only known to SORT.
/// `full_key_access`: the user may read every key (Redis refuses BY and GET patterns
/// otherwise: they read keys no ACL check saw).
fn parse_options<'a>(
    args: &[&'a [u8]],
    readonly: bool,
    full_key_access: bool,
    cluster: bool,
) -> Result<SortOptions<'a>, CmdError> {
    let mut o = SortOptions { limit_count: -1, ..Default::default() };
    let mut j = 2;
    while j < args.len() {
        let left = args.len() - j - 1;
        let arg = args[j];
        if is(arg, "asc") {
            o.desc = false;
        } else if is(arg, "desc") {
            o.desc = true;
        } else if is(arg, "alpha") {
            o.alpha = true;
        } else if is(arg, "limit") && left >= 2 {
            o.limit_start = super::parse_i64(args[j + 1])?;
            o.limit_count = super::parse_i64(args[j + 2])?;
            j += 2;
        } else if !readonly && is(arg, "store") && left >= 1 {
            o.store = Some(args[j + 1]);
            j += 1;
        } else if is(arg, "by") && left >= 1 {
            o.by = Some(args[j + 1]);
            // C's strchr: a '*' after a NUL is not seen.
            o.dont_sort = !args[j + 1].iter().take_while(|&&b| b != 0).any(|&b| b == b'*');
            if !o.dont_sort && cluster {
                return Err(CmdError::msg("ERR BY option of SORT denied in Cluster mode."));
            }
            if !o.dont_sort && !full_key_access {
                return Err(CmdError::msg("ERR BY option of SORT denied due to insufficient ACL permissions."));
            }
            j += 1;
        } else if is(arg, "get") && left >= 1 {
            if cluster {
                return Err(CmdError::msg("ERR GET option of SORT denied in Cluster mode."));
            }
            if !full_key_access {
                return Err(CmdError::msg("ERR GET option of SORT denied due to insufficient ACL permissions."));
            }
            o.gets.push(args[j + 1]);
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    Ok(o)
}

// ---------------------------------------------------------------------------------------
// The sort
// ---------------------------------------------------------------------------------------

/// One element to sort with its weight: a score, or for ALPHA BY the weight string
/// (None when the weight key is missing: it sorts first).
struct Item {
    obj: Vec<u8>,
    score: f64,
    cmp: Option<Vec<u8>>,
}

/// The source's elements and type, read without recording access (for finding the keys to
/// lock) or with it (for the real run).
enum Source {
    Missing,
    List(Vec<Vec<u8>>),
    Set(Vec<Vec<u8>>),
    ZSet(Vec<Vec<u8>>),
}

fn read_source(ctx: &mut Ctx<'_>, key: &[u8], record: bool) -> Result<Source, CmdError> {
    let now = ctx.now_ms;
    let db = ctx.db(key);
    let value = if record {
        db.get_mut(key, now).map(|e| {
            // Redis converts a listpack sorted set to a skiplist for good before sorting it
            // (OBJECT ENCODING shows it afterwards), even for SORT_RO.
            if let Value::ZSet(z @ ZSetValue::Listpack(_)) = &mut e.value {
                let entries = z.iter().map(|(m, s)| (Bytes::from(m), s)).collect();
                let always_skiplist = Limits { zset_max_listpack_entries: 0, ..Limits::default() };
                *z = ZSetValue::from_entries(entries, &always_skiplist);
            }
            &e.value
        })
    } else {
        db.peek(key, now).map(|e| &e.value)
    };
    let source = match value {
        None => Ok(Source::Missing),
        Some(Value::List(l)) => Ok(Source::List(l.iter().map(<[u8]>::to_vec).collect())),
        Some(Value::Set(s)) => Ok(Source::Set(s.iter().map(|m| m.into_owned()).collect())),
        Some(Value::ZSet(z)) => Ok(Source::ZSet(z.iter().map(|(m, _)| m.to_vec()).collect())),
        Some(_) => Err(CmdError::WrongType),
    };
    if record {
        ctx.hit(key, !matches!(source, Ok(Source::Missing)));
    }
    source
}

/// C's `strcoll` in the C locale: bytes compared up to the first NUL.
fn c_strcmp(a: &[u8], b: &[u8]) -> Ordering {
    let cut = |s: &[u8]| s.iter().position(|&c| c == 0).map_or(s.len(), |n| n);
    a[..cut(a)].cmp(&b[..cut(b)])
}

/// Locks the shards of every key the patterns can touch, re-reading the source after a
/// relock until the set of keys is stable.
fn lock_pattern_keys(ctx: &mut Ctx<'_>, key: &[u8], o: &SortOptions<'_>) {
    let mut patterns: SmallVec<[&[u8]; 4]> = o.gets.iter().copied().collect();
    if let (Some(by), false) = (o.by, o.dont_sort) {
        patterns.push(by);
    }
    patterns.retain(|p| matches!(pattern_lookup(p, b""), Lookup::Key { .. }));
    loop {
        // One representative key per shard is enough to lock it.
        let mut by_shard: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
        if let Some(store) = o.store {
            by_shard.insert(ctx.engine.keyspace.shard_of(store), store.to_vec());
        }
        if !patterns.is_empty() {
            // A wrong type is reported by the real read, which also counts the lookup.
            let elements = match read_source(ctx, key, false) {
                Ok(Source::List(v) | Source::Set(v) | Source::ZSet(v)) => v,
                Ok(Source::Missing) | Err(_) => Vec::new(),
            };
            for element in &elements {
                for pattern in &patterns {
                    if let Lookup::Key { key, .. } = pattern_lookup(pattern, element) {
                        by_shard.entry(ctx.engine.keyspace.shard_of(&key)).or_insert(key);
                    }
                }
            }
        }
        let keys: Vec<&[u8]> = by_shard.values().map(|k| &k[..]).collect();
        if !ctx.lock_extra(&keys) {
            return;
        }
    }
}

/// The output window `[start, end]` for LIMIT over `len` elements (sortCommandGeneric's
/// arithmetic: an empty window is `end < start`).
fn limit_window(limit_start: i64, limit_count: i64, len: i64) -> (i64, i64) {
    let mut start = limit_start.max(0).min(len);
    let count = limit_count.max(-1).min(len);
    let mut end = if count < 0 { len - 1 } else { start + count - 1 };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    (start, end.min(len - 1))
}

fn sort_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, readonly: bool) -> CmdResult {
    let user = &ctx.client.user;
    let full_key_access = user.is_unrestricted()
        || ctx.client.must_obey
        || crate::acl::allows_command_on_all_keys(&user.rules(), ctx.spec, args, crate::acl::rules::READ);
    // (In a cluster BY and GET patterns would name keys of other nodes: Redis refuses them.)
    let mut o = parse_options(args, readonly, full_key_access, ctx.engine.cluster.enabled())?;
    let key = args[1];
    lock_pattern_keys(ctx, key, &o);
    let source = read_source(ctx, key, true)?;

    // A set has no native order: with STORE, or inside a script, it is sorted ALPHA so the
    // result (and what replicas see) is deterministic.
    if o.dont_sort && matches!(source, Source::Set(_)) && (o.store.is_some() || ctx.client.in_script) {
        o.dont_sort = false;
        o.alpha = true;
        o.by = None;
    }
    let (native_ordered, elements) = match source {
        Source::Missing => (true, Vec::new()),
        Source::List(v) | Source::ZSet(v) => (true, v),
        Source::Set(v) => (false, v),
    };
    let len = elements.len() as i64;
    let (mut start, mut end) = limit_window(o.limit_start, o.limit_count, len);

    let mut items: Vec<Item>;
    if native_ordered && o.dont_sort {
        // Lists and sorted sets keep their order (reversed by DESC); LIMIT picks the range.
        let take = if end >= start { (end - start + 1) as usize } else { 0 };
        let picked: Vec<Vec<u8>> = if o.desc {
            elements.into_iter().rev().skip(start as usize).take(take).collect()
        } else {
            elements.into_iter().skip(start.max(0) as usize).take(take).collect()
        };
        items = picked.into_iter().map(|obj| Item { obj, score: 0.0, cmp: None }).collect();
        end -= start;
        start = 0;
    } else {
        items = elements.into_iter().map(|obj| Item { obj, score: 0.0, cmp: None }).collect();
    }

    let mut conversion_error = false;
    if !o.dont_sort {
        for item in &mut items {
            let weight = match o.by {
                Some(by) => match fetch(ctx, by, &item.obj) {
                    Some(w) => w,
                    None => continue,
                },
                None => Found::Bytes(Vec::new()),
            };
            if o.alpha {
                if o.by.is_some() {
                    item.cmp = Some(weight.into_bytes());
                }
                continue;
            }
            let text = match &weight {
                Found::Int(n) => {
                    item.score = *n as f64;
                    continue;
                }
                Found::Bytes(b) if o.by.is_some() => b,
                Found::Bytes(_) => &item.obj,
            };
            let r = strtod(text);
            item.score = r.value;
            // C checks the byte after the number: a NUL there ends the string for it.
            let rest = &text[r.end..];
            if !(rest.is_empty() || rest[0] == 0) || r.erange || r.value.is_nan() {
                conversion_error = true;
            }
        }
        let (alpha, by, store) = (o.alpha, o.by.is_some(), o.store.is_some());
        let compare = |a: &Item, b: &Item| -> Ordering {
            if !alpha {
                return a.score.partial_cmp(&b.score).unwrap_or(Ordering::Equal).then_with(|| a.obj.cmp(&b.obj));
            }
            if by {
                return match (&a.cmp, &b.cmp) {
                    (None, None) => Ordering::Equal,
                    (None, Some(_)) => Ordering::Less,
                    (Some(_), None) => Ordering::Greater,
                    (Some(x), Some(y)) if store => x.cmp(y),
                    (Some(x), Some(y)) => c_strcmp(x, y),
                };
            }
            if store {
                a.obj.cmp(&b.obj)
            } else {
                c_strcmp(&a.obj, &b.obj)
            }
        };
        let mut directed = |a: &Item, b: &Item| if o.desc { compare(b, a) } else { compare(a, b) };
        if by && (start != 0 || end != len - 1) {
            pqsort(&mut items, &mut directed, start, end);
        } else {
            // glibc's qsort is a merge sort: stable, ties keep the source order.
            items.sort_by(directed);
        }
    }

    if conversion_error {
        return Err(CmdError::msg("ERR One or more scores can't be converted into double"));
    }
    let window: &[Item] = if end >= start { &items[start as usize..=end as usize] } else { &[] };
    let output_len = if o.gets.is_empty() { window.len() } else { window.len() * o.gets.len() };
    match o.store {
        None => {
            out.array(output_len);
            for item in window {
                if o.gets.is_empty() {
                    out.bulk(&item.obj);
                }
                for get in &o.gets {
                    match fetch(ctx, get, &item.obj) {
                        Some(v) => out.bulk(&v.into_bytes()),
                        None => out.null(),
                    }
                }
            }
        }
        Some(dest) => {
            let mut result = Vec::with_capacity(output_len);
            for item in window {
                if o.gets.is_empty() {
                    result.push(item.obj.clone().into_boxed_slice());
                }
                for get in &o.gets {
                    result
                        .push(fetch(ctx, get, &item.obj).map(Found::into_bytes).unwrap_or_default().into_boxed_slice());
                }
            }
            let now = ctx.now_ms;
            if result.is_empty() {
                if ctx.db(dest).remove(dest, now) {
                    ctx.notify(notify::GENERIC, "del", dest);
                }
            } else {
                ctx.db(dest).set(dest, Value::List(result.into_iter().collect::<ListValue>()), TtlOnWrite::Clear, now);
                // Redis counts one change per stored element; `set` counted one.
                ctx.dirty(output_len as u64 - 1);
                ctx.notify(notify::LIST, "sortstore", dest);
            }
            out.integer(output_len as i64);
        }
    }
    Ok(())
}

/// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]
/// [STORE destination] — O(N+M*log(M)), N elements to sort, M returned.
fn sort(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    sort_generic(ctx, args, out, false)
}

/// SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA] —
/// O(N+M*log(M)).
fn sort_ro(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    sort_generic(ctx, args, out, true)
}

/// SORT's keys (Redis's sortGetKeys): the sorted key, and the last STORE destination
/// found when skipping the arguments of LIMIT, GET and BY.
fn sort_getkeys(args: &[&[u8]]) -> SmallVec<[(usize, usize); 4]> {
    let mut keys: SmallVec<[(usize, usize); 4]> = smallvec![(1, 0)];
    let mut store = None;
    let mut i = 2;
    while i < args.len() {
        if is(args[i], "limit") {
            i += 2;
        } else if is(args[i], "get") || is(args[i], "by") {
            i += 1;
        } else if is(args[i], "store") && i + 1 < args.len() {
            store = Some(i + 1);
        }
        i += 1;
    }
    keys.extend(store.map(|p| (p, 2)));
    keys
}

/// SORT_RO's only declared key is the sorted one.
fn sort_ro_getkeys(_args: &[&[u8]]) -> SmallVec<[(usize, usize); 4]> {
    smallvec![(1, 0)]
}

const SORT_SUMMARY: &str = "Sort the elements in a list, set or sorted set";
const SORT_COMPLEXITY: &str = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).";
const BY_GET_NOTES: &str = "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort";
const STORE_NOTES: &str =
    "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array";

fn sort_args(with_store: bool) -> Vec<ArgDoc> {
    let pattern = |token| ArgDoc { key_spec_index: Some(1), ..ArgDoc::new("pattern", ArgType::Pattern).after(token) };
    let mut args = vec![
        ArgDoc::key("key", 0),
        pattern("BY").optional(),
        ArgDoc::block(
            "offset_count",
            vec![ArgDoc::new("offset", ArgType::Integer), ArgDoc::new("count", ArgType::Integer)],
        )
        .after("LIMIT")
        .optional(),
        pattern("GET").optional().multiple().multiple_token(),
        ArgDoc::one_of("order", vec![ArgDoc::token("asc", "ASC"), ArgDoc::token("desc", "DESC")]).optional(),
        ArgDoc::token("sorting", "ALPHA").optional(),
    ];
    if with_store {
        args.push(ArgDoc::key("destination", 2).after("STORE").optional());
    }
    args
}

pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::new("sort", -2, "write denyoom", "set sortedset list dangerous", sort)
            .doc("generic", "1.0.0", SORT_SUMMARY, SORT_COMPLEXITY)
            .keys("RO access", 1, 0, 1)
            .keys_unknown("RO access")
            .key_notes(BY_GET_NOTES)
            .keys_unknown("OW update")
            .key_notes(STORE_NOTES)
            .getkeys(sort_getkeys)
            .args(sort_args(true)),
        CommandSpec::new("sort_ro", -2, "readonly", "set sortedset list dangerous", sort_ro)
            .doc(
                "generic",
                "7.0.0",
                "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
                SORT_COMPLEXITY,
            )
            .keys("RO access", 1, 0, 1)
            .keys_unknown("RO access")
            .key_notes(BY_GET_NOTES)
            .getkeys(sort_ro_getkeys)
            .args(sort_args(false)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str, f: Option<&str>) -> Lookup {
        Lookup::Key { key: k.as_bytes().to_vec(), field: f.map(|f| f.as_bytes().to_vec()) }
    }

    #[test]
    fn patterns_substitute_like_redis() {
        assert_eq!(pattern_lookup(b"#", b"x"), Lookup::Element);
        assert_eq!(pattern_lookup(b"nosort", b"x"), Lookup::Nothing);
        assert_eq!(pattern_lookup(b"w_*", b"3"), key("w_3", None));
        assert_eq!(pattern_lookup(b"w_*_z", b"3"), key("w_3_z", None));
        assert_eq!(pattern_lookup(b"o_*->f", b"3"), key("o_3", Some("f")));
        // "->" at the end names no field; before the '*' it is part of the key.
        assert_eq!(pattern_lookup(b"o_*->", b"3"), key("o_3->", None));
        assert_eq!(pattern_lookup(b"a->b*", b"3"), key("a->b3", None));
        // Only the first '*' is substituted.
        assert_eq!(pattern_lookup(b"*_*", b"3"), key("3_*", None));
        // A NUL ends the search for '*'.
        assert_eq!(pattern_lookup(b"a\0*", b"3"), Lookup::Nothing);
    }

    #[test]
    fn strtod_like_glibc() {
        let v = |s: &str| {
            let r = strtod(s.as_bytes());
            (r.value, r.end, r.erange)
        };
        assert_eq!(v("1.5"), (1.5, 3, false));
        assert_eq!(v("  -2e3x"), (-2000.0, 6, false));
        assert_eq!(v("1e"), (1.0, 1, false));
        assert_eq!(v(""), (0.0, 0, false));
        assert_eq!(v("abc"), (0.0, 0, false));
        assert_eq!(v(".5"), (0.5, 2, false));
        assert_eq!(v("5."), (5.0, 2, false));
        assert_eq!(v("0x10"), (16.0, 4, false));
        assert_eq!(v("0x1.8p1"), (3.0, 7, false));
        assert_eq!(v("0x"), (0.0, 1, false));
        assert_eq!(v("-inf"), (f64::NEG_INFINITY, 4, false));
        assert_eq!(v("Infinity"), (f64::INFINITY, 8, false));
        assert_eq!(v("1e400"), (f64::INFINITY, 5, true));
        assert_eq!(v("1e-400"), (0.0, 6, true));
        assert_eq!(v("0e-400"), (0.0, 6, false));
        assert!(strtod(b"nan(123)").value.is_nan());
        assert_eq!(strtod(b"nan(123)").end, 8);
        assert_eq!(strtod(b"1\x002").end, 1);
    }

    mod libc_fns {
        extern "C" {
            pub fn strtod(nptr: *const std::ffi::c_char, endptr: *mut *mut std::ffi::c_char) -> f64;
            pub fn __errno_location() -> *mut i32;
        }
    }

    /// glibc's strtod on `s`: value, bytes used, whether errno became ERANGE.
    fn glibc_strtod(s: &[u8]) -> (f64, usize, bool) {
        let c = std::ffi::CString::new(s).expect("no NUL");
        let mut end: *mut std::ffi::c_char = std::ptr::null_mut();
        // SAFETY: `c` is a valid C string for the whole call; errno is this thread's.
        unsafe {
            *libc_fns::__errno_location() = 0;
            let v = libc_fns::strtod(c.as_ptr(), &mut end);
            let used = end.offset_from(c.as_ptr()) as usize;
            (v, used, *libc_fns::__errno_location() == 34)
        }
    }

    /// SORT rejects a weight whenever strtod sets ERANGE, denormal results included, so
    /// the flag is checked as well as the value and the length read.
    #[test]
    fn strtod_agrees_with_glibc() {
        let alphabet: &[&[u8]] = &[
            b"0",
            b"1",
            b"5",
            b"9",
            b".",
            b"e",
            b"-",
            b"+",
            b"x",
            b"p",
            b"a",
            b"f",
            b"inf",
            b"nan",
            b" ",
            b"(",
            b")",
            b"e308",
            b"e-310",
            b"e-320",
            b"e-400",
            b"0x1",
            b"0x1p-1074",
            b"0x1.8p-1070",
            b"7",
            b"00000000000",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut r = seed;
            let mut s = Vec::new();
            for _ in 0..(r % 6 + 1) {
                r /= 6;
                s.extend_from_slice(alphabet[(r % alphabet.len() as u64) as usize]);
                r /= alphabet.len() as u64;
            }
            let ours = strtod(&s);
            let (v, used, erange) = glibc_strtod(&s);
            let same = (ours.value.is_nan() && v.is_nan()) || ours.value.to_bits() == v.to_bits();
            assert!(
                same && ours.end == used && ours.erange == erange,
                "{:?}: ours {ours:?}, glibc ({v}, {used}, {erange})",
                String::from_utf8_lossy(&s)
            );
        }
    }

    #[test]
    fn string2d_is_strict() {
        assert_eq!(string2d(b"1.5"), Some(1.5));
        assert_eq!(string2d(b"-inf"), Some(f64::NEG_INFINITY));
        for bad in [&b""[..], b" 1", b"1 ", b"nan", b"1e400", b"1e-400", b"1\x00", b"abc"] {
            assert_eq!(string2d(bad), None, "{bad:?}");
        }
        // Subnormal results are accepted (ERANGE, but neither zero nor infinite).
        assert!(string2d(b"1e-310").is_some());
    }

    #[test]
    fn limit_windows() {
        assert_eq!(limit_window(0, -1, 5), (0, 4));
        assert_eq!(limit_window(1, 2, 5), (1, 2));
        assert_eq!(limit_window(5, 10, 5), (4, 3));
        assert_eq!(limit_window(-10, 100, 5), (0, 4));
        assert_eq!(limit_window(2, 0, 5), (2, 1));
        assert_eq!(limit_window(0, -1, 0), (-1, -2));
        assert_eq!(limit_window(2, i64::MAX, 3), (2, 2));
    }

    #[test]
    fn pqsort_orders_the_wanted_window() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..300 {
            let n = (next() % 120) as usize;
            let v: Vec<u32> = (0..n).map(|_| (next() % 50) as u32).collect();
            let mut full = v.clone();
            full.sort_unstable();
            let (l, r) = if n == 0 {
                (0, 0)
            } else {
                let a = (next() % n as u64) as usize;
                let b = (next() % n as u64) as usize;
                (a.min(b), a.max(b))
            };
            let mut partial = v.clone();
            pqsort(&mut partial, &mut |a: &u32, b: &u32| a.cmp(b), l as i64, r as i64);
            if n > 0 {
                assert_eq!(partial[l..=r], full[l..=r], "round {round}: {v:?} [{l}, {r}]");
            }
            let mut whole = v.clone();
            pqsort(&mut whole, &mut |a: &u32, b: &u32| a.cmp(b), 0, n as i64 - 1);
            assert_eq!(whole, full);
        }
    }

    #[test]
    fn getkeys_finds_the_last_store() {
        let args: Vec<&[u8]> = vec![b"sort", b"k", b"get", b"store", b"store", b"a", b"store", b"b"];
        assert_eq!(sort_getkeys(&args).as_slice(), &[(1, 0), (7, 2)]);
        let args: Vec<&[u8]> = vec![b"sort", b"k", b"limit", b"store", b"x", b"by", b"store"];
        assert_eq!(sort_getkeys(&args).as_slice(), &[(1, 0)]);
    }
}
