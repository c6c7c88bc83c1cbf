// The restore hand-off: `TtlCache.restore` has the engine check and decode
// snapshot bytes into a fresh RawEngine, hands that engine to the
// constructor (instead of a new one), then fills the key index from the bytes.

import { RawEngine } from "./glue.js";
import { clockOption } from "./clock.js";
import { Hash } from "./hash.js";
import { attachMemory, copyIn, syncViews } from "./memory.js";
import { ByteReader } from "./tape.js";
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
  let h;
  try {
    copyIn(raw, copy, "bytes");
    h = raw.restore();
  } catch (e) {
    raw.free();
    throw e;
  } finally {
    // Both calls may have grown the memory; every cache's views must follow
    // even when this restore throws (the constructor below may, too).
    syncViews();
  }
  // The clock mode is a header flag of version 2 (the decoder checked it);
  // version 1 had none and reads as manual. Options override it.
  const follows = copy[4] >= 2 && (copy[6] & 1) !== 0;
  let c;
  adopting = raw;
  try {
    c = new Cache({
      now: optClock !== undefined ? undefined : optNow !== undefined ? optNow : follows ? undefined : h[0],
      clock: optClock,
      ttl: h[1],
      idle: h[2],
      maxEntries: h[3],
      maxBytes: h[4],
      sweepBudget: h[5],
      sizeOf,
      dispose,
      refresh: o.refresh,
      grace: o.grace,
      onLoadError: o.onLoadError,
    });
  } catch (e) {
    raw.free();
    throw e;
  } finally {
    adopting = null;
  }
  return [c, copy];
}

/**
 * Fills the key index, keys and values from snapshot bytes the engine has
 * checked (format: SNAPSHOT.md). The engine handed out slots 0, 1, 2, ...
 * in order, hashes before their fields.
 */
export function fillIndex(bytes, keyMap, keyList, valList) {
  const r = new ByteReader(bytes);
  const count = r.header();
  let slot = 0;
  for (let e = 0; e < count; e++) {
    const s = slot++;
    const kind = r.head();
    const key = r.name;
    keyMap.set(key, s);
    keyList[s] = key;
    if (kind === 0) {
      valList[s] = r.value();
      continue;
    }
    const box = new Hash();
    valList[s] = box;
    const nf = r.varint();
    for (let i = 0; i < nf; i++) {
      const f = slot++;
      r.head();
      const name = r.name;
      box.fields.set(name, f);
      keyList[f] = name;
      valList[f] = r.value();
    }
  }
}
