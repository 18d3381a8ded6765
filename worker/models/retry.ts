import { ModelCallError } from "../../shared/errors.ts";

/**
 * Retries of model calls: which failures are worth another attempt (429, 5xx, 408, a dropped
 * connection), how long to wait (the server's Retry-After when it sends one, else exponential
 * backoff with jitter), and never past the case deadline or after the case's signal fired.
 */

/** How a client retries. Every field has a default. */
export interface RetryPolicy {
  /** Retries after the first attempt. Default 4 (five attempts in all). */
  maxRetries?: number;
  /** Backoff before the first retry, in milliseconds; doubles each retry. Default 500. */
  baseDelayMs?: number;
  /** Ceiling of the computed backoff, in milliseconds. Default 8000. */
  maxDelayMs?: number;
  /**
   * The longest Retry-After the client honours when there is no deadline, in milliseconds;
   * a server asking for more fails the call at once. Default 60000.
   */
  maxRetryAfterMs?: number;
}

/**
 * The defaults of {@link RetryPolicy}: a client compiles its policy from them once, where it reads
 * its options (openai-chat.ts); {@link withRetries} and {@link backoffDelay} take the compiled policy.
 */
export const DEFAULT_RETRY_POLICY: Required<RetryPolicy> = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 60_000 };

/** What a failed attempt looked like, as far as retrying is concerned. */
export interface AttemptFailure {
  /** HTTP status, or null when the server never answered (connection refused, reset). */
  status: number | null;
  /** Response headers, when there was a response. */
  headers?: { get(name: string): string | null } | Record<string, string | string[] | undefined> | null;
  /** Whether another attempt could succeed. */
  retryable: boolean;
  /** One line for people, already free of credentials. */
  message: string;
}

/** 408, 409 (a lock), 429 and every 5xx are transient; other statuses are the caller's mistake. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The wait a server asks for, in milliseconds: `retry-after-ms` (OpenAI's), then `retry-after`
 * (seconds, or an HTTP date). `undefined` when there is none or it is unreadable.
 */
export function parseRetryAfter(headers: AttemptFailure["headers"], now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const get = (name: string): string | undefined => {
    if (typeof (headers as { get?: unknown }).get === "function") return (headers as { get(n: string): string | null }).get(name) ?? undefined;
    const v = (headers as Record<string, string | string[] | undefined>)[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const ms = get("retry-after-ms");
  if (ms !== undefined && ms.trim() !== "" && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = get("retry-after");
  if (value === undefined || value.trim() === "") return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with "equal jitter": half the step is fixed, half random. `retry` counts from 0. */
export function backoffDelay(retry: number, policy: Pick<Required<RetryPolicy>, "baseDelayMs" | "maxDelayMs">, random: () => number = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return step / 2 + random() * (step / 2);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Options of {@link withRetries}: the compiled policy (every field set), and the call's own. */
export interface WithRetriesOptions extends Required<RetryPolicy> {
  signal: AbortSignal;
  /** Epoch milliseconds past which no wait may end. */
  deadline?: number;
  /** Turns a thrown value into an {@link AttemptFailure}; an abort is never retried. */
  classify: (err: unknown) => AttemptFailure;
  /** Told before each wait (for logs). */
  onRetry?: (info: { attempt: number; delayMs: number; failure: AttemptFailure }) => void;
  /** For tests of the jitter; default Math.random. */
  random?: () => number;
}

/**
 * Runs `attempt` until it succeeds, the failure is not retryable, the retries are spent, or the
 * next wait would end past the deadline. Throws {@link ModelCallError} (or the signal's reason
 * when the signal fired).
 */
export async function withRetries<T>(attempt: (n: number) => Promise<T>, options: WithRetriesOptions): Promise<T> {
  const { maxRetries, maxRetryAfterMs: maxRetryAfter } = options;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (options.signal.aborted) throw options.signal.reason;
      const failure = options.classify(err);
      const fail = (why: string): never => {
        throw new ModelCallError(`${failure.message}${why}`, { status: failure.status, attempts: n }, { retryable: failure.retryable });
      };
      if (!failure.retryable) fail(n > 1 ? ` (attempt ${n})` : "");
      if (n > maxRetries) fail(` (gave up after ${n} attempts)`);
      const asked = parseRetryAfter(failure.headers);
      const delayMs = asked ?? backoffDelay(n - 1, options, options.random);
      if (options.deadline !== undefined) {
        const left = options.deadline - Date.now();
        if (delayMs >= left) {
          fail(`; the next attempt would start in ${formatSeconds(delayMs)}${asked !== undefined ? " (Retry-After)" : ""}, past the case deadline ${formatSeconds(Math.max(0, left))} away (attempt ${n})`);
        }
      } else if (asked !== undefined && asked > maxRetryAfter) {
        fail(`; the server asks to retry after ${formatSeconds(asked)}, more than the ${formatSeconds(maxRetryAfter)} this client waits (attempt ${n})`);
      }
      options.onRetry?.({ attempt: n, delayMs, failure });
      await abortableSleep(delayMs, options.signal);
    }
  }
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
}
