// The commands besides get and set (peek, has, touch, delete, the expiry
// commands, ttl), the time commands (tick, nextExpiry, purge) and stats.
// `TtlCache` methods, kept here as functions of the cache that reach its
// private state through the accessors cache.js exports.

import {
  COND_GT,
  COND_PERSIST,
  COND_XX,
  NIL,
  REASON_DELETED,
  REASON_EXPIRED,
  STATS_LEN,
  STAT_BYTES,
  STAT_CASCADED,
  STAT_DELETED,
  STAT_ENGINE_BYTES,
  STAT_ENTRIES,
  STAT_EVICTED,
  STAT_EXPIRED,
  STAT_GRACED_KEYS,
  STAT_INSERTED,
  STAT_KEYS,
  STAT_RESCHEDULED,
  STAT_SCHEDULED,
  STAT_SMALL_QUEUE,
  STAT_SWEPT,
  STAT_TICKS,
  STAT_UPDATED,
} from "./protocol.js";
import { readClock } from "./clock.js";
import {
  clock,
  counters,
  deadline,
  drain,
  flush,
  liveSlot,
  loads,
  now,
  opts,
  read,
  runningLoads,
  setNow,
  slot,
  syncClock,
  toEngine,
  valList,
} from "./cache.js";
import { isHash } from "./hash.js";
import { liveKey } from "./hashes.js";
import { invalidate } from "./loading.js";
import { F64, memory, syncViews } from "./memory.js";
import { checkNumber, checkString, condCode, toTime, wrongType } from "./validate.js";

/**
 * Moves slot `s`'s absolute deadline (`expire`, `expireAt` and their hash
 * forms). It wins over a running load of `key` (`field`) when it changed
 * something, or when there is no live entry (`s` NIL) for it to change:
 * the load's result must not outlive a deadline set while it ran (a missing
 * key's `expire` returns false, as `delete` does, and wins as `delete` does).
 * A condition not met changes nothing, the load included (API.md); a key
 * still loading has no deadline yet, so XX and GT are never met by it, NX
 * and LT always.
 */
export function expireKey(c, key, field, s, t, rel, cond) {
  const r = toEngine(c).expireAt(s, t, rel, cond);
  const calls = drain(c);
  const wins = r || (s === NIL && cond !== COND_XX && cond !== COND_GT);
  if (wins && runningLoads(c) !== 0) invalidate(c, key, field);
  flush(c, calls);
  return r;
}

/**
 * Removes every expired entry for a walk of the whole cache (iteration
 * before it, `snapshot()` after its bytes), as `purge()` does, `dispose`
 * calls included: the walk would otherwise step over them on every call,
 * and the contract bounds a call's cost by the dead entries it removes.
 * With sweeping off (`sweepBudget: 0`) the walk steps over them instead:
 * the price of no sweeping.
 */
export function purgeForWalk(c) {
  syncClock(c);
  if (opts(c).sweepBudget === 0) return;
  toEngine(c).purge();
  flush(c, drain(c));
}

