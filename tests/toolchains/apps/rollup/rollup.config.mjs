// The smallest Rollup setup that can bundle an npm dependency: node-resolve,
// nothing else.
import { nodeResolve } from "@rollup/plugin-node-resolve";

export default {
  input: "src/main.mjs",
  output: { dir: "dist", format: "es" },
  plugins: [nodeResolve()],
};
