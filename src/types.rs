//! The public value types the engine, both hosts and the snapshot format
//! share: cache-wide [`Options`], per-write [`Write`] options, expiry
//! conditions ([`Cond`]), removal reasons ([`Reason`]) and the engine's
//! [`Counters`].

use crate::clock::{lifetime, NEVER};
use crate::error::{Error, Result};
use crate::protocol::{REASON_CLEARED, REASON_DELETED, REASON_EVICTED, REASON_EXPIRED, REASON_REPLACED};
use alloc::format;

/// Why an entry left the cache, as `dispose` reports it.
///
/// ```
/// assert_eq!(lapse_cache::Reason::Expired.as_str(), "expired");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Reason {
    /// Its deadline passed.
    Expired = REASON_EXPIRED,
    /// Capacity needed the room.
    Evicted = REASON_EVICTED,
    /// `delete`, `hdel`, or an expiry set in the past.
    Deleted = REASON_DELETED,
    /// Overwritten by a write to the same key or field.
    Replaced = REASON_REPLACED,
    /// `clear`.
    Cleared = REASON_CLEARED,
}

impl Reason {
    /// The name the JS API uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Expired => "expired",
            Reason::Evicted => "evicted",
            Reason::Deleted => "deleted",
            Reason::Replaced => "replaced",
            Reason::Cleared => "cleared",
        }
    }

    pub(crate) fn from_u8(v: u8) -> Reason {
        match v {
            REASON_EXPIRED => Reason::Expired,
            REASON_EVICTED => Reason::Evicted,
            REASON_DELETED => Reason::Deleted,
            REASON_REPLACED => Reason::Replaced,
            _ => Reason::Cleared,
        }
    }
}

/// The name the JS API uses, as [`Reason::as_str`].
///
/// ```
/// assert_eq!(lapse_cache::Reason::Evicted.to_string(), "evicted");
/// ```
impl core::fmt::Display for Reason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A condition on an expiry change, as in Redis `EXPIRE`.
///
/// ```
/// use lapse_cache::{Cond, TtlCache};
/// let mut c = TtlCache::new(0.0);
/// c.set("k", 1, Default::default()).unwrap();
/// assert!(!c.expire(&"k", 1000.0, Some(Cond::Xx)).unwrap()); // no deadline yet
/// assert!(c.expire(&"k", 1000.0, Some(Cond::Nx)).unwrap());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cond {
    /// Only if the entry has no absolute deadline.
    Nx,
    /// Only if it has one.
    Xx,
    /// Only if the new deadline is later (no deadline counts as infinite).
    Gt,
    /// Only if the new deadline is earlier.
    Lt,
}

impl Cond {
    /// Parses `"NX"`, `"XX"`, `"GT"` or `"LT"`.
    ///
    /// ```
    /// assert_eq!(lapse_cache::Cond::parse("GT").unwrap(), lapse_cache::Cond::Gt);
    /// assert!(lapse_cache::Cond::parse("gt").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Cond> {
        match s {
            "NX" => Ok(Cond::Nx),
            "XX" => Ok(Cond::Xx),
            "GT" => Ok(Cond::Gt),
            "LT" => Ok(Cond::Lt),
            _ => Err(Error::ty("cond", format!("must be \"NX\", \"XX\", \"GT\" or \"LT\", got {s:?}"))),
        }
    }

    pub(crate) fn holds(self, current: f64, new: f64) -> bool {
        match self {
            Cond::Nx => current == NEVER,
            Cond::Xx => current != NEVER,
            Cond::Gt => new > current,
            Cond::Lt => new < current,
        }
    }
}

/// [`Cond::parse`], for `"GT".parse::<Cond>()`.
///
/// ```
/// let c: lapse_cache::Cond = "NX".parse().unwrap();
/// assert_eq!(c, lapse_cache::Cond::Nx);
/// ```
impl core::str::FromStr for Cond {
    type Err = Error;

    fn from_str(s: &str) -> Result<Cond> {
        Cond::parse(s)
    }
}

/// Cache-wide settings. `None` means "no limit" throughout.
///
/// ```
/// let day = 86_400_000.0;
/// let o = lapse_cache::Options { ttl: Some(90.0 * day), idle: Some(30.0 * day), ..Default::default() };
/// assert_eq!(o.sweep_budget, Some(1000));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Default absolute lifetime in ms.
    pub ttl: Option<f64>,
    /// Default idle window in ms.
    pub idle: Option<f64>,
    /// Most entries (plain entries plus hash fields) held at once: 1 to
    /// 2^53 - 1, what a snapshot holds exactly (`u64::MAX` means none, as
    /// `None`); anything else is a `Range` error.
    pub max_entries: Option<u64>,
    /// Most total size, as measured by the host's `sizeOf`; the same range.
    /// A hash's fields total at most `u32::MAX`, as each entry's size.
    pub max_bytes: Option<u64>,
    /// Most entries one `tick` removes (default 1000). `Some(0)` makes `tick`
    /// only move the clock; expired entries are still never served.
    pub sweep_budget: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options { ttl: None, idle: None, max_entries: None, max_bytes: None, sweep_budget: Some(1000) }
    }
}

impl Options {
    pub(crate) fn validate(&self) -> Result<()> {
        if let Some(t) = self.ttl {
            lifetime("ttl", t)?;
        }
        if let Some(t) = self.idle {
            lifetime("idle", t)?;
        }
        // Up to 2^53 - 1, what a snapshot (an f64, as JS numbers) holds
        // exactly; u64::MAX is "none", as `None`.
        let bound = |v: Option<u64>| v.is_none_or(|n| n != 0 && (n < 1 << 53 || n == u64::MAX));
        if !bound(self.max_entries) {
            return Err(Error::range("maxEntries", "must be a positive integer up to 2^53 - 1, or Infinity"));
        }
        if !bound(self.max_bytes) {
            return Err(Error::range("maxBytes", "must be a positive integer up to 2^53 - 1, or Infinity"));
        }
        Ok(())
    }
}

/// Per-write clock options. `None` takes the cache default;
/// `Some(f64::INFINITY)` means no limit for this entry.
///
/// ```
/// let w = lapse_cache::SetOptions { ttl: Some(5_000.0), ..Default::default() };
/// assert!(w.idle.is_none() && !w.keep_ttl);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SetOptions {
    /// Absolute lifetime from now, in ms.
    pub ttl: Option<f64>,
    /// Idle window, in ms.
    pub idle: Option<f64>,
    /// Absolute deadline as a time; excludes `ttl`.
    pub expire_at: Option<f64>,
    /// Keep the live entry's deadlines; excludes the other three.
    pub keep_ttl: bool,
}

/// Counters the engine keeps; hosts add hits and misses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Entries removed because a deadline passed (by sweeps or on access).
    pub expired: u64,
    /// Entries removed to make room.
    pub evicted: u64,
    /// Entries removed by `delete`, `hdel` or a past expiry.
    pub deleted: u64,
    /// Entries and fields written for the first time.
    pub inserted: u64,
    /// Writes to an existing entry or field.
    pub updated: u64,
    /// Calls to `tick`.
    pub ticks: u64,
    /// Entries removed by `tick` and `purge`.
    pub swept: u64,
    /// Wheel slots that fired early because an idle read moved the deadline.
    pub rescheduled: u64,
    /// Wheel slots moved to a finer level.
    pub cascaded: u64,
}

/// The engine's name for [`SetOptions`] (a write's options). Not exported:
/// `Write` would clash with `std::io::Write` and `std::fmt::Write` under a glob
/// import.
pub(crate) type Write = SetOptions;
