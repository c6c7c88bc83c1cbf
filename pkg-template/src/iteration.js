// Iteration over a cache: live entries only, in insertion order, with no
// touch. `TtlCache` methods, kept here as functions of the cache that reach
// its private state through the accessors cache.js exports.

import { alive, keyMap, syncClock, valList } from "./cache.js";
import { isHash } from "./hash.js";
import { liveFields, liveKey } from "./hashes.js";
import { describe } from "./validate.js";

function valueOf(c, s) {
  const v = valList(c)[s];
  return isHash(v) ? liveFields(c, s, v) : v;
}

/**
 * The live entries' keys (`what` 0), values (1) or [key, value] pairs (2).
 * The clock is read before each step rather than once: the caller may
 * await between steps.
 */
function* liveEntries(c, what) {
  const it = keyMap(c).entries();
  for (;;) {
    syncClock(c);
    const r = it.next();
    if (r.done) return;
    const [k, s] = r.value;
    if (s >= 0 && liveKey(c, s)) yield what === 0 ? k : what === 1 ? valueOf(c, s) : [k, valueOf(c, s)];
  }
}

export const iterationMethods = {
  keys() {
    alive(this);
    return liveEntries(this, 0);
  },

  values() {
    alive(this);
    return liveEntries(this, 1);
  },

  entries() {
    alive(this);
    return liveEntries(this, 2);
  },

  [Symbol.iterator]() {
    return this.entries();
  },

  forEach(fn, thisArg) {
    if (typeof fn !== "function") throw new TypeError(`fn: must be a function, got ${describe(fn)}`);
    for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
  },
};
