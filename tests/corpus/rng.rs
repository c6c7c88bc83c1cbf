//! xorshift64*, seeded: the generators that write `tests/data/` files
//! (`corpus.rs`, `snapshot_diff.rs`) write the same file on every run. Each
//! adds the draws it needs in an `impl` of its own.

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}
