// The snapshot writer (format: SNAPSHOT.md). The decoder (decode.js, which
// makes the Rust decoder's checks) checks every snapshot written here before
// snapshot() returns it, and accepts only canonical encodings. The Rust writer
// (src/snapshot/encoder.rs) must write the same bytes: tests/data/corpus.jsonl
// checks both byte for byte (SNAPSHOT.md says why there are two).

import {
  ENTRY_FIELD,
  ENTRY_HASH,
  ENTRY_HAS_ABS,
  ENTRY_HAS_IDLE,
  ENTRY_HAS_WEIGHT,
  ENTRY_PLAIN,
  SNAP_FLAG_FOLLOWS,
  SNAP_HEADER_LEN,
  SNAP_LENGTH_AT,
  SNAP_MAGIC,
  SNAP_MAX_DEPTH,
  SNAP_TRAILER_LEN,
  SNAP_VERSION,
  TAG_ARRAY,
  TAG_BIGINT,
  TAG_BYTES,
  TAG_DATE,
  TAG_FALSE,
  TAG_FLOAT,
  TAG_INT,
  TAG_MAP,
  TAG_NEG_BIGINT,
  TAG_NULL,
  TAG_NULL_OBJECT,
  TAG_OBJECT,
  TAG_STRING,
  TAG_TRUE,
  TAG_UNDEFINED,
  TIMES_LAST,
} from "./protocol.js";
import {
  alive,
  clock,
  clockOf,
  idleOf,
  engine,
  keyMap,
  live,
  now,
  opts,
  sizeOf,
  syncClock,
  valList,
} from "./cache.js";
import { purgeForWalk } from "./commands.js";
import { isHash } from "./hash.js";
import { liveKey } from "./hashes.js";
import { syncViews } from "./memory.js";
import { crc32, decode } from "./decode.js";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
// A row of `rows` (see `row` below): name, value, abs, last, idle, weight.
const ROW_LEN = 6;

function kindOf(v) {
  const p = Object.getPrototypeOf(v);
  const name = p !== null && typeof p.constructor === "function" ? p.constructor.name : "";
  return name ? `it holds an instance of ${name}` : "it holds an object with an unusual prototype";
}

/**
 * Encodes rows copied out of a cache (per entry: name, value, abs, last,
 * idle, weight; a hash's fields follow their key's row) in the format (see
 * SNAPSHOT.md). `shape` holds per entry -1 for a plain one, or its number of
 * fields. The writer's state is local to the call: a value getter may take
 * another snapshot meanwhile. Closures rather than a class: a minifier
 * shortens their names and locals, not a class's property names.
 */
