// lapse/redis against a real redis-server (started here on a free 127.0.0.1
// port, persistence off). Every "no stale read" assertion waits for the
// server's invalidation, which is what bounds staleness in production too.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createClient } from "redis";
import { NearCache } from "lapse/redis";
import { startRedis } from "../lib/redis.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let server;
let plain;
const open = [];

before(async () => {
  server = await startRedis();
  plain = createClient({ url: server.url });
  plain.on("error", () => {});
  await plain.connect();
});

after(async () => {
  for (const n of open) await n.close().catch(() => {});
  await plain?.close().catch(() => {});
  await server?.stop();
});

async function near(opts = {}) {
  const n = await NearCache.connect(server.url, { ttl: 60_000, ...opts });
  n.client.on("error", () => {}); // the restart test kills the server under it
  open.push(n);
  return n;
}

/** Resolves with the ms from now until `key` is invalidated on `n`'s connection. */
function invalidation(n, key, ms = 2_000) {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no invalidation of ${key} within ${ms} ms`)), ms);
    const on = (k) => {
      if (k === null || String(k) === key) {
        clearTimeout(timer);
        n.client.off("invalidate", on);
        resolve(performance.now() - t0);
      }
    };
    n.client.on("invalidate", on);
  });
}

async function until(cond, ms = 2_000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(5);
  }
}

test("two near caches on two connections invalidate each other", async (t) => {
  const a = await near();
  const b = await near();
  await a.set("two:k", { v: 1 });
  assert.deepEqual(await b.get("two:k"), { v: 1 });
  assert.ok(b.local.has("two:k"), "b keeps a local copy");
  const seen = invalidation(b, "two:k");
  await a.set("two:k", { v: 2 });
  const ms = await seen;
  t.diagnostic(`invalidation reached the other near cache ${ms.toFixed(2)} ms after SET was sent`);
  assert.equal(b.local.has("two:k"), false, "the stale copy is gone once the invalidation arrived");
  assert.deepEqual(await b.get("two:k"), { v: 2 });
  // And the other way round.
  const back = invalidation(a, "two:k");
  await b.set("two:k", { v: 3 });
  await back;
  assert.deepEqual(await a.get("two:k"), { v: 3 });
});

test("a plain client's write invalidates; the writer's own copy survives its own write (NOLOOP)", async (t) => {
  const n = await near();
  await n.set("plain:k", "mine");
  assert.equal(n.local.get("plain:k"), "mine", "own write kept locally");
  const seen = invalidation(n, "plain:k");
  const t0 = performance.now();
  await plain.set("plain:k", JSON.stringify("theirs"));
  const ms = await seen;
  t.diagnostic(`plain SET -> invalidation: ${(ms).toFixed(2)} ms (SET round trip ${(performance.now() - t0).toFixed(2)} ms)`);
  assert.equal(await n.get("plain:k"), "theirs");
});

test("delete removes the key in Redis and every near copy", async () => {
  const a = await near();
  const b = await near();
  await a.set("del:k", 1);
  assert.equal(await b.get("del:k"), 1);
  const seen = invalidation(b, "del:k");
  assert.equal(await a.delete("del:k"), true);
  assert.equal(a.local.has("del:k"), false);
  await seen;
  assert.equal(await b.get("del:k"), undefined);
  assert.equal(await plain.exists("del:k"), 0);
  assert.equal(await a.delete("del:k"), false, "false when Redis had no such key");
});

test("PX deadlines: Redis gets PX, and no local copy outlives the key's deadline in Redis", async () => {
  const a = await near({ ttl: 60_000 });
  await a.set("px:k", "v", { ttl: 300 });
  const pttl = await plain.pTTL("px:k");
  assert.ok(pttl > 0 && pttl <= 300, `PTTL ${pttl}`);
  assert.ok(a.local.ttl("px:k") <= 300, "local copy bounded by the write's ttl");

  // A key written elsewhere with a short PX: the local copy read from Redis
  // expires no later than Redis's deadline, far below the local ttl.
  await plain.set("px:other", JSON.stringify("o"), { expiration: { type: "PX", value: 250 } });
  const b = await near({ ttl: 60_000 });
  assert.equal(await b.get("px:other"), "o");
  const left = b.local.ttl("px:other");
  assert.ok(left !== undefined && left <= 250, `local ttl ${left} must not exceed Redis's PTTL`);

  // The local ttl bounds a key with no deadline in Redis.
  await plain.set("px:forever", JSON.stringify("f"));
  const c = await near({ ttl: 5_000 });
  assert.equal(await c.get("px:forever"), "f");
  assert.ok(c.local.ttl("px:forever") <= 5_000);

  await sleep(400);
  assert.equal(a.local.get("px:k"), undefined);
  assert.equal(await a.get("px:k"), undefined, "gone in Redis too");
  assert.equal(b.local.get("px:other"), undefined);
});

