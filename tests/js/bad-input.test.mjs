// Every public method called with every wrong type and out-of-range value.
// Each call must throw the right class (TypeError for a wrong type,
// RangeError for a value out of range), name the argument in its message,
// leave the cache exactly as it was, and never surface as a wasm trap.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

const NOT_STRINGS = [1, 0, null, undefined, true, {}, [], Symbol("s"), 1n, () => {}, new String("s")];
const NOT_NUMBERS = ["1", null, true, {}, [], 1n, Symbol("n"), () => {}];
const NOT_TIMES = ["2020-01-01", null, true, {}, [], 1n, Symbol("t")];
const BAD_LIFETIMES = [0, -1, -Infinity, NaN];
const BAD_DELAYS = [NaN, Infinity, -Infinity];
const BAD_TIMES = [NaN, Infinity, -Infinity, new Date(NaN)];
const BAD_CONDS = ["nx", "EX", "", 1, null, {}, "NX "];

function fixture() {
  const disposed = [];
  const c = new TtlCache({ now: 1000, ttl: 500, maxEntries: 100, dispose: (v, k, r, f) => disposed.push([k, f, r]) });
  c.set("a", 1);
  c.set("b", { x: 1 }, { idle: 50 });
  c.hset("h", "f", 1, { ttl: 100 });
  c.hset("h", "g", 2);
  c.get("a");
  return { c, disposed };
}

function digest(c) {
  const s = c.stats();
  return JSON.stringify({
    entries: [...c.entries()].map(([k, v]) => [k, v instanceof Map ? [...v] : v]),
    ttl: ["a", "b", "h"].map((k) => c.ttl(k)),
    httl: ["f", "g"].map((f) => c.httl("h", f)),
    now: c.now,
    size: c.size,
    stats: [s.hits, s.misses, s.expired, s.evicted, s.deleted, s.inserted, s.updated, s.entries, s.bytes],
  });
}

function expectThrow(name, call, Class, arg) {
  const { c, disposed } = fixture();
  const before = digest(c);
  let error;
  try {
    call(c);
  } catch (e) {
    error = e;
  }
  assert.ok(error, `${name}: did not throw`);
  assert.ok(!(error instanceof WebAssembly.RuntimeError), `${name}: wasm trap: ${error}`);
  assert.equal(error.constructor, Class, `${name}: ${error.constructor.name} instead of ${Class.name}: ${error.message}`);
  assert.ok(error.message.includes(arg), `${name}: message ${JSON.stringify(error.message)} does not name ${arg}`);
  assert.equal(digest(c), before, `${name}: the cache changed`);
  assert.deepEqual(disposed, [], `${name}: dispose ran`);
  // Still fully usable.
  c.set("after", 1, { ttl: 10 });
  assert.equal(c.get("after"), 1, `${name}: unusable afterwards`);
  c.tick(2000);
  assert.equal(c.get("after"), undefined);
}

const fmt = (v) => (typeof v === "symbol" ? v.toString() : typeof v === "bigint" ? `${v}n` : typeof v === "function" ? "fn" : JSON.stringify(v) ?? String(v));

// [method name, (cache, bad) => call, bad values, class, argument name]
const cases = [];
const keyed = {
  set: (c, k) => c.set(k, 1),
  get: (c, k) => c.get(k),
  peek: (c, k) => c.peek(k),
  has: (c, k) => c.has(k),
  touch: (c, k) => c.touch(k),
  expire: (c, k) => c.expire(k, 10),
  expireAt: (c, k) => c.expireAt(k, 10),
  persist: (c, k) => c.persist(k),
  ttl: (c, k) => c.ttl(k),
  delete: (c, k) => c.delete(k),
  hset: (c, k) => c.hset(k, "f", 1),
  hget: (c, k) => c.hget(k, "f"),
  hhas: (c, k) => c.hhas(k, "f"),
  hdel: (c, k) => c.hdel(k, "f"),
  hlen: (c, k) => c.hlen(k),
  hgetall: (c, k) => c.hgetall(k),
  hexpire: (c, k) => c.hexpire(k, "f", 10),
  hexpireAt: (c, k) => c.hexpireAt(k, "f", 10),
  hpersist: (c, k) => c.hpersist(k, "f"),
  httl: (c, k) => c.httl(k, "f"),
};
for (const [m, call] of Object.entries(keyed)) cases.push([`${m}(key)`, call, NOT_STRINGS, TypeError, "key"]);
const fielded = {
  hset: (c, f) => c.hset("h", f, 1),
  hget: (c, f) => c.hget("h", f),
  hhas: (c, f) => c.hhas("h", f),
  hdel: (c, f) => c.hdel("h", f),
  hexpire: (c, f) => c.hexpire("h", f, 10),
  hexpireAt: (c, f) => c.hexpireAt("h", f, 10),
  hpersist: (c, f) => c.hpersist("h", f),
  httl: (c, f) => c.httl("h", f),
};
for (const [m, call] of Object.entries(fielded)) cases.push([`${m}(field)`, call, NOT_STRINGS, TypeError, "field"]);

