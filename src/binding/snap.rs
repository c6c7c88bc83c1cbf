//! `snapshot()` / `TtlCache.restore()` for JS.
//!
//! Checking is Rust's: `restore` runs `crate::snapshot`'s decoder (its lean
//! mode, `check_with`: no tape of values, so memory stays proportional to
//! the keys) and builds the engine's slots as entries go by; JS then reads
//! keys and values from the bytes the decoder accepted. Encoding is
//! JS's (`cache.js` walks its values and writes the bytes: a Rust writer here
//! cost 2.7 KB of the 40 KB gzipped budget); every snapshot JS writes goes
//! through the same decoder (`checkSnapshot`) before `snapshot()` returns it,
//! and the decoder accepts only canonical encodings, so a JS writer that
//! passes writes exactly what `crate::snapshot::encode` writes.
//!
//! Restored slots are handed out in tape order (a fresh engine allocates
//! 0, 1, 2, ...), so JS numbers them with a counter; this file checks that.

use super::{headroom, RawEngine};
use crate::engine::{Engine, Kind, Options, Times};
use crate::error::Error;
use crate::protocol::{
    NIL, RESTORE_IDLE, RESTORE_LEN, RESTORE_MAX_BYTES, RESTORE_MAX_ENTRIES, RESTORE_NOW, RESTORE_SWEEP_BUDGET,
    RESTORE_TTL, SNAP_TRAILER_LEN,
};
use crate::snapshot::{self, corrupt, Visit};
use alloc::vec::Vec;

impl RawEngine {
    /// Checks the snapshot bytes JS wrote into `input` with the full
    /// decoder, so `snapshot()` can never return bytes `restore` rejects,
    /// and returns their CRC-32: JS leaves the trailer's last 4 bytes for
    /// it (one CRC implementation in the package instead of two; the check
    /// runs on the bytes with it filled in). Commits queued inserts first;
    /// changes nothing else. Out of memory is a `RangeError`, never a trap.
    pub fn check_snapshot(&mut self) -> Result<u32, Error> {
        self.call(|_| ());
        let mut bytes = core::mem::take(&mut self.input);
        let n = bytes.len().saturating_sub(SNAP_TRAILER_LEN);
        let crc = snapshot::crc32(&bytes[..n]);
        if let Some(t) = bytes.get_mut(n..) {
            for (b, c) in t.iter_mut().zip(crc.to_le_bytes()) {
                *b = c;
            }
        }
        let r =
            room_to_check(bytes.len(), "snapshot").and_then(|()| snapshot::check_with(&bytes, &mut |_, _, _| Ok(())));
        drop(bytes);
        r?;
        Ok(crc)
    }

    /// The size recorded for slot `s` (0 for a slot out of range).
    pub fn slot_weight(&self, s: u32) -> u32 {
        if (s as usize) < self.e.capacity() {
            self.e.weight(s)
        } else {
            0
        }
    }

    /// Replaces this (fresh, empty) engine with the one the bytes in
    /// `input` hold, and returns the header's numbers: `[now, ttl, idle,
    /// maxEntries, maxBytes, sweepBudget]`. JS reads keys and values from
    /// its own copy of the bytes (this decoder has checked them), so the
    /// memory needed here is the input, the strings and the engine's slots,
    /// not a tape of every value. Corrupt bytes throw a plain `Error`
    /// saying what is wrong, out of memory a `RangeError`; either changes
    /// nothing, and nothing traps.
    pub fn restore(&mut self) -> Result<Vec<f64>, Error> {
        let bytes = core::mem::take(&mut self.input);
        room_to_check(bytes.len(), "bytes")?;
        // Check everything and learn the options first, then build the
        // engine's slots on a second pass, on an engine with the snapshot's
        // clock (slots are scheduled as they arrive). `maxEntries` is set
        // after: no preallocation from a declared bound.
        let h = snapshot::check_with(&bytes, &mut |_, _, _| Ok(()))?.nums;
        debug_assert_eq!(h.len(), RESTORE_LEN, "the header's numbers, in RESTORE_* order");
        // Only the engine: the decoder checked the numbers (`Infinity`: none).
        let lim = |v: f64| (v != f64::INFINITY).then_some(v);
        let int = |v: f64| lim(v).map(|v| v as u64);
        let opts = Options {
            ttl: lim(h[RESTORE_TTL]),
            idle: lim(h[RESTORE_IDLE]),
            max_entries: None,
            max_bytes: int(h[RESTORE_MAX_BYTES]),
            sweep_budget: int(h[RESTORE_SWEEP_BUDGET]),
        };
        let mut fresh = Engine::new(&opts, h[RESTORE_NOW])?;
        let e = &mut fresh;
        e.set_max_entries(int(h[RESTORE_MAX_ENTRIES]));
        // Wide clocks: a snapshot's entries were mostly last read before
        // its time, which narrow ones from it could not hold.
        e.times.base = f64::NAN;
        let (mut next, mut hash) = (0u32, NIL);
        let mut failed = None;
        let r = snapshot::check_with(&bytes, &mut |kind, k, w| {
            if e.try_room(1, 0, 64).is_err() || e.try_columns(w != 0, kind != Visit::Plain, k.idle).is_err() {
                failed = Some(Error::oom("bytes"));
                return Err(corrupt("out of memory"));
            }
            let t = Times { abs: k.abs, last: k.last, idle: k.idle };
            let s = match kind {
                Visit::Plain => e.restore_slot(Kind::Plain, NIL, t, w),
                Visit::Hash => {
                    hash = e.restore_slot(Kind::Hash, NIL, t, 0);
                    hash
                }
                Visit::Field => e.restore_slot(Kind::Field, hash, t, w),
            };
            if s != next {
                return Err(corrupt("internal: restored slots out of order"));
            }
            next += 1;
            Ok(())
        });
        drop(bytes);
        if let Some(err) = failed {
            return Err(err);
        }
        r?;
        self.e = fresh;
        self.publish();
        Ok(h)
    }
}

/// Makes sure decoding `n` bytes cannot run out of memory halfway: the
/// decoder's own allocations (the strings' code units, at most 2 bytes per
/// input byte; the key ranges and the duplicate check, under 2 more) fit in
/// memory taken and given back here.
fn room_to_check(n: usize, arg: &'static str) -> Result<(), Error> {
    if headroom(n.saturating_mul(4).saturating_add(4096)) {
        Ok(())
    } else {
        Err(Error::oom(arg))
    }
}
