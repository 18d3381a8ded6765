// runs in: main
import * as z from "zod";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * The start gate of a run with a budget: before a case starts, its worker asks the run's coordinator
 * whether it may (NATS request/reply on `evalfleet.<run>.starts`, shared/broker/subjects.ts). The
 * coordinator says no once it has counted the budget spent, or the run is stopping for any other
 * reason, so no case starts after that: the overshoot is at most what the cases then in flight
 * spend, however slowly the run's cancel reaches the workers. Receivers validate before they trust.
 */

/** Protocol version of the start gate's messages. */
export const START_GATE_PROTOCOL = 1;

/** A worker -> the coordinator: may the case at `index` start? */
export const StartRequestSchema = lazySchema(() => z.object({
  v: z.literal(START_GATE_PROTOCOL),
  workerId: z.string().min(1).max(200),
  index: z.number().int().nonnegative(),
}));
export type StartRequest = z.infer<typeof StartRequestSchema>;

/** The coordinator's answer: the case may start, or not, with why (`budget exhausted`, a cancel's reason). */
export const StartReplySchema = lazySchema(() => z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), reason: z.string() }),
]));
export type StartReply = z.infer<typeof StartReplySchema>;
