// runs in: both
import { logChoose } from "./special-functions.ts";

/**
 * The exact binomial test (R's `binom.test`) and the exact McNemar test built on it: the run-level
 * test of `compare` when each case ran once on both sides. Pure; no I/O.
 */

/** Which way a test looks: `two-sided`, or one-sided `less` / `greater` (as R names them). */
export type Alternative = "two-sided" | "less" | "greater";

/** R's tolerance for "as likely as the observed outcome" (fisher.test and binom.test: 1 + 1e-7). */
export const RELATIVE_TIE = 1 + 1e-7;

/** P(X = k) for X ~ Binomial(n, p). */
export function binomialPmf(k: number, n: number, p: number): number {
  if (k < 0 || k > n) return 0;
  if (p === 0) return k === 0 ? 1 : 0;
  if (p === 1) return k === n ? 1 : 0;
  return Math.exp(logChoose(n, k) + k * Math.log(p) + (n - k) * Math.log1p(-p));
}

function checkCounts(successes: number, trials: number, p: number): void {
  if (!Number.isInteger(trials) || trials < 0) throw new RangeError(`binomial test: trials must be an integer >= 0, got ${trials}`);
  if (!Number.isInteger(successes) || successes < 0 || successes > trials) throw new RangeError(`binomial test: successes must be an integer in 0..${trials}, got ${successes}`);
  if (!(p >= 0 && p <= 1)) throw new RangeError(`binomial test: p must be in [0, 1], got ${p}`);
}

/**
 * The exact binomial test's p-value for `successes` out of `trials` against success probability
 * `p` (default 0.5). Two-sided as R's `binom.test`: the total probability of the outcomes no more
 * likely than the one observed (within {@link RELATIVE_TIE}). 1 with no trials.
 */
export function binomialTest(successes: number, trials: number, p = 0.5, alternative: Alternative = "two-sided"): number {
  checkCounts(successes, trials, p);
  if (trials === 0) return 1;
  let sum = 0;
  if (alternative === "less") {
    for (let k = 0; k <= successes; k++) sum += binomialPmf(k, trials, p);
  } else if (alternative === "greater") {
    for (let k = successes; k <= trials; k++) sum += binomialPmf(k, trials, p);
  } else {
    const observed = binomialPmf(successes, trials, p) * RELATIVE_TIE;
    for (let k = 0; k <= trials; k++) {
      const pk = binomialPmf(k, trials, p);
      if (pk <= observed) sum += pk;
    }
  }
  return Math.min(1, sum);
}

/**
 * The exact (conditional) McNemar test of paired pass/fail outcomes: `lost` cases passed in A and
 * failed in B, `gained` failed in A and passed in B; the concordant cases carry no information.
 * Under "A and B are the same agent" each discordant case is a fair coin, so the p-value is the
 * two-sided binomial test of `lost` out of `lost + gained` at 1/2: 2 P(X <= min), at most 1.
 */
export function mcnemarExact(lost: number, gained: number): number {
  for (const [field, value] of [["lost", lost], ["gained", gained]] as const) {
    if (!Number.isInteger(value) || value < 0) throw new RangeError(`mcnemarExact: ${field} must be an integer >= 0, got ${value}`);
  }
  const n = lost + gained;
  if (n === 0 || lost === gained) return 1;
  const low = Math.min(lost, gained);
  let tail = 0;
  for (let k = 0; k <= low; k++) tail += binomialPmf(k, n, 0.5);
  return Math.min(1, 2 * tail);
}
