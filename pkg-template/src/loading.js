// The cache's loading commands (fetch/hfetch) and their bookkeeping: what a
// fetch finds, which load it joins or starts, what a load's result does and
// which writes win over a running load. They are `TtlCache` methods, kept
// here as functions of the cache (`c`) that reach its private state through
// the accessors cache.js exports; fetch.js holds the loads themselves.
//
// Running loads live in `map` (key -> field, or `undefined` for a plain
// load, -> Load) of the cache's `Loads`, created on first use. A load is called once
// and shared by every fetch of its key while it runs; `invalidate` takes it
// out of the maps when a write, delete, expire, eviction or clear of its key
// wins over it.

import { NIL, TIMES_LAST } from "./protocol.js";
import { syncViews } from "./memory.js";
import {
  Load,
  allLoads,
  callLoader,
  detachWaiters,
  loadOf,
  loadsOf,
  rejectWaiters,
  resolveWaiters,
  wait,
} from "./fetch.js";
import {
  born,
  bornFrom,
  clockOf,
  drain,
  engine,
  flush,
  hit,
  live,
  liveSlot,
  loads,
  miss,
  now,
  read,
  running,
  slot,
  syncClock,
  toEngine,
  trackBirths,
  valList,
} from "./cache.js";
import { isHash } from "./hash.js";
import { fieldSlot, hashSlot } from "./hashes.js";
import { checkFunction, checkString, parseFetch, wrongType } from "./validate.js";

/** A cache's loading state: its running loads, fetch defaults and counters. */
export function newLoads(refresh, onError) {
  return {
    map: null,
    refresh, // default refresh (undefined: none)
    onError,
    started: 0,
    errors: 0,
    coalesced: 0,
    refreshes: 0,
    staleServed: 0,
  };
}

export const loadMethods = {
  /**
   * The live value at `key`, or what `loader(key, { signal })` produces,
   * stored with `opts` (`ttl`, `idle`, `expireAt`); one load per key at a
   * time, shared. Bad arguments reject before anything changes.
   * @returns {Promise<any>}
   */
  fetch(key, loader, opts) {
    try {
      syncClock(this);
      checkString("key", key);
      return fetchIn(this, key, undefined, loader, opts);
    } catch (e) {
      return Promise.reject(e);
    }
  },

  /**
   * As `fetch`, for one hash field: `loader(key, field, { signal })`.
   * @returns {Promise<any>}
   */
  hfetch(key, field, loader, opts) {
    try {
      syncClock(this);
      checkString("key", key);
      checkString("field", field);
      return fetchIn(this, key, field, loader, opts);
    } catch (e) {
      return Promise.reject(e);
    }
  },
};

function fetchIn(c, key, field, loader, opts) {
  checkFunction("loader", loader);
  const fo = parseFetch(opts);
  const l = loads(c);
  const refresh = fo.refresh === undefined ? l.refresh : fo.refresh;
  let s;
  let h = NIL;
  if (field === undefined) {
    s = liveSlot(c, key);
    if (s !== NIL && isHash(valList(c)[s])) throw wrongType("hash", "plain value");
  } else {
    h = hashSlot(c, key);
    s = fieldSlot(c, h, field);
  }
  if (fo.signal !== undefined && fo.signal.aborted) return Promise.reject(fo.signal.reason);
  // A grace of its own needs grace on, which takes memory (a column for
  // every slot): turned on now, so that running out fails this fetch
  // before anything changed rather than its store after the write.
  if (fo.grace !== undefined) {
    toEngine(c).setGrace(NIL, 0);
    drain(c);
  }
  if (refresh !== undefined) trackBirths(c);
  let ld = loadOf(l.map, key, field);
  if (s !== NIL) {
    // Its age first: the read below is an access (see age).
    const due = ld === undefined && refresh !== undefined && age(c, s) > refresh;
    // A hit, as `get`/`hget` count it; maybe a refresh behind it.
    read(c, s);
    if (h !== NIL) read(c, h);
    hit(c);
    const v = valList(c)[s];
    if (due) {
      l.refreshes++;
      start(c, key, field, loader, fo, true);
    }
    return Promise.resolve(v);
  }
  miss(c);
  if (ld === undefined) ld = start(c, key, field, loader, fo, false);
  else l.coalesced++;
  return wait(ld, fo.signal, () => unlist(c, ld));
}

/**
 * Ms since slot `s` was written. For a slot older than the stamps, the
 * last-access word: an entry with no idle window keeps its write time
 * there (reads do not move it), so its age is exact; a sliding entry read
 * since its write gives a lower bound (it was written no later than that
 * read, and before the stamps began), so no entry younger than `refresh`
 * is ever refreshed.
 */
function age(c, s) {
  const t = born(c)[s];
  if (t !== undefined) return now(c) - t;
  const from = bornFrom(c);
  syncViews();
  const last = clockOf(c, s, TIMES_LAST);
  return now(c) - (last < from ? last : from);
}

