import { randomUUID } from "node:crypto";
import { isAsyncIterable, type RunEvent, type RunOutput } from "../../shared/agent.ts";
import type { Case } from "../../shared/case.ts";
import type { JudgeModel, JudgeUsage } from "../../shared/judge-model.ts";
import { CaseResult } from "../../shared/result.ts";
import { describeError, errorMessage } from "../../shared/errors.ts";
import { materializeCase } from "../../shared/datasets/dataset-case.ts";
import { round3 } from "../../shared/py-format.ts";
import { JudgeUsageTally, usageFromMetrics, withJudgeUsage } from "../../shared/usage.ts";
import { silentLogger, type Logger } from "../../shared/logger.ts";
import { contentAsString, toolsCalled } from "./evidence.ts";
import { buildJudgeRequest, runJudge } from "./checks/judge.ts";
import { evaluateReliability } from "./checks/reliability.ts";
import { runScorer } from "./checks/scorer.ts";
import { hasExpectations, NO_RESULT_OUTPUT_JUDGE_ERROR, runExpectations } from "./checks/expectations.ts";
import { errorPartKind, type ErrorPartKind } from "../../shared/error-kind.ts";
import { processLimiter } from "../../shared/limits/process-limiter.ts";
import { limitedFetch } from "../../shared/limits/limiter.ts";
import { runEvalFunctions } from "./checks/eval-functions.ts";
import { evalFunctionsFor, type EvalFunctions } from "../../shared/eval-functions.ts";
import type { ScoringMethod } from "../../shared/datasets/expected-output-methods.ts";
import { defaultJudgeModel } from "../models/default-judge.ts";
import { DEFAULT_MAX_OUTPUT_KB, DEFAULT_SETUP_TIMEOUT_SECONDS, DEFAULT_TEARDOWN_TIMEOUT_SECONDS, DEFAULT_TIMEOUT_SECONDS, resolveDefaultTimeout } from "../../shared/defaults.ts";
import { truncateOutput } from "../../shared/wire/fit-result.ts";
import type { PhaseSeconds } from "../../shared/wire/result-data.ts";
import { endCaseProcesses, newCaseScope, runInCaseScope, type CaseScope } from "./case-scope.ts";
import { installChildProcessTracking } from "./child-processes.ts";
import { captureTranscript } from "./transcript.ts";
import type { ResponseCache } from "../models/response-cache.ts";

// Whatever runs cases tracks the processes they start (a thread does it first, before the suite loads).
installChildProcessTracking();
import { callSyncHook } from "../../shared/hooks.ts";
import { CaseTrace } from "./case-trace.ts";
import { runInContext } from "../../shared/tracing/spans.ts";
import { CANCELLED_BEFORE_START_ERROR, CANCELLED_IN_FLIGHT_ERROR, resultShell } from "../../shared/result-shell.ts";

/**
 * One case, start to finish (spec sections C to J and L):
 * setup (outside the timeout, within its own bound) -> the run and its checks (inside the
 * timeout) -> teardown (outside the timeout, within its own bound). Every phase is bounded:
 * Agno leaves setup and teardown unbounded, evalfleet gives each 60 s unless told otherwise.
 * {@link runCase} never throws; every failure is recorded on the result under its prefix, and
 * the child processes the case started are ended with it (case-scope.ts).
 */

/** Recorded when the judge is needed and no model is configured anywhere. */
export const NO_JUDGE_MODEL_ERROR = "judge: no judge model configured: set OPENAI_API_KEY or pass judgeModel";

// The coordinator reads these errors too (an aborted distributed run): they live with the result shell.
export { CANCELLED_BEFORE_START_ERROR, CANCELLED_IN_FLIGHT_ERROR } from "../../shared/result-shell.ts";

/** Phases a case goes through, reported to an observer (the thread uses them for the hard-kill watchdog). */
export type CasePhase = "setup" | "run" | "teardown" | "done";

