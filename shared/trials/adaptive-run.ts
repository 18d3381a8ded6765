// runs in: both
import type { LimitFunction } from "p-limit";
import type { CaseResult } from "../result/result.ts";
import { adaptiveMarkOf, adaptiveStep, passedTrials, type AdaptiveRule } from "./adaptive-repeats.ts";
import { aggregateRepeats } from "./fold-repeats.ts";
import { REPEAT_NOT_STARTED, type RunOutcome } from "./repeats.ts";

/**
 * Adaptive repeats where a case runs in one process (the inline and thread runners): MIN trials
 * at once, then one batch at a time as the stopping rule asks (shared/trials/adaptive-repeats.ts),
 * each batch's trials at once within the run's limit. The trials are folded into one result
 * marked with why the case stopped. A distributed run plans the same batches in its coordinator
 * (coordinator/distributed/collect.ts), each trial its own delivery.
 */

/** Options of {@link runAdaptive}. */
export interface AdaptiveRunOptions {
  /** Bounds the runs in flight across every case of the run; null: unbounded. */
  limit: LimitFunction | null;
  /** When it has fired, no further batch starts (and a batch's trials not started are skipped). */
  signal: AbortSignal;
  /** The identity of the case, for trials that are not started. */
  shell: () => CaseResult;
  /**
   * Asked before each batch past MIN with the trials so far and the batch the rule wants: how
   * many of them may run (a budget's share); 0 stops the case where it is (`adaptive_stop:
   * stopped`). Default: all of them.
   */
  trialsAllowed?: ((trials: readonly CaseResult[], wanted: number) => number) | null;
}

/**
 * Runs a case under `rule` (its MIN, MAX, pass rule and confidence) and folds its trials into
 * one outcome; `runOnce(trial)` executes trial `trial` (1-based). `crashed` is the first crashed
 * trial's reason.
 */
export async function runAdaptive(rule: AdaptiveRule, runOnce: (trial: number) => Promise<RunOutcome>, options: AdaptiveRunOptions): Promise<RunOutcome> {
  const outcomes: RunOutcome[] = [];
  const start = (trial: number): Promise<RunOutcome> => {
    if (options.signal.aborted) {
      const result = options.shell();
      result.skipped = true;
      result.addError(REPEAT_NOT_STARTED);
      return Promise.resolve({ result });
    }
    return runOnce(trial);
  };
  let next = rule.min;
  while (next > 0) {
    const from = outcomes.length + 1;
    const batch = await Promise.all(Array.from({ length: next }, (_, i) => (options.limit ? options.limit(() => start(from + i)) : start(from + i))));
    outcomes.push(...batch);
    // A cancel (or a run that ended cancelled) stops the case with what it has.
    if (options.signal.aborted || batch.some((o) => o.result.skipped || o.result.runStatus === "cancelled")) break;
    const step = adaptiveStep(passedTrials(outcomes.map((o) => o.result)), outcomes.length, rule);
    if (step.done) break;
    next = options.trialsAllowed ? Math.min(step.next, options.trialsAllowed(outcomes.map((o) => o.result), step.next)) : step.next;
  }
  const results = outcomes.map((o) => o.result);
  const result = aggregateRepeats(results);
  result.adaptive = adaptiveMarkOf(results, rule);
  const crashed = outcomes.find((o) => o.crashed)?.crashed;
  return crashed ? { result, crashed } : { result };
}
