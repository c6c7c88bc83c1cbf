// The JS face of lapse. Keys, values and the key -> slot index live here, in
// a JS Map; deadlines, the expiry wheel, eviction order and sweeping live in
// wasm. Reads (`get`, `has`, `peek`, `touch`, `ttl`) never cross into wasm:
// they read the slot's [abs, last] clocks (and its idle window, from its
// own column once any differs from the cache's default) and bump its eviction counter
// through typed-array views of wasm memory. Writes pass only numbers. The
// clocks are narrow (u32 ms after a base, #base) while every time fits,
// else f64s (#narrow false): see "Clocks" in protocol.js.
//
// After every call that changes the engine, `#drain()` replays the engine's
// removal log (three u32 words per removed slot) and refreshes the views,
// which go stale whenever wasm memory grows (any cache instance can grow it,
// so the views are module-wide). A call can also grow memory and then throw,
// and a user callback can make another cache do so, so no code trusts the
// views it last saw: everything that reads them checks for a detached
// buffer first (`syncViews()`), or, on the hot paths, reads through a check that
// fails safe (a detached view reads `undefined`: "not live", then re-check).

import { RawEngine, oom } from "./glue.js";
import { epoch, clockOption, readClock, stamp } from "./clock.js";
import {
  FAILED, FREQ_MAX as FREQ_MAX_, GHOST_MIN, LOG_ENTER_GRACE as LOG_ENTER_GRACE_, LOG_FLAGS as LOG_FLAGS_,
  LOG_GHOST as LOG_GHOST_, LOG_GRACED as LOG_GRACED_, LOG_KIND_MASK as LOG_KIND_MASK_,
  LOG_KIND_SHIFT as LOG_KIND_SHIFT_, LOG_PARENT as LOG_PARENT_, LOG_REASON_MASK as LOG_REASON_MASK_,
  LOG_STRIDE as LOG_STRIDE_, NIL as NIL_, NOW_BASE, QUEUE_CAP as QUEUE_CAP_, QUEUE_TO_MAIN as QUEUE_TO_MAIN_, REASON_CLEARED,
  REASON_DELETED, REASON_EVICTED, REASON_FOUND_EXPIRED, REASON_NAMES, SLOT_FIELD as SLOT_FIELD_,
  SLOT_HASH as SLOT_HASH_, SLOT_KIND_SHIFT as SLOT_KIND_SHIFT_, SLOT_PLAIN as SLOT_PLAIN_, ST_CAP, SWAP_GHOST as SWAP_GHOST_, ST_ENTRIES as ST_ENTRIES_, ST_FREQ, ST_LOG, ST_LOG_LEN,
  ST_MORE, ST_NOW, ST_QUEUE, ST_QUEUED as ST_QUEUED_, ST_RESERVED, ST_RESERVED_LEN, ST_TIMES, ST_IDLES,
  TIMES_LAST as TIMES_LAST_, TIMES_MAX as TIMES_MAX_, TIMES_NEVER as TIMES_NEVER_, TIMES_STRIDE as TIMES_STRIDE_, WRITE_AT as WRITE_AT_, WRITE_IDLE,
  WRITE_KEEP_TTL as WRITE_KEEP_TTL_, WRITE_TO_MAIN as WRITE_TO_MAIN_, WRITE_TTL
} from "./protocol.js";
import { commandMethods } from "./commands.js";
import { isHash } from "./hash.js";
import { hashMethods, liveKey } from "./hashes.js";
import { iterationMethods } from "./iteration.js";
import { invalidate, invalidateAll, loadMethods, newLoads } from "./loading.js";
import { F64, U8, U32, attachMemory, syncViews } from "./memory.js";
import { restoreCache, takeAdopted } from "./restore.js";
import { snapshotMethods } from "./snapshot.js";
import {
  CTOR_OPTIONS, checkOptions, checkString, checkValue, describe, optionalFunction, optionalNumber, optionalSpan,
  parseWrite, wAt, wIdle, wTtl, wrongType
} from "./validate.js";

// Module-local copies of the protocol's numbers the hot paths (get, set,
// the log replay) use: V8 (Node 20) folds a module's own consts into
// optimized code but loads an imported binding from its module cell at
// every use (measured: a clock read through an imported TIMES_STRIDE
// compiled to 190 instructions with an imul by a loaded value; through a
// local const, to 118 with `imul 3`, as with a literal).
// Counts #drain's look-ahead loads, only so that the compiler keeps them
// (nothing reads it: a callback that runs another cache's drain is harmless).
let warmed = 0;
// A small cache kept for the life of the module, made by the first
// constructor: V8 holds the hidden classes of this class and of its engine
// only weakly, so when the last cache is collected they go, and with them
// every optimized function that checks them (--trace-deopt: "weak objects").
// A program that drops its cache and makes another then ran the new one's
// first calls unoptimized: the first dozen ticks of a 1M-entry cache took
// 1.0-1.5 ms instead of 0.4 (session 9, bench (e)).
let shapes;
const FREQ_MAX = FREQ_MAX_,
  LOG_ENTER_GRACE = LOG_ENTER_GRACE_,
  LOG_FLAGS = LOG_FLAGS_,
  LOG_GHOST = LOG_GHOST_,
  LOG_GRACED = LOG_GRACED_,
  LOG_KIND_MASK = LOG_KIND_MASK_,
  LOG_KIND_SHIFT = LOG_KIND_SHIFT_,
  LOG_PARENT = LOG_PARENT_,
  LOG_REASON_MASK = LOG_REASON_MASK_,
  LOG_STRIDE = LOG_STRIDE_,
  NIL = NIL_,
  QUEUE_CAP = QUEUE_CAP_,
  QUEUE_TO_MAIN = QUEUE_TO_MAIN_,
  SLOT_FIELD = SLOT_FIELD_,
  SLOT_HASH = SLOT_HASH_,
  SLOT_KIND_SHIFT = SLOT_KIND_SHIFT_,
  SLOT_PLAIN = SLOT_PLAIN_,
  ST_ENTRIES = ST_ENTRIES_,
  ST_QUEUED = ST_QUEUED_,
  SWAP_GHOST = SWAP_GHOST_,
  TIMES_LAST = TIMES_LAST_,
  TIMES_MAX = TIMES_MAX_,
  TIMES_NEVER = TIMES_NEVER_,
  TIMES_STRIDE = TIMES_STRIDE_,
  WRITE_AT = WRITE_AT_,
  WRITE_KEEP_TTL = WRITE_KEEP_TTL_,
  WRITE_TO_MAIN = WRITE_TO_MAIN_;

