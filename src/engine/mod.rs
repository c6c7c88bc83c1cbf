//! The entry store: per-slot deadlines, the expiry wheel, eviction order,
//! capacity accounting and a log of removals.
//!
//! The engine knows slots, not keys or values. Hosts (the native
//! [`TtlCache`](crate::TtlCache) and the JS binding) keep their own key index
//! and values and replay the removal log after each call. That split is what
//! lets the JS side answer `get` from a JS `Map` and shared typed-array views
//! of the `times` and `freq` columns, without crossing into wasm.

use crate::clock::{deadline, finite_time, lifetime, Clock, NEVER};
use crate::error::{cat, uint, Error, Result};
use crate::list::{List, NIL};
use crate::policy::Policy;
use crate::wheel::{Pop, Wheel, WAYS};
use alloc::collections::TryReserveError;
use alloc::vec::Vec;

mod clocks;
mod grace;
mod hashes;
#[cfg(test)]
pub(crate) use hashes::FIELD_STEPS;
#[cfg(any(debug_assertions, feature = "invariants"))]
mod invariants;
mod remove;
mod room;
mod sweep;
#[cfg(test)]
mod tests;
mod write;

// The wasm binding names the value types through `engine::`.
pub(crate) use crate::types::{Cond, Counters, Options, Reason, Write};

/// The clocks of one slot, as the engine reads and writes them (`clocks`
/// stores them, narrow or wide). `#[repr(C)]`: the order of a slot's words
/// there (`TIMES_ABS`, `TIMES_LAST`). The idle window lives in a column of
/// its own, empty while every slot has the cache's default (see
/// `Engine::idles`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub(crate) struct Clocks {
    /// Absolute deadline, or `NEVER`.
    pub abs: f64,
    /// Last access (write, `get`, `touch`).
    pub last: f64,
}

impl Clocks {
    /// A free slot's: no deadline whatever its idle window (`NEVER + idle`
    /// is `NEVER`).
    const EMPTY: Clocks = Clocks { abs: NEVER, last: NEVER };
}

/// All of a slot's clocks (snapshots, restore).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Times {
    /// Absolute deadline, or `NEVER`.
    pub abs: f64,
    /// Last access (write, `get`, `touch`).
    pub last: f64,
    /// Idle window, or `NEVER`.
    pub idle: f64,
}

/// Resolved clocks for a write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WriteClocks {
    pub abs: f64,
    pub idle: f64,
}

impl WriteClocks {
    pub const NONE: WriteClocks = WriteClocks { abs: NEVER, idle: NEVER };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    Free = SLOT_FREE,
    Plain = SLOT_PLAIN,
    Hash = SLOT_HASH,
    Field = SLOT_FIELD,
    /// Handed to the host for a batched insert (see `reserve`), not yet live.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    Reserved = SLOT_RESERVED,
}

impl Kind {
    /// The kind a slot byte's kind bits name.
    fn from_bits(b: u8) -> Kind {
        match b {
            SLOT_PLAIN => Kind::Plain,
            SLOT_HASH => Kind::Hash,
            SLOT_FIELD => Kind::Field,
            SLOT_RESERVED => Kind::Reserved,
            _ => Kind::Free,
        }
    }
}

// The removal log's record (see `protocol`), named here for the hosts.
pub(crate) use crate::protocol::{LogRecord, LOG_ENTER_GRACE, LOG_FLAGS, LOG_GHOST, LOG_STRIDE, SWAP_GHOST};
use crate::protocol::{SLOT_FIELD, SLOT_FREE, SLOT_HASH, SLOT_PLAIN, SLOT_RESERVED, TIMES_ABS, TIMES_LAST};

