//! The engine's surface for `pkg-template/src/cache.js` (exported by `abi.rs`).
//!
//! Only numbers cross the boundary: JS keeps keys and values, and names slots
//! by index. After every call JS reads a small status block (log pointer and
//! length, column pointers, capacity) straight from wasm memory, so it never
//! needs a second call to learn what changed. Every method validates before
//! it mutates and returns a real `TypeError`/`RangeError`, never a trap.
//! The numbers and the rules of that exchange are `crate::protocol`'s.

mod abi;
mod snap;

use crate::engine::{Cond, Engine, Kind, Options, Reason, Write};
use crate::error::{cat, show, Error};
use crate::float::fract;
use crate::protocol::*;
use alloc::{boxed::Box, vec::Vec};

/// What the exports (`abi.rs`) turn into a sentinel and JS into a throw.
type JsResult<T> = Result<T, Error>;

/// Expired entries each write reclaims (a queued insert counts as a write).
const RECLAIM: u64 = 2;
/// The smallest column growth, in slots: a cache holding a handful of
/// entries costs a handful of slots (columns then double).
const GROW_STEP: usize = 8;

/// Whether blocks of these sizes can be allocated now. The allocator
/// (`heap.rs`) keeps a free list per size class and takes a class's first
/// block from the top of the heap, so each block is allocated, all are held,
/// then all are freed: the allocations that follow, of the same sizes, take
/// them back from their free lists even when the memory cannot grow.
fn small_room(sizes: &[usize]) -> bool {
    let mut held: [Vec<u8>; 5] = Default::default();
    for (h, &n) in held.iter_mut().zip(sizes) {
        if h.try_reserve_exact(n).is_err() {
            return false;
        }
    }
    true
}

/// A count limit: positive integer or `Infinity` (none).
fn limit(arg: &'static str, v: f64, zero_ok: bool) -> Result<Option<u64>, Error> {
    if v == f64::INFINITY {
        return Ok(None);
    }
    if !(fract(v) == 0.0 && (v > 0.0 || (zero_ok && v == 0.0)) && v <= 9007199254740991.0) {
        let what = if zero_ok { "a non-negative integer" } else { "a positive integer" };
        return Err(Error::range(arg, cat(&["must be ", what, " up to 2^53 - 1, or Infinity, got ", &show(v)])));
    }
    Ok(Some(v as u64))
}

fn cond(code: u32) -> Option<Cond> {
    match code {
        COND_NX => Some(Cond::Nx),
        COND_XX => Some(Cond::Xx),
        COND_GT => Some(Cond::Gt),
        COND_LT => Some(Cond::Lt),
        _ => None,
    }
}

fn write_opts(flags: u32, ttl: f64, idle: f64, at: f64) -> Write {
    Write {
        ttl: (flags & WRITE_TTL != 0).then_some(ttl),
        idle: (flags & WRITE_IDLE != 0).then_some(idle),
        expire_at: (flags & WRITE_AT != 0).then_some(at),
        keep_ttl: flags & WRITE_KEEP_TTL != 0,
    }
}

/// The engine as JS sees it: slot numbers in, slot numbers out.
pub struct RawEngine {
    e: Engine,
    /// Shared with JS, boxed so its address never moves. See `protocol`.
    status: Box<[u32; ST_LEN]>,
    /// Slots JS has filled since the last call (`ST_QUEUED` of them), with
    /// `QUEUE_TO_MAIN` for "straight to the main queue".
    queue: Vec<u32>,
    /// The slots the last `reserve` handed out (`ST_RESERVED`). Only
    /// `reserve` changes it: JS reads it in place until its next `reserve`.
    reserved: Vec<u32>,
    error: Option<Error>,
    /// What `stats` fills, allocated up front so that `stats` never
    /// allocates (it must work when memory is exhausted).
    stats: Box<[f64; STATS_LEN]>,
    /// JS's clock reading (see `ST_NOW`), then the clocks' base
    /// (`NOW_BASE`), boxed so their address never moves.
    now: Box<[f64; 2]>,
    /// Write-time reclaim owed by inserts JS queued (`RECLAIM` each), paid
    /// by the next `write`, `hwrite` or `reclaim`: calls that may remove
    /// entries at a point where JS is ready for it.
    owed: u64,
    /// What is left of the budget of a `tick` that stopped early.
    left: u64,
}

