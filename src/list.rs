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
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// `next`/`prev` columns, one pair per slot. A slot is in at most one list of
/// a given `Links` at a time.
#[derive(Default, Clone, Debug)]
pub(crate) struct Links {
    next: Vec<u32>,
    prev: Vec<u32>,
}

impl Links {
    pub fn grow(&mut self, len: usize) {
        self.next.resize(len, NIL);
        self.prev.resize(len, NIL);
    }

    /// Room for `extra` more slots, or an error and no change in length.
    pub fn try_reserve(&mut self, extra: usize) -> Result<(), alloc::collections::TryReserveError> {
        self.next.try_reserve_exact(extra)?;
        self.prev.try_reserve_exact(extra)
    }

    pub fn next(&self, s: u32) -> u32 {
        self.next[s as usize]
    }

    /// Sets the `next` link (for an owner that keeps its lists' ends itself,
    /// or threads a list of its own through a slot in no list).
    pub fn set_next(&mut self, s: u32, v: u32) {
        self.next[s as usize] = v;
    }

    pub fn prev(&self, s: u32) -> u32 {
        self.prev[s as usize]
    }

    /// Sets the `prev` link (for an owner that keeps its lists' ends itself).
    pub fn set_prev(&mut self, s: u32, v: u32) {
        self.prev[s as usize] = v;
    }

    pub fn push_front(&mut self, list: &mut List, s: u32) {
        let i = s as usize;
        self.prev[i] = NIL;
        self.next[i] = list.head;
        if list.head != NIL {
            self.prev[list.head as usize] = s;
        } else {
            list.tail = s;
        }
        list.head = s;
        list.len += 1;
    }

    pub fn unlink(&mut self, list: &mut List, s: u32) {
        let i = s as usize;
        let (p, n) = (self.prev[i], self.next[i]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            list.head = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            list.tail = p;
        }
        self.next[i] = NIL;
        self.prev[i] = NIL;
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
        (self.next.capacity() + self.prev.capacity()) * 4
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
}