pub(crate) struct Engine {
    ttl: f64,
    idle: f64,
    max_entries: u64,
    max_bytes: u64,
    pub(crate) budget: u64,
    clock: Clock,
    origin: f64,
    /// Each slot's `[abs, last]`: narrow (8 bytes a slot) while every time
    /// fits, else wide (16).
    pub times: clocks::ClockCol,
    /// Each slot's idle window; empty (every slot has the default, `idle`)
    /// until a slot's differs, so a cache whose entries all slide by the
    /// same window pays 16 bytes a slot for its clocks, not 24. A free
    /// slot's entry is meaningless: every write of clocks writes it.
    idles: Vec<f64>,
    /// Each slot's weight; empty (every weight 0) until a slot weighs
    /// something, so a cache without `sizeOf` pays nothing per entry.
    weight: Vec<u32>,
    /// One word per slot whose meaning depends on the slot's kind (one
    /// column, not three, keeps memory per entry down): a field's hash slot
    /// (`parent`, and its removal record's `LOG_PARENT`), a hash's index into
    /// `hashes` and `hash_graced`, `NIL` for a plain entry. Empty (all `NIL`)
    /// until the first hash, so a cache of plain entries pays nothing for it.
    family: Vec<u32>,
    hashes: Vec<List>,
    hash_free: Vec<u32>,
    wheel: Wheel,
    pub policy: Policy,
    /// The first of the slots freed since they were first handed out (`NIL`:
    /// none), each linking the next through the wheel's `next` column, which
    /// a free slot does not use (a `Vec` of them cost 4 bytes a slot). Slots
    /// at `high` and above have never been used, so they are not in it.
    free: u32,
    /// Slots in the free list.
    free_len: u32,
    high: u32,
    /// Plain entries + hash fields.
    entries: u64,
    /// Top-level keys: plain entries + hashes.
    keys: u64,
    bytes: u64,
    /// Removal records (`protocol::LogRecord`), three words each: slot, flags (reason | kind << 4 |
    /// ghost | graced), parent slot or `NIL`.
    pub log: Vec<u32>,
    /// The log's length, in words, a call may reach: a step that could
    /// write past it stops the call early (`cut`), so that removing never
    /// grows the log. The wasm binding sets it to the log's capacity, which
    /// it reserves per call (a bounded chunk, not one record per slot in
    /// use); natively it is `usize::MAX` (the log grows, nothing stops).
    pub log_cap: usize,
    /// Set when a call stopped early for want of log room: the host replays
    /// the log and makes the same call again, which goes on where it stopped.
    pub cut: bool,
    /// The hash `make_room` was evicting when a call stopped early, with
    /// its victim's ghost bit (`NIL`: none): the next `make_room` finishes it
    /// first, so the policy's choice stands.
    evicting: (u32, bool),
    /// The hash `hwrite` created for its field when it stopped early
    /// (`NIL`: none): the call made again writes the field into it.
    made: u32,
    pub counters: Counters,
    /// Stale-if-error (the JS `grace` option): once on, `grace_ms` holds each
    /// slot's grace, and its sign bit whether the slot is in grace (past its
    /// deadline, kept until `deadline + grace`; a hash is in grace when all
    /// its fields are). One column, not two: it stays empty in a cache that
    /// never uses grace, so such a cache pays nothing per entry.
    grace_on: bool,
    grace: f64,
    grace_ms: Vec<f64>,
    /// Fields in grace, per hash list (indexed like `hashes`).
    hash_graced: Vec<u32>,
    /// Top-level keys in grace (plain entries and hashes).
    graced_keys: u64,
}

/// A new engine before its options: `Engine::new` copies it, one block copy
/// where building it field by field took 0.3 KB of wasm (30 B of download).
static BLANK: Engine = Engine {
    ttl: 0.0,
    idle: 0.0,
    max_entries: 0,
    max_bytes: 0,
    budget: 0,
    clock: Clock::ZERO,
    origin: 0.0,
    times: clocks::ClockCol::EMPTY,
    idles: Vec::new(),
    weight: Vec::new(),
    family: Vec::new(),
    hashes: Vec::new(),
    hash_free: Vec::new(),
    wheel: Wheel::EMPTY,
    policy: Policy::EMPTY,
    free: NIL,
    free_len: 0,
    high: 0,
    entries: 0,
    keys: 0,
    bytes: 0,
    log: Vec::new(),
    log_cap: usize::MAX,
    cut: false,
    evicting: (NIL, false),
    made: NIL,
    counters: Counters {
        expired: 0,
        evicted: 0,
        deleted: 0,
        inserted: 0,
        updated: 0,
        ticks: 0,
        swept: 0,
        rescheduled: 0,
        cascaded: 0,
    },
    grace_on: false,
    grace: 0.0,
    grace_ms: Vec::new(),
    hash_graced: Vec::new(),
    graced_keys: 0,
};

fn sat(v: Option<u64>) -> u64 {
    v.unwrap_or(u64::MAX)
}

