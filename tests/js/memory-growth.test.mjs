// Wasm memory grows inside calls that then throw. Every cache reads its
// clocks through views of that memory, which a growth detaches: a throwing
// call must leave the views usable for every other cache, or their live
// entries read as expired.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

test("a restore that grows memory and then throws leaves other caches readable", () => {
  const c = new TtlCache({ now: 0, ttl: 1000 });
  c.set("a", 1);
  c.hset("h", "f", 2);
  // A snapshot big enough that restoring it must grow memory (the engine's
  // slots), whose restore then fails in the constructor (maxBytes without
  // sizeOf).
  const big = new TtlCache({ now: 0, maxBytes: 1e9, sizeOf: () => 1 });
  for (let i = 0; i < 200_000; i++) big.set("k" + i, i);
  const bytes = big.snapshot();
  big.free();
  // Take the free memory up, so that the restore has to grow it.
  const filler = new TtlCache({ now: 0 });
  for (let i = 0, w0 = c.stats().wasmBytes; c.stats().wasmBytes === w0; ) {
    for (const end = i + 1000; i < end; i++) filler.set("f" + i, i);
  }
  const before = c.stats().wasmBytes;
  assert.throws(() => TtlCache.restore(bytes), (e) => e instanceof TypeError && /sizeOf/.test(e.message));
  // No call into wasm for `c` in between: `get` and `snapshot` read the views.
  assert.equal(c.get("a"), 1);
  assert.equal(c.hget("h", "f"), 2);
  const r = TtlCache.restore(c.snapshot());
  assert.deepEqual([...r.keys()].sort(), ["a", "h"]);
  assert.ok(c.stats().wasmBytes > before + 4_000_000, "the failed restore grew memory (else this test checks nothing)");
});