/** Registers a load, then calls the loader (which may call back into this cache). */
function start(c, key, field, loader, fo, background) {
  const ld = new Load(key, field, fo, background);
  const l = loads(c);
  const map = (l.map ??= new Map());
  let m = map.get(key);
  if (m === undefined) map.set(key, (m = new Map()));
  m.set(field, ld);
  running(c, 1);
  l.started++;
  callLoader(ld, loader).then(
    (v) => settle(c, ld, true, v),
    (e) => settle(c, ld, false, e),
  );
  return ld;
}

/** Takes `ld` out of the load maps (its result will not be stored). */
function unlist(c, ld) {
  if (!ld.live) return;
  ld.live = false;
  running(c, -1);
  const l = loads(c);
  const m = l.map.get(ld.key);
  m.delete(ld.field);
  if (m.size === 0) l.map.delete(ld.key);
}

/**
 * A write, delete, expire, eviction or clear of `key` (or of its `field`)
 * wins over its running loads: they store nothing and their signals abort.
 * A change to the key ends the loads of its fields too; `plainToo` (hset)
 * ends the key's plain load, whose store would now be WRONGTYPE.
 */
export function invalidate(c, key, field, plainToo) {
  const l = loads(c);
  abortLoads(c, loadsOf(l.map, key, field, plainToo));
}

export function invalidateAll(c) {
  const l = loads(c);
  abortLoads(c, allLoads(l.map));
}

function abortLoads(c, doomed) {
  for (const d of doomed) unlist(c, d);
  for (const d of doomed) d.ctrl.abort();
}

/** The value `key` (`field`) keeps in grace, as `[value]`; `null` if none. */
function stale(c, key, field) {
  const s = slot(c, key);
  if (s === undefined) return null;
  let f = s;
  if (field === undefined) {
    if (isHash(valList(c)[s]) || live(c, s)) return null;
  } else {
    const box = valList(c)[s];
    if (!isHash(box)) return null;
    f = box.fields.get(field);
    if (f === undefined || (live(c, f) && live(c, s))) return null;
  }
  // The engine as it is: `toEngine` hands over the queued inserts, which
  // only a call that links them may do (`staleUntil` links nothing, and
  // inserts queued after it overwrote the ones handed over: a probe lost 10).
  return engine(c).staleUntil(f) > now(c) ? [valList(c)[f]] : null;
}

/** A load's outcome: store it (unless invalidated), then answer every waiter. */
function settle(c, ld, ok, v) {
  ld.settled = true;
  // A freed cache (free() ended this load) has no clock, store or stale
  // value left: its waiters get the outcome as it is.
  const freed = engine(c) === null;
  try {
    if (!freed) syncClock(c); // a promise reaction: a new run, maybe a later time
  } catch (e) {
    if (ok) {
      ok = false; // a throwing clock: the store would throw it too
      v = e;
    }
  }
  const keep = ld.live;
  unlist(c, ld);
  if (ok && keep && v !== undefined) {
    try {
      store(c, ld, v);
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
  const l = loads(c);
  l.errors++;
  // Asked again: a callback the store ran (`sizeOf`, `dispose`, the clock)
  // may have freed the cache, which then holds no stale value (and whose
  // lookups throw: the waiters would never hear).
  const old = waiters === 0 || engine(c) === null ? null : stale(c, ld.key, ld.field);
  if (old !== null) {
    l.staleServed += waiters;
    resolveWaiters(ld, subs, old[0]);
  } else {
    rejectWaiters(ld, subs, v);
  }
  // An error no caller was rejected with goes to onLoadError, unless it is
  // the abort this cache asked for.
  if ((waiters === 0 || old !== null) && !ld.ctrl.signal.aborted && l.onError !== undefined) {
    try {
      l.onError.call(c, v, ld.key, ld.field); // `this` is the cache
    } catch {
      // A throwing listener has nowhere to go: this runs in a promise
      // reaction, where a throw would be an unhandled rejection.
    }
  }
}

function store(c, ld, v) {
  if (ld.field === undefined) c.set(ld.key, v, ld.write);
  else c.hset(ld.key, ld.field, v, ld.write);
  if (ld.grace === undefined) return;
  const s = slot(c, ld.key);
  if (s === undefined) return;
  // Looked up again, and the value checked: a callback the write ran
  // (dispose, sizeOf) may have replaced it, even with a value of the other
  // kind, and the grace is this load's.
  const box = valList(c)[s];
  if (ld.field === undefined ? isHash(box) : !isHash(box)) return;
  const f = ld.field === undefined ? s : box.fields.get(ld.field);
  if (f === undefined || valList(c)[f] !== v || !live(c, f)) return;
  toEngine(c).setGrace(f, ld.grace);
  flush(c, drain(c)); // it may allocate, which makes the views stale
}
