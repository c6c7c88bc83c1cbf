//! lapse-cache against moka 0.12 (sync), mini-moka 0.10 (unsync),
//! quick_cache 0.7 (unsync) and lru 0.19, in one process.
//!
//! `cargo run --release -- [--n 100000] [--reps 5] [--only insert,get]`
//!
//! Each workload runs `reps` times per cache, the caches interleaved within
//! a repetition (so a noisy neighbour hits them all alike); it prints the
//! median ns per operation, and bytes per entry from a counting allocator
//! (live heap bytes the cache holds after the run, over its entries).
//!
//! Times are this thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not wall
//! time: on a shared machine the time the process waits for a core would
//! otherwise land on whichever cache ran then (`--wall` for wall time).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hash::Hash;
use std::hint::black_box;
use std::num::NonZeroUsize;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

use lapse_cache::{Options, SetOptions, TtlCache};

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);
/// The highest `LIVE` since the last [`reset_peak`].
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grew(by: isize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn reset_peak() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

// SAFETY: forwards to System and only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        grew(l.size() as isize);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        grew(n as isize - l.size() as isize);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

static WALL: AtomicBool = AtomicBool::new(false);

/// A start time: this thread's CPU time, or wall time with `--wall`.
struct Clock(Instant, u128);
impl Clock {
    fn now() -> Self {
        Clock(Instant::now(), cpu_ns())
    }
    fn elapsed_ns(&self) -> f64 {
        if WALL.load(Ordering::Relaxed) {
            self.0.elapsed().as_nanos() as f64
        } else {
            (cpu_ns() - self.1) as f64
        }
    }
}

fn cpu_ns() -> u128 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and a valid out-pointer.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(r, 0, "clock_gettime");
    t.tv_sec as u128 * 1_000_000_000 + t.tv_nsec as u128
}

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// xorshift64*: deterministic, cheap, good enough for key choice.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// Zipf(s = 1) over 0..n by inverse CDF.
fn zipf(n: usize, count: usize, seed: u64) -> Vec<u64> {
    let mut cdf = Vec::with_capacity(n);
    let mut acc = 0.0;
    for i in 1..=n {
        acc += 1.0 / i as f64;
        cdf.push(acc);
    }
    let mut r = Rng(seed);
    (0..count)
        .map(|_| {
            let u = (r.next() >> 11) as f64 / (1u64 << 53) as f64 * acc;
            cdf.partition_point(|&c| c < u) as u64
        })
        .collect()
}

/// The operations every subject offers, with the value type fixed at u64.
trait Subject<K> {
    const NAME: &'static str;
    fn make(cap: usize) -> Self;
    fn put(&mut self, k: K, v: u64);
    fn fetch(&mut self, k: &K) -> Option<u64>;
}

struct Lapse<K>(TtlCache<K, u64>);
impl<K: Hash + Eq + Clone> Subject<K> for Lapse<K> {
    const NAME: &'static str = "lapse-cache";
    fn make(cap: usize) -> Self {
        let o = Options { max_entries: Some(cap as u64), ..Default::default() };
        Lapse(TtlCache::with_options(o, 0.0).unwrap())
    }
    fn put(&mut self, k: K, v: u64) {
        self.0.set(k, v, SetOptions::default()).unwrap();
    }
    fn fetch(&mut self, k: &K) -> Option<u64> {
        self.0.get(k).copied()
    }
}

struct Moka<K: Hash + Eq + Send + Sync + 'static>(moka::sync::Cache<K, u64>);
impl<K: Hash + Eq + Clone + Send + Sync + 'static> Subject<K> for Moka<K> {
    const NAME: &'static str = "moka 0.12 sync";
    fn make(cap: usize) -> Self {
        Moka(moka::sync::Cache::new(cap as u64))
    }
    fn put(&mut self, k: K, v: u64) {
        self.0.insert(k, v);
    }
    fn fetch(&mut self, k: &K) -> Option<u64> {
        self.0.get(k)
    }
}

