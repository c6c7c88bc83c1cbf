// `make bench` (Redis part): a read-heavy workload against a private
// redis-server, three ways: plain node-redis GETs, node-redis's own
// client-side cache (RESP3 `clientSideCache`), and lapse's NearCache.
//
//   node bench/redis.mjs [--reads 50000] [--keys 1000] [--write-every 100]
//
// Each read is awaited before the next (latency, not pipelining). A second
// client overwrites a random key every `--write-every` reads, so both caches
// pay for invalidations. Keys are drawn Zipf(0.99). Prints ops/s and
// per-read latency percentiles; writes bench/results/redis-<time>.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createClient } from "redis";
import { NearCache } from "../pkg/dist/redis.js";
import { startRedis } from "../tests/lib/redis.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const { values: a } = parseArgs({
  options: {
    reads: { type: "string", default: "50000" },
    keys: { type: "string", default: "1000" },
    "write-every": { type: "string", default: "100" },
    quick: { type: "boolean", default: false },
  },
  strict: false,
});
const READS = a.quick ? 5_000 : Number(a.reads);
const KEYS = Number(a.keys);
const WRITE_EVERY = Number(a["write-every"]);

/** A Zipf(0.99) sampler over [0, n) with a fixed seed, so every subject sees one stream. */
function zipfStream(n, count, seed = 42) {
  const theta = 0.99;
  const w = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += w[i] = 1 / Math.pow(i + 1, theta);
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let i = 0; i < n; i++) cdf[i] = acc += w[i] / sum;
  let s = seed >>> 0;
  const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const out = new Uint32Array(count);
  for (let j = 0; j < count; j++) {
    const r = rand();
    let lo = 0, hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < r) lo = mid + 1;
      else hi = mid;
    }
    out[j] = lo;
  }
  return out;
}

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const server = await startRedis();
const writer = createClient({ url: server.url });
await writer.connect();
const value = JSON.stringify({ name: "x".repeat(100), n: 1 });
for (let i = 0; i < KEYS; i++) await writer.set(`k${i}`, value);
const stream = zipfStream(KEYS, READS);
const writes = zipfStream(KEYS, Math.ceil(READS / WRITE_EVERY) + 1, 7);

async function run(name, read, close) {
  // Warm-up pass over the same stream's head, then the measured pass.
  for (let i = 0; i < Math.min(2_000, READS); i++) await read(`k${stream[i]}`);
  const lat = new Float64Array(READS);
  let w = 0;
  const t0 = performance.now();
  for (let i = 0; i < READS; i++) {
    if (i % WRITE_EVERY === 0) await writer.set(`k${writes[w++]}`, value);
    const s = performance.now();
    const v = await read(`k${stream[i]}`);
    lat[i] = performance.now() - s;
    if (v === undefined || v === null) throw new Error(`${name}: k${stream[i]} missing`);
  }
  const total = performance.now() - t0;
  await close();
  lat.sort();
  const r = {
    subject: name,
    readsPerSec: Math.round(READS / (total / 1000)),
    p50us: +(pct(lat, 50) * 1000).toFixed(1),
    p90us: +(pct(lat, 90) * 1000).toFixed(1),
    p99us: +(pct(lat, 99) * 1000).toFixed(1),
    maxUs: +(lat[READS - 1] * 1000).toFixed(1),
  };
  console.log(
    `${name.padEnd(28)} ${String(r.readsPerSec).padStart(9)} reads/s   p50 ${r.p50us} µs   p90 ${r.p90us} µs   p99 ${r.p99us} µs   max ${r.maxUs} µs`,
  );
  return r;
}

console.log(`Redis read-heavy: ${READS} awaited reads, ${KEYS} keys (Zipf 0.99), a remote write every ${WRITE_EVERY} reads`);
const results = [];
{
  const c = createClient({ url: server.url });
  await c.connect();
  results.push(await run("node-redis GET", (k) => c.get(k), () => c.close()));
}
{
  const c = createClient({ url: server.url, RESP: 3, clientSideCache: { ttl: 0, maxEntries: 0, evictPolicy: "LRU" } });
  await c.connect();
  results.push(await run("node-redis clientSideCache", (k) => c.get(k), () => c.close()));
}
{
  const near = await NearCache.connect(server.url, { ttl: 60_000 });
  const r = await run("lapse NearCache", (k) => near.get(k), () => near.close());
  results.push(r);
}
await writer.close();
await server.stop();

const out = join(here, "results", `redis-${new Date().toISOString().replace(/\.\d+Z$/, "Z").replaceAll(":", "-")}.json`);
if (!a.quick) {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), reads: READS, keys: KEYS, writeEvery: WRITE_EVERY, node: process.version, results }, null, 2) + "\n");
  console.log(`wrote ${out}`);
}
