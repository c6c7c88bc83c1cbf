// Interleaved A/B of get hits between built packages, in one process (bench
// (a)'s loop: TtlCache({ ttl: 1 h, idle: 10 min, maxEntries: n }) filled with
// n keys, then `ops` hits in a shuffled cycle, a tick every 1024), with
// the "Map + clocks" floor (bench/lib/subjects.mjs) as a third subject.
//
//   node --expose-gc bench/get-ab.mjs [--sizes 100000,1000000] [--rounds 15] [--ops 1000000] A/pkg B/pkg ...
//
// Each package is its own module instance (its own wasm), each subject its
// own copy of the loop (monomorphic feedback, as bench/lib/suite.mjs does).
// Rounds run every subject once, the starting one rotating; each sample is
// the process CPU time of one pass (user + system), in ns per get. Reports
// per subject the median and the spread over rounds, and each package's
// median paired ratio against the first.
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { cycleOrder, makeKeys } from "./lib/data.mjs";
import { kvSubjects } from "./lib/subjects.mjs";
import { clone, loopGet } from "./lib/suite.mjs";

const argv = process.argv.slice(2);
const opt = { sizes: "100000,1000000", rounds: 15, ops: 1_000_000 };
const pkgs = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a.startsWith("--")) opt[a.slice(2)] = argv[++i];
  else pkgs.push(a);
}
const gc = globalThis.gc ?? (() => {});
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const subjects = [];
for (const p of pkgs) {
  const { TtlCache } = await import(pathToFileURL(resolve(p, "dist/lapse.js")).href + `?${subjects.length}`);
  const s = kvSubjects({ TtlCache }).find((x) => x.name === "lapse");
  subjects.push({ ...s, name: p });
}
subjects.push(kvSubjects({}).find((x) => x.name === "floor"));

for (const n of opt.sizes.split(",").map(Number)) {
  const keys = makeKeys(n);
  const ops = Number(opt.ops);
  const order = cycleOrder(n, ops, 20240607 + 1);
  const live = subjects.map((s) => {
    const c = s.make(n, true);
    for (let i = 0; i < n; i++) c.set(keys[i], i);
    s.tick(c);
    // A fresh copy of the loop per subject: its own type feedback.
    return { s, c, loop: clone(loopGet), ns: [] };
  });
  for (let r = 0; r <= Number(opt.rounds); r++) {
    for (let k = 0; k < live.length; k++) {
      const x = live[(r + k) % live.length];
      if (opt.gc !== "no") gc();
      const u0 = process.cpuUsage();
      const miss = x.loop(x.c, keys, order, x.s.tick);
      const u = process.cpuUsage(u0);
      if (miss !== 0) throw new Error(`${x.s.name}: ${miss} misses`);
      if (r > 0) x.ns.push(((u.user + u.system) * 1000) / ops); // round 0: warm-up
    }
  }
  console.log(`get hits, ${n} keys, ${ops} gets a round, ${opt.rounds} rounds (CPU ns per get):`);
  for (const x of live) {
    const ratio = med(x.ns.map((v, i) => v / live[0].ns[i]));
    console.log(
      `  ${x.s.name.padEnd(28)} median ${med(x.ns).toFixed(1).padStart(6)}  (${Math.min(...x.ns).toFixed(1)}..${Math.max(...x.ns).toFixed(1)})  paired vs first ${ratio.toFixed(3)}`,
    );
  }
}
