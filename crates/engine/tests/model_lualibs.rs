//! Property tests for the scripting sandbox's cmsgpack and struct libraries, through EVAL
//! in-process: random values survive a pack/unpack round trip unchanged, and arbitrary
//! bytes given to the unpackers give values or a script error, never a crash.

use proptest::prelude::*;
use quince_engine::{Client, Engine, EngineOptions, Reply, ReplyBuilder};

fn eval(engine: &Engine, client: &mut Client, script: &str, args: &[&[u8]]) -> Reply {
    let mut argv: Vec<&[u8]> = vec![b"EVAL", script.as_bytes(), b"0"];
    argv.extend_from_slice(args);
    let mut out = ReplyBuilder::new();
    engine.execute(client, &argv, &mut out);
    out.take().remove(0)
}

/// A Lua value as source text.
#[derive(Debug, Clone)]
enum Lv {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Vec<u8>),
    Array(Vec<Lv>),
    Map(Vec<(String, Lv)>),
}

impl Lv {
    fn source(&self) -> String {
        match self {
            Lv::Bool(b) => b.to_string(),
            Lv::Int(i) => format!("({i})"),
            // %.17g round-trips a double exactly.
            Lv::Float(f) => format!("({f:e})"),
            Lv::Str(bytes) => {
                let body: String = bytes.iter().map(|b| format!("\\{b}")).collect();
                format!("\"{body}\"")
            }
            Lv::Array(items) => format!("{{{}}}", items.iter().map(|v| v.source()).collect::<Vec<_>>().join(",")),
            Lv::Map(pairs) => {
                format!(
                    "{{{}}}",
                    pairs.iter().map(|(k, v)| format!("[\"{k}\"]={}", v.source())).collect::<Vec<_>>().join(",")
                )
            }
        }
    }
}

fn value() -> impl Strategy<Value = Lv> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Lv::Bool),
        prop_oneof![-40i64..300, -70_000i64..70_000, -(1i64 << 53)..(1i64 << 53)].prop_map(Lv::Int),
        prop_oneof![(-1e6f64..1e6), any::<f32>().prop_filter("finite", |f| f.is_finite()).prop_map(f64::from)]
            .prop_map(Lv::Float),
        proptest::collection::vec(any::<u8>(), 0..300).prop_map(Lv::Str),
    ];
    leaf.prop_recursive(4, 64, 20, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..20).prop_map(Lv::Array),
            proptest::collection::vec(("[a-z]{1,6}", inner), 1..20).prop_map(|mut pairs| {
                pairs.sort_by(|a, b| a.0.cmp(&b.0));
                pairs.dedup_by(|a, b| a.0 == b.0);
                Lv::Map(pairs)
            }),
        ]
    })
}

