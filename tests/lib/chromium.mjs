// Debian's Chromium through playwright-core, with the flags this sandbox
// needs: no sandbox as root, and no background networking (the machine has
// no network; Chromium's own connections would be refused, many at a time).
// Shared by the browser tests and the benchmark runner.
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function launchChromium({ timeout = 30_000, extraArgs = [] } = {}) {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-dev-shm-usage",
      ...extraArgs,
    ],
  });
}

/** Collects every console error/warning, page error, failed request and HTTP error of `page`. */
export function collectProblems(page) {
  const problems = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return problems;
}
