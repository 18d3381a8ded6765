// runs in: both
import * as z from "zod";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * Why a case failed, by cause: the JSON report's `error_kind`, what `--retries` retries and what
 * `--infra-errors-incomplete` reads. Pure; no I/O.
 *
 * - `infra`: the infrastructure failed the case, not the agent: a model provider's 429 or 5xx
 *   after the client's own retries, a connection error, a judge that returned no result, a worker
 *   thread or process lost under the case. Running it again may pass; `--retries N` does.
 * - `agent`: the agent (or the case's own code: its setup, teardown, dataset row) failed.
 * - `check`: the run completed and a check failed (or gave no verdict). Never retried.
 * - `timeout`: the case ran past its timeout.
 * - `null`: the case passed, or was skipped.
 */

/** The kinds of a failure, in the JSON report's spelling. */
export const ERROR_KINDS = ["infra", "agent", "check", "timeout"] as const;
/** Why a case failed ({@link ERROR_KINDS}). */
export const ErrorKindSchema = lazySchema(() => z.enum(ERROR_KINDS));
/** Why a case failed. */
export type ErrorKind = z.infer<typeof ErrorKindSchema>;

/** The kinds an error part can have (a timeout is a fact of the result, `timedOut`, not of a part). */
export type ErrorPartKind = Exclude<ErrorKind, "timeout">;

/**
 * Which cause wins when one run had errors of several kinds: any failure of the agent or of a check
 * is a real failure that running again would not cure, so it hides an infrastructure failure beside
 * it (a case is retried only when every error it had was the infrastructure's).
 */
const PART_RANK: Readonly<Record<ErrorPartKind, number>> = { infra: 0, check: 1, agent: 2 };

/** The kind of a run's errors so far and one more error part: the one that wins ({@link PART_RANK}). */
export function mergeErrorKind(current: ErrorPartKind | null | undefined, next: ErrorPartKind): ErrorPartKind {
  if (!current) return next;
  return PART_RANK[next] > PART_RANK[current] ? next : current;
}

/** HTTP statuses that say the provider (not the request) failed: rate limited, timed out, or broken. */
export function isInfraStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Error codes of a connection that failed before any answer (Node's, undici's). */
const CONNECTION_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

/** Error names of the model SDKs for a request that never got an answer. */
const CONNECTION_NAMES: ReadonlySet<string> = new Set(["APIConnectionError", "APIConnectionTimeoutError"]);

/** evalfleet's error codes that are the infrastructure's (a thread died under the case, the broker or the fleet's cassette bucket out of reach). */
const INFRA_CODES: ReadonlySet<string> = new Set(["THREAD_CRASHED", "BROKER_UNREACHABLE", "CASSETTE_STORE"]);

/** How deep {@link isInfraError} follows `cause` chains (a cycle must not hang it). */
const MAX_CAUSE_DEPTH = 5;

/**
 * Whether a thrown value is the infrastructure's failure: a model call that failed with a 408, 429
 * or 5xx (evalfleet's `ModelCallError`, the OpenAI SDK's `APIError.status`, the AI SDK's
 * `APICallError.statusCode`), a connection that failed before any answer, a rate limiter that gave
 * up, or a thread lost under the case. Follows `cause` (and an AI SDK `RetryError`'s `lastError`).
 * A 4xx other than 408 and 429 (a bad key, a bad request) is not: it fails the same way every time.
 */
export function isInfraError(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== "object" || depth > MAX_CAUSE_DEPTH) return false;
  const e = err as { name?: unknown; code?: unknown; status?: unknown; statusCode?: unknown; details?: { status?: unknown }; cause?: unknown; lastError?: unknown; infra?: unknown };
  if (e.infra === true) return true;
  const code = typeof e.code === "string" ? e.code : null;
  if (code === "MODEL_CALL_FAILED") {
    const status = typeof e.status === "number" ? e.status : typeof e.details?.status === "number" ? e.details.status : null;
    // No status: the server never answered (refused, reset, timed out).
    return status === null || isInfraStatus(status);
  }
  if (code === "PROVIDER_LIMIT" || (code !== null && INFRA_CODES.has(code))) return true;
  if (code !== null && CONNECTION_CODES.has(code)) return true;
  for (const s of [e.status, e.statusCode]) if (typeof s === "number" && s >= 100 && s < 600) return isInfraStatus(s);
  // The AI SDK's RetryError wraps the last failure: that one decides.
  if (e.name === "AI_RetryError") return e.lastError === undefined || isInfraError(e.lastError, depth + 1);
  if (typeof e.name === "string" && CONNECTION_NAMES.has(e.name)) return true;
  if (e.name === "TypeError" && err instanceof Error && err.message === "fetch failed") return true;
  return isInfraError(e.cause, depth + 1);
}

/**
 * The kind of an error part recorded while a case ran, from the thrown value: `infra` when
 * {@link isInfraError} says so, else `fallback` (the caller knows whose code threw).
 */
export function errorPartKind(err: unknown, fallback: ErrorPartKind): ErrorPartKind {
  return isInfraError(err) ? "infra" : fallback;
}

/** What {@link classifyCase} reads of a result. */
export interface ClassifiedFields {
  passed: boolean;
  skipped: boolean;
  timedOut: boolean;
  /** The kind of the errors recorded while the case ran (merged, {@link mergeErrorKind}); null without one or from an older evalfleet. */
  errorKind?: ErrorKind | null;
  /** The joined error text. */
  error: string | null;
}

/**
 * Error texts that are the infrastructure's, for results that carry no kind (an older worker):
 * a judge with no result, a thread or worker lost, a model call refused with 429/5xx.
 */
const INFRA_TEXT = /^(judge: returned no result|expected_output: judge returned no result|lost: |worker: |THREAD_CRASHED)/;

/**
 * The final kind of a case: `null` when it passed or was skipped; `timeout` when it ran past its
 * timeout; else the kind its errors were recorded with; a failure with no error at all failed a
 * check (or no check gave a verdict). A result without a recorded kind (an older worker) is read
 * from its error text: an infrastructure prefix gives `infra`, any other error `agent`.
 */
export function classifyCase(r: ClassifiedFields): ErrorKind | null {
  if (r.passed || r.skipped) return null;
  if (r.timedOut) return "timeout";
  if (r.errorKind) return r.errorKind;
  if (!r.error) return "check";
  const parts = r.error.split("; ");
  return parts.every((p) => INFRA_TEXT.test(p)) ? "infra" : "agent";
}

/** The first wait before a retry of an infrastructure failure, in ms; it doubles each retry. */
export const INFRA_RETRY_BASE_MS = 1000;
/** The longest wait before a retry of an infrastructure failure, in ms. */
export const INFRA_RETRY_CAP_MS = 30_000;

/**
 * The wait before retry number `retry` (1-based) of a case whose failure was `infra`, in ms:
 * 1 s doubling, capped at 30 s; `null` when it would end past `deadline` (epoch ms; the case's),
 * so the case's last result stands. `now` is epoch ms.
 */
export function infraRetryDelay(retry: number, now: number, deadline: number | null): number | null {
  const delay = Math.min(INFRA_RETRY_CAP_MS, INFRA_RETRY_BASE_MS * 2 ** Math.max(0, retry - 1));
  if (deadline !== null && now + delay >= deadline) return null;
  return delay;
}
