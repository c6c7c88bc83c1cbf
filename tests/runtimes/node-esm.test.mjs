// Node ESM: `import { TtlCache } from "lapse"` from the installed tarball.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";
import { smoke } from "./smoke.mjs";

test("node ESM: import resolves to the node entry", () => {
  const url = import.meta.resolve("lapse");
  assert.match(url, /\/node_modules\/lapse\/dist\/lapse\.js$/);
});

test("node ESM: TtlCache works with no init call", () => {
  assert.equal(smoke(TtlCache).ok, true);
});