impl RawEngine {
    /// Every call that touches the engine goes through here: clear last
    /// call's log (JS has consumed it), link the inserts JS queued since, run
    /// `f`, then publish the status block JS reads next. One place, so no
    /// method can forget either half.
    ///
    /// JS reads its clock lazily and writes the reading to `now` rather than
    /// making a call for it; the engine catches up here.
    fn call<T>(&mut self, f: impl FnOnce(&mut Engine) -> T) -> T {
        self.begin();
        let r = f(&mut self.e);
        self.publish();
        r
    }

    /// Links the inserts JS queued since the last call (before a slot JS
    /// names is checked: it may be one of them).
    fn commit_queued(&mut self) {
        let n = core::mem::take(&mut self.status[ST_QUEUED]) as usize;
        self.owed = self.owed.saturating_add(RECLAIM * n as u64);
        for &p in self.queue.get(..n).unwrap_or(&self.queue) {
            let s = p & !QUEUE_TO_MAIN;
            // Only slots reserved and not yet committed: a stale queue must
            // not link a slot twice.
            if (s as usize) < self.e.capacity() && self.e.kind(s) == Kind::Reserved {
                self.e.commit_reserved(s, p & QUEUE_TO_MAIN != 0);
            }
        }
    }

    /// Makes room for `slots` new slots and a log of `LOG_CHUNK` records (or
    /// fewer, in a cache holding fewer slots): whatever the call does next
    /// allocates nothing, so running out of memory is this `Err`, before
    /// anything changed, and never a trap. A call that would log more stops
    /// early and is made again (`ST_MORE`), which finds the room made.
    #[inline(never)]
    fn room(&mut self, slots: usize, arg: &'static str) -> Result<(), Error> {
        // JS has consumed the last call's log; its capacity is what counts.
        self.e.log.clear();
        // (Two more: a step logs up to two records, so any call can go on.)
        let removals = (self.e.used() + slots + 2).min(LOG_CHUNK);
        if self.e.try_room(slots, removals, GROW_STEP).is_err() {
            self.publish();
            return Err(Error::oom(arg));
        }
        Ok(())
    }

    /// `call`, after `room`.
    fn call_room<T>(
        &mut self,
        slots: usize,
        arg: &'static str,
        f: impl FnOnce(&mut Engine) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.room(slots, arg)?;
        self.call(f)
    }

    /// Whether `s` names a slot in use (not free, not reserved): JS's slot
    /// numbers are checked before the engine indexes anything with them.
    #[inline(never)]
    fn in_use(&mut self, s: u32) -> bool {
        self.commit_queued();
        (s as usize) < self.e.capacity() && !matches!(self.e.kind(s), Kind::Free | Kind::Reserved)
    }

    #[cold]
    #[inline(never)]
    fn stale() -> Error {
        Error::ty("key", "internal: stale slot (please report this)")
    }

    /// `in_use`, as the error the slot-taking methods return.
    #[inline(never)]
    fn check(&mut self, s: u32) -> JsResult<()> {
        if self.in_use(s) {
            Ok(())
        } else {
            Err(Self::stale())
        }
    }

    /// `call`'s prologue, out of line: `call` is generic, and this inlined
    /// into each of its instances measured 2 KB of the gzipped module.
    #[inline(never)]
    fn begin(&mut self) {
        self.e.log.clear();
        // No call grows the log: it stops early where it would.
        self.e.log_cap = self.e.log.capacity();
        self.e.cut = false;
        self.e.catch_up(self.now[0]);
        self.commit_queued();
    }

    /// `call`, then, if `f` succeeded, the write-time reclaim: what queued
    /// inserts owe plus `extra`. After `f`, so `f` never meets a slot JS
    /// looked up that the reclaim removed; never after a failure, which JS
    /// does not drain.
    fn run<T>(&mut self, extra: u64, f: impl FnOnce(&mut Engine) -> Result<T, Error>) -> Result<T, Error> {
        self.call(|e| f(e)).inspect(|_| self.pay(extra))
    }

    /// `run`'s reclaim (out of line: `run` is generic).
    #[inline(never)]
    fn pay(&mut self, extra: u64) {
        // Stopped early: the call made again pays.
        if self.e.cut {
            return;
        }
        let want = self.owed.saturating_add(extra);
        let done = self.e.reclaim(want);
        // Nothing removed: nothing is due, so nothing is owed (unless the
        // log was full). Best effort: a full log stops it for good.
        self.owed = if done == 0 && !self.e.cut { 0 } else { want - done };
        self.e.cut = false;
        self.publish();
    }

