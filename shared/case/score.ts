// runs in: both
import type { CaseInput, RunOutput } from "./agent.ts";
import { EvalfleetError, ErrorCode } from "../errors.ts";
import type { ScoreData } from "../wire/result-data.ts";

/**
 * The custom-scorer contract: the {@link Scorer} a case's `scorer` option implements, and the
 * {@link Score} verdict it returns (its shape, `ScoreData`, is the case result's `score`, written
 * once in shared/wire/result-data.ts). Not to be confused with the two other kinds of scoring:
 * running a case's scorer inside the lifecycle is worker/runtime/checks/scorer.ts, and the
 * `expected_output` comparison methods of data-driven cases (`exact`, `contains`, ...) are
 * shared/datasets/expected-output-methods.ts, which have nothing to do with a Scorer.
 */

/** A validated scorer verdict: `new Score({ value: 1.4, ... })` throws `Score.value must be in [0, 1], got 1.4`. */
export class Score implements ScoreData {
  readonly value: number;
  readonly passed: boolean;
  readonly reason: string | null;
  readonly detail: Record<string, unknown> | null;

  constructor(data: ScoreData) {
    const value = data.value;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 1) {
      throw new ScoreRangeError(`Score.value must be in [0, 1], got ${String(value)}`);
    }
    this.value = value;
    this.passed = Boolean(data.passed);
    this.reason = data.reason ?? null;
    this.detail = data.detail ?? null;
    Object.freeze(this);
  }

  /** Accepts a Score or a plain {@link ScoreData} (validated). */
  static from(data: ScoreData | Score): Score {
    return data instanceof Score ? data : new Score(data);
  }
}

/** Thrown for a Score value outside [0, 1]. Named RangeError, the JavaScript counterpart of Python's ValueError here. */
export class ScoreRangeError extends EvalfleetError {
  override readonly name = "RangeError";
  constructor(message: string) {
    super(ErrorCode.ScoreInvalid, message);
  }
}

/**
 * Scores a completed run in code. Runs inside the case timeout, only for gradeable runs;
 * a team case receives the whole team output.
 */
export interface Scorer {
  /** `context.caseName` and `context.input` say which case it grades (set by the runner; optional for callers). */
  score(run: RunOutput, expected: unknown, context: { signal: AbortSignal; caseName?: string; input?: CaseInput }): Promise<ScoreData | Score> | ScoreData | Score;
}
