import { TtlCache } from "lapse";
import { smoke } from "./smoke.mjs";

const cache = new TtlCache({ ttl: 60_000 }); // module scope, outside any request

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/smoke") {
      try {
        return Response.json(smoke(TtlCache));
      } catch (e) {
        return Response.json({ ok: false, error: String(e?.stack ?? e) }, { status: 500 });
      }
    }
    if (url.pathname === "/codegen") {
      // Whether this runtime compiles wasm from bytes (workerd does not): if
      // not, lapse can only be working through its workerd entry.
      try {
        new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
        return Response.json({ fromBytes: true });
      } catch (e) {
        return Response.json({ fromBytes: false, error: String(e) });
      }
    }
    const key = url.searchParams.get("key") ?? "";
    if (url.pathname === "/set") {
      cache.set(key, url.searchParams.get("value") ?? "");
      return Response.json({ size: cache.size });
    }
    return Response.json({ value: cache.get(key) ?? null });
  },
};
