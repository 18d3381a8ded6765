// runs in: both
import { CONVENTIONAL_CONFIDENCE } from "./conventional-levels.ts";
import type { Interval } from "./interval.ts";
import { zForConfidence } from "./normal.ts";
import { wilsonAt } from "./wilson.ts";

/**
 * A run's pass rate and its interval (`summary.pass_rate_ci`). When every case ran once it is the
 * plain pass rate with Wilson's interval. With repeats it is the mean of the per-case pass rates,
 * and its interval treats the cases as clusters (Miller 2024, "Adding Error Bars to Evals",
 * arXiv:2411.00640, clustered standard errors): a case's trials are not independent draws of the
 * suite, so the standard error comes from the spread of the per-case rates, not from the trial
 * count. Pure; no I/O.
 *
 * How the interval is built: the cluster-robust (CR0) variance of the mean of the per-case rates,
 * V = sum (r_c - mean)^2 / n^2, gives an effective number of trials (Kish's effective sample size)
 * n_eff = mean (1 - mean) / V, capped at what independent trials would give (the design effect is
 * never below 1); the interval is Wilson's at (mean, n_eff), which keeps it inside [0, 1] and
 * asymmetric near 0 and 1 as a rate's interval must be. With one trial per case V is
 * mean (1 - mean) / n and n_eff = n, so this is exactly Wilson's interval of the run; when every
 * case has the same rate (every trial passed, say) V is 0 and the trials count as independent.
 */

/** One case's trials: how many ran (not counting infrastructure errors) and how many passed. */
export interface CaseTrials {
  passed: number;
  trials: number;
}

/** A run's pass rate with its interval. */
export interface PassRateEstimate {
  /** The mean of the per-case pass rates (with one trial each: passed / cases); 0 with no cases. */
  rate: number;
  /** Its interval at the confidence asked for; [0, 1] with no cases. */
  interval: Interval;
  /** `wilson` when every case ran once, `clustered` with repeats. */
  method: "wilson" | "clustered";
  /** Cases counted (those with at least one trial). */
  cases: number;
  /** Trials over those cases. */
  trials: number;
  /** The effective number of independent trials behind the interval (between `cases` and `trials`). */
  effectiveTrials: number;
  /** The cluster-robust standard error of `rate`. */
  standardError: number;
}

/**
 * The pass rate of a run from its cases' trials, with its interval at `confidence` (two-sided,
 * default {@link CONVENTIONAL_CONFIDENCE}); cases with no trial are left out. Throws a RangeError on a
 * case with negative counts or more passes than trials.
 */
export function passRateInterval(cases: readonly CaseTrials[], confidence: number = CONVENTIONAL_CONFIDENCE): PassRateEstimate {
  const z = zForConfidence(confidence);
  const counted: CaseTrials[] = [];
  for (const c of cases) {
    if (!(c.trials >= 0) || !(c.passed >= 0) || c.passed > c.trials) throw new RangeError(`passRateInterval: need 0 <= passed <= trials, got ${c.passed} of ${c.trials}`);
    if (c.trials > 0) counted.push(c);
  }
  const n = counted.length;
  const trials = counted.reduce((sum, c) => sum + c.trials, 0);
  if (n === 0) return { rate: 0, interval: [0, 1], method: "wilson", cases: 0, trials: 0, effectiveTrials: 0, standardError: 0 };
  const single = counted.every((c) => c.trials === 1);
  const rate = counted.reduce((sum, c) => sum + c.passed / c.trials, 0) / n;
  const variance = counted.reduce((sum, c) => sum + (c.passed / c.trials - rate) ** 2, 0) / (n * n);
  // Independent trials behind an equal-weight mean of rates: n^2 / sum(1 / trials_c) (n x trials when equal).
  const independent = (n * n) / counted.reduce((sum, c) => sum + 1 / c.trials, 0);
  const spread = rate * (1 - rate);
  const effective = single ? n : variance > 0 && spread > 0 ? Math.min(independent, spread / variance) : independent;
  return { rate, interval: wilsonAt(rate, effective, z), method: single ? "wilson" : "clustered", cases: n, trials, effectiveTrials: effective, standardError: Math.sqrt(variance) };
}
