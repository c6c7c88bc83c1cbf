// The demo page's "slow loader" scenario (www/loading.js) in headless
// Chromium, served as demo.test.mjs serves the page (the setup below is the
// same): 70 concurrent fetches of two cold keys make two loader calls, and a
// hot key is renewed in the background (its old value leaves as "replaced").
// The clock is paused and stepped, so nothing here depends on timing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { collectProblems, launchChromium } from "../lib/chromium.mjs";
import { freePort, waitForHttp } from "../lib/net.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const consumer = join(here, "..", ".."); // build/consumer when run by `make test`
const require = createRequire(import.meta.url);
// `make test` copies tests/ into build/consumer; www/ stays in the repo two levels up.
const repo = process.env.LAPSE_REPO ?? resolve(consumer, "..", "..");
const www = process.env.LAPSE_WWW ?? join(repo, "www");
const artifacts = process.env.LAPSE_ARTIFACTS ?? join(repo, "tests", "artifacts");
const site = join(consumer, "out", "demo");
const DAY = 86_400_000;

let server;
let serverExit;
let base;
let browser;

before(async () => {
  assert.ok(existsSync(join(www, "index.html")), `www/index.html not found at ${www} (set LAPSE_WWW)`);
  rmSync(site, { recursive: true, force: true });
  mkdirSync(site, { recursive: true });
  cpSync(www, site, { recursive: true });
  // The package as installed from the tarball, where the page's import map expects it.
  cpSync(dirname(require.resolve("lapse/package.json")), join(site, "pkg"), { recursive: true, dereference: true });
  mkdirSync(artifacts, { recursive: true });

  const port = await freePort();
  const bin = join(dirname(require.resolve("sirv-cli/package.json")), "bin.js");
  server = spawn(process.execPath, [bin, site, "--host", "127.0.0.1", "--port", String(port), "--dev", "--quiet"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  server.stderr.on("data", (d) => (stderr += d));
  serverExit = new Promise((r) => server.once("exit", r));
  let dead = false;
  serverExit.then(() => (dead = true));
  base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/`, 15_000, () => dead).catch((e) => {
    throw new Error(`${e.message}\nsirv-cli: ${stderr}`);
  });

  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  if (server && server.exitCode === null && server.signalCode === null) {
    server.kill("SIGTERM");
    const t = setTimeout(() => server.kill("SIGKILL"), 3_000);
    await serverExit;
    clearTimeout(t);
  }
});

/** A page with every console error/warning, page error, failed request and HTTP error collected. */
async function open(viewport) {
  const page = await browser.newPage({ viewport });
  const problems = collectProblems(page);
  page.setDefaultTimeout(15_000);
  await page.goto(`${base}/`, { waitUntil: "load", timeout: 30_000 });
  await page.waitForSelector("html[data-ready=true]");
  return { page, problems };
}

const tid = (id) => `[data-testid="${id}"]`;

async function step(page, ms, times = 1) {
  await page.selectOption(tid("step-size"), String(ms));
  for (let i = 0; i < times; i++) await page.click(tid("clock-step"));
}

test("demo page: the slow-loader scenario coalesces and refreshes", { timeout: 60_000 }, async () => {
  const { page, problems } = await open({ width: 1280, height: 800 });
  try {
    await page.click(tid("preset-fetch"));
    await page.click(tid("clock-toggle")); // pause: only Step moves time now
    await page.waitForFunction(() =>
      /^70 requests · 2 loader calls · 68 coalesced/.test(document.querySelector('[data-testid="fetch-counters"]')?.textContent ?? ""),
    );
    await step(page, 10_000, 1); // past the 3 s latency: both values stored
    await page.waitForSelector(`${tid("entry")}[data-key="user:ada"]`);
    await page.waitForSelector(`${tid("entry")}[data-key="user:bob"]`);
    await step(page, 60_000, 3); // user:ada fetched every 30 s; past 2 min a fetch refreshes it
    await page.waitForSelector(`${tid("log-row")}[data-key="user:ada"][data-reason="replaced"]`);
    const text = await page.textContent(tid("fetch-counters"));
    assert.match(text, / 1 background refreshes /);
    assert.match(text, /· 3 loader calls ·/);
    await step(page, 60_000, 3); // user:bob, never read again, expires at 5 min
    await page.waitForSelector(`${tid("log-row")}[data-key="user:bob"][data-reason="expired"]`);
    await page.screenshot({ path: join(artifacts, "demo-fetch-1280x800.png") });
  } finally {
    await page.close();
  }
  assert.deepEqual(problems, [], "no console errors, page errors or failed requests");
});
