// Tables and goal lines from a bench/results/*.json; README's "## Performance"
// section is generated here and nowhere else (no hand-typed figures).
//
//   node bench/report.mjs [results.json]            print (default: newest bench/results/*.json)
//   node bench/report.mjs [results.json] --readme   also regenerate README.md's section
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SUBJECTS = ["lapse", "lru-cache", "ttlcache", "map", "floor"];
const HEAD = ["lapse", "lru-cache", "@isaacs/ttlcache", "Map", "Map + clocks"];
const WORKLOADS = {
  a: "(a) get hits, sliding window",
  b: "(b) set with a TTL",
  c: "(c) Zipf α=1, 90% get / 10% set, capacity 10% of keys",
  d: "(d) as (c), with a burst scan of 2× capacity cold keys halfway",
  e: "(e) expiry churn, tick pauses",
  f: "(f) hash fields with per-field TTL (Map column: a Map of Maps)",
  j: "(j) read-through at capacity: Zipf θ=0.99, get and on a miss set, room for 10% of keys",
};

// ---------------------------------------------------------------- formatting

const sizeLabel = (n) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);

function fmt(v, unit) {
  if (v === undefined || v === null || Number.isNaN(v)) return "n/a";
  switch (unit) {
    case "ops/s":
      return v >= 1e6 ? `${(v / 1e6).toFixed(2)} M/s` : `${(v / 1e3).toFixed(0)} k/s`;
    case "ratio":
      return `${(v * 100).toFixed(1)}%`;
    case "ms":
      return v < 1 ? `${(v * 1000).toFixed(0)} µs` : `${v.toFixed(2)} ms`;
    case "entries/ms":
      return Math.round(v).toLocaleString("en-US");
    default:
      return String(Math.round(v));
  }
}

const x = (r) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : "n/a");

function val(row, s) {
  const v = row.values[s];
  return v !== undefined ? v : s === "map" ? row.values["map-of-maps"] : undefined;
}

function mdTable(head, rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map((_, i) => (i < 2 ? "---" : "---:"))), ...rows.map(line)].join("\n");
}

/** One table per environment. */
export function envTable(env) {
  const rows = [];
  let last = null;
  for (const r of env.rows) {
    if (r.metric.startsWith("ticks")) continue;
    const w = r.workload !== last ? `**${r.workload}**` : "";
    last = r.workload;
    const cells = SUBJECTS.map((s) => fmt(val(r, s), r.unit));
    const speed = r.unit === "ops/s";
    const lapse = val(r, "lapse");
    rows.push([
      w,
      `${r.metric} @ ${sizeLabel(r.size)}`,
      ...cells,
      speed ? x(lapse / val(r, "lru-cache")) : "",
      speed ? x(lapse / val(r, "map")) : "",
    ]);
  }
  return mdTable(["", "workload", ...HEAD, "lapse ÷ lru", "lapse ÷ Map"], rows);
}

const mib = (b) => (b / 2 ** 20).toFixed(1);

export function memoryTable(mem) {
  const mb = mib;
  return mdTable(
    ["", "subject", "bytes / entry", "JS heap MiB", "off-heap MiB", "of which wasm MiB"],
    SUBJECTS.filter((s) => mem.subjects[s]).map((s) => {
      const m = mem.subjects[s];
      return ["", HEAD[SUBJECTS.indexOf(s)], m.bytesPerEntry.toFixed(1), mb(m.heapBytes), mb(m.externalBytes), mb(m.wasmBytes)];
    }),
  );
}

// ---------------------------------------------------------------- goals

function find(env, workload, size, metricStart) {
  return env?.rows.find((r) => r.workload === workload && r.size === size && r.metric.startsWith(metricStart));
}

/** Each run's ratio a/b, when the row merges several runs. */
function perRun(row, a, b) {
  if (!row.runs || row.runs.length < 2) return "";
  return ` [per run: ${row.runs.map((v) => x(v[a] / v[b])).join(", ")}]`;
}

/** How far the Map + clocks floor itself is from a bare Map, for a goal line. */
function floor(row) {
  const f = row.values.floor;
  if (f === undefined) return "";
  return ` (the Map + clocks floor: Map = ${x(row.values.map / f)} floor, floor = ${x(f / row.values.lapse)} lapse)`;
}

