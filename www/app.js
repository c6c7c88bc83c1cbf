// The lapse live demo. The page is the cache's host: it owns a simulated
// clock, and on every animation frame advances it by (real elapsed × speed)
// and calls `cache.tick(simNow)`, which sweeps at most `sweepBudget` expired
// entries. Removals come back through `dispose` and land in the event log.
//
// The cache exposes no per-entry clocks except `ttl(key)` / `httl(key, field)`,
// so the page keeps its own record of each write (written at, ttl, idle, last
// read) to draw the two bars, and asks the cache (`ttl`, `httl`) whether an
// entry is alive and when it goes.
import { TtlCache } from "lapse";
import { Chart } from "./chart.js";
import { loadingPreset } from "./loading.js";
import {
  SEC, MIN, HOUR, DAY, parseDuration, parseCount, fmtDuration, fmtSpan, fmtElapsed,
  fmtDate, fmtShortDate, toLocalInput, fmtSpeed, niceSpeed,
} from "./time.js";

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const REASONS = ["expired", "evicted", "deleted", "replaced", "cleared"];
const MAX_ROWS = 40; // entry rows drawn (the rest are counted, not rendered)
const MAX_LOG_ROWS = 120;
const MAX_LOG_PER_FRAME = 24; // when thousands leave per second, show the newest; the chips count all
const SAMPLE_MS = 250;
const STRESS_N = 100_000;
const SEP = "\u0000";
const CLOCK_LEAD = 15 * MIN; // the "clock time" scenario's nearest deadline, at the least

const el = {
  now: $("clock-now"), elapsed: $("clock-elapsed"), ticks: $("clock-ticks"),
  toggle: $("clock-toggle"), speed: $("clock-speed"), speedOut: $("clock-speed-out"),
  stepSize: $("step-size"), step: $("clock-step"),
  entries: $("entries"), entriesCount: $("entries-count"), entriesEmpty: $("entries-empty"),
  log: $("event-log"), reasons: $("reason-counts"), logClear: $("log-clear"),
  addForm: $("add-form"), addError: $("add-error"), addRandom: $("add-random"), expireAt: $("add-expire-at"),
  cfgForm: $("cache-form"), cfgError: $("cfg-error"), cfgCode: $("cfg-code"), clear: $("clear"), stress: $("stress"),
  presetNote: $("preset-note"), status: $("status"),
  stats: {
    size: $("stat-size"), overdue: $("stat-overdue"), rate: $("stat-rate"), hits: $("stat-hits"), misses: $("stat-misses"),
    ratio: $("stat-ratio"), expired: $("stat-expired"), evicted: $("stat-evicted"), mem: $("stat-mem"),
  },
};

// ---------------------------------------------------------------- state

const S = {
  cache: null,
  config: null,
  simStart: Date.now(),
  simNow: Date.now(),
  playing: true,
  speed: 1,
  lastFrame: null,
  ticks: 0,
  lastSwept: 0,
  /** id -> record; insertion order is display order */
  records: new Map(),
  /** top-level display items: key -> {key, rec} | {key, fields: Map(field -> rec)} */
  items: new Map(),
  /** scripted host actions (preset reads), sorted by sim time */
  events: [],
  log: [],
  logFresh: [],
  counts: Object.fromEntries(REASONS.map((r) => [r, 0])),
  listDirty: true,
  flash: new Map(), // id -> real time of the last click-read
  seq: 0,
  stressing: false,
};

let expiredTotal = 0; // removals with reason "expired" (for the rate)
let ticksTotal = 0;
const chart = new Chart($("chart"));
const rateWindow = []; // [{t, expired, ticks}] over the last second of real time

// ---------------------------------------------------------------- the cache

function readConfig() {
  const f = el.cfgForm.elements;
  return {
    ttl: parseDuration(f.ttl.value, "ttl") ?? Infinity,
    idle: parseDuration(f.idle.value, "idle") ?? Infinity,
    maxEntries: parseCount(f.maxEntries.value, "maxEntries"),
    sweepBudget: parseCount(f.sweepBudget.value, "sweepBudget", 0),
  };
}

function writeConfig(c) {
  const f = el.cfgForm.elements;
  f.ttl.value = fmtSpan(c.ttl);
  f.idle.value = fmtSpan(c.idle);
  f.maxEntries.value = c.maxEntries === Infinity ? "∞" : String(c.maxEntries);
  f.sweepBudget.value = String(c.sweepBudget);
}

