// The restore tape reader: keys and values back from snapshot bytes
// (format: SNAPSHOT.md) once the engine has checked them.

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
  let p = 16 + 24; // past the header and the clocks
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
    p += 8 + (f & 4) * 2 + (f & 8);
    if (f & 16) varint();
    return f & 3;
  };

  const value = () => {
    const t = bytes[p++];
    switch (t) {
      case F_UNDEF:
        return undefined;
      case F_NULL:
        return null;
      case F_FALSE:
        return false;
      case F_TRUE:
        return true;
      case F_INT: {
        const odd = bytes[p] & 1;
        const half = varint(odd) / 2;
        return odd ? -half - 1 : half;
      }
      case F_FLOAT:
        return f64();
      case F_STRING:
        return str();
      case F_ARRAY: {
        const n = varint();
        const a = [];
        for (let i = 0; i < n; i++) a.push(value());
        return a;
      }
      case F_OBJECT:
      case F_NULL_OBJECT: {
        const n = varint();
        const o = t === F_OBJECT ? {} : Object.create(null);
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
      case F_BYTES:
        return take(varint());
      case F_DATE:
        return new Date(f64());
      case F_MAP: {
        const n = varint();
        const m = new Map();
        for (let i = 0; i < n; i++) {
          const k = value();
          m.set(k, value());
        }
        return m;
      }
      case F_BIGINT:
      case F_NEG_BIGINT: {
        const mag = take(varint());
        let hex = "";
        for (let i = 0; i < mag.length; i++) hex += (mag[i] < 16 ? "0" : "") + mag[i].toString(16);
        const v = hex === "" ? 0n : BigInt("0x" + hex);
        return t === F_NEG_BIGINT ? -v : v;
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
    if (kind === 0) {
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
