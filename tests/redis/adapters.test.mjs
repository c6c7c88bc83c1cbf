// lapse/keyv with the real Keyv 6 (bridged), Keyv 5 through cache-manager 7
// and cacheable, and lapse/bentocache as bentocache's L1 in front of its Redis
// L2 and Redis bus, against a private redis-server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import Keyv from "keyv";
import { createCache } from "cache-manager";
import { Cacheable } from "cacheable";
import { BentoCache, bentostore } from "bentocache";
import { redisDriver, redisBusDriver } from "bentocache/drivers/redis";
import { Redis } from "ioredis";
import { TtlCache } from "lapse";
import { KeyvLapse } from "lapse/keyv";
import { lapseDriver, LapseDriver } from "lapse/bentocache";
import { startRedis } from "../lib/redis.mjs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

// cache-manager 7 and cacheable depend on Keyv 5: use the copy they resolve.
const keyv5Path = createRequire(fileURLToPathSafe(import.meta.resolve("cache-manager"))).resolve("keyv");
const { Keyv: Keyv5 } = await import(pathToFileURL(keyv5Path).href);

function fileURLToPathSafe(u) {
  return new URL(u).pathname;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let server;
before(async () => {
  server = await startRedis();
});
after(async () => {
  await server?.stop();
});

test("Keyv 6: values, numeric ttl, undefined ttl, delete, has, namespaces", async () => {
  const store = new KeyvLapse({ maxEntries: 1_000 });
  const keyv = new Keyv({ store, namespace: "app" });
  const other = new Keyv({ store, namespace: "other" });
  assert.equal(await keyv.set("a", { n: 1 }), true);
  assert.deepEqual(await keyv.get("a"), { n: 1 });
  await keyv.set("short", "x", 80); // Keyv passes ttl as a plain number
  await keyv.set("forever", "y", undefined);
  await other.set("a", "theirs");
  assert.equal(await keyv.get("short"), "x");
  assert.ok(store.cache.ttl([...store.cache.keys()].find((k) => k.endsWith("short"))) <= 80, "lapse holds the ttl itself");
  await sleep(150);
  assert.equal([...store.cache.keys()].some((k) => k.endsWith("short")), false, "lapse itself expired it (before Keyv looked)");
  assert.equal(await keyv.get("short"), undefined);
  assert.equal(await keyv.get("forever"), "y");
  assert.equal(await keyv.has("forever"), true);
  assert.equal(await keyv.delete("forever"), true);
  assert.equal(await keyv.has("forever"), false);
  await keyv.clear();
  assert.equal(await keyv.get("a"), undefined);
  assert.equal(await other.get("a"), "theirs", "clear() keeps other namespaces");
});

test("cache-manager 7 (Keyv 5) over lapse: set/get/ttl/wrap/del", async () => {
  const store = new KeyvLapse();
  const cache = createCache({ stores: [new Keyv5(store)] });
  await cache.set("k", { v: 1 }, 100);
  assert.deepEqual(await cache.get("k"), { v: 1 });
  let calls = 0;
  const w = await Promise.all([1, 2, 3].map(() => cache.wrap("w", async () => (calls++, "loaded"), 1_000)));
  assert.deepEqual(w, ["loaded", "loaded", "loaded"]);
  assert.equal(calls, 1);
  await sleep(150);
  assert.equal(await cache.get("k"), undefined);
  assert.equal(store.cache.size <= 1, true, "the expired entry left lapse");
  await cache.del("w");
  assert.equal(await cache.get("w"), undefined);
});

test("cacheable (Keyv 5) with lapse as its primary store", async () => {
  const store = new KeyvLapse({ maxEntries: 100 });
  const cache = new Cacheable({ primary: new Keyv5({ store }) });
  await cache.set("c", "v", 80);
  assert.equal(await cache.get("c"), "v");
  await sleep(150);
  assert.equal(await cache.get("c"), undefined);
  await cache.set("d", 1);
  assert.equal(await cache.has("d"), true);
  await cache.delete("d");
  assert.equal(await cache.has("d"), false);
});

test("Keyv 5: clear() over a shared store removes the caller's entries, whichever namespace came last", async () => {
  // Keyv 5 sets `store.namespace` per instance: a shared store holds the
  // last one's, and clearing under it removed the other namespace's entries.
  const store = new KeyvLapse();
  const a = new Keyv5({ store, namespace: "a" });
  const b = new Keyv5({ store, namespace: "b" });
  await a.set("k", "a-val");
  await b.set("k", "b-val");
  await a.clear();
  assert.equal(await a.get("k"), undefined, "the caller's own entries go");
  assert.equal(await b.get("k"), undefined, "as with Keyv 5's Map store, the whole store is cleared");
  const plainKeys = new Keyv5({ store: new KeyvLapse(), useKeyPrefix: false });
  await plainKeys.set("x", 1);
  await plainKeys.clear();
  assert.equal(await plainKeys.get("x"), undefined, "useKeyPrefix: false: no key is under the namespace");
});

test("bentocache: lapse as L1 in front of Redis L2, invalidated over the Redis bus", async () => {
  const connection = { host: "127.0.0.1", port: server.port };
  const make = () =>
    new BentoCache({
      default: "c",
      stores: {
        c: bentostore()
          .useL1Layer(lapseDriver({ maxItems: 1_000 }))
          .useL2Layer(redisDriver({ connection: new Redis(connection) }))
          .useBus(redisBusDriver({ connection })),
      },
    });
  const a = make();
  const b = make();
  try {
    let loads = 0;
    assert.equal(await a.getOrSet({ key: "user:1", factory: async () => (loads++, { name: "Ada" }), ttl: "1m" }).then((u) => u.name), "Ada");
    assert.deepEqual(await b.get({ key: "user:1" }), { name: "Ada" }, "b reads a's write through the shared L2");
    assert.equal(loads, 1);
    await sleep(100); // let both buses subscribe
    await b.set({ key: "user:1", value: { name: "Grace" }, ttl: "1m" });
    let seen;
    for (let i = 0; i < 100; i++) {
      seen = await a.get({ key: "user:1" });
      if (seen?.name === "Grace") break;
      await sleep(20);
    }
    assert.deepEqual(seen, { name: "Grace" }, "b's write invalidated a's L1 copy");
    await a.delete({ key: "user:1" });
    assert.equal(await a.get({ key: "user:1" }), undefined);
  } finally {
    await a.disconnectAll();
    await b.disconnectAll();
  }
});

test("LapseDriver on its own: bentocache's L1 contract", () => {
  const d = new LapseDriver({ prefix: "p:", maxItems: 10 });
  assert.equal(d.type, "l1");
  assert.equal(d.set("k", "v", 1_000), true);
  assert.equal(d.get("k"), "v");
  assert.ok(d.getRemainingTtl("k") <= 1_000 && d.getRemainingTtl("k") > 0);
  assert.equal(d.set("n", "v"), true);
  assert.equal(d.getRemainingTtl("n"), Infinity, "no ttl");
  assert.equal(d.getRemainingTtl("missing"), 0, "missing: 0, as bentocache's memory driver");
  const ns = d.namespace("users");
  ns.set("1", "u");
  assert.equal(d.cache.get("p:users:1"), "u", "namespaces share one TtlCache under prefix:namespace");
  ns.clear();
  assert.equal(ns.get("1"), undefined);
  assert.equal(d.get("k"), "v", "a namespace's clear keeps the parent's keys");
  assert.equal(d.pull("k"), "v");
  assert.equal(d.get("k"), undefined);
  assert.equal(d.deleteMany(["n"]), true);
  assert.equal(d.get("n"), undefined);
  const shared = new TtlCache();
  assert.equal(new LapseDriver({ cacheInstance: shared }).cache, shared);
  assert.throws(() => new LapseDriver({ maxSize: "10mb" }), TypeError);
});

test("KeyvLapse: 0, Infinity and NaN mean no expiry over the store's default; setMany checks first; no deleteMany", async () => {
  const store = new KeyvLapse({ ttl: 20 });
  await store.set("inf", 1, Infinity);
  await store.set("zero", 1, 0);
  await store.set("nan", 1, NaN);
  await store.set("dflt", 1);
  assert.equal(store.cache.ttl("inf"), Infinity);
  assert.equal(store.cache.ttl("zero"), Infinity);
  assert.equal(store.cache.ttl("nan"), Infinity);
  assert.ok(store.cache.ttl("dflt") <= 20, "undefined: the store's default");
  await assert.rejects(store.set("k", 1, "10s"), (e) => e instanceof TypeError && /^ttl: .*string/.test(e.message));
  // setMany: nothing written when an entry is bad.
  await assert.rejects(store.setMany([{ key: "a", value: 1 }, { key: "b", value: 2, ttl: "10s" }]), (e) => e instanceof TypeError && /entries\[1\]\.ttl/.test(e.message));
  assert.equal(store.cache.has("a"), false);
  await assert.rejects(store.setMany([{ key: "a", value: 1 }, { key: 2, value: 2 }]), /entries\[1\]\.key/);
  assert.equal(store.cache.has("a"), false);
  assert.deepEqual(await store.setMany([{ key: "a", value: 1 }, { key: "b", value: 2, ttl: 1_000 }]), [true, true]);
  await assert.rejects(store.getMany("a"), (e) => e instanceof TypeError && /^keys: /.test(e.message));
  await assert.rejects(store.hasMany(["a", 1]), /keys\[1\]/);
  // Keyv 5 wants one boolean from deleteMany, Keyv 6 one per key: both get theirs.
  assert.equal(store.deleteMany, undefined);
  assert.equal(await new Keyv5({ store: new KeyvLapse() }).deleteMany(["missing"]), false);
  const k5 = new Keyv5({ store: new KeyvLapse() });
  await k5.set("x", 1);
  assert.equal(await k5.deleteMany(["x"]), true);
  const k6 = new Keyv({ store: new KeyvLapse() });
  await k6.set("x", 1);
  assert.deepEqual(await k6.deleteMany(["x", "missing"]), [true, false]);
  // The iterator skips a key deleted before it is reached.
  const it = new KeyvLapse();
  await it.set("x0", 0);
  await it.set("x1", 1);
  const seen = [];
  for await (const [k] of it.iterator()) {
    seen.push(k);
    await it.delete("x1");
  }
  assert.deepEqual(seen, ["x0"]);
});

test("LapseDriver: now/clock and maxItems with maxEntries throw TypeError; a NaN ttl RangeError", () => {
  assert.throws(() => new LapseDriver({ now: 0 }), (e) => e instanceof TypeError && e.message.includes("now"));
  assert.throws(() => new LapseDriver({ clock: () => 0 }), TypeError);
  assert.throws(() => new LapseDriver({ maxItems: 2, maxEntries: 3 }), (e) => e instanceof TypeError && /^maxItems: /.test(e.message));
  // lapseDriver() checks them where they are given, not at bentocache's first call.
  assert.throws(() => lapseDriver({ now: 0 }), (e) => e instanceof TypeError && e.message.includes("now"));
  assert.throws(() => lapseDriver({ maxItems: 2, maxEntries: 3 }), TypeError);
  assert.throws(() => lapseDriver({ ttl: -1 }), RangeError);
  assert.throws(() => lapseDriver({ tll: 5 }), TypeError);
  const d = new LapseDriver({ maxItems: 2 });
  assert.throws(() => d.set("k", "v", NaN), (e) => e instanceof RangeError && /NaN/.test(e.message));
  assert.throws(() => d.set("k", "v", "1s"), (e) => e instanceof TypeError && /string/.test(e.message));
  assert.equal(d.get("k"), undefined);
});

// Found by a conformance probe: a bad maxItems was reported as maxEntries
// (the name it stands for, which the caller never wrote), and deleteMany
// deleted the keys before a bad one, then threw.
test("LapseDriver: a bad maxItems names maxItems; deleteMany checks every key before it deletes one", () => {
  for (const [v, type] of [[-1, RangeError], [1.5, RangeError], ["5", TypeError]]) {
    for (const make of [() => new LapseDriver({ maxItems: v }), () => lapseDriver({ maxItems: v })]) {
      assert.throws(make, (e) => e instanceof type && /^maxItems: /.test(e.message), `maxItems ${v}`);
    }
  }
  assert.throws(() => new LapseDriver({ maxEntries: -1 }), (e) => e instanceof RangeError && /^maxEntries: /.test(e.message));
  const d = new LapseDriver({});
  d.set("a", "1");
  d.set("b", "2");
  assert.throws(() => d.deleteMany(["a", 5, "b"]), TypeError);
  assert.equal(d.get("a"), "1", "nothing deleted");
  assert.equal(d.get("b"), "2");
  assert.equal(d.deleteMany(["a", "b"]), true);
  assert.equal(d.get("a"), undefined);
});
