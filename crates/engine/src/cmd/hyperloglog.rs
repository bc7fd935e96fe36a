//! HyperLogLog commands. Values are plain strings in Redis's exact HLL format (see
//! `crate::hll`), so a PFADD'ed key reads back byte-identical to Redis's.

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::hll::{self, HllError};
use crate::keyspace::{StrValue, TtlOnWrite, Value};
use crate::pubsub::notify;
use crate::reply::ReplySink;

use super::is;

impl From<HllError> for CmdError {
    fn from(e: HllError) -> Self {
        CmdError::msg(e.message())
    }
}

fn sparse_max_bytes(ctx: &Ctx<'_>) -> usize {
    ctx.engine.config.read().get_u64("hll-sparse-max-bytes") as usize
}

/// The HLL bytes of a string value, or the errors Redis's isHLLObjectOrReply gives:
/// WRONGTYPE for other types, the HLL-specific WRONGTYPE for strings that are not HLLs.
fn hll_bytes(value: &Value) -> Result<&[u8], CmdError> {
    match value {
        Value::Str(s @ (StrValue::Raw(_) | StrValue::Embstr(_))) => {
            let b = s.bytes().expect("not an integer");
            hll::check(b)?;
            Ok(b)
        }
        Value::Str(StrValue::Int(_)) => Err(HllError::NotHll.into()),
        _ => Err(CmdError::WrongType),
    }
}

/// The HLL of `key` for in-place modification (raw encoding), checked.
fn hll_mut<'a>(ctx: &'a mut Ctx<'_>, key: &[u8]) -> Result<Option<&'a mut Vec<u8>>, CmdError> {
    let now = ctx.now_ms;
    let Some(entry) = ctx.db(key).get_mut(key, now) else { return Ok(None) };
    hll_bytes(&entry.value)?;
    let Value::Str(s) = &mut entry.value else { unreachable!("checked by hll_bytes") };
    Ok(Some(s.make_raw()))
}

/// PFADD key [element ...] — O(1) per element.
fn pfadd(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (key, now) = (args[1], ctx.now_ms);
    let max = sparse_max_bytes(ctx);
    let mut created = false;
    if !ctx.db(key).contains(key, now) {
        ctx.db(key).set(key, Value::Str(StrValue::Raw(Box::new(hll::new_hll()))), TtlOnWrite::Clear, now);
        created = true;
    }
    let hll = hll_mut(ctx, key)?.expect("present");
    let changed = hll::add(hll, &args[2..], max)?;
    out.integer(i64::from(created || changed));
    if changed && !created {
        ctx.dirty(1);
    }
    if changed || created {
        ctx.notify(notify::STRING, "pfadd", key);
    }
    Ok(())
}

/// PFCOUNT key [key ...] — O(1) for one key (cached), O(N) for a union.
fn pfcount(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let now = ctx.now_ms;
    if args.len() == 2 {
        let (count, cache_written) = match hll_mut(ctx, args[1])? {
            None => (0, false),
            Some(hll) => hll::count_cached(hll)?,
        };
        if cache_written {
            ctx.dirty(1);
        }
        out.integer(count as i64);
        return Ok(());
    }
    let mut values: Vec<Vec<u8>> = Vec::new();
    for key in &args[1..] {
        if let Some(entry) = ctx.db(key).get(key, now) {
            values.push(hll_bytes(&entry.value)?.to_vec());
        }
    }
    let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
    out.integer(hll::count_union(&refs)? as i64);
    Ok(())
}

