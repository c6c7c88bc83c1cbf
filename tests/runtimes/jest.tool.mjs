// Jest 30, `testEnvironment: "jsdom"` in package.json (and one file with the
// node environment), test files that require("lapse"): nothing else configured.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { prepareApp, run } from "./toolchain.mjs";

const app = prepareApp("jest");

test("jest 30 (jsdom and node environments): npx jest passes", () => {
  const r = run("node", [join("node_modules", "jest", "bin", "jest.js"), "--ci", "--verbose"], { cwd: app.dir });
  // Jest reports on stderr.
  assert.match(r.stderr, /✓ lapse under jsdom/, r.out);
  assert.match(r.stderr, /✓ lapse under Jest's node environment/, r.out);
  assert.match(r.stderr, /Tests:\s+2 passed, 2 total/, r.out);
});
