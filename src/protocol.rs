//! The seam between a host and the engine: every number that crosses it,
//! defined once, and the rules both sides keep.
//!
//! Two hosts drive the same engine. The JS host (`pkg-template/src/cache.js`,
//! through the binding `src/binding.rs`, exported as C-ABI functions by
//! `src/binding/abi.rs` and wrapped by `pkg-template/src/glue.js`) keeps keys and values in
//! a JS `Map` and reads the engine's columns through typed-array views of wasm
//! memory; the native host (`src/cache/`) calls the engine directly. The
//! engine knows slots, not keys: a host names an entry by its slot number.
//! `pkg-template/src/protocol.js` is generated from this file (this text and
//! every constant below, same names): run `make protocol` after a change, and
//! `cargo test` fails while the generated file is out of date.
//!
//! One word per thing: an entry's **weight** is its share of `maxBytes` (what
//! `sizeOf` returns in JS, the `weight` argument of the native
//! `set_sized`); the weights summed are **bytes**; **size** is only ever the
//! number of live keys.
//!
//! "MUST" and "MAY" below are obligations on the host; the binding checks
//! every slot number it is given (a stale one is a `TypeError`, never a trap),
//! but it cannot check what the host writes into shared memory.
//!
//! ## Calls and the status block
//!
//! Only numbers cross a call. After every call the binding publishes a status
//! block of `ST_LEN` `u32` words (its address: `statusPtr()`, fixed for the
//! engine's life). Addresses in it are byte offsets into wasm memory.
//!
//! - The host MUST re-read `ST_TIMES`, `ST_IDLES`, `ST_FREQ` and `ST_CAP` after
//!   every call: the columns move when the engine grows them, and growth can
//!   happen in any call that allocates (the idle column also turns on in a
//!   call, at the first idle window other than the cache's default).
//! - Typed-array views of wasm memory go stale (length 0) whenever the memory
//!   grows, in a call on this engine or on any other engine of the same module,
//!   successful or not. The host MUST check its views before every read or
//!   write of shared memory after any call into wasm, or after any user
//!   callback (which may have called into another cache).
//! - The host writes its clock reading as an `f64` at `ST_NOW` before a call
//!   rather than passing it; the engine catches up to it (never backwards)
//!   at the start of the call.
//! - The clocks are narrow or wide (see "Clocks" below); the engine
//!   publishes which, and the base, after every call at `f64` `NOW_BASE`
//!   after `ST_NOW`. The host MUST re-read it after every call (a call may
//!   widen the clocks, and then they stay wide).
//! - A failed call returns `CALL_FAILED` (0 from one that returns an
//!   address; `FAILED` from `write`/`hwrite`, whose error `takeError` moves
//!   into place) and leaves its error for `lapse_error()`, whose record of
//!   `ERROR_WORDS` words gives its class (`ERROR_*`) and its ASCII message.
//!   The host MUST read it before any other call into the module.
//!
//! ## Clocks
//!
//! Each slot's clocks are `TIMES_STRIDE` words at `ST_TIMES`: its absolute
//! deadline (`TIMES_ABS`) and its last access (`TIMES_LAST`).
//!
//! - Narrow (the base is a number): `u32`s, milliseconds after the base
//!   (`TIMES_NEVER`: no deadline); the time is `base + word`. The base is a
//!   whole number from 0 to 2^53 - 2^32, so `base + word` is exact.
//! - Wide (the base is NaN): `f64`s, the times themselves.
//!
//! While narrow, the engine's clock fits (its time minus the base is a whole
//! number up to `TIMES_MAX`), and the host MUST store a time in narrow
//! clocks only if it fits too (`Infinity` as `TIMES_NEVER`); otherwise it
//! leaves the write to the engine, which widens the clocks. Before the host
//! uses a clock reading that does not fit (a fraction, or past the range),
//! it MUST make a call with it at `ST_NOW`: the engine widens the clocks as
//! it catches up. If it could not (out of memory), the clocks are still
//! narrow after the call and the engine's clock did not move: the host
//! MUST NOT use the reading.
//!
//! ## The removal log
//!
//! A call that removes slots (or moves one into grace) leaves records of
//! `LOG_STRIDE` `u32` words at `ST_LOG`, `ST_LOG_LEN` words in all: the slot
//! (`LOG_SLOT`), a flags word (`LOG_FLAGS`) and the field's hash slot
//! (`LOG_PARENT`, `NIL` unless the slot was a field). The flags word holds a
//! reason (`flags & LOG_REASON_MASK`: a `REASON_*`, or `LOG_ENTER_GRACE`), the
//! slot's kind (`(flags >> LOG_KIND_SHIFT) & LOG_KIND_MASK`: a `SLOT_*`) and
//! the bits `LOG_GHOST` (remember the evicted key for the ghost queue) and
//! `LOG_GRACED` (the slot had entered grace: the host stopped counting it
//! then). Rust hosts read it through `protocol::LogRecord`.
//!
//! - The host MUST replay the log before its next call: the next call clears
//!   it, and a removed slot may be handed out again by it.
//! - The host MUST set `ST_LOG_LEN` to 0 once it has replayed the log, so that
//!   a second drain after a call that failed before publishing replays nothing.
//! - A `LOG_ENTER_GRACE` record removes nothing: the slot keeps its key and
//!   value until a later record removes it with `LOG_GRACED` set.
//!
//! The log holds a bounded chunk (`LOG_CHUNK` records at most), not one
//! record per slot in use: its room is reserved before the call, so that no
//! removal allocates and running out of memory fails the call before it
//! changes anything. A call that would log more stops when the log is full
//! and sets `ST_MORE` (any call that removes or moves slots into grace:
//! `tick` (and `purge`, which is `tick` with its purge flag), `clear`,
//! `remove`, `expireAt`, `write`, `hwrite`; never `reclaim`, whose reclaim
//! is best effort, what is left stays owed). It has then done part of its
//! work, each removal complete and logged, and none of the rest (a write has
//! written nothing yet, but the hash it evicts may be half gone).
//!
//! - After a call that set `ST_MORE`, the host MUST replay the log and make
//!   the same call again, with the same arguments and before any other call
//!   into this engine, until `ST_MORE` is 0. The call made again goes on
//!   where it stopped (a `tick` with what is left of its budget); its result
//!   is the last one's, except the counts `tick`, `purge` and `remove`
//!   return, which the host sums. It cannot fail for want of memory: the
//!   first call reserved what the whole needs.
//! - The host MUST NOT run user code between the chunks of one call (keep
//!   their `dispose` calls until the last): to the user the call is one.
//!
//! ## The slot lifecycle: reserved, filled, queued, committed
//!
//! Inserts that need no eviction skip the call: the host fills a slot the
//! engine reserved for it in advance and queues it, and the engine links it
//! at its next call.
//!
//! 1. Reserved. `reserve(n)` hands out up to `QUEUE_CAP` free slots, listed at
//!    `ST_RESERVED` (`ST_RESERVED_LEN` of them; 0 when memory ran out, and the
//!    host then writes through `write`). Their kind is `SLOT_RESERVED`: the
//!    engine never sweeps, evicts or hands them out again. The host owns them
//!    until it queues them; `reserve` also moves the queue (`ST_QUEUE`). The
//!    list stays where it is, unchanged, until the next `reserve`: the host
//!    MAY read it in place until then (it does, rather than copy it).
//! 2. Filled by the host. The host MUST write the slot's clocks
//!    (at `ST_TIMES`, narrow or wide: `TIMES_ABS`, `TIMES_LAST` = now;
//!    its idle window at `ST_IDLES`, or, while that is 0, only the cache's
//!    default) with a deadline after now (its `freq` is 0 already: a slot is
//!    handed out unread), and only when the insert needs no eviction (live
//!    entries plus queued
//!    inserts below `maxEntries`, no `maxBytes` weight).
//! 3. Queued. The host writes the slot number at word `ST_QUEUE / 4 + i`
//!    (`QUEUE_TO_MAIN` or-ed in for a returning ghost), and before its next
//!    call writes the count into `ST_QUEUED`. At most `QUEUE_CAP` are queued:
//!    with a full queue the host calls `reserve(0)`, which only links them.
//!    The host MUST write the count only right before a call that links
//!    (any but the readers `now`, `staleUntil`, `slotWeight`, `statusPtr`
//!    and `takeError`), with no user code between: it restarts its queue
//!    at 0 once it has handed the count over, so a count no call linked is
//!    overwritten, and its inserts lost (`stale()` did so before 846d04e).
//! 4. Committed. At the start of the next call the engine links every queued
//!    slot still `SLOT_RESERVED` as a plain entry of weight 0 (scheduled in the
//!    wheel, entered into the eviction queues) and zeroes `ST_QUEUED`. Each
//!    insert queued owes the write-time reclaim a `write` would have paid; the
//!    next `write`, `hwrite` or `reclaim` pays it.
//!
//! ## A write at capacity, in its victim's slot
//!
//! `swapIn(toMain)` is `write(NIL, flags)` of a new plain key with the
//! cache's own clocks and no weight (`toMain` 1 for a returning ghost, as
//! `WRITE_TO_MAIN`) when the cache is full: the engine evicts the key `write`
//! would and hands its slot to the new one. It logs nothing and returns that
//! slot, with `SWAP_GHOST` or-ed in when the victim left the small queue
//! unread. The host MUST do what replaying the victim's `REASON_EVICTED`
//! record would (its key leaves the index or becomes a ghost; `dispose`),
//! then place the new key as after `write`. `NIL`: nothing changed (room to
//! spare, anything due, hashes, weights, grace, clocks `write` refuses, a
//! deadline narrow clocks cannot hold), and the host writes through `write`
//! (which widens the clocks for such a deadline).
//!
//! ## Who may write which wasm memory, and when
//!
//! Between calls the host MAY write, and only these:
//!
//! - the clock word at `ST_NOW`, the queue count `ST_QUEUED`, and `ST_LOG_LEN`
//!   (to 0, see the log);
//! - the queue (`ST_QUEUE`) and the clocks and `freq` of reserved slots (the
//!   lifecycle above); a slot's byte at `ST_FREQ` holds the engine's own
//!   bits too, so the host only ever adds 1 to it, and only while
//!   `byte & FREQ_MAX < FREQ_MAX`;
//! - for a live slot (plain entry, hash or field) on a read: `TIMES_LAST` =
//!   now (restarting its idle window) and its `freq` byte, up to `FREQ_MAX`;
//! - for a live plain slot (its byte `>> SLOT_KIND_SHIFT` is `SLOT_PLAIN`,
//!   without `SLOT_OWN_GRACE`) on an overwrite: its clocks and its idle window
//!   (only the default while `ST_IDLES` is 0), but only when
//!   its deadline does not move earlier (the wheel reschedules a later
//!   deadline lazily when the old one fires; an earlier one needs `write`),
//!   its weight is unchanged, and its deadline is not past. Such an
//!   overwrite owes the write-time reclaim a `write` would have paid: the
//!   host MUST count them and pass the count to its next `reclaim(writes,
//!   pay)` (a stream of overwrites otherwise reclaims nothing). `pay` 0
//!   links and moves the clock but removes nothing, keeping the debt: the
//!   host MUST use it for a call that must not change the cache (a read
//!   that does not touch, or arguments not yet checked).
//!
//! Everything else in wasm memory is the engine's, and the host MUST treat
//! what it reads as valid only until its next call.
//!
//! ## Packed results
//!
//! `stats()` fills `STATS_LEN` `f64`s in `STAT_*` order and returns their
//! address. `restore(kind, parent, abs, last, idle, w)` adds a checked
//! snapshot's next slot to a fresh engine (an `ENTRY_*` kind; a field's hash
//! is slot `parent`) and returns it: 0, 1, 2, ... in the snapshot's order;
//! any other kind ends the restore, `abs` then being `maxEntries`.
//! `write`/`hwrite` return the slot written, `NIL` when the deadline
//! was already past, or `FAILED`: the call failed, and `takeError()` holds the
//! error. Writes take `WRITE_*` flags; `expireAt` a `COND_*` (0 for none);
//! `remove` a `REASON_*`, or `REASON_FOUND_EXPIRED`.
//!
//! ## Snapshot bytes
//!
//! The snapshot format (`SNAPSHOT.md`) never crosses the seam as bytes: the JS
//! host writes, checks and reads them (`decode.js` makes every check of the
//! Rust decoder, which the package's wasm does not link), and hands the
//! engine each restored slot's kind, clocks and size (`restore` above). The
//! format's numbers are the `SNAP_*` (header), `ENTRY_*` (an entry's or
//! field's flags byte) and `TAG_*` (value tags) constants, shared by the
//! Rust and JS writers and decoders. Entry kinds are `ENTRY_*`, not `SLOT_*`:
//! the format numbers its kinds from 0 and has no free or reserved entries.

