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
import { decode } from "./decode.js";
import { encodeSnapshot } from "./snapshot.js";

const TABLE = "_lapse_entries";
// A value longer than CHUNK UTF-16 units is stored in rows of this table, in
// order, and its entry row's value is NULL: a row holds at most 2 MB in
// Cloudflare's SQLite (and about 8 MB in workerd's), so one value in one row
// was a cliff. 512 Ki units are at most 1.5 MB of UTF-8.
const CHUNKS = "_lapse_chunks";
const CHUNK = 512 * 1024;
// kind: what a row is. A plain entry and a hash field carry a value; a hash
// key's own row carries only the key's absolute deadline.
const PLAIN = 0;
const FIELD = 1;
const HASH_KEY = 2;

/**
 * Why JSON would give back something else than `v` (a restart would change
 * the value), or null: NaN and the infinities become null, -0 becomes 0, a
 * Date a string, a Map or Set `{}`, a class instance or a null-prototype
 * object a plain object, holes
 * and undefined in arrays null, undefined and functions in objects vanish.
 * A cycle, and nesting past 1000 levels, it reports too; a bigint JSON
 * refuses itself.
 */
function notJson(v, depth, seen = []) {
  switch (typeof v) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(v) && !Object.is(v, -0) ? null : `${Object.is(v, -0) ? "-0" : v}`;
    case "bigint":
      return null; // JSON.stringify throws TypeError for it
    case "object": {
      if (v === null) return null;
      // (A cycle made JSON throw, and walking every path around one with
      // two ways back never ended; past 1000 levels, unchecked, a Date went
      // in as a string. Both go to the snapshot bytes, which refuse them.)
      if (depth > 1000) return "over 1000 levels";
      if (seen.includes(v)) return "a cycle";
      const p = Object.getPrototypeOf(v);
      if (p === Array.prototype && Array.isArray(v)) {
        const keys = Object.keys(v);
        if (keys.length !== v.length || (v.length !== 0 && keys[v.length - 1] !== String(v.length - 1))) {
          return "an array with holes or named properties";
        }
      } else if (p !== Object.prototype) {
        return p === null ? "a null-prototype object" : `a ${p?.constructor?.name ?? "non-plain object"}`;
      }
      if (typeof v.toJSON === "function") return "an object with toJSON";
      seen.push(v);
      for (const k of Object.keys(v)) {
        const why = v[k] === undefined ? "undefined" : notJson(v[k], depth + 1, seen);
        if (why !== null) return why;
      }
      seen.pop();
      return null;
    }
    default:
      return typeof v; // undefined (inside), function, symbol
  }
}

// The default codec: JSON text where JSON gives the value back as it was
// (readable rows, and those of older versions), else the bytes of a
// one-entry snapshot (a BLOB): what a TtlCache holds and a snapshot
// carries (NaN, -0, Dates, Maps, Uint8Arrays, bigints, null-prototype
// objects, undefined inside) survives a restart unchanged. What neither
// carries (functions, class instances, holes) throws TypeError. A codec
// of the user's own is text only.
const NO_LIMITS = Object.freeze({ ttl: Infinity, idle: Infinity, maxEntries: Infinity, maxBytes: Infinity, sweepBudget: Infinity });
const DEFAULT_CODEC = Object.freeze({
  encode(v) {
    if (notJson(v, 0) === null) {
      try {
        return JSON.stringify(v);
      } catch {
        // a bigint inside (or a cycle, which the snapshot names too)
      }
    }
    try {
      return encodeSnapshot(0, false, NO_LIMITS, ["", v, Infinity, 0, Infinity, 0], [-1]).buffer; // (exact: a slice)
    } catch (e) {
      throw new TypeError(String(e?.message ?? e).replace(/^.*has no data form: /, ""));
    }
  },
  decode: (e) => (typeof e === "string" ? JSON.parse(e) : decode(new Uint8Array(e), true)[9][0]),
});
const OWN_OPTIONS = new Set(["codec"]);

