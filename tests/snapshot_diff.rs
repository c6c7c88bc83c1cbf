//! The two snapshot decoders agree. The npm package checks and reads
//! snapshots in JS (`pkg-template/src/decode.js`); the native crate and the
//! fuzzers use the Rust decoder (`src/snapshot/decoder.rs`). Both must give
//! every input the same verdict: accepted, or rejected with the same message,
//! byte offset included.
//!
//! `tests/data/decode-diff.txt` lists thousands of inputs, each as a recipe
//! over a base (the golden files, every snapshot in `tests/data/corpus.jsonl`,
//! and bases the file itself spells out in hex), with the Rust decoder's
//! verdict. This test checks that the Rust decoder still gives each one its
//! verdict, and that together they reach every check the decoder makes;
//! `tests/js/decode-diff.test.mjs` checks that the package gives each one the
//! same verdict (and that what it accepts it restores and snapshots again to
//! the same bytes).
//!
//! Regenerate it (after a deliberate change to the decoders, or to the
//! corpus, whose snapshots are bases): `LAPSE_BLESS=1 cargo test --test
//! snapshot_diff`, then run the JS test too. The generator is seeded: the same
//! decoder and bases write the same file.
//!
//! Format, one input a line (`#` starts a comment):
//! - `+HEX<TAB>VERDICT`: these bytes; they are also the next base.
//! - `BASE<TAB>SEAL<TAB>EDITS<TAB>VERDICT`: base number `BASE` (0 and 1 the
//!   version-1 and version-2 golden files, then the corpus's snapshots in
//!   order, then the `+` lines in order), edited by `EDITS` (space-separated,
//!   applied in order, `-` for none): `xAT:MASK` xors the byte at `AT` with
//!   `MASK`; `wAT:HEX` overwrites bytes from `AT` (not past the end); `iAT:HEX`
//!   inserts bytes at `AT`; `dAT:N` deletes `N` bytes from `AT`; `tN` keeps the
//!   first `N` bytes. With `SEAL` `s` (not `-`), the result, if it holds a
//!   header and a trailer, then gets its true length and CRC-32.
//! - `VERDICT` is `ok`, or the error message after `bytes: not a valid
//!   snapshot: `.

#[path = "corpus/json.rs"]
#[allow(dead_code)] // the corpus test uses the rest
mod json;
#[path = "corpus/rng.rs"]
mod rng;
use rng::Rng;

use lapse_cache::snapshot::{self, crc32};

const FILE: &str = "tests/data/decode-diff.txt";
const CORPUS: &str = "tests/data/corpus.jsonl";
const PREFIX: &str = "bytes: not a valid snapshot: ";

/// Every message the decoder has for a snapshot (`decoder.rs`, in order): the
/// inputs must reach each one. ("restore failed" needs a visitor that fails.)
const MESSAGES: &[&str] = &[
    "empty input",
    "not a lapse snapshot",
    "unsupported format version",
    "length mismatch (truncated?)",
    "checksum mismatch",
    "bad header flags",
    "truncated",
    "non-canonical NaN",
    "varint over 64 bits",
    "overlong varint",
    "count overruns the input",
    "string overruns the input",
    "non-canonical string",
    "bad limit",
    "bad flags",
    "sized hash key",
    "bad deadline",
    "bad last access",
    "bad idle window",
    "expired entry",
    "bad size",
    "undefined value",
    "nested deeper than 64",
    "integer beyond 2^53",
    "non-canonical number",
    "Map key -0",
    "duplicate Map key",
    "property order JS does not keep",
    "duplicate property",
    "non-canonical bigint",
    "bad Date",
    "unknown value tag",
    "bad clock",
    "bad ttl or idle",
    "bad field count",
    "duplicate field",
    "duplicate key",
    "over maxEntries or maxBytes",
    "trailing bytes",
];

