// Next.js 16 with no next.config: `next build` + `next start`, then a route
// handler and a server component (fetched over HTTP) and a "use client"
// component (rendered and hydrated in headless Chromium).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { assertPageOk, closeBrowser, openPage } from "./page.mjs";
import { bin, freePort, note, prepareApp, run, startServer, timed, versionOf, withServer } from "./lib.mjs";

after(closeBrowser);

test("Next.js 16: next build + next start", async (t) => {
  const dir = await prepareApp("next");
  note(`next ${versionOf(dir, "next")}, react ${versionOf(dir, "react")}`);
  await timed("next: build", () => run(bin(dir, "next"), ["build"], { cwd: dir }));
  const port = await freePort();
  const server = await timed("next: start", () =>
    startServer(bin(dir, "next"), ["start", "--hostname", "127.0.0.1", "--port", String(port)], {
      cwd: dir,
      url: `http://127.0.0.1:${port}/api/cache`,
    }),
  );
  await withServer(server, async () => {
    await t.test("route handler, module-scope cache across requests", async () => {
      const first = await fetch(`${server.url.replace(/\/api\/cache$/, "")}/api/cache`);
      assert.equal(first.status, 200, await first.clone().text());
      const a = await first.json();
      const b = await (await fetch(`http://127.0.0.1:${port}/api/cache`)).json();
      assert.equal(a.ok, true);
      assert.equal(a.keys, 5_000);
      assert.equal(b.hits, a.hits + 1, "the module-scope cache kept its entry between requests");
    });

    await t.test("server component, rendered per request", async () => {
      const r = await fetch(`http://127.0.0.1:${port}/?key=k${Date.now()}`);
      const html = await r.text();
      assert.equal(r.status, 200, html.slice(0, 2000));
      const m = html.match(/<pre id="verdict">([^<]*)<\/pre>/);
      assert.ok(m, `the page has the verdict: ${html.slice(0, 2000)}`);
      const verdict = JSON.parse(m[1].replaceAll("&quot;", '"').replaceAll("&amp;", "&"));
      assert.equal(verdict.ok, true);
      assert.match(verdict.echo, /^value of k\d+$/, "the cache held the request's key");
    });

    await t.test('client component ("use client") in the browser', async () => {
      assertPageOk(await openPage(`http://127.0.0.1:${port}/client`), "Next.js client component");
    });
  });
});
