// Time: the default clock, reading a `clock` option, and the epoch that lets
// a cache read a followed clock at most once per synchronous run of JS.

import { checkFunction, checkNumber, describe } from "./validate.js";

// A cache that follows a clock reads it at most once per synchronous run of
// JS: it remembers the epoch of its reading, and a microtask queued by the
// first reading of a run bumps the epoch once the run is over. A method's
// only cost is comparing two numbers; no timer, no clock read per call.
export let epoch = 1;
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
export function dateNow() {
  return Date.now();
}

export function readClock(clock) {
  const t = clock();
  if (typeof t !== "number") throw new TypeError(`clock: must return a number, got ${describe(t)}`);
  if (t - t !== 0) throw new RangeError(`clock: must return a finite number, got ${t}`);
  return t;
}

/**
 * The clock options: a followed clock function, or `undefined` for a
 * manual one (with `now` validated). Reads each option once.
 */
export function clockOption(now, clock) {
  if (clock !== undefined) {
    if (now !== undefined) throw new TypeError("now: cannot be combined with clock");
    return checkFunction("clock", clock);
  }
  if (now === undefined) return dateNow;
  checkNumber("now", now);
  return undefined;
}

// A growing wasm memory detaches its old buffer, which empties every view of
// it (length 0): cheaper to test than reading `memory.buffer` on every call,

/** The current epoch, with its end queued (a followed clock's reading is good until then). */
export function stamp() {
  if (!epochQueued) {
    epochQueued = true;
    settled.then(nextEpoch);
  }
  return epoch;
}
