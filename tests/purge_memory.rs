//! `purge()` runs in bounded extra memory: it removes expired entries in
//! batches, replaying the removal log between them, instead of logging the
//! whole cache at once (12 bytes per entry, plus a `Removed` each for the
//! callback). A counting allocator measures the peak heap during the purge.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::sync::Arc;

use lapse_cache::{Options, SetOptions, TtlCache};

struct Peak;
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to System; only counts.
unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(l.size() as isize, Ordering::Relaxed) + l.size() as isize;
        PEAK.fetch_max(now, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Peak = Peak;

const N: usize = 200_000;

fn filled() -> TtlCache<u64, u64> {
    filled_over(5_000)
}

/// N entries whose ttls spread over `spread` ms, all expired.
fn filled_over(spread: u64) -> TtlCache<u64, u64> {
    let o = Options { sweep_budget: Some(0), ..Default::default() };
    let mut c = TtlCache::with_options(o, 0.0).unwrap();
    for i in 0..N as u64 {
        c.set(i, i, SetOptions { ttl: Some(1.0 + (i % spread) as f64), ..Default::default() }).unwrap();
    }
    c.tick(2.0 * spread as f64).unwrap();
    c
}

/// Peak heap growth while `purge` runs, in bytes.
fn peak_during(c: &mut TtlCache<u64, u64>) -> isize {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    assert_eq!(c.purge(), N as u64);
    PEAK.load(Ordering::Relaxed) - before
}

// One test function: the counters are process-wide, and tests run in threads.
#[test]
fn purge_holds_one_batch_at_a_time() {
    let mut c = filled();
    let grew = peak_during(&mut c);
    assert!(c.is_empty());
    // One purge of everything grew it by 7.3 MB here (the 12 B x 200k log,
    // doubling); in batches by 1.6 MB, the engine's free-slot list (4 B per
    // freed slot, doubling), which a purge cannot avoid.
    assert!(grew < 2_500_000, "purge without a callback grew the heap by {grew} B at its peak");

    let mut c = filled();
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    c.on_remove(move |_| {
        s.fetch_add(1, Ordering::Relaxed);
    });
    let grew = peak_during(&mut c);
    assert_eq!(seen.load(Ordering::Relaxed), N, "the callback hears every expired entry once");
    // Whole-cache: the log plus 200k Removed (about 48 B each, 9.6 MB more).
    assert!(grew < 3_000_000, "purge with a callback grew the heap by {grew} B at its peak");

    // Deadlines spread over 10 s: most of a batch's work goes to wheel
    // cascades, and batches that remove nothing come in runs. Ending the
    // batches after eight such (as once) left over half the cache to one
    // unbatched sweep: 4.2 MB here (the log of 118k removals, doubling).
    let mut c = filled_over(10_000);
    let grew = peak_during(&mut c);
    assert!(c.is_empty());
    assert!(grew < 2_500_000, "purge of spread deadlines grew the heap by {grew} B at its peak");
}
