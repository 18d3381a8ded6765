import { eventBatchSubject, indexOfSubject } from "../../shared/broker/subjects.ts";
import { EventBatchSchema, EventMessageSchema, NATS_PROTOCOL, tryParseJson, type BatchedEvent } from "../../shared/wire/nats.ts";
import { versionMismatch } from "../../shared/wire/protocol.ts";

/**
 * Reading the workers' live events: a batch (`events.batch`, one worker's events of one tick, sent
 * to a coordinator whose manifest says `eventBatches`) or a single event (`events.<index>`, from a
 * worker of an evalfleet before batches), each read as the same events one by one, after the same
 * checks: the protocol version, the run, and for a single event that its subject names its case.
 * Redaction is the worker's, done before it sent them. Pure; no I/O.
 */

/** What {@link readLiveEvents} made of a message. */
export type LiveEvents =
  | { kind: "ok"; workerId: string; events: readonly BatchedEvent[] }
  /** Of another protocol version: `why` says both. */
  | { kind: "version"; why: string }
  /** Not an event message of this run (malformed, another run's, on the subject of another case). */
  | { kind: "drop" };

/** One decoder for every message. */
const utf8 = new TextDecoder();

/** Reads one message of a run's event subjects; never throws. */
export function readLiveEvents(data: Uint8Array, subject: string, runId: string, batchSubject = eventBatchSubject(runId)): LiveEvents {
  const raw = tryParseJson(utf8.decode(data));
  const batch = subject === batchSubject;
  const parsed = batch ? EventBatchSchema.safeParse(raw) : EventMessageSchema.safeParse(raw);
  if (!parsed.success) {
    const why = versionMismatch(raw, { ours: NATS_PROTOCOL, what: batch ? "event batch" : "event message", who: "coordinator" });
    return why === null ? { kind: "drop" } : { kind: "version", why };
  }
  const m = parsed.data;
  if (m.runId !== runId) return { kind: "drop" };
  if ("events" in m) return { kind: "ok", workerId: m.workerId, events: m.events };
  if (indexOfSubject(subject) !== m.index) return { kind: "drop" };
  return { kind: "ok", workerId: m.workerId, events: [m] };
}