function showConfigCode(c) {
  const n = (v) => (v === Infinity ? "Infinity" : v.toLocaleString("en-US").replaceAll(",", "_"));
  el.cfgCode.textContent =
    `new TtlCache({\n  now: simNow,\n  ttl: ${n(c.ttl)},${c.ttl !== Infinity ? `   // ${fmtSpan(c.ttl)}` : ""}\n` +
    `  idle: ${n(c.idle)},${c.idle !== Infinity ? `   // ${fmtSpan(c.idle)}` : ""}\n` +
    `  maxEntries: ${n(c.maxEntries)},\n  sweepBudget: ${n(c.sweepBudget)},\n  dispose(value, key, reason, field) { … },\n})`;
}

/**
 * Replaces the cache. The old one is cleared first (its entries leave through
 * its dispose), then the log starts over: it tells the story of one cache.
 */
function createCache(config, { resetClock = false } = {}) {
  if (S.cache) S.cache.clear();
  resetLog();
  S.events.length = 0;
  if (resetClock) {
    S.simStart = S.simNow = Date.now();
    S.ticks = 0;
  }
  S.config = config;
  S.cache = new TtlCache({
    now: S.simNow,
    ttl: config.ttl,
    idle: config.idle,
    maxEntries: config.maxEntries,
    sweepBudget: config.sweepBudget,
    dispose: onDispose,
  });
  S.records.clear();
  S.items.clear();
  S.listDirty = true;
  showConfigCode(config);
  writeConfig(config);
}

function onDispose(value, key, reason, field) {
  const id = field === undefined ? key : key + SEP + field;
  const rec = S.records.get(id);
  let lag;
  if (rec) {
    if (reason === "expired") lag = S.simNow - deadlineOf(rec);
    forget(rec);
  }
  S.counts[reason] = (S.counts[reason] ?? 0) + 1;
  if (reason === "expired") expiredTotal++;
  const entry = { at: S.simNow - S.simStart, key, field, reason, value, lag };
  S.logFresh.push(entry);
  if (S.logFresh.length > 4 * MAX_LOG_PER_FRAME) S.logFresh.splice(0, S.logFresh.length - MAX_LOG_PER_FRAME);
}

// ---------------------------------------------------------------- the page's model of each entry

function absDeadline(r) {
  return r.at !== undefined ? r.at : r.writtenAt + r.ttl;
}
function idleDeadline(r) {
  return r.lastRead + r.idle;
}
function deadlineOf(r) {
  return Math.min(absDeadline(r), idleDeadline(r));
}

function remember(rec) {
  S.records.set(rec.id, rec);
  if (rec.field === undefined) {
    S.items.set(rec.key, { key: rec.key, rec });
  } else {
    let item = S.items.get(rec.key);
    if (!item || !item.fields) {
      item = { key: rec.key, fields: new Map() };
      S.items.set(rec.key, item);
    }
    item.fields.set(rec.field, rec);
  }
  S.listDirty = true;
}

function forget(rec) {
  S.records.delete(rec.id);
  const item = S.items.get(rec.key);
  if (item) {
    if (item.fields) {
      item.fields.delete(rec.field);
      if (item.fields.size === 0) S.items.delete(rec.key);
    } else if (item.rec === rec) {
      S.items.delete(rec.key);
    }
  }
  S.listDirty = true;
}

/**
 * One write through the public API, mirrored in the page's model.
 * `opts` holds only what the user gave (ttl, idle, expireAt); the rest is the cache default.
 * Returns the record, or null when the cache stored nothing (an `expireAt`
 * not after the clock deletes the key instead; its old row leaves through dispose).
 */
function write({ key, field, value, ttl, idle, expireAt }) {
  const opts = {};
  if (ttl !== undefined) opts.ttl = ttl;
  if (idle !== undefined) opts.idle = idle;
  if (expireAt !== undefined) opts.expireAt = new Date(expireAt);
  const hasOpts = Object.keys(opts).length > 0;
  if (field === undefined) S.cache.set(key, value, hasOpts ? opts : undefined);
  else S.cache.hset(key, field, value, hasOpts ? opts : undefined);
  // A plain key replaced by a hash (or the reverse) leaves through dispose;
  // drop whatever the model still holds under this key of the other kind.
  const item = S.items.get(key);
  if (item && (field === undefined) !== !item.fields) {
    for (const r of item.fields ? [...item.fields.values()] : [item.rec]) forget(r);
  }
  // Ask the cache, not the page's reading of the rules, whether it stored the write.
  if (remaining({ key, field }) === undefined) return null;
  const now = S.simNow;
  const rec = {
    id: field === undefined ? key : key + SEP + field,
    key, field, value,
    writtenAt: now,
    lastRead: now,
    ttl: expireAt !== undefined ? expireAt - now : ttl ?? S.config.ttl,
    at: expireAt,
    idle: idle ?? S.config.idle,
    reads: 0,
    seq: ++S.seq,
  };
  remember(rec);
  return rec;
}

