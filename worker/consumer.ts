import { setMaxListeners } from "node:events";
import { JetStreamApiError, type Consumer, type JsMsg } from "@nats-io/jetstream";
import type { Broker } from "../shared/jetstream-setup.ts";
import type { LoadedSuite } from "../shared/suite.ts";
import type { Logger } from "../shared/logger.ts";
import { errorMessage } from "../shared/errors.ts";
import { decodeSelection } from "../shared/case-selection.ts";
import {
  CASES_STREAM,
  RESULTS_STREAM,
  eventSubject,
  indexOfSubject,
  resultMsgId,
  resultSubject,
  runConsumer,
  runKeys,
} from "../shared/subjects.ts";
import {
  CancelSchema,
  CaseMessageSchema,
  MAX_RESULT_MESSAGE_BYTES,
  NATS_PROTOCOL,
  fitResultForWire,
  truncateOutput,
  RunStateSchema,
  type EventMessage,
  type ResultMessage,
  type RunManifest,
  type WorkerRecord,
  tryParseJson,
} from "../shared/wire.ts";
import { CaseResult } from "../shared/result.ts";
import { resultShell } from "./lifecycle.ts";
import { runRepeated, sharedLimit } from "./repeats.ts";
import type { CaseMetricsSink } from "./metrics.ts";
import type { CasePool } from "./pool.ts";
import type { Slots } from "./slots.ts";
import { resultToWire } from "./result-wire.ts";
import { sleep } from "../shared/sleep.ts";

/**
 * Serving one run: pull a case only when a slot is free, keep its lease alive while it runs,
 * publish its result once (create-only), then ack. A case's own failure is a result; a thread
 * that died under a case hands it back (nak) for prompt redelivery, until its last delivery.
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
}

/** Largest case message a worker accepts, in bytes: a real one is a few hundred bytes. */
export const MAX_CASE_MESSAGE_BYTES = 64 * 1024;
/** How long one pull waits for cases, in ms. */
const PULL_EXPIRES_MS = 2_000;
/** Most cases asked for in one pull. */
const MAX_BATCH = 256;
/** How often the worker refreshes its presence record, in ms. */
const PRESENCE_INTERVAL_MS = 5_000;

/** Serves one run until it is over for this worker. */
export class RunServer {
  readonly #deps: RunServerDeps;
  readonly #manifest: RunManifest;
  readonly #runId: string;
  /** Fires on the run's cancel key: in-flight cases are aborted cooperatively (their results still count). */
  readonly #cancel = new AbortController();
  #over: string | null = null;
  #busy = 0;
  /** Indexes of the run's selected cases (decoded once the suite is known to be the run's). */
  #selected: ReadonlySet<number> = new Set();
  #tick: Promise<void> | null = null;
  #interrupted = 0;
  /** Pulls of this run server waiting for a case. */
  #pulling = 0;
  /** Told when the last outstanding pull has ended. */
  #pullWaiters: Array<() => void> = [];

