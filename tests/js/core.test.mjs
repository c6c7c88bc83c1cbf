// Plain-entry behaviour of the packed package, one test per point of the
// contract (../shared/API.md): the two clocks, time, expiry commands,
// capacity, dispose, stats, iteration and memory growth.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

const DAY = 86_400_000;

function recorder() {
  const log = [];
  const dispose = (value, key, reason, field) => log.push({ value, key, reason, field });
  return { log, dispose };
}

test("dual TTL: idle entries go after idle, busy ones at the absolute deadline", () => {
  const c = new TtlCache({ now: 0, ttl: 90 * DAY, idle: 30 * DAY });
  c.set("busy", 1);
  c.set("idle", 2);
  for (let d = 10; d < 90; d += 10) {
    c.tick(d * DAY);
    assert.equal(c.get("busy"), 1, `busy read on day ${d}`);
  }
  assert.equal(c.has("idle"), false, "unread for 30 days");
  c.tick(90 * DAY - 1);
  assert.equal(c.peek("busy"), 1);
  c.tick(90 * DAY);
  assert.equal(c.get("busy"), undefined, "never later than 90 days after the write");
});

test("an entry is expired when its deadline <= now, swept or not", () => {
  const c = new TtlCache({ now: 1000, sweepBudget: 0 });
  c.set("k", "v", { ttl: 10 });
  c.tick(1009.999);
  assert.equal(c.get("k"), "v");
  c.tick(1010);
  assert.equal(c.size, 1, "sweepBudget 0: nothing swept");
  assert.equal(c.get("k"), undefined);
  assert.equal(c.peek("k"), undefined);
  assert.equal(c.has("k"), false);
  assert.equal(c.ttl("k"), undefined);
  assert.deepEqual([...c.keys()], []);
});

test("peek, has and iteration do not restart the idle window; get and touch do", () => {
  const c = new TtlCache({ now: 0, idle: 10 });
  c.set("a", 1);
  c.set("b", 2);
  c.set("c", 3);
  c.tick(8);
  c.peek("a");
  c.has("a");
  [...c.entries()];
  c.forEach(() => {});
  assert.equal(c.get("b"), 2);
  assert.equal(c.touch("c"), true);
  c.tick(10);
  assert.equal(c.has("a"), false);
  assert.equal(c.has("b"), true);
  assert.equal(c.ttl("c"), 8);
  assert.equal(c.touch("zzz"), false);
});

test("per-entry options override defaults; Infinity means no limit", () => {
  const c = new TtlCache({ now: 0, ttl: 100, idle: 50 });
  c.set("dflt", 0);
  c.set("short", 0, { ttl: 10 });
  c.set("forever", 0, { ttl: Infinity, idle: Infinity });
  c.set("noIdle", 0, { idle: Infinity });
  assert.equal(c.ttl("dflt"), 50);
  assert.equal(c.ttl("short"), 10);
  assert.equal(c.ttl("forever"), Infinity);
  assert.equal(c.ttl("noIdle"), 100);
  c.tick(1e12);
  assert.equal(c.get("forever"), 0);
  assert.deepEqual([...c.keys()], ["forever"]);
});

test("time: default is Date.now(), tick() never runs backwards, now reads the clock", () => {
  const before = Date.now();
  const c = new TtlCache();
  assert.ok(c.now >= before && c.now <= Date.now());
  const d = new TtlCache({ now: 500 });
  assert.equal(d.tick(400), 0);
  assert.equal(d.now, 500);
  d.tick(600);
  assert.equal(d.now, 600);
  const e = new TtlCache({ now: 0 });
  e.tick();
  assert.ok(e.now >= before, "tick() with no argument uses Date.now()");
});

test("tick removes at most sweepBudget per call and returns the count; purge removes the rest", () => {
  const c = new TtlCache({ now: 0, sweepBudget: 100 });
  for (let i = 0; i < 350; i++) c.set(`k${i}`, i, { ttl: 1 + (i % 7) });
  assert.equal(c.tick(10), 100);
  assert.equal(c.tick(11), 100);
  assert.equal(c.size, 150);
  assert.equal(c.purge(), 150);
  assert.equal(c.size, 0);
  assert.equal(c.tick(12), 0);
  const s = c.stats();
  assert.equal(s.expired, 350);
  assert.equal(s.swept, 350);
});

