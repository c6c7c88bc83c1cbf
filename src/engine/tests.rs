use super::*;
use crate::protocol::LOG_GRACED;

fn engine(opts: Options) -> Engine {
    Engine::new(&opts, 0.0).unwrap()
}

fn plain(e: &mut Engine, ttl: f64, idle: f64) -> u32 {
    let c = e.resolve(&Write { ttl: Some(ttl), idle: Some(idle), ..Default::default() }).unwrap();
    e.insert(Kind::Plain, c, 0, false)
}

/// A seeded xorshift: `rand(n)` is below `n`.
fn rng(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    move |n| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}

#[test]
fn deadline_is_the_earlier_of_the_two_clocks() {
    let mut e = engine(Options::default());
    let s = plain(&mut e, 100.0, 30.0);
    assert_eq!(e.ttl_at(s, e.now()), 30.0);
    e.advance(20.0).unwrap();
    e.read(s);
    assert_eq!(e.ttl_at(s, e.now()), 30.0);
    e.advance(80.0).unwrap();
    e.read(s);
    assert_eq!(e.ttl_at(s, e.now()), 20.0, "absolute deadline caps the idle window");
    e.advance(100.0).unwrap();
    assert!(!e.is_live(s));
}

#[test]
fn tick_respects_the_budget_and_resumes() {
    let mut e = engine(Options { sweep_budget: Some(10), ..Default::default() });
    for _ in 0..25 {
        plain(&mut e, 5.0, NEVER);
    }
    assert_eq!(e.tick(10.0).unwrap(), 10);
    assert_eq!(e.tick(10.0).unwrap(), 10);
    assert_eq!(e.tick(10.0).unwrap(), 5);
    assert_eq!(e.tick(10.0).unwrap(), 0);
    assert_eq!(e.keys(), 0);
    assert_eq!(e.log.len(), 25 * 3);
}

#[test]
fn a_tick_after_a_long_pause_removes_a_full_budget() {
    // Deadlines in coarse buckets, all long past when the host ticks again:
    // each slot leaves its bucket as a removal, not as a move down to the
    // cursor's bucket (which spent the work cap on moves: 0, 564, 936 for
    // 1500 entries of 60 s, 0, 0, 0, 0, 160 for 5000 of 10^5 s), so a tick
    // returns a budget while that many are expired, and `while tick() > 0`
    // drains the cache.
    for ttl in [1_000.0, 60_000.0, 1e5, 1e7, 1e12] {
        let mut e = engine(Options::default());
        for i in 0..2_500 {
            plain(&mut e, ttl + f64::from(i % 7), NEVER);
        }
        let t = ttl * 3.0;
        let ticks: Vec<u64> = (0..4).map(|_| e.tick(t).unwrap()).collect();
        assert_eq!(ticks, [1000, 1000, 500, 0], "ttl {ttl}");
        assert_eq!((e.keys(), e.counters.cascaded), (0, 0), "ttl {ttl}");
    }
}

#[test]
fn a_tick_that_cascades_removes_less_so_its_pause_stays_a_budgets() {
    // Deadlines spread over 10 s, ticked every 10 ms: coarse buckets split
    // (cascades) in the same ticks that remove. A removal costs about what
    // two cascades do (and more once the host replays it), so each counts
    // twice against the cap of 2 * budget + 64 pops: a tick that cascades
    // removes less, and none does a full budget of removals plus a cap's
    // worth of cascades.
    let budget = 100;
    let mut e = engine(Options { sweep_budget: Some(budget), ..Default::default() });
    let mut x = 12345u32;
    for _ in 0..100_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        plain(&mut e, 1.0 + f64::from(x >> 8) % 10_000.0, NEVER);
    }
    let (mut t, mut mixed, mut full) = (0.0, 0, 0);
    while e.keys() > 0 {
        t += 10.0;
        let cascaded = e.counters.cascaded;
        let removed = e.tick(t).unwrap();
        let cascaded = e.counters.cascaded - cascaded;
        assert!(cascaded + 2 * removed <= 2 * budget + 65, "at {t}: {cascaded} cascades, {removed} removals");
        mixed += usize::from(cascaded > 0 && removed > 0);
        full += usize::from(cascaded == 0 && removed == budget);
    }
    assert!(mixed > 10 && full > 10, "{mixed} ticks cascaded and removed, {full} removed a full budget");
}

#[test]
fn idle_reads_reschedule_lazily() {
    let mut e = engine(Options::default());
    let s = plain(&mut e, NEVER, 10.0);
    for t in 1..=50 {
        e.advance(t as f64 * 5.0).unwrap();
        e.read(s);
        e.tick(t as f64 * 5.0).unwrap();
        assert!(e.is_live(s));
    }
    assert!(e.counters.rescheduled > 0);
    e.tick(260.0).unwrap();
    assert_eq!(e.keys(), 0);
}

#[test]
fn ticks_do_no_work_for_live_entries() {
    // 100k entries due in a day; a thousand ticks across the first
    // minute touch none of them: no pops, no cascades, no rescans.
    let mut e = engine(Options::default());
    for i in 0..100_000 {
        plain(&mut e, 86_400_000.0 + f64::from(i), NEVER);
    }
    for t in 1..=1000 {
        assert_eq!(e.tick(f64::from(t) * 60.0).unwrap(), 0);
    }
    assert_eq!(e.counters.cascaded + e.counters.rescheduled, 0);
    // Sweeping them costs a bounded number of moves per entry.
    let mut removed = 0;
    let mut t = 86_400_000.0;
    while removed < 100_000 {
        removed += e.tick(t).unwrap();
        t += 50.0;
    }
    assert!(e.counters.cascaded <= 100_000 * 10, "cascaded {}", e.counters.cascaded);
    assert_eq!(e.keys(), 0);
}

#[test]
fn capacity_evicts_and_marks_ghosts() {
    let mut e = engine(Options { max_entries: Some(3), ..Default::default() });
    let a = plain(&mut e, NEVER, NEVER);
    for _ in 0..3 {
        plain(&mut e, NEVER, NEVER);
    }
    assert_eq!(e.entries(), 3);
    assert_eq!(&e.log[..], &[a, Reason::Evicted as u32 | (Kind::Plain as u32) << 4 | LOG_GHOST, NIL]);
}

#[test]
fn a_hash_written_once_and_never_read_is_evicted_as_a_plain_key_is() {
    let mut e = engine(Options { max_entries: Some(3), ..Default::default() });
    let w = Write::default();
    let h = e.hwrite(None, None, &w, 0, false).unwrap().map(|f| e.parent(f)).unwrap();
    assert_eq!(e.policy.freq(h), 0, "its creating write is no use");
    // Plain keys churn through the small queue; the unread hash goes first.
    for _ in 0..3 {
        plain(&mut e, NEVER, NEVER);
    }
    let evicted = e
        .log
        .chunks(3)
        .any(|r| r[0] == h && r[1] & 15 == Reason::Evicted as u32 && (r[1] >> 4) & 7 == Kind::Hash as u32);
    assert!(evicted, "the hash was not evicted: log {:?}", e.log);
    // A second field is a use, as an overwrite of a plain key is.
    let h2 = e.hwrite(None, None, &w, 0, false).unwrap().map(|f| e.parent(f)).unwrap();
    e.hwrite(Some(h2), None, &w, 0, false).unwrap();
    assert_eq!(e.policy.freq(h2), 1);
}