fn verdict(bytes: &[u8]) -> String {
    let full = match snapshot::decode_tape(bytes) {
        Ok(_) => "ok".to_string(),
        Err(e) => e.to_string().strip_prefix(PREFIX).expect("a corrupt-input error").to_string(),
    };
    // The lean check the package's wasm used to run says the same.
    let lean = match snapshot::check_with(bytes, &mut |_, _, _| Ok(())) {
        Ok(_) => "ok".to_string(),
        Err(e) => e.to_string().strip_prefix(PREFIX).expect("a corrupt-input error").to_string(),
    };
    assert_eq!(full, lean, "decode_tape and check_with disagree on {}", hex(bytes));
    full
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex: {s}");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

/// The bases every recipe may name before the file's own: the golden files,
/// then the corpus's snapshots.
fn committed_bases() -> Vec<Vec<u8>> {
    let mut bases =
        vec![std::fs::read("tests/data/golden-v1.bin").unwrap(), std::fs::read("tests/data/golden-v2.bin").unwrap()];
    for line in std::fs::read_to_string(CORPUS).unwrap().lines().filter(|l| !l.is_empty()) {
        let j = json::parse(line).unwrap();
        if j.get("op").and_then(json::J::str).as_deref() == Some("snapshot") {
            bases.push(unhex(&j.get("r").and_then(json::J::str).expect("a snapshot's bytes")));
        }
    }
    assert!(bases.len() > 50, "the corpus holds {} snapshots", bases.len() - 2);
    bases
}

/// Gives `b` its true length and CRC-32, if it has room for them.
fn seal(b: &mut [u8]) {
    let n = b.len();
    if n >= 20 {
        b[8..16].copy_from_slice(&(n as u64).to_le_bytes());
        let c = crc32(&b[..n - 4]);
        b[n - 4..].copy_from_slice(&c.to_le_bytes());
    }
}

fn num(s: &str) -> usize {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s}"))
}

/// Applies a line's edits (see the module comment) to a copy of `base`.
fn apply(base: &[u8], sealed: bool, edits: &str) -> Vec<u8> {
    let mut b = base.to_vec();
    for e in edits.split(' ').filter(|e| *e != "-") {
        let (op, rest) = e.split_at(1);
        let (at, arg) = rest.split_once(':').unwrap_or((rest, ""));
        let at = num(at);
        match op {
            "x" => b[at] ^= num(arg) as u8,
            "w" => {
                for (i, x) in unhex(arg).into_iter().enumerate() {
                    if let Some(y) = b.get_mut(at + i) {
                        *y = x;
                    }
                }
            }
            "i" => {
                let tail = b.split_off(at);
                b.extend(unhex(arg));
                b.extend(tail);
            }
            "d" => {
                let to = (at + num(arg)).min(b.len());
                b.drain(at..to);
            }
            "t" => b.truncate(at),
            _ => panic!("unknown edit {e}"),
        }
    }
    if sealed {
        seal(&mut b);
    }
    b
}

// ---- the generator (LAPSE_BLESS=1) -----------------------------------------

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }
    /// Small numbers (tags, flags, counts, varint ends) are likelier.
    fn byte(&mut self) -> u8 {
        match self.below(4) {
            0 => self.below(16) as u8,
            1 => self.pick(&[0x00, 0x01, 0x7f, 0x80, 0x81, 0xfe, 0xff, 0x3f, 0x40, 0xf0, 0x7e]),
            _ => self.next() as u8,
        }
    }
}

/// A body writer for hand-made bases.
#[derive(Default)]
struct W(Vec<u8>);

impl W {
    fn u8(mut self, x: u8) -> W {
        self.0.push(x);
        self
    }
    fn raw(mut self, b: &[u8]) -> W {
        self.0.extend_from_slice(b);
        self
    }
    fn f(self, x: f64) -> W {
        self.raw(&x.to_le_bytes())
    }
    fn v(mut self, mut x: u64) -> W {
        while x >= 0x80 {
            self.0.push(x as u8 | 0x80);
            x >>= 7;
        }
        self.u8(x as u8)
    }
    /// A string, Latin-1 when every unit fits a byte (or `wide`).
    fn s(self, units: &[u16], wide: bool) -> W {
        let wide = wide || units.iter().any(|&u| u > 0xff);
        let mut w = self.v((units.len() as u64) << 1 | u64::from(wide));
        for &u in units {
            w = if wide { w.raw(&u.to_le_bytes()) } else { w.u8(u as u8) };
        }
        w
    }
    fn st(self, s: &str) -> W {
        self.s(&s.encode_utf16().collect::<Vec<_>>(), false)
    }
    /// The options and entry count: now 100, ttl, idle, then limits as written.
    fn head(self, ttl: f64, idle: f64, limits: [u64; 3], count: u64) -> W {
        self.f(100.0).f(ttl).f(idle).v(limits[0]).v(limits[1]).v(limits[2]).v(count)
    }
    /// An entry or field head: flags, key, then `last` 50 and the optional clocks.
    fn ent(self, flags: u8, key: &str, abs: Option<f64>, idle: Option<f64>, size: Option<u64>) -> W {
        let mut w = self.u8(flags).st(key);
        if let Some(a) = abs {
            w = w.f(a);
        }
        w = w.f(50.0);
        if let Some(i) = idle {
            w = w.f(i);
        }
        if let Some(s) = size {
            w = w.v(s);
        }
        w
    }
    /// A whole snapshot (version 2 unless `v1`) around this body.
    fn seal(self, flags: u16, v1: bool) -> Vec<u8> {
        let mut b = vec![0x89, b'L', b'P', b'S'];
        b.extend_from_slice(&(if v1 { 1u16 } else { 2 }).to_le_bytes());
        b.extend_from_slice(&flags.to_le_bytes());
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&self.0);
        b.extend_from_slice(&[0; 4]);
        seal(&mut b);
        b
    }
}

