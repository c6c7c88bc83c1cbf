// The installed package itself: files, metadata, exports map, wasm size.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { gzipSync } from "node:zlib";

const require = createRequire(import.meta.url);
const pkgJsonPath = require.resolve("lapse/package.json");
const root = dirname(pkgJsonPath);
const pkg = JSON.parse(readFileSync(pkgJsonPath, "utf8"));

function walk(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [relative(root, p).split("\\").join("/")];
  });
}

test("package: exactly the shipped files", () => {
  const files = walk(root).sort();
  const expected = [
    "LICENSE", "README.md", "index.d.cts", "index.d.ts", "package.json",
    "dist/browser.js", "dist/cache.js", "dist/glue.js", "dist/lapse_bg.wasm",
    "dist/node.cjs", "dist/node.js", "dist/workerd.js",
  ];
  for (const f of expected) assert.ok(files.includes(f), `missing ${f}`);
  const optional = ["API.md"];
  const extra = files.filter((f) => !expected.includes(f) && !optional.includes(f) && !/^dist\/[\w-]+\.js$/.test(f));
  assert.deepEqual(extra, [], "unexpected files in the package");
});

test("package: metadata", () => {
  assert.equal(pkg.name, "lapse");
  assert.match(pkg.version, /^\d+\.\d+\.\d+/);
  assert.equal(pkg.type, "module");
  assert.equal(pkg.license, "MIT OR Apache-2.0");
  assert.ok(Array.isArray(pkg.files));
  assert.ok(Array.isArray(pkg.sideEffects) && pkg.sideEffects.includes("./dist/browser.js"));
  const license = readFileSync(join(root, "LICENSE"), "utf8");
  assert.match(license, /MIT License/);
  assert.match(license, /Apache License\s+Version 2\.0/);
});

test("package: exports conditions, in resolution order", () => {
  const dot = pkg.exports["."];
  assert.deepEqual(Object.keys(dot), ["types", "workerd", "browser", "node", "import", "require", "default"]);
  assert.deepEqual(Object.keys(dot.node), ["import", "require"]);
  const targets = [];
  const collect = (v) => (typeof v === "string" ? targets.push(v) : Object.values(v).forEach(collect));
  collect(pkg.exports);
  for (const t of targets) assert.ok(statSync(join(root, t)).isFile(), `export target ${t} exists`);
});

test("package: entries initialize wasm; cache.js and glue.js do not", () => {
  const src = (f) => readFileSync(join(root, "dist", f), "utf8");
  assert.match(src("node.js"), /initSync\(/);
  assert.match(src("browser.js"), /await init\(/);
  assert.match(src("workerd.js"), /import wasmModule from "\.\/lapse_bg\.wasm"/);
  assert.match(src("node.cjs"), /initSync\(/);
  assert.doesNotMatch(src("cache.js"), /\binitSync\s*\(|\binit\s*\(\s*\{/);
  assert.match(src("glue.js"), /'lapse_bg\.wasm'/, "glue's default wasm URL names the shipped file");
});

test("package: wasm is valid and within 40 KB gzipped", () => {
  const wasm = readFileSync(join(root, "dist/lapse_bg.wasm"));
  assert.ok(WebAssembly.validate(wasm), "WebAssembly.validate");
  const gz = gzipSync(wasm, { level: 9 }).length;
  assert.ok(gz <= 40_000, `${gz} bytes gzipped`);
});
