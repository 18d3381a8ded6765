// First: wrap child_process before anything (the suite above all) can take its functions.
import "./child-processes.ts";
import { BroadcastChannel, parentPort, threadId, workerData } from "node:worker_threads";
import { ErrorCode, EvalfleetError, toErrorInfo } from "../../shared/errors.ts";
import { createLogger, type Logger } from "../../shared/logger.ts";
import { loadSuite, type LoadedSuite, type SuiteModule } from "../../shared/suite/suite.ts";
import type { CaseResult } from "../../shared/result/result.ts";
import { parseThreadBatch, ThreadBroadcastSchema, ThreadWorkerDataSchema, type ThreadBatch, type ThreadBatchReply, type ThreadBroadcastReply, type ThreadCase, type ThreadMessage, type ThreadReply } from "../../shared/wire/thread.ts";
import { notStartedResult, runCase } from "../runtime/lifecycle.ts";
import { resultShell } from "../../shared/result/result-shell.ts";
import { toPlainData } from "../runtime/evidence.ts";
import { resultToWire } from "./result-wire.ts";
import { McpSession } from "../../shared/suite/mcp-session.ts";
import { newCaseScope } from "../runtime/case-scope.ts";
import { startBeacon } from "./thread-beacon.ts";
import { ThreadLimiter } from "./thread-limiter.ts";
import { installProcessLimiter } from "../../shared/providers/process-limiter.ts";
import { processEnvironment, tracingSettingsFrom } from "../../shared/environment.ts";
import { flushTracing, startTracing } from "../../shared/tracing/sdk.ts";
import { useSuiteRedactShapes } from "../../shared/redaction/secrets.ts";
import { judgeWithModel } from "../models/default-judge.ts";
import { ThreadCaches } from "./thread-cache.ts";
import { FleetCassettes } from "../cassette/pool-cassette-store.ts";
import { useFleetCassettes } from "../cassette/case-cassette.ts";
import type { RunOutput } from "../../shared/case/agent.ts";

/**
 * The piscina entry: imports the suite once per thread, runs a batch of cases by index and name,
 * all at once, and streams each one's progress and reply on the thread's parentPort, tagged with
 * its task id (phases for the watchdog, commits, events, then the reply). Cancels arrive on the
 * pool's BroadcastChannel.
 */

/** The suites this thread imported (or is importing), by path, with the module each was imported from. */
const suites = new Map<string, { module: SuiteModule | null; loaded: Promise<LoadedSuite> }>();

/**
 * The suite at `path` as this thread loaded it, imported on first use (or as the thread started:
 * `preloadSuite`). A thread's load is a checked one: the process that dispatches the cases has
 * run the checks across them, so the thread only imports the file, lists its cases and
 * fingerprints them (compared with each batch's). A suite preloaded from another module than the
 * batch names is imported again.
 */
function threadSuite(path: string, module: SuiteModule | null): Promise<LoadedSuite> {
  const known = suites.get(path);
  if (known && (module === null || known.module?.url === module.url)) return known.loaded;
  // The thread redacts the credential shapes its suite says (a thread serves one suite's runs).
  const loaded = loadSuite(path, { module, checked: true }).then((s) => {
    useSuiteRedactShapes(s.redactShapes);
    return s;
  });
  // A preload that fails is reported by the batch that awaits it, not as an unhandled rejection.
  loaded.catch(() => undefined);
  suites.set(path, { module, loaded });
  return loaded;
}
let logger: Logger | undefined;
/** The MCP clients this thread connected, per suite file, and the warnings not yet reported. */
const mcpSessions = new Map<string, { session: McpSession; warnings: string[] }>();
/** Cancel switches of the tasks running on this thread. */
const running = new Map<number, AbortController>();
/** Tasks cancelled before they reached this thread (the broadcast can overtake the task). */
const cancelledEarly = new Set<number>();

