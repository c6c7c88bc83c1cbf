// lapse/durable in workerd (the npm package): a Durable Object with SQLite
// storage on local disk under a temp folder, restarted mid-test.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, copyFileSync, writeFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { freePort, waitForHttp } from "../lib/net.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const out = join(here, "..", "..", "out", "durable");
const storageDir = mkdtempSync(join(tmpdir(), "lapse-durable-"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let child;
let base;
let log = "";

async function start() {
  log = "";
  const workerd = await import("workerd");
  const bin = typeof workerd.default === "string" ? workerd.default : workerd.default.default;
  child = spawn(bin, ["serve", join(out, "config.capnp"), "--experimental"], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  let dead = false;
  child.on("exit", () => (dead = true));
  try {
    await waitForHttp(`${base}/info?name=probe`, 30_000, () => dead);
  } catch (e) {
    throw new Error(`${e.message}\nworkerd output:\n${log}`);
  }
}

async function stop() {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL"); // as hard as an eviction gets: nothing is flushed on the way out
  await exited;
}

before(async () => {
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: [join(here, "worker.mjs")],
    outfile: join(out, "worker.js"),
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    external: ["*.wasm", "cloudflare:workers"],
    logLevel: "warning",
  });
  copyFileSync(require.resolve("lapse/lapse_bg.wasm"), join(out, "lapse_bg.wasm"));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  writeFileSync(
    join(out, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .w), (name = "do-disk", disk = (path = ${JSON.stringify(storageDir)}, writable = true)) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);

const w :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "lapse_bg.wasm", wasm = embed "lapse_bg.wasm"),
  ],
  compatibilityDate = "2025-09-01",
  durableObjectNamespaces = [ (className = "SharedCache", uniqueKey = "lapse-durable-test", enableSql = true) ],
  durableObjectStorage = (localDisk = "do-disk"),
  bindings = [ (name = "CACHE", durableObjectNamespace = "SharedCache") ],
);
`,
  );
  await start();
});

after(async () => {
  await stop();
  rmSync(storageDir, { recursive: true, force: true });
});

async function call(path, params) {
  const u = new URL(path, base);
  const asJson = new Set(["value", "opts", "cfg"]);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, asJson.has(k) ? JSON.stringify(v) : String(v));
  const r = await fetch(u);
  const body = await r.json();
  if (r.status === 500) throw new Error(`${path}: ${body.error}\n${log}`);
  return body;
}

test("a value written in one request is read in another, and survives a restart of workerd", async () => {
  const name = "persist";
  await call("/set", { name, cfg: { ttl: 3_600_000, idle: 600_000 }, key: "user:1", value: { name: "Ada" } });
  await call("/hset", { name, key: "session", field: "csrf", value: "t0k", opts: { ttl: 600_000 } });
  assert.deepEqual((await call("/get", { name, key: "user:1" })).value, { name: "Ada" });
  await stop();
  await start();
  const got = await call("/get", { name, key: "user:1" });
  assert.equal(got.found, true, "rebuilt from storage before the first request");
  assert.deepEqual(got.value, { name: "Ada" });
  assert.ok(got.ttl <= 600_000 && got.ttl > 590_000, `idle window carried over: ttl ${got.ttl}`);
  const h = await call("/hget", { name, key: "session", field: "csrf" });
  assert.equal(h.value, "t0k");
});

// 5 s, not 2: a restart of workerd on a loaded 2-core machine has taken over 2 s,
// and the entry must still be there when the test first looks.
test("deadlines survive a restart: a 5 s entry written before it is gone 5 s after its write", async () => {
  const name = "deadline";
  const asked = Date.now();
  await call("/set", { name, cfg: {}, key: "short", value: 1, opts: { ttl: 5_000 } });
  const written = Date.now(); // the object wrote at or before this
  await call("/set", { name, key: "long", value: 2 });
  await stop();
  await start();
  const checked = Date.now(); // the object reads at or after this
  const mid = await call("/get", { name, key: "short" });
  assert.equal(mid.found, true);
  assert.ok(mid.ttl <= 5_000 - (checked - written) + 5, `deadline kept across the restart: ttl ${mid.ttl}, ${checked - written} ms after the write`);
  await sleep(Math.max(0, asked + 5_100 - Date.now()));
  assert.equal((await call("/get", { name, key: "short" })).found, false, "gone at its deadline");
  assert.equal((await call("/get", { name, key: "long" })).found, true);
});

test("idle windows run on as if the object had never slept", async () => {
  const name = "idle";
  await call("/set", { name, cfg: { idle: 1_500 }, key: "k", value: "v" });
  await sleep(600);
  await stop();
  await start();
  await sleep(1_000); // 1.6 s since the write, no read in between
  assert.equal((await call("/get", { name, key: "k" })).found, false, "the idle window did not restart at wake");
});

test("the alarm sweeps an expired entry out of storage, and re-arms", async () => {
  const name = "alarm";
  await call("/set", { name, cfg: {}, key: "gone", value: 1, opts: { ttl: 300 } });
  await call("/set", { name, key: "kept", value: 2, opts: { ttl: 60_000 } });
  let info = await call("/info", { name });
  assert.ok(info.alarm !== null && info.alarm <= Date.now() + 300, "the alarm stands at the next deadline");
  // On Date.now() the alarm is nextExpiry() itself (it came a few ms after
  // it, converted through the cache's reading: an acceptance probe).
  assert.equal(info.alarm, info.nextExpiry);
  assert.equal((await call("/rows", { name })).count, 2);
  let rows;
  for (let i = 0; i < 60; i++) {
    await sleep(50);
    rows = await call("/rows", { name });
    if (rows.count === 1) break;
  }
  assert.deepEqual(rows.rows.map((r) => r.key), ["kept"], "the alarm removed the expired row with no request touching it");
  info = await call("/info", { name });
  assert.ok(info.alarms >= 1, "alarm() ran");
  assert.ok(info.alarm !== null && info.alarm > Date.now() + 50_000, "re-armed at the next deadline");
  assert.equal(info.alarm, info.nextExpiry);
});

test("a write at capacity writes about one row, and the evicted entry leaves storage too", async () => {
  const name = "bounded";
  await call("/set", { name, cfg: { maxEntries: 2_000 }, key: "warm", value: 0 });
  await call("/fill", { name, key: "k", n: 1_999 });
  assert.equal((await call("/rows", { name })).count, 2_000);
  const w = await call("/set", { name, key: "one-more", value: 1 });
  assert.equal(w.size, 2_000);
  assert.ok(w.writes <= 2, `the 2,001st write changed ${w.writes} rows' worth of statements (an insert and the evicted row's delete)`);
  const rows = await call("/rows", { name });
  assert.equal(rows.count, 2_000, "the evicted entry's row is gone");
  const info = await call("/info", { name });
  assert.deepEqual(new Set(rows.rows.map((r) => r.key)), new Set(info.keys), "storage holds exactly the cache's keys");
});

test("keys and fields with lone surrogates stay distinct across a restart, and delete removes their rows", async () => {
  const name = "lone";
  await call("/set", { name, cfg: {}, key: "x", value: 1 });
  const before = await call("/lone", { name, write: 1 });
  assert.deepEqual([before.hi, before.lo, before.rep, before.hlen, before.f1], ["hi", "lo", "replacement", 2, 1]);
  await stop();
  await start();
  const after = await call("/lone", { name });
  assert.deepEqual([after.hi, after.lo, after.rep, after.hlen, after.f1], ["hi", "lo", "replacement", 2, 1], "each name came back as it was");
  assert.equal(after.size, before.size);
  const del = await call("/lone", { name, delete: 1 });
  assert.equal(del.hi, null);
  assert.equal(del.rows, after.rows - 1, "its row left storage");
  await stop();
  await start();
  assert.equal((await call("/lone", { name })).hi, null, "and it stays deleted");
});

test("a value the codec cannot encode throws TypeError naming value and changes nothing; options are read once", async () => {
  const name = "bad";
  await call("/set", { name, cfg: {}, key: "k", value: "old" });
  const r = await call("/bad", { name, key: "k" });
  assert.equal(r.error?.name, "TypeError");
  assert.match(r.error.message, /^value: /);
  assert.equal(r.value, "old", "the cache kept the old value");
  assert.ok(r.ttl <= 60_000, `ttl ${r.ttl}: the getter's first value`);
  await stop();
  await start();
  assert.equal((await call("/get", { name, key: "k" })).value, "old");
  const g = await call("/get", { name, key: "k:getter" });
  assert.ok(g.ttl <= 60_000, `storage kept the same deadline as the cache: ttl ${g.ttl}`);
});

