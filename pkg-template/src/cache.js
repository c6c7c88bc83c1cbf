// The JS face of lapse. Keys, values and the key -> slot index live here, in
// a JS Map; deadlines, the expiry wheel, eviction order and sweeping live in
// wasm. Reads (`get`, `has`, `peek`, `touch`, `ttl`) never cross into wasm:
// they read the slot's [abs, last, idle] clocks and bump its eviction counter
// through typed-array views of wasm memory. Writes pass only numbers.
//
// After every call that changes the engine, `#drain()` replays the engine's
// removal log (three u32 words per removed slot) and refreshes the views,
// which go stale whenever wasm memory grows (any cache instance can grow it,
// so the views are module-wide).

import { RawEngine, wasmMemory } from "./glue.js";

const NIL = 0xffffffff;
const FAILED = 0xfffffffe; // write/hwrite: the call threw; fetch it with takeError()
const REASONS = ["expired", "evicted", "deleted", "replaced", "cleared"];
const EXPIRED = 0;
const DELETED = 2;
const KIND_PLAIN = 1;
const KIND_FIELD = 3;
const GHOST = 1 << 7;
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
const RESERVE_BATCH = 256;
const CONDS = { NX: 1, XX: 2, GT: 3, LT: 4 };
const CTOR_OPTIONS = new Set(["now", "ttl", "idle", "maxEntries", "maxBytes", "sizeOf", "sweepBudget", "dispose"]);
const WRITE_OPTIONS = new Set(["ttl", "idle", "expireAt", "keepTtl"]);
const RESTORE_OPTIONS = new Set(["dispose", "sizeOf"]);

let memory = null;
let F64 = new Float64Array(0);
let U8 = new Uint8Array(0);
let U32 = new Uint32Array(0);

// A growing wasm memory detaches its old buffer, which empties every view of
// it; that is cheaper to test than reading `memory.buffer` on every call.
function sync() {
  if (F64.length === 0) {
    const b = memory.buffer;
    F64 = new Float64Array(b);
    U8 = new Uint8Array(b);
    U32 = new Uint32Array(b);
  }
}

