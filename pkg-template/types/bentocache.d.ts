import type { TtlCache, TtlCacheOptions } from "lapse";

export interface LapseDriverOptions extends Omit<TtlCacheOptions<any>, "now" | "clock"> {
  /** bentocache's name for `maxEntries`. */
  maxItems?: number;
  prefix?: string;
}

/** A bentocache L1 driver backed by a lapse `TtlCache`. */
export declare class LapseDriver {
  constructor(config?: LapseDriverOptions & { cacheInstance?: TtlCache<any> });
  readonly type: "l1";
  readonly cache: TtlCache<any>;
  prefix: string;
  namespace(namespace: string): LapseDriver;
  get(key: string): any;
  pull(key: string): any;
  set(key: string, value: any, ttl?: number): boolean;
  getRemainingTtl(key: string): number;
  clear(): void;
  delete(key: string): boolean;
  deleteMany(keys: string[]): boolean;
  disconnect(): Promise<void>;
}

/** Register with `bentostore().useL1Layer(lapseDriver({ maxEntries: 10_000 }))`. */
export declare function lapseDriver(options?: LapseDriverOptions): {
  options: LapseDriverOptions;
  factory: (config: any) => LapseDriver;
};
