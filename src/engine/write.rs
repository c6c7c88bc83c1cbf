//! Writes: resolving per-write clocks, inserting, overwriting, batched
//! inserts of reserved slots, and expiry changes.

use super::*;

impl Engine {
    // ---- writes -----------------------------------------------------------

    /// The checks of per-write options that need nothing but them: a
    /// write makes them before it looks at the cache (a WRONGTYPE comes
    /// after them), and the JS host the same ones (`parseWrite`).
    pub fn check_options(w: &Write) -> Result<()> {
        if let Some(v) = w.ttl {
            lifetime("ttl", v)?;
        }
        if let Some(v) = w.idle {
            lifetime("idle", v)?;
        }
        if let Some(t) = w.expire_at {
            finite_time("expireAt", t)?;
        }
        if w.keep_ttl && (w.ttl.is_some() || w.idle.is_some() || w.expire_at.is_some()) {
            return Err(Error::ty("keepTtl", "cannot be combined with ttl, idle or expireAt"));
        }
        if w.ttl.is_some() && w.expire_at.is_some() {
            return Err(Error::ty("expireAt", "cannot be combined with ttl"));
        }
        Ok(())
    }

    /// Turns per-write options into deadlines, validating everything.
    pub fn resolve(&self, w: &Write) -> Result<WriteClocks> {
        Self::check_options(w)?;
        let idle = w.idle.unwrap_or(self.idle);
        deadline("idle", self.now(), idle)?;
        let abs = match (w.expire_at, w.ttl) {
            (Some(t), _) => t,
            (None, Some(v)) => deadline("ttl", self.now(), v)?,
            (None, None) => deadline("ttl", self.now(), self.ttl)?,
        };
        Ok(WriteClocks { abs, idle })
    }

    pub fn clocks_live(&self, c: &WriteClocks) -> bool {
        c.abs > self.now() && self.now() + c.idle > self.now()
    }

    fn set_clocks(&mut self, s: u32, c: WriteClocks) {
        // A slot with no deadline is in no wheel bucket (an invariant), so
        // natively an overwrite of one skips the load of its wheel links, a
        // cache miss. Not in wasm, whose download size is gated: there the
        // branch cost bytes.
        #[cfg(not(target_arch = "wasm32"))]
        let scheduled = self.deadline_of(s) != NEVER;
        #[cfg(target_arch = "wasm32")]
        let scheduled = true;
        self.times.put(s, Clocks { abs: c.abs, last: self.now() });
        self.set_idle(s, c.idle);
        if scheduled {
            self.wheel.cancel(s);
        }
        self.schedule(s);
    }

