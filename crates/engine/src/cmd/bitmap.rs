//! Bitmap commands on string values: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD
//! BITFIELD_RO. The bit logic lives in `crate::bits`; this module maps it onto keys.

use crate::bits;
use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::keyspace::{StrValue, TtlOnWrite, Value};
use crate::pubsub::notify;
use crate::reply::ReplySink;

use super::string::{as_str, as_str_mut};

fn proto_max_bulk_len(ctx: &Ctx<'_>) -> u64 {
    ctx.engine.config.read().get_u64("proto-max-bulk-len")
}

/// A key's bytes for reading (None when missing), WRONGTYPE for other types.
fn read_bytes(ctx: &mut Ctx<'_>, key: &[u8]) -> Result<Option<Vec<u8>>, CmdError> {
    let now = ctx.now_ms;
    match ctx.db(key).get(key, now) {
        None => Ok(None),
        Some(entry) => Ok(Some(as_str(entry)?.as_bytes().into_owned())),
    }
}

/// The key's string in raw encoding for in-place bit writes, created empty if missing
/// (a creation counts as one change); also says whether it was created.
fn write_bytes<'a>(ctx: &'a mut Ctx<'_>, key: &[u8]) -> Result<(&'a mut Vec<u8>, bool), CmdError> {
    let now = ctx.now_ms;
    let db = ctx.db(key);
    let created = match db.get(key, now) {
        Some(entry) => {
            as_str(entry)?;
            false
        }
        None => {
            db.set(key, Value::Str(StrValue::Raw(Box::default())), TtlOnWrite::Clear, now);
            true
        }
    };
    let entry = db.get_mut(key, now).expect("present");
    Ok((as_str_mut(entry)?.make_raw(), created))
}

/// SETBIT key offset value — O(1).
fn setbit(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let offset = bits::parse_bit_offset(args[2], false, 0, proto_max_bulk_len(ctx)).map_err(CmdError::msg)?;
    let on = bits::parse_bit_value(args[3]).map_err(CmdError::msg)?;
    let (bytes, created) = write_bytes(ctx, args[1])?;
    let old_len = bytes.len();
    let old = bits::set_bit(bytes, offset, on);
    // Redis counts one change when the string was created or grew, or the bit flipped.
    let changed = bytes.len() != old_len || old != u8::from(on);
    out.integer(i64::from(old));
    if changed && !created {
        ctx.dirty(1);
    }
    if changed || created {
        ctx.notify(notify::STRING, "setbit", args[1]);
    }
    Ok(())
}

/// GETBIT key offset — O(1).
fn getbit(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let offset = bits::parse_bit_offset(args[2], false, 0, proto_max_bulk_len(ctx)).map_err(CmdError::msg)?;
    let bit = read_bytes(ctx, args[1])?.map_or(0, |b| bits::get_bit(&b, offset));
    out.integer(i64::from(bit));
    Ok(())
}

/// BITCOUNT key [start end [BYTE|BIT]] — O(N).
fn bitcount(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let bytes = read_bytes(ctx, args[1])?;
    out.integer(bits::bitcount(bytes.as_deref(), &args[2..]).map_err(CmdError::msg)?);
    Ok(())
}

/// BITPOS key bit [start [end [BYTE|BIT]]] — O(N).
fn bitpos(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    // Redis reads the bit before it looks the key up: a bad bit wins over WRONGTYPE.
    bits::bitpos_bit(args[2]).map_err(CmdError::msg)?;
    let bytes = read_bytes(ctx, args[1])?;
    out.integer(bits::bitpos(bytes.as_deref(), &args[2..]).map_err(CmdError::msg)?);
    Ok(())
}

/// BITOP AND|OR|XOR|NOT destkey key [key ...] — O(N): replies with the result length; an
/// empty result deletes the destination.
fn bitop(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let op = bits::parse_bitop(args[1]).map_err(CmdError::msg)?;
    bits::check_bitop_sources(op, args.len() - 3).map_err(CmdError::msg)?;
    let mut sources: Vec<Vec<u8>> = Vec::with_capacity(args.len() - 3);
    for key in &args[3..] {
        sources.push(read_bytes(ctx, key)?.unwrap_or_default());
    }
    let refs: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
    let result = bits::bitop(op, &refs);
    let (dest, now) = (args[2], ctx.now_ms);
    let len = result.len();
    if result.is_empty() {
        if ctx.db(dest).remove(dest, now) {
            ctx.notify(notify::GENERIC, "del", dest);
        }
    } else {
        ctx.db(dest).set(dest, Value::Str(StrValue::Raw(Box::new(result))), TtlOnWrite::Clear, now);
        ctx.notify(notify::STRING, "set", dest);
    }
    out.integer(len as i64);
    Ok(())
}

