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
//!
//! Each level-0 bucket is [`WAYS`] lists, not one, and `pop` takes from
//! them in turn. A sweep at 1M entries misses the cache on nearly every
//! slot, and in one list the next slot is known only once the current one's
//! links arrive: a chain of dependent misses, one per slot. With several
//! lists the heads of all of them are known at once, and the sweep loads
//! their lines and their successors' links together ([`Wheel::heads`],
//! [`Wheel::warm`]), WAYS pops ahead: their misses overlap (the wasm part
//! of a full-budget tick at 1M about 20% faster, bench/churn-ab.mjs).

use crate::list::Links;
use alloc::vec::Vec;

const BITS: u32 = 6;
const SLOTS: usize = 1 << BITS;
const LEVELS: usize = 11; // 6 * 11 >= 64
/// Lists per bucket (see the module documentation). Two overlap as well
/// as four or eight did (bench/churn-ab.mjs), and the heads of four would
/// make a near-empty cache's wheel 11 KB (6 KB with two).
pub(crate) const WAYS: usize = 2;
const LISTS: usize = LEVELS * SLOTS * WAYS;
/// The level-0 lists, the first ones: only they keep a tail (at `LISTS + l`;
/// see [`Wheel::schedule_back`]).
const FINE: usize = SLOTS * WAYS;

/// The first of bucket `b`'s lists and their number.
fn lists(b: usize) -> (usize, usize) {
    (b * WAYS, WAYS)
}

/// The bucket of list `l`.
fn bucket(l: usize) -> usize {
    l / WAYS
}
/// A list end's link: `END | list` in its first slot's `prev` and its last
/// slot's `next`, where bucket `b`'s lists are `b * WAYS ..`. So a slot's
/// list is found from either end of it, which is all that unlinking needs
/// (only an end's removal changes the list's head or the bucket's occupied
/// bit), and no column says where each slot is (a `u16` a slot). Slots
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
    /// The earliest tick a slot asked for that went in the cursor's bucket
    /// since the cursor last moved (overdue slots land there, clamped to
    /// it); the cursor if none did. No deadline in that bucket is earlier.
    low: u64,
    /// The first slot of each bucket's lists (`NIL`: empty), then the last
    /// slot of each level-0 list (`LISTS` on). No length: `pop` takes
    /// heads, and `cancel` finds a list's end by its mark.
    heads: Vec<u32>,
    occupied: [u64; LEVELS],
    links: Links,
    len: usize,
    /// Nothing is due at the cursor: the last `pop` found nothing, and
    /// nothing was scheduled at the cursor since. A pop at that limit (every
    /// write at capacity sweeps twice) then skips the scan of the levels.
    quiet: bool,
    /// The bucket of the last `pop` (for `heads`).
    popped: usize,
    /// Which of a bucket's lists `pop` takes from next (mod `WAYS`).
    turn: usize,
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
            low: 0,
            // Allocated by the first `schedule` (or `try_reserve`): 6 KB
            // that a cache which never holds an entry should not pay.
            heads: Vec::new(),
            occupied: [0; LEVELS],
            links: Links::default(),
            len: 0,
            quiet: false,
            popped: 0,
            turn: 0,
        }
    }
}

impl Wheel {
    /// `default()`, as a constant (`Engine::new` copies a blank engine).
    pub const EMPTY: Wheel = Wheel {
        cur: 0,
        low: 0,
        heads: Vec::new(),
        occupied: [0; LEVELS],
        links: Links::EMPTY,
        len: 0,
        quiet: false,
        popped: 0,
        turn: 0,
    };

    pub fn grow(&mut self, len: usize) {
        self.links.grow(len);
    }

    /// Room for `extra` more slots and the buckets, so that neither a
    /// following `grow` nor `schedule` allocates.
    pub fn try_reserve(&mut self, extra: usize) -> Result<(), alloc::collections::TryReserveError> {
        if self.heads.is_empty() {
            self.heads.try_reserve_exact(LISTS + FINE)?;
            self.heads.resize(LISTS + FINE, NIL);
        }
        self.links.try_reserve(extra)
    }

    #[cold]
    #[inline(never)]
    fn init_buckets(&mut self) {
        self.heads.resize(LISTS + FINE, NIL);
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
        self.put(s, t, false);
    }

    /// [`schedule`](Self::schedule), but last in its list: a slot handed
    /// out and found not yet expired goes behind the ones not yet handed
    /// out, so a sweep stopped by its cap goes on with those next time
    /// (in front, more than a cap of such slots in one bucket would hide
    /// an expired one behind them for good). Only a level-0 list has a
    /// tail: a coarse bucket's slots all leave it when its span begins.
    pub fn schedule_back(&mut self, s: u32, t: u64) {
        self.put(s, t, true);
    }

