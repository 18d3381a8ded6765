import { traceparentOf } from "../../shared/tracing/spans.ts";
import type { SuiteResult } from "../../shared/result.ts";
import type { LoadedSuite } from "../../shared/suite.ts";
import type { Logger } from "../../shared/logger.ts";
import { DEFAULT_CONCURRENCY, DEFAULT_GRACE_SECONDS, defaultThreads, resolveHookTimeouts } from "../../shared/defaults.ts";
import { callSyncHook } from "../../shared/hooks.ts";
import { resultShell } from "../../shared/result-shell.ts";
import pLimit from "p-limit";
import { CasePool, type PrestartedThreads } from "../../worker/pool/case-pool.ts";
import { runRepeated } from "../../shared/repeats.ts";
import { withInfraRetries } from "../../shared/infra-retry.ts";
import { configureProcessLimits } from "../../shared/limits/process-limiter.ts";
import { positiveInt, runSelected, type EngineOptions } from "../run/dispatch-loop.ts";
import { checkPassThreshold, checkRepeat } from "../run/policy.ts";
import type { SelectedCase } from "../run/select.ts";
import type { ScoringMethod } from "../../shared/datasets/expected-output-methods.ts";
import type { RunOutput } from "../../shared/agent.ts";
import type { ThreadCache } from "../../shared/wire/thread.ts";

/**
 * The thread-pool runner (the embedded local mode): every thread imports the suite file itself and
 * runs cases by index and name. It is handed the selected cases and knows nothing of the results
 * store (the public `runSuiteLocal` in coordinator/api.ts wraps it with recording from outside).
 */

/** Options of {@link runOnThreads}. */
export interface ThreadRunOptions extends EngineOptions {
  /** Per-case timeout in seconds for cases that set none, already resolved (`resolveDefaultTimeout`). */
  defaultTimeout: number;
  /** Setup and teardown bounds in seconds for cases that set none, resolved (`resolveHookTimeouts`). Default 60 each. */
  hookDefaults?: { setup: number; teardown: number };
  /** Largest output kept on a result, in bytes. Default 256 KiB. */
  maxOutputBytes?: number;
  /** Cases in flight. Default {@link DEFAULT_CONCURRENCY}. */
  concurrency?: number;
  /** Worker threads. Default: {@link defaultThreads} of `concurrency`. */
  threads?: number;
  /** Seconds past a deadline before a stuck thread is terminated. Default {@link DEFAULT_GRACE_SECONDS}. */
  graceSeconds?: number;
  /** Per-thread heap limit in MB. Default: none (Node's own). */
  threadMemoryMb?: number | null;
  /** Threads started while the suite loaded (coordinator/cli/local-run.ts), used when they fit. Default: the pool starts its own. */
  prestarted?: PrestartedThreads | null;
  /** Level of the threads' loggers. Default `"warn"`. */
  logLevel?: string;
  logger?: Logger;
  /** Told each warning a thread reports (a failed MCP connection: once per thread). Default: logged. */
  onWarning?: ((message: string) => void) | null;
  /** Evaluation functions of the suite that grade every case, after its own, already checked against the suite's. Default none. */
  runEvalFunctions?: readonly string[] | null;
  /** A scoring method that replaces every expected-output check's own (`--scoring-method`). Default none. */
  scoringMethod?: ScoringMethod | null;
  /** A regrade's `--judge-model`: the default judge with this model grades the cases that name no judge (instead of the suite's). Default: the suite's. */
  judgeModelName?: string | null;
  /** Keep each case's transcript within this many bytes (a recorded run, `--max-transcript-kb`). Default 0: none. */
  maxTranscriptBytes?: number;
  /**
   * A regrade: each selected case's stored output, graded instead of running its agent (setup and
   * teardown do not run). Read one case at a time, as the case starts. Default: the agents run.
   */
  replayOf?: ((selected: SelectedCase) => Promise<RunOutput>) | null;
  /** The response cache of the built-in model clients (`--cache`): a folder (`kind: "local"`). Default none. */
  cache?: ThreadCache | null;
}

