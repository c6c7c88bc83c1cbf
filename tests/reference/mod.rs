//! A deliberately naive reference model of the cache, and a driver that runs
//! random operation sequences against both and compares every observable.
//! Shared by `tests/model.rs` and the `ops` fuzz target.
//!
//! The model keeps clocks per key and field and decides liveness by brute
//! force; it has no wheel, no queues and no sweeping. Eviction choice is the
//! cache's business, so the model learns evictions from the removal callback
//! and checks everything else the callback reports against its own view.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use lapse_cache::{Cond, Options, Reason, Removed, SetOptions as Write, TtlCache};

const INF: f64 = f64::INFINITY;
pub const KEYS: u8 = 6;
pub const FIELDS: [&str; 3] = ["a", "b", ""];

#[derive(Clone, Copy, Debug, PartialEq)]
struct Clk {
    abs: f64,
    last: f64,
    idle: f64,
}

impl Clk {
    fn deadline(&self) -> f64 {
        self.abs.min(self.last + self.idle)
    }
    fn live(&self, now: f64) -> bool {
        self.deadline() > now
    }
}

#[derive(Clone, Debug)]
enum Val {
    Plain(u32),
    Hash(BTreeMap<String, (Clk, u32)>),
}

#[derive(Clone, Debug)]
struct Entry {
    clk: Clk,
    val: Val,
}

/// Redis's expiry conditions, against the current absolute deadline.
fn holds(cond: Option<Cond>, cur: f64, at: f64) -> bool {
    match cond {
        None => true,
        Some(Cond::Nx) => cur == INF,
        Some(Cond::Xx) => cur != INF,
        Some(Cond::Gt) => at > cur,
        Some(Cond::Lt) => at < cur,
    }
}

/// A byte source: random bytes for the test, fuzzer bytes for the fuzz target.
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
    seed: u64,
}

