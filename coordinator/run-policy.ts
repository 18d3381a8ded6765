import { EvalfleetError, ErrorCode } from "../shared/errors.ts";
import { MAX_REPEAT } from "../shared/repeats.ts";

/**
 * The run-level policy options, validated the same way for the library and the command line:
 * the pass threshold and the repeat count. Pure; no I/O.
 */

/** A pass threshold: a fraction between 0 and 1, or null for none. Throws a usage error otherwise. */
export function checkPassThreshold(value: number | null | undefined, field = "passThreshold"): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new EvalfleetError(ErrorCode.Usage, `${field} must be a fraction between 0 and 1 (0.95 for 95%), got ${String(value)}`, { field, value });
  }
  return value;
}

/** A repeat count: a whole number from 1 to {@link MAX_REPEAT}; default 1. Throws a usage error otherwise. */
export function checkRepeat(value: number | null | undefined, field = "repeat"): number {
  if (value === null || value === undefined) return 1;
  if (!Number.isInteger(value) || value < 1 || value > MAX_REPEAT) {
    throw new EvalfleetError(ErrorCode.Usage, `${field} must be a whole number from 1 to ${MAX_REPEAT}, got ${String(value)}`, { field, value });
  }
  return value;
}
