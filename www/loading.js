// The "slow loader" scenario: cache.fetch in front of an origin that takes
// 3 simulated seconds per load. Bursts of concurrent requests for cold keys
// make one loader call per key (coalescing); a hot key read every 30 s is
// renewed in the background before it expires (refresh-ahead); a key read
// once expires on schedule. Self-contained: app.js hands in the few page
// functions it needs (`page`) and registers the preset.
import { SEC, MIN } from "./time.js";

const LATENCY = 3 * SEC;
const REFRESH = 2 * MIN;

export function loadingPreset(page) {
  let requests = 0;
  let calls = 0;
  const versions = new Map();

  function counters() {
    const node = document.querySelector('[data-testid="fetch-counters"]');
    if (!node) return;
    const s = page.cache().stats();
    node.textContent =
      `${requests} requests · ${calls} loader calls · ${s.coalesced} coalesced · ` +
      `${s.refreshes} background refreshes · ${s.hits} hits`;
  }

  /** The page's row for a value the cache stored itself (a load's result). */
  function mirror(key) {
    const cache = page.cache();
    const left = cache.ttl(key);
    if (left === undefined) return;
    const now = page.now();
    const { ttl, idle } = page.config();
    page.remember({
      id: key, key, field: undefined, value: cache.peek(key),
      writtenAt: now + left - ttl, lastRead: now, ttl, at: undefined, idle, reads: 0, seq: page.nextSeq(),
    });
  }

  // The origin: one call per load, answering LATENCY later in simulated time.
  const loader = (key) =>
    new Promise((resolve) => {
      calls++;
      const v = (versions.get(key) ?? 0) + 1;
      versions.set(key, v);
      counters();
      page.schedule(page.now() + LATENCY, () => {
        resolve(`${key.slice(5)} v${v} (loaded at T+${Math.round((page.now() - page.start()) / SEC)}s)`);
        // The cache stores the result in a promise reaction: mirror it after.
        setTimeout(() => {
          mirror(key);
          counters();
        }, 0);
      });
    });

  function burst(key, n) {
    for (let i = 0; i < n; i++) {
      requests++;
      page.cache().fetch(key, loader, { refresh: REFRESH }).then(counters, () => {});
    }
    counters();
  }

  return {
    config: { ttl: 5 * MIN, idle: Infinity, maxEntries: 250_000, sweepBudget: 1000 },
    speed: 20,
    note:
      "<b>fetch in front of a slow origin (3 s per load).</b> 50 concurrent requests for user:ada and 20 for user:bob make two loader calls. " +
      "user:ada is fetched every 30 s with <code>refresh: 2 min</code>: past 2 minutes a fetch answers at once and renews it in the background " +
      "(the old value leaves as <i>replaced</i>), so it never expires. user:bob is not read again and expires at 5 minutes." +
      '<br><span data-testid="fetch-counters"></span>',
    setup(now) {
      requests = 0;
      calls = 0;
      versions.clear();
      burst("user:ada", 50);
      burst("user:bob", 20);
      const hot = () => {
        burst("user:ada", 1);
        page.schedule(page.now() + 30 * SEC, hot);
      };
      page.schedule(now + 30 * SEC, hot);
      setTimeout(counters, 0); // the page puts the note (and its counter line) in after setup
    },
  };
}
