// The restore hand-off: `TtlCache.restore` has decode.js check the bytes and
// build the keys and values, a new RawEngine take the entries' slots with
// their exact clocks, and hands that engine to the constructor (instead of
// a new one); the key index and values then go to the cache.

import { RawEngine } from "./glue.js";
import { clockOption } from "./clock.js";
import { decode, invalid } from "./decode.js";
import { attachMemory, syncViews } from "./memory.js";
import { ENTRY_HASH } from "./protocol.js";
import { RESTORE_OPTIONS, checkFinite, checkOptions, describe, optionalFunction } from "./validate.js";

// The engine `TtlCache.restore` hands the constructor instead of a new one.
let adopting = null;

/** The engine being restored, if the constructor runs for a restore (taken once). */
export function takeAdopted() {
  const adopted = adopting;
  adopting = null;
  return adopted;
}

/**
 * `TtlCache.restore` but for the cache's own fields: checks the arguments,
 * decodes the bytes, restores the engine, and builds a `Cache` around it.
 * Returns the cache, its key index, key list and value list.
 */
export function restoreCache(Cache, bytes, opts) {
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
  // As the constructor's: a new engine checks its `now`, an adopted one
  // keeps the snapshot's unless `now` is later, and NaN or -Infinity were
  // ignored while +Infinity put every entry past its deadline.
  if (optNow !== undefined) checkFinite("now", optNow);
  // A plain Uint8Array copy (its internal slots, not getters a subclass may
  // have): the byte arrays restored are slices of it, not Buffers or views.
  let copy;
  try {
    copy = new Uint8Array(bytes);
  } catch (e) {
    // A buffer detached (transferred), maybe by an option getter above.
    throw e instanceof TypeError ? new TypeError(`bytes: ${e.message}`) : e;
  }
  const [now, ttl, idle, maxEntries, maxBytes, sweepBudget, follows, keyMap, keyList, valList, slots] = decode(copy, true);
  const raw = new RawEngine(now, ttl, idle, Infinity, maxBytes, sweepBudget);
  let c;
  try {
    let hash = 0;
    for (let i = 0, s = 0; i < slots.length; i += 5, s++) {
      if (slots[i] === ENTRY_HASH) hash = s;
      if (raw.restore(slots[i], hash, slots[i + 1], slots[i + 2], slots[i + 3], slots[i + 4]) !== s) {
        throw invalid("internal: slot order");
      }
    }
    // The bound last: the columns grew with the entries, not to it.
    raw.restore(-1, 0, maxEntries);
    // It may have grown the memory: every cache's views must follow.
    syncViews();
    // Built (its getters read) before the engine is up for adoption: a
    // getter may construct another cache, which must not take it.
    const options = {
      // Options override the snapshot's clock mode (`now` is a number or
      // undefined, `clock` a function or undefined: checked above).
      now: optNow ?? (optClock || follows ? undefined : now),
      clock: optClock,
      ttl,
      idle,
      maxEntries,
      maxBytes,
      sweepBudget,
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
  return [c, keyMap, keyList, valList];
}
