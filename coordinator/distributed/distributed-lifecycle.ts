import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { SuiteResult, type CaseResult } from "../../shared/result/result.ts";
import type { LoadedSuite } from "../../shared/suite/suite.ts";
import { EvalfleetError, ErrorCode, errorMessage } from "../../shared/errors.ts";
import { openBroker, openRunKeys, type Broker } from "../../shared/broker/setup.ts";
import { connectNats, processLabel } from "../../shared/broker/connection.ts";
import { silentLogger, type Logger } from "../../shared/logger.ts";
import { round3 } from "../../shared/py-format.ts";
import { sleep } from "../../shared/process/sleep.ts";
import { CASES_STREAM, CASSETTE_BUCKET, caseSubjects, eventSubjects, maxDeliveriesAdvisory, runConsumer } from "../../shared/broker/subjects.ts";
import { isFinishedPhase, type RunManifest, type RunRecordPhase } from "../../shared/wire/nats.ts";
import { RunStateMachine } from "../run/state.ts";
import { endedCancelled, SUITE_ABORTED_REASON } from "../run/dispatch-loop.ts";
import { restateCancelledBeforeStart } from "../../shared/result/result-shell.ts";
import type { SelectedCase } from "../run/select.ts";
import { checkPassThreshold, checkRepeat } from "../run/policy.ts";
import type { RunTokens } from "../../shared/wire/case-token.ts";
import { RunCollector } from "./collect.ts";
import { ensureResponseCacheBucket } from "../../shared/broker/response-cache-bucket.ts";
import { cassetteBucketExists, ensureCassetteBucket } from "../../shared/broker/cassette-bucket.ts";
import { createRun, ensureRunConsumer, newManifest, publishBatch, publishCases, queuedDeliveries, refuseExistingRun, trialsOf } from "./publish.ts";
import { deliveryKey, type Delivery } from "../run/trial-ledger.ts";
import { LostCases } from "./reconcile.ts";
import { establishRunKey } from "./run-key.ts";
import { readCancel, readRunState, requestCancel } from "./run-records.ts";
import { RunStateWriter } from "./run-state-writer.ts";
import { watchBrokerLoss, watchCancelKey, watchDeadline, watchSignal, type StopWatching } from "./watchers.ts";
import { WorkerRoster } from "./workers.ts";
import { PermitServer } from "./permit-server.ts";
import { adaptiveOf, type DistributedOutcome, type DistributedRunOptions, type DistributedSettings } from "./distributed-options.ts";
import { StartGateServer } from "./start-gate-server.ts";
import { BUDGET_EXHAUSTED, BudgetMeter, hasBudget } from "../../shared/providers/budget.ts";

/**
 * One distributed run's lifecycle, as a named state machine (coordinator/run/state.ts):
 *
 *   selecting -> dispatching -> collecting -> (cancelling ->) done
 *
 * `dispatching` creates the run (or takes over a resumed one) and publishes its cases
 * (publish.ts); `collecting` waits for the results (collect.ts) while lost cases are reconciled
 * (reconcile.ts) and the workers, the broker, the deadline and the cancel key are watched
 * (workers.ts, watchers.ts); `cancelling` writes the cancel and gives in-flight cases a grace;
 * `done` reassembles one SuiteResult in declaration order and records the end of the run
 * (run-records.ts). Started by the front doors of distributed-run.ts, which compile its settings.
 */

/** The name a coordinator's NATS connection goes by (server logs, `nats server report connections`). */
export function coordinatorName(): string {
  return `evalfleet-coordinator/${processLabel()}`;
}

