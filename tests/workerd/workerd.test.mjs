// workerd (the Cloudflare Workers runtime, from the `workerd` npm package):
// bundle a worker that imports "lapse" (resolved with the `workerd` condition),
// serve it on 127.0.0.1, and check its answers across requests.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, copyFileSync, writeFileSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { freePort, waitForHttp } from "../lib/net.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const out = join(here, "..", "..", "out", "workerd");
let child;
let base;
let log = "";

before(async () => {
  mkdirSync(out, { recursive: true });
  const result = await build({
    entryPoints: [join(here, "worker.mjs")],
    outfile: join(out, "worker.js"),
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    external: ["*.wasm"],
    logLevel: "warning",
    metafile: true,
  });
  const inputs = Object.keys(result.metafile.inputs).join("\n");
  assert.match(inputs, /node_modules\/lapse\/dist\/workerd\.js/, "esbuild picked the workerd entry");
  assert.match(readFileSync(join(out, "worker.js"), "utf8"), /from "\.\/lapse_bg\.wasm"/);
  copyFileSync(require.resolve("lapse/lapse_bg.wasm"), join(out, "lapse_bg.wasm"));

  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  writeFileSync(
    join(out, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .lapseWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);

const lapseWorker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "lapse_bg.wasm", wasm = embed "lapse_bg.wasm"),
  ],
  compatibilityDate = "2025-09-01",
);
`,
  );
  // The workerd package's main export is the path of its platform binary.
  const workerd = await import("workerd");
  const bin = typeof workerd.default === "string" ? workerd.default : workerd.default.default;
  child = spawn(bin, ["serve", join(out, "config.capnp"), "--verbose"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  let dead = false;
  child.on("exit", () => (dead = true));
  try {
    await waitForHttp(`${base}/info`, 30_000, () => dead);
  } catch (e) {
    throw new Error(`${e.message}\nworkerd output:\n${log}`);
  }
});

after(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const t = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(t);
  }
});

async function get(path) {
  const r = await fetch(base + path, { signal: AbortSignal.timeout(10_000) });
  return { status: r.status, body: await r.json() };
}

test("workerd: a module-scope TtlCache keeps values across requests", async () => {
  assert.deepEqual((await get("/set?key=greeting&value=hello")).body, { ok: true, size: 1 });
  const hit = await get("/get?key=greeting");
  assert.equal(hit.status, 200);
  assert.equal(hit.body.value, "hello");
  assert.ok(hit.body.ttl > 0 && hit.body.ttl <= 60_000, `ttl ${hit.body.ttl}`);
  assert.equal((await get("/get?key=nope")).status, 404);
  assert.deepEqual((await get("/delete?key=greeting")).body, { deleted: true });
  assert.equal((await get("/get?key=greeting")).status, 404);
});

test("workerd: entries expire by the request clock", async () => {
  await get("/set?key=short&value=x&ttl=1");
  await new Promise((r) => setTimeout(r, 50));
  assert.equal((await get("/get?key=short")).status, 404);
});

test("workerd: a module-scope cache that is never ticked expires by the request clock", async () => {
  await get("/lazy/set?key=short&ttl=400");
  await get("/lazy/set?key=long");
  assert.equal((await get("/lazy/get?key=short")).body.found, true);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await get("/lazy/get?key=short")).body.found, false);
  const long = (await get("/lazy/get?key=long")).body;
  assert.equal(long.found, true);
  assert.ok(long.now > 1e12, `request-time clock: ${long.now}`);
});

test("workerd: smoke test inside the worker", async () => {
  const r = await get("/smoke");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.ok, true);
});

test("workerd: clock moved from module-scope time to request time", async () => {
  const { body } = await get("/info");
  assert.ok(body.now >= body.startedAt);
  assert.ok(body.now > 1e12, `request-time Date.now() is real time: ${body.now}`);
});
