//! Hashes: a flat field/value vector (Redis's listpack) while small, a hash table after.

use hashbrown::HashMap;

use super::Bytes;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashValue {
    /// Insertion-ordered pairs, as a listpack keeps them.
    Listpack(Vec<(Bytes, Bytes)>),
    Table(HashMap<Bytes, Bytes>),
}

impl Default for HashValue {
    fn default() -> Self {
        HashValue::Listpack(Vec::new())
    }
}

impl HashValue {
    pub fn len(&self) -> usize {
        match self {
            HashValue::Listpack(v) => v.len(),
            HashValue::Table(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        match self {
            HashValue::Listpack(_) => "listpack",
            HashValue::Table(_) => "hashtable",
        }
    }

    /// Every field and value, in the encoding's order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = (&[u8], &[u8])> + '_> {
        match self {
            HashValue::Listpack(v) => Box::new(v.iter().map(|(f, v)| (&f[..], &v[..]))),
            HashValue::Table(t) => Box::new(t.iter().map(|(f, v)| (&f[..], &v[..]))),
        }
    }
}