/** Listens on the pool's channel: cancels a task, or closes every MCP client this thread opened and says so. */
function listenOnControl(name: string): void {
  const channel = new BroadcastChannel(name);
  // The channel must not keep the thread alive on its own.
  channel.unref();
  channel.onmessage = (message: unknown) => {
    const parsed = ThreadBroadcastSchema.safeParse((message as { data?: unknown })?.data);
    if (!parsed.success) return;
    if (parsed.data.kind === "cache-value") {
      caches.shared.answer(parsed.data.threadId, parsed.data.requestId, parsed.data.value);
      return;
    }
    if (parsed.data.kind === "cassette-answer") {
      fleetCassettes.answer(parsed.data.threadId, parsed.data.requestId, parsed.data.text, parsed.data.error);
      return;
    }
    if (parsed.data.kind === "cancel") {
      const cancel = running.get(parsed.data.taskId);
      if (cancel) cancel.abort(new DOMException("suite cancelled", "AbortError"));
      else if (cancelledEarly.size < 10_000) cancelledEarly.add(parsed.data.taskId);
      return;
    }
    void (async () => {
      let closed = 0;
      const errors: string[] = [];
      for (const { session } of mcpSessions.values()) {
        const r = await session.close();
        closed += r.closed;
        errors.push(...r.errors);
      }
      mcpSessions.clear();
      const reply: ThreadBroadcastReply = { kind: "resources-closed", threadId, closed, errors };
      channel.postMessage(reply);
    })();
  };
}

let started = false;
let afterFirstBatch: (() => void) | undefined;

/**
 * Starts the thread's side of the pool, once, before any task: listens for cancels from the start
 * (a cancel sent while this thread was still loading reached nobody, so the pool is told, and
 * repeats the cancels it sent before), takes the process's limiter, and says `ready`. Called by
 * the thread's entry file, not on import: the module is also part of the runtime that every
 * process loading evalfleet's CommonJS file evaluates (scripts/build.mjs).
 *
 * @param options.afterFirstBatch called once, when the thread's first batch has ended (the
 *   compiled thread's entry writes its code cache then: worker/pool/thread-start.ts).
 */
export function startThread(options: { afterFirstBatch?: () => void } = {}): void {
  if (started) return;
  started = true;
  afterFirstBatch = options.afterFirstBatch;
  const startup = ThreadWorkerDataSchema.safeParse(workerData);
  if (!startup.success) throw new EvalfleetError(ErrorCode.WireInvalid, `a worker thread started without its pool's control channel: ${startup.error.issues[0]?.message}`);
  listenOnControl(startup.data.controlChannel);
  // One limiter per process, owned by the main thread: this thread asks it for every permit.
  if (startup.data.limiterChannel) installProcessLimiter(new ThreadLimiter(startup.data.limiterChannel));
  const ready: ThreadMessage = { kind: "ready", taskId: -1, threadId, beacon: startBeacon() };
  parentPort?.postMessage(ready);
  // After `ready`: the import runs while the pool waits for its first batch, not before the
  // watchdog has this thread's beacon.
  const preload = startup.data.preloadSuite;
  if (preload) void threadSuite(preload.path, preload.module);
}

/**
 * How long a case runs before its commits are streamed to the main thread, in ms. Commits only
 * matter if the thread is terminated under the case (the main side then reports what it knew);
 * a case that finishes sooner never needs them, and most cases do, so they cost nothing.
 */
export const COMMIT_STREAM_AFTER_MS = 200;

/**
 * Streams a case's commits (evidence, verdicts, errors) to the main thread once the case has run
 * for {@link COMMIT_STREAM_AFTER_MS}: the latest commit is sent then, and every later one at once.
 * Best effort by design: a case that blocks its thread within the first moments keeps its evidence
 * in the thread (the main side still reports it as timed out).
 */
