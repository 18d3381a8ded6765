// runs in: both
import * as z from "zod";
import * as zm from "zod/mini";
import { ErrorInfoSchema } from "../errors.ts";
import { CaseCommitSchema, CaseResultDataSchema } from "./result-data.ts";
import { plainlyValidBatch } from "./thread-batch-check.ts";
import { versionMismatch } from "./protocol.ts";
import { SCORING_METHODS } from "../datasets/scoring-methods.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";
import { startUpSchema } from "../runtime/start-up.ts";

/**
 * The thread protocol: every message between a worker process's main thread and its piscina
 * threads, as zod schemas. Types come from `z.infer`; receivers validate before they trust. What a
 * thread parses as it starts (its `workerData`, its batches) is a start-up schema, built with zod
 * mini (shared/runtime/start-up.ts); the messages of every case are zod classic's.
 */

/** Version of the thread protocol; a mismatch is refused with a clear error. */
export const THREAD_PROTOCOL = 3;

/**
 * The response cache a case's model calls go through (`--cache`): answers in a folder, or in the
 * fleet's shared cache, which the thread reaches through its pool (`cache-get` / `cache-put`
 * messages, answered with `cache-value` on the pool's channel). `ttlSeconds`: how long an answer stays good.
 */
export const ThreadCacheSchema = startUpSchema(() => zm.discriminatedUnion("kind", [
  zm.object({ kind: zm.literal("local"), dir: zm.string().check(zm.minLength(1)), ttlSeconds: zm.number().check(zm.positive()) }),
  zm.object({ kind: zm.literal("shared"), ttlSeconds: zm.number().check(zm.positive()) }),
]));
export type ThreadCache = z.infer<typeof ThreadCacheSchema>;

/**
 * The cassettes of a run (`--record DIR`, `--replay DIR`, `--replay DIR --record-missing`): the
 * folder holding one JSON file per case and trial (worker/cassette/cassette-store.ts). With
 * `fleet` (a distributed run's `--record nats`), `dir` is the suite's folder in the fleet's
 * bucket, which the thread reaches through its pool (`cassette-get` / `cassette-put`, answered
 * with `cassette-answer` on the pool's channel).
 */
export const ThreadCassetteSchema = startUpSchema(() => zm.object({
  mode: zm.enum(["record", "replay"]),
  dir: zm.string().check(zm.minLength(1)),
  /** The cassettes live in the fleet's bucket (shared/broker/cassette-bucket.ts), not a folder. Default false. */
  fleet: zm.optional(zm.boolean()),
  /** A replay that sends and records what its cassette lacks instead of failing the case. */
  recordMissing: zm.boolean(),
}));
export type ThreadCassette = z.infer<typeof ThreadCassetteSchema>;

/** One case of a {@link ThreadBatchSchema}. */
export const ThreadCaseSchema = startUpSchema(() => zm.object({
  /** Names this attempt in progress messages, cancels and its reply (unique within the pool). */
  taskId: zm.int().check(zm.nonnegative()),
  index: zm.int().check(zm.nonnegative()),
  name: zm.string(),
  /** Seconds, when the case sets no timeout (already resolved: flag, then suite, then 120). */
  defaultTimeout: zm.number().check(zm.nonnegative()),
  /** Seconds, the bound on `setup` when the case sets none (already resolved: flag, then suite, then 60). */
  setupTimeout: zm.number().check(zm.nonnegative()),
  /** Seconds, the bound on `teardown` when the case sets none (already resolved: flag, then suite, then 60). */
  teardownTimeout: zm.number().check(zm.nonnegative()),
  /** Largest output kept on the result, in bytes (`--max-output-kb`, the run's); longer output is cut with a marker. */
  maxOutputBytes: zm.int().check(zm.positive()),
  attempt: zm.int().check(zm.positive()),
  /** Forward streamed events to the main thread (only when a hook wants them). */
  forwardEvents: zm.boolean(),
  /** The run's evaluation functions (`--eval-function`), by name: they grade the case after its own. Absent: none. */
  evalFunctions: zm.optional(zm.array(zm.string().check(zm.minLength(1)))),
  /** The run's scoring method (`--scoring-method`): it replaces the case's expected-output method. Absent: the case's. */
  scoringMethod: zm.optional(zm.enum(SCORING_METHODS)),
  /** The W3C traceparent the case's span goes under (the run's), when tracing is on. Absent: no parent. */
  traceparent: zm.optional(zm.string().check(zm.maxLength(64))),
  /** How the case's span names its worker and attempt: a distributed worker's id, and the deliveries before this one. Absent: the thread and the pool's attempt. */
  traceAs: zm.optional(zm.object({ worker: zm.string().check(zm.maxLength(256)), priorAttempts: zm.int().check(zm.nonnegative()) })),
  /** Keep the case's transcript within this many bytes of JSON (a recorded run, `--max-transcript-kb`). Absent: none. */
  maxTranscriptBytes: zm.optional(zm.int().check(zm.positive())),
  /** A regrade: grade this stored output (a `RunOutput` as plain data) instead of running the agent; setup and teardown do not run. Absent: the agent runs. */
  replay: zm.optional(zm.record(zm.string(), zm.unknown())),
  /** A regrade's `--judge-model`: the OpenAI-compatible judge with this model grades cases that name no judge of their own. Absent: the suite's. */
  judgeModel: zm.optional(zm.string().check(zm.minLength(1))),
  /** Which run of a repeated case this is (1-based; part of a cached answer's key). Absent: 1. */
  repeat: zm.optional(zm.int().check(zm.positive())),
  /** The response cache of the case's model calls. Absent: none. */
  cache: zm.optional(ThreadCacheSchema),
  /** Record or replay the case's HTTP exchanges and wrapped tool calls (`--record`, `--replay`). Absent: neither. */
  cassette: zm.optional(ThreadCassetteSchema),
}));
export type ThreadCase = z.infer<typeof ThreadCaseSchema>;