/**
 * The TtlCache a DurableCache holds. A load's result (fetch, hfetch, a
 * refresh-ahead) is stored by TtlCache itself, through `set`/`hset`: here
 * those go through the DurableCache's own write, so the row is written as
 * for any write (encoded first, the same clocks, in the same run). The
 * DurableCache's own writes and its replay use `write`/`hwrite`.
 */
class Held extends TtlCache {
  /** The DurableCache, once it is built. */
  owner = null;
  set(key, value, opts) {
    if (this.owner === null) return super.set(key, value, opts);
    this.owner.set(key, value, opts);
    return this;
  }
  hset(key, field, value, opts) {
    return this.owner === null ? super.hset(key, field, value, opts) : this.owner.hset(key, field, value, opts);
  }
  write(key, value, opts) {
    return super.set(key, value, opts);
  }
  hwrite(key, field, value, opts) {
    return super.hset(key, field, value, opts);
  }
}

/** A finite time, or null for "none" (SQLite has no Infinity). */
const col = (t) => (t === Infinity || t === undefined ? null : t);
const uncol = (t) => (t === null ? Infinity : t);

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// The longest key or field (UTF-16 units) a row takes: with a value's
// chunk (CHUNK, at most 1.5 MB of UTF-8) it stays under Cloudflare's 2 MB
// row. A longer one threw SQLITE_TOOBIG after the cache had taken it (a
// probe: the entry then vanished at the next wake).
const NAME_MAX = 64 * 1024;
function checkName(what, s) {
  if (typeof s === "string" && s.length > NAME_MAX) {
    throw new RangeError(`${what}: longer than ${NAME_MAX} UTF-16 units (${s.length}), more than a storage row holds beside a value`);
  }
}

/**
 * A key or field as SQL stores it. SQLite's TEXT is UTF-8, which has no lone
 * surrogate: "\uD800" and "\uDC00" both came back as U+FFFD, one key for two
 * (and a delete of what came back missed the row). Such a name goes in as a
 * BLOB of its UTF-16 code units instead; every other name stays TEXT, as rows
 * written before hold it (a BLOB never equals a TEXT in SQLite).
 */
function name(s) {
  if (!LONE.test(s)) return s;
  const u = new Uint16Array(s.length);
  for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
  return u.buffer;
}
function unname(v) {
  if (typeof v === "string") return v;
  const u = new Uint16Array(v);
  let out = "";
  for (let i = 0; i < u.length; i += 8192) out += String.fromCharCode.apply(null, u.subarray(i, i + 8192));
  return out;
}

/**
 * A write's options read once, as a plain object: the cache and the row must
 * see the same values (a getter that changed between two reads left storage
 * with another deadline than the cache). Anything but an object goes through
 * as it is, for the cache to reject.
 */
function once(opts) {
  if (opts === null || typeof opts !== "object" || timeOf(opts) !== opts) return opts;
  const o = { ...opts };
  // Inherited options too, as the cache reads them (own ones first).
  for (const k of ["ttl", "idle", "expireAt", "keepTtl"]) if (!Object.hasOwn(o, k) && opts[k] !== undefined) o[k] = opts[k];
  return o;
}

const dateTime = Date.prototype.getTime;

/**
 * `t`'s time if it is a Date, of this realm or another (as the cache tells
 * one: by its internal time, not `instanceof`), else `t` as it is.
 */