#[test]
fn columns_grow_up_to_max_entries_and_double_past_it() {
    let mut e = engine(Options { max_entries: Some(3000), ..Default::default() });
    for _ in 0..3000 {
        e.try_room(1, 1, 8).unwrap();
        plain(&mut e, NEVER, NEVER);
    }
    // Doubling would have made 4096 slots; the step stops at the bound plus
    // the host's reserved and queued slots.
    assert_eq!(e.capacity(), 3000 + 512);
    // Slots past it (hash keys are not entries) double again, not one by one.
    e.try_room(600, 0, 8).unwrap();
    assert_eq!(e.capacity(), 2 * (3000 + 512));
}

#[test]
fn columns_jump_to_their_bound_at_a_sixteenth_of_it() {
    let mut e = engine(Options { max_entries: Some(100_000), ..Default::default() });
    let mut caps = vec![];
    for _ in 0..20_000 {
        e.try_room(1, 1, 8).unwrap();
        plain(&mut e, NEVER, NEVER);
        if caps.last() != Some(&e.capacity()) {
            caps.push(e.capacity());
        }
    }
    // Doubling to 8192 (past 100,512 / 16), then the bound at once: no
    // 16,384- or 65,536-slot generation left behind in the wasm heap.
    assert_eq!(caps, [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 100_512]);
}

/// Every slot's clocks, as the engine reads them.
fn all_times(e: &Engine) -> Vec<(u64, u64)> {
    (0..e.capacity() as u32).map(|s| e.times(s)).map(|t| (t.abs.to_bits(), t.last.to_bits())).collect()
}

#[test]
fn narrow_clocks_widen_for_a_time_they_cannot_hold_and_keep_every_time() {
    // Whole milliseconds from a whole clock: narrow, 8 bytes of clocks a slot.
    let mut e = Engine::new(&Options { idle: Some(600.0), ..Default::default() }, 1.7e12).unwrap();
    e.try_room(64, 0, 8).unwrap();
    let mem = e.times.memory();
    let a = plain(&mut e, 3_600_000.0, 600.0);
    plain(&mut e, NEVER, 600.0);
    plain(&mut e, 4_294_967_294.0, NEVER); // the last millisecond narrow clocks hold
    e.advance(1.7e12 + 5.0).unwrap();
    e.read(a);
    let before = all_times(&e);
    assert!(!e.times.is_wide());
    // A fractional deadline: the write's check widens the clocks (16 bytes
    // a slot), every time read back as it was.
    let c = e.resolve(&Write { ttl: Some(0.5), ..Default::default() }).unwrap();
    e.columns_for(0, false, &c).unwrap();
    assert!(e.times.is_wide());
    assert_eq!(e.times.memory() - mem, 8 * e.capacity());
    assert_eq!(all_times(&e), before);
    let s = e.insert(Kind::Plain, c, 0, false);
    assert_eq!(e.times(s).abs, 1.7e12 + 5.5);
    e.check_invariants().unwrap();
}

#[test]
fn a_clock_or_deadline_past_the_narrow_range_widens_the_clocks() {
    let last = 4_294_967_294.0; // the last millisecond narrow clocks from 0 hold
    for (i, widen) in [
        |e: &mut Engine| e.advance(4_294_967_295.0).unwrap(),
        |e: &mut Engine| e.advance(4_294_967_294.25).unwrap(),
        |e: &mut Engine| assert!(e.set_expiry(Some(0), 4_294_967_295.0, false, None).unwrap()),
        |e: &mut Engine| assert!(e.set_expiry(Some(0), 0.5, true, None).unwrap()),
    ]
    .into_iter()
    .enumerate()
    {
        let mut e = engine(Options::default());
        e.try_room(8, 0, 8).unwrap();
        plain(&mut e, NEVER, NEVER);
        plain(&mut e, NEVER, 30.0);
        e.advance(last).unwrap();
        assert!(!e.times.is_wide(), "case {i}: the clock at the narrow range's end");
        let before = all_times(&e);
        widen(&mut e);
        assert!(e.times.is_wide(), "case {i}");
        let after = all_times(&e);
        assert_eq!(after[1..], before[1..], "case {i}");
        if i < 2 {
            assert_eq!(after, before, "case {i}");
        }
        e.check_invariants().unwrap();
    }
}

#[test]
fn removing_the_last_field_removes_the_hash() {
    let mut e = engine(Options::default());
    let h = e.insert(Kind::Hash, WriteClocks::NONE, 0, false);
    let c = e.resolve(&Write::default()).unwrap();
    let f1 = e.insert_field(h, c, 0);
    let f2 = e.insert_field(h, c, 0);
    assert_eq!((e.keys(), e.entries()), (1, 2));
    e.remove(f1, Reason::Deleted);
    assert_eq!(e.kind(h), Kind::Hash);
    e.remove(f2, Reason::Deleted);
    assert_eq!(e.kind(h), Kind::Free);
    assert_eq!((e.keys(), e.entries()), (0, 0));
}

#[test]
fn a_read_that_finds_a_live_hash_with_expired_fields_removes_only_those() {
    // `hlen`, `hgetall` and iteration call `expire_found` on the hash when
    // they pass an expired field, with no grace too: the next read must not
    // pass it again.
    let mut e = engine(Options { sweep_budget: Some(0), ..Default::default() });
    let h = e.insert(Kind::Hash, WriteClocks::NONE, 0, false);
    let short = e.resolve(&Write { ttl: Some(10.0), ..Default::default() }).unwrap();
    let long = e.resolve(&Write::default()).unwrap();
    let dead: Vec<u32> = (0..5).map(|_| e.insert_field(h, short, 0)).collect();
    let keep = e.insert_field(h, long, 0);
    e.tick(20.0).unwrap();
    assert_eq!(e.entries(), 6, "sweepBudget 0: nothing swept");
    e.log.clear();
    assert_eq!(e.expire_found(h), 5);
    assert_eq!((e.keys(), e.entries()), (1, 1));
    assert!(e.is_live(h) && e.is_live(keep));
    let mut removed: Vec<u32> = e.log.chunks(LOG_STRIDE).map(|r| r[0]).collect();
    removed.sort_unstable();
    assert_eq!(removed, dead, "the expired fields, and not the hash");
    e.check_invariants().unwrap();
    // Its last field gone, a hash found again goes whole, as before.
    assert!(e.expire_at(keep, 30.0, None));
    e.advance(40.0).unwrap();
    assert_eq!(e.expire_found(h), 1);
    assert_eq!((e.keys(), e.entries(), e.kind(h)), (0, 0, Kind::Free));
}

