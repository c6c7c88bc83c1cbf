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
  now?: number | undefined;
  /**
   * Follow this clock (ms) instead of `Date.now()`, e.g.
   * `() => performance.timeOrigin + performance.now()` or a fake clock. Read
   * at most once per synchronous run of JS; a reading earlier than the last
   * is ignored (time never runs backwards). With `now`: `TypeError`.
   */
  clock?: (() => number) | undefined;
  /** Default absolute lifetime of an entry or hash field, in ms from its write (positive, or `Infinity` for none). Default `Infinity`. */
  ttl?: number | undefined;
  /** Default sliding idle window, in ms: `get`, `hget` and `touch` restart it (positive, or `Infinity` for none). Default `Infinity`. */
  idle?: number | undefined;
  /** Most entries held at once (plain entries plus hash fields): an integer from 1 to 2^53 - 1. Default `Infinity`. */
  maxEntries?: number | undefined;
  /** Most total size held at once, as measured by `sizeOf`: an integer from 1 to 2^53 - 1. Default `Infinity`. */
  maxBytes?: number | undefined;
  /**
   * Size of one value for `maxBytes`: an integer from 0 to 2^32-1. Called on
   * every write when given (its sum is `stats().bytes`, with or without
   * `maxBytes`); `field` is the hash field, or `undefined` for a plain entry.
   */
  sizeOf?: ((value: V, key: string, field: string | undefined) => number) | undefined;
  /**
   * Most expired entries one `tick()` removes; each write also reclaims a
   * few (two per write, whatever this is). Default 1000; 0 turns all
   * sweeping off, the writes' reclaim included (reads still never return
   * an expired entry; `purge()` still works).
   */
  sweepBudget?: number | undefined;
  /**
   * Called once for each value that leaves the cache, after the cache's state
   * is complete. `field` is the hash field, or `undefined` for a plain entry.
   */
  dispose?: ((value: V, key: string, reason: DisposeReason, field: string | undefined) => void) | undefined;
  /**
   * Default for `fetch`/`hfetch`: a fetch that finds a live entry written
   * more than `refresh` ms ago resolves to it at once and starts one
   * background load whose result replaces it (refresh-ahead). A non-negative
   * number or `Infinity`. Default: none.
   */
  refresh?: number | undefined;
  /**
   * After an entry's deadline its last value is kept `grace` ms more as a
   * fallback for `fetch`/`hfetch` only: a failed load then resolves to it
   * (stale-if-error). No other read, nor `size`, sees it; `dispose(…,
   * "expired")` runs when its grace ends or a new value replaces it. A
   * non-negative number or `Infinity`. Default 0 (none).
   */
  grace?: number | undefined;
  /**
   * Hears the errors of loads that reject no caller: background refreshes
   * and loads answered with a stale value. A load whose signal this cache
   * aborted (a write, delete, expire, eviction, clear or `free()` of its key
   * won, or every waiter stopped waiting) is not heard: its error is most
   * likely that abort. No load error ever becomes an unhandled rejection.
   */
  onLoadError?: ((error: unknown, key: string, field: string | undefined) => void) | undefined;
}

/** What a loader receives besides the key (and field). */
export interface LoaderContext {
  /**
   * Aborted when the load's result is no longer wanted: a write, delete,
   * expire, eviction or clear of its key won over it, or every caller
   * stopped waiting (their `signal`s).
   */
  readonly signal: AbortSignal;
}

/** `fetch`/`hfetch` options. `ttl` and `expireAt` exclude each other. */
export type FetchOptions = (
  | {
      /** Lifetime of the loaded value in ms (positive, or `Infinity`). Default: the constructor's `ttl`. */
      ttl?: number | undefined;
      /** Idle window of the loaded value in ms (positive, or `Infinity`). */
      idle?: number | undefined;
      expireAt?: never;
    }
  | {
      /** Absolute deadline of the loaded value: a time in ms or a `Date`. */
      expireAt: Time;
      idle?: number | undefined;
      ttl?: never;
    }
) & {
  /** Refresh-ahead age in ms for this fetch (see the constructor's `refresh`). */
  refresh?: number | undefined;
  /** Grace in ms of the value this fetch stores (see the constructor's `grace`). */
  grace?: number | undefined;
  /** Stops this caller's wait (its promise rejects with `signal.reason`); the load goes on for other waiters. */
  signal?: AbortSignal | undefined;
};

