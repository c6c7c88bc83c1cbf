// The benchmark suite: the same code runs in Node (bench/node.mjs) and in
// headless Chromium (bench/page.html). It touches no Node or DOM API: the
// libraries, the options and a progress callback are passed in.
//
// Method
// - Rounds are interleaved: round r runs every subject once (the starting
//   subject rotates each round), so drift in machine load hits all alike.
// - The first `warmup` rounds are discarded; reported figures are medians of
//   the remaining rounds; ratios are taken between medians of the same run.
// - Each (workload, subject) pair gets its own copy of the timed loop
//   (`clone`), so V8's type feedback at `c.get(...)` is monomorphic and one
//   subject's classes cannot slow another's loop.
// - GC runs between samples when the engine exposes gc() (node --expose-gc,
//   chromium --js-flags=--expose-gc); setup (filling a cache) is never timed.

import { cycleOrder, makeKeys, shuffled, trace, zipf, rng } from "./data.mjs";
import { CHURN_T0, churnSubjects, hashSubjects, kvSubjects, SLIDING_NOTE, TTL } from "./subjects.mjs";

// Our own timer, captured before (e) patches performance.now for ttlcache.
const perf = globalThis.performance;
const pnow = perf.now.bind(perf);

export const SEED = 20240607;
export const ZIPF_ALPHA = 1.0;

export const DEFAULTS = {
  sizes: [100_000, 1_000_000],
  warmup: 1,
  rounds: { 100000: 4, 1000000: 2 }, // measured rounds per size (plus warmup)
  minOps: 1_000_000, // (a)/(b): repeat at small sizes so one sample is >= this many ops
  zipfOps: { 100000: 1_000_000, 1000000: 2_000_000 },
  churn: { n: 1_000_000, period: 10_000, step: 10, rounds: 2, lruSteps: 30 },
  hashFields: 10,
  // (j) read-through at capacity (issue 16): keyspace -> ops; capacity keyspace/10
  readThrough: { keys: [200_000, 1_000_000], theta: 0.99, ops: { 200000: 2_000_000, 1000000: 4_000_000 }, rounds: 3 },
  workloads: ["get", "set", "zipf", "scan", "readthrough", "churn", "hash"],
};

// ---------------------------------------------------------------- loops
// Plain functions with no free variables: `clone` recompiles them per subject.

// Exported, as the two below, for the A/B scripts (get-ab, insert-ab).
export function loopGet(c, keys, order, tick) {
  let miss = 0;
  const n = order.length;
  for (let i = 0; i < n; i++) {
    if ((i & 1023) === 0) tick(c);
    if (c.get(keys[order[i]]) === undefined) miss++;
  }
  return miss;
}

// Exported for bench/insert-ab.mjs, which times the same loops between two builds.
export function loopInsert(c, keys, n, tick) {
  for (let i = 0; i < n; i++) {
    if ((i & 1023) === 0) tick(c);
    c.set(keys[i], i);
  }
}

export function loopOverwrite(c, keys, order, tick) {
  const n = order.length;
  for (let i = 0; i < n; i++) {
    if ((i & 1023) === 0) tick(c);
    c.set(keys[order[i]], i + 1);
  }
}

// 90/10 read/write; a read miss is followed by a set (cache-aside).
// cnt[0] += hits, cnt[1] += misses.
function loopZipf(c, keys, tk, tw, from, to, tick, cnt) {
  let hits = 0;
  let misses = 0;
  for (let i = from; i < to; i++) {
    if ((i & 1023) === 0) tick(c);
    const k = keys[tk[i]];
    if (tw[i] === 1) {
      c.set(k, i);
    } else if (c.get(k) === undefined) {
      misses++;
      c.set(k, i);
    } else {
      hits++;
    }
  }
  cnt[0] += hits;
  cnt[1] += misses;
}

// Read-through: get, and on a miss set (what a loader-backed cache does).
// cnt[0] += hits, cnt[1] += misses.
function loopReadThrough(c, keys, tk, from, to, tick, cnt) {
  let hits = 0;
  let misses = 0;
  for (let i = from; i < to; i++) {
    if ((i & 1023) === 0) tick(c);
    const k = keys[tk[i]];
    if (c.get(k) === undefined) {
      misses++;
      c.set(k, i);
    } else {
      hits++;
    }
  }
  cnt[0] += hits;
  cnt[1] += misses;
}

