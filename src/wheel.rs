//! A hierarchical timer wheel over slot indices.
//!
//! Ticks are the engine's monotone map of times (whole milliseconds since its
//! origin for the first 2^53 ms). Level `L` has 64
//! buckets of `64^L` ticks each; eleven levels cover the whole `u64` range, so
//! there is no overflow list. An entry sits at the level of the highest 6-bit
//! group in which its tick differs from the wheel's cursor, the layout Linux
//! and Kafka use. Scheduling and cancelling are O(1); an entry moves down at
//! most ten times in its life (a cascade), so sweeping is amortized O(1) per
//! entry and costs nothing for entries that are not due.
//!
//! The wheel hands out one slot per [`Wheel::pop`] and keeps its place, so the
//! engine can stop after any number of slots and resume on the next tick:
//! that is what bounds the pause of a tick.

use crate::list::{Links, List};
use alloc::vec::Vec;

const BITS: u32 = 6;
const SLOTS: usize = 1 << BITS;
const LEVELS: usize = 11; // 6 * 11 >= 64
/// A list end's link: `END | bucket` in its first slot's `prev` and its last
/// slot's `next`. So a slot's bucket is found from either end of its list,
/// which is all that unlinking needs (only an end's removal changes the
/// bucket), and no column says where each slot is (a `u16` a slot). Slots
/// are below `END`; `NIL` (in `prev`: not scheduled) is above any end.
pub(crate) const END: u32 = 1 << 31;
use crate::list::NIL;

/// What [`Wheel::pop`] handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pop {
    /// The slot's tick has come: check it and remove or reschedule it.
    Due(u32),
    /// The slot left a coarse bucket whose span has begun: reschedule it so it
    /// lands in a finer one.
    Cascade(u32),
}

#[derive(Clone, Debug)]
pub(crate) struct Wheel {
    /// The first tick that has not been fully processed.
    cur: u64,
    /// First and last slot of each bucket (`len` unused: a bucket is empty
    /// when its head is `NIL`).
    buckets: Vec<List>,
    occupied: [u64; LEVELS],
    links: Links,
    len: usize,
    /// Nothing is due at the cursor: the last `pop` found nothing, and
    /// nothing was scheduled at the cursor since. A pop at that limit (every
    /// write at capacity sweeps twice) then skips the scan of the levels.
    quiet: bool,
    /// The bucket of the last `pop` (for `next_hint`).
    popped: usize,
}

fn group(t: u64, level: usize) -> usize {
    ((t >> (BITS as usize * level)) & (SLOTS as u64 - 1)) as usize
}

/// `t` with every group at `level` and below cleared.
fn above(t: u64, level: usize) -> u64 {
    let shift = BITS as usize * (level + 1);
    if shift >= 64 {
        0
    } else {
        (t >> shift) << shift
    }
}

impl Default for Wheel {
    fn default() -> Self {
        Wheel {
            cur: 0,
            // Allocated by the first `schedule` (or `try_reserve`): 8 KB that
            // a cache which never holds an entry should not pay.
            buckets: Vec::new(),
            occupied: [0; LEVELS],
            links: Links::default(),
            len: 0,
            quiet: false,
            popped: 0,
        }
    }
}

impl Wheel {
    /// `default()`, as a constant (`Engine::new` copies a blank engine).
    pub const EMPTY: Wheel = Wheel {
        cur: 0,
        buckets: Vec::new(),
        occupied: [0; LEVELS],
        links: Links::EMPTY,
        len: 0,
        quiet: false,
        popped: 0,
    };

    pub fn grow(&mut self, len: usize) {
        self.links.grow(len);
    }

    /// Room for `extra` more slots and the buckets, so that neither a
    /// following `grow` nor `schedule` allocates.
    pub fn try_reserve(&mut self, extra: usize) -> Result<(), alloc::collections::TryReserveError> {
        if self.buckets.is_empty() {
            self.buckets.try_reserve_exact(LEVELS * SLOTS)?;
            self.buckets.resize(LEVELS * SLOTS, List::default());
        }
        self.links.try_reserve(extra)
    }

