// Run by exhaustion.test.mjs in a child process (it takes wasm memory to its
// 4 GiB limit, which no other test should share). Prints one JSON line:
// {"ok": true, ...figures} or {"ok": false, "why": ...}. Exit code 0 either way
// unless the process itself died.
import { TtlCache } from "lapse";

const out = { ok: true, failures: {} };
function fail(why) {
  console.log(JSON.stringify({ ok: false, why }));
  process.exit(0);
}

/** Runs f; an Error is counted (it must not be a trap), anything else fails the run. */
function attempt(what, f) {
  try {
    return f();
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) fail(`${what}: wasm trap: ${e.message}`);
    if (!(e instanceof Error)) fail(`${what}: threw a non-Error: ${String(e)}`);
    if (!/memory|too large|RangeError/i.test(`${e.constructor.name} ${e.message}`)) fail(`${what}: ${e.constructor.name}: ${e.message}`);
    // wasm sends only the argument's name for out of memory; the glue writes the sentence.
    if (/out of memory/.test(e.message) ? !/^\w+: out of memory: /.test(e.message) : !/: /.test(e.message)) {
      fail(`${what}: a bare or malformed message: ${JSON.stringify(e.message)}`);
    }
    out.failures[what] = (out.failures[what] ?? 0) + 1;
    return e;
  }
}

function expect(cond, what) {
  if (!cond) fail(what);
}

/** A bystander: checks everything it holds is still there, and that it works. */
function makeBystander(i) {
  const c = new TtlCache({ now: 0, ttl: 1e9, maxEntries: 1000 });
  for (let j = 0; j < 20; j++) c.set(`k${j}`, `${i}:${j}`);
  c.hset("h", "f", i);
  return c;
}

function checkBystander(c, i, what) {
  for (let j = 0; j < 20; j++) expect(c.get(`k${j}`) === `${i}:${j}`, `${what}: bystander ${i} lost k${j}`);
  expect(c.hget("h", "f") === i, `${what}: bystander ${i} lost its hash`);
  expect(c.size === 21, `${what}: bystander ${i} has ${c.size} keys`);
  // Writes that need no new slot always work.
  c.set("k0", `${i}:0`);
  c.tick(1);
}

const bystanders = [0, 1, 2].map(makeBystander);
// A cache following a clock on whole milliseconds (narrow clocks, 8 bytes a
// slot) whose clock turns fractional while memory is exhausted: widening the
// clocks takes memory, so the method that read the clock throws, and the
// cache stays at its last time, whole and working (part 2); once memory is
// back, it widens (part 3).
let followed = 1000;
const follower = new TtlCache({ clock: () => followed, idle: 1e6 });
for (let j = 0; j < 2000; j++) follower.set(`f${j}`, j);
const hogs = [];
// A bounded cache still doubling toward 1/16 of its bound when memory runs
// out: it must go on taking new keys in the slots its deletes free (it
// retried growing from its high-water mark, and took no new key ever
// again, not even once cleared: a probe).
const bounded = new TtlCache({ now: 0, maxEntries: 1 << 22 });
for (let j = 0; j < 5000; j++) bounded.set(`b${j}`, j);
// Made without grace, with 100k slots (and slots reserved for inserts to
// come): a fetch with its own `grace` turns grace on, a column for every
// slot, which an exhausted memory cannot hold.
const graceless = new TtlCache({ now: 0 });
for (let j = 0; j < 100_000; j++) graceless.set(`g${j}`, j);
let full = null;

