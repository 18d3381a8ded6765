/**
 * pass@k, the statistic of a repeated case (`--repeat N`): how likely at least one of k runs
 * passes, estimated from the N runs made. Used per case (shared/result.ts `CaseResult.passAtK`)
 * and averaged per run (`SuiteResult.passAtK`). Pure; no I/O.
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
