import { z } from "zod";
import { ErrorInfoSchema } from "./errors.ts";

/**
 * Every message that crosses a thread boundary (and, in distributed mode, NATS), as zod schemas.
 * Types come from `z.infer`; receivers validate before they trust.
 */

/** Version of the thread protocol; a mismatch is refused with a clear error. */
export const THREAD_PROTOCOL = 1;

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

/** Main thread -> worker thread: run one case of a suite file. The MessagePort travels beside it. */
export const ThreadTaskSchema = z.object({
  protocol: z.literal(THREAD_PROTOCOL),
  /** Absolute path of the suite file. */
  suitePath: z.string().min(1),
  /** The fingerprint the main thread loaded; the thread refuses a different suite. */
  fingerprint: z.string().length(64),
  index: z.number().int().nonnegative(),
  name: z.string(),
  /** Seconds, when the case sets no timeout (already resolved: flag, then suite, then 120). */
  defaultTimeout: z.number().nonnegative(),
  attempt: z.number().int().positive(),
  /** Forward streamed events to the main thread (only when a hook wants them). */
  forwardEvents: z.boolean(),
  logLevel: z.string(),
});
export type ThreadTask = z.infer<typeof ThreadTaskSchema>;

/** Worker thread -> main thread, on the task's port, while the case runs. */
export const ThreadMessageSchema = z.discriminatedUnion("kind", [
  /**
   * `threadId` identifies the thread to terminate; `sessionId` comes with `setup`; `deadline`
   * (epoch ms) with `run`. There is no `done` message: the task's reply is the end.
   */
  z.object({
    kind: z.literal("phase"),
    phase: z.enum(["setup", "run", "teardown"]),
    threadId: z.number().int(),
    sessionId: z.string().optional(),
    deadline: z.number().optional(),
  }),
  /** What the case has committed so far (evidence, verdicts, errors), so a terminated thread loses nothing already known. */
  z.object({ kind: z.literal("commit"), commit: CaseCommitSchema }),
  z.object({ kind: z.literal("event"), event: z.record(z.string(), z.unknown()) }),
]);
export type ThreadMessage = z.infer<typeof ThreadMessageSchema>;

/** Main thread -> worker thread, on the task's port. */
export const ThreadControlSchema = z.object({ kind: z.literal("cancel") });
export type ThreadControl = z.infer<typeof ThreadControlSchema>;

/** What a thread's task resolves to: a result, or a failure to even start the case. */
export const ThreadReplySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("result"), result: CaseResultDataSchema }),
  z.object({ kind: z.literal("error"), error: ErrorInfoSchema }),
]);
export type ThreadReply = z.infer<typeof ThreadReplySchema>;
