use super::encoder::{write_tape, Writer};
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
    let b =
        encode(&Snapshot { now: 0.0, clock: ClockMode::Manual, options: Default::default(), entries: vec![] }).unwrap();
    // The same header and options, declaring 2^60 entries.
    let mut w = Writer { out: b[..b.len() - 5].to_vec() };
    w.varint(1 << 60);
    let e = decode(&seal(w.out)).unwrap_err().to_string();
    assert!(e.contains("overruns"), "{e}");
    // One entry whose value is 10,000 nested arrays.
    let mut w = Writer { out: b[..b.len() - 5].to_vec() };
    w.varint(1);
    w.u8(ENTRY_PLAIN);
    w.str(&units("k"));
    w.f64(0.0);
    w.out.extend(std::iter::repeat_n([TAG_ARRAY, 1], 10_000).flatten());
    w.u8(TAG_NULL);
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

#[test]
fn options_a_cache_refuses_are_refused_in_a_snapshot_too() {
    // max_entries Some(0) got past validate() and restore_with made a cache
    // over its bound, whose every insert then failed.
    for (max_entries, max_bytes) in [(Some(0), None), (None, Some(0))] {
        let s = Snapshot { options: Options { max_entries, max_bytes, ..Default::default() }, ..sample() };
        assert!(matches!(s.validate(), Err(crate::Error::Range { .. })), "{max_entries:?} {max_bytes:?}");
        let r = crate::TtlCache::<String, u8>::restore_with(&s, |_| Ok(String::new()), |_| Ok(0));
        assert!(r.is_err());
    }
}
