// runs in: main
import * as z from "zod";
import { LimitTableSchema } from "../providers/limit-spec.ts";
import { CaseSelectionSchema } from "./case-selection.ts";
import { CASE_TOKEN_PATTERN } from "./case-token.ts";
import { CaseResultDataSchema } from "./result-data.ts";
import { SCORING_METHODS } from "../datasets/scoring-methods.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";
import { MAX_REPEAT } from "../trials/fold-repeats.ts";

/**
 * The NATS protocol (distributed mode): the run records in the KV bucket and the case, result
 * and event messages, as zod schemas. Every one carries `v`, the protocol version. Types come from
 * `z.infer`; receivers validate before they trust.
 */

/**
 * Version of the NATS protocol; a message of another version is refused with a clear error
 * (see protocol.ts). Across versions only the envelopes below stay the same, so that a refusal
 * is understood by a process speaking the other version.
 *
 * 5: the manifest says where a run's cassettes are (`cassette`, `--record nats`): a worker of
 * version 4 would ignore the field and send a replayed case's requests for real, so it must refuse.
 */
export const NATS_PROTOCOL = 5;
const V = lazySchema(() => z.literal(NATS_PROTOCOL));
/**
 * What a manifest of this protocol version written before a field existed meant by leaving it out:
 * the bound every coordinator of that time applied (60 s setup and teardown, 256 KiB of output).
 * Facts of the protocol, fixed whatever the defaults of shared/defaults.ts become: a coordinator
 * today always writes the compiled values.
 */
const UNSTATED_HOOK_TIMEOUT_SECONDS = 60;
const UNSTATED_MAX_OUTPUT_BYTES = 256 * 1024;
/** A trial number (1-based), at most MAX_REPEAT; a message that says none is of trial 1. */
const Trial = lazySchema(() => z.number().int().min(1).max(MAX_REPEAT).default(1));

/** `<run>.manifest`: what a run is, written once by the coordinator. */
export const RunManifestSchema = lazySchema(() => z.object({
  v: V,
  runId: z.string(),
  /**
   * The suite: its name, fingerprint, and path relative to the coordinator's working directory
   * (absolute when the suite is outside it), which `coordinator resume RUN_ID` resolves against its own.
   */
  suite: z.object({ name: z.string(), fingerprint: z.string().length(64), path: z.string() }),
  /** The selected cases (see case-selection.ts); the suite's fingerprint says which suite they index. */
  selection: CaseSelectionSchema,
  /** Seconds, for cases that set none (already resolved: flag, suite, 120). */
  defaultTimeout: z.number().nonnegative(),
  /**
   * Seconds, the setup and teardown bounds of cases that set none (resolved: flag, suite, 60).
   * Defaults keep a manifest of an evalfleet without them readable (same protocol version).
   */
  setupTimeout: z.number().nonnegative().default(UNSTATED_HOOK_TIMEOUT_SECONDS),
  teardownTimeout: z.number().nonnegative().default(UNSTATED_HOOK_TIMEOUT_SECONDS),
  /** Largest output a worker keeps on a result, in bytes (`--max-output-kb`). */
  maxOutputBytes: z.number().int().positive().default(UNSTATED_MAX_OUTPUT_BYTES),
  /**
   * Keep each case's transcript within this many bytes of JSON, published with its result (a
   * recorded run, `--max-transcript-kb`); 0 keeps none. Default 0, so an older manifest reads.
   */
  maxTranscriptBytes: z.number().int().nonnegative().default(0),
  /**
   * The response cache of the built-in model clients (`--cache`): each worker's own folder
   * (`local`, `.evalfleet/cache` in its working directory) or the fleet's (`shared`, the
   * EVALFLEET_CACHE bucket); `ttlSeconds` how long an answer stays good. Default null: none.
   */
  cache: z.object({ kind: z.enum(["local", "shared"]), ttlSeconds: z.number().positive() }).nullable().default(null),
  /**
   * The run's cassettes in the fleet's bucket (`--record nats`, `--replay nats`, with
   * `--record-missing`): every worker records or replays its cases there, under the suite's name
   * (shared/broker/cassette-bucket.ts). Default null: none.
   */
  cassette: z.object({ mode: z.enum(["record", "replay"]), recordMissing: z.boolean() }).nullable().default(null),
  /** Deliveries per case before it is recorded as lost. */
  maxAttempts: z.number().int().positive(),
  /** Seconds before an unacknowledged case is redelivered; workers keep leases alive well within it. */
  ackWaitSeconds: z.number().positive(),
  /** Whether workers stream run events (`-v`). */
  forwardEvents: z.boolean(),
  /**
   * Provider limits by key (the suite's, `EVALFLEET_LIMITS`, `--limit`), enforced fleet-wide by the
   * coordinator's permits; a worker that cannot reach the coordinator paces itself by them. Default none.
   */
  limits: LimitTableSchema.default({}),
  /**
   * Whether a worker asks the coordinator before it starts each case (shared/wire/start-gate.ts):
   * set for a run with a budget, so that no case starts once the coordinator has counted it spent.
   * Default false, so an older manifest reads (its workers start cases without asking).
   */
  startGate: z.boolean().default(false),
  /**
   * Whether the run's coordinator reads live events in batches ({@link EventBatchSchema}): a worker
   * sends its events so only when it does. Default false, so an older coordinator's manifest gets
   * one message per event (it would drop a batch as malformed).
   */
  eventBatches: z.boolean().default(false),
  /** Retries of a case whose failure is `infra` (`--retries`), on the worker that ran it. Default 0. */
  retries: z.number().int().nonnegative().default(0),
  /**
   * Trials per case (`--repeat`): each trial is its own case message (protocol 4), so a case's
   * trials run on many workers at once. Default 1.
   */
  repeat: z.number().int().positive().default(1),
  /**
   * Adaptive repeats (`--repeat MIN..MAX`): `repeat` is MIN, this MAX, and the coordinator plans
   * a case's further trials as its results come in (workers need not know: each trial is its own
   * message). Null (the default, and an older manifest): a fixed repeat.
   */
  repeatMax: z.number().int().positive().nullable().default(null),
  /** The pass rule of a repeated case that sets none (`--case-pass-rate`), kept so `resume` judges cases the same way. Null: every trial. */
  casePassRate: z.number().min(0).max(1).nullable().default(null),
  /** The confidence of the report's intervals (`--confidence`), kept so `resume` reports the same intervals. Null: the default (an older manifest). */
  confidence: z.number().gt(0).lt(1).nullable().default(null),
  /** The stopping interval's confidence of adaptive repeats, kept so `resume` stops cases the same way. Null: not adaptive. */
  adaptiveConfidence: z.number().gt(0).lt(1).nullable().default(null),
  /** The run-level pass threshold (0-1) the exit code follows, or null; kept so `resume` decides the same way. */
  passThreshold: z.number().min(0).max(1).nullable().default(null),
  /** Evaluation functions of the suite that grade every case after its own (`--eval-function`). Default none. */
  evalFunctions: z.array(z.string().min(1)).default([]),
  /** A scoring method replacing every case's expected-output method (`--scoring-method`), or null. */
  scoringMethod: z.enum(SCORING_METHODS).nullable().default(null),
  createdAt: z.string(),
  coordinator: z.object({ host: z.string(), pid: z.number().int() }),
}));
export type RunManifest = z.infer<typeof RunManifestSchema>;

