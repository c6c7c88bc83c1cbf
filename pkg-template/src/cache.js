// The JS face of lapse. Keys, values and the key -> slot index live here, in
// a JS Map; deadlines, the expiry wheel, eviction order and sweeping live in
// wasm. Reads (`get`, `has`, `peek`, `touch`, `ttl`) never cross into wasm:
// they read the slot's [abs, last, idle] clocks and bump its eviction counter
// through typed-array views of wasm memory. Writes pass only numbers.
//
// After every call that changes the engine, `#drain()` replays the engine's
// removal log (three u32 words per removed slot) and refreshes the views,
// which go stale whenever wasm memory grows (any cache instance can grow it,
// so the views are module-wide). A call can also grow memory and then throw,
// and a user callback can make another cache do so, so no code trusts the
// views it last saw: everything that reads them checks for a detached
// buffer first (`sync()`), or, on the hot paths, reads through a check that
// fails safe (a detached view reads `undefined`: "not live", then re-check).

import { RawEngine, wasmMemory } from "./glue.js";

const NIL = 0xffffffff;
const FAILED = 0xfffffffe; // write/hwrite: the call threw; fetch it with takeError()
const REASONS = ["expired", "evicted", "deleted", "replaced", "cleared"];
const EXPIRED = 0;
const FOUND_EXPIRED = 255; // remove(): lazy expiry, which a value's grace may defer
const DELETED = 2;
const KIND_PLAIN = 1;
const KIND_HASH = 2;
const KIND_FIELD = 3;
const GHOST = 1 << 7;
const GRACED = 1 << 8; // the removed slot was in grace (engine LOG_GRACED)
const ENTER_GRACE = 5; // a log record that keeps its slot (engine LOG_ENTER_GRACE)
const EVICTED = 1;
const CLEARED = 4;
const HAS_TTL = 1;
const HAS_IDLE = 2;
const HAS_AT = 4;
const KEEP_TTL = 8;
const TO_MAIN = 16;
const MAX_FREQ = 3;
const TO_MAIN_BIT = 0x80000000;
// Status block words (see binding.rs ST_*).
const ST_LOG = 0;
const ST_LOG_LEN = 1;
const ST_CAP = 2;
const ST_TIMES = 3;
const ST_FREQ = 4;
const ST_PENDING_PTR = 5;
const ST_PENDING = 6;
const ST_ENTRIES = 7;
const ST_SPARE = 8;
const ST_SPARE_LEN = 9;
const ST_HASH = 10;
const ST_NOW = 11;
const RESERVE_BATCH = 256;
const CONDS = { NX: 1, XX: 2, GT: 3, LT: 4 };
const CTOR_OPTIONS = new Set([
  "now",
  "clock",
  "ttl",
  "idle",
  "maxEntries",
  "maxBytes",
  "sizeOf",
  "sweepBudget",
  "dispose",
  "refresh",
  "grace",
  "onLoadError",
]);
const WRITE_OPTIONS = new Set(["ttl", "idle", "expireAt", "keepTtl"]);
const FETCH_OPTIONS = new Set(["ttl", "idle", "expireAt", "refresh", "grace", "signal"]);
const RESTORE_OPTIONS = new Set(["dispose", "sizeOf", "now", "clock", "refresh", "grace", "onLoadError"]);

let memory = null;
// The engine `TtlCache.restore` hands the constructor instead of a new one.
let adopting = null;
let F64 = new Float64Array(0);
let U8 = new Uint8Array(0);
let U32 = new Uint32Array(0);

// A cache that follows a clock reads it at most once per synchronous run of
// JS: it remembers the epoch of its reading, and a microtask queued by the
// first reading of a run bumps the epoch once the run is over. A method's
// only cost is comparing two numbers; no timer, no clock read per call.
let epoch = 1;
let epochQueued = false;
// The microtask is a reaction to a settled promise rather than
// queueMicrotask(): Node implements that in JS with an AsyncResource per
// call, which measured as a third of a 64-op run of `get`s.
const settled = Promise.resolve();

function nextEpoch() {
  epoch++;
  epochQueued = false;
}

/** The default clock; looked up per reading, so fake timers installed later apply. */
function dateNow() {
  return Date.now();
}

function readClock(clock) {
  const t = clock();
  if (typeof t !== "number") throw new TypeError(`clock: must return a number, got ${describe(t)}`);
  if (t - t !== 0) throw new RangeError(`clock: must return a finite number, got ${t}`);
  return t;
}

/**
 * The clock options: a followed clock function, or `undefined` for a
 * manual one (with `now` validated). Reads each option once.
 */
function clockOption(now, clock) {
  if (clock !== undefined) {
    if (now !== undefined) throw new TypeError("now: cannot be combined with clock (now gives a manual clock)");
    if (typeof clock !== "function") throw new TypeError(`clock: must be a function, got ${describe(clock)}`);
    return clock;
  }
  if (now === undefined) return dateNow;
  checkNumber("now", now);
  return undefined;
}

// A growing wasm memory detaches its old buffer, which empties every view of
// it (length 0): cheaper to test than reading `memory.buffer` on every call,
// and true whoever grew it, this cache or another, successfully or not.
function sync() {
  if (U8.length === 0) {
    const b = memory.buffer;
    F64 = new Float64Array(b);
    U8 = new Uint8Array(b);
    U32 = new Uint32Array(b);
  }
}

// A dropped cache's engine is freed by wasm-bindgen's glue, which registers
// every RawEngine with a FinalizationRegistry: only its TtlCache refers to
// it, so both go together (tests/js/exhaustion.test.mjs checks it).

function freed() {
  return new Error("TtlCache: this cache was freed (free() or [Symbol.dispose]) and can no longer be used");
}

/** Grows `a` in place to `cap`, padding with `undefined` (no holes). */
function grow(a, cap) {
  const n = a.length;
  a.length = cap;
  a.fill(undefined, n);
}

/** The fields of one hash key: field name -> slot. */
class Hash {
  constructor() {
    this.fields = new Map();
    // Every field is in grace (stale-if-error): the key is dead to reads,
    // which then need not walk its fields to learn it.
    this.graced = false;
    // A field slot last seen live with the latest deadline: while it lives,
    // the hash is live without a scan of its fields (see #liveKey).
    this.witness = -1;
  }
}

function describe(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  const t = typeof v;
  if (t === "string") return JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v);
  if (t === "object") return "an object";
  if (t === "function") return "a function";
  if (t === "symbol" || t === "bigint") return `a ${t}`;
  return `${t} ${String(v)}`;
}

function checkString(arg, v) {
  if (typeof v !== "string") throw new TypeError(`${arg}: must be a string, got ${describe(v)}`);
}

function checkNumber(arg, v) {
  if (typeof v !== "number") throw new TypeError(`${arg}: must be a number, got ${describe(v)}`);
}

function checkValue(v) {
  if (v === undefined) throw new TypeError("value: must not be undefined (use delete() to remove a key)");
}

function wrongType(held, wanted) {
  return new TypeError(`WRONGTYPE: key holds a ${held}, but this operation needs a ${wanted}`);
}

/** A time argument: a number, or a valid `Date`. */
function toTime(arg, v) {
  if (v instanceof Date) {
    const t = v.getTime();
    if (t !== t) throw new RangeError(`${arg}: invalid Date`);
    return t;
  }
  checkNumber(arg, v);
  return v;
}

function condCode(cond) {
  if (cond === undefined) return 0;
  const c = typeof cond === "string" && Object.hasOwn(CONDS, cond) ? CONDS[cond] : 0;
  if (c === 0) throw new TypeError(`cond: must be "NX", "XX", "GT" or "LT", got ${describe(cond)}`);
  return c;
}

// lru-cache (v11) option names, with what a user moving to lapse should use
// instead. Consulted only when an option is rejected, so a migrating user's
// `{ max: 100 }` fails with a pointer rather than a bare "unknown option".
// Terse on purpose (they ship in every bundle): README "Coming from
// lru-cache" explains each one.
const NONE = "none";
const LRU_CTOR_HINTS = {
  max: "use maxEntries",
  maxSize: "use maxBytes",
  sizeCalculation: "use sizeOf",
  maxEntrySize: NONE,
  ttlAutopurge: "none needed",
  ttlResolution: NONE,
  updateAgeOnGet: "use idle",
  updateAgeOnHas: "none: use touch",
  allowStale: "none: use grace",
  noDeleteOnStaleGet: NONE,
  disposeAfter: "use dispose",
  onInsert: NONE,
  noDisposeOnSet: NONE,
  noUpdateTTL: "use keepTtl",
  fetchMethod: "use fetch(key, loader)",
  memoMethod: "none: use fetch(key, loader)",
  noDeleteOnFetchRejection: "none needed",
  allowStaleOnFetchRejection: "use grace",
  allowStaleOnFetchAbort: NONE,
  ignoreFetchAbort: NONE,
  backgroundFetchSize: NONE,
  perf: "use clock",
};
const LRU_WRITE_HINTS = {
  noUpdateTTL: "use keepTtl",
  size: "none: use sizeOf",
  sizeCalculation: "none: use sizeOf",
  noDisposeOnSet: NONE,
  start: "none: use expireAt",
  status: "none: use stats()",
};

function unknownOption(arg, k, allowed) {
  const hints = allowed === CTOR_OPTIONS ? LRU_CTOR_HINTS : allowed === WRITE_OPTIONS ? LRU_WRITE_HINTS : null;
  const hint = hints !== null && Object.hasOwn(hints, k) ? ` (an lru-cache option): ${hints[k]}` : "";
  return new TypeError(`${arg}: unknown option ${JSON.stringify(k)}${hint}`);
}

function checkOptions(arg, opts, allowed) {
  if (opts === null || typeof opts !== "object" || Array.isArray(opts)) {
    throw new TypeError(`${arg}: must be an object, got ${describe(opts)}`);
  }
  // for-in, not Object.keys: this runs on every write with options, and
  // must not allocate.
  for (const k in opts) {
    if (!allowed.has(k)) throw unknownOption(arg, k, allowed);
  }
}

// parseWrite's results besides the flags (module scratch, to keep `set`
// allocation-free). A getter or a `Date` subclass in `opts` is user code
// that may write to any cache with options, so parseWrite stores these only
// after its last user code has run, and every caller copies them into
// locals on the very next line: nothing can run in between.
let wTtl = 0;
let wIdle = 0;
let wAt = 0;

