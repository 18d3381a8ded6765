import type { CaseResult } from "../../shared/result/result.ts";
import { ErrorCode, errorMessage, type ErrorInfo } from "../../shared/errors.ts";
import { round3 } from "../../shared/py-format.ts";
import type { CaseCommit } from "../../shared/wire/result-data.ts";
import type { KillReason } from "./watchdog.ts";

/**
 * The results the pool writes itself, for a case whose thread could not give one: the thread was
 * terminated by the watchdog, crashed, refused the case, or kept dying under it. Each keeps what
 * the thread committed before it went (evidence, verdicts, errors). No I/O.
 */

/** What the main side knows of a running case: its session and its commits. */
export type PartialResult = Partial<CaseCommit> & { sessionId?: string };

/** One attempt of a case, as far as its result is concerned. */
export interface AttemptFacts {
  /** Identity of the case (a result shell built on this side). */
  shell: () => CaseResult;
  /** The case's timeout, in seconds (for the message of a terminated case). */
  timeoutSeconds: number;
  /** The case's setup bound, in seconds (for the message of a case terminated in its setup). */
  setupTimeoutSeconds: number;
  /** The case's teardown bound, in seconds (for the message of a case terminated in its teardown). */
  teardownTimeoutSeconds: number;
  hasTeardown: boolean;
  /** 1-based. */
  attempt: number;
  /** `performance.now()` when the attempt began. */
  started: number;
  /** What the thread committed before it went. */
  partial?: PartialResult;
  /** The thread that ran it, once known. */
  threadId?: number;
  /** When each phase started on the thread, as this side saw it (`performance.now()`). */
  phaseStarts?: Partial<Record<"setup" | "run" | "teardown", number>>;
}

function elapsedSeconds(started: number): number {
  return round3((performance.now() - started) / 1000);
}

/** The thread could not run the case (the suite would not load, the case is not in it): the error, as the thread gave it. */
export function threadErrorResult(facts: AttemptFacts, error: ErrorInfo): CaseResult {
  const result = facts.shell();
  result.attempts = facts.attempt;
  result.durationSeconds = elapsedSeconds(facts.started);
  // An unexpected error is named by its class; an evalfleet error's message says it all.
  // A failure that may pass next time (the thread lost) is the infrastructure's; a suite that will not load is not.
  result.addError(`worker: ${error.code === ErrorCode.Internal ? `${error.name}: ${error.message}` : error.message}`, error.retryable ? "infra" : "agent");
  return result;
}

function fromPartial(facts: AttemptFacts): CaseResult {
  const result = facts.shell();
  if (facts.partial) Object.assign(result, facts.partial);
  result.attempts = facts.attempt;
  if (facts.threadId !== undefined) result.worker = `thread-${facts.threadId}`;
  result.durationSeconds = elapsedSeconds(facts.started);
  result.phaseSeconds = phaseSecondsFrom(facts.phaseStarts ?? {}, performance.now());
  return result;
}

/**
 * Seconds per phase from when each phase started, as seen on this side of the thread, up to `end`.
 * This side cannot tell the run from its checks: both count as `run`.
 */
export function phaseSecondsFrom(starts: Partial<Record<"setup" | "run" | "teardown", number>>, end: number): { setup: number; run: number; checks: number; teardown: number } {
  const span = (from: number | undefined, to: number | undefined): number => (from === undefined ? 0 : round3(Math.max(0, (to ?? end) - from) / 1000));
  return { setup: span(starts.setup, starts.run ?? starts.teardown), run: span(starts.run, starts.teardown), checks: 0, teardown: span(starts.teardown, undefined) };
}

/** How a terminated case's thread was stopped: why, in which phase, and how long after the deadline it really went. */
export interface Termination {
  reason: KillReason;
  /** The phase the thread last reported. */
  phase: string;
  /** Seconds from the deadline (or the cancel) to the thread's end, as measured. */
  afterSeconds: number;
}

/**
 * The watchdog terminated the case's thread: over its timeout, its setup or teardown bound (or
 * cancelled), with what the case had committed. The message says how long after the deadline the
 * thread really went (the grace, plus whatever it took to stop it).
 */
export function terminatedResult(facts: AttemptFacts, how: Termination): CaseResult {
  const result = fromPartial(facts);
  const after = `${how.afterSeconds.toFixed(1)}s`;
  const { reason, phase } = how;
  if (reason === "timeout") {
    if (!result.timedOut) {
      result.timedOut = true;
      result.addError(`timeout: exceeded ${facts.timeoutSeconds}s`, null);
    }
    result.addError(`worker: thread terminated ${after} after the deadline: synchronous code ignored the timeout`, null);
  } else if (reason === "setup") {
    result.addError(`setup: exceeded ${facts.setupTimeoutSeconds}s`);
    result.addError(`worker: thread terminated ${after} after the setup deadline: synchronous code ignored the bound`);
    // Setup never completed, so teardown was never due (Agno D7).
    return result;
  } else if (reason === "teardown") {
    result.addError(`cleanup: teardown exceeded ${facts.teardownTimeoutSeconds}s`);
    result.addError(`worker: thread terminated ${after} after the teardown deadline: synchronous code ignored the bound`);
    return result;
  } else {
    if (!result.error?.includes("cancelled:")) result.addError("cancelled: suite cancelled while the case was running", "infra");
    result.addError(`worker: thread terminated ${after} after cancellation: the case ignored the abort (${phase})`, "infra");
  }
  if (facts.hasTeardown && phase !== "done" && phase !== "setup") result.addError("cleanup: teardown not run (thread terminated)", null);
  return result;
}

/** The case's thread crashed under it (an uncaught error, out of memory, a lost reply). */
export function crashedResult(facts: AttemptFacts, err: unknown): CaseResult {
  const result = fromPartial(facts);
  const code = (err as { code?: unknown })?.code;
  const why = code === "ERR_WORKER_OUT_OF_MEMORY" ? `ran out of memory (per-thread limit): ${errorMessage(err)}` : errorMessage(err);
  // A thread lost under the case: the infrastructure's failure (distributed workers hand it back).
  result.addError(`worker: thread crashed: ${why}`, "infra");
  if (facts.hasTeardown) result.addError("cleanup: teardown not run (thread crashed)", null);
  return result;
}

/** The case was run again each time a thread-mate got its thread terminated, and never finished. */
export function rerunsExhaustedResult(shell: () => CaseResult, attempt: number, lastWhy: string): CaseResult {
  const result = shell();
  result.attempts = attempt;
  result.addError(`worker: the case's thread died ${attempt} times before it could finish (last: ${lastWhy})`, "infra");
  return result;
}
