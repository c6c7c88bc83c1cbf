// Hashes whose old fields expired but were not swept (issue 13): they never
// make a write that fits throw, and they do not make each access O(fields).
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

test("expired unswept fields do not count against maxEntries or maxBytes", () => {
  const c = new TtlCache({ now: 0, maxEntries: 2, sweepBudget: 0 });
  c.hset("h", "old", 1, { ttl: 5 });
  c.hset("h", "keep", 2);
  c.tick(10); // "old" expired; sweepBudget 0 leaves it held
  assert.equal(c.stats().entries, 2);
  assert.equal(c.hset("h", "new", 3), true); // was RangeError "... more fields than maxEntries 2"
  assert.deepEqual([...c.hgetall("h").keys()].sort(), ["keep", "new"]);
  assert.throws(() => c.hset("h", "third", 4), RangeError, "three live fields still never fit");

  const b = new TtlCache({ now: 0, maxBytes: 10, sizeOf: (v) => v, sweepBudget: 0 });
  b.hset("h", "old", 8, { ttl: 5 });
  b.hset("h", "keep", 2);
  b.tick(5);
  assert.equal(b.hset("h", "new", 8), true); // was RangeError "size 8 can never fit in maxBytes 10"
  assert.equal(b.stats().bytes, 10);
});

test("accesses to a hash with many expired fields do not each scan them", () => {
  const c = new TtlCache({ now: 0, sweepBudget: 0 });
  for (let i = 0; i < 1000; i++) c.hset("h", `f${i}`, i, { ttl: 5 });
  c.hset("h", "live", "L"); // last in insertion order
  c.tick(10);
  // Count full scans of the hash's fields (Map iteration) instead of timing.
  const values = Map.prototype.values;
  let scans = 0;
  Map.prototype.values = function () {
    scans++;
    return values.call(this);
  };
  try {
    for (let i = 0; i < 1000; i++) {
      assert.equal(c.hget("h", "live"), "L");
      assert.equal(c.has("h"), true);
      assert.equal(c.hhas("h", "live"), true);
    }
  } finally {
    Map.prototype.values = values;
  }
  assert.ok(scans <= 2, `${scans} scans of the fields for 3000 accesses`);
  // When that field goes, the hash goes (no stale witness).
  c.hdel("h", "live");
  assert.equal(c.has("h"), false);
  assert.equal(c.hget("h", "live"), undefined);
});
