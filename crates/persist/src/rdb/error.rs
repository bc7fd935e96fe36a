//! Errors of reading RDB data, worded like Redis's log lines.

use std::fmt;

/// Why an RDB file or DUMP payload could not be loaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum RdbError {
    /// The underlying reader failed.
    Io(std::io::Error),
    /// The input ended in the middle of a value (Redis: "Short read or OOM loading DB").
    ShortRead,
    /// The file does not start with `REDIS`.
    BadMagic,
    /// A version this build cannot read (newer than 10, or 0).
    UnsupportedVersion(u32),
    /// The CRC64 at the end does not match the content.
    Checksum { expected: u64, got: u64 },
    /// Structurally invalid data; the text is Redis's (e.g. "Listpack integrity check failed.").
    Corrupt(String),
    /// A module value or module aux data: quince has no modules.
    Module(String),
    /// A function library failed to load.
    Function(String),
    /// SELECTDB beyond the configured `databases`.
    TooManyDatabases { configured: usize },
    /// The same key twice in one database.
    DuplicateKey { db: usize, key: Vec<u8> },
}

impl RdbError {
    pub(crate) fn corrupt(msg: impl Into<String>) -> Self {
        RdbError::Corrupt(msg.into())
    }
}

impl fmt::Display for RdbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RdbError::Io(e) => write!(f, "Error reading the RDB: {e}"),
            RdbError::ShortRead => f.write_str("Short read or OOM loading DB. Unrecoverable error, aborting now."),
            RdbError::BadMagic => f.write_str("Wrong signature trying to load DB from file"),
            RdbError::UnsupportedVersion(v) => write!(f, "Can't handle RDB format version {v}"),
            RdbError::Checksum { expected, got } => {
                write!(f, "Wrong RDB checksum expected: ({expected:x}) but got ({got:x}). Aborting now.")
            }
            RdbError::Corrupt(msg) => write!(f, "Internal error in RDB reading -> {msg}"),
            RdbError::Module(msg) => f.write_str(msg),
            RdbError::Function(msg) => write!(f, "Failed loading library, {msg}"),
            RdbError::TooManyDatabases { configured } => write!(
                f,
                "FATAL: Data file was created with a Redis server configured to handle more than {configured} databases. Exiting"
            ),
            RdbError::DuplicateKey { db, key } => {
                write!(f, "RDB has duplicated key '{}' in DB {db}", String::from_utf8_lossy(key))
            }
        }
    }
}

impl std::error::Error for RdbError {}

/// The log line, for callers that report errors as text.
impl From<RdbError> for String {
    fn from(e: RdbError) -> Self {
        e.to_string()
    }
}

impl From<std::io::Error> for RdbError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            RdbError::ShortRead
        } else {
            RdbError::Io(e)
        }
    }
}
