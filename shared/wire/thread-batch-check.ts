// runs in: both

/**
 * The plain check of a thread batch (shared/wire/thread.ts `parseThreadBatch`): a batch of the
 * common shape (no per-case extras: no cache, cassette, replay, tracing, evaluation functions) is
 * checked in plain code, and only the rest goes through the zod schema, which then words the
 * error. A batch crosses to a thread for every few cases, and zod mini (the schema is built as a
 * start-up schema) has no compiled fast path: its parse was about 5% of a thread's time per case
 * on trivial cases. The check never accepts what the schema refuses (test/shared/wire/
 * thread-batch-check.test.ts holds it to the schema over generated batches); it may send a valid
 * batch to the schema.
 */

/** The keys of a case of the common shape, every one required. */
const CASE_KEYS = ["taskId", "index", "name", "defaultTimeout", "setupTimeout", "teardownTimeout", "maxOutputBytes", "attempt", "forwardEvents"] as const;
/** The batch's keys besides `suiteModule` (optional), every one required. */
const BATCH_KEYS = ["protocol", "suitePath", "fingerprint", "logLevel", "keepResponses", "cases"] as const;
const LOADERS: ReadonlySet<unknown> = new Set(["node", "bundle", "tsx"]);

const nonNegativeInt = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;
const positiveInt = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) > 0;
const nonNegative = (v: unknown): boolean => typeof v === "number" && Number.isFinite(v) && v >= 0;
const nonEmptyString = (v: unknown): boolean => typeof v === "string" && v.length > 0;

function isRecord(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Exactly these own keys (and at most the optional ones besides). */
function hasOnlyKeys(v: Record<string, unknown>, required: readonly string[], optional: readonly string[] = []): boolean {
  const keys = Object.keys(v);
  let optionalSeen = 0;
  for (const k of optional) if (k in v) optionalSeen++;
  if (keys.length !== required.length + optionalSeen) return false;
  for (const k of required) if (!Object.hasOwn(v, k)) return false;
  return true;
}

function plainCase(c: unknown): boolean {
  if (!isRecord(c) || !hasOnlyKeys(c, CASE_KEYS)) return false;
  return (
    nonNegativeInt(c.taskId) &&
    nonNegativeInt(c.index) &&
    typeof c.name === "string" &&
    nonNegative(c.defaultTimeout) &&
    nonNegative(c.setupTimeout) &&
    nonNegative(c.teardownTimeout) &&
    positiveInt(c.maxOutputBytes) &&
    positiveInt(c.attempt) &&
    typeof c.forwardEvents === "boolean"
  );
}

function plainSuiteModule(m: unknown): boolean {
  if (m === undefined) return true;
  if (!isRecord(m) || !hasOnlyKeys(m, ["url", "loader"], ["reason"])) return false;
  return nonEmptyString(m.url) && LOADERS.has(m.loader) && (m.reason === undefined || typeof m.reason === "string");
}

/**
 * Whether `raw` is plainly a valid batch of protocol `protocol`: true only for what the schema
 * accepts unchanged (no key it would strip, no default it would fill in).
 */
export function plainlyValidBatch(raw: unknown, protocol: number): boolean {
  if (!isRecord(raw) || !hasOnlyKeys(raw, BATCH_KEYS, ["suiteModule"])) return false;
  if (raw.protocol !== protocol || !nonEmptyString(raw.suitePath) || typeof raw.fingerprint !== "string" || raw.fingerprint.length !== 64) return false;
  if (typeof raw.logLevel !== "string" || typeof raw.keepResponses !== "boolean" || !plainSuiteModule(raw.suiteModule)) return false;
  const cases = raw.cases;
  if (!Array.isArray(cases) || cases.length === 0) return false;
  for (const c of cases) if (!plainCase(c)) return false;
  return true;
}
