// Interleaved A/B of the read-through workload at capacity (bench (j): Zipf
// theta 0.99 over K keys, room for K/10, get and on a miss set, both clocks
// on, a tick every 1024 ops) between built packages, in ONE process:
//
//   node bench/readthrough-ab.mjs [--k 200000] [--rounds 9] A/pkg B/pkg ... [lru]
//
// On a shared machine, load drifts by tens of percent within a minute, more
// than most changes to the at-capacity path are worth; separate processes run
// one after another see different loads. Here each round runs every subject
// once (a fresh cache, the first quarter of the trace untimed, the rest timed
// in process CPU time), the order rotating per round, so drift hits all
// alike; each subject has its own copy of the loop (its own type feedback)
// and each package its own module instance and wasm memory. `lru` adds
// lru-cache. Reports per subject the median M ops/s over rounds (the first
// round is a warm-up) and the hit ratio, then each subject's median paired
// ratio (same round) against the first.
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { LRUCache } from "lru-cache";
import { makeKeys, trace, zipf } from "./lib/data.mjs";
import { DEFAULTS, SEED, median } from "./lib/suite.mjs";

const argv = process.argv.slice(2);
const opt = { k: 200_000, rounds: 9 };
const subjects = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a.startsWith("--")) opt[a.slice(2)] = Number(argv[++i]);
  else subjects.push(a);
}
if (subjects.length === 0) {
  console.error("usage: node bench/readthrough-ab.mjs [--k 200000] [--rounds 9] A/pkg B/pkg ... [lru]");
  process.exit(2);
}

const { theta, ops } = DEFAULTS.readThrough;
const K = opt.k;
const cap = Math.max(1, Math.floor(K / 10));
const T = ops[K] ?? 10 * K;
const warm = T >> 2;
const keys = makeKeys(K);
const tk = trace(zipf(K, theta, SEED + 7), T, 0, SEED + 8).keys;
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const makers = [];
for (const s of subjects) {
  if (s === "lru") {
    makers.push(() => new LRUCache({ max: cap, ttl: 3_600_000, updateAgeOnGet: true }));
  } else {
    const { TtlCache } = await import(pathToFileURL(resolve(s, "dist/lapse.js")).href);
    makers.push(() => new TtlCache({ ttl: 3_600_000, idle: 600_000, maxEntries: cap }));
  }
}
// One compiled copy of the loop per subject (as suite.mjs's `clone`).
const loopSrc = `return function loop(c, from, to, lapse) {
  let hits = 0;
  for (let i = from; i < to; i++) {
    if (lapse && (i & 1023) === 0) c.tick(Date.now());
    const k = keys[tk[i]];
    if (c.get(k) === undefined) c.set(k, i);
    else hits++;
  }
  return hits;
}`;
const loops = subjects.map(() => new Function("keys", "tk", loopSrc)(keys, tk));

const rate = subjects.map(() => []);
const hr = subjects.map(() => 0);
for (let r = 0; r <= opt.rounds; r++) {
  for (let j = 0; j < subjects.length; j++) {
    const i = (r + j) % subjects.length;
    const c = makers[i]();
    const lapse = subjects[i] !== "lru";
    loops[i](c, 0, warm, lapse);
    const t0 = cpu();
    const hits = loops[i](c, warm, T, lapse);
    const ms = cpu() - t0;
    if (r > 0) rate[i].push((T - warm) / ms / 1000);
    hr[i] = hits / (T - warm);
    c.free?.();
  }
}
console.log(`(j) read-through, ${K} keys, room ${cap}, ${opt.rounds} rounds (CPU time, M ops/s)`);
subjects.forEach((s, i) =>
  console.log(`${s.padEnd(32)} median ${median(rate[i]).toFixed(3)}  hit ratio ${hr[i].toFixed(4)}  [${rate[i].map((x) => x.toFixed(2)).join(" ")}]`),
);
subjects.forEach((s, i) => {
  if (i > 0) console.log(`${s.padEnd(32)} / ${subjects[0]}: paired median ${median(rate[i].map((x, r) => x / rate[0][r])).toFixed(3)}`);
});
