// lapse/durable: one TtlCache shared by every isolate of a Worker, inside a
// Durable Object, persisted row by row in the object's SQLite storage and
// expired by the object's alarm.
//
// Every write persists only the rows it changes (an insert, an update, and a
// delete per removal the cache reports through `dispose`), so the cost of a
// write does not grow with the cache. When the object wakes, the constructor
// rebuilds the cache from the rows before any request is served: rows are
// replayed in last-access order on a clock that `tick()` walks forward, so
// every entry gets back its exact absolute deadline, idle window and last
// access, and idle windows run on as if the object had never slept.
import { TtlCache } from "lapse";

const TABLE = "_lapse_entries";
// kind: what a row is. A plain entry and a hash field carry a value; a hash
// key's own row carries only the key's absolute deadline.
const PLAIN = 0;
const FIELD = 1;
const HASH_KEY = 2;

const JSON_CODEC = Object.freeze({ encode: (v) => JSON.stringify(v), decode: (s) => JSON.parse(s) });
const OWN_OPTIONS = new Set(["codec"]);

/** A finite time, or null for "none" (SQLite has no Infinity). */
const col = (t) => (t === Infinity || t === undefined ? null : t);
const uncol = (t) => (t === null ? Infinity : t);

/**
 * A `TtlCache` persisted in a Durable Object's storage.
 *
 * ```js
 * export class SharedCache extends DurableObject {
 *   constructor(ctx, env) { super(ctx, env); this.cache = new DurableCache(ctx, { ttl: 3_600_000 }); }
 *   alarm() { return this.cache.alarm(); }
 * }
 * ```
 */
export class DurableCache {
  #ctx;
  #sql;
  #cache;
  #codec;
  #ttl = Infinity;
  #idle = Infinity;
  /** The alarm time last set, so re-arming after a write is one comparison. */
  #armedAt = Infinity;