#[test]
fn grace_keeps_an_expired_slot_until_its_end_then_sweeps_it() {
    let mut e = engine(Options::default());
    e.set_grace(50.0).unwrap();
    let s = plain(&mut e, 100.0, NEVER);
    let other = plain(&mut e, 100.0, NEVER);
    e.set_slot_grace(other, 10.0);
    assert_eq!(e.stale_until(s), 0.0, "live: no stale value");
    assert_eq!(e.tick(100.0).unwrap(), 0, "both enter grace, nothing removed");
    // Two enter-grace records, in no particular order (the wheel's).
    let enter = LOG_ENTER_GRACE | (Kind::Plain as u32) << 4;
    let mut logged: Vec<&[u32]> = e.log.chunks(3).collect();
    logged.sort();
    assert_eq!(logged, [&[s, enter, NIL][..], &[other, enter, NIL][..]]);
    assert_eq!(e.graced_keys(), 2);
    assert!(!e.is_live(s));
    assert_eq!(e.stale_until(s), 150.0);
    assert_eq!(e.stale_until(other), 110.0);
    e.log.clear();
    assert_eq!(e.tick(110.0).unwrap(), 1, "its own grace ends first");
    assert_eq!(&e.log[..], &[other, Reason::Expired as u32 | (Kind::Plain as u32) << 4 | LOG_GRACED, NIL]);
    assert_eq!(e.tick(149.0).unwrap(), 0);
    assert_eq!(e.tick(150.0).unwrap(), 1);
    assert_eq!((e.keys(), e.entries(), e.graced_keys()), (0, 0, 0));
    assert_eq!(e.stale_until(s), 0.0);
}

/// A host that ticks at `next_expiry` reaches a grace's end: it was given
/// the graced slot's past deadline, again and again (a probe: 100 with the
/// clock at 576 and the grace ending at 600).
#[test]
fn next_expiry_of_a_slot_in_grace_is_its_grace_end() {
    let mut e = engine(Options::default());
    e.set_grace(500.0).unwrap();
    let s = plain(&mut e, 100.0, NEVER);
    let mut ticks = 0;
    while e.entries() != 0 {
        let t = e.next_expiry();
        assert!(t <= 600.0, "never late: {t}");
        assert!(ticks == 0 || t > e.now() || t >= 600.0, "no progress: {t} at {}", e.now());
        e.tick(t.max(e.now())).unwrap();
        ticks += 1;
        assert!(ticks < 64, "stuck at {} (next_expiry {})", e.now(), e.next_expiry());
    }
    assert_eq!(e.now(), 600.0);
    assert_eq!(e.kind(s), Kind::Free);
}

#[test]
fn a_graced_slot_leaves_as_expired_whatever_removes_it() {
    let mut e = engine(Options::default());
    e.set_grace(NEVER).unwrap();
    let a = plain(&mut e, 10.0, NEVER);
    let b = plain(&mut e, 10.0, NEVER);
    e.advance(20.0).unwrap();
    assert_eq!(e.expire_found(a), 0, "a read finds it expired: it enters grace");
    assert_eq!(e.stale_until(a), NEVER);
    assert_eq!(e.purge(), 0, "infinite grace: nothing due");
    e.log.clear();
    e.remove(a, Reason::Deleted);
    assert_eq!(e.log[1], Reason::Expired as u32 | (Kind::Plain as u32) << 4 | LOG_GRACED);
    e.log.clear();
    e.clear();
    assert_eq!(e.log[1], Reason::Expired as u32 | (Kind::Plain as u32) << 4 | LOG_GRACED, "b was in grace");
    assert_eq!(e.log[0], b);
    assert_eq!(e.graced_keys(), 0);
    // A freed slot takes the default grace again.
    let c = plain(&mut e, 10.0, NEVER);
    e.set_slot_grace(c, 5.0);
    e.remove(c, Reason::Deleted);
    let d = plain(&mut e, 10.0, NEVER);
    assert_eq!(c, d);
    e.advance(30.0).unwrap();
    assert_eq!(e.stale_until(d), NEVER);
}

#[test]
fn grace_costs_one_more_wheel_visit_per_entry() {
    let mut e = engine(Options { sweep_budget: Some(100), ..Default::default() });
    e.set_grace(1000.0).unwrap();
    for i in 0..1000 {
        plain(&mut e, 10.0 + f64::from(i % 7), NEVER);
    }
    // Entering grace is work, not removal: one tick's work stays capped.
    e.tick(100.0).unwrap();
    assert!(e.log.len() / 3 <= 2 * 100 + 64, "one tick did {} records", e.log.len() / 3);
    let mut removed = 0;
    let mut t = 100.0;
    while removed < 1000 {
        removed += e.tick(t).unwrap();
        t += 100.0;
    }
    assert!(t < 3000.0);
    assert_eq!(e.counters.expired, 1000);
    assert_eq!((e.keys(), e.entries(), e.graced_keys()), (0, 0, 0));
}

#[test]
fn a_field_enters_grace_but_its_hash_deadline_has_none() {
    let mut e = engine(Options::default());
    e.set_grace(100.0).unwrap();
    let h = e.insert(Kind::Hash, WriteClocks::NONE, 0, false);
    let short = e.resolve(&Write { ttl: Some(10.0), ..Default::default() }).unwrap();
    let long = e.resolve(&Write::default()).unwrap();
    let f = e.insert_field(h, short, 0);
    e.insert_field(h, long, 0);
    e.tick(20.0).unwrap();
    assert_eq!(e.stale_until(f), 110.0);
    assert!(e.is_live(h));
    assert!(e.expire_at(h, 30.0, None));
    e.advance(30.0).unwrap();
    assert_eq!(e.stale_until(f), 0.0, "the hash's own deadline passed");
    e.tick(30.0).unwrap();
    assert_eq!((e.keys(), e.entries()), (0, 0));
}

