// The clock (API.md § Time): Date.now() followed lazily by default, read at
// most once per synchronous run (a microtask ends the reading), `clock`,
// manual `now`, time that never runs backwards, nextExpiry(), the write-time
// reclaim that bounds memory without tick(), sweepBudget 0, and the clock
// mode a snapshot keeps across restore. No timing asserts: the sleeps only
// let real time pass.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { TtlCache } from "lapse";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A fake clock that counts its readings. */
function fakeClock(start = 1000) {
  const c = { t: start, calls: 0 };
  c.read = () => {
    c.calls++;
    return c.t;
  };
  return c;
}

test("default clock: an entry is gone once its ttl has passed in real time, with no tick()", async () => {
  const c = new TtlCache({ ttl: 50 });
  c.set("a", 1);
  c.set("b", 2, { ttl: 60_000 });
  c.hset("h", "f", 3, { ttl: 50 });
  assert.equal(c.get("a"), 1);
  await sleep(120);
  assert.equal(c.get("a"), undefined);
  assert.equal(c.has("a"), false);
  assert.equal(c.peek("a"), undefined);
  assert.equal(c.hget("h", "f"), undefined);
  assert.equal(c.get("b"), 2);
  assert.deepEqual([...c.keys()], ["b"]);
  const t = c.ttl("b");
  assert.ok(t > 0 && t < 60_000, `ttl ${t}`);
  assert.ok(Math.abs(c.now - Date.now()) < 1000, "cache.now follows Date.now()");
});

test("default clock: a write made after real time passed counts from the new time", async () => {
  const c = new TtlCache();
  const before = c.now;
  await sleep(30);
  c.set("k", 1, { ttl: 1000 });
  assert.ok(c.now >= before + 20, `now moved: ${before} -> ${c.now}`);
  assert.ok(c.ttl("k") > 990, "the deadline counts from the write, not from construction");
});

test("the clock is read at most once per synchronous run, and again after an await", async () => {
  const clk = fakeClock();
  const c = new TtlCache({ clock: clk.read, ttl: 100 });
  const base = clk.calls; // the constructor reads it once
  assert.equal(base, 1);
  for (let i = 0; i < 1000; i++) {
    c.set(`k${i}`, i);
    c.get(`k${i}`);
    c.has(`k${i}`);
  }
  c.ttl("k1");
  void c.now;
  [...c.keys()];
  assert.equal(clk.calls, base, "one synchronous run: no reading beyond the first");
  clk.t = 1100; // every entry's deadline
  assert.equal(c.get("k1"), 1, "still the run's reading: time stands still within a run");
  await null; // a microtask boundary, no timer
  assert.equal(c.get("k1"), undefined, "a new run reads the clock again");
  assert.equal(clk.calls, base + 1);
  c.get("k2");
  c.set("x", 1);
  assert.equal(clk.calls, base + 1);
  await Promise.resolve();
  void c.now;
  assert.equal(clk.calls, base + 2);
});

// API.md: "times are finite numbers or valid Dates"; tick's took numbers only (a probe).
test("tick(now) takes a Date as every other time does", () => {
  const c = new TtlCache({ now: 0 });
  c.set("k", 1, { ttl: 10 });
  assert.equal(c.tick(new Date(10)), 1);
  assert.equal(c.now, 10);
  assert.throws(() => c.tick(new Date(NaN)), RangeError);
  assert.equal(c.now, 10);
});

test("tick() with no argument takes a fresh reading, even within a run", () => {
  const clk = fakeClock(0);
  const c = new TtlCache({ clock: clk.read, ttl: 10 });
  c.set("a", 1);
  clk.t = 10;
  assert.equal(c.get("a"), 1, "no new reading yet in this run");
  assert.equal(c.tick(), 1);
  assert.equal(c.now, 10);
  assert.equal(c.get("a"), undefined);
  // A manual clock's tick() defaults to Date.now().
  const m = new TtlCache({ now: 0 });
  m.tick();
  assert.ok(Math.abs(m.now - Date.now()) < 1000);
});

test("a manual clock moves only with tick(t), across awaits and real time", async () => {
  const c = new TtlCache({ now: 500, ttl: 10 });
  c.set("a", 1);
  await sleep(20);
  assert.equal(c.now, 500);
  assert.equal(c.get("a"), 1);
  c.tick(510);
  assert.equal(c.get("a"), undefined);
});

