import { expect, test } from "vitest";
import { TtlCache } from "lapse";
import { smoke } from "./smoke.mjs";

const cache = new TtlCache({ ttl: 60_000 });

test("lapse under vitest", () => {
  expect(smoke(TtlCache).ok).toBe(true);
  cache.set("k", "v");
  expect(cache.get("k")).toBe("v");
});