export const commandMethods = {
  /** The live value at `key` without touching it; or `undefined`. */
  peek(key) {
    syncClock(this);
    checkString("key", key);
    const s = liveSlot(this, key);
    if (s === NIL) return undefined;
    const v = valList(this)[s];
    if (isHash(v)) throw wrongType("hash", "plain value");
    return v;
  },

  /** Whether `key` holds a live entry or hash. Does not touch it. */
  has(key) {
    syncClock(this);
    checkString("key", key);
    return liveSlot(this, key) !== NIL;
  },

  /** Restarts `key`'s idle window. @returns {boolean} false if missing */
  touch(key) {
    syncClock(this);
    checkString("key", key);
    const s = liveSlot(this, key);
    if (s === NIL) return false;
    read(this, s);
    return true;
  },

  /** Removes `key` (a plain entry or a whole hash). @returns {boolean} */
  delete(key) {
    syncClock(this);
    checkString("key", key);
    const s = slot(this, key);
    if (s === undefined) {
      if (runningLoads(this) !== 0) invalidate(this, key, undefined); // a cold key's load
      return false;
    }
    const live = liveKey(this, s);
    toEngine(this).remove(s, live ? REASON_DELETED : REASON_EXPIRED);
    const calls = drain(this);
    // After the state is complete: aborting runs the loaders' listeners.
    if (runningLoads(this) !== 0) invalidate(this, key, undefined);
    flush(this, calls);
    return live;
  },

  /** Sets an absolute deadline `ms` from now; `ms <= 0` deletes. */
  expire(key, ms, cond) {
    syncClock(this);
    checkString("key", key);
    checkNumber("ms", ms);
    return expireKey(this, key, undefined, liveSlot(this, key), ms, true, condCode(cond));
  },

  /** Sets an absolute deadline at `time` (ms or `Date`); a past time deletes. */
  expireAt(key, time, cond) {
    syncClock(this);
    checkString("key", key);
    const t = toTime("time", time);
    return expireKey(this, key, undefined, liveSlot(this, key), t, false, condCode(cond));
  },

  /** Drops both clocks. @returns {boolean} true if the key had one */
  persist(key) {
    syncClock(this);
    checkString("key", key);
    const s = liveSlot(this, key);
    // Through expireKey for its drain (the idle column may turn on), with no
    // key: a persist ends no running load.
    return s !== NIL && expireKey(this, undefined, undefined, s, 0, 0, COND_PERSIST);
  },

  /** Ms until the earliest deadline; `Infinity` if none; `undefined` if missing. */
  ttl(key) {
    syncClock(this);
    checkString("key", key);
    const s = liveSlot(this, key);
    if (s === NIL) return undefined;
    const d = deadline(this, s);
    return d - now(this); // Infinity when none: the clock is finite
  },

  /**
   * Advances the clock to `now` (default: a fresh reading of the followed
   * clock, or `Date.now()` for a manual one; an earlier time is ignored) and
   * removes at most `sweepBudget` expired entries.
   * @returns {number} how many entries were removed
   */
  tick(now) {
    syncClock(this);
    if (now === undefined) {
      const c = clock(this);
      now = c === undefined ? Date.now() : readClock(c);
    } else {
      now = toTime("now", now); // a time: a number or a Date, as everywhere (API.md)
    }
    const n = toEngine(this).tick(now);
    setNow(this, toEngine(this).now());
    flush(this, drain(this));
    return n;
  },

  /**
   * A time at or before the earliest deadline the cache holds, `Infinity`
   * if none: when to call `tick()` next (it can be early, never late).
   * @returns {number}
   */
  nextExpiry() {
    syncClock(this);
    const t = toEngine(this).nextExpiry();
    flush(this, drain(this));
    return t;
  },

  /** Removes every expired entry now. @returns {number} how many */
  purge() {
    syncClock(this);
    const n = toEngine(this).purge();
    flush(this, drain(this));
    return n;
  },

  /** Counters and gauges for tuning. */
  stats() {
    syncClock(this);
    const p = toEngine(this).stats() >>> 3;
    syncViews();
    const a = F64.slice(p, p + STATS_LEN);
    const [hits, misses, updated] = counters(this);
    const reads = hits + misses;
    const l = loads(this);
    const o = opts(this);
    return {
      hits,
      misses,
      hitRatio: reads === 0 ? 0 : hits / reads,
      expired: a[STAT_EXPIRED],
      evicted: a[STAT_EVICTED],
      deleted: a[STAT_DELETED],
      inserted: a[STAT_INSERTED],
      updated: a[STAT_UPDATED] + updated,
      ticks: a[STAT_TICKS],
      swept: a[STAT_SWEPT],
      rescheduled: a[STAT_RESCHEDULED],
      cascaded: a[STAT_CASCADED],
      scheduled: a[STAT_SCHEDULED],
      size: a[STAT_KEYS] - a[STAT_GRACED_KEYS],
      entries: a[STAT_ENTRIES],
      bytes: a[STAT_BYTES],
      smallQueue: a[STAT_SMALL_QUEUE],
      engineBytes: a[STAT_ENGINE_BYTES],
      wasmBytes: memory.buffer.byteLength,
      now: now(this),
      maxEntries: o.maxEntries,
      maxBytes: o.maxBytes,
      loads: l.started,
      loadErrors: l.errors,
      coalesced: l.coalesced,
      refreshes: l.refreshes,
      staleServed: l.staleServed,
    };
  },
};
