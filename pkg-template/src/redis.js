// lapse/redis: a near cache. A TtlCache in this process in front of Redis (or
// Valkey), kept coherent by RESP3 client tracking in broadcasting mode: the
// server pushes an invalidation for every key any client changes, and the
// local copy goes. Redis stays the source of truth; the local copy is only
// ever a shortcut to a value Redis held.
//
// Why BCAST + NOLOOP rather than node-redis's default tracking: the default
// mode only tracks keys this connection has *read*, so a copy stored after our
// own SET would never be invalidated by a later remote write. Broadcasting
// tracks every key (optionally only under `prefix`), and NOLOOP keeps our own
// writes from invalidating the copies they just stored.
//
// Staleness is bounded three ways: invalidations (milliseconds), the local
// deadline (never later than the key's deadline in Redis, and the local `ttl`
// if an invalidation is lost), and disconnects (every local copy is dropped,
// and nothing is stored again until tracking is back on).
import { createClient } from "redis";
import { TtlCache } from "lapse";

/** JSON, the default codec: what other processes (and redis-cli) can read. */
const JSON_CODEC = Object.freeze({ encode: (v) => JSON.stringify(v), decode: (s) => JSON.parse(s) });

const OWN_OPTIONS = new Set(["codec", "redis", "prefix"]);
// TtlCache options that would do nothing here, or harm: the local copies
// follow the host's clock, as Redis's deadlines do; NearCache.fetch reads
// Redis and then the loader, and keeps no stale copy to fall back on.
const REFUSED_OPTIONS = {
  now: "the local copies follow the host's clock, as the deadlines in Redis do",
  clock: "the local copies follow the host's clock, as the deadlines in Redis do",
  grace: "NearCache.fetch keeps no stale copy to serve if the loader fails",
  refresh: "NearCache.fetch does not refresh ahead",
  onLoadError: "NearCache.fetch has no background loads; its errors reject the fetch",
};
const SET_OPTIONS = new Set(["ttl"]);
// PX is a 64-bit count of ms; past 2^53 a JS number is no longer an exact
// integer (and prints as 1e+21 from 10^21 on, which Redis refuses).
const MAX_PX = Number.MAX_SAFE_INTEGER;
// No error held (#owed): not a value user code can throw.
const NONE = Symbol("none");

/** A lone surrogate has no UTF-8 form: node-redis sends U+FFFD, so two such keys would be one in Redis. */
const wellFormed =
  typeof String.prototype.isWellFormed === "function"
    ? (s) => s.isWellFormed()
    : (s) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

function checkKey(key) {
  if (typeof key !== "string") throw new TypeError(`key: must be a string, got ${typeof key}`);
  if (!wellFormed(key)) {
    throw new TypeError("key: must be well-formed Unicode to reach Redis (a lone surrogate is sent as U+FFFD, so two such keys would share one Redis key)");
  }
}

function checkTtl(ttl) {
  if (ttl === undefined) return;
  if (typeof ttl !== "number") throw new TypeError(`ttl: must be a number, got ${typeof ttl}`);
  if (!(ttl > 0)) throw new RangeError(`ttl: must be a positive number of milliseconds or Infinity, got ${ttl}`);
  if (ttl !== Infinity && ttl > MAX_PX) throw new RangeError(`ttl: too large for Redis's PX (at most ${MAX_PX} ms; Infinity for none), got ${ttl}`);
}

function checkSetOptions(opts) {
  if (opts === undefined) return undefined;
  if (opts === null || typeof opts !== "object") throw new TypeError("opts: must be an object");
  for (const k in opts) {
    if (!SET_OPTIONS.has(k)) throw new TypeError(`opts: unknown option ${JSON.stringify(k)} (NearCache.set takes ttl)`);
  }
  checkTtl(opts.ttl);
  return opts.ttl;
}

