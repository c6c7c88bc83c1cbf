// The per-slot idle window lives in a column of its own that stays off while
// every entry has the cache's default `idle`, and turns on (filled with the
// default) when one differs: a write with an `idle` option, a hash, persist,
// restore. These check that every entry keeps its own window across that
// switch, and that the inline JS paths (get, set's overwrite and insert,
// ttl) read and write the column once it is on.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "lapse";

const N = 600; // more than one batch of reserved slots (QUEUE_CAP 256)

function fill(c, prefix, n) {
  for (let i = 0; i < n; i++) c.set(prefix + i, i);
}

test("a write with its own idle turns the column on mid-life; every entry keeps its window", () => {
  const c = new TtlCache({ now: 0, idle: 50 });
  fill(c, "a", N);
  c.tick(30);
  for (let i = 0; i < N; i += 2) assert.equal(c.get("a" + i), i); // read at 30: due at 80
  c.set("short", 1, { idle: 10 }); // the column turns on here
  c.set("long", 2, { idle: 500 });
  assert.equal(c.ttl("short"), 10);
  assert.equal(c.ttl("long"), 500);
  assert.equal(c.ttl("a0"), 50);
  assert.equal(c.ttl("a1"), 20);
  c.tick(45);
  // The inline get reads the column: with the default it would find `short` live.
  assert.equal(c.get("short"), undefined);
  assert.equal(c.get("long"), 2);
  c.tick(55);
  assert.equal(c.get("a1"), undefined, "unread since 0: due at 50");
  assert.equal(c.get("a0"), 0, "read at 30: due at 80");
  assert.equal(c.ttl("long"), 490, "read at 45");
  // Overwrites write the column: on the engine's path (a deadline that
  // moves earlier) and inline (one that moves later), with the default
  // window or their own.
  c.set("long", 3);
  assert.equal(c.ttl("long"), 50);
  c.set("a0", 4, { idle: 20 });
  assert.equal(c.ttl("a0"), 20);
  c.set("s2", 1, { idle: 10 });
  c.set("s2", 2); // later: inline
  assert.equal(c.ttl("s2"), 50);
  c.set("a2", 5, { idle: 100 }); // later: inline
  assert.equal(c.ttl("a2"), 100);
  c.tick(76);
  assert.equal(c.get("a0"), undefined, "written at 55 with idle 20");
  assert.equal(c.get("long"), 3);
  // Inline inserts into freed slots (which held other windows) write the
  // column too.
  for (let i = 0; i < N; i++) c.set("w" + i, i, { idle: 5 });
  for (let i = 0; i < N; i++) c.delete("w" + i);
  fill(c, "b", 3 * N);
  for (let i = 0; i < 3 * N; i++) assert.equal(c.ttl("b" + i), 50, "b" + i);
  c.tick(125);
  assert.equal(c.get("b0"), 0, "written at 76");
});

test("a cache whose entries all have the default idle window reads it without a column", () => {
  const c = new TtlCache({ now: 0, ttl: 100, idle: 50 });
  fill(c, "k", N);
  c.set("k1", 1, { ttl: 30 }); // a write with options, default idle
  assert.equal(c.ttl("k1"), 30);
  c.tick(40);
  assert.equal(c.get("k0"), 0);
  assert.equal(c.get("k1"), undefined);
  c.tick(89);
  assert.equal(c.get("k0"), 0, "read at 40");
  assert.equal(c.get("k2"), undefined, "unread: due at 50");
  c.tick(100);
  assert.equal(c.get("k0"), undefined, "ttl caps the window");
});

test("a hash field with its own idle turns the column on; plain entries keep the default", () => {
  const c = new TtlCache({ now: 0, idle: 50 });
  fill(c, "p", N);
  c.hset("h", "f", 1, { idle: 10 });
  c.hset("h", "g", 2);
  assert.equal(c.httl("h", "f"), 10);
  assert.equal(c.httl("h", "g"), 50);
  assert.equal(c.ttl("p0"), 50);
  c.tick(20);
  assert.equal(c.hget("h", "f"), undefined);
  assert.equal(c.hget("h", "g"), 2);
  assert.equal(c.get("p0"), 0);
  c.tick(60);
  assert.equal(c.get("p0"), 0, "read at 20");
  assert.equal(c.get("p1"), undefined);
  assert.equal(c.hget("h", "g"), 2, "read at 20");
  c.tick(120);
  assert.equal(c.hlen("h"), 0);
});

test("a hash alone, with a finite default idle, keeps its key alive by its fields only", () => {
  const c = new TtlCache({ now: 0, idle: 50 });
  c.hset("h", "f", 1);
  c.tick(40);
  c.hset("h", "g", 2); // a write, not a read: the key's last access stays 0
  c.tick(60);
  assert.equal(c.hget("h", "f"), undefined);
  assert.equal(c.hget("h", "g"), 2, "the hash key has no idle window of its own");
  c.set("k", 1);
  assert.equal(c.ttl("k"), 50);
});

test("persist turns the column on and the inline paths see it at once", () => {
  const c = new TtlCache({ now: 0, idle: 50 });
  fill(c, "k", N);
  assert.equal(c.persist("k0"), true);
  assert.equal(c.ttl("k0"), Infinity);
  c.tick(100);
  // get reads the column: with the default window k0 looks expired.
  assert.equal(c.get("k0"), 0);
  assert.equal(c.get("k1"), undefined);
  c.hset("h", "f", 1);
  assert.equal(c.hpersist("h", "f"), true);
  c.tick(1000);
  assert.equal(c.hget("h", "f"), 1);
});

test("restore keeps each entry's window, with or without the column", () => {
  const c = new TtlCache({ now: 0, idle: 50 });
  fill(c, "k", N);
  const same = TtlCache.restore(c.snapshot());
  c.set("x", 1, { idle: 10 });
  c.set("y", 2, { idle: Infinity });
  c.tick(5);
  c.get("k1");
  const r = TtlCache.restore(c.snapshot());
  assert.equal(r.ttl("x"), 5);
  assert.equal(r.ttl("y"), Infinity);
  assert.equal(r.ttl("k0"), 45);
  assert.equal(r.ttl("k1"), 50);
  r.tick(20);
  assert.equal(r.get("x"), undefined);
  assert.equal(r.get("k0"), 0);
  r.tick(200);
  assert.equal(r.get("y"), 2);
  assert.equal(r.get("k2"), undefined);
  // Restored with every window the default: writes after it still work both ways.
  assert.equal(same.ttl("k0"), 50);
  same.set("z", 1, { idle: 7 });
  same.set("k0", 1);
  assert.equal(same.ttl("z"), 7);
  assert.equal(same.ttl("k0"), 50);
});