test("default sweepBudget is 1000", () => {
  const c = new TtlCache({ now: 0, ttl: 5 });
  for (let i = 0; i < 2500; i++) c.set(`k${i}`, i);
  assert.equal(c.tick(5), 1000);
  assert.equal(c.tick(6), 1000);
  assert.equal(c.tick(7), 500);
});

test("after a long pause each tick removes a full budget, so `while (tick() > 0)` drains", () => {
  // Deadlines a minute and a day out sit in the wheel's coarse buckets; a
  // tick used to spend its work on moving them down first (0, 564, 936 for
  // 1500 entries of 60 s).
  for (const ttl of [60_000, DAY]) {
    const c = new TtlCache({ now: 0, ttl });
    for (let i = 0; i < 2500; i++) c.set(`k${i}`, i);
    const ticks = [];
    let n;
    do ticks.push((n = c.tick(3 * ttl)));
    while (n > 0);
    assert.deepEqual(ticks, [1000, 1000, 500, 0], `ttl ${ttl}`);
    assert.equal(c.size, 0);
  }
});

test("expire / expireAt with NX, XX, GT, LT as in Redis", () => {
  const c = new TtlCache({ now: 0 });
  c.set("k", 1);
  assert.equal(c.expire("k", 100, "XX"), false, "XX: no deadline yet");
  assert.equal(c.expire("k", 100, "GT"), false, "GT: none counts as infinite");
  assert.equal(c.expire("k", 100, "NX"), true);
  assert.equal(c.expire("k", 200, "NX"), false);
  assert.equal(c.expire("k", 50, "GT"), false);
  assert.equal(c.expire("k", 150, "GT"), true);
  assert.equal(c.ttl("k"), 150);
  assert.equal(c.expire("k", 200, "LT"), false);
  assert.equal(c.expire("k", 120, "LT"), true);
  assert.equal(c.expire("k", 130, "XX"), true);
  assert.equal(c.ttl("k"), 130);
  assert.equal(c.expireAt("k", 90), true);
  assert.equal(c.ttl("k"), 90);
  assert.equal(c.expireAt("k", new Date(95)), true, "a Date works");
  assert.equal(c.ttl("k"), 95);
  c.set("p", 2);
  assert.equal(c.persist("p"), false, "no clock to drop");
  assert.equal(c.persist("k"), true);
  assert.equal(c.ttl("k"), Infinity);
  assert.equal(c.expire("missing", 10), false);
  assert.equal(c.persist("missing"), false);
  assert.equal(c.ttl("missing"), undefined);
});

test("expire(ms <= 0) and expireAt(past) delete, reason 'deleted'", () => {
  const { log, dispose } = recorder();
  const c = new TtlCache({ now: 1000, dispose });
  c.set("a", 1).set("b", 2).set("c", 3);
  assert.equal(c.expire("a", 0), true);
  assert.equal(c.expire("b", -5), true);
  assert.equal(c.expireAt("c", new Date(999)), true);
  assert.equal(c.size, 0);
  assert.deepEqual(log.map((r) => [r.key, r.reason]), [["a", "deleted"], ["b", "deleted"], ["c", "deleted"]]);
});

test("expireAt(new Date(...)) works with the default Date.now() clock", () => {
  const start = Date.now();
  const c = new TtlCache();
  c.set("k", 1);
  assert.equal(c.expireAt("k", new Date(Date.now() + 60_000)), true);
  // The cache's clock is its construction time; Date.now() may have moved on since.
  const t = c.ttl("k");
  assert.ok(t >= 60_000 && t <= 60_000 + (Date.now() - start), `ttl ${t}`);
});

