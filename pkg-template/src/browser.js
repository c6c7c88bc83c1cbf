// Browser / bundler / generic ESM entry. Uses top-level await so importers get
// a ready TtlCache without calling init(). The .wasm is located relative to
// this module; bundlers that understand `new URL("...", import.meta.url)`
// (Vite, Rollup, webpack 5, Parcel) emit it as an asset. esbuild does not:
// copy dist/lapse_bg.wasm next to the esbuild output (see the README).
import init from "./glue.js";

await init({ module_or_path: new URL("./lapse_bg.wasm", import.meta.url) });

export { TtlCache } from "./cache.js";
