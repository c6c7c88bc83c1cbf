//! Native-host internals the public API cannot reach: insertion numbers
//! running out, and the ghost queue's stale entries.

use super::*;
use crate::snapshot::Value;

fn order(c: &TtlCache<u32, u32>) -> Vec<u32> {
    let snap = c.snapshot_with(|k| vec![*k as u16], |_, _, v| Ok(Value::Number(f64::from(*v)))).unwrap();
    snap.entries.iter().map(|e| u32::from(e.key[0])).collect()
}

#[test]
fn insertion_numbers_that_run_out_are_renumbered_in_order() {
    let mut c: TtlCache<u32, u32> = TtlCache::new(0.0);
    c.seq = u32::MAX - 3;
    c.set(5, 0, Write::default()).unwrap();
    c.set(3, 0, Write::default()).unwrap();
    c.delete(&5);
    c.set(7, 0, Write::default()).unwrap(); // in the slot 5 left: slot order differs
    c.set(9, 0, Write::default()).unwrap(); // the numbers ran out here
    c.set(1, 0, Write::default()).unwrap();
    c.set(3, 1, Write::default()).unwrap(); // an overwrite keeps its place
    assert_eq!(order(&c), [3, 7, 9, 1]);
    assert_eq!(c.seq, 4);
}

#[test]
fn keys_that_keep_coming_back_do_not_grow_the_ghost_queue() {
    // maxEntries 2: each new key evicts one never read (a ghost), which then
    // comes back; every return leaves a stale queue entry behind.
    let opts = Options { max_entries: Some(2), ..Default::default() };
    let mut c: TtlCache<u32, u32> = TtlCache::with_options(opts, 0.0).unwrap();
    let mut most = 0;
    for i in 0..2000u32 {
        c.set(i % 3, i, Write::default()).unwrap();
        c.check_invariants().unwrap();
        assert!(c.ghosts.len() <= 2, "the cap counts ghosts");
        most = most.max(c.ghosts.queued());
    }
    assert!(most > 64, "stale entries piled up to the compaction point");
    assert!(most <= 2 * 2 + 64 + 1, "the queue held {most} entries for at most 2 ghosts");
}

#[test]
fn items_stay_small() {
    // Every plain read loads one item: 24 bytes for u64 keys and values, 40
    // for String keys (a field boxed, a hash's map boxed, the insertion
    // number in its own column), where an inline map made them 64 and 72.
    // A bare entry's read needs no time of its own: with no idle window it
    // moves nothing (see `Engine::read`), so it spares the engine's clock
    // row without one (it took 8 bytes more until it went).
    assert_eq!(std::mem::size_of::<Item<u64, u64>>(), 24);
    assert_eq!(std::mem::size_of::<Item<String, u64>>(), 40);
}

/// A probe: with one live field and many expired ones no sweep removed,
/// each `&self` read of the hash (`contains`, `ttl`, `try_peek`, `hhas`,
/// `httl`) walked the expired fields (0.45 ms a `contains` at 199k), and
/// `hlen`/`hgetall` walked them on every call. Now the hash's witness
/// answers the first, and the listings remove what they pass.
#[test]
fn reads_of_a_hash_do_not_walk_its_unswept_expired_fields() {
    use crate::engine::FIELD_STEPS;
    let steps = || FIELD_STEPS.with(|n| n.get());
    for live_first in [true, false] {
        let o = Options { sweep_budget: Some(0), ..Default::default() };
        let mut c: TtlCache<&str, u32> = TtlCache::with_options(o, 0.0).unwrap();
        let short = SetOptions { ttl: Some(10.0), ..Default::default() };
        if live_first {
            c.hset("h", "live", 0, SetOptions::default()).unwrap();
        }
        for i in 0..5_000 {
            c.hset("h", &format!("f{i}"), i, short).unwrap();
        }
        if !live_first {
            c.hset("h", "live", 0, SetOptions::default()).unwrap();
        }
        c.tick(20.0).unwrap();
        let before = steps();
        for _ in 0..1_000 {
            assert!(c.contains(&"h"));
            assert_eq!(c.ttl(&"h"), Some(f64::INFINITY));
            assert!(c.try_peek(&"h").is_err()); // WRONGTYPE, after finding it live
            assert!(c.hhas(&"h", "live").unwrap());
            assert_eq!(c.httl(&"h", "live").unwrap(), Some(f64::INFINITY));
        }
        assert!(steps() - before < 100, "{} field steps for 5,000 reads", steps() - before);
        // The first listing removes the 5,000 expired fields; later ones see one.
        assert_eq!(c.hlen(&"h").unwrap(), 1);
        assert_eq!(c.stats().entries, 1);
        let before = steps();
        for _ in 0..1_000 {
            assert_eq!(c.hlen(&"h").unwrap(), 1);
        }
        assert!(steps() - before < 3_000, "{} field steps for 1,000 hlen", steps() - before);
        c.check_invariants().unwrap();
    }
    // The witness goes (an `hexpire`) while another field lives: one walk
    // finds that one, and `&self` reads stay O(1) after it.
    let o = Options { sweep_budget: Some(0), ..Default::default() };
    let mut c: TtlCache<&str, u32> = TtlCache::with_options(o, 0.0).unwrap();
    let ttl = |t| SetOptions { ttl: Some(t), ..Default::default() };
    c.hset("h", "keep", 0, ttl(1e9)).unwrap();
    c.hset("h", "w", 0, ttl(2e9)).unwrap();
    for i in 0..5_000 {
        c.hset("h", &format!("f{i}"), i, ttl(10.0)).unwrap();
    }
    c.hexpire(&"h", "w", 5.0, None).unwrap();
    c.tick(20.0).unwrap(); // no sweep: the dead fields stay
    let before = steps();
    for _ in 0..1_000 {
        assert!(c.contains(&"h"));
        assert!(c.hhas(&"h", "keep").unwrap());
    }
    assert!(steps() - before < 2 * 5_002, "{} field steps for 2,000 reads", steps() - before);
}