#[test]
fn a_hash_whose_fields_are_all_in_grace_is_in_grace() {
    let mut e = engine(Options::default());
    e.set_grace(100.0).unwrap();
    let h = e.insert(Kind::Hash, WriteClocks::NONE, 0, false);
    let c = e.resolve(&Write { ttl: Some(10.0), ..Default::default() }).unwrap();
    let f1 = e.insert_field(h, c, 0);
    let f2 = e.insert_field(h, c, 0);
    e.advance(20.0).unwrap();
    assert_eq!(e.expire_found(f1), 0);
    assert_eq!(e.graced_keys(), 0, "one field still not in grace");
    assert_eq!(e.expire_found(h), 0, "the other field enters grace");
    assert_eq!(e.graced_keys(), 1);
    let hash_enters = LOG_ENTER_GRACE | (Kind::Hash as u32) << 4;
    assert_eq!(&e.log[e.log.len() - 3..], &[h, hash_enters, NIL]);
    e.log.clear();
    // Reads that find it again do no work: no walk, no wheel moves.
    let (scheduled, cascaded) = (e.scheduled(), e.counters.cascaded);
    assert_eq!(e.expire_found(h), 0);
    assert_eq!(e.expire_found(f1), 0);
    assert!(e.log.is_empty());
    assert_eq!((e.scheduled(), e.counters.cascaded), (scheduled, cascaded));
    e.remove(f2, Reason::Deleted);
    assert_eq!(e.graced_keys(), 1, "f1 still holds the hash in grace");
    // A hash whose last field not in grace is deleted enters grace too.
    let h2 = e.insert(Kind::Hash, WriteClocks::NONE, 0, false);
    let g1 = e.insert_field(h2, c, 0);
    let live = e.resolve(&Write::default()).unwrap();
    let g2 = e.insert_field(h2, live, 0);
    e.advance(40.0).unwrap();
    e.expire_found(g1);
    assert_eq!(e.graced_keys(), 1);
    e.remove(g2, Reason::Deleted);
    assert_eq!(e.graced_keys(), 2);
    e.remove(h2, Reason::Deleted);
    assert_eq!(e.graced_keys(), 1);
    e.tick(110.0).unwrap();
    let hash_leaves = Reason::Expired as u32 | (Kind::Hash as u32) << 4 | LOG_GRACED;
    assert_eq!(&e.log[e.log.len() - 3..], &[h, hash_leaves, NIL]);
    assert_eq!((e.keys(), e.entries(), e.graced_keys()), (0, 0, 0));
}

#[test]
fn an_expired_hash_is_swept_within_the_budget() {
    let mut e = engine(Options { sweep_budget: Some(100), ..Default::default() });
    let h = e.insert(Kind::Hash, WriteClocks::NONE, 0, false);
    let c = e.resolve(&Write::default()).unwrap();
    for _ in 0..250 {
        e.insert_field(h, c, 0);
    }
    assert!(e.expire_at(h, 10.0, None));
    assert_eq!(e.tick(10.0).unwrap(), 100);
    assert_eq!(e.tick(10.0).unwrap(), 100);
    assert_eq!(e.tick(10.0).unwrap(), 50);
    assert_eq!((e.keys(), e.entries()), (0, 0));
}

/// Random writes, field writes, reads that find slots expired, deletes,
/// per-slot grace, clock moves and ticks on an engine with grace on, with
/// the invariant checker (grace counts included) after every step: the
/// native model tests never turn grace on (only the JS host does).
#[test]
fn grace_bookkeeping_holds_under_random_operations() {
    for seed in 1..=20u64 {
        let mut rand = rng(seed);
        let mut e = engine(Options { max_entries: Some(24), ..Default::default() });
        e.set_grace(if seed % 3 == 0 { NEVER } else { 30.0 }).unwrap();
        let mut now = 0.0;
        for step in 0..400 {
            let cap = e.capacity() as u32;
            let s = if cap == 0 { NIL } else { rand(u64::from(cap)) as u32 };
            let used = s != NIL && !matches!(e.kind(s), Kind::Free | Kind::Reserved);
            let ttl = Some(1.0 + rand(40) as f64);
            let w = Write { ttl, ..Default::default() };
            match rand(8) {
                0 | 1 => {
                    let old = (used && matches!(e.kind(s), Kind::Plain)).then_some(s);
                    let _ = e.write(old, &w, 0, false);
                }
                2 => {
                    let (h, f) = match (used, used.then(|| e.kind(s))) {
                        (true, Some(Kind::Hash)) => (Some(s), None),
                        (true, Some(Kind::Field)) => (Some(e.parent(s)), Some(s)),
                        _ => (None, None),
                    };
                    let _ = e.hwrite(h, f, &w, 0, false);
                }
                3 if used => {
                    e.expire_found(s);
                }
                4 if used => {
                    e.remove(s, Reason::Deleted);
                }
                5 if used && matches!(e.kind(s), Kind::Plain | Kind::Field) && e.is_live(s) => {
                    e.set_slot_grace(s, rand(20) as f64);
                }
                6 => {
                    now += rand(15) as f64;
                    e.tick(now).unwrap();
                }
                _ => {
                    now += rand(5) as f64;
                    e.advance(now).unwrap();
                }
            }
            e.log.clear();
            if let Err(m) = e.check_invariants() {
                panic!("seed {seed}, step {step}: {m}");
            }
        }
    }
}

#[test]
fn freed_slots_thread_through_the_wheel_and_come_back_last_freed_first() {
    // The free list lives in the wheel's `next` column: slots freed while
    // others are scheduled (an expiry sweep, a delete, `clear`) must come
    // back, last freed first, and leave the wheel's buckets intact.
    let mut e = engine(Options::default());
    let s: Vec<u32> = (0..6).map(|i| plain(&mut e, 10.0 + f64::from(i), NEVER)).collect();
    e.remove(s[4], Reason::Deleted);
    e.remove(s[1], Reason::Deleted);
    e.check_invariants().unwrap();
    assert_eq!(e.used(), 4);
    assert_eq!(plain(&mut e, 100.0, NEVER), s[1]);
    assert_eq!(plain(&mut e, 100.0, NEVER), s[4]);
    // Scheduled again: linked into buckets, no longer in the free list.
    assert_eq!(plain(&mut e, 100.0, NEVER), 6, "free list empty: a new slot");
    e.check_invariants().unwrap();
    // A sweep frees slots in deadline order; they come back in reverse.
    assert_eq!(e.tick(13.5).unwrap(), 3); // s[0], s[2], s[3]
    e.check_invariants().unwrap();
    assert_eq!(e.scheduled(), 4);
    let again: Vec<u32> = (0..3).map(|_| plain(&mut e, 100.0, NEVER)).collect();
    assert_eq!(again, vec![s[3], s[2], s[0]]);
    e.clear();
    e.check_invariants().unwrap();
    assert_eq!(e.used(), 0);
    let after: Vec<u32> = (0..8).map(|_| plain(&mut e, 100.0, NEVER)).collect();
    let mut sorted = after.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..8).collect::<Vec<u32>>(), "every freed slot reused once, none past high");
    e.check_invariants().unwrap();
}

