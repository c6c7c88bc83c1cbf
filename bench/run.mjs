// `make bench`: the whole benchmark, end to end.
//
//   node bench/run.mjs [--quick] [--only get,set,...] [--sizes 100000,...]
//                      [--runs N] [--skip-node] [--skip-chromium] [--skip-memory]
//                      [--skip-stampede] [--no-readme] [--out file.json]
//
// 1. (h) size of pkg/dist/lapse_bg.wasm, raw and gzipped
// 2. (g) memory per entry: node --expose-gc bench/memory.mjs, a fresh process per subject
// 3. the suite (a)-(f) in Node: node --expose-gc bench/node.mjs (a child process)
// 4. the same suite in headless Chromium (playwright-core + /usr/bin/chromium):
//    bench/page.html served from this checkout on 127.0.0.1:<random port>,
//    cross-origin isolated (COOP/COEP) so performance.now() has 5 µs resolution
//    Steps 3 and 4 run --runs times (default 1), each in a fresh process /
//    browser; the figures are then the median over runs of each run's
//    medians (bench/lib/merge.mjs). On these shared machines a whole process
//    can run 2x slower than the next one, so one run can mislead.
// 4b. (i) stampede: node --expose-gc bench/stampede.mjs (a child process):
//    concurrent requests for cold keys against a slow loader, lapse fetch vs
//    lru-cache fetch vs cache-aside without coalescing, loader calls counted
// 5. writes bench/results/<UTC timestamp>.json, prints the tables and the
//    goal lines, and (unless --quick or --no-readme) regenerates README.md's
//    "## Performance" section from that JSON (bench/report.mjs).
import { spawnSync, execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem, type as osType, release as osRelease } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { parseArgs, suiteOptions } from "./lib/options.mjs";
import { printReport, writeReadme } from "./report.mjs";
import { mergeRuns } from "./lib/merge.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const args = parseArgs(process.argv.slice(2));
const log = (m) => console.error(`[bench] ${m}`);

const stamp = new Date().toISOString().replace(/\.\d+Z$/, "Z").replaceAll(":", "-");
const outFile =
  typeof args.out === "string"
    ? args.out
    : join(root, "bench", "results", args.quick ? `quick-${stamp}.json.tmp` : `${stamp}.json`);

const git = (...a) => {
  try {
    return execFileSync("git", a, { cwd: root, encoding: "utf8" }).trim();
  } catch {
    return null;
  }
};

const argv = process.argv.slice(2);
const runs = typeof args.runs === "string" ? Number(args.runs) : 1;
if (!(Number.isInteger(runs) && runs >= 1)) throw new Error(`--runs: must be a positive integer, got ${args.runs}`);
const startedAt = Date.now();
const result = {
  meta: {
    date: new Date().toISOString(),
    command: argv.length ? `make bench BENCH_ARGS="${argv.join(" ")}"` : "make bench",
    argv,
    quick: Boolean(args.quick),
    commit: git("rev-parse", "--short=12", "HEAD"),
    // Earlier results in bench/results/ are records, not code.
    dirty: (git("status", "--porcelain", "--", "src", "pkg-template", "bench", ":!bench/results", "Cargo.toml") ?? "") !== "",
    os: `${osType()} ${osRelease()}`,
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    chromium: null,
    loadavgStart: loadavg(),
    loadavgEnd: null,
    runs,
  },
  wasm: null,
  memory: null,
  envs: {},
  stampede: null,
};

// ---------------------------------------------------------------- (h) wasm size
{
  const file = join(root, "pkg", "dist", "lapse_bg.wasm");
  const raw = readFileSync(file);
  result.wasm = { file: relative(root, file), rawBytes: raw.length, gzipBytes: gzipSync(raw, { level: 9 }).length };
  log(`wasm: ${result.wasm.rawBytes} bytes raw, ${result.wasm.gzipBytes} gzipped`);
}

