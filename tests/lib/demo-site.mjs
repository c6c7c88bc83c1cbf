// The live demo page (www/) served the way `make demo` serves it: www/ plus
// the package (here: the installed tarball) side by side, by sirv-cli on
// 127.0.0.1, with headless Chromium to open it. Shared by the demo page tests;
// each gets its own copy of the site (`name`), because node --test runs test
// files in parallel processes.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "./chromium.mjs";
import { freePort, waitForHttp } from "./net.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const consumer = join(here, "..", ".."); // build/consumer when run by `make test`
const require = createRequire(import.meta.url);
// `make test` copies tests/ into build/consumer; www/ stays in the repo two levels up.
const repo = process.env.LAPSE_REPO ?? resolve(consumer, "..", "..");
const www = process.env.LAPSE_WWW ?? join(repo, "www");

/** Where tests put screenshots (gitignored). */
export const artifacts = process.env.LAPSE_ARTIFACTS ?? join(repo, "tests", "artifacts");

/** Serves a copy of the demo site under out/<name>; `{ base, browser, close() }`. */
export async function startDemoSite(name) {
  assert.ok(existsSync(join(www, "index.html")), `www/index.html not found at ${www} (set LAPSE_WWW)`);
  const site = join(consumer, "out", name);
  rmSync(site, { recursive: true, force: true });
  mkdirSync(site, { recursive: true });
  cpSync(www, site, { recursive: true });
  // The package as installed from the tarball, where the page's import map expects it.
  cpSync(dirname(require.resolve("lapse/package.json")), join(site, "pkg"), { recursive: true, dereference: true });
  mkdirSync(artifacts, { recursive: true });

  const port = await freePort();
  const bin = join(dirname(require.resolve("sirv-cli/package.json")), "bin.js");
  const server = spawn(process.execPath, [bin, site, "--host", "127.0.0.1", "--port", String(port), "--dev", "--quiet"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  server.stderr.on("data", (d) => (stderr += d));
  const serverExit = new Promise((r) => server.once("exit", r));
  let dead = false;
  serverExit.then(() => (dead = true));
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/`, 15_000, () => dead).catch((e) => {
    throw new Error(`${e.message}\nsirv-cli: ${stderr}`);
  });
  const browser = await launchChromium();
  return {
    base,
    browser,
    async close() {
      await browser.close();
      if (server.exitCode === null && server.signalCode === null) {
        server.kill("SIGTERM");
        const t = setTimeout(() => server.kill("SIGKILL"), 3_000);
        await serverExit;
        clearTimeout(t);
      }
    },
  };
}
