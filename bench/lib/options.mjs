// Command-line options shared by the runners (plain objects, so the browser
// page gets the same options as JSON).
//   --quick             small sizes and few rounds, to check the harness (figures meaningless)
//   --only a,b,...      workloads: get,set,zipf,scan,readthrough,churn,hash
//   --sizes 100000,...  key counts for (a)-(d), (f)
//   --rounds N          measured rounds at every size and for (e) (after 1 warm-up)
//   --chromium-sizes    key counts for the Chromium run only (run.mjs)
//   --out file          where to write

const DEFAULT_RT = { keys: [200_000, 1_000_000], theta: 0.99, ops: { 200000: 2_000_000, 1000000: 4_000_000 } };

export function parseArgs(argv) {
  const a = {};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (!k.startsWith("--")) throw new Error(`unexpected argument ${k}`);
    const name = k.slice(2);
    const next = argv[i + 1];
    if (next === undefined || next.startsWith("--")) a[name] = true;
    else {
      a[name] = next;
      i++;
    }
  }
  return a;
}

/** Suite options from parsed arguments (JSON-safe). */
export function suiteOptions(args) {
  const o = {};
  if (args.quick) {
    o.sizes = [10_000, 50_000];
    o.warmup = 1;
    o.rounds = { 10000: 2, 50000: 2 };
    o.minOps = 100_000;
    o.zipfOps = { 10000: 100_000, 50000: 200_000 };
    o.churn = { n: 50_000, period: 1000, step: 10, rounds: 1, lruSteps: 20 };
    o.readThrough = { keys: [50_000], theta: 0.99, ops: { 50000: 200_000 }, rounds: 2 };
  }
  if (typeof args.sizes === "string") o.sizes = args.sizes.split(",").map(Number);
  if (typeof args.only === "string") o.workloads = args.only.split(",");
  if (typeof args.rounds === "string") {
    const r = Number(args.rounds);
    o.rounds = Object.fromEntries((o.sizes ?? [100_000, 1_000_000]).map((n) => [n, r]));
    o.churn = { ...(o.churn ?? { n: 1_000_000, period: 10_000, step: 10, lruSteps: 30 }), rounds: r };
    o.readThrough = { ...(o.readThrough ?? DEFAULT_RT), rounds: r };
  }
  return o;
}