// ---------------------------------------------------------------- (g) memory
if (!args["skip-memory"]) {
  const n = args.quick ? 100_000 : 1_000_000;
  const subjects = {};
  for (const s of ["lapse", "lru-cache", "ttlcache", "map", "floor"]) {
    const r = spawnSync(process.execPath, ["--expose-gc", join(here, "memory.mjs"), s, String(n)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    if (r.status !== 0) throw new Error(`memory.mjs ${s} failed (${r.status})`);
    subjects[s] = JSON.parse(r.stdout.trim().split("\n").pop());
    log(`memory ${s}: ${subjects[s].bytesPerEntry.toFixed(1)} bytes/entry`);
  }
  result.memory = { n, subjects };
}

// ---------------------------------------------------------------- cost cliffs (issue 13)
// Figures only (bench/cliffs.mjs says what each one measures).
if (!args["skip-memory"]) {
  const r = spawnSync(process.execPath, ["--expose-gc", join(here, "cliffs.mjs"), ...(args.quick ? ["--quick"] : [])], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (r.status !== 0) throw new Error(`cliffs.mjs failed (${r.status})`);
  result.cliffs = JSON.parse(r.stdout.trim().split("\n").pop());
  const f = result.cliffs;
  log(`cliffs: ${f.smallCaches.n} small caches: ${f.smallCaches.msPerCache.toFixed(3)} ms and ${Math.round(f.smallCaches.wasmBytesPerCache)} wasm bytes each`);
  log(`cliffs: clear() after ${f.clearAfterBig.heldBefore} entries: ${f.clearAfterBig.msPerClear.toFixed(3)} ms`);
  log(`cliffs: restore of ${f.restoreFactor.entries} entries: wasm grew ${(f.restoreFactor.factor).toFixed(2)}x the ${f.restoreFactor.snapshotBytes}-byte snapshot (engine ${f.restoreFactor.engineBytes} bytes), ${f.restoreFactor.cpuMs.toFixed(0)} ms CPU`);
  log(`cliffs: create + free() loop: wasm grew ${f.freeLoop.wasmGrowth} bytes`);
}

// ---------------------------------------------------------------- Node
function runNode(run) {
  const tmp = `${outFile}.node${run}.tmp`;
  const pass = argv.filter(
    (a) => !["--skip-chromium", "--skip-memory", "--skip-node", "--skip-stampede", "--no-readme"].includes(a),
  );
  for (const opt of ["--out", "--chromium-sizes", "--runs"]) {
    const at = pass.indexOf(opt);
    if (at >= 0) pass.splice(at, 2);
  }
  mkdirSync(dirname(tmp), { recursive: true });
  const r = spawnSync(process.execPath, ["--expose-gc", join(here, "node.mjs"), ...pass, "--out", tmp], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (r.status !== 0) throw new Error(`node.mjs failed (${r.status})`);
  const env = JSON.parse(readFileSync(tmp, "utf8"));
  rmSync(tmp);
  return env;
}

// ---------------------------------------------------------------- Chromium
async function runChromium() {
  const { default: sirv } = await import("sirv");
  const { launchChromium } = await import("../tests/lib/chromium.mjs");
  const serve = sirv(root, { dev: true, dotfiles: false });
  const server = createServer((req, res) => {
    // Cross-origin isolation: performance.now() at 5 µs instead of 100 µs.
    res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
    res.setHeader("Cross-Origin-Embedder-Policy", "require-corp");
    serve(req, res, () => {
      res.statusCode = 404;
      res.end("not found");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await launchChromium({ timeout: 60_000, extraArgs: ["--js-flags=--expose-gc"] });
  try {
    result.meta.chromium = browser.version();
    const page = await browser.newPage();
    const problems = [];
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
      console.error(m.text());
    });
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`${base}/bench/page.html`, { waitUntil: "load", timeout: 60_000 });
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 60_000 }).catch(() => {
      throw new Error(`bench page did not load: ${problems.join("; ")}`);
    });
    const copts = suiteOptions(
      typeof args["chromium-sizes"] === "string" ? { ...args, sizes: args["chromium-sizes"] } : args,
    );
    const env = await page.evaluate((o) => window.runBench(o), copts);
    env.env.version = result.meta.chromium;
    if (!env.env.crossOriginIsolated) log("warning: page not cross-origin isolated (100 µs timer)");
    await page.close();
    return env;
  } finally {
    await browser.close();
    server.close();
    server.closeAllConnections?.();
  }
}

{
  const node = [];
  const chromium = [];
  for (let run = 1; run <= runs; run++) {
    if (runs > 1) log(`run ${run}/${runs}`);
    if (!args["skip-node"]) node.push(runNode(run));
    if (!args["skip-chromium"]) chromium.push(await runChromium());
  }
  if (node.length) result.envs.node = mergeRuns(node);
  if (chromium.length) result.envs.chromium = mergeRuns(chromium);
}

// ---------------------------------------------------------------- (i) stampede
if (!args["skip-stampede"]) {
  const r = spawnSync(process.execPath, ["--expose-gc", join(here, "stampede.mjs"), ...(args.quick ? ["--quick"] : [])], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (r.status !== 0) throw new Error(`stampede.mjs failed (${r.status})`);
  result.stampede = JSON.parse(r.stdout.trim().split("\n").pop());
}

result.meta.loadavgEnd = loadavg();
result.meta.seconds = Math.round((Date.now() - startedAt) / 1000);
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(result, null, 1) + "\n");
log(`wrote ${relative(root, outFile)}`);
printReport(result);
if (result.stampede !== null) {
  const st = result.stampede;
  console.log(
    `\n(i) stampede: ${st.requests} concurrent requests for ${st.distinctKeys} cold keys (Zipf over ${st.keys}), loader latency ${st.latencyMs} ms, medians of ${st.rounds} rounds`,
  );
  console.log("| subject | loader calls | cold: issue ms | cold: all resolved ms | warm: ns per request |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const [name, x] of Object.entries(st.subjects)) {
    console.log(
      `| ${name} | ${x.loaderCalls} | ${x.coldIssueMs.toFixed(1)} | ${x.coldWallMs.toFixed(1)} | ${x.warmNsPerRequest.toFixed(0)} |`,
    );
  }
}
if (!args.quick && !args["no-readme"]) {
  writeReadme(join(root, "README.md"), result, relative(root, outFile));
  log("README.md: ## Performance regenerated");
}
