// The suite in Node:  node --expose-gc bench/node.mjs [--out file.json] [--quick]
// Imports lapse from the built package (pkg/dist/lapse.js, what `import "lapse"` gives in Node).
import { writeFileSync } from "node:fs";
import { LRUCache } from "lru-cache";
import { TTLCache } from "@isaacs/ttlcache";
import { TtlCache } from "../pkg/dist/lapse.js";
import { runSuite } from "./lib/suite.mjs";
import { parseArgs, suiteOptions } from "./lib/options.mjs";

const args = parseArgs(process.argv.slice(2));
// CPU time in ms (user + system), for the pauses of (e).
const cpuTime = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const result = await runSuite({ TtlCache, LRUCache, TTLCache, cpuTime }, suiteOptions(args), (m) =>
  console.error(`[node] ${m}`),
);
result.env = { name: "node", version: process.version, v8: process.versions.v8 };
const json = JSON.stringify(result);
if (args.out) writeFileSync(args.out, json);
else console.log(json);
