import type { TtlCache, TtlCacheOptions } from "lapse";

/** A Keyv store (Keyv 5 and 6, cache-manager 7, cacheable) backed by a lapse `TtlCache`. */
export declare class KeyvLapse {
  constructor(options?: TtlCacheOptions<any> | ({ cache: TtlCache<any> } & { [K in keyof TtlCacheOptions]?: never }));
  readonly cache: TtlCache<any>;
  opts: Record<string, unknown>;
  namespace?: string;
  get(key: string): Promise<any>;
  getMany(keys: string[]): Promise<any[]>;
  /**
   * `ttl` in ms. `undefined`: the store's default `ttl` (none unless given to
   * the constructor); 0, Infinity or NaN: no expiry, whatever the default (as
   * Keyv means them); negative: already expired (the key is removed).
   */
  set(key: string, value: any, ttl?: number): Promise<boolean>;
  /** Checks every entry before it writes any. */
  setMany(entries: Array<{ key: string; value: any; ttl?: number }>): Promise<boolean[]>;
  /**
   * No `deleteMany`: Keyv 5 expects one boolean from it and Keyv 6 one per key;
   * without it each falls back to `delete` per key and returns its own shape.
   */
  delete(key: string): Promise<boolean>;
  has(key: string): Promise<boolean>;
  hasMany(keys: string[]): Promise<boolean[]>;
  clear(): Promise<void>;
  iterator(namespace?: string): AsyncGenerator<[string, any]>;
  disconnect(): Promise<void>;
}
export default KeyvLapse;
