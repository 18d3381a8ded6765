import type { Case } from "../shared/case.ts";
import { mergeLimitTables } from "../shared/limits/limit-spec.ts";
import type { SuiteResult } from "../shared/result.ts";
import { suiteFingerprint, type LoadedSuite } from "../shared/suite.ts";
import { silentLogger } from "../shared/logger.ts";
import { DEFAULT_CONCURRENCY, DEFAULT_INLINE_CONCURRENCY, DEFAULT_MAX_TRANSCRIPT_KB, DEFAULT_SUITE_NAME, resolveDefaultTimeout } from "../shared/defaults.ts";
import { hooksOf, type SuiteHooks } from "../shared/hooks.ts";
import { checkRunEvalFunctions, evalFunctionRegistry, type EvalFunctions, type EvalFunctionsDefinition } from "../shared/eval-functions.ts";
import { checkScoringMethod, resolvePassThreshold } from "./run/policy.ts";
import { selectCases, type SelectedCase, type Selector } from "./run/select.ts";
import { runInline, type InlineRunOptions } from "./local/inline.ts";
import type { ThreadRunOptions } from "./local/threads.ts";
import { runRecorded, type DbOption, type RunDescription } from "./history/recording/record-run.ts";

/**
 * The library's runners, `runCases` and `runSuiteLocal`: the selection is made once, here; the
 * plain runner (local/inline.ts, local/threads.ts) runs it, and with `db` set the recording wraps
 * that runner from outside. The runners know nothing of the store, and the store nothing of them.
 */

/** Options of {@link runCases}. */
export interface RunCasesOptions extends Omit<InlineRunOptions, "defaultTimeout" | "evalFunctions">, Selector {
  /** Named evaluation functions the cases' `evalFunctions` (and `runEvalFunctions`) refer to: `{ tone: scorer }`. Default none. */
  evalFunctions?: EvalFunctionsDefinition | EvalFunctions | null;
  /** Evaluation functions that grade every selected case, after its own (the CLI's `--eval-function`). An unknown name throws a usage error. Default none. */
  runEvalFunctions?: readonly string[] | null;
  /** Per-case timeout in seconds when a case sets none. Default 120 (`DEFAULT_TIMEOUT_SECONDS`). */
  defaultTimeout?: number;
  /**
   * Record the run in a results store: a URL (`sqlite:PATH`, `postgres://...`; opened before the
   * first case, closed at the end) or a `ResultsStore` you opened and close. A store that cannot be
   * opened throws before any case runs; a failed write is a warning (`onWarning`), never a failed
   * case. Default: not recorded.
   */
  db?: DbOption | null;
  /** Bound on connecting to the store, each write and the final flush, in seconds. Default 10. */
  dbTimeout?: number;
  /** The suite name the run is recorded under (history, `--fail-on-regression`). Default `"evals"`. */
  suiteName?: string;
}