    #[cold]
    #[inline(never)]
    fn init_buckets(&mut self) {
        self.buckets.resize(LEVELS * SLOTS, List::default());
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_scheduled(&self, s: u32) -> bool {
        self.links.prev(s) != NIL
    }

    /// Puts `s` (not currently scheduled) in the bucket for tick `t`. A tick
    /// already passed is treated as the current one.
    pub fn schedule(&mut self, s: u32, t: u64) {
        debug_assert!(!self.is_scheduled(s));
        let t = t.max(self.cur);
        let diff = t ^ self.cur;
        // Only the cursor's own tick lands in a bucket due at the cursor.
        self.quiet &= diff != 0;
        let level = if diff == 0 { 0 } else { (63 - diff.leading_zeros() as usize) / BITS as usize };
        let g = group(t, level);
        let b = level * SLOTS + g;
        if self.buckets.is_empty() {
            self.init_buckets();
        }
        let end = END | b as u32;
        let head = self.buckets[b].head;
        if head == NIL {
            self.links.set_pair(s, end, end);
            self.buckets[b].tail = s;
        } else {
            self.links.set_pair(s, head, end);
            self.links.set_prev(head, s);
        }
        self.buckets[b].head = s;
        self.occupied[level] |= 1 << g;
        self.len += 1;
    }

    /// Removes `s` from its bucket, if it is in one.
    pub fn cancel(&mut self, s: u32) {
        let [n, p] = self.links.pair(s);
        if p == NIL {
            return;
        }
        // Each side either links to a neighbour or, at an end, names the
        // bucket whose first or last slot changes.
        if p < END {
            self.links.set_next(p, n);
        } else {
            self.buckets[(p - END) as usize].head = if n < END { n } else { NIL };
        }
        if n < END {
            self.links.set_prev(n, p);
        } else {
            self.buckets[(n - END) as usize].tail = if p < END { p } else { NIL };
            if p >= END {
                let b = (p - END) as usize;
                self.occupied[b / SLOTS] &= !(1 << (b % SLOTS));
            }
        }
        self.links.set_pair(s, NIL, NIL);
        self.len -= 1;
    }

    fn take(&mut self, level: usize, g: usize) -> u32 {
        self.popped = level * SLOTS + g;
        let s = self.buckets[self.popped].head;
        self.cancel(s);
        s
    }

    /// The start tick of the earliest occupied bucket after the cursor.
    fn next_event(&self) -> Option<u64> {
        let mut best: Option<u64> = None;
        for level in 0..LEVELS {
            let g = group(self.cur, level);
            let later = if g + 1 >= SLOTS { 0 } else { !0u64 << (g + 1) };
            let mask = self.occupied[level] & later;
            if mask != 0 {
                let b = mask.trailing_zeros() as u64;
                let start = above(self.cur, level) | (b << (BITS as usize * level));
                best = Some(best.map_or(start, |x| x.min(start)));
            }
        }
        best
    }

    /// For [`Engine::next_expiry`](crate::engine::Engine): the start tick of
    /// the earliest occupied bucket at levels 1 and up, or the tick after the
    /// earliest occupied level-0 bucket if that is sooner, and the first slot
    /// of that level-0 bucket (the cursor's own included, where ticks already
    /// behind the cursor land), whose slots the caller reads exactly with
    /// [`Wheel::next_linked`]. O(levels).
    pub fn earliest(&self) -> (Option<u64>, Option<u32>) {
        let mut coarse: Option<u64> = None;
        let mut fine = None;
        for level in 0..LEVELS {
            let g = group(self.cur, level);
            // Buckets before the cursor's group are empty: the cursor only
            // moves past a bucket once it is.
            let mask = self.occupied[level] & (!0u64 << g);
            if mask != 0 {
                let b = mask.trailing_zeros() as usize;
                let start = above(self.cur, level) | ((b as u64) << (BITS as usize * level));
                // A fine bucket's slots give their own deadlines, but a slot
                // whose deadline moved later (a read, an overwrite, a write
                // into a victim's slot) stays in it until it fires: the
                // next tick bounds the deadlines of the fine buckets after it.
                let bound = if level == 0 {
                    fine = Some(self.buckets[b].head);
                    start + 1
                } else {
                    start
                };
                coarse = Some(coarse.map_or(bound, |x| x.min(bound)));
            }
        }
        (coarse, fine)
    }

    /// The slot after `s` in its bucket, or `NIL`; for a slot in no bucket,
    /// what [`set_next_spare`](Self::set_next_spare) put there.
    // Inlined: smaller wasm too (-7 B; see `Links`).
    #[inline(always)]
    pub fn next_linked(&self, s: u32) -> u32 {
        let n = self.links.next(s);
        if n < END {
            n
        } else {
            NIL
        }
    }

    /// Links unscheduled slot `s` to `next` in a list its owner keeps (the
    /// engine's free list): a slot in no bucket does not use its link, so
    /// that list costs no column of its own.
    pub fn set_next_spare(&mut self, s: u32, next: u32) {
        debug_assert!(!self.is_scheduled(s));
        self.links.set_next(s, next);
    }

    /// Nothing is due by tick `limit`, known without a scan: [`pop`](Self::pop)
    /// at `limit` would hand out nothing.
    pub fn done_by(&self, limit: u64) -> bool {
        self.cur > limit || (self.quiet && self.cur == limit)
    }

    /// Hands out the next slot whose bucket is due at or before tick `limit`,
    /// or `None` when nothing is due (the cursor then rests on `limit`).
    pub fn pop(&mut self, limit: u64) -> Option<Pop> {
        loop {
            if self.done_by(limit) {
                return None;
            }
            // A coarse bucket whose span the cursor has entered is split first,
            // so that finer buckets hold everything due at the cursor.
            for level in (1..LEVELS).rev() {
                let g = group(self.cur, level);
                if self.occupied[level] & (1 << g) != 0 {
                    return Some(Pop::Cascade(self.take(level, g)));
                }
            }
            let g = group(self.cur, 0);
            if self.occupied[0] & (1 << g) != 0 {
                return Some(Pop::Due(self.take(0, g)));
            }
            match self.next_event() {
                Some(n) if n <= limit => {
                    self.cur = n;
                    self.quiet = false;
                }
                _ => {
                    // Everything due by `limit` is out, but the cursor stays
                    // on `limit`: a slot scheduled later at that tick (a
                    // deadline a fraction of a tick ahead) is due at the next
                    // pop at the same limit, so a purge is exact.
                    self.cur = limit.max(self.cur);
                    self.quiet = true;
                    return None;
                }
            }
        }
    }

    /// A scheduled slot, if any (`clear` removes them one by one). O(levels).
    pub fn any(&self) -> Option<u32> {
        let level = self.occupied.iter().position(|&m| m != 0)?;
        Some(self.buckets[level * SLOTS + self.occupied[level].trailing_zeros() as usize].head)
    }

    /// The slot after the one [`pop`](Self::pop) last handed out in its
    /// bucket (`NIL` if none): most likely the next one it hands out, so a
    /// caller may start loading its columns early.
    pub fn next_hint(&self) -> u32 {
        self.buckets.get(self.popped).map_or(NIL, |b| b.head)
    }

    /// Restarts the cursor (used after `clear` or when restoring).
    pub fn reset_cursor(&mut self, cur: u64) {
        debug_assert_eq!(self.len, 0);
        self.cur = cur;
    }

    pub fn memory(&self) -> usize {
        self.links.memory() + self.buckets.len() * 12
    }

    /// Checks every bucket's links, end marks and occupied bit, and the
    /// count; returns whether each slot below `n` is linked in a bucket.
    #[cfg(any(debug_assertions, feature = "invariants"))]
    pub fn check(&self, n: usize) -> core::result::Result<Vec<bool>, alloc::string::String> {
        use alloc::format;
        let mut seen = alloc::vec![false; n];
        let mut count = 0;
        for (b, list) in self.buckets.iter().enumerate() {
            let end = END | b as u32;
            let occupied = self.occupied[b / SLOTS] & (1 << (b % SLOTS)) != 0;
            if occupied != (list.head != NIL) || (list.head == NIL) != (list.tail == NIL) {
                return Err(format!("bucket {b}: occupied {occupied}, head {}, tail {}", list.head, list.tail));
            }
            let (mut s, mut prev) = (list.head, end);
            while s != NIL {
                if s as usize >= n || core::mem::replace(&mut seen[s as usize], true) {
                    return Err(format!("bucket {b} links slot {s} twice or out of range"));
                }
                if self.links.prev(s) != prev {
                    return Err(format!("bucket {b}: slot {s} links back to {}, not {prev}", self.links.prev(s)));
                }
                count += 1;
                let next = self.links.next(s);
                if next == end {
                    if list.tail != s {
                        return Err(format!("bucket {b} ends at {s}, its tail is {}", list.tail));
                    }
                    break;
                }
                if next >= END {
                    return Err(format!("bucket {b}: slot {s} links on to {next}"));
                }
                (prev, s) = (s, next);
            }
        }
        if count != self.len {
            return Err(format!("wheel length {} but {count} slots linked", self.len));
        }
        Ok(seen)
    }

    #[cfg(test)]
    fn drain(&mut self, limit: u64, ticks: &[u64]) -> Vec<u32> {
        let mut due = vec![];
        while let Some(p) = self.pop(limit) {
            match p {
                Pop::Due(s) => due.push(s),
                Pop::Cascade(s) => self.schedule(s, ticks[s as usize]),
            }
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_cursor_hides_nothing_that_is_due() {
        let ticks = [150u64, 100, 150, 200];
        let mut w = Wheel::default();
        w.grow(ticks.len());
        w.schedule(0, ticks[0]);
        assert!(w.drain(100, &ticks).is_empty(), "nothing due: the cursor rests, quiet, on 100");
        w.schedule(1, ticks[1]);
        assert_eq!(w.drain(100, &ticks), vec![1], "scheduled on the quiet cursor's own tick");
        w.schedule(2, ticks[2]);
        w.schedule(3, ticks[3]);
        let mut d = w.drain(200, &ticks);
        d.sort();
        // The cursor moves on from a quiet rest and reaches 200, the limit,
        // where slot 3 waits: the rest at 100 says nothing about 200.
        assert_eq!(d, vec![0, 2, 3]);
    }

    #[test]
    fn fires_each_slot_exactly_when_its_tick_is_reached() {
        let ticks: Vec<u64> = vec![0, 1, 63, 64, 65, 4095, 4096, 300_000, 1 << 40, u64::MAX];
        let mut w = Wheel::default();
        w.grow(ticks.len());
        for (s, &t) in ticks.iter().enumerate() {
            w.schedule(s as u32, t);
        }
        let mut fired = vec![];
        let checkpoints = [0u64, 1, 62, 63, 64, 65, 4095, 4096, 299_999, 300_000, 1 << 40, u64::MAX];
        for &limit in &checkpoints {
            let mut d = w.drain(limit, &ticks);
            d.sort();
            for &s in &d {
                assert!(ticks[s as usize] <= limit, "slot {s} fired early at {limit}");
            }
            fired.extend(d);
            // Everything at or before the limit is out.
            for (s, &t) in ticks.iter().enumerate() {
                if t <= limit {
                    assert!(fired.contains(&(s as u32)), "slot {s} (tick {t}) missed at {limit}");
                }
            }
        }
        assert_eq!(fired.len(), ticks.len());
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn cancel_removes_and_past_ticks_are_due_now() {
        let mut w = Wheel::default();
        w.grow(4);
        let ticks = [10u64, 10, 5000, 0];
        w.schedule(0, 10);
        w.schedule(1, 10);
        w.schedule(2, 5000);
        w.cancel(1);
        w.cancel(1); // idempotent
        assert_eq!(w.len(), 2);
        assert_eq!(w.drain(100, &ticks), vec![0]);
        w.schedule(3, 0); // behind the cursor: due at once
        assert_eq!(w.drain(101, &ticks), vec![3]);
        assert_eq!(w.drain(5000, &ticks), vec![2]);
    }

    #[test]
    fn unlinking_a_first_last_middle_or_only_slot_keeps_buckets_whole() {
        // No column says which bucket a slot is in: the ends carry it. Each
        // position in a list, cancelled, must leave the buckets checkable.
        let mut w = Wheel::default();
        w.grow(16);
        for s in 0..5 {
            w.schedule(s, 7); // one bucket: 4 3 2 1 0
        }
        w.schedule(5, 9); // a bucket of its own
        w.schedule(6, 5000); // a coarse one
        assert_eq!(w.check(16).unwrap().iter().filter(|&&x| x).count(), 7);
        for s in [2, 4, 0, 5] {
            // middle, first, last, only
            w.cancel(s);
            assert!(!w.is_scheduled(s));
            w.check(16).unwrap();
        }
        assert_eq!(w.len(), 3);
        assert_eq!(w.earliest().1, Some(3));
        assert_eq!(w.next_linked(3), 1);
        assert_eq!(w.next_linked(1), NIL, "the end mark reads as NIL");
        w.cancel(3);
        w.cancel(1);
        w.check(16).unwrap();
        assert_eq!(w.earliest().1, None, "the emptied bucket is no longer occupied");
        w.schedule(1, 7);
        assert_eq!(w.pop(7), Some(Pop::Due(1)));
        assert_eq!(w.pop(7), None);
        w.check(16).unwrap();
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn earliest_names_the_first_buckets() {
        use crate::list::NIL;
        let mut w = Wheel::default();
        w.grow(8);
        assert_eq!(w.earliest(), (None, None));
        w.schedule(0, 300_000);
        w.schedule(1, 5000);
        let (coarse, fine) = w.earliest();
        assert!(coarse.is_some_and(|f| f <= 5000 && f > 0), "{coarse:?}");
        assert_eq!(fine, None);
        assert_eq!(w.pop(100), None); // the cursor rests on 100
        w.schedule(2, 40); // behind the cursor: in the cursor's bucket
        w.schedule(3, 120);
        let (_, fine) = w.earliest();
        assert_eq!(fine, Some(2));
        assert_eq!(w.next_linked(2), NIL);
        assert_eq!(w.pop(100), Some(Pop::Due(2)));
        assert_eq!(w.earliest().1, Some(3));
        w.cancel(0);
        w.cancel(1);
        w.cancel(3);
        assert_eq!(w.earliest(), (None, None));
    }

    #[test]
    fn pop_can_stop_anywhere_and_resume() {
        let n = 5000u32;
        let ticks: Vec<u64> = (0..n as u64).map(|i| (i * 7919) % 100_000).collect();
        let mut w = Wheel::default();
        w.grow(n as usize);
        for s in 0..n {
            w.schedule(s, ticks[s as usize]);
        }
        let mut seen = 0;
        let mut limit = 0;
        while limit <= 100_000 {
            // Take at most 3 slots per "tick", like a tiny sweep budget.
            for _ in 0..3 {
                match w.pop(limit) {
                    Some(Pop::Due(s)) => {
                        assert!(ticks[s as usize] <= limit);
                        seen += 1;
                    }
                    Some(Pop::Cascade(s)) => w.schedule(s, ticks[s as usize]),
                    None => break,
                }
            }
            limit += 17;
        }
        seen += w.drain(u64::MAX, &ticks).len();
        assert_eq!(seen, n as usize);
    }
}
