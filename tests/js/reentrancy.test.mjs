// Re-entrancy: every user callback (sizeOf, dispose, getters on write options,
// getters on values read by snapshot()) calls random operations on the same
// cache and on the others, nested, checked against a model. The model applies
// each operation when it takes effect: callbacks that run before a write
// (option getters, sizeOf) land before it; dispose callbacks run after the
// change that fired them. After every top-level operation each cache must
// hold exactly what its model holds, in the same order, and nothing may ever
// surface as a wasm RuntimeError.
//
// Plain keys and hash keys come from separate pools, no clock moves and no
// bound evicts, so every operation's outcome is defined; what is tested is
// that a callback cannot make the outer call lose, move or leave behind an
// entry, or trap.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

const PLAIN = ["p0", "p1", "p2", "p3", ""];
const HASH = ["h0", "h1", "__proto__"];
const FIELDS = ["f0", "f1", "f2"];

function rng(seed) {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

class World {
  constructor(seed) {
    this.r = rng(seed);
    this.models = [];
    this.caches = [];
    // Writes in flight: a dispose callback runs after its write took effect,
    // so the model applies the write first (see #commit).
    this.pending = [];
    this.depth = 0;
    this.ops = 0;
    this.next = 0;
    this.log = [];
    for (let i = 0; i < 3; i++) {
      const id = i;
      this.models.push(new Map());
      const opts = { now: 0 };
      if (i !== 2) opts.sizeOf = (v, k, f) => (this.callback(`sizeOf#${id}`), 1);
      if (i !== 1) opts.dispose = () => this.afterCommit(`dispose#${id}`);
      this.caches.push(new TtlCache(opts));
    }
  }

  value() {
    const n = this.next++;
    if (this.r(3) !== 0) return n;
    // Read by snapshot() (Object.keys, then the getter).
    const w = this;
    return {
      n,
      get g() {
        w.callback("getter");
        return n;
      },
    };
  }

  opts() {
    if (this.r(2) === 0) return undefined;
    const w = this;
    return {
      get ttl() {
        w.callback("opts.ttl");
        return undefined;
      },
    };
  }

  /** User code that runs before a write takes effect. */
  callback(where) {
    if (this.depth < 3 && this.r(3) !== 0) {
      this.log.push(`${"  ".repeat(this.depth)}${where}:`);
      this.op();
    }
  }

  /** User code that runs after a write took effect (dispose). */
  afterCommit(where) {
    const p = this.pending[this.pending.length - 1];
    if (p !== undefined && !p.done) {
      p.done = true;
      p.apply();
    }
    this.callback(where);
  }

  /** Runs `call` (which may run callbacks), applying `apply` to the model when it took effect. */
  write(apply, call) {
    const p = { done: false, apply };
    this.pending.push(p);
    try {
      call();
    } finally {
      this.pending.pop();
    }
    if (!p.done) apply();
  }

  op() {
    const r = this.r;
    const i = r(3);
    const c = this.caches[i];
    const m = this.models[i];
    this.depth++;
    this.ops++;
    try {
      const which = r(9);
      if (which <= 2) {
        const k = PLAIN[r(PLAIN.length)];
        const v = this.value();
        const o = this.opts();
        this.log.push(`${"  ".repeat(this.depth)}#${i}.set(${k})`);
        this.write(
          () => {
            if (m.has(k)) m.set(k, v);
            else m.set(k, v);
          },
          () => c.set(k, v, o),
        );
      } else if (which <= 4) {
        const k = HASH[r(HASH.length)];
        const f = FIELDS[r(FIELDS.length)];
        const v = this.value();
        const o = this.opts();
        this.log.push(`${"  ".repeat(this.depth)}#${i}.hset(${k}, ${f})`);
        this.write(
          () => {
            let h = m.get(k);
            if (h === undefined) m.set(k, (h = new Map()));
            h.set(f, v);
          },
          () => c.hset(k, f, v, o),
        );
      } else if (which === 5) {
        const k = r(2) ? PLAIN[r(PLAIN.length)] : HASH[r(HASH.length)];
        this.log.push(`${"  ".repeat(this.depth)}#${i}.delete(${k})`);
        this.write(() => m.delete(k), () => c.delete(k));
      } else if (which === 6) {
        const k = HASH[r(HASH.length)];
        const f = FIELDS[r(FIELDS.length)];
        this.log.push(`${"  ".repeat(this.depth)}#${i}.hdel(${k}, ${f})`);
        this.write(
          () => {
            const h = m.get(k);
            if (h !== undefined && h.delete(f) && h.size === 0) m.delete(k);
          },
          () => c.hdel(k, f),
        );
      } else if (which === 7) {
        if (r(4) === 0) {
          this.log.push(`${"  ".repeat(this.depth)}#${i}.clear()`);
          this.write(() => m.clear(), () => c.clear());
        } else {
          const k = PLAIN[r(PLAIN.length)];
          assert.equal(c.get(k), m.get(k), `#${i}.get(${k})`);
        }
      } else {
        // A snapshot is the cache as it was when snapshot() was called,
        // whatever the value getters do while it is written.
        this.log.push(`${"  ".repeat(this.depth)}#${i}.snapshot()`);
        const want = dump(m);
        const bytes = c.snapshot();
        const got = contents(TtlCache.restore(bytes));
        assert.deepEqual(got, want, `#${i}.snapshot() at op ${this.ops}`);
      }
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError) throw e;
      if (e instanceof assert.AssertionError) throw e;
      throw new Error(`unexpected ${e.constructor.name}: ${e.message}`, { cause: e });
    } finally {
      this.depth--;
    }
  }

  check(what) {
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(contents(this.caches[i]), dump(this.models[i]), `cache #${i} after ${what}`);
      assert.equal(this.caches[i].size, this.models[i].size);
    }
  }
}

