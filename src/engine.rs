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
use crate::wheel::{Pop, Wheel};
use alloc::collections::TryReserveError;
use alloc::{format, vec::Vec};

/// Why an entry left the cache, as `dispose` reports it.
///
/// ```
/// assert_eq!(lapse_cache::Reason::Expired.as_str(), "expired");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Reason {
    /// Its deadline passed.
    Expired = 0,
    /// Capacity needed the room.
    Evicted = 1,
    /// `delete`, `hdel`, or an expiry set in the past.
    Deleted = 2,
    /// Overwritten by a write to the same key or field.
    Replaced = 3,
    /// `clear`.
    Cleared = 4,
}

impl Reason {
    /// The name the JS API uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Expired => "expired",
            Reason::Evicted => "evicted",
            Reason::Deleted => "deleted",
            Reason::Replaced => "replaced",
            Reason::Cleared => "cleared",
        }
    }

    pub(crate) fn from_u8(v: u8) -> Reason {
        match v {
            0 => Reason::Expired,
            1 => Reason::Evicted,
            2 => Reason::Deleted,
            3 => Reason::Replaced,
            _ => Reason::Cleared,
        }
    }
}

/// A condition on an expiry change, as in Redis `EXPIRE`.
///
/// ```
/// use lapse_cache::{Cond, TtlCache};
/// let mut c = TtlCache::new(0.0);
/// c.set("k", 1, Default::default()).unwrap();
/// assert!(!c.expire(&"k", 1000.0, Some(Cond::Xx)).unwrap()); // no deadline yet
/// assert!(c.expire(&"k", 1000.0, Some(Cond::Nx)).unwrap());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cond {
    /// Only if the entry has no absolute deadline.
    Nx,
    /// Only if it has one.
    Xx,
    /// Only if the new deadline is later (no deadline counts as infinite).
    Gt,
    /// Only if the new deadline is earlier.
    Lt,
}

impl Cond {
    /// Parses `"NX"`, `"XX"`, `"GT"` or `"LT"`.
    ///
    /// ```
    /// assert_eq!(lapse_cache::Cond::parse("GT").unwrap(), lapse_cache::Cond::Gt);
    /// assert!(lapse_cache::Cond::parse("gt").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Cond> {
        match s {
            "NX" => Ok(Cond::Nx),
            "XX" => Ok(Cond::Xx),
            "GT" => Ok(Cond::Gt),
            "LT" => Ok(Cond::Lt),
            _ => Err(Error::ty("cond", format!("must be \"NX\", \"XX\", \"GT\" or \"LT\", got {s:?}"))),
        }
    }

    fn holds(self, current: f64, new: f64) -> bool {
        match self {
            Cond::Nx => current == NEVER,
            Cond::Xx => current != NEVER,
            Cond::Gt => new > current,
            Cond::Lt => new < current,
        }
    }
}

/// Cache-wide settings. `None` means "no limit" throughout.
///
/// ```
/// let day = 86_400_000.0;
/// let o = lapse_cache::Options { ttl: Some(90.0 * day), idle: Some(30.0 * day), ..Default::default() };
/// assert_eq!(o.sweep_budget, Some(1000));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Default absolute lifetime in ms.
    pub ttl: Option<f64>,
    /// Default idle window in ms.
    pub idle: Option<f64>,
    /// Most entries (plain entries plus hash fields) held at once.
    pub max_entries: Option<u64>,
    /// Most total size, as measured by the host's `sizeOf`.
    pub max_bytes: Option<u64>,
    /// Most entries one `tick` removes (default 1000). `Some(0)` makes `tick`
    /// only move the clock; expired entries are still never served.
    pub sweep_budget: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options { ttl: None, idle: None, max_entries: None, max_bytes: None, sweep_budget: Some(1000) }
    }
}

impl Options {
    pub(crate) fn validate(&self) -> Result<()> {
        if let Some(t) = self.ttl {
            lifetime("ttl", t)?;
        }
        if let Some(t) = self.idle {
            lifetime("idle", t)?;
        }
        if self.max_entries == Some(0) {
            return Err(Error::range("maxEntries", "must be a positive integer or Infinity"));
        }
        if self.max_bytes == Some(0) {
            return Err(Error::range("maxBytes", "must be a positive integer or Infinity"));
        }
        Ok(())
    }
}

/// Per-write clock options. `None` takes the cache default;
/// `Some(f64::INFINITY)` means no limit for this entry.
///
/// ```
/// let w = lapse_cache::Write { ttl: Some(5_000.0), ..Default::default() };
/// assert!(w.idle.is_none() && !w.keep_ttl);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Write {
    /// Absolute lifetime from now, in ms.
    pub ttl: Option<f64>,
    /// Idle window, in ms.
    pub idle: Option<f64>,
    /// Absolute deadline as a time; excludes `ttl`.
    pub expire_at: Option<f64>,
    /// Keep the live entry's deadlines; excludes the other three.
    pub keep_ttl: bool,
}

/// The clocks of one slot. `#[repr(C)]` because JS reads them through a
/// `Float64Array` as `[abs, last, idle]` triples.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub(crate) struct Times {
    /// Absolute deadline, or `NEVER`.
    pub abs: f64,
    /// Last access (write, `get`, `touch`).
    pub last: f64,
    /// Idle window, or `NEVER`.
    pub idle: f64,
}

impl Times {
    const EMPTY: Times = Times { abs: NEVER, last: 0.0, idle: NEVER };

    pub fn deadline(&self) -> f64 {
        self.abs.min(self.last + self.idle)
    }
}

/// Resolved clocks for a write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Clocks {
    pub abs: f64,
    pub idle: f64,
}

impl Clocks {
    pub const NONE: Clocks = Clocks { abs: NEVER, idle: NEVER };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    Free = 0,
    Plain = 1,
    Hash = 2,
    Field = 3,
    /// Handed to the host for a batched insert (see `reserve`), not yet live.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    Reserved = 4,
}

/// Bits of a log record's flags word.
pub(crate) const LOG_GHOST: u32 = 1 << 7;
/// The record's slot had been in grace (see `Engine::set_grace`): the host
/// stopped counting it when it entered, so it must not uncount it again.
pub(crate) const LOG_GRACED: u32 = 1 << 8;
/// Reason code of a record that is not a removal: the slot's deadline passed
/// and it now waits out its grace, its value kept for the host's loaders.
pub(crate) const LOG_ENTER_GRACE: u32 = 5;

/// Counters the engine keeps; hosts add hits and misses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Entries removed because a deadline passed (by sweeps or on access).
    pub expired: u64,
    /// Entries removed to make room.
    pub evicted: u64,
    /// Entries removed by `delete`, `hdel` or a past expiry.
    pub deleted: u64,
    /// Entries and fields written for the first time.
    pub inserted: u64,
    /// Writes to an existing entry or field.
    pub updated: u64,
    /// Calls to `tick`.
    pub ticks: u64,
    /// Entries removed by `tick` and `purge`.
    pub swept: u64,
    /// Wheel slots that fired early because an idle read moved the deadline.
    pub rescheduled: u64,
    /// Wheel slots moved to a finer level.
    pub cascaded: u64,
}

