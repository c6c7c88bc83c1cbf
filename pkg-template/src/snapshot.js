// The snapshot writer (format: SNAPSHOT.md) and its CRC-32. The decoder is
// Rust's (src/snapshot/); it checks every snapshot written here before
// snapshot() returns it, and accepts only canonical encodings. The Rust writer
// (src/snapshot/encoder.rs) must write the same bytes: tests/data/corpus.jsonl
// checks both byte for byte (SNAPSHOT.md says why there are two).

import {
  F_ARRAY,
  F_BIGINT,
  F_BYTES,
  F_DATE,
  F_FALSE,
  F_FLOAT,
  F_INT,
  F_MAP,
  F_NEG_BIGINT,
  F_NULL,
  F_NULL_OBJECT,
  F_OBJECT,
  F_STRING,
  F_TRUE,
  F_UNDEF,
} from "./constants.js";
import {
  alive,
  clock,
  clocksAt,
  drain,
  engine,
  flush,
  keyMap,
  live,
  now,
  opts,
  sizeOf,
  syncClock,
  toEngine,
  valList,
} from "./cache.js";
import { Hash } from "./hash.js";
import { liveKey } from "./hashes.js";
import { F64, copyIn, syncViews } from "./memory.js";

const MAX_DEPTH = 64;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

let crcTable = null;

