import type { Cond, Defined, Entry, SetOptions, TtlCache, TtlCacheOptions, TtlCacheStats } from "lapse";

/**
 * A value codec between JS values and the text stored in SQLite. Without
 * one, a value is stored as JSON where JSON gives it back unchanged, else
 * as snapshot bytes (every value `snapshot()` carries: NaN, -0, Dates,
 * Maps, Uint8Arrays, bigints, ...); what neither carries (a function, a
 * class instance, a Set, an array with holes) throws TypeError naming
 * `value`.
 */
export interface DurableCodec<V = unknown> {
  encode(value: V): string;
  decode(text: string): V;
}

export interface DurableCacheOptions<V = unknown> extends Omit<TtlCacheOptions<V>, "now"> {
  codec?: DurableCodec<V>;
}

/** The part of a Durable Object's state a DurableCache uses (SQLite-backed storage and its alarm). */
export interface DurableCacheState {
  storage: {
    sql: { exec(query: string, ...bindings: unknown[]): any };
    setAlarm(time: number): Promise<void> | void;
    deleteAlarm(): Promise<void> | void;
  };
}

/**
 * One `TtlCache` shared by every isolate of a Worker, in a Durable Object: each
 * write persisted as a row, the cache rebuilt from the rows when the object
 * wakes, expired entries swept by the object's alarm.
 */
export declare class DurableCache<V = unknown> implements Iterable<[string, Entry<V>]> {
  constructor(ctx: DurableCacheState, options?: DurableCacheOptions<V>);
  /** Call from the object's `alarm()`: sweeps what expired (rows too) and re-arms. */
  alarm(): Promise<void>;
  /** A key (or `hset`'s field) over 64 Ki UTF-16 units throws `RangeError`: a storage row holds it beside a value. */
  set(key: string, value: Defined<V>, opts?: SetOptions): this;
  get(key: string): V | undefined;
  peek(key: string): V | undefined;
  has(key: string): boolean;
  touch(key: string): boolean;
  expire(key: string, ms: number, cond?: Cond): boolean;
  expireAt(key: string, time: number | Date, cond?: Cond): boolean;
  persist(key: string): boolean;
  ttl(key: string): number | undefined;
  delete(key: string): boolean;
  clear(): void;
  hset(key: string, field: string, value: Defined<V>, opts?: SetOptions): boolean;
  hget(key: string, field: string): V | undefined;
  hhas(key: string, field: string): boolean;
  hdel(key: string, field: string): boolean;
  hlen(key: string): number;
  hgetall(key: string): Map<string, V>;
  hexpire(key: string, field: string, ms: number, cond?: Cond): boolean;
  hexpireAt(key: string, field: string, time: number | Date, cond?: Cond): boolean;
  hpersist(key: string, field: string): boolean;
  httl(key: string, field: string): number | undefined;
  tick(now?: number): number;
  purge(): number;
  nextExpiry(): number;
  readonly now: number;
  readonly size: number;
  keys(): IterableIterator<string>;
  values(): IterableIterator<Entry<V>>;
  entries(): IterableIterator<[string, Entry<V>]>;
  [Symbol.iterator](): IterableIterator<[string, Entry<V>]>;
  forEach(fn: (value: Entry<V>, key: string, cache: TtlCache<V>) => void, thisArg?: unknown): void;
  stats(): TtlCacheStats;
  /** `TtlCache.snapshot()`: the expired entries it passes leave storage too. */
  snapshot(): Uint8Array;
  /**
   * `TtlCache.fetch`, persisted: a hit's read as `get`'s, a load's result
   * (a refresh's included) as `set`'s row.
   */
  fetch: TtlCache<V>["fetch"];
  /** As `fetch`, for one hash field. */
  hfetch: TtlCache<V>["hfetch"];
  /** The TtlCache inside (read it; its set/hset are persisted, its other writes are not). */
  readonly local: TtlCache<V>;
}
