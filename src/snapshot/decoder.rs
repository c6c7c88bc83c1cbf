//! The decoder: bytes to tape, checking everything on the way.

use super::*;

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

pub(super) struct Reader<'a, 'v> {
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
        let bits = le(self.take(8)?);
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
        // One loop for both widths (a unit is 1 or 2 little-endian bytes).
        let mut high = false;
        t.units.reserve(len as usize);
        for c in b.chunks_exact(unit) {
            let u = c.iter().rev().fold(0u16, |a, &x| a << 8 | u16::from(x));
            high |= u > 0xFF;
            t.units.push(u);
        }
        if wide && !high {
            return Err("non-canonical string");
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
        let kind = f & ENTRY_KIND_MASK;
        let want = if field { kind == ENTRY_FIELD } else { kind == ENTRY_PLAIN || kind == ENTRY_HASH };
        if f & !(ENTRY_KIND_MASK | ENTRY_HAS_ABS | ENTRY_HAS_IDLE | ENTRY_HAS_WEIGHT) != 0 || !want {
            return Err("bad flags");
        }
        if kind == ENTRY_HASH && f & ENTRY_HAS_WEIGHT != 0 {
            return Err("sized hash key");
        }
        let key = self.str(t)?;
        if !field {
            self.put(t, &[f64::from(kind)]);
        }
        let abs = if f & ENTRY_HAS_ABS != 0 { self.f64()? } else { INF };
        let last = self.f64()?;
        let idle = if f & ENTRY_HAS_IDLE != 0 { self.f64()? } else { INF };
        if (f & ENTRY_HAS_ABS != 0 && !abs.is_finite()) || (f & ENTRY_HAS_IDLE != 0 && !idle.is_finite()) {
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
        let w = if f & ENTRY_HAS_WEIGHT != 0 { self.varint()? } else { 0 };
        if f & ENTRY_HAS_WEIGHT != 0 && !(1..=u64::from(u32::MAX)).contains(&w) {
            return Err("bad size");
        }
        self.put(t, &[abs, last, idle, w as f64]);
        let v = match kind {
            ENTRY_PLAIN => Visit::Plain,
            ENTRY_HASH => Visit::Hash,
            _ => Visit::Field,
        };
        (self.visit)(v, k, w as u32).map_err(|_| "restore failed")?;
        Ok((kind, key, w as u32))
    }
    /// An entry's or field's value: anything but `undefined`.
    fn top(&mut self, t: &mut Tape) -> R<()> {
        if self.buf.get(self.pos) == Some(&TAG_UNDEFINED) {
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
            TAG_UNDEFINED | TAG_NULL | TAG_FALSE | TAG_TRUE => self.put(t, &[v(tag)]),
            TAG_INT => {
                let z = self.varint()?;
                let i = ((z >> 1) as i64) ^ -((z & 1) as i64);
                if i.unsigned_abs() > MAX_SAFE as u64 {
                    return Err("integer beyond 2^53");
                }
                self.put(t, &[v(V_NUM), i as f64]);
            }
            TAG_FLOAT => {
                let x = self.f64()?;
                if is_int(x) {
                    return Err("non-canonical number");
                }
                self.put(t, &[v(V_NUM), x]);
            }
            TAG_STRING => {
                self.put(t, &[v(V_STR)]);
                self.str(t)?;
            }
            TAG_ARRAY => {
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
            TAG_MAP => {
                self.put(t, &[v(V_MAP)]);
                // Primitive keys' bytes, widened to units so that one
                // duplicate check (one heapsort) serves names and keys.
                let (mut bytes, mut keys) = (Vec::new(), Vec::new());
                for _ in 0..self.count(2, t)? {
                    let at = self.pos;
                    let key_tag = self.buf.get(at).copied();
                    self.value(t, depth + 1)?;
                    if key_tag == Some(TAG_FLOAT) && self.buf[at + 1..self.pos] == (-0.0f64).to_le_bytes() {
                        return Err("Map key -0");
                    }
                    if !matches!(
                        key_tag,
                        Some(TAG_ARRAY | TAG_MAP | TAG_OBJECT | TAG_NULL_OBJECT | TAG_BYTES | TAG_DATE)
                    ) {
                        let from = bytes.len();
                        for &b in &self.buf[at..self.pos] {
                            bytes.push(u16::from(b));
                        }
                        keys.push((from, bytes.len()));
                    }
                    self.value(t, depth + 1)?;
                }
                if dup_ranges(&bytes, &keys) {
                    return Err("duplicate Map key");
                }
            }
            TAG_OBJECT | TAG_NULL_OBJECT => {
                self.put(t, &[v(if tag == TAG_OBJECT { V_OBJ } else { V_NOBJ })]);
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
            TAG_BYTES | TAG_BIGINT | TAG_NEG_BIGINT => {
                let big = tag != TAG_BYTES;
                self.put(t, &[v(if big { V_BIG } else { V_BYTES })]);
                if big {
                    self.put(t, &[v(u8::from(tag == TAG_NEG_BIGINT))]);
                }
                let n = self.count(1, t)?;
                let b = self.take(n)?;
                if big && (b.first() == Some(&0) || (tag == TAG_NEG_BIGINT && b.is_empty())) {
                    return Err("non-canonical bigint");
                }
                if !self.lean {
                    t.bytes.extend_from_slice(b);
                }
            }
            TAG_DATE => {
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
            if kind == ENTRY_PLAIN {
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
            let mut hash_bytes = 0u64;
            for _ in 0..nf {
                let (_, name, w) = self.head(true, t)?;
                names.push(name);
                entries += 1;
                bytes += u64::from(w);
                hash_bytes += u64::from(w);
                self.top(t)?;
            }
            if dup_ranges(&t.units, &names) {
                return Err("duplicate field");
            }
            // A hash's size is one u32 column, as each entry's (no cache
            // can hold a hash whose fields total more: `check_fits`).
            if hash_bytes > u64::from(u32::MAX) {
                return Err("hash over 4294967295 bytes");
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

/// [`decode_tape`], calling `visit` for each entry and field as it goes (a
/// host can build its slots this way, as the package's wasm did before its
/// decoder moved to JS).
pub fn decode_tape_with(bytes: &[u8], visit: &mut dyn FnMut(Visit, Clocks, u32) -> Result<()>) -> Result<Tape> {
    decode_inner(bytes, visit, false)
}

/// [`decode_tape_with`]'s checks and visits in memory proportional to the
/// keys, not to the values: the tape it returns holds only the header's six
/// numbers (`now`, `ttl`, `idle`, `maxEntries`, `maxBytes`, `sweepBudget`)
/// and the strings' code units (the duplicate checks compare them). A host
/// that reads the values from the bytes itself needs no more, where the
/// full tape costs up to 12 bytes per input byte.
///
/// ```
/// let t = lapse_cache::snapshot::check_with(&[0; 4], &mut |_, _, _| Ok(()));
/// assert!(t.is_err());
/// ```
pub fn check_with(bytes: &[u8], visit: &mut dyn FnMut(Visit, Clocks, u32) -> Result<()>) -> Result<Tape> {
    decode_inner(bytes, visit, true)
}

pub(super) fn decode_inner(
    bytes: &[u8],
    visit: &mut dyn FnMut(Visit, Clocks, u32) -> Result<()>,
    lean: bool,
) -> Result<Tape> {
    if bytes.is_empty() {
        return Err(corrupt("empty input"));
    }
    if bytes.len() < 6 {
        return Err(corrupt("truncated"));
    }
    if bytes[..4] != MAGIC {
        return Err(corrupt("not a lapse snapshot"));
    }
    let version = le(&bytes[SNAP_VERSION_AT..SNAP_VERSION_AT + 2]);
    if version != 1 && version != u64::from(VERSION) {
        return Err(corrupt("unsupported format version"));
    }
    if bytes.len() < HEADER_LEN + TRAILER_LEN {
        return Err(corrupt("truncated"));
    }
    let declared = le(&bytes[SNAP_LENGTH_AT..SNAP_LENGTH_AT + 8]);
    if declared != bytes.len() as u64 {
        return Err(corrupt("length mismatch (truncated?)"));
    }
    let (content, tail) = bytes.split_at(bytes.len() - TRAILER_LEN);
    if le(tail) as u32 != crc32(content) {
        return Err(corrupt("checksum mismatch"));
    }
    // Version 1 has no flags; version 2 has the clock mode.
    let flags = le(&bytes[SNAP_FLAGS_AT..SNAP_FLAGS_AT + 2]);
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

/// A little-endian number of up to 8 bytes (one copy for every caller).
#[inline(never)]
fn le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0u64, |a, &x| a << 8 | u64::from(x))
}

/// Decodes and checks snapshot bytes ([`decode_tape`], then the tree form).
pub fn decode(bytes: &[u8]) -> Result<Snapshot> {
    Snapshot::build(&decode_tape(bytes)?).map_err(corrupt)
}