/// PFMERGE destkey [sourcekey ...] — O(N) in the number of sources.
fn pfmerge(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (dest, now) = (args[1], ctx.now_ms);
    let max = sparse_max_bytes(ctx);
    let mut sources: Vec<Vec<u8>> = Vec::new();
    for key in &args[1..] {
        if let Some(entry) = ctx.db(key).get(key, now) {
            let bytes = hll_bytes(&entry.value)?.to_vec();
            if *key != dest {
                sources.push(bytes);
            }
        }
    }
    let current = match ctx.db(dest).get(dest, now) {
        Some(entry) => Some(hll_bytes(&entry.value)?.to_vec()),
        None => None,
    };
    let refs: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
    let merged = hll::merge(current.as_deref(), &refs, max)?;
    let db = ctx.db(dest);
    if current.is_some() {
        let entry = db.get_mut(dest, now).expect("present");
        entry.value = Value::Str(StrValue::Raw(Box::new(merged)));
        ctx.dirty(1);
    } else {
        db.set(dest, Value::Str(StrValue::Raw(Box::new(merged))), TtlOnWrite::Clear, now);
    }
    ctx.notify(notify::STRING, "pfadd", dest);
    out.simple("OK");
    Ok(())
}

/// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key — internal.
fn pfdebug(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let sub = args[1];
    let key = args[2];
    let Some(hll) = hll_mut(ctx, key).map_err(|e| match e {
        CmdError::WrongType => e,
        other => other,
    })?
    else {
        return Err(CmdError::msg("ERR The specified key does not exist"));
    };
    if is(sub, "GETREG") {
        let registers = hll::debug_getreg(hll)?;
        out.array(registers.len());
        for r in registers {
            out.integer(i64::from(r));
        }
    } else if is(sub, "DECODE") {
        let text = hll::debug_decode(hll).map_err(|e| CmdError::msg(format!("ERR {e}")))?;
        out.bulk(text.as_bytes());
    } else if is(sub, "ENCODING") {
        out.simple(hll::encoding_name(hll));
    } else if is(sub, "TODENSE") {
        let converted = hll::to_dense(hll)?;
        out.integer(i64::from(converted));
    } else {
        return Err(CmdError::msg(format!("ERR Unknown PFDEBUG subcommand '{}'", String::from_utf8_lossy(sub))));
    }
    Ok(())
}

/// PFSELFTEST — internal: checks the HLL implementation.
fn pfselftest(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    hll::selftest().map_err(CmdError::msg)?;
    out.simple("OK");
    Ok(())
}

pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::new("pfadd", -2, "write denyoom fast", "hyperloglog", pfadd)
            .doc("hyperloglog", "2.8.9", "Adds the specified elements to the specified HyperLogLog.", "O(1) to add every element.")
            .keys("RW insert", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0), ArgDoc::new("element", ArgType::String).optional().multiple()]),
        CommandSpec::new("pfcount", -2, "readonly", "hyperloglog", pfcount)
            .doc(
                "hyperloglog",
                "2.8.9",
                "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
                "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.",
            )
            .keys("RW access", 1, -1, 1)
            .key_notes("RW because it may change the internal representation of the key, and propagate to replicas")
            .args(vec![ArgDoc::key("key", 0).multiple()]),
        CommandSpec::new("pfmerge", -2, "write denyoom", "hyperloglog", pfmerge)
            .doc("hyperloglog", "2.8.9", "Merge N different HyperLogLogs into a single one.", "O(N) to merge N HyperLogLogs, but with high constant times.")
            .keys("RW access insert", 1, 0, 1)
            .keys("RO access", 2, -1, 1)
            .args(vec![ArgDoc::key("destkey", 0), ArgDoc::key("sourcekey", 1).multiple()]),
        CommandSpec::new("pfdebug", 3, "write denyoom admin", "hyperloglog", pfdebug)
            .doc("hyperloglog", "2.8.9", "Internal commands for debugging HyperLogLog values", "N/A")
            .syscmd()
            .keys("RW access", 2, 0, 1)
            .args(vec![ArgDoc::new("subcommand", ArgType::String), ArgDoc::key("key", 0)]),
        CommandSpec::new("pfselftest", 1, "admin", "hyperloglog", pfselftest)
            .doc("hyperloglog", "2.8.9", "An internal command for testing HyperLogLog values", "N/A")
            .syscmd(),
    ]
}
