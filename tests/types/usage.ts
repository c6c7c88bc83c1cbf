// Compile-time checks of the published types (index.d.ts). Each line after an
// "expect-error" directive must fail to type-check; tsc reports an unused one.
import { TtlCache } from "lapse";
import type {
  Cond,
  DisposeReason,
  Entry,
  FetchOptions,
  LoaderContext,
  SetOptions,
  TtlCacheOptions,
  TtlCacheStats,
} from "lapse";

const DAY = 86_400_000;

// ---- constructor
const plain = new TtlCache();
const c = new TtlCache<{ name: string }>({
  now: Date.now(),
  ttl: 90 * DAY,
  idle: 30 * DAY,
  maxEntries: 100_000,
  maxBytes: 1 << 20,
  sizeOf: (value, key, field) => value.name.length + key.length + (field?.length ?? 0),
  sweepBudget: 1000,
  dispose(value, key, reason, field) {
    const v: { name: string } = value;
    const k: string = key;
    const r: DisposeReason = reason;
    const f: string | undefined = field;
    void [v, k, r, f];
  },
});
// @ts-expect-error unknown option
new TtlCache({ ttll: 5 });
// @ts-expect-error ttl is a number of ms
new TtlCache({ ttl: "5s" });
// @ts-expect-error dispose reasons are a closed union
new TtlCache<string>({ dispose: (_v, _k, reason: "gone") => void reason });

// ---- plain entries
const self: TtlCache<{ name: string }> = c.set("user:1", { name: "Ada" });
c.set("user:2", { name: "Bob" }, { ttl: 5_000 });
c.set("user:3", { name: "Cy" }, { ttl: Infinity, idle: 1_000 });
c.set("user:4", { name: "Di" }, { expireAt: new Date(Date.now() + DAY) });
c.set("user:5", { name: "Ed" }, { expireAt: Date.now() + DAY, idle: 60_000 });
c.set("user:5", { name: "Ed2" }, { keepTtl: true });
// @ts-expect-error keys are strings
c.set(1, { name: "x" });
// @ts-expect-error value has the cache's type
c.set("k", { nom: "x" });
// @ts-expect-error ttl and expireAt exclude each other
c.set("k", { name: "x" }, { ttl: 1, expireAt: 2 });
// @ts-expect-error keepTtl excludes the clocks
c.set("k", { name: "x" }, { keepTtl: true, ttl: 5 });
// @ts-expect-error unknown write option
c.set("k", { name: "x" }, { ttl: 1, sliding: true });
// @ts-expect-error undefined is not a storable value
plain.set("k", undefined);
plain.set("k", null);

const got: { name: string } | undefined = c.get("user:1");
const peeked: { name: string } | undefined = c.peek("user:1");
const has: boolean = c.has("user:1");
const touched: boolean = c.touch("user:1");
const ttl: number | undefined = c.ttl("user:1");
const deleted: boolean = c.delete("user:1");
// @ts-expect-error keys are strings
c.get(42);
void [self, got, peeked, has, touched, ttl, deleted];

// ---- expiry with conditions
const conds: Cond[] = ["NX", "XX", "GT", "LT"];
for (const cond of conds) c.expire("user:2", 1_000, cond);
const e1: boolean = c.expire("user:2", 1_000);
const e2: boolean = c.expireAt("user:2", new Date(), "GT");
const e3: boolean = c.expireAt("user:2", Date.now() + 10, "LT");
const p: boolean = c.persist("user:2");
// @ts-expect-error bad cond
c.expire("user:2", 1_000, "GE");
// @ts-expect-error conds are upper case
c.expireAt("user:2", 0, "nx");
// @ts-expect-error time is a number or a Date
c.expireAt("user:2", "tomorrow");
void [e1, e2, e3, p];

// ---- clock, sweeping, size
const now: number = c.now;
const removed: number = c.tick();
const removed2: number = c.tick(Date.now());
const purged: number = c.purge();
const size: number = c.size;
// @ts-expect-error now is read-only
c.now = 5;
// @ts-expect-error size is read-only
c.size = 5;
c.clear();
const next: number = c.nextExpiry();
const followed = new TtlCache<number>({ clock: () => performance.timeOrigin + performance.now(), ttl: 5_000 });
// @ts-expect-error a clock is a function returning ms
new TtlCache({ clock: 5 });
void [now, removed, removed2, purged, size, next, followed];