struct MiniMoka<K: Hash + Eq>(mini_moka::unsync::Cache<K, u64>);
impl<K: Hash + Eq + Clone> Subject<K> for MiniMoka<K> {
    const NAME: &'static str = "mini-moka 0.10 unsync";
    fn make(cap: usize) -> Self {
        MiniMoka(mini_moka::unsync::Cache::new(cap as u64))
    }
    fn put(&mut self, k: K, v: u64) {
        self.0.insert(k, v);
    }
    fn fetch(&mut self, k: &K) -> Option<u64> {
        self.0.get(k).copied()
    }
}

struct Quick<K: Hash + Eq>(quick_cache::unsync::Cache<K, u64>);
impl<K: Hash + Eq + Clone> Subject<K> for Quick<K> {
    const NAME: &'static str = "quick_cache 0.7 unsync";
    fn make(cap: usize) -> Self {
        Quick(quick_cache::unsync::Cache::new(cap))
    }
    fn put(&mut self, k: K, v: u64) {
        self.0.insert(k, v);
    }
    fn fetch(&mut self, k: &K) -> Option<u64> {
        self.0.get(k).copied()
    }
}

struct Lru<K: Hash + Eq>(lru::LruCache<K, u64>);
impl<K: Hash + Eq + Clone> Subject<K> for Lru<K> {
    const NAME: &'static str = "lru 0.19";
    fn make(cap: usize) -> Self {
        Lru(lru::LruCache::new(NonZeroUsize::new(cap).unwrap()))
    }
    fn put(&mut self, k: K, v: u64) {
        self.0.put(k, v);
    }
    fn fetch(&mut self, k: &K) -> Option<u64> {
        self.0.get(k).copied()
    }
}

/// One run of one workload: (ns per op, bytes per entry held, hit ratio).
fn run<K: Clone, S: Subject<K>>(work: &str, keys: &[K], order: &[u64], zipf_ids: &[u64]) -> (f64, f64, f64) {
    let n = keys.len();
    let base = live();
    match work {
        "insert" => {
            let mut c = S::make(n);
            let t = Clock::now();
            for (i, k) in keys.iter().enumerate() {
                c.put(k.clone(), i as u64);
            }
            let ns = t.elapsed_ns() / n as f64;
            let mem = (live() - base) as f64 / n as f64;
            black_box(&mut c);
            (ns, mem, 0.0)
        }
        "overwrite" => {
            let mut c = S::make(n);
            for (i, k) in keys.iter().enumerate() {
                c.put(k.clone(), i as u64);
            }
            let t = Clock::now();
            for &i in order {
                c.put(keys[i as usize].clone(), i);
            }
            let ns = t.elapsed_ns() / order.len() as f64;
            black_box(&mut c);
            (ns, 0.0, 0.0)
        }
        "get" => {
            let mut c = S::make(n);
            for (i, k) in keys.iter().enumerate() {
                c.put(k.clone(), i as u64);
            }
            let t = Clock::now();
            let mut sum = 0u64;
            for &i in order {
                sum = sum.wrapping_add(c.fetch(&keys[i as usize]).unwrap_or(0));
            }
            let ns = t.elapsed_ns() / order.len() as f64;
            black_box(sum);
            (ns, 0.0, 0.0)
        }
        "zipf" => {
            // Read-through at capacity n/10 over n keys.
            let mut c = S::make((n / 10).max(1));
            let mut hits = 0u64;
            let t = Clock::now();
            for &i in zipf_ids {
                let k = &keys[i as usize];
                if c.fetch(k).is_some() {
                    hits += 1;
                } else {
                    c.put(k.clone(), i);
                }
            }
            let ns = t.elapsed_ns() / zipf_ids.len() as f64;
            let mem = (live() - base) as f64 / (n / 10).max(1) as f64;
            black_box(&mut c);
            (ns, mem, hits as f64 / zipf_ids.len() as f64)
        }
        _ => unreachable!(),
    }
}

