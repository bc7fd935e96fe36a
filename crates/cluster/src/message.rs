//! The cluster bus's messages, byte for byte as Redis 7.0 lays out `clusterMsg`
//! (cluster.h): a 2,256-byte header in network byte order, then a body that depends on the
//! type. Decoding checks every length against the buffer (what `clusterProcessPacket` checks,
//! and more: a message can never make us read past its end), so a hostile or broken peer
//! gets its message dropped, never a panic.

use std::fmt;

/// Node names are 40 hex characters (a SHA1 in hex), not NUL-terminated on the wire.
pub const NAME_LEN: usize = 40;
pub type NodeName = [u8; NAME_LEN];
/// The all-zero name: "no node" (a master's `slaveof`).
pub const NO_NAME: NodeName = [0; NAME_LEN];

pub const SLOTS: usize = 16384;
pub const BITMAP_LEN: usize = SLOTS / 8;
pub type SlotBitmap = [u8; BITMAP_LEN];

/// Bytes of an IP address field (NET_IP_STR_LEN), NUL-padded.
pub const IP_LEN: usize = 46;
/// `sizeof(clusterMsg) - sizeof(union clusterMsgData)`: every message is at least this long.
pub const HEADER_LEN: usize = 2256;
/// `sizeof(clusterMsgDataGossip)`.
pub const GOSSIP_LEN: usize = 104;
/// The smallest a message can claim to be and still be read (8 bytes then decide).
pub const PROTOCOL_VERSION: u16 = 1;
pub const SIGNATURE: &[u8; 4] = b"RCmb";

/// Message types (CLUSTERMSG_TYPE_*).
pub mod kind {
    pub const PING: u16 = 0;
    pub const PONG: u16 = 1;
    pub const MEET: u16 = 2;
    pub const FAIL: u16 = 3;
    pub const PUBLISH: u16 = 4;
    pub const FAILOVER_AUTH_REQUEST: u16 = 5;
    pub const FAILOVER_AUTH_ACK: u16 = 6;
    pub const UPDATE: u16 = 7;
    pub const MFSTART: u16 = 8;
    pub const MODULE: u16 = 9;
    pub const PUBLISHSHARD: u16 = 10;
    /// How many types there are (for per-type statistics).
    pub const COUNT: usize = 11;

    /// The name CLUSTER INFO uses in its per-type counters.
    pub fn name(kind: u16) -> &'static str {
        match kind {
            PING => "ping",
            PONG => "pong",
            MEET => "meet",
            FAIL => "fail",
            PUBLISH => "publish",
            PUBLISHSHARD => "publishshard",
            FAILOVER_AUTH_REQUEST => "auth-req",
            FAILOVER_AUTH_ACK => "auth-ack",
            UPDATE => "update",
            MFSTART => "mfstart",
            MODULE => "module",
            _ => "unknown",
        }
    }
}

/// Node flags (CLUSTER_NODE_*), as sent in headers and gossip entries.
pub mod flag {
    pub const MASTER: u16 = 1;
    pub const REPLICA: u16 = 2;
    pub const PFAIL: u16 = 4;
    pub const FAIL: u16 = 8;
    pub const MYSELF: u16 = 16;
    pub const HANDSHAKE: u16 = 32;
    pub const NOADDR: u16 = 64;
    pub const MEET: u16 = 128;
    pub const MIGRATE_TO: u16 = 256;
    pub const NOFAILOVER: u16 = 512;
}

/// `mflags[0]` bits (CLUSTERMSG_FLAG0_*).
pub mod mflag {
    pub const PAUSED: u8 = 1;
    pub const FORCEACK: u8 = 2;
    pub const EXT_DATA: u8 = 4;
}

/// Ping extension types (clusterMsgPingtypes).
pub const EXT_HOSTNAME: u16 = 0;

/// The fixed header every message starts with.
#[derive(Clone, PartialEq, Eq)]
pub struct Header {
    pub kind: u16,
    /// The sender's client port.
    pub port: u16,
    pub current_epoch: u64,
    pub config_epoch: u64,
    /// Replication offset (a master's, or what a replica processed).
    pub offset: u64,
    pub sender: NodeName,
    pub slots: Box<SlotBitmap>,
    /// The sender's master, or [`NO_NAME`].
    pub replica_of: NodeName,
    /// The address the sender announces, empty when it lets the receiver see it.
    pub ip: Vec<u8>,
    pub pport: u16,
    pub cport: u16,
    pub flags: u16,
    /// 0: the sender sees the cluster OK, 1: failing.
    pub state: u8,
    pub mflags: [u8; 3],
}