/** Runs the selected cases of a loaded suite on a pool of worker threads. Results come back in declaration order. */
export async function runOnThreads(suite: LoadedSuite, selected: readonly SelectedCase[], options: ThreadRunOptions): Promise<SuiteResult> {
  const concurrency = positiveInt(options.concurrency, "concurrency", DEFAULT_CONCURRENCY);
  const threads = positiveInt(options.threads, "threads", defaultThreads(concurrency));
  const repeat = checkRepeat(options.repeat);
  const passThreshold = checkPassThreshold(options.passThreshold);
  if (selected.length === 0) return runSelected(selected, async () => never(), { ...options, repeat, passThreshold });
  // Repeats share the concurrency with every other run: the pool never holds more than `concurrency` runs.
  const runs = repeat > 1 ? pLimit(concurrency) : null;

  const pool = new CasePool({
    suitePath: suite.path,
    suiteModule: suite.module ?? null,
    fingerprint: suite.fingerprint,
    threads,
    concurrency,
    graceSeconds: options.graceSeconds ?? DEFAULT_GRACE_SECONDS,
    threadMemoryMb: options.threadMemoryMb ?? null,
    prestarted: options.prestarted ?? null,
    logLevel: options.logLevel,
    logger: options.logger,
    onWarning: options.onWarning ?? null,
  });
  const hookDefaults = options.hookDefaults ?? resolveHookTimeouts({});
  // The main thread's limiter serves every thread's model calls (docs/providers.md).
  if (options.limits) configureProcessLimits(options.limits);
  try {
    return await runSelected(
      selected,
      async (sel, ctx) => {
        const hookErrors: string[] = [];
        let hookOk = Boolean(ctx.onRunEvent);
        const replay = options.replayOf ? await options.replayOf(sel) : null;
        const once = (repeatIndex: number): ReturnType<typeof pool.runOutcome> =>
          withInfraRetries(() => onePoolRun(repeatIndex), { retries: options.retries ?? 0, signal: ctx.signal, timeoutSeconds: sel.case.resolveTimeout(options.defaultTimeout) });
        const onePoolRun = async (repeatIndex: number): Promise<{ result: Awaited<ReturnType<typeof pool.run>> }> => ({
          result: await pool.run({
            index: sel.index,
            name: sel.case.name,
            defaultTimeout: options.defaultTimeout,
            timeoutSeconds: sel.case.resolveTimeout(options.defaultTimeout),
            hookDefaults,
            hookTimeouts: sel.case.resolveHookTimeouts(hookDefaults),
            ...(options.maxOutputBytes ? { maxOutputBytes: options.maxOutputBytes } : {}),
            hasTeardown: sel.case.teardown !== null,
            shell: () => resultShell(sel.case, sel.index),
            signal: ctx.signal,
            runEvalFunctions: options.runEvalFunctions ?? null,
            scoringMethod: options.scoringMethod ?? null,
            // The active span (the run's, when tracing is on): the case's span on its thread goes under it.
            traceparent: traceparentOf(),
            maxTranscriptBytes: options.maxTranscriptBytes ?? 0,
            ...(replay ? { replay } : {}),
            ...(options.judgeModelName ? { judgeModel: options.judgeModelName } : {}),
            repeat: repeatIndex,
            cache: options.cache ?? null,
            onEvent: ctx.onRunEvent
              ? (event) => {
                  if (hookOk) hookOk = callSyncHook("onRunEvent", () => ctx.onRunEvent!(sel.case, event as never), (m) => hookErrors.push(m));
                }
              : undefined,
          }),
        });
        const { result } = await runRepeated(repeat, once, { limit: runs, signal: ctx.signal, shell: () => resultShell(sel.case, sel.index) });
        for (const m of hookErrors) result.addError(m);
        return result;
      },
      { ...options, concurrency, repeat, passThreshold },
    );
  } finally {
    await pool.destroy();
  }
}

function never(): never {
  throw new Error("no case is selected, so none can run");
}