/// lapse-cache's expiry sweep: n entries with distinct ttls, then one tick
/// past them all with no sweep budget (purge); ns per expired entry, and
/// the most heap the purge held beyond the cache's, per entry.
fn sweep<K: Hash + Eq + Clone>(keys: &[K]) -> (f64, f64) {
    let o = Options { sweep_budget: Some(0), ..Default::default() };
    let mut c: TtlCache<K, u64> = TtlCache::with_options(o, 0.0).unwrap();
    for (i, k) in keys.iter().enumerate() {
        c.set(k.clone(), i as u64, SetOptions { ttl: Some(1.0 + (i % 10_000) as f64), ..Default::default() }).unwrap();
    }
    c.tick(20_000.0).unwrap();
    let before = live();
    reset_peak();
    let t = Clock::now();
    let gone = c.purge();
    let ns = t.elapsed_ns() / gone.max(1) as f64;
    let extra = (PEAK.load(Ordering::Relaxed) - before) as f64 / keys.len() as f64;
    assert_eq!(gone as usize, keys.len());
    (ns, extra)
}

/// moka's expiry sweep: n entries under a time-to-live long enough that none
/// expires while they go in (moka's clock is real time, not injectable),
/// then `run_pending_tasks` after it passed, until all are gone; ns per
/// expired entry. `None` if entries expired during the inserts.
fn sweep_moka<K: Hash + Eq + Clone + Send + Sync + 'static>(keys: &[K]) -> Option<f64> {
    // A loaded machine can stretch the inserts past the ttl: then again,
    // with twice the ttl, twice.
    (0..3).find_map(|k| sweep_moka_within(keys, (300_000 + 3 * keys.len() as u64) << k))
}

