#!/usr/bin/env node
// Zeroes the bytes of core/alloc panic messages and source-file paths (panic
// `Location`s) that the optimized wasm no longer reads, after
// scripts/stub-panics.mjs and wasm-opt:
//   node scripts/zero-dead-data.mjs in.wasm out.wasm
//
// Why: once the panic functions are a bare trap, wasm-opt drops the arguments
// that pointed at these bytes, but it cannot drop data it does not understand,
// so the strings still ship (a few hundred bytes gzipped). Zeroes compress to
// almost nothing and keep every address where it was.
//
// Safe only for bytes nothing can read. Code references are every
// `i32.const` and every load/store `offset=` (wasm-dis); data references are
// the 4-aligned words of the data that hold an address. A panic `Location`
// (16 bytes) is zeroed when no reference points into it; a file path when no
// code points into it and every data word that does is such a dead
// `Location`; a panic message piece when no code points into it and nothing
// references the 80 bytes around each data word pointing at it (its pieces
// array); core::fmt's digit table when nothing points into it. Anything else
// is left as it was. Fails the build if nothing is found, so a
// toolchain change that moves the strings does not pass silently.
import { readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error("usage: node scripts/zero-dead-data.mjs in.wasm out.wasm");
  process.exit(2);
}
const bytes = new Uint8Array(readFileSync(input));

// ---- the data segments (active, i32.const offsets) -----------------------
let p = 8;
const leb = () => {
  let r = 0, s = 0, b;
  do {
    b = bytes[p++];
    r += (b & 0x7f) * 2 ** s;
    s += 7;
  } while (b & 0x80);
  return r;
};
const sleb32 = () => {
  let r = 0, s = 0, b;
  do {
    b = bytes[p++];
    r |= (b & 0x7f) << s;
    s += 7;
  } while (b & 0x80);
  if (s < 32 && b & 0x40) r |= -1 << s;
  return r >>> 0;
};
const segs = []; // { addr, start, len } (start: file offset of the bytes)
while (p < bytes.length) {
  const id = bytes[p++];
  const size = leb();
  const end = p + size;
  if (id === 11) {
    const n = leb();
    for (let i = 0; i < n; i++) {
      const flag = leb();
      let addr = null;
      if (flag === 0 || flag === 2) {
        if (flag === 2) leb();
        if (bytes[p++] !== 0x41) throw new Error("zero-dead-data: a data offset that is not i32.const");
        addr = sleb32();
        if (bytes[p++] !== 0x0b) throw new Error("zero-dead-data: a data offset expression longer than i32.const");
      }
      const len = leb();
      if (addr !== null) segs.push({ addr, start: p, len });
      p += len;
    }
  }
  p = end;
}

// ---- every address the code names ----------------------------------------
const wat = execFileSync(fileURLToPath(new URL("../node_modules/.bin/wasm-dis", import.meta.url)), [input], {
  maxBuffer: 1 << 28,
  encoding: "utf8",
});
const codeRefs = [];
for (const m of wat.matchAll(/i32\.const (-?\d+)|offset=(\d+)/g)) codeRefs.push(Number(m[1] ?? m[2]) >>> 0);
codeRefs.sort((a, b) => a - b);
const codeHits = (lo, hi) => {
  // any code reference v with lo <= v < hi
  let a = 0, b = codeRefs.length;
  while (a < b) {
    const mid = (a + b) >> 1;
    if (codeRefs[mid] < lo) a = mid + 1;
    else b = mid;
  }
  return a < codeRefs.length && codeRefs[a] < hi;
};
const dataWords = []; // { at, v }: 4-aligned words of the data
for (const s of segs) {
  for (let a = (s.addr + 3) & ~3; a + 4 <= s.addr + s.len; a += 4) {
    const o = s.start + (a - s.addr);
    dataWords.push({ at: a, v: (bytes[o] | (bytes[o + 1] << 8) | (bytes[o + 2] << 16) | (bytes[o + 3] << 24)) >>> 0 });
  }
}
const dataPointersInto = (lo, hi) => dataWords.filter((w) => w.v >= lo && w.v < hi);

