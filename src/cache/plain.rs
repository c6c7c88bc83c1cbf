//! Plain entries: writes, reads, loading, expiry changes, removal.

use super::*;

impl<K: Hash + Eq + Clone, V, S: BuildHasher> TtlCache<K, V, S> {
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
    pub fn set(&mut self, key: K, value: V, w: SetOptions) -> Result<Option<V>> {
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

    /// [`set`](Self::set) with a weight that counts against `max_bytes`.
    ///
    /// ```
    /// let o = lapse_cache::Options { max_bytes: Some(10), ..Default::default() };
    /// let mut c = lapse_cache::TtlCache::with_options(o, 0.0).unwrap();
    /// c.set_sized("a", (), Default::default(), 6).unwrap();
    /// c.set_sized("b", (), Default::default(), 6).unwrap(); // evicts "a"
    /// assert!(!c.contains("a"));
    /// assert!(c.set_sized("c", (), Default::default(), 11).is_err());
    /// ```
    pub fn set_sized(&mut self, key: K, value: V, w: SetOptions, weight: u32) -> Result<Option<V>> {
        self.sync();
        self.put(self.hash(&key), key, value, w, weight).map(|(old, _)| old)
    }

    /// [`set_sized`](Self::set_sized) after `sync`, of `key` whose index
    /// hash is `h`; also returns the slot written (`None` if the write
    /// deleted the key).
    fn put(&mut self, h: u32, key: K, value: V, w: Write, weight: u32) -> Result<(Option<V>, Option<u32>)> {
        let s = self.slot_h(h, &key);
        // The commonest write, a default one over a live plain entry, in
        // few instructions: no `Result`s of clocks resolved from options,
        // no room to make, no log unless the write-time reclaim wrote one.
        if let Some(s) = s.filter(|_| weight == 0 && w == Write::default()) {
            let now = self.time();
            if let Item::Plain { value: prev, .. } = &mut self.items[s as usize] {
                if self.engine.own_live(s, now) && self.engine.rewrite_default(s) {
                    let old = std::mem::replace(prev, value);
                    self.mark_bare(s);
                    self.reclaim();
                    if !self.engine.log.is_empty() {
                        self.drain();
                    }
                    return Ok((Some(old), Some(s)));
                }
            }
        }
        Engine::check_options(&w).map_err(native)?; // the options first
        let live = s.is_some_and(|s| self.live(s));
        if live && s.is_some_and(|s| self.is_hash(s)) {
            return Err(Error::WrongType { held: "hash", wanted: "plain value" });
        }
        let ghost = s.is_none() && self.ghosted(h);
        let r = match s {
            // A live plain entry (the item says so): no kind column to load.
            Some(s) if live => self.engine.rewrite(s, &w, weight),
            _ => self.engine.write(s, &w, weight, ghost),
        }
        .map_err(native)?;
        self.reclaim();
        // Replay first: the slot handed out may be one this write just freed.
        // A write that ends its key at once (a deadline at now) removes the
        // old value through the log instead of overwriting it in place.
        let (mut out, mut old) =
            if self.engine.log.is_empty() { (Vec::new(), None) } else { self.replay(live.then_some(&key)) };
        self.unghost(ghost, h);
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
                _ => {
                    let seq = self.next_seq();
                    *self.item(r) = Item::Plain { hash: h, bare: false, key, value };
                    self.set_seq(r, seq);
                    self.index_slot(h, r);
                }
            }
            self.mark_bare(r);
        }
        self.notify(out);
        Ok((old, r))
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
    #[inline]
    pub fn get<Q>(&mut self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let s = self.slot(key);
        // The common hit, kept to a few instructions (fewer is more reads in
        // flight at once when each waits on memory, and no registers to save):
        // a bare entry (no clocks, so live whatever the time; see
        // `Item::Plain`) under a manual clock loads the index, the item and
        // the read counter, not the engine's clock row. The rest (misses, a
        // followed clock, entries with clocks, hashes) is out of line.
        let hit = match (s, &self.follow) {
            (Some(s), None) => match self.items.get_mut(s as usize) {
                Some(Item::Plain { bare: true, .. }) => {
                    self.engine.policy.hit(s);
                    self.hits += 1;
                    true
                }
                _ => false,
            },
            _ => false,
        };
        match s {
            Some(s) if hit => match &self.items[s as usize] {
                Item::Plain { value, .. } => Some(value),
                _ => None,
            },
            _ => self.get_slow(s, key),
        }
    }

