// The subjects, configured as close to each other as their APIs allow.
// Every factory gets the libraries injected, so the same code runs in Node
// and in the browser page (which loads them by URL).
//
//   lapse      TtlCache: `ttl` (absolute) + `idle` (sliding window)
//   lru-cache  LRUCache: `ttl` + `updateAgeOnGet: true` (its closest thing to an idle window)
//   ttlcache   @isaacs/ttlcache TTLCache: `ttl` (no sliding; see SLIDING_NOTE)
//   map        a bare Map (no expiry at all): the floor for a JS-keyed store;
//              with a capacity bound, a Map with FIFO eviction (oldest insert out)
//   floor      ClockMap: a Map plus one [abs, last, idle] row per entry, the
//              least any cache with a sliding deadline per entry must do; (a), (b) only

export const HOUR = 3_600_000;
export const TTL = HOUR; // long enough that nothing expires during a timed loop
export const IDLE = 10 * 60_000;

export const SLIDING_NOTE =
  "ttlcache runs (a) without updateAgeOnGet: its updateAgeOnGet re-files the key by " +
  "Array.filter over the whole expiration bucket (all keys written in the same ms), " +
  "which makes a 100k-key read pass take minutes";

/**
 * A Map with a size bound and FIFO eviction (the floor for a bounded JS-keyed
 * store). Insertion order is kept in a ring of keys: evicting with
 * `m.delete(m.keys().next().value)` would be O(deleted entries) per call in
 * V8 (the iterator walks over the holes deletions leave at the table's front
 * until the next rehash), which is no floor at all.
 */
export class FifoMap {
  constructor(cap) {
    this.m = new Map();
    this.cap = cap;
    this.ring = new Array(cap).fill("");
    this.head = 0;
  }
  get(k) {
    return this.m.get(k);
  }
  set(k, v) {
    const m = this.m;
    if (!m.has(k)) {
      if (m.size >= this.cap) m.delete(this.ring[this.head]);
      this.ring[this.head] = k;
      this.head = this.head + 1 === this.cap ? 0 : this.head + 1;
    }
    m.set(k, v);
    return this;
  }
  get size() {
    return this.m.size;
  }
}

/**
 * The floor for a cache with a sliding deadline per entry: a Map from key to
 * row, the row's [abs, last, idle] clocks in a Float64Array and the value in
 * an array. `get` checks the deadline and restarts the idle window; `set`
 * writes the row. No expiry index, no eviction order, no sweeping, no
 * validation: what is left of a TTL cache when all of that is free. The gap
 * between this and a bare Map is the price of one clock row per entry.
 */
export class ClockMap {
  constructor(ttl, idle) {
    this.m = new Map();
    this.t = new Float64Array(3 * 1024);
    this.v = [];
    this.ttl = ttl;
    this.idle = idle;
    this.now = Date.now();
  }
  get(k) {
    const s = this.m.get(k);
    if (s === undefined) return undefined;
    const t = this.t;
    const i = s * 3;
    const now = this.now;
    if (t[i] > now && t[i + 1] + t[i + 2] > now) {
      t[i + 1] = now;
      return this.v[s];
    }
    return undefined;
  }
  set(k, v) {
    let s = this.m.get(k);
    if (s === undefined) {
      s = this.m.size;
      if (s * 3 >= this.t.length) {
        const t = new Float64Array(this.t.length * 2);
        t.set(this.t);
        this.t = t;
      }
      this.m.set(k, s);
    }
    const t = this.t;
    const i = s * 3;
    const now = this.now;
    t[i] = now + this.ttl;
    t[i + 1] = now;
    t[i + 2] = this.idle;
    this.v[s] = v;
    return this;
  }
  get size() {
    return this.m.size;
  }
}

/**
 * The hash baseline for (f): Map<key, Map<field, {value, exp}>>, checking the
 * field's deadline on read (lazily deleting it). No sweeping, no idle window.
 */
export class MapOfMaps {
  constructor() {
    this.m = new Map();
    this.now = 0;
  }
  hset(key, field, value, opts) {
    let h = this.m.get(key);
    if (h === undefined) {
      h = new Map();
      this.m.set(key, h);
    }
    const isNew = !h.has(field);
    h.set(field, { value, exp: this.now + opts.ttl });
    return isNew;
  }
  hget(key, field) {
    const h = this.m.get(key);
    if (h === undefined) return undefined;
    const e = h.get(field);
    if (e === undefined) return undefined;
    if (e.exp <= this.now) {
      h.delete(field);
      if (h.size === 0) this.m.delete(key);
      return undefined;
    }
    return e.value;
  }
}

