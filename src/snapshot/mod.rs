//! The snapshot format (version 2; version 1 is still read): the Rust encoder
//! and decoder, used by the native [`TtlCache`](crate::TtlCache) and the fuzz
//! targets. `SNAPSHOT.md` documents the bytes. The npm package has its own
//! writer and decoder in JS (`pkg-template/src/snapshot.js`, `decode.js`), and
//! its no-std wasm does not compile this module (`src/lib.rs`): the corpus
//! holds the two writers to the same bytes, and `tests/data/decode-diff.txt`
//! the two decoders to the same verdicts (`tests/snapshot_diff.rs`).
//!
//! Everything works on a [`Tape`]: a flat form of a snapshot (numbers, UTF-16
//! code units, raw bytes). [`decode_tape`] parses bytes into a
//! tape; [`encode_tape`] writes one; both run the same content check. The
//! [`Snapshot`]/[`Value`] tree is a native view of a tape
//! ([`Snapshot::to_tape`], [`Snapshot::from_tape`]); [`encode`] and
//! [`decode`] go through it.
//!
//! The decoder is written for hostile input: it checks every declared length
//! against the bytes that remain before it allocates, bounds nesting at
//! [`MAX_DEPTH`], rejects non-canonical encodings (so any accepted input
//! re-encodes to the same bytes), verifies a CRC-32 over everything, and then
//! checks the content makes sense (live clocks, no duplicate keys, bounds).
//!
//! ```
//! use lapse_cache::snapshot::{decode, encode, Body, Clocks, Entry, Snapshot, Value};
//! use lapse_cache::snapshot::ClockMode;
//! let s = Snapshot {
//!     now: 1000.0,
//!     clock: ClockMode::Manual,
//!     options: Default::default(),
//!     entries: vec![Entry {
//!         key: "k".encode_utf16().collect(),
//!         clocks: Clocks { abs: 5000.0, last: 1000.0, idle: f64::INFINITY },
//!         body: Body::Plain { weight: 0, value: Value::Number(42.0) },
//!     }],
//! };
//! let bytes = encode(&s).unwrap();
//! assert_eq!(decode(&bytes).unwrap(), s);
//! assert!(decode(&bytes[..bytes.len() - 1]).is_err());
//! ```

use crate::error::{cat, uint, Error, Result};
use crate::float::fract;
use crate::types::Options;
use alloc::{string::String, vec::Vec};

mod check;
mod decoder;
mod encoder;
mod format;
mod tape;
#[cfg(test)]
mod tests;
mod value;

pub use decoder::{check_with, decode, decode_tape, decode_tape_with, Visit};
pub use encoder::{encode, encode_tape};
pub use format::{crc32, HEADER_LEN, MAGIC, MAX_DEPTH, VERSION};
pub use tape::{Clocks, Tape};
pub use value::{Body, ClockMode, Entry, Field, Snapshot, Value};
// What the parts share, for their `use super::*`.
use check::*;
use format::*;
use tape::*;
use value::*;

/// Internal errors are static text (formatting code is costly in wasm); the
/// entry index or byte offset is added once, at the top.
type R<T> = core::result::Result<T, &'static str>;

pub(crate) fn corrupt(msg: impl Into<String>) -> Error {
    Error::Corrupt(msg.into())
}

fn short() -> &'static str {
    "short tape"
}
