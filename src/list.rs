//! Intrusive doubly-linked lists over slot indices.
//!
//! Every per-slot structure in the engine (wheel buckets, eviction queues,
//! a hash's fields) is a list of `u32` slots. Keeping the links in flat
//! columns instead of boxed nodes gives O(1) unlink with no allocation per
//! entry, and one `Links` can hold many disjoint lists.

use alloc::vec::Vec;

/// The "no slot" sentinel (the hosts see it too).
pub(crate) use crate::protocol::NIL;

/// Head, tail and length of one list whose links live in a [`Links`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct List {
    pub head: u32,
    pub tail: u32,
    pub len: u32,
}

impl Default for List {
    fn default() -> Self {
        List { head: NIL, tail: NIL, len: 0 }
    }
}

impl List {
    pub const EMPTY: List = List { head: NIL, tail: NIL, len: 0 };

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A `[next, prev]` pair per slot. A slot is in at most one list of a given
/// `Links` at a time.
///
/// One column of pairs, not a `next` and a `prev` column: unlinking a slot
/// reads both of its links and writes one of each neighbour's, so with the
/// pair together that is one cache line per slot touched instead of two (a
/// sweep at 1M entries misses the cache on nearly every slot it visits).
///
/// Stored as a flat `Vec<u32>` (`next` at `2s`, `prev` at `2s + 1`) rather
/// than a `Vec<[u32; 2]>`: the wasm then shares the growth code of the other
/// `u32` columns (a column of pairs measured +115 B in the download).
#[derive(Default, Clone, Debug)]
pub(crate) struct Links {
    pair: Vec<u32>,
}

const NEXT: usize = 0;
const PREV: usize = 1;

fn at(s: u32) -> usize {
    s as usize * 2
}

// The one-load accessors are `#[inline(always)]`: the wasm build's LLVM
// inline threshold is 0 (see the Makefile), which left each a call with its
// own bounds check; inlined, the download is 29 B smaller and a sweep of 100k
// expired entries ~12% faster (interleaved CPU-time A/B, 6 pairs).
impl Links {
    pub const EMPTY: Links = Links { pair: Vec::new() };

    pub fn grow(&mut self, len: usize) {
        self.pair.resize(len * 2, NIL);
    }

    /// Room for `extra` more slots, or an error and no change in length.
    pub fn try_reserve(&mut self, extra: usize) -> Result<(), alloc::collections::TryReserveError> {
        self.pair.try_reserve_exact(extra * 2)
    }

    /// Slot `s`'s `[next, prev]` (one load for an owner that needs both).
    #[inline(always)]
    pub fn pair(&self, s: u32) -> [u32; 2] {
        let i = at(s);
        [self.pair[i + NEXT], self.pair[i + PREV]]
    }

    /// Sets both of slot `s`'s links (for an owner that keeps its lists'
    /// ends itself).
    #[inline(always)]
    pub fn set_pair(&mut self, s: u32, next: u32, prev: u32) {
        let i = at(s);
        self.pair[i + NEXT] = next;
        self.pair[i + PREV] = prev;
    }

    /// Loads slot `s`'s links (see `Engine::warm`).
    pub fn warm(&self, s: u32) {
        // SAFETY: a reference into the column; a volatile read, so that the
        // load stays although its value is unused.
        unsafe { core::ptr::read_volatile(&self.pair[at(s)]) };
    }

    #[inline(always)]
    pub fn next(&self, s: u32) -> u32 {
        self.pair[at(s) + NEXT]
    }

    /// Sets the `next` link (for an owner that keeps its lists' ends itself,
    /// or threads a list of its own through a slot in no list).
    #[inline(always)]
    pub fn set_next(&mut self, s: u32, v: u32) {
        self.pair[at(s) + NEXT] = v;
    }

    #[inline(always)]
    pub fn prev(&self, s: u32) -> u32 {
        self.pair[at(s) + PREV]
    }

    /// Sets the `prev` link (for an owner that keeps its lists' ends itself).
    #[inline(always)]
    pub fn set_prev(&mut self, s: u32, v: u32) {
        self.pair[at(s) + PREV] = v;
    }

    pub fn push_front(&mut self, list: &mut List, s: u32) {
        self.set_pair(s, list.head, NIL);
        if list.head != NIL {
            self.set_prev(list.head, s);
        } else {
            list.tail = s;
        }
        list.head = s;
        list.len += 1;
    }

    pub fn unlink(&mut self, list: &mut List, s: u32) {
        let [n, p] = self.pair(s);
        if p != NIL {
            self.set_next(p, n);
        } else {
            list.head = n;
        }
        if n != NIL {
            self.set_prev(n, p);
        } else {
            list.tail = p;
        }
        self.set_pair(s, NIL, NIL);
        list.len -= 1;
    }

    pub fn pop_back(&mut self, list: &mut List) -> Option<u32> {
        let t = list.tail;
        if t == NIL {
            return None;
        }
        self.unlink(list, t);
        Some(t)
    }

    #[cfg(test)] // only the tests take a list's head now
    pub fn pop_front(&mut self, list: &mut List) -> Option<u32> {
        let h = list.head;
        if h == NIL {
            return None;
        }
        self.unlink(list, h);
        Some(h)
    }

    pub fn memory(&self) -> usize {
        self.pair.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(l: &Links, list: &List) -> Vec<u32> {
        let mut out = vec![];
        let mut s = list.head;
        while s != NIL {
            out.push(s);
            s = l.next(s);
        }
        out
    }

    #[test]
    fn push_unlink_pop_keep_order_and_len() {
        let mut l = Links::default();
        l.grow(8);
        let mut a = List::default();
        for s in [1, 2, 3, 4] {
            l.push_front(&mut a, s);
        }
        assert_eq!(collect(&l, &a), vec![4, 3, 2, 1]);
        l.unlink(&mut a, 3);
        assert_eq!(collect(&l, &a), vec![4, 2, 1]);
        assert_eq!(l.pop_back(&mut a), Some(1));
        assert_eq!(l.pop_front(&mut a), Some(4));
        assert_eq!((a.head, a.tail, a.len), (2, 2, 1));
        assert_eq!(l.pop_back(&mut a), Some(2));
        assert!(a.is_empty());
        assert_eq!(l.pop_back(&mut a), None);
    }

    #[test]
    fn a_pair_is_next_then_prev() {
        let mut l = Links::default();
        l.grow(3);
        let mut a = List::default();
        for s in [0, 1, 2] {
            l.push_front(&mut a, s);
        }
        assert_eq!(l.pair(1), [l.next(1), l.prev(1)]);
        assert_eq!(l.pair(1), [0, 2]);
        l.set_pair(2, 7, 8);
        assert_eq!((l.next(2), l.prev(2)), (7, 8));
        assert_eq!((l.next(1), l.prev(1), l.next(0)), (0, 2, NIL), "neighbours' links untouched");
    }
}
