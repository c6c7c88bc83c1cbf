//! Time as the host gives it: milliseconds as `f64`, in any clock domain, never
//! read from a timer here.

use crate::error::{Error, Result};

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

/// Writes a number for an error message as JS would for the common cases,
/// without pulling Rust's float formatting (several KB of wasm) into the
/// build: integers exactly, fractions to three places.
pub(crate) fn show(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    let neg = if v < 0.0 { "-" } else { "" };
    let a = v.abs();
    if a < 9.007_199_254_740_992e15 {
        let milli = (a * 1000.0).round() as u64;
        let (int, frac) = (milli / 1000, milli % 1000);
        if frac == 0 {
            format!("{neg}{int}")
        } else {
            let f = format!("{frac:03}");
            format!("{neg}{int}.{}", f.trim_end_matches('0'))
        }
    } else {
        format!("{neg}{}e{}", (a / 10f64.powi(a.log10() as i32)).round() as u64, a.log10() as i32)
    }
}

/// A point in time: any finite number.
pub(crate) fn finite_time(arg: &'static str, t: f64) -> Result<f64> {
    if t.is_finite() {
        Ok(t)
    } else {
        Err(Error::range(arg, format!("must be a finite number of milliseconds, got {}", show(t))))
    }
}

/// A lifetime (`ttl`, `idle`): a positive number, or infinity for no limit.
pub(crate) fn lifetime(arg: &'static str, ms: f64) -> Result<f64> {
    if ms > 0.0 {
        Ok(ms)
    } else {
        Err(Error::range(arg, format!("must be a positive number of milliseconds or Infinity, got {}", show(ms))))
    }
}

/// A relative delay (`expire`'s `ms`): any finite number; `<= 0` means now.
pub(crate) fn delay(arg: &'static str, ms: f64) -> Result<f64> {
    if ms.is_finite() {
        Ok(ms)
    } else {
        Err(Error::range(arg, format!("must be a finite number of milliseconds, got {}", show(ms))))
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
}
