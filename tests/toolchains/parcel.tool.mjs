// Parcel 2 with no configuration (package.json "source": "src/index.html"):
// the dev server (`parcel`) and `parcel build` served as static files, each
// loaded in headless Chromium.
import { test, after } from "node:test";
import { join } from "node:path";
import { assertPageOk, closeBrowser, openPage } from "./page.mjs";
import { bin, freePort, note, prepareApp, run, serveStatic, startServer, timed, versionOf, withServer } from "./lib.mjs";

after(closeBrowser);

test("Parcel 2", async (t) => {
  const dir = await prepareApp("parcel");
  note(`parcel ${versionOf(dir, "parcel")}`);

  await t.test("Parcel 2 dev server", async () => {
    const port = await freePort();
    const server = await timed("parcel: dev server up", () =>
      startServer(bin(dir, "parcel"), ["--host", "127.0.0.1", "--port", String(port), "--no-autoinstall"], {
        cwd: dir,
        url: `http://127.0.0.1:${port}/`,
      }),
    );
    await withServer(server, async () => {
      assertPageOk(await timed("parcel: dev page", () => openPage(server.url)), "Parcel dev");
    });
  });

  await t.test("Parcel 2 build", async () => {
    await timed("parcel: build", () => run(bin(dir, "parcel"), ["build", "--no-autoinstall"], { cwd: dir }));
    const server = await serveStatic(join(dir, "dist"));
    await withServer(server, async () => {
      assertPageOk(await timed("parcel: build page", () => openPage(server.url + "/index.html")), "Parcel build");
    });
  });
});
