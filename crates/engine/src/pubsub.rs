//! The Pub/Sub registry: which clients listen to which channels, patterns and shard
//! channels, and delivery of messages to them through their cross-thread output queue
//! (`ClientHandle::push_output`), encoded in each subscriber's protocol.
//!
//! Also the keyspace notification classes (`notify-keyspace-events`) and the channel
//! names of keyspace/keyevent messages.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hashbrown::HashMap;
use parking_lot::RwLock;
use quince_resp::{Encoder, Protocol};

use crate::clients::{flag, ClientHandle};
use crate::glob::glob_match;
use crate::reply::ReplySink;

/// Keyspace notification classes, Redis's NOTIFY_* bits (as `Config::get_int` returns
/// them for `notify-keyspace-events`).
pub mod notify {
    pub const KEYSPACE: i64 = 1 << 0;
    pub const KEYEVENT: i64 = 1 << 1;
    pub const GENERIC: i64 = 1 << 2;
    pub const STRING: i64 = 1 << 3;
    pub const LIST: i64 = 1 << 4;
    pub const SET: i64 = 1 << 5;
    pub const HASH: i64 = 1 << 6;
    pub const ZSET: i64 = 1 << 7;
    pub const EXPIRED: i64 = 1 << 8;
    pub const EVICTED: i64 = 1 << 9;
    pub const STREAM: i64 = 1 << 10;
    pub const KEY_MISS: i64 = 1 << 11;
    pub const NEW: i64 = 1 << 14;
}

/// The three subscription namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Channel,
    Pattern,
    Shard,
}

impl Kind {
    /// The first element of (un)subscribe confirmations.
    pub fn verbs(self) -> (&'static str, &'static str) {
        match self {
            Kind::Channel => ("subscribe", "unsubscribe"),
            Kind::Pattern => ("psubscribe", "punsubscribe"),
            Kind::Shard => ("ssubscribe", "sunsubscribe"),
        }
    }
}

/// One client's subscriptions, in subscription order (kept in its `ClientHandle`).
#[derive(Debug, Default)]
pub struct Subscriptions {
    pub channels: Vec<Vec<u8>>,
    pub patterns: Vec<Vec<u8>>,
    pub shard: Vec<Vec<u8>>,
}

impl Subscriptions {
    fn of(&mut self, kind: Kind) -> &mut Vec<Vec<u8>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }

    /// The count (un)subscribe replies report: channels plus patterns, or shard channels.
    pub fn count(&self, kind: Kind) -> usize {
        match kind {
            Kind::Shard => self.shard.len(),
            _ => self.channels.len() + self.patterns.len(),
        }
    }

    pub fn total(&self) -> usize {
        self.channels.len() + self.patterns.len() + self.shard.len()
    }
}

type Listeners = HashMap<Vec<u8>, Vec<Arc<ClientHandle>>>;

#[derive(Debug, Default)]
struct Registry {
    channels: Listeners,
    patterns: Listeners,
    shard: Listeners,
}

impl Registry {
    fn of(&mut self, kind: Kind) -> &mut Listeners {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }

    fn get(&self, kind: Kind) -> &Listeners {
        match kind {
            Kind::Channel => &self.channels,
            Kind::Pattern => &self.patterns,
            Kind::Shard => &self.shard,
        }
    }
}

pub use crate::clients::OutputLimit;

#[derive(Debug, Default)]
pub struct PubSub {
    registry: RwLock<Registry>,
    /// Registry entries of every kind: publishing to nobody costs one atomic load.
    active: AtomicUsize,
    pub limit: OutputLimit,
}

impl PubSub {
    /// Adds a subscription. Returns the client's count to report (see `Subscriptions::count`).
    pub fn subscribe(&self, client: &Arc<ClientHandle>, kind: Kind, name: &[u8]) -> usize {
        let mut registry = self.registry.write();
        let mut subs = client.pubsub.lock();
        if !subs.of(kind).iter().any(|n| n == name) {
            subs.of(kind).push(name.to_vec());
            let listeners = registry.of(kind).entry_ref(name).or_insert_with(|| {
                self.active.fetch_add(1, Ordering::Relaxed);
                Vec::new()
            });
            listeners.push(client.clone());
        }
        client.set_flag(flag::PUBSUB, true);
        subs.count(kind)
    }

