import { outcomeOf, type HistoryCase } from "./outcome.ts";

/**
 * `--fail-on-regression`: the cases that passed in the baseline run (the last run of the suite on
 * the same branch) and fail now. Pure; no I/O.
 */

/**
 * Names of the cases, in the current run's order, that passed in `baseline` and failed in
 * `current`. A case new since the baseline, or skipped now (it did not run: exit 3 says why),
 * is not a regression.
 */
export function findRegressions(baseline: readonly HistoryCase[], current: readonly HistoryCase[]): string[] {
  const passedBefore = new Set(baseline.filter((c) => outcomeOf(c) === "pass").map((c) => c.name));
  return current.filter((c) => outcomeOf(c) === "fail" && passedBefore.has(c.name)).map((c) => c.name);
}