/** A suite's module as shared/suite/suite.ts's `SuiteModule` says it. */
const SuiteModuleSchema = () => zm.object({ url: zm.string().check(zm.minLength(1)), loader: zm.enum(["node", "bundle", "tsx"]), reason: zm.optional(zm.string()) });

/**
 * Main thread -> worker thread, as one piscina task: run these cases of a suite file, all at once.
 * Cases the pool is asked for in the same turn of the event loop travel together: piscina's
 * dispatch costs about 60 µs per task, against a few µs per case inside a batch. Each case's
 * reply comes back on its own as soon as the case ends (a `reply` {@link ThreadMessageSchema}),
 * so a slow case never holds up the others of its batch.
 */
export const ThreadBatchSchema = startUpSchema(() => zm.object({
  protocol: zm.literal(THREAD_PROTOCOL),
  /** Absolute path of the suite file. */
  suitePath: zm.string().check(zm.minLength(1)),
  /** The module the pool's process imported for it (a bundled TypeScript suite), to import the same; absent: work it out. */
  suiteModule: zm.optional(SuiteModuleSchema()),
  /** The fingerprint the main thread loaded; the thread refuses a different suite. */
  fingerprint: zm.string().check(zm.length(64)),
  logLevel: zm.string(),
  /** Send each case's raw response back (local mode reports it; a distributed worker drops it before publishing). */
  keepResponses: zm.boolean(),
  cases: zm.array(ThreadCaseSchema).check(zm.minLength(1)),
}));
export type ThreadBatch = z.infer<typeof ThreadBatchSchema>;

/**
 * Validates a thread task: the batch, or why it is refused, in one line. A batch of another
 * thread protocol version is refused naming both versions (a thread loaded from another evalfleet
 * copy than its pool's), before its fields are looked at.
 */
export function parseThreadBatch(raw: unknown): { ok: true; batch: ThreadBatch } | { ok: false; why: string } {
  const mismatch = versionMismatch(raw, { ours: THREAD_PROTOCOL, what: "thread task", who: "thread", protocol: "thread protocol", field: "protocol" });
  if (mismatch !== null) return { ok: false, why: mismatch };
  // The common batch is checked in plain code; the schema checks the rest and words the error.
  if (plainlyValidBatch(raw, THREAD_PROTOCOL)) return { ok: true, batch: raw as ThreadBatch };
  const parsed = ThreadBatchSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, why: `invalid thread task: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}` };
  return { ok: true, batch: parsed.data };
}

/**
 * What a batch's piscina task resolves to, once every case of it has replied: `done`, or `error`
 * when the batch itself was refused (then no case of it replied, and each gets this error).
 */
export const ThreadBatchReplySchema = lazySchema(() => z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("done"), replied: z.number().int().nonnegative() }),
  z.object({ kind: z.literal("error"), error: ErrorInfoSchema }),
]));
export type ThreadBatchReply = z.infer<typeof ThreadBatchReplySchema>;

/** Main thread -> worker thread once, at its start (piscina's `workerData`). */
export const ThreadWorkerDataSchema = startUpSchema(() => zm.object({
  /**
   * Name of the pool's BroadcastChannel: the thread listens on it from start-up, before any task,
   * for {@link ThreadBroadcastSchema} (cancel a task; close the MCP clients it opened).
   */
  controlChannel: zm.string().check(zm.minLength(1)),
  /**
   * Name of the pool's limiter BroadcastChannel: the thread's model calls ask the main thread's
   * one limiter for permits there (worker/pool/thread-limiter.ts). Absent: the thread limits alone.
   */
  limiterChannel: zm.optional(zm.string().check(zm.minLength(1))),
  /**
   * The suite the thread's batches will name, when its pool knows it as the thread starts: the
   * thread imports it at once, while the main thread is still loading it too, rather than on its
   * first batch. Absent: imported on the first batch.
   */
  preloadSuite: zm.optional(zm.object({ path: zm.string().check(zm.minLength(1)), module: SuiteModuleSchema() })),
}));
export type ThreadWorkerData = z.infer<typeof ThreadWorkerDataSchema>;

/**
 * What a reply may carry besides its outcome. They ride on the reply because the reply is the one
 * message sure to arrive before the main side moves on.
 */
