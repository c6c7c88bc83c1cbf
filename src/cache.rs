//! The native Rust cache: a key index and values over the slot engine.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;

use crate::clock::{Follow, TimeSource};
use crate::engine::{Cond, Counters, Engine, Kind, Options, Reason, Times, Write, LOG_GHOST};
use crate::error::{Error, Result};
use crate::list::NIL;
use crate::snapshot::{Body, ClockMode, Clocks as SnapClocks, Entry as SnapEntry, Field as SnapField, Snapshot, Value};

/// Expired entries each write reclaims (as the JS binding's writes do).
const RECLAIM: u64 = 2;

enum Item<K, V> {
    Free,
    Plain { key: K, value: V },
    Hash { key: K, fields: HashMap<String, u32> },
    Field { name: String, value: V },
}

/// An entry or field that left the cache, as handed to the removal callback.
#[derive(Debug, Clone, PartialEq)]
pub struct Removed<K, V> {
    /// The key (for a field, its hash's key).
    pub key: K,
    /// The hash field, or `None` for a plain entry.
    pub field: Option<String>,
    /// The value it held.
    pub value: V,
    /// Why it left.
    pub reason: Reason,
}

/// A snapshot of the cache's counters and gauges.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Reads (`get`, `hget`) that found a live value.
    pub hits: u64,
    /// Reads that did not.
    pub misses: u64,
    /// Keys held (plain entries and hashes), including unswept expired ones.
    pub size: u64,
    /// Plain entries plus hash fields held.
    pub entries: u64,
    /// Total size of what is held, as given to `set_sized`/`hset_sized`.
    pub bytes: u64,
    /// Slots waiting in the expiry wheel.
    pub scheduled: u64,
    /// Keys in S3-FIFO's small (probation) queue.
    pub small_queue: u64,
    /// Bytes the engine's columns, wheel and queues occupy.
    pub engine_bytes: u64,
    /// Engine counters (expired, evicted, ...).
    pub counters: Counters,
}

type Callback<K, V> = Box<dyn FnMut(Removed<K, V>)>;

/// A cache whose entries expire at the earlier of an absolute deadline
/// (`ttl`) and a sliding idle window (`idle`), with hashes whose fields expire
/// on their own.
///
/// Time is milliseconds as `f64`, in a domain you choose. By default (`new`,
/// `with_options`) the clock is **manual**: it moves only when you call
/// [`tick`](Self::tick), which suits simulations, tests and hosts that own
/// time (and is what the JS package does with `{ now }`). To follow a clock
/// instead, as the JS package does with `Date.now()` by default, build the
/// cache with [`with_clock`](Self::with_clock) and a [`TimeSource`]
/// ([`SystemClock`](crate::SystemClock), [`MonotonicClock`](crate::MonotonicClock)
/// or a closure): every call then reads it, no `tick` is needed for
/// correctness, and each write reclaims a few expired entries so memory
/// stays bounded too.
///
/// ```
/// use lapse::{Options, TtlCache, Write};
/// let day = 86_400_000.0;
/// let opts = Options { ttl: Some(90.0 * day), idle: Some(30.0 * day), ..Default::default() };
/// let mut c = TtlCache::with_options(opts, 0.0).unwrap();
/// c.set("session", "alice", Write::default()).unwrap();
/// c.tick(29.0 * day).unwrap();
/// assert_eq!(c.get(&"session").unwrap(), Some(&"alice")); // read: idle restarts
/// c.tick(58.0 * day).unwrap();
/// assert!(c.contains(&"session"));
/// c.tick(90.0 * day).unwrap(); // busy, but the absolute deadline wins
/// assert!(!c.contains(&"session"));
/// ```
pub struct TtlCache<K, V> {
    engine: Engine,
    index: HashMap<K, u32>,
    items: Vec<Item<K, V>>,
    ghost: HashSet<K>,
    ghost_order: VecDeque<K>,
    bounded: bool,
    hits: u64,
    misses: u64,
    on_remove: Option<Callback<K, V>>,
    /// The followed time source, if not manual.
    follow: Option<Follow>,
}

impl<K: Hash + Eq + Clone, V> TtlCache<K, V> {
    /// An unbounded cache with no default clocks, starting at `now`.
    ///
    /// # Panics
    /// If `now` is not finite; use [`with_options`](Self::with_options) to
    /// get an error instead.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::<String, u8>::new(0.0);
    /// assert!(c.is_empty());
    /// ```
    pub fn new(now: f64) -> Self {
        Self::with_options(Options::default(), now).expect("now must be finite")
    }

    /// A cache with `opts`, starting at `now`.
    ///
    /// ```
    /// let o = lapse::Options { max_entries: Some(0), ..Default::default() };
    /// assert!(lapse::TtlCache::<u8, u8>::with_options(o, 0.0).is_err());
    /// ```
    pub fn with_options(opts: Options, now: f64) -> Result<Self> {
        let bounded = opts.max_entries.is_some() || opts.max_bytes.is_some();
        Ok(TtlCache {
            engine: Engine::new(&opts, now)?,
            index: HashMap::new(),
            items: Vec::new(),
            ghost: HashSet::new(),
            ghost_order: VecDeque::new(),
            bounded,
            hits: 0,
            misses: 0,
            on_remove: None,
            follow: None,
        })
    }

