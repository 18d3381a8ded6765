import type { RunOutput } from "./agent.ts";
import { EvalfleetError, ErrorCode } from "./errors.ts";

/** A scorer's verdict. Built through {@link Score}, which validates `value`. */
export interface ScoreData {
  /** In [0, 1] inclusive. */
  value: number;
  passed: boolean;
  reason?: string | null;
  /** Free-form, kept on the CaseResult but not in the JSON report. */
  detail?: Record<string, unknown> | null;
}

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
  score(run: RunOutput, expected: unknown, context: { signal: AbortSignal }): Promise<ScoreData | Score> | ScoreData | Score;
}
