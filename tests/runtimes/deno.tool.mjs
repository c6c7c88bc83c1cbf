// Deno (from npm) in an npm project: `deno run main.js` with NO permission
// flags (loading modules from node_modules needs none; lapse reads no file,
// env var or network).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { lastJson, prepareApp, run } from "./toolchain.mjs";

const app = prepareApp("deno");
const deno = join(app.dir, "node_modules", ".bin", "deno");

test("deno run (no permission flags): the script works", () => {
  const r = run(deno, ["run", "main.js"], { cwd: app.dir });
  const out = lastJson(r.stdout);
  assert.equal(out.ok, true, r.out);
  assert.equal(out.greeting, "hello");
  assert.doesNotMatch(r.stderr, /permission|Warning/i, r.out);
  assert.equal(existsSync(join(app.dir, "deno.lock")), false, "deno wrote no lockfile into the project");
});
