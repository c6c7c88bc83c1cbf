//! The encoder: tape to bytes.

use super::*;

pub(super) struct Writer {
    pub(super) out: Vec<u8>,
}

impl Writer {
    pub(super) fn u8(&mut self, b: u8) {
        self.out.push(b);
    }
    pub(super) fn f64(&mut self, x: f64) {
        let bits = if x.is_nan() { CANONICAL_NAN } else { x.to_bits() };
        self.out.extend_from_slice(&bits.to_le_bytes());
    }
    pub(super) fn varint(&mut self, mut v: u64) {
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
    pub(super) fn str(&mut self, s: &[u16]) {
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
        let kind = if field { ENTRY_FIELD } else { c.int(1.0)? as u8 };
        let k = c.clocks()?;
        let w = c.int(f64::from(u32::MAX))?;
        let mut f = kind;
        if k.abs != INF {
            f |= ENTRY_HAS_ABS;
        }
        if k.idle != INF {
            f |= ENTRY_HAS_IDLE;
        }
        if w != 0 {
            f |= ENTRY_HAS_WEIGHT;
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
            V_UNDEF => self.u8(TAG_UNDEFINED),
            V_NULL => self.u8(TAG_NULL),
            V_FALSE => self.u8(TAG_FALSE),
            V_TRUE => self.u8(TAG_TRUE),
            V_NUM => {
                let x = c.num()?;
                if is_int(x) {
                    self.u8(TAG_INT);
                    let i = x as i64;
                    self.varint(((i << 1) ^ (i >> 63)) as u64);
                } else {
                    self.u8(TAG_FLOAT);
                    self.f64(x);
                }
            }
            V_STR => {
                self.u8(TAG_STRING);
                self.str(c.str()?);
            }
            V_ARR | V_MAP => {
                self.u8(if tag == V_ARR { TAG_ARRAY } else { TAG_MAP });
                let n = c.count()?;
                self.varint(n as u64);
                for _ in 0..n * if tag == V_MAP { 2 } else { 1 } {
                    self.value(c, depth + 1)?;
                }
            }
            V_OBJ | V_NOBJ => {
                self.u8(if tag == V_OBJ { TAG_OBJECT } else { TAG_NULL_OBJECT });
                let n = c.count()?;
                self.varint(n as u64);
                for _ in 0..n {
                    self.str(c.str()?);
                    self.value(c, depth + 1)?;
                }
            }
            V_BYTES | V_BIG => {
                let t = match tag {
                    V_BYTES => TAG_BYTES,
                    _ if c.num()? != 0.0 => TAG_NEG_BIGINT,
                    _ => TAG_BIGINT,
                };
                self.u8(t);
                let b = c.bin()?;
                self.varint(b.len() as u64);
                self.out.extend_from_slice(b);
            }
            V_DATE => {
                self.u8(TAG_DATE);
                self.f64(c.num()?);
            }
            _ => return Err("unknown value tag"),
        }
        Ok(())
    }
}

pub(super) fn write_tape(t: &Tape) -> R<Vec<u8>> {
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
    w.out[SNAP_LENGTH_AT..SNAP_LENGTH_AT + 8].copy_from_slice(&total.to_le_bytes());
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

/// Encodes a snapshot; fails (`Error::Type`) on content `decode` would reject.
pub fn encode(s: &Snapshot) -> Result<Vec<u8>> {
    encode_tape(&s.to_tape())
}
