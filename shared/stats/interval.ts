// runs in: both
/**
 * A confidence interval as evalfleet passes it around and prints it: `[low, high]`, the shape the
 * JSON report's `*_ci` keys take. Pure; no I/O.
 */

/** `[low, high]`, low <= high; the JSON report writes it as a two-number array. */
export type Interval = readonly [low: number, high: number];

/** Whether `value` lies inside `interval` (its ends included). */
export function contains(interval: Interval, value: number): boolean {
  return interval[0] <= value && value <= interval[1];
}

/**
 * A rate and its interval as the reports print them: `95.0% [91.0%, 97.3%]` (`digits` decimals,
 * default 1). A rate or end that is not a finite number prints as `?`.
 */
export function formatPercentInterval(rate: number, interval: Interval, digits = 1): string {
  const pct = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(digits)}%` : "?");
  return `${pct(rate)} [${pct(interval[0])}, ${pct(interval[1])}]`;
}
