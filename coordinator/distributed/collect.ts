import type { ConsumerMessages } from "@nats-io/jetstream";
import { applyCasePassRule, casePassRateOf } from "../../shared/trials/case-pass-rule.ts";
import { MAX_REPEAT, aggregateRepeats } from "../../shared/trials/fold-repeats.ts";
import { adaptiveMarkOf, adaptiveStep, passedTrials, type AdaptiveRule } from "../../shared/trials/adaptive-repeats.ts";
import type { AdaptiveCollecting } from "./adaptive-collecting.ts";

export type { AdaptiveCollecting } from "./adaptive-collecting.ts";
import { BUILTIN_PRICES, priceUsage, type PriceTable } from "../../shared/providers/prices.ts";
import type { RunEvent } from "../../shared/case/agent.ts";
import type { Broker } from "../../shared/broker/setup.ts";
import { RESULTS_STREAM, eventBatchSubject, resultSubjectParts, resultSubjects } from "../../shared/broker/subjects.ts";
import { TrialLedger, type Delivery } from "../run/trial-ledger.ts";
import { errorMessage } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import { CaseResult } from "../../shared/result/result.ts";
import { resultShell } from "../../shared/result/result-shell.ts";
import { sleep } from "../../shared/process/sleep.ts";
import type { RunTokens } from "../../shared/wire/case-token.ts";
import type { BatchedEvent } from "../../shared/wire/nats.ts";
import { readLiveEvents } from "./live-events.ts";
import { callSyncHook, type SuiteHooks } from "../../shared/hooks.ts";
import { ResultCollector, type FinishOptions } from "../run/reassemble.ts";
import { openResultSpool } from "../run/result-spool.ts";
import type { ResultSource } from "../../shared/result/result-source.ts";
import { ValuePool } from "../run/value-pool.ts";
import type { SelectedCase } from "../run/select.ts";
import { checkResultMessage, type ResultCheckContext } from "./result-check.ts";
import type { CollectListener, RunCollectorOptions } from "./collect-options.ts";

export type { CollectListener, RunCollectorOptions } from "./collect-options.ts";

/**
 * Collecting a distributed run's results: tail the results stream (replayed from the start, so a
 * resumed run rebuilds its state), accept the first result per trial of a case (each trial is its
 * own delivery), fold a case's trials into its one result once its last trial is in (trial-ledger.ts),
 * and follow the workers' live events (a trial started, its run events). Presentation hooks are
 * called here, once per case.
 */

/** A delivery's key in the map of started trials: a number, not a string built per event and per result. */
const startKey = (index: number, trial: number): number => index * (MAX_REPEAT + 1) + trial;

/** Results taken from the stream per pull of the ordered consumer, in messages. */
const RESULTS_PER_PULL_MESSAGES = 512;
/** How long {@link RunCollector.caughtUp} waits for the stored results to arrive, in ms. */
const CATCH_UP_LIMIT_MS = 30_000;

/** Accepts the first result per trial of a selected case, from the stream, from events, and from loss records. */
export class RunCollector {
  readonly #prices: PriceTable;
  readonly #casePassRate: number | null;
  readonly #runId: string;
  readonly #results: ResultCollector;
  readonly #ledger: TrialLedger;
  /** Trial results accepted (every case's), for {@link caughtUp}. */
  #trialsIn = 0;
  readonly #adaptive: RunCollectorOptions["adaptive"];
  readonly #minTrials: number;
  readonly #onMore: RunCollectorOptions["onMore"];
  /** 1 for each case whose `onCaseStart` hook ran (at its first trial's start), by declaration index; null without the hook. */
  readonly #caseStarted: Uint8Array | null;
  readonly #hooks: SuiteHooks;
  readonly #log: Logger;
  readonly #listener: CollectListener;
  /** Trials a worker said it started and whose result has not arrived: the worker's id by {@link startKey}. */
  readonly #started = new Map<number, string>();
  /** In-flight trials per worker id, kept with {@link #started} (read at every start and end: never recounted). */
  readonly #busy = new Map<string, number>();
  #tail: ConsumerMessages | null = null;
  /** Bad messages are logged once per run and kind, not once each. */
  readonly #logged = new Set<string>();
  readonly #tokens: RunTokens;
  readonly #presence: (workerId: string) => boolean | Promise<boolean>;
  /** Result messages dropped because they did not prove their delivery. */
  #dropped = 0;
  /** Results whose worker's presence is being looked up. */
  #checking = 0;
  /** What every result message is checked against: built once, not a closure per message. */
  readonly #checkContext: ResultCheckContext;
  /** Asked once a case's planned trials are in: built once, not a closure per result. */
  readonly #done = (trials: readonly CaseResult[]): boolean => this.#wantsNoMore(this.#results.selectedAt(trials[0]!.index)!, trials);
  /** One copy of the strings and lists results repeat: for trials waiting to be folded, and results held without a spool. */
  readonly #pool = new ValuePool();
  readonly #batchSubject: string;

