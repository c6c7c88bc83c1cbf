#!/usr/bin/env node
// Prints the gzipped size of the release .wasm and fails over the budget.
//   node scripts/size.mjs pkg/dist/lapse_bg.wasm [limitBytes]
// The budget is 40 KB = 40,000 bytes (the stricter reading of "40 KB").
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const file = process.argv[2] ?? "pkg/dist/lapse_bg.wasm";
const limit = Number(process.argv[3] ?? 40_000);
const raw = readFileSync(file);
const gz = gzipSync(raw, { level: 9 }).length;
const kb = (n) => (n / 1000).toFixed(1) + " KB";
console.log(`wasm size: ${file} ${raw.length} bytes raw, ${gz} bytes gzipped (${kb(gz)}; limit ${kb(limit)})`);
if (gz > limit) {
  console.error(`wasm size: FAIL: ${gz} bytes gzipped is over the ${limit}-byte budget`);
  process.exit(1);
}
