// A route handler with a module-scope cache: it lives across requests.
import { TtlCache } from "lapse";
import { smoke } from "../../../src/smoke.mjs";

const cache = new TtlCache({ ttl: 60_000 });

export async function GET() {
  const hits = (cache.get("hits") ?? 0) + 1;
  cache.set("hits", hits);
  return Response.json({ ...smoke(TtlCache), hits });
}
