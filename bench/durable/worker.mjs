// Bench worker: two Durable Object classes holding the same cache two ways.
//  - Rows:  lapse/durable's DurableCache (a row per entry).
//  - Whole: the old README pattern: a TtlCache, snapshotted whole into one
//           storage value after every write, restored whole at wake.
import { DurableObject } from "cloudflare:workers";
import { TtlCache } from "lapse";
import { DurableCache } from "lapse/durable";

const json = (b, s = 200) => new Response(JSON.stringify(b), { status: s, headers: { "content-type": "application/json" } });

export class Rows extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.cache = new DurableCache(ctx, { ttl: 3_600_000 });
  }
  alarm() {
    return this.cache.alarm();
  }
  async fetch(req) {
    const u = new URL(req.url);
    if (u.pathname === "/fill") {
      const n = Number(u.searchParams.get("n"));
      for (let i = 0; i < n; i++) this.cache.set(`k${i}`, { i, pad: "x".repeat(16) });
      return json({ size: this.cache.size });
    }
    if (u.pathname === "/write") {
      this.cache.set(u.searchParams.get("key"), { w: 1, pad: "x".repeat(16) });
      return json({ size: this.cache.size });
    }
    return json({ size: this.cache.size });
  }
}

export class Whole extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      const bytes = await ctx.storage.get("cache");
      this.cache = bytes ? TtlCache.restore(bytes) : new TtlCache({ ttl: 3_600_000 });
    });
  }
  async fetch(req) {
    const u = new URL(req.url);
    try {
      if (u.pathname === "/fill") {
        const n = Number(u.searchParams.get("n"));
        for (let i = 0; i < n; i++) this.cache.set(`k${i}`, { i, pad: "x".repeat(16) });
        await this.ctx.storage.put("cache", this.cache.snapshot());
        return json({ size: this.cache.size });
      }
      if (u.pathname === "/write") {
        this.cache.set(u.searchParams.get("key"), { w: 1, pad: "x".repeat(16) });
        await this.ctx.storage.put("cache", this.cache.snapshot());
        return json({ size: this.cache.size });
      }
      return json({ size: this.cache.size });
    } catch (e) {
      return json({ error: String(e?.message ?? e) }, 500);
    }
  }
}

export default {
  fetch(req, env) {
    const u = new URL(req.url);
    const ns = u.searchParams.get("kind") === "whole" ? env.WHOLE : env.ROWS;
    return ns.get(ns.idFromName(u.searchParams.get("name") ?? "x")).fetch(req);
  },
};
