// The installed package itself: files, metadata, exports map, wasm size.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { pathToFileURL } from "node:url";

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
    "dist/cache.js", "dist/glue.js", "dist/lapse_bg.wasm", "dist/wasm.js",
    "dist/lapse.cjs", "dist/lapse.js", "dist/workerd.js",
    // The tiers in front of shared stores, each an entry with its types.
    "dist/redis.js", "redis.d.ts", "dist/keyv.js", "keyv.d.ts",
    "dist/bentocache.js", "bentocache.d.ts", "dist/durable.js", "durable.d.ts",
    // The Node tiers in CommonJS too, sharing lapse.cjs's TtlCache.
    "dist/redis.cjs", "redis.d.cts", "dist/keyv.cjs", "keyv.d.cts", "dist/bentocache.cjs", "bentocache.d.cts",
  ];
  for (const f of expected) assert.ok(files.includes(f), `missing ${f}`);
  const optional = ["API.md", "SNAPSHOT.md"];
  // The tier entries' declarations (lapse/redis, ...), each named by its export.
  const tierTypes = Object.entries(pkg.exports)
    .filter(([k, v]) => k !== "." && typeof v === "object" && v.types)
    .flatMap(([, v]) => (typeof v.types === "string" ? [v.types] : Object.values(v.types)))
    .map((t) => t.replace(/^\.\//, ""));
  for (const f of tierTypes) assert.ok(files.includes(f), `missing ${f}`);
  optional.push(...tierTypes);
  const extra = files.filter((f) => !expected.includes(f) && !optional.includes(f) && !/^dist\/[\w-]+\.js$/.test(f));
  assert.deepEqual(extra, [], "unexpected files in the package");
});

test("package: metadata", () => {
  assert.equal(pkg.name, "lapse");
  assert.match(pkg.version, /^\d+\.\d+\.\d+/);
  assert.equal(pkg.type, "module");
  assert.equal(pkg.license, "MIT OR Apache-2.0");
  assert.ok(Array.isArray(pkg.files));
  assert.ok(Array.isArray(pkg.sideEffects) && pkg.sideEffects.includes("./dist/lapse.js"));
  const license = readFileSync(join(root, "LICENSE"), "utf8");
  assert.match(license, /MIT License/);
  assert.match(license, /Apache License\s+Version 2\.0/);
});

test("package: exports conditions, in resolution order", () => {
  const dot = pkg.exports["."];
  assert.deepEqual(Object.keys(dot), ["types", "workerd", "browser", "node", "import", "require", "default"]);
  assert.deepEqual(Object.keys(dot.node), ["import", "require"]);
  // require() under `browser` (Jest's jsdom environment) must get CommonJS.
  assert.deepEqual(dot.browser, { import: "./dist/lapse.js", require: "./dist/lapse.cjs" });
  assert.equal(dot.workerd, "./dist/workerd.js");
  // require() of a Node tier gets its CommonJS build (the same TtlCache as require("lapse")).
  for (const t of ["redis", "keyv", "bentocache"]) {
    assert.equal(pkg.exports[`./${t}`].require, `./dist/${t}.cjs`);
    assert.deepEqual(pkg.exports[`./${t}`].types, { import: `./${t}.d.ts`, require: `./${t}.d.cts` });
  }
  const targets = [];
  const collect = (v) => (typeof v === "string" ? targets.push(v) : Object.values(v).forEach(collect));
  collect(pkg.exports);
  for (const t of targets) assert.ok(statSync(join(root, t)).isFile(), `export target ${t} exists`);
});

test("package: entries initialize wasm; cache.js and glue.js do not", () => {
  const src = (f) => readFileSync(join(root, "dist", f), "utf8");
  assert.match(src("lapse.js"), /initSync\(\{ module: wasmBytes\(\) \}\)/);
  assert.match(src("workerd.js"), /import wasmModule from "\.\/lapse_bg\.wasm"/);
  assert.match(src("lapse.cjs"), /initSync\(/);
  assert.doesNotMatch(src("cache.js"), /\binitSync\s*\(|\binit\s*\(\s*\{/);
});

// What broke Vite dev/build, Rollup, esbuild for Node, Parcel, Next.js and
// Jest before: top-level await, import.meta.url, fetch of a .wasm, fs.
test("package: the non-workerd entries load with no top-level await, URL, fetch or fs", () => {
  for (const f of ["lapse.js", "lapse.cjs", "glue.js", "wasm.js"]) {
    const s = readFileSync(join(root, "dist", f), "utf8");
    assert.doesNotMatch(s, /import\.meta/, `${f}: import.meta`);
    // A fetch of the .wasm is fetch("…") or fetch(new URL(…)); cache.js's own
    // fetch(key, loader) method and message texts that name fetch() are not.
    assert.doesNotMatch(s, /\bfetch\(\s*(?:new URL|["'`])|instantiateStreaming|new URL\(/, `${f}: fetches the wasm`);
    assert.doesNotMatch(s, /["']node:|["']fs["']/, `${f}: uses a Node module`);
    assert.doesNotMatch(s, /^await\b|^\S.*=\s*await\b/m, `${f}: top-level await`);
  }
});

test("package: dist/wasm.js decodes to exactly the shipped .wasm", async () => {
  const { wasmBytes } = await import(pathToFileURL(join(root, "dist/wasm.js")).href);
  const wasm = readFileSync(join(root, "dist/lapse_bg.wasm"));
  assert.ok(Buffer.from(wasmBytes()).equals(wasm));
  assert.match(readFileSync(join(root, "dist/wasm.js"), "latin1"), /^[\x09\x0a\x20-\x7e]*$/, "pure ASCII source");
});

test("package: wasm is valid and within 40 KB gzipped", () => {
  const wasm = readFileSync(join(root, "dist/lapse_bg.wasm"));
  assert.ok(WebAssembly.validate(wasm), "WebAssembly.validate");
  const gz = gzipSync(wasm, { level: 9 }).length;
  assert.ok(gz <= 40_000, `${gz} bytes gzipped`);
});
