//! # lapse-cache
//!
//! A cache whose entries expire at the earlier of two clocks: an absolute
//! lifetime (`ttl`, counted from the write) and a sliding idle window
//! (`idle`, restarted by reads). "Gone 30 days after its last read, and never
//! later than 90 days after it was written." A key can also hold a hash whose
//! fields expire on their own, like Redis 7.4's `HEXPIRE`.
//!
//! The cache never reads a timer. The host moves the clock with
//! [`TtlCache::tick`], which removes a bounded batch of expired entries; a
//! read never returns an expired entry, swept or not.
//!
//! This crate (`lapse-cache`; the name `lapse` is taken on crates.io) is
//! the engine of the `lapse` npm package (compiled to
//! WebAssembly), and a plain Rust library:
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
#![warn(missing_docs)]

mod cache;
mod clock;
mod engine;
mod error;
mod list;
mod policy;
pub mod snapshot;
mod wheel;

#[cfg(target_arch = "wasm32")]
mod binding;

pub use cache::{Removed, Stats, TtlCache};
pub use clock::{Clock, NEVER};
/// The former name of [`SetOptions`] (it clashed with `std::io::Write`).
#[doc(hidden)]
pub use engine::Write;
pub use engine::{Cond, Counters, Options, Reason, Write as SetOptions};
pub use error::{Error, Result};
/// The default hasher of [`TtlCache`]'s key index (foldhash's, seeded per process).
pub use hashbrown::DefaultHashBuilder;
