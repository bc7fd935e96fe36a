//! The RDB format, version 10 (Redis 7.0): whole-dataset snapshots (`write_snapshot`,
//! `load_snapshot`) and the object encoding DUMP / RESTORE payloads share
//! (`write_object`, `read_object`). `docs/persistence.md` documents the format byte by byte.
//!
//! ```
//! use quince_engine::{Engine, EngineOptions};
//! use quince_persist::rdb::{load_snapshot, write_snapshot, LoadOptions, SaveOptions};
//!
//! let engine = Engine::new(EngineOptions::default());
//! let mut client = engine.new_client();
//! let mut out = quince_engine::ReplyBuilder::new();
//! engine.execute(&mut client, &[b"SET", b"greeting", b"hello"], &mut out);
//!
//! let mut file = Vec::new();
//! write_snapshot(&engine, &mut file, &SaveOptions::default()).unwrap();
//! let copy = Engine::new(EngineOptions::default());
//! let stats = load_snapshot(&copy, &file[..], &LoadOptions::default(), &mut |_keys, _bytes| {}).unwrap();
//! assert_eq!(stats.keys_loaded, 1);
//! ```
//!
//! One concern per file: the compact encodings (`listpack`, `ziplist`, `intset`, `zipmap`),
//! the checksum (`crc64`) and compression (`lzf`), the primitives (`encode`, `decode`), the
//! objects (`write`, `read`, `stream`) and whole files (`file`).

pub mod crc64;
mod decode;
mod encode;
mod error;
mod file;
pub mod intset;
pub mod listpack;
pub mod lzf;
mod read;
mod stream;
mod write;
pub mod ziplist;
pub mod zipmap;

pub use decode::Input;
pub use error::RdbError;
pub use file::{
    function_payload, function_payload_codes, load_snapshot, write_snapshot, LoadOptions, LoadStats, SaveOptions, SaveStats,
};
pub use read::read_object;
pub use write::{object_type, write_object, WriteOptions};

/// The RDB version quince writes (Redis 7.0's `RDB_VERSION`).
pub const RDB_VERSION: u16 = 10;

/// Object types (the byte before a key, or the first byte of a DUMP payload).
pub mod types {
    pub const STRING: u8 = 0;
    pub const LIST: u8 = 1;
    pub const SET: u8 = 2;
    pub const ZSET: u8 = 3;
    pub const HASH: u8 = 4;
    pub const ZSET_2: u8 = 5;
    pub const MODULE: u8 = 6;
    pub const MODULE_2: u8 = 7;
    pub const HASH_ZIPMAP: u8 = 9;
    pub const LIST_ZIPLIST: u8 = 10;
    pub const SET_INTSET: u8 = 11;
    pub const ZSET_ZIPLIST: u8 = 12;
    pub const HASH_ZIPLIST: u8 = 13;
    pub const LIST_QUICKLIST: u8 = 14;
    pub const STREAM_LISTPACKS: u8 = 15;
    pub const HASH_LISTPACK: u8 = 16;
    pub const ZSET_LISTPACK: u8 = 17;
    pub const LIST_QUICKLIST_2: u8 = 18;
    pub const STREAM_LISTPACKS_2: u8 = 19;

    /// Whether `t` names an object type (`rdbIsObjectType`).
    pub fn is_object_type(t: u8) -> bool {
        t <= 7 || (9..=19).contains(&t)
    }
}

/// Opcodes of the file layout.
pub mod opcodes {
    pub const FUNCTION2: u8 = 245;
    pub const FUNCTION: u8 = 246;
    pub const MODULE_AUX: u8 = 247;
    pub const IDLE: u8 = 248;
    pub const FREQ: u8 = 249;
    pub const AUX: u8 = 250;
    pub const RESIZEDB: u8 = 251;
    pub const EXPIRETIME_MS: u8 = 252;
    pub const EXPIRETIME: u8 = 253;
    pub const SELECTDB: u8 = 254;
    pub const EOF: u8 = 255;
}
