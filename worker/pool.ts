import { randomUUID } from "node:crypto";
import { BroadcastChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import { CaseResult } from "../shared/result.ts";
import { ErrorCode, errorMessage, type ErrorInfo } from "../shared/errors.ts";
import { silentLogger, type Logger } from "../shared/logger.ts";
import { round3 } from "../shared/py-format.ts";
import { notStartedResult } from "./lifecycle.ts";
import {
  THREAD_PROTOCOL,
  ThreadBatchReplySchema,
  ThreadBroadcastReplySchema,
  ThreadMessageSchema,
  type CaseCommit,
  type ThreadBatch,
  type ThreadBroadcast,
  type ThreadCase,
  type ThreadMessage,
  type ThreadReply,
  type ThreadWorkerData,
} from "../shared/wire.ts";

/**
 * A piscina pool of worker threads that run cases, with a watchdog: a thread whose case ignores
 * its deadline (synchronous code blocking the event loop) is terminated after a grace period; the
 * case is recorded as timed out, and the other cases that shared the thread run again elsewhere.
 */

/** Default grace after a deadline (or a cancellation) before a thread is terminated, in seconds. */
export const DEFAULT_GRACE_SECONDS = 5;

/**
 * How long a cancelled case may go without a thread saying it started before it is reported as
 * not started, in ms. A thread that runs it says so within microseconds; one still loading takes seconds.
 */
export const NOT_STARTED_WAIT_MS = 250;

/** How often a case may be re-run because a thread-mate got its thread terminated. */
const MAX_COLLATERAL_RERUNS = 3;

/**
 * Most cases in one piscina task. A batch shares a thread, so it is also the most cases one
 * flush puts on a single thread; a flush of more is spread over the threads first.
 */
export const MAX_BATCH = 64;

/**
 * How long a case whose batch has finished may still go without its reply, in ms. The reply
 * travels on another port than the batch's end, so it may come a moment later; never arriving
 * means the thread died in between, and the case is handled as a crash.
 */
const LOST_REPLY_MS = 5_000;

/** Options of {@link CasePool}. */
export interface CasePoolOptions {
  /** Absolute path of the suite file every thread imports. */
  suitePath: string;
  /** Fingerprint of the suite as the caller loaded it. */
  fingerprint: string;
  /** Worker threads. Default 2. */
  threads?: number;
  /** Cases in flight across the pool; sets how many share one thread. Default 4. */
  concurrency?: number;
  /** Seconds after a deadline before a stuck thread is terminated. Default {@link DEFAULT_GRACE_SECONDS}. */
  graceSeconds?: number;
  /** Per-thread heap limit in MB (V8 old generation); a thread over it dies and only its cases fail. */
  threadMemoryMb?: number | null;
  /** Level for the threads' own loggers. Default `"warn"`. */
  logLevel?: string;
  logger?: Logger;
  /** Told each warning a thread reports (a failed MCP connection), one line each time a thread reports it. Default: logged. */
  onWarning?: ((message: string) => void) | null;
  /** Bring each case's raw response back from its thread. Default true; a distributed worker, which never publishes it, says false. */
  keepResponses?: boolean;
}

/** How long {@link CasePool.destroy} waits for threads to close their MCP clients, in milliseconds. */
export const RESOURCE_CLOSE_TIMEOUT_MS = 10_000;

/** One case to run on the pool. */
export interface PoolCaseRequest {
  index: number;
  name: string;
  /** Seconds, already resolved (flag, suite, 120). */
  defaultTimeout: number;
  /** The case's own timeout resolved against the default, in seconds (for the message of a terminated case). */
  timeoutSeconds: number;
  /** Whether the case has a teardown (to say it did not run when its thread is terminated). */
  hasTeardown: boolean;
  /** Identity of the case for results built on this side (a crash before the thread answered). */
  shell: () => CaseResult;
  /** Cancels the case: the thread aborts it and runs its teardown; past the grace, the thread is terminated. */
  signal: AbortSignal;
  /** Streamed events, forwarded from the thread (only when given). */
  onEvent?: (event: Record<string, unknown>) => void;
}

/** What the main side knows of a running case: its session and its commits. */
type PartialResult = Partial<CaseCommit> & { sessionId?: string };

type Attempt = { kind: "done"; result: CaseResult; crashed?: string } | { kind: "rerun"; why: string };

/** What became of a case on the pool. */
export interface PoolOutcome {
  result: CaseResult;
  /**
   * Set when the case has no verdict of its own because its thread died under it (an uncaught
   * error, out of memory): an infrastructure failure. Distributed workers hand such a case back
   * for redelivery; local mode records the result as it is.
   */
  crashed?: string;
}

/** The pool. Call {@link CasePool.destroy} when the run is over. */
export class CasePool {
  readonly #piscina: Piscina;
  readonly #options: Required<Omit<CasePoolOptions, "threadMemoryMb" | "onWarning">>;
  /** Threads this pool terminated: their other tasks are collateral and run again. */
  readonly #terminated = new Set<number>();
  /** The BroadcastChannel on which threads are told to close their resources before destroy. */
  readonly #channelName = `evalfleet.pool.${randomUUID()}`;
  /** Threads that opened resources (MCP clients) and must close them before destroy. */
  readonly #resourceThreads = new Set<number>();
  readonly #onWarning: (message: string) => void;
  /** Progress routing: the running attempts by task id. */
  readonly #attempts = new Map<number, (message: ThreadMessage) => void>();
  #nextTaskId = 0;
  /** Where cancels are broadcast to the threads (created on the first cancel). */
  #control: BroadcastChannel | undefined;
  /** Cancelled tasks no thread has started yet: told again to each thread that comes up. */
  readonly #cancelledUnstarted = new Set<number>();
  /** Cases asked for in this turn of the event loop, sent as batches once it ends. */
  #queued: Array<{ task: ThreadCase; reply: Deferred<ThreadReply> }> = [];
  /** Cases sent to a thread whose reply has not come yet, by task id. */
  readonly #awaitingReply = new Map<number, Deferred<ThreadReply>>();


  constructor(options: CasePoolOptions) {
    const threads = Math.max(1, options.threads ?? 2);
    const concurrency = Math.max(1, options.concurrency ?? 4);
    this.#options = {
      suitePath: options.suitePath,
      fingerprint: options.fingerprint,
      threads,
      concurrency,
      graceSeconds: options.graceSeconds ?? DEFAULT_GRACE_SECONDS,
      logLevel: options.logLevel ?? "warn",
      logger: options.logger ?? silentLogger(),
      keepResponses: options.keepResponses ?? true,
    };
    this.#piscina = new Piscina({
      filename: new URL("./thread-entry.mjs", import.meta.url).href,
      minThreads: threads,
      maxThreads: threads,
      concurrentTasksPerWorker: Math.ceil(concurrency / threads),
      idleTimeout: 60_000,
      atomics: "disabled",
      maxQueue: "auto",
      // Threads load tsx themselves; inheriting --import tsx as well would register it twice.
      execArgv: threadExecArgv(process.execArgv),
      // Threads open the control channel as they start, before their first task (see thread.ts).
      workerData: { controlChannel: this.#channelName } satisfies ThreadWorkerData,
      ...(options.threadMemoryMb ? { resourceLimits: { maxOldGenerationSizeMb: options.threadMemoryMb } } : {}),
    });
    // A crashed thread is handled per task; this keeps piscina's own error event from being unhandled.
    this.#piscina.on("error", (err: unknown) => this.#options.logger.warn({ err: errorMessage(err) }, "worker thread error"));
    // Progress of every task arrives here (piscina forwards what threads post on their parentPort).
    this.#piscina.on("message", (raw: unknown) => {
      const parsed = ThreadMessageSchema.safeParse(raw);
      if (!parsed.success) {
        this.#options.logger.warn("ignored a malformed message from a worker thread");
        return;
      }
      if (parsed.data.kind === "ready") {
        for (const taskId of this.#cancelledUnstarted) this.#broadcast({ kind: "cancel", taskId });
        return;
      }
      if (parsed.data.kind === "reply") {
        const waiting = this.#awaitingReply.get(parsed.data.taskId);
        this.#awaitingReply.delete(parsed.data.taskId);
        waiting?.resolve(parsed.data.reply);
        return;
      }
      this.#attempts.get(parsed.data.taskId)?.(parsed.data);
    });
    this.#onWarning = options.onWarning ?? ((message) => this.#options.logger.warn(message));
  }

  /** Runs one case; never throws. */
  async run(request: PoolCaseRequest): Promise<CaseResult> {
    return (await this.runOutcome(request)).result;
  }

  /** Runs one case and says whether its thread crashed under it; never throws. */
  async runOutcome(request: PoolCaseRequest): Promise<PoolOutcome> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.#attempt(request, attempt);
      if (outcome.kind === "done") return outcome.crashed ? { result: outcome.result, crashed: outcome.crashed } : { result: outcome.result };
      if (attempt > MAX_COLLATERAL_RERUNS) {
        const result = request.shell();
        result.attempts = attempt;
        result.addError(`worker: the case's thread died ${attempt} times before it could finish (last: ${outcome.why})`);
        return { result, crashed: outcome.why };
      }
    }
  }

  /**
   * Stops every thread. Threads that opened MCP clients are first told (on the pool's
   * BroadcastChannel) to close them, and waited for up to {@link RESOURCE_CLOSE_TIMEOUT_MS}:
   * terminating a thread would cut its clients without a goodbye.
   */
  async destroy(): Promise<void> {
    await this.#closeThreadResources();
    this.#control?.close();
    await this.#piscina.destroy();
  }

  #broadcast(message: ThreadBroadcast): void {
    if (!this.#control) {
      this.#control = new BroadcastChannel(this.#channelName);
      this.#control.unref();
    }
    this.#control.postMessage(message);
  }

  async #closeThreadResources(): Promise<void> {
    const waiting = new Set([...this.#resourceThreads].filter((id) => !this.#terminated.has(id) && this.#piscina.threads.some((t) => t.threadId === id)));
    if (waiting.size === 0) return;
    const channel = new BroadcastChannel(this.#channelName);
    try {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.#onWarning(`worker threads ${[...waiting].join(", ")} did not close their MCP clients within ${RESOURCE_CLOSE_TIMEOUT_MS / 1000}s; stopping them anyway`);
          resolve();
        }, RESOURCE_CLOSE_TIMEOUT_MS);
        channel.onmessage = (message: unknown) => {
          const reply = ThreadBroadcastReplySchema.safeParse((message as { data?: unknown })?.data);
          if (!reply.success) return;
          for (const e of reply.data.errors) this.#onWarning(e);
          waiting.delete(reply.data.threadId);
          if (waiting.size === 0) {
            clearTimeout(timer);
            resolve();
          }
        };
        const close: ThreadBroadcast = { kind: "close-resources" };
        channel.postMessage(close);
      });
    } finally {
      channel.close();
      this.#resourceThreads.clear();
    }
  }

  async #attempt(request: PoolCaseRequest, attempt: number): Promise<Attempt> {
    const started = performance.now();
    const taskId = this.#nextTaskId++;
    const grace = this.#options.graceSeconds * 1000;
    let threadId: number | undefined;
    let phase = "queued";
    let partial: PartialResult | undefined;
    let killedFor: "timeout" | "cancel" | undefined;
    let watchdog: NodeJS.Timeout | undefined;
    let watchdogAt = Infinity;

    const arm = (at: number, reason: "timeout" | "cancel"): void => {
      if (at >= watchdogAt) return;
      clearTimeout(watchdog);
      watchdogAt = at;
      watchdog = setTimeout(() => {
        if (threadId === undefined) return;
        killedFor = reason;
        this.#terminate(threadId);
      }, Math.max(0, at - Date.now()));
    };
    let abandoned = false;
    let giveUp!: () => void;
    const notStarted = new Promise<"not-started">((resolve) => (giveUp = () => resolve("not-started")));
    let startWait: NodeJS.Timeout | undefined;
    /** Forgets the attempt: its routing, its watchdog, its pending cancel. */
    const release = (): void => {
      clearTimeout(watchdog);
      this.#cancelledUnstarted.delete(taskId);
      this.#attempts.delete(taskId);
    };
    this.#attempts.set(taskId, (m) => {
      if (m.kind === "phase") {
        // The thread posted `ready` before this, so a cancel it missed has been repeated by now.
        this.#cancelledUnstarted.delete(taskId);
        clearTimeout(startWait);
        threadId = m.threadId;
        phase = m.phase;
        if (m.sessionId) partial = { ...partial, sessionId: m.sessionId };
        if (m.phase === "run" && m.deadline !== undefined) arm(m.deadline + grace, "timeout");
        if (m.phase === "teardown") {
          // The deadline no longer applies; a pending cancellation watchdog still does.
          if (!request.signal.aborted) {
            clearTimeout(watchdog);
            watchdogAt = Infinity;
          }
        }
      } else if (m.kind === "commit") {
        partial = { ...partial, ...m.commit };
      } else if (m.kind === "event") {
        request.onEvent?.(m.event);
      }
    });
    const onCancel = (): void => {
      this.#broadcast({ kind: "cancel", taskId });
      arm(Date.now() + grace, "cancel");
      if (threadId === undefined) {
        // No thread has said it started the case: most likely it waits for a thread still
        // starting up, which can take seconds. Report it at once as not started rather than wait
        // for a thread only to be told to skip it; the thread skips it when it gets there.
        this.#cancelledUnstarted.add(taskId);
        startWait = setTimeout(() => threadId === undefined && giveUp(), NOT_STARTED_WAIT_MS);
      }
    };
    if (request.signal.aborted) onCancel();
    else onAbort(request.signal, onCancel);

    const running = this.#send({
      taskId,
      index: request.index,
      name: request.name,
      defaultTimeout: request.defaultTimeout,
      attempt,
      forwardEvents: Boolean(request.onEvent),
    });
    try {
      // Validated with the message that carried it (ThreadMessageSchema).
      const raw = await Promise.race([running, notStarted]);
      if (raw === "not-started") {
        abandoned = true;
        // The task may still reach a thread: keep routing its messages (a phase re-sends the
        // cancel) and its watchdog until it settles, but nobody waits for its reply.
        void running.catch(() => undefined).finally(release);
        return { kind: "done", result: notStartedResult(request.shell(), attempt) };
      }
      if (raw.resources) this.#resourceThreads.add(raw.resources.threadId);
      for (const w of raw.warnings ?? []) this.#onWarning(w);
      if (raw.kind === "error") return { kind: "done", result: this.#failed(request, attempt, started, `worker: ${describeInfo(raw.error)}`) };
      return { kind: "done", result: CaseResult.fromData(raw.result) };
    } catch (err) {
      if (killedFor) return { kind: "done", result: this.#terminatedResult(request, attempt, started, partial, killedFor, phase, threadId) };
      // A thread-mate of a terminated case did nothing wrong, and a case that never started
      // cannot have caused the crash that took its queued task down: both run again.
      if (threadId === undefined || this.#terminated.has(threadId)) return { kind: "rerun", why: errorMessage(err) };
      return { kind: "done", result: this.#crashedResult(request, attempt, started, partial, err, threadId), crashed: errorMessage(err) };
    } finally {
      clearTimeout(startWait);
      offAbort(request.signal, onCancel);
      if (!abandoned) release();
    }
  }

  /** Queues a case for the next batch; resolves to its reply, rejects when its thread dies. */
  #send(task: ThreadCase): Promise<ThreadReply> {
    const reply = deferred<ThreadReply>();
    if (this.#queued.length === 0) setImmediate(() => this.#flush());
    this.#queued.push({ task, reply });
    return reply.promise;
  }

  /** Sends the queued cases, spread over the threads, at most {@link MAX_BATCH} per piscina task. */
  #flush(): void {
    const queued = this.#queued;
    this.#queued = [];
    const size = Math.min(MAX_BATCH, Math.ceil(queued.length / Math.min(this.#options.threads, queued.length)));
    for (let i = 0; i < queued.length; i += size) this.#runBatch(queued.slice(i, i + size));
  }

  #runBatch(items: Array<{ task: ThreadCase; reply: Deferred<ThreadReply> }>): void {
    for (const { task, reply } of items) this.#awaitingReply.set(task.taskId, reply);
    const batch: ThreadBatch = {
      protocol: THREAD_PROTOCOL,
      suitePath: this.#options.suitePath,
      fingerprint: this.#options.fingerprint,
      logLevel: this.#options.logLevel,
      keepResponses: this.#options.keepResponses,
      cases: items.map((x) => x.task),
    };
    // Only the ids are kept past this point: a reply already received must not be held by the
    // batch (its end often comes before the last replies, and may wait for them a while).
    const ids = items.map((x) => x.task.taskId);
    /** Settles every case of the batch still waiting for its reply. */
    const settleWaiting = (waitingIds: number[], settle: (reply: Deferred<ThreadReply>) => void): void => {
      for (const id of waitingIds) {
        const waiting = this.#awaitingReply.get(id);
        if (!waiting) continue;
        this.#awaitingReply.delete(id);
        settle(waiting);
      }
    };
    this.#piscina.run({ batch }).then(
      (raw: unknown) => {
        const done = ThreadBatchReplySchema.safeParse(raw);
        if (!done.success) {
          const error = { code: ErrorCode.WireInvalid, name: "EvalfleetError", message: `malformed reply from thread: ${done.error.issues[0]?.message}` };
          settleWaiting(ids, (w) => w.resolve({ kind: "error", error }));
        } else if (done.data.kind === "error") {
          const error = done.data.error;
          settleWaiting(ids, (w) => w.resolve({ kind: "error", error }));
        } else {
          const missing = ids.filter((id) => this.#awaitingReply.has(id));
          if (missing.length === 0) return;
          setTimeout(() => settleWaiting(missing, (w) => w.reject(new Error(`the thread finished the case but its result never arrived within ${LOST_REPLY_MS / 1000}s`))), LOST_REPLY_MS).unref();
        }
      },
      (err: unknown) => settleWaiting(ids, (w) => w.reject(err)),
    );
  }

  #terminate(threadId: number): void {
    // Every case of a stuck thread asks for its end; one terminate is enough.
    if (this.#terminated.has(threadId)) return;
    const thread = this.#piscina.threads.find((t) => t.threadId === threadId);
    if (!thread) return;
    this.#terminated.add(threadId);
    this.#options.logger.warn({ threadId }, "terminating a worker thread whose case ignored its deadline");
    void thread.terminate();
  }

  #failed(request: PoolCaseRequest, attempt: number, started: number, message: string): CaseResult {
    const result = request.shell();
    result.attempts = attempt;
    result.durationSeconds = round3((performance.now() - started) / 1000);
    result.addError(message);
    return result;
  }

  #fromPartial(request: PoolCaseRequest, attempt: number, started: number, partial: PartialResult | undefined, threadId?: number): CaseResult {
    const result = request.shell();
    if (partial) Object.assign(result, partial);
    result.attempts = attempt;
    if (threadId !== undefined) result.worker = `thread-${threadId}`;
    result.durationSeconds = round3((performance.now() - started) / 1000);
    return result;
  }

  #terminatedResult(request: PoolCaseRequest, attempt: number, started: number, partial: PartialResult | undefined, reason: "timeout" | "cancel", phase: string, threadId?: number): CaseResult {
    const result = this.#fromPartial(request, attempt, started, partial, threadId);
    const grace = this.#options.graceSeconds;
    if (reason === "timeout") {
      if (!result.timedOut) {
        result.timedOut = true;
        result.addError(`timeout: exceeded ${request.timeoutSeconds}s`);
      }
      result.addError(`worker: thread terminated ${grace}s after the deadline: synchronous code ignored the timeout`);
    } else {
      if (!result.error?.includes("cancelled:")) result.addError("cancelled: suite cancelled while the case was running");
      result.addError(`worker: thread terminated ${grace}s after cancellation: the case ignored the abort (${phase})`);
    }
    if (request.hasTeardown && phase !== "done") result.addError("cleanup: teardown not run (thread terminated)");
    return result;
  }

  #crashedResult(request: PoolCaseRequest, attempt: number, started: number, partial: PartialResult | undefined, err: unknown, threadId?: number): CaseResult {
    const result = this.#fromPartial(request, attempt, started, partial, threadId);
    const code = (err as { code?: unknown })?.code;
    const why = code === "ERR_WORKER_OUT_OF_MEMORY" ? `ran out of memory (per-thread limit): ${errorMessage(err)}` : errorMessage(err);
    result.addError(`worker: thread crashed: ${why}`);
    if (request.hasTeardown) result.addError("cleanup: teardown not run (thread crashed)");
    return result;
  }
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
    signal.addEventListener("abort", () => {
      for (const h of [...handlers]) h();
      handlers.clear();
    }, { once: true });
  }
  set.add(handler);
}

function offAbort(signal: AbortSignal, handler: () => void): void {
  abortHandlers.get(signal)?.delete(handler);
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

function describeInfo(info: ErrorInfo): string {
  return info.code === ErrorCode.Internal ? `${info.name}: ${info.message}` : info.message;
}

/**
 * The parent's flags that a worker thread may inherit. Per-process flags (`--expose-gc`,
 * `--max-old-space-size`, `--inspect`, ...) make `new Worker` throw, and tsx must not be registered
 * twice (the thread entry registers it), so only flags that shape module loading and diagnostics pass.
 */
export function threadExecArgv(parent: readonly string[]): string[] {
  const keep: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    const a = parent[i]!;
    if (a === "--conditions" || a === "-C") {
      if (parent[i + 1] !== undefined) keep.push(a, parent[i + 1]!);
      i++;
    } else if (/^(--conditions=|-C=|--enable-source-maps$|--no-warnings$|--no-deprecation$|--trace-warnings$|--experimental-)/.test(a)) {
      keep.push(a);
    } else if ((a === "--import" || a === "--require" || a === "-r" || a === "--loader") && parent[i + 1] !== undefined) {
      i++; // a preload of the parent (tsx, a tracer) is not the thread's business
    }
  }
  return keep;
}
