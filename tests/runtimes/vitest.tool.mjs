// Vitest with no config file: `vitest run`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { prepareApp, run } from "./toolchain.mjs";

const app = prepareApp("vitest");

test("vitest: vitest run passes", () => {
  const r = run("node", [join("node_modules", "vitest", "vitest.mjs"), "run"], { cwd: app.dir });
  assert.match(r.stdout, /Tests\s+1 passed \(1\)/, r.out);
});
