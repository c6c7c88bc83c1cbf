//! The byte format's constants: header, value tags, entry flags, encoding
//! rules, and the CRC-32 that seals it. `SNAPSHOT.md` documents the bytes.

use super::*;

// The format's numbers are the protocol's (the JS host writes and reads
// these bytes too); the public ones keep their names here.
use crate::protocol as p;

/// The 4 bytes every snapshot starts with.
pub const MAGIC: [u8; 4] = p::SNAP_MAGIC;
/// The format version this build writes. It reads this one and version 1
/// (which has no clock mode: it reads as [`ClockMode::Manual`]).
pub const VERSION: u16 = p::SNAP_VERSION;
/// Header flag (version 2): the cache followed a clock rather than moving
/// only with `tick`.
pub(super) const FLAG_FOLLOWS: u64 = p::SNAP_FLAG_FOLLOWS;
/// Deepest nesting of arrays, objects and maps inside one value.
pub const MAX_DEPTH: usize = p::SNAP_MAX_DEPTH;
/// Header (magic, version, flags, total length) bytes.
pub const HEADER_LEN: usize = p::SNAP_HEADER_LEN;
pub(super) use p::{SNAP_FLAGS_AT, SNAP_LENGTH_AT, SNAP_VERSION_AT};
pub(super) const TRAILER_LEN: usize = p::SNAP_TRAILER_LEN;
pub(super) const INF: f64 = f64::INFINITY;
pub(super) const CANONICAL_NAN: u64 = 0x7FF8_0000_0000_0000;
/// Largest magnitude a JS `Date` can hold.
pub(super) const MAX_DATE: f64 = 8.64e15;
/// Integers up to this magnitude are stored as varints.
pub(super) const MAX_SAFE: f64 = 9007199254740991.0;

// Value tags, and the entry and field flag bits (the format's kinds, not
// the engine's slot kinds): the protocol's names, so a reader of either
// side sees one spelling.
pub(super) use p::{
    ENTRY_FIELD, ENTRY_HASH, ENTRY_HAS_ABS, ENTRY_HAS_IDLE, ENTRY_HAS_WEIGHT, ENTRY_KIND_MASK, ENTRY_PLAIN, TAG_ARRAY,
    TAG_BIGINT, TAG_BYTES, TAG_DATE, TAG_FALSE, TAG_FLOAT, TAG_INT, TAG_MAP, TAG_NEG_BIGINT, TAG_NULL, TAG_NULL_OBJECT,
    TAG_OBJECT, TAG_STRING, TAG_TRUE, TAG_UNDEFINED,
};

/// Integers stored as varints: |x| <= 2^53 - 1, not -0.
pub(super) fn is_int(x: f64) -> bool {
    fract(x) == 0.0 && x.abs() <= MAX_SAFE && !(x == 0.0 && x.is_sign_negative())
}

/// CRC-32 (the zlib/PNG polynomial). Detects every error burst up to 32 bits,
/// so every single-byte corruption.
///
/// ```
/// assert_eq!(lapse_cache::snapshot::crc32(b"123456789"), 0xCBF4_3926);
/// ```
pub fn crc32(data: &[u8]) -> u32 {
    // Built per call (2k steps) instead of a 1 KB static table: this keeps
    // the table out of the wasm data section.
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
        }
        *t = c;
    }
    let mut crc = !0u32;
    for &b in data {
        crc = table[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}
