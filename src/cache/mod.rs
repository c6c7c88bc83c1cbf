//! The native Rust cache: a key index and values over the slot engine.

mod ghosts;
mod hashes;
mod plain;
mod snapshot;
#[cfg(test)]
mod tests;

use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use hashbrown::{DefaultHashBuilder, HashMap, HashTable};

use crate::clock::{Follow, TimeSource, NEVER};
use crate::engine::{Engine, Kind, LogRecord, Times};
use crate::error::{Error, Result};
use crate::list::NIL;
use crate::protocol::GHOST_MIN;
use crate::snapshot::{Body, ClockMode, Clocks as SnapClocks, Entry as SnapEntry, Field as SnapField, Snapshot, Value};
use crate::types::{Cond, Counters, Options, Reason, SetOptions, Write};
use ghosts::Ghosts;

/// Expired entries [`TtlCache::purge`] removes between two replays of the log.
const PURGE_BATCH: u64 = 4096;

/// Expired entries each write reclaims (as the JS binding's writes do).
const RECLAIM: u64 = 2;

/// What a slot holds, kept small (24 bytes for `u64` keys and values, 40 for
/// `String` keys): every plain read loads one, so its size is cache misses.
/// A key's `hash` is its index hash (see [`fold`]), stored so that the index
/// grows and drops a slot without hashing the key again.
enum Item<K, V> {
    Free,
    Plain {
        hash: u32,
        /// No clocks at all (no deadline, no idle window; set from the
        /// engine's row by each write, persist and restore, cleared by
        /// `expire`/`expire_at`): always live, and with no idle window a
        /// read moves nothing in the engine's clock row (see
        /// `Engine::read`), so a read needs nothing from it. That row is a
        /// cache line and a page more per read (u64 gets at 1M: 1.6x
        /// quick_cache's time with it, 1.2-1.5x without; README "Rust crate
        /// performance").
        bare: bool,
        key: K,
        value: V,
    },
    /// Boxed: an inline map would widen every slot by 32 bytes.
    Hash {
        hash: u32,
        key: K,
        fields: Box<Fields>,
    },
    /// Boxed: fields are few next to plain entries, and an inline name
    /// would widen every slot by 8 bytes.
    Field(Box<Field<V>>),
}

/// A hash's fields by name, and its witness: a field chosen as the one
/// that lasts longest when offered (writes, `&mut` reads; `NIL`: none).
/// While it lives, the hash does, so a `&self` read (`contains`, `ttl`,
/// `try_peek`, `hhas`, `httl`) answers in O(1) instead of walking the
/// expired fields no sweep has removed (a probe: 0.45 ms a `contains` with
/// 199k of them). Cleared when that field goes. In the box, not the slot:
/// beside the key it would widen every item by 8 bytes. `DEAD` once a walk
/// found no field live: a dead hash stays dead (its deadlines move only by
/// writes, which replace a dead hash whole), so its `&self` reads do not
/// walk again either (an atomic: they set it, and the cache stays `Sync`).
struct Fields {
    names: HashMap<Box<str>, u32>,
    witness: AtomicU32,
}

/// [`Fields`]'s witness of a hash with no live field.
const DEAD: u32 = NIL - 1;

impl Fields {
    fn witness(&self) -> u32 {
        self.witness.load(Relaxed)
    }

    fn set_witness(&self, w: u32) {
        self.witness.store(w, Relaxed);
    }
}

impl Default for Fields {
    fn default() -> Self {
        Fields { names: HashMap::default(), witness: AtomicU32::new(NIL) }
    }
}

impl core::ops::Deref for Fields {
    type Target = HashMap<Box<str>, u32>;
    fn deref(&self) -> &Self::Target {
        &self.names
    }
}

impl core::ops::DerefMut for Fields {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.names
    }
}

struct Field<V> {
    name: Box<str>,
    value: V,
}

