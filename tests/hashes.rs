//! Hashes with expired but unswept fields (issue 13): they never stand in a
//! write's way, and they do not make every access cost O(fields).

use std::sync::{Arc, Mutex};

use lapse_cache::{Options, Reason, SetOptions as Write, TtlCache};

fn ttl(ms: f64) -> Write {
    Write { ttl: Some(ms), ..Default::default() }
}

fn unswept(max_entries: Option<u64>, max_bytes: Option<u64>) -> TtlCache<&'static str, u32> {
    let o = Options { max_entries, max_bytes, sweep_budget: Some(0), ..Default::default() };
    TtlCache::with_options(o, 0.0).unwrap()
}

#[test]
fn expired_fields_do_not_count_against_max_entries() {
    let mut c = unswept(Some(2), None);
    c.hset("h", "old", 1, ttl(5.0)).unwrap();
    c.hset("h", "keep", 2, Write::default()).unwrap();
    c.tick(10.0).unwrap(); // "old" expired; sweepBudget 0 leaves it held
    assert_eq!(c.stats().entries, 2);
    // Was RangeError "the hash would hold more fields than maxEntries 2".
    assert!(c.hset("h", "new", 3, Write::default()).unwrap());
    assert_eq!(c.hlen(&"h").unwrap(), 2);
    assert_eq!(c.stats().entries, 2);
    // Three live fields still can never fit.
    assert!(c.hset("h", "third", 4, Write::default()).is_err());
    c.check_invariants().unwrap();
}

#[test]
fn expired_fields_do_not_count_against_max_bytes() {
    let mut c = unswept(None, Some(10));
    c.hset_sized("h", "old", 1, ttl(5.0), 8).unwrap();
    c.hset_sized("h", "keep", 2, Write::default(), 2).unwrap();
    c.tick(5.0).unwrap(); // expired at exactly its deadline
                          // Was RangeError "size 8 can never fit in maxBytes 10".
    assert!(c.hset_sized("h", "new", 3, Write::default(), 8).unwrap());
    assert_eq!(c.stats().bytes, 10);
    // Overwriting a live field counts its new size, not old + new.
    assert!(!c.hset_sized("h", "new", 4, Write::default(), 8).unwrap());
    assert!(c.hset_sized("h", "new", 5, Write::default(), 9).is_err());
    c.check_invariants().unwrap();
}

#[test]
fn a_read_reclaims_the_dead_fields_it_passes_over() {
    let gone = Arc::new(Mutex::new(0));
    let mut c = unswept(None, None);
    let g = gone.clone();
    c.on_remove(move |r| {
        assert_eq!(r.reason, Reason::Expired);
        *g.lock().unwrap() += 1;
    });
    c.hset("h", "live", 0, Write::default()).unwrap();
    let names: Vec<String> = (0..10_000).map(|i| format!("f{i}")).collect();
    for (i, n) in names.iter().enumerate() {
        c.hset("h", n, i as u32, ttl(5.0)).unwrap();
    }
    c.tick(6.0).unwrap();
    assert_eq!(c.stats().entries, 10_001);
    // The first access walks past the dead fields once and removes them;
    // every later access then finds a live field first (O(1)).
    assert_eq!(c.hget(&"h", "live").unwrap(), Some(&0));
    assert_eq!(*gone.lock().unwrap(), 10_000);
    assert_eq!(c.stats().entries, 1);
    for _ in 0..10_000 {
        assert_eq!(c.hget(&"h", "live").unwrap(), Some(&0));
    }
    c.check_invariants().unwrap();
}