test("time never runs backwards: a followed clock that steps back un-expires nothing", async () => {
  const clk = fakeClock(1000);
  const c = new TtlCache({ clock: clk.read });
  c.set("a", 1, { ttl: 100 });
  c.set("b", 2, { ttl: 1000 });
  clk.t = 1100;
  await null;
  assert.equal(c.get("a"), undefined);
  assert.equal(c.now, 1100);
  clk.t = 900; // the clock is set back
  await null;
  assert.equal(c.now, 1100);
  assert.equal(c.has("a"), false);
  assert.equal(c.ttl("b"), 900, "ttl counts from the latest time seen");
  c.set("c", 3, { ttl: 50 });
  assert.equal(c.ttl("c"), 50);
  assert.equal(c.tick(), 0);
  assert.equal(c.now, 1100);
  c.tick(1050); // an explicit earlier time is ignored too
  assert.equal(c.now, 1100);
  clk.t = 1150;
  await null;
  assert.equal(c.has("c"), false, "c's deadline (1150) counts from 1100");
});

test("now together with clock is a TypeError; bad clocks are rejected", () => {
  assert.throws(() => new TtlCache({ now: 0, clock: () => 0 }), (e) => e instanceof TypeError && /now/.test(e.message) && /clock/.test(e.message));
  assert.throws(() => new TtlCache({ clock: 5 }), (e) => e instanceof TypeError && /clock/.test(e.message));
  // What a clock returns is checked by the call that reads it (the clock is
  // read lazily; a constructor's reading that fails is taken again).
  assert.throws(() => new TtlCache({ clock: () => "1" }).get("k"), (e) => e instanceof TypeError && /clock/.test(e.message));
  assert.throws(() => new TtlCache({ clock: () => NaN }).set("k", 1), (e) => e instanceof RangeError && /clock/.test(e.message));
  assert.throws(() => new TtlCache({ now: "0" }), (e) => e instanceof TypeError && /now/.test(e.message));
  // A clock may be undefined-valued explicitly: that is the default clock.
  assert.ok(Math.abs(new TtlCache({ clock: undefined }).now - Date.now()) < 1000);
});

test("a clock that goes bad later throws from the call that reads it, and the cache stays usable", async () => {
  let t = 0;
  const c = new TtlCache({ clock: () => t, ttl: 100 });
  c.set("a", 1);
  t = Infinity;
  await null;
  assert.throws(() => c.get("a"), (e) => e instanceof RangeError && /clock/.test(e.message));
  t = 50;
  await null;
  assert.equal(c.get("a"), 1);
});

test("a clock that calls back into the cache neither recurses nor loses entries", async () => {
  let t = 0;
  let inside = 0;
  let c = null;
  const clock = () => {
    inside++;
    if (c !== null) {
      c.get("a");
      c.set("from-clock", inside);
    }
    return t;
  };
  c = new TtlCache({ clock, ttl: 100 });
  c.set("a", 1);
  t = 10;
  await null;
  assert.equal(c.get("a"), 1);
  assert.equal(c.get("from-clock"), inside);
  assert.equal(c.size, 2);
});

test("nextExpiry(): Infinity when empty, otherwise at or before the earliest deadline", () => {
  const c = new TtlCache({ now: 0, sweepBudget: 2 });
  assert.equal(c.nextExpiry(), Infinity);
  c.set("forever", 1);
  assert.equal(c.nextExpiry(), Infinity);
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const deadlines = new Map();
  for (let i = 0; i < 300; i++) {
    const ttl = 1 + Math.floor(rand() * 100_000);
    c.set(`k${i}`, i, { ttl });
    deadlines.set(`k${i}`, ttl);
  }
  c.hset("h", "f", 1, { ttl: 7 });
  deadlines.set("h", 7);
  const earliest = () => Math.min(...[...deadlines].filter(([k]) => c.has(k) || k === "h").map(([, d]) => d));
  assert.ok(c.nextExpiry() <= 7, `${c.nextExpiry()}`);
  // A host that ticks at nextExpiry() removes everything, never early, in
  // a bounded number of wake-ups (the wheel narrows the bound as it goes;
  // with whole-ms deadlines the bound is exact once it reaches a bucket of
  // one ms, so ticking at it always makes progress).
  let wakeups = 0;
  for (let t = c.nextExpiry(); t !== Infinity; t = c.nextExpiry()) {
    const live = [...deadlines].filter(([k]) => (k === "h" ? c.hhas("h", "f") : c.has(k)));
    for (const [k, d] of live) assert.ok(t <= d, `nextExpiry ${t} after ${k}'s deadline ${d}`);
    c.tick(t);
    if (++wakeups > 5000) assert.fail("did not converge");
  }
  assert.equal(c.size, 1, "only the entry without a deadline is left");
  assert.ok(earliest() > 0);
  assert.ok(wakeups < 2000, `${wakeups} wake-ups`);
  // Fractional deadlines: still never late (the bound may be up to 1 ms early).
  const f = new TtlCache({ now: 0.25 });
  f.set("a", 1, { ttl: 10.5 });
  f.set("b", 1, { ttl: 100.125 });
  f.set("c", 1, { ttl: 64 });
  assert.ok(f.nextExpiry() <= 10.75, `${f.nextExpiry()}`);
  assert.ok(f.nextExpiry() > 8, `${f.nextExpiry()}`);
  f.tick(10.75);
  assert.ok(f.nextExpiry() <= 64.25, `${f.nextExpiry()}`);
  f.tick(64.25);
  assert.ok(f.nextExpiry() <= 100.375, `${f.nextExpiry()}`);
});