/// Iteration and snapshots walk the index, which follows the keys held, not
/// the most ever held: 100k keys, then all but 10 gone (deleted, expired,
/// cleared), leave a table of a few dozen buckets (it was 131,072).
#[test]
fn the_index_shrinks_with_the_keys_it_holds() {
    let expire_at = |t| Write { ttl: Some(t), ..Write::default() };
    for how in ["delete", "expire", "clear"] {
        let mut c: TtlCache<u32, u32> = TtlCache::new(0.0);
        for k in 0..100_000 {
            let w = if how == "expire" && k >= 10 { expire_at(5.0) } else { Write::default() };
            c.set(k, k, w).unwrap();
        }
        assert!(c.index.capacity() >= 100_000);
        match how {
            "delete" => (10..100_000).for_each(|k| {
                c.delete(&k);
            }),
            "expire" => {
                c.tick(10.0).unwrap();
                c.purge();
            }
            _ => c.clear(),
        }
        let held = if how == "clear" { 0 } else { 10 };
        assert_eq!(c.len(), held, "{how}");
        assert!(c.index.capacity() <= 4 * held + 64, "{how}: index of {} for {held} keys", c.index.capacity());
        let mut keys: Vec<u32> = c.keys().copied().collect();
        keys.sort_unstable();
        assert_eq!(keys, (0..held as u32).collect::<Vec<_>>(), "{how}");
        assert_eq!(order(&c), (0..held as u32).collect::<Vec<_>>(), "{how}: the snapshot, in insertion order");
        c.check_invariants().unwrap();
    }
}

/// A probe: with every field of a hash expired and unswept, each `&self`
/// read walked them all (1.4 ms at 199k, every call); and an `hset` of a
/// live field behind 199k expired ones walked them per call, removing two.
/// Now the first read marks the hash dead, and the write removes what it
/// walked.
#[test]
fn a_dead_hash_is_walked_once_and_a_write_removes_what_it_walks() {
    use crate::engine::FIELD_STEPS;
    let steps = || FIELD_STEPS.with(|n| n.get());
    let short = SetOptions { ttl: Some(10.0), ..Default::default() };
    let o = Options { sweep_budget: Some(0), ..Default::default() };
    let mut c: TtlCache<&str, u32> = TtlCache::with_options(o, 0.0).unwrap();
    for i in 0..5_000 {
        c.hset("dead", &format!("f{i}"), i, short).unwrap();
    }
    c.hset("live", "live", 0, SetOptions::default()).unwrap();
    for i in 0..5_000 {
        c.hset("live", &format!("f{i}"), i, short).unwrap();
    }
    c.tick(20.0).unwrap(); // sweeps nothing
    let before = steps();
    for _ in 0..1_000 {
        assert!(!c.contains(&"dead"));
        assert_eq!(c.ttl(&"dead"), None);
    }
    assert!(steps() - before < 10_000, "{} field steps for 2,000 reads of a dead hash", steps() - before);
    c.hset("live", "live", 1, SetOptions::default()).unwrap();
    assert_eq!(c.stats().entries, 5_001, "the write took the 5,000 expired fields it walked (the dead hash's stay)");
    let before = steps();
    for i in 0..1_000 {
        c.hset("live", "live", i, SetOptions::default()).unwrap();
    }
    assert!(steps() - before < 5_000, "{} field steps for 1,000 hsets", steps() - before);
    // A write to the dead hash replaces it whole.
    assert!(c.hset("dead", "new", 7, SetOptions::default()).unwrap());
    assert_eq!((c.hlen(&"dead").unwrap(), c.hget(&"dead", "new").unwrap()), (1, Some(&7)));
    c.check_invariants().unwrap();
}
