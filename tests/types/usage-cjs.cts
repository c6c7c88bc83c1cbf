// CommonJS consumers: `require("lapse")` resolves types through the
// `types.require` condition (index.d.cts).
import { TtlCache } from "lapse";
import lapse = require("lapse");

const c = new TtlCache<string>({ ttl: 1_000 });
c.set("a", "b");
const v: string | undefined = c.get("a");
const d = new lapse.TtlCache<number>();
d.set("n", 1);
// @ts-expect-error keys are strings
d.set(2, 1);
void v;