test("fetch: local -> Redis -> loader, coalesced, the result written to both", async () => {
  const a = await near();
  let calls = 0;
  const loader = async (key, { signal }) => {
    assert.ok(signal instanceof AbortSignal);
    calls++;
    await sleep(30);
    return { loaded: key };
  };
  const reads = a.stats().remoteReads;
  const all = await Promise.all(Array.from({ length: 200 }, () => a.fetch("fetch:k", loader, { ttl: 10_000 })));
  assert.equal(calls, 1, "one loader call for 200 concurrent fetches");
  assert.equal(a.stats().remoteReads - reads, 1, "one Redis read for 200 concurrent fetches");
  for (const v of all) assert.deepEqual(v, { loaded: "fetch:k" });
  assert.equal(await plain.get("fetch:k"), JSON.stringify({ loaded: "fetch:k" }), "written to Redis");
  const pttl = await plain.pTTL("fetch:k");
  assert.ok(pttl > 0 && pttl <= 10_000);
  assert.deepEqual(a.local.get("fetch:k"), { loaded: "fetch:k" }, "and kept locally");

  // A value already in Redis: no loader call.
  const b = await near();
  assert.deepEqual(await b.fetch("fetch:k", () => assert.fail("loader must not run")), { loaded: "fetch:k" });
  // undefined stores nothing; a throwing loader rejects every waiter.
  assert.equal(await b.fetch("fetch:none", () => undefined), undefined);
  assert.equal(await plain.exists("fetch:none"), 0);
  const boom = new Error("boom");
  const waits = Array.from({ length: 5 }, () => b.fetch("fetch:err", async () => { await sleep(10); throw boom; }));
  for (const w of waits) await assert.rejects(w, (e) => e === boom);
  assert.equal(await plain.exists("fetch:err"), 0);
});

test("a read in flight when its key changes does not store the old value", async () => {
  const n = await near();
  await plain.set("race:k", JSON.stringify("old"));
  // Hold the server so n's GET and the other client's SET queue up behind it.
  const blocker = createClient({ url: server.url });
  blocker.on("error", () => {});
  await blocker.connect();
  const sleeping = blocker.sendCommand(["DEBUG", "SLEEP", "0.2"]);
  await sleep(20);
  const read = n.get("race:k");
  await sleep(20);
  const write = plain.set("race:k", JSON.stringify("new"));
  await Promise.all([sleeping, write]);
  const got = await read;
  assert.ok(got === "old" || got === "new");
  await until(async () => n.local.peek("race:k") !== "old");
  assert.equal(await n.get("race:k"), "new");
  await blocker.close();
});

test("a server restart drops every local copy; nothing changed meanwhile is served stale", async () => {
  const n = await near();
  await n.set("restart:k", "before");
  assert.equal(n.local.get("restart:k"), "before");
  await server.stop();
  await until(async () => !n.local.has("restart:k"));
  assert.equal(n.local.size, 0, "local copies dropped on disconnect");
  await server.start(); // empty: persistence is off
  await plain.set("restart:k", JSON.stringify("during")).catch(async () => {
    await until(async () => plain.isReady, 5_000);
    await plain.set("restart:k", JSON.stringify("during"));
  });
  await until(async () => n.client.isReady, 10_000);
  await until(async () => (await n.get("restart:k").catch(() => undefined)) === "during", 10_000);
  // Tracking is back on after the reconnect: a later remote write invalidates.
  const seen = invalidation(n, "restart:k", 5_000);
  await plain.set("restart:k", JSON.stringify("after"));
  await seen;
  assert.equal(await n.get("restart:k"), "after");
});

test("close() drops the local copies and refuses further use", async () => {
  const n = await NearCache.connect(server.url, { ttl: 1_000 });
  await n.set("close:k", 1);
  await n.close();
  assert.equal(n.local.size, 0);
  await assert.rejects(n.get("close:k"), /closed/);
  await assert.rejects(n.set("close:k", 2), /closed/);
  await n.close(); // idempotent
  assert.equal(await plain.get("close:k"), "1", "Redis keeps the data");
});