  /**
   * `options`: every `TtlCache` option (`ttl`, `idle`, `maxEntries`,
   * `maxBytes` + `sizeOf`, `sweepBudget`, `dispose`, `clock`), plus `codec`
   * (`{ encode(value) => string, decode(string) => value }`, JSON by default)
   * for the values in storage.
   */
  constructor(ctx, options = {}) {
    if (!ctx?.storage?.sql) {
      throw new TypeError("ctx: must be a Durable Object state with SQLite storage (enable it with new_sqlite_classes in wrangler, enableSql in workerd)");
    }
    if (options === null || typeof options !== "object") throw new TypeError("options: must be an object");
    if (options.now !== undefined) throw new TypeError("now: a DurableCache follows the host's clock (give clock to follow another)");
    const { codec = JSON_CODEC } = options;
    if (typeof codec?.encode !== "function" || typeof codec?.decode !== "function") {
      throw new TypeError("codec: must be an object with encode(value) and decode(string) functions");
    }
    const local = {};
    for (const k of Object.keys(options)) if (!OWN_OPTIONS.has(k)) local[k] = options[k];
    const userClock = local.clock ?? Date.now;
    const userDispose = local.dispose;
    this.#ctx = ctx;
    this.#sql = ctx.storage.sql;
    this.#codec = codec;
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS ${TABLE} (key TEXT NOT NULL, kind INTEGER NOT NULL, field TEXT NOT NULL, value TEXT, abs REAL, last REAL NOT NULL, idle REAL, PRIMARY KEY (key, kind, field))`,
    );
    const rows = this.#sql.exec(`SELECT key, kind, field, value, abs, last, idle FROM ${TABLE} ORDER BY last`).toArray();
    // During the replay the clock starts at the oldest last access (the cache
    // reads it as it is built), and tick(t) walks it forward row by row; then
    // it follows the host's clock.
    let replayAt = rows.length > 0 ? rows[0].last : null;
    this.#cache = new TtlCache({
      ...local,
      clock: () => replayAt ?? userClock(),
      dispose: (value, key, reason, field) => {
        this.#forget(key, reason, field);
        if (userDispose) userDispose(value, key, reason, field);
      },
    });
    if (typeof local.ttl === "number") this.#ttl = local.ttl;
    if (typeof local.idle === "number") this.#idle = local.idle;
    if (rows.length > 0) {
      try {
        this.#replay(rows);
      } finally {
        replayAt = null;
      }
    }
    this.#armedAt = NaN; // unknown: arm on the first occasion
    this.#arm();
  }

  #replay(rows) {
    const c = this.#cache;
    const keyDeadlines = [];
    for (const r of rows) {
      c.tick(r.last);
      const opts = { idle: uncol(r.idle) };
      if (r.abs === null) opts.ttl = Infinity;
      else opts.expireAt = r.abs;
      if (r.kind === PLAIN) c.set(r.key, this.#codec.decode(r.value), opts);
      else if (r.kind === FIELD) c.hset(r.key, r.field, this.#codec.decode(r.value), opts);
      else keyDeadlines.push(r);
    }
    for (const r of keyDeadlines) if (r.abs !== null && c.has(r.key)) c.expireAt(r.key, r.abs);
    // Rows that expired while the object slept were not re-added; the replay
    // sweeps left nothing, and the stored rows go in one statement.
    for (const r of rows) {
      const live = r.kind === PLAIN ? c.has(r.key) : c.has(r.key) && (r.kind === HASH_KEY || c.hhas(r.key, r.field));
      if (!live) this.#sql.exec(`DELETE FROM ${TABLE} WHERE key = ? AND kind = ? AND field = ?`, r.key, r.kind, r.field);
    }
  }

  /** A removal the cache reported: its row leaves storage. */
  #forget(key, reason, field) {
    if (reason === "replaced") return; // the write that replaced it rewrites the row
    if (reason === "cleared") return; // clear() empties the table in one statement
    if (field === undefined) {
      this.#sql.exec(`DELETE FROM ${TABLE} WHERE key = ?`, key); // a plain entry, or a whole hash
    } else {
      this.#sql.exec(`DELETE FROM ${TABLE} WHERE key = ? AND kind = ${FIELD} AND field = ?`, key, field);
      if (!this.#cache.has(key)) this.#sql.exec(`DELETE FROM ${TABLE} WHERE key = ?`, key);
    }
  }

  /** Keeps the object's alarm at the cache's next deadline. */
  #arm() {
    const next = this.#cache.nextExpiry();
    if (next === this.#armedAt) return;
    this.#armedAt = next;
    const storage = this.#ctx.storage;
    // Not awaited: the object's output gate holds replies until storage has it.
    if (next === Infinity) void storage.deleteAlarm();
    else void storage.setAlarm(Math.max(next, Date.now()));
  }

  /** The row of a write, with the clocks the write gave the entry. */
  #row(kind, key, field, value, opts) {
    const now = this.#cache.now;
    let abs;
    let idle = this.#idle;
    let last = now;
    if (opts !== undefined) {
      if (opts.keepTtl) {
        const prev = this.#sql.exec(`SELECT abs, last, idle FROM ${TABLE} WHERE key = ? AND kind = ? AND field = ?`, key, kind, field).toArray()[0];
        if (prev) {
          this.#sql.exec(`UPDATE ${TABLE} SET value = ? WHERE key = ? AND kind = ? AND field = ?`, this.#codec.encode(value), key, kind, field);
          return;
        }
      }
      if (opts.expireAt !== undefined) abs = opts.expireAt instanceof Date ? opts.expireAt.getTime() : opts.expireAt;
      else if (opts.ttl !== undefined) abs = now + opts.ttl;
      if (opts.idle !== undefined) idle = opts.idle;
    }
    if (abs === undefined) abs = now + this.#ttl;
    this.#sql.exec(
      `INSERT OR REPLACE INTO ${TABLE} (key, kind, field, value, abs, last, idle) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      key,
      kind,
      field,
      this.#codec.encode(value),
      col(abs),
      last,
      col(idle),
    );
  }

  /** A read or touch restarted idle windows: their last access is persisted. */
  #touched(key, field) {
    const now = this.#cache.now;
    this.#sql.exec(`UPDATE ${TABLE} SET last = ? WHERE key = ? AND kind != ${FIELD} AND idle IS NOT NULL`, now, key);
    if (field !== undefined) {
      this.#sql.exec(`UPDATE ${TABLE} SET last = ? WHERE key = ? AND kind = ${FIELD} AND field = ? AND idle IS NOT NULL`, now, key, field);
    }
  }

  /** Sweeps what expired (its rows leave storage) and re-arms. Call it from the object's `alarm()`. */
  async alarm() {
    this.#armedAt = NaN;
    this.#cache.tick();
    this.#arm();
  }

  // ---- writes: the cache first (it validates and may throw), then the rows

  set(key, value, opts) {
    this.#cache.set(key, value, opts);
    if (this.#cache.has(key)) this.#row(PLAIN, key, "", value, opts);
    this.#arm();
    return this;
  }

  hset(key, field, value, opts) {
    const created = this.#cache.hset(key, field, value, opts);
    if (this.#cache.hhas(key, field)) this.#row(FIELD, key, field, value, opts);
    this.#arm();
    return created;
  }

  get(key) {
    const v = this.#cache.get(key);
    if (v !== undefined) this.#touched(key);
    return v;
  }

  hget(key, field) {
    const v = this.#cache.hget(key, field);
    if (v !== undefined) this.#touched(key, field);
    return v;
  }

  touch(key) {
    const ok = this.#cache.touch(key);
    if (ok) this.#touched(key);
    return ok;
  }

  expire(key, ms, cond) {
    const ok = this.#cache.expire(key, ms, cond);
    if (ok) this.#deadline(key, this.#cache.now + ms);
    return ok;
  }

  expireAt(key, time, cond) {
    const ok = this.#cache.expireAt(key, time, cond);
    if (ok) this.#deadline(key, time instanceof Date ? time.getTime() : time);
    return ok;
  }

  persist(key) {
    const ok = this.#cache.persist(key);
    if (ok) this.#sql.exec(`UPDATE ${TABLE} SET abs = NULL, idle = NULL WHERE key = ? AND kind != ${FIELD}`, key);
    this.#arm();
    return ok;
  }

  hexpire(key, field, ms, cond) {
    const ok = this.#cache.hexpire(key, field, ms, cond);
    if (ok) this.#fieldDeadline(key, field, this.#cache.now + ms);
    return ok;
  }

  hexpireAt(key, field, time, cond) {
    const ok = this.#cache.hexpireAt(key, field, time, cond);
    if (ok) this.#fieldDeadline(key, field, time instanceof Date ? time.getTime() : time);
    return ok;
  }

  hpersist(key, field) {
    const ok = this.#cache.hpersist(key, field);
    if (ok) this.#sql.exec(`UPDATE ${TABLE} SET abs = NULL, idle = NULL WHERE key = ? AND kind = ${FIELD} AND field = ?`, key, field);
    this.#arm();
    return ok;
  }

  /** A key's new absolute deadline (a deadline already past removed the key, and dispose its rows). */
  #deadline(key, abs) {
    if (this.#cache.has(key)) {
      const plain = this.#sql.exec(`UPDATE ${TABLE} SET abs = ? WHERE key = ? AND kind = ${PLAIN}`, abs, key).rowsWritten;
      if (!plain) {
        // A hash: its key's own deadline lives in a row of its own.
        this.#sql.exec(
          `INSERT OR REPLACE INTO ${TABLE} (key, kind, field, value, abs, last, idle) VALUES (?, ${HASH_KEY}, '', NULL, ?, ?, NULL)`,
          key,
          abs,
          this.#cache.now,
        );
      }
    }
    this.#arm();
  }

  #fieldDeadline(key, field, abs) {
    if (this.#cache.hhas(key, field)) {
      this.#sql.exec(`UPDATE ${TABLE} SET abs = ? WHERE key = ? AND kind = ${FIELD} AND field = ?`, abs, key, field);
    }
    this.#arm();
  }

  delete(key) {
    const ok = this.#cache.delete(key);
    this.#arm();
    return ok;
  }

  hdel(key, field) {
    const ok = this.#cache.hdel(key, field);
    this.#arm();
    return ok;
  }

  clear() {
    this.#cache.clear();
    this.#sql.exec(`DELETE FROM ${TABLE}`);
    this.#arm();
  }

  tick(now) {
    const n = this.#cache.tick(now);
    this.#arm();
    return n;
  }

  purge() {
    const n = this.#cache.purge();
    this.#arm();
    return n;
  }

  // ---- reads that change nothing

  peek(key) {
    return this.#cache.peek(key);
  }
  has(key) {
    return this.#cache.has(key);
  }
  ttl(key) {
    return this.#cache.ttl(key);
  }
  hhas(key, field) {
    return this.#cache.hhas(key, field);
  }
  hlen(key) {
    return this.#cache.hlen(key);
  }
  hgetall(key) {
    return this.#cache.hgetall(key);
  }
  httl(key, field) {
    return this.#cache.httl(key, field);
  }
  keys() {
    return this.#cache.keys();
  }
  values() {
    return this.#cache.values();
  }
  entries() {
    return this.#cache.entries();
  }
  [Symbol.iterator]() {
    return this.#cache.entries();
  }
  forEach(fn, thisArg) {
    return this.#cache.forEach(fn, thisArg);
  }
  get size() {
    return this.#cache.size;
  }
  get now() {
    return this.#cache.now;
  }
  nextExpiry() {
    return this.#cache.nextExpiry();
  }
  stats() {
    return this.#cache.stats();
  }
  /** The `TtlCache` inside (reads are fine; writes through it are not persisted). */
  get local() {
    return this.#cache;
  }
}
