// The restore tape reader: keys and values back from snapshot bytes
// (format: SNAPSHOT.md) once the engine has checked them.

import {
  ENTRY_HAS_ABS,
  ENTRY_HAS_IDLE,
  ENTRY_HAS_WEIGHT,
  ENTRY_KIND_MASK,
  ENTRY_PLAIN,
  SNAP_CLOCKS_LEN,
  SNAP_HEADER_LEN,
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

/**
 * Fills the key index, keys and values from snapshot bytes the engine has
 * checked (every rule of SNAPSHOT.md holds, so nothing is re-checked here).
 * The engine handed out slots 0, 1, 2, ... in order, hashes before their
 * fields. Reading them here, not from a tape the engine builds, keeps the
 * wasm memory a restore needs proportional to the keys: a tape costs up to
 * 12 bytes of wasm memory per snapshot byte. Closures over local state, not
 * a class: a minifier shortens their names.
 */
export function fillIndex(bytes, keyMap, keyList, valList) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let p = SNAP_HEADER_LEN + SNAP_CLOCKS_LEN; // past the header and the clocks
  let name = ""; // set by head()

  /**
   * A count or length (at most the input's length, so a safe integer); or,
   * less `odd` (its low bit), an integer value's zigzag form, up to 2^54:
   * every partial sum is then even, so exact.
   */
  const varint = (odd = 0) => {
    let v = -odd;
    let m = 1;
    let x;
    do {
      x = bytes[p++];
      v += (x & 127) * m;
      m *= 128;
    } while (x > 127);
    return v;
  };

  const f64 = () => {
    p += 8;
    return dv.getFloat64(p - 8, true);
  };

  const take = (n) => bytes.slice(p, (p += n));

  /** Latin-1 (h even) or UTF-16LE code units, 8192 at a time (the argument limit of apply). */
  const str = () => {
    const h = varint();
    const wide = h % 2;
    const len = (h - wide) / 2;
    const units = new Uint16Array(Math.min(len, 8192));
    let s = "";
    for (let done = 0; done < len; ) {
      const n = Math.min(len - done, 8192);
      for (let i = 0; i < n; i++) units[i] = wide ? bytes[p++] | (bytes[p++] << 8) : bytes[p++];
      s += String.fromCharCode.apply(null, n === units.length ? units : units.subarray(0, n));
      done += n;
    }
    return s;
  };

  /** An entry's or field's head: sets `name`, skips clocks and size; returns the kind. */
  const head = () => {
    const f = bytes[p++];
    name = str();
    p += 8 + (f & ENTRY_HAS_ABS ? 8 : 0) + (f & ENTRY_HAS_IDLE ? 8 : 0);
    if (f & ENTRY_HAS_WEIGHT) varint();
    return f & ENTRY_KIND_MASK;
  };

  const value = () => {
    const t = bytes[p++];
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
        const odd = bytes[p] & 1;
        const half = varint(odd) / 2;
        return odd ? -half - 1 : half;
      }
      case TAG_FLOAT:
        return f64();
      case TAG_STRING:
        return str();
      case TAG_ARRAY: {
        const n = varint();
        const a = [];
        for (let i = 0; i < n; i++) a.push(value());
        return a;
      }
      case TAG_OBJECT:
      case TAG_NULL_OBJECT: {
        const n = varint();
        const o = t === TAG_OBJECT ? {} : Object.create(null);
        for (let i = 0; i < n; i++) {
          const k = str();
          const x = value();
          if (k === "__proto__") {
            Object.defineProperty(o, k, { value: x, writable: true, enumerable: true, configurable: true });
          } else {
            o[k] = x;
          }
        }
        return o;
      }
      case TAG_BYTES:
        return take(varint());
      case TAG_DATE:
        return new Date(f64());
      case TAG_MAP: {
        const n = varint();
        const m = new Map();
        for (let i = 0; i < n; i++) {
          const k = value();
          m.set(k, value());
        }
        return m;
      }
      case TAG_BIGINT:
      case TAG_NEG_BIGINT: {
        const mag = take(varint());
        let hex = "";
        for (let i = 0; i < mag.length; i++) hex += (mag[i] < 16 ? "0" : "") + mag[i].toString(16);
        const v = hex === "" ? 0n : BigInt("0x" + hex);
        return t === TAG_NEG_BIGINT ? -v : v;
      }
      default:
        throw new Error(`snapshot: internal: bad value tag ${t}`);
    }
  };

  // The options (maxEntries, maxBytes, sweepBudget), then the entry count.
  varint();
  varint();
  varint();
  const count = varint();
  let slot = 0;
  for (let e = 0; e < count; e++) {
    const s = slot++;
    const kind = head();
    const key = name;
    keyMap.set(key, s);
    keyList[s] = key;
    if (kind === ENTRY_PLAIN) {
      valList[s] = value();
      continue;
    }
    const box = new Hash();
    valList[s] = box;
    const nf = varint();
    for (let i = 0; i < nf; i++) {
      const f = slot++;
      head();
      box.fields.set(name, f);
      keyList[f] = name;
      valList[f] = value();
    }
  }
}