/**
 * What `fetch` resolves to: the cached value or the loader's. On a cache
 * typed `TtlCache<unknown>` (the default) the loader's type is taken at its
 * word: the cache cannot check what other code stored under the key.
 */
export type Fetched<V, T> = unknown extends V ? T : V | T;

/**
 * Per-write options for `set` and `hset`. `ttl` and `expireAt` exclude each
 * other; `keepTtl` excludes the other three (a `TypeError` at run time).
 */
export type SetOptions =
  | {
      /**
       * Absolute lifetime in ms from this write (positive, or `Infinity`). Overrides the constructor's `ttl`.
       * The deadline is `now + ttl` as a double: if that rounds to `now` (a ttl below the clock's
       * resolution) the write stores nothing and deletes the key; if a finite ttl overflows it to
       * `Infinity`, `RangeError` ("too large for the clock").
       */
      ttl?: number | undefined;
      /** Idle window in ms (positive, or `Infinity`). Overrides the constructor's `idle`. */
      idle?: number | undefined;
      expireAt?: never;
      keepTtl?: false;
    }
  | {
      /** Absolute deadline: a time in ms (the cache's clock domain) or a `Date`. */
      expireAt: Time;
      /** Idle window in ms (positive, or `Infinity`). */
      idle?: number | undefined;
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
  sizeOf?: ((value: V, key: string, field: string | undefined) => number) | undefined;
  dispose?: ((value: V, key: string, reason: DisposeReason, field: string | undefined) => void) | undefined;
  /** A manual clock at `now` ms (or at the snapshot's time, if later). With `clock`: `TypeError`. */
  now?: number | undefined;
  /** Follow this clock. With `now`: `TypeError`. */
  clock?: (() => number) | undefined;
  /** As the constructor's: snapshots hold no loading options (nor per-entry grace). */
  refresh?: number | undefined;
  grace?: number | undefined;
  onLoadError?: ((error: unknown, key: string, field: string | undefined) => void) | undefined;
}

/**
 * The options the runtime refuses together, as types: `now` and `clock`
 * exclude each other, and `maxBytes` needs `sizeOf` (each a `TypeError`).
 */
export type ClockChoice =
  | { now?: number | undefined; clock?: undefined }
  | { clock?: (() => number) | undefined; now?: undefined };
export type BytesChoice<V> =
  | { maxBytes?: undefined }
  | { maxBytes: number; sizeOf: (value: V, key: string, field: string | undefined) => number };

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
  /** Entries and fields removed by `delete`/`hdel` or `expire(key, ms <= 0)` (not `clear()`). */
  deleted: number;
  /** Keys held, as `cache.size`. */
  size: number;
  /** Entries held: plain entries plus hash fields, with the expired values kept for `grace` (`size` leaves those out; a write that needs room drops them before it evicts anything). */
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
  /** Loader calls made by `fetch`/`hfetch` (refreshes included). */
  loads: number;
  /** Loads that threw or rejected (or whose result could not be stored). */
  loadErrors: number;
  /** Fetches that joined a running load instead of starting one. */
  coalesced: number;
  /** Background loads started by `refresh`. */
  refreshes: number;
  /** Fetches answered with a value in grace after their load failed. */
  staleServed: number;
}

/**
 * A TTL cache with string keys. Every entry may carry an absolute lifetime
 * (`ttl`/`expireAt`) and a sliding idle window (`idle`); it expires at the
 * earlier of the two. No `init()` call is needed.
 */
export declare class TtlCache<V = unknown> implements Iterable<[string, Entry<V>]> {
  // Nominal: the ESM and CommonJS builds are two classes at run time (a
  // cache of one is refused where the other's is expected), so as types.
  #private;
  constructor(options?: TtlCacheOptions<V> & ClockChoice & BytesChoice<V>);

