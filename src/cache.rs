//! The native Rust cache: a key index and values over the slot engine.

use std::borrow::Borrow;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hash};

use hashbrown::{DefaultHashBuilder, HashSet, HashTable};

use crate::clock::{Follow, TimeSource};
use crate::engine::{Cond, Counters, Engine, Kind, Options, Reason, Times, Write, LOG_GHOST};
use crate::error::{Error, Result};
use crate::list::NIL;
use crate::snapshot::{Body, ClockMode, Clocks as SnapClocks, Entry as SnapEntry, Field as SnapField, Snapshot, Value};

/// Expired entries [`TtlCache::purge`] removes between two replays of the log.
const PURGE_BATCH: u64 = 4096;

/// Expired entries each write reclaims (as the JS binding's writes do).
const RECLAIM: u64 = 2;

enum Item<K, V> {
    Free,
    Plain { key: K, value: V },
    Hash { key: K, fields: HashMap<String, u32> },
    Field { name: String, value: V },
}

/// The key an item holds (a plain entry's or a hash's).
fn key_in<K, V>(items: &[Item<K, V>], s: u32) -> Option<&K> {
    match items.get(s as usize)? {
        Item::Plain { key, .. } | Item::Hash { key, .. } => Some(key),
        _ => None,
    }
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

type Callback<K, V> = Box<dyn FnMut(Removed<K, V>) + Send>;

/// The removal callback, `Sync` whatever it captures: it is only ever called
/// through `&mut TtlCache`, and no `&self` method reaches it, so sharing a
/// `&TtlCache` across threads never shares the closure (as `std::sync::Exclusive`).
struct OnRemove<K, V>(Callback<K, V>);

// SAFETY: no method takes `&OnRemove` and the field is private; the closure is
// reached only through `&mut`, which is exclusive, so `&OnRemove` on two threads
// can do nothing with it.
unsafe impl<K, V> Sync for OnRemove<K, V> {}

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
/// use lapse_cache::{Options, TtlCache, SetOptions};
/// let day = 86_400_000.0;
/// let opts = Options { ttl: Some(90.0 * day), idle: Some(30.0 * day), ..Default::default() };
/// let mut c = TtlCache::with_options(opts, 0.0).unwrap();
/// c.set("session", "alice", SetOptions::default()).unwrap();
/// c.tick(29.0 * day).unwrap();
/// assert_eq!(c.get("session"), Some(&"alice")); // read: idle restarts
/// c.tick(58.0 * day).unwrap();
/// assert!(c.contains(&"session"));
/// c.tick(90.0 * day).unwrap(); // busy, but the absolute deadline wins
/// assert!(!c.contains(&"session"));
/// ```
pub struct TtlCache<K, V, S = DefaultHashBuilder> {
    engine: Engine,
    /// Key index: slots, found by the key each slot's item holds (keys are
    /// stored once, in `items`), hashed once per operation with `hasher`.
    index: HashTable<u32>,
    hasher: S,
    items: Vec<Item<K, V>>,
    ghost: HashSet<u64>,
    ghost_order: VecDeque<u64>,
    bounded: bool,
    hits: u64,
    misses: u64,
    on_remove: Option<OnRemove<K, V>>,
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
    /// let mut c = lapse_cache::TtlCache::<String, u8>::new(0.0);
    /// assert!(c.is_empty());
    /// ```
    pub fn new(now: f64) -> Self {
        Self::with_options(Options::default(), now).expect("now must be finite")
    }

    /// A cache with `opts`, starting at `now`.
    ///
    /// ```
    /// let o = lapse_cache::Options { max_entries: Some(0), ..Default::default() };
    /// assert!(lapse_cache::TtlCache::<u8, u8>::with_options(o, 0.0).is_err());
    /// ```
    pub fn with_options(opts: Options, now: f64) -> Result<Self> {
        Self::with_hasher(opts, now, DefaultHashBuilder::default())
    }

    /// A cache with `opts` that follows `source`, starting at its reading.
    ///
    /// ```
    /// use lapse_cache::{Options, SystemClock, TtlCache, Write};
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
}

impl<K: Hash + Eq + Clone, V, S: BuildHasher> TtlCache<K, V, S> {
    /// A cache with `opts`, starting at `now`, whose key index hashes with
    /// `hasher` (the default is foldhash's, seeded per process; pass
    /// `std::hash::RandomState` for SipHash if keys come from an attacker who
    /// can observe timings).
    ///
    /// ```
    /// use std::hash::RandomState;
    /// let mut c = lapse_cache::TtlCache::with_hasher(Default::default(), 0.0, RandomState::new()).unwrap();
    /// c.set("a", 1, Default::default()).unwrap();
    /// assert_eq!(c.get("a"), Some(&1));
    /// ```
    pub fn with_hasher(opts: Options, now: f64, hasher: S) -> Result<Self> {
        let bounded = opts.max_entries.is_some() || opts.max_bytes.is_some();
        Ok(TtlCache {
            engine: Engine::new(&opts, now).map_err(native)?,
            index: HashTable::new(),
            hasher,
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

    /// Follows `source` from now on (a restored cache, for example), never
    /// running back behind the current clock.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::<u8, u8>::new(5000.0);
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
    /// assert!(!lapse_cache::TtlCache::<u8, u8>::new(0.0).follows_clock());
    /// ```
    pub fn follows_clock(&self) -> bool {
        self.follow.is_some()
    }

    /// Calls `f` for every entry or field that leaves, after the cache's state
    /// is complete.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// let gone = Arc::new(Mutex::new(vec![]));
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// let g = gone.clone();
    /// c.on_remove(move |r| g.lock().unwrap().push((r.key, r.reason)));
    /// c.set("a", 1, lapse_cache::SetOptions { ttl: Some(10.0), ..Default::default() }).unwrap();
    /// c.tick(10.0).unwrap();
    /// assert_eq!(*gone.lock().unwrap(), vec![("a", lapse_cache::Reason::Expired)]);
    /// ```
    pub fn on_remove(&mut self, f: impl FnMut(Removed<K, V>) + Send + 'static) {
        self.on_remove = Some(OnRemove(Box::new(f)));
    }

    /// The cache-wide options.
    ///
    /// ```
    /// let c = lapse_cache::TtlCache::<u8, u8>::new(0.0);
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
        let (out, _) = self.replay::<K>(None);
        self.notify(out);
    }

    fn notify(&mut self, out: Vec<Removed<K, V>>) {
        if let Some(OnRemove(f)) = self.on_remove.as_mut() {
            out.into_iter().for_each(f);
        }
    }

    /// Applies the engine's removal log to the index and values, returning
    /// what left for the callback (which runs only once the caller is done;
    /// with no callback nothing is collected), and apart from it the plain
    /// value of `own` if it left other than by eviction (the value `set` or
    /// `remove` hands back to its caller).
    fn replay<Q>(&mut self, own: Option<&Q>) -> (Vec<Removed<K, V>>, Option<V>)
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let log = std::mem::take(&mut self.engine.log);
        let keep = self.on_remove.is_some();
        let mut out = Vec::new();
        let mut mine = None;
        for rec in log.chunks_exact(3) {
            let (s, flags, parent) = (rec[0], rec[1], rec[2]);
            let reason = Reason::from_u8((flags & 15) as u8);
            match std::mem::replace(self.item(s), Item::Free) {
                Item::Plain { key, value } => {
                    let h = self.unindex(&key, s);
                    if flags & LOG_GHOST != 0 {
                        self.remember(h);
                    }
                    if reason != Reason::Evicted && own.is_some_and(|o| key.borrow() == o) {
                        mine = Some(value);
                    } else if keep {
                        out.push(Removed { key, field: None, value, reason });
                    }
                }
                Item::Hash { key, .. } => {
                    let h = self.unindex(&key, s);
                    if flags & LOG_GHOST != 0 {
                        self.remember(h);
                    }
                }
                Item::Field { name, value } => {
                    if let Item::Hash { key, fields } = self.item(parent) {
                        fields.remove(&name);
                        if keep {
                            out.push(Removed { key: key.clone(), field: Some(name), value, reason });
                        }
                    }
                }
                Item::Free => {}
            }
        }
        let mut log = log;
        log.clear();
        self.engine.log = log;
        (out, mine)
    }

    /// Records an evicted key for S3-FIFO's ghost queue by its hash only: a
    /// collision merely admits a new key to the main queue, and the ghost
    /// list then costs 8 bytes (twice) per key instead of two key copies.
    fn remember(&mut self, h: u64) {
        let cap = self.engine.options().max_entries.unwrap_or(self.index.len().max(64) as u64) as usize;
        if self.ghost.insert(h) {
            self.ghost_order.push_back(h);
        }
        while self.ghost_order.len() > cap {
            if let Some(k) = self.ghost_order.pop_front() {
                self.ghost.remove(&k);
            }
        }
    }

    /// Whether a new key with hash `h` was evicted lately (S3-FIFO's ghost).
    fn ghosted(&self, h: u64) -> bool {
        self.bounded && !self.ghost.is_empty() && self.ghost.contains(&h)
    }

    fn slot<Q>(&self, key: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.slot_h(self.hasher.hash_one(key), key)
    }

    /// The slot of `key`, whose hash is `h`.
    fn slot_h<Q>(&self, h: u64, key: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let items = &self.items;
        self.index.find(h, |&s| key_in(items, s).is_some_and(|k| k.borrow() == key)).copied()
    }

    /// Indexes slot `s`, whose item already holds its key, under hash `h`;
    /// an entry the key still has (a dead slot the engine reused without
    /// logging it) is pointed at `s` instead of duplicated.
    fn index_slot(&mut self, h: u64, s: u32) {
        let (items, hasher) = (&self.items, &self.hasher);
        let Some(key) = key_in(items, s) else { return };
        match self.index.find_entry(h, |&x| key_in(items, x).is_some_and(|k| k == key)) {
            Ok(mut e) => *e.get_mut() = s,
            Err(_) => {
                self.index.insert_unique(h, s, |&x| key_in(items, x).map_or(0, |k| hasher.hash_one(k)));
            }
        }
    }

    /// Drops slot `s` (whose item was `key`, now taken out) from the index;
    /// returns the key's hash. Matching on the slot number needs no key
    /// comparison.
    fn unindex(&mut self, key: &K, s: u32) -> u64 {
        let h = self.hasher.hash_one(key);
        if let Ok(e) = self.index.find_entry(h, |&x| x == s) {
            e.remove();
        }
        h
    }

    fn live_slot<Q>(&self, key: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
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

    fn hash_slot<Q>(&self, key: &Q) -> Result<Option<u32>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
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
    fn live_or_miss<Q>(&mut self, key: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
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
    /// assert_eq!(lapse_cache::TtlCache::<u8, u8>::new(42.0).now(), 42.0);
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
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// assert_eq!(c.next_expiry(), f64::INFINITY);
    /// c.set("k", (), lapse_cache::Write { ttl: Some(5000.0), ..Default::default() }).unwrap();
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
    /// let mut c = lapse_cache::TtlCache::with_clock(Default::default(), move || src.load(Ordering::Relaxed) as f64).unwrap();
    /// c.set(1, (), lapse_cache::Write { ttl: Some(5.0), ..Default::default() }).unwrap();
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
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set(1, (), lapse_cache::SetOptions { ttl: Some(5.0), ..Default::default() }).unwrap();
    /// assert_eq!(c.tick(5.0).unwrap(), 1);
    /// assert!(c.tick(f64::NAN).is_err());
    /// ```
    pub fn tick(&mut self, now: f64) -> Result<u64> {
        self.sync();
        let n = self.engine.tick(now).map_err(native)?;
        self.drain();
        Ok(n)
    }

    /// Removes every expired entry now; returns how many.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::with_options(lapse_cache::Options { sweep_budget: Some(0), ..Default::default() }, 0.0).unwrap();
    /// c.set(1, (), lapse_cache::SetOptions { ttl: Some(5.0), ..Default::default() }).unwrap();
    /// assert_eq!(c.tick(9.0).unwrap(), 0);
    /// assert_eq!(c.purge(), 1);
    /// ```
    pub fn purge(&mut self) -> u64 {
        self.sync();
        // In batches, each replayed before the next: the removal log (and
        // the callback's list) never holds more than one batch, instead of
        // 12+ bytes per expired entry of the whole cache at once.
        let mut n = 0;
        // A batch can spend its work on wheel cascades and remove nothing
        // while more is due: only a run of empty batches ends the loop.
        let mut empty = 0;
        while empty < 8 {
            let k = self.engine.purge_some(PURGE_BATCH);
            self.drain();
            n += k;
            empty = if k == 0 { empty + 1 } else { 0 };
        }
        // The exact purge finishes whatever is left (nothing, or little).
        n += self.engine.purge();
        self.drain();
        n
    }

    // ---- plain entries ------------------------------------------------------

    /// Writes `value` at `key`, with per-write clocks in `w`; returns the live
    /// value it replaced. A value handed back here is yours: the removal
    /// callback does not see it.
    ///
    /// A relative clock (`ttl`, `idle`, and the defaults) sets the deadline
    /// `now + ms` rounded to an `f64`. If that equals `now` (a `ttl` below the
    /// float resolution at `now`), the deadline is not in the future: like an
    /// `expire_at` in the past, the write stores nothing and deletes the key.
    /// A finite `ms` whose sum overflows to infinity is a range error, never
    /// a silent "no limit". `expire`/`hexpire` follow the same rule.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// let w = lapse_cache::SetOptions { ttl: Some(100.0), idle: Some(10.0), ..Default::default() };
    /// assert_eq!(c.set("k", 1, w).unwrap(), None);
    /// assert_eq!(c.ttl("k"), Some(10.0));
    /// assert_eq!(c.set("k", 2, Default::default()).unwrap(), Some(1));
    ///
    /// let mut late = lapse_cache::TtlCache::new(1.7e12); // Date.now()-like: resolution 2^-12 ms
    /// late.set("k", 1, lapse_cache::SetOptions::default()).unwrap();
    /// late.set("k", 2, lapse_cache::SetOptions { ttl: Some(0.0001), ..Default::default() }).unwrap();
    /// assert!(!late.contains("k")); // now + 0.0001 == now: deleted
    ///
    /// let mut far = lapse_cache::TtlCache::new(1.7e308);
    /// assert!(far.set("k", 1, lapse_cache::SetOptions { ttl: Some(1e308), ..Default::default() }).is_err());
    /// ```
    pub fn set(&mut self, key: K, value: V, w: Write) -> Result<Option<V>> {
        self.set_sized(key, value, w, 0)
    }

    /// [`set`](Self::set) with the cache's default clocks, as `lru`'s `put`
    /// or `HashMap::insert`: returns the live value it replaced.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// assert_eq!(c.insert("k".to_string(), 1).unwrap(), None);
    /// assert_eq!(c.insert("k".to_string(), 2).unwrap(), Some(1));
    /// ```
    pub fn insert(&mut self, key: K, value: V) -> Result<Option<V>> {
        self.set_sized(key, value, Write::default(), 0)
    }

    /// [`set`](Self::set) with a size that counts against `max_bytes`.
    ///
    /// ```
    /// let o = lapse_cache::Options { max_bytes: Some(10), ..Default::default() };
    /// let mut c = lapse_cache::TtlCache::with_options(o, 0.0).unwrap();
    /// c.set_sized("a", (), Default::default(), 6).unwrap();
    /// c.set_sized("b", (), Default::default(), 6).unwrap(); // evicts "a"
    /// assert!(!c.contains("a"));
    /// assert!(c.set_sized("c", (), Default::default(), 11).is_err());
    /// ```
    pub fn set_sized(&mut self, key: K, value: V, w: Write, size: u32) -> Result<Option<V>> {
        self.sync();
        let h = self.hasher.hash_one(&key);
        let s = self.slot_h(h, &key);
        if s.is_some_and(|s| self.live(s) && self.is_hash(s)) {
            return Err(Error::WrongType { held: "hash", wanted: "plain value" });
        }
        let live = s.is_some_and(|s| self.live(s));
        let ghost = s.is_none() && self.ghosted(h);
        let r = self.engine.write(s, &w, size, ghost).map_err(native)?;
        self.reclaim();
        if ghost {
            self.ghost.remove(&h);
        }
        // Replay first: the slot handed out may be one this write just freed.
        // A write that ends its key at once (a deadline at now) removes the
        // old value through the log instead of overwriting it in place.
        let (mut out, mut old) = self.replay(live.then_some(&key));
        if let Some(r) = r {
            match self.item(r) {
                Item::Plain { value: prev, .. } => {
                    let prev = std::mem::replace(prev, value);
                    if live {
                        old = Some(prev);
                    } else if self.on_remove.is_some() {
                        // An expired value the write reused expired; it was
                        // not replaced, and the callback hears it so.
                        out.push(Removed { key, field: None, value: prev, reason: Reason::Expired });
                    }
                }
                slot => {
                    *slot = Item::Plain { key, value };
                    self.index_slot(h, r);
                }
            }
        }
        self.notify(out);
        Ok(old)
    }

    /// The live value at `key`, restarting its idle window; `None` if
    /// missing, expired, or a hash (see [`try_get`](Self::try_get) to tell a
    /// hash apart). Any borrowed form of the key works.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("k".to_string(), 1, lapse_cache::SetOptions { idle: Some(10.0), ..Default::default() }).unwrap();
    /// c.tick(9.0).unwrap();
    /// assert_eq!(c.get("k"), Some(&1));
    /// c.tick(18.0).unwrap();
    /// assert_eq!(c.get("k"), Some(&1)); // 9 ms idle since the last read
    /// ```
    pub fn get<Q>(&mut self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        let s = self.live_or_miss(key)?;
        // A hash reads as absent here; the match is the one the value
        // needs anyway, so plain reads pay nothing for it.
        if !matches!(self.items[s as usize], Item::Plain { .. }) {
            self.misses += 1;
            return None;
        }
        self.engine.read(s);
        self.hits += 1;
        match &self.items[s as usize] {
            Item::Plain { value, .. } => Some(value),
            _ => None,
        }
    }

    /// [`get`](Self::get) that reports a hash at `key` as
    /// [`Error::WrongType`] (Redis's `WRONGTYPE`) instead of `None`.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert_eq!(c.get("h"), None);
    /// assert!(matches!(c.try_get("h"), Err(lapse_cache::Error::WrongType { .. })));
    /// assert_eq!(c.try_get("nope").unwrap(), None);
    /// ```
    pub fn try_get<Q>(&mut self, key: &Q) -> Result<Option<&V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        if self.live_slot(key).is_some_and(|s| self.is_hash(s)) {
            return Err(Error::WrongType { held: "hash", wanted: "plain value" });
        }
        Ok(self.get(key))
    }

    /// The live value at `key`, or `value()` written there with the cache's
    /// default clocks (a missing or expired key; a hash is an error).
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// assert_eq!(*c.get_or_insert_with("k".to_string(), || 1).unwrap(), 1);
    /// assert_eq!(*c.get_or_insert_with("k".to_string(), || 2).unwrap(), 1);
    /// ```
    pub fn get_or_insert_with(&mut self, key: K, value: impl FnOnce() -> V) -> Result<&V> {
        self.sync();
        match self.live_slot(&key) {
            Some(s) if self.is_hash(s) => return Err(Error::WrongType { held: "hash", wanted: "plain value" }),
            Some(s) => {
                self.engine.read(s);
                self.hits += 1;
            }
            None => {
                self.misses += 1;
                self.set_sized(key.clone(), value(), Write::default(), 0)?;
            }
        }
        // A write into a cache bounded at one byte can evict its own entry.
        let s = self.live_slot(&key).ok_or(Error::Range { arg: "value", msg: "evicted by its own write".into() })?;
        match &self.items[s as usize] {
            Item::Plain { value, .. } => Ok(value),
            _ => Err(Error::WrongType { held: "hash", wanted: "plain value" }),
        }
    }

    /// Removes `key` and returns its live value (`None` if missing or
    /// expired; a hash is removed whole and returns `None`). The removal
    /// callback does not see a value handed back here.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("k".to_string(), 1, Default::default()).unwrap();
    /// assert_eq!(c.remove("k"), Some(1));
    /// assert_eq!(c.remove("k"), None);
    /// ```
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        let s = self.slot(key)?;
        let live = self.live(s);
        if !live || self.is_hash(s) {
            self.engine.remove(s, if live { Reason::Deleted } else { Reason::Expired });
            self.drain();
            return None;
        }
        self.engine.remove(s, Reason::Deleted);
        let (out, v) = self.replay(Some(key));
        self.notify(out);
        v
    }

    /// The live value at `key` without touching it; `None` for a hash too
    /// (see [`try_peek`](Self::try_peek)).
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("k", 1, Default::default()).unwrap();
    /// assert_eq!(c.peek("k"), Some(&1));
    /// ```
    pub fn peek<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.refresh();
        match &self.items[self.live_slot(key)? as usize] {
            Item::Plain { value, .. } => Some(value),
            _ => None,
        }
    }

    /// [`peek`](Self::peek) that reports a hash at `key` as
    /// [`Error::WrongType`].
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::<&str, u8>::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert!(c.try_peek("h").is_err());
    /// ```
    pub fn try_peek<Q>(&self, key: &Q) -> Result<Option<&V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
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
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("k", 1, lapse_cache::SetOptions { ttl: Some(1.0), ..Default::default() }).unwrap();
    /// assert!(c.contains(&"k"));
    /// c.tick(1.0).unwrap();
    /// assert!(!c.contains(&"k"));
    /// ```
    pub fn contains<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.refresh();
        self.live_slot(key).is_some()
    }

    /// Restarts `key`'s idle window; `false` if missing.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::<&str, u8>::new(0.0);
    /// assert!(!c.touch(&"k"));
    /// ```
    pub fn touch<Q>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
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
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("k", 1, Default::default()).unwrap();
    /// assert!(c.expire(&"k", 0.0, None).unwrap());
    /// assert!(!c.contains(&"k"));
    /// ```
    pub fn expire<Q>(&mut self, key: &Q, ms: f64, cond: Option<Cond>) -> Result<bool>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        let s = self.live_slot(key);
        let r = self.engine.set_expiry(s, ms, true, cond).map_err(native)?;
        self.drain();
        Ok(r)
    }

    /// Sets the absolute deadline at time `t` (a past time deletes), if `cond`
    /// holds.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("k", 1, Default::default()).unwrap();
    /// assert!(c.expire_at(&"k", 50.0, Some(lapse_cache::Cond::Nx)).unwrap());
    /// assert!(!c.expire_at(&"k", 90.0, Some(lapse_cache::Cond::Lt)).unwrap());
    /// assert_eq!(c.ttl(&"k"), Some(50.0));
    /// ```
    pub fn expire_at<Q>(&mut self, key: &Q, t: f64, cond: Option<Cond>) -> Result<bool>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        let s = self.live_slot(key);
        let r = self.engine.set_expiry(s, t, false, cond).map_err(native)?;
        self.drain();
        Ok(r)
    }

    /// Drops both clocks; `true` if the key had one.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("k", 1, lapse_cache::SetOptions { ttl: Some(5.0), ..Default::default() }).unwrap();
    /// assert!(c.persist(&"k"));
    /// assert_eq!(c.ttl(&"k"), Some(f64::INFINITY));
    /// ```
    pub fn persist<Q>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        self.live_slot(key).is_some_and(|s| self.engine.persist(s))
    }

    /// Ms to the earliest deadline (`f64::INFINITY` if none), or `None` if
    /// missing.
    ///
    /// ```
    /// let c = lapse_cache::TtlCache::<u8, u8>::new(0.0);
    /// assert_eq!(c.ttl(&1), None);
    /// ```
    pub fn ttl<Q>(&self, key: &Q) -> Option<f64>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.refresh();
        self.live_slot(key).map(|s| self.remaining(s))
    }

    /// Removes `key` (a plain entry or a whole hash); `true` if it was live.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("k", 1, Default::default()).unwrap();
    /// assert!(c.delete(&"k"));
    /// assert!(!c.delete(&"k"));
    /// ```
    pub fn delete<Q>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
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
    /// let mut c = lapse_cache::TtlCache::new(0.0);
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
    /// let mut c = lapse_cache::TtlCache::new(0.0);
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
        for &s in &self.index {
            // The index holds slots; each must be found again by the key its
            // item holds (right hash, no duplicate entry before it).
            if key_in(&self.items, s).is_some_and(|k| self.slot(k) != Some(s)) {
                return Err(format!("slot {s}: its key does not find it in the index"));
            }
            let i = s as usize;
            match (self.items.get(i), self.engine.kind(s)) {
                (Some(Item::Plain { .. }), Kind::Plain) => {}
                (Some(Item::Hash { fields: fs, .. }), Kind::Hash) => {
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
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set(1, 1, Default::default()).unwrap();
    /// assert_eq!(c.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no keys are held.
    ///
    /// ```
    /// assert!(lapse_cache::TtlCache::<u8, u8>::new(0.0).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Live plain entries, in no particular order. No touch.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("a", 1, Default::default()).unwrap();
    /// assert_eq!(c.iter().collect::<Vec<_>>(), vec![(&"a", &1)]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> + '_ {
        self.refresh();
        self.index.iter().filter_map(move |&s| match &self.items[s as usize] {
            Item::Plain { key, value } if self.live(s) => Some((key, value)),
            _ => None,
        })
    }

    /// Live keys (plain and hash), in no particular order.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::<&str, u8>::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert_eq!(c.keys().collect::<Vec<_>>(), vec![&"h"]);
    /// ```
    pub fn keys(&self) -> impl Iterator<Item = &K> + '_ {
        self.refresh();
        self.index.iter().filter(move |&&s| self.live(s)).filter_map(move |&s| key_in(&self.items, s))
    }

    /// Counters and gauges.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::<u8, u8>::new(0.0);
    /// assert_eq!(c.get(&1), None);
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
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// assert!(c.hset("user", "token", 7, lapse_cache::SetOptions { ttl: Some(10.0), ..Default::default() }).unwrap());
    /// assert!(!c.hset("user", "token", 8, Default::default()).unwrap());
    /// assert!(c.set("user", 1, Default::default()).is_err()); // WRONGTYPE
    /// ```
    pub fn hset(&mut self, key: K, field: &str, value: V, w: Write) -> Result<bool> {
        self.hset_sized(key, field, value, w, 0)
    }

    /// [`hset`](Self::hset) with a size that counts against `max_bytes`.
    ///
    /// ```
    /// let o = lapse_cache::Options { max_bytes: Some(10), ..Default::default() };
    /// let mut c = lapse_cache::TtlCache::with_options(o, 0.0).unwrap();
    /// c.hset_sized("h", "a", (), Default::default(), 6).unwrap();
    /// assert!(c.hset_sized("h", "b", (), Default::default(), 6).is_err()); // the hash alone would not fit
    /// ```
    pub fn hset_sized(&mut self, key: K, field: &str, value: V, w: Write, size: u32) -> Result<bool> {
        self.sync();
        let hk = self.hasher.hash_one(&key);
        let h = self.slot_h(hk, &key);
        let live_h = self.hash_slot(&key)?;
        let f = live_h.and_then(|h| match &self.items[h as usize] {
            Item::Hash { fields, .. } => fields.get(field).copied(),
            _ => None,
        });
        let ghost = h.is_none() && self.ghosted(hk);
        let r = self.engine.hwrite(h, f, &w, size, ghost).map_err(native)?;
        self.reclaim();
        if ghost {
            self.ghost.remove(&hk);
        }
        let Some(r) = r else {
            self.drain();
            return Ok(false);
        };
        let hs = self.engine.parent(r);
        // Replay first: the slots handed out may be ones this write just freed.
        let (mut out, _) = self.replay::<K>(None);
        if !matches!(self.item(hs), Item::Hash { .. }) {
            *self.item(hs) = Item::Hash { key: key.clone(), fields: HashMap::new() };
            self.index_slot(hk, hs);
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
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert_eq!(c.hget(&"h", "f").unwrap(), Some(&1));
    /// assert_eq!(c.hget(&"h", "g").unwrap(), None);
    /// ```
    pub fn hget<Q>(&mut self, key: &Q, field: &str) -> Result<Option<&V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
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
    /// let mut c = lapse_cache::TtlCache::<&str, u8>::new(0.0);
    /// assert!(!c.hhas(&"h", "f").unwrap());
    /// ```
    pub fn hhas<Q>(&self, key: &Q, field: &str) -> Result<bool>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.refresh();
        Ok(self.field_slot(self.hash_slot(key)?, field).is_some())
    }

    /// Removes a field; the last one takes its key.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert!(c.hdel(&"h", "f").unwrap());
    /// assert!(!c.contains(&"h"));
    /// ```
    pub fn hdel<Q>(&mut self, key: &Q, field: &str) -> Result<bool>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
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
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.hset("h", "a", 1, Default::default()).unwrap();
    /// c.hset("h", "b", 2, lapse_cache::SetOptions { ttl: Some(5.0), ..Default::default() }).unwrap();
    /// c.tick(5.0).unwrap();
    /// assert_eq!(c.hlen(&"h").unwrap(), 1);
    /// ```
    pub fn hlen<Q>(&self, key: &Q) -> Result<usize>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.refresh();
        Ok(self.hgetall(key)?.len())
    }

    /// The live fields and their values, in no particular order. No touch.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.hset("h", "a", 1, Default::default()).unwrap();
    /// assert_eq!(c.hgetall(&"h").unwrap(), vec![("a", &1)]);
    /// ```
    pub fn hgetall<Q>(&self, key: &Q) -> Result<Vec<(&str, &V)>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
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
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert!(c.hexpire(&"h", "f", 10.0, None).unwrap());
    /// assert_eq!(c.httl(&"h", "f").unwrap(), Some(10.0));
    /// ```
    pub fn hexpire<Q>(&mut self, key: &Q, field: &str, ms: f64, cond: Option<Cond>) -> Result<bool>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        let f = self.field_slot(self.hash_slot(key)?, field);
        let r = self.engine.set_expiry(f, ms, true, cond).map_err(native)?;
        self.drain();
        Ok(r)
    }

    /// Sets a field's absolute deadline at time `t` (a past time deletes it).
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert!(c.hexpire_at(&"h", "f", 0.0, None).unwrap());
    /// assert!(!c.contains(&"h"));
    /// ```
    pub fn hexpire_at<Q>(&mut self, key: &Q, field: &str, t: f64, cond: Option<Cond>) -> Result<bool>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        let f = self.field_slot(self.hash_slot(key)?, field);
        let r = self.engine.set_expiry(f, t, false, cond).map_err(native)?;
        self.drain();
        Ok(r)
    }

    /// Drops a field's clocks; `true` if it had one.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::<&str, u8>::new(0.0);
    /// assert!(!c.hpersist(&"h", "f").unwrap());
    /// ```
    pub fn hpersist<Q>(&mut self, key: &Q, field: &str) -> Result<bool>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        let f = self.field_slot(self.hash_slot(key)?, field);
        Ok(f.is_some_and(|f| self.engine.persist(f)))
    }

    /// Ms until the field goes (its own clocks or its key's, whichever first).
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.hset("h", "f", 1, Default::default()).unwrap();
    /// assert_eq!(c.httl(&"h", "f").unwrap(), Some(f64::INFINITY));
    /// ```
    pub fn httl<Q>(&self, key: &Q, field: &str) -> Result<Option<f64>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
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
    /// use lapse_cache::snapshot::{self, Value};
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("k".to_string(), 7.0, lapse_cache::SetOptions { ttl: Some(50.0), ..Default::default() }).unwrap();
    /// let units = |k: &String| k.encode_utf16().collect::<Vec<u16>>();
    /// let snap = c.snapshot_with(units, |_, _, v| Ok(Value::Number(*v))).unwrap();
    /// let bytes = snapshot::encode(&snap).unwrap();
    ///
    /// let back = snapshot::decode(&bytes).unwrap();
    /// let key = |u: &[u16]| Ok(String::from_utf16_lossy(u));
    /// let val = |v: &Value| match v { Value::Number(x) => Ok(*x), _ => Err(lapse_cache::Error::Corrupt("not a number".into())) };
    /// let r: lapse_cache::TtlCache<String, f64> = lapse_cache::TtlCache::restore_with(&back, key, val).unwrap();
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
    ) -> Result<Self>
    where
        S: Default,
    {
        snap.validate()?;
        // No preallocation for maxEntries: the cache grows as entries arrive.
        let mut opts = snap.options.clone();
        let max_entries = opts.max_entries.take();
        let mut c = Self::with_hasher(opts, snap.now, S::default())?;
        c.engine.set_max_entries(max_entries);
        c.bounded |= max_entries.is_some();
        let times = |t: &SnapClocks| Times { abs: t.abs, last: t.last, idle: t.idle };
        for e in &snap.entries {
            let k = key(&e.key)?;
            if c.slot(&k).is_some() {
                return Err(Error::ty("key", "two snapshot keys convert to the same key"));
            }
            match &e.body {
                Body::Plain { weight, value: v } => {
                    let v = value(v)?;
                    let s = c.engine.restore_slot(Kind::Plain, NIL, times(&e.clocks), *weight);
                    let hk = c.hasher.hash_one(&k);
                    *c.item(s) = Item::Plain { key: k, value: v };
                    c.index_slot(hk, s);
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
                    let hk = c.hasher.hash_one(&k);
                    *c.item(h) = Item::Hash { key: k, fields: names };
                    c.index_slot(hk, h);
                }
            }
        }
        Ok(c)
    }
}

