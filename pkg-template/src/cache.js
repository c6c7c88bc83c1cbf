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
// buffer first (`syncViews()`), or, on the hot paths, reads through a check that
// fails safe (a detached view reads `undefined`: "not live", then re-check).

import { RawEngine } from "./glue.js";
import { epoch, clockOption, readClock, stamp } from "./clock.js";
import {
  CLEARED,
  DELETED,
  ENTER_GRACE,
  EVICTED,
  EXPIRED,
  FAILED,
  FOUND_EXPIRED,
  GHOST,
  GRACED,
  HAS_AT,
  HAS_IDLE,
  HAS_TTL,
  KEEP_TTL,
  KIND_FIELD,
  KIND_HASH,
  KIND_PLAIN,
  MAX_FREQ,
  NIL,
  REASONS,
  ST_CAP,
  ST_ENTRIES,
  ST_FREQ,
  ST_HASH,
  ST_LOG,
  ST_LOG_LEN,
  ST_NOW,
  ST_PENDING,
  ST_PENDING_PTR,
  ST_SPARE,
  ST_SPARE_LEN,
  ST_TIMES,
  TO_MAIN,
  TO_MAIN_BIT,
} from "./constants.js";
import { Load, allLoads, callLoader, detachWaiters, loadOf, loadsOf, rejectWaiters, resolveWaiters, wait } from "./fetch.js";
import { Hash } from "./hash.js";
import { F64, U8, U32, attachMemory, copyIn, memory, syncViews } from "./memory.js";
import { fillIndex, restoreEngine, takeAdopted } from "./restore.js";
import { encodeSnapshot } from "./snapshot.js";
import {
  CTOR_OPTIONS,
  checkNumber,
  checkOptions,
  checkString,
  checkValue,
  condCode,
  describe,
  optionalFunction,
  optionalNumber,
  optionalSpan,
  parseFetch,
  parseWrite,
  toTime,
  wAt,
  wIdle,
  wTtl,
  wrongType,
} from "./validate.js";

// Slots reserved per call into wasm, at most (see #refill).
const RESERVE_BATCH = 256;

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

/**
 * A TTL cache with an absolute lifetime and a sliding idle window per entry,
 * and per-field expiry in hashes. It follows `Date.now()` (or `clock`) by
 * default; `now` gives a manual clock the host moves with `tick()`.
 */
