//! RESP wire format for Quince: the request decoder and the reply encoder.
//!
//! This crate owns bytes on the wire and nothing else: no sockets, no async, no commands.
//! It decodes requests exactly as redis-server parses them (multibulk and inline, with the
//! same protocol errors and limits) and encodes replies in RESP3, down-converting to RESP2
//! the way Redis does.
//!
//! ```
//! use quince_resp::{Decoded, Encoder, Protocol, RequestDecoder};
//!
//! let mut decoder = RequestDecoder::new(quince_resp::DEFAULT_PROTO_MAX_BULK_LEN);
//! let input = b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n";
//! assert_eq!(decoder.decode(input), Ok(Decoded::Request { len: input.len() }));
//! let args: Vec<&[u8]> = decoder.args(input).collect();
//! assert_eq!(args, [&b"GET"[..], &b"key"[..]]);
//!
//! let mut out = Vec::new();
//! Encoder::new(&mut out, Protocol::Resp2).double(1.5);
//! assert_eq!(out, b"$3\r\n1.5\r\n");
//! ```

mod decode;
mod encode;
mod number;
mod peek;
mod reply;
mod split;

pub use decode::{Decoded, ProtocolError, RequestDecoder, DEFAULT_PROTO_MAX_BULK_LEN, PROTO_INLINE_MAX_SIZE};
pub use encode::{encode_command, Encoder, Protocol};
pub use number::{format_double, format_i64, parse_i64_strict, I64Text};
pub use peek::{peek_request, Peeked};
pub use reply::{reply_frame_len, FrameError};
pub use split::split_args;