pub(crate) struct Engine {
    ttl: f64,
    idle: f64,
    max_entries: u64,
    max_bytes: u64,
    budget: u64,
    clock: Clock,
    origin: f64,
    pub times: Vec<Times>,
    kind: Vec<Kind>,
    weight: Vec<u32>,
    /// Field: its hash's slot. Hash: index into `hashes`. Plain: `NIL`.
    family: Vec<u32>,
    hashes: Vec<List>,
    hash_free: Vec<u32>,
    wheel: Wheel,
    pub policy: Policy,
    /// Slots freed since they were first handed out; slots at `high` and
    /// above have never been used, so they need no entry here.
    free: Vec<u32>,
    high: u32,
    /// Plain entries + hash fields.
    entries: u64,
    /// Top-level keys: plain entries + hashes.
    keys: u64,
    bytes: u64,
    /// Removal records, three words each: slot, flags (reason | kind << 4 |
    /// ghost | graced), parent slot or `NIL`.
    pub log: Vec<u32>,
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

fn sat(v: Option<u64>) -> u64 {
    v.unwrap_or(u64::MAX)
}

impl Engine {
    pub fn new(opts: &Options, now: f64) -> Result<Engine> {
        opts.validate()?;
        let clock = Clock::new(now)?;
        let e = Engine {
            ttl: opts.ttl.unwrap_or(NEVER),
            idle: opts.idle.unwrap_or(NEVER),
            max_entries: sat(opts.max_entries),
            max_bytes: sat(opts.max_bytes),
            budget: sat(opts.sweep_budget),
            clock,
            origin: now,
            times: Vec::new(),
            kind: Vec::new(),
            weight: Vec::new(),
            family: Vec::new(),
            hashes: Vec::new(),
            hash_free: Vec::new(),
            wheel: Wheel::default(),
            policy: Policy::default(),
            free: Vec::new(),
            high: 0,
            entries: 0,
            keys: 0,
            bytes: 0,
            log: Vec::new(),
            counters: Counters::default(),
            grace_on: false,
            grace: 0.0,
            grace_ms: Vec::new(),
            hash_graced: Vec::new(),
            graced_keys: 0,
        };
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
        self.times.len()
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
        self.times.capacity() * core::mem::size_of::<Times>()
            + self.kind.capacity()
            + self.weight.capacity() * 4
            + self.family.capacity() * 4
            + self.hashes.capacity() * core::mem::size_of::<List>()
            + self.wheel.memory()
            + self.policy.memory()
            + self.free.capacity() * 4
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

    /// Moves the clock (an earlier `now` is ignored), sweeping nothing.
    pub fn advance(&mut self, now: f64) -> Result<()> {
        self.clock.advance(now)
    }

    /// [`advance`](Self::advance) for a time already known to be finite
    /// (the JS binding's clock cell): no error path to carry.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    pub fn catch_up(&mut self, now: f64) {
        if now > self.clock.now() && now < NEVER {
            // Finite and later: cannot fail.
            let _ = self.clock.advance(now);
        }
    }

