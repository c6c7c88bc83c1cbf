// Durations and clock formatting for the demo (no dependencies).

export const SEC = 1000;
export const MIN = 60 * SEC;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

const UNITS = { ms: 1, s: SEC, m: MIN, h: HOUR, d: DAY, w: 7 * DAY };

/**
 * "90s", "15m", "1h30m", "30d", "500ms", "∞" -> ms. A bare number is ms.
 * "" -> undefined (use the default). Throws RangeError on anything else.
 */
export function parseDuration(text, name = "duration") {
  const s = String(text ?? "").trim().toLowerCase().replace(/\s+/g, "");
  if (s === "") return undefined;
  if (/^(∞|inf|infinity|none|never)$/.test(s)) return Infinity;
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g;
  let total = 0;
  let used = 0;
  for (const m of s.matchAll(re)) {
    if (m.index !== used) break;
    total += Number(m[1]) * UNITS[m[2]];
    used += m[0].length;
  }
  if (used !== s.length || used === 0) {
    throw new RangeError(`${name}: "${text}" is not a duration (try 90s, 15m, 2h, 30d or ∞)`);
  }
  return total;
}

/** A whole number of at least `min` (default 1), or "∞"/"" for Infinity. */
export function parseCount(text, name, min = 1) {
  const s = String(text ?? "").trim().toLowerCase();
  if (s === "" || s === "∞" || s === "inf" || s === "infinity") return Infinity;
  const n = Number(s.replace(/[_,\s]/g, ""));
  if (!Number.isInteger(n) || n < min) {
    throw new RangeError(`${name}: "${text}" must be a ${min === 0 ? "non-negative" : "positive"} whole number or ∞`);
  }
  return n;
}

const pad = (n, w = 2) => String(Math.floor(n)).padStart(w, "0");

/** Compact remaining time: 350ms, 4.2s, 14m 05s, 3h 20m, 29d 23h, ∞. */
export function fmtDuration(ms) {
  if (ms === Infinity) return "∞";
  if (!(ms > 0)) return "0s";
  if (ms < SEC) return `${Math.round(ms)}ms`;
  if (ms < MIN) return `${(ms / SEC).toFixed(ms < 10 * SEC ? 1 : 0)}s`;
  if (ms < HOUR) return `${Math.floor(ms / MIN)}m ${pad((ms % MIN) / SEC)}s`;
  if (ms < DAY) return `${Math.floor(ms / HOUR)}h ${pad((ms % HOUR) / MIN)}m`;
  return `${Math.floor(ms / DAY)}d ${pad((ms % DAY) / HOUR)}h`;
}

/** How long a configured clock is: "15m", "90d", "∞". */
export function fmtSpan(ms) {
  if (ms === Infinity) return "∞";
  for (const [u, v] of [["d", DAY], ["h", HOUR], ["m", MIN], ["s", SEC]]) {
    if (ms >= v && ms % v === 0) return `${ms / v}${u}`;
  }
  return ms >= SEC ? `${(ms / SEC).toFixed(1)}s` : `${ms}ms`;
}

/** Elapsed simulated time: T+3d 04:12:09.5 */
export function fmtElapsed(ms) {
  const d = Math.floor(ms / DAY);
  const rest = ms - d * DAY;
  const hms = `${pad(rest / HOUR)}:${pad((rest % HOUR) / MIN)}:${pad((rest % MIN) / SEC)}.${Math.floor((rest % SEC) / 100)}`;
  return `T+${d > 0 ? `${d}d ` : ""}${hms}`;
}

const dateFmt = new Intl.DateTimeFormat(undefined, {
  weekday: "short", day: "numeric", month: "short", year: "numeric",
  hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false,
});
const shortFmt = new Intl.DateTimeFormat(undefined, {
  day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false,
});

export const fmtDate = (t) => dateFmt.format(t);
export const fmtShortDate = (t) => shortFmt.format(t);

/** A time as the value of an <input type="datetime-local">. */
export function toLocalInput(t) {
  const d = new Date(t);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Speeds shown on the control: 1×, 2.5×, 1,000×, 500k×. */
export function fmtSpeed(x) {
  if (x >= 1e6) return `${+(x / 1e6).toPrecision(2)}M×`;
  if (x >= 1e5) return `${Math.round(x / 1e3)}k×`;
  return `${x.toLocaleString("en-US", { maximumFractionDigits: x < 10 ? 1 : 0 })}×`;
}

/** Round a speed to two significant digits (slider positions are logarithmic). */
export function niceSpeed(x) {
  if (x < 1) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  return Math.round((x / p) * 10) / 10 * p;
}
