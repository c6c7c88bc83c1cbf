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

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Reads keys and values back from snapshot bytes the engine has checked
 * (every rule of SNAPSHOT.md holds, so nothing is re-checked here). Reading
 * them here, not from a tape the engine builds, keeps the wasm memory a
 * restore needs proportional to the keys: a tape costs up to 12 bytes of
 * wasm memory per snapshot byte.
 */
export class ByteReader {
  constructor(bytes) {
    this.b = bytes;
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.p = 0;
    this.name = "";
  }

  /** Skips the header and options; returns the entry count. */
  header() {
    this.p = 16 + 24;
    for (let i = 0; i < 3; i++) this.varint();
    return this.varint();
  }

  /** A count or length (at most the input's length, so a safe integer). */
  varint() {
    const b = this.b;
    let v = 0;
    let m = 1;
    for (;;) {
      const x = b[this.p++];
      v += (x & 127) * m;
      if (x < 128) return v;
      m *= 128;
    }
  }

  /** A varint that may exceed 2^53 (an integer value's zigzag form). */
  bigVarint() {
    const b = this.b;
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const x = b[this.p++];
      v |= BigInt(x & 127) << shift;
      if (x < 128) return v;
      shift += 7n;
    }
  }

  f64() {
    const x = this.dv.getFloat64(this.p, true);
    this.p += 8;
    return x;
  }

  str() {
    const h = this.varint();
    const len = Math.floor(h / 2);
    const b = this.b;
    let p = this.p;
    let s = "";
    if (h % 2 === 0) {
      const end = p + len;
      for (let q = p; q < end; q += 8192) {
        s += String.fromCharCode.apply(null, b.subarray(q, Math.min(end, q + 8192)));
      }
      p = end;
    } else {
      const units = new Uint16Array(Math.min(len, 8192));
      for (let done = 0; done < len; ) {
        const n = Math.min(len - done, 8192);
        for (let i = 0; i < n; i++, p += 2) units[i] = b[p] | (b[p + 1] << 8);
        s += String.fromCharCode.apply(null, n === units.length ? units : units.subarray(0, n));
        done += n;
      }
    }
    this.p = p;
    return s;
  }

  /** An entry's or field's head: sets `name`, skips clocks and size; returns the kind. */
  head() {
    const f = this.b[this.p++];
    this.name = this.str();
    this.p += 8 + (f & 4 ? 8 : 0) + (f & 8 ? 8 : 0);
    if (f & 16) this.varint();
    return f & 3;
  }

  bytes(n) {
    const out = this.b.slice(this.p, this.p + n);
    this.p += n;
    return out;
  }

  value() {
    const t = this.b[this.p++];
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
        const start = this.p;
        const z = this.varint();
        if (z <= MAX_SAFE) return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
        this.p = start;
        const zb = this.bigVarint();
        return Number(zb & 1n ? -((zb + 1n) >> 1n) : zb >> 1n);
      }
      case F_FLOAT:
        return this.f64();
      case F_STRING:
        return this.str();
      case F_ARRAY: {
        const n = this.varint();
        const a = [];
        for (let i = 0; i < n; i++) a.push(this.value());
        return a;
      }
      case F_OBJECT:
      case F_NULL_OBJECT: {
        const n = this.varint();
        const o = t === F_OBJECT ? {} : Object.create(null);
        for (let i = 0; i < n; i++) {
          const k = this.str();
          const x = this.value();
          if (k === "__proto__") {
            Object.defineProperty(o, k, { value: x, writable: true, enumerable: true, configurable: true });
          } else {
            o[k] = x;
          }
        }
        return o;
      }
      case F_BYTES:
        return this.bytes(this.varint());
      case F_DATE:
        return new Date(this.f64());
      case F_MAP: {
        const n = this.varint();
        const m = new Map();
        for (let i = 0; i < n; i++) {
          const k = this.value();
          m.set(k, this.value());
        }
        return m;
      }
      case F_BIGINT:
      case F_NEG_BIGINT: {
        const mag = this.bytes(this.varint());
        let hex = "";
        for (let i = 0; i < mag.length; i++) hex += (mag[i] < 16 ? "0" : "") + mag[i].toString(16);
        const v = hex === "" ? 0n : BigInt("0x" + hex);
        return t === F_NEG_BIGINT ? -v : v;
      }
      default:
        throw new Error(`snapshot: internal: bad value tag ${t}`);
    }
  }
}
