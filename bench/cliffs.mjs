// Cost cliffs (issue 13), run by bench/run.mjs in a fresh process:
//   node --expose-gc bench/cliffs.mjs [--quick]
// Prints one JSON line of figures (not pass/fail: the machine decides the
// times). What each measures:
// - smallCaches: constructing N caches with one entry each (some with a large
//   maxEntries, which once preallocated ~3.3 MiB each): ms per cache and
//   wasm bytes per cache.
// - clearAfterBig: clear() of a near-empty cache that once held 1M entries.
// - restoreFactor: wasm memory growth of restore() over the snapshot's size,
//   for small plain entries (the once 15-41x case).
// - freeLoop: wasm memory after creating and free()ing caches in a loop.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { TtlCache } from "../pkg/dist/lapse.js";

// Child mode: restore the snapshot in a file, in a process whose wasm memory
// holds nothing else, and report how much it grew.
if (process.argv[2] === "--restore") {
  const bytes = new Uint8Array(readFileSync(process.argv[3]));
  const before = new TtlCache().stats().wasmBytes;
  const u0 = process.cpuUsage();
  const r = TtlCache.restore(bytes);
  const u = process.cpuUsage(u0);
  const s = r.stats();
  console.log(JSON.stringify({ wasmGrowth: s.wasmBytes - before, engineBytes: s.engineBytes, cpuMs: (u.user + u.system) / 1000 }));
  process.exit(0);
}

const quick = process.argv.includes("--quick");
const out = {};
const wasm = () => new TtlCache().stats().wasmBytes;

{
  const n = quick ? 300 : 3000;
  const before = wasm();
  const t0 = performance.now();
  const keep = [];
  for (let i = 0; i < n; i++) {
    const c = new TtlCache({ maxEntries: i % 2 ? 100_000 : Infinity, ttl: 60_000 });
    c.set("a", i);
    keep.push(c);
  }
  const ms = performance.now() - t0;
  out.smallCaches = { n, msPerCache: ms / n, wasmBytesPerCache: (wasm() - before) / n, engineBytes: keep[0].stats().engineBytes };
  for (const c of keep) c.free();
}

{
  const n = quick ? 100_000 : 1_000_000;
  const c = new TtlCache({ ttl: 60_000 });
  for (let i = 0; i < n; i++) c.set(`k${i}`, i);
  c.clear();
  c.set("a", 1);
  const reps = 200;
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) {
    c.clear();
    c.set("a", i);
  }
  out.clearAfterBig = { heldBefore: n, msPerClear: (performance.now() - t0) / reps };
  c.free();
}

{
  const n = quick ? 200_000 : 2_000_000;
  const c = new TtlCache({ ttl: 60_000 });
  for (let i = 0; i < n; i++) c.set(`k${i}`, i);
  const bytes = c.snapshot();
  c.free();
  const file = join(tmpdir(), `lapse-cliffs-${process.pid}.snap`);
  writeFileSync(file, bytes);
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--restore", file], { encoding: "utf8" });
  rmSync(file, { force: true });
  if (r.status !== 0) throw new Error(`restore child failed: ${r.stderr}`);
  const f = JSON.parse(r.stdout.trim());
  out.restoreFactor = { entries: n, snapshotBytes: bytes.length, ...f, factor: f.wasmGrowth / bytes.length };
}

{
  const before = wasm();
  for (let i = 0; i < (quick ? 1000 : 10000); i++) {
    const c = new TtlCache({ maxEntries: 65_536 });
    for (let j = 0; j < 100; j++) c.set(`k${j}`, j);
    c.free();
  }
  out.freeLoop = { wasmGrowth: wasm() - before };
}

console.log(JSON.stringify(out));
