// Type declarations for `lapse`: a TTL cache (absolute + sliding idle expiry,
// per-field expiry on hashes) written in Rust and compiled to WebAssembly.
//
// Time is always a number of MILLISECONDS; the cache never starts a timer. By
// default it follows `Date.now()`, read lazily (at most once per synchronous
// run of JS), so entries expire on time with no `tick()`; `clock` follows
// another clock, `now` gives a manual clock that moves only with `tick(t)`.

/** Condition for `expire`/`expireAt`/`hexpire`/`hexpireAt`, as in Redis `EXPIRE`. */
export type Cond =
  /** only if the entry has no absolute deadline */
  | "NX"
  /** only if it has one */
  | "XX"
  /** only if the new deadline is later (no deadline counts as infinite) */
  | "GT"
  /** only if the new deadline is earlier */
  | "LT";

/** Why `dispose` was called. */
export type DisposeReason = "expired" | "evicted" | "deleted" | "replaced" | "cleared";

/** A point in time: milliseconds in the cache's clock domain, or a valid `Date`. */
export type Time = number | Date;

/** Any value but `undefined` (which means "missing" on reads). */
export type Defined<V> = V & ({} | null);

/** What iteration yields for a key: its value, or for a hash key a `Map` of its live fields. */
export type Entry<V> = V | Map<string, V>;

/** Constructor options. All optional; an unknown option name throws `TypeError`. */
export interface TtlCacheOptions<V = unknown> {
  /**
   * A manual clock starting at `now` ms, which moves only when you call
   * `tick(t)` (deterministic tests, simulations). Without it (and without
   * `clock`) the cache follows `Date.now()`. With `clock`: `TypeError`.
   */
  now?: number;
  /**
   * Follow this clock (ms) instead of `Date.now()`, e.g.
   * `() => performance.timeOrigin + performance.now()` or a fake clock. Read
   * at most once per synchronous run of JS; a reading earlier than the last
   * is ignored (time never runs backwards). With `now`: `TypeError`.
   */
  clock?: () => number;
  /** Default absolute lifetime of an entry or hash field, in ms from its write (positive, or `Infinity` for none). Default `Infinity`. */
  ttl?: number;
  /** Default sliding idle window, in ms: `get`, `hget` and `touch` restart it (positive, or `Infinity` for none). Default `Infinity`. */
  idle?: number;
  /** Most entries held at once (plain entries plus hash fields). Default `Infinity`. */
  maxEntries?: number;
  /** Most total size held at once, as measured by `sizeOf`. Default `Infinity`. */
  maxBytes?: number;
  /**
   * Size of one value for `maxBytes`: an integer from 0 to 2^32-1. Called on
   * every write while `maxBytes` is set; `field` is the hash field, or
   * `undefined` for a plain entry.
   */
  sizeOf?: (value: V, key: string, field: string | undefined) => number;
  /**
   * Most expired entries one `tick()` removes; each write also reclaims a
   * few (at most this many). Default 1000; 0 turns all sweeping off (reads
   * still never return an expired entry; `purge()` still works).
   */
  sweepBudget?: number;
  /**
   * Called once for each value that leaves the cache, after the cache's state
   * is complete. `field` is the hash field, or `undefined` for a plain entry.
   */
  dispose?: (value: V, key: string, reason: DisposeReason, field: string | undefined) => void;
}

/**
 * Per-write options for `set` and `hset`. `ttl` and `expireAt` exclude each
 * other; `keepTtl` excludes the other three (a `TypeError` at run time).
 */
export type SetOptions =
  | {
      /** Absolute lifetime in ms from this write (positive, or `Infinity`). Overrides the constructor's `ttl`. */
      ttl?: number;
      /** Idle window in ms (positive, or `Infinity`). Overrides the constructor's `idle`. */
      idle?: number;
      expireAt?: never;
      keepTtl?: false;
    }
  | {
      /** Absolute deadline: a time in ms (the cache's clock domain) or a `Date`. */
      expireAt: Time;
      /** Idle window in ms (positive, or `Infinity`). */
      idle?: number;
      ttl?: never;
      keepTtl?: false;
    }
  | {
      /** Keep the live entry's deadlines (as Redis `SET ... KEEPTTL`). */
      keepTtl: true;
      ttl?: never;
      idle?: never;
      expireAt?: never;
    };

