// A Node program bundled by `esbuild --bundle --platform=node` (default
// output format: CommonJS). Prints the smoke check's verdict as JSON.
import { TtlCache } from "lapse";
import { smoke } from "./smoke.mjs";

console.log(JSON.stringify(smoke(TtlCache)));