/** [{ ok, text }] — reported, not asserted. */
export function goals(result) {
  const out = [];
  const add = (ok, text) => out.push({ ok, text });
  for (const [name, env] of Object.entries(result.envs)) {
    const sizes = [...new Set(env.rows.filter((r) => r.workload === "a" || r.workload === "b").map((r) => r.size))];
    for (const n of sizes) {
      const tag = `${name} ${sizeLabel(n)}`;
      const g = find(env, "a", n, "get hit");
      if (g) {
        const r = g.values.lapse / g.values["lru-cache"];
        add(r >= 1.5, `${tag}: get ≥ 1.5× lru-cache: ${fmt(g.values.lapse, "ops/s")} vs ${fmt(g.values["lru-cache"], "ops/s")} = ${x(r)}${perRun(g, "lapse", "lru-cache")}`);
        if (g.values.floor !== undefined) {
          const f = g.values.floor / g.values.lapse;
          add(f <= 1.15, `${tag}: get within 1.15× of the Map + clocks floor: floor ${fmt(g.values.floor, "ops/s")} = ${x(f)} lapse${perRun(g, "floor", "lapse")}`);
        }
        const m = g.values.map / g.values.lapse;
        add(m <= 1.3, `${tag}: get within 1.3× of a bare Map: Map ${fmt(g.values.map, "ops/s")} = ${x(m)} lapse${perRun(g, "map", "lapse")}${floor(g)}`);
      }
      const s = find(env, "b", n, "set combined");
      if (s) {
        const ins = find(env, "b", n, "set new keys");
        const ovw = find(env, "b", n, "set overwrite");
        const r = s.values.lapse / s.values["lru-cache"];
        const parts = `(new keys ${x(ins.values.lapse / ins.values["lru-cache"])}, overwrites ${x(ovw.values.lapse / ovw.values["lru-cache"])})`;
        add(r >= 2, `${tag}: set ≥ 2× lru-cache: ${fmt(s.values.lapse, "ops/s")} vs ${fmt(s.values["lru-cache"], "ops/s")} = ${x(r)} ${parts}${perRun(s, "lapse", "lru-cache")}`);
        add(r >= 1.5, `${tag}: set ≥ 1.5× lru-cache (issue 16; goal 2×): ${x(r)}`);
        if (s.values.floor !== undefined) {
          const f = s.values.floor / s.values.lapse;
          add(f <= 1.3, `${tag}: set within 1.3× of the Map + clocks floor: floor ${fmt(s.values.floor, "ops/s")} = ${x(f)} lapse${perRun(s, "floor", "lapse")}`);
        }
        const m = s.values.map / s.values.lapse;
        add(m <= 1.3, `${tag}: set within 1.3× of a bare Map: Map ${fmt(s.values.map, "ops/s")} = ${x(m)} lapse${perRun(s, "map", "lapse")}${floor(s)}`);
      }
    }
  }
  for (const [name, env] of Object.entries(result.envs)) {
    for (const r of env.rows.filter((r) => r.workload === "j" && r.unit === "ops/s")) {
      const h = find(env, "j", r.size, r.metric.replace("ops/s", "hit ratio"));
      const q = r.values.lapse / r.values["lru-cache"];
      const hr = h ? ` (hit ratio ${(h.values.lapse * 100).toFixed(1)}% vs ${(h.values["lru-cache"] * 100).toFixed(1)}%)` : "";
      add(
        q >= 1 && (!h || h.values.lapse >= h.values["lru-cache"]),
        `${name} ${sizeLabel(r.size)} keys: read-through at capacity ≥ lru-cache with the hit-ratio lead (goal 1.2×): ${fmt(r.values.lapse, "ops/s")} vs ${fmt(r.values["lru-cache"], "ops/s")} = ${x(q)}${perRun(r, "lapse", "lru-cache")}${hr}`,
      );
    }
  }
  // Hit ratios are deterministic (fixed seed, no clock dependence): taken from Node.
  const env = result.envs.node ?? result.envs.chromium;
  const pp = (v) => `${(v * 100).toFixed(1)}%`;
  for (const n of [...new Set((env?.rows ?? []).filter((r) => r.workload === "c").map((r) => r.size))]) {
    const c = find(env, "c", n, "zipf 90/10, cap 10%: hit");
    if (c) {
      add(c.values.lapse >= c.values["lru-cache"], `${sizeLabel(n)}: (c) hit ratio ≥ lru-cache: ${pp(c.values.lapse)} vs ${pp(c.values["lru-cache"])}`);
    }
    const d = find(env, "d", n, "zipf + scan: hit ratio, after");
    const dAll = find(env, "d", n, "zipf + scan: hit ratio, whole");
    if (d && dAll) {
      const gap = d.values.lapse - d.values["lru-cache"];
      add(
        gap >= 0.02 && dAll.values.lapse > dAll.values["lru-cache"],
        `${sizeLabel(n)}: (d) hit ratio clearly above lru-cache (≥ 2 points after the scan): after ${pp(d.values.lapse)} vs ${pp(d.values["lru-cache"])} (${gap >= 0 ? "+" : ""}${(gap * 100).toFixed(1)} points), whole run ${pp(dAll.values.lapse)} vs ${pp(dAll.values["lru-cache"])}`,
      );
    }
  }
  for (const [name, e] of Object.entries(result.envs)) {
    const p99 = e.rows.find((r) => r.metric === "tick pause p99");
    if (p99) {
      const mx = e.rows.find((r) => r.metric === "tick pause max");
      const cpu = e.rows.find((r) => r.metric === "tick pause p99, CPU time");
      const also = cpu ? ` (CPU time: p99 ${fmt(cpu.values.lapse, "ms")})` : "";
      add(p99.values.lapse <= 1, `${name}: tick p99 ≤ 1 ms at sweepBudget 1000: p99 ${fmt(p99.values.lapse, "ms")}, max ${fmt(mx.values.lapse, "ms")}${also}`);
    }
  }
  if (result.memory) {
    const m = result.memory.subjects;
    add(
      m.lapse.bytesPerEntry <= m["lru-cache"].bytesPerEntry,
      `memory per entry ≤ lru-cache at ${sizeLabel(result.memory.n)}: ${m.lapse.bytesPerEntry.toFixed(1)} vs ${m["lru-cache"].bytesPerEntry.toFixed(1)} bytes`,
    );
  }
  if (result.wasm) {
    add(result.wasm.gzipBytes <= 40_000, `wasm ≤ 40 KB gzipped: ${result.wasm.gzipBytes} bytes (${result.wasm.rawBytes} raw)`);
  }
  return out;
}

