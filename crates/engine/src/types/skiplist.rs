//! The ordered index of a big sorted set: Redis's zskiplist (William Pugh's skip list with a
//! span on every forward link, so a node's rank is the sum of the spans walked to reach it).
//! Nodes live in one arena `Vec` and link by index; freed slots are reused.
//!
//! Order is by (score, member), scores compared as doubles (so -0 == 0) and members as bytes.
//! Every search is a descent from the highest level, O(log n) expected.

use super::Bytes;

/// Redis's ZSKIPLIST_MAXLEVEL: enough for 2^64 elements at P = 1/4.
const MAX_LEVEL: usize = 32;
/// No node (a null forward or backward link).
pub(crate) const NIL: u32 = u32::MAX;
/// The header node: it holds no element, only the first link of every level.
const HEAD: u32 = 0;

#[derive(Debug, Clone, Copy)]
struct Level {
    forward: u32,
    /// Elements skipped by following `forward` (counting the node it lands on).
    span: u32,
}

#[derive(Debug, Clone)]
struct Node {
    member: Bytes,
    score: f64,
    backward: u32,
    levels: Vec<Level>,
}

/// (score, member) strictly before (score2, member2).
#[inline]
pub(crate) fn before(score: f64, member: &[u8], score2: f64, member2: &[u8]) -> bool {
    score < score2 || (score == score2 && member < member2)
}

#[derive(Debug, Clone)]
pub struct SkipList {
    nodes: Vec<Node>,
    free: Vec<u32>,
    tail: u32,
    /// Levels in use (at least 1).
    level: usize,
    len: usize,
    rng: u64,
}

impl Default for SkipList {
    fn default() -> Self {
        Self::new()
    }
}

