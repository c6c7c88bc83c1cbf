//! # lapse-cache
//!
//! A cache whose entries expire at the earlier of two clocks: an absolute
//! lifetime (`ttl`, counted from the write) and a sliding idle window
//! (`idle`, restarted by reads). "Gone 30 days after its last read, and never
//! later than 90 days after it was written." A key can also hold a hash whose
//! fields expire on their own, like Redis 7.4's `HEXPIRE`.
//!
//! The cache never starts a timer or a thread. Its clock is **manual** by
//! default here (unlike the npm package, which follows `Date.now()`): Rust
//! hosts often own time (simulations, tests, a time domain shared with JS
//! snapshots), and a manual clock is deterministic. The host moves it with
//! [`TtlCache::tick`], which removes a bounded batch of expired entries. To
//! follow real time instead, build the cache with [`TtlCache::with_clock`]
//! and a [`TimeSource`]: [`SystemClock`] (ms since the Unix epoch, the
//! domain of JS `Date.now()`), [`MonotonicClock`], or any `Fn() -> f64`
//! closure; every call then reads it, no `tick` is needed for correctness,
//! and writes reclaim a few expired entries each so memory stays bounded.
//! Either way a read never returns an expired entry, swept or not, and time
//! never runs backwards.
//!
//! ```
//! use lapse_cache::{MonotonicClock, Options, SetOptions, TtlCache};
//! let o = Options { ttl: Some(60_000.0), ..Default::default() };
//! let mut c = TtlCache::with_clock(o, MonotonicClock::from_system()).unwrap();
//! c.set("k".to_string(), 1, SetOptions::default()).unwrap();
//! assert_eq!(c.get("k"), Some(&1)); // gone 60 s from now, with no tick
//! ```
//!
//! This crate (`lapse-cache`; the name `lapse` is taken on crates.io) is
//! the engine of the `lapse` npm package (compiled to WebAssembly), and a
//! plain Rust library with the API a `moka`/`lru`/`quick_cache` user expects:
//! lookups take any borrowed form of the key (`get("a")` on `String` keys),
//! plain reads return `Option` (a hash at the key reads as absent;
//! `try_get`/`try_peek` report it as [`Error::WrongType`]), `set`/`insert`
//! and `remove` hand values back, and the cache is `Send + Sync` for
//! `Arc<Mutex<…>>` use. Times and durations are `f64` milliseconds
//! throughout (`ttl`, `idle`, `now`, `tick`, `expire`): one unit for points
//! and spans on a clock whose domain the host picks, the same numbers as
//! the JS API and snapshots, with sub-millisecond fractions.
//!
//!
//! ```
//! use lapse_cache::{Options, TtlCache, SetOptions};
//! let mut c = TtlCache::with_options(Options { idle: Some(1_000.0), ..Default::default() }, 0.0).unwrap();
//! c.set("a", 1, SetOptions { ttl: Some(5_000.0), ..Default::default() }).unwrap();
//! c.hset("user:1", "token", 2, SetOptions { ttl: Some(500.0), ..Default::default() }).unwrap();
//! c.tick(600.0).unwrap();
//! assert_eq!(c.hget(&"user:1", "token").unwrap(), None); // the field expired, and took the key
//! assert!(!c.contains(&"user:1"));
//! assert_eq!(c.get("a"), Some(&1));
//! ```
//!
//! Names here stay clear of `std`'s under a glob import: a write's options
//! are [`SetOptions`] (not `Write`, which `std::io` and `std::fmt` use), and
//! fallible calls return `Result<_, lapse_cache::Error>` (no `Result`
//! alias). [`Error`] itself is named like `std::io::Error` and
//! `std::fmt::Error`, as most crates' error types are: with `std::io::*`
//! glob-imported too, write it `lapse_cache::Error`.
//!
//! ```
//! use lapse_cache::*;
//! use std::io::*; // its `Write` is not ambiguous with anything of ours
//! let mut c = TtlCache::new(0.0);
//! c.set("k", 7, SetOptions::default()).unwrap();
//! sink().write_all(b"io::Write is in scope").unwrap();
//! ```
//!
//! ```
//! use lapse_cache::*;
//! fn parse() -> Result<u32, std::num::ParseIntError> { "7".parse() } // std's Result
//! assert_eq!(parse(), Ok(7));
//! ```
//!
//! Feature `std` (default) matters only on wasm32: without it the crate is
//! `no_std` with its own allocator and a panic handler that traps, and
//! leaves out [`TtlCache`]; the npm package's wasm is built that way.
#![warn(missing_docs)]
// The npm package's wasm (`--no-default-features`) links no std: std's panic
// path formats messages with `core::fmt`, which alone was a third of the
// module. See Cargo.toml `[features]`.
#![cfg_attr(all(target_arch = "wasm32", not(feature = "std")), no_std)]
// Without the crate API, the engine methods only it calls are unused there.
#![cfg_attr(all(target_arch = "wasm32", not(feature = "std")), allow(dead_code))]

extern crate alloc;

#[cfg(any(feature = "std", not(target_arch = "wasm32")))]
mod cache;
mod clock;
mod engine;
mod error;
mod float;
#[cfg(any(test, all(target_arch = "wasm32", not(feature = "std"))))]
mod heap;
mod list;
mod policy;
mod protocol;
// Not in the npm package's wasm: JS checks and reads snapshots there
// (`pkg-template/src/decode.js`), and the engine only restores slots.
#[cfg(any(feature = "std", not(target_arch = "wasm32")))]
pub mod snapshot;
mod types;
mod wheel;

#[cfg(target_arch = "wasm32")]
mod binding;

#[cfg(any(feature = "std", not(target_arch = "wasm32")))]
pub use cache::{Removed, Stats, TtlCache};
pub use clock::{Clock, TimeSource, NEVER};
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use clock::{MonotonicClock, SystemClock};
// (Error only: a `Result` alias here would shadow std's under `use lapse_cache::*`.)
pub use error::Error;
/// The default hasher of [`TtlCache`]'s key index (foldhash's, seeded per process).
///
/// ```
/// use lapse_cache::{DefaultHashBuilder, TtlCache};
/// let mut c: TtlCache<String, u8, DefaultHashBuilder> = TtlCache::new(0.0);
/// c.insert("a".into(), 1).unwrap();
/// assert_eq!(c.get("a"), Some(&1));
/// ```
pub use hashbrown::DefaultHashBuilder;
pub use types::{Cond, Counters, Options, Reason, SetOptions};

/// A panic is a trap either way (`panic = "abort"`); with no message to show,
/// trapping at once keeps `core::fmt` out of the module. Every error a caller
/// can cause is a `Result`; what remains are the bounds checks of internal
/// invariants.
#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

/// About 1 KB of wasm where dlmalloc (std's default) was 8 KB; returns null
/// when memory cannot grow. See `heap.rs`.
#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
#[global_allocator]
static HEAP: heap::Global = heap::Global::new();