impl Engine {
    pub fn new(opts: &Options, now: f64) -> Result<Engine> {
        opts.validate()?;
        let clock = Clock::new(now)?;
        // SAFETY: a bitwise copy of a static that is never dropped, whose
        // vectors are empty: they own nothing, so no two copies free the
        // same memory.
        let mut e = unsafe { core::ptr::read(&BLANK) };
        e.ttl = opts.ttl.unwrap_or(NEVER);
        e.idle = opts.idle.unwrap_or(NEVER);
        e.max_entries = sat(opts.max_entries);
        e.max_bytes = sat(opts.max_bytes);
        e.budget = sat(opts.sweep_budget);
        e.clock = clock;
        e.origin = now;
        e.times = clocks::ClockCol::new(now);
        e.policy.evicts = opts.max_entries.is_some() || opts.max_bytes.is_some();
        // No columns up front, even for a bounded cache: they grow as entries
        // arrive (doubling, so filling costs amortized O(1) per entry), and a
        // cache that holds a few entries costs a few entries' memory.
        Ok(e)
    }

    pub fn options(&self) -> Options {
        let opt = |v: u64| (v != u64::MAX).then_some(v);
        let lim = |v: f64| (v != NEVER).then_some(v);
        Options {
            ttl: lim(self.ttl),
            idle: lim(self.idle),
            max_entries: opt(self.max_entries),
            max_bytes: opt(self.max_bytes),
            sweep_budget: opt(self.budget),
        }
    }

    pub fn now(&self) -> f64 {
        self.clock.now()
    }

    pub fn capacity(&self) -> usize {
        self.policy.bits.len()
    }

    pub fn keys(&self) -> u64 {
        self.keys
    }

    pub fn entries(&self) -> u64 {
        self.entries
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn scheduled(&self) -> usize {
        self.wheel.len()
    }

    pub fn small_len(&self) -> u32 {
        self.policy.small_len()
    }

    pub fn memory(&self) -> usize {
        self.times.memory()
            + self.idles.capacity() * 8
            + self.weight.capacity() * 4
            + self.family.capacity() * 4
            + self.hashes.capacity() * core::mem::size_of::<List>()
            + self.wheel.memory()
            + self.policy.memory()
            + self.log.capacity() * 4
            + self.grace_ms.capacity() * 8
            + self.hash_graced.capacity() * 4
    }

    // ---- time -------------------------------------------------------------

    /// The wheel tick of time `t`: whole milliseconds since the origin while
    /// that fits in 2^53, then the order of the f64 bit patterns (coarser, but
    /// never saturating). The same monotone map serves deadlines and the clock,
    /// so `d <= now` implies `tick(d) <= tick(now)`: a sweep at `now` reaches
    /// every expired slot, for any finite times, however far apart.
    fn tick_of(&self, t: f64) -> u64 {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
                                                    // Rounding of the subtraction is monotone in `t`, which is all we need.
        let x = t - self.origin;
        if x < EXACT {
            if x <= 0.0 {
                0
            } else {
                x as u64 // truncation: floor for x >= 0
            }
        } else {
            // Positive f64 bit patterns order like the values; +Infinity (an
            // overflowed subtraction) is the largest.
            (1u64 << 53) + (x.to_bits() - EXACT.to_bits())
        }
    }

    /// Moves the clock (an earlier `now` is ignored), sweeping nothing. A
    /// time the narrow clocks cannot hold widens them first (out of memory:
    /// an error, and the clock stays).
    pub fn advance(&mut self, now: f64) -> Result<()> {
        // (Not a time, or `Infinity`, which fits: the clock's error.)
        if now > self.now() && !self.times.fit(now) {
            return Err(Error::oom("now"));
        }
        self.clock.advance(now)
    }

    /// [`advance`](Self::advance) for a time already known to be finite
    /// (the JS binding's clock cell): no error to carry. Out of memory to
    /// widen the clocks leaves the clock where it was (the host sees the
    /// clocks still narrow, and its reading unstored).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    pub fn catch_up(&mut self, now: f64) {
        // Finite and later: no error message to build (it would allocate).
        if now > self.now() && now < NEVER && self.times.fit(now) {
            let _ = self.clock.advance(now);
        }
    }

