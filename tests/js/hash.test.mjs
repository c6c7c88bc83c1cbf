// Hashes whose fields expire on their own (the Redis 7.4 HEXPIRE family,
// plus idle windows), against the packed package.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

const MIN = 60_000;

test("hset/hget/hhas/hdel/hlen/hgetall basics; hset says whether the field is new", () => {
  const c = new TtlCache({ now: 0 });
  assert.equal(c.hset("h", "a", 1), true);
  assert.equal(c.hset("h", "a", 2), false);
  assert.equal(c.hset("h", "b", 3), true);
  assert.equal(c.hget("h", "a"), 2);
  assert.equal(c.hhas("h", "b"), true);
  assert.equal(c.hhas("h", "zz"), false);
  assert.equal(c.hlen("h"), 2);
  assert.deepEqual(c.hgetall("h"), new Map([["a", 2], ["b", 3]]));
  assert.equal(c.hdel("h", "a"), true);
  assert.equal(c.hdel("h", "a"), false);
  assert.equal(c.hlen("missing"), 0);
  assert.deepEqual(c.hgetall("missing"), new Map());
  assert.equal(c.hget("missing", "a"), undefined);
  assert.equal(c.size, 1);
});

test("every field has its own ttl/idle/deadline; constructor defaults apply to fields", () => {
  const c = new TtlCache({ now: 0, ttl: 100 });
  c.hset("h", "dflt", 1);
  c.hset("h", "short", 2, { ttl: 10 });
  c.hset("h", "idle", 3, { idle: 20 });
  c.hset("h", "at", 4, { expireAt: 50 });
  c.hset("h", "forever", 5, { ttl: Infinity });
  assert.equal(c.httl("h", "dflt"), 100);
  assert.equal(c.httl("h", "short"), 10);
  assert.equal(c.httl("h", "idle"), 20);
  assert.equal(c.httl("h", "at"), 50);
  assert.equal(c.httl("h", "forever"), Infinity);
  c.tick(10);
  assert.equal(c.hhas("h", "short"), false);
  c.tick(19);
  assert.equal(c.hget("h", "idle"), 3, "read restarts the field's idle window");
  c.tick(30);
  assert.equal(c.hhas("h", "idle"), true);
  c.tick(39);
  assert.equal(c.hhas("h", "idle"), false);
  c.tick(50);
  assert.deepEqual([...c.hgetall("h").keys()].sort(), ["dflt", "forever"]);
  c.tick(100);
  assert.deepEqual([...c.hgetall("h").keys()], ["forever"]);
});

test("hexpire / hexpireAt with NX/XX/GT/LT, hpersist and httl", () => {
  const c = new TtlCache({ now: 0 });
  c.hset("h", "f", 1);
  assert.equal(c.hexpire("h", "f", 100, "XX"), false);
  assert.equal(c.hexpire("h", "f", 100, "NX"), true);
  assert.equal(c.hexpire("h", "f", 50, "GT"), false);
  assert.equal(c.hexpire("h", "f", 150, "GT"), true);
  assert.equal(c.hexpire("h", "f", 120, "LT"), true);
  assert.equal(c.httl("h", "f"), 120);
  assert.equal(c.hexpireAt("h", "f", new Date(80)), true);
  assert.equal(c.httl("h", "f"), 80);
  assert.equal(c.hpersist("h", "f"), true);
  assert.equal(c.hpersist("h", "f"), false);
  assert.equal(c.httl("h", "f"), Infinity);
  assert.equal(c.httl("h", "nope"), undefined);
  assert.equal(c.hexpire("h", "nope", 10), false);
  assert.equal(c.hexpire("nokey", "f", 10), false);
  assert.equal(c.hexpire("h", "f", 0), true, "ms <= 0 deletes the field");
  assert.equal(c.has("h"), false, "and it was the last one");
});

test("hget restarts the field's idle window, not its siblings'", () => {
  const c = new TtlCache({ now: 0, idle: 10 });
  c.hset("h", "read", 1);
  c.hset("h", "unread", 2);
  c.tick(8);
  c.hget("h", "read");
  c.tick(10);
  assert.equal(c.hhas("h", "read"), true);
  assert.equal(c.hhas("h", "unread"), false);
  assert.equal(c.hlen("h"), 1);
});

