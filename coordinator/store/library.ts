import type { Case } from "../../shared/case.ts";
import type { SuiteResult } from "../../shared/result.ts";
import { suiteFingerprint, type LoadedSuite } from "../../shared/suite.ts";
import { silentLogger } from "../../shared/logger.ts";
import { DEFAULT_TIMEOUT_SECONDS } from "../../worker/lifecycle.ts";
import type { RunCasesOptions } from "../run-cases.ts";
import type { LocalRunOptions } from "../local.ts";
import { selectCases } from "../select.ts";
import { runRecorded } from "./record-run.ts";
import type { SuiteHooks } from "../engine.ts";

/**
 * The `db` option of `runCases` and `runSuiteLocal`: the same run, recorded. Nothing is recorded
 * (and the store is not opened) when nothing is selected.
 */

/** `runCases(cases, options)` with `options.db` set. */
export async function runCasesRecorded(
  cases: readonly Case[],
  options: RunCasesOptions,
  inner: (cases: readonly Case[], options: RunCasesOptions) => Promise<SuiteResult>,
): Promise<SuiteResult> {
  const rest: RunCasesOptions = { ...options, db: null };
  const selected = selectCases(cases, options);
  if (selected.length === 0) return inner(cases, rest);
  const logger = options.logger ?? silentLogger();
  return runRecorded(
    {
      suiteName: options.suiteName ?? "evals",
      suitePath: null,
      fingerprint: suiteFingerprint(cases),
      selected,
      selector: options,
      config: { mode: "inline", concurrency: options.concurrency ?? 1 },
      judgeModel: options.judgeModel ?? null,
      timeoutSeconds: options.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS,
    },
    hooksOf(options),
    { db: options.db!, runId: options.runId, timeoutSeconds: options.dbTimeout, onWarning: options.onWarning ?? ((m) => logger.warn(m)) },
    (hooks, runId) => inner(cases, { ...rest, ...hooks, runId }),
  );
}

/** `runSuiteLocal(suite, options)` with `options.db` set. */
export async function runSuiteLocalRecorded(
  suite: LoadedSuite,
  options: LocalRunOptions,
  inner: (suite: LoadedSuite, options: LocalRunOptions) => Promise<SuiteResult>,
): Promise<SuiteResult> {
  const rest: LocalRunOptions = { ...options, db: null };
  const selected = selectCases(suite.cases, { ...options, evalSets: options.evalSets ?? suite.evalSets ?? null });
  if (selected.length === 0) return inner(suite, rest);
  const logger = options.logger ?? silentLogger();
  return runRecorded(
    {
      suiteName: suite.name,
      suitePath: suite.path,
      fingerprint: suite.fingerprint,
      selected,
      selector: options,
      config: { mode: "threads", concurrency: options.concurrency ?? 4, threads: options.threads ?? null, graceSeconds: options.graceSeconds ?? null, threadMemoryMb: options.threadMemoryMb ?? null },
      judgeModel: suite.judgeModel,
      timeoutSeconds: options.defaultTimeout ?? suite.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS,
    },
    hooksOf(options),
    { db: options.db!, runId: options.runId, timeoutSeconds: options.dbTimeout, onWarning: options.onWarning ?? ((m) => logger.warn(m)) },
    (hooks, runId) => inner(suite, { ...rest, ...hooks, runId }),
  );
}

/** Only the presentation hooks of a runner's options. */
function hooksOf(options: SuiteHooks): SuiteHooks {
  return { onCaseStart: options.onCaseStart, onCaseEnd: options.onCaseEnd, onRunEvent: options.onRunEvent };
}
