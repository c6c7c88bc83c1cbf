// The browser app of every bundler test: import lapse by package name, run the
// shared smoke check (copied beside this file as smoke.mjs), report the verdict
// on window.__lapse and <body data-lapse>.
import { TtlCache } from "lapse";
import { smoke } from "./smoke.mjs";

let result;
try {
  result = smoke(TtlCache);
} catch (e) {
  result = { ok: false, error: String(e?.stack ?? e) };
}
window.__lapse = result;
document.body.dataset.lapse = result.ok ? "ok" : "failed";