function timeOf(t) {
  try {
    return dateTime.call(t);
  } catch {
    return t;
  }
}

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
  /** Whether the cache follows a `clock` of the user's (else Date.now(): its deadlines are wall times). */
  #ownClock = false;
  /** The first error a user `dispose` threw in the current call, as `{ error }`. */
  #disposeError;
  /** Calls in progress (#guard). */
  #depth = 0;
  /** Runs a function in one storage transaction (#guard). */
  #atomically;
  /** key -> Set of `${kind}:${field}` whose values are in the chunk table. */
  #chunked = new Map();
  /** Keys whose hash fields removals took in this write (for set/hset: a dead hash replaced). */
  #fieldGone = new Set();

  /**
   * `options`: every `TtlCache` option (`ttl`, `idle`, `maxEntries`,
   * `maxBytes` + `sizeOf`, `sweepBudget`, `dispose`, `clock`), plus `codec`
   * (`{ encode(value) => string, decode(string) => value }`; by default JSON,
   * or snapshot bytes for what JSON would change: see DEFAULT_CODEC) for the
   * values in storage.
   */
  constructor(ctx, options = {}) {
    if (!ctx?.storage?.sql) {
      throw new TypeError("ctx: must be a Durable Object state with SQLite storage (enable it with new_sqlite_classes in wrangler, enableSql in workerd)");
    }
    if (options === null || typeof options !== "object") throw new TypeError("options: must be an object");
    if (options.now !== undefined) throw new TypeError("now: a DurableCache follows the host's clock (give clock to follow another)");
    const { codec = DEFAULT_CODEC } = options;
    if (typeof codec?.encode !== "function" || typeof codec?.decode !== "function") {
      throw new TypeError("codec: must be an object with encode(value) and decode(string) functions");
    }
    const local = {};
    for (const k of Object.keys(options)) if (!OWN_OPTIONS.has(k)) local[k] = options[k];
    const userClock = local.clock ?? Date.now;
    this.#ownClock = local.clock !== undefined;
    const userDispose = local.dispose;
    this.#ctx = ctx;
    this.#sql = ctx.storage.sql;
    const storage = ctx.storage;
    // (A stand-in `ctx` without transactionSync runs the statements one by one.)
    this.#atomically = typeof storage.transactionSync === "function" ? (f) => storage.transactionSync(f) : (f) => f();
    this.#codec = codec;
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS ${TABLE} (key TEXT NOT NULL, kind INTEGER NOT NULL, field TEXT NOT NULL, value TEXT, abs REAL, last REAL NOT NULL, idle REAL, PRIMARY KEY (key, kind, field))`,
    );
    // `read`: read since written (its eviction credit, which the replay
    // gives back). Tables from before it get the column on waking.
    if (!this.#sql.exec(`PRAGMA table_info(${TABLE})`).toArray().some((c) => c.name === "read")) {
      this.#sql.exec(`ALTER TABLE ${TABLE} ADD COLUMN read INTEGER NOT NULL DEFAULT 0`);
    }
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS ${CHUNKS} (key TEXT NOT NULL, kind INTEGER NOT NULL, field TEXT NOT NULL, seq INTEGER NOT NULL, part TEXT NOT NULL, PRIMARY KEY (key, kind, field, seq))`,
    );
    const rows = this.#sql.exec(`SELECT key, kind, field, value, abs, last, idle, read FROM ${TABLE} ORDER BY last`).toArray();
    // During the replay the clock starts at the oldest last access (the cache
    // reads it as it is built), and tick(t) walks it forward row by row; then
    // it follows the host's clock.
    let replayAt = rows.length > 0 ? rows[0].last : null;
    this.#cache = new Held({
      ...local,
      clock: () => replayAt ?? userClock(),
      dispose: (value, key, reason, field) => {
        this.#forget(key, reason, field);
        if (!userDispose) return;
        try {
          userDispose(value, key, reason, field);
        } catch (error) {
          // Thrown by the public method, once storage matches (#guard).
          if (this.#disposeError === undefined) this.#disposeError = { error };
        }
      },
    });
    if (typeof local.ttl === "number") this.#ttl = local.ttl;
    if (typeof local.idle === "number") this.#idle = local.idle;
    if (rows.length > 0) {
      try {
        this.#replay(rows, () => (replayAt = null));
      } finally {
        replayAt = null;
      }
    }
    this.#armedAt = NaN; // unknown: arm on the first occasion
    this.#arm();
    this.#cache.owner = this;
  }

  #replay(rows, done) {
    const c = this.#cache;
    const keyDeadlines = [];
    for (const r of rows) {
      r.key = unname(r.key);
      r.field = unname(r.field);
      c.tick(r.last);
      const opts = { idle: uncol(r.idle) };
      if (r.abs === null) opts.ttl = Infinity;
      else opts.expireAt = r.abs;
      if (r.kind === HASH_KEY) {
        keyDeadlines.push(r);
        continue;
      }
      let enc = r.value;
      if (enc === null) enc = this.#joined(r.key, r.kind, r.field);
      if (r.kind === PLAIN) c.write(r.key, this.#codec.decode(enc), opts);
      else c.hwrite(r.key, r.field, this.#codec.decode(enc), opts);
      // Read since written: the read again, at its time, for the credit the
      // eviction policy gave it (else a wake evicted the key read last first).
      if (r.read) {
        if (r.kind === PLAIN) c.get(r.key);
        else c.hget(r.key, r.field);
      }
    }
    for (const r of keyDeadlines) if (r.abs !== null && c.has(r.key)) c.expireAt(r.key, r.abs);
    // Now the host's clock: the cache read the replay's clock in this run of
    // JS and would go on reading it until a microtask (reads in the object's
    // constructor returned entries that had expired while it slept).
    done();
    this.#guard(() => {
      c.tick();
      // Rows that expired while the object slept go now.
      for (const r of rows) {
        const live = r.kind === PLAIN ? c.has(r.key) : c.has(r.key) && (r.kind === HASH_KEY || c.hhas(r.key, r.field));
        if (live) continue;
        this.#sql.exec(`DELETE FROM ${TABLE} WHERE key = ? AND kind = ? AND field = ?`, name(r.key), r.kind, name(r.field));
        if (r.value === null && r.kind !== HASH_KEY) this.#unchunk(r.key, r.kind, r.field);
      }
    });
  }

  /** `value` encoded for its row, before anything changes (TypeError naming it). */
  #encode(value) {
    let e;
    try {
      e = this.#codec.encode(value);
    } catch (err) {
      throw new TypeError(`value: the codec cannot store it in Durable Object storage (${err?.message ?? err})`);
    }
    if (typeof e !== "string" && this.#codec !== DEFAULT_CODEC) {
      throw new TypeError(`value: the codec cannot store it (codec.encode returned ${typeof e}, not a string)`);
    }
    return e;
  }

  /**
   * Runs a write or read that may remove entries, then throws the first
   * error a user `dispose` threw meanwhile: the rows of every removal and of
   * the write itself are in storage by then (the cache's own state is
   * complete before its dispose calls run; storage must be too).
   */
  #guard(fn, undo) {
    // Re-entrant: a callback (dispose, forEach's) may call back in; the
    // outermost call throws.
    if (this.#depth++ === 0) this.#disposeError = undefined;
    let r;
    try {
      if (this.#depth > 1) r = fn();
      else {
        // The outermost call's statements in one transaction: one that
        // fails (a full database) takes back those before it. Storage half
        // written woke broken: an overwrite of a value in chunks that
        // failed after its old chunks went and one new one came read back
        // as a truncated value, which the codec refused, and the object
        // could not start (session 9).
        const atomically = this.#atomically;
        try {
          r = atomically(fn);
        } catch (error) {
          // What this side keeps of storage went back with it.
          this.#chunked.clear();
          for (const c of this.#sql.exec(`SELECT DISTINCT key, kind, field FROM ${CHUNKS}`)) {
            this.#markChunked(unname(c.key), c.kind, unname(c.field));
          }
          this.#armedAt = NaN;
          // A value storage refused leaves the cache too (`undo`), not to
          // be read until a restart brings back what storage holds.
          if (undo !== undefined) {
            const first = this.#disposeError; // (the undo's dispose errors come after this error)
            try {
              atomically(() => {
                undo();
                this.#arm();
              });
            } catch {
              // (the value has left the cache; its old row may stay)
            }
            this.#disposeError = first;
          }
          throw error;
        }
      }
    } finally {
      if (--this.#depth === 0) {
        const e = this.#disposeError;
        this.#disposeError = undefined;
        if (e !== undefined) throw e.error; // eslint-disable-line no-unsafe-finally
      }
    }
    return r;
  }

  /** An iterator of the cache's whose steps may remove expired fields (and so dispose): each step guarded. */
  *#guarded(it) {
    for (;;) {
      const r = this.#guard(() => it.next());
      if (r.done) return;
      yield r.value;
    }
  }

  /** A removal the cache reported: its row leaves storage. */
  #forget(key, reason, field) {
    if (reason === "replaced") return; // the write that replaced it rewrites the row
    if (reason === "cleared") return; // clear() empties the table in one statement
    if (field === undefined) {
      this.#sql.exec(`DELETE FROM ${TABLE} WHERE key = ?`, name(key)); // a plain entry, or a whole hash
      if (this.#chunked.has(key)) {
        this.#sql.exec(`DELETE FROM ${CHUNKS} WHERE key = ?`, name(key));
        this.#chunked.delete(key);
      }
    } else {
      this.#fieldGone.add(key);
      this.#sql.exec(`DELETE FROM ${TABLE} WHERE key = ? AND kind = ${FIELD} AND field = ?`, name(key), name(field));
      this.#unchunk(key, FIELD, field);
      if (!this.#cache.has(key)) this.#sql.exec(`DELETE FROM ${TABLE} WHERE key = ?`, name(key));
    }
  }

  // ---- values in chunks (CHUNK). `#chunked`: key -> Set of `${kind}:${field}`
  // stored in chunks, so that a write or removal of any other value costs no
  // statement on the chunk table.

  /** The value of a row stored in chunks. */
  #joined(key, kind, field) {
    const parts = this.#sql.exec(`SELECT part FROM ${CHUNKS} WHERE key = ? AND kind = ? AND field = ? ORDER BY seq`, name(key), kind, name(field)).toArray();
    this.#markChunked(key, kind, field);
    if (parts.length === 0 || typeof parts[0].part === "string") return parts.map((p) => p.part).join("");
    // Bytes (the default codec's BLOBs).
    const out = new Uint8Array(parts.reduce((n, p) => n + p.part.byteLength, 0));
    let at = 0;
    for (const { part } of parts) {
      out.set(new Uint8Array(part), at);
      at += part.byteLength;
    }
    return out.buffer;
  }

  #markChunked(key, kind, field) {
    let set = this.#chunked.get(key);
    if (set === undefined) this.#chunked.set(key, (set = new Set()));
    set.add(`${kind}:${field}`);
  }

  /** Drops a value's chunks, if it has any. */
  #unchunk(key, kind, field) {
    const set = this.#chunked.get(key);
    if (set === undefined || !set.delete(`${kind}:${field}`)) return;
    if (set.size === 0) this.#chunked.delete(key);
    this.#sql.exec(`DELETE FROM ${CHUNKS} WHERE key = ? AND kind = ? AND field = ?`, name(key), kind, name(field));
  }

  /** The value column of a row whose encoded value is `enc`: itself, or NULL with its chunks written. */
  #valueCol(key, kind, field, enc) {
    this.#unchunk(key, kind, field);
    const text = typeof enc === "string";
    // Bytes: CHUNK units of text are up to 3 * CHUNK bytes of UTF-8.
    const size = text ? CHUNK : 2 * CHUNK;
    const len = text ? enc.length : enc.byteLength;
    if (len <= size) return enc;
    for (let at = 0, seq = 0; at < len; seq++) {
      let end = Math.min(at + size, len);
      // Not between the halves of a surrogate pair: each part is TEXT (UTF-8).
      const u = text ? enc.charCodeAt(end - 1) : 0;
      if (end < len && u >= 0xd800 && u <= 0xdbff) end--;
      this.#sql.exec(`INSERT INTO ${CHUNKS} (key, kind, field, seq, part) VALUES (?, ?, ?, ?, ?)`, name(key), kind, name(field), seq, enc.slice(at, end));
      at = end;
    }
    this.#markChunked(key, kind, field);
    return null;
  }

  /** Keeps the object's alarm at the cache's next deadline. */
  #arm() {
    const next = this.#cache.nextExpiry();
    if (next === this.#armedAt) return;
    this.#armedAt = next;
    const storage = this.#ctx.storage;
    // Not awaited: the object's output gate holds replies until storage has it.
    // An alarm is wall-clock time: a cache that follows another `clock`
    // has its next deadline that far ahead of now (an alarm at its own
    // reading, behind the wall clock, fired again at once, hundreds of
    // times a second). On Date.now() it is the deadline itself: converted
    // through the cache's reading, which stands still for the run, it came
    // a few ms after nextExpiry() (an acceptance probe).
    if (next === Infinity) void storage.deleteAlarm();
    else void storage.setAlarm(this.#ownClock ? Date.now() + Math.max(0, next - this.#cache.now) : next);
  }

  /** The row of a write (`enc`: its encoded value), with the clocks the write gave the entry. */
  #row(kind, key, field, enc, opts) {
    const now = this.#cache.now;
    let abs;
    let idle = this.#idle;
    let last = now;
    const value = this.#valueCol(key, kind, field, enc);
    key = name(key);
    field = name(field);
    if (opts !== undefined) {
      if (opts.keepTtl) {
        const prev = this.#sql.exec(`SELECT abs, last, idle FROM ${TABLE} WHERE key = ? AND kind = ? AND field = ?`, key, kind, field).toArray()[0];
        if (prev) {
          this.#sql.exec(`UPDATE ${TABLE} SET value = ?, read = 0 WHERE key = ? AND kind = ? AND field = ?`, value, key, kind, field);
          return;
        }
      }
      if (opts.expireAt !== undefined) abs = timeOf(opts.expireAt);
      else if (opts.ttl !== undefined) abs = now + opts.ttl;
      if (opts.idle !== undefined) idle = opts.idle;
    }
    if (abs === undefined) abs = now + this.#ttl;
    this.#sql.exec(
      `INSERT OR REPLACE INTO ${TABLE} (key, kind, field, value, abs, last, idle, read) VALUES (?, ?, ?, ?, ?, ?, ?, 0)`,
      key,
      kind,
      field,
      value,
      col(abs),
      last,
      col(idle),
    );
  }

  /**
   * After a write of `key`, which was not live before it (`fresh`): if the
   * write replaced a dead hash (a field of the key left in it), the hash's
   * own deadline row goes. Its fields' rows went with their disposes, and
   * the key's only when the key is gone, which it is not: applied on
   * waking, that row deleted the new value or the new hash.
   */
  #replacedHash(key, fresh) {
    if (fresh && this.#fieldGone.has(key)) this.#sql.exec(`DELETE FROM ${TABLE} WHERE key = ? AND kind = ${HASH_KEY}`, name(key));
  }

  /**
   * A read (`read`: get or hget) or touch restarted idle windows: their last
   * access is persisted; a read also marks its row read since written, once
   * (a row written only on the first read after a write, or with an idle window).
   */
  #touched(key, field, read) {
    const now = this.#cache.now;
    const mark = read ? ", read = 1" : "";
    const first = read ? " OR read = 0" : "";
    const last = "last = CASE WHEN idle IS NULL THEN last ELSE ? END";
    if (field === undefined) {
      this.#sql.exec(`UPDATE ${TABLE} SET ${last}${mark} WHERE key = ? AND kind = ${PLAIN} AND (idle IS NOT NULL${first})`, now, name(key));
    } else {
      this.#sql.exec(`UPDATE ${TABLE} SET ${last}${mark} WHERE key = ? AND kind = ${FIELD} AND field = ? AND (idle IS NOT NULL${first})`, now, name(key), name(field));
    }
  }

  /**
   * Sweeps what expired (its rows leave storage) and re-arms. Call it from
   * the object's `alarm()`. With nothing swept (a `sweepBudget` of 0, whose
   * `nextExpiry()` is the next deadline still ahead) it purges what is due:
   * an alarm re-armed at a time already past fired again at once, hundreds
   * of times a second, and removed nothing. (With nothing due, a purge finds
   * nothing at once.)
   */
  async alarm() {
    this.#armedAt = NaN;
    this.#guard(() => {
      const c = this.#cache;
      if (c.tick() === 0) c.purge();
      this.#arm();
    });
  }

  // ---- writes: validated and encoded first, then the cache (it validates
  // the rest and may throw), then the rows; a dispose error last (#guard)

  set(key, value, opts) {
    checkName("key", key);
    const o = once(opts);
    const enc = value === undefined ? undefined : this.#encode(value); // (undefined: the cache's TypeError)
    const fresh = !this.#cache.has(key);
    this.#fieldGone.clear();
    let wrote = false;
    return this.#guard(
      () => {
        this.#cache.write(key, value, o);
        wrote = true;
        this.#replacedHash(key, fresh);
        if (this.#cache.has(key)) this.#row(PLAIN, key, "", enc, o);
        this.#arm();
        return this;
      },
      () => wrote && this.#cache.delete(key),
    );
  }

  hset(key, field, value, opts) {
    checkName("key", key);
    checkName("field", field);
    const o = once(opts);
    const enc = value === undefined ? undefined : this.#encode(value);
    const fresh = !this.#cache.has(key);
    this.#fieldGone.clear();
    let wrote = false;
    return this.#guard(
      () => {
        const created = this.#cache.hwrite(key, field, value, o);
        wrote = true;
        this.#replacedHash(key, fresh);
        if (this.#cache.hhas(key, field)) this.#row(FIELD, key, field, enc, o);
        this.#arm();
        return created;
      },
      () => wrote && this.#cache.hdel(key, field),
    );
  }

  get(key) {
    return this.#guard(() => {
      const v = this.#cache.get(key);
      if (v !== undefined) this.#touched(key, undefined, true);
      return v;
    });
  }

  hget(key, field) {
    return this.#guard(() => {
      const v = this.#cache.hget(key, field);
      if (v !== undefined) this.#touched(key, field, true);
      return v;
    });
  }

  touch(key) {
    return this.#guard(() => {
      const ok = this.#cache.touch(key);
      if (ok) this.#touched(key);
      return ok;
    });
  }

  expire(key, ms, cond) {
    return this.#guard(() => {
      const ok = this.#cache.expire(key, ms, cond);
      if (ok) this.#deadline(key, this.#cache.now + ms);
      return ok;
    });
  }

  expireAt(key, time, cond) {
    return this.#guard(() => {
      const ok = this.#cache.expireAt(key, time, cond);
      if (ok) this.#deadline(key, timeOf(time));
      return ok;
    });
  }

  persist(key) {
    return this.#guard(() => {
      const ok = this.#cache.persist(key);
      if (ok) this.#sql.exec(`UPDATE ${TABLE} SET abs = NULL, idle = NULL WHERE key = ? AND kind != ${FIELD}`, name(key));
      this.#arm();
      return ok;
    });
  }

  hexpire(key, field, ms, cond) {
    return this.#guard(() => {
      const ok = this.#cache.hexpire(key, field, ms, cond);
      if (ok) this.#fieldDeadline(key, field, this.#cache.now + ms);
      return ok;
    });
  }

  hexpireAt(key, field, time, cond) {
    return this.#guard(() => {
      const ok = this.#cache.hexpireAt(key, field, time, cond);
      if (ok) this.#fieldDeadline(key, field, timeOf(time));
      return ok;
    });
  }

  hpersist(key, field) {
    return this.#guard(() => {
      const ok = this.#cache.hpersist(key, field);
      if (ok) this.#sql.exec(`UPDATE ${TABLE} SET abs = NULL, idle = NULL WHERE key = ? AND kind = ${FIELD} AND field = ?`, name(key), name(field));
      this.#arm();
      return ok;
    });
  }

  /** A key's new absolute deadline (a deadline already past removed the key, and dispose its rows). */
  #deadline(key, abs) {
    if (this.#cache.has(key)) {
      const plain = this.#sql.exec(`UPDATE ${TABLE} SET abs = ? WHERE key = ? AND kind = ${PLAIN}`, abs, name(key)).rowsWritten;
      if (!plain) {
        // A hash: its key's own deadline lives in a row of its own.
        this.#sql.exec(
          `INSERT OR REPLACE INTO ${TABLE} (key, kind, field, value, abs, last, idle) VALUES (?, ${HASH_KEY}, '', NULL, ?, ?, NULL)`,
          name(key),
          abs,
          this.#cache.now,
        );
      }
    }
    this.#arm();
  }

  #fieldDeadline(key, field, abs) {
    if (this.#cache.hhas(key, field)) {
      this.#sql.exec(`UPDATE ${TABLE} SET abs = ? WHERE key = ? AND kind = ${FIELD} AND field = ?`, abs, name(key), name(field));
    }
    this.#arm();
  }

  delete(key) {
    return this.#guard(() => {
      const ok = this.#cache.delete(key);
      this.#arm();
      return ok;
    });
  }

  hdel(key, field) {
    return this.#guard(() => {
      const ok = this.#cache.hdel(key, field);
      this.#arm();
      return ok;
    });
  }

  clear() {
    // The table empties whatever dispose throws: the cache is empty by then.
    return this.#guard(() => {
      try {
        this.#cache.clear();
      } finally {
        this.#sql.exec(`DELETE FROM ${TABLE}`);
        this.#sql.exec(`DELETE FROM ${CHUNKS}`);
        this.#chunked.clear();
        this.#arm();
      }
    });
  }

  tick(now) {
    return this.#guard(() => {
      const n = this.#cache.tick(now);
      this.#arm();
      return n;
    });
  }

  purge() {
    return this.#guard(() => {
      const n = this.#cache.purge();
      this.#arm();
      return n;
    });
  }

  // ---- reads that change nothing (but for expired fields, as above)

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
  // (hlen, hgetall and iteration's values remove the expired fields they pass.)
  hlen(key) {
    return this.#guard(() => this.#cache.hlen(key));
  }
  hgetall(key) {
    return this.#guard(() => this.#cache.hgetall(key));
  }
  httl(key, field) {
    return this.#cache.httl(key, field);
  }
  // A walk purges first (its dispose calls delete rows, and may throw):
  // guarded, and the alarm re-armed, as any call that removes entries.
  keys() {
    return this.#walk(() => this.#cache.keys());
  }
  values() {
    return this.#guarded(this.#walk(() => this.#cache.values()));
  }
  entries() {
    return this.#guarded(this.#walk(() => this.#cache.entries()));
  }
  #walk(start) {
    return this.#guard(() => {
      const it = start();
      this.#arm();
      return it;
    });
  }
  [Symbol.iterator]() {
    return this.entries();
  }
  forEach(fn, thisArg) {
    return this.#guard(() => this.#cache.forEach(fn, thisArg));
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
  /**
   * The cache's `snapshot()` (restore it with `TtlCache.restore`). It
   * removes the expired entries it passed once its bytes are taken: their
   * rows go too, as any removal's (guarded, and the alarm re-armed).
   */
  snapshot() {
    return this.#walk(() => this.#cache.snapshot());
  }
  /**
   * The cache's `fetch`: a live entry (its read persisted as `get`'s), else
   * one load shared by every fetch of the key while it runs, whose result is
   * stored and persisted as `set` would (see Held). Options as TtlCache's.
   */
  fetch(key, loader, opts) {
    return this.#load(() => this.#cache.has(key), () => this.#cache.fetch(key, loader, opts), key, undefined);
  }

  /** `fetch` for a hash field. */
  hfetch(key, field, loader, opts) {
    return this.#load(() => this.#cache.hhas(key, field), () => this.#cache.hfetch(key, field, loader, opts), key, field);
  }

  /** Runs a fetch: a hit's read persisted, a dispose error (or a bad key) a rejection. */
  #load(live, start, key, field) {
    try {
      return this.#guard(() => {
        const hit = live();
        const p = start();
        if (hit) this.#touched(key, field, true);
        this.#arm();
        return p;
      });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** The `TtlCache` inside (read it; its set/hset are persisted, as a load's store must be; its other writes are not). */
  get local() {
    return this.#cache;
  }
}
