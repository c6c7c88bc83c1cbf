// Interleaved A/B of the expiry churn (bench (e)) between built packages, in
// ONE process:
//
//   node --expose-gc bench/churn-ab.mjs [--n 1000000] [--rounds 4] [--solo] [--split] A/pkg B/pkg ...
//
// Each round fills one cache per package exactly as (e) does (`new
// TtlCache({ now: CHURN_T0 })`, n entries with TTLs uniform in [1, 10000] ms,
// the same keys and TTLs), then drains them all on the virtual clock, a
// tick(now) every 10 ms, the packages ticked alternately at each step (the
// order flipping per step), so that load drift and preemption hit every
// package alike. `--solo` drains them one after another instead (the order
// rotating per round): no package's tick runs right after another's, which
// evicts its lines. Each tick is timed in wall and process CPU time; the
// first round is a warm-up. `--split` also times the wasm part of each tick
// (up to the first log replay, glue's `more()`) apart from the rest (JS).
// Reports per package the p50, p90, p99, max and mean of the measured ticks
// (CPU time, and wall), the count over 1 ms and the ticks per drain.
// `--kinds` also sorts the ticks by what they did (stats() read between
// ticks, untimed): cascades only, removals only, both (or neither), and
// reports each kind's share and CPU time. `--dump file` writes every
// measured tick (per package: cpu, wall, wasm, kind) as JSON. `--budget n`
// gives every cache `sweepBudget: n` instead of the default (1000).
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { makeKeys, rng } from "./lib/data.mjs";
import { CHURN_T0 } from "./lib/subjects.mjs";
import { DEFAULTS, SEED, quantile } from "./lib/suite.mjs";

const argv = process.argv.slice(2);
const opt = { n: DEFAULTS.churn.n, rounds: 4, solo: false, split: false, kinds: false };
const pkgs = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--solo" || a === "--split" || a === "--kinds") opt[a.slice(2)] = true;
  else if (a === "--dump") opt.dump = argv[++i];
  else if (a.startsWith("--")) opt[a.slice(2)] = Number(argv[++i]);
  else pkgs.push(a);
}
if (pkgs.length === 0) {
  console.error("usage: node --expose-gc bench/churn-ab.mjs [--n 1000000] [--rounds 4] [--budget 1000] [--solo] [--split] A/pkg B/pkg ...");
  process.exit(2);
}
const { period, step } = DEFAULTS.churn;
const n = opt.n;
const keys = makeKeys(n);
const r = rng(SEED + 6);
const ttls = new Float64Array(n);
for (let i = 0; i < n; i++) ttls[i] = 1 + Math.floor(r() * period);
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const wall = performance.now.bind(performance);
const gc = globalThis.gc ?? (() => {});

// Per package: the class, and (with --split) where the wasm part of the
// current tick ended.
const subjects = [];
for (const p of pkgs) {
  const dir = resolve(p, "dist");
  const { TtlCache } = await import(pathToFileURL(resolve(dir, "lapse.js")).href);
  const s = { name: p, TtlCache, wasmEnd: 0, wall: [], cpu: [], wasm: [], ticks: [], kind: [], last: null };
  if (opt.split) {
    // The same module instance lapse.js imports: time up to the first log
    // replay (`more`, set per engine by the cache) as the wasm part.
    const { RawEngine } = await import(pathToFileURL(resolve(dir, "glue.js")).href);
    const tick = RawEngine.prototype.tick;
    RawEngine.prototype.tick = function (now, purge) {
      if (!this.timed) {
        const more = this.more;
        this.more = () => {
          if (s.wasmEnd === 0) s.wasmEnd = cpu();
          return more();
        };
        this.timed = true;
      }
      return tick.call(this, now, purge);
    };
  }
  subjects.push(s);
}

function fill(TtlCache) {
  const c = new TtlCache(opt.budget === undefined ? { now: CHURN_T0 } : { now: CHURN_T0, sweepBudget: opt.budget });
  const o = { ttl: 0 };
  for (let i = 0; i < n; i++) {
    o.ttl = ttls[i];
    c.set(keys[i], i, o);
  }
  return c;
}

