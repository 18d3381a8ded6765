// runs in: both
import { normalQuantile } from "./normal.ts";
import { logGamma, regularizedBeta } from "./special-functions.ts";

/**
 * Student's t distribution: the tail (p-values of the paired t-test) and the quantile (intervals
 * around a mean from few cases). `df` may be any positive real. Pure; no I/O.
 */

/** P(T > t) for T ~ t(df). */
export function studentTUpperTail(t: number, df: number): number {
  if (Number.isNaN(t) || !(df > 0)) return Number.NaN;
  if (t === Number.POSITIVE_INFINITY) return 0;
  if (t === Number.NEGATIVE_INFINITY) return 1;
  // P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2).
  const half = 0.5 * regularizedBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? half : 1 - half;
}

/** P(T <= t) for T ~ t(df). */
export function studentTCdf(t: number, df: number): number {
  return studentTUpperTail(-t, df);
}

/** The t(df) density at t. */
function studentTDensity(t: number, df: number): number {
  return Math.exp(logGamma((df + 1) / 2) - logGamma(df / 2) - 0.5 * Math.log(df * Math.PI) - ((df + 1) / 2) * Math.log1p((t * t) / df));
}

/**
 * The t with P(T <= t) = p for T ~ t(df), 0 < p < 1 (`-Infinity` at 0, `Infinity` at 1):
 * Newton's method on the tail inside a bracket that bisection keeps honest (the t tail is heavy
 * for small df, where Newton alone overshoots).
 */
export function studentTQuantile(p: number, df: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1 || !(df > 0)) return Number.NaN;
  if (p === 0) return Number.NEGATIVE_INFINITY;
  if (p === 1) return Number.POSITIVE_INFINITY;
  if (p === 0.5) return 0;
  const q = p < 0.5 ? p : 1 - p;
  // Bracket [lo, hi] with tail(lo) >= q > tail(hi); the normal quantile is a lower bound.
  let lo = 0;
  let hi = Math.max(1, -normalQuantile(q));
  while (studentTUpperTail(hi, df) > q) {
    lo = hi;
    hi *= 2;
  }
  let t = Math.max(lo, Math.min(hi, -normalQuantile(q)));
  for (let i = 0; i < 200; i++) {
    const tail = studentTUpperTail(t, df);
    if (tail > q) lo = t;
    else hi = t;
    let next = t + (tail - q) / studentTDensity(t, df);
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (Math.abs(next - t) <= 1e-14 * Math.max(1, t)) {
      t = next;
      break;
    }
    t = next;
  }
  return p < 0.5 ? -t : t;
}
