// (i) Stampede: N concurrent requests for M cold keys (Zipf-distributed)
// against a loader with latency, in Node.
//
//   node bench/stampede.mjs [--quick] [--requests N] [--keys M] [--latency ms] [--rounds R]
//
// Subjects: lapse `fetch`, lru-cache 11 `fetch` (its fetchMethod), and
// cache-aside on lapse (`get`, else `await load()` then `set`), which has no
// coalescing and so shows the stampede itself. Each round builds fresh caches
// and runs, per subject in a rotating order:
//   cold  all N requests issued in one synchronous burst, then awaited: the
//         loader calls (counted), the burst's own CPU time and the wall time
//         until every request resolved (latency included);
//   warm  the same N requests again, now all hits: time until all resolved.
// Figures are medians over the measured rounds (one warm-up round dropped).
// Prints one JSON line on stdout.
import { LRUCache } from "lru-cache";
import { TtlCache } from "../pkg/dist/lapse.js";
import { makeKeys, zipf } from "./lib/data.mjs";
import { parseArgs } from "./lib/options.mjs";

const args = parseArgs(process.argv.slice(2));
const num = (name, dflt) => (typeof args[name] === "string" ? Number(args[name]) : dflt);
const N = num("requests", args.quick ? 10_000 : 100_000);
const M = num("keys", args.quick ? 100 : 1_000);
const LATENCY = num("latency", 20);
const ROUNDS = num("rounds", args.quick ? 2 : 5);
const SEED = 20240607;

const keys = makeKeys(M, "user:");
const next = zipf(M, 1.0, SEED);
const order = new Int32Array(N);
for (let i = 0; i < N; i++) order[i] = next();
let distinct = 0;
{
  const seen = new Uint8Array(M);
  for (const k of order) {
    if (seen[k] === 0) distinct++;
    seen[k] = 1;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const SUBJECTS = {
  "lapse fetch": () => {
    const c = new TtlCache({ ttl: 60_000, maxEntries: 2 * M });
    const counter = { calls: 0 };
    const loader = async (key) => {
      counter.calls++;
      await sleep(LATENCY);
      return { key };
    };
    return { counter, request: (k) => c.fetch(k, loader) };
  },
  "lru-cache fetch": () => {
    const counter = { calls: 0 };
    const c = new LRUCache({
      max: 2 * M,
      ttl: 60_000,
      fetchMethod: async (key) => {
        counter.calls++;
        await sleep(LATENCY);
        return { key };
      },
    });
    return { counter, request: (k) => c.fetch(k) };
  },
  "lapse get/set (no coalescing)": () => {
    const c = new TtlCache({ ttl: 60_000, maxEntries: 2 * M });
    const counter = { calls: 0 };
    const load = async (key) => {
      counter.calls++;
      await sleep(LATENCY);
      return { key };
    };
    return {
      counter,
      request: async (k) => {
        let v = c.get(k);
        if (v === undefined) {
          v = await load(k);
          c.set(k, v);
        }
        return v;
      },
    };
  },
};

async function burst(request) {
  const ps = new Array(N);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) ps[i] = request(keys[order[i]]);
  const t1 = performance.now();
  const got = await Promise.all(ps);
  const t2 = performance.now();
  for (let i = 0; i < N; i += 997) {
    if (got[i].key !== keys[order[i]]) throw new Error(`wrong value for ${keys[order[i]]}`);
  }
  return { issueMs: t1 - t0, wallMs: t2 - t0 };
}

const names = Object.keys(SUBJECTS);
const samples = Object.fromEntries(names.map((n) => [n, []]));
for (let round = 0; round <= ROUNDS; round++) {
  for (let j = 0; j < names.length; j++) {
    const name = names[(round + j) % names.length];
    globalThis.gc?.();
    const s = SUBJECTS[name]();
    const cold = await burst(s.request);
    const calls = s.counter.calls;
    const warm = await burst(s.request);
    if (s.counter.calls !== calls) throw new Error(`${name}: warm requests called the loader`);
    if (round > 0) samples[name].push({ calls, cold, warm });
  }
}

const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};
const subjects = {};
for (const name of names) {
  const xs = samples[name];
  subjects[name] = {
    loaderCalls: median(xs.map((x) => x.calls)),
    coldIssueMs: median(xs.map((x) => x.cold.issueMs)),
    coldWallMs: median(xs.map((x) => x.cold.wallMs)),
    warmNsPerRequest: (median(xs.map((x) => x.warm.wallMs)) * 1e6) / N,
  };
}
console.log(JSON.stringify({ requests: N, keys: M, distinctKeys: distinct, latencyMs: LATENCY, rounds: ROUNDS, subjects }));
