// Compile-time checks of the tier entries' types (lapse/redis, lapse/keyv, lapse/bentocache, lapse/durable).
import { NearCache } from "lapse/redis";
import { DurableCache, type DurableCacheState } from "lapse/durable";
import { KeyvLapse } from "lapse/keyv";
import { lapseDriver, LapseDriver } from "lapse/bentocache";

async function tiers() {
  const near = await NearCache.connect<{ name: string }>("redis://127.0.0.1:6379", { ttl: 60_000, maxEntries: 1000 });
  const u: { name: string } | undefined = await near.get("user:1");
  await near.set("user:1", { name: "Ada" }, { ttl: 1000 });
  // @ts-expect-error: values are typed
  await near.set("user:1", 42);
  // @ts-expect-error: unknown option
  await near.set("user:1", { name: "Ada" }, { px: 1000 });
  const f = await near.fetch("user:2", async (key, { signal }) => ({ name: key + String(signal.aborted) }));
  const n: string | undefined = f?.name;
  const removed: boolean = await near.delete("user:1");
  const hits: number = near.stats().invalidations + near.local.stats().hits;
  await near.close();

  // @ts-expect-error: values are never undefined
  await near.set("user:1", undefined);
  const store = new KeyvLapse({ maxEntries: 10 });
  // @ts-expect-error: a cache, or options for a new one, not both (TypeError at run time)
  new KeyvLapse({ cache: near.local, ttl: 5 });
  new KeyvLapse({ cache: near.local });
  const ok: boolean = await store.set("k", "v", 1000);
  const driver: LapseDriver = lapseDriver({ maxItems: 10, idle: 1000 }).factory({});
  const left: number = driver.getRemainingTtl("k");
  return [u, n, removed, hits, ok, left];
}
void tiers;

async function durable(state: DurableCacheState) {
  const d = new DurableCache<{ n: number }>(state, { ttl: 60_000, refresh: 10_000 });
  const v: { n: number } | undefined = await d.fetch("k", async (key, { signal }) => ({ n: key.length + Number(signal.aborted) }), { ttl: 5 });
  const f: { n: number } | undefined = await d.hfetch("h", "f", (key, field) => ({ n: field.length }));
  // @ts-expect-error: the loader's value is typed
  await d.fetch("k", async () => "text");
  return [v, f];
}
