// V8 holds hidden classes only weakly: once the last cache was collected,
// the class's shapes went with it, and so did every optimized function that
// checked them ("weak objects" in --trace-deopt). A program that drops a
// cache and makes another then ran it unoptimized for a while (the first
// dozen ticks of a 1M-entry cache at 1.0-1.5 ms instead of 0.4, bench (e)).
// The package keeps a small cache for the module's life so that they stay.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const child = fileURLToPath(new URL("./shapes-child.mjs", import.meta.url));

test("collecting the only cache keeps the methods optimized", (t) => {
  const r = spawnSync(process.execPath, ["--expose-gc", "--allow-natives-syntax", child], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const out = r.stdout.trim();
  if (out === "skip") return t.skip("this V8 does not report optimization status");
  assert.equal(out, "optimized");
});