    #[inline(never)]
    fn publish(&mut self) {
        let s = &mut self.status;
        s[ST_LOG] = self.e.log.as_ptr() as u32;
        s[ST_LOG_LEN] = self.e.log.len() as u32;
        s[ST_CAP] = self.e.capacity() as u32;
        s[ST_TIMES] = self.e.times.ptr();
        s[ST_IDLES] = self.e.idles_ptr() as u32;
        s[ST_FREQ] = self.e.policy.bits.as_ptr() as u32;
        s[ST_QUEUE] = self.queue.as_ptr() as u32;
        s[ST_ENTRIES] = self.e.entries().min(u64::from(u32::MAX)) as u32;
        s[ST_RESERVED] = self.reserved.as_ptr() as u32;
        s[ST_RESERVED_LEN] = self.reserved.len() as u32;
        s[ST_NOW] = self.now.as_ptr() as u32;
        self.now[NOW_BASE] = self.e.times.base;
        s[ST_MORE] = u32::from(self.e.cut);
    }

    /// Hot writes return a plain `u32` rather than a `Result`: wasm-bindgen's
    /// `Result` return goes through a stack area JS reads with a `DataView`,
    /// which measured as a large share of `set`. `FAILED` tells JS to call
    /// `takeError`.
    fn settle(&mut self, r: Result<Option<u32>, Error>) -> u32 {
        match r {
            Ok(s) => s.unwrap_or(NIL),
            Err(e) => {
                self.error = Some(e);
                FAILED
            }
        }
    }

    fn slot(s: u32) -> Option<u32> {
        (s != NIL).then_some(s)
    }

    fn weight(w: f64) -> Result<u32, Error> {
        if fract(w) == 0.0 && (0.0..=4294967295.0).contains(&w) {
            Ok(w as u32)
        } else {
            Err(Error::range("sizeOf", cat(&["must return an integer from 0 to 2^32-1, got ", &show(w)])))
        }
    }
}

impl RawEngine {
    /// Validates the numeric options; `Infinity` means no limit.
    pub fn new(now: f64, ttl: f64, idle: f64, max_entries: f64, max_bytes: f64, budget: f64) -> JsResult<RawEngine> {
        let lim = |v: f64| (v != f64::INFINITY).then_some(v);
        let opts = Options {
            ttl: lim(ttl),
            idle: lim(idle),
            max_entries: limit("maxEntries", max_entries, false)?,
            max_bytes: limit("maxBytes", max_bytes, false)?,
            sweep_budget: limit("sweepBudget", budget, true)?,
        };
        // An engine, its status block and the stats buffer: well under this.
        if !small_room(&[
            core::mem::size_of::<RawEngine>() + 8,
            core::mem::size_of::<RawEngine>() + 16,
            ST_LEN * 4,
            STATS_LEN * 8,
            8,
        ]) {
            return Err(Error::oom("options"));
        }
        let mut r = RawEngine {
            e: Engine::new(&opts, now)?,
            status: Box::new([0; ST_LEN]),
            // Allocated by the first `reserve`: most of a near-empty
            // cache's cost would be this queue.
            queue: Vec::new(),
            reserved: Vec::new(),
            error: None,
            stats: Box::new([0.0; STATS_LEN]),
            now: Box::new([now, 0.0]),
            owed: 0,
            left: 0,
        };
        r.publish();
        Ok(r)
    }

    /// Links queued inserts and catches up with JS's clock; `writes` more
    /// owe the write-time reclaim (the overwrites JS made on its side
    /// alone since the last reclaim, which no call saw). With `pay`, pays
    /// what is owed; without, removes nothing (a read that must not, or a
    /// call whose arguments are not checked yet, whose clock moved).
    pub fn reclaim(&mut self, writes: u32, pay: bool) {
        let more = RECLAIM * u64::from(writes);
        if !pay {
            self.owed = self.owed.saturating_add(more);
            self.call(|_| ());
            return;
        }
        // Reclaiming logs removals, as many as the log holds: with no room
        // made for it, fewer or none (what is left stays owed).
        let _ = self.room(0, "now");
        let _ = self.run(more, |_| Ok(()));
    }