// Accessors to a cache's private state, for the modules that hold its method
// groups (set in the class's static block).
export let syncClock, alive, toEngine, drain, flush, written, place, index, measure, live, read, slot, liveSlot,
  expireNow, deadline, idleOf, trackBirths, keyMap, keyList, valList, sizeOf, engine, statusAt, clockOf,
  now, setNow, clock, opts, born, bornFrom, runningLoads, running, loads, hit, miss, counters, payOwed, owing;

// A dropped cache's engine is freed by the glue (glue.js), which registers
// every RawEngine with a FinalizationRegistry: only its TtlCache refers to
// it, so both go together (tests/js/exhaustion.test.mjs checks it).

function freed() {
  return new Error("TtlCache: this cache was freed");
}

/** Grows `a` in place to `cap`, padding with `undefined` (no holes). */
function grow(a, cap) {
  const n = a.length;
  a.length = cap;
  a.fill(undefined, n);
}

/**
 * A TTL cache with an absolute lifetime and a sliding idle window per entry,
 * and per-field expiry in hashes. It follows `Date.now()` (or `clock`) by
 * default; `now` gives a manual clock the host moves with `tick()`.
 */
export class TtlCache {
  #engine;
  #statusAt; // index of the status block in U32
  #slotCap = -1; // engine slot capacity the views were last based on
  #clocksAt = 0; // index of slot 0's clocks in U32 (narrow) or F64 (wide)
  #narrow = false; // clocks in U32, ms after #base; else in F64 (#base 0)
  #base = 0;
  #idlesAt = 0; // index of slot 0's idle window in F64; 0: off, every slot has #idle
  #freqAt = 0; // byte offset of slot 0's frequency counter in U8
  #now;
  #clock; // the followed clock, or undefined for a manual one
  #seenEpoch = 0; // the epoch #now was read in
  #clockAt = 0; // index in F64 of the engine's copy of the clock
  #reclaimOwed = false; // inserts handed to the engine since the last reclaim
  #readEpoch = 0; // the epoch of this run's clock reading
  #payDue = false; // the clock moved since writes owed their reclaim (see #time)
  // key -> slot, or -seq for a ghost: a recently evicted unread key (the
  // S3-FIFO ghost queue). Ghosts share the index so a write looks a key up
  // once, and an eviction overwrites the entry instead of deleting it here
  // and adding it to a second Map.
  #keyMap = new Map();
  #keyList = []; // slot -> key (or field name)
  #valList = []; // slot -> value (or Hash)
  #dispose;
  #sizeOf;
  #ghosts = 0; // ghost entries in #keyMap
  #ghostCap = 0; // 0: as many ghosts as live keys (no maxEntries)
  #ghostFifo = []; // ghost keys, oldest first from #ghostHead; undefined: one that returned
  #ghostHead = 0;
  #ghostBase = 1; // the index holds -(#ghostBase + i) for the ghost at #ghostFifo[i]
  #opts;
  #ttl; // default clocks, for writes done on this side
  #idle;
  #maxEntries;
  // Slots reserved in wasm for inserts done on this side: the engine's list
  // (binding.rs ST_RESERVED), read in place, and how many at its end are left.
  #reservedEnd = 0; // U32 index just past the list
  #reservedLeft = 0;
  #insertQueueAt = 0; // U32 index of the engine's insert queue (binding.rs ST_QUEUE)
  #queuedInserts = 0; // inserts queued there since the last call
  #hits = 0;
  #misses = 0;
  #updated = 0; // overwrites done on this side alone (#overwrite)
  #updatedPaid = 0; // #updated when the engine last reclaimed what they owe
  // ---- loading (fetch/hfetch) ----
  #graced = 0; // keys in #keyMap that are in grace (not counted in size)
  #runningLoads = 0; // loads in #loads: writes check it before looking
  #loads; // the running loads, fetch defaults and counters (loading.js)
  #doomed = []; // [key, field, ...] whose loads a removal found in #drain invalidates
  #held = null; // dispose calls of a call's chunks before its last (see #more)
  #debt; // `{ error }`: a dispose error of the reclaim a write paid first (see #catchUp)
  #grace = 0;
  // Write times, slot -> ms, kept only once a fetch may refresh: a column
  // every cache paid for would cost 8 bytes per entry. A slot written before
  // #bornFrom has no stamp; it is at least `now - #bornFrom` ms old.
  #born = null;
  #bornFrom = 0;

  /**
   * @param {object} [options] `now` (a manual clock) or `clock`, `ttl`,
   *   `idle`, `maxEntries`, `maxBytes`, `sizeOf`, `sweepBudget`, `dispose`,
   *   `refresh`, `grace`, `onLoadError`;
   *   all optional.
   */
  constructor(options) {
    // Taken before any user code (a clock) runs: it may restore another cache.
    const adopted = takeAdopted();
    attachMemory();
    const o = options === undefined ? {} : options;
    checkOptions("options", o, CTOR_OPTIONS);
    const optNow = o.now;
    const clock = clockOption(optNow, o.clock);
    const ttl = optionalNumber("ttl", o.ttl, Infinity);
    const idle = optionalNumber("idle", o.idle, Infinity);
    const maxEntries = optionalNumber("maxEntries", o.maxEntries, Infinity);
    const maxBytes = optionalNumber("maxBytes", o.maxBytes, Infinity);
    const sweepBudget = optionalNumber("sweepBudget", o.sweepBudget, 1000);
    this.#sizeOf = optionalFunction("sizeOf", o.sizeOf);
    this.#dispose = optionalFunction("dispose", o.dispose);
    const refresh = optionalSpan("refresh", o.refresh, undefined);
    const grace = optionalSpan("grace", o.grace, 0);
    this.#loads = newLoads(refresh, optionalFunction("onLoadError", o.onLoadError));
    if (maxBytes !== Infinity && this.#sizeOf === undefined) {
      throw new TypeError("sizeOf: is required when maxBytes is set");
    }
    // A clock that cannot be read yet (a fake one set up after the cache)
    // is read again by the first call that needs it, which throws if it
    // still fails: the error comes from the call that read it.
    let now = optNow;
    let read = clock !== undefined;
    if (read) {
      try {
        now = readClock(clock);
      } catch {
        now = read = 0;
      }
    }
    this.#clock = clock;
    this.#engine = adopted ?? new RawEngine(now, ttl, idle, maxEntries, maxBytes, sweepBudget);
    this.#engine.owner = this; // for its `more()` (the static block)
    syncViews();
    this.#statusAt = this.#engine.statusPtr() >>> 2;
    this.#clockAt = U32[this.#statusAt + ST_NOW] >>> 3;
    // A restored engine is at the snapshot's time: never run back behind it.
    const at = this.#engine.now();
    this.#now = now > at ? now : at;
    if (read) this.#seenEpoch = this.#readEpoch = stamp();
    this.#opts = { ttl, idle, maxEntries, maxBytes, sweepBudget };
    this.#ttl = ttl;
    this.#idle = idle;
    this.#maxEntries = maxEntries;
    if (maxEntries !== Infinity) this.#ghostCap = maxEntries;
    if (grace > 0) {
      this.#grace = grace;
      this.#engine.setGrace(NIL, grace); // allocates: the views may be stale after it
    }
    this.#drain(); // where the columns are (a restored engine's clocks are wide)
    if (refresh !== undefined) this.#trackBirths();
    if (shapes === undefined) shapes = (shapes = null, new TtlCache());
  }