fn sweep_moka_within<K: Hash + Eq + Clone + Send + Sync + 'static>(keys: &[K], ttl_us: u64) -> Option<f64> {
    let ttl = std::time::Duration::from_micros(ttl_us);
    let c = moka::sync::Cache::builder().time_to_live(ttl).build();
    let start = Instant::now();
    for (i, k) in keys.iter().enumerate() {
        c.insert(k.clone(), i as u64);
    }
    c.run_pending_tasks();
    if start.elapsed() >= ttl || c.entry_count() != keys.len() as u64 {
        return None;
    }
    std::thread::sleep(ttl.saturating_sub(start.elapsed()) + std::time::Duration::from_millis(5));
    let t = Clock::now();
    while c.entry_count() > 0 {
        c.run_pending_tasks();
    }
    Some(t.elapsed_ns() / keys.len() as f64)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn suite<K: Hash + Eq + Clone + Send + Sync + 'static>(
    label: &str,
    keys: &[K],
    reps: usize,
    only: &[String],
    who: &[String],
) {
    let n = keys.len();
    let mut r = Rng(0x9E37_79B9_7F4A_7C15 ^ n as u64);
    let order: Vec<u64> = (0..n).map(|_| r.below(n as u64)).collect();
    let zipf_ids = zipf(n, n * 2, 7);
    type Runner<K> = fn(&str, &[K], &[u64], &[u64]) -> (f64, f64, f64);
    let subjects: [(&str, Runner<K>); 5] = [
        (Lapse::<K>::NAME, run::<K, Lapse<K>>),
        (Moka::<K>::NAME, run::<K, Moka<K>>),
        (MiniMoka::<K>::NAME, run::<K, MiniMoka<K>>),
        (Quick::<K>::NAME, run::<K, Quick<K>>),
        (Lru::<K>::NAME, run::<K, Lru<K>>),
    ];
    for work in ["insert", "overwrite", "get", "zipf"] {
        if !only.is_empty() && !only.iter().any(|o| o == work) {
            continue;
        }
        let mut times = vec![Vec::new(); subjects.len()];
        let mut mems = vec![Vec::new(); subjects.len()];
        let mut hits = vec![0.0; subjects.len()];
        for rep in 0..reps {
            for j in 0..subjects.len() {
                // Rotate the start so no subject always runs first.
                let i = (j + rep) % subjects.len();
                if !who.is_empty() && !who.iter().any(|w| subjects[i].0.starts_with(w.as_str())) {
                    times[i].push(f64::NAN);
                    mems[i].push(f64::NAN);
                    continue;
                }
                let (ns, mem, hit) = (subjects[i].1)(work, keys, &order, &zipf_ids);
                times[i].push(ns);
                mems[i].push(mem);
                hits[i] = hit;
            }
        }
        let lapse_ns = median(&mut times[0].clone());
        for (i, (name, _)) in subjects.iter().enumerate() {
            if times[i].iter().all(|t| t.is_nan()) {
                continue;
            }
            let ns = median(&mut times[i]);
            let mem = median(&mut mems[i]);
            let extra = match work {
                "insert" => format!("  {mem:6.0} B/entry"),
                "zipf" => format!("  {mem:6.0} B/entry held  hit {:.3}", hits[i]),
                _ => String::new(),
            };
            // (median sorted the times: the first is the fastest repetition)
            println!(
                "{label:6} n={n:<8} {work:9} {name:24} {ns:8.1} ns/op  x{:5.2} vs lapse  (min {:.1}){extra}",
                ns / lapse_ns,
                times[i][0]
            );
        }
    }
    if only.is_empty() || only.iter().any(|o| o == "sweep") {
        let (mut v, mut extra): (Vec<f64>, Vec<f64>) = (0..reps).map(|_| sweep(keys)).unzip();
        let lapse_ns = median(&mut v);
        println!(
            "{label:6} n={n:<8} sweep     {:24} {lapse_ns:8.1} ns/expired entry  x 1.00 vs lapse  purge peak +{:.1} B/entry",
            "lapse-cache",
            median(&mut extra)
        );
        if who.is_empty() || who.iter().any(|w| "moka".starts_with(w.as_str())) {
            let mut m: Vec<f64> = (0..reps).filter_map(|_| sweep_moka(keys)).collect();
            if m.is_empty() {
                println!("{label:6} n={n:<8} sweep     {:24} (inserts outlasted the ttl)", Moka::<K>::NAME);
            } else {
                let ns = median(&mut m);
                println!(
                    "{label:6} n={n:<8} sweep     {:24} {ns:8.1} ns/expired entry  x{:5.2} vs lapse",
                    Moka::<K>::NAME,
                    ns / lapse_ns
                );
            }
        }
    }
}

pub fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let sizes: Vec<usize> =
        arg("--n").map_or(vec![100_000], |s| s.split(',').map(|x| x.parse().expect("--n: a number")).collect());
    let reps: usize = arg("--reps").map_or(5, |s| s.parse().expect("--reps: a number"));
    let only: Vec<String> = arg("--only").map_or(vec![], |s| s.split(',').map(str::to_owned).collect());
    // Subjects by name prefix (`--who lapse,quick`), for profiling one.
    let who: Vec<String> = arg("--who").map_or(vec![], |s| s.split(',').map(str::to_owned).collect());
    WALL.store(args.iter().any(|a| a == "--wall"), Ordering::Relaxed);
    let keys_kind = arg("--keys").unwrap_or_else(|| "u64,string".into());
    for &n in &sizes {
        if keys_kind.contains("u64") {
            let mut r = Rng(42);
            let keys: Vec<u64> = (0..n).map(|_| r.next()).collect();
            suite("u64", &keys, reps, &only, &who);
        }
        if keys_kind.contains("string") {
            let keys: Vec<String> = (0..n).map(|i| format!("user:{i:08}:session")).collect();
            suite("String", &keys, reps, &only, &who);
        }
    }
}
