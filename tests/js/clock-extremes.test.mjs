// Clock extremes through the package (issue 13): random finite times over the
// whole f64 range (negative, subnormal, +-1.7e308, huge jumps); every call
// finishes, fails only with TypeError/RangeError (never a wasm RuntimeError),
// and purge() leaves nothing expired. Plus the exact cases that hung, and the
// `ttl` resolution/overflow rule on every write path.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

test("a clock 2e19 ms past construction: purge, ticks and writes at capacity finish", () => {
  const c = new TtlCache({ now: 0, sweepBudget: Infinity, maxEntries: 2 });
  c.set("a", 1, { expireAt: 3e19 });
  c.set("b", 2, { expireAt: 2.5e19 });
  assert.equal(c.tick(2e19), 0);
  assert.equal(c.purge(), 0);
  c.set("c", 3, { expireAt: 4e19 }); // at capacity: evicts one
  assert.equal(c.size, 2);
  assert.equal(c.tick(2.6e19), 1, "2.5e19 is due");
  c.tick(1e300);
  assert.equal(c.size, 0);
  assert.equal(c.purge(), 0);
});

test("a far origin whose sums round (ulp 16 at 1e17) does not hang and purges exactly", () => {
  const c = new TtlCache({ now: -1e17, sweepBudget: Infinity });
  c.tick(0.5);
  c.set("k", 1, { expireAt: 0.75 });
  assert.equal(c.purge(), 0);
  assert.equal(c.tick(0.6), 0);
  assert.equal(c.get("k"), 1);
  assert.equal(c.tick(0.75), 1);
  assert.equal(c.size, 0);
});

test("ttl rule: below the clock's resolution stores nothing; overflowing the clock is a RangeError", () => {
  const now = 1.7e12; // Date.now()-like: resolution 2^-12 ms
  const c = new TtlCache({ now });
  c.set("k", 1);
  c.set("k", 2, { ttl: 0.0001 }); // overwrite path
  assert.equal(c.has("k"), false, "now + 0.0001 === now: the write deletes");
  c.set("n", 1, { ttl: 0.0001 }); // insert path
  assert.equal(c.has("n"), false);
  c.hset("h", "f", 1, { ttl: 0.0001 });
  assert.equal(c.has("h"), false);
  c.set("k", 3, { ttl: 0.001 });
  assert.equal(c.get("k"), 3, "0.001 is above the resolution");
  assert.equal(c.expire("k", 0.0001), true);
  assert.equal(c.has("k"), false, "expire below the resolution deletes");

  const far = new TtlCache({ now: 1.7e308 });
  // New key (the inline insert path), existing key (inline overwrite), hash, idle.
  assert.throws(() => far.set("k", 1, { ttl: 1e308 }), { name: "RangeError", message: /ttl.*too large for the clock/ });
  assert.equal(far.has("k"), false);
  far.set("k", 1);
  assert.throws(() => far.set("k", 2, { ttl: 1e308 }), { name: "RangeError", message: /too large for the clock/ });
  assert.equal(far.get("k"), 1, "a failed write changes nothing");
  assert.equal(far.ttl("k"), Infinity);
  assert.throws(() => far.set("k", 2, { idle: 1e308 }), { name: "RangeError", message: /idle.*too large/ });
  assert.throws(() => far.hset("h", "f", 1, { ttl: 1e308 }), { name: "RangeError", message: /too large/ });
  assert.throws(() => far.expire("k", 1e308), { name: "RangeError", message: /ms.*too large/ });
  assert.equal(far.ttl("k"), Infinity);
  far.set("k", 3, { ttl: Infinity });
  assert.equal(far.get("k"), 3, "Infinity still means no limit");
  assert.throws(() => new TtlCache({ now: 1e308, ttl: 1e308 }).set("k", 1), { name: "RangeError" });
  // With a sizeOf the write goes through the engine's own path: same rule.
  const sized = new TtlCache({ now: 1.7e308, maxBytes: 100, sizeOf: () => 1 });
  assert.throws(() => sized.set("k", 1, { ttl: 1e308 }), { name: "RangeError", message: /too large/ });
  sized.set("k", 1, { ttl: 1 });
  assert.equal(sized.has("k"), false, "1.7e308 + 1 === now");
});