fn w() -> W {
    W::default()
}

/// One plain entry `k` (no clocks of its own) whose value is `value`.
fn one(value: W) -> Vec<u8> {
    w().head(INF, INF, [0, 0, 0], 1).ent(0, "k", None, None, None).raw(&value.0).seal(0, false)
}

const INF: f64 = f64::INFINITY;
const TWO53: u64 = 1 << 53;

/// Hand-made bases: valid snapshots at the edges JS numbers and strings
/// have, and one invalid input for each check the other bases reach rarely.
fn forged() -> Vec<Vec<u8>> {
    let int = |i: i64| w().u8(4).v(((i << 1) ^ (i >> 63)) as u64);
    let zig = |z: u64| w().u8(4).v(z);
    let float = |x: f64| w().u8(5).f(x);
    let date = |x: f64| w().u8(11).f(x);
    let big = |tag: u8, mag: &[u8]| w().u8(tag).v(mag.len() as u64).raw(mag);
    let obj = |names: &[&str]| {
        let mut o = w().u8(8).v(names.len() as u64);
        for n in names {
            o = o.st(n).u8(1);
        }
        o
    };
    let map = |keys: Vec<W>| {
        let mut m = w().u8(12).v(keys.len() as u64);
        for k in keys {
            m = m.raw(&k.0).u8(3);
        }
        m
    };
    let nest = |depth: usize| {
        let mut v = w();
        for _ in 0..depth {
            v = v.u8(7).v(1);
        }
        v.u8(1)
    };
    let nan = f64::from_bits(0x7FF8_0000_0000_0001);
    let out = vec![
        // Valid: numbers at the edges of exact JS integers.
        one(int(9007199254740991)),
        one(int(-9007199254740991)),
        one(zig(TWO53 * 2 - 2)),
        one(zig(TWO53 * 2 - 1)),
        one(zig(TWO53 * 2)),
        one(zig(u64::MAX)),
        one(float(-0.0)),
        one(float(0.5)),
        one(float(f64::NAN)),
        one(float(INF)),
        one(float(-INF)),
        one(float(9007199254740992.0)),
        one(float(-1e300)),
        one(float(5e-324)),
        one(float(1.0)),
        one(float(nan)),
        one(float(-9007199254740991.0)),
        // Dates.
        one(date(8.64e15)),
        one(date(-8.64e15)),
        one(date(f64::NAN)),
        one(date(0.0)),
        one(date(8.64e15 + 1.0)),
        one(date(0.5)),
        one(date(-0.0)),
        one(date(INF)),
        // Bigints.
        one(big(13, &[])),
        one(big(13, &[1, 0])),
        one(big(14, &[0xff; 9])),
        one(big(14, &[])),
        one(big(13, &[0, 1])),
        // Strings: both widths, lone surrogates, a wide string that needs not be.
        one(w().u8(6).s(&[0xd800, 0x41, 0xdfff], false)),
        one(w().u8(6).s(&[0xff, 0x00, 0x80], false)),
        one(w().u8(6).s(&[0xff, 0x41], true)),
        one(w().u8(6).s(&[0x100], false)),
        one(w().u8(6).s(&[], false)),
        // Objects: index names first, ascending; "01", "-1" and 2^32 - 1 are names.
        one(obj(&["0", "7", "4294967294", "4294967295", "01", "-1", "a", "__proto__"])),
        one(obj(&["1", "0"])),
        one(obj(&["a", "1"])),
        one(obj(&["a", "b", "a"])),
        one(obj(&["5", "5"])),
        one(obj(&[""])),
        one(w().u8(9).v(2).st("__proto__").u8(1).st("x").raw(&obj(&["y"]).0)),
        // Maps: primitive keys compared by value, objects by identity.
        one(map(vec![int(1), float(1.5), w().u8(6).st("1"), big(13, &[1]), w().u8(0), w().u8(1), float(f64::NAN)])),
        one(map(vec![int(1), int(1)])),
        one(map(vec![float(f64::NAN), float(f64::NAN)])),
        one(map(vec![w().u8(6).st("k"), w().u8(6).st("k")])),
        one(map(vec![obj(&["a"]), obj(&["a"]), w().u8(7).v(0), w().u8(7).v(0), date(1.0), date(1.0)])),
        one(map(vec![w().u8(10).v(1).u8(7), w().u8(10).v(1).u8(7)])),
        one(map(vec![float(-0.0)])),
        one(map(vec![int(0)])),
        one(map(vec![big(14, &[2]), big(14, &[2])])),
        // Nesting: 64 levels are fine, 65 are not.
        one(nest(64)),
        one(nest(65)),
        // Values that are no value.
        one(w().u8(0)),
        one(w().u8(15)),
        one(w().u8(7).v(2).u8(0).u8(0)),
        one(w().u8(10).v(3).raw(&[0, 1, 2])),
        // Varints: the longest, one bit too many, overlong.
        one(zig(u64::MAX)),
        one(w().u8(4).raw(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02])),
        one(w().u8(4).raw(&[0x80, 0x00])),
        one(w().u8(7).raw(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])),
        // Header options.
        w().head(0.0, INF, [0, 0, 0], 0).seal(0, false),
        w().head(INF, -1.0, [0, 0, 0], 0).seal(0, false),
        w().head(INF, nan, [0, 0, 0], 0).seal(0, false),
        w().head(5e-324, 1e308, [TWO53 - 1, TWO53 - 1, TWO53], 0).seal(1, false),
        w().head(INF, INF, [TWO53, 0, 0], 0).seal(0, false),
        w().head(INF, INF, [0, TWO53 + 1, 0], 0).seal(0, false),
        w().head(INF, INF, [0, 0, TWO53 + 1], 0).seal(0, false),
        w().head(INF, INF, [0, 0, 1], 0).seal(0, false),
        w().f(f64::NAN).f(INF).f(INF).v(0).v(0).v(0).v(0).seal(0, false),
        w().f(INF).f(INF).f(INF).v(0).v(0).v(0).v(0).seal(0, false),
        w().f(-1e308).f(INF).f(INF).v(0).v(0).v(0).v(0).seal(1, false),
        w().head(INF, INF, [0, 0, 0], 0).seal(1, true),
        w().head(INF, INF, [0, 0, 0], 0).seal(0, true),
        w().head(INF, INF, [0, 0, 0], 0).seal(2, false),
        w().head(INF, INF, [0, 0, 0], 0).u8(0).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).seal(0, false),
        // Entry heads: clocks, sizes and flags.
        w().head(INF, INF, [0, 10, 0], 1).ent(4 | 8 | 16, "k", Some(150.0), Some(60.0), Some(10)).u8(1).seal(0, false),
        w().head(INF, INF, [0, 10, 0], 1).ent(16, "k", None, None, Some(11)).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(16, "k", None, None, Some(0)).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(16, "k", None, None, Some(1 << 32)).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(16, "k", None, None, Some((1 << 32) - 1)).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(4, "k", Some(100.0), None, None).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(4, "k", Some(INF), None, None).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(8, "k", None, Some(50.0), None).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(8, "k", None, Some(0.0), None).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(8, "k", None, Some(-5.0), None).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(8, "k", None, Some(f64::NAN), None).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(8, "k", None, Some(1e-300), None).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(32, "k", None, None, None).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(2, "k", None, None, None).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(3, "k", None, None, None).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).u8(0).st("k").f(150.0).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).u8(0).st("k").f(f64::NAN).u8(1).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 2)
            .ent(0, "k", None, None, None)
            .u8(1)
            .ent(0, "k", None, None, None)
            .u8(2)
            .seal(0, false),
        // Hashes: fields, their count, sizes, duplicates, bounds.
        w().head(INF, INF, [3, 30, 0], 1)
            .ent(1 | 4, "h", Some(500.0), None, None)
            .v(2)
            .ent(2 | 16, "f", None, None, Some(10))
            .u8(1)
            .ent(2 | 8 | 16, "g", None, Some(70.0), Some(20))
            .u8(2)
            .seal(0, false),
        w().head(INF, INF, [1, 0, 0], 1)
            .ent(1, "h", None, None, None)
            .v(2)
            .ent(2, "f", None, None, None)
            .u8(1)
            .ent(2, "g", None, None, None)
            .u8(1)
            .seal(0, false),
        w().head(INF, INF, [2, 0, 0], 2)
            .ent(0, "k", None, None, None)
            .u8(1)
            .ent(1, "h", None, None, None)
            .v(2)
            .ent(2, "f", None, None, None)
            .u8(1)
            .ent(2, "g", None, None, None)
            .u8(1)
            .seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).ent(1, "h", None, None, None).v(0).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1)
            .ent(1, "h", None, None, None)
            .v(2)
            .ent(2, "f", None, None, None)
            .u8(1)
            .ent(2, "f", None, None, None)
            .u8(1)
            .seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1)
            .ent(1 | 16, "h", None, None, Some(1))
            .v(1)
            .ent(2, "f", None, None, None)
            .u8(1)
            .seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1)
            .ent(1, "h", None, None, None)
            .v(1)
            .ent(0, "f", None, None, None)
            .u8(1)
            .seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1)
            .ent(1, "h", None, None, None)
            .v(1)
            .ent(2, "f", None, None, None)
            .u8(0)
            .seal(0, false),
        w().head(INF, INF, [0, 0, 0], 2)
            .ent(1, "h", None, None, None)
            .v(1)
            .ent(2, "f", None, None, None)
            .u8(1)
            .ent(1, "h", None, None, None)
            .v(1)
            .ent(2, "f", None, None, None)
            .u8(1)
            .seal(0, false),
        // Hostile counts and lengths.
        w().head(INF, INF, [0, 0, 0], 1 << 62).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).u8(0).v(1 << 41).seal(0, false),
        w().head(INF, INF, [0, 0, 0], 1).u8(0).v((1 << 41) | 1).seal(0, false),
        one(w().u8(7).v(u64::MAX >> 1)),
        one(w().u8(8).v(1 << 40)),
        // Not snapshots at all.
        Vec::new(),
        vec![0x89, b'L', b'P'],
        vec![0x89, b'L', b'P', b'S', 2],
        vec![0x89, b'L', b'P', b'S', 3, 0],
        vec![0x89, b'L', b'P', b'S', 2, 0, 0, 0, 20, 0],
        b"{\"json\": true}".to_vec(),
    ];
    out
}

