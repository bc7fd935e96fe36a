//! The append-only file in Redis 7.0's multi-part layout: a manifest naming one base file
//! (an RDB or commands) and incremental files of commands, in `appenddirname`.

pub mod load;
pub mod manifest;
pub mod rewrite;
pub mod writer;
