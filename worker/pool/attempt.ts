import type { ThreadMessage } from "../../shared/wire/thread.ts";
import type { AttemptFacts, PartialResult } from "./attempt-results.ts";
import type { PoolCaseRequest } from "./pool-request.ts";
import { AttemptWatchdog, type BlameCheck, type ThreadTerminator } from "./watchdog.ts";

/**
 * One attempt of a case on the pool, as the main side follows it: the thread's progress messages
 * (its phases move the watchdog, its commits are kept in case the thread dies), the case's cancel,
 * and the report of a cancelled case that no thread has started yet.
 */

/**
 * How long a cancelled case may go without a thread saying it started before it is reported as
 * not started, in ms. A thread that runs it says so within microseconds; one still loading takes seconds.
 */
export const NOT_STARTED_WAIT_MS = 250;

/** What an attempt shares with its pool. */
export interface AttemptPool {
  terminator: ThreadTerminator;
  /** Grace after a deadline or a cancel before the thread is terminated, in ms. */
  graceMs: number;
  /** Tells every thread to cancel the task. */
  broadcastCancel: (taskId: number) => void;
  /** Cancelled tasks no thread has started yet: told again to each thread that comes up. */
  cancelledUnstarted: Set<number>;
  /** The running attempts by task id: progress is routed to them, and blame looks them up. */
  attempts: Map<number, CaseAttempt>;
  /** Whether a case whose deadline passed is to blame for its thread not answering (CasePool's beacon check). */
  blame: BlameCheck;
}

/** Follows one attempt from its send until nobody needs its messages any more. */
export class CaseAttempt {
  readonly taskId: number;
  readonly attempt: number;
  /** `performance.now()` when the attempt began. */
  readonly started = performance.now();
  readonly watchdog: AttemptWatchdog;
  /** Resolves when a cancelled case has not been started by any thread within {@link NOT_STARTED_WAIT_MS}. */
  readonly notStarted: Promise<"not-started">;
  readonly #request: PoolCaseRequest;
  readonly #pool: AttemptPool;
  readonly #onCancel = (): void => this.#cancel();
  #giveUp!: () => void;
  #startWait: NodeJS.Timeout | undefined;
  #threadId: number | undefined;
  #phase = "queued";
  /** When each phase started on the thread (`performance.now()` on this side), for a result built here. */
  readonly #phaseStarts: Partial<Record<"setup" | "run" | "teardown", number>> = {};
  #partial: PartialResult | undefined;
  /** Nobody waits for the reply any more (reported not started), but the task may still run. */
  #abandoned = false;