cases.push(["set(value undefined)", (c) => c.set("a", undefined), [0], TypeError, "value"]);
cases.push(["hset(value undefined)", (c) => c.hset("h", "f", undefined), [0], TypeError, "value"]);
for (const [m, call] of [
  ["set", (c, o) => c.set("a", 2, o)],
  ["hset", (c, o) => c.hset("h", "f", 2, o)],
]) {
  cases.push([`${m}(opts not an object)`, call, [null, 5, "ttl", true, []], TypeError, "opts"]);
  cases.push([`${m}(unknown option)`, call, [{ ttll: 5 }, { ex: 5 }, { TTL: 1 }], TypeError, "opts"]);
  cases.push([`${m}(ttl type)`, (c, v) => call(c, { ttl: v }), NOT_NUMBERS.filter((v) => v !== null), TypeError, "ttl"]);
  cases.push([`${m}(ttl range)`, (c, v) => call(c, { ttl: v }), BAD_LIFETIMES, RangeError, "ttl"]);
  cases.push([`${m}(idle type)`, (c, v) => call(c, { idle: v }), NOT_NUMBERS.filter((v) => v !== null), TypeError, "idle"]);
  cases.push([`${m}(idle range)`, (c, v) => call(c, { idle: v }), BAD_LIFETIMES, RangeError, "idle"]);
  cases.push([`${m}(expireAt type)`, (c, v) => call(c, { expireAt: v }), NOT_TIMES.filter((v) => v !== null), TypeError, "expireAt"]);
  cases.push([`${m}(expireAt range)`, (c, v) => call(c, { expireAt: v }), BAD_TIMES, RangeError, "expireAt"]);
  cases.push([`${m}(ttl with expireAt)`, (c) => call(c, { ttl: 5, expireAt: 2000 }), [0], TypeError, "expireAt"]);
  cases.push([`${m}(keepTtl type)`, (c, v) => call(c, { keepTtl: v }), [1, "yes", null, {}], TypeError, "keepTtl"]);
  cases.push([`${m}(keepTtl with ttl)`, (c) => call(c, { keepTtl: true, ttl: 5 }), [0], TypeError, "keepTtl"]);
}
for (const [m, call] of [
  ["expire", (c, v) => c.expire("a", v)],
  ["hexpire", (c, v) => c.hexpire("h", "f", v)],
]) {
  cases.push([`${m}(ms type)`, call, NOT_NUMBERS.concat([undefined, new Date(5)]), TypeError, "ms"]);
  cases.push([`${m}(ms range)`, call, BAD_DELAYS, RangeError, "ms"]);
}
for (const [m, call] of [
  ["expireAt", (c, v) => c.expireAt("a", v)],
  ["hexpireAt", (c, v) => c.hexpireAt("h", "f", v)],
]) {
  cases.push([`${m}(time type)`, call, NOT_TIMES.concat([undefined]), TypeError, "time"]);
  cases.push([`${m}(time range)`, call, BAD_TIMES, RangeError, "time"]);
}
for (const [m, call] of [
  ["expire", (c, v) => c.expire("a", 10, v)],
  ["expireAt", (c, v) => c.expireAt("a", 2000, v)],
  ["hexpire", (c, v) => c.hexpire("h", "f", 10, v)],
  ["hexpireAt", (c, v) => c.hexpireAt("h", "f", 2000, v)],
  ["expire on a missing key", (c, v) => c.expire("missing", 10, v)],
]) {
  cases.push([`${m}(cond)`, call, BAD_CONDS, TypeError, "cond"]);
}
// Range errors are raised even when the key is missing.
cases.push(["expire(missing, NaN)", (c) => c.expire("missing", NaN), [0], RangeError, "ms"]);
cases.push(["set(missing, ttl -1)", (c) => c.set("missing", 1, { ttl: -1 }), [0], RangeError, "ttl"]);
cases.push(["tick(now type)", (c, v) => c.tick(v), NOT_TIMES, TypeError, "now"]);
cases.push(["tick(now range)", (c, v) => c.tick(v), BAD_TIMES, RangeError, "now"]);
cases.push(["forEach(fn)", (c, v) => c.forEach(v), [1, null, "f", {}], TypeError, "fn"]);