// A probe: a 9M-character key threw SQLITE_TOOBIG from storage after the
// cache had taken the entry, which then vanished at the next wake.
test("a key or field longer than a row holds beside a value throws RangeError and changes nothing", async () => {
  const name = "longkey";
  const over = await call("/longkey", { name, cfg: {}, n: 64 * 1024 + 1 });
  assert.equal(over.errors.length, 2);
  assert.match(over.errors[0], /^RangeError: key: longer than 65536/);
  assert.match(over.errors[1], /^RangeError: field: longer than 65536/);
  assert.deepEqual([over.size, over.rows, over.long], [0, 0, false]);
  const at = await call("/longkey", { name, n: 64 * 1024 });
  assert.deepEqual(at.errors, [null, null]);
  assert.deepEqual([at.size, at.rows], [2, 2]);
  await stop();
  await start();
  const woke = await call("/longkey", { name, n: 64 * 1024 });
  assert.equal(woke.long, true, "the longest key survived a restart");
});

// DurableCache had no fetch/hfetch (a conformance probe: "RPC methods use
// the TtlCache API"); a load's result is stored by TtlCache itself, and
// must reach storage as a set does.
test("fetch and hfetch: one load for concurrent fetches, results and refreshes persisted across a restart", async () => {
  const name = "fetch";
  const r = await call("/fetch", { name, cfg: { ttl: 60_000 } });
  assert.deepEqual(r.got, ["loaded", "loaded", "loaded"]);
  assert.equal(r.field, 3);
  assert.equal(r.hit, "loaded");
  assert.equal(r.stale, "loaded", "refresh-ahead answers with the old value");
  assert.equal(r.now, "refreshed", "and stores the new one");
  assert.equal(r.calls, 3, "one load for three fetches, one hfetch, one refresh");
  assert.equal(r.rows, 2);
  assert.match(r.bad, /^TypeError: value: /);
  assert.equal(r.g, false);
  await stop();
  await start();
  const g = await call("/get", { name, key: "f" });
  assert.equal(g.value, "refreshed");
  assert.ok(g.ttl > 50_000 && g.ttl <= 60_000, `ttl ${g.ttl}`);
  const h = await call("/hget", { name, key: "fh", field: "x" });
  assert.ok(h.found, "the hfetch's Date survived");
});