// ---- iteration (a hash key yields a Map of its live fields)
const nameOf = (v: Entry<{ name: string }>): string => (v instanceof Map ? `${v.size} fields` : v.name);
for (const [k, v] of c) void [k.toUpperCase(), nameOf(v)];
for (const k of c.keys()) void k.toUpperCase();
for (const v of c.values()) void nameOf(v);
for (const [k, v] of c.entries()) void [k, nameOf(v)];
c.forEach((v, k, cache) => void [nameOf(v), k.length, cache.size]);
const arr: [string, Entry<{ name: string }>][] = [...c];
// @ts-expect-error a value may be a hash's Map: narrow first
for (const v of c.values()) void v.name;
void arr;

// ---- stats
const s: TtlCacheStats = c.stats();
const nums: number[] = [
  s.hits, s.misses, s.expired, s.evicted, s.deleted, s.size, s.entries, s.bytes, s.inserted, s.updated,
  s.ticks, s.swept, s.rescheduled, s.cascaded, s.scheduled, s.hitRatio, s.wasmBytes, s.now,
  s.smallQueue, s.engineBytes, s.maxEntries, s.maxBytes,
];
// @ts-expect-error not a stat
void s.hitz;
void nums;

// ---- hashes
const h = new TtlCache<number>({ ttl: 60_000 });
const isNew: boolean = h.hset("session:1", "views", 1);
h.hset("session:1", "clicks", 2, { ttl: 5_000, idle: 1_000 });
h.hset("session:1", "flag", 3, { expireAt: new Date() });
const hv: number | undefined = h.hget("session:1", "views");
const hh: boolean = h.hhas("session:1", "views");
const hd: boolean = h.hdel("session:1", "views");
const hl: number = h.hlen("session:1");
const all: Map<string, number> = h.hgetall("session:1");
const he: boolean = h.hexpire("session:1", "clicks", 1_000, "XX");
const hea: boolean = h.hexpireAt("session:1", "clicks", new Date(), "NX");
const hp: boolean = h.hpersist("session:1", "clicks");
const ht: number | undefined = h.httl("session:1", "clicks");
// @ts-expect-error fields are strings
h.hset("session:1", 7, 1);
// @ts-expect-error value type
h.hset("session:1", "f", "one");
// @ts-expect-error bad cond
h.hexpire("session:1", "clicks", 1_000, "EQ");
// @ts-expect-error hset takes the same write options as set
h.hset("session:1", "f", 1, { ttl: 1, expireAt: 2 });
void [isNew, hv, hh, hd, hl, all, he, hea, hp, ht];

// ---- snapshot / restore
const bytes: Uint8Array = c.snapshot();
const back: TtlCache<{ name: string }> = TtlCache.restore<{ name: string }>(bytes, {
  dispose: (v, k, reason) => void [v.name, k, reason],
  sizeOf: (v) => v.name.length,
});
// @ts-expect-error restore takes bytes
TtlCache.restore("not bytes");
// @ts-expect-error restore options are what bytes cannot hold (dispose, sizeOf, clock, loading options)
TtlCache.restore(bytes, { ttl: 5 });
TtlCache.restore(bytes, { now: 0 });
TtlCache.restore(bytes, { clock: () => Date.now() });
TtlCache.restore(bytes, { grace: 1_000, refresh: 500, onLoadError: (e: unknown) => void e });
// @ts-expect-error now and clock exclude each other (TypeError at run time)
TtlCache.restore(bytes, { now: 0, clock: () => Date.now() });
// @ts-expect-error now and clock exclude each other
new TtlCache({ now: 0, clock: () => Date.now() });
// @ts-expect-error maxBytes needs sizeOf (TypeError at run time)
new TtlCache({ maxBytes: 1000 });
new TtlCache<string>({ maxBytes: 1000, sizeOf: (v) => v.length });
new TtlCache<string>({ sizeOf: (v) => v.length });
// An explicit undefined is an absent option (exactOptionalPropertyTypes).
new TtlCache({ ttl: undefined, idle: undefined, now: undefined, dispose: undefined });
c.set("k", { name: "x" }, { ttl: undefined });
// The bytes are a fresh copy over an ArrayBuffer: Blob and fetch bodies take them.
new Blob([c.snapshot()]);
void back;

