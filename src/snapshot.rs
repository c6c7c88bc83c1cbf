//! The snapshot format (version 2; version 1 is still read): one implementation of the encoder and the
//! decoder, shared by the JS binding, the native [`TtlCache`](crate::TtlCache)
//! and the fuzz targets. `SNAPSHOT.md` documents the bytes.
//!
//! Everything works on a [`Tape`]: a flat form of a snapshot (numbers, UTF-16
//! code units, raw bytes) that the JS binding builds and reads directly, so
//! the wasm build needs no value tree. [`decode_tape`] parses bytes into a
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

use crate::engine::Options;
use crate::error::{cat, uint, Error, Result};
use crate::float::fract;
use alloc::{string::String, vec::Vec};

/// The 4 bytes every snapshot starts with.
pub const MAGIC: [u8; 4] = [0x89, b'L', b'P', b'S'];
/// The format version this build writes. It reads this one and version 1
/// (which has no clock mode: it reads as [`ClockMode::Manual`]).
pub const VERSION: u16 = 2;
/// Header flag (version 2): the cache followed a clock rather than moving
/// only with `tick`.
const FLAG_FOLLOWS: u64 = 1;
/// Deepest nesting of arrays, objects and maps inside one value.
pub const MAX_DEPTH: usize = 64;
/// Header (magic, version, flags, total length) bytes.
pub const HEADER_LEN: usize = 16;
const TRAILER_LEN: usize = 4;
const INF: f64 = f64::INFINITY;
const CANONICAL_NAN: u64 = 0x7FF8_0000_0000_0000;
/// Largest magnitude a JS `Date` can hold.
const MAX_DATE: f64 = 8.64e15;
/// Integers up to this magnitude are stored as varints.
const MAX_SAFE: f64 = 9007199254740991.0;

// Value tags.
const T_UNDEFINED: u8 = 0;
const T_NULL: u8 = 1;
const T_FALSE: u8 = 2;
const T_TRUE: u8 = 3;
const T_INT: u8 = 4;
const T_FLOAT: u8 = 5;
const T_STRING: u8 = 6;
const T_ARRAY: u8 = 7;
const T_OBJECT: u8 = 8;
const T_NULL_OBJECT: u8 = 9;
const T_BYTES: u8 = 10;
const T_DATE: u8 = 11;
const T_MAP: u8 = 12;
const T_BIGINT: u8 = 13;
const T_NEG_BIGINT: u8 = 14;

// Entry and field flag bits.
const KIND_PLAIN: u8 = 0;
const KIND_HASH: u8 = 1;
const KIND_FIELD: u8 = 2;
const KIND_MASK: u8 = 3;
const HAS_ABS: u8 = 1 << 2;
const HAS_IDLE: u8 = 1 << 3;
const HAS_WEIGHT: u8 = 1 << 4;

/// A value with a data form. Strings are UTF-16 code units, as in JS, so
/// lone surrogates survive.
#[derive(Debug, Clone)]
pub enum Value {
    /// `undefined`: only inside arrays, objects and maps.
    Undefined,
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// Any number, `-0`, `NaN` and the infinities included.
    Number(f64),
    /// A string as UTF-16 code units.
    String(Vec<u16>),
    /// An array (holes read as `undefined`).
    Array(Vec<Value>),
    /// A plain object's own enumerable string-keyed properties, in
    /// `Object.keys` order; `null_proto` for `Object.create(null)`.
    Object {
        /// The prototype is `null` rather than `Object.prototype`.
        null_proto: bool,
        /// Properties; names are unique.
        props: Vec<(Vec<u16>, Value)>,
    },
    /// A `Uint8Array`.
    Bytes(Vec<u8>),
    /// A `Date` by its time value (`NaN` for an invalid date).
    Date(f64),
    /// A `Map`, in insertion order.
    Map(Vec<(Value, Value)>),
    /// A `bigint`: sign and big-endian magnitude without leading zeros.
    BigInt {
        /// Negative (never for zero).
        neg: bool,
        /// Big-endian magnitude; empty for zero.
        magnitude: Vec<u8>,
    },
}

/// Bitwise equality for numbers (`NaN == NaN`, `0 != -0`), as a round trip
/// needs.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Undefined, Undefined) | (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Number(a), Number(b)) | (Date(a), Date(b)) => same_f64(*a, *b),
            (String(a), String(b)) => a == b,
            (Array(a), Array(b)) => a == b,
            (Object { null_proto: p, props: a }, Object { null_proto: q, props: b }) => p == q && a == b,
            (Bytes(a), Bytes(b)) => a == b,
            (Map(a), Map(b)) => a == b,
            (BigInt { neg: n, magnitude: a }, BigInt { neg: m, magnitude: b }) => n == m && a == b,
            _ => false,
        }
    }
}

fn same_f64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// The clocks of an entry or field, in ms; `f64::INFINITY` for none.
#[derive(Debug, Clone, Copy)]
pub struct Clocks {
    /// Absolute deadline.
    pub abs: f64,
    /// Last access (write, `get`, `touch`).
    pub last: f64,
    /// Idle window.
    pub idle: f64,
}

impl PartialEq for Clocks {
    fn eq(&self, o: &Clocks) -> bool {
        same_f64(self.abs, o.abs) && same_f64(self.last, o.last) && same_f64(self.idle, o.idle)
    }
}

impl Clocks {
    fn deadline(&self) -> f64 {
        self.abs.min(self.last + self.idle)
    }
}

/// One field of a hash.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Field name, UTF-16.
    pub name: Vec<u16>,
    /// The field's own clocks.
    pub clocks: Clocks,
    /// Its size for `maxBytes` (0 without a bound).
    pub weight: u32,
    /// Its value.
    pub value: Value,
}

/// What a key holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// A plain value with its size.
    Plain {
        /// Size for `maxBytes`.
        weight: u32,
        /// The value.
        value: Value,
    },
    /// A hash: at least one field, names unique, in insertion order.
    Hash {
        /// The fields.
        fields: Vec<Field>,
    },
}

/// One top-level key.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key, UTF-16.
    pub key: Vec<u16>,
    /// The key's own clocks (a hash key has its own too).
    pub clocks: Clocks,
    /// Its content.
    pub body: Body,
}

