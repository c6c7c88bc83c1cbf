//! One error type per kind of failure, so the JS binding can map each to the
//! right JS error class (`TypeError`, `RangeError`, `Error`) without parsing
//! strings.
//!
//! Messages are built by concatenation, and numbers by `show`/`uint` below:
//! the npm package's wasm links no `core::fmt` (see Cargo.toml `[features]`),
//! so nothing reachable from the JS binding may use `format!`/`Display`.

use crate::float::fract;
use alloc::string::String;
use core::fmt;

/// Everything that can go wrong in a `lapse-cache` call.
///
/// Every fallible method validates its input first and returns one of these
/// *before* it mutates anything, so an `Err` always leaves the cache as it was.
///
/// ```
/// use lapse_cache::{Error, TtlCache};
/// let mut c: TtlCache<&str, u32> = TtlCache::new(0.0);
/// let e = c.expire_at(&"k", f64::NAN, None).unwrap_err();
/// assert!(matches!(e, Error::Range { arg: "time", .. }));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// An argument has the wrong type or shape (JS `TypeError`).
    Type {
        /// The argument's name as the public API spells it.
        arg: &'static str,
        /// What was wrong with it.
        msg: String,
    },
    /// An argument has the right type but is out of range (JS `RangeError`).
    Range {
        /// The argument's name as the public API spells it.
        arg: &'static str,
        /// What was wrong with it.
        msg: String,
    },
    /// A plain-value method was called on a hash key or the reverse, as Redis's
    /// `WRONGTYPE` (JS `TypeError`).
    WrongType {
        /// What the key holds.
        held: &'static str,
        /// What the method needs.
        wanted: &'static str,
    },
    /// Snapshot bytes could not be decoded (JS `Error`).
    Corrupt(String),
}

impl Error {
    /// Out of memory, on argument `arg`. No message: making one would
    /// allocate, in a memory that has none left (the JS host writes it:
    /// `ERROR_OOM`).
    #[cold]
    #[inline(never)]
    pub(crate) fn oom(arg: &'static str) -> Self {
        Error::Range { arg, msg: String::new() }
    }
    pub(crate) fn ty(arg: &'static str, msg: impl Into<String>) -> Self {
        Error::Type { arg, msg: msg.into() }
    }
    pub(crate) fn range(arg: &'static str, msg: impl Into<String>) -> Self {
        Error::Range { arg, msg: msg.into() }
    }
}

impl Error {
    /// The message JS shows (and `Display` writes).
    pub(crate) fn message(&self) -> String {
        match self {
            Error::Type { arg, msg } | Error::Range { arg, msg } => cat(&[arg, ": ", msg]),
            Error::WrongType { held, wanted } => {
                cat(&["WRONGTYPE: key holds a ", held, ", but this operation needs a ", wanted])
            }
            // `restore(bytes)`: the message names the argument, like every other error.
            Error::Corrupt(msg) => cat(&["bytes: not a valid snapshot: ", msg]),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl core::error::Error for Error {}

/// Shorthand for `Result<T, lapse_cache::Error>`.
pub type Result<T> = core::result::Result<T, Error>;

/// The parts, joined.
pub(crate) fn cat(parts: &[&str]) -> String {
    let mut n = 0;
    for p in parts {
        n += p.len();
    }
    let mut s = String::with_capacity(n);
    for p in parts {
        s.push_str(p);
    }
    s
}

/// An integer in decimal.
pub(crate) fn uint(n: u64) -> String {
    let mut s = String::new();
    push_uint(&mut s, n);
    s
}

fn push_uint(s: &mut String, n: u64) {
    if n >= 10 {
        push_uint(s, n / 10);
    }
    s.push(char::from(b'0' + (n % 10) as u8));
}

/// Writes a number for an error message as JS would for the common cases:
/// integers exactly, fractions to three places, huge values as a rounded
/// mantissa and exponent (`1e300`).
pub(crate) fn show(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    let mut s = String::from(if v < 0.0 { "-" } else { "" });
    let a = v.abs();
    if a == f64::INFINITY {
        s.push_str("Infinity");
    } else if fract(a) == 0.0 && a < 9.007_199_254_740_992e15 {
        push_uint(&mut s, a as u64);
    } else if a < 9.007_199_254_740_992e15 {
        let milli = (a * 1000.0 + 0.5) as u64;
        push_uint(&mut s, milli / 1000);
        let mut frac = milli % 1000;
        if frac != 0 {
            s.push('.');
            // Digit by digit (no string slicing: its panic path is 5 KB of
            // wasm), leading zeros kept, trailing ones dropped.
            while frac != 0 {
                s.push(char::from(b'0' + (frac / 100) as u8));
                frac = frac % 100 * 10;
            }
        }
    } else {
        let (mut m, mut e) = (a, 0u64);
        while m >= 10.0 {
            m /= 10.0;
            e += 1;
        }
        let mut r = (m + 0.5) as u64;
        if r == 10 {
            (r, e) = (1, e + 1);
        }
        push_uint(&mut s, r);
        s.push('e');
        push_uint(&mut s, e);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_js_writes_them() {
        let shown: Vec<String> =
            [0.0, -0.0, 7.0, 4294967296.0, 9007199254740991.0, 0.0005, 2.25, 1e21, 9.7e300, 1.7976931348623157e308]
                .iter()
                .map(|&v| show(v))
                .collect();
        assert_eq!(shown, ["0", "0", "7", "4294967296", "9007199254740991", "0.001", "2.25", "1e21", "1e301", "2e308"]);
        assert_eq!(uint(0), "0");
        assert_eq!(uint(u64::MAX), "18446744073709551615");
        assert_eq!(cat(&["a", "", "bc"]), "abc");
    }

    #[test]
    fn display_is_the_message() {
        let e = Error::range("ttl", cat(&["must be positive, got ", &show(-1.5)]));
        assert_eq!(e.to_string(), "ttl: must be positive, got -1.5");
        let w = Error::WrongType { held: "hash", wanted: "plain value" };
        assert_eq!(w.to_string(), "WRONGTYPE: key holds a hash, but this operation needs a plain value");
        assert_eq!(Error::Corrupt("truncated".into()).to_string(), "bytes: not a valid snapshot: truncated");
    }
}
