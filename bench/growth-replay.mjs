// Replays the wasm heap's high-water mark for a bounded fill, for every order
// in which `Engine::try_grow` could grow its columns:
//
//   node bench/growth-replay.mjs [--sizes 100000,250000,1000000] [--cols T:8,Q:8,K:1,W:8] [--first T] [--jump 16]
//
// Wasm memory never shrinks, so memory per entry is the peak the growing
// columns reach, and that depends on whether each new block fits in the ranges
// the last growth freed: doubling all the way, it swung with the fill's size
// and with the order the columns move in, by 20 B an entry or more. The
// columns now jump to their bound at 1/`jump` of it (room.rs; 0: never), and
// only the small generations are left behind. Measuring one order costs a
// build and a fresh process per size; this replays the same allocations
// against a model of src/heap.rs (first fit over freed 4 KB ranges, merged
// with neighbours, in-place growth into a following range or at the top;
// small classes below 4 KB) in milliseconds. It matched bench/memory.mjs to
// 0.05 MB at 1M and tests/js/memory-per-entry.test.mjs to 0.1 B an entry at
// 250k on 4508d34. Keep it in step with heap.rs, room.rs (try_room,
// try_grow) and binding.rs (room, reserve) when they change.
//
// Columns are letters with bytes per slot (`--cols`: T the clocks, narrow 8
// or wide 16, Q the queues' links, K the slot bytes, W the wheel's links); G
// is the removal log (12 B per slot in use, reserved after the columns unless
// placed in the order, as until session 7; `--chunk 4096`, the default,
// models the bounded log since). The fill is the JS host's: `reserve(256)`
// calls, each `try_room(256, used + 256)` (the log's room since: none).

import { parseArgs } from "./lib/options.mjs";

const args = parseArgs(process.argv.slice(2));
const sizes = (typeof args.sizes === "string" ? args.sizes : "100000,250000,500000,1000000,2000000")
  .split(",")
  .map(Number);
const cols = Object.fromEntries(
  (typeof args.cols === "string" ? args.cols : "T:8,Q:8,K:1,W:8").split(",").map((c) => {
    const [k, w] = c.split(":");
    return [k, w.split("+").map(Number)];
  }),
);
const first = typeof args.first === "string" ? args.first : "";
// The log's records a call reserves: every slot in use (before session 7), or
// a bounded chunk (`--chunk 4096`, protocol's LOG_CHUNK: then the log keeps
// its block through growth and takes no place in the order).
const chunk = typeof args.chunk === "string" ? Number(args.chunk) : 4096;
const jump = typeof args.jump === "string" ? Number(args.jump) : 16;
const logWords = (used, slots) => 3 * Math.min(used + slots + (chunk === Infinity ? 0 : 2), chunk);

const SMALL = 4096;
function cls(size) {
  const s = Math.max(size, 8);
  if (s > SMALL) return [null, Math.ceil(s / SMALL) * SMALL];
  const bits = 32 - Math.clz32(s - 1);
  const pow = 2 ** bits;
  if (pow >= 32 && s <= 3 * (pow >> 2)) return [2 * bits - 1, 3 * (pow >> 2)];
  return [2 * bits, pow];
}

