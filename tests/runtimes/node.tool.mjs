// Node ESM and CommonJS scripts in a fresh folder with the tarball installed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lastJson, prepareApp, run } from "./toolchain.mjs";

const app = prepareApp("node");

for (const [kind, file] of [["ESM", "esm.mjs"], ["CommonJS", "cjs.cjs"]]) {
  test(`node ${kind}: a script imports lapse and uses it`, () => {
    const r = run(process.execPath, [file], { cwd: app.dir });
    const out = lastJson(r.stdout);
    assert.equal(out.ok, true, r.out);
    assert.equal(out.greeting, "hello");
    assert.equal(r.stderr, "", "no warnings");
  });
}
