//! The snapshot decoder on arbitrary bytes: it must never panic, and what it
//! accepts must re-encode to exactly the same bytes (the format is
//! canonical), through the tape, the tree and a native cache restored from it.
//! Version 1 input re-encodes as version 2 with the same body; a native
//! restore is manual, so it snapshots with the manual clock flag.
//!
//! Input that does not start with the magic number is taken as a *body* and
//! sealed with a valid header, length and CRC-32 first, so the fuzzer reaches
//! the parser instead of bouncing off the checksum.
#![no_main]

use lapse_cache::snapshot::{self, ClockMode, Value, HEADER_LEN, MAGIC, VERSION};
use lapse_cache::TtlCache;
use libfuzzer_sys::fuzz_target;

fn seal(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + body.len() + 4);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&((HEADER_LEN + body.len() + 4) as u64).to_le_bytes());
    out.extend_from_slice(body);
    let crc = snapshot::crc32(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn check(bytes: &[u8]) {
    let Ok(tape) = snapshot::decode_tape(bytes) else {
        return;
    };
    let again = snapshot::encode_tape(&tape).expect("a decoded tape must encode");
    let mut want = bytes.to_vec();
    if want[4] == 1 {
        want[4] = VERSION as u8;
        let n = want.len() - 4;
        let crc = snapshot::crc32(&want[..n]);
        want[n..].copy_from_slice(&crc.to_le_bytes());
    }
    assert_eq!(again, want, "tape re-encode differs");
    let s = snapshot::decode(bytes).expect("decode_tape accepted it");
    assert_eq!(snapshot::encode(&s).expect("a decoded snapshot must encode"), want, "tree re-encode differs");
    let mut manual = s.clone();
    manual.clock = ClockMode::Manual;
    let want = snapshot::encode(&manual).expect("encodes");
    // Field names are `String`s natively: lone surrogates cannot restore there.
    let restored = TtlCache::<Vec<u16>, Value>::restore_with(&s, |k| Ok(k.to_vec()), |v| Ok(v.clone()));
    if let Ok(c) = restored {
        let s2 = c.snapshot_with(|k| k.clone(), |_, _, v| Ok(v.clone())).expect("values are data");
        assert_eq!(snapshot::encode(&s2).expect("encodes"), want, "restore + snapshot differs");
    }
}

fuzz_target!(|data: &[u8]| {
    if data.starts_with(&MAGIC) {
        check(data);
    } else {
        check(&seal(data));
    }
});