/// How the snapshotted cache's clock moved (header flags, version 2).
///
/// ```
/// assert_eq!(lapse_cache::snapshot::ClockMode::default(), lapse_cache::snapshot::ClockMode::Manual);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ClockMode {
    /// Only with `tick` (JS `{ now }`; a native cache without a time source).
    #[default]
    Manual,
    /// It followed a clock (JS: `Date.now()` or a `clock` function; native:
    /// a [`TimeSource`](crate::TimeSource)). The function is not data: JS
    /// `restore` follows `Date.now()` again unless given another `clock`.
    Follow,
}

/// A whole cache: clock, options and live entries in insertion order.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The cache's clock.
    pub now: f64,
    /// Whether that clock was manual or followed a time source.
    pub clock: ClockMode,
    /// The constructor options that are data.
    pub options: Options,
    /// Live entries; keys unique.
    pub entries: Vec<Entry>,
}

// ---- CRC-32 (IEEE 802.3, as zlib) ----------------------------------------------

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

// ---- the tape -------------------------------------------------------------------

/// A snapshot in flat form: what the JS binding builds and reads, and what
/// the encoder, the decoder and the content check walk. Grammar (every item
/// one `f64` in `nums`; strings' code units go to `units` and `Uint8Array`
/// bytes to `bytes`, in order):
///
/// ```text
/// tape   := now ttl idle maxEntries maxBytes sweepBudget count entry*   (limits: Infinity = none)
/// entry  := keyLen kind abs last idle weight (value | nFields field*)   (kind 0 plain, 1 hash)
/// field  := nameLen abs last idle weight value
/// value  := 0 undefined | 1 null | 2 false | 3 true | 4 x (number) | 5 len (string)
///         | 6 n value* (array) | 7 n (len value)* (object) | 8 n (len value)* (null-prototype object)
///         | 9 n (Uint8Array: n bytes) | 10 t (Date) | 11 n (value value)* (Map)
///         | 12 neg n (bigint: n bytes of big-endian magnitude, no leading zero)
/// ```
#[derive(Debug, Clone, Default)]
pub struct Tape {
    /// Tags, counts, clocks and numbers.
    pub nums: Vec<f64>,
    /// Every string's UTF-16 code units, concatenated.
    pub units: Vec<u16>,
    /// Every byte array's bytes, concatenated.
    pub bytes: Vec<u8>,
    /// The clock mode (a header flag, not part of `nums`).
    pub clock: ClockMode,
}

const V_UNDEF: u8 = 0;
const V_NULL: u8 = 1;
const V_FALSE: u8 = 2;
const V_TRUE: u8 = 3;
const V_NUM: u8 = 4;
const V_STR: u8 = 5;
const V_ARR: u8 = 6;
const V_OBJ: u8 = 7;
const V_NOBJ: u8 = 8;
const V_BYTES: u8 = 9;
const V_DATE: u8 = 10;
const V_MAP: u8 = 11;
const V_BIG: u8 = 12;

/// Internal errors are static text (formatting code is costly in wasm); the
/// entry index or byte offset is added once, at the top.
type R<T> = core::result::Result<T, &'static str>;

pub(crate) fn corrupt(msg: impl Into<String>) -> Error {
    Error::Corrupt(msg.into())
}

fn short() -> &'static str {
    "short tape"
}

struct Cur<'a> {
    t: &'a Tape,
    n: usize,
    u: usize,
    b: usize,
}

impl<'a> Cur<'a> {
    fn new(t: &'a Tape) -> Self {
        Cur { t, n: 0, u: 0, b: 0 }
    }
    fn num(&mut self) -> R<f64> {
        let x = *self.t.nums.get(self.n).ok_or_else(short)?;
        self.n += 1;
        Ok(x)
    }
    fn int(&mut self, max: f64) -> R<u64> {
        let x = self.num()?;
        if fract(x) == 0.0 && (0.0..=max).contains(&x) {
            Ok(x as u64)
        } else {
            Err("bad count")
        }
    }
    /// A count of items that each take at least one number.
    fn count(&mut self) -> R<usize> {
        let n = self.int(MAX_SAFE)?;
        if n > (self.t.nums.len() - self.n) as u64 {
            return Err(short());
        }
        Ok(n as usize)
    }
    fn str(&mut self) -> R<&'a [u16]> {
        let len = self.int(MAX_SAFE)? as usize;
        let s = self.t.units.get(self.u..self.u.saturating_add(len)).ok_or_else(short)?;
        self.u += len;
        Ok(s)
    }
    fn bin(&mut self) -> R<&'a [u8]> {
        let len = self.int(MAX_SAFE)? as usize;
        let s = self.t.bytes.get(self.b..self.b.saturating_add(len)).ok_or_else(short)?;
        self.b += len;
        Ok(s)
    }
    fn tag(&mut self) -> R<u8> {
        Ok(self.int(f64::from(V_BIG))? as u8)
    }
    fn clocks(&mut self) -> R<Clocks> {
        Ok(Clocks { abs: self.num()?, last: self.num()?, idle: self.num()? })
    }
}

// ---- shared checks ---------------------------------------------------------------

/// A property name JS orders first: an array index, the canonical decimal
/// form of an integer below 2^32 - 1.
fn array_index(u: &[u16]) -> Option<u32> {
    if u.is_empty() || u.len() > 10 || (u.len() > 1 && u[0] == u16::from(b'0')) {
        return None;
    }
    let mut v = 0u64;
    for &c in u {
        let d = c.wrapping_sub(u16::from(b'0'));
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    (v < u64::from(u32::MAX)).then_some(v as u32)
}

/// Whether two of `items` are equal. Sorts (heapsort: O(n log n) whatever
/// the input, so crafted keys cannot slow it down the way they can a hash
/// table; and a few hundred bytes of wasm, where `sort_unstable` costs 20 KB).
fn has_dup(mut v: Vec<&[u16]>) -> bool {
    fn sift(v: &mut [&[u16]], mut root: usize, end: usize) {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && v[child] < v[child + 1] {
                child += 1;
            }
            if v[root] >= v[child] {
                return;
            }
            v.swap(root, child);
            root = child;
        }
    }
    let n = v.len();
    for i in (0..n / 2).rev() {
        sift(&mut v, i, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift(&mut v, 0, end);
    }
    v.windows(2).any(|w| w[0] == w[1])
}

/// Whether the code-unit ranges `r` of `units` hold two equal strings.
fn dup_ranges(units: &[u16], r: &[(usize, usize)]) -> bool {
    has_dup(r.iter().map(|&(a, b)| &units[a..b]).collect())
}

/// What the decoder reports for each entry and field, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// A plain key.
    Plain,
    /// A hash key (its fields follow).
    Hash,
    /// A field of the last hash.
    Field,
}

