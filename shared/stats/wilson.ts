// runs in: both
import { CONVENTIONAL_CONFIDENCE } from "./conventional-levels.ts";
import type { Interval } from "./interval.ts";
import { zForConfidence } from "./normal.ts";

/**
 * Wilson's score interval for a proportion (Wilson 1927; method 3 of Newcombe 1998, the one it
 * recommends): unlike the textbook p +- z sqrt(p(1-p)/n), it stays inside [0, 1], is never empty
 * at 0 or n successes, and covers close to its nominal level down to a handful of trials. The
 * interval of a case's pass rate over its trials, and of a run's when each case ran once. Pure.
 */

/**
 * The Wilson interval of `successes` out of `trials` at `confidence` (two-sided, default
 * {@link CONVENTIONAL_CONFIDENCE}). The counts may be fractional (an effective sample size, as
 * `passRateInterval` uses); 0 trials give [0, 1] (nothing is known). Throws a RangeError on
 * negative counts, more successes than trials, or a confidence outside (0, 1).
 */
export function wilsonInterval(successes: number, trials: number, confidence: number = CONVENTIONAL_CONFIDENCE): Interval {
  if (!(trials >= 0) || !(successes >= 0) || successes > trials) throw new RangeError(`wilsonInterval: need 0 <= successes <= trials, got ${successes} of ${trials}`);
  const z = zForConfidence(confidence);
  if (trials === 0) return [0, 1];
  return wilsonAt(successes / trials, trials, z);
}

/** The Wilson interval of a proportion `p` from `n` trials at normal quantile `z` (no checks). */
export function wilsonAt(p: number, n: number, z: number): Interval {
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At p = 0 or 1 the end is exactly 0 or 1; rounding must not move it.
  return [p <= 0 ? 0 : Math.max(0, center - half), p >= 1 ? 1 : Math.min(1, center + half)];
}
