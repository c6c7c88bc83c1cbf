//! Snapshot format tests: the committed golden file (so a format change
//! cannot pass unnoticed), corruption of every byte, hostile inputs, and
//! native snapshot/restore round trips.
//!
//! Regenerate the golden file only for a deliberate format change (and bump
//! `VERSION`, adding a new golden file): `LAPSE_BLESS=1 cargo test --test
//! snapshot`. Older golden files stay, read-only: this build must keep
//! reading them.

use std::time::{Duration, Instant};

use lapse_cache::snapshot::{self, Body, ClockMode, Clocks, Entry, Field, Snapshot, Value};
use lapse_cache::{Options, SetOptions as Write, TtlCache};

const INF: f64 = f64::INFINITY;
/// What this build writes (version 2).
const GOLDEN: &str = "tests/data/golden-v2.bin";
/// The same content written by version 1 (no clock mode): still read, as manual.
const GOLDEN_V1: &str = "tests/data/golden-v1.bin";

fn u(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// What `tests/js/snapshot.test.mjs` builds through the JS API:
/// ```js
/// const c = new TtlCache({ now: 1000, ttl: 60000, idle: 5000, maxEntries: 100, sweepBudget: 7 });
/// c.set("plain", 42);
/// c.set("obj\uD800", { a: [1, -0, NaN, "x\uD800"], d: new Date(0), m: new Map([["k", 7n]]), b: new Uint8Array([0, 255]) }, { ttl: Infinity, idle: Infinity });
/// c.hset("h", "f\u0192", true, { ttl: 100 });
/// c.tick(1050);
/// c.get("plain");
/// ```
fn golden() -> Snapshot {
    let mut lone = u("obj");
    lone.push(0xD800);
    let mut x = u("x");
    x.push(0xD800);
    Snapshot {
        now: 1050.0,
        clock: ClockMode::Manual,
        options: Options {
            ttl: Some(60000.0),
            idle: Some(5000.0),
            max_entries: Some(100),
            max_bytes: None,
            sweep_budget: Some(7),
        },
        entries: vec![
            Entry {
                key: u("plain"),
                clocks: Clocks { abs: 61000.0, last: 1050.0, idle: 5000.0 },
                body: Body::Plain { weight: 0, value: Value::Number(42.0) },
            },
            Entry {
                key: lone,
                clocks: Clocks { abs: INF, last: 1000.0, idle: INF },
                body: Body::Plain {
                    weight: 0,
                    value: Value::Object {
                        null_proto: false,
                        props: vec![
                            (
                                u("a"),
                                Value::Array(vec![
                                    Value::Number(1.0),
                                    Value::Number(-0.0),
                                    Value::Number(f64::NAN),
                                    Value::String(x),
                                ]),
                            ),
                            (u("d"), Value::Date(0.0)),
                            (
                                u("m"),
                                Value::Map(vec![(
                                    Value::String(u("k")),
                                    Value::BigInt { neg: false, magnitude: vec![7] },
                                )]),
                            ),
                            (u("b"), Value::Bytes(vec![0, 255])),
                        ],
                    },
                },
            },
            Entry {
                key: u("h"),
                clocks: Clocks { abs: INF, last: 1000.0, idle: INF },
                body: Body::Hash {
                    fields: vec![Field {
                        name: u("f\u{192}"),
                        clocks: Clocks { abs: 1100.0, last: 1000.0, idle: 5000.0 },
                        weight: 0,
                        value: Value::Bool(true),
                    }],
                },
            },
        ],
    }
}

fn golden_bytes() -> Vec<u8> {
    let bytes = snapshot::encode(&golden()).unwrap();
    if std::env::var_os("LAPSE_BLESS").is_some() {
        std::fs::write(GOLDEN, &bytes).unwrap();
    }
    bytes
}

#[test]
fn the_golden_snapshot_decodes_to_its_content() {
    let fresh = golden_bytes();
    let file = std::fs::read(GOLDEN).expect("tests/data/golden-v2.bin (LAPSE_BLESS=1 to create)");
    let s = snapshot::decode(&file).unwrap();
    assert_eq!(s, golden());
    // Spot checks that do not go through the test's own literal.
    assert_eq!(&file[..8], &[0x89, b'L', b'P', b'S', 2, 0, 0, 0]);
    assert_eq!(s.entries.len(), 3);
    assert_eq!(s.options.sweep_budget, Some(7));
    let Body::Plain { value: Value::Object { props, .. }, .. } = &s.entries[1].body else { panic!() };
    let Value::Array(a) = &props[0].1 else { panic!() };
    assert!(matches!(a[1], Value::Number(z) if z == 0.0 && z.is_sign_negative()));
    assert_eq!(s.entries[1].key.last(), Some(&0xD800));
    // And the encoder still writes exactly these bytes.
    assert_eq!(fresh, file, "the format changed: bump VERSION and bless a new golden file");
}

#[test]
fn the_version_1_golden_snapshot_still_decodes_as_a_manual_clock() {
    let v1 = std::fs::read(GOLDEN_V1).unwrap();
    assert_eq!(&v1[..8], &[0x89, b'L', b'P', b'S', 1, 0, 0, 0]);
    let s = snapshot::decode(&v1).unwrap();
    assert_eq!(s.clock, ClockMode::Manual);
    assert_eq!(s, golden());
    // Re-encoding writes version 2; only the header differs.
    let v2 = snapshot::encode(&s).unwrap();
    assert_eq!(v2[4], 2);
    assert_eq!(v2[8..v2.len() - 4], v1[8..v1.len() - 4]);
}

#[test]
fn a_followed_clock_is_recorded_and_restores_manual_until_told_to_follow() {
    let mut g = golden();
    g.clock = ClockMode::Follow;
    let bytes = snapshot::encode(&g).unwrap();
    assert_eq!(&bytes[4..8], &[2, 0, 1, 0]);
    assert_eq!(snapshot::decode(&bytes).unwrap().clock, ClockMode::Follow);
    // A native cache that follows a source records it.
    let mut c: Cache = TtlCache::with_clock(Options::default(), || 5000.0).unwrap();
    c.set(u("k"), Value::Null, Write { ttl: Some(100.0), ..Default::default() }).unwrap();
    let s = c.snapshot_with(|k| k.clone(), |_, _, v| Ok(v.clone())).unwrap();
    assert_eq!((s.clock, s.now), (ClockMode::Follow, 5000.0));
    let mut r: Cache = TtlCache::restore_with(&s, |k| Ok(k.to_vec()), to_value).unwrap();
    assert!(!r.follows_clock());
    r.follow(|| 4000.0); // behind the snapshot: ignored
    assert_eq!(r.now(), 5000.0);
    assert!(r.contains(&u("k")));
    r.follow(|| 5100.0);
    assert!(!r.contains(&u("k")));
}

#[test]
fn every_single_byte_corruption_of_the_golden_snapshot_is_rejected() {
    let file = std::fs::read(GOLDEN).unwrap();
    for i in 0..file.len() {
        for mask in [0x01u8, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF, 0x55] {
            let mut c = file.clone();
            c[i] ^= mask;
            let e = snapshot::decode(&c).expect_err(&format!("flip {mask:#x} at byte {i} accepted"));
            assert!(matches!(e, lapse_cache::Error::Corrupt(_)));
        }
    }
    for n in 0..file.len() {
        assert!(snapshot::decode(&file[..n]).is_err(), "truncation to {n} bytes accepted");
    }
    let mut longer = file.clone();
    longer.push(0);
    assert!(snapshot::decode(&longer).is_err());
}

#[test]
fn garbage_is_rejected_quickly() {
    let start = Instant::now();
    let mut seed = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut valid_header = std::fs::read(GOLDEN).unwrap();
    valid_header.truncate(16);
    for round in 0..20_000 {
        let len = (next() % 300) as usize;
        let mut b: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if round % 2 == 0 && b.len() >= 16 {
            b[..16].copy_from_slice(&valid_header);
        }
        assert!(snapshot::decode(&b).is_err());
    }
    assert!(start.elapsed() < Duration::from_secs(10));
}

type Cache = TtlCache<Vec<u16>, Value>;

fn to_value(v: &Value) -> Result<Value, lapse_cache::Error> {
    Ok(v.clone())
}

fn snap(c: &Cache) -> Vec<u8> {
    let s = c.snapshot_with(|k| k.clone(), |_, _, v| Ok(v.clone())).unwrap();
    snapshot::encode(&s).unwrap()
}

#[test]
fn a_native_cache_round_trips_with_exact_clocks() {
    let opts = Options { ttl: Some(1000.0), idle: Some(300.0), max_entries: Some(50), ..Default::default() };
    let mut c: Cache = TtlCache::with_options(opts, 0.0).unwrap();
    for i in 0..20u16 {
        let w = Write { ttl: Some(100.0 + f64::from(i) * 50.0), ..Default::default() };
        c.set(vec![i, 0xDC00], Value::Number(f64::from(i)), w).unwrap();
    }
    c.hset(u("h"), "a", Value::Null, Write { idle: Some(40.0), ..Default::default() }).unwrap();
    c.hset(u("h"), "b", Value::String(u("B")), Default::default()).unwrap();
    c.tick(120.0).unwrap();
    assert!(c.get(&vec![5, 0xDC00]).is_some());
    c.hget(&u("h"), "b").unwrap();
    c.tick(150.0).unwrap();
    let bytes = snap(&c);
    let s = snapshot::decode(&bytes).unwrap();
    // Keys 0 and 1 and field "a" have expired by 150: left out.
    assert_eq!(s.entries.len(), 19);
    let Body::Hash { fields } = &s.entries[18].body else { panic!("the hash comes last") };
    assert_eq!(fields.len(), 1);
    let r: Cache = TtlCache::restore_with(&s, |k| Ok(k.to_vec()), to_value).unwrap();
    assert_eq!(snap(&r), bytes, "restore then snapshot gives the same bytes");
    for i in 0..20u16 {
        let k = vec![i, 0xDC00];
        assert_eq!(r.ttl(&k), c.ttl(&k), "ttl of {i}");
    }
    assert_eq!(r.httl(&u("h"), "a").unwrap(), None);
    assert_eq!(r.httl(&u("h"), "b").unwrap(), c.httl(&u("h"), "b").unwrap());
    // Both go on expiring in step.
    let (mut c, mut r) = (c, r);
    for t in [200.0, 400.0, 800.0, 1200.0] {
        c.tick(t).unwrap();
        r.tick(t).unwrap();
        assert_eq!(r.len(), c.len(), "at {t}");
        assert_eq!(snap(&r), snap(&c), "at {t}");
    }
}

#[test]
fn restore_respects_the_bounds_and_keeps_sizes() {
    let opts = Options { max_bytes: Some(100), ..Default::default() };
    let mut c: Cache = TtlCache::with_options(opts, 0.0).unwrap();
    c.set_sized(u("a"), Value::Null, Default::default(), 60).unwrap();
    c.hset_sized(u("h"), "f", Value::Null, Default::default(), 30).unwrap();
    let s = snapshot::decode(&snap(&c)).unwrap();
    let mut r: Cache = TtlCache::restore_with(&s, |k| Ok(k.to_vec()), to_value).unwrap();
    assert_eq!(r.stats().bytes, 90);
    r.set_sized(u("b"), Value::Null, Default::default(), 20).unwrap(); // evicts to fit
    assert!(r.stats().bytes <= 100);
    // A snapshot over its own bound is refused.
    let mut over = s.clone();
    over.options.max_bytes = Some(50);
    assert!(snapshot::encode(&over).is_err());
}

#[test]
fn snapshot_keys_come_in_insertion_order_not_slot_order() {
    // SNAPSHOT.md's order, which the JS package writes: an overwrite keeps a
    // key's place, a key that left and came back goes last. "d" takes the
    // slot "a" freed, so slot order would put it first.
    let mut c: Cache = TtlCache::new(0.0);
    for k in ["a", "b", "c"] {
        c.set(u(k), Value::Null, Default::default()).unwrap();
    }
    c.delete(&u("a"));
    c.hset(u("d"), "f", Value::Null, Default::default()).unwrap();
    c.set(u("a"), Value::Null, Default::default()).unwrap();
    c.set(u("b"), Value::Bool(true), Default::default()).unwrap();
    let keys = |c: &Cache| snapshot::decode(&snap(c)).unwrap().entries.into_iter().map(|e| e.key).collect::<Vec<_>>();
    let want = vec![u("b"), u("c"), u("d"), u("a")];
    assert_eq!(keys(&c), want);
    // A restored cache keeps the order, and new keys go after it.
    let s = snapshot::decode(&snap(&c)).unwrap();
    let mut r: Cache = TtlCache::restore_with(&s, |k| Ok(k.to_vec()), to_value).unwrap();
    r.set(u("e"), Value::Null, Default::default()).unwrap();
    assert_eq!(keys(&r), [want, vec![u("e")]].concat());
}
