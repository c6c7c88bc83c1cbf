//! The two hosts agree: `tests/data/corpus.jsonl` is a recorded corpus of
//! operation sequences on a manual clock, each operation with what it
//! observed (its result or error class, and every removal the callback
//! heard, in order, with key, field, reason and value). This file replays it
//! on the native crate; `tests/js/corpus.test.mjs` replays the same file on
//! the npm package. Each `snapshot` line records the snapshot's bytes, so
//! the JS encoder (`pkg-template/src`) and the Rust one (`src/snapshot`)
//! are checked byte for byte against each other on the same state.
//!
//! Format (one JSON object a line; `corpus.md` beside it has the details):
//! `{"op":"new","now":0,"o":{...}}` starts a case; every other line is an
//! operation (`op` and its arguments) followed by what it observed: `r` (the
//! result), `err` (`"wrongtype"`, `"type"` or `"range"`) and `rm` (removals).
//! Values carry tags for what JSON cannot say: `{"$":"NaN"}`,
//! `{"$":"undefined"}`, `{"$":"bytes","v":[..]}`, `{"$":"map","v":[[k,v]..]}`,
//! `{"$":"date","v":t}`, `{"$":"bigint","neg":b,"hex":".."}`,
//! `{"$":"nullproto","v":{..}}`, `{"$":"Infinity"}`, `{"$":"-Infinity"}`.
//!
//! Regenerate it (a deliberate change of behaviour or of the generator):
//! `LAPSE_BLESS=1 cargo test --test corpus`, then run the JS replayer too.
//! The generator is seeded: the same build writes the same file.

#[path = "corpus/json.rs"]
mod json;
#[path = "corpus/rng.rs"]
mod rng;
use rng::Rng;

use std::sync::{Arc, Mutex};

use json::{parse, write, J};
use lapse_cache::snapshot::{self, Value};
use lapse_cache::{Cond, Error, Options, Reason, Removed, SetOptions, TtlCache};

const CORPUS: &str = "tests/data/corpus.jsonl";

// ---- values <-> tagged JSON -------------------------------------------------

