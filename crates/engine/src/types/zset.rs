//! Sorted sets: a flat vector ordered by (score, member) (Redis's listpack) while small.

use super::Bytes;

#[derive(Debug, Clone, PartialEq)]
pub enum ZSetValue {
    /// Ascending by (score, member).
    Listpack(Vec<(Bytes, f64)>),
}

impl Default for ZSetValue {
    fn default() -> Self {
        ZSetValue::Listpack(Vec::new())
    }
}

impl ZSetValue {
    pub fn len(&self) -> usize {
        match self {
            ZSetValue::Listpack(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        match self {
            ZSetValue::Listpack(_) => "listpack",
        }
    }

    /// Every member with its score, ascending by (score, member).
    pub fn iter(&self) -> Box<dyn Iterator<Item = (&[u8], f64)> + '_> {
        match self {
            ZSetValue::Listpack(v) => Box::new(v.iter().map(|(m, s)| (&m[..], *s))),
        }
    }
}
