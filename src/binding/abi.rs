//! The module's exports: plain C-ABI functions over a boxed `RawEngine`,
//! wrapped by the hand-written `pkg-template/src/glue.js`.
//!
//! Why not wasm-bindgen: only numbers cross, so its class glue, reference
//! table, borrow flags and multi-value `Result` shims were pure weight (about
//! 2 KB of the gzipped download). A failing call returns a sentinel (`-1`,
//! `0` for a pointer) and leaves its `Error` here; the glue, before any other
//! JS runs, calls `lapse_error` and throws the class and message it reads.
//! No callback into JS exists, so nothing can call in between.
//!
//! JS calls these only with engines it created and has not freed
//! (`cache.js` checks for `free()` before every call).

use super::{JsResult, RawEngine};
use crate::engine::Times;
use crate::error::Error;
use crate::protocol::{
    CALL_FAILED, ERROR_CLASS, ERROR_MSG, ERROR_MSG_LEN, ERROR_OOM, ERROR_PLAIN, ERROR_RANGE, ERROR_TYPE, ERROR_WORDS,
};
use alloc::boxed::Box;
use alloc::string::String;
use core::cell::UnsafeCell;

/// The last failure, and the message `lapse_error` last wrote.
struct Last {
    error: Option<Error>,
    msg: String,
    /// `[class, message address, message length]`, what JS reads.
    out: [u32; ERROR_WORDS],
}

struct Shared(UnsafeCell<Last>);
// wasm32 without threads: one caller at a time.
unsafe impl Sync for Shared {}

static LAST: Shared = Shared(UnsafeCell::new(Last { error: None, msg: String::new(), out: [0; ERROR_WORDS] }));

fn last() -> &'static mut Last {
    // Only reached from the exports below, never re-entered.
    unsafe { &mut *LAST.0.get() }
}

/// `Ok` as a number, or the sentinel with the error kept for `lapse_error`.
fn num<T>(r: JsResult<T>, f: impl FnOnce(T) -> f64) -> f64 {
    match r {
        Ok(v) => f(v),
        Err(e) => {
            last().error = Some(e);
            f64::from(CALL_FAILED)
        }
    }
}

fn flag(r: JsResult<bool>) -> i32 {
    num(r, |b| f64::from(u8::from(b))) as i32
}

fn eng<'a>(p: *mut RawEngine) -> &'a mut RawEngine {
    // JS passes only pointers `rawengine_new` returned and `free` has not
    // taken (see the module comment).
    unsafe { &mut *p }
}

/// The last failure as the `ERROR_*` record (class, message address and
/// length); 0 when there is none.
#[no_mangle]
pub extern "C" fn lapse_error() -> u32 {
    let l = last();
    let Some(e) = l.error.take() else { return 0 };
    l.msg = String::new();
    let class = match &e {
        Error::Type { .. } | Error::WrongType { .. } => ERROR_TYPE,
        // Out of memory carries no message (see `oom`): the host writes it.
        Error::Range { msg, .. } if msg.is_empty() => ERROR_OOM,
        Error::Range { .. } => ERROR_RANGE,
        Error::Corrupt(_) => ERROR_PLAIN,
    };
    let text: &str = match &e {
        Error::Range { arg, msg } if msg.is_empty() => arg,
        _ => {
            l.msg = e.message();
            &l.msg
        }
    };
    l.out[ERROR_CLASS] = class;
    l.out[ERROR_MSG] = text.as_ptr() as u32;
    l.out[ERROR_MSG_LEN] = text.len() as u32;
    l.out.as_ptr() as u32
}

#[no_mangle]
pub extern "C" fn rawengine_new(now: f64, ttl: f64, idle: f64, max_entries: f64, max_bytes: f64, budget: f64) -> u32 {
    match RawEngine::new(now, ttl, idle, max_entries, max_bytes, budget) {
        // `new` checked that this box fits.
        Ok(r) => Box::into_raw(Box::new(r)) as u32,
        Err(e) => {
            last().error = Some(e);
            0
        }
    }
}

