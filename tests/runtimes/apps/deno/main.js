import { TtlCache } from "lapse";
import { smoke } from "./smoke.mjs";

const cache = new TtlCache({ ttl: 60_000 }); // module scope, default clock
cache.set("greeting", "hello");
console.log(JSON.stringify({ ...smoke(TtlCache), greeting: cache.get("greeting") }));