  // ---- plumbing -----------------------------------------------------------

  /**
   * The engine, after handing it the clock and the inserts queued on this
   * side: every call into wasm goes through here, so the engine never sees
   * a stale state.
   */
  #toEngine() {
    const e = this.#engine;
    if (e === null) throw freed();
    syncViews();
    F64[this.#clockAt] = this.#now;
    if (this.#queuedInserts !== 0) {
      U32[this.#statusAt + ST_QUEUED] = this.#queuedInserts;
      this.#queuedInserts = 0;
      this.#reclaimOwed = true;
    }
    return e;
  }

  /**
   * Returns the wasm memory this cache holds (its engine) now, rather than
   * when the garbage collector finds it unreachable. Every method then
   * throws. Running loads end as `clear()` ends them: they store nothing,
   * their signals abort, and their waiters still get their outcome.
   * Calling it again does nothing.
   */
  free() {
    const e = this.#engine;
    if (e === null) return;
    this.#engine = null;
    // Its loads end once the engine is gone: an abort listener (user code)
    // that calls back finds the cache freed, not half-freed.
    const ending = this.#runningLoads !== 0;
    this.#keyMap = new Map();
    this.#keyList = [];
    this.#valList = [];
    this.#reservedLeft = 0;
    this.#queuedInserts = 0;
    this.#ghosts = 0;
    this.#ghostFifo = [];
    this.#ghostHead = 0;
    e.free();
    syncViews();
    if (ending) invalidateAll(this);
  }

  /** The error of a failed write, after re-reading where the columns are. */
  #failed() {
    const err = this.#engine.takeError();
    // The calls a reclaim before the failed write logged (#payQueued) wait
    // for the next drain: dropped here, their values were never disposed.
    this.#held = this.#drain();
    return err;
  }

  /** Throws if `free()` was called (the read paths' misses come here). */
  #alive() {
    if (this.#engine === null) throw freed();
  }

