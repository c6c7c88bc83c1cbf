// Evicted keys that come back: each return leaves the ghost queue a stale
// (key, seq) pair. With a small maxEntries and keys cycling through it, the
// ghost count never passes its cap, so only a compaction bounds the queue.
import { test } from "node:test";
import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { TtlCache } from "lapse";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

test("keys cycling through a full cache do not grow the JS heap", () => {
  const c = new TtlCache({ now: 0, maxEntries: 2 });
  const keys = ["a", "b", "c"];
  for (let i = 0; i < 30_000; i++) c.set(keys[i % 3], i);
  const before = heap();
  // Without the compaction this leaks about 5.6 MB (two array slots per set).
  for (let i = 0; i < 1_000_000; i++) c.set(keys[i % 3], i);
  const grown = heap() - before;
  assert.ok(grown < 2_000_000, `heap grew ${grown} B over 1M sets`);
  assert.equal(c.size, 2);
  assert.ok(c.stats().evicted > 500_000, "keys were evicted and came back (else this checks nothing)");
});

// S3-FIFO as src/policy.rs decides it, with the JS host's ghost queue
// (maxEntries ghosts, oldest dropped first; a key written while a ghost goes
// straight to main, its ghost dropped). Front of an array = newest.
class Model {
  constructor(max) {
    this.max = max;
    this.small = [];
    this.main = [];
    this.freq = new Map(); // live key -> read credit (0..3)
    this.ghostSeq = new Map(); // ghost key -> seq
    this.fifo = []; // [key, seq], oldest first
    this.seq = 0;
  }
  get size() {
    return this.small.length + this.main.length;
  }
  credit(k) {
    return this.freq.get(k) > 0;
  }
  spend(k) {
    if (this.freq.get(k) > 0) this.freq.set(k, this.freq.get(k) - 1);
  }
  // A read is two units of credit, a write (of a live key) one, whatever
  // it had (src/policy.rs: Policy::hit, Policy::written).
  hit(k) {
    this.freq.set(k, Math.min(3, this.freq.get(k) + 2));
  }
  evict() {
    const total = this.size;
    for (;;) {
      const tailCredit = this.main.length > 0 && this.credit(this.main.at(-1));
      const share = this.small.length * 10 >= total || this.main.length === 0;
      const fromSmall = this.small.length > 0 && (share || tailCredit);
      if (fromSmall && !share) {
        const k = this.main.pop();
        this.spend(k);
        this.main.unshift(k);
      }
      const q = fromSmall ? this.small : this.main;
      const k = q.pop();
      if (this.credit(k)) {
        if (!fromSmall) this.spend(k);
        this.main.unshift(k);
        continue;
      }
      this.freq.delete(k);
      if (fromSmall) {
        this.ghostSeq.set(k, ++this.seq);
        this.fifo.push([k, this.seq]);
        while (this.ghostSeq.size > this.max) {
          const [g, s] = this.fifo.shift();
          if (this.ghostSeq.get(g) === s) this.ghostSeq.delete(g);
        }
      }
      return k;
    }
  }
  /** A write of `k`; returns the key it evicted, if any. */
  set(k) {
    if (this.freq.has(k)) {
      this.freq.set(k, 1);
      return undefined;
    }
    const toMain = this.ghostSeq.has(k);
    const victim = this.size >= this.max ? this.evict() : undefined;
    this.ghostSeq.delete(k);
    this.freq.set(k, 0);
    (toMain ? this.main : this.small).unshift(k);
    return victim;
  }
  delete(k) {
    if (!this.freq.has(k)) return;
    for (const q of [this.small, this.main]) if (q.includes(k)) q.splice(q.indexOf(k), 1);
    this.freq.delete(k);
  }
}

test("evictions and ghosts follow S3-FIFO exactly, through returns, trims and the queue's compaction", () => {
  // Three phases per run: few keys (ghosts stay under the cap, returns leave
  // blanks, the queue compacts), many (the cap trims, the queue's head moves
  // on), then both.
  for (const [seed, max, few, many] of [[1, 8, 10, 40], [2, 3, 5, 30], [3, 20, 24, 90]]) {
    let x = seed * 0x9e3779b1;
    const rand = (n) => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % n;
    };
    const evicted = [];
    const c = new TtlCache({ now: 0, maxEntries: max, dispose: (v, k, why) => why === "evicted" && evicted.push(k) });
    const m = new Model(max);
    for (let step = 0; step < 60_000; step++) {
      const phase = Math.floor(step / 20_000);
      const k = `k${rand(phase === 0 ? few : phase === 1 ? many : rand(2) ? few : many)}`;
      const op = rand(20);
      let want;
      if (op < 10) {
        want = m.set(k);
        c.set(k, step);
      } else if (op < 18) {
        if (m.freq.has(k)) m.hit(k);
        assert.equal(c.get(k) !== undefined, m.freq.has(k), `seed ${seed}, step ${step}: get ${k}`);
      } else {
        m.delete(k);
        c.delete(k);
      }
      assert.deepEqual(evicted.splice(0), want === undefined ? [] : [want], `seed ${seed}, step ${step}: evicted`);
      assert.equal(c.size, m.size, `seed ${seed}, step ${step}: size`);
    }
    assert.deepEqual([...c.keys()].sort(), [...m.freq.keys()].sort(), `seed ${seed}: keys`);
  }
});
