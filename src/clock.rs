//! Time as the host gives it: milliseconds as `f64`, in any clock domain, never
//! read from a timer here. A cache either moves only when told ([`Clock`],
//! the native default) or follows a [`TimeSource`] it reads itself.

use alloc::boxed::Box;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::error::{cat, Error, Result};

/// No limit, for a deadline or a window.
pub const NEVER: f64 = f64::INFINITY;

/// A monotonic clock that only moves when the host says so.
///
/// ```
/// use lapse_cache::Clock;
/// let mut c = Clock::new(1000.0).unwrap();
/// c.advance(900.0).unwrap(); // backwards: ignored
/// assert_eq!(c.now(), 1000.0);
/// c.advance(1500.0).unwrap();
/// assert_eq!(c.now(), 1500.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    now: f64,
}

impl Clock {
    pub(crate) const ZERO: Clock = Clock { now: 0.0 };

    /// A clock at `now`, which must be finite.
    pub fn new(now: f64) -> Result<Self> {
        Ok(Clock { now: finite_time("now", now)? })
    }

    /// The current time.
    pub fn now(&self) -> f64 {
        self.now
    }

    /// Moves the clock to `now` if that is later; an earlier time is ignored,
    /// so time never runs backwards.
    pub fn advance(&mut self, now: f64) -> Result<()> {
        let now = finite_time("now", now)?;
        if now > self.now {
            self.now = now;
        }
        Ok(())
    }
}

/// Where a cache that follows a clock reads the time: milliseconds as `f64`,
/// in the same domain as the cache's times (snapshots and `expire_at` use it
/// too). Any `Fn() -> f64 + Send + Sync` closure is one.
///
/// A source may step back (a wall clock being set back): the cache holds
/// the latest reading it has seen, so time never runs backwards and nothing
/// expired comes back. A reading that is not finite is ignored.
///
/// ```
/// use std::sync::{atomic::{AtomicU64, Ordering}, Arc};
/// use lapse_cache::{Options, SetOptions, TtlCache};
/// let t = Arc::new(AtomicU64::new(0));
/// let src = t.clone();
/// let mut c = TtlCache::with_clock(Options::default(), move || src.load(Ordering::Relaxed) as f64).unwrap();
/// c.set("k", 1, SetOptions { ttl: Some(100.0), ..Default::default() }).unwrap();
/// t.store(100, Ordering::Relaxed); // no tick needed
/// assert!(!c.contains(&"k"));
/// ```
pub trait TimeSource: Send + Sync {
    /// The current time, in ms.
    fn now_ms(&self) -> f64;
}

impl<F: Fn() -> f64 + Send + Sync> TimeSource for F {
    fn now_ms(&self) -> f64 {
        self()
    }
}

/// The wall clock: ms since the Unix epoch, with a fraction, the domain of
/// JS `Date.now()` (so times in snapshots mean the same on both sides). It
/// steps back if the system clock is set back; the cache ignores that.
///
/// ```
/// use lapse_cache::TimeSource;
/// assert!(lapse_cache::SystemClock.now_ms() > 1.6e12);
/// ```
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl TimeSource for SystemClock {
    fn now_ms(&self) -> f64 {
        match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => d.as_secs_f64() * 1000.0,
            Err(e) => -e.duration().as_secs_f64() * 1000.0,
        }
    }
}

/// A monotonic clock ([`std::time::Instant`]): ms elapsed since it was made,
/// plus `start`. It never steps back, whatever the wall clock does.
///
/// ```
/// use lapse_cache::{MonotonicClock, TimeSource};
/// let c = MonotonicClock::new(5000.0);
/// assert!(c.now_ms() >= 5000.0);
/// ```
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    origin: std::time::Instant,
    start: f64,
}

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl MonotonicClock {
    /// A clock reading `start` now.
    pub fn new(start: f64) -> Self {
        MonotonicClock { origin: std::time::Instant::now(), start }
    }

    /// A clock that starts at the wall clock's time ([`SystemClock`]), so
    /// its times are comparable to `Date.now()`, then moves monotonically.
    ///
    /// ```
    /// use lapse_cache::TimeSource;
    /// assert!(lapse_cache::MonotonicClock::from_system().now_ms() > 1.6e12);
    /// ```
    pub fn from_system() -> Self {
        Self::new(SystemClock.now_ms())
    }
}

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl TimeSource for MonotonicClock {
    fn now_ms(&self) -> f64 {
        self.start + self.origin.elapsed().as_secs_f64() * 1000.0
    }
}

/// A cache's followed source with the latest reading seen (as `f64` bits,
/// atomic so that `&self` reads can move it and the cache stays `Sync`).
pub(crate) struct Follow {
    source: Box<dyn TimeSource>,
    high: AtomicU64,
}

impl Follow {
    pub fn new(source: Box<dyn TimeSource>, floor: f64) -> Self {
        Follow { source, high: AtomicU64::new(floor.to_bits()) }
    }

