//! placeholder
mod clock;
mod engine;
mod error;
mod list;
mod policy;
mod wheel;

pub use clock::{Clock, NEVER};
pub use engine::{Cond, Counters, Options, Reason, Write};
pub use error::{Error, Result};