fn u(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

fn tag(name: &str) -> J {
    J::obj(vec![("$", J::s(name))])
}

fn tagged(name: &str, members: Vec<(&str, J)>) -> J {
    let mut m = vec![("$", J::s(name))];
    m.extend(members);
    J::obj(m)
}

/// A number, with tags for the three JSON cannot spell.
fn num(x: f64) -> J {
    if x.is_nan() {
        tag("NaN")
    } else if x == f64::INFINITY {
        tag("Infinity")
    } else if x == f64::NEG_INFINITY {
        tag("-Infinity")
    } else {
        J::Num(x)
    }
}

fn unnum(j: &J) -> f64 {
    match j {
        J::Num(x) => *x,
        _ => match tag_of(j).as_deref() {
            Some("NaN") => f64::NAN,
            Some("Infinity") => f64::INFINITY,
            Some("-Infinity") => f64::NEG_INFINITY,
            _ => panic!("not a number: {}", write(j)),
        },
    }
}

fn tag_of(j: &J) -> Option<String> {
    j.get("$").and_then(J::str)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn enc(v: &Value) -> J {
    match v {
        Value::Undefined => tag("undefined"),
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Number(x) => num(*x),
        Value::String(s) => J::Str(s.clone()),
        Value::Array(a) => J::Arr(a.iter().map(enc).collect()),
        Value::Object { null_proto, props } => {
            let o = J::Obj(props.iter().map(|(k, v)| (k.clone(), enc(v))).collect());
            if *null_proto {
                tagged("nullproto", vec![("v", o)])
            } else {
                o
            }
        }
        Value::Bytes(b) => tagged("bytes", vec![("v", J::Arr(b.iter().map(|&x| J::Num(f64::from(x))).collect()))]),
        Value::Date(t) => tagged("date", vec![("v", num(*t))]),
        Value::Map(m) => {
            tagged("map", vec![("v", J::Arr(m.iter().map(|(k, v)| J::Arr(vec![enc(k), enc(v)])).collect()))])
        }
        Value::BigInt { neg, magnitude } => {
            tagged("bigint", vec![("neg", J::Bool(*neg)), ("hex", J::s(&hex(magnitude)))])
        }
    }
}

fn dec(j: &J) -> Value {
    match j {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Num(x) => Value::Number(*x),
        J::Str(s) => Value::String(s.clone()),
        J::Arr(a) => Value::Array(a.iter().map(dec).collect()),
        J::Obj(m) => match tag_of(j).as_deref() {
            None => Value::Object { null_proto: false, props: m.iter().map(|(k, v)| (k.clone(), dec(v))).collect() },
            Some("NaN" | "Infinity" | "-Infinity") => Value::Number(unnum(j)),
            Some("undefined") => Value::Undefined,
            Some("nullproto") => match dec(j.get("v").unwrap()) {
                Value::Object { props, .. } => Value::Object { null_proto: true, props },
                _ => panic!("bad nullproto"),
            },
            Some("bytes") => {
                let J::Arr(a) = j.get("v").unwrap() else { panic!("bad bytes") };
                Value::Bytes(a.iter().map(|x| x.num().unwrap() as u8).collect())
            }
            Some("date") => Value::Date(unnum(j.get("v").unwrap())),
            Some("map") => {
                let J::Arr(a) = j.get("v").unwrap() else { panic!("bad map") };
                Value::Map(
                    a.iter()
                        .map(|p| match p {
                            J::Arr(kv) => (dec(&kv[0]), dec(&kv[1])),
                            _ => panic!("bad map pair"),
                        })
                        .collect(),
                )
            }
            Some("bigint") => Value::BigInt {
                neg: matches!(j.get("neg"), Some(J::Bool(true))),
                magnitude: unhex(&j.get("hex").unwrap().str().unwrap()),
            },
            Some(t) => panic!("unknown tag {t}"),
        },
    }
}

/// Whether JS's `old !== value` holds for a value rebuilt from the corpus:
/// primitives compare by value (`NaN` differs from itself, `-0` equals `0`),
/// and every object the replayer builds is a new one.
fn differs(old: &Value, new: &Value) -> bool {
    match (old, new) {
        (Value::Number(a), Value::Number(b)) => a != b,
        (Value::Undefined, Value::Undefined) | (Value::Null, Value::Null) => false,
        (Value::Bool(a), Value::Bool(b)) => a != b,
        (Value::String(a), Value::String(b)) => a != b,
        (a @ Value::BigInt { .. }, b @ Value::BigInt { .. }) => a != b,
        _ => true,
    }
}

// ---- the native replayer ----------------------------------------------------

type Gone = Arc<Mutex<Vec<Removed<String, Value>>>>;

struct Host {
    c: TtlCache<String, Value>,
    gone: Gone,
    /// The bytes of the case's latest `snapshot`, for `restore`.
    snap: Option<Vec<u8>>,
}

fn options(o: Option<&J>) -> Options {
    let get = |name: &str| o.and_then(|o| o.get(name));
    let count = |name: &str| get(name).map(|j| unnum(j) as u64);
    Options {
        ttl: get("ttl").map(unnum),
        idle: get("idle").map(unnum),
        max_entries: count("maxEntries"),
        max_bytes: count("maxBytes"),
        sweep_budget: if get("sweepBudget").is_some() { count("sweepBudget") } else { Some(1000) },
    }
}

fn write_opts(w: Option<&J>) -> SetOptions {
    let get = |name: &str| w.and_then(|w| w.get(name)).map(unnum);
    SetOptions {
        ttl: get("ttl"),
        idle: get("idle"),
        expire_at: get("expireAt"),
        keep_ttl: matches!(w.and_then(|w| w.get("keepTtl")), Some(J::Bool(true))),
    }
}

fn cond(op: &J) -> Option<Cond> {
    op.get("c").map(|c| match c.str().as_deref() {
        Some("NX") => Cond::Nx,
        Some("XX") => Cond::Xx,
        Some("GT") => Cond::Gt,
        Some("LT") => Cond::Lt,
        other => panic!("bad condition {other:?}"),
    })
}

fn reason(r: Reason) -> &'static str {
    r.as_str()
}

fn error_class(e: &Error) -> &'static str {
    match e {
        Error::WrongType { .. } => "wrongtype",
        Error::Type { .. } => "type",
        Error::Range { .. } => "range",
        Error::Corrupt(_) => "corrupt",
    }
}

fn undef() -> J {
    tag("undefined")
}

fn opt_value(v: Option<&Value>) -> J {
    v.map_or_else(undef, enc)
}

