// A Worker that keeps one TtlCache at module scope (outside the fetch handler)
// and answers requests with it. Bundled by workerd.test.mjs with esbuild,
// `lapse_bg.wasm` left external and declared as a wasm module in the config.
import { TtlCache } from "lapse";
import { smoke } from "../runtimes/smoke.mjs";

const cache = new TtlCache({ ttl: 60_000 });
const startedAt = cache.now; // Date.now() at module scope (0 in workerd)
// Never ticked: its entries must expire by the request clock on their own.
const untouched = new TtlCache({ ttl: 60_000 });

function json(body, status = 200) {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const key = url.searchParams.get("key") ?? "";
    if (url.pathname === "/lazy/set") {
      untouched.set(key, "v", { ttl: Number(url.searchParams.get("ttl") ?? 60_000) });
      return json({ ok: true });
    }
    if (url.pathname === "/lazy/get") return json({ found: untouched.get(key) !== undefined, now: untouched.now });
    cache.tick();
    switch (url.pathname) {
      case "/set":
        cache.set(key, url.searchParams.get("value") ?? "", { ttl: Number(url.searchParams.get("ttl") ?? 60_000) });
        return json({ ok: true, size: cache.size });
      case "/get": {
        const value = cache.get(key);
        return value === undefined ? json({ found: false }, 404) : json({ found: true, value, ttl: cache.ttl(key) });
      }
      case "/delete":
        return json({ deleted: cache.delete(key) });
      case "/smoke":
        try {
          return json(smoke(TtlCache));
        } catch (e) {
          return json({ ok: false, error: String(e?.stack ?? e) }, 500);
        }
      case "/info":
        return json({ startedAt, now: cache.now, size: cache.size });
      default:
        return json({ error: "not found" }, 404);
    }
  },
};
