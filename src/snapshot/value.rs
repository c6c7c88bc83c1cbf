//! The native value tree ([`Snapshot`], [`Value`]): a view of a tape.

use super::*;

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

pub(super) fn same_f64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
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

impl Snapshot {
    /// Checks the content is a cache this build could have written (by
    /// encoding it); `TtlCache::restore_with` calls it.
    pub fn validate(&self) -> Result<()> {
        // The options as `TtlCache::with_options` checks them: `restore_with`
        // sets `max_entries` on the engine directly, and `Some(0)` made a
        // cache over its own bound (the encoder writes 0 as "none").
        // In this crate's names (`max_entries`), as `with_options` gives them.
        self.options.validate().map_err(crate::cache::native)?;
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

    pub(super) fn build(t: &Tape) -> R<Snapshot> {
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
