import { traceparentOf } from "../../shared/tracing/spans.ts";
import type { SuiteResult } from "../../shared/result/result.ts";
import type { LoadedSuite } from "../../shared/suite/suite.ts";
import type { Logger } from "../../shared/logger.ts";
import { callSyncHook } from "../../shared/hooks.ts";
import { resultShell } from "../../shared/result/result-shell.ts";
import pLimit from "p-limit";
import { CasePool, type PrestartedThreads } from "../../worker/pool/case-pool.ts";
import { executeCase } from "../../shared/trials/execute-case.ts";
import { casePassRateOf } from "../../shared/trials/case-pass-rule.ts";
import { configureProcessLimits } from "../../shared/providers/process-limiter.ts";
import { positiveInt, runSelected, type EngineOptions } from "../run/dispatch-loop.ts";
import { engineSettings, type RunSettingsFields } from "../run/settings-options.ts";
import type { RunSettings } from "../../shared/run-settings.ts";
import type { SelectedCase } from "../run/select.ts";
import type { RunOutput } from "../../shared/case/agent.ts";
import type { ThreadCache } from "../../shared/wire/thread.ts";

/**
 * The thread-pool runner (the embedded local mode): every thread imports the suite file itself and
 * runs cases by index and name. It is handed the selected cases and knows nothing of the results
 * store (the public `runSuiteLocal` in coordinator/api.ts wraps it with recording from outside).
 */

/** Options of {@link runOnThreads}: the run's compiled settings, and what only this runner needs. */
export interface ThreadRunOptions extends Omit<EngineOptions, RunSettingsFields> {
  /** The run's compiled settings (compileRunSettings): timeouts, bounds, repeats, retries, threshold, limits, prices, budget, grace. */
  settings: RunSettings;
  /** Cases in flight across the pool, >= 1 (compiled by the caller: coordinator/library-config.ts, the CLI's config). */
  concurrency: number;
  /** Worker threads, >= 1 (compiled as `concurrency`: by default the smaller of the CPUs and `concurrency`). */
  threads: number;
  /** Per-thread heap limit in MB. Default: none (Node's own). */
  threadMemoryMb?: number | null;
  /** Threads started while the suite loaded (coordinator/cli/local-run.ts), used when they fit. Default: the pool starts its own. */
  prestarted?: PrestartedThreads | null;
  /** Level of the threads' loggers (compiled as `concurrency`; `--log-level`). */
  logLevel: string;
  logger?: Logger;
  /** Told each warning a thread reports (a failed MCP connection: once per thread). Default: logged. */
  onWarning?: ((message: string) => void) | null;
  /** A regrade's `--judge-model`: the default judge with this model grades the cases that name no judge (instead of the suite's). Default: the suite's. */
  judgeModelName?: string | null;
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
  const concurrency = positiveInt(options.concurrency, "concurrency");
  const threads = positiveInt(options.threads, "threads");
  const { settings } = options;
  if (selected.length === 0) return runSelected(selected, async () => never(), { ...options, ...engineSettings(settings) });
  // Repeats share the concurrency with every other run: the pool never holds more than `concurrency` runs.
  const runs = settings.repeatMax > 1 ? pLimit(concurrency) : null;

  const pool = new CasePool({
    suitePath: suite.path,
    suiteModule: suite.module ?? null,
    fingerprint: suite.fingerprint,
    threads,
    concurrency,
    graceMs: settings.graceMs,
    threadMemoryMb: options.threadMemoryMb ?? null,
    prestarted: options.prestarted ?? null,
    logLevel: options.logLevel,
    logger: options.logger,
    onWarning: options.onWarning ?? null,
  });
  const hookDefaults = { setup: settings.setupTimeoutSeconds, teardown: settings.teardownTimeoutSeconds };
  // The main thread's limiter serves every thread's model calls (docs/providers.md).
  configureProcessLimits(settings.limits);
  try {
    return await runSelected(
      selected,
      async (sel, ctx) => {
        const hookErrors: string[] = [];
        let hookOk = Boolean(ctx.onRunEvent);
        const replay = options.replayOf ? await options.replayOf(sel) : null;
        const timeoutSeconds = sel.case.resolveTimeout(settings.defaultTimeoutSeconds);
        const onePoolRun = async (repeatIndex: number): Promise<{ result: Awaited<ReturnType<typeof pool.run>> }> => ({
          result: await pool.run({
            index: sel.index,
            name: sel.case.name,
            defaultTimeout: settings.defaultTimeoutSeconds,
            timeoutSeconds,
            hookDefaults,
            hookTimeouts: sel.case.resolveHookTimeouts(hookDefaults),
            maxOutputBytes: settings.maxOutputBytes,
            hasTeardown: sel.case.teardown !== null,
            shell: () => resultShell(sel.case, sel.index),
            signal: ctx.signal,
            runEvalFunctions: settings.evalFunctions,
            scoringMethod: settings.scoringMethod,
            // The active span (the run's, when tracing is on): the case's span on its thread goes under it.
            traceparent: traceparentOf(),
            maxTranscriptBytes: settings.maxTranscriptBytes,
            ...(replay ? { replay } : {}),
            ...(options.judgeModelName ? { judgeModel: options.judgeModelName } : {}),
            repeat: repeatIndex,
            cache: options.cache ?? null,
            cassette: settings.cassette,
            onEvent: ctx.onRunEvent
              ? (event) => {
                  if (hookOk) hookOk = callSyncHook("onRunEvent", () => ctx.onRunEvent!(sel.case, event as never), (m) => hookErrors.push(m));
                }
              : undefined,
          }),
        });
        const shell = (): ReturnType<typeof resultShell> => resultShell(sel.case, sel.index);
        const passRate = casePassRateOf(sel.case.passRate, settings.casePassRate);
        const { result } = await executeCase(settings, onePoolRun, { timeoutSeconds, signal: ctx.signal, limit: runs, shell, passRate, trialsAllowed: ctx.trialsAllowed });
        for (const m of hookErrors) result.addError(m);
        return result;
      },
      { ...options, ...engineSettings(settings), concurrency },
    );
  } finally {
    await pool.destroy();
  }
}

function never(): never {
  throw new Error("no case is selected, so none can run");
}