impl SkipList {
    pub fn new() -> Self {
        let head = Node {
            member: Box::default(),
            score: 0.0,
            backward: NIL,
            levels: vec![Level { forward: NIL, span: 0 }; MAX_LEVEL],
        };
        Self { nodes: vec![head], free: Vec::new(), tail: NIL, level: 1, len: 0, rng: 0x9E37_79B9_7F4A_7C15 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A level for a new node: 1, then one more with probability 1/4 each time (Redis's
    /// zslRandomLevel). The generator is seeded, so a run replays exactly.
    fn random_level(&mut self) -> usize {
        let mut level = 1;
        loop {
            // xorshift64*
            self.rng ^= self.rng >> 12;
            self.rng ^= self.rng << 25;
            self.rng ^= self.rng >> 27;
            let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32;
            if (r & 0xFFFF) < 0xFFFF / 4 && level < MAX_LEVEL {
                level += 1;
            } else {
                return level;
            }
        }
    }

    #[inline]
    fn fwd(&self, x: u32, i: usize) -> u32 {
        self.nodes[x as usize].levels[i].forward
    }

    #[inline]
    fn span(&self, x: u32, i: usize) -> u32 {
        self.nodes[x as usize].levels[i].span
    }

    /// Member and score of a node (not the header).
    #[inline]
    pub(crate) fn entry(&self, x: u32) -> (&[u8], f64) {
        let n = &self.nodes[x as usize];
        (&n.member, n.score)
    }

    /// The first node, NIL when empty.
    pub(crate) fn first(&self) -> u32 {
        self.fwd(HEAD, 0)
    }

    pub(crate) fn last(&self) -> u32 {
        self.tail
    }

    pub(crate) fn next(&self, x: u32) -> u32 {
        self.fwd(x, 0)
    }

    pub(crate) fn prev(&self, x: u32) -> u32 {
        self.nodes[x as usize].backward
    }

    fn alloc(&mut self, member: Bytes, score: f64, level: usize) -> u32 {
        let node = Node { member, score, backward: NIL, levels: vec![Level { forward: NIL, span: 0 }; level] };
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Inserts an element known not to be present.
    pub fn insert(&mut self, member: Bytes, score: f64) {
        debug_assert!(!score.is_nan());
        let mut update = [HEAD; MAX_LEVEL];
        let mut rank = [0u32; MAX_LEVEL];
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            rank[i] = if i == self.level - 1 { 0 } else { rank[i + 1] };
            loop {
                let f = self.fwd(x, i);
                if f == NIL {
                    break;
                }
                let n = &self.nodes[f as usize];
                if !before(n.score, &n.member, score, &member) {
                    break;
                }
                rank[i] += self.span(x, i);
                x = f;
            }
            update[i] = x;
        }
        let level = self.random_level();
        if level > self.level {
            for i in self.level..level {
                rank[i] = 0;
                update[i] = HEAD;
                self.nodes[HEAD as usize].levels[i].span = self.len as u32;
            }
            self.level = level;
        }
        let new = self.alloc(member, score, level);
        for i in 0..level {
            let u = update[i] as usize;
            let Level { forward, span } = self.nodes[u].levels[i];
            self.nodes[new as usize].levels[i] = Level { forward, span: span - (rank[0] - rank[i]) };
            self.nodes[u].levels[i] = Level { forward: new, span: (rank[0] - rank[i]) + 1 };
        }
        for (i, &u) in update.iter().enumerate().take(self.level).skip(level) {
            self.nodes[u as usize].levels[i].span += 1;
        }
        self.nodes[new as usize].backward = if update[0] == HEAD { NIL } else { update[0] };
        let next = self.fwd(new, 0);
        if next != NIL {
            self.nodes[next as usize].backward = new;
        } else {
            self.tail = new;
        }
        self.len += 1;
    }

    /// Removes the element (score, member); returns its member bytes if it was there.
    pub fn remove(&mut self, score: f64, member: &[u8]) -> Option<Bytes> {
        let mut update = [HEAD; MAX_LEVEL];
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            loop {
                let f = self.fwd(x, i);
                if f == NIL {
                    break;
                }
                let n = &self.nodes[f as usize];
                if !before(n.score, &n.member, score, member) {
                    break;
                }
                x = f;
            }
            update[i] = x;
        }
        let x = self.fwd(x, 0);
        if x == NIL {
            return None;
        }
        let n = &self.nodes[x as usize];
        if n.score != score || &n.member[..] != member {
            return None;
        }
        Some(self.unlink(x, &update))
    }

    fn unlink(&mut self, x: u32, update: &[u32; MAX_LEVEL]) -> Bytes {
        for (i, &u) in update.iter().enumerate().take(self.level) {
            let u = u as usize;
            if self.nodes[u].levels[i].forward == x {
                let Level { forward, span } = self.nodes[x as usize].levels[i];
                let ul = &mut self.nodes[u].levels[i];
                ul.span = ul.span + span - 1;
                ul.forward = forward;
            } else {
                self.nodes[u].levels[i].span -= 1;
            }
        }
        let next = self.fwd(x, 0);
        let back = self.nodes[x as usize].backward;
        if next != NIL {
            self.nodes[next as usize].backward = back;
        } else {
            self.tail = back;
        }
        while self.level > 1 && self.fwd(HEAD, self.level - 1) == NIL {
            self.level -= 1;
        }
        self.len -= 1;
        let node = &mut self.nodes[x as usize];
        node.levels = Vec::new();
        self.free.push(x);
        std::mem::take(&mut node.member)
    }

    /// One ZSCAN step over the node slots from the top down (`cursor`: the slots still to
    /// visit, 0 to start): up to `count` elements, visiting at most ten times as many slots
    /// (freed ones hold none), and the cursor after them (0: done). Nodes never move, a score
    /// update reinserts the element into the slot it just left (`remove` then `insert`: the
    /// free list is LIFO), and a new element takes a freed or a new slot, so every element
    /// present for the whole scan is returned (Redis's SCAN guarantee), at O(COUNT) a call.
    pub fn scan_slots(&self, cursor: u64, count: usize) -> (Vec<(&[u8], f64)>, u64) {
        let mut top = match cursor {
            0 => self.nodes.len(),
            c => usize::try_from(c).unwrap_or(usize::MAX).min(self.nodes.len()),
        };
        let mut found = Vec::new();
        let mut visits = count.saturating_mul(10).max(1);
        // Slot 0 is the header.
        while top > 1 && found.len() < count && visits > 0 {
            top -= 1;
            visits -= 1;
            let n = &self.nodes[top];
            if !n.levels.is_empty() {
                found.push((&n.member[..], n.score));
            }
        }
        (found, if top > 1 { top as u64 } else { 0 })
    }

    /// How many leading elements satisfy `pred`, which must hold for a prefix of the order
    /// (true, ..., true, false, ...). O(log n).
    pub fn count_prefix(&self, mut pred: impl FnMut(&[u8], f64) -> bool) -> usize {
        let mut rank = 0usize;
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            loop {
                let f = self.fwd(x, i);
                if f == NIL {
                    break;
                }
                let n = &self.nodes[f as usize];
                if !pred(&n.member, n.score) {
                    break;
                }
                rank += self.span(x, i) as usize;
                x = f;
            }
        }
        rank
    }

    /// The node at 0-based `rank`, NIL past the end.
    pub(crate) fn node_at(&self, rank: usize) -> u32 {
        if rank >= self.len {
            return NIL;
        }
        // The last node needs no descent.
        if rank + 1 == self.len {
            return self.tail;
        }
        let target = rank + 1;
        let mut traversed = 0usize;
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            loop {
                let f = self.fwd(x, i);
                if f == NIL || traversed + self.span(x, i) as usize > target {
                    break;
                }
                traversed += self.span(x, i) as usize;
                x = f;
            }
            if traversed == target {
                return x;
            }
        }
        NIL
    }

