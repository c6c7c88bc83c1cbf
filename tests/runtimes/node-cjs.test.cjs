// Node CommonJS: `require("lapse")` is synchronous and needs no init call.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { spawnSync } = require("node:child_process");

test("node CJS: require resolves to dist/lapse.cjs", () => {
  assert.match(require.resolve("lapse"), /[\\/]node_modules[\\/]lapse[\\/]dist[\\/]lapse\.cjs$/);
});

test("node CJS: require('lapse') gives a working TtlCache", async () => {
  const { TtlCache } = require("lapse");
  const { smoke } = await import("./smoke.mjs");
  assert.equal(smoke(TtlCache).ok, true);
});

test("node CJS: usable synchronously, in the same tick as require()", () => {
  // A fresh process with no event-loop turn between require and use.
  const code = `
    const { TtlCache } = require("lapse");
    const c = new TtlCache({ now: 0, ttl: 10 });
    c.set("k", "v");
    if (c.get("k") !== "v") throw new Error("get failed");
    c.tick(10);
    if (c.get("k") !== undefined) throw new Error("no expiry");
    process.stdout.write("sync-ok");
  `;
  const r = spawnSync(process.execPath, ["-e", code], { cwd: __dirname, encoding: "utf8", timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "sync-ok");
});

test("node CJS: works where TextDecoder/TextEncoder do not exist (as in Jest's jsdom)", () => {
  // Error messages from wasm are decoded by the glue; with no TextDecoder it
  // must fall back, not throw a ReferenceError when the module loads.
  const code = `
    delete globalThis.TextDecoder;
    delete globalThis.TextEncoder;
    const { TtlCache } = require("lapse");
    const c = new TtlCache({ now: 0 });
    c.set("k", "v");
    let msg = "";
    try { TtlCache.restore(new Uint8Array(16)); } catch (e) { msg = e.message; }
    process.stdout.write(JSON.stringify({ v: c.get("k"), msg }));
  `;
  const r = spawnSync(process.execPath, ["-e", code], { cwd: __dirname, encoding: "utf8", timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.v, "v");
  assert.match(out.msg, /^bytes: /, "the wasm's message, decoded by the fallback");
});
