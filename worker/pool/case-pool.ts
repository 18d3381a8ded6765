import { BroadcastChannel } from "node:worker_threads";
import type { Piscina } from "piscina";
import { CaseResult } from "../../shared/result/result.ts";
import { errorMessage } from "../../shared/errors.ts";
import { silentLogger, type Logger } from "../../shared/logger.ts";
import { endProcessTrees, type TrackedProcess } from "../../shared/process/process-tree.ts";
import { notStartedResult } from "../runtime/lifecycle.ts";
import type { ResponseStore } from "../models/response-cache.ts";
import { ThreadBroadcastReplySchema, ThreadMessageSchema, type ThreadBroadcast, type ThreadCase, type ThreadMessage, type ThreadReply } from "../../shared/wire/thread.ts";
import { plainlyValidThreadMessage } from "../../shared/wire/thread-message-check.ts";
import { CaseAttempt, hookBounds, type AttemptPool } from "./attempt.ts";
import { crashedResult, rerunsExhaustedResult, terminatedResult, threadErrorResult } from "./attempt-results.ts";
import { CaseBatcher } from "./batching.ts";
import { ThreadTerminator } from "./watchdog.ts";
import { readBeacon } from "./thread-beacon.ts";
import type { PoolCaseRequest } from "./pool-request.ts";
import { LimiterHost, type LimiterHostEvents } from "./limiter-host.ts";
import { localProcessLimiter } from "../../shared/providers/process-limiter.ts";
import type { ProviderLimiter } from "../../shared/providers/limiter.ts";
import { PrestartedThreads, threadShape } from "./prestarted-threads.ts";
import type { SuiteModule } from "../../shared/suite/suite.ts";

/**
 * A piscina pool of worker threads that run cases. Cases travel to the threads in batches
 * (batching.ts); each attempt is followed on this side (attempt.ts) under a watchdog
 * (watchdog.ts): a thread whose case ignores a phase's deadline (synchronous code blocking the
 * event loop in setup, the run or teardown) is terminated after a grace period; the case whose
 * code blocked it (the thread's beacon says which, thread-beacon.ts) is recorded as over its bound
 * (attempt-results.ts), and the other cases that shared the thread run again elsewhere. A thread
 * that crashes (an unhandled rejection, out of memory) is handled the same way: the case whose
 * code crashed it fails, its thread-mates run again. The processes a dead thread's cases started
 * are ended with it.
 */


/** How often a case may be re-run because a thread-mate got its thread terminated. */
const MAX_COLLATERAL_RERUNS = 3;

/** Options of {@link CasePool}. */
/** Where the threads' fleet cassettes are kept (shared/broker/cassette-bucket.ts's BucketCassetteStore in a worker process). */
export interface FleetCassetteBucket {
  /** The cassette's text, or null when there is none. */
  get(name: string): Promise<string | null>;
  /** Writes (replaces) a cassette. */
  put(name: string, text: string): Promise<void>;
}

export interface CasePoolOptions {
  /** Absolute path of the suite file every thread imports. */
  suitePath: string;
  /** Fingerprint of the suite as the caller loaded it. */
  fingerprint: string;
  /** The module the caller imported for the suite (`LoadedSuite.module`): the threads import the same. Default: each works it out. */
  suiteModule?: SuiteModule | null;
  /**
   * Threads started earlier ({@link PrestartedThreads.start}, while the suite was loading): used
   * when they were started with this pool's thread count and memory limit, else discarded.
   */
  prestarted?: PrestartedThreads | null;
  /** Worker threads, >= 1 (the caller's config compiled it: `--threads`, else the smaller of the CPUs and `concurrency`). */
  threads: number;
  /** Cases in flight across the pool, >= 1; sets how many share one thread (the caller's config compiled it: `--concurrency`). */
  concurrency: number;
  /** Milliseconds after a deadline before a stuck thread is terminated (the run's compiled `graceMs`, or a worker's `--grace`). */
  graceMs: number;
  /** Per-thread heap limit in MB (V8 old generation); a thread over it dies and only its cases fail. */
  threadMemoryMb?: number | null;
  /** Level for the threads' own loggers (the caller's config resolved it). */
  logLevel: string;
  logger?: Logger;
  /** Told each warning a thread reports (a failed MCP connection), one line each time a thread reports it. Default: logged. */
  onWarning?: ((message: string) => void) | null;
  /** Bring each case's raw response back from its thread. Default true; a distributed worker, which never publishes it, says false. */
  keepResponses?: boolean;
  /**
   * The limiter every thread's model calls ask for permits (read at each request): in distributed
   * mode the fleet's (the coordinator grants them). Default: this process's local limiter.
   */
  limiter?: (() => ProviderLimiter) | null;
  /** Told of each permit the threads got and gave back (a worker's metrics). Default: nobody. */
  limiterEvents?: LimiterHostEvents | null;
  /** The fleet's shared response cache (`--cache shared`), which threads reach through the pool. Default none: their lookups miss. */
  sharedCache?: ResponseStore | null;
}

