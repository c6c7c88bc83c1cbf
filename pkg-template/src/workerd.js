// Cloudflare Workers / workerd entry. Workers may not compile wasm from bytes
// at runtime, so the .wasm is imported as a precompiled WebAssembly.Module
// (wrangler does this for `.wasm` imports; a raw workerd config declares it as
// a `wasm` module named "lapse_bg.wasm" beside this file). Instantiating it is
// synchronous and allowed at module scope, so a TtlCache can be built there.
import wasmModule from "./lapse_bg.wasm";
import { initSync } from "./glue.js";

initSync({ module: wasmModule });

export { TtlCache } from "./cache.js";