// A probe of the walk's purge: DurableCache's keys(), values(), entries()
// and iterator were not guarded, so a dispose error from that purge was
// swallowed (forEach rethrew it); and the default codec's JSON check walked
// every path around a cycle with two ways back (a hang), and took values
// past 1000 levels as JSON (a Date came back a string).
test("a walk rethrows a dispose error after its rows are gone; cycles and over-deep values are refused at once", async () => {
  const name = "walk";
  await call("/walk", { name, cfg: { throwingDispose: true, noAlarm: true }, write: 1 });
  await sleep(20);
  const r = await call("/walk", { name });
  assert.match(r.out.keys, /dispose threw \(expired w/);
  assert.deepEqual([r.out.values, r.out.entries, r.out.iterator], [1, 1, 1]);
  assert.equal(r.rows, 1, "the expired rows left storage");
  const t0 = Date.now();
  const cyc = await call("/cycles", { name });
  assert.ok(Date.now() - t0 < 5_000);
  assert.match(cyc.errors[0], /^TypeError: value: .*cycle/);
  assert.match(cyc.errors[1], /^TypeError: value: /);
  assert.equal(cyc.has, false);
});

test("a dispose that throws reaches the caller after storage matches the cache", async () => {
  const name = "throwing";
  await call("/set", { name, cfg: { throwingDispose: true, maxEntries: 2 }, key: "a", value: 1 });
  await assert.rejects(call("/set", { name, key: "a", value: 2 }), /dispose threw \(replaced a\)/);
  await call("/set", { name, key: "b", value: 3 });
  await assert.rejects(call("/set", { name, key: "c", value: 4 }), /dispose threw \(evicted/);
  const keys = (await call("/info", { name })).keys.sort();
  await stop();
  await start();
  const info = await call("/info", { name });
  assert.deepEqual(info.keys.sort(), keys, "storage held what the cache held");
  if (keys.includes("a")) assert.equal((await call("/get", { name, key: "a" })).value, 2, "the replacing value was persisted");
});

test("reads in the object's constructor do not see entries that expired while it slept", async () => {
  const name = "ctor";
  await call("/set", { name, cfg: {}, key: "short", value: 1, opts: { ttl: 1_000 } });
  await call("/set", { name, key: "long", value: 2 });
  await stop();
  await sleep(1_200);
  await start();
  const info = await call("/info", { name });
  assert.deepEqual(info.ctorKeys, ["long"], "the constructor's read ran on the host's clock");
  assert.ok(!info.keys.includes("short"));
});

test("sweepBudget 0: the alarm purges what is due instead of firing again at once", async () => {
  const name = "nobudget";
  await call("/set", { name, cfg: { sweepBudget: 0 }, key: "k", value: 1, opts: { ttl: 300 } });
  await sleep(1_500);
  const info = await call("/info", { name });
  assert.ok(info.alarms <= 3, `${info.alarms} alarms in 1.5 s (it spun at about 300 a second)`);
  const rows = await call("/rows", { name });
  assert.equal(rows.count, 0, "the expired row left storage");
});

test("no cliff at a row's size limit: a 9 MB value and a 1.5 MB field survive a restart, in chunks", async () => {
  const name = "big";
  const n = 9_000_000; // over workerd's SQLite limit (about 8.4 M characters a row) and Cloudflare's 2 MB
  const w = await call("/big", { name, cfg: {}, key: "k", n, field: "f", fn: 1_500_000 });
  assert.equal(w.length, n + 4);
  assert.ok(w.chunks >= 18 + 3, `${w.chunks} chunk rows`);
  await stop();
  await start();
  const r = await call("/big", { name, key: "k" });
  assert.equal(r.length, n + 4, "the whole value came back");
  assert.equal(r.intact, true, "surrogate pairs across chunk bounds intact");
  assert.equal(r.field, 1_500_000);
  // A small value in its place takes its chunks with it; so does a delete.
  await call("/set", { name, key: "k", value: "small" });
  assert.equal((await call("/big", { name, key: "k" })).chunks, 3, "only the field's chunks left");
  await call("/hset", { name, key: "k:h", field: "f", value: "tiny" });
  assert.equal((await call("/big", { name, key: "k" })).chunks, 0);
  await stop();
  await start();
  const s = await call("/big", { name, key: "k" });
  assert.equal(s.value, "small");
  assert.equal(s.field, 4);
});

test("a write storage refuses part-way is taken back whole: its value is not read, and the old one wakes whole if it stays", async () => {
  const name = "torn";
  const n = 3_000_000;
  const w = await call("/big", { name, cfg: {}, key: "k", n });
  assert.equal(w.length, n + 4);
  assert.ok(w.chunks >= 6, `${w.chunks} chunk rows`);
  // An overwrite in chunks: its old chunks are deleted (write 1), then its
  // new ones go in; the second of them (write 3) fails, as a full database does.
  // The value storage refused is not read either: the key leaves the cache
  // and storage (a cache may miss; it must not serve a write that failed).
  await assert.rejects(call("/big", { name, key: "k", n: n - 1000, failAt: 3 }), /SQLITE_FULL/);
  const mid = await call("/big", { name, key: "k" });
  assert.equal(mid.length, null, "the refused value is not read");
  assert.equal(mid.chunks, 0, "no chunk of either value left");
  await stop();
  await start();
  assert.equal((await call("/big", { name, key: "k" })).length, null, "it stays gone after a restart");
  // Had the key's removal failed too, the old value would wake whole: the
  // overwrite's statements were taken back together.
  const v = await call("/big", { name: "torn2", cfg: {}, key: "k", n });
  await assert.rejects(call("/big", { name: "torn2", key: "k", n: n - 1000, failAt: 3, failFrom: 1 }), /SQLITE_FULL/);
  assert.equal((await call("/big", { name: "torn2", key: "k" })).chunks, v.chunks, "the old value's chunks, and only them");
  await stop();
  await start();
  const r = await call("/big", { name: "torn2", key: "k" });
  assert.equal(r.length, n + 4, "the old value wakes whole");
  assert.equal(r.intact, true);
  // A hash field storage refused leaves its hash; the hash's other fields stay.
  await call("/hset", { name: "torn2", key: "h", field: "a", value: 1 });
  await assert.rejects(call("/hset", { name: "torn2", key: "h", field: "b", value: 2, failAt: 1 }), /SQLITE_FULL/);
  assert.deepEqual((await call("/hget", { name: "torn2", key: "h", field: "b" })).found, false);
  assert.deepEqual((await call("/hget", { name: "torn2", key: "h", field: "a" })).value, 1);
});

test("a dead hash's deadline row goes with it: a new hash or value under its key survives a restart", async () => {
  // noAlarm: nothing sweeps, so the writes find the hashes dead, unswept.
  const name = "hashkey";
  await call("/hset", { name, cfg: { noAlarm: true }, key: "h", field: "f1", value: 1 });
  await call("/hset", { name, key: "p", field: "f1", value: 1 });
  assert.equal((await call("/expire", { name, key: "h", ms: 100 })).ok, true);
  assert.equal((await call("/expire", { name, key: "p", ms: 100 })).ok, true);
  await sleep(300);
  assert.equal((await call("/hset", { name, key: "h", field: "f2", value: "new" })).created, true);
  await call("/set", { name, key: "p", value: "plain", opts: { ttl: 3_600_000 } });
  await stop();
  await start();
  const h = await call("/hget", { name, key: "h", field: "f2" });
  assert.deepEqual([h.found, h.value, h.httl], [true, "new", null], "the new hash, with no deadline of its own");
  const p = await call("/get", { name, key: "p" });
  assert.equal(p.value, "plain", "the plain value that replaced the dead hash");
  assert.ok(p.ttl > 3_500_000, `its own deadline: ttl ${p.ttl}`);
});

// Values JSON would give back changed were stored and came back different
// after a wake (a probe), then refused (TypeError), while TtlCache takes
// them (a conformance probe): they now go in as snapshot bytes.
test("the default codec keeps every value a snapshot carries across a restart and refuses the rest; a clock off the wall clock arms the alarm in wall time; inherited options count", async () => {
  const name = "codec";
  const r = await call("/values", { name, cfg: { clockOffset: -60_000 } });
  for (const k of ["holes", "klass", "set"]) assert.match(r.errors[k] ?? "stored", /^TypeError: value: /, `${k}: ${r.errors[k]}`);
  const stored = ["nan", "inf", "negzero", "date", "map", "bytes", "undef", "big", "nullproto", "bigbytes", "plain"];
  for (const k of stored) assert.equal(r.errors[k] ?? null, null, `${k}: ${r.errors[k]}`);
  assert.deepEqual(r.keys.sort(), stored.map((k) => `v:${k}`).sort(), "the refused ones changed nothing");
  assert.deepEqual(r.checks, Object.fromEntries(stored.map((k) => [k, true])), "read back in the same life");
  // The cache's clock is 60 s behind: its entry due in 30 s of its time is
  // due in 30 s of wall time, not at once.
  const before = Date.now();
  await call("/set", { name, key: "soon", value: 1, opts: { ttl: 30_000 } });
  await sleep(1_000);
  const info = await call("/info", { name });
  assert.ok(info.alarms <= 1, `${info.alarms} alarms in 1 s (one at its reading, 60 s behind, fired at once, again and again)`);
  // (nextExpiry() may be early by its wheel bucket: 4 s at this distance.)
  assert.ok(info.alarm >= before + 25_000 && info.alarm <= Date.now() + 31_000, `alarm at +${info.alarm - before} ms`);
  const p = await call("/proto", { name, key: "inherited", ttl: 5_000 });
  assert.ok(p.ttl <= 5_000, `ttl ${p.ttl} from an inherited option`);
  await stop();
  await start();
  const g = await call("/get", { name, key: "inherited" });
  assert.ok(g.found && g.ttl <= 5_000, `storage kept the inherited ttl: ${g.ttl}`);
  const woke = await call("/values", { name, check: 1 });
  assert.deepEqual(woke.checks, Object.fromEntries(stored.map((k) => [k, true])), "read back after a restart");
  assert.equal(woke.rows.plain, "string", "JSON where JSON keeps it");
  assert.equal(woke.rows.date, "blob");
});

test("snapshot() is TtlCache's, and the expired entries it passes leave storage", async () => {
  const r = await call("/snapshot", { name: "snap", cfg: { ttl: 3_600_000 } });
  assert.deepEqual(r.keys, ["snap:live"]);
  assert.deepEqual(r.value, { v: 1 });
  assert.deepEqual(r.rows, ["snap:live"]);
});

test("a key read since its write keeps its eviction credit across a restart", async () => {
  // maxEntries 3: a, b, c written, a read. After a wake, d evicts b (never
  // read since written), not a (its read was forgotten: a went first).
  const name = "credit";
  for (const k of ["a", "b", "c"]) await call("/set", { name, cfg: { maxEntries: 3 }, key: k, value: k });
  assert.equal((await call("/get", { name, key: "a" })).found, true);
  await stop();
  await start();
  await call("/set", { name, key: "d", value: "d" });
  assert.deepEqual((await call("/info", { name })).keys.sort(), ["a", "c", "d"]);
  // A write clears the mark: a rewritten (not read since), c read, then a
  // wake: e must keep c.
  await call("/set", { name, key: "a", value: "a2" });
  assert.equal((await call("/get", { name, key: "c" })).found, true);
  await stop();
  await start();
  await call("/set", { name, key: "e", value: "e" });
  assert.ok((await call("/info", { name })).keys.includes("c"), "c, read since written, kept");
});

test("storage written before the read column wakes: the column is added, rows kept", async () => {
  const name = "legacy";
  const first = await call("/get", { name, cfg: { legacyRow: true }, key: "old" });
  assert.deepEqual([first.found, first.value], [true, "kept"]);
  await stop();
  await start();
  assert.equal((await call("/get", { name, key: "old" })).value, "kept");
  const rows = await call("/rows", { name });
  assert.equal(rows.count, 1);
});