impl fmt::Debug for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Header")
            .field("kind", &kind::name(self.kind))
            .field("sender", &String::from_utf8_lossy(&self.sender))
            .field("port", &self.port)
            .field("cport", &self.cport)
            .field("flags", &self.flags)
            .field("current_epoch", &self.current_epoch)
            .field("config_epoch", &self.config_epoch)
            .finish()
    }
}

impl Header {
    pub fn new(kind: u16, sender: NodeName) -> Header {
        Header {
            kind,
            port: 0,
            current_epoch: 0,
            config_epoch: 0,
            offset: 0,
            sender,
            slots: Box::new([0; BITMAP_LEN]),
            replica_of: NO_NAME,
            ip: Vec::new(),
            pport: 0,
            cport: 0,
            flags: 0,
            state: 0,
            mflags: [0; 3],
        }
    }
}

/// One gossip section entry: what the sender knows of another node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gossip {
    pub name: NodeName,
    pub ping_sent: u32,
    pub pong_received: u32,
    pub ip: Vec<u8>,
    pub port: u16,
    pub cport: u16,
    pub flags: u16,
    pub pport: u16,
}

/// A ping extension: a hostname, or one of a type this version does not know (kept as
/// bytes, so it is skipped, as Redis logs and skips it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Extension {
    Hostname(Vec<u8>),
    Unknown { kind: u16, data: Vec<u8> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// PING, PONG, MEET.
    Gossip {
        entries: Vec<Gossip>,
        extensions: Vec<Extension>,
    },
    Fail {
        about: NodeName,
    },
    /// PUBLISH, PUBLISHSHARD.
    Publish {
        channel: Vec<u8>,
        message: Vec<u8>,
    },
    Update {
        config_epoch: u64,
        node: NodeName,
        slots: Box<SlotBitmap>,
    },
    Module {
        module_id: u64,
        kind: u8,
        payload: Vec<u8>,
    },
    /// FAILOVER_AUTH_REQUEST, FAILOVER_AUTH_ACK, MFSTART: the header says it all.
    Empty,
    /// A type this version does not know: Redis accepts any length for it and ignores it.
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub header: Header,
    pub body: Body,
}

/// Why a message was dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    Signature,
    Version(u16),
    Length { got: usize, expected: usize },
    Truncated,
    Extension(&'static str),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Signature => write!(f, "bad signature"),
            DecodeError::Version(v) => write!(f, "unsupported protocol version {v}"),
            DecodeError::Length { got, expected } => {
                write!(f, "invalid packet of length {got} but expected length {expected}")
            }
            DecodeError::Truncated => write!(f, "truncated packet"),
            DecodeError::Extension(why) => write!(f, "bad ping extension: {why}"),
        }
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn name_at(b: &[u8], at: usize) -> NodeName {
    b[at..at + NAME_LEN].try_into().expect("40 bytes")
}
/// A NUL-padded string field: the bytes before the first NUL.
fn cstr(b: &[u8]) -> Vec<u8> {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    b[..end].to_vec()
}

/// What the first 8 bytes of a message say: its total length, or why the link must close
/// (Redis's read handler checks the signature and the minimum length there).
pub fn frame_length(first8: &[u8]) -> Result<usize, DecodeError> {
    if &first8[..4] != SIGNATURE {
        return Err(DecodeError::Signature);
    }
    let total = u32_at(first8, 4) as usize;
    if total < HEADER_LEN {
        return Err(DecodeError::Length { got: total, expected: HEADER_LEN });
    }
    Ok(total)
}

/// The length extensions would need, 8-byte aligned as Redis pads them.
fn extension_len(ext: &Extension) -> usize {
    match ext {
        Extension::Hostname(h) => 8 + (h.len() + 1).div_ceil(8) * 8,
        Extension::Unknown { data, .. } => 8 + data.len().div_ceil(8) * 8,
    }
}