test("bad arguments are rejected before anything is sent", async () => {
  const n = await near();
  await assert.rejects(n.set(1, "v"), TypeError);
  await assert.rejects(n.set("k", undefined), TypeError);
  await assert.rejects(n.set("k", "v", { ttl: -1 }), RangeError);
  await assert.rejects(n.set("k", "v", { px: 1 }), TypeError);
  await assert.rejects(n.fetch("k", "not a function"), TypeError);
  await assert.rejects(NearCache.connect(server.url, { max: 10 }), TypeError);
  assert.equal(await plain.exists("k"), 0);
});

/**
 * Makes our next write's reply and another client's invalidation of the same
 * key reach us in one socket read: Redis holds writes for `ms` (CLIENT PAUSE,
 * sent by `plain`, which then writes as the other client), then runs ours
 * and then theirs back to back (found by a probe: 20 of 20 runs kept
 * the stale copy for good before the fix).
 */
async function racePair(ours, theirs, ms = 30) {
  await plain.sendCommand(["CLIENT", "PAUSE", String(ms), "WRITE"]);
  const a = ours();
  await sleep(5);
  const b = theirs();
  return Promise.all([a, b]);
}

test("a set whose reply arrives with another client's invalidation keeps no stale copy", async () => {
  const n = await near();
  for (let i = 0; i < 5; i++) {
    const k = `race:set:${i}`;
    await racePair(() => n.set(k, "mine"), () => plain.set(k, JSON.stringify("theirs")));
    await sleep(20); // any invalidation still on its way has arrived
    assert.equal(await plain.get(k), JSON.stringify("theirs"), "Redis ran ours, then theirs");
    assert.equal(await n.get(k), "theirs", `round ${i}: no stale local copy`);
  }
});

test("fetch: a key changed while its loader runs stores nothing, here or in Redis", async () => {
  const n = await near();
  const got = await n.fetch("race:load", async () => {
    await plain.set("race:load", JSON.stringify("theirs"));
    await sleep(30); // the invalidation arrives while the load runs
    return "loaded";
  });
  assert.equal(got, "loaded", "the caller still gets what the loader returned");
  assert.equal(await plain.get("race:load"), JSON.stringify("theirs"), "the other client's write stands");
  assert.equal(n.local.has("race:load"), false);
  assert.equal(await n.get("race:load"), "theirs");
  // A local delete during the load wins the same way.
  const got2 = await n.fetch("race:load2", async () => {
    await n.delete("race:load2");
    return "loaded";
  });
  assert.equal(got2, "loaded");
  assert.equal(await plain.exists("race:load2"), 0);
  assert.equal(n.local.has("race:load2"), false);
  // With nothing in between, the result goes to both (as before).
  assert.equal(await n.fetch("race:load3", async () => "loaded"), "loaded");
  assert.equal(await plain.get("race:load3"), JSON.stringify("loaded"));
  assert.equal(n.local.get("race:load3"), "loaded");
});

test("fetch whose write reply arrives with another client's invalidation keeps no stale copy", async () => {
  const n = await near();
  for (let i = 0; i < 5; i++) {
    const k = `race:fetch:${i}`;
    await racePair(() => n.fetch(k, async () => "mine"), () => plain.set(k, JSON.stringify("theirs")));
    await sleep(20);
    assert.equal(await n.get(k), await plain.get(k).then((s) => JSON.parse(s)), `round ${i}: the local copy is Redis's`);
  }
});

test("connect with a prefix tracks and caches only keys under it", async () => {
  const n = await near({ prefix: "pre:" });
  const m = await near({ prefix: ["a:", "b:"] }); // two prefixes: was "ERR Prefix ... overlaps"
  await plain.set("pre:k", JSON.stringify(1));
  await plain.set("out:k", JSON.stringify(2));
  assert.equal(await n.get("pre:k"), 1);
  assert.equal(await n.get("out:k"), 2);
  assert.equal(n.local.has("pre:k"), true);
  assert.equal(n.local.has("out:k"), false, "not under the prefix: not cached");
  const seen = invalidation(n, "pre:k");
  await plain.set("pre:k", JSON.stringify(3));
  await seen;
  assert.equal(await n.get("pre:k"), 3);
  await plain.set("b:k", JSON.stringify("b"));
  assert.equal(await m.get("b:k"), "b");
  assert.equal(m.local.has("b:k"), true);
});