    /// A time at or before the earliest deadline held (`NEVER` if none).
    /// A coarse bucket gives the first time in its span, where a tick
    /// splits it; the earliest fine (one-tick) bucket gives its slots' exact
    /// earliest deadline, so a host that ticks at the answer always makes
    /// progress (a bucket split, or an entry removed), whatever the
    /// deadlines' fractions, and never ticks past a deadline.
    pub fn next_expiry(&self) -> f64 {
        let (coarse, fine) = self.wheel.earliest();
        let mut best = coarse.map_or(NEVER, |t| self.time_of_tick(t));
        let mut s = fine.unwrap_or(NIL);
        while s != NIL {
            best = best.min(self.times[s as usize].deadline());
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

    /// Removes up to `n` expired entries, within the sweep budget (none when
    /// it is 0): the small batch each write pays so that a cache that is
    /// never ticked does not fill with dead entries.
    pub fn reclaim(&mut self, n: u64) -> u64 {
        if self.budget == 0 || self.wheel.len() == 0 {
            return 0;
        }
        self.sweep(n.min(self.budget), None)
    }

    /// Moves the clock and sweeps one budget's worth of expired entries.
    pub fn tick(&mut self, now: f64) -> Result<u64> {
        self.clock.advance(now)?;
        self.counters.ticks += 1;
        Ok(self.sweep(self.budget, None))
    }

    /// Removes every expired entry.
    pub fn purge(&mut self) -> u64 {
        self.sweep(u64::MAX, None)
    }

    /// Removes up to `n` expired entries (whatever the sweep budget), so a
    /// caller can replay the removal log between batches.
    pub fn purge_some(&mut self, n: u64) -> u64 {
        self.sweep(n, None)
    }

    /// Pops due wheel slots, removing expired ones, until `budget` entries are
    /// gone, nothing more is due, or (with `fit`) the cache has room for
    /// `fit = (entries, bytes)` more. Work beyond removals (cascades and lazy
    /// idle reschedules) is capped at a multiple of the budget so that one
    /// tick's pause stays bounded; the wheel resumes where it stopped. At 2x
    /// the budget a tick that only cascades pauses about as long as one that
    /// removes a full budget (measured: 4x let cascades dominate p99).
    fn sweep(&mut self, budget: u64, fit: Option<(u64, u64)>) -> u64 {
        let limit = self.tick_of(self.now());
        let work_cap = budget.saturating_mul(2).saturating_add(64);
        let (mut removed, mut work) = (0u64, 0u64);
        let mut same_tick: Vec<u32> = Vec::new();
        while removed < budget && work < work_cap {
            if let Some((e, b)) = fit {
                if !self.over(e, b) {
                    break;
                }
            }
            work += 1;
            match self.wheel.pop(limit) {
                None => break,
                Some(Pop::Cascade(s)) => {
                    self.counters.cascaded += 1;
                    self.schedule(s);
                }
                Some(Pop::Due(s)) => {
                    let i = s as usize;
                    let d = self.times[i].deadline();
                    if d > self.now() {
                        self.counters.rescheduled += 1;
                        let t = self.tick_of(d);
                        if t <= limit {
                            // Not expired, yet on the clock's own tick (a
                            // fraction of a millisecond ahead, or a far clock
                            // whose sums round): back in the wheel only after
                            // this sweep, so it is handed out once per sweep,
                            // and every later sweep still checks it.
                            same_tick.push(s);
                        } else {
                            self.wheel.schedule(s, t);
                        }
                    } else if self.kind[i] == Kind::Hash {
                        removed += self.expire_hash_fields(s, budget - removed);
                    } else if !self.hold_in_grace(s) {
                        removed += self.remove(s, Reason::Expired);
                    }
                }
            }
        }
        for s in same_tick {
            // Its hash may have expired whole since it was parked.
            if !matches!(self.kind[s as usize], Kind::Free | Kind::Reserved) {
                self.wheel.schedule(s, limit);
            }
        }
        self.counters.swept += removed;
        removed
    }

    /// Removes up to `room` fields of an expired hash; the last one takes the
    /// key with it. A hash with more fields than the budget is finished over
    /// the next ticks (reads already treat all of it as gone).
    fn expire_hash_fields(&mut self, h: u32, room: u64) -> u64 {
        let hid = self.family[h as usize] as usize;
        let mut n = 0;
        while n < room {
            let f = self.hashes[hid].head;
            let last = self.hashes[hid].len == 1;
            n += self.remove(f, Reason::Expired);
            if last {
                return n;
            }
        }
        // At its own (past) deadline's tick, which the wheel clamps to its
        // cursor: `next_expiry` must not report later than that deadline.
        let d = self.times[h as usize].deadline();
        let due = self.tick_of(d).min(self.tick_of(self.now()));
        self.wheel.schedule(h, due);
        n
    }

    /// Puts an unscheduled slot in the wheel at its current deadline.
    fn schedule(&mut self, s: u32) {
        let d = self.times[s as usize].deadline();
        if d != NEVER {
            let t = self.tick_of(d);
            self.wheel.schedule(s, t);
        }
    }

    fn reschedule(&mut self, s: u32) {
        self.wheel.cancel(s);
        self.schedule(s);
    }

    // ---- grace (stale-if-error) --------------------------------------------

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    /// Turns grace on with `ms` as the grace of every slot not given its
    /// own. Called before any slot is written, or on a restored engine
    /// (whose slots then take `ms`).
    pub fn set_grace(&mut self, ms: f64) {
        self.grace = ms;
        self.enable_grace();
        self.grace_ms.iter_mut().for_each(|g| *g = ms);
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    fn enable_grace(&mut self) {
        if !self.grace_on {
            self.grace_on = true;
            // (resize, not vec!: the same code as grow's, and no alloc macro in no_std)
            self.grace_ms.resize(self.times.len(), self.grace);
            self.hash_graced.resize(self.hashes.len(), 0);
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    /// Gives live slot `s` its own grace (a `fetch` with `grace`). It keeps
    /// it through overwrites until the slot is freed.
    pub fn set_slot_grace(&mut self, s: u32, ms: f64) {
        self.enable_grace();
        self.grace_ms[s as usize] = ms;
    }

    /// Until when the value of expired slot `s` is kept as a fallback: a
    /// time after now, or 0 if it is live, has no grace left, or belongs to
    /// a hash whose own deadline passed (a hash's deadline has no grace).
    pub fn stale_until(&self, s: u32) -> f64 {
        let i = s as usize;
        if !self.grace_on || !matches!(self.kind[i], Kind::Plain | Kind::Field) {
            return 0.0;
        }
        if self.kind[i] == Kind::Field && !self.own_live(self.family[i], self.now()) {
            return 0.0;
        }
        let d = self.times[i].deadline();
        let end = d + self.grace_ms[i].abs();
        if d > self.now() || end <= self.now() {
            0.0
        } else {
            end
        }
    }

    /// Whether slot `i` is in grace (the sign bit of its `grace_ms`).
    fn graced(&self, i: usize) -> bool {
        self.grace_on && self.grace_ms[i].is_sign_negative()
    }

    fn set_graced(&mut self, i: usize, on: bool) {
        let g = self.grace_ms[i].abs();
        self.grace_ms[i] = if on { -g } else { g };
    }

    /// Keeps expired slot `s` (unscheduled by the caller, or not) in grace
    /// while it has some left; false when it must go now. The first time
    /// logs an enter-grace record, so that the host stops counting it.
    fn hold_in_grace(&mut self, s: u32) -> bool {
        let end = self.stale_until(s);
        if end == 0.0 {
            return false;
        }
        let i = s as usize;
        if self.graced(i) && self.wheel.is_scheduled(s) {
            // Found again by a read: already waiting for its grace to end.
            return true;
        }
        if !self.graced(i) {
            self.set_graced(i, true);
            if self.kind[i] == Kind::Plain {
                self.graced_keys += 1;
                self.log.extend_from_slice(&[s, LOG_ENTER_GRACE | (Kind::Plain as u32) << 4, NIL]);
            } else {
                let h = self.family[i];
                self.log.extend_from_slice(&[s, LOG_ENTER_GRACE | (Kind::Field as u32) << 4, h]);
                let hid = self.family[h as usize] as usize;
                self.hash_graced[hid] += 1;
                if self.hash_graced[hid] == self.hashes[hid].len {
                    self.set_graced(h as usize, true);
                    self.graced_keys += 1;
                    self.log.extend_from_slice(&[h, LOG_ENTER_GRACE | (Kind::Hash as u32) << 4, NIL]);
                }
            }
        }
        self.wheel.cancel(s);
        if end != NEVER {
            let t = self.tick_of(end);
            self.wheel.schedule(s, t);
        }
        true
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    /// Lazy expiry, found by a read: an expired slot goes, unless it has
    /// grace left (then it enters grace). An expired hash goes whole; a hash
    /// whose own deadline holds but whose fields are all expired lets each
    /// field go or enter grace. Returns the entries removed.
    pub fn expire_found(&mut self, s: u32) -> u64 {
        let kind = self.kind[s as usize];
        match kind {
            // All its fields wait out their grace already: nothing to walk.
            Kind::Hash if self.graced(s as usize) => 0,
            Kind::Hash if self.grace_on && self.own_live(s, self.now()) => {
                // Removing a field leaves its siblings' links intact; the last
                // one, which takes the hash, has no next.
                let mut n = 0;
                let mut f = self.hashes[self.family[s as usize] as usize].head;
                while f != NIL {
                    let next = self.policy.links().next(f);
                    if !self.own_live(f, self.now()) && !self.hold_in_grace(f) {
                        n += self.remove(f, Reason::Expired);
                    }
                    f = next;
                }
                n
            }
            Kind::Plain | Kind::Field if self.hold_in_grace(s) => 0,
            _ => self.remove(s, Reason::Expired),
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    /// Slots in grace that are top-level keys (not counted in `size`).
    pub fn graced_keys(&self) -> u64 {
        self.graced_keys
    }

    // ---- reads ------------------------------------------------------------

    pub fn kind(&self, s: u32) -> Kind {
        self.kind[s as usize]
    }

    pub fn parent(&self, s: u32) -> u32 {
        self.family[s as usize]
    }

    fn own_live(&self, s: u32, now: f64) -> bool {
        self.times[s as usize].deadline() > now
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
        match self.kind[s as usize] {
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
        self.times[s as usize].last = now;
        if self.kind[s as usize] == Kind::Field {
            let h = self.family[s as usize];
            self.times[h as usize].last = now;
            self.policy.hit(h);
        } else {
            self.policy.hit(s);
        }
    }

    /// Time left to the earliest deadline at `now`; for a field, its hash's
    /// counts too.
    pub fn ttl_at(&self, s: u32, now: f64) -> f64 {
        let mut d = self.times[s as usize].deadline();
        if self.kind[s as usize] == Kind::Field {
            d = d.min(self.times[self.family[s as usize] as usize].deadline());
        }
        if d == NEVER {
            NEVER
        } else {
            d - now
        }
    }

    /// A hash's live-or-not fields, in no particular order.
    pub fn fields(&self, h: u32) -> impl Iterator<Item = u32> + '_ {
        let hid = self.family[h as usize] as usize;
        let mut s = self.hashes[hid].head;
        core::iter::from_fn(move || {
            if s == NIL {
                return None;
            }
            let cur = s;
            s = self.policy.links().next(s);
            Some(cur)
        })
    }

    /// Removes the expired fields at the head of a live hash's field list,
    /// up to its first live one. `is_live` stops at the first live field, so
    /// after this every liveness check of the hash is O(1) until that field
    /// expires; the fields passed over are removed, so the scan is paid for
    /// by removals, never repeated (issue 13: 10k `hget`s on a hash with
    /// unswept dead fields cost O(fields) each).
    pub fn tidy_hash(&mut self, h: u32) {
        debug_assert_eq!(self.kind[h as usize], Kind::Hash);
        if self.is_live(h) {
            self.drop_dead_fields(h, true);
        }
    }

    /// Removes a live hash's expired fields, from the head: all of them, or
    /// (`leading`) up to the first live one. The hash keeps a live field.
    #[inline(never)] // two callers; `remove` inlined in each cost wasm size
    fn drop_dead_fields(&mut self, h: u32, leading: bool) {
        let hid = self.family[h as usize] as usize;
        let mut f = self.hashes[hid].head;
        while f != NIL {
            let next = self.policy.links().next(f);
            if self.times[f as usize].deadline() > self.now() {
                if leading {
                    return;
                }
            } else {
                debug_assert!(self.hashes[hid].len > 1, "a live hash keeps a live field");
                self.remove(f, Reason::Expired);
            }
            f = next;
        }
    }

    pub fn field_count(&self, h: u32) -> u32 {
        self.hashes[self.family[h as usize] as usize].len
    }

    // ---- writes -----------------------------------------------------------

    /// Turns per-write options into deadlines, validating everything.
    pub fn resolve(&self, w: &Write) -> Result<Clocks> {
        if w.keep_ttl && (w.ttl.is_some() || w.idle.is_some() || w.expire_at.is_some()) {
            return Err(Error::ty("keepTtl", "cannot be combined with ttl, idle or expireAt"));
        }
        if w.ttl.is_some() && w.expire_at.is_some() {
            return Err(Error::ty("expireAt", "cannot be combined with ttl"));
        }
        let idle = match w.idle {
            Some(v) => lifetime("idle", v)?,
            None => self.idle,
        };
        deadline("idle", self.now(), idle)?;
        let abs = match (w.expire_at, w.ttl) {
            (Some(t), _) => finite_time("expireAt", t)?,
            (None, Some(v)) => deadline("ttl", self.now(), lifetime("ttl", v)?)?,
            (None, None) => deadline("ttl", self.now(), self.ttl)?,
        };
        Ok(Clocks { abs, idle })
    }

    pub fn clocks_live(&self, c: &Clocks) -> bool {
        c.abs > self.now() && self.now() + c.idle > self.now()
    }

    fn over(&self, extra_entries: u64, extra_bytes: u64) -> bool {
        self.entries.saturating_add(extra_entries) > self.max_entries
            || self.bytes.saturating_add(extra_bytes) > self.max_bytes
    }

    /// Fails if `weight` can never fit, whatever is evicted. `within` is the
    /// hash a field goes into: it is never evicted for its own field, so its
    /// other live fields count against the bounds. Its expired fields do not:
    /// `make_room` sweeps them before it evicts anything.
    pub fn check_fits(&self, weight: u32, within: Option<u32>, replacing: Option<u32>) -> Result<()> {
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
                    if Some(f) != replacing && self.times[f as usize].deadline() > self.now() {
                        e += 1;
                        b += u64::from(self.weight[f as usize]);
                    }
                    f = self.policy.links().next(f);
                }
            } else {
                let old = replacing.map_or(0, |s| u64::from(self.weight[s as usize]));
                e += u64::from(self.field_count(h));
                b += u64::from(self.weight[h as usize]) - old;
            }
        }
        (e, b)
    }

    /// Makes room for `entries`/`bytes` more: expired entries first, then
    /// live ones in eviction order, never `keep`.
    fn make_room(&mut self, entries: u64, bytes: u64, keep: Option<u32>) {
        if !self.over(entries, bytes) {
            return;
        }
        self.sweep(u64::MAX, Some((entries, bytes)));
        // The hash a field goes into is never evicted for it, and a field
        // that died within the clock's current millisecond may not be due in
        // the wheel yet: its dead fields go here, so the bound `check_fits`
        // promised holds.
        if let Some(h) = keep.filter(|&h| self.kind[h as usize] == Kind::Hash && self.over(entries, bytes)) {
            self.drop_dead_fields(h, false);
        }
        while self.over(entries, bytes) {
            let Some(v) = self.policy.evict(keep) else {
                break;
            };
            let reason = if self.own_live(v.slot, self.now()) { Reason::Evicted } else { Reason::Expired };
            let start = self.log.len();
            self.remove(v.slot, reason);
            if v.ghost && reason == Reason::Evicted {
                // The key's own record is the last one `remove` wrote.
                let last = self.log.len() - 3;
                debug_assert!(last >= start);
                self.log[last + 1] |= LOG_GHOST;
            }
        }
    }

    fn alloc(&mut self, kind: Kind) -> u32 {
        let s = match self.free.pop() {
            Some(s) => s,
            None => {
                if self.high as usize == self.times.len() {
                    self.grow((self.times.len() * 2).max(64));
                }
                // Low slots first, so the host's slot-indexed arrays stay dense.
                self.high += 1;
                self.high - 1
            }
        };
        debug_assert_eq!(self.kind[s as usize], Kind::Free, "slot {} handed out twice", s);
        self.kind[s as usize] = kind;
        s
    }

    /// An empty field list for a new hash, reusing a freed one.
    fn new_hash_list(&mut self) -> u32 {
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
        self.times.resize(cap, Times::EMPTY);
        if self.grace_on {
            self.grace_ms.resize(cap, self.grace);
        }
        self.kind.resize(cap, Kind::Free);
        self.weight.resize(cap, 0);
        self.family.resize(cap, NIL);
        self.wheel.grow(cap);
        self.policy.grow(cap);
    }

    /// Makes room, fallibly, for a call that takes up to `slots` new slots and
    /// removes up to `removals`: afterwards it allocates nothing (the columns,
    /// the free list, the hash lists and the removal log all have capacity).
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
        let len = self.times.len();
        let need = self.high as usize + slots;
        if need > len {
            let extra = need.max(len * 2).max(step) - len;
            self.times.try_reserve_exact(extra)?;
            self.kind.try_reserve_exact(extra)?;
            self.weight.try_reserve_exact(extra)?;
            self.family.try_reserve_exact(extra)?;
            self.wheel.try_reserve(extra)?;
            self.policy.try_reserve(extra)?;
            self.grow(len + extra);
        }
        // Each slot is freed at most once per call, and a hash's list at most
        // once; capacity is kept, so this allocates only as the cache grows.
        let cap = self.times.len();
        self.free.try_reserve(cap - self.free.len())?;
        self.hashes.try_reserve(slots)?;
        self.hash_free.try_reserve(self.hashes.len() + slots - self.hash_free.len())?;
        if slots > 0 {
            self.wheel.try_reserve(0)?;
        }
        self.log.try_reserve(3 * removals)?;
        Ok(())
    }

    /// Slots in use (live, dead unswept, or reserved for the host).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    pub fn used(&self) -> usize {
        self.high as usize - self.free.len()
    }

    fn set_clocks(&mut self, s: u32, c: Clocks) {
        self.times[s as usize] = Times { abs: c.abs, last: self.now(), idle: c.idle };
        self.reschedule(s);
    }

    /// Writes a new top-level key. Clocks must be live (the host deletes
    /// instead); `check_fits` must have passed.
    pub fn insert(&mut self, kind: Kind, c: Clocks, weight: u32, to_main: bool) -> u32 {
        debug_assert!(matches!(kind, Kind::Plain | Kind::Hash));
        self.make_room(u64::from(kind == Kind::Plain), u64::from(weight), None);
        debug_assert!(!self.over(u64::from(kind == Kind::Plain), u64::from(weight)), "no room after make_room");
        let s = self.alloc(kind);
        let i = s as usize;
        self.weight[i] = weight;
        if kind == Kind::Hash {
            let hid = self.new_hash_list();
            self.family[i] = hid;
        } else {
            self.family[i] = NIL;
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
        let i = s as usize;
        debug_assert_eq!(self.kind[i], Kind::Reserved);
        self.kind[i] = Kind::Plain;
        self.weight[i] = 0;
        self.family[i] = NIL;
        self.entries += 1;
        self.keys += 1;
        self.counters.inserted += 1;
        let freq = self.policy.freq[i];
        self.policy.insert(s, to_main);
        self.policy.freq[i] = freq;
        self.schedule(s);
    }

    /// Adds a field to hash `h`.
    pub fn insert_field(&mut self, h: u32, c: Clocks, weight: u32) -> u32 {
        self.make_room(1, u64::from(weight), Some(h));
        debug_assert!(!self.over(1, u64::from(weight)), "check_fits passed, yet no room for the field");
        debug_assert_eq!(self.kind[h as usize], Kind::Hash, "the hash survived make_room");
        let s = self.alloc(Kind::Field);
        let i = s as usize;
        self.weight[i] = weight;
        self.family[i] = h;
        let hid = self.family[h as usize] as usize;
        // A field is never in an eviction queue, so its queue links are free
        // to chain it to its siblings.
        self.policy.links_mut().push_front(&mut self.hashes[hid], s);
        self.weight[h as usize] += weight;
        self.entries += 1;
        self.bytes += u64::from(weight);
        self.counters.inserted += 1;
        self.set_clocks(s, c);
        self.policy.hit(h);
        s
    }

    /// Overwrites a live plain entry or field; `None` keeps its clocks.
    pub fn overwrite(&mut self, s: u32, c: Option<Clocks>, weight: u32) {
        let i = s as usize;
        let old = self.weight[i];
        let owner = if self.kind[i] == Kind::Field { self.family[i] } else { s };
        if weight > old {
            self.make_room(0, u64::from(weight - old), Some(owner));
            debug_assert!(!self.over(0, u64::from(weight - old)), "check_fits passed, yet no room to grow");
        }
        debug_assert!(!matches!(self.kind[i], Kind::Free | Kind::Reserved), "overwrite of a dead slot");
        self.weight[i] = weight;
        if owner != s {
            self.weight[owner as usize] = self.weight[owner as usize] - old + weight;
        }
        self.bytes = self.bytes - u64::from(old) + u64::from(weight);
        self.counters.updated += 1;
        if let Some(c) = c {
            self.set_clocks(s, c);
        }
        self.policy.hit(owner);
    }

    /// Validates a write to slot `s` and resolves its clocks; `keep_ttl`
    /// takes a live entry's own.
    fn check_write(&self, s: Option<u32>, w: &Write) -> Result<Clocks> {
        let mut c = self.resolve(w)?;
        if w.keep_ttl {
            if let Some(s) = s.filter(|&s| self.is_live(s)) {
                let t = self.times[s as usize];
                c = Clocks { abs: t.abs, idle: t.idle };
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
                self.clocks_live(&c).then(|| self.insert(Kind::Plain, c, weight, to_main))
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
        if let Some(f) = live_f {
            if self.clocks_live(&c) {
                self.overwrite(f, (!w.keep_ttl).then_some(c), weight);
                return Ok(Some(f));
            }
            self.remove(f, Reason::Deleted);
            return Ok(None);
        }
        let mut hash = live_h;
        match (live_h, h, f) {
            // A dead key goes whole, fields and all.
            (None, Some(dead), _) => {
                self.remove(dead, Reason::Expired);
            }
            // A dead field goes alone; when it was the last, its key goes too.
            (Some(hh), _, Some(f)) => {
                let last = self.field_count(hh) == 1;
                self.remove(f, Reason::Expired);
                if last {
                    hash = None;
                }
            }
            _ => {}
        }
        if !self.clocks_live(&c) {
            return Ok(None);
        }
        let hh = match hash {
            Some(hh) => hh,
            None => self.insert(Kind::Hash, Clocks::NONE, 0, to_main),
        };
        Ok(Some(self.insert_field(hh, c, weight)))
    }

    /// `expire` (relative `ms`) or `expire_at` (absolute `t`), validated.
    /// `s = None` validates only. Returns whether anything changed.
    pub fn set_expiry(&mut self, s: Option<u32>, t: f64, relative: bool, cond: Option<Cond>) -> Result<bool> {
        let at =
            if relative { deadline("ms", self.now(), crate::clock::delay("ms", t)?)? } else { finite_time("time", t)? };
        Ok(match s {
            Some(s) => self.expire_at(s, at, cond),
            None => false,
        })
    }

    /// Sets the absolute deadline, subject to `cond`. A deadline not in the
    /// future deletes. Returns whether anything changed.
    fn expire_at(&mut self, s: u32, at: f64, cond: Option<Cond>) -> bool {
        let i = s as usize;
        if let Some(c) = cond {
            if !c.holds(self.times[i].abs, at) {
                return false;
            }
        }
        if at <= self.now() {
            self.remove(s, Reason::Deleted);
        } else {
            self.times[i].abs = at;
            self.reschedule(s);
        }
        true
    }

    /// Drops both clocks; true if there was one.
    pub fn persist(&mut self, s: u32) -> bool {
        let t = &mut self.times[s as usize];
        let had = t.abs != NEVER || t.idle != NEVER;
        t.abs = NEVER;
        t.idle = NEVER;
        self.wheel.cancel(s);
        had
    }

    // ---- removal ----------------------------------------------------------

    /// Logs the removal of slot `s` and returns the reason logged: a value
    /// in grace had expired already and leaves as such, flagged
    /// `LOG_GRACED` (the host stopped counting it when it entered).
    fn log(&mut self, s: u32, reason: Reason, kind: Kind, parent: u32) -> Reason {
        let (reason, bit) = if self.leave_grace(s, kind) { (Reason::Expired, LOG_GRACED) } else { (reason, 0) };
        self.log.extend_from_slice(&[s, reason as u32 | (kind as u32) << 4 | bit, parent]);
        reason
    }

    /// Whether slot `s` is in grace; if so, takes it out of the grace counts
    /// (it is being removed).
    fn leave_grace(&mut self, s: u32, kind: Kind) -> bool {
        let i = s as usize;
        if !self.graced(i) {
            return false;
        }
        self.set_graced(i, false);
        if kind == Kind::Field {
            let hid = self.family[self.family[i] as usize] as usize;
            self.hash_graced[hid] -= 1;
        } else {
            self.graced_keys -= 1;
        }
        true
    }

    fn count(&mut self, reason: Reason, n: u64) {
        match reason {
            Reason::Expired => self.counters.expired += n,
            Reason::Evicted => self.counters.evicted += n,
            Reason::Deleted => self.counters.deleted += n,
            Reason::Replaced | Reason::Cleared => {}
        }
    }

    fn release(&mut self, s: u32) {
        let i = s as usize;
        debug_assert!(!matches!(self.kind[i], Kind::Free), "slot {s} released twice");
        self.wheel.cancel(s);
        self.times[i] = Times::EMPTY;
        self.kind[i] = Kind::Free;
        self.weight[i] = 0;
        self.family[i] = NIL;
        if self.grace_on {
            self.grace_ms[i] = self.grace;
        }
        self.free.push(s);
    }

    /// Removes a slot and everything it owns, logging each record. Returns
    /// the number of entries (plain entries and fields) removed.
    pub fn remove(&mut self, s: u32, reason: Reason) -> u64 {
        let i = s as usize;
        match self.kind[i] {
            Kind::Free | Kind::Reserved => 0,
            Kind::Plain => {
                self.policy.remove(s);
                let reason = self.log(s, reason, Kind::Plain, NIL);
                self.bytes -= u64::from(self.weight[i]);
                self.entries -= 1;
                self.keys -= 1;
                self.release(s);
                self.count(reason, 1);
                1
            }
            Kind::Hash => {
                let hid = self.family[i] as usize;
                let mut n = 0;
                while self.hashes[hid].len > 1 {
                    let f = self.hashes[hid].head;
                    n += self.remove(f, reason);
                }
                // The last field takes the key with it.
                let f = self.hashes[hid].head;
                n + self.remove(f, reason)
            }
            Kind::Field => {
                let h = self.family[i];
                let hid = self.family[h as usize] as usize;
                self.policy.links_mut().unlink(&mut self.hashes[hid], s);
                let w = self.weight[i];
                self.weight[h as usize] -= w;
                self.bytes -= u64::from(w);
                self.entries -= 1;
                let field_reason = self.log(s, reason, Kind::Field, h);
                self.release(s);
                self.count(field_reason, 1);
                if self.hashes[hid].is_empty() {
                    self.policy.remove(h);
                    self.log(h, reason, Kind::Hash, NIL);
                    self.hash_free.push(hid as u32);
                    self.keys -= 1;
                    self.release(h);
                } else if self.grace_on && !self.graced(h as usize) && self.hash_graced[hid] == self.hashes[hid].len {
                    // Its last field not in grace went: the key is in grace now.
                    self.set_graced(h as usize, true);
                    self.graced_keys += 1;
                    self.log.extend_from_slice(&[h, LOG_ENTER_GRACE | (Kind::Hash as u32) << 4, NIL]);
                }
                1
            }
        }
    }

    /// Removes everything, logging fields before their hashes. O(live
    /// entries): it visits the keys through the eviction queues and the
    /// fields through their hashes, never the slots once used and freed.
    /// Slots reserved by the host stay reserved.
    pub fn clear(&mut self) {
        // Queue order, each hash's fields just before it. (No sort: the
        // order of "cleared" removals is unspecified, and a sort costs wasm.)
        for k in self.policy.slots() {
            if self.kind[k as usize] == Kind::Hash {
                let hid = self.family[k as usize] as usize;
                while let Some(f) = self.policy.links_mut().pop_front(&mut self.hashes[hid]) {
                    self.log(f, Reason::Cleared, Kind::Field, k);
                    self.release(f);
                }
                self.log(k, Reason::Cleared, Kind::Hash, NIL);
            } else {
                self.log(k, Reason::Cleared, Kind::Plain, NIL);
            }
            self.policy.remove(k);
            self.release(k);
        }
        self.hashes.clear();
        self.hash_free.clear();
        debug_assert_eq!(self.wheel.len(), 0, "every scheduled slot was live");
        let cur = self.tick_of(self.now());
        self.wheel.reset_cursor(cur);
        self.hash_graced.clear();
        self.graced_keys = 0;
        self.entries = 0;
        self.keys = 0;
        self.bytes = 0;
    }

    /// Checks every count and link the engine keeps against a recount from
    /// scratch: entries, keys and bytes; the free list; each hash's field
    /// list and weight; the eviction queues (exactly the keys); the wheel
    /// (every live slot with a finite deadline, nothing else). O(slots): for
    /// tests and fuzzing, after every step.
    #[cfg(any(debug_assertions, feature = "invariants"))]
    pub fn check_invariants(&self) -> core::result::Result<(), alloc::string::String> {
        let n = self.kind.len();
        if self.times.len() != n || self.weight.len() != n || self.family.len() != n || self.high as usize > n {
            return Err("column lengths disagree".into());
        }
        let mut free = alloc::vec![false; n];
        for &s in &self.free {
            let i = s as usize;
            if s >= self.high || self.kind[i] != Kind::Free || core::mem::replace(&mut free[i], true) {
                return Err(format!("free list holds slot {s} ({:?})", self.kind.get(i)));
            }
        }
        let mut hid_used = alloc::vec![false; self.hashes.len()];
        let (mut plain, mut hashes, mut fields, mut bytes, mut scheduled) = (0u64, 0u64, 0u64, 0u64, 0usize);
        #[allow(clippy::needless_range_loop)] // one index into six columns
        for i in 0..n {
            let s = i as u32;
            let k = self.kind[i];
            let in_wheel = self.wheel.is_scheduled(s);
            scheduled += usize::from(in_wheel);
            match k {
                Kind::Free => {
                    if s < self.high && !free[i] {
                        return Err(format!("free slot {s} is not in the free list"));
                    }
                    if in_wheel || self.weight[i] != 0 || self.times[i] != Times::EMPTY {
                        return Err(format!(
                            "free slot {s} keeps state: wheel {in_wheel}, weight {}, {:?}",
                            self.weight[i], self.times[i]
                        ));
                    }
                    continue;
                }
                Kind::Reserved => {
                    if in_wheel {
                        return Err(format!("reserved slot {s} is in the wheel"));
                    }
                    continue;
                }
                Kind::Plain => {
                    plain += 1;
                    bytes += u64::from(self.weight[i]);
                }
                Kind::Field => {
                    fields += 1;
                    bytes += u64::from(self.weight[i]);
                    let h = self.family[i] as usize;
                    if self.kind.get(h) != Some(&Kind::Hash) {
                        return Err(format!("field {s} has no hash"));
                    }
                }
                Kind::Hash => {
                    hashes += 1;
                    let hid = self.family[i] as usize;
                    if hid >= self.hashes.len() || core::mem::replace(&mut hid_used[hid], true) {
                        return Err(format!("hash {s} has a bad or shared field list {hid}"));
                    }
                    let list = self.hashes[hid];
                    let (mut f, mut count, mut w, mut prev) = (list.head, 0u32, 0u64, NIL);
                    while f != NIL {
                        let j = f as usize;
                        if self.kind[j] != Kind::Field || self.family[j] != s || self.policy.links().prev(f) != prev {
                            return Err(format!("hash {s} lists slot {f}, not its field"));
                        }
                        count += 1;
                        if count > list.len {
                            return Err(format!("hash {s}: field list longer than {}", list.len));
                        }
                        w += u64::from(self.weight[j]);
                        prev = f;
                        f = self.policy.links().next(f);
                    }
                    if count != list.len || list.tail != prev || count == 0 {
                        return Err(format!("hash {s}: {count} fields linked, length {}", list.len));
                    }
                    if w != u64::from(self.weight[i]) {
                        return Err(format!("hash {s}: weight {} but fields weigh {w}", self.weight[i]));
                    }
                }
            }
            if self.times[i].deadline() != NEVER && !in_wheel {
                return Err(format!("{k:?} slot {s} has a finite deadline but is not in the wheel"));
            }
        }
        let fields_listed: u64 =
            self.hashes.iter().enumerate().filter(|(h, _)| hid_used[*h]).map(|(_, l)| u64::from(l.len)).sum();
        if fields_listed != fields {
            return Err(format!("{fields} field slots, {fields_listed} listed by hashes"));
        }
        for &hid in &self.hash_free {
            let h = hid as usize;
            if h >= self.hashes.len() || hid_used[h] || !self.hashes[h].is_empty() {
                return Err(format!("free field list {hid} is in use"));
            }
        }
        if (self.entries, self.keys, self.bytes) != (plain + fields, plain + hashes, bytes) {
            return Err(format!(
                "counts (entries, keys, bytes) = {:?}, recounted {:?}",
                (self.entries, self.keys, self.bytes),
                (plain + fields, plain + hashes, bytes)
            ));
        }
        if self.wheel.len() != scheduled {
            return Err(format!("wheel length {} but {scheduled} slots scheduled", self.wheel.len()));
        }
        let mut queued = self.policy.check()?;
        queued.sort_unstable();
        let mut keyed: Vec<u32> =
            (0..n as u32).filter(|&s| matches!(self.kind[s as usize], Kind::Plain | Kind::Hash)).collect();
        keyed.sort_unstable();
        if queued != keyed {
            return Err(format!("eviction queues hold {queued:?}, keys are {keyed:?}"));
        }
        if self.entries > self.max_entries || self.bytes > self.max_bytes {
            return Err(format!("over the bounds: {} entries, {} bytes", self.entries, self.bytes));
        }
        Ok(())
    }

    /// A slot's clocks (snapshots).
    pub fn times(&self, s: u32) -> Times {
        self.times[s as usize]
    }

    /// A slot's recorded size (snapshots).
    pub fn weight(&self, s: u32) -> u32 {
        self.weight[s as usize]
    }

    /// Slots in use, in slot order (snapshots).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))] // used by the native TtlCache
    pub fn occupied(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.kind.len() as u32).filter(move |&s| !matches!(self.kind[s as usize], Kind::Free | Kind::Reserved))
    }

    /// Sets `maxEntries` without preallocating for it: a restored engine
    /// grows as its entries arrive (a snapshot's bound is data, and a tiny
    /// hostile snapshot must not reserve a million slots).
    pub fn set_max_entries(&mut self, v: Option<u64>) {
        self.max_entries = sat(v);
    }

    /// Adds a slot with exact clocks, for restoring a snapshot: a `Plain` or
    /// `Hash` key (`parent` ignored) or a `Field` of hash slot `parent`. No
    /// eviction, no counters; keys go to the main queue in the order given.
    /// The caller has validated the clocks are live and the bounds hold.
    pub fn restore_slot(&mut self, kind: Kind, parent: u32, t: Times, weight: u32) -> u32 {
        let s = self.alloc(kind);
        let i = s as usize;
        self.weight[i] = weight;
        self.family[i] = NIL;
        match kind {
            Kind::Field => {
                self.family[i] = parent;
                let hid = self.family[parent as usize] as usize;
                self.policy.links_mut().push_front(&mut self.hashes[hid], s);
                self.weight[parent as usize] += weight;
                self.entries += 1;
            }
            Kind::Hash => {
                let hid = self.new_hash_list();
                self.family[i] = hid;
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
        self.times[i] = t;
        self.schedule(s);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(opts: Options) -> Engine {
        Engine::new(&opts, 0.0).unwrap()
    }

    fn plain(e: &mut Engine, ttl: f64, idle: f64) -> u32 {
        let c = e.resolve(&Write { ttl: Some(ttl), idle: Some(idle), ..Default::default() }).unwrap();
        e.insert(Kind::Plain, c, 0, false)
    }

    #[test]
    fn deadline_is_the_earlier_of_the_two_clocks() {
        let mut e = engine(Options::default());
        let s = plain(&mut e, 100.0, 30.0);
        assert_eq!(e.ttl_at(s, e.now()), 30.0);
        e.advance(20.0).unwrap();
        e.read(s);
        assert_eq!(e.ttl_at(s, e.now()), 30.0);
        e.advance(80.0).unwrap();
        e.read(s);
        assert_eq!(e.ttl_at(s, e.now()), 20.0, "absolute deadline caps the idle window");
        e.advance(100.0).unwrap();
        assert!(!e.is_live(s));
    }

    #[test]
    fn tick_respects_the_budget_and_resumes() {
        let mut e = engine(Options { sweep_budget: Some(10), ..Default::default() });
        for _ in 0..25 {
            plain(&mut e, 5.0, NEVER);
        }
        assert_eq!(e.tick(10.0).unwrap(), 10);
        assert_eq!(e.tick(10.0).unwrap(), 10);
        assert_eq!(e.tick(10.0).unwrap(), 5);
        assert_eq!(e.tick(10.0).unwrap(), 0);
        assert_eq!(e.keys(), 0);
        assert_eq!(e.log.len(), 25 * 3);
    }

    #[test]
    fn idle_reads_reschedule_lazily() {
        let mut e = engine(Options::default());
        let s = plain(&mut e, NEVER, 10.0);
        for t in 1..=50 {
            e.advance(t as f64 * 5.0).unwrap();
            e.read(s);
            e.tick(t as f64 * 5.0).unwrap();
            assert!(e.is_live(s));
        }
        assert!(e.counters.rescheduled > 0);
        e.tick(260.0).unwrap();
        assert_eq!(e.keys(), 0);
    }

    #[test]
    fn ticks_do_no_work_for_live_entries() {
        // 100k entries due in a day; a thousand ticks across the first
        // minute touch none of them: no pops, no cascades, no rescans.
        let mut e = engine(Options::default());
        for i in 0..100_000 {
            plain(&mut e, 86_400_000.0 + f64::from(i), NEVER);
        }
        for t in 1..=1000 {
            assert_eq!(e.tick(f64::from(t) * 60.0).unwrap(), 0);
        }
        assert_eq!(e.counters.cascaded + e.counters.rescheduled, 0);
        // Sweeping them costs a bounded number of moves per entry.
        let mut removed = 0;
        let mut t = 86_400_000.0;
        while removed < 100_000 {
            removed += e.tick(t).unwrap();
            t += 50.0;
        }
        assert!(e.counters.cascaded <= 100_000 * 10, "cascaded {}", e.counters.cascaded);
        assert_eq!(e.keys(), 0);
    }

    #[test]
    fn capacity_evicts_and_marks_ghosts() {
        let mut e = engine(Options { max_entries: Some(3), ..Default::default() });
        let a = plain(&mut e, NEVER, NEVER);
        for _ in 0..3 {
            plain(&mut e, NEVER, NEVER);
        }
        assert_eq!(e.entries(), 3);
        assert_eq!(&e.log[..], &[a, Reason::Evicted as u32 | (Kind::Plain as u32) << 4 | LOG_GHOST, NIL]);
    }

    #[test]
    fn removing_the_last_field_removes_the_hash() {
        let mut e = engine(Options::default());
        let h = e.insert(Kind::Hash, Clocks::NONE, 0, false);
        let c = e.resolve(&Write::default()).unwrap();
        let f1 = e.insert_field(h, c, 0);
        let f2 = e.insert_field(h, c, 0);
        assert_eq!((e.keys(), e.entries()), (1, 2));
        e.remove(f1, Reason::Deleted);
        assert_eq!(e.kind(h), Kind::Hash);
        e.remove(f2, Reason::Deleted);
        assert_eq!(e.kind(h), Kind::Free);
        assert_eq!((e.keys(), e.entries()), (0, 0));
    }

    #[test]
    fn grace_keeps_an_expired_slot_until_its_end_then_sweeps_it() {
        let mut e = engine(Options::default());
        e.set_grace(50.0);
        let s = plain(&mut e, 100.0, NEVER);
        let other = plain(&mut e, 100.0, NEVER);
        e.set_slot_grace(other, 10.0);
        assert_eq!(e.stale_until(s), 0.0, "live: no stale value");
        assert_eq!(e.tick(100.0).unwrap(), 0, "both enter grace, nothing removed");
        assert_eq!(&e.log[..3], &[s, LOG_ENTER_GRACE | (Kind::Plain as u32) << 4, NIL]);
        assert_eq!(e.graced_keys(), 2);
        assert!(!e.is_live(s));
        assert_eq!(e.stale_until(s), 150.0);
        assert_eq!(e.stale_until(other), 110.0);
        e.log.clear();
        assert_eq!(e.tick(110.0).unwrap(), 1, "its own grace ends first");
        assert_eq!(&e.log[..], &[other, Reason::Expired as u32 | (Kind::Plain as u32) << 4 | LOG_GRACED, NIL]);
        assert_eq!(e.tick(149.0).unwrap(), 0);
        assert_eq!(e.tick(150.0).unwrap(), 1);
        assert_eq!((e.keys(), e.entries(), e.graced_keys()), (0, 0, 0));
        assert_eq!(e.stale_until(s), 0.0);
    }

    #[test]
    fn a_graced_slot_leaves_as_expired_whatever_removes_it() {
        let mut e = engine(Options::default());
        e.set_grace(NEVER);
        let a = plain(&mut e, 10.0, NEVER);
        let b = plain(&mut e, 10.0, NEVER);
        e.advance(20.0).unwrap();
        assert_eq!(e.expire_found(a), 0, "a read finds it expired: it enters grace");
        assert_eq!(e.stale_until(a), NEVER);
        assert_eq!(e.purge(), 0, "infinite grace: nothing due");
        e.log.clear();
        e.remove(a, Reason::Deleted);
        assert_eq!(e.log[1], Reason::Expired as u32 | (Kind::Plain as u32) << 4 | LOG_GRACED);
        e.log.clear();
        e.clear();
        assert_eq!(e.log[1], Reason::Expired as u32 | (Kind::Plain as u32) << 4 | LOG_GRACED, "b was in grace");
        assert_eq!(e.log[0], b);
        assert_eq!(e.graced_keys(), 0);
        // A freed slot takes the default grace again.
        let c = plain(&mut e, 10.0, NEVER);
        e.set_slot_grace(c, 5.0);
        e.remove(c, Reason::Deleted);
        let d = plain(&mut e, 10.0, NEVER);
        assert_eq!(c, d);
        e.advance(30.0).unwrap();
        assert_eq!(e.stale_until(d), NEVER);
    }

    #[test]
    fn grace_costs_one_more_wheel_visit_per_entry() {
        let mut e = engine(Options { sweep_budget: Some(100), ..Default::default() });
        e.set_grace(1000.0);
        for i in 0..1000 {
            plain(&mut e, 10.0 + f64::from(i % 7), NEVER);
        }
        // Entering grace is work, not removal: one tick's work stays capped.
        e.tick(100.0).unwrap();
        assert!(e.log.len() / 3 <= 2 * 100 + 64, "one tick did {} records", e.log.len() / 3);
        let mut removed = 0;
        let mut t = 100.0;
        while removed < 1000 {
            removed += e.tick(t).unwrap();
            t += 100.0;
        }
        assert!(t < 3000.0);
        assert_eq!(e.counters.expired, 1000);
        assert_eq!((e.keys(), e.entries(), e.graced_keys()), (0, 0, 0));
    }

    #[test]
    fn a_field_enters_grace_but_its_hash_deadline_has_none() {
        let mut e = engine(Options::default());
        e.set_grace(100.0);
        let h = e.insert(Kind::Hash, Clocks::NONE, 0, false);
        let short = e.resolve(&Write { ttl: Some(10.0), ..Default::default() }).unwrap();
        let long = e.resolve(&Write::default()).unwrap();
        let f = e.insert_field(h, short, 0);
        e.insert_field(h, long, 0);
        e.tick(20.0).unwrap();
        assert_eq!(e.stale_until(f), 110.0);
        assert!(e.is_live(h));
        assert!(e.expire_at(h, 30.0, None));
        e.advance(30.0).unwrap();
        assert_eq!(e.stale_until(f), 0.0, "the hash's own deadline passed");
        e.tick(30.0).unwrap();
        assert_eq!((e.keys(), e.entries()), (0, 0));
    }

    #[test]
    fn a_hash_whose_fields_are_all_in_grace_is_in_grace() {
        let mut e = engine(Options::default());
        e.set_grace(100.0);
        let h = e.insert(Kind::Hash, Clocks::NONE, 0, false);
        let c = e.resolve(&Write { ttl: Some(10.0), ..Default::default() }).unwrap();
        let f1 = e.insert_field(h, c, 0);
        let f2 = e.insert_field(h, c, 0);
        e.advance(20.0).unwrap();
        assert_eq!(e.expire_found(f1), 0);
        assert_eq!(e.graced_keys(), 0, "one field still not in grace");
        assert_eq!(e.expire_found(h), 0, "the other field enters grace");
        assert_eq!(e.graced_keys(), 1);
        let hash_enters = LOG_ENTER_GRACE | (Kind::Hash as u32) << 4;
        assert_eq!(&e.log[e.log.len() - 3..], &[h, hash_enters, NIL]);
        e.log.clear();
        // Reads that find it again do no work: no walk, no wheel moves.
        let (scheduled, cascaded) = (e.scheduled(), e.counters.cascaded);
        assert_eq!(e.expire_found(h), 0);
        assert_eq!(e.expire_found(f1), 0);
        assert!(e.log.is_empty());
        assert_eq!((e.scheduled(), e.counters.cascaded), (scheduled, cascaded));
        e.remove(f2, Reason::Deleted);
        assert_eq!(e.graced_keys(), 1, "f1 still holds the hash in grace");
        // A hash whose last field not in grace is deleted enters grace too.
        let h2 = e.insert(Kind::Hash, Clocks::NONE, 0, false);
        let g1 = e.insert_field(h2, c, 0);
        let live = e.resolve(&Write::default()).unwrap();
        let g2 = e.insert_field(h2, live, 0);
        e.advance(40.0).unwrap();
        e.expire_found(g1);
        assert_eq!(e.graced_keys(), 1);
        e.remove(g2, Reason::Deleted);
        assert_eq!(e.graced_keys(), 2);
        e.remove(h2, Reason::Deleted);
        assert_eq!(e.graced_keys(), 1);
        e.tick(110.0).unwrap();
        let hash_leaves = Reason::Expired as u32 | (Kind::Hash as u32) << 4 | LOG_GRACED;
        assert_eq!(&e.log[e.log.len() - 3..], &[h, hash_leaves, NIL]);
        assert_eq!((e.keys(), e.entries(), e.graced_keys()), (0, 0, 0));
    }

    #[test]
    fn an_expired_hash_is_swept_within_the_budget() {
        let mut e = engine(Options { sweep_budget: Some(100), ..Default::default() });
        let h = e.insert(Kind::Hash, Clocks::NONE, 0, false);
        let c = e.resolve(&Write::default()).unwrap();
        for _ in 0..250 {
            e.insert_field(h, c, 0);
        }
        assert!(e.expire_at(h, 10.0, None));
        assert_eq!(e.tick(10.0).unwrap(), 100);
        assert_eq!(e.tick(10.0).unwrap(), 100);
        assert_eq!(e.tick(10.0).unwrap(), 50);
        assert_eq!((e.keys(), e.entries()), (0, 0));
    }
}