export function encodeSnapshot(now, follows, o, rows, shape) {
  let buf = new Uint8Array(1024);
  let dv = new DataView(buf.buffer);
  let n = SNAP_HEADER_LEN; // the header's fixed part, written below
  const stack = [];
  let key; // the entry (and field) being written, for noData()
  let field;

  /** The error for a value with no data form, naming its key (and field). */
  const noData = (what) => {
    const where = `key ${JSON.stringify(key)}${field === undefined ? "" : ` field ${JSON.stringify(field)}`}`;
    return new TypeError(`snapshot: the value at ${where} has no data form: ${what}`);
  };

  const need = (k) => {
    if (n + k > buf.length) {
      const b = new Uint8Array(Math.max(buf.length * 2, n + k));
      b.set(buf.subarray(0, n));
      buf = b;
      dv = new DataView(b.buffer);
    }
  };

  const u8 = (x) => {
    need(1);
    buf[n++] = x;
  };

  const f64 = (x) => {
    need(8);
    // The one canonical NaN. Bytes past `n` are still zero.
    if (x !== x) dv.setUint32(n + 4, 0x7ff80000, true);
    else dv.setFloat64(n, x, true);
    n += 8;
  };

  /**
   * LEB128 of a non-negative integer up to 2^53; or of `v + odd` for an
   * even `v` up to 2^54 (an integer value's zigzag form, which a double
   * cannot hold when odd): the low bit goes into the first byte, where
   * adding it carries nothing.
   */
  const varint = (v, odd = 0) => {
    for (; v >= 128; v = (v - (v % 128)) / 128, odd = 0) u8((v % 128) + odd + 128);
    u8(v + odd);
  };

  /** Latin-1 when every code unit fits a byte, else UTF-16LE (lone surrogates kept). */
  const str = (s) => {
    const len = s.length;
    let wide = 0;
    for (let i = 0; i < len; i++) {
      if (s.charCodeAt(i) > 255) {
        wide = 1;
        break;
      }
    }
    varint(len * 2 + wide);
    need(len << wide);
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      buf[n++] = c; // the low byte
      if (wide) buf[n++] = c >>> 8;
    }
  };

  const raw = (bytes) => {
    varint(bytes.length);
    need(bytes.length);
    buf.set(bytes, n);
    n += bytes.length;
  };

  /** Flags, key or field name, clocks and size. kind: an ENTRY_* kind. */
  const head = (kind, name, abs, last, idle, weight) => {
    u8(kind | (abs !== Infinity ? ENTRY_HAS_ABS : 0) | (idle !== Infinity ? ENTRY_HAS_IDLE : 0) | (weight !== 0 ? ENTRY_HAS_WEIGHT : 0));
    str(name);
    if (abs !== Infinity) f64(abs);
    f64(last);
    if (idle !== Infinity) f64(idle);
    if (weight !== 0) varint(weight);
  };

  const value = (v, depth) => {
    if (depth > SNAP_MAX_DEPTH) throw noData(`it is nested deeper than ${SNAP_MAX_DEPTH} levels`);
    switch (typeof v) {
      case "number":
        if (Number.isInteger(v) && Math.abs(v) <= MAX_SAFE && !Object.is(v, -0)) {
          u8(TAG_INT);
          // zigzag: 2v, or -2v - 1 for a negative v
          varint(v < 0 ? -2 * v - 2 : 2 * v, v < 0 ? 1 : 0);
        } else {
          u8(TAG_FLOAT);
          f64(v);
        }
        return;
      case "string":
        u8(TAG_STRING);
        str(v);
        return;
      case "boolean":
        u8(v ? TAG_TRUE : TAG_FALSE);
        return;
      case "undefined":
        u8(TAG_UNDEFINED);
        return;
      case "bigint": {
        const neg = v < 0n;
        let hex = v === 0n ? "" : (neg ? -v : v).toString(16);
        if (hex.length % 2 === 1) hex = "0" + hex;
        const mag = new Uint8Array(hex.length / 2);
        for (let i = 0; i < mag.length; i++) mag[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
        u8(neg ? TAG_NEG_BIGINT : TAG_BIGINT);
        raw(mag);
        return;
      }
      case "object":
        break;
      default:
        throw noData(`it holds a ${typeof v}`);
    }
    if (v === null) {
      u8(TAG_NULL);
      return;
    }
    if (stack.includes(v)) throw noData("it contains a cycle");
    let p;
    try {
      p = Object.getPrototypeOf(v);
    } catch (e) {
      // A revoked Proxy, or a getPrototypeOf trap that throws: named here.
      throw Object.assign(noData(`its prototype cannot be read (${e?.message ?? e})`), { cause: e });
    }
    if (p === Uint8Array.prototype) {
      u8(TAG_BYTES);
      raw(v);
      return;
    }
    if (p === Date.prototype) {
      u8(TAG_DATE);
      f64(v.getTime());
      return;
    }
    stack.push(v);
    if (p === Array.prototype && Array.isArray(v)) {
      const len = v.length;
      // The format holds an array's elements only: named properties would be
      // dropped, and a hole would come back an element (undefined). Dense
      // with none: exactly `len` keys, indices first, ascending, so the
      // last is `len - 1`.
      const keys = Object.keys(v);
      if (keys.length !== len || (len !== 0 && keys[len - 1] !== String(len - 1))) {
        throw noData("it is an array with holes or named properties");
      }
      u8(TAG_ARRAY);
      varint(len);
      for (let i = 0; i < len; i++) value(v[i], depth + 1);
    } else if (p === Map.prototype) {
      u8(TAG_MAP);
      varint(v.size);
      for (const [k, x] of v) {
        value(k, depth + 1);
        value(x, depth + 1);
      }
    } else if (p === Object.prototype || p === null) {
      const keys = Object.keys(v);
      u8(p === null ? TAG_NULL_OBJECT : TAG_OBJECT);
      varint(keys.length);
      for (const k of keys) {
        str(k);
        value(v[k], depth + 1);
      }
    } else {
      throw noData(kindOf(v));
    }
    stack.pop();
  };

  // The magic, the version, the flags (the clock follows a clock, not
  // manual), then the flags' high byte and the length (patched at the end).
  buf.set([...SNAP_MAGIC, SNAP_VERSION & 255, SNAP_VERSION >>> 8, follows ? SNAP_FLAG_FOLLOWS : 0]);
  f64(now);
  f64(o.ttl);
  f64(o.idle);
  varint(o.maxEntries === Infinity ? 0 : o.maxEntries);
  varint(o.maxBytes === Infinity ? 0 : o.maxBytes);
  varint(o.sweepBudget === Infinity ? 0 : o.sweepBudget + 1);
  varint(shape.length);
  let r = 0;
  for (let i = 0; i < shape.length; i++) {
    key = rows[r];
    field = undefined;
    head(shape[i] < 0 ? ENTRY_PLAIN : ENTRY_HASH, key, rows[r + 2], rows[r + 3], rows[r + 4], rows[r + 5]);
    if (shape[i] < 0) {
      value(rows[r + 1], 0);
      r += ROW_LEN;
      continue;
    }
    r += ROW_LEN;
    varint(shape[i]);
    for (let j = 0; j < shape[i]; j++, r += ROW_LEN) {
      field = rows[r];
      head(ENTRY_FIELD, field, rows[r + 2], rows[r + 3], rows[r + 4], rows[r + 5]);
      value(rows[r + 1], 0);
    }
  }
  // The length, then the CRC-32 of everything before it.
  const total = n + SNAP_TRAILER_LEN;
  dv.setUint32(SNAP_LENGTH_AT, total % 2 ** 32, true);
  dv.setUint32(SNAP_LENGTH_AT + 4, Math.floor(total / 2 ** 32), true);
  need(SNAP_TRAILER_LEN);
  dv.setUint32(n, crc32(buf, n), true);
  return buf.slice(0, total);
}

// ---- TtlCache.prototype.snapshot: copying the live state out ---------------
//
// A `TtlCache` method, kept here as a function of the cache that reaches its
// private state through the accessors cache.js exports.

/** Appends a snapshot row: name, value, clocks and recorded size of slot `s`. */
function row(c, rows, name, v, s, sized) {
  syncViews();
  rows.push(name, v, clockOf(c, s, 0), clockOf(c, s, TIMES_LAST), idleOf(c, s), sized ? engine(c).slotWeight(s) : 0);
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
      row(this, rows, key, isHash(v) ? null : v, s, sized && !isHash(v));
      if (!isHash(v)) {
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
    // Checked as restore checks it (without building the values), so no
    // bytes snapshot() returns are bytes restore rejects.
    decode(out, false);
    // Then the expired entries it stepped over go, as a walk's do (see
    // purgeForWalk): after the bytes, so that a snapshot that throws has
    // changed nothing and one a dispose would free or write to is the cache
    // as it was when snapshot() was called. (A value getter may have freed
    // it: the bytes are still that cache.)
    if (engine(this) !== null) purgeForWalk(this);
    return out;
  },
};