    /// A cache with `opts` that follows `source`, starting at its reading.
    ///
    /// ```
    /// use lapse::{Options, SystemClock, TtlCache, Write};
    /// let mut c = TtlCache::with_clock(Options { ttl: Some(60_000.0), ..Default::default() }, SystemClock).unwrap();
    /// c.set("k", 1, Write::default()).unwrap();
    /// assert!((c.ttl(&"k").unwrap() - 60_000.0).abs() < 1_000.0);
    /// ```
    pub fn with_clock(opts: Options, source: impl TimeSource + 'static) -> Result<Self> {
        let now = crate::clock::finite_time("now", source.now_ms())?;
        let mut c = Self::with_options(opts, now)?;
        c.follow = Some(Follow::new(Box::new(source), now));
        Ok(c)
    }

    /// Follows `source` from now on (a restored cache, for example), never
    /// running back behind the current clock.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::<u8, u8>::new(5000.0);
    /// c.follow(|| 1000.0); // behind: the clock stays at 5000
    /// assert_eq!(c.now(), 5000.0);
    /// c.follow(|| 7000.0);
    /// assert_eq!(c.now(), 7000.0);
    /// ```
    pub fn follow(&mut self, source: impl TimeSource + 'static) {
        self.follow = Some(Follow::new(Box::new(source), self.engine.now()));
        self.sync();
    }

    /// Whether the clock follows a [`TimeSource`] (else it is manual).
    ///
    /// ```
    /// assert!(!lapse::TtlCache::<u8, u8>::new(0.0).follows_clock());
    /// ```
    pub fn follows_clock(&self) -> bool {
        self.follow.is_some()
    }

    /// Calls `f` for every entry or field that leaves, after the cache's state
    /// is complete.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// let gone = Rc::new(RefCell::new(vec![]));
    /// let mut c = lapse::TtlCache::new(0.0);
    /// let g = gone.clone();
    /// c.on_remove(move |r| g.borrow_mut().push((r.key, r.reason)));
    /// c.set("a", 1, lapse::Write { ttl: Some(10.0), ..Default::default() }).unwrap();
    /// c.tick(10.0).unwrap();
    /// assert_eq!(*gone.borrow(), vec![("a", lapse::Reason::Expired)]);
    /// ```
    pub fn on_remove(&mut self, f: impl FnMut(Removed<K, V>) + 'static) {
        self.on_remove = Some(Box::new(f));
    }

    /// The cache-wide options.
    ///
    /// ```
    /// let c = lapse::TtlCache::<u8, u8>::new(0.0);
    /// assert_eq!(c.options().sweep_budget, Some(1000));
    /// ```
    pub fn options(&self) -> Options {
        self.engine.options()
    }

    // ---- plumbing -----------------------------------------------------------

    fn item(&mut self, s: u32) -> &mut Item<K, V> {
        let i = s as usize;
        if self.items.len() <= i {
            self.items.resize_with(self.engine.capacity().max(i + 1), || Item::Free);
        }
        &mut self.items[i]
    }

    /// Replays the engine's removal log, then runs the callback.
    fn drain(&mut self) {
        let out = self.replay();
        self.notify(out);
    }

    fn notify(&mut self, out: Vec<Removed<K, V>>) {
        if let Some(f) = self.on_remove.as_mut() {
            out.into_iter().for_each(f);
        }
    }

    /// Applies the engine's removal log to the index and values, returning
    /// what left for the callback, which runs only once the caller is done.
    fn replay(&mut self) -> Vec<Removed<K, V>> {
        let log = std::mem::take(&mut self.engine.log);
        let mut out = Vec::new();
        for rec in log.chunks_exact(3) {
            let (s, flags, parent) = (rec[0], rec[1], rec[2]);
            let reason = Reason::from_u8((flags & 15) as u8);
            match std::mem::replace(self.item(s), Item::Free) {
                Item::Plain { key, value } => {
                    self.index.remove(&key);
                    if flags & LOG_GHOST != 0 {
                        self.remember(key.clone());
                    }
                    out.push(Removed { key, field: None, value, reason });
                }
                Item::Hash { key, .. } => {
                    self.index.remove(&key);
                    if flags & LOG_GHOST != 0 {
                        self.remember(key);
                    }
                }
                Item::Field { name, value } => {
                    if let Item::Hash { key, fields } = self.item(parent) {
                        fields.remove(&name);
                        out.push(Removed { key: key.clone(), field: Some(name), value, reason });
                    }
                }
                Item::Free => {}
            }
        }
        let mut log = log;
        log.clear();
        self.engine.log = log;
        out
    }

    fn remember(&mut self, key: K) {
        let cap = self.engine.options().max_entries.unwrap_or(self.index.len().max(64) as u64) as usize;
        if self.ghost.insert(key.clone()) {
            self.ghost_order.push_back(key);
        }
        while self.ghost_order.len() > cap {
            if let Some(k) = self.ghost_order.pop_front() {
                self.ghost.remove(&k);
            }
        }
    }

    fn slot(&self, key: &K) -> Option<u32> {
        self.index.get(key).copied()
    }