function loopScan(c, keys, tick, cnt) {
  let hits = 0;
  let misses = 0;
  const n = keys.length;
  for (let i = 0; i < n; i++) {
    if ((i & 1023) === 0) tick(c);
    const k = keys[i];
    if (c.get(k) === undefined) {
      misses++;
      c.set(k, i);
    } else {
      hits++;
    }
  }
  cnt[0] += hits;
  cnt[1] += misses;
}

function loopHset(c, keys, fields, opts, tick) {
  const F = fields.length;
  const n = keys.length;
  let j = 0;
  for (let i = 0; i < n; i++) {
    const k = keys[i];
    for (let f = 0; f < F; f++) {
      if ((j++ & 1023) === 0) tick(c);
      c.hset(k, fields[f], i, opts);
    }
  }
}

function loopHget(c, keys, fields, order, tick) {
  const F = fields.length;
  const n = order.length;
  let miss = 0;
  for (let i = 0; i < n; i++) {
    if ((i & 1023) === 0) tick(c);
    const x = order[i];
    const q = (x / F) | 0;
    if (c.hget(keys[q], fields[x - q * F]) === undefined) miss++;
  }
  return miss;
}

function loopChurn(c, drive, t0ms, stepMs, maxSteps, now, pauses, cpu, cpuPauses) {
  let swept = 0;
  let steps = 0;
  for (let s = 1; s <= maxSteps; s++) {
    const before = c.size;
    const c0 = cpu === null ? 0 : cpu();
    const t0 = now();
    const r = drive(c, t0ms + s * stepMs);
    const t1 = now();
    if (cpu !== null) cpuPauses.push(cpu() - c0);
    pauses.push(t1 - t0);
    swept += r >= 0 ? r : before - c.size;
    steps = s;
    if (c.size === 0) break;
  }
  return { swept, steps };
}

/** A fresh copy of `fn` (own bytecode and type feedback). */
export function clone(fn) {
  return new Function(`return (${fn.toString()})`)();
}

// ---------------------------------------------------------------- helpers

export function median(xs) {
  if (xs.length === 0) return NaN;
  const a = [...xs].sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}

export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

const gc = typeof globalThis.gc === "function" ? globalThis.gc : null;
const settle = async () => {
  if (gc) gc();
  await new Promise((r) => setTimeout(r, 0));
};

/** Subject order for round r: rotate so no subject always runs first. */
const rotate = (xs, r) => xs.map((_, i) => xs[(i + r) % xs.length]);

const short = (n) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);

// ---------------------------------------------------------------- runner

/**
 * Runs the suite. `libs` = { TtlCache, LRUCache, TTLCache }.
 * Returns { config, rows, notes } where each row is
 * { workload, size, metric, unit, better: "higher"|"lower", values: {subject: number}, samples: {subject: number[]} }.
 */