    /// Reserves up to `n` free slots for batched inserts; JS reads them from
    /// the status block (`ST_RESERVED_LEN` 0 when memory ran out: JS then
    /// writes through `write`, which reports it). Links the inserts queued
    /// first, as every call does: `reserve(0)` only links them (JS's
    /// `commit`, when its queue is full).
    pub fn reserve(&mut self, n: u32) {
        let n = (n as usize).min(QUEUE_CAP);
        let mut reserved = core::mem::take(&mut self.reserved);
        reserved.clear();
        let room = self.queue.try_reserve_exact(QUEUE_CAP - self.queue.len()).is_ok()
            && reserved.try_reserve_exact(n).is_ok()
            && self.e.try_room(n, 0, GROW_STEP).is_ok();
        if room {
            self.queue.resize(QUEUE_CAP, 0);
            self.call(|e| e.reserve(n, &mut reserved));
        } else {
            self.call(|_| ());
        }
        self.reserved = reserved;
        // The reserved list moved back after the call published it.
        self.publish();
    }

    pub fn status_ptr(&self) -> u32 {
        self.status.as_ptr() as u32
    }

    pub fn now(&self) -> f64 {
        self.e.now()
    }

    /// Moves the clock and sweeps one budget; returns how many were removed
    /// (made again after stopping early: what is left of the budget). With
    /// `purge`, every expired entry instead, no clock move, no tick (one
    /// export for both).
    pub fn tick(&mut self, now: f64, purge: bool) -> JsResult<f64> {
        let (again, mut left) = (self.e.cut, self.left);
        let n = self.call_room(0, "now", |e| {
            // `Engine::tick`, whose sweep goes on when the call is made again.
            if purge {
                left = u64::MAX;
            } else if !again {
                e.advance(now)?;
                e.counters.ticks += 1;
                left = e.budget;
            }
            Ok(e.purge_some(left))
        })?;
        self.left = left - n;
        Ok(n as f64)
    }

    /// A time at or before the earliest deadline held; `Infinity` if none.
    pub fn next_expiry(&mut self) -> f64 {
        self.call(|e| e.next_expiry())
    }

    /// Writes a plain entry at slot `s` (`NIL` for a new key; JS has checked
    /// it is not a live hash). Returns the slot, or `NIL` when the deadline is
    /// already past (a live old entry is then deleted).
    pub fn write(&mut self, s: u32, flags: u32, ttl: f64, idle: f64, at: f64, weight: f64) -> u32 {
        // Made again after stopping early: `s` may be gone already (freed,
        // not handed out again), and was checked the first time.
        let again = self.e.cut;
        let r = Self::weight(weight).and_then(|w| {
            if !again && s != NIL && !(self.in_use(s) && matches!(self.e.kind(s), Kind::Plain | Kind::Hash)) {
                return Err(Self::stale());
            }
            let opts = write_opts(flags, ttl, idle, at);
            self.room(1, "value")?;
            self.run(RECLAIM, |e| e.write(Self::slot(s), &opts, w, flags & WRITE_TO_MAIN != 0))
        });
        self.settle(r)
    }

    /// A new key's default write at capacity in its victim's slot (see
    /// `Engine::swap_in`; `to_main`: a returning ghost). The write-time
    /// reclaim `write` would pay finds nothing due, which clears what
    /// queued inserts owed; `NIL`: nothing done, `write` instead.
    pub fn swap_in(&mut self, to_main: u32) -> u32 {
        let r = self.call(|e| e.swap_in(to_main != 0));
        if r != NIL {
            self.owed = 0;
        }
        r
    }

    /// Writes field slot `f` (`NIL` if new) of hash `h` (`NIL` if the key is
    /// missing; JS has checked it is not a live plain entry). Returns the
    /// field's slot or `NIL` when its deadline is already past.
    #[allow(clippy::too_many_arguments)]
    pub fn hwrite(&mut self, h: u32, f: u32, flags: u32, ttl: f64, idle: f64, at: f64, weight: f64) -> u32 {
        let mut hs = NIL;
        // As in `write`: `h` and `f` may be gone after stopping early.
        let again = self.e.cut;
        let r = Self::weight(weight).and_then(|w| {
            let hash_ok = h == NIL || (self.in_use(h) && matches!(self.e.kind(h), Kind::Plain | Kind::Hash));
            let field_ok =
                f == NIL || (h != NIL && self.in_use(f) && self.e.kind(f) == Kind::Field && self.e.parent(f) == h);
            if !(again || hash_ok && field_ok) {
                return Err(Self::stale());
            }
            let opts = write_opts(flags, ttl, idle, at);
            self.room(2, "value")?;
            self.run(RECLAIM, |e| {
                let r = e.hwrite(Self::slot(h), Self::slot(f), &opts, w, flags & WRITE_TO_MAIN != 0);
                // The field's hash, read before the reclaim changes anything.
                if let Ok(Some(f)) = r {
                    hs = e.parent(f);
                }
                r
            })
        });
        if hs != NIL {
            self.status[ST_HASH] = hs;
        }
        self.settle(r)
    }