export class TtlCache {
  #engine;
  #statusAt; // index of the status block in U32
  #slotCap = -1; // engine slot capacity the views were last based on
  #clocksAt = 0; // index of slot 0's clocks in F64
  #freqAt = 0; // byte offset of slot 0's frequency counter in U8
  #now;
  #clock; // the followed clock, or undefined for a manual one
  #seenEpoch = 0; // the epoch #now was read in
  #clockAt = 0; // index in F64 of the engine's copy of the clock
  #reclaimOwed = false; // inserts handed to the engine since the last reclaim
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
  #ghostFifo = []; // [key, seq, key, seq, ...] oldest first, from #ghostHead
  #ghostHead = 0;
  #ghostSeq = 0;
  #opts;
  #ttl; // default clocks, for writes done on this side
  #idle;
  #maxEntries;
  #spareSlots = []; // slots reserved in wasm for inserts done on this side
  #insertQueueAt = 0; // U32 index of the engine's insert queue (binding.rs ST_PENDING_PTR)
  #queuedInserts = 0; // inserts queued there since the last call
  #insertQueueCap = 0;
  #hits = 0;
  #misses = 0;
  #updated = 0;
  // ---- loading (fetch/hfetch) ----
  #graced = 0; // keys in #keyMap that are in grace (not counted in size)
  #runningLoads = 0; // loads in #plainLoads and #fieldLoads: writes check it before looking
  #plainLoads = null; // key -> Load
  #fieldLoads = null; // key -> (field -> Load)
  #doomed = []; // [key, field, ...] whose loads a removal found in #drain invalidates
  #refresh; // default refresh (undefined: none)
  #grace = 0;
  #onLoadError;
  // Write times, slot -> ms, kept only once a fetch may refresh: a column
  // every cache paid for would cost 8 bytes per entry. A slot written before
  // #bornFrom has no stamp; it is at least `now - #bornFrom` ms old.
  #born = null;
  #bornFrom = 0;
  #loadsStarted = 0;
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
    this.#refresh = optionalSpan("refresh", o.refresh, undefined);
    const grace = optionalSpan("grace", o.grace, 0);
    this.#onLoadError = optionalFunction("onLoadError", o.onLoadError);
    if (maxBytes !== Infinity && this.#sizeOf === undefined) {
      throw new TypeError("sizeOf: is required when maxBytes is set");
    }
    const now = clock === undefined ? optNow : readClock(clock);
    this.#clock = clock;
    this.#engine = adopted ?? new RawEngine(now, ttl, idle, maxEntries, maxBytes, sweepBudget);
    syncViews();
    this.#statusAt = this.#engine.statusPtr() >>> 2;
    this.#clockAt = U32[this.#statusAt + ST_NOW] >>> 3;
    // A restored engine is at the snapshot's time: never run back behind it.
    const at = this.#engine.now();
    this.#now = now > at ? now : at;
    if (clock !== undefined) this.#seenEpoch = stamp();
    this.#opts = { ttl, idle, maxEntries, maxBytes, sweepBudget };
    this.#ttl = ttl;
    this.#idle = idle;
    this.#maxEntries = maxEntries;
    this.#insertQueueCap = this.#engine.pendingCap();
    if (maxEntries !== Infinity) this.#ghostCap = maxEntries;
    if (grace > 0) {
      this.#grace = grace;
      this.#engine.setGrace(NIL, grace); // allocates: the views may be stale after it
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
  #toEngine() {
    const e = this.#engine;
    if (e === null) throw freed();
    syncViews();
    F64[this.#clockAt] = this.#now;
    if (this.#queuedInserts !== 0) {
      syncViews();
      U32[this.#statusAt + ST_PENDING] = this.#queuedInserts;
      this.#queuedInserts = 0;
      this.#reclaimOwed = true;
    }
    return e;
  }

  /**
   * Returns the wasm memory this cache holds (its engine) now, rather than
   * when the garbage collector finds it unreachable. Every method then
   * throws. Calling it again does nothing.
   */
  free() {
    const e = this.#engine;
    if (e === null) return;
    this.#engine = null;
    this.#keyMap = new Map();
    this.#keyList = [];
    this.#valList = [];
    this.#spareSlots = [];
    this.#queuedInserts = 0;
    this.#ghosts = 0;
    this.#ghostFifo = [];
    this.#ghostHead = 0;
    e.free();
    syncViews();
  }

  /** The error of a failed write, after re-reading where the columns are. */
  #failed() {
    const err = this.#engine.takeError();
    this.#drain();
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
   * into this cache, and because a moved clock makes the engine reclaim
   * what queued inserts owe (which may call `dispose`).
   */
  #time() {
    const c = this.#clock;
    if (c === undefined) {
      this.#seenEpoch = epoch;
      return;
    }
    // Before the read: a re-entrant call from the clock uses the old reading.
    this.#seenEpoch = stamp();
    const t = readClock(c);
    // Time never runs backwards: a clock that steps back is ignored.
    if (!(t > this.#now)) return;
    this.#now = t;
    if (this.#queuedInserts !== 0 || this.#reclaimOwed) {
      const e = this.#toEngine(); // hands over the queued inserts, which then owe
      this.#reclaimOwed = false;
      e.reclaim();
      this.#flush(this.#drain());
    }
  }

  #syncClock() {
    if (this.#seenEpoch !== epoch) this.#time();
  }

  #rebase() {
    const st = this.#statusAt;
    const cap = U32[st + ST_CAP];
    this.#slotCap = cap;
    this.#clocksAt = U32[st + ST_TIMES] >>> 3;
    this.#freqAt = U32[st + ST_FREQ];
    // Keep the slot arrays free of holes and as long as the engine's columns: V8
    // reads and writes past the end, or into holes, on a slow path. One
    // reallocation per growth, not one push per slot.
    if (this.#keyList.length < cap) {
      grow(this.#keyList, cap);
      grow(this.#valList, cap);
    }
    if (this.#born !== null && this.#born.length < cap) grow(this.#born, cap);
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
    if (U32[st + ST_CAP] !== this.#slotCap || U32[st + ST_TIMES] >>> 3 !== this.#clocksAt) this.#rebase();
    const n = U32[st + ST_LOG_LEN];
    if (n === 0) return null;
    // Consumed: a drain after a call that failed before publishing must not
    // replay it (its slots may hold other keys by then).
    U32[st + ST_LOG_LEN] = 0;
    const keys = this.#keyList;
    const vals = this.#valList;
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
      if (this.#runningLoads !== 0 && (reason === EVICTED || reason === DELETED || reason === CLEARED)) {
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
        else this.#keyMap.delete(key);
        if (kind === KIND_PLAIN && calls !== null) calls.push(val, key, REASONS[reason], undefined);
      }
    }
    return calls;
  }

  /** Runs the due `dispose` calls; the first error thrown reaches the caller. */
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
    const g = this.#keyMap;
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
    syncViews();
    const t = this.#clocksAt + s * 3;
    const now = this.#now;
    return F64[t] > now && F64[t + 1] + F64[t + 2] > now;
  }

  /** Restarts the slot's idle window and bumps its eviction counter. */
  #read(s) {
    syncViews();
    F64[this.#clocksAt + s * 3 + 1] = this.#now;
    const f = this.#freqAt + s;
    const q = U8[f];
    if (q < MAX_FREQ) U8[f] = q + 1;
  }

  #deadline(s) {
    syncViews();
    const t = this.#clocksAt + s * 3;
    const idle = F64[t + 1] + F64[t + 2];
    return F64[t] < idle ? F64[t] : idle;
  }

  /** Removes an expired slot found by a read (lazy expiry), or lets it enter its grace. */
  #expireNow(s) {
    this.#toEngine().remove(s, FOUND_EXPIRED);
    this.#flush(this.#drain());
  }

  /**
   * Whether a key's slot is live: its clocks, and for a hash at least one
   * live field (a hash goes with its last field, swept or not).
   */
  #liveKey(s) {
    if (!this.#live(s)) return false;
    const v = this.#valList[s];
    if (!(v instanceof Hash)) return true;
    if (v.graced) return false; // every field is in grace: no scan
    // Scanning the fields in insertion order on every access cost O(dead
    // fields) each time the old ones had expired unswept (issue 13). The
    // witness makes that one scan per witness lifetime: it is the field with
    // the latest deadline seen, so it goes last of those it was chosen among.
    const w = v.witness;
    if (w >= 0 && this.#live(w) && v.fields.get(this.#keyList[w]) === w) return true;
    const now = this.#now;
    let best = -1;
    let latest = now;
    for (const f of v.fields.values()) {
      const t = this.#clocksAt + f * 3;
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
    if (this.#seenEpoch !== epoch) this.#time();
    return this.#now;
  }

  /**
   * Advances the clock to `now` (default: a fresh reading of the followed
   * clock, or `Date.now()` for a manual one; an earlier time is ignored) and
   * removes at most `sweepBudget` expired entries.
   * @returns {number} how many entries were removed
   */
  tick(now) {
    this.#syncClock();
    if (now === undefined) {
      const c = this.#clock;
      now = c === undefined ? Date.now() : readClock(c);
    } else {
      checkNumber("now", now);
    }
    const n = this.#toEngine().tick(now);
    this.#now = this.#toEngine().now();
    this.#flush(this.#drain());
    return n;
  }

  /**
   * A time at or before the earliest deadline the cache holds, `Infinity`
   * if none: when to call `tick()` next (it can be early, never late).
   * @returns {number}
   */
  nextExpiry() {
    this.#syncClock();
    const t = this.#toEngine().nextExpiry();
    this.#flush(this.#drain());
    return t;
  }

  /** Removes every expired entry now. @returns {number} how many */
  purge() {
    this.#syncClock();
    const n = this.#toEngine().purge();
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
    if (this.#seenEpoch !== epoch) this.#time();
    const s = this.#keyMap.get(key);
    if (opts === undefined && this.#sizeOf === undefined && value !== undefined && this.#runningLoads === 0) {
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
    const s = this.#keyMap.get(key);
    if (s !== undefined && s >= 0 && this.#valList[s] instanceof Hash && this.#liveKey(s)) {
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
    syncViews();
    const F = F64; // one module-slot load, not one per access
    const now = this.#now;
    const abs = now + ttl;
    const lastIdle = now + idle;
    const t = this.#clocksAt + s * 3;
    const oldIdle = F[t + 1] + F[t + 2];
    const old = F[t] < oldIdle ? F[t] : oldIdle;
    const vals = this.#valList;
    if (!(old > now) || (lastIdle < abs ? lastIdle : abs) < old || vals[s] instanceof Hash) return false;
    // A finite ttl/idle that overflows the clock: the engine throws RangeError.
    if ((abs === Infinity && ttl !== Infinity) || (lastIdle === Infinity && idle !== Infinity)) return false;
    F[t] = abs;
    F[t + 1] = now;
    F[t + 2] = idle;
    const born = this.#born;
    if (born !== null) born[s] = now;
    const U = U8;
    const f = this.#freqAt + s;
    const q = U[f];
    if (q < MAX_FREQ) U[f] = q + 1;
    vals[s] = value;
    this.#updated++;
    return true;
  }

  /**
   * Inserts new `key` on this side, into a slot reserved in advance, which
   * the engine links into its wheel and queues at its next call. False,
   * with nothing done: no room, no reserved slot, a full insert queue, a
   * bad key, or a deadline already past.
   */
  #add(key, value, ttl, idle) {
    syncViews();
    const now = this.#now;
    const abs = now + ttl;
    const lastIdle = now + idle;
    const spare = this.#spareSlots;
    const np = this.#queuedInserts;
    if (!((lastIdle < abs ? lastIdle : abs) > now) || typeof key !== "string") return false;
    // A finite ttl/idle that overflows the clock: the engine throws RangeError.
    if ((abs === Infinity && ttl !== Infinity) || (lastIdle === Infinity && idle !== Infinity)) return false;
    if (spare.length === 0 || np >= this.#insertQueueCap || this.#full()) return false;
    const r = spare.pop();
    const t = this.#clocksAt + r * 3;
    F64[t] = abs;
    F64[t + 1] = now;
    F64[t + 2] = idle;
    const born = this.#born;
    if (born !== null) born[r] = now;
    U8[this.#freqAt + r] = 0;
    U32[this.#insertQueueAt + np] = r;
    this.#queuedInserts = np + 1;
    this.#keyMap.set(key, r);
    this.#keyList[r] = key;
    this.#valList[r] = value;
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
      if (this.#runningLoads !== 0) this.#invalidate(key, undefined);
      return this;
    }
    const returning = s !== undefined && s < 0;
    if (s === undefined || returning) s = NIL;
    if (returning) flags |= TO_MAIN;
    const r = this.#toEngine().write(s, flags, ttl, idle, at, w);
    // A failed write can still have grown (moved) the engine's columns.
    if (r === FAILED) throw this.#failed();
    const calls = this.#drain();
    if (returning && r === NIL) this.#dropGhost(key);
    let disposals = calls;
    if (disposals === null && this.#dispose !== undefined) disposals = [];
    if (r !== NIL) {
      if (this.#born !== null) this.#born[r] = this.#now;
      if (this.#keyList[r] === undefined) {
        if (returning) this.#dropGhost(key);
        this.#keyMap.set(key, r);
        this.#keyList[r] = key;
        this.#valList[r] = value;
      } else {
        const old = this.#valList[r];
        this.#valList[r] = value;
        if (disposals !== null && old !== value) disposals.push(old, key, "replaced", undefined);
      }
    }
    if (this.#runningLoads !== 0) this.#invalidate(key, undefined);
    this.#flush(disposals);
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
      const prev = this.#valList[s];
      if (!this.#overwrite(s, value, ttl, idle)) return false;
      if (this.#dispose !== undefined && prev !== value) this.#flush([prev, key, "replaced", undefined]);
      return true;
    }
    if (this.#full()) return false; // before a refill: a full cache reserves no more
    if (this.#spareSlots.length === 0) this.#refill();
    if (this.#queuedInserts >= this.#insertQueueCap) {
      this.#toEngine().commit();
      this.#drain();
    }
    // A returning ghost, still in the index (no removal since the lookup),
    // leaves it first: the key goes to the end, as a new key does.
    if (s !== undefined) this.#keyMap.delete(key);
    if (!this.#add(key, value, ttl, idle)) {
      if (s !== undefined) this.#keyMap.set(key, s);
      return false;
    }
    if (s !== undefined) {
      U32[this.#insertQueueAt + this.#queuedInserts - 1] |= TO_MAIN_BIT;
      this.#ghosts--;
    }
    return true;
  }

  #refill() {
    // A few slots for a small cache, up to RESERVE_BATCH for a big one: the
    // engine grows its columns to hold what it hands out.
    this.#toEngine().reserve(Math.min(RESERVE_BATCH, Math.max(8, this.#keyMap.size)));
    this.#drain();
    const st = this.#statusAt;
    this.#insertQueueAt = U32[st + ST_PENDING_PTR] >>> 2;
    const p = U32[st + ST_SPARE] >>> 2;
    const spare = this.#spareSlots;
    for (let i = p + U32[st + ST_SPARE_LEN] - 1; i >= p; i--) spare.push(U32[i]);
  }

  /** The live value at `key`, restarting its idle window; or `undefined`. */
  get(key) {
    if (this.#seenEpoch !== epoch) this.#time();
    const s = this.#keyMap.get(key);
    if (s !== undefined && s >= 0) {
      const t = this.#clocksAt + s * 3;
      const now = this.#now;
      const last = t + 1;
      if (F64[t] > now && F64[last] + F64[t + 2] > now) {
        const v = this.#valList[s];
        if (v instanceof Hash) return this.#getOnHash(s);
        F64[last] = now;
        const f = this.#freqAt + s;
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
      syncViews();
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
    this.#syncClock();
    checkString("key", key);
    const s = this.#liveSlot(key);
    if (s === NIL) return undefined;
    const v = this.#valList[s];
    if (v instanceof Hash) throw wrongType("hash", "plain value");
    return v;
  }

  /** Whether `key` holds a live entry or hash. Does not touch it. */
  has(key) {
    this.#syncClock();
    checkString("key", key);
    return this.#liveSlot(key) !== NIL;
  }

  /** Restarts `key`'s idle window. @returns {boolean} false if missing */
  touch(key) {
    this.#syncClock();
    checkString("key", key);
    const s = this.#liveSlot(key);
    if (s === NIL) return false;
    this.#read(s);
    return true;
  }

  /** Removes `key` (a plain entry or a whole hash). @returns {boolean} */
  delete(key) {
    this.#syncClock();
    checkString("key", key);
    const s = this.#slot(key);
    if (s === undefined) {
      if (this.#runningLoads !== 0) this.#invalidate(key, undefined); // a cold key's load
      return false;
    }
    const live = this.#liveKey(s);
    this.#toEngine().remove(s, live ? DELETED : EXPIRED);
    const calls = this.#drain();
    // After the state is complete: aborting runs the loaders' listeners.
    if (this.#runningLoads !== 0) this.#invalidate(key, undefined);
    this.#flush(calls);
    return live;
  }

  /** Removes everything; `dispose` sees reason `"cleared"`. */
  clear() {
    // The engine keeps our reserved slots reserved (it clears only what is
    // live), so #spareSlots stays valid.
    this.#toEngine().clear();
    const calls = this.#drain();
    this.#graced = 0;
    if (this.#runningLoads !== 0) this.#invalidateAll();
    this.#flush(calls);
  }

  /** Sets an absolute deadline `ms` from now; `ms <= 0` deletes. */
  expire(key, ms, cond) {
    this.#syncClock();
    checkString("key", key);
    checkNumber("ms", ms);
    return this.#expireKey(key, undefined, this.#liveSlot(key), ms, true, condCode(cond));
  }

  /** Sets an absolute deadline at `time` (ms or `Date`); a past time deletes. */
  expireAt(key, time, cond) {
    this.#syncClock();
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
    const r = this.#toEngine().expireAt(s, t, rel, c);
    const calls = this.#drain();
    if (r && this.#runningLoads !== 0) this.#invalidate(key, field);
    this.#flush(calls);
    return r;
  }

  /** Drops both clocks. @returns {boolean} true if the key had one */
  persist(key) {
    this.#syncClock();
    checkString("key", key);
    const s = this.#liveSlot(key);
    return s !== NIL && this.#toEngine().persist(s);
  }

  /** Ms until the earliest deadline; `Infinity` if none; `undefined` if missing. */
  ttl(key) {
    this.#syncClock();
    checkString("key", key);
    const s = this.#liveSlot(key);
    if (s === NIL) return undefined;
    const d = this.#deadline(s);
    return d === Infinity ? Infinity : d - this.#now;
  }

  /** Keys held, including expired ones a sweep has not reached yet. */
  get size() {
    this.#alive();
    return this.#keyMap.size - this.#ghosts - this.#graced;
  }

  // ---- iteration (live entries only, insertion order, no touch) ------------

  #valueOf(s) {
    const v = this.#valList[s];
    return v instanceof Hash ? this.#liveFields(s, v) : v;
  }

  /**
   * Live [key, slot] pairs. The clock is read before each step rather than
   * once: the caller may await between steps.
   */
  *#liveSlots() {
    const it = this.#keyMap.entries();
    for (;;) {
      if (this.#seenEpoch !== epoch) this.#time();
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
    this.#syncClock();
    const p = this.#toEngine().stats() >>> 3;
    syncViews();
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
      loads: this.#loadsStarted,
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
    if (h !== NIL && !(this.#valList[h] instanceof Hash)) throw wrongType("plain value", "hash");
    return h;
  }

  /** The live field slot, or NIL. */
  #fieldSlot(h, field) {
    if (h === NIL) return NIL;
    const f = this.#valList[h].fields.get(field);
    return f !== undefined && this.#live(f) ? f : NIL;
  }

  #liveFields(h, box) {
    const out = new Map();
    for (const [name, f] of box.fields) if (this.#live(f)) out.set(name, this.#valList[f]);
    return out;
  }

  /** Writes a hash field. @returns {boolean} true if the field is new */
  hset(key, field, value, opts) {
    this.#syncClock();
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
      const fs = this.#valList[h].fields.get(field);
      if (fs !== undefined) f = fs;
    }
    if (returning) flags |= TO_MAIN;
    const r = this.#toEngine().hwrite(h, f, flags, ttl, idle, at, w);
    // A failed write can still have grown (moved) the engine's columns.
    if (r === FAILED) throw this.#failed();
    let calls = this.#drain();
    if (returning && r === NIL) this.#dropGhost(key);
    if (calls === null && this.#dispose !== undefined) calls = [];
    if (r === NIL) {
      if (this.#runningLoads !== 0) this.#invalidate(key, field, true);
      this.#flush(calls);
      return false;
    }
    const hs = U32[this.#statusAt + ST_HASH];
    let box = this.#valList[hs];
    if (this.#keyList[hs] === undefined) {
      box = new Hash();
      if (returning) this.#dropGhost(key);
      this.#keyMap.set(key, hs);
      this.#keyList[hs] = key;
      this.#valList[hs] = box;
    }
    const isNew = this.#keyList[r] === undefined;
    if (this.#born !== null) this.#born[r] = this.#now;
    if (isNew) {
      box.fields.set(field, r);
      this.#keyList[r] = field;
      this.#valList[r] = value;
    } else {
      const old = this.#valList[r];
      this.#valList[r] = value;
      if (calls !== null && old !== value) calls.push(old, key, "replaced", field);
    }
    // After the state is complete: aborting runs the loaders' listeners.
    if (this.#runningLoads !== 0) this.#invalidate(key, field, true);
    this.#flush(calls);
    return isNew;
  }

  /** What the index holds for `key`; WRONGTYPE on a live plain entry. */
  #hashTarget(key) {
    const h = this.#keyMap.get(key);
    if (h !== undefined && h >= 0 && !(this.#valList[h] instanceof Hash) && this.#liveKey(h)) {
      throw wrongType("plain value", "hash");
    }
    return h;
  }

  /** A live field's value, restarting the field's and the key's idle windows. */
  hget(key, field) {
    this.#syncClock();
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
    const box = this.#valList[s];
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
    return this.#valList[f];
  }

  /** Whether the field is live. No touch. */
  hhas(key, field) {
    this.#syncClock();
    checkString("key", key);
    checkString("field", field);
    return this.#fieldSlot(this.#hashSlot(key), field) !== NIL;
  }

  /** Removes a field; the last one takes the key. @returns {boolean} */
  hdel(key, field) {
    this.#syncClock();
    checkString("key", key);
    checkString("field", field);
    const f = this.#fieldSlot(this.#hashSlot(key), field);
    if (f === NIL) {
      if (this.#runningLoads !== 0) this.#invalidate(key, field);
      return false;
    }
    this.#toEngine().remove(f, DELETED);
    const calls = this.#drain();
    if (this.#runningLoads !== 0) this.#invalidate(key, field);
    this.#flush(calls);
    return true;
  }

  /** Number of live fields (0 if the key is missing). */
  hlen(key) {
    this.#syncClock();
    checkString("key", key);
    const h = this.#hashSlot(key);
    if (h === NIL) return 0;
    let n = 0;
    for (const f of this.#valList[h].fields.values()) if (this.#live(f)) n++;
    return n;
  }

  /** A `Map` of the live fields (empty if the key is missing). No touch. */
  hgetall(key) {
    this.#syncClock();
    checkString("key", key);
    const h = this.#hashSlot(key);
    return h === NIL ? new Map() : this.#liveFields(h, this.#valList[h]);
  }

  /** Sets a field's absolute deadline `ms` from now; `ms <= 0` deletes it. */
  hexpire(key, field, ms, cond) {
    this.#syncClock();
    checkString("key", key);
    checkString("field", field);
    checkNumber("ms", ms);
    const c = condCode(cond);
    return this.#expireKey(key, field, this.#fieldSlot(this.#hashSlot(key), field), ms, true, c);
  }

  /** Sets a field's absolute deadline at `time`; a past time deletes it. */
  hexpireAt(key, field, time, cond) {
    this.#syncClock();
    checkString("key", key);
    checkString("field", field);
    const t = toTime("time", time);
    const c = condCode(cond);
    return this.#expireKey(key, field, this.#fieldSlot(this.#hashSlot(key), field), t, false, c);
  }

  /** Drops a field's clocks. @returns {boolean} true if it had one */
  hpersist(key, field) {
    this.#syncClock();
    checkString("key", key);
    checkString("field", field);
    const f = this.#fieldSlot(this.#hashSlot(key), field);
    return f !== NIL && this.#toEngine().persist(f);
  }

  /** Ms until the field goes (its own clocks or its key's, whichever first). */
  httl(key, field) {
    this.#syncClock();
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
  // Running loads live in #plainLoads (key -> Load) and #fieldLoads (key -> field ->
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
      this.#syncClock();
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
      this.#syncClock();
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
      if (s !== NIL && this.#valList[s] instanceof Hash) throw wrongType("hash", "plain value");
    } else {
      h = this.#hashSlot(key);
      s = this.#fieldSlot(h, field);
    }
    if (fo.signal !== undefined && fo.signal.aborted) return Promise.reject(fo.signal.reason);
    if (refresh !== undefined) this.#trackBirths();
    let ld = loadOf(this.#plainLoads, this.#fieldLoads, key, field);
    if (s !== NIL) {
      // A hit, as `get`/`hget` count it; maybe a refresh behind it.
      this.#read(s);
      if (h !== NIL) this.#read(h);
      this.#hits++;
      const v = this.#valList[s];
      if (ld === undefined && refresh !== undefined && this.#age(s) > refresh) {
        this.#refreshes++;
        this.#start(key, field, loader, fo, true);
      }
      return Promise.resolve(v);
    }
    this.#misses++;
    if (ld === undefined) ld = this.#start(key, field, loader, fo, false);
    else this.#coalesced++;
    return wait(ld, fo.signal, () => this.#unlist(ld));
  }

  /** Ms since slot `s` was written; for a slot older than the stamps, a lower bound. */
  #age(s) {
    const t = this.#born[s];
    return this.#now - (t === undefined ? this.#bornFrom : t);
  }

  /** Registers a load, then calls the loader (which may call back into this cache). */
  #start(key, field, loader, fo, background) {
    const ld = new Load(key, field, fo, background);
    if (field === undefined) {
      if (this.#plainLoads === null) this.#plainLoads = new Map();
      this.#plainLoads.set(key, ld);
    } else {
      if (this.#fieldLoads === null) this.#fieldLoads = new Map();
      let m = this.#fieldLoads.get(key);
      if (m === undefined) this.#fieldLoads.set(key, (m = new Map()));
      m.set(field, ld);
    }
    this.#runningLoads++;
    this.#loadsStarted++;
    callLoader(ld, loader).then(
      (v) => this.#settle(ld, true, v),
      (e) => this.#settle(ld, false, e),
    );
    return ld;
  }

  /** Takes `ld` out of the load maps (its result will not be stored). */
  #unlist(ld) {
    if (!ld.live) return;
    ld.live = false;
    this.#runningLoads--;
    if (ld.field === undefined) {
      this.#plainLoads.delete(ld.key);
    } else {
      const m = this.#fieldLoads.get(ld.key);
      m.delete(ld.field);
      if (m.size === 0) this.#fieldLoads.delete(ld.key);
    }
  }

  /**
   * A write, delete, expire, eviction or clear of `key` (or of its `field`)
   * wins over its running loads: they store nothing and their signals abort.
   * A change to the key ends the loads of its fields too; `plainToo` (hset)
   * ends the key's plain load, whose store would now be WRONGTYPE.
   */
  #invalidate(key, field, plainToo) {
    this.#abortLoads(loadsOf(this.#plainLoads, this.#fieldLoads, key, field, plainToo));
  }

  #invalidateAll() {
    this.#abortLoads(allLoads(this.#plainLoads, this.#fieldLoads));
  }

  #abortLoads(doomed) {
    for (const d of doomed) this.#unlist(d);
    for (const d of doomed) d.ctrl.abort();
  }

  /** Loads whose keys #drain saw removed (evicted, deleted, cleared). */
  #abortDoomed() {
    const d = this.#doomed;
    this.#doomed = [];
    for (let i = 0; i < d.length; i += 2) this.#invalidate(d[i], d[i + 1]);
  }

  /** The value `key` (`field`) keeps in grace, as `[value]`; `null` if none. */
  #stale(key, field) {
    const s = this.#slot(key);
    if (s === undefined) return null;
    let f = s;
    if (field === undefined) {
      if (this.#valList[s] instanceof Hash || this.#live(s)) return null;
    } else {
      const box = this.#valList[s];
      if (!(box instanceof Hash)) return null;
      f = box.fields.get(field);
      if (f === undefined || (this.#live(f) && this.#live(s))) return null;
    }
    return this.#toEngine().staleUntil(f) > this.#now ? [this.#valList[f]] : null;
  }

  /** A load's outcome: store it (unless invalidated), then answer every waiter. */
  #settle(ld, ok, v) {
    ld.settled = true;
    try {
      this.#syncClock(); // a promise reaction: a new run, maybe a later time
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
    const subs = detachWaiters(ld);
    const waiters = subs.length + ld.sharedN;
    if (ok) {
      resolveWaiters(ld, subs, v);
      return;
    }
    this.#loadErrors++;
    const stale = waiters === 0 ? null : this.#stale(ld.key, ld.field);
    if (stale !== null) {
      this.#staleServed += waiters;
      resolveWaiters(ld, subs, stale[0]);
    } else {
      rejectWaiters(ld, subs, v);
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
    const f = ld.field === undefined ? s : this.#valList[s].fields.get(ld.field);
    if (f === undefined || !this.#live(f)) return;
    this.#toEngine().setGrace(f, ld.grace);
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
    this.#syncClock();
    const sized = this.#sizeOf !== undefined;
    const rows = []; // per entry: key, value or null, abs, last, idle, weight, then per field the same
    const shape = []; // per entry: -1 plain, or its number of fields
    for (const [key, s] of this.#keyMap) {
      if (s < 0 || !this.#liveKey(s)) continue;
      const v = this.#valList[s];
      this.#row(rows, key, v instanceof Hash ? null : v, s, sized && !(v instanceof Hash));
      if (!(v instanceof Hash)) {
        shape.push(-1);
        continue;
      }
      let n = 0;
      for (const [name, f] of v.fields) {
        if (!this.#live(f)) continue;
        this.#row(rows, name, this.#valList[f], f, sized);
        n++;
      }
      shape.push(n);
    }
    const out = encodeSnapshot(this.#now, this.#clock !== undefined, this.#opts, rows, shape);
    this.#check(out);
    return out;
  }

  /** Appends a snapshot row: name, value, clocks and recorded size of slot `s`. */
  #row(rows, name, v, s, sized) {
    syncViews();
    const t = this.#clocksAt + s * 3;
    rows.push(name, v, F64[t], F64[t + 1], F64[t + 2], sized ? this.#engine.slotWeight(s) : 0);
  }

  /**
   * Has the engine check snapshot bytes this side wrote. The bytes are copied
   * into a buffer the engine allocates fallibly: too big for wasm memory is
   * a RangeError, and the cache is unchanged.
   */
  #check(out) {
    const e = this.#toEngine();
    copyIn(e, out, "snapshot");
    try {
      e.checkSnapshot();
    } finally {
      syncViews();
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
    const [c, copy] = restoreEngine(TtlCache, bytes, opts);
    fillIndex(copy, c.#keyMap, c.#keyList, c.#valList);
    return c;
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

