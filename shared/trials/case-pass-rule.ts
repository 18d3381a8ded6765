// runs in: both
/**
 * The per-case pass rule of a repeated case (`--case-pass-rate R`, `Case({ passRate })`, the
 * suite's `casePassRate`): it passes when at least the fraction R of its trials passed. R = 1
 * (the default) is the rule evalfleet always had: every trial passes. Pure; no I/O.
 */

/**
 * Whether `trials` meet the rule `rate` (0-1). A result that records no rule (null or absent: a
 * result read back from before rules existed, or built by hand) is held to every trial, the rule
 * evalfleet always had; a run's rule is compiled (compileRunSettings) and recorded on each
 * repeated result (applyCasePassRule). No trials never pass. The tiny slack absorbs float
 * rounding: 4 of 5 meets 0.8.
 */
export function meetsCasePassRate(trials: readonly { readonly passed: boolean }[], rate: number | null | undefined): boolean {
  if (trials.length === 0) return false;
  const passed = trials.filter((t) => t.passed).length;
  // At 1 the comparison is exact (every trial), whatever the slack would allow.
  if (rate === null || rate === undefined || rate >= 1) return passed === trials.length;
  return passed / trials.length >= rate - 1e-12;
}

/** The rule of one case: its own `passRate` wins over the run's (the flag's, else the suite's, else 1: compileRunSettings). */
export function casePassRateOf(own: number | null | undefined, run: number): number {
  return own ?? run;
}

/**
 * Records the rule of one case on its result where results are collected, before any hook or
 * report reads `passed`: a repeated result gets its case's own rate, else the run's; a single
 * run's result keeps none (the rule is about trials).
 */
export function applyCasePassRule(result: { readonly repeats?: readonly unknown[] | null; casePassRate?: number | null }, own: number | null | undefined, run: number | null | undefined): void {
  if (!result.repeats || result.repeats.length === 0) return;
  const rate = own ?? run;
  if (rate !== null && rate !== undefined) result.casePassRate = rate;
}