  /**
   * Reads a followed clock, once per synchronous run: every method that
   * depends on time calls this first (`if (this.#seenEpoch !== epoch)`), before
   * it looks up any slot, because a `clock` is user code that may call
   * into this cache. A moved clock also makes the writes made since owe
   * their reclaim (which removes expired entries and may call `dispose`),
   * paid only by a call that may change the cache, and only once its
   * arguments are valid (`pay`: its key, else false): a read that does not
   * touch, or a call that throws for a bad argument or WRONGTYPE, changes
   * nothing (probes found all three removing entries). Until a call pays,
   * every call of the run comes back here (`#seenEpoch` left stale), the
   * clock not read again.
   */
  #time(pay) {
    // Before the clock: user code does not run for a freed cache.
    this.#alive();
    const c = this.#clock;
    // (A manual clock has no reading to take, but may owe a run's
    // overwrites' reclaim: see #overwrite.)
    if (c === undefined) this.#seenEpoch = epoch;
    else if (this.#readEpoch !== epoch) {
      // Before the read: a re-entrant call from the clock uses the old reading.
      this.#seenEpoch = this.#readEpoch = stamp();
      const r = readClock(c);
      // Overwrites on this side owe a reclaim too (a probe: a stream of
      // them with a ttl, 2M writes to 100 hot keys, held 100k dead ones):
      // due when the clock moves, or after as many as the insert queue
      // holds while it stands still (as queued inserts are).
      const owed = this.#updated - this.#updatedPaid;
      // Time never runs backwards: a clock that steps back is ignored.
      const moved = r > this.#now;
      if (moved) this.#now = r;
      if ((moved || owed >= QUEUE_CAP) && (this.#queuedInserts !== 0 || this.#reclaimOwed || owed !== 0)) this.#payDue = true;
      // Narrow clocks that cannot hold the time (this side stores `now` in
      // them with no call) are widened at once, paying or not.
      const x = this.#now - this.#base; // (as in #overwrite)
      if (this.#narrow && (x >>> 0 !== x || x > TIMES_MAX)) this.#catchUp(false); // (paid below, if due)
    }
    if (this.#payDue) {
      // `pay`: the key of a plain write or read, not paying if a hash there
      // makes it throw WRONGTYPE (see #holds); the next call pays.
      if (typeof pay === "string" && !this.#holds(pay, true)) this.#catchUp(true);
      else this.#seenEpoch = 0;
    }
    return this.#debt !== undefined;
  }

  /**
   * Hands the engine the clock, the queued inserts and the count of this
   * side's overwrites; with `pay`, it reclaims what they owe, else it keeps
   * the debt. Returns the engine, its log not yet replayed.
   */
  #handOver(pay) {
    const e = this.#toEngine(); // hands over the queued inserts (#reclaimOwed)
    const owed = this.#updated - this.#updatedPaid;
    this.#updatedPaid = this.#updated;
    if (pay) this.#payDue = this.#reclaimOwed = false;
    else if (owed !== 0) this.#reclaimOwed = true; // the engine holds their debt
    e.reclaim(owed, pay);
    return e;
  }

  /**
   * #handOver at the start of a call, its removals replayed and disposed
   * at once. Out of memory for wider clocks, the engine stays where it
   * was, and so does this side's clock (and this throws).
   */
  #catchUp(pay) {
    const t = this.#now;
    const e = this.#handOver(pay);
    const calls = this.#drain();
    const stuck = (this.#now = e.now()) !== t;
    try {
      this.#flush(calls);
    } catch (error) {
      // Paid by a write, before it: the write still lands, then this
      // error (the first) reaches its caller (#owing). A dispose error
      // lost the write (a probe).
      if (!pay) throw error;
      this.#debt ??= { error };
    }
    if (stuck) {
      this.#owing(); // the first error (no write lands: it throws here)
      throw oom("now");
    }
  }

  /** Throws the dispose error a paid reclaim held (see #catchUp). */
  #owing() {
    const d = this.#debt;
    if (d === undefined) return;
    this.#debt = undefined;
    throw d.error;
  }

  /** A method's clock, once per run; never pays what writes owe (see #time). */
  #syncClock() {
    if (this.#seenEpoch !== epoch) this.#time(false);
  }

  /** Pays the reclaim #time found due: writes call it once their arguments are checked. */
  #payOwed(key, hash) {
    if (this.#payDue && !this.#holds(key, hash)) this.#catchUp(true);
  }

  /**
   * Whether `key`'s slot holds a hash (`hash`), else a plain value, live or not. A
   * call that may throw WRONGTYPE for it pays nothing (#time, #payOwed):
   * one that throws changes nothing (a review: a `set` on a hash key
   * reclaimed 512 expired entries, then threw). The next call pays.
   */
  #holds(key, hash) {
    syncViews();
    const s = this.#keyMap.get(key);
    // Not a hash is a plain value: an insert queued on this side (its byte
    // still SLOT_RESERVED) or one with a grace of its own (SLOT_OWN_GRACE)
    // is one too (an hset on such a key paid, then threw).
    return s >= 0 && (U8[this.#freqAt + s] >> SLOT_KIND_SHIFT === SLOT_HASH) === hash;
  }

  /** Starts stamping write times (the first fetch that may refresh). */
  #trackBirths() {
    if (this.#born !== null) return;
    this.#born = [];
    this.#bornFrom = this.#now;
    grow(this.#born, this.#slotCap);
  }

  /**
   * Replays the engine's removal log into the JS side. Returns the due
   * `dispose` calls (flattened, four per call) for `#flush`, which runs them
   * only once the caller has finished its own state changes.
   */
  #drain() {
    syncViews();
    const st = this.#statusAt;
    // Where the columns are (a call may have grown them, or turned the idle
    // column on): fewer bytes re-read than compared.
    const cap = U32[st + ST_CAP];
    this.#slotCap = cap;
    const b = F64[this.#clockAt + NOW_BASE];
    const narrow = b === b; // (NaN: wide)
    this.#narrow = narrow;
    this.#base = narrow ? b : 0;
    this.#clocksAt = U32[st + ST_TIMES] >>> (narrow ? 2 : 3);
    this.#idlesAt = U32[st + ST_IDLES] >>> 3;
    this.#freqAt = U32[st + ST_FREQ];
    // Keep the slot arrays free of holes and as long as the engine's columns: V8
    // reads and writes past the end, or into holes, on a slow path. One
    // reallocation per growth, not one push per slot; the columns of a
    // bounded cache jump to their bound at 1/16 of it (`Engine::try_grow`),
    // and so do these (the last doublings cost ~8% of filling 100k keys:
    // interleaved A/B, session 8, when these jumped on their own).
    if (this.#keyList.length < cap) {
      grow(this.#keyList, cap);
      grow(this.#valList, cap);
    }
    if (this.#born !== null && this.#born.length < cap) grow(this.#born, cap);
    const n = U32[st + ST_LOG_LEN];
    let calls = this.#held;
    this.#held = null;
    if (n === 0) return calls;
    // Consumed: a drain after a call that failed before publishing must not
    // replay it (its slots may hold other keys by then).
    U32[st + ST_LOG_LEN] = 0;
    const keys = this.#keyList;
    const vals = this.#valList;
    if (calls === null && this.#dispose !== undefined) calls = [];
    let p = U32[st + ST_LOG] >>> 2;
    const end = p + n;
    while (p < end) {
      const s = U32[p];
      const flags = U32[p + LOG_FLAGS];
      const parent = U32[p + LOG_PARENT];
      p += LOG_STRIDE;
      // Each Map.delete waits on a chain of cache misses (the slot's key,
      // the string's hash, the table), and a tick's removals at 1M keys are
      // scattered: loading the next record's key string now overlaps its
      // misses with this delete's (a whole tick about 12% faster at 1M).
      if (p < end && typeof keys[U32[p]] === "string") warmed++;
      const kind = (flags >>> LOG_KIND_SHIFT) & LOG_KIND_MASK;
      const reason = flags & LOG_REASON_MASK;
      if (reason === LOG_ENTER_GRACE) {
        // The slot keeps its key and value for fetch; a key (a plain entry,
        // or a hash all of whose fields are in grace) leaves `size`.
        if (kind !== SLOT_FIELD) this.#graced++;
        if (kind === SLOT_HASH) vals[s].graced = true;
        continue;
      }
      if (flags & LOG_GRACED && kind !== SLOT_FIELD) this.#graced--;
      const key = keys[s];
      if (this.#runningLoads !== 0 && (reason === REASON_EVICTED || reason === REASON_DELETED || reason === REASON_CLEARED)) {
        if (kind === SLOT_FIELD) this.#doomed.push(keys[parent], key);
        else if (kind === SLOT_PLAIN) this.#doomed.push(key, undefined);
      }
      // The value is read only for a dispose: without one, no load from a
      // cold line (a tick at 1M entries replays 1000 removals scattered
      // over the slot arrays).
      if (kind === SLOT_FIELD) {
        vals[parent].fields.delete(key);
        if (calls !== null) calls.push(vals[s], keys[parent], REASON_NAMES[reason], key);
      } else {
        // Only a bounded cache evicts, so only a bounded cache has ghosts.
        if (flags & LOG_GHOST) this.#remember(key);
        else this.#keyMap.delete(key);
        if (kind === SLOT_PLAIN && calls !== null) calls.push(vals[s], key, REASON_NAMES[reason], undefined);
      }
    }
    // The slots' arrays are cleared after the replay: a removed slot's value
    // is a store to a line nothing else in the loop touches, and a tick at
    // 1M keys replays 1000 scattered ones. Stores with no Map.delete between
    // them overlap their misses (a tick's replay about 4-8% faster,
    // bench/churn-ab.mjs). A slot in grace keeps its key and value.
    for (let q = U32[st + ST_LOG] >>> 2; q < end; q += LOG_STRIDE) {
      if ((U32[q + LOG_FLAGS] & LOG_REASON_MASK) !== LOG_ENTER_GRACE) {
        const s = U32[q];
        keys[s] = undefined;
        vals[s] = undefined;
      }
    }
    return calls;
  }

  /** Runs the due `dispose` calls; the first error thrown reaches the caller. */
  #flush(calls) {
    if (this.#doomed.length !== 0) this.#abortDoomed();
    if (calls === null || calls.length === 0) return;
    const dispose = this.#dispose;
    let error = calls; // none yet: user code never sees this array
    for (let i = 0; i < calls.length; i += 4) {
      try {
        dispose(calls[i], calls[i + 1], calls[i + 2], calls[i + 3]);
      } catch (e) {
        if (error === calls) error = e;
      }
    }
    if (error !== calls) throw error;
  }

  /** Loads whose keys #drain saw removed (evicted, deleted, cleared). */
  #abortDoomed() {
    const d = this.#doomed;
    this.#doomed = [];
    for (let i = 0; i < d.length; i += 2) invalidate(this, d[i], d[i + 1]);
  }

  /**
   * Turns an evicted key's index entry into a ghost, dropping the oldest
   * ghosts past capacity. The FIFO order lives in an array of keys, because
   * taking the oldest from a Map with `keys().next()` walks every deleted
   * entry at its front: O(deleted) per eviction in V8. A ghost's index value
   * is minus its place in that array (plus #ghostBase), so a key that
   * returns blanks its place (#dropGhost) and every key left in the array
   * is a ghost: dropping the oldest is one Map.delete, with no lookup first
   * (which was as costly, on a cold entry: a miss at capacity ~9% faster).
   */
  #remember(key) {
    const g = this.#keyMap;
    const q = this.#ghostFifo;
    g.set(key, -(this.#ghostBase + q.length));
    q.push(key);
    this.#ghosts++;
    const cap = this.#ghostCap || Math.max(GHOST_MIN, g.size - this.#ghosts);
    let h = this.#ghostHead;
    while (this.#ghosts > cap) {
      const k = q[h++];
      if (k !== undefined) {
        g.delete(k);
        this.#ghosts--;
      }
    }
    if (h > 8192 && h * 2 > q.length) {
      q.splice(0, h);
      this.#ghostBase += h;
      h = 0;
    }
    // Keys that return leave blanks; a cache whose evicted keys keep
    // returning never exceeds the cap, so the trim above never runs. Once
    // blanks outnumber ghosts, keep only the ghosts, renumbered: each pass
    // costs at most what the pushes since the last one did.
    if (q.length - h > 4 * this.#ghosts + 128) {
      let w = 0;
      for (let r = h; r < q.length; r++) {
        const k = q[r];
        if (k !== undefined) {
          g.set(k, -(this.#ghostBase + w));
          q[w++] = k;
        }
      }
      q.length = w;
      h = 0;
    }
    this.#ghostHead = h;
  }

  /** Slot `s`'s deadline (`w` 0) or last access (`w` TIMES_LAST), narrow or wide (the views synced). */
  #timeOf(s, w) {
    const t = this.#clocksAt + s * TIMES_STRIDE + w;
    if (!this.#narrow) return F64[t];
    const v = U32[t];
    return v === TIMES_NEVER ? Infinity : v + this.#base;
  }

  #live(s) {
    return this.#deadline(s) > this.#now;
  }

  /** Restarts the slot's idle window and bumps its eviction counter. */
  #read(s) {
    syncViews();
    // A slot with no idle window keeps its write time in the last-access
    // word, which nothing else needs then: refresh-ahead reads the age of
    // an entry written before write times were kept from it (see `age` in
    // loading.js), with no column of its own.
    if (idleOf(this, s) !== Infinity) {
      (this.#narrow ? U32 : F64)[this.#clocksAt + s * TIMES_STRIDE + TIMES_LAST] = this.#now - this.#base;
    }
    const f = this.#freqAt + s;
    const q = U8[f];
    // A read is two units of credit, up to FREQ_MAX (Policy::hit).
    if ((q & FREQ_MAX) < FREQ_MAX) U8[f] = q + ((q & FREQ_MAX) === FREQ_MAX - 1 ? 1 : 2);
  }

  #deadline(s) {
    syncViews();
    const a = this.#timeOf(s, 0);
    const idle = this.#timeOf(s, TIMES_LAST) + idleOf(this, s);
    return a < idle ? a : idle;
  }

  /** Removes an expired slot found by a read (lazy expiry), or lets it enter its grace. */
  #expireNow(s) {
    this.#toEngine().remove(s, REASON_FOUND_EXPIRED);
    this.#flush(this.#drain());
  }

  /** The slot of `key`, live or not yet swept; `undefined` if none (or a ghost). */
  #slot(key) {
    const s = this.#keyMap.get(key);
    if (s === undefined) this.#alive();
    return s === undefined || s < 0 ? undefined : s;
  }

  /**
   * Drops `key`'s ghost, if the index still holds one: before the key takes
   * a new slot, so that it goes to the end of the index (iteration and
   * snapshot order), as a new key does (a Map keeps an existing key's
   * place); or when a returning write stored nothing. Reads the index
   * again: the write's evictions may have dropped the ghost already.
   */
  #dropGhost(key) {
    const g = this.#keyMap.get(key);
    if (g !== undefined && g < 0) {
      this.#keyMap.delete(key);
      this.#ghosts--;
      this.#ghostFifo[-g - this.#ghostBase] = undefined;
    }
  }

  /** The live slot of `key`, or NIL. Does not remove a dead one. */
  #liveSlot(key) {
    const s = this.#slot(key); // throws after free()
    return s !== undefined && liveKey(this, s) ? s : NIL;
  }

  #measure(value, key, field) {
    const w = field === undefined ? this.#sizeOf(value, key) : this.#sizeOf(value, key, field);
    if (typeof w !== "number") throw new TypeError(`sizeOf: must return a number, got ${describe(w)}`);
    return w;
  }

  // ---- time ---------------------------------------------------------------

  /** The cache's clock, in ms (read from a followed clock if not read in this run yet). */
  get now() {
    this.#alive();
    if (this.#seenEpoch !== epoch) this.#time(false);
    return this.#now;
  }

  // ---- plain entries ------------------------------------------------------

  /** Writes `value` at `key`. @returns {this} */
  set(key, value, opts) {
    // The two writes a cache mostly sees run inline, with no call into wasm,
    // and a new key at capacity with one (#swapIn): V8 inlines a method into
    // its caller's loop only while its bytecode stays under 460 bytes, and
    // the whole write path is well over. The one lookup serves every path; a
    // key of the wrong type finds nothing and is rejected by #setSlow. The
    // clock is read first (see #time), and what writes owe paid if this
    // write's arguments need no more checks.
    if (this.#seenEpoch !== epoch && this.#time(opts === undefined && value !== undefined && typeof key === "string" && key)) {
      return this.#setSlow(key, value, opts); // it lands, then throws (#owing)
    }
    const s = this.#keyMap.get(key);
    if (opts === undefined && this.#sizeOf === undefined && value !== undefined && this.#runningLoads === 0) {
      if (
        s === undefined
          ? this.#add(key, value, this.#ttl, this.#idle) || this.#swapIn(key, value, s)
          : s >= 0
            ? this.#dispose === undefined && this.#overwrite(s, value, this.#ttl, this.#idle)
            : this.#swapIn(key, value, s)
      ) {
        return this;
      }
    }
    return this.#setSlow(key, value, opts);
  }

  /** What the index holds for `key` (a slot, a ghost or undefined); WRONGTYPE on a live hash. */
  #plainSlot(key) {
    const s = this.#keyMap.get(key);
    if (s !== undefined && s >= 0 && isHash(this.#valList[s]) && liveKey(this, s)) {
      throw wrongType("hash", "plain value");
    }
    return s;
  }

  /**
   * Overwrites live slot `s` on this side, if its deadline does not move
   * earlier: the wheel reschedules lazily when the old deadline fires, but
   * an earlier one must be rescheduled by the engine. False: nothing done.
   * `idle` is the default while the idle column is off (callers check).
   */
  #overwrite(s, value, ttl, idle) {
    syncViews();
    const F = F64; // one module-slot load, not one per access
    const now = this.#now;
    const abs = now + ttl;
    const lastIdle = now + idle;
    const t = this.#clocksAt + s * TIMES_STRIDE;
    const i = this.#idlesAt;
    const b = this.#base; // 0 while wide
    const n = this.#narrow;
    const V = n ? U32 : F;
    let x = abs - b;
    // Narrow clocks hold whole ms after the base up to TIMES_MAX, and none
    // as TIMES_NEVER (-1 as a u32). Not `(x + 1) >>> 0 !== x + 1`, one test
    // fewer: x + 1 rounds a fraction of an ulp away (a ttl of 1e-20 was stored
    // as 0, dead at once). A deadline they cannot hold is the engine's
    // write, which widens them.
    if (n && (x >>> 0 !== x || x > TIMES_MAX)) {
      if (ttl !== Infinity) return false;
      x = -1;
    }
    const a = V[t];
    const oldAbs = n && a === TIMES_NEVER ? Infinity : a + b;
    // (Off: the slot's window is the default, which is `idle`.)
    const oldIdle = V[t + TIMES_LAST] + b + (i === 0 ? idle : F[i + s]);
    const old = oldAbs < oldIdle ? oldAbs : oldIdle;
    const U = U8;
    const f = this.#freqAt + s;
    const q = U[f];
    if (!(old > now) || (lastIdle < abs ? lastIdle : abs) < old || q >> SLOT_KIND_SHIFT !== SLOT_PLAIN) return false;
    // A finite ttl/idle that overflows the clock: the engine throws RangeError.
    if ((abs === Infinity && ttl !== Infinity) || (lastIdle === Infinity && idle !== Infinity)) return false;
    V[t] = x;
    V[t + TIMES_LAST] = now - b;
    if (i !== 0) F[i + s] = idle;
    const born = this.#born;
    if (born !== null) born[s] = now;
    // A write is one unit of credit, whatever it had (Policy::written).
    U[f] = (q & ~FREQ_MAX) | 1;
    this.#valList[s] = value;
    // A run of overwrites owes its reclaim as a run of inserts does (every
    // QUEUE_CAP), paid by the next call (#time): the clock stands still
    // within a run, and 200k overwrites in one reclaimed none (a probe).
    if (++this.#updated - this.#updatedPaid >= QUEUE_CAP) this.#payDue = !(this.#seenEpoch = 0);
    return true;
  }



  /**
   * Inserts new `key` on this side, into a slot reserved in advance, which
   * the engine links into its wheel and queues at its next call. False,
   * with nothing done: no room, no reserved slot, a full insert queue, a
   * bad key, or a deadline already past. `idle` as in #overwrite;
   * `toMain`: QUEUE_TO_MAIN for a returning ghost (or-ed into its queue entry).
   */
  #add(key, value, ttl, idle, toMain) {
    syncViews();
    const now = this.#now;
    const abs = now + ttl;
    const lastIdle = now + idle;
    const left = this.#reservedLeft;
    const np = this.#queuedInserts;
    if (!((lastIdle < abs ? lastIdle : abs) > now) || typeof key !== "string") return false;
    // A finite ttl/idle that overflows the clock: the engine throws RangeError.
    if ((abs === Infinity && ttl !== Infinity) || (lastIdle === Infinity && idle !== Infinity)) return false;
    const i = this.#idlesAt;
    if (left === 0 || np >= QUEUE_CAP || this.#full()) return false;
    const b = this.#base; // 0 while wide
    const n = this.#narrow;
    let x = abs - b;
    // A deadline narrow clocks cannot hold: the engine's write (see #overwrite).
    if (n && (x >>> 0 !== x || x > TIMES_MAX)) {
      if (ttl !== Infinity) return false;
      x = -1;
    }
    // The index first: a Map at its size limit (2^24 keys in V8) throws
    // here, before anything changed.
    const r = U32[this.#reservedEnd - left];
    this.#keyMap.set(key, r);
    this.#reservedLeft = left - 1;
    const t = this.#clocksAt + r * TIMES_STRIDE;
    const V = n ? U32 : F64;
    V[t] = x;
    V[t + TIMES_LAST] = now - b;
    if (i !== 0) F64[i + r] = idle;
    const born = this.#born;
    if (born !== null) born[r] = now;
    U32[this.#insertQueueAt + np] = r | toMain;
    this.#queuedInserts = np + 1;
    this.#keyList[r] = key;
    this.#valList[r] = value;
    return true;
  }

  /**
   * Writes new `key` (`g`: its ghost, if it returns) at capacity with the
   * default clocks, in its victim's slot (the engine's `swapIn`): what
   * #setSlow's write does, without its second lookup, its options or the
   * log. False, with nothing done: the engine's `write` has to (room to
   * spare, something due, hashes...), or the index could refuse the key
   * once the victim is gone (V8 caps a Map at 2^24 keys: the live keys and
   * the ghosts, each up to maxEntries, fit under it below 2^23).
   */
  #swapIn(key, value, g) {
    if (typeof key !== "string" || !this.#full() || this.#ghostCap > 0x7fffff) return false;
    const r = this.#toEngine().swapIn(g === undefined ? 0 : 1);
    if (r === NIL) return false;
    const v = r & ~SWAP_GHOST;
    const old = this.#keyList[v];
    const calls = this.#dispose === undefined ? null : [this.#valList[v], old, REASON_NAMES[REASON_EVICTED], undefined];
    // As #drain replays the victim's record, then #place and #index.
    this.#keyList[v] = undefined;
    if (r !== v) this.#remember(old);
    else this.#keyMap.delete(old);
    this.#place(v, key, value, null);
    this.#index(key, v, g !== undefined);
    this.#flush(calls);
    return true;
  }

  /** Whether live entries, counting the queued inserts, are at maxEntries. */
  #full() {
    return U32[this.#statusAt + ST_ENTRIES] + this.#queuedInserts >= this.#maxEntries;
  }

  /**
   * The rest of set(). User code (option getters, a `Date` subclass, sizeOf)
   * may change this cache or any other, so the key is looked up only after
   * the last of it has run: a slot found before could now be another key's.
   */
  #setSlow(key, value, opts) {
    try {
      checkString("key", key);
      checkValue(value);
      this.#alive();
      let flags = parseWrite(opts);
      const ttl = wTtl;
      const idle = wIdle;
      const at = wAt;
      this.#payOwed(key, true); // the arguments checked, before the lookup
      let w = 0;
      if (this.#sizeOf !== undefined) {
        this.#plainSlot(key); // WRONGTYPE before sizeOf sees the value
        w = this.#measure(value, key);
      }
      let s = this.#plainSlot(key);
      if (this.#sizeOf === undefined && (flags & (WRITE_AT | WRITE_KEEP_TTL)) === 0 && this.#quickSet(key, value, s, flags, ttl, idle)) {
        if (this.#runningLoads !== 0) invalidate(this, key, undefined);
        const held = this.#held; // what #payQueued reclaimed
        if (held !== null) {
          this.#held = null;
          this.#flush(held);
        }
        return this;
      }
      const returning = s !== undefined && s < 0;
      if (s === undefined || returning) s = NIL;
      if (returning) flags |= WRITE_TO_MAIN;
      const r = this.#toEngine().write(s, flags, ttl, idle, at, w);
      const calls = this.#written(r, key, returning);
      if (r !== NIL && this.#place(r, key, value, calls, key, undefined)) this.#index(key, r, returning);
      if (this.#runningLoads !== 0) invalidate(this, key, undefined);
      this.#flush(calls);
      return this;
    } finally {
      // A dispose error of the reclaim paid first: thrown once this write
      // landed (over any later error: the first one wins).
      this.#owing();
    }
  }

  /**
   * After an engine write (`write`/`hwrite`) that returned slot `r`: its
   * removals' `dispose` calls, with room for a replaced value's (null when
   * there is no `dispose`). A returning key that stored nothing loses its
   * ghost.
   */
  #written(r, key, returning) {
    // A failed write can still have grown (moved) the engine's columns.
    if (r === FAILED) throw this.#failed();
    const calls = this.#drain();
    if (returning && r === NIL) this.#dropGhost(key);
    return calls === null && this.#dispose !== undefined ? [] : calls;
  }

  /**
   * Puts `value`, named `name` (a key, or a field of `key`), in slot `r`
   * the engine just wrote; a replaced value's `dispose` call goes into
   * `calls`. True: the slot is new.
   */
  #place(r, name, value, calls, key, field) {
    if (this.#born !== null) this.#born[r] = this.#now;
    const vals = this.#valList;
    const old = vals[r];
    vals[r] = value;
    if (this.#keyList[r] === undefined) {
      this.#keyList[r] = name;
      return true;
    }
    if (calls !== null && old !== value) calls.push(old, key, "replaced", field);
    return false;
  }

  /** Indexes new `key` at slot `s`; a returning key's ghost goes first (the key goes to the end, as a new key does). */
  #index(key, s, returning) {
    if (returning) this.#dropGhost(key);
    this.#keyMap.set(key, s);
  }

  /**
   * An ordinary write done on this side, with no call into wasm (see
   * #overwrite and #add), for writes with options, a returning ghost, or a
   * `dispose` to call. False: the engine's path, which validates and throws.
   */
  #quickSet(key, value, s, flags, wttl, widle) {
    const ttl = flags & WRITE_TTL ? wttl : this.#ttl;
    const idle = flags & WRITE_IDLE ? widle : this.#idle;
    // A window other than the default, with the idle column off: the
    // engine's write turns the column on.
    if (!(ttl > 0 && idle > 0) || (idle !== this.#idle && this.#idlesAt === 0)) return false;
    if (s !== undefined && s >= 0) {
      const prev = this.#valList[s];
      if (!this.#overwrite(s, value, ttl, idle)) return false;
      if (this.#dispose !== undefined && prev !== value) this.#flush([prev, key, "replaced", undefined]);
      return true;
    }
    if (this.#full()) return false; // before a refill: a full cache reserves no more
    if (this.#reservedLeft === 0) this.#refill();
    else if (this.#queuedInserts >= QUEUE_CAP) this.#payQueued();
    // A returning ghost leaves the index first: the key goes to the end, as
    // a new key does. It stays gone if #add fails: the engine's write, next,
    // learns from WRITE_TO_MAIN that the key returns, and putting the ghost
    // back is a new key for a Map at its size limit.
    if (s !== undefined) this.#dropGhost(key);
    return this.#add(key, value, ttl, idle, s !== undefined && QUEUE_TO_MAIN);
  }

  #refill() {
    // A few slots for a small cache, up to QUEUE_CAP for a big one: the
    // engine grows its columns to hold what it hands out.
    this.#toEngine().reserve(Math.min(QUEUE_CAP, Math.max(8, this.#keyMap.size)));
    this.#held = this.#drain();
    const st = this.#statusAt;
    this.#insertQueueAt = U32[st + ST_QUEUE] >>> 2;
    const p = U32[st + ST_RESERVED] >>> 2;
    const len = U32[st + ST_RESERVED_LEN];
    this.#reservedEnd = p + len;
    this.#reservedLeft = len;
    this.#payQueued();
  }

  /**
   * Hands the queued inserts to the engine (every call links them), which
   * reclaims what they owe (`RECLAIM` expired entries each: binding.rs).
   * Paid each time the queue or the reserved slots run out (every 256
   * inserts at most), as well as when the clock moves (#time): paid only
   * then, at most `sweepBudget` at a time, 2,000 writes per 100 ms step
   * held 10.7 times the live entries (a probe), against the contract's
   * twice. The removals' `dispose` calls wait in #held for the end of the
   * write (#setSlow flushes them, or its engine write's drain takes them).
   */
  #payQueued() {
    this.#handOver(true);
    this.#held = this.#drain();
  }

  /** The live value at `key`, restarting its idle window; or `undefined`. */
  get(key) {
    if (this.#seenEpoch !== epoch && this.#time(typeof key === "string" && key)) this.#owing();
    const s = this.#keyMap.get(key);
    if (s !== undefined && s >= 0) {
      const t = this.#clocksAt + s * TIMES_STRIDE;
      const now = this.#now;
      const last = t + TIMES_LAST;
      const b = this.#base;
      // One module-slot load for the reads and the write (as in #overwrite).
      // Narrow, "none" (TIMES_NEVER) reads as a time later than any the
      // clocks hold, which is all this comparison needs.
      const V = this.#narrow ? U32 : F64;
      const w = idleOf(this, s);
      if (V[t] + b > now && V[last] + b + w > now) {
        const f = this.#freqAt + s;
        const q = U8[f];
        // The slot byte says what the value is, with no question to a
        // value that may be a Proxy (see isHash).
        if (q >> SLOT_KIND_SHIFT === SLOT_HASH) return this.#getOnHash(s);
        // Only a window restarts (see #read).
        if (w !== Infinity) V[last] = now - b;
        if ((q & FREQ_MAX) < FREQ_MAX) U8[f] = q + ((q & FREQ_MAX) === FREQ_MAX - 1 ? 1 : 2); // (see #read)
        this.#hits++;
        return this.#valList[s];
      }
      return this.#getDead(key, s);
    }
    checkString("key", key);
    this.#alive();
    this.#misses++;
    return undefined;
  }

  /** get() of a slot that looked dead: maybe only through stale views. */
  #getDead(key, s) {
    if (U8.length === 0) {
      syncViews();
      return this.get(key);
    }
    this.#misses++;
    this.#expireNow(s);
    return undefined;
  }

  #getOnHash(s) {
    if (liveKey(this, s)) throw wrongType("hash", "plain value");
    this.#misses++;
    this.#expireNow(s);
    return undefined;
  }

  /** Removes everything; `dispose` sees reason `"cleared"`. */
  clear() {
    // The engine keeps our reserved slots reserved (it clears only what is
    // live), so the list stays valid.
    this.#toEngine().clear();
    const calls = this.#drain();
    this.#graced = 0;
    if (this.#runningLoads !== 0) invalidateAll(this);
    this.#flush(calls);
  }

  /** Keys held, including expired ones a sweep has not reached yet. */
  get size() {
    this.#alive();
    return this.#keyMap.size - this.#ghosts - this.#graced;
  }

  get [Symbol.toStringTag]() {
    return "TtlCache";
  }

  /**
   * A new cache from `snapshot()` bytes, with every entry, field, clock and
   * data option they hold. `opts` gives what bytes cannot: `dispose`,
   * `sizeOf` (required when the snapshot has `maxBytes`; sizes recorded in
   * the snapshot are kept, `sizeOf` measures later writes), and `now` or
   * `clock` to change the clock mode: without them the cache keeps the
   * snapshot's (manual at its time, or following `Date.now()`); either way
   * it never runs back behind the snapshot's time. Corrupt bytes throw
   * `Error`.
   * @param {Uint8Array} bytes
   * @param {{dispose?: Function, sizeOf?: Function, now?: number, clock?: () => number}} [opts]
   * @returns {TtlCache}
   */
  static restore(bytes, opts) {
    const [c, keyMap, keyList, valList] = restoreCache(TtlCache, bytes, opts);
    c.#keyMap = keyMap;
    c.#keyList = keyList;
    c.#valList = valList;
    return c;
  }

  // The accessors through which the method groups kept in sibling modules
  // reach this class's private state: made here, where the private names are
  // in scope, into module bindings (which a minifier shortens, unlike
  // properties). V8 inlines them as it does the private accesses they wrap.
  static {
    // After each engine call (the glue asks): its log replayed, and whether
    // it stopped early (its log full), to be made again; the `dispose` calls
    // wait for the last chunk's #drain (no user code runs in between). One
    // function for every engine, not a closure per cache: optimized code
    // that inlined a cache's closure was thrown away when that cache was
    // collected (the glue's `again`, once per dropped cache in bench (j):
    // --trace-deopt "weak objects").
    RawEngine.prototype.more = function () {
      const c = this.owner;
      c.#held = c.#drain();
      return U32[c.#statusAt + ST_MORE];
    };
    [syncClock, alive, toEngine, drain, flush, written, place, index, measure, live, read, slot, liveSlot,
      expireNow, deadline, idleOf, trackBirths, keyMap, keyList, valList, sizeOf, engine, statusAt,
      clockOf, now, setNow, clock, opts, born, bornFrom, runningLoads, running, loads, hit, miss, counters, payOwed, owing] = [
      (c) => c.#syncClock(),
      (c) => c.#alive(),
      (c) => c.#toEngine(),
      (c) => c.#drain(),
      (c, calls) => c.#flush(calls),
      (c, r, key, returning) => c.#written(r, key, returning),
      (c, r, name, value, calls, key, field) => c.#place(r, name, value, calls, key, field),
      (c, key, s, returning) => c.#index(key, s, returning),
      (c, value, key, field) => c.#measure(value, key, field),
      (c, s) => c.#live(s),
      (c, s) => c.#read(s),
      (c, key) => c.#slot(key),
      (c, key) => c.#liveSlot(key),
      (c, s) => c.#expireNow(s),
      (c, s) => c.#deadline(s),
      // Slot `s`'s idle window (the views synced).
      (c, s) => (c.#idlesAt === 0 ? c.#idle : F64[c.#idlesAt + s]),
      (c) => c.#trackBirths(),
      (c) => c.#keyMap,
      (c) => c.#keyList,
      (c) => c.#valList,
      (c) => c.#sizeOf,
      (c) => c.#engine,
      (c) => c.#statusAt,
      (c, s, w) => c.#timeOf(s, w),
      (c) => c.#now,
      (c, t) => (c.#now = t),
      (c) => c.#clock,
      (c) => c.#opts,
      (c) => c.#born,
      (c) => c.#bornFrom,
      (c) => c.#runningLoads,
      (c, d) => (c.#runningLoads += d),
      (c) => c.#loads,
      (c) => c.#hits++,
      (c) => c.#misses++,
      (c) => [c.#hits, c.#misses, c.#updated],
      (c, k, hash) => c.#payOwed(k, hash),
      (c) => c.#owing(),
    ];
  }
}

// The method groups kept in sibling modules, as the class's own methods
// (non-enumerable, like those declared in it).
for (const group of [commandMethods, iterationMethods, hashMethods, loadMethods, snapshotMethods]) {
  for (const name of Reflect.ownKeys(group)) {
    Object.defineProperty(TtlCache.prototype, name, { value: group[name], writable: true, configurable: true });
  }
}

// `using cache = new TtlCache()` calls free() at the end of the block, where
// the runtime has explicit resource management (Symbol.dispose).
if (typeof Symbol.dispose === "symbol") {
  Object.defineProperty(TtlCache.prototype, Symbol.dispose, {
    value: function dispose() {
      this.free();
    },
    writable: true,
    configurable: true,
  });
}

