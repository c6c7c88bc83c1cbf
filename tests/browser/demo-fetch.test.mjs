// The demo page's "slow loader" scenario (www/loading.js) in headless
// Chromium, served as demo.test.mjs serves the page (tests/lib/demo-site.mjs):
// 70 concurrent fetches of two cold keys make two loader calls, and a
// hot key is renewed in the background (its old value leaves as "replaced").
// The clock is paused and stepped, so nothing here depends on timing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { collectProblems } from "../lib/chromium.mjs";
import { artifacts, startDemoSite } from "../lib/demo-site.mjs";

const DAY = 86_400_000;

let base;
let browser;
let site;

before(async () => {
  site = await startDemoSite("demo-fetch");
  ({ base, browser } = site);
});

after(async () => {
  await site?.close();
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