    fn live_slot(&self, key: &K) -> Option<u32> {
        self.slot(key).filter(|&s| self.live(s))
    }

    /// The time reads judge liveness at: the engine's clock, or the latest
    /// reading of the followed source (`&self` reads refresh it without
    /// moving the engine).
    fn time(&self) -> f64 {
        match &self.follow {
            Some(f) => f.high().max(self.engine.now()),
            None => self.engine.now(),
        }
    }

    fn live(&self, s: u32) -> bool {
        self.engine.is_live_at(s, self.time())
    }

    /// Reads the followed source, for a `&self` method, before it looks at
    /// any slot.
    fn refresh(&self) {
        if let Some(f) = &self.follow {
            f.read();
        }
    }

    /// Reads the followed source and moves the engine's clock to it, for a
    /// `&mut self` method, before it looks at any slot.
    fn sync(&mut self) {
        if let Some(f) = &self.follow {
            // Readings are finite (Follow ignores others), so this cannot fail.
            let _ = self.engine.advance(f.read());
        }
    }

    /// The write-time reclaim, after a write's own changes.
    fn reclaim(&mut self) {
        self.engine.reclaim(RECLAIM);
    }

    fn is_hash(&self, s: u32) -> bool {
        self.engine.kind(s) == Kind::Hash
    }

    fn hash_slot(&self, key: &K) -> Result<Option<u32>> {
        match self.live_slot(key) {
            Some(s) if !self.is_hash(s) => Err(Error::WrongType { held: "plain value", wanted: "hash" }),
            other => Ok(other),
        }
    }

    fn field_slot(&self, h: Option<u32>, field: &str) -> Option<u32> {
        let Item::Hash { fields, .. } = &self.items[h? as usize] else {
            return None;
        };
        fields.get(field).copied().filter(|&f| self.live(f))
    }

    /// The live slot of `key` for a read; otherwise counts a miss and
    /// removes a dead slot on the spot (lazy expiry).
    fn live_or_miss(&mut self, key: &K) -> Option<u32> {
        let s = self.slot(key);
        if let Some(s) = s.filter(|&s| self.live(s)) {
            if self.is_hash(s) {
                // A `&mut` read: the engine's clock is the cache's here.
                self.engine.tidy_hash(s);
                self.drain();
            }
            return Some(s);
        }
        self.misses += 1;
        if let Some(s) = s {
            self.expire_now(s);
        }
        None
    }

    fn expire_now(&mut self, s: u32) {
        self.engine.remove(s, Reason::Expired);
        self.drain();
    }

    fn remaining(&self, s: u32) -> f64 {
        self.engine.ttl_at(s, self.time())
    }

    // ---- time ---------------------------------------------------------------

    /// The clock, in ms (a fresh reading of a followed source).
    ///
    /// ```
    /// assert_eq!(lapse::TtlCache::<u8, u8>::new(42.0).now(), 42.0);
    /// ```
    pub fn now(&self) -> f64 {
        self.refresh();
        self.time()
    }

    /// A time at or before the earliest deadline the cache holds
    /// (`f64::INFINITY` if none), to schedule the next [`tick`](Self::tick).
    /// It can be early (by up to the wheel bucket the deadline sits in),
    /// never late.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// assert_eq!(c.next_expiry(), f64::INFINITY);
    /// c.set("k", (), lapse::Write { ttl: Some(5000.0), ..Default::default() }).unwrap();
    /// assert!(c.next_expiry() <= 5000.0);
    /// ```
    pub fn next_expiry(&self) -> f64 {
        self.engine.next_expiry()
    }

    /// [`tick`](Self::tick) at a fresh reading of the followed source; a
    /// manual cache stays where it is and only sweeps.
    ///
    /// ```
    /// use std::sync::{atomic::{AtomicU64, Ordering}, Arc};
    /// let t = Arc::new(AtomicU64::new(0));
    /// let src = t.clone();
    /// let mut c = lapse::TtlCache::with_clock(Default::default(), move || src.load(Ordering::Relaxed) as f64).unwrap();
    /// c.set(1, (), lapse::Write { ttl: Some(5.0), ..Default::default() }).unwrap();
    /// t.store(9, Ordering::Relaxed);
    /// assert_eq!(c.tick_now(), 1);
    /// ```
    pub fn tick_now(&mut self) -> u64 {
        self.sync();
        let now = self.engine.now();
        self.tick(now).unwrap_or(0)
    }

    /// Advances the clock (an earlier `now` is ignored) and removes at most
    /// `sweep_budget` expired entries; returns how many it removed.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set(1, (), lapse::Write { ttl: Some(5.0), ..Default::default() }).unwrap();
    /// assert_eq!(c.tick(5.0).unwrap(), 1);
    /// assert!(c.tick(f64::NAN).is_err());
    /// ```
    pub fn tick(&mut self, now: f64) -> Result<u64> {
        self.sync();
        let n = self.engine.tick(now)?;
        self.drain();
        Ok(n)
    }

