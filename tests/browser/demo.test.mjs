// The live demo page (www/) in headless Chromium, served the way `make demo`
// serves it: www/ plus the package (here: the installed tarball) side by side,
// by sirv-cli on 127.0.0.1. The page imports "lapse" through its import map.
//
// Checks: an entry with a short ttl leaves with reason "expired" once the
// clock is stepped past it; reading an idle entry moves its idle deadline;
// the scenarios and the 100k stress run; no console errors, page errors or
// failed requests. Screenshots go to tests/artifacts/ (gitignored).
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

async function write(page, { key, ttl = "", idle = "" }) {
  await page.fill(tid("add-key"), key);
  await page.fill(tid("add-ttl"), ttl);
  await page.fill(tid("add-idle"), idle);
  await page.click(tid("add-submit"));
  await page.waitForSelector(`${tid("entry")}[data-key="${key}"]`);
}

async function step(page, ms, times = 1) {
  await page.selectOption(tid("step-size"), String(ms));
  for (let i = 0; i < times; i++) await page.click(tid("clock-step"));
}

test("demo page: expiry, idle reads, scenarios, stress; no console errors", { timeout: 120_000 }, async () => {
  const { page, problems } = await open({ width: 1280, height: 800 });
  try {
    // The host clock: pause it, so only Step moves time.
    await page.click(tid("clock-toggle"));
    assert.equal(await page.getAttribute(tid("clock-toggle"), "aria-pressed"), "false");
    const now0 = Number(await page.getAttribute(tid("clock-now"), "data-now"));
    assert.ok(Math.abs(now0 - Date.now()) < DAY, "the simulated clock starts at Date.now()");

    // An entry with a short ttl leaves with reason "expired" once time passes its deadline.
    await write(page, { key: "short-lived", ttl: "2s", idle: "∞" });
    assert.equal(await page.getAttribute(`${tid("entry")}[data-key="short-lived"]`, "data-winner"), "abs");
    await step(page, 1000, 3);
    const now1 = Number(await page.getAttribute(tid("clock-now"), "data-now"));
    assert.equal(now1 - now0, 3000, "three 1 s steps moved the clock by 3 s");
    await page.waitForSelector(`${tid("log-row")}[data-key="short-lived"][data-reason="expired"]`);
    await page.waitForSelector(`${tid("entry")}[data-key="short-lived"]`, { state: "detached" });
    assert.match(await page.textContent(tid("count-expired")), /expired 1\b/);

    // Reading an idle entry restarts its idle window: the idle deadline moves by the time that passed.
    await write(page, { key: "idle-one", ttl: "10m", idle: "30s" });
    const row = `${tid("entry")}[data-key="idle-one"]`;
    assert.equal(await page.getAttribute(row, "data-winner"), "idle");
    const idle0 = Number(await page.getAttribute(row, "data-idle-deadline"));
    await step(page, 10_000, 1);
    assert.match(await page.textContent(`${row} ${tid("entry-idle")}`), /^20s/);
    await page.click(`${row} .e-name`);
    await page.waitForFunction(
      ([sel, want]) => Number(document.querySelector(sel)?.dataset.idleDeadline) === want,
      [row, idle0 + 10_000],
    );
    assert.match(await page.textContent(`${row} ${tid("entry-idle")}`), /^30s/);
    await page.waitForFunction(() => document.querySelector('[data-testid="stat-hits"]').textContent === "1"); // stats refresh 4×/s
    // A field read (hget) restarts the field's idle window too.
    await page.click(tid("add-kind-field"));
    await page.fill(tid("add-field"), "csrf");
    await write(page, { key: "session:test", idle: "1m" });
    await step(page, 10_000, 1);
    const frow = `${tid("entry")}[data-key="session:test"][data-field="csrf"]`;
    const f0 = Number(await page.getAttribute(frow, "data-idle-deadline"));
    await page.click(`${frow} .e-name`);
    await page.waitForFunction(([sel, want]) => Number(document.querySelector(sel)?.dataset.idleDeadline) === want, [frow, f0 + 10_000]);
    await page.click(tid("add-kind-plain"));
    await page.screenshot({ path: join(artifacts, "demo-1280x800.png") });

    // The scenarios load and run (the dual-TTL one compresses 90 days into seconds).
    for (const p of ["session", "collection", "clock", "dual"]) {
      await page.click(tid(`preset-${p}`));
      await page.waitForSelector(`${tid("entry")}`);
    }
    await page.waitForSelector(`${tid("log-row")}[data-key="report:never-read"][data-reason="expired"]`, { timeout: 60_000 });
    await page.screenshot({ path: join(artifacts, "demo-scenario-1280x800.png") });

    // Stress: 100k entries; the page keeps answering, and the sweep drains them at the budget.
    await page.click(tid("cfg-submit"));
    await page.click(tid("stress"));
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="stat-expired"]').textContent.replaceAll(",", "")) >= 20_000, null, { timeout: 60_000 });
    const t = Date.now();
    await page.click(tid("clock-toggle"));
    assert.ok(Date.now() - t < 5_000, "the page answers a click during the stress run");
    assert.ok((await page.$$(tid("entry"))).length <= 60, "the entry list is capped");
    assert.match(await page.textContent(tid("entries-count")), /^showing \d+ of [\d,]+$/);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(artifacts, "demo-stress-1280x800.png") });
  } finally {
    await page.close();
  }
  assert.deepEqual(problems, [], "no console errors, page errors or failed requests");
});

test("demo page at phone width", { timeout: 60_000 }, async () => {
  const { page, problems } = await open({ width: 390, height: 844 });
  try {
    await page.click(tid("preset-session"));
    await page.waitForSelector(`${tid("entry")}[data-field="csrf"]`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling at 390 px (overflow ${overflow}px)`);
    await page.screenshot({ path: join(artifacts, "demo-390x844.png"), fullPage: true });
  } finally {
    await page.close();
  }
  assert.deepEqual(problems, [], "no console errors, page errors or failed requests");
});
