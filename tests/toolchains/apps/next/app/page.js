// A server component: lapse runs on the server while the page renders. Reading
// searchParams makes it render per request under `next start`.
import { TtlCache } from "lapse";
import { smoke } from "../src/smoke.mjs";

const cache = new TtlCache({ ttl: 60_000 });

export default async function Page({ searchParams }) {
  const { key = "none" } = await searchParams;
  cache.set(key, `value of ${key}`);
  const verdict = { ...smoke(TtlCache), echo: cache.get(key) };
  return <pre id="verdict">{JSON.stringify(verdict)}</pre>;
}