// ---------------------------------------------------------------- output

function load(m) {
  const l = (a) => a.map((v) => v.toFixed(2)).join(" ");
  return `load average ${l(m.loadavgStart)} at the start, ${l(m.loadavgEnd ?? m.loadavgStart)} at the end`;
}

/** The whole report as markdown (README section body and console output). */
export function markdown(result, jsonPath) {
  const m = result.meta;
  const envs = Object.entries(result.envs);
  const parts = [];
  parts.push(
    `Generated by \`bench/report.mjs\` from [\`${jsonPath}\`](${jsonPath}) — a run of \`${m.command}\` ` +
      `on ${m.date.slice(0, 10)} (commit \`${m.commit}\`${m.dirty ? ", uncommitted changes" : ""}). ` +
      `Machine: ${m.cores} cores (${m.cpu}), ${m.memoryGB} GB, ${m.os}; ${load(m)}. ` +
      `Node ${m.node}${m.chromium ? `, Chromium ${m.chromium} (headless, playwright-core)` : ""}.`,
  );
  parts.push(
    `To reproduce: \`${m.command}\` (builds \`pkg/\`, then runs \`node bench/run.mjs\`; this run took ${((m.seconds ?? 0) / 60).toFixed(1)} min; ` +
      "`make bench BENCH_ARGS=--quick` checks the harness with small sizes). Figures are medians of interleaved rounds after a warm-up round; " +
      "ratios compare medians of the same run. Higher is better except for pauses." +
      (m.runs > 1
        ? ` The Node and Chromium suites ran ${m.runs} times, each in a fresh process or browser; every figure is the median over those runs ` +
          "of each run's median, and goal lines list each run's own ratio: on this shared machine a whole process can run up to 2× slower than the next."
        : ""),
  );
  if (m.quick) parts.push("**Quick run: small sizes, few rounds; the figures mean nothing.**");
  const losses = [];
  for (const [name, env] of envs) {
    for (const r of env.rows) {
      const l = r.values.lapse;
      const o = r.values["lru-cache"];
      if (r.unit === "ops/s" && l !== undefined && o !== undefined && l < o) {
        losses.push(`${name}: ${WORKLOADS[r.workload]?.split(":")[0] ?? r.workload} — ${r.metric} @ ${sizeLabel(r.size)}: ${x(l / o)} lru-cache`);
      }
    }
  }
  if (result.memory?.subjects.lapse && result.memory.subjects["lru-cache"]) {
    const m = result.memory.subjects;
    if (m.lapse.bytesPerEntry > m["lru-cache"].bytesPerEntry) {
      losses.push(`memory per entry at ${sizeLabel(result.memory.n)}: ${m.lapse.bytesPerEntry.toFixed(1)} bytes vs lru-cache's ${m["lru-cache"].bytesPerEntry.toFixed(1)}`);
    }
  }
  if (losses.length) {
    parts.push("### Where lapse loses to lru-cache in this run");
    parts.push(losses.map((l) => `- ${l}`).join("\n"));
  }
  parts.push("### Goals (reported, not asserted)");
  parts.push(goals(result).map((g) => `- ${g.ok ? "**pass**" : "**miss**"} ${g.text}`).join("\n"));
  for (const [name, env] of envs) {
    const v = name === "node" ? `Node ${m.node}` : `Chromium ${m.chromium}`;
    parts.push(`### ${v}`);
    parts.push(envTable(env));
  }
  if (result.memory) {
    parts.push(`### (g) Memory per entry at ${sizeLabel(result.memory.n)} entries (Node, a fresh process per subject)`);
    parts.push(memoryTable(result.memory));
    parts.push(
      "JS heap (`heapUsed`) plus off-heap (`external`: typed arrays, and wasm memory, which Node counts there) after full GCs, " +
        "minus a baseline taken before the cache was built. Key strings exist before the baseline and values are small integers, " +
        "so this is what the cache adds per entry. Same configurations as (a); lru-cache preallocates for `max` = n. " +
        "Wasm memory only grows (doubling), so lapse's figure includes growth slack" +
        (result.memory.subjects.lapse?.engineBytes
          ? `: of its ${mib(result.memory.subjects.lapse.wasmBytes)} MiB, the engine's columns and removal log hold ${mib(result.memory.subjects.lapse.engineBytes)}.`
          : "."),
    );
  }
  if (result.wasm) {
    parts.push(`### (h) Shipped wasm`);
    parts.push(`\`${result.wasm.file}\`: ${result.wasm.rawBytes.toLocaleString("en-US")} bytes raw, ${result.wasm.gzipBytes.toLocaleString("en-US")} bytes gzipped (level 9).`);
  }
  parts.push("### How each workload is run");
  const env0 = envs[0]?.[1];
  const c = env0?.config;
  const lines = [
    `Subjects: lapse \`TtlCache({ ttl: 1 h, idle: 10 min, maxEntries })\`; lru-cache@11 \`LRUCache({ max, ttl: 1 h, updateAgeOnGet: true })\`; ` +
      "@isaacs/ttlcache@2 `TTLCache({ max, ttl: 1 h })`; a bare `Map` (bounded workloads: a Map evicting its oldest insert, FIFO); " +
      "Map + clocks (`ClockMap` in bench/lib/subjects.mjs, (a) and (b) only): a Map from key to row plus one `[abs, last, idle]` Float64Array row per entry, " +
      "checked and restarted on `get`, with no expiry index, eviction or validation: the least a cache with a sliding deadline per entry can do. " +
      "lapse's clock is driven by the loop: `tick(Date.now())` every 1024 operations (the others read their own clocks). " +
      "Each subject gets its own copy of the timed loop, so call sites stay monomorphic.",
    `${WORKLOADS.a}: n keys written (untimed), then ${c ? c.minOps.toLocaleString("en-US") : "≥ 1M"} or n reads (whichever is more) in a fixed shuffled order; every read hits. ` +
      "In (a) ttlcache runs without `updateAgeOnGet`, which re-files the key by filtering its whole expiration bucket on every read.",
    `${WORKLOADS.b}: both clocks set, as in (a) (lapse \`ttl\` + \`idle\`, lru-cache \`updateAgeOnGet\`, Map + clocks an idle window). A fresh cache, n new keys (TTL from the constructor), then n overwrites in a shuffled order; ` +
      "repeated to at least 1M operations at small n. Combined = the time for n inserts + n overwrites. " +
      "ttlcache's overwrites are timed over the first 5,000 of each pass (each filters its expiration bucket; a full pass takes minutes).",
    `${WORKLOADS.c}: keyspace n, capacity n/10, a trace of ${c ? Object.entries(c.zipfOps).map(([k, v]) => `${sizeLabel(+k)} keys: ${sizeLabel(v)} ops`).join(", ") : "fixed-length"} ` +
      `(Zipf α=${c?.zipfAlpha ?? 1}, seed ${c?.seed ?? "fixed"}, ranks mapped to keys by a fixed permutation), starting cold; a read miss is followed by a set. ` +
      "ttlcache only up to 100k keys: each of its evictions starts a for-in over every expiration bucket, and a 1M-key round did not finish in 5 minutes.",
    `${WORKLOADS.d}: the same trace split in two halves, with a burst of 2 × capacity never-seen keys (get miss, then set) between them. ` +
      "Hit ratio over all reads (scan included), over the first half, and over the second half (after the scan).",
    `${WORKLOADS.e}: ${c ? c.churn.n.toLocaleString("en-US") : "1M"} entries with TTLs uniform in [1, ${c?.churn.period ?? "?"}] ms on a virtual clock, advanced ${c?.churn.step ?? "?"} ms per step; ` +
      "performance.now() around each call (in Node also the process's CPU time, `process.cpuUsage()`, which leaves out the time slices other processes take during a call on a shared machine). lapse: `tick(now)` at the default sweepBudget (1000) until empty. " +
      `lru-cache: \`perf\` option = the virtual clock (ttlResolution 0), \`purgeStale()\` per step (a full scan), first ${c?.churn.lruSteps ?? "?"} steps only. ` +
      "ttlcache: its timer cancelled, `purgeStale()` per step, `performance.now` patched to the virtual clock. Map: n/a. " +
      "Swept per ms = entries removed ÷ total time inside those calls.",
    `${WORKLOADS.j}: ${c?.readThrough ? c.readThrough.keys.map((k) => `${sizeLabel(k)} keys (room ${sizeLabel(k / 10)}): ${sizeLabel(c.readThrough.ops[k])} ops`).join(", ") : "200k and 1M keys"}, ` +
      "both clocks on (lapse `ttl` + `idle`, lru-cache `ttl` + `updateAgeOnGet`); `get`, and on a miss `set` (what a loader does); the first quarter of the trace " +
      "fills the cache untimed, ops/s and hit ratio are over the other three quarters, where every miss evicts. Map: a FIFO-evicting Map, for reference.",
    `${WORKLOADS.f}: n fields = n/10 keys × 10 fields, \`hset(key, field, value, { ttl })\`, then every field read once in a shuffled order with \`hget\`. ` +
      "Baseline: `Map<key, Map<field, { value, exp }>>` checking `exp` on read.",
  ];
  parts.push(lines.map((l) => `- ${l}`).join("\n"));
  return parts.join("\n\n");
}

