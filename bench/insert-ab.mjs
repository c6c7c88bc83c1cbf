// Interleaved A/B of new-key inserts between built packages, one fresh
// process per sample (bench (b)'s insert part: TtlCache({ ttl: 1 h, idle:
// 10 min, maxEntries: n }), a tick every 1024 ops, a fresh cache per round).
//
//   node bench/insert-ab.mjs [--n 100000] [--procs 10] [--rounds 5] [--reps 10]
//        [--mode ins|insovw|suite] [--free] [--split] [--flags "--expose-gc ..."] A/pkg B/pkg ...
//
// Each process (`--child`) imports one package, discards a warm-up round,
// then times `rounds` rounds of `reps` fresh caches (the insert loop only,
// wall and process CPU time) and prints per-round ns per insert.
//   ins     the bench's insert loop only
//   insovw  each cache also takes n shuffled overwrites after its (timed) inserts, as in (b)
//   suite   bench/lib/suite.mjs's runSuite({only: set}) with lru-cache in the
//           same process: per-round lapse ns/insert and lapse/lru-cache ratio
// --free frees each cache after its inserts (`c.free()`); without it the
// round's caches are dropped, as the bench does, and their engines are freed
// by the FinalizationRegistry only after the round (a synchronous loop gives
// it no turn), so a round ends with `reps` dead engines in wasm memory.
// --split also times every call into the engine inside the timed loop (each
// method of the package's RawEngine wrapped, outermost calls only, with any
// log replay they make): "engine" ns per insert, part of "wall" (not in
// `suite` mode, which times through runSuite).
// "mem" is the wasm memory at the child's end.
// The packages run in turn (the order rotates per process), so load drift
// hits all alike. Reports, per package, the median over processes of each
// process's median, the spread (min..max of those), and each package's
// median paired ratio against the first.
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { loopInsert, loopOverwrite, median as med } from "./lib/suite.mjs";

const argv = process.argv.slice(2);
const opt = { n: 100000, procs: 10, rounds: 5, reps: 0, mode: "ins", flags: "--expose-gc", child: false, free: false, split: false };
const pkgs = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--child") opt.child = true;
  else if (a === "--free") opt.free = true;
  else if (a === "--split") opt.split = true;
  else if (a.startsWith("--")) opt[a.slice(2)] = argv[++i];
  else pkgs.push(a);
}
for (const k of ["n", "procs", "rounds", "reps"]) opt[k] = Number(opt[k]);
if (!opt.reps) opt.reps = Math.max(1, Math.round(1_000_000 / opt.n));

async function child() {
  const url = pathToFileURL(resolve(pkgs[0], "dist/lapse.js")).href;
  const { TtlCache } = await import(url);
  const { makeKeys, shuffled } = await import("./lib/data.mjs");
  const n = opt.n;
  const keys = makeKeys(n);
  const gc = globalThis.gc ?? (() => {});
  const out = { wall: [], cpu: [], ratio: [], engine: [], mem: 0 };
  const glue = await import(url.replace(/lapse\.js$/, "glue.js"));
  let inEngine = 0;
  if (opt.split) {
    const proto = glue.RawEngine.prototype;
    let depth = 0;
    for (const m of Object.getOwnPropertyNames(proto)) {
      const f = proto[m];
      if (m === "constructor" || typeof f !== "function") continue;
      proto[m] = function (...a) {
        const t0 = depth++ === 0 ? performance.now() : 0;
        try {
          return f.apply(this, a);
        } finally {
          if (--depth === 0) inEngine += performance.now() - t0;
        }
      };
    }
  }
  const memMB = () => (glue.wasmMemory ? glue.wasmMemory().buffer.byteLength / 2 ** 20 : NaN);
  if (opt.mode === "suite") {
    const { LRUCache } = await import("lru-cache");
    const { TTLCache } = await import("@isaacs/ttlcache");
    const { runSuite } = await import("./lib/suite.mjs");
    const res = await runSuite({ TtlCache, LRUCache, TTLCache }, { sizes: [n], workloads: ["set"], rounds: { [n]: opt.rounds } });
    const row = res.rows.find((r) => r.metric === "set new keys");
    out.wall = row.samples.lapse.map((v) => 1e9 / v);
    out.cpu = out.wall;
    out.ratio = row.samples.lapse.map((v, i) => v / row.samples["lru-cache"][i]);
    out.mem = memMB();
    console.log(JSON.stringify(out));
    return;
  }
  const order = shuffled(n, 20240607 + 2);
  const tick = (c) => c.tick(Date.now());
  const make = () => new TtlCache({ ttl: 3_600_000, idle: 600_000, maxEntries: n });
  for (let r = 0; r <= opt.rounds; r++) {
    gc();
    await new Promise((ok) => setTimeout(ok, 0));
    let wall = 0;
    let cpu = 0;
    let engine = 0;
    for (let k = 0; k < opt.reps; k++) {
      const c = make();
      tick(c);
      inEngine = 0;
      const u0 = process.cpuUsage();
      const t0 = performance.now();
      loopInsert(c, keys, n, tick);
      const t1 = performance.now();
      const u1 = process.cpuUsage(u0);
      engine += inEngine;
      if (opt.mode === "insovw") loopOverwrite(c, keys, order, tick);
      if (c.size !== n) throw new Error(`size ${c.size}`);
      if (opt.free) c.free();
      wall += t1 - t0;
      cpu += (u1.user + u1.system) / 1000;
    }
    if (r === 0) continue; // warm-up
    out.wall.push((wall * 1e6) / (n * opt.reps));
    out.cpu.push((cpu * 1e6) / (n * opt.reps));
    out.engine.push((engine * 1e6) / (n * opt.reps));
  }
  out.mem = memMB();
  console.log(JSON.stringify(out));
}

