// A walk of the whole cache (iteration, snapshot()) removes the expired
// entries, as purge() does: iteration first, snapshot() once its bytes are
// written. API.md: "no operation's cost grows with
// dead entries it does not remove". It stepped over them on every call (a
// probe: keys().next() 27 ms a call, snapshot() 29 ms, with 1M expired and
// a default sweepBudget, whose ticks had not reached them yet).
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

/** A cache at 10 holding `dead` expired entries (a tick removed 1000) and "live". */
function withDead(dead, opts = {}) {
  const gone = [];
  const c = new TtlCache({ now: 0, dispose: (v, k, r, f) => gone.push([k, r, f]), ...opts });
  for (let i = 0; i < dead; i++) c.set(`d${i}`, i, { ttl: 5 });
  c.set("live", "L");
  c.tick(10);
  return { c, gone };
}

for (const [what, walk] of [
  ["keys()", (c) => c.keys().next()],
  ["values()", (c) => c.values().next()],
  ["entries()", (c) => c.entries().next()],
  ["for...of", (c) => {
    for (const e of c) return e;
  }],
  ["forEach", (c) => c.forEach(() => {})],
  ["snapshot()", (c) => c.snapshot()],
]) {
  test(`${what} removes the expired entries it would otherwise step over, once`, () => {
    const { c, gone } = withDead(5000);
    assert.equal(c.size, 4001, "one tick removed its budget");
    const before = gone.length;
    walk(c);
    assert.equal(c.size, 1, "only the live entry is held");
    assert.equal(gone.length - before, 4000);
    assert.ok(gone.slice(before).every(([k, r]) => k.startsWith("d") && r === "expired"));
    assert.equal(c.stats().expired, 5000);
    walk(c);
    assert.equal(gone.length - before, 4000, "nothing left to remove");
    assert.deepEqual([...c.keys()], ["live"]);
  });
}

test("snapshot() removes a hash's expired fields, once", () => {
  const c = new TtlCache({ now: 0 });
  for (let i = 0; i < 3000; i++) c.hset("h", `f${i}`, i, { ttl: 5 });
  c.hset("h", "keep", 1);
  c.tick(10);
  assert.ok(c.stats().entries > 1000, "the tick left fields held");
  const r = TtlCache.restore(c.snapshot(), { now: 10 });
  assert.equal(c.stats().entries, 1);
  assert.deepEqual([...r.hgetall("h")], [["keep", 1]]);
});

test("with sweepBudget 0 a walk steps over the expired entries and leaves them", () => {
  const { c, gone } = withDead(100, { sweepBudget: 0 });
  assert.deepEqual([...c.keys()], ["live"]);
  assert.equal(c.size, 101);
  assert.equal(gone.length, 0);
});

test("a dispose run by the walk's purge may write to the cache: iteration sees it, a snapshot is the cache as it was", () => {
  const make = () => {
    let c;
    let armed = false; // (not by the tick's own removal)
    c = new TtlCache({
      now: 0,
      sweepBudget: 1,
      dispose: (v, k, r) => {
        if (armed && r === "expired") c.set("fromDispose", 1);
      },
    });
    for (let i = 0; i < 3; i++) c.set(`d${i}`, i, { ttl: 5 });
    c.set("live", "L");
    c.tick(10);
    armed = true;
    return c;
  };
  assert.deepEqual([...make().keys()].sort(), ["fromDispose", "live"]);
  const c = make();
  const r = TtlCache.restore(c.snapshot(), { now: 10 });
  assert.deepEqual([...r.keys()], ["live"]);
  assert.deepEqual([...c.keys()].sort(), ["fromDispose", "live"]);
});

// A probe of the walk's purge: snapshot() purged first, so one that threw
// (a value with no data form) had already removed and disposed the expired
// entries, and a dispose that freed the cache made it return an empty
// snapshot, the live entry lost.
test("a snapshot() that throws changes nothing; one whose purge frees the cache still returns the cache as it was", () => {
  const gone = [];
  const c = new TtlCache({ now: 0, sweepBudget: 1, dispose: (v, k) => gone.push(k) });
  for (let i = 0; i < 4; i++) c.set(`d${i}`, i, { ttl: 5 });
  c.set("fn", () => 1);
  c.tick(10);
  assert.equal(c.size, 4, "the tick removed one");
  gone.length = 0;
  assert.throws(() => c.snapshot(), TypeError);
  assert.equal(c.size, 4);
  assert.deepEqual(gone, []);
  assert.equal(c.stats().expired, 1);

  let f;
  let armed = false;
  f = new TtlCache({ now: 0, sweepBudget: 1, dispose: () => armed && f.free() });
  for (let i = 0; i < 3; i++) f.set(`d${i}`, i, { ttl: 5 });
  f.set("live", "L");
  f.tick(10);
  armed = true;
  const bytes = f.snapshot();
  assert.throws(() => f.keys(), /freed/);
  assert.deepEqual([...TtlCache.restore(bytes, { now: 10 })], [["live", "L"]]);
});

test("a dispose that throws during the walk's purge reaches the caller after the state is complete", () => {
  const err = new Error("boom");
  const c = new TtlCache({
    now: 0,
    sweepBudget: 1,
    dispose: () => {
      throw err;
    },
  });
  c.set("a", 1, { ttl: 5 });
  c.set("b", 2, { ttl: 5 });
  c.set("c", 3);
  assert.throws(() => c.tick(10), (e) => e === err, "the tick's one removal");
  assert.equal(c.size, 2);
  assert.throws(() => c.keys(), (e) => e === err);
  assert.equal(c.size, 1);
  assert.deepEqual([...c.keys()], ["c"]);
});

test("a value getter that frees the cache during snapshot(): the bytes are still the cache as it was", () => {
  const c = new TtlCache({ now: 0 });
  c.set("a", {
    get x() {
      c.free();
      return 1;
    },
  });
  c.set("b", 2);
  const bytes = c.snapshot();
  assert.throws(() => c.size, /freed/);
  assert.deepEqual([...TtlCache.restore(bytes, { now: 0 })], [["a", { x: 1 }], ["b", 2]]);
});

// Not a walk, but the same probe round: nextExpiry() gave an entry in grace
// its past deadline (100, again and again with the clock at 576), so a host
// ticking at it never reached the grace's end and its dispose.
test("nextExpiry() of an entry in grace is its grace's end: a host ticking there reaches it", () => {
  const gone = [];
  const c = new TtlCache({ now: 0, ttl: 100, grace: 500, dispose: (v, k, r) => gone.push(r) });
  c.set("k", 1);
  for (let i = 0; i < 64 && gone.length === 0; i++) {
    const t = c.nextExpiry();
    assert.ok(t <= 600, `never late: ${t}`);
    c.tick(Math.max(t, c.now));
  }
  assert.deepEqual(gone, ["expired"]);
  assert.equal(c.now, 600);
});
