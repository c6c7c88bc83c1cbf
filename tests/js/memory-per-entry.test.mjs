// Memory per entry (issue 16 point 2), in a process of its own: wasm memory
// never shrinks, so what a fill leaves behind is its high-water mark. The
// bounds sit just above today's figures (a manual clock makes the fill's
// calls, and so its allocations, the same on every run): a column added back
// per slot (4 bytes), or the clocks wide (8 more), fails the first; a growth
// that leaves its last generations behind (the columns doubling all the way
// to the bound: 32.8 B) fails the second.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

test("a bounded fill of 250k entries: at most 27 B of engine columns and 28 B of wasm memory an entry", () => {
  const base = new TtlCache({ now: 0 }).stats().wasmBytes;
  const n = 250_000;
  const c = new TtlCache({ now: 0, ttl: 3_600_000, idle: 600_000, maxEntries: n });
  for (let i = 0; i < n; i++) c.set("k" + i, i);
  c.tick(1);
  assert.equal(c.size, n);
  const s = c.stats();
  const engine = s.engineBytes / n;
  const wasm = (s.wasmBytes - base) / n;
  // Today 25.3 and 26.2: narrow clocks, and the columns go to their bound
  // at 1/16 of it (before: 33.3 and 44.0; before issue 16: 69.9 and 85.5).
  assert.ok(engine <= 27, `engine columns take ${engine.toFixed(1)} B an entry`);
  assert.ok(wasm <= 28, `wasm memory grew ${wasm.toFixed(1)} B an entry (engine ${engine.toFixed(1)})`);
  // A cache of plain, weightless entries keeps neither a weight nor a family
  // column; the first weight or hash must not lose anything held.
  c.hset("h", "f", 1);
  assert.equal(c.get("k" + (n - 1)), n - 1);
  assert.equal(c.hget("h", "f"), 1);
});
