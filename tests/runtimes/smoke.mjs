// Runtime-independent smoke check of a TtlCache class, shared by every runtime
// test (Node ESM/CJS, workerd, Chromium import map, esbuild, Vite). No imports,
// no Node APIs: it is served to browsers and bundled into the worker as is.
// Throws on the first failed check; returns a summary that callers compare.

function check(cond, what) {
  if (!cond) throw new Error(`smoke: ${what}`);
}
function eq(actual, expected, what) {
  check(Object.is(actual, expected), `${what}: expected ${String(expected)}, got ${String(actual)}`);
}

export function smoke(TtlCache) {
  eq(typeof TtlCache, "function", "TtlCache is a class");

  // absolute ttl on a host-supplied clock
  const c = new TtlCache({ now: 1_000, ttl: 100 });
  eq(c.now, 1_000, "now");
  eq(c.set("a", { n: 1 }), c, "set returns this");
  c.set("b", "two", { ttl: 500 });
  eq(c.get("a").n, 1, "get a");
  eq(c.has("b"), true, "has b");
  eq(c.ttl("a"), 100, "ttl a");
  eq(c.ttl("missing"), undefined, "ttl of a missing key");
  eq(c.size, 2, "size");
  c.tick(1_100);
  eq(c.get("a"), undefined, "a expired at its deadline");
  eq(c.get("b"), "two", "b still live");
  eq(c.now, 1_100, "tick moved the clock");
  c.tick(500);
  eq(c.now, 1_100, "the clock never runs backwards");
  eq(c.delete("b"), true, "delete b");
  eq(c.has("b"), false, "b deleted");

  // sliding idle window: get() restarts it
  const d = new TtlCache({ now: 0, idle: 50 });
  d.set("k", 1);
  d.tick(40);
  eq(d.get("k"), 1, "k read at 40");
  d.tick(80);
  eq(d.get("k"), 1, "k alive at 80: the read at 40 restarted its window");
  d.tick(131);
  eq(d.get("k"), undefined, "k idle for 51 ms");

  // many keys: exercises wasm memory growth
  const big = new TtlCache({ now: 0, ttl: 10 });
  for (let i = 0; i < 5_000; i++) big.set(`key${i}`, i);
  eq(big.get("key4999"), 4_999, "5000th key");
  big.tick(10);
  eq(big.get("key0"), undefined, "all expired at 10 ms");

  // default clock is Date.now()
  const w = new TtlCache();
  w.set("x", "y", { ttl: 60_000 });
  eq(w.get("x"), "y", "default clock");

  // An error raised in wasm: its message crosses into JS as a string, decoded
  // by the glue (TextDecoder, or the fallback where there is none: Jest jsdom).
  let err = null;
  try {
    TtlCache.restore(new Uint8Array(16));
  } catch (e) {
    err = e;
  }
  check(err instanceof Error, `restore(garbage) throws an Error, got ${String(err)}`);
  check(/bytes/.test(err.message) && !err.message.includes("\ufffd"), `error message decoded: ${err.message}`);

  return { ok: true, a: "expired", b: "two", idle: "expired", keys: 5_000 };
}