test("nextExpiry(): expired entries a small sweep budget left behind still count", () => {
  const c = new TtlCache({ now: 0, sweepBudget: 1 });
  for (let i = 0; i < 5; i++) c.set(`k${i}`, i, { ttl: 10 });
  c.set("late", 1, { ttl: 10_000 });
  assert.equal(c.tick(100), 1);
  assert.equal(c.size, 5);
  assert.ok(c.nextExpiry() <= 10, `${c.nextExpiry()}`);
});

test("nextExpiry() sees inserts still queued on the JS side", () => {
  const c = new TtlCache({ now: 0 });
  c.set("a", 1, { ttl: 30 }); // an inline insert, not yet handed to the engine
  const t = c.nextExpiry();
  assert.ok(t <= 30 && t >= 0, `${t}`);
});

/** A steady stream: one write per ms of a fake clock, each in its own run. */
async function stream(c, clk, n, check) {
  for (let i = 0; i < n; i++) {
    clk.t += 1;
    await null;
    c.set(`k${i}`, i);
    check(i);
  }
}

test("writes reclaim expired entries: under a steady stream, size stays under twice the live count", async () => {
  for (const opts of [{}, { dispose() {} }, { maxEntries: 100_000 }]) {
    const clk = fakeClock(0);
    const gone = [];
    const c = new TtlCache({ clock: clk.read, ttl: 100, ...opts, dispose: (v, k, reason) => gone.push(reason) });
    let worst = 0;
    await stream(c, clk, 3000, (i) => {
      const live = Math.min(i + 1, 100);
      worst = Math.max(worst, c.size / live);
      assert.ok(c.size < 2 * live, `size ${c.size} with ${live} live after ${i + 1} writes (${JSON.stringify(Object.keys(opts))})`);
    });
    assert.ok(gone.length >= 2800 && gone.every((r) => r === "expired"), `${gone.length} disposed`);
    assert.ok(c.stats().swept >= 2800);
  }
});

test("writes reclaim on the engine's path too (sizeOf, hashes), and in big batches", async () => {
  const clk = fakeClock(0);
  const c = new TtlCache({ clock: clk.read, ttl: 50, maxBytes: 1e9, sizeOf: () => 1 });
  for (let i = 0; i < 2000; i++) {
    clk.t += 1;
    await null;
    if (i % 2) c.set(`k${i}`, i);
    else c.hset(`h${i}`, "f", i);
    const live = Math.min(i + 1, 50);
    assert.ok(c.size < 2 * live, `size ${c.size}, live ${live}`);
  }
  // 300 inserts per run, one run per ms: the reclaim keeps up.
  const d = new TtlCache({ clock: clk.read, ttl: 10 });
  for (let r = 0; r < 100; r++) {
    clk.t += 1;
    await null;
    for (let i = 0; i < 300; i++) d.set(`r${r}:${i}`, i);
    const live = Math.min(r + 1, 10) * 300;
    assert.ok(d.size < 2 * live, `batch ${r}: size ${d.size}, live ${live}`);
  }
});

