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
  // A field that fits alone but not beside its hash's live fields: the
  // message said its own size could never fit (a probe).
  assert.throws(
    () => b.hset("h", "more", 4),
    (e) => e instanceof RangeError && e.message === "field: the hash would hold more bytes than maxBytes 10",
  );
  assert.throws(() => b.hset("h", "huge", 11), (e) => e instanceof RangeError && /^sizeOf: size 11 can never fit in maxBytes 10/.test(e.message));
  assert.equal(b.stats().bytes, 10);
});

/** Full scans of a hash's fields (Map iteration) while `run` runs: counted, not timed. */
function scansOf(run) {
  const values = Map.prototype.values;
  let scans = 0;
  Map.prototype.values = function () {
    scans++;
    return values.call(this);
  };
  try {
    run();
  } finally {
    Map.prototype.values = values;
  }
  return scans;
}

test("accesses to a hash with many expired fields do not each scan them", () => {
  const c = new TtlCache({ now: 0, sweepBudget: 0 });
  for (let i = 0; i < 1000; i++) c.hset("h", `f${i}`, i, { ttl: 5 });
  c.hset("h", "live", "L"); // last in insertion order
  c.tick(10);
  const scans = scansOf(() => {
    for (let i = 0; i < 1000; i++) {
      assert.equal(c.hget("h", "live"), "L");
      assert.equal(c.has("h"), true);
      assert.equal(c.hhas("h", "live"), true);
    }
  });
  assert.ok(scans <= 2, `${scans} scans of the fields for 3000 accesses`);
  // When that field goes, the hash goes (no stale witness).
  c.hdel("h", "live");
  assert.equal(c.has("h"), false);
  assert.equal(c.hget("h", "live"), undefined);
});

test("a hash whose fields all expired is scanned once, not on every read", () => {
  const c = new TtlCache({ now: 0, sweepBudget: 0 });
  for (let i = 0; i < 1000; i++) c.hset("h", `f${i}`, i, { ttl: 5 });
  c.tick(10);
  const scans = scansOf(() => {
    for (let i = 0; i < 1000; i++) {
      assert.equal(c.has("h"), false);
      assert.equal(c.ttl("h"), undefined);
      assert.equal(c.hhas("h", "f1"), false);
    }
  });
  assert.ok(scans <= 1, `${scans} scans of the fields for 3000 reads of a dead hash`);
  // A write replaces the dead hash whole.
  assert.equal(c.hset("h", "new", 1), true);
  assert.equal(c.has("h"), true);
  assert.deepEqual([...c.hgetall("h")], [["new", 1]]);
});

test("an hset of a live field behind expired ones removes those it walks past", () => {
  const log = [];
  const c = new TtlCache({ now: 0, dispose: (v, k, r, f) => log.push([f, r]) });
  c.hset("h", "live", 0); // last in the engine's field list
  for (let i = 0; i < 2000; i++) c.hset("h", `f${i}`, i, { ttl: 5 });
  c.tick(10); // a budget of 1000: 1000 left unswept
  assert.equal(c.stats().entries, 1001);
  log.length = 0;
  c.hset("h", "live", 1);
  assert.equal(c.stats().entries, 1, "the write took the expired fields ahead of the live one");
  assert.equal(log.filter(([, r]) => r === "expired").length, 1000);
  assert.equal(c.hget("h", "live"), 1);
});