    /// A time at or before the earliest deadline held (`NEVER` if none).
    /// A coarse bucket gives the first time in its span, where a tick
    /// splits it; the earliest fine (one-tick) bucket gives its slots' exact
    /// earliest deadline, so a host that ticks at the answer always makes
    /// progress (a bucket split, or an entry removed), whatever the
    /// deadlines' fractions, and never ticks past a deadline. With
    /// sweeping off (budget 0) expired slots stay held, so it is at or
    /// before theirs, as the contract words it ("the earliest deadline the
    /// cache holds"): a host that ticks there removes nothing (no sweep
    /// does), one that purges there removes them.
    pub fn next_expiry(&self) -> f64 {
        let (coarse, fine) = self.wheel.earliest();
        let mut best = coarse.map_or(NEVER, |t| self.time_of_tick(t));
        // A slot due at its bucket's own start ends the walk (no other can
        // be earlier; not in the cursor's bucket, see `fine_start`): a
        // million keys sharing one millisecond cost a walk of them per call
        // (10 ms; a probe).
        // In the cursor's bucket, overdue slots have any deadline down to
        // the wheel's floor for it: once one is found (a backlog, whose
        // slots go in at the front), that floor is the answer, early but
        // never late. A million overdue slots cost a walk of them per call
        // (2 ms at 200k; a host re-arming after each tick drained a backlog
        // in quadratic time); slots all still ahead are walked for the
        // exact minimum, as a host would spin on an early one.
        let fine_start = self.wheel.fine_start();
        let floor = fine_start.map_or(f64::NEG_INFINITY, |t| self.time_of_tick(t));
        let now = self.now();
        let mut s = fine.unwrap_or(NIL);
        while s != NIL {
            let d = self.due_at(s);
            best = best.min(d);
            if d <= floor {
                break;
            }
            if d <= now && fine_start.is_none() {
                best = best.min(self.time_of_tick(self.wheel.cursor_floor()));
                break;
            }
            s = self.wheel.next_linked(s);
        }
        best
    }

