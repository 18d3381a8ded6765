// runs in: both
import type { LimitFunction } from "p-limit";
import type { CaseResult } from "../result/result.ts";
import type { RunSettings } from "../run-settings.ts";
import { withInfraRetries, type InfraRetryOptions } from "./infra-retry.ts";
import { runRepeated, type RunOutcome } from "./repeats.ts";
import { runAdaptive, type AdaptiveRunOptions } from "./adaptive-run.ts";

/**
 * How one selected case is executed, wherever it runs (the inline runner, the thread runner, a
 * distributed worker's run server): `repeat` runs of it (`--repeat N`), each run again while its
 * failure is the infrastructure's and `retries` are left (`--retries N`), folded into one
 * outcome; with `repeatMax` above `repeat`, adaptive repeats (shared/trials/adaptive-run.ts).
 * The one place this composition is written, so the three runners cannot diverge.
 */

/** The run settings {@link executeCase} reads (a compiled {@link RunSettings} fits; so does a run manifest's). */
export type ExecuteCaseSettings = Pick<RunSettings, "repeat" | "retries"> & Partial<Pick<RunSettings, "repeatMax" | "adaptiveConfidence">>;

/** What {@link executeCase} needs of the case and its runner. */
export interface ExecuteCaseOptions {
  /** The case's own timeout in seconds, resolved (`CaseBounds.timeoutSeconds`): no retry waits past its first start plus this. */
  timeoutSeconds: number;
  /** Fires on a cancel: no repeat and no retry starts after it (the results so far stand). */
  signal: AbortSignal;
  /** Bounds the runs in flight across every case of the run, so repeats never exceed the concurrency; null: unbounded. */
  limit: LimitFunction | null;
  /** The case's result shell, for repeats that are not started (a cancel). */
  shell: () => CaseResult;
  /** Adaptive repeats: the case's pass rule (its own `passRate`, else the run's `casePassRate`). Default 1. */
  passRate?: number;
  /** Adaptive repeats: how many of a batch past MIN may run; 0 stops the case (a spent budget, a stop). Default: all. */
  trialsAllowed?: AdaptiveRunOptions["trialsAllowed"];
  /** Told before each infra retry's wait (logs, metrics). Default: nobody. */
  onRetry?: InfraRetryOptions["onRetry"];
  /** For tests: the retries' clock (epoch ms) and wait. Default: the real ones. */
  now?: InfraRetryOptions["now"];
  sleep?: InfraRetryOptions["sleep"];
}

/**
 * Runs one case as the run's settings say: `settings.repeat` runs (within `options.limit`), each
 * wrapped in `settings.retries` infra retries, folded into one outcome (a single run is returned
 * as it is). `runOnce(repeat)` executes the case once, `repeat` counting from 1; it is called again
 * for each retry of that repeat. The outcome's `crashed` is the first crashed run's reason.
 */
export function executeCase(settings: Readonly<ExecuteCaseSettings>, runOnce: (repeat: number) => Promise<RunOutcome>, options: Readonly<ExecuteCaseOptions>): Promise<RunOutcome> {
  const retry: InfraRetryOptions = {
    retries: settings.retries,
    signal: options.signal,
    timeoutSeconds: options.timeoutSeconds,
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
  };
  const once = (repeat: number): Promise<RunOutcome> => withInfraRetries(() => runOnce(repeat), retry);
  const max = settings.repeatMax ?? settings.repeat;
  if (max > settings.repeat) {
    const rule = { min: settings.repeat, max, passRate: options.passRate ?? 1, confidence: settings.adaptiveConfidence ?? Number.NaN };
    return runAdaptive(rule, once, { limit: options.limit, signal: options.signal, shell: options.shell, trialsAllowed: options.trialsAllowed ?? null });
  }
  return runRepeated(settings.repeat, once, { limit: options.limit, signal: options.signal, shell: options.shell });
}
