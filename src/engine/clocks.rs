//! The clocks column: each slot's absolute deadline and last access, narrow
//! (two `u32` milliseconds after a base: 8 bytes a slot) while every time
//! the engine stores fits that, else wide (two `f64`s: 16 bytes), for good.
//!
//! Narrow is exact: a time is stored narrow only when it is the base plus a
//! whole number of milliseconds up to `TIMES_MAX` (`TIMES_NEVER` is
//! "none"), so reading it back gives the very same `f64`, and every
//! comparison the engine and the hosts make is the one they made on the
//! `f64`s. A cache that follows `Date.now()` with whole-millisecond
//! lifetimes stays narrow for about 49 days from its base; a fractional
//! time (`performance.now()`, a `ttl` of 0.5), a deadline further away, or
//! a clock that has run past the range widens the column, fallibly, before
//! the call that needs it changes anything (see `fit`).
//!
//! The base is a whole number from 0 to `MAX_BASE`, so that for any time
//! `t` at or after it `t - base` is exact (no rounding can make a fraction
//! look whole), and `base + TIMES_NEVER` is exact and later than any time
//! stored: the JS host compares `U32[abs] + base > now` with no special
//! case for "none". While narrow, the engine's clock fits too (it widens
//! before it moves past the range), so a host may store `now` as it is.
//! The JS host reads and writes the column through a `Uint32Array` or a
//! `Float64Array` view, as the base it finds after each call says (see
//! "Clocks" in `protocol`). A restored engine starts wide: a snapshot's
//! entries were mostly last read before its time, which a base at it could
//! not hold.

use super::Clocks;
use crate::clock::NEVER;
use crate::protocol::{TIMES_ABS, TIMES_LAST, TIMES_MAX, TIMES_NEVER, TIMES_STRIDE};
use alloc::collections::TryReserveError;
use alloc::vec::Vec;

/// The largest base: `base + 2^32` stays exact (below 2^53).
const MAX_BASE: f64 = 9_007_194_959_773_696.0; // 2^53 - 2^32

/// `t` as a base, if it can be one (else NaN): a whole number from +0 to
/// `MAX_BASE` (not -0: a clock at -0 would not fit a base of +0).
fn base_of(t: f64) -> f64 {
    // Positive f64s order like their bits; -0, negatives and NaN are above.
    if t.to_bits() <= MAX_BASE.to_bits() && t as u64 as f64 == t {
        t
    } else {
        f64::NAN
    }
}

/// The clocks of every slot, `TIMES_STRIDE` times per slot: narrow, one
/// `u32` word each; wide, an `f64` in two words (little-endian, as JS's
/// `Float64Array` reads them: wasm blocks are 8-aligned). One vector for
/// both, so that widening doubles it in place when it can.
pub(crate) struct ClockCol {
    w: Vec<u32>,
    /// What narrow times count from; NaN while wide.
    pub base: f64,
}

impl ClockCol {
    pub const EMPTY: ClockCol = ClockCol { w: Vec::new(), base: 0.0 };
    /// Narrow from `now` if it can be a base, else wide.
    pub fn new(now: f64) -> ClockCol {
        ClockCol { w: Vec::new(), base: base_of(now) }
    }

    pub fn is_wide(&self) -> bool {
        self.base.is_nan()
    }

    /// Words a time takes: 1 narrow, 2 wide.
    fn words(&self) -> usize {
        1 + usize::from(self.is_wide())
    }

    /// Whether `t` can be stored as the column is.
    pub fn fits(&self, t: f64) -> bool {
        let x = t - self.base;
        let v = x as u32;
        // Bits, not `==`: -0 (after a base of +0) is not 0. Wide: NaN.
        self.is_wide() || t == NEVER || (f64::from(v).to_bits() == x.to_bits() && v <= TIMES_MAX)
    }

    /// Makes `t` storable: widens the column if it does not fit narrow.
    /// False: out of memory, and nothing changed.
    #[inline(never)]
    pub fn fit(&mut self, t: f64) -> bool {
        if self.fits(t) {
            return true;
        }
        let n = self.w.len();
        if self.w.try_reserve_exact(n).is_err() {
            return false;
        }
        self.w.resize(2 * n, 0);
        let p = self.w.as_mut_ptr();
        // From the end: time `i`'s two words overwrite narrow words `2i`
        // and `2i + 1`, read already.
        for i in (0..n).rev() {
            // SAFETY: `i < n` and `2i + 1 < 2n`, the vector's length.
            unsafe { (p.add(2 * i) as *mut f64).write_unaligned(self.unpack(*p.add(i))) };
        }
        self.base = f64::NAN;
        true
    }

    /// The time narrow word `v` holds.
    fn unpack(&self, v: u32) -> f64 {
        if v == TIMES_NEVER {
            NEVER
        } else {
            self.base + f64::from(v)
        }
    }

    /// Word `w` of slot `s`: its deadline (`TIMES_ABS`) or last access.
    pub fn time(&self, s: u32, w: usize) -> f64 {
        let i = s as usize * TIMES_STRIDE + w;
        if self.is_wide() {
            f64::from_bits(u64::from(self.w[2 * i]) | u64::from(self.w[2 * i + 1]) << 32)
        } else {
            self.unpack(self.w[i])
        }
    }

