// snapshot() / TtlCache.restore(): round trips of every data form, exact
// clocks, the golden file, corruption of every byte, bad input at the JS
// surface, and hash flooding of the key index.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { TtlCache } from "lapse";

const GOLDEN = new URL("../data/golden-v2.bin", import.meta.url);
// The same content in format version 1 (no clock mode), which restore still reads.
const GOLDEN_V1 = new URL("../data/golden-v1.bin", import.meta.url);

function roundTrip(c, opts) {
  return TtlCache.restore(c.snapshot(), opts);
}

test("every data form round-trips exactly", () => {
  const c = new TtlCache({ now: 0 });
  const nullProto = Object.assign(Object.create(null), { z: 1 });
  const values = {
    null: null,
    t: true,
    f: false,
    ints: [0, 1, -1, 2 ** 31, -(2 ** 53 - 1), 2 ** 53 - 1, 2 ** 52 + 3, -(2 ** 52) - 3],
    floats: [-0, 0.1, NaN, Infinity, -Infinity, 2 ** 53, 1e300, 5e-324],
    strings: ["", "ascii", "é latin-1 ÿ", "漢字", "\uD800", "a\uDC00b", "😀", "\0"],
    arr: [[], [[[]]], [1, "two", null, undefined, { x: [undefined] }]],
    obj: { a: 1, b: { c: { d: "deep" } }, "": "empty key", __proto__x: 2, 10: "int-like", 2: "first" },
    nullProto,
    bytes: new Uint8Array([0, 1, 254, 255]),
    empty: new Uint8Array(0),
    dates: [new Date(0), new Date(-8.64e15), new Date(8.64e15), new Date(1700000000123)],
    invalidDate: new Date(NaN),
    map: new Map([[1, "one"], ["1", "string one"], [NaN, "nan"], [{ k: 1 }, [2]], [null, undefined], [1n, 2n]]),
    bigs: [0n, 1n, -1n, 255n, 256n, -(2n ** 200n) + 1n, 2n ** 64n],
  };
  for (const [k, v] of Object.entries(values)) c.set(k, v);
  const protoKey = JSON.parse('{"__proto__": {"own": true}}');
  c.set("__proto__", protoKey);
  const r = roundTrip(c);
  for (const [k, v] of Object.entries(values)) {
    if (k === "invalidDate") continue; // assert.deepEqual cannot compare invalid Dates
    assert.deepEqual(r.peek(k), v, k);
  }
  assert.ok(r.peek("invalidDate") instanceof Date && Number.isNaN(r.peek("invalidDate").getTime()));
  assert.ok(Object.is(r.peek("floats")[0], -0));
  assert.ok(Object.is(r.peek("ints")[0], 0));
  assert.equal(Object.getPrototypeOf(r.peek("nullProto")), null);
  assert.equal(Object.getPrototypeOf(r.peek("obj")), Object.prototype);
  assert.deepEqual(Object.keys(r.peek("obj")), Object.keys(values.obj));
  const p = r.peek("__proto__");
  assert.ok(Object.hasOwn(p, "__proto__"), "an own __proto__ property stays own");
  assert.equal(Object.getPrototypeOf(p), Object.prototype);
  assert.deepEqual(r.peek("strings"), values.strings);
  assert.ok(r.peek("bytes") instanceof Uint8Array);
  assert.notEqual(r.peek("bytes").buffer, values.bytes.buffer);
  assert.equal(r.peek("map").size, values.map.size);
  assert.deepEqual([...r.keys()], [...c.keys()], "insertion order");
});

test("keys and fields keep every UTF-16 code unit, lone surrogates included", () => {
  const keys = ["", "\uD800", "\uDFFF", "a\uD83D", "\uDE00b", "😀", "__proto__", "constructor", "x".repeat(70000), "\u0100", "\u0100".repeat(9000) + "\uD800"];
  const c = new TtlCache({ now: 0 });
  keys.forEach((k, i) => c.set(k, i));
  keys.forEach((f, i) => c.hset("hash", f, i));
  const r = roundTrip(c);
  assert.deepEqual([...r.keys()], [...keys, "hash"]);
  keys.forEach((k, i) => assert.equal(r.get(k), i));
  assert.deepEqual([...r.hgetall("hash").keys()], keys);
});

