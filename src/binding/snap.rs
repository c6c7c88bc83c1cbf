//! `TtlCache.restore()`'s engine half.
//!
//! Snapshots are JS's to write, check and read (`pkg-template/src/decode.js`
//! implements every check of `crate::snapshot`'s decoder, with the same
//! messages; `tests/data/decode-diff.txt` holds the two to the same verdict
//! on thousands of inputs), so no decoder is linked into the package's wasm.
//! What only the engine can do stays here: a fresh engine, made with the
//! snapshot's clock and options, takes the checked entries' slots one by
//! one, with their exact clocks and sizes.

use super::RawEngine;
use crate::engine::{Kind, Times};
use crate::error::Error;
use crate::protocol::{ENTRY_FIELD, ENTRY_HASH, ENTRY_PLAIN, NIL};

const PLAIN: u32 = ENTRY_PLAIN as u32;
const HASH: u32 = ENTRY_HASH as u32;
const FIELD: u32 = ENTRY_FIELD as u32;

impl RawEngine {
    /// The size recorded for slot `s` (0 for a slot out of range).
    pub fn slot_weight(&self, s: u32) -> u32 {
        if (s as usize) < self.e.capacity() {
            self.e.weight(s)
        } else {
            0
        }
    }

    /// Adds the next slot of a snapshot JS has decoded and checked to this
    /// fresh engine: an `ENTRY_*` kind (a field's hash is slot `parent`),
    /// its clocks and size. Returns the slot: a fresh engine hands out 0, 1,
    /// 2, ... (JS numbered them so, and checks). Any other kind ends the
    /// restore: `abs` is then `maxEntries` (`Infinity`: none), set last so
    /// that the columns grow with the entries, never to a declared bound.
    /// Out of memory is a `RangeError`, nothing changed; nothing traps.
    pub fn restore(&mut self, kind: u32, parent: u32, t: Times, w: u32) -> Result<u32, Error> {
        self.call(|e| {
            // Wide clocks: a snapshot's entries were mostly last read before
            // its time, which narrow ones from it could not hold.
            if e.capacity() == 0 {
                e.times.base = f64::NAN;
            }
            let k = match kind {
                PLAIN => Kind::Plain,
                HASH => Kind::Hash,
                FIELD if (parent as usize) < e.capacity() && e.kind(parent) == Kind::Hash => Kind::Field,
                FIELD => return Err(RawEngine::stale()),
                _ => {
                    e.set_max_entries((t.abs != f64::INFINITY).then_some(t.abs as u64));
                    return Ok(NIL);
                }
            };
            // JS's decoder checked each hash's total (see the format's).
            debug_assert!(k != Kind::Field || u64::from(e.weight(parent)) + u64::from(w) <= u64::from(u32::MAX));
            if e.try_room(1, 0, 64).is_err() || e.try_columns(w != 0, k != Kind::Plain, t.idle).is_err() {
                return Err(Error::oom("bytes"));
            }
            Ok(e.restore_slot(k, if k == Kind::Field { parent } else { NIL }, t, w))
        })
    }
}
