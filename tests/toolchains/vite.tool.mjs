// Vite 6, 7 and 8 with no configuration file: the dev server (after Vite has
// pre-bundled lapse into node_modules/.vite/deps) and `vite build` served by
// `vite preview`, each loaded in headless Chromium.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { assertPageOk, closeBrowser, openPage } from "./page.mjs";
import { bin, freePort, note, prepareApp, run, startServer, timed, versionOf, withServer } from "./lib.mjs";

after(closeBrowser);

for (const [app, major] of [["vite6", "6"], ["vite7", "7"], ["vite8", "8"]]) {
  test(`Vite ${major}`, async (t) => {
    const dir = await prepareApp(app);
    const version = versionOf(dir, "vite");
    assert.equal(version.split(".")[0], major);
    note(`${app}: vite ${version}`);
    const vite = (args, port) =>
      startServer(bin(dir, "vite"), [...args, "--host", "127.0.0.1", "--port", String(port), "--strictPort"], {
        cwd: dir,
        url: `http://127.0.0.1:${port}/`,
      });

    await t.test(`Vite ${major} dev server, lapse pre-bundled`, async () => {
      const server = await timed(`${app}: dev server up`, async () => vite([], await freePort()));
      await withServer(server, async () => {
        const page = await timed(`${app}: dev page`, () => openPage(server.url, { reloads: 1 }));
        // The dependency optimizer served lapse from its cache: the case where
        // a wasm URL relative to the original file no longer resolves.
        assert.ok(
          page.requests.some((u) => /\/node_modules\/\.vite\/deps\/lapse\.js/.test(u)),
          `lapse came pre-bundled from node_modules/.vite/deps; requests: ${page.requests.join(" ")}`,
        );
        assertPageOk(page, `Vite ${major} dev`);
      });
    });

    await t.test(`Vite ${major} build + preview`, async () => {
      await timed(`${app}: vite build`, () => run(bin(dir, "vite"), ["build"], { cwd: dir }));
      const server = await vite(["preview"], await freePort());
      await withServer(server, async () => {
        assertPageOk(await timed(`${app}: preview page`, () => openPage(server.url)), `Vite ${major} build`);
      });
    });
  });
}