test("writes faster than the clock's steps, or than sweepBudget, still reclaim about two each", async () => {
  // Found by a probe: the reclaim was paid only when the clock moved, at
  // most sweepBudget at a time, so 2,000 writes per 100 ms step (ttl 1 s)
  // held 10.7 times the live entries, and a sweepBudget of 1 with 2
  // writes per ms 10.5 times. API.md: "under a steady stream of writes
  // with a ttl, size stays under twice the live count".
  const cases = [
    { ttl: 1000, per: 2000, step: 100, steps: 60 },
    { ttl: 100, per: 2, step: 1, steps: 1500, sweepBudget: 1 },
    { ttl: 100, per: 600, step: 1, steps: 300, sweepBudget: 10 },
    { ttl: 50, per: 3, step: 10, steps: 400, maxEntries: 100_000 },
  ];
  for (const { ttl, per, step, steps, ...opts } of cases) {
    const clk = fakeClock(0);
    const c = new TtlCache({ clock: clk.read, ttl, ...opts });
    let n = 0;
    for (let s = 0; s < steps; s++) {
      clk.t += step;
      await null;
      for (let i = 0; i < per; i++) c.set(`k${n++}`, i);
      const live = Math.min(n, Math.ceil(ttl / step) * per);
      assert.ok(c.size < 2 * live, `size ${c.size} with ${live} live, step ${s} of ${JSON.stringify({ ttl, per, step, ...opts })}`);
    }
  }
  // Writes in runs of their own with the clock standing still: the entries
  // expired before them go, though the clock does not move again.
  const clk = fakeClock(0);
  const c = new TtlCache({ clock: clk.read, ttl: 10, sweepBudget: 1 });
  for (let i = 0; i < 100; i++) c.set(`old${i}`, i);
  clk.t = 10;
  for (let i = 0; i < 100; i++) {
    await null;
    c.set(`new${i}`, i);
  }
  assert.ok(c.size < 150, `size ${c.size}: 100 live, 100 expired before the writes`);
  // A manual clock moved by tick() alone: the writes between ticks pay
  // for themselves, and tick() itself still removes at most sweepBudget.
  const m = new TtlCache({ now: 0, ttl: 100, sweepBudget: 5 });
  let k = 0;
  for (let t = 1; t <= 1000; t++) {
    for (let i = 0; i < 20; i++) m.set(`m${k++}`, i);
    assert.ok(m.tick(t) <= 5);
    assert.ok(m.size < 2 * 2000, `size ${m.size} at ${t}`);
  }
});

test("overwrites reclaim too: a stream of them with a ttl does not keep the dead entries", async () => {
  // Found by a probe: an overwrite the JS side does alone (no call into
  // wasm) owed nothing, so 2M overwrites of 100 hot keys, with the clock
  // moving, left 100k expired entries in place (size 1001 times the live).
  const writes = {
    set: (c, k, i) => c.set(k, i, { ttl: 1000 }),
    default: (c, k, i) => c.set(k, i),
    "set + expire": (c, k, i) => (c.set(k, i), c.expire(k, 1000)),
  };
  for (const [name, write] of Object.entries(writes)) {
    const clk = fakeClock(0);
    const c = new TtlCache({ clock: clk.read, ttl: 1000 });
    for (let i = 0; i < 10_000; i++) c.set(`dead${i}`, i, { ttl: 10 });
    for (let i = 0; i < 100; i++) write(c, `hot${i}`, 0);
    for (let step = 1; step <= 200; step++) {
      clk.t += 1;
      await null;
      for (let i = 0; i < 100; i++) write(c, `hot${i}`, step);
    }
    assert.ok(c.size < 200, `${name}: size ${c.size} with 100 live`);
  }
  // The clock standing still once the dead ones expired: overwrites in
  // runs of their own still pay, as inserts do.
  const clk = fakeClock(0);
  const c = new TtlCache({ clock: clk.read, ttl: 1000 });
  for (let i = 0; i < 10_000; i++) c.set(`dead${i}`, i, { ttl: 10 });
  for (let i = 0; i < 100; i++) c.set(`hot${i}`, 0);
  clk.t = 10;
  for (let run = 0; run < 200; run++) {
    await null;
    for (let i = 0; i < 100; i++) c.set(`hot${i}`, run);
  }
  assert.ok(c.size < 200, `clock standing still: size ${c.size} with 100 live`);
});

test("overwrites in one long run reclaim as they go, as inserts do", async () => {
  // A probe: 200k overwrites of one live key in one synchronous run, after
  // 200k entries expired, reclaimed 134 of them (the clock stands still
  // within a run, and only a moved clock made overwrites pay).
  const clk = fakeClock(0);
  const c = new TtlCache({ clock: clk.read, ttl: 1000 });
  for (let i = 0; i < 20_000; i++) c.set(`dead${i}`, i, { ttl: 10 });
  c.set("hot", 0);
  clk.t = 20;
  await null;
  for (let i = 0; i < 20_000; i++) c.set("hot", i);
  assert.ok(c.size < 1000, `size ${c.size} after 20,000 overwrites with one live key`);
  assert.equal(c.get("hot"), 19_999);
  // A manual clock: a tick sweeps its budget, the overwrites the rest.
  const m = new TtlCache({ now: 0, ttl: 1000 });
  for (let i = 0; i < 20_000; i++) m.set(`dead${i}`, i, { ttl: 10 });
  m.set("hot", 0);
  m.tick(20);
  for (let i = 0; i < 20_000; i++) m.set("hot", i);
  assert.ok(m.size < 1000, `manual clock: size ${m.size} after 20,000 overwrites with one live key`);
});

