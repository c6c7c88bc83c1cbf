// The hash commands (hset ... httl): keys whose value is a `Hash` of fields,
// each field a slot of its own with its own clocks. They are `TtlCache`
// methods, kept here as functions of the cache (`c`, or `this` in the methods)
// that reach its private state through the accessors cache.js exports.

import { COND_PERSIST, NIL, REASON_DELETED, ST_HASH, WRITE_TO_MAIN } from "./protocol.js";
import {
  alive,
  deadline,
  drain,
  expireNow,
  flush,
  hit,
  index,
  keyList,
  keyMap,
  live,
  liveSlot,
  measure,
  miss,
  now,
  owing,
  payOwed,
  place,
  read,
  runningLoads,
  sizeOf,
  slot,
  statusAt,
  syncClock,
  toEngine,
  valList,
  written,
} from "./cache.js";
import { expireKey } from "./commands.js";
import { Hash, isHash } from "./hash.js";
import { invalidate } from "./loading.js";
import { U32 } from "./memory.js";
import { checkNumber, checkString, checkValue, condCode, parseWrite, toTime, wAt, wIdle, wTtl, wrongType } from "./validate.js";

/**
 * Whether a key's slot is live: its clocks, and for a hash at least one
 * live field (a hash goes with its last field, swept or not).
 */
export function liveKey(c, s) {
  if (!live(c, s)) return false;
  const v = valList(c)[s];
  if (!isHash(v)) return true;
  // Every field is in grace, or the last scan found none live: no scan.
  // Dead stays dead (deadlines only move by writes, which need a live
  // hash; a write to a dead one replaces it, box and all).
  if (v.graced || v.witness === -2) return false;
  // Scanning the fields in insertion order on every access cost O(dead
  // fields) each time the old ones had expired unswept (issue 13). The
  // witness makes that one scan per witness lifetime: it is the field with
  // the latest deadline seen, so it goes last of those it was chosen among.
  const w = v.witness;
  if (w >= 0 && live(c, w) && v.fields.get(keyList(c)[w]) === w) return true;
  let best = -1;
  let latest = now(c);
  for (const f of v.fields.values()) {
    const d = deadline(c, f);
    if (d > latest) {
      latest = d;
      best = f;
    }
  }
  v.witness = best < 0 ? -2 : best;
  return best >= 0;
}

/** The live hash slot of `key`, or NIL; throws WRONGTYPE on a plain key. */
export function hashSlot(c, key) {
  const h = liveSlot(c, key);
  if (h !== NIL && !isHash(valList(c)[h])) throw wrongType("plain value", "hash");
  return h;
}

/** The live field slot, or NIL. */
export function fieldSlot(c, h, field) {
  if (h === NIL) return NIL;
  const f = valList(c)[h].fields.get(field);
  return f !== undefined && live(c, f) ? f : NIL;
}

/**
 * Counts the live fields of hash `key` (at live slot `h`) and puts them in
 * `out` (a `Map`, or null to count only). The expired fields it passes go
 * first (the engine's lazy expiry, as hget's: each `dispose`d, those with
 * grace left kept), so that no later read passes them again: the contract
 * bounds no operation's cost by the dead fields it does not remove.
 * `dispose` may change anything, so the key is then looked up again: -1 if
 * it no longer holds a live hash.
 */
export function hashFields(c, key, h, out) {
  const n = collect(c, h, out);
  if (n >= 0) return n;
  expireNow(c, h);
  // The first pass's fields go whatever comes next: a `dispose` may have
  // deleted the hash (a probe got a deleted field's value back from hgetall).
  if (out !== null) out.clear();
  const again = liveSlot(c, key);
  if (again === NIL || !isHash(valList(c)[again])) return -1;
  // (Fields in grace stay expired: taken as they are, not removed again.)
  const m = collect(c, again, out);
  return m >= 0 ? m : -m - 1;
}

/** hashFields' pass over slot `h`'s fields: the live count, or -(count + 1) if it passed an expired one. */
function collect(c, h, out) {
  const vals = valList(c);
  let n = 0;
  let dead = false;
  for (const [name, f] of vals[h].fields) {
    if (!live(c, f)) {
      dead = true;
    } else {
      n++;
      if (out !== null) out.set(name, vals[f]);
    }
  }
  return dead ? -n - 1 : n;
}

/** What the index holds for `key`; WRONGTYPE on a live plain entry. */
function hashTarget(c, key) {
  const h = keyMap(c).get(key);
  if (h !== undefined && h >= 0 && !isHash(valList(c)[h]) && liveKey(c, h)) {
    throw wrongType("plain value", "hash");
  }
  return h;
}

