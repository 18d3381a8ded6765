// runs in: both
import type { LimitFeedback } from "./limiter-core.ts";

/**
 * Reading what a provider says about its limits: `retry-after-ms` / `retry-after` and the
 * `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` headers (OpenAI's, which most
 * OpenAI-compatible servers copy). Pure; no I/O.
 */

/** Headers as fetch, the OpenAI SDK or the AI SDK hand them over. */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined> | null | undefined;

function header(headers: HeaderSource, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as { get?: unknown }).get === "function") return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const v = record[name] ?? record[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A duration as the reset headers write it, in ms: Go-style `1m30.5s`, `250ms`, `2h`, or a bare
 * number of seconds. `null` when unreadable.
 */
export function parseDurationMs(text: string | undefined | null): number | null {
  if (text === undefined || text === null) return null;
  const t = text.trim();
  if (t === "") return null;
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    const n = Number(m[1]);
    total += m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : m[2] === "m" ? n * 60_000 : n * 3_600_000;
    consumed += m[0].length;
  }
  return consumed === t.length && consumed > 0 ? total : null;
}

/** The wait a server asks for, in ms (`retry-after-ms`, then `retry-after` in seconds or as an HTTP date), or null. */
export function retryAfterMs(headers: HeaderSource, now: number = Date.now()): number | null {
  const ms = header(headers, "retry-after-ms");
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Number(ms);
  const value = header(headers, "retry-after");
  if (value === undefined || value.trim() === "") return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function count(headers: HeaderSource, name: string): number | null {
  const v = header(headers, name);
  if (v === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(v)) return null;
  return Number(v);
}

/** What a response's status and headers tell the limiter (`tokens` is the caller's, from the body). */
export function feedbackFrom(status: number | null, headers: HeaderSource, tokens?: number | null, now: number = Date.now()): LimitFeedback {
  return {
    status,
    retryAfterMs: retryAfterMs(headers, now),
    limitRequests: count(headers, "x-ratelimit-limit-requests"),
    remainingRequests: count(headers, "x-ratelimit-remaining-requests"),
    resetRequestsMs: parseDurationMs(header(headers, "x-ratelimit-reset-requests")),
    limitTokens: count(headers, "x-ratelimit-limit-tokens"),
    remainingTokens: count(headers, "x-ratelimit-remaining-tokens"),
    resetTokensMs: parseDurationMs(header(headers, "x-ratelimit-reset-tokens")),
    tokens: tokens ?? null,
  };
}
