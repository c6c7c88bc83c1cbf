// wrangler 4: `wrangler dev` on 127.0.0.1 serves a Worker (wrangler.jsonc +
// src/index.js, as `npm create cloudflare` makes it) that holds a TtlCache at
// module scope. Wrangler resolves lapse with the `workerd` condition and
// uploads lapse_bg.wasm as a compiled module.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { freePort, waitForHttp } from "../lib/net.mjs";
import { prepareApp, start } from "./toolchain.mjs";

const app = prepareApp("wrangler", { smokeTo: ["src"] });
let server;
after(() => server?.stop());

test("wrangler dev: a module-scope TtlCache serves requests", async () => {
  const port = await freePort();
  const inspector = await freePort();
  const base = `http://127.0.0.1:${port}`;
  server = start(
    "node",
    [join("node_modules", "wrangler", "bin", "wrangler.js"), "dev", "--ip", "127.0.0.1", "--port", String(port),
      "--inspector-port", String(inspector), "--show-interactive-dev-session=false"],
    { cwd: app.dir },
  );
  try {
    await waitForHttp(`${base}/get?key=none`, 120_000, server.dead);
  } catch (e) {
    throw new Error(`${e.message}\nwrangler output:\n${server.log()}`);
  }
  const get = async (path) => {
    const r = await fetch(base + path, { signal: AbortSignal.timeout(15_000) });
    return { status: r.status, body: await r.json() };
  };
  const smoke = await get("/smoke");
  assert.equal(smoke.status, 200, JSON.stringify(smoke.body));
  assert.equal(smoke.body.ok, true);
  const codegen = (await get("/codegen")).body;
  assert.equal(codegen.fromBytes, false, "workerd refuses wasm from bytes, so the smoke ran on the workerd entry");
  assert.deepEqual((await get("/set?key=a&value=1")).body, { size: 1 });
  assert.deepEqual((await get("/get?key=a")).body, { value: "1" }, "the module-scope cache kept it across requests");
  assert.doesNotMatch(server.log(), /✘|\[ERROR\]/, server.log());
});
