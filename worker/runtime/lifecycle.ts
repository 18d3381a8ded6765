import { randomUUID } from "node:crypto";
import { isAsyncIterable, type RunEvent, type RunOutput } from "../../shared/case/agent.ts";
import type { Case } from "../../shared/case/case.ts";
import type { JudgeModel } from "../../shared/case/judge-model.ts";
import { CaseResult } from "../../shared/result/result.ts";
import { describeError, errorMessage } from "../../shared/errors.ts";
import { materializeCase } from "../../shared/datasets/dataset-case.ts";
import { round3 } from "../../shared/py-format.ts";
import { usageFromMetrics } from "../../shared/case/usage.ts";
import type { Logger } from "../../shared/logger.ts";
import { contentAsString, toolsCalled } from "./evidence.ts";
import { errorPartKind, type ErrorPartKind } from "../../shared/result/error-kind.ts";
import { processLimiter } from "../../shared/providers/process-limiter.ts";
import { limitedFetch } from "../../shared/providers/limiter.ts";
import type { EvalFunctions } from "../../shared/case/eval-functions.ts";
import type { ScoringMethod } from "../../shared/datasets/expected-output-methods.ts";
import { caseBounds, type CaseBounds } from "../../shared/run-settings.ts";
import { truncateOutput } from "../../shared/wire/fit-result.ts";
import type { PhaseSeconds } from "../../shared/wire/result-data.ts";
import { currentCaseScope, endCaseProcesses, newCaseScope, runInCaseScope, type CaseScope } from "./case-scope.ts";
import { installChildProcessTracking } from "./child-processes.ts";
import { captureTranscript } from "./transcript.ts";
import { gradeOutput } from "./grading.ts";
import { boundedHook, boundMs } from "./bounded-hook.ts";
import type { ResponseCache } from "../models/response-cache.ts";
import type { ThreadCassette } from "../../shared/wire/thread.ts";
import { closeCaseCassette, openCaseCassette } from "../cassette/case-cassette.ts";
import { caseTool, isReplayMiss } from "../cassette/cassette-session.ts";

// Whatever runs cases tracks the processes they start (a thread does it first, before the suite loads).
installChildProcessTracking();
import { callSyncHook } from "../../shared/hooks.ts";
import { CaseTrace } from "./case-trace.ts";
import { runInContext } from "../../shared/tracing/spans.ts";
import { CANCELLED_BEFORE_START_ERROR, CANCELLED_IN_FLIGHT_ERROR, resultShell } from "../../shared/result/result-shell.ts";

/**
 * One case, start to finish (spec sections C to J and L):
 * setup (outside the timeout, within its own bound) -> the run and its checks (inside the
 * timeout) -> teardown (outside the timeout, within its own bound). Every phase is bounded:
 * Agno leaves setup and teardown unbounded, evalfleet gives each 60 s unless told otherwise.
 * {@link runCase} never throws; every failure is recorded on the result under its prefix, and
 * the child processes the case started are ended with it (case-scope.ts).
 */

// The grading half of the case lives in grading.ts; its error text is part of this module's surface.
export { NO_JUDGE_MODEL_ERROR } from "./grading.ts";

