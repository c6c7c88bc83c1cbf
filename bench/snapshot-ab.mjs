// Interleaved A/B of snapshot() and TtlCache.restore() between built packages,
// in one process (each package its own module instance and wasm memory).
//
//   node --expose-gc bench/snapshot-ab.mjs [--n 100000] [--rounds 15] [--values mixed|small] A/pkg B/pkg ...
//
// Each package gets the same cache: n plain entries (keys "key:i"; values:
// `small` a number, `mixed` a number, string, small object or array in turn,
// every 8th with its own TTL) and n/100 hashes of 4 fields. A round takes
// one snapshot and one restore per package, in turn (the order rotates),
// and reports process CPU time per operation; the summary is each
// package's median and its median paired ratio against the first.
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const argv = process.argv.slice(2);
const opt = { n: 100000, rounds: 15, values: "mixed" };
const pkgs = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i].startsWith("--")) opt[argv[i].slice(2)] = argv[++i];
  else pkgs.push(argv[i]);
}
opt.n = Number(opt.n);
opt.rounds = Number(opt.rounds);
const gc = globalThis.gc ?? (() => {});

function value(i) {
  if (opt.values === "small") return i;
  switch (i % 4) {
    case 0:
      return i;
    case 1:
      return `value number ${i}`;
    case 2:
      return { id: i, name: `n${i}`, ok: true };
    default:
      return [i, i + 1, "x"];
  }
}

const caches = [];
for (const p of pkgs) {
  const { TtlCache } = await import(pathToFileURL(resolve(p, "dist/lapse.js")).href);
  const c = new TtlCache({ now: 0, ttl: 3_600_000, idle: 600_000 });
  for (let i = 0; i < opt.n; i++) c.set(`key:${i}`, value(i), i % 8 === 0 ? { ttl: 1000 + i } : undefined);
  for (let i = 0; i < opt.n / 100; i++) for (let f = 0; f < 4; f++) c.hset(`hash:${i}`, `f${f}`, value(i + f));
  caches.push({ p, TtlCache, c, snap: [], restore: [] });
}

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

let bytes = 0;
for (let r = 0; r < opt.rounds; r++) {
  for (let k = 0; k < caches.length; k++) {
    const x = caches[(k + r) % caches.length];
    gc();
    let t = cpu();
    const b = x.c.snapshot();
    x.snap.push(cpu() - t);
    bytes = b.length;
    gc();
    t = cpu();
    const back = x.TtlCache.restore(b);
    x.restore.push(cpu() - t);
    if (back.size !== x.c.size) throw new Error(`${x.p}: restored ${back.size} of ${x.c.size}`);
    back.free();
  }
}

const med = (a) => {
  const s = [...a].sort((p, q) => p - q);
  return s[s.length >> 1];
};
console.log(`n ${opt.n} (+${opt.n / 100} hashes of 4 fields), values ${opt.values}, snapshot ${bytes} B, ${opt.rounds} rounds; CPU ms (median, min..max), ratio to the first (median of paired ratios)`);
for (const x of caches) {
  const ratio = (k) => med(x[k].map((v, i) => v / caches[0][k][i])).toFixed(2);
  console.log(
    `${x.p}: snapshot ${med(x.snap).toFixed(1)} (${Math.min(...x.snap).toFixed(1)}..${Math.max(...x.snap).toFixed(1)}) x${ratio("snap")}` +
      `  restore ${med(x.restore).toFixed(1)} (${Math.min(...x.restore).toFixed(1)}..${Math.max(...x.restore).toFixed(1)}) x${ratio("restore")}`,
  );
}