test("set with expireAt, keepTtl, and a past expireAt", () => {
  const { log, dispose } = recorder();
  const c = new TtlCache({ now: 0, ttl: 100, dispose });
  c.set("k", 1, { expireAt: 40 });
  assert.equal(c.ttl("k"), 40);
  c.tick(10);
  c.set("k", 2, { keepTtl: true });
  assert.equal(c.ttl("k"), 30, "deadline kept");
  assert.equal(c.get("k"), 2);
  c.set("k", 3);
  assert.equal(c.ttl("k"), 100, "a plain set restarts the clocks");
  c.set("new", 1, { keepTtl: true });
  assert.equal(c.ttl("new"), 100, "keepTtl on a missing key uses the defaults");
  c.set("k", 4, { expireAt: 5 });
  assert.equal(c.has("k"), false, "a past expireAt deletes");
  assert.deepEqual(
    log.map((r) => [r.key, r.value, r.reason]),
    [["k", 1, "replaced"], ["k", 2, "replaced"], ["k", 3, "deleted"]],
  );
});

test("an overwrite that moves the deadline earlier is swept at the new deadline", () => {
  // Option-less writes take set()'s inline path; this one must still reach
  // the expiry index, or tick() would sweep at the old, later deadline.
  for (const dispose of [undefined, () => {}]) {
    const c = new TtlCache({ now: 0, ttl: 100, dispose });
    c.set("k", 1);
    c.expire("k", 10_000);
    c.set("k", 2);
    assert.equal(c.ttl("k"), 100);
    assert.equal(c.tick(99), 0);
    assert.equal(c.tick(100), 1, `swept at the new deadline (dispose: ${typeof dispose})`);
    assert.equal(c.size, 0);
  }
});

test("a write whose deadline rounds to now is never stored", () => {
  // now + 1e-300 === now in doubles: the entry is expired as it is written.
  const c = new TtlCache({ now: 1000, ttl: 1e-300 });
  c.set("a", 1);
  c.set("b", 2, { ttl: 10 });
  c.set("c", 3); // with slots already reserved, as most writes find them
  assert.equal(c.size, 1);
  assert.deepEqual([...c.keys()], ["b"]);
  assert.equal(c.stats().inserted, 1);
});

test("set returns this; get/delete/clear and size", () => {
  const c = new TtlCache({ now: 0 });
  assert.equal(c.set("a", 1), c);
  c.set("b", 2).set("c", 3);
  assert.equal(c.size, 3);
  assert.equal(c.delete("b"), true);
  assert.equal(c.delete("b"), false);
  assert.equal(c.size, 2);
  assert.equal(c.clear(), undefined);
  assert.equal(c.size, 0);
  assert.equal(c.get("a"), undefined);
  c.set("a", 5);
  assert.equal(c.get("a"), 5, "usable after clear");
});

test("values of every kind round-trip by identity; null and falsy values are values", () => {
  const c = new TtlCache({ now: 0 });
  const obj = { x: 1 };
  const fn = () => 1;
  for (const [k, v] of [["null", null], ["zero", 0], ["empty", ""], ["false", false], ["nan", NaN], ["obj", obj], ["fn", fn]]) {
    c.set(k, v);
    assert.ok(Object.is(c.get(k), v), k);
    assert.equal(c.has(k), true);
  }
});

test("keys are exact strings: '', __proto__, constructor, lone surrogates are distinct", () => {
  const c = new TtlCache({ now: 0 });
  const keys = ["", "__proto__", "constructor", "toString", "\uD800", "\uDC00", "\uD800\uDC00", "a\u0000b", "a"];
  keys.forEach((k, i) => c.set(k, i));
  assert.equal(c.size, keys.length);
  keys.forEach((k, i) => assert.equal(c.get(k), i, JSON.stringify(k)));
  assert.deepEqual([...c.keys()], keys);
  assert.equal({}.polluted, undefined);
});

