import { DEFAULT_JUDGE_TIMEOUT_SECONDS } from "../../shared/defaults.ts";

/**
 * The config module of an AgentAsJudgeEval's grader (criteria-grader.ts): the defaults of its
 * options that shared/defaults.ts holds, applied here once, so the grader reads compiled values.
 */

/** Bound on each judge call of a standalone AgentAsJudgeEval, in seconds: the caller's `timeoutSeconds`, else 120. */
export function judgeCallTimeoutSeconds(given: number | undefined): number {
  return given ?? DEFAULT_JUDGE_TIMEOUT_SECONDS;
}