/// The outcome of a call: its result, or its error class.
enum Out {
    None,
    R(J),
    Err(&'static str),
}

fn res<T>(r: Result<T, Error>, f: impl FnOnce(T) -> J) -> Out {
    match r {
        Ok(v) => Out::R(f(v)),
        Err(e) => Out::Err(error_class(&e)),
    }
}

/// The counters and gauges both hosts report (the JS names).
fn stats_j(c: &TtlCache<String, Value>) -> J {
    let s = c.stats();
    let k = s.counters;
    let n = |x: u64| J::Num(x as f64);
    J::obj(vec![
        ("hits", n(s.hits)),
        ("misses", n(s.misses)),
        ("expired", n(k.expired)),
        ("evicted", n(k.evicted)),
        ("deleted", n(k.deleted)),
        ("inserted", n(k.inserted)),
        ("updated", n(k.updated)),
        ("ticks", n(k.ticks)),
        ("swept", n(k.swept)),
        ("size", n(s.size)),
        ("entries", n(s.entries)),
        ("bytes", n(s.bytes)),
        ("smallQueue", n(s.small_queue)),
    ])
}

impl Host {
    fn new(op: &J) -> Host {
        let now = unnum(op.get("now").unwrap());
        let c = TtlCache::with_options(options(op.get("o")), now).expect("corpus options are valid");
        let mut h = Host { c, gone: Arc::default(), snap: None };
        h.listen();
        h
    }

    fn listen(&mut self) {
        let g = self.gone.clone();
        self.c.on_remove(move |r| g.lock().unwrap().push(r));
    }