test("the key's own deadline: when it expires every field goes with it", () => {
  const log = [];
  const c = new TtlCache({ now: 0, dispose: (v, k, r, f) => log.push([k, f, v, r]) });
  c.hset("h", "a", 1);
  c.hset("h", "b", 2, { ttl: 1000 });
  assert.equal(c.ttl("h"), Infinity, "a hash key has no clock of its own until given one");
  assert.equal(c.expire("h", 30), true);
  assert.equal(c.ttl("h"), 30);
  assert.equal(c.httl("h", "a"), 30, "a field cannot outlive its key");
  assert.equal(c.httl("h", "b"), 30);
  c.tick(30);
  assert.equal(c.has("h"), false);
  assert.equal(c.size, 0);
  assert.deepEqual(log.map(([k, f, , r]) => [k, f, r]).sort(), [["h", "a", "expired"], ["h", "b", "expired"]]);
  c.hset("h", "x", 1);
  assert.equal(c.persist("h"), false);
  assert.equal(c.expire("h", 10, "NX"), true);
  assert.equal(c.persist("h"), true);
  c.tick(1000);
  assert.equal(c.hget("h", "x"), 1);
});

test("when the last field expires or is deleted the key disappears: has() false, size drops", () => {
  const c = new TtlCache({ now: 0, sweepBudget: 0 });
  c.hset("h", "a", 1, { ttl: 10 });
  c.hset("h", "b", 2, { ttl: 20 });
  c.set("plain", 0);
  c.tick(20);
  assert.equal(c.has("h"), false, "gone before any sweep");
  assert.deepEqual([...c.keys()], ["plain"]);
  assert.equal(c.purge(), 2);
  assert.equal(c.size, 1);
  c.hset("g", "a", 1);
  c.hdel("g", "a");
  assert.equal(c.has("g"), false);
  assert.equal(c.size, 1);
});

test("expired fields are swept by the same tick, inside the same sweepBudget; dispose gets the field", () => {
  const log = [];
  const c = new TtlCache({ now: 0, sweepBudget: 100, dispose: (v, k, r, f) => log.push([k, f, r]) });
  for (let i = 0; i < 250; i++) c.hset("h", `f${i}`, i, { ttl: 10 });
  for (let i = 0; i < 50; i++) c.set(`p${i}`, i, { ttl: 10 });
  assert.equal(c.tick(10), 100);
  assert.equal(c.tick(10), 100);
  assert.equal(c.tick(10), 100);
  assert.equal(c.tick(10), 0);
  assert.equal(c.size, 0);
  const fields = log.filter((e) => e[1] !== undefined);
  assert.equal(fields.length, 250);
  assert.ok(fields.every(([k, , r]) => k === "h" && r === "expired"));
});

test("a hash key expiring with more fields than the budget is finished over several ticks", () => {
  const c = new TtlCache({ now: 0, sweepBudget: 1000 });
  for (let i = 0; i < 2500; i++) c.hset("big", `f${i}`, i);
  c.expire("big", 5);
  assert.equal(c.tick(5), 1000);
  assert.equal(c.hlen("big"), 0, "all of it is gone for reads at once");
  assert.equal(c.has("big"), false);
  assert.equal(c.tick(6), 1000);
  assert.equal(c.tick(7), 500);
  assert.equal(c.stats().entries, 0);
});

test("sweeping 100k expired fields of one hash costs time proportional to 100k", () => {
  const c = new TtlCache({ now: 0, sweepBudget: 1000 });
  const N = 100_000;
  for (let i = 0; i < N; i++) c.hset("h", `f${i}`, i, { ttl: 1 + (i % 1000) });
  let removed = 0;
  let ticks = 0;
  for (let t = 1; removed < N; t++) {
    removed += c.tick(t);
    ticks++;
    assert.ok(ticks < 5000, "sweep makes progress");
  }
  assert.equal(removed, N);
  // The work counters show no per-tick rescan of the hash: every field left
  // the wheel once, plus at most a few cascades each.
  const s = c.stats();
  assert.equal(s.swept, N);
  assert.ok(s.cascaded + s.rescheduled <= 4 * N, `cascaded ${s.cascaded} rescheduled ${s.rescheduled}`);
});

