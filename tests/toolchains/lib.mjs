// Harness of the toolchain matrix (tests/toolchains/*.tool.mjs, `make
// test-toolchains`).
//
// Each app in tests/toolchains/apps/<name>/ is the smallest realistic project
// for one toolchain: its own package.json + package-lock.json (toolchain
// versions pinned there), its sources, and NO lapse-specific configuration.
// prepareApp() lays it out in ~/.cache/lapse-toolchains/<checkout>/<name>/,
// installs the lockfile there only when it (or Node's major version) changed
// since the last run (that node_modules is the cache between runs on one
// machine; npm itself reads the shared ~/.npm cache), copies the sources
// afresh, drops every bundler cache and output, and installs the packed
// tarball (build/lapse-*.tgz, `make pack`; or $LAPSE_TARBALL) with
// `npm install --no-save`, as a user would.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import {
  appendFileSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import sirv from "sirv";
import { freePort, waitForHttp } from "../lib/net.mjs";

export { freePort, waitForHttp };

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, "..", "..");
export const apps = join(here, "apps");
// Outside the repository: a toolchain that looks upwards for a project root
// (Next.js picks the topmost lockfile) must find only the app's own, as in a
// user's project. Under ~/.cache, so `make clean` keeps the installed
// node_modules; one folder per checkout.
export const work = resolve(
  process.env.LAPSE_TOOLCHAINS_DIR ??
    join(
      process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"),
      "lapse-toolchains",
      createHash("sha256").update(repo).digest("hex").slice(0, 12),
    ),
);
const timings = join(work, "timings.log");

/** The packed tarball: $LAPSE_TARBALL, else the one `make pack` left in build/. */
export function tarball() {
  if (process.env.LAPSE_TARBALL) return resolve(process.env.LAPSE_TARBALL);
  const dir = join(repo, "build");
  const found = existsSync(dir) ? readdirSync(dir).filter((f) => /^lapse-.*\.tgz$/.test(f)) : [];
  if (found.length !== 1) throw new Error(`expected one build/lapse-*.tgz (run \`make pack\`), found ${found.length}`);
  return join(dir, found[0]);
}

/** Appends a timing line to <work folder>/timings.log and prints it. */
export function note(line) {
  mkdirSync(work, { recursive: true });
  const l = `${new Date().toISOString()} ${line}`;
  appendFileSync(timings, l + "\n");
  console.log(`# ${line}`);
}

/** Times `fn` (sync or async) and notes it under `label`. */
export async function timed(label, fn) {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    note(`${label}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
}

/**
 * Runs `cmd args` in `cwd` to completion; throws with its output when it
 * exits non-zero (or never, with `allowFail`). Returns { code, out }.
 */
export function run(cmd, args, { cwd, env = {}, timeout = 600_000, allowFail = false } = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...quietEnv, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => killGroup(child), timeout);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if ((code !== 0 || signal) && !allowFail) {
        reject(new Error(`\`${cmd} ${args.join(" ")}\` in ${cwd} exited ${code ?? signal}:\n${out.slice(-6000)}`));
      } else resolvePromise({ code, out });
    });
  });
}

// No telemetry, update checks or colours from any toolchain.
const quietEnv = {
  NEXT_TELEMETRY_DISABLED: "1",
  NO_UPDATE_NOTIFIER: "1",
  NO_COLOR: "1",
  FORCE_COLOR: "0",
  CI: "1",
  BROWSER: "none",
  npm_config_update_notifier: "false",
  npm_config_audit: "false",
  npm_config_fund: "false",
};

function killGroup(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {}
}

/**
 * Starts a long-running server (`cmd args` in `cwd`) in its own process
 * group and waits until `url` answers. Returns { url, output(), stop() }.
 */