test("keys with a lone surrogate, refused options, overlapping prefixes and a ttl past PX: TypeError/RangeError, nothing sent", async () => {
  const n = await near();
  // node-redis sends a lone surrogate as U+FFFD: "\uD800" and "\uDBFF" would
  // be one Redis key, and an invalidation of it would never match either.
  for (const key of ["\uD800", "a\uDC00", "\uDBFFz"]) {
    await assert.rejects(n.set(key, "v"), (e) => e instanceof TypeError && /^key: .*well-formed/.test(e.message));
    await assert.rejects(n.get(key), TypeError);
    await assert.rejects(n.fetch(key, () => "v"), TypeError);
    await assert.rejects(n.delete(key), TypeError);
  }
  assert.equal(await plain.exists("\uFFFD"), 0);
  await n.set("pair:\uD83D\uDE00", "ok"); // a surrogate pair is fine
  assert.equal(await plain.get("pair:\uD83D\uDE00"), '"ok"');
  // Options the local copies cannot honour: accepted before and silently inert.
  for (const opt of [{ now: 0 }, { clock: () => 0 }, { grace: 1_000 }, { refresh: 1_000 }, { onLoadError() {} }]) {
    const name = Object.keys(opt)[0];
    await assert.rejects(NearCache.connect(server.url, opt), (e) => e instanceof TypeError && e.message.includes(name));
  }
  await assert.rejects(NearCache.connect(server.url, { prefix: ["a:", "a:b:"] }), (e) => e instanceof TypeError && /^prefix: .*overlap/.test(e.message));
  await assert.rejects(NearCache.connect(server.url, { prefix: ["a:", "a:"] }), TypeError);
  // A finite ttl past 2^53 - 1 ms: RangeError before anything is sent or dropped.
  await n.set("big:k", "kept");
  await assert.rejects(n.set("big:k", "new", { ttl: 1e20 }), (e) => e instanceof RangeError && /^ttl: /.test(e.message));
  await assert.rejects(n.fetch("big:k2", () => "v", { ttl: 1e20 }), RangeError);
  assert.equal(n.local.get("big:k"), "kept", "the local copy stays");
  assert.equal(await plain.get("big:k"), '"kept"');
  await n.set("big:k", "ok", { ttl: Number.MAX_SAFE_INTEGER });
  assert.equal(await plain.get("big:k"), '"ok"');
});

test("errors from Redis and the codec name the key; WRONGTYPE is a TypeError", async () => {
  const n = await near();
  await plain.hSet("err:hash", "f", "v");
  await assert.rejects(n.get("err:hash"), (e) => e instanceof TypeError && e.message.includes('"err:hash"') && /WRONGTYPE/.test(e.message) && e.cause !== undefined);
  await plain.set("err:json", "not json");
  await assert.rejects(n.get("err:json"), (e) => e instanceof Error && e.message.includes('"err:json"') && e.cause instanceof SyntaxError);
  await assert.rejects(n.set("err:big", 1n), (e) => e instanceof TypeError && e.message.includes('"err:big"'));
  assert.equal(await plain.exists("err:big"), 0);
});

test("a get or fetch made after a change does not join the read or load in flight from before it", async () => {
  const n = await near();
  // fetch: another client writes while the loader runs; a fetch made after
  // the invalidation arrived starts its own and sees the write.
  let release;
  const first = n.fetch("join:f", () => new Promise((r) => (release = r)));
  await until(() => release !== undefined);
  const seen = invalidation(n, "join:f");
  await plain.set("join:f", JSON.stringify("theirs"));
  await seen;
  const later = n.fetch("join:f", async () => "second loader");
  release("loaded-old");
  assert.equal(await first, "loaded-old", "the first caller gets its load");
  assert.equal(await later, "theirs", "the later fetch reads what Redis holds");
  // get: a read in flight, then this cache's own set; the get after it
  // does not join that read.
  await plain.set("join:g", JSON.stringify("old"));
  const g1 = n.get("join:g");
  const w = n.set("join:g", "mine");
  const g2 = n.get("join:g");
  await Promise.all([g1, w]);
  assert.equal(await g2, "mine");
  // and after a delete
  await plain.set("join:d", JSON.stringify("old"));
  const d1 = n.get("join:d");
  const del = n.delete("join:d");
  const d2 = n.get("join:d");
  await Promise.all([d1, del]);
  assert.equal(await d2, undefined);
});

