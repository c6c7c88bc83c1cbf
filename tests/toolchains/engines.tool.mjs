// The package's pages in the three browser engines: Chromium (Debian's,
// through playwright-core), Firefox ESR (geckodriver) and WebKitGTK
// (WebKitWebDriver + MiniBrowser under Xvfb). Pages: tests/browser/importmap.html
// (the installed package as plain ESM through an import map, no bundler) and
// the production output of every bundler app: esbuild (iife and ESM), webpack,
// Rollup, Vite 8 and Parcel, each served as static files. The dev servers and
// the Next.js client component run in Chromium only (their own tests).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { join } from "node:path";
import sirv from "sirv";
import { assertPageOk, closeBrowser, openPage } from "./page.mjs";
import { bin, note, prepareApp, repo, run, timed } from "./lib.mjs";
import { launch, verdictOf } from "../lib/webdriver.mjs";

// what, app, build command (in the app folder), folder served, page path
const PAGES = [
  { what: "plain ESM + import map", app: "esbuild", build: null, root: "importmap", path: "/tests/browser/importmap.html" },
  { what: "esbuild bundle (iife)", app: "esbuild", build: ["npm", "run", "build:browser"], root: ".", path: "/index.html" },
  { what: "esbuild bundle (esm)", app: "esbuild", build: ["npm", "run", "build:esm"], root: ".", path: "/esm.html" },
  { what: "webpack 5 build", app: "webpack", build: ["npm", "run", "build"], root: ".", path: "/index.html" },
  { what: "Rollup 4 build", app: "rollup", build: ["npm", "run", "build"], root: ".", path: "/index.html" },
  { what: "Vite 8 build", app: "vite8", build: ["vite", "build"], root: "dist", path: "/index.html" },
  { what: "Parcel 2 build", app: "parcel", build: ["parcel", "build", "--no-autoinstall"], root: "dist", path: "/index.html" },
];

const servers = [];

/** A static server for `dir`; for "importmap", /tests/* comes from the repository. */
async function serve(dir, importmap) {
  const app = sirv(dir, { dev: true });
  const tests = sirv(join(repo, "tests"), { dev: true });
  const notFound = (res) => () => ((res.statusCode = 404), res.end());
  const server = createServer((req, res) => {
    if (importmap && req.url.startsWith("/tests/")) {
      req.url = req.url.slice("/tests".length);
      tests(req, res, notFound(res));
    } else app(req, res, notFound(res));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  servers.push(server);
  return `http://127.0.0.1:${server.address().port}`;
}

before(async () => {
  const dirs = new Map();
  for (const page of PAGES) {
    if (!dirs.has(page.app)) dirs.set(page.app, await prepareApp(page.app));
    const dir = dirs.get(page.app);
    if (page.build) {
      const [cmd, ...args] = page.build;
      const exe = cmd === "npm" ? "npm" : bin(dir, cmd);
      const { code, out } = await timed(`engines: ${page.what}: build`, () => run(exe, args, { cwd: dir, allowFail: true }));
      if (code !== 0) page.buildError = out.slice(-3000);
    }
    page.url = (await serve(page.root === "importmap" ? dir : join(dir, page.root), page.root === "importmap")) + page.path;
  }
});

after(async () => {
  await closeBrowser();
  for (const s of servers) {
    s.closeAllConnections?.();
    await new Promise((r) => s.close(r));
  }
});

/** Throws the page's build error, if its build failed. */
function built(page) {
  if (page.buildError) throw new Error(`\`${page.build.join(" ")}\` failed:\n${page.buildError}`);
}

test("Chromium", async (t) => {
  for (const page of PAGES) {
    await t.test(`Chromium: ${page.what}`, async () => {
      built(page);
      assertPageOk(await openPage(page.url), `Chromium ${page.what}`);
    });
  }
});

for (const engine of ["firefox", "webkit"]) {
  test(engine === "firefox" ? "Firefox" : "WebKit", async (t) => {
    const browser = await timed(`${engine}: launch`, () => launch(engine));
    note(`${engine}: ${browser.version}`);
    try {
      for (const page of PAGES) {
        await t.test(`${browser.version}: ${page.what}`, async () => {
          built(page);
          const { result, errors, body } = await verdictOf(browser, page.url);
          assert.deepEqual(errors, [], `${engine} ${page.what}: no page errors`);
          assert.ok(result, `${engine} ${page.what}: the page reported a verdict`);
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
