// Merging several runs of the suite (one env each, same options) into one.
// A row's value per subject is the median over runs of that run's median;
// `runs` keeps each run's values, so the report can show the spread; the
// samples of all runs are concatenated.

import { median } from "./suite.mjs";

/** The median of the runs that measured this subject (`undefined` if none did). */
function medianOfRuns(xs) {
  const a = xs.filter((x) => x !== undefined && !Number.isNaN(x));
  return a.length === 0 ? undefined : median(a);
}

/** One env from `envs` (each a runSuite result for the same options). */
export function mergeRuns(envs) {
  if (envs.length === 1) return envs[0];
  const [first] = envs;
  const key = (r) => `${r.workload}|${r.size}|${r.metric}`;
  const rows = first.rows.map((row) => {
    const same = envs.map((e) => e.rows.find((r) => key(r) === key(row))).filter(Boolean);
    const subjects = Object.keys(row.values);
    const values = Object.fromEntries(subjects.map((s) => [s, medianOfRuns(same.map((r) => r.values[s]))]));
    const samples = Object.fromEntries(subjects.map((s) => [s, same.flatMap((r) => r.samples?.[s] ?? [])]));
    return { ...row, values, samples, runs: same.map((r) => r.values) };
  });
  return { ...first, rows, runs: envs.length };
}
