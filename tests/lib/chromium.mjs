// Debian's Chromium through playwright-core, with the flags this sandbox
// needs: no sandbox as root, and no background networking (the machine has
// no network; Chromium's own connections would be refused, many at a time).
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 30_000,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-dev-shm-usage",
    ],
  });
}