/**
 * A run's phase as stored in `<run>.state`, for workers and `status` (not the coordinator's own
 * state machine, `RunPhase` in coordinator/run/state.ts).
 */
export const RunRecordPhaseSchema = lazySchema(() => z.enum(["publishing", "running", "cancelling", "completed", "cancelled"]));
export type RunRecordPhase = z.infer<typeof RunRecordPhaseSchema>;

/** Whether a run's recorded phase says it is over: no case of it runs any more. */
export function isFinishedPhase(phase: unknown): phase is "completed" | "cancelled" {
  return phase === "completed" || phase === "cancelled";
}

/**
 * `<run>.state`. The coordinator rewrites it every few seconds while it follows the run
 * (`updatedAt` is its heartbeat, see COORDINATOR_HEARTBEAT_SECONDS in coordinator/distributed/coordinator-heartbeat.ts).
 */
export const RunStateSchema = lazySchema(() =>
  z.object({
    v: V,
    phase: RunRecordPhaseSchema,
    published: z.number().int().nonnegative(),
    updatedAt: z.string(),
    /** Seconds the coordinator expects the run to go on, from the recorded durations (coordinator/run/run-eta.ts), as of `updatedAt`; absent without history. */
    etaSeconds: z.number().nonnegative().optional(),
  }),
);
export type RunStateRecord = z.infer<typeof RunStateSchema>;

/** `<run>.cancel`: created once (the first writer wins). */
export const CancelSchema = lazySchema(() => z.object({ v: V, at: z.string(), by: z.string(), reason: z.string() }));
export type CancelRecord = z.infer<typeof CancelSchema>;

/** `<run>.workers.<worker>`: a worker's presence, refreshed while it serves the run. */
export const WorkerRecordSchema = lazySchema(() => z.object({
  v: V,
  workerId: z.string(),
  host: z.string(),
  pid: z.number().int(),
  /** The worker's suite fingerprint. */
  fingerprint: z.string(),
  /** False when the worker refused the run (another suite). */
  accepted: z.boolean(),
  reason: z.string().nullable(),
  slots: z.number().int().nonnegative(),
  busy: z.number().int().nonnegative(),
  seenAt: z.string(),
}));
export type WorkerRecord = z.infer<typeof WorkerRecordSchema>;