/** The prefixes, checked: Redis refuses overlapping ones (one starting another) when tracking turns on. */
function checkPrefixes(prefix) {
  const prefixes = prefix === undefined ? [] : Array.isArray(prefix) ? prefix : [prefix];
  for (const p of prefixes) {
    if (typeof p !== "string") throw new TypeError("prefix: must be a string or an array of strings");
    if (!wellFormed(p)) throw new TypeError("prefix: must be well-formed Unicode (see key)");
  }
  for (let i = 0; i < prefixes.length; i++) {
    for (let j = 0; j < prefixes.length; j++) {
      if (i !== j && prefixes[j].startsWith(prefixes[i])) {
        throw new TypeError(`prefix: ${JSON.stringify(prefixes[i])} and ${JSON.stringify(prefixes[j])} overlap (Redis refuses overlapping tracking prefixes; keep the shorter one)`);
      }
    }
  }
  return prefixes;
}

/** `e` from Redis or the codec, as an error that names the key (the original as its cause). */
function keyError(key, what, e) {
  const msg = `${what} ${JSON.stringify(key)}: ${e?.message ?? String(e)}`;
  const Ctor = e instanceof TypeError || /^WRONGTYPE/.test(e?.message ?? "") ? TypeError : Error;
  return new Ctor(msg, { cause: e });
}

/** Marks a watch's call as overtaken: it stores nothing, and a fetch's loader hears it on its signal. */
function invalidate(w) {
  w.invalidated = true;
  const c = w.abort;
  if (c !== null) {
    w.abort = null;
    c.abort();
  }
}

/**
 * A `TtlCache` in front of Redis, invalidated by the server.
 *
 * ```js
 * const near = await NearCache.connect("redis://127.0.0.1:6379", { ttl: 60_000, maxEntries: 100_000 });
 * await near.set("user:1", { name: "Ada" }, { ttl: 300_000 });
 * await near.get("user:1");
 * ```
 */
export class NearCache {
  #client;
  #local;
  #codec;
  #prefix;
  /** True once the server broadcasts invalidations to this connection. */
  #tracking = false;
  /** Bumped whenever every local copy is dropped (disconnect, flush). */
  #epoch = 0;
  /** key -> in-flight Redis read: `{ promise, watch }`. */
  #loads = new Map();
  /**
   * key -> the watches of the calls in flight on it (a read, each write, each
   * fetch's load): `{ invalidated }`, set by any invalidation of the key, a
   * local write or delete of it, or a disconnect. A call stores its local
   * copy only if its watch is still clear when it resumes: node-redis may
   * hand us an invalidation that arrived in the same socket read as our own
   * reply before our `await` resumes, and a copy stored after it would then
   * be stale with nothing left to remove it.
   */
  #watches = new Map();
  /** Serializes tracking switches (connect and every `ready`). */
  #trackRun = Promise.resolve();
  /** key -> running fetch (Redis read, then loader, then write). */
  #fetches = new Map();
  /** The local copy's default `ttl`: a copy never outlives it, nor Redis's deadline. */
  #localTtl = Infinity;
  #closed = false;
  /** The first error a callback threw in a change of the local copies (see #onLocal), or NONE. */
  #owed = NONE;
  /** The commands this cache sent that have not settled: close() lets them finish. */
  #inFlight = new Set();
  #invalidations = 0;
  #remoteReads = 0;
  /** fetch counters (the local cache's own stay 0: NearCache.fetch does not go through it). */
  #loadCount = 0;
  #loadErrors = 0;
  #coalesced = 0;
  #onInvalidate;
  #onDown;
  #onReady;

  /**
   * Connects to Redis and returns a ready near cache.
   *
   * `options`: every `TtlCache` option for the local copy (`ttl`, `idle`,
   * `maxEntries`, `maxBytes` + `sizeOf`, `sweepBudget`, `dispose`), plus
   * `codec` (`{ encode(value) => string, decode(string) => value }`, JSON by
   * default), `prefix` (a string or array: only keys under these prefixes are
   * cached locally and tracked) and `redis` (extra node-redis `createClient`
   * options; `RESP: 3` and tracking are set by lapse).
   *
   * A value the local cache can never hold (over its `maxBytes`) lives in
   * Redis only. An error `dispose` or `sizeOf` throws in a change of the
   * local copies is thrown by the call that made it, once it is done, or by
   * the next call when none did (an invalidation, a disconnect).
   */
  static async connect(url, options = {}) {
    if (typeof url !== "string") throw new TypeError(`url: must be a string, got ${typeof url}`);
    const near = new NearCache(url, options);
    try {
      await near.#client.connect();
      await near.#track();
    } catch (e) {
      near.#client.destroy?.();
      throw e;
    }
    return near;
  }