    fn put(&mut self, s: u32, t: u64, back: bool) {
        debug_assert!(!self.is_scheduled(s));
        self.low = self.low.min(t);
        let t = t.max(self.cur);
        let diff = t ^ self.cur;
        // Only the cursor's own tick lands in a bucket due at the cursor.
        self.quiet &= diff != 0;
        let level = if diff == 0 { 0 } else { (63 - diff.leading_zeros() as usize) / BITS as usize };
        let g = group(t, level);
        // The bucket's lists in turn, by count: as even as it gets.
        let (first, ways) = lists(level * SLOTS + g);
        let l = first + self.len % ways;
        if self.heads.is_empty() {
            self.init_buckets();
        }
        let end = END | l as u32;
        let head = self.heads[l];
        if head == NIL {
            self.links.set_pair(s, end, end);
            self.heads[l] = s;
            if l < FINE {
                self.heads[LISTS + l] = s;
            }
        } else if back && l < FINE {
            let tail = self.heads[LISTS + l];
            self.links.set_pair(s, end, tail);
            self.links.set_next(tail, s);
            self.heads[LISTS + l] = s;
        } else {
            self.links.set_pair(s, head, end);
            self.links.set_prev(head, s);
            self.heads[l] = s;
        }
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
        // list: its head changes, or it may empty its bucket.
        if p < END {
            self.links.set_next(p, n);
        } else {
            self.heads[(p - END) as usize] = if n < END { n } else { NIL };
        }
        if n < END {
            self.links.set_prev(n, p);
        } else {
            let l = (n - END) as usize;
            if l < FINE {
                self.heads[LISTS + l] = if p < END { p } else { NIL };
            }
            let b = bucket(l);
            if p >= END && self.first(b, 0) == NIL {
                self.occupied[b / SLOTS] &= !(1 << (b % SLOTS));
            }
        }
        self.links.set_pair(s, NIL, NIL);
        self.len -= 1;
    }

    /// The head of the next of bucket `(level, g)`'s lists in turn that is
    /// not empty (the bucket is occupied), taken out.
    fn take(&mut self, level: usize, g: usize) -> u32 {
        self.popped = level * SLOTS + g;
        let (first, ways) = lists(self.popped);
        loop {
            let s = self.heads[first + self.turn % ways];
            self.turn += 1;
            if s != NIL {
                self.cancel(s);
                return s;
            }
        }
    }

