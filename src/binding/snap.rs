//! `snapshot()` / `TtlCache.restore()` for JS.
//!
//! Decoding is Rust's: `restore` runs `crate::snapshot`'s decoder and hands
//! JS a `Tape` (tags, counts, clocks and numbers; UTF-16 code units with
//! lone surrogates intact; raw bytes) to build its values from. Encoding is
//! JS's (`cache.js` walks its values and writes the bytes: a Rust writer here
//! cost 2.7 KB of the 40 KB gzipped budget); every snapshot JS writes goes
//! through the same decoder (`checkSnapshot`) before `snapshot()` returns it,
//! and the decoder accepts only canonical encodings, so a JS writer that
//! passes writes exactly what `crate::snapshot::encode` writes.
//!
//! Restored slots are handed out in tape order (a fresh engine allocates
//! 0, 1, 2, ...), so JS numbers them with a counter; this file checks that.

use wasm_bindgen::prelude::*;

use super::RawEngine;
use crate::engine::{Kind, Times};
use crate::list::NIL;
use crate::snapshot::{self, corrupt, Visit};
use alloc::vec::Vec;

#[wasm_bindgen]
impl RawEngine {
    /// Checks snapshot bytes JS wrote with the full decoder, so `snapshot()`
    /// can never return bytes `restore` rejects. Commits queued inserts
    /// first; changes nothing else.
    #[wasm_bindgen(js_name = checkSnapshot)]
    pub fn check_snapshot(&mut self, bytes: &[u8]) -> Result<(), JsValue> {
        self.call(|_| ());
        snapshot::decode_tape(bytes)?;
        Ok(())
    }

    /// The size recorded for slot `s` (0 for a slot out of range).
    #[wasm_bindgen(js_name = slotWeight)]
    pub fn slot_weight(&self, s: u32) -> u32 {
        if (s as usize) < self.e.capacity() {
            self.e.weight(s)
        } else {
            0
        }
    }

    /// Replaces this (fresh, empty) engine with the one `bytes` hold, and
    /// returns the tape JS fills its side from, packed in one array:
    /// `[nNums, nUnits, nBytes, ...nums, ...units, ...bytes]`. Corrupt bytes
    /// throw a plain `Error` saying what is wrong and change nothing;
    /// nothing traps.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<Vec<f64>, JsValue> {
        // Decode once to check everything and learn the options, then again
        // to build the engine's slots as the entries go by.
        let h = snapshot::decode_tape(bytes)?.nums;
        let mut raw = RawEngine::new(h[0], h[1], h[2], f64::INFINITY, h[4], h[5])?;
        let e = &mut raw.e;
        e.set_max_entries((h[3] != f64::INFINITY).then_some(h[3] as u64));
        let (mut next, mut hash) = (0u32, NIL);
        let t = snapshot::decode_tape_with(bytes, &mut |kind, k, w| {
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
        })?;
        self.e = raw.e;
        self.publish();
        let mut out = Vec::with_capacity(3 + t.nums.len() + t.units.len() + t.bytes.len());
        out.extend_from_slice(&[t.nums.len() as f64, t.units.len() as f64, t.bytes.len() as f64]);
        out.extend_from_slice(&t.nums);
        out.extend(t.units.iter().map(|&u| f64::from(u)));
        out.extend(t.bytes.iter().map(|&b| f64::from(b)));
        Ok(out)
    }
}
