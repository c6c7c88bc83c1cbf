//! S3-FIFO eviction order (Yang et al., SOSP 2023).
//!
//! New keys enter a small FIFO (about 10% of the entries). A key read while
//! there moves to the main FIFO when it reaches the tail, keeping its reads as
//! credit (see [`Policy::evict`]); one never read is
//! evicted, and its host remembers it in a ghost list so that a quick return
//! goes straight to main. Main is a FIFO with up to three second chances
//! (a 2-bit credit counter: a read adds two units, an overwrite sets one;
//! see [`Policy::written`]). A one-off scan of cold keys therefore only
//! churns the small queue and never touches the hot set in main, which is
//! what plain LRU gets wrong.
//!
//! We chose it over SIEVE for that scan resistance, and over W-TinyLFU
//! because a hit is a single byte update (`freq`), which the JS side does
//! through a shared view of wasm memory without calling into wasm at all.
//!
//! Each slot's `freq`, queue and the engine's slot kind share one byte (see
//! [`Policy::bits`]): a removal reads and writes all three, so one column is
//! one cache line a slot where three were three, and 1 byte where 3 were.
//!
//! A cache without a bound never evicts: it keeps each key's queue and the
//! queues' lengths (the `smallQueue` stat), but links no key into them.
//! Unlinking a key on its removal writes both neighbours' links, two
//! scattered cache lines, and a sweep of 1000 expired entries at 1M keys
//! spent about a fifth of its wasm time there (bench/churn-ab.mjs). Such a
//! cache links only its keys without a deadline, which the wheel does not
//! hold, in a list of their own ([`Policy::park`]), so that `clear` still
//! finds every key in O(keys).

use crate::list::{Links, List, NIL};
use alloc::vec::Vec;

pub(crate) const QUEUE_NONE: u8 = 0;
pub(crate) const QUEUE_SMALL: u8 = 1;
/// The slot byte: `freq` in the low bits (the JS host bumps the byte itself
/// while `byte & MAX_FREQ < MAX_FREQ`, so `freq` must be the lowest field and
/// `MAX_FREQ` its mask), the queue above it, the slot kind on top.
const QUEUE_SHIFT: u32 = 2;
const QUEUE_BITS: u8 = 3 << QUEUE_SHIFT;
const KIND_SHIFT: u32 = crate::protocol::SLOT_KIND_SHIFT;
const OWN_GRACE: u8 = crate::protocol::SLOT_OWN_GRACE;
/// The small queue's share of the entries is `1 / SMALL_SHARE` (S3-FIFO's
/// 10%): under it, a main tail with read credit spends a unit instead of the
/// small queue giving up its tail.
const SMALL_SHARE: u32 = 10;
pub(crate) const QUEUE_MAIN: u8 = 2;
/// The `freq` column's ceiling; the JS host bumps it too.
pub(crate) const MAX_FREQ: u8 = crate::protocol::FREQ_MAX;

/// A key picked for eviction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Victim {
    pub slot: u32,
    /// Left the small queue unread: the host should remember it as a ghost.
    pub ghost: bool,
}

#[derive(Default, Clone, Debug)]
pub(crate) struct Policy {
    /// The queues. In a cache that never evicts, `len` counts the keys
    /// tagged with the queue, and none is linked.
    small: List,
    main: List,
    /// The keys of a cache that never evicts that the wheel does not hold
    /// (see [`Policy::park`]); empty in one that evicts.
    parked: List,
    /// Whether the cache has a bound: only then are its keys linked in
    /// `small` and `main`.
    pub evicts: bool,
    links: Links,
    /// One byte per slot: its saturating read counter (`freq`, bits 0-1,
    /// bumped by JS on hits through a shared view), its queue (bits 2-3) and
    /// the engine's slot kind (bits 4-6, a `protocol::SLOT_*`). All zero: a
    /// free slot, in no queue, never read.
    pub bits: Vec<u8>,
}

impl Policy {
    pub const EMPTY: Policy = Policy {
        small: List::EMPTY,
        main: List::EMPTY,
        parked: List::EMPTY,
        evicts: false,
        links: Links::EMPTY,
        bits: Vec::new(),
    };

    pub fn grow(&mut self, len: usize) {
        self.links.grow(len);
        self.bits.resize(len, 0);
    }

