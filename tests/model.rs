//! Randomized model test: thousands of random operation sequences with random
//! clock steps, each step checked against the reference model in `reference/`.

mod reference;

use reference::{Bytes, Harness};

fn run(seed: u64, steps: usize) {
    let mut b = Bytes::random(seed);
    let mut h = Harness::new(&mut b);
    for _ in 0..steps {
        h.step(&mut b);
    }
    h.finish();
}

#[test]
fn random_sequences_agree_with_the_model() {
    let seeds: u64 = std::env::var("LAPSE_MODEL_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(2000);
    for seed in 1..=seeds {
        let r = std::panic::catch_unwind(|| run(seed, 200));
        if r.is_err() {
            panic!("model test failed for seed {seed} (rerun: LAPSE_MODEL_SEEDS={seed})");
        }
    }
}

#[test]
fn long_sequences_agree_with_the_model() {
    for seed in 10_000..10_020 {
        run(seed, 5000);
    }
}