  constructor(manifest: RunManifest, deps: RunServerDeps) {
    this.#manifest = manifest;
    this.#runId = manifest.runId;
    this.#deps = deps;
    setMaxListeners(0, this.#cancel.signal);
    // One signal for every case of the run: AbortSignal.any per case was a measurable cost.
    this.#caseAbort = AbortSignal.any([this.#cancel.signal, deps.abort]);
    setMaxListeners(0, this.#caseAbort);
  }

  /** Aborts the run's in-flight cases: the run's cancel or the end of the drain grace. */
  readonly #caseAbort: AbortSignal;

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
      await this.#presence(false, why).catch(() => undefined);
      return { kind: "refused", why };
    }
    try {
      this.#selected = new Set(decodeSelection(this.#manifest.selection, suite.cases.length));
    } catch (err) {
      const why = `run ${this.#runId} has an unusable manifest: ${errorMessage(err)}`;
      log.error(`refusing the run: ${why}`);
      await this.#presence(false, why).catch(() => undefined);
      return { kind: "refused", why };
    }
    const watchers = await this.#watchRunKeys();
    const presence = setInterval(() => void this.#presence(true, null).catch(() => undefined), PRESENCE_INTERVAL_MS);
    try {
      await this.#presence(true, null);
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
      clearInterval(presence);
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
      const reserved = await slots.take(MAX_BATCH, stopping);
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
      if (phase === "completed" || phase === "cancelled") {
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

  async #handle(m: JsMsg): Promise<void> {
    const { logger, suite, pool, workerId } = this.#deps;
    // A child logger per case costs more than the rest of the bookkeeping: build it only to log.
    let child: Logger | undefined;
    const log = (): Logger => (child ??= logger.child({ run: this.#runId, subject: m.subject }));
    const attempt = m.info.deliveryCount;
    const index = indexOfSubject(m.subject);
    const selected = index !== null && this.#selected.has(index) ? suite.cases[index] : undefined;
    const size = m.data.length;
    let parsed: unknown;
    let notJson = false;
    if (size <= MAX_CASE_MESSAGE_BYTES) {
      try {
        parsed = m.json();
      } catch {
        notJson = true;
      }
    }
    const msg = CaseMessageSchema.safeParse(parsed);
    if (size > MAX_CASE_MESSAGE_BYTES || !msg.success || msg.data.runId !== this.#runId || msg.data.index !== index || !selected || msg.data.name !== selected.name) {
      const version = (parsed as { v?: unknown } | null)?.v;
      const why =
        size > MAX_CASE_MESSAGE_BYTES
          ? `case message of ${size} bytes exceeds the ${MAX_CASE_MESSAGE_BYTES}-byte limit`
          : notJson
            ? "malformed case message: not valid JSON"
            : version !== undefined && version !== NATS_PROTOCOL
              ? `case message speaks protocol version ${JSON.stringify(version)}; this worker speaks ${NATS_PROTOCOL}`
              : !msg.success
                ? `malformed case message: ${msg.error.issues.map((i) => `${i.path.join(".") || "message"}: ${i.message}`).join("; ")}`
                : !selected
                  ? `case index ${index} is not in the run's manifest`
                  : `case message does not match the run's manifest (run '${msg.data.runId}', index ${msg.data.index}, name '${msg.data.name}')`;
      log().error({ attempt }, `disposing of a bad case message: ${why}`);
      if (selected && index !== null) await this.#publishResult(errorResult(suite, index, selected.name, `worker: ${why}`, attempt, workerId)).catch(() => undefined);
      m.term();
      return;
    }
    if (this.#cancel.signal.aborted) {
      m.term();
      return;
    }
    const c = suite.cases[msg.data.index];
    if (!c || c.name !== msg.data.name || msg.data.fingerprint !== suite.fingerprint) {
      const why = `case ${msg.data.index} '${msg.data.name}' is not in this worker's suite (fingerprint ${suite.fingerprint.slice(0, 12)})`;
      log().error(why);
      await this.#publishResult(errorResult(suite, msg.data.index, msg.data.name, `worker: ${why}`, attempt, workerId)).catch(() => undefined);
      m.term();
      return;
    }
    // At-least-once delivery: a redelivered case may already have a result (its worker died, or
    // its ack was lost, after publishing). A first delivery cannot, so it skips the lookup.
    if (attempt > 1 && (await this.#hasResult(msg.data.index))) {
      m.ack();
      return;
    }
    this.#publishEvent({ v: NATS_PROTOCOL, runId: this.#runId, index: msg.data.index, workerId, kind: "started" });
    const lease = setInterval(() => m.working(), this.#leaseMs);
    const caseAbort = this.#caseAbort;
    let outcome;
    try {
      const index = msg.data.index;
      // --repeat N: this worker runs every repeat of the case (the pool queues what exceeds its threads).
      outcome = await runRepeated(
        this.#manifest.repeat,
        () =>
          pool.runOutcome({
            index,
            name: c.name,
            defaultTimeout: this.#manifest.defaultTimeout,
            timeoutSeconds: c.resolveTimeout(this.#manifest.defaultTimeout),
            hasTeardown: c.teardown !== null,
            shell: () => resultShell(c, index),
            signal: caseAbort,
            onEvent: this.#manifest.forwardEvents
              ? (event) => this.#publishEvent({ v: NATS_PROTOCOL, runId: this.#runId, index, workerId, kind: "event", event })
              : undefined,
          }),
        { limit: sharedLimit(pool, this.#deps.slots.size), signal: caseAbort, shell: () => resultShell(c, index) },
      );
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
    result.attempts = attempt;
    result.worker = workerId;
    try {
      await this.#nextTick();
      await this.#publishResult(result);
      // A lost ack only means a redelivery, which finds the result above and acks again.
      m.ack();
      this.#deps.metrics?.caseFinished(result);
    } catch (err) {
      // Without a published result the case must come back: leave it unacked (or hand it back now).
      log().error({ err: errorMessage(err) }, "could not publish a result; handing the case back");
      this.#deps.metrics?.caseHandedBack("publish_failed");
      m.nak(1000);
    }
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

  async #hasResult(index: number): Promise<boolean> {
    try {
      return (await this.#deps.broker.jsm.streams.getMessage(RESULTS_STREAM, { last_by_subj: resultSubject(this.#runId, index) })) !== null;
    } catch {
      return false;
    }
  }

  /** Publishes a result create-only: if the subject already holds one, another worker won, which is fine. */
  async #publishResult(result: CaseResult): Promise<void> {
    const wire = resultToWire(result, { response: false });
    const payload: ResultMessage = {
      v: NATS_PROTOCOL,
      runId: this.#runId,
      index: result.index,
      name: result.name,
      workerId: this.#deps.workerId,
      // The response is left out and outputs are cut (repeats included) to fit a message.
      result: fitResultForWire(wire),
    };
    let body = JSON.stringify(payload);
    if (Buffer.byteLength(body) > MAX_RESULT_MESSAGE_BYTES) {
      // Many fields near their limits at once: keep the verdicts, cut the output hard.
      body = JSON.stringify({ ...payload, result: { ...payload.result, output: truncateOutput(payload.result.output, 4096) } });
    }
    for (let tries = 1; ; tries++) {
      try {
        await this.#deps.broker.publisher.publish(resultSubject(this.#runId, result.index), body, {
          msgId: resultMsgId(this.#runId, result.index),
          expectLastSubjectSequence: 0,
        });
        return;
      } catch (err) {
        if (err instanceof JetStreamApiError && (err.code === 10071 || err.code === 10164)) return;
        if (tries >= 5 || this.#deps.abort.aborted) throw err;
        await sleep(200 * 2 ** tries);
      }
    }
  }

  #publishEvent(event: EventMessage): void {
    void this.#nextTick().then(() => {
      try {
        this.#deps.broker.nc.publish(eventSubject(this.#runId, event.index), JSON.stringify(event));
      } catch {
        // Live events are disposable.
      }
    });
  }

  /**
   * Resolves on the next turn of the event loop, the same promise for everyone waiting in this turn.
   * Publishes and acks made right after it go out in one socket write: the client flushes what was
   * queued before its next microtask, and per-case writes were the largest cost left per case.
   */
  #nextTick(): Promise<void> {
    return (this.#tick ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.#tick = null;
        resolve();
      }),
    ));
  }

  async #presence(accepted: boolean, reason: string | null): Promise<void> {
    const { broker, suite, workerId } = this.#deps;
    const [host, pid] = [workerId.split("/")[0] ?? workerId, Number(workerId.split("/")[1] ?? process.pid)];
    const record: WorkerRecord = {
      v: NATS_PROTOCOL,
      workerId,
      host,
      pid: Number.isFinite(pid) ? pid : process.pid,
      fingerprint: suite.fingerprint,
      accepted,
      reason,
      slots: this.#deps.slots.size,
      busy: this.#busy,
      seenAt: new Date().toISOString(),
    };
    await broker.kv.put(runKeys.worker(this.#runId, workerId), JSON.stringify(record));
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
        if (s.success && (s.data.phase === "completed" || s.data.phase === "cancelled")) this.#over ??= `the run is ${s.data.phase}`;
        if (s.success && s.data.phase === "cancelling") this.#cancel.abort(new DOMException("run cancelled", "AbortError"));
      }
    })().catch(() => undefined);
    return [cancelWatch, stateWatch];
  }
}

function errorResult(suite: LoadedSuite, index: number, name: string, error: string, attempt: number, workerId: string): CaseResult {
  const c = suite.cases[index];
  const result = c && c.name === name ? resultShell(c, index) : resultShellFor(index, name);
  result.addError(error);
  result.attempts = attempt;
  result.worker = workerId;
  return result;
}

function resultShellFor(index: number, name: string): CaseResult {
  // The case is not in this worker's suite, so its identity is what the message said.
  return new CaseResult({ name, index, tags: [] });
}

function isConsumerGone(err: unknown): boolean {
  if (err instanceof JetStreamApiError && (err.code === 10014 || err.code === 10059)) return true;
  const text = errorMessage(err);
  return /consumer (deleted|not found)|consumer_deleted|consumer_not_found/i.test(text);
}