    /// Room for `extra` more slots, so a following `grow` cannot fail.
    pub fn try_reserve(&mut self, extra: usize) -> Result<(), alloc::collections::TryReserveError> {
        self.links.try_reserve(extra)?;
        self.bits.try_reserve_exact(extra)
    }

    fn queue(&self, s: u32) -> u8 {
        (self.bits[s as usize] & QUEUE_BITS) >> QUEUE_SHIFT
    }

    /// Sets slot `s`'s queue and its `freq` to `freq`, keeping its kind.
    fn set_queue(&mut self, s: u32, queue: u8, freq: u8) {
        let b = &mut self.bits[s as usize];
        *b = (*b & !(QUEUE_BITS | MAX_FREQ)) | queue << QUEUE_SHIFT | freq;
    }

    /// Loads slot `s`'s byte, and its links if its removal reads them: a
    /// queue's (`fields`: or a field list's) (see `Engine::warm`).
    pub fn warm(&self, s: u32, fields: bool) {
        // SAFETY: as in `Links::warm`.
        unsafe { core::ptr::read_volatile(&self.bits[s as usize]) };
        if fields || self.evicts || self.parked.len != 0 {
            self.links.warm(s);
        }
    }

    pub fn freq(&self, s: u32) -> u8 {
        self.bits[s as usize] & MAX_FREQ
    }

    pub fn set_freq(&mut self, s: u32, f: u8) {
        let b = &mut self.bits[s as usize];
        *b = (*b & !MAX_FREQ) | f;
    }

    /// Slot `s`'s kind, a `protocol::SLOT_*` (the engine's `Kind`).
    pub fn kind(&self, s: u32) -> u8 {
        (self.bits[s as usize] >> KIND_SHIFT) & 7
    }

