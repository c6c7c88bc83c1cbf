//! Clock extremes: random finite times over the whole f64 range (negative,
//! subnormal, +-1.7e308, huge jumps), every operation finishes, and a purge
//! leaves nothing expired. Plus the exact cases that hung (issue 13).
//!
//! A hang would stop the suite, so each sequence runs on a worker thread and
//! the test fails (instead of hanging CI) if one does not come back within a
//! generous bound. That is a hang detector, not a speed assertion: the
//! sequences take milliseconds.

use std::sync::mpsc;
use std::time::Duration;

use lapse_cache::{Options, SetOptions as Write, TtlCache};

const HANG: Duration = Duration::from_secs(120);

fn finishes(name: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(HANG) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(e) = h.join() {
                std::panic::resume_unwind(e);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{name}: did not finish (hang)"),
    }
}

fn at(t: f64) -> Write {
    Write { expire_at: Some(t), ..Default::default() }
}

#[test]
fn a_clock_2e19_past_construction_does_not_hang() {
    // Issue 13: expireAt 3e19, tick(2e19), then purge / tick with an
    // unbounded budget / a write at capacity looped forever.
    finishes("purge", || {
        let o = Options { sweep_budget: None, max_entries: Some(2), ..Default::default() };
        let mut c = TtlCache::with_options(o, 0.0).unwrap();
        c.set(1, (), at(3e19)).unwrap();
        c.set(2, (), at(2.5e19)).unwrap();
        assert_eq!(c.tick(2e19).unwrap(), 0);
        assert_eq!(c.purge(), 0);
        c.set(3, (), at(4e19)).unwrap(); // at capacity: evicts, must not spin
        assert_eq!(c.len(), 2);
        assert_eq!(c.tick(2.6e19).unwrap(), 1, "2.5e19 is due, 3e19 and 4e19 are not");
        assert!(c.contains(&3) || c.contains(&1));
        c.tick(1e300).unwrap();
        assert!(c.is_empty(), "every deadline is past at 1e300");
        c.check_invariants().unwrap();
    });
}

#[test]
fn sums_that_round_to_the_clock_do_not_hang() {
    // The origin far below the clock: `now - origin` rounds (ulp 16 at
    // 1e17), so a deadline 0.25 ms after `now` maps to the same tick.
    finishes("rounding", || {
        let o = Options { sweep_budget: None, ..Default::default() };
        let mut c = TtlCache::with_options(o, -1e17).unwrap();
        c.tick(0.5).unwrap();
        c.set(1, (), at(0.75)).unwrap();
        assert_eq!(c.purge(), 0);
        assert_eq!(c.tick(0.6).unwrap(), 0);
        assert!(c.contains(&1));
        assert_eq!(c.tick(0.75).unwrap(), 1);
        c.check_invariants().unwrap();
    });
}

#[test]
fn many_deadlines_inside_the_clocks_own_tick() {
    // More not-yet-expired slots on the clock's tick than one sweep parks
    // (it parks them in a fixed array, since nothing may allocate inside a
    // call): none is removed early, none is lost from the wheel, and every
    // one goes once its deadline comes.
    finishes("parked", || {
        let o = Options { sweep_budget: None, ..Default::default() };
        let mut c = TtlCache::with_options(o, 0.0).unwrap();
        c.tick(0.5).unwrap();
        for i in 0..100u32 {
            c.set(i, (), at(0.6 + f64::from(i) * 0.003)).unwrap();
        }
        assert_eq!(c.tick(0.55).unwrap(), 0);
        assert_eq!(c.purge(), 0);
        assert_eq!(c.len(), 100);
        c.check_invariants().unwrap();
        assert_eq!(c.tick(0.75).unwrap(), 51, "0.6 .. 0.75 are due at 0.75");
        c.check_invariants().unwrap();
        assert_eq!(c.tick(1.0).unwrap(), 49);
        assert!(c.is_empty());
        c.check_invariants().unwrap();
    });
}