#[test]
fn weight_and_family_columns_switch_on_mid_life_and_keep_up_with_growth() {
    // Plain weightless entries need neither column; the first weight and
    // the first hash turn one on, sized to every slot, and growth keeps
    // them as long as the others (else a later slot indexes past them).
    let mut e = engine(Options { max_bytes: Some(1000), ..Default::default() });
    let w = Write::default();
    let plains: Vec<u32> = (0..10).map(|_| e.write(None, &w, 0, false).unwrap().unwrap()).collect();
    assert!(e.weight.is_empty() && e.family.is_empty(), "no weight, no hash: no columns");
    assert_eq!(e.parent(plains[3]), NIL);
    // A weighted overwrite turns `weight` on mid-life.
    e.write(Some(plains[3]), &w, 7, false).unwrap();
    assert_eq!(e.weight.len(), e.capacity());
    assert_eq!((e.weight(plains[3]), e.weight(plains[4]), e.bytes()), (7, 0, 7));
    e.check_invariants().unwrap();
    // A hash turns `family` on; its weight is its fields'.
    let f = e.hwrite(None, None, &w, 5, false).unwrap().unwrap();
    let h = e.parent(f);
    assert_eq!(e.family.len(), e.capacity());
    assert_eq!(e.parent(plains[0]), NIL, "plain entries keep no family");
    assert_eq!((e.weight(h), e.bytes()), (5, 12));
    // Grow well past the capacity both columns were switched on at.
    let cap = e.capacity();
    for i in 0..cap * 3 {
        e.try_room(1, 1, 8).unwrap();
        e.write(None, &w, (i % 2) as u32, false).unwrap();
    }
    assert!(e.capacity() > cap);
    assert_eq!((e.weight.len(), e.family.len()), (e.capacity(), e.capacity()));
    e.check_invariants().unwrap();
    // Removing the weighed slots returns the bytes; the column stays on.
    e.remove(plains[3], Reason::Deleted);
    e.remove(h, Reason::Deleted);
    assert_eq!(e.bytes(), (cap * 3 / 2) as u64);
    e.check_invariants().unwrap();
}

#[test]
fn try_columns_turns_on_only_what_is_asked() {
    let mut e = engine(Options::default());
    e.try_room(4, 0, 8).unwrap();
    e.try_columns(false, false, NEVER).unwrap();
    assert!(e.weight.is_empty() && e.family.is_empty() && e.idles.is_empty());
    e.try_columns(false, false, 5.0).unwrap();
    assert_eq!(e.idles.len(), e.capacity());
    let mut e = engine(Options::default());
    e.try_room(4, 0, 8).unwrap();
    e.try_columns(true, false, NEVER).unwrap();
    assert_eq!((e.weight.len(), e.family.len()), (e.capacity(), 0));
    e.try_columns(false, true, NEVER).unwrap();
    assert_eq!(e.family.len(), e.capacity());
    // A hash's own idle is NEVER, the default here: no idle column (a cache
    // with hashes pays for it only if its default is finite).
    assert!(e.idles.is_empty());
    assert!(e.family.iter().all(|&v| v == NIL) && e.weight.iter().all(|&v| v == 0));
    e.check_invariants().unwrap();
}

#[test]
fn the_idle_column_turns_on_only_for_a_window_other_than_the_default() {
    let mut e = engine(Options { idle: Some(50.0), ..Default::default() });
    let w = Write::default();
    let a = e.write(None, &w, 0, false).unwrap().unwrap();
    let b = e.write(None, &Write { ttl: Some(500.0), ..w }, 0, false).unwrap().unwrap();
    assert!(e.idles.is_empty(), "every slot has the default window");
    assert_eq!(e.times(a).idle, 50.0);
    e.advance(30.0).unwrap();
    e.read(a);
    // Mid-life, one write with its own window turns the column on, filled
    // with the default for the others.
    let c = e.write(None, &Write { idle: Some(10.0), ..w }, 0, false).unwrap().unwrap();
    assert_eq!(e.idles.len(), e.capacity());
    assert_eq!((e.times(a).idle, e.times(b).idle, e.times(c).idle), (50.0, 50.0, 10.0));
    e.check_invariants().unwrap();
    // Each slot keeps its own window: `c` ends at 40, `b` (unread) at 50,
    // `a` (read at 30) at 80.
    e.tick(40.0).unwrap();
    assert!(!e.is_live(c) && e.is_live(b) && e.is_live(a));
    e.tick(50.0).unwrap();
    assert!(!e.is_live(b) && e.is_live(a));
    // Grown columns keep the default for new slots.
    for _ in 0..200 {
        e.write(None, &w, 0, false).unwrap();
    }
    assert_eq!(e.idles.len(), e.capacity());
    let d = e.write(None, &w, 0, false).unwrap().unwrap();
    assert_eq!(e.ttl_at(d, e.now()), 50.0);
    // persist drops the window through the column.
    assert!(e.persist(a));
    assert_eq!((e.times(a).idle, e.ttl_at(a, e.now())), (NEVER, NEVER));
    e.check_invariants().unwrap();
    // A hash (idle NEVER) in a cache with a finite default also needs it.
    let mut e = engine(Options { idle: Some(50.0), ..Default::default() });
    e.hwrite(None, None, &w, 0, false).unwrap();
    assert_eq!(e.idles.len(), e.capacity());
    e.check_invariants().unwrap();
}

/// Runs `f` on `e` the way the wasm binding's host does: while the call
/// stops early (`cut`), collects its log and makes it again (`f` is told it
/// is made again). The log never passes `log_cap`. Returns each chunk's
/// result and the whole log.
fn in_chunks<T>(e: &mut Engine, mut f: impl FnMut(&mut Engine, bool) -> T) -> (Vec<T>, Vec<u32>) {
    let (mut out, mut log, mut again) = (Vec::new(), Vec::new(), false);
    loop {
        e.log.clear();
        e.cut = false;
        out.push(f(e, again));
        assert!(e.log.len() <= e.log_cap, "the log grew past its cap: {} > {}", e.log.len(), e.log_cap);
        log.extend_from_slice(&e.log);
        if !e.cut {
            return (out, log);
        }
        // Each chunk does some of the work.
        assert!(!e.log.is_empty(), "a chunk made no progress");
        again = true;
    }
}

/// The same call on an engine with an unbounded log (`a`) and, in chunks, on
/// one with a bounded log (`b`): the results and the whole logs.
#[allow(clippy::type_complexity)]
fn on_both(
    a: &mut Engine,
    b: &mut Engine,
    f: &mut dyn FnMut(&mut Engine, bool) -> u64,
) -> (u64, Vec<u64>, Vec<u32>, Vec<u32>) {
    a.log.clear();
    let ra = f(a, false);
    let (rb, log) = in_chunks(b, |e, again| f(e, again));
    (ra, rb, core::mem::take(&mut a.log), log)
}