#[no_mangle]
pub extern "C" fn rawengine_free(p: *mut RawEngine) {
    drop(unsafe { Box::from_raw(p) });
}

#[no_mangle]
pub extern "C" fn rawengine_reclaim(p: *mut RawEngine, writes: u32, pay: u32) {
    eng(p).reclaim(writes, pay != 0);
}

#[no_mangle]
pub extern "C" fn rawengine_reserve(p: *mut RawEngine, n: u32) {
    eng(p).reserve(n);
}

#[no_mangle]
pub extern "C" fn rawengine_statusPtr(p: *mut RawEngine) -> u32 {
    eng(p).status_ptr()
}

#[no_mangle]
pub extern "C" fn rawengine_now(p: *mut RawEngine) -> f64 {
    eng(p).now()
}

#[no_mangle]
pub extern "C" fn rawengine_tick(p: *mut RawEngine, now: f64, purge: u32) -> f64 {
    num(eng(p).tick(now, purge != 0), |n| n)
}

#[no_mangle]
pub extern "C" fn rawengine_nextExpiry(p: *mut RawEngine) -> f64 {
    eng(p).next_expiry()
}

#[no_mangle]
pub extern "C" fn rawengine_write(p: *mut RawEngine, s: u32, flags: u32, ttl: f64, idle: f64, at: f64, w: f64) -> u32 {
    eng(p).write(s, flags, ttl, idle, at, w)
}

#[no_mangle]
pub extern "C" fn rawengine_swapIn(p: *mut RawEngine, to_main: u32) -> u32 {
    eng(p).swap_in(to_main)
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn rawengine_hwrite(
    p: *mut RawEngine,
    h: u32,
    f: u32,
    flags: u32,
    ttl: f64,
    idle: f64,
    at: f64,
    w: f64,
) -> u32 {
    eng(p).hwrite(h, f, flags, ttl, idle, at, w)
}

/// Moves the last failed write's error to where `lapse_error` reads it.
#[no_mangle]
pub extern "C" fn rawengine_takeError(p: *mut RawEngine) {
    last().error = eng(p).take_error();
}

#[no_mangle]
pub extern "C" fn rawengine_setGrace(p: *mut RawEngine, s: u32, ms: f64) -> i32 {
    flag(eng(p).set_grace(s, ms).map(|()| false))
}

#[no_mangle]
pub extern "C" fn rawengine_staleUntil(p: *mut RawEngine, s: u32) -> f64 {
    eng(p).stale_until(s)
}

#[no_mangle]
pub extern "C" fn rawengine_remove(p: *mut RawEngine, s: u32, reason: u32) -> f64 {
    num(eng(p).remove(s, reason as u8), |n| n)
}

#[no_mangle]
pub extern "C" fn rawengine_expireAt(p: *mut RawEngine, s: u32, t: f64, rel: u32, cond: u32) -> i32 {
    flag(eng(p).expire_at(s, t, rel != 0, cond))
}

#[no_mangle]
pub extern "C" fn rawengine_clear(p: *mut RawEngine) -> i32 {
    flag(eng(p).clear().map(|()| false))
}

#[no_mangle]
pub extern "C" fn rawengine_stats(p: *mut RawEngine) -> u32 {
    eng(p).stats()
}

#[no_mangle]
pub extern "C" fn rawengine_slotWeight(p: *mut RawEngine, s: u32) -> u32 {
    eng(p).slot_weight(s)
}

/// The slot restored (see `RawEngine::restore`), or `CALL_FAILED`.
#[no_mangle]
pub extern "C" fn rawengine_restore(
    p: *mut RawEngine,
    kind: u32,
    parent: u32,
    abs: f64,
    last: f64,
    idle: f64,
    w: u32,
) -> f64 {
    num(eng(p).restore(kind, parent, Times { abs, last, idle }, w), f64::from)
}