/** Internal progress of a case, for whoever supervises it. */
export interface CaseObserver {
  /**
   * `deadline` (epoch ms) is the phase's bound: set for `setup` and `teardown` (their hook
   * bounds) and `run` (the case's timeout); `result` is the live result (identity set).
   */
  onPhase?(phase: CasePhase, info: { deadline?: number }, result: CaseResult): void;
  /** Called each time evidence or an error is committed to the result while the run is open. */
  onCommit?(result: CaseResult): void;
}

/** Options of {@link runCase}. */
export interface RunCaseOptions {
  /** Timeout in seconds when the case sets none. Default {@link DEFAULT_TIMEOUT_SECONDS}. */
  defaultTimeout?: number;
  /** Bound on `setup` in seconds when the case sets none. Default {@link DEFAULT_SETUP_TIMEOUT_SECONDS}. */
  setupTimeout?: number;
  /** Bound on `teardown` in seconds when the case sets none. Default {@link DEFAULT_TEARDOWN_TIMEOUT_SECONDS}. */
  teardownTimeout?: number;
  /** Largest output kept on the result, in bytes; the checks still see the whole output. Default {@link DEFAULT_MAX_OUTPUT_KB} KiB. */
  maxOutputBytes?: number;
  /** Where the child processes the case starts are recorded (a thread reports them to its pool). Default: a scope of its own. */
  scope?: CaseScope;
  /** The runner's (or suite's) judge model; the case's own wins; without either, the default judge from the environment (`defaultJudgeModel`). */
  judgeModel?: JudgeModel | null;
  /** Cancels the case (suite cancellation): the run is aborted, teardown still runs. */
  signal?: AbortSignal;
  /** Presentation hook for streamed events; must be sync. Errors are recorded once per case. */
  onRunEvent?: ((c: Case, event: RunEvent) => unknown) | null;
  /** Declaration index, stored on the result. Default 0. */
  index?: number;
  /** Attempt number, stored on the result. Default 1. */
  attempts?: number;
  /** Worker label stored on the result. Default `"local"`. */
  worker?: string;
  observer?: CaseObserver;
  /** Debug details (a judge's unusable answer) go here. Default: silent. */
  logger?: Logger;
  /** The suite's evaluation functions by name (`defineSuite({ evalFunctions })`), which cases and `runEvalFunctions` name. Default none. */
  evalFunctions?: EvalFunctions | null;
  /** Evaluation functions that grade every case of the run (`--eval-function NAME`), after each case's own. Default none. */
  runEvalFunctions?: readonly string[] | null;
  /**
   * A scoring method that replaces each expected-output check's own for this run (`--scoring-method`);
   * the case's other scoring options (ignoreCase, tolerance) stay. Default: the case's.
   */
  scoringMethod?: ScoringMethod | null;
  /**
   * The W3C traceparent of the span the case's span goes under (the run's, carried by the case
   * message or the thread task). Default: the active context. Used only when tracing is on.
   */
  traceparent?: string | null;
  /** How the case's span names its worker and counts its attempt, when they differ from `worker` and `attempts` (a distributed worker's id, deliveries before this one). Default: those. */
  traceAs?: { worker: string; priorAttempts: number } | null;
  /**
   * Keep the case's full run output on the result (`result.transcript`), within this many bytes
   * of JSON (`--max-transcript-kb`; cut, saying so, when bigger). Default 0: none (only a
   * recorded run keeps one).
   */
  maxTranscriptBytes?: number;
  /** Which run of a repeated case this is (1-based): part of a cached model answer's key. Default 1. */
  repeat?: number;
  /** The response cache the case's model calls go through (`--cache`). Default: none (the thread's, if one was set). */
  cache?: ResponseCache | null;
  /**
   * Grade this output instead of running the agent (`evalfleet regrade`: a recorded run's stored
   * output). Only the checks run, within the case's timeout; setup and teardown do not run.
   * Default: none (the agent runs).
   */
  replay?: RunOutput | null;
}

let defaultLogger: Logger | undefined;

/** `eval-<name>-<8 lowercase hex>`: a new session per case. */
export function newSessionId(caseName: string): string {
  // The first 8 characters of a v4 UUID are random hex; randomUUID draws from a cached entropy pool,
  // which is much cheaper per case than a randomBytes() call.
  return `eval-${caseName}-${randomUUID().slice(0, 8)}`;
}