/** get / hget: a read that restarts the idle window (and, for a field, the key's). */
function read(key, field) {
  const v = field === undefined ? S.cache.get(key) : S.cache.hget(key, field);
  const rec = S.records.get(field === undefined ? key : key + SEP + field);
  if (v !== undefined && rec) {
    rec.lastRead = S.simNow;
    rec.reads++;
  }
  return v;
}

/** The cache's word on an entry: ms until it goes, Infinity, or undefined if it is gone or expired. */
function remaining(rec) {
  try {
    return rec.field === undefined ? S.cache.ttl(rec.key) : S.cache.httl(rec.key, rec.field);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- the host clock

function tickTo(t) {
  if (t > S.simNow) S.simNow = t;
  S.lastSwept = S.cache.tick(S.simNow);
  S.ticks++;
  ticksTotal++;
}

/** Advance simulated time by `ms`, running scripted reads at their exact times. */
function advance(ms) {
  const target = S.simNow + ms;
  while (S.events.length > 0 && S.events[0].t <= target) {
    const ev = S.events.shift();
    tickTo(ev.t);
    ev.run();
  }
  tickTo(target);
}

function schedule(t, run) {
  const ev = { t, run };
  let i = S.events.length;
  while (i > 0 && S.events[i - 1].t > t) i--;
  S.events.splice(i, 0, ev);
}

/** Read `key`/`field` every `period` ms from `start` until a read misses. */
function every(start, period, key, field) {
  const go = () => {
    const hit = read(key, field) !== undefined;
    if (hit) schedule(S.simNow + period, go);
  };
  schedule(start, go);
}

function setPlaying(on) {
  S.playing = on;
  el.toggle.setAttribute("aria-pressed", String(on));
  el.toggle.classList.toggle("paused", !on);
  el.toggle.querySelector(".label").textContent = on ? "Pause" : "Play";
}

function setSpeed(x) {
  S.speed = niceSpeed(x);
  el.speed.value = String(Math.log10(S.speed));
  el.speedOut.textContent = fmtSpeed(S.speed);
}

function frame(ts) {
  const dt = S.lastFrame === null ? 0 : Math.min(ts - S.lastFrame, 250);
  S.lastFrame = ts;
  const t0 = performance.now();
  try {
    if (S.playing && dt > 0) advance(dt * S.speed);
    const t1 = performance.now();
    if (S.stressing) stressStep();
    const t2 = performance.now();
    render(ts);
    const t3 = performance.now();
    S.perf = { advance: t1 - t0, stress: t2 - t1, render: t3 - t2, max: Math.max(S.perf?.max ?? 0, t3 - t0) };
  } catch (e) {
    showStatus(`Error: ${e.message}`, true);
    throw e;
  }
  requestAnimationFrame(frame);
}

// ---------------------------------------------------------------- scenarios

const PRESETS = {
  dual: {
    config: { ttl: 90 * DAY, idle: 30 * DAY, maxEntries: 250_000, sweepBudget: 1000 },
    speed: 400_000,
    note: "<b>ttl 90d, idle 30d.</b> The unread report goes at day 30 (idle wins). The one read weekly stays past day 30 but still goes at day 90: reads never extend the absolute clock. The one read once on day 20 goes at day 50.",
    setup(now) {
      write({ key: "report:read-weekly", value: "Q3 revenue" });
      write({ key: "report:read-day-20", value: "Q2 revenue" });
      write({ key: "report:never-read", value: "Q1 revenue" });
      write({ key: "report:pinned", value: "annual", ttl: Infinity, idle: Infinity });
      every(now + 7 * DAY, 7 * DAY, "report:read-weekly");
      schedule(now + 20 * DAY, () => read("report:read-day-20"));
    },
  },
  session: {
    config: { ttl: Infinity, idle: Infinity, maxEntries: 250_000, sweepBudget: 1000 },
    speed: 300,
    note: "<b>One session hash, fields with their own clocks.</b> csrf (ttl 15m) goes at 15 minutes though read every 2 minutes; search (idle 30m) goes 30 minutes after its last read; cart (ttl 1d, idle 4h, read hourly) lasts the day; prefs never expire. Time speeds up after the first 20 minutes.",
    setup(now) {
      write({ key: "session:alice", field: "csrf", value: "9f2c…e1", ttl: 15 * MIN });
      write({ key: "session:alice", field: "search", value: "rust wasm cache", idle: 30 * MIN });
      write({ key: "session:alice", field: "cart", value: "3 items", ttl: DAY, idle: 4 * HOUR });
      write({ key: "session:alice", field: "prefs", value: "theme=dark", ttl: Infinity, idle: Infinity });
      every(now + 2 * MIN, 2 * MIN, "session:alice", "csrf");
      schedule(now + 5 * MIN, () => read("session:alice", "search"));
      schedule(now + 9 * MIN, () => read("session:alice", "search"));
      every(now + HOUR, HOUR, "session:alice", "cart");
      every(now + 6 * HOUR, 6 * HOUR, "session:alice", "prefs");
      schedule(now + 20 * MIN, () => setSpeed(4000));
    },
  },
  collection: {
    config: { ttl: 10 * MIN, idle: Infinity, maxEntries: 250_000, sweepBudget: 1000 },
    speed: 60,
    note: "<b>Collection default ttl 10m.</b> Plain products take the default; featured overrides it with 1h, flash-sale with 2m, the logo never expires, and product:3 is cut short with <code>expire(key, 30s)</code> at minute 4.",
    setup(now) {
      for (let i = 1; i <= 4; i++) write({ key: `product:${i}`, value: `item #${i}` });
      write({ key: "product:featured", value: "spotlight", ttl: HOUR });
      write({ key: "product:flash-sale", value: "-40%", ttl: 2 * MIN });
      write({ key: "asset:logo", value: "logo.svg", ttl: Infinity });
      schedule(now + 4 * MIN, () => {
        const rec = S.records.get("product:3");
        if (S.cache.expire("product:3", 30 * SEC) && rec) rec.at = S.simNow + 30 * SEC;
      });
      schedule(now + 12 * MIN, () => setSpeed(300));
    },
  },
  clock: {
    config: { ttl: Infinity, idle: Infinity, maxEntries: 250_000, sweepBudget: 1000 },
    speed: 300,
    note: "<b>Deadlines on the wall clock.</b> Each entry expires at a clock time given as a <code>Date</code>: the next full hour, 18:00 and midnight (each the first one at least 15 minutes away, so none goes the moment you click), and a token moved with <code>expireAt(key, date)</code> to 45 minutes after it was written. Time speeds up once the first two have gone.",
    setup(now) {
      // The first local clock time at least CLOCK_LEAD away: `align` sets the
      // time of day, `step` moves to the next such time (calendar steps, so a
      // DST change keeps 18:00 at 18:00).
      const next = (align, step) => {
        const d = new Date(now);
        align(d);
        while (+d < now + CLOCK_LEAD) step(d);
        return +d;
      };
      const hourly = (d) => d.setHours(d.getHours() + 1, 0, 0, 0);
      const daily = (d) => d.setDate(d.getDate() + 1);
      const nextHour = next((d) => d.setMinutes(0, 0, 0), hourly);
      const six = next((d) => d.setHours(18, 0, 0, 0), daily);
      const midnight = next((d) => d.setHours(0, 0, 0, 0), daily);
      write({ key: "banner:top-of-hour", value: "on the hour", expireAt: nextHour });
      write({ key: "promo:until-18:00", value: "happy hour", expireAt: six });
      write({ key: "deal:until-midnight", value: "today only", expireAt: midnight });
      write({ key: "token:moved", value: "abc", ttl: Infinity });
      const at = new Date(now + 45 * MIN);
      S.cache.expireAt("token:moved", at);
      const rec = S.records.get("token:moved");
      rec.at = +at;
      rec.ttl = +at - now;
      schedule(Math.max(nextHour, +at) + MIN, () => setSpeed(3000));
    },
  },
};

PRESETS.fetch = loadingPreset({
  cache: () => S.cache,
  config: () => S.config,
  now: () => S.simNow,
  start: () => S.simStart,
  schedule,
  remember,
  nextSeq: () => ++S.seq,
});

function runPreset(name) {
  const p = PRESETS[name];
  cancelStress();
  showError(el.addError, null);
  createCache(p.config, { resetClock: true });
  p.setup(S.simNow);
  setSpeed(p.speed);
  setPlaying(true);
  el.presetNote.innerHTML = p.note;
  el.presetNote.hidden = false;
  for (const b of document.querySelectorAll("[data-preset]")) b.classList.toggle("active", b.dataset.preset === name);
}

// ---------------------------------------------------------------- stress

let stressDone = 0;
function startStress() {
  if (S.stressing) return;
  if (S.config.maxEntries < STRESS_N + S.cache.size) {
    showStatus(`Stress writes ${STRESS_N.toLocaleString("en-US")} entries: maxEntries ${S.config.maxEntries} will evict most of them.`, false);
  }
  S.stressing = true;
  stressDone = 0;
  // Deadlines 1–5 s away: run the clock in real time to watch the sweep drain them.
  setSpeed(1);
  setPlaying(true);
  el.stress.disabled = true;
  el.stress.textContent = "Writing…";
}

/** Writes a slice of the 100k per frame, so the page keeps painting. */
function stressStep() {
  const n = Math.min(5_000, STRESS_N - stressDone);
  const now = S.simNow;
  const base = S.seq;
  for (let i = 0; i < n; i++) {
    const key = `stress:${String(base + i).padStart(6, "0")}`;
    const ttl = SEC + Math.floor(Math.random() * 4 * SEC);
    S.cache.set(key, i, { ttl });
    const rec = { id: key, key, field: undefined, value: i, writtenAt: now, lastRead: now, ttl, at: undefined, idle: S.config.idle, reads: 0, seq: base + i };
    S.records.set(key, rec);
    S.items.set(key, { key, rec });
  }
  S.seq = base + n;
  S.listDirty = true;
  stressDone += n;
  if (stressDone >= STRESS_N) cancelStress();
}

function cancelStress() {
  S.stressing = false;
  el.stress.disabled = false;
  el.stress.textContent = "Stress 100k";
}

// ---------------------------------------------------------------- rendering

const nf = new Intl.NumberFormat("en-US");
let lastSample = 0;
let lastRender = 0;

function render(ts) {
  put(el.now, fmtDate(S.simNow));
  el.now.dataset.now = String(S.simNow);
  put(el.elapsed, fmtElapsed(S.simNow - S.simStart));
  put(el.ticks, `${nf.format(S.ticks)} ticks · swept ${S.lastSwept} last tick`);
  renderLog();
  renderEntries(ts);
  if (ts - lastSample >= SAMPLE_MS) {
    lastSample = ts;
    sample(ts);
  }
}

function sample(ts) {
  rateWindow.push({ t: ts, expired: expiredTotal, ticks: ticksTotal });
  while (rateWindow.length > 2 && rateWindow[0].t < ts - 1000) rateWindow.shift();
  const first = rateWindow[0];
  const span = Math.max(ts - first.t, SAMPLE_MS) / 1000;
  const rate = (expiredTotal - first.expired) / span;
  const ceiling = ((ticksTotal - first.ticks) / span) * S.config.sweepBudget;
  const st = S.cache.stats();
  // "held" and the entries list both count entries (a hash field is one, as
  // for maxEntries), expired ones no sweep has reached included; `size`
  // counts keys. "awaiting sweep" is a subset of "held", counted at the same moment.
  chart.push({ t: ts, held: st.entries, rate, ceiling });
  chart.draw();
  const s = el.stats;
  put(s.size, nf.format(st.entries));
  putAttr(s.size.parentElement, "title", `stats().entries: plain entries plus hash fields, expired ones not yet swept included; cache.size (keys) is ${nf.format(S.cache.size)}`);
  put(s.overdue, nf.format(countOverdue()));
  put(s.rate, nf.format(Math.round(rate)));
  put(s.hits, nf.format(st.hits));
  put(s.misses, nf.format(st.misses));
  put(s.ratio, st.hits + st.misses === 0 ? "–" : `${(st.hitRatio * 100).toFixed(1)}%`);
  put(s.expired, nf.format(st.expired));
  put(s.evicted, nf.format(st.evicted));
  put(s.mem, `${(st.wasmBytes / 1048576).toFixed(1)} MB`);
}

/**
 * "Awaiting sweep": entries past their deadline that the budgeted sweep has not
 * reached yet. Counted over the page's records in one pass, 4× a second (about
 * a millisecond at 100k), so it never describes a different moment than "held".
 */
function countOverdue() {
  const now = S.simNow;
  let n = 0;
  for (const rec of S.records.values()) if (deadlineOf(rec) <= now) n++;
  return n;
}

let lastLogRender = 0;
function renderLog() {
  if (S.logFresh.length === 0) return;
  // A flood (a sweep of thousands) redraws the log ten times a second, not every frame.
  const now = performance.now();
  if (S.logFresh.length > 8 && now - lastLogRender < 100) return;
  lastLogRender = now;
  const frag = document.createDocumentFragment();
  for (const e of S.logFresh.slice(-MAX_LOG_PER_FRAME)) {
    const li = document.createElement("li");
    li.className = `ev ev-${e.reason}`;
    li.dataset.testid = "log-row";
    li.dataset.reason = e.reason;
    li.dataset.key = e.key;
    if (e.field !== undefined) li.dataset.field = e.field;
    const name = e.field === undefined ? e.key : `${e.key} › ${e.field}`;
    const lag = e.reason === "expired" && e.lag > 0 ? `swept ${fmtDuration(e.lag)} after its deadline` : "";
    li.innerHTML = `<span class="badge b-${e.reason}"></span><span class="ev-name"></span><span class="ev-time"></span>`;
    li.children[0].textContent = e.reason;
    li.children[1].textContent = name;
    li.children[1].title = lag ? `value ${String(e.value)} · ${lag}` : `value ${String(e.value)}`;
    li.children[2].textContent = fmtElapsed(e.at);
    frag.prepend(li);
  }
  S.logFresh.length = 0;
  el.log.prepend(frag);
  while (el.log.childElementCount > MAX_LOG_ROWS) el.log.lastElementChild.remove();
  renderLogCounts();
}

function resetLog() {
  S.logFresh.length = 0;
  el.log.replaceChildren();
  for (const r of REASONS) S.counts[r] = 0;
  renderLogCounts();
}

function renderLogCounts() {
  if (el.reasons.childElementCount === 0) {
    el.reasons.append(
      ...REASONS.map((r) => {
        const c = document.createElement("span");
        c.className = `chip b-${r}`;
        c.dataset.testid = `count-${r}`;
        return c;
      }),
    );
  }
  REASONS.forEach((r, i) => {
    const c = el.reasons.children[i];
    put(c, `${r} ${nf.format(S.counts[r])}`);
    c.classList.toggle("zero", S.counts[r] === 0);
  });
}

/** Writes text only when it changed (fewer style and layout passes per frame). */
function put(node, text) {
  if (node.textContent !== text) node.textContent = text;
}
function putAttr(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

/** Rows: plain entries, and hash keys with their fields nested. Capped at MAX_ROWS. */
let rows = []; // [{rec, node, bars}]
function renderEntries(ts) {
  const total = S.records.size;
  if (S.listDirty && (ts - lastRender > 100 || total < 500)) {
    S.listDirty = false;
    lastRender = ts;
    rebuildRows();
    const keys = S.items.size;
    el.entriesCount.textContent = total > rows.length
      ? `showing ${rows.length} of ${nf.format(total)}`
      : `${nf.format(total)} ${total === 1 ? "entry" : "entries"}` +
        (keys !== total ? ` in ${nf.format(keys)} ${keys === 1 ? "key" : "keys"}` : "");
    el.entriesCount.dataset.entries = String(total);
    el.entriesEmpty.hidden = total > 0;
  }
  const now = S.simNow;
  for (const row of rows) updateRow(row, now, ts);
}

function rebuildRows() {
  const frag = document.createDocumentFragment();
  const next = [];
  for (const item of S.items.values()) {
    if (next.length >= MAX_ROWS) break;
    if (item.rec) {
      next.push(makeRow(item.rec, frag));
    } else {
      const group = document.createElement("div");
      group.className = "hash";
      group.dataset.testid = "hash";
      group.dataset.key = item.key;
      const head = document.createElement("div");
      head.className = "hash-head";
      head.innerHTML = `<span class="kind">hash</span><span class="hkey"></span><span class="hmeta"></span>`;
      head.children[1].textContent = item.key;
      let own;
      try { own = S.cache.ttl(item.key); } catch { own = undefined; }
      head.children[2].textContent = `${item.fields.size} field${item.fields.size === 1 ? "" : "s"} · key ${own === undefined ? "gone" : own === Infinity ? "has no deadline" : `goes in ${fmtDuration(own)}`}`;
      group.append(head);
      for (const rec of item.fields.values()) {
        if (next.length >= MAX_ROWS) break;
        next.push(makeRow(rec, group));
      }
      frag.append(group);
    }
  }
  rows = next;
  el.entries.replaceChildren(frag);
}

function makeRow(rec, parent) {
  const node = document.createElement("div");
  node.className = "entry";
  node.setAttribute("role", "listitem");
  node.tabIndex = 0;
  node.dataset.testid = "entry";
  node.dataset.key = rec.key;
  if (rec.field !== undefined) node.dataset.field = rec.field;
  node.title = rec.field === undefined ? `Click to get("${rec.key}")` : `Click to hget("${rec.key}", "${rec.field}")`;
  node.innerHTML = `
    <div class="e-head">
      <span class="e-name"></span>
      <span class="e-val"></span>
      <span class="e-left" data-testid="entry-ttl"></span>
      <button type="button" class="x" data-testid="entry-delete" aria-label="delete">×</button>
    </div>
    <div class="bar abs"><span class="bl">abs</span><span class="track"><span class="fill"></span></span><span class="bv"></span></div>
    <div class="bar idle"><span class="bl">idle</span><span class="track"><span class="cap"></span><span class="fill"></span></span><span class="bv" data-testid="entry-idle"></span></div>`;
  const q = (s) => node.querySelector(s);
  q(".e-name").textContent = rec.field === undefined ? rec.key : rec.field;
  q(".e-val").textContent = String(rec.value);
  const row = {
    rec, node,
    left: q(".e-left"),
    abs: { bar: q(".bar.abs"), fill: q(".bar.abs .fill"), v: q(".bar.abs .bv") },
    idle: { bar: q(".bar.idle"), fill: q(".bar.idle .fill"), cap: q(".bar.idle .cap"), v: q(".bar.idle .bv") },
  };
  parent.append(node);
  return row;
}

function updateRow(row, now, ts) {
  const { rec, node } = row;
  if (!S.records.has(rec.id)) return; // gone; the next rebuild drops the row
  const absDl = absDeadline(rec);
  const idleDl = idleDeadline(rec);
  const left = remaining(rec); // the cache is the source of truth
  const alive = left !== undefined;
  const absLeft = absDl - now;
  const idleLeft = Math.min(idleDl, absDl) - now; // the idle window can never outlast the absolute deadline
  const capped = rec.idle !== Infinity && idleDl > absDl;
  const winner = absDl === Infinity && idleDl === Infinity ? "none" : absDl <= idleDl ? "abs" : "idle";
  node.classList.toggle("overdue", !alive);
  node.classList.toggle("flash", ts - (S.flash.get(rec.id) ?? -1e9) < 700);
  putAttr(node, "data-abs-deadline", String(absDl));
  putAttr(node, "data-idle-deadline", String(Math.min(idleDl, absDl)));
  putAttr(node, "data-winner", winner);
  putAttr(node, "data-alive", String(alive));
  put(row.left, !alive
    ? "expired · awaiting sweep"
    : left === Infinity ? "never expires" : `goes in ${fmtDuration(left)}`);

  setBar(row.abs, rec.ttl, absLeft, winner === "abs");
  put(row.abs.v, rec.ttl === Infinity ? "∞" : fmtDuration(absLeft));
  putAttr(row.abs.v, "title", rec.at !== undefined ? `expireAt ${fmtShortDate(rec.at)}` : `ttl ${fmtSpan(rec.ttl)} from the write`);
  setBar(row.idle, rec.idle, idleLeft, winner === "idle");
  put(row.idle.v, rec.idle === Infinity ? "∞" : fmtDuration(idleLeft) + (capped ? " ⇤" : ""));
  putAttr(row.idle.v, "title", capped ? "capped by the absolute deadline" : `idle ${fmtSpan(rec.idle)}, ${rec.reads} read${rec.reads === 1 ? "" : "s"}`);
  // hatched: the part of the idle window the absolute deadline cuts off
  const capFrac = alive && capped ? Math.max(0, Math.min(1, (idleDl - now) / rec.idle)) : 0;
  row.idle.cap.style.transform = `scaleX(${capFrac})`;
}

function setBar(b, span, left, wins) {
  const inf = span === Infinity;
  const frac = inf ? 1 : Math.max(0, Math.min(1, left / span));
  b.fill.style.transform = `scaleX(${frac})`;
  b.bar.classList.toggle("inf", inf);
  b.bar.classList.toggle("wins", wins);
}

function showStatus(text, bad) {
  el.status.textContent = text;
  el.status.classList.toggle("bad", !!bad);
}

function showError(node, e) {
  node.textContent = e ? e.message : "";
  node.hidden = !e;
}

// ---------------------------------------------------------------- wiring

el.toggle.addEventListener("click", () => setPlaying(!S.playing));
el.speed.addEventListener("input", () => setSpeed(10 ** Number(el.speed.value)));
el.step.addEventListener("click", () => {
  advance(Number(el.stepSize.value));
  render(performance.now());
});
document.addEventListener("keydown", (e) => {
  if (e.code === "Space" && !(e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.target instanceof HTMLButtonElement || e.target.closest?.(".entry"))) {
    e.preventDefault();
    setPlaying(!S.playing);
  }
});

const kindRadios = el.addForm.elements.kind;
function syncKind() {
  el.addForm.classList.toggle("is-field", kindRadios.value === "field");
}
for (const r of kindRadios) r.addEventListener("change", syncKind);

el.addForm.addEventListener("submit", (e) => {
  e.preventDefault();
  const f = el.addForm.elements;
  try {
    const isField = kindRadios.value === "field";
    const key = f.key.value.trim();
    if (!key) throw new TypeError("key: required");
    const field = isField ? f.field.value.trim() : undefined;
    if (isField && !field) throw new TypeError("field: required for a hash field");
    const ttl = parseDuration(f.ttl.value, "ttl");
    const idle = parseDuration(f.idle.value, "idle");
    let expireAt;
    if (f.expireAt.value) {
      if (ttl !== undefined) throw new TypeError("give ttl or expireAt, not both");
      expireAt = new Date(f.expireAt.value).getTime();
      if (!Number.isFinite(expireAt)) throw new RangeError("expireAt: not a valid date");
    }
    const value = f.value.value === "" ? `v${S.seq + 1}` : f.value.value;
    const before = S.simNow;
    if (write({ key, field, value, ttl, idle, expireAt }) === null) {
      const what = field === undefined ? `set("${key}", …)` : `hset("${key}", "${field}", …)`;
      throw new RangeError(
        `expireAt ${fmtShortDate(expireAt)} is not after the clock (${fmtShortDate(before)}): ` +
          `${what} deleted any value it had and stored nothing.`,
      );
    }
    showError(el.addError, null);
    f.expireAt.value = "";
    render(performance.now());
  } catch (err) {
    showError(el.addError, err);
  }
});

el.addRandom.addEventListener("click", () => {
  const spans = [10 * SEC, 30 * SEC, MIN, 2 * MIN, 5 * MIN];
  for (let i = 0; i < 5; i++) {
    const n = S.seq + 1;
    const opts = { key: `item:${n}`, value: `v${n}` };
    if (Math.random() < 0.6) opts.ttl = spans[Math.floor(Math.random() * spans.length)];
    if (Math.random() < 0.6) opts.idle = spans[Math.floor(Math.random() * spans.length)];
    write(opts);
  }
});

el.expireAt.addEventListener("focus", () => {
  if (!el.expireAt.value) el.expireAt.value = toLocalInput(S.simNow + 5 * MIN);
});

el.cfgForm.addEventListener("submit", (e) => {
  e.preventDefault();
  try {
    const cfg = readConfig();
    cancelStress();
    createCache(cfg);
    showError(el.cfgError, null);
    el.presetNote.hidden = true;
    for (const b of document.querySelectorAll("[data-preset]")) b.classList.remove("active");
  } catch (err) {
    showError(el.cfgError, err);
  }
});

el.clear.addEventListener("click", () => {
  cancelStress();
  S.cache.clear();
  S.events.length = 0;
});
el.stress.addEventListener("click", startStress);
el.logClear.addEventListener("click", resetLog);

for (const b of document.querySelectorAll("[data-preset]")) {
  b.addEventListener("click", () => runPreset(b.dataset.preset));
}

function onEntryActivate(target) {
  const node = target.closest(".entry");
  if (!node) return;
  const { key, field } = node.dataset;
  if (target.closest(".x")) {
    if (field === undefined) S.cache.delete(key);
    else S.cache.hdel(key, field);
    return;
  }
  const v = read(key, field);
  const id = field === undefined ? key : key + SEP + field;
  S.flash.set(id, performance.now());
  if (v === undefined) showStatus(`${field === undefined ? `get("${key}")` : `hget("${key}", "${field}")`} → undefined (a miss: expired, not yet swept)`);
  else showStatus(`${field === undefined ? `get("${key}")` : `hget("${key}", "${field}")`} → ${JSON.stringify(v)}; idle window restarted`);
  render(performance.now());
}
el.entries.addEventListener("click", (e) => onEntryActivate(e.target));
el.entries.addEventListener("keydown", (e) => {
  if ((e.key === "Enter" || e.key === " ") && e.target.classList.contains("entry")) {
    e.preventDefault();
    onEntryActivate(e.target);
  }
});

// ---------------------------------------------------------------- start

createCache(readConfig(), { resetClock: true });
renderLogCounts();
setSpeed(1);
setPlaying(true);
syncKind();
showStatus(`Ready: lapse loaded from ${new URL(import.meta.resolve("lapse")).pathname}.`);
document.documentElement.dataset.ready = "true";
requestAnimationFrame(frame);

// For the console: poke the live cache yourself.
window.lapseDemo = { get cache() { return S.cache; }, TtlCache, advance, state: S };
