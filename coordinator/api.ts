import type { Case } from "../shared/case/case.ts";
import type { SuiteResult } from "../shared/result/result.ts";
import type { LoadedSuite } from "../shared/suite/suite.ts";
import { suiteFingerprint } from "../shared/suite/suite-fingerprint.ts";
import { silentLogger } from "../shared/logger.ts";
import { inlineEngine, looseCasesSuiteName, threadEngine } from "./library-config.ts";
import { storeTimeoutSeconds } from "./history/store/store-config.ts";
import { compileRunSettings, type RunSettingsInput } from "../shared/run-settings.ts";
import type { LibrarySettingsOptions } from "./run/settings-options.ts";
import { hooksOf, type SuiteHooks } from "../shared/hooks.ts";
import { evalFunctionRegistry, type EvalFunctions, type EvalFunctionsDefinition } from "../shared/case/eval-functions.ts";
import { selectCases, type SelectedCase, type Selector } from "./run/select.ts";
import { runInline, type InlineRunOptions } from "./local/inline.ts";
import type { ThreadRunOptions } from "./local/threads.ts";
import { runRecorded, type DbOption, type RunDescription } from "./history/recording/record-run.ts";
import { withRedactShapes } from "../shared/redaction/secrets.ts";
import { redactShapesProblem, type RedactShapes } from "../shared/redaction/shapes.ts";
import { ErrorCode, EvalfleetError } from "../shared/errors.ts";
import { optionKeys, rejectUnknownOptions } from "../shared/option-keys.ts";

/**
 * The library's runners, `runCases` and `runSuiteLocal`: the selection is made once, here; the
 * plain runner (local/inline.ts, local/threads.ts) runs it, and with `db` set the recording wraps
 * that runner from outside. The runners know nothing of the store, and the store nothing of them.
 */

/**
 * Record and replay (docs/iterating.md): each case's HTTP exchanges through `context.fetch` and the
 * built-in model clients, and its `context.tool` calls, as one JSON cassette per case and trial.
 */
export interface CassetteOptions {
  /** A folder to record every case's cassette in (the CLI's `--record DIR`). Default: none. */
  record?: string | null;
  /** A folder to answer every case's requests from, sending none (`--replay DIR`); a request its cassette lacks fails the case. Default: none. */
  replay?: string | null;
  /** With `replay`: send and record what a cassette lacks instead of failing the case (`--record-missing`). Default false. */
  recordMissing?: boolean | null;
}

/** Options of {@link runCases}. */
export interface RunCasesOptions extends Omit<InlineRunOptions, "settings" | "configureLimits" | "evalFunctions" | "concurrency">, LibrarySettingsOptions, Selector, CassetteOptions {
  /** Cases in flight at once. Default 1: Agno's sequential order (coordinator/library-config.ts). */
  concurrency?: number;
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
  /**
   * Which credential shapes (`ghp_...`, `sk-...`, JWTs, ...) are redacted from what the run writes
   * (the store, logs): `true` (default) every one, `false` none, or every one but those named
   * (`{ except: ["jwt"] }`). Known secrets are redacted whatever it says. `runSuiteLocal` takes
   * the suite's (`defineSuite({ redactShapes })`).
   */
  redactShapes?: RedactShapes | null;
}

