// runs in: both
import { CONVENTIONAL_CONFIDENCE } from "./conventional-levels.ts";
import type { Interval } from "./interval.ts";
import { zForConfidence } from "./normal.ts";
import { studentTQuantile, studentTUpperTail } from "./student-t.ts";
import { wilsonAt } from "./wilson.ts";

/**
 * Paired comparisons of two runs over the same cases: the run-level tests of `compare` and the
 * gate. Each case gives one difference (B's pass rate or mean score minus A's); the cases, not the
 * trials, are the units (Miller 2024, "Adding Error Bars to Evals": paired differences with the
 * cases as clusters). Pure; no I/O.
 *
 * - The test: under "A and B are the same agent" each case's difference is symmetric about 0, so
 *   its sign is a fair coin. With at most {@link SIGN_FLIP_EXACT_MAX} non-zero differences the
 *   p-value is that sign-flip (randomization) test computed exactly over every sign pattern; with
 *   more, the paired t-test, its large-sample form. With one trial per case the differences are
 *   -1, 0 and 1, and the sign-flip test is exactly McNemar's exact test.
 * - The interval of the mean difference is Student's t; for single trials Newcombe's hybrid score
 *   interval for paired proportions ({@link newcombePairedInterval}), which stays inside [-1, 1]
 *   and behaves at small counts.
 */

/** Non-zero differences up to which the sign-flip test enumerates every sign pattern (2^20, a few ms). */
export const SIGN_FLIP_EXACT_MAX = 20;

/** The outcome of a paired test of the mean difference. */
export interface PairedTestResult {
  /** Cases (pairs) counted. */
  n: number;
  /** The mean difference (B - A); 0 with no pairs. */
  mean: number;
  /** Its t interval at the confidence asked for ([-Infinity, Infinity] with fewer than two pairs). */
  interval: Interval;
  /** The two-sided p-value of "the mean difference is 0". */
  pValue: number;
  /** `sign-flip exact` (at most {@link SIGN_FLIP_EXACT_MAX} non-zero differences) or `paired t`. */
  method: "sign-flip exact" | "paired t";
  /** Pairs whose difference is not 0. */
  nonZero: number;
}

/**
 * The exact two-sided sign-flip test of `differences` (zeros carry no information): the share of
 * the 2^m sign patterns of the m non-zero values whose sum is at least as far from 0 as the
 * observed sum. Throws a RangeError past {@link SIGN_FLIP_EXACT_MAX} non-zero values.
 */
export function signFlipTest(differences: readonly number[]): number {
  const values = differences.filter((d) => d !== 0).map(Math.abs);
  const m = values.length;
  if (m > SIGN_FLIP_EXACT_MAX) throw new RangeError(`signFlipTest: at most ${SIGN_FLIP_EXACT_MAX} non-zero differences, got ${m}`);
  if (m === 0) return 1;
  const observed = Math.abs(differences.reduce((sum, d) => sum + d, 0));
  const scale = values.reduce((sum, v) => sum + v, 0);
  // Sums within rounding of the observed one count as equal (they are, in exact arithmetic).
  const bar = observed - 1e-9 * scale;
  // Walk every sign pattern in Gray-code order: each step flips one sign.
  const signs = new Array<number>(m).fill(1);
  let sum = scale;
  let extreme = 0;
  const patterns = 2 ** m;
  for (let step = 0; step < patterns; step++) {
    if (Math.abs(sum) >= bar) extreme++;
    // The bit that changes between Gray codes step and step + 1: the lowest set bit of step + 1.
    const next = step + 1;
    const bit = 31 - Math.clz32(next & -next);
    if (bit < m) {
      sum -= 2 * signs[bit]! * values[bit]!;
      signs[bit] = -signs[bit]!;
    }
  }
  return Math.min(1, extreme / patterns);
}

