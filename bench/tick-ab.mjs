// Interleaved A/B of tick() sweeps between built packages, in one process
// (bench (e)'s churn: n entries on a manual clock, integer deadlines uniform
// over `period` ms, the clock advanced `step` ms per tick at the default
// sweepBudget until the cache is empty).
//
//   node --expose-gc bench/tick-ab.mjs [--n 1000000] [--rounds 3] A/pkg B/pkg ...
//
// Per package and round: CPU time (user + system) of each tick; reports the
// medians over rounds of each round's p50, p99 and total, and the paired
// ratio of totals against the first package.
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { makeKeys, rng } from "./lib/data.mjs";
import { CHURN_T0 } from "./lib/subjects.mjs";

const argv = process.argv.slice(2);
const opt = { n: 1_000_000, rounds: 3, period: 10_000, step: 10 };
const pkgs = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i].startsWith("--")) opt[argv[i].slice(2)] = Number(argv[++i]);
  else pkgs.push(argv[i]);
}
const gc = globalThis.gc ?? (() => {});
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];

const libs = [];
for (const p of pkgs) libs.push({ name: p, TtlCache: (await import(pathToFileURL(resolve(p, "dist/lapse.js")).href)).TtlCache });
const keys = makeKeys(opt.n);
const r = rng(20240607 + 6);
const ttls = new Float64Array(opt.n);
for (let i = 0; i < opt.n; i++) ttls[i] = 1 + Math.floor(r() * opt.period);
const out = libs.map(() => ({ p50: [], p99: [], total: [] }));
for (let round = 0; round <= opt.rounds; round++) {
  for (let k = 0; k < libs.length; k++) {
    const j = (round + k) % libs.length;
    const c = new libs[j].TtlCache({ now: CHURN_T0 });
    const o = { ttl: 0 };
    for (let i = 0; i < opt.n; i++) {
      o.ttl = ttls[i];
      c.set(keys[i], i, o);
    }
    gc();
    const ticks = [];
    let now = CHURN_T0;
    while (c.size > 0) {
      now += opt.step;
      const u0 = process.cpuUsage();
      c.tick(now);
      const u = process.cpuUsage(u0);
      ticks.push((u.user + u.system) / 1000);
    }
    c.free();
    if (round === 0) continue; // warm-up
    out[j].p50.push(q(ticks, 0.5));
    out[j].p99.push(q(ticks, 0.99));
    out[j].total.push(ticks.reduce((a, b) => a + b, 0));
  }
}
console.log(`tick sweeps, ${opt.n} entries over ${opt.period} ms, step ${opt.step} ms, ${opt.rounds} rounds (CPU ms):`);
libs.forEach((l, j) => {
  const o = out[j];
  const ratio = med(o.total.map((v, i) => v / out[0].total[i]));
  console.log(
    `  ${l.name.padEnd(28)} p50 ${med(o.p50).toFixed(3)}  p99 ${med(o.p99).toFixed(3)}  total ${med(o.total).toFixed(0)}  paired total vs first ${ratio.toFixed(3)}`,
  );
});