#[test]
fn purge_is_exact_at_any_distance_from_the_origin() {
    // Within one millisecond (the wheel's tick near the origin), and past
    // 2^53 and 2^64 ms: purge removes exactly what is expired.
    finishes("exact", || {
        for base in [0.0f64, 5.25, 9.007_199_254_740_992e15, 3e19, 1e300, 1.7e308] {
            let mut c = TtlCache::with_options(Options { sweep_budget: Some(0), ..Default::default() }, 0.0).unwrap();
            let d = base + base.abs() * f64::EPSILON * 4.0 + 0.5;
            c.set(1, (), at(d)).unwrap();
            c.tick(base).unwrap();
            assert_eq!(c.purge(), u64::from(d <= base));
            c.tick(d).unwrap();
            assert_eq!(c.purge(), 1, "due at {d}, clock at {d}");
            c.check_invariants().unwrap();
        }
    });
}

#[test]
fn ttl_at_the_limits_of_the_clock() {
    // A ttl below the resolution at `now` stores nothing (deletes); one that
    // overflows is a RangeError; Infinity is still "no limit".
    let mut c = TtlCache::new(1.7e12);
    c.set("k", 1, Write::default()).unwrap();
    c.set("k", 2, Write { ttl: Some(0.0001), ..Default::default() }).unwrap();
    assert!(!c.contains(&"k"), "now + 0.0001 == now: the write deletes");
    c.hset("h", "f", 1, Write { ttl: Some(0.0001), ..Default::default() }).unwrap();
    assert!(!c.contains(&"h"));
    c.set("k", 3, Write { ttl: Some(0.001), ..Default::default() }).unwrap();
    assert!(c.contains(&"k"), "0.001 is above the resolution (2^-12)");
    assert!(c.expire(&"k", 0.0001, None).unwrap());
    assert!(!c.contains(&"k"), "expire below the resolution deletes");

    let mut far = TtlCache::new(1.7e308);
    let e = far.set("k", 1, Write { ttl: Some(1.7e308), ..Default::default() }).unwrap_err();
    assert_eq!(e.to_string(), "ttl: too large for the clock");
    let e = far.set("k", 1, Write { idle: Some(1e308), ..Default::default() }).unwrap_err();
    assert_eq!(e.to_string(), "idle: too large for the clock");
    let e = far.hset("h", "f", 1, Write { ttl: Some(1e308), ..Default::default() }).unwrap_err();
    assert_eq!(e.to_string(), "ttl: too large for the clock");
    far.set("k", 1, Write { ttl: Some(f64::INFINITY), ..Default::default() }).unwrap();
    assert_eq!(far.ttl(&"k"), Some(f64::INFINITY));
    let e = far.expire(&"k", 1e308, None).unwrap_err();
    assert_eq!(e.to_string(), "ms: too large for the clock");
    far.hset("h", "f", 1, Write::default()).unwrap();
    assert!(far.hexpire(&"h", "f", 1e308, None).is_err());
    assert_eq!(far.ttl(&"k"), Some(f64::INFINITY), "a failed expire changes nothing");
    assert!(far.hexpire(&"h", "f", 1.0, None).unwrap(), "1e308 + 1 == now: deletes");
    assert!(!far.contains(&"h"));
    let o = Options { ttl: Some(1e308), ..Default::default() };
    let mut dflt = TtlCache::with_options(o, 1e308).unwrap();
    assert!(dflt.set("k", 1, Write::default()).is_err(), "the default ttl follows the same rule");
    far.check_invariants().unwrap();
}