test("hlen, hgetall and iteration remove the expired fields they pass, so no later call passes them again", () => {
  for (const [what, read] of [
    ["hlen", (c) => assert.equal(c.hlen("h"), 2)],
    ["hgetall", (c) => assert.deepEqual([...c.hgetall("h")].sort(), [["a", "A"], ["b", "B"]])],
    ["values()", (c) => assert.deepEqual([...c.values()].map((m) => [...m].sort()), [[["a", "A"], ["b", "B"]]])],
    ["entries()", (c) => assert.deepEqual([...c.entries()].map(([k, m]) => [k, m.size]), [["h", 2]])],
  ]) {
    const log = [];
    // sweepBudget 0: nothing else removes them.
    const c = new TtlCache({ now: 0, sweepBudget: 0, dispose: (v, k, r, f) => log.push([k, f, r]) });
    for (let i = 0; i < 300; i++) c.hset("h", `old${i}`, i, { ttl: 5 });
    c.hset("h", "a", "A");
    c.hset("h", "b", "B");
    c.tick(10);
    assert.equal(c.stats().entries, 302, what);
    read(c);
    assert.equal(c.stats().entries, 2, `${what}: the expired fields are gone`);
    assert.equal(log.length, 300, what);
    assert.ok(log.every(([k, f, r]) => k === "h" && f.startsWith("old") && r === "expired"), what);
    // The next calls see only the live fields, and agree.
    read(c);
    assert.equal(c.hlen("h"), 2);
    assert.equal(log.length, 300, `${what}: nothing more removed`);
  }
});

test("a dispose that hlen or hgetall runs may change the hash: they answer for the hash as it then is", () => {
  const c = new TtlCache({
    now: 0,
    sweepBudget: 0,
    dispose: (v, k, r, f) => {
      if (f === "old") c.hset("h", "added", 3);
    },
  });
  c.hset("h", "old", 1, { ttl: 5 });
  c.hset("h", "a", 2);
  c.tick(10);
  assert.equal(c.hlen("h"), 2, "a and the field dispose added");
  c.hset("h", "old", 1, { ttl: 5 });
  c.tick(20);
  assert.deepEqual([...c.hgetall("h")].sort(), [["a", 2], ["added", 3]]);
  // A dispose that replaces the hash by a plain value: hgetall is then WRONGTYPE.
  const d = new TtlCache({
    now: 0,
    sweepBudget: 0,
    dispose: (v, k, r, f) => {
      if (f === "old") (d.delete("h"), d.set("h", "plain"));
    },
  });
  d.hset("h", "old", 1, { ttl: 5 });
  d.hset("h", "a", 2);
  d.tick(10);
  assert.throws(() => d.hgetall("h"), TypeError);
  assert.equal(d.get("h"), "plain");
});

test("an expired field removed with its hash is disposed (and counted) as expired, as a plain entry found expired is", () => {
  for (const how of ["delete", "expire", "evict"]) {
    const log = [];
    const c = new TtlCache({ now: 0, sweepBudget: 0, maxEntries: 3, dispose: (v, k, r, f) => log.push([k, f, r]) });
    c.hset("h", "live", 1);
    c.hset("h", "dead", 2, { ttl: 10 });
    c.set("p", 3, { ttl: 10 });
    c.tick(10);
    if (how === "delete") assert.equal(c.delete("h"), true);
    else if (how === "expire") assert.equal(c.expire("h", 0), true);
    else {
      c.delete("p");
      for (const k of ["a", "b"]) (c.set(k, 0), c.get(k));
      c.set("c", 0); // "h", never read, goes
    }
    c.delete("p");
    const want = how === "evict" ? "evicted" : "deleted";
    assert.deepEqual(log.filter(([k]) => k === "h").sort(), [["h", "dead", "expired"], ["h", "live", want]], how);
    assert.deepEqual(log.find(([k]) => k === "p"), ["p", undefined, "expired"], how);
    assert.equal(c.stats().expired, 2, how);
  }
});

test("a dispose that hgetall runs and that deletes the hash: hgetall returns an empty Map, no deleted field's value", () => {
  const disposed = new Set();
  const c = new TtlCache({
    now: 0,
    sweepBudget: 0,
    dispose: (v, k, r, f) => {
      disposed.add(v);
      if (f === "old") c.hdel("h", "live"); // the hash's last live field: the key goes
    },
  });
  const live = { v: "live" };
  c.hset("h", "old", { v: "old" }, { ttl: 5 });
  c.hset("h", "live", live);
  c.tick(10);
  const m = c.hgetall("h");
  assert.ok(disposed.has(live));
  assert.deepEqual([...m], [], "it returned the deleted field's value");
  assert.equal(c.has("h"), false);
});
