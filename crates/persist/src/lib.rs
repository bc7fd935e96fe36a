//! Persistence for Quince in Redis 7.0's formats: RDB snapshots (version 10), the DUMP /
//! RESTORE payload built on the same object encoding, and the multi-part append-only file.
//! `docs/persistence.md` documents both formats; `replication` is the PSYNC2 stream
//! (`docs/replication.md`).

pub mod aof;
pub mod child_info;
pub mod commands;
pub mod dump;
pub mod fork;
pub mod layer;
pub mod migrate;
pub mod oom;
pub mod outgoing;
pub mod rdb;
pub mod replication;
pub mod snapshot;

pub use commands::commands;
pub use layer::{Layer, LogLevel, Logger};
