// Shared by tests/runtimes/*.tool.mjs: each builds or runs the smallest
// realistic app of one toolchain (tests/runtimes/apps/<name>/) with the packed
// lapse tarball installed the way a user installs it, and nothing configured
// for lapse.
//
// An app folder is copied to build/runtimes/<name>/ (or $LAPSE_RUNTIMES_DIR/<name>/). Its toolchain comes from
// the app's committed package-lock.json (exact versions, npm's cache
// in ~/.npm), and is kept between runs while the lockfile is unchanged (the
// key is a hash of package.json + package-lock.json). Then, on every run:
// the app's sources, the shared smoke check, and `npm install --no-save` of
// build/lapse-<version>.tgz.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, "..", "..");
const work = process.env.LAPSE_RUNTIMES_DIR ?? join(root, "build", "runtimes");

/** Environment for every toolchain: no telemetry, update checks or colors. */
export const env = {
  ...process.env,
  CI: "1",
  NO_COLOR: "1",
  FORCE_COLOR: "0",
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_LOG: "warn",
  DO_NOT_TRACK: "1",
  npm_config_update_notifier: "false",
  DENO_NO_UPDATE_CHECK: "1",
  DENO_DIR: join(work, ".deno-dir"),
};

export function tarball() {
  const dir = join(root, "build");
  const found = readdirSync(dir).filter((f) => /^lapse-.*\.tgz$/.test(f));
  if (found.length !== 1) throw new Error(`expected one build/lapse-*.tgz (run make pack), found ${found.length}`);
  return join(dir, found[0]);
}

/** Runs a command to completion; throws with its output if it fails. */
export function run(cmd, args, { cwd, timeout = 300_000, allowFail = false } = {}) {
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout, maxBuffer: 64 << 20 });
  const ms = Date.now() - t0;
  const out = `$ ${cmd} ${args.join(" ")}  (in ${cwd}, ${ms} ms, status ${r.status}${r.signal ? `, ${r.signal}` : ""})\n` +
    `--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
  if (!allowFail && (r.status !== 0 || r.error)) throw new Error(`command failed: ${r.error?.message ?? ""}\n${out}`);
  return { ...r, ms, out };
}

/** The last line of stdout that parses as JSON. */
export function lastJson(stdout) {
  const lines = stdout.trim().split("\n").reverse();
  for (const l of lines) {
    try {
      return JSON.parse(l);
    } catch {}
  }
  throw new Error(`no JSON line in output:\n${stdout}`);
}

/**
 * Prepares build/runtimes/<name> and returns its path. `smokeTo`: folders
 * (relative to the app) that get smoke.mjs and smoke.cjs.
 */
export function prepareApp(name, { smokeTo = ["."] } = {}) {
  const src = join(here, "apps", name);
  const dst = join(work, name);
  const lock = join(src, "package-lock.json");
  const hash = createHash("sha256").update(readFileSync(join(src, "package.json")));
  if (existsSync(lock)) hash.update(readFileSync(lock));
  const key = hash.digest("hex");
  const keyFile = join(dst, ".lapse-deps-key");
  const fresh = !(existsSync(keyFile) && readFileSync(keyFile, "utf8") === key);
  if (fresh) {
    rmSync(dst, { recursive: true, force: true });
    mkdirSync(dst, { recursive: true });
  }
  // Sources (and the lockfile) over whatever is there; node_modules stays.
  cpSync(src, dst, { recursive: true, filter: (p) => !p.includes(`${name}/node_modules`) });
  let installMs = 0;
  if (fresh && existsSync(lock)) {
    // `npm install` on the committed lockfile installs its exact versions, like
    // `npm ci`, but tolerates what `npm ci` rejects: optional platform
    // packages (other OSes' binaries) that a registry mirror does not carry.
    const r = run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: dst, timeout: 900_000 });
    installMs = r.ms;
    checkLocked(src, dst);
    writeFileSync(keyFile, key);
  } else if (fresh) {
    writeFileSync(keyFile, key);
  }
  const smoke = readFileSync(join(here, "smoke.mjs"), "utf8");
  const smokeCjs = smoke.replace(/^export function smoke\(/m, "function smoke(") + "\nmodule.exports = { smoke };\n";
  if (smokeCjs === smoke + "\nmodule.exports = { smoke };\n") throw new Error("smoke.mjs: no `export function smoke(`");
  for (const d of smokeTo) {
    writeFileSync(join(dst, d, "smoke.mjs"), smoke);
    writeFileSync(join(dst, d, "smoke.cjs"), smokeCjs);
  }
  const r = run("npm", ["install", "--no-save", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", tarball()], { cwd: dst });
  if (!existsSync(join(dst, "node_modules", "lapse", "package.json"))) throw new Error(`lapse not installed in ${dst}`);
  process.stderr.write(
    `${name}: ${fresh ? `toolchain installed in ${installMs} ms` : "toolchain kept from the last run"}, lapse installed in ${r.ms} ms\n`,
  );
  return { dir: dst, installMs, lapseMs: r.ms, fresh };
}

// `npm install` may resolve anew what the lockfile does not pin: every
// package it installed must be at its locked version, and every non-optional
// locked package must be there.
function checkLocked(src, dst) {
  const lock = JSON.parse(readFileSync(join(src, "package-lock.json"), "utf8"));
  const bad = [];
  for (const [path, meta] of Object.entries(lock.packages)) {
    if (!path) continue;
    const pj = join(dst, path, "package.json");
    if (!existsSync(pj)) {
      if (!meta.optional) bad.push(`${path}: missing`);
      continue;
    }
    const { version } = JSON.parse(readFileSync(pj, "utf8"));
    if (version !== meta.version) bad.push(`${path}: ${version}, locked ${meta.version}`);
  }
  if (bad.length) throw new Error(`${dst}: installed packages differ from the lockfile:\n${bad.join("\n")}`);
}

/** Starts a long-running process; resolves its handle. `stop()` ends it and its children. */
export function start(cmd, args, { cwd }) {
  const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  let exited = false;
  const done = new Promise((r) => child.once("exit", () => { exited = true; r(); }));
  return {
    child,
    log: () => log,
    dead: () => exited,
    async stop() {
      if (exited) return;
      try {
        process.kill(-child.pid, "SIGTERM"); // the process group: wrangler's workerd too
      } catch {}
      const t = setTimeout(() => {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {}
      }, 5_000);
      await done;
      clearTimeout(t);
    },
  };
}
