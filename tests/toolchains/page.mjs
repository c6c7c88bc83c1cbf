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
  // The verdict, or null soon after the page has thrown (an app that failed
  // to load lapse never sets one: no need to wait out the timeout). The error
  // promise is made before navigating, so an error during load counts.
  const nextError = () => new Promise((r) => page.once("pageerror", r));
  const verdict = (error) =>
    Promise.race([
      page
        .waitForFunction(() => window.__lapse, null, { timeout: waitMs })
        .then((h) => h.jsonValue())
        .catch(() => null),
      error.then(() => new Promise((r) => setTimeout(() => r(null), 2_000))),
    ]);
  try {
    let error = nextError();
    await page.goto(url, { waitUntil: "load", timeout: waitMs });
    let result = await verdict(error);
    // A dev server may reload the page once it has optimized dependencies;
    // the verdict that counts is the one after that.
    for (let i = 0; i < reloads && result === null; i++) {
      error = nextError();
      await page.reload({ waitUntil: "load", timeout: waitMs });
      result = await verdict(error);
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
