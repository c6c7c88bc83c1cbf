/**
 * @jest-environment node
 */
const { TtlCache } = require("lapse");
const { smoke } = require("./smoke.cjs");

test("lapse under Jest's node environment", () => {
  expect(typeof window).toBe("undefined");
  expect(smoke(TtlCache).ok).toBe(true);
});
