//! Length-prefixed byte strings packed back to back in one buffer: the memory layout of a
//! small collection (Redis's listpack), one allocation however many entries it holds.
//!
//! Each item is a LEB128 length followed by its bytes. Lookups walk the buffer, which is
//! what a listpack costs too; the types that use it convert to a table past a few hundred
//! short entries (Redis's thresholds), so the walks stay short.

/// Items in order. `count` is kept so `len` is O(1). The buffer is a boxed slice, always
/// exactly its contents' size (a `Vec`'s capacity word would make every value bigger).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Packed {
    buf: Box<[u8]>,
    count: u32,
}

impl std::fmt::Debug for Packed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().map(|b| String::from_utf8_lossy(b).into_owned())).finish()
    }
}

/// Reads the item starting at `pos`: (its bytes' range, where the next item starts).
fn item_at(buf: &[u8], pos: usize) -> (std::ops::Range<usize>, usize) {
    let mut len = 0usize;
    let mut shift = 0;
    let mut p = pos;
    loop {
        let b = buf[p];
        p += 1;
        len |= usize::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    (p..p + len, p + len)
}

fn write_len(out: &mut Vec<u8>, mut len: usize) {
    loop {
        let b = (len & 0x7f) as u8;
        len >>= 7;
        if len == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn len_prefix_size(len: usize) -> usize {
    let bits = usize::BITS - len.leading_zeros();
    (bits.max(1) as usize).div_ceil(7)
}

impl Packed {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes the buffer holds (MEMORY USAGE).
    pub fn byte_capacity(&self) -> usize {
        self.buf.len()
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter { buf: &self.buf, pos: 0 }
    }

    /// Byte offset of the item with index `i` (`i <= len`; `len` gives the end).
    pub fn offset(&self, i: usize) -> usize {
        let mut pos = 0;
        for _ in 0..i {
            pos = item_at(&self.buf, pos).1;
        }
        pos
    }

    pub fn get(&self, i: usize) -> &[u8] {
        let (range, _) = item_at(&self.buf, self.offset(i));
        &self.buf[range]
    }

    /// Appends `items`, growing the buffer by exactly what they need (a listpack is
    /// reallocated to size too: no doubling slack kept in small values).
    pub fn push_all(&mut self, items: &[&[u8]]) {
        let needed: usize = items.iter().map(|b| len_prefix_size(b.len()) + b.len()).sum();
        let mut buf = std::mem::take(&mut self.buf).into_vec();
        buf.reserve_exact(needed);
        for b in items {
            write_len(&mut buf, b.len());
            buf.extend_from_slice(b);
        }
        self.buf = buf.into_boxed_slice();
        self.count += items.len() as u32;
    }

    /// Inserts `items` before the item with index `i` (`i == len` appends).
    pub fn insert(&mut self, i: usize, items: &[&[u8]]) {
        let at = self.offset(i);
        let mut encoded = Vec::with_capacity(items.iter().map(|b| len_prefix_size(b.len()) + b.len()).sum());
        for b in items {
            write_len(&mut encoded, b.len());
            encoded.extend_from_slice(b);
        }
        let mut buf = std::mem::take(&mut self.buf).into_vec();
        buf.reserve_exact(encoded.len());
        buf.splice(at..at, encoded);
        self.buf = buf.into_boxed_slice();
        self.count += items.len() as u32;
    }

    /// Iterates from byte offset `pos` (an item boundary, as `offsets` gives).
    pub fn iter_at(&self, pos: usize) -> Iter<'_> {
        Iter { buf: &self.buf, pos }
    }

    /// Byte offsets of items `0, step, 2*step...` below `end` (item indexes).
    pub fn offsets(&self, end: usize, step: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(end.div_ceil(step.max(1)));
        let mut pos = 0;
        for i in 0..end {
            if i % step == 0 {
                out.push(pos);
            }
            pos = item_at(&self.buf, pos).1;
        }
        out
    }

    /// Replaces the item with index `i` by `value`.
    pub fn replace(&mut self, i: usize, value: &[u8]) {
        let start = self.offset(i);
        let (_, end) = item_at(&self.buf, start);
        let mut encoded = Vec::with_capacity(len_prefix_size(value.len()) + value.len());
        write_len(&mut encoded, value.len());
        encoded.extend_from_slice(value);
        let mut buf = std::mem::take(&mut self.buf).into_vec();
        buf.splice(start..end, encoded);
        self.buf = buf.into_boxed_slice();
    }

    /// Removes `n` items starting at index `i`.
    pub fn remove(&mut self, i: usize, n: usize) {
        let start = self.offset(i);
        let mut end = start;
        for _ in 0..n {
            end = item_at(&self.buf, end).1;
        }
        let mut buf = std::mem::take(&mut self.buf).into_vec();
        buf.drain(start..end);
        self.buf = buf.into_boxed_slice();
        self.count -= n as u32;
    }
}

pub struct Iter<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Iter<'_> {
    /// Byte offset of the next item.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let (range, next) = item_at(self.buf, self.pos);
        self.pos = next;
        Some(&self.buf[range])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_of_every_length_class_round_trip() {
        let long = vec![7u8; 200];
        let longer = vec![9u8; 20_000];
        let mut p = Packed::new();
        p.push_all(&[b"", b"a", &long, &longer]);
        assert_eq!(p.len(), 4);
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![&b""[..], b"a", &long[..], &longer[..]]);
        assert_eq!(p.get(2), &long[..]);
        p.replace(1, &long);
        assert_eq!(p.get(1), &long[..]);
        assert_eq!(p.get(3), &longer[..]);
        p.replace(2, b"x");
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![&b""[..], &long[..], b"x", &longer[..]]);
        p.remove(0, 2);
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![&b"x"[..], &longer[..]]);
        assert_eq!(p.len(), 2);
        p.insert(0, &[b"a", b"b"]);
        p.insert(4, &[b"z"]);
        p.insert(3, &[b"y"]);
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![&b"a"[..], b"b", b"x", b"y", &longer[..], b"z"]);
        let offsets = p.offsets(6, 2);
        assert_eq!(offsets.len(), 3);
        assert_eq!(p.iter_at(offsets[1]).next(), Some(&b"x"[..]));
        assert_eq!(p.offset(4), offsets[2]);
        p.remove(0, 6);
        assert!(p.is_empty());
        assert_eq!(p.iter().count(), 0);
    }

    #[test]
    fn the_buffer_is_sized_to_its_items() {
        let mut p = Packed::new();
        p.push_all(&[b"field", b"value"]);
        assert_eq!(p.byte_capacity(), 12);
        assert_eq!(len_prefix_size(0), 1);
        assert_eq!(len_prefix_size(127), 1);
        assert_eq!(len_prefix_size(128), 2);
        assert_eq!(len_prefix_size(16_383), 2);
        assert_eq!(len_prefix_size(16_384), 3);
    }
}