test("clocks, options and the clock itself are restored exactly", () => {
  const c = new TtlCache({ now: 1000, ttl: 10000, idle: 3000, maxEntries: 50, sweepBudget: 3 });
  c.set("a", 1);
  c.set("b", 2, { ttl: Infinity, idle: 500 });
  c.set("c", 3, { expireAt: 5000 });
  c.set("d", 4, { ttl: Infinity, idle: Infinity });
  c.hset("h", "f1", 1, { ttl: 700 });
  c.hset("h", "f2", 2, { idle: 100 });
  c.expire("h", 9000);
  c.tick(1200);
  c.get("a");
  c.hget("h", "f1");
  c.tick(1250);
  const r = roundTrip(c);
  assert.equal(r.now, 1250);
  for (const k of ["a", "b", "c", "d", "h"]) assert.equal(r.ttl(k), c.ttl(k), k);
  for (const f of ["f1", "f2"]) assert.equal(r.httl("h", f), c.httl("h", f), f);
  const s = r.stats();
  assert.equal(s.maxEntries, 50);
  // Both caches go on expiring in step, sweeping 3 at a time.
  for (const t of [1300, 1500, 1800, 4000, 6000, 12000]) {
    c.tick(t);
    r.tick(t);
    assert.deepEqual([...r.keys()], [...c.keys()], `at ${t}`);
    assert.deepEqual(r.snapshot(), c.snapshot(), `at ${t}`);
  }
});

test("expired entries are left out; snapshot commits queued inserts; the cache stays usable", () => {
  const c = new TtlCache({ now: 0 });
  for (let i = 0; i < 300; i++) c.set(`k${i}`, i, { ttl: i < 100 ? 10 : 1000 });
  c.tick(20);
  const r = roundTrip(c);
  assert.equal(r.size, 200);
  assert.equal(r.get("k5"), undefined);
  assert.equal(r.get("k150"), 150);
  r.set("new", 1);
  r.hset("nh", "f", 2);
  assert.equal(r.get("new"), 1);
  c.set("after", 1);
  assert.equal(c.get("after"), 1);
  assert.equal(roundTrip(c).get("after"), 1);
});

test("restore with maxBytes needs sizeOf, keeps recorded sizes and calls dispose later", () => {
  const sizeOf = (v) => String(v).length;
  const c = new TtlCache({ now: 0, maxBytes: 20, sizeOf });
  c.set("a", "12345");
  c.hset("h", "f", "1234567");
  assert.throws(() => TtlCache.restore(c.snapshot()), (e) => e instanceof TypeError && /sizeOf/.test(e.message));
  const gone = [];
  const r = TtlCache.restore(c.snapshot(), { sizeOf, dispose: (v, k, reason, f) => gone.push([k, f, reason]) });
  assert.equal(r.stats().bytes, 12);
  r.set("b", "123456789012"); // needs room: evicts
  assert.ok(r.stats().bytes <= 20);
  assert.ok(gone.length > 0 && gone.every(([, , reason]) => reason === "evicted"));
});

test("the snapshot bytes match the committed golden file (written by the Rust encoder)", () => {
  const c = new TtlCache({ now: 1000, ttl: 60000, idle: 5000, maxEntries: 100, sweepBudget: 7 });
  c.set("plain", 42);
  c.set("obj\uD800", { a: [1, -0, NaN, "x\uD800"], d: new Date(0), m: new Map([["k", 7n]]), b: new Uint8Array([0, 255]) }, { ttl: Infinity, idle: Infinity });
  c.hset("h", "f\u0192", true, { ttl: 100 });
  c.tick(1050);
  c.get("plain");
  const golden = new Uint8Array(readFileSync(GOLDEN));
  assert.deepEqual(c.snapshot(), golden);
  const r = TtlCache.restore(golden);
  assert.equal(r.ttl("plain"), 5000);
  assert.equal(r.httl("h", "f\u0192"), 50);
  assert.deepEqual(r.snapshot(), golden);
  // Version 1 bytes restore to the same cache, on a manual clock.
  const v1 = TtlCache.restore(new Uint8Array(readFileSync(GOLDEN_V1)));
  assert.equal(v1.now, 1050);
  assert.deepEqual(v1.snapshot(), golden);
});

