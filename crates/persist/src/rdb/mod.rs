//! The RDB format, version 10 (Redis 7.0).

use std::io::{self, BufRead, Write};

use quince_engine::Engine;

/// How to write a snapshot.
#[derive(Debug, Clone)]
pub struct SaveOptions {
    pub compression: bool,
    pub checksum: bool,
    /// The file is an AOF base (aux field `aof-base 1`).
    pub aof_base: bool,
}

impl SaveOptions {
    pub fn from_config(engine: &Engine, aof_base: bool) -> Self {
        let config = engine.config.read();
        Self { compression: config.get_bool("rdbcompression"), checksum: config.get_bool("rdbchecksum"), aof_base }
    }
}

/// Placeholder until the RDB writer lands (replaced by the rdb branch).
pub fn write_snapshot(_engine: &Engine, _out: &mut dyn Write, _options: &SaveOptions) -> io::Result<u64> {
    Err(io::Error::other("the RDB writer is not built yet"))
}

/// Placeholder until the RDB loader lands (replaced by the rdb branch).
pub fn load_snapshot(
    _engine: &Engine,
    _input: &mut dyn BufRead,
    _progress: &mut dyn FnMut(u64, u64),
) -> Result<u64, String> {
    Err("the RDB loader is not built yet".into())
}
