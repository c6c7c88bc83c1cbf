// Coming from lru-cache: every option name lru-cache (the devDependency, v11)
// reads, passed to lapse, either is a lapse option too or fails with a
// TypeError that names it and says what to use instead ("use …") or that
// lapse has none ("none…"). The names are not typed out here: they are the
// properties lru-cache's own constructor and set() read from a Proxy, so a
// new lru-cache option without a hint fails this test.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LRUCache } from "lru-cache";
import { TtlCache } from "lapse";

/** The string property names `fn` reads from the options object it is given. */
function optionNamesRead(fn) {
  const seen = new Set();
  const probe = new Proxy({}, {
    get(_, k) {
      if (typeof k === "string") seen.add(k);
      return undefined;
    },
  });
  fn(probe);
  return [...seen];
}

// An options object read by its constructor before it checks that one of
// max/maxSize/ttl is set, so the probe sees every name even though it throws.
const LRU_CTOR = optionNamesRead((o) => {
  try {
    new LRUCache(o);
  } catch {}
});
// Set twice on a size-tracking ttl cache: the second set (an update) reads
// the update-only options (noUpdateTTL) and the size ones.
const LRU_SET = optionNamesRead((o) => {
  const c = new LRUCache({ max: 10, ttl: 1000, maxSize: 100, sizeCalculation: () => 1, dispose() {} });
  c.set("a", 1, o);
  c.set("a", 2, o);
});

// Same name in both, accepted by lapse (the README states how each differs).
const SHARED_CTOR = ["ttl", "dispose"];
const SHARED_SET = ["ttl"];

// Where lapse has an equivalent, the hint must name it.
const EQUIVALENT_CTOR = {
  max: "maxEntries",
  maxSize: "maxBytes",
  sizeCalculation: "sizeOf",
  updateAgeOnGet: "idle",
  disposeAfter: "dispose",
  noUpdateTTL: "keepTtl",
  fetchMethod: "fetch(key, loader)",
  allowStaleOnFetchRejection: "grace",
  perf: "clock",
};
const EQUIVALENT_SET = { noUpdateTTL: "keepTtl" };

function rejection(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return null;
}

function checkHints(names, shared, equivalents, call, arg) {
  const accepted = [];
  for (const name of names) {
    const e = rejection(() => call({ [name]: undefined }));
    if (e === null) {
      accepted.push(name);
      continue;
    }
    assert.ok(e instanceof TypeError, `${name}: ${e}`);
    assert.ok(e.message.startsWith(`${arg}: unknown option "${name}" (an lru-cache option): `), `${name}: ${e.message}`);
    const hint = e.message.slice(e.message.indexOf("): ") + 3);
    const want = equivalents[name];
    if (want !== undefined) assert.ok(hint.startsWith("use ") && hint.includes(want), `${name}: the hint names ${want}: ${e.message}`);
    else assert.match(hint, /^(use \S|none)/, `${name}: the hint says what to use, or that there is none: ${e.message}`);
  }
  assert.deepEqual(accepted.sort(), [...shared].sort(), "lapse accepts exactly the lru-cache names it shares");
}

test("lru-cache's option list was read from lru-cache itself", () => {
  // A probe that saw nothing would make the tests below vacuous.
  for (const n of ["max", "maxSize", "ttlAutopurge", "updateAgeOnGet", "allowStale", "fetchMethod", "perf"]) {
    assert.ok(LRU_CTOR.includes(n), `lru-cache's constructor reads ${n}`);
  }
  for (const n of ["ttl", "size", "sizeCalculation", "noDisposeOnSet", "noUpdateTTL", "start", "status"]) {
    assert.ok(LRU_SET.includes(n), `lru-cache's set reads ${n}`);
  }
});

test("every lru-cache constructor option lapse lacks fails with a hint", () => {
  checkHints(LRU_CTOR, SHARED_CTOR, EQUIVALENT_CTOR, (o) => new TtlCache(o), "options");
});

test("every lru-cache set() option lapse lacks fails with a hint, for set and hset, changing nothing", () => {
  const c = new TtlCache({ now: 0 });
  c.set("a", 1);
  c.hset("h", "f", 1);
  checkHints(LRU_SET, SHARED_SET, EQUIVALENT_SET, (o) => c.set("a", 2, o), "opts");
  checkHints(LRU_SET, SHARED_SET, EQUIVALENT_SET, (o) => c.hset("h", "f", 2, o), "opts");
  assert.equal(c.get("a"), 2); // only the accepted { ttl: undefined } writes went through
  assert.equal(c.hget("h", "f"), 2);
});