function parseWrite(opts) {
  if (opts === undefined) return 0;
  checkOptions("opts", opts, WRITE_OPTIONS);
  let flags = 0;
  const { ttl, idle, expireAt, keepTtl } = opts;
  let at = 0;
  if (ttl !== undefined) {
    checkNumber("ttl", ttl);
    flags |= HAS_TTL;
  }
  if (idle !== undefined) {
    checkNumber("idle", idle);
    flags |= HAS_IDLE;
  }
  if (expireAt !== undefined) {
    at = toTime("expireAt", expireAt);
    flags |= HAS_AT;
  }
  if (keepTtl !== undefined) {
    if (typeof keepTtl !== "boolean") throw new TypeError(`keepTtl: must be a boolean, got ${describe(keepTtl)}`);
    if (keepTtl) flags |= KEEP_TTL;
  }
  wTtl = flags & HAS_TTL ? ttl : 0;
  wIdle = flags & HAS_IDLE ? idle : 0;
  wAt = at;
  return flags;
}

function optionalNumber(arg, v, dflt) {
  if (v === undefined) return dflt;
  checkNumber(arg, v);
  return v;
}

function optionalFunction(arg, v) {
  if (v !== undefined && typeof v !== "function") {
    throw new TypeError(`${arg}: must be a function, got ${describe(v)}`);
  }
  return v;
}

/** `refresh`/`grace`: a non-negative number of ms or `Infinity`; `undefined` keeps `dflt`. */
function optionalSpan(arg, v, dflt) {
  if (v === undefined) return dflt;
  checkNumber(arg, v);
  if (!(v >= 0)) throw new RangeError(`${arg}: must be a non-negative number of milliseconds or Infinity, got ${describe(v)}`);
  return v;
}

function checkLifetime(arg, v) {
  checkNumber(arg, v);
  if (!(v > 0)) throw new RangeError(`${arg}: must be a positive number of milliseconds or Infinity, got ${describe(v)}`);
}

// An option-less fetch (the common one) allocates no options record.
const NO_FETCH_OPTIONS = Object.freeze({ write: undefined, refresh: undefined, grace: undefined, signal: undefined });

/**
 * Validates `fetch`/`hfetch` options up front (a fetch rejects before it
 * changes anything, and its write happens later). Returns the write options
 * for the store (or `undefined`) and the loading ones.
 */
function parseFetch(opts) {
  if (opts === undefined) return NO_FETCH_OPTIONS;
  const r = { write: undefined, refresh: undefined, grace: undefined, signal: undefined };
  checkOptions("opts", opts, FETCH_OPTIONS);
  const { ttl, idle, expireAt, refresh, grace, signal } = opts;
  if (ttl !== undefined && expireAt !== undefined) throw new TypeError("expireAt: cannot be combined with ttl");
  if (ttl !== undefined || idle !== undefined || expireAt !== undefined) {
    const w = {};
    if (ttl !== undefined) {
      checkLifetime("ttl", ttl);
      w.ttl = ttl;
    }
    if (idle !== undefined) {
      checkLifetime("idle", idle);
      w.idle = idle;
    }
    if (expireAt !== undefined) {
      const t = toTime("expireAt", expireAt);
      if (!Number.isFinite(t)) throw new RangeError(`expireAt: must be a finite number of milliseconds, got ${describe(t)}`);
      w.expireAt = t;
    }
    r.write = w;
  }
  r.refresh = optionalSpan("refresh", refresh, undefined);
  r.grace = optionalSpan("grace", grace, undefined);
  if (signal !== undefined) {
    if (signal === null || typeof signal !== "object" || typeof signal.aborted !== "boolean" || typeof signal.addEventListener !== "function") {
      throw new TypeError(`signal: must be an AbortSignal, got ${describe(signal)}`);
    }
    r.signal = signal;
  }
  return r;
}

/**
 * One running load of a key (or hash field), shared by every fetch of it
 * made while it runs. `live`: still in the cache's load map, so its result
 * is stored; a write, delete, expire, eviction or clear of its key takes it
 * out (and aborts its signal), and its waiters still get the result.
 */
class Load {
  constructor(key, field, fo, background) {
    this.key = key;
    this.field = field;
    this.write = fo.write;
    this.grace = fo.grace;
    this.ctrl = new AbortController();
    this.live = true;
    this.background = background;
    this.settled = false;
    this.subs = []; // waiters with a signal: { resolve, reject, signal, onAbort }
    // Waiters without one share one promise: a stampede of N fetches costs
    // one promise, as one load does.
    this.shared = null;
    this.sharedN = 0;
    this.resolve = null;
    this.reject = null;
  }
}

/**
 * A TTL cache with an absolute lifetime and a sliding idle window per entry,
 * and per-field expiry in hashes. It follows `Date.now()` (or `clock`) by
 * default; `now` gives a manual clock the host moves with `tick()`.
 */
export class TtlCache {
  #eng;
  #st; // index of the status block in U32
  #cap = -1; // engine slot capacity the views were last based on
  #t = 0; // index of slot 0's clocks in F64
  #f = 0; // byte offset of slot 0's frequency counter in U8
  #now;
  #clock; // the followed clock, or undefined for a manual one
  #seen = 0; // the epoch #now was read in
  #nowAt = 0; // index in F64 of the engine's copy of the clock
  #owes = false; // inserts handed to the engine since the last reclaim
  // key -> slot, or -seq for a ghost: a recently evicted unread key (the
  // S3-FIFO ghost queue). Ghosts share the index so a write looks a key up
  // once, and an eviction overwrites the entry instead of deleting it here
  // and adding it to a second Map.
  #index = new Map();
  #keys = []; // slot -> key (or field name)
  #vals = []; // slot -> value (or Hash)
  #dispose;
  #sizeOf;
  #ghosts = 0; // ghost entries in #index
  #ghostCap = 0; // 0: as many ghosts as live keys (no maxEntries)
  #ghostFifo = []; // [key, seq, key, seq, ...] oldest first, from #ghostHead
  #ghostHead = 0;
  #ghostSeq = 0;
  #opts;
  #ttl; // default clocks, for writes done on this side
  #idle;
  #maxEntries;
  #spare = []; // slots reserved in wasm for inserts done on this side
  #pend = 0; // U32 index of the engine's pending-insert queue
  #np = 0; // inserts queued there since the last call
  #npCap = 0;
  #hits = 0;
  #misses = 0;
  #updated = 0;
  // ---- loading (fetch/hfetch) ----
  #graced = 0; // keys in #index that are in grace (not counted in size)
  #loading = 0; // loads in #loads and #hloads: writes check it before looking
  #loads = null; // key -> Load
  #hloads = null; // key -> (field -> Load)
  #doomed = []; // [key, field, ...] whose loads a removal found in #drain invalidates
  #refresh; // default refresh (undefined: none)
  #grace = 0;
  #onLoadError;
  // Write times, slot -> ms, kept only once a fetch may refresh: a column
  // every cache paid for would cost 8 bytes per entry. A slot written before
  // #bornFrom has no stamp; it is at least `now - #bornFrom` ms old.
  #born = null;
  #bornFrom = 0;
  #nLoads = 0;
  #loadErrors = 0;
  #coalesced = 0;
  #refreshes = 0;
  #staleServed = 0;

  /**
   * @param {object} [options] `now` (a manual clock) or `clock`, `ttl`,
   *   `idle`, `maxEntries`, `maxBytes`, `sizeOf`, `sweepBudget`, `dispose`,
   *   `refresh`, `grace`, `onLoadError`;
   *   all optional.
   */
  constructor(options) {
    // Taken before any user code (a clock) runs: it may restore another cache.
    const adopted = adopting;
    adopting = null;
    if (memory === null) memory = wasmMemory();
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
    this.#refresh = optionalSpan("refresh", o.refresh, undefined);
    const grace = optionalSpan("grace", o.grace, 0);
    this.#onLoadError = optionalFunction("onLoadError", o.onLoadError);
    if (maxBytes !== Infinity && this.#sizeOf === undefined) {
      throw new TypeError("sizeOf: is required when maxBytes is set");
    }
    const now = clock === undefined ? optNow : readClock(clock);
    this.#clock = clock;
    this.#eng = adopted ?? new RawEngine(now, ttl, idle, maxEntries, maxBytes, sweepBudget);
    sync();
    this.#st = this.#eng.statusPtr() >>> 2;
    this.#nowAt = U32[this.#st + ST_NOW] >>> 3;
    // A restored engine is at the snapshot's time: never run back behind it.
    const at = this.#eng.now();
    this.#now = now > at ? now : at;
    if (clock !== undefined) this.#seen = this.#stamp();
    this.#opts = { ttl, idle, maxEntries, maxBytes, sweepBudget };
    this.#ttl = ttl;
    this.#idle = idle;
    this.#maxEntries = maxEntries;
    this.#npCap = this.#eng.pendingCap();
    if (maxEntries !== Infinity) this.#ghostCap = maxEntries;
    if (grace > 0) {
      this.#grace = grace;
      this.#eng.setGrace(NIL, grace); // allocates: the views may be stale after it
      this.#drain();
    }
    this.#rebase();
    if (this.#refresh !== undefined) this.#trackBirths();
  }

  // ---- plumbing -----------------------------------------------------------

  /**
   * The engine, after handing it the clock and the inserts queued on this
   * side: every call into wasm goes through here, so the engine never sees
   * a stale state.
   */
  #e() {
    const e = this.#eng;
    if (e === null) throw freed();
    sync();
    F64[this.#nowAt] = this.#now;
    if (this.#np !== 0) {
      sync();
      U32[this.#st + ST_PENDING] = this.#np;
      this.#np = 0;
      this.#owes = true;
    }
    return e;
  }

  /**
   * Returns the wasm memory this cache holds (its engine) now, rather than
   * when the garbage collector finds it unreachable. Every method then
   * throws. Calling it again does nothing.
   */
  free() {
    const e = this.#eng;
    if (e === null) return;
    this.#eng = null;
    this.#index = new Map();
    this.#keys = [];
    this.#vals = [];
    this.#spare = [];
    this.#np = 0;
    this.#ghosts = 0;
    this.#ghostFifo = [];
    this.#ghostHead = 0;
    e.free();
    sync();
  }

  /** The error of a failed write, after re-reading where the columns are. */
  #failed() {
    const err = this.#eng.takeError();
    this.#drain();
    return err;
  }

  /** Throws if `free()` was called (the read paths' misses come here). */
  #alive() {
    if (this.#eng === null) throw freed();
  }

  /** The current epoch, with its end queued (a followed clock's reading is good until then). */
  #stamp() {
    if (!epochQueued) {
      epochQueued = true;
      settled.then(nextEpoch);
    }
    return epoch;
  }