  constructor(taskId: number, attempt: number, request: PoolCaseRequest, pool: AttemptPool) {
    this.taskId = taskId;
    this.attempt = attempt;
    this.#request = request;
    this.#pool = pool;
    this.watchdog = new AttemptWatchdog(pool.terminator, pool.graceMs, () => this.#threadId, taskId, pool.blame);
    this.notStarted = new Promise((resolve) => (this.#giveUp = () => resolve("not-started")));
    pool.attempts.set(taskId, this);
    if (request.signal.aborted) this.#cancel();
    else onAbort(request.signal, this.#onCancel);
  }

  /** The phase the thread last reported (`queued` before any). */
  get phase(): string {
    return this.#phase;
  }

  /** The thread running the case, once it said so. */
  get threadId(): number | undefined {
    return this.#threadId;
  }

  /** What the pool's own results for this attempt are built from. */
  facts(): AttemptFacts {
    const r = this.#request;
    const hooks = hookBounds(r);
    return {
      shell: r.shell,
      timeoutSeconds: r.timeoutSeconds,
      setupTimeoutSeconds: hooks.timeouts.setup,
      teardownTimeoutSeconds: hooks.timeouts.teardown,
      hasTeardown: r.hasTeardown,
      attempt: this.attempt,
      started: this.started,
      partial: this.#partial,
      threadId: this.#threadId,
      phaseStarts: { ...this.#phaseStarts },
    };
  }

  /**
   * Nobody waits for the reply (the case was reported not started), but the task may still reach
   * a thread: its messages keep being routed (a phase re-sends the cancel) and its watchdog kept
   * until `running` settles.
   */
  abandon(running: Promise<unknown>): void {
    this.#abandoned = true;
    void running.catch(() => undefined).finally(() => this.#release());
  }

  /** The attempt is over for its caller. */
  end(): void {
    clearTimeout(this.#startWait);
    offAbort(this.#request.signal, this.#onCancel);
    if (!this.#abandoned) this.#release();
  }

  /** A message of the thread about this attempt. */
  onProgress(m: ThreadMessage): void {
    if (m.kind === "phase") {
      // The thread posted `ready` before this, so a cancel it missed has been repeated by now.
      this.#pool.cancelledUnstarted.delete(this.taskId);
      clearTimeout(this.#startWait);
      this.#threadId = m.threadId;
      this.#phase = m.phase;
      this.#phaseStarts[m.phase] = performance.now();
      if (m.sessionId) this.#partial = { ...this.#partial, sessionId: m.sessionId };
      // Every phase has its own bound (the run its timeout, setup and teardown theirs): the
      // watchdog moves to it; a pending cancellation watchdog still applies.
      if (m.deadline !== undefined) this.watchdog.armPhase(m.phase, m.deadline);
      else this.watchdog.disarm();
      this.#request.onPhase?.(m.phase, m.deadline ?? null);
    } else if (m.kind === "commit") {
      this.#partial = { ...this.#partial, ...m.commit };
    } else if (m.kind === "event") {
      this.#request.onEvent?.(m.event);
    }
  }

  #cancel(): void {
    this.#pool.broadcastCancel(this.taskId);
    this.watchdog.armCancel();
    if (this.#threadId === undefined) {
      // No thread has said it started the case: most likely it waits for a thread still
      // starting up, which can take seconds. Report it at once as not started rather than wait
      // for a thread only to be told to skip it; the thread skips it when it gets there.
      this.#pool.cancelledUnstarted.add(this.taskId);
      this.#startWait = setTimeout(() => this.#threadId === undefined && this.#giveUp(), NOT_STARTED_WAIT_MS);
    }
  }

  /** Forgets the attempt: its routing, its watchdog, its pending cancel. */
  #release(): void {
    this.watchdog.clear();
    this.#pool.cancelledUnstarted.delete(this.taskId);
    if (this.#pool.attempts.get(this.taskId) === this) this.#pool.attempts.delete(this.taskId);
  }
}

/** A request's hook bounds: those of cases that set none, and the case's own (else those). */
export function hookBounds(r: PoolCaseRequest): { defaults: { setup: number; teardown: number }; timeouts: { setup: number; teardown: number } } {
  const defaults = r.hookDefaults;
  return { defaults, timeouts: r.hookTimeouts ?? defaults };
}

/**
 * The cases of a run share one abort signal, and an EventTarget checks every listener for a
 * duplicate on each add and remove: with 1,000 cases in flight that is quadratic. So each signal
 * gets one listener, which calls the cases' handlers kept in a set.
 */
const abortHandlers = new WeakMap<AbortSignal, Set<() => void>>();

function onAbort(signal: AbortSignal, handler: () => void): void {
  let set = abortHandlers.get(signal);
  if (!set) {
    const handlers = new Set<() => void>();
    set = handlers;
    abortHandlers.set(signal, handlers);
    signal.addEventListener(
      "abort",
      () => {
        for (const h of [...handlers]) h();
        handlers.clear();
      },
      { once: true },
    );
  }
  set.add(handler);
}

function offAbort(signal: AbortSignal, handler: () => void): void {
  abortHandlers.get(signal)?.delete(handler);
}
