import type { Broker } from "../../shared/broker/setup.ts";
import { isAlreadyTaken } from "../../shared/broker/api-codes.ts";
import { CASES_STREAM, caseSubjects, runKeys } from "../../shared/broker/subjects.ts";
import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";
import {
  CancelSchema,
  NATS_PROTOCOL,
  RunManifestSchema,
  RunStateSchema,
  tryParseJson,
  type CancelRecord,
  type RunManifest,
  type RunRecordPhase,
  type RunStateRecord,
} from "../../shared/wire/nats.ts";
import { versionMismatch } from "../../shared/wire/protocol.ts";

/**
 * A run's records in the runs KV bucket, read and written: the manifest (what the run is), the
 * state (its phase, for workers and `status`) and the cancel key (the first writer wins). Every
 * process that looks at a run by id (the coordinator, `resume`, `cancel`, `status`) goes through here.
 */

/** Reads and validates a run's manifest; a missing run is a RUN_NOT_FOUND error. */
export async function readManifest(broker: Broker, runId: string): Promise<RunManifest> {
  const entry = await broker.kv.get(runKeys.manifest(runId));
  if (!entry || entry.operation !== "PUT") throw new EvalfleetError(ErrorCode.RunNotFound, `no run '${runId}' on this NATS server`, { runId });
  const raw = tryParseJson(entry.string());
  const parsed = RunManifestSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const mismatch = versionMismatch(raw, { ours: NATS_PROTOCOL, what: `run ${runId}`, who: "coordinator" });
  if (mismatch !== null) throw new EvalfleetError(ErrorCode.WireInvalid, `${mismatch}: it was started by another evalfleet version; use that version to resume, cancel or read it`, { runId });
  throw new EvalfleetError(ErrorCode.WireInvalid, `run ${runId}: malformed manifest: ${parsed.error.issues[0]?.message}`);
}

/** Reads a run's state record, or null (none yet, or unreadable). */
export async function readRunState(broker: Broker, runId: string): Promise<RunStateRecord | null> {
  const entry = await broker.kv.get(runKeys.state(runId));
  if (!entry || entry.operation !== "PUT") return null;
  const parsed = RunStateSchema.safeParse(tryParseJson(entry.string()));
  return parsed.success ? parsed.data : null;
}

/** Writes a run's state record: its phase, and how many cases it selected. */
export async function putRunState(broker: Broker, runId: string, phase: RunRecordPhase, published: number, etaSeconds: number | null = null): Promise<void> {
  const record: RunStateRecord = { v: NATS_PROTOCOL, phase, published, updatedAt: new Date().toISOString(), ...(etaSeconds === null ? {} : { etaSeconds: Math.round(etaSeconds) }) };
  await broker.kv.put(runKeys.state(runId), JSON.stringify(record));
}

/** Why a run was cancelled, from its cancel record's text: `cancelled by <who>: <reason>`, or `cancelled` when unreadable. */
export function cancelReasonOf(text: string): string {
  const c = CancelSchema.safeParse(tryParseJson(text));
  return c.success ? `cancelled by ${c.data.by}: ${c.data.reason}` : "cancelled";
}

/** The reason a run was cancelled (see {@link cancelReasonOf}), or null when nobody has cancelled it. */
export async function readCancel(broker: Broker, runId: string): Promise<string | null> {
  const entry = await broker.kv.get(runKeys.cancel(runId));
  return entry && entry.operation === "PUT" ? cancelReasonOf(entry.string()) : null;
}

/**
 * Requests a cancel (the first writer wins) and purges the run's queued cases. The coordinator
 * of the run, or a later `resume`, finalises the report. Returns false when it was already cancelled.
 */
export async function requestCancel(broker: Broker, runId: string, by: string, reason: string): Promise<boolean> {
  const record: CancelRecord = { v: NATS_PROTOCOL, at: new Date().toISOString(), by, reason };
  let created = true;
  try {
    await broker.kv.create(runKeys.cancel(runId), JSON.stringify(record));
  } catch (err) {
    if (!isAlreadyTaken(err)) throw err;
    created = false;
  }
  await broker.jsm.streams.purge(CASES_STREAM, { filter: caseSubjects(runId) }).catch(() => undefined);
  return created;
}
