//! Capacity: whether a write fits, eviction to make room, slot allocation
//! and column growth.

use super::*;

impl Engine {
    pub(super) fn over(&self, extra_entries: u64, extra_bytes: u64) -> bool {
        self.entries.saturating_add(extra_entries) > self.max_entries
            || self.bytes.saturating_add(extra_bytes) > self.max_bytes
    }

    /// Fails if `weight` can never fit, whatever is evicted. `within` is the
    /// hash a field goes into: it is never evicted for its own field, so its
    /// other live fields count against the bounds. Its expired fields do not:
    /// `make_room` sweeps them before it evicts anything.
    pub fn check_fits(&self, weight: u32, within: Option<u32>, replacing: Option<u32>) -> Result<()> {
        if let Some(h) = within {
            // A hash's size is one u32 column, the sum of its held fields'.
            let old = replacing.map_or(0, |s| u64::from(self.wt(s as usize)));
            if u64::from(self.wt(h as usize)) - old + u64::from(weight) > u64::from(u32::MAX) {
                return Err(Error::range(
                    "sizeOf",
                    cat(&["the hash's fields would total over ", &uint(u32::MAX.into()), " bytes"]),
                ));
            }
        }
        let (e, b) = self.needs(weight, within, replacing, false);
        // The quick count includes unswept dead fields; only when it fails do
        // we pay for the exact one (bounded by this hash's fields, and then
        // the write that succeeds sweeps them).
        let (e, b) = if e > self.max_entries || b > self.max_bytes {
            self.needs(weight, within, replacing, true)
        } else {
            (e, b)
        };
        if b > self.max_bytes {
            // A field that would fit alone: its hash's other fields do not
            // leave it room (the message said the field's size never fits).
            if within.is_some() && u64::from(weight) <= self.max_bytes {
                return Err(Error::range(
                    "field",
                    cat(&["the hash would hold more bytes than maxBytes ", &uint(self.max_bytes)]),
                ));
            }
            return Err(Error::range(
                "sizeOf",
                cat(&["size ", &uint(weight.into()), " can never fit in maxBytes ", &uint(self.max_bytes)]),
            ));
        }
        if e > self.max_entries {
            return Err(Error::range(
                "field",
                cat(&["the hash would hold more fields than maxEntries ", &uint(self.max_entries)]),
            ));
        }
        Ok(())
    }

    /// Entries and bytes a write needs with nothing else left: the new value,
    /// plus (for a field) its hash's other fields, all of them or (`exact`)
    /// only the live ones.
    fn needs(&self, weight: u32, within: Option<u32>, replacing: Option<u32>, exact: bool) -> (u64, u64) {
        let (mut e, mut b) = (u64::from(replacing.is_none()), u64::from(weight));
        if let Some(h) = within {
            if exact {
                e = 1; // the field written, new or not
                let mut f = self.hashes[self.family[h as usize] as usize].head;
                while f != NIL {
                    if Some(f) != replacing && self.deadline_of(f) > self.now() {
                        e += 1;
                        b += u64::from(self.wt(f as usize));
                    }
                    f = self.policy.links().next(f);
                }
            } else {
                let old = replacing.map_or(0, |s| u64::from(self.wt(s as usize)));
                e += u64::from(self.field_count(h));
                b += u64::from(self.wt(h as usize)) - old;
            }
        }
        (e, b)
    }

    /// Makes room for `entries`/`bytes` more: expired entries first, then
    /// live ones in eviction order, never `keep`.
    /// A call stopped early (`cut`) has made part of the room: the same
    /// call made again makes the rest, the hash it was evicting first.
    pub(super) fn make_room(&mut self, entries: u64, bytes: u64, keep: Option<u32>) {
        let (mut s, mut ghost) = core::mem::replace(&mut self.evicting, (NIL, false));
        if s == NIL {
            if !self.over(entries, bytes) {
                return;
            }
            self.sweep(u64::MAX, Some((entries, bytes)));
        }
        // The hash a field goes into is never evicted for it, and a field
        // that died within the clock's current millisecond may not be due in
        // the wheel yet: its dead fields go here, so the bound `check_fits`
        // promised holds.
        if let Some(h) = keep.filter(|&h| self.kind(h) == Kind::Hash && self.over(entries, bytes)) {
            self.drop_dead_fields(h, false);
        }
        loop {
            if s == NIL {
                if self.cut || !self.over(entries, bytes) || !self.step_ok() {
                    return;
                }
                let Some(v) = self.policy.evict(keep) else {
                    return;
                };
                (s, ghost) = (v.slot, v.ghost);
            }
            let reason = if self.own_live(s, self.now()) { Reason::Evicted } else { Reason::Expired };
            let start = self.log.len();
            self.remove(s, reason);
            if self.cut {
                // A hash with fields left, out of the queues: finished first
                // when the call is made again.
                self.evicting = (s, ghost);
                return;
            }
            if ghost && reason == Reason::Evicted {
                // The key's own record is the last one `remove` wrote.
                let last = self.log.len() - LOG_STRIDE;
                debug_assert!(last >= start);
                self.log[last + LOG_FLAGS] |= LOG_GHOST;
            }
            s = NIL;
        }
    }

