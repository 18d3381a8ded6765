import { Attr, SpanKind, SpanNames, endSpan, startSpan, traceparentOf } from "../../shared/tracing/spans.ts";
import { isAbsolute, relative } from "node:path";
import type { LimitTable } from "../../shared/providers/limit-spec.ts";
import { AckPolicy, DeliverPolicy, type ConsumerConfig } from "@nats-io/jetstream";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import type { Broker } from "../../shared/broker/setup.ts";
import { isAlreadyTaken, isConsumerNotFound } from "../../shared/broker/api-codes.ts";
import { processLabel } from "../../shared/broker/connection.ts";
import { CASES_STREAM, caseMsgId, caseSubject, caseSubjects, deliveryOfSubject, runConsumer, runKeys } from "../../shared/broker/subjects.ts";
import { EvalfleetError, ErrorCode, errorMessage } from "../../shared/errors.ts";
import { sleep } from "../../shared/process/sleep.ts";
import type { LoadedSuite } from "../../shared/suite/suite.ts";
import { encodeSelection } from "../../shared/wire/case-selection.ts";
import type { RunTokens } from "../../shared/wire/case-token.ts";
import { NATS_PROTOCOL, type RunManifest } from "../../shared/wire/nats.ts";
import { CaseMessageBody } from "./case-message-body.ts";
import type { ScoringMethod } from "../../shared/datasets/scoring-methods.ts";
import type { RunSettings } from "../../shared/run-settings.ts";
import { checkPassThreshold, checkRepeat } from "../run/policy.ts";
import type { SelectedCase } from "../run/select.ts";
import type { Logger } from "../../shared/logger.ts";
import { deliveryKey } from "../run/trial-ledger.ts";
import { hasBudget, type Budget } from "../../shared/providers/budget.ts";

/**
 * Putting a run on the broker: its manifest, the run's durable consumer on the cases stream, and
 * one message per trial of each selected case (msg id `<run>:<index>` for trial 1, `<run>:<index>:t<trial>`
 * after, so a republished trial is deduplicated): each trial is its own delivery, so the trials of
 * one case run on many workers at once.
 */

/** One trial of one selected case, to publish. */
export interface TrialToPublish {
  sel: SelectedCase;
  /** 1-based. */
  trial: number;
}

/** Trials 1..`trials` of every case, case by case (a case's trials go out together, so its result folds early). */
export function trialsOf(cases: readonly SelectedCase[], trials: number): TrialToPublish[] {
  if (trials === 1) return cases.map((sel) => ({ sel, trial: 1 }));
  return cases.flatMap((sel) => Array.from({ length: trials }, (_, i) => ({ sel, trial: i + 1 })));
}

/** Case messages in flight at once (each waits for its PubAck), in messages. */
const PUBLISH_WINDOW_MESSAGES = 256;
/** Attempts per case message before publishing gives up (with a growing pause between them). */
const PUBLISH_ATTEMPTS = 5;

/**
 * What the caller chose for a new run besides its bounds (those come compiled: {@link ManifestBounds}).
 * The rest comes from the suite.
 */
export interface ManifestSettings {
  /** Keep each case's transcript within this many bytes (a recorded run). Default 0: none. */
  maxTranscriptBytes?: number;
  /** The response cache of the workers' model calls (`--cache`, `--cache shared`). Default none. */
  cache?: RunManifest["cache"];
  /** The run's cassettes in the fleet's bucket (`--record nats`, `--replay nats`). Default none. */
  cassette?: RunManifest["cassette"];
  /** Default false. */
  forwardEvents?: boolean;
  /** Default 1 (MIN of adaptive repeats). */
  repeat?: number;
  /** The pass rule of a repeated case that sets none (`--case-pass-rate`); null: the suite's was compiled in by the caller, else every trial. */
  casePassRate?: number | null;
  /** The confidence of the report's intervals (`--confidence`). Default: the statistics' (0.95). */
  confidence?: number;
  /** MAX of adaptive repeats (`--repeat MIN..MAX`). Default: `repeat`, a fixed repeat. */
  repeatMax?: number | null;
  /** Retries of a case whose failure is `infra` (`--retries`). Default 0. */
  retries?: number;
  /** Provider limits by key, merged (suite, `EVALFLEET_LIMITS`, `--limit`). Default: the suite's. */
  limits?: LimitTable | null;
  /** Default: the suite's; null: none. */
  passThreshold?: number | null;
  /** The run's budgets (`--budget-usd`, `--budget-tokens`): with one, workers ask before each case starts (`startGate`). Default none. */
  budget?: Budget | null;
  /** Evaluation functions of the suite applied to every case (already checked against the suite's). Default none. */
  evalFunctions?: readonly string[] | null;
  /** Default: each case's own. */
  scoringMethod?: ScoringMethod | null;
}