/** One distributed run, from its first publish to its final report. */
export class DistributedRun {
  readonly #nc: NatsConnection;
  readonly #broker: Broker;
  /** The run's delivery tokens (from its key). */
  readonly #tokens: RunTokens;
  readonly #suite: LoadedSuite;
  readonly #selected: readonly SelectedCase[];
  readonly #runId: string;
  readonly #o: DistributedRunOptions;
  /** The run's bounds and timings, compiled from the options and the suite (compileRunSettings). */
  readonly #settings: DistributedSettings;
  readonly #log: Logger;
  readonly #machine = new RunStateMachine();
  readonly #collector: RunCollector;
  readonly #roster: WorkerRoster;
  /** Set once the manifest is known (it says how many deliveries a case gets). */
  #lostCases: LostCases | null = null;
  /** The manifest of a run taken over by `resume`; null for a new run. */
  readonly #resumeManifest: RunManifest | null;
  /** The run's repeat count and pass threshold, from its manifest. */
  #policy: { repeat: number; repeatMax: number; passThreshold: number | null } = { repeat: 1, repeatMax: 1, passThreshold: null };
  /** Adaptive batches planned and not yet published (the reconciler does not take them for lost). */
  readonly #publishingMore = new Set<string>();
  /** A new run's manifest, once created (adaptive batches are published with it). */
  #manifest: RunManifest | null = null;
  readonly #subs: Subscription[] = [];
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #stoppers: StopWatching[] = [];
  /** Resolves when the wait for results ends: null when every case has one, else why it ended early. */
  readonly #finished: Promise<string | null>;
  #finish!: (why: string | null) => void;
  /** Why the run is being stopped (a cancel, the deadline, no worker, the broker lost); null while it runs. */
  #cancelReason: string | null = null;
  /** Why the run is incomplete for reasons outside the agents (exit 3), when it is. */
  #incomplete: string | null = null;
  /** The case whose agent run ended cancelled, when that stopped the suite (spec M1); null otherwise. */
  #abortedAfter: string | null = null;
  #brokerLost = false;
  readonly #t0 = performance.now();
  readonly #state: RunStateWriter;
  /** Grants the run's provider permits to every worker (started once the manifest is known). */
  #permits: PermitServer | null = null;
  /** Answers workers asking whether a case may start (a run with a budget). */
  #startGate: StartGateServer | null = null;
  /** Counts the run's spend against its budget (null without one). */
  readonly #meter: BudgetMeter | null;

  static async connect(suite: LoadedSuite, selected: readonly SelectedCase[], runId: string, options: DistributedRunOptions, settings: DistributedSettings): Promise<DistributedRun> {
    const nc = await connectNats(options.nats, { name: coordinatorName(), reconnectForever: true });
    try {
      const broker = await openBroker(nc);
      await refuseExistingRun(broker, runId);
      const tokens = await establishRunKey(await openRunKeys(broker), runId);
      return new DistributedRun(nc, broker, tokens, suite, selected, runId, options, settings, null);
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw err;
    }
  }

  constructor(
    nc: NatsConnection,
    broker: Broker,
    tokens: RunTokens,
    suite: LoadedSuite,
    selected: readonly SelectedCase[],
    runId: string,
    options: DistributedRunOptions,
    settings: DistributedSettings,
    resume: RunManifest | null,
  ) {
    this.#nc = nc;
    this.#broker = broker;
    this.#tokens = tokens.remember(suite.cases.length);
    this.#suite = suite;
    this.#selected = selected;
    this.#runId = runId;
    this.#o = options;
    this.#settings = settings;
    this.#log = (options.logger ?? silentLogger()).child({ run: runId });
    this.#resumeManifest = resume;
    this.#meter = hasBudget(options.budget) ? new BudgetMeter(options.budget) : null;
    this.#finished = new Promise((r) => (this.#finish = r));
    this.#collector = new RunCollector({
      runId,
      selected,
      hooks: options,
      logger: this.#log,
      tokens,
      presence: (workerId) => this.#roster.present(broker, runId, workerId),
      prices: options.prices ?? suite.prices ?? null,
      // A resumed run keeps its case pass rule unless the flag gives one.
      casePassRate: options.casePassRate ?? resume?.casePassRate ?? null,
      // Each trial is its own delivery: the collector folds a case once its trials are in.
      trials: resume ? resume.repeat : checkRepeat(options.repeat),
      adaptive: adaptiveOf(resume, options, settings, (trials, wanted) => (this.#stopReason() !== null || this.#machine.stopping ? 0 : (this.#meter?.trialsThatFit(trials.map((t) => t.usage), wanted, true) ?? wanted))),
      onMore: (deliveries) => void this.#publishMore(deliveries),
      spool: options.spoolResults ?? true,
      listener: {
        onAccepted: (result) => this.#onAccepted(result),
        onTrial: (result) => this.#onTrial(result),
        onInFlightChanged: () => this.#reportWorkers(),
        onWorkerActive: () => this.#roster.markActive(),
      },
    });
    this.#roster = new WorkerRoster({ onNote: options.onNote, onJoined: () => this.#reportWorkers() });
    this.#state = new RunStateWriter(broker, runId, selected.length, this.#log, options.etaSeconds ?? null);
  }