const ThreadReplyExtras = lazySchema(() => ({
  /** The thread holds resources (`opened` MCP clients it connected) to close before the pool is destroyed. */
  resources: z.object({ threadId: z.number().int(), opened: z.number().int().nonnegative() }).optional(),
  /** Warnings for the person running the suite (a failed MCP connection), one line each. */
  warnings: z.array(z.string()).optional(),
}));

/** How a case ended on its thread: a result, or a failure to even start the case. */
export const ThreadReplySchema = lazySchema(() => z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("result"), result: CaseResultDataSchema, ...ThreadReplyExtras }),
  z.object({ kind: z.literal("error"), error: ErrorInfoSchema, ...ThreadReplyExtras }),
]));
export type ThreadReply = z.infer<typeof ThreadReplySchema>;

/**
 * Worker thread -> main thread while a case runs, on the thread's parentPort (piscina hands such
 * messages to the pool's `message` event), tagged with the task they belong to. One channel per
 * thread instead of one per task: creating and transferring a MessagePort per case was the
 * largest cost of the thread hop.
 */
export const ThreadMessageSchema = lazySchema(() => z.discriminatedUnion("kind", [
  /**
   * `threadId` identifies the thread to terminate; `deadline` (epoch ms) is the phase's bound: the
   * hook's for `setup` and `teardown`, the case's timeout for `run` (which also carries
   * `sessionId`). `setup` and `teardown` are sent only when the case has such a hook; each moves
   * the watchdog to its deadline. The case's `reply` is its end.
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
  /**
   * The case started a child process (pid, and its start time from `/proc`, null where there is
   * none): the thread ends it when the case ends, the pool when the thread dies first.
   */
  z.object({ kind: z.literal("spawned"), taskId: z.number().int(), threadId: z.number().int(), pid: z.number().int().positive(), start: z.string().nullable() }),
  /** The case is over: its result (or why it could not start). The last message of a task. */
  z.object({ kind: z.literal("reply"), taskId: z.number().int(), reply: ThreadReplySchema }),
  /**
   * A thread has opened the pool's control channel (once, at start-up). A cancel broadcast before
   * that reached nobody, so the pool says it again for the tasks that have not started.
   */
  /** A case's model call asks the shared response cache for `key` (answered with a `cache-value` broadcast). */
  z.object({ kind: z.literal("cache-get"), taskId: z.literal(-1), threadId: z.number().int(), requestId: z.number().int().nonnegative(), key: z.string().min(1) }),
  /** A successful model answer for the shared response cache. */
  z.object({ kind: z.literal("cache-put"), taskId: z.literal(-1), key: z.string().min(1), value: z.unknown() }),
  /** A case's replay asks the fleet's cassette bucket for the object `name` (answered with a `cassette-answer` broadcast). */
  z.object({ kind: z.literal("cassette-get"), taskId: z.literal(-1), threadId: z.number().int(), requestId: z.number().int().nonnegative(), name: z.string().min(1) }),
  /** A recorded cassette for the fleet's bucket (answered with a `cassette-answer` broadcast once written). */
  z.object({ kind: z.literal("cassette-put"), taskId: z.literal(-1), threadId: z.number().int(), requestId: z.number().int().nonnegative(), name: z.string().min(1), text: z.string() }),
  z.object({
    kind: z.literal("ready"),
    taskId: z.literal(-1),
    threadId: z.number().int(),
    /** The thread's beacon (worker/pool/thread-beacon.ts): its heartbeat, and the task whose code it runs. */
    beacon: z.instanceof(SharedArrayBuffer),
  }),
]));
export type ThreadMessage = z.infer<typeof ThreadMessageSchema>;

/** Main thread -> every worker thread of a pool, on its BroadcastChannel: cancel a task; close what you opened. */
export const ThreadBroadcastSchema = lazySchema(() => z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("close-resources") }),
  /** Abort the task's case cooperatively (its teardown still runs). */
  z.object({ kind: z.literal("cancel"), taskId: z.number().int() }),
  /** The shared response cache's answer to a thread's `cache-get` (null: a miss); other threads ignore it. */
  z.object({ kind: z.literal("cache-value"), threadId: z.number().int(), requestId: z.number().int().nonnegative(), value: z.unknown() }),
  /** The cassette bucket's answer to a thread's `cassette-get` (`text` null: no such cassette) or `cassette-put` (done); `error` when the bucket failed. */
  z.object({ kind: z.literal("cassette-answer"), threadId: z.number().int(), requestId: z.number().int().nonnegative(), text: z.string().nullable(), error: z.string().nullable() }),
]));
export type ThreadBroadcast = z.infer<typeof ThreadBroadcastSchema>;

/** Worker thread -> main thread, on the same BroadcastChannel: done closing. */
export const ThreadBroadcastReplySchema = lazySchema(() => z.object({
  kind: z.literal("resources-closed"),
  threadId: z.number().int(),
  closed: z.number().int().nonnegative(),
  errors: z.array(z.string()),
}));
export type ThreadBroadcastReply = z.infer<typeof ThreadBroadcastReplySchema>;
