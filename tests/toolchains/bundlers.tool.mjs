// webpack 5 (no config file: `webpack --mode=production` on ./src/index.js),
// Rollup 4 (@rollup/plugin-node-resolve and nothing else) and esbuild (browser
// bundle in its default format and as ESM; Node bundle with
// `--bundle --platform=node` in its default format). Browser bundles are
// served as static files and run in headless Chromium; the Node bundle runs
// in node from a folder with no node_modules, as a deployed bundle would.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertPageOk, closeBrowser, openPage } from "./page.mjs";
import { note, prepareApp, run, serveStatic, timed, versionOf, withServer } from "./lib.mjs";

after(closeBrowser);

async function pageOk(dir, path, what) {
  const server = await serveStatic(dir);
  await withServer(server, async () => {
    assertPageOk(await timed(`${what}: page`, () => openPage(server.url + path)), what);
  });
}

test("webpack 5, default config, production build", async () => {
  const dir = await prepareApp("webpack");
  note(`webpack ${versionOf(dir, "webpack")}, webpack-cli ${versionOf(dir, "webpack-cli")}`);
  await timed("webpack: build", () => run("npm", ["run", "build"], { cwd: dir }));
  await pageOk(dir, "/index.html", "webpack");
});

test("Rollup 4 with @rollup/plugin-node-resolve only", async () => {
  const dir = await prepareApp("rollup");
  note(`rollup ${versionOf(dir, "rollup")}, @rollup/plugin-node-resolve ${versionOf(dir, "@rollup/plugin-node-resolve")}`);
  await timed("rollup: build", () => run("npm", ["run", "build"], { cwd: dir }));
  await pageOk(dir, "/index.html", "Rollup");
});

test("esbuild", async (t) => {
  const dir = await prepareApp("esbuild");
  note(`esbuild ${versionOf(dir, "esbuild")}`);

  await t.test("esbuild --bundle for the browser (default format: iife)", async () => {
    await timed("esbuild: browser build", () => run("npm", ["run", "build:browser"], { cwd: dir }));
    await pageOk(dir, "/index.html", "esbuild iife");
  });

  await t.test("esbuild --bundle --format=esm for the browser", async () => {
    await timed("esbuild: esm build", () => run("npm", ["run", "build:esm"], { cwd: dir }));
    await pageOk(dir, "/esm.html", "esbuild esm");
  });

  await t.test("esbuild --bundle --platform=node (default format: cjs), run from another folder", async () => {
    await timed("esbuild: node build", () => run("npm", ["run", "build:node"], { cwd: dir }));
    // Only the bundle is deployed: whatever lapse needs must be inside it.
    const deployed = mkdtempSync(join(tmpdir(), "lapse-esbuild-node-"));
    try {
      for (const f of readdirSync(join(dir, "dist"))) copyFileSync(join(dir, "dist", f), join(deployed, f));
      const { out } = await run(process.execPath, [join(deployed, "server.js")], { cwd: deployed });
      const verdict = JSON.parse(out.trim().split("\n").at(-1));
      assert.equal(verdict.ok, true);
      assert.equal(verdict.keys, 5_000);
    } finally {
      rmSync(deployed, { recursive: true, force: true });
    }
  });
});
