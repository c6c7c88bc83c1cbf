// lapse/keyv: a Keyv storage adapter over a TtlCache, so Keyv, cache-manager 7
// and cacheable can keep their in-memory tier in lapse. It speaks Keyv's
// legacy relative-ttl store protocol, which Keyv 5 calls directly and Keyv 6
// bridges (converting its absolute `expires` back to a ttl): one adapter for
// both, with expiry enforced by lapse's own clock rather than by Keyv's
// read-time checks alone, so expired entries also leave memory.
import { TtlCache } from "lapse";

/**
 * What Keyv passes as a ttl, as lapse's `ttl` option: `undefined` (no ttl
 * given) leaves the store's own default; 0, Infinity and NaN mean no expiry,
 * as they do to Keyv and its Map store (which compare `Date.now() > expires`,
 * never true of NaN); a negative ttl is already past.
 */
function ttlOption(ttl) {
  if (ttl === undefined || ttl === null) return undefined;
  if (typeof ttl !== "number") throw new TypeError(`ttl: must be a number of milliseconds, got ${typeof ttl}`);
  if (ttl === 0 || Number.isNaN(ttl)) return Infinity;
  return ttl;
}

function checkKeys(keys) {
  if (!Array.isArray(keys)) throw new TypeError(`keys: must be an array of strings, got ${keys === null ? "null" : typeof keys}`);
  for (let i = 0; i < keys.length; i++) {
    if (typeof keys[i] !== "string") throw new TypeError(`keys[${i}]: must be a string, got ${typeof keys[i]}`);
  }
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
    // itself" (and then never prefixes them). Keyv 5 sets it, but one store
    // shared by two Keyv 5 instances holds only the last one's (see clear()).
  }

  /** The `TtlCache` behind the store. */
  get cache() {
    return this.#cache;
  }

  async get(key) {
    return this.#cache.get(key);
  }

  async getMany(keys) {
    checkKeys(keys);
    return keys.map((k) => this.#cache.get(k));
  }

  async set(key, value, ttl) {
    this.#write(key, value, ttlOption(ttl));
    return true;
  }

  /** Checks every entry before it writes any. */
  async setMany(entries) {
    if (!Array.isArray(entries)) throw new TypeError(`entries: must be an array of { key, value, ttl }, got ${entries === null ? "null" : typeof entries}`);
    const ttls = entries.map((e, i) => {
      if (e === null || typeof e !== "object") throw new TypeError(`entries[${i}]: must be an object { key, value, ttl }`);
      if (typeof e.key !== "string") throw new TypeError(`entries[${i}].key: must be a string, got ${typeof e.key}`);
      try {
        return ttlOption(e.ttl);
      } catch (err) {
        throw new TypeError(`entries[${i}].${err.message}`);
      }
    });
    return entries.map((e, i) => {
      this.#write(e.key, e.value, ttls[i]);
      return true;
    });
  }

  /** `t`: from ttlOption. An undefined value, or a ttl already past, removes the key (Keyv reads both as absent). */
  #write(key, value, t) {
    if (value === undefined || (t !== undefined && t < 0)) {
      if (typeof key !== "string") throw new TypeError(`key: must be a string, got ${typeof key}`);
      this.#cache.delete(key);
    } else {
      this.#cache.set(key, value, t === undefined ? undefined : { ttl: t });
    }
  }

  async delete(key) {
    return this.#cache.delete(key);
  }

  // No deleteMany: Keyv 5 wants one boolean from a store's, Keyv 6 one per
  // key, and both fall back to `delete` per key, each returning its own shape.

  async has(key) {
    return this.#cache.has(key);
  }

  async hasMany(keys) {
    checkKeys(keys);
    return keys.map((k) => this.#cache.has(k));
  }

  /**
   * Removes every entry, as Keyv's own Map store does. Keyv 6 calls this
   * only with no namespace (it clears a namespace itself, through
   * `iterator`); Keyv 5 calls it with no argument, and the `namespace` it
   * set on the store is the last Keyv 5 instance's, which is not always the
   * caller's (clearing under it removed another namespace's entries and
   * kept the caller's), and with `useKeyPrefix: false` no key is under it.
   */
  async clear() {
    this.#cache.clear();
  }

  /** Live `[key, value]` pairs, optionally only under `namespace` (Keyv 6 namespace clear and iteration). */
  async *iterator(namespace) {
    // The keys as they were; each value as it is when reached (a key deleted
    // or expired meanwhile is skipped, as a Map's iterator would).
    for (const k of [...this.#cache.keys()]) {
      if (!namespace || k.startsWith(`${namespace}:`) || k.startsWith(`${namespace}::`)) {
        let v;
        try {
          v = this.#cache.peek(k);
        } catch {
          continue; // a hash key (a wrapped cache's own): not a Keyv entry
        }
        if (v !== undefined) yield [k, v];
      }
    }
  }

  async disconnect() {}
}

export default KeyvLapse;