/// Integers stored as varints: |x| <= 2^53 - 1, not -0.
fn is_int(x: f64) -> bool {
    fract(x) == 0.0 && x.abs() <= MAX_SAFE && !(x == 0.0 && x.is_sign_negative())
}

// ---- the encoder ----------------------------------------------------------------

struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn u8(&mut self, b: u8) {
        self.out.push(b);
    }
    fn f64(&mut self, x: f64) {
        let bits = if x.is_nan() { CANONICAL_NAN } else { x.to_bits() };
        self.out.extend_from_slice(&bits.to_le_bytes());
    }
    fn varint(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7F) as u8;
            v >>= 7;
            if v == 0 {
                self.out.push(b);
                return;
            }
            self.out.push(b | 0x80);
        }
    }
    fn str(&mut self, s: &[u16]) {
        let wide = s.iter().any(|&u| u > 0xFF);
        self.varint((s.len() as u64) << 1 | u64::from(wide));
        if wide {
            s.iter().for_each(|u| self.out.extend_from_slice(&u.to_le_bytes()));
        } else {
            self.out.extend(s.iter().map(|&u| u as u8));
        }
    }
    /// Flags byte, key or name, clocks and size of an entry or field.
    fn head(&mut self, c: &mut Cur, field: bool) -> R<()> {
        let name = c.str()?;
        let kind = if field { KIND_FIELD } else { c.int(1.0)? as u8 };
        let k = c.clocks()?;
        let w = c.int(f64::from(u32::MAX))?;
        let mut f = kind;
        if k.abs != INF {
            f |= HAS_ABS;
        }
        if k.idle != INF {
            f |= HAS_IDLE;
        }
        if w != 0 {
            f |= HAS_WEIGHT;
        }
        self.u8(f);
        self.str(name);
        if k.abs != INF {
            self.f64(k.abs);
        }
        self.f64(k.last);
        if k.idle != INF {
            self.f64(k.idle);
        }
        if w != 0 {
            self.varint(w);
        }
        Ok(())
    }
    fn value(&mut self, c: &mut Cur, depth: usize) -> R<()> {
        if depth > MAX_DEPTH {
            return Err("nested deeper than 64");
        }
        let tag = c.tag()?;
        match tag {
            V_UNDEF => self.u8(T_UNDEFINED),
            V_NULL => self.u8(T_NULL),
            V_FALSE => self.u8(T_FALSE),
            V_TRUE => self.u8(T_TRUE),
            V_NUM => {
                let x = c.num()?;
                if is_int(x) {
                    self.u8(T_INT);
                    let i = x as i64;
                    self.varint(((i << 1) ^ (i >> 63)) as u64);
                } else {
                    self.u8(T_FLOAT);
                    self.f64(x);
                }
            }
            V_STR => {
                self.u8(T_STRING);
                self.str(c.str()?);
            }
            V_ARR | V_MAP => {
                self.u8(if tag == V_ARR { T_ARRAY } else { T_MAP });
                let n = c.count()?;
                self.varint(n as u64);
                for _ in 0..n * if tag == V_MAP { 2 } else { 1 } {
                    self.value(c, depth + 1)?;
                }
            }
            V_OBJ | V_NOBJ => {
                self.u8(if tag == V_OBJ { T_OBJECT } else { T_NULL_OBJECT });
                let n = c.count()?;
                self.varint(n as u64);
                for _ in 0..n {
                    self.str(c.str()?);
                    self.value(c, depth + 1)?;
                }
            }
            V_BYTES | V_BIG => {
                let t = match tag {
                    V_BYTES => T_BYTES,
                    _ if c.num()? != 0.0 => T_NEG_BIGINT,
                    _ => T_BIGINT,
                };
                self.u8(t);
                let b = c.bin()?;
                self.varint(b.len() as u64);
                self.out.extend_from_slice(b);
            }
            V_DATE => {
                self.u8(T_DATE);
                self.f64(c.num()?);
            }
            _ => return Err("unknown value tag"),
        }
        Ok(())
    }
}

fn write_tape(t: &Tape) -> R<Vec<u8>> {
    let mut w = Writer { out: Vec::with_capacity(64 + t.nums.len() * 2 + t.units.len() + t.bytes.len()) };
    w.out.extend_from_slice(&MAGIC);
    w.out.extend_from_slice(&VERSION.to_le_bytes());
    let flags = if t.clock == ClockMode::Follow { FLAG_FOLLOWS } else { 0 };
    w.out.extend_from_slice(&(flags as u16).to_le_bytes());
    w.out.extend_from_slice(&[0; 8]); // the total length (patched below)
    let c = &mut Cur::new(t);
    for _ in 0..3 {
        w.f64(c.num()?);
    }
    for plus in [0, 0, 1] {
        let v = c.num()?;
        w.varint(if v == INF { 0 } else { v as u64 + plus });
    }
    let count = c.count()?;
    w.varint(count as u64);
    for _ in 0..count {
        let at = c.n;
        w.head(c, false)?;
        if c.t.nums.get(at + 1) == Some(&0.0) {
            w.value(c, 0)?;
            continue;
        }
        let nf = c.count()?;
        w.varint(nf as u64);
        for _ in 0..nf {
            w.head(c, true)?;
            w.value(c, 0)?;
        }
    }
    let total = (w.out.len() + TRAILER_LEN) as u64;
    w.out[8..16].copy_from_slice(&total.to_le_bytes());
    let crc = crc32(&w.out);
    w.out.extend_from_slice(&crc.to_le_bytes());
    Ok(w.out)
}