/// The removal log in chunks (the wasm binding's bounded log): random
/// operations, several of which remove many slots at once (hashes of many
/// fields, `maxBytes` writes, purges, clears, ticks), on two engines, one
/// with a log that holds one step's records, made again while they stop
/// early, the other with an unbounded log. The records, the results and the
/// engines' states are the same, and the invariants hold after each call.
#[test]
fn calls_that_stop_for_a_full_log_and_are_made_again_do_what_one_call_does() {
    let mut stopped = [0u32; 12];
    for seed in 1..=40u64 {
        let mut rand = rng(seed);
        let opts = Options {
            max_entries: Some(40),
            max_bytes: (seed % 2 == 0).then_some(120),
            sweep_budget: Some(1 + seed % 7),
            ..Default::default()
        };
        let has_bytes = opts.max_bytes.is_some();
        let (mut a, mut b) = (engine(opts.clone()), engine(opts));
        if seed % 3 == 0 {
            a.set_grace(25.0).unwrap();
            b.set_grace(25.0).unwrap();
        }
        // One step's two records, or a little more.
        b.log_cap = LOG_STRIDE * (2 + (seed as usize % 3));
        let mut now = 0.0;
        for step in 0..300 {
            let cap = a.capacity() as u32;
            let s = if cap == 0 { NIL } else { rand(u64::from(cap)) as u32 };
            let used = s != NIL && !matches!(a.kind(s), Kind::Free | Kind::Reserved);
            let w = Write { ttl: Some(1.0 + rand(60) as f64), ..Default::default() };
            let wt = if has_bytes { rand(50) as u32 } else { 0 };
            let op = rand(12);
            let live = used && a.is_live(s);
            let kind = if used { a.kind(s) } else { Kind::Free };
            let parent = if kind == Kind::Field { a.parent(s) } else { NIL };
            // A write's result is its last chunk's; counts are summed.
            let mut last = false;
            let mut both = |f: &mut dyn FnMut(&mut Engine, bool) -> u64| on_both(&mut a, &mut b, f);
            let (ra, rb, la, lb) = match op {
                0..=2 => {
                    last = true;
                    let old = (kind == Kind::Plain || kind == Kind::Hash && !live).then_some(s);
                    both(&mut |e, _| match e.write(old, &w, wt, false) {
                        Ok(Some(s)) => u64::from(s),
                        Ok(None) => u64::from(NIL),
                        Err(_) => 0,
                    })
                }
                3..=5 => {
                    last = true;
                    let (h, f) = match kind {
                        Kind::Hash => (Some(s), None),
                        Kind::Field => (Some(parent), Some(s)),
                        _ => (None, None),
                    };
                    both(&mut |e, _| match e.hwrite(h, f, &w, wt, false) {
                        Ok(Some(s)) => u64::from(s),
                        Ok(None) => u64::from(NIL),
                        Err(_) => 0,
                    })
                }
                6 if used => both(&mut |e, _| e.expire_found(s)),
                7 if used => both(&mut |e, _| e.remove(s, Reason::Deleted)),
                8 if live && kind != Kind::Field => {
                    let at = now + rand(3) as f64;
                    last = true;
                    both(&mut |e, _| u64::from(e.set_expiry(Some(s), at, false, None).unwrap()))
                }
                9 => {
                    now += rand(30) as f64;
                    let budget = 1 + seed % 7;
                    let mut left = budget;
                    both(&mut |e, again| {
                        // The binding's `tick`: made again, what is left of the budget.
                        let n = if again { e.purge_some(left) } else { e.tick(now).unwrap() };
                        left = if again { left } else { budget } - n;
                        n
                    })
                }
                10 if step % 50 == 0 => both(&mut |e, _| {
                    e.clear();
                    0
                }),
                _ => {
                    now += rand(5) as f64;
                    both(&mut |e, _| {
                        e.advance(now).unwrap();
                        e.purge()
                    })
                }
            };
            if rb.len() > 1 {
                stopped[op as usize] += 1;
            }
            let sum: u64 = if last { *rb.last().unwrap() } else { rb.iter().sum() };
            assert_eq!(sum, ra, "seed {seed}, step {step}, op {op}: results");
            assert_eq!(lb, la, "seed {seed}, step {step}, op {op}: records");
            assert_eq!(
                (b.entries(), b.keys(), b.bytes(), b.used(), b.counters.evicted, b.counters.expired),
                (a.entries(), a.keys(), a.bytes(), a.used(), a.counters.evicted, a.counters.expired),
                "seed {seed}, step {step}, op {op}: state"
            );
            for e in [&a, &b] {
                if let Err(m) = e.check_invariants() {
                    panic!("seed {seed}, step {step}, op {op}: {m}");
                }
            }
        }
    }
    // Every kind of call stopped early, many times.
    assert!(stopped.iter().all(|&n| n >= 5), "calls stopped early, by op: {stopped:?}");
}

