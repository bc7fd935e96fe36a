//! Writing the dataset as commands (an AOF base file with `aof-use-rdb-preamble no`), as
//! Redis's rewriteAppendOnlyFileRio does: one SELECT per database, collections in batches
//! of 64 items per command, PEXPIREAT for keys with a TTL, function libraries first.

use std::io::{self, Write};

use quince_engine::keyspace::{Entry, Value};
use quince_engine::types::stream::{StreamId, StreamValue};
use quince_engine::Engine;

/// Items per command (Redis's AOF_REWRITE_ITEMS_PER_CMD).
const ITEMS_PER_COMMAND: usize = 64;

/// Writes every key of every database as commands that rebuild it. The caller guarantees a
/// consistent view (the exclusive gate, or a forked child).
pub fn write_commands(engine: &Engine, out: &mut dyn Write) -> io::Result<u64> {
    let mut buf = Vec::with_capacity(1 << 16);
    for code in engine.scripting.library_codes() {
        command(&mut buf, &[b"FUNCTION", b"LOAD", &code]);
    }
    let now = engine.clock.now_ms();
    let mut keys = 0u64;
    for db in 0..engine.keyspace.databases() {
        let mut selected = false;
        for shard in 0..engine.keyspace.shard_count() {
            let mut guard = engine.keyspace.lock(shard);
            for (key, entry) in guard.dbs[db].iter_live(now) {
                if !selected {
                    command(&mut buf, &[b"SELECT", db.to_string().as_bytes()]);
                    selected = true;
                }
                write_entry(&mut buf, key, entry);
                keys += 1;
                crate::child_info::progress(keys);
                if buf.len() >= 1 << 16 {
                    out.write_all(&buf)?;
                    buf.clear();
                }
            }
        }
    }
    out.write_all(&buf)?;
    Ok(keys)
}

fn command(buf: &mut Vec<u8>, args: &[&[u8]]) {
    quince_resp::encode_command(buf, args);
}

/// Emits `prefix` + items in batches of `ITEMS_PER_COMMAND` (items of `width` arguments).
fn batched(buf: &mut Vec<u8>, prefix: &[&[u8]], items: &mut dyn Iterator<Item = Vec<Vec<u8>>>) {
    let mut batch: Vec<Vec<u8>> = Vec::new();
    let mut count = 0;
    let flush = |buf: &mut Vec<u8>, batch: &mut Vec<Vec<u8>>| {
        let mut args: Vec<&[u8]> = prefix.to_vec();
        args.extend(batch.iter().map(|a| &a[..]));
        command(buf, &args);
        batch.clear();
    };
    for item in items {
        batch.extend(item);
        count += 1;
        if count == ITEMS_PER_COMMAND {
            flush(buf, &mut batch);
            count = 0;
        }
    }
    if count > 0 {
        flush(buf, &mut batch);
    }
}

fn write_entry(buf: &mut Vec<u8>, key: &[u8], entry: &Entry) {
    match &entry.value {
        Value::Str(s) => command(buf, &[b"SET", key, &s.as_bytes()]),
        Value::List(list) => {
            batched(buf, &[b"RPUSH", key], &mut list.iter().map(|item| vec![item.to_vec()]));
        }
        Value::Set(set) => {
            batched(buf, &[b"SADD", key], &mut set.iter().map(|m| vec![m.into_owned()]));
        }
        Value::ZSet(zset) => {
            batched(
                buf,
                &[b"ZADD", key],
                &mut zset.iter().map(|(member, score)| {
                    let mut text = Vec::new();
                    quince_resp::format_double(score, &mut text);
                    vec![text, member.to_vec()]
                }),
            );
        }
        Value::Hash(hash) => {
            batched(buf, &[b"HMSET", key], &mut hash.iter().map(|(f, v)| vec![f.to_vec(), v.to_vec()]));
        }
        Value::Stream(stream) => write_stream(buf, key, stream),
    }
    if let Some(at) = entry.expire_at_ms() {
        command(buf, &[b"PEXPIREAT", key, at.to_string().as_bytes()]);
    }
}

/// A stream: its entries, its metadata (XSETID), then groups, consumers and pending entries,
/// as Redis's rewriteStreamObject does.
fn write_stream(buf: &mut Vec<u8>, key: &[u8], stream: &StreamValue) {
    let entries = stream.entries();
    if entries.is_empty() {
        // An empty stream is created by adding an entry (0-1, valid even when the stream
        // never had one) and trimming it away; XSETID below restores its real last ID.
        command(buf, &[b"XADD", key, b"MAXLEN", b"0", b"0-1", b"x", b"y"]);
    }
    for (id, fields) in &entries {
        let id = id.to_string();
        let mut args: Vec<&[u8]> = vec![b"XADD", key, id.as_bytes()];
        args.extend(fields.iter());
        command(buf, &args);
    }
    let last = stream.last_id.to_string();
    let added = stream.entries_added.to_string();
    let max_deleted = stream.max_deleted_id.to_string();
    command(
        buf,
        &[b"XSETID", key, last.as_bytes(), b"ENTRIESADDED", added.as_bytes(), b"MAXDELETEDID", max_deleted.as_bytes()],
    );
    for (name, group) in &stream.groups {
        let group_last = group.last_id.to_string();
        let entries_read = group.entries_read.to_string();
        command(
            buf,
            &[b"XGROUP", b"CREATE", key, name, group_last.as_bytes(), b"ENTRIESREAD", entries_read.as_bytes()],
        );
        for (consumer_name, consumer) in &group.consumers {
            if consumer.pel.is_empty() {
                command(buf, &[b"XGROUP", b"CREATECONSUMER", key, name, consumer_name]);
            }
            for id in &consumer.pel {
                let Some(nack) = group.pel.get(id) else { continue };
                claim(buf, key, name, consumer_name, *id, nack.delivery_time, nack.delivery_count);
            }
        }
    }
}

fn claim(buf: &mut Vec<u8>, key: &[u8], group: &[u8], consumer: &[u8], id: StreamId, time: i64, count: u64) {
    let id = id.to_string();
    let time = time.to_string();
    let count = count.to_string();
    command(
        buf,
        &[
            b"XCLAIM",
            key,
            group,
            consumer,
            b"0",
            id.as_bytes(),
            b"TIME",
            time.as_bytes(),
            b"RETRYCOUNT",
            count.as_bytes(),
            b"JUSTID",
            b"FORCE",
        ],
    );
}
