// runs in: both
/**
 * Corrections for testing many cases at once. Holm's step-down and Benjamini-Hochberg's step-up
 * adjusted p-values (R's `p.adjust(p, "holm")` and `p.adjust(p, "BH")`), and the per-case
 * correction the gate uses: Holm's procedure refined by Tarone for discrete tests. Pure; no I/O.
 *
 * Why Tarone: a case's Fisher test is discrete, and most cases of a suite cannot be significant
 * at all (every trial passed on both sides: one possible table, p = 1; or too few trials for any
 * table to reach the threshold). Plain Holm still divides alpha by every case, so one case going
 * from 10/10 to 0/10 (p = 1.1e-5) would be missed in a suite of 2,500 cases. Tarone's method
 * (Tarone 1990, "A modified Bonferroni method for discrete data", Biometrics 46:515-522) divides
 * alpha only by the number K of cases whose smallest possible p-value is at most alpha / K, with
 * the same family-wise error guarantee; Hommel & Krummenauer (1998, Biometrics 54:673-681) made
 * it step down as Holm's does. With continuous tests (every minimum 0) it is exactly Holm's.
 */

function checkP(p: readonly number[], name: string): void {
  for (const v of p) if (!(v >= 0 && v <= 1)) throw new RangeError(`${name}: every p-value must be in [0, 1], got ${v}`);
}

/** Indices of `p` in ascending order of p (stable). */
function ascending(p: readonly number[]): number[] {
  return p.map((_, i) => i).sort((i, j) => p[i]! - p[j]! || i - j);
}

/**
 * Holm's adjusted p-values (Holm 1979), in the input's order: reject case i at level alpha when
 * its adjusted p-value is at most alpha; the chance of any false rejection is then at most alpha,
 * whatever the dependence between the tests.
 */
export function holm(p: readonly number[]): number[] {
  checkP(p, "holm");
  const m = p.length;
  const out = new Array<number>(m);
  let running = 0;
  ascending(p).forEach((index, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p[index]!));
    out[index] = running;
  });
  return out;
}

/**
 * Benjamini-Hochberg's adjusted p-values (Benjamini & Hochberg 1995), in the input's order:
 * rejecting those at most q keeps the expected share of false rejections among the rejections at
 * most q (for independent or positively dependent tests).
 */
export function benjaminiHochberg(p: readonly number[]): number[] {
  checkP(p, "benjaminiHochberg");
  const m = p.length;
  const out = new Array<number>(m);
  const order = ascending(p);
  let running = 1;
  for (let rank = m - 1; rank >= 0; rank--) {
    const index = order[rank]!;
    running = Math.min(running, (m / (rank + 1)) * p[index]!);
    out[index] = running;
  }
  return out;
}

/** The outcome of {@link taroneHolm}. */
export interface TaroneHolmResult {
  /** Per hypothesis, in the input's order: rejected at the family's level. */
  rejected: boolean[];
  /** Per hypothesis: counted in the first step's K (its smallest possible p-value is at most alpha / K). */
  testable: boolean[];
  /** K of the first step: how many hypotheses alpha was divided by. */
  divisor: number;
}

/** The smallest K >= 1 with #{minimum p <= alpha / K} <= K, over `minima` sorted ascending. */
function taroneDivisor(minima: readonly number[], alpha: number): number {
  const countAtMost = (threshold: number): number => {
    let lo = 0;
    let hi = minima.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (minima[mid]! <= threshold) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  // count(alpha / K) - K decreases as K grows, and K = minima.length always qualifies.
  let lo = 1;
  let hi = Math.max(1, minima.length);
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (countAtMost(alpha / mid) <= mid) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Tarone-Holm at family-wise level `alpha` (0 < alpha < 1): `p` are the hypotheses' p-values,
 * `minima` the smallest p-value each test could have given (its margins'; 0 for a continuous
 * test). Step j takes the hypotheses not yet rejected, finds K_j, the smallest K with at most K of
 * them able to reach alpha / K, and rejects the smallest remaining p-value if it is at most
 * alpha / K_j; the first that is not stops the procedure.
 */
export function taroneHolm(p: readonly number[], minima: readonly number[], alpha: number): TaroneHolmResult {
  checkP(p, "taroneHolm");
  checkP(minima, "taroneHolm");
  if (minima.length !== p.length) throw new RangeError(`taroneHolm: ${p.length} p-values but ${minima.length} minima`);
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`taroneHolm: alpha must be between 0 and 1 (exclusive), got ${alpha}`);
  const m = p.length;
  const rejected = new Array<boolean>(m).fill(false);
  if (m === 0) return { rejected, testable: [], divisor: 1 };
  const remaining = [...minima].sort((x, y) => x - y);
  const divisor = taroneDivisor(remaining, alpha);
  const testable = minima.map((v) => v <= alpha / divisor);
  for (const index of ascending(p)) {
    const k = taroneDivisor(remaining, alpha);
    if (p[index]! > alpha / k) break;
    rejected[index] = true;
    // Drop this hypothesis' minimum from the remaining ones (any copy of the value will do).
    const at = remaining.indexOf(minima[index]!);
    remaining.splice(at, 1);
  }
  return { rejected, testable, divisor };
}
