//! One error type per kind of failure, so the JS binding can map each to the
//! right JS error class (`TypeError`, `RangeError`, `Error`) without parsing
//! strings.

use std::fmt;

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
    pub(crate) fn ty(arg: &'static str, msg: impl Into<String>) -> Self {
        Error::Type { arg, msg: msg.into() }
    }
    pub(crate) fn range(arg: &'static str, msg: impl Into<String>) -> Self {
        Error::Range { arg, msg: msg.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Type { arg, msg } | Error::Range { arg, msg } => write!(f, "{arg}: {msg}"),
            Error::WrongType { held, wanted } => {
                write!(f, "WRONGTYPE: key holds a {held}, but this operation needs a {wanted}")
            }
            // `restore(bytes)`: the message names the argument, like every other error.
            Error::Corrupt(msg) => write!(f, "bytes: not a valid snapshot: {msg}"),
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand for `Result<T, lapse_cache::Error>`.
pub type Result<T> = std::result::Result<T, Error>;