test("a call that throws WRONGTYPE pays no reclaim: nothing removed, no dispose (overwrites owed, or a moved clock)", async () => {
  const seen = [];
  const clk = fakeClock(0);
  for (const manual of [true, false]) {
    const opts = { ttl: 1000, dispose: (v, k, reason) => seen.push(reason) };
    const c = manual ? new TtlCache({ now: 0, ...opts }) : new TtlCache({ clock: clk.read, ...opts });
    for (let i = 0; i < 5_000; i++) c.set(`dead${i}`, i, { ttl: 10 });
    c.hset("h", "f", 1);
    c.set("hot", 0);
    if (manual) {
      c.tick(20); // sweeps its budget of the 5,000
      for (let i = 0; i < 256; i++) c.set("hot", i); // owes a reclaim (every 256), paid by the next call
    } else {
      clk.t = 20;
      await null; // the clock moved: the writes before owe theirs
    }
    const size = c.size;
    seen.length = 0;
    assert.throws(() => c.set("h", 1), /WRONGTYPE/);
    assert.throws(() => c.get("h"), /WRONGTYPE/);
    assert.throws(() => c.set("h", 1, { ttl: 5 }), /WRONGTYPE/);
    // "hot" was an insert queued on this side, not yet linked by the engine.
    assert.throws(() => c.hset("hot", "f", 1), /WRONGTYPE/);
    assert.equal(c.size, size, `${manual ? "manual" : "followed"}: a throwing call removed entries`);
    assert.deepEqual(seen, [], "no dispose");
    c.set("hot", 1); // a valid write pays
    assert.ok(c.size < size, `${manual ? "manual" : "followed"}: the next valid write paid (${c.size} < ${size})`);
  }
});

test("an hset that throws WRONGTYPE on a value with a grace of its own pays no reclaim", async () => {
  const clk = fakeClock(0);
  const seen = [];
  const c = new TtlCache({ clock: clk.read, ttl: 100_000, dispose: (v, k, reason) => seen.push(reason) });
  await c.fetch("g", async () => 1, { grace: 50_000 }); // its slot byte carries SLOT_OWN_GRACE
  for (let i = 0; i < 5_000; i++) c.set(`dead${i}`, i, { ttl: 10 });
  c.tick();
  clk.t = 20;
  await null; // the clock moved: the writes before owe their reclaim
  const size = c.size;
  assert.throws(() => c.hset("g", "f", 1), /WRONGTYPE/);
  assert.equal(c.size, size, "nothing removed");
  assert.deepEqual(seen, [], "no dispose");
  c.set("x", 1); // a valid write pays
  assert.ok(c.size < size);
});

test("a clock that cannot be read yet at construction is read by the first call, which throws if it still fails", async () => {
  let t; // a fake clock set up after the cache (a test's beforeEach)
  const c = new TtlCache({ clock: () => t, ttl: 100 });
  assert.throws(() => c.get("a"), (e) => e instanceof TypeError && /clock/.test(e.message));
  t = 1_000;
  await null;
  c.set("a", 1);
  assert.equal(c.ttl("a"), 100);
  t = 1_100;
  await null;
  assert.equal(c.get("a"), undefined);
  let ready = false;
  const d = new TtlCache({
    clock: () => {
      if (!ready) throw new Error("not installed yet");
      return 5;
    },
  });
  assert.throws(() => d.set("k", 1), /not installed yet/);
  ready = true;
  await null;
  d.set("k", 1);
  assert.equal(d.now, 5);
  assert.equal(d.get("k"), 1);
});