  /** Use {@link NearCache.connect}. */
  constructor(url, options) {
    if (options === null || typeof options !== "object") throw new TypeError("options: must be an object");
    const local = {};
    for (const k of Object.keys(options)) {
      if (Object.hasOwn(REFUSED_OPTIONS, k)) throw new TypeError(`options: NearCache does not take ${k} (${REFUSED_OPTIONS[k]})`);
      if (!OWN_OPTIONS.has(k)) local[k] = options[k];
    }
    const { codec = JSON_CODEC, redis = {}, prefix } = options;
    if (typeof codec?.encode !== "function" || typeof codec?.decode !== "function") {
      throw new TypeError("codec: must be an object with encode(value) and decode(string) functions");
    }
    const prefixes = checkPrefixes(prefix);
    if (redis === null || typeof redis !== "object") throw new TypeError("redis: must be an object of node-redis client options");
    this.#local = new TtlCache(local); // validates the TtlCache options (TypeError/RangeError)
    if (typeof local.ttl === "number") this.#localTtl = local.ttl;
    this.#codec = codec;
    this.#prefix = prefixes;
    this.#client = createClient({ ...redis, url, RESP: 3, emitInvalidate: true });
    this.#onInvalidate = (key) => this.#invalidate(key);
    this.#onDown = () => this.#hold(this.#down());
    this.#onReady = () => {
      // node-redis re-sends its own default-mode CLIENT TRACKING ON on every
      // reconnect; switch back to broadcasting before storing anything.
      if (!this.#closed) this.#track().catch(this.#onDown);
    };
    this.#client.on("invalidate", this.#onInvalidate);
    this.#client.on("error", this.#onDown);
    this.#client.on("end", this.#onDown);
    this.#client.on("reconnecting", this.#onDown);
    this.#client.on("ready", this.#onReady);
  }

  /** The `TtlCache` holding the local copies (read it; write through the NearCache). */
  get local() {
    return this.#local;
  }

  /** The node-redis client (RESP3, tracking on). */
  get client() {
    return this.#client;
  }

  /**
   * Counters: the local cache's `stats()`, with `loads` (loader calls),
   * `loadErrors` and `coalesced` (fetches that joined a running one) counted
   * by this cache's `fetch`, plus `invalidations` received and `remoteReads` sent.
   */
  stats() {
    return {
      ...this.#local.stats(),
      loads: this.#loadCount,
      loadErrors: this.#loadErrors,
      coalesced: this.#coalesced,
      invalidations: this.#invalidations,
      remoteReads: this.#remoteReads,
    };
  }

