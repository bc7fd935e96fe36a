//! Model tests for hashes and sets: random command sequences run through the engine
//! in-process and against a simple model (an insertion-ordered Vec per hash, a BTreeSet per
//! set) that must agree on every reply, on OBJECT ENCODING, and on the order of listpack and
//! intset replies. Small encoding thresholds make conversions frequent.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use proptest::prelude::*;
use quince_engine::{Client, Engine, EngineOptions, ManualClock, Reply, ReplyBuilder};

const HASH_ENTRIES: usize = 4;
const HASH_VALUE: usize = 8;
const INTSET_ENTRIES: usize = 4;

struct Harness {
    engine: Engine,
    client: Client,
}

impl Harness {
    fn new() -> Self {
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        let engine = Engine::new(EngineOptions { clock, shards: 4, ..EngineOptions::default() });
        let client = engine.new_client();
        let mut h = Self { engine, client };
        for (name, value) in [
            ("hash-max-listpack-entries", HASH_ENTRIES),
            ("hash-max-listpack-value", HASH_VALUE),
            ("set-max-intset-entries", INTSET_ENTRIES),
        ] {
            assert_eq!(h.run(&[b"CONFIG", b"SET", name.as_bytes(), value.to_string().as_bytes()]), simple("OK"));
        }
        h
    }

    fn run(&mut self, args: &[&[u8]]) -> Reply {
        let mut out = ReplyBuilder::new();
        self.engine.execute(&mut self.client, args, &mut out);
        let mut replies = out.take();
        assert_eq!(replies.len(), 1, "one reply to {args:?}");
        replies.remove(0)
    }

    fn run_str(&mut self, args: &[&str]) -> Reply {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.run(&args)
    }
}

fn simple(s: &str) -> Reply {
    Reply::Simple(s.into())
}

fn bulk(b: &[u8]) -> Reply {
    Reply::Bulk(b.to_vec())
}

fn int(n: i64) -> Reply {
    Reply::Integer(n)
}

fn err(s: &str) -> Reply {
    Reply::Error(s.into())
}

fn is_int(b: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(b).ok()?;
    let n: i64 = s.parse().ok()?;
    // string2ll: canonical form only (no '+', no leading zeros, no "-0").
    (n.to_string() == s).then_some(n)
}

/// A hash as Redis keeps it: insertion order, and whether it is still a listpack.
#[derive(Debug, Clone, Default)]
struct ModelHash {
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
    listpack: bool,
}

impl ModelHash {
    fn new() -> Self {
        Self { pairs: Vec::new(), listpack: true }
    }
    fn get(&self, f: &[u8]) -> Option<&Vec<u8>> {
        self.pairs.iter().find(|(k, _)| k == f).map(|(_, v)| v)
    }
    /// Returns whether the field is new.
    fn set(&mut self, f: &[u8], v: &[u8]) -> bool {
        if f.len() > HASH_VALUE || v.len() > HASH_VALUE {
            self.listpack = false;
        }
        if let Some(slot) = self.pairs.iter_mut().find(|(k, _)| k == f) {
            slot.1 = v.to_vec();
            return false;
        }
        self.pairs.push((f.to_vec(), v.to_vec()));
        if self.pairs.len() > HASH_ENTRIES {
            self.listpack = false;
        }
        true
    }
    fn remove(&mut self, f: &[u8]) -> bool {
        let before = self.pairs.len();
        self.pairs.retain(|(k, _)| k != f);
        before != self.pairs.len()
    }
}

/// A set and whether it is still an intset.
#[derive(Debug, Clone, Default)]
struct ModelSet {
    members: BTreeSet<Vec<u8>>,
    intset: bool,
}

impl ModelSet {
    fn new_for(first: &[u8]) -> Self {
        Self { members: BTreeSet::new(), intset: is_int(first).is_some() }
    }
    /// The encoding a set built by adding `members` to an empty intset gets (STORE results).
    fn built(members: BTreeSet<Vec<u8>>) -> Self {
        let intset = members.len() <= INTSET_ENTRIES && members.iter().all(|m| is_int(m).is_some());
        Self { members, intset }
    }
    fn add(&mut self, m: &[u8]) -> bool {
        if is_int(m).is_none() {
            self.intset = false;
        }
        let added = self.members.insert(m.to_vec());
        if self.members.len() > INTSET_ENTRIES {
            self.intset = false;
        }
        added
    }
    /// Members in the order an intset replies: numerically ascending.
    fn ordered(&self) -> Vec<Vec<u8>> {
        let mut v: Vec<&Vec<u8>> = self.members.iter().collect();
        v.sort_by_key(|m| is_int(m).expect("intset members are integers"));
        v.into_iter().cloned().collect()
    }
}