  constructor(options: RunCollectorOptions) {
    this.#runId = options.runId;
    this.#batchSubject = eventBatchSubject(options.runId);
    this.#results = new ResultCollector(options.selected, options.spool === false ? null : openResultSpool(options.selected, (err) => options.logger.warn({ err: errorMessage(err) }, "cannot open a file for the run's results; they are kept in memory")));
    this.#ledger = new TrialLedger(options.selected, options.trials ?? 1);
    this.#adaptive = options.adaptive ?? null;
    this.#minTrials = options.trials ?? 1;
    this.#onMore = options.onMore;
    this.#hooks = options.hooks;
    // A byte per case, and only for a run with the hook: a Set of indexes cost about 50 B per case.
    this.#caseStarted = options.hooks.onCaseStart ? new Uint8Array(options.selected.reduce((n, s) => Math.max(n, s.index + 1), 0)) : null;
    this.#log = options.logger;
    this.#listener = options.listener;
    this.#tokens = options.tokens;
    this.#presence = options.presence;
    this.#prices = { ...BUILTIN_PRICES, ...(options.prices ?? {}) };
    this.#casePassRate = options.casePassRate ?? null;
    this.#checkContext = { runId: this.#runId, tokens: this.#tokens, nameAt: (i) => this.#results.selectedAt(i)?.case.name };
  }

  /** True once every selected case has a result. */
  get complete(): boolean {
    return this.#results.complete;
  }

  /** How many selected cases have a result. */
  get size(): number {
    return this.#results.size;
  }

  /** Trials started by a worker and not yet reported. */
  get inFlight(): number {
    return this.#started.size;
  }