/** Marks `shell` as a case cancelled before anything of it ran ({@link CANCELLED_BEFORE_START_ERROR}). */
export function notStartedResult(shell: CaseResult, attempts: number): CaseResult {
  shell.skipped = true;
  shell.attempts = attempts;
  shell.addError(CANCELLED_BEFORE_START_ERROR);
  return shell;
}

/** Runs one case through its whole lifecycle. Never throws. */
export async function runCase(declared: Case, options: RunCaseOptions = {}): Promise<CaseResult> {
  const scope = options.scope ?? newCaseScope();
  try {
    return await runInCaseScope(scope, () => runLifecycle(declared, options, scope));
  } finally {
    // Whatever the case started dies with it (and their descendants): none may outlive its case.
    endCaseProcesses(scope);
  }
}

/** Seconds since `from` (a `performance.now()`), rounded to milliseconds. */
function since(from: number): number {
  return round3((performance.now() - from) / 1000);
}

/** A bound in seconds as a timer delay, in ms (setTimeout's range). */
function boundMs(seconds: number): number {
  return Math.min(Math.max(0, seconds * 1000), 2_147_483_647);
}

async function runLifecycle(declared: Case, options: RunCaseOptions, scope: CaseScope): Promise<CaseResult> {
  const started = performance.now();
  scope.repeat = options.repeat ?? 1;
  scope.cache = options.cache ?? null;
  const result = resultShell(declared, options.index ?? 0);
  result.attempts = options.attempts ?? 1;
  result.worker = options.worker ?? "local";
  result.sessionId = newSessionId(declared.name);
  const phases: PhaseSeconds = { setup: 0, run: 0, checks: 0, teardown: 0 };
  result.phaseSeconds = phases;
  const observer = options.observer ?? {};
  // Null when tracing is off: every use below is skipped.
  const trace = CaseTrace.start({
    name: declared.name,
    tags: declared.tags,
    index: result.index,
    attempt: result.attempts + (options.traceAs?.priorAttempts ?? 0),
    worker: options.traceAs?.worker ?? result.worker,
    traceparent: options.traceparent,
  });
  const phase = (name: CasePhase, seconds?: number): void => {
    trace?.phase(name);
    const deadline = seconds === undefined ? undefined : Date.now() + boundMs(seconds);
    scope.deadline = deadline ?? null;
    observer.onPhase?.(name, deadline === undefined ? {} : { deadline }, result);
  };
  let c: Case;
  try {
    // A dataset case reads its row from the file now: no process holds every row's inputs at once.
    c = materializeCase(declared);
    result.metadata = c.metadata ?? null;
  } catch (err) {
    result.addError(`dataset: ${errorMessage(err)}`);
    result.durationSeconds = round3((performance.now() - started) / 1000);
    phase("done");
    trace?.end(result);
    return result;
  }
  const hooks = c.resolveHookTimeouts({ setup: options.setupTimeout ?? DEFAULT_SETUP_TIMEOUT_SECONDS, teardown: options.teardownTimeout ?? DEFAULT_TEARDOWN_TIMEOUT_SECONDS });
  const finish = (materialized: Case): CaseResult => {
    result.durationSeconds = round3((performance.now() - started) / 1000);
    keepRecords(result, materialized, options, scope);
    phase("done");
    trace?.end(result);
    return result;
  };
  if (options.replay) {
    // A regrade: the stored output is graded again; setup and teardown belong to agent runs.
    try {
      await runUnderTimeout(c, result, options, phases, phase, trace);
    } catch (err) {
      result.addError(`internal: ${describeError(err)}`, "infra");
    }
    return finish(c);
  }
  try {
    phase("setup", hooks.setup);
    let context: unknown;
    let setupDone = false;
    const setupStarted = performance.now();
    if (c.setup) {
      const setup = await boundedHook(() => c.setup!(), hooks.setup);
      if (setup.kind === "ok") {
        context = setup.value;
        setupDone = true;
      } else if (setup.kind === "threw") result.addError(`setup: ${describeError(setup.err)}`);
      else result.addError(`setup: exceeded ${hooks.setup}s`);
      phases.setup = since(setupStarted);
    } else setupDone = true;
    if (setupDone) {
      await runUnderTimeout(c, result, options, phases, phase, trace);
      phase("teardown", hooks.teardown);
      if (c.teardown) {
        const teardownStarted = performance.now();
        const teardown = await boundedHook(() => c.teardown!(context, result), hooks.teardown);
        if (teardown.kind === "threw") result.addError(`cleanup: ${describeError(teardown.err)}`);
        else if (teardown.kind === "overran") result.addError(`cleanup: teardown exceeded ${hooks.teardown}s`);
        phases.teardown = since(teardownStarted);
      }
    }
  } catch (err) {
    // Only a bug in evalfleet gets here; the case still gets a result.
    result.addError(`internal: ${describeError(err)}`, "infra");
  }
  return finish(c);
}