impl Message {
    /// Decodes one whole message (`buf` is exactly `totlen` bytes).
    pub fn decode(buf: &[u8]) -> Result<Message, DecodeError> {
        if buf.len() < 8 {
            return Err(DecodeError::Truncated);
        }
        let total = frame_length(buf)?;
        if total != buf.len() {
            return Err(DecodeError::Length { got: buf.len(), expected: total });
        }
        let version = u16_at(buf, 8);
        if version != PROTOCOL_VERSION {
            return Err(DecodeError::Version(version));
        }
        let b = buf;
        let mut slots = Box::new([0u8; BITMAP_LEN]);
        slots.copy_from_slice(&b[80..80 + BITMAP_LEN]);
        let header = Header {
            port: u16_at(b, 10),
            kind: u16_at(b, 12),
            current_epoch: u64_at(b, 16),
            config_epoch: u64_at(b, 24),
            offset: u64_at(b, 32),
            sender: name_at(b, 40),
            slots,
            replica_of: name_at(b, 2128),
            ip: cstr(&b[2168..2168 + IP_LEN]),
            pport: u16_at(b, 2246),
            cport: u16_at(b, 2248),
            flags: u16_at(b, 2250),
            state: b[2252],
            mflags: [b[2253], b[2254], b[2255]],
        };
        let count = u16_at(b, 14) as usize;
        let extensions = u16_at(b, 2214) as usize;
        let data = &b[HEADER_LEN..];
        let exact = |expected: usize| {
            if total == expected {
                Ok(())
            } else {
                Err(DecodeError::Length { got: total, expected })
            }
        };
        let body = match header.kind {
            kind::PING | kind::PONG | kind::MEET => {
                let gossip_end = count * GOSSIP_LEN;
                if data.len() < gossip_end {
                    return Err(DecodeError::Length { got: total, expected: HEADER_LEN + gossip_end });
                }
                let entries = data[..gossip_end]
                    .chunks_exact(GOSSIP_LEN)
                    .map(|g| Gossip {
                        name: name_at(g, 0),
                        ping_sent: u32_at(g, 40),
                        pong_received: u32_at(g, 44),
                        ip: cstr(&g[48..48 + IP_LEN]),
                        port: u16_at(g, 94),
                        cport: u16_at(g, 96),
                        flags: u16_at(g, 98),
                        pport: u16_at(g, 100),
                    })
                    .collect();
                let mut exts = Vec::new();
                let mut at = gossip_end;
                // Extensions are read only when the sender says there are (FLAG0_EXT_DATA).
                if header.mflags[0] & mflag::EXT_DATA != 0 {
                    for _ in 0..extensions {
                        if data.len() - at < 8 {
                            return Err(DecodeError::Extension("header past the end"));
                        }
                        let len = u32_at(data, at) as usize;
                        let ext_kind = u16_at(data, at + 4);
                        if !len.is_multiple_of(8) || len < 8 {
                            return Err(DecodeError::Extension("length not a multiple of 8"));
                        }
                        if data.len() - at < len {
                            return Err(DecodeError::Extension("exceeds the packet"));
                        }
                        let payload = &data[at + 8..at + len];
                        exts.push(match ext_kind {
                            EXT_HOSTNAME => Extension::Hostname(cstr(payload)),
                            other => Extension::Unknown { kind: other, data: payload.to_vec() },
                        });
                        at += len;
                    }
                }
                exact(HEADER_LEN + at)?;
                Body::Gossip { entries, extensions: exts }
            }
            kind::FAIL => {
                exact(HEADER_LEN + NAME_LEN)?;
                Body::Fail { about: name_at(data, 0) }
            }
            kind::PUBLISH | kind::PUBLISHSHARD => {
                if data.len() < 8 {
                    return Err(DecodeError::Length { got: total, expected: HEADER_LEN + 8 });
                }
                let channel_len = u32_at(data, 0) as usize;
                let message_len = u32_at(data, 4) as usize;
                exact(HEADER_LEN + 8 + channel_len + message_len)?;
                Body::Publish {
                    channel: data[8..8 + channel_len].to_vec(),
                    message: data[8 + channel_len..8 + channel_len + message_len].to_vec(),
                }
            }
            kind::FAILOVER_AUTH_REQUEST | kind::FAILOVER_AUTH_ACK | kind::MFSTART => {
                exact(HEADER_LEN)?;
                Body::Empty
            }
            kind::UPDATE => {
                exact(HEADER_LEN + 8 + NAME_LEN + BITMAP_LEN)?;
                let mut slots = Box::new([0u8; BITMAP_LEN]);
                slots.copy_from_slice(&data[48..48 + BITMAP_LEN]);
                Body::Update { config_epoch: u64_at(data, 0), node: name_at(data, 8), slots }
            }
            kind::MODULE => {
                if data.len() < 13 {
                    return Err(DecodeError::Length { got: total, expected: HEADER_LEN + 13 });
                }
                let len = u32_at(data, 8) as usize;
                exact(HEADER_LEN + 13 + len)?;
                Body::Module { module_id: u64_at(data, 0), kind: data[12], payload: data[13..13 + len].to_vec() }
            }
            _ => Body::Unknown,
        };
        Ok(Message { header, body })
    }

