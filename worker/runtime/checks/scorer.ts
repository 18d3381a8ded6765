import type { CaseInput, RunOutput } from "../../../shared/case/agent.ts";
import { Score, type Scorer } from "../../../shared/case/score.ts";

/**
 * The scorer check: runs a case's custom `scorer` (user code implementing the `Scorer` contract
 * of shared/case/score.ts) and validates what it returns; its verdict is the case's `score`, reported
 * as `score_value`/`score_passed`/`score_reason`. Throws what the scorer throws (the lifecycle
 * records it as `scorer: ...`); a value outside [0, 1] throws a RangeError. Unrelated to the
 * `expected_output` methods (shared/datasets/expected-output-methods.ts, checked by
 * expected-output.ts), which need no user code.
 */
export async function runScorer(scorer: Scorer, run: RunOutput, expected: unknown, signal: AbortSignal, about: { caseName?: string; input?: CaseInput } = {}): Promise<Score> {
  const value = await scorer.score(run, expected, { signal, ...about });
  if (value === null || typeof value !== "object") {
    throw new TypeError(`scorer returned ${value === null ? "null" : typeof value}, expected a Score {value, passed, reason?}`);
  }
  return Score.from(value);
}
