// ESM consumers under nodenext resolution (`types.import` -> index.d.ts).
import { TtlCache } from "lapse";
const c: TtlCache<boolean> = new TtlCache<boolean>({ idle: 500 });
c.set("on", true);
// @ts-expect-error wrong value type
c.set("off", "false");
