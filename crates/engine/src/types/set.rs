//! Sets: a sorted integer array (Redis's intset) while every member is an integer and the
//! set is small, a hash table after.

use std::borrow::Cow;

use hashbrown::HashSet;

use super::Bytes;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetValue {
    /// Ascending, no duplicates.
    Intset(Vec<i64>),
    Table(HashSet<Bytes>),
}

impl Default for SetValue {
    fn default() -> Self {
        SetValue::Intset(Vec::new())
    }
}

impl SetValue {
    pub fn len(&self) -> usize {
        match self {
            SetValue::Intset(v) => v.len(),
            SetValue::Table(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        match self {
            SetValue::Intset(_) => "intset",
            SetValue::Table(_) => "hashtable",
        }
    }

    /// Every member, in the encoding's order (intsets ascending).
    pub fn iter(&self) -> Box<dyn Iterator<Item = Cow<'_, [u8]>> + '_> {
        match self {
            SetValue::Intset(v) => Box::new(v.iter().map(|n| Cow::Owned(n.to_string().into_bytes()))),
            SetValue::Table(t) => Box::new(t.iter().map(|m| Cow::Borrowed(&m[..]))),
        }
    }
}
