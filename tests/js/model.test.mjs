// Randomized model test of the packed package: random operation sequences
// with random clock steps, every observable checked after each step against
// a deliberately naive model (clocks per key and field, liveness by brute
// force; no wheel, no queues, no sweeping).
//
// The Rust model test (tests/model.rs) holds the engine to the same model.
// This one exists for what only the JS side does: writes done without a
// call into wasm (inline overwrites, inserts into reserved slots), the key
// index with its ghosts, and the replay of the engine's removal log.
// Eviction choice is the cache's business, so the model learns evictions
// from `dispose` and checks everything else `dispose` reports.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

const INF = Infinity;
const KEYS = ["k0", "k1", "k2", "k3", "k4", "k5"];
const FIELDS = ["a", "b", ""];
const CONDS = [undefined, "NX", "XX", "GT", "LT"];

/** xorshift32: the same sequence for the same seed, so a failure names its seed. */
function rng(seed) {
  let x = seed * 0x9e3779b1 || 1;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

const deadline = (c) => Math.min(c.abs, c.last + c.idle);
const live = (c, now) => deadline(c) > now;

/** Redis's expiry conditions, against the current absolute deadline. */
function holds(cond, cur, at) {
  if (cond === "NX") return cur === INF;
  if (cond === "XX") return cur !== INF;
  if (cond === "GT") return at > cur;
  if (cond === "LT") return at < cur;
  return true;
}

class Harness {
  constructor(seed, extra) {
    const r = rng(seed);
    this.r = r;
    this.now = 0;
    this.ttl = [INF, 40, 15][r(3)];
    this.idle = [INF, 25, 8][r(3)];
    this.max = [undefined, undefined, 3, 5][r(4)];
    this.removed = [];
    const opts = { now: 0, ttl: this.ttl, idle: this.idle, sweepBudget: [1000, 1, 3][r(3)] };
    if (this.max !== undefined) opts.maxEntries = this.max;
    opts.dispose = (value, key, reason, field) => this.removed.push({ value, key, reason, field });
    this.c = new TtlCache({ ...opts, ...extra });
    this.model = new Map(); // key -> { clk, v } | { clk, fields: Map(field -> { clk, v }) }
    this.next = 1;
    this.before = undefined; // the live value the current write found at its key or field
  }

  keyLive(k) {
    const e = this.model.get(k);
    if (e === undefined || !live(e.clk, this.now)) return false;
    if (e.fields === undefined) return true;
    for (const f of e.fields.values()) if (live(f.clk, this.now)) return true;
    return false;
  }

  plainLive(k) {
    return this.keyLive(k) && this.model.get(k).fields === undefined;
  }

  liveHash(k) {
    return this.keyLive(k) && this.model.get(k).fields !== undefined ? this.model.get(k).fields : undefined;
  }

  fieldLive(k, f) {
    const fs = this.liveHash(k);
    return fs !== undefined && fs.has(f) && live(fs.get(f).clk, this.now);
  }

  /** Write options, some invalid on purpose: every one of those must change nothing. */
  genWrite() {
    const r = this.r;
    const w = {};
    switch (r(12)) {
      case 0:
        w.ttl = INF;
        break;
      case 1:
      case 2:
      case 3:
        w.ttl = r(60) + 1;
        break;
      case 4:
        w.expireAt = this.now + r(70) - 10;
        break;
      case 5:
        w.keepTtl = true;
        break;
      case 6:
        if (r(4) === 0) {
          w.ttl = 5;
          w.expireAt = this.now + 5;
        }
        break;
      case 7:
        if (r(4) === 0) w.ttl = [0, -3, NaN][r(3)];
        break;
      case 8:
        if (r(4) === 0) {
          w.keepTtl = true;
          w.idle = 5;
        }
        break;
    }
    if (!w.keepTtl && r(3) === 0) w.idle = [INF, 4, 12, 30][r(4)];
    // Half the plain writes carry no options at all: the inline path.
    return Object.keys(w).length === 0 && r(2) === 0 ? undefined : w;
  }

  static valid(w) {
    if (w === undefined) return true;
    const pos = (v) => v === undefined || v > 0;
    const clock = w.ttl !== undefined || w.idle !== undefined || w.expireAt !== undefined;
    return !(w.keepTtl && clock) && !(w.ttl !== undefined && w.expireAt !== undefined) && pos(w.ttl) && pos(w.idle);
  }

  resolve(w, old) {
    w = w ?? {};
    if (w.keepTtl && old !== undefined) return { ...old };
    const abs = w.expireAt !== undefined ? w.expireAt : this.now + (w.ttl !== undefined ? w.ttl : this.ttl);
    return { abs, last: this.now, idle: w.idle !== undefined ? w.idle : this.idle };
  }

  /** Everything observable, to prove a failed call changed nothing. */
  digest() {
    const c = this.c;
    let out = `size=${c.size} entries=${c.stats().entries};`;
    for (const k of KEYS) {
      let peek;
      try {
        peek = c.peek(k);
      } catch (e) {
        peek = e.constructor.name;
      }
      out += `${k}:${c.has(k)}:${c.ttl(k)}:${peek};`;
      for (const f of FIELDS) {
        try {
          out += `${f}:${c.hhas(k, f)}:${c.httl(k, f)};`;
        } catch (e) {
          out += `${f}:${e.constructor.name};`;
        }
      }
    }
    return out;
  }

  step() {
    const r = this.r;
    const c = this.c;
    const k = KEYS[r(KEYS.length)];
    const field = FIELDS[r(FIELDS.length)];
    const op = r(20);
    const before = this.digest();
    let failed = false;
    const throws = (fn, what) => {
      assert.throws(fn, (e) => e instanceof TypeError || e instanceof RangeError, what);
      failed = true;
    };
    if (op <= 3) {
      const w = this.genWrite();
      const v = this.next++;
      const isHash = this.liveHash(k) !== undefined;
      this.before = this.plainLive(k) ? this.model.get(k).v : undefined;
      if (!Harness.valid(w) || isHash) {
        throws(() => c.set(k, v, w), `set(${k}, ${JSON.stringify(w)}) must throw (hash: ${isHash})`);
      } else {
        c.set(k, v, w);
        const old = this.keyLive(k) ? this.model.get(k).clk : undefined;
        const clk = this.resolve(w, old);
        if (live(clk, this.now)) this.model.set(k, { clk, v });
        else this.model.delete(k);
      }
    } else if (op <= 5) {
      if (this.liveHash(k) !== undefined) {
        throws(() => c.get(k), `get on hash ${k}`);
      } else if (this.plainLive(k)) {
        const e = this.model.get(k);
        assert.equal(c.get(k), e.v, `get(${k})`);
        e.clk.last = this.now;
      } else {
        assert.equal(c.get(k), undefined, `get(${k}) of a missing key`);
      }
    } else if (op === 6) {
      const l = this.keyLive(k);
      assert.equal(c.touch(k), l, `touch(${k})`);
      if (l) this.model.get(k).clk.last = this.now;
    } else if (op === 7) {
      const ms = r(50) - 5;
      const cond = CONDS[r(5)];
      const at = this.now + ms;
      const got = r(2) === 0 ? c.expire(k, ms, cond) : c.expireAt(k, at, cond);
      const expect = this.keyLive(k) && holds(cond, this.model.get(k).clk.abs, at);
      assert.equal(got, expect, `expire(${k}, ${ms}, ${cond})`);
      if (expect) {
        if (at <= this.now) this.model.delete(k);
        else this.model.get(k).clk.abs = at;
      }
    } else if (op === 8) {
      const l = this.keyLive(k);
      const clk = l ? this.model.get(k).clk : undefined;
      assert.equal(c.persist(k), l && (clk.abs !== INF || clk.idle !== INF), `persist(${k})`);
      if (l) {
        clk.abs = INF;
        clk.idle = INF;
      }
    } else if (op === 9) {
      assert.equal(c.delete(k), this.keyLive(k), `delete(${k})`);
      this.model.delete(k);
    } else if (op <= 12) {
      this.now += r(30);
      c.tick(this.now);
    } else if (op === 13) {
      if (r(8) === 0) {
        c.clear();
        this.model.clear();
      } else {
        c.purge();
      }
    } else if (op <= 15) {
      const w = this.genWrite();
      const v = this.next++;
      const plain = this.plainLive(k);
      const fs = this.liveHash(k);
      const others = fs === undefined ? 0 : [...fs.keys()].filter((n) => n !== field).length;
      const fits = this.max === undefined || others < this.max;
      this.before = this.fieldLive(k, field) ? fs.get(field).v : undefined;
      if (!Harness.valid(w) || plain || !fits) {
        throws(() => c.hset(k, field, v, w), `hset(${k}, ${field}, ${JSON.stringify(w)}) must throw`);
      } else {
        const wasLive = this.fieldLive(k, field);
        const isNew = c.hset(k, field, v, w);
        const clk = this.resolve(w, wasLive ? fs.get(field).clk : undefined);
        if (!this.keyLive(k)) this.model.set(k, { clk: { abs: INF, last: this.now, idle: INF }, fields: new Map() });
        const hash = this.model.get(k).fields;
        if (live(clk, this.now)) {
          assert.equal(isNew, !wasLive, `hset(${k}, ${field}) new-field answer`);
          hash.set(field, { clk, v });
        } else {
          assert.equal(isNew, false);
          hash.delete(field);
        }
        // The key goes with its last field.
        if (![...hash.values()].some((f) => live(f.clk, this.now))) this.model.delete(k);
      }
    } else if (op <= 17) {
      if (this.plainLive(k)) {
        throws(() => c.hget(k, field), `hget on plain ${k}`);
      } else if (this.fieldLive(k, field)) {
        const e = this.model.get(k);
        const f = e.fields.get(field);
        assert.equal(c.hget(k, field), f.v, `hget(${k}, ${field})`);
        e.clk.last = this.now;
        f.clk.last = this.now;
      } else {
        assert.equal(c.hget(k, field), undefined, `hget(${k}, ${field}) of a missing field`);
      }
    } else if (op === 18) {
      if (this.plainLive(k)) {
        throws(() => c.hdel(k, field), `hdel on plain ${k}`);
      } else {
        const l = this.fieldLive(k, field);
        assert.equal(c.hdel(k, field), l, `hdel(${k}, ${field})`);
        if (l) {
          this.model.get(k).fields.delete(field);
          if (!this.keyLive(k)) this.model.delete(k);
        }
      }
    } else {
      // Bad arguments anywhere must change nothing.
      const bad = [NaN, INF, -INF][r(3)];
      throws(() => c.expire(k, bad), "expire with a bad ms");
      throws(() => c.expireAt(k, bad), "expireAt with a bad time");
      throws(() => c.tick(bad), "tick with a bad time");
    }
    this.reconcile(op, failed);
    if (failed) assert.equal(this.digest(), before, `a failed call changed the cache (op ${op})`);
    this.check();
  }

  /** Checks what dispose reported and learns evictions from it. */
  reconcile(op, failed) {
    const removed = this.removed.splice(0);
    if (failed) assert.deepEqual(removed, [], "a failed call disposed something");
    const write = op <= 3 || op === 14 || op === 15;
    for (const x of removed) {
      if (x.reason === "evicted") {
        assert.ok(this.max !== undefined, "an eviction without a bound");
        assert.ok(write, `an eviction outside a write: op ${op}`);
        this.model.delete(x.key);
      } else if (x.reason === "expired") {
        // Values are unique per write, so "the same value is still live in
        // the model" is exact even when a write just replaced an expired key.
        const stillLive =
          x.field === undefined
            ? this.plainLive(x.key) && this.model.get(x.key).v === x.value
            : this.fieldLive(x.key, x.field) && this.model.get(x.key).fields.get(x.field).v === x.value;
        assert.ok(!stillLive, `${JSON.stringify(x)} expired but the model has it live at ${this.now}`);
      } else if (x.reason === "replaced") {
        // Only the live value a write found is replaced; an expired one is "expired".
        assert.ok(write, "replaced outside a write");
        assert.equal(x.value, this.before, `${JSON.stringify(x)}: not the live value the write found`);
      } else if (x.reason === "deleted") {
        assert.ok(write || op === 7 || op === 9 || op === 18, `deleted by op ${op}`);
      } else {
        assert.equal(x.reason, "cleared");
        assert.equal(op, 13);
      }
    }
  }

  /** Every observable agrees with the model. */
  check() {
    const c = this.c;
    const now = this.now;
    let liveKeys = 0;
    for (const k of KEYS) {
      const l = this.keyLive(k);
      liveKeys += l ? 1 : 0;
      assert.equal(c.has(k), l, `has(${k}) at ${now}`);
      if (!l) {
        assert.equal(c.ttl(k), undefined, `ttl(${k}) of a missing key`);
        assert.equal(c.peek(k), undefined);
        continue;
      }
      const e = this.model.get(k);
      const d = deadline(e.clk);
      assert.equal(c.ttl(k), d === INF ? INF : d - now, `ttl(${k}) at ${now}`);
      if (e.fields === undefined) {
        assert.equal(c.peek(k), e.v, `peek(${k})`);
        continue;
      }
      assert.throws(() => c.peek(k), TypeError);
      const want = [...e.fields].filter(([, f]) => live(f.clk, now)).map(([n, f]) => [n, f.v]);
      const got = [...c.hgetall(k)];
      assert.deepEqual(got.sort(), want.sort(), `hgetall(${k}) at ${now}`);
      assert.equal(c.hlen(k), want.length);
      for (const [n, f] of e.fields) {
        if (!live(f.clk, now)) continue;
        const fd = Math.min(deadline(f.clk), d);
        assert.equal(c.httl(k, n), fd === INF ? INF : fd - now, `httl(${k}, ${n})`);
      }
    }
    assert.equal([...c.keys()].length, liveKeys, "keys() yields the live keys");
    if (this.max !== undefined) assert.ok(c.stats().entries <= this.max, "entries over maxEntries");
    assert.ok(c.size >= liveKeys, "size counts every live key");
    // hgetall and hlen remove the expired fields they pass (a read's lazy
    // expiry): nothing else, and nothing the model holds live.
    this.reconcile(-1, false);
  }

  /** After a full purge nothing expired is held. */
  finish() {
    this.c.purge();
    this.reconcile(13, false);
    const live = KEYS.filter((k) => this.keyLive(k)).length;
    assert.equal(this.c.size, live, "purge left expired keys");
    this.check();
  }
}

function run(seed, steps) {
  const h = new Harness(seed);
  try {
    for (let i = 0; i < steps; i++) h.step();
    h.finish();
  } catch (e) {
    e.message = `seed ${seed}: ${e.message}`;
    throw e;
  }
}

test("random sequences agree with the model (plain, hash, capacity, bad input)", () => {
  for (let seed = 1; seed <= 1000; seed++) run(seed, 200);
});

test("long random sequences agree with the model", () => {
  for (let seed = 5000; seed < 5010; seed++) run(seed, 5000);
});

// ---- fetch: loads interleaved with writes, reads and ticks ----------------
//
// The model adds running loads (plain keys) with their waiters, write times
// (for `refresh`), each entry's grace and whether its value was disposed.
// Loaders are deferreds the harness settles at random steps: resolved with a
// value, with undefined, rejected, or never (hung). Base operations reach the
// cache through a recording proxy, so the model learns which calls won over
// a running load.

const flush = () => new Promise((r) => setImmediate(r));

class FetchHarness extends Harness {
  constructor(seed) {
    const r = rng(seed + 7777);
    const grace = [0, 0, 20, 60, INF][r(5)];
    const refresh = [undefined, undefined, 0, 10, 30][r(5)];
    super(seed, { grace, refresh });
    this.grace = grace;
    this.refresh = refresh;
    // Write times are kept from the first fetch that may refresh on (from
    // the start with a constructor `refresh`); older entries have none.
    this.bornFrom = refresh !== undefined ? 0 : undefined;
    const real = this.c;
    this.real = real;
    this.log = [];
    const log = this.log;
    this.c = new Proxy(real, {
      get(t, p) {
        const v = Reflect.get(t, p);
        if (typeof v !== "function") return v;
        return (...args) => {
          const rec = { name: p, args, threw: true, result: undefined, had: undefined };
          log.push(rec);
          // An expire wins over a load when it changed the entry, or when
          // there was no live entry to change and its condition (if any)
          // holds for a key without a deadline (NX, LT).
          if (p === "expire" || p === "expireAt") {
            try {
              rec.had = t.has(args[0]);
            } catch {
              // a bad key: expire throws too
            }
          }
          rec.result = v.apply(t, args);
          rec.threw = false;
          return rec.result;
        };
      },
    });
    this.loads = new Map(); // "key" or "key\0field" -> the model load registered there
    this.calls = []; // loader calls not settled yet: { load, signal, resolve, reject }
    this.waiters = []; // fetch promises not settled yet
    this.nextLoad = null;
    this.loader = (key, ...rest) =>
      new Promise((resolve, reject) => {
        assert.ok(this.nextLoad !== null, `an unexpected loader call for ${key}`);
        const load = this.nextLoad;
        this.nextLoad = null;
        assert.equal(key, load.key);
        if (load.field !== undefined) assert.equal(rest[0], load.field, "hfetch's loader gets (key, field, ctx)");
        this.calls.push({ load, signal: rest[rest.length - 1].signal, resolve, reject });
      });
    this.stat = { loads: 0, loadErrors: 0, coalesced: 0, refreshes: 0, staleServed: 0 };
  }

  static id(k, f) {
    return f === undefined ? k : `${k}\u0000${f}`;
  }

  /** A key-level change: its plain load and every field load of it lose. */
  invalidateKey(k) {
    for (const [id, l] of [...this.loads]) {
      if (l.key === k) {
        l.live = false;
        this.loads.delete(id);
      }
    }
  }

  invalidate(k, f) {
    const id = FetchHarness.id(k, f);
    const l = this.loads.get(id);
    if (l !== undefined) {
      l.live = false;
      this.loads.delete(id);
    }
  }

  /** The model entry of `k` (plain) or of field `f` of hash `k`, live or not. */
  entry(k, f) {
    const e = this.model.get(k);
    if (e === undefined || (f === undefined) !== (e.fields === undefined)) return undefined;
    return f === undefined ? e : e.fields.get(f);
  }

  /** The value a fetch may fall back on, as `[v]`, or null. */
  stale(k, f) {
    const x = this.entry(k, f);
    if (x === undefined || x.gone) return null;
    if (f !== undefined && !live(this.model.get(k).clk, this.now)) return null; // a hash deadline has no grace
    if (live(x.clk, this.now)) return null;
    return deadline(x.clk) + x.grace > this.now ? [x.v] : null;
  }

  reconcile(op, failed) {
    for (const x of this.removed) {
      if (x.reason === "evicted" || x.reason === "deleted") {
        if (x.field === undefined) this.invalidateKey(x.key);
        else this.invalidate(x.key, x.field);
      }
      const e = this.entry(x.key, x.field);
      if (x.reason === "expired" && e !== undefined && e.v === x.value) e.gone = true;
    }
    super.reconcile(op, failed);
  }

  /**
   * A write's new entry or field takes its write time, and a grace: the
   * storing fetch's own, else the default. Grace belongs to a value: a new
   * one does not inherit the grace a fetch gave the one it replaces.
   */
  stamp(k, f, grace) {
    const x = this.entry(k, f);
    if (x === undefined) return;
    x.born = this.bornFrom === undefined ? undefined : this.now;
    x.grace = grace !== undefined ? grace : this.grace;
  }

  /** What the recorded base calls did to loads, write times and graces. */
  learn() {
    for (const { name, args, threw, result, had } of this.log.splice(0)) {
      if (threw) continue;
      const [k, f] = args;
      if (name === "clear") {
        for (const l of this.loads.values()) l.live = false;
        this.loads.clear();
      } else if (name === "set" || name === "delete") {
        this.invalidateKey(k);
      } else if ((name === "expire" || name === "expireAt") && (result || (!had && args[2] !== "XX" && args[2] !== "GT"))) {
        // (A key with no live entry has no deadline: XX and GT are not met.)
        this.invalidateKey(k);
      } else if (name === "hset") {
        this.invalidate(k, f);
        this.invalidate(k, undefined);
      } else if (name === "hdel") {
        this.invalidate(k, f);
      }
      if (name === "set") this.stamp(k, undefined, undefined);
      if (name === "hset") this.stamp(k, f, undefined);
    }
  }

  genFetch() {
    const r = this.r;
    const o = {};
    const w = r(6);
    if (w === 0) o.ttl = r(60) + 1;
    else if (w === 1) o.expireAt = this.now + r(70) - 10;
    else if (w === 2) o.idle = [4, 12, INF][r(3)];
    if (r(4) === 0) o.grace = [0, 15, INF][r(3)];
    if (r(5) === 0) o.refresh = [0, 5, 25][r(3)];
    if (r(25) === 0) {
      // Bad options: the fetch rejects and changes nothing.
      const bad = [{ ttl: 0 }, { grace: -1 }, { refresh: NaN }, { tll: 5 }, { ttl: 5, expireAt: 9 }][r(5)];
      return { ...o, ...bad, bad: true };
    }
    return Object.keys(o).length === 0 && r(2) === 0 ? undefined : o;
  }

  expectLater(p, waiter) {
    this.waiters.push(waiter);
    p.then(
      (v) => (waiter.got = { ok: true, v }),
      (e) => (waiter.got = { ok: false, e }),
    );
  }

  call(k, f, loader, opts) {
    return f === undefined ? this.real.fetch(k, loader, opts) : this.real.hfetch(k, f, loader, opts);
  }

  async fetchOp() {
    const r = this.r;
    const k = KEYS[r(KEYS.length)];
    const f = r(3) === 0 ? FIELDS[r(FIELDS.length)] : undefined;
    const o = this.genFetch();
    const before = this.digest();
    const calls = this.calls.length;
    const wrongType = f === undefined ? this.liveHash(k) !== undefined : this.plainLive(k);
    if ((o !== undefined && o.bad) || r(40) === 0 || wrongType) {
      const bad = o !== undefined && o.bad;
      if (bad) delete o.bad;
      const loader = bad || wrongType ? this.loader : "not a function";
      await assert.rejects(this.call(k, f, loader, o), (e) => e instanceof TypeError || e instanceof RangeError, `fetch(${k}, ${f}, ${JSON.stringify(o)})`);
      assert.equal(this.calls.length, calls, "a rejected fetch called its loader");
      assert.equal(this.digest(), before, "a rejected fetch changed the cache");
      return;
    }
    const refresh = o !== undefined && o.refresh !== undefined ? o.refresh : this.refresh;
    if (refresh !== undefined && this.bornFrom === undefined) this.bornFrom = this.now;
    const ac = r(4) === 0 ? new AbortController() : undefined;
    const opts = ac === undefined ? o : { ...o, signal: ac.signal };
    const write = o === undefined ? undefined : { ttl: o.ttl, idle: o.idle, expireAt: o.expireAt };
    const grace = o === undefined ? undefined : o.grace;
    const id = FetchHarness.id(k, f);
    const hit = f === undefined ? this.plainLive(k) : this.fieldLive(k, f);
    if (hit) {
      const x = this.entry(k, f);
      // Unstamped: written before stamps began, and no later than its last
      // access (taken before this read, itself an access).
      const since = x.born !== undefined ? x.born : Math.min(this.bornFrom, x.clk.last);
      const age = this.now - since;
      x.clk.last = this.now;
      if (f !== undefined) this.model.get(k).clk.last = this.now;
      const bg = !this.loads.has(id) && refresh !== undefined && age > refresh;
      if (bg) {
        this.nextLoad = { key: k, field: f, live: true, bg: true, write, grace, waiters: [] };
        this.loads.set(id, this.nextLoad);
        this.stat.loads++;
        this.stat.refreshes++;
      }
      assert.equal(await this.call(k, f, this.loader, opts), x.v, `fetch(${k}, ${f}) hit`);
      assert.equal(this.calls.length, calls + (bg ? 1 : 0), `fetch(${k}, ${f}) refresh-ahead`);
      return;
    }
    let load = this.loads.get(id);
    const fresh = load === undefined;
    if (fresh) {
      load = { key: k, field: f, live: true, bg: false, write, grace, waiters: [] };
      this.loads.set(id, load);
      this.nextLoad = load;
      this.stat.loads++;
    } else {
      this.stat.coalesced++;
    }
    const p = this.call(k, f, this.loader, opts);
    assert.equal(this.calls.length, calls + (fresh ? 1 : 0), `fetch(${k}, ${f}) loader calls`);
    assert.equal(this.nextLoad, null, `fetch(${k}, ${f}) did not call its loader`);
    const waiter = { load, ac, got: undefined };
    load.waiters.push(waiter);
    this.expectLater(p, waiter);
  }

  /** The model side of a load's store: as set / hset with the load's options. Returns false if hset would throw. */
  store(load, v) {
    const { key: k, field: f } = load;
    const clk = this.resolve(load.write, undefined);
    if (f === undefined) {
      this.invalidateKey(k); // the store is a set: the key's field loads lose
      this.before = this.plainLive(k) ? this.model.get(k).v : undefined;
      if (live(clk, this.now)) this.model.set(k, { clk, v });
      else this.model.delete(k);
      this.stamp(k, undefined, load.grace);
      return true;
    }
    const fs = this.liveHash(k);
    const others = fs === undefined ? 0 : [...fs.keys()].filter((n) => n !== f).length;
    if (this.max !== undefined && others >= this.max) return false;
    this.invalidate(k, undefined); // the store is an hset: the key's plain load loses
    this.before = this.fieldLive(k, f) ? fs.get(f).v : undefined;
    if (!this.keyLive(k)) this.model.set(k, { clk: { abs: INF, last: this.now, idle: INF }, fields: new Map() });
    const hash = this.model.get(k).fields;
    if (live(clk, this.now)) hash.set(f, { clk, v });
    else hash.delete(f);
    if (![...hash.values()].some((x) => live(x.clk, this.now))) this.model.delete(k);
    else this.stamp(k, f, load.grace);
    return true;
  }

  async settleOp() {
    const r = this.r;
    if (this.calls.length === 0) return;
    const call = this.calls.splice(r(this.calls.length), 1)[0];
    const load = call.load;
    const id = FetchHarness.id(load.key, load.field);
    let how = r(5); // 0: undefined, 1-3: a value, 4: rejects
    const v = how === 0 ? undefined : this.next++;
    const err = new Error(`load ${v} failed`);
    if (this.loads.get(id) === load) this.loads.delete(id);
    const storing = load.live && how !== 4 && v !== undefined;
    load.live = false;
    if (how === 4) call.reject(err);
    else call.resolve(v);
    // What the model expects is worked out before the flush (the cache's
    // store runs in it); the stale value is looked up after a failed store.
    let stored = true;
    if (storing) stored = this.store(load, v);
    if (!stored) how = 5; // the store throws (the hash is full): a failed load
    const stale = how >= 4 && load.waiters.length > 0 ? this.stale(load.key, load.field) : null;
    if (how >= 4) {
      this.stat.loadErrors++;
      if (stale !== null) this.stat.staleServed += load.waiters.length;
    }
    await flush();
    this.learn();
    for (const w of load.waiters) {
      assert.ok(w.got !== undefined, "a waiter was not answered");
      const what = `waiter of ${load.key} ${load.field}`;
      if (how < 4) assert.deepEqual(w.got, { ok: true, v }, what);
      else if (stale !== null) assert.deepEqual(w.got, { ok: true, v: stale[0] }, `stale-if-error: ${what}`);
      else if (how === 4) assert.deepEqual(w.got, { ok: false, e: err }, `${what} rejected`);
      else assert.ok(!w.got.ok && w.got.e instanceof RangeError, `${what}: the failed store's error`);
    }
    this.waiters = this.waiters.filter((w) => w.load !== load);
    this.reconcile(0, false);
    this.check();
  }

  async abortOp() {
    const mine = this.waiters.filter((w) => w.ac !== undefined && !w.ac.signal.aborted);
    if (mine.length === 0) return;
    const w = mine[this.r(mine.length)];
    const reason = new Error("caller left");
    w.ac.abort(reason);
    const load = w.load;
    load.waiters.splice(load.waiters.indexOf(w), 1);
    this.waiters.splice(this.waiters.indexOf(w), 1);
    if (load.waiters.length === 0 && !load.bg) {
      load.live = false;
      const id = FetchHarness.id(load.key, load.field);
      if (this.loads.get(id) === load) this.loads.delete(id);
    }
    await flush();
    assert.deepEqual(w.got, { ok: false, e: reason });
  }

  async fstep() {
    const op = this.r(16);
    if (op < 9) {
      this.step();
      this.learn();
    } else if (op < 12) {
      await this.fetchOp();
      this.learn();
      this.reconcile(19, false);
    } else if (op < 15) {
      await this.settleOp();
    } else {
      await this.abortOp();
    }
    this.checkLoads();
  }

  checkLoads() {
    for (const call of this.calls) {
      assert.equal(call.signal.aborted, !call.load.live, `signal of the load of ${call.load.key} ${call.load.field}`);
    }
    const s = this.real.stats();
    for (const n of Object.keys(this.stat)) assert.equal(s[n], this.stat[n], `stats().${n}`);
  }
}

async function runFetch(seed, steps) {
  const h = new FetchHarness(seed);
  try {
    for (let i = 0; i < steps; i++) await h.fstep();
    h.finish();
  } catch (e) {
    e.message = `fetch seed ${seed}: ${e.message}`;
    throw e;
  }
}

test("random sequences with fetch agree with the model (loads resolve, reject, hang; writes win)", async () => {
  if (process.env.SEED) return runFetch(+process.env.SEED, 150); // replays one failing seed
  for (let seed = +(process.env.FROM ?? 1); seed <= +(process.env.TO ?? 300); seed++) await runFetch(seed, 150);
});
