// runs in: both
import { CONVENTIONAL_CONFIDENCE } from "./conventional-levels.ts";
import type { Interval } from "./interval.ts";
import { studentTQuantile } from "./student-t.ts";

/**
 * Intervals around a mean score: the numeric judge's (1-10) or a scorer's (0-1). Student's t
 * interval, mean +- t(n-1) s / sqrt(n), clipped to the score's range; with repeats the cases are
 * the clusters (Miller 2024): the interval is taken over the per-case mean scores, each case
 * counting once however many trials it ran. Pure; no I/O.
 */

/** A mean with its interval. */
export interface MeanEstimate {
  /** The mean (`NaN` with no values). */
  mean: number;
  /** Its interval; the whole range (`bounds`, else +-Infinity) with fewer than two values. */
  interval: Interval;
  /** Values (or cases) counted. */
  n: number;
  /** The standard error s / sqrt(n) (`NaN` with fewer than two values). */
  standardError: number;
}

/** Options of {@link meanInterval}. */
export interface MeanIntervalOptions {
  /** Two-sided confidence level; default {@link CONVENTIONAL_CONFIDENCE}. */
  confidence?: number;
  /** The range the values live in (e.g. [1, 10] for the judge), which the interval is clipped to. Default: unbounded. */
  bounds?: Interval;
}

/**
 * The mean of `values` with its t interval. Non-finite values are a RangeError (a missing score
 * is the caller's to leave out).
 */
export function meanInterval(values: readonly number[], options: MeanIntervalOptions = {}): MeanEstimate {
  const confidence = options.confidence ?? CONVENTIONAL_CONFIDENCE;
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be between 0 and 1 (exclusive), got ${confidence}`);
  const [min, max] = options.bounds ?? [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY];
  for (const v of values) if (!Number.isFinite(v)) throw new RangeError(`meanInterval: every value must be a finite number, got ${v}`);
  const n = values.length;
  if (n === 0) return { mean: Number.NaN, interval: [min, max], n, standardError: Number.NaN };
  const mean = values.reduce((sum, v) => sum + v, 0) / n;
  if (n === 1) return { mean, interval: [min, max], n, standardError: Number.NaN };
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (n - 1);
  const standardError = Math.sqrt(variance / n);
  const half = studentTQuantile(1 - (1 - confidence) / 2, n - 1) * standardError;
  return { mean, interval: [Math.max(min, mean - half), Math.min(max, mean + half)], n, standardError };
}

/**
 * The mean over cases of each case's mean score (`groups`: one array of trial scores per case;
 * empty ones are left out), with the t interval over those case means.
 */
export function clusteredMeanInterval(groups: readonly (readonly number[])[], options: MeanIntervalOptions = {}): MeanEstimate {
  const means = groups.filter((g) => g.length > 0).map((g) => g.reduce((sum, v) => sum + v, 0) / g.length);
  return meanInterval(means, options);
}