/// Errors the engine phrases for the JS binding (its option names), renamed
/// to this crate's field names.
fn native(e: Error) -> Error {
    const NAMES: [(&str, &str); 6] = [
        ("maxEntries", "max_entries"),
        ("maxBytes", "max_bytes"),
        ("keepTtl", "keep_ttl"),
        ("expireAt", "expire_at"),
        ("sizeOf", "size"),
        ("sweepBudget", "sweep_budget"),
    ];
    let rename = |arg: &'static str, msg: String| {
        let arg = NAMES.iter().find(|(js, _)| *js == arg).map_or(arg, |(_, rs)| rs);
        (arg, NAMES.iter().fold(msg, |m, (js, rs)| m.replace(js, rs)))
    };
    match e {
        Error::Type { arg, msg } => {
            let (arg, msg) = rename(arg, msg);
            Error::Type { arg, msg }
        }
        Error::Range { arg, msg } => {
            let (arg, msg) = rename(arg, msg);
            Error::Range { arg, msg }
        }
        e => e,
    }
}

impl<K, V, S> std::fmt::Debug for TtlCache<K, V, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtlCache")
            .field("now", &self.engine.now())
            .field("follows_clock", &self.follow.is_some())
            .field("keys", &self.engine.keys())
            .field("entries", &self.engine.entries())
            .finish()
    }
}