/** Options of {@link runSuiteLocal}. */
export interface LocalRunOptions extends Omit<ThreadRunOptions, "settings" | "concurrency" | "threads" | "logLevel">, LibrarySettingsOptions, Selector, CassetteOptions {
  /** Cases in flight across the pool. Default 4 (coordinator/library-config.ts). */
  concurrency?: number;
  /** Worker threads. Default: the smaller of the CPU count and `concurrency`. */
  threads?: number;
  /** Level of the threads' loggers. Default `"warn"`. */
  logLevel?: string;
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

const ENGINE_KEYS = {
  onCaseStart: true, onCaseEnd: true, onRunEvent: true, concurrency: true, signal: true, runId: true, onStateChange: true,
  passThreshold: true, repeat: true, retries: true, limits: true, prices: true, budget: true,
  name: true, tag: true, set: true, evalSets: true, defaultTimeout: true, hookDefaults: true, maxOutputBytes: true, graceSeconds: true,
  logger: true, onWarning: true, runEvalFunctions: true, scoringMethod: true, maxTranscriptBytes: true, replayOf: true, cache: true,
  db: true, dbTimeout: true, casePassRate: true, confidence: true, record: true, replay: true, recordMissing: true,
} as const;

/** The known keys of {@link runCases}'s options. */
export const RUN_CASES_OPTION_KEYS: ReadonlySet<string> = optionKeys<RunCasesOptions>({
  ...ENGINE_KEYS, exitWhenBlocked: true, judgeModel: true, mcpClients: true, evalFunctions: true, suiteName: true, redactShapes: true,
});

/** The known keys of {@link runSuiteLocal}'s options. */
export const LOCAL_RUN_OPTION_KEYS: ReadonlySet<string> = optionKeys<LocalRunOptions>({
  ...ENGINE_KEYS, threads: true, threadMemoryMb: true, prestarted: true, logLevel: true, judgeModelName: true,
});

/**
 * Runs cases in the calling thread and returns their results in declaration order.
 * `concurrency` (default 1) keeps Agno's sequential order; results are ordered whatever it is.
 * An empty selection returns an empty, failing SuiteResult; nothing throws for a case's failure.
 * An unknown option throws a ConfigError naming the nearest known one, before anything runs.
 */
export async function runCases(cases: readonly Case[], options: RunCasesOptions = {}): Promise<SuiteResult> {
  rejectUnknownOptions("runCases", options, RUN_CASES_OPTION_KEYS);
  const shapesProblem = redactShapesProblem(options.redactShapes);
  if (shapesProblem) throw new EvalfleetError(ErrorCode.Usage, shapesProblem, { field: "redactShapes" });
  return withRedactShapes(options.redactShapes, () => runCasesWith(cases, options));
}

async function runCasesWith(cases: readonly Case[], options: RunCasesOptions): Promise<SuiteResult> {
  const evalFunctions = evalFunctionRegistry(options.evalFunctions);
  const settings = compileRunSettings(librarySettingsInput(options), { evalFunctions });
  const selected = selectCases(cases, options);
  const engine = inlineEngine(options);
  // Limits only reach this process's limiter when asked for: a call without them leaves it as it is.
  const run = (hooks: SuiteHooks, runId: string | null | undefined): Promise<SuiteResult> =>
    runInline(selected, { ...options, ...hooks, ...engine, runId, evalFunctions, settings, configureLimits: Boolean(options.limits) });
  return recordedWhenAsked(options, selected, run, () => ({
    suiteName: looseCasesSuiteName(options.suiteName),
    suitePath: null,
    fingerprint: suiteFingerprint(cases),
    selected,
    selector: options,
    config: { mode: "inline", concurrency: engine.concurrency },
    judgeModel: options.judgeModel ?? null,
    timeoutSeconds: settings.defaultTimeoutSeconds,
  }));
}

/**
 * Runs a loaded suite on a pool of worker threads (the embedded local mode): every thread imports
 * the suite file itself and runs cases by index and name. Results come back in declaration order.
 * An unknown option throws a ConfigError naming the nearest known one, before anything runs.
 */
export async function runSuiteLocal(suite: LoadedSuite, options: LocalRunOptions = {}): Promise<SuiteResult> {
  rejectUnknownOptions("runSuiteLocal", options, LOCAL_RUN_OPTION_KEYS);
  return withRedactShapes(suite.redactShapes, () => runSuiteLocalWith(suite, options));
}

async function runSuiteLocalWith(suite: LoadedSuite, options: LocalRunOptions): Promise<SuiteResult> {
  const settings = compileRunSettings(librarySettingsInput(options), suite);
  const selected = selectCases(suite.cases, { ...options, evalSets: options.evalSets ?? suite.evalSets ?? null });
  const engine = threadEngine(options);
  // The thread pool (piscina) loads on first use: every worker thread imports this module with the
  // public API its suite imports, and never starts a pool of its own.
  const run = async (hooks: SuiteHooks, runId: string | null | undefined): Promise<SuiteResult> => {
    const { runOnThreads } = await import("./local/threads.ts");
    return runOnThreads(suite, selected, { ...options, ...hooks, ...engine, runId, settings });
  };
  return recordedWhenAsked(options, selected, run, () => ({
    suiteName: suite.name,
    suitePath: suite.path,
    fingerprint: suite.fingerprint,
    selected,
    selector: options,
    config: { mode: "threads", concurrency: engine.concurrency, threads: options.threads ?? null, graceSeconds: options.graceSeconds ?? null, threadMemoryMb: options.threadMemoryMb ?? null },
    judgeModel: suite.judgeModel,
    timeoutSeconds: settings.defaultTimeoutSeconds,
  }));
}

/**
 * The library's options as a {@link RunSettingsInput}: each as given, none defaulted (the compile
 * step does that, as for the command line). Only a recorded run (`db`) keeps transcripts.
 */
export function librarySettingsInput(options: RunCasesOptions | LocalRunOptions): RunSettingsInput {
  return {
    defaultTimeoutSeconds: options.defaultTimeout,
    setupTimeoutSeconds: options.hookDefaults?.setup,
    teardownTimeoutSeconds: options.hookDefaults?.teardown,
    maxOutputBytes: options.maxOutputBytes,
    maxTranscriptBytes: options.maxTranscriptBytes,
    recorded: Boolean(options.db),
    repeat: options.repeat,
    retries: options.retries,
    passThreshold: options.passThreshold,
    casePassRate: options.casePassRate,
    confidence: options.confidence,
    evalFunctions: options.runEvalFunctions,
    scoringMethod: options.scoringMethod,
    limits: options.limits,
    prices: options.prices,
    budget: options.budget,
    graceSeconds: options.graceSeconds,
    record: options.record,
    replay: options.replay,
    recordMissing: options.recordMissing,
  };
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
  return runRecorded(describe(), hooksOf(options), { db: options.db, runId: options.runId, timeoutSeconds: storeTimeoutSeconds(options.dbTimeout), onWarning: options.onWarning ?? ((m) => logger.warn(m)) }, run);
}
