// Child of shapes.test.mjs (node --expose-gc --allow-natives-syntax): makes
// `set` optimized on one cache, drops that cache, collects it, and prints
// whether `set` is still optimized. Prints "skip" when V8 cannot say.
import { TtlCache } from "lapse";

const status = (() => {
  try {
    return new Function("f", "return %GetOptimizationStatus(f)");
  } catch {
    return null;
  }
})();
const OPTIMIZED = 1 << 4; // V8's OptimizationStatus::kOptimized

function use(c) {
  const o = { ttl: 0 };
  for (let i = 0; i < 20_000; i++) {
    o.ttl = 1 + (i % 1000);
    c.set(`k${i}`, i, o);
  }
  for (let t = 2; t < 1100; t += 10) c.tick(t);
}

let a = new TtlCache({ now: 1 });
const set = a.set;
if (status === null) {
  console.log("skip");
} else {
  const prepare = new Function("f", "%PrepareFunctionForOptimization(f)");
  const optimize = new Function("f", "%OptimizeFunctionOnNextCall(f)");
  prepare(set);
  use(a);
  optimize(set);
  use(a);
  if ((status(set) & OPTIMIZED) === 0) {
    console.log("skip");
  } else {
    a = null;
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
    globalThis.gc();
    const b = new TtlCache({ now: 1 });
    console.log((status(b.set) & OPTIMIZED) !== 0 ? "optimized" : "deoptimized");
  }
}