/**
 * What every protocol version keeps of a manifest: enough for a worker to say whose run it is
 * refusing (a worker of another version cannot read the rest).
 */
export const ManifestEnvelopeSchema = lazySchema(() => z.object({ suite: z.object({ name: z.string().optional(), fingerprint: z.string().optional() }).optional() }));

/**
 * What every protocol version keeps of a presence record: who, whether it serves the run, and
 * why not. A worker refusing a run of another version writes its own version's record; the
 * run's coordinator still reads the refusal from these fields.
 */
export const PresenceEnvelopeSchema = lazySchema(() => z.object({ workerId: z.string(), accepted: z.boolean(), reason: z.string().nullable() }));

/** A case's delivery token (shared/wire/case-token.ts). */
export const CaseTokenSchema = lazySchema(() => z.string().regex(CASE_TOKEN_PATTERN, "not a delivery token"));

/** `evalfleet.<run>.cases.<delivery>`: run one trial of one case. */
export const CaseMessageSchema = lazySchema(() => z
  .object({
    v: V,
    runId: z.string(),
    index: z.number().int().nonnegative(),
    /** Which trial of the case this is (1-based; `--repeat`): its own delivery, token and result. */
    trial: Trial,
    name: z.string(),
    fingerprint: z.string().length(64),
    /** The case's delivery token: the result echoes it. Published nowhere else. */
    token: CaseTokenSchema,
    /**
     * The W3C traceparent of the coordinator's publish span, when tracing is on (OTEL_*
     * variables): the case's span on the worker goes under it, so a distributed run is one trace.
     * Absent when tracing is off.
     */
    traceparent: z
      .string()
      .regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/, "not a W3C traceparent")
      .optional(),
  })
  // Code never travels: a case is named by index and name, and the worker runs its own suite's
  // case. A message that carries anything else (code, another suite's path) is not ours: strict,
  // so it is refused and disposed of rather than quietly run as the case it names.
  .strict());
export type CaseMessage = z.infer<typeof CaseMessageSchema>;

/** `evalfleet.<run>.results.<delivery>-<seal>`: one trial's result, published once. */
export const ResultMessageSchema = lazySchema(() => z.object({
  v: V,
  runId: z.string(),
  index: z.number().int().nonnegative(),
  /** Which trial of the case this is (1-based; `--repeat`): its own delivery, token and result. */
  trial: Trial,
  name: z.string(),
  workerId: z.string(),
  /** The delivery token of the case message this result answers. */
  token: CaseTokenSchema,
  result: CaseResultDataSchema,
}));
export type ResultMessage = z.infer<typeof ResultMessageSchema>;

/** `evalfleet.<run>.events.<index>` (core NATS, disposable): a trial of a case started, or one of its run events. */
export const EventMessageSchema = lazySchema(() => z.object({
  v: V,
  runId: z.string(),
  index: z.number().int().nonnegative(),
  /** Which trial of the case this is (1-based; `--repeat`): its own delivery, token and result. */
  trial: Trial,
  workerId: z.string(),
  kind: z.enum(["started", "event"]),
  event: z.record(z.string(), z.unknown()).optional(),
}));
export type EventMessage = z.infer<typeof EventMessageSchema>;

/** Events per {@link EventBatchSchema} message, at most. */
export const MAX_EVENTS_PER_BATCH = 1024;

/** One event of an {@link EventBatchSchema} message: an {@link EventMessageSchema} without what the batch says once. */
export const BatchedEventSchema = lazySchema(() => z.object({
  index: z.number().int().nonnegative(),
  trial: Trial,
  kind: z.enum(["started", "event"]),
  event: z.record(z.string(), z.unknown()).optional(),
}));
export type BatchedEvent = z.infer<typeof BatchedEventSchema>;

/**
 * `evalfleet.<run>.events.batch` (core NATS, disposable): the live events one worker had within
 * one turn of its event loop, in the order they happened, each read as the {@link EventMessage}
 * of the batch's run and worker. Sent only to a coordinator whose manifest says `eventBatches`.
 */
export const EventBatchSchema = lazySchema(() => z.object({
  v: V,
  runId: z.string(),
  workerId: z.string(),
  events: z.array(BatchedEventSchema).min(1).max(MAX_EVENTS_PER_BATCH),
}));
export type EventBatch = z.infer<typeof EventBatchSchema>;

/** `EVALFLEET_RUN_KEYS` `<run>`: the run's key (base64), from which every delivery token of the run is derived. */
export const RunKeyRecordSchema = lazySchema(() => z.object({ v: V, runId: z.string(), key: z.string().min(1), createdAt: z.string() }));
export type RunKeyRecord = z.infer<typeof RunKeyRecordSchema>;

/** Parses a message body; `undefined` when it is not JSON (the schema check then says what is wrong). */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