test("a freed cache never reads its clock: every method says it was freed", async () => {
  // Found by a probe: after free(), most methods read a followed clock
  // first (user code on a freed cache), and a clock that threw replaced
  // the "freed" Error with its own.
  let freed = false;
  let reads = 0;
  const c = new TtlCache({
    clock: () => {
      if (freed) {
        reads++;
        throw new Error("clock read after free()");
      }
      return 0;
    },
  });
  c.set("a", 1);
  c.free();
  freed = true;
  const calls = {
    get: () => c.get("a"),
    set: () => c.set("a", 1),
    has: () => c.has("a"),
    peek: () => c.peek("a"),
    delete: () => c.delete("a"),
    ttl: () => c.ttl("a"),
    hset: () => c.hset("h", "f", 1),
    stats: () => c.stats(),
    nextExpiry: () => c.nextExpiry(),
    tick: () => c.tick(),
    purge: () => c.purge(),
    size: () => c.size,
    now: () => c.now,
  };
  for (const [name, call] of Object.entries(calls)) {
    await null; // a run of its own: the reading is dropped
    assert.throws(call, /was freed/, name);
  }
  await null;
  await assert.rejects(c.fetch("a", () => 1), /was freed/);
  assert.equal(reads, 0);
});

// API.md (Capacity): "An error thrown by dispose reaches the caller only
// after the cache's state is complete and consistent". A write pays the
// reclaim the writes before it owe, first; a dispose that threw there lost
// the write itself (a probe: set("new0", 0) threw and get("new0") was
// undefined), while one that threw for "replaced" or "evicted" did not.
test("a dispose that throws in the reclaim a write pays first: the write lands, then the error reaches its caller", async () => {
  const err = new Error("boom");
  const setup = async () => {
    const clk = fakeClock(1000);
    let armed = false;
    const c = new TtlCache({
      clock: clk.read,
      dispose: () => {
        if (armed) throw err;
      },
    });
    c.hset("h", "f", 1); // a call into wasm takes the inserts before it
    for (let i = 0; i < 10; i++) c.set(`old${i}`, i, { ttl: 10 });
    await null;
    clk.t = 2000;
    await null;
    armed = true;
    return c;
  };
  const writes = {
    "set": (c) => c.set("new", "v"),
    "set with options": (c) => c.set("new", "v", { ttl: 60_000 }),
    "hset": (c) => c.hset("nh", "f", "v"),
  };
  for (const [name, write] of Object.entries(writes)) {
    const c = await setup();
    const before = c.stats().entries;
    assert.throws(() => write(c), (e) => e === err, name);
    assert.ok(c.stats().entries < before, `${name}: the reclaim ran`);
    assert.equal(name === "hset" ? c.hget("nh", "f") : c.get("new"), "v", `${name}: the write landed`);
  }
  // A fetch stores its result as set does: it rejects with the error, and
  // the value is stored (as with a "replaced" dispose that throws).
  const c = await setup();
  await assert.rejects(
    c.fetch("loaded", async () => "v"),
    (e) => e === err,
  );
  assert.equal(c.get("loaded"), "v");
});

test("a followed clock's owed reclaim: never paid by a read that does not touch, nor by a call that throws for its arguments", async () => {
  // Found by a probe: the first call of a run after the clock moved paid
  // the reclaim the writes owed (removing expired entries, calling
  // dispose), whatever it was: has("x") disposed four entries, and
  // set(k, v, { ttl: -1 }) removed six before its RangeError (a dispose
  // that threw there even replaced the argument's error with its own).
  const setup = async () => {
    const clk = fakeClock(1000);
    const gone = [];
    const c = new TtlCache({ clock: clk.read, dispose: (v, k) => gone.push(k) });
    c.hset("h", "f", 1); // first: a call into wasm pays (and forgives) what the inserts before it owe
    for (let i = 0; i < 10; i++) c.set(`k${i}`, i, { ttl: 10 });
    c.set("live", "x");
    await null;
    clk.t = 2000;
    await null;
    return { c, gone };
  };
  const reads = {
    peek: (c) => c.peek("k1"),
    has: (c) => c.has("other"),
    ttl: (c) => c.ttl("live"),
    // (Not keys(): a walk of the whole cache purges first, for the
    // contract's bound on the dead entries a call steps over; see
    // walk-purge.test.mjs.)
    stats: (c) => c.stats(),
    nextExpiry: (c) => c.nextExpiry(),
    now: (c) => c.now,
    hhas: (c) => c.hhas("h", "f"),
    httl: (c) => c.httl("h", "f"),
  };
  for (const [name, read] of Object.entries(reads)) {
    const { c, gone } = await setup();
    for (let i = 0; i < 3; i++) read(c);
    assert.deepEqual(gone, [], `${name} disposed nothing`);
    assert.equal(c.stats().entries, 12, `${name} removed nothing`);
  }
  const bad = {
    "set ttl -1": (c) => c.set("new", 1, { ttl: -1 }),
    "set idle NaN": (c) => c.set("new", 1, { idle: NaN }),
    "set ttl with expireAt": (c) => c.set("new", 1, { ttl: 5, expireAt: 5000 }),
    "set keepTtl with ttl": (c) => c.set("new", 1, { keepTtl: true, ttl: 5 }),
    "set number key": (c) => c.set(5, 1),
    "set undefined": (c) => c.set("new", undefined),
    "get number key": (c) => c.get(5),
    "expire bad cond": (c) => c.expire("live", 1, "bad"),
    "hset number field": (c) => c.hset("h", 5, 1),
    "hset ttl 0": (c) => c.hset("h", "g", 1, { ttl: 0 }),
    "tick string": (c) => c.tick("5"),
  };
  for (const [name, call] of Object.entries(bad)) {
    const { c, gone } = await setup();
    assert.throws(call, (e) => e instanceof TypeError || e instanceof RangeError, name);
    assert.deepEqual(gone, [], `${name}: disposed nothing`);
    assert.equal(c.stats().entries, 12, `${name}: removed nothing`);
    // The next write pays.
    c.set("after", 1);
    assert.ok(gone.length > 0 && gone.every((k) => k.startsWith("k")), `${name}: then a write reclaims (${gone})`);
  }
  // A dispose that throws while a write pays does not hide a bad argument's error.
  const clk = fakeClock(0);
  const d = new TtlCache({ clock: clk.read, dispose: () => assert.fail("dispose ran") });
  d.set("a", 1, { ttl: 10 });
  await null;
  clk.t = 100;
  await null;
  assert.throws(() => d.get(42), /^TypeError: key: /);
});

