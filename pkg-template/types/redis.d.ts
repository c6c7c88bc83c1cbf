import type { Defined, TtlCache, TtlCacheOptions, TtlCacheStats } from "lapse";

/** A value codec between JS values and the strings stored in Redis (JSON by default). */
export interface Codec<V = unknown> {
  encode(value: V): string;
  decode(text: string): V;
}

/**
 * `NearCache.connect` options: the local `TtlCache`'s options, plus the Redis
 * side's. Not `now`/`clock` (the local copies follow the host's clock, as the
 * deadlines in Redis do) nor `grace`/`refresh`/`onLoadError` (`fetch` reads
 * Redis, then the loader, and keeps no stale copy): each throws `TypeError`.
 */
export interface NearCacheOptions<V = unknown> extends Omit<TtlCacheOptions<V>, "now" | "clock" | "grace" | "refresh" | "onLoadError"> {
  /**
   * JSON by default: a value read back from Redis is its JSON round trip (a
   * `Date` comes back a string, a `Map` an object), whatever `V` says. Give
   * a codec for values JSON does not carry.
   */
  codec?: Codec<V>;
  /**
   * Only keys under these prefixes are cached locally (and tracked by the
   * server). Overlapping prefixes (one starting another) throw `TypeError`, as
   * Redis refuses them.
   */
  prefix?: string | string[];
  /**
   * Extra node-redis `createClient` options (lapse sets `url`, `RESP: 3` and
   * tracking). node-redis retries a connection that fails, the first one
   * included: `connect` to a server that is down stays pending until it is
   * up. `{ socket: { reconnectStrategy: false } }` makes it reject instead
   * (and gives up on later disconnects too).
   */
  redis?: Record<string, unknown>;
}

export interface NearCacheSetOptions {
  /** Redis `PX` and the local copy's deadline, in ms. */
  ttl?: number;
}

/** The local cache's counters; `loads`, `loadErrors` and `coalesced` count this cache's `fetch`. */
export interface NearCacheStats extends TtlCacheStats {
  invalidations: number;
  remoteReads: number;
}

/** A `TtlCache` in front of Redis, kept coherent by RESP3 client tracking (broadcast mode). */
export declare class NearCache<V = unknown> {
  static connect<V = unknown>(url: string, options?: NearCacheOptions<V>): Promise<NearCache<V>>;
  private constructor();
  /** The local copies (read them; write through the NearCache). */
  readonly local: TtlCache<V>;
  /** The node-redis client. */
  readonly client: unknown;
  /**
   * Keys are well-formed Unicode: a lone surrogate has no UTF-8 form (node-redis
   * sends U+FFFD), so such a key throws `TypeError` rather than share its Redis
   * key with another. Errors from Redis or the codec name the key.
   */
  get(key: string): Promise<V | undefined>;
  set(key: string, value: Defined<V>, opts?: NearCacheSetOptions): Promise<this>;
  delete(key: string): Promise<boolean>;
  /**
   * The loader's `signal` is aborted once its result can no longer be stored:
   * the key changed (here or in any client), the connection dropped, or `close()`.
   */
  fetch<T extends V>(
    key: string,
    loader: (key: string, ctx: { signal: AbortSignal }) => T | undefined | Promise<T | undefined>,
    opts?: NearCacheSetOptions,
  ): Promise<V | T | undefined>;
  stats(): NearCacheStats;
  /**
   * Drops every local copy and closes the connection; later calls reject. With
   * the server reachable, commands already sent get their replies first;
   * while it is not, every call in flight rejects at once.
   */
  close(): Promise<void>;
}
