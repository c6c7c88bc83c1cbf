// `make bench` (Workers part): the cost of a write and of a cold wake for a
// cache in a Durable Object, lapse/durable (a row per entry) against the old
// whole-snapshot pattern, at 1k, 10k and 100k entries, in workerd (npm) with
// SQLite storage on a temp disk. Times are HTTP round trips from this process
// (workerd freezes Date.now() while code runs, so the object cannot time
// itself); a cold wake is the first request after workerd was killed and
// restarted, minus the same request to an empty object.
//
//   node bench/durable.mjs [--sizes 1000,10000,100000] [--writes 200] [--quick]
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { freePort, waitForHttp } from "../tests/lib/net.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const { values: a } = parseArgs({
  options: { sizes: { type: "string", default: "1000,10000,100000" }, writes: { type: "string", default: "200" }, quick: { type: "boolean", default: false } },
  strict: false,
});
const SIZES = a.quick ? [1000] : a.sizes.split(",").map(Number);
const WRITES = a.quick ? 20 : Number(a.writes);
const out = join(root, "build", "bench-durable");
const disk = mkdtempSync(join(tmpdir(), "lapse-bench-durable-"));
mkdirSync(out, { recursive: true });

// The bench imports the package the way a Worker would: from pkg/ (make build).
const require = createRequire(join(root, "pkg", "package.json"));
await build({
  entryPoints: [join(here, "durable", "worker.mjs")],
  outfile: join(out, "worker.js"),
  bundle: true,
  format: "esm",
  platform: "neutral",
  conditions: ["workerd", "worker", "browser"],
  external: ["*.wasm", "cloudflare:workers"],
  alias: { lapse: join(root, "pkg", "dist", "workerd.js"), "lapse/durable": join(root, "pkg", "dist", "durable.js") },
  logLevel: "warning",
});
copyFileSync(join(root, "pkg", "dist", "lapse_bg.wasm"), join(out, "lapse_bg.wasm"));
void require;
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
writeFileSync(
  join(out, "config.capnp"),
  `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .w), (name = "disk", disk = (path = ${JSON.stringify(disk)}, writable = true)) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const w :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js"), (name = "lapse_bg.wasm", wasm = embed "lapse_bg.wasm") ],
  compatibilityDate = "2025-09-01",
  durableObjectNamespaces = [
    (className = "Rows", uniqueKey = "lapse-bench-rows", enableSql = true),
    (className = "Whole", uniqueKey = "lapse-bench-whole", enableSql = true),
  ],
  durableObjectStorage = (localDisk = "disk"),
  bindings = [ (name = "ROWS", durableObjectNamespace = "Rows"), (name = "WHOLE", durableObjectNamespace = "Whole") ],
);
`,
);

const workerd = await import("workerd");
const bin = typeof workerd.default === "string" ? workerd.default : workerd.default.default;
let child;
async function start() {
  child = spawn(bin, ["serve", join(out, "config.capnp"), "--experimental"], { stdio: ["ignore", "ignore", "inherit"] });
  await waitForHttp(`${base}/?name=probe`, 30_000);
}
async function stop() {
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
}
async function get(path, params) {
  const u = new URL(path, base);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, String(v));
  const t0 = performance.now();
  const r = await fetch(u);
  const body = await r.json();
  return { ms: performance.now() - t0, body, status: r.status };
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

await start();
const results = [];
for (const n of SIZES) {
  for (const kind of ["rows", "whole"]) {
    const name = `${kind}-${n}`;
    const fill = await get("/fill", { kind, name, n });
    if (fill.status !== 200) {
      results.push({ kind, n, error: fill.body.error });
      console.log(`${kind.padEnd(6)} n=${String(n).padStart(6)}  fill failed: ${fill.body.error}`);
      continue;
    }
    const lat = [];
    for (let i = 0; i < WRITES; i++) {
      const w = await get("/write", { kind, name, key: `w${i}` });
      if (w.status !== 200) throw new Error(`${kind} write: ${w.body.error}`);
      lat.push(w.ms);
    }
    results.push({ kind, n, writeMs: +median(lat).toFixed(3) });
  }
}
// Cold wakes: for each object, restart workerd, wake two empty objects (the
// second is the baseline: isolate and class already warm), then time the
// first request to the object under test.
for (const r of results) {
  if (r.error) continue;
  await stop();
  await start();
  await get("/", { kind: r.kind, name: `empty-a-${r.kind}-${r.n}` });
  const empty = await get("/", { kind: r.kind, name: `empty-b-${r.kind}-${r.n}` });
  const w = await get("/", { kind: r.kind, name: `${r.kind}-${r.n}` });
  r.wakeMs = +(w.ms - empty.ms).toFixed(1);
  r.size = w.body.size;
}
await stop();
rmSync(disk, { recursive: true, force: true });

console.log(`Durable Object cache: median write round trip (${WRITES} writes) and cold wake (first request after a workerd restart, minus an empty object's)`);
console.log("pattern                 entries   write ms   wake ms");
for (const r of results) {
  const label = r.kind === "rows" ? "lapse/durable (rows)" : "whole snapshot per write";
  console.log(`${label.padEnd(24)}${String(r.n).padStart(8)}   ${r.error ? "failed: " + r.error : String(r.writeMs).padStart(8) + "   " + String(r.wakeMs).padStart(7)}`);
}