    /// Runs one operation; returns its observation members (`r`/`err`, `rm`).
    fn run(&mut self, op: &J) -> Vec<(&'static str, J)> {
        let name = op.get("op").and_then(J::str).expect("an op name");
        let key = || op.get("k").and_then(J::str).expect("a key");
        let field = || op.get("f").and_then(J::str).expect("a field");
        let value = || dec(op.get("v").expect("a value"));
        let size = op.get("n").map(|n| unnum(n) as u32);
        let w = write_opts(op.get("w"));
        let b = J::Bool;
        let c = &mut self.c;
        // Replacements the JS host reports through dispose and this crate
        // hands back (set) or reports whatever the value (hset).
        let mut extra: Vec<Removed<String, Value>> = Vec::new();
        let mut keep_replaced: Option<(String, String, Value)> = None;
        let out = match name.as_str() {
            "set" => {
                let (k, v) = (key(), value());
                let r = match size {
                    Some(n) => c.set_sized(k.clone(), v.clone(), w, n),
                    None => c.set(k.clone(), v.clone(), w),
                };
                match r {
                    Ok(old) => {
                        // The value handed back was deleted when the write
                        // ended the key (a deadline not in the future).
                        if let Some(old) = old {
                            if !c.contains(&k) {
                                extra.push(Removed { key: k, field: None, value: old, reason: Reason::Deleted });
                            } else if differs(&old, &v) {
                                extra.push(Removed { key: k, field: None, value: old, reason: Reason::Replaced });
                            }
                        }
                        Out::None
                    }
                    Err(e) => Out::Err(error_class(&e)),
                }
            }
            "get" => res(c.try_get(&key()), |v| opt_value(v)),
            "peek" => res(c.try_peek(&key()), |v| opt_value(v)),
            "has" => Out::R(b(c.contains(&key()))),
            "touch" => Out::R(b(c.touch(&key()))),
            "persist" => Out::R(b(c.persist(&key()))),
            "delete" => Out::R(b(c.delete(&key()))),
            "ttl" => Out::R(c.ttl(&key()).map_or_else(undef, num)),
            "expire" => res(c.expire(&key(), unnum(op.get("ms").unwrap()), cond(op)), b),
            "expireAt" => res(c.expire_at(&key(), unnum(op.get("t").unwrap()), cond(op)), b),
            "hset" => {
                let (k, f, v) = (key(), field(), value());
                keep_replaced = Some((k.clone(), f.clone(), v.clone()));
                let r = match size {
                    Some(n) => c.hset_sized(k, &f, v, w, n),
                    None => c.hset(k, &f, v, w),
                };
                res(r, b)
            }
            "hget" => res(c.hget(&key(), &field()), |v| opt_value(v)),
            "hhas" => res(c.hhas(&key(), &field()), b),
            "hdel" => res(c.hdel(&key(), &field()), b),
            "hlen" => res(c.hlen(&key()), |n| J::Num(n as f64)),
            "hgetall" => res(c.hgetall(&key()), |all| {
                let mut all: Vec<(Vec<u16>, J)> = all.into_iter().map(|(f, v)| (u(f), enc(v))).collect();
                all.sort_by(|a, b| a.0.cmp(&b.0));
                J::Arr(all.into_iter().map(|(f, v)| J::Arr(vec![J::Str(f), v])).collect())
            }),
            "hexpire" => res(c.hexpire(&key(), &field(), unnum(op.get("ms").unwrap()), cond(op)), b),
            "hexpireAt" => res(c.hexpire_at(&key(), &field(), unnum(op.get("t").unwrap()), cond(op)), b),
            "hpersist" => res(c.hpersist(&key(), &field()), b),
            "httl" => res(c.httl(&key(), &field()), |t| t.map_or_else(undef, num)),
            "tick" => match c.tick(unnum(op.get("t").unwrap())) {
                // A settling tick (see `Config::settle`) purges too.
                Ok(n) if op.get("purge").is_some() => Out::R(J::Num((n + c.purge()) as f64)),
                r => res(r, |n| J::Num(n as f64)),
            },
            "purge" => Out::R(J::Num(c.purge() as f64)),
            "size" => Out::R(J::Num(c.len() as f64)),
            "stats" => Out::R(stats_j(c)),
            "keys" => {
                let mut keys: Vec<Vec<u16>> = c.keys().map(|k| u(k)).collect();
                keys.sort();
                Out::R(J::Arr(keys.into_iter().map(J::Str).collect()))
            }
            "clear" => {
                c.clear();
                Out::None
            }
            "snapshot" => {
                let units = |k: &String| u(k);
                let snap = c.snapshot_with(units, |_, _, v| Ok(v.clone())).expect("every corpus value has a data form");
                let bytes = snapshot::encode(&snap).expect("encodes");
                let r = J::s(&hex(&bytes));
                self.snap = Some(bytes);
                Out::R(r)
            }
            "restore" => {
                let bytes = self.snap.as_ref().expect("restore follows a snapshot");
                let snap = snapshot::decode(bytes).expect("our own bytes decode");
                let key = |k: &[u16]| String::from_utf16(k).map_err(|_| Error::Corrupt("key".into()));
                self.c = TtlCache::restore_with(&snap, key, |v| Ok(v.clone())).expect("restores");
                self.listen();
                Out::None
            }
            other => panic!("unknown op {other}"),
        };
        let mut gone = std::mem::take(&mut *self.gone.lock().unwrap());
        if let Some((k, f, v)) = keep_replaced {
            gone.retain(|r| {
                !(r.reason == Reason::Replaced
                    && r.key == k
                    && r.field.as_deref() == Some(&f)
                    && !differs(&r.value, &v))
            });
        }
        gone.extend(extra);
        if matches!(name.as_str(), "tick" | "purge" | "clear") {
            // Sweeps and clear go in the engine's wheel or slot order, which
            // differ between the hosts (see corpus.md): compared as a set.
            gone.sort_by_key(|r| (u(&r.key), r.field.as_deref().map(u)));
        }
        let mut obs = match out {
            Out::None => vec![],
            Out::R(r) => vec![("r", r)],
            Out::Err(e) => vec![("err", J::s(e))],
        };
        if !gone.is_empty() {
            let rm = gone
                .iter()
                .map(|r| {
                    J::Arr(vec![
                        J::s(&r.key),
                        r.field.as_deref().map_or(J::Null, J::s),
                        J::s(reason(r.reason)),
                        enc(&r.value),
                    ])
                })
                .collect();
            obs.push(("rm", J::Arr(rm)));
        }
        obs
    }
}

/// The operation part of a corpus line (its observation members removed).
fn op_part(line: &J) -> J {
    let J::Obj(m) = line else { panic!("a line is an object") };
    J::Obj(
        m.iter()
            .filter(|(k, _)| !matches!(k.as_slice(), [0x72] | [0x65, 0x72, 0x72] | [0x72, 0x6d]))
            .cloned()
            .collect(),
    )
}

fn with_obs(op: &J, obs: Vec<(&'static str, J)>) -> J {
    let J::Obj(mut m) = op.clone() else { unreachable!() };
    m.extend(obs.into_iter().map(|(k, v)| (u(k), v)));
    J::Obj(m)
}

/// Replays `lines` on the native host, returning every line as this host
/// observes it (a blessed corpus must come back unchanged).
fn replay(lines: &[J]) -> Vec<J> {
    let mut host: Option<Host> = None;
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let op = op_part(line);
        if op.get("op").and_then(J::str).as_deref() == Some("new") {
            host = Some(Host::new(&op));
            out.push(op);
            continue;
        }
        let h = host.as_mut().expect("a case starts with new");
        let obs = h.run(&op);
        if let Err(e) = h.c.check_invariants() {
            panic!("invariants broken after {}: {e}", write(&op));
        }
        out.push(with_obs(&op, obs));
    }
    out
}

// ---- the generator ----------------------------------------------------------

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    fn word(&mut self, xs: &[&'static str]) -> &'static str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const KEYS: [&str; 6] = ["a", "b", "c", "d", "e", "\u{43a}\u{43b}\u{44e}\u{447}"];
const FIELDS: [&str; 4] = ["f", "g", "", "\u{e9}"];
const CONDS: [&str; 4] = ["NX", "XX", "GT", "LT"];

/// One case: a name (for messages), its start time and options, how many
/// operations, and the generator's leanings.
struct Config {
    seed: u64,
    now: f64,
    opts: Vec<(&'static str, f64)>,
    steps: usize,
    /// Each write states a size up to a third of this `maxBytes` (and now
    /// and then one over it); 0: no sizes.
    max_bytes: f64,
    /// Relative times this small are below the clock's resolution.
    tiny: f64,
    /// Every `tick` purges too (`"purge":true`; its result is the sum of
    /// both), so that no expired entry is ever left for a write to reclaim:
    /// the hosts reclaim on different writes, and a tick within its budget
    /// picks different expired entries in each (see corpus.md). Cases with
    /// `sweepBudget: 0` (no reclaim, no sweep) leave expired entries for the
    /// lazy paths instead.
    settle: bool,
}

fn configs() -> Vec<Config> {
    let c = |seed, now, opts: Vec<(&'static str, f64)>| {
        let max_bytes = opts.iter().find(|(k, _)| *k == "maxBytes").map_or(0.0, |(_, v)| *v);
        let settle = !opts.contains(&("sweepBudget", 0.0));
        Config { seed, now, opts, steps: 220, max_bytes, tiny: 0.0, settle }
    };
    let lazy = ("sweepBudget", 0.0);
    vec![
        c(1, 0.0, vec![]),
        c(2, 1000.0, vec![("ttl", 50.0), ("idle", 20.0)]),
        c(3, 0.0, vec![("maxEntries", 4.0), ("ttl", 80.0)]),
        c(4, 0.0, vec![("maxEntries", 7.0)]),
        c(5, 0.0, vec![("maxBytes", 40.0), ("idle", 30.0)]),
        c(6, 0.0, vec![("sweepBudget", 1.0), ("ttl", 10.0)]),
        Config { tiny: 0.0001, ..c(8, 1.7e12, vec![("ttl", 30.0)]) },
        c(9, 5.0, vec![("maxEntries", 5.0), ("maxBytes", 30.0), ("ttl", 60.0), ("idle", 25.0)]),
        // Lazy: expired entries stay until a read, a write, purge or
        // capacity pressure finds them.
        c(7, 0.0, vec![lazy, ("idle", 12.0)]),
        c(10, -500.25, vec![lazy, ("idle", 15.0), ("maxEntries", 3.0)]),
        c(11, 0.0, vec![lazy, ("ttl", 20.0), ("maxEntries", 6.0)]),
        c(12, 0.0, vec![lazy, ("maxBytes", 35.0)]),
        // Multi-byte varints in the snapshot header and sizes.
        c(13, 2.0f64.powi(40), vec![("maxEntries", 300.0), ("maxBytes", 1e6), ("sweepBudget", 200.0), ("ttl", 1e6)]),
    ]
}

struct Gen {
    rng: Rng,
    now: f64,
    count: u64,
    cfg_tiny: f64,
    /// The latest value written to each key (and field), to write it again:
    /// JS's dispose reports a replacement only when the value changed.
    last: std::collections::HashMap<(&'static str, Option<&'static str>), Value>,
}

impl Gen {
    /// A value; most are new each time (JS then sees a changed value).
    fn value(&mut self) -> Value {
        self.count += 1;
        let c = self.count as f64;
        let s = |t: &str| Value::String(u(t));
        match self.rng.below(14) {
            0..=2 => Value::Number(c),
            3 => Value::Number(c + 0.25),
            4 => s(&format!("v{c}")),
            5 => Value::Number(*self.rng.pick(&[
                -0.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                5e-324,
                1e300,
                // The integer encoding's edges (zigzag varints past 2^52).
                9007199254740991.0,
                -9007199254740991.0,
                4503599627370499.0,
                -4503599627370499.0,
                9007199254740992.0,
                -1.0,
                127.0,
                128.0,
            ])),
            6 => self.rng.pick(&[Value::Null, Value::Bool(true), Value::Bool(false), s("same")]).clone(),
            7 => Value::Array(vec![Value::Number(c), s("x"), Value::Null, Value::Undefined, Value::Array(vec![])]),
            8 => {
                let mut lone = u("s\u{e9}");
                lone.push(0xD800);
                Value::Object {
                    null_proto: self.rng.chance(30),
                    props: vec![
                        (u("n"), Value::Number(c)),
                        (u("s"), Value::String(lone)),
                        (u(""), Value::Object { null_proto: false, props: vec![] }),
                    ],
                }
            }
            9 => Value::Bytes(vec![(self.count % 256) as u8, 0, 255]),
            10 => Value::Date(if self.rng.chance(20) { f64::NAN } else { c * 1000.0 }),
            11 => Value::Map(vec![
                (Value::Number(c), s("one")),
                (s("k"), Value::BigInt { neg: true, magnitude: vec![1, 0] }),
            ]),
            12 => Value::BigInt { neg: self.rng.chance(50), magnitude: vec![(self.count % 255) as u8 + 1, 7] },
            _ => s(&"long".repeat(1 + (self.count % 40) as usize)),
        }
    }

    /// A value for `key` (and `field`): now and then the last one written
    /// there again, when that is a primitive (JS compares those by value).
    fn value_at(&mut self, key: &'static str, field: Option<&'static str>) -> Value {
        if self.rng.chance(20) {
            if let Some(v) = self.last.get(&(key, field)) {
                return v.clone();
            }
        }
        let v = self.value();
        if matches!(v, Value::Number(_) | Value::String(_) | Value::Bool(_) | Value::Null | Value::BigInt { .. }) {
            self.last.insert((key, field), v.clone());
        }
        v
    }

    fn ms(&mut self, most: u64) -> f64 {
        let whole = (1 + self.rng.below(most)) as f64;
        if self.rng.chance(15) {
            whole + 0.5
        } else {
            whole
        }
    }

    fn write(&mut self) -> Option<J> {
        let tiny = self.cfg_tiny;
        let r = self.rng.below(100);
        let w = match r {
            0..=39 => return None,
            40..=54 => vec![("ttl", num(if tiny > 0.0 && self.rng.chance(25) { tiny } else { self.ms(60) }))],
            55..=64 => vec![("idle", num(self.ms(40)))],
            65..=74 => vec![("ttl", num(self.ms(80))), ("idle", num(self.ms(30)))],
            75..=82 => {
                let d = self.rng.below(70) as f64 - 8.0;
                vec![("expireAt", num(self.now + d))]
            }
            83..=88 => vec![("keepTtl", J::Bool(true))],
            89..=93 => {
                vec![("ttl", tag("Infinity")), ("idle", if self.rng.chance(50) { tag("Infinity") } else { num(9.0) })]
            }
            // Invalid: each throws before anything changes.
            _ => match self.rng.below(5) {
                0 => vec![("ttl", num(0.0))],
                1 => vec![("ttl", num(-3.0))],
                2 => vec![("ttl", num(5.0)), ("expireAt", num(self.now + 5.0))],
                3 => vec![("keepTtl", J::Bool(true)), ("ttl", num(5.0))],
                _ => vec![("idle", tag("NaN"))],
            },
        };
        Some(J::obj(w))
    }

    fn op(&mut self, cfg: &Config, snapshotted: bool) -> J {
        let (key, field) = (self.rng.word(&KEYS), self.rng.word(&FIELDS));
        let (k, f) = (J::s(key), J::s(field));
        let mut m: Vec<(&str, J)> = Vec::new();
        let sized = |g: &mut Gen, m: &mut Vec<(&str, J)>| {
            if cfg.max_bytes > 0.0 {
                let third = (cfg.max_bytes / 3.0) as u64;
                let n = if g.rng.chance(4) { cfg.max_bytes + 5.0 } else { (1 + g.rng.below(third)) as f64 };
                m.push(("n", J::Num(n)));
            }
        };
        let r = self.rng.below(1000);
        match r {
            0..=199 => {
                let v = self.value_at(key, None);
                m.extend([("op", J::s("set")), ("k", k), ("v", enc(&v))]);
                if let Some(w) = self.write() {
                    m.push(("w", w));
                }
                sized(self, &mut m);
            }
            200..=299 => m.extend([("op", J::s("get")), ("k", k)]),
            300..=329 => m.extend([("op", J::s("peek")), ("k", k)]),
            330..=359 => m.extend([("op", J::s("has")), ("k", k)]),
            360..=384 => m.extend([("op", J::s("touch")), ("k", k)]),
            385..=424 => {
                let relative = self.rng.chance(50);
                let t =
                    if relative { self.rng.below(60) as f64 - 5.0 } else { self.now + self.rng.below(60) as f64 - 5.0 };
                m.extend([("op", J::s(if relative { "expire" } else { "expireAt" })), ("k", k)]);
                m.push(if relative { ("ms", num(t)) } else { ("t", num(t)) });
                if self.rng.chance(50) {
                    m.push(("c", J::s(self.rng.word(&CONDS))));
                }
            }
            425..=444 => m.extend([("op", J::s("persist")), ("k", k)]),
            445..=474 => m.extend([("op", J::s("ttl")), ("k", k)]),
            475..=509 => m.extend([("op", J::s("delete")), ("k", k)]),
            510..=659 => {
                let v = self.value_at(key, Some(field));
                m.extend([("op", J::s("hset")), ("k", k), ("f", f), ("v", enc(&v))]);
                if let Some(w) = self.write() {
                    m.push(("w", w));
                }
                sized(self, &mut m);
            }
            660..=709 => m.extend([("op", J::s("hget")), ("k", k), ("f", f)]),
            710..=724 => m.extend([("op", J::s("hhas")), ("k", k), ("f", f)]),
            725..=749 => m.extend([("op", J::s("hdel")), ("k", k), ("f", f)]),
            750..=764 => m.extend([("op", J::s("hlen")), ("k", k)]),
            765..=779 => m.extend([("op", J::s("hgetall")), ("k", k)]),
            780..=809 => {
                let relative = self.rng.chance(50);
                let t =
                    if relative { self.rng.below(50) as f64 - 5.0 } else { self.now + self.rng.below(50) as f64 - 5.0 };
                m.extend([("op", J::s(if relative { "hexpire" } else { "hexpireAt" })), ("k", k), ("f", f)]);
                m.push(if relative { ("ms", num(t)) } else { ("t", num(t)) });
                if self.rng.chance(40) {
                    m.push(("c", J::s(self.rng.word(&CONDS))));
                }
            }
            810..=819 => m.extend([("op", J::s("hpersist")), ("k", k), ("f", f)]),
            820..=839 => m.extend([("op", J::s("httl")), ("k", k), ("f", f)]),
            840..=919 => {
                // Mostly small steps; now and then a long one, or one back
                // in time (ignored: the clock never runs backwards).
                let step = match self.rng.below(20) {
                    0 => 100.0 + self.rng.below(400) as f64,
                    1 => -(self.rng.below(10) as f64),
                    2 => 0.375,
                    _ => self.rng.below(12) as f64,
                };
                let t = self.now + step;
                self.now = self.now.max(t);
                m.extend([("op", J::s("tick")), ("t", num(t))]);
                if cfg.settle {
                    m.push(("purge", J::Bool(true)));
                }
            }
            920..=929 => m.push(("op", J::s("purge"))),
            930..=949 => m.push(("op", J::s("size"))),
            950..=959 => m.push(("op", J::s("stats"))),
            960..=969 => m.push(("op", J::s("keys"))),
            970..=972 => m.push(("op", J::s("clear"))),
            973..=989 => m.push(("op", J::s("snapshot"))),
            _ => m.push(("op", J::s(if snapshotted { "restore" } else { "snapshot" }))),
        }
        J::obj(m)
    }
}

/// The corpus's operations (no observations yet), case after case.
fn generate() -> Vec<J> {
    let mut lines = Vec::new();
    for cfg in configs() {
        let o = J::obj(cfg.opts.iter().map(|(k, v)| (*k, num(*v))).collect());
        lines.push(J::obj(vec![("op", J::s("new")), ("now", num(cfg.now)), ("o", o)]));
        let mut g = Gen {
            rng: Rng(cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
            now: cfg.now,
            count: 0,
            cfg_tiny: cfg.tiny,
            last: Default::default(),
        };
        let mut snapshotted = false;
        for _ in 0..cfg.steps {
            let op = g.op(&cfg, snapshotted);
            snapshotted |= op.get("op").and_then(J::str).as_deref() == Some("snapshot");
            lines.push(op);
        }
        // Every case ends with its state in full.
        for end in ["keys", "stats", "snapshot", "restore", "snapshot"] {
            lines.push(J::obj(vec![("op", J::s(end))]));
        }
    }
    lines
}

fn read_corpus() -> Vec<J> {
    let text = std::fs::read_to_string(CORPUS).expect("tests/data/corpus.jsonl (LAPSE_BLESS=1 to create)");
    text.lines().enumerate().map(|(i, l)| parse(l).unwrap_or_else(|e| panic!("{CORPUS}:{}: {e}", i + 1))).collect()
}

#[test]
fn the_native_host_replays_the_corpus() {
    if std::env::var_os("LAPSE_BLESS").is_some() {
        let lines = replay(&generate());
        let text: String = lines.iter().map(|l| write(l) + "\n").collect();
        std::fs::write(CORPUS, text).unwrap();
    }
    let lines = read_corpus();
    let got = replay(&lines);
    for (i, (want, got)) in lines.iter().zip(&got).enumerate() {
        assert!(
            want == got,
            "{CORPUS}:{}: the native host observed\n  {}\nbut the corpus records\n  {}",
            i + 1,
            write(got),
            write(want)
        );
    }
}

/// What the corpus must exercise, so that a regenerated corpus cannot
/// quietly stop covering it.
#[test]
fn the_corpus_covers_what_it_must() {
    let lines = read_corpus();
    let mut count = std::collections::BTreeMap::<String, usize>::new();
    let mut bump = |what: String| *count.entry(what).or_default() += 1;
    for l in &lines {
        let op = l.get("op").and_then(J::str).unwrap();
        bump(format!("op {op}"));
        if let Some(e) = l.get("err").and_then(J::str) {
            bump(format!("{op} {e}"));
        }
        if let Some(J::Arr(rm)) = l.get("rm") {
            for r in rm {
                let J::Arr(r) = r else { continue };
                let what = if r[1] == J::Null { "key" } else { "field" };
                bump(format!("{} {what}", r[2].str().unwrap()));
            }
        }
        if let Some(w) = l.get("w") {
            for name in ["ttl", "idle", "expireAt", "keepTtl"] {
                if w.get(name).is_some() && l.get("err").is_none() {
                    bump(format!("{op} with {name}"));
                }
            }
        }
    }
    let need = [
        ("evicted key", 20),
        ("evicted field", 10),
        ("expired key", 20),
        ("expired field", 20),
        ("deleted key", 20),
        ("deleted field", 10),
        ("replaced key", 20),
        ("replaced field", 10),
        ("cleared key", 3),
        ("set wrongtype", 10),
        ("get wrongtype", 5),
        ("hset wrongtype", 10),
        ("hget wrongtype", 5),
        ("set range", 5),
        ("hset range", 5),
        ("set with ttl", 30),
        ("set with idle", 30),
        ("hset with ttl", 20),
        ("hset with idle", 20),
        ("set with expireAt", 10),
        ("set with keepTtl", 5),
        ("op snapshot", 40),
        ("op restore", 20),
        ("op hexpire", 15),
        ("op hexpireAt", 15),
        ("op tick", 100),
    ];
    let short: Vec<String> = need
        .iter()
        .filter(|(what, n)| count.get(*what).copied().unwrap_or(0) < *n)
        .map(|(what, n)| format!("{what}: {} < {n}", count.get(*what).copied().unwrap_or(0)))
        .collect();
    assert!(short.is_empty(), "the corpus lacks {short:?}; all counts: {count:?}");
}
