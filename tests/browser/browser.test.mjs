// Headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core):
// the installed package in a page through (1) plain ESM + an import map,
// (2) an esbuild bundle, (3) a Vite build. Each page runs the shared smoke
// check; any console error, page error or failed request fails the test.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import sirv from "sirv";
import { collectProblems, launchChromium } from "../lib/chromium.mjs";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const consumer = join(here, "..", ".."); // build/consumer: tests/ and node_modules/lapse
const out = join(consumer, "out");

let server;
let base;
let browser;

before(async () => {
  server = createServer(sirv(consumer, { dev: true, dotfiles: false }));
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r()));
  server?.closeAllConnections?.();
});

/** Loads `path`, waits for the page's verdict, and returns it with every problem seen. */
async function run(path) {
  const page = await browser.newPage();
  const problems = collectProblems(page);
  const wasmTypes = [];
  page.on("response", (r) => {
    if (r.url().endsWith(".wasm")) wasmTypes.push(r.headers()["content-type"]);
  });
  try {
    await page.goto(base + path, { waitUntil: "load", timeout: 30_000 });
    await page.waitForFunction(() => window.__lapse !== undefined, null, { timeout: 30_000 }).catch(() => {});
    const result = await page.evaluate(() => window.__lapse ?? null);
    return { result, problems, wasmTypes };
  } finally {
    await page.close();
  }
}

function assertClean({ result, problems, wasmTypes }) {
  assert.deepEqual(problems, [], "no console errors, page errors or failed requests");
  assert.ok(result, "the page reported a result");
  assert.equal(result.ok, true, result.error);
  assert.deepEqual(wasmTypes, [], "the wasm is embedded in the JS: no .wasm request");
}

test("chromium: plain ESM with an import map, no bundler", async () => {
  assertClean(await run("/tests/browser/importmap.html"));
});

test("chromium: esbuild bundle, nothing configured or copied", async () => {
  const dir = join(out, "esbuild");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const r = await esbuild.build({
    entryPoints: [join(here, "page.mjs")],
    outfile: join(dir, "app.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    logLevel: "warning",
    metafile: true,
  });
  assert.match(Object.keys(r.metafile.inputs).join("\n"), /node_modules\/lapse\/dist\/lapse\.js/, "browser entry chosen");
  writeFileSync(
    join(dir, "index.html"),
    `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>lapse: esbuild</title>
<body><script type="module" src="./app.js"></script></body>`,
  );
  assertClean(await run("/out/esbuild/index.html"));
});

test("chromium: Vite production build", async () => {
  const { build } = await import("vite");
  const dir = join(out, "vite");
  rmSync(dir, { recursive: true, force: true });
  await build({
    root: join(here, "vite"),
    base: "./",
    configFile: false,
    logLevel: "warn",
    build: { outDir: dir, emptyOutDir: true, target: "es2022", assetsInlineLimit: 0 },
  });
  assertClean(await run("/out/vite/index.html"));
});
