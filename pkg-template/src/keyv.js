// lapse/keyv: a Keyv storage adapter over a TtlCache, so Keyv, cache-manager 7
// and cacheable can keep their in-memory tier in lapse. It speaks Keyv's
// legacy relative-ttl store protocol, which Keyv 5 calls directly and Keyv 6
// bridges (converting its absolute `expires` back to a ttl): one adapter for
// both, with expiry enforced by lapse's own clock rather than by Keyv's
// read-time checks alone, so expired entries also leave memory.
import { TtlCache } from "lapse";

/** What Keyv passes as a ttl, as a lapse `ttl` option (or `undefined` for none). */
function ttlOption(ttl) {
  if (ttl === undefined || ttl === null || ttl === 0 || ttl === Infinity) return undefined; // Keyv: 0/undefined = no expiry
  if (typeof ttl !== "number" || Number.isNaN(ttl)) throw new TypeError(`ttl: must be a number of milliseconds, got ${typeof ttl}`);
  return ttl;
}

/**
 * A Keyv store backed by a lapse `TtlCache`.
 *
 * ```js
 * import Keyv from "keyv";
 * import { KeyvLapse } from "lapse/keyv";
 * const keyv = new Keyv({ store: new KeyvLapse({ maxEntries: 10_000, idle: 60_000 }) });
 * ```
 */
export class KeyvLapse {
  #cache;
  /** Read by Keyv 5's adapter checks. */
  opts;

  /** `options`: any `TtlCache` options, or `{ cache }` to wrap an existing `TtlCache`. */
  constructor(options = {}) {
    if (options === null || typeof options !== "object") throw new TypeError("options: must be an object");
    if (options.cache !== undefined) {
      if (!(options.cache instanceof TtlCache)) throw new TypeError("cache: must be a lapse TtlCache");
      if (Object.keys(options).length > 1) throw new TypeError("options: give either cache or TtlCache options, not both");
      this.#cache = options.cache;
    } else {
      this.#cache = new TtlCache(options);
    }
    // Keyv 5 reads `opts.dialect` and `opts.url` (as strings) to decide whether a store is iterable.
    this.opts = { dialect: "lapse", url: "lapse://memory" };
    // No `namespace` property here: Keyv 6 reads one as "the store prefixes keys
    // itself". Keyv 5 sets it (and prefixes keys with "ns:"), which scopes clear().
  }

  /** The `TtlCache` behind the store. */
  get cache() {
    return this.#cache;
  }

  async get(key) {
    return this.#cache.get(key);
  }

  async getMany(keys) {
    return keys.map((k) => this.#cache.get(k));
  }

  async set(key, value, ttl) {
    const t = ttlOption(ttl);
    if (t !== undefined && t < 0) {
      this.#cache.delete(key);
      return true;
    }
    if (value === undefined) {
      this.#cache.delete(key);
      return true;
    }
    this.#cache.set(key, value, t === undefined ? undefined : { ttl: t });
    return true;
  }

  async setMany(entries) {
    const out = [];
    for (const { key, value, ttl } of entries) out.push(await this.set(key, value, ttl));
    return out;
  }

  async delete(key) {
    return this.#cache.delete(key);
  }

  async deleteMany(keys) {
    return keys.map((k) => this.#cache.delete(k));
  }

  async has(key) {
    return this.#cache.has(key);
  }

  async hasMany(keys) {
    return keys.map((k) => this.#cache.has(k));
  }

  /** Clears the namespace Keyv gave this store (Keyv 5), or everything. */
  async clear() {
    const ns = this.namespace;
    if (!ns) {
      this.#cache.clear();
      return;
    }
    const prefix = `${ns}:`;
    for (const k of [...this.#cache.keys()]) if (k.startsWith(prefix)) this.#cache.delete(k);
  }

  /** Live `[key, value]` pairs, optionally only under `namespace` (Keyv 6 namespace clear and iteration). */
  async *iterator(namespace) {
    for (const [k, v] of [...this.#cache.entries()]) {
      if (!namespace || k.startsWith(`${namespace}:`) || k.startsWith(`${namespace}::`)) yield [k, v];
    }
  }

  async disconnect() {}
}

export default KeyvLapse;
