//! The public Rust API compiled to wasm32 and run by wasm-bindgen-test, in
//! Node (`wasm-pack test --node`) and in headless Chromium
//! (`wasm-pack test --headless --chrome`). `make test-wasm` runs both.
//!
//! These check that the engine behaves the same under wasm as natively
//! (f64 time arithmetic, error values); the JS binding is tested in tests/js.
#![cfg(target_arch = "wasm32")]

use lapse_cache::{Clock, Cond, Error, Options, SetOptions as Write, NEVER};
use wasm_bindgen_test::*;

#[wasm_bindgen_test]
fn clock_moves_forward_only() {
    let mut c = Clock::new(1_000.0).unwrap();
    c.advance(900.0).unwrap();
    assert_eq!(c.now(), 1_000.0);
    c.advance(1_500.5).unwrap();
    assert_eq!(c.now(), 1_500.5);
    // Date.now()-sized values keep millisecond precision in f64.
    c.advance(1_767_225_600_123.0).unwrap();
    assert_eq!(c.now(), 1_767_225_600_123.0);
}

#[wasm_bindgen_test]
fn clock_rejects_non_finite_times() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(matches!(Clock::new(bad), Err(Error::Range { arg: "now", .. })));
    }
    let mut c = Clock::new(0.0).unwrap();
    assert!(c.advance(f64::NAN).is_err());
    assert_eq!(c.now(), 0.0, "a rejected advance leaves the clock as it was");
}

#[wasm_bindgen_test]
fn cond_parses_the_four_redis_conditions() {
    assert_eq!(Cond::parse("NX").unwrap(), Cond::Nx);
    assert_eq!(Cond::parse("XX").unwrap(), Cond::Xx);
    assert_eq!(Cond::parse("GT").unwrap(), Cond::Gt);
    assert_eq!(Cond::parse("LT").unwrap(), Cond::Lt);
    for bad in ["", "nx", "gt", "EQ", "NX "] {
        match Cond::parse(bad) {
            Err(e @ Error::Type { arg: "cond", .. }) => assert!(e.to_string().starts_with("cond: ")),
            other => panic!("Cond::parse({bad:?}) gave {other:?}"),
        }
    }
}

#[wasm_bindgen_test]
fn option_defaults() {
    let o = Options::default();
    assert_eq!(o.sweep_budget, Some(1000));
    assert!(o.ttl.is_none() && o.idle.is_none() && o.max_entries.is_none() && o.max_bytes.is_none());
    let w = Write::default();
    assert!(w.ttl.is_none() && w.idle.is_none() && w.expire_at.is_none() && !w.keep_ttl);
    assert!(NEVER.is_infinite() && NEVER > 0.0);
}

#[wasm_bindgen_test]
fn ttl_cache_absolute_and_idle_clocks() {
    use lapse_cache::TtlCache;
    let mut c: TtlCache<String, u32> = TtlCache::new(0.0);
    c.set("abs".into(), 1, Write { ttl: Some(100.0), ..Default::default() }).unwrap();
    c.set("idle".into(), 2, Write { idle: Some(50.0), ..Default::default() }).unwrap();
    c.set("forever".into(), 3, Write::default()).unwrap();
    assert_eq!(c.ttl("abs"), Some(100.0));
    assert_eq!(c.ttl("forever"), Some(NEVER));

    c.tick(40.0).unwrap();
    assert_eq!(c.get("idle"), Some(&2)); // restarts the idle window
    c.tick(80.0).unwrap();
    assert_eq!(c.get("idle"), Some(&2));
    c.tick(100.0).unwrap();
    assert_eq!(c.get("abs"), None, "absolute deadline is inclusive");
    c.tick(131.0).unwrap();
    assert_eq!(c.get("idle"), None);
    assert_eq!(c.get("forever"), Some(&3));
}

#[wasm_bindgen_test]
fn ttl_cache_conditions_and_hash_fields() {
    use lapse_cache::TtlCache;
    let mut c: TtlCache<&str, u32> = TtlCache::new(1_000.0);
    c.set("k", 1, Write::default()).unwrap();
    assert!(!c.expire(&"k", 500.0, Some(Cond::Xx)).unwrap());
    assert!(c.expire(&"k", 500.0, Some(Cond::Nx)).unwrap());
    assert!(!c.expire(&"k", 900.0, Some(Cond::Lt)).unwrap());
    assert!(c.expire(&"k", 900.0, Some(Cond::Gt)).unwrap());
    assert_eq!(c.ttl(&"k"), Some(900.0));

    assert!(c.hset("h", "a", 10, Write { ttl: Some(10.0), ..Default::default() }).unwrap());
    assert!(c.hset("h", "b", 20, Write::default()).unwrap());
    assert_eq!(c.hlen(&"h").unwrap(), 2);
    c.tick(1_010.0).unwrap();
    assert_eq!(c.hget(&"h", "a").unwrap(), None);
    assert_eq!(c.hget(&"h", "b").unwrap(), Some(&20));
    assert!(c.hdel(&"h", "b").unwrap());
    assert!(!c.contains(&"h"), "the last field took the key with it");
    // a plain-value method on a hash key (and the reverse) is WRONGTYPE
    c.hset("h2", "f", 1, Write::default()).unwrap();
    assert!(matches!(c.try_get(&"h2"), Err(Error::WrongType { .. })));
    assert!(matches!(c.hget(&"k", "f"), Err(Error::WrongType { .. })));
}

#[wasm_bindgen_test]
fn ttl_cache_many_keys_and_a_big_clock_jump() {
    use lapse_cache::TtlCache;
    let mut c: TtlCache<u32, u32> = TtlCache::new(0.0);
    for i in 0..20_000 {
        c.set(i, i, Write { ttl: Some(f64::from(i % 1_000) + 1.0), ..Default::default() }).unwrap();
    }
    assert_eq!(c.len(), 20_000);
    // from 0 to a Date.now()-sized time, as a Worker's clock does
    let swept = c.tick(1_767_225_600_000.0).unwrap();
    assert!(swept <= 1_000, "one tick removes at most sweepBudget (1000), removed {swept}");
    assert_eq!(c.get(&5), None);
    assert_eq!(c.iter().count(), 0, "expired but unswept entries are never seen");
    assert_eq!(swept + c.purge(), 20_000);
    assert_eq!(c.len(), 0);
}
