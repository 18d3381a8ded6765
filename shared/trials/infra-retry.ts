// runs in: both
import { infraRetryDelay } from "../result/error-kind.ts";
import type { RunOutcome } from "./repeats.ts";

/**
 * `--retries N`: running a case again when its failure was the infrastructure's (`error_kind:
 * "infra"`: a provider's 429 or 5xx after the client's retries, a lost connection, a judge with no
 * result), wherever a case runs (inline, on the thread pool, on a distributed worker). A failed
 * check, an agent's error or a timeout is never retried. Waits 1 s doubling, capped at 30 s and at
 * the case's deadline (its first start plus its timeout); a cancelled run stops waiting at once.
 */

/** Options of {@link withInfraRetries}. */
export interface InfraRetryOptions {
  /** Retries after the first execution (`--retries`). 0 runs the case once. */
  retries: number;
  /** When it fires, no retry starts (the last result stands). */
  signal?: AbortSignal;
  /** The case's timeout in seconds: no retry waits past its first start plus this. Default: no bound. */
  timeoutSeconds?: number | null;
  /** Told before each wait (for logs and metrics). */
  onRetry?: (info: { retry: number; delayMs: number; error: string | null }) => void;
  /** For tests: the clock (epoch ms) and the wait. */
  now?: () => number;
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<boolean>;
}

/**
 * Runs `runOnce` and runs it again while its result failed for the infrastructure's sake and
 * retries are left. The result's `attempts` counts every execution (each execution's own count:
 * a thread pool's re-runs of a collateral case are executions too). A crashed outcome is returned
 * as it is: a distributed worker hands such a case back for redelivery.
 */
export async function withInfraRetries(runOnce: () => Promise<RunOutcome>, options: InfraRetryOptions): Promise<RunOutcome> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? abortableWait;
  const started = now();
  const deadline = options.timeoutSeconds !== undefined && options.timeoutSeconds !== null ? started + options.timeoutSeconds * 1000 : null;
  let attempts = 0;
  for (let retry = 1; ; retry++) {
    const outcome = await runOnce();
    attempts += Math.max(1, outcome.result.attempts);
    outcome.result.attempts = attempts;
    if (outcome.crashed || retry > options.retries || options.signal?.aborted || outcome.result.failureKind !== "infra") return outcome;
    const delayMs = infraRetryDelay(retry, now(), deadline);
    if (delayMs === null) return outcome;
    options.onRetry?.({ retry, delayMs, error: outcome.result.error });
    if (!(await sleep(delayMs, options.signal))) return outcome;
  }
}

/** Waits `ms`; resolves false at once when `signal` fires (true when the wait ran out). */
export function abortableWait(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
