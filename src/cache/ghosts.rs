//! S3-FIFO's ghost queue for the native host: keys evicted before anyone read
//! them, remembered by their hash only (a collision merely admits a new key to
//! the main queue), up to a cap of ghosts, oldest forgotten first, as the JS
//! host keeps them.

use std::collections::VecDeque;

use hashbrown::HashTable;

use super::wide;

/// Evicted keys' hashes in eviction order, and an index of the live ones.
///
/// A key that comes back loses its ghost but leaves its queue entry behind
/// (stale: skipped when it reaches the front, and dropped in bulk once stale
/// entries are most of the queue), so the cap counts ghosts, not entries.
/// Eviction `n` sits at `order[n - head]`; the index holds each ghost's latest
/// eviction number, and reads the hash from the queue: about 10 bytes per
/// ghost (a `u32` and a control byte in the table, a `u32` in the queue: the
/// cache's 32-bit index hash, widened for the table as the key index does).
#[derive(Default)]
pub(super) struct Ghosts {
    index: HashTable<u32>,
    order: VecDeque<u32>,
    /// The eviction number of `order`'s front (wrapping).
    head: u32,
}

impl Ghosts {
    pub(super) fn len(&self) -> usize {
        self.index.len()
    }

    /// The queue position of eviction `n`.
    #[cfg(any(debug_assertions, feature = "invariants"))]
    fn at(&self, n: u32) -> usize {
        n.wrapping_sub(self.head) as usize
    }

    pub(super) fn contains(&self, h: u32) -> bool {
        let order = &self.order;
        let head = self.head;
        self.index.find(wide(h), |&n| order.get(n.wrapping_sub(head) as usize) == Some(&h)).is_some()
    }

    /// Remembers an eviction of the key with hash `h`, then forgets the
    /// oldest ghosts beyond `cap`.
    pub(super) fn remember(&mut self, h: u32, cap: usize) {
        let n = self.head.wrapping_add(self.order.len() as u32);
        self.order.push_back(h);
        let (order, head) = (&self.order, self.head);
        let own = |&m: &u32| order.get(m.wrapping_sub(head) as usize) == Some(&h);
        match self.index.find_mut(wide(h), own) {
            Some(m) => *m = n,
            None => {
                self.index.insert_unique(wide(h), n, |&m| wide(order[m.wrapping_sub(head) as usize]));
            }
        }
        while self.index.len() > cap {
            let Some(k) = self.order.front().copied() else { break };
            let front = self.head;
            if let Ok(e) = self.index.find_entry(wide(k), |&m| m == front) {
                e.remove();
            }
            self.order.pop_front();
            self.head = self.head.wrapping_add(1);
        }
        if self.order.len() > 2 * self.index.len() + 64 {
            self.compact();
        }
    }

    /// Forgets the ghost of a key that came back.
    pub(super) fn forget(&mut self, h: u32) {
        let (order, head) = (&self.order, self.head);
        if let Ok(e) = self.index.find_entry(wide(h), |&n| order.get(n.wrapping_sub(head) as usize) == Some(&h)) {
            e.remove();
        }
    }

    /// Drops the stale entries, renumbering the rest from `head`.
    fn compact(&mut self) {
        let (index, head) = (&mut self.index, self.head);
        let (mut old, mut new) = (head, head);
        self.order.retain(|&k| {
            let keep = match index.find_mut(wide(k), |&m| m == old) {
                Some(m) => {
                    *m = new;
                    new = new.wrapping_add(1);
                    true
                }
                None => false,
            };
            old = old.wrapping_add(1);
            keep
        });
    }

    /// Each ghost names its own, latest queue entry, found again by its hash.
    #[cfg(any(debug_assertions, feature = "invariants"))]
    pub(super) fn check(&self) -> Result<(), String> {
        // Each hash's latest queue position, in one pass (O(queue)).
        let mut latest = std::collections::HashMap::with_capacity(self.order.len());
        for (i, &h) in self.order.iter().enumerate() {
            latest.insert(h, i);
        }
        for &n in &self.index {
            let Some(&h) = self.order.get(self.at(n)) else {
                return Err(format!("a ghost names queue entry {n}, past the queue"));
            };
            let found = self.index.find(wide(h), |&m| self.order.get(self.at(m)) == Some(&h));
            if found != Some(&n) {
                return Err(format!("ghost {h:x} names entry {n}, but its hash finds {found:?}"));
            }
            if latest.get(&h) != Some(&self.at(n)) {
                return Err(format!("ghost {h:x} names entry {n}, not its latest"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
impl Ghosts {
    /// Queue entries, stale ones included.
    pub(super) fn queued(&self) -> usize {
        self.order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Ghosts;

    #[test]
    fn the_cap_counts_ghosts_and_forgets_the_oldest() {
        let mut g = Ghosts::default();
        for h in 1..=3 {
            g.remember(h, 3);
        }
        g.forget(2); // came back: its entry is stale now
        g.remember(4, 3);
        assert_eq!(g.len(), 3, "three ghosts fit; the stale entry does not count");
        assert!(g.contains(1) && !g.contains(2) && g.contains(3) && g.contains(4));
        g.remember(5, 3); // over the cap: the oldest ghost goes, past the stale entry
        assert!(!g.contains(1) && g.contains(3) && g.contains(4) && g.contains(5));
        g.check().unwrap();
    }

    #[test]
    fn a_key_evicted_again_keeps_only_its_latest_entry() {
        let mut g = Ghosts::default();
        g.remember(7, 2);
        g.forget(7);
        g.remember(8, 2);
        g.remember(7, 2); // evicted again: its older entry is stale
        g.check().unwrap();
        g.remember(9, 2); // forgets 8, the oldest ghost; 7's older entry must not take 7
        assert!(g.contains(7) && !g.contains(8) && g.contains(9));
        g.check().unwrap();
    }

    #[test]
    fn stale_entries_are_dropped_once_they_are_most_of_the_queue() {
        let mut g = Ghosts::default();
        for h in 0..1000u32 {
            g.remember(h, 4);
            g.forget(h);
            assert!(g.queued() <= 2 + 64 + 1, "{} entries for at most one ghost", g.queued());
            g.check().unwrap();
        }
        g.remember(5000, 4);
        assert!(g.contains(5000));
        g.check().unwrap();
    }

    #[test]
    fn eviction_numbers_may_wrap() {
        let mut g = Ghosts { head: u32::MAX - 1, ..Ghosts::default() };
        for h in 1..=5 {
            g.remember(h, 3);
        }
        assert!(!g.contains(2) && g.contains(3) && g.contains(5));
        g.check().unwrap();
    }
}