/// Encodes a tape. The bytes are then decoded as a check, so content the
/// decoder would reject (an expired entry, a duplicate key, ...) fails here
/// instead, as `Error::Type`; the encoder never writes what it cannot read.
pub fn encode_tape(t: &Tape) -> Result<Vec<u8>> {
    let bytes = write_tape(t).map_err(|m| Error::ty("snapshot", m))?;
    match decode_tape(&bytes) {
        Ok(_) => Ok(bytes),
        Err(Error::Corrupt(m)) => Err(Error::ty("snapshot", m)),
        Err(e) => Err(e),
    }
}

// ---- the decoder ----------------------------------------------------------------

struct Reader<'a, 'v> {
    buf: &'a [u8],
    pos: usize,
    now: f64,
    max_entries: u64,
    visit: &'v mut dyn FnMut(Visit, Clocks, u32) -> Result<()>,
    /// Check only: keep the header's numbers and the strings (for the
    /// duplicate checks), not the rest of the tape (see [`check_with`]).
    lean: bool,
}

impl<'a> Reader<'a, '_> {
    fn left(&self) -> usize {
        self.buf.len() - self.pos
    }
    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        if n > self.left() {
            return Err("truncated");
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }
    fn f64(&mut self) -> R<f64> {
        let b = self.take(8)?;
        let bits = b.iter().rev().fold(0u64, |a, &x| a << 8 | u64::from(x));
        let x = f64::from_bits(bits);
        if x.is_nan() && bits != CANONICAL_NAN {
            return Err("non-canonical NaN");
        }
        Ok(x)
    }
    fn varint(&mut self) -> R<u64> {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = self.u8()?;
            if shift == 63 && b > 1 {
                return Err("varint over 64 bits");
            }
            v |= u64::from(b & 0x7F) << shift;
            if b < 0x80 {
                return if b == 0 && shift > 0 { Err("overlong varint") } else { Ok(v) };
            }
            shift += 7;
        }
    }
    /// A count of items that each take at least `min` bytes, checked against
    /// what is left before anything is allocated for it.
    fn count(&mut self, min: usize, t: &mut Tape) -> R<usize> {
        let n = self.varint()?;
        if n > (self.left() / min) as u64 {
            return Err("count overruns the input");
        }
        self.put(t, &[n as f64]);
        Ok(n as usize)
    }
    /// A string; returns its range in `t.units`.
    fn str(&mut self, t: &mut Tape) -> R<(usize, usize)> {
        let h = self.varint()?;
        let (len, wide) = (h >> 1, h & 1 == 1);
        let unit = if wide { 2 } else { 1 };
        if len > (self.left() / unit) as u64 {
            return Err("string overruns the input");
        }
        let b = self.take(len as usize * unit)?;
        self.put(t, &[len as f64]);
        let at = t.units.len();
        if !wide {
            t.units.extend(b.iter().map(|&x| u16::from(x)));
        } else {
            t.units.extend(b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])));
            if !t.units[at..].iter().any(|&u| u > 0xFF) {
                return Err("non-canonical string");
            }
        }
        Ok((at, t.units.len()))
    }
    /// Appends to the tape's numbers, unless checking only. Out of line: it
    /// has a dozen callers.
    #[inline(never)]
    fn put(&self, t: &mut Tape, xs: &[f64]) {
        if !self.lean {
            t.nums.extend_from_slice(xs);
        }
    }
    fn limit(&mut self, minus: u64, t: &mut Tape) -> R<u64> {
        let v = match self.varint()? {
            0 => u64::MAX,
            v if v - minus <= MAX_SAFE as u64 => v - minus,
            _ => return Err("bad limit"),
        };
        t.nums.push(if v == u64::MAX { INF } else { v as f64 });
        Ok(v)
    }
    /// Flags, key or name, clocks and size of an entry or field, checked:
    /// live at the snapshot's clock. Returns the kind, the key's range and
    /// the size.
    fn head(&mut self, field: bool, t: &mut Tape) -> R<(u8, (usize, usize), u32)> {
        let f = self.u8()?;
        let kind = f & KIND_MASK;
        let want = if field { kind == KIND_FIELD } else { kind == KIND_PLAIN || kind == KIND_HASH };
        if f & !(KIND_MASK | HAS_ABS | HAS_IDLE | HAS_WEIGHT) != 0 || !want {
            return Err("bad flags");
        }
        if kind == KIND_HASH && f & HAS_WEIGHT != 0 {
            return Err("sized hash key");
        }
        let key = self.str(t)?;
        if !field {
            self.put(t, &[f64::from(kind)]);
        }
        let abs = if f & HAS_ABS != 0 { self.f64()? } else { INF };
        let last = self.f64()?;
        let idle = if f & HAS_IDLE != 0 { self.f64()? } else { INF };
        if (f & HAS_ABS != 0 && !abs.is_finite()) || (f & HAS_IDLE != 0 && !idle.is_finite()) {
            return Err("bad deadline");
        }
        if !last.is_finite() || last > self.now {
            return Err("bad last access");
        }
        if idle.is_nan() || idle <= 0.0 {
            return Err("bad idle window");
        }
        let k = Clocks { abs, last, idle };
        if k.deadline() <= self.now {
            return Err("expired entry");
        }
        let w = if f & HAS_WEIGHT != 0 { self.varint()? } else { 0 };
        if f & HAS_WEIGHT != 0 && !(1..=u64::from(u32::MAX)).contains(&w) {
            return Err("bad size");
        }
        self.put(t, &[abs, last, idle, w as f64]);
        let v = match kind {
            KIND_PLAIN => Visit::Plain,
            KIND_HASH => Visit::Hash,
            _ => Visit::Field,
        };
        (self.visit)(v, k, w as u32).map_err(|_| "restore failed")?;
        Ok((kind, key, w as u32))
    }
    /// An entry's or field's value: anything but `undefined`.
    fn top(&mut self, t: &mut Tape) -> R<()> {
        if self.buf.get(self.pos) == Some(&T_UNDEFINED) {
            return Err("undefined value");
        }
        self.value(t, 0)
    }
    fn value(&mut self, t: &mut Tape, depth: usize) -> R<()> {
        if depth > MAX_DEPTH {
            return Err("nested deeper than 64");
        }
        let tag = self.u8()?;
        let v = |x: u8| f64::from(x);
        match tag {
            T_UNDEFINED | T_NULL | T_FALSE | T_TRUE => self.put(t, &[v(tag)]),
            T_INT => {
                let z = self.varint()?;
                let i = ((z >> 1) as i64) ^ -((z & 1) as i64);
                if i.unsigned_abs() > MAX_SAFE as u64 {
                    return Err("integer beyond 2^53");
                }
                self.put(t, &[v(V_NUM), i as f64]);
            }
            T_FLOAT => {
                let x = self.f64()?;
                if is_int(x) {
                    return Err("non-canonical number");
                }
                self.put(t, &[v(V_NUM), x]);
            }
            T_STRING => {
                self.put(t, &[v(V_STR)]);
                self.str(t)?;
            }
            T_ARRAY => {
                self.put(t, &[v(V_ARR)]);
                for _ in 0..self.count(1, t)? {
                    self.value(t, depth + 1)?;
                }
            }
            // What JS cannot hold as written is rejected, never changed on
            // the way in: a Map merges equal keys (SameValueZero) and turns
            // -0 into 0; an object merges duplicate names and puts
            // array-index names first, ascending. Keys that are objects are
            // distinct by identity, so only primitive keys are compared.
            T_MAP => {
                self.put(t, &[v(V_MAP)]);
                // Primitive keys' bytes, widened to units so that one
                // duplicate check (one heapsort) serves names and keys.
                let (mut bytes, mut keys) = (Vec::new(), Vec::new());
                for _ in 0..self.count(2, t)? {
                    let at = self.pos;
                    let key_tag = self.buf.get(at).copied();
                    self.value(t, depth + 1)?;
                    if key_tag == Some(T_FLOAT) && self.buf[at + 1..self.pos] == (-0.0f64).to_le_bytes() {
                        return Err("Map key -0");
                    }
                    if !matches!(key_tag, Some(T_ARRAY | T_MAP | T_OBJECT | T_NULL_OBJECT | T_BYTES | T_DATE)) {
                        let from = bytes.len();
                        bytes.extend(self.buf[at..self.pos].iter().map(|&b| u16::from(b)));
                        keys.push((from, bytes.len()));
                    }
                    self.value(t, depth + 1)?;
                }
                if dup_ranges(&bytes, &keys) {
                    return Err("duplicate Map key");
                }
            }
            T_OBJECT | T_NULL_OBJECT => {
                self.put(t, &[v(if tag == T_OBJECT { V_OBJ } else { V_NOBJ })]);
                let (mut names, mut index, mut named) = (Vec::new(), None, false);
                for _ in 0..self.count(2, t)? {
                    let r = self.str(t)?;
                    match array_index(&t.units[r.0..r.1]) {
                        Some(i) if !named && index.is_none_or(|j| i > j) => index = Some(i),
                        Some(_) => return Err("property order JS does not keep"),
                        None => {
                            named = true;
                            names.push(r);
                        }
                    }
                    self.value(t, depth + 1)?;
                }
                if dup_ranges(&t.units, &names) {
                    return Err("duplicate property");
                }
            }
            T_BYTES | T_BIGINT | T_NEG_BIGINT => {
                let big = tag != T_BYTES;
                self.put(t, &[v(if big { V_BIG } else { V_BYTES })]);
                if big {
                    self.put(t, &[v(u8::from(tag == T_NEG_BIGINT))]);
                }
                let n = self.count(1, t)?;
                let b = self.take(n)?;
                if big && (b.first() == Some(&0) || (tag == T_NEG_BIGINT && b.is_empty())) {
                    return Err("non-canonical bigint");
                }
                if !self.lean {
                    t.bytes.extend_from_slice(b);
                }
            }
            T_DATE => {
                let x = self.f64()?;
                if !(x.is_nan() || (fract(x) == 0.0 && x.abs() <= MAX_DATE && !(x == 0.0 && x.is_sign_negative()))) {
                    return Err("bad Date");
                }
                self.put(t, &[v(V_DATE), x]);
            }
            _ => return Err("unknown value tag"),
        }
        Ok(())
    }

    fn body(&mut self, t: &mut Tape, entry: &mut usize) -> R<()> {
        self.now = self.f64()?;
        if !self.now.is_finite() {
            return Err("bad clock");
        }
        t.nums.push(self.now);
        for _ in 0..2 {
            let x = self.f64()?;
            if x.is_nan() || x <= 0.0 {
                return Err("bad ttl or idle");
            }
            t.nums.push(x);
        }
        self.max_entries = self.limit(0, t)?;
        let max_bytes = self.limit(0, t)?;
        self.limit(1, t)?;
        if self.max_entries == 0 || max_bytes == 0 {
            return Err("bad limit");
        }
        let (mut entries, mut bytes) = (0u64, 0u64);
        // The smallest entry is 11 bytes: flags, empty key, last, a 1-byte value.
        let n = self.count(11, t)?;
        let mut keys = Vec::with_capacity(n);
        for i in 0..n {
            *entry = i;
            let (kind, key, w) = self.head(false, t)?;
            keys.push(key);
            if kind == KIND_PLAIN {
                entries += 1;
                bytes += u64::from(w);
                self.top(t)?;
                continue;
            }
            let nf = self.count(11, t)?;
            if nf == 0 || nf as u64 > self.max_entries {
                return Err("bad field count");
            }
            let mut names = Vec::with_capacity(nf);
            for _ in 0..nf {
                let (_, name, w) = self.head(true, t)?;
                names.push(name);
                entries += 1;
                bytes += u64::from(w);
                self.top(t)?;
            }
            if dup_ranges(&t.units, &names) {
                return Err("duplicate field");
            }
        }
        *entry = usize::MAX;
        if dup_ranges(&t.units, &keys) {
            return Err("duplicate key");
        }
        if entries > self.max_entries || bytes > max_bytes {
            return Err("over maxEntries or maxBytes");
        }
        if self.left() != 0 {
            return Err("trailing bytes");
        }
        Ok(())
    }
}