#[derive(Debug, Clone)]
enum Value {
    Hash(ModelHash),
    Set(ModelSet),
    Str,
}

#[derive(Debug, Default)]
struct Model {
    keys: BTreeMap<Vec<u8>, Value>,
}

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// Hash commands mostly meet hashes, set commands sets; `{k}x` is shared (and so may hold
/// either type) and `{k}str` is a string.
const HKEYS: &[&str] = &["{k}h1", "{k}h2", "{k}x", "{k}str"];
const SKEYS: &[&str] = &["{k}s1", "{k}s2", "{k}s3", "{k}x", "{k}str"];
const ALL_KEYS: &[&str] = &["{k}h1", "{k}h2", "{k}s1", "{k}s2", "{k}s3", "{k}x", "{k}str"];
const FIELDS: &[&str] = &["a", "b", "c", "1", "2", "-3", "007", "longfield", "x", ""];
const VALUES: &[&str] = &["1", "2", "-5", "abc", "9223372036854775807", "longvalue!", "", "10"];
const MEMBERS: &[&str] = &["1", "2", "3", "-4", "10", "5", "6", "a", "b", "01", "longmember", ""];

#[derive(Debug, Clone)]
enum Op {
    HSet(usize, Vec<(usize, usize)>),
    HSetNx(usize, usize, usize),
    HDel(usize, Vec<usize>),
    HGet(usize, usize),
    HMGet(usize, Vec<usize>),
    HLen(usize),
    HExists(usize, usize),
    HStrLen(usize, usize),
    HIncrBy(usize, usize, i64),
    HGetAll(usize),
    HKeys(usize),
    HScan(usize, usize),
    HRandField(usize, i64, bool),
    SAdd(usize, Vec<usize>),
    SRem(usize, Vec<usize>),
    SIsMember(usize, usize),
    SMIsMember(usize, Vec<usize>),
    SCard(usize),
    SMembers(usize),
    SPop(usize, Option<usize>),
    SRandMember(usize, i64),
    SMove(usize, usize, usize),
    SInter(Vec<usize>),
    SInterCard(Vec<usize>, usize),
    SUnion(Vec<usize>),
    SDiff(Vec<usize>),
    Store(u8, usize, Vec<usize>),
    SScan(usize, usize),
    Del(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0..HKEYS.len();
    let skey = 0..SKEYS.len();
    let field = 0..FIELDS.len();
    let value = 0..VALUES.len();
    // Integers (the first seven members) are favoured so that intsets grow past their limit.
    let member = prop_oneof![4 => 0..7usize, 1 => 7..MEMBERS.len()];
    let keys = prop::collection::vec(0..SKEYS.len(), 1..4);
    prop_oneof![
        4 => (key.clone(), prop::collection::vec((field.clone(), value.clone()), 1..4)).prop_map(|(k, p)| Op::HSet(k, p)),
        1 => (key.clone(), field.clone(), value.clone()).prop_map(|(k, f, v)| Op::HSetNx(k, f, v)),
        1 => (key.clone(), prop::collection::vec(field.clone(), 1..4)).prop_map(|(k, f)| Op::HDel(k, f)),
        1 => (key.clone(), field.clone()).prop_map(|(k, f)| Op::HGet(k, f)),
        1 => (key.clone(), prop::collection::vec(field.clone(), 1..4)).prop_map(|(k, f)| Op::HMGet(k, f)),
        1 => key.clone().prop_map(Op::HLen),
        1 => (key.clone(), field.clone()).prop_map(|(k, f)| Op::HExists(k, f)),
        1 => (key.clone(), field.clone()).prop_map(|(k, f)| Op::HStrLen(k, f)),
        1 => (key.clone(), field.clone(), prop_oneof![Just(i64::MAX), Just(i64::MIN), -100i64..100])
            .prop_map(|(k, f, n)| Op::HIncrBy(k, f, n)),
        1 => key.clone().prop_map(Op::HGetAll),
        1 => key.clone().prop_map(Op::HKeys),
        1 => (key.clone(), 1usize..5).prop_map(|(k, c)| Op::HScan(k, c)),
        1 => (key.clone(), -6i64..7, any::<bool>()).prop_map(|(k, c, w)| Op::HRandField(k, c, w)),
        6 => (skey.clone(), prop::collection::vec(member.clone(), 1..5)).prop_map(|(k, m)| Op::SAdd(k, m)),
        1 => (skey.clone(), prop::collection::vec(member.clone(), 1..4)).prop_map(|(k, m)| Op::SRem(k, m)),
        1 => (skey.clone(), member.clone()).prop_map(|(k, m)| Op::SIsMember(k, m)),
        1 => (skey.clone(), prop::collection::vec(member.clone(), 1..4)).prop_map(|(k, m)| Op::SMIsMember(k, m)),
        1 => skey.clone().prop_map(Op::SCard),
        1 => skey.clone().prop_map(Op::SMembers),
        1 => (skey.clone(), prop::option::of(0usize..8)).prop_map(|(k, c)| Op::SPop(k, c)),
        1 => (skey.clone(), -6i64..8).prop_map(|(k, c)| Op::SRandMember(k, c)),
        1 => (skey.clone(), skey.clone(), member.clone()).prop_map(|(a, b, m)| Op::SMove(a, b, m)),
        1 => keys.clone().prop_map(Op::SInter),
        1 => (keys.clone(), 0usize..4).prop_map(|(k, l)| Op::SInterCard(k, l)),
        1 => keys.clone().prop_map(Op::SUnion),
        1 => keys.clone().prop_map(Op::SDiff),
        1 => (0u8..3, skey.clone(), keys).prop_map(|(o, d, k)| Op::Store(o, d, k)),
        1 => (skey.clone(), 1usize..4).prop_map(|(k, c)| Op::SScan(k, c)),
        1 => (0..ALL_KEYS.len()).prop_map(Op::Del),
    ]
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn sorted(replies: &[Reply]) -> Vec<Reply> {
    let mut v = replies.to_vec();
    v.sort_by(|x, y| format!("{x:?}").cmp(&format!("{y:?}")));
    v
}

fn bulks(items: &[Vec<u8>]) -> Vec<Reply> {
    items.iter().map(|m| bulk(m)).collect()
}

/// The members of a Set or Array reply.
fn items(r: Reply) -> Vec<Reply> {
    match r {
        Reply::Set(v) | Reply::Array(v) => v,
        other => panic!("not an aggregate: {other:?}"),
    }
}

impl Model {
    fn hash(&self, k: &[u8]) -> Result<Option<&ModelHash>, Reply> {
        match self.keys.get(k) {
            None => Ok(None),
            Some(Value::Hash(h)) => Ok(Some(h)),
            Some(_) => Err(err(WRONGTYPE)),
        }
    }
    fn set(&self, k: &[u8]) -> Result<Option<&ModelSet>, Reply> {
        match self.keys.get(k) {
            None => Ok(None),
            Some(Value::Set(s)) => Ok(Some(s)),
            Some(_) => Err(err(WRONGTYPE)),
        }
    }

    /// Sources of SINTER/SUNION/SDIFF: WRONGTYPE if any is not a set.
    fn sources(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<ModelSet>>, Reply> {
        keys.iter().map(|k| self.set(k).map(|s| s.cloned())).collect()
    }

    fn inter(&self, keys: &[Vec<u8>]) -> Result<BTreeSet<Vec<u8>>, Reply> {
        let sets = self.sources(keys)?;
        let Some(sets) = sets.into_iter().collect::<Option<Vec<_>>>() else { return Ok(BTreeSet::new()) };
        Ok(sets[0].members.iter().filter(|m| sets.iter().all(|s| s.members.contains(*m))).cloned().collect())
    }

    fn union(&self, keys: &[Vec<u8>]) -> Result<BTreeSet<Vec<u8>>, Reply> {
        Ok(self.sources(keys)?.into_iter().flatten().flat_map(|s| s.members).collect())
    }

    /// SDIFF's result and the encoding its algorithm leaves it in.
    fn diff(&self, keys: &[Vec<u8>]) -> Result<ModelSet, Reply> {
        let sets = self.sources(keys)?;
        let Some(first) = sets[0].clone() else { return Ok(ModelSet::built(BTreeSet::new())) };
        if keys.iter().enumerate().skip(1).any(|(j, k)| sets[j].is_some() && *k == keys[0]) {
            return Ok(ModelSet::built(BTreeSet::new()));
        }
        let present: Vec<&ModelSet> = sets.iter().flatten().collect();
        let one = present.len() * first.members.len() / 2;
        let two: usize = present.iter().map(|s| s.members.len()).sum();
        let result: BTreeSet<Vec<u8>> = first
            .members
            .iter()
            .filter(|m| !sets.iter().skip(1).flatten().any(|s| s.members.contains(*m)))
            .cloned()
            .collect();
        if one <= two {
            return Ok(ModelSet::built(result));
        }
        // Algorithm 2 first copies the whole first set.
        let intset = ModelSet::built(first.members).intset;
        Ok(ModelSet { members: result, intset })
    }
}

struct Checker {
    h: Harness,
    m: Model,
}

impl Checker {
    fn new() -> Self {
        let mut h = Harness::new();
        assert_eq!(h.run_str(&["SET", "{k}str", "x"]), simple("OK"));
        let mut m = Model::default();
        m.keys.insert(b("{k}str"), Value::Str);
        Self { h, m }
    }

    fn run(&mut self, args: Vec<Vec<u8>>) -> Reply {
        let refs: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        self.h.run(&refs)
    }

    /// OBJECT ENCODING agrees with the model for `key`, and listpack/intset replies come in
    /// the model's order.
    fn check_key(&mut self, key: &[u8]) {
        let encoding = self.run(vec![b("OBJECT"), b("ENCODING"), key.to_vec()]);
        match self.m.keys.get(key).cloned() {
            None => assert_eq!(encoding, Reply::Null, "{key:?} should not exist"),
            Some(Value::Str) => {}
            Some(Value::Hash(h)) => {
                assert_eq!(encoding, bulk(if h.listpack { b"listpack" } else { b"hashtable" }), "{h:?}");
                let all = self.run(vec![b("HGETALL"), key.to_vec()]);
                let Reply::Map(pairs) = all else { panic!("HGETALL is a map: {all:?}") };
                let mut got: Vec<(Reply, Reply)> = pairs;
                let mut want: Vec<(Reply, Reply)> = h.pairs.iter().map(|(f, v)| (bulk(f), bulk(v))).collect();
                if !h.listpack {
                    got.sort_by(|x, y| format!("{x:?}").cmp(&format!("{y:?}")));
                    want.sort_by(|x, y| format!("{x:?}").cmp(&format!("{y:?}")));
                }
                assert_eq!(got, want);
            }
            Some(Value::Set(s)) => {
                assert_eq!(encoding, bulk(if s.intset { b"intset" } else { b"hashtable" }), "{s:?}");
                let got = items(self.run(vec![b("SMEMBERS"), key.to_vec()]));
                if s.intset {
                    assert_eq!(got, bulks(&s.ordered()));
                } else {
                    let want: Vec<Vec<u8>> = s.members.iter().cloned().collect();
                    assert_eq!(sorted(&got), sorted(&bulks(&want)));
                }
            }
        }
    }

    fn apply(&mut self, op: &Op) {
        let key = |i: usize| b(HKEYS[i]);
        let skey = |i: usize| b(SKEYS[i]);
        let field = |i: usize| b(FIELDS[i]);
        let value = |i: usize| b(VALUES[i]);
        let member = |i: usize| b(MEMBERS[i]);
        let mut touched: Vec<Vec<u8>> = Vec::new();
        match op {
            Op::HSet(k, pairs) => {
                let (k, mut args) = (key(*k), vec![b("HSET"), key(*k)]);
                for (f, v) in pairs {
                    args.push(field(*f));
                    args.push(value(*v));
                }
                let got = self.run(args);
                let want = match self.m.hash(&k) {
                    Err(e) => e,
                    Ok(existing) => {
                        let mut h = existing.cloned().unwrap_or_else(ModelHash::new);
                        // HSET converts up front when any argument is too long.
                        if pairs.iter().any(|(f, v)| FIELDS[*f].len() > HASH_VALUE || VALUES[*v].len() > HASH_VALUE) {
                            h.listpack = false;
                        }
                        let added = pairs.iter().filter(|(f, v)| h.set(&field(*f), &value(*v))).count();
                        self.m.keys.insert(k.clone(), Value::Hash(h));
                        int(added as i64)
                    }
                };
                assert_eq!(got, want);
                touched.push(k);
            }
            Op::HSetNx(k, f, v) => {
                let got = self.run(vec![b("HSETNX"), key(*k), field(*f), value(*v)]);
                let want = match self.m.hash(&key(*k)) {
                    Err(e) => e,
                    Ok(Some(h)) if h.get(&field(*f)).is_some() => int(0),
                    Ok(existing) => {
                        let mut h = existing.cloned().unwrap_or_else(ModelHash::new);
                        h.set(&field(*f), &value(*v));
                        self.m.keys.insert(key(*k), Value::Hash(h));
                        int(1)
                    }
                };
                assert_eq!(got, want);
                touched.push(key(*k));
            }
            Op::HDel(k, fields) => {
                let mut args = vec![b("HDEL"), key(*k)];
                args.extend(fields.iter().map(|f| field(*f)));
                let got = self.run(args);
                let want = match self.m.hash(&key(*k)) {
                    Err(e) => e,
                    Ok(None) => int(0),
                    Ok(Some(h)) => {
                        let mut h = h.clone();
                        let removed = fields.iter().filter(|f| h.remove(&field(**f))).count();
                        if h.pairs.is_empty() {
                            self.m.keys.remove(&key(*k));
                        } else {
                            self.m.keys.insert(key(*k), Value::Hash(h));
                        }
                        int(removed as i64)
                    }
                };
                assert_eq!(got, want);
                touched.push(key(*k));
            }
            Op::HGet(k, f) => {
                let got = self.run(vec![b("HGET"), key(*k), field(*f)]);
                let want = match self.m.hash(&key(*k)) {
                    Err(e) => e,
                    Ok(h) => h.and_then(|h| h.get(&field(*f))).map_or(Reply::Null, |v| bulk(v)),
                };
                assert_eq!(got, want);
            }
            Op::HMGet(k, fields) => {
                let mut args = vec![b("HMGET"), key(*k)];
                args.extend(fields.iter().map(|f| field(*f)));
                let got = self.run(args);
                let want = match self.m.hash(&key(*k)) {
                    Err(e) => e,
                    Ok(h) => Reply::Array(
                        fields
                            .iter()
                            .map(|f| h.and_then(|h| h.get(&field(*f))).map_or(Reply::Null, |v| bulk(v)))
                            .collect(),
                    ),
                };
                assert_eq!(got, want);
            }
            Op::HLen(k) => {
                let got = self.run(vec![b("HLEN"), key(*k)]);
                let want = match self.m.hash(&key(*k)) {
                    Err(e) => e,
                    Ok(h) => int(h.map_or(0, |h| h.pairs.len()) as i64),
                };
                assert_eq!(got, want);
            }
            Op::HExists(k, f) => {
                let got = self.run(vec![b("HEXISTS"), key(*k), field(*f)]);
                let want = match self.m.hash(&key(*k)) {
                    Err(e) => e,
                    Ok(h) => int(i64::from(h.and_then(|h| h.get(&field(*f))).is_some())),
                };
                assert_eq!(got, want);
            }
            Op::HStrLen(k, f) => {
                let got = self.run(vec![b("HSTRLEN"), key(*k), field(*f)]);
                let want = match self.m.hash(&key(*k)) {
                    Err(e) => e,
                    Ok(h) => int(h.and_then(|h| h.get(&field(*f))).map_or(0, |v| v.len()) as i64),
                };
                assert_eq!(got, want);
            }
            Op::HIncrBy(k, f, n) => {
                let got = self.run(vec![b("HINCRBY"), key(*k), field(*f), n.to_string().into_bytes()]);
                let want = match self.m.hash(&key(*k)) {
                    Err(e) => e,
                    Ok(existing) => {
                        let mut h = existing.cloned().unwrap_or_else(ModelHash::new);
                        let current = h.get(&field(*f)).map(|v| is_int(v));
                        match current {
                            Some(None) => err("ERR hash value is not an integer"),
                            _ => match current.flatten().unwrap_or(0).checked_add(*n) {
                                None => err("ERR increment or decrement would overflow"),
                                Some(sum) => {
                                    h.set(&field(*f), sum.to_string().as_bytes());
                                    self.m.keys.insert(key(*k), Value::Hash(h));
                                    int(sum)
                                }
                            },
                        }
                    }
                };
                assert_eq!(got, want);
                touched.push(key(*k));
            }
            Op::HGetAll(k) | Op::HKeys(k) => touched.push(key(*k)),
            Op::HScan(k, count) => {
                let got = self.scan_all(b"HSCAN", &key(*k), *count);
                let want = match self.m.hash(&key(*k)) {
                    Err(e) => Err(e),
                    Ok(h) => Ok(h.map_or(Vec::new(), |h| {
                        h.pairs.iter().flat_map(|(f, v)| [bulk(f), bulk(v)]).collect::<Vec<_>>()
                    })),
                };
                match (got, want) {
                    (Ok(got), Ok(want)) => {
                        // Pairs stay together: compare field/value pairs as a multiset.
                        let pair =
                            |v: Vec<Reply>| sorted(&v.chunks(2).map(|c| Reply::Array(c.to_vec())).collect::<Vec<_>>());
                        assert_eq!(pair(got), pair(want));
                    }
                    (got, want) => assert_eq!(got, want),
                }
            }
            Op::HRandField(k, count, with_values) => {
                let mut args = vec![b("HRANDFIELD"), key(*k), count.to_string().into_bytes()];
                if *with_values {
                    args.push(b("WITHVALUES"));
                }
                let got = self.run(args);
                match self.m.hash(&key(*k)) {
                    Err(e) => assert_eq!(got, e),
                    Ok(None) => assert_eq!(got, Reply::Array(vec![])),
                    Ok(Some(h)) => {
                        let got = items(got);
                        let n = count.unsigned_abs() as usize;
                        let expect_len = if *count >= 0 { n.min(h.pairs.len()) } else { n };
                        assert_eq!(got.len(), expect_len);
                        let mut fields = Vec::new();
                        for item in got {
                            let (f, v) = match item {
                                Reply::Array(pair) if *with_values => (pair[0].clone(), Some(pair[1].clone())),
                                other => (other, None),
                            };
                            let Reply::Bulk(f) = f else { panic!("a field") };
                            let stored = h.get(&f).expect("a field of the hash");
                            if let Some(v) = v {
                                assert_eq!(v, bulk(stored));
                            }
                            fields.push(f);
                        }
                        if *count >= 0 {
                            let distinct: BTreeSet<_> = fields.iter().collect();
                            assert_eq!(distinct.len(), fields.len(), "positive counts are distinct");
                        }
                    }
                }
            }
            Op::SAdd(k, members) => {
                let mut args = vec![b("SADD"), skey(*k)];
                args.extend(members.iter().map(|m| member(*m)));
                let got = self.run(args);
                let want = match self.m.set(&skey(*k)) {
                    Err(e) => e,
                    Ok(existing) => {
                        let mut s = existing.cloned().unwrap_or_else(|| ModelSet::new_for(&member(members[0])));
                        let added = members.iter().filter(|m| s.add(&member(**m))).count();
                        self.m.keys.insert(skey(*k), Value::Set(s));
                        int(added as i64)
                    }
                };
                assert_eq!(got, want);
                touched.push(skey(*k));
            }
            Op::SRem(k, members) => {
                let mut args = vec![b("SREM"), skey(*k)];
                args.extend(members.iter().map(|m| member(*m)));
                let got = self.run(args);
                let want = match self.m.set(&skey(*k)) {
                    Err(e) => e,
                    Ok(None) => int(0),
                    Ok(Some(s)) => {
                        let mut s = s.clone();
                        let removed = members.iter().filter(|m| s.members.remove(&member(**m))).count();
                        self.put_set(&skey(*k), s);
                        int(removed as i64)
                    }
                };
                assert_eq!(got, want);
                touched.push(skey(*k));
            }
            Op::SIsMember(k, m) => {
                let got = self.run(vec![b("SISMEMBER"), skey(*k), member(*m)]);
                let want = match self.m.set(&skey(*k)) {
                    Err(e) => e,
                    Ok(s) => int(i64::from(s.is_some_and(|s| s.members.contains(&member(*m))))),
                };
                assert_eq!(got, want);
            }
            Op::SMIsMember(k, members) => {
                let mut args = vec![b("SMISMEMBER"), skey(*k)];
                args.extend(members.iter().map(|m| member(*m)));
                let got = self.run(args);
                let want = match self.m.set(&skey(*k)) {
                    Err(e) => e,
                    Ok(s) => Reply::Array(
                        members
                            .iter()
                            .map(|m| int(i64::from(s.is_some_and(|s| s.members.contains(&member(*m))))))
                            .collect(),
                    ),
                };
                assert_eq!(got, want);
            }
            Op::SCard(k) => {
                let got = self.run(vec![b("SCARD"), skey(*k)]);
                let want = match self.m.set(&skey(*k)) {
                    Err(e) => e,
                    Ok(s) => int(s.map_or(0, |s| s.members.len()) as i64),
                };
                assert_eq!(got, want);
            }
            Op::SMembers(k) => touched.push(skey(*k)),
            Op::SPop(k, count) => {
                let mut args = vec![b("SPOP"), skey(*k)];
                if let Some(c) = count {
                    args.push(c.to_string().into_bytes());
                }
                let got = self.run(args);
                match self.m.set(&skey(*k)) {
                    Err(e) => assert_eq!(got, e),
                    Ok(None) => assert_eq!(got, if count.is_some() { Reply::Set(vec![]) } else { Reply::Null }),
                    Ok(Some(s)) => {
                        let mut s = s.clone();
                        let popped = match got {
                            Reply::Bulk(m) => vec![m],
                            other => items(other)
                                .into_iter()
                                .map(|r| match r {
                                    Reply::Bulk(m) => m,
                                    other => panic!("a member: {other:?}"),
                                })
                                .collect(),
                        };
                        let wanted = count.unwrap_or(1).min(s.members.len());
                        assert_eq!(popped.len(), wanted);
                        for m in &popped {
                            assert!(s.members.remove(m), "popped {m:?} twice or not a member");
                        }
                        // Popping most of a set rebuilds it from the members that stay.
                        let remaining = s.members.len();
                        if count.is_some() && remaining > 0 && remaining * 5 <= wanted {
                            s = ModelSet::built(s.members);
                        }
                        self.put_set(&skey(*k), s);
                    }
                }
                touched.push(skey(*k));
            }
            Op::SRandMember(k, count) => {
                let got = self.run(vec![b("SRANDMEMBER"), skey(*k), count.to_string().into_bytes()]);
                match self.m.set(&skey(*k)) {
                    Err(e) => assert_eq!(got, e),
                    Ok(None) => assert_eq!(got, Reply::Array(vec![])),
                    Ok(Some(s)) => {
                        let got = items(got);
                        let n = count.unsigned_abs() as usize;
                        assert_eq!(got.len(), if *count >= 0 { n.min(s.members.len()) } else { n });
                        let mut seen = BTreeSet::new();
                        for r in got {
                            let Reply::Bulk(m) = r else { panic!("a member") };
                            assert!(s.members.contains(&m));
                            assert!(seen.insert(m) || *count < 0, "positive counts are distinct");
                        }
                    }
                }
            }
            Op::SMove(a, bk, m) => {
                let (src, dst, mem) = (skey(*a), skey(*bk), member(*m));
                let got = self.run(vec![b("SMOVE"), src.clone(), dst.clone(), mem.clone()]);
                let want = match (self.m.keys.get(&src).cloned(), self.m.keys.get(&dst).cloned()) {
                    (None, _) => int(0),
                    (Some(Value::Set(_)), None | Some(Value::Set(_))) if src == dst => {
                        int(i64::from(self.m.set(&src).unwrap().unwrap().members.contains(&mem)))
                    }
                    (Some(Value::Set(s)), None | Some(Value::Set(_))) => {
                        let mut s = s.clone();
                        if !s.members.remove(&mem) {
                            int(0)
                        } else {
                            self.put_set(&src, s);
                            let mut d = match self.m.keys.get(&dst) {
                                Some(Value::Set(d)) => d.clone(),
                                _ => ModelSet::new_for(&mem),
                            };
                            d.add(&mem);
                            self.m.keys.insert(dst.clone(), Value::Set(d));
                            int(1)
                        }
                    }
                    _ => err(WRONGTYPE),
                };
                assert_eq!(got, want);
                touched.extend([src, dst]);
            }
            Op::SInter(keys) | Op::SUnion(keys) | Op::SDiff(keys) => {
                let name = match op {
                    Op::SInter(_) => "SINTER",
                    Op::SUnion(_) => "SUNION",
                    _ => "SDIFF",
                };
                let keys: Vec<Vec<u8>> = keys.iter().map(|k| skey(*k)).collect();
                let mut args = vec![b(name)];
                args.extend(keys.iter().cloned());
                let got = self.run(args);
                let want = match op {
                    Op::SInter(_) => self.m.inter(&keys),
                    Op::SUnion(_) => self.m.union(&keys),
                    _ => self.m.diff(&keys).map(|s| s.members),
                };
                match want {
                    Err(e) => assert_eq!(got, e),
                    Ok(want) => {
                        let want: Vec<Vec<u8>> = want.into_iter().collect();
                        assert_eq!(sorted(&items(got)), sorted(&bulks(&want)));
                    }
                }
            }
            Op::SInterCard(keys, limit) => {
                let keys: Vec<Vec<u8>> = keys.iter().map(|k| skey(*k)).collect();
                let mut args = vec![b("SINTERCARD"), keys.len().to_string().into_bytes()];
                args.extend(keys.iter().cloned());
                args.extend([b("LIMIT"), limit.to_string().into_bytes()]);
                let got = self.run(args);
                let want = match self.m.inter(&keys) {
                    Err(e) => e,
                    Ok(s) => int(if *limit > 0 { s.len().min(*limit) } else { s.len() } as i64),
                };
                assert_eq!(got, want);
            }
            Op::Store(which, d, keys) => {
                let name = ["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"][*which as usize];
                let keys: Vec<Vec<u8>> = keys.iter().map(|k| skey(*k)).collect();
                let mut args = vec![b(name), skey(*d)];
                args.extend(keys.iter().cloned());
                let got = self.run(args);
                let result = match which {
                    0 => self.m.inter(&keys).map(ModelSet::built),
                    1 => self.m.union(&keys).map(ModelSet::built),
                    _ => self.m.diff(&keys),
                };
                let want = match result {
                    Err(e) => e,
                    Ok(s) => {
                        let len = s.members.len();
                        if len == 0 {
                            self.m.keys.remove(&skey(*d));
                        } else {
                            self.m.keys.insert(skey(*d), Value::Set(s));
                        }
                        int(len as i64)
                    }
                };
                assert_eq!(got, want);
                touched.push(skey(*d));
            }
            Op::SScan(k, count) => {
                let got = self.scan_all(b"SSCAN", &skey(*k), *count);
                let want = match self.m.set(&skey(*k)) {
                    Err(e) => Err(e),
                    Ok(s) => Ok(s.map_or(Vec::new(), |s| s.members.iter().map(|m| bulk(m)).collect())),
                };
                match (got, want) {
                    (Ok(got), Ok(want)) => assert_eq!(sorted(&got), sorted(&want)),
                    (got, want) => assert_eq!(got, want),
                }
            }
            Op::Del(k) => {
                let k = b(ALL_KEYS[*k]);
                if k != b"{k}str" {
                    self.run(vec![b("DEL"), k.clone()]);
                    self.m.keys.remove(&k);
                }
            }
        }
        for k in touched {
            self.check_key(&k);
        }
    }

    fn put_set(&mut self, key: &[u8], s: ModelSet) {
        if s.members.is_empty() {
            self.m.keys.remove(key);
        } else {
            self.m.keys.insert(key.to_vec(), Value::Set(s));
        }
    }

    /// A full HSCAN/SSCAN with COUNT `count`: every element, each exactly once (nothing
    /// changes during the scan).
    fn scan_all(&mut self, command: &[u8], key: &[u8], count: usize) -> Result<Vec<Reply>, Reply> {
        let mut cursor = b"0".to_vec();
        let mut all = Vec::new();
        loop {
            let r = self.run(vec![command.to_vec(), key.to_vec(), cursor, b("COUNT"), count.to_string().into_bytes()]);
            let mut parts = match r {
                Reply::Array(parts) => parts,
                other => return Err(other),
            };
            let page = items(parts.pop().expect("elements"));
            let Some(Reply::Bulk(next)) = parts.pop() else { panic!("a cursor") };
            all.extend(page);
            if next == b"0" {
                return Ok(all);
            }
            cursor = next;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn hashes_and_sets_follow_the_model(ops in prop::collection::vec(op(), 1..150)) {
        let mut c = Checker::new();
        for op in &ops {
            c.apply(op);
        }
        for k in ALL_KEYS {
            c.check_key(k.as_bytes());
        }
    }
}

/// Keyspace hits and misses follow Redis's lookupKeyRead: every source of SINTER counts,
/// a key of the wrong type is a hit, write commands count nothing.
#[test]
fn read_commands_count_keyspace_hits() {
    let mut h = Harness::new();
    h.run_str(&["HSET", "h", "f", "v"]);
    h.run_str(&["SADD", "s", "1"]);
    h.run_str(&["SET", "str", "x"]);
    let stats = |h: &Harness| {
        let s = &h.engine.stats;
        (
            s.keyspace_hits.load(std::sync::atomic::Ordering::Relaxed),
            s.keyspace_misses.load(std::sync::atomic::Ordering::Relaxed),
        )
    };
    let before = stats(&h);
    h.run_str(&["HGET", "h", "f"]);
    h.run_str(&["HGET", "nokey", "f"]);
    h.run_str(&["HGET", "str", "f"]);
    h.run_str(&["SINTER", "s", "nokey", "s"]);
    h.run_str(&["SADD", "s", "2"]);
    h.run_str(&["HDEL", "h", "zz"]);
    let after = stats(&h);
    assert_eq!((after.0 - before.0, after.1 - before.1), (4, 2));
}

#[test]
fn dirty_counts_changes_like_redis() {
    let mut h = Harness::new();
    let dirty = |h: &Harness| h.engine.dirty();
    let d0 = dirty(&h);
    h.run_str(&["HSET", "h", "a", "1", "b", "2", "a", "3"]);
    assert_eq!(dirty(&h) - d0, 3, "HSET counts every pair");
    let d0 = dirty(&h);
    h.run_str(&["HDEL", "h", "a", "b", "c"]);
    assert_eq!(dirty(&h) - d0, 2, "HDEL counts deleted fields, deleting the key is free");
    let d0 = dirty(&h);
    h.run_str(&["SADD", "s", "1", "2", "2"]);
    assert_eq!(dirty(&h) - d0, 2);
    let d0 = dirty(&h);
    h.run_str(&["SMOVE", "s", "t", "1"]);
    assert_eq!(dirty(&h) - d0, 2);
    let d0 = dirty(&h);
    h.run_str(&["SPOP", "s", "10"]);
    assert_eq!(dirty(&h) - d0, 1);
    assert_eq!(h.run_str(&["EXISTS", "s"]), int(0));
}
