// runs in: main
import { CASE_TOKEN_PATTERN } from "./case-token.ts";
import { NATS_PROTOCOL, type ResultMessage } from "./nats.ts";
import { plainlyValidResult } from "./thread-message-check.ts";
import { MAX_REPEAT } from "../trials/fold-repeats.ts";

/**
 * The plain check of a result message of the common shape (shared/wire/nats.ts
 * `ResultMessageSchema`: every envelope field present, the trial given, a result of the common
 * shape of thread-message-check.ts), for the coordinator, which parses every result of a run: the
 * schema's parse of one cost about 2.5 µs of the ~23 µs a result cost it. Every other message goes
 * through the schema. The check never accepts what the schema refuses or would change
 * (test/shared/wire/result-message-check.test.ts holds it to the schema over generated messages);
 * it may send a valid message to the schema.
 */

const MESSAGE_KEYS: ReadonlySet<string> = new Set(["v", "runId", "index", "trial", "name", "workerId", "token", "result"]);

/**
 * `m` (parsed JSON) as the schema returns it (its read-only lists frozen) when it is plainly a
 * valid result message of the common shape; null when the schema must say.
 */
export function plainResultMessage(m: unknown): ResultMessage | null {
  if (!plainlyValidResultMessage(m)) return null;
  // The schema's lists are read-only, and frozen: the collector shares frozen lists between results.
  Object.freeze(m.result.tags);
  Object.freeze(m.result.toolsCalled);
  return m;
}

/** Whether `m` (parsed JSON) is plainly a valid result message of the common shape, which the schema would return unchanged but for freezing its lists. */
export function plainlyValidResultMessage(m: unknown): m is ResultMessage {
  if (m === null || typeof m !== "object" || Array.isArray(m) || Object.getPrototypeOf(m) !== Object.prototype) return false;
  const r = m as Record<string, unknown>;
  let keys = 0;
  for (const k in r) {
    if (!MESSAGE_KEYS.has(k)) return false;
    keys++;
  }
  return (
    keys === MESSAGE_KEYS.size &&
    r.v === NATS_PROTOCOL &&
    typeof r.runId === "string" &&
    Number.isSafeInteger(r.index) &&
    (r.index as number) >= 0 &&
    Number.isSafeInteger(r.trial) &&
    (r.trial as number) >= 1 &&
    (r.trial as number) <= MAX_REPEAT &&
    typeof r.name === "string" &&
    typeof r.workerId === "string" &&
    typeof r.token === "string" &&
    CASE_TOKEN_PATTERN.test(r.token) &&
    plainlyValidResult(r.result)
  );
}