// ---- randomized ----------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A finite time from the whole range, biased to the interesting parts.
    fn time(&mut self, now: f64) -> f64 {
        let t = match self.below(12) {
            0 => f64::from_bits(self.next()), // any bit pattern
            1 => f64::from_bits(self.below(1 << 52)) * if self.below(2) == 0 { 1.0 } else { -1.0 }, // subnormal
            2 => [f64::MAX, -f64::MAX, 1.7e308, -1.7e308, 0.0, -0.0, f64::MIN_POSITIVE][self.below(7) as usize],
            3 => [1.8e19, 1.8446744073709552e19, 9.007_199_254_740_992e15, 2e19, 3e19][self.below(5) as usize],
            4 => now + (self.below(100) as f64),
            5 => now * (1.0 + self.below(4) as f64),
            6 => now + f64::from_bits(self.next()).abs(),
            7 => 1.7e12 + self.below(1 << 20) as f64,
            8 => -(self.below(1 << 40) as f64),
            _ => now + 10f64.powi(self.below(309) as i32),
        };
        if t.is_finite() {
            t
        } else {
            now
        }
    }
    fn span(&mut self) -> f64 {
        match self.below(6) {
            0 => f64::from_bits(self.next()).abs(),
            1 => 10f64.powi(self.below(309) as i32),
            2 => f64::from_bits(1 + self.below(1 << 52)), // subnormal
            _ => 1.0 + self.below(1000) as f64,
        }
    }
}

fn sequence(seed: u64, steps: usize) {
    let mut r = Rng(seed);
    let start = r.time(0.0);
    let opts = Options {
        ttl: [None, Some(1000.0), Some(1e300)][r.below(3) as usize],
        idle: [None, Some(50.0)][r.below(2) as usize],
        max_entries: [None, Some(4), Some(16)][r.below(3) as usize],
        max_bytes: None,
        sweep_budget: [None, Some(0), Some(2), Some(1000)][r.below(4) as usize],
    };
    let mut c: TtlCache<u8, u32> = TtlCache::with_options(opts, start).unwrap();
    for i in 0..steps {
        let now = c.now();
        let k = r.below(8) as u8;
        let f = ["a", "b", "c"][r.below(3) as usize];
        let w = match r.below(5) {
            0 => Write::default(),
            1 => Write { ttl: Some(r.span()), ..Default::default() },
            2 => Write { idle: Some(r.span()), ..Default::default() },
            3 => at(r.time(now)),
            _ => Write { ttl: Some(r.span()), idle: Some(r.span()), ..Default::default() },
        };
        // Errors are fine (wrong type, too large for the clock); finishing is the point.
        match r.below(16) {
            0..=2 => drop(c.set(k, i as u32, w)),
            3..=4 => drop(c.hset(k, f, i as u32, w)),
            5 => drop(c.get(&k)),
            6 => drop(c.hget(&k, f)),
            7 => drop(c.tick(r.time(now))),
            8 => drop(c.purge()),
            9 => drop(c.expire(&k, r.time(0.0), None)),
            10 => drop(c.expire_at(&k, r.time(now), None)),
            11 => drop(c.hexpire(&k, f, r.span(), None)),
            12 => drop(c.persist(&k)),
            13 => drop(c.delete(&k)),
            14 if r.below(8) == 0 => c.clear(),
            _ => {
                let _ = (c.ttl(&k), c.contains(&k), c.hlen(&k), c.keys().count());
            }
        }
        if let Err(e) = c.check_invariants() {
            panic!("seed {seed} step {i}: {e}");
        }
    }
    c.purge();
    let live = c.keys().count();
    assert_eq!(c.len(), live, "seed {seed}: purge at {} left expired keys", c.now());
}

