//! Short byte strings without an allocation (keys, embstr values, set members).

use std::hash::Hasher;

/// Bytes up to this length live inside a `SmallBytes` itself, with no allocation.
pub const EMB_INLINE_MAX: usize = 22;

/// Bytes stored inline when short (at most `EMB_INLINE_MAX`), boxed otherwise: an embstr's
/// bytes, and the keys of the key table. A small key or value then costs nothing beyond
/// its table entry (Redis's embstr puts the bytes in the object's own allocation for the
/// same reason). Compares and hashes as the byte string it holds.
#[derive(Clone)]
pub enum SmallBytes {
    Inline(u8, [u8; EMB_INLINE_MAX]),
    Boxed(Box<[u8]>),
}

impl SmallBytes {
    pub fn new(bytes: &[u8]) -> Self {
        if bytes.len() <= EMB_INLINE_MAX {
            let mut inline = [0u8; EMB_INLINE_MAX];
            inline[..bytes.len()].copy_from_slice(bytes);
            SmallBytes::Inline(bytes.len() as u8, inline)
        } else {
            SmallBytes::Boxed(bytes.into())
        }
    }

    /// Bytes allocated outside the value (MEMORY USAGE).
    pub fn heap_bytes(&self) -> usize {
        match self {
            SmallBytes::Inline(..) => 0,
            SmallBytes::Boxed(b) => b.len(),
        }
    }
}

impl std::ops::Deref for SmallBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            SmallBytes::Inline(len, bytes) => &bytes[..usize::from(*len)],
            SmallBytes::Boxed(b) => b,
        }
    }
}

impl PartialEq for SmallBytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for SmallBytes {}

impl std::hash::Hash for SmallBytes {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl std::borrow::Borrow<[u8]> for SmallBytes {
    fn borrow(&self) -> &[u8] {
        self
    }
}

impl From<&[u8]> for SmallBytes {
    fn from(bytes: &[u8]) -> Self {
        SmallBytes::new(bytes)
    }
}

impl std::fmt::Debug for SmallBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}