    /// The first slot of bucket `b`'s lists from list `from` on (`NIL`: none).
    fn first(&self, b: usize, from: usize) -> u32 {
        let (first, ways) = lists(b);
        let mut j = from;
        while j < ways && self.heads[first + j] == NIL {
            j += 1;
        }
        if j < ways {
            self.heads[first + j]
        } else {
            NIL
        }
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
                    fine = Some(self.first(b, 0));
                    start + 1
                } else {
                    start
                };
                coarse = Some(coarse.map_or(bound, |x| x.min(bound)));
            }
        }
        (coarse, fine)
    }

    /// The start tick of the level-0 bucket [`Wheel::earliest`] hands out,
    /// unless it is the cursor's own (where overdue slots land, whatever
    /// their deadlines): every slot of any other is due at that tick or
    /// later, so one due at it is the bucket's earliest. O(1).
    pub fn fine_start(&self) -> Option<u64> {
        let g = group(self.cur, 0);
        let mask = self.occupied[0] & (!0u64 << g);
        let b = mask.trailing_zeros() as usize;
        (mask != 0 && b != g).then(|| above(self.cur, 0) | b as u64)
    }

    /// No slot in the cursor's bucket is due before this tick (see `low`).
    /// O(1).
    pub fn cursor_floor(&self) -> u64 {
        self.low
    }

    /// The slot after `s` in its bucket (its list's, then the next lists'),
    /// or `NIL`.
    pub fn next_linked(&self, s: u32) -> u32 {
        let n = self.links.next(s);
        if n < END {
            return n;
        }
        let l = (n - END) as usize;
        let b = bucket(l);
        self.first(b, l - lists(b).0 + 1)
    }

    /// For a slot in no bucket, what [`set_next_spare`](Self::set_next_spare)
    /// put there.
    // Inlined: smaller wasm too (-7 B; see `Links`).
    #[inline(always)]
    pub fn next_spare(&self, s: u32) -> u32 {
        self.links.next(s)
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
                    self.low = n;
                    self.quiet = false;
                }
                _ => {
                    // Everything due by `limit` is out, but the cursor stays
                    // on `limit`: a slot scheduled later at that tick (a
                    // deadline a fraction of a tick ahead) is due at the next
                    // pop at the same limit, so a purge is exact.
                    if limit > self.cur {
                        (self.cur, self.low) = (limit, limit);
                    }
                    self.quiet = true;
                    return None;
                }
            }
        }
    }

    /// A scheduled slot, if any (`clear` removes them one by one). O(levels).
    pub fn any(&self) -> Option<u32> {
        let level = self.occupied.iter().position(|&m| m != 0)?;
        Some(self.first(level * SLOTS + self.occupied[level].trailing_zeros() as usize, 0))
    }

    /// The heads of the lists of the bucket [`pop`](Self::pop) last took
    /// from (`NIL` for an empty one): the next slots it hands out, most
    /// likely, so a caller may start loading their columns together.
    pub fn heads(&self) -> &[u32] {
        let (first, ways) = lists(self.popped);
        self.heads.get(first..first + ways).unwrap_or(&[])
    }

    /// Loads the links of the slot after `s` in its list (see
    /// `Engine::warm`): taking `s` out writes them, and they say which slot
    /// comes after that one. `s`'s own were loaded by the last call.
    pub fn warm(&self, s: u32) {
        let n = self.links.next(s);
        if n < END {
            self.links.warm(n);
        }
    }

    /// Restarts the cursor (used after `clear` or when restoring).
    pub fn reset_cursor(&mut self, cur: u64) {
        debug_assert_eq!(self.len, 0);
        (self.cur, self.low) = (cur, cur);
    }

    pub fn memory(&self) -> usize {
        self.links.memory() + self.heads.len() * 4
    }

    /// Checks every bucket's links, end marks and occupied bit, and the
    /// count; returns whether each slot below `n` is linked in a bucket.
    #[cfg(any(debug_assertions, feature = "invariants"))]
    pub fn check(&self, n: usize) -> core::result::Result<Vec<bool>, alloc::string::String> {
        use alloc::format;
        if self.low > self.cur {
            return Err(format!("the cursor's floor {} is past the cursor {}", self.low, self.cur));
        }
        let mut seen = alloc::vec![false; n];
        let mut count = 0;
        for (l, &head) in self.heads[..LISTS.min(self.heads.len())].iter().enumerate() {
            let (b, end) = (bucket(l), END | l as u32);
            let occupied = self.occupied[b / SLOTS] & (1 << (b % SLOTS)) != 0;
            if occupied != (self.first(b, 0) != NIL) {
                return Err(format!("bucket {b}: occupied {occupied}, first slot {}", self.first(b, 0)));
            }
            if l < FINE && (head == NIL) != (self.heads[LISTS + l] == NIL) {
                return Err(format!("list {l}: head {head}, tail {}", self.heads[LISTS + l]));
            }
            let (mut s, mut prev) = (head, end);
            while s != NIL {
                if s as usize >= n || core::mem::replace(&mut seen[s as usize], true) {
                    return Err(format!("list {l} links slot {s} twice or out of range"));
                }
                if self.links.prev(s) != prev {
                    return Err(format!("list {l}: slot {s} links back to {}, not {prev}", self.links.prev(s)));
                }
                count += 1;
                let next = self.links.next(s);
                if next == end {
                    if l < FINE && self.heads[LISTS + l] != s {
                        return Err(format!("list {l} ends at {s}, its tail is {}", self.heads[LISTS + l]));
                    }
                    break;
                }
                if next >= END {
                    return Err(format!("list {l}: slot {s} links on to {next}"));
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
        // No column says which list a slot is in: the ends carry it. Each
        // position in a list, cancelled, must leave the buckets checkable.
        let w_ = WAYS as u32;
        let n = 3 * w_;
        let mut w = Wheel::default();
        w.grow(n as usize + 2);
        for s in 0..n {
            // One bucket; slot `s` in its list `s % WAYS` (by count), so
            // list 0 is 2W, W, 0 from first to last.
            w.schedule(s, 7);
        }
        w.schedule(n, 9); // a bucket of its own
        w.schedule(n + 1, 5000); // a coarse one
        assert_eq!(w.check(n as usize + 2).unwrap().iter().filter(|&&x| x).count(), n as usize + 2);
        assert_eq!(w.next_linked(0), 2 * w_ + 1, "a list's end mark leads to the bucket's next list");
        for s in [w_, 2 * w_, 0, n] {
            // middle, first, last, only
            w.cancel(s);
            assert!(!w.is_scheduled(s));
            w.check(n as usize + 2).unwrap();
        }
        assert_eq!(w.len(), n as usize - 2);
        // List 0 is empty: the bucket's first slot is list 1's.
        assert_eq!(w.earliest().1, Some(2 * w_ + 1));
        assert_eq!(w.next_linked(2 * w_ + 1), w_ + 1);
        assert_eq!(w.next_linked(w_ + 1), 1);
        assert_eq!(w.next_linked(w_ - 1), NIL, "the last list's end mark reads as NIL");
        for s in 0..n {
            w.cancel(s);
        }
        w.check(n as usize + 2).unwrap();
        assert_eq!(w.earliest().1, None, "the emptied bucket is no longer occupied");
        w.schedule(1, 7);
        assert_eq!(w.pop(7), Some(Pop::Due(1)));
        assert_eq!(w.pop(7), None);
        w.check(n as usize + 2).unwrap();
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
