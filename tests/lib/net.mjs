// Test helpers shared by the server-based tests (workerd, Chromium).
import net from "node:net";

/** A free TCP port on 127.0.0.1 (bound and released; tiny race accepted). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers (any HTTP status) or `ms` elapse. */
export async function waitForHttp(url, ms, isDead = () => false) {
  const until = Date.now() + ms;
  let last;
  while (Date.now() < until) {
    if (isDead()) throw new Error(`server exited before answering ${url}`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await r.arrayBuffer();
      return;
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`no answer from ${url} within ${ms} ms: ${last?.message}`);
}