impl<'a> Bytes<'a> {
    pub fn from_slice(data: &'a [u8]) -> Self {
        Bytes { data, pos: 0, seed: 0 }
    }
    pub fn random(seed: u64) -> Bytes<'static> {
        Bytes { data: &[], pos: 0, seed: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1 }
    }
    pub fn exhausted(&self) -> bool {
        self.seed == 0 && self.pos >= self.data.len()
    }
    fn byte(&mut self) -> u8 {
        if self.seed != 0 {
            // xorshift64*
            self.seed ^= self.seed >> 12;
            self.seed ^= self.seed << 25;
            self.seed ^= self.seed >> 27;
            return (self.seed.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8;
        }
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn below(&mut self, n: u8) -> u8 {
        self.byte() % n
    }
}

pub struct Harness {
    cache: TtlCache<u8, u32>,
    model: BTreeMap<u8, Entry>,
    now: f64,
    ttl: f64,
    idle: f64,
    max_entries: Option<u64>,
    max_bytes: Option<u64>,
    /// Size of each written value (values are unique per write).
    sizes: BTreeMap<u32, u32>,
    budget_unlimited: bool,
    removed: Arc<Mutex<Vec<Removed<u8, u32>>>>,
    next_value: u32,
    pub ops: usize,
}

impl Harness {
    pub fn new(b: &mut Bytes) -> Harness {
        let ttl = [INF, 40.0, 15.0][b.below(3) as usize];
        let idle = [INF, 25.0, 8.0][b.below(3) as usize];
        let max_entries = [None, None, Some(2), Some(3), Some(5)][b.below(5) as usize];
        // 0 turns sweeping off, so expired entries and fields stay held.
        let sweep_budget = [Some(1000), Some(1), Some(3), None, Some(0)][b.below(5) as usize];
        let max_bytes = [None, None, Some(6), Some(12)][b.below(4) as usize];
        let opts = Options {
            ttl: (ttl != INF).then_some(ttl),
            idle: (idle != INF).then_some(idle),
            max_entries,
            max_bytes,
            sweep_budget,
        };
        // Far clocks too: at 1e300 every finite ttl rounds to `now` (stores
        // nothing), and -1e17 puts the wheel's origin where sums round.
        let start = [0.0, 0.0, 0.0, 1.7e12, -1e17, 1e300][b.below(6) as usize];
        let mut cache = TtlCache::with_options(opts, start).unwrap();
        let removed = Arc::new(Mutex::new(Vec::new()));
        let r = removed.clone();
        cache.on_remove(move |x| r.lock().unwrap().push(x));
        Harness {
            cache,
            model: BTreeMap::new(),
            now: start,
            ttl,
            idle,
            max_entries,
            max_bytes,
            sizes: BTreeMap::new(),
            budget_unlimited: sweep_budget.is_none() || sweep_budget == Some(1000),
            removed,
            next_value: 1,
            ops: 0,
        }
    }

    // ---- the model ----------------------------------------------------------

    fn key_live(&self, k: u8) -> bool {
        match self.model.get(&k) {
            None => false,
            Some(e) => {
                e.clk.live(self.now)
                    && match &e.val {
                        Val::Plain(_) => true,
                        Val::Hash(fs) => fs.values().any(|(c, _)| c.live(self.now)),
                    }
            }
        }
    }

    fn plain_live(&self, k: u8) -> bool {
        self.key_live(k) && matches!(self.model[&k].val, Val::Plain(_))
    }

    fn live_hash(&self, k: u8) -> Option<&BTreeMap<String, (Clk, u32)>> {
        match self.model.get(&k) {
            Some(Entry { val: Val::Hash(fs), .. }) if self.key_live(k) => Some(fs),
            _ => None,
        }
    }

    fn field_live(&self, k: u8, f: &str) -> bool {
        self.live_hash(k).and_then(|fs| fs.get(f)).is_some_and(|(c, _)| c.live(self.now))
    }

    fn gen_write(&mut self, b: &mut Bytes) -> Write {
        let mut w = Write::default();
        match b.below(12) {
            0 => w.ttl = Some(INF),
            1..=3 => w.ttl = Some(f64::from(b.below(60)) + 1.0),
            4 => w.expire_at = Some(self.now + f64::from(b.below(70)) - 10.0),
            5 => w.keep_ttl = true,
            // Invalid on purpose: every one of these must change nothing.
            6 if b.below(4) == 0 => {
                w.ttl = Some(5.0);
                w.expire_at = Some(self.now + 5.0);
            }
            7 if b.below(4) == 0 => w.ttl = Some([0.0, -3.0, f64::NAN][b.below(3) as usize]),
            8 if b.below(4) == 0 => {
                w.keep_ttl = true;
                w.idle = Some(5.0);
            }
            // Valid, but overflows the clock when `now` is large enough.
            9 if b.below(4) == 0 => w.ttl = Some(1.7e308),
            _ => {}
        }
        if !w.keep_ttl && b.below(3) == 0 {
            w.idle = Some([INF, 4.0, 12.0, 30.0, 1.7e308][b.below(5) as usize]);
        }
        w
    }

    fn write_valid(&self, w: &Write) -> bool {
        let pos = |v: Option<f64>| v.is_none_or(|x| x > 0.0);
        // The deadline rule: a finite ms whose sum with `now` overflows is an
        // error (a sum that rounds to `now` is a valid, already-past deadline).
        let fits = |ms: f64| ms == INF || (self.now + ms).is_finite();
        let ttl_fits = match (w.expire_at, w.ttl) {
            (Some(_), _) => true,
            (None, Some(t)) => fits(t),
            (None, None) => fits(self.ttl),
        };
        !(w.keep_ttl && (w.ttl.is_some() || w.idle.is_some() || w.expire_at.is_some()))
            && !(w.ttl.is_some() && w.expire_at.is_some())
            && pos(w.ttl)
            && pos(w.idle)
            && fits(w.idle.unwrap_or(self.idle))
            && ttl_fits
    }

    fn resolve(&self, w: &Write, old: Option<Clk>) -> Clk {
        if w.keep_ttl {
            if let Some(c) = old {
                return c;
            }
        }
        let abs = match (w.expire_at, w.ttl) {
            (Some(t), _) => t,
            (None, Some(t)) => self.now + t,
            (None, None) => self.now + self.ttl,
        };
        Clk { abs, last: self.now, idle: w.idle.unwrap_or(self.idle) }
    }

    /// A digest of everything observable, to prove a failed call changed nothing.
    fn digest(&self) -> String {
        let mut out = format!("len={} stats={:?};", self.cache.len(), self.cache.stats().entries);
        for k in 0..KEYS {
            out +=
                &format!("{k}:{:?}:{:?}:{:?};", self.cache.contains(&k), self.cache.ttl(&k), self.cache.try_peek(&k));
            for f in FIELDS {
                out += &format!("{f}:{:?}:{:?}", self.cache.hhas(&k, f), self.cache.httl(&k, f));
            }
        }
        out
    }

    // ---- one step -----------------------------------------------------------

    pub fn step(&mut self, b: &mut Bytes) {
        self.ops += 1;
        let k = b.below(KEYS);
        let field = FIELDS[b.below(FIELDS.len() as u8) as usize];
        let op = b.below(22);
        let before = self.digest();
        let mut failed = false;
        match op {
            0..=3 => {
                let w = self.gen_write(b);
                let v = self.next_value;
                self.next_value += 1;
                let is_hash = self.live_hash(k).is_some();
                let size = u32::from(b.below(8));
                self.sizes.insert(v, size);
                let r = self.cache.set_sized(k, v, w, size);
                let fits = self.max_bytes.is_none_or(|m| u64::from(size) <= m);
                if !self.write_valid(&w) || is_hash || !fits {
                    assert!(r.is_err(), "set({k}, {w:?}) should fail (hash: {is_hash})");
                    failed = true;
                } else {
                    // set hands back the live value it replaced, and only that.
                    let want = match self.model.get(&k).filter(|_| self.key_live(k)).map(|e| &e.val) {
                        Some(Val::Plain(v)) => Some(*v),
                        _ => None,
                    };
                    assert_eq!(r.unwrap(), want, "set({k}) returned the wrong old value at {}", self.now);
                    let old = self.key_live(k).then(|| self.model[&k].clk);
                    let clk = self.resolve(&w, old);
                    if clk.live(self.now) {
                        self.model.insert(k, Entry { clk, val: Val::Plain(v) });
                    } else {
                        self.model.remove(&k);
                    }
                }
            }
            4..=5 => {
                let got = self.cache.try_get(&k).map(|v| v.copied());
                match self.model.get(&k).filter(|_| self.key_live(k)).map(|e| e.val.clone()) {
                    Some(Val::Hash(_)) => assert!(got.is_err(), "get on hash {k}"),
                    Some(Val::Plain(v)) => {
                        assert_eq!(got.unwrap(), Some(v));
                        self.model.get_mut(&k).unwrap().clk.last = self.now;
                    }
                    None => assert_eq!(got.unwrap(), None),
                }
            }
            6 => {
                let live = self.key_live(k);
                assert_eq!(self.cache.touch(&k), live);
                if live {
                    self.model.get_mut(&k).unwrap().clk.last = self.now;
                }
            }
            7 => {
                let ms = if b.below(8) == 0 { 1.7e308 } else { f64::from(b.below(50)) - 5.0 };
                let cond = [None, Some(Cond::Nx), Some(Cond::Xx), Some(Cond::Gt), Some(Cond::Lt)][b.below(5) as usize];
                let relative = b.below(2) == 0;
                let at = self.now + ms;
                let r = if relative { self.cache.expire(&k, ms, cond) } else { self.cache.expire_at(&k, at, cond) };
                if !at.is_finite() {
                    // Relative: too large for the clock; absolute: not a time.
                    assert!(r.is_err(), "expire({k}, {ms}) at {} should fail", self.now);
                    failed = true;
                } else {
                    let expect = self.key_live(k) && {
                        let cur = self.model[&k].clk.abs;
                        holds(cond, cur, at)
                    };
                    assert_eq!(r.unwrap(), expect, "expire({k}, {ms}, {cond:?})");
                    if expect {
                        if at <= self.now {
                            self.model.remove(&k);
                        } else {
                            self.model.get_mut(&k).unwrap().clk.abs = at;
                        }
                    }
                }
            }
            8 => {
                let live = self.key_live(k);
                let had = live && {
                    let c = self.model[&k].clk;
                    c.abs != INF || c.idle != INF
                };
                assert_eq!(self.cache.persist(&k), had);
                if live {
                    let c = &mut self.model.get_mut(&k).unwrap().clk;
                    c.abs = INF;
                    c.idle = INF;
                }
            }
            9 => {
                let live = self.key_live(k);
                assert_eq!(self.cache.delete(&k), live);
                self.model.remove(&k);
            }
            10..=12 => {
                let mut step = f64::from(b.below(30));
                if b.below(16) == 0 {
                    // A huge jump (past 2^64 ms from the origin, or to 1e300):
                    // the wheel must still sweep exactly what expired.
                    let big = [2e19, 1e300, 9.007_199_254_740_992e15][b.below(3) as usize];
                    if (self.now + big).is_finite() {
                        step = big;
                    }
                }
                self.now += step;
                self.cache.tick(self.now).unwrap();
            }
            13 if b.below(8) == 0 => {
                self.cache.clear();
                self.model.clear();
            }
            13 => {
                self.cache.purge();
            }
            14..=15 => {
                let w = self.gen_write(b);
                let v = self.next_value;
                self.next_value += 1;
                let plain = self.plain_live(k);
                let size = u32::from(b.below(8));
                self.sizes.insert(v, size);
                // Only the hash's other *live* fields stay: expired ones,
                // swept or not, never stand in a write's way.
                let now = self.now;
                let others: Vec<u32> = self.live_hash(k).map_or(vec![], |fs| {
                    fs.iter().filter(|(n, (c, _))| n.as_str() != field && c.live(now)).map(|(_, (_, v))| *v).collect()
                });
                let other_bytes: u64 = others.iter().map(|v| u64::from(self.sizes[v])).sum();
                let fits = self.max_entries.is_none_or(|m| (others.len() as u64) < m)
                    && self.max_bytes.is_none_or(|m| other_bytes + u64::from(size) <= m);
                let r = self.cache.hset_sized(k, field, v, w, size);
                if !self.write_valid(&w) || plain || !fits {
                    assert!(r.is_err(), "hset({k}, {field:?}, {w:?}) should fail");
                    failed = true;
                } else {
                    let was_live = self.field_live(k, field);
                    let new = r.unwrap();
                    let old = was_live.then(|| self.live_hash(k).unwrap()[field].0);
                    let clk = self.resolve(&w, old);
                    if !self.key_live(k) {
                        self.model.insert(
                            k,
                            Entry { clk: Clk { abs: INF, last: self.now, idle: INF }, val: Val::Hash(BTreeMap::new()) },
                        );
                    }
                    let Val::Hash(fs) = &mut self.model.get_mut(&k).unwrap().val else { unreachable!() };
                    if clk.live(self.now) {
                        assert_eq!(new, !was_live, "hset new-field answer");
                        fs.insert(field.to_owned(), (clk, v));
                    } else {
                        assert!(!new);
                        fs.remove(field);
                    }
                    // The key goes with its last field; so does a dead hash's
                    // own deadline when the write replaces it.
                    if !fs.values().any(|(c, _)| c.live(self.now)) {
                        self.model.remove(&k);
                    }
                }
            }
            16..=17 => {
                let got = self.cache.hget(&k, field).map(|v| v.copied());
                let plain = self.plain_live(k);
                if plain {
                    assert!(got.is_err(), "hget on plain");
                } else if self.field_live(k, field) {
                    let now = self.now;
                    let e = self.model.get_mut(&k).unwrap();
                    e.clk.last = now;
                    let Val::Hash(fs) = &mut e.val else { unreachable!() };
                    let (c, v) = fs.get_mut(field).unwrap();
                    c.last = now;
                    assert_eq!(got.unwrap(), Some(*v));
                } else {
                    assert_eq!(got.unwrap(), None);
                }
            }
            18 => {
                let plain = self.plain_live(k);
                let r = self.cache.hdel(&k, field);
                if plain {
                    assert!(r.is_err());
                } else {
                    let live = self.field_live(k, field);
                    assert_eq!(r.unwrap(), live);
                    if live {
                        let Val::Hash(fs) = &mut self.model.get_mut(&k).unwrap().val else { unreachable!() };
                        fs.remove(field);
                        if !self.key_live(k) {
                            self.model.remove(&k);
                        }
                    }
                }
            }
            19 => {
                let ms = f64::from(b.below(40)) - 5.0;
                let cond = [None, Some(Cond::Nx), Some(Cond::Gt), Some(Cond::Lt)][b.below(4) as usize];
                let plain = self.plain_live(k);
                let r = self.cache.hexpire(&k, field, ms, cond);
                if plain {
                    assert!(r.is_err());
                } else {
                    let live = self.field_live(k, field);
                    let at = self.now + ms;
                    let expect = live && {
                        let cur = self.live_hash(k).unwrap()[field].0.abs;
                        holds(cond, cur, at)
                    };
                    assert_eq!(r.unwrap(), expect);
                    if expect {
                        let now = self.now;
                        let Val::Hash(fs) = &mut self.model.get_mut(&k).unwrap().val else { unreachable!() };
                        if at <= now {
                            fs.remove(field);
                        } else {
                            fs.get_mut(field).unwrap().0.abs = at;
                        }
                        if !self.key_live(k) {
                            self.model.remove(&k);
                        }
                    }
                }
            }
            20 => {
                let plain = self.plain_live(k);
                let r = self.cache.hpersist(&k, field);
                if plain {
                    assert!(r.is_err());
                } else {
                    let live = self.field_live(k, field);
                    let had = live && {
                        let c = self.live_hash(k).unwrap()[field].0;
                        c.abs != INF || c.idle != INF
                    };
                    assert_eq!(r.unwrap(), had);
                    if live {
                        let Val::Hash(fs) = &mut self.model.get_mut(&k).unwrap().val else { unreachable!() };
                        let c = &mut fs.get_mut(field).unwrap().0;
                        c.abs = INF;
                        c.idle = INF;
                    }
                }
            }
            _ => {
                // Invalid arguments everywhere must change nothing.
                let bad = [f64::NAN, INF, f64::NEG_INFINITY][b.below(3) as usize];
                assert!(self.cache.expire(&k, bad, None).is_err());
                assert!(self.cache.expire_at(&k, bad, None).is_err());
                assert!(self.cache.tick(bad).is_err());
                failed = true;
            }
        }
        self.reconcile(op, failed);
        if let Err(e) = self.cache.check_invariants() {
            panic!("invariant broken after op {op} at {}: {e}", self.now);
        }
        if failed {
            assert_eq!(before, self.digest(), "a failed call changed the cache (op {op})");
        }
        self.check();
    }

    /// Checks what the callback reported and learns evictions from it.
    fn reconcile(&mut self, op: u8, failed: bool) {
        let removed = std::mem::take(&mut *self.removed.lock().unwrap());
        if failed {
            assert!(removed.is_empty(), "a failed call removed {removed:?}");
        }
        for r in removed {
            match r.reason {
                Reason::Evicted => {
                    assert!(self.max_entries.is_some() || self.max_bytes.is_some(), "eviction without a bound");
                    assert!(matches!(op, 0..=3 | 14..=15), "eviction outside a write: op {op}");
                    self.model.remove(&r.key);
                }
                Reason::Expired => {
                    // Whatever the cache expired, the model must see as dead.
                    // Values are unique per write, so "the same value is still
                    // live in the model" is exact even when a write just
                    // replaced an expired key.
                    let dead = match &r.field {
                        None => {
                            !(self.key_live(r.key) && matches!(self.model[&r.key].val, Val::Plain(v) if v == r.value))
                        }
                        Some(f) => {
                            !(self.field_live(r.key, f) && self.live_hash(r.key).unwrap()[f.as_str()].1 == r.value)
                        }
                    };
                    assert!(dead, "{r:?} expired but the model has it live at {}", self.now);
                }
                Reason::Replaced => assert!(matches!(op, 0..=3 | 14..=15), "replaced outside a write"),
                Reason::Deleted => assert!(matches!(op, 0..=3 | 7 | 9 | 14..=15 | 18 | 19), "deleted by op {op}"),
                Reason::Cleared => assert_eq!(op, 13),
            }
        }
    }

    /// Every observable agrees with the model.
    fn check(&mut self) {
        let now = self.now;
        let mut live_keys = 0;
        for k in 0..KEYS {
            let live = self.key_live(k);
            live_keys += usize::from(live);
            assert_eq!(self.cache.contains(&k), live, "contains({k}) at {now}: model {:?}", self.model.get(&k));
            match self.model.get(&k).filter(|_| live) {
                None => {
                    assert_eq!(self.cache.ttl(&k), None);
                    assert_eq!(self.cache.try_peek(&k).unwrap(), None);
                }
                Some(e) => {
                    let t = e.clk.deadline();
                    assert_eq!(self.cache.ttl(&k), Some(if t == INF { INF } else { t - now }), "ttl({k})");
                    match &e.val {
                        Val::Plain(v) => assert_eq!(self.cache.try_peek(&k).unwrap(), Some(v)),
                        Val::Hash(fs) => {
                            assert!(self.cache.try_peek(&k).is_err());
                            let mut want: Vec<(String, u32)> = fs
                                .iter()
                                .filter(|(_, (c, _))| c.live(now))
                                .map(|(n, (_, v))| (n.clone(), *v))
                                .collect();
                            want.sort();
                            let mut got: Vec<(String, u32)> =
                                self.cache.hgetall(&k).unwrap().into_iter().map(|(n, v)| (n.to_owned(), *v)).collect();
                            got.sort();
                            assert_eq!(got, want, "hgetall({k}) at {now}");
                            assert_eq!(self.cache.hlen(&k).unwrap(), want.len());
                            for (n, (c, _)) in fs.iter().filter(|(_, (c, _))| c.live(now)) {
                                let d = c.deadline().min(e.clk.deadline());
                                let expect = if d == INF { INF } else { d - now };
                                assert_eq!(self.cache.httl(&k, n).unwrap(), Some(expect), "httl({k}, {n:?})");
                            }
                        }
                    }
                }
            }
        }
        let mut keys: Vec<u8> = self.cache.keys().copied().collect();
        keys.sort();
        assert_eq!(keys.len(), live_keys);
        let stats = self.cache.stats();
        if let Some(m) = self.max_entries {
            assert!(stats.entries <= m, "{} entries over the bound {m}", stats.entries);
        }
        if let Some(m) = self.max_bytes {
            assert!(stats.bytes <= m, "{} bytes over the bound {m}", stats.bytes);
        }
        assert!(self.cache.len() >= live_keys);
        // `hgetall`/`hlen` remove the expired fields they pass: each must be
        // dead in the model too (op 255: no operation's, only "expired").
        let removed = self.removed.lock().unwrap().clone();
        assert!(removed.iter().all(|r| r.reason == Reason::Expired), "a listing removed {removed:?}");
        self.reconcile(255, false);
    }

    /// After a full purge nothing expired is held.
    pub fn finish(&mut self) {
        self.cache.purge();
        self.reconcile(13, false);
        self.cache.check_invariants().unwrap();
        let live = (0..KEYS).filter(|&k| self.key_live(k)).count();
        assert_eq!(self.cache.len(), live, "purge left expired keys");
        self.check();
    }

    pub fn budget_unlimited(&self) -> bool {
        self.budget_unlimited
    }
}
