// runs in: both
/**
 * pass@k and pass^k, the statistics of a repeated case (`--repeat N`): how likely at least one of
 * k runs passes, and how likely all k do, estimated from the N runs made. pass@k is used per case
 * (shared/result/result.ts `CaseResult.passAtK`) and averaged per run (`SuiteResult.passAtK`);
 * pass^k is `summary.pass_hat_k` (`meanPassHatK`). Pure; no I/O.
 */

/**
 * pass@k from n runs of which c passed: 1 - C(n-c, k) / C(n, k), the unbiased estimator of the
 * chance that at least one of k runs passes (Chen et al., 2021). `NaN` unless 1 <= k <= n. Pure.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (k <= 0 || n <= 0 || k > n) return Number.NaN;
  if (n - c < k) return 1;
  // pass@1 is the pass rate, exactly (the product form would round it differently).
  if (k === 1) return c / n;
  // The product form avoids huge binomials: C(n-c,k)/C(n,k) = prod_{i<k} (n-c-i)/(n-i).
  let fail = 1;
  for (let i = 0; i < k; i++) fail *= (n - c - i) / (n - i);
  return 1 - fail;
}

/** pass@k for k = 1..n over runs given as pass/fail, keys are k; `null` with no runs. */
export function passAtKTable(runs: readonly { passed: boolean }[]): Record<string, number> | null {
  if (runs.length === 0) return null;
  const n = runs.length;
  const c = runs.filter((r) => r.passed).length;
  const out: Record<string, number> = {};
  for (let k = 1; k <= n; k++) out[String(k)] = passAtK(n, c, k);
  return out;
}

/**
 * pass^k from n runs of which c passed: C(c, k) / C(n, k), the unbiased estimator of the chance
 * that k runs drawn all pass (tau-bench's pass^k: Yao et al. 2024, "tau-bench: A Benchmark for
 * Tool-Agent-User Interaction in Real-World Domains"). Where pass@k rewards an agent that gets it
 * right once in k tries, pass^k asks for every time. `NaN` unless 1 <= k <= n. Pure.
 */
export function passHatK(n: number, c: number, k: number): number {
  if (k <= 0 || n <= 0 || k > n) return Number.NaN;
  if (c < k) return 0;
  if (k === 1) return c / n;
  // C(c,k)/C(n,k) = prod_{i<k} (c-i)/(n-i), without the huge binomials.
  let all = 1;
  for (let i = 0; i < k; i++) all *= (c - i) / (n - i);
  return all;
}

/** pass^k for k = 1..n over runs given as pass/fail, keys are k; `null` with no runs. */
export function passHatKTable(runs: readonly { passed: boolean }[]): Record<string, number> | null {
  if (runs.length === 0) return null;
  const n = runs.length;
  const c = runs.filter((r) => r.passed).length;
  const out: Record<string, number> = {};
  for (let k = 1; k <= n; k++) out[String(k)] = passHatK(n, c, k);
  return out;
}

/**
 * A run's pass^k (`summary.pass_hat_k`): the mean over cases of each case's pass^k, for k = 1 up
 * to the fewest trials any case ran (so every case counts in every k; with adaptive repeats that
 * is MIN). Cases with no trial are left out; `null` when none is left.
 */
export function meanPassHatK(cases: readonly { passed: number; trials: number }[]): Record<string, number> | null {
  const counted = cases.filter((c) => c.trials > 0);
  if (counted.length === 0) return null;
  const kMax = Math.min(...counted.map((c) => c.trials));
  const out: Record<string, number> = {};
  for (let k = 1; k <= kMax; k++) out[String(k)] = counted.reduce((sum, c) => sum + passHatK(c.trials, c.passed, k), 0) / counted.length;
  return out;
}