// The coordinator reads these errors too (an aborted distributed run): they live with the result shell.
export { CANCELLED_BEFORE_START_ERROR, CANCELLED_IN_FLIGHT_ERROR } from "../../shared/result/result-shell.ts";

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
  /** Timeout in seconds when the case sets none. Default 120 (`DEFAULT_TIMEOUT_SECONDS`). */
  defaultTimeout?: number;
  /** Bound on `setup` in seconds when the case sets none. Default 60 (`DEFAULT_SETUP_TIMEOUT_SECONDS`). */
  setupTimeout?: number;
  /** Bound on `teardown` in seconds when the case sets none. Default 60 (`DEFAULT_TEARDOWN_TIMEOUT_SECONDS`). */
  teardownTimeout?: number;
  /** Largest output kept on the result, in bytes; the checks still see the whole output. Default 256 KiB (`DEFAULT_MAX_OUTPUT_KB`). */
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
  /** Record or replay the case's HTTP exchanges and wrapped tool calls (`--record`, `--replay`). Default: neither. */
  cassette?: ThreadCassette | null;
  /**
   * Grade this output instead of running the agent (`evalfleet regrade`: a recorded run's stored
   * output). Only the checks run, within the case's timeout; setup and teardown do not run.
   * Default: none (the agent runs).
   */
  replay?: RunOutput | null;
}

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
  // The case's bounds, resolved once here (after its dataset row is read) and read by every phase.
  const bounds = caseBounds(c, options);
  const hooks = { setup: bounds.setupSeconds, teardown: bounds.teardownSeconds };
  const finish = async (materialized: Case): Promise<CaseResult> => {
    if (scope.cassette && options.cassette) await closeCaseCassette(scope.cassette, options.cassette, result, options.signal);
    result.durationSeconds = round3((performance.now() - started) / 1000);
    keepRecords(result, materialized, options, scope);
    phase("done");
    trace?.end(result);
    return result;
  };
  if (options.cassette && !options.replay) {
    try {
      scope.cassette = await openCaseCassette(options.cassette, c.name, scope.repeat, options.signal);
    } catch (err) {
      // A cassette that cannot be read answers nothing: the case fails before its agent costs anything.
      // A bad cassette is the case's failure; a bucket the worker cannot reach is the infrastructure's (retried like one).
      result.addError(`replay: ${errorMessage(err)}`, errorPartKind(err, "check"));
      return finish(c);
    }
  }
  if (options.replay) {
    // A regrade: the stored output is graded again; setup and teardown belong to agent runs.
    try {
      await runUnderTimeout(c, result, bounds, options, phases, phase, trace);
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
      await runUnderTimeout(c, result, bounds, options, phases, phase, trace);
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
  bounds: CaseBounds,
  options: RunCaseOptions,
  phases: PhaseSeconds,
  phase: (name: CasePhase, seconds?: number) => void,
  trace: CaseTrace | null,
): Promise<void> {
  const timeoutSeconds = bounds.timeoutSeconds;
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
    const body = (): Promise<void> => runBody(c, result, scope, controller.signal, bounds, options, deadline, marks, trace);
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

async function runBody(c: Case, result: CaseResult, scope: BodyScope, signal: AbortSignal, bounds: CaseBounds, options: RunCaseOptions, deadline: number, marks: RunMarks, trace: CaseTrace | null): Promise<void> {
  const label = c.label;
  const maxOutputBytes = bounds.maxOutputBytes;
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
    // Under --record / --replay the case's fetch and tools go through its cassette.
    const cassette = currentCaseScope()?.cassette ?? null;
    const fetch = cassette ? cassette.fetch(limitedFetch(limiter)) : limitedFetch(limiter);
    const tool = cassette ? cassette.tool.bind(cassette) : caseTool;
    const context = { signal, sessionId: result.sessionId, deadline, limiter, fetch, tool, ...(traceparent ? { traceparent } : {}) };
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
    // A replay miss is said once, by the cassette (case-cassette.ts), and is a check's failure.
    if (isReplayMiss(err)) return;
    // A provider's 429/5xx or a lost connection under the agent is the infrastructure's failure.
    record(`${label}: ${describeError(err)}`, currentCaseScope()?.cassette?.misses.length ? "check" : errorPartKind(err, "agent"));
    return;
  }
  marks.agentEnded = performance.now();
  if (!scope.open) return;
  trace?.phase("checks");
  const status = captured ? (captured.status ?? "completed") : null;
  if (errored || !captured || status !== "completed") {
    // An error event already explains the failure; otherwise say why the run cannot be graded.
    if (!errored) record(`${label}: ${nonGradeableReason(captured, status)}`);
    return;
  }
  await gradeOutput({ c, result, output: captured, fullOutput, signal, deadline, options, isOpen: () => scope.open, commit, record, trace });
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
