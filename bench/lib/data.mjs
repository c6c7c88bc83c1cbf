// Deterministic inputs shared by every subject: keys, shuffles, Zipf traces.
// Nothing here reads Math.random or a clock, so two runs see the same ops.

/** sfc32: a small, fast, well-mixed 32-bit PRNG. Returns floats in [0, 1). */
export function rng(seed) {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 16; i++) next();
  return next;
}

/** `n` distinct key strings with a prefix ("k:0", "k:1", ...). */
export function makeKeys(n, prefix = "k:") {
  const keys = new Array(n);
  for (let i = 0; i < n; i++) keys[i] = prefix + i;
  return keys;
}

/** A random permutation of 0..n-1 (Fisher–Yates). */
export function shuffled(n, seed) {
  const r = rng(seed);
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
  return a;
}

/** `ops` indices cycling through a permutation of 0..n-1 (several passes if ops > n). */
export function cycleOrder(n, ops, seed) {
  const p = shuffled(n, seed);
  const a = new Int32Array(ops);
  for (let i = 0; i < ops; i++) a[i] = p[i % n];
  return a;
}

/**
 * A Zipf sampler over ranks 0..n-1 with exponent `alpha`: P(rank k) ∝ 1/(k+1)^alpha.
 * Exact inverse-CDF with a binary search. Ranks are mapped to key indices by
 * a fixed random permutation, so hot keys are not the first keys inserted.
 */
export function zipf(n, alpha, seed) {
  const cdf = new Float64Array(n);
  let s = 0;
  for (let k = 0; k < n; k++) {
    s += 1 / Math.pow(k + 1, alpha);
    cdf[k] = s;
  }
  for (let k = 0; k < n; k++) cdf[k] /= s;
  const perm = shuffled(n, seed ^ 0x5bd1e995);
  const r = rng(seed);
  return () => {
    const u = r();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return perm[lo];
  };
}

/**
 * A read/write trace: `ops` operations, each a key index from `next()` and a
 * write flag with probability `writeRatio` (drawn from its own stream).
 */
export function trace(next, ops, writeRatio, seed) {
  const keys = new Int32Array(ops);
  const writes = new Uint8Array(ops);
  const r = rng(seed);
  for (let i = 0; i < ops; i++) {
    keys[i] = next();
    writes[i] = r() < writeRatio ? 1 : 0;
  }
  return { keys, writes };
}
