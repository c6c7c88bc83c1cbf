#!/usr/bin/env node
// The download of a browser app that uses lapse, and the gate on it.
//
//   node scripts/size.mjs [--pkg pkg] [--limit 30000]
//
// Bundles `export { TtlCache } from "lapse"` (the whole class kept, as an app
// that uses it would) with esbuild --bundle --minify --format=esm
// --platform=browser against the assembled pkg/, gzips it (level 9), adds every
// .wasm the bundle would fetch (gzipped too), prints the JS and wasm parts and
// fails when the total is over the limit. It also prints what embedding the
// wasm in JS costs: the same bundle with the embedded bytes stubbed out gives
// the JS alone, the difference is the embedded wasm, next to the raw .wasm
// gzipped.
import { mkdirSync, rmSync, symlinkSync, writeFileSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    pkg: { type: "string", default: "pkg" },
    limit: { type: "string", default: "30000" },
  },
});
const limit = Number(args.limit);
const pkg = resolve(root, args.pkg);
const gz = (b) => gzipSync(b, { level: 9 }).length;

// A throwaway app folder whose node_modules/lapse is pkg/, so "lapse" resolves
// through the package's own `exports` (browser condition), as for a user.
const app = join(root, "build", "size");
rmSync(app, { recursive: true, force: true });
mkdirSync(join(app, "node_modules"), { recursive: true });
symlinkSync(pkg, join(app, "node_modules", "lapse"), "dir");
writeFileSync(join(app, "app.js"), 'export { TtlCache } from "lapse";\n');

async function bundle(stubWasm) {
  const out = join(app, stubWasm ? "out-stub" : "out");
  const result = await build({
    entryPoints: [join(app, "app.js")],
    outdir: out,
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    // Any .wasm the bundle references is emitted as a file (and counted).
    loader: { ".wasm": "file" },
    metafile: true,
    write: true,
    logLevel: "warning",
    absWorkingDir: app,
    plugins: stubWasm
      ? [{
          name: "stub-embedded-wasm",
          setup(b) {
            b.onLoad({ filter: /[\\/]dist[\\/]wasm\.js$/ }, () => ({
              contents: "export function wasmBytes() { return new Uint8Array(0); }",
              loader: "js",
            }));
          },
        }]
      : [],
  });
  const inputs = Object.keys(result.metafile.inputs);
  const files = readdirSync(out).map((f) => join(out, f));
  const js = files.filter((f) => f.endsWith(".js")).reduce((n, f) => n + gz(readFileSync(f)), 0);
  const wasm = files.filter((f) => f.endsWith(".wasm")).map((f) => ({ f, gz: gz(readFileSync(f)) }));
  return { js, wasm, inputs };
}

const full = await bundle(false);
if (!full.inputs.some((p) => /dist[\\/]lapse\.js$/.test(p))) {
  console.error(`size: esbuild did not bundle dist/lapse.js (inputs: ${full.inputs.join(", ")})`);
  process.exit(1);
}
const stub = await bundle(true);
const wasmGz = full.wasm.reduce((n, w) => n + w.gz, 0);
const total = full.js + wasmGz;
const rawWasm = readFileSync(join(pkg, "dist", "lapse_bg.wasm"));
const kb = (n) => `${(n / 1000).toFixed(1)} KB`;

console.log(
  `size: browser app (esbuild --bundle --minify --format=esm --platform=browser, gzip -9): ` +
    `JS ${full.js} B + wasm fetched ${wasmGz} B (${full.wasm.length} file${full.wasm.length === 1 ? "" : "s"}) ` +
    `= ${total} B (${kb(total)}; limit ${kb(limit)}, goal 20.0 KB)`,
);
console.log(
  `size:   of the JS: lapse code ${stub.js} B, embedded wasm ${full.js - stub.js} B ` +
    `(the .wasm alone: ${rawWasm.length} B raw, ${gz(rawWasm)} B gzipped; embedding costs ${full.js - stub.js - gz(rawWasm)} B)`,
);
if (total > limit) {
  console.error(`size: FAIL: ${total} bytes is over the ${limit}-byte limit (SIZE_LIMIT)`);
  process.exit(1);
}