/// A random edit of `b` (which seal may then fix up), as its recipe text.
fn edit(r: &mut Rng, b: &[u8]) -> String {
    let n = b.len();
    if n == 0 {
        let k = 1 + r.below(20);
        return format!("i0:{}", hex(&r.bytes(k)));
    }
    // Mostly the body, where the parser is.
    let at = |r: &mut Rng| if n > 20 && r.below(5) != 0 { 16 + r.below(n - 20) } else { r.below(n) };
    match r.below(10) {
        0..=2 => {
            let mask = r.pick(&[1u8, 2, 4, 8, 16, 32, 64, 128, 0xff, 0x7f, 0x80]);
            let at = at(r);
            format!("x{at}:{}", if r.below(3) == 0 { r.byte().max(1) } else { mask })
        }
        3 => {
            let at = at(r);
            format!("w{at}:{}", hex(&[r.byte()]))
        }
        4 => {
            // An interesting f64 over 8 bytes.
            let x: f64 = r.pick(&[
                -0.0,
                0.0,
                1.0,
                0.5,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                9007199254740992.0,
                8.64e15,
                -1e300,
                1e300,
                100.0,
                49.0,
                f64::from_bits(0x7FF8_0000_0000_0001),
            ]);
            let at = at(r);
            format!("w{at}:{}", hex(&x.to_le_bytes()))
        }
        5 => format!("t{}", r.below(n + 1)),
        6 => {
            let (k, at) = (1 + r.below(4), r.below(n + 1));
            format!("i{at}:{}", hex(&r.bytes(k)))
        }
        7 => {
            let at = at(r);
            format!("d{at}:{}", 1 + r.below(4))
        }
        _ => {
            let (a, x, b, y) = (at(r), 1 + r.below(255), at(r), 1 + r.below(255));
            format!("x{a}:{x} x{b}:{y}")
        }
    }
}