  /** In-flight trials per worker id. */
  busyByWorker(): Map<string, number> {
    return new Map(this.#busy);
  }

  /** The selected case at a declaration index, if that case is selected. */
  selectedAt(index: number): SelectedCase | undefined {
    return this.#results.selectedAt(index);
  }

  /** Whether the case at a declaration index has its result. */
  has(index: number): boolean {
    return this.#results.has(index);
  }

  /** The selected cases still without a result, in declaration order. */
  missing(): SelectedCase[] {
    return this.#results.missing();
  }

  /** Whether a trial of the case at a declaration index has its result (or its case is folded). */
  hasTrial(index: number, trial: number): boolean {
    return this.#ledger.has(index, trial) || this.#results.has(index);
  }

  /** Whether a trial is planned for a selected case. */
  isPlanned(index: number, trial: number): boolean {
    return this.#ledger.isPlanned(index, trial);
  }

  /** The planned trials still without a result, in declaration then trial order. */
  missingTrials(): Array<Delivery & { sel: SelectedCase }> {
    return this.#ledger.missing().filter((d) => !this.#results.has(d.index));
  }

  /** Starts tailing the run's results: every stored one first (in stream order), then each as it arrives. */
  async tail(broker: Broker): Promise<void> {
    const consumer = await broker.js.consumers.get(RESULTS_STREAM, { filter_subjects: resultSubjects(this.#runId) });
    const tail = await consumer.consume({ max_messages: RESULTS_PER_PULL_MESSAGES });
    this.#tail = tail;
    void (async () => {
      for await (const m of tail) this.onResult(m.data, m.subject);
    })().catch((err) => this.#log.error({ err: errorMessage(err) }, "result stream ended"));
  }

  /** Resolves once the tail has delivered every result stored so far (at most {@link CATCH_UP_LIMIT_MS}). */
  async caughtUp(broker: Broker): Promise<void> {
    const until = Date.now() + CATCH_UP_LIMIT_MS;
    for (;;) {
      const info = await broker.jsm.streams.info(RESULTS_STREAM, { subjects_filter: resultSubjects(this.#runId) });
      // Only the subjects sealed with their trial's token hold results that can be accepted.
      const stored = Object.keys(info.state.subjects ?? {}).filter((s) => {
        const parts = resultSubjectParts(s);
        return parts !== null && this.#ledger.isPlanned(parts.index, parts.trial) && parts.seal === this.#tokens.seal(parts.index, parts.trial);
      }).length;
      if ((this.#trialsIn >= stored && this.#checking === 0) || Date.now() > until) return;
      await sleep(50);
    }
  }

  /** Stops the tail. */
  close(): void {
    void this.#tail?.close().catch(() => undefined);
  }

  /**
   * A message from the results stream: accepted when it proves its delivery (result-check.ts) and
   * comes from a worker present in the run; dropped when it does not prove it (said once per run
   * and reason); recorded on its case when it holds the case's sealed subject but is unusable.
   */
  onResult(data: Uint8Array, subject: string): void {
    const check = checkResultMessage(data, subject, this.#checkContext);
    if (check.kind === "drop") {
      this.#dropped++;
      if (check.drop === "version") this.#logOnce("version", subject, `disposing of result messages of another protocol version (said once per run): ${check.why}`);
      else this.#logOnce(check.drop, subject, `dropping result messages that do not prove their delivery (said once per run and reason): ${check.why}`);
      return;
    }
    if (check.kind === "spoiled") {
      if (check.version) this.#logOnce("version", subject, `disposing of result messages of another protocol version (said once per run): ${check.why}`);
      else this.#log.warn({ subject }, `disposing of a bad result: ${check.why}`);
      this.#spoil(check.index, check.trial, check.why, check.version ? "result of another protocol version" : "bad result message");
      return;
    }
    const m = check.message;
    const present = this.#presence(m.workerId);
    if (present === true) this.accept(CaseResult.fromData(m.result), `result from ${m.workerId}`, m.trial);
    else if (present === false) this.#absent(m.index, m.trial, m.workerId, subject);
    else {
      this.#checking++;
      void present
        .then((yes) => (yes ? this.accept(CaseResult.fromData(m.result), `result from ${m.workerId}`, m.trial) : this.#absent(m.index, m.trial, m.workerId, subject)))
        .catch((err) => this.#log.warn({ subject, err: errorMessage(err) }, "could not check a result's worker; the case waits for reconciliation"))
        .finally(() => this.#checking--);
    }
  }

  /** Result messages dropped so far because they did not prove their delivery. */
  get dropped(): number {
    return this.#dropped;
  }

  /** A sealed result from a worker that is not present in the run: it holds the trial's subject, so the trial records why. */
  #absent(index: number, trial: number, workerId: string, subject: string): void {
    const why = `result from worker ${workerId}, which is not present in the run`;
    this.#logOnce("absent", subject, `disposing of results from workers not present in the run (said once per run): ${why}`);
    this.#spoil(index, trial, why, "result from a worker not present in the run");
  }

  /** Records `why` as the result of a trial of the case at `index`, unless it has one. */
  #spoil(index: number, trial: number, why: string, source: string): void {
    const sel = this.#results.selectedAt(index);
    if (sel && !this.hasTrial(sel.index, trial)) this.accept(this.errorResult(sel, `worker: ${why}`, 1), source, trial);
  }

  /**
   * A message of the run's live events: one worker's batch, or a single event (live-events.ts);
   * each event a trial started on the worker, or one of its run events (for `-v`). Disposable: a
   * bad message is dropped.
   */
  onEvent(data: Uint8Array, subject: string): void {
    const read = readLiveEvents(data, subject, this.#runId, this.#batchSubject);
    if (read.kind === "version") this.#logOnce("event-version", subject, `disposing of event messages of another protocol version (said once per run): ${read.why}`);
    if (read.kind !== "ok") return;
    for (const e of read.events) this.#onLiveEvent(e, read.workerId);
  }

  #onLiveEvent(e: BatchedEvent, workerId: string): void {
    const sel = this.#results.selectedAt(e.index);
    if (!sel || this.hasTrial(e.index, e.trial) || !this.#ledger.isPlanned(e.index, e.trial)) return;
    this.#listener.onWorkerActive();
    if (e.kind === "started") {
      const key = startKey(e.index, e.trial);
      const before = this.#started.get(key);
      if (before === workerId) return;
      if (before !== undefined) this.#unbusy(before);
      this.#started.set(key, workerId);
      this.#busy.set(workerId, (this.#busy.get(workerId) ?? 0) + 1);
      this.#listener.onInFlightChanged();
      // The case starts once, at its first trial's start.
      if (!this.#caseStarted || this.#caseStarted[e.index] === 1) return;
      this.#caseStarted[e.index] = 1;
      callSyncHook("onCaseStart", () => this.#hooks.onCaseStart!(sel.case), (m) => this.#log.warn({ index: e.index }, m));
    } else if (e.event && this.#hooks.onRunEvent) {
      callSyncHook("onRunEvent", () => this.#hooks.onRunEvent!(sel.case, e.event as RunEvent), (m) => this.#log.warn({ index: e.index }, m));
    }
  }

  /**
   * Offers a trial's result (trial 1 by default); the first per trial wins. Once the case's last
   * planned trial is in and no more are wanted, its trials are folded and the case's `onCaseEnd`
   * hook runs for the folded result.
   */
  accept(result: CaseResult, source: string, trial = 1): void {
    // Costs from the price table, here where the results are collected (workers need no prices).
    result.usage = priceUsage(result.usage, this.#prices);
    const sel = this.#results.selectedAt(result.index);
    // Before the ledger folds it: a repeated case's folded result is built from its trials' values.
    if (sel && sel.case.name === result.name) {
      this.#share(result, sel);
      this.#adoptLater(sel, trial);
    }
    const outcome = this.#ledger.record(trial, result, this.#done);
    if (outcome.kind !== "accepted") {
      if (outcome.kind === "unknown") this.#log.warn({ index: result.index, name: result.name, trial }, `ignoring a ${source} for an unknown case or trial`);
      return;
    }
    this.#trialsIn++;
    const key = startKey(result.index, trial);
    const worker = this.#started.get(key);
    if (worker !== undefined) {
      this.#started.delete(key);
      this.#unbusy(worker);
      this.#listener.onInFlightChanged();
    }
    // The case first: its last trial completing the run is not then taken for a budget's stop.
    if (outcome.folded) this.#acceptCase(outcome.folded);
    this.#listener.onTrial?.(result);
  }

  /** One trial fewer in flight on a worker. */
  #unbusy(workerId: string): void {
    const n = (this.#busy.get(workerId) ?? 0) - 1;
    if (n > 0) this.#busy.set(workerId, n);
    else this.#busy.delete(workerId);
  }

  /** A kept result holds the suite's copy of its name and the pool's of the values results repeat (equal values). */
  #share(result: CaseResult, sel: SelectedCase): void {
    result.name = sel.case.name;
    result.worker = this.#pool.string(result.worker);
    result.agentId = this.#pool.string(result.agentId);
    result.teamId = this.#pool.string(result.teamId);
    result.runStatus = this.#pool.string(result.runStatus);
    result.tags = this.#pool.list(result.tags);
    result.toolsCalled = this.#pool.list(result.toolsCalled);
  }

  /** Whether a case whose planned trials are in is done (else its next trials are planned and published). */
  #wantsNoMore(sel: SelectedCase, trials: readonly CaseResult[]): boolean {
    const rule = this.#ruleOf(sel);
    if (!rule) return true;
    const step = adaptiveStep(passedTrials(trials), trials.length, rule);
    if (step.done) return true;
    const more = Math.min(step.next, this.#adaptive!.trialsAllowed(trials, step.next));
    if (more <= 0) return true;
    const next = this.#ledger.extend(sel.index, more);
    // Published after this result is recorded (the new trials are planned already).
    queueMicrotask(() => this.#onMore?.(next));
    return false;
  }

  /**
   * A result for a trial past an adaptive case's plan: a batch an earlier coordinator of this run
   * planned and published (a resumed run replays its results before it re-plans). The result
   * proved its delivery (its token is the run's for that trial), so the plan is extended to it
   * rather than the result ignored.
   */
  #adoptLater(sel: SelectedCase, trial: number): void {
    const a = this.#adaptive;
    if (!a || !Number.isInteger(trial) || trial > a.max || this.#ledger.isFolded(sel.index)) return;
    const planned = this.#ledger.planned(sel.index);
    if (trial > planned) this.#ledger.extend(sel.index, trial - planned);
  }

  /** The adaptive rule of a case (its own pass rule, else the run's), or null for a fixed repeat. */
  #ruleOf(sel: SelectedCase): AdaptiveRule | null {
    const a = this.#adaptive;
    if (!a || a.max <= this.#minTrials) return null;
    return { min: this.#minTrials, max: a.max, passRate: casePassRateOf(sel.case.passRate, this.#casePassRate ?? 1), confidence: a.confidence };
  }

  /** A case's folded result: the first per case wins; its `onCaseEnd` hook runs for it; `tell`: the listener hears of it. */
  #acceptCase(folded: CaseResult, tell = true): void {
    const sel = this.#results.selectedAt(folded.index);
    const rule = sel ? this.#ruleOf(sel) : null;
    // An adaptive case is reported with its trials even when one was enough (MIN 1), as locally.
    const result = rule && !folded.repeats?.length ? aggregateRepeats([folded]) : folded;
    if (!sel || this.#results.add(result) !== "accepted") return;
    // The pass rule where the result is collected, before its hook and every report read `passed`.
    applyCasePassRule(result, sel.case.passRate, this.#casePassRate);
    if (rule && result.repeats) result.adaptive = adaptiveMarkOf(result.repeats, rule);
    if (this.#hooks.onCaseEnd) callSyncHook("onCaseEnd", () => this.#hooks.onCaseEnd!(sel.case, result), (m) => result.addError(m));
    // Kept as its hooks left it (a hook's error in it, the recorder's transcript let go of).
    this.#results.keep(result);
    if (tell) this.#listener.onAccepted(result);
  }

  /** A result for a case that has none of its own (lost, or its result spoiled): `error`, after `attempts` deliveries; an `infra` failure. */
  errorResult(sel: SelectedCase, error: string, attempts: number): CaseResult {
    // From the shell every side builds results from, so it names its case as they do (a dataset row's id too).
    const result = resultShell(sel.case, sel.index);
    result.attempts = attempts;
    result.addError(error, "infra");
    return result;
  }

  /** Logs `line` the first time a kind of bad message is met in the run. */
  #logOnce(kind: string, subject: string, line: string): void {
    if (this.#logged.has(kind)) return;
    this.#logged.add(kind);
    this.#log.warn({ subject }, line);
  }

  /**
   * Every case in declaration order; one without a result is skipped with `skipReason` (and told
   * to `onCaseEnd`). A case some of whose trials ran is folded with the others skipped. `fixSkipped`:
   * offered each skipped result a worker sent (FinishOptions). A spool's source reads each back as walked.
   */
  finish(skipReason: string, fixSkipped?: FinishOptions["fixSkipped"]): ResultSource<CaseResult> {
    for (const s of this.#results.missing()) {
      if (this.#ledger.received(s.index) === 0) continue;
      this.#acceptCase(this.#ledger.foldPartial(s.index, () => {
        const r = resultShell(s.case, s.index);
        r.skipped = true;
        r.error = `skipped: ${skipReason}`;
        return r;
      }), false);
    }
    const onCaseEnd = this.#hooks.onCaseEnd;
    return this.#results.finishSource(skipReason, {
      // Only the cases skipped here: a skipped result that arrived was told when it was accepted.
      ...(onCaseEnd ? { onSkipped: (r: CaseResult, sel: SelectedCase) => callSyncHook("onCaseEnd", () => onCaseEnd(sel.case, r), (m) => r.addError(m)) } : {}),
      ...(fixSkipped ? { fixSkipped } : {}),
    });
  }
}
