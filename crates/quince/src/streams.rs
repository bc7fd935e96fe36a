//! Typed stream commands: XADD, XLEN, XRANGE, XREAD (blocking across threads), consumer
//! groups (XGROUP CREATE, XREADGROUP, XACK), XDEL.

use std::time::Duration;

use crate::value::pairs;
use crate::{Db, Error, FromValue, Result, Value};

/// One stream entry: its id and field/value pairs (None for an entry a consumer group's
/// history still names but that was deleted, as Redis replies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamEntry {
    pub id: String,
    pub fields: Option<Vec<(Vec<u8>, Vec<u8>)>>,
}

impl FromValue for StreamEntry {
    fn from_value(value: Value) -> Result<Self> {
        let (id, fields): (String, Value) = FromValue::from_value(value)?;
        let fields = match fields {
            Value::Null => None,
            other => Some(pairs(other)?),
        };
        Ok(StreamEntry { id, fields })
    }
}

/// XREAD/XREADGROUP's reply: entries per stream, in the order of the keys given.
fn per_stream(value: Value) -> Result<Vec<(Vec<u8>, Vec<StreamEntry>)>> {
    match value {
        Value::Null => Ok(Vec::new()),
        // RESP3: a map of key to entries; RESP2: an array of [key, entries].
        Value::Map(streams) => {
            streams.into_iter().map(|(k, v)| Ok((Vec::<u8>::from_value(k)?, Vec::from_value(v)?))).collect()
        }
        Value::Array(_) => Vec::<(Vec<u8>, Vec<StreamEntry>)>::from_value(value),
        other => Err(Error::UnexpectedReply(format!("expected streams, got {other:?}"))),
    }
}

fn read_args<'a, K: AsRef<[u8]>>(
    args: &mut Vec<Vec<u8>>,
    count: Option<usize>,
    block: Option<Duration>,
    streams: &'a [(K, &'a str)],
) {
    if let Some(count) = count {
        args.push(b"COUNT".to_vec());
        args.push(count.to_string().into_bytes());
    }
    if let Some(block) = block {
        args.push(b"BLOCK".to_vec());
        args.push(block.as_millis().to_string().into_bytes());
    }
    args.push(b"STREAMS".to_vec());
    args.extend(streams.iter().map(|(k, _)| k.as_ref().to_vec()));
    args.extend(streams.iter().map(|(_, id)| id.as_bytes().to_vec()));
}

impl Db {
    /// XADD with an id (`"*"`: generated): the entry's id.
    pub fn xadd<F: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        key: impl AsRef<[u8]>,
        id: &str,
        fields: &[(F, V)],
    ) -> Result<String> {
        let mut args: Vec<&[u8]> = vec![b"XADD", key.as_ref(), id.as_bytes()];
        for (f, v) in fields {
            args.push(f.as_ref());
            args.push(v.as_ref());
        }
        self.call(&args)
    }

    pub fn xlen(&self, key: impl AsRef<[u8]>) -> Result<usize> {
        self.call(&[b"XLEN", key.as_ref()])
    }

    /// XRANGE from `start` to `end` (`"-"` and `"+"` for the ends), at most `count` entries.
    pub fn xrange(
        &self,
        key: impl AsRef<[u8]>,
        start: &str,
        end: &str,
        count: Option<usize>,
    ) -> Result<Vec<StreamEntry>> {
        let count = count.map(|c| c.to_string());
        let mut args: Vec<&[u8]> = vec![b"XRANGE", key.as_ref(), start.as_bytes(), end.as_bytes()];
        if let Some(c) = &count {
            args.push(b"COUNT");
            args.push(c.as_bytes());
        }
        self.call(&args)
    }

    /// XREAD of streams after the given ids (`"$"`: only new entries), waiting up to `block`
    /// (`Duration::ZERO`: without limit) on this thread when none is there yet. Empty when
    /// the wait timed out.
    pub fn xread<K: AsRef<[u8]>>(
        &self,
        streams: &[(K, &str)],
        count: Option<usize>,
        block: Option<Duration>,
    ) -> Result<Vec<(Vec<u8>, Vec<StreamEntry>)>> {
        let mut args = vec![b"XREAD".to_vec()];
        read_args(&mut args, count, block, streams);
        let args: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        per_stream(self.run(&args)?)
    }

    /// XGROUP CREATE key group id [MKSTREAM].
    pub fn xgroup_create(&self, key: impl AsRef<[u8]>, group: &str, id: &str, mkstream: bool) -> Result<()> {
        let mut args: Vec<&[u8]> = vec![b"XGROUP", b"CREATE", key.as_ref(), group.as_bytes(), id.as_bytes()];
        if mkstream {
            args.push(b"MKSTREAM");
        }
        self.call(&args)
    }

    /// XREADGROUP as `consumer` of `group` (`">"`: entries never delivered to the group).
    pub fn xreadgroup<K: AsRef<[u8]>>(
        &self,
        group: &str,
        consumer: &str,
        streams: &[(K, &str)],
        count: Option<usize>,
        block: Option<Duration>,
    ) -> Result<Vec<(Vec<u8>, Vec<StreamEntry>)>> {
        let mut args =
            vec![b"XREADGROUP".to_vec(), b"GROUP".to_vec(), group.as_bytes().to_vec(), consumer.as_bytes().to_vec()];
        read_args(&mut args, count, block, streams);
        let args: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        per_stream(self.run(&args)?)
    }

    /// XACK: how many of the ids were pending in the group.
    pub fn xack(&self, key: impl AsRef<[u8]>, group: &str, ids: &[&str]) -> Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"XACK", key.as_ref(), group.as_bytes()];
        args.extend(ids.iter().map(|id| id.as_bytes()));
        self.call(&args)
    }

    pub fn xdel(&self, key: impl AsRef<[u8]>, ids: &[&str]) -> Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"XDEL", key.as_ref()];
        args.extend(ids.iter().map(|id| id.as_bytes()));
        self.call(&args)
    }
}