// 1. Take wasm memory to its limit. Most of it goes to bare engines' columns
//    (allocating 4 GiB through set() costs minutes of CPU); then one engine
//    is given back, and a real cache fills its memory with entries until a
//    write fails for want of memory.
const started = Date.now();
const glue = await import(new URL("../../node_modules/lapse/dist/glue.js", import.meta.url));
const { ST_CAP, ST_RESERVED_LEN, QUEUE_CAP } = await import(new URL("../../node_modules/lapse/dist/protocol.js", import.meta.url));
const ballast = [];
// About what a bounded engine's columns take per slot (memory-growth.test.mjs
// holds it under 28 B).
const SLOT_BYTES = 25;
// A bare engine whose columns take about `bytes` of wasm memory, or null when
// memory cannot hold them: a bounded engine's columns jump to their bound once
// 1/16 of it is in use (src/engine/room.rs), so reserving slots gets there.
function hog(bytes) {
  const bound = Math.max(1, Math.floor(bytes / SLOT_BYTES) - 512);
  const raw = attempt("new RawEngine (filling)", () => new glue.RawEngine(0, Infinity, Infinity, bound, Infinity, 0));
  if (raw instanceof Error) return null;
  const st = raw.statusPtr() >>> 2;
  const status = (i) => new Uint32Array(glue.wasmMemory().buffer)[st + i];
  while (status(ST_CAP) < bound) {
    raw.reserve(QUEUE_CAP);
    if (status(ST_RESERVED_LEN) === 0) {
      raw.free();
      return null;
    }
  }
  return raw;
}
// Takes wasm memory in engines' columns, `largest` bytes at a time and then
// ever smaller pieces down to `smallest`, until none fits.
function fill(largest, smallest) {
  for (let chunk = largest; chunk >= smallest; chunk >>= 2) {
    for (let raw = hog(chunk); raw !== null; raw = hog(chunk)) ballast.push(raw);
  }
}
fill(256 << 20, 64 << 10);
out.wasmBytes = bystanders[0].stats().wasmBytes;
expect(out.wasmBytes > 3.9 * 2 ** 30, `wasm memory did not reach its limit: ${out.wasmBytes}`);
// Never the last 64 KiB page: the memory's end would be 2^32, which wraps to
// 0 in wasm32's usize (then nothing given back to the heap's top was used
// again: a probe freed half of 475k small caches and could not make one).
expect(out.wasmBytes <= 2 ** 32 - 65536, `wasm memory took its last page: ${out.wasmBytes}`);
ballast.shift().free(); // 256 MiB back, for entries
{
  const c = new TtlCache({ now: 0 });
  hogs.push(c);
  for (let j = 0; j < 1 << 24; j++) {
    try {
      c.set(`k${j}`, j);
    } catch (e) {
      attempt("set (filling)", () => {
        throw e;
      });
      full = { cache: c, held: j };
      break;
    }
  }
}
// What the cache could not use (a doubling of its columns did not fit) is
// taken too, down to 4 KiB pieces: now even a small allocation fails.
fill(64 << 20, 4 << 10);
out.fillSeconds = (Date.now() - started) / 1000;
expect(full !== null, "filling a cache never ran out of memory");
out.held = full.held;

