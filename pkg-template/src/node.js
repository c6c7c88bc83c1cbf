// Node.js entry (ESM). The CommonJS entry dist/node.cjs is this same file
// bundled by esbuild at build time (import.meta.url is shimmed to the .cjs file).
// Synchronous: the .wasm is read from disk and instantiated once, before any
// user code can reach TtlCache.
import { readFileSync } from "node:fs";
import { initSync } from "./glue.js";

initSync({ module: readFileSync(new URL("./lapse_bg.wasm", import.meta.url)) });

export { TtlCache } from "./cache.js";