/**
 * Options for `TtlCache.restore`: what snapshot bytes cannot hold. Without
 * `now` or `clock` the restored cache keeps the snapshot's clock mode:
 * manual at the snapshot's time, or following `Date.now()`. Either way its
 * clock never runs back behind the snapshot's time.
 */
export interface RestoreOptions<V = unknown> {
  sizeOf?: (value: V, key: string, field: string | undefined) => number;
  dispose?: (value: V, key: string, reason: DisposeReason, field: string | undefined) => void;
  /** A manual clock at `now` ms (or at the snapshot's time, if later). With `clock`: `TypeError`. */
  now?: number;
  /** Follow this clock. With `now`: `TypeError`. */
  clock?: () => number;
}

// `Symbol.dispose` for `using`, on a TypeScript lib older than ES2025's
// (declared the same way as @types/node and TypeScript's own lib do, so it
// merges with theirs).
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}

/** Counters and gauges returned by `stats()`. Times are in ms. */
export interface TtlCacheStats {
  /** Reads that found a live value. */
  hits: number;
  /** Reads that found nothing (or only an expired value). */
  misses: number;
  /** Entries and fields removed because they expired. */
  expired: number;
  /** Live entries and fields removed to respect `maxEntries`/`maxBytes`. */
  evicted: number;
  /** Entries and fields removed by `delete`/`hdel`/`clear` or `expire(key, ms <= 0)`. */
  deleted: number;
  /** Keys held, as `cache.size`. */
  size: number;
  /** Entries held: plain entries plus hash fields. */
  entries: number;
  /** Total `sizeOf` of the values held. */
  bytes: number;
  /** Writes that created an entry or field. */
  inserted: number;
  /** Writes that replaced a live entry or field. */
  updated: number;
  /** `tick()` calls. */
  ticks: number;
  /** Entries and fields removed by sweeps (`tick`, `purge` and the few each write reclaims). */
  swept: number;
  /** Timer-wheel entries moved to a later slot (e.g. an idle window restarted). */
  rescheduled: number;
  /** Timer-wheel entries moved down a level as time advanced. */
  cascaded: number;
  /** Deadlines currently scheduled in the timer wheel. */
  scheduled: number;
  /** `hits / (hits + misses)`, or 0 before any read. */
  hitRatio: number;
  /** Entries in the eviction policy's small (probationary) queue. */
  smallQueue: number;
  /** Bytes the engine's own tables use inside wasm memory. */
  engineBytes: number;
  /** Size of the module's WebAssembly memory, in bytes. */
  wasmBytes: number;
  /** The cache's clock, in ms. */
  now: number;
  /** The `maxEntries` bound (`Infinity` if none). */
  maxEntries: number;
  /** The `maxBytes` bound (`Infinity` if none). */
  maxBytes: number;
}

/**
 * A TTL cache with string keys. Every entry may carry an absolute lifetime
 * (`ttl`/`expireAt`) and a sliding idle window (`idle`); it expires at the
 * earlier of the two. No `init()` call is needed.
 */
export declare class TtlCache<V = unknown> implements Iterable<[string, Entry<V>]> {
  constructor(options?: TtlCacheOptions<V>);

  /** Rebuilds a cache from `snapshot()` bytes. Corrupt bytes throw `Error`. */
  static restore<V = unknown>(bytes: Uint8Array, options?: RestoreOptions<V>): TtlCache<V>;

  /** The cache's clock, in ms (reads a followed clock if this run has not yet). */
  readonly now: number;
  /** Keys held (expired ones not yet swept may count). */
  readonly size: number;

