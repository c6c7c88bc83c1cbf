//! Random operation sequences on the native cache, checked step by step
//! against the reference model shared with `tests/model.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/reference/mod.rs"]
mod reference;

use reference::{Bytes, Harness};

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::from_slice(data);
    let mut h = Harness::new(&mut b);
    while !b.exhausted() {
        h.step(&mut b);
    }
    h.finish();
});