test("reads first in every run (has, then set): the writes still reclaim, size under twice the live count", async () => {
  // A write after a read in the same run pays what the run's clock made due.
  const clk = fakeClock(0);
  const c = new TtlCache({ clock: clk.read, ttl: 100 });
  for (let i = 0; i < 3000; i++) {
    clk.t += 1;
    await null;
    if (!c.has(`k${i}`)) c.set(`k${i}`, i);
    const live = Math.min(i + 1, 100);
    assert.ok(c.size < 2 * live, `size ${c.size} with ${live} live after ${i + 1} writes`);
  }
});

test("sweepBudget: 0 turns every sweep off, the write-time reclaim included", async () => {
  const clk = fakeClock(0);
  const gone = [];
  const c = new TtlCache({ clock: clk.read, ttl: 100, sweepBudget: 0, dispose: (v, k, r) => gone.push(r) });
  await stream(c, clk, 500, () => {});
  assert.equal(c.size, 500, "nothing reclaimed");
  assert.equal(gone.length, 0);
  assert.equal(c.tick(), 0);
  assert.equal(c.size, 500);
  assert.equal(c.get("k0"), undefined, "reads still never return an expired entry");
  // Writes at 1..500 expire at 101..600; at 500, k0..k399 have (k0 read).
  assert.equal(c.purge(), 399, "purge still removes every expired entry");
  assert.equal(c.size, 100);
});

test("restore keeps a manual snapshot manual, at the snapshot's time", async () => {
  const c = new TtlCache({ now: 1000, ttl: 100 });
  c.set("a", 1);
  const r = TtlCache.restore(c.snapshot());
  assert.equal(r.now, 1000);
  await sleep(5);
  assert.equal(r.now, 1000);
  assert.equal(r.get("a"), 1);
  r.tick(1100);
  assert.equal(r.get("a"), undefined);
});

test("restore keeps a followed snapshot following Date.now(), never behind the snapshot's time", async () => {
  // The restored cache reads Date.now() afresh: a ttl long enough that a
  // loaded machine does not expire "a" between the write and that reading.
  const c = new TtlCache({ ttl: 400 });
  c.set("a", 1);
  c.set("b", 2, { ttl: 60_000 });
  const snap = c.snapshot();
  assert.equal(snap[6] & 1, 1, "the clock flag is set");
  const r = TtlCache.restore(snap);
  assert.ok(Math.abs(r.now - Date.now()) < 1000);
  assert.equal(r.get("a"), 1);
  await sleep(500);
  assert.equal(r.get("a"), undefined, "expired in real time, without tick()");
  assert.equal(r.get("b"), 2);
  // A custom clock far ahead of Date.now(): restored following Date.now(),
  // the clock holds at the snapshot's time rather than running back.
  const ahead = new TtlCache({ clock: () => 5e12, ttl: 1000 });
  ahead.set("x", 1);
  const back = TtlCache.restore(ahead.snapshot());
  assert.equal(back.now, 5e12);
  await null;
  assert.equal(back.now, 5e12);
  assert.equal(back.ttl("x"), 1000);
});

