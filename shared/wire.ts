import { z } from "zod";
import { ErrorInfoSchema } from "./errors.ts";
import { CaseSelectionSchema } from "./case-selection.ts";

/**
 * Every message that crosses a thread boundary (and, in distributed mode, NATS), as zod schemas.
 * Types come from `z.infer`; receivers validate before they trust.
 */

/** Version of the thread protocol; a mismatch is refused with a clear error. */
export const THREAD_PROTOCOL = 2;

const VerdictSchema = z.object({ passed: z.boolean(), reason: z.string() });
/** Verdicts of the data-driven checks (see shared/result.ts `ExpectationsData`). */
export const ExpectationsSchema = z.object({
  expectedOutput: VerdictSchema.extend({ method: z.string() }).optional(),
  expectedAgentTools: VerdictSchema.optional(),
  expectedKnowledgeSources: VerdictSchema.optional(),
});

/** One run of a repeated case (see shared/result.ts `RepeatResultData`). */
export const RepeatResultSchema = z.object({
  repeat: z.number().int().positive(),
  passed: z.boolean(),
  sessionId: z.string(),
  durationSeconds: z.number(),
  judgePassed: z.boolean().nullable(),
  judgeReason: z.string().nullable(),
  judgeScore: z.number().nullable(),
  reliabilityPassed: z.boolean().nullable(),
  output: z.string().nullable(),
  toolsCalled: z.array(z.string()).readonly(),
  timedOut: z.boolean(),
  skipped: z.boolean(),
  error: z.string().nullable(),
  score: z.object({ value: z.number(), passed: z.boolean(), reason: z.string().nullable().optional() }).nullable(),
  expectations: ExpectationsSchema.nullable(),
  attempts: z.number().int().nonnegative(),
  worker: z.string().nullable(),
});

/** Plain-data form of a case result (see shared/result.ts). */
export const CaseResultDataSchema = z.object({
  name: z.string(),
  tags: z.array(z.string()),
  agentId: z.string().nullable(),
  teamId: z.string().nullable(),
  sessionId: z.string(),
  durationSeconds: z.number(),
  judgePassed: z.boolean().nullable(),
  judgeReason: z.string().nullable(),
  judgeScore: z.number().nullable(),
  reliabilityPassed: z.boolean().nullable(),
  output: z.string().nullable(),
  toolsCalled: z.array(z.string()),
  timedOut: z.boolean(),
  skipped: z.boolean(),
  error: z.string().nullable(),
  response: z.any().nullable(),
  score: z
    .object({
      value: z.number().min(0).max(1),
      passed: z.boolean(),
      reason: z.string().nullable().optional(),
      detail: z.record(z.string(), z.unknown()).nullable().optional(),
    })
    .nullable(),
  index: z.number().int().nonnegative(),
  attempts: z.number().int().nonnegative(),
  worker: z.string().nullable(),
  reliability: z
    .object({
      passed: z.boolean(),
      passedToolCalls: z.array(z.string()),
      failedToolCalls: z.array(z.string()),
      additionalToolCalls: z.array(z.string()),
      missingToolCalls: z.array(z.string()),
    })
    .nullable(),
  // Optional, so results from an evalfleet without data-driven checks still parse.
  expectations: ExpectationsSchema.nullish(),
  repeats: z.array(RepeatResultSchema).readonly().nullish(),
  // Optional for the same reason; the results store records it (the raw response stays on the worker).
  usage: z
    .object({ inputTokens: z.number().nullable(), outputTokens: z.number().nullable(), totalTokens: z.number().nullable(), costUsd: z.number().nullable() })
    .nullish(),
});
export type CaseResultWire = z.infer<typeof CaseResultDataSchema>;

/** The part of a result a thread streams while the case runs (small: no raw response). */
export const CaseCommitSchema = CaseResultDataSchema.pick({
  output: true,
  toolsCalled: true,
  error: true,
  judgePassed: true,
  judgeReason: true,
  judgeScore: true,
  reliabilityPassed: true,
  score: true,
});
export type CaseCommit = z.infer<typeof CaseCommitSchema>;