/** A cache's content in iteration order, values as the model holds them. */
function contents(c) {
  const out = [];
  for (const [k, v] of c.entries()) {
    out.push([k, v instanceof Map ? [...v].map(([f, x]) => [f, plain(x)]) : plain(v)]);
  }
  return out;
}

function dump(m) {
  const out = [];
  for (const [k, v] of m) out.push([k, v instanceof Map ? [...v].map(([f, x]) => [f, plain(x)]) : plain(v)]);
  return out;
}

/** Values compare by what a snapshot keeps (a getter's object restores as data). */
function plain(v) {
  return typeof v === "object" && v !== null ? v.n : v;
}

test("callbacks that call back into any cache: nothing lost, moved, left behind, or trapped", () => {
  let ops = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const w = new World(seed);
    try {
      for (let step = 0; step < 60; step++) {
        w.log.length = 0;
        w.op();
        w.check(`step ${step}`);
      }
    } catch (e) {
      e.message = `seed ${seed}: ${e.message}\n${w.log.join("\n")}`;
      throw e;
    }
    ops += w.ops;
    for (const c of w.caches) c.free();
  }
  assert.ok(ops > 20000, `only ${ops} operations ran`);
});

test("restore: an option getter that constructs and uses another cache does not take the restored engine", () => {
  // The engine restore() decoded waits for its cache's constructor; a getter
  // on restore's options runs before that, and a cache it builds must get an
  // engine of its own (it took the restored one, and both caches then threw
  // "internal: stale slot").
  const c = new TtlCache({ now: 0 });
  c.set("a", 1);
  const bytes = c.snapshot();
  let other;
  const opts = {};
  for (const name of ["refresh", "grace", "onLoadError"]) {
    Object.defineProperty(opts, name, {
      enumerable: true,
      get() {
        other ??= new TtlCache({ now: 5 });
        other.set(name, 2);
        return undefined;
      },
    });
  }
  const r = TtlCache.restore(bytes, opts);
  assert.deepEqual([...r.entries()], [["a", 1]]);
  assert.equal(r.now, 0);
  assert.deepEqual([...other.entries()], [["refresh", 2], ["grace", 2], ["onLoadError", 2]]);
  assert.equal(other.now, 5);
});
