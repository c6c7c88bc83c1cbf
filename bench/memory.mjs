// (g) Memory per entry, one subject per process (run by bench/run.mjs):
//   node --expose-gc bench/memory.mjs <lapse|lru-cache|ttlcache|map> <n>
// Prints one JSON line. The key strings are created before the baseline and
// stay alive, and every value is a small integer (no allocation), so the
// figure is what the cache itself adds per entry: heapUsed plus `external`
// (off-heap: typed arrays and wasm memory; Node counts wasm memory there),
// after full GCs, relative to a baseline taken before the cache was built.
import { LRUCache } from "lru-cache";
import { TTLCache } from "@isaacs/ttlcache";
import { TtlCache } from "../pkg/dist/lapse.js";
import { makeKeys } from "./lib/data.mjs";
import { kvSubjects } from "./lib/subjects.mjs";

const [name, nArg] = process.argv.slice(2);
const n = Number(nArg ?? 1_000_000);
if (typeof gc !== "function") throw new Error("run with --expose-gc");
const subject = kvSubjects({ TtlCache, LRUCache, TTLCache }).find((s) => s.name === name);
if (!subject) throw new Error(`unknown subject ${name}`);

const fullGc = () => {
  for (let i = 0; i < 4; i++) gc();
};
const keys = makeKeys(n);
for (const k of keys) k.length; // materialise
// Instantiate lapse's wasm memory before the baseline, for every subject alike.
const wasmBase = new TtlCache({}).stats().wasmBytes;
fullGc();
const m0 = process.memoryUsage();

const c = subject.make(n, true);
for (let i = 0; i < n; i++) c.set(keys[i], i);
subject.tick(c);
fullGc();
const m1 = process.memoryUsage();
const wasm = name === "lapse" ? c.stats().wasmBytes - wasmBase : 0;
if (c.size !== n) throw new Error(`${name}: size ${c.size}, expected ${n}`);
subject.done?.(c);

const heap = m1.heapUsed - m0.heapUsed;
const external = m1.external - m0.external;
console.log(
  JSON.stringify({
    subject: name,
    n,
    heapBytes: heap,
    externalBytes: external,
    wasmBytes: wasm,
    engineBytes: name === "lapse" ? c.stats().engineBytes : 0,
    bytesPerEntry: (heap + external) / n,
  }),
);
