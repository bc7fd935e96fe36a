//! In-process pub/sub: a `Subscription` is a client of the engine subscribed to channels or
//! patterns; PUBLISH from any thread (or a script) pushes messages to it, and
//! `next_message` or the iterator takes them in order.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use quince_engine::{Client, ReplyBuilder};

use crate::wakeup::Wakeup;
use crate::{reply_parse, Db, Error, Result, Value};

/// One published message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The pattern that matched, for a pattern subscription (PSUBSCRIBE).
    pub pattern: Option<Vec<u8>>,
    pub channel: Vec<u8>,
    pub payload: Vec<u8>,
}

/// Channels and patterns one subscriber listens to. Dropping it unsubscribes.
pub struct Subscription {
    db: Db,
    client: Client,
    wakeup: Wakeup,
    queue: VecDeque<Message>,
}

impl Db {
    /// Subscribes to channels (SUBSCRIBE).
    pub fn subscribe<C: AsRef<[u8]>>(&self, channels: &[C]) -> Result<Subscription> {
        let mut subscription = self.new_subscription();
        subscription.subscribe(channels)?;
        Ok(subscription)
    }

    /// Subscribes to glob patterns of channels (PSUBSCRIBE).
    pub fn psubscribe<P: AsRef<[u8]>>(&self, patterns: &[P]) -> Result<Subscription> {
        let mut subscription = self.new_subscription();
        subscription.psubscribe(patterns)?;
        Ok(subscription)
    }

    /// A subscriber with no subscription yet (add them with `Subscription::subscribe`).
    pub fn subscription(&self) -> Subscription {
        self.new_subscription()
    }

    /// PUBLISH: how many subscribers received the message.
    pub fn publish(&self, channel: impl AsRef<[u8]>, message: impl AsRef<[u8]>) -> Result<usize> {
        self.call(&[b"PUBLISH", channel.as_ref(), message.as_ref()])
    }

    fn new_subscription(&self) -> Subscription {
        let mut client = self.engine().new_client();
        client.protocol = quince_resp::Protocol::Resp3;
        let wakeup = Wakeup::install(&client);
        Subscription { db: self.clone(), client, wakeup, queue: VecDeque::new() }
    }
}

impl Subscription {
    /// Adds channels.
    pub fn subscribe<C: AsRef<[u8]>>(&mut self, channels: &[C]) -> Result<()> {
        self.command(b"SUBSCRIBE", channels)
    }

    /// Adds patterns.
    pub fn psubscribe<P: AsRef<[u8]>>(&mut self, patterns: &[P]) -> Result<()> {
        self.command(b"PSUBSCRIBE", patterns)
    }

    /// Removes channels (none: all of them).
    pub fn unsubscribe<C: AsRef<[u8]>>(&mut self, channels: &[C]) -> Result<()> {
        self.command(b"UNSUBSCRIBE", channels)
    }

    /// Removes patterns (none: all of them).
    pub fn punsubscribe<P: AsRef<[u8]>>(&mut self, patterns: &[P]) -> Result<()> {
        self.command(b"PUNSUBSCRIBE", patterns)
    }

    fn command<A: AsRef<[u8]>>(&mut self, name: &[u8], names: &[A]) -> Result<()> {
        let mut args: Vec<&[u8]> = vec![name];
        args.extend(names.iter().map(|n| n.as_ref()));
        let mut out = ReplyBuilder::new();
        self.db.engine().execute(&mut self.client, &args, &mut out);
        for reply in out.take() {
            if let Value::Error(text) = reply {
                return Err(Error::Reply(text));
            }
        }
        Ok(())
    }

    /// The next message, waiting up to `timeout` (None: without limit). Ok(None) when the
    /// time ran out.
    pub fn next_message(&mut self, timeout: Option<Duration>) -> Result<Option<Message>> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            self.take_pushed()?;
            if let Some(message) = self.queue.pop_front() {
                return Ok(Some(message));
            }
            self.wakeup.wait(match deadline {
                Some(at) => match at.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left.min(Duration::from_millis(100)),
                    _ => return Ok(None),
                },
                None => Duration::from_millis(100),
            });
        }
    }

    /// Moves what PUBLISH pushed into the queue of messages.
    fn take_pushed(&mut self) -> Result<()> {
        let bytes = self.client.handle.take_pushed();
        if bytes.is_empty() {
            return Ok(());
        }
        for frame in reply_parse::parse_all(&bytes)? {
            let (Value::Push(items) | Value::Array(items)) = frame else { continue };
            let mut parts = items.into_iter().map(|v| match v {
                Value::Bulk(b) => b,
                Value::Simple(s) => s.into_bytes(),
                _ => Vec::new(),
            });
            let kind = parts.next().unwrap_or_default();
            let message = match &kind[..] {
                b"message" | b"smessage" => {
                    let (channel, payload) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
                    Message { pattern: None, channel, payload }
                }
                b"pmessage" => {
                    let pattern = parts.next();
                    let (channel, payload) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
                    Message { pattern, channel, payload }
                }
                // Subscription confirmations pushed later, invalidations: not messages.
                _ => continue,
            };
            self.queue.push_back(message);
        }
        Ok(())
    }
}

/// Messages as they come, waiting without limit.
impl Iterator for Subscription {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_message(None).transpose()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.db.engine().unregister_client(&self.client);
    }
}
