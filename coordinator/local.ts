import { availableParallelism } from "node:os";
import type { SuiteResult } from "../shared/result.ts";
import type { LoadedSuite } from "../shared/suite.ts";
import type { Logger } from "../shared/logger.ts";
import { callSyncHook, DEFAULT_TIMEOUT_SECONDS, resultShell } from "../worker/lifecycle.ts";
import pLimit from "p-limit";
import { CasePool, DEFAULT_GRACE_SECONDS } from "../worker/pool.ts";
import { runRepeated } from "../worker/repeats.ts";
import { positiveInt, runSelected, type EngineOptions } from "./engine.ts";
import { checkPassThreshold, checkRepeat } from "./run-policy.ts";
import { selectCases, type Selector } from "./select.ts";
import { runSuiteLocalRecorded } from "./store/library.ts";
import type { DbOption } from "./store/record-run.ts";

/** Options of {@link runSuiteLocal}. */
export interface LocalRunOptions extends EngineOptions, Selector {
  /** Per-case timeout in seconds for cases that set none; wins over the suite's. Default: the suite's, then 120. */
  defaultTimeout?: number | null;
  /** Cases in flight. Default 4. */
  concurrency?: number;
  /** Worker threads. Default: the smaller of the CPU count and `concurrency`. */
  threads?: number;
  /** Seconds past a deadline before a stuck thread is terminated. Default 5. */
  graceSeconds?: number;
  /** Per-thread heap limit in MB. Default: none (Node's own). */
  threadMemoryMb?: number | null;
  /** Level of the threads' loggers. Default `"warn"`. */
  logLevel?: string;
  logger?: Logger;
  /** Told each warning a thread reports (a failed MCP connection: once per thread). Default: logged. */
  onWarning?: ((message: string) => void) | null;
  /**
   * Record the run in a results store (see `runCases`): a URL (`sqlite:` alone means
   * `<suite folder>/.evalfleet/results.db`) or an open `ResultsStore`. Written from this thread,
   * never from the worker threads. Default: not recorded.
   */
  db?: DbOption | null;
  /** Bound on connecting to the store, each write and the final flush, in seconds. Default 10. */
  dbTimeout?: number;
}

/**
 * Runs a loaded suite on a pool of worker threads (the embedded local mode): every thread imports
 * the suite file itself and runs cases by index and name. Results come back in declaration order.
 */
export async function runSuiteLocal(suite: LoadedSuite, options: LocalRunOptions = {}): Promise<SuiteResult> {
  if (options.db) return runSuiteLocalRecorded(suite, options, runSuiteLocal);
  const concurrency = positiveInt(options.concurrency, "concurrency", 4);
  const threads = positiveInt(options.threads, "threads", Math.max(1, Math.min(availableParallelism(), concurrency)));
  const defaultTimeout = options.defaultTimeout ?? suite.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS;
  const selected = selectCases(suite.cases, { ...options, evalSets: options.evalSets ?? suite.evalSets ?? null });
  const repeat = checkRepeat(options.repeat);
  // The suite's threshold applies unless the caller gives one (null included: "none").
  const passThreshold = checkPassThreshold(options.passThreshold !== undefined ? options.passThreshold : (suite.passThreshold ?? null));
  if (selected.length === 0) return runSelected(selected, async () => never(), { ...options, repeat, passThreshold });
  // Repeats share the concurrency with every other run: the pool never holds more than `concurrency` runs.
  const runs = repeat > 1 ? pLimit(concurrency) : null;

  const pool = new CasePool({
    suitePath: suite.path,
    fingerprint: suite.fingerprint,
    threads,
    concurrency,
    graceSeconds: options.graceSeconds ?? DEFAULT_GRACE_SECONDS,
    threadMemoryMb: options.threadMemoryMb ?? null,
    logLevel: options.logLevel,
    logger: options.logger,
    onWarning: options.onWarning ?? null,
  });
  try {
    return await runSelected(
      selected,
      async (sel, ctx) => {
        const hookErrors: string[] = [];
        let hookOk = Boolean(ctx.onRunEvent);
        const once = async (): Promise<{ result: Awaited<ReturnType<typeof pool.run>> }> => ({
          result: await pool.run({
            index: sel.index,
            name: sel.case.name,
            defaultTimeout,
            timeoutSeconds: sel.case.resolveTimeout(defaultTimeout),
            hasTeardown: sel.case.teardown !== null,
            shell: () => resultShell(sel.case, sel.index),
            signal: ctx.signal,
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
