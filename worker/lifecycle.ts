import { randomUUID } from "node:crypto";
import { isAsyncIterable, type RunEvent, type RunOutput } from "../shared/agent.ts";
import type { Case } from "../shared/case.ts";
import type { JudgeModel } from "../shared/judge-model.ts";
import { CaseResult } from "../shared/result.ts";
import { describeError, errorMessage } from "../shared/errors.ts";
import { materializeCase } from "../shared/dataset-case.ts";
import { round3 } from "../shared/py-format.ts";
import { usageFromMetrics } from "../shared/usage.ts";
import { silentLogger, type Logger } from "../shared/logger.ts";
import { contentAsString, toolsCalled } from "./evidence.ts";
import { buildJudgeRequest, runJudge } from "./checks/judge.ts";
import { evaluateReliability } from "./checks/reliability.ts";
import { runScorer } from "./checks/scorer.ts";
import { hasExpectations, runExpectations } from "./checks/expectations.ts";
import { defaultJudgeModel } from "./models/default-judge.ts";

/**
 * One case, start to finish (spec sections C to J and L):
 * setup (outside the timeout) -> the run and its checks (inside it) -> teardown (outside it).
 * {@link runCase} never throws; every failure is recorded on the result under its prefix.
 */

/** The default per-case timeout in seconds, when neither the case nor the runner sets one. */
export const DEFAULT_TIMEOUT_SECONDS = 120;

/** Recorded when the judge is needed and no model is configured anywhere. */
export const NO_JUDGE_MODEL_ERROR = "judge: no judge model configured: set OPENAI_API_KEY or pass judgeModel";

/** Recorded for a case that was running when its suite was cancelled. */
export const CANCELLED_IN_FLIGHT_ERROR = "cancelled: suite cancelled while the case was running";
/** Error of a case cancelled after it was handed to a thread but before anything of it ran (no setup, no agent). */
export const CANCELLED_BEFORE_START_ERROR = "skipped: suite cancelled before the case started";

/** Phases a case goes through, reported to an observer (the thread uses them for the hard-kill watchdog). */
export type CasePhase = "setup" | "run" | "teardown" | "done";

/** Internal progress of a case, for whoever supervises it. */
export interface CaseObserver {
  /** `deadline` (epoch ms) is set when the `run` phase starts; `result` is the live result (identity set). */
  onPhase?(phase: CasePhase, info: { deadline?: number }, result: CaseResult): void;
  /** Called each time evidence or an error is committed to the result while the run is open. */
  onCommit?(result: CaseResult): void;
}

