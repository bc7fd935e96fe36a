//! Redis's intset: sorted distinct integers stored at the narrowest width (2, 4 or 8 bytes)
//! that holds them all, widened when a larger member arrives (never narrowed, as in Redis).

/// Sorted ascending, no duplicates; `data` is exactly `len * width` little-endian bytes.
#[derive(Clone)]
pub struct IntSet {
    data: Box<[u8]>,
    width: Width,
}

/// Bytes per member. PERF: an enum, not a u8, so its unused values let `SetValue` keep
/// its other encodings in the same 24 bytes (no tag word: a `Value` stays 32 bytes).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
enum Width {
    Two = 2,
    Four = 4,
    Eight = 8,
}

impl Width {
    fn from_bytes(bytes: u8) -> Self {
        match bytes {
            2 => Width::Two,
            4 => Width::Four,
            _ => Width::Eight,
        }
    }
}

impl Default for IntSet {
    fn default() -> Self {
        Self { data: Box::default(), width: Width::Two }
    }
}

/// The same members, whatever width each set happens to use.
impl PartialEq for IntSet {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for IntSet {}

impl std::fmt::Debug for IntSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The narrowest width that holds `n` (Redis's _intsetValueEncoding).
fn width_for(n: i64) -> u8 {
    if i16::try_from(n).is_ok() {
        2
    } else if i32::try_from(n).is_ok() {
        4
    } else {
        8
    }
}

fn read(bytes: &[u8]) -> i64 {
    match bytes.len() {
        2 => i64::from(i16::from_le_bytes([bytes[0], bytes[1]])),
        4 => i64::from(i32::from_le_bytes(bytes.try_into().expect("4 bytes"))),
        _ => i64::from_le_bytes(bytes.try_into().expect("8 bytes")),
    }
}

fn write(out: &mut Vec<u8>, n: i64, width: u8) {
    out.extend_from_slice(&n.to_le_bytes()[..usize::from(width)]);
}

impl IntSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.data.len() / self.w()
    }

    fn w(&self) -> usize {
        self.width as usize
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Bytes per member (2, 4 or 8).
    pub fn width(&self) -> u8 {
        self.width as u8
    }

    /// The `i`-th smallest member (`i < len`).
    pub fn get(&self, i: usize) -> i64 {
        let w = self.w();
        read(&self.data[i * w..(i + 1) * w])
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = i64> + '_ {
        self.data.chunks_exact(self.w()).map(read)
    }

    /// As `slice::binary_search`: Ok(index) if present, Err(insertion point) otherwise.
    pub fn binary_search(&self, n: i64) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.get(mid).cmp(&n) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// Inserts `n` at index `at` (its sorted position), widening every member if `n` needs it.
    pub fn insert(&mut self, at: usize, n: i64) {
        if width_for(n) <= self.width as u8 {
            // Same width: splice the new member's bytes in (a memmove, as Redis's intset).
            let w = self.w();
            let mut data = std::mem::take(&mut self.data).into_vec();
            data.reserve_exact(w);
            data.splice(at * w..at * w, n.to_le_bytes()[..w].iter().copied());
            self.data = data.into_boxed_slice();
            return;
        }
        let width = width_for(n);
        let mut out = Vec::with_capacity((self.len() + 1) * usize::from(width));
        for (i, m) in self.iter().enumerate() {
            if i == at {
                write(&mut out, n, width);
            }
            write(&mut out, m, width);
        }
        if at == self.len() {
            write(&mut out, n, width);
        }
        self.data = out.into_boxed_slice();
        self.width = Width::from_bytes(width);
    }

    /// Removes and returns the member at index `i`.
    pub fn remove(&mut self, i: usize) -> i64 {
        let n = self.get(i);
        let w = self.w();
        let mut data = std::mem::take(&mut self.data).into_vec();
        data.drain(i * w..(i + 1) * w);
        self.data = data.into_boxed_slice();
        n
    }
}

impl FromIterator<i64> for IntSet {
    /// Members in any order; duplicates are dropped.
    fn from_iter<I: IntoIterator<Item = i64>>(iter: I) -> Self {
        let mut members: Vec<i64> = iter.into_iter().collect();
        members.sort_unstable();
        members.dedup();
        let width = members.iter().map(|&n| width_for(n)).max().unwrap_or(2);
        let mut data = Vec::with_capacity(members.len() * usize::from(width));
        for n in members {
            write(&mut data, n, width);
        }
        Self { data: data.into_boxed_slice(), width: Width::from_bytes(width) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widens_as_redis_does_and_keeps_order() {
        let mut s = IntSet::new();
        for n in [5, -3, 100] {
            let at = s.binary_search(n).unwrap_err();
            s.insert(at, n);
        }
        assert_eq!(s.width(), 2);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![-3, 5, 100]);
        let at = s.binary_search(70_000).unwrap_err();
        s.insert(at, 70_000);
        assert_eq!(s.width(), 4);
        let at = s.binary_search(i64::MIN).unwrap_err();
        s.insert(at, i64::MIN);
        assert_eq!(s.width(), 8);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![i64::MIN, -3, 5, 100, 70_000]);
        assert_eq!(s.binary_search(100), Ok(3));
        assert_eq!(s.remove(0), i64::MIN);
        // Never narrowed back.
        assert_eq!(s.width(), 8);
        assert_eq!(s.len(), 4);
        assert_eq!(s.get(3), 70_000);
        // Equality is by members, not by width.
        let narrow: IntSet = [5, 100].into_iter().collect();
        let mut wide: IntSet = [5, 100, 70_000].into_iter().collect();
        wide.remove(2);
        assert_eq!(wide.width(), 4);
        assert_eq!(narrow, wide);
        let t: IntSet = [3, 1, 2, 3, i64::from(i32::MIN)].into_iter().collect();
        assert_eq!(t.width(), 4);
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![i64::from(i32::MIN), 1, 2, 3]);
    }

    #[test]
    fn edges_of_each_width() {
        for (n, w) in [
            (i64::from(i16::MAX), 2),
            (i64::from(i16::MIN), 2),
            (i64::from(i16::MAX) + 1, 4),
            (i64::from(i32::MAX), 4),
            (i64::from(i32::MIN) - 1, 8),
            (i64::MAX, 8),
        ] {
            let s: IntSet = [n].into_iter().collect();
            assert_eq!(s.width(), w, "{n}");
            assert_eq!(s.get(0), n);
        }
    }
}
