// Loading (fetch/hfetch): one running load per key or hash field, shared by
// every fetch of it while it runs, and the bookkeeping of who waits for it.
// The cache decides what a fetch finds and what a load's result does; this
// finds its running loads and answers their waiters.

/**
 * One running load of a key (or hash field), shared by every fetch of it
 * made while it runs. `live`: still in the cache's load map, so its result
 * is stored; a write, delete, expire, eviction or clear of its key takes it
 * out (and aborts its signal), and its waiters still get the result.
 */
export class Load {
  constructor(key, field, fo, background) {
    this.key = key;
    this.field = field;
    this.write = fo.write;
    this.grace = fo.grace;
    this.ctrl = new AbortController();
    this.live = true;
    this.background = background;
    this.settled = false;
    this.subs = []; // waiters with a signal: { resolve, reject, signal, onAbort }
    // Waiters without one share one promise: a stampede of N fetches costs
    // one promise, as one load does.
    this.shared = null;
    this.sharedN = 0;
    this.resolve = null;
    this.reject = null;
  }
}

// A cache's running loads live in one map, created on first use: key ->
// (field, or `undefined` for the key's plain load) -> Load.

/** The running load of `key` (`field`), if any. */
export function loadOf(map, key, field) {
  return map?.get(key)?.get(field);
}

/**
 * The loads a change to `key` (or to its `field`) ends, the plain one
 * first: a change to the key ends the loads of its fields too; `plainToo`
 * (hset) ends the key's plain load, whose store would now be WRONGTYPE.
 */
export function loadsOf(map, key, field, plainToo) {
  const m = map?.get(key);
  if (m === undefined) return [];
  const plain = m.get(undefined);
  const doomed = plain !== undefined && (field === undefined || plainToo) ? [plain] : [];
  for (const [f, ld] of m) if (f !== undefined && (field === undefined || f === field)) doomed.push(ld);
  return doomed;
}

/** Every running load, the plain ones first. */
export function allLoads(map) {
  const doomed = [];
  for (const plain of [true, false]) {
    if (map != null) for (const m of map.values()) for (const [f, ld] of m) if ((f === undefined) === plain) doomed.push(ld);
  }
  return doomed;
}

/** Calls `loader` for `ld` (user code, which may call back into the cache); a promise for its result. */
export function callLoader(ld, loader) {
  const ctx = { signal: ld.ctrl.signal };
  let p;
  try {
    p = Promise.resolve(ld.field === undefined ? loader(ld.key, ctx) : loader(ld.key, ld.field, ctx));
  } catch (e) {
    p = Promise.reject(e);
  }
  return p;
}

/**
 * A promise for `ld`'s outcome; `signal` lets this caller stop waiting.
 * `unlist()` takes the load out of its cache when its last waiter goes.
 */
export function wait(ld, signal, unlist) {
  if (signal === undefined) {
    if (ld.shared === null) {
      ld.shared = new Promise((resolve, reject) => {
        ld.resolve = resolve;
        ld.reject = reject;
      });
    }
    ld.sharedN++;
    return ld.shared;
  }
  return new Promise((resolve, reject) => {
    const sub = { resolve, reject, signal, onAbort: null };
    ld.subs.push(sub);
    sub.onAbort = () => {
      const i = ld.subs.indexOf(sub);
      if (i < 0) return;
      ld.subs.splice(i, 1);
      reject(signal.reason);
      // The last waiter gone: nobody wants this load any more.
      if (ld.subs.length === 0 && ld.sharedN === 0 && !ld.background && !ld.settled) {
        unlist();
        ld.ctrl.abort();
      }
    };
    signal.addEventListener("abort", sub.onAbort, { once: true });
    // The loader runs before this: it may have aborted the signal already.
    if (signal.aborted) sub.onAbort();
  });
}

/** Takes `ld`'s waiters with a signal, and stops listening to their signals. */
export function detachWaiters(ld) {
  const subs = ld.subs;
  ld.subs = [];
  for (const sub of subs) sub.signal.removeEventListener("abort", sub.onAbort);
  return subs;
}

export function resolveWaiters(ld, subs, v) {
  for (const sub of subs) sub.resolve(v);
  if (ld.shared !== null) ld.resolve(v);
}

export function rejectWaiters(ld, subs, v) {
  for (const sub of subs) sub.reject(v);
  if (ld.shared !== null) ld.reject(v);
}
