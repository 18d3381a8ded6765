// runs in: both
import { regularizedGammaQ } from "./special-functions.ts";

/**
 * The standard normal distribution: its tail, its CDF and its quantile (what turns a confidence
 * level into the z of an interval). Pure; no I/O.
 */

/** P(Z > z) for a standard normal Z, to full relative precision in the far tail. */
export function normalUpperTail(z: number): number {
  if (Number.isNaN(z)) return Number.NaN;
  // erfc(u) = Q(1/2, u^2) for u >= 0; P(Z > z) = erfc(z / sqrt 2) / 2.
  if (z >= 0) return 0.5 * regularizedGammaQ(0.5, (z * z) / 2);
  return 1 - 0.5 * regularizedGammaQ(0.5, (z * z) / 2);
}

/** P(Z <= z) for a standard normal Z. */
export function normalCdf(z: number): number {
  return normalUpperTail(-z);
}

/** The standard normal density at z. */
export function normalDensity(z: number): number {
  return Math.exp(-0.5 * z * z) / Math.sqrt(2 * Math.PI);
}

/**
 * The z with P(Z <= z) = p, for 0 < p < 1 (`-Infinity` at 0, `Infinity` at 1, `NaN` outside):
 * Abramowitz & Stegun 26.2.23 (error below 4.5e-4) polished by Newton's method on the tail, which
 * converges to machine precision in a few steps.
 */
export function normalQuantile(p: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1) return Number.NaN;
  if (p === 0) return Number.NEGATIVE_INFINITY;
  if (p === 1) return Number.POSITIVE_INFINITY;
  if (p === 0.5) return 0;
  // Work on the upper tail q <= 0.5 (no cancellation), then restore the sign.
  const q = p < 0.5 ? p : 1 - p;
  const t = Math.sqrt(-2 * Math.log(q));
  let z = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
  for (let i = 0; i < 50; i++) {
    const step = (normalUpperTail(z) - q) / normalDensity(z);
    z += step;
    if (Math.abs(step) <= 1e-15 * Math.max(1, Math.abs(z))) break;
  }
  return p < 0.5 ? -z : z;
}

/** The z of a two-sided interval at `confidence` (0 < confidence < 1): 1.96 for 0.95. */
export function zForConfidence(confidence: number): number {
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be between 0 and 1 (exclusive), got ${confidence}`);
  return normalQuantile(1 - (1 - confidence) / 2);
}
