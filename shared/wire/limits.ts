// runs in: both
import * as z from "zod";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * The limiter's messages: between a process's worker threads and its main thread (on the pool's
 * limiter BroadcastChannel), and between workers and the coordinator in distributed mode (NATS
 * request/reply, subjects in shared/broker/subjects.ts). Receivers validate before they trust.
 */

/** Protocol version of the limiter messages. */
export const LIMITS_PROTOCOL = 1;

/** What the provider said about a request (shared/providers/limiter-core.ts `LimitFeedback`). */
export const LimitFeedbackSchema = lazySchema(() => z.object({
  status: z.number().int().nullable().optional(),
  retryAfterMs: z.number().nonnegative().nullable().optional(),
  limitRequests: z.number().nonnegative().nullable().optional(),
  remainingRequests: z.number().nonnegative().nullable().optional(),
  resetRequestsMs: z.number().nonnegative().nullable().optional(),
  limitTokens: z.number().nonnegative().nullable().optional(),
  remainingTokens: z.number().nonnegative().nullable().optional(),
  resetTokensMs: z.number().nonnegative().nullable().optional(),
  tokens: z.number().nonnegative().nullable().optional(),
}));

const Key = lazySchema(() => z.string().min(1).max(200));

/** A worker thread -> its main thread. */
export const ThreadLimitRequestSchema = lazySchema(() => z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("acquire"), threadId: z.number().int(), reqId: z.number().int(), key: Key, tokens: z.number().nonnegative() }),
  z.object({ kind: z.literal("cancel"), threadId: z.number().int(), reqId: z.number().int() }),
  z.object({ kind: z.literal("release"), threadId: z.number().int(), reqId: z.number().int(), feedback: LimitFeedbackSchema }),
  z.object({ kind: z.literal("observe"), threadId: z.number().int(), key: Key, feedback: LimitFeedbackSchema }),
]));
export type ThreadLimitRequest = z.infer<typeof ThreadLimitRequestSchema>;

/** The main thread -> a worker thread: its request `reqId` may go, or failed (`error`, one line). */
export const ThreadLimitGrantSchema = lazySchema(() => z.object({
  kind: z.literal("grant"),
  threadId: z.number().int(),
  reqId: z.number().int(),
  error: z.string().optional(),
}));
export type ThreadLimitGrant = z.infer<typeof ThreadLimitGrantSchema>;

/** One provider key in `<run>.limits` (shared/providers/limiter-core.ts `KeySnapshot`). */
export const KeySnapshotSchema = lazySchema(() => z.object({
  key: z.string(),
  configured: z.object({ rpm: z.number().nullable(), tpm: z.number().nullable(), concurrency: z.number().nullable() }),
  learnt: z.object({ requests: z.number().nullable(), tokens: z.number().nullable(), windowSeconds: z.number().nullable() }),
  rpm: z.number().nullable(),
  tpm: z.number().nullable(),
  inFlight: z.number(),
  queued: z.number(),
  admitted: z.number(),
  rateLimited: z.number(),
  failed: z.number(),
  tokens: z.number(),
  pausedUntil: z.number().nullable(),
}));

/** `<run>.limits`: the coordinator's limiter, per provider key. */
export const LimitsRecordSchema = lazySchema(() => z.object({ updatedAt: z.string(), keys: z.array(KeySnapshotSchema) }));
export type LimitsRecord = z.infer<typeof LimitsRecordSchema>;

/** A worker -> the coordinator (request/reply): a permit of `key`; the reply comes when it is granted. */
export const PermitRequestSchema = lazySchema(() => z.object({
  v: z.literal(LIMITS_PROTOCOL),
  /** Unique per request of this worker: a retried request with the same id gets the same permit. */
  id: z.string().min(1).max(100),
  workerId: z.string().min(1).max(200),
  key: Key,
  tokens: z.number().nonnegative(),
}));
export type PermitRequest = z.infer<typeof PermitRequestSchema>;

/** The coordinator's reply: granted (`permit` is what the release names), or refused with why. */
export const PermitReplySchema = lazySchema(() => z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), permit: z.string().min(1) }),
  z.object({ ok: z.literal(false), error: z.string() }),
]));
export type PermitReply = z.infer<typeof PermitReplySchema>;

/** A worker -> the coordinator (publish): a permit ended, with what the provider said; or a cancel of a request still waiting (`permit` null). */
export const PermitReleaseSchema = lazySchema(() => z.object({
  v: z.literal(LIMITS_PROTOCOL),
  workerId: z.string().min(1).max(200),
  /** The granted permit, or null for a request given up before its grant (`id`). */
  permit: z.string().min(1).nullable(),
  id: z.string().min(1).max(100),
  key: Key,
  feedback: LimitFeedbackSchema,
}));
export type PermitRelease = z.infer<typeof PermitReleaseSchema>;
