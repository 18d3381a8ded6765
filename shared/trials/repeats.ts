// runs in: both
import pLimit, { type LimitFunction } from "p-limit";
import type { CaseResult } from "../result/result.ts";
import { aggregateRepeats } from "./fold-repeats.ts";

/**
 * Running one case N times (`--repeat N`) wherever a case runs: inline, on the thread pool, or on
 * a distributed worker. Each run is a full lifecycle with its own session; the runs are folded
 * into one result (shared/trials/fold-repeats.ts).
 */

/** What one run gives: its result, and whether its thread crashed under it (see PoolOutcome). */
export interface RunOutcome {
  result: CaseResult;
  crashed?: string;
}

/** Options of {@link runRepeated}. */
export interface RepeatOptions {
  /** Bounds the runs in flight across every case of the run (shared), so repeats never exceed the concurrency. Default: unbounded. */
  limit?: LimitFunction | null;
  /** When it has fired, runs not yet started are not started: they are recorded as skipped. */
  signal?: AbortSignal;
  /** The identity of the case, for the runs that are not started. */
  shell: () => CaseResult;
}

const limits = new WeakMap<object, LimitFunction>();

/**
 * One limiter per owner (a worker's thread pool), created on first use with `size` slots: the
 * repeats of every case a worker runs share it, so the pool never gets more runs than it can
 * hold (piscina refuses tasks past its queue).
 */
export function sharedLimit(owner: object, size: number): LimitFunction {
  let limit = limits.get(owner);
  if (!limit) limits.set(owner, (limit = pLimit(Math.max(1, size))));
  return limit;
}

/** Why a run of a repeated case was not started. */
export const REPEAT_NOT_STARTED = "skipped: the run was cancelled before this repeat started";

/**
 * Runs a case `repeat` times (at once, within `limit`) and folds the runs into one outcome.
 * With `repeat` 1 the single run is returned as it is. `crashed` is the first crashed run's reason.
 */
export async function runRepeated(repeat: number, runOnce: (repeat: number) => Promise<RunOutcome>, options: RepeatOptions): Promise<RunOutcome> {
  if (repeat <= 1) return runOnce(1);
  const start = (r: number): Promise<RunOutcome> => {
    if (options.signal?.aborted) {
      const result = options.shell();
      result.skipped = true;
      result.addError(REPEAT_NOT_STARTED);
      return Promise.resolve({ result });
    }
    return runOnce(r);
  };
  const outcomes = await Promise.all(Array.from({ length: repeat }, (_, i) => (options.limit ? options.limit(() => start(i + 1)) : start(i + 1))));
  const crashed = outcomes.find((o) => o.crashed)?.crashed;
  const result = aggregateRepeats(outcomes.map((o) => o.result));
  return crashed ? { result, crashed } : { result };
}
