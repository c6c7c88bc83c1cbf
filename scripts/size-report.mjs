#!/usr/bin/env node
// Where the wasm's bytes go: `twiggy top` of a module built with its names
// kept, grouped by the part of lapse each item belongs to (README "Where the
// bytes go" is this table). Run by `make size-report`.
//   node scripts/size-report.mjs build/opt/named.wasm [--top N]
import { execFileSync } from "node:child_process";

const file = process.argv[2] ?? "build/opt/named.wasm";
const top = Number(process.argv[process.argv.indexOf("--top") + 1]) || 15;
const csv = execFileSync("twiggy", ["top", "-f", "csv", file], { encoding: "utf8", maxBuffer: 1 << 26 });

// First match wins; names are twiggy's (demangled Rust, wasm-bindgen's shims).
const GROUPS = [
  ["allocator (src/heap.rs; before: dlmalloc)", /lapse_cache::heap|dlmalloc|__rust_(alloc|realloc|dealloc)|__rdl_/],
  ["data: message text, panic locations", /^data segment/],
  ["snapshot decoder + restore", /lapse_cache::snapshot|restore/],
  [
    "error messages (src/error.rs and call sites)",
    /lapse_cache::error|clock::(show|finite_time|lifetime|delay)|binding::limit|lapse_error|takeError/,
  ],
  ["engine (engine, wheel, policy, list, clock)", /lapse_cache::(engine|wheel|policy|list|clock)/],
  ["binding exports (src/binding.rs, abi.rs; engine code inlined)", /lapse_cache::binding|^rawengine|RawEngine/],
  ["core::fmt, std's panic machinery", /core(\[[0-9a-f]+\])?::fmt|alloc(\[[0-9a-f]+\])?::fmt|^std\[|std::|panicking|Display|Debug/],
  ["core/alloc (Vec growth, slices, panic stubs, memcpy)", /^(<)?(alloc|core)(\[|::)|alloc::|core::|^mem(cpy|set|move)|compiler_builtins/],
  ["types, imports, exports, tables", /./],
];

const rows = csv
  .trim()
  .split("\n")
  .slice(1)
  .map((line) => {
    // Name,ShallowSize,ShallowSizePercent,... (names may hold commas: quoted)
    const m = line.match(/^("(?:[^"]|"")*"|[^,]*),(\d+),/);
    return { name: m[1].replace(/^"|"$/g, "").replace(/""/g, '"'), bytes: Number(m[2]) };
  })
  .filter((r) => !/names" subsection|^custom section/.test(r.name));

const sums = new Map(GROUPS.map(([g]) => [g, 0]));
for (const r of rows) {
  const [g] = GROUPS.find(([, re]) => re.test(r.name));
  sums.set(g, sums.get(g) + r.bytes);
}
const total = rows.reduce((a, r) => a + r.bytes, 0);
console.log(`twiggy top of ${file}: ${total.toLocaleString("en")} bytes (names section excluded)\n`);
console.log("| part | bytes | share |\n| --- | ---: | ---: |");
for (const [g, b] of [...sums].sort((a, b) => b[1] - a[1])) {
  console.log(`| ${g} | ${b.toLocaleString("en")} | ${Math.round((100 * b) / total)}% |`);
}
console.log(`\nlargest ${top} items:`);
for (const r of rows.sort((a, b) => b.bytes - a.bytes).slice(0, top)) console.log(`${String(r.bytes).padStart(7)}  ${r.name}`);