test("WRONGTYPE: hash methods on a plain key and plain methods on a hash key throw TypeError and change nothing", () => {
  const c = new TtlCache({ now: 0 });
  c.set("plain", 1);
  c.hset("hash", "f", 1);
  for (const call of [
    () => c.hset("plain", "f", 2),
    () => c.hget("plain", "f"),
    () => c.hhas("plain", "f"),
    () => c.hdel("plain", "f"),
    () => c.hlen("plain"),
    () => c.hgetall("plain"),
    () => c.hexpire("plain", "f", 10),
    () => c.hexpireAt("plain", "f", 10),
    () => c.hpersist("plain", "f"),
    () => c.httl("plain", "f"),
    () => c.set("hash", 2),
    () => c.get("hash"),
    () => c.peek("hash"),
  ]) {
    assert.throws(call, (e) => e instanceof TypeError && /WRONGTYPE/.test(e.message));
  }
  assert.equal(c.get("plain"), 1);
  assert.equal(c.hget("hash", "f"), 1);
  assert.equal(c.size, 2);
  // Key-level commands work on both kinds.
  assert.equal(c.has("hash"), true);
  assert.equal(c.touch("hash"), true);
  assert.equal(c.ttl("hash"), Infinity);
  assert.equal(c.delete("hash"), true);
  assert.equal(c.has("hash"), false);
  c.hset("hash", "f", 2);
  assert.equal(c.hget("hash", "f"), 2, "after delete the key can be a hash again");
  c.delete("plain");
  c.hset("plain", "f", 3);
  assert.equal(c.hget("plain", "f"), 3, "and a former plain key can become a hash");
});

test("a dead key of the other type is simply replaced", () => {
  const c = new TtlCache({ now: 0, sweepBudget: 0 });
  c.set("k", 1, { ttl: 5 });
  c.hset("h", "f", 1, { ttl: 5 });
  c.tick(5);
  assert.equal(c.hset("k", "f", 2), true);
  c.set("h", 3);
  assert.equal(c.hget("k", "f"), 2);
  assert.equal(c.get("h"), 3);
});

test("fields are exact strings: '', __proto__, constructor and lone surrogates are distinct; no prototype pollution", () => {
  const c = new TtlCache({ now: 0 });
  const fields = ["", "__proto__", "constructor", "hasOwnProperty", "\uD800", "\uDFFF", "\uD800\uDFFF", "a"];
  fields.forEach((f, i) => c.hset("h", f, i));
  assert.equal(c.hlen("h"), fields.length);
  fields.forEach((f, i) => assert.equal(c.hget("h", f), i, JSON.stringify(f)));
  const all = c.hgetall("h");
  assert.ok(all instanceof Map);
  assert.deepEqual([...all.keys()].sort(), [...fields].sort());
  assert.equal({}.constructor, Object);
  assert.equal(Object.prototype.__proto__, null);
  c.hset("__proto__", "polluted", true);
  assert.equal({}.polluted, undefined);
});

test("capacity counts fields; eviction takes whole keys, never the hash being written", () => {
  const log = [];
  const c = new TtlCache({ now: 0, maxEntries: 10, dispose: (v, k, r, f) => log.push([k, f, r]) });
  for (let i = 0; i < 4; i++) c.set(`p${i}`, i);
  for (let i = 0; i < 6; i++) c.hset("h", `f${i}`, i);
  assert.equal(c.stats().entries, 10);
  c.hset("h", "f6", 6);
  assert.equal(c.stats().entries, 10);
  assert.equal(c.hlen("h"), 7, "the hash being written keeps all its fields");
  assert.ok(log.every(([k, , r]) => k.startsWith("p") && r === "evicted"));
  // A hash that alone would exceed maxEntries cannot grow further.
  for (let i = 7; i < 10; i++) c.hset("h", `f${i}`, i);
  assert.throws(() => c.hset("h", "f10", 10), RangeError);
  assert.equal(c.hlen("h"), 10);
  // Evicting a hash evicts all of its fields.
  c.hget("h", "f0");
  c.set("q", 1);
  assert.equal(c.has("h"), false);
  assert.equal(log.filter(([k]) => k === "h").length, 10);
  assert.ok(log.filter(([k]) => k === "h").every(([, f, r]) => f !== undefined && r === "evicted"));
});