/**
 * What the result keeps besides its verdicts: the response cache's counts, and the transcript,
 * captured where the agent ran when the run is recorded. Never throws (a case is not failed by its record).
 */
function keepRecords(result: CaseResult, c: Case, options: RunCaseOptions, scope: CaseScope): void {
  if (scope.modelCache.hits + scope.modelCache.misses > 0) result.modelCache = { ...scope.modelCache };
  if (!options.maxTranscriptBytes || options.maxTranscriptBytes <= 0) return;
  try {
    result.transcript = captureTranscript(result, c.input, options.maxTranscriptBytes);
  } catch {
    result.transcript = null;
  }
}

/** How a bounded hook ended. */
type HookEnd = { kind: "ok"; value: unknown } | { kind: "threw"; err: unknown } | { kind: "overran" };

/**
 * Calls a setup or teardown hook and waits for it at most `seconds`. A hook past its bound is left
 * behind (its promise is not awaited any more); one that blocks its thread synchronously is the
 * watchdog's (worker/pool/) or, inline, the process watchdog's (coordinator/local/).
 */
async function boundedHook(call: () => unknown, seconds: number): Promise<HookEnd> {
  let timer: NodeJS.Timeout | undefined;
  const overran = new Promise<HookEnd>((resolve) => (timer = setTimeout(() => resolve({ kind: "overran" }), boundMs(seconds))));
  try {
    return await Promise.race([
      callMaybeAsync(call).then(
        (value): HookEnd => ({ kind: "ok", value }),
        (err: unknown): HookEnd => ({ kind: "threw", err }),
      ),
      overran,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Shared flag between the supervisor and the body: once closed, the body may not touch the result. */
interface BodyScope {
  open: boolean;
}

/** When the agent's part of the run ended (`performance.now()`): the checks start there. */
interface RunMarks {
  agentEnded: number | null;
}

async function runUnderTimeout(
  c: Case,
  result: CaseResult,
  options: RunCaseOptions,
  phases: PhaseSeconds,
  phase: (name: CasePhase, seconds?: number) => void,
  trace: CaseTrace | null,
): Promise<void> {
  const timeoutSeconds = c.resolveTimeout(resolveDefaultTimeout(options.defaultTimeout));
  const timeoutMs = boundMs(timeoutSeconds);
  const runStarted = performance.now();
  const marks: RunMarks = { agentEnded: null };
  const controller = new AbortController();
  const scope: BodyScope = { open: true };
  let settle!: (how: "done" | "timeout" | "cancelled") => void;
  const outcome = new Promise<"done" | "timeout" | "cancelled">((resolve) => (settle = resolve));
  const timer = setTimeout(() => settle("timeout"), timeoutMs);
  const onSuiteAbort = (): void => settle("cancelled");
  const suiteSignal = options.signal;
  if (suiteSignal?.aborted) settle("cancelled");
  else suiteSignal?.addEventListener("abort", onSuiteAbort, { once: true });

  const deadline = Date.now() + timeoutMs;
  phase("run", timeoutSeconds);
  // A suite cancelled during setup must not start the agent: its run could already cost money.
  if (!suiteSignal?.aborted) {
    // With tracing on, the agent and the checks run with the run phase's span active.
    const body = (): Promise<void> => runBody(c, result, scope, controller.signal, options, deadline, marks, trace);
    (trace ? runInContext(trace.phaseContext, body) : body()).then(
      () => settle("done"),
      (err: unknown) => {
        if (scope.open) result.addError(`internal: ${describeError(err)}`, "infra");
        settle("done");
      },
    );
  }
  const how = await outcome;
  scope.open = false;
  const ended = performance.now();
  phases.run = round3(((marks.agentEnded ?? ended) - runStarted) / 1000);
  phases.checks = marks.agentEnded === null ? 0 : round3((ended - marks.agentEnded) / 1000);
  clearTimeout(timer);
  suiteSignal?.removeEventListener("abort", onSuiteAbort);
  if (how === "timeout") {
    controller.abort(new DOMException(`case exceeded its ${timeoutSeconds}s timeout`, "TimeoutError"));
    result.timedOut = true;
    result.addError(`timeout: exceeded ${timeoutSeconds}s`, null);
  } else if (how === "cancelled") {
    controller.abort(suiteSignal?.reason ?? new DOMException("suite cancelled", "AbortError"));
    // Not the agent's failure: the run was cancelled (a signal, a deadline, a budget).
    result.addError(CANCELLED_IN_FLIGHT_ERROR, "infra");
  }
}

async function runBody(c: Case, result: CaseResult, scope: BodyScope, signal: AbortSignal, options: RunCaseOptions, deadline: number, marks: RunMarks, trace: CaseTrace | null): Promise<void> {
  const label = c.label;
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_KB * 1024;
  // The checks grade the whole output; the result keeps it cut to the bound (shared/wire/fit-result.ts).
  let fullOutput: string | null = null;
  const capture = (output: RunOutput): void => {
    fullOutput = contentAsString(output.content);
    commit(() => captureEvidence(result, output, fullOutput, maxOutputBytes));
  };
  const observer = options.observer;
  const commit = (apply: () => void): void => {
    if (!scope.open) return;
    apply();
    observer?.onCommit?.(result);
  };
  const record = (message: string, kind: ErrorPartKind = "agent"): void => commit(() => result.addError(message, kind));

  let errored = false;
  let captured: RunOutput | null = null;
  let hookOk = Boolean(options.onRunEvent);
  try {
    if (options.replay) {
      // A regrade: the stored output stands for the agent's run.
      captured = options.replay;
      capture(options.replay);
    }
    const traceparent = trace?.traceparent;
    // The provider limiter of the run, for the agent's own model calls (docs/providers.md).
    const limiter = processLimiter();
    const context = { signal, sessionId: result.sessionId, deadline, limiter, fetch: limitedFetch(limiter), ...(traceparent ? { traceparent } : {}) };
    const ret = options.replay ? null : c.component.run(c.input, context);
    if (ret === null) {
      // Nothing ran.
    } else if (isAsyncIterable(ret)) {
      for await (const event of ret as AsyncIterable<RunEvent>) {
        if (!scope.open) break;
        if (event && event.type === "run_output") {
          const output = (event as { output: RunOutput }).output;
          captured = output ?? null;
          // Evidence is committed on arrival, so a later stall or timeout cannot lose it.
          if (output) capture(output);
          continue;
        }
        if (event && event.type === "run_error") {
          errored = true;
          record(`${label}: ${errorEventText(event as { error?: unknown; content?: unknown; errorType?: unknown })}`, errorPartKind((event as { error?: unknown }).error, "agent"));
        }
        if (hookOk) {
          hookOk = callSyncHook("onRunEvent", () => options.onRunEvent!(c, event), record);
        }
      }
    } else {
      const output = (await ret) as RunOutput | null | undefined;
      if (output) {
        captured = output;
        capture(output);
      }
    }
  } catch (err) {
    marks.agentEnded = performance.now();
    // A provider's 429/5xx or a lost connection under the agent is the infrastructure's failure.
    record(`${label}: ${describeError(err)}`, errorPartKind(err, "agent"));
    return;
  }
  marks.agentEnded = performance.now();
  if (!scope.open) return;
  trace?.phase("checks");
  // Each check in its own span under the checks phase; without tracing, called as it is.
  const check = <T>(name: string, fn: () => Promise<T>, verdict: () => boolean | null | undefined): Promise<T> => (trace ? trace.check(name, fn, verdict) : fn());

  const status = captured ? (captured.status ?? "completed") : null;
  if (errored || !captured || status !== "completed") {
    // An error event already explains the failure; otherwise say why the run cannot be graded.
    if (!errored) record(`${label}: ${nonGradeableReason(captured, status)}`);
    return;
  }

  const output: RunOutput = captured;
  // The tokens of every judge call of the case (criteria and expected-output judges), priced where results are collected.
  const judgeTally = new JudgeUsageTally();
  const onJudgeUsage = (u: JudgeUsage, model: JudgeModel): void => judgeTally.add(u, model.id ?? null);
  const recordJudgeUsage = (): void => commit(() => (result.usage = withJudgeUsage(result.usage, judgeTally.usage())));
  if (c.criteria) await check("judge", () => judgeCheck(c, result, output, fullOutput, signal, deadline, options, commit, record, onJudgeUsage), () => result.judgePassed);
  recordJudgeUsage();
  if (!scope.open) return;
  if (c.expectedToolCalls && c.expectedToolCalls.length > 0) {
    await check(
      "reliability",
      async () => {
        try {
          const details = evaluateReliability(output, {
            expectedToolCalls: c.expectedToolCalls!,
            allowAdditionalToolCalls: c.allowAdditionalToolCalls,
          });
          commit(() => {
            result.reliabilityPassed = details.passed;
            result.reliability = details;
          });
        } catch (err) {
          record(`reliability: ${describeError(err)}`, "check");
        }
      },
      () => result.reliabilityPassed,
    );
  }
  if (!scope.open) return;
  if (c.scorer) {
    const scorer = c.scorer;
    await check(
      "scorer",
      async () => {
        try {
          const score = await runScorer(scorer, output, c.expected, signal, { caseName: c.name, input: c.input });
          commit(() => (result.score = score));
        } catch (err) {
          record(`scorer: ${describeError(err)}`, errorPartKind(err, "check"));
        }
      },
      () => result.score?.passed,
    );
  }
  if (!scope.open) return;
  if (hasExpectations(c)) {
    await check("expectations", () => expectationsCheck(c, result, output, fullOutput, signal, deadline, options, commit, record, onJudgeUsage, recordJudgeUsage), () => expectationsPassed(result));
  }
  if (!scope.open) return;
  const evalNames = evalFunctionsFor(c.evalFunctions, options.runEvalFunctions);
  if (evalNames.length > 0) {
    await check(
      "eval_functions",
      async () => {
        const { verdicts, errors } = await runEvalFunctions(c, evalNames, options.evalFunctions, output, signal);
        if (verdicts.length > 0) commit(() => (result.expectations = { ...result.expectations, evalFunctions: verdicts }));
        for (const e of errors) record(e, "check");
      },
      () => (result.expectations?.evalFunctions ? result.expectations.evalFunctions.every((v) => v.passed) : null),
    );
  }
}

/** Whether every data-driven check that ran passed (null: none ran). */
function expectationsPassed(result: CaseResult): boolean | null {
  const e = result.expectations;
  if (!e) return null;
  const verdicts = [e.expectedOutput, e.expectedAgentTools, e.expectedKnowledgeSources].filter((v) => v !== undefined);
  return verdicts.length === 0 ? null : verdicts.every((v) => v!.passed);
}

async function expectationsCheck(
  c: Case,
  result: CaseResult,
  captured: RunOutput,
  fullOutput: string | null,
  signal: AbortSignal,
  deadline: number,
  options: RunCaseOptions,
  commit: (apply: () => void) => void,
  record: (message: string, kind?: ErrorPartKind) => void,
  onJudgeUsage: (usage: JudgeUsage, model: JudgeModel) => void,
  recordJudgeUsage: () => void,
): Promise<void> {
  try {
    const { expectations, errors } = await runExpectations(c, captured, fullOutput, {
      scoringMethod: options.scoringMethod ?? null,
      // Same resolution as the criteria judge: the case's, the suite's or runner's, then the default.
      model: () => c.judgeModel || options.judgeModel || defaultJudgeModel(),
      signal,
      deadline,
      onProblem: (problem) => (options.logger ?? (defaultLogger ??= silentLogger())).debug({ case: c.name, problem }, "expected_output judge returned no result"),
      onUsage: onJudgeUsage,
    });
    recordJudgeUsage();
    commit(() => (result.expectations = expectations));
    for (const e of errors) record(e, e === NO_RESULT_OUTPUT_JUDGE_ERROR ? "infra" : "check");
  } catch (err) {
    record(`expected_output: ${describeError(err)}`, errorPartKind(err, "check"));
  }
}

async function judgeCheck(
  c: Case,
  result: CaseResult,
  output: RunOutput,
  fullOutput: string | null,
  signal: AbortSignal,
  deadline: number,
  options: RunCaseOptions,
  commit: (apply: () => void) => void,
  record: (message: string, kind?: ErrorPartKind) => void,
  onUsage: (usage: JudgeUsage, model: JudgeModel) => void,
): Promise<void> {
  let outcome: Awaited<ReturnType<typeof runJudge>>;
  try {
    // Resolution order: the case's judge, the suite's or runner's, then the default from the
    // environment (none without OPENAI_API_KEY). A malformed environment is a judge error.
    const model = c.judgeModel || options.judgeModel || defaultJudgeModel();
    if (!model) {
      record(NO_JUDGE_MODEL_ERROR, "check");
      return;
    }
    const request = buildJudgeRequest({ criteria: c.criteria!, mode: c.judgeMode, input: c.input, output: fullOutput ?? contentAsString(output.content) });
    outcome = await runJudge(model, request, c.judgeMode, c.judgeThreshold, signal, { deadline, onUsage: (u) => onUsage(u, model) });
  } catch (err) {
    record(`judge: ${describeError(err)}`, errorPartKind(err, "check"));
    return;
  }
  if ("verdict" in outcome) {
    const v = outcome.verdict;
    commit(() => {
      result.judgePassed = v.passed;
      result.judgeReason = v.reason;
      result.judgeScore = v.score;
    });
  } else {
    (options.logger ?? (defaultLogger ??= silentLogger())).debug({ case: c.name, problem: outcome.problem }, "judge returned no result");
    // The judge's provider refused or failed (its client's retries spent), or it answered nothing usable.
    record("judge: returned no result", "infra");
  }
}

function captureEvidence(result: CaseResult, output: RunOutput, text: string | null, maxOutputBytes: number): void {
  result.response = output;
  result.output = truncateOutput(text, maxOutputBytes);
  result.toolsCalled = toolsCalled(output);
  result.usage = usageFromMetrics(output.metrics, typeof output.model === "string" ? output.model : null);
  // A missing status means completed (RunStatus); kept apart from the response, which never crosses a boundary.
  result.runStatus = output.status ?? "completed";
}

function errorEventText(event: { error?: unknown; content?: unknown; errorType?: unknown }): string {
  const text = (event.content as string) || (event.error as string) || "unknown error";
  return event.errorType ? `${String(event.errorType)}: ${String(text)}` : String(text);
}

function nonGradeableReason(output: RunOutput | null, status: string | null): string {
  if (!output) return "no run output recorded";
  switch (status) {
    case "paused":
      return "run paused awaiting user input";
    case "cancelled":
      return "run cancelled";
    case "error":
      return "run ended in error status";
    default:
      return `run ended with status ${String(status)}`;
  }
}

async function callMaybeAsync<T>(call: () => T): Promise<Awaited<T>> {
  return await call();
}
