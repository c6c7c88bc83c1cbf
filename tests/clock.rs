//! The native clock sources: a cache built `with_clock` follows its source
//! with no `tick`, never runs backwards, reclaims expired entries on writes
//! (none with `sweep_budget: Some(0)`), and reports `next_expiry`.
#![cfg(not(all(target_arch = "wasm32", target_os = "unknown")))] // std time sources

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use lapse_cache::{MonotonicClock, Options, SetOptions as Write, SystemClock, TimeSource, TtlCache};

/// A fake source the test moves by hand.
fn fake(start: u64) -> (Arc<AtomicU64>, impl TimeSource) {
    let t = Arc::new(AtomicU64::new(start));
    let src = t.clone();
    (t, move || src.load(Ordering::Relaxed) as f64)
}

fn ttl(ms: f64) -> Write {
    Write { ttl: Some(ms), ..Default::default() }
}

#[test]
fn a_followed_cache_expires_entries_with_no_tick() {
    let (t, src) = fake(1000);
    let mut c = TtlCache::with_clock(Options::default(), src).unwrap();
    assert!(c.follows_clock());
    c.set("a", 1, ttl(100.0)).unwrap();
    c.hset("h", "f", 2, ttl(50.0)).unwrap();
    assert_eq!(c.get(&"a"), Some(&1));
    t.store(1050, Ordering::Relaxed);
    // `&self` reads see the new time without a `&mut` call first.
    assert!(!c.hhas(&"h", "f").unwrap());
    assert_eq!(c.ttl(&"a"), Some(50.0));
    assert_eq!(c.now(), 1050.0);
    t.store(1100, Ordering::Relaxed);
    assert!(!c.contains(&"a"));
    assert_eq!(c.peek(&"a"), None);
    assert_eq!(c.get(&"a"), None);
}

#[test]
fn a_source_that_steps_back_un_expires_nothing() {
    let (t, src) = fake(1000);
    let mut c = TtlCache::with_clock(Options::default(), src).unwrap();
    c.set("a", 1, ttl(100.0)).unwrap();
    c.set("b", 2, ttl(1000.0)).unwrap();
    t.store(1100, Ordering::Relaxed);
    assert!(!c.contains(&"a")); // seen by a `&self` read only
    t.store(900, Ordering::Relaxed);
    assert!(!c.contains(&"a"));
    assert_eq!(c.now(), 1100.0);
    assert_eq!(c.ttl(&"b"), Some(900.0));
    c.set("c", 3, ttl(10.0)).unwrap();
    assert_eq!(c.ttl(&"c"), Some(10.0), "a write counts from the latest time seen");
    assert_eq!(c.len(), 2, "the write reclaimed the expired entry");
    assert_eq!(c.tick_now(), 0);
}

#[test]
fn writes_reclaim_expired_entries_and_sweep_budget_zero_turns_it_off() {
    for (budget, bounded) in [(Some(1000), true), (Some(0), false)] {
        let (t, src) = fake(0);
        let opts = Options { ttl: Some(100.0), sweep_budget: budget, ..Default::default() };
        let mut c = TtlCache::with_clock(opts, src).unwrap();
        for i in 0..3000u64 {
            t.store(i + 1, Ordering::Relaxed);
            c.set(i, (), Write::default()).unwrap();
            let live = (i + 1).min(100) as usize;
            if bounded {
                assert!(c.len() < 2 * live, "len {} with {live} live", c.len());
            }
        }
        if !bounded {
            assert_eq!(c.len(), 3000, "sweep_budget 0: nothing reclaimed");
            assert_eq!(c.tick_now(), 0);
            assert_eq!(c.purge(), 2900);
        }
    }
}

#[test]
fn next_expiry_is_never_late_and_ticking_at_it_empties_the_cache() {
    let mut c = TtlCache::with_options(Options { sweep_budget: Some(3), ..Default::default() }, 0.0).unwrap();
    assert_eq!(c.next_expiry(), f64::INFINITY);
    let mut seed = 11u64;
    for i in 0..200u32 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        c.set(i, (), ttl(1.0 + (seed >> 40) as f64 % 50_000.0)).unwrap();
    }
    let mut wakeups = 0;
    while c.next_expiry() != f64::INFINITY {
        let t = c.next_expiry();
        for i in 0..200u32 {
            if let Some(left) = c.ttl(&i) {
                assert!(t <= c.now() + left, "next_expiry {t} after {i}'s deadline");
            }
        }
        c.tick(t).unwrap();
        wakeups += 1;
        assert!(wakeups < 2000, "did not converge");
    }
    assert!(c.is_empty());
}

#[test]
fn the_std_sources_follow_real_time() {
    let mut c = TtlCache::with_clock(Options::default(), MonotonicClock::from_system()).unwrap();
    c.set("k", (), ttl(20.0)).unwrap();
    assert!(c.contains(&"k"));
    std::thread::sleep(std::time::Duration::from_millis(40));
    assert!(!c.contains(&"k"));
    let w = TtlCache::<u8, u8>::with_clock(Options::default(), SystemClock).unwrap();
    assert!((w.now() - SystemClock.now_ms()).abs() < 60_000.0);
}
