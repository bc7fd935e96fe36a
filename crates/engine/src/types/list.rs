//! Lists. Redis 7.0 always encodes lists as a quicklist (a linked list of listpacks), so
//! OBJECT ENCODING is `quicklist` at every size; quince keeps one ring buffer.

use std::collections::VecDeque;

use super::Bytes;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListValue {
    /// Boxed: a stored value stays small (the key table holds every value inline), at the
    /// price of one more allocation per list.
    #[allow(clippy::box_collection)]
    items: Box<VecDeque<Bytes>>,
}

impl ListValue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn encoding_name(&self) -> &'static str {
        "quicklist"
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &[u8]> + ExactSizeIterator {
        self.items.iter().map(|b| &b[..])
    }

    pub fn items(&self) -> &VecDeque<Bytes> {
        &self.items
    }

    pub fn items_mut(&mut self) -> &mut VecDeque<Bytes> {
        &mut self.items
    }
}

impl FromIterator<Bytes> for ListValue {
    fn from_iter<T: IntoIterator<Item = Bytes>>(iter: T) -> Self {
        Self { items: Box::new(iter.into_iter().collect()) }
    }
}
