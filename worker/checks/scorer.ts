import type { RunOutput } from "../../shared/agent.ts";
import { Score, type Scorer } from "../../shared/score.ts";

/**
 * Runs a case's scorer and validates what it returns. Throws what the scorer throws (the
 * lifecycle records it as `scorer: ...`); a value outside [0, 1] throws a RangeError.
 */
export async function runScorer(scorer: Scorer, run: RunOutput, expected: unknown, signal: AbortSignal): Promise<Score> {
  const value = await scorer.score(run, expected, { signal });
  if (value === null || typeof value !== "object") {
    throw new TypeError(`scorer returned ${value === null ? "null" : typeof value}, expected a Score {value, passed, reason?}`);
  }
  return Score.from(value);
}