// 2. With memory exhausted: every call either works or throws a normal Error,
//    and nothing held is lost.
if (full !== null) {
  const c = full.cache;
  const held = full.held;
  expect(c.size === held, `the cache that ran out holds ${c.size}, not ${held}`);
  expect(c.get("k0") === 0 && c.get(`k${held - 1}`) === held - 1, `the cache that ran out lost entries: ${c.get("k0")} ${c.get(`k${held - 1}`)} ${c.get(`k${held - 2}`)} ${c.size} ${held}`);
  attempt("set (full)", () => c.set(`k${held}`, held));
  attempt("set with options (full)", () => c.set(`x${held}`, held, { ttl: 5 }));
  attempt("hset (full)", () => c.hset("hh", "f", 1));
  c.set("k0", "over"); // an overwrite needs no memory
  expect(c.get("k0") === "over", "overwrite failed");
}
{
  let n = 5000;
  for (; n < 1 << 22; n++) {
    try {
      bounded.set(`b${n}`, n);
    } catch (e) {
      attempt("set (bounded, full)", () => {
        throw e;
      });
      break;
    }
  }
  expect(n < 1 << 22, "the bounded cache never ran out of memory");
  for (let j = 0; j < 100; j++) bounded.delete(`b${j}`);
  let took = 0;
  for (let j = 0; j < 100; j++) {
    if (!(attempt("set in freed slots (bounded, full)", () => bounded.set(`new${j}`, j)) instanceof Error)) took++;
  }
  expect(took === 100 && bounded.get("new99") === 99 && bounded.size === n, `the bounded cache took ${took} of 100 new keys into freed slots`);
  bounded.clear();
  expect(!(attempt("set after clear (bounded, full)", () => bounded.set("again", 1)) instanceof Error) && bounded.get("again") === 1, "the cleared bounded cache took no new key");
}
// The load's store used to turn grace on where the slot's grace is set,
// after the value was written, allocating inside that call: a trap.
{
  const r = await graceless.fetch("fresh", async () => "loaded", { grace: 1000 }).then(
    (v) => v,
    (e) => e,
  );
  if (r instanceof Error) {
    attempt("fetch with grace (full)", () => {
      throw r;
    });
    expect(!graceless.has("fresh"), "a fetch that failed for want of memory stored its value");
  } else expect(r === "loaded" && graceless.get("fresh") === "loaded", `fetch with grace (full) gave ${String(r)}`);
  expect(graceless.get("g0") === 0 && graceless.get("g99999") === 99_999, "the graceless cache lost entries");
}
for (let i = 0; i < 200; i++) attempt("new TtlCache (full)", () => new TtlCache({ now: 0 }).set("a", 1));
bystanders.forEach((b, i) => checkBystander(b, i, "exhausted"));
for (const b of bystanders) {
  for (let j = 0; j < 2000; j++) attempt("bystander set (full)", () => b.set(`n${j}`, j));
  for (let j = 0; j < 200; j++) attempt("bystander hset (full)", () => b.hset(`hn${j}`, "f", j));
  for (let j = 0; j < 2000; j++) b.delete(`n${j}`);
  for (let j = 0; j < 200; j++) b.delete(`hn${j}`);
  const snap = attempt("bystander snapshot (full)", () => b.snapshot());
  if (!(snap instanceof Error)) attempt("restore (full)", () => TtlCache.restore(snap));
  attempt("stats (full)", () => b.stats());
}
if (full !== null) {
  const snap = attempt("snapshot of the big cache (full)", () => full.cache.snapshot());
  // Its entries' slots need the memory the big cache holds: a RangeError.
  if (!(snap instanceof Error)) attempt("restore of the big cache's snapshot (full)", () => TtlCache.restore(snap));
  // Big bytes that are no snapshot are refused before restore needs any wasm memory.
  let refused = null;
  try {
    TtlCache.restore(new Uint8Array(64 << 20).fill(1));
  } catch (e) {
    refused = e;
  }
  expect(refused?.constructor === Error && /^bytes: not a valid snapshot: not a lapse snapshot$/.test(refused.message), `restore of big bytes (full): ${refused}`);
}
// A snapshot of a value too large for what is left: before, a trap.
{
  const b = bystanders[0];
  // k1 exists: an overwrite needs no new slot.
  b.set("k1", new Uint8Array(256 << 20));
  attempt("snapshot of a huge value (full)", () => b.snapshot());
  b.set("k1", "0:1");
}
bystanders.forEach((b, i) => checkBystander(b, i, "after the hostile calls"));
await null; // a new run: the follower reads its clock again
followed += 0.5;
attempt("a followed clock turned fractional (full)", () => follower.get("f0"));
expect(follower.get("f1") === 1 && follower.size === 2000, "the follower lost entries when its clock could not move");
expect(follower.ttl("f1") === 1e6, `the follower's clock and clocks disagree: ttl ${follower.ttl("f1")}`);

// 3. Memory comes back: clear() and free() make room, everything works again.
// clear() may need memory for its removal log; it works or is a RangeError.
attempt("clear (full)", () => full.cache.clear());
for (const raw of ballast) raw.free();
full.cache.clear();
expect(full.cache.size === 0, "clear() on the full cache failed");
for (const h of hogs) h.free();
const again = new TtlCache({ now: 0 });
for (let j = 0; j < 100000; j++) again.set(`k${j}`, j);
again.hset("h", "f", 1);
expect(TtlCache.restore(again.snapshot()).size === 100001, "restore after recovery failed");
bystanders.forEach((b, i) => checkBystander(b, i, "after recovery"));
await null;
followed += 0.25;
expect(follower.get("f2") === 2 && follower.ttl("f2") === 1e6, "the follower did not move to its fractional clock");

// 4. Throwaway caches, never freed: the garbage collector returns their memory.
if (typeof globalThis.gc === "function") {
  const probe = new TtlCache();
  const churn = () => {
    for (let i = 0; i < 20000; i++) {
      const t = new TtlCache({ ttl: 1000 });
      t.set("a", i);
    }
  };
  churn();
  for (let i = 0; i < 5; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  const before = probe.stats().wasmBytes;
  churn();
  for (let i = 0; i < 5; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  churn();
  out.churnGrowth = probe.stats().wasmBytes - before;
  expect(out.churnGrowth < 64 << 20, `dropped caches were not reclaimed: wasm grew ${out.churnGrowth} bytes`);
}

console.log(JSON.stringify(out));