test("iteration yields live entries only, in insertion order, and forEach passes (value, key, cache)", () => {
  const c = new TtlCache({ now: 0 });
  c.set("a", 1, { ttl: 5 });
  c.set("b", 2);
  c.set("c", 3, { ttl: 5 });
  c.set("d", 4);
  c.tick(5);
  assert.deepEqual([...c.keys()], ["b", "d"]);
  assert.deepEqual([...c.values()], [2, 4]);
  assert.deepEqual([...c.entries()], [["b", 2], ["d", 4]]);
  assert.deepEqual([...c], [["b", 2], ["d", 4]]);
  const seen = [];
  const that = {};
  c.forEach(function (v, k, cache) {
    seen.push([v, k, cache === c, this === that]);
  }, that);
  assert.deepEqual(seen, [[2, "b", true, true], [4, "d", true, true]]);
});

test("dispose: expired, evicted, deleted, replaced, cleared; called after the state change", () => {
  const events = [];
  let c;
  c = new TtlCache({
    now: 0,
    maxEntries: 2,
    dispose: (value, key, reason, field) => {
      events.push([key, value, reason, field, c.has(key), c.size]);
    },
  });
  c.set("a", 1, { ttl: 10 });
  c.set("a", 2, { ttl: 10 });
  c.set("b", 3);
  c.tick(10);
  c.set("c", 4);
  c.set("d", 5);
  c.delete("d");
  c.clear();
  const reasons = events.map((e) => e[2]);
  assert.deepEqual(reasons.slice(0, 2), ["replaced", "expired"]);
  assert.ok(reasons.includes("evicted"));
  assert.ok(reasons.includes("deleted"));
  assert.equal(reasons.at(-1), "cleared");
  for (const e of events) {
    assert.equal(e[3], undefined, "field is undefined for plain entries");
    if (e[2] !== "replaced") assert.equal(e[4], false, `${e[0]} already gone when disposed (${e[2]})`);
  }
  assert.equal(events.find((e) => e[2] === "replaced")[1], 1, "the old value is disposed");
});

test("of several errors thrown by dispose, the first one reaches the caller", () => {
  const seen = [];
  const c = new TtlCache({
    now: 0,
    dispose: (value, key) => {
      seen.push(key);
      throw new Error(key);
    },
  });
  for (let i = 0; i < 5; i++) c.set(`k${i}`, i, { ttl: 10 });
  assert.throws(
    () => c.tick(10),
    (e) => e.message === seen[0],
  );
  assert.equal(seen.length, 5);
});

test("an error thrown by dispose reaches the caller after the cache is consistent", () => {
  let calls = 0;
  const c = new TtlCache({
    now: 0,
    dispose: () => {
      calls++;
      throw new Error("boom");
    },
  });
  for (let i = 0; i < 5; i++) c.set(`k${i}`, i, { ttl: 10 });
  c.set("keep", 1);
  assert.throws(() => c.tick(10), /boom/);
  assert.equal(calls, 5, "every dispose ran despite the first throwing");
  assert.equal(c.size, 1);
  assert.equal(c.now, 10);
  assert.equal(c.get("keep"), 1);
  assert.throws(() => c.set("keep", 2), /boom/, "replaced");
  assert.equal(c.get("keep"), 2, "the write happened");
  c.set("x", 1);
  assert.equal(c.get("x"), 1, "still fully usable");
});

test("capacity: maxEntries is never exceeded; expired entries are reclaimed before live ones", () => {
  const { log, dispose } = recorder();
  const c = new TtlCache({ now: 0, maxEntries: 10, sweepBudget: 0, dispose });
  for (let i = 0; i < 5; i++) c.set(`short${i}`, i, { ttl: 5 });
  for (let i = 0; i < 5; i++) c.set(`long${i}`, i);
  c.tick(5);
  assert.equal(log.length, 0, "sweepBudget 0: the tick swept nothing");
  c.set("new1", 1).set("new2", 2);
  assert.deepEqual(log.map((r) => r.reason), ["expired", "expired"]);
  assert.ok(log.every((r) => r.key.startsWith("short")), "only expired entries went");
  for (let i = 0; i < 5; i++) assert.equal(c.has(`long${i}`), true);
  for (let i = 0; i < 1000; i++) {
    c.set(`x${i}`, i);
    assert.ok(c.size <= 10);
  }
  assert.equal(c.stats().evicted > 0, true);
});