/** One case of a {@link ThreadBatchSchema}. */
export const ThreadCaseSchema = z.object({
  /** Names this attempt in progress messages, cancels and its reply (unique within the pool). */
  taskId: z.number().int().nonnegative(),
  index: z.number().int().nonnegative(),
  name: z.string(),
  /** Seconds, when the case sets no timeout (already resolved: flag, then suite, then 120). */
  defaultTimeout: z.number().nonnegative(),
  attempt: z.number().int().positive(),
  /** Forward streamed events to the main thread (only when a hook wants them). */
  forwardEvents: z.boolean(),
});
export type ThreadCase = z.infer<typeof ThreadCaseSchema>;

/**
 * Main thread -> worker thread, as one piscina task: run these cases of a suite file, all at once.
 * Cases the pool is asked for in the same turn of the event loop travel together: piscina's
 * dispatch costs about 60 µs per task, against a few µs per case inside a batch. Each case's
 * reply comes back on its own as soon as the case ends (a `reply` {@link ThreadMessageSchema}),
 * so a slow case never holds up the others of its batch.
 */
export const ThreadBatchSchema = z.object({
  protocol: z.literal(THREAD_PROTOCOL),
  /** Absolute path of the suite file. */
  suitePath: z.string().min(1),
  /** The fingerprint the main thread loaded; the thread refuses a different suite. */
  fingerprint: z.string().length(64),
  logLevel: z.string(),
  /** Send each case's raw response back (local mode reports it; a distributed worker drops it before publishing). */
  keepResponses: z.boolean(),
  cases: z.array(ThreadCaseSchema).min(1),
});
export type ThreadBatch = z.infer<typeof ThreadBatchSchema>;

/**
 * What a batch's piscina task resolves to, once every case of it has replied: `done`, or `error`
 * when the batch itself was refused (then no case of it replied, and each gets this error).
 */
export const ThreadBatchReplySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("done"), replied: z.number().int().nonnegative() }),
  z.object({ kind: z.literal("error"), error: ErrorInfoSchema }),
]);
export type ThreadBatchReply = z.infer<typeof ThreadBatchReplySchema>;

/** Main thread -> worker thread once, at its start (piscina's `workerData`). */
export const ThreadWorkerDataSchema = z.object({
  /**
   * Name of the pool's BroadcastChannel: the thread listens on it from start-up, before any task,
   * for {@link ThreadBroadcastSchema} (cancel a task; close the MCP clients it opened).
   */
  controlChannel: z.string().min(1),
});
export type ThreadWorkerData = z.infer<typeof ThreadWorkerDataSchema>;

/**
 * What a reply may carry besides its outcome. They ride on the reply because the reply is the one
 * message sure to arrive before the main side moves on.
 */
const ThreadReplyExtras = {
  /** The thread holds resources (`opened` MCP clients it connected) to close before the pool is destroyed. */
  resources: z.object({ threadId: z.number().int(), opened: z.number().int().nonnegative() }).optional(),
  /** Warnings for the person running the suite (a failed MCP connection), one line each. */
  warnings: z.array(z.string()).optional(),
};

/** How a case ended on its thread: a result, or a failure to even start the case. */
export const ThreadReplySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("result"), result: CaseResultDataSchema, ...ThreadReplyExtras }),
  z.object({ kind: z.literal("error"), error: ErrorInfoSchema, ...ThreadReplyExtras }),
]);
export type ThreadReply = z.infer<typeof ThreadReplySchema>;

/**
 * Worker thread -> main thread while a case runs, on the thread's parentPort (piscina hands such
 * messages to the pool's `message` event), tagged with the task they belong to. One channel per
 * thread instead of one per task: creating and transferring a MessagePort per case was the
 * largest cost of the thread hop.
 */
export const ThreadMessageSchema = z.discriminatedUnion("kind", [
  /**
   * `threadId` identifies the thread to terminate; `sessionId` and `deadline` (epoch ms) come with
   * `run`. `setup` and `teardown` are sent only when the case has such a hook (they move the
   * watchdog); the case's `reply` is its end.
   */
  z.object({
    kind: z.literal("phase"),
    taskId: z.number().int(),
    phase: z.enum(["setup", "run", "teardown"]),
    threadId: z.number().int(),
    sessionId: z.string().optional(),
    deadline: z.number().optional(),
  }),
  /** What the case has committed so far (evidence, verdicts, errors), so a terminated thread loses nothing already known. */
  z.object({ kind: z.literal("commit"), taskId: z.number().int(), commit: CaseCommitSchema }),
  z.object({ kind: z.literal("event"), taskId: z.number().int(), event: z.record(z.string(), z.unknown()) }),
  /** The case is over: its result (or why it could not start). The last message of a task. */
  z.object({ kind: z.literal("reply"), taskId: z.number().int(), reply: ThreadReplySchema }),
  /**
   * A thread has opened the pool's control channel (once, at start-up). A cancel broadcast before
   * that reached nobody, so the pool says it again for the tasks that have not started.
   */
  z.object({ kind: z.literal("ready"), taskId: z.literal(-1), threadId: z.number().int() }),
]);
export type ThreadMessage = z.infer<typeof ThreadMessageSchema>;