test("bad arguments to every method: right class, argument named, nothing changed", () => {
  let n = 0;
  for (const [name, call, values, Class, arg] of cases) {
    for (const v of values) {
      expectThrow(`${name} with ${fmt(v)}`, (c) => call(c, v), Class, arg);
      n++;
    }
  }
  assert.ok(n > 300, `${n} cases`);
});

test("bad constructor options", () => {
  const typeCases = [
    [null, "options"],
    [5, "options"],
    ["x", "options"],
    [{ bogus: 1 }, "options"],
    [{ maxSize: 10 }, "options"],
    [{ now: "0" }, "now"],
    [{ ttl: "1" }, "ttl"],
    [{ idle: null }, "idle"],
    [{ maxEntries: "10" }, "maxEntries"],
    [{ maxBytes: 10n }, "maxBytes"],
    [{ maxBytes: 10 }, "sizeOf"],
    [{ sizeOf: 5 }, "sizeOf"],
    [{ dispose: "f" }, "dispose"],
    [{ sweepBudget: "1" }, "sweepBudget"],
  ];
  for (const [o, arg] of typeCases) {
    assert.throws(() => new TtlCache(o), (e) => e instanceof TypeError && e.message.includes(arg), arg);
  }
  const rangeCases = [
    [{ now: NaN }, "now"],
    [{ now: Infinity }, "now"],
    [{ ttl: 0 }, "ttl"],
    [{ ttl: -5 }, "ttl"],
    [{ ttl: NaN }, "ttl"],
    [{ idle: -Infinity }, "idle"],
    [{ maxEntries: 0 }, "maxEntries"],
    [{ maxEntries: 1.5 }, "maxEntries"],
    [{ maxEntries: -1 }, "maxEntries"],
    [{ maxEntries: NaN }, "maxEntries"],
    [{ maxBytes: 0, sizeOf: () => 1 }, "maxBytes"],
    [{ sweepBudget: -1 }, "sweepBudget"],
    [{ sweepBudget: 2.5 }, "sweepBudget"],
    [{ sweepBudget: NaN }, "sweepBudget"],
  ];
  for (const [o, arg] of rangeCases) {
    assert.throws(() => new TtlCache(o), (e) => e instanceof RangeError && e.message.includes(arg), JSON.stringify(o));
  }
  // Edge values that are allowed.
  new TtlCache({ ttl: Infinity, idle: Infinity, maxEntries: Infinity, sweepBudget: 0 });
  new TtlCache({ now: -1e15 });
  new TtlCache(undefined);
  new TtlCache({});
});

