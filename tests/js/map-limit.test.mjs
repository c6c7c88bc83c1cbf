// V8's Map holds at most 2^24 entries (16,777,216 in Node 20): past that,
// adding a key throws RangeError ("Map maximum size exceeded"). An unbounded
// cache reaches it before its wasm memory runs out (about 33 bytes a slot),
// so it is the exhaustion a JS user meets first. The failing write must
// change nothing: no entry the key index does not know about, no queued
// slot, no miscounted size. Filling 16.7M keys takes a minute and 1.5 GB, so
// the limit is simulated: Map.prototype.set refuses a chosen new key, as V8
// refuses any new key at the limit (an existing key is still updated).
// (Writes that go through the engine first, at capacity or with expireAt,
// keepTtl or sizeOf, can still evict or index before the Map refuses: not
// covered here.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

const realSet = Map.prototype.set;
let refused = null;
Map.prototype.set = function (k, v) {
  if (k === refused && !this.has(k)) throw new RangeError("Map maximum size exceeded");
  return realSet.call(this, k, v);
};

/** Tries set(key) with the Map refusing `key`; checks the throw and that nothing changed. */
function refusedWrite(c, key, opts) {
  const size = c.size;
  const entries = c.stats().entries;
  refused = key;
  try {
    assert.throws(() => c.set(key, "v", opts), RangeError);
  } finally {
    refused = null;
  }
  assert.equal(c.has(key), false);
  assert.equal(c.get(key), undefined);
  assert.equal(c.size, size);
  assert.equal(c.stats().entries, entries);
  assert.ok(![...c.keys()].includes(key));
}

/** Size, the engine's count and iteration agree, also after a tick and a purge. */
function consistent(c) {
  const keys = [...c.keys()];
  assert.equal(keys.length, c.size);
  assert.equal(c.stats().entries, c.size);
  c.purge();
  c.tick(c.now);
  assert.equal([...c.keys()].length, c.size);
  assert.equal(c.stats().entries, c.size);
}

test("a set the key Map refuses leaves the cache as it was (the write done on the JS side)", () => {
  const c = new TtlCache({ now: 0, ttl: 1000 });
  for (let i = 0; i < 100; i++) c.set(`k${i}`, i);
  refusedWrite(c, "new");
  refusedWrite(c, "new2", { ttl: 50 });
  consistent(c);
  // Once the Map takes keys again, everything works and counts right.
  c.set("new", 1);
  assert.equal(c.get("new"), 1);
  assert.equal(c.size, 101);
  consistent(c);
  // Nothing phantom expires or is evicted later: every key still maps to its value.
  c.tick(999);
  for (let i = 0; i < 100; i++) assert.equal(c.get(`k${i}`), i);
  c.tick(1000);
  assert.equal(c.size, 0);
  assert.equal(c.stats().entries, 0);
});

test("a returning key the Map refuses: its ghost is gone, nothing else changed, evictions go on", () => {
  const disposed = [];
  const c = new TtlCache({ now: 0, ttl: 1000, maxEntries: 4, dispose: (v, k, why) => disposed.push([k, why]) });
  for (let i = 0; i < 6; i++) c.set(`k${i}`, i); // k0, k1 evicted: ghosts
  assert.deepEqual(disposed.map(([k]) => k), ["k0", "k1"]);
  c.delete("k5"); // room: the returning key is written on the JS side
  refusedWrite(c, "k0");
  consistent(c);
  // The ghost bookkeeping still adds up: many evictions later (each trims
  // the ghosts to the cap), the cache holds its bound and every key works.
  for (let i = 6; i < 2000; i++) c.set(`k${i}`, i);
  assert.equal(c.size, 4);
  for (let i = 1996; i < 2000; i++) assert.equal(c.get(`k${i}`), i);
  c.set("k0", 0);
  assert.equal(c.get("k0"), 0);
  consistent(c);
});
