// ESM and CJS copies of lapse in one process (the dual-package hazard): each
// has its own wasm instance; both must work side by side.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { TtlCache as EsmCache } from "lapse";

const require = createRequire(import.meta.url);
const { TtlCache: CjsCache } = require("lapse");

test("dual package: ESM and CJS builds load side by side", () => {
  assert.notEqual(EsmCache, CjsCache, "two module instances, as documented");
  const e = new EsmCache({ now: 0, ttl: 100 });
  const c = new CjsCache({ now: 0, ttl: 100 });
  for (let i = 0; i < 2_000; i++) {
    e.set(`k${i}`, i);
    c.set(`k${i}`, -i);
  }
  assert.equal(e.get("k1999"), 1999);
  assert.equal(c.get("k1999"), -1999);
  e.tick(100);
  assert.equal(e.get("k1"), undefined);
  assert.equal(c.get("k1"), -1, "the other copy's clock is its own");
});

test("dual package: a snapshot from one copy restores in the other", () => {
  const e = new EsmCache({ now: 0 });
  e.set("a", "x", { ttl: 50 });
  e.set("b", [1, 2, 3]);
  const r = CjsCache.restore(e.snapshot());
  assert.equal(r.get("a"), "x");
  assert.deepEqual(r.get("b"), [1, 2, 3]);
  assert.equal(r.ttl("a"), 50);
});
