// Injected by esbuild when bundling dist/node.cjs: gives `import.meta.url` a
// value inside CommonJS (the URL of node.cjs itself).
import { pathToFileURL } from "node:url";
export const import_meta_url = pathToFileURL(__filename).href;