/** Options of {@link runCase}. */
export interface RunCaseOptions {
  /** Timeout in seconds when the case sets none. Default {@link DEFAULT_TIMEOUT_SECONDS}. */
  defaultTimeout?: number;
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

/** Builds the result shell of a case: identity fields, nothing run. */
export function resultShell(c: Case, index: number): CaseResult {
  const result = new CaseResult({ name: c.name, tags: c.tags, index });
  if (c.team) result.teamId = c.componentId;
  else result.agentId = c.componentId;
  return result;
}

/** Runs one case through its whole lifecycle. Never throws. */
export async function runCase(declared: Case, options: RunCaseOptions = {}): Promise<CaseResult> {
  const started = performance.now();
  const result = resultShell(declared, options.index ?? 0);
  result.attempts = options.attempts ?? 1;
  result.worker = options.worker ?? "local";
  result.sessionId = newSessionId(declared.name);
  const observer = options.observer ?? {};
  let c: Case;
  try {
    // A dataset case reads its row from the file now: no process holds every row's inputs at once.
    c = materializeCase(declared);
  } catch (err) {
    result.addError(`dataset: ${errorMessage(err)}`);
    result.durationSeconds = round3((performance.now() - started) / 1000);
    observer.onPhase?.("done", {}, result);
    return result;
  }
  try {
    observer.onPhase?.("setup", {}, result);
    let context: unknown;
    let setupDone = false;
    try {
      context = c.setup ? await callMaybeAsync(() => c.setup!()) : undefined;
      setupDone = true;
    } catch (err) {
      result.addError(`setup: ${describeError(err)}`);
    }
    if (setupDone) {
      await runUnderTimeout(c, result, options);
      observer.onPhase?.("teardown", {}, result);
      if (c.teardown) {
        try {
          await callMaybeAsync(() => c.teardown!(context, result));
        } catch (err) {
          result.addError(`cleanup: ${describeError(err)}`);
        }
      }
    }
  } catch (err) {
    // Only a bug in evalfleet gets here; the case still gets a result.
    result.addError(`internal: ${describeError(err)}`);
  }
  result.durationSeconds = round3((performance.now() - started) / 1000);
  observer.onPhase?.("done", {}, result);
  return result;
}

/** Shared flag between the supervisor and the body: once closed, the body may not touch the result. */
interface BodyScope {
  open: boolean;
}

async function runUnderTimeout(c: Case, result: CaseResult, options: RunCaseOptions): Promise<void> {
  const timeoutSeconds = c.resolveTimeout(options.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS);
  const timeoutMs = Math.min(Math.max(0, timeoutSeconds * 1000), 2_147_483_647);
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
  options.observer?.onPhase?.("run", { deadline }, result);
  // A suite cancelled during setup must not start the agent: its run could already cost money.
  if (!suiteSignal?.aborted) {
    runBody(c, result, scope, controller.signal, options, deadline).then(
      () => settle("done"),
      (err: unknown) => {
        if (scope.open) result.addError(`internal: ${describeError(err)}`);
        settle("done");
      },
    );
  }
  const how = await outcome;
  scope.open = false;
  clearTimeout(timer);
  suiteSignal?.removeEventListener("abort", onSuiteAbort);
  if (how === "timeout") {
    controller.abort(new DOMException(`case exceeded its ${timeoutSeconds}s timeout`, "TimeoutError"));
    result.timedOut = true;
    result.addError(`timeout: exceeded ${timeoutSeconds}s`);
  } else if (how === "cancelled") {
    controller.abort(suiteSignal?.reason ?? new DOMException("suite cancelled", "AbortError"));
    result.addError(CANCELLED_IN_FLIGHT_ERROR);
  }
}

async function runBody(c: Case, result: CaseResult, scope: BodyScope, signal: AbortSignal, options: RunCaseOptions, deadline: number): Promise<void> {
  const label = c.label;
  const observer = options.observer;
  const commit = (apply: () => void): void => {
    if (!scope.open) return;
    apply();
    observer?.onCommit?.(result);
  };
  const record = (message: string): void => commit(() => result.addError(message));

  let errored = false;
  let captured: RunOutput | null = null;
  let hookOk = Boolean(options.onRunEvent);
  try {
    const ret = c.component.run(c.input, { signal, sessionId: result.sessionId, deadline });
    if (isAsyncIterable(ret)) {
      for await (const event of ret as AsyncIterable<RunEvent>) {
        if (!scope.open) break;
        if (event && event.type === "run_output") {
          const output = (event as { output: RunOutput }).output;
          captured = output ?? null;
          // Evidence is committed on arrival, so a later stall or timeout cannot lose it.
          if (output) commit(() => captureEvidence(result, output));
          continue;
        }
        if (event && event.type === "run_error") {
          errored = true;
          record(`${label}: ${errorEventText(event as { error?: unknown; content?: unknown; errorType?: unknown })}`);
        }
        if (hookOk) {
          hookOk = callSyncHook("onRunEvent", () => options.onRunEvent!(c, event), record);
        }
      }
    } else {
      const output = (await ret) as RunOutput | null | undefined;
      if (output) {
        captured = output;
        commit(() => captureEvidence(result, output));
      }
    }
  } catch (err) {
    record(`${label}: ${describeError(err)}`);
    return;
  }
  if (!scope.open) return;

  const status = captured ? (captured.status ?? "completed") : null;
  if (errored || !captured || status !== "completed") {
    // An error event already explains the failure; otherwise say why the run cannot be graded.
    if (!errored) record(`${label}: ${nonGradeableReason(captured, status)}`);
    return;
  }

  if (c.criteria) await judgeCheck(c, result, captured, signal, deadline, options, commit, record);
  if (!scope.open) return;
  if (c.expectedToolCalls && c.expectedToolCalls.length > 0) {
    try {
      const details = evaluateReliability(captured, {
        expectedToolCalls: c.expectedToolCalls,
        allowAdditionalToolCalls: c.allowAdditionalToolCalls,
      });
      commit(() => {
        result.reliabilityPassed = details.passed;
        result.reliability = details;
      });
    } catch (err) {
      record(`reliability: ${describeError(err)}`);
    }
  }
  if (!scope.open) return;
  if (c.scorer) {
    try {
      const score = await runScorer(c.scorer, captured, c.expected, signal);
      commit(() => (result.score = score));
    } catch (err) {
      record(`scorer: ${describeError(err)}`);
    }
  }
  if (!scope.open) return;
  if (hasExpectations(c)) {
    try {
      const { expectations, errors } = await runExpectations(c, captured, result.output, {
        // Same resolution as the criteria judge: the case's, the suite's or runner's, then the default.
        model: () => c.judgeModel || options.judgeModel || defaultJudgeModel(),
        signal,
        deadline,
        onProblem: (problem) => (options.logger ?? (defaultLogger ??= silentLogger())).debug({ case: c.name, problem }, "expected_output judge returned no result"),
      });
      commit(() => (result.expectations = expectations));
      for (const e of errors) record(e);
    } catch (err) {
      record(`expected_output: ${describeError(err)}`);
    }
  }
}

async function judgeCheck(
  c: Case,
  result: CaseResult,
  output: RunOutput,
  signal: AbortSignal,
  deadline: number,
  options: RunCaseOptions,
  commit: (apply: () => void) => void,
  record: (message: string) => void,
): Promise<void> {
  let outcome: Awaited<ReturnType<typeof runJudge>>;
  try {
    // Resolution order: the case's judge, the suite's or runner's, then the default from the
    // environment (none without OPENAI_API_KEY). A malformed environment is a judge error.
    const model = c.judgeModel || options.judgeModel || defaultJudgeModel();
    if (!model) {
      record(NO_JUDGE_MODEL_ERROR);
      return;
    }
    const request = buildJudgeRequest({ criteria: c.criteria!, mode: c.judgeMode, input: c.input, output: result.output ?? contentAsString(output.content) });
    outcome = await runJudge(model, request, c.judgeMode, c.judgeThreshold, signal, { deadline });
  } catch (err) {
    record(`judge: ${describeError(err)}`);
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
    record("judge: returned no result");
  }
}

function captureEvidence(result: CaseResult, output: RunOutput): void {
  result.response = output;
  result.output = contentAsString(output.content);
  result.toolsCalled = toolsCalled(output);
  result.usage = usageFromMetrics(output.metrics);
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

/** Message of the TypeError recorded when a presentation hook returns a promise. */
export const SYNC_HOOK_MESSAGE = "presentation hooks must be sync callables; use setup/teardown for async work";

/**
 * Calls a presentation hook, which must be sync. A throw, or a returned promise, is recorded as
 * `hook: <name> <Error>: <message>` through `record`. Returns false when the hook failed.
 */
export function callSyncHook(name: string, call: () => unknown, record: (message: string) => void): boolean {
  try {
    const ret = call();
    if (isThenable(ret)) {
      // The async work has started and cannot be stopped; keep its failure from crashing the process.
      Promise.resolve(ret).catch(() => undefined);
      throw new TypeError(SYNC_HOOK_MESSAGE);
    }
    return true;
  } catch (err) {
    record(`hook: ${name} ${describeError(err)}`);
    return false;
  }
}

async function callMaybeAsync<T>(call: () => T): Promise<Awaited<T>> {
  return await call();
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as { then?: unknown }).then === "function";
}
