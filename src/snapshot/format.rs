//! The byte format's constants: header, value tags, entry flags, encoding
//! rules, and the CRC-32 that seals it. `SNAPSHOT.md` documents the bytes.

use super::*;

/// The 4 bytes every snapshot starts with.
pub const MAGIC: [u8; 4] = [0x89, b'L', b'P', b'S'];
/// The format version this build writes. It reads this one and version 1
/// (which has no clock mode: it reads as [`ClockMode::Manual`]).
pub const VERSION: u16 = 2;
/// Header flag (version 2): the cache followed a clock rather than moving
/// only with `tick`.
pub(super) const FLAG_FOLLOWS: u64 = 1;
/// Deepest nesting of arrays, objects and maps inside one value.
pub const MAX_DEPTH: usize = 64;
/// Header (magic, version, flags, total length) bytes.
pub const HEADER_LEN: usize = 16;
pub(super) const TRAILER_LEN: usize = 4;
pub(super) const INF: f64 = f64::INFINITY;
pub(super) const CANONICAL_NAN: u64 = 0x7FF8_0000_0000_0000;
/// Largest magnitude a JS `Date` can hold.
pub(super) const MAX_DATE: f64 = 8.64e15;
/// Integers up to this magnitude are stored as varints.
pub(super) const MAX_SAFE: f64 = 9007199254740991.0;

// Value tags.
pub(super) const T_UNDEFINED: u8 = 0;
pub(super) const T_NULL: u8 = 1;
pub(super) const T_FALSE: u8 = 2;
pub(super) const T_TRUE: u8 = 3;
pub(super) const T_INT: u8 = 4;
pub(super) const T_FLOAT: u8 = 5;
pub(super) const T_STRING: u8 = 6;
pub(super) const T_ARRAY: u8 = 7;
pub(super) const T_OBJECT: u8 = 8;
pub(super) const T_NULL_OBJECT: u8 = 9;
pub(super) const T_BYTES: u8 = 10;
pub(super) const T_DATE: u8 = 11;
pub(super) const T_MAP: u8 = 12;
pub(super) const T_BIGINT: u8 = 13;
pub(super) const T_NEG_BIGINT: u8 = 14;

// Entry and field flag bits.
pub(super) const KIND_PLAIN: u8 = 0;
pub(super) const KIND_HASH: u8 = 1;
pub(super) const KIND_FIELD: u8 = 2;
pub(super) const KIND_MASK: u8 = 3;
pub(super) const HAS_ABS: u8 = 1 << 2;
pub(super) const HAS_IDLE: u8 = 1 << 3;
pub(super) const HAS_WEIGHT: u8 = 1 << 4;

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