/**
 * The run's durable consumer on the cases stream: explicit acks, `ack_wait` and `max_deliver`
 * from the manifest. Written once, for a new run and for a resumed run whose consumer is gone.
 */
export function runConsumerConfig(manifest: Pick<RunManifest, "runId" | "ackWaitSeconds" | "maxAttempts">): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: runConsumer(manifest.runId),
    filter_subject: caseSubjects(manifest.runId),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(manifest.ackWaitSeconds * 1000),
    max_deliver: manifest.maxAttempts,
    max_ack_pending: 10_000,
  };
}

/**
 * The bounds a manifest records, compiled (compileRunSettings, the suite's merged under the
 * caller's): the case bounds in seconds and bytes, the deliveries and the ack wait in ms.
 */
export type ManifestBounds = Pick<RunSettings, "defaultTimeoutSeconds" | "setupTimeoutSeconds" | "teardownTimeoutSeconds" | "maxOutputBytes" | "maxAttempts" | "ackWaitMs" | "adaptiveConfidence">;

/** A new run's manifest: the suite, the selection, the compiled bounds, and the caller's other settings resolved against the suite's. */
export function newManifest(runId: string, suite: LoadedSuite, selected: readonly SelectedCase[], settings: ManifestSettings, bounds: ManifestBounds): RunManifest {
  return {
    v: NATS_PROTOCOL,
    runId,
    suite: { name: suite.name, fingerprint: suite.fingerprint, path: manifestSuitePath(suite.path) },
    selection: encodeSelection(selected.map((s) => s.index), suite.cases.length),
    defaultTimeout: bounds.defaultTimeoutSeconds,
    setupTimeout: bounds.setupTimeoutSeconds,
    teardownTimeout: bounds.teardownTimeoutSeconds,
    maxOutputBytes: bounds.maxOutputBytes,
    maxTranscriptBytes: Math.max(0, Math.floor(settings.maxTranscriptBytes ?? 0)),
    cache: settings.cache ?? null,
    cassette: settings.cassette ?? null,
    maxAttempts: bounds.maxAttempts,
    ackWaitSeconds: bounds.ackWaitMs / 1000,
    forwardEvents: settings.forwardEvents ?? false,
    repeat: checkRepeat(settings.repeat),
    ...adaptiveManifestFields(settings, bounds.adaptiveConfidence),
    casePassRate: settings.casePassRate ?? null,
    confidence: settings.confidence ?? null,
    retries: settings.retries ?? 0,
    limits: settings.limits ?? suite.limits ?? {},
    startGate: hasBudget(settings.budget),
    // This coordinator reads batched live events (collect.ts): workers may send them so.
    eventBatches: true,
    // The suite's threshold applies unless the caller gives one (null included: "none").
    passThreshold: checkPassThreshold(settings.passThreshold !== undefined ? settings.passThreshold : (suite.passThreshold ?? null)),
    evalFunctions: [...(settings.evalFunctions ?? [])],
    scoringMethod: settings.scoringMethod ?? null,
    createdAt: new Date().toISOString(),
    coordinator: { host: processLabel().split("/")[0]!, pid: process.pid },
  };
}

/**
 * The manifest's adaptive fields: MAX and the stopping confidence, or nulls for a fixed repeat
 * (MAX below MIN is a usage error). The collector of a new run reads its rule from the same.
 */