const noTick = () => {};

/**
 * Subjects for the key/value workloads (a)–(d).
 * `make(max)` builds an empty cache holding at most `max` entries (Infinity:
 * unbounded where the library allows it). `tick(c)` is called every 1024 ops:
 * lapse is host-driven, so the loop advances its clock with Date.now() as an
 * app's timer would; the others read their own clocks.
 */
export function kvSubjects({ TtlCache, LRUCache, TTLCache }) {
  return [
    {
      name: "lapse",
      make: (max, sliding) =>
        new TtlCache({ ttl: TTL, idle: sliding ? IDLE : Infinity, maxEntries: max }),
      tick: (c) => c.tick(Date.now()),
    },
    {
      name: "lru-cache",
      make: (max, sliding) => new LRUCache({ max, ttl: TTL, updateAgeOnGet: sliding }),
      tick: noTick,
    },
    {
      name: "ttlcache",
      make: (max) => new TTLCache({ max, ttl: TTL }),
      tick: noTick,
      // An overwrite re-files the key with Array.filter over its expiration
      // bucket (every key written in the same ms): O(keys/ms) per overwrite.
      // Its (b) overwrites are timed over the first `overwriteOps` of the order
      // (per repetition).
      overwriteOps: 5_000,
      // Over capacity, each eviction (purgeToCapacity) starts a for-in over
      // every expiration bucket: at 1M keys a (c) round did not finish in
      // 5 minutes, so (c)/(d) run it up to this keyspace only.
      maxZipfKeys: 100_000,
      done: (c) => c.cancelTimer(),
    },
    {
      name: "map",
      make: (max) => (max === Infinity ? new Map() : new FifoMap(max)),
      tick: noTick,
    },
    {
      name: "floor",
      make: (max, sliding) => new ClockMap(TTL, sliding ? IDLE : Infinity),
      tick: (c) => {
        c.now = Date.now();
      },
      maxZipfKeys: 0, // no eviction: not a subject for (c)/(d)
    },
  ];
}

/**
 * Subjects for the expiry churn (e), on a virtual clock starting at 0.
 * `drive(c, now)` advances the clock and reclaims expired entries; it
 * returns how many it removed, or -1 to count by size.
 *
 *   lapse      tick(now), default sweepBudget (1000)
 *   lru-cache  `perf: {now}` option = the virtual clock; purgeStale() each step
 *              (a full scan of the cache: unbounded pause)
 *   ttlcache   its timer would call purgeStale(); we cancel the timer and call
 *              purgeStale() each step, with performance.now patched to the
 *              virtual clock for the duration (it has no clock option)
 */
export const CHURN_T0 = 1_000_000; // not 0: lru-cache reads a start time of 0 as "no TTL"

export function churnSubjects({ TtlCache, LRUCache, TTLCache }) {
  const clock = { t: CHURN_T0, now: () => clock.t };
  return [
    {
      name: "lapse",
      make: () => new TtlCache({ now: CHURN_T0 }),
      drive: (c, now) => c.tick(now),
    },
    {
      name: "lru-cache",
      make: (n, period) => {
        // ttlResolution 0: read the clock on every check; with the default (1 ms,
        // reset by a setTimeout) its clock stands still inside a synchronous loop.
        return new LRUCache({ max: n, ttl: period, perf: clock, ttlResolution: 0 });
      },
      drive: (c, now) => {
        clock.t = now;
        c.purgeStale();
        return -1;
      },
    },
    {
      name: "ttlcache",
      patchClock: true,
      make: () => new TTLCache({}),
      filled: (c) => c.cancelTimer(),
      drive: (c, now) => {
        clock.t = now;
        c.purgeStale();
        return -1;
      },
      done: (c) => c.cancelTimer(),
    },
  ].map((s) => ({ ...s, clock }));
}

/** Subjects for hash fields (f). */
export function hashSubjects({ TtlCache }) {
  return [
    { name: "lapse", make: () => new TtlCache({}), tick: (c) => c.tick(Date.now()) },
    {
      name: "map-of-maps",
      make: () => {
        const m = new MapOfMaps();
        m.now = Date.now();
        return m;
      },
      tick: (c) => {
        c.now = Date.now();
      },
    },
  ];
}