    /// Removes every expired entry now; returns how many.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::with_options(lapse::Options { sweep_budget: Some(0), ..Default::default() }, 0.0).unwrap();
    /// c.set(1, (), lapse::Write { ttl: Some(5.0), ..Default::default() }).unwrap();
    /// assert_eq!(c.tick(9.0).unwrap(), 0);
    /// assert_eq!(c.purge(), 1);
    /// ```
    pub fn purge(&mut self) -> u64 {
        self.sync();
        let n = self.engine.purge();
        self.drain();
        n
    }

    // ---- plain entries ------------------------------------------------------

    /// Writes `value` at `key`, with per-write clocks in `w`.
    ///
    /// A relative clock (`ttl`, `idle`, and the defaults) sets the deadline
    /// `now + ms` rounded to an `f64`. If that equals `now` (a `ttl` below the
    /// float resolution at `now`), the deadline is not in the future: like an
    /// `expire_at` in the past, the write stores nothing and deletes the key.
    /// A finite `ms` whose sum overflows to infinity is a range error, never
    /// a silent "no limit". `expire`/`hexpire` follow the same rule.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set("k", 1, lapse::Write { ttl: Some(100.0), idle: Some(10.0), ..Default::default() }).unwrap();
    /// assert_eq!(c.ttl(&"k"), Some(10.0));
    ///
    /// let mut late = lapse::TtlCache::new(1.7e12); // Date.now()-like: resolution 2^-12 ms
    /// late.set("k", 1, lapse::Write::default()).unwrap();
    /// late.set("k", 2, lapse::Write { ttl: Some(0.0001), ..Default::default() }).unwrap();
    /// assert!(!late.contains(&"k")); // now + 0.0001 == now: deleted
    ///
    /// let mut far = lapse::TtlCache::new(1.7e308);
    /// assert!(far.set("k", 1, lapse::Write { ttl: Some(1e308), ..Default::default() }).is_err());
    /// ```
    pub fn set(&mut self, key: K, value: V, w: Write) -> Result<()> {
        self.set_sized(key, value, w, 0)
    }

    /// [`set`](Self::set) with a size that counts against `max_bytes`.
    ///
    /// ```
    /// let o = lapse::Options { max_bytes: Some(10), ..Default::default() };
    /// let mut c = lapse::TtlCache::with_options(o, 0.0).unwrap();
    /// c.set_sized("a", (), Default::default(), 6).unwrap();
    /// c.set_sized("b", (), Default::default(), 6).unwrap(); // evicts "a"
    /// assert!(!c.contains(&"a"));
    /// assert!(c.set_sized("c", (), Default::default(), 11).is_err());
    /// ```
    pub fn set_sized(&mut self, key: K, value: V, w: Write, size: u32) -> Result<()> {
        self.sync();
        let s = self.slot(&key);
        if s.is_some_and(|s| self.live(s) && self.is_hash(s)) {
            return Err(Error::WrongType { held: "hash", wanted: "plain value" });
        }
        let to_main = s.is_none() && self.bounded && self.ghost.contains(&key);
        let r = self.engine.write(s, &w, size, to_main)?;
        self.reclaim();
        if to_main {
            self.ghost.remove(&key);
        }
        // Replay first: the slot handed out may be one this write just freed.
        let mut out = self.replay();
        if let Some(r) = r {
            match self.item(r) {
                Item::Plain { value: old, .. } => {
                    let value = std::mem::replace(old, value);
                    out.push(Removed { key: key.clone(), field: None, value, reason: Reason::Replaced });
                }
                slot => {
                    *slot = Item::Plain { key: key.clone(), value };
                    self.index.insert(key.clone(), r);
                }
            }
        }
        self.notify(out);
        Ok(())
    }

    /// The live value at `key`, restarting its idle window.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set("k", 1, lapse::Write { idle: Some(10.0), ..Default::default() }).unwrap();
    /// c.tick(9.0).unwrap();
    /// assert_eq!(c.get(&"k").unwrap(), Some(&1));
    /// c.tick(18.0).unwrap();
    /// assert_eq!(c.get(&"k").unwrap(), Some(&1)); // 9 ms idle since the last read
    /// ```
    pub fn get(&mut self, key: &K) -> Result<Option<&V>> {
        self.sync();
        let Some(s) = self.live_or_miss(key) else { return Ok(None) };
        if self.is_hash(s) {
            return Err(Error::WrongType { held: "hash", wanted: "plain value" });
        }
        self.engine.read(s);
        self.hits += 1;
        match &self.items[s as usize] {
            Item::Plain { value, .. } => Ok(Some(value)),
            _ => Ok(None),
        }
    }

    /// The live value at `key` without touching it.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set("k", 1, Default::default()).unwrap();
    /// assert_eq!(c.peek(&"k").unwrap(), Some(&1));
    /// ```
    pub fn peek(&self, key: &K) -> Result<Option<&V>> {
        self.refresh();
        match self.live_slot(key) {
            None => Ok(None),
            Some(s) => match &self.items[s as usize] {
                Item::Plain { value, .. } => Ok(Some(value)),
                _ => Err(Error::WrongType { held: "hash", wanted: "plain value" }),
            },
        }
    }

    /// Whether `key` holds a live entry or hash. No touch.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set("k", 1, lapse::Write { ttl: Some(1.0), ..Default::default() }).unwrap();
    /// assert!(c.contains(&"k"));
    /// c.tick(1.0).unwrap();
    /// assert!(!c.contains(&"k"));
    /// ```
    pub fn contains(&self, key: &K) -> bool {
        self.refresh();
        self.live_slot(key).is_some()
    }

