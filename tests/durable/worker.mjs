// A Worker whose Durable Object class holds a lapse DurableCache. Each object
// (picked by ?name=) takes its cache options from its first request (?cfg=)
// and keeps them in its own SQL table, so after a restart of workerd it wakes
// with the same options. Storage writes are counted (statements that insert,
// update or delete rows) to show that a write's cost does not grow with the cache.
import { DurableObject } from "cloudflare:workers";
import { DurableCache } from "lapse/durable";
import { TtlCache } from "lapse";

function json(body, status = 200) {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/**
 * `ctx` with its SQL API wrapped to count write statements; the write
 * statement numbered `counter.failAt` throws instead, as a full database
 * does (SQLITE_FULL at the object's storage limit), and with
 * `counter.failFrom` every one after it too.
 */
function counting(ctx, counter) {
  const sql = ctx.storage.sql;
  const countingSql = {
    exec(query, ...args) {
      if (/^\s*(INSERT|UPDATE|DELETE)/i.test(query) && (++counter.writes === counter.failAt || (counter.failFrom && counter.writes > counter.failAt))) {
        throw new Error("SQLITE_FULL: database or disk is full (simulated)");
      }
      return sql.exec(query, ...args);
    },
  };
  const storage = new Proxy(ctx.storage, {
    get(target, p) {
      if (p === "sql") return countingSql;
      const v = target[p];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { storage };
}

export class SharedCache extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.counter = { writes: 0 };
    this.woke = Date.now();
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS test_cfg (v TEXT)");
    const row = ctx.storage.sql.exec("SELECT v FROM test_cfg").toArray()[0];
    this.cache = row ? this.#open(JSON.parse(row.v)) : null;
    // What a read in the constructor sees, right after the rebuild.
    this.ctorKeys = this.cache ? [...this.cache.keys()] : null;
  }

  #open(cfg) {
    // (JSON has no functions: `throwingDispose` asks for a dispose that
    // throws, `clockOffset` for a clock that far from Date.now(); `noAlarm`
    // leaves the alarm unanswered, so that nothing sweeps.)
    const { throwingDispose, clockOffset, noAlarm, legacyRow, ...opts } = cfg;
    const fresh = this.ctx.storage.sql.exec("SELECT count(*) AS n FROM sqlite_master WHERE name = '_lapse_entries'").toArray()[0].n === 0;
    if (legacyRow && fresh) {
      // Storage as the package wrote it before the read column: a table
      // without it, holding one plain entry.
      const t = "_lapse_entries";
      this.ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS ${t} (key TEXT NOT NULL, kind INTEGER NOT NULL, field TEXT NOT NULL, value TEXT, abs REAL, last REAL NOT NULL, idle REAL, PRIMARY KEY (key, kind, field))`);
      this.ctx.storage.sql.exec(`INSERT OR REPLACE INTO ${t} VALUES ('old', 0, '', '"kept"', NULL, ?, NULL)`, Date.now());
    }
    this.noAlarm = noAlarm === true;
    if (clockOffset !== undefined) opts.clock = () => Date.now() + clockOffset;
    if (throwingDispose) {
      opts.dispose = (v, k, reason) => {
        throw new Error(`dispose threw (${reason} ${k})`);
      };
    }
    return new DurableCache(counting(this.ctx, this.counter), opts);
  }

  alarm() {
    this.alarms = (this.alarms ?? 0) + 1;
    if (this.noAlarm) return undefined;
    return this.cache?.alarm();
  }

  async fetch(request) {
    const url = new URL(request.url);
    const q = (k) => url.searchParams.get(k);
    if (!this.cache) {
      const cfg = JSON.parse(q("cfg") ?? "{}");
      this.ctx.storage.sql.exec("INSERT INTO test_cfg (v) VALUES (?)", JSON.stringify(cfg));
      this.cache = this.#open(cfg);
    }
    const c = this.cache;
    const key = q("key") ?? "";
    const before = this.counter.writes;
    // ?failAt=n: the request's n-th write statement fails.
    // (&failFrom=1: and every one after it.)
    if (q("failAt")) this.counter.failAt = before + Number(q("failAt"));
    this.counter.failFrom = q("failFrom") === "1";
    try {
      switch (url.pathname) {
        case "/set": {
          const opts = q("opts") ? JSON.parse(q("opts")) : undefined;
          c.set(key, JSON.parse(q("value")), opts);
          return json({ ok: true, writes: this.counter.writes - before, size: c.size });
        }
        case "/fill": {
          const n = Number(q("n"));
          for (let i = 0; i < n; i++) c.set(`${key}${i}`, { i });
          return json({ ok: true, size: c.size });
        }
        case "/get": {
          const v = c.get(key);
          return json({ found: v !== undefined, value: v ?? null, ttl: c.ttl(key) ?? null });
        }
        case "/hset":
          return json({ created: c.hset(key, q("field"), JSON.parse(q("value")), q("opts") ? JSON.parse(q("opts")) : undefined) });
        case "/hget": {
          const v = c.hget(key, q("field"));
          return json({ found: v !== undefined, value: v ?? null, httl: c.httl(key, q("field")) ?? null });
        }
        case "/lone": {
          // Lone surrogates cannot travel in a URL: written and read here.
          if (q("write")) {
            c.set("\uD800", "hi");
            c.set("\uDC00", "lo");
            c.set("\uFFFD", "replacement");
            c.hset("h", "\uD801", 1);
            c.hset("h", "\uDC01", 2);
          }
          if (q("delete")) c.delete("\uD800");
          const rows = this.ctx.storage.sql.exec("SELECT count(*) AS n FROM _lapse_entries").toArray()[0].n;
          return json({ hi: c.peek("\uD800") ?? null, lo: c.peek("\uDC00") ?? null, rep: c.peek("\uFFFD") ?? null, hlen: c.hlen("h"), f1: c.hget("h", "\uD801") ?? null, size: c.size, rows });
        }
        case "/big": {
          // Values over a row's size limit (workerd: about 8 MB; Cloudflare: 2 MB).
          const n = Number(q("n") ?? 0);
          if (n > 0) c.set(key, "x".repeat(n) + "\u{1F600}".repeat(2));
          if (q("field")) c.hset(`${key}:h`, q("field"), "y".repeat(Number(q("fn"))));
          const v = c.peek(key);
          const chunks = this.ctx.storage.sql.exec("SELECT count(*) AS n FROM _lapse_chunks").toArray()[0].n;
          const f = c.hget(`${key}:h`, "f");
          return json({ length: typeof v === "string" ? v.length : null, intact: typeof v === "string" && v.endsWith("\u{1F600}\u{1F600}"), value: typeof v === "string" && v.length < 100 ? v : null, field: f ? f.length : null, chunks });
        }
        case "/bad": {
          // A value the codec cannot encode, and options whose getter changes.
          let error = null;
          try {
            c.set(key, () => 1);
          } catch (e) {
            error = { name: e.name, message: e.message };
          }
          let n = 0;
          c.set(`${key}:getter`, 1, {
            get ttl() {
              return n++ === 0 ? 60_000 : 3_600_000;
            },
          });
          return json({ error, value: c.peek(key) ?? null, ttl: c.ttl(`${key}:getter`) });
        }
        case "/fetch": {
          // fetch/hfetch: one load for concurrent fetches, the result (and a
          // refresh's) persisted; read after a restart by /get and /hget.
          let calls = 0;
          const loader = (v) => async () => {
            calls++;
            await new Promise((r) => setTimeout(r, 5));
            return v;
          };
          const got = await Promise.all([1, 2, 3].map(() => c.fetch("f", loader("loaded"))));
          const field = await c.hfetch("fh", "x", loader(new Date(3)));
          const hit = await c.fetch("f", loader("unused"));
          // Refresh-ahead: the old value at once, the new one stored behind it.
          await new Promise((r) => setTimeout(r, 30));
          const stale = await c.fetch("f", loader("refreshed"), { refresh: 10 });
          await new Promise((r) => setTimeout(r, 30));
          const rows = this.ctx.storage.sql.exec("SELECT count(*) AS n FROM _lapse_entries WHERE key LIKE 'f%'").toArray()[0].n;
          let bad = null;
          try {
            await c.fetch("g", async () => () => 1); // a value no codec stores
          } catch (e) {
            bad = `${e.name}: ${e.message}`;
          }
          return json({ got, field: field.getTime(), hit, stale, calls, rows, now: c.peek("f"), bad, g: c.has("g") });
        }
        case "/walk": {
          // A walk purges first: its dispose error reaches the caller.
          if (q("write")) {
            for (let i = 0; i < 3; i++) c.set(`w${i}`, i, { ttl: 1 });
            c.set("wlive", 1);
            return json({ ok: true });
          }
          const out = {};
          for (const [what, walk] of [["keys", () => [...c.keys()]], ["values", () => [...c.values()]], ["entries", () => [...c.entries()]], ["iterator", () => [...c]]]) {
            try {
              out[what] = walk().length;
            } catch (e) {
              out[what] = String(e?.message ?? e);
            }
          }
          const rows = this.ctx.storage.sql.exec("SELECT count(*) AS n FROM _lapse_entries WHERE key LIKE 'w%'").toArray()[0].n;
          return json({ out, rows });
        }
        case "/cycles": {
          // Values the default codec must refuse quickly: a cycle with two
          // ways back, and a Date past 1000 levels.
          const p = { a: {}, b: {} };
          p.a.up = p;
          p.b.up = p;
          let deep = { d: new Date(1) };
          for (let i = 0; i < 1100; i++) deep = { deep };
          const errors = [];
          for (const v of [p, deep]) {
            try {
              c.set("cyc", v);
              errors.push(null);
            } catch (e) {
              errors.push(`${e.name}: ${e.message}`);
            }
          }
          return json({ errors, has: c.has("cyc") });
        }
        case "/longkey": {
          // Keys and fields past what a row holds beside a value (64 Ki units).
          const errors = [];
          const n = Number(q("n"));
          for (const write of [() => c.set("k".repeat(n), 1), () => c.hset("h", "f".repeat(n), 1)]) {
            try {
              write();
              errors.push(null);
            } catch (e) {
              errors.push(`${e.name}: ${e.message}`);
            }
          }
          const rows = this.ctx.storage.sql.exec("SELECT count(*) AS n FROM _lapse_entries").toArray()[0].n;
          return json({ errors, size: c.size, rows, long: c.has("k".repeat(n)) });
        }
        case "/expire":
          return json({ ok: c.expire(key, Number(q("ms"))) });
        case "/proto": {
          // Options inherited through a prototype, as TtlCache reads them.
          c.set(key, 1, Object.create({ ttl: Number(q("ttl")) }));
          return json({ ttl: c.ttl(key) });
        }
        case "/values": {
          // Values JSON would give back changed, and some no snapshot carries.
          const nullproto = Object.assign(Object.create(null), { x: 1 });
          const bigbytes = new Uint8Array(3 * 1024 * 1024).map((_, i) => i * 7); // past a chunk
          const cases = { nan: NaN, inf: -Infinity, negzero: -0, date: new Date(5), map: new Map([["a", new Date(1)]]), bytes: new Uint8Array([1, 255]), undef: { a: undefined, b: [undefined] }, big: [10n ** 30n, -1n], nullproto, bigbytes, plain: { a: [1, "x", null, true, { b: -1.5 }] }, holes: [1, , 3], klass: new (class Point {})(), set: new Set([1]) }; // eslint-disable-line no-sparse-arrays
          const same = (a, b) => {
            if (a instanceof Uint8Array) return b instanceof Uint8Array && a.length === b.length && a.every((x, i) => x === b[i]);
            if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
            if (a instanceof Map) return b instanceof Map && a.size === b.size && [...a].every(([k, v]) => same(v, b.get(k)));
            if (typeof a === "object" && a !== null) {
              return typeof b === "object" && b !== null && Object.getPrototypeOf(a) === Object.getPrototypeOf(b) && Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
            }
            return Object.is(a, b);
          };
          const errors = {};
          if (!q("check")) {
            for (const [k, v] of Object.entries(cases)) {
              try {
                c.set(`v:${k}`, v);
                errors[k] = null;
              } catch (e) {
                errors[k] = `${e.name}: ${e.message}`;
              }
            }
          }
          const checks = {};
          for (const [k, v] of Object.entries(cases)) if (c.has(`v:${k}`)) checks[k] = same(v, c.peek(`v:${k}`));
          const rows = {};
          for (const r of this.ctx.storage.sql.exec("SELECT key, typeof(value) AS t FROM _lapse_entries WHERE key LIKE 'v:%'").toArray()) rows[r.key.slice(2)] = r.t === "text" ? "string" : r.t;
          return json({ errors, checks, rows, keys: [...c.keys()].filter((k) => k.startsWith("v:")) });
        }
        case "/snapshot": {
          // Two entries, one already expired: the snapshot holds the live one,
          // and the dead one's row leaves storage with it.
          c.set("snap:live", { v: 1 });
          c.set("snap:dead", 2, { ttl: 1 });
          await new Promise((r) => setTimeout(r, 20));
          const back = TtlCache.restore(c.snapshot());
          const rows = this.ctx.storage.sql.exec("SELECT key FROM _lapse_entries WHERE key LIKE 'snap:%' ORDER BY key").toArray();
          return json({ keys: [...back.keys()].filter((k) => k.startsWith("snap:")), value: back.get("snap:live"), rows: rows.map((r) => r.key) });
        }
        case "/rows": {
          const rows = this.ctx.storage.sql.exec("SELECT key, kind, field, abs, last, idle FROM _lapse_entries ORDER BY key, field").toArray();
          return json({ rows, count: rows.length });
        }
        case "/info":
          return json({
            size: c.size,
            now: c.now,
            nextExpiry: c.nextExpiry() === Infinity ? null : c.nextExpiry(),
            alarm: await this.ctx.storage.getAlarm(),
            alarms: this.alarms ?? 0,
            woke: this.woke,
            keys: [...c.keys()],
            ctorKeys: this.ctorKeys,
          });
        default:
          return json({ error: "not found" }, 404);
      }
    } catch (e) {
      return json({ error: String(e?.message ?? e), name: e?.name }, 500);
    } finally {
      this.counter.failAt = 0;
      this.counter.failFrom = false;
    }
  }
}

export default {
  fetch(request, env) {
    const name = new URL(request.url).searchParams.get("name") ?? "main";
    return env.CACHE.get(env.CACHE.idFromName(name)).fetch(request);
  },
};