class Heap {
  constructor() {
    this.top = this.base = 1 << 20;
    this.peak = this.top;
    this.free = new Map();
    this.ranges = []; // [start, end), oldest first
  }
  bump(n) {
    const a = this.top;
    this.top += n;
    this.peak = Math.max(this.peak, this.top);
    return a;
  }
  alloc(size) {
    const [i, b] = cls(size);
    if (i !== null) return this.free.get(i)?.pop() ?? this.bump(b);
    const k = this.ranges.findIndex(([a, e]) => e - a >= b);
    if (k < 0) return this.bump(b);
    const [a, e] = this.ranges[k];
    if (e - a === b) this.ranges.splice(k, 1);
    else this.ranges[k] = [a + b, e];
    return a;
  }
  release(a, b) {
    const out = [];
    for (const [x, y] of this.ranges) {
      if (y === a || x === b) [a, b] = [Math.min(a, x), Math.max(b, y)];
      else out.push([x, y]);
    }
    if (b === this.top) this.top = a;
    else out.push([a, b]);
    this.ranges = out;
  }
  dealloc(p, size) {
    const [i, b] = cls(size);
    if (i !== null) {
      if (!this.free.has(i)) this.free.set(i, []);
      this.free.get(i).push(p);
    } else this.release(p, p + b);
  }
  resize(p, old, neu) {
    const end = p + old;
    if (neu <= old) {
      if (neu < old) this.release(p + neu, end);
      return true;
    }
    if (end === this.top) {
      this.top = p + neu;
      this.peak = Math.max(this.peak, this.top);
      return true;
    }
    const k = this.ranges.findIndex(([a, e]) => a === end && e >= p + neu);
    if (k < 0) return false;
    const [, e] = this.ranges[k];
    if (e === p + neu) this.ranges.splice(k, 1);
    else this.ranges[k] = [p + neu, e];
    return true;
  }
  realloc(p, size, neu) {
    const [i, old] = cls(size);
    const [j, b] = cls(neu);
    if (i === j && (i !== null || this.resize(p, old, b))) return p;
    const q = this.alloc(neu);
    this.dealloc(p, size);
    return q;
  }
}

class Vec {
  constructor(h, w) {
    Object.assign(this, { h, w, cap: 0, p: null });
  }
  setCap(c) {
    if (c === this.cap) return;
    this.p = this.p === null ? this.h.alloc(c * this.w) : this.h.realloc(this.p, this.cap * this.w, c * this.w);
    this.cap = c;
  }
  reserveExact(n) {
    if (n > this.cap) this.setCap(n);
  }
  reserve(n) {
    if (n > this.cap) this.setCap(Math.max(n, 2 * this.cap, 4));
  }
  drop() {
    if (this.p !== null) this.h.dealloc(this.p, this.cap * this.w);
    this.p = null;
    this.cap = 0;
  }
}

/** Peak heap bytes of a fill of n entries into maxEntries n, growing in `order`. */
function replay(order, n) {
  const h = new Heap();
  const vecs = Object.fromEntries(Object.entries(cols).map(([k, ws]) => [k, ws.map((w) => new Vec(h, w))]));
  const log = new Vec(h, 4);
  const hashes = new Vec(h, 12);
  const hashFree = new Vec(h, 4);
  new Vec(h, 4).reserveExact(256); // the binding's insert queue
  const bound = n + 512;
  let len = 0;
  let used = 0;
  let buckets = false;
  while (used < n) {
    const slots = 256;
    const need = used + slots;
    if (need > len) {
      const double = len < bound && jump > 0 && len * jump >= bound ? bound : len < bound ? Math.min(len * 2, bound) : len * 2;
      const extra = Math.max(need, double, 8) - len;
      if (chunk === Infinity) log.drop();
      for (const k of order) {
        if (k === "G") {
          if (chunk === Infinity) log.reserve(logWords(used, slots));
          continue;
        }
        if (k === "W" && !buckets) {
          h.alloc(704 * 12);
          buckets = true;
        }
        for (const v of vecs[k]) v.reserveExact(len + extra);
      }
      len += extra;
    }
    log.reserve(logWords(used, slots));
    hashes.reserve(slots);
    hashFree.reserve(slots);
    used += slots;
  }
  return h.peak - h.base;
}

function* orders(items) {
  if (items.length <= 1) {
    yield items;
    return;
  }
  for (let i = 0; i < items.length; i++) {
    for (const rest of orders([...items.slice(0, i), ...items.slice(i + 1)])) yield [items[i], ...rest];
  }
}

const rows = [];
for (const o of orders([...Object.keys(cols), ...(chunk === Infinity ? ["G"] : [])])) {
  if (!o.join("").startsWith(first)) continue;
  const perEntry = sizes.map((n) => replay(o, n) / n);
  rows.push({ order: o.join(""), mean: perEntry.reduce((a, b) => a + b) / perEntry.length, perEntry });
}
rows.sort((a, b) => a.mean - b.mean);
console.log(`wasm heap bytes per entry at ${sizes.join(", ")} (columns ${JSON.stringify(cols)}; G = the log)`);
for (const r of rows) console.log(r.order.padEnd(8), r.mean.toFixed(1).padStart(6), r.perEntry.map((x) => x.toFixed(1).padStart(6)).join(""));