export const hashMethods = {
  /** Writes a hash field. @returns {boolean} true if the field is new */
  hset(key, field, value, opts) {
    syncClock(this);
    checkString("key", key);
    checkString("field", field);
    checkValue(value);
    alive(this);
    let flags = parseWrite(opts);
    const ttl = wTtl;
    const idle = wIdle;
    const at = wAt;
    payOwed(this, key, false); // the arguments checked, before the lookup (see #time)
    try {
      let w = 0;
      if (sizeOf(this) !== undefined) {
        hashTarget(this, key); // WRONGTYPE before sizeOf sees the value
        w = measure(this, value, key, field);
      }
      // Looked up after the last user code (see #setSlow).
      let h = hashTarget(this, key);
      let f = NIL;
      const returning = h !== undefined && h < 0;
      if (h === undefined || returning) {
        h = NIL;
      } else if (liveKey(this, h)) {
        const fs = valList(this)[h].fields.get(field);
        if (fs !== undefined) f = fs;
      }
      if (returning) flags |= WRITE_TO_MAIN;
      const r = toEngine(this).hwrite(h, f, flags, ttl, idle, at, w);
      const calls = written(this, r, key, returning);
      if (r === NIL) {
        if (runningLoads(this) !== 0) invalidate(this, key, field, true);
        flush(this, calls);
        return false;
      }
      const hs = U32[statusAt(this) + ST_HASH];
      if (keyList(this)[hs] === undefined) {
        index(this, key, hs, returning);
        keyList(this)[hs] = key;
        valList(this)[hs] = new Hash();
      }
      const isNew = place(this, r, field, value, calls, key, field);
      if (isNew) valList(this)[hs].fields.set(field, r);
      // After the state is complete: aborting runs the loaders' listeners.
      if (runningLoads(this) !== 0) invalidate(this, key, field, true);
      flush(this, calls);
      return isNew;
    } finally {
      owing(this); // a dispose error of the reclaim paid first, once the write landed (see #catchUp)
    }
  },

  /** A live field's value, restarting the field's and the key's idle windows. */
  hget(key, field) {
    syncClock(this);
    checkString("key", key);
    checkString("field", field);
    const s = slot(this, key);
    if (s === undefined) {
      miss(this);
      return undefined;
    }
    if (!liveKey(this, s)) {
      miss(this);
      expireNow(this, s);
      return undefined;
    }
    const box = valList(this)[s];
    if (!isHash(box)) throw wrongType("plain value", "hash");
    const f = box.fields.get(field);
    if (f === undefined) {
      miss(this);
      return undefined;
    }
    if (!live(this, f)) {
      miss(this);
      expireNow(this, f);
      return undefined;
    }
    read(this, f);
    read(this, s);
    hit(this);
    return valList(this)[f];
  },

  /** Whether the field is live. No touch. */
  hhas(key, field) {
    syncClock(this);
    checkString("key", key);
    checkString("field", field);
    return fieldSlot(this, hashSlot(this, key), field) !== NIL;
  },

  /** Removes a field; the last one takes the key. @returns {boolean} */
  hdel(key, field) {
    syncClock(this);
    checkString("key", key);
    checkString("field", field);
    const f = fieldSlot(this, hashSlot(this, key), field);
    if (f === NIL) {
      if (runningLoads(this) !== 0) invalidate(this, key, field);
      return false;
    }
    toEngine(this).remove(f, REASON_DELETED);
    const calls = drain(this);
    if (runningLoads(this) !== 0) invalidate(this, key, field);
    flush(this, calls);
    return true;
  },

  /**
   * Number of live fields (0 if the key is missing). Expired fields it
   * passes go first, as in `hashFields`.
   */
  hlen(key) {
    syncClock(this);
    checkString("key", key);
    const h = hashSlot(this, key);
    const n = h === NIL ? 0 : hashFields(this, key, h, null);
    if (n >= 0) return n;
    hashSlot(this, key); // `dispose` made it a plain value: WRONGTYPE
    return 0;
  },

  /** A `Map` of the live fields (empty if the key is missing). No touch. */
  hgetall(key) {
    syncClock(this);
    checkString("key", key);
    const h = hashSlot(this, key);
    const out = new Map();
    if (h === NIL || hashFields(this, key, h, out) >= 0) return out;
    hashSlot(this, key); // `dispose` made it a plain value: WRONGTYPE
    return out;
  },

  /** Sets a field's absolute deadline `ms` from now; `ms <= 0` deletes it. */
  hexpire(key, field, ms, cond) {
    syncClock(this);
    checkString("key", key);
    checkString("field", field);
    checkNumber("ms", ms);
    const c = condCode(cond);
    return expireKey(this, key, field, fieldSlot(this, hashSlot(this, key), field), ms, true, c);
  },

  /** Sets a field's absolute deadline at `time`; a past time deletes it. */
  hexpireAt(key, field, time, cond) {
    syncClock(this);
    checkString("key", key);
    checkString("field", field);
    const t = toTime("time", time);
    const c = condCode(cond);
    return expireKey(this, key, field, fieldSlot(this, hashSlot(this, key), field), t, false, c);
  },

  /** Drops a field's clocks. @returns {boolean} true if it had one */
  hpersist(key, field) {
    syncClock(this);
    checkString("key", key);
    checkString("field", field);
    const f = fieldSlot(this, hashSlot(this, key), field);
    return f !== NIL && expireKey(this, undefined, undefined, f, 0, 0, COND_PERSIST); // see persist
  },

  /** Ms until the field goes (its own clocks or its key's, whichever first). */
  httl(key, field) {
    syncClock(this);
    checkString("key", key);
    checkString("field", field);
    const h = hashSlot(this, key);
    const f = fieldSlot(this, h, field);
    if (f === NIL) return undefined;
    const df = deadline(this, f);
    const dh = deadline(this, h);
    const d = df < dh ? df : dh;
    return d - now(this); // Infinity when none: the clock is finite
  },
};
