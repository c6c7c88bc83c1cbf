// Argument and option checks for every public method, and the hints that
// point a user coming from lru-cache at lapse's option names.

import { COND_GT, COND_LT, COND_NX, COND_XX, WRITE_AT, WRITE_IDLE, WRITE_KEEP_TTL, WRITE_TTL } from "./protocol.js";

const CONDS = { NX: COND_NX, XX: COND_XX, GT: COND_GT, LT: COND_LT };

export const CTOR_OPTIONS = new Set([
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
export const WRITE_OPTIONS = new Set(["ttl", "idle", "expireAt", "keepTtl"]);
export const FETCH_OPTIONS = new Set(["ttl", "idle", "expireAt", "refresh", "grace", "signal"]);
export const RESTORE_OPTIONS = new Set(["dispose", "sizeOf", "now", "clock", "refresh", "grace", "onLoadError"]);

export function describe(v) {
  if (v == null) return String(v); // "null", "undefined" (not "undefined undefined")
  const a = isArray(v);
  if (a) return "an array";
  if (a === null) return "a revoked Proxy";
  const t = typeof v;
  if (t === "string") return JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v);
  if (t === "object") return "an object";
  if (t === "number" || t === "boolean") return `${t} ${v}`;
  return `a ${t}`; // a function, a symbol, a bigint
}

export function checkString(arg, v) {
  if (typeof v !== "string") throw new TypeError(`${arg}: must be a string, got ${describe(v)}`);
}

export function checkNumber(arg, v) {
  if (typeof v !== "number") throw new TypeError(`${arg}: must be a number, got ${describe(v)}`);
}

/** Throws RangeError unless `t` is a finite number (of milliseconds). */
export function checkFinite(arg, t) {
  if (!Number.isFinite(t)) throw new RangeError(`${arg}: must be a finite number of milliseconds, got ${describe(t)}`);
}

export function checkValue(v) {
  if (v === undefined) throw new TypeError("value: must not be undefined");
}

export function wrongType(held, wanted) {
  return new TypeError(`WRONGTYPE: key holds a ${held}, not a ${wanted}`);
}

const dateTime = Date.prototype.getTime;

/**
 * A time argument: a number, or a valid `Date`. A Date is told by its
 * internal time (what `getTime` of the realm's own Date reads), not by
 * `instanceof`: one from another realm (a vm context, an iframe) is a Date,
 * and an object that only inherits from `Date.prototype` is not (its
 * `getTime` would throw V8's own error, naming no argument).
 */
export function toTime(arg, v) {
  if (typeof v === "object" && v !== null) {
    let t;
    try {
      t = dateTime.call(v);
    } catch {
      throw new TypeError(`${arg}: must be a number or a Date, got ${describe(v)}`);
    }
    if (t !== t) throw new RangeError(`${arg}: invalid Date`);
    return t;
  }
  checkNumber(arg, v);
  return v;
}

export function condCode(cond) {
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

/** `Array.isArray(v)`, or `null` for a revoked Proxy (for which it throws). */
function isArray(v) {
  try {
    return Array.isArray(v);
  } catch {
    return null;
  }
}

export function checkOptions(arg, opts, allowed) {
  if (opts === null || typeof opts !== "object" || isArray(opts) !== false) {
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
export let wTtl = 0;
export let wIdle = 0;
export let wAt = 0;

export function parseWrite(opts) {
  if (opts === undefined) return 0;
  checkOptions("opts", opts, WRITE_OPTIONS);
  let flags = 0;
  const { ttl, idle, expireAt, keepTtl } = opts;
  let at = 0;
  // Every check the engine makes of the options alone, here too: a write
  // pays what earlier writes owe (removing expired entries) once they pass.
  if (ttl !== undefined) {
    checkLifetime("ttl", ttl);
    flags |= WRITE_TTL;
  }
  if (idle !== undefined) {
    checkLifetime("idle", idle);
    flags |= WRITE_IDLE;
  }
  if (expireAt !== undefined) {
    at = toTime("expireAt", expireAt);
    flags |= WRITE_AT;
  }
  if (keepTtl !== undefined) {
    if (typeof keepTtl !== "boolean") throw new TypeError(`keepTtl: must be a boolean, got ${describe(keepTtl)}`);
    if (keepTtl) flags |= WRITE_KEEP_TTL;
  }
  if (flags & WRITE_KEEP_TTL && flags !== WRITE_KEEP_TTL) throw new TypeError("keepTtl: cannot be combined with ttl, idle or expireAt");
  if (flags & WRITE_TTL && flags & WRITE_AT) throw new TypeError("expireAt: cannot be combined with ttl");
  wTtl = flags & WRITE_TTL ? ttl : 0;
  wIdle = flags & WRITE_IDLE ? idle : 0;
  wAt = at;
  return flags;
}

export function optionalNumber(arg, v, dflt) {
  if (v === undefined) return dflt;
  checkNumber(arg, v);
  return v;
}

export function checkFunction(arg, v) {
  if (typeof v !== "function") throw new TypeError(`${arg}: must be a function, got ${describe(v)}`);
  return v;
}

export function optionalFunction(arg, v) {
  return v === undefined ? v : checkFunction(arg, v);
}

/** `refresh`/`grace`: a non-negative number of ms or `Infinity`; `undefined` keeps `dflt`. */
export function optionalSpan(arg, v, dflt) {
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
export function parseFetch(opts) {
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
      checkFinite("expireAt", t);
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