// ---- candidates ------------------------------------------------------------
const PATHS = [/\/rustc\/[0-9a-f]{40}\/library\/[a-z_\/]+\.rs/g, /(?<![a-z_\/])src\/[a-z_\/]+\.rs/g];
const MESSAGES =
  /index out of bounds: the len is | but the index is |range (start|end) index | out of range for slice of length |slice index starts at | but ends at |attempt to divide by zero|capacity overflow|memory allocation of | bytes failed|Tried to shrink to a larger capacity/g;
const found = (re) => {
  const out = [];
  for (const s of segs) {
    const text = Buffer.from(bytes.subarray(s.start, s.start + s.len)).toString("latin1");
    for (const m of text.matchAll(re)) out.push({ lo: s.addr + m.index, hi: s.addr + m.index + m[0].length, at: s.start + m.index });
  }
  return out;
};
const fileOffset = (addr) => {
  const s = segs.find((g) => addr >= g.addr && addr < g.addr + g.len);
  return s === undefined ? -1 : s.start + (addr - s.addr);
};
let zeroed = 0, kept = 0;
const zero = (lo, hi) => {
  const o = fileOffset(lo);
  if (o < 0 || fileOffset(hi - 1) !== o + (hi - lo - 1)) throw new Error(`zero-dead-data: [${lo}, ${hi}) is not inside one data segment`);
  bytes.fill(0, o, o + (hi - lo));
  zeroed += hi - lo;
};
// Nothing in the code, and no data word outside [lo, hi), points into [lo, hi).
const unreferenced = (lo, hi) => !codeHits(lo, hi) && dataPointersInto(lo, hi).every((w) => w.at >= lo && w.at < hi);

// A panic `Location` is 16 bytes: &str (pointer, length) of its file, line, column.
// One that nothing points at is dead, and so is a path only dead ones name.
for (const path of PATHS.flatMap(found)) {
  if (codeHits(path.lo, path.hi)) {
    kept++;
    continue;
  }
  let live = false;
  for (const w of dataPointersInto(path.lo, path.hi)) {
    const len = dataWords.find((x) => x.at === w.at + 4);
    const isLocation = w.v === path.lo && w.at % 4 === 0 && len !== undefined && len.v === path.hi - path.lo;
    const whole = fileOffset(w.at + 15) === fileOffset(w.at) + 15;
    if (isLocation && whole && unreferenced(w.at, w.at + 16)) zero(w.at, w.at + 16);
    else live = true;
  }
  if (live) kept++;
  else zero(path.lo, path.hi);
}
// core/alloc panic message pieces: dead when neither the code nor any data
// within 64 bytes before or 16 after a word pointing at them (the pieces array
// that holds the pointer) is referenced.
for (const msg of found(MESSAGES)) {
  let dead = !codeHits(msg.lo, msg.hi);
  for (const w of dead ? dataPointersInto(msg.lo, msg.hi) : []) {
    if (codeHits(w.at - 64, w.at + 16) || dataPointersInto(w.at - 64, w.at + 16).length > 0) dead = false;
  }
  if (dead) zero(msg.lo, msg.hi);
  else kept++;
}
// core::fmt's two-digit table ("00" to "99", 200 bytes): dead when nothing
// points into it (the integer formatting that read it is gone).
const DIGITS = new RegExp(Array.from({ length: 100 }, (_, i) => String(i).padStart(2, "0")).join(""), "g");
for (const lut of found(DIGITS)) {
  if (unreferenced(lut.lo, lut.hi)) zero(lut.lo, lut.hi);
  else kept++;
}
if (zeroed === 0) {
  console.error("zero-dead-data: nothing zeroed: did the toolchain's panic strings change? (see the script)");
  process.exit(1);
}
writeFileSync(output, bytes);
console.log(`zero-dead-data: ${zeroed} bytes zeroed, ${kept} candidates kept (still referenced)`);