export function printReport(result, jsonPath = "(this run)") {
  console.log(`\n${markdown(result, jsonPath)}\n`);
}

/** Replaces (or appends) README.md's "## Performance" section. */
export function writeReadme(readmePath, result, jsonPath) {
  const body = `## Performance\n\n<!-- generated by bench/report.mjs from ${jsonPath}; do not edit by hand -->\n\n${markdown(result, jsonPath)}\n`;
  const old = existsSync(readmePath) ? readFileSync(readmePath, "utf8") : "";
  let out;
  const start = old.search(/^## Performance\s*$/m);
  if (start < 0) {
    out = (old.length ? old.replace(/\n*$/, "\n\n") : "") + body;
  } else {
    const rest = old.slice(start + 1);
    const next = rest.search(/^## /m);
    out = old.slice(0, start) + body + (next < 0 ? "" : "\n" + rest.slice(next));
  }
  writeFileSync(readmePath, out);
}

// ---------------------------------------------------------------- CLI
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = join(here, "..");
  const argv = process.argv.slice(2);
  let file = argv.find((a) => !a.startsWith("--"));
  if (!file) {
    const dir = join(here, "results");
    const all = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
    if (all.length === 0) throw new Error("no bench/results/*.json yet: run `make bench`");
    file = join(dir, all[all.length - 1]);
  }
  const result = JSON.parse(readFileSync(file, "utf8"));
  const rel = relative(root, file);
  printReport(result, rel);
  if (argv.includes("--readme")) {
    writeReadme(join(root, "README.md"), result, rel);
    console.error(`README.md: ## Performance regenerated from ${rel}`);
  }
}