    pub(super) fn alloc(&mut self, kind: Kind) -> u32 {
        let s = match self.free {
            NIL => {
                if self.high as usize == self.capacity() {
                    self.grow((self.capacity() * 2).max(64));
                }
                // The wheel marks its lists' ends with the numbers from
                // `END` up (wasm memory cannot hold that many slots).
                #[cfg(not(target_arch = "wasm32"))]
                assert!(self.high < crate::wheel::END, "more slots than the wheel can number");
                // Low slots first, so the host's slot-indexed arrays stay dense.
                self.high += 1;
                self.high - 1
            }
            s => {
                self.free = self.wheel.next_spare(s);
                self.free_len -= 1;
                self.wheel.set_next_spare(s, NIL);
                s
            }
        };
        debug_assert_eq!(self.kind(s), Kind::Free, "slot {} handed out twice", s);
        self.set_kind(s, kind, true);
        s
    }

    /// An empty field list for a new hash, reusing a freed one.
    pub(super) fn new_hash_list(&mut self) -> u32 {
        let hid = self.hash_free.pop().unwrap_or_else(|| {
            self.hashes.push(List::default());
            self.hashes.len() as u32 - 1
        });
        if self.grace_on {
            self.hash_graced.resize(self.hashes.len(), 0);
            self.hash_graced[hid as usize] = 0;
        }
        hid
    }

    fn grow(&mut self, cap: usize) {
        self.times.grow(cap);
        if self.grace_on {
            self.grace_ms.resize(cap, self.grace);
        }
        // The lazy columns, once on, keep the slots' length.
        if !self.idles.is_empty() {
            self.idles.resize(cap, self.idle);
        }
        if !self.weight.is_empty() {
            self.weight.resize(cap, 0);
        }
        if !self.family.is_empty() {
            self.family.resize(cap, NIL);
        }
        self.wheel.grow(cap);
        self.policy.grow(cap);
    }

    /// Makes room, fallibly, for a call that takes up to `slots` new slots and
    /// removes up to `removals`: afterwards it allocates nothing (the columns,
    /// the hash lists and the removal log all have capacity).
    /// In wasm a failed allocation aborts the instance, so the binding calls
    /// this before every mutating call; on `Err` nothing has changed.
    ///
    /// `step` is the smallest growth, in slots (columns then double).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    pub fn try_room(
        &mut self,
        slots: usize,
        removals: usize,
        step: usize,
    ) -> core::result::Result<(), TryReserveError> {
        let len = self.capacity();
        // Freed slots are handed out first (`alloc`): only what they cannot
        // cover grows the columns. (Counting from the high-water mark, a
        // bounded cache whose jump to its bound ran out of memory could take
        // no new key ever again, not even once cleared: a probe.)
        let need = self.high as usize + slots.saturating_sub(self.free_len as usize);
        let grown = if need > len { self.try_grow(len, need, step) } else { Ok(()) };
        // Even when growth failed, which may have taken the log's block: a
        // call that only removes (a `delete` in a full memory) needs it.
        self.log.try_reserve(3 * removals)?;
        grown?;
        // Each slot is freed at most once per call, and a hash's list at most
        // once; capacity is kept, so this allocates only as the cache grows.
        self.hashes.try_reserve(slots)?;
        self.hash_free.try_reserve(self.hashes.len() + slots - self.hash_free.len())?;
        // A new hash list's grace count (`new_hash_list`).
        if self.grace_on {
            self.hash_graced.try_reserve(self.hashes.len() + slots - self.hash_graced.len())?;
        }
        Ok(())
    }

    /// `try_room`'s growth of the columns from `len` slots to at least `need`.
    fn try_grow(&mut self, len: usize, need: usize, step: usize) -> core::result::Result<(), TryReserveError> {
        // Doubling, except that a bounded cache's columns, once at 1/16 of
        // its bound (maxEntries plus the host's reserved and queued slots),
        // go to that bound at once: a cache filled to its bound holds no
        // unused columns; hashes, which take slots without being entries,
        // grow it on by doubling.
        //
        // The wasm heap never gives memory back, so what counts is its
        // peak: doubling to the bound left the last generations' blocks
        // behind, 10.4 MB at 1M entries (43.5 MB for 33.1 MB of columns;
        // the order the columns move in, clocks first and the wheel's links
        // last, swung it by 20 B an entry with the fill's size). From 1/16,
        // only the small generations are left (bench/memory.mjs at 1M, 25 B
        // of columns a slot: 26.15 MB, 1.1 MB over the columns; 1/32: 26.08,
        // 1/64: 25.56). The JS host's slot arrays follow the columns' length,
        // so both jump where the arrays alone used to (a cache that stops
        // between 1/16 and all of its bound holds the whole bound, as
        // lru-cache holds its `max` from the start).
        let bound = usize::try_from(self.max_entries.saturating_add(512)).unwrap_or(usize::MAX);
        let double = if len < bound && len * 16 >= bound { bound } else { len * 2 };
        let extra = need.max(double).max(step) - len;
        self.times.try_reserve(extra)?;
        // (Nothing for a lazy column still off: reserving would allocate it.)
        if !self.idles.is_empty() {
            self.idles.try_reserve_exact(extra)?;
        }
        if !self.weight.is_empty() {
            self.weight.try_reserve_exact(extra)?;
        }
        if !self.family.is_empty() {
            self.family.try_reserve_exact(extra)?;
        }
        if self.grace_on {
            self.grace_ms.try_reserve_exact(extra)?;
        }
        self.policy.try_reserve(extra)?;
        // (With its buckets, at the first growth: no slot is scheduled
        // before there is one.)
        self.wheel.try_reserve(extra)?;
        self.grow(len + extra);
        Ok(())
    }

    /// Slots in use (live, dead unswept, or reserved for the host).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    pub fn used(&self) -> usize {
        (self.high - self.free_len) as usize
    }
}
