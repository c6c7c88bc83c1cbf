// Calls that remove more than the removal log holds (LOG_CHUNK records): the
// engine stops when its log is full, the host replays it and makes the call
// again until it is done (protocol.rs, "The removal log"). To the user each
// is still one call: the same result, every removal once, and no `dispose`
// before the call has finished (each dispose below checks the cache's state).
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

const N = 10_000; // well past LOG_CHUNK (4096) records

/** A cache whose dispose records [key, field, reason] and the size it saw. */
function cache(opts) {
  const seen = [];
  const c = new TtlCache({
    now: 0,
    ...opts,
    dispose: (v, key, reason, field) => seen.push([key, field, reason, c.size]),
  });
  return [c, seen];
}

test("purge and tick remove every expired entry across chunks, dispose after the last", () => {
  const [c, seen] = cache({ sweepBudget: 0 });
  for (let i = 0; i < N; i++) c.set(`k${i}`, i, { ttl: 10 });
  c.set("live", 1);
  c.tick(20);
  assert.equal(c.purge(), N);
  assert.equal(seen.length, N);
  assert.ok(seen.every(([, , r, size]) => r === "expired" && size === 1), "a dispose ran before purge finished");
  assert.equal(new Set(seen.map(([k]) => k)).size, N, "each key disposed once");
  assert.equal(c.stats().expired, N);
  assert.equal(c.get("live"), 1);

  // A budget past one chunk is spent whole, and no more than it.
  const [t] = cache({ sweepBudget: 6000 });
  for (let i = 0; i < N; i++) t.set(`k${i}`, i, { ttl: 10 });
  assert.equal(t.tick(20), 6000);
  assert.equal(t.tick(20), N - 6000);
  assert.equal(t.size, 0);
  assert.equal(t.stats().ticks, 2);
});

test("clear of more slots than a chunk: everything once, dispose after the last", () => {
  const [c, seen] = cache({});
  for (let i = 0; i < N; i++) c.set(`k${i}`, i);
  for (let i = 0; i < N; i++) c.hset("h", `f${i}`, i);
  c.clear();
  assert.equal(seen.length, 2 * N);
  assert.ok(seen.every(([, , r, size]) => r === "cleared" && size === 0), "a dispose ran before clear finished");
  assert.equal(c.size, 0);
  assert.equal(c.stats().entries, 0);
  assert.equal(c.hlen("h"), 0);
  c.hset("h", "again", 1);
  c.set("k1", 2);
  assert.deepEqual([c.size, c.hget("h", "again"), c.get("k1")], [2, 1, 2]);
});

test("delete, expire and lazy expiry of a hash with more fields than a chunk", () => {
  for (const how of ["delete", "expire", "found"]) {
    const [c, seen] = cache({ sweepBudget: 0 });
    for (let i = 0; i < N; i++) c.hset("h", `f${i}`, i, how === "found" ? { ttl: 10 } : undefined);
    c.set("other", 1);
    if (how === "delete") assert.equal(c.delete("h"), true);
    if (how === "expire") assert.equal(c.expire("h", 0), true);
    if (how === "found") {
      c.tick(20); // sweeps nothing (budget 0): the read finds it expired
      assert.equal(c.get("h"), undefined);
    }
    assert.equal(seen.length, N, how);
    assert.ok(seen.every(([k, , , size]) => k === "h" && size === 1), `${how}: a dispose ran early`);
    assert.equal(new Set(seen.map(([, f]) => f)).size, N, `${how}: each field once`);
    assert.deepEqual([c.size, c.hlen("h"), c.stats().entries], [1, 0, 1], how);
  }
});

test("a write that evicts more than a chunk writes once, after every eviction", () => {
  const [c, seen] = cache({ maxBytes: N, sizeOf: (v) => v });
  for (let i = 0; i < N; i++) c.set(`k${i}`, 1);
  c.set("big", N);
  assert.equal(seen.length, N);
  assert.ok(seen.every(([, , r]) => r === "evicted"));
  assert.ok(seen.every(([, , , size]) => size === 1), "a dispose ran before the write finished");
  assert.deepEqual([c.size, c.get("big"), c.stats().bytes, c.stats().evicted], [1, N, N, N]);

  // Evicting one hash with more fields than a chunk, for a new hash's field:
  // the new hash is made once, and the evicted hash goes whole.
  const [h, hseen] = cache({ maxEntries: N });
  for (let i = 0; i < N; i++) h.hset("old", `f${i}`, i);
  assert.equal(h.hset("new", "f", 1), true);
  assert.equal(hseen.length, N);
  assert.ok(hseen.every(([k, , r, size]) => k === "old" && r === "evicted" && size === 1));
  assert.deepEqual([h.size, h.hlen("old"), h.hlen("new"), h.hget("new", "f"), h.stats().entries], [1, 0, 1, 1, 1]);
  assert.deepEqual([...h.keys()], ["new"]);
  // The same for a plain write.
  const [p, pseen] = cache({ maxEntries: N });
  for (let i = 0; i < N; i++) p.hset("old", `f${i}`, i);
  p.set("k", 1);
  assert.equal(pseen.length, N);
  assert.deepEqual([p.size, p.get("k"), [...p.keys()]], [1, 1, ["k"]]);
});

test("a write to a dead hash with more fields than a chunk replaces it once", () => {
  for (const plain of [false, true]) {
    const [c, seen] = cache({ sweepBudget: 0 });
    for (let i = 0; i < N; i++) c.hset("h", `f${i}`, i, { ttl: 10 });
    c.tick(20);
    if (plain) c.set("h", "v");
    else assert.equal(c.hset("h", "f", "v"), true);
    assert.equal(seen.length, N);
    assert.ok(seen.every(([k, , r, size]) => k === "h" && r === "expired" && size === 1));
    assert.equal(plain ? c.get("h") : c.hget("h", "f"), "v");
    assert.deepEqual([c.size, c.stats().entries, plain || c.hlen("h")], [1, 1, plain || 1]);
  }
});