    /// Checks every structural invariant (links, spans, order, length). For tests.
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut count = 0;
        let mut x = self.first();
        let mut prev = NIL;
        while x != NIL {
            assert_eq!(self.prev(x), prev);
            if prev != NIL {
                let (pm, ps) = self.entry(prev);
                let (m, s) = self.entry(x);
                assert!(before(ps, pm, s, m), "order");
            }
            prev = x;
            x = self.next(x);
            count += 1;
        }
        assert_eq!(count, self.len);
        assert_eq!(self.tail, prev);
        // Spans: the span of each link equals the distance in level 0.
        let pos = |n: u32| -> usize {
            if n == HEAD {
                return 0;
            }
            let mut i = 1;
            let mut y = self.first();
            while y != n {
                y = self.next(y);
                i += 1;
            }
            i
        };
        for i in 0..self.level {
            let mut x = HEAD;
            loop {
                let f = self.fwd(x, i);
                if f == NIL {
                    break;
                }
                assert_eq!(self.span(x, i) as usize, pos(f) - pos(x), "span at level {i}");
                x = f;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        s.as_bytes().into()
    }

    #[test]
    fn insert_remove_rank() {
        let mut l = SkipList::new();
        let mut model: Vec<(f64, String)> = Vec::new();
        let mut seed = 7u64;
        for step in 0..3000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let k = (seed >> 33) % 200;
            let score = ((seed >> 20) % 17) as f64;
            let member = format!("m{k}");
            if let Some(i) = model.iter().position(|(_, m)| *m == member) {
                let (s, m) = model.remove(i);
                assert!(l.remove(s, m.as_bytes()).is_some());
            } else {
                l.insert(b(&member), score);
                model.push((score, member));
                model.sort_by(|a, c| a.0.partial_cmp(&c.0).unwrap().then(a.1.cmp(&c.1)));
            }
            if step % 97 == 0 {
                l.check();
            }
            assert_eq!(l.len(), model.len());
            for (r, (s, m)) in model.iter().enumerate().step_by(13) {
                let x = l.node_at(r);
                assert_eq!(l.entry(x), (m.as_bytes(), *s));
                assert_eq!(l.count_prefix(|pm, ps| before(ps, pm, *s, m.as_bytes())), r);
            }
        }
        l.check();
        assert_eq!(l.node_at(l.len()), NIL);
        assert!(l.remove(100.0, b"nope").is_none());
    }
}
