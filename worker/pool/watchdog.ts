import type { Piscina } from "piscina";
import type { Logger } from "../../shared/logger.ts";

/**
 * The pool's watchdog. A case runs in a thread, and synchronous code can block that thread's
 * event loop so that not even the case's own deadline fires: stage 1 of every bound (the
 * lifecycle's timers: the AbortSignal of the run, the bounds of setup and teardown) cannot help.
 * Stage 2 lives here, on the main side: a grace period after a phase's deadline (or after a
 * cancel) the thread is terminated, piscina replaces it, and the case whose code blocked the
 * thread is recorded as over its bound (or cancelled); its thread-mates run again. A reply that
 * never arrives after its batch ended is the other sign of a dead thread, and is timed here too.
 */

/**
 * Why the watchdog terminated a case's thread: its run passed its timeout (`timeout`), its setup
 * or teardown hook passed its bound (`setup`, `teardown`), or it ignored a cancel (`cancel`).
 */
export type KillReason = "timeout" | "setup" | "teardown" | "cancel";

/** A phase of a case that has a deadline, as the thread reports it. */
export type BoundedPhase = "setup" | "run" | "teardown";

/** The kill reason of a phase that passed its deadline. */
const REASON_OF: Readonly<Record<BoundedPhase, KillReason>> = { setup: "setup", run: "timeout", teardown: "teardown" };

/**
 * Decides, when a case's deadline plus the grace has passed, whether that case is to blame for its
 * thread not answering (true: terminate now), or another case of the thread is (false: that case's
 * own watchdog will terminate the thread at its own deadline). See CasePool's blame.
 */
export type BlameCheck = (threadId: number, taskId: number, deadline: number) => boolean;

/**
 * How long a case whose batch has finished may still go without its reply, in ms. The reply
 * travels on another port than the batch's end, so it may come a moment later; never arriving
 * means the thread died in between, and the case is handled as a crash.
 */
export const LOST_REPLY_MS = 5_000;

/** Terminates stuck threads, once each, and remembers which: their other cases are collateral. */
export class ThreadTerminator {
  readonly #piscina: Piscina;
  readonly #logger: Logger;
  /** Threads terminated by the watchdog. */
  readonly #terminated = new Set<number>();

  constructor(piscina: Piscina, logger: Logger) {
    this.#piscina = piscina;
    this.#logger = logger;
  }

  /** Whether the watchdog terminated this thread (a case that died with it did nothing wrong). */
  terminated(threadId: number): boolean {
    return this.#terminated.has(threadId);
  }

  /** Terminates a thread whose case ignored its deadline or its cancel. */
  terminate(threadId: number): void {
    // Every case of a stuck thread asks for its end; one terminate is enough.
    if (this.#terminated.has(threadId)) return;
    const thread = this.#piscina.threads.find((t) => t.threadId === threadId);
    if (!thread) return;
    this.#terminated.add(threadId);
    this.#logger.warn({ threadId }, "terminating a worker thread whose case ignored its deadline");
    void thread.terminate();
  }
}

/**
 * One attempt's watchdog: armed at the current phase's deadline plus the grace each time the
 * thread says a phase started (setup, run and teardown each have a bound), and at a cancel plus
 * the grace; the earliest of the two timers wins. It fires only once the thread running the case
 * is known, and terminates the thread only when this case is to blame ({@link BlameCheck}).
 */
export class AttemptWatchdog {
  readonly #terminator: ThreadTerminator;
  readonly #graceMs: number;
  readonly #taskId: number;
  readonly #blame: BlameCheck;
  /** The thread running the case, once it said so. */
  readonly #threadId: () => number | undefined;
  #phaseTimer: NodeJS.Timeout | undefined;
  #cancelTimer: NodeJS.Timeout | undefined;
  #killedFor: KillReason | undefined;
  /** The deadline (epoch ms) whose passing got the thread terminated. */
  #killDeadline: number | undefined;

  constructor(terminator: ThreadTerminator, graceMs: number, threadId: () => number | undefined, taskId = -1, blame: BlameCheck = () => true) {
    this.#terminator = terminator;
    this.#graceMs = graceMs;
    this.#threadId = threadId;
    this.#taskId = taskId;
    this.#blame = blame;
  }

  /** Why the thread was terminated under this attempt, if it was. */
  get killedFor(): KillReason | undefined {
    return this.#killedFor;
  }

  /** The deadline (epoch ms) whose passing got the thread terminated, if it was. */
  get killDeadline(): number | undefined {
    return this.#killDeadline;
  }

  /** Whether a timer is still to fire (a blocked thread-mate may defer to this case). */
  get armed(): boolean {
    return this.#phaseTimer !== undefined || this.#cancelTimer !== undefined;
  }

  /** A phase started with its deadline (epoch ms): the previous phase's timer no longer applies. */
  armPhase(phase: BoundedPhase, deadline: number): void {
    clearTimeout(this.#phaseTimer);
    this.#phaseTimer = this.#schedule(deadline, REASON_OF[phase], () => (this.#phaseTimer = undefined));
  }

  /** The case was cancelled: now plus the grace (once). */
  armCancel(): void {
    if (this.#cancelTimer !== undefined) return;
    this.#cancelTimer = this.#schedule(Date.now(), "cancel", () => (this.#cancelTimer = undefined));
  }

  /** The current phase's deadline no longer applies; a pending cancellation watchdog still does. */
  disarm(): void {
    clearTimeout(this.#phaseTimer);
    this.#phaseTimer = undefined;
  }

  /** Stops the timers (the attempt is over). */
  clear(): void {
    clearTimeout(this.#phaseTimer);
    clearTimeout(this.#cancelTimer);
    this.#phaseTimer = undefined;
    this.#cancelTimer = undefined;
  }

  #schedule(deadline: number, reason: KillReason, spent: () => void): NodeJS.Timeout {
    return setTimeout(() => {
      spent();
      const threadId = this.#threadId();
      // A thread already terminated for another case: this one is collateral and runs again.
      if (threadId === undefined || this.#killedFor || this.#terminator.terminated(threadId)) return;
      if (!this.#blame(threadId, this.#taskId, deadline)) return;
      this.#killedFor = reason;
      this.#killDeadline = deadline;
      this.#terminator.terminate(threadId);
    }, Math.max(0, deadline + this.#graceMs - Date.now()));
  }
}

/**
 * Gives the cases whose batch has finished {@link LOST_REPLY_MS} for their replies; those still
 * waiting then are told `onLost` (their thread died between the case's end and its reply).
 */
export function watchLostReplies(taskIds: readonly number[], onLost: (taskIds: readonly number[], why: string) => void): void {
  if (taskIds.length === 0) return;
  setTimeout(() => onLost(taskIds, `the thread finished the case but its result never arrived within ${LOST_REPLY_MS / 1000}s`), LOST_REPLY_MS).unref();
}
