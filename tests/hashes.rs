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
