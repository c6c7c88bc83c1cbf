const { TtlCache } = require("lapse");
const { smoke } = require("./smoke.cjs");

const cache = new TtlCache({ ttl: 60_000 }); // usable in the same tick as require()
cache.set("greeting", "hello");
console.log(JSON.stringify({ ...smoke(TtlCache), greeting: cache.get("greeting") }));
