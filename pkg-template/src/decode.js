// The snapshot decoder (format and checks: SNAPSHOT.md) and the CRC-32 both
// sides of it use. It makes every check of the Rust decoder
// (src/snapshot/decoder.rs), in the same order, with the same message and
// byte offset: tests/data/decode-diff.txt holds the two to the same verdict
// on thousands of inputs (tests/snapshot_diff.rs, tests/js/decode-diff.test.mjs).
// Here rather than in wasm: it builds the keys and values as it checks them
// (one pass, no copy of the bytes into wasm memory), and the Rust decoder
// was the largest part of the package's wasm.

import {
  ENTRY_FIELD,
  ENTRY_HASH,
  ENTRY_HAS_ABS,
  ENTRY_HAS_IDLE,
  ENTRY_HAS_WEIGHT,
  ENTRY_KIND_MASK,
  ENTRY_PLAIN,
  SNAP_FLAG_FOLLOWS,
  SNAP_HEADER_LEN,
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
} from "./protocol.js";
import { Hash } from "./hash.js";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

let table;
// A string's code units, for String.fromCharCode (a plain array measured
// faster there than a typed one, or than a string built a unit at a time).
// Shared: nothing runs between filling it and reading it.
const units = [];

/**
 * CRC-32 (zlib's) of `b[0..n]`, eight bytes a step (slicing-by-8: table `k`
 * advances a byte's CRC through `k` more zero bytes, so eight lookups that
 * do not wait on each other replace eight that do). The tables are built on
 * first use.
 */
export function crc32(b, n) {
  let t = table;
  if (t === undefined) {
    t = table = new Int32Array(2048);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      t[i] = c;
    }
    for (let i = 256; i < 2048; i++) t[i] = t[t[i - 256] & 255] ^ (t[i - 256] >>> 8);
  }
  let c = -1;
  let i = 0;
  for (const m = n - 7; i < m; i += 8) {
    c ^= b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
    c =
      t[1792 + (c & 255)] ^
      t[1536 + ((c >>> 8) & 255)] ^
      t[1280 + ((c >>> 16) & 255)] ^
      t[1024 + (c >>> 24)] ^
      t[768 + b[i + 4]] ^
      t[512 + b[i + 5]] ^
      t[256 + b[i + 6]] ^
      t[b[i + 7]];
  }
  for (; i < n; i++) c = t[(c ^ b[i]) & 255] ^ (c >>> 8);
  return ~c >>> 0;
}

/** The error for bytes that are not a snapshot: a plain Error, as Rust's `Error::Corrupt`. */
export const invalid = (what) => new Error(`bytes: not a valid snapshot: ${what}`);