fn generate() -> String {
    let mut out = String::from(
        "# The two snapshot decoders agree on each input below: see tests/snapshot_diff.rs\n\
         # (the format; LAPSE_BLESS=1 cargo test --test snapshot_diff writes this file).\n",
    );
    let mut bases = committed_bases();
    let mut r = Rng(0x5eed_0fde_c0de);
    let mut extra = forged();
    // Random bodies under a true header, and a few random inputs.
    for i in 0..300 {
        let n = r.below(48);
        let mut body = r.bytes(n);
        if i % 3 == 0 && n > 24 {
            // A plausible start: now, ttl and idle that pass.
            body[..24].copy_from_slice(&[100.0f64.to_le_bytes(), INF.to_le_bytes(), INF.to_le_bytes()].concat());
        }
        extra.push(W(body).seal(if r.below(8) == 0 { 1 } else { 0 }, r.below(8) == 0));
    }
    for _ in 0..40 {
        let n = r.below(30);
        let mut b = r.bytes(n);
        if n >= 4 && r.below(2) == 0 {
            b[..4].copy_from_slice(&[0x89, b'L', b'P', b'S']);
        }
        extra.push(b);
    }
    for b in &extra {
        out += &format!("+{}\t{}\n", hex(b), verdict(b));
    }
    bases.extend(extra);
    // Edits of every base: mostly sealed, so that the parser rather than the
    // checksum meets them.
    let (committed, forged) = (committed_bases().len(), forged().len());
    for (i, base) in bases.iter().enumerate() {
        let k = if i < committed {
            12
        } else if i < committed + forged {
            16
        } else {
            2
        };
        for _ in 0..k {
            let mut edits = vec![edit(&mut r, base)];
            let mut b = apply(base, false, &edits[0]);
            while r.below(4) == 0 && !b.is_empty() {
                edits.push(edit(&mut r, &b));
                b = apply(&b, false, edits.last().unwrap());
            }
            let sealed = r.below(7) != 0;
            let edits = edits.join(" ");
            let input = apply(base, sealed, &edits);
            out += &format!("{i}\t{}\t{edits}\t{}\n", if sealed { "s" } else { "-" }, verdict(&input));
        }
    }
    out
}