function driver() {
  const self = fileURLToPath(import.meta.url);
  const res = pkgs.map(() => ({ wall: [], cpu: [], ratio: [], engine: [], mem: [] }));
  const flags = opt.flags.split(" ").filter(Boolean);
  const pass = ["--n", opt.n, "--rounds", opt.rounds, "--reps", opt.reps, "--mode", opt.mode].map(String);
  if (opt.free) pass.push("--free");
  if (opt.split) pass.push("--split");
  for (let p = 0; p < opt.procs; p++) {
    for (let j = 0; j < pkgs.length; j++) {
      const i = (j + p) % pkgs.length;
      const r = spawnSync(process.execPath, [...flags, self, "--child", ...pass, pkgs[i]], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(r.stderr);
      const o = JSON.parse(r.stdout.trim().split("\n").pop());
      res[i].wall.push(med(o.wall));
      res[i].cpu.push(med(o.cpu));
      res[i].ratio.push(med(o.ratio.length ? o.ratio : [NaN]));
      res[i].engine.push(med(o.engine.length ? o.engine : [NaN]));
      res[i].mem.push(o.mem);
    }
    process.stderr.write(`proc ${p + 1}/${opt.procs}: ${pkgs.map((_, i) => res[i].cpu.at(-1).toFixed(0)).join(" ")}\n`);
  }
  const f = (xs) => `${med(xs).toFixed(0)} [${Math.min(...xs).toFixed(0)}..${Math.max(...xs).toFixed(0)}]`;
  console.log(`mode ${opt.mode}${opt.free ? " (free)" : ""}${opt.split ? " (split)" : ""}, n ${opt.n}, ${opt.procs} processes x ${opt.rounds} rounds x ${opt.reps} caches; ns per insert, median of process medians [min..max]`);
  pkgs.forEach((p, i) => {
    const pair = res[i].cpu.map((v, k) => v / res[0].cpu[k]);
    const extra = opt.mode === "suite" ? `  vs lru-cache ${med(res[i].ratio).toFixed(2)}x [${Math.min(...res[i].ratio).toFixed(2)}..${Math.max(...res[i].ratio).toFixed(2)}]` : `  cpu ${f(res[i].cpu)}`;
    const split = opt.split ? `  engine ${f(res[i].engine)}` : "";
    console.log(`${p.padEnd(28)} wall ${f(res[i].wall)}${split}${extra}  paired/first ${med(pair).toFixed(3)} [${Math.min(...pair).toFixed(2)}..${Math.max(...pair).toFixed(2)}]  mem ${med(res[i].mem).toFixed(0)} MB`);
  });
}

if (opt.split && opt.mode === "suite") throw new Error("--split: not with --mode suite (runSuite does its own timing)");
if (opt.child) await child();
else driver();