test("a name lru-cache does not know gets no lru-cache hint", () => {
  assert.throws(() => new TtlCache({ maxItems: 1 }), { name: "TypeError", message: 'options: unknown option "maxItems"' });
  assert.throws(() => new TtlCache({ now: 0 }).set("a", 1, { max: 1 }), { name: "TypeError", message: 'opts: unknown option "max"' });
  // A constructor-only lru-cache name given to restore() is not a constructor: no hint there either.
  const bytes = new TtlCache({ now: 0 }).snapshot();
  assert.throws(() => TtlCache.restore(bytes, { max: 1 }), { name: "TypeError", message: 'opts: unknown option "max"' });
});

// The README's "Coming from lru-cache" tables, checked against both libraries
// side by side: if either one changes, the section is out of date.
test("the dispose reasons map as the README says", () => {
  let t = 1_000;
  const lruReasons = [];
  const lru = new LRUCache({ max: 2, ttl: 100, perf: { now: () => t }, ttlResolution: 0, dispose: (v, k, r) => lruReasons.push([k, r]) });
  const ourReasons = [];
  const ours = new TtlCache({ now: t, ttl: 100, maxEntries: 2, sweepBudget: 0, dispose: (v, k, r) => ourReasons.push([k, r]) });
  const both = (fn) => {
    fn(lru);
    fn(ours);
  };
  both((c) => c.set("a", 1));
  both((c) => c.set("a", 2)); // overwrite with another value
  both((c) => c.set("a", 2)); // the same value: no dispose in either
  both((c) => c.set("b", 1));
  both((c) => c.get("a")); // a is the one recently read
  both((c) => c.set("c", 1)); // capacity: b goes
  both((c) => c.delete("c"));
  t += 200;
  ours.tick(t);
  both((c) => c.get("a")); // expired: a read that meets it removes it
  both((c) => c.set("d", 1));
  both((c) => c.clear());
  assert.deepEqual(lruReasons, [["a", "set"], ["b", "evict"], ["c", "delete"], ["a", "expire"], ["d", "delete"]]);
  const map = { set: "replaced", evict: "evicted", delete: "deleted", expire: "expired" };
  const want = lruReasons.map(([k, r]) => [k, map[r]]);
  want[want.length - 1][1] = "cleared"; // clear(): "delete" in lru-cache
  assert.deepEqual(ourReasons, want);
});

test("remaining time, missing values and undefined values differ as the README says", () => {
  let t = 1_000;
  const lru = new LRUCache({ max: 10, ttl: 100, perf: { now: () => t }, ttlResolution: 0 });
  const ours = new TtlCache({ now: t, ttl: 100, sweepBudget: 0 });
  assert.equal(lru.getRemainingTTL("missing"), 0);
  assert.equal(ours.ttl("missing"), undefined);
  lru.set("a", 1);
  ours.set("a", 1);
  t += 100; // exactly ttl after the write
  ours.tick(t);
  assert.equal(lru.has("a"), true);
  assert.equal(ours.has("a"), false);
  t += 50;
  ours.tick(t);
  assert.equal(lru.getRemainingTTL("a"), -50);
  assert.equal(ours.ttl("a"), undefined);
  // set(k, undefined) deletes in lru-cache; lapse rejects it.
  lru.set("b", 1).set("b", undefined);
  assert.equal(lru.has("b"), false);
  assert.throws(() => ours.set("b", undefined), TypeError);
  // ttl: 0 is "no TTL" in lru-cache and a RangeError in lapse.
  assert.equal(new LRUCache({ max: 1, ttl: 0 }).set("x", 1).getRemainingTTL("x"), Infinity);
  assert.throws(() => new TtlCache({ ttl: 0 }), RangeError);
  // A value bigger than the whole size bound: lru-cache drops it and the old value; lapse throws and keeps the old one.
  const lruSized = new LRUCache({ max: 10, maxSize: 5, sizeCalculation: (v) => v.length });
  const ourSized = new TtlCache({ maxBytes: 5, sizeOf: (v) => v.length });
  lruSized.set("k", "xx").set("k", "xxxxxxxx");
  assert.equal(lruSized.has("k"), false);
  ourSized.set("k", "xx");
  assert.throws(() => ourSized.set("k", "xxxxxxxx"), RangeError);
  assert.equal(ourSized.get("k"), "xx");
  // Iteration: lru-cache most recently used first; lapse insertion order.
  const lruOrder = new LRUCache({ max: 10 });
  const ourOrder = new TtlCache({});
  for (const c of [lruOrder, ourOrder]) {
    c.set("x", 1);
    c.set("y", 1);
    c.get("x");
  }
  assert.deepEqual([...lruOrder.keys()], ["x", "y"]);
  assert.deepEqual([...ourOrder.keys()], ["x", "y"]);
  lruOrder.get("y");
  ourOrder.get("y");
  assert.deepEqual([...lruOrder.keys()], ["y", "x"]);
  assert.deepEqual([...ourOrder.keys()], ["x", "y"]);
});