  /**
   * Reads a followed clock, once per synchronous run: every method that
   * depends on time calls this first (`if (this.#seen !== epoch)`), before
   * it looks up any slot, because a `clock` is user code that may call
   * into this cache, and because a moved clock makes the engine reclaim
   * what queued inserts owe (which may call `dispose`).
   */
  #time() {
    const c = this.#clock;
    if (c === undefined) {
      this.#seen = epoch;
      return;
    }
    // Before the read: a re-entrant call from the clock uses the old reading.
    this.#seen = this.#stamp();
    const t = readClock(c);
    // Time never runs backwards: a clock that steps back is ignored.
    if (!(t > this.#now)) return;
    this.#now = t;
    if (this.#np !== 0 || this.#owes) {
      const e = this.#e(); // hands over the queued inserts, which then owe
      this.#owes = false;
      e.reclaim();
      this.#flush(this.#drain());
    }
  }

  #sync() {
    if (this.#seen !== epoch) this.#time();
  }

  #rebase() {
    const st = this.#st;
    const cap = U32[st + ST_CAP];
    this.#cap = cap;
    this.#t = U32[st + ST_TIMES] >>> 3;
    this.#f = U32[st + ST_FREQ];
    // Keep the slot arrays free of holes and as long as the engine's columns: V8
    // reads and writes past the end, or into holes, on a slow path. One
    // reallocation per growth, not one push per slot.
    if (this.#keys.length < cap) {
      grow(this.#keys, cap);
      grow(this.#vals, cap);
    }
    if (this.#born !== null && this.#born.length < cap) grow(this.#born, cap);
  }

  /** Starts stamping write times (the first fetch that may refresh). */
  #trackBirths() {
    if (this.#born !== null) return;
    this.#born = [];
    this.#bornFrom = this.#now;
    grow(this.#born, this.#cap);
  }

  /**
   * Replays the engine's removal log into the JS side. Returns the pending
   * `dispose` calls (flattened, four per call) for `#flush`, which runs them
   * only once the caller has finished its own state changes.
   */
  #drain() {
    sync();
    const st = this.#st;
    if (U32[st + ST_CAP] !== this.#cap || U32[st + ST_TIMES] >>> 3 !== this.#t) this.#rebase();
    const n = U32[st + ST_LOG_LEN];
    if (n === 0) return null;
    // Consumed: a drain after a call that failed before publishing must not
    // replay it (its slots may hold other keys by then).
    U32[st + ST_LOG_LEN] = 0;
    const keys = this.#keys;
    const vals = this.#vals;
    const calls = this.#dispose === undefined ? null : [];
    let p = U32[st + ST_LOG] >>> 2;
    const end = p + n;
    for (; p < end; p += 3) {
      const s = U32[p];
      const flags = U32[p + 1];
      const parent = U32[p + 2];
      const kind = (flags >>> 4) & 7;
      const reason = flags & 15;
      if (reason === ENTER_GRACE) {
        // The slot keeps its key and value for fetch; a key (a plain entry,
        // or a hash all of whose fields are in grace) leaves `size`.
        if (kind !== KIND_FIELD) this.#graced++;
        if (kind === KIND_HASH) vals[s].graced = true;
        continue;
      }
      if (flags & GRACED && kind !== KIND_FIELD) this.#graced--;
      const key = keys[s];
      const val = vals[s];
      if (this.#loading !== 0 && (reason === EVICTED || reason === DELETED || reason === CLEARED)) {
        if (kind === KIND_FIELD) this.#doomed.push(keys[parent], key);
        else if (kind === KIND_PLAIN) this.#doomed.push(key, undefined);
      }
      keys[s] = undefined;
      vals[s] = undefined;
      if (kind === KIND_FIELD) {
        vals[parent].fields.delete(key);
        if (calls !== null) calls.push(val, keys[parent], REASONS[reason], key);
      } else {
        // Only a bounded cache evicts, so only a bounded cache has ghosts.
        if (flags & GHOST) this.#remember(key);
        else this.#index.delete(key);
        if (kind === KIND_PLAIN && calls !== null) calls.push(val, key, REASONS[reason], undefined);
      }
    }
    return calls;
  }

  /** Runs pending `dispose` calls; the first error thrown reaches the caller. */
  #flush(calls) {
    if (this.#doomed.length !== 0) this.#abortDoomed();
    if (calls === null || calls.length === 0) return;
    const dispose = this.#dispose;
    let failed = false;
    let error;
    for (let i = 0; i < calls.length; i += 4) {
      try {
        dispose(calls[i], calls[i + 1], calls[i + 2], calls[i + 3]);
      } catch (e) {
        if (!failed) {
          failed = true;
          error = e;
        }
      }
    }
    if (failed) throw error;
  }

  /**
   * Turns an evicted key's index entry into a ghost, dropping the oldest
   * ghosts past capacity. The FIFO order lives in an array of (key, seq)
   * pairs, because taking the oldest from a Map with `keys().next()` walks
   * every deleted entry at its front: O(deleted) per eviction in V8. A pair
   * whose -seq no longer matches the index became live, or a newer ghost.
   */
  #remember(key) {
    const g = this.#index;
    const seq = ++this.#ghostSeq;
    g.set(key, -seq);
    this.#ghosts++;
    const q = this.#ghostFifo;
    q.push(key, seq);
    const cap = this.#ghostCap || Math.max(64, g.size - this.#ghosts);
    let h = this.#ghostHead;
    while (this.#ghosts > cap) {
      const k = q[h];
      if (g.get(k) === -q[h + 1]) {
        g.delete(k);
        this.#ghosts--;
      }
      h += 2;
    }
    if (h > 8192 && h * 2 > q.length) {
      q.splice(0, h);
      h = 0;
    }
    this.#ghostHead = h;
  }


  #live(s) {
    sync();
    const t = this.#t + s * 3;
    const now = this.#now;
    return F64[t] > now && F64[t + 1] + F64[t + 2] > now;
  }

  /** Restarts the slot's idle window and bumps its eviction counter. */
  #read(s) {
    sync();
    F64[this.#t + s * 3 + 1] = this.#now;
    const f = this.#f + s;
    const q = U8[f];
    if (q < MAX_FREQ) U8[f] = q + 1;
  }

  #deadline(s) {
    sync();
    const t = this.#t + s * 3;
    const idle = F64[t + 1] + F64[t + 2];
    return F64[t] < idle ? F64[t] : idle;
  }

  /** Removes an expired slot found by a read (lazy expiry), or lets it enter its grace. */
  #expireNow(s) {
    this.#e().remove(s, FOUND_EXPIRED);
    this.#flush(this.#drain());
  }

  /**
   * Whether a key's slot is live: its clocks, and for a hash at least one
   * live field (a hash goes with its last field, swept or not).
   */
  #liveKey(s) {
    if (!this.#live(s)) return false;
    const v = this.#vals[s];
    if (!(v instanceof Hash)) return true;
    if (v.graced) return false; // every field is in grace: no scan
    // Scanning the fields in insertion order on every access cost O(dead
    // fields) each time the old ones had expired unswept (issue 13). The
    // witness makes that one scan per witness lifetime: it is the field with
    // the latest deadline seen, so it goes last of those it was chosen among.
    const w = v.witness;
    if (w >= 0 && this.#live(w) && v.fields.get(this.#keys[w]) === w) return true;
    const now = this.#now;
    let best = -1;
    let latest = now;
    for (const f of v.fields.values()) {
      const t = this.#t + f * 3;
      const idle = F64[t + 1] + F64[t + 2];
      const d = F64[t] < idle ? F64[t] : idle;
      if (d > latest) {
        latest = d;
        best = f;
      }
    }
    v.witness = best;
    return best >= 0;
  }

  /** The slot of `key`, live or not yet swept; `undefined` if none (or a ghost). */
  #slot(key) {
    const s = this.#index.get(key);
    if (s === undefined) this.#alive();
    return s === undefined || s < 0 ? undefined : s;
  }

