// lapse/bentocache: a bentocache L1 (in-memory) driver backed by a lapse
// TtlCache, in place of bentocache's lru-cache memory driver. bentocache keeps
// grace periods, tags and stampede protection in its own entries; lapse holds
// them with the physical ttl bentocache asks for, and its eviction policy
// (S3-FIFO) keeps hot keys over keys read once.
import { TtlCache } from "lapse";

/** bentocache passes ttl in ms; `undefined`, 0 and Infinity mean none (as its memory driver). */
function ttlOption(ttl) {
  if (ttl === undefined || ttl === null || ttl === 0 || ttl === Infinity) return undefined;
  if (typeof ttl !== "number") throw new TypeError(`ttl: must be a number of milliseconds, got ${typeof ttl}`);
  if (Number.isNaN(ttl)) throw new RangeError("ttl: must be a number of milliseconds, got NaN");
  return ttl;
}

// The driver's entries follow the host's clock, as bentocache's own logical
// expiry (Date.now()) does: a clock of their own would split the two.
const REFUSED = new Set(["now", "clock"]);

const OWN = new Set(["prefix", "logger", "maxItems", "cacheInstance", "serialize", "maxSize", "maxEntrySize"]);

/**
 * The driver. Use {@link lapseDriver} to register it with bentocache.
 */
export class LapseDriver {
  type = "l1";
  config;
  prefix;
  #cache;

  constructor(config = {}) {
    this.config = config;
    this.prefix = config.prefix ? String(config.prefix).replace(/:+$/, "") : "";
    if (config.cacheInstance) {
      this.#cache = config.cacheInstance;
      return;
    }
    this.#cache = newCache(config);
  }

  /** The `TtlCache` behind the driver. */
  get cache() {
    return this.#cache;
  }

  #key(key) {
    return this.prefix ? `${this.prefix}:${key}` : key;
  }

  namespace(namespace) {
    return new LapseDriver({ ...this.config, cacheInstance: this.#cache, prefix: this.prefix ? `${this.prefix}:${namespace}` : namespace });
  }

  get(key) {
    return this.#cache.get(this.#key(key));
  }

  pull(key) {
    const k = this.#key(key);
    const value = this.#cache.get(k);
    this.#cache.delete(k);
    return value;
  }

  set(key, value, ttl) {
    const t = ttlOption(ttl);
    const k = this.#key(key);
    if (t !== undefined && t <= 0) {
      this.#cache.delete(k);
      return true;
    }
    this.#cache.set(k, value, t === undefined ? undefined : { ttl: t });
    return true;
  }

  /** Remaining ms; `Infinity` for none; 0 when missing (as bentocache's memory driver). */
  getRemainingTtl(key) {
    return this.#cache.ttl(this.#key(key)) ?? 0;
  }

  clear() {
    if (!this.prefix) {
      this.#cache.clear();
      return;
    }
    const p = `${this.prefix}:`;
    for (const k of [...this.#cache.keys()]) if (k.startsWith(p)) this.#cache.delete(k);
  }

  delete(key) {
    return this.#cache.delete(this.#key(key));
  }

  deleteMany(keys) {
    // Every key checked before one is deleted (as any lapse call does).
    const ks = [...keys].map((k) => this.#key(k));
    for (const k of ks) this.#cache.has(k);
    for (const k of ks) this.#cache.delete(k);
    return true;
  }

  async disconnect() {}
}

/**
 * A bentocache L1 driver backed by lapse.
 *
 * ```js
 * import { BentoCache, bentostore } from "bentocache";
 * import { lapseDriver } from "lapse/bentocache";
 * const bento = new BentoCache({ default: "cache", stores: { cache: bentostore().useL1Layer(lapseDriver({ maxEntries: 10_000 })) } });
 * ```
 * `options`: `TtlCache` options (`maxEntries`, or bentocache's `maxItems`; `idle`, `maxBytes` + `sizeOf`, …).
 */
export function lapseDriver(options = {}) {
  // Checked here, where they are given: bentocache builds the driver at its
  // first call, and a refused option threw from inside that call.
  if (!options?.cacheInstance) newCache(options).free();
  return { options, factory: (config) => new LapseDriver(config) };
}

/** The driver's TtlCache; an error about `maxItems` names it, not the `maxEntries` it stands for. */
function newCache(config) {
  try {
    return new TtlCache(cacheOptions(config));
  } catch (e) {
    if (config.maxItems === undefined || !String(e?.message).startsWith("maxEntries:")) throw e;
    throw new e.constructor(`maxItems${e.message.slice(10)}`);
  }
}

/** The TtlCache options of a driver's config (bentocache's names mapped); throws TypeError for refused ones. */
function cacheOptions(config) {
  const opts = {};
  for (const k of Object.keys(config)) {
    if (REFUSED.has(k)) throw new TypeError(`options: LapseDriver does not take ${k} (its entries follow the host's clock, as bentocache's expiry does)`);
    if (!OWN.has(k)) opts[k] = config[k];
  }
  if (config.maxItems !== undefined) {
    if (opts.maxEntries !== undefined) throw new TypeError("maxItems: give maxItems (bentocache's name) or maxEntries, not both");
    opts.maxEntries = config.maxItems;
  }
  if (config.maxSize !== undefined || config.maxEntrySize !== undefined) {
    throw new TypeError("maxSize/maxEntrySize: use maxBytes with sizeOf (lapse measures entries with your sizeOf)");
  }
  return opts;
}