export function adaptiveManifestFields(settings: ManifestSettings, confidence: number): Pick<RunManifest, "repeatMax" | "adaptiveConfidence"> {
  const min = checkRepeat(settings.repeat);
  const max = settings.repeatMax === undefined || settings.repeatMax === null ? min : checkRepeat(settings.repeatMax, "repeatMax");
  if (max < min) throw new EvalfleetError(ErrorCode.Usage, `repeatMax must be >= repeat (${min}), got ${max}`, { field: "repeatMax", value: max });
  if (max === min) return { repeatMax: null, adaptiveConfidence: null };
  return { repeatMax: max, adaptiveConfidence: confidence };
}

/**
 * The suite's path as a manifest records it: relative to the working directory when the suite is
 * inside it (so `coordinator resume RUN_ID` finds it from the same folder of another checkout or
 * a replacement pod), absolute otherwise.
 */
export function manifestSuitePath(path: string, cwd: string = process.cwd()): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

/**
 * Creates a new run: refuses an id already taken, creates the run's consumer, then the manifest.
 * The consumer exists before the manifest, so a worker that sees the manifest can always bind.
 */
export async function createRun(nc: NatsConnection, broker: Broker, manifest: RunManifest): Promise<void> {
  const { kv, jsm } = broker;
  const runId = manifest.runId;
  await refuseExistingRun(broker, runId);
  await jsm.consumers.add(CASES_STREAM, runConsumerConfig(manifest));
  const text = JSON.stringify(manifest);
  const limit = nc.info?.max_payload;
  if (limit && Buffer.byteLength(text) > limit) {
    throw new EvalfleetError(ErrorCode.BrokerConfig, `the run's manifest is ${Buffer.byteLength(text)} bytes, over the server's max_payload of ${limit}: raise max_payload on the NATS server`);
  }
  try {
    await kv.create(runKeys.manifest(runId), text);
  } catch (err) {
    // Only "the key exists" means another run has this id; anything else is said as it is.
    if (isAlreadyTaken(err)) throw new EvalfleetError(ErrorCode.RunExists, `run '${runId}' already exists`);
    throw new EvalfleetError(ErrorCode.BrokerUnreachable, `could not create run '${runId}': ${errorMessage(err)}`);
  }
}

/** Throws RUN_EXISTS when a run with this id has a manifest already. */
export async function refuseExistingRun(broker: Broker, runId: string): Promise<void> {
  if (await broker.kv.get(runKeys.manifest(runId))) {
    throw new EvalfleetError(ErrorCode.RunExists, `run '${runId}' already exists: use 'evalfleet coordinator resume ${runId}' to finish it, or pick another --run-id`);
  }
}

/** Re-creates the run's consumer when it is gone (a resumed run whose coordinator died early). */
export async function ensureRunConsumer(broker: Broker, manifest: RunManifest): Promise<void> {
  try {
    await broker.jsm.consumers.info(CASES_STREAM, runConsumer(manifest.runId));
  } catch (err) {
    if (!isConsumerNotFound(err)) throw err;
    await broker.jsm.consumers.add(CASES_STREAM, runConsumerConfig(manifest));
  }
}

/** The trials of the run's cases still stored on the cases stream (queued or in flight), by `deliveryKey`. */
export async function queuedDeliveries(broker: Broker, runId: string): Promise<Set<string>> {
  const queued = new Set<string>();
  const info = await broker.jsm.streams.info(CASES_STREAM, { subjects_filter: caseSubjects(runId) });
  for (const subject of Object.keys(info.state.subjects ?? {})) {
    const d = deliveryOfSubject(subject);
    if (d !== null) queued.add(deliveryKey(d.index, d.trial));
  }
  return queued;
}

/**
 * Publishes one message per trial, {@link PUBLISH_WINDOW_MESSAGES} in flight at a time, until done or
 * `stopping()` says the run is being cancelled. Returns how many were published.
 */
export async function publishCases(broker: Broker, manifest: RunManifest, tokens: RunTokens, cases: readonly TrialToPublish[], stopping: () => boolean): Promise<number> {
  const runId = manifest.runId;
  let published = 0;
  // With tracing on, one span for the publishing, under the run's; every case message carries it.
  const span = startSpan(SpanNames.publish, { [Attr.runId]: runId, [Attr.cases]: cases.length }, undefined, SpanKind.PRODUCER);
  const traceparent = traceparentOf(span ?? undefined);
  try {
    published = await publishWindows(broker, manifest, tokens, cases, stopping, traceparent);
  } catch (err) {
    endSpan(span, errorMessage(err));
    throw err;
  }
  endSpan(span);
  return published;
}

