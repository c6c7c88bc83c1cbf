// Typed-array views of wasm memory, shared by every cache: any instance can
// grow the memory, which detaches the old buffer, so the views go stale
// whenever wasm allocates (in this cache's call or another's, successful or
// not) and everything that reads them checks first (`syncViews()`).

import { wasmMemory } from "./glue.js";

export let memory = null;
export let F64 = new Float64Array(0);
export let U8 = new Uint8Array(0);
export let U32 = new Uint32Array(0);

/**
 * Looks up the wasm memory (once, after the glue has been initialized) and
 * makes the views of it.
 */
export function attachMemory() {
  if (memory === null) memory = wasmMemory();
  const b = memory.buffer;
  F64 = new Float64Array(b);
  U8 = new Uint8Array(b);
  U32 = new Uint32Array(b);
}

// A growing wasm memory detaches its old buffer, which empties every view of
// it (length 0): cheaper to test than reading `memory.buffer` on every call,
// and true whoever grew it, this cache or another, successfully or not.
// The check alone, so that its bytecode is small: V8 counts it in the 920
// bytes it inlines into one function (set's inline paths call it twice).
export function syncViews() {
  if (U8.length === 0) attachMemory();
}
