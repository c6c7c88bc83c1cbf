// Memory exhaustion: a child process (exhaustion-child.mjs) takes wasm memory
// to its limit with real caches, then calls everything that allocates. Every
// failure must be a normal Error from the call that needed the memory, and
// every cache, the one that ran out and its bystanders, must keep what it
// held and keep working; freeing caches (or dropping them) gives memory back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const child = fileURLToPath(new URL("./exhaustion-child.mjs", import.meta.url));

test("out of wasm memory: normal errors, nothing lost, bystanders fine, memory comes back", { timeout: 600000 }, () => {
  const r = spawnSync(process.execPath, ["--expose-gc", "--max-old-space-size=4096", child], {
    encoding: "utf8",
    maxBuffer: 16 << 20,
  });
  const line = r.stdout.trim().split("\n").at(-1) ?? "";
  assert.equal(r.status, 0, `child exited ${r.status} (${r.signal}):\n${r.stderr.slice(-4000)}\n${r.stdout.slice(-2000)}`);
  const res = JSON.parse(line);
  assert.ok(res.ok, res.why);
  // It did run out: some call failed for want of memory.
  assert.ok(Object.keys(res.failures).length > 0, JSON.stringify(res));
  console.log(`# exhaustion: ${JSON.stringify(res)}`);
});