  /**
   * Advances the clock to `now` ms (default: a fresh reading of the followed
   * clock, or `Date.now()` for a manual one; earlier times are ignored),
   * then removes at most `sweepBudget` expired entries. Never needed for
   * correctness: reads never return an expired entry and writes reclaim
   * expired ones; hosts call it to sweep on their own schedule.
   * @returns how many it removed
   */
  tick(now?: number): number;
  /**
   * A time (ms) at or before the earliest deadline the cache holds, or
   * `Infinity` if none: when to call `tick()` next (a Durable Object alarm,
   * a `setTimeout`). It can be early, never late.
   */
  nextExpiry(): number;
  /** Removes every expired entry now. @returns how many */
  purge(): number;

  /** Writes `value` (anything but `undefined`) under `key`. */
  set(key: string, value: Defined<V>, options?: SetOptions): this;
  /** Reads a live value; restarts its idle window. */
  get(key: string): V | undefined;
  /** Reads a live value without touching it. */
  peek(key: string): V | undefined;
  /** Whether `key` is live (no touch). */
  has(key: string): boolean;
  /** Restarts the idle window. `false` if missing. */
  touch(key: string): boolean;
  /** Absolute deadline = now + `ms` (any finite number; `ms <= 0` deletes). */
  expire(key: string, ms: number, cond?: Cond): boolean;
  /** Absolute deadline = `time` (ms or `Date`); a past time deletes. */
  expireAt(key: string, time: Time, cond?: Cond): boolean;
  /** Drops both clocks. `true` if the key had one. */
  persist(key: string): boolean;
  /** Ms until the earliest deadline; `Infinity` if none; `undefined` if missing. */
  ttl(key: string): number | undefined;
  /** Removes `key`. */
  delete(key: string): boolean;
  /** Removes everything. */
  clear(): void;

  // Iteration visits live keys in insertion order, without touching them. A
  // hash key's value is a `Map` of its live fields, hence `Entry<V>`.

  /** Live keys (plain and hash). */
  keys(): IterableIterator<string>;
  /** Live values; a hash key gives a `Map` of its live fields. */
  values(): IterableIterator<Entry<V>>;
  /** Live `[key, value]` pairs; a hash key gives a `Map` of its live fields. */
  entries(): IterableIterator<[string, Entry<V>]>;
  [Symbol.iterator](): IterableIterator<[string, Entry<V>]>;
  forEach(callback: (value: Entry<V>, key: string, cache: this) => void, thisArg?: unknown): void;

  stats(): TtlCacheStats;
  /**
   * Returns the wasm memory this cache holds now (a dropped cache is freed
   * by the garbage collector, later). Afterwards every method throws an
   * `Error`; calling `free()` again does nothing.
   */
  free(): void;
  /** `free()`, for `using cache = new TtlCache()`. */
  [Symbol.dispose](): void;
  /** Everything, deadlines included, in a versioned, checksummed format. Throws `TypeError` for a value with no data form. */
  snapshot(): Uint8Array;

  // ---- hashes: string fields with their own expiry (Redis 7.4 HEXPIRE family)

  /** Writes one field of the hash at `key`. @returns `true` if the field is new */
  hset(key: string, field: string, value: Defined<V>, options?: SetOptions): boolean;
  /** Reads a field; restarts the field's and the key's idle windows. */
  hget(key: string, field: string): V | undefined;
  hhas(key: string, field: string): boolean;
  hdel(key: string, field: string): boolean;
  /** Live fields. */
  hlen(key: string): number;
  /** The live fields, as a new `Map`. */
  hgetall(key: string): Map<string, V>;
  /** The field's absolute deadline = now + `ms`. */
  hexpire(key: string, field: string, ms: number, cond?: Cond): boolean;
  /** The field's absolute deadline = `time` (ms or `Date`). */
  hexpireAt(key: string, field: string, time: Time, cond?: Cond): boolean;
  hpersist(key: string, field: string): boolean;
  /** As `ttl`, for one field. */
  httl(key: string, field: string): number | undefined;
}