test("sizeOf answers are validated before anything changes", () => {
  for (const [bad, Class] of [
    ["5", TypeError],
    [undefined, TypeError],
    [-1, RangeError],
    [1.5, RangeError],
    [NaN, RangeError],
    [2 ** 32, RangeError],
  ]) {
    const c = new TtlCache({ now: 0, maxBytes: 100, sizeOf: (v) => (v === "bad" ? bad : 1) });
    c.set("a", "ok");
    assert.throws(() => c.set("a", "bad"), (e) => e instanceof Class && e.message.includes("sizeOf"), String(bad));
    assert.throws(() => c.set("n", "bad"), Class);
    assert.throws(() => c.hset("h", "f", "bad"), Class);
    assert.equal(c.get("a"), "ok");
    assert.equal(c.size, 1);
  }
  const c = new TtlCache({
    now: 0,
    maxBytes: 100,
    sizeOf: () => {
      throw new Error("sizeOf failed");
    },
  });
  assert.throws(() => c.set("a", 1), /sizeOf failed/);
  assert.equal(c.size, 0);
});

test("a throwing getter on the options object does not corrupt the cache", () => {
  const c = new TtlCache({ now: 0 });
  c.set("a", 1);
  const evil = {
    get ttl() {
      throw new Error("getter");
    },
  };
  assert.throws(() => c.set("a", 2, evil), /getter/);
  assert.equal(c.get("a"), 1);
});

test("times: a Date of another realm is a Date; an object that only inherits from Date.prototype is not", async () => {
  // Found by a probe: `instanceof Date` refused a vm context's Date, and an
  // object made with Object.create(Date.prototype) reached V8's own
  // "this is not a Date object", which names no argument.
  const { runInNewContext } = await import("node:vm");
  const foreign = runInNewContext("new Date(5000)");
  const c = new TtlCache({ now: 0 });
  c.set("a", 1);
  c.set("b", 2, { expireAt: foreign });
  assert.equal(c.ttl("b"), 5000);
  assert.equal(c.expireAt("a", runInNewContext("new Date(7000)")), true);
  assert.equal(c.ttl("a"), 7000);
  c.hset("h", "f", 1);
  assert.equal(c.hexpireAt("h", "f", foreign), true);
  assert.equal(c.httl("h", "f"), 5000);
  assert.throws(() => c.expireAt("a", runInNewContext("new Date(NaN)")), (e) => e instanceof RangeError && /time/.test(e.message));
  const fake = Object.create(Date.prototype);
  const before = [c.ttl("a"), c.ttl("b"), c.httl("h", "f"), c.size];
  assert.throws(() => c.expireAt("a", fake), (e) => e instanceof TypeError && /^time:/.test(e.message));
  assert.throws(() => c.hexpireAt("h", "f", fake), (e) => e instanceof TypeError && /^time:/.test(e.message));
  assert.throws(() => c.set("a", 3, { expireAt: fake }), (e) => e instanceof TypeError && /^expireAt:/.test(e.message));
  assert.throws(() => c.expireAt("a", {}), (e) => e instanceof TypeError && /^time: must be a number/.test(e.message));
  assert.deepEqual([c.ttl("a"), c.ttl("b"), c.httl("h", "f"), c.size], before, "nothing changed");
  assert.equal(c.peek("a"), 1);
});

test("restore of a Uint8Array whose buffer was detached: a TypeError naming bytes", () => {
  const c = new TtlCache({ now: 0 });
  c.set("a", 1);
  const snap = c.snapshot();
  structuredClone(snap.buffer, { transfer: [snap.buffer] });
  assert.throws(() => TtlCache.restore(snap), (e) => e instanceof TypeError && /^bytes:/.test(e.message));
  // Detached by an option getter, after the type check.
  const again = c.snapshot();
  const opts = {
    get now() {
      structuredClone(again.buffer, { transfer: [again.buffer] });
      return 0;
    },
  };
  assert.throws(() => TtlCache.restore(again, opts), (e) => e instanceof TypeError && /^bytes:/.test(e.message));
  assert.equal(TtlCache.restore(c.snapshot()).get("a"), 1);
});

test("a missing argument is described as undefined, once", () => {
  // Found by a probe: messages read "got undefined undefined".
  const c = new TtlCache({ now: 0 });
  assert.throws(() => c.get(undefined), (e) => e instanceof TypeError && e.message === "key: must be a string, got undefined");
  assert.throws(() => c.get(null), (e) => e instanceof TypeError && e.message === "key: must be a string, got null");
  assert.throws(() => c.get(5), (e) => e instanceof TypeError && e.message === "key: must be a string, got number 5");
});