test("every single-byte corruption, truncation and extension is rejected with an Error", () => {
  const c = new TtlCache({ now: 0, ttl: 1000 });
  c.set("a", { x: [1, "two"] });
  c.hset("h", "f", 3n, { idle: 50 });
  const bytes = c.snapshot();
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    for (const mask of [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff]) {
      const b = bytes.slice();
      b[i] ^= mask;
      assert.throws(() => TtlCache.restore(b), (e) => e.constructor === Error && /^bytes: not a valid snapshot: /.test(e.message), `byte ${i} ^ ${mask}`);
      n++;
    }
  }
  for (let len = 0; len < bytes.length; len++) {
    assert.throws(() => TtlCache.restore(bytes.subarray(0, len)), (e) => e.constructor === Error);
  }
  const longer = new Uint8Array(bytes.length + 1);
  longer.set(bytes);
  assert.throws(() => TtlCache.restore(longer), (e) => e.constructor === Error);
  assert.ok(n > 500);
});

/** A snapshot from raw body bytes (header, length and CRC filled in), for hostile inputs. */
function forge(body) {
  const out = new Uint8Array(16 + body.length + 4);
  out.set([0x89, 0x4c, 0x50, 0x53, 1, 0, 0, 0]);
  new DataView(out.buffer).setUint32(8, out.length, true);
  out.set(body, 16);
  let crc = 0xffffffff;
  for (let i = 0; i < out.length - 4; i++) {
    crc ^= out[i];
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  new DataView(out.buffer).setUint32(out.length - 4, (crc ^ 0xffffffff) >>> 0, true);
  return out;
}

const HEADER = [...new Uint8Array(new Float64Array([0, Infinity, Infinity]).buffer), 0, 0, 0];

test("hostile bytes fail fast with a message, never a trap", () => {
  const cases = {
    "empty input": new Uint8Array(0),
    "not a lapse snapshot": new TextEncoder().encode("{\"json\": true}"),
    "unsupported format version": (() => {
      const b = new TtlCache({ now: 0 }).snapshot();
      b[4] = 3;
      return b;
    })(),
    // 2^62 entries declared in a tiny body.
    "count overruns": forge([...HEADER, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]),
    // One entry whose value is 100,000 nested arrays.
    "nested deeper than 64": forge([...HEADER, 1, 0, 2, 0x6b, ...new Uint8Array(8), ...new Array(100000).fill([7, 1]).flat(), 1]),
    // A string declaring 2^40 code units.
    "string overruns": forge([...HEADER, 1, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, ...new Uint8Array(16)]),
    "duplicate key": forge([...HEADER, 2, ...[0, 2, 0x6b, ...new Uint8Array(8), 1], ...[0, 2, 0x6b, ...new Uint8Array(8), 1]]),
    "expired entry": forge([...HEADER, 1, 4, 2, 0x6b, ...new Uint8Array(8), ...new Uint8Array(8), 1]),
  };
  for (const [what, bytes] of Object.entries(cases)) {
    const t0 = performance.now();
    assert.throws(
      () => TtlCache.restore(bytes),
      (e) => e.constructor === Error && e.message.includes(what),
      what,
    );
    assert.ok(performance.now() - t0 < 1000, `${what} took too long`);
  }
  // And a well-formed forged one is accepted: the forge helper is right.
  const ok = TtlCache.restore(forge([...HEADER, 1, 0, 2, 0x6b, ...new Uint8Array(8), 1]));
  assert.equal(ok.get("k"), null);
});

test("a tiny snapshot declaring a huge maxEntries restores fast, without reserving memory for it", () => {
  // maxEntries = 2^53 - 1, no entries: 64 bytes.
  const huge = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f];
  const bytes = forge([...new Uint8Array(new Float64Array([0, Infinity, Infinity]).buffer), ...huge, 0, 0, 0]);
  const before = new TtlCache({ now: 0 }).stats().wasmBytes;
  const t0 = performance.now();
  const r = TtlCache.restore(bytes);
  assert.ok(performance.now() - t0 < 200, "restore took too long");
  assert.equal(r.stats().maxEntries, 2 ** 53 - 1);
  assert.ok(r.stats().wasmBytes - before < 8e6, "restore reserved memory for maxEntries");
  for (let i = 0; i < 1000; i++) r.set(`k${i}`, i);
  assert.equal(r.size, 1000);
});

// ---- bad input at the JS surface (rows for the lead's bad-input table) -------