  /** Rebuilds a cache from `snapshot()` bytes. Corrupt bytes throw `Error`. */
  static restore<V = unknown>(bytes: Uint8Array, options?: RestoreOptions<V> & ClockChoice): TtlCache<V>;

  /** The cache's clock, in ms (reads a followed clock if this run has not yet). */
  readonly now: number;
  /** Keys held (expired ones not yet swept may count). */
  readonly size: number;

  /**
   * Advances the clock to `now` (ms or a `Date`; default: a fresh reading of the followed
   * clock, or `Date.now()` for a manual one; earlier times are ignored),
   * then removes at most `sweepBudget` expired entries. Never needed for
   * correctness: reads never return an expired entry and writes reclaim
   * expired ones; hosts call it to sweep on their own schedule.
   * @returns how many it removed
   */
  tick(now?: number | Date): number;
  /**
   * A time (ms) at or before the earliest deadline the cache holds, or
   * `Infinity` if none: when to call `tick()` next (a Durable Object alarm,
   * a `setTimeout`). It can be early, never late. With `sweepBudget: 0`,
   * expired entries stay held and count: purge (a tick removes nothing)
   * when it comes.
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
  /** Absolute deadline = now + `ms` (any finite number; `ms <= 0`, or a sum that rounds to now, deletes; a sum that overflows is a `RangeError`). */
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
  // Starting one first removes the expired entries, as `purge()` does,
  // `dispose` included (`snapshot()` does once its bytes are written; with
  // `sweepBudget: 0`, neither does).

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
  /**
   * Everything, deadlines included, in a versioned, checksummed format. Throws `TypeError` for a value with no data form.
   * A fresh copy over its own `ArrayBuffer` (`Uint8Array<ArrayBuffer>` where TypeScript has typed arrays' buffers: 5.7 on).
   */
  snapshot(): ReturnType<Uint8Array["slice"]>;

  // ---- loading: coalesced loads, refresh-ahead, stale-if-error

  /**
   * The live value at `key` (a hit, as `get`), or else the result of one
   * `loader(key, { signal })` call shared by every fetch of `key` while it
   * runs, stored with `options` (`undefined` stores nothing). Bad arguments
   * reject with `TypeError`/`RangeError`; nothing is thrown synchronously.
   * The result is typed by this call's loader; a fetch that joins another
   * caller's load gets that load's result, `undefined` if its loader gave it.
   */
  fetch<T extends Defined<V> | undefined>(
    key: string,
    loader: (key: string, context: LoaderContext) => T | PromiseLike<T>,
    options?: FetchOptions,
  ): Promise<Fetched<V, T>>;
  /** As `fetch`, for one hash field: `loader(key, field, { signal })`. */
  hfetch<T extends Defined<V> | undefined>(
    key: string,
    field: string,
    loader: (key: string, field: string, context: LoaderContext) => T | PromiseLike<T>,
    options?: FetchOptions,
  ): Promise<Fetched<V, T>>;

  // ---- hashes: string fields with their own expiry (Redis 7.4 HEXPIRE family)

  /** Writes one field of the hash at `key`. @returns `true` if the field is new */
  hset(key: string, field: string, value: Defined<V>, options?: SetOptions): boolean;
  /** Reads a field; restarts the field's and the key's idle windows. */
  hget(key: string, field: string): V | undefined;
  hhas(key: string, field: string): boolean;
  hdel(key: string, field: string): boolean;
  /** Live fields (the expired ones it passes are removed, with their `dispose`). */
  hlen(key: string): number;
  /** The live fields, as a new `Map` (the expired ones it passes are removed, with their `dispose`). */
  hgetall(key: string): Map<string, V>;
  /** The field's absolute deadline = now + `ms`. */
  hexpire(key: string, field: string, ms: number, cond?: Cond): boolean;
  /** The field's absolute deadline = `time` (ms or `Date`). */
  hexpireAt(key: string, field: string, time: Time, cond?: Cond): boolean;
  hpersist(key: string, field: string): boolean;
  /** As `ttl`, for one field. */
  httl(key: string, field: string): number | undefined;
}
