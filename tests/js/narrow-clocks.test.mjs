// Narrow clocks (issue 16 point 2): a cache whose times are whole milliseconds
// within about 49.7 days of its construction keeps each slot's [deadline, last
// access] as two u32s (8 bytes), and widens them to f64s for good at the first
// time that does not fit (a fraction, a deadline further away, a clock run
// past the range). Widening is invisible: every time reads back as it was,
// the JS side (which reads and writes clocks on get/set without a call) learns
// of it before its next read, and snapshots are the same bytes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

const NARROW = 4294967294; // the last millisecond after the base narrow clocks hold

/** Wasm memory the engine's structures hold (8 more bytes a slot once wide). */
const engineBytes = (c) => c.stats().engineBytes;

/** The deadline of each key (Infinity: none; undefined: gone), and its value. */
const state = (c, keys) => keys.map((k) => [k, c.ttl(k) + c.now, k === "h" ? c.hget(k, "f") : c.peek(k)]);

test("whole milliseconds stay narrow; the first time that does not fit widens them, and every time reads back as it was", () => {
  // [how the clocks widen, the keys it changes, whether a snapshot is unchanged after deleting "w"]
  const cases = [
    ["a fractional deadline (a write the engine does)", (c) => c.set("w", 0, { ttl: 0.5 }), [], true],
    ["a fractional deadline on an overwrite", (c) => c.set("a", 9, { ttl: 0.5 }), ["a"], false],
    // Later than the old one: an overwrite this side makes itself, if the
    // clocks can hold it.
    ["a later fractional deadline on an overwrite", (c) => c.set("b", 7, { ttl: 9000.5 }), ["b"], false],
    ["a deadline past the range", (c) => c.set("w", 0, { ttl: NARROW - 499 }), [], true],
    ["a fractional expireAt", (c) => c.set("w", 0, { expireAt: 2000.25 }), [], true],
    ["a fractional expire", (c) => c.expire("b", 0.5), ["b"], false],
    ["a fractional field deadline", (c) => c.hset("h", "g", 0, { ttl: 0.5 }), [], false],
    ["a fractional clock", (c) => c.tick(1500.5), [], false],
  ];
  for (const [what, widen, changed, sameBytes] of cases) {
    const c = new TtlCache({ now: 1000, ttl: 5000, idle: 3000 });
    c.set("a", 1);
    c.set("b", 2, { ttl: NARROW - 500 }); // the last deadline narrow clocks from 1000 hold
    c.set("c", 3, { idle: Infinity, ttl: Infinity });
    c.hset("h", "f", 4, { ttl: 10_000 });
    c.tick(1500);
    assert.equal(c.get("a"), 1); // last access 1500 (written on this side)
    const bytes = engineBytes(c);
    const keys = ["a", "b", "c", "h"];
    const before = state(c, keys);
    const snap = c.snapshot();
    widen(c);
    assert.ok(engineBytes(c) > bytes, `${what}: the clocks widened`);
    c.delete("w");
    const kept = (xs) => xs.filter(([k]) => !changed.includes(k));
    assert.deepEqual(kept(state(c, keys)), kept(before), what);
    if (sameBytes) assert.deepEqual(c.snapshot(), snap, what);
    // This side reads and writes the wide clocks from here on.
    assert.equal(c.get("c"), 3);
    assert.equal(c.ttl("c"), Infinity);
    c.set("c", 5, { idle: 7 });
    assert.equal(c.ttl("c"), 7);
  }
});

test("narrow at the edge: a deadline 2^32 - 2 ms after the base fits, one more widens", () => {
  const c = new TtlCache({ now: 0 });
  c.set("a", 1, { ttl: NARROW });
  const narrow = engineBytes(c);
  c.set("b", 1, { ttl: NARROW });
  assert.equal(engineBytes(c), narrow, "still narrow");
  c.set("c", 1, { ttl: NARROW + 1 });
  assert.ok(engineBytes(c) > narrow, "widened");
  assert.deepEqual([c.ttl("a"), c.ttl("b"), c.ttl("c")], [NARROW, NARROW, NARROW + 1]);
  c.tick(NARROW - 1);
  assert.deepEqual([c.get("a"), c.get("c")], [1, 1]);
  assert.equal(c.tick(NARROW), 2);
  assert.deepEqual([c.has("a"), c.has("b"), c.get("c")], [false, false, 1]);
  assert.equal(c.tick(NARROW + 1), 1);
});