// ---- exported helper types
const opts: TtlCacheOptions<string> = { ttl: 1_000 };
const w: SetOptions = { idle: 5 };
void [opts, w];

// ---- lifetime
const short = new TtlCache<number>();
const freeRet: void = short.free();
const disposeRet: void = short[Symbol.dispose]();
void freeRet;
void disposeRet;
// ---- loading: fetch / hfetch
interface User {
  name: string;
}
const users = new TtlCache<User>({
  ttl: 60_000,
  refresh: 30_000,
  grace: 300_000,
  onLoadError(error, key, field) {
    const e: unknown = error;
    const k: string = key;
    const f: string | undefined = field;
    void [e, k, f];
  },
});
async function loadUser(id: string, signal: AbortSignal): Promise<User> {
  return { name: signal.aborted ? "" : id };
}
async function loading(): Promise<void> {
  const u: User = await users.fetch("user:1", (key, { signal }) => loadUser(key, signal), { ttl: 5_000 });
  const sync: User = await users.fetch("user:2", () => ({ name: "Sync" }));
  const maybe: User | undefined = await users.fetch("user:3", async () => (Math.random() > 0.5 ? { name: "x" } : undefined));
  const ac = new AbortController();
  await users.fetch("user:4", (_k, ctx: LoaderContext) => loadUser("4", ctx.signal), {
    expireAt: new Date(),
    idle: 1_000,
    refresh: 0,
    grace: Infinity,
    signal: ac.signal,
  });
  const hu: User = await users.hfetch("team:1", "lead", (key, field, { signal }) => loadUser(key + field, signal));
  // An untyped cache takes the loader's type.
  const n: number = await plain.fetch("n", async () => 42);
  const s: string = await plain.fetch("s", () => "str");
  const fo: FetchOptions = { ttl: 1, grace: 2 };
  // @ts-expect-error fetch resolves to the loader's type (User), not string
  const wrong: string = await users.fetch("user:1", () => loadUser("1", ac.signal));
  // @ts-expect-error a maybe-undefined loader makes a maybe-undefined result
  const notMaybe: User = await users.fetch("user:3", async () => (Math.random() > 0.5 ? { name: "x" } : undefined));
  // @ts-expect-error the loader returns the cache's value type
  await users.fetch("user:5", async () => "not a user");
  // @ts-expect-error the loader is a function
  await users.fetch("user:6", { name: "not a loader" });
  // @ts-expect-error keys are strings
  await users.fetch(6, () => ({ name: "x" }));
  // @ts-expect-error unknown fetch option
  await users.fetch("user:7", () => ({ name: "x" }), { tll: 5 });
  // @ts-expect-error ttl and expireAt exclude each other
  await users.fetch("user:8", () => ({ name: "x" }), { ttl: 1, expireAt: 2 });
  // @ts-expect-error keepTtl is a set option, not a fetch one
  await users.fetch("user:9", () => ({ name: "x" }), { keepTtl: true });
  // @ts-expect-error refresh is a number of ms
  await users.fetch("user:10", () => ({ name: "x" }), { refresh: "30s" });
  // @ts-expect-error signal is an AbortSignal
  await users.fetch("user:11", () => ({ name: "x" }), { signal: {} });
  // @ts-expect-error an hfetch loader gets (key, field, context)
  await users.hfetch("team:1", "lead", (_key, ctx) => loadUser("1", ctx.signal));
  // @ts-expect-error hfetch needs a field
  await users.hfetch("team:1", () => ({ name: "x" }));
  // @ts-expect-error onLoadError's key is a string
  new TtlCache({ onLoadError: (_e: unknown, key: number) => void key });
  // @ts-expect-error grace is a number of ms
  new TtlCache({ grace: true });
  void [u, sync, maybe, hu, n, s, fo, wrong, notMaybe];
}
void loading;
const ls: TtlCacheStats = users.stats();
const loadCounters: number[] = [ls.loads, ls.loadErrors, ls.coalesced, ls.refreshes, ls.staleServed];
void loadCounters;