/// Decodes snapshot bytes into a [`Tape`], checking everything: header,
/// length, CRC-32, every encoding rule, and the content (live clocks,
/// unique keys and fields, bounds, nesting). Any problem is an
/// [`Error::Corrupt`] saying what and where; nothing is allocated from a
/// declared length before it is checked against the input.
pub fn decode_tape(bytes: &[u8]) -> Result<Tape> {
    decode_tape_with(bytes, &mut |_, _, _| Ok(()))
}

/// [`decode_tape`], calling `visit` for each entry and field as it goes (the
/// JS binding builds the engine's slots this way).
pub fn decode_tape_with(bytes: &[u8], visit: &mut dyn FnMut(Visit, Clocks, u32) -> Result<()>) -> Result<Tape> {
    decode_inner(bytes, visit, false)
}

/// [`decode_tape_with`]'s checks and visits in memory proportional to the
/// keys, not to the values: the tape it returns holds only the header's six
/// numbers (`now`, `ttl`, `idle`, `maxEntries`, `maxBytes`, `sweepBudget`)
/// and the strings' code units (the duplicate checks compare them). A host
/// that reads the values from the bytes itself (the JS binding) needs no
/// more, where the full tape costs up to 12 bytes per input byte.
///
/// ```
/// let t = lapse_cache::snapshot::check_with(&[0; 4], &mut |_, _, _| Ok(()));
/// assert!(t.is_err());
/// ```
pub fn check_with(bytes: &[u8], visit: &mut dyn FnMut(Visit, Clocks, u32) -> Result<()>) -> Result<Tape> {
    decode_inner(bytes, visit, true)
}