test("capacity: eviction keeps a recently read entry over one never read since written", () => {
  const c = new TtlCache({ now: 0, maxEntries: 100 });
  for (let i = 0; i < 100; i++) c.set(`k${i}`, i);
  for (let i = 0; i < 50; i++) c.get(`k${i}`);
  for (let i = 0; i < 40; i++) c.set(`new${i}`, i);
  for (let i = 0; i < 50; i++) assert.equal(c.has(`k${i}`), true, `read k${i} survived`);
});

test("capacity: an overwrite counts as a use, like a read, for eviction", () => {
  const c = new TtlCache({ now: 0, maxEntries: 100 });
  for (let i = 0; i < 100; i++) c.set(`k${i}`, i);
  for (let i = 0; i < 50; i++) c.set(`k${i}`, -i);
  for (let i = 0; i < 40; i++) c.set(`new${i}`, i);
  for (let i = 0; i < 50; i++) assert.equal(c.peek(`k${i}`), -i, `rewritten k${i} survived`);
});

test("capacity: an entry read after another was last written is kept over it", () => {
  // API.md: eviction "must keep a recently read entry over one never read
  // since it was written". Found by a probe: a write counted as a read, so
  // a key read and then rewritten outlasted a key read after the rewrite
  // (LRU evicts the rewritten one: its last use is older).
  const cases = [
    [2, "set a, set b, get b, set b, get a, set c"],
    [3, "set a, set b, set c, get b, get c, set b, set c, get a, set d"],
    [3, "set a, set b, set c, get a, get b, get c, get a, get b, get c, set b, set c, get a, set d"],
    [2, "set a, set b, get b, get b, get b, set b, get a, set c"],
    [4, "set a, set b, set c, set d, get a, get b, get c, get d, set b, set c, set d, get a, set e"],
  ];
  // The same with each key a one-field hash: a field write is a write of
  // the key (a probe: a hash read, then written, kept its reads' credit and
  // outlasted a key read after that write).
  const hashCases = [...cases, [2, "set old, get old, get old, set old, set a, get a, set new"]];
  for (const [max, script] of hashCases) {
    for (const mode of ["plain", "plain, options", "hash"]) {
      const opts = mode === "plain, options" ? { ttl: 1e9 } : undefined;
      const c = new TtlCache({ now: 0, maxEntries: max });
      for (const step of script.split(", ")) {
        const [op, k] = step.split(" ");
        if (mode === "hash") {
          if (op === "set") c.hset(k, "f", 1);
          else c.hget(k, "f");
        } else if (op === "set") c.set(k, 1, opts);
        else c.get(k);
      }
      assert.equal(c.has("a"), true, `${script} (maxEntries ${max}, ${mode})`);
    }
  }
  // Random scripts, each eviction checked against the rule.
  for (let seed = 1; seed <= 300; seed++) {
    let x = seed * 2654435761;
    const rand = (n) => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) % n);
    const max = 2 + rand(6);
    const keys = max + 1 + rand(6);
    const wrote = new Map();
    const read = new Map();
    let t = 0;
    let writing = null;
    const c = new TtlCache({
      now: 0,
      maxEntries: max,
      dispose: (v, k, why) => {
        if (why !== "evicted") return;
        const r = read.get(k) ?? -1;
        if (!(r > wrote.get(k))) return;
        for (const y of c.keys()) {
          if (y === k || y === writing) continue;
          const yw = wrote.get(y);
          assert.ok(!((read.get(y) ?? -1) < yw && r > yw), `seed ${seed}: evicted ${k}, read at ${r}, kept ${y}, written at ${yw} and not read since`);
        }
      },
    });
    for (let i = 0; i < 40; i++) {
      const k = `k${rand(keys)}`;
      t++;
      if (rand(2)) {
        writing = k;
        c.set(k, t, rand(4) === 0 ? { ttl: 1e9 } : undefined);
        writing = null;
        wrote.set(k, t);
        read.delete(k);
      } else if (c.get(k) !== undefined) {
        read.set(k, t);
      }
    }
  }
});