function checkConfidence(confidence: number): void {
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be between 0 and 1 (exclusive), got ${confidence}`);
}

/** The mean of `differences` and its t interval, with the paired t-test's two-sided p-value. */
export function pairedTTest(differences: readonly number[], confidence: number = CONVENTIONAL_CONFIDENCE): { mean: number; interval: Interval; pValue: number } {
  checkConfidence(confidence);
  const n = differences.length;
  if (n === 0) return { mean: 0, interval: [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY], pValue: 1 };
  const mean = differences.reduce((sum, d) => sum + d, 0) / n;
  if (n === 1) return { mean, interval: [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY], pValue: 1 };
  const variance = differences.reduce((sum, d) => sum + (d - mean) ** 2, 0) / (n - 1);
  const se = Math.sqrt(variance / n);
  if (se === 0) return { mean, interval: [mean, mean], pValue: mean === 0 ? 1 : 0 };
  const half = studentTQuantile(1 - (1 - confidence) / 2, n - 1) * se;
  const pValue = Math.min(1, 2 * studentTUpperTail(Math.abs(mean) / se, n - 1));
  return { mean, interval: [mean - half, mean + half], pValue };
}

/**
 * The paired test of the mean of `differences` (one per case, B - A), with its t interval at
 * `confidence` (default {@link CONVENTIONAL_CONFIDENCE}): exact sign-flip p-value for few non-zero
 * differences, the paired t-test's otherwise. Non-finite differences are a RangeError.
 */
export function pairedDifferenceTest(differences: readonly number[], confidence: number = CONVENTIONAL_CONFIDENCE): PairedTestResult {
  for (const d of differences) if (!Number.isFinite(d)) throw new RangeError(`pairedDifferenceTest: every difference must be a finite number, got ${d}`);
  const t = pairedTTest(differences, confidence);
  const nonZero = differences.filter((d) => d !== 0).length;
  const exact = nonZero <= SIGN_FLIP_EXACT_MAX;
  return { n: differences.length, mean: t.mean, interval: t.interval, pValue: exact ? signFlipTest(differences) : t.pValue, method: exact ? "sign-flip exact" : "paired t", nonZero };
}

/** A paired 2x2 table of single trials: how many cases passed on both sides, only in A, only in B, on neither. */
export interface PairedOutcomes {
  both: number;
  onlyA: number;
  onlyB: number;
  neither: number;
}

/**
 * Newcombe's hybrid score interval for the difference of paired proportions, B's pass rate minus
 * A's (Newcombe 1998, "Improved confidence intervals for the difference between binomial
 * proportions based on paired data", Stat Med 17:2635-2650, method 10): Wilson intervals for the
 * two rates combined with the correlation of the pairs (its continuity-corrected estimate, as
 * Fagerland, Lydersen & Laake 2017 compute it). [-1, 1] with no pairs.
 */
export function newcombePairedInterval(table: PairedOutcomes, confidence: number = CONVENTIONAL_CONFIDENCE): Interval {
  const { both, onlyA, onlyB, neither } = table;
  for (const [name, v] of Object.entries(table)) if (!Number.isInteger(v) || v < 0) throw new RangeError(`newcombePairedInterval: ${name} must be an integer >= 0, got ${v}`);
  const n = both + onlyA + onlyB + neither;
  const z = zForConfidence(confidence);
  if (n === 0) return [-1, 1];
  const pA = (both + onlyA) / n;
  const pB = (both + onlyB) / n;
  const [lA, uA] = wilsonAt(pA, n, z);
  const [lB, uB] = wilsonAt(pB, n, z);
  // The correlation of the two sides' outcomes, its numerator shrunk by n/2 when positive.
  const marginals = (both + onlyA) * (onlyB + neither) * (both + onlyB) * (onlyA + neither);
  let phi = 0;
  if (marginals > 0) {
    const cross = both * neither - onlyA * onlyB;
    const corrected = cross > n / 2 ? cross - n / 2 : cross >= 0 ? 0 : cross;
    phi = corrected / Math.sqrt(marginals);
  }
  const d = pB - pA;
  const low = d - Math.sqrt(Math.max(0, (pB - lB) ** 2 - 2 * phi * (pB - lB) * (uA - pA) + (uA - pA) ** 2));
  const high = d + Math.sqrt(Math.max(0, (uB - pB) ** 2 - 2 * phi * (uB - pB) * (pA - lA) + (pA - lA) ** 2));
  return [Math.max(-1, low), Math.min(1, high)];
}