fn decode_inner(bytes: &[u8], visit: &mut dyn FnMut(Visit, Clocks, u32) -> Result<()>, lean: bool) -> Result<Tape> {
    let le = |b: &[u8]| b.iter().rev().fold(0u64, |a, &x| a << 8 | u64::from(x));
    if bytes.is_empty() {
        return Err(corrupt("empty input"));
    }
    if bytes.len() < 6 {
        return Err(corrupt("truncated"));
    }
    if bytes[..4] != MAGIC {
        return Err(corrupt("not a lapse snapshot"));
    }
    let version = le(&bytes[4..6]);
    if version != 1 && version != u64::from(VERSION) {
        return Err(corrupt("unsupported format version"));
    }
    if bytes.len() < HEADER_LEN + TRAILER_LEN {
        return Err(corrupt("truncated"));
    }
    let declared = le(&bytes[8..16]);
    if declared != bytes.len() as u64 {
        return Err(corrupt("length mismatch (truncated?)"));
    }
    let (content, tail) = bytes.split_at(bytes.len() - TRAILER_LEN);
    if le(tail) as u32 != crc32(content) {
        return Err(corrupt("checksum mismatch"));
    }
    // Version 1 has no flags; version 2 has the clock mode.
    let flags = le(&bytes[6..8]);
    if flags & !(if version == 1 { 0 } else { FLAG_FOLLOWS }) != 0 {
        return Err(corrupt("bad header flags"));
    }
    let mut t = Tape::default();
    if flags & FLAG_FOLLOWS != 0 {
        t.clock = ClockMode::Follow;
    }
    let mut r = Reader { buf: content, pos: HEADER_LEN, now: 0.0, max_entries: 0, visit, lean };
    let mut entry = usize::MAX;
    if let Err(m) = r.body(&mut t, &mut entry) {
        let at = if entry == usize::MAX { String::new() } else { cat(&["entry ", &uint(entry as u64), ", "]) };
        return Err(corrupt(cat(&[&at, "byte ", &uint(r.pos as u64), ": ", m])));
    }
    Ok(t)
}

// ---- the native view: Snapshot <-> Tape --------------------------------------------

impl Snapshot {
    /// Checks the content is a cache this build could have written (by
    /// encoding it); `TtlCache::restore_with` calls it.
    pub fn validate(&self) -> Result<()> {
        encode(self).map(drop)
    }

    /// The flat form.
    pub fn to_tape(&self) -> Tape {
        let mut t = Tape { clock: self.clock, ..Tape::default() };
        let o = &self.options;
        let lim = |v: Option<u64>| v.filter(|&v| v != u64::MAX).map_or(INF, |v| v as f64);
        t.nums.extend_from_slice(&[
            self.now,
            o.ttl.unwrap_or(INF),
            o.idle.unwrap_or(INF),
            lim(o.max_entries),
            lim(o.max_bytes),
            lim(o.sweep_budget),
            self.entries.len() as f64,
        ]);
        fn str(t: &mut Tape, s: &[u16]) {
            t.nums.push(s.len() as f64);
            t.units.extend_from_slice(s);
        }
        fn head(t: &mut Tape, k: &Clocks, w: u32) {
            t.nums.extend_from_slice(&[k.abs, k.last, k.idle, f64::from(w)]);
        }
        fn value(t: &mut Tape, v: &Value) {
            let tag = |t: &mut Tape, x: u8| t.nums.push(f64::from(x));
            match v {
                Value::Undefined => tag(t, V_UNDEF),
                Value::Null => tag(t, V_NULL),
                Value::Bool(b) => tag(t, if *b { V_TRUE } else { V_FALSE }),
                Value::Number(x) => t.nums.extend_from_slice(&[f64::from(V_NUM), *x]),
                Value::String(s) => {
                    tag(t, V_STR);
                    str(t, s);
                }
                Value::Array(items) => {
                    t.nums.extend_from_slice(&[f64::from(V_ARR), items.len() as f64]);
                    items.iter().for_each(|x| value(t, x));
                }
                Value::Object { null_proto, props } => {
                    t.nums
                        .extend_from_slice(&[f64::from(if *null_proto { V_NOBJ } else { V_OBJ }), props.len() as f64]);
                    for (k, x) in props {
                        str(t, k);
                        value(t, x);
                    }
                }
                Value::Bytes(b) => {
                    t.nums.extend_from_slice(&[f64::from(V_BYTES), b.len() as f64]);
                    t.bytes.extend_from_slice(b);
                }
                Value::Date(x) => t.nums.extend_from_slice(&[f64::from(V_DATE), *x]),
                Value::Map(pairs) => {
                    t.nums.extend_from_slice(&[f64::from(V_MAP), pairs.len() as f64]);
                    for (k, x) in pairs {
                        value(t, k);
                        value(t, x);
                    }
                }
                Value::BigInt { neg, magnitude } => {
                    t.nums.extend_from_slice(&[f64::from(V_BIG), f64::from(u8::from(*neg)), magnitude.len() as f64]);
                    t.bytes.extend_from_slice(magnitude);
                }
            }
        }
        for e in &self.entries {
            str(&mut t, &e.key);
            match &e.body {
                Body::Plain { weight, value: v } => {
                    t.nums.push(0.0);
                    head(&mut t, &e.clocks, *weight);
                    value(&mut t, v);
                }
                Body::Hash { fields } => {
                    t.nums.push(1.0);
                    head(&mut t, &e.clocks, 0);
                    t.nums.push(fields.len() as f64);
                    for f in fields {
                        str(&mut t, &f.name);
                        head(&mut t, &f.clocks, f.weight);
                        value(&mut t, &f.value);
                    }
                }
            }
        }
        t
    }

