// Hit ratios of eviction policies on the suite's own traces (issue 16:
// "consider SIEVE"): lapse (S3-FIFO, the built package), a SIEVE written
// here (Zhang et al., NSDI 2024: one FIFO, a visited bit, a hand), and
// lru-cache (LRU). Deterministic (fixed seeds, no clock), no timing:
//
//   node bench/policy.mjs
//
// Workloads as in bench/lib/suite.mjs: (c) Zipf α=1, 90% get / 10% set,
// capacity 10%; (d) the same with a scan of 2× capacity cold keys halfway;
// (j) read-through Zipf θ=0.99, measured after a warm first quarter.
import { LRUCache } from "lru-cache";
import { TtlCache } from "../pkg/dist/lapse.js";
import { makeKeys, trace, zipf } from "./lib/data.mjs";
import { SEED, ZIPF_ALPHA, DEFAULTS } from "./lib/suite.mjs";

class Sieve {
  constructor(cap) {
    this.cap = cap;
    this.m = new Map();
    this.keys = [];
    this.prev = [];
    this.next = [];
    this.visited = [];
    this.free = [];
    this.head = -1; // newest
    this.tail = -1; // oldest
    this.hand = -1;
  }
  get(k) {
    const s = this.m.get(k);
    if (s === undefined) return undefined;
    this.visited[s] = 1;
    return s;
  }
  set(k) {
    const old = this.m.get(k);
    if (old !== undefined) {
      this.visited[old] = 1;
      return;
    }
    if (this.m.size >= this.cap) this.evict();
    const s = this.free.length ? this.free.pop() : this.keys.length;
    this.keys[s] = k;
    this.visited[s] = 0;
    this.m.set(k, s);
    this.prev[s] = -1;
    this.next[s] = this.head;
    if (this.head >= 0) this.prev[this.head] = s;
    this.head = s;
    if (this.tail < 0) this.tail = s;
  }
  evict() {
    let o = this.hand >= 0 ? this.hand : this.tail;
    while (this.visited[o]) {
      this.visited[o] = 0;
      o = this.prev[o] >= 0 ? this.prev[o] : this.tail;
    }
    this.hand = this.prev[o];
    const p = this.prev[o];
    const n = this.next[o];
    if (p >= 0) this.next[p] = n;
    else this.head = n;
    if (n >= 0) this.prev[n] = p;
    else this.tail = p;
    this.m.delete(this.keys[o]);
    this.free.push(o);
  }
}

const subjects = {
  "lapse (S3-FIFO)": (cap) => new TtlCache({ ttl: 3_600_000, idle: 600_000, maxEntries: cap }),
  SIEVE: (cap) => new Sieve(cap),
  "lru-cache (LRU)": (cap) => new LRUCache({ max: cap, ttl: 3_600_000, updateAgeOnGet: true }),
};

function run(c, keys, tk, tw, from, to, cnt) {
  for (let i = from; i < to; i++) {
    const k = keys[tk[i]];
    if (tw !== null && tw[i] === 1) c.set(k, i);
    else if (c.get(k) === undefined) {
      cnt[1]++;
      c.set(k, i);
    } else cnt[0]++;
  }
}
const ratio = (c) => c[0] / (c[0] + c[1]);

const rows = [];
for (const n of DEFAULTS.sizes) {
  const keys = makeKeys(n);
  const cap = n / 10;
  const T = DEFAULTS.zipfOps[n];
  const tr = trace(zipf(n, ZIPF_ALPHA, SEED + 3), T, 0.1, SEED + 4);
  const scan = makeKeys(2 * cap, "scan:");
  const scanOrder = Int32Array.from(scan.keys());
  const c = {};
  const dAll = {};
  const dAfter = {};
  for (const [name, make] of Object.entries(subjects)) {
    const cc = [0, 0];
    run(make(cap), keys, tr.keys, tr.writes, 0, T, cc);
    c[name] = ratio(cc);
    const x = make(cap);
    const pre = [0, 0];
    const mid = [0, 0];
    const post = [0, 0];
    run(x, keys, tr.keys, tr.writes, 0, T >> 1, pre);
    run(x, scan, scanOrder, null, 0, scan.length, mid);
    run(x, keys, tr.keys, tr.writes, T >> 1, T, post);
    dAll[name] = ratio([pre[0] + mid[0] + post[0], pre[1] + mid[1] + post[1]]);
    dAfter[name] = ratio(post);
  }
  rows.push([`(c) Zipf 90/10 @ ${n}`, c], [`(d) + scan, whole run @ ${n}`, dAll], [`(d) + scan, after the scan @ ${n}`, dAfter]);
}
const { keys: spaces, theta, ops } = DEFAULTS.readThrough;
for (const K of spaces) {
  const keys = makeKeys(K);
  const T = ops[K];
  const warm = T >> 2;
  const tk = trace(zipf(K, theta, SEED + 7), T, 0, SEED + 8).keys;
  const j = {};
  for (const [name, make] of Object.entries(subjects)) {
    const x = make(K / 10);
    run(x, keys, tk, null, 0, warm, [0, 0]);
    const cnt = [0, 0];
    run(x, keys, tk, null, warm, T, cnt);
    j[name] = ratio(cnt);
  }
  rows.push([`(j) read-through @ ${K}`, j]);
}
const names = Object.keys(subjects);
console.log(`| workload | ${names.join(" | ")} |\n| --- |${names.map(() => " ---: |").join("")}`);
for (const [w, v] of rows) console.log(`| ${w} | ${names.map((s) => `${(v[s] * 100).toFixed(2)}%`).join(" | ")} |`);
