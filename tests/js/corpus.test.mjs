// The two hosts agree: replays tests/data/corpus.jsonl, the corpus the native
// crate records and replays too (tests/corpus.rs, which documents the format;
// tests/data/corpus.md lists where the two APIs differ in shape and how each
// replayer maps it). Every operation's result or error class, every dispose
// call (key, field, reason, value, in order) and every snapshot's bytes must be
// what the native host observed: the JS snapshot writer and the Rust encoder
// are checked byte for byte on the same state.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { TtlCache } from "lapse";

const text = readFileSync(new URL("../data/corpus.jsonl", import.meta.url), "utf8");
const lines = text.split("\n").filter((l) => l !== "");

// ---- tagged JSON <-> JS values (the tags: tests/corpus.rs) ------------------

function tag(name, members) {
  return { $: name, ...members };
}

function num(x) {
  if (Number.isNaN(x)) return tag("NaN");
  if (x === Infinity) return tag("Infinity");
  if (x === -Infinity) return tag("-Infinity");
  return x;
}

function unnum(j) {
  if (typeof j === "number") return j;
  switch (j.$) {
    case "NaN":
      return NaN;
    case "Infinity":
      return Infinity;
    case "-Infinity":
      return -Infinity;
  }
  throw new Error(`not a number: ${JSON.stringify(j)}`);
}