    /// Marks slot `s`'s value as having a grace of its own, or not (see
    /// `protocol::SLOT_OWN_GRACE`); the slot's next `set_kind(.., true)`
    /// clears it too.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    pub fn own_grace(&mut self, s: u32, on: bool) {
        let b = &mut self.bits[s as usize];
        *b = if on { *b | OWN_GRACE } else { *b & !OWN_GRACE };
    }

    /// Sets slot `s`'s kind; a slot becoming free or taken (`fresh`) is in
    /// no queue and unread, so the whole byte is written.
    pub fn set_kind(&mut self, s: u32, kind: u8, fresh: bool) {
        let b = &mut self.bits[s as usize];
        let keep = if fresh { 0 } else { *b & !(7 << KIND_SHIFT) };
        *b = keep | kind << KIND_SHIFT;
    }

    pub fn insert(&mut self, s: u32, to_main: bool) {
        debug_assert_eq!(self.queue(s), QUEUE_NONE, "slot {} queued twice", s);
        self.set_queue(s, if to_main { QUEUE_MAIN } else { QUEUE_SMALL }, 0);
        let list = if to_main { &mut self.main } else { &mut self.small };
        if self.evicts {
            self.links.push_front(list, s);
        } else {
            list.len += 1;
        }
    }

    /// Gives a cache that never evicted a bound: links each queued key into
    /// its queue, in slot order, and forgets the parked list. A restored
    /// engine gets its bound after its keys (its columns grow with them, not
    /// to the bound), which go to main in slot order (`restore_slot`): so
    /// the queues are as if the bound had come first.
    pub fn bound(&mut self) {
        if self.evicts {
            return;
        }
        self.evicts = true;
        (self.small, self.main, self.parked) = (List::EMPTY, List::EMPTY, List::EMPTY);
        for s in 0..self.bits.len() as u32 {
            match self.queue(s) {
                QUEUE_SMALL => self.links.push_front(&mut self.small, s),
                QUEUE_MAIN => self.links.push_front(&mut self.main, s),
                _ => {}
            }
        }
    }

    /// Whether key `s` is in the parked list.
    fn is_parked(&self, s: u32) -> bool {
        // (With none parked, its links are not read: a line less a removal.)
        self.parked.len != 0 && (self.links.prev(s) != NIL || self.parked.head == s)
    }

    /// In a cache that never evicts, links key `s` (a field is in no queue:
    /// its links are its hash's list's), which the wheel does not hold (it
    /// has no deadline), in the parked list if it is not there yet, so that
    /// `clear` finds it. A key that gets a deadline later stays there until
    /// it is removed: it is then in the wheel as well, which does no harm.
    pub fn park(&mut self, s: u32) {
        if !self.evicts && self.queue(s) != QUEUE_NONE && !self.is_parked(s) {
            self.links.push_front(&mut self.parked, s);
        }
    }

    /// A read of slot `s`: two units of credit, up to `MAX_FREQ` (a write
    /// gives one, see [`written`](Self::written)).
    pub fn hit(&mut self, s: u32) {
        let b = &mut self.bits[s as usize];
        let f = *b & MAX_FREQ;
        if f < MAX_FREQ {
            *b += if f == MAX_FREQ - 1 { 1 } else { 2 };
        }
    }

    /// A new value in plain slot `s` (an overwrite): one unit of credit,
    /// whatever it had. The contract's eviction keeps an entry read after
    /// another was last written over that one, and LRU's users expect a
    /// rewritten key to outlast keys untouched since before. A write as a
    /// read (one unit more, as until this) let a key read, then rewritten,
    /// outlast a key read after the rewrite (`maxEntries: 2`: `a`, `b`; get
    /// `b`; set `b`; get `a`; set `c` evicted `a`, where LRU evicts `b`);
    /// a write taking all credit made rewritten keys go before untouched
    /// ones. With reads worth two units, every read since a write outranks
    /// it: no such eviction in 18,000 of a random checker's
    /// (`maxEntries` 2-7), and the hit ratios moved by at most 0.15 points
    /// (`bench/policy.mjs`: (c) and (d) at 100k down 0.10-0.15, (j) up
    /// 0.07).
    pub fn written(&mut self, s: u32) {
        let b = &mut self.bits[s as usize];
        *b = (*b & !MAX_FREQ) | 1;
    }

    /// A write to one of hash `h`'s fields: a write of the key, as a plain
    /// overwrite is (one unit, whatever it had). Keeping the credit its
    /// fields' reads earned (as until this) let a hash read, then written,
    /// outlast a key read after that write (`maxEntries: 2`: hset `old`,
    /// hget it twice, hset it again; hset and hget `hot`; a third key
    /// evicted `hot`), against the contract's "keep a recently read entry
    /// over one never read since it was written" (a probe: 359 of 2,000
    /// single-field seeds).
    pub fn touched(&mut self, h: u32) {
        self.written(h);
    }

    pub fn remove(&mut self, s: u32) {
        let q = self.queue(s);
        if q == QUEUE_NONE {
            return;
        }
        self.set_queue(s, QUEUE_NONE, 0);
        let mut list = if q == QUEUE_SMALL { &mut self.small } else { &mut self.main };
        if !self.evicts {
            // Counted only; linked if parked.
            list.len -= 1;
            if !self.is_parked(s) {
                return;
            }
            list = &mut self.parked;
        }
        self.links.unlink(list, s);
    }

    /// The links, for lists of slots that are never queued (hash fields).
    pub fn links(&self) -> &Links {
        &self.links
    }

    pub fn links_mut(&mut self) -> &mut Links {
        &mut self.links
    }

    pub fn len(&self) -> u32 {
        self.small.len + self.main.len
    }

    pub fn small_len(&self) -> u32 {
        self.small.len
    }

    /// Picks the next key to evict and takes it out of the queues. `keep` is a
    /// key that must survive (the one being written); it gets another lap.
    ///
    /// The contract keeps a recently read entry over one never read since it
    /// was written. A key read in the small queue carries its read count into
    /// main as credit, and a main key with credit is never evicted while the
    /// small queue still has keys to offer: when small is under its 10% share
    /// and main's tail still has credit, that tail spends one unit for each
    /// key small gives up, promoted or evicted (so main keeps aging) and the
    /// victim comes from small. Only a main key whose credit a full lap has
    /// spent, i.e. one not read recently, is evicted ahead of unread small
    /// keys. (When every key has been read, the eviction that must take one
    /// of them promotes small whole and laps main: every credit is spent at
    /// once, and keys read once then go before newer unread ones, about
    /// small's share of them. API.md says so.)
    /// Amortized O(1): every lap either evicts, promotes or spends a credit.
    pub fn evict(&mut self, keep: Option<u32>) -> Option<Victim> {
        let total = self.len();
        let keep_len = keep.map_or(0, |k| u32::from(self.queue(k) != QUEUE_NONE));
        if total <= keep_len {
            return None;
        }
        loop {
            let credit = |p: &Self, s: u32| p.freq(s) > 0 || Some(s) == keep;
            let tail_credit = self.main.len > 0 && credit(self, self.main.tail);
            let share = self.small.len * SMALL_SHARE >= total || self.main.len == 0;
            let from_small = self.small.len > 0 && (share || tail_credit);
            if from_small && !share {
                let s = self.links.pop_back(&mut self.main).expect("non-empty main");
                self.spend(s);
                self.links.push_front(&mut self.main, s);
            }
            if from_small {
                let s = self.links.pop_back(&mut self.small).expect("non-empty small");
                if credit(self, s) {
                    self.set_queue(s, QUEUE_MAIN, self.freq(s));
                    self.links.push_front(&mut self.main, s);
                    continue;
                }
                self.set_queue(s, QUEUE_NONE, self.freq(s));
                return Some(Victim { slot: s, ghost: true });
            }
            let s = self.links.pop_back(&mut self.main).expect("non-empty main");
            if credit(self, s) {
                self.spend(s);
                self.links.push_front(&mut self.main, s);
                if Some(s) == keep && self.main.len == 1 && self.small.len == 0 {
                    return None;
                }
                continue;
            }
            self.set_queue(s, QUEUE_NONE, self.freq(s));
            return Some(Victim { slot: s, ghost: false });
        }
    }

    /// One unit of slot `s`'s read credit, if it has any.
    fn spend(&mut self, s: u32) {
        if self.freq(s) > 0 {
            self.bits[s as usize] -= 1;
        }
    }

    /// Checks the queues' links, lengths and tags; returns the queued keys
    /// and the linked ones.
    #[cfg(any(debug_assertions, feature = "invariants"))]
    pub fn check(&self) -> core::result::Result<(Vec<u32>, Vec<u32>), alloc::string::String> {
        use alloc::format;
        let mut linked = Vec::new();
        for (list, tag) in [(&self.small, QUEUE_SMALL), (&self.main, QUEUE_MAIN)] {
            let (mut s, mut n, mut prev) = (list.head, 0u32, crate::list::NIL);
            while s != crate::list::NIL {
                if self.queue(s) != tag {
                    return Err(format!("slot {s} in queue {tag} is tagged {}", self.queue(s)));
                }
                if self.links.prev(s) != prev {
                    return Err(format!("slot {s}: broken back link in queue {tag}"));
                }
                n += 1;
                if n > list.len {
                    return Err(format!("queue {tag} longer than its length {}", list.len));
                }
                linked.push(s);
                prev = s;
                s = self.links.next(s);
            }
            // Without a bound, `len` counts the tagged keys, none linked.
            let tagged = self.bits.iter().filter(|&&b| (b & QUEUE_BITS) >> QUEUE_SHIFT == tag).count() as u32;
            if !self.evicts && tagged == list.len && n == 0 && list.tail == NIL {
                continue;
            }
            if n != list.len || list.tail != prev {
                return Err(format!(
                    "queue {tag}: {n} linked, length {}, tail mismatch {}",
                    list.len,
                    list.tail != prev
                ));
            }
        }
        let (mut s, mut prev, mut n) = (self.parked.head, NIL, 0);
        while s != NIL {
            if self.queue(s) == QUEUE_NONE || self.links.prev(s) != prev || n >= self.bits.len() {
                return Err(format!("parked slot {s}: untagged, broken back link or a loop"));
            }
            linked.push(s);
            n += 1;
            (prev, s) = (s, self.links.next(s));
        }
        if n != self.parked.len as usize || self.parked.tail != prev || self.evicts && n != 0 {
            return Err(format!("{n} parked slots linked, {:?}", self.parked));
        }
        let tagged: Vec<u32> = (0..self.bits.len() as u32).filter(|&s| self.queue(s) != QUEUE_NONE).collect();
        if self.evicts && linked.len() != tagged.len() {
            return Err(format!("{} slots tagged as queued, {} in the queues", tagged.len(), linked.len()));
        }
        Ok((tagged, linked))
    }

    /// A linked key, if any (the small queue's oldest first, or a parked
    /// one): `clear` removes them one by one.
    pub fn any(&self) -> Option<u32> {
        let s = if !self.evicts {
            self.parked.tail
        } else if self.small.len > 0 {
            self.small.tail
        } else {
            self.main.tail
        };
        (s != NIL).then_some(s)
    }

    pub fn memory(&self) -> usize {
        self.links.memory() + self.bits.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(n: usize) -> Policy {
        let mut p = Policy { evicts: true, ..Policy::EMPTY };
        p.grow(n);
        p
    }

    #[test]
    fn unread_small_entries_go_first_and_become_ghosts() {
        let mut p = policy(20);
        for s in 0..10 {
            p.insert(s, false);
        }
        p.hit(0);
        let v = p.evict(None).unwrap();
        assert_eq!(v, Victim { slot: 1, ghost: true }, "0 was read, so 1 is the oldest unread");
        assert_eq!(p.queue(0), QUEUE_MAIN);
    }

    #[test]
    fn a_scan_does_not_flush_the_main_queue() {
        let mut p = policy(2000);
        // 100 hot keys, read once each, promoted to main.
        for s in 0..100 {
            p.insert(s, false);
            p.hit(s);
        }
        let mut held: Vec<u32> = (0..100).collect();
        // A scan of 1000 cold keys through a cache of 100.
        for s in 100..1100 {
            let v = p.evict(None).unwrap();
            held.retain(|&h| h != v.slot);
            p.insert(s, false);
            held.push(s);
            // Hot keys keep being read now and then.
            if s % 10 == 0 {
                for h in 0..100 {
                    if p.queue(h) != QUEUE_NONE {
                        p.hit(h);
                    }
                }
            }
        }
        let hot_left = (0..100).filter(|&h| p.queue(h) != QUEUE_NONE).count();
        assert!(hot_left >= 80, "only {hot_left} of 100 hot keys survived the scan");
    }

    #[test]
    fn a_scan_never_evicts_a_read_key_before_an_unread_one() {
        // 100 keys written, 95 of them read, then a one-off scan of unread
        // keys. The first evictions promote the 95 and leave small under its
        // share; the old code then took main's tail (a read key whose count
        // promotion had reset) while unread keys sat in small.
        let mut p = policy(400);
        for s in 0..100 {
            p.insert(s, false);
        }
        for s in 5..100 {
            p.hit(s);
        }
        let mut evicted = vec![];
        for s in 100..190 {
            let v = p.evict(None).unwrap();
            evicted.push(v.slot);
            p.insert(s, false);
        }
        let read_lost: Vec<u32> = evicted.iter().copied().filter(|&s| (5..100).contains(&s)).collect();
        assert!(read_lost.is_empty(), "read keys {read_lost:?} evicted before unread ones ({evicted:?})");
        assert_eq!(p.len(), 100);
    }

    #[test]
    fn the_slot_byte_keeps_kind_queue_and_freq_apart() {
        use crate::protocol::{SLOT_FIELD, SLOT_PLAIN};
        let mut p = policy(4);
        p.set_kind(0, SLOT_PLAIN, true);
        p.insert(0, false);
        for _ in 0..10 {
            p.hit(0);
        }
        assert_eq!((p.kind(0), p.queue(0), p.freq(0)), (SLOT_PLAIN, QUEUE_SMALL, MAX_FREQ), "freq saturates");
        // What the JS host does on a read: +1 while the freq bits are under
        // their mask, never into the queue's.
        assert_eq!(p.bits[0] & MAX_FREQ, MAX_FREQ);
        p.set_kind(1, SLOT_FIELD, true);
        p.insert(1, true);
        p.set_freq(1, 2);
        // 0 moves to main with its credit; both spend a unit a lap until
        // 1, with less, runs out.
        assert_eq!(p.evict(None).map(|v| v.slot), Some(1));
        assert_eq!((p.kind(1), p.queue(1), p.freq(1)), (SLOT_FIELD, QUEUE_NONE, 0));
        assert_eq!((p.kind(0), p.queue(0), p.freq(0)), (SLOT_PLAIN, QUEUE_MAIN, 1));
        p.remove(0);
        assert_eq!((p.kind(0), p.queue(0), p.freq(0)), (SLOT_PLAIN, QUEUE_NONE, 0));
        p.set_kind(0, SLOT_FIELD, false);
        assert_eq!(p.bits[0], SLOT_FIELD << KIND_SHIFT);
        p.set_freq(0, 3);
        p.set_kind(0, 0, true);
        assert_eq!(p.bits[0], 0, "a slot freed or handed out is unread");
    }

    #[test]
    fn keep_is_never_evicted() {
        let mut p = policy(4);
        p.insert(0, false);
        assert_eq!(p.evict(Some(0)), None);
        p.insert(1, false);
        assert_eq!(p.evict(Some(0)).map(|v| v.slot), Some(1));
        assert_eq!(p.evict(Some(0)), None);
    }
}
