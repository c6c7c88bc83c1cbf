// A minimal W3C WebDriver client over fetch, for the engines playwright-core
// cannot drive here: Debian's Firefox ESR (through geckodriver) and WebKitGTK
// (through WebKitWebDriver, under Xvfb: it has no headless mode).
// playwright-core needs its own patched Firefox/WebKit builds, which cannot be
// downloaded on this machine.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { freePort, waitForHttp } from "./net.mjs";

export const FIREFOX = process.env.FIREFOX_PATH ?? "/usr/bin/firefox-esr";
export const GECKODRIVER = process.env.GECKODRIVER ?? join(process.env.CARGO_HOME ?? join(homedir(), ".cargo"), "bin", "geckodriver");
export const WEBKIT_DRIVER = process.env.WEBKIT_DRIVER ?? "/usr/bin/WebKitWebDriver";
export const MINIBROWSER = process.env.MINIBROWSER_PATH ?? "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";

/** What is missing to drive `engine` ("firefox" | "webkit"), or null. */
export function missing(engine) {
  const need =
    engine === "firefox"
      ? [FIREFOX, GECKODRIVER]
      : [WEBKIT_DRIVER, MINIBROWSER, "/usr/bin/xvfb-run", "/usr/bin/Xvfb"];
  const absent = need.filter((p) => !existsSync(p));
  return absent.length ? `not installed: ${absent.join(", ")} (scripts/setup.sh installs them)` : null;
}

function startProcess(cmd, args) {
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  let dead = false;
  child.on("exit", () => (dead = true));
  return {
    child,
    output: () => out,
    isDead: () => dead,
    async stop() {
      if (dead) return;
      const gone = new Promise((r) => child.once("exit", r));
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {}
      const t = setTimeout(() => {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {}
      }, 5_000);
      await gone;
      clearTimeout(t);
    },
  };
}

async function command(base, method, path, body) {
  const r = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  const json = await r.json().catch(() => ({}));
  if (!r.ok || json.value?.error) {
    throw new Error(`WebDriver ${method} ${path}: HTTP ${r.status} ${json.value?.error ?? ""}: ${json.value?.message ?? ""}`);
  }
  return json.value;
}

/**
 * Starts the driver and a browser session of `engine`. Returns
 * { engine, version, goto(url), eval(js), close() }.
 */
export async function launch(engine) {
  const why = missing(engine);
  if (why) throw new Error(`${engine}: ${why}`);
  const port = await freePort();
  let driver;
  let capabilities;
  if (engine === "firefox") {
    driver = startProcess(GECKODRIVER, ["--host", "127.0.0.1", "--port", String(port), "--log", "warn"]);
    capabilities = {
      browserName: "firefox",
      "moz:firefoxOptions": {
        binary: FIREFOX,
        args: ["-headless"],
        // No network here: keep Firefox from reaching out at start.
        prefs: {
          "app.update.enabled": false,
          "browser.shell.checkDefaultBrowser": false,
          "datareporting.policy.dataSubmissionEnabled": false,
          "network.captive-portal-service.enabled": false,
          "network.connectivity-service.enabled": false,
          "extensions.update.enabled": false,
          "browser.safebrowsing.downloads.remote.enabled": false,
        },
      },
    };
  } else if (engine === "webkit") {
    driver = startProcess("/usr/bin/xvfb-run", [
      "-a",
      "-s",
      "-screen 0 1280x1024x24 -nolisten tcp",
      WEBKIT_DRIVER,
      `--port=${port}`,
      "--host=127.0.0.1",
    ]);
    capabilities = {
      "webkitgtk:browserOptions": { binary: MINIBROWSER, args: ["--automation"] },
    };
  } else {
    throw new Error(`unknown engine ${engine}`);
  }
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${base}/status`, 30_000, driver.isDead);
    const session = await command(base, "POST", "/session", { capabilities: { alwaysMatch: capabilities } });
    const s = `/session/${session.sessionId}`;
    const caps = session.capabilities ?? {};
    return {
      engine,
      version: `${caps.browserName ?? engine} ${caps.browserVersion ?? "?"}`,
      goto: (url) => command(base, "POST", `${s}/url`, { url }),
      eval: (script, ...args) => command(base, "POST", `${s}/execute/sync`, { script, args }),
      async close() {
        await command(base, "DELETE", s).catch(() => {});
        await driver.stop();
      },
    };
  } catch (e) {
    const out = driver.output();
    await driver.stop();
    e.message += `\n--- driver output:\n${out.slice(-3000)}`;
    throw e;
  }
}

/**
 * Opens `url` and waits for the page's verdict (window.__lapse) or its first
 * recorded error (window.__errors, filled by the page's inline error hook).
 */
export async function verdictOf(browser, url, { waitMs = 60_000 } = {}) {
  await browser.goto(url);
  const until = Date.now() + waitMs;
  for (;;) {
    const state = await browser.eval(
      "return { result: window.__lapse ?? null, errors: window.__errors ?? null, body: document.body ? document.body.dataset.lapse ?? null : null };",
    );
    if (state.result || state.errors?.length || Date.now() > until) {
      if (!state.result && state.errors?.length) await new Promise((r) => setTimeout(r, 1_000));
      return state;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
