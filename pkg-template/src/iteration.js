// Iteration over a cache: live entries only, in insertion order, with no
// touch. `TtlCache` methods, kept here as functions of the cache that reach
// its private state through the accessors cache.js exports.

import { alive, keyMap, syncClock, valList } from "./cache.js";
import { Hash } from "./hash.js";
import { liveFields, liveKey } from "./hashes.js";
import { describe } from "./validate.js";

function valueOf(c, s) {
  const v = valList(c)[s];
  return v instanceof Hash ? liveFields(c, s, v) : v;
}

/**
 * Live [key, slot] pairs. The clock is read before each step rather than
 * once: the caller may await between steps.
 */
function* liveSlots(c) {
  const it = keyMap(c).entries();
  for (;;) {
    syncClock(c);
    const r = it.next();
    if (r.done) return;
    const s = r.value[1];
    if (s >= 0 && liveKey(c, s)) yield r.value;
  }
}

function* keysOf(c) {
  for (const [k] of liveSlots(c)) yield k;
}

function* valuesOf(c) {
  for (const [, s] of liveSlots(c)) yield valueOf(c, s);
}

function* entriesOf(c) {
  for (const [k, s] of liveSlots(c)) yield [k, valueOf(c, s)];
}

export const iterationMethods = {
  keys() {
    alive(this);
    return keysOf(this);
  },

  values() {
    alive(this);
    return valuesOf(this);
  },

  entries() {
    alive(this);
    return entriesOf(this);
  },

  [Symbol.iterator]() {
    return this.entries();
  },

  forEach(fn, thisArg) {
    if (typeof fn !== "function") throw new TypeError(`fn: must be a function, got ${describe(fn)}`);
    for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
  },
};
