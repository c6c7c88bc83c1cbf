// A private redis-server for the tests: its own free port on 127.0.0.1, no
// persistence, stopped (and restartable on the same port) by the test.
import { spawn, execFileSync } from "node:child_process";
import net from "node:net";
import { freePort } from "./net.mjs";

/** Path of redis-server, or null when it is not installed (make test installs it). */
export function redisServerPath() {
  try {
    return execFileSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" }).trim() || null;
  } catch {
    return null;
  }
}

function waitForPort(port, ms) {
  const until = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const s = net.connect(port, "127.0.0.1");
      s.once("connect", () => {
        s.destroy();
        resolve();
      });
      s.once("error", () => {
        s.destroy();
        if (Date.now() > until) reject(new Error(`redis-server did not listen on ${port} within ${ms} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/** Starts redis-server; `{ url, port, stop(), start() }`. */
export async function startRedis() {
  const bin = redisServerPath();
  if (!bin) throw new Error("redis-server is not installed (make test installs it: scripts/setup.sh)");
  const port = await freePort();
  let proc = null;
  const server = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      proc = spawn(bin, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes", "--enable-debug-command", "local"], {
        stdio: ["ignore", "ignore", "inherit"],
      });
      await waitForPort(port, 10_000);
    },
    async stop() {
      if (!proc) return;
      const p = proc;
      proc = null;
      const exited = new Promise((r) => p.once("exit", r));
      p.kill("SIGKILL");
      await exited;
    },
  };
  await server.start();
  return server;
}