test("restore options override the snapshot's clock mode", async () => {
  const followed = new TtlCache({ ttl: 1000 });
  followed.set("a", 1);
  const snap = followed.snapshot();
  const at = followed.now;
  // now: a manual clock, not behind the snapshot's time.
  const m = TtlCache.restore(snap, { now: at + 500 });
  assert.equal(m.now, at + 500);
  await sleep(5);
  assert.equal(m.now, at + 500);
  assert.equal(m.ttl("a"), 500);
  assert.equal(TtlCache.restore(snap, { now: 0 }).now, at, "an earlier now is ignored");
  // clock: follows it (and a manual snapshot can become a followed one).
  const manual = new TtlCache({ now: 100, ttl: 10 });
  manual.set("b", 2);
  let t = 105;
  const f = TtlCache.restore(manual.snapshot(), { clock: () => t });
  assert.equal(f.now, 105);
  t = 110;
  await null;
  assert.equal(f.get("b"), undefined);
  assert.equal(f.snapshot()[6] & 1, 1);
  assert.throws(() => TtlCache.restore(snap, { now: 1, clock: () => 1 }), TypeError);
});

test("a version-1 snapshot restores on a manual clock", async () => {
  const v1 = new Uint8Array(readFileSync(new URL("../data/golden-v1.bin", import.meta.url)));
  const r = TtlCache.restore(v1);
  assert.equal(r.now, 1050);
  await sleep(5);
  assert.equal(r.now, 1050);
  assert.equal(r.snapshot()[6], 0, "re-snapshotted as version 2, manual");
  assert.equal(r.snapshot()[4], 2);
});

test("a write that fails after its reclaim keeps the reclaimed values' dispose calls", () => {
  // The 257th insert hands the queue over and reclaims what it owes before
  // its own write; a write that then fails (a ttl past the largest time)
  // must not drop the dispose calls of what that reclaim removed.
  const gone = new Map();
  const c = new TtlCache({ now: 1e300, ttl: 1e290, sweepBudget: 1, dispose: (v, k, why) => gone.set(k, (gone.get(k) ?? 0) + 1) });
  for (let i = 0; i < 100; i++) c.set(`old${i}`, i);
  c.tick(1e300 + 2e290); // all 100 expired; the budget removes one
  let threw = 0;
  for (let i = 0; i < 600; i++) {
    try {
      c.set(`bad${i}`, i, { ttl: Number.MAX_VALUE });
    } catch (e) {
      assert.ok(e instanceof RangeError, String(e));
      threw++;
    }
    c.set(`new${i}`, i);
  }
  assert.equal(threw, 600);
  c.purge();
  for (let i = 0; i < 100; i++) assert.equal(gone.get(`old${i}`), 1, `old${i} disposed once`);
});

// API.md: "a time at or before the earliest deadline the cache holds".
// With sweeping off, expired entries stay held: a host that purges at
// nextExpiry() removes them. It stepped over them (a probe read the
// contract), so such a host never purged them at all.
test("sweepBudget 0: nextExpiry() is at or before the deadlines of the expired entries it still holds", () => {
  const c = new TtlCache({ now: 0, sweepBudget: 0 });
  for (const [k, ttl] of [["a", 10], ["b", 100], ["c", 100.5], ["d", 5_000_000], ["e", 7]]) c.set(k, 1, { ttl });
  assert.equal(c.nextExpiry(), 7);
  c.tick(20);
  assert.equal(c.size, 5, "nothing swept");
  assert.ok(c.nextExpiry() <= 7, `${c.nextExpiry()}`);
  assert.equal(c.purge(), 2);
  assert.ok(c.nextExpiry() > 20 && c.nextExpiry() <= 100, `${c.nextExpiry()}`);
  c.tick(1000);
  assert.ok(c.nextExpiry() <= 100, `${c.nextExpiry()}`);
  assert.equal(c.purge(), 2);
  assert.ok(c.nextExpiry() > 1000 && c.nextExpiry() <= 5_000_000, `${c.nextExpiry()}`);
  // A followed clock, never ticked.
  let t = 0;
  const f = new TtlCache({ clock: () => t, sweepBudget: 0 });
  f.set("a", 1, { ttl: 10 });
  t = 20;
  f.tick();
  assert.equal(f.size, 1);
  assert.ok(f.nextExpiry() <= 10, `${f.nextExpiry()}`);
});