test("restore: wrong types and options", () => {
  const good = new TtlCache({ now: 0 }).snapshot();
  for (const bad of [undefined, null, "bytes", 1, [1, 2], {}, new Uint16Array(4), new ArrayBuffer(8), new DataView(new ArrayBuffer(8))]) {
    assert.throws(() => TtlCache.restore(bad), (e) => e instanceof TypeError && /bytes/.test(e.message), String(bad));
  }
  for (const [opts, arg] of [
    [{ ttl: 5 }, "ttl"],
    [{ now: 5, clock: () => 5 }, "now"],
    [{ now: "5" }, "now"],
    [{ clock: 5 }, "clock"],
    [{ disposer: () => {} }, "disposer"],
    [null, "opts"],
    ["x", "opts"],
    [{ dispose: 1 }, "dispose"],
    [{ sizeOf: "len" }, "sizeOf"],
  ]) {
    assert.throws(() => TtlCache.restore(good, opts), (e) => e instanceof TypeError && e.message.includes(arg), JSON.stringify(opts));
  }
  assert.ok(TtlCache.restore(Buffer.from(good)) instanceof TtlCache, "a Node Buffer is a Uint8Array");
});

test("snapshot: a value with no data form throws TypeError naming the key (and field); nothing changes", () => {
  class Point {
    constructor() {
      this.x = 1;
    }
  }
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const deep = [];
  let d = deep;
  for (let i = 0; i < 70; i++) d = d[0] = [];
  const rows = [
    [() => 1, "a function"],
    [Symbol("s"), "symbol"],
    [new Point(), "Point"],
    [cyclic, "cycle"],
    [[1, [2, () => 3]], "function"],
    [{ m: new Map([[Symbol.iterator, 1]]) }, "symbol"],
    [new Float64Array(2), "Float64Array"],
    [new Set([1]), "Set"],
    [new WeakMap(), "WeakMap"],
    [Promise.resolve(1), "Promise"],
    [new Error("e"), "Error"],
    [/re/, "RegExp"],
    [deep, "deeper than 64"],
    [Object(1), "Number"],
  ];
  for (const [value, what] of rows) {
    const c = new TtlCache({ now: 0 });
    c.set("ok", [1, 2]);
    c.set("bad key", value);
    c.set("after", 1);
    const before = [...c.keys()];
    assert.throws(
      () => c.snapshot(),
      (e) => e instanceof TypeError && e.message.includes('"bad key"') && e.message.includes(what),
      what,
    );
    assert.deepEqual([...c.keys()], before);
    c.delete("bad key");
    assert.deepEqual(roundTrip(c).get("ok"), [1, 2], "usable after the throw");
  }
  const c = new TtlCache({ now: 0 });
  c.hset("user", "fn", () => 1);
  assert.throws(() => c.snapshot(), (e) => e instanceof TypeError && /key "user" field "fn"/.test(e.message));
  assert.equal(c.hlen("user"), 1);
  // A shared (not cyclic) object is fine: it is written twice.
  const shared = { s: 1 };
  const ok = new TtlCache({ now: 0 });
  ok.set("k", [shared, shared]);
  assert.deepEqual(roundTrip(ok).get("k"), [shared, shared]);
});

// ---- hash flooding -------------------------------------------------------------

/** Keys that all collide under 31-polynomial string hashing (Java's String.hashCode): blocks of "Aa"/"BB". */
function collidingKeys(n) {
  const out = [];
  for (let i = 0; out.length < n; i++) {
    let s = "";
    for (let b = 0; b < 17; b++) s += (i >> b) & 1 ? "BB" : "Aa";
    out.push(s);
  }
  return out;
}

function time(keys) {
  const runs = [];
  for (let r = 0; r < 5; r++) {
    const c = new TtlCache({ now: 0 });
    const t0 = performance.now();
    for (const k of keys) c.set(k, 1);
    for (const k of keys) c.get(k);
    runs.push(performance.now() - t0);
  }
  return runs.sort((a, b) => a - b)[2];
}

test("crafted colliding keys do not degrade the cache to O(n) per operation", () => {
  const n = 50_000;
  const crafted = collidingKeys(n);
  const random = crafted.map((k, i) => `${Math.random().toString(36).slice(2, 10)}${i}`.padEnd(k.length, "x"));
  time(random); // warm up
  const tCrafted = time(crafted);
  const tRandom = time(random);
  // Quadratic behaviour would be ~n/2 = 25,000x slower; allow 5x for noise.
  assert.ok(tCrafted < tRandom * 5 + 50, `crafted ${tCrafted.toFixed(1)} ms vs random ${tRandom.toFixed(1)} ms`);
  // The restore path goes through the same JS Map (decode.js finds duplicate
  // keys with it): restoring the crafted keys is also fast.
  const c = new TtlCache({ now: 0 });
  for (const k of crafted) c.set(k, 1);
  const t0 = performance.now();
  const r = TtlCache.restore(c.snapshot());
  assert.equal(r.size, n);
  assert.ok(performance.now() - t0 < 5000);
});