test("errors of SET and DEL name the key; a codec whose decode gives undefined is refused before anything is sent", async () => {
  const n = await near();
  await plain.configSet("maxmemory-policy", "noeviction");
  await plain.configSet("maxmemory", "1");
  try {
    await assert.rejects(n.set("oom:k", "v"), (e) => e.message.includes('"oom:k"') && /OOM/.test(e.message) && e.cause !== undefined);
  } finally {
    await plain.configSet("maxmemory", "0");
  }
  const odd = await near({ codec: { encode: (v) => String(v), decode: () => undefined } });
  await assert.rejects(odd.set("odd:k", "v"), (e) => e instanceof TypeError && e.message.includes('"odd:k"') && /undefined/.test(e.message));
  assert.equal(await plain.exists("odd:k"), 0, "nothing sent");
  await plain.set("odd:r", "x");
  await assert.rejects(odd.get("odd:r"), (e) => e instanceof TypeError && e.message.includes('"odd:r"'));
});

test("fetch: the loader's signal aborts once its result cannot be stored; stats count loads, errors and joins", async () => {
  const n = await near();
  const before = n.stats();
  let signal;
  let release;
  const loading = n.fetch("sig:k", (_k, ctx) => {
    signal = ctx.signal;
    return new Promise((r) => (release = r));
  });
  const joined = [n.fetch("sig:k", () => "never"), n.fetch("sig:k", () => "never")];
  await until(async () => signal !== undefined);
  assert.equal(signal.aborted, false);
  await n.set("sig:k", "newer"); // this cache's own write wins over the load
  assert.equal(signal.aborted, true, "aborted by this cache's set");
  release("loaded");
  assert.deepEqual(await Promise.all([loading, ...joined]), ["loaded", "loaded", "loaded"]);
  assert.equal(await plain.get("sig:k"), '"newer"');
  // Another client's write during the load.
  let s2;
  let r2;
  const l2 = n.fetch("sig:k2", (_k, ctx) => {
    s2 = ctx.signal;
    return new Promise((r) => (r2 = r));
  });
  await until(async () => s2 !== undefined);
  const seen = invalidation(n, "sig:k2");
  await plain.set("sig:k2", '"theirs"');
  await seen;
  assert.equal(s2.aborted, true, "aborted by another client's write");
  r2("mine");
  assert.equal(await l2, "mine");
  assert.equal(await plain.get("sig:k2"), '"theirs"');
  // A failing loader.
  await assert.rejects(n.fetch("sig:k3", () => Promise.reject(new Error("boom"))), /boom/);
  const after = n.stats();
  assert.equal(after.loads - before.loads, 3);
  assert.equal(after.coalesced - before.coalesced, 2);
  assert.equal(after.loadErrors - before.loadErrors, 1);
});

test("close() while the server is down settles, and the calls in flight reject", async () => {
  const n = await NearCache.connect(server.url, { ttl: 60_000 });
  n.client.on("error", () => {});
  await n.set("down:k", "v");
  await server.stop();
  await until(async () => !n.client.isReady);
  // node-redis holds these for a reconnect that close() will never make.
  const get = n.get("down:other");
  const fetch = n.fetch("down:f", () => "x");
  const settled = await Promise.race([n.close().then(() => "closed"), sleep(5_000).then(() => "pending")]);
  assert.equal(settled, "closed");
  const results = await Promise.allSettled([get, fetch]);
  for (const r of results) {
    assert.equal(r.status, "rejected");
    assert.ok(r.reason instanceof Error);
  }
  await assert.rejects(n.get("down:k"), /closed/);
  await server.start();
  await until(async () => plain.isReady, 10_000);
});

