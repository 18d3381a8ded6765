import type { RunOutput } from "../../../shared/case/agent.ts";
import type { Case } from "../../../shared/case/case.ts";
import type { ReliabilityDetails } from "../../../shared/wire/result-data.ts";
import { evaluateTrajectory, type TrajectoryOptions } from "./trajectory.ts";

/**
 * The reliability check: were the expected tools actually executed, with the expected arguments,
 * in the expected order, and none of the forbidden ones? Pure; no I/O (spec H, extended by the
 * trajectory check: ./trajectory.ts).
 *
 * Evidence is executions, not requests: a refused or errored call does not count, and the
 * missing entry says so. For a team, every member's executions count, at every depth.
 */

export { isClean, REFUSED_ANNOTATION } from "./trajectory.ts";

/**
 * Options of {@link evaluateReliability}: Agno's two (`expectedToolCalls` as names, and
 * `allowAdditionalToolCalls`: `true` subset matching, `false` strict matching), and the
 * trajectory check's (matchers, `toolCallOrder`, `forbiddenToolCalls`, `maxToolCalls`,
 * `toolCallsMustSucceed`).
 */
export type ReliabilityOptions = TrajectoryOptions;

/** Grades the tool evidence of one output: Agno's lists, plus the reason and the trajectory step by step. */
export function evaluateReliability(output: RunOutput, options: ReliabilityOptions): ReliabilityDetails {
  return evaluateTrajectory(output, options);
}

/**
 * The reliability check's options for a case, or null when the case has no such check (no
 * expected calls, no forbidden calls, no bound).
 */
export function reliabilityOptions(c: Case): ReliabilityOptions | null {
  const expected = c.expectedToolCalls && c.expectedToolCalls.length > 0 ? c.expectedToolCalls : null;
  // `?? null`: a case built by an older copy of evalfleet has none of the trajectory options.
  const maxToolCalls = c.maxToolCalls ?? null;
  if (!expected && !c.forbiddenToolCalls && maxToolCalls === null && !c.toolCallsMustSucceed) return null;
  return {
    expectedToolCalls: expected ?? [],
    allowAdditionalToolCalls: c.allowAdditionalToolCalls,
    toolCallOrder: c.toolCallOrder ?? "any",
    forbiddenToolCalls: c.forbiddenToolCalls ?? null,
    maxToolCalls,
    toolCallsMustSucceed: Boolean(c.toolCallsMustSucceed),
  };
}