    /// The latest reading seen.
    pub fn high(&self) -> f64 {
        f64::from_bits(self.high.load(Ordering::Relaxed))
    }

    /// Reads the source; returns the latest reading seen, this one included.
    pub fn read(&self) -> f64 {
        let t = self.source.now_ms();
        let mut cur = self.high.load(Ordering::Relaxed);
        loop {
            let c = f64::from_bits(cur);
            if !(t > c && t.is_finite()) {
                return c;
            }
            match self.high.compare_exchange_weak(cur, t.to_bits(), Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return t,
                Err(x) => cur = x,
            }
        }
    }
}

pub(crate) use crate::error::show;

/// A point in time: any finite number.
pub(crate) fn finite_time(arg: &'static str, t: f64) -> Result<f64> {
    if t.is_finite() {
        Ok(t)
    } else {
        Err(Error::range(arg, cat(&["must be a finite number of milliseconds, got ", &show(t)])))
    }
}

/// A lifetime (`ttl`, `idle`): a positive number, or infinity for no limit.
pub(crate) fn lifetime(arg: &'static str, ms: f64) -> Result<f64> {
    if ms > 0.0 {
        Ok(ms)
    } else {
        Err(Error::range(arg, cat(&["must be a positive number of milliseconds or Infinity, got ", &show(ms)])))
    }
}

/// The deadline `ms` after `now`: their sum, rounded to the nearest f64.
///
/// The one rule every relative deadline follows (`ttl`, `idle`, `expire`,
/// `hexpire`, the cache defaults, and the JS inline write paths): a sum that
/// rounds to `now` itself (a `ttl` below the float resolution at `now`, such
/// as 0.0001 at `Date.now()`) is a deadline not in the future, so the write
/// stores nothing and deletes the key, as an `expireAt` in the past does; a
/// finite `ms` whose sum overflows to infinity is a `RangeError` ("too large
/// for the clock"), never a silent "no limit". `Infinity` stays "no limit".
pub(crate) fn deadline(arg: &'static str, now: f64, ms: f64) -> Result<f64> {
    let d = now + ms;
    if d == NEVER && ms != NEVER {
        return Err(Error::range(arg, "too large for the clock"));
    }
    Ok(d)
}

/// A relative delay (`expire`'s `ms`): any finite number; `<= 0` means now.
pub(crate) fn delay(arg: &'static str, ms: f64) -> Result<f64> {
    if ms.is_finite() {
        Ok(ms)
    } else {
        Err(Error::range(arg, cat(&["must be a finite number of milliseconds, got ", &show(ms)])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validators_reject_what_the_contract_rejects() {
        assert!(Clock::new(f64::NAN).is_err());
        assert!(Clock::new(f64::INFINITY).is_err());
        assert!(lifetime("ttl", 0.0).is_err());
        assert!(lifetime("ttl", -1.0).is_err());
        assert!(lifetime("ttl", f64::NAN).is_err());
        assert_eq!(lifetime("ttl", f64::INFINITY), Ok(f64::INFINITY));
        assert_eq!(lifetime("ttl", 0.5), Ok(0.5));
        assert_eq!(delay("ms", -5.0), Ok(-5.0));
        let shown: Vec<String> = [f64::NAN, f64::INFINITY, -f64::INFINITY, 0.0, -3.0, 1.5, 0.125, -0.001, 1e300]
            .iter()
            .map(|&v| show(v))
            .collect();
        assert_eq!(shown, ["NaN", "Infinity", "-Infinity", "0", "-3", "1.5", "0.125", "-0.001", "1e300"]);
        assert!(delay("ms", f64::NEG_INFINITY).is_err());
    }

    #[test]
    fn a_followed_source_never_runs_back() {
        use std::sync::Arc;
        let t = Arc::new(AtomicU64::new(100f64.to_bits()));
        let src = t.clone();
        let f = Follow::new(Box::new(move || f64::from_bits(src.load(Ordering::Relaxed))), 50.0);
        assert_eq!(f.read(), 100.0);
        t.store(40f64.to_bits(), Ordering::Relaxed);
        assert_eq!(f.read(), 100.0);
        t.store(f64::NAN.to_bits(), Ordering::Relaxed);
        assert_eq!(f.read(), 100.0);
        t.store(f64::INFINITY.to_bits(), Ordering::Relaxed);
        assert_eq!(f.read(), 100.0);
        t.store(150f64.to_bits(), Ordering::Relaxed);
        assert_eq!((f.read(), f.high()), (150.0, 150.0));
    }

    #[test]
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    fn the_std_sources_read_sensible_times() {
        let wall = SystemClock.now_ms();
        let mono = MonotonicClock::from_system();
        let a = mono.now_ms();
        assert!((a - wall).abs() < 60_000.0);
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(mono.now_ms() >= a + 4.0);
    }
}