/**
 * Keeps between half of {@link PUBLISH_WINDOW_MESSAGES} and all of it in flight (topped up once
 * half the window's PubAcks are back, rather than a window waiting for its slowest), so the broker
 * always has work queued.
 * A case counts as published only once its PubAck says it is stored.
 */
function publishWindows(broker: Broker, manifest: RunManifest, tokens: RunTokens, cases: readonly TrialToPublish[], stopping: () => boolean, traceparent: string | null): Promise<number> {
  const runId = manifest.runId;
  const body = new CaseMessageBody(runId, manifest.suite.fingerprint, traceparent);
  let published = 0;
  let next = 0;
  let inFlight = 0;
  let failed: unknown = null;
  let scheduled = false;
  return new Promise<number>((resolve, reject) => {
    // Refilled once half the window is back, not per PubAck: the publishes go out a few socket
    // writes per half window (refilled per PubAck, the writes cost four times the window's CPU).
    const refill = (): void => {
      scheduled = false;
      pump();
    };
    const settled = (): void => {
      inFlight--;
      if (scheduled || inFlight > PUBLISH_WINDOW_MESSAGES / 2) return;
      scheduled = true;
      setImmediate(refill);
    };
    const stored = (): void => {
      published++;
      settled();
    };
    const refused = (err: unknown): void => {
      failed ??= err;
      settled();
    };
    const pump = (): void => {
      while (inFlight < PUBLISH_WINDOW_MESSAGES && next < cases.length && failed === null && !stopping()) {
        const { sel, trial } = cases[next++]!;
        inFlight++;
        const index = sel.index;
        const text = body.encode(index, trial, sel.case.name, tokens.token(index, trial));
        broker.publisher.publish(caseSubject(runId, index, trial), text, { msgId: caseMsgId(runId, index, trial) }).then(stored, (err) => retry(broker, runId, index, trial, text, err).then(stored, refused));
      }
      if (inFlight === 0) {
        if (failed === null) resolve(published);
        else reject(failed);
      }
    };
    pump();
  });
}

/** A case message whose publish failed: tried again with a growing pause, {@link PUBLISH_ATTEMPTS} times in all. */
async function retry(broker: Broker, runId: string, index: number, trial: number, text: string, first: unknown): Promise<void> {
  let err = first;
  for (let tries = 1; ; tries++) {
    if (tries >= PUBLISH_ATTEMPTS) throw new EvalfleetError(ErrorCode.BrokerUnreachable, `cannot publish case ${index} (trial ${trial}): ${errorMessage(err)}`);
    await sleep(200 * 2 ** tries);
    try {
      await broker.publisher.publish(caseSubject(runId, index, trial), text, { msgId: caseMsgId(runId, index, trial) });
      return;
    } catch (e) {
      err = e;
    }
  }
}

/**
 * Publishes trials planned while the run goes on (an adaptive case's next batch). Their keys are
 * in `pending` until published, so the reconciler does not take them for lost; a failure is
 * logged, and the reconciler finds the trials (they stay planned).
 */
export async function publishBatch(
  broker: Broker,
  manifest: RunManifest,
  tokens: RunTokens,
  selectedAt: (index: number) => SelectedCase | null | undefined,
  deliveries: ReadonlyArray<{ index: number; trial: number }>,
  o: { pending: Set<string>; stopping: () => boolean; logger: Logger },
): Promise<void> {
  const keys = deliveries.map((d) => deliveryKey(d.index, d.trial));
  for (const k of keys) o.pending.add(k);
  try {
    const trials = deliveries.flatMap((d) => {
      const sel = selectedAt(d.index);
      return sel ? [{ sel, trial: d.trial }] : [];
    });
    await publishCases(broker, manifest, tokens, trials, o.stopping);
  } catch (err) {
    o.logger.warn({ err: errorMessage(err) }, "publishing an adaptive batch failed");
  } finally {
    for (const k of keys) o.pending.delete(k);
  }
}
