// index.d.ts and the shipped TtlCache class must describe the same members.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { TtlCache } from "lapse";

const require = createRequire(import.meta.url);
const dts = readFileSync(join(dirname(require.resolve("lapse/package.json")), "index.d.ts"), "utf8");
const body = dts.slice(dts.indexOf("export declare class TtlCache"));
const declared = (re) => [...body.matchAll(re)].map((m) => m[1]);
const instance = declared(/^  (?:readonly )?([a-zA-Z]+)[(<:]/gm).filter((n) => n !== "constructor");
const statics = declared(/^  static ([a-zA-Z]+)[(<]/gm);
function has(obj, name) {
  return name in obj;
}

test("index.d.ts declares the contract's members", () => {
  for (const m of ["set", "get", "peek", "has", "touch", "expire", "expireAt", "persist", "ttl", "delete", "clear",
    "tick", "purge", "now", "size", "keys", "values", "entries", "forEach", "stats", "snapshot",
    "hset", "hget", "hhas", "hdel", "hlen", "hgetall", "hexpire", "hexpireAt", "hpersist", "httl"]) {
    assert.ok(instance.includes(m), `index.d.ts declares ${m}`);
  }
  assert.ok(statics.includes("restore"));
  assert.match(body, /\[Symbol\.iterator\]\(\)/);
});

for (const name of instance) {
  test(`TtlCache.prototype.${name} exists`, () => {
    assert.ok(has(TtlCache.prototype, name), `declared in index.d.ts but missing at run time`);
  });
}
for (const name of statics) {
  test(`TtlCache.${name} exists`, () => {
    assert.equal(typeof TtlCache[name], "function");
  });
}

test("no undeclared public methods at run time", () => {
  const runtime = Object.getOwnPropertyNames(TtlCache.prototype).filter((n) => n !== "constructor");
  const undeclared = runtime.filter((n) => !instance.includes(n));
  assert.deepEqual(undeclared, [], "public members missing from index.d.ts");
});