class CommitStream {
  #latest: CaseResult | null = null;
  #streaming = false;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly taskId: number,
    private readonly post: (message: ThreadMessage) => void,
  ) {
    this.#timer = setTimeout(() => {
      this.#streaming = true;
      if (this.#latest) this.#send(this.#latest);
    }, COMMIT_STREAM_AFTER_MS);
    this.#timer.unref();
  }

  commit(r: CaseResult): void {
    this.#latest = r;
    if (this.#streaming) this.#send(r);
  }

  done(): void {
    clearTimeout(this.#timer);
  }

  #send(r: CaseResult): void {
    this.post({
      kind: "commit",
      taskId: this.taskId,
      commit: {
        output: r.output,
        toolsCalled: [...r.toolsCalled],
        error: r.error,
        judgePassed: r.judgePassed,
        judgeReason: r.judgeReason,
        judgeScore: r.judgeScore,
        reliabilityPassed: r.reliabilityPassed,
        score: r.score ? { value: r.score.value, passed: r.score.passed, reason: r.score.reason ?? null } : null,
      },
    });
  }
}

/** This thread's response caches (a case's `--cache` setting). */
const caches = new ThreadCaches((message) => post(message), threadId);
/** This thread's way to the fleet's cassettes (`--record nats`, `--replay nats`), through the pool. */
const fleetCassettes = new FleetCassettes((message) => post(message), threadId);
useFleetCassettes(fleetCassettes);

/** Posted at once, never batched: the thread may block right after, and the watchdog needs it. */
function post(message: ThreadMessage): void {
  try {
    parentPort?.postMessage(message);
  } catch (err) {
    logger?.debug({ err }, "could not post to the main thread");
  }
}

/** Sends a case's reply; one that cannot be sent (a value that does not clone) is replaced by the error, so the case still ends. */
function postReply(taskId: number, reply: ThreadReply): void {
  try {
    parentPort?.postMessage({ kind: "reply", taskId, reply } satisfies ThreadMessage);
  } catch (err) {
    post({ kind: "reply", taskId, reply: { kind: "error", error: toErrorInfo(err) } });
  }
}

/** Batches this thread has been given: the first one's end calls `afterFirstBatch`. */
let batchesSeen = 0;

/**
 * Runs a batch of cases at once; each replies on the parentPort as soon as it ends. Resolves to
 * a {@link ThreadBatchReply} once every case has replied. Throws only if the thread itself is broken.
 */
export default async function runThreadBatch(raw: { batch: unknown }): Promise<ThreadBatchReply> {
  const first = batchesSeen++ === 0;
  try {
    const parsed = parseThreadBatch(raw?.batch);
    if (!parsed.ok) return { kind: "error", error: toErrorInfo(new EvalfleetError(ErrorCode.WireInvalid, parsed.why)) };
    const batch = parsed.batch;
    logger ??= createLogger({ name: "evalfleet.thread", level: batch.logLevel });
    // Tracing, when the OTEL_* variables configure it (validated by the process already; a failure here only loses spans).
    if (batch.cases.some((c) => c.traceparent)) await startThreadTracing();
    await Promise.all(batch.cases.map(async (c) => postReply(c.taskId, await runThreadCase(batch, c))));
    return { kind: "done", replied: batch.cases.length };
  } finally {
    if (first) afterFirstBatch?.();
  }
}

