import type { KV } from "@nats-io/kv";
import { isAlreadyTaken } from "../../shared/broker/api-codes.ts";
import { RUN_KEYS_BUCKET } from "../../shared/broker/subjects.ts";
import { EvalfleetError, ErrorCode, errorMessage } from "../../shared/errors.ts";
import { RUN_KEY_BYTES, RunTokens, newRunKey } from "../../shared/wire/case-token.ts";
import { NATS_PROTOCOL, RunKeyRecordSchema, tryParseJson, type RunKeyRecord } from "../../shared/wire/nats.ts";

/**
 * A run's key in the `EVALFLEET_RUN_KEYS` bucket, which only a coordinator's NATS user can read:
 * written once when the run is created, read again by `coordinator resume` and `coordinator
 * status`. Every delivery token of the run is derived from it (shared/wire/case-token.ts), so a
 * coordinator that takes over a run accepts the results of cases published before the crash.
 */

/**
 * The key of a new run: created once (create-only). When the key exists already (two
 * coordinators creating the same run id at once, or a creation that died before the manifest),
 * the stored key is the run's, and it is used: every coordinator of a run derives the same tokens.
 */
export async function establishRunKey(keys: KV, runId: string): Promise<RunTokens> {
  const record: RunKeyRecord = { v: NATS_PROTOCOL, runId, key: newRunKey().toString("base64"), createdAt: new Date().toISOString() };
  try {
    await keys.create(runId, JSON.stringify(record));
    return new RunTokens(Buffer.from(record.key, "base64"), runId);
  } catch (err) {
    if (!isAlreadyTaken(err)) throw keyError(runId, "store", err);
  }
  return readRunKey(keys, runId);
}

/** The key of an existing run; a missing or unreadable key is a RUN_NOT_FOUND error saying so. */
export async function readRunKey(keys: KV, runId: string): Promise<RunTokens> {
  let text: string | null = null;
  try {
    const entry = await keys.get(runId);
    text = entry && entry.operation === "PUT" ? entry.string() : null;
  } catch (err) {
    throw keyError(runId, "read", err);
  }
  const parsed = text === null ? null : RunKeyRecordSchema.safeParse(tryParseJson(text));
  const key = parsed?.success && parsed.data.runId === runId ? Buffer.from(parsed.data.key, "base64") : null;
  if (!key || key.length !== RUN_KEY_BYTES) {
    throw new EvalfleetError(
      ErrorCode.RunNotFound,
      `run ${runId} has ${text === null ? "no key" : "an unreadable key"} in the ${RUN_KEYS_BUCKET} bucket, so none of its results can be verified (the key expired with the run's records, or was deleted): start a new run`,
      { runId },
    );
  }
  return new RunTokens(key, runId);
}

function keyError(runId: string, what: "store" | "read", err: unknown): EvalfleetError {
  const text = errorMessage(err);
  const hint = /permissions violation/i.test(text) ? ` (a coordinator's NATS user needs $KV.${RUN_KEYS_BUCKET}.> and $JS.API.>: see deploy/nats/evalfleet-permissions.conf)` : "";
  return new EvalfleetError(ErrorCode.BrokerConfig, `cannot ${what} the key of run ${runId} in the ${RUN_KEYS_BUCKET} bucket: ${text}${hint}`, { runId });
}