function hexOf(bytes) {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

function dec(j) {
  if (j === null || typeof j !== "object") return j;
  if (Array.isArray(j)) return j.map(dec);
  switch (j.$) {
    case undefined: {
      const o = {};
      for (const k of Object.keys(j)) o[k] = dec(j[k]);
      return o;
    }
    case "NaN":
    case "Infinity":
    case "-Infinity":
      return unnum(j);
    case "undefined":
      return undefined;
    case "nullproto":
      return Object.assign(Object.create(null), dec(j.v));
    case "bytes":
      return new Uint8Array(j.v);
    case "date":
      return new Date(unnum(j.v));
    case "map":
      return new Map(j.v.map(([k, v]) => [dec(k), dec(v)]));
    case "bigint": {
      const m = j.hex === "" ? 0n : BigInt(`0x${j.hex}`);
      return j.neg ? -m : m;
    }
  }
  throw new Error(`unknown tag ${j.$}`);
}

function enc(v) {
  switch (typeof v) {
    case "undefined":
      return tag("undefined");
    case "number":
      return num(v);
    case "string":
    case "boolean":
      return v;
    case "bigint": {
      const neg = v < 0n;
      let h = (neg ? -v : v).toString(16);
      if (h === "0") h = "";
      else if (h.length % 2 === 1) h = `0${h}`;
      return tag("bigint", { neg, hex: h });
    }
  }
  if (v === null) return null;
  if (Array.isArray(v)) return Array.from(v, enc);
  if (v instanceof Uint8Array) return tag("bytes", { v: Array.from(v) });
  if (v instanceof Date) return tag("date", { v: num(v.getTime()) });
  if (v instanceof Map) return tag("map", { v: Array.from(v, ([k, x]) => [enc(k), enc(x)]) });
  const o = {};
  for (const k of Object.keys(v)) o[k] = enc(v[k]);
  return Object.getPrototypeOf(v) === null ? tag("nullproto", { v: o }) : o;
}

function errorClass(e) {
  if (e instanceof TypeError) return e.message.startsWith("WRONGTYPE") ? "wrongtype" : "type";
  if (e instanceof RangeError) return "range";
  throw e;
}

function writeOpts(w) {
  if (w === undefined) return undefined;
  const o = {};
  for (const k of ["ttl", "idle", "expireAt"]) if (k in w) o[k] = unnum(w[k]);
  if (w.keepTtl) o.keepTtl = true;
  return o;
}

// Not the wheel's gauges (scheduled, rescheduled, cascaded): see corpus.md.
const STATS = ["hits", "misses", "expired", "evicted", "deleted", "inserted", "updated", "ticks", "swept",
  "size", "entries", "bytes", "smallQueue"];

const byUnits = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

// ---- the JS replayer --------------------------------------------------------

class Host {
  constructor(op) {
    this.gone = [];
    this.size = undefined;
    const o = {};
    for (const [k, v] of Object.entries(op.o)) o[k] = unnum(v);
    this.sized = "maxBytes" in o;
    this.hooks = {
      dispose: (value, key, reason, field) => this.gone.push([key, field === undefined ? null : field, reason, enc(value)]),
    };
    // Sizes are the corpus's (`n`), given only when the cache has maxBytes;
    // sizeOf would otherwise make this host record sizes the other does not.
    if (this.sized) this.hooks.sizeOf = () => this.size;
    this.c = new TtlCache({ now: unnum(op.now), ...o, ...this.hooks });
    this.snap = null;
  }

  /** Runs one operation; returns its observation members (r / err, rm). */
  run(op) {
    const c = this.c;
    const k = op.k;
    const f = op.f;
    this.size = op.n;
    let obs = {};
    try {
      const r = this.call(c, op, k, f);
      if (r !== NONE) obs.r = r;
    } catch (e) {
      obs = { err: errorClass(e) };
    }
    if (op.op === "tick" || op.op === "purge" || op.op === "clear") {
      // Sweeps and clear go in wheel or slot order, which differ between
      // the hosts (see corpus.md): compared as a set.
      this.gone.sort((a, b) => byUnits(a[0], b[0]) || (a[1] === b[1] ? 0 : a[1] === null ? -1 : b[1] === null ? 1 : byUnits(a[1], b[1])));
    }
    if (this.gone.length !== 0) obs.rm = this.gone;
    this.gone = [];
    return obs;
  }

  call(c, op, k, f) {
    const w = writeOpts(op.w);
    switch (op.op) {
      case "set":
        c.set(k, dec(op.v), w);
        return NONE;
      case "get":
        return enc(c.get(k));
      case "peek":
        return enc(c.peek(k));
      case "has":
        return c.has(k);
      case "touch":
        return c.touch(k);
      case "persist":
        return c.persist(k);
      case "delete":
        return c.delete(k);
      case "ttl":
        return enc(c.ttl(k));
      case "expire":
        return c.expire(k, unnum(op.ms), op.c);
      case "expireAt":
        return c.expireAt(k, unnum(op.t), op.c);
      case "hset":
        return c.hset(k, f, dec(op.v), w);
      case "hget":
        return enc(c.hget(k, f));
      case "hhas":
        return c.hhas(k, f);
      case "hdel":
        return c.hdel(k, f);
      case "hlen":
        return c.hlen(k);
      case "hgetall":
        return Array.from(c.hgetall(k), ([name, v]) => [name, enc(v)]).sort((a, b) => byUnits(a[0], b[0]));
      case "hexpire":
        return c.hexpire(k, f, unnum(op.ms), op.c);
      case "hexpireAt":
        return c.hexpireAt(k, f, unnum(op.t), op.c);
      case "hpersist":
        return c.hpersist(k, f);
      case "httl":
        return enc(c.httl(k, f));
      case "tick": {
        // A settling tick purges too (see tests/corpus.rs, Config::settle).
        const n = c.tick(unnum(op.t));
        return op.purge ? n + c.purge() : n;
      }
      case "purge":
        return c.purge();
      case "size":
        return c.size;
      case "stats": {
        const s = c.stats();
        return Object.fromEntries(STATS.map((name) => [name, s[name]]));
      }
      case "keys":
        return [...c.keys()].sort(byUnits);
      case "clear":
        c.clear();
        return NONE;
      case "snapshot":
        this.snap = c.snapshot();
        return hexOf(this.snap);
      case "restore":
        this.c = TtlCache.restore(this.snap, this.hooks);
        c.free();
        return NONE;
    }
    throw new Error(`unknown op ${op.op}`);
  }
}

const NONE = Symbol("no result");

/** The operation part of a line: everything but its observation. */
function opPart(line) {
  const { r, err, rm, ...op } = line;
  return op;
}

// One test per case (a case starts at a "new" line).
const cases = [];
lines.forEach((l, i) => {
  const line = JSON.parse(l);
  if (line.op === "new") cases.push({ at: i + 1, lines: [] });
  cases.at(-1).lines.push({ n: i + 1, line });
});

test("the corpus holds cases", () => {
  assert.ok(cases.length >= 10, `only ${cases.length} cases`);
});

for (const { at, lines: ls } of cases) {
  test(`corpus case at line ${at}: ${JSON.stringify(ls[0].line.o)}`, () => {
    const host = new Host(ls[0].line);
    try {
      for (const { n, line } of ls.slice(1)) {
        const op = opPart(line);
        const got = { ...op, ...host.run(op) };
        assert.deepStrictEqual(got, line, `tests/data/corpus.jsonl:${n}: ${JSON.stringify(op)}`);
      }
    } finally {
      host.c.free();
    }
  });
}
