// runs in: both
import { ERROR_KINDS } from "../result/error-kind.ts";

/**
 * The plain check of the two messages a pool thread sends for every case (shared/wire/thread.ts
 * `ThreadMessageSchema`): a `phase`, and a `reply` whose result has the common shape (no
 * reliability details, expectations, repeats, usage, metadata, transcript or cache counts: the
 * features that are off; phase seconds may be there, as on every result a worker publishes). They are checked in plain code and every other message
 * through the zod schema. The schema's parse of a reply (a fresh, structured-cloned object) cost
 * about 9 µs on the main thread, which handles every case of the pool (measured: 4.9 µs a message
 * on average over a run of 30,000 trivial cases). The check never accepts what the schema refuses
 * or would change (test/shared/wire/thread-message-check.test.ts holds it to the schema over
 * generated messages); it may send a valid message to the schema.
 */

const PHASES: ReadonlySet<unknown> = new Set(["setup", "run", "teardown"]);
const KINDS: ReadonlySet<unknown> = new Set(ERROR_KINDS);

/** Every key of a result that the plain check knows; any other key goes to the schema (which would strip it). */
const RESULT_KEYS: ReadonlySet<string> = new Set([
  "name", "tags", "agentId", "teamId", "sessionId", "durationSeconds", "judgePassed", "judgeReason", "judgeScore", "reliabilityPassed",
  "output", "toolsCalled", "timedOut", "skipped", "error", "errorKind", "attempts", "worker", "response", "score", "index",
  "reliability", "expectations", "repeats", "usage", "runStatus", "caseId", "metadata", "phaseSeconds", "transcript", "modelCache", "casePassRate", "adaptive",
]);
/** The keys the schema requires (the rest are nullish). */
const REQUIRED_RESULT_KEYS = [
  "name", "tags", "agentId", "teamId", "sessionId", "durationSeconds", "judgePassed", "judgeReason", "judgeScore", "reliabilityPassed",
  "output", "toolsCalled", "timedOut", "skipped", "error", "attempts", "worker", "response", "score", "index", "reliability",
] as const;
/** Nullish fields whose value, in the common shape, is absent or null (`reliability`, merely nullable, must be null). */
const ABSENT_IN_COMMON = ["expectations", "repeats", "usage", "metadata", "transcript", "modelCache", "adaptive"] as const;

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const int = (v: unknown): boolean => Number.isSafeInteger(v);
const nonNegativeInt = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;
const stringOrNull = (v: unknown): boolean => v === null || typeof v === "string";
const nullish = (v: unknown): boolean => v === null || v === undefined;

function isRecord(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function strings(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (const s of v) if (typeof s !== "string") return false;
  return true;
}

function onlyKeys(v: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const k of Object.keys(v)) if (!allowed.has(k)) return false;
  return true;
}

const SCORE_KEYS: ReadonlySet<string> = new Set(["value", "passed", "reason", "detail"]);

function plainScore(s: unknown): boolean {
  if (s === null) return true;
  if (!isRecord(s) || !onlyKeys(s, SCORE_KEYS)) return false;
  if (!finite(s.value) || s.value < 0 || s.value > 1 || typeof s.passed !== "boolean") return false;
  if (!(s.reason === undefined || stringOrNull(s.reason))) return false;
  return s.detail === undefined || s.detail === null || (isRecord(s.detail) && Object.getPrototypeOf(s.detail) === Object.prototype);
}

const PHASE_SECONDS_KEYS: ReadonlySet<string> = new Set(["setup", "run", "checks", "teardown"]);
const seconds = (v: unknown): boolean => finite(v) && v >= 0;

/** Absent, or the seconds of every phase (a worker's result on NATS has them). */
function plainPhaseSeconds(p: unknown): boolean {
  if (nullish(p)) return true;
  if (!isRecord(p) || !onlyKeys(p, PHASE_SECONDS_KEYS)) return false;
  return seconds(p.setup) && seconds(p.run) && seconds(p.checks) && seconds(p.teardown);
}

/** Whether `r` is plainly a valid result of the common shape, which the schema would return unchanged. */
export function plainlyValidResult(r: unknown): boolean {
  if (!isRecord(r) || !onlyKeys(r, RESULT_KEYS)) return false;
  for (const k of REQUIRED_RESULT_KEYS) if (!Object.hasOwn(r, k)) return false;
  for (const k of ABSENT_IN_COMMON) if (!nullish(r[k])) return false;
  return (
    r.reliability === null &&
    typeof r.name === "string" &&
    strings(r.tags) &&
    stringOrNull(r.agentId) &&
    stringOrNull(r.teamId) &&
    typeof r.sessionId === "string" &&
    finite(r.durationSeconds) &&
    (r.judgePassed === null || typeof r.judgePassed === "boolean") &&
    stringOrNull(r.judgeReason) &&
    (r.judgeScore === null || finite(r.judgeScore)) &&
    (r.reliabilityPassed === null || typeof r.reliabilityPassed === "boolean") &&
    stringOrNull(r.output) &&
    strings(r.toolsCalled) &&
    typeof r.timedOut === "boolean" &&
    typeof r.skipped === "boolean" &&
    stringOrNull(r.error) &&
    (nullish(r.errorKind) || KINDS.has(r.errorKind)) &&
    nonNegativeInt(r.attempts) &&
    stringOrNull(r.worker) &&
    plainScore(r.score) &&
    plainPhaseSeconds(r.phaseSeconds) &&
    nonNegativeInt(r.index) &&
    (nullish(r.runStatus) || typeof r.runStatus === "string") &&
    (nullish(r.caseId) || typeof r.caseId === "string") &&
    (nullish(r.casePassRate) || (finite(r.casePassRate) && r.casePassRate >= 0 && r.casePassRate <= 1))
  );
}

const PHASE_KEYS: ReadonlySet<string> = new Set(["kind", "taskId", "phase", "threadId", "sessionId", "deadline"]);
const REPLY_KEYS: ReadonlySet<string> = new Set(["kind", "taskId", "reply"]);
const RESULT_REPLY_KEYS: ReadonlySet<string> = new Set(["kind", "result"]);

/**
 * Whether `m` is plainly a valid `phase` message, or a `reply` with a result of the common shape
 * (and no resources or warnings): true only for what the schema accepts unchanged.
 */
export function plainlyValidThreadMessage(m: unknown): boolean {
  if (!isRecord(m)) return false;
  if (m.kind === "phase") {
    return (
      onlyKeys(m, PHASE_KEYS) &&
      int(m.taskId) &&
      PHASES.has(m.phase) &&
      int(m.threadId) &&
      (m.sessionId === undefined || typeof m.sessionId === "string") &&
      (m.deadline === undefined || finite(m.deadline))
    );
  }
  if (m.kind !== "reply" || !onlyKeys(m, REPLY_KEYS) || !int(m.taskId)) return false;
  const reply = m.reply;
  return isRecord(reply) && reply.kind === "result" && onlyKeys(reply, RESULT_REPLY_KEYS) && plainlyValidResult(reply.result);
}