/** An array index (the canonical decimal of an integer below 2^32 - 1) or -1: JS orders those names first. */
function arrayIndex(k) {
  const n = k.length;
  if (n === 0 || n > 10 || (n > 1 && k.charCodeAt(0) === 48)) return -1;
  let v = 0;
  for (let i = 0; i < n; i++) {
    const d = k.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v < 4294967295 ? v : -1;
}

/**
 * Checks snapshot bytes (a plain Uint8Array) and, with `build`, returns
 * what they hold: `[now, ttl, idle, maxEntries, maxBytes, sweepBudget,
 * follows, keyMap, keyList, valList, slots]` (limits `Infinity` for none;
 * slot numbers 0, 1, 2, ... in order, a hash before its fields; `slots`
 * holds per slot its ENTRY_* kind, abs, last, idle and size). Without
 * `build` it only checks (snapshot() checks what it wrote), and builds no
 * arrays or byte arrays: a sparse array written as a run of `undefined`
 * would be rebuilt dense. Closures over local state, not a class: a
 * minifier shortens their names.
 */
export function decode(b, build) {
  const len = b.length;
  const end = len - SNAP_TRAILER_LEN;
  let p = SNAP_HEADER_LEN;
  let entry = -1; // the entry being read, for messages
  let now = 0;
  let name = ""; // set by head()
  let weight = 0; // set by head()
  const slots = [];

  // What and where, as the Rust decoder says it.
  const fail = (what) => {
    throw invalid(`${entry < 0 ? "" : `entry ${entry}, `}byte ${p}: ${what}`);
  };

  const u8 = () => {
    if (p >= end) fail("truncated");
    return b[p++];
  };

  const f64 = () => {
    if (end - p < 8) fail("truncated");
    const x = dv.getFloat64(p, true);
    p += 8;
    if (x !== x && (dv.getUint32(p - 8, true) !== 0 || dv.getUint32(p - 4, true) !== 0x7ff80000)) fail("non-canonical NaN");
    return x;
  };

  /**
   * LEB128, less `start`. Exact below 2^53; at or above it, so is the
   * result (every partial sum is an integer, and rounding is monotone), so
   * comparisons with safe integers hold. With `start` the low bit of an
   * integer value's zigzag form, every partial sum is even: exact to 2^54.
   */
  const varint = (start) => {
    let v = -start;
    let m = 1;
    for (let shift = 0; ; shift += 7) {
      const x = u8();
      if (shift === 63 && x > 1) fail("varint over 64 bits");
      v += (x & 127) * m;
      if (x < 128) {
        if (x === 0 && shift > 0) fail("overlong varint");
        return v;
      }
      m *= 128;
    }
  };

  /** A count of items that each take at least `min` bytes, checked against what is left. */
  const count = (min) => {
    const n = varint(0);
    if (n > (end - p) / min) fail("count overruns the input");
    return n;
  };

  /**
   * Latin-1 (h even) or UTF-16LE code units, 8192 at a time (the argument
   * limit of apply); with `keep` false, only checked.
   */
  const str = (keep) => {
    const h = varint(0);
    const wide = h % 2;
    const len = (h - wide) / 2;
    if (len > (end - p) / (wide + 1)) fail("string overruns the input");
    const from = p;
    p += len * (wide + 1);
    let high = 0;
    if (wide) for (let i = from + 1; i < p; i += 2) high |= b[i];
    if (wide && !high) fail("non-canonical string");
    let s = "";
    for (let q = from; keep && q < p; ) {
      const n = Math.min((p - q) / (wide + 1), 8192);
      units.length = n;
      for (let i = 0; i < n; i++, q += wide + 1) units[i] = wide ? b[q] | (b[q + 1] << 8) : b[q];
      s += String.fromCharCode.apply(null, units);
    }
    return s;
  };

  /** An entry's or field's head, checked live at the snapshot's clock: sets `name` and `weight`; returns the kind. */
  const head = (field) => {
    const f = u8();
    const kind = f & ENTRY_KIND_MASK;
    if (f & ~(ENTRY_KIND_MASK | ENTRY_HAS_ABS | ENTRY_HAS_IDLE | ENTRY_HAS_WEIGHT) || (field ? kind !== ENTRY_FIELD : kind > ENTRY_HASH)) {
      fail("bad flags");
    }
    if (kind === ENTRY_HASH && f & ENTRY_HAS_WEIGHT) fail("sized hash key");
    name = str(1);
    const abs = f & ENTRY_HAS_ABS ? f64() : Infinity;
    const last = f64();
    const idle = f & ENTRY_HAS_IDLE ? f64() : Infinity;
    if ((f & ENTRY_HAS_ABS && !isFinite(abs)) || (f & ENTRY_HAS_IDLE && !isFinite(idle))) fail("bad deadline");
    if (!isFinite(last) || last > now) fail("bad last access");
    if (!(idle > 0)) fail("bad idle window");
    if (Math.min(abs, last + idle) <= now) fail("expired entry");
    weight = 0;
    if (f & ENTRY_HAS_WEIGHT) {
      weight = varint(0);
      if (!(weight >= 1 && weight <= 4294967295)) fail("bad size");
    }
    if (build) slots.push(kind, abs, last, idle, weight);
    return kind;
  };

  /** A value; with `keep` false (checking only, not a Map key), what it returns is not used. */
  const value = (depth, keep) => {
    if (depth > SNAP_MAX_DEPTH) fail("nested deeper than 64");
    const t = u8();
    switch (t) {
      case TAG_UNDEFINED:
        return undefined;
      case TAG_NULL:
        return null;
      case TAG_FALSE:
        return false;
      case TAG_TRUE:
        return true;
      case TAG_INT: {
        const odd = b[p] & 1;
        const half = varint(odd) / 2;
        const x = odd ? -half - 1 : half;
        if (Math.abs(x) > MAX_SAFE) fail("integer beyond 2^53");
        return x;
      }
      case TAG_FLOAT: {
        const x = f64();
        if (Number.isSafeInteger(x) && !Object.is(x, -0)) fail("non-canonical number");
        return x;
      }
      case TAG_STRING:
        return str(keep);
      case TAG_ARRAY: {
        const n = count(1);
        const a = [];
        for (let i = 0; i < n; i++) {
          const x = value(depth + 1, build);
          if (build) a.push(x);
        }
        return a;
      }
      // What JS cannot hold as written is rejected, never changed on the
      // way in: an object merges duplicate names and puts array-index names
      // first, ascending; a Map merges equal keys (SameValueZero, which for
      // canonical bytes is byte equality: keys that are objects are new, so
      // never equal) and turns -0 into 0.
      case TAG_OBJECT:
      case TAG_NULL_OBJECT: {
        const n = count(2);
        const o = t === TAG_OBJECT ? {} : Object.create(null);
        let index = -1;
        let named = false;
        let dup = false;
        for (let i = 0; i < n; i++) {
          const k = str(1);
          const at = arrayIndex(k);
          if (at < 0) {
            named = true;
            dup ||= Object.hasOwn(o, k);
          } else if (named || at <= index) {
            fail("property order JS does not keep");
          } else {
            index = at;
          }
          const x = value(depth + 1, build);
          if (k === "__proto__") {
            Object.defineProperty(o, k, { value: x, writable: true, enumerable: true, configurable: true });
          } else {
            o[k] = x;
          }
        }
        if (dup) fail("duplicate property");
        return o;
      }
      case TAG_MAP: {
        const n = count(2);
        const m = new Map();
        let dup = false;
        for (let i = 0; i < n; i++) {
          const k = value(depth + 1, 1);
          if (Object.is(k, -0)) fail("Map key -0");
          const size = m.size;
          m.set(k, value(depth + 1, build));
          dup ||= m.size === size;
        }
        if (dup) fail("duplicate Map key");
        return m;
      }
      case TAG_BYTES: {
        const n = count(1);
        return keep ? b.slice(p, (p += n)) : (p += n);
      }
      case TAG_BIGINT:
      case TAG_NEG_BIGINT: {
        const n = count(1);
        let hex = "";
        if (keep) for (let i = p; i < p + n; i++) hex += (b[i] < 16 ? "0" : "") + b[i].toString(16);
        p += n;
        // No leading zero byte; 0n is positive.
        if (n ? b[p - n] === 0 : t === TAG_NEG_BIGINT) fail("non-canonical bigint");
        const v = hex ? BigInt("0x" + hex) : 0n;
        return t === TAG_NEG_BIGINT ? -v : v;
      }
      case TAG_DATE: {
        const x = f64();
        if (x === x && !(Number.isInteger(x) && Math.abs(x) <= 8.64e15 && !Object.is(x, -0))) fail("bad Date");
        return new Date(x);
      }
    }
    fail("unknown value tag");
  };

  /** An entry's or field's value: anything but `undefined`. */
  const top = () => {
    if (p < end && b[p] === TAG_UNDEFINED) fail("undefined value");
    return value(0, build);
  };

  /** `limit(1)`: sweepBudget, stored plus one. Zero is none. */
  const limit = (minus) => {
    const v = varint(minus);
    if (v === -minus) return Infinity;
    if (v > MAX_SAFE) fail("bad limit");
    return v;
  };

  // The header: what and no where.
  if (len === 0) throw invalid("empty input");
  if (len < 6) throw invalid("truncated");
  for (let i = 0; i < 4; i++) if (b[i] !== SNAP_MAGIC[i]) throw invalid("not a lapse snapshot");
  const version = b[4] | (b[5] << 8);
  if (version !== 1 && version !== SNAP_VERSION) throw invalid("unsupported format version");
  if (len < SNAP_HEADER_LEN + SNAP_TRAILER_LEN) throw invalid("truncated");
  const dv = new DataView(b.buffer, b.byteOffset, len);
  if (dv.getUint32(8, true) + dv.getUint32(12, true) * 2 ** 32 !== len) throw invalid("length mismatch (truncated?)");
  if (crc32(b, end) !== dv.getUint32(end, true)) throw invalid("checksum mismatch");
  // Version 1 has no flags; version 2 has the clock mode.
  const flags = b[6] | (b[7] << 8);
  if (flags & ~(version === 1 ? 0 : SNAP_FLAG_FOLLOWS)) throw invalid("bad header flags");

  // The body.
  now = f64();
  if (!isFinite(now)) fail("bad clock");
  const ttl = f64();
  if (!(ttl > 0)) fail("bad ttl or idle");
  const idle = f64();
  if (!(idle > 0)) fail("bad ttl or idle");
  const maxEntries = limit(0);
  const maxBytes = limit(0);
  const sweepBudget = limit(1);
  const keyMap = new Map();
  const keyList = [];
  const valList = [];
  let entries = 0;
  let bytes = 0;
  let dupKey = false;
  let slot = 0;
  // The smallest entry is 11 bytes: flags, empty key, last, a 1-byte value.
  const n = count(11);
  for (entry = 0; entry < n; entry++) {
    const s = slot++;
    const kind = head(false);
    const key = name;
    const size = keyMap.size;
    keyMap.set(key, s);
    dupKey ||= keyMap.size === size;
    keyList[s] = key;
    if (kind === ENTRY_PLAIN) {
      entries++;
      bytes += weight;
      valList[s] = top();
      continue;
    }
    const nf = count(11);
    if (nf === 0 || nf > maxEntries) fail("bad field count");
    const box = new Hash();
    valList[s] = box;
    let dup = false;
    let hashBytes = 0;
    for (let i = 0; i < nf; i++) {
      const f = slot++;
      head(true);
      const size = box.fields.size;
      box.fields.set(name, f);
      dup ||= box.fields.size === size;
      keyList[f] = name;
      entries++;
      bytes += weight;
      hashBytes += weight;
      valList[f] = top();
    }
    if (dup) fail("duplicate field");
    if (hashBytes > 0xffffffff) fail("hash over 4294967295 bytes"); // one u32 column, as in the engine
  }
  entry = -1;
  if (dupKey) fail("duplicate key");
  if (entries > maxEntries || bytes > maxBytes) fail("over maxEntries or maxBytes");
  if (p !== end) fail("trailing bytes");
  return [now, ttl, idle, maxEntries, maxBytes, sweepBudget, (flags & SNAP_FLAG_FOLLOWS) !== 0, keyMap, keyList, valList, slots];
}
