// The suite in the browser (bench/page.html). bench/run.mjs calls
// window.runBench(options) through playwright-core and collects the result.
import { TtlCache } from "lapse";
import { LRUCache } from "lru-cache";
import { TTLCache } from "@isaacs/ttlcache";
import { runSuite } from "./lib/suite.mjs";

window.runBench = async (options) => {
  const result = await runSuite({ TtlCache, LRUCache, TTLCache }, options, (m) => console.log(`[chromium] ${m}`));
  result.env = {
    name: "chromium",
    userAgent: navigator.userAgent,
    crossOriginIsolated: globalThis.crossOriginIsolated === true,
  };
  return result;
};
window.benchReady = true;
