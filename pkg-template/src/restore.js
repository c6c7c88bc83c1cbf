// The restore hand-off: `TtlCache.restore` has the engine check and decode
// snapshot bytes into a fresh RawEngine, hands that engine to the
// constructor (instead of a new one), then fills the key index from the bytes
// (tape.js).

import { RawEngine } from "./glue.js";
import { clockOption } from "./clock.js";
import { attachMemory, copyIn, syncViews } from "./memory.js";
import {
  RESTORE_IDLE,
  RESTORE_MAX_BYTES,
  RESTORE_MAX_ENTRIES,
  RESTORE_NOW,
  RESTORE_SWEEP_BUDGET,
  RESTORE_TTL,
  SNAP_FLAGS_AT,
  SNAP_FLAG_FOLLOWS,
  SNAP_VERSION_AT,
} from "./protocol.js";
import { RESTORE_OPTIONS, checkOptions, describe, optionalFunction } from "./validate.js";

// The engine `TtlCache.restore` hands the constructor instead of a new one.
let adopting = null;

/** The engine being restored, if the constructor runs for a restore (taken once). */
export function takeAdopted() {
  const adopted = adopting;
  adopting = null;
  return adopted;
}

/**
 * `TtlCache.restore` up to the key index: checks the arguments, has a new
 * engine decode the bytes, and builds a `Cache` around that engine.
 * Returns the cache and the copy of the bytes to fill its index from.
 */
export function restoreEngine(Cache, bytes, opts) {
  attachMemory();
  if (Object.prototype.toString.call(bytes) !== "[object Uint8Array]") {
    throw new TypeError(`bytes: must be a Uint8Array, got ${describe(bytes)}`);
  }
  const o = opts === undefined ? {} : opts;
  checkOptions("opts", o, RESTORE_OPTIONS);
  const sizeOf = optionalFunction("sizeOf", o.sizeOf);
  const dispose = optionalFunction("dispose", o.dispose);
  const optNow = o.now;
  const optClock = o.clock;
  clockOption(optNow, optClock);
  // Our own copy: the bytes are read twice (checked in wasm, then decoded
  // here), and must be the same bytes both times.
  const copy = Uint8Array.prototype.slice.call(bytes);
  const raw = new RawEngine(0, Infinity, Infinity, Infinity, Infinity, 0);
  let c;
  try {
    copyIn(raw, copy, "bytes");
    const h = raw.restore();
    // It may have grown the memory: every cache's views must follow.
    syncViews();
    // The clock mode is a header flag of version 2 (the decoder checked it);
    // version 1 had none and reads as manual. Options override it (`now` is
    // a number or undefined, `clock` a function or undefined: checked above).
    const follows = copy[SNAP_VERSION_AT] >= 2 && (copy[SNAP_FLAGS_AT] & SNAP_FLAG_FOLLOWS) !== 0;
    // Built (its getters read) before the engine is up for adoption: a
    // getter may construct another cache, which must not take it.
    const options = {
      now: optNow ?? (optClock || follows ? undefined : h[RESTORE_NOW]),
      clock: optClock,
      ttl: h[RESTORE_TTL],
      idle: h[RESTORE_IDLE],
      maxEntries: h[RESTORE_MAX_ENTRIES],
      maxBytes: h[RESTORE_MAX_BYTES],
      sweepBudget: h[RESTORE_SWEEP_BUDGET],
      sizeOf,
      dispose,
      refresh: o.refresh,
      grace: o.grace,
      onLoadError: o.onLoadError,
    };
    adopting = raw;
    c = new Cache(options);
  } catch (e) {
    raw.free();
    // Even when this restore throws, every cache's views must follow.
    syncViews();
    throw e;
  } finally {
    adopting = null;
  }
  return [c, copy];
}

export { fillIndex } from "./tape.js";