#[test]
fn random_times_over_the_whole_f64_range_always_finish() {
    let seeds: u64 = std::env::var("LAPSE_CLOCK_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(400);
    finishes("random", move || {
        for seed in 1..=seeds {
            sequence(seed, 300);
        }
    });
}

#[test]
fn ticking_at_next_expiry_always_makes_progress_and_is_never_late() {
    // A host that only ever ticks at nextExpiry() (an alarm loop): with
    // fractional, far and clustered deadlines it must reach every one, never
    // be told a time after a live deadline, and never spin in place.
    finishes("next_expiry", || {
        for seed in 1..=40u64 {
            let mut r = Rng(seed);
            let start = [0.0, 1.7e12 + 0.25, -1e17, 3e19, 1e300][r.below(5) as usize];
            let o = Options { sweep_budget: Some(1 + r.below(4)), ..Default::default() };
            let mut c: TtlCache<u32, ()> = TtlCache::with_options(o, start).unwrap();
            let n = 200;
            for k in 0..n {
                let ms = match r.below(4) {
                    0 => (r.below(1000) as f64) / 7.0 + 0.001,
                    1 => r.span(),
                    2 => 0.5,
                    _ => 1.0 + r.below(100_000) as f64,
                };
                let _ = c.set(k, (), Write { ttl: Some(ms), ..Default::default() });
            }
            let mut rounds = 0;
            loop {
                let next = c.next_expiry();
                let earliest = c.keys().filter_map(|k| c.ttl(k)).fold(f64::INFINITY, f64::min) + c.now();
                assert!(next <= earliest || next <= c.now(), "seed {seed}: told {next}, a deadline is at {earliest}");
                if next == f64::INFINITY {
                    break;
                }
                c.tick(next).unwrap();
                rounds += 1;
                assert!(rounds <= 40 * n as usize + 100, "seed {seed}: no progress at {next} ({} left)", c.len());
            }
            assert!(c.is_empty(), "seed {seed}: {} left", c.len());
        }
    });
}

/// A read that restarts a finite idle window past the largest time: the
/// entry's deadline is the largest time, not "never" (it was Infinity: the
/// entry became immortal, `ttl` said Infinity, and the wheel held a slot
/// with no deadline). A probe of the crate.
#[test]
fn an_idle_window_restarted_past_the_largest_time_is_not_infinite() {
    let mut c: TtlCache<String, u32> = TtlCache::new(-1e308);
    c.set("k".into(), 1, Write { idle: Some(f64::MAX), ..Default::default() }).unwrap();
    c.tick(1e300).unwrap();
    assert_eq!(c.get("k"), Some(&1)); // 1e300 + f64::MAX overflows
    c.check_invariants().unwrap();
    let t = c.ttl("k").unwrap();
    assert!(t.is_finite() && t > 0.0, "{t}");
    assert_eq!(c.tick(f64::MAX).unwrap(), 1, "due at the largest time, and swept");
    assert_eq!(c.get("k"), None);
    c.check_invariants().unwrap();
}

/// `sweep_budget: Some(0)`: expired entries stay held, so `next_expiry`
/// is at or before their deadlines (the contract: "the earliest deadline
/// the cache holds"), and a host that purges there removes them.
#[test]
fn with_sweeping_off_next_expiry_counts_the_expired_entries_held() {
    let o = Options { sweep_budget: Some(0), ..Default::default() };
    let mut c: TtlCache<String, u32> = TtlCache::with_options(o, 0.0).unwrap();
    for (k, ttl) in [("a", 10.0), ("b", 100.0), ("c", 100.5), ("d", 5_000_000.0), ("e", 7.0)] {
        c.set(k.into(), 1, Write { ttl: Some(ttl), ..Default::default() }).unwrap();
    }
    assert_eq!(c.next_expiry(), 7.0);
    c.tick(10.0).unwrap();
    assert_eq!(c.len(), 5, "nothing swept");
    assert!(c.next_expiry() <= 7.0, "{}", c.next_expiry());
    assert_eq!(c.purge(), 2, "a and e");
    let ne = c.next_expiry();
    assert!(ne > 10.0 && ne <= 100.0, "{ne}");
    c.tick(1_000.0).unwrap();
    assert_eq!(c.len(), 3, "nothing swept");
    assert!(c.next_expiry() <= 100.0, "b, expired and held: {}", c.next_expiry());
    assert_eq!(c.purge(), 2, "b and c");
    let ne = c.next_expiry();
    assert!(ne > 1_000.0 && ne <= 5_000_000.0, "{ne}");
    c.tick(5_000_000.0).unwrap();
    assert!(c.next_expiry() <= 5_000_000.0);
    assert_eq!(c.purge(), 1);
    assert_eq!(c.next_expiry(), f64::INFINITY);
    assert_eq!(c.len(), 0);
}
