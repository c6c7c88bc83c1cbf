//! The tape: the flat form of a snapshot that the encoder, the decoder and
//! the content check walk, its own value tags, and a cursor over it.

use super::*;

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
    pub(super) fn deadline(&self) -> f64 {
        self.abs.min(self.last + self.idle)
    }
}

/// A snapshot in flat form: what the encoder, the decoder and the content
/// check walk. Grammar (every item one `f64` in `nums`; strings' code units
/// go to `units` and `Uint8Array` bytes to `bytes`, in order):
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

pub(super) const V_UNDEF: u8 = 0;
pub(super) const V_NULL: u8 = 1;
pub(super) const V_FALSE: u8 = 2;
pub(super) const V_TRUE: u8 = 3;
pub(super) const V_NUM: u8 = 4;
pub(super) const V_STR: u8 = 5;
pub(super) const V_ARR: u8 = 6;
pub(super) const V_OBJ: u8 = 7;
pub(super) const V_NOBJ: u8 = 8;
pub(super) const V_BYTES: u8 = 9;
pub(super) const V_DATE: u8 = 10;
pub(super) const V_MAP: u8 = 11;
pub(super) const V_BIG: u8 = 12;

pub(super) struct Cur<'a> {
    pub(super) t: &'a Tape,
    pub(super) n: usize,
    u: usize,
    b: usize,
}

impl<'a> Cur<'a> {
    pub(super) fn new(t: &'a Tape) -> Self {
        Cur { t, n: 0, u: 0, b: 0 }
    }
    pub(super) fn num(&mut self) -> R<f64> {
        let x = *self.t.nums.get(self.n).ok_or_else(short)?;
        self.n += 1;
        Ok(x)
    }
    pub(super) fn int(&mut self, max: f64) -> R<u64> {
        let x = self.num()?;
        if fract(x) == 0.0 && (0.0..=max).contains(&x) {
            Ok(x as u64)
        } else {
            Err("bad count")
        }
    }
    /// A count of items that each take at least one number.
    pub(super) fn count(&mut self) -> R<usize> {
        let n = self.int(MAX_SAFE)?;
        if n > (self.t.nums.len() - self.n) as u64 {
            return Err(short());
        }
        Ok(n as usize)
    }
    pub(super) fn str(&mut self) -> R<&'a [u16]> {
        let len = self.int(MAX_SAFE)? as usize;
        let s = self.t.units.get(self.u..self.u.saturating_add(len)).ok_or_else(short)?;
        self.u += len;
        Ok(s)
    }
    pub(super) fn bin(&mut self) -> R<&'a [u8]> {
        let len = self.int(MAX_SAFE)? as usize;
        let s = self.t.bytes.get(self.b..self.b.saturating_add(len)).ok_or_else(short)?;
        self.b += len;
        Ok(s)
    }
    pub(super) fn tag(&mut self) -> R<u8> {
        Ok(self.int(f64::from(V_BIG))? as u8)
    }
    pub(super) fn clocks(&mut self) -> R<Clocks> {
        Ok(Clocks { abs: self.num()?, last: self.num()?, idle: self.num()? })
    }
}