test("close() waiting on replies when the server goes away settles, and the calls reject", async () => {
  const n = await NearCache.connect(server.url, { ttl: 60_000 });
  n.client.on("error", () => {});
  // The server busy for 2 s: our GET waits behind it.
  const busy = n.client.sendCommand(["DEBUG", "SLEEP", "2"]).catch((e) => e);
  const get = n.get("gone:k").then(() => "resolved", (e) => e);
  await sleep(50);
  const closing = n.close().then(() => "closed");
  await sleep(100);
  await server.stop(); // while close() waits for the GET's reply
  const settled = await Promise.race([closing, sleep(5_000).then(() => "pending")]);
  assert.equal(settled, "closed", "node-redis's own graceful close never notices the server leaving");
  assert.ok((await get) instanceof Error, "the GET in flight rejects");
  assert.ok((await busy) instanceof Error);
  await server.start();
  await until(async () => plain.isReady, 10_000);
});

test("a value over the local maxBytes lives in Redis only: set, get and fetch succeed", async () => {
  const n = await near({ maxBytes: 10, sizeOf: (v) => JSON.stringify(v).length });
  const big = "x".repeat(50);
  await n.set("big:1", big);
  assert.equal(await plain.get("big:1"), JSON.stringify(big));
  assert.equal(n.local.has("big:1"), false);
  assert.equal(await n.get("big:1"), big, "read back from Redis");
  assert.equal(await n.fetch("big:2", () => big), big);
  assert.equal(await plain.get("big:2"), JSON.stringify(big));
  await n.set("big:3", "s");
  assert.equal(n.local.has("big:3"), true, "a value that fits is kept");
});

test("a dispose that throws on an invalidation or a FLUSHALL is thrown by the next call, not out of the push", async () => {
  const seen = [];
  const n = await near({
    dispose: (v, k, reason) => {
      seen.push(`${k}:${reason}`);
      throw new Error(`dispose ${k}`);
    },
  });
  await n.set("d:1", "one");
  await n.set("d:2", "two");
  const gone = invalidation(n, "d:1");
  await plain.set("d:1", JSON.stringify("new"));
  await gone;
  assert.equal(n.local.has("d:1"), false, "the invalidation went through");
  await assert.rejects(n.get("d:2"), /dispose d:1/, "the next call throws the held error, once done");
  assert.equal(await n.get("d:1"), "new", "no read of the old value stayed open");
  assert.equal(await n.get("d:2"), "two");
  const flushed = invalidation(n, "d:2");
  await plain.flushAll();
  await flushed;
  assert.equal(n.local.size, 0);
  await assert.rejects(n.get("d:3"), /dispose/);
  assert.equal(await n.get("d:3"), undefined);
  assert.ok(seen.includes("d:1:deleted") && seen.includes("d:2:cleared"), seen.join(" "));
});

test("at maxmemory with noeviction, reads still work (Redis refuses a MULTI there, not a GET)", async () => {
  const n = await near();
  await plain.set("oom:1", JSON.stringify({ name: "Ada" }), { expiration: { type: "PX", value: 60_000 } });
  await plain.configSet({ maxmemory: "1", "maxmemory-policy": "noeviction" });
  try {
    assert.deepEqual(await n.get("oom:1"), { name: "Ada" });
    assert.ok(n.local.ttl("oom:1") <= 60_000, "the copy still keeps to the key's deadline");
    n.local.delete("oom:1");
    assert.deepEqual(await n.fetch("oom:1", () => "from loader"), { name: "Ada" });
  } finally {
    await plain.configSet({ maxmemory: "0" });
  }
});

test("a call's own dispose error is that call's: not a concurrent call's, and not lost to another's", async () => {
  const n = await near({
    dispose: (v, k, reason) => {
      if (reason === "deleted") throw new Error(`dispose ${k}`);
    },
  });
  await n.set("own:a", 1);
  await n.set("own:b", 2);
  await n.set("own:c", 3);
  // set(a) drops a's copy (its dispose throws) and waits for Redis; a get of
  // another key answered meanwhile from its copy is not that set's caller.
  const pa = n.set("own:a", 10).then(() => "resolved", (e) => e.message);
  const pb = n.get("own:b").then((v) => v, (e) => e.message);
  assert.equal(await pb, 2);
  assert.equal(await pa, "dispose own:a");
  // Two concurrent sets, each with its own dispose error: each gets its own.
  const both = await Promise.allSettled([n.set("own:a", 11), n.set("own:c", 12)]);
  assert.deepEqual(
    both.map((r) => r.reason?.message),
    ["dispose own:a", "dispose own:c"],
  );
  assert.equal(await n.get("zz:none"), undefined, "nothing left held");
  assert.equal(await plain.get("own:a"), "11");
  assert.equal(await plain.get("own:c"), "12");
});