/** Runs one case of a batch; resolves to its {@link ThreadReply}, never rejects. */
async function runThreadCase(batch: ThreadBatch, task: ThreadCase): Promise<ThreadReply> {
  const taskId = task.taskId;
  const cancel = new AbortController();
  running.set(taskId, cancel);
  if (cancelledEarly.delete(taskId)) cancel.abort(new DOMException("suite cancelled", "AbortError"));
  // What this thread holds and has to report, whatever the outcome (see ThreadReplySchema).
  let extras: Pick<ThreadReply, "resources" | "warnings"> = {};
  try {
    const suite = await threadSuite(batch.suitePath, batch.suiteModule ?? null);
    if (suite.fingerprint !== batch.fingerprint) {
      throw new EvalfleetError(ErrorCode.SuiteMismatch, `suite ${batch.suitePath} changed since the run started (fingerprint ${suite.fingerprint.slice(0, 12)}, expected ${batch.fingerprint.slice(0, 12)})`);
    }
    const c = suite.cases[task.index];
    if (!c || c.name !== task.name) {
      throw new EvalfleetError(ErrorCode.SuiteMismatch, `case index ${task.index} is ${c ? `'${c.name}'` : "out of range"} in this thread, expected '${task.name}'`);
    }
    if (suite.mcpClients.length > 0) {
      // Once per thread, before its first case: the suite's MCP clients (Agno's mcp_tools=).
      let entry = mcpSessions.get(batch.suitePath);
      if (!entry) {
        const warnings: string[] = [];
        entry = { session: new McpSession(suite.mcpClients, { logger, onWarning: (message) => warnings.push(message) }), warnings };
        mcpSessions.set(batch.suitePath, entry);
      }
      await entry.session.ensureConnected(cancel.signal);
      // Every reply says what the thread holds: the main side then knows whom to ask to close.
      extras = {
        ...(entry.session.opened > 0 ? { resources: { threadId, opened: entry.session.opened } } : {}),
        ...(entry.warnings.length > 0 ? { warnings: entry.warnings.splice(0) } : {}),
      };
    }
    if (cancel.signal.aborted) {
      // Cancelled while it waited for this thread: nothing of it runs, not even its setup.
      return { kind: "result", result: resultToWire(notStartedResult(resultShell(c, task.index), task.attempt), { response: false }), ...extras };
    }
    const commits = new CommitStream(taskId, post);
    // The processes the case starts are reported as they start: if this thread dies, the pool ends them.
    const scope = newCaseScope(taskId, (p) => post({ kind: "spawned", taskId, threadId, pid: p.pid, start: p.start }));
    const result = await runCase(c, {
      index: task.index,
      attempts: task.attempt,
      worker: `thread-${threadId}`,
      defaultTimeout: task.defaultTimeout,
      setupTimeout: task.setupTimeout,
      teardownTimeout: task.teardownTimeout,
      maxOutputBytes: task.maxOutputBytes,
      scope,
      judgeModel: task.judgeModel ? judgeWithModel(task.judgeModel) : suite.judgeModel,
      evalFunctions: suite.evalFunctions ?? null,
      runEvalFunctions: task.evalFunctions ?? null,
      scoringMethod: task.scoringMethod ?? null,
      traceparent: task.traceparent ?? null,
      traceAs: task.traceAs ?? null,
      maxTranscriptBytes: task.maxTranscriptBytes ?? 0,
      ...(task.replay ? { replay: task.replay as RunOutput } : {}),
      repeat: task.repeat ?? 1,
      cache: caches.cacheFor(task.cache),
      cassette: task.cassette ?? null,
      signal: cancel.signal,
      logger,
      onRunEvent: task.forwardEvents ? (_c, event) => post({ kind: "event", taskId, event: toPlainData(event) as Record<string, unknown> }) : null,
      observer: {
        onPhase: (phase, info, r) => {
          // `setup` and `teardown` only matter to the watchdog when there is such a hook to hang in.
          if (phase === "setup" && c.setup) post({ kind: "phase", taskId, phase, threadId, sessionId: r.sessionId, deadline: info.deadline });
          else if (phase === "run") post({ kind: "phase", taskId, phase, threadId, sessionId: r.sessionId, deadline: info.deadline });
          else if (phase === "teardown" && c.teardown) post({ kind: "phase", taskId, phase, threadId, deadline: info.deadline });
        },
        onCommit: (r) => commits.commit(r),
      },
    });
    commits.done();
    // The case's spans leave before its result: a worker that exits after its last case loses none.
    if (task.traceparent) await flushTracing();
    return { kind: "result", result: resultToWire(result, { response: batch.keepResponses }), ...extras };
  } catch (err) {
    return { kind: "error", error: toErrorInfo(err), ...extras };
  } finally {
    running.delete(taskId);
  }
}

let tracingStarted: Promise<boolean> | null = null;

/** Starts this thread's tracing once, from the process's environment; a failure is logged, never fatal to a case. */
function startThreadTracing(): Promise<boolean> {
  tracingStarted ??= (async () => {
    try {
      return await startTracing(tracingSettingsFrom(processEnvironment()), { role: "thread", attributes: { "evalfleet.thread": String(threadId) } });
    } catch (err) {
      logger?.warn({ err: String(err) }, "tracing could not start in this thread: its cases' spans are lost");
      return false;
    }
  })();
  return tracingStarted;
}