    /// Removes a subscription. Returns the client's remaining count.
    pub fn unsubscribe(&self, client: &ClientHandle, kind: Kind, name: &[u8]) -> usize {
        let mut registry = self.registry.write();
        let mut subs = client.pubsub.lock();
        if let Some(pos) = subs.of(kind).iter().position(|n| n == name) {
            subs.of(kind).remove(pos);
            let listeners = registry.of(kind);
            if let Some(list) = listeners.get_mut(name) {
                list.retain(|c| c.id != client.id);
                if list.is_empty() {
                    listeners.remove(name);
                    self.active.fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
        client.set_flag(flag::PUBSUB, subs.total() > 0);
        subs.count(kind)
    }

    /// The client's subscriptions of one kind, in subscription order.
    pub fn subscribed(&self, client: &ClientHandle, kind: Kind) -> Vec<Vec<u8>> {
        client.pubsub.lock().of(kind).clone()
    }

    /// Drops every subscription of the client (RESET, disconnection).
    pub fn unsubscribe_all(&self, client: &ClientHandle) {
        for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
            for name in self.subscribed(client, kind) {
                self.unsubscribe(client, kind, &name);
            }
        }
    }

    /// Whether anybody subscribed to anything (cheap: for keyspace notifications).
    pub fn is_idle(&self) -> bool {
        self.active.load(Ordering::Relaxed) == 0
    }

    /// PUBLISH (Channel) or SPUBLISH (Shard): delivers to the channel's subscribers and,
    /// for PUBLISH, to the matching patterns'. `own` is the publishing client and its
    /// reply sink: its own copies go there, before its reply, as in Redis. Returns the
    /// number of receivers.
    pub fn publish(
        &self,
        kind: Kind,
        channel: &[u8],
        message: &[u8],
        now_ms: i64,
        mut own: Option<(u64, &mut (dyn ReplySink + '_))>,
    ) -> usize {
        if self.is_idle() {
            return 0;
        }
        let registry = self.registry.read();
        let mut receivers = 0;
        let verb: &[u8] = if kind == Kind::Shard { b"smessage" } else { b"message" };
        if let Some(list) = registry.get(kind).get(channel) {
            for client in list {
                self.deliver(client, &[verb, channel, message], now_ms, &mut own);
                receivers += 1;
            }
        }
        if kind == Kind::Channel {
            for (pattern, list) in &registry.patterns {
                if !glob_match(pattern, channel, false) {
                    continue;
                }
                for client in list {
                    self.deliver(client, &[b"pmessage", pattern, channel, message], now_ms, &mut own);
                    receivers += 1;
                }
            }
        }
        receivers
    }

    fn deliver(
        &self,
        client: &ClientHandle,
        parts: &[&[u8]],
        now_ms: i64,
        own: &mut Option<(u64, &mut (dyn ReplySink + '_))>,
    ) {
        if let Some((id, out)) = own {
            if *id == client.id {
                out.push(parts.len());
                for part in parts {
                    out.bulk(part);
                }
                return;
            }
        }
        let protocol = if client.resp.load(Ordering::Relaxed) == 3 { Protocol::Resp3 } else { Protocol::Resp2 };
        let mut bytes = Vec::with_capacity(16 + parts.iter().map(|p| p.len() + 16).sum::<usize>());
        let mut enc = Encoder::new(&mut bytes, protocol);
        enc.push(parts.len());
        for part in parts {
            enc.bulk(part);
        }
        if client.is_killed() {
            return;
        }
        if self.limit.exceeded(client, client.pending_output() + bytes.len(), now_ms) {
            client.kill();
            return;
        }
        client.push_output(&bytes);
    }

    /// Cluster mode: this node's shard stopped serving `slot`: every subscriber of a shard
    /// channel in it is unsubscribed and told so (`sunsubscribe` with its remaining count).
    pub fn drop_shard_channels_in_slot(&self, slot: usize, now_ms: i64) {
        if self.is_idle() {
            return;
        }
        let channels: Vec<(Vec<u8>, Vec<Arc<ClientHandle>>)> = {
            let registry = self.registry.read();
            registry
                .shard
                .iter()
                .filter(|(c, _)| crate::slot::key_hash_slot(c) == slot)
                .map(|(c, l)| (c.clone(), l.clone()))
                .collect()
        };
        for (channel, clients) in channels {
            for client in clients {
                let remaining = self.unsubscribe(&client, Kind::Shard, &channel);
                let protocol = if client.resp.load(Ordering::Relaxed) == 3 { Protocol::Resp3 } else { Protocol::Resp2 };
                let mut bytes = Vec::with_capacity(48 + channel.len());
                let mut enc = Encoder::new(&mut bytes, protocol);
                enc.push(3);
                enc.bulk(b"sunsubscribe");
                enc.bulk(&channel);
                enc.integer(remaining as i64);
                if client.is_killed() {
                    continue;
                }
                if self.limit.exceeded(&client, client.pending_output() + bytes.len(), now_ms) {
                    client.kill();
                    continue;
                }
                client.push_output(&bytes);
            }
        }
    }

    /// PUBSUB CHANNELS / SHARDCHANNELS: active channels matching `pattern`.
    pub fn channels(&self, kind: Kind, pattern: Option<&[u8]>) -> Vec<Vec<u8>> {
        let registry = self.registry.read();
        registry.get(kind).keys().filter(|c| pattern.is_none_or(|p| glob_match(p, c, false))).cloned().collect()
    }

    /// PUBSUB NUMSUB / SHARDNUMSUB: subscribers of one channel.
    pub fn numsub(&self, kind: Kind, channel: &[u8]) -> usize {
        self.registry.read().get(kind).get(channel).map_or(0, Vec::len)
    }

    /// Distinct entries of a kind (PUBSUB NUMPAT, INFO pubsub_channels ...).
    pub fn count(&self, kind: Kind) -> usize {
        self.registry.read().get(kind).len()
    }
}

/// `__keyspace@<db>__:<key>` or `__keyevent@<db>__:<event>`.
pub fn notification_channel(space: bool, db: usize, suffix: &[u8]) -> Vec<u8> {
    let prefix = if space { "__keyspace@" } else { "__keyevent@" };
    let mut channel = Vec::with_capacity(prefix.len() + 8 + suffix.len());
    channel.extend_from_slice(prefix.as_bytes());
    channel.extend_from_slice(db.to_string().as_bytes());
    channel.extend_from_slice(b"__:");
    channel.extend_from_slice(suffix);
    channel
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::ConnInfo;

    fn client(id: u64, resp: u8) -> Arc<ClientHandle> {
        let c = Arc::new(ClientHandle::new(id, ConnInfo::default(), 0));
        c.resp.store(resp, Ordering::Relaxed);
        c
    }

    #[test]
    fn subscribe_publish_unsubscribe() {
        let ps = PubSub::default();
        let (a, b) = (client(1, 2), client(2, 3));
        assert!(ps.is_idle());
        assert_eq!(ps.subscribe(&a, Kind::Channel, b"news"), 1);
        assert_eq!(ps.subscribe(&a, Kind::Channel, b"news"), 1);
        assert_eq!(ps.subscribe(&a, Kind::Pattern, b"n*"), 2);
        assert_eq!(ps.subscribe(&b, Kind::Channel, b"news"), 1);
        assert!(a.has_flag(flag::PUBSUB));
        assert_eq!(ps.publish(Kind::Channel, b"news", b"hi", 0, None), 3);
        assert_eq!(
            a.take_pushed(),
            b"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n"
        );
        assert_eq!(b.take_pushed(), b">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
        assert_eq!(ps.numsub(Kind::Channel, b"news"), 2);
        assert_eq!(ps.count(Kind::Pattern), 1);
        assert_eq!(ps.unsubscribe(&a, Kind::Channel, b"news"), 1);
        ps.unsubscribe_all(&a);
        assert!(!a.has_flag(flag::PUBSUB));
        assert_eq!(ps.publish(Kind::Channel, b"news", b"x", 0, None), 1);
        ps.unsubscribe_all(&b);
        assert!(ps.is_idle());
        assert_eq!(ps.publish(Kind::Channel, b"news", b"x", 0, None), 0);
    }

    #[test]
    fn shard_channels_are_separate() {
        let ps = PubSub::default();
        let a = client(1, 2);
        assert_eq!(ps.subscribe(&a, Kind::Pattern, b"*"), 1);
        assert_eq!(ps.subscribe(&a, Kind::Shard, b"s"), 1);
        assert_eq!(ps.publish(Kind::Shard, b"s", b"m", 0, None), 1);
        assert_eq!(a.take_pushed(), b"*3\r\n$8\r\nsmessage\r\n$1\r\ns\r\n$1\r\nm\r\n");
        assert_eq!(ps.channels(Kind::Shard, None), vec![b"s".to_vec()]);
        assert!(ps.channels(Kind::Channel, None).is_empty());
        assert_eq!(ps.channels(Kind::Shard, Some(b"x*")), Vec::<Vec<u8>>::new());
    }

    #[test]
    fn pattern_matching_uses_glob() {
        let ps = PubSub::default();
        let a = client(1, 2);
        ps.subscribe(&a, Kind::Pattern, b"h?llo.[ab]*");
        assert_eq!(ps.publish(Kind::Channel, b"hello.apple", b"m", 0, None), 1);
        assert_eq!(ps.publish(Kind::Channel, b"hello.cat", b"m", 0, None), 0);
    }

    #[test]
    fn hard_limit_kills_slow_subscriber() {
        let ps = PubSub::default();
        ps.limit.set(100, 50, 60);
        let a = client(1, 2);
        ps.subscribe(&a, Kind::Channel, b"c");
        ps.publish(Kind::Channel, b"c", &[b'x'; 20], 0, None);
        assert!(!a.is_killed());
        ps.publish(Kind::Channel, b"c", &[b'x'; 80], 0, None);
        assert!(a.is_killed());
        assert!(a.pending_output() < 100);
    }

    #[test]
    fn soft_limit_needs_time() {
        let ps = PubSub::default();
        ps.limit.set(0, 10, 1);
        let a = client(1, 2);
        ps.subscribe(&a, Kind::Channel, b"c");
        ps.publish(Kind::Channel, b"c", b"first", 1000, None);
        assert!(!a.is_killed());
        ps.publish(Kind::Channel, b"c", b"second", 1500, None);
        assert!(!a.is_killed());
        ps.publish(Kind::Channel, b"c", b"third", 3100, None);
        assert!(a.is_killed());
    }

    #[test]
    fn channel_names() {
        assert_eq!(notification_channel(true, 9, b"foo"), b"__keyspace@9__:foo");
        assert_eq!(notification_channel(false, 0, b"set"), b"__keyevent@0__:set");
    }
}