  /**
   * Drops `key`'s ghost before it takes a new slot, so that it goes to the
   * end of the index (iteration and snapshot order), as a new key does: a
   * Map keeps an existing key's place. Reads the index again: the write's
   * evictions may have dropped the ghost already.
   */
  #revive(key) {
    const g = this.#index.get(key);
    if (g !== undefined && g < 0) {
      this.#index.delete(key);
      this.#ghosts--;
    }
  }

  /** Drops `key`'s ghost, if it still has one (a returning write stored nothing). */
  #forget(key) {
    const g = this.#index.get(key);
    if (g !== undefined && g < 0) {
      this.#index.delete(key);
      this.#ghosts--;
    }
  }

  /** The live slot of `key`, or NIL. Does not remove a dead one. */
  #liveSlot(key) {
    const s = this.#slot(key); // throws after free()
    return s !== undefined && this.#liveKey(s) ? s : NIL;
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
    if (this.#seen !== epoch) this.#time();
    return this.#now;
  }

  /**
   * Advances the clock to `now` (default: a fresh reading of the followed
   * clock, or `Date.now()` for a manual one; an earlier time is ignored) and
   * removes at most `sweepBudget` expired entries.
   * @returns {number} how many entries were removed
   */
  tick(now) {
    this.#sync();
    if (now === undefined) {
      const c = this.#clock;
      now = c === undefined ? Date.now() : readClock(c);
    } else {
      checkNumber("now", now);
    }
    const n = this.#e().tick(now);
    this.#now = this.#e().now();
    this.#flush(this.#drain());
    return n;
  }

  /**
   * A time at or before the earliest deadline the cache holds, `Infinity`
   * if none: when to call `tick()` next (it can be early, never late).
   * @returns {number}
   */
  nextExpiry() {
    this.#sync();
    const t = this.#e().nextExpiry();
    this.#flush(this.#drain());
    return t;
  }

  /** Removes every expired entry now. @returns {number} how many */
  purge() {
    this.#sync();
    const n = this.#e().purge();
    this.#flush(this.#drain());
    return n;
  }

  // ---- plain entries ------------------------------------------------------

  /** Writes `value` at `key`. @returns {this} */
  set(key, value, opts) {
    // The two writes a cache mostly sees run inline, with no call into wasm:
    // V8 inlines a method into its caller's loop only while its bytecode
    // stays under 460 bytes, and the whole write path is well over. The one
    // lookup serves every path; a key of the wrong type finds nothing and is
    // rejected by #setSlow. The clock is read first (see #time).
    if (this.#seen !== epoch) this.#time();
    const s = this.#index.get(key);
    if (opts === undefined && this.#sizeOf === undefined && value !== undefined && this.#loading === 0) {
      if (
        s === undefined
          ? this.#add(key, value, this.#ttl, this.#idle)
          : s >= 0 && this.#dispose === undefined && this.#overwrite(s, value, this.#ttl, this.#idle)
      ) {
        return this;
      }
    }
    return this.#setSlow(key, value, opts);
  }

  /** What the index holds for `key` (a slot, a ghost or undefined); WRONGTYPE on a live hash. */
  #plainSlot(key) {
    const s = this.#index.get(key);
    if (s !== undefined && s >= 0 && this.#vals[s] instanceof Hash && this.#liveKey(s)) {
      throw wrongType("hash", "plain value");
    }
    return s;
  }

  /**
   * Overwrites live slot `s` on this side, if its deadline does not move
   * earlier: the wheel reschedules lazily when the old deadline fires, but
   * an earlier one must be rescheduled by the engine. False: nothing done.
   */
  #overwrite(s, value, ttl, idle) {
    sync();
    const F = F64; // one module-slot load, not one per access
    const now = this.#now;
    const abs = now + ttl;
    const lastIdle = now + idle;
    const t = this.#t + s * 3;
    const oldIdle = F[t + 1] + F[t + 2];
    const old = F[t] < oldIdle ? F[t] : oldIdle;
    const vals = this.#vals;
    if (!(old > now) || (lastIdle < abs ? lastIdle : abs) < old || vals[s] instanceof Hash) return false;
    // A finite ttl/idle that overflows the clock: the engine throws RangeError.
    if ((abs === Infinity && ttl !== Infinity) || (lastIdle === Infinity && idle !== Infinity)) return false;
    F[t] = abs;
    F[t + 1] = now;
    F[t + 2] = idle;
    const born = this.#born;
    if (born !== null) born[s] = now;
    const U = U8;
    const f = this.#f + s;
    const q = U[f];
    if (q < MAX_FREQ) U[f] = q + 1;
    vals[s] = value;
    this.#updated++;
    return true;
  }

  /**
   * Inserts new `key` on this side, into a slot reserved in advance, which
   * the engine links into its wheel and queues at its next call. False,
   * with nothing done: no room, no reserved slot, a full pending queue, a
   * bad key, or a deadline already past.
   */
  #add(key, value, ttl, idle) {
    sync();
    const now = this.#now;
    const abs = now + ttl;
    const lastIdle = now + idle;
    const spare = this.#spare;
    const np = this.#np;
    if (!((lastIdle < abs ? lastIdle : abs) > now) || typeof key !== "string") return false;
    // A finite ttl/idle that overflows the clock: the engine throws RangeError.
    if ((abs === Infinity && ttl !== Infinity) || (lastIdle === Infinity && idle !== Infinity)) return false;
    if (spare.length === 0 || np >= this.#npCap || this.#full()) return false;
    const r = spare.pop();
    const t = this.#t + r * 3;
    F64[t] = abs;
    F64[t + 1] = now;
    F64[t + 2] = idle;
    const born = this.#born;
    if (born !== null) born[r] = now;
    U8[this.#f + r] = 0;
    U32[this.#pend + np] = r;
    this.#np = np + 1;
    this.#index.set(key, r);
    this.#keys[r] = key;
    this.#vals[r] = value;
    return true;
  }

  /** Whether live entries, counting the queued inserts, are at maxEntries. */
  #full() {
    return U32[this.#st + ST_ENTRIES] + this.#np >= this.#maxEntries;
  }

  /**
   * The rest of set(). User code (option getters, a `Date` subclass, sizeOf)
   * may change this cache or any other, so the key is looked up only after
   * the last of it has run: a slot found before could now be another key's.
   */
  #setSlow(key, value, opts) {
    checkString("key", key);
    checkValue(value);
    this.#alive();
    let flags = parseWrite(opts);
    const ttl = wTtl;
    const idle = wIdle;
    const at = wAt;
    let w = 0;
    if (this.#sizeOf !== undefined) {
      this.#plainSlot(key); // WRONGTYPE before sizeOf sees the value
      w = this.#measure(value, key);
    }
    let s = this.#plainSlot(key);
    if (this.#sizeOf === undefined && (flags & (HAS_AT | KEEP_TTL)) === 0 && this.#quickSet(key, value, s, flags, ttl, idle)) {
      if (this.#loading !== 0) this.#invalidate(key, undefined);
      return this;
    }
    const returning = s !== undefined && s < 0;
    if (s === undefined || returning) s = NIL;
    if (returning) flags |= TO_MAIN;
    const r = this.#e().write(s, flags, ttl, idle, at, w);
    // A failed write can still have grown (moved) the engine's columns.
    if (r === FAILED) throw this.#failed();
    const calls = this.#drain();
    if (returning && r === NIL) this.#forget(key);
    let pending = calls;
    if (pending === null && this.#dispose !== undefined) pending = [];
    if (r !== NIL) {
      if (this.#born !== null) this.#born[r] = this.#now;
      if (this.#keys[r] === undefined) {
        if (returning) this.#revive(key);
        this.#index.set(key, r);
        this.#keys[r] = key;
        this.#vals[r] = value;
      } else {
        const old = this.#vals[r];
        this.#vals[r] = value;
        if (pending !== null && old !== value) pending.push(old, key, "replaced", undefined);
      }
    }
    if (this.#loading !== 0) this.#invalidate(key, undefined);
    this.#flush(pending);
    return this;
  }

  /**
   * An ordinary write done on this side, with no call into wasm (see
   * #overwrite and #add), for writes with options, a returning ghost, or a
   * `dispose` to call. False: the engine's path, which validates and throws.
   */
  #quickSet(key, value, s, flags, wttl, widle) {
    const ttl = flags & HAS_TTL ? wttl : this.#ttl;
    const idle = flags & HAS_IDLE ? widle : this.#idle;
    if (!(ttl > 0 && idle > 0)) return false;
    if (s !== undefined && s >= 0) {
      const prev = this.#vals[s];
      if (!this.#overwrite(s, value, ttl, idle)) return false;
      if (this.#dispose !== undefined && prev !== value) this.#flush([prev, key, "replaced", undefined]);
      return true;
    }
    if (this.#full()) return false; // before a refill: a full cache reserves no more
    if (this.#spare.length === 0) this.#refill();
    if (this.#np >= this.#npCap) {
      this.#e().commit();
      this.#drain();
    }
    // A returning ghost, still in the index (no removal since the lookup),
    // leaves it first: the key goes to the end, as a new key does.
    if (s !== undefined) this.#index.delete(key);
    if (!this.#add(key, value, ttl, idle)) {
      if (s !== undefined) this.#index.set(key, s);
      return false;
    }
    if (s !== undefined) {
      U32[this.#pend + this.#np - 1] |= TO_MAIN_BIT;
      this.#ghosts--;
    }
    return true;
  }

  #refill() {
    // A few slots for a small cache, up to RESERVE_BATCH for a big one: the
    // engine grows its columns to hold what it hands out.
    this.#e().reserve(Math.min(RESERVE_BATCH, Math.max(8, this.#index.size)));
    this.#drain();
    const st = this.#st;
    this.#pend = U32[st + ST_PENDING_PTR] >>> 2;
    const p = U32[st + ST_SPARE] >>> 2;
    const spare = this.#spare;
    for (let i = p + U32[st + ST_SPARE_LEN] - 1; i >= p; i--) spare.push(U32[i]);
  }

  /** The live value at `key`, restarting its idle window; or `undefined`. */
  get(key) {
    if (this.#seen !== epoch) this.#time();
    const s = this.#index.get(key);
    if (s !== undefined && s >= 0) {
      const t = this.#t + s * 3;
      const now = this.#now;
      const last = t + 1;
      if (F64[t] > now && F64[last] + F64[t + 2] > now) {
        const v = this.#vals[s];
        if (v instanceof Hash) return this.#getOnHash(s);
        F64[last] = now;
        const f = this.#f + s;
        const q = U8[f];
        if (q < MAX_FREQ) U8[f] = q + 1;
        this.#hits++;
        return v;
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
      sync();
      return this.get(key);
    }
    this.#misses++;
    this.#expireNow(s);
    return undefined;
  }

  #getOnHash(s) {
    if (this.#liveKey(s)) throw wrongType("hash", "plain value");
    this.#misses++;
    this.#expireNow(s);
    return undefined;
  }

  /** The live value at `key` without touching it; or `undefined`. */
  peek(key) {
    this.#sync();
    checkString("key", key);
    const s = this.#liveSlot(key);
    if (s === NIL) return undefined;
    const v = this.#vals[s];
    if (v instanceof Hash) throw wrongType("hash", "plain value");
    return v;
  }

  /** Whether `key` holds a live entry or hash. Does not touch it. */
  has(key) {
    this.#sync();
    checkString("key", key);
    return this.#liveSlot(key) !== NIL;
  }

  /** Restarts `key`'s idle window. @returns {boolean} false if missing */
  touch(key) {
    this.#sync();
    checkString("key", key);
    const s = this.#liveSlot(key);
    if (s === NIL) return false;
    this.#read(s);
    return true;
  }

  /** Removes `key` (a plain entry or a whole hash). @returns {boolean} */
  delete(key) {
    this.#sync();
    checkString("key", key);
    const s = this.#slot(key);
    if (s === undefined) {
      if (this.#loading !== 0) this.#invalidate(key, undefined); // a cold key's load
      return false;
    }
    const live = this.#liveKey(s);
    this.#e().remove(s, live ? DELETED : EXPIRED);
    const calls = this.#drain();
    // After the state is complete: aborting runs the loaders' listeners.
    if (this.#loading !== 0) this.#invalidate(key, undefined);
    this.#flush(calls);
    return live;
  }

  /** Removes everything; `dispose` sees reason `"cleared"`. */
  clear() {
    // The engine keeps our reserved slots reserved (it clears only what is
    // live), so #spare stays valid.
    this.#e().clear();
    const calls = this.#drain();
    this.#graced = 0;
    if (this.#loading !== 0) this.#invalidateAll();
    this.#flush(calls);
  }

  /** Sets an absolute deadline `ms` from now; `ms <= 0` deletes. */
  expire(key, ms, cond) {
    this.#sync();
    checkString("key", key);
    checkNumber("ms", ms);
    return this.#expireKey(key, undefined, this.#liveSlot(key), ms, true, condCode(cond));
  }

  /** Sets an absolute deadline at `time` (ms or `Date`); a past time deletes. */
  expireAt(key, time, cond) {
    this.#sync();
    checkString("key", key);
    const t = toTime("time", time);
    return this.#expireKey(key, undefined, this.#liveSlot(key), t, false, condCode(cond));
  }

  /**
   * Moves slot `s`'s absolute deadline (`expire`, `expireAt` and their hash
   * forms); one that changed something wins over a running load of `key`
   * (`field`).
   */
  #expireKey(key, field, s, t, rel, c) {
    const r = this.#e().expireAt(s, t, rel, c);
    const calls = this.#drain();
    if (r && this.#loading !== 0) this.#invalidate(key, field);
    this.#flush(calls);
    return r;
  }

  /** Drops both clocks. @returns {boolean} true if the key had one */
  persist(key) {
    this.#sync();
    checkString("key", key);
    const s = this.#liveSlot(key);
    return s !== NIL && this.#e().persist(s);
  }

  /** Ms until the earliest deadline; `Infinity` if none; `undefined` if missing. */
  ttl(key) {
    this.#sync();
    checkString("key", key);
    const s = this.#liveSlot(key);
    if (s === NIL) return undefined;
    const d = this.#deadline(s);
    return d === Infinity ? Infinity : d - this.#now;
  }

  /** Keys held, including expired ones a sweep has not reached yet. */
  get size() {
    this.#alive();
    return this.#index.size - this.#ghosts - this.#graced;
  }

  // ---- iteration (live entries only, insertion order, no touch) ------------

  #valueOf(s) {
    const v = this.#vals[s];
    return v instanceof Hash ? this.#liveFields(s, v) : v;
  }

  /**
   * Live [key, slot] pairs. The clock is read before each step rather than
   * once: the caller may await between steps.
   */
  *#liveSlots() {
    const it = this.#index.entries();
    for (;;) {
      if (this.#seen !== epoch) this.#time();
      const r = it.next();
      if (r.done) return;
      const s = r.value[1];
      if (s >= 0 && this.#liveKey(s)) yield r.value;
    }
  }

  keys() {
    this.#alive();
    return this.#keysGen();
  }

  *#keysGen() {
    for (const [k] of this.#liveSlots()) yield k;
  }

  values() {
    this.#alive();
    return this.#valuesGen();
  }

  *#valuesGen() {
    for (const [, s] of this.#liveSlots()) yield this.#valueOf(s);
  }

  entries() {
    this.#alive();
    return this.#entriesGen();
  }

  *#entriesGen() {
    for (const [k, s] of this.#liveSlots()) yield [k, this.#valueOf(s)];
  }

  [Symbol.iterator]() {
    return this.entries();
  }

  forEach(fn, thisArg) {
    if (typeof fn !== "function") throw new TypeError(`fn: must be a function, got ${describe(fn)}`);
    for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
  }

  get [Symbol.toStringTag]() {
    return "TtlCache";
  }

  /** Counters and gauges for tuning. */
  stats() {
    this.#sync();
    const p = this.#e().stats() >>> 3;
    sync();
    const a = F64.slice(p, p + 16);
    const reads = this.#hits + this.#misses;
    return {
      hits: this.#hits,
      misses: this.#misses,
      hitRatio: reads === 0 ? 0 : this.#hits / reads,
      expired: a[0],
      evicted: a[1],
      deleted: a[2],
      inserted: a[3],
      updated: a[4] + this.#updated,
      ticks: a[5],
      swept: a[6],
      rescheduled: a[7],
      cascaded: a[8],
      scheduled: a[9],
      size: a[10] - a[15],
      entries: a[11],
      bytes: a[12],
      smallQueue: a[13],
      engineBytes: a[14],
      wasmBytes: memory.buffer.byteLength,
      now: this.#now,
      maxEntries: this.#opts.maxEntries,
      maxBytes: this.#opts.maxBytes,
      loads: this.#nLoads,
      loadErrors: this.#loadErrors,
      coalesced: this.#coalesced,
      refreshes: this.#refreshes,
      staleServed: this.#staleServed,
    };
  }

  // ---- hashes -------------------------------------------------------------

  /** The live hash slot of `key`, or NIL; throws WRONGTYPE on a plain key. */
  #hashSlot(key) {
    const h = this.#liveSlot(key);
    if (h !== NIL && !(this.#vals[h] instanceof Hash)) throw wrongType("plain value", "hash");
    return h;
  }

  /** The live field slot, or NIL. */
  #fieldSlot(h, field) {
    if (h === NIL) return NIL;
    const f = this.#vals[h].fields.get(field);
    return f !== undefined && this.#live(f) ? f : NIL;
  }

  #liveFields(h, box) {
    const out = new Map();
    for (const [name, f] of box.fields) if (this.#live(f)) out.set(name, this.#vals[f]);
    return out;
  }

  /** Writes a hash field. @returns {boolean} true if the field is new */
  hset(key, field, value, opts) {
    this.#sync();
    checkString("key", key);
    checkString("field", field);
    checkValue(value);
    this.#alive();
    let flags = parseWrite(opts);
    const ttl = wTtl;
    const idle = wIdle;
    const at = wAt;
    let w = 0;
    if (this.#sizeOf !== undefined) {
      this.#hashTarget(key); // WRONGTYPE before sizeOf sees the value
      w = this.#measure(value, key, field);
    }
    // Looked up after the last user code (see #setSlow).
    let h = this.#hashTarget(key);
    let f = NIL;
    const returning = h !== undefined && h < 0;
    if (h === undefined || returning) {
      h = NIL;
    } else if (this.#liveKey(h)) {
      const fs = this.#vals[h].fields.get(field);
      if (fs !== undefined) f = fs;
    }
    if (returning) flags |= TO_MAIN;
    const r = this.#e().hwrite(h, f, flags, ttl, idle, at, w);
    // A failed write can still have grown (moved) the engine's columns.
    if (r === FAILED) throw this.#failed();
    let calls = this.#drain();
    if (returning && r === NIL) this.#forget(key);
    if (calls === null && this.#dispose !== undefined) calls = [];
    if (r === NIL) {
      if (this.#loading !== 0) this.#invalidate(key, field, true);
      this.#flush(calls);
      return false;
    }
    const hs = U32[this.#st + ST_HASH];
    let box = this.#vals[hs];
    if (this.#keys[hs] === undefined) {
      box = new Hash();
      if (returning) this.#revive(key);
      this.#index.set(key, hs);
      this.#keys[hs] = key;
      this.#vals[hs] = box;
    }
    const isNew = this.#keys[r] === undefined;
    if (this.#born !== null) this.#born[r] = this.#now;
    if (isNew) {
      box.fields.set(field, r);
      this.#keys[r] = field;
      this.#vals[r] = value;
    } else {
      const old = this.#vals[r];
      this.#vals[r] = value;
      if (calls !== null && old !== value) calls.push(old, key, "replaced", field);
    }
    // After the state is complete: aborting runs the loaders' listeners.
    if (this.#loading !== 0) this.#invalidate(key, field, true);
    this.#flush(calls);
    return isNew;
  }

  /** What the index holds for `key`; WRONGTYPE on a live plain entry. */
  #hashTarget(key) {
    const h = this.#index.get(key);
    if (h !== undefined && h >= 0 && !(this.#vals[h] instanceof Hash) && this.#liveKey(h)) {
      throw wrongType("plain value", "hash");
    }
    return h;
  }

  /** A live field's value, restarting the field's and the key's idle windows. */
  hget(key, field) {
    this.#sync();
    checkString("key", key);
    checkString("field", field);
    const s = this.#slot(key);
    if (s === undefined) {
      this.#misses++;
      return undefined;
    }
    if (!this.#liveKey(s)) {
      this.#misses++;
      this.#expireNow(s);
      return undefined;
    }
    const box = this.#vals[s];
    if (!(box instanceof Hash)) throw wrongType("plain value", "hash");
    const f = box.fields.get(field);
    if (f === undefined) {
      this.#misses++;
      return undefined;
    }
    if (!this.#live(f)) {
      this.#misses++;
      this.#expireNow(f);
      return undefined;
    }
    this.#read(f);
    this.#read(s);
    this.#hits++;
    return this.#vals[f];
  }

  /** Whether the field is live. No touch. */
  hhas(key, field) {
    this.#sync();
    checkString("key", key);
    checkString("field", field);
    return this.#fieldSlot(this.#hashSlot(key), field) !== NIL;
  }

  /** Removes a field; the last one takes the key. @returns {boolean} */
  hdel(key, field) {
    this.#sync();
    checkString("key", key);
    checkString("field", field);
    const f = this.#fieldSlot(this.#hashSlot(key), field);
    if (f === NIL) {
      if (this.#loading !== 0) this.#invalidate(key, field);
      return false;
    }
    this.#e().remove(f, DELETED);
    const calls = this.#drain();
    if (this.#loading !== 0) this.#invalidate(key, field);
    this.#flush(calls);
    return true;
  }

  /** Number of live fields (0 if the key is missing). */
  hlen(key) {
    this.#sync();
    checkString("key", key);
    const h = this.#hashSlot(key);
    if (h === NIL) return 0;
    let n = 0;
    for (const f of this.#vals[h].fields.values()) if (this.#live(f)) n++;
    return n;
  }

  /** A `Map` of the live fields (empty if the key is missing). No touch. */
  hgetall(key) {
    this.#sync();
    checkString("key", key);
    const h = this.#hashSlot(key);
    return h === NIL ? new Map() : this.#liveFields(h, this.#vals[h]);
  }

  /** Sets a field's absolute deadline `ms` from now; `ms <= 0` deletes it. */
  hexpire(key, field, ms, cond) {
    this.#sync();
    checkString("key", key);
    checkString("field", field);
    checkNumber("ms", ms);
    const c = condCode(cond);
    return this.#expireKey(key, field, this.#fieldSlot(this.#hashSlot(key), field), ms, true, c);
  }

  /** Sets a field's absolute deadline at `time`; a past time deletes it. */
  hexpireAt(key, field, time, cond) {
    this.#sync();
    checkString("key", key);
    checkString("field", field);
    const t = toTime("time", time);
    const c = condCode(cond);
    return this.#expireKey(key, field, this.#fieldSlot(this.#hashSlot(key), field), t, false, c);
  }

  /** Drops a field's clocks. @returns {boolean} true if it had one */
  hpersist(key, field) {
    this.#sync();
    checkString("key", key);
    checkString("field", field);
    const f = this.#fieldSlot(this.#hashSlot(key), field);
    return f !== NIL && this.#e().persist(f);
  }

  /** Ms until the field goes (its own clocks or its key's, whichever first). */
  httl(key, field) {
    this.#sync();
    checkString("key", key);
    checkString("field", field);
    const h = this.#hashSlot(key);
    const f = this.#fieldSlot(h, field);
    if (f === NIL) return undefined;
    const df = this.#deadline(f);
    const dh = this.#deadline(h);
    const d = df < dh ? df : dh;
    return d === Infinity ? Infinity : d - this.#now;
  }

  // ---- loading: fetch / hfetch ----------------------------------------------
  //
  // Running loads live in #loads (key -> Load) and #hloads (key -> field ->
  // Load), created on first use. A load is called once and shared by every
  // fetch of its key while it runs; #invalidate takes it out of the maps when
  // a write, delete, expire, eviction or clear of its key wins over it.

  /**
   * The live value at `key`, or what `loader(key, { signal })` produces,
   * stored with `opts` (`ttl`, `idle`, `expireAt`); one load per key at a
   * time, shared. Bad arguments reject before anything changes.
   * @returns {Promise<any>}
   */
  fetch(key, loader, opts) {
    try {
      this.#sync();
      checkString("key", key);
      return this.#fetch(key, undefined, loader, opts);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * As `fetch`, for one hash field: `loader(key, field, { signal })`.
   * @returns {Promise<any>}
   */
  hfetch(key, field, loader, opts) {
    try {
      this.#sync();
      checkString("key", key);
      checkString("field", field);
      return this.#fetch(key, field, loader, opts);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  #fetch(key, field, loader, opts) {
    if (typeof loader !== "function") throw new TypeError(`loader: must be a function, got ${describe(loader)}`);
    const fo = parseFetch(opts);
    const refresh = fo.refresh === undefined ? this.#refresh : fo.refresh;
    let s;
    let h = NIL;
    if (field === undefined) {
      s = this.#liveSlot(key);
      if (s !== NIL && this.#vals[s] instanceof Hash) throw wrongType("hash", "plain value");
    } else {
      h = this.#hashSlot(key);
      s = this.#fieldSlot(h, field);
    }
    if (fo.signal !== undefined && fo.signal.aborted) return Promise.reject(fo.signal.reason);
    if (refresh !== undefined) this.#trackBirths();
    let ld = this.#loadOf(key, field);
    if (s !== NIL) {
      // A hit, as `get`/`hget` count it; maybe a refresh behind it.
      this.#read(s);
      if (h !== NIL) this.#read(h);
      this.#hits++;
      const v = this.#vals[s];
      if (ld === undefined && refresh !== undefined && this.#age(s) > refresh) {
        this.#refreshes++;
        this.#start(key, field, loader, fo, true);
      }
      return Promise.resolve(v);
    }
    this.#misses++;
    if (ld === undefined) ld = this.#start(key, field, loader, fo, false);
    else this.#coalesced++;
    return this.#wait(ld, fo.signal);
  }

  /** Ms since slot `s` was written; for a slot older than the stamps, a lower bound. */
  #age(s) {
    const t = this.#born[s];
    return this.#now - (t === undefined ? this.#bornFrom : t);
  }

  #loadOf(key, field) {
    if (field === undefined) return this.#loads === null ? undefined : this.#loads.get(key);
    const m = this.#hloads === null ? undefined : this.#hloads.get(key);
    return m === undefined ? undefined : m.get(field);
  }

  /** Registers a load, then calls the loader (which may call back into this cache). */
  #start(key, field, loader, fo, background) {
    const ld = new Load(key, field, fo, background);
    if (field === undefined) {
      if (this.#loads === null) this.#loads = new Map();
      this.#loads.set(key, ld);
    } else {
      if (this.#hloads === null) this.#hloads = new Map();
      let m = this.#hloads.get(key);
      if (m === undefined) this.#hloads.set(key, (m = new Map()));
      m.set(field, ld);
    }
    this.#loading++;
    this.#nLoads++;
    const ctx = { signal: ld.ctrl.signal };
    let p;
    try {
      p = Promise.resolve(field === undefined ? loader(key, ctx) : loader(key, field, ctx));
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (v) => this.#settle(ld, true, v),
      (e) => this.#settle(ld, false, e),
    );
    return ld;
  }

  /** Takes `ld` out of the load maps (its result will not be stored). */
  #unlist(ld) {
    if (!ld.live) return;
    ld.live = false;
    this.#loading--;
    if (ld.field === undefined) {
      this.#loads.delete(ld.key);
    } else {
      const m = this.#hloads.get(ld.key);
      m.delete(ld.field);
      if (m.size === 0) this.#hloads.delete(ld.key);
    }
  }

  /**
   * A write, delete, expire, eviction or clear of `key` (or of its `field`)
   * wins over its running loads: they store nothing and their signals abort.
   * A change to the key ends the loads of its fields too; `plainToo` (hset)
   * ends the key's plain load, whose store would now be WRONGTYPE.
   */
  #invalidate(key, field, plainToo) {
    const doomed = [];
    const ld = this.#loads === null || (field !== undefined && !plainToo) ? undefined : this.#loads.get(key);
    if (ld !== undefined) doomed.push(ld);
    const m = this.#hloads === null ? undefined : this.#hloads.get(key);
    if (m !== undefined) {
      if (field === undefined) {
        for (const f of m.values()) doomed.push(f);
      } else {
        const f = m.get(field);
        if (f !== undefined) doomed.push(f);
      }
    }
    for (const d of doomed) this.#unlist(d);
    for (const d of doomed) d.ctrl.abort();
  }

  #invalidateAll() {
    const doomed = [];
    if (this.#loads !== null) for (const ld of this.#loads.values()) doomed.push(ld);
    if (this.#hloads !== null) for (const m of this.#hloads.values()) for (const ld of m.values()) doomed.push(ld);
    for (const d of doomed) this.#unlist(d);
    for (const d of doomed) d.ctrl.abort();
  }

  /** Loads whose keys #drain saw removed (evicted, deleted, cleared). */
  #abortDoomed() {
    const d = this.#doomed;
    this.#doomed = [];
    for (let i = 0; i < d.length; i += 2) this.#invalidate(d[i], d[i + 1]);
  }

  /** A promise for `ld`'s outcome; `signal` lets this caller stop waiting. */
  #wait(ld, signal) {
    if (signal === undefined) {
      if (ld.shared === null) {
        ld.shared = new Promise((resolve, reject) => {
          ld.resolve = resolve;
          ld.reject = reject;
        });
      }
      ld.sharedN++;
      return ld.shared;
    }
    return new Promise((resolve, reject) => {
      const sub = { resolve, reject, signal, onAbort: null };
      ld.subs.push(sub);
      sub.onAbort = () => {
        const i = ld.subs.indexOf(sub);
        if (i < 0) return;
        ld.subs.splice(i, 1);
        reject(signal.reason);
        // The last waiter gone: nobody wants this load any more.
        if (ld.subs.length === 0 && ld.sharedN === 0 && !ld.background && !ld.settled) {
          this.#unlist(ld);
          ld.ctrl.abort();
        }
      };
      signal.addEventListener("abort", sub.onAbort, { once: true });
      // The loader runs before this: it may have aborted the signal already.
      if (signal.aborted) sub.onAbort();
    });
  }

  /** The value `key` (`field`) keeps in grace, as `[value]`; `null` if none. */
  #stale(key, field) {
    const s = this.#slot(key);
    if (s === undefined) return null;
    let f = s;
    if (field === undefined) {
      if (this.#vals[s] instanceof Hash || this.#live(s)) return null;
    } else {
      const box = this.#vals[s];
      if (!(box instanceof Hash)) return null;
      f = box.fields.get(field);
      if (f === undefined || (this.#live(f) && this.#live(s))) return null;
    }
    return this.#e().staleUntil(f) > this.#now ? [this.#vals[f]] : null;
  }

  /** A load's outcome: store it (unless invalidated), then answer every waiter. */
  #settle(ld, ok, v) {
    ld.settled = true;
    try {
      this.#sync(); // a promise reaction: a new run, maybe a later time
    } catch (e) {
      if (ok) {
        ok = false; // a throwing clock: the store would throw it too
        v = e;
      }
    }
    const store = ld.live;
    this.#unlist(ld);
    if (ok && store && v !== undefined) {
      try {
        this.#store(ld, v);
      } catch (e) {
        ok = false;
        v = e;
      }
    }
    const subs = ld.subs;
    ld.subs = [];
    for (const sub of subs) sub.signal.removeEventListener("abort", sub.onAbort);
    const waiters = subs.length + ld.sharedN;
    if (ok) {
      for (const sub of subs) sub.resolve(v);
      if (ld.shared !== null) ld.resolve(v);
      return;
    }
    this.#loadErrors++;
    const stale = waiters === 0 ? null : this.#stale(ld.key, ld.field);
    if (stale !== null) {
      this.#staleServed += waiters;
      for (const sub of subs) sub.resolve(stale[0]);
      if (ld.shared !== null) ld.resolve(stale[0]);
    } else {
      for (const sub of subs) sub.reject(v);
      if (ld.shared !== null) ld.reject(v);
    }
    // An error no caller was rejected with goes to onLoadError, unless it is
    // the abort this cache asked for.
    if ((waiters === 0 || stale !== null) && !ld.ctrl.signal.aborted && this.#onLoadError !== undefined) {
      try {
        this.#onLoadError(v, ld.key, ld.field);
      } catch {
        // A throwing listener has nowhere to go: this runs in a promise
        // reaction, where a throw would be an unhandled rejection.
      }
    }
  }

  #store(ld, v) {
    if (ld.field === undefined) this.set(ld.key, v, ld.write);
    else this.hset(ld.key, ld.field, v, ld.write);
    if (ld.grace === undefined) return;
    const s = this.#slot(ld.key);
    if (s === undefined) return;
    const f = ld.field === undefined ? s : this.#vals[s].fields.get(ld.field);
    if (f === undefined || !this.#live(f)) return;
    this.#e().setGrace(f, ld.grace);
    this.#flush(this.#drain()); // it may allocate, which makes the views stale
  }

  // ---- snapshots (format: SNAPSHOT.md; tape: src/binding/snap.rs) ----------

  /**
   * Every live entry and field with its clocks, the clock and the data
   * options, in a versioned, checksummed format. Throws `TypeError` naming
   * the key (and field) for a value with no data form; changes nothing.
   * @returns {Uint8Array}
   */
  snapshot() {
    // Everything is copied out first: walking the values runs user code
    // (getters) that may change this cache, and must not pair a key with
    // another key's clocks or value. The snapshot is the cache as it was
    // when snapshot() was called.
    this.#alive();
    this.#sync();
    const sized = this.#sizeOf !== undefined;
    const rows = []; // per entry: key, value or null, abs, last, idle, weight, then per field the same
    const shape = []; // per entry: -1 plain, or its number of fields
    for (const [key, s] of this.#index) {
      if (s < 0 || !this.#liveKey(s)) continue;
      const v = this.#vals[s];
      this.#row(rows, key, v instanceof Hash ? null : v, s, sized && !(v instanceof Hash));
      if (!(v instanceof Hash)) {
        shape.push(-1);
        continue;
      }
      let n = 0;
      for (const [name, f] of v.fields) {
        if (!this.#live(f)) continue;
        this.#row(rows, name, this.#vals[f], f, sized);
        n++;
      }
      shape.push(n);
    }
    const o = this.#opts;
    const w = new Writer();
    w.header(this.#now, this.#clock !== undefined, o.ttl, o.idle, o.maxEntries, o.maxBytes, o.sweepBudget, shape.length);
    let r = 0;
    for (let i = 0; i < shape.length; i++) {
      const key = rows[r];
      w.head(shape[i] < 0 ? 0 : 1, key, rows[r + 2], rows[r + 3], rows[r + 4], rows[r + 5]);
      if (shape[i] < 0) {
        w.entry(rows[r + 1], key, undefined);
        r += 6;
        continue;
      }
      r += 6;
      w.varint(shape[i]);
      for (let j = 0; j < shape[i]; j++, r += 6) {
        w.head(2, rows[r], rows[r + 2], rows[r + 3], rows[r + 4], rows[r + 5]);
        w.entry(rows[r + 1], key, rows[r]);
      }
    }
    const out = w.finish();
    this.#check(out);
    return out;
  }

  /** Appends a snapshot row: name, value, clocks and recorded size of slot `s`. */
  #row(rows, name, v, s, sized) {
    sync();
    const t = this.#t + s * 3;
    rows.push(name, v, F64[t], F64[t + 1], F64[t + 2], sized ? this.#eng.slotWeight(s) : 0);
  }

  /**
   * Has the engine check snapshot bytes this side wrote. The bytes are copied
   * into a buffer the engine allocates fallibly: too big for wasm memory is
   * a RangeError, and the cache is unchanged.
   */
  #check(out) {
    const e = this.#e();
    copyIn(e, out, "snapshot");
    try {
      e.checkSnapshot();
    } finally {
      sync();
    }
    this.#flush(this.#drain());
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
    if (memory === null) memory = wasmMemory();
    if (Object.prototype.toString.call(bytes) !== "[object Uint8Array]") {
      throw new TypeError(`bytes: must be a Uint8Array, got ${describe(bytes)}`);
    }
    const o = opts === undefined ? {} : opts;
    checkOptions("opts", o, RESTORE_OPTIONS);
    const sizeOf = optionalFunction("sizeOf", o.sizeOf);
    const dispose = optionalFunction("dispose", o.dispose);
    const optNow = o.now;
    const optClock = o.clock;
    clockOption(optNow, optClock);
    // Our own copy: the bytes are read twice (checked in wasm, then decoded
    // here), and must be the same bytes both times.
    const copy = Uint8Array.prototype.slice.call(bytes);
    const raw = new RawEngine(0, Infinity, Infinity, Infinity, Infinity, 0);
    let h;
    try {
      copyIn(raw, copy, "bytes");
      h = raw.restore();
    } catch (e) {
      raw.free();
      throw e;
    } finally {
      // Both calls may have grown the memory; every cache's views must follow
      // even when this restore throws (the constructor below may, too).
      sync();
    }
    // The clock mode is a header flag of version 2 (the decoder checked it);
    // version 1 had none and reads as manual. Options override it.
    const follows = copy[4] >= 2 && (copy[6] & 1) !== 0;
    let c;
    adopting = raw;
    try {
      c = new TtlCache({
        now: optClock !== undefined ? undefined : optNow !== undefined ? optNow : follows ? undefined : h[0],
        clock: optClock,
        ttl: h[1],
        idle: h[2],
        maxEntries: h[3],
        maxBytes: h[4],
        sweepBudget: h[5],
        sizeOf,
        dispose,
        refresh: o.refresh,
        grace: o.grace,
        onLoadError: o.onLoadError,
      });
    } catch (e) {
      raw.free();
      throw e;
    } finally {
      adopting = null;
    }
    c.#fill(new ByteReader(copy));
    return c;
  }

  /**
   * Fills the key index, keys and values from snapshot bytes the engine has
   * checked (format: SNAPSHOT.md). The engine handed out slots 0, 1, 2, ...
   * in order, hashes before their fields.
   */
  #fill(r) {
    const count = r.header();
    let slot = 0;
    for (let e = 0; e < count; e++) {
      const s = slot++;
      const kind = r.head();
      const key = r.name;
      this.#index.set(key, s);
      this.#keys[s] = key;
      if (kind === 0) {
        this.#vals[s] = r.value();
        continue;
      }
      const box = new Hash();
      this.#vals[s] = box;
      const nf = r.varint();
      for (let i = 0; i < nf; i++) {
        const f = slot++;
        r.head();
        const name = r.name;
        box.fields.set(name, f);
        this.#keys[f] = name;
        this.#vals[f] = r.value();
      }
    }
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

/**
 * Copies `bytes` into a buffer engine `e` allocates for them (fallibly:
 * wasm-bindgen's own argument copy aborts the instance when memory runs out).
 */
function copyIn(e, bytes, arg) {
  const p = e.input(bytes.length);
  if (p === 0 && bytes.length !== 0) {
    throw new RangeError(`${arg}: out of memory: wasm memory cannot hold ${bytes.length} bytes`);
  }
  sync();
  U8.set(bytes, p);
}

// ---- snapshots: the writer (format: SNAPSHOT.md) and the restore tape reader --
//
// The decoder is Rust's (src/snapshot.rs); it checks every snapshot written
// here before snapshot() returns it, and accepts only canonical encodings.

const MAX_DEPTH = 64;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
// Value tags of the format.
const F_UNDEF = 0;
const F_NULL = 1;
const F_FALSE = 2;
const F_TRUE = 3;
const F_INT = 4;
const F_FLOAT = 5;
const F_STRING = 6;
const F_ARRAY = 7;
const F_OBJECT = 8;
const F_NULL_OBJECT = 9;
const F_BYTES = 10;
const F_DATE = 11;
const F_MAP = 12;
const F_BIGINT = 13;
const F_NEG_BIGINT = 14;

let crcTable = null;

function crc32(b, n) {
  if (crcTable === null) {
    crcTable = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[i] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (let i = 0; i < n; i++) c = crcTable[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Thrown inside the walk; `snapshot()` turns it into a TypeError naming the key. */
class NoData {
  constructor(what) {
    this.what = what;
  }
}

function kindOf(v) {
  const p = Object.getPrototypeOf(v);
  const name = p !== null && typeof p.constructor === "function" ? p.constructor.name : "";
  return name ? `it holds an instance of ${name}` : "it holds an object with an unusual prototype";
}

/** Writes the snapshot format (see SNAPSHOT.md). */
class Writer {
  constructor() {
    this.buf = new Uint8Array(1024);
    this.dv = new DataView(this.buf.buffer);
    this.n = 0;
    this.stack = [];
  }

  need(k) {
    if (this.n + k <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.n + k));
    b.set(this.buf.subarray(0, this.n));
    this.buf = b;
    this.dv = new DataView(b.buffer);
  }

  u8(x) {
    this.need(1);
    this.buf[this.n++] = x;
  }

  f64(x) {
    this.need(8);
    if (x !== x) {
      this.dv.setUint32(this.n, 0, true);
      this.dv.setUint32(this.n + 4, 0x7ff80000, true); // the one canonical NaN
    } else {
      this.dv.setFloat64(this.n, x, true);
    }
    this.n += 8;
  }

  /** LEB128 of a non-negative integer up to 2^53, or a bigint. */
  varint(v) {
    if (typeof v === "bigint") {
      while (v >= 128n) {
        this.u8(Number(v & 127n) | 128);
        v >>= 7n;
      }
      this.u8(Number(v));
      return;
    }
    while (v >= 128) {
      this.u8((v % 128) | 128);
      v = Math.floor(v / 128);
    }
    this.u8(v);
  }

  /** Latin-1 when every code unit fits a byte, else UTF-16LE (lone surrogates kept). */
  str(s) {
    const len = s.length;
    let wide = 0;
    for (let i = 0; i < len; i++) {
      if (s.charCodeAt(i) > 255) {
        wide = 1;
        break;
      }
    }
    this.varint(len * 2 + wide);
    this.need(len << wide);
    const b = this.buf;
    let n = this.n;
    if (wide) {
      for (let i = 0; i < len; i++) {
        const c = s.charCodeAt(i);
        b[n++] = c & 255;
        b[n++] = c >>> 8;
      }
    } else {
      for (let i = 0; i < len; i++) b[n++] = s.charCodeAt(i);
    }
    this.n = n;
  }

  raw(bytes) {
    this.varint(bytes.length);
    this.need(bytes.length);
    this.buf.set(bytes, this.n);
    this.n += bytes.length;
  }

  header(now, follows, ttl, idle, maxEntries, maxBytes, sweepBudget, count) {
    this.u8(0x89);
    this.u8(0x4c); // "LPS"
    this.u8(0x50);
    this.u8(0x53);
    this.u8(2); // version 2, LE
    this.u8(0);
    this.u8(follows ? 1 : 0); // flags: bit 0, the clock follows a clock (not manual)
    for (let i = 0; i < 9; i++) this.u8(0); // flags high byte, length (patched)
    this.f64(now);
    this.f64(ttl);
    this.f64(idle);
    this.varint(maxEntries === Infinity ? 0 : maxEntries);
    this.varint(maxBytes === Infinity ? 0 : maxBytes);
    this.varint(sweepBudget === Infinity ? 0 : sweepBudget + 1);
    this.varint(count);
  }

  /** Flags, key or field name, clocks and size. kind: 0 plain, 1 hash, 2 field. */
  head(kind, name, abs, last, idle, weight) {
    this.u8(kind | (abs !== Infinity ? 4 : 0) | (idle !== Infinity ? 8 : 0) | (weight !== 0 ? 16 : 0));
    this.str(name);
    if (abs !== Infinity) this.f64(abs);
    this.f64(last);
    if (idle !== Infinity) this.f64(idle);
    if (weight !== 0) this.varint(weight);
  }

  entry(v, key, field) {
    try {
      this.value(v, 0);
    } catch (e) {
      if (!(e instanceof NoData)) throw e;
      const where = field === undefined ? `key ${JSON.stringify(key)}` : `key ${JSON.stringify(key)} field ${JSON.stringify(field)}`;
      throw new TypeError(`snapshot: the value at ${where} has no data form: ${e.what}`);
    }
  }

  value(v, depth) {
    if (depth > MAX_DEPTH) throw new NoData(`it is nested deeper than ${MAX_DEPTH} levels`);
    switch (typeof v) {
      case "number":
        if (Number.isInteger(v) && Math.abs(v) <= MAX_SAFE && !Object.is(v, -0)) {
          this.u8(F_INT);
          this.varint(Math.abs(v) < 2 ** 52 ? (v < 0 ? -2 * v - 1 : 2 * v) : v < 0 ? -2n * BigInt(v) - 1n : 2n * BigInt(v));
        } else {
          this.u8(F_FLOAT);
          this.f64(v);
        }
        return;
      case "string":
        this.u8(F_STRING);
        this.str(v);
        return;
      case "boolean":
        this.u8(v ? F_TRUE : F_FALSE);
        return;
      case "undefined":
        this.u8(F_UNDEF);
        return;
      case "bigint": {
        const neg = v < 0n;
        let hex = v === 0n ? "" : (neg ? -v : v).toString(16);
        if (hex.length % 2 === 1) hex = "0" + hex;
        const mag = new Uint8Array(hex.length / 2);
        for (let i = 0; i < mag.length; i++) mag[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
        this.u8(neg ? F_NEG_BIGINT : F_BIGINT);
        this.raw(mag);
        return;
      }
      case "object":
        break;
      default:
        throw new NoData(`it holds a ${typeof v}`);
    }
    if (v === null) {
      this.u8(F_NULL);
      return;
    }
    const stack = this.stack;
    if (stack.includes(v)) throw new NoData("it contains a cycle");
    const p = Object.getPrototypeOf(v);
    if (p === Uint8Array.prototype) {
      this.u8(F_BYTES);
      this.raw(v);
      return;
    }
    if (p === Date.prototype) {
      this.u8(F_DATE);
      this.f64(v.getTime());
      return;
    }
    stack.push(v);
    if (p === Array.prototype && Array.isArray(v)) {
      const n = v.length;
      // The format holds an array's elements only: named properties would be
      // dropped. Object.keys lists indices first, so the last key tells.
      const keys = Object.keys(v);
      const last = keys.length === 0 ? undefined : keys[keys.length - 1];
      if (last !== undefined && !(String(+last) === last && +last < n)) {
        throw new NoData("it is an array with named properties");
      }
      this.u8(F_ARRAY);
      this.varint(n);
      for (let i = 0; i < n; i++) this.value(v[i], depth + 1);
    } else if (p === Map.prototype) {
      this.u8(F_MAP);
      this.varint(v.size);
      for (const [k, x] of v) {
        this.value(k, depth + 1);
        this.value(x, depth + 1);
      }
    } else if (p === Object.prototype || p === null) {
      const keys = Object.keys(v);
      this.u8(p === null ? F_NULL_OBJECT : F_OBJECT);
      this.varint(keys.length);
      for (const k of keys) {
        this.str(k);
        this.value(v[k], depth + 1);
      }
    } else {
      throw new NoData(kindOf(v));
    }
    stack.pop();
  }

  /** Patches the length, appends the CRC-32; returns the bytes. */
  finish() {
    const total = this.n + 4;
    this.dv.setUint32(8, total % 2 ** 32, true);
    this.dv.setUint32(12, Math.floor(total / 2 ** 32), true);
    const crc = crc32(this.buf, this.n);
    this.need(4);
    this.dv.setUint32(this.n, crc, true);
    this.n += 4;
    return this.buf.slice(0, this.n);
  }
}

/**
 * Reads keys and values back from snapshot bytes the engine has checked
 * (every rule of SNAPSHOT.md holds, so nothing is re-checked here). Reading
 * them here, not from a tape the engine builds, keeps the wasm memory a
 * restore needs proportional to the keys: a tape costs up to 12 bytes of
 * wasm memory per snapshot byte.
 */
class ByteReader {
  constructor(bytes) {
    this.b = bytes;
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.p = 0;
    this.name = "";
  }

  /** Skips the header and options; returns the entry count. */
  header() {
    this.p = 16 + 24;
    for (let i = 0; i < 3; i++) this.varint();
    return this.varint();
  }

  /** A count or length (at most the input's length, so a safe integer). */
  varint() {
    const b = this.b;
    let v = 0;
    let m = 1;
    for (;;) {
      const x = b[this.p++];
      v += (x & 127) * m;
      if (x < 128) return v;
      m *= 128;
    }
  }

  /** A varint that may exceed 2^53 (an integer value's zigzag form). */
  bigVarint() {
    const b = this.b;
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const x = b[this.p++];
      v |= BigInt(x & 127) << shift;
      if (x < 128) return v;
      shift += 7n;
    }
  }

  f64() {
    const x = this.dv.getFloat64(this.p, true);
    this.p += 8;
    return x;
  }

  str() {
    const h = this.varint();
    const len = Math.floor(h / 2);
    const b = this.b;
    let p = this.p;
    let s = "";
    if (h % 2 === 0) {
      const end = p + len;
      for (let q = p; q < end; q += 8192) {
        s += String.fromCharCode.apply(null, b.subarray(q, Math.min(end, q + 8192)));
      }
      p = end;
    } else {
      const units = new Uint16Array(Math.min(len, 8192));
      for (let done = 0; done < len; ) {
        const n = Math.min(len - done, 8192);
        for (let i = 0; i < n; i++, p += 2) units[i] = b[p] | (b[p + 1] << 8);
        s += String.fromCharCode.apply(null, n === units.length ? units : units.subarray(0, n));
        done += n;
      }
    }
    this.p = p;
    return s;
  }

  /** An entry's or field's head: sets `name`, skips clocks and size; returns the kind. */
  head() {
    const f = this.b[this.p++];
    this.name = this.str();
    this.p += 8 + (f & 4 ? 8 : 0) + (f & 8 ? 8 : 0);
    if (f & 16) this.varint();
    return f & 3;
  }

  bytes(n) {
    const out = this.b.slice(this.p, this.p + n);
    this.p += n;
    return out;
  }

  value() {
    const t = this.b[this.p++];
    switch (t) {
      case F_UNDEF:
        return undefined;
      case F_NULL:
        return null;
      case F_FALSE:
        return false;
      case F_TRUE:
        return true;
      case F_INT: {
        const start = this.p;
        const z = this.varint();
        if (z <= MAX_SAFE) return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
        this.p = start;
        const zb = this.bigVarint();
        return Number(zb & 1n ? -((zb + 1n) >> 1n) : zb >> 1n);
      }
      case F_FLOAT:
        return this.f64();
      case F_STRING:
        return this.str();
      case F_ARRAY: {
        const n = this.varint();
        const a = [];
        for (let i = 0; i < n; i++) a.push(this.value());
        return a;
      }
      case F_OBJECT:
      case F_NULL_OBJECT: {
        const n = this.varint();
        const o = t === F_OBJECT ? {} : Object.create(null);
        for (let i = 0; i < n; i++) {
          const k = this.str();
          const x = this.value();
          if (k === "__proto__") {
            Object.defineProperty(o, k, { value: x, writable: true, enumerable: true, configurable: true });
          } else {
            o[k] = x;
          }
        }
        return o;
      }
      case F_BYTES:
        return this.bytes(this.varint());
      case F_DATE:
        return new Date(this.f64());
      case F_MAP: {
        const n = this.varint();
        const m = new Map();
        for (let i = 0; i < n; i++) {
          const k = this.value();
          m.set(k, this.value());
        }
        return m;
      }
      case F_BIGINT:
      case F_NEG_BIGINT: {
        const mag = this.bytes(this.varint());
        let hex = "";
        for (let i = 0; i < mag.length; i++) hex += (mag[i] < 16 ? "0" : "") + mag[i].toString(16);
        const v = hex === "" ? 0n : BigInt("0x" + hex);
        return t === F_NEG_BIGINT ? -v : v;
      }
      default:
        throw new Error(`snapshot: internal: bad value tag ${t}`);
    }
  }
}