    /// Encodes the message; `count`, `extensions`, the EXT_DATA flag and `totlen` come
    /// from the body.
    pub fn encode(&self) -> Vec<u8> {
        let h = &self.header;
        let mut mflags = h.mflags;
        let (count, ext_count) = match &self.body {
            Body::Gossip { entries, extensions } => {
                if !extensions.is_empty() {
                    mflags[0] |= mflag::EXT_DATA;
                }
                (entries.len(), extensions.len())
            }
            _ => (0, 0),
        };
        let mut b = Vec::with_capacity(HEADER_LEN + count * GOSSIP_LEN + 64);
        b.extend_from_slice(SIGNATURE);
        b.extend_from_slice(&[0; 4]); // totlen, filled in at the end
        b.extend_from_slice(&PROTOCOL_VERSION.to_be_bytes());
        b.extend_from_slice(&h.port.to_be_bytes());
        b.extend_from_slice(&h.kind.to_be_bytes());
        b.extend_from_slice(&(count as u16).to_be_bytes());
        b.extend_from_slice(&h.current_epoch.to_be_bytes());
        b.extend_from_slice(&h.config_epoch.to_be_bytes());
        b.extend_from_slice(&h.offset.to_be_bytes());
        b.extend_from_slice(&h.sender);
        b.extend_from_slice(&h.slots[..]);
        b.extend_from_slice(&h.replica_of);
        put_padded(&mut b, &h.ip, IP_LEN);
        b.extend_from_slice(&(ext_count as u16).to_be_bytes());
        b.extend_from_slice(&[0; 30]);
        b.extend_from_slice(&h.pport.to_be_bytes());
        b.extend_from_slice(&h.cport.to_be_bytes());
        b.extend_from_slice(&h.flags.to_be_bytes());
        b.push(h.state);
        b.extend_from_slice(&mflags);
        debug_assert_eq!(b.len(), HEADER_LEN);
        match &self.body {
            Body::Gossip { entries, extensions } => {
                for g in entries {
                    b.extend_from_slice(&g.name);
                    b.extend_from_slice(&g.ping_sent.to_be_bytes());
                    b.extend_from_slice(&g.pong_received.to_be_bytes());
                    put_padded(&mut b, &g.ip, IP_LEN);
                    b.extend_from_slice(&g.port.to_be_bytes());
                    b.extend_from_slice(&g.cport.to_be_bytes());
                    b.extend_from_slice(&g.flags.to_be_bytes());
                    b.extend_from_slice(&g.pport.to_be_bytes());
                    b.extend_from_slice(&[0; 2]);
                }
                for ext in extensions {
                    let len = extension_len(ext);
                    let (ext_kind, data): (u16, &[u8]) = match ext {
                        Extension::Hostname(h) => (EXT_HOSTNAME, h),
                        Extension::Unknown { kind, data } => (*kind, data),
                    };
                    b.extend_from_slice(&(len as u32).to_be_bytes());
                    b.extend_from_slice(&ext_kind.to_be_bytes());
                    b.extend_from_slice(&[0; 2]);
                    put_padded(&mut b, data, len - 8);
                }
            }
            Body::Fail { about } => b.extend_from_slice(about),
            Body::Publish { channel, message } => {
                b.extend_from_slice(&(channel.len() as u32).to_be_bytes());
                b.extend_from_slice(&(message.len() as u32).to_be_bytes());
                b.extend_from_slice(channel);
                b.extend_from_slice(message);
            }
            Body::Update { config_epoch, node, slots } => {
                b.extend_from_slice(&config_epoch.to_be_bytes());
                b.extend_from_slice(node);
                b.extend_from_slice(&slots[..]);
            }
            Body::Module { module_id, kind, payload } => {
                b.extend_from_slice(&module_id.to_be_bytes());
                b.extend_from_slice(&(payload.len() as u32).to_be_bytes());
                b.push(*kind);
                b.extend_from_slice(payload);
            }
            Body::Empty | Body::Unknown => {}
        }
        let total = b.len() as u32;
        b[4..8].copy_from_slice(&total.to_be_bytes());
        b
    }
}

