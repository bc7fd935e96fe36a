//! The collection value types (list, hash, set, sorted set) and their encodings. Each type
//! converts from its compact encoding to the general one at Redis's thresholds (`Limits`),
//! so OBJECT ENCODING reports what Redis would.

pub mod hash;
pub mod intset;
pub mod list;
pub mod packed;
pub mod set;
pub mod skiplist;
pub mod small;
pub mod stream;
pub mod zset;

pub use hash::HashValue;
pub use list::ListValue;
pub use set::SetValue;
pub use stream::StreamValue;
pub use zset::ZSetValue;

/// Collection members and fields are owned byte strings.
pub type Bytes = Box<[u8]>;

/// Encoding thresholds from the configuration (`hash-max-listpack-entries` and friends),
/// read once per command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub hash_max_listpack_entries: usize,
    pub hash_max_listpack_value: usize,
    pub set_max_intset_entries: usize,
    pub zset_max_listpack_entries: usize,
    pub zset_max_listpack_value: usize,
    /// `list-max-listpack-size`: positive is entries per quicklist node, -1..-5 a byte size.
    pub list_max_listpack_size: i64,
    pub list_compress_depth: i64,
    pub stream_node_max_entries: i64,
    pub stream_node_max_bytes: i64,
}

impl Default for Limits {
    /// Redis 7.0's compiled-in defaults.
    fn default() -> Self {
        Self {
            hash_max_listpack_entries: 512,
            hash_max_listpack_value: 64,
            set_max_intset_entries: 512,
            zset_max_listpack_entries: 128,
            zset_max_listpack_value: 64,
            list_max_listpack_size: -2,
            list_compress_depth: 0,
            stream_node_max_entries: 100,
            stream_node_max_bytes: 4096,
        }
    }
}