test("a followed clock that turns fractional: the cache widens before this side stores the reading", async () => {
  let t = 1_700_000_000_000;
  const c = new TtlCache({ clock: () => t, idle: 1000, ttl: 10_000 });
  c.set("a", 1);
  c.set("b", 2);
  await null; // a new run: the next method reads the clock again
  t += 1;
  // A moved clock makes the engine link the inserts queued on this side and
  // reclaim what they owe: a call. After it, one more move makes none...
  assert.equal(c.get("b"), 2);
  const narrow = engineBytes(c);
  await null;
  t += 100.25;
  // ...unless the reading does not fit the narrow clocks: get writes the
  // last access on this side, so the clocks must be wide by then, or the
  // idle window would restart 0.25 ms early.
  assert.equal(c.get("a"), 1);
  assert.ok(engineBytes(c) > narrow, "widened");
  assert.equal(c.ttl("a"), 1000, "a's idle window restarted at the fractional reading");
  assert.equal(c.ttl("b"), 1000 - 100.25);
  c.set("c", 3); // an insert on this side, at the fractional reading
  assert.equal(c.ttl("c"), 1000);
  await null;
  t += 1000;
  assert.deepEqual([c.get("a"), c.get("b"), c.get("c")], [undefined, undefined, undefined]);
});

test("a clock run past the narrow range widens; entries written before keep their deadlines", async () => {
  let t = 0;
  const c = new TtlCache({ clock: () => t });
  c.set("a", 1, { ttl: NARROW });
  c.set("b", 2, { idle: 10 });
  const narrow = engineBytes(c);
  await null;
  t = NARROW + 5; // past the range, no fraction: b's idle window ran out long ago
  assert.equal(c.get("b"), undefined);
  assert.ok(engineBytes(c) > narrow, "widened");
  assert.equal(c.ttl("a"), undefined, "a's deadline passed too");
  c.set("c", 3, { ttl: 1 });
  assert.equal(c.ttl("c"), 1);
});

test("an overwrite that moves a deadline earlier still reschedules it, with no absolute deadline and idle windows past the range", () => {
  // "No deadline" is a narrow word of its own, not a time: reading it as
  // the last time narrow clocks hold would let this earlier deadline be
  // written on this side, which leaves the sweep to the old, later one.
  const c = new TtlCache({ now: 0 });
  c.set("k", 1, { idle: 2 * NARROW });
  c.set("k", 2, { idle: NARROW + 10 });
  assert.equal(c.tick(NARROW), 0);
  assert.equal(c.peek("k"), 2);
  assert.equal(c.tick(NARROW + 10), 1, "swept at its new deadline");
});

test("a deadline a fraction of an ulp past a whole millisecond is not rounded down to it", () => {
  // The host's check of what narrow clocks hold once added 1 before testing
  // for a u32, and 1e-20 + 1 is 1: such a deadline was stored as the whole
  // millisecond below it, dead at once (issue 16's narrow clocks).
  const a = new TtlCache({ now: 0 });
  a.set("k", 1, { ttl: 1e-20 });
  assert.equal(a.has("k"), true, "1e-20 > 0: live at 0");
  assert.equal(a.ttl("k"), 1e-20);
  const b = new TtlCache({ now: 0, ttl: Number.MIN_VALUE });
  b.set("k", 1);
  b.set("k", 2); // an overwrite takes the same check
  assert.equal(b.get("k"), 2);
  // 3 + 1 ulp: x + 1 rounds to 4 (ties to even).
  const c = new TtlCache({ now: 0 });
  c.set("k", 1, { ttl: 3.0000000000000004 });
  c.tick(3);
  assert.equal(c.has("k"), true, "live at 3, its deadline is after 3");
  c.tick(4);
  assert.equal(c.has("k"), false);
});
