const { TtlCache } = require("lapse");
const { smoke } = require("./smoke.cjs");

const cache = new TtlCache({ ttl: 60_000 });

test("lapse under jsdom", () => {
  expect(typeof window).toBe("object"); // really the jsdom environment
  expect(smoke(TtlCache).ok).toBe(true);
  cache.set("k", "v");
  expect(cache.get("k")).toBe("v");
});