const DEEP_EQ: &str = "local function eq(a, b) \
    if type(a) ~= type(b) then return false end \
    if type(a) ~= 'table' then return a == b end \
    for k, v in pairs(a) do if not eq(v, b[k]) then return false end end \
    for k, _ in pairs(b) do if a[k] == nil then return false end end \
    return true end ";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn cmsgpack_round_trip(values in proptest::collection::vec(value(), 1..4)) {
        let engine = Engine::new(EngineOptions { shards: 4, ..EngineOptions::default() });
        let mut client = engine.new_client();
        let list = values.iter().map(|v| v.source()).collect::<Vec<_>>().join(",");
        let script = format!(
            "{DEEP_EQ} local v = {{{list}}} local packed = cmsgpack.pack(unpack(v)) \
             local back = {{cmsgpack.unpack(packed)}} \
             if #back ~= #v then return 'count ' .. #back end \
             for i = 1, #v do if not eq(v[i], back[i]) then return 'value ' .. i end end \
             local offset, one = cmsgpack.unpack_one(packed) \
             if not eq(one, v[1]) then return 'unpack_one' end \
             if (#v == 1) ~= (offset == -1) then return 'offset ' .. offset end \
             return 'ok'"
        );
        prop_assert_eq!(eval(&engine, &mut client, &script, &[]), Reply::Bulk(b"ok".to_vec()));
    }

    #[test]
    fn cmsgpack_unpack_never_crashes(data in proptest::collection::vec(any::<u8>(), 0..64), limit in 0i64..4) {
        let engine = Engine::new(EngineOptions { shards: 4, ..EngineOptions::default() });
        let mut client = engine.new_client();
        let script = "local ok = pcall(cmsgpack.unpack, ARGV[1]) \
            local ok2 = pcall(cmsgpack.unpack_limit, ARGV[1], tonumber(ARGV[2])) \
            return 'done'";
        let limit = limit.to_string();
        let reply = eval(&engine, &mut client, script, &[&data, limit.as_bytes()]);
        prop_assert_eq!(reply, Reply::Bulk(b"done".to_vec()));
    }

    #[test]
    fn struct_round_trip(items in proptest::collection::vec(struct_item(), 1..12), big_endian: bool, align in 0u32..4) {
        let engine = Engine::new(EngineOptions { shards: 4, ..EngineOptions::default() });
        let mut client = engine.new_client();
        let mut fmt = String::from(if big_endian { ">" } else { "<" });
        fmt.push_str(&format!("!{}", 1 << align));
        let mut values = Vec::new();
        for (opt, v) in &items {
            fmt.push_str(opt);
            values.push(v.clone());
        }
        let script = format!(
            "local v = {{{}}} local packed = struct.pack(ARGV[1], unpack(v)) \
             if not string.find(ARGV[1], 's') and #packed ~= struct.size(ARGV[1]) then return 'size' end \
             local back = {{struct.unpack(ARGV[1], packed)}} \
             if back[#back] ~= #packed + 1 then return 'next position ' .. back[#back] end \
             for i = 1, #v do if back[i] ~= v[i] then return 'value ' .. i .. ': ' .. tostring(back[i]) end end \
             return 'ok'",
            values.join(",")
        );
        prop_assert_eq!(eval(&engine, &mut client, &script, &[fmt.as_bytes()]), Reply::Bulk(b"ok".to_vec()));
    }

    #[test]
    fn struct_unpack_never_crashes(fmt in "[bBhHlLiIcsfdx<>! 0-9]{0,12}", data in proptest::collection::vec(any::<u8>(), 0..40)) {
        let engine = Engine::new(EngineOptions { shards: 4, ..EngineOptions::default() });
        let mut client = engine.new_client();
        let script = "pcall(struct.unpack, ARGV[1], ARGV[2]) pcall(struct.size, ARGV[1]) \
            pcall(struct.pack, ARGV[1], 1, 2, 3, 'abc') return 'done'";
        let reply = eval(&engine, &mut client, script, &[fmt.as_bytes(), &data]);
        prop_assert_eq!(reply, Reply::Bulk(b"done".to_vec()));
    }
}

/// One struct option with a value it holds exactly, as Lua source.
fn struct_item() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        (-128i64..128).prop_map(|v| ("b".to_string(), v.to_string())),
        (0i64..256).prop_map(|v| ("B".to_string(), v.to_string())),
        (-32768i64..32768).prop_map(|v| ("h".to_string(), v.to_string())),
        (0i64..65536).prop_map(|v| ("H".to_string(), v.to_string())),
        (-(1i64 << 31)..(1i64 << 31)).prop_map(|v| ("i".to_string(), v.to_string())),
        (0i64..(1i64 << 24)).prop_map(|v| ("I3".to_string(), v.to_string())),
        (-(1i64 << 53)..(1i64 << 53)).prop_map(|v| ("l".to_string(), v.to_string())),
        (-1000i64..1000).prop_map(|v| ("i16".to_string(), v.to_string())),
        (-1e6f64..1e6).prop_map(|v| ("d".to_string(), format!("{v:e}"))),
        any::<i16>().prop_map(|v| ("f".to_string(), format!("{}", f64::from(v) / 4.0))),
        "[a-z]{0,8}".prop_map(|s| ("s".to_string(), format!("'{s}'"))),
        "[a-z]{3}".prop_map(|s| ("c3".to_string(), format!("'{s}'"))),
    ]
}
