//! The public Rust API compiled to wasm32 and run by wasm-bindgen-test, in
//! Node (`wasm-pack test --node`) and in headless Chromium
//! (`wasm-pack test --headless --chrome`). `make test-wasm` runs both.
//!
//! These check that the engine behaves the same under wasm as natively
//! (f64 time arithmetic, error values); the JS binding is tested in tests/js.
#![cfg(target_arch = "wasm32")]

use lapse::{Clock, Cond, Error, Options, Write, NEVER};
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
