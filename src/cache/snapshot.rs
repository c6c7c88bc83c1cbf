//! Snapshots of the cache and restoring from one.

use super::*;

impl<K: Hash + Eq + Clone, V, S: BuildHasher> TtlCache<K, V, S> {
    /// Captures the clock, the options and every live entry and field with
    /// its exact clocks and size, converting keys and values with `key` and
    /// `value` (which also sees the key and the field name). Keys and fields
    /// come in insertion order (a key written again keeps its place; one
    /// that left and came back goes last), as the JS package writes them.
    /// Encode it with [`snapshot::encode`](crate::snapshot::encode). The
    /// cache is not changed.
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
        // Keys in insertion order (SNAPSHOT.md), not slot order; from the
        // index, whose size follows the keys held (`fit_index`), not the
        // slots once used.
        let mut order: Vec<(u32, u32)> = (self.index.iter().copied())
            .filter_map(|s| match self.items.get(s as usize) {
                Some(Item::Plain { .. } | Item::Hash { .. }) if self.live(s) => Some((self.seqs[s as usize], s)),
                _ => None,
            })
            .collect();
        order.sort_unstable();
        for (_, s) in order {
            let body = match self.items.get(s as usize) {
                Some(Item::Plain { key: k, value: v, .. }) => {
                    Body::Plain { weight: self.engine.weight(s), value: value(k, None, v)? }
                }
                Some(Item::Hash { key: k, .. }) => {
                    let mut slots: Vec<u32> = self.engine.fields(s).filter(|&f| self.live(f)).collect();
                    slots.reverse();
                    let mut fields = Vec::with_capacity(slots.len());
                    for f in slots {
                        if let Some(Item::Field(fi)) = self.items.get(f as usize) {
                            fields.push(SnapField {
                                name: fi.name.encode_utf16().collect(),
                                clocks: stamp(f),
                                weight: self.engine.weight(f),
                                value: value(k, Some(&fi.name), &fi.value)?,
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
                    let hk = c.hash(&k);
                    let seq = c.next_seq();
                    *c.item(s) = Item::Plain { hash: hk, bare: false, key: k, value: v };
                    c.mark_bare(s);
                    c.set_seq(s, seq);
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
                    let mut names =
                        Box::new(Fields { names: HashMap::with_capacity(conv.len()), witness: AtomicU32::new(NIL) });
                    for (f, (name, v)) in fields.iter().zip(conv) {
                        let name: Box<str> = name.into();
                        let s = c.engine.restore_slot(Kind::Field, h, times(&f.clocks), f.weight);
                        names.insert(name.clone(), s);
                        *c.item(s) = Item::Field(Box::new(Field { name, value: v }));
                    }
                    let hk = c.hash(&k);
                    let seq = c.next_seq();
                    let slots: Vec<u32> = names.values().copied().collect();
                    *c.item(h) = Item::Hash { hash: hk, key: k, fields: names };
                    for f in slots {
                        c.offer_witness(h, f);
                    }
                    c.set_seq(h, seq);
                    c.index_slot(hk, h);
                }
            }
        }
        Ok(c)
    }
}
