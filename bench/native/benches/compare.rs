//! `cargo bench` entry point of the comparison (issue 19): the same suite as
//! `cargo run --release`, built with the bench profile. Arguments after `--`
//! pass through, e.g. `cargo bench -- --n 100000,1000000 --reps 5`.

#[path = "../src/main.rs"]
mod suite;

fn main() {
    suite::main();
}
