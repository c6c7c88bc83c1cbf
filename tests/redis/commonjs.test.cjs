// The Node tiers from CommonJS get the same TtlCache class as require("lapse"):
// require() of their ESM entries used to load dist/lapse.js, a second class,
// so `new KeyvLapse({ cache: new TtlCache() })` threw "cache: must be a lapse
// TtlCache" (found by a probe of the packed package).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { TtlCache } = require("lapse");
const { KeyvLapse } = require("lapse/keyv");
const { LapseDriver } = require("lapse/bentocache");
const { NearCache } = require("lapse/redis");

test("require(): lapse/keyv, lapse/bentocache and lapse/redis share require('lapse')'s TtlCache", async () => {
  const cache = new TtlCache({ maxEntries: 10 });
  const store = new KeyvLapse({ cache });
  assert.equal(store.cache, cache);
  await store.set("k", "v", 1000);
  assert.equal(cache.get("k"), "v");
  assert.ok(new KeyvLapse({}).cache instanceof TtlCache);
  const d = new LapseDriver({ maxItems: 10 });
  assert.ok(d.cache instanceof TtlCache);
  assert.equal(typeof NearCache.connect, "function");
  assert.equal(require.resolve("lapse/keyv").endsWith(".cjs"), true);
});