  /** Runs the lifecycle to its end; the connection is closed whatever happens. */
  async start(): Promise<DistributedOutcome> {
    try {
      this.#o.onRunId?.(this.#runId);
      this.#stoppers.push(
        watchBrokerLoss(this.#nc, this.#settings.brokerLossMs / 1000, {
          onNote: this.#o.onNote,
          onLost: (why) => {
            this.#incomplete = why;
            this.#brokerLost = true;
            this.#finish(why);
          },
          // Core subscriptions survive reconnects; catch up on anything an advisory may have missed.
          onReconnect: () => void this.#lostCases?.reconcile().catch(() => undefined),
        }),
      );
      const manifest = this.#resumeManifest ?? (await this.#create());
      // Before any case is published: the workers' first model calls ask for permits.
      this.#permits = new PermitServer(this.#nc, this.#broker, this.#runId, this.#resumeManifest && this.#o.limits ? this.#o.limits : manifest.limits, this.#log).start();
      // Before any case is published too: with a budget, a worker asks before each case starts.
      this.#startGate = new StartGateServer(this.#nc, this.#runId, () => this.#stopReason(), this.#log).start();
      this.#policy = {
        repeat: manifest.repeat,
        repeatMax: manifest.repeatMax ?? manifest.repeat,
        passThreshold: this.#resumeManifest && this.#o.passThreshold !== undefined ? checkPassThreshold(this.#o.passThreshold) : manifest.passThreshold,
      };
      await this.#dispatch(manifest);
      this.#machine.tryTo("collecting");
      this.#watchWorkers();
      this.#stoppers.push(watchDeadline(this.#o.deadlineSeconds, (why) => this.#requestStop(why)));
      this.#stoppers.push(watchSignal(this.#o.signal, (why) => this.#requestStop(why)));
      if (this.#collector.complete) this.#finish(null);
      const why = await this.#finished;
      if (why !== null && this.#cancelReason === null) this.#cancelReason = why;
      if (this.#cancelReason !== null) await this.#cancel(this.#cancelReason);
      return await this.#finalise();
    } finally {
      this.#teardown();
      await this.#permits?.close().catch(() => undefined);
      this.#startGate?.close();
      await this.#nc.close().catch(() => undefined);
    }
  }

  /** A new run: its consumer and manifest (publish.ts). */
  async #create(): Promise<RunManifest> {
    const manifest = newManifest(this.#runId, this.#suite, this.#selected, this.#o, this.#settings);
    // `--cache shared`: the bucket exists before any worker looks an answer up in it.
    if (manifest.cache?.kind === "shared") await ensureResponseCacheBucket(this.#broker.js, this.#broker.jsm, manifest.cache.ttlSeconds * 1000);
    // `--record nats`: the bucket exists before any worker writes a cassette; `--replay nats`: there is something to replay.
    if (manifest.cassette?.mode === "record" || manifest.cassette?.recordMissing) await ensureCassetteBucket(this.#broker.js, this.#broker.jsm);
    else if (manifest.cassette && !(await cassetteBucketExists(this.#broker.jsm))) {
      throw new EvalfleetError(ErrorCode.Usage, `--replay nats: this broker has no ${CASSETTE_BUCKET} bucket, so no cassette was recorded on it: record first (coordinator run --record nats)`, { field: "replay" });
    }
    await createRun(this.#nc, this.#broker, manifest);
    this.#manifest = manifest;
    return manifest;
  }

  /**
   * `dispatching`: subscribes to advisories, events, the cancel key and the results, then
   * publishes what is not yet queued and starts reconciling. A run found finished or cancelled
   * publishes nothing: its report is rebuilt from the results stream.
   */
  async #dispatch(manifest: RunManifest): Promise<void> {
    this.#machine.to("dispatching");
    const lost = new LostCases({
      broker: this.#broker,
      runId: this.#runId,
      collector: this.#collector,
      tokens: this.#tokens,
      maxAttempts: manifest.maxAttempts,
      collecting: () => this.#machine.state === "collecting",
      publishing: (index, trial) => this.#publishingMore.has(deliveryKey(index, trial)),
      logger: this.#log,
    });
    this.#lostCases = lost;
    // Advisories are core NATS: subscribe before anything can be delivered.
    this.#subscribe(maxDeliveriesAdvisory(this.#runId), (data) => void lost.onMaxDeliveries(data));
    this.#subscribe(eventSubjects(this.#runId), (data, subject) => this.#collector.onEvent(data, subject));
    this.#stoppers.push(await watchCancelKey(this.#broker, this.#runId, (why) => this.#requestStop(why)));
    // Results: replay from the start (a resumed run rebuilds its state), then tail.
    await this.#collector.tail(this.#broker);

    const state = await readRunState(this.#broker, this.#runId);
    if (state && isFinishedPhase(state.phase)) {
      await this.#collector.caughtUp(this.#broker);
      this.#finish(state.phase === "cancelled" ? "the run was cancelled" : null);
      return;
    }
    const cancelled = await readCancel(this.#broker, this.#runId);
    if (cancelled !== null) {
      await this.#collector.caughtUp(this.#broker);
      this.#requestStop(cancelled);
      return;
    }
    if (this.#resumeManifest) {
      await ensureRunConsumer(this.#broker, manifest);
      await this.#collector.caughtUp(this.#broker);
    }
    if (!state || state.phase === "publishing") await this.#publish(manifest);
    await this.#putState("running");
    this.#state.startHeartbeat();
    const every = this.#settings.reconcileMs;
    this.#timers.push(setInterval(() => void lost.reconcile().catch((err) => this.#log.warn({ err: errorMessage(err) }, "reconcile failed")), every));
  }

  /** Publishes the cases without a result; on resume, also skips those still queued. */
  async #publish(manifest: RunManifest): Promise<void> {
    await this.#putState("publishing");
    const queued = this.#resumeManifest ? await queuedDeliveries(this.#broker, this.#runId) : new Set<string>();
    const todo = trialsOf(this.#selected, manifest.repeat).filter((d) => !this.#collector.hasTrial(d.sel.index, d.trial) && (queued.size === 0 || !queued.has(deliveryKey(d.sel.index, d.trial))));
    this.#state.startHeartbeat();
    const published = await publishCases(this.#broker, manifest, this.#tokens, todo, () => this.#machine.stopping);
    this.#log.info({ published }, "cases published");
  }

  /** Publishes an adaptive case's next batch (the collector planned it); a failure is the reconciler's to find. */
  async #publishMore(deliveries: readonly Delivery[]): Promise<void> {
    const manifest = this.#resumeManifest ?? this.#manifest;
    if (manifest) await publishBatch(this.#broker, manifest, this.#tokens, (i) => this.#collector.selectedAt(i), deliveries, { pending: this.#publishingMore, stopping: () => this.#machine.stopping, logger: this.#log });
  }

  /** Watches the workers' presence, and gives up when none compatible joins in time. */
  #watchWorkers(): void {
    const waitSeconds = this.#settings.waitForWorkersMs / 1000;
    void this.#roster.watch(this.#broker, this.#runId).then(
      (watch) => this.#stoppers.push(() => watch.stop()),
      () => undefined,
    );
    this.#timers.push(
      setTimeout(() => {
        if (this.#roster.joined || this.#collector.size > 0) return;
        this.#incomplete = this.#roster.noCompatibleWorker(waitSeconds, this.#suite.fingerprint);
        this.#requestStop(this.#incomplete);
      }, waitSeconds * 1000),
    );
  }

  /** A case got its result: the wait ends when it was the last, or the last in flight of a cancelled run. */
  #onAccepted(result: CaseResult): void {
    // Spec M1, as locally: a run that ended cancelled (a user's Ctrl-C inside the agent) stops the
    // suite. The cancel reaches every worker: in-flight cases finish or are cancelled within the
    // grace, and the cases not started are skipped as Agno skips them.
    if (endedCancelled(result) && this.#cancelReason === null && !this.#collector.complete) {
      this.#abortedAfter = result.name;
      this.#requestStop(`${SUITE_ABORTED_REASON} (case '${result.name}')`);
      return;
    }
    if (this.#collector.complete) this.#finish(this.#cancelReason);
    else if (this.#machine.state === "cancelling" && this.#collector.inFlight === 0) this.#finish(this.#cancelReason);
  }

  /** A trial got its result: what it spent counts (the budget is spent: the run stops like at its deadline). */
  #onTrial(result: CaseResult): void {
    if (this.#meter?.add(result.usage) && this.#cancelReason === null && !this.#collector.complete) this.#requestStop(BUDGET_EXHAUSTED);
  }

  #reportWorkers(): void {
    this.#o.onWorkers?.(this.#collector.busyByWorker(), this.#roster.size);
  }

  /** Why no case may start any more (the start gate's answer), or null while cases may start. */
  #stopReason(): string | null {
    if (this.#cancelReason !== null) return this.#cancelReason;
    if (this.#meter?.exhausted) return BUDGET_EXHAUSTED;
    return this.#machine.state === "done" || this.#brokerLost ? "the run is over" : null;
  }

  /** Asks the run to stop: the cancel happens in `start()` once the wait ends. */
  #requestStop(reason: string): void {
    if (this.#cancelReason !== null || this.#machine.state === "done") return;
    this.#cancelReason = reason;
    this.#finish(reason);
  }

  /** `cancelling`: writes the cancel key, purges the queue, and lets in-flight cases report within the grace. */
  async #cancel(reason: string): Promise<void> {
    if (this.#brokerLost) return;
    this.#machine.tryTo("cancelling");
    this.#o.onNote?.(`cancelling: ${reason}`);
    // Cases held by workers whose start this coordinator did not see (a resumed run's): counted
    // before the purge, which takes the held messages with it. Asked for alongside the cancel
    // rather than before it, so that the cancel reaches the workers one round trip sooner (the
    // purge waits for the cancel key's write, a round trip after this question).
    const held = this.#heldByWorkers();
    const inFlight = this.#collector.inFlight;
    const before = this.#collector.size;
    // A held case its worker then asks the start gate about is refused and reports nothing.
    const refusedBefore = this.#startGate?.refused ?? 0;
    const settled = (): number => this.#collector.size - before + (this.#startGate?.refused ?? 0) - refusedBefore;
    let unseen = 0;
    try {
      await requestCancel(this.#broker, this.#runId, `coordinator ${processLabel()}`, reason);
      unseen = Math.max(0, (await held) - inFlight);
      await this.#putState("cancelling");
    } catch (err) {
      this.#log.error({ err: errorMessage(err) }, "could not write the cancel; finalising anyway");
      return;
    }
    // In-flight cases report within the grace: those whose start this coordinator saw, and as many
    // more results as there were unseen held cases.
    const until = Date.now() + this.#settings.cancelGraceMs;
    while (!this.#collector.complete && Date.now() < until && (this.#collector.inFlight > 0 || settled() < unseen)) await sleep(50);
  }

  /** Cases delivered to a worker and not acknowledged, as the run's consumer counts them (0 when it cannot say). */
  async #heldByWorkers(): Promise<number> {
    try {
      return (await this.#broker.jsm.consumers.info(CASES_STREAM, runConsumer(this.#runId))).num_ack_pending;
    } catch {
      return 0;
    }
  }

  /** `done`: every case accounted for in declaration order; the run's end recorded for workers and `status`. */
  async #finalise(): Promise<DistributedOutcome> {
    // A suite aborted after a cancelled run is not a cancelled run (as locally): its skipped cases say why.
    const aborted = this.#abortedAfter !== null && this.#incomplete === null;
    const cancelled = this.#cancelReason !== null && !aborted;
    const skipReason = this.#incomplete ?? (aborted ? SUITE_ABORTED_REASON : cancelled ? (this.#cancelReason === BUDGET_EXHAUSTED ? BUDGET_EXHAUSTED : `run cancelled (${this.#cancelReason})`) : "the run ended before the case ran");
    // A case a worker had taken but not started when the cancel came was skipped for the run's reason
    // (aborted, budget exhausted, deadline, a user's cancel): the worker only knows it was cancelled.
    const results = this.#collector.finish(skipReason, aborted || cancelled ? (r) => restateCancelledBeforeStart(r, skipReason) : undefined);
    this.#machine.tryTo("done");
    this.#state.stopHeartbeat();
    const refused = this.#startGate?.refused ?? 0;
    if (refused > 0) this.#log.info({ refused }, `${refused} case(s) not started: the start gate refused them (${skipReason})`);
    if (this.#collector.dropped > 0) this.#log.warn({ dropped: this.#collector.dropped }, `dropped ${this.#collector.dropped} result message(s) that did not prove their delivery`);
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
    const lost = this.#lostCases?.count ?? 0;
    const incomplete = this.#incomplete ?? (cancelled ? `run cancelled: ${this.#cancelReason}` : lost > 0 ? `${lost} case(s) lost after all deliveries` : null);
    // A resumed run reports at the confidence it was started with, unless --confidence says otherwise.
    const confidence = this.#o.confidence ?? this.#resumeManifest?.confidence ?? undefined;
    if (aborted) this.#log.info({ case: this.#abortedAfter }, SUITE_ABORTED_REASON);
    return {
      runId: this.#runId,
      incomplete,
      suite: new SuiteResult(results, {
        runId: this.#runId,
        ...this.#span(),
        cancelled,
        passThreshold: this.#policy.passThreshold,
        budget: this.#meter ? { ...this.#meter.budget, exhausted: this.#cancelReason === BUDGET_EXHAUSTED } : null,
        repeat: this.#policy.repeat,
        repeatMax: this.#policy.repeatMax,
        casePassRate: this.#o.casePassRate ?? this.#resumeManifest?.casePassRate ?? null,
        ...(confidence === undefined ? {} : { confidence }),
      }),
    };
  }

  async #putState(phase: RunRecordPhase): Promise<void> {
    await this.#state.put(phase);
  }

  /**
   * When the run started and how long it has taken: a new run's from this coordinator's clock; a
   * resumed run's from its manifest, so the report covers the whole run, not only the resume.
   */
  #span(): { startedAt: string; durationSeconds: number } {
    const created = this.#resumeManifest ? Date.parse(this.#resumeManifest.createdAt) : NaN;
    if (Number.isFinite(created)) return { startedAt: new Date(created).toISOString(), durationSeconds: round3(Math.max(0, Date.now() - created) / 1000) };
    const seconds = (performance.now() - this.#t0) / 1000;
    return { startedAt: new Date(Date.now() - seconds * 1000).toISOString(), durationSeconds: round3(seconds) };
  }

  #subscribe(subject: string, handle: (data: Uint8Array, subject: string) => void): void {
    const sub = this.#nc.subscribe(subject, { callback: (err, msg) => (err ? undefined : handle(msg.data, msg.subject)) });
    this.#subs.push(sub);
  }

  #teardown(): void {
    this.#state.stopHeartbeat();
    for (const t of this.#timers) clearTimeout(t);
    for (const s of this.#subs) s.unsubscribe();
    for (const stop of this.#stoppers) stop();
    this.#collector.close();
  }
}