    /// The tree form of a tape, after checking it (by encoding it).
    pub fn from_tape(t: &Tape) -> Result<Snapshot> {
        encode_tape(t)?;
        Self::build(t).map_err(corrupt)
    }

    fn build(t: &Tape) -> R<Snapshot> {
        fn value(c: &mut Cur) -> R<Value> {
            Ok(match c.tag()? {
                V_UNDEF => Value::Undefined,
                V_NULL => Value::Null,
                V_FALSE => Value::Bool(false),
                V_TRUE => Value::Bool(true),
                V_NUM => Value::Number(c.num()?),
                V_STR => Value::String(c.str()?.to_vec()),
                V_ARR => Value::Array((0..c.count()?).map(|_| value(c)).collect::<R<_>>()?),
                tag @ (V_OBJ | V_NOBJ) => Value::Object {
                    null_proto: tag == V_NOBJ,
                    props: (0..c.count()?).map(|_| Ok((c.str()?.to_vec(), value(c)?))).collect::<R<_>>()?,
                },
                V_BYTES => Value::Bytes(c.bin()?.to_vec()),
                V_DATE => Value::Date(c.num()?),
                V_MAP => Value::Map((0..c.count()?).map(|_| Ok((value(c)?, value(c)?))).collect::<R<_>>()?),
                _ => Value::BigInt { neg: c.num()? != 0.0, magnitude: c.bin()?.to_vec() },
            })
        }
        let c = &mut Cur::new(t);
        let now = c.num()?;
        let (ttl, idle) = (c.num()?, c.num()?);
        let mut lim = || c.num().map(|v| (v != INF).then_some(v as u64));
        let (max_entries, max_bytes, sweep_budget) = (lim()?, lim()?, lim()?);
        let options = Options {
            ttl: (ttl != INF).then_some(ttl),
            idle: (idle != INF).then_some(idle),
            max_entries,
            max_bytes,
            sweep_budget,
        };
        let mut entries = Vec::new();
        for _ in 0..c.count()? {
            let key = c.str()?.to_vec();
            let kind = c.num()?;
            let clocks = c.clocks()?;
            let weight = c.num()? as u32;
            let body = if kind == 0.0 {
                Body::Plain { weight, value: value(c)? }
            } else {
                let mut fields = Vec::new();
                for _ in 0..c.count()? {
                    let name = c.str()?.to_vec();
                    let clocks = c.clocks()?;
                    let weight = c.num()? as u32;
                    fields.push(Field { name, clocks, weight, value: value(c)? });
                }
                Body::Hash { fields }
            };
            entries.push(Entry { key, clocks, body });
        }
        Ok(Snapshot { now, clock: t.clock, options, entries })
    }
}

/// Encodes a snapshot; fails (`Error::Type`) on content `decode` would reject.
pub fn encode(s: &Snapshot) -> Result<Vec<u8>> {
    encode_tape(&s.to_tape())
}