/// BITFIELD / BITFIELD_RO key [GET|SET|INCRBY|OVERFLOW ...] — O(1) per operation.
fn bitfield_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, read_only: bool) -> CmdResult {
    let ops = bits::parse_bitfield(&args[2..], read_only, proto_max_bulk_len(ctx)).map_err(CmdError::msg)?;
    let key = args[1];
    let results = if bits::bitfield_needs_write(&ops) {
        let (bytes, created) = write_bytes(ctx, key)?;
        let (results, changes) = bits::run_bitfield_counted(bytes, &ops);
        if !created {
            ctx.dirty(changes);
        }
        if changes > 0 {
            ctx.notify(notify::STRING, "setbit", key);
        }
        results
    } else {
        let mut bytes = read_bytes(ctx, key)?.unwrap_or_default();
        bits::run_bitfield(&mut bytes, &ops).0
    };
    out.array(results.len());
    for r in results {
        match r {
            Some(v) => out.integer(v),
            None => out.null(),
        }
    }
    Ok(())
}

fn bitfield(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    bitfield_generic(ctx, args, out, false)
}

fn bitfield_ro(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    bitfield_generic(ctx, args, out, true)
}

pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::new("setbit", 4, "write denyoom", "bitmap", setbit)
            .doc("bitmap", "2.2.0", "Sets or clears the bit at offset in the string value stored at key", "O(1)")
            .keys("RW access update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("offset", ArgType::Integer),
                ArgDoc::new("value", ArgType::Integer),
            ]),
        CommandSpec::new("getbit", 3, "readonly fast", "bitmap", getbit)
            .doc("bitmap", "2.2.0", "Returns the bit value at offset in the string value stored at key", "O(1)")
            .keys("RO access", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0), ArgDoc::new("offset", ArgType::Integer)]),
        CommandSpec::new("bitcount", -2, "readonly", "bitmap", bitcount)
            .doc("bitmap", "2.6.0", "Count set bits in a string", "O(N)")
            .history(&[("7.0.0", "Added the `BYTE|BIT` option.")])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::block(
                    "index",
                    vec![
                        ArgDoc::new("start", ArgType::Integer),
                        ArgDoc::new("end", ArgType::Integer),
                        ArgDoc::one_of("index_unit", vec![ArgDoc::token("byte", "BYTE"), ArgDoc::token("bit", "BIT")])
                            .optional()
                            .since("7.0.0"),
                    ],
                )
                .optional(),
            ]),
        CommandSpec::new("bitpos", -3, "readonly", "bitmap", bitpos)
            .doc("bitmap", "2.8.7", "Find first bit set or clear in a string", "O(N)")
            .history(&[("7.0.0", "Added the `BYTE|BIT` option.")])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("bit", ArgType::Integer),
                ArgDoc::block(
                    "index",
                    vec![
                        ArgDoc::new("start", ArgType::Integer),
                        ArgDoc::block(
                            "end_index",
                            vec![
                                ArgDoc::new("end", ArgType::Integer),
                                ArgDoc::one_of(
                                    "index_unit",
                                    vec![ArgDoc::token("byte", "BYTE"), ArgDoc::token("bit", "BIT")],
                                )
                                .optional()
                                .since("7.0.0"),
                            ],
                        )
                        .optional(),
                    ],
                )
                .optional(),
            ]),
        CommandSpec::new("bitop", -4, "write denyoom", "bitmap", bitop)
            .doc("bitmap", "2.6.0", "Perform bitwise operations between strings", "O(N)")
            .keys("OW update", 2, 0, 1)
            .keys("RO access", 3, -1, 1)
            .args(vec![
                ArgDoc::new("operation", ArgType::String),
                ArgDoc::key("destkey", 0),
                ArgDoc::key("key", 1).multiple(),
            ]),
        CommandSpec::new("bitfield", -2, "write denyoom", "bitmap", bitfield)
            .doc(
                "bitmap",
                "3.2.0",
                "Perform arbitrary bitfield integer operations on strings",
                "O(1) for each subcommand specified",
            )
            .keys("RW access update variable_flags", 1, 0, 1)
            .key_notes("This command allows both access and modification of the key")
            .variable_key_flags(|args| {
                let writes =
                    args.iter().skip(2).any(|a| a.eq_ignore_ascii_case(b"SET") || a.eq_ignore_ascii_case(b"INCRBY"));
                CommandSpec::key_flags(if writes { "RW access update" } else { "RO access" })
            }),
        CommandSpec::new("bitfield_ro", -2, "readonly fast", "bitmap", bitfield_ro)
            .doc(
                "bitmap",
                "6.0.0",
                "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
                "O(1) for each subcommand specified",
            )
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::block(
                    "encoding_offset",
                    vec![ArgDoc::new("encoding", ArgType::String), ArgDoc::new("offset", ArgType::Integer)],
                )
                .after("GET")
                .multiple(),
            ]),
    ]
}