export async function startServer(cmd, args, { cwd, env = {}, url, readyMs = 180_000 }) {
  const child = spawn(cmd, args, {
    cwd,
    env: { ...process.env, ...quietEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  let dead = false;
  child.on("exit", () => (dead = true));
  const server = {
    url,
    output: () => out,
    async stop() {
      if (dead) return;
      const gone = new Promise((r) => child.once("exit", r));
      killGroup(child);
      const t = setTimeout(() => {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {}
      }, 5_000);
      await gone;
      clearTimeout(t);
    },
  };
  try {
    await waitForHttp(url, readyMs, () => dead);
  } catch (e) {
    await server.stop();
    throw new Error(`${e.message}\n--- ${cmd} ${args.join(" ")} output:\n${out.slice(-6000)}`);
  }
  return server;
}

/** Runs `fn(server)`, then stops `server`; a failure carries the server's output. */
export async function withServer(server, fn) {
  try {
    return await fn(server);
  } catch (e) {
    e.message += `\n--- server output (last 4000 chars):\n${server.output?.().slice(-4000) ?? ""}`;
    throw e;
  } finally {
    await server.stop();
  }
}

/** Serves `dir` as static files on 127.0.0.1. Returns { url, stop() }. */
export async function serveStatic(dir) {
  const server = createServer(sirv(dir, { dev: true, dotfiles: false }));
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    async stop() {
      server.closeAllConnections?.();
      await new Promise((r) => server.close(r));
    },
  };
}

function lockKey(src) {
  return createHash("sha256")
    .update(readFileSync(join(src, "package-lock.json")))
    .update(readFileSync(join(src, "package.json")))
    .update(`node ${process.versions.node.split(".")[0]} ${process.platform} ${process.arch}`)
    .digest("hex")
    .slice(0, 16);
}

// Outputs and caches of the toolchains: removed before every run so nothing
// built from an earlier tarball can answer for this one.
const BUILD_DIRS = ["dist", ".next", ".parcel-cache", "node_modules/.vite", "node_modules/.cache", "node_modules/lapse"];

/**
 * Lays out app `name` in the work folder with the packed lapse
 * installed; returns its path. Cached node_modules are reused when the
 * lockfile is unchanged.
 */
export async function prepareApp(name) {
  const src = join(apps, name);
  const dir = join(work, name);
  const key = lockKey(src);
  const stamp = join(dir, "node_modules", ".lapse-matrix-key");
  if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== key) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(src, "package.json"), join(dir, "package.json"));
    copyFileSync(join(src, "package-lock.json"), join(dir, "package-lock.json"));
    // Not `npm ci`: this machine's registry lacks some other platforms'
    // optional binaries (@rollup/rollup-android-arm64@4.68.7, @swc/core-darwin-*,
    // @next/swc-win32-*), so lockfiles made here omit them and `npm ci` refuses
    // them as out of sync. `npm install` with the lockfile installs exactly the
    // locked versions (checked by assertLocked) and skips those binaries.
    await timed(`${name}: npm install (lockfile)`, () =>
      run("npm", ["install", "--no-save", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: dir }),
    );
    assertLocked(src, dir);
    writeFileSync(stamp, key);
  } else {
    note(`${name}: node_modules cached (${key})`);
  }
  // Sources afresh: everything of the app but its manifest, plus the shared
  // browser page and smoke check where the app has a src/ folder.
  for (const f of readdirSync(dir)) {
    if (!["node_modules", "package.json", "package-lock.json"].includes(f)) rmSync(join(dir, f), { recursive: true, force: true });
  }
  for (const d of BUILD_DIRS) rmSync(join(dir, d), { recursive: true, force: true });
  cpSync(src, dir, { recursive: true, filter: (p) => !/package(-lock)?\.json$/.test(p) || dirname(p) !== src });
  const srcDir = join(dir, "src");
  mkdirSync(srcDir, { recursive: true });
  copyFileSync(join(repo, "tests", "runtimes", "smoke.mjs"), join(srcDir, "smoke.mjs"));
  if (!existsSync(join(srcDir, "main.mjs"))) copyFileSync(join(apps, "shared", "main.mjs"), join(srcDir, "main.mjs"));
  await timed(`${name}: npm install lapse tarball`, () =>
    run("npm", ["install", "--no-save", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", tarball()], {
      cwd: dir,
    }),
  );
  const installed = JSON.parse(readFileSync(join(dir, "node_modules", "lapse", "package.json"), "utf8"));
  if (installed.name !== "lapse") throw new Error(`${dir}: node_modules/lapse is not lapse`);
  return dir;
}

/** Every package of the committed lockfile that is installed has its locked version. */
function assertLocked(src, dir) {
  const lock = JSON.parse(readFileSync(join(src, "package-lock.json"), "utf8")).packages;
  let checked = 0;
  for (const [path, entry] of Object.entries(lock)) {
    if (!path || !entry.version || !existsSync(join(dir, path, "package.json"))) continue;
    const got = JSON.parse(readFileSync(join(dir, path, "package.json"), "utf8")).version;
    if (got !== entry.version) throw new Error(`${dir}/${path}: installed ${got}, locked ${entry.version}`);
    checked++;
  }
  if (checked === 0) throw new Error(`${dir}: nothing of package-lock.json is installed`);
}

/** The version of `pkg` installed in app folder `dir`. */
export function versionOf(dir, pkg) {
  return JSON.parse(readFileSync(join(dir, "node_modules", pkg, "package.json"), "utf8")).version;
}

/** The local binary `bin` of app folder `dir` (node_modules/.bin/<bin>). */
export function bin(dir, name) {
  return join(dir, "node_modules", ".bin", name);
}

export { spawnSync };
