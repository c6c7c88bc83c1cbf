//! The ghost list holds no key copies (issue 19): S3-FIFO remembers keys
//! evicted unread by their 32-bit hash only. A counting allocator measures
//! the heap a cache at capacity holds, with a full ghost list, per entry:
//! with long keys, one more copy of each evicted key would show.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use lapse_cache::{Options, SetOptions, TtlCache};

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to System; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

const KEY: usize = 256;
const CAP: usize = 1000;

fn key(i: usize) -> String {
    let mut k = format!("{i:08}");
    k.push_str(&"k".repeat(KEY - 8));
    k.shrink_to_fit();
    k
}

// One test function: the counter is process-wide, and tests run in threads.
#[test]
fn a_full_ghost_list_costs_no_key_copies() {
    let before = LIVE.load(Ordering::Relaxed);
    let o = Options { max_entries: Some(CAP as u64), ..Default::default() };
    let mut c: TtlCache<String, u64> = TtlCache::with_options(o, 0.0).unwrap();
    // Twenty times the capacity in keys never read: every eviction takes an
    // unread key from the small queue, a ghost, until the list is full.
    for i in 0..20 * CAP {
        c.set(key(i), i as u64, SetOptions::default()).unwrap();
    }
    assert_eq!(c.len(), CAP);
    assert_eq!(c.stats().counters.evicted, 19 * CAP as u64);
    let per_entry = (LIVE.load(Ordering::Relaxed) - before) as usize / CAP;
    // Each held entry owns its 256-byte key and about 150 B of item, index,
    // engine columns and ghost; a ghost list of keys (one copy per ghost,
    // as many ghosts as entries) would add 256 B more.
    assert!(per_entry >= KEY, "{per_entry} B per entry: the held keys alone take {KEY}");
    assert!(per_entry < 2 * KEY, "{per_entry} B per entry with a full ghost list: keys copied?");
}