/** The fields of one hash key: field name -> slot. */
class Hash {
  constructor() {
    this.fields = new Map();
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

function checkOptions(arg, opts, allowed) {
  if (opts === null || typeof opts !== "object" || Array.isArray(opts)) {
    throw new TypeError(`${arg}: must be an object, got ${describe(opts)}`);
  }
  for (const k of Object.keys(opts)) {
    if (!allowed.has(k)) throw new TypeError(`${arg}: unknown option ${JSON.stringify(k)}`);
  }
}

// Parsed per-write options (module scratch, to keep `set` allocation-free).
let wTtl = 0;
let wIdle = 0;
let wAt = 0;

function parseWrite(opts) {
  if (opts === undefined) return 0;
  checkOptions("opts", opts, WRITE_OPTIONS);
  let flags = 0;
  const { ttl, idle, expireAt, keepTtl } = opts;
  if (ttl !== undefined) {
    checkNumber("ttl", ttl);
    wTtl = ttl;
    flags |= HAS_TTL;
  }
  if (idle !== undefined) {
    checkNumber("idle", idle);
    wIdle = idle;
    flags |= HAS_IDLE;
  }
  if (expireAt !== undefined) {
    wAt = toTime("expireAt", expireAt);
    flags |= HAS_AT;
  }
  if (keepTtl !== undefined) {
    if (typeof keepTtl !== "boolean") throw new TypeError(`keepTtl: must be a boolean, got ${describe(keepTtl)}`);
    if (keepTtl) flags |= KEEP_TTL;
  }
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

/**
 * A TTL cache with an absolute lifetime and a sliding idle window per entry,
 * per-field expiry in hashes, and a clock the host drives with `tick()`.
 */
export class TtlCache {
  #eng;
  #st; // index of the status block in U32
  #cap = -1; // engine slot capacity the views were last based on
  #t = 0; // index of slot 0's clocks in F64
  #f = 0; // byte offset of slot 0's frequency counter in U8
  #now;
  #index = new Map(); // key -> slot
  #keys = []; // slot -> key (or field name)
  #vals = []; // slot -> value (or Hash)
  #dispose;
  #sizeOf;
  #ghost = null; // recently evicted unread keys (S3-FIFO ghost queue)
  #ghostCap = 0;
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

  /**
   * @param {object} [options] `now`, `ttl`, `idle`, `maxEntries`, `maxBytes`,
   *   `sizeOf`, `sweepBudget`, `dispose`; all optional.
   */
  constructor(options) {
    if (memory === null) memory = wasmMemory();
    const o = options === undefined ? {} : options;
    checkOptions("options", o, CTOR_OPTIONS);
    const now = o.now === undefined ? Date.now() : o.now;
    checkNumber("now", now);
    const ttl = optionalNumber("ttl", o.ttl, Infinity);
    const idle = optionalNumber("idle", o.idle, Infinity);
    const maxEntries = optionalNumber("maxEntries", o.maxEntries, Infinity);
    const maxBytes = optionalNumber("maxBytes", o.maxBytes, Infinity);
    const sweepBudget = optionalNumber("sweepBudget", o.sweepBudget, 1000);
    this.#sizeOf = optionalFunction("sizeOf", o.sizeOf);
    this.#dispose = optionalFunction("dispose", o.dispose);
    if (maxBytes !== Infinity && this.#sizeOf === undefined) {
      throw new TypeError("sizeOf: is required when maxBytes is set");
    }
    this.#eng = new RawEngine(now, ttl, idle, maxEntries, maxBytes, sweepBudget);
    sync();
    this.#st = this.#eng.statusPtr() >>> 2;
    this.#now = this.#eng.now();
    this.#opts = { ttl, idle, maxEntries, maxBytes, sweepBudget };
    this.#ttl = ttl;
    this.#idle = idle;
    this.#maxEntries = maxEntries;
    this.#pend = U32[this.#st + ST_PENDING_PTR] >>> 2;
    this.#npCap = this.#eng.pendingCap();
    if (maxEntries !== Infinity || maxBytes !== Infinity) {
      this.#ghost = new Map();
      this.#ghostCap = maxEntries !== Infinity ? maxEntries : 0;
    }
    this.#rebase();
  }

  // ---- plumbing -----------------------------------------------------------

  /**
   * The engine, after handing it the inserts queued on this side: every call
   * into wasm goes through here, so the engine never sees a stale state.
   */
  #e() {
    if (this.#np !== 0) {
      U32[this.#st + ST_PENDING] = this.#np;
      this.#np = 0;
    }
    return this.#eng;
  }

  #rebase() {
    const st = this.#st;
    const cap = U32[st + ST_CAP];
    this.#cap = cap;
    this.#t = U32[st + ST_TIMES] >>> 3;
    this.#f = U32[st + ST_FREQ];
    // Keep the slot arrays packed and as long as the engine's columns: V8
    // reads and writes past the end, or into holes, on a slow path.
    const keys = this.#keys;
    const vals = this.#vals;
    for (let i = keys.length; i < cap; i++) {
      keys.push(undefined);
      vals.push(undefined);
    }
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
      const key = keys[s];
      const val = vals[s];
      keys[s] = undefined;
      vals[s] = undefined;
      if (kind === KIND_FIELD) {
        vals[parent].fields.delete(key);
        if (calls !== null) calls.push(val, keys[parent], REASONS[flags & 15], key);
      } else {
        this.#index.delete(key);
        if (kind === KIND_PLAIN && calls !== null) calls.push(val, key, REASONS[flags & 15], undefined);
        if (flags & GHOST) this.#remember(key);
      }
    }
    return calls;
  }

  /** Runs pending `dispose` calls; the first error thrown reaches the caller. */
  #flush(calls) {
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

  #remember(key) {
    const g = this.#ghost;
    if (g === null) return;
    g.set(key, true);
    const cap = this.#ghostCap || Math.max(64, this.#index.size);
    if (g.size > cap) g.delete(g.keys().next().value);
  }

