// runs in: both
/**
 * The special functions the statistics stand on: log-gamma and log-factorials (binomial,
 * hypergeometric and Student-t densities), the regularized incomplete beta function (the t
 * distribution) and the regularized upper incomplete gamma function (the normal tail). Written
 * from the classic series and continued fractions (Numerical Recipes, 3rd ed., sections 6.1, 6.2,
 * 6.4) with no coefficient tables to mistype: every constant below is a Bernoulli number or pi.
 * Accurate to about 1e-14 relative over the ranges evalfleet uses. Pure; no I/O.
 */

const HALF_LOG_TWO_PI = 0.5 * Math.log(2 * Math.PI);
/** Below this, the continued fractions' denominators are nudged off zero (Lentz's method). */
const TINY = 1e-300;
/** Relative step at which a series or continued fraction has converged. */
const EPSILON = 1e-16;
/** Iterations a continued fraction gets before it is declared diverged (it never is in our ranges). */
const MAX_ITERATIONS = 10_000;

/**
 * ln Γ(x) for x > 0 (`Infinity` at 0, `NaN` below). Stirling's series to the x^-11 term after
 * shifting x up to at least 15 with Γ(x) = Γ(x + k) / (x (x + 1) ... (x + k - 1)); the series'
 * error there is below 1e-16.
 */
export function logGamma(x: number): number {
  if (Number.isNaN(x) || x < 0) return Number.NaN;
  if (x === 0) return Number.POSITIVE_INFINITY;
  let shift = 0;
  let y = x;
  while (y < 15) {
    shift += Math.log(y);
    y += 1;
  }
  const inv = 1 / y;
  const inv2 = inv * inv;
  // B2/(2*1 y) + B4/(4*3 y^3) + ... + B12/(12*11 y^11), nested.
  const series = inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 * (1 / 1680 - inv2 * (1 / 1188 - (inv2 * 691) / 360360)))));
  return (y - 0.5) * Math.log(y) - y + HALF_LOG_TWO_PI + series - shift;
}

/** ln n! for the small n counts usually are, summed once and kept (ln 0! = 0). */
const LOG_FACTORIALS: number[] = [0];
const LOG_FACTORIAL_TABLE_SIZE = 1024;

/** ln n! for an integer n >= 0 (`NaN` otherwise): a table up to 1023, ln Γ(n + 1) above. */
export function logFactorial(n: number): number {
  if (!Number.isInteger(n) || n < 0) return Number.NaN;
  if (n >= LOG_FACTORIAL_TABLE_SIZE) return logGamma(n + 1);
  while (LOG_FACTORIALS.length <= n) LOG_FACTORIALS.push(LOG_FACTORIALS[LOG_FACTORIALS.length - 1]! + Math.log(LOG_FACTORIALS.length));
  return LOG_FACTORIALS[n]!;
}

/** ln C(n, k) for integers 0 <= k <= n; `-Infinity` (C = 0) for k outside 0..n. */
export function logChoose(n: number, k: number): number {
  if (k < 0 || k > n) return Number.NEGATIVE_INFINITY;
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

/** The continued fraction of I_x(a, b) (modified Lentz), good for x < (a + 1) / (a + b + 2). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= MAX_ITERATIONS; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < EPSILON) return h;
  }
  throw new RangeError(`incomplete beta: no convergence for a=${a}, b=${b}, x=${x}`);
}

/** The regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1. */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (!(a > 0) || !(b > 0) || Number.isNaN(x)) return Number.NaN;
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // The fraction converges fast on its side of the mean; the other side by symmetry.
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(a, b, x)) / a;
  return 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

/**
 * The regularized upper incomplete gamma function Q(a, x) = Γ(a, x) / Γ(a) for a > 0, x >= 0:
 * its series below x = a + 1, its continued fraction above (where Q is small and kept to full
 * relative precision, which the normal tail needs).
 */
export function regularizedGammaQ(a: number, x: number): number {
  if (!(a > 0) || Number.isNaN(x) || x < 0) return Number.NaN;
  if (x === 0) return 1;
  const logFront = -x + a * Math.log(x) - logGamma(a);
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n <= MAX_ITERATIONS; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * EPSILON) return 1 - sum * Math.exp(logFront);
    }
    throw new RangeError(`incomplete gamma: no convergence for a=${a}, x=${x}`);
  }
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i <= MAX_ITERATIONS; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < EPSILON) return Math.exp(logFront) * h;
  }
  throw new RangeError(`incomplete gamma: no convergence for a=${a}, x=${x}`);
}