    /// [`get`](Self::get) past its common hit, with `key`'s slot `s` (the
    /// clock's reading moves no slot, so the lookup stands).
    #[inline(never)]
    fn get_slow<Q>(&mut self, s: Option<u32>, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        let Some(s) = s else {
            self.misses += 1;
            return None;
        };
        // The item tells a plain entry from a hash, so a plain hit loads
        // the index, the item, the read counter and (unless the item is
        // bare) the engine's clock row: no kind column. A hash reads as
        // absent here.
        let bare = matches!(self.items[s as usize], Item::Plain { bare: true, .. });
        if bare {
            self.engine.policy.hit(s);
        } else {
            if !matches!(self.items[s as usize], Item::Plain { .. }) {
                self.live_or_miss(key)?;
                self.misses += 1;
                return None;
            }
            if !self.engine.own_live(s, self.time()) {
                self.misses += 1;
                self.expire_now(s);
                return None;
            }
            self.engine.read_key(s);
        }
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
        // One hash of the key, for the lookup and the write.
        let h = self.hash(&key);
        let s = match self.slot_h(h, &key).filter(|&s| self.live(s)) {
            Some(s) if self.is_hash(s) => return Err(Error::WrongType { held: "hash", wanted: "plain value" }),
            Some(s) => {
                self.engine.read_key(s);
                self.hits += 1;
                s
            }
            None => {
                self.misses += 1;
                // The key moves in; the slot written finds the value again.
                let (_, s) = self.put(h, key, value(), Write::default(), 0)?;
                // (None: a default clock that ends the write at once.)
                s.ok_or(Error::Range { arg: "value", msg: "expired by its own write".into() })?
            }
        };
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
        self.set_expiry(key, ms, true, cond)
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
        self.set_expiry(key, t, false, cond)
    }

    /// [`expire`](Self::expire) (`relative`) and [`expire_at`](Self::expire_at):
    /// the entry's bare mark follows its clocks afterwards (a removed key's
    /// item is gone by then, and a failed call changed nothing).
    fn set_expiry<Q>(&mut self, key: &Q, t: f64, relative: bool, cond: Option<Cond>) -> Result<bool>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        let s = self.live_slot(key);
        let r = self.engine.set_expiry(s, t, relative, cond).map_err(native)?;
        self.drain();
        s.into_iter().for_each(|s| self.mark_bare(s));
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
        let Some(s) = self.live_slot(key) else { return false };
        let had = self.engine.persist(s);
        // No clocks left: its reads may skip the clock row (a hash's fields keep theirs).
        self.mark_bare(s);
        had
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

    /// [`get`](Self::get), for changing the value in place (a read: it
    /// restarts the idle window and counts a hit). Its weight stays what the
    /// write gave it.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("k", vec![1], Default::default()).unwrap();
    /// c.get_mut("k").unwrap().push(2);
    /// assert_eq!(c.peek("k"), Some(&vec![1, 2]));
    /// ```
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        // (`get` for the read's effects, then the slot it found: a second
        // lookup, where `get`'s hot path stays as it is.)
        self.get(key)?;
        let s = self.slot(key)?;
        self.plain_mut(s)
    }

    /// [`peek`](Self::peek), for changing the value in place without
    /// touching it.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.set("k", 1, Default::default()).unwrap();
    /// *c.peek_mut("k").unwrap() += 1;
    /// assert_eq!(c.peek("k"), Some(&2));
    /// ```
    pub fn peek_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.refresh();
        let s = self.live_slot(key)?;
        self.plain_mut(s)
    }

    /// The value of plain slot `s`; `None` for a hash.
    fn plain_mut(&mut self, s: u32) -> Option<&mut V> {
        match &mut self.items[s as usize] {
            Item::Plain { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Keeps only the live plain entries for which `keep(key, value)` is
    /// true; the others are deleted (`Reason::Deleted`). Hashes stay.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// for k in 0..6 {
    ///     c.set(k, k * 10, Default::default()).unwrap();
    /// }
    /// c.retain(|_, v| *v >= 30);
    /// let mut kept: Vec<_> = c.keys().copied().collect();
    /// kept.sort();
    /// assert_eq!(kept, [3, 4, 5]);
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &V) -> bool) {
        let gone: Vec<K> = self.iter().filter(|(k, v)| !keep(k, v)).map(|(k, _)| k.clone()).collect();
        for k in gone {
            self.delete(&k);
        }
    }
}