test("capacity: a one-off scan does not flush the hot set (S3-FIFO)", () => {
  const c = new TtlCache({ now: 0, maxEntries: 1000 });
  for (let i = 0; i < 500; i++) c.set(`hot${i}`, i);
  for (let r = 0; r < 3; r++) for (let i = 0; i < 500; i++) c.get(`hot${i}`);
  for (let i = 0; i < 5000; i++) {
    c.set(`scan${i}`, i);
    if (i % 50 === 0) for (let j = 0; j < 500; j += 7) c.get(`hot${j}`);
  }
  let left = 0;
  for (let i = 0; i < 500; i++) left += c.has(`hot${i}`) ? 1 : 0;
  assert.ok(left >= 450, `${left} of 500 hot keys survived a 5x scan`);
});

for (const room of [false, true]) {
  test(`capacity: an evicted key that returns soon goes to the main queue (ghost${room ? ", written with room to spare" : ", at capacity"})`, () => {
    const { log, dispose } = recorder();
    const c = new TtlCache({ now: 0, maxEntries: 10, dispose });
    for (let i = 0; i < 10; i++) c.set(`a${i}`, i);
    c.set("b0", 0); // evicts a0, never read: remembered as a ghost
    assert.deepEqual(log.map((r) => [r.key, r.reason]), [["a0", "evicted"]]);
    // With room, the write takes the JS-side path; at capacity, the engine's.
    if (room) c.delete("b0");
    c.set("a0", 0); // returns: straight to main
    c.set("fresh", 0); // a new key written at the same time goes to small
    for (let i = 1; i <= 12; i++) c.set(`b${i}`, i);
    assert.equal(c.has("a0"), true, "the returning key outlived the unread newcomers");
    assert.equal(c.has("fresh"), false, "the fresh key, never read, was evicted");
  });
}

test("capacity: a key written in place of a longer-lived victim expires at its own deadline", () => {
  // At capacity a new key takes its victim's slot, which stays in the
  // expiry wheel where it was unless the new deadline is earlier.
  const { log, dispose } = recorder();
  const c = new TtlCache({ now: 0, ttl: 100, maxEntries: 4, dispose });
  c.set("first", 0);
  c.set("long", 1, { ttl: 10_000 });
  c.set("k2", 2).set("k3", 3);
  c.set("k4", 4); // evicts "first"
  c.set("new", 5); // evicts "long", into its slot
  assert.deepEqual(log.map((r) => [r.key, r.reason]), [["first", "evicted"], ["long", "evicted"]]);
  assert.equal(c.ttl("new"), 100);
  assert.ok(c.nextExpiry() <= 100);
  c.tick(99);
  assert.equal(c.size, 4);
  c.tick(100);
  assert.deepEqual(log.slice(2).map((r) => [r.key, r.reason]).sort(), [
    ["k2", "expired"], ["k3", "expired"], ["k4", "expired"], ["new", "expired"],
  ]);
  assert.equal(c.size, 0);
  assert.equal(c.stats().entries, 0);
});

test("capacity: ghosts are invisible: size, reads, iteration, delete, snapshot", () => {
  const c = new TtlCache({ now: 0, maxEntries: 4 });
  for (let i = 0; i < 8; i++) c.set(`k${i}`, i); // k0..k3 evicted unread: ghosts
  const live = ["k4", "k5", "k6", "k7"];
  assert.equal(c.size, 4);
  assert.deepEqual([...c.keys()], live);
  assert.deepEqual([...c.values()], [4, 5, 6, 7]);
  for (const k of ["k0", "k1", "k2", "k3"]) {
    assert.equal(c.has(k), false);
    assert.equal(c.get(k), undefined);
    assert.equal(c.peek(k), undefined);
    assert.equal(c.ttl(k), undefined);
    assert.equal(c.touch(k), false);
    assert.equal(c.persist(k), false);
    assert.equal(c.expire(k, 10), false);
    assert.equal(c.delete(k), false);
    assert.equal(c.hget(k, "f"), undefined);
    assert.equal(c.hlen(k), 0);
  }
  assert.equal(c.size, 4);
  const back = TtlCache.restore(c.snapshot());
  assert.deepEqual([...back.keys()], live);
  // A ghost key can come back as a hash.
  assert.equal(c.hset("k0", "f", 1), true);
  assert.equal(c.hget("k0", "f"), 1);
  assert.equal(c.size, 4);
  assert.ok(!c.has("k4"), "the hash took k4's place");
});