    /// Restarts `key`'s idle window; `false` if missing.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::<&str, u8>::new(0.0);
    /// assert!(!c.touch(&"k"));
    /// ```
    pub fn touch(&mut self, key: &K) -> bool {
        self.sync();
        match self.live_slot(key) {
            Some(s) => {
                self.engine.read(s);
                true
            }
            None => false,
        }
    }

    /// Sets the absolute deadline `ms` from now (`ms <= 0` deletes), if `cond`
    /// holds. Returns whether anything changed.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set("k", 1, Default::default()).unwrap();
    /// assert!(c.expire(&"k", 0.0, None).unwrap());
    /// assert!(!c.contains(&"k"));
    /// ```
    pub fn expire(&mut self, key: &K, ms: f64, cond: Option<Cond>) -> Result<bool> {
        self.sync();
        let s = self.live_slot(key);
        let r = self.engine.set_expiry(s, ms, true, cond)?;
        self.drain();
        Ok(r)
    }

    /// Sets the absolute deadline at time `t` (a past time deletes), if `cond`
    /// holds.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set("k", 1, Default::default()).unwrap();
    /// assert!(c.expire_at(&"k", 50.0, Some(lapse::Cond::Nx)).unwrap());
    /// assert!(!c.expire_at(&"k", 90.0, Some(lapse::Cond::Lt)).unwrap());
    /// assert_eq!(c.ttl(&"k"), Some(50.0));
    /// ```
    pub fn expire_at(&mut self, key: &K, t: f64, cond: Option<Cond>) -> Result<bool> {
        self.sync();
        let s = self.live_slot(key);
        let r = self.engine.set_expiry(s, t, false, cond)?;
        self.drain();
        Ok(r)
    }

    /// Drops both clocks; `true` if the key had one.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set("k", 1, lapse::Write { ttl: Some(5.0), ..Default::default() }).unwrap();
    /// assert!(c.persist(&"k"));
    /// assert_eq!(c.ttl(&"k"), Some(f64::INFINITY));
    /// ```
    pub fn persist(&mut self, key: &K) -> bool {
        self.sync();
        self.live_slot(key).is_some_and(|s| self.engine.persist(s))
    }

    /// Ms to the earliest deadline (`f64::INFINITY` if none), or `None` if
    /// missing.
    ///
    /// ```
    /// let c = lapse::TtlCache::<u8, u8>::new(0.0);
    /// assert_eq!(c.ttl(&1), None);
    /// ```
    pub fn ttl(&self, key: &K) -> Option<f64> {
        self.refresh();
        self.live_slot(key).map(|s| self.remaining(s))
    }

    /// Removes `key` (a plain entry or a whole hash); `true` if it was live.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set("k", 1, Default::default()).unwrap();
    /// assert!(c.delete(&"k"));
    /// assert!(!c.delete(&"k"));
    /// ```
    pub fn delete(&mut self, key: &K) -> bool {
        self.sync();
        let Some(s) = self.slot(key) else {
            return false;
        };
        let live = self.live(s);
        self.engine.remove(s, if live { Reason::Deleted } else { Reason::Expired });
        self.drain();
        live
    }

