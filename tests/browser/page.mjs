// Runs in Chromium: import lapse by package name (resolved by an import map,
// esbuild or Vite), run the shared smoke check, report on window.__lapse.
import { TtlCache } from "lapse";
import { smoke } from "../runtimes/smoke.mjs";

try {
  window.__lapse = smoke(TtlCache);
} catch (e) {
  window.__lapse = { ok: false, error: String(e?.stack ?? e) };
}
document.body.dataset.lapse = window.__lapse.ok ? "ok" : "failed";