  /**
   * Switches tracking to broadcasting, after any switch still running: the
   * first `ready` and `connect` both ask for one, and two interleaved (OFF,
   * OFF, ON, ON) make Redis refuse the second ON's prefixes as overlapping
   * the first's, so `connect` with a `prefix` always failed.
   */
  #track() {
    const run = this.#trackRun.catch(() => {}).then(() => this.#switchTracking());
    this.#trackRun = run;
    return run;
  }

  async #switchTracking() {
    this.#tracking = false;
    const on = ["CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP"];
    for (const p of this.#prefix) on.push("PREFIX", p);
    await this.#sent(this.#client.sendCommand(["CLIENT", "TRACKING", "OFF"]));
    await this.#sent(this.#client.sendCommand(on));
    this.#hold(this.#dropAll());
    this.#tracking = true;
  }

  /**
   * A watch on `key` for a call about to go to Redis (see #watches); `#unwatch`
   * it when done. `abort`: a fetch's loader controller, aborted with it.
   */
  #watch(key) {
    const w = { invalidated: false, abort: null };
    let set = this.#watches.get(key);
    if (set === undefined) this.#watches.set(key, (set = new Set()));
    set.add(w);
    return w;
  }

  #unwatch(key, w) {
    const set = this.#watches.get(key);
    if (set === undefined) return;
    set.delete(w);
    if (set.size === 0) this.#watches.delete(key);
  }

  #tracked(key) {
    if (this.#prefix.length === 0) return true;
    for (const p of this.#prefix) if (key.startsWith(p)) return true;
    return false;
  }

  /** Drops every local copy; returns what #onLocal does. */
  #dropAll() {
    this.#epoch++;
    for (const set of [...this.#watches.values()]) for (const w of [...set]) invalidate(w);
    const e = this.#onLocal(() => this.#local.clear());
    // Calls made from now on start their own reads and loads (see #forget).
    this.#loads.clear();
    this.#fetches.clear();
    return e;
  }

  #down() {
    this.#tracking = false;
    return this.#dropAll();
  }

  #invalidate(key) {
    this.#invalidations++;
    // FLUSHALL, FLUSHDB, or the server's tracking table overflowed: all.
    const all = key === null || key === undefined;
    this.#hold(all ? this.#dropAll() : this.#forget(typeof key === "string" ? key : key.toString()));
  }

  /**
   * The key changed: drop the copy, keep every call in flight on it from
   * storing one, and let no later call join them: a read or load begun
   * before the change answers its own callers only (a get or fetch made
   * after another client's write, or after this one's set or delete,
   * joined the read or load in flight and returned the old value).
   * Returns what #onLocal does.
   */
  #forget(key) {
    const set = this.#watches.get(key);
    if (set !== undefined) for (const w of [...set]) invalidate(w);
    const e = this.#onLocal(() => this.#local.delete(key));
    this.#loads.delete(key);
    this.#fetches.delete(key);
    return e;
  }

  /**
   * Stores a local copy that expires no later than `deadline` (a local time),
   * unless the key changed (`watch`), or tracking went down, since `epoch` was
   * read. Returns what #onLocal does.
   */
  #keep(key, value, deadline, watch, epoch) {
    if (!this.#tracking || epoch !== this.#epoch || watch.invalidated || !this.#tracked(key)) return NONE;
    const now = this.#local.now;
    const at = Math.min(deadline, now + this.#localTtl);
    return this.#onLocal(() => {
      try {
        if (at === Infinity) {
          this.#local.set(key, value); // the local defaults (idle) apply
        } else if (at > now) {
          this.#local.set(key, value, { expireAt: at });
        }
      } catch (e) {
        // A value the local cache can never hold (over its maxBytes) is
        // Redis's alone, as a key outside `prefix` is: no local copy, and
        // the call that read or wrote it succeeds.
        if (!(e instanceof RangeError && e.message.includes("can never fit in maxBytes"))) throw e;
      }
    });
  }

  /**
   * Makes a change of the local copies (a `clear`, `delete` or `set` of the
   * `TtlCache`) and returns the error its `dispose` or `sizeOf` threw (the
   * change is complete then), or NONE, so that what follows it still runs.
   * The call that made the change throws it once that call is done; a
   * server push or a reconnect has none, and holds it for the next call
   * (#hold): thrown there, it ended the process (from the client's 'error'
   * listener), and an invalidation stopped halfway left the key's reads and
   * loads open to new callers.
   */
  #onLocal(change) {
    try {
      change();
      return NONE;
    } catch (e) {
      return e;
    }
  }

  /** Holds an error of a change no call made, for the next call (the first one held wins). */
  #hold(e) {
    if (this.#owed === NONE) this.#owed = e;
  }

  /** Ends a call: throws its own error (from #onLocal), else one held (once). */
  #pay(own = NONE) {
    const e = own !== NONE ? own : this.#owed;
    if (own === NONE) this.#owed = NONE;
    if (e !== NONE) throw e;
  }

  /**
   * Reads Redis, coalesced per key: GET and PTTL sent back to back on the
   * tracking connection. A write that lands before the GET, or between the
   * two, has its invalidation pushed to this connection before the PTTL's
   * reply (Redis writes both to it in order), which marks the answer unkept;
   * one after them deletes the stored copy. Not a MULTI: Redis refuses one
   * at its `maxmemory` with `noeviction` (a probe), where a GET still works.
   */
  #remote(key) {
    const running = this.#loads.get(key);
    if (running !== undefined) return running.promise;
    const load = { promise: null, watch: this.#watch(key) };
    const epoch = this.#epoch;
    const sent = this.#local.now;
    this.#remoteReads++;
    load.promise = this.#sent(Promise.all([this.#client.get(key), this.#client.pTTL(key)]))
      .catch((e) => {
        throw keyError(key, "GET", e);
      })
      .then(([raw, pttl]) => {
        if (raw === null || raw === undefined) return undefined;
        let value;
        try {
          value = this.#codec.decode(typeof raw === "string" ? raw : raw.toString());
          if (value === undefined) throw new TypeError("codec.decode returned undefined");
        } catch (e) {
          throw keyError(key, "codec.decode of the value in Redis at", e);
        }
        // PTTL -1: no deadline in Redis; -2: no key.
        // An error of the copy's callbacks is this read's (its callers').
        const e = pttl === -2 ? NONE : this.#keep(key, value, pttl === -1 ? Infinity : sent + pttl, load.watch, epoch);
        if (e !== NONE) throw e;
        return value;
      })
      .finally(() => {
        this.#unwatch(key, load.watch);
        if (this.#loads.get(key) === load) this.#loads.delete(key);
      });
    this.#loads.set(key, load);
    return load.promise;
  }

  /** The value: the local copy, or Redis's (which then becomes the local copy). `undefined` if Redis has none. */
  async get(key) {
    checkKey(key);
    this.#open();
    const hit = this.#local.get(key);
    const value = hit !== undefined ? hit : await this.#remote(key);
    this.#pay();
    return value;
  }

  /**
   * Writes to Redis (`SET key value [PX ttl]`) and keeps a local copy that
   * expires no later than the key does in Redis. Resolves to `this`.
   */
  async set(key, value, opts) {
    checkKey(key);
    const ttl = checkSetOptions(opts);
    if (value === undefined) throw new TypeError("value: must not be undefined (use delete() to remove a key)");
    this.#open();
    const [encoded, copy] = this.#encode(key, value);
    const dropped = this.#forget(key);
    let kept;
    try {
      kept = await this.#write(key, encoded, copy, ttl, this.#watch(key));
    } catch (e) {
      this.#hold(dropped); // the Redis error is this call's
      throw e;
    }
    this.#pay(dropped !== NONE ? dropped : kept);
    return this;
  }

  /** `[encoded, copy]`: the string for Redis and the value every other reader of it will see. */
  #encode(key, value) {
    let encoded;
    let copy;
    try {
      encoded = this.#codec.encode(value);
    } catch (e) {
      throw keyError(key, "codec.encode of the value for", e);
    }
    if (typeof encoded !== "string") throw new TypeError(`codec.encode: must return a string, got ${typeof encoded} (for key ${JSON.stringify(key)})`);
    try {
      copy = this.#codec.decode(encoded);
      // Checked before anything is sent: the local copy could not hold it.
      if (copy === undefined) throw new TypeError("codec.decode returned undefined");
    } catch (e) {
      throw keyError(key, "codec.decode of what codec.encode returned for", e);
    }
    return [encoded, copy];
  }

  /**
   * SET, then the local copy, unless `watch` (taken before anything was sent,
   * and unwatched here) saw the key change meanwhile: another client's write
   * right after ours can reach us in the same read as our reply. Returns
   * what #keep does.
   */
  async #write(key, encoded, copy, ttl, watch) {
    const epoch = this.#epoch;
    const sent = this.#local.now;
    const px = ttl === undefined || ttl === Infinity ? undefined : Math.ceil(ttl);
    try {
      await this.#sent(this.#client.set(key, encoded, px === undefined ? undefined : { expiration: { type: "PX", value: px } })).catch((e) => {
        throw keyError(key, "SET", e);
      });
      return this.#keep(key, copy, px === undefined ? Infinity : sent + ttl, watch, epoch);
    } finally {
      this.#unwatch(key, watch);
    }
  }

  /** Deletes the key in Redis and here; `true` if Redis had it. */
  async delete(key) {
    checkKey(key);
    this.#open();
    const dropped = this.#forget(key);
    const n = await this.#sent(this.#client.del(key)).catch((e) => {
      this.#hold(dropped); // the Redis error is this call's
      throw keyError(key, "DEL", e);
    });
    this.#pay(dropped);
    return n > 0;
  }

  /**
   * Local copy, else Redis, else `loader(key, { signal })`, whose result is
   * written to Redis (with `opts.ttl`) and kept here. Concurrent fetches of a
   * key share one Redis read and one loader call. `undefined` stores nothing,
   * and so does a load whose key changed while it ran (another client's
   * write or delete, this one's `set` or `delete`, a disconnect): its result
   * is returned but written nowhere, since Redis holds something newer.
   */
  async fetch(key, loader, opts) {
    checkKey(key);
    if (typeof loader !== "function") throw new TypeError(`loader: must be a function, got ${typeof loader}`);
    checkSetOptions(opts);
    this.#open();
    const hit = this.#local.get(key);
    const value = hit !== undefined ? hit : await this.#join(key, loader, opts);
    this.#pay();
    return value;
  }

  /** The key's fetch running, or a new one: Redis, else the loader. */
  #join(key, loader, opts) {
    const running = this.#fetches.get(key);
    if (running !== undefined) {
      this.#coalesced++;
      return running;
    }
    const run = (async () => {
      // Watched from before the Redis read: a change that lands between its
      // miss and the load is a change during the load.
      const watch = this.#watch(key);
      let writing = false;
      try {
        const remote = await this.#remote(key);
        if (remote !== undefined) return remote;
        const controller = new AbortController();
        // Aborted when the result can no longer be stored (see invalidate).
        watch.abort = controller;
        if (watch.invalidated) controller.abort();
        this.#loadCount++;
        let value;
        try {
          value = await loader(key, { signal: controller.signal });
        } catch (e) {
          this.#loadErrors++;
          throw e;
        } finally {
          watch.abort = null;
        }
        if (value === undefined) return undefined;
        if (watch.invalidated) return value;
        const [encoded, copy] = this.#encode(key, value);
        writing = true;
        const e = await this.#write(key, encoded, copy, opts?.ttl, watch); // unwatches
        if (e !== NONE) throw e; // this load's (its callers')
        return value;
      } finally {
        if (!writing) this.#unwatch(key, watch);
      }
    })().finally(() => {
      if (this.#fetches.get(key) === run) this.#fetches.delete(key);
    });
    this.#fetches.set(key, run);
    return run;
  }

  #open() {
    if (this.#closed) throw new Error("NearCache: closed");
  }

  /** `p`, a command's reply, counted in flight until it settles. */
  #sent(p) {
    this.#inFlight.add(p);
    const done = () => this.#inFlight.delete(p);
    p.then(done, done);
    return p;
  }

  /**
   * Drops every local copy and closes the connection. With the server
   * reachable, commands already sent get their replies first; while it is
   * not (node-redis would hold them until a reconnect that may never come),
   * the connection is dropped and every call in flight rejects.
   *
   * This cache's own commands are awaited with the connection still open, so
   * that a server lost meanwhile is seen (node-redis's graceful close() does
   * not notice a peer that goes away while it drains, and never settles);
   * only then is the client closed.
   */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    const dropped = this.#down();
    const c = this.#client;
    c.off("invalidate", this.#onInvalidate);
    c.off("ready", this.#onReady);
    const abandon = () => {
      if (c.isOpen) c.destroy(); // rejects every queued command
    };
    c.on("error", abandon);
    c.on("reconnecting", abandon);
    try {
      if (!c.isReady) abandon();
      else await Promise.allSettled([...this.#inFlight]);
      // What is left in its queue was sent on `client` directly.
      if (c.isOpen) await c.close();
    } finally {
      c.off("error", abandon);
      c.off("reconnecting", abandon);
      c.off("error", this.#onDown);
      c.off("end", this.#onDown);
      c.off("reconnecting", this.#onDown);
    }
    this.#pay(dropped); // a dispose error, of the copies dropped here or earlier
  }
}