/** Main thread -> every worker thread of a pool, on its BroadcastChannel: cancel a task; close what you opened. */
export const ThreadBroadcastSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("close-resources") }),
  /** Abort the task's case cooperatively (its teardown still runs). */
  z.object({ kind: z.literal("cancel"), taskId: z.number().int() }),
]);
export type ThreadBroadcast = z.infer<typeof ThreadBroadcastSchema>;

/** Worker thread -> main thread, on the same BroadcastChannel: done closing. */
export const ThreadBroadcastReplySchema = z.object({
  kind: z.literal("resources-closed"),
  threadId: z.number().int(),
  closed: z.number().int().nonnegative(),
  errors: z.array(z.string()),
});
export type ThreadBroadcastReply = z.infer<typeof ThreadBroadcastReplySchema>;


// ---------------------------------------------------------------------------------------------
// Distributed mode: messages on NATS. Every one carries `v`, the protocol version.

/** Version of the NATS protocol; a message of another version is refused with a clear error. */
export const NATS_PROTOCOL = 2;
const V = z.literal(NATS_PROTOCOL);

/** Largest case output kept in a result, in bytes (UTF-8); longer output is cut with a marker. */
export const MAX_OUTPUT_BYTES = 256 * 1024;

/** `<run>.manifest`: what a run is, written once by the coordinator. */
export const RunManifestSchema = z.object({
  v: V,
  runId: z.string(),
  suite: z.object({ name: z.string(), fingerprint: z.string().length(64), path: z.string() }),
  /** The selected cases (see shared/case-selection.ts); the suite's fingerprint says which suite they index. */
  selection: CaseSelectionSchema,
  /** Seconds, for cases that set none (already resolved: flag, suite, 120). */
  defaultTimeout: z.number().nonnegative(),
  /** Deliveries per case before it is recorded as lost. */
  maxAttempts: z.number().int().positive(),
  /** Seconds before an unacknowledged case is redelivered; workers keep leases alive well within it. */
  ackWaitSeconds: z.number().positive(),
  /** Whether workers stream run events (`-v`). */
  forwardEvents: z.boolean(),
  /** Runs per case (`--repeat`): a worker runs every repeat of a case it takes. Default 1. */
  repeat: z.number().int().positive().default(1),
  /** The run-level pass threshold (0-1) the exit code follows, or null; kept so `resume` decides the same way. */
  passThreshold: z.number().min(0).max(1).nullable().default(null),
  createdAt: z.string(),
  coordinator: z.object({ host: z.string(), pid: z.number().int() }),
});
export type RunManifest = z.infer<typeof RunManifestSchema>;

/** Run phases, as stored in `<run>.state`. */
export const RunPhase = z.enum(["publishing", "running", "cancelling", "completed", "cancelled"]);
export type RunPhase = z.infer<typeof RunPhase>;

/** `<run>.state`. */
export const RunStateSchema = z.object({ v: V, phase: RunPhase, published: z.number().int().nonnegative(), updatedAt: z.string() });
export type RunStateRecord = z.infer<typeof RunStateSchema>;

/** `<run>.cancel`: created once (the first writer wins). */
export const CancelSchema = z.object({ v: V, at: z.string(), by: z.string(), reason: z.string() });
export type CancelRecord = z.infer<typeof CancelSchema>;

/** `<run>.workers.<worker>`: a worker's presence, refreshed while it serves the run. */
export const WorkerRecordSchema = z.object({
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
});
export type WorkerRecord = z.infer<typeof WorkerRecordSchema>;

