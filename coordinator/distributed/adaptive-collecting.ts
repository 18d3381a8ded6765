import type { CaseResult } from "../../shared/result/result.ts";

/**
 * Adaptive repeats (`--repeat MIN..MAX`) as a distributed run's collector plans them
 * (collect.ts): what it is told. (The rule itself: shared/trials/adaptive-repeats.ts.)
 */

/** Adaptive repeats as the collector plans them. */
export interface AdaptiveCollecting {
  max: number;
  confidence: number;
  /** How many of the `wanted` trials of a case's next batch may run (its trials so far given). */
  trialsAllowed: (trials: readonly CaseResult[], wanted: number) => number;
}