/// `swap_in` (the JS host's write of a new key at capacity, in its victim's
/// slot) against `write` with the cache's own clocks, on two engines driven
/// alike: reads, new keys (some returning ghosts, straight to main), writes
/// whose own ttl outlives or undercuts the default (so a victim's slot is
/// kept in its wheel bucket or rescheduled), deletes, clock moves with and
/// without a tick (an unswept due entry, or a cache below its bound, makes
/// `swap_in` decline). Keys are numbered, so the engines may number slots
/// apart (a sweep frees due slots in wheel order). Where `swap_in` writes,
/// it evicts the key `write` evicts, with the same ghost bit, into that
/// key's slot; where it declines it has changed nothing, and `write` does
/// the write. Eviction order, clocks, read counts and counters stay the
/// same, invariants hold, and `next_expiry` is never after a deadline.
#[test]
fn swap_in_writes_at_capacity_what_write_does() {
    let (mut swapped, mut declined, mut rescheduled) = (0, 0, 0);
    for seed in 1..=24u64 {
        let mut rand = rng(seed);
        let opts = Options {
            max_entries: Some(8 + seed % 40),
            // (Under a millisecond: a new key's bucket is the clock's own.)
            ttl: Some(if seed % 6 == 0 { 0.5 } else { 1000.0 }),
            idle: (seed % 2 == 0).then_some(300.0),
            ..Default::default()
        };
        let (mut a, mut b) = (engine(opts.clone()), engine(opts));
        // Slot -> key, per engine.
        let (mut ka, mut kb) = (Vec::<u64>::new(), Vec::<u64>::new());
        let track = |keys: &mut Vec<u64>, s: u32, k: u64| {
            if keys.len() <= s as usize {
                keys.resize(s as usize + 1, 0);
            }
            keys[s as usize] = k;
        };
        let slot_of = |e: &Engine, keys: &[u64], k: u64| {
            (0..keys.len() as u32).find(|&s| keys[s as usize] == k && matches!(e.kind(s), Kind::Plain))
        };
        let mut next_key = 1u64;
        let mut now = 0.0;
        for step in 0..600 {
            a.log.clear();
            b.log.clear();
            let k = next_key;
            let live: Vec<u32> =
                (0..a.capacity() as u32).filter(|&s| a.kind(s) == Kind::Plain && a.is_live(s)).collect();
            let pick = (!live.is_empty()).then(|| ka[live[rand(live.len() as u64) as usize] as usize]);
            match rand(16) {
                0..=8 => {
                    next_key += 1;
                    let to_main = rand(4) == 0;
                    let r = a.swap_in(to_main);
                    let sb = b.write(None, &Write::default(), 0, to_main).unwrap();
                    b.reclaim(u64::MAX);
                    if r == NIL {
                        declined += 1;
                        let sa = a.write(None, &Write::default(), 0, to_main).unwrap();
                        a.reclaim(u64::MAX);
                        if let Some(s) = sa {
                            track(&mut ka, s, k);
                        }
                    } else {
                        swapped += 1;
                        let s = r & !SWAP_GHOST;
                        assert!(a.log.is_empty(), "seed {seed}, step {step}: swap_in logged");
                        let recs: Vec<LogRecord> = LogRecord::all(&b.log).collect();
                        assert_eq!(recs.len(), 1, "seed {seed}, step {step}: write removed {recs:?}");
                        assert_eq!(recs[0].reason, Reason::Evicted as u8);
                        assert_eq!(recs[0].ghost, r & SWAP_GHOST != 0, "seed {seed}, step {step}: ghost bit");
                        assert_eq!(ka[s as usize], kb[recs[0].slot as usize], "seed {seed}, step {step}: victim");
                        assert_eq!(sb, Some(recs[0].slot), "seed {seed}, step {step}: write took the victim's slot");
                        track(&mut ka, s, k);
                    }
                    if let Some(s) = sb {
                        track(&mut kb, s, k);
                    }
                }
                9 | 10 if pick.is_some() => {
                    let k = pick.unwrap();
                    for (e, keys) in [(&mut a, &ka), (&mut b, &kb)] {
                        let s = slot_of(e, keys, k).unwrap();
                        e.read(s);
                    }
                }
                11 => {
                    // A per-write ttl: a key that outlives the default, or one due sooner.
                    next_key += 1;
                    let w = Write {
                        ttl: Some(if rand(2) == 0 { 5000.0 } else { 1.0 + rand(200) as f64 }),
                        ..Default::default()
                    };
                    for (e, keys) in [(&mut a, &mut ka), (&mut b, &mut kb)] {
                        if let Some(s) = e.write(None, &w, 0, false).unwrap() {
                            track(keys, s, k);
                        }
                        e.reclaim(u64::MAX);
                    }
                }
                12 if pick.is_some() && rand(4) == 0 => {
                    let k = pick.unwrap();
                    for (e, keys) in [(&mut a, &ka), (&mut b, &kb)] {
                        let s = slot_of(e, keys, k).unwrap();
                        e.remove(s, Reason::Deleted);
                    }
                }
                13 => {
                    now += rand(20) as f64;
                    a.advance(now).unwrap();
                    b.advance(now).unwrap();
                }
                _ => {
                    now += rand(100) as f64;
                    a.tick(now).unwrap();
                    b.tick(now).unwrap();
                }
            }
            // The same keys, in the same eviction order, with the same clocks and reads.
            let view = |e: &Engine, keys: &[u64]| -> Vec<(u64, u64, u64, u8)> {
                e.policy
                    .check()
                    .unwrap()
                    .1
                    .into_iter()
                    .map(|s| {
                        let t = e.times.get(s);
                        (keys[s as usize], t.abs.to_bits(), t.last.to_bits(), e.policy.bits[s as usize])
                    })
                    .collect()
            };
            assert_eq!(view(&a, &ka), view(&b, &kb), "seed {seed}, step {step}: queues");
            let c = |e: &Engine| {
                (e.entries(), e.counters.evicted, e.counters.inserted, e.counters.expired, e.counters.deleted)
            };
            assert_eq!(c(&a), c(&b), "seed {seed}, step {step}: counts");
            let first = (0..a.capacity() as u32)
                .filter(|&s| a.kind(s) == Kind::Plain)
                .map(|s| a.deadline_of(s))
                .fold(NEVER, f64::min);
            assert!(a.next_expiry() <= first, "seed {seed}, step {step}: next_expiry after a deadline");
            for e in [&a, &b] {
                if let Err(m) = e.check_invariants() {
                    panic!("seed {seed}, step {step}: {m}");
                }
            }
            rescheduled += a.counters.rescheduled;
        }
    }
    assert!(swapped > 3000 && declined > 1000, "{swapped} writes swapped in, {declined} declined");
    assert!(rescheduled > 0, "no slot kept its bucket and was rescheduled lazily");
}

/// A read moves an idle deadline later without moving the slot in the
/// wheel: `next_expiry` must not report that deadline while an earlier one
/// waits in a later bucket (it reported 70 here, past `y`'s 60).
#[test]
fn next_expiry_is_never_late_after_a_read_moves_a_deadline() {
    let mut e = engine(Options { idle: Some(50.0), ..Default::default() });
    let x = plain(&mut e, NEVER, 50.0);
    let y = plain(&mut e, 60.0, NEVER);
    e.advance(20.0).unwrap();
    e.tick(20.0).unwrap();
    e.read(x);
    let t = e.next_expiry();
    assert!(t <= 60.0, "next_expiry {t}");
    // A tick there still makes progress: the bucket `x` waited in fires.
    e.tick(t).unwrap();
    assert!(e.is_live(x) && e.is_live(y));
    assert!(e.next_expiry() > t && e.next_expiry() <= 60.0);
    e.tick(60.0).unwrap();
    assert!(!e.is_live(y) && e.is_live(x));
}

#[test]
fn a_cache_without_a_bound_links_only_the_keys_the_wheel_does_not_hold() {
    // Its removals then write no queue neighbour's links; yet `clear` still
    // finds every key (parked, or in the wheel: a field stands for its hash)
    // and `smallQueue` still counts the keys written.
    let mut e = engine(Options::default());
    e.set_grace(f64::INFINITY).unwrap();
    let timed: Vec<u32> = (0..20).map(|_| plain(&mut e, 100.0, NEVER)).collect();
    let forever = plain(&mut e, NEVER, NEVER);
    let persisted = plain(&mut e, 50.0, NEVER);
    assert!(e.persist(persisted));
    let c = e.resolve(&Write { ttl: Some(30.0), ..Default::default() }).unwrap();
    let h = e.insert(Kind::Hash, WriteClocks::NONE, 0, false);
    e.insert_field(h, c, 0);
    e.check_invariants().unwrap();
    let (queued, mut linked) = e.policy.check().unwrap();
    linked.sort_unstable();
    assert_eq!(linked, vec![forever, persisted, h], "only the keys with no deadline are linked");
    assert_eq!(queued.len(), 23);
    assert_eq!(e.small_len(), 23, "the small queue's length counts every key written");
    // Expired with a grace that never ends: it leaves the wheel, so it is
    // linked too.
    e.advance(200.0).unwrap();
    assert_eq!(e.expire_found(timed[0]), 0);
    e.check_invariants().unwrap();
    assert!(e.policy.check().unwrap().1.contains(&timed[0]));
    e.clear();
    e.check_invariants().unwrap();
    assert_eq!((e.keys(), e.entries(), e.small_len()), (0, 0, 0));
    let gone = e.log.chunks(LOG_STRIDE).map(|r| r[0]).collect::<alloc::collections::BTreeSet<_>>();
    assert!(timed.iter().chain([&forever, &persisted, &h]).all(|s| gone.contains(s)), "clear left a key");
}

