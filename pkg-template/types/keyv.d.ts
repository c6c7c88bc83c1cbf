import type { TtlCache, TtlCacheOptions } from "lapse";

/** A Keyv store (Keyv 5 and 6, cache-manager 7, cacheable) backed by a lapse `TtlCache`. */
export declare class KeyvLapse {
  constructor(options?: TtlCacheOptions<any> | { cache: TtlCache<any> });
  readonly cache: TtlCache<any>;
  opts: Record<string, unknown>;
  namespace?: string;
  get(key: string): Promise<any>;
  getMany(keys: string[]): Promise<any[]>;
  /** `ttl` in ms; `undefined`, 0 or Infinity: no expiry (as Keyv means it). */
  set(key: string, value: any, ttl?: number): Promise<boolean>;
  setMany(entries: Array<{ key: string; value: any; ttl?: number }>): Promise<boolean[]>;
  delete(key: string): Promise<boolean>;
  deleteMany(keys: string[]): Promise<boolean[]>;
  has(key: string): Promise<boolean>;
  hasMany(keys: string[]): Promise<boolean[]>;
  clear(): Promise<void>;
  iterator(namespace?: string): AsyncGenerator<[string, any]>;
  disconnect(): Promise<void>;
}
export default KeyvLapse;
