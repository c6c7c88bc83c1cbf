import type { TtlCache, TtlCacheOptions, TtlCacheStats } from "lapse";

/** A value codec between JS values and the strings stored in Redis (JSON by default). */
export interface Codec<V = unknown> {
  encode(value: V): string;
  decode(text: string): V;
}

/** `NearCache.connect` options: the local `TtlCache`'s options, plus the Redis side's. */
export interface NearCacheOptions<V = unknown> extends Omit<TtlCacheOptions<V>, "now" | "clock"> {
  /** JSON by default. */
  codec?: Codec<V>;
  /** Only keys under these prefixes are cached locally (and tracked by the server). */
  prefix?: string | string[];
  /** Extra node-redis `createClient` options (lapse sets `url`, `RESP: 3` and tracking). */
  redis?: Record<string, unknown>;
}

export interface NearCacheSetOptions {
  /** Redis `PX` and the local copy's deadline, in ms. */
  ttl?: number;
}

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
  get(key: string): Promise<V | undefined>;
  set(key: string, value: V, opts?: NearCacheSetOptions): Promise<this>;
  delete(key: string): Promise<boolean>;
  fetch<T extends V>(
    key: string,
    loader: (key: string, ctx: { signal: AbortSignal }) => T | undefined | Promise<T | undefined>,
    opts?: NearCacheSetOptions,
  ): Promise<V | T | undefined>;
  stats(): NearCacheStats;
  close(): Promise<void>;
}