// ---- randomized -------------------------------------------------------------

function rng(seed) {
  let s = BigInt(seed) * 0x9e3779b97f4a7c15n;
  const M = (1n << 64n) - 1n;
  return () => {
    s = (s + 0x9e3779b97f4a7c15n) & M;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M;
    return z ^ (z >> 31n);
  };
}

const bits = new DataView(new ArrayBuffer(8));
function fromBits(b) {
  bits.setBigUint64(0, b);
  return bits.getFloat64(0);
}

function source(seed) {
  const next = rng(seed);
  const below = (n) => Number(next() % BigInt(n));
  const time = (now) => {
    let t;
    switch (below(11)) {
      case 0: t = fromBits(next()); break; // any bit pattern
      case 1: t = fromBits(next() % (1n << 52n)) * (below(2) ? 1 : -1); break; // subnormal
      case 2: t = [Number.MAX_VALUE, -Number.MAX_VALUE, 1.7e308, -1.7e308, 0, -0, 5e-324][below(7)]; break;
      case 3: t = [1.8e19, 18446744073709552000, 2 ** 53, 2e19, 3e19][below(5)]; break;
      case 4: t = now + below(100); break;
      case 5: t = now * (1 + below(4)); break;
      case 6: t = 1.7e12 + below(1 << 20); break;
      case 7: t = -below(2 ** 40); break;
      default: t = now + 10 ** below(309);
    }
    return Number.isFinite(t) ? t : now;
  };
  const span = () => {
    switch (below(5)) {
      case 0: return Math.abs(fromBits(next())) || 1;
      case 1: return 10 ** below(309);
      case 2: return fromBits(1n + (next() % (1n << 52n))); // subnormal
      default: return 1 + below(1000);
    }
  };
  return { below, time, span };
}

function sequence(seed, steps) {
  const r = source(seed);
  const start = r.time(0);
  const c = new TtlCache({
    now: start,
    ttl: [Infinity, 1000, 1e300][r.below(3)],
    idle: [Infinity, 50][r.below(2)],
    maxEntries: [Infinity, 4, 16][r.below(3)],
    sweepBudget: [Infinity, 0, 2, 1000][r.below(4)],
  });
  const keys = ["a", "b", "c", "d", "e", "f"];
  for (let i = 0; i < steps; i++) {
    const now = c.now;
    const k = keys[r.below(keys.length)];
    const f = ["x", "y", "z"][r.below(3)];
    const opts = [undefined, { ttl: r.span() }, { idle: r.span() }, { expireAt: r.time(now) }, { ttl: r.span(), idle: r.span() }][
      r.below(5)
    ];
    try {
      switch (r.below(15)) {
        case 0: case 1: case 2: c.set(k, i, opts); break;
        case 3: case 4: c.hset(k, f, i, opts); break;
        case 5: c.get(k); break;
        case 6: c.hget(k, f); break;
        case 7: c.tick(r.time(now)); break;
        case 8: c.purge(); break;
        case 9: c.expire(k, r.time(0)); break;
        case 10: c.expireAt(k, r.time(now)); break;
        case 11: c.hexpire(k, f, r.span()); break;
        case 12: c.persist(k); break;
        case 13: if (r.below(8) === 0) c.clear(); else c.delete(k); break;
        default: c.ttl(k); c.has(k); c.hlen(k); [...c.keys()];
      }
    } catch (e) {
      // Wrong type (a hash key as a plain one) or a deadline past the clock's
      // range: normal errors. Anything else, a wasm RuntimeError above all, fails.
      if (!(e instanceof TypeError || e instanceof RangeError)) {
        throw new Error(`seed ${seed} step ${i}: ${e}`, { cause: e });
      }
    }
  }
  c.purge();
  assert.equal(c.size, [...c.keys()].length, `seed ${seed}: purge at ${c.now} left expired keys`);
}

test("random finite times over the whole f64 range: every operation finishes", () => {
  for (let seed = 1; seed <= 300; seed++) sequence(seed, 200);
});
