// runs in: main
import { CASE_TOKEN_PATTERN } from "./case-token.ts";
import { MAX_REPEAT } from "../trials/fold-repeats.ts";

/**
 * The plain check of a case message (shared/wire/nats.ts `CaseMessageSchema`): every case a
 * worker runs arrives as one, and the schema's parse (zod, strict, with two regular expressions)
 * was the largest cost of checking it (about 5 us a case on a worker's main thread, which handles
 * every case of the worker). A message of the common shape (every field present, `trial`
 * included) is checked in plain code; anything else goes to the schema, which then words the
 * error. The check never accepts what the schema refuses or would change
 * (test/shared/wire/case-message-check.test.ts holds it to the schema over generated messages).
 */

/** Every key of a case message; `traceparent` is the optional one. */
const REQUIRED_KEYS = ["v", "runId", "index", "trial", "name", "fingerprint", "token"] as const;
/** As CaseMessageSchema's `traceparent`. */
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Whether `m` (a parsed message) is plainly a valid case message of protocol `version`, which the schema would return unchanged. */
export function plainlyValidCaseMessage(m: unknown, version: number): boolean {
  if (m === null || typeof m !== "object" || Array.isArray(m) || Object.getPrototypeOf(m) !== Object.prototype) return false;
  const r = m as Record<string, unknown>;
  const keys = Object.keys(r);
  const traced = Object.hasOwn(r, "traceparent");
  if (keys.length !== REQUIRED_KEYS.length + (traced ? 1 : 0)) return false;
  for (const k of REQUIRED_KEYS) if (!Object.hasOwn(r, k)) return false;
  const { v, runId, index, trial, name, fingerprint, token } = r;
  return (
    v === version &&
    typeof runId === "string" &&
    Number.isSafeInteger(index) &&
    (index as number) >= 0 &&
    Number.isSafeInteger(trial) &&
    (trial as number) >= 1 &&
    (trial as number) <= MAX_REPEAT &&
    typeof name === "string" &&
    typeof fingerprint === "string" &&
    fingerprint.length === 64 &&
    typeof token === "string" &&
    CASE_TOKEN_PATTERN.test(token) &&
    (!traced || (typeof r.traceparent === "string" && TRACEPARENT.test(r.traceparent)))
  );
}
