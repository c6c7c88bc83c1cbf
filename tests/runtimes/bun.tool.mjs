// Bun (from npm): `bun run` a script, and `bun build` it for the browser (its
// default target) then run the bundle.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { lastJson, prepareApp, run } from "./toolchain.mjs";

const app = prepareApp("bun");
const bun = join(app.dir, "node_modules", ".bin", "bun");

test("bun run: the script works", () => {
  const r = run(bun, ["run", "main.js"], { cwd: app.dir });
  assert.equal(lastJson(r.stdout).ok, true, r.out);
  assert.equal(lastJson(r.stdout).greeting, "hello");
});

test("bun build: the bundle has the wasm inside and runs", () => {
  rmSync(join(app.dir, "out"), { recursive: true, force: true });
  const b = run(bun, ["build", "main.js", "--outdir", "out"], { cwd: app.dir });
  assert.deepEqual(readdirSync(join(app.dir, "out")), ["main.js"], `one file, no .wasm asset\n${b.out}`);
  assert.match(readFileSync(join(app.dir, "out", "main.js"), "utf8"), /wasmBytes/, "bundled lapse's embedded wasm");
  // The browser-target bundle is plain ESM; Bun runs it as is.
  const r = run(bun, ["out/main.js"], { cwd: app.dir });
  assert.equal(lastJson(r.stdout).ok, true, r.out);
});