// ---- the check --------------------------------------------------------------

#[test]
fn the_rust_decoder_gives_every_input_its_recorded_verdict() {
    if std::env::var_os("LAPSE_BLESS").is_some() {
        std::fs::write(FILE, generate()).unwrap();
    }
    let text = std::fs::read_to_string(FILE).unwrap();
    let mut bases = committed_bases();
    let (mut n, mut ok, mut wrong) = (0, 0, Vec::new());
    let mut seen = vec![0usize; MESSAGES.len()];
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty() && !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (input, want) = match cols[..] {
            [b, v] if b.starts_with('+') => {
                bases.push(unhex(&b[1..]));
                (bases.last().unwrap().clone(), v)
            }
            [base, sealed, edits, v] => (apply(&bases[num(base)], sealed == "s", edits), v),
            _ => panic!("{FILE}:{}: bad line", i + 1),
        };
        let got = verdict(&input);
        if got != want {
            wrong.push(format!("{FILE}:{}: recorded {want:?}, decoder says {got:?}", i + 1));
        }
        n += 1;
        ok += usize::from(want == "ok");
        // The message without its "entry N, byte N: " place.
        let what = want.rsplit(": ").next().unwrap();
        if let Some(k) = MESSAGES.iter().position(|m| *m == what) {
            seen[k] += 1;
        } else {
            assert_eq!(what, "ok", "{FILE}:{}: a message the list does not know", i + 1);
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {n} verdicts changed (LAPSE_BLESS=1 after a deliberate change):\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
    assert!(n >= 3000 && ok >= 300, "only {n} inputs, {ok} of them valid");
    let missed: Vec<_> = MESSAGES.iter().zip(&seen).filter(|(_, &k)| k == 0).map(|(m, _)| *m).collect();
    assert!(missed.is_empty(), "no input reaches {missed:?}");
}
