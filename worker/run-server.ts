import { setMaxListeners } from "node:events";
import type { Consumer, JsMsg } from "@nats-io/jetstream";
import type { Broker } from "../shared/broker/setup.ts";
import { isConsumerNotFound, isStreamNotFound } from "../shared/broker/api-codes.ts";
import type { LoadedSuite } from "../shared/suite/suite.ts";
import type { Logger } from "../shared/logger.ts";
import { errorMessage } from "../shared/errors.ts";
import { decodeSelection } from "../shared/wire/case-selection.ts";
import { CASES_STREAM, runConsumer, runKeys } from "../shared/broker/subjects.ts";
import { CancelSchema, RunStateSchema, isFinishedPhase, type RunManifest, tryParseJson } from "../shared/wire/nats.ts";
import { sleep } from "../shared/process/sleep.ts";
import { resultShell } from "../shared/result/result-shell.ts";
import { executeCase } from "../shared/trials/execute-case.ts";
import { eventRedactor } from "../shared/redaction/secrets.ts";
import type { CaseMetricsSink } from "./metrics.ts";
import type { CasePool } from "./pool/case-pool.ts";
import type { Slots } from "./slots.ts";
import { caseErrorResult, checkCaseMessage, poolRequest } from "./case-message.ts";
import { RunPresence } from "./presence.ts";
import { StartGate } from "./start-gate.ts";
import { ResultPublisher } from "./result-publisher.ts";
import { LeaseBound } from "./lease-bound.ts";

/**
 * Serving one run: the pull loop. A case is pulled only when a slot is free, its lease is kept
 * alive while it runs, its result is published once (create-only), then it is acked
 * (result-publisher.ts). A case's own failure is a result; a thread that died under a case hands
 * it back (nak) for prompt redelivery, until its last delivery. The message is checked in
 * case-message.ts; the worker's presence record is kept in presence.ts.
 */

/** Why serving a run ended. */
export type RunServeEnd =
  | { kind: "finished"; why: string }
  | { kind: "refused"; why: string }
  /** Shutdown stopped the pulling before the run was over, with nothing in flight. */
  | { kind: "stopped"; why: string }
  | { kind: "interrupted"; why: string };

/** What a run server shares with its worker process. */
export interface RunServerDeps {
  broker: Broker;
  suite: LoadedSuite;
  pool: CasePool;
  /** The process's case slots, shared by every run it serves. */
  slots: Slots;
  /** Called when a case arrives (for the idle timer). */
  onActivity: () => void;
  /** `<host>/<pid>`, shown in reports. */
  workerId: string;
  logger: Logger;
  /** Fires on shutdown: stop pulling (in-flight cases go on until `abort` fires). */
  stopping: AbortSignal;
  /** Fires when the drain grace is over: in-flight cases are aborted and handed back. */
  abort: AbortSignal;
  /** Told of every case received, finished and handed back (the worker's Prometheus metrics). */
  metrics?: CaseMetricsSink | null;
  /** The pool's grace past a deadline, in ms: a lease outlives a phase's deadline by it and a slack (lease-bound.ts). */
  graceMs: number;
}

/** How long one pull waits for cases, in ms. */
const PULL_EXPIRES_MS = 2_000;
/** Most case messages asked for in one pull (fetch), in messages; free slots bound it further. */
const MAX_MESSAGES_PER_FETCH = 256;

/** Serves one run until it is over for this worker. */
export class RunServer {
  readonly #deps: RunServerDeps;
  readonly #manifest: RunManifest;
  readonly #runId: string;
  readonly #presence: RunPresence;
  readonly #publisher: ResultPublisher;
  /** Asks the coordinator before each case starts (a run with a budget), or null. */
  readonly #startGate: StartGate | null;
  /** Fires on the run's cancel key: in-flight cases are aborted cooperatively (their results still count). */
  readonly #cancel = new AbortController();
  /** Aborts the run's in-flight cases: the run's cancel or the end of the drain grace. */
  readonly #caseAbort: AbortSignal;
  /** Why the run is over for this worker; null while it serves it. */
  #over: string | null = null;
  #busy = 0;
  /** Indexes of the run's selected cases (decoded once the suite is known to be the run's). */
  #selected: ReadonlySet<number> = new Set();
  /** Cases handed back because shutdown cut them short. */
  #interrupted = 0;
  /** Pulls of this run server waiting for a case. */
  #pulling = 0;
  /** Told when the last outstanding pull has ended. */
  #pullWaiters: Array<() => void> = [];