    /// Sets word `w` of slot `s` to `t`, which must fit (see `fit`);
    /// natively a time that does not widens the column here.
    pub fn set(&mut self, s: u32, w: usize, t: f64) {
        #[cfg(not(target_arch = "wasm32"))]
        assert!(self.fit(t), "out of memory");
        debug_assert!(self.fits(t), "{t} does not fit the narrow clocks from {}", self.base);
        let i = s as usize * TIMES_STRIDE + w;
        if self.is_wide() {
            let b = t.to_bits();
            self.w[2 * i] = b as u32;
            self.w[2 * i + 1] = (b >> 32) as u32;
        } else {
            // (`NEVER` saturates to `TIMES_NEVER`.)
            self.w[i] = (t - self.base) as u32;
        }
    }

    /// Slot `s`'s clocks.
    pub fn get(&self, s: u32) -> Clocks {
        Clocks { abs: self.time(s, TIMES_ABS), last: self.time(s, TIMES_LAST) }
    }

    /// Sets slot `s`'s clocks (see `set`).
    pub fn put(&mut self, s: u32, c: Clocks) {
        self.set(s, TIMES_ABS, c.abs);
        self.set(s, TIMES_LAST, c.last);
    }

    /// Slots the column holds.
    pub fn len(&self) -> usize {
        self.w.len() / TIMES_STRIDE / self.words()
    }

    /// Room for `extra` more slots.
    pub fn try_reserve(&mut self, extra: usize) -> Result<(), TryReserveError> {
        self.w.try_reserve_exact(extra * TIMES_STRIDE * self.words())
    }

    /// Grows to `cap` slots, the new ones free (no deadline, no access).
    pub fn grow(&mut self, cap: usize) {
        let n = self.len();
        self.w.resize(cap * TIMES_STRIDE * self.words(), TIMES_NEVER);
        if self.is_wide() {
            for s in n..cap {
                self.put(s as u32, Clocks::EMPTY);
            }
        }
    }

    /// Where the column is (the wasm binding's status block). JS reads wide
    /// times through a `Float64Array` at `ptr / 8`: `heap.rs` aligns every
    /// block to 8 bytes, whatever the `Vec<u32>` asks for.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    pub fn ptr(&self) -> u32 {
        self.w.as_ptr() as u32
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        self.w.capacity() * 4
    }

    /// Loads slot `s`'s first word, only to start its cache line on the way
    /// (see `Engine::warm`).
    pub fn warm(&self, s: u32) {
        // SAFETY: as in `Links::warm`.
        unsafe { core::ptr::read_volatile(&self.w[s as usize * TIMES_STRIDE * self.words()]) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(base: f64, n: usize) -> ClockCol {
        let mut c = ClockCol::new(base);
        c.try_reserve(n).unwrap();
        c.grow(n);
        c
    }

    #[test]
    fn bases_are_whole_non_negative_and_leave_room() {
        for t in [0.0, 1.0, 1.7e12, MAX_BASE] {
            assert!(!ClockCol::new(t).is_wide(), "{t}");
        }
        for t in [-0.0, -1.0, 0.5, MAX_BASE + 2.0, 1e300, f64::INFINITY, f64::NAN, 1.7e12 + 0.25] {
            assert!(ClockCol::new(t).is_wide(), "{t}");
        }
    }

    #[test]
    fn narrow_times_read_back_exactly_and_the_rest_widen() {
        let b = 1.7e12;
        let mut c = col(b, 4);
        assert_eq!(c.get(0), Clocks::EMPTY);
        for t in [b, b + 1.0, b + f64::from(TIMES_MAX), NEVER] {
            assert!(c.fits(t), "{t}");
            c.put(1, Clocks { abs: t, last: b });
            assert_eq!(c.get(1), Clocks { abs: t, last: b });
        }
        for t in [b - 1.0, b + 0.5, b + f64::from(TIMES_NEVER), b + 2f64.powi(40), -0.0, f64::MAX, b + 2f64.powi(-12)] {
            assert!(!c.fits(t), "{t}");
        }
        let held = Clocks { abs: b + 7.0, last: b + 3.0 };
        c.put(2, held);
        assert!(c.fit(b + 0.5));
        assert!(c.is_wide() && c.fits(-0.0) && c.fits(b + 0.5));
        assert_eq!((c.get(0), c.get(1), c.get(2), c.len()), (Clocks::EMPTY, Clocks { abs: NEVER, last: b }, held, 4));
        c.put(3, Clocks { abs: b + 0.5, last: -0.0 });
        assert_eq!(c.get(3).last.to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn the_words_are_where_the_protocol_says() {
        let mut c = col(1000.0, 2);
        c.put(1, Clocks { abs: 1007.0, last: 1003.0 });
        let w = |c: &ClockCol, i: usize| c.w[i];
        assert_eq!((w(&c, TIMES_STRIDE + TIMES_ABS), w(&c, TIMES_STRIDE + TIMES_LAST)), (7, 3));
        assert_eq!((w(&c, TIMES_ABS), w(&c, TIMES_LAST)), (TIMES_NEVER, TIMES_NEVER), "a free slot's");
        assert!(c.fit(0.5));
        let f = |c: &ClockCol, i: usize| f64::from_bits(u64::from(c.w[2 * i]) | u64::from(c.w[2 * i + 1]) << 32);
        assert_eq!((f(&c, TIMES_STRIDE + TIMES_ABS), f(&c, TIMES_STRIDE + TIMES_LAST)), (1007.0, 1003.0));
    }

    #[test]
    fn a_zero_base_keeps_minus_zero_apart() {
        let c = col(0.0, 1);
        assert!(c.fits(0.0) && !c.fits(-0.0));
    }
}
