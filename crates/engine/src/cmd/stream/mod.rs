//! Stream commands (Redis's t_stream.c), split by kind:
//! - `entries`: XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID, XREAD, XREADGROUP,
//! - `group`: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO,
//! - `spec`: the command table entries.
//!
//! This file holds what they share: lookups, ID parsing with Redis's error texts and the
//! entry reply shape.

mod entries;
mod group;
mod spec;

pub use spec::register;

use crate::error::subcommand_syntax;
use crate::error::CmdError;
use crate::exec::Ctx;
use crate::keyspace::{Db, Value};
use crate::reply::ReplySink;
use crate::types::stream::{parse_id, Fields, Group, Nack, NodeLimits, StreamId};
use crate::types::StreamValue;

fn invalid_id() -> CmdError {
    CmdError::msg("ERR Invalid stream ID specified as stream command argument")
}

/// A strict ID (`-` and `+` rejected), missing seq as `missing_seq`.
fn strict_id(arg: &[u8], missing_seq: u64) -> Result<StreamId, CmdError> {
    parse_id(arg, missing_seq, true, false).map(|p| p.id).ok_or_else(invalid_id)
}

/// An ID that may be `-` or `+`.
fn loose_id(arg: &[u8], missing_seq: u64) -> Result<StreamId, CmdError> {
    parse_id(arg, missing_seq, false, false).map(|p| p.id).ok_or_else(invalid_id)
}

/// A range bound (Redis's streamParseIntervalIDOrReply): `(id` is exclusive (and strict);
/// returns the inclusive bound.
fn interval_id(arg: &[u8], missing_seq: u64, is_start: bool) -> Result<StreamId, CmdError> {
    if arg.len() > 1 && arg[0] == b'(' {
        let id = strict_id(&arg[1..], missing_seq)?;
        if is_start {
            id.incr().ok_or_else(|| CmdError::msg("ERR invalid start ID for the interval"))
        } else {
            id.decr().ok_or_else(|| CmdError::msg("ERR invalid end ID for the interval"))
        }
    } else {
        loose_id(arg, missing_seq)
    }
}

/// The stream at `key` (recording the access), or WRONGTYPE.
fn get<'d>(db: &'d mut Db, key: &[u8], now: i64) -> Result<Option<&'d mut StreamValue>, CmdError> {
    match db.get_mut(key, now).map(|e| &mut e.value) {
        None => Ok(None),
        Some(Value::Stream(s)) => Ok(Some(s)),
        Some(_) => Err(CmdError::WrongType),
    }
}

/// Like `get`, counting a keyspace hit or miss (Redis's lookupKeyRead).
fn get_read<'d>(ctx: &'d mut Ctx<'_>, key: &[u8]) -> Result<Option<&'d mut StreamValue>, CmdError> {
    let now = ctx.now_ms;
    let found = ctx.db(key).peek(key, now).is_some();
    ctx.hit(key, found);
    get(ctx.db(key), key, now)
}

fn node_limits(ctx: &Ctx<'_>) -> NodeLimits {
    let l = ctx.limits();
    NodeLimits { max_entries: l.stream_node_max_entries, max_bytes: l.stream_node_max_bytes }
}

fn reply_id(out: &mut dyn ReplySink, id: StreamId) {
    out.bulk(id.to_string().as_bytes());
}

/// One entry: `[id, [field, value, ...]]`.
fn reply_entry(out: &mut dyn ReplySink, id: StreamId, fields: &Fields<'_>) {
    out.array(2);
    reply_id(out, id);
    out.array(fields.len() * 2);
    for f in fields.iter() {
        out.bulk(f);
    }
}

fn reply_entries(out: &mut dyn ReplySink, entries: &[(StreamId, Fields<'_>)]) {
    out.array(entries.len());
    for (id, fields) in entries {
        reply_entry(out, *id, fields);
    }
}

fn nogroup_key(key: &[u8], group: &[u8]) -> CmdError {
    CmdError::msg(format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        String::from_utf8_lossy(key),
        String::from_utf8_lossy(group)
    ))
}

/// A strict ID, or None (XCLAIM reads IDs until the first argument that is not one).
fn parse_id_quiet(arg: &[u8]) -> Option<StreamId> {
    parse_id(arg, 0, true, false).map(|p| p.id)
}

/// Redis's streamPropagateXCLAIM: how a delivery (XREADGROUP) or a claim (XCLAIM,
/// XAUTOCLAIM) is logged, as an idempotent `XCLAIM key group consumer 0 id TIME <ms>
/// RETRYCOUNT <n> FORCE JUSTID LASTID <group last id>` recreating the pending entry exactly.
fn xclaim_effect(key: &[u8], group: &[u8], id_arg: &[u8], nack: &Nack, last_id: StreamId) -> Vec<Vec<u8>> {
    vec![
        b"XCLAIM".to_vec(),
        key.to_vec(),
        group.to_vec(),
        nack.consumer.clone(),
        b"0".to_vec(),
        id_arg.to_vec(),
        b"TIME".to_vec(),
        nack.delivery_time.to_string().into_bytes(),
        b"RETRYCOUNT".to_vec(),
        nack.delivery_count.to_string().into_bytes(),
        b"FORCE".to_vec(),
        b"JUSTID".to_vec(),
        b"LASTID".to_vec(),
        last_id.to_bytes(),
    ]
}

/// Redis's streamPropagateGroupID: `XGROUP SETID key group <last id> ENTRIESREAD <n>`, for
/// a group whose last delivered ID moved without an XCLAIM carrying it (NOACK reads, an
/// XCLAIM LASTID that claimed nothing).
fn setid_effect(key: &[u8], group: &[u8], g: &Group) -> Vec<Vec<u8>> {
    vec![
        b"XGROUP".to_vec(),
        b"SETID".to_vec(),
        key.to_vec(),
        group.to_vec(),
        g.last_id.to_bytes(),
        b"ENTRIESREAD".to_vec(),
        g.entries_read.to_string().into_bytes(),
    ]
}

/// Redis's streamPropagateConsumerCreation: `XGROUP CREATECONSUMER key group consumer`,
/// for a consumer a NOACK read created (no XCLAIM creates it on replay).
fn createconsumer_effect(key: &[u8], group: &[u8], consumer: &[u8]) -> Vec<Vec<u8>> {
    vec![b"XGROUP".to_vec(), b"CREATECONSUMER".to_vec(), key.to_vec(), group.to_vec(), consumer.to_vec()]
}

/// Records effects gathered while the stream was borrowed.
fn propagate_all(ctx: &mut Ctx<'_>, effects: Vec<Vec<Vec<u8>>>) {
    for effect in effects {
        ctx.propagate_as(&effect);
    }
}