// The threads are started apart from the pool (prestarted-threads.ts): the CLI starts them while the suite loads.
export { PrestartedThreads, threadEntry, threadExecArgv, threadShape, type SuitePreload, type ThreadShape } from "./prestarted-threads.ts";

/** How long {@link CasePool.destroy} waits for threads to close their MCP clients, in milliseconds. */
export const RESOURCE_CLOSE_TIMEOUT_MS = 10_000;


/**
 * What a thread is sent for one attempt of a case. The optional settings are set only when they
 * say something (the thread's plain batch check wants them absent, not undefined), by assignment:
 * a spread per setting cost an object each, for every case.
 */
function threadCase(taskId: number, attempt: number, request: PoolCaseRequest): ThreadCase {
  const hooks = hookBounds(request).defaults;
  const task: ThreadCase = {
    taskId,
    index: request.index,
    name: request.name,
    defaultTimeout: request.defaultTimeout,
    setupTimeout: hooks.setup,
    teardownTimeout: hooks.teardown,
    maxOutputBytes: request.maxOutputBytes,
    attempt,
    forwardEvents: Boolean(request.onEvent),
  };
  if (request.runEvalFunctions && request.runEvalFunctions.length > 0) task.evalFunctions = [...request.runEvalFunctions];
  if (request.scoringMethod) task.scoringMethod = request.scoringMethod;
  if (request.traceparent) {
    task.traceparent = request.traceparent;
    if (request.traceAs) task.traceAs = request.traceAs;
  }
  if (request.maxTranscriptBytes && request.maxTranscriptBytes > 0) task.maxTranscriptBytes = request.maxTranscriptBytes;
  if (request.replay) task.replay = request.replay as unknown as Record<string, unknown>;
  if (request.judgeModel) task.judgeModel = request.judgeModel;
  if (request.repeat && request.repeat > 1) task.repeat = request.repeat;
  if (request.cache) task.cache = request.cache;
  if (request.cassette) task.cassette = request.cassette;
  return task;
}