/** Options of {@link runSuiteLocal}. */
export interface LocalRunOptions extends Omit<ThreadRunOptions, "defaultTimeout">, Selector {
  /** Evaluation functions of the suite (`defineSuite({ evalFunctions })`) that grade every selected case, after its own. An unknown name throws a usage error. Default none. */
  runEvalFunctions?: readonly string[] | null;
  /** Per-case timeout in seconds for cases that set none; wins over the suite's. Default: the suite's, then 120. */
  defaultTimeout?: number | null;
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
 * Runs cases in the calling thread and returns their results in declaration order.
 * `concurrency` (default 1) keeps Agno's sequential order; results are ordered whatever it is.
 * An empty selection returns an empty, failing SuiteResult; nothing throws for a case's failure.
 */
export async function runCases(cases: readonly Case[], options: RunCasesOptions = {}): Promise<SuiteResult> {
  const evalFunctions = evalFunctionRegistry(options.evalFunctions);
  const runEvalFunctions = checkRunEvalFunctions(options.runEvalFunctions, evalFunctions);
  const scoringMethod = checkScoringMethod(options.scoringMethod);
  const selected = selectCases(cases, options);
  const defaultTimeout = resolveDefaultTimeout(options.defaultTimeout);
  const run = (hooks: SuiteHooks, runId: string | null | undefined): Promise<SuiteResult> => runInline(selected, { ...options, ...hooks, runId, defaultTimeout, evalFunctions, runEvalFunctions, scoringMethod, maxTranscriptBytes: transcriptBytesFor(options) });
  return recordedWhenAsked(options, selected, run, () => ({
    suiteName: options.suiteName ?? DEFAULT_SUITE_NAME,
    suitePath: null,
    fingerprint: suiteFingerprint(cases),
    selected,
    selector: options,
    config: { mode: "inline", concurrency: options.concurrency ?? DEFAULT_INLINE_CONCURRENCY },
    judgeModel: options.judgeModel ?? null,
    timeoutSeconds: defaultTimeout,
  }));
}

/**
 * Runs a loaded suite on a pool of worker threads (the embedded local mode): every thread imports
 * the suite file itself and runs cases by index and name. Results come back in declaration order.
 */
export async function runSuiteLocal(suite: LoadedSuite, options: LocalRunOptions = {}): Promise<SuiteResult> {
  const runEvalFunctions = checkRunEvalFunctions(options.runEvalFunctions, suite.evalFunctions ?? new Map());
  const scoringMethod = checkScoringMethod(options.scoringMethod);
  const selected = selectCases(suite.cases, { ...options, evalSets: options.evalSets ?? suite.evalSets ?? null });
  const defaultTimeout = resolveDefaultTimeout(options.defaultTimeout, suite.defaultTimeout);
  // The suite's threshold applies unless the caller gives one (null included: "none").
  const passThreshold = resolvePassThreshold(options.passThreshold, suite.passThreshold);
  // The thread pool (piscina) loads on first use: every worker thread imports this module with the
  // public API its suite imports, and never starts a pool of its own.
  const run = async (hooks: SuiteHooks, runId: string | null | undefined): Promise<SuiteResult> => {
    const { runOnThreads } = await import("./local/threads.ts");
    return runOnThreads(suite, selected, {
      ...options,
      ...hooks,
      runId,
      defaultTimeout,
      passThreshold,
      runEvalFunctions,
      scoringMethod,
      maxTranscriptBytes: transcriptBytesFor(options),
      limits: mergeLimitTables(suite.limits, options.limits),
      prices: { ...(suite.prices ?? {}), ...(options.prices ?? {}) },
    });
  };
  return recordedWhenAsked(options, selected, run, () => ({
    suiteName: suite.name,
    suitePath: suite.path,
    fingerprint: suite.fingerprint,
    selected,
    selector: options,
    config: { mode: "threads", concurrency: options.concurrency ?? DEFAULT_CONCURRENCY, threads: options.threads ?? null, graceSeconds: options.graceSeconds ?? null, threadMemoryMb: options.threadMemoryMb ?? null },
    judgeModel: suite.judgeModel,
    timeoutSeconds: defaultTimeout,
  }));
}

/** A recorded run keeps each case's transcript: the caller's bound, else {@link DEFAULT_MAX_TRANSCRIPT_KB} KiB; an unrecorded run none. */
function transcriptBytesFor(options: { db?: DbOption | null; maxTranscriptBytes?: number }): number {
  if (!options.db) return 0;
  return Math.max(0, Math.floor(options.maxTranscriptBytes ?? DEFAULT_MAX_TRANSCRIPT_KB * 1024));
}

/**
 * Runs `run` plainly, or recorded in `options.db` when it is set and something is selected (the
 * store is not opened for an empty selection): the run id is fixed first, `onCaseEnd` is wrapped,
 * the end is recorded.
 */
function recordedWhenAsked(
  options: SuiteHooks & { db?: DbOption | null; dbTimeout?: number; runId?: string | null; logger?: InlineRunOptions["logger"]; onWarning?: InlineRunOptions["onWarning"] },
  selected: readonly SelectedCase[],
  run: (hooks: SuiteHooks, runId: string | null | undefined) => Promise<SuiteResult>,
  describe: () => RunDescription,
): Promise<SuiteResult> {
  if (!options.db || selected.length === 0) return run(hooksOf(options), options.runId);
  const logger = options.logger ?? silentLogger();
  return runRecorded(describe(), hooksOf(options), { db: options.db, runId: options.runId, timeoutSeconds: options.dbTimeout, onWarning: options.onWarning ?? ((m) => logger.warn(m)) }, run);
}
