import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";
import { MAX_REPEAT } from "../../shared/trials/fold-repeats.ts";
import { SCORING_METHODS, type ScoringMethod } from "../../shared/datasets/expected-output-methods.ts";

/**
 * The run-level policy options, validated the same way for the library and the command line:
 * the pass threshold, the repeat count and the run's scoring method. Pure; no I/O.
 */

/** A pass threshold: a fraction between 0 and 1, or null for none. Throws a usage error otherwise. */
export function checkPassThreshold(value: number | null | undefined, field = "passThreshold"): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new EvalfleetError(ErrorCode.Usage, `${field} must be a fraction between 0 and 1 (0.95 for 95%), got ${String(value)}`, { field, value });
  }
  return value;
}

/**
 * The pass threshold of a run: the runner's (`--pass-threshold`, the `passThreshold` option; null
 * included, meaning "none") when given, else the suite's, else none. Not validated here.
 */
export function resolvePassThreshold(runner: number | null | undefined, suite: number | null | undefined): number | null {
  return runner !== undefined ? runner : (suite ?? null);
}

/** A repeat count: a whole number from 1 to {@link MAX_REPEAT}; default 1. Throws a usage error otherwise. */
export function checkRepeat(value: number | null | undefined, field = "repeat"): number {
  if (value === null || value === undefined) return 1;
  if (!Number.isInteger(value) || value < 1 || value > MAX_REPEAT) {
    throw new EvalfleetError(ErrorCode.Usage, `${field} must be a whole number from 1 to ${MAX_REPEAT}, got ${String(value)}`, { field, value });
  }
  return value;
}

/** A run's scoring method (`--scoring-method`, the `scoringMethod` option), or null for none. Throws a usage error naming the methods otherwise. */
export function checkScoringMethod(value: string | null | undefined, field = "scoringMethod"): ScoringMethod | null {
  if (value === null || value === undefined) return null;
  if (!(SCORING_METHODS as readonly string[]).includes(value)) {
    throw new EvalfleetError(ErrorCode.Usage, `${field} must be one of ${SCORING_METHODS.join(", ")}, got ${String(value)}`, { field, value });
  }
  return value as ScoringMethod;
}
