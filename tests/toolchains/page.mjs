// Loads an app page in headless Chromium (tests/lib/chromium.mjs) and returns
// its verdict (window.__lapse, set by apps/shared/main.mjs or the app itself),
// every problem the page showed, and the URLs it requested.
import assert from "node:assert/strict";
import { collectProblems, launchChromium } from "../lib/chromium.mjs";

let browser;

/** One Chromium per test file; closeBrowser() in after(). */
export async function openPage(url, { waitMs = 60_000, reloads = 0 } = {}) {
  browser ??= await launchChromium();
  const page = await browser.newPage();
  const problems = collectProblems(page);
  const requests = [];
  page.on("request", (r) => requests.push(r.url()));
  // The verdict, or null once the page has thrown (an app that failed to load
  // lapse never sets one: no need to wait out the timeout).
  const verdict = () => {
    let onError;
    const failed = new Promise((r) => {
      onError = () => setTimeout(() => r(null), 2_000);
      page.once("pageerror", onError);
    });
    const set = page
      .waitForFunction(() => window.__lapse, null, { timeout: waitMs })
      .then((h) => h.jsonValue())
      .catch(() => null);
    return Promise.race([set, failed]).finally(() => page.off("pageerror", onError));
  };
  try {
    await page.goto(url, { waitUntil: "load", timeout: waitMs });
    let result = await verdict();
    // A dev server may reload the page once it has optimized dependencies;
    // the verdict that counts is the one after that.
    for (let i = 0; i < reloads && result === null; i++) {
      await page.reload({ waitUntil: "load", timeout: waitMs });
      result = await verdict();
    }
    const body = await page.evaluate(() => document.body?.dataset.lapse ?? null).catch(() => null);
    return { result, body, problems, requests };
  } finally {
    await page.close();
  }
}

export async function closeBrowser() {
  await browser?.close();
  browser = undefined;
}

/** The page ran the smoke check to the end, with no error of any kind. */
export function assertPageOk({ result, body, problems }, what) {
  assert.deepEqual(problems, [], `${what}: no console errors, page errors or failed requests`);
  assert.ok(result, `${what}: the page reported a verdict (window.__lapse)`);
  assert.equal(result.ok, true, `${what}: ${result.error}`);
  assert.equal(result.keys, 5_000, `${what}: the smoke check ran to its end`);
  assert.equal(body, "ok", `${what}: <body data-lapse="ok">`);
}
