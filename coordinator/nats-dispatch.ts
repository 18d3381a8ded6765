import { randomUUID } from "node:crypto";
import { AckPolicy, DeliverPolicy, JetStreamApiError, type ConsumerMessages } from "@nats-io/jetstream";
import { nanos, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { RunEvent } from "../shared/agent.ts";
import { CaseResult, SuiteResult } from "../shared/result.ts";
import type { LoadedSuite } from "../shared/suite.ts";
import { EvalfleetError, ErrorCode, errorMessage } from "../shared/errors.ts";
import { openBroker, type Broker } from "../shared/jetstream-setup.ts";
import { decodeSelection, encodeSelection } from "../shared/case-selection.ts";
import { connectNats, processLabel, type NatsSettings } from "../shared/nats-connection.ts";
import { silentLogger, type Logger } from "../shared/logger.ts";
import { round3 } from "../shared/py-format.ts";
import {
  CASES_STREAM,
  RESULTS_STREAM,
  assertRunId,
  caseMsgId,
  caseSubject,
  caseSubjects,
  eventSubjects,
  indexOfSubject,
  maxDeliveriesAdvisory,
  resultSubject,
  resultSubjects,
  runConsumer,
  runKeys,
} from "../shared/subjects.ts";
import {
  CancelSchema,
  EventMessageSchema,
  NATS_PROTOCOL,
  ResultMessageSchema,
  RunManifestSchema,
  RunStateSchema,
  WorkerRecordSchema,
  type CancelRecord,
  type CaseMessage,
  type RunManifest,
  type RunPhase,
  type RunStateRecord,
  tryParseJson,
} from "../shared/wire.ts";
import { callSyncHook, DEFAULT_TIMEOUT_SECONDS } from "../worker/lifecycle.ts";
import type { SuiteHooks } from "./engine.ts";
import { ResultCollector } from "./reassemble.ts";
import { RunStateMachine } from "./run.ts";
import { selectCases, type SelectedCase, type Selector } from "./select.ts";
import { checkPassThreshold, checkRepeat } from "./run-policy.ts";
import { sleep } from "../shared/sleep.ts";

/** One decoder for every message, not a new one per result. */
const utf8 = new TextDecoder();

/**
 * The distributed run: publish the selected cases on JetStream, tail the results in any order,
 * reconcile lost cases, cancel, and reassemble one SuiteResult in declaration order.
 */

/** Options of {@link runDistributed} and {@link resumeDistributed}. */
export interface DistributedRunOptions extends SuiteHooks, Selector {
  nats: NatsSettings;
  /** Default: a new id (time + random), told through `onRunId` first. */
  runId?: string | null;
  /** Seconds for cases that set none; default: the suite's, then 120. */
  defaultTimeout?: number | null;
  /** Give up (exit 3) when no compatible worker has joined within this many seconds. Default 60. */
  waitForWorkersSeconds?: number;
  /** Deliveries per case before it is recorded as lost. Default 3. */
  maxAttempts?: number;
  /** Whole-run budget in seconds: when it passes, the run is cancelled. Default: none. */
  deadlineSeconds?: number | null;
  /** Seconds before an unacknowledged case is redelivered (workers extend it while a case runs). Default 30. */
  ackWaitSeconds?: number;
  /** After a cancel, seconds in-flight cases get to report before the report is final. Default 15. */
  cancelGraceSeconds?: number;
  /** Seconds the broker may be unreachable before the run is given up (exit 3). Default 30. */
  brokerLossSeconds?: number;
  /** Ask workers to stream run events (for `-v`). Default false. */
  forwardEvents?: boolean;
  /** Runs per case (`--repeat`); workers run every repeat of a case they take. Default 1 (a resumed run keeps its own). */
  repeat?: number;
  /** The run passes when at least this fraction (0-1) of the cases pass. Default: the suite's (a resumed run: the one it was started with). */
  passThreshold?: number | null;
  /** Seconds between reconciliations (lost cases). Default 5. */
  reconcileSeconds?: number;
  /** Cancels the run (SIGINT, SIGTERM). */
  signal?: AbortSignal | null;
  logger?: Logger;
  /** Told the run id before anything is published. */
  onRunId?: (runId: string) => void;
  /** One-line notes for the console (a worker joined, a refusal, cancelling). */
  onNote?: (line: string) => void;
  /** Which workers are busy: in-flight cases per worker, and how many workers joined. */
  onWorkers?: (busy: ReadonlyMap<string, number>, joined: number) => void;
}

/** A distributed run's outcome: the results, and whether the run finished or why not. */
export interface DistributedOutcome {
  suite: SuiteResult;
  runId: string;
  /** Set when the run is incomplete for reasons outside the agents (exit 3). */
  incomplete: string | null;
}

/** Why a lost case has no result. */
export function lostCaseError(deliveries: number): string {
  return `worker lost: delivered ${deliveries} times without a result`;
}

/** A new run id: sortable by time, unique, one subject token. */
export function newRunId(): string {
  return `${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;
}

/** Starts a new run of `suite` and follows it to the end. */
export async function runDistributed(suite: LoadedSuite, options: DistributedRunOptions): Promise<DistributedOutcome> {
  const selected = selectCases(suite.cases, { ...options, evalSets: options.evalSets ?? suite.evalSets ?? null });
  checkRepeat(options.repeat);
  checkPassThreshold(options.passThreshold);
  if (selected.length === 0) return { suite: new SuiteResult([]), runId: options.runId ?? "", incomplete: null };
  const runId = assertRunId(options.runId || newRunId());
  const run = await DistributedRun.connect(suite, selected, runId, options);
  return run.start();
}

/** Takes over a run whose coordinator died: rebuilds it from the manifest and the results, and finishes it. */
export async function resumeDistributed(suite: LoadedSuite, runId: string, options: DistributedRunOptions): Promise<DistributedOutcome> {
  assertRunId(runId);
  const nc = await connectNats(options.nats, { name: `evalfleet-coordinator/${processLabel()}`, reconnectForever: true });
  let broker: Broker;
  let manifest: RunManifest;
  try {
    broker = await openBroker(nc);
    manifest = await readManifest(broker, runId);
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
  if (manifest.suite.fingerprint !== suite.fingerprint) {
    await nc.close().catch(() => undefined);
    throw new EvalfleetError(
      ErrorCode.SuiteMismatch,
      `run ${runId} was started with suite fingerprint ${manifest.suite.fingerprint.slice(0, 12)} ('${manifest.suite.name}'); ${suite.path} has ${suite.fingerprint.slice(0, 12)}`,
    );
  }
  let selected: SelectedCase[];
  try {
    selected = decodeSelection(manifest.selection, suite.cases.length).map((index) => ({ index, case: suite.cases[index]! }));
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
  const run = new DistributedRun(nc, broker, suite, selected, runId, { ...options, defaultTimeout: manifest.defaultTimeout, maxAttempts: manifest.maxAttempts }, manifest);
  return run.start();
}

/** Reads and validates a run's manifest; a missing run is a RUN_NOT_FOUND error. */
export async function readManifest(broker: Broker, runId: string): Promise<RunManifest> {
  const entry = await broker.kv.get(runKeys.manifest(runId));
  if (!entry || entry.operation !== "PUT") throw new EvalfleetError(ErrorCode.RunNotFound, `no run '${runId}' on this NATS server`, { runId });
  const parsed = RunManifestSchema.safeParse(tryParseJson(entry.string()));
  if (!parsed.success) throw new EvalfleetError(ErrorCode.WireInvalid, `run ${runId}: malformed manifest: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** Reads a run's state record, or null. */
export async function readRunState(broker: Broker, runId: string): Promise<RunStateRecord | null> {
  const entry = await broker.kv.get(runKeys.state(runId));
  if (!entry || entry.operation !== "PUT") return null;
  const parsed = RunStateSchema.safeParse(tryParseJson(entry.string()));
  return parsed.success ? parsed.data : null;
}

/**
 * Requests a cancel (the first writer wins) and purges the run's queued cases. The coordinator
 * of the run, or a later `resume`, finalises the report. Returns false when it was already cancelled.
 */
export async function requestCancel(broker: Broker, runId: string, by: string, reason: string): Promise<boolean> {
  const record: CancelRecord = { v: NATS_PROTOCOL, at: new Date().toISOString(), by, reason };
  let created = true;
  try {
    await broker.kv.create(runKeys.cancel(runId), JSON.stringify(record));
  } catch (err) {
    if (!(err instanceof Error && /wrong last sequence|exists/i.test(err.message))) throw err;
    created = false;
  }
  await broker.jsm.streams.purge(CASES_STREAM, { filter: caseSubjects(runId) }).catch(() => undefined);
  return created;
}

class DistributedRun {
  readonly #nc: NatsConnection;
  readonly #broker: Broker;
  readonly #suite: LoadedSuite;
  readonly #selected: readonly SelectedCase[];
  readonly #runId: string;
  readonly #o: DistributedRunOptions;
  readonly #log: Logger;
  readonly #collector: ResultCollector;
  readonly #machine = new RunStateMachine();
  readonly #started = new Map<number, string>();
  readonly #subs: Subscription[] = [];
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #stoppers: Array<() => void> = [];
  #resumeManifest: RunManifest | null;
  #results: ConsumerMessages | null = null;
  #finish!: (why: string | null) => void;
  readonly #finished: Promise<string | null>;
  #cancelReason: string | null = null;
  #incomplete: string | null = null;
  #lost = 0;
  #workerJoined = false;
  readonly #refusals = new Map<string, string>();
  #t0 = performance.now();

  static async connect(suite: LoadedSuite, selected: readonly SelectedCase[], runId: string, options: DistributedRunOptions): Promise<DistributedRun> {
    const nc = await connectNats(options.nats, { name: `evalfleet-coordinator/${processLabel()}`, reconnectForever: true });
    try {
      const broker = await openBroker(nc);
      return new DistributedRun(nc, broker, suite, selected, runId, options, null);
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw err;
    }
  }

  constructor(nc: NatsConnection, broker: Broker, suite: LoadedSuite, selected: readonly SelectedCase[], runId: string, options: DistributedRunOptions, resume: RunManifest | null) {
    this.#nc = nc;
    this.#broker = broker;
    this.#suite = suite;
    this.#selected = selected;
    this.#runId = runId;
    this.#o = options;
    this.#log = (options.logger ?? silentLogger()).child({ run: runId });
    this.#collector = new ResultCollector(selected);
    this.#resumeManifest = resume;
    this.#finished = new Promise((r) => (this.#finish = r));
  }

  async start(): Promise<DistributedOutcome> {
    try {
      this.#o.onRunId?.(this.#runId);
      this.#watchBroker();
      const manifest = this.#resumeManifest ?? (await this.#createRun());
      this.#policy = {
        repeat: manifest.repeat,
        passThreshold: this.#resumeManifest && this.#o.passThreshold !== undefined ? checkPassThreshold(this.#o.passThreshold) : manifest.passThreshold,
      };
      await this.#follow(manifest);
      this.#machine.tryTo("collecting");
      this.#watchWorkers();
      this.#armBudgets();
      if (this.#collector.complete) this.#finish(null);
      const why = await this.#finished;
      if (why !== null && this.#cancelReason === null) this.#cancelReason = why;
      if (this.#cancelReason !== null) await this.#cancel(this.#cancelReason);
      return await this.#finalize();
    } finally {
      this.#teardown();
      await this.#nc.close().catch(() => undefined);
    }
  }

  /** Creates the consumer, the manifest and publishes every selected case. */
  async #createRun(): Promise<RunManifest> {
    const { kv, jsm } = this.#broker;
    if (await kv.get(runKeys.manifest(this.#runId))) {
      throw new EvalfleetError(ErrorCode.RunExists, `run '${this.#runId}' already exists: use 'evalfleet coordinator resume ${this.#runId}' to finish it, or pick another --run-id`);
    }
    const maxAttempts = this.#o.maxAttempts ?? 3;
    const ackWaitSeconds = this.#o.ackWaitSeconds ?? 30;
    // The consumer exists before the manifest, so a worker that sees the manifest can always bind.
    await jsm.consumers.add(CASES_STREAM, {
      durable_name: runConsumer(this.#runId),
      filter_subject: caseSubjects(this.#runId),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(ackWaitSeconds * 1000),
      max_deliver: maxAttempts,
      max_ack_pending: 10_000,
    });
    const manifest: RunManifest = {
      v: NATS_PROTOCOL,
      runId: this.#runId,
      suite: { name: this.#suite.name, fingerprint: this.#suite.fingerprint, path: this.#suite.path },
      selection: encodeSelection(this.#selected.map((s) => s.index), this.#suite.cases.length),
      defaultTimeout: this.#o.defaultTimeout ?? this.#suite.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS,
      maxAttempts,
      ackWaitSeconds,
      forwardEvents: this.#o.forwardEvents ?? false,
      repeat: checkRepeat(this.#o.repeat),
      // The suite's threshold applies unless the caller gives one (null included: "none").
      passThreshold: checkPassThreshold(this.#o.passThreshold !== undefined ? this.#o.passThreshold : (this.#suite.passThreshold ?? null)),
      createdAt: new Date().toISOString(),
      coordinator: { host: processLabel().split("/")[0]!, pid: process.pid },
    };
    const text = JSON.stringify(manifest);
    const limit = this.#nc.info?.max_payload;
    if (limit && Buffer.byteLength(text) > limit) {
      throw new EvalfleetError(ErrorCode.BrokerConfig, `the run's manifest is ${Buffer.byteLength(text)} bytes, over the server's max_payload of ${limit}: raise max_payload on the NATS server`);
    }
    try {
      await kv.create(runKeys.manifest(this.#runId), text);
    } catch (err) {
      // Only "the key exists" means another run has this id; anything else is said as it is.
      // (10071 / 10164: the key's last sequence is not 0, i.e. it is taken.)
      const code = (err as { code?: unknown } | null)?.code;
      if (code === 10071 || code === 10164) throw new EvalfleetError(ErrorCode.RunExists, `run '${this.#runId}' already exists`);
      throw new EvalfleetError(ErrorCode.BrokerUnreachable, `could not create run '${this.#runId}': ${errorMessage(err)}`);
    }
    return manifest;
  }

  /** Subscribes to results, events and advisories, publishes what is not yet queued, and starts reconciling. */
  async #follow(manifest: RunManifest): Promise<void> {
    this.#machine.to("dispatching");
    const { js, kv } = this.#broker;
    // Advisories are core NATS: subscribe before anything can be delivered.
    this.#subscribe(maxDeliveriesAdvisory(this.#runId), (data) => void this.#onMaxDeliveries(data));
    this.#subscribe(eventSubjects(this.#runId), (data, subject) => this.#onEvent(data, subject));
    const cancelWatch = await kv.watch({ key: runKeys.cancel(this.#runId) });
    this.#stoppers.push(() => cancelWatch.stop());
    void (async () => {
      for await (const e of cancelWatch) {
        if (e.operation !== "PUT") continue;
        const c = CancelSchema.safeParse(tryParseJson(e.string()));
        this.#requestStop(c.success ? `cancelled by ${c.data.by}: ${c.data.reason}` : "cancelled");
      }
    })().catch(() => undefined);

    // Results: replay from the start (a resumed run rebuilds its state), then tail.
    const consumer = await js.consumers.get(RESULTS_STREAM, { filter_subjects: resultSubjects(this.#runId) });
    this.#results = await consumer.consume({ max_messages: 512 });
    void (async () => {
      for await (const m of this.#results!) this.#onResult(m.data, m.subject);
    })().catch((err) => this.#log.error({ err: errorMessage(err) }, "result stream ended"));

    const state = await readRunState(this.#broker, this.#runId);
    if (state && (state.phase === "completed" || state.phase === "cancelled")) {
      // A finished run: nothing to publish; the report is rebuilt from the stream.
      await this.#caughtUp();
      this.#finish(state.phase === "cancelled" ? "the run was cancelled" : null);
      return;
    }
    const cancelled = await kv.get(runKeys.cancel(this.#runId));
    if (cancelled && cancelled.operation === "PUT") {
      await this.#caughtUp();
      const c = CancelSchema.safeParse(tryParseJson(cancelled.string()));
      this.#requestStop(c.success ? `cancelled by ${c.data.by}: ${c.data.reason}` : "cancelled");
      return;
    }
    if (this.#resumeManifest) {
      await this.#ensureConsumer(manifest);
      await this.#caughtUp();
    }
    if (!state || state.phase === "publishing") await this.#publishCases(manifest);
    await this.#putState("running");
    const every = (this.#o.reconcileSeconds ?? 5) * 1000;
    this.#timers.push(setInterval(() => void this.#reconcile().catch((err) => this.#log.warn({ err: errorMessage(err) }, "reconcile failed")), every));
  }

  async #publishCases(manifest: RunManifest): Promise<void> {
    await this.#putState("publishing");
    const { publisher, jsm } = this.#broker;
    // On resume, skip what already has a result or is still queued.
    const queued = new Set<number>();
    if (this.#resumeManifest) {
      const info = await jsm.streams.info(CASES_STREAM, { subjects_filter: caseSubjects(this.#runId) });
      for (const subject of Object.keys(info.state.subjects ?? {})) {
        const i = indexOfSubject(subject);
        if (i !== null) queued.add(i);
      }
    }
    const todo = this.#selected.filter((s) => !this.#collector.has(s.index) && !queued.has(s.index));
    const window = 256;
    let published = 0;
    for (let i = 0; i < todo.length && !this.#machine.stopping; i += window) {
      await Promise.all(
        todo.slice(i, i + window).map(async (s) => {
          const msg: CaseMessage = { v: NATS_PROTOCOL, runId: this.#runId, index: s.index, name: s.case.name, fingerprint: manifest.suite.fingerprint };
          for (let tries = 1; ; tries++) {
            try {
              await publisher.publish(caseSubject(this.#runId, s.index), JSON.stringify(msg), { msgId: caseMsgId(this.#runId, s.index) });
              published++;
              return;
            } catch (err) {
              if (tries >= 5) throw new EvalfleetError(ErrorCode.BrokerUnreachable, `cannot publish case ${s.index}: ${errorMessage(err)}`);
              await sleep(200 * 2 ** tries);
            }
          }
        }),
      );
    }
    this.#log.info({ published }, "cases published");
  }

  async #ensureConsumer(manifest: RunManifest): Promise<void> {
    try {
      await this.#broker.jsm.consumers.info(CASES_STREAM, runConsumer(this.#runId));
    } catch (err) {
      if (!(err instanceof JetStreamApiError && err.code === 10014)) throw err;
      await this.#broker.jsm.consumers.add(CASES_STREAM, {
        durable_name: runConsumer(this.#runId),
        filter_subject: caseSubjects(this.#runId),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(manifest.ackWaitSeconds * 1000),
        max_deliver: manifest.maxAttempts,
        max_ack_pending: 10_000,
      });
    }
  }

  /** Resolves once the ordered results consumer has delivered everything stored so far. */
  async #caughtUp(): Promise<void> {
    const until = Date.now() + 30_000;
    for (;;) {
      const info = await this.#broker.jsm.streams.info(RESULTS_STREAM, { subjects_filter: resultSubjects(this.#runId) });
      const stored = Object.keys(info.state.subjects ?? {}).filter((s) => {
        const i = indexOfSubject(s);
        return i !== null && this.#collector.selectedAt(i) !== undefined;
      }).length;
      if (this.#collector.size >= stored || Date.now() > until) return;
      await sleep(50);
    }
  }

  #onResult(data: Uint8Array, subject: string): void {
    const parsed = ResultMessageSchema.safeParse(tryParseJson(utf8.decode(data)));
    const index = indexOfSubject(subject);
    let problem: string | null = null;
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problem = `malformed result message: ${issue?.path.join(".") || "message"}: ${issue?.message}`;
    } else if (parsed.data.runId !== this.#runId || index !== parsed.data.index || this.#collector.selectedAt(index)?.case.name !== parsed.data.name) {
      problem = `result message for run '${parsed.data.runId}', case ${parsed.data.index} '${parsed.data.name}' on the subject of case ${index}`;
    }
    if (problem === null) {
      this.#accept(CaseResult.fromData(parsed.data!.result), `result from ${parsed.data!.workerId}`);
      return;
    }
    this.#log.warn({ subject }, `disposing of a bad result: ${problem}`);
    // Results are create-only per case: this message holds the case's subject, so no real result
    // can follow. The case is known: record the problem as its result rather than wait forever.
    const sel = index === null ? undefined : this.#collector.selectedAt(index);
    if (sel && !this.#collector.has(sel.index)) this.#accept(this.#errorResult(sel, `worker: ${problem}`, 1), "bad result message");
  }

  #errorResult(sel: SelectedCase, error: string, attempts: number): CaseResult {
    const result = new CaseResult({ name: sel.case.name, tags: sel.case.tags, index: sel.index });
    if (sel.case.team) result.teamId = sel.case.componentId;
    else result.agentId = sel.case.componentId;
    result.attempts = attempts;
    result.addError(error);
    return result;
  }

  #accept(result: CaseResult, source: string): void {
    const outcome = this.#collector.add(result);
    if (outcome !== "accepted") {
      if (outcome === "unknown") this.#log.warn({ index: result.index, name: result.name }, `ignoring a ${source} for an unknown case`);
      return;
    }
    if (this.#started.delete(result.index)) this.#reportWorkers();
    const sel = this.#collector.selectedAt(result.index)!;
    if (this.#o.onCaseEnd) callSyncHook("onCaseEnd", () => this.#o.onCaseEnd!(sel.case, result), (m) => result.addError(m));
    if (this.#collector.complete) this.#finish(this.#cancelReason);
    else if (this.#machine.state === "cancelling" && this.#started.size === 0) this.#finish(this.#cancelReason);
  }

  #onEvent(data: Uint8Array, subject: string): void {
    const parsed = EventMessageSchema.safeParse(tryParseJson(utf8.decode(data)));
    if (!parsed.success || parsed.data.runId !== this.#runId || indexOfSubject(subject) !== parsed.data.index) return;
    const e = parsed.data;
    const sel = this.#collector.selectedAt(e.index);
    if (!sel || this.#collector.has(e.index)) return;
    this.#workerJoined = true;
    if (e.kind === "started") {
      if (this.#started.get(e.index) === e.workerId) return;
      const first = !this.#started.has(e.index);
      this.#started.set(e.index, e.workerId);
      this.#reportWorkers();
      if (!first) return;
      if (this.#o.onCaseStart) callSyncHook("onCaseStart", () => this.#o.onCaseStart!(sel.case), (m) => this.#log.warn({ index: e.index }, m));
    } else if (e.event && this.#o.onRunEvent) {
      callSyncHook("onRunEvent", () => this.#o.onRunEvent!(sel.case, e.event as RunEvent), (m) => this.#log.warn({ index: e.index }, m));
    }
  }

  async #onMaxDeliveries(data: Uint8Array): Promise<void> {
    const advisory = tryParseJson(utf8.decode(data)) as { stream_seq?: number; deliveries?: number } | undefined;
    if (!advisory?.stream_seq) return;
    try {
      const stored = await this.#broker.jsm.streams.getMessage(CASES_STREAM, { seq: advisory.stream_seq });
      const index = stored ? indexOfSubject(stored.subject) : null;
      if (index === null) return;
      await this.#recordLost(index, advisory.deliveries ?? this.#o.maxAttempts ?? 3, advisory.stream_seq);
    } catch (err) {
      this.#log.warn({ err: errorMessage(err) }, "could not process a max-deliveries advisory; reconciliation will catch the case");
    }
  }

  /** Records a case whose deliveries are used up, unless its result has arrived after all. */
  async #recordLost(index: number, deliveries: number, seq: number | null): Promise<void> {
    const sel = this.#collector.selectedAt(index);
    if (!sel || this.#collector.has(index)) return;
    const stored = await this.#broker.jsm.streams.getMessage(RESULTS_STREAM, { last_by_subj: resultSubject(this.#runId, index) }).catch(() => null);
    if (stored) {
      this.#onResult(stored.data, stored.subject);
      return;
    }
    const result = this.#errorResult(sel, lostCaseError(deliveries), deliveries);
    this.#lost++;
    this.#log.warn({ index, deliveries }, "case lost after all deliveries");
    if (seq !== null) await this.#broker.jsm.streams.deleteMessage(CASES_STREAM, seq).catch(() => undefined);
    this.#accept(result, "loss record");
  }

  /** Finds cases that can no longer get a result (max-delivered leftovers the advisory missed). */
  async #reconcile(): Promise<void> {
    if (this.#machine.state !== "collecting" || this.#collector.complete) return;
    const info = await this.#broker.jsm.consumers.info(CASES_STREAM, runConsumer(this.#runId));
    if (info.num_pending > 0 || info.num_ack_pending > 0) {
      this.#quietRounds = 0;
      return;
    }
    // A case handed back with a delay may be briefly counted nowhere: require two quiet rounds in a row.
    if (++this.#quietRounds < 2) return;
    for (const s of this.#collector.missing()) {
      const queued = await this.#broker.jsm.streams.getMessage(CASES_STREAM, { last_by_subj: caseSubject(this.#runId, s.index) }).catch(() => null);
      // Nothing pending or in flight, yet the message is still stored: the server gave up on it.
      await this.#recordLost(s.index, this.#o.maxAttempts ?? 3, queued ? queued.seq : null);
    }
  }

  #watchWorkers(): void {
    const wait = (this.#o.waitForWorkersSeconds ?? 60) * 1000;
    void (async () => {
      const watch = await this.#broker.kv.watch({ key: runKeys.workers(this.#runId) });
      this.#stoppers.push(() => watch.stop());
      for await (const e of watch) {
        if (e.operation !== "PUT") continue;
        const w = WorkerRecordSchema.safeParse(tryParseJson(e.string()));
        if (!w.success) continue;
        if (w.data.accepted) {
          if (!this.#workerJoined || !this.#seen.has(w.data.workerId)) this.#o.onNote?.(`worker ${w.data.workerId} joined (${w.data.slots} slots)`);
          this.#seen.add(w.data.workerId);
          this.#workerJoined = true;
          this.#reportWorkers();
        } else if (!this.#refusals.has(w.data.workerId)) {
          this.#refusals.set(w.data.workerId, w.data.reason ?? "refused");
          this.#o.onNote?.(`worker ${w.data.workerId} refused the run: ${w.data.reason ?? "no reason given"}`);
        }
      }
    })().catch(() => undefined);
    this.#timers.push(
      setTimeout(() => {
        if (this.#workerJoined || this.#collector.size > 0) return;
        const refused = [...this.#refusals.entries()].map(([id, why]) => `${id}: ${why}`);
        this.#incomplete = `no compatible worker joined within ${this.#o.waitForWorkersSeconds ?? 60}s (suite fingerprint ${this.#suite.fingerprint.slice(0, 12)})${refused.length ? `; refused by ${refused.join("; ")}` : ""}`;
        this.#requestStop(this.#incomplete);
      }, wait),
    );
  }
  readonly #seen = new Set<string>();

  #reportWorkers(): void {
    if (!this.#o.onWorkers) return;
    const busy = new Map<string, number>();
    for (const w of this.#started.values()) busy.set(w, (busy.get(w) ?? 0) + 1);
    this.#o.onWorkers(busy, this.#seen.size);
  }

  #armBudgets(): void {
    if (this.#o.deadlineSeconds) {
      this.#timers.push(setTimeout(() => this.#requestStop(`the run's deadline of ${this.#o.deadlineSeconds}s passed`), this.#o.deadlineSeconds * 1000));
    }
    const signal = this.#o.signal;
    if (signal) {
      const onAbort = (): void => this.#requestStop(reasonText(signal.reason) ?? "cancelled");
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener("abort", onAbort, { once: true });
        this.#stoppers.push(() => signal.removeEventListener("abort", onAbort));
      }
    }
  }

  #watchBroker(): void {
    let lostAt: number | null = null;
    let timer: NodeJS.Timeout | undefined;
    const bound = (this.#o.brokerLossSeconds ?? 30) * 1000;
    void (async () => {
      for await (const s of this.#nc.status()) {
        if (s.type === "disconnect" && lostAt === null) {
          lostAt = Date.now();
          this.#o.onNote?.(`lost the NATS connection; retrying for up to ${bound / 1000}s`);
          timer = setTimeout(() => {
            this.#incomplete = `lost the NATS connection for more than ${bound / 1000}s`;
            this.#brokerLost = true;
            this.#finish(this.#incomplete);
          }, bound);
        } else if (s.type === "reconnect") {
          lostAt = null;
          clearTimeout(timer);
          this.#o.onNote?.("reconnected to NATS");
          // Core subscriptions survive reconnects; catch up on anything an advisory may have missed.
          void this.#reconcile().catch(() => undefined);
        }
      }
    })().catch(() => undefined);
    this.#stoppers.push(() => clearTimeout(timer));
  }
  #brokerLost = false;
  #quietRounds = 0;
  /** The run's repeat count and pass threshold, from its manifest. */
  #policy: { repeat: number; passThreshold: number | null } = { repeat: 1, passThreshold: null };

  /** Asks the run to stop: the cancel happens in `start()` once the wait ends. */
  #requestStop(reason: string): void {
    if (this.#cancelReason !== null || this.#machine.state === "done") return;
    this.#cancelReason = reason;
    this.#finish(reason);
  }

  /** Writes the cancel key, purges the queue, and lets in-flight cases report within the grace. */
  async #cancel(reason: string): Promise<void> {
    if (this.#brokerLost) return;
    this.#machine.tryTo("cancelling");
    this.#o.onNote?.(`cancelling: ${reason}`);
    try {
      await requestCancel(this.#broker, this.#runId, `coordinator ${processLabel()}`, reason);
      await this.#putState("cancelling");
    } catch (err) {
      this.#log.error({ err: errorMessage(err) }, "could not write the cancel; finalising anyway");
      return;
    }
    if (this.#started.size === 0 || this.#collector.complete) return;
    const grace = (this.#o.cancelGraceSeconds ?? 15) * 1000;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, grace);
      const check = setInterval(() => {
        if (this.#started.size === 0 || this.#collector.complete) {
          clearTimeout(t);
          clearInterval(check);
          resolve();
        }
      }, 50);
      t.unref?.();
    });
  }

  async #finalize(): Promise<DistributedOutcome> {
    const cancelled = this.#cancelReason !== null;
    const skipReason = this.#incomplete ?? (cancelled ? `run cancelled (${this.#cancelReason})` : "the run ended before the case ran");
    const results = this.#collector.finish(skipReason);
    if (this.#o.onCaseEnd) {
      for (const r of results) {
        if (!r.skipped) continue;
        const sel = this.#collector.selectedAt(r.index)!;
        callSyncHook("onCaseEnd", () => this.#o.onCaseEnd!(sel.case, r), (m) => r.addError(m));
      }
    }
    this.#machine.tryTo("done");
    if (!this.#brokerLost) {
      try {
        await this.#putState(cancelled ? "cancelled" : "completed");
        // Workers with --run see the consumer go and exit 0; leftovers (max-delivered) go with the purge.
        await this.#broker.jsm.consumers.delete(CASES_STREAM, runConsumer(this.#runId)).catch(() => undefined);
        await this.#broker.jsm.streams.purge(CASES_STREAM, { filter: caseSubjects(this.#runId) }).catch(() => undefined);
      } catch (err) {
        this.#log.warn({ err: errorMessage(err) }, "could not record the end of the run");
      }
    }
    const incomplete = this.#incomplete ?? (cancelled ? `run cancelled: ${this.#cancelReason}` : this.#lost > 0 ? `${this.#lost} case(s) lost after all deliveries` : null);
    return {
      runId: this.#runId,
      incomplete,
      suite: new SuiteResult(results, {
        runId: this.#runId,
        durationSeconds: round3((performance.now() - this.#t0) / 1000),
        cancelled,
        passThreshold: this.#policy.passThreshold,
        repeat: this.#policy.repeat,
      }),
    };
  }

  async #putState(phase: RunPhase): Promise<void> {
    const record: RunStateRecord = { v: NATS_PROTOCOL, phase, published: this.#selected.length, updatedAt: new Date().toISOString() };
    await this.#broker.kv.put(runKeys.state(this.#runId), JSON.stringify(record));
  }

  #subscribe(subject: string, handle: (data: Uint8Array, subject: string) => void): void {
    const sub = this.#nc.subscribe(subject, { callback: (err, msg) => (err ? undefined : handle(msg.data, msg.subject)) });
    this.#subs.push(sub);
  }

  #teardown(): void {
    for (const t of this.#timers) clearTimeout(t);
    for (const s of this.#subs) s.unsubscribe();
    for (const stop of this.#stoppers) stop();
    void this.#results?.close().catch(() => undefined);
  }
}

function reasonText(reason: unknown): string | null {
  if (reason instanceof Error || reason instanceof DOMException) return reason.message;
  return typeof reason === "string" ? reason : null;
}