  #live(s) {
    const t = this.#t + s * 3;
    const now = this.#now;
    return F64[t] > now && F64[t + 1] + F64[t + 2] > now;
  }

  /** Restarts the slot's idle window and bumps its eviction counter. */
  #read(s) {
    F64[this.#t + s * 3 + 1] = this.#now;
    const f = this.#f + s;
    const q = U8[f];
    if (q < MAX_FREQ) U8[f] = q + 1;
  }

  #deadline(s) {
    const t = this.#t + s * 3;
    const idle = F64[t + 1] + F64[t + 2];
    return F64[t] < idle ? F64[t] : idle;
  }

  /** Removes an expired slot found by a read (lazy expiry). */
  #expireNow(s) {
    this.#e().remove(s, EXPIRED);
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
    for (const f of v.fields.values()) if (this.#live(f)) return true;
    return false;
  }

  /** The live slot of `key`, or NIL. Does not remove a dead one. */
  #liveSlot(key) {
    const s = this.#index.get(key);
    return s !== undefined && this.#liveKey(s) ? s : NIL;
  }

  #measure(value, key, field) {
    const w = field === undefined ? this.#sizeOf(value, key) : this.#sizeOf(value, key, field);
    if (typeof w !== "number") throw new TypeError(`sizeOf: must return a number, got ${describe(w)}`);
    return w;
  }

  // ---- time ---------------------------------------------------------------

  /** The cache's clock, in ms. */
  get now() {
    return this.#now;
  }

  /**
   * Advances the clock to `now` (default `Date.now()`; earlier values are
   * ignored) and removes at most `sweepBudget` expired entries.
   * @returns {number} how many entries were removed
   */
  tick(now) {
    if (now === undefined) now = Date.now();
    checkNumber("now", now);
    const n = this.#e().tick(now);
    this.#now = this.#e().now();
    this.#flush(this.#drain());
    return n;
  }

  /** Removes every expired entry now. @returns {number} how many */
  purge() {
    const n = this.#e().purge();
    this.#flush(this.#drain());
    return n;
  }

  // ---- plain entries ------------------------------------------------------

  /** Writes `value` at `key`. @returns {this} */
  set(key, value, opts) {
    checkString("key", key);
    checkValue(value);
    let flags = parseWrite(opts);
    let s = this.#index.get(key);
    if (this.#sizeOf === undefined && (flags & (HAS_AT | KEEP_TTL)) === 0 && this.#quickSet(key, value, s, flags)) {
      return this;
    }
    if (s === undefined) {
      s = NIL;
    } else if (this.#vals[s] instanceof Hash && this.#liveKey(s)) {
      throw wrongType("hash", "plain value");
    }
    const w = this.#sizeOf === undefined ? 0 : this.#measure(value, key);
    const ghost = this.#ghost;
    const returning = s === NIL && ghost !== null && ghost.has(key);
    if (returning) flags |= TO_MAIN;
    const r = this.#e().write(s, flags, wTtl, wIdle, wAt, w);
    if (r === FAILED) throw this.#e().takeError();
    const calls = this.#drain();
    if (returning) ghost.delete(key);
    let pending = calls;
    if (pending === null && this.#dispose !== undefined) pending = [];
    if (r !== NIL) {
      if (this.#keys[r] === undefined) {
        this.#index.set(key, r);
        this.#keys[r] = key;
        this.#vals[r] = value;
      } else {
        const old = this.#vals[r];
        this.#vals[r] = value;
        if (pending !== null && old !== value) pending.push(old, key, "replaced", undefined);
      }
    }
    this.#flush(pending);
    return this;
  }

  /**
   * The common writes, done on this side with no call into wasm: a new key
   * while there is room (into a slot reserved in advance, linked into the
   * wheel and queues at the engine's next call), or an overwrite whose
   * deadline does not move earlier (the wheel reschedules lazily when the
   * old slot fires). Anything else, or anything invalid, returns false and
   * takes the engine's path, which validates and throws.
   */
  #quickSet(key, value, s, flags) {
    const now = this.#now;
    const ttl = flags & HAS_TTL ? wTtl : this.#ttl;
    const idle = flags & HAS_IDLE ? wIdle : this.#idle;
    if (!(ttl > 0 && idle > 0)) return false;
    const abs = now + ttl;
    const lastIdle = now + idle;
    const deadline = lastIdle < abs ? lastIdle : abs;
    if (!(deadline > now)) return false;
    if (s === undefined) {
      if (this.#maxEntries !== Infinity && U32[this.#st + ST_ENTRIES] + this.#np >= this.#maxEntries) return false;
      const spare = this.#spare;
      if (spare.length === 0) this.#refill();
      const r = spare.pop();
      const t = this.#t + r * 3;
      F64[t] = abs;
      F64[t + 1] = now;
      F64[t + 2] = idle;
      U8[this.#f + r] = 0;
      let q = r;
      const ghost = this.#ghost;
      if (ghost !== null && ghost.delete(key)) q = (r | TO_MAIN_BIT) >>> 0;
      U32[this.#pend + this.#np] = q;
      this.#index.set(key, r);
      this.#keys[r] = key;
      this.#vals[r] = value;
      if (++this.#np === this.#npCap) {
        this.#e().commit();
        this.#drain();
      }
      return true;
    }
    const t = this.#t + s * 3;
    const oldIdle = F64[t + 1] + F64[t + 2];
    const old = F64[t] < oldIdle ? F64[t] : oldIdle;
    if (!(old > now) || deadline < old) return false;
    const prev = this.#vals[s];
    if (prev instanceof Hash) return false;
    F64[t] = abs;
    F64[t + 1] = now;
    F64[t + 2] = idle;
    const f = this.#f + s;
    const fq = U8[f];
    if (fq < MAX_FREQ) U8[f] = fq + 1;
    this.#vals[s] = value;
    this.#updated++;
    if (this.#dispose !== undefined && prev !== value) this.#flush([prev, key, "replaced", undefined]);
    return true;
  }

  #refill() {
    this.#e().reserve(RESERVE_BATCH);
    this.#drain();
    const st = this.#st;
    const p = U32[st + ST_SPARE] >>> 2;
    const spare = this.#spare;
    for (let i = p + U32[st + ST_SPARE_LEN] - 1; i >= p; i--) spare.push(U32[i]);
  }

  /** The live value at `key`, restarting its idle window; or `undefined`. */
  get(key) {
    const s = this.#index.get(key);
    if (s !== undefined) {
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
      this.#misses++;
      this.#expireNow(s);
      return undefined;
    }
    checkString("key", key);
    this.#misses++;
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
    checkString("key", key);
    const s = this.#liveSlot(key);
    if (s === NIL) return undefined;
    const v = this.#vals[s];
    if (v instanceof Hash) throw wrongType("hash", "plain value");
    return v;
  }

  /** Whether `key` holds a live entry or hash. Does not touch it. */
  has(key) {
    checkString("key", key);
    return this.#liveSlot(key) !== NIL;
  }

  /** Restarts `key`'s idle window. @returns {boolean} false if missing */
  touch(key) {
    checkString("key", key);
    const s = this.#liveSlot(key);
    if (s === NIL) return false;
    this.#read(s);
    return true;
  }

  /** Removes `key` (a plain entry or a whole hash). @returns {boolean} */
  delete(key) {
    checkString("key", key);
    const s = this.#index.get(key);
    if (s === undefined) return false;
    const live = this.#liveKey(s);
    this.#e().remove(s, live ? DELETED : EXPIRED);
    this.#flush(this.#drain());
    return live;
  }

  /** Removes everything; `dispose` sees reason `"cleared"`. */
  clear() {
    this.#e().clear();
    this.#spare.length = 0; // the engine freed our reserved slots too
    this.#flush(this.#drain());
  }

  /** Sets an absolute deadline `ms` from now; `ms <= 0` deletes. */
  expire(key, ms, cond) {
    checkString("key", key);
    checkNumber("ms", ms);
    return this.#expire(this.#liveSlot(key), ms, true, condCode(cond));
  }

  /** Sets an absolute deadline at `time` (ms or `Date`); a past time deletes. */
  expireAt(key, time, cond) {
    checkString("key", key);
    const t = toTime("time", time);
    return this.#expire(this.#liveSlot(key), t, false, condCode(cond));
  }

  #expire(s, t, rel, c) {
    const r = this.#e().expireAt(s, t, rel, c);
    this.#flush(this.#drain());
    return r;
  }

  /** Drops both clocks. @returns {boolean} true if the key had one */
  persist(key) {
    checkString("key", key);
    const s = this.#liveSlot(key);
    return s !== NIL && this.#e().persist(s);
  }

  /** Ms until the earliest deadline; `Infinity` if none; `undefined` if missing. */
  ttl(key) {
    checkString("key", key);
    const s = this.#liveSlot(key);
    if (s === NIL) return undefined;
    const d = this.#deadline(s);
    return d === Infinity ? Infinity : d - this.#now;
  }

  /** Keys held, including expired ones a sweep has not reached yet. */
  get size() {
    return this.#index.size;
  }

  // ---- iteration (live entries only, insertion order, no touch) ------------

  #valueOf(s) {
    const v = this.#vals[s];
    return v instanceof Hash ? this.#liveFields(s, v) : v;
  }

  *keys() {
    for (const [k, s] of this.#index) if (this.#liveKey(s)) yield k;
  }

  *values() {
    for (const [, s] of this.#index) if (this.#liveKey(s)) yield this.#valueOf(s);
  }

  *entries() {
    for (const [k, s] of this.#index) if (this.#liveKey(s)) yield [k, this.#valueOf(s)];
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
    const a = this.#e().stats();
    sync();
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
      size: a[10],
      entries: a[11],
      bytes: a[12],
      smallQueue: a[13],
      engineBytes: a[14],
      wasmBytes: memory.buffer.byteLength,
      now: this.#now,
      maxEntries: this.#opts.maxEntries,
      maxBytes: this.#opts.maxBytes,
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
    checkString("key", key);
    checkString("field", field);
    checkValue(value);
    let flags = parseWrite(opts);
    let h = this.#index.get(key);
    let f = NIL;
    if (h === undefined) {
      h = NIL;
    } else if (this.#liveKey(h)) {
      const box = this.#vals[h];
      if (!(box instanceof Hash)) throw wrongType("plain value", "hash");
      const fs = box.fields.get(field);
      if (fs !== undefined) f = fs;
    }
    const w = this.#sizeOf === undefined ? 0 : this.#measure(value, key, field);
    const ghost = this.#ghost;
    const returning = h === NIL && ghost !== null && ghost.has(key);
    if (returning) flags |= TO_MAIN;
    const r = this.#e().hwrite(h, f, flags, wTtl, wIdle, wAt, w);
    if (r === FAILED) throw this.#e().takeError();
    let calls = this.#drain();
    if (returning) ghost.delete(key);
    if (calls === null && this.#dispose !== undefined) calls = [];
    if (r === NIL) {
      this.#flush(calls);
      return false;
    }
    const hs = this.#e().parent(r);
    let box = this.#vals[hs];
    if (this.#keys[hs] === undefined) {
      box = new Hash();
      this.#index.set(key, hs);
      this.#keys[hs] = key;
      this.#vals[hs] = box;
    }
    const isNew = this.#keys[r] === undefined;
    if (isNew) {
      box.fields.set(field, r);
      this.#keys[r] = field;
      this.#vals[r] = value;
    } else {
      const old = this.#vals[r];
      this.#vals[r] = value;
      if (calls !== null && old !== value) calls.push(old, key, "replaced", field);
    }
    this.#flush(calls);
    return isNew;
  }

  /** A live field's value, restarting the field's and the key's idle windows. */
  hget(key, field) {
    checkString("key", key);
    checkString("field", field);
    const s = this.#index.get(key);
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
    checkString("key", key);
    checkString("field", field);
    return this.#fieldSlot(this.#hashSlot(key), field) !== NIL;
  }

  /** Removes a field; the last one takes the key. @returns {boolean} */
  hdel(key, field) {
    checkString("key", key);
    checkString("field", field);
    const f = this.#fieldSlot(this.#hashSlot(key), field);
    if (f === NIL) return false;
    this.#e().remove(f, DELETED);
    this.#flush(this.#drain());
    return true;
  }

  /** Number of live fields (0 if the key is missing). */
  hlen(key) {
    checkString("key", key);
    const h = this.#hashSlot(key);
    if (h === NIL) return 0;
    let n = 0;
    for (const f of this.#vals[h].fields.values()) if (this.#live(f)) n++;
    return n;
  }

  /** A `Map` of the live fields (empty if the key is missing). No touch. */
  hgetall(key) {
    checkString("key", key);
    const h = this.#hashSlot(key);
    return h === NIL ? new Map() : this.#liveFields(h, this.#vals[h]);
  }

  /** Sets a field's absolute deadline `ms` from now; `ms <= 0` deletes it. */
  hexpire(key, field, ms, cond) {
    checkString("key", key);
    checkString("field", field);
    checkNumber("ms", ms);
    const c = condCode(cond);
    return this.#expire(this.#fieldSlot(this.#hashSlot(key), field), ms, true, c);
  }

  /** Sets a field's absolute deadline at `time`; a past time deletes it. */
  hexpireAt(key, field, time, cond) {
    checkString("key", key);
    checkString("field", field);
    const t = toTime("time", time);
    const c = condCode(cond);
    return this.#expire(this.#fieldSlot(this.#hashSlot(key), field), t, false, c);
  }

  /** Drops a field's clocks. @returns {boolean} true if it had one */
  hpersist(key, field) {
    checkString("key", key);
    checkString("field", field);
    const f = this.#fieldSlot(this.#hashSlot(key), field);
    return f !== NIL && this.#e().persist(f);
  }

  /** Ms until the field goes (its own clocks or its key's, whichever first). */
  httl(key, field) {
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
}
