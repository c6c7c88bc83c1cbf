// The package test pages in the three browser engines: Chromium (Debian's,
// through playwright-core), Firefox ESR (geckodriver) and WebKitGTK
// (WebKitWebDriver + MiniBrowser under Xvfb). Pages: tests/browser/importmap.html
// (the installed package as plain ESM through an import map, no bundler) and
// the esbuild app's bundles (default iife format, and ESM).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { join } from "node:path";
import sirv from "sirv";
import { assertPageOk, closeBrowser, openPage } from "./page.mjs";
import { note, prepareApp, repo, run, timed } from "./lib.mjs";
import { launch, verdictOf } from "../lib/webdriver.mjs";

// [what, path, npm script that builds it]
const PAGES = [
  ["plain ESM + import map", "/tests/browser/importmap.html", null],
  ["esbuild bundle (iife)", "/index.html", "build:browser"],
  ["esbuild bundle (esm)", "/esm.html", "build:esm"],
];
const buildErrors = new Map();

/** Throws the page's build error, if its build failed. */
function built(script) {
  if (script && buildErrors.has(script)) throw new Error(`\`npm run ${script}\` failed:\n${buildErrors.get(script)}`);
}

let base;
let server;

before(async () => {
  const dir = await prepareApp("esbuild");
  for (const [, , script] of PAGES) {
    if (!script) continue;
    const { code, out } = await run("npm", ["run", script], { cwd: dir, allowFail: true });
    if (code !== 0) buildErrors.set(script, out.slice(-3000));
  }
  // /tests/* from the repository, everything else (node_modules/lapse, the
  // bundles) from the app folder.
  const tests = sirv(join(repo, "tests"), { dev: true });
  const app = sirv(dir, { dev: true });
  server = createServer((req, res) => {
    if (req.url.startsWith("/tests/")) {
      req.url = req.url.slice("/tests".length);
      tests(req, res, () => ((res.statusCode = 404), res.end()));
    } else app(req, res, () => ((res.statusCode = 404), res.end()));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(async () => {
  await closeBrowser();
  server?.closeAllConnections?.();
  await new Promise((r) => (server ? server.close(r) : r()));
});

test("Chromium", async (t) => {
  for (const [what, path, script] of PAGES) {
    await t.test(`Chromium: ${what}`, async () => {
      built(script);
      assertPageOk(await openPage(base + path), `Chromium ${what}`);
    });
  }
});

for (const engine of ["firefox", "webkit"]) {
  test(engine === "firefox" ? "Firefox" : "WebKit", async (t) => {
    const browser = await timed(`${engine}: launch`, () => launch(engine));
    note(`${engine}: ${browser.version}`);
    try {
      for (const [what, path, script] of PAGES) {
        await t.test(`${browser.version}: ${what}`, async () => {
          built(script);
          const { result, errors, body } = await verdictOf(browser, base + path);
          assert.deepEqual(errors, [], `${engine} ${what}: no page errors`);
          assert.ok(result, `${engine} ${what}: the page reported a verdict`);
          assert.equal(result.ok, true, result.error);
          assert.equal(result.keys, 5_000);
          assert.equal(body, "ok");
        });
      }
    } finally {
      await browser.close();
    }
  });
}
