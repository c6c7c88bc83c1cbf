// What the default clock costs: `get` and `set` on a cache that follows
// Date.now() (the default) against the same cache on a manual clock
// ({ now }), as an interleaved A/B in one process.
//
//   node --expose-gc bench/clock.mjs [--rounds N] [--out file.json]
//
// Each round alternates short chunks (8192 ops) of A and B, ABAB... then
// BABA..., so both see the same machine load; a round's figure is B's
// fastest chunk / A's fastest chunk (the fastest is the one least disturbed
// by other processes: on a shared machine a sum mostly measures them), and
// each row reports the median over rounds. An
// A/A row (two manual caches) shows the noise floor of the method on this
// machine: a cost below it is not distinguishable from zero.
//
// Two shapes per operation:
//   hot    synchronous loops: the clock is read once per run, so this
//          measures the per-call check alone
//   batch  64 ops per synchronous run, then `await null`: one clock read
//          and one microtask per 64 ops (a request handler's shape, costed
//          high: a real handler does more than 64 cache calls' work per run)
// Goal (API.md § Time): the default clock costs under 5% on `get`.
import { writeFileSync } from "node:fs";
import { TtlCache } from "../pkg/dist/lapse.js";

const args = process.argv.slice(2);
const opt = (name, d) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : d;
};
const ROUNDS = Number(opt("rounds", 31));
const N = 10_000; // fits the CPU caches: less layout noise between the two caches
const CHUNK = 8192;
const CHUNKS = 24; // per subject per round
const keys = Array.from({ length: N }, (_, i) => `key:${i}`);
const order = new Uint32Array(CHUNK * 4);
let seed = 12345;
for (let i = 0; i < order.length; i++) {
  seed = (seed * 1103515245 + 12345) >>> 0;
  order[i] = seed % N;
}

function clone(fn) {
  return new Function(`return (${fn.toString()})`)();
}

function hotGet(c, keys, order, from, n) {
  let miss = 0;
  for (let i = from; i < from + n; i++) if (c.get(keys[order[i]]) === undefined) miss++;
  return miss;
}

function hotSet(c, keys, order, from, n) {
  for (let i = from; i < from + n; i++) c.set(keys[order[i]], i);
  return 0;
}

async function batchGet(c, keys, order, from, n) {
  let miss = 0;
  for (let i = from; i < from + n; ) {
    const end = Math.min(i + 64, from + n);
    for (; i < end; i++) if (c.get(keys[order[i]]) === undefined) miss++;
    await null;
  }
  return miss;
}

async function batchSet(c, keys, order, from, n) {
  for (let i = from; i < from + n; ) {
    const end = Math.min(i + 64, from + n);
    for (; i < end; i++) c.set(keys[order[i]], i);
    await null;
  }
  return 0;
}

const manual = () => new TtlCache({ now: Date.now(), ttl: 3_600_000 });
const followed = () => new TtlCache({ ttl: 3_600_000 });

const cases = [
  ["get hot", hotGet, followed],
  ["set hot (overwrite)", hotSet, followed],
  ["get batch", batchGet, followed],
  ["set batch (overwrite)", batchSet, followed],
  ["A/A control: get hot", hotGet, manual],
  ["A/A control: get batch", batchGet, manual],
];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const result = { date: new Date().toISOString(), node: process.version, rounds: ROUNDS, chunk: CHUNK, chunks: CHUNKS, keys: N, cases: {} };
for (const [label, fn, makeB] of cases) {
  const subj = [
    { c: manual(), loop: clone(fn), ms: 0 },
    { c: makeB(), loop: clone(fn), ms: 0 },
  ];
  for (const s of subj) {
    for (const k of keys) s.c.set(k, 1);
    for (let j = 0; j < 8; j++) await s.loop(s.c, keys, order, 0, order.length); // warm up
  }
  const ratios = [];
  const ns = [[], []];
  for (let r = 0; r < ROUNDS; r++) {
    globalThis.gc?.();
    subj[0].ms = subj[1].ms = Infinity;
    for (let k = 0; k < CHUNKS * 2; k++) {
      const s = subj[(k + r) & 1];
      const from = ((k >> 1) & 3) * CHUNK;
      const t0 = performance.now();
      const miss = await s.loop(s.c, keys, order, from, CHUNK);
      s.ms = Math.min(s.ms, performance.now() - t0);
      if (miss !== 0) throw new Error(`${label}: ${miss} misses`);
    }
    ratios.push(subj[1].ms / subj[0].ms);
    ns[0].push((subj[0].ms * 1e6) / CHUNK);
    ns[1].push((subj[1].ms * 1e6) / CHUNK);
  }
  const row = { aNsPerOp: median(ns[0]), bNsPerOp: median(ns[1]), costPct: (median(ratios) - 1) * 100, ratios };
  result.cases[label] = row;
  const b = label.startsWith("A/A") ? "manual'" : "default";
  console.log(
    `${label.padEnd(24)} manual ${row.aNsPerOp.toFixed(1).padStart(6)} ns/op   ${b} ${row.bNsPerOp
      .toFixed(1)
      .padStart(6)} ns/op   cost ${row.costPct >= 0 ? "+" : ""}${row.costPct.toFixed(1)}% (median of ${ROUNDS} rounds)`,
  );
}
const g = result.cases["get hot"].costPct;
const gb = result.cases["get batch"].costPct;
console.log(
  `goal: the default clock costs < 5% on get: hot ${g.toFixed(1)}%, batch ${gb.toFixed(1)}% -> ${g < 5 && gb < 5 ? "met" : "NOT met"}` +
    ` (A/A noise floor ${result.cases["A/A control: get hot"].costPct.toFixed(1)}% / ${result.cases["A/A control: get batch"].costPct.toFixed(1)}%)`,
);
const out = opt("out", null);
if (out) writeFileSync(out, JSON.stringify(result, null, 1));