    /// The error behind the last `FAILED` from `write`/`hwrite`.
    pub fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    /// Grace (stale-if-error, ms; JS validated it): slot `s`'s own, or with
    /// `s = NIL` the default, which turns grace on (if it is off: a `fetch`
    /// with a grace of its own turns it on before it starts, with the
    /// default 0). One method for both: each binding method carries the
    /// `call` prologue. Out of memory (a column for every slot) changes
    /// nothing.
    pub fn set_grace(&mut self, s: u32, ms: f64) -> JsResult<()> {
        self.call(|e| match Self::slot(s) {
            Some(s) => {
                e.set_slot_grace(s, ms);
                Ok(())
            }
            None => e.set_grace(ms).map_err(|_| Error::oom("grace")),
        })
    }

    /// Until when expired slot `s` keeps its value as a fallback; 0 if not.
    pub fn stale_until(&self, s: u32) -> f64 {
        self.e.stale_until(s)
    }

    /// Removes slot `s`; `reason` a `REASON_*`, or `REASON_FOUND_EXPIRED`: lazy
    /// expiry of a slot a read found expired, which keeps it if it has
    /// grace left (one method, not two: each carries the `call` prologue).
    pub fn remove(&mut self, s: u32, reason: u8) -> JsResult<f64> {
        self.check(s)?;
        Ok(self.call_room(0, "key", |e| {
            Ok(if reason == REASON_FOUND_EXPIRED { e.expire_found(s) } else { e.remove(s, Reason::from_u8(reason)) })
        })? as f64)
    }

    /// `expire` (`rel`: `t` is ms from now) or `expireAt` on slot `s`
    /// (`NIL`: missing, validate only). Returns whether anything changed.
    /// With `COND_PERSIST`, `persist` instead: drops both clocks (true if
    /// there was one).
    pub fn expire_at(&mut self, s: u32, t: f64, rel: bool, cond_code: u32) -> JsResult<bool> {
        if s != NIL {
            self.check(s)?;
        }
        self.call_room(0, "key", |e| match cond_code {
            COND_PERSIST => {
                // Its idle window becomes NEVER: the column, if that is not the default.
                e.columns_for(0, false, &crate::engine::WriteClocks::NONE)?;
                Ok(Self::slot(s).is_some_and(|s| e.persist(s)))
            }
            _ => e.set_expiry(Self::slot(s), t, rel, cond(cond_code)),
        })
    }

    pub fn clear(&mut self) -> JsResult<()> {
        self.call_room(0, "clear", |e| {
            e.clear();
            Ok(())
        })
    }

    /// The counters and gauges, in `STAT_*` order: fills the buffer at
    /// `statsPtr` and returns its address.
    pub fn stats(&mut self) -> u32 {
        self.call(|_| ());
        let c = &self.e.counters;
        let mut v = [0u64; STATS_LEN];
        v[STAT_EXPIRED] = c.expired;
        v[STAT_EVICTED] = c.evicted;
        v[STAT_DELETED] = c.deleted;
        v[STAT_INSERTED] = c.inserted;
        v[STAT_UPDATED] = c.updated;
        v[STAT_TICKS] = c.ticks;
        v[STAT_SWEPT] = c.swept;
        v[STAT_RESCHEDULED] = c.rescheduled;
        v[STAT_CASCADED] = c.cascaded;
        v[STAT_SCHEDULED] = self.e.scheduled() as u64;
        v[STAT_KEYS] = self.e.keys();
        v[STAT_ENTRIES] = self.e.entries();
        v[STAT_BYTES] = self.e.bytes();
        v[STAT_SMALL_QUEUE] = u64::from(self.e.small_len());
        v[STAT_ENGINE_BYTES] = self.e.memory() as u64;
        v[STAT_GRACED_KEYS] = self.e.graced_keys();
        for (o, &x) in self.stats.iter_mut().zip(v.iter()) {
            *o = x as f64;
        }
        self.stats.as_ptr() as u32
    }
}