/// `bytes` in a field of `width` bytes, NUL-padded (cut to leave room for one NUL, as the
/// C strings Redis copies with `memcpy` of at most width-1 bytes).
fn put_padded(b: &mut Vec<u8>, bytes: &[u8], width: usize) {
    let n = bytes.len().min(width.saturating_sub(1));
    b.extend_from_slice(&bytes[..n]);
    b.resize(b.len() + (width - n), 0);
}

/// Slot bitmap helpers.
pub fn slot_is_set(bitmap: &SlotBitmap, slot: usize) -> bool {
    bitmap[slot >> 3] & (1 << (slot & 7)) != 0
}

pub fn set_slot(bitmap: &mut SlotBitmap, slot: usize) {
    bitmap[slot >> 3] |= 1 << (slot & 7);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn name(c: u8) -> NodeName {
        [c; NAME_LEN]
    }

    fn sample_header(k: u16) -> Header {
        let mut h = Header::new(k, name(b'a'));
        h.port = 7000;
        h.cport = 17000;
        h.current_epoch = 5;
        h.config_epoch = 3;
        h.offset = 12345;
        h.flags = flag::MASTER;
        h.ip = b"127.0.0.1".to_vec();
        set_slot(&mut h.slots, 0);
        set_slot(&mut h.slots, 16383);
        h
    }

    #[test]
    fn header_fields_sit_at_redis_offsets() {
        let mut h = sample_header(kind::PING);
        h.replica_of = name(b'b');
        h.state = 1;
        h.mflags = [mflag::PAUSED, 0, 0];
        h.pport = 6999;
        let msg = Message { header: h, body: Body::Empty };
        let b = msg.encode();
        assert_eq!(b.len(), HEADER_LEN);
        assert_eq!(&b[0..4], b"RCmb");
        assert_eq!(u32_at(&b, 4), HEADER_LEN as u32);
        assert_eq!(u16_at(&b, 8), 1);
        assert_eq!(u16_at(&b, 10), 7000);
        assert_eq!(u64_at(&b, 16), 5);
        assert_eq!(u64_at(&b, 24), 3);
        assert_eq!(u64_at(&b, 32), 12345);
        assert_eq!(&b[40..80], &name(b'a'));
        assert_eq!(b[80], 1, "slot 0 is bit 0 of the first byte");
        assert_eq!(b[80 + 2047], 0x80, "slot 16383 is the last bit");
        assert_eq!(&b[2128..2168], &name(b'b'));
        assert_eq!(&b[2168..2177], b"127.0.0.1");
        assert_eq!(b[2177], 0);
        assert_eq!(u16_at(&b, 2246), 6999);
        assert_eq!(u16_at(&b, 2248), 17000);
        assert_eq!(u16_at(&b, 2250), flag::MASTER);
        assert_eq!(b[2252], 1);
        assert_eq!(b[2253], mflag::PAUSED);
    }

    #[test]
    fn gossip_and_hostname_extension_round_trip_padded() {
        let g = Gossip {
            name: name(b'c'),
            ping_sent: 1,
            pong_received: 2,
            ip: b"10.0.0.2".to_vec(),
            port: 7001,
            cport: 17001,
            flags: flag::REPLICA | flag::PFAIL,
            pport: 0,
        };
        let msg = Message {
            header: sample_header(kind::MEET),
            body: Body::Gossip {
                entries: vec![g.clone(), g],
                extensions: vec![Extension::Hostname(b"host-1".to_vec())],
            },
        };
        let b = msg.encode();
        // "host-1" + NUL is 7 bytes, padded to 8, after an 8-byte extension header.
        assert_eq!(b.len(), HEADER_LEN + 2 * GOSSIP_LEN + 16);
        assert_eq!(u16_at(&b, 14), 2, "count");
        assert_eq!(u16_at(&b, 2214), 1, "extensions");
        assert_eq!(b[2253] & mflag::EXT_DATA, mflag::EXT_DATA);
        let gossip = &b[HEADER_LEN..];
        assert_eq!(u16_at(gossip, 94), 7001);
        assert_eq!(u16_at(gossip, 98), flag::REPLICA | flag::PFAIL);
        let mut expected = msg.clone();
        expected.header.mflags[0] |= mflag::EXT_DATA;
        assert_eq!(Message::decode(&b).unwrap(), expected);
    }

    #[test]
    fn each_type_round_trips() {
        let bodies = [
            (kind::FAIL, Body::Fail { about: name(b'd') }),
            (kind::PUBLISH, Body::Publish { channel: b"ch".to_vec(), message: b"hello".to_vec() }),
            (kind::PUBLISHSHARD, Body::Publish { channel: vec![], message: vec![] }),
            (kind::UPDATE, Body::Update { config_epoch: 9, node: name(b'e'), slots: Box::new([0xAA; BITMAP_LEN]) }),
            (kind::MODULE, Body::Module { module_id: 77, kind: 3, payload: b"xyz".to_vec() }),
            (kind::FAILOVER_AUTH_REQUEST, Body::Empty),
            (kind::FAILOVER_AUTH_ACK, Body::Empty),
            (kind::MFSTART, Body::Empty),
        ];
        for (k, body) in bodies {
            let msg = Message { header: sample_header(k), body };
            let bytes = msg.encode();
            assert_eq!(Message::decode(&bytes).unwrap(), msg, "type {}", kind::name(k));
        }
    }

    #[test]
    fn wrong_lengths_and_signatures_are_refused() {
        let msg = Message { header: sample_header(kind::FAIL), body: Body::Fail { about: name(b'd') } };
        let mut b = msg.encode();
        b.push(0);
        let total = b.len() as u32;
        b[4..8].copy_from_slice(&total.to_be_bytes());
        assert!(matches!(Message::decode(&b), Err(DecodeError::Length { .. })));
        let mut b = msg.encode();
        b[0] = b'X';
        assert_eq!(Message::decode(&b), Err(DecodeError::Signature));
        let mut b = msg.encode();
        b[9] = 2;
        assert_eq!(Message::decode(&b), Err(DecodeError::Version(2)));
        // A PING claiming more gossip entries than it carries.
        let mut b =
            Message { header: sample_header(kind::PING), body: Body::Gossip { entries: vec![], extensions: vec![] } }
                .encode();
        b[14..16].copy_from_slice(&3u16.to_be_bytes());
        assert!(Message::decode(&b).is_err());
        // A publish whose lengths overflow the message.
        let mut b = Message {
            header: sample_header(kind::PUBLISH),
            body: Body::Publish { channel: b"c".to_vec(), message: b"m".to_vec() },
        }
        .encode();
        b[HEADER_LEN..HEADER_LEN + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(Message::decode(&b).is_err());
        assert!(frame_length(b"RCmb\0\0\0\x10").is_err(), "shorter than a header");
    }

    proptest! {
        // Any bytes after a valid frame header: decoding returns, never panics.
        #[test]
        fn arbitrary_bodies_never_panic(kind in 0u16..12, count in 0u16..4, exts in 0u16..3, mflag0 in 0u8..8,
                                        tail in proptest::collection::vec(any::<u8>(), 0..600)) {
            let mut b = Message { header: sample_header(kind), body: Body::Empty }.encode();
            b[14..16].copy_from_slice(&count.to_be_bytes());
            b[2214..2216].copy_from_slice(&exts.to_be_bytes());
            b[2253] = mflag0;
            b.extend_from_slice(&tail);
            let total = b.len() as u32;
            b[4..8].copy_from_slice(&total.to_be_bytes());
            let _ = Message::decode(&b);
        }
    }
}