test("Redis-style session: per-field TTLs on a session hash, fields read at different rates", () => {
  const log = [];
  const c = new TtlCache({ now: 0, dispose: (v, k, r, f) => log.push(`${k}.${f}:${r}`) });
  const s = "session:42";
  c.hset(s, "csrf", "tok", { ttl: 15 * MIN });
  c.hset(s, "cart", ["sku-1"], { idle: 30 * MIN, ttl: 24 * 60 * MIN });
  c.hset(s, "flash", "saved!", { idle: 1 * MIN });
  c.hset(s, "user", "alice");
  c.expire(s, 8 * 60 * MIN); // the session itself lasts 8 hours at most
  for (let m = 1; m <= 20; m++) {
    c.tick(m * MIN);
    if (m % 5 === 0) assert.deepEqual(c.hget(s, "cart"), ["sku-1"]); // read every 5 minutes
    c.hget(s, "user"); // read every minute
  }
  assert.equal(c.hget(s, "flash"), undefined, "never read: gone after a minute");
  assert.equal(c.hget(s, "csrf"), undefined, "15 minutes, reads or not");
  assert.deepEqual([...c.hgetall(s).keys()].sort(), ["cart", "user"]);
  c.tick(20 * MIN + 30 * MIN);
  assert.deepEqual([...c.hgetall(s).keys()], ["user"], "cart idle for 30 minutes");
  c.tick(8 * 60 * MIN);
  assert.equal(c.has(s), false, "the session's own deadline takes every field");
  assert.deepEqual(log.sort(), [`${s}.cart:expired`, `${s}.csrf:expired`, `${s}.flash:expired`, `${s}.user:expired`]);
  assert.equal(c.stats().entries, 0);
});

test("iteration yields a hash key with a Map of its live fields", () => {
  const c = new TtlCache({ now: 0 });
  c.hset("h", "a", 1);
  c.hset("h", "b", 2, { ttl: 5 });
  c.set("p", 3);
  c.tick(5);
  assert.deepEqual([...c.entries()], [["h", new Map([["a", 1]])], ["p", 3]]);
});

test("a hash whose fields' sizes would total over 2^32 - 1 bytes: RangeError, nothing changed", () => {
  const c = new TtlCache({ maxBytes: 1e10, sizeOf: (v) => v });
  c.hset("h", "a", 3e9);
  assert.throws(() => c.hset("h", "b", 3e9), (e) => e instanceof RangeError && /^sizeOf: /.test(e.message));
  assert.equal(c.hlen("h"), 1);
  assert.equal(c.stats().bytes, 3e9);
  c.hset("h", "b", 1e9);
  assert.throws(() => c.hset("h", "b", 1.3e9), RangeError, "an overwrite that grows past it");
  assert.equal(c.hget("h", "b"), 1e9);
  c.hset("h", "b", 2 ** 32 - 1 - 3e9);
  assert.equal(c.stats().bytes, 2 ** 32 - 1);
  c.delete("h");
  assert.equal(c.stats().bytes, 0, "the hash's size came back whole");
});

test("a hash removed whole disposes its fields in the order they were written, as hgetall lists them", () => {
  const seen = [];
  const c = new TtlCache({ now: 0, dispose: (v, k, reason, f) => seen.push(`${f}:${reason}`) });
  const fill = (ttl) => {
    for (const f of ["f1", "f2", "f3", "f4"]) c.hset("h", f, f, { ttl });
    c.hset("h", "f2", "again", { ttl }); // a rewrite keeps its place, as in a Map
    seen.length = 0;
  };
  fill(100);
  assert.deepEqual([...c.hgetall("h").keys()], ["f1", "f2", "f3", "f4"]);
  c.delete("h");
  assert.deepEqual(seen, ["f1:deleted", "f2:deleted", "f3:deleted", "f4:deleted"]);
  fill(100);
  c.clear();
  assert.deepEqual(seen, ["f1:cleared", "f2:cleared", "f3:cleared", "f4:cleared"]);
  // (Fields a sweep removes one by one, each at its own deadline, leave in
  // the expiry wheel's order: no order is promised there.)
  fill(100);
  c.expire("h", 50); // the key's own deadline, found by a read
  c.tick(60);
  assert.deepEqual(seen, ["f1:expired", "f2:expired", "f3:expired", "f4:expired"], "the key's deadline");
  // Expired fields no sweep reached, found by a read.
  const d = new TtlCache({ now: 0, sweepBudget: 0, dispose: (v, k, reason, f) => seen.push(`${f}:${reason}`) });
  for (const f of ["f1", "f2", "f3"]) d.hset("h", f, f, { ttl: 100 });
  d.hset("h", "live", 0);
  seen.length = 0;
  d.tick(200);
  assert.deepEqual([...d.hgetall("h").keys()], ["live"]);
  assert.deepEqual(seen, ["f1:expired", "f2:expired", "f3:expired"], "found by hgetall");
});