/** How one attempt ended: with a result, or to be run again (its thread was terminated for a thread-mate). */
type AttemptEnd = { kind: "done"; result: CaseResult; crashed?: string } | { kind: "rerun"; why: string };

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
  readonly #options: Required<Omit<CasePoolOptions, "threadMemoryMb" | "onWarning" | "limiter" | "limiterEvents" | "sharedCache" | "suiteModule" | "prestarted">>;
  /** Serves the threads' permits from this process's one limiter. */
  readonly #limiterHost: LimiterHost;
  readonly #limiterChannel: string;
  readonly #onWarning: (message: string) => void;
  /** The shared response cache the threads' lookups go to, or null. */
  #sharedCache: ResponseStore | null;
  /** The fleet's cassette bucket the threads' `--record nats` / `--replay nats` requests go to, or null. */
  #cassettes: FleetCassetteBucket | null = null;
  /** Terminates stuck threads and remembers which: their other tasks are collateral and run again. */
  readonly #terminator: ThreadTerminator;
  readonly #batcher: CaseBatcher;
  /** What every attempt shares with the pool: the watchdog's terminator, cancels, progress routing. */
  readonly #attemptPool: AttemptPool;
  /** The BroadcastChannel on which threads are told to cancel a task, and to close their resources before destroy. */
  readonly #channelName: string;
  /** Threads that opened resources (MCP clients) and must close them before destroy. */
  readonly #resourceThreads = new Set<number>();
  #nextTaskId = 0;
  /** Where cancels are broadcast to the threads (created on the first cancel). */
  #control: BroadcastChannel | undefined;
  /** Each thread's beacon (its heartbeat and the task whose code it runs), from its `ready`. */
  readonly #beacons = new Map<number, SharedArrayBuffer>();
  /** Processes started by cases still running, per thread and task: ended if the thread dies. */
  readonly #processes = new Map<number, Map<number, TrackedProcess[]>>();
  /** Threads whose death was handled, with the task to blame for a crash (null: unknown). */
  readonly #deadThreads = new Map<number, number | null>();

  constructor(options: CasePoolOptions) {
    const shape = threadShape(options);
    const { threads, concurrency } = shape;
    this.#options = {
      suitePath: options.suitePath,
      fingerprint: options.fingerprint,
      threads,
      concurrency,
      graceMs: options.graceMs,
      logLevel: options.logLevel,
      logger: options.logger ?? silentLogger(),
      keepResponses: options.keepResponses ?? true,
    };
    const started = options.prestarted?.adopt(shape) ?? PrestartedThreads.start(shape, options.suiteModule ? { path: options.suitePath, module: options.suiteModule } : null);
    this.#piscina = started.piscina;
    this.#channelName = started.controlChannel;
    this.#limiterChannel = started.limiterChannel;
    this.#onWarning = options.onWarning ?? ((message) => this.#options.logger.warn(message));
    const limiter = options.limiter ?? (() => localProcessLimiter());
    this.#limiterHost = new LimiterHost(this.#limiterChannel, limiter, options.limiterEvents ?? {});
    this.#sharedCache = options.sharedCache ?? null;
    this.#terminator = new ThreadTerminator(this.#piscina, this.#options.logger);
    this.#batcher = new CaseBatcher(this.#piscina, {
        suitePath: options.suitePath,
        ...(options.suiteModule ? { suiteModule: options.suiteModule } : {}),
        fingerprint: options.fingerprint,
        logLevel: this.#options.logLevel,
        keepResponses: this.#options.keepResponses,
      }, threads);
    this.#attemptPool = {
      terminator: this.#terminator,
      graceMs: this.#options.graceMs,
      broadcastCancel: (taskId) => this.#broadcast({ kind: "cancel", taskId }),
      cancelledUnstarted: new Set(),
      attempts: new Map(),
      blame: (threadId, taskId, deadline) => this.#toBlame(threadId, taskId, deadline),
    };
    // A crashed thread is handled per task; this keeps piscina's own error event from being unhandled.
    this.#piscina.on("error", (err: unknown) => this.#options.logger.warn({ err: errorMessage(err) }, "worker thread error"));
    // Progress of every task arrives here (piscina forwards what threads post on their parentPort).
    this.#piscina.on("message", (raw: unknown) => this.#onThreadMessage(raw));
    // What the threads said before this pool listened (their `ready`, with the watchdog's beacon).
    for (const raw of started.takeEarlyMessages()) this.#onThreadMessage(raw);
  }

  /** Runs one case; never throws. */
  async run(request: PoolCaseRequest): Promise<CaseResult> {
    return (await this.runOutcome(request)).result;
  }

  /** Runs one case and says whether its thread crashed under it; never throws. */
  async runOutcome(request: PoolCaseRequest): Promise<PoolOutcome> {
    for (let attempt = 1; ; attempt++) {
      const end = await this.#attempt(request, attempt);
      if (end.kind === "done") return end.crashed ? { result: end.result, crashed: end.crashed } : { result: end.result };
      if (attempt > MAX_COLLATERAL_RERUNS) return { result: rerunsExhaustedResult(request.shell, attempt, end.why), crashed: end.why };
    }
  }

  /** Sets the fleet's shared response cache the threads' lookups go to (a worker process, once its broker is open). */
  setSharedCache(store: ResponseStore | null): void {
    this.#sharedCache = store;
  }

  /** Sets the fleet's cassette bucket the threads' cassette requests go to (a worker process, once its broker is open). */
  setCassetteBucket(bucket: FleetCassetteBucket | null): void {
    this.#cassettes = bucket;
  }

  /**
   * Stops every thread. Threads that opened MCP clients are first told (on the pool's
   * BroadcastChannel) to close them, and waited for up to {@link RESOURCE_CLOSE_TIMEOUT_MS}:
   * terminating a thread would cut its clients without a goodbye.
   */
  async destroy(): Promise<void> {
    await this.#closeThreadResources();
    this.#control?.close();
    this.#limiterHost.close();
    await this.#piscina.destroy();
  }

  /** One attempt: sent in the next batch, followed until its reply, its thread's death, or its cancel. */
  async #attempt(request: PoolCaseRequest, attempt: number): Promise<AttemptEnd> {
    const tracked = new CaseAttempt(this.#nextTaskId++, attempt, request, this.#attemptPool);
    const running = this.#batcher.send(threadCase(tracked.taskId, attempt, request));
    try {
      // Validated with the message that carried it (ThreadMessageSchema).
      const reply = await Promise.race([running, tracked.notStarted]);
      if (reply === "not-started") {
        tracked.abandon(running);
        return { kind: "done", result: notStartedResult(request.shell(), attempt) };
      }
      return { kind: "done", result: this.#fromReply(tracked, reply) };
    } catch (err) {
      return this.#afterThreadDeath(tracked, err);
    } finally {
      tracked.end();
    }
  }

  /** The case's result from its thread's reply (or the error that kept the thread from running it). */
  #fromReply(tracked: CaseAttempt, reply: ThreadReply): CaseResult {
    // The thread ended the case's processes as the case ended.
    if (tracked.threadId !== undefined) this.#processes.get(tracked.threadId)?.delete(tracked.taskId);
    if (reply.resources) this.#resourceThreads.add(reply.resources.threadId);
    for (const w of reply.warnings ?? []) this.#onWarning(w);
    return reply.kind === "error" ? threadErrorResult(tracked.facts(), reply.error) : CaseResult.fromData(reply.result);
  }

  /** The case's thread died before it replied: terminated by the watchdog, collateral, or crashed. */
  #afterThreadDeath(tracked: CaseAttempt, err: unknown): AttemptEnd {
    const threadId = tracked.threadId;
    const culprit = threadId === undefined ? null : this.#threadGone(threadId);
    const killedFor = tracked.watchdog.killedFor;
    if (killedFor) {
      const afterSeconds = Math.max(0, Date.now() - (tracked.watchdog.killDeadline ?? Date.now())) / 1000;
      return { kind: "done", result: terminatedResult(tracked.facts(), { reason: killedFor, phase: tracked.phase, afterSeconds }) };
    }
    // A thread-mate of a terminated case did nothing wrong, and a case that never started
    // cannot have caused the crash that took its queued task down: both run again.
    if (threadId === undefined || this.#terminator.terminated(threadId)) return { kind: "rerun", why: errorMessage(err) };
    // A crash (an unhandled rejection, out of memory): the case whose code the thread ran fails;
    // its thread-mates run again. When the beacon names nobody, every case of the thread fails.
    if (culprit !== null && culprit !== tracked.taskId) return { kind: "rerun", why: `a thread-mate crashed the thread: ${errorMessage(err)}` };
    return { kind: "done", result: crashedResult(tracked.facts(), err), crashed: errorMessage(err) };
  }

  /**
   * Handles a thread's death once: ends the processes its cases started, and reads from its beacon
   * which of its tasks it was running (the one to blame for a crash), while every attempt of the
   * thread is still known. Returns that task, or null.
   */
  #threadGone(threadId: number): number | null {
    if (this.#deadThreads.has(threadId)) return this.#deadThreads.get(threadId)!;
    const beacon = this.#beacons.get(threadId);
    const current = beacon ? readBeacon(beacon).current : null;
    const culprit = current !== null && this.#attemptPool.attempts.get(current)?.threadId === threadId ? current : null;
    this.#deadThreads.set(threadId, culprit);
    // The permits its model calls held go back to the limiter.
    this.#limiterHost.threadGone(threadId);
    this.#beacons.delete(threadId);
    const processes = this.#processes.get(threadId);
    this.#processes.delete(threadId);
    if (processes) {
      const ended = endProcessTrees([...processes.values()].flat());
      if (ended > 0) this.#options.logger.warn({ threadId, ended }, "ended the processes started by the cases of a dead worker thread");
    }
    return culprit;
  }

  /**
   * Whether case `taskId`, whose deadline plus the grace has passed, is to blame for its thread not
   * answering. It is, unless the thread has been blocked since before that deadline (its heartbeat
   * stopped) by the code of another case of the thread that has a deadline of its own: then that
   * case's watchdog terminates the thread when its own bound passes, and this case runs again.
   */
  #toBlame(threadId: number, taskId: number, deadline: number): boolean {
    const beacon = this.#beacons.get(threadId);
    if (!beacon) return true;
    const { lastBeat, current } = readBeacon(beacon);
    if (lastBeat >= deadline || current === null || current === taskId) return true;
    const other = this.#attemptPool.attempts.get(current);
    return !(other && other.threadId === threadId && other.watchdog.armed);
  }

  #onThreadMessage(raw: unknown): void {
    // A case's phase and its common reply are checked in plain code (shared/wire/thread-message-check.ts); the schema checks the rest.
    let message: ThreadMessage;
    if (plainlyValidThreadMessage(raw)) message = raw as ThreadMessage;
    else {
      const parsed = ThreadMessageSchema.safeParse(raw);
      if (!parsed.success) {
        this.#options.logger.warn("ignored a malformed message from a worker thread");
        return;
      }
      message = parsed.data;
    }
    if (message.kind === "ready") {
      this.#beacons.set(message.threadId, message.beacon);
      for (const taskId of this.#attemptPool.cancelledUnstarted) this.#broadcast({ kind: "cancel", taskId });
    } else if (message.kind === "cache-get") {
      const { threadId, requestId, key } = message;
      const store = this.#sharedCache;
      void (store ? store.get(key).catch(() => null) : Promise.resolve(null)).then((value) => this.#broadcast({ kind: "cache-value", threadId, requestId, value: value ?? null }));
    } else if (message.kind === "cache-put") {
      void this.#sharedCache?.put(message.key, message.value).catch(() => undefined);
    } else if (message.kind === "cassette-get" || message.kind === "cassette-put") {
      const { threadId, requestId, name } = message;
      const bucket = this.#cassettes;
      const asked = !bucket
        ? Promise.reject(new Error("this process has no cassette bucket (--record nats and --replay nats need a distributed run)"))
        : message.kind === "cassette-get" ? bucket.get(name) : bucket.put(name, message.text).then(() => null);
      void asked.then(
        (text) => this.#broadcast({ kind: "cassette-answer", threadId, requestId, text, error: null }),
        (err: unknown) => this.#broadcast({ kind: "cassette-answer", threadId, requestId, text: null, error: errorMessage(err) }),
      );
    } else if (message.kind === "reply") {
      this.#batcher.onReply(message.taskId, message.reply);
    } else if (message.kind === "spawned") {
      let byTask = this.#processes.get(message.threadId);
      if (!byTask) this.#processes.set(message.threadId, (byTask = new Map()));
      const list = byTask.get(message.taskId);
      const tracked = { pid: message.pid, start: message.start };
      if (list) list.push(tracked);
      else byTask.set(message.taskId, [tracked]);
    } else {
      this.#attemptPool.attempts.get(message.taskId)?.onProgress(message);
    }
  }

  #broadcast(message: ThreadBroadcast): void {
    if (!this.#control) {
      this.#control = new BroadcastChannel(this.#channelName);
      this.#control.unref();
    }
    this.#control.postMessage(message);
  }

  async #closeThreadResources(): Promise<void> {
    const waiting = new Set([...this.#resourceThreads].filter((id) => !this.#terminator.terminated(id) && this.#piscina.threads.some((t) => t.threadId === id)));
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
}