// ---- values JS would change (issue 13): rejected, never changed silently ----

function crc32(b) {
  let crc = ~0;
  for (const x of b) {
    crc ^= x;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return ~crc >>> 0;
}

test("snapshot()'s trailer is the CRC-32 of its bytes, whatever their length mod 8", () => {
  // The writer's CRC takes eight bytes a step and the rest one at a time:
  // a key one byte longer each time moves the body's length through every
  // remainder, and a bitwise CRC must agree with the trailer each time.
  for (let n = 1; n <= 24; n++) {
    const c = new TtlCache({ now: 0 });
    c.set("k".repeat(n), "\u00ff".repeat(n));
    c.set(`x${n}`, n);
    const b = c.snapshot();
    const end = b.length - 4;
    assert.equal(new DataView(b.buffer, b.byteOffset).getUint32(end, true), crc32(b.subarray(0, end)), `key length ${n}`);
    assert.equal(TtlCache.restore(b).get("k".repeat(n)), "\u00ff".repeat(n));
  }
});

/** `bytes` with the one ASCII occurrence of `from` replaced by `to` (same length), re-sealed. */
function patch(bytes, from, to) {
  const b = bytes.slice();
  const f = new TextEncoder().encode(from);
  const i = b.findIndex((_, j) => f.every((x, k) => b[j + k] === x));
  assert.ok(i > 0, `${from} not found`);
  b.set(new TextEncoder().encode(to), i);
  new DataView(b.buffer).setUint32(b.length - 4, crc32(b.subarray(0, b.length - 4)), true);
  return b;
}

test("restore rejects objects and Maps JS would merge or reorder; arrays with named properties do not snapshot", () => {
  const c = new TtlCache({ now: 0 });
  c.set("k", { qa1: 1, qb1: 2 });
  const obj = c.snapshot();
  // Control: a patch that keeps the data valid restores (the re-sealing is right).
  assert.deepEqual(TtlCache.restore(patch(obj, "qb1", "qc1")).get("k"), { qa1: 1, qc1: 2 });
  assert.throws(() => TtlCache.restore(patch(obj, "qb1", "qa1")), { message: /duplicate property/ });
  // An array index after a name: JS would move it first.
  assert.throws(() => TtlCache.restore(patch(obj, "qb1", "123")), { message: /property order/ });
  // A name JS does not treat as an index keeps its place.
  assert.deepEqual(Object.keys(TtlCache.restore(patch(obj, "qb1", "012")).get("k")), ["qa1", "012"]);

  const m = new TtlCache({ now: 0 });
  m.set("k", new Map([["qa1", 1], ["qb1", 2]]));
  assert.throws(() => TtlCache.restore(patch(m.snapshot(), "qb1", "qa1")), { message: /duplicate Map key/ });

  const a = [1, 2];
  a.extra = 3;
  const arr = new TtlCache({ now: 0 });
  arr.set("k", a);
  assert.throws(() => arr.snapshot(), { name: "TypeError", message: /"k".*named properties|named properties.*"k"/ });
  assert.equal(arr.get("k"), a, "nothing changed");
  // Holes would come back as elements (a probe: [1, , 3] restored with 1 in it).
  // eslint-disable-next-line no-sparse-arrays
  for (const holey of [[1, , 3], new Array(3), Object.assign([1, , 3], { x: 1 })]) {
    arr.set("k", holey);
    assert.throws(() => arr.snapshot(), { name: "TypeError", message: /"k".*holes/ }, `${holey.length} with holes`);
  }
  // Plain, dense arrays still round-trip.
  arr.set("k", [1, [2, 3], []]);
  assert.deepEqual(roundTrip(arr).get("k"), [1, [2, 3], []]);
});

test("restore: a now that is not finite is a RangeError, as in the constructor", () => {
  // NaN and -Infinity were ignored, and +Infinity put every entry past its
  // deadline, those with none included (found by a probe).
  const c = new TtlCache({ now: 0 });
  c.set("a", 1);
  const bytes = c.snapshot();
  for (const now of [NaN, Infinity, -Infinity]) {
    assert.throws(() => TtlCache.restore(bytes, { now }), (e) => e instanceof RangeError && /^now: /.test(e.message), String(now));
  }
  assert.equal(TtlCache.restore(bytes, { now: 5 }).get("a"), 1);
});
