// The wasm engine as JS objects: RawEngine wraps the C-ABI exports of
// src/binding/abi.rs (written by hand: only numbers cross, so wasm-bindgen's
// generated glue and shims were weight). scripts/assemble.mjs shortens the
// export names here and in the .wasm. Importing this initializes nothing:
// the entries call initSync.

import {
  CALL_FAILED,
  ERROR_CLASS,
  ERROR_MSG,
  ERROR_MSG_LEN,
  ERROR_OOM,
  ERROR_PLAIN,
  ERROR_RANGE,
  ERROR_TYPE,
  ERROR_WORDS,
} from "./protocol.js";

let wasm;

// A failed call returns a sentinel and leaves its error in wasm, read here
// at once (no JS runs in between). Messages are ASCII (Rust's own text).
const CLASSES = [];
CLASSES[ERROR_TYPE] = TypeError;
CLASSES[ERROR_RANGE] = RangeError;
CLASSES[ERROR_PLAIN] = Error;
function error() {
  const b = wasm.memory.buffer;
  const e = new Uint32Array(b, wasm.lapse_error(), ERROR_WORDS);
  const text = String.fromCharCode.apply(null, new Uint8Array(b, e[ERROR_MSG], e[ERROR_MSG_LEN]));
  // Out of memory: wasm sends only the argument's name (it keeps no text it would have to allocate).
  return e[ERROR_CLASS] === ERROR_OOM ? oom(text) : new CLASSES[e[ERROR_CLASS]](text);
}
/** Out of memory, on argument `arg`. */
export const oom = (arg) => new RangeError(arg + ": out of memory: wasm memory is full");
const check = (r) => {
  if (r === CALL_FAILED) throw error();
  return r;
};

// A call that stops early (its log full: ST_MORE) is made again, once the
// cache (`e.more()`) has replayed the log, until it is done; its result is
// the last chunk's, or (`sum`) the chunks' counts summed. Only a first chunk
// can fail (it reserves what the rest needs).
const again = (e, f, sum) => {
  let r = 0;
  do r = sum ? r + f() : f();
  while (e.more());
  return r;
};

// Engines a dropped TtlCache held are freed with it.
const finalizer =
  typeof FinalizationRegistry === "undefined"
    ? { register() {}, unregister() {} }
    : new FinalizationRegistry((p) => wasm.rawengine_free(p));

/**
 * The engine as JS sees it: slot numbers in, slot numbers out (see src/binding.rs).
 * A call that stops early (its log is full: `ST_MORE`) is made again until it
 * is done, each time once `more()` has replayed the log into `owner`, its
 * TtlCache (cache.js defines both; `more` returns whether the call stopped
 * early).
 */
export class RawEngine {
  constructor(now, ttl, idle, maxEntries, maxBytes, budget) {
    const p = wasm.rawengine_new(now, ttl, idle, maxEntries, maxBytes, budget);
    if (!p) throw error();
    this.p = p;
    finalizer.register(this, p, this);
  }
  free() {
    const p = this.p;
    this.p = 0;
    finalizer.unregister(this);
    wasm.rawengine_free(p);
  }
  clear() {
    check(again(this, () => wasm.rawengine_clear(this.p)));
  }
  expireAt(s, t, rel, cond) {
    return check(again(this, () => wasm.rawengine_expireAt(this.p, s, t, rel, cond))) !== 0;
  }
  hwrite(h, f, flags, ttl, idle, at, weight) {
    return again(this, () => wasm.rawengine_hwrite(this.p, h, f, flags, ttl, idle, at, weight)) >>> 0;
  }
  nextExpiry() {
    return wasm.rawengine_nextExpiry(this.p);
  }
  now() {
    return wasm.rawengine_now(this.p);
  }
  purge() {
    return this.tick(0, 1);
  }
  /** Links the queued inserts; with `pay`, reclaims what they and `writes` overwrites made on the JS side owe. */
  reclaim(writes, pay) {
    wasm.rawengine_reclaim(this.p, Math.min(writes, 0xffffffff), pay ? 1 : 0);
  }
  remove(s, reason) {
    return check(again(this, () => wasm.rawengine_remove(this.p, s, reason), true));
  }
  reserve(n) {
    wasm.rawengine_reserve(this.p, n);
  }
  /** Restores a snapshot's next slot into this fresh engine; returns it (see src/binding/snap.rs). */
  restore(kind, parent, abs, last, idle, w) {
    return check(wasm.rawengine_restore(this.p, kind, parent, abs, last, idle, w));
  }
  setGrace(s, ms) {
    check(wasm.rawengine_setGrace(this.p, s, ms));
  }
  slotWeight(s) {
    return wasm.rawengine_slotWeight(this.p, s) >>> 0;
  }
  staleUntil(s) {
    return wasm.rawengine_staleUntil(this.p, s);
  }
  stats() {
    return wasm.rawengine_stats(this.p) >>> 0;
  }
  statusPtr() {
    return wasm.rawengine_statusPtr(this.p) >>> 0;
  }
  /** The error behind the last FAILED from write/hwrite. */
  takeError() {
    wasm.rawengine_takeError(this.p);
    return error();
  }
  /** Or, with `purge`, purge() (one export for both). */
  tick(now, purge) {
    return check(again(this, () => wasm.rawengine_tick(this.p, now, purge), true));
  }
  /** A default write of a new key at capacity, in its victim's slot (see protocol.rs). */
  swapIn(toMain) {
    return wasm.rawengine_swapIn(this.p, toMain) >>> 0;
  }
  // `again`'s loop written out: a miss at capacity made this call (before
  // `swapIn`; one with options still does), and through `again`'s closure
  // (one call site shared by every method) it measured 2-5% slower per
  // insert at capacity (issue 16).
  write(s, flags, ttl, idle, at, weight) {
    let r;
    do r = wasm.rawengine_write(this.p, s, flags, ttl, idle, at, weight);
    while (this.more());
    return r >>> 0;
  }
}

/** The module's memory, for JS's typed-array views. */
export function wasmMemory() {
  return wasm.memory;
}

/** Instantiates the module (bytes or a compiled WebAssembly.Module) once. */
export function initSync({ module }) {
  if (wasm === undefined) {
    if (!(module instanceof WebAssembly.Module)) module = new WebAssembly.Module(module);
    wasm = new WebAssembly.Instance(module, {}).exports;
  }
  return wasm;
}