    /// Removes everything.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set("k", 1, Default::default()).unwrap();
    /// c.clear();
    /// assert!(c.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.engine.clear();
        self.drain();
    }

    /// Checks the engine's internal invariants (see the engine) and that the
    /// key index, values and hash field maps match it slot for slot. For
    /// tests and fuzzers: built in debug builds and with the `invariants`
    /// feature; O(capacity).
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// c.check_invariants().unwrap();
    /// ```
    #[cfg(any(debug_assertions, feature = "invariants"))]
    #[doc(hidden)]
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        self.engine.check_invariants()?;
        if self.index.len() as u64 != self.engine.keys() {
            return Err(format!("index holds {} keys, engine {}", self.index.len(), self.engine.keys()));
        }
        let mut fields = 0u64;
        for (key, &s) in &self.index {
            let i = s as usize;
            match (self.items.get(i), self.engine.kind(s)) {
                (Some(Item::Plain { key: k, .. }), Kind::Plain) if k == key => {}
                (Some(Item::Hash { key: k, fields: fs }), Kind::Hash) if k == key => {
                    if fs.len() as u32 != self.engine.field_count(s) {
                        return Err(format!(
                            "hash slot {s}: {} named fields, engine {}",
                            fs.len(),
                            self.engine.field_count(s)
                        ));
                    }
                    for (name, &f) in fs {
                        match self.items.get(f as usize) {
                            Some(Item::Field { name: n, .. }) if n == name && self.engine.parent(f) == s => {}
                            _ => return Err(format!("hash slot {s}: field {name:?} at slot {f} is not that field")),
                        }
                    }
                    fields += fs.len() as u64;
                }
                _ => return Err(format!("index points a key at slot {s}, which holds something else")),
            }
        }
        let held = self.items.iter().filter(|it| !matches!(it, Item::Free)).count() as u64;
        if held != self.engine.keys() + fields {
            return Err(format!("{held} items held, {} keys + {fields} fields live", self.engine.keys()));
        }
        Ok(())
    }

    /// Keys held, counting expired ones no sweep has reached yet.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set(1, 1, Default::default()).unwrap();
    /// assert_eq!(c.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no keys are held.
    ///
    /// ```
    /// assert!(lapse::TtlCache::<u8, u8>::new(0.0).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Live plain entries, in no particular order. No touch.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set("a", 1, Default::default()).unwrap();
    /// assert_eq!(c.iter().collect::<Vec<_>>(), vec![(&"a", &1)]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> + '_ {
        self.refresh();
        self.index.iter().filter_map(move |(k, &s)| match &self.items[s as usize] {
            Item::Plain { value, .. } if self.live(s) => Some((k, value)),
            _ => None,
        })
    }

    /// Live keys (plain and hash), in no particular order.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::<&str, u8>::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert_eq!(c.keys().collect::<Vec<_>>(), vec![&"h"]);
    /// ```
    pub fn keys(&self) -> impl Iterator<Item = &K> + '_ {
        self.refresh();
        self.index.iter().filter(move |(_, &s)| self.live(s)).map(|(k, _)| k)
    }

    /// Counters and gauges.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::<u8, u8>::new(0.0);
    /// c.get(&1).unwrap();
    /// assert_eq!(c.stats().misses, 1);
    /// ```
    pub fn stats(&self) -> Stats {
        Stats {
            hits: self.hits,
            misses: self.misses,
            size: self.engine.keys(),
            entries: self.engine.entries(),
            bytes: self.engine.bytes(),
            scheduled: self.engine.scheduled() as u64,
            small_queue: u64::from(self.engine.small_len()),
            engine_bytes: self.engine.memory() as u64,
            counters: self.engine.counters,
        }
    }

    // ---- hashes -------------------------------------------------------------

    /// Writes a hash field with its own clocks; `true` if the field is new.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// assert!(c.hset("user", "token", 7, lapse::Write { ttl: Some(10.0), ..Default::default() }).unwrap());
    /// assert!(!c.hset("user", "token", 8, Default::default()).unwrap());
    /// assert!(c.set("user", 1, Default::default()).is_err()); // WRONGTYPE
    /// ```
    pub fn hset(&mut self, key: K, field: &str, value: V, w: Write) -> Result<bool> {
        self.hset_sized(key, field, value, w, 0)
    }

    /// [`hset`](Self::hset) with a size that counts against `max_bytes`.
    ///
    /// ```
    /// let o = lapse::Options { max_bytes: Some(10), ..Default::default() };
    /// let mut c = lapse::TtlCache::with_options(o, 0.0).unwrap();
    /// c.hset_sized("h", "a", (), Default::default(), 6).unwrap();
    /// assert!(c.hset_sized("h", "b", (), Default::default(), 6).is_err()); // the hash alone would not fit
    /// ```
    pub fn hset_sized(&mut self, key: K, field: &str, value: V, w: Write, size: u32) -> Result<bool> {
        self.sync();
        let h = self.slot(&key);
        let live_h = self.hash_slot(&key)?;
        let f = live_h.and_then(|h| match &self.items[h as usize] {
            Item::Hash { fields, .. } => fields.get(field).copied(),
            _ => None,
        });
        let to_main = h.is_none() && self.bounded && self.ghost.contains(&key);
        let r = self.engine.hwrite(h, f, &w, size, to_main)?;
        self.reclaim();
        if to_main {
            self.ghost.remove(&key);
        }
        let Some(r) = r else {
            self.drain();
            return Ok(false);
        };
        let hs = self.engine.parent(r);
        // Replay first: the slots handed out may be ones this write just freed.
        let mut out = self.replay();
        if !matches!(self.item(hs), Item::Hash { .. }) {
            *self.item(hs) = Item::Hash { key: key.clone(), fields: HashMap::new() };
            self.index.insert(key.clone(), hs);
        }
        let is_new = match self.item(r) {
            Item::Field { value: old, .. } => {
                let value = std::mem::replace(old, value);
                out.push(Removed { key, field: Some(field.to_owned()), value, reason: Reason::Replaced });
                false
            }
            slot => {
                *slot = Item::Field { name: field.to_owned(), value };
                true
            }
        };
        if let Item::Hash { fields, .. } = self.item(hs) {
            fields.insert(field.to_owned(), r);
        }
        self.notify(out);
        Ok(is_new)
    }

    /// A live field's value, restarting the field's and the key's idle windows.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert_eq!(c.hget(&"h", "f").unwrap(), Some(&1));
    /// assert_eq!(c.hget(&"h", "g").unwrap(), None);
    /// ```
    pub fn hget(&mut self, key: &K, field: &str) -> Result<Option<&V>> {
        self.sync();
        let Some(s) = self.live_or_miss(key) else { return Ok(None) };
        let Item::Hash { fields, .. } = &self.items[s as usize] else {
            return Err(Error::WrongType { held: "plain value", wanted: "hash" });
        };
        let Some(f) = fields.get(field).copied() else {
            self.misses += 1;
            return Ok(None);
        };
        if !self.live(f) {
            self.misses += 1;
            self.expire_now(f);
            return Ok(None);
        }
        self.engine.read(f);
        self.hits += 1;
        match &self.items[f as usize] {
            Item::Field { value, .. } => Ok(Some(value)),
            _ => Ok(None),
        }
    }

    /// Whether the field is live. No touch.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::<&str, u8>::new(0.0);
    /// assert!(!c.hhas(&"h", "f").unwrap());
    /// ```
    pub fn hhas(&self, key: &K, field: &str) -> Result<bool> {
        self.refresh();
        Ok(self.field_slot(self.hash_slot(key)?, field).is_some())
    }

    /// Removes a field; the last one takes its key.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert!(c.hdel(&"h", "f").unwrap());
    /// assert!(!c.contains(&"h"));
    /// ```
    pub fn hdel(&mut self, key: &K, field: &str) -> Result<bool> {
        self.sync();
        let Some(f) = self.field_slot(self.hash_slot(key)?, field) else {
            return Ok(false);
        };
        self.engine.remove(f, Reason::Deleted);
        self.drain();
        Ok(true)
    }

    /// Number of live fields.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.hset("h", "a", 1, Default::default()).unwrap();
    /// c.hset("h", "b", 2, lapse::Write { ttl: Some(5.0), ..Default::default() }).unwrap();
    /// c.tick(5.0).unwrap();
    /// assert_eq!(c.hlen(&"h").unwrap(), 1);
    /// ```
    pub fn hlen(&self, key: &K) -> Result<usize> {
        Ok(self.hgetall(key)?.len())
    }

    /// The live fields and their values, in no particular order. No touch.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.hset("h", "a", 1, Default::default()).unwrap();
    /// assert_eq!(c.hgetall(&"h").unwrap(), vec![("a", &1)]);
    /// ```
    pub fn hgetall(&self, key: &K) -> Result<Vec<(&str, &V)>> {
        self.refresh();
        let Some(h) = self.hash_slot(key)? else {
            return Ok(vec![]);
        };
        let Item::Hash { fields, .. } = &self.items[h as usize] else {
            return Ok(vec![]);
        };
        Ok(fields
            .iter()
            .filter(|(_, &f)| self.live(f))
            .filter_map(|(name, &f)| match &self.items[f as usize] {
                Item::Field { value, .. } => Some((name.as_str(), value)),
                _ => None,
            })
            .collect())
    }

    /// Sets a field's absolute deadline `ms` from now (`<= 0` deletes it).
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert!(c.hexpire(&"h", "f", 10.0, None).unwrap());
    /// assert_eq!(c.httl(&"h", "f").unwrap(), Some(10.0));
    /// ```
    pub fn hexpire(&mut self, key: &K, field: &str, ms: f64, cond: Option<Cond>) -> Result<bool> {
        self.sync();
        let f = self.field_slot(self.hash_slot(key)?, field);
        let r = self.engine.set_expiry(f, ms, true, cond)?;
        self.drain();
        Ok(r)
    }

    /// Sets a field's absolute deadline at time `t` (a past time deletes it).
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert!(c.hexpire_at(&"h", "f", 0.0, None).unwrap());
    /// assert!(!c.contains(&"h"));
    /// ```
    pub fn hexpire_at(&mut self, key: &K, field: &str, t: f64, cond: Option<Cond>) -> Result<bool> {
        self.sync();
        let f = self.field_slot(self.hash_slot(key)?, field);
        let r = self.engine.set_expiry(f, t, false, cond)?;
        self.drain();
        Ok(r)
    }

    /// Drops a field's clocks; `true` if it had one.
    ///
    /// ```
    /// let mut c = lapse::TtlCache::<&str, u8>::new(0.0);
    /// assert!(!c.hpersist(&"h", "f").unwrap());
    /// ```
    pub fn hpersist(&mut self, key: &K, field: &str) -> Result<bool> {
        self.sync();
        let f = self.field_slot(self.hash_slot(key)?, field);
        Ok(f.is_some_and(|f| self.engine.persist(f)))
    }

    /// Ms until the field goes (its own clocks or its key's, whichever first).
    ///
    /// ```
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert_eq!(c.httl(&"h", "f").unwrap(), Some(f64::INFINITY));
    /// ```
    pub fn httl(&self, key: &K, field: &str) -> Result<Option<f64>> {
        self.refresh();
        let h = self.hash_slot(key)?;
        Ok(self.field_slot(h, field).map(|f| self.remaining(f)))
    }

    // ---- snapshots ----------------------------------------------------------

    /// Captures the clock, the options and every live entry and field with
    /// its exact clocks and size, converting keys and values with `key` and
    /// `value` (which also sees the key and the field name). Keys come in slot
    /// order, fields in insertion order. Encode it with
    /// [`snapshot::encode`](crate::snapshot::encode). The cache is not changed.
    ///
    /// ```
    /// use lapse::snapshot::{self, Value};
    /// let mut c = lapse::TtlCache::new(0.0);
    /// c.set("k".to_string(), 7.0, lapse::Write { ttl: Some(50.0), ..Default::default() }).unwrap();
    /// let units = |k: &String| k.encode_utf16().collect::<Vec<u16>>();
    /// let snap = c.snapshot_with(units, |_, _, v| Ok(Value::Number(*v))).unwrap();
    /// let bytes = snapshot::encode(&snap).unwrap();
    ///
    /// let back = snapshot::decode(&bytes).unwrap();
    /// let key = |u: &[u16]| Ok(String::from_utf16_lossy(u));
    /// let val = |v: &Value| match v { Value::Number(x) => Ok(*x), _ => Err(lapse::Error::Corrupt("not a number".into())) };
    /// let r: lapse::TtlCache<String, f64> = lapse::TtlCache::restore_with(&back, key, val).unwrap();
    /// assert_eq!(r.ttl(&"k".to_string()), Some(50.0));
    /// ```
    pub fn snapshot_with(
        &self,
        mut key: impl FnMut(&K) -> Vec<u16>,
        mut value: impl FnMut(&K, Option<&str>, &V) -> Result<Value>,
    ) -> Result<Snapshot> {
        let stamp = |s: u32| {
            let t = self.engine.times(s);
            SnapClocks { abs: t.abs, last: t.last, idle: t.idle }
        };
        self.refresh();
        let mut entries = Vec::new();
        for s in self.engine.occupied() {
            if !self.live(s) {
                continue;
            }
            let body = match self.items.get(s as usize) {
                Some(Item::Plain { key: k, value: v }) => {
                    Body::Plain { weight: self.engine.weight(s), value: value(k, None, v)? }
                }
                Some(Item::Hash { key: k, .. }) => {
                    let mut slots: Vec<u32> = self.engine.fields(s).filter(|&f| self.live(f)).collect();
                    slots.reverse();
                    let mut fields = Vec::with_capacity(slots.len());
                    for f in slots {
                        if let Some(Item::Field { name, value: v }) = self.items.get(f as usize) {
                            fields.push(SnapField {
                                name: name.encode_utf16().collect(),
                                clocks: stamp(f),
                                weight: self.engine.weight(f),
                                value: value(k, Some(name), v)?,
                            });
                        }
                    }
                    Body::Hash { fields }
                }
                _ => continue,
            };
            let k = match &self.items[s as usize] {
                Item::Plain { key: k, .. } | Item::Hash { key: k, .. } => key(k),
                _ => continue,
            };
            entries.push(SnapEntry { key: k, clocks: stamp(s), body });
        }
        let clock = if self.follow.is_some() { ClockMode::Follow } else { ClockMode::Manual };
        Ok(Snapshot { now: self.time(), clock, options: self.engine.options(), entries })
    }

    /// A new cache holding exactly what `snap` holds: options, clock, entries
    /// and fields with their clocks and sizes. `key` and `value` convert back;
    /// field names must be valid UTF-16 here (a `String`). The snapshot is
    /// validated first; no callback is set. The clock is manual at the
    /// snapshot's time, whatever `snap.clock` says (a time source is not
    /// data): call [`follow`](Self::follow) to follow one again.
    pub fn restore_with(
        snap: &Snapshot,
        mut key: impl FnMut(&[u16]) -> Result<K>,
        mut value: impl FnMut(&Value) -> Result<V>,
    ) -> Result<Self> {
        snap.validate()?;
        // No preallocation for maxEntries: the cache grows as entries arrive.
        let mut opts = snap.options.clone();
        let max_entries = opts.max_entries.take();
        let mut c = Self::with_options(opts, snap.now)?;
        c.engine.set_max_entries(max_entries);
        c.bounded |= max_entries.is_some();
        let times = |t: &SnapClocks| Times { abs: t.abs, last: t.last, idle: t.idle };
        for e in &snap.entries {
            let k = key(&e.key)?;
            if c.index.contains_key(&k) {
                return Err(Error::ty("key", "two snapshot keys convert to the same key"));
            }
            match &e.body {
                Body::Plain { weight, value: v } => {
                    let v = value(v)?;
                    let s = c.engine.restore_slot(Kind::Plain, NIL, times(&e.clocks), *weight);
                    *c.item(s) = Item::Plain { key: k.clone(), value: v };
                    c.index.insert(k, s);
                }
                Body::Hash { fields } => {
                    let mut conv = Vec::with_capacity(fields.len());
                    for f in fields {
                        let name = String::from_utf16(&f.name)
                            .map_err(|_| Error::ty("field", "a field name is not valid UTF-16"))?;
                        conv.push((name, value(&f.value)?));
                    }
                    let h = c.engine.restore_slot(Kind::Hash, NIL, times(&e.clocks), 0);
                    let mut names = HashMap::with_capacity(conv.len());
                    for (f, (name, v)) in fields.iter().zip(conv) {
                        let s = c.engine.restore_slot(Kind::Field, h, times(&f.clocks), f.weight);
                        names.insert(name.clone(), s);
                        *c.item(s) = Item::Field { name, value: v };
                    }
                    *c.item(h) = Item::Hash { key: k.clone(), fields: names };
                    c.index.insert(k, h);
                }
            }
        }
        Ok(c)
    }
}

impl<K, V> std::fmt::Debug for TtlCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtlCache")
            .field("now", &self.engine.now())
            .field("follows_clock", &self.follow.is_some())
            .field("keys", &self.engine.keys())
            .field("entries", &self.engine.entries())
            .finish()
    }
}
