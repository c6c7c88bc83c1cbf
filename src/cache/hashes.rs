//! Hashes: fields with their own clocks.

use super::*;

impl<K: Hash + Eq + Clone, V, S: BuildHasher> TtlCache<K, V, S> {
    /// Writes a hash field with its own clocks; `true` if the field is new.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// assert!(c.hset("user", "token", 7, lapse_cache::SetOptions { ttl: Some(10.0), ..Default::default() }).unwrap());
    /// assert!(!c.hset("user", "token", 8, Default::default()).unwrap());
    /// assert!(c.set("user", 1, Default::default()).is_err()); // WRONGTYPE
    /// ```
    pub fn hset(&mut self, key: K, field: &str, value: V, w: SetOptions) -> Result<bool> {
        self.hset_sized(key, field, value, w, 0)
    }

    /// [`hset`](Self::hset) with a weight that counts against `max_bytes`.
    ///
    /// ```
    /// let o = lapse_cache::Options { max_bytes: Some(10), ..Default::default() };
    /// let mut c = lapse_cache::TtlCache::with_options(o, 0.0).unwrap();
    /// c.hset_sized("h", "a", (), Default::default(), 6).unwrap();
    /// assert!(c.hset_sized("h", "b", (), Default::default(), 6).is_err()); // the hash alone would not fit
    /// ```
    pub fn hset_sized(&mut self, key: K, field: &str, value: V, w: SetOptions, weight: u32) -> Result<bool> {
        self.sync();
        Engine::check_options(&w).map_err(native)?; // the options first, as the JS host
        let hk = self.hash(&key);
        let h = self.slot_h(hk, &key);
        // (`hash_slot` of the slot just found: the key is hashed once.)
        let live_h = match h.filter(|&s| self.live(s)) {
            Some(s) if !self.is_hash(s) => return Err(Error::WrongType { held: "plain value", wanted: "hash" }),
            other => other,
        };
        let f = live_h.and_then(|h| match &self.items[h as usize] {
            Item::Hash { fields, .. } => fields.get(field).copied(),
            _ => None,
        });
        let ghost = h.is_none() && self.ghosted(hk);
        let r = self.engine.hwrite(h, f, &w, weight, ghost).map_err(native)?;
        self.reclaim();
        let Some(r) = r else {
            self.drain();
            self.unghost(ghost, hk);
            return Ok(false);
        };
        let hs = self.engine.parent(r);
        // Replay first: the slots handed out may be ones this write just freed.
        let (mut out, _) = self.replay::<K>(None);
        self.unghost(ghost, hk);
        if !matches!(self.item(hs), Item::Hash { .. }) {
            let seq = self.next_seq();
            *self.item(hs) = Item::Hash { hash: hk, key: key.clone(), fields: Box::default() };
            self.set_seq(hs, seq);
            self.index_slot(hk, hs);
        }
        let is_new = match self.item(r) {
            Item::Field(f) => {
                let value = std::mem::replace(&mut f.value, value);
                out.push(Removed { key, field: Some(field.to_owned()), value, reason: Reason::Replaced });
                false
            }
            slot => {
                *slot = Item::Field(Box::new(Field { name: field.into(), value }));
                true
            }
        };
        if let Item::Hash { fields, .. } = self.item(hs) {
            fields.insert(field.into(), r);
        }
        self.offer_witness(hs, r);
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
            Item::Field(f) => Ok(Some(&f.value)),
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
    pub fn hlen<Q>(&mut self, key: &Q) -> Result<usize>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        Ok(self.hgetall(key)?.len())
    }

    /// The live fields and their values, in no particular order. No touch.
    ///
    /// ```
    /// let mut c = lapse_cache::TtlCache::new(0.0);
    /// c.hset("h", "a", 1, Default::default()).unwrap();
    /// assert_eq!(c.hgetall(&"h").unwrap(), vec![("a", &1)]);
    /// ```
    pub fn hgetall<Q>(&mut self, key: &Q) -> Result<Vec<(&str, &V)>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        let Some(h) = self.hash_slot(key)? else {
            return Ok(vec![]);
        };
        // The expired fields it passes go (those in grace stay), as in the
        // JS `hgetall`: a listing that left them walked them again on every
        // call (a probe: `hlen` 8-10 ms a call with 199k of them).
        self.engine.expire_found(h);
        self.drain();
        let Item::Hash { fields, .. } = &self.items[h as usize] else {
            return Ok(vec![]);
        };
        Ok(fields
            .iter()
            .filter(|(_, &f)| self.live(f))
            .filter_map(|(name, &f)| match &self.items[f as usize] {
                Item::Field(f) => Some((&**name, &f.value)),
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
        self.field_expiry(key, field, ms, true, cond)
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
        self.field_expiry(key, field, t, false, cond)
    }

    /// `hexpire` (`relative`: `at` is ms from now) and `hexpire_at`.
    fn field_expiry<Q>(&mut self, key: &Q, field: &str, at: f64, relative: bool, cond: Option<Cond>) -> Result<bool>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sync();
        let h = self.hash_slot(key)?;
        let f = self.field_slot(h, field);
        let r = self.engine.set_expiry(f, at, relative, cond).map_err(native)?;
        self.drain();
        // A later deadline may make the field the hash's best witness.
        if let (Some(h), Some(f)) = (h, f) {
            self.offer_witness(h, f);
        }
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
        let h = self.hash_slot(key)?;
        let f = self.field_slot(h, field);
        let r = f.is_some_and(|f| self.engine.persist(f));
        if let (Some(h), Some(f), true) = (h, f, r) {
            self.offer_witness(h, f);
        }
        Ok(r)
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
}