#[test]
fn a_bound_set_after_restored_keys_queues_them_as_if_set_first() {
    // The JS restore sets the bound last (its columns grow with the keys):
    // the keys restored without one were only counted, or parked.
    let restore = |bound_first: bool| {
        let mut e = engine(Options::default());
        if bound_first {
            e.set_max_entries(Some(8));
        }
        let t = |abs: f64| Times { abs, last: 0.0, idle: NEVER };
        for abs in [50.0, NEVER, 70.0, 60.0, NEVER] {
            e.try_room(2, 0, 4).unwrap();
            e.try_columns(false, true, NEVER).unwrap();
            let h = e.restore_slot(if abs == 70.0 { Kind::Hash } else { Kind::Plain }, NIL, t(abs), 0);
            if abs == 70.0 {
                e.restore_slot(Kind::Field, h, t(abs), 0);
            }
        }
        if !bound_first {
            e.set_max_entries(Some(8));
        }
        e.check_invariants().unwrap();
        let victims: Vec<u32> = core::iter::from_fn(|| e.policy.evict(None).map(|v| v.slot)).collect();
        victims
    };
    let first = restore(true);
    assert_eq!(first.len(), 5);
    assert_eq!(restore(false), first);
}

#[test]
fn a_sweep_stopped_by_its_cap_reaches_an_expired_slot_behind_same_tick_ones() {
    // More live slots than a sweep's work cap (2 x budget + 64 pops) in the
    // clock's own tick, deadlines a fraction of a millisecond ahead: each
    // sweep hands them out and puts them back. Put back in front, they hid
    // the expired one behind them from every later sweep.
    let mut e = engine(Options { sweep_budget: Some(1), ..Default::default() });
    let x = plain(&mut e, 0.1, NEVER);
    for _ in 0..100 {
        plain(&mut e, 0.5, NEVER);
    }
    let mut ticks = 0;
    while e.entries() == 101 && ticks < 10 {
        e.tick(0.2).unwrap();
        ticks += 1;
    }
    assert_eq!(e.entries(), 100, "the expired slot is still there after {ticks} ticks");
    assert_eq!(e.kind(x), Kind::Free);
    e.check_invariants().unwrap();
}

#[test]
fn next_expiry_stops_at_a_slot_due_at_its_buckets_start_and_stays_exact() {
    // A bucket ahead of the cursor: its slots are due at its start or
    // later, so the walk may stop at one due at the start.
    let mut e = engine(Options::default());
    let later: Vec<u32> = (0..100).map(|_| plain(&mut e, 5.5, NEVER)).collect();
    let exact = plain(&mut e, 5.0, NEVER);
    assert_eq!(e.next_expiry(), 5.0, "the walk finds the one due at the start");
    assert!(later.iter().all(|&s| e.is_live(s)) && e.is_live(exact));
    // Overdue slots share the cursor's bucket with any deadline: the walk
    // there stays whole, and the answer is still the earliest.
    let mut f = engine(Options { sweep_budget: Some(1), ..Default::default() });
    for _ in 0..50 {
        plain(&mut f, 3.0, NEVER);
    }
    plain(&mut f, 2.0, NEVER);
    f.tick(10.0).unwrap(); // removes one; the rest are overdue in the cursor's bucket
    let t = f.next_expiry();
    assert!(t <= 3.0, "next_expiry {t} after an overdue sweep");
    f.check_invariants().unwrap();
    e.check_invariants().unwrap();
}

#[test]
fn next_expiry_over_a_backlog_is_the_cursor_buckets_floor_and_never_late() {
    // 5,000 slots due at 5 (ticks 5), swept 10 at a time: the rest wait in
    // the cursor's bucket. The answer is at or before 5 without a walk of
    // them (one overdue slot found, the bucket's floor returned).
    let mut e = engine(Options { sweep_budget: Some(10), ..Default::default() });
    let live = plain(&mut e, 1000.0, NEVER);
    for _ in 0..5000 {
        plain(&mut e, 5.0, NEVER);
    }
    e.tick(10.0).unwrap();
    let t = e.next_expiry();
    assert!(t <= 5.0, "next_expiry {t} with overdue slots due at 5");
    // Drained, the answer is the live slot's again (its coarse bucket's
    // start: early, but past the backlog's floor).
    while e.tick(10.0).unwrap() > 0 {
        assert!(e.next_expiry() <= 5.0 || e.entries() == 1);
    }
    let t = e.next_expiry();
    assert!(e.entries() == 1 && t > 10.0 && t <= 1000.0, "next_expiry {t} with one slot due at 1000");
    assert!(e.is_live(live));
    // Overdue slots with earlier deadlines than the one found first: the
    // floor covers them (the cursor's bucket holds any deadline down to it).
    let mut f = engine(Options { sweep_budget: Some(1), ..Default::default() });
    for d in [9.0, 2.0, 7.0, 3.0, 8.0] {
        plain(&mut f, d, NEVER);
    }
    f.tick(20.0).unwrap();
    let t = f.next_expiry();
    assert!(t <= 3.0, "next_expiry {t}: slots due at 3 and later are held");
    // A slot due later in the cursor's own tick (none overdue): exact, not
    // an earlier time a host would spin on.
    let mut g = engine(Options::default());
    g.tick(10.2).unwrap();
    let x = plain(&mut g, 0.5, NEVER); // due at 10.7, tick 10: the cursor's
    assert_eq!(g.next_expiry(), 10.7);
    assert_eq!(g.tick(10.2).unwrap(), 0);
    assert_eq!(g.next_expiry(), 10.7);
    assert!(g.is_live(x));
    for x in [&e, &f, &g] {
        x.check_invariants().unwrap();
    }
}

#[test]
fn a_purge_ends_when_a_grace_ends_later_in_the_clocks_own_tick() {
    // Deadline 0.5, grace 10: the grace ends at 10.5, in tick 10. At 10 a
    // purge found the slot due, kept it in grace, rescheduled it at tick
    // 10 and found it again, for good.
    for ttl in [0.5, 0.25, 1.5] {
        let mut e = engine(Options::default());
        e.set_grace(10.0).unwrap();
        let s = plain(&mut e, ttl, NEVER);
        e.tick(10.0).unwrap();
        let end = ttl + 10.0;
        if end > 10.0 && end < 11.0 {
            assert_eq!(e.purge(), 0, "ttl {ttl}: in grace until {end}");
            assert_eq!(e.stale_until(s), end);
            assert_eq!(e.tick(10.0).unwrap(), 0);
        }
        e.tick(12.0).unwrap();
        assert_eq!((e.purge(), e.entries()), (0, 0), "ttl {ttl}: the grace ended and the slot went");
        e.check_invariants().unwrap();
    }
}