// Every constant here is part of the seam, and some only the JS host uses.
#![allow(dead_code)]

/// Defines a group of constants and, for the JS generator, a function listing
/// them with their docs under a heading.
macro_rules! group {
    ($fn_name:ident, $heading:literal, $(
        $(#[doc = $doc:literal])*
        pub const $name:ident: $ty:ty = $val:expr;
    )*) => {
        $( $(#[doc = $doc])* pub const $name: $ty = $val; )*

        #[cfg(test)]
        pub(crate) fn $fn_name() -> gen::Group {
            gen::Group {
                heading: $heading,
                items: alloc::vec![$(
                    gen::Item { name: stringify!($name), value: gen::Value::from($name), doc: &[$($doc),*] },
                )*],
            }
        }
    };
}

group! { slots, "Slot numbers",
    /// No slot: a missing key, a plain entry's parent, "new" in `write`.
    pub const NIL: u32 = u32::MAX;
    /// `write`/`hwrite` failed: the error waits in `takeError()`.
    pub const FAILED: u32 = NIL - 1;
}

group! { status, "Status block: u32 word indexes from statusPtr() / 4",
    /// Byte address of the removal log.
    pub const ST_LOG: usize = 0;
    /// Words in the removal log (`LOG_STRIDE` per record); the host zeroes it
    /// once replayed.
    pub const ST_LOG_LEN: usize = 1;
    /// Slots the columns hold (`times`, `freq`).
    pub const ST_CAP: usize = 2;
    /// Byte address of the `times` column (`TIMES_STRIDE` words per slot:
    /// `u32`s while narrow, `f64`s while wide; see "Clocks").
    pub const ST_TIMES: usize = 3;
    /// Byte address of the slot bytes (one per slot): a slot's `freq` in the
    /// bits under `FREQ_MAX`, the engine's own bits above.
    pub const ST_FREQ: usize = 4;
    /// Byte address of the insert queue (`QUEUE_CAP` `u32` slot numbers).
    pub const ST_QUEUE: usize = 5;
    /// Inserts the host queued since the last call (the host writes it).
    pub const ST_QUEUED: usize = 6;
    /// Live entries (plain entries and fields), saturated at 2^32 - 1.
    pub const ST_ENTRIES: usize = 7;
    /// Byte address of the slots the last `reserve` handed out.
    pub const ST_RESERVED: usize = 8;
    /// How many slots the last `reserve` handed out.
    pub const ST_RESERVED_LEN: usize = 9;
    /// The hash slot of the field the last successful `hwrite` wrote.
    pub const ST_HASH: usize = 10;
    /// Byte address of the `f64` the host writes its clock reading into,
    /// followed by the clocks' base (`NOW_BASE`).
    pub const ST_NOW: usize = 11;
    /// 1 when the last call stopped early for want of log room (see the
    /// removal log): make it again once the log is replayed.
    pub const ST_MORE: usize = 12;
    /// Byte address of the idle column (one `f64` per slot: its idle window,
    /// or `Infinity`), or 0 while it is off: every slot then has the cache's
    /// default `idle`.
    pub const ST_IDLES: usize = 13;
    /// Words in the status block.
    pub const ST_LEN: usize = 14;
}

group! { errors, "Errors: a failed call's sentinel and lapse_error()'s record",
    /// What a failing export returns where it returns a number (a pointer
    /// export returns 0): `lapse_error()` then holds the error.
    pub const CALL_FAILED: i32 = -1;
    /// `u32` words of the record at `lapse_error()`: class, message address,
    /// message length (the message is ASCII).
    pub const ERROR_WORDS: usize = 3;
    /// The error's class: an `ERROR_*` below.
    pub const ERROR_CLASS: usize = 0;
    /// Byte address of the message.
    pub const ERROR_MSG: usize = 1;
    /// Bytes in the message.
    pub const ERROR_MSG_LEN: usize = 2;
    /// A `TypeError` (bad argument, wrong type, stale slot).
    pub const ERROR_TYPE: u32 = 0;
    /// A `RangeError` (out of range, out of memory).
    pub const ERROR_RANGE: u32 = 1;
    /// A plain `Error` (corrupt snapshot bytes).
    pub const ERROR_PLAIN: u32 = 2;
    /// A `RangeError` for out of memory. Its message is only the argument's
    /// name: the host MUST append the rest (wasm keeps no copy of that text,
    /// and building one would allocate in a memory that has none left).
    pub const ERROR_OOM: u32 = 3;
}

group! { queue, "Insert queue",
    /// Inserts the host may queue before it must call in, and the most slots
    /// one `reserve` hands out.
    pub const QUEUE_CAP: usize = 256;
    /// Or-ed into a queued slot number: a returning ghost, straight to the
    /// main queue.
    pub const QUEUE_TO_MAIN: u32 = 1 << 31;
    /// Or-ed into the slot `swapIn` returns: its victim left the small queue
    /// unread, and the host remembers its key as a ghost.
    pub const SWAP_GHOST: u32 = 1 << 31;
    /// Ghosts (recently evicted unread keys) a cache without `maxEntries`
    /// keeps at least; with it, up to `maxEntries`; without, as many as the
    /// keys it holds. Both hosts keep ghosts themselves (the engine never
    /// sees keys) and MUST use the same bound, or their eviction orders part.
    pub const GHOST_MIN: usize = 64;
}

group! { times, "Per-slot clocks: word indexes from ST_TIMES / 4 (narrow) or / 8 (wide) + slot * TIMES_STRIDE",
    /// Words per slot in the `times` column (the idle window has its own,
    /// `ST_IDLES`).
    pub const TIMES_STRIDE: usize = 2;
    /// The `f64` after the clock reading at `ST_NOW` where the engine
    /// publishes the base of narrow clocks, or NaN while they are wide.
    pub const NOW_BASE: usize = 1;
    /// A narrow clock's "no deadline" (`Infinity`).
    pub const TIMES_NEVER: u32 = u32::MAX;
    /// The most milliseconds after the base a narrow clock holds.
    pub const TIMES_MAX: u32 = TIMES_NEVER - 1;
    /// Absolute deadline, or `Infinity`. The first word: the JS host adds no
    /// offset for it.
    pub const TIMES_ABS: usize = 0;
    /// Last access (write or read); the idle deadline is this plus the
    /// slot's idle window (`ST_IDLES`).
    pub const TIMES_LAST: usize = 1;
    /// Highest value of a slot's `freq` (S3-FIFO's read counter), and the
    /// mask of its bits in the slot's byte (the lowest bits).
    pub const FREQ_MAX: u8 = 3;
    /// The slot's kind (a `SLOT_*`) is its byte `>> SLOT_KIND_SHIFT`: the host
    /// tells a hash from a plain value by it, never by asking the value.
    pub const SLOT_KIND_SHIFT: u32 = 4;
    /// The top bit of a plain slot's or field's byte: its value has a grace
    /// of its own (a `fetch`'s), which a new value does not inherit. The
    /// byte `>> SLOT_KIND_SHIFT` is then `SLOT_PLAIN` or `SLOT_FIELD` with
    /// this bit, never `SLOT_HASH`; the host MUST NOT overwrite such a slot
    /// on its side (`write` gives the new value the default grace).
    pub const SLOT_OWN_GRACE: u8 = 0x80;
}

group! { write_flags, "Write flags: the flags argument of write and hwrite",
    /// The `ttl` argument is set.
    pub const WRITE_TTL: u32 = 1;
    /// The `idle` argument is set.
    pub const WRITE_IDLE: u32 = 2;
    /// The `at` (expireAt) argument is set.
    pub const WRITE_AT: u32 = 4;
    /// Keep the entry's absolute deadline (`keepTtl`).
    pub const WRITE_KEEP_TTL: u32 = 8;
    /// A returning ghost: straight to the main queue.
    pub const WRITE_TO_MAIN: u32 = 16;
}

group! { conds, "Conditions: expireAt's cond argument (0: none)",
    /// Only if the entry has no absolute deadline.
    pub const COND_NX: u32 = 1;
    /// Only if it has one.
    pub const COND_XX: u32 = 2;
    /// Only if the new deadline is later.
    pub const COND_GT: u32 = 3;
    /// Only if the new deadline is earlier.
    pub const COND_LT: u32 = 4;
    /// Not a condition: drop both clocks instead (`persist`; one export for
    /// both, `t` and `rel` unused).
    pub const COND_PERSIST: u32 = 5;
}

group! { reasons, "Removal reasons: a log record's reason, remove's reason argument",
    /// The deadline passed.
    pub const REASON_EXPIRED: u8 = 0;
    /// Removed to make room (`maxEntries`, `maxBytes`).
    pub const REASON_EVICTED: u8 = 1;
    /// Deleted by the caller.
    pub const REASON_DELETED: u8 = 2;
    /// Replaced: a hash by a plain value or the other way round.
    pub const REASON_REPLACED: u8 = 3;
    /// `clear()`.
    pub const REASON_CLEARED: u8 = 4;
    /// The names `dispose` is given, indexed by reason.
    pub const REASON_NAMES: [&str; 5] = ["expired", "evicted", "deleted", "replaced", "cleared"];
    /// `remove`'s reason for lazy expiry of a slot a read found expired: a
    /// slot with grace left enters grace instead (never in the log). On a
    /// hash whose own deadline holds, it removes the hash's expired fields
    /// (the host's `hlen`, `hgetall` and iteration, when they pass one).
    pub const REASON_FOUND_EXPIRED: u8 = 255;
}

group! { log, "Removal log: u32 words from ST_LOG / 4, LOG_STRIDE per record",
    /// Words per record.
    pub const LOG_STRIDE: usize = 3;
    /// The slot removed (or entering grace). The first word: the JS host
    /// adds no offset for it.
    pub const LOG_SLOT: usize = 0;
    /// Reason, kind and bits.
    pub const LOG_FLAGS: usize = 1;
    /// A field's hash slot; `NIL` for a plain entry or hash.
    pub const LOG_PARENT: usize = 2;
    /// The reason: a `REASON_*` or `LOG_ENTER_GRACE`.
    pub const LOG_REASON_MASK: u32 = 15;
    /// The slot's kind (a `SLOT_*`) is `(flags >> LOG_KIND_SHIFT) & LOG_KIND_MASK`.
    pub const LOG_KIND_SHIFT: u32 = 4;
    /// See `LOG_KIND_SHIFT`.
    pub const LOG_KIND_MASK: u32 = 7;
    /// An evicted key the host remembers for S3-FIFO's ghost queue.
    pub const LOG_GHOST: u32 = 1 << 7;
    /// The slot had entered grace: the host stopped counting it then, and
    /// must not uncount it again.
    pub const LOG_GRACED: u32 = 1 << 8;
    /// A reason that removes nothing: the slot's deadline passed and it waits
    /// out its grace, its key and value kept for the host's loaders.
    pub const LOG_ENTER_GRACE: u32 = 5;
    /// Records a call's log holds at most (48 KB; the room reserved is
    /// this or, in a smaller cache, two more than the slots in use): a call
    /// that would log more stops early (`ST_MORE`). A default `tick` (budget
    /// 1000: about a record per removal) fits.
    pub const LOG_CHUNK: usize = 4096;
}

group! { slot_kinds, "Slot kinds (the engine's): a log record's kind",
    /// Not in use.
    pub const SLOT_FREE: u8 = 0;
    /// A plain entry.
    pub const SLOT_PLAIN: u8 = 1;
    /// A hash (its fields are slots of their own).
    pub const SLOT_HASH: u8 = 2;
    /// A hash field.
    pub const SLOT_FIELD: u8 = 3;
    /// Handed to the host by `reserve`, not yet committed.
    pub const SLOT_RESERVED: u8 = 4;
}

group! { stats, "stats(): f64 indexes from its result / 8",
    /// Counter: entries removed at their deadline.
    pub const STAT_EXPIRED: usize = 0;
    /// Counter: entries evicted.
    pub const STAT_EVICTED: usize = 1;
    /// Counter: entries deleted.
    pub const STAT_DELETED: usize = 2;
    /// Counter: new entries.
    pub const STAT_INSERTED: usize = 3;
    /// Counter: overwrites the engine saw.
    pub const STAT_UPDATED: usize = 4;
    /// Counter: `tick` calls.
    pub const STAT_TICKS: usize = 5;
    /// Counter: slots the sweeps visited.
    pub const STAT_SWEPT: usize = 6;
    /// Counter: wheel reschedules.
    pub const STAT_RESCHEDULED: usize = 7;
    /// Counter: wheel cascades.
    pub const STAT_CASCADED: usize = 8;
    /// Gauge: slots in the wheel.
    pub const STAT_SCHEDULED: usize = 9;
    /// Gauge: top-level keys (plain entries and hashes), grace included.
    pub const STAT_KEYS: usize = 10;
    /// Gauge: live entries (plain entries and fields).
    pub const STAT_ENTRIES: usize = 11;
    /// Gauge: the sum of the entries' sizes.
    pub const STAT_BYTES: usize = 12;
    /// Gauge: slots in S3-FIFO's small queue.
    pub const STAT_SMALL_QUEUE: usize = 13;
    /// Gauge: bytes the engine's own structures hold.
    pub const STAT_ENGINE_BYTES: usize = 14;
    /// Gauge: top-level keys in grace.
    pub const STAT_GRACED_KEYS: usize = 15;
    /// `f64`s `stats()` fills.
    pub const STATS_LEN: usize = 16;
}

group! { snap, "Snapshot header (SNAPSHOT.md)",
    /// The 4 bytes every snapshot starts with.
    pub const SNAP_MAGIC: [u8; 4] = [0x89, b'L', b'P', b'S'];
    /// The format version written (version 1 is read too).
    pub const SNAP_VERSION: u16 = 2;
    /// Header flag (version 2): the cache followed a clock rather than moving
    /// only with `tick`.
    pub const SNAP_FLAG_FOLLOWS: u64 = 1;
    /// Byte offset of the version (`u16`, little-endian).
    pub const SNAP_VERSION_AT: usize = 4;
    /// Byte offset of the header flags (`u16`, little-endian).
    pub const SNAP_FLAGS_AT: usize = 6;
    /// Byte offset of the total length (`u64`, little-endian).
    pub const SNAP_LENGTH_AT: usize = 8;
    /// Header bytes: magic, version, flags, total length.
    pub const SNAP_HEADER_LEN: usize = 16;
    /// The `f64` options after the header (now, ttl, idle), in bytes.
    pub const SNAP_CLOCKS_LEN: usize = 24;
    /// Trailer bytes (the CRC-32).
    pub const SNAP_TRAILER_LEN: usize = 4;
    /// Deepest nesting of arrays, objects and maps inside one value.
    pub const SNAP_MAX_DEPTH: usize = 64;
}

group! { entry_flags, "Snapshot entry flags: an entry's or field's flags byte",
    /// A plain entry.
    pub const ENTRY_PLAIN: u8 = 0;
    /// A hash (its fields follow).
    pub const ENTRY_HASH: u8 = 1;
    /// A hash field.
    pub const ENTRY_FIELD: u8 = 2;
    /// The kind is `flags & ENTRY_KIND_MASK`.
    pub const ENTRY_KIND_MASK: u8 = 3;
    /// An absolute deadline follows.
    pub const ENTRY_HAS_ABS: u8 = 1 << 2;
    /// An idle window follows.
    pub const ENTRY_HAS_IDLE: u8 = 1 << 3;
    /// A non-zero size follows.
    pub const ENTRY_HAS_WEIGHT: u8 = 1 << 4;
}

group! { tags, "Snapshot value tags",
    /// `undefined`.
    pub const TAG_UNDEFINED: u8 = 0;
    /// `null`.
    pub const TAG_NULL: u8 = 1;
    /// `false`.
    pub const TAG_FALSE: u8 = 2;
    /// `true`.
    pub const TAG_TRUE: u8 = 3;
    /// A safe integer, zigzag varint.
    pub const TAG_INT: u8 = 4;
    /// Any other number, `f64`.
    pub const TAG_FLOAT: u8 = 5;
    /// A string.
    pub const TAG_STRING: u8 = 6;
    /// An array.
    pub const TAG_ARRAY: u8 = 7;
    /// A plain object.
    pub const TAG_OBJECT: u8 = 8;
    /// An object with a null prototype.
    pub const TAG_NULL_OBJECT: u8 = 9;
    /// A `Uint8Array`.
    pub const TAG_BYTES: u8 = 10;
    /// A `Date`.
    pub const TAG_DATE: u8 = 11;
    /// A `Map`.
    pub const TAG_MAP: u8 = 12;
    /// A non-negative `BigInt`.
    pub const TAG_BIGINT: u8 = 13;
    /// A negative `BigInt`.
    pub const TAG_NEG_BIGINT: u8 = 14;
}

// The JS host reads the first word of a slot's clocks and of a log record
// with no offset added: an added 0 is bytecode in `get` and `set`, which must
// stay under V8's inlining budget.
const _: () = assert!(TIMES_ABS == 0 && LOG_SLOT == 0);

/// One removal-log record, as both hosts read it (the JS host through the
/// generated `LOG_*` offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LogRecord {
    /// The slot removed, or entering grace.
    pub slot: u32,
    /// A `REASON_*`, or `LOG_ENTER_GRACE`.
    pub reason: u8,
    /// The slot's kind, a `SLOT_*`.
    pub kind: u8,
    /// Remember the key for the ghost queue.
    pub ghost: bool,
    /// The slot had entered grace.
    pub graced: bool,
    /// A field's hash slot; `NIL` otherwise.
    pub parent: u32,
}

impl LogRecord {
    /// The record's words, as the engine appends them to its log.
    pub fn words(&self) -> [u32; LOG_STRIDE] {
        let mut w = [0; LOG_STRIDE];
        w[LOG_SLOT] = self.slot;
        debug_assert!(u32::from(self.reason) <= LOG_REASON_MASK && u32::from(self.kind) <= LOG_KIND_MASK);
        w[LOG_FLAGS] = u32::from(self.reason)
            | (u32::from(self.kind) << LOG_KIND_SHIFT)
            | (u32::from(self.ghost) * LOG_GHOST)
            | (u32::from(self.graced) * LOG_GRACED);
        w[LOG_PARENT] = self.parent;
        w
    }

    /// Reads one record from its `LOG_STRIDE` words.
    pub fn read(w: &[u32]) -> LogRecord {
        let flags = w[LOG_FLAGS];
        LogRecord {
            slot: w[LOG_SLOT],
            reason: (flags & LOG_REASON_MASK) as u8,
            kind: ((flags >> LOG_KIND_SHIFT) & LOG_KIND_MASK) as u8,
            ghost: flags & LOG_GHOST != 0,
            graced: flags & LOG_GRACED != 0,
            parent: w[LOG_PARENT],
        }
    }

    /// Every record of a log.
    pub fn all(log: &[u32]) -> impl Iterator<Item = LogRecord> + '_ {
        log.chunks_exact(LOG_STRIDE).map(LogRecord::read)
    }

    /// Whether the record moves its slot into grace rather than removing it.
    pub fn enters_grace(&self) -> bool {
        u32::from(self.reason) == LOG_ENTER_GRACE
    }
}

/// The generator of `pkg-template/src/protocol.js`, and the test that keeps
/// it current.
#[cfg(test)]
mod gen {
    use alloc::string::{String, ToString};
    use alloc::vec::Vec;
    use core::fmt::Write;

    pub struct Group {
        pub heading: &'static str,
        pub items: Vec<Item>,
    }

    pub struct Item {
        pub name: &'static str,
        pub value: Value,
        pub doc: &'static [&'static str],
    }

    pub enum Value {
        Int(i64),
        Ints(Vec<u64>),
        Strs(Vec<&'static str>),
    }

    macro_rules! from_int {
        ($($t:ty),*) => { $(impl From<$t> for Value { fn from(v: $t) -> Value { Value::Int(v as i64) } })* };
    }
    from_int!(u8, u16, u32, u64, usize, i32);

    impl<const N: usize> From<[u8; N]> for Value {
        fn from(v: [u8; N]) -> Value {
            Value::Ints(v.iter().map(|&x| u64::from(x)).collect())
        }
    }

    impl<const N: usize> From<[&'static str; N]> for Value {
        fn from(v: [&'static str; N]) -> Value {
            Value::Strs(v.to_vec())
        }
    }

    fn groups() -> Vec<Group> {
        use super::*;
        alloc::vec![
            slots(),
            errors(),
            status(),
            queue(),
            times(),
            write_flags(),
            conds(),
            reasons(),
            log(),
            slot_kinds(),
            stats(),
            snap(),
            entry_flags(),
            tags(),
        ]
    }

    pub const JS_PATH: &str = "pkg-template/src/protocol.js";

    /// The JS module: the module documentation as a comment, then every
    /// constant, same name and value, its doc as a JSDoc comment.
    pub fn render_js() -> String {
        let mut out = String::new();
        out.push_str("// Generated by `make protocol` from src/protocol.rs: do not edit.\n");
        out.push_str("// The host <-> engine protocol: every number that crosses the seam.\n//\n");
        for line in include_str!("protocol.rs").lines() {
            if let Some(rest) = line.strip_prefix("//!") {
                let _ = writeln!(out, "//{}", rest.trim_end());
            }
        }
        // Numbers first, arrays last: esbuild inlines an imported constant
        // into the bundle only while no other kind of declaration precedes
        // it in its module (measured: esbuild 0.28).
        let (mut numbers, mut arrays) = (String::new(), String::new());
        for g in groups() {
            let _ = write!(numbers, "\n// ---- {}\n", g.heading);
            for it in g.items {
                let out = if matches!(it.value, Value::Int(_)) { &mut numbers } else { &mut arrays };
                let doc: Vec<String> = it.doc.iter().map(|d| d.trim().to_string()).collect();
                let doc = doc.join(" ");
                let doc = if matches!(it.value, Value::Int(_)) { doc } else { [&doc, " (", g.heading, ")"].concat() };
                if !doc.is_empty() {
                    let _ = writeln!(out, "/** {} */", doc.replace("*/", "* /"));
                }
                let v = match &it.value {
                    Value::Int(x) => x.to_string(),
                    Value::Ints(xs) => {
                        let xs: Vec<String> = xs.iter().map(u64::to_string).collect();
                        ["[", &xs.join(", "), "]"].concat()
                    }
                    Value::Strs(xs) => {
                        let xs: Vec<String> = xs.iter().map(|s| ["\"", s, "\""].concat()).collect();
                        ["[", &xs.join(", "), "]"].concat()
                    }
                };
                let _ = writeln!(out, "export const {} = {};", it.name, v);
            }
        }
        out.push_str(&numbers);
        out.push_str("\n// ---- Arrays (last: see src/protocol.rs `render_js`)\n");
        out.push_str(&arrays);
        out
    }

    #[test]
    fn names_are_unique_and_exact_in_js() {
        let mut seen = std::collections::HashSet::new();
        for g in groups() {
            for it in g.items {
                assert!(seen.insert(it.name), "{} defined twice", it.name);
                if let Value::Int(x) = it.value {
                    // JS numbers hold every integer up to 2^53 exactly.
                    assert!(x.unsigned_abs() < 1 << 53, "{} does not fit a JS number", it.name);
                }
            }
        }
    }

    /// `pkg-template/src/protocol.js` is what `render_js` writes today.
    /// `LAPSE_BLESS=1` (`make protocol`) rewrites it.
    #[test]
    fn generated_js_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(JS_PATH);
        let fresh = render_js();
        if std::env::var_os("LAPSE_BLESS").is_some() {
            std::fs::write(&path, &fresh).unwrap();
        }
        let file = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            file == fresh,
            "{JS_PATH} is out of date with src/protocol.rs: run `make protocol` (LAPSE_BLESS=1 cargo test --lib protocol)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Clocks, Kind};
    use crate::types::Reason;

    /// The engine's own types agree with the numbers the hosts use.
    #[test]
    fn engine_types_match_the_protocol() {
        for (k, code) in [
            (Kind::Free, SLOT_FREE),
            (Kind::Plain, SLOT_PLAIN),
            (Kind::Hash, SLOT_HASH),
            (Kind::Field, SLOT_FIELD),
            (Kind::Reserved, SLOT_RESERVED),
        ] {
            assert_eq!(k as u8, code);
        }
        for (r, code) in [
            (Reason::Expired, REASON_EXPIRED),
            (Reason::Evicted, REASON_EVICTED),
            (Reason::Deleted, REASON_DELETED),
            (Reason::Replaced, REASON_REPLACED),
            (Reason::Cleared, REASON_CLEARED),
        ] {
            assert_eq!(r as u8, code);
            assert_eq!(Reason::from_u8(code), r);
            assert_eq!(REASON_NAMES[code as usize], r.as_str());
        }
        assert_eq!(core::mem::size_of::<Clocks>(), TIMES_STRIDE * 8);
        let t = Clocks { abs: 1.0, last: 2.0 };
        // SAFETY: Clocks is #[repr(C)] of two f64s (checked above).
        let a: [f64; 2] = unsafe { core::mem::transmute(t) };
        assert_eq!((a[TIMES_ABS], a[TIMES_LAST]), (1.0, 2.0));
        assert_eq!(crate::policy::MAX_FREQ, FREQ_MAX);
        assert!((FREQ_MAX + 1).is_power_of_two(), "FREQ_MAX is the mask of the low bits");
        assert_eq!(crate::list::NIL, NIL);
    }

    #[test]
    fn log_record_round_trips() {
        let r = LogRecord { slot: 7, reason: REASON_EVICTED, kind: SLOT_FIELD, ghost: true, graced: true, parent: 3 };
        assert_eq!(LogRecord::read(&r.words()), r);
        let w = r.words();
        assert_eq!(w[LOG_FLAGS], 1 | 3 << 4 | 1 << 7 | 1 << 8);
        let g = LogRecord { reason: LOG_ENTER_GRACE as u8, ..r };
        assert!(g.enters_grace() && !r.enters_grace());
        assert_eq!(LogRecord::all(&[w, g.words()].concat()).collect::<alloc::vec::Vec<_>>(), [r, g]);
    }
}
