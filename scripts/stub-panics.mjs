#!/usr/bin/env node
// Replaces the bodies of core's and alloc's panic functions with a bare
// `unreachable`, before wasm-opt:
//   node scripts/stub-panics.mjs in.wasm out.wasm
//
// Why: the package's wasm is no_std with a panic handler that traps, yet each
// panic function still builds its `PanicInfo`/`fmt::Arguments` on the stack
// first, so every bounds check passes its index, length and `&Location` along
// (LLVM keeps it: the handler is not inlined through `panic_fmt`). Stable Rust
// has no way to drop that (`-Zlocation-detail=none` and
// `panic_immediate_abort` are nightly-only). With the bodies reduced to the
// trap they end in anyway, wasm-opt drops the now-unused arguments at every
// call site: about 1.7 KB of the module.
//
// Safe because a stubbed function does exactly what it did, minus stores to
// its own dead stack frame: each is a `-> !` function of core/alloc, and the
// checks below hold it to that in the wasm itself: its body never falls
// through nor returns, and nothing it reaches calls an import (so no JS sees
// a difference: the panic was a trap before and is a trap now). Fails the
// build if the toolchain's names change so that nothing is found.
import binaryen from "binaryen";
import { readFileSync, writeFileSync } from "node:fs";

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error("usage: node scripts/stub-panics.mjs in.wasm out.wasm");
  process.exit(2);
}

// Rust's `-> !` panic entry points: their paths, demangled from the v0
// names of the name section (see `demangle`).
const PANICS = [
  /^core::panicking::/,
  /^core::option::(expect_failed|unwrap_failed)$/,
  /^core::result::unwrap_failed$/,
  /^core::slice::index::slice_[a-z_]*fail$/,
  /^alloc::raw_vec::(handle_error|capacity_overflow)$/,
  /^alloc::alloc::handle_alloc_error$/,
  /^__rustc::rust_begin_unwind$/,
];
// Must be found, or the names changed and this script silently did nothing.
const REQUIRED = [/::panicking::panic_fmt$/, /::rust_begin_unwind$/];

// Keep the names section: wasm-opt strips it from the shipped module, and
// `make size-report` (twiggy) reads it.
binaryen.setDebugInfo(true);
const m = binaryen.readBinary(readFileSync(input));
// Exactly the features the Makefile's WASM_OPT_FLAGS enable: with more,
// binaryen may write newer encodings (it wrote exact-import kinds under
// `All`) that engines reject.
const F = binaryen.Features;
m.setFeatures(
  F.MVP | F.BulkMemory | F.BulkMemoryOpt | F.NontrappingFPToInt | F.SignExt | F.MutableGlobals | F.ReferenceTypes |
    F.Multivalue | F.CallIndirectOverlong,
);

/**
 * The path of a v0-mangled plain function name (`_RNvNtCs<hash>_4core9panicking9panic_fmt`
 * is `core::panicking::panic_fmt`), or the name itself when it is anything
 * else (generics, legacy `_ZN` names: no panic entry point is one).
 */
function demangle(name) {
  let i = 2;
  const ident = () => {
    if (name[i] === "s") i = name.indexOf("_", i) + 1; // disambiguator
    const m = /^\d+/.exec(name.slice(i));
    if (!m) throw 0;
    i += m[0].length;
    if (name[i] === "_") i++;
    const n = Number(m[0]);
    i += n;
    return name.slice(i - n, i);
  };
  const path = () => {
    const c = name[i++];
    if (c === "C") return ident();
    if (c === "N") {
      i++; // namespace tag
      const parent = path();
      return `${parent}::${ident()}`;
    }
    throw 0;
  };
  try {
    if (!name.startsWith("_R")) return name;
    const p = path();
    return i === name.length ? p : name;
  } catch {
    return name;
  }
}

const funcs = new Map();
for (let i = 0; i < m.getNumFunctions(); i++) {
  const f = m.getFunctionByIndex(i);
  funcs.set(binaryen.getFunctionInfo(f).name, f);
}
const isImport = (name) => binaryen.getFunctionInfo(funcs.get(name)).module !== "";
const text = (name) => binaryen.emitText(binaryen.getFunctionInfo(funcs.get(name)).body);

/** Whether `name`, or anything it calls, calls an import or through a table. */
function reachesJs(name, seen = new Set()) {
  if (seen.has(name)) return false;
  seen.add(name);
  if (isImport(name)) return true;
  const body = text(name);
  if (/\b(call_indirect|call_ref|return_call_indirect)\b/.test(body)) return true;
  for (const [, quoted, plain] of body.matchAll(/\((?:return_)?call \$(?:"([^"]+)"|([^\s)]+))/g)) {
    const n = quoted ?? plain;
    if (!funcs.has(n) || reachesJs(n, seen)) return true;
  }
  return false;
}

const stubbed = [];
for (const [name, f] of funcs) {
  if (!PANICS.some((re) => re.test(demangle(name))) || isImport(name)) continue;
  const info = binaryen.getFunctionInfo(f);
  const body = text(name);
  if (binaryen.getExpressionType(info.body) !== binaryen.unreachable || /\breturn\b/.test(body)) {
    throw new Error(`stub-panics: ${name} can return; refusing to stub it`);
  }
  if (reachesJs(name)) throw new Error(`stub-panics: ${name} reaches an import; refusing to stub it`);
  stubbed.push([f, name]);
}
for (const re of REQUIRED) {
  if (!stubbed.some(([, n]) => re.test(demangle(n)))) throw new Error(`stub-panics: no function matches ${re} (toolchain names changed?)`);
}
for (const [f] of stubbed) binaryen._BinaryenFunctionSetBody(f, m.unreachable());
// The linker exports the heap's and data's bounds; no JS reads them (heap.rs
// has __heap_base as a constant), and an export keeps its global alive.
for (const name of ["__heap_base", "__data_end"]) if (m.getExport(name)) m.removeExport(name);
if (!m.validate()) throw new Error("stub-panics: the module does not validate");
const bytes = m.emitBinary();
if (!WebAssembly.validate(bytes)) throw new Error("stub-panics: the output is not valid wasm for this Node");
writeFileSync(output, bytes);
console.log(`stub-panics: ${stubbed.length} panic functions reduced to a trap`);