    /// Writes a new top-level key. Clocks must be live (the host deletes
    /// instead); `check_fits` must have passed.
    pub fn insert(&mut self, kind: Kind, c: WriteClocks, weight: u32, to_main: bool) -> u32 {
        debug_assert!(matches!(kind, Kind::Plain | Kind::Hash));
        self.make_room(u64::from(kind == Kind::Plain), u64::from(weight), None);
        if self.cut {
            return NIL;
        }
        debug_assert!(!self.over(u64::from(kind == Kind::Plain), u64::from(weight)), "no room after make_room");
        let s = self.alloc(kind);
        let i = s as usize;
        self.set_wt(i, weight);
        if kind == Kind::Hash {
            let hid = self.new_hash_list();
            self.set_family(i, hid);
        } else {
            // (Its family is `NIL` already: a slot handed out is blank.)
            self.entries += 1;
            self.counters.inserted += 1;
        }
        self.bytes += u64::from(weight);
        self.keys += 1;
        self.policy.insert(s, to_main);
        self.set_clocks(s, c);
        s
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    /// Takes up to `n` free slots for the host to fill itself (batched
    /// inserts), growing the columns if needed.
    pub fn reserve(&mut self, n: usize, out: &mut Vec<u32>) {
        out.clear();
        for _ in 0..n {
            out.push(self.alloc(Kind::Reserved));
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    /// Links reserved slot `s`, whose `times` and `freq` the host has already
    /// written, as a plain entry of weight 0 (what `insert` would have done).
    /// The host only does this when the write needs no eviction and the
    /// clocks are live.
    pub fn commit_reserved(&mut self, s: u32, to_main: bool) {
        debug_assert_eq!(self.kind(s), Kind::Reserved);
        // Weight 0 and family `NIL` already: a slot handed out is blank.
        self.set_kind(s, Kind::Plain, false);
        self.entries += 1;
        self.keys += 1;
        self.counters.inserted += 1;
        let freq = self.policy.freq(s);
        self.policy.insert(s, to_main);
        self.policy.set_freq(s, freq);
        self.schedule(s);
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    /// [`write`](Self::write) of a new plain key with the cache's own clocks
    /// and no weight, when it must evict (live entries at `max_entries`), as
    /// one step: the victim `make_room` would pick leaves and the key takes
    /// its slot (the slot `alloc` would hand out again), which stays in its
    /// wheel bucket unless its deadline moves earlier (a later one is
    /// rescheduled lazily when the old bucket fires, as an overwrite's). No
    /// removal is logged: the host reads the victim from the slot.
    /// Returns the slot, with `SWAP_GHOST` or-ed in when the victim is to be
    /// remembered as a ghost; `NIL`, having changed nothing, in every other
    /// case, which `write` then handles: anything due in the wheel (which
    /// `make_room` sweeps first: the victim, found with nothing due, is a
    /// live plain entry), hashes, weights or grace (removals that log more
    /// than the key, or leave it behind), clocks `write` refuses or that
    /// end at once (it then writes nothing), and a deadline narrow clocks
    /// cannot hold (`write` widens them first).
    pub fn swap_in(&mut self, to_main: bool) -> u32 {
        let now = self.now();
        let limit = self.tick_of(now);
        let (abs, end) = (now + self.ttl, now + self.idle);
        let d = if abs < end { abs } else { end };
        // (An overflow, which `resolve` refuses: a sum at `NEVER` from a finite window.)
        if (abs == NEVER) != (self.ttl == NEVER)
            || (end == NEVER) != (self.idle == NEVER)
            || self.entries < self.max_entries
            || !self.wheel.done_by(limit)
            || d <= now
            // (The clock fits while narrow: the engine widens first.)
            || !self.times.fits(abs)
            || self.grace_on
            || !self.weight.is_empty()
            || !self.family.is_empty()
        {
            return NIL;
        }
        debug_assert_eq!(self.evicting.0, NIL, "a write stopped early was not made again");
        let Some(v) = self.policy.evict(None) else { return NIL };
        let s = v.slot;
        debug_assert!(self.kind(s) == Kind::Plain && self.own_live(s, now), "victim {s} is not a live plain entry");
        let old = self.deadline_of(s);
        self.times.put(s, Clocks { abs, last: now });
        self.set_idle(s, self.idle);
        if d < old {
            self.reschedule(s);
        }
        self.policy.insert(s, to_main);
        self.counters.evicted += 1;
        self.counters.inserted += 1;
        s | if v.ghost { SWAP_GHOST } else { 0 }
    }

    /// Adds a field to hash `h`.
    pub fn insert_field(&mut self, h: u32, c: WriteClocks, weight: u32) -> u32 {
        self.make_room(1, u64::from(weight), Some(h));
        if self.cut {
            return NIL;
        }
        debug_assert!(!self.over(1, u64::from(weight)), "check_fits passed, yet no room for the field");
        debug_assert_eq!(self.kind(h), Kind::Hash, "the hash survived make_room");
        let s = self.alloc(Kind::Field);
        let i = s as usize;
        self.set_wt(i, weight);
        self.family[i] = h;
        let hid = self.family[h as usize] as usize;
        // A field is never in an eviction queue, so its queue links are free
        // to chain it to its siblings.
        self.policy.links_mut().push_front(&mut self.hashes[hid], s);
        self.set_wt(h as usize, self.wt(h as usize) + weight);
        self.entries += 1;
        self.bytes += u64::from(weight);
        self.counters.inserted += 1;
        self.set_clocks(s, c);
        self.policy.touched(h);
        s
    }

    /// Overwrites a live plain entry or field; `None` keeps its clocks.
    pub fn overwrite(&mut self, s: u32, c: Option<WriteClocks>, weight: u32) {
        let i = s as usize;
        // Natively, with no bytes held every weight is 0: skip the column's
        // load (a cache miss). Not in wasm, where it cost download bytes.
        #[cfg(not(target_arch = "wasm32"))]
        let old = if self.bytes == 0 { 0 } else { self.wt(i) };
        #[cfg(target_arch = "wasm32")]
        let old = self.wt(i);
        let owner = if self.kind(s) == Kind::Field { self.family[i] } else { s };
        if weight > old {
            self.make_room(0, u64::from(weight - old), Some(owner));
            if self.cut {
                return;
            }
            debug_assert!(!self.over(0, u64::from(weight - old)), "check_fits passed, yet no room to grow");
        }
        debug_assert!(!matches!(self.kind(s), Kind::Free | Kind::Reserved), "overwrite of a dead slot");
        self.set_wt(i, weight);
        if owner != s {
            let o = owner as usize;
            self.set_wt(o, self.wt(o) - old + weight);
        }
        self.bytes = self.bytes - u64::from(old) + u64::from(weight);
        self.counters.updated += 1;
        // A new value: the default grace, not a fetch's (`set_slot_grace`).
        if self.grace_on {
            self.grace_ms[i] = self.grace;
            self.policy.own_grace(s, false);
        }
        if let Some(c) = c {
            self.set_clocks(s, c);
        }
        if owner == s {
            self.policy.written(s);
        } else {
            self.policy.touched(owner);
        }
    }

    /// [`write`](Self::write) to slot `s`, which the host knows holds a live
    /// plain entry (the native host's items say so): the same checks and
    /// result without the kind column's loads, a cache miss per overwrite.
    /// The crate API's only (not in the npm package's wasm, whose binding
    /// has no such knowledge to pass).
    #[cfg(any(feature = "std", not(target_arch = "wasm32")))]
    pub fn rewrite(&mut self, s: u32, w: &Write, weight: u32) -> Result<Option<u32>> {
        let i = s as usize;
        debug_assert!(self.kind(s) == Kind::Plain && self.is_live(s), "rewrite of slot {s}, not a live plain entry");
        let mut c = self.resolve(w)?;
        if w.keep_ttl {
            c = WriteClocks { abs: self.times.time(s, TIMES_ABS), idle: self.idle_of(s) };
        }
        self.check_fits(weight, None, Some(s))?;
        if !self.clocks_live(&c) {
            self.remove(s, Reason::Deleted);
            return Ok(None);
        }
        // `overwrite` with the slot its own owner.
        let old = if self.bytes == 0 { 0 } else { self.wt(i) };
        if weight > old {
            self.make_room(0, u64::from(weight - old), Some(s));
            debug_assert!(!self.over(0, u64::from(weight - old)), "check_fits passed, yet no room to grow");
        }
        self.set_wt(i, weight);
        self.bytes = self.bytes - u64::from(old) + u64::from(weight);
        self.counters.updated += 1;
        if !w.keep_ttl {
            self.set_clocks(s, c);
        }
        self.policy.written(s);
        Ok(Some(s))
    }

    /// [`rewrite`](Self::rewrite) of a default write (no per-write clock,
    /// weight 0) to live plain slot `s`: the cache's own clocks, resolved
    /// and checked here without building a `Write`'s `Result`s, and no room
    /// to make (the weight can only shrink). `false` (nothing changed) when
    /// the default clocks would fail or end the entry: `rewrite` then says
    /// which. The crate API's only, as `rewrite`.
    #[cfg(any(feature = "std", not(target_arch = "wasm32")))]
    pub fn rewrite_default(&mut self, s: u32) -> bool {
        let now = self.now();
        let (abs, idle) = (now + self.ttl, self.idle);
        // Overflow (a `deadline` error) or a deadline at `now`.
        if (abs == NEVER && self.ttl != NEVER)
            || (now + idle == NEVER && idle != NEVER)
            || abs <= now
            || now + idle <= now
        {
            return false;
        }
        let i = s as usize;
        if self.bytes != 0 {
            self.bytes -= u64::from(self.wt(i));
            self.set_wt(i, 0);
        }
        self.counters.updated += 1;
        self.set_clocks(s, WriteClocks { abs, idle });
        self.policy.written(s);
        true
    }

    /// Validates a write to slot `s` and resolves its clocks; `keep_ttl`
    /// takes a live entry's own.
    fn check_write(&self, s: Option<u32>, w: &Write) -> Result<WriteClocks> {
        let mut c = self.resolve(w)?;
        if w.keep_ttl {
            if let Some(s) = s.filter(|&s| self.is_live(s)) {
                c = WriteClocks { abs: self.times.time(s, TIMES_ABS), idle: self.idle_of(s) };
            }
        }
        Ok(c)
    }

    /// Writes a plain entry at `s` (`None` for a new key; the host has
    /// checked it is not a live hash). A dead `s` is removed as expired
    /// first. Returns the entry's slot, or `None` when the deadline is
    /// already past (a live old entry is then deleted). Validates everything
    /// before changing anything.
    pub fn write(&mut self, s: Option<u32>, w: &Write, weight: u32, to_main: bool) -> Result<Option<u32>> {
        let c = self.check_write(s, w)?;
        let live = s.filter(|&s| self.is_live(s));
        self.check_fits(weight, None, live)?;
        self.columns_for(weight, false, &c)?;
        Ok(match (s, live) {
            (Some(s), Some(_)) if !self.clocks_live(&c) => {
                self.remove(s, Reason::Deleted);
                None
            }
            (Some(s), Some(_)) => {
                self.overwrite(s, (!w.keep_ttl).then_some(c), weight);
                Some(s)
            }
            (old, _) => {
                if let Some(s) = old {
                    self.remove(s, Reason::Expired);
                }
                // (Stopped early, `cut`: the call is made again.)
                (!self.cut && self.clocks_live(&c)).then(|| self.insert(Kind::Plain, c, weight, to_main))
            }
        })
    }

    /// Writes field slot `f` (`None` if new) of hash `h` (`None` if the key
    /// is missing; the host has checked it is not a live plain entry). Dead
    /// slots are removed as expired first. Returns the field's slot, or
    /// `None` when its deadline is already past.
    pub fn hwrite(
        &mut self,
        h: Option<u32>,
        f: Option<u32>,
        w: &Write,
        weight: u32,
        to_main: bool,
    ) -> Result<Option<u32>> {
        let live_h = h.filter(|&h| self.is_live(h));
        let live_f = f.filter(|&f| live_h.is_some() && self.is_live(f));
        let c = self.check_write(live_f, w)?;
        self.check_fits(weight, live_h, live_f)?;
        self.columns_for(weight, true, &c)?;
        if let Some(f) = live_f {
            if self.clocks_live(&c) {
                // `is_live` walked the expired fields ahead of the hash's
                // first live one: they go now (they are due), so that the
                // next write of a field is not that walk again (a probe:
                // 1.9 ms an hset behind 199k unswept ones, removing two).
                // `f` is live: not one of them. Made again if stopped early.
                if let Some(h) = live_h {
                    self.drop_dead_fields(h, true);
                    if self.cut {
                        return Ok(None);
                    }
                }
                self.overwrite(f, (!w.keep_ttl).then_some(c), weight);
                return Ok(Some(f));
            }
            self.remove(f, Reason::Deleted);
            return Ok(None);
        }
        let mut hash = live_h;
        // The hash this call created before it stopped early, if it did
        // (`made`): then the dead slots went already, and `h` may even name
        // the new hash (its slot reused).
        let made = core::mem::replace(&mut self.made, NIL);
        match (live_h, h, f) {
            _ if made != NIL => {}
            // A dead key goes whole, fields and all.
            (None, Some(dead), _) => {
                self.remove(dead, Reason::Expired);
            }
            // A dead field goes alone; when it was the last, its key goes too.
            // (Gone already when the call is made again after stopping early.)
            (Some(hh), _, Some(f)) => {
                let last = self.field_count(hh) == 1;
                if self.remove(f, Reason::Expired) > 0 && last {
                    hash = None;
                }
            }
            _ => {}
        }
        if self.cut || !self.clocks_live(&c) {
            return Ok(None);
        }
        let (hh, created) = match (hash, made) {
            (Some(hh), _) => (hh, false),
            (None, NIL) => (self.insert(Kind::Hash, WriteClocks::NONE, 0, to_main), true),
            // Created by this call before it stopped early.
            (None, hh) => (hh, true),
        };
        // (A hash's `insert` makes no room: it adds no entry and no bytes.)
        let f = self.insert_field(hh, c, weight);
        if self.cut {
            if created {
                self.made = hh;
            }
            return Ok(None);
        }
        if created {
            // Creating a key and its first field is one write, not a use: a
            // hash written once and never read leaves the small queue unread,
            // as a plain key written once does (counted as a hit, it went to
            // main, out of reach of churn by unread keys).
            self.policy.set_freq(hh, 0);
        }
        Ok(Some(f))
    }

    /// `expire` (relative `ms`) or `expire_at` (absolute `t`), validated.
    /// `s = None` validates only. Returns whether anything changed.
    pub fn set_expiry(&mut self, s: Option<u32>, t: f64, relative: bool, cond: Option<Cond>) -> Result<bool> {
        let at =
            if relative { deadline("ms", self.now(), crate::clock::delay("ms", t)?)? } else { finite_time("time", t)? };
        // A deadline to store must fit the clocks (a past one deletes).
        if s.is_some() && at > self.now() && !self.times.fit(at) {
            return Err(Error::oom("time"));
        }
        Ok(match s {
            Some(s) => self.expire_at(s, at, cond),
            None => false,
        })
    }

    /// Sets the absolute deadline, subject to `cond`. A deadline not in the
    /// future deletes. Returns whether anything changed.
    pub(super) fn expire_at(&mut self, s: u32, at: f64, cond: Option<Cond>) -> bool {
        if let Some(c) = cond {
            if !c.holds(self.times.time(s, TIMES_ABS), at) {
                return false;
            }
        }
        if at <= self.now() {
            self.remove(s, Reason::Deleted);
        } else {
            self.times.set(s, TIMES_ABS, at);
            self.reschedule(s);
        }
        true
    }

    /// Drops both clocks; true if there was one. In wasm, `try_columns`
    /// for an idle of `NEVER` first.
    pub fn persist(&mut self, s: u32) -> bool {
        let had = self.times.time(s, TIMES_ABS) != NEVER || self.idle_of(s) != NEVER;
        self.times.set(s, TIMES_ABS, NEVER);
        self.set_idle(s, NEVER);
        self.wheel.cancel(s);
        self.policy.park(s);
        had
    }
}