/// A field whose own deadline passed, still held (nothing swept it), goes as
/// `Expired` when its hash is deleted, evicted or expired whole, as a plain
/// entry found expired does; the live ones as the key's removal says. It was
/// reported (and counted) `Deleted` (a probe of the crate).
#[test]
fn expired_fields_removed_with_their_hash_are_reported_expired() {
    for how in ["delete", "expire", "expire_at", "evict"] {
        let o = Options { sweep_budget: Some(0), max_entries: Some(3), ..Default::default() };
        let mut c: TtlCache<&str, u32> = TtlCache::with_options(o, 0.0).unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        c.on_remove(move |r| l.lock().unwrap().push((r.key, r.field, r.reason)));
        c.hset("h", "live", 1, Write::default()).unwrap();
        c.hset("h", "dead", 2, ttl(10.0)).unwrap();
        c.tick(10.0).unwrap();
        let want_live = match how {
            "delete" => {
                assert!(c.delete("h"));
                Reason::Deleted
            }
            "expire" => {
                assert!(c.expire("h", 0.0, None).unwrap());
                Reason::Deleted
            }
            "expire_at" => {
                assert!(c.expire_at("h", 5.0, None).unwrap());
                Reason::Deleted
            }
            _ => {
                // "h" (one live field, one held) never read; the other keys read.
                for k in ["a", "b"] {
                    c.insert(k, 0).unwrap();
                    c.get(&k);
                }
                c.insert("c", 0).unwrap();
                Reason::Evicted
            }
        };
        let log = log.lock().unwrap().clone();
        assert!(log.contains(&("h", Some("dead".into()), Reason::Expired)), "{how}: {log:?}");
        assert!(log.contains(&("h", Some("live".into()), want_live)), "{how}: {log:?}");
        let counters = c.stats();
        assert_eq!(counters.counters.expired, 1, "{how}: {counters:?}");
    }
}

/// A hash's size is the sum of its fields' in one `u32`: a field that would
/// take it past `u32::MAX` is a `Range` error with nothing changed (it
/// panicked on the overflow, a trap in wasm; released builds wrapped), and a
/// snapshot holding such a hash is refused (its restore panicked the same way).
#[test]
fn a_hash_whose_fields_total_over_u32_max_is_refused() {
    use lapse_cache::snapshot::{self, Body, ClockMode, Clocks, Entry, Field, Snapshot, Value};
    let o = Options { max_bytes: Some(10_000_000_000), ..Default::default() };
    let mut c: TtlCache<&str, u32> = TtlCache::with_options(o, 0.0).unwrap();
    c.hset_sized("h", "a", 1, Write::default(), 3_000_000_000).unwrap();
    let e = c.hset_sized("h", "b", 2, Write::default(), 3_000_000_000).unwrap_err();
    assert!(matches!(e, lapse_cache::Error::Range { .. }), "{e}");
    assert_eq!(c.hlen("h").unwrap(), 1);
    assert_eq!(c.stats().bytes, 3_000_000_000);
    // An overwrite that grows a field past it, the same; one that fits, fine.
    c.hset_sized("h", "b", 2, Write::default(), 1_000_000_000).unwrap();
    assert!(c.hset_sized("h", "b", 3, Write::default(), 1_300_000_000).is_err());
    c.hset_sized("h", "b", 3, Write::default(), 1_294_967_295).unwrap();
    assert_eq!(c.stats().bytes, u64::from(u32::MAX));
    c.check_invariants().unwrap();

    let clk = Clocks { abs: f64::INFINITY, last: 0.0, idle: f64::INFINITY };
    let field = |n: &str| Field { name: n.encode_utf16().collect(), clocks: clk, weight: u32::MAX, value: Value::Null };
    let s = Snapshot {
        now: 0.0,
        clock: ClockMode::Manual,
        options: Options { max_bytes: Some(1 << 40), ..Default::default() },
        entries: vec![Entry {
            key: "h".encode_utf16().collect(),
            clocks: clk,
            body: Body::Hash { fields: vec![field("a"), field("b")] },
        }],
    };
    assert!(snapshot::encode(&s).is_err());
    assert!(TtlCache::<String, ()>::restore_with(&s, |u| Ok(String::from_utf16(u).unwrap()), |_| Ok(())).is_err());
}
