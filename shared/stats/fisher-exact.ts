// runs in: both
import { RELATIVE_TIE, type Alternative } from "./binomial-test.ts";

/**
 * Fisher's exact test of a 2x2 table (R's `fisher.test`), the per-case test of `compare`: a
 * case's trials in the baseline (with its history) against its trials in the candidate. It also
 * gives the smallest p-value the table's margins allow, which Tarone's correction needs: a case
 * whose trials all passed on both sides can never be significant, so it costs the others nothing
 * (shared/stats/multiple-testing.ts). Pure; no I/O.
 *
 * The table, as R lays out `matrix(c(a, c, b, d), 2)`:
 *
 *              pass  fail
 *   baseline     a     b
 *   candidate    c     d
 *
 * Conditional on the margins, `a` is hypergeometric; `less` asks whether `a` is small (the
 * baseline's odds of passing are lower: the candidate improved), `greater` whether it is large
 * (the candidate regressed).
 */

/** A 2x2 table of counts `[[a, b], [c, d]]` (rows: baseline, candidate; columns: pass, fail). */
export type Table2x2 = readonly [readonly [number, number], readonly [number, number]];

/** The outcome of {@link fisherExact}. */
export interface FisherResult {
  /** The p-value. */
  pValue: number;
  /** The smallest p-value any table with these margins could give (1 when only one table is possible). */
  minimumPValue: number;
}

/** Scratch space for the table probabilities (reused: the per-case tests of a run call this thousands of times). */
let scratch = new Float64Array(64);

function checkCell(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 0) throw new RangeError(`fisherExact: cell ${name} must be an integer >= 0, got ${v}`);
}

/** The sum of the first `size` weights no larger than `bound` (within R's tie tolerance). */
function sumAtMost(weights: Float64Array, size: number, bound: number): number {
  const limit = bound * RELATIVE_TIE;
  let sum = 0;
  for (let i = 0; i < size; i++) if (weights[i]! <= limit) sum += weights[i]!;
  return sum;
}

/**
 * Fisher's exact test of `table`. Two-sided as R's `fisher.test`: the total probability of the
 * tables (same margins) no more likely than the one observed (within 1 + 1e-7). Throws a
 * RangeError unless every cell is an integer >= 0.
 */
export function fisherExact(table: Table2x2, alternative: Alternative = "two-sided"): FisherResult {
  const [[a, b], [c, d]] = table;
  checkCell("a", a);
  checkCell("b", b);
  checkCell("c", c);
  checkCell("d", d);
  const row1 = a + b;
  const row2 = c + d;
  const col1 = a + c;
  const lo = Math.max(0, col1 - row2);
  const hi = Math.min(row1, col1);
  if (lo === hi) return { pValue: 1, minimumPValue: 1 };
  // Hypergeometric probabilities of a = lo..hi relative to the most likely table, by the ratio
  // of neighbours outward from it: the scale cancels in every ratio below, and only tables too
  // unlikely to matter (below 1e-308 of the mode) underflow to 0.
  const size = hi - lo + 1;
  if (scratch.length < size) scratch = new Float64Array(Math.max(size, 2 * scratch.length));
  const weights = scratch;
  const mode = Math.min(hi, Math.max(lo, Math.floor(((col1 + 1) * (row1 + 1)) / (row1 + row2 + 2))));
  const ratio = (x: number): number => ((row1 - x) * (col1 - x)) / ((x + 1) * (row2 - col1 + x + 1));
  weights[mode - lo] = 1;
  for (let x = mode; x < hi; x++) weights[x - lo + 1] = weights[x - lo]! * ratio(x);
  for (let x = mode; x > lo; x--) weights[x - lo - 1] = weights[x - lo]! / ratio(x - 1);
  let total = 0;
  for (let i = 0; i < size; i++) total += weights[i]!;
  const last = size - 1;
  let p = 0;
  let minimum: number;
  if (alternative === "less") {
    for (let i = 0; i <= a - lo; i++) p += weights[i]!;
    minimum = weights[0]!;
  } else if (alternative === "greater") {
    for (let i = a - lo; i <= last; i++) p += weights[i]!;
    minimum = weights[last]!;
  } else {
    p = sumAtMost(weights, size, weights[a - lo]!);
    // The hypergeometric is unimodal: the least likely table is at one end of the range.
    minimum = sumAtMost(weights, size, Math.min(weights[0]!, weights[last]!));
  }
  return { pValue: Math.min(1, p / total), minimumPValue: Math.min(1, minimum / total) };
}