    /// The earliest time whose tick is at least `t` (`NEVER` if no finite
    /// time reaches it): a binary search over the f64 order, as `tick_of`
    /// is monotone in it but `origin + t` may round either way.
    fn time_of_tick(&self, t: u64) -> f64 {
        // Finite f64s in order as u64 keys: negatives flipped below positives.
        let key = |x: f64| {
            let b = x.to_bits();
            if b >> 63 == 1 {
                !b
            } else {
                b | 1 << 63
            }
        };
        let time = |k: u64| f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k });
        let (mut lo, mut hi) = (key(-f64::MAX), key(f64::MAX));
        if self.tick_of(f64::MAX) < t {
            return NEVER;
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.tick_of(time(mid)) >= t {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        time(lo) + 0.0 // -0 as 0
    }

    // ---- reads ------------------------------------------------------------

    // The wasm binding's; natively only `check_invariants` (the native host
    // tells kinds apart by its items).
    #[cfg_attr(not(any(target_arch = "wasm32", debug_assertions, feature = "invariants")), allow(dead_code))]
    pub fn kind(&self, s: u32) -> Kind {
        Kind::from_bits(self.policy.kind(s))
    }

    /// Sets slot `s`'s kind (in the policy's slot byte); `fresh`: the slot
    /// is being freed or handed out, in no queue.
    pub(crate) fn set_kind(&mut self, s: u32, kind: Kind, fresh: bool) {
        self.policy.set_kind(s, kind as u8, fresh);
    }

    pub fn parent(&self, s: u32) -> u32 {
        if self.family.is_empty() {
            NIL
        } else {
            self.family[s as usize]
        }
    }

    /// Slot `i`'s weight.
    pub(crate) fn wt(&self, i: usize) -> u32 {
        if self.weight.is_empty() {
            0
        } else {
            self.weight[i]
        }
    }

    /// Sets slot `i`'s weight; the first nonzero one turns the column on.
    pub(crate) fn set_wt(&mut self, i: usize, w: u32) {
        if w != 0 && self.weight.is_empty() {
            self.weight.resize(self.capacity(), 0);
        }
        if !self.weight.is_empty() {
            self.weight[i] = w;
        }
    }

    /// Sets slot `i`'s family word (a hash's list or a field's hash); the
    /// first hash turns the column on.
    pub(crate) fn set_family(&mut self, i: usize, v: u32) {
        if self.family.is_empty() {
            self.family.resize(self.capacity(), NIL);
        }
        self.family[i] = v;
    }

    /// Address of the idle column, or null while it is off (the wasm
    /// binding's status block).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    pub fn idles_ptr(&self) -> *const f64 {
        if self.idles.is_empty() {
            core::ptr::null()
        } else {
            self.idles.as_ptr()
        }
    }

    /// Slot `s`'s idle window.
    // Inlined: smaller wasm too (-2 B; see `Links`).
    #[inline(always)]
    pub(crate) fn idle_of(&self, s: u32) -> f64 {
        if self.idles.is_empty() {
            self.idle
        } else {
            self.idles[s as usize]
        }
    }

    /// Sets slot `s`'s idle window; the first that is not the default turns
    /// the column on (in wasm, `try_columns` has turned it on already).
    pub(crate) fn set_idle(&mut self, s: u32, v: f64) {
        // In wasm, `try_columns` always has: no growth path to download.
        #[cfg(not(target_arch = "wasm32"))]
        if v != self.idle && self.idles.is_empty() {
            self.idles.resize(self.capacity(), self.idle);
        }
        debug_assert!(v == self.idle || !self.idles.is_empty(), "an idle window other than the default, no column");
        if !self.idles.is_empty() {
            self.idles[s as usize] = v;
        }
    }

    /// Slot `s`'s own deadline: the earlier of its absolute one and the end
    /// of its idle window.
    pub(crate) fn deadline_of(&self, s: u32) -> f64 {
        let t = self.times.get(s);
        let idle = self.idle_of(s);
        let mut idle_end = t.last + idle;
        // A finite window restarted near the end of time ends past the
        // largest time, not never: only an infinite one means no limit (the
        // slot stays in the wheel, and `ttl` stays finite).
        if idle_end == NEVER && idle != NEVER {
            idle_end = f64::MAX;
        }
        // A compare, not `f64::min`, which wasm calls out of line (`fmin`,
        // for its NaN rule: 3% of an insert's time at 100k keys). No NaN
        // here: `last` is finite or `NEVER` (a free slot), windows positive.
        if t.abs < idle_end {
            t.abs
        } else {
            idle_end
        }
    }

    /// [`try_columns`](Self::try_columns) for a write of `weight` (`hashed`:
    /// to a hash) with clocks `c`, and the clocks column made to hold its
    /// deadline (its last access is now, which it holds already), as the
    /// write's error: the last check before it changes anything.
    pub(crate) fn columns_for(&mut self, weight: u32, hashed: bool, c: &WriteClocks) -> Result<()> {
        if self.try_columns(weight != 0, hashed, c.idle).is_err() || !self.times.fit(c.abs) {
            return Err(Error::oom("value"));
        }
        Ok(())
    }

    /// Turns on, fallibly, the columns a write may need that a cache without
    /// weights (`weighed`), hashes (`hashed`) or idle windows other than the
    /// default (`idle`) does without. A hash's own idle window is `NEVER`.
    /// In wasm a failed allocation inside a call aborts, so every write that
    /// may need them calls this before it changes anything; on `Err`
    /// nothing has.
    pub fn try_columns(&mut self, weighed: bool, hashed: bool, idle: f64) -> core::result::Result<(), TryReserveError> {
        let n = self.capacity();
        if (idle != self.idle || hashed && self.idle != NEVER) && self.idles.is_empty() {
            self.idles.try_reserve_exact(n)?;
            self.idles.resize(n, self.idle);
        }
        if weighed && self.weight.is_empty() {
            self.weight.try_reserve_exact(n)?;
            self.weight.resize(n, 0);
        }
        if hashed && self.family.is_empty() {
            self.family.try_reserve_exact(n)?;
            self.family.resize(n, NIL);
        }
        Ok(())
    }

    /// Slot `s`'s own deadline is after `now`: all of liveness for a plain
    /// entry, which a host that knows the slot's kind can ask without the
    /// kind column's load.
    pub fn own_live(&self, s: u32, now: f64) -> bool {
        self.deadline_of(s) > now
    }

    /// Live: its own deadline is in the future; for a field, its hash's too;
    /// for a hash, at least one field's too (the key goes with its last
    /// field, swept or not). That scan stops at the first live field.
    pub fn is_live(&self, s: u32) -> bool {
        self.is_live_at(s, self.now())
    }

    /// [`is_live`](Self::is_live) at a time at or after the clock's (a
    /// followed source's reading the engine has not been moved to yet).
    pub fn is_live_at(&self, s: u32, now: f64) -> bool {
        match self.kind(s) {
            Kind::Free | Kind::Reserved => false,
            Kind::Field => self.own_live(s, now) && self.own_live(self.family[s as usize], now),
            Kind::Hash => self.own_live(s, now) && self.fields(s).any(|f| self.own_live(f, now)),
            Kind::Plain => self.own_live(s, now),
        }
    }

    /// A read that restarts idle windows (`get`, `hget`, `touch`): the field's
    /// and its hash's. No wheel work: a moved deadline is found when its old
    /// wheel slot fires.
    pub fn read(&mut self, s: u32) {
        let now = self.now();
        self.restart(s, now);
        if self.kind(s) == Kind::Field {
            let h = self.family[s as usize];
            self.restart(h, now);
            self.policy.hit(h);
        } else {
            self.policy.hit(s);
        }
    }

    /// [`read`](Self::read) of a slot the host knows is a top-level key
    /// (plain or hash): no kind column load.
    pub fn read_key(&mut self, s: u32) {
        self.restart(s, self.now());
        self.policy.hit(s);
    }

    /// Restarts slot `s`'s idle window at `now`, if it has one. A slot with
    /// none keeps its write time as its last access, which nothing else
    /// needs then: the JS host's refresh-ahead reads the age of an entry
    /// written before it kept write times from there, with no column of its
    /// own. Both hosts do the same (their snapshots agree byte for byte).
    fn restart(&mut self, s: u32, now: f64) {
        if self.idle_of(s) != NEVER {
            self.times.set(s, TIMES_LAST, now);
        }
    }

    /// Time left to the earliest deadline at `now`; for a field, its hash's
    /// counts too.
    pub fn ttl_at(&self, s: u32, now: f64) -> f64 {
        let mut d = self.deadline_of(s);
        if self.kind(s) == Kind::Field {
            d = d.min(self.deadline_of(self.family[s as usize]));
        }
        if d == NEVER {
            NEVER
        } else {
            d - now
        }
    }

    /// A slot's clocks (snapshots).
    pub fn times(&self, s: u32) -> Times {
        let t = self.times.get(s);
        Times { abs: t.abs, last: t.last, idle: self.idle_of(s) }
    }

    /// A slot's recorded weight (snapshots).
    pub fn weight(&self, s: u32) -> u32 {
        self.wt(s as usize)
    }

    /// Sets `maxEntries` without preallocating for it: a restored engine
    /// grows as its entries arrive (a snapshot's bound is data, and a tiny
    /// hostile snapshot must not reserve a million slots).
    pub fn set_max_entries(&mut self, v: Option<u64>) {
        self.max_entries = sat(v);
        // A bound decides how keys are queued (`Policy::park`): the JS
        // restore sets it after the keys.
        if v.is_some() {
            self.policy.bound();
        }
    }

    /// Adds a slot with exact clocks, for restoring a snapshot: a `Plain` or
    /// `Hash` key (`parent` ignored) or a `Field` of hash slot `parent`. No
    /// eviction, no counters; keys go to the main queue in the order given.
    /// The caller has validated the clocks are live and the bounds hold.
    pub fn restore_slot(&mut self, kind: Kind, parent: u32, t: Times, weight: u32) -> u32 {
        debug_assert!(match kind {
            Kind::Field => (parent as usize) < self.capacity() && self.kind(parent) == Kind::Hash,
            Kind::Plain | Kind::Hash => parent == NIL,
            Kind::Free | Kind::Reserved => false,
        });
        let s = self.alloc(kind);
        let i = s as usize;
        // A slot handed out is blank (weight 0, family NIL): `release` and
        // growth leave it so.
        self.set_wt(i, weight);
        match kind {
            Kind::Field => {
                self.family[i] = parent;
                let hid = self.family[parent as usize] as usize;
                self.policy.links_mut().push_front(&mut self.hashes[hid], s);
                let p = parent as usize;
                self.set_wt(p, self.wt(p) + weight);
                self.entries += 1;
            }
            Kind::Hash => {
                let hid = self.new_hash_list();
                self.set_family(i, hid);
                self.keys += 1;
                self.policy.insert(s, true);
            }
            _ => {
                self.entries += 1;
                self.keys += 1;
                self.policy.insert(s, true);
            }
        }
        self.bytes += u64::from(weight);
        self.times.put(s, Clocks { abs: t.abs, last: t.last });
        self.set_idle(s, t.idle);
        self.schedule(s);
        s
    }
}