// One tick of `s`'s cache `c` at `now`, timed; false once it is empty.
function tickOnce(s, c, now, keep) {
  s.wasmEnd = 0;
  const c0 = cpu();
  const t0 = wall();
  c.tick(now);
  const t1 = wall();
  const c1 = cpu();
  if (keep) {
    s.wall.push(t1 - t0);
    s.cpu.push(c1 - c0);
    if (opt.split) s.wasm.push(s.wasmEnd - c0);
  }
  if (opt.kinds) {
    const st = c.stats();
    const prev = s.last ?? { cascaded: 0, swept: 0 };
    const kind = (st.cascaded > prev.cascaded ? 1 : 0) | (st.swept > prev.swept ? 2 : 0);
    s.last = { cascaded: st.cascaded, swept: st.swept };
    if (keep) s.kind.push(kind);
  }
  return c.size !== 0;
}

const maxSteps = Math.ceil(period / step) * 4 + 1000;
for (let round = 0; round <= opt.rounds; round++) {
  const keep = round > 0;
  const order = subjects.map((_, j) => subjects[(round + j) % subjects.length]);
  if (opt.solo) {
    for (const s of order) {
      let c = fill(s.TtlCache);
      s.last = null;
      gc();
      let steps = 0;
      for (let k = 1; k <= maxSteps; k++) {
        steps = k;
        if (!tickOnce(s, c, CHURN_T0 + k * step, keep)) break;
      }
      if (keep) s.ticks.push(steps);
      c.free();
      c = null;
      gc();
    }
  } else {
    const caches = order.map((s) => fill(s.TtlCache));
    for (const s of order) s.last = null;
    gc();
    const live = order.map(() => true);
    const steps = order.map(() => 0);
    for (let k = 1; k <= maxSteps && live.some((x) => x); k++) {
      for (let j = 0; j < order.length; j++) {
        const i = k & 1 ? j : order.length - 1 - j;
        if (!live[i]) continue;
        steps[i] = k;
        live[i] = tickOnce(order[i], caches[i], CHURN_T0 + k * step, keep);
      }
    }
    order.forEach((s, i) => {
      if (keep) s.ticks.push(steps[i]);
      caches[i].free();
    });
    caches.length = 0;
    gc();
  }
  console.error(`round ${round}${keep ? "" : " (warm-up)"} done`);
}

const f = (x) => x.toFixed(3);
const stats = (xs) => {
  const a = Float64Array.from(xs).sort();
  const mean = a.reduce((x, y) => x + y, 0) / a.length;
  return `p50 ${f(quantile(a, 0.5))} p90 ${f(quantile(a, 0.9))} p99 ${f(quantile(a, 0.99))} max ${f(a[a.length - 1])} mean ${f(mean)} >1ms ${a.filter((x) => x > 1).length}`;
};
for (const s of subjects) {
  console.log(`${s.name}: ticks per drain ${s.ticks.join("/")}`);
  console.log(`  cpu  ${stats(s.cpu)}`);
  console.log(`  wall ${stats(s.wall)}`);
  if (opt.split) {
    console.log(`  wasm ${stats(s.wasm)}`);
    console.log(`  js   ${stats(s.cpu.map((x, i) => x - s.wasm[i]))}`);
  }
  if (opt.kinds) {
    for (const [k, name] of [[1, "cascades"], [2, "removals"], [3, "both"], [0, "neither"]]) {
      const at = s.kind.flatMap((x, i) => (x === k ? [i] : []));
      if (at.length === 0) continue;
      const share = ((100 * at.length) / s.kind.length).toFixed(1);
      console.log(`  ${name} (${share}%) cpu ${stats(at.map((i) => s.cpu[i]))}`);
      if (opt.split) console.log(`  ${name} wasm ${stats(at.map((i) => s.wasm[i]))}`);
    }
  }
}
if (opt.dump) {
  const pick = ({ name, cpu, wall, wasm, kind, ticks }) => ({ name, cpu, wall, wasm, kind, ticks });
  writeFileSync(opt.dump, JSON.stringify(subjects.map(pick)));
}