  constructor(manifest: RunManifest, deps: RunServerDeps) {
    this.#manifest = manifest;
    this.#runId = manifest.runId;
    this.#deps = deps;
    this.#presence = new RunPresence({ broker: deps.broker, workerId: deps.workerId, fingerprint: deps.suite.fingerprint, slots: deps.slots.size }, manifest.runId, () => this.#busy);
    this.#publisher = new ResultPublisher({ broker: deps.broker, runId: manifest.runId, workerId: deps.workerId, abort: deps.abort, metrics: deps.metrics, maxOutputBytes: manifest.maxOutputBytes, batchEvents: manifest.eventBatches });
    this.#startGate = manifest.startGate ? new StartGate(deps.broker.nc, manifest.runId, deps.workerId, deps.logger) : null;
    setMaxListeners(0, this.#cancel.signal);
    // One signal for every case of the run: AbortSignal.any per case was a measurable cost.
    this.#caseAbort = AbortSignal.any([this.#cancel.signal, deps.abort]);
    setMaxListeners(0, this.#caseAbort);
  }

  /** In-flight cases of this run on this worker. */
  get busy(): number {
    return this.#busy;
  }

  /** Serves the run; resolves when it is finished (or refused, or interrupted by shutdown). */
  async serve(): Promise<RunServeEnd> {
    const { suite, logger } = this.#deps;
    const log = logger.child({ run: this.#runId });
    if (this.#manifest.suite.fingerprint !== suite.fingerprint) {
      const why = `run ${this.#runId} is for suite '${this.#manifest.suite.name}' with fingerprint ${this.#manifest.suite.fingerprint.slice(0, 12)}, this worker loaded ${suite.path} with fingerprint ${suite.fingerprint.slice(0, 12)}`;
      log.error({ theirs: this.#manifest.suite.fingerprint, ours: suite.fingerprint }, `refusing the run: ${why}`);
      await this.#presence.refuse(why).catch(() => undefined);
      return { kind: "refused", why };
    }
    try {
      this.#selected = new Set(decodeSelection(this.#manifest.selection, suite.cases.length));
    } catch (err) {
      const why = `run ${this.#runId} has an unusable manifest: ${errorMessage(err)}`;
      log.error(`refusing the run: ${why}`);
      await this.#presence.refuse(why).catch(() => undefined);
      return { kind: "refused", why };
    }
    const watchers = await this.#watchRunKeys();
    const stopHeartbeat = this.#presence.heartbeat();
    try {
      await this.#presence.join();
      const consumer = await this.#consumer();
      if (!consumer) return { kind: "finished", why: this.#over ?? "the run's consumer is gone" };
      await this.#fetchLoop(consumer);
      if (this.#interrupted > 0) return { kind: "interrupted", why: `${this.#interrupted} case(s) handed back at shutdown` };
      // Drained with nothing handed back: the cases just finished may have been the run's last,
      // and a worker whose run is over must exit 0 (a Job must not replace it).
      if (this.#deps.stopping.aborted && !this.#over) await this.#checkDrained(consumer);
      if (this.#deps.stopping.aborted && !this.#over) return { kind: "stopped", why: "stopped before the run was over" };
      return { kind: "finished", why: this.#over ?? "run over" };
    } finally {
      stopHeartbeat();
      for (const w of watchers) w.stop();
      log.info({ reason: this.#over }, "stopped serving the run");
    }
  }

  async #consumer(): Promise<Consumer | null> {
    try {
      return await this.#deps.broker.js.consumers.get(CASES_STREAM, runConsumer(this.#runId));
    } catch (err) {
      if (isConsumerGone(err)) {
        this.#over ??= "the run's consumer was deleted (the run is finished)";
        return null;
      }
      throw err;
    }
  }

  /**
   * Pulls as many cases as there are free slots, in one request, and starts each as it arrives.
   * Nothing is fetched without a slot to run it (a fetched case's lease is already running).
   */
  async #fetchLoop(consumer: Consumer): Promise<void> {
    const { stopping, slots } = this.#deps;
    const inflight = new Set<Promise<void>>();
    const track = (p: Promise<void>): void => {
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    };
    while (!this.#over && !stopping.aborted) {
      const reserved = await slots.take(MAX_MESSAGES_PER_FETCH, stopping);
      if (reserved === 0) continue;
      let got = 0;
      this.#pulling++;
      try {
        const batch = await consumer.fetch({ max_messages: reserved, expires: PULL_EXPIRES_MS });
        for await (const m of batch) {
          got++;
          this.#deps.metrics?.caseReceived(m.info.deliveryCount);
          if (stopping.aborted) {
            // A pull that was already waiting at shutdown got a case: it is not started, only handed back.
            slots.give();
            track(this.#handBack(m));
            continue;
          }
          this.#deps.onActivity();
          this.#busy++;
          track(
            this.#handle(m)
              .catch((err: unknown) => this.#deps.logger.error({ run: this.#runId, err: errorMessage(err) }, "handling a case failed"))
              .finally(() => {
                this.#busy--;
                slots.give();
              }),
          );
        }
      } catch (err) {
        if (isConsumerGone(err)) this.#over ??= "the run's consumer was deleted (the run is finished)";
        else {
          this.#deps.logger.warn({ run: this.#runId, err: errorMessage(err) }, "pull failed; retrying");
          await sleep(500);
        }
      } finally {
        slots.give(reserved - got);
        if (--this.#pulling === 0) for (const wake of this.#pullWaiters.splice(0)) wake();
      }
      if (got === 0 && !this.#over) await this.#checkDrained(consumer);
    }
    await Promise.all(inflight);
  }

  /** The run is over for workers when nothing is queued or in flight and the coordinator has published everything. */
  async #checkDrained(consumer: Consumer): Promise<void> {
    try {
      const state = await this.#deps.broker.kv.get(runKeys.state(this.#runId));
      const phase = state ? RunStateSchema.safeParse(state.json()).data?.phase : undefined;
      if (isFinishedPhase(phase)) {
        this.#over ??= `the run is ${phase}`;
        return;
      }
      if (phase !== "running") return;
      const info = await consumer.info(false);
      if (info.num_pending === 0 && info.num_ack_pending === 0) this.#over ??= "every case of the run has been handled";
    } catch (err) {
      if (isConsumerGone(err)) this.#over ??= "the run's consumer was deleted (the run is finished)";
    }
  }

  /** Runs one received case message to its end: a result published and acked, or the case handed back. */
  async #handle(m: JsMsg): Promise<void> {
    const { logger, suite, pool, workerId } = this.#deps;
    // A child logger per case costs more than the rest of the bookkeeping: build it only to log.
    let child: Logger | undefined;
    const log = (): Logger => (child ??= logger.child({ run: this.#runId, subject: m.subject }));
    const attempt = m.info.deliveryCount;
    const check = checkCaseMessage(m.data, { subject: m.subject, runId: this.#runId, selected: this.#selected, suite });
    if (check.kind === "bad") {
      log().error({ attempt }, `disposing of a bad case message: ${check.why}`);
      if (check.recordOn) await this.#publisher.publishResult(caseErrorResult(suite, check.recordOn.index, check.recordOn.name, `worker: ${check.why}`, attempt, workerId), check.recordOn.token, check.recordOn.trial).catch(() => undefined);
      m.term();
      return;
    }
    if (this.#cancel.signal.aborted) {
      m.term();
      return;
    }
    if (check.kind === "foreign") {
      log().error(check.why);
      await this.#publisher.publishResult(caseErrorResult(suite, check.recordOn.index, check.recordOn.name, `worker: ${check.why}`, attempt, workerId), check.recordOn.token, check.recordOn.trial).catch(() => undefined);
      m.term();
      return;
    }
    const { case: c, message } = check;
    const { index, trial } = message;
    // At-least-once delivery: a redelivered case may already have a result (its worker died, or
    // its ack was lost, after publishing). A first delivery cannot, so it skips the lookup.
    if (attempt > 1 && (await this.#publisher.hasResult(index, trial, message.token))) {
      m.ack();
      return;
    }
    if (this.#startGate && !(await this.#mayStart(m, index))) return;
    this.#publisher.publishEvent({ index, trial, kind: "started" });
    // The lease is kept alive only while the case is within its bounds: a worker wedged past them
    // lets the case go, and the broker redelivers it.
    const bound = new LeaseBound(this.#deps.graceMs);
    let released = false;
    const lease = setInterval(() => {
      if (bound.renews()) m.working();
      else if (!released) {
        released = true;
        log().warn({ attempt }, "the case is past its bounds; its lease is no longer renewed, so it will be redelivered");
      }
    }, this.#leaseMs);
    const caseAbort = this.#caseAbort;
    const publish = (event: Record<string, unknown>): void => this.#publisher.publishEvent({ index, trial, kind: "event", event });
    const onPhase = (_phase: string, deadline: number | null): void => bound.phase(deadline);
    const timeoutSeconds = c.resolveTimeout(this.#manifest.defaultTimeout);
    // One delivery is one trial (its other trials are deliveries of their own), so this runs it once,
    // again while its failure is `infra` and --retries are left, on the worker that saw it: the same
    // composition as the local runners' (shared/trials/execute-case.ts).
    const runOnce = (): ReturnType<typeof pool.runOutcome> =>
      executeCase({ repeat: 1, retries: this.#manifest.retries }, () => executeOnce(trial), { timeoutSeconds, signal: caseAbort, limit: null, shell: () => resultShell(c, index) });
    // The coordinator's trace context travels on: the case's span joins the run's trace.
    const traced = message.traceparent ? { traceparent: message.traceparent, traceAs: { worker: workerId, priorAttempts: attempt - 1 } } : {};
    const executeOnce = (repeat: number): ReturnType<typeof pool.runOutcome> => {
      if (!this.#manifest.forwardEvents) return pool.runOutcome({ ...poolRequest(c, index, this.#manifest, caseAbort, undefined), repeat, onPhase, ...traced });
      // A secret split across two events' text is found only with both in hand: one streaming
      // redactor per run of the case, and what it holds back goes out when the run ends (before
      // the result is published).
      const events = eventRedactor();
      return pool
        .runOutcome({ ...poolRequest(c, index, this.#manifest, caseAbort, (event) => events.push(event).forEach(publish)), repeat, onPhase, ...traced })
        .finally(() => events.flush().forEach(publish));
    };
    let outcome;
    try {
      // --repeat N: this message is one trial of the case (its other trials are their own
      // deliveries, on any worker); the trial is part of its cached answers' keys.
      outcome = await runOnce();
    } finally {
      clearInterval(lease);
    }
    if (this.#deps.abort.aborted && !this.#cancel.signal.aborted) {
      // Shutdown cut the case short: hand it back whole rather than report a half-run.
      this.#interrupted++;
      await this.#handBack(m);
      return;
    }
    if (outcome.crashed && attempt < this.#manifest.maxAttempts) {
      log().warn({ attempt, cause: outcome.crashed }, "the case's thread crashed; handing the case back for redelivery");
      this.#deps.metrics?.caseHandedBack("thread_crash");
      m.nak(1000);
      return;
    }
    const result = outcome.result;
    // Every execution counts: earlier deliveries, and this one's retries and collateral re-runs.
    result.attempts = attempt - 1 + Math.max(1, result.attempts);
    result.worker = workerId;
    await this.#publisher.publishThenAck(m, result, message.token, trial, log);
  }

  /**
   * Asks the start gate whether the case may start. Not when the run is stopping: the case is let
   * go (`term`, as a case taken after the cancel is) and the coordinator skips it with the run's
   * reason; when this worker is shutting down, it is handed back.
   */
  async #mayStart(m: JsMsg, index: number): Promise<boolean> {
    try {
      const answer = await this.#startGate!.ask(index, this.#caseAbort);
      if (answer.start) return true;
    } catch {
      if (!this.#cancel.signal.aborted) {
        this.#interrupted++;
        await this.#handBack(m);
        return false;
      }
    }
    m.term();
    return false;
  }

  /**
   * Hands a case back for immediate redelivery, once no pull of this worker is outstanding: a
   * waiting pull would take the case straight back and spend one of its deliveries for nothing.
   * Only a stopping worker hands cases back, and it starts no new pulls, so the wait is bounded by
   * one pull's expiry; the lease is kept alive meanwhile.
   */
  async #handBack(m: JsMsg): Promise<void> {
    if (this.#pulling > 0) {
      const lease = setInterval(() => m.working(), this.#leaseMs);
      try {
        await new Promise<void>((resolve) => this.#pullWaiters.push(resolve));
      } finally {
        clearInterval(lease);
      }
    }
    this.#deps.metrics?.caseHandedBack("shutdown");
    m.nak(0);
  }

  /** How often a running case's lease is extended, in ms (well within the ack wait). */
  get #leaseMs(): number {
    return Math.max(250, (this.#manifest.ackWaitSeconds * 1000) / 3);
  }

  /** Watches the cancel key and the state: both end the run for this worker. */
  async #watchRunKeys(): Promise<Array<{ stop(): void }>> {
    const { kv } = this.#deps.broker;
    const cancelWatch = await kv.watch({ key: runKeys.cancel(this.#runId) });
    const stateWatch = await kv.watch({ key: runKeys.state(this.#runId) });
    void (async () => {
      for await (const e of cancelWatch) {
        if (e.operation !== "PUT") continue;
        const c = CancelSchema.safeParse(tryParseJson(e.string()));
        this.#over ??= `the run was cancelled${c.success ? ` (${c.data.reason})` : ""}`;
        this.#cancel.abort(new DOMException("run cancelled", "AbortError"));
      }
    })().catch(() => undefined);
    void (async () => {
      for await (const e of stateWatch) {
        if (e.operation !== "PUT") continue;
        const s = RunStateSchema.safeParse(tryParseJson(e.string()));
        if (s.success && isFinishedPhase(s.data.phase)) this.#over ??= `the run is ${s.data.phase}`;
        if (s.success && s.data.phase === "cancelling") this.#cancel.abort(new DOMException("run cancelled", "AbortError"));
      }
    })().catch(() => undefined);
    return [cancelWatch, stateWatch];
  }
}

function isConsumerGone(err: unknown): boolean {
  if (isConsumerNotFound(err) || isStreamNotFound(err)) return true;
  const text = errorMessage(err);
  return /consumer (deleted|not found)|consumer_deleted|consumer_not_found/i.test(text);
}
