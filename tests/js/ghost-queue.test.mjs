// Evicted keys that come back: each return leaves the ghost queue a stale
// (key, seq) pair. With a small maxEntries and keys cycling through it, the
// ghost count never passes its cap, so only a compaction bounds the queue.
import { test } from "node:test";
import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { TtlCache } from "lapse";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

test("keys cycling through a full cache do not grow the JS heap", () => {
  const c = new TtlCache({ now: 0, maxEntries: 2 });
  const keys = ["a", "b", "c"];
  for (let i = 0; i < 30_000; i++) c.set(keys[i % 3], i);
  const before = heap();
  // Without the compaction this leaks about 5.6 MB (two array slots per set).
  for (let i = 0; i < 1_000_000; i++) c.set(keys[i % 3], i);
  const grown = heap() - before;
  assert.ok(grown < 2_000_000, `heap grew ${grown} B over 1M sets`);
  assert.equal(c.size, 2);
  assert.ok(c.stats().evicted > 500_000, "keys were evicted and came back (else this checks nothing)");
});