export async function runSuite(libs, options = {}, log = () => {}) {
  const o = { ...DEFAULTS, ...options };
  const rows = [];
  const notes = [SLIDING_NOTE];
  const started = pnow();

  const row = (workload, size, metric, unit, better, values, samples = {}) =>
    rows.push({ workload, size, metric, unit, better, values, samples });

  /**
   * Runs `sample(subject, round)` for every subject, rounds interleaved.
   * Returns { subject: [sample, ...] } for the measured rounds.
   */
  async function interleave(label, subjects, rounds, sample) {
    const out = Object.fromEntries(subjects.map((s) => [s.name, []]));
    const total = o.warmup + rounds;
    for (let r = 0; r < total; r++) {
      for (const s of rotate(subjects, r)) {
        await settle();
        const v = sample(s, r);
        if (r >= o.warmup) out[s.name].push(v);
        log(`${label} round ${r + 1}/${total}${r < o.warmup ? " (warm-up)" : ""} ${s.name}: ${fmtSample(v)}`);
      }
    }
    await settle();
    return out;
  }

  const kv = kvSubjects(libs);

  for (const n of o.sizes) {
    const rounds = o.rounds[n] ?? 3;
    const keys = makeKeys(n);

    // (a) get hits with a sliding window
    if (o.workloads.includes("get")) {
      const ops = Math.max(n, o.minOps);
      const order = cycleOrder(n, ops, SEED + 1);
      const loops = Object.fromEntries(kv.map((s) => [s.name, clone(loopGet)]));
      const res = await interleave(`(a) get ${short(n)}`, kv, rounds, (s) => {
        const c = s.make(n, s.name !== "ttlcache");
        for (let i = 0; i < n; i++) c.set(keys[i], i);
        s.tick(c);
        const t0 = pnow();
        const miss = loops[s.name](c, keys, order, s.tick);
        const ms = pnow() - t0;
        s.done?.(c);
        if (miss !== 0) throw new Error(`(a) ${s.name}: ${miss} misses on a hit-only workload`);
        return ops / ms * 1000;
      });
      row("a", n, "get hit, sliding window", "ops/s", "higher", medians(res), res);
    }

    // (b) set: new keys, then overwrites of every key (shuffled), TTL from the constructor
    if (o.workloads.includes("set")) {
      const reps = Math.max(1, Math.round(o.minOps / n));
      const order = shuffled(n, SEED + 2);
      const ins = Object.fromEntries(kv.map((s) => [s.name, clone(loopInsert)]));
      const ovw = Object.fromEntries(kv.map((s) => [s.name, clone(loopOverwrite)]));
      const res = await interleave(`(b) set ${short(n)}`, kv, rounds, (s) => {
        const ow = s.overwriteOps && s.overwriteOps < n ? order.subarray(0, s.overwriteOps) : order;
        let tIns = 0;
        let tOvw = 0;
        for (let r = 0; r < reps; r++) {
          const c = s.make(n, true); // both clocks set (issue 16)
          s.tick(c);
          const t0 = pnow();
          ins[s.name](c, keys, n, s.tick);
          const t1 = pnow();
          ovw[s.name](c, keys, ow, s.tick);
          const t2 = pnow();
          if (c.size !== n) throw new Error(`(b) ${s.name}: size ${c.size} after ${n} inserts`);
          s.done?.(c);
          tIns += t1 - t0;
          tOvw += t2 - t1;
        }
        const nIns = n * reps;
        const nOvw = ow.length * reps;
        // combined: the time n inserts + n overwrites take, at the measured rates
        const combined = (2 * nIns) / (tIns + (tOvw * nIns) / nOvw);
        return { insert: (nIns / tIns) * 1000, overwrite: (nOvw / tOvw) * 1000, combined: combined * 1000 };
      });
      for (const k of ["insert", "overwrite", "combined"]) {
        const part = pick(res, k);
        const label = { insert: "set new keys", overwrite: "set overwrite", combined: "set combined (new + overwrite)" }[k];
        row("b", n, label, "ops/s", "higher", medians(part), part);
      }
    }

    // (c) Zipf 90/10 with capacity = 10% of the keyspace
    // (d) the same with a burst scan of 2x capacity never-seen keys in the middle
    const cap = Math.max(1, Math.floor(n / 10));
    const wantZipf = o.workloads.includes("zipf");
    const wantScan = o.workloads.includes("scan");
    if (wantZipf || wantScan) {
      const T = o.zipfOps[n] ?? 4 * n;
      const z = zipf(n, ZIPF_ALPHA, SEED + 3);
      const tr = trace(z, T, 0.1, SEED + 4);
      const zs = kv.filter((s) => !(s.maxZipfKeys < n));
      if (wantZipf) {
        const loops = Object.fromEntries(zs.map((s) => [s.name, clone(loopZipf)]));
        const hit = {};
        const res = await interleave(`(c) zipf ${short(n)}`, zs, rounds, (s) => {
          const c = s.make(cap, true);
          s.tick(c);
          const cnt = [0, 0];
          const t0 = pnow();
          loops[s.name](c, keys, tr.keys, tr.writes, 0, T, s.tick, cnt);
          const ms = pnow() - t0;
          s.done?.(c);
          hit[s.name] = cnt[0] / (cnt[0] + cnt[1]);
          return (T / ms) * 1000;
        });
        row("c", n, "zipf 90/10, cap 10%: ops/s", "ops/s", "higher", medians(res), res);
        row("c", n, "zipf 90/10, cap 10%: hit ratio", "ratio", "higher", hit);
      }
      if (wantScan) {
        const scanKeys = makeKeys(2 * cap, "scan:");
        const half = T >> 1;
        const loops = Object.fromEntries(
          zs.map((s) => [s.name, { z: clone(loopZipf), scan: clone(loopScan) }]),
        );
        const hitAll = {};
        const hitPre = {};
        const hitPost = {};
        const res = await interleave(`(d) scan ${short(n)}`, zs, rounds, (s) => {
          const c = s.make(cap, true);
          s.tick(c);
          const pre = [0, 0];
          const scan = [0, 0];
          const post = [0, 0];
          const L = loops[s.name];
          const t0 = pnow();
          L.z(c, keys, tr.keys, tr.writes, 0, half, s.tick, pre);
          L.scan(c, scanKeys, s.tick, scan);
          L.z(c, keys, tr.keys, tr.writes, half, T, s.tick, post);
          const ms = pnow() - t0;
          s.done?.(c);
          const h = pre[0] + scan[0] + post[0];
          const m = pre[1] + scan[1] + post[1];
          hitAll[s.name] = h / (h + m);
          hitPre[s.name] = pre[0] / (pre[0] + pre[1]);
          hitPost[s.name] = post[0] / (post[0] + post[1]);
          return ((T + scanKeys.length) / ms) * 1000;
        });
        row("d", n, "zipf + scan: ops/s", "ops/s", "higher", medians(res), res);
        row("d", n, "zipf + scan: hit ratio, whole run", "ratio", "higher", hitAll);
        row("d", n, "zipf + scan: hit ratio, before scan", "ratio", "higher", hitPre);
        row("d", n, "zipf + scan: hit ratio, after scan", "ratio", "higher", hitPost);
      }
    }

    // (f) hash fields with per-field TTLs: n fields = n/10 keys x 10 fields
    if (o.workloads.includes("hash")) {
      const F = o.hashFields;
      const hk = makeKeys(Math.floor(n / F), "h:");
      const fields = makeKeys(F, "f");
      const nf = hk.length * F;
      const order = shuffled(nf, SEED + 5);
      const hs = hashSubjects(libs);
      const loops = Object.fromEntries(hs.map((s) => [s.name, { set: clone(loopHset), get: clone(loopHget) }]));
      const res = await interleave(`(f) hash ${short(n)}`, hs, rounds, (s) => {
        const c = s.make();
        s.tick(c);
        const opts = { ttl: TTL };
        const t0 = pnow();
        loops[s.name].set(c, hk, fields, opts, s.tick);
        const t1 = pnow();
        const miss = loops[s.name].get(c, hk, fields, order, s.tick);
        const t2 = pnow();
        if (miss !== 0) throw new Error(`(f) ${s.name}: ${miss} misses`);
        return { hset: (nf / (t1 - t0)) * 1000, hget: (nf / (t2 - t1)) * 1000 };
      });
      for (const k of ["hset", "hget"]) {
        const part = pick(res, k);
        row("f", n, `${k} (${F} fields/key, per-field ttl)`, "ops/s", "higher", medians(part), part);
      }
    }
  }

  // (j) read-through at capacity: Zipf(theta) over K keys, room for K/10,
  // get and on a miss set, both clocks on. The first quarter of the trace
  // fills the cache untimed; ops/s and the hit ratio are over the rest, where
  // every miss evicts.
  if (o.workloads.includes("readthrough")) {
    const { keys: spaces, theta, ops, rounds } = o.readThrough;
    const subjects = kv.filter((s) => s.name === "lapse" || s.name === "lru-cache" || s.name === "map");
    for (const K of spaces) {
      const keys = makeKeys(K);
      const cap = Math.max(1, Math.floor(K / 10));
      const T = ops[K] ?? 10 * K;
      const warm = T >> 2;
      const tk = trace(zipf(K, theta, SEED + 7), T, 0, SEED + 8).keys;
      const loops = Object.fromEntries(subjects.map((s) => [s.name, clone(loopReadThrough)]));
      const hit = {};
      const res = await interleave(`(j) read-through ${short(K)}`, subjects, rounds, (s) => {
        const c = s.make(cap, true);
        s.tick(c);
        const L = loops[s.name];
        L(c, keys, tk, 0, warm, s.tick, [0, 0]);
        if (c.size !== cap) throw new Error(`(j) ${s.name}: size ${c.size} after warm-up, expected ${cap}`);
        const cnt = [0, 0];
        const t0 = pnow();
        L(c, keys, tk, warm, T, s.tick, cnt);
        const ms = pnow() - t0;
        s.done?.(c);
        hit[s.name] = cnt[0] / (cnt[0] + cnt[1]);
        return ((T - warm) / ms) * 1000;
      });
      row("j", K, `read-through at capacity (room ${short(cap)}): ops/s`, "ops/s", "higher", medians(res), res);
      row("j", K, `read-through at capacity (room ${short(cap)}): hit ratio`, "ratio", "higher", hit);
    }
  }

  // (e) expiry churn on a virtual clock: n entries, deadlines uniform over
  // `period` ms, the clock advanced `step` ms per tick
  if (o.workloads.includes("churn")) {
    const { n, period, step, rounds, lruSteps } = o.churn;
    const keys = makeKeys(n);
    const r = rng(SEED + 6);
    const ttls = new Float64Array(n);
    for (let i = 0; i < n; i++) ttls[i] = 1 + Math.floor(r() * period);
    const subjects = churnSubjects(libs);
    const loops = Object.fromEntries(subjects.map((s) => [s.name, clone(loopChurn)]));
    const maxSteps = Math.ceil(period / step) * 4 + 1000;
    const pauses = Object.fromEntries(subjects.map((s) => [s.name, []]));
    // CPU time per call where the host can read it (Node: libs.cpuTime), since
    // on a shared machine the wall-clock tail is mostly time slices taken by
    // other processes inside a call.
    const cpu = libs.cpuTime ?? null;
    const cpuPauses = Object.fromEntries(subjects.map((s) => [s.name, []]));
    const rates = Object.fromEntries(subjects.map((s) => [s.name, []]));
    const ticks = {};
    await interleave(`(e) churn ${short(n)}`, subjects, rounds, (s, round) => {
      const saved = s.patchClock ? patchPerfNow(s.clock) : null;
      try {
        s.clock.t = CHURN_T0;
        const c = s.make(n, period);
        const opts = { ttl: 0 };
        for (let i = 0; i < n; i++) {
          opts.ttl = ttls[i];
          c.set(keys[i], i, opts);
        }
        s.filled?.(c);
        const p = [];
        const cp = [];
        const limit = s.name === "lru-cache" ? lruSteps : maxSteps;
        const { swept, steps } = loops[s.name](c, s.drive, CHURN_T0, step, limit, pnow, p, cpu, cp);
        s.done?.(c);
        const total = p.reduce((a, b) => a + b, 0);
        if (round >= o.warmup) {
          pauses[s.name].push(...p);
          cpuPauses[s.name].push(...cp);
          rates[s.name].push(swept / total);
          ticks[s.name] = steps;
        }
        return { swept, steps, ms: total };
      } finally {
        if (saved) saved();
      }
    });
    const stat = (q, from = pauses) =>
      Object.fromEntries(
        subjects.map((s) => {
          const a = Float64Array.from(from[s.name]).sort();
          return [s.name, q === "max" ? a[a.length - 1] : quantile(a, q)];
        }),
      );
    row("e", n, "tick pause p50", "ms", "lower", stat(0.5));
    row("e", n, "tick pause p99", "ms", "lower", stat(0.99));
    row("e", n, "tick pause max", "ms", "lower", stat("max"));
    if (cpu !== null) {
      row("e", n, "tick pause p50, CPU time", "ms", "lower", stat(0.5, cpuPauses));
      row("e", n, "tick pause p99, CPU time", "ms", "lower", stat(0.99, cpuPauses));
    }
    row("e", n, "entries swept per ms of pause", "entries/ms", "higher", medians(rates), rates);
    row("e", n, "ticks (steps) measured per round", "count", "none", ticks);
    notes.push(
      `(e): ${n} entries, ttl uniform in [1, ${period}] ms on a virtual clock, advanced ${step} ms per step; ` +
        `lapse: tick(now) at the default sweepBudget until empty; lru-cache: purgeStale() per step (a full scan), ` +
        `first ${lruSteps} steps only; ttlcache: purgeStale() per step (its own timer cancelled), performance.now ` +
        `patched to the virtual clock; bare Map: n/a (no expiry)`,
    );
  }

  return {
    config: { ...o, seed: SEED, zipfAlpha: ZIPF_ALPHA, gcExposed: gc !== null, seconds: (pnow() - started) / 1000 },
    rows,
    notes,
  };
}

/** Points performance.now at the virtual clock; returns the undo. */
function patchPerfNow(clock) {
  const own = Object.getOwnPropertyDescriptor(perf, "now");
  Object.defineProperty(perf, "now", { value: () => clock.t, configurable: true, writable: true });
  if (perf.now() !== clock.t) throw new Error("could not patch performance.now");
  return () => {
    if (own) Object.defineProperty(perf, "now", own);
    else delete perf.now;
  };
}

function medians(res) {
  return Object.fromEntries(Object.entries(res).map(([k, v]) => [k, median(v)]));
}

function pick(res, key) {
  return Object.fromEntries(Object.entries(res).map(([k, v]) => [k, v.map((x) => x[key])]));
}

function fmtSample(v) {
  if (typeof v === "number") return `${(v / 1e6).toFixed(2)} Mops/s`;
  return Object.entries(v)
    .map(([k, x]) => `${k} ${k === "ms" || k === "swept" || k === "steps" ? Math.round(x) : (x / 1e6).toFixed(2) + "M"}`)
    .join(", ");
}