/** `evalfleet.<run>.cases.<index>`: run one case. */
export const CaseMessageSchema = z
  .object({
    v: V,
    runId: z.string(),
    index: z.number().int().nonnegative(),
    name: z.string(),
    fingerprint: z.string().length(64),
  })
  // Code never travels: a case is named by index and name, and the worker runs its own suite's
  // case. A message that carries anything else (code, another suite's path) is not ours: strict,
  // so it is refused and disposed of rather than quietly run as the case it names.
  .strict();
export type CaseMessage = z.infer<typeof CaseMessageSchema>;

/** `evalfleet.<run>.results.<index>`: one case's result, published once. */
export const ResultMessageSchema = z.object({
  v: V,
  runId: z.string(),
  index: z.number().int().nonnegative(),
  name: z.string(),
  workerId: z.string(),
  result: CaseResultDataSchema,
});
export type ResultMessage = z.infer<typeof ResultMessageSchema>;

/** `evalfleet.<run>.events.<index>` (core NATS, disposable): a case started, or one of its run events. */
export const EventMessageSchema = z.object({
  v: V,
  runId: z.string(),
  index: z.number().int().nonnegative(),
  workerId: z.string(),
  kind: z.enum(["started", "event"]),
  event: z.record(z.string(), z.unknown()).optional(),
});
export type EventMessage = z.infer<typeof EventMessageSchema>;

/** Largest text field other than the output kept in a result (errors, reasons), in bytes. */
export const MAX_TEXT_BYTES = 16 * 1024;
/** Largest result message, in bytes: well under NATS's default 1 MiB payload limit. */
export const MAX_RESULT_MESSAGE_BYTES = 768 * 1024;

/**
 * Makes a result fit on the wire: the output is cut to {@link MAX_OUTPUT_BYTES} (shared with its
 * repeats, so that the case and its repeats stay within it together), errors and reasons to
 * {@link MAX_TEXT_BYTES}, a scorer's detail over that size is replaced by a note, the raw response
 * is dropped (it never reaches the report). Each cut ends with a marker saying so.
 */
export function fitResultForWire(result: CaseResultWire): CaseResultWire {
  const repeats = result.repeats ?? null;
  const share = repeats && repeats.length > 0 ? Math.max(1024, Math.floor(MAX_OUTPUT_BYTES / (repeats.length + 1))) : MAX_OUTPUT_BYTES;
  return {
    ...result,
    response: null,
    output: truncateOutput(result.output, share),
    ...(repeats && repeats.length > 0 ? { repeats: repeats.map((r) => ({ ...r, output: truncateOutput(r.output, share) })) } : {}),
    error: truncateOutput(result.error, MAX_TEXT_BYTES),
    judgeReason: truncateOutput(result.judgeReason, MAX_TEXT_BYTES),
    toolsCalled: result.toolsCalled.length > 1000 ? [...result.toolsCalled.slice(0, 1000), `... ${result.toolsCalled.length - 1000} more`] : result.toolsCalled,
    score: result.score
      ? {
          ...result.score,
          reason: truncateOutput(result.score.reason ?? null, MAX_TEXT_BYTES),
          detail:
            result.score.detail && Buffer.byteLength(JSON.stringify(result.score.detail)) > MAX_TEXT_BYTES
              ? { truncated: "detail over 16 KiB left out by evalfleet" }
              : (result.score.detail ?? null),
        }
      : null,
  };
}

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes (default {@link MAX_OUTPUT_BYTES}), marker
 * included: the end says how long the text was and how much was kept. Idempotent: a text already
 * within the limit is returned as is.
 */
export function truncateOutput(text: string | null, maxBytes: number = MAX_OUTPUT_BYTES): string | null {
  if (text === null) return null;
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return text;
  const markerFor = (kept: number): string => `\n[evalfleet: output truncated: ${bytes} bytes, kept the first ${kept}]`;
  const keep = Math.max(0, maxBytes - Buffer.byteLength(markerFor(maxBytes)));
  // Cut on a character boundary: decoding a byte slice drops a partial last character.
  const kept = Buffer.from(text, "utf8").subarray(0, keep).toString("utf8").replace(/\uFFFD$/, "");
  return kept + markerFor(Buffer.byteLength(kept));
}

/** Parses a message body; `undefined` when it is not JSON (the schema check then says what is wrong). */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