/// The key an item holds (a plain entry's or a hash's).
fn key_in<K, V>(items: &[Item<K, V>], s: u32) -> Option<&K> {
    match items.get(s as usize)? {
        Item::Plain { key, .. } | Item::Hash { key, .. } => Some(key),
        _ => None,
    }
}

/// The stored index hash of the key an item holds.
fn hash_in<K, V>(items: &[Item<K, V>], s: u32) -> u32 {
    match items.get(s as usize) {
        Some(Item::Plain { hash, .. } | Item::Hash { hash, .. }) => *hash,
        _ => 0,
    }
}

/// A key's index hash: 32 bits of the hasher's 64, so that each slot can
/// store it in what would otherwise be padding.
fn fold(h: u64) -> u32 {
    (h ^ (h >> 32)) as u32
}

/// The index's 64-bit hash of a folded one: hashbrown takes the bucket from
/// the low bits and its 7-bit tag from the top ones, so both halves carry
/// all 32 (the two only overlap past 2^25 buckets).
fn wide(h: u32) -> u64 {
    u64::from(h) << 32 | u64::from(h)
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
    /// Total weight of what is held, as given to `set_sized`/`hset_sized`.
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
    ghosts: Ghosts,
    /// The next key's insertion number (see `next_seq`).
    seq: u32,
    /// Each key slot's insertion number, apart from `items`: only snapshots
    /// read it, so reads never load it, and the items stay small.
    seqs: Vec<u32>,
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
    /// use lapse_cache::{Options, SetOptions, SystemClock, TtlCache};
    /// let mut c = TtlCache::with_clock(Options { ttl: Some(60_000.0), ..Default::default() }, SystemClock).unwrap();
    /// c.set("k", 1, SetOptions::default()).unwrap();
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
        Ok(TtlCache {
            engine: Engine::new(&opts, now).map_err(native)?,
            index: HashTable::new(),
            hasher,
            items: Vec::new(),
            ghosts: Ghosts::default(),
            seq: 0,
            seqs: Vec::new(),
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

    /// The insertion number of a key new to the index: snapshots list keys
    /// in this order, as SNAPSHOT.md promises (and the JS host's `Map`
    /// keeps). When the numbers run out, the held keys are renumbered in
    /// their order (once per 2^32 insertions).
    fn next_seq(&mut self) -> u32 {
        if self.seq == u32::MAX {
            let seqs = &self.seqs;
            let mut held: Vec<(u32, usize)> = (self.items.iter().enumerate())
                .filter(|(_, it)| matches!(it, Item::Plain { .. } | Item::Hash { .. }))
                .map(|(i, _)| (seqs[i], i))
                .collect();
            held.sort_unstable();
            self.seq = 0;
            for (_, i) in held {
                self.seqs[i] = self.seq;
                self.seq += 1;
            }
        }
        self.seq += 1;
        self.seq - 1
    }

    /// Gives key slot `s` insertion number `q` (from `next_seq`, taken
    /// before the slot's item was written, so a renumbering skips it).
    fn set_seq(&mut self, s: u32, q: u32) {
        let i = s as usize;
        if self.seqs.len() <= i {
            self.seqs.resize(self.items.len().max(i + 1), 0);
        }
        self.seqs[i] = q;
    }

    /// Replays the engine's removal log, then runs the callback.
    fn drain(&mut self) {
        let (out, _) = self.replay::<K>(None);
        self.notify(out);
    }

    #[inline]
    fn notify(&mut self, out: Vec<Removed<K, V>>) {
        if out.is_empty() {
            return;
        }
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
        for rec in LogRecord::all(&log) {
            let (s, parent) = (rec.slot, rec.parent);
            let reason = Reason::from_u8(rec.reason);
            match std::mem::replace(self.item(s), Item::Free) {
                Item::Plain { hash, key, value, .. } => {
                    self.unindex(hash, s);
                    if rec.ghost {
                        self.remember(hash);
                    }
                    if reason != Reason::Evicted && own.is_some_and(|o| key.borrow() == o) {
                        mine = Some(value);
                    } else if keep {
                        out.push(Removed { key, field: None, value, reason });
                    }
                }
                Item::Hash { hash, .. } => {
                    self.unindex(hash, s);
                    if rec.ghost {
                        self.remember(hash);
                    }
                }
                Item::Field(f) => {
                    let Field { name, value } = *f;
                    if let Item::Hash { key, fields, .. } = self.item(parent) {
                        fields.remove(&name);
                        if fields.witness() == s {
                            fields.set_witness(NIL);
                        }
                        if keep {
                            out.push(Removed { key: key.clone(), field: Some(name.into()), value, reason });
                        }
                    }
                }
                Item::Free => {}
            }
        }
        let mut log = log;
        log.clear();
        self.engine.log = log;
        self.fit_index();
        (out, mine)
    }

    /// Halves the index once under a quarter of it is used (V8's rule for
    /// a `Map`): iterations and snapshots walk the table, so without it
    /// they would cost what the most keys ever held did (the contract: no
    /// operation's cost grows with slots once used and freed). Amortized:
    /// a quarter of the entries left since the table last had this size.
    fn fit_index(&mut self) {
        let (n, cap) = (self.index.len(), self.index.capacity());
        if cap > 64 && n < cap / 4 {
            let items = &self.items;
            self.index.shrink_to(n * 2, |&x| wide(hash_in(items, x)));
        }
    }

    /// Records an evicted key for S3-FIFO's ghost queue (see `Ghosts`), up
    /// to `max_entries` ghosts (without one, as many as keys held, at least `GHOST_MIN`).
    fn remember(&mut self, h: u32) {
        let cap = self.engine.options().max_entries.unwrap_or(self.index.len().max(GHOST_MIN) as u64) as usize;
        self.ghosts.remember(h, cap);
    }

    /// Drops the ghost of a key that came back (`back`), after its write's
    /// evictions are remembered (they may push it out first), as the JS
    /// host does: the order decides which ghosts the cap keeps.
    fn unghost(&mut self, back: bool, h: u32) {
        if back {
            self.ghosts.forget(h);
        }
    }

    /// Whether a new key with hash `h` was evicted lately (S3-FIFO's ghost).
    /// Only evictions make ghosts, so an unbounded cache never looks further
    /// than the length.
    fn ghosted(&self, h: u32) -> bool {
        self.ghosts.len() != 0 && self.ghosts.contains(h)
    }

    fn slot<Q>(&self, key: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.slot_h(self.hash(key), key)
    }

    /// The index hash of `key`.
    fn hash<Q: Hash + ?Sized>(&self, key: &Q) -> u32 {
        fold(self.hasher.hash_one(key))
    }

    /// The slot of `key`, whose index hash is `h`.
    fn slot_h<Q>(&self, h: u32, key: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let items = &self.items;
        self.index.find(wide(h), |&s| key_in(items, s).is_some_and(|k| k.borrow() == key)).copied()
    }

    /// Indexes slot `s`, whose item already holds its key, under hash `h`;
    /// an entry the key still has (a dead slot the engine reused without
    /// logging it) is pointed at `s` instead of duplicated.
    fn index_slot(&mut self, h: u32, s: u32) {
        let items = &self.items;
        let Some(key) = key_in(items, s) else { return };
        match self.index.find_entry(wide(h), |&x| key_in(items, x).is_some_and(|k| k == key)) {
            Ok(mut e) => *e.get_mut() = s,
            Err(_) => {
                // Growing rehashes from the stored hashes, never the keys.
                self.index.insert_unique(wide(h), s, |&x| wide(hash_in(items, x)));
            }
        }
    }

    /// Drops slot `s` (whose key, now taken out, had index hash `h`) from the
    /// index. Matching on the slot number needs no key comparison.
    fn unindex(&mut self, h: u32, s: u32) {
        if let Ok(e) = self.index.find_entry(wide(h), |&x| x == s) {
            e.remove();
        }
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
        match self.items.get(s as usize) {
            // A plain entry's own deadline is all there is to it: the
            // engine's kind column need not be loaded.
            Some(Item::Plain { .. }) => self.engine.own_live(s, self.time()),
            Some(Item::Hash { fields, .. }) => {
                let (now, witness) = (self.time(), fields.witness());
                if witness == DEAD || !self.engine.own_live(s, now) {
                    return false;
                }
                if witness != NIL && self.engine.own_live(witness, now) {
                    return true;
                }
                // One walk, and the live field that lasts longest becomes
                // the witness: `&self` reads cannot move a deadline, so once
                // it goes no field is live (DEAD). Returning at the first
                // live field left the witness dead, and every later read
                // walked the expired fields again (a probe: 0.45 ms a call
                // with 200k of them, after an `hexpire` of the witness).
                let eng = &self.engine;
                let best = eng
                    .fields(s)
                    .filter(|&f| eng.own_live(f, now))
                    .max_by(|&a, &b| eng.deadline_of(a).total_cmp(&eng.deadline_of(b)));
                fields.set_witness(best.unwrap_or(DEAD));
                best.is_some()
            }
            _ => self.engine.is_live_at(s, self.time()),
        }
    }

    /// Makes field `f` its hash `h`'s witness if it outlasts the one there
    /// (see `Item::Hash`).
    fn offer_witness(&mut self, h: u32, f: u32) {
        let now = self.time();
        let Some(Item::Hash { fields, .. }) = self.items.get(h as usize) else {
            return;
        };
        let w = fields.witness();
        // `f` may have just gone (an `hexpire` to the past deletes it).
        if self.engine.kind(f) != Kind::Field || self.engine.parent(f) != h {
            return;
        }
        let better = w == NIL
            || w == DEAD
            || !self.engine.own_live(w, now)
            || self.engine.deadline_of(f) > self.engine.deadline_of(w);
        if better && self.engine.own_live(f, now) {
            if let Some(Item::Hash { fields, .. }) = self.items.get_mut(h as usize) {
                fields.set_witness(f);
            }
        }
    }

    /// Marks the plain item at `s` bare or not from the engine's clocks for
    /// it, after a write (see `Item::Plain`'s `bare`).
    fn mark_bare(&mut self, s: u32) {
        let t = self.engine.times(s);
        if let Some(Item::Plain { bare, .. }) = self.items.get_mut(s as usize) {
            *bare = t.abs == NEVER && t.idle == NEVER;
        }
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
        matches!(self.items.get(s as usize), Some(Item::Hash { .. }))
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
                // Its first field is live now: a witness, if it has none alive.
                let first = self.engine.fields(s).next();
                if let Some(f) = first {
                    self.offer_witness(s, f);
                }
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
    /// It can be early (by up to the wheel bucket the deadline sits in, or,
    /// with a backlog of expired entries, at or before the earliest of
    /// them), never late. With `sweep_budget: Some(0)` expired entries
    /// stay held and count: [`purge`](Self::purge) at it (a `tick` there
    /// removes nothing).
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// assert_eq!(c.next_expiry(), f64::INFINITY);
    /// c.set("k", (), lapse_cache::SetOptions { ttl: Some(5000.0), ..Default::default() }).unwrap();
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
    /// c.set(1, (), lapse_cache::SetOptions { ttl: Some(5.0), ..Default::default() }).unwrap();
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
        // A batch can spend all its work on wheel cascades and remove
        // nothing while more is due (spread deadlines: a run of such batches
        // once left 59% of a 1M purge to one unbatched sweep, a 7 MB log), so
        // only the wheel's own word ends the loop: nothing due by now. Each
        // batch makes progress (a cascade or a removal); the cap on empty
        // batches in a row is a backstop, far above any run seen.
        let mut empty = 0;
        while empty < 1 << 12 {
            let k = self.engine.purge_some(PURGE_BATCH);
            self.drain();
            n += k;
            if k == 0 && self.engine.next_expiry() > self.engine.now() {
                break;
            }
            empty = if k == 0 { empty + 1 } else { 0 };
        }
        // The exact purge finishes whatever is left (nothing, or little).
        n += self.engine.purge();
        self.drain();
        n
    }

    // ---- the whole cache ----------------------------------------------------

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
                (Some(Item::Plain { bare, .. }), Kind::Plain) => {
                    let t = self.engine.times(s);
                    if *bare && (t.abs != NEVER || t.idle != NEVER) {
                        return Err(format!("slot {s}: marked bare, but has clocks {t:?}"));
                    }
                }
                (Some(Item::Hash { fields: fs, .. }), Kind::Hash) => {
                    let witness = fs.witness();
                    if witness == DEAD && self.engine.is_live(s) {
                        return Err(format!("hash slot {s}: marked dead, but live"));
                    }
                    if !matches!(witness, NIL | DEAD)
                        && (self.engine.kind(witness) != Kind::Field || self.engine.parent(witness) != s)
                    {
                        return Err(format!("hash slot {s}: witness {witness} is not one of its fields"));
                    }
                    if fs.len() as u32 != self.engine.field_count(s) {
                        return Err(format!(
                            "hash slot {s}: {} named fields, engine {}",
                            fs.len(),
                            self.engine.field_count(s)
                        ));
                    }
                    for (name, &f) in fs.iter() {
                        match self.items.get(f as usize) {
                            Some(Item::Field(fi)) if fi.name == *name && self.engine.parent(f) == s => {}
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
        self.ghosts.check()?;
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
            Item::Plain { key, value, .. } if self.live(s) => Some((key, value)),
            _ => None,
        })
    }

    /// Live plain values, in no particular order. No touch.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("a", 1, Default::default()).unwrap();
    /// assert_eq!(c.values().collect::<Vec<_>>(), vec![&1]);
    /// ```
    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.iter().map(|(_, v)| v)
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
}

/// Errors the engine phrases for the JS binding (its option names), renamed
/// to this crate's field names.
pub(crate) fn native(e: Error) -> Error {
    const NAMES: [(&str, &str); 6] = [
        ("maxEntries", "max_entries"),
        ("maxBytes", "max_bytes"),
        ("keepTtl", "keep_ttl"),
        ("expireAt", "expire_at"),
        ("sizeOf", "weight"),
        ("sweepBudget", "sweep_budget"),
    ];
    let rename = |arg: &'static str, msg: String| {
        let arg = NAMES.iter().find(|(js, _)| *js == arg).map_or(arg, |(_, rs)| rs);
        let msg = NAMES.iter().fold(msg, |m, (js, rs)| m.replace(js, rs));
        // JS's "no limit" is Infinity; here a bound's is `None` (or
        // `u64::MAX`) and a clock's `f64::INFINITY`.
        let none = if arg.starts_with("max_") { "or None" } else { "or f64::INFINITY" };
        (arg, msg.replace("or Infinity", none))
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

/// `for (k, v) in &cache`: [`TtlCache::iter`].
///
/// ```
/// let mut c = lapse_cache::TtlCache::new(0.0);
/// c.set("a", 1, Default::default()).unwrap();
/// for (k, v) in &c {
///     assert_eq!((*k, *v), ("a", 1));
/// }
/// ```
impl<'a, K: Hash + Eq + Clone, V, S: BuildHasher> IntoIterator for &'a TtlCache<K, V, S> {
    type Item = (&'a K, &'a V);
    type IntoIter = Box<dyn Iterator<Item = (&'a K, &'a V)> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
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
