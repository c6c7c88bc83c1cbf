// Iteration over a cache: live entries only, in insertion order, with no
// touch; the expired ones are purged first (see purgeForWalk). `TtlCache`
// methods, kept here as functions of the cache that reach its private state
// through the accessors cache.js exports.

import { alive, keyMap, syncClock, valList } from "./cache.js";
import { purgeForWalk } from "./commands.js";
import { isHash } from "./hash.js";
import { hashFields, liveKey } from "./hashes.js";
import { checkFunction } from "./validate.js";

/**
 * The live entries' keys (`what` 0), values (1) or [key, value] pairs (2).
 * The clock is read before each step rather than once: the caller may
 * await between steps. A hash's value is its live fields; the expired ones
 * a step passes go (see hashFields), so that no later iteration pays for
 * them. The Map's iterator steps over keys removed meanwhile.
 */
function* liveEntries(c, what) {
  const it = keyMap(c).entries();
  for (;;) {
    // A step after free() throws, as every method then does: the iterator
    // still walks the index the cache dropped.
    alive(c);
    syncClock(c);
    const r = it.next();
    if (r.done) return;
    const [k, s] = r.value;
    if (s < 0 || !liveKey(c, s)) continue; // a ghost, or expired
    if (what === 0) {
      yield k;
      continue;
    }
    let v = valList(c)[s];
    if (isHash(v)) {
      v = new Map();
      // (-1: a `dispose` that hashFields ran removed the key, or replaced
      // it, which puts it at the end of the index, where this iteration
      // meets it again.)
      if (hashFields(c, k, s, v) < 0) continue;
    }
    yield what === 1 ? v : [k, v];
  }
}

export const iterationMethods = {
  keys() {
    alive(this);
    purgeForWalk(this);
    return liveEntries(this, 0);
  },

  values() {
    alive(this);
    purgeForWalk(this);
    return liveEntries(this, 1);
  },

  entries() {
    alive(this);
    purgeForWalk(this);
    return liveEntries(this, 2);
  },

  [Symbol.iterator]() {
    return this.entries();
  },

  forEach(fn, thisArg) {
    checkFunction("fn", fn);
    for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
  },
};