test("capacity: random writes and deletes keep size, keys() and dispose in step", () => {
  // A model of which keys are live, kept from the calls and the dispose log:
  // ghosts (evicted keys remembered by the policy) must never leak into it.
  let seed = 7;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const model = new Set();
  const c = new TtlCache({
    now: 0,
    maxEntries: 16,
    dispose: (v, k, reason) => {
      if (reason === "evicted" || reason === "deleted") model.delete(k);
    },
  });
  for (let i = 0; i < 20_000; i++) {
    const k = `k${rand(64)}`;
    const op = rand(10);
    if (op < 6) {
      c.set(k, i);
      model.add(k);
    } else if (op < 8) {
      if (c.get(k) !== undefined) assert.ok(model.has(k));
    } else {
      const had = model.has(k); // dispose drops it during the call
      assert.equal(c.delete(k), had);
    }
    assert.equal(c.size, model.size, `step ${i}`);
  }
  assert.deepEqual([...c.keys()].sort(), [...model].sort());
});

test("capacity: maxBytes with sizeOf; an entry that can never fit is a RangeError", () => {
  const { log, dispose } = recorder();
  const c = new TtlCache({ now: 0, maxBytes: 100, sizeOf: (v) => v.length, dispose });
  c.set("a", "x".repeat(40));
  c.set("b", "x".repeat(40));
  c.set("c", "x".repeat(40));
  assert.equal(c.stats().bytes <= 100, true);
  assert.equal(log.length, 1);
  assert.equal(log[0].reason, "evicted");
  assert.throws(() => c.set("big", "x".repeat(101)), RangeError);
  assert.equal(c.has("big"), false);
  assert.throws(() => new TtlCache({ maxBytes: 10 }), TypeError, "maxBytes needs sizeOf");
});

test("stats: hits, misses, expired, evicted, size and more", () => {
  const c = new TtlCache({ now: 0, maxEntries: 3 });
  c.set("a", 1, { ttl: 5 });
  c.get("a");
  c.get("zz");
  c.tick(5);
  c.get("a");
  for (let i = 0; i < 5; i++) c.set(`k${i}`, i);
  const s = c.stats();
  assert.equal(s.hits, 1);
  assert.equal(s.misses, 2);
  assert.equal(s.expired, 1);
  assert.equal(s.evicted, 2);
  assert.equal(s.size, 3);
  assert.equal(s.hitRatio, 1 / 3);
  for (const k of ["deleted", "inserted", "updated", "ticks", "swept", "entries", "bytes", "wasmBytes", "now"]) {
    assert.equal(typeof s[k], "number", k);
  }
});

test("views of wasm memory survive growth: 300k entries written and read back", () => {
  const c = new TtlCache({ now: 0, ttl: 1e9 });
  const other = new TtlCache({ now: 0 });
  other.set("x", "y");
  const N = 300_000;
  for (let i = 0; i < N; i++) c.set(`key:${i}`, i);
  for (let i = 0; i < N; i++) if (c.get(`key:${i}`) !== i) assert.fail(`key:${i}`);
  assert.equal(c.size, N);
  assert.equal(other.get("x"), "y", "another instance's views were refreshed too");
  c.tick(1e9);
  assert.equal(c.get("key:0"), undefined);
});

test("many instances share one wasm memory and stay independent", () => {
  const caches = Array.from({ length: 20 }, (_, i) => new TtlCache({ now: i, ttl: 100 }));
  caches.forEach((c, i) => {
    for (let j = 0; j < 2000; j++) c.set(`k${j}`, i * 10000 + j);
  });
  caches.forEach((c, i) => assert.equal(c.get("k1999"), i * 10000 + 1999));
  caches[3].tick(1000);
  assert.equal(caches[3].get("k1"), undefined);
  assert.equal(caches[4].get("k1"), 40001);
});