function crc32(b, n) {
  if (crcTable === null) {
    crcTable = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[i] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (let i = 0; i < n; i++) c = crcTable[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Thrown inside the walk; `snapshot()` turns it into a TypeError naming the key. */
class NoData {
  constructor(what) {
    this.what = what;
  }
}

function kindOf(v) {
  const p = Object.getPrototypeOf(v);
  const name = p !== null && typeof p.constructor === "function" ? p.constructor.name : "";
  return name ? `it holds an instance of ${name}` : "it holds an object with an unusual prototype";
}

/** Writes the snapshot format (see SNAPSHOT.md). */
class Writer {
  constructor() {
    this.buf = new Uint8Array(1024);
    this.dv = new DataView(this.buf.buffer);
    this.n = 0;
    this.stack = [];
  }

  need(k) {
    if (this.n + k <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.n + k));
    b.set(this.buf.subarray(0, this.n));
    this.buf = b;
    this.dv = new DataView(b.buffer);
  }

  u8(x) {
    this.need(1);
    this.buf[this.n++] = x;
  }

  f64(x) {
    this.need(8);
    if (x !== x) {
      this.dv.setUint32(this.n, 0, true);
      this.dv.setUint32(this.n + 4, 0x7ff80000, true); // the one canonical NaN
    } else {
      this.dv.setFloat64(this.n, x, true);
    }
    this.n += 8;
  }

  /** LEB128 of a non-negative integer up to 2^53, or a bigint. */
  varint(v) {
    if (typeof v === "bigint") {
      while (v >= 128n) {
        this.u8(Number(v & 127n) | 128);
        v >>= 7n;
      }
      this.u8(Number(v));
      return;
    }
    while (v >= 128) {
      this.u8((v % 128) | 128);
      v = Math.floor(v / 128);
    }
    this.u8(v);
  }

  /** Latin-1 when every code unit fits a byte, else UTF-16LE (lone surrogates kept). */
  str(s) {
    const len = s.length;
    let wide = 0;
    for (let i = 0; i < len; i++) {
      if (s.charCodeAt(i) > 255) {
        wide = 1;
        break;
      }
    }
    this.varint(len * 2 + wide);
    this.need(len << wide);
    const b = this.buf;
    let n = this.n;
    if (wide) {
      for (let i = 0; i < len; i++) {
        const c = s.charCodeAt(i);
        b[n++] = c & 255;
        b[n++] = c >>> 8;
      }
    } else {
      for (let i = 0; i < len; i++) b[n++] = s.charCodeAt(i);
    }
    this.n = n;
  }

  raw(bytes) {
    this.varint(bytes.length);
    this.need(bytes.length);
    this.buf.set(bytes, this.n);
    this.n += bytes.length;
  }

  header(now, follows, ttl, idle, maxEntries, maxBytes, sweepBudget, count) {
    this.u8(0x89);
    this.u8(0x4c); // "LPS"
    this.u8(0x50);
    this.u8(0x53);
    this.u8(2); // version 2, LE
    this.u8(0);
    this.u8(follows ? 1 : 0); // flags: bit 0, the clock follows a clock (not manual)
    for (let i = 0; i < 9; i++) this.u8(0); // flags high byte, length (patched)
    this.f64(now);
    this.f64(ttl);
    this.f64(idle);
    this.varint(maxEntries === Infinity ? 0 : maxEntries);
    this.varint(maxBytes === Infinity ? 0 : maxBytes);
    this.varint(sweepBudget === Infinity ? 0 : sweepBudget + 1);
    this.varint(count);
  }

  /** Flags, key or field name, clocks and size. kind: 0 plain, 1 hash, 2 field. */
  head(kind, name, abs, last, idle, weight) {
    this.u8(kind | (abs !== Infinity ? 4 : 0) | (idle !== Infinity ? 8 : 0) | (weight !== 0 ? 16 : 0));
    this.str(name);
    if (abs !== Infinity) this.f64(abs);
    this.f64(last);
    if (idle !== Infinity) this.f64(idle);
    if (weight !== 0) this.varint(weight);
  }

  entry(v, key, field) {
    try {
      this.value(v, 0);
    } catch (e) {
      if (!(e instanceof NoData)) throw e;
      const where = field === undefined ? `key ${JSON.stringify(key)}` : `key ${JSON.stringify(key)} field ${JSON.stringify(field)}`;
      throw new TypeError(`snapshot: the value at ${where} has no data form: ${e.what}`);
    }
  }

  value(v, depth) {
    if (depth > MAX_DEPTH) throw new NoData(`it is nested deeper than ${MAX_DEPTH} levels`);
    switch (typeof v) {
      case "number":
        if (Number.isInteger(v) && Math.abs(v) <= MAX_SAFE && !Object.is(v, -0)) {
          this.u8(F_INT);
          this.varint(Math.abs(v) < 2 ** 52 ? (v < 0 ? -2 * v - 1 : 2 * v) : v < 0 ? -2n * BigInt(v) - 1n : 2n * BigInt(v));
        } else {
          this.u8(F_FLOAT);
          this.f64(v);
        }
        return;
      case "string":
        this.u8(F_STRING);
        this.str(v);
        return;
      case "boolean":
        this.u8(v ? F_TRUE : F_FALSE);
        return;
      case "undefined":
        this.u8(F_UNDEF);
        return;
      case "bigint": {
        const neg = v < 0n;
        let hex = v === 0n ? "" : (neg ? -v : v).toString(16);
        if (hex.length % 2 === 1) hex = "0" + hex;
        const mag = new Uint8Array(hex.length / 2);
        for (let i = 0; i < mag.length; i++) mag[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
        this.u8(neg ? F_NEG_BIGINT : F_BIGINT);
        this.raw(mag);
        return;
      }
      case "object":
        break;
      default:
        throw new NoData(`it holds a ${typeof v}`);
    }
    if (v === null) {
      this.u8(F_NULL);
      return;
    }
    const stack = this.stack;
    if (stack.includes(v)) throw new NoData("it contains a cycle");
    const p = Object.getPrototypeOf(v);
    if (p === Uint8Array.prototype) {
      this.u8(F_BYTES);
      this.raw(v);
      return;
    }
    if (p === Date.prototype) {
      this.u8(F_DATE);
      this.f64(v.getTime());
      return;
    }
    stack.push(v);
    if (p === Array.prototype && Array.isArray(v)) {
      const n = v.length;
      // The format holds an array's elements only: named properties would be
      // dropped. Object.keys lists indices first, so the last key tells.
      const keys = Object.keys(v);
      const last = keys.length === 0 ? undefined : keys[keys.length - 1];
      if (last !== undefined && !(String(+last) === last && +last < n)) {
        throw new NoData("it is an array with named properties");
      }
      this.u8(F_ARRAY);
      this.varint(n);
      for (let i = 0; i < n; i++) this.value(v[i], depth + 1);
    } else if (p === Map.prototype) {
      this.u8(F_MAP);
      this.varint(v.size);
      for (const [k, x] of v) {
        this.value(k, depth + 1);
        this.value(x, depth + 1);
      }
    } else if (p === Object.prototype || p === null) {
      const keys = Object.keys(v);
      this.u8(p === null ? F_NULL_OBJECT : F_OBJECT);
      this.varint(keys.length);
      for (const k of keys) {
        this.str(k);
        this.value(v[k], depth + 1);
      }
    } else {
      throw new NoData(kindOf(v));
    }
    stack.pop();
  }

  /** Patches the length, appends the CRC-32; returns the bytes. */
  finish() {
    const total = this.n + 4;
    this.dv.setUint32(8, total % 2 ** 32, true);
    this.dv.setUint32(12, Math.floor(total / 2 ** 32), true);
    const crc = crc32(this.buf, this.n);
    this.need(4);
    this.dv.setUint32(this.n, crc, true);
    this.n += 4;
    return this.buf.slice(0, this.n);
  }
}

/**
 * Encodes rows copied out of a cache (per entry: name, value, abs, last,
 * idle, weight; a hash's fields follow their key's row) in the format.
 * `shape` holds per entry -1 for a plain one, or its number of fields.
 */
export function encodeSnapshot(now, follows, o, rows, shape) {
  const w = new Writer();
  w.header(now, follows, o.ttl, o.idle, o.maxEntries, o.maxBytes, o.sweepBudget, shape.length);
  let r = 0;
  for (let i = 0; i < shape.length; i++) {
    const key = rows[r];
    w.head(shape[i] < 0 ? 0 : 1, key, rows[r + 2], rows[r + 3], rows[r + 4], rows[r + 5]);
    if (shape[i] < 0) {
      w.entry(rows[r + 1], key, undefined);
      r += 6;
      continue;
    }
    r += 6;
    w.varint(shape[i]);
    for (let j = 0; j < shape[i]; j++, r += 6) {
      w.head(2, rows[r], rows[r + 2], rows[r + 3], rows[r + 4], rows[r + 5]);
      w.entry(rows[r + 1], key, rows[r]);
    }
  }
  return w.finish();
}

// ---- TtlCache.prototype.snapshot: copying the live state out ---------------
//
// A `TtlCache` method, kept here as a function of the cache that reaches its
// private state through the accessors cache.js exports.

/** Appends a snapshot row: name, value, clocks and recorded size of slot `s`. */
function row(c, rows, name, v, s, sized) {
  syncViews();
  const t = clocksAt(c) + s * 3;
  rows.push(name, v, F64[t], F64[t + 1], F64[t + 2], sized ? engine(c).slotWeight(s) : 0);
}

/**
 * Has the engine check snapshot bytes this side wrote. The bytes are copied
 * into a buffer the engine allocates fallibly: too big for wasm memory is
 * a RangeError, and the cache is unchanged.
 */
function check(c, out) {
  const e = toEngine(c);
  copyIn(e, out, "snapshot");
  try {
    e.checkSnapshot();
  } finally {
    syncViews();
  }
  flush(c, drain(c));
}

export const snapshotMethods = {
  /**
   * Every live entry and field with its clocks, the clock and the data
   * options, in a versioned, checksummed format. Throws `TypeError` naming
   * the key (and field) for a value with no data form; changes nothing.
   * @returns {Uint8Array}
   */
  snapshot() {
    // Everything is copied out first: walking the values runs user code
    // (getters) that may change this cache, and must not pair a key with
    // another key's clocks or value. The snapshot is the cache as it was
    // when snapshot() was called.
    alive(this);
    syncClock(this);
    const sized = sizeOf(this) !== undefined;
    const rows = []; // per entry: key, value or null, abs, last, idle, weight, then per field the same
    const shape = []; // per entry: -1 plain, or its number of fields
    for (const [key, s] of keyMap(this)) {
      if (s < 0 || !liveKey(this, s)) continue;
      const v = valList(this)[s];
      row(this, rows, key, v instanceof Hash ? null : v, s, sized && !(v instanceof Hash));
      if (!(v instanceof Hash)) {
        shape.push(-1);
        continue;
      }
      let n = 0;
      for (const [name, f] of v.fields) {
        if (!live(this, f)) continue;
        row(this, rows, name, valList(this)[f], f, sized);
        n++;
      }
      shape.push(n);
    }
    const out = encodeSnapshot(now(this), clock(this) !== undefined, opts(this), rows, shape);
    check(this, out);
    return out;
  },
};