/// Decodes and checks snapshot bytes ([`decode_tape`], then the tree form).
pub fn decode(bytes: &[u8]) -> Result<Snapshot> {
    Snapshot::build(&decode_tape(bytes)?).map_err(corrupt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    fn clocks(abs: f64, idle: f64) -> Clocks {
        Clocks { abs, last: 10.0, idle }
    }

    fn sample() -> Snapshot {
        Snapshot {
            now: 10.0,
            clock: ClockMode::Follow,
            options: Options { ttl: Some(100.0), max_entries: Some(10), ..Default::default() },
            entries: vec![
                Entry {
                    key: units("a"),
                    clocks: clocks(50.0, INF),
                    body: Body::Plain { weight: 0, value: Value::Number(-0.0) },
                },
                Entry {
                    key: vec![0xD800, b'x' as u16],
                    clocks: clocks(INF, 5.0),
                    body: Body::Hash {
                        fields: vec![Field {
                            name: units("f"),
                            clocks: clocks(INF, INF),
                            weight: 3,
                            value: Value::Array(vec![
                                Value::Undefined,
                                Value::Number(f64::NAN),
                                Value::BigInt { neg: true, magnitude: vec![1, 0] },
                                Value::Map(vec![(Value::Number(1.0), Value::Null), (Value::Number(1.5), Value::Null)]),
                            ]),
                        }],
                    },
                },
            ],
        }
    }

    fn seal(mut out: Vec<u8>) -> Vec<u8> {
        let total = (out.len() + 4) as u64;
        out[8..16].copy_from_slice(&total.to_le_bytes());
        let c = crc32(&out);
        out.extend_from_slice(&c.to_le_bytes());
        out
    }

    #[test]
    fn round_trips_and_reencodes_byte_for_byte() {
        let s = sample();
        let b = encode(&s).unwrap();
        let d = decode(&b).unwrap();
        assert_eq!(d, s);
        assert_eq!(encode(&d).unwrap(), b);
    }

    #[test]
    fn every_single_byte_corruption_is_rejected() {
        let b = encode(&sample()).unwrap();
        for i in 0..b.len() {
            for mask in [0x01, 0x80, 0xFF, 0x5A] {
                let mut c = b.clone();
                c[i] ^= mask;
                assert!(decode(&c).is_err(), "flip {mask:#x} at {i} was accepted");
            }
        }
        for n in 0..b.len() {
            assert!(decode(&b[..n]).is_err(), "truncation to {n} accepted");
        }
    }

    #[test]
    fn hostile_lengths_and_nesting_fail_fast() {
        let b = encode(&Snapshot { now: 0.0, clock: ClockMode::Manual, options: Default::default(), entries: vec![] })
            .unwrap();
        // The same header and options, declaring 2^60 entries.
        let mut w = Writer { out: b[..b.len() - 5].to_vec() };
        w.varint(1 << 60);
        let e = decode(&seal(w.out)).unwrap_err().to_string();
        assert!(e.contains("overruns"), "{e}");
        // One entry whose value is 10,000 nested arrays.
        let mut w = Writer { out: b[..b.len() - 5].to_vec() };
        w.varint(1);
        w.u8(KIND_PLAIN);
        w.str(&units("k"));
        w.f64(0.0);
        w.out.extend(std::iter::repeat_n([T_ARRAY, 1], 10_000).flatten());
        w.u8(T_NULL);
        let e = decode(&seal(w.out)).unwrap_err().to_string();
        assert!(e.contains("nested deeper"), "{e}");
    }

    /// The sample with `v` as the first entry's value: written without the
    /// encoder's check (crafted bytes), then decoded.
    fn decode_with(v: Value) -> std::result::Result<Snapshot, String> {
        let mut s = sample();
        s.entries[0].body = Body::Plain { weight: 0, value: v };
        let bytes = write_tape(&s.to_tape()).unwrap();
        decode(&bytes).map_err(|e| e.to_string())
    }

    fn obj(names: &[&str]) -> Value {
        Value::Object { null_proto: false, props: names.iter().map(|n| (units(n), Value::Null)).collect() }
    }

    #[test]
    fn values_js_would_change_are_rejected_not_changed() {
        // Kept: what JS itself writes (array indices first, ascending; then
        // names in any order, including integer-like ones that are not
        // indices).
        for ok in [&["0", "2", "10", "b", "a", "01", "4294967295", "-1"][..], &["b", "a"], &[]] {
            assert!(decode_with(obj(ok)).is_ok(), "{ok:?}");
        }
        let e = decode_with(obj(&["a", "b", "a"])).unwrap_err();
        assert!(e.contains("duplicate property"), "{e}");
        let e = decode_with(obj(&["1", "1"])).unwrap_err();
        assert!(e.contains("property order"), "{e}");
        let e = decode_with(obj(&["2", "1"])).unwrap_err();
        assert!(e.contains("property order"), "{e}");
        let e = decode_with(obj(&["a", "1"])).unwrap_err();
        assert!(e.contains("property order"), "{e}");
        let e = decode_with(Value::Object { null_proto: true, props: vec![(units("x"), Value::Null); 2] }).unwrap_err();
        assert!(e.contains("duplicate property"), "{e}");
        // Nested values are checked too.
        let e = decode_with(Value::Array(vec![obj(&["k", "k"])])).unwrap_err();
        assert!(e.contains("duplicate property"), "{e}");

        let map = |keys: Vec<Value>| Value::Map(keys.into_iter().map(|k| (k, Value::Null)).collect());
        assert!(decode_with(map(vec![Value::Number(0.0), Value::String(units("0")), Value::Array(vec![])])).is_ok());
        assert!(decode_with(map(vec![Value::Array(vec![]), Value::Array(vec![])])).is_ok(), "distinct objects");
        for dup in [
            vec![Value::String(units("k")), Value::String(units("k"))],
            vec![Value::Number(1.5), Value::Number(1.5)],
            vec![Value::Number(f64::NAN), Value::Number(f64::NAN)],
            vec![Value::Null, Value::Null],
        ] {
            let e = decode_with(map(dup.clone())).unwrap_err();
            assert!(e.contains("duplicate Map key"), "{dup:?}: {e}");
        }
        let e = decode_with(map(vec![Value::Number(-0.0)])).unwrap_err();
        assert!(e.contains("-0"), "{e}");
        // The encoder refuses them as well (it decodes what it wrote).
        let mut s = sample();
        s.entries[0].body = Body::Plain { weight: 0, value: obj(&["a", "a"]) };
        assert!(encode(&s).is_err());
    }

    #[test]
    fn content_checks() {
        let mut s = sample();
        s.entries.push(s.entries[0].clone());
        assert!(encode(&s).unwrap_err().to_string().contains("duplicate"));
        let mut s = sample();
        s.entries[0].clocks.abs = 10.0;
        assert!(encode(&s).unwrap_err().to_string().contains("expired"));
        let mut s = sample();
        s.options.max_entries = Some(1);
        assert!(encode(&s).is_err());
        assert!(decode(&[]).unwrap_err().to_string().contains("empty"));
        let mut b = encode(&sample()).unwrap();
        b[4] = 3;
        assert!(decode(&b).unwrap_err().to_string().contains("version"));
    }

    #[test]
    fn the_clock_mode_is_a_header_flag_and_version_1_reads_as_manual() {
        let b = encode(&sample()).unwrap();
        assert_eq!(&b[4..8], &[2, 0, 1, 0]);
        let mut s = sample();
        s.clock = ClockMode::Manual;
        let m = encode(&s).unwrap();
        assert_eq!(&m[4..8], &[2, 0, 0, 0]);
        assert_eq!(decode(&m).unwrap().clock, ClockMode::Manual);
        // The same body as version 1: read as manual; a flag there is corrupt.
        let mut v1 = b[..b.len() - 4].to_vec();
        v1[4] = 1;
        v1[6] = 0;
        let d = decode(&seal(v1.clone())).unwrap();
        assert_eq!(d.clock, ClockMode::Manual);
        assert_eq!(d.entries, sample().entries);
        v1[6] = 1;
        assert!(decode(&seal(v1)).unwrap_err().to_string().contains("flags"));
        // Version 2 rejects any flag but the clock's.
        let mut f = b[..b.len() - 4].to_vec();
        f[6] = 2 | 1;
        assert!(decode(&seal(f)).unwrap_err().to_string().contains("flags"));
    }
}
